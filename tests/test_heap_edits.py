"""The heap map's block list edited from the events (allocators/heap_edits.py,
allocators/heap_tracker.py), in the core and without a window: after every
step of a bundled trace slice and of random programs hypothesis makes, for
every built-in strategy, the edited heap is the heap a full walk gives, and
after every event that edits blocks the blocks so far still tile the heap.
A user event type defined here plugs in with its own words, addresses and
edit, touching no other file."""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from heapscope.allocators import make_strategy
from heapscope.allocators.events import Released
from heapscope.allocators.explain import describe_event, event_addresses, explain_step
from heapscope.allocators.heap_edits import TrackedHeap, apply_events, edit_of
from heapscope.allocators.heap_tracker import HeapTracker
from heapscope.allocators.next_fit import NextFit
from heapscope.allocators.registry import strategy_names
from heapscope.allocators.replay import Program, apply_op
from heapscope.traces import load_trace
from heapscope.traces.bundled import default_trace_path
from tests.depth import pick

COLUMNS = ("addr", "size", "state", "payload", "request", "header")
#: the first operations of the bundled default trace
SLICE = pick(400, 1200)


def assert_same_heap(edited: TrackedHeap, walked: TrackedHeap, where: str) -> None:
    a, b = edited.blocks, walked.blocks
    assert (a.brk, a.top, len(a)) == (b.brk, b.top, len(b)), where
    for c in COLUMNS:
        assert np.array_equal(getattr(a, c), getattr(b, c)), f"{where}: column {c} differs"
    assert edited.pointers == walked.pointers, where


def assert_tiles(heap: TrackedHeap, where: str) -> None:
    """The blocks lie end to end up to the break: no gap, no overlap."""
    b = heap.blocks
    if len(b):
        assert b.addr[-1] + b.size[-1] == b.brk, where
        assert np.all(b.addr[1:] == b.addr[:-1] + b.size[:-1]), where
        assert np.all(b.size > 0), where


class Follower:
    """Follows one strategy step by step with a tracker, checking each step
    against the walk, and each event that edits blocks on the way."""

    def __init__(self, strategy) -> None:
        self.s = strategy
        self.tracker = HeapTracker()
        self.tracker.rebuild(strategy, 0, strategy.structure()["pointers"])
        self.t = 0
        self.events_checked = 0
        self.empty_heap_refusals = 0

    def step_done(self) -> None:
        s, tracker = self.s, self.tracker
        self.t += 1
        where = f"{s.name} step {self.t}"
        before = tracker.heap
        walked = TrackedHeap.walk(s)
        events = s.rec.events
        # every event with an edit, applied on top of the ones before it
        for i, e in enumerate(events):
            if edit_of(type(e)) is not None:
                micro = apply_events(before, events[:i + 1], s.live, after=walked)
                assert_tiles(micro, f"{where} after event {i} {e}")
                self.events_checked += 1
        # a built-in policy says everything it does to the heap in its events;
        # one known exception, as before events carried their edits: a chunk
        # mapped apart from a heap that is still empty (dlmalloc's first
        # request past its mmap threshold) is refused, and the map walks
        if not tracker.forward(s, s.rec, self.t):
            assert before.blocks.brk == 0 and "outside the heap (break 0x0)" in tracker.last_refusal, \
                (where, tracker.last_refusal)
            self.empty_heap_refusals += 1
            tracker.rebuild(s, self.t, s.structure()["pointers"])
        assert_same_heap(tracker.heap, walked, where)


@pytest.mark.parametrize("name", strategy_names())
def test_a_bundled_trace_slice_edited_in_equals_the_walk_after_every_step(name):
    trace = load_trace(default_trace_path())
    s = make_strategy(name)
    follow = Follower(s)
    program = Program()
    for kind, ident, size in itertools.islice(trace, SLICE):
        apply_op(s, program, kind, ident, size)
        follow.step_done()
    assert follow.tracker.edits == SLICE and follow.tracker.walks == 1
    assert follow.events_checked > SLICE      # the slice did cut, join and hand out blocks


#: one operation of a random program: ('malloc', size), ('free', which live
#: block), ('realloc', which, size); sizes from tiny to past dlmalloc's mmap
#: threshold
SIZES = st.one_of(st.integers(1, 64), st.integers(1, 3000), st.integers(1, 40_000),
                  st.integers(130_000, 200_000))
OPS = st.lists(st.one_of(st.tuples(st.just("malloc"), SIZES),
                         st.tuples(st.just("free"), st.integers(0, 1 << 16)),
                         st.tuples(st.just("realloc"), st.integers(0, 1 << 16), SIZES)),
               min_size=1, max_size=120)


@pytest.mark.parametrize("name", strategy_names())
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=OPS, limited=st.booleans())
def test_a_random_program_edited_in_equals_the_walk_after_every_step(name, ops, limited):
    s = make_strategy(name, **({"heap_limit": 400_000} if limited else {}))
    follow = Follower(s)
    live = []
    for op in ops:
        if op[0] == "malloc":
            p = s.malloc(op[1])
            if p is not None:
                live.append(p)
        elif not live:
            continue
        elif op[0] == "free":
            s.free(live.pop(op[1] % len(live)))
        else:
            i = op[1] % len(live)
            p = s.realloc(live[i], op[2])
            if p is not None:
                live[i] = p
        follow.step_done()


# ------------------------------------------------------ a user's own event
@dataclass(frozen=True, slots=True)
class HandedBack:
    """A user strategy's own word for a free: block ``addr`` of ``size``
    bytes is free again.  Its words, its addresses and its edit are its own."""
    addr: int
    size: int

    def describe(self) -> str:
        return f"handed {self.size} bytes at {self.addr:#x} back to the ring"

    def addresses(self) -> tuple[int, ...]:
        return (self.addr,)

    def edit(self, heap) -> None:
        heap.put_free(self.addr, self.size)


@dataclass(frozen=True, slots=True)
class HandedBackUnsaid:
    """The same, from a user who gave it no edit (and did not say it
    changes no block)."""
    addr: int
    size: int


def own_words(event_type):
    class OwnWords(NextFit):
        """K&R next fit, saying its frees' first event in its own words."""
        name = "next-fit-own-words"

        def _event(self, event):
            if type(event) is Released:
                event = event_type(event.addr, event.size)
            super()._event(event)
    return OwnWords()


def run(strategy, steps=400):
    """A fixed program of mallocs and frees; yields after each operation."""
    live = []
    for i in range(steps):
        if live and i % 3 == 2:
            strategy.free(live.pop((i * 7) % len(live)))
        else:
            live.append(strategy.malloc(16 + (i * 37) % 900))
        yield i + 1


def test_a_user_event_type_is_explained_and_edited_by_its_own_methods():
    s = own_words(HandedBack)
    tracker = HeapTracker()
    tracker.rebuild(s, 0, s.structure()["pointers"])
    seen = 0
    for t in run(s):
        walked = TrackedHeap.walk(s)
        assert tracker.forward(s, s.rec, t), tracker.last_refusal
        assert_same_heap(tracker.heap, walked, f"step {t}")
        for line in explain_step(s, s.rec):
            if isinstance(line.event, HandedBack):
                seen += 1
                e = line.event
                assert line.text == f"handed {e.size} bytes at {e.addr:#x} back to the ring"
                assert line.addrs == (e.addr,)
    assert seen > 100 and tracker.walks == 1 and tracker.rebuilds_after_bad_steps == 0
    assert describe_event(HandedBack(0x40, 32)) == "handed 32 bytes at 0x40 back to the ring"
    assert event_addresses(HandedBack(0x40, 32)) == (0x40,)


def test_a_user_event_type_with_no_edit_is_walked_and_read_from_its_fields():
    s = own_words(HandedBackUnsaid)
    tracker = HeapTracker()
    tracker.rebuild(s, 0, s.structure()["pointers"])
    refused = 0
    for t in run(s, 60):
        frees = any(isinstance(e, HandedBackUnsaid) for e in s.rec.events)
        assert tracker.forward(s, s.rec, t) is not frees, t
        if frees:
            refused += 1
            assert "HandedBackUnsaid" in tracker.last_refusal
            tracker.rebuild(s, t, s.structure()["pointers"])
        assert_same_heap(tracker.heap, TrackedHeap.walk(s), f"step {t}")
    assert refused == 20 == tracker.rebuilds_after_bad_steps
    # no words of its own: its repr; its addresses: the fields named addr
    e = HandedBackUnsaid(0x40, 32)
    assert describe_event(e) == repr(e) and event_addresses(e) == (0x40,)
