"""An experiment's chart (:class:`heapscope.experiments.model.Chart`) drawn
with pyqtgraph and saved as a PNG by its ImageExporter, without a window.

Bar panels are drawn sideways -- one row of bars per strategy, the names on
the left axis, where long names fit -- with one bar per series in each
row; the seed's figures are drawn in black (then greys), ours in Okabe-Ito colours.  A
log panel puts the bars on a log10 axis (pyqtgraph's BarGraphItem has no log
mode of its own, so the bars are drawn in log10 coordinates, which the axis
labels as powers of ten).  Line panels (Dowdeswell's heap against the
number of regions) draw a line per strategy with crosses where a malloc
failed, and the reference lines (RAM, heap limit) dashed.
"""

from __future__ import annotations

import math
import os

import numpy as np

from .palette import BLACK, BLUE, BLUISH_GREEN, ORANGE, REDDISH_PURPLE, SKY_BLUE, VERMILLION, YELLOW

OURS_COLOURS = [BLUE, ORANGE, BLUISH_GREEN, VERMILLION, REDDISH_PURPLE, SKY_BLUE, YELLOW, "#999999",
                "#654321", "#2F4F4F", "#8B008B", "#556B2F"]
SEED_COLOUR = BLACK
SEED_COLOURS = [BLACK, "#8C8C8C", "#C8C8C8"]

WIDTH = 1100
ROW_HEIGHT = 26          # per strategy row of a bar panel
LINE_PANEL_HEIGHT = 420
LABEL_WIDTH = 170        # the strategies' names on a bar panel's left axis
LEGEND_ROOM = 1.05       # a bar panel's x range, as a multiple of its largest bar
LINE_SYMBOLS = ["o", "s", "t", "d", "star", "p", "h", "t1"]


def _app():
    from PySide6.QtWidgets import QApplication
    app = QApplication.instance()
    if app is None:
        # a chart saved from the command line never shows a window
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
        app = QApplication([])
    return app


def _colours(chart_series) -> list[str]:
    out, ours, seeds = [], 0, 0
    for s in chart_series:
        if s.source == "seed":
            # the seed's figures in black, then greys when it has several
            out.append(SEED_COLOURS[seeds % len(SEED_COLOURS)])
            seeds += 1
        else:
            out.append(OURS_COLOURS[ours % len(OURS_COLOURS)])
            ours += 1
    return out


def _bar_panel(plot, panel) -> None:
    import pyqtgraph as pg
    n_rows = len(panel.x_labels)
    series = [s for s in panel.series if any(v is not None for v in s.values)]
    k = max(len(series), 1)
    height = 0.8 / k
    positive = [v for s in series for v in s.values if v is not None and v > 0]
    base = 0.0
    if panel.log_y and positive:
        base = math.floor(math.log10(min(positive)))
    for j, (s, colour) in enumerate(zip(series, _colours(series))):
        ys, widths = [], []
        for i, v in enumerate(s.values):
            if v is None or (panel.log_y and v <= 0):
                continue
            # row i from the top: the first strategy is drawn highest
            ys.append(n_rows - 1 - i + 0.4 - (j + 0.5) * height)
            widths.append(math.log10(v) - base if panel.log_y else v)
        if not ys:
            continue
        item = pg.BarGraphItem(x0=np.zeros(len(ys)), y=np.array(ys), height=height,
                               width=np.array(widths), brush=pg.mkBrush(colour),
                               pen=pg.mkPen("#333333", width=0.5), name=s.label)
        plot.addItem(item)
    axis = plot.getAxis("left")
    axis.setTicks([[(n_rows - 1 - i, label) for i, label in enumerate(panel.x_labels)], []])
    axis.setWidth(LABEL_WIDTH)
    # one empty row on top, where the legend goes
    plot.setYRange(-0.6, n_rows + 0.5, padding=0)
    if panel.log_y:
        bottom = plot.getAxis("bottom")
        top = max((math.log10(v) for v in positive), default=base + 1)
        ticks = [(e - base, _power(e)) for e in range(int(base), int(math.ceil(top)) + 1)]
        bottom.setTicks([ticks, []])
        plot.setXRange(0, (math.ceil(top) - base) * LEGEND_ROOM, padding=0)
    else:
        plot.setXRange(0, max(positive, default=1.0) * LEGEND_ROOM, padding=0)
    plot.setLabel("bottom", panel.y_label)
    plot.showGrid(x=True, y=False, alpha=0.3)


def _power(e: int) -> str:
    value = 10.0 ** e
    return f"{value:g}" if -3 <= e <= 5 else f"1e{e}"


def _line_panel(plot, panel) -> None:
    import pyqtgraph as pg
    from PySide6.QtCore import Qt
    xs = np.arange(len(panel.x_labels), dtype=float)
    series = list(panel.series)
    # crosses of several series at one x stand side by side, not on each other
    marking = [s for s in series if s.marks]
    for j, (s, colour) in enumerate(zip(series, _colours(series))):
        ys = np.array([np.nan if v is None else v for v in s.values], dtype=float)
        if np.isfinite(ys).any():
            # a symbol of its own per line: lines that coincide stay told apart
            plot.plot(xs, ys, pen=pg.mkPen(colour, width=2.5), symbol=LINE_SYMBOLS[j % len(LINE_SYMBOLS)],
                      symbolSize=8, symbolBrush=colour, symbolPen=colour, name=s.label, connect="finite")
        if s.marks:
            at = panel.mark_at
            if at is None:
                at = np.nanmax(ys) if np.isfinite(ys).any() else 0.0
            shift = 0.09 * (marking.index(s) - (len(marking) - 1) / 2)
            plot.plot([xs[i] + shift for i in s.marks], [at] * len(s.marks), pen=None, symbol="x",
                      symbolSize=14, symbolBrush=colour, symbolPen=pg.mkPen(colour, width=2),
                      name=None if np.isfinite(ys).any() else s.label)
    for value, label in panel.hlines:
        line = pg.InfiniteLine(value, angle=0, pen=pg.mkPen("#555555", width=1.5, style=Qt.DashLine),
                               label=label, labelOpts={"position": 0.98, "color": "#333333",
                                                       "anchors": [(1, 1), (1, 1)]})
        plot.addItem(line)
    plot.getAxis("bottom").setTicks([[(float(i), label) for i, label in enumerate(panel.x_labels)], []])
    plot.setLabel("left", panel.y_label)
    highest = max([v for s in series for v in s.values if v is not None]
                  + [v for v, _ in panel.hlines] + [1.0])
    plot.setYRange(0, highest * 1.3, padding=0)       # headroom for the legend
    if panel.x_title:
        plot.setLabel("bottom", panel.x_title)
    plot.showGrid(x=False, y=True, alpha=0.3)


def render_chart(chart):
    """The chart as a pyqtgraph GraphicsLayoutWidget, laid out and sized."""
    import pyqtgraph as pg
    _app()
    widget = pg.GraphicsLayoutWidget()
    widget.setBackground("w")
    widget.ci.addLabel(f"<b>{chart.title}</b>", row=0, col=0, size="13pt", color="#000000")
    height = 50
    for r, panel in enumerate(chart.panels, start=1):
        plot = widget.ci.addPlot(row=r, col=0)
        plot.setTitle(panel.title, color="#000000", size="11pt")
        # one line of legend across the top of the panel, above the drawing
        legend = plot.addLegend(offset=(10, 2), labelTextColor="#000000",
                                brush=pg.mkBrush(255, 255, 255, 230), pen=pg.mkPen("#999999"),
                                colCount=max(1, len(panel.series)))
        legend.setZValue(10)
        for name in ("left", "bottom"):
            axis = plot.getAxis(name)
            axis.setPen(pg.mkPen("#000000"))
            axis.setTextPen(pg.mkPen("#000000"))
        plot.setMouseEnabled(False, False)
        plot.hideButtons()
        if any(s.kind == "line" for s in panel.series):
            _line_panel(plot, panel)
            height += LINE_PANEL_HEIGHT
        else:
            _bar_panel(plot, panel)
            rows = len(panel.x_labels)
            bars = max(1, sum(1 for s in panel.series if any(v is not None for v in s.values)))
            h = max(220, rows * ROW_HEIGHT * (1 + 0.35 * (bars - 1)) + 90)
            widget.ci.layout.setRowFixedHeight(r, h)
            height += h
    widget.resize(WIDTH, int(height))
    return widget


def save_chart(chart, path: str) -> None:
    """Draw ``chart`` and write it to ``path`` as a PNG (OSError if it cannot be written)."""
    from pyqtgraph.exporters import ImageExporter
    app = _app()
    widget = render_chart(chart)
    app.processEvents()
    exporter = ImageExporter(widget.ci)
    exporter.parameters()["width"] = WIDTH
    image = exporter.export(toBytes=True)
    if image is None or image.isNull() or not image.save(path, "PNG"):
        raise OSError(f"could not write the PNG image {path}")
    widget.close()
    widget.deleteLater()
