"""The measures of DESIGN.md on a three-step trace worked by hand (K&R next fit,
16-byte units, morecore of 16 KiB)."""

import math

import numpy as np
import pytest

from heapscope.allocators.replay import Timeline
from heapscope.traces import Trace

from .heap_harness import ALLOC, FREE


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
