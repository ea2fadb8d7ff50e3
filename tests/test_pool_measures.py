"""Pool-mode measures: in a fixed pool, H is the high-water mark of the pool a
strategy has touched (blocks handed out, regions carved), not the pool size.
Every expected value below is worked by hand from the strategy's rules."""

from __future__ import annotations

import json

import pytest

from heapscope.allocators import make_strategy
from heapscope.allocators.replay import Timeline
from heapscope.cli import main
from heapscope.gui.step_measures import StepMeasures
from heapscope.traces import Trace

from .heap_harness import ALLOC, FREE


def test_next_fit_touches_the_pool_from_its_top_down():
    s = make_strategy("next-fit", pool_size=65536)     # 16-byte units
    assert s.footprint == 0
    a = s.malloc(100)       # 7 + 1 units = 128 bytes cut from the tail: [65408, 65536)
    assert s.footprint == 128
    s.malloc(10)            # 2 units below it: [65376, 65408)
    assert s.footprint == 160
    s.free(a)               # a high-water mark: freeing gives nothing back
    assert s.footprint == 160
    s.malloc(200)           # 14 units; the freed 8-unit block is too small, block 0 gives its tail
    assert s.footprint == 65536 - (65376 - 224)
    assert s.heap_size == 65536


@pytest.mark.parametrize("name,pool,size,touched", [
    ("tlsf", 1024, 100, 8 + 104),            # one size word + 104 bytes, at the start of the pool
    ("splay-best-fit", 1000, 100, 112),      # the front of the wilderness: header + 104, 8-aligned
    ("rotating-list", 1003, 100, 120),       # the upper part of the one free block: tags + 104
    ("buddy", 10_000, 40, 4096),             # a whole 4 KiB chunk carved for a 64-byte block
    ("bsd-buckets", 12_288, 20, 4088 + 4096),  # the first call's pad, then a page for bucket 32
])
def test_the_first_request_touches_what_the_strategy_hands_out_or_carves(name, pool, size, touched):
    s = make_strategy(name, pool_size=pool)
    assert s.footprint == 0
    assert s.malloc(size) is not None
    assert s.footprint == touched


def test_the_measures_and_the_gauges_take_h_as_the_part_touched():
    trace = Trace.from_ops([(ALLOC, 0, 100), (ALLOC, 1, 10), (FREE, 0, 0), (ALLOC, 2, 200)], name="pool")
    tl = Timeline(trace, "next-fit", {"pool_size": 65536}).build()
    heap = [128, 160, 160, 384]          # as in the test above
    live = [100, 110, 10, 210]
    assert tl.series.heap.tolist() == heap and tl.series.live.tolist() == live
    row = tl.summary()
    assert row["max_heap"] == 384
    assert row["waste"] == pytest.approx((384 - 210) / 210)
    assert row["utilisation"] == pytest.approx(210 / 384)
    gauges = StepMeasures(tl.series)
    assert [gauges.at(t)["heap"] for t in (1, 2, 3, 4)] == heap
    assert gauges.at(2)["waste"] == pytest.approx((160 - 110) / 110)
    assert gauges.at(3)["utilisation"] == pytest.approx(110 / 160)


def test_in_sbrk_mode_h_is_still_the_break():
    trace = Trace.from_ops([(ALLOC, 0, 100)], name="one")
    tl = Timeline(trace, "next-fit").build()
    assert tl.series.heap.tolist() == [16384]      # morecore's 1024 units of 16 bytes


def test_compare_in_a_roomy_pool_tells_the_strategies_apart(capsys):
    # issue 7: in a pool every strategy without failures showed the same waste.
    def rows(*extra):
        assert main(["compare", "vo1989:steps=300", "--format", "json", *extra]) == 0
        return {r["strategy"]: r for r in json.loads(capsys.readouterr().out)}

    pool = rows("--pool-size", "1M")
    assert all(r["failed"] == 0 for r in pool.values())
    assert len({r["waste"] for r in pool.values()}) == len(pool)
    for r in pool.values():
        assert r["max_live"] <= r["max_heap"] < 1 << 20
        assert r["waste"] == pytest.approx((r["max_heap"] - r["max_live"]) / r["max_live"])
    # Strategies that carve their memory in the same pieces from a pool as
    # from sbrk touch as much of the pool as they grow the heap.
    grown = rows()
    for name in ("buddy", "bsd-buckets"):
        assert pool[name]["max_heap"] == grown[name]["max_heap"]
