"""The packed per-step measures (issue 25): int32 columns, widened to int64
when a value needs it, and compare's summary folded a chunk at a time.

The expected values are read from the heap after every operation as
Python ints (the strategy's own books), never through a MetricSeries; the
folded summary is compared with :func:`summarize` of the whole series."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings

from heapscope.allocators import replay as replay_module
from heapscope.allocators.metrics import (ALL_COLUMNS, NARROW_BYTES_PER_STEP, MetricSeries,
                                          summarize)
from heapscope.allocators.registry import make_strategy, strategy_names
from heapscope.allocators.replay import Program, Timeline, apply_op
from heapscope.traces import Trace, load_trace
from tests.depth import pick, walked_examples

from .heap_harness import op_sequences


def heap_reads(name: str, ops) -> dict[str, list]:
    """Every column of the series, read from the heap after each op as Python ints."""
    s = make_strategy(name)
    program = Program()
    out: dict[str, list] = {col: [] for col in ALL_COLUMNS}
    for kind, ident, size in ops:
        rec = apply_op(s, program, kind, ident, size)
        free, largest, top, below = s.fragmentation_probe()
        values = {"heap": s.footprint, "live": program.live_bytes, "in_use": s.in_use,
                  "headers": s.header_in_use, "free": free, "largest_free": largest,
                  "top_free": top, "largest_below_top": below, "search": s.search_length(rec),
                  "work": rec.work, "rotations": rec.rotations, "splits": rec.splits,
                  "merges": rec.merges, "grows": rec.grows, "is_malloc": kind != 1,
                  "failed": rec.failed, "payload": -1 if rec.payload is None else rec.payload}
        for col, v in values.items():
            out[col].append(v)
    return out


def assert_series_reads(series: MetricSeries, reads: dict[str, list]) -> None:
    for col in ALL_COLUMNS:
        got = getattr(series, col).tolist()
        assert got == reads[col], f"{col}: first difference at row " \
            f"{next(i for i, (g, w) in enumerate(zip(got, reads[col])) if g != w)}"


@pytest.mark.parametrize("name", strategy_names())
def test_the_packed_series_of_a_real_trace_is_the_heap_read_after_each_op(name):
    trace = load_trace("perl-words")
    timeline = Timeline(trace, name).build()
    assert_series_reads(timeline.series, heap_reads(name, list(trace)))
    assert timeline.series.nbytes == NARROW_BYTES_PER_STEP * len(trace)   # nothing widened


@pytest.mark.parametrize("name", strategy_names())
@settings(max_examples=8, deadline=None)
@given(ops=op_sequences(max_ops=120, max_size=3000))
def test_the_packed_series_of_random_traces_is_the_heap_read_after_each_op(name, ops):
    timeline = Timeline(Trace.from_ops(ops), name).build()
    assert_series_reads(timeline.series, heap_reads(name, ops))


def test_a_heap_past_2_gib_widens_its_columns_and_keeps_every_value():
    gib = 1 << 30
    ops = [(0, 0, 16), (0, 1, 3 * gib), (1, 0, 0), (0, 2, 40), (1, 1, 0), (1, 2, 0)]
    timeline = Timeline(Trace.from_ops(ops), "next-fit").build()
    s = timeline.series
    assert s.heap.dtype == np.int64 and s.live.dtype == np.int64
    assert s.search.dtype == np.int32           # the counters stayed small
    assert_series_reads(s, heap_reads("next-fit", ops))
    assert max(s.live.tolist()) > 3 * gib


def test_put_widens_only_when_a_value_does_not_fit():
    s = MetricSeries(3)
    s.put("heap", slice(0, 2), np.array([5, 2**31 - 1]))
    assert s.heap.dtype == np.int32
    # one Python int at a time (record_row's rows): int32's own bounds fit
    s.put("in_use", 0, 2**31 - 1)
    s.put("in_use", 1, -(2**31))
    assert s.in_use.dtype == np.int32 and s.in_use.tolist() == [2**31 - 1, -(2**31), 0]
    s.put("in_use", 2, -(2**31) - 1)
    assert s.in_use.dtype == np.int64 and s.in_use.tolist() == [2**31 - 1, -(2**31), -(2**31) - 1]
    s.put("heap", 2, 2**31)
    assert s.heap.dtype == np.int64 and s.heap.tolist() == [5, 2**31 - 1, 2**31]
    s.put("payload", 1, -(2**31) - 1)
    assert s.payload.tolist() == [-1, -(2**31) - 1, -1]


# ------------------------------------------------ compare's folded summary
def summary_without_series(trace, name: str) -> dict:
    tl = Timeline(trace, name, checkpoints=False, keep_series=False).build()
    row = tl.summary()
    row.pop("wall_s")
    return row


def same_row(got: dict, want: dict, exact: bool) -> None:
    assert got.keys() == want.keys()
    for key, w in want.items():
        g = got[key]
        if isinstance(w, float) and math.isnan(w):
            assert math.isnan(g), key
        elif exact or not isinstance(w, float):
            assert g == w and type(g) is type(w), key
        else:
            assert g == pytest.approx(w, rel=1e-12, abs=1e-15), key


@pytest.mark.parametrize("name", strategy_names())
@settings(max_examples=6, deadline=None)
@given(ops=op_sequences(max_ops=150, max_size=3000))
def test_the_folded_summary_is_that_of_the_whole_series(name, ops):
    trace = Trace.from_ops(ops)
    whole = summarize(Timeline(trace, name, checkpoints=False).build().series)
    # one chunk: bit for bit
    same_row(summary_without_series(trace, name), whole, exact=True)
    # many chunks (a build writes blocks of PROGRESS_EVERY rows: make both small)
    old = replay_module.SUMMARY_CHUNK, replay_module.PROGRESS_EVERY
    replay_module.SUMMARY_CHUNK, replay_module.PROGRESS_EVERY = 16, 8
    try:
        folded = summary_without_series(trace, name)
    finally:
        replay_module.SUMMARY_CHUNK, replay_module.PROGRESS_EVERY = old
    same_row(folded, whole, exact=False)



def live_bytes_of(trace) -> list[int]:
    """L after each op, from the trace alone (no malloc fails on these traces)."""
    live: dict[int, int] = {}
    total, out = 0, []
    for kind, ident, size in trace:
        total -= live.pop(ident, 0)
        if kind != 1:
            live[ident] = size
            total += size
        out.append(total)
    return out


def trace_and_strategy_pairs():
    """(bundled trace, strategy) pairs of the walked bundled traces: every
    pair in the deep suite; in the quick one a third of them, spread so that
    every strategy meets at least one trace and every trace four strategies
    (trace i with strategy j when i + j is a multiple of 3), the others
    marked ``deep`` (tests/depth.py; docs/testing.md's table)."""
    traces_, names = [ex.name for ex in walked_examples()], strategy_names()
    return [pytest.param(ex, name, id=f"{ex}-{name}",
                         marks=() if (i + j) % 3 == 0 else pytest.mark.deep)
            for i, ex in enumerate(traces_) for j, name in enumerate(names)]


@pytest.mark.parametrize("example, name", trace_and_strategy_pairs())
def test_every_bundled_trace_packs_its_live_bytes_exactly(example, name):
    whole = load_trace(example)
    n = min(len(whole), 12_000)         # a prefix of a valid trace is one: kept fast
    trace = Trace(whole.kind[:n], whole.ids[:n], whole.sizes[:n], whole.num_ids)
    series = Timeline(trace, name, checkpoints=False).build().series
    assert series.failed.sum() == 0
    assert series.live.tolist() == live_bytes_of(trace)
    assert series.is_malloc.tolist() == (trace.kind != 1).tolist()
    for col in ALL_COLUMNS:     # int32 unless a value needs more (dlmalloc's mmapped payloads)
        values = getattr(series, col)
        if values.dtype == np.int64:
            assert max(-int(values.min()), int(values.max())) > 2**31 - 1, col
    # the summary compare prints, folded in chunks, against the whole series
    from heapscope.allocators.running_summary import RunningSummary
    folded = RunningSummary()
    for start in range(0, series.n, 4096):
        part = MetricSeries.__new__(MetricSeries)
        part.n = min(4096, series.n - start)
        for col in ALL_COLUMNS:
            setattr(part, col, getattr(series, col)[start:start + part.n])
        folded.add(part)
    same_row(folded.row(), summarize(series), exact=False)


# ------------------------------------------ compare's build, bundled traces
#: parameters the folded summary must hold under too: a fixed pool (H is the
#: touched range), a heap limit (mallocs fail, so the payload column counts)
#: (the quick suite: the heap limit alone, whose failed mallocs the others lack)
SUMMARY_PARAMS = pick([{"heap_limit": 96 << 10}],
                      [{}, {"pool_size": 1 << 20}, {"heap_limit": 96 << 10}])


@pytest.mark.parametrize("params", SUMMARY_PARAMS, ids=lambda p: ",".join(p) or "sbrk")
@pytest.mark.parametrize("example, name", trace_and_strategy_pairs())
def test_compares_folded_build_gives_the_whole_series_summary_on_bundled_traces(example, name, params):
    """What a ``compare`` worker builds (no series, the rows folded into the
    summary as they come) gives the summary of the whole series a window's
    build keeps, value for value in one chunk, and in many (blocks of 8
    steps, chunks of 16) to the last bits of the float means; on every
    walked bundled trace, every strategy, in a heap, a pool and under a
    limit.  (A compare row of fewer measures a step was tried against it,
    issue 25: docs/benchmarks.md.)"""
    whole = load_trace(example)
    # the first 2000 ops in the quick suite (every case's heap limit is met
    # within 835), 6000 with --deep
    n = min(len(whole), pick(2_000, 6_000))
    trace = Trace(whole.kind[:n], whole.ids[:n], whole.sizes[:n], whole.num_ids)
    full = Timeline(trace, name, params, checkpoints=False).build()
    want = summarize(full.series)
    got = Timeline(trace, name, params, checkpoints=False, keep_series=False).build().summary()
    got.pop("wall_s")
    same_row(got, want, exact=True)
    old = replay_module.SUMMARY_CHUNK, replay_module.PROGRESS_EVERY
    replay_module.SUMMARY_CHUNK, replay_module.PROGRESS_EVERY = 16, 8
    try:
        folded = Timeline(trace, name, params, checkpoints=False, keep_series=False).build().summary()
    finally:
        replay_module.SUMMARY_CHUNK, replay_module.PROGRESS_EVERY = old
    folded.pop("wall_s")
    same_row(folded, want, exact=False)
    assert want["work_per_op"] > 0      # a sum that could be lost
