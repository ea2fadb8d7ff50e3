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


def _by_hand(s: MetricSeries) -> list[dict]:
    """Every position's derived measures (index t - 1 for position t), a row
    at a time in plain Python with running values (the definitions in
    gui/step_measures.py's docstring)."""
    out, max_live, max_heap, so_far, searched = [], None, None, 0, 0
    for r in range(s.n):
        live, heap = int(s.live[r]), int(s.heap[r])
        max_live = live if max_live is None else max(max_live, live)
        max_heap = heap if max_heap is None else max(max_heap, heap)
        if s.is_malloc[r] and not s.failed[r]:
            so_far += 1
            searched += int(s.search[r])
        free, largest = int(s.free[r]), int(s.largest_free[r])
        free_nt, largest_nt = free - int(s.top_free[r]), int(s.largest_below_top[r])
        out.append({"external": 1 - largest / free if free else 0.0,
                    "external_no_top": 1 - largest_nt / free_nt if free_nt else 0.0,
                    "max_live": max_live, "max_heap": max_heap,
                    "utilisation": max_live / max_heap if max_heap else math.nan,
                    "waste": (max_heap - max_live) / max_live if max_live else math.nan,
                    "searches_so_far": so_far,
                    "search_mean": searched / so_far if so_far else math.nan})
    return out


def _random_series(n: int, seed: int) -> MetricSeries:
    rng = np.random.default_rng(seed)
    heap = np.cumsum(rng.integers(-40, 64, n)).clip(0)
    free = rng.integers(0, 500, n)
    top = free // rng.integers(2, 9, n)
    return series_of(heap=heap, live=(heap // 2 - rng.integers(0, 16, n)).clip(0),
                     search=rng.integers(0, 40, n), is_malloc=rng.random(n) < 0.6,
                     failed=rng.random(n) < 0.05, free=free, largest_free=free // 3,
                     top_free=top, largest_below_top=(free - top) // 2)


@pytest.mark.parametrize("stride", [7, None])
def test_any_rows_measures_equal_the_definitions_worked_row_by_row(monkeypatch, stride):
    # The running values are kept only every STRIDE rows (nothing per row:
    # issue 25's memory); each position's gauges and any span of rows a plot
    # asks for must still be what the definitions give, whichever marks the
    # rows fall between, for a series grown in chunks as a background build
    # gives it.  ``stride`` 7 puts many marks inside a short series.
    from heapscope.gui import step_measures
    if stride:
        monkeypatch.setattr(step_measures, "STRIDE", stride)
    n = 3 * step_measures.STRIDE + 123
    s = _random_series(n, seed=11)
    m = StepMeasures(s, built=0)
    for stop in (1, step_measures.STRIDE - 1, step_measures.STRIDE, 2 * step_measures.STRIDE + 5, n):
        m.grow(stop)
    rng = np.random.default_rng(5)
    positions = sorted(set(range(1, 40)) | set(rng.integers(1, n + 1, 60).tolist())
                       | {step_measures.STRIDE, step_measures.STRIDE + 1, n})
    hand = _by_hand(s)
    for t in positions:
        got = m.at(t)
        for name, value in hand[t - 1].items():
            key = "mallocs_so_far" if name == "searches_so_far" else name
            assert got[key] == pytest.approx(value, nan_ok=True), (t, name)
    for a, b in [(0, n), (5, 9), (step_measures.STRIDE - 2, step_measures.STRIDE + 3)] + [
            tuple(sorted(rng.integers(0, n + 1, 2).tolist())) for _ in range(8)]:
        columns = m.columns(a, b)
        for name in StepMeasures._COLUMNS:
            want = np.array([row[name] for row in hand[a:b]], dtype=np.float64)
            assert len(columns[name]) == b - a
            assert np.allclose(columns[name], want, equal_nan=True), (a, b, name)
    assert m.search_max == int(s.search.max())
