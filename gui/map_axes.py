"""The heap map's axes: row addresses down the left, and under the map its
scale in words (the heap, a cell, a row), as long as fits.

The left axis has a fixed width, room for a 32-bit address in the tick font:
an axis that widened for long addresses and kept its width would make the
same step look different after another one.  Both axes are styled as the
plots' (:mod:`heapscope.gui.axis_style`).
"""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtGui import QFontMetrics

from . import axis_style
from .gauges import human_bytes


class AddressAxis(pg.AxisItem):
    """Left axis: the hex address where each row starts."""

    def __init__(self) -> None:
        super().__init__("left")
        self.row_bytes = 1

    def set_row_bytes(self, row_bytes: int) -> None:
        """Rows of ``row_bytes`` bytes: the tick labels are drawn again."""
        if row_bytes != self.row_bytes:
            self.row_bytes = row_bytes
            axis_style.redraw_ticks(self)

    def tickSpacing(self, minVal, maxVal, size):
        # Only whole rows have an address to show.
        return [(max(1.0, spacing), offset) for spacing, offset in super().tickSpacing(minVal, maxVal, size)]

    def tickValues(self, minVal, maxVal, size):
        # A row's address is written level with the middle of the row: a
        # label on the row's top edge was cut in half at the top of the map.
        levels = super().tickValues(minVal - 0.5, maxVal - 0.5, size)
        return [(spacing, [v + 0.5 for v in values if abs(v - round(v)) < 1e-6])
                for spacing, values in levels]

    def tickStrings(self, values, scale, spacing):
        out = []
        for v in values:
            r = round(v - 0.5)
            out.append(f"0x{r * self.row_bytes:x}" if r >= 0 and abs(v - 0.5 - r) < 1e-6 else "")
        return out


def scale_texts(layout, blocks) -> list[str]:
    """The scale line of a heap ``blocks`` laid out by ``layout``, longest first."""
    if layout is None or blocks.brk == 0:
        return ["byte offset within the row"]
    heap = f"heap {human_bytes(blocks.brk)} in {len(blocks):,} blocks"
    cell = f"1 cell = {layout.bytes_per_cell} B"
    row = f"1 row = {human_bytes(layout.row_bytes)}"
    return [f"byte offset within the row  ·  {heap}  ·  {cell}  ·  {row}",
            f"offset in the row · {heap} · {cell} · {row}",
            f"offset in the row · {cell} · {row}",
            f"{cell} · {row}"]


class MapAxes:
    """The address axis and the scale axis of ``plot``."""

    def __init__(self, plot) -> None:
        self.left: AddressAxis = plot.getAxis("left")
        self.bottom: pg.AxisItem = plot.getAxis("bottom")
        self.bottom.setLabel("byte offset within the row")
        self.left.setLabel("row address")
        # the plot's hidden top and right axes follow the view too: no SI prefix to work out
        axis_style.without_si_prefix([plot.getAxis("top"), plot.getAxis("right")])

    def apply_presentation(self, pres, base_font) -> None:
        """The theme's colours and the presentation's tick font (``base_font``
        at its size); the left axis as wide as a 32-bit address in it."""
        font = axis_style.tick_font(base_font, pres)
        axes = (self.left, self.bottom)
        axis_style.style_axes(axes, pres, font)
        for axis in axes:
            axis_style.centre_label(axis)      # centred again at its new size
        fm = QFontMetrics(font)
        # room for the title only where it is shown: a compare row hides it,
        # and its map lost 2 text heights of width to nothing (165 px of a
        # 380 px row in presenter mode)
        title = 2 * fm.height() if self.left.label.isVisible() else 0
        self.left.setWidth(fm.horizontalAdvance("0x00000000") + title + 8)

    def show_scale(self, texts, width: float) -> None:
        """The longest of ``texts`` that fits under a map ``width`` pixels wide."""
        axis = self.bottom
        metrics = QFontMetrics(axis.label.font())
        label = ""
        for label in texts:
            if metrics.horizontalAdvance(label) + 12 <= width:     # the text item's margins
                break
        if axis.labelText != label:
            axis.setLabel(label)
            # pyqtgraph centres the label only when the axis is resized: a
            # longer text set later ran off the right end
            axis_style.centre_label(axis)

    def show_row_label(self, height: float) -> None:
        """"row address" only beside a map ``height`` pixels tall enough to hold
        it whole (a short map in presenter mode cut it to "row addres")."""
        axis = self.left
        need = QFontMetrics(axis.label.font()).horizontalAdvance("row address") + 12
        show = height >= need
        if show != axis.label.isVisible():
            axis.showLabel(show)       # the axis keeps its fixed width: the map does not move
