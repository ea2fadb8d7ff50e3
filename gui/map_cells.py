"""The heap map's cells: one ``pg.ImageItem`` showing the cell image of
:mod:`heapscope.gui.heap_cells` through the theme's LUT (an 8-bit indexed QImage: no
per-pixel conversion), so a frame costs the same for 100 blocks or 100 000.

:class:`CellImage` paints again only the bytes a step changed when the image
holds the heap the step was edited from (the tracker says which bytes,
allocators/heap_tracker.py), and the whole heap otherwise.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QFont, QTextOption

from . import heap_cells, palette
from .theme import lut as theme_lut


#: the empty heap's words wrap at the map's width less this (pixels), at least the minimum
EMPTY_TEXT_MARGIN_PX = 24
EMPTY_TEXT_MIN_PX = 80


class CellImage:
    """The cells of the heap drawn on ``plot``, or, for an empty heap, what
    to do (in the font ``family``)."""

    def __init__(self, plot, family: str) -> None:
        self.family = family
        self.item = pg.ImageItem(axisOrder="row-major")
        self.item.setLookupTable(palette.LUT)   # all 256 entries: pyqtgraph stretches a shorter LUT over 0..255
        self.item.setZValue(0)
        plot.addItem(self.item)
        # (drawn over the cells: the same z, added after them)
        self.empty_text = pg.TextItem("empty heap: press Space to play, → to step", color="#555",
                                      anchor=(0.5, 0.5))
        self.empty_text.setFont(QFont(family, 16))
        # its lines centred, wrapped to the map's width: a compare row's map
        # beside its open structure view cut the one line at both ends
        self.empty_text.textItem.document().setDefaultTextOption(QTextOption(Qt.AlignCenter))
        plot.addItem(self.empty_text)
        self._view = plot.getViewBox() if hasattr(plot, "getViewBox") else plot
        self._view.sigResized.connect(self._wrap_empty_text)
        self.image = np.zeros((0, 0), np.uint8)
        self.scratch = heap_cells.Scratch()
        # (serial of the heap the image shows, its row bytes, bytes per cell)
        self._image_of: tuple | None = None
        #: how the cell images were made (the benchmark and the tests read them)
        self.partial_paints = 0
        self.full_paints = 0

    def apply_presentation(self, pres) -> None:
        self.item.setLookupTable(theme_lut(pres.theme))
        self.empty_text.setColor(pres.muted)
        self.empty_text.setFont(QFont(self.family, round(pres.pt(1.45))))

    def paint(self, shown, layout: heap_cells.HeapLayout, micro: bool, empty: bool) -> None:
        """Show the heap ``shown`` (a TrackedHeap) laid out by ``layout``;
        ``micro``: it is a micro-step's heap, never edited from the image;
        ``empty``: the heap has no bytes (say what to do)."""
        drawn = self._image_of
        if (not micro and drawn is not None and shown.base == drawn[0] and drawn[1] == layout.row_bytes
                and drawn[2] == layout.bytes_per_cell and self.image.shape == (layout.rows, layout.cols)):
            for lo, hi in shown.spans:
                heap_cells.repaint(self.image, shown.blocks, layout, lo, hi)
            self.partial_paints += 1
        else:
            self.image, _ = heap_cells.heap_image(shown.blocks, layout=layout, scratch=self.scratch)
            self.full_paints += 1
        self._image_of = None if micro else (shown.serial, layout.row_bytes, layout.bytes_per_cell)
        self.item.setImage(self.image, autoLevels=False)
        self.item.setRect(QRectF(0, 0, layout.row_bytes, layout.rows))
        self.empty_text.setVisible(empty)
        self.empty_text.setPos(layout.row_bytes / 2, 0.5)
        self._wrap_empty_text()

    def _wrap_empty_text(self, *_) -> None:
        """The empty heap's words as wide as the map, less a margin (pixels)."""
        if self.empty_text.isVisible():
            self.empty_text.setTextWidth(max(EMPTY_TEXT_MIN_PX, self._view.width() - EMPTY_TEXT_MARGIN_PX))

    def colour_at(self, layout: heap_cells.HeapLayout, address: int) -> tuple[int, int, int, int]:
        """RGBA drawn for the cell holding ``address``, read from the rendered QImage."""
        self.item.render()
        row, col = layout.cell_of(address)
        c = self.item.qimage.pixelColor(col, row)
        return c.red(), c.green(), c.blue(), c.alpha()
