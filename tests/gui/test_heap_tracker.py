"""The heap the map draws, edited from each step's events, is the heap a full
walk gives: after every step of random programs for every registered
strategy (grown by sbrk, capped, in a fixed pool), after steps back, and
through the window's model over a long random walk of steps and seeks."""

import pathlib
import random
import zlib
from dataclasses import dataclass

import numpy as np
import pytest

from heapscope import traces
from heapscope.allocators import make_strategy
from heapscope.allocators import plugins
from heapscope.allocators import events as ev
from heapscope.allocators.events import Coalesce, Grow, ListRemove
from heapscope.allocators.registry import strategy_names
from heapscope.allocators.replay import Timeline
from heapscope.gui import heap_cells
from heapscope.allocators.heap_edits import BlockEditor, Inconsistent, TrackedHeap, apply_events
from heapscope.allocators.heap_tracker import HeapTracker, seek_tracked
from heapscope.gui.show_model import ShowModel
from tests.depth import pick

COLUMNS = ("addr", "size", "state", "payload", "request", "header")


def assert_same_heap(edited: TrackedHeap, walked: TrackedHeap, where: str = "") -> None:
    a, b = edited.blocks, walked.blocks
    assert (a.brk, a.top, len(a)) == (b.brk, b.top, len(b)), where
    for c in COLUMNS:
        assert np.array_equal(getattr(a, c), getattr(b, c)), f"{where}: column {c} differs"
    assert edited.pointers == walked.pointers, where


def random_program(strategy, rng, steps):
    """Yield after each operation of a random program (mallocs of three size
    classes and, now and then, one past dlmalloc's mmap threshold; frees;
    reallocs that grow and shrink)."""
    live = []
    for _ in range(steps):
        r = rng.random()
        if live and r < 0.4:
            strategy.free(live.pop(rng.randrange(len(live))))
        elif live and r < 0.5:
            i = rng.randrange(len(live))
            new = strategy.realloc(live[i], rng.choice([rng.randint(1, 300), rng.randint(1, 6000)]))
            if new is not None:
                live[i] = new
        else:
            size = rng.choice([rng.randint(1, 64), rng.randint(1, 2000), rng.randint(1, 40000)])
            p = strategy.malloc(size if rng.random() > 0.01 else rng.randint(130_000, 300_000))
            if p is not None:
                live.append(p)
        yield


PARAMS = [{}, {"heap_limit": 300_000}, {"pool_size": 200_000}]


@pytest.mark.parametrize("params", PARAMS, ids=["sbrk", "heap-limit", "pool"])
@pytest.mark.parametrize("name", strategy_names())
def test_every_step_edited_in_equals_the_walk(name, params):
    s = make_strategy(name, **params)
    tracker = HeapTracker()
    tracker.rebuild(s, 0, s.structure()["pointers"])
    refused = []
    steps = pick(400, 1500)
    for t, _ in enumerate(random_program(s, random.Random(zlib.crc32(name.encode())), steps), start=1):
        walked = TrackedHeap.walk(s)
        if tracker.forward(s, s.rec, t):
            assert_same_heap(tracker.heap, walked, f"{name} step {t}")
        else:
            refused.append(t)
            tracker.rebuild(s, t, s.structure()["pointers"])
    # a built-in policy says everything it does to the heap in its events
    assert refused == [], (name, refused, tracker.last_refusal)
    assert tracker.edits == steps


@pytest.mark.parametrize("name", strategy_names())
def test_steps_back_undo_the_edits(name):
    s = make_strategy(name)
    tracker = HeapTracker()
    tracker.rebuild(s, 0, s.structure()["pointers"])
    seen = [tracker.heap]
    for t, _ in enumerate(random_program(s, random.Random(5), 300), start=1):
        if not tracker.forward(s, s.rec, t):
            tracker.rebuild(s, t, s.structure()["pointers"])
            seen = [None] * t
        seen.append(tracker.heap)
    first = max(i for i, h in enumerate(seen) if h is None) + 1 if None in seen else 0
    for t in range(300, first, -1):
        assert tracker.back(t - 1)
        assert_same_heap(tracker.heap, seen[t - 1], f"{name} back to {t - 1}")
    assert tracker.undos == 300 - first


def test_a_step_that_does_not_add_up_is_refused_and_walked():
    s = make_strategy("next-fit")
    tracker = HeapTracker()
    tracker.rebuild(s, 0, [])
    s.malloc(100)
    rec = s.rec
    rec.events = [e for e in rec.events if not isinstance(e, Grow)]   # an event left out
    assert not tracker.forward(s, rec, 1)
    assert tracker.heap is None and "outside the heap" in tracker.last_refusal
    heap = tracker.heap_at(s, 1, lambda: s.structure()["pointers"])
    assert_same_heap(heap, TrackedHeap.walk(s))
    assert tracker.walks == 2 and tracker.rebuilds_after_bad_steps == 1


@dataclass(frozen=True)
class Joined:
    """A user strategy's own word for a join: the map has no edit for it, and
    it does not say it changes no block."""
    addr: int
    size: int


@dataclass(frozen=True)
class Unlinked:
    """A user strategy's own look: it says it changes no block."""
    changes_blocks = False
    addr: int


@pytest.fixture
def segfit():
    root = pathlib.Path(__file__).resolve().parent.parent.parent
    cls = plugins.load_file(f"{root / 'examples' / 'segfit.py'}:SegFit")
    yield cls
    plugins.forget("segfit")


def test_a_step_with_an_event_the_map_cannot_edit_is_refused_and_walked(segfit):
    # the example's joins said in its own words: two free blocks become one,
    # the free bytes stay the same, so only the event's kind can tell
    class OwnWords(segfit):
        name = "segfit-own-words"

        def _event(self, event):
            if isinstance(event, Coalesce):
                event = Joined(event.low_addr, event.size)
            elif isinstance(event, ListRemove):
                super()._event(Unlinked(event.addr))
            super()._event(event)

    s = OwnWords()
    tracker = HeapTracker()
    tracker.rebuild(s, 0, s.structure()["pointers"])
    refused, looked_and_edited = [], 0
    for t, _ in enumerate(random_program(s, random.Random(11), 600), start=1):
        kinds = {type(e) for e in s.rec.events}
        if tracker.forward(s, s.rec, t):
            assert Joined not in kinds, t
            looked_and_edited += Unlinked in kinds
            assert_same_heap(tracker.heap, TrackedHeap.walk(s), f"step {t}")
        else:
            assert Joined in kinds and "Joined" in tracker.last_refusal, (t, tracker.last_refusal)
            refused.append(t)
            assert tracker.heap is None
            assert_same_heap(tracker.heap_at(s, t, lambda: s.structure()["pointers"]),
                             TrackedHeap.walk(s), f"step {t}, walked")
    assert len(refused) > 20 and looked_and_edited > 20
    assert tracker.rebuilds_after_bad_steps == len(refused)


def test_an_event_outside_the_heap_cannot_be_applied():
    heap = TrackedHeap(heap_cells.block_arrays([(0, 64, "free", None, 0, 0)], 64), ())
    editor = BlockEditor(heap)
    with pytest.raises(Inconsistent):
        editor.put_free(32, 64)


def test_the_events_of_a_step_take_the_heap_before_it_to_the_heap_after_it():
    # the micro-steps of the map apply a prefix of the events to the heap before
    s = make_strategy("tlsf")
    rng = random.Random(3)
    for _ in random_program(s, rng, 200):
        before = TrackedHeap.walk(s)
        s.malloc(rng.randint(1, 3000))
        after = TrackedHeap.walk(s)
        assert_same_heap(apply_events(before, s.rec.events, after=after), after)


FREE, USED, META = heap_cells.STATE_FREE, heap_cells.STATE_USED, heap_cells.STATE_META


def shown_after(e):
    """The blocks (addr, size, states allowed) a classic's event makes, as the
    map's micro-step right after it must show them."""
    if isinstance(e, ev.ArenaExtended):
        rows = [(e.addr, e.size, {FREE}), (e.top, e.top_size, {META})]
        return rows + ([(e.old_top, e.addr - e.old_top, {FREE})] if e.old_top is not None else [])
    if isinstance(e, ev.BlockFragmented):
        f = 1 << e.log
        return [(e.block, f, {USED})] + [(e.block + i * f, f, {FREE}) for i in range(1, e.count)]
    if isinstance(e, (ev.FragLinked, ev.ChunkFreed)):
        return [(e.addr, e.size, {FREE})]
    if isinstance(e, ev.FragBlockEmptied):
        return [(e.block, e.count << e.log, {FREE})]
    if isinstance(e, ev.TableMoved):
        return [(e.new_addr, e.new_size, {META})]
    if isinstance(e, ev.TopExtended):
        return [(e.addr, e.size, {FREE})]
    if isinstance(e, ev.ChunkPageMade):
        return [(e.page + i * e.size, e.size, {META} if i < e.stolen else {FREE})
                for i in range(e.stolen + e.total)]
    if isinstance(e, ev.ChunkTaken):
        return [(e.addr, e.size, {USED, META})]
    if isinstance(e, ev.ChunkPageDissolved):
        return [(e.page, e.pagesize, {META})]
    return None


@pytest.mark.parametrize("params", PARAMS, ids=["sbrk", "heap-limit", "pool"])
@pytest.mark.parametrize("name", ["v7-malloc", "gnu-malloc", "phkmalloc"])
def test_the_micro_steps_show_the_blocks_each_classic_event_makes(name, params):
    s = make_strategy(name, **params)
    before = TrackedHeap.walk(s)
    seen = set()
    for t, _ in enumerate(random_program(s, random.Random(zlib.crc32(name.encode())), 600), start=1):
        after = TrackedHeap.walk(s)
        events = s.rec.events
        for i, e in enumerate(events):
            want = shown_after(e)
            if want is None and not isinstance(e, ev.Shrink):
                continue
            seen.add(type(e).__name__)
            b = apply_events(before, events[:i + 1], after=after).blocks
            if isinstance(e, ev.Shrink):     # the break, or the free part of the pool, moves down
                end = e.old_brk - e.decrement
                assert b.brk == (s.arena.brk if s.arena.fixed else end), f"step {t} after {e}"
                want = [(end, b.brk - end, {FREE})] if s.arena.fixed else []
            for addr, size, states in want:
                j = b.index_at(addr)
                assert j >= 0 and (b.addr[j], b.size[j]) == (addr, size) and b.state[j] in states, \
                    f"step {t} after {e}: {addr:#x} shows {b.addr[j]:#x}+{b.size[j]} state {b.state[j]}"
        before = after
    assert len(seen) >= {"v7-malloc": 1, "gnu-malloc": 5, "phkmalloc": 4}[name], seen


def test_gnu_malloc_moving_its_table_is_edited_in():
    s = make_strategy("gnu-malloc")
    tracker = HeapTracker()
    tracker.rebuild(s, 0, s.structure()["pointers"])
    s.malloc(5000)
    assert tracker.forward(s, s.rec, 1)
    before = tracker.heap
    s.malloc(4 << 20)                 # past the 4 MiB the first table describes
    events = s.rec.events
    i = next(i for i, e in enumerate(events) if isinstance(e, ev.TableMoved))
    walked = TrackedHeap.walk(s)
    assert tracker.forward(s, s.rec, 2)
    assert_same_heap(tracker.heap, walked, "after the move")
    b = apply_events(before, events[:i + 1], after=walked).blocks
    j = b.index_at(events[i].new_addr)
    assert (b.addr[j], b.size[j], b.state[j]) == (events[i].new_addr, events[i].new_size, META)


# ----------------------------------------------------------- via the model
@pytest.fixture(scope="module")
def trace():
    return traces.make_workload("vo1989", steps=3000, seed=4)


@pytest.mark.parametrize("name", ["next-fit", "splay-best-fit", "buddy"])
def test_a_long_random_walk_of_steps_and_seeks_shows_the_walked_heap(trace, name):
    tl = Timeline(trace, name).build()
    model = ShowModel()
    model.set_trace(trace)
    key = model.add_timeline(tl)
    model.show([key], 0)
    rng = random.Random(9)
    tracker = model._trackers[key]
    for _ in range(pick(200, 400)):          # the deep suite walks twice as far
        r = rng.random()
        if r < 0.6:
            target = model.position + 1
        elif r < 0.8:
            target = model.position - 1
        elif r < 0.9:
            target = model.position + rng.randint(2, 80)
        else:
            target = rng.randint(0, tl.n)
        model.seek(target)
        shown = model.step().heap
        assert_same_heap(shown, TrackedHeap.walk(tl.strategy), f"{name} at {model.position}")
    # most moves were edited in or undone, not walked
    assert tracker.edits + tracker.undos > 3 * tracker.walks


def test_a_short_move_forward_is_replayed_step_by_step(trace, monkeypatch):
    from heapscope.allocators import heap_tracker
    monkeypatch.setattr(heap_tracker, "WALK_BLOCKS_PER_STEP", 0)    # never cheaper to walk
    tl = Timeline(trace, "next-fit").build()
    tracker = HeapTracker()
    tl.seek(100)
    tracker.rebuild(tl.strategy, 100, tl.strategy.structure()["pointers"])
    seek_tracked(tl, tracker, 130)
    assert tl.position == 130 and tracker.position == 130 and tracker.edits == 30
    seek_tracked(tl, tracker, 129)
    assert tracker.undos == 1 and tracker.position == 129
    seek_tracked(tl, tracker, 2000)                 # a jump: walked when asked
    assert tracker.heap is None
    assert_same_heap(tracker.heap_at(tl.strategy, 2000, lambda: tl.strategy.structure()["pointers"]),
                     TrackedHeap.walk(tl.strategy))


def shown_on_a_map(qtbot, trace, tl, position: int):
    """A model showing timeline ``tl`` at ``position`` on a 600x400 heap map:
    (model, the timeline's key, the map)."""
    from heapscope.gui.heap_map import HeapMapWidget
    model = ShowModel()
    model.set_trace(trace)
    key = model.add_timeline(tl)
    view = HeapMapWidget()
    qtbot.addWidget(view)
    view.resize(600, 400)
    view.bind(model)
    model.show([key], position)
    return model, key, view


@pytest.mark.parametrize("name", ["next-fit", "tlsf"])
def test_a_move_of_many_steps_on_a_small_heap_walks_instead(trace, name):
    """Editing a step in costs what walking ~100 blocks does: playing many
    steps a frame over a small heap walks it once instead, and shows the
    same heap; one step, or few steps for the heap's size, are edited in."""
    from heapscope.allocators.heap_tracker import WALK_BLOCKS_PER_STEP
    tl = Timeline(trace, name).build()
    tracker = HeapTracker()
    pointers = lambda: tl.strategy.structure()["pointers"]     # noqa: E731
    tl.seek(2000)
    blocks = len(tracker.rebuild(tl.strategy, 2000, pointers()).blocks.addr)
    # a step or two either side of the line: the heap gains or loses a few
    # blocks on the way
    few = blocks // WALK_BLOCKS_PER_STEP - 1      # steps a walk would not pay for
    many = few + 3                                # steps it does
    assert few >= 2, f"the heap at step 2000 has only {blocks} blocks"
    seek_tracked(tl, tracker, 2001)
    seek_tracked(tl, tracker, 2001 + few)
    assert tracker.edits == 1 + few and tracker.walks == 1
    start = tl.position
    seek_tracked(tl, tracker, start + many)
    assert tracker.edits == 1 + few and tracker.heap is None       # walked when asked
    assert_same_heap(tracker.heap_at(tl.strategy, start + many, pointers), TrackedHeap.walk(tl.strategy))
    assert tracker.walks == 2


@pytest.mark.parametrize("name", ["next-fit", "tlsf"])
def test_steps_back_in_the_window_undo_and_replay_a_short_span(qtbot, trace, name):
    """Holding the left arrow on the map: each step back undoes the
    tracker's last edit (the heap is never walked, the map repaints only the
    cells that changed) and the timeline starts from a copy of its step-back
    cache (a short replay, no checkpoint unpickled), and shows the walked heap."""
    from math import isqrt
    tl = Timeline(trace, name, checkpoint_every=2000).build()
    model, key, view = shown_on_a_map(qtbot, trace, tl, 3500)
    for t in range(3501, 3541):
        model.seek(t)
    tracker = model._trackers[key]
    walks, full, restores = tracker.walks, view.full_paints, tl.restores
    counts = []
    for t in range(3539, 3499, -1):
        before = tl.replayed_ops
        model.seek(t)
        counts.append(tl.replayed_ops - before)
        assert_same_heap(view.heap, TrackedHeap.walk(tl.strategy), f"{name} back at {t}")
    assert tracker.walks == walks and tracker.undos == 40
    assert view.full_paints == full
    # the first step back replays from the checkpoint at 2000 and keeps copies
    assert counts[0] == 3539 - 2000 and tl.restores == restores + 1
    assert max(counts[1:]) <= isqrt(3538 - 2000) + 1


def test_steps_back_after_a_jump_walk_once_in_a_while(qtbot, trace):
    """After a jump the tracker has no edit to undo: the first step back
    walks the heap BACK_WALK_AHEAD steps further back and edits the steps
    up to the shown one in, so the next steps back are undone."""
    from heapscope.allocators.heap_tracker import BACK_WALK_AHEAD
    tl = Timeline(trace, "tlsf", checkpoint_every=2000).build()
    model, key, view = shown_on_a_map(qtbot, trace, tl, 100)
    model.seek(3540)                        # a jump: the map walks the heap
    tracker = model._trackers[key]
    walks = tracker.walks
    for t in range(3539, 3539 - 3 * BACK_WALK_AHEAD, -1):
        model.seek(t)
        assert_same_heap(view.heap, TrackedHeap.walk(tl.strategy), f"back at {t}")
    assert tracker.walks - walks == 3          # not 45
    assert tracker.undos == 3 * BACK_WALK_AHEAD - 3
