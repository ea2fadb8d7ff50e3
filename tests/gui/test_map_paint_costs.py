"""What the heap map, the plots and compare rows no longer do for nothing (issues 20, 25):
a burst of resizes lays the map out once, a step whose fit moves the view
places its labels once, and the axes whose title is never shown work out
no SI prefix (nor write that title again) when the view moves."""

from __future__ import annotations

from PySide6.QtWidgets import QApplication

from heapscope.allocators.next_fit import NextFit
from heapscope.gui.compare_view import CompareHeapMap, SharedScale
from heapscope.gui.heap_map import HeapMapWidget
from heapscope.gui.plots import PlotPanel


def next_fit_heap(blocks: int) -> NextFit:
    s = NextFit()
    for i in range(blocks):
        s.malloc(24 + 8 * (i % 5))
    return s


def test_a_burst_of_resizes_lays_the_map_out_once(qtbot, monkeypatch):
    calls = []
    real = HeapMapWidget._relayout_if_needed
    monkeypatch.setattr(HeapMapWidget, "_relayout_if_needed", lambda self: (calls.append(1), real(self)))
    hm = HeapMapWidget()
    qtbot.addWidget(hm)
    hm.show_heap(next_fit_heap(40))
    hm.resize(500, 300)
    hm.show()
    qtbot.wait(10)
    calls.clear()
    for w in range(501, 507):           # six resizes before the event loop runs again
        hm.resize(w, 300)
        QApplication.sendPostedEvents()
    qtbot.wait(10)
    assert len(calls) == 1              # (each resize queued its own: six)


def test_a_fit_that_moves_the_view_places_the_labels_once(qtbot, monkeypatch):
    placings = []
    real = HeapMapWidget._view_range_changed
    monkeypatch.setattr(HeapMapWidget, "_view_range_changed", lambda self, *a: (placings.append(1), real(self, *a)))
    hm = HeapMapWidget()
    qtbot.addWidget(hm)
    hm.resize(500, 300)
    hm.show()
    small = next_fit_heap(10)
    hm.show_heap(small, small.rec)
    qtbot.wait(10)
    placings.clear()
    big = next_fit_heap(400)            # a taller heap: the fit moves the view
    hm.show_heap(big, big.rec)
    assert hm.layout_.rows > 1 and len(placings) == 1       # (twice: the fit's, then the render's)
    # and a step whose fit leaves the view where it was still places them
    hm.show_heap(big, big.rec)
    assert len(placings) == 2


def quiet_axes(plot_item) -> list:
    return [plot_item.getAxis("top"), plot_item.getAxis("right")]


def test_axes_without_a_title_work_out_no_si_prefix(qtbot):
    hm, plots, row = HeapMapWidget(), PlotPanel(), CompareHeapMap(SharedScale())
    for w in (hm, plots, row):
        qtbot.addWidget(w)
    quiet = quiet_axes(hm.plot) + [a for p in plots.plots for a in quiet_axes(p)] \
        + [row.plot.getAxis(name) for name in ("left", "bottom", "top", "right")]
    shown = [hm.plot.getAxis("left"), hm.plot.getAxis("bottom")] \
        + [p.getAxis(name) for p in plots.plots for name in ("left", "bottom")]
    assert all(not a.autoSIPrefix for a in quiet)
    assert all(a.autoSIPrefix for a in shown)       # a shown title keeps its prefix
    # a move of the view writes no hidden title again
    written = []
    for axis in quiet + shown:
        real = axis.label.setHtml
        axis.label.setHtml = lambda html, real=real, axis=axis: (written.append(axis), real(html))
    for vb in [hm.vb, row.vb] + [p.getViewBox() for p in plots.plots]:
        vb.setRange(xRange=(0, 1000), yRange=(0, 50), padding=0)
    assert written and all(a in shown for a in written)
    assert all(a.autoSIPrefixScale == 1.0 for a in quiet)


def test_a_compare_row_that_changed_shape_is_the_only_one_laid_out_again(qtbot, loaded, monkeypatch):
    from .test_compare_mode import compare
    rows = compare(qtbot, loaded, ["next-fit", "tlsf", "buddy"])
    qtbot.wait(10)
    laid, drawn = [], []
    real_lay, real_draw = CompareHeapMap._relayout_if_needed, CompareHeapMap._render
    monkeypatch.setattr(CompareHeapMap, "_relayout_if_needed", lambda self: (laid.append(self), real_lay(self)))
    monkeypatch.setattr(CompareHeapMap, "_render", lambda self: (drawn.append(self), real_draw(self)))
    rows[1].map.relaid.emit()           # its shape changed, the shared scale did not
    assert laid == [rows[1].map] and drawn == []        # (every row's laid out again: three)
