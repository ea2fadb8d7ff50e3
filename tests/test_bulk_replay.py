"""Bulk replay and the timeline's packed measures against their plain forms.

``replay_ops`` calls the policies directly with one running record, and the
build packs its measures row by row; both must give exactly what applying
each op through the public calls (``apply_op``) and reading the heap after it
(``record_row``) give."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from heapscope.allocators.events import OpRecord
from heapscope.allocators.metrics import SERIES_COLUMNS, MetricSeries
from heapscope.allocators.registry import make_strategy, strategy_names
from heapscope.allocators.replay import (COUNTERS, Program, Timeline, apply_op, record_row,
                                         replay_ops)
from heapscope.allocators.strategy import LiveBlock
from heapscope.traces import Trace, make_workload

from tests.depth import some_in_quick

from .heap_harness import op_sequences

#: settings that make requests fail: a heap limit, a small fixed pool
SETTINGS = [{}, {"heap_limit": 12_000}, {"pool_size": 9_000}]


def plain(name: str, params: dict, ops):
    """The reference: every op through apply_op, the heap read after each."""
    s = make_strategy(name, **params)
    s.record = False
    program = Program()
    series = MetricSeries(len(ops))
    totals = dict.fromkeys(COUNTERS, 0)
    for t, (kind, ident, size) in enumerate(ops):
        rec = apply_op(s, program, kind, ident, size)
        record_row(series, t, s, program, rec, kind)
        for c in COUNTERS:
            totals[c] += getattr(rec, c)
    return s, program, series, totals


def plain_at(name: str, params: dict, ops, steps) -> dict:
    """The reference's heap after ``ops[:t]`` for each ``t`` in ``steps``
    (past the end: after every op): the same calls as :func:`plain`, in one
    replay instead of one from the start for each step.  Each value is the
    state signature and a copy of the program."""
    s = make_strategy(name, **params)
    s.record = False
    program = Program()
    series = MetricSeries(len(ops))
    wanted = {min(t, len(ops)) for t in steps}
    heaps = {}

    def note(t: int) -> None:
        if t in wanted:
            heaps[t] = (s.state_signature(), Program(dict(program.live), set(program.failed_ids),
                                                      program.live_bytes))

    note(0)
    for t, (kind, ident, size) in enumerate(ops[:max(wanted)]):
        rec = apply_op(s, program, kind, ident, size)
        record_row(series, t, s, program, rec, kind)
        note(t + 1)
    return {t: heaps[min(t, len(ops))] for t in steps}


def assert_same_program(a: Program, b: Program) -> None:
    assert a.live == b.live
    assert a.failed_ids == b.failed_ids
    assert a.live_bytes == b.live_bytes


def assert_same_series(got: MetricSeries, want: MetricSeries) -> None:
    for col in SERIES_COLUMNS + ("is_malloc", "failed", "payload"):
        g, w = getattr(got, col), getattr(want, col)
        assert np.array_equal(g, w), f"{col}: first difference at row {np.flatnonzero(g != w)[:1]}"


@pytest.mark.parametrize("name", strategy_names())
@pytest.mark.parametrize("params", SETTINGS, ids=["sbrk", "limit", "pool"])
@settings(max_examples=15, deadline=None)
@given(ops=op_sequences(max_ops=120, max_size=3000))
def test_bulk_replay_equals_the_public_calls_op_by_op(name, params, ops):
    ref, ref_program, _, totals = plain(name, params, ops)
    s = make_strategy(name, **params)
    program = Program()
    kinds, ids, sizes = (list(col) for col in zip(*ops))
    counted = replay_ops(s, program, kinds, ids, sizes)
    assert s.state_signature() == ref.state_signature()
    assert (s.in_use, s.header_in_use, s.footprint) == (ref.in_use, ref.header_in_use, ref.footprint)
    assert_same_program(program, ref_program)
    assert {c: getattr(counted, c) for c in COUNTERS} == totals
    s.check()


@pytest.mark.parametrize("name", strategy_names())
@pytest.mark.parametrize("params", SETTINGS, ids=["sbrk", "limit", "pool"])
@settings(max_examples=10, deadline=None)
@given(ops=op_sequences(max_ops=150, max_size=3000))
def test_built_measures_equal_the_heap_read_after_each_op(name, params, ops):
    _, ref_program, ref_series, _ = plain(name, params, ops)
    trace = Trace.from_ops(ops, name="random")
    for kwargs in ({}, {"checkpoint_every": 7}, {"checkpoints": False}):
        tl = Timeline(trace, name, params, **kwargs).build()
        assert_same_series(tl.series, ref_series)
        assert_same_program(tl.program, ref_program)


#: the blocks of rows are the build's, one code for every strategy: the quick
#: suite crosses them with the four strategies of tests/depth.py (every
#: strategy's rows are compared on the random traces in both suites), --deep
#: with every strategy
@pytest.mark.parametrize("name", some_in_quick(strategy_names()))
def test_a_long_build_equals_the_plain_replay_across_blocks_of_rows(name):
    # Longer than a progress block (4096 steps), with failures.
    trace = make_workload("vo1989", steps=2600, seed=11)
    ops = list(trace)
    _, ref_program, ref_series, _ = plain(name, {"heap_limit": 200_000}, ops)
    tl = Timeline(trace, name, {"heap_limit": 200_000}).build()
    assert ref_series.failed.any()
    assert_same_series(tl.series, ref_series)
    assert_same_program(tl.program, ref_program)


@pytest.mark.parametrize("name", strategy_names())
def test_adaptive_checkpoints_restore_the_heap_of_their_step(name):
    trace = make_workload("vo1989", steps=1500, seed=3)
    tl = Timeline(trace, name).build()
    steps = tl.checkpoint_steps
    assert steps[0] == 0 and steps == sorted(set(steps)) and steps[-1] < len(trace)
    assert len(tl.checkpoints) == len(steps)
    picked = range(0, len(steps), max(1, len(steps) // 5))
    want = plain_at(name, {}, list(trace), [steps[k] for k in picked])
    for k in picked:
        s, program = pickle.loads(tl.checkpoints[k])
        signature, ref_program = want[steps[k]]
        assert s.state_signature() == signature
        assert_same_program(program, ref_program)


@pytest.mark.parametrize("name", strategy_names())
def test_seek_on_adaptive_checkpoints_matches_replay_from_scratch(name):
    trace = make_workload("vo1989", steps=1200, seed=5)
    tl = Timeline(trace, name).build()
    seeks = (len(trace), 1, 0, 1700, 1699, 2, 950, len(trace) - 1)
    want = plain_at(name, {}, list(trace), seeks)
    for t in seeks:
        s = tl.seek(t)
        signature, ref_program = want[t]
        assert s.state_signature() == signature, f"seek({t})"
        assert_same_program(tl.program, ref_program)


def test_the_build_ends_showing_its_last_step_with_events():
    trace = make_workload("vo1989", steps=300, seed=2)
    tl = Timeline(trace, "tlsf").build()
    rec = tl.last_record
    assert tl.position == len(trace) and rec is not None and rec.events
    # the same record a seek to the end gives
    tl.seek(10)
    again = tl.seek(len(trace))
    assert again.state_signature() == tl.strategy.state_signature()
    assert [type(e) for e in tl.last_record.events] == [type(e) for e in rec.events]
    assert {c: getattr(tl.last_record, c) for c in COUNTERS} == {c: getattr(rec, c) for c in COUNTERS}


def test_no_checkpoints_are_kept_when_asked():
    trace = make_workload("vo1989", steps=300, seed=2)
    tl = Timeline(trace, "next-fit", checkpoints=False).build()
    assert tl.checkpoints == [] and tl.checkpoint_steps == []
    ref = Timeline(trace, "next-fit").build()
    assert tl.summary() | {"wall_s": 0} == ref.summary() | {"wall_s": 0}
    s = tl.seek(123)       # still seekable: from the start
    assert s.state_signature() == ref.seek(123).state_signature()


@pytest.mark.parametrize("name", strategy_names())
def test_a_pickled_strategy_keeps_its_live_blocks(name):
    s = make_strategy(name)
    payloads = [s.malloc(n) for n in (10, 300, 5000, 70)]
    s.free(payloads[1])
    back = pickle.loads(pickle.dumps(s, protocol=pickle.HIGHEST_PROTOCOL))
    assert back.live == s.live
    assert all(type(lb) is LiveBlock for lb in back.live.values())
    assert back.state_signature() == s.state_signature()
    back.check()
    assert back.malloc(100) == s.malloc(100)


def test_bulk_replay_leaves_a_fresh_record():
    s = make_strategy("buddy")
    replay_ops(s, Program(), [0, 0], [0, 1], [10, 20])
    assert isinstance(s.rec, OpRecord) and s.rec.visits == 0


def test_a_user_strategy_replays_through_its_checks_unless_they_are_off():
    # A user strategy checks every result in its public calls: bulk replay goes
    # through them; with the checks off (grade's timing) it calls the policy
    # directly, as for a built-in, and gets the same heap and counts.
    from pathlib import Path

    from heapscope.allocators import plugins
    from heapscope.allocators.replay import calls_policy_directly

    segfit = plugins.load_file(f"{Path(__file__).resolve().parent.parent / 'examples' / 'segfit.py'}:SegFit")
    try:
        checked, unchecked = segfit(), segfit()
        unchecked.guarded = False
        assert not calls_policy_directly(checked) and calls_policy_directly(unchecked)
        assert calls_policy_directly(make_strategy("tlsf"))
        columns = [list(c) for c in zip(*make_workload("vo1989", steps=400, seed=8))]
        a = replay_ops(checked, Program(), *columns)
        b = replay_ops(unchecked, Program(), *columns)
        assert checked.state_signature() == unchecked.state_signature()
        assert {c: getattr(a, c) for c in COUNTERS} == {c: getattr(b, c) for c in COUNTERS}
        assert checked._step == len(columns[0])      # every op went through the checked calls
    finally:
        plugins.forget("segfit")


def test_a_strategy_that_refers_to_itself_keeps_counting_across_checkpoints():
    # The build goes on from each checkpoint it takes: a strategy keeping a
    # bound method of itself must still update itself, not a stale copy.
    from heapscope.allocators.bsd_buckets import BSDBuckets

    class SelfCounting(BSDBuckets):
        name = "self-counting"
        registered = False

        def __init__(self, **common):
            super().__init__(**common)
            self.mallocs = 0
            self.count = self._count_one      # a bound method of this very heap

        def _count_one(self):
            self.mallocs += 1

        def _malloc(self, nbytes):
            self.count()
            return super()._malloc(nbytes)

    import heapscope.allocators.registry as registry
    registry.STRATEGIES[SelfCounting.name] = SelfCounting
    globals()["SelfCounting"] = SelfCounting          # pickle finds the class here
    SelfCounting.__qualname__ = "SelfCounting"
    try:
        trace = make_workload("vo1989", steps=1500, seed=6)
        tl = Timeline(trace, SelfCounting.name, checkpoint_every=100).build()
        assert len(tl.checkpoints) > 10
        mallocs = sum(1 for kind, _, _ in trace if kind != 1)
        assert tl.strategy.mallocs == mallocs
        assert tl.strategy.count.__self__ is tl.strategy
    finally:
        del registry.STRATEGIES[SelfCounting.name]
        globals().pop("SelfCounting", None)


@pytest.mark.parametrize("name", strategy_names())
def test_built_measures_with_huge_requests_equal_the_heap_read_after_each_op(name):
    # Requests past dlmalloc's mmap threshold (regions mapped apart from the
    # heap count in H) and past the large size classes of the others.
    ops, live, next_id = [], [], 0
    for i in range(300):
        if live and i % 3 == 2:
            ops.append((1, live.pop(i % len(live)), 0))
        else:
            size = (1 << 20) + 4096 * i if i % 5 == 0 else 37 * i
            ops.append((0, next_id, size))
            live.append(next_id)
            next_id += 1
    _, ref_program, ref_series, _ = plain(name, {}, ops)
    tl = Timeline(Trace.from_ops(ops, name="huge"), name, checkpoint_every=16).build()
    assert_same_series(tl.series, ref_series)
    assert_same_program(tl.program, ref_program)


@pytest.mark.parametrize("name", ["tlsf", "buddy", "bsd-buckets"])
def test_a_plain_state_build_goes_on_from_a_twin_and_measures_the_same(name, monkeypatch):
    # TLSF, buddy and BSD buckets say plain_state: after each checkpoint the
    # build goes on with a twin of the heap instead of unpickling it.  The
    # measures, the checkpoints and the end state must be what the plain
    # replay gives, and the build must not have unpickled anything.
    import heapscope.allocators.replay as replay_module
    trace = make_workload("vo1989", steps=1500, seed=8)
    ops = list(trace)
    ref, ref_program, ref_series, _ = plain(name, {}, ops)
    loads = []
    real_loads = pickle.loads
    monkeypatch.setattr(replay_module.pickle, "loads", lambda b: loads.append(1) or real_loads(b))
    tl = Timeline(trace, name, checkpoint_every=97).build()
    assert not loads
    monkeypatch.setattr(replay_module.pickle, "loads", real_loads)
    assert len(tl.checkpoints) > 25
    assert_same_series(tl.series, ref_series)
    assert tl.strategy.state_signature() == ref.state_signature()
    assert_same_program(tl.program, ref_program)
    picked = (1, 10, len(tl.checkpoints) - 1)
    want = plain_at(name, {}, ops, [tl.checkpoint_steps[k] for k in picked])
    for k in picked:
        s, program = pickle.loads(tl.checkpoints[k])
        signature, at_program = want[tl.checkpoint_steps[k]]
        assert s.state_signature() == signature
        assert_same_program(program, at_program)


@pytest.mark.parametrize("name", strategy_names())
def test_a_bulk_replay_makes_no_event_it_would_throw_away(name, monkeypatch):
    """Bulk replay keeps no events, so a policy makes none on its common paths
    (``Strategy._emit``, or a test of ``rec.events``): a frozen event costs
    about a microsecond, and V7, GNU malloc and phkmalloc made two an
    operation.  What is left is on the rare paths (growing the heap, a
    bucket's refill): at most one in ten operations here."""
    import dataclasses

    from heapscope.allocators import events
    from heapscope.traces.load import load_trace

    made = [0]
    for cls in vars(events).values():
        if isinstance(cls, type) and dataclasses.is_dataclass(cls) and cls is not OpRecord:
            def counted(self, *args, _init=cls.__init__, **kwargs):
                made[0] += 1
                _init(self, *args, **kwargs)
            monkeypatch.setattr(cls, "__init__", counted)
    trace = load_trace("gcc-cc1")
    ops = 6000
    replay_ops(make_strategy(name), Program(), trace.kind[:ops].tolist(), trace.ids[:ops].tolist(),
               trace.sizes[:ops].tolist())
    assert made[0] <= ops // 10, made[0]
