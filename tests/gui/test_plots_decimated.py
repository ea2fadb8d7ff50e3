"""The plots of a long replay keep a low and a high per column of steps once
built, as while building (issue 25: a million points set at once held the
event loop); zoomed in, the steps in view are decimated again from the
exact measures, down to each step's own value."""

import numpy as np
import pytest

from heapscope.allocators.metrics import MetricSeries
from heapscope.gui import plots
from heapscope.gui.plots import PlotPanel
from heapscope.gui.step_measures import StepMeasures

N = 20_000
#: N steps in COARSE_POINTS // 2 = 2048 columns: 10 steps a column
WIDTH = 10


def series(n: int = N) -> MetricSeries:
    rng = np.random.default_rng(5)
    s = MetricSeries(n)
    for col in ("live", "heap", "free", "largest_free", "top_free", "largest_below_top", "search"):
        setattr(s, col, rng.integers(1, 100_000, n).astype(np.int32))
    s.heap[7777 % n] = 9_000_000        # one step's peak: it must stay visible
    s.largest_free = np.minimum(s.largest_free, s.free)
    s.top_free = np.minimum(s.top_free, s.free)
    s.largest_below_top = np.minimum(s.largest_below_top, s.free - s.top_free)
    s.is_malloc = rng.random(n) < 0.4
    return s


@pytest.fixture
def panel(qtbot, monkeypatch):
    monkeypatch.setattr(plots, "FULL_CURVE_UPTO", 1000)
    p = PlotPanel()
    qtbot.addWidget(p)
    p.resize(1200, 300)
    p.show()
    # the tests read the points the curves are given, not pixels: painting
    # 20 000 random steps (every column the plot's height, antialiased)
    # after each test was 2.5 of its 2.8 CPU-s (issue 20)
    p.setUpdatesEnabled(False)
    return p


def columns_low_high(x, y, width, first=1):
    """Each column's (first step, low, high), column by column in Python."""
    out = []
    for c in range(0, int(x.max()) // width + 2):
        inside = (x >= first + c * width) & (x < first + (c + 1) * width)
        if inside.any():
            out.append((first + c * width, y[inside].min(), y[inside].max()))
    return out


def data(curve):
    """The points given to ``curve`` (getData gives what pyqtgraph draws of
    them: downsampled again to the plot's pixels)."""
    return curve.xData, curve.yData


def points_of(curve):
    xs, ys = data(curve)
    return [(xs[i], ys[i], ys[i + 1]) for i in range(0, len(xs), 2)]


def test_a_built_long_curve_keeps_each_columns_low_and_high(panel):
    s = series()
    panel.set_measures(StepMeasures(s), N)
    x = np.arange(1, N + 1)
    heap = s.heap / 1024.0
    assert points_of(panel.heap_curve) == columns_low_high(x, heap, WIDTH)
    assert max(data(panel.heap_curve)[1]) == 9_000_000 / 1024.0      # the one-step peak
    ok = s.is_malloc & ~s.failed
    assert points_of(panel.search_curve) == columns_low_high(x[ok], s.search[ok].astype(float), WIDTH)
    assert len(data(panel.heap_curve)[0]) <= plots.COARSE_POINTS + 2


def test_grown_in_chunks_then_built_is_the_curve_made_at_once(panel, qtbot):
    s = series()
    measures = StepMeasures(s, built=0)
    for built in (1, 999, 5000, 12345):
        measures.grow(built)
        panel.set_measures(measures, N, coarse=True)
    measures.grow(N)
    panel.set_measures(measures, N)
    grown = [data(c) for c in panel._curve_list()]
    other = PlotPanel()
    qtbot.addWidget(other)
    other.set_measures(StepMeasures(s), N)
    for (gx, gy), (wx, wy) in zip(grown, [data(c) for c in other._curve_list()]):
        assert np.array_equal(gx, wx) and np.array_equal(gy, wy, equal_nan=True)


def test_zoomed_in_the_curve_shows_each_steps_own_value_and_zoomed_out_the_whole(panel):
    s = series()
    measures = StepMeasures(s)
    panel.set_measures(measures, N)
    whole = data(panel.heap_curve)
    panel.heap_plot.setXRange(5001, 5800, padding=0)
    xs, ys = data(panel.heap_curve)
    assert xs[0] <= 5001 and xs[-1] >= 5800 and len(xs) < 2 * 1000
    rows = xs.astype(int) - 1
    assert np.array_equal(ys, s.heap[rows] / 1024.0)          # a column a step: the step's value
    fx, fy = data(panel.frag_curve)
    assert np.array_equal(fy, 100.0 * measures.external[fx.astype(int) - 1])
    # half way in: columns of 3 steps, each its low and high
    panel.heap_plot.setXRange(3001, 9000, padding=0)
    first = int(data(panel.heap_curve)[0][0])
    width = panel._detail[2]
    assert width == 3
    x = np.arange(1, N + 1)
    inside = (x >= first) & (x <= 9001)
    expected = columns_low_high(x[inside], (s.heap / 1024.0)[inside], width, first)
    assert points_of(panel.heap_curve) == expected[:len(points_of(panel.heap_curve))]
    assert 9_000_000 / 1024.0 in data(panel.heap_curve)[1]          # the peak, zoomed in too
    panel.heap_plot.setXRange(0, N, padding=0.01)
    assert all(np.array_equal(a, b) for a, b in zip(data(panel.heap_curve), whole))


def test_a_short_replay_is_plotted_whole(panel):
    s = series(800)
    panel.set_measures(StepMeasures(s), 800)
    xs, ys = data(panel.heap_curve)
    assert np.array_equal(xs, np.arange(1, 801)) and np.array_equal(ys, s.heap / 1024.0)


def test_a_curve_is_drawn_with_a_low_and_a_high_per_pixel_column(panel, qtbot):
    # what pyqtgraph draws (getData: downsampled to the plot's pixels) is
    # about two points per pixel column, the one-step peak among them: at
    # pyqtgraph's default of five samples a pixel the six curves' antialiased
    # repaint took 45 ms on a 1280-pixel window (issue 25)
    s = series()
    panel.set_measures(StepMeasures(s), N)
    vb = panel.heap_plot.vb
    qtbot.waitUntil(lambda: vb.width() > 100)
    panel.heap_curve.updateItems()
    xs, ys = panel.heap_curve.getData()
    columns = vb.width()
    assert len(xs) <= 2 * columns + 8, (len(xs), columns)
    assert len(xs) >= columns            # (not fewer: the envelope needs both ends of each column)
    assert ys.max() == 9_000_000 / 1024.0
