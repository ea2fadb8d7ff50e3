"""The measures of DESIGN.md on a three-step trace worked by hand (K&R next fit,
16-byte units, morecore of 16 KiB)."""

import math

import numpy as np
import pytest

from heapscope.allocators.metrics import MetricSeries, summarize
from heapscope.allocators.replay import Timeline
from heapscope.traces import Trace

from .heap_harness import ALLOC, FREE, REALLOC


def tiny_timeline():
    trace = Trace.from_ops([(ALLOC, 0, 100), (ALLOC, 1, 20), (FREE, 0, 0)], name="tiny")
    return Timeline(trace, "next-fit").build()


def test_per_step_measures_by_hand():
    s = tiny_timeline().series
    # step 1: malloc(100) -> 8 units = 128 bytes (16 of them header) cut from the
    # tail of the 16384-byte first block; 16256 bytes stay free at 0.
    # step 2: malloc(20) -> 3 units = 48 bytes below it; 16208 free at 0.
    # step 3: free the 128-byte block at the top: it cannot join block 0 (the
    # 48-byte block sits between), so it becomes the top block.
    assert s.heap.tolist() == [16384, 16384, 16384]
    assert s.live.tolist() == [100, 120, 20]
    assert s.in_use.tolist() == [128, 176, 48]
    assert s.headers.tolist() == [16, 32, 16]
    assert s.padding.tolist() == [128 - 16 - 100, 176 - 32 - 120, 48 - 16 - 20]
    assert s.free.tolist() == [16256, 16208, 16336]
    assert s.largest_free.tolist() == [16256, 16208, 16208]
    assert s.top_free.tolist() == [0, 0, 128]
    ext = s.external(True)
    assert ext[:2].tolist() == [0.0, 0.0]
    assert ext[2] == pytest.approx(1 - 16208 / 16336)
    # Without the top block only block 0 is free: no external fragmentation.
    assert s.external(False).tolist() == [0.0, 0.0, 0.0]


def test_summary_by_hand():
    row = tiny_timeline().summary()
    assert row["max_live"] == 120 and row["max_heap"] == 16384
    assert row["waste"] == pytest.approx((16384 - 120) / 120)
    assert row["utilisation"] == pytest.approx(120 / 16384)
    assert row["jw1"] == pytest.approx(np.mean([(16384 - 100) / 100, (16384 - 120) / 120, (16384 - 20) / 20]))
    assert row["jw2"] == pytest.approx(16384 / 120 - 1)      # L peaks at step 2
    assert row["jw3"] == pytest.approx(16384 / 100 - 1)      # H first peaks at step 1
    assert row["jw4"] == pytest.approx(16384 / 120 - 1)
    assert row["search_mean"] == pytest.approx(1.0)          # each malloc looked at block 0 only
    assert row["search_max"] == 1
    assert row["failed"] == 0
    assert row["ext_frag"] == pytest.approx((1 - 16208 / 16336) / 3)


def test_failed_requests_are_counted_and_replay_goes_on():
    trace = Trace.from_ops([(ALLOC, 0, 10000), (ALLOC, 1, 10000), (FREE, 1, 0), (ALLOC, 2, 100)], name="cap")
    tl = Timeline(trace, "next-fit", {"heap_limit": 16384}).build()
    assert tl.series.failed.tolist() == [False, True, False, False]
    row = tl.summary()
    assert row["failed"] == 1
    assert row["max_live"] == 10100
    tl.seek(3)
    assert "nothing to free" in tl.describe()
    tl.seek(2)
    assert "NULL" in tl.describe()
    assert not math.isnan(row["waste"])


def test_buddy_search_length_counts_orders_probed_and_splits():
    # DESIGN.md: "buddy: orders probed + splits".  malloc(40) on an empty heap:
    # AVAIL[6..12] probed empty (7 lists), a chunk of order 12 added and its list
    # probed again (8 probes); 4096 is split down to 64 (6 splits): 14.
    trace = Trace.from_ops([(ALLOC, 0, 40)], name="one")
    tl = Timeline(trace, "buddy").build()
    assert tl.series.search.tolist() == [8 + 6]
    assert tl.series.work.tolist() == [8 + 6]


def test_a_failure_in_a_fixed_pool_says_so():
    trace = Trace.from_ops([(ALLOC, 0, 3000), (ALLOC, 1, 3000)], name="pool")
    tl = Timeline(trace, "tlsf", {"pool_size": 4096}).build()
    tl.seek(2)
    assert tl.series.failed.tolist() == [False, True]
    assert "NULL (out of memory: the pool is used up)" in tl.describe()


def test_a_heap_that_shrinks_keeps_its_largest_size_in_the_measures():
    # dlmalloc (32-bit) trims top when everything is freed: H falls from
    # 155648 to 4096 (tests/test_dlmalloc.py works the numbers out).  Sarena,
    # waste and utilisation still divide by the largest heap, as mdriver's
    # final heap (which never shrinks) is its largest.
    from heapscope.gui.step_measures import StepMeasures
    trace = Trace.from_ops([(ALLOC, 0, 100000), (ALLOC, 1, 50000), (FREE, 1, 0), (FREE, 0, 0)], name="trim")
    tl = Timeline(trace, "dlmalloc", {"word": 4}).build()
    assert tl.series.heap.tolist() == [102400, 155648, 155648, 4096]
    row = tl.summary()
    assert row["max_heap"] == 155648
    assert row["utilisation"] == pytest.approx(150000 / 155648)
    assert row["waste"] == pytest.approx((155648 - 150000) / 150000)
    gauges = StepMeasures(tl.series)
    assert gauges.at(4)["heap"] == 4096 and gauges.at(4)["max_heap"] == 155648
    assert gauges.at(4)["utilisation"] == pytest.approx(150000 / 155648)


# ------------------------------------------------ summaries of hand-made series
def series_of(**columns) -> MetricSeries:
    """A MetricSeries whose columns are given by hand (the rest stay 0)."""
    n = len(next(iter(columns.values())))
    s = MetricSeries(n)
    for name, values in columns.items():
        setattr(s, name, np.array(values, dtype=getattr(s, name).dtype))
    return s


def test_search_p99_is_the_99th_percentile_of_the_mallocs_that_succeeded():
    # 200 mallocs that succeeded, with search lengths 1 (x197), 50, 60 and 1000;
    # then a free and a failed malloc with longer searches, which do not count.
    # Sorted, x[197] = 50, x[198] = 60.  The 99th percentile interpolated between
    # order statistics (Hyndman & Fan type 7, as a spreadsheet's PERCENTILE.INC):
    # h = (200 - 1) * 0.99 = 197.01, so p99 = x[197] + 0.01 * (x[198] - x[197]) = 50.1.
    searches = [1] * 197 + [50, 60, 1000] + [5000, 7000]
    s = series_of(search=searches, is_malloc=[True] * 200 + [False, True],
                  failed=[False] * 201 + [True], heap=[4096] * 202, live=[1] * 202)
    row = summarize(s)
    assert row["search_p99"] == pytest.approx(50.1, abs=1e-9)
    assert row["search_max"] == 1000
    assert row["search_mean"] == pytest.approx((197 + 50 + 60 + 1000) / 200)


def test_the_measures_at_the_peak_are_taken_where_live_bytes_peak():
    # Live bytes L peak at row 2 (50 bytes); the heap H peaks later, at row 3.
    # External fragmentation 1 - Fmax/F is different at every row:
    # 0, 1 - 20/40, 1 - 10/30, 1 - 25/100, 1 - 10/100.
    s = series_of(live=[10, 30, 50, 40, 20],
                  heap=[100, 100, 120, 200, 200],
                  in_use=[16, 48, 80, 64, 32],
                  free=[50, 40, 30, 100, 100],
                  largest_free=[50, 20, 10, 25, 10])
    row = summarize(s)
    assert row["ext_frag_at_peak"] == pytest.approx(1 - 10 / 30)
    assert row["internal_at_peak"] == 80 - 50
    assert row["jw2"] == pytest.approx(120 / 50 - 1)        # H/L - 1 where L peaks
    assert row["jw3"] == pytest.approx(200 / 40 - 1)        # H/L - 1 where H first peaks
    assert row["ext_frag"] == pytest.approx((0 + 0.5 + (1 - 10 / 30) + 0.75 + 0.9) / 5)


def test_the_mean_search_leaves_out_failed_mallocs():
    # Searches 3 (malloc), 9 (a malloc that failed), 0 (a free), 5 (malloc),
    # 7 (failed): the mean over the mallocs that succeeded is (3 + 5) / 2.
    s = series_of(search=[3, 9, 0, 5, 7], is_malloc=[True, True, False, True, True],
                  failed=[False, True, False, False, True], heap=[64] * 5, live=[8] * 5)
    row = summarize(s)
    assert row["search_mean"] == pytest.approx(4.0)
    assert row["search_max"] == 5
    assert row["failed"] == 2


def test_the_tiny_trace_measures_at_the_peak():
    # L peaks at step 2 (120 live bytes): one free block of 16208 bytes, so no
    # external fragmentation there (step 3 has some); A - L = 176 - 120.
    row = tiny_timeline().summary()
    assert row["ext_frag_at_peak"] == 0.0
    assert row["internal_at_peak"] == 176 - 120


# --------------------------------------------------------- describing a step
def test_a_realloc_is_described_as_a_realloc():
    # K&R next fit, 16-byte units.  Step 1: malloc(100) -> 8 units cut from the
    # top of the first 16 KiB: block 16256, payload 16272 (0x3f90).
    # Step 2: realloc(id 0, 300): the block holds 112 payload bytes, too few, so
    # a new block of 20 units is cut from the free block at 0 (1016 units, the
    # only one examined): it keeps 996 units, the new block is at 996 * 16 =
    # 15936, payload 15952 = 0x3e50; the old block is freed (no free neighbour).
    # A realloc names the payload it was given, as C's realloc(ptr, size) does.
    trace = Trace.from_ops([(ALLOC, 0, 100), (REALLOC, 0, 300)], name="re")
    tl = Timeline(trace, "next-fit").build()
    tl.seek(1)
    assert tl.describe() == "step 1: malloc(100) for id 0 -> 0x3f90 after examining 1 free block; " \
                            "split once; grew the heap once"
    tl.seek(2)
    assert tl.describe() == "step 2: realloc(0x3f90, 300) for id 0 -> 0x3e50 after examining 1 free block; " \
                            "split once"
