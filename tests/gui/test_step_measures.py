"""The measures the gauges read, per position, on series written by hand."""

import math

import numpy as np
import pytest

from heapscope.allocators.metrics import MetricSeries
from heapscope.gui.step_measures import StepMeasures


def series_of(**columns) -> MetricSeries:
    n = len(next(iter(columns.values())))
    s = MetricSeries(n)
    for name, values in columns.items():
        setattr(s, name, np.array(values, dtype=getattr(s, name).dtype))
    return s


def test_the_running_mean_search_counts_only_mallocs_that_succeeded():
    # Steps: malloc (search 3), malloc that failed (9), free (0), malloc (5),
    # malloc that failed (7).  Over the mallocs that succeeded so far the mean is
    # 3, 3, 3, (3 + 5) / 2, (3 + 5) / 2.
    s = series_of(search=[3, 9, 0, 5, 7], is_malloc=[True, True, False, True, True],
                  failed=[False, True, False, False, True], heap=[64] * 5, live=[8] * 5)
    m = StepMeasures(s)
    assert [m.at(t)["search_mean"] for t in range(1, 6)] == pytest.approx([3, 3, 3, 4, 4])
    assert [m.at(t)["mallocs_so_far"] for t in range(1, 6)] == [1, 1, 1, 2, 2]
    assert m.at(0) is None


def test_the_running_mean_is_undefined_until_a_malloc_succeeds():
    s = series_of(search=[6, 2], is_malloc=[True, True], failed=[True, False],
                  heap=[0, 64], live=[0, 8])
    m = StepMeasures(s)
    assert math.isnan(m.at(1)["search_mean"])
    assert m.at(2)["search_mean"] == 2


def test_utilisation_and_waste_over_the_prefix():
    # Over the first t steps: Vo's waste (max H - max L) / max L, and the
    # mdriver's utilisation max L / max H (its final heap is its largest; here
    # the heap shrinks at step 3 and keeps its peak in both).
    s = series_of(live=[10, 40, 20], heap=[100, 160, 120], is_malloc=[True] * 3)
    m = StepMeasures(s)
    assert [m.at(t)["utilisation"] for t in (1, 2, 3)] == pytest.approx([10 / 100, 40 / 160, 40 / 160])
    assert [m.at(t)["waste"] for t in (1, 2, 3)] == pytest.approx([90 / 10, 120 / 40, 120 / 40])


def test_measures_grown_in_chunks_are_those_computed_at_once():
    # a timeline built in the background gives its rows a chunk at a time
    rng = np.random.default_rng(3)
    n = 1000
    heap = np.cumsum(rng.integers(0, 64, n))
    live = heap // 2 - rng.integers(0, 16, n).clip(0)
    free = rng.integers(0, 500, n)
    s = series_of(heap=heap, live=live.clip(0), search=rng.integers(0, 40, n),
                  is_malloc=rng.random(n) < 0.6, failed=rng.random(n) < 0.05, free=free,
                  largest_free=free // 3, top_free=free // 4, largest_below_top=free // 5)
    whole = StepMeasures(s)
    grown = StepMeasures(s, built=0)
    assert grown.at(1) is None
    for stop in (1, 7, 300, 301, 999, 1000):
        grown.grow(stop)
        assert grown.n == stop
    for name in ("external", "external_no_top", "max_live", "max_heap", "utilisation", "waste",
                 "searches_so_far", "search_mean"):
        assert np.array_equal(getattr(grown, name), getattr(whole, name), equal_nan=True), name
    assert grown.search_max == whole.search_max == int(s.search.max())
    assert [grown.at(t) for t in (1, 500, 1000)] == [whole.at(t) for t in (1, 500, 1000)]


def test_a_growing_curve_keeps_each_columns_low_and_high_whatever_the_runs():
    # the plots of a timeline built in the background add a chunk's rows at a
    # time (gui/plots.py): 100 steps in 10 columns of 10, added in two runs
    from heapscope.gui.plots import GrowingPeaks
    x = np.arange(1, 101, dtype=np.float64)
    y = np.sin(x)
    curve = GrowingPeaks(100, points=20)
    curve.add(x[:37], y[:37])
    xs, ys = curve.points()
    assert list(xs[0::2]) == [1, 11, 21, 31]              # the columns reached so far
    curve.add(x[37:], y[37:])
    xs, ys = curve.points()
    assert list(xs[0::2]) == [1 + 10 * c for c in range(10)]
    assert list(ys[0::2]) == [min(y[10 * c:10 * c + 10]) for c in range(10)]
    assert list(ys[1::2]) == [max(y[10 * c:10 * c + 10]) for c in range(10)]
