"""A timeline rebuilt after an edit (allocators/timeline_edit.py) is the
timeline a full build of the edited trace gives: every measure of every
step, the heap at every step, the last step's events; and it replays only
from the edit on."""

from __future__ import annotations

import numpy as np
import pytest

from heapscope import traces
from heapscope.allocators.metrics import SERIES_COLUMNS
from heapscope.allocators.registry import strategy_names
from heapscope.allocators.replay import Timeline
from heapscope.allocators.timeline_edit import first_difference, rebuilt
from heapscope.traces.trace import ALLOC, Trace

COLUMNS = SERIES_COLUMNS + ("is_malloc", "failed", "payload")


@pytest.fixture(scope="module")
def trace():
    return traces.make_workload("vo1989", steps=60, min_life=2, max_life=20)   # 120 ops, interleaved


def edits(trace):
    """(what, edited trace, first changed op) for edits that keep a trace valid."""
    ops = list(trace)
    fresh = trace.num_ids
    inserted = ops[:50] + [(ALLOC, fresh, 3000)] + ops[50:]
    alloc_at = next(i for i, op in enumerate(ops) if op[0] == ALLOC and i >= 70)
    resized = list(ops)
    resized[alloc_at] = (ALLOC, ops[alloc_at][1], ops[alloc_at][2] + 517)
    return [("insert a malloc at op 50", Trace.from_ops(inserted), 50),
            (f"resize the malloc of op {alloc_at}", Trace.from_ops(resized), alloc_at),
            ("cut after op 90", Trace.from_ops(ops[:90]), 90),
            ("insert at the very start", Trace.from_ops([(ALLOC, fresh, 8)] + ops), 0)]


def test_first_difference_finds_the_edit(trace):
    for what, edited, at in edits(trace):
        assert first_difference(trace, edited) == at, what
    assert first_difference(trace, trace) == len(trace)


@pytest.mark.parametrize("name", strategy_names())
def test_a_rebuilt_timeline_is_the_full_build(trace, name):
    old = Timeline(trace, name, checkpoint_every=16).build()
    old.seek(37)                 # the shown step: the heap is taken from a checkpoint
    for what, edited, at in edits(trace):
        new = rebuilt(old, edited)
        full = Timeline(edited, name, checkpoint_every=16).build()
        assert new.n == full.n == len(edited)
        for col in COLUMNS:
            assert np.array_equal(getattr(new.series, col), getattr(full.series, col)), (what, col)
        assert all(t <= full.n for t in new.checkpoint_steps)
        for t in range(new.n + 1):
            assert new.state_at(t).blocks == full.state_at(t).blocks, (what, t)
        new.seek(new.n)
        full.seek(full.n)
        assert new.describe() == full.describe(), what


def test_the_rebuild_replays_only_from_the_edit(trace):
    """At the shown step, the shown heap is copied: the build replays the
    steps from the edit only, and keeps the checkpoints before it."""
    old = Timeline(trace, "first-fit", checkpoint_every=16).build()
    old.seek(50)
    edited = edits(trace)[0][1]
    before = [t for t in old.checkpoint_steps if t <= 50]
    new = rebuilt(old, edited)
    assert new.checkpoint_steps[:len(before)] == before
    assert new.checkpoints[:len(before)] == old.checkpoints[:len(before)]
    # the measures of the first 50 steps are the old ones; the build ran over the rest
    assert new.built == len(edited)
    assert new.strategy is not old.strategy


def test_new_parameters_rebuild_every_step(trace):
    old = Timeline(trace, "first-fit").build()
    new = rebuilt(old, trace, params={"nalloc": 1})
    full = Timeline(trace, "first-fit", {"nalloc": 1}).build()
    assert new.params == {"nalloc": 1}
    assert np.array_equal(new.series.heap, full.series.heap)
    assert not np.array_equal(new.series.heap, old.series.heap)    # nalloc matters here
