"""Plots of the whole replay over time, with a cursor at the shown step.

Three pyqtgraph plots share the x axis (the step number): heap size and live
bytes, external fragmentation, search length.  Clicking anywhere in a plot
asks to seek to the step under the mouse (:attr:`PlotPanel.seek_requested`).
Long traces stay fast with pyqtgraph's peak downsampling and clip-to-view.
Bound to the window's :class:`~heapscope.gui.show_model.ShowModel`, the panel plots
the shown timeline, moves its cursor with the position and seeks the model.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QGraphicsItem, QVBoxLayout, QWidget

from . import axis_style, palette
from .scrubber_marks import MATCH_INK
from .subscriber import Subscriber
from .theme import Presentation


class PlotPanel(Subscriber, QWidget):
    """Heap/live, fragmentation and search-length plots in a row."""

    #: a step the user clicked on (1..n)
    seek_requested = Signal(int)

    SUBSCRIBES = {"shown_changed": "_model_shown", "step_changed": "set_position",
                  "built_changed": "_model_shown"}
    REQUESTS = {"seek_requested": "seek"}

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.n = 0
        self.presentation = Presentation()
        self.view = pg.GraphicsLayoutWidget()
        self.view.setBackground("w")
        self.view.ci.setContentsMargins(2, 2, 2, 2)
        # The titles name the curves in their colours: a legend box would hide them.
        self.heap_plot = self._plot("", "KiB", 0)
        self.frag_plot = self._plot("", "%", 1)
        self.search_plot = self._plot("", "blocks", 2)
        for col in range(3):
            self.view.ci.layout.setColumnStretchFactor(col, 1)
        self.plots = [self.heap_plot, self.frag_plot, self.search_plot]
        for p in self.plots[1:]:
            p.setXLink(self.heap_plot)

        #: (curve, colour, width at line scale 1)
        self._curves: list = []

        def curve(plot, colour, name, width=2):
            c = plot.plot([], [], pen=pg.mkPen(colour, width=width), name=name,
                          autoDownsampleFactor=CURVE_SAMPLES_PER_PIXEL)
            self._curves.append((c, colour, width))
            return c

        self.heap_curve = curve(self.heap_plot, palette.CURVE_HEAP, "heap H")
        self.live_curve = curve(self.heap_plot, palette.CURVE_LIVE, "live L")
        self.frag_nt_curve = curve(self.frag_plot, palette.CURVE_FRAG_NO_TOP, "without top", 1.5)
        self.frag_curve = curve(self.frag_plot, palette.CURVE_FRAG, "with top")
        self.search_curve = curve(self.search_plot, palette.CURVE_SEARCH, "this malloc", 1)
        self.search_mean_curve = curve(self.search_plot, palette.CURVE_SEARCH_MEAN, "running mean", 2.5)
        # Moving the cursor repaints the plot: draw the curves and the axes from
        # pixmaps kept until the data or the view changes, or every step
        # would redraw thousands of points per curve.
        for c in (self.heap_curve, self.live_curve, self.frag_curve, self.frag_nt_curve,
                  self.search_curve, self.search_mean_curve):
            c.curve.setCacheMode(QGraphicsItem.DeviceCoordinateCache)
        for p in self.plots:
            for name in ("left", "bottom", "top"):
                p.getAxis(name).setCacheMode(QGraphicsItem.DeviceCoordinateCache)
        self.cursors = []
        for p in self.plots:
            line = pg.InfiniteLine(pos=0, angle=90, movable=False,
                                   pen=pg.mkPen(palette.CURSOR, width=2, style=Qt.DashLine))
            line.setZValue(50)
            p.addItem(line, ignoreBounds=True)
            self.cursors.append(line)
        #: Find's matches, a dot on each plot's first curve (gui/find_part.py)
        self.match_dots = []
        for p in self.plots:
            dots = pg.ScatterPlotItem(size=6, pen=None, brush=pg.mkBrush(MATCH_INK))
            dots.setZValue(40)
            p.addItem(dots, ignoreBounds=True)
            self.match_dots.append(dots)
        self._series = None
        #: the measures plotted, and what the curves show of them: None (the
        #: whole span, decimated), or (first row, rows, steps a column, rows measured)
        #: of the part in view (_x_range_changed)
        self._measures = None
        self._detail = None
        self._growing = None
        self.heap_plot.sigXRangeChanged.connect(self._x_range_changed)
        self.view.scene().sigMouseClicked.connect(self._clicked)
        box = QVBoxLayout(self)
        box.setContentsMargins(0, 0, 0, 0)
        box.addWidget(self.view)
        self.apply_presentation(self.presentation)

    def titles(self, theme) -> list[str]:
        """The plots' titles: the curves' names in their colours."""
        heap = theme.contrast     # the heap curve is black on white, white on black
        return [_title(("heap H", heap), ("live L", palette.CURVE_LIVE)),
                "ext. frag. " + _title(("with top", palette.CURVE_FRAG),
                                       ("without", palette.CURVE_FRAG_NO_TOP)),
                "search " + _title(("per malloc", palette.CURVE_SEARCH),
                                   ("mean", palette.CURVE_SEARCH_MEAN))]

    def set_compact(self, compact: bool) -> None:
        """On a short screen: no "step" under the x axes (the cursor says it)."""
        for p in self.plots:
            p.getAxis("bottom").showLabel(not compact)

    def apply_presentation(self, pres) -> None:
        """Theme colours, text sizes and curve widths (presenter mode)."""
        self.presentation = pres
        theme = pres.theme
        self.view.setBackground(theme.background)
        tick_font = axis_style.tick_font(self.font(), pres)
        for p, title in zip(self.plots, self.titles(theme)):
            p.setTitle(title, color=theme.ink, size=f"{pres.pt(1.15):.1f}pt")
            # the same styling as the heap map's axes
            axis_style.style_axes([p.getAxis(name) for name in ("left", "bottom")], pres, tick_font)
            p.showGrid(x=True, y=True, alpha=0.35 if theme.name == "dark" else 0.25)
        for c, colour, width in self._curves:
            if colour == palette.CURVE_HEAP:
                colour = theme.contrast
            c.setPen(pg.mkPen(colour, width=width * pres.line_scale))
        for line in self.cursors:
            line.setPen(pg.mkPen(palette.CURSOR, width=2 * pres.line_scale, style=Qt.DashLine))

    def _plot(self, title: str, unit: str, col: int) -> pg.PlotItem:
        # no pyqtgraph context menu (it used to be built, then disabled at once)
        p = self.view.addPlot(row=0, col=col, enableMenu=False)
        p.setTitle(title, color="k", size=f"{int(self.font().pointSizeF() * 1.15)}pt")
        tick_font = QFont(self.font())
        for name in ("left", "bottom"):
            ax = p.getAxis(name)
            ax.setTextPen("k")
            ax.setPen("#888")
            ax.setStyle(tickFont=tick_font)
        p.getAxis("left").setLabel(unit, color="#222")
        p.getAxis("bottom").setLabel("step", color="#222")
        # the hidden top and right axes follow the view too: no SI prefix to work out
        axis_style.without_si_prefix([p.getAxis("top"), p.getAxis("right")])
        p.showGrid(x=True, y=True, alpha=0.25)
        p.setMouseEnabled(x=True, y=False)
        p.hideButtons()
        p.setDownsampling(auto=True, mode="peak")
        p.setClipToView(True)
        return p

    def set_measures(self, measures, total: int | None = None, coarse: bool = False) -> None:
        """Plot a whole replay (a :class:`StepMeasures`); ``total``: the steps
        the x axis spans (default: the measures'; a timeline built in the
        background has its first steps measured); ``coarse``: the curves
        kept as :class:`GrowingPeaks` of at most :data:`COARSE_POINTS` points,
        each new call adding only the rows measured since the last (while
        the timeline fills in: a million rows plotted again every few tenths
        of a second held the window for seconds).  A replay of more than
        :data:`FULL_CURVE_UPTO` steps stays so once built (setting a million
        points held the loop 0.85 s under load, and pyqtgraph drew only a
        low and a high per pixel column of them); zoomed in, the part in
        view is decimated again from the exact rows (:meth:`_x_range_changed`),
        down to every step.  A shorter one is set whole."""
        s = self._series = measures.series
        self.n = n = s.n
        span = max(total or n, 1)
        self._measures = measures
        if coarse or n > FULL_CURVE_UPTO:
            self._grow_curves(measures, span)
        else:
            self._growing = self._detail = None
            self.set_matches([])
            x = np.arange(1, n + 1, dtype=np.float64)
            for curve, (xs, ys) in zip(self._curve_list(), _curve_data(measures, x, 0, n)):
                curve.setData(xs, ys)
        for p in self.plots:
            p.enableAutoRange(axis="y")
            p.setXRange(0, span, padding=0.01)
        self.frag_plot.setYRange(0, 100, padding=0.02)

    def _curve_list(self) -> list:
        return [self.heap_curve, self.live_curve, self.frag_curve, self.frag_nt_curve,
                self.search_curve, self.search_mean_curve]

    def _grow_curves(self, measures, span: int) -> None:
        """Add the rows measured since the last call to the coarse curves."""
        grown = self._growing
        if grown is None or grown[0] is not measures.full_series or grown[1] != span or grown[2] > measures.n:
            grown = self._growing = [measures.full_series, span, 0,
                                     [GrowingPeaks(span) for _ in self._curve_list()]]
            self.set_matches([])
            self._detail = None
        a, b = grown[2], measures.n
        if b <= a:
            return
        x = np.arange(a + 1, b + 1, dtype=np.float64)
        for peaks_of, (xs, ys) in zip(grown[3], _curve_data(measures, x, a, b)):
            peaks_of.add(xs, ys)
        grown[2] = b
        if self._detail is None:
            for curve, peaks_of in zip(self._curve_list(), grown[3]):
                curve.setData(*peaks_of.points())
        else:
            self._detail = None
            self._x_range_changed()

    def _x_range_changed(self, *_) -> None:
        """Zoomed in on a decimated curve: the steps in view decimated again
        from the measures, at most :data:`COARSE_POINTS` points a curve (each
        step itself once a column is one step wide); zoomed out to where the
        whole curve's columns are as fine, that curve again."""
        grown, measures = self._growing, self._measures
        if grown is None or measures is None:
            return
        x0, x1 = self.heap_plot.vb.viewRange()[0]
        # (the columns' width from the steps in view, measured or not yet)
        a, b = int(np.floor(x0)) - 1, int(np.ceil(x1)) + 1
        width = max(1, -(-(b - a) // (COARSE_POINTS // 2)))
        a, b = max(a, 0), min(b, measures.n)
        if b <= a or width >= grown[3][0].width:
            detail = None
        else:
            a -= a % width            # columns on multiples of their width: a pan keeps them
            detail = (a, b - a, width, measures.n)
        if detail == self._detail:
            return
        self._detail = detail
        if detail is None:
            for curve, peaks_of in zip(self._curve_list(), grown[3]):
                curve.setData(*peaks_of.points())
            return
        x = np.arange(a + 1, b + 1, dtype=np.float64)
        for curve, (xs, ys) in zip(self._curve_list(), _curve_data(measures, x, a, b)):
            part = GrowingPeaks(b - a, start=a + 1, width=width)
            part.add(xs, ys)
            curve.setData(*part.points())

    def set_matches(self, steps) -> None:
        """Dot Find's matching ``steps`` on the heap, fragmentation and search
        curves (at most :data:`MAX_MATCH_DOTS`, evenly picked: the scrubber
        and the list have them all)."""
        steps = np.asarray(steps, dtype=np.int64)
        s = self._series
        if s is None or not len(steps):
            for dots in self.match_dots:
                dots.setData([], [])
            return
        if len(steps) > MAX_MATCH_DOTS:
            steps = steps[np.linspace(0, len(steps) - 1, MAX_MATCH_DOTS).astype(np.int64)]
        rows = steps[(steps >= 1) & (steps <= s.n)] - 1
        x = (rows + 1).astype(np.float64)
        for dots, y in zip(self.match_dots, (s.heap[rows] / 1024.0, 100.0 * s.external(True)[rows],
                                             s.search[rows].astype(np.float64))):
            dots.setData(x, y)

    def model_bound(self) -> None:
        self._model_shown()
        self.set_position(self.model.position)

    def _model_shown(self) -> None:
        measures = self.model.measures(self.row)
        if measures is None:
            self.clear()
        else:
            self.set_measures(measures, self.model.n, self.model.building())

    def clear(self) -> None:
        for c in (self.heap_curve, self.live_curve, self.frag_curve, self.frag_nt_curve,
                  self.search_curve, self.search_mean_curve):
            c.setData([], [])
        self._series = self._measures = None
        self._growing = self._detail = None
        self.set_matches([])
        self.n = 0

    def set_position(self, position: int) -> None:
        for line in self.cursors:
            line.setValue(position)

    def step_at(self, plot: pg.PlotItem, scene_pos) -> int:
        """The step under a scene position of ``plot`` (clamped to 0..n)."""
        x = plot.vb.mapSceneToView(scene_pos).x()
        return int(min(max(round(x), 0), self.n))

    def _clicked(self, event) -> None:
        if event.button() != Qt.LeftButton or self.n == 0:
            return
        pos = event.scenePos()
        for p in self.plots:
            if p.vb.sceneBoundingRect().contains(pos):
                self.seek_requested.emit(self.step_at(p, pos))
                event.accept()
                return


#: Find's matches are dotted on the plots at most this many times
MAX_MATCH_DOTS = 2000
#: a curve set while its timeline is built keeps at most about this many
#: points: a low and a high per column of a wide screen
COARSE_POINTS = 4096
#: a replay of more steps than this keeps its curves so once built too
#: (PlotPanel.set_measures); zooming in decimates the part in view again
FULL_CURVE_UPTO = 50_000
#: points per pixel column a curve is drawn with (pyqtgraph's peak
#: downsampling keeps the lowest and the highest of each column's steps, so
#: the curve's envelope is the same): at its default of 5 each of the six
#: curves drew ~4 000 antialiased points on a 1280-pixel window, 8-17 ms a
#: curve, 45 ms the plots' repaint after a build or a lesson's first show
#: (issue 25's stall probe); at 1, 700-800 points, 14 ms for all six
CURVE_SAMPLES_PER_PIXEL = 1.0


def _curve_data(measures, x: np.ndarray, a: int, b: int) -> list:
    """(x, y) of each curve over rows ``a..b - 1`` (``x``: their steps)."""
    s = measures.series
    mallocs = s.is_malloc[a:b] & ~s.failed[a:b]
    derived = measures.columns(a, b)        # those rows only: a million held at once cost 8 MB a column
    mean = derived["search_mean"]
    ok = np.isfinite(mean)
    return [(x, s.heap[a:b] / 1024.0), (x, s.live[a:b] / 1024.0),
            (x, 100.0 * derived["external"]), (x, 100.0 * derived["external_no_top"]),
            (x[mallocs], s.search[a:b][mallocs].astype(np.float64)), (x[ok], mean[ok])]


class GrowingPeaks:
    """A curve over steps ``start``..``start + span - 1`` cut to at most
    ``points`` points, its points added a run at a time: each of ``points //
    2`` columns of steps (or columns ``width`` steps wide) keeps the lowest
    and the highest value seen in it (what :func:`peaks` gives the whole
    curve), so adding rows costs what they are, not what the curve already
    holds."""

    def __init__(self, span: int, points: int = COARSE_POINTS, start: int = 1,
                 width: int | None = None) -> None:
        self.start = start
        self.width = width or max(1, -(-span // max(points // 2, 1)))     # steps a column
        columns = -(-span // self.width) + 1
        self.lo = np.full(columns, np.inf)
        self.hi = np.full(columns, -np.inf)

    def add(self, x: np.ndarray, y: np.ndarray) -> None:
        """Fold the points (``x`` the steps, ascending, as every curve's are)."""
        if not len(x):
            return
        last_col = len(self.lo) - 1
        first = min(max(int((x[0] - self.start) // self.width), 0), last_col)
        last = min(max(int((x[-1] - self.start) // self.width), first), last_col)
        # where each column's run of points begins: a search per column, not
        # a pass per point (ufunc.at, then a column number per point, took
        # 0.16 s and 0.06 s for a million rows)
        cols = np.arange(first, last + 1)
        begins = np.searchsorted(x, cols * self.width + self.start)
        begins[0] = 0
        ends = np.append(begins[1:], len(x))
        some = ends > begins
        cols, begins = cols[some], begins[some]
        self.lo[cols] = np.minimum(self.lo[cols], np.minimum.reduceat(y, begins))
        self.hi[cols] = np.maximum(self.hi[cols], np.maximum.reduceat(y, begins))

    def points(self) -> tuple[np.ndarray, np.ndarray]:
        """(x, y): each column with a value, its low then its high, at its first step."""
        cols = np.flatnonzero(self.hi >= self.lo)
        xs = np.repeat(cols * self.width + float(self.start), 2)
        ys = np.empty(2 * len(cols))
        ys[0::2], ys[1::2] = self.lo[cols], self.hi[cols]
        return xs, ys


def _title(*parts) -> str:
    """'<b style=color>name</b> and ...': curve names in their own colours."""
    return " / ".join(f'<b><span style="color:{colour}">{name}</span></b>' for name, colour in parts)
