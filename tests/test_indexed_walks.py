"""K&R's walks found by ranks (next fit's and first fit's RingIndex) give
exactly what the plain walks give: the block chosen, the rover, the search
length and the blocks passed, op by op, on random programs and long traces."""

from __future__ import annotations

import pytest
from hypothesis import given, settings

from heapscope.allocators.first_fit import FirstFit
from heapscope.allocators.next_fit import NextFit
from heapscope.allocators.replay import COUNTERS, Program, Timeline, apply_op, replay_ops
from heapscope.traces import Trace, make_workload

from .heap_harness import op_sequences


class WalkingNextFit(NextFit):
    """The reference: K&R's walks, always."""
    indexed = False
    registered = False


class WalkingFirstFit(FirstFit):
    indexed = False
    registered = False


PAIRS = [(NextFit, WalkingNextFit), (FirstFit, WalkingFirstFit)]
SETTINGS = [{}, {"heap_limit": 20_000}, {"pool_size": 15_000}, {"nalloc": 8}]


def assert_same_op_by_op(fast, plain, ops):
    fast_program, plain_program = Program(), Program()
    fast.record = plain.record = False
    for step, (kind, ident, size) in enumerate(ops):
        a = apply_op(fast, fast_program, kind, ident, size)
        b = apply_op(plain, plain_program, kind, ident, size)
        assert {c: getattr(a, c) for c in COUNTERS} == {c: getattr(b, c) for c in COUNTERS}, f"op {step}"
        assert a.payload == b.payload and fast.freep == plain.freep, f"op {step}"
    assert fast.state_signature() == plain.state_signature()
    fast.check()


@pytest.mark.parametrize("fast_cls,plain_cls", PAIRS, ids=["next-fit", "first-fit"])
@pytest.mark.parametrize("params", SETTINGS, ids=["sbrk", "limit", "pool", "small-nalloc"])
@settings(max_examples=40, deadline=None)
@given(ops=op_sequences(max_ops=150, max_size=3000))
def test_indexed_walks_equal_the_plain_walks_op_by_op(fast_cls, plain_cls, params, ops):
    assert_same_op_by_op(fast_cls(**params), plain_cls(**params), ops)


@pytest.mark.parametrize("fast_cls,plain_cls", PAIRS, ids=["next-fit", "first-fit"])
def test_indexed_walks_on_a_long_trace(fast_cls, plain_cls):
    trace = make_workload("vo1989", steps=3000, seed=9)
    assert_same_op_by_op(fast_cls(nalloc=64), plain_cls(nalloc=64), list(trace))


@pytest.mark.parametrize("fast_cls,plain_cls", PAIRS, ids=["next-fit", "first-fit"])
def test_bulk_replay_and_built_measures_equal_the_walking_ones(fast_cls, plain_cls):
    trace = make_workload("djgpp1997", actions=3000, max_size=3000, seed=4)
    fast, plain = Timeline(trace, fast_cls).build(), Timeline(trace, plain_cls).build()
    assert fast.summary() | {"wall_s": 0} == plain.summary() | {"wall_s": 0}
    assert (fast.series.search == plain.series.search).all() and (fast.series.work == plain.series.work).all()
    s, p = fast_cls(), plain_cls()
    columns = [list(c) for c in zip(*trace)]
    a, b = replay_ops(s, Program(), *columns), replay_ops(p, Program(), *columns)
    assert {c: getattr(a, c) for c in COUNTERS} == {c: getattr(b, c) for c in COUNTERS}
    assert s.state_signature() == p.state_signature()


def test_a_shown_step_walks_the_ring_and_says_each_block():
    # The timeline shows a step with its events: those come from K&R's walk.
    trace = Trace.from_ops([(0, 0, 100), (0, 1, 100), (0, 2, 100), (0, 3, 5000),
                            (1, 0, 0), (1, 2, 0), (0, 4, 3000)], name="walk")
    tl = Timeline(trace, "first-fit").build()
    visits = [e for e in tl.last_record.events if type(e).__name__ == "Visit"]
    assert len(visits) == tl.last_record.visits == tl.series.search[-1]
    assert [v.fits for v in visits][-1] and not any(v.fits for v in visits[:-1])


def test_the_free_size_heap_stays_small_and_true():
    # Stale entries (blocks gone or resized) are dropped before they pile up,
    # and what is left, less the stale ones, is the free blocks' sizes.
    from collections import Counter

    from heapscope.allocators.next_fit import RingIndex

    index = RingIndex()
    index.add(0, 100)
    index.add(10_000, 50)
    for size in range(101, 3000):          # one block resized again and again
        index.resize(0, size - 1, size)
        assert len(index.heap) <= 2 * len(index.by_end) + 64
    assert index.probe(10_000 + 50) == (2999 + 50, 2999, 50, 2999)
    s = NextFit()
    trace = make_workload("vo1989", steps=4000, seed=3)
    replay_ops(s, Program(), *[list(c) for c in zip(*trace)])
    index = s.free_index
    assert len(index.heap) <= 2 * len(index.by_end) + 64
    left = Counter(-x for x in index.heap)
    left.subtract(index.stale)
    assert +left == Counter(index.sizes)
