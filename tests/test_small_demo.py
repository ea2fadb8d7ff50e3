"""The small-demo constants (allocators/small_demo.py): the policy stays,
its growth sizes shrink to about the trace's largest request, and a trace of
ten requests fills the heap."""

from __future__ import annotations

import pytest

from heapscope.allocators.registry import strategy_names
from heapscope.allocators.replay import Timeline
from heapscope.allocators.small_demo import growth_for, small_demo
from heapscope.traces.trace import ALLOC, Trace

SIZES = [100, 64, 64, 100, 240, 64, 300, 500, 64, 40]


@pytest.fixture(scope="module")
def ten():
    return Trace.from_ops([(ALLOC, i, s) for i, s in enumerate(SIZES)])


def used_share(trace, name, params):
    s = Timeline(trace, name, params).build().series
    return s.in_use[-1] / s.heap[-1]


def test_the_growth_holds_the_largest_request(ten):
    # 500 bytes and a header: 516, the next power of two 1024
    assert growth_for(ten) == 1024


def test_k_and_r_asks_for_a_kilobyte_instead_of_16_kib(ten):
    preset = small_demo("first-fit", ten)
    # 1024 bytes of growth in 16-byte header units (LP64)
    assert preset.params == {"nalloc": 64}
    assert preset.changes == ("nalloc 1024 → 64",)
    # K&R's NALLOC: 1024 units of 16 bytes, one 16 KiB morecore for 1.7 KiB of blocks
    s = Timeline(ten, "first-fit").build().series
    assert s.heap[-1] == 16384
    s = Timeline(ten, "first-fit", preset.params).build().series
    assert s.heap[-1] == 2048


@pytest.mark.parametrize("name", strategy_names())
def test_the_preset_never_makes_the_heap_emptier(ten, name):
    preset = small_demo(name, ten)
    before, after = used_share(ten, name, {}), used_share(ten, name, preset.params)
    assert after >= before - 1e-9
    if preset.params:
        assert after > 0.35, (name, preset.params, after)
