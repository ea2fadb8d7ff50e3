"""Outlines over the heap map's cells: byte ranges turned into one
``QPainterPath`` (:func:`outline_path`) and the path item that draws them
(:class:`OutlineItem`).

Each mark of the map (the blocks a search examined, the block placed, the
selection ring, the lines between blocks...) is one :class:`OutlineItem`
whatever the number of blocks it outlines: as pyqtgraph's own items do, many
shapes are built in numpy and handed to Qt as one path
(``pg.arrayToQPath``).  Coordinates are the map's: x the byte offset within
a row, y the row (gui/heap_map.py).
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QPainterPath, QPen
from PySide6.QtWidgets import QGraphicsPathItem

from . import heap_cells

#: past this many ranges the rectangles are built in numpy (a K&R free walking the ring)
MANY_RANGES = 32

#: the corners of a rectangle, closed, as offsets in units of its width and height
_CORNERS_X = np.array([0.0, 1.0, 1.0, 0.0, 0.0])
_CORNERS_Y = np.array([0.0, 0.0, 1.0, 1.0, 0.0])
_CONNECT = np.array([1, 1, 1, 1, 0], dtype=np.int32)


def outline_path(ranges, row_bytes: int) -> QPainterPath:
    """The outline of byte ranges ``(addr, size)``: at most three rectangles
    each (their piece of the first row, the full rows, the piece of the last
    row)."""
    if len(ranges) > MANY_RANGES:
        path = _many_rects(ranges, row_bytes)
    else:
        path = QPainterPath()
        for addr, size in ranges:
            for x, y, w, h in heap_cells.range_rects(addr, size, row_bytes):
                path.addRect(QRectF(x, y, w, h))
    path.setFillRule(Qt.WindingFill)      # a block outlined twice is still inside its outline
    return path


def _many_rects(ranges, row_bytes: int) -> QPainterPath:
    """:func:`outline_path` for thousands of ranges: the rectangles built in
    numpy and handed to Qt in one piece."""
    a = np.array(ranges, dtype=np.int64).reshape(-1, 2)
    addr, end = a[:, 0], a[:, 0] + a[:, 1]
    r0, x0 = np.divmod(addr, row_bytes)
    r1, x1 = np.divmod(end, row_bytes)
    one_row = (r0 == r1) & (end > addr)
    rects = [np.stack([x0[one_row], r0[one_row], (x1 - x0)[one_row], np.ones(one_row.sum(), np.int64)], 1)]
    for addr_i, size_i in a[~one_row].tolist():
        if size_i > 0:
            rects.append(np.array(heap_cells.range_rects(addr_i, size_i, row_bytes), np.int64).reshape(-1, 4))
    r = np.concatenate(rects).astype(np.float64)
    xs = (r[:, 0:1] + r[:, 2:3] * _CORNERS_X).ravel()
    ys = (r[:, 1:2] + r[:, 3:4] * _CORNERS_Y).ravel()
    return pg.arrayToQPath(xs, ys, connect=np.tile(_CONNECT, len(r)))


class OutlineItem(QGraphicsPathItem):
    """A path drawn with a pen as wide in pixels at every zoom (cosmetic),
    ``width`` pixels at line scale 1.  Presenter mode thickens it
    (:meth:`apply_presentation`) unless it is ``thin`` (the lines between
    blocks: thick ones would eat small blocks); ``theme_colour(theme)``,
    when given, gives its colour in each theme (black lines turn white on
    dark)."""

    def __init__(self, colour, width: float, style=Qt.SolidLine, brush=None, z: float = 10,
                 theme_colour=None, thin: bool = False) -> None:
        super().__init__()
        self.base_width = width
        self.theme_colour = theme_colour
        self.thin = thin
        pen = QPen(QColor(colour))
        pen.setWidthF(width)
        pen.setCosmetic(True)          # width in pixels whatever the zoom
        pen.setJoinStyle(Qt.MiterJoin)
        pen.setStyle(style)
        self.setPen(pen)
        self.setBrush(brush or QBrush(Qt.NoBrush))
        self.setZValue(z)

    def apply_presentation(self, pres) -> None:
        """The theme's colour (if it has one per theme) and the presentation's line width."""
        pen = QPen(self.pen())
        if self.theme_colour is not None:
            pen.setColor(QColor(self.theme_colour(pres.theme)))
        pen.setWidthF(self.base_width * (1.0 if self.thin else pres.line_scale))
        self.setPen(pen)

    def set_width(self, width: float) -> None:
        """The pen's width in pixels now (not scaled again)."""
        pen = self.pen()
        pen.setWidthF(width)
        self.setPen(pen)

    def show_ranges(self, ranges, row_bytes: int) -> None:
        """Outline the byte ranges ``(addr, size)``."""
        self.setPath(outline_path(ranges, row_bytes))

    def clear(self) -> None:
        self.setPath(QPainterPath())
