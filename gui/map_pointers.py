"""The policy's pointers on the heap map, where the step left them.

:class:`PointerLayer` draws every search pointer (K&R's rover, Kruse's head:
where the next search starts) as an orange triangle under its block's first
byte, every marker (Vmbest's wilderness) as a green diamond, all of them in
two ``pg.ScatterPlotItem``s whatever their number, and names each one (a
label of :class:`~heapscope.gui.map_labels.MapLabels`).  A pointer at a sentinel
outside the heap (K&R's ``&base``) has no block to point at: a note at the
map's corner says it in words, in a corner where it hides no pointer.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRect
from PySide6.QtWidgets import QLabel

from . import heap_cells, palette
from .map_legend import MARKER_COLOUR
from .map_marks import fit_width

#: pointer roles (docs/structure.md)
SEARCH, MARKER = "search", "marker"


def sentinel_words(pointer, list_empty: bool) -> str:
    """What a pointer at no block means, in words."""
    if pointer.name == "rover":
        return (f"{pointer.name} = &base (K&R's list sentinel, outside the heap): the next search "
                f"starts at the lowest free block")
    # (a pointer at nothing says the list is empty only when it is:
    # dlmalloc's last_remainder is at no block beside full bins)
    return f"{pointer.name}: at no block" + (" (the free list is empty)" if list_empty else "")


class PointerLayer:
    """The pointers' symbols on ``plot``, their names in ``labels``, and
    the note on a pointer at no block floating over ``note_parent``."""

    def __init__(self, plot, note_parent, labels) -> None:
        self.labels = labels
        # under the block's first byte, pointing up at it
        self.search = pg.ScatterPlotItem(size=18, symbol="t1", pen=pg.mkPen("k", width=1.5),
                                         brush=pg.mkBrush(palette.SEARCHED))
        self.search.setZValue(14)
        plot.addItem(self.search)
        self.markers = pg.ScatterPlotItem(size=16, symbol="d", pen=pg.mkPen("k", width=1.5),
                                          brush=pg.mkBrush(MARKER_COLOUR))
        self.markers.setZValue(14)
        plot.addItem(self.markers)
        self.note = QLabel(note_parent)
        self.note.setStyleSheet(f"background: {palette.SEARCHED}; color: black; padding: 3px 8px;"
                                "border: 1px solid black; border-radius: 3px; font-weight: bold;")
        self.note.hide()
        #: the note's words when the step has a pointer at no block ("" when not)
        self.note_words = ""
        #: the note is folded into the line under the map: every corner covered data
        self.note_folded = False
        #: half a symbol in pixels (labels keep off it)
        self.half = 9.0

    def apply_presentation(self, pres) -> None:
        """Symbol sizes and outline, the note's text size."""
        k = pres.text_scale
        self.half = 9 * k
        pen = pg.mkPen(pres.theme.contrast, width=1.5 * pres.line_scale)
        self.search.setSize(18 * k)
        self.search.setPen(pen)
        self.markers.setSize(16 * k)
        self.markers.setPen(pen)
        self.note.setStyleSheet(
            f"background: {palette.SEARCHED}; color: black; padding: 3px 8px; border: 1px solid black;"
            f"border-radius: 3px; font-weight: bold; font-size: {pres.pt():.1f}pt;")
        self.note.adjustSize()

    def show(self, pointers, layout: heap_cells.HeapLayout, blocks: heap_cells.BlockArrays) -> None:
        """Draw ``pointers`` (:class:`~heapscope.allocators.heap_edits.Pointer`) on a heap
        laid out by ``layout``; ``blocks`` says whether a list is empty."""
        search, markers, at_sentinel = [], [], []
        for p in pointers:
            if p.addr is None or p.addr < 0:
                if p.role != MARKER:           # a marker at nothing marks nothing
                    at_sentinel.append(p)
            elif p.role == MARKER:
                markers.append(p)
            else:
                search.append(p)
        self.search.setData(pos=[(x, y + 1) for x, y in (layout.point_of(p.addr) for p in search)])
        self.markers.setData(pos=[(x, y + 1) for x, y in (layout.point_of(p.addr) for p in markers)])
        named = []
        for p in search + markers:
            x, y = layout.point_of(p.addr)
            named.append((p.name, (x, y + 1)))
        self.labels.name_pointers(named)
        if at_sentinel:
            empty = not np.any(blocks.state == heap_cells.STATE_FREE)
            self.note_words = " · ".join(sentinel_words(p, empty) for p in at_sentinel)
            self.note.setText(self.note_words)
            self.note.setVisible(not self.note_folded)
        else:
            self.note_words = ""
            self.note_folded = False
            self.note.hide()

    def symbol_points(self) -> list[tuple[float, float]]:
        """The symbols' points in view coordinates."""
        points = []
        for item in (self.search, self.markers):
            xs, ys = item.getData()
            points.extend(zip(xs, ys))
        return points

    def symbol_squares(self, vb) -> list[tuple[float, float, float, float]]:
        """The symbols in scene coordinates (x0, y0, x1, y1): labels keep off them."""
        half, squares = self.half, []
        for x, y in self.symbol_points():
            p = vb.mapViewToScene(QPointF(x, y))
            squares.append((p.x() - half, p.y() - half, p.x() + half, p.y() + half))
        return squares

    def rects(self, widget, vb) -> list[QRect]:
        """The symbols and names in ``widget``'s pixels (the plot widget)."""
        rects = []
        for x, y in self.symbol_points():
            p = widget.mapFromScene(vb.mapViewToScene(QPointF(x, y)))
            rects.append(QRect(p.x() - 10, p.y() - 10, 20, 20))
        for label in self.labels.pointer_names:
            if label.isVisible():
                rects.append(widget.mapFromScene(label.sceneBoundingRect()).boundingRect())
        return rects

    def place_note(self, area: QRect, widget, vb, data=()) -> bool:
        """The note in ``area`` (the map's cells in ``widget``'s pixels):
        bottom left, unless it would hide a pointer drawn there (dlmalloc's
        top, the wilderness: the end of the heap, the bottom row); then the
        other corners; its words wrapped to the map's width.  A corner where
        it would cover ``data`` (the heap's bytes, the labels on the map, in
        ``widget``'s pixels) or a pointer is not taken: with no such corner
        the note folds into the line under the map (:attr:`note_folded`;
        issue 24: dlmalloc's "last_remainder: at no block" lay over the
        heap's last rows).  Returns whether the fold changed."""
        note = self.note
        was = self.note_folded
        if not self.note_words:
            self.note_folded = False
            return was
        note.show()
        fit_width(note, area.width() - 12)
        w, h = note.width(), note.height()
        r = area
        corners = [(r.left() + 6, r.bottom() - h - 6), (r.right() - w - 6, r.bottom() - h - 6),
                   (r.left() + 6, r.top() + 6), (r.right() - w - 6, r.top() + 6)]
        avoid = self.rects(widget, vb) + list(data)
        for x, y in corners:
            if r.contains(QRect(x, y, w, h)) and not any(QRect(x, y, w, h).intersects(q) for q in avoid):
                note.move(x, y)
                self.note_folded = False
                break
        else:
            note.move(*corners[0])
            self.note_folded = True
        note.setVisible(not self.note_folded)
        return was != self.note_folded
