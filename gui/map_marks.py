"""What the shown step did, drawn over the heap map's cells.

:class:`StepMarksLayer` draws the :class:`~heapscope.gui.step_marks.StepMarks` of a
step (or of its first events, a micro-step): the blocks the search examined
(outlined in search order's colour; a long search filled instead), the
block placed, the blocks freed and what they joined, the bytes the heap
grew by, a thick line where a block was cut, the blocks the current event
names (ringed), and a request that failed (hatched past the break, with a
banner that flashes).  Each kind of mark is one
:class:`~heapscope.gui.map_outlines.OutlineItem` whatever the number of blocks it
outlines.  The search's
numbers are labels (:mod:`heapscope.gui.map_labels`).
"""

from __future__ import annotations

from PySide6.QtCore import QPointF, QRect, QRectF, Qt, QTimer
from PySide6.QtGui import QBrush, QColor, QPainterPath
from PySide6.QtWidgets import QLabel

from . import palette
from .map_outlines import OutlineItem, outline_path
from .step_marks import StepMarks
from .theme import LIGHT

#: a search longer than this is lit by filling its blocks rather than outlining them
MANY_VISITS = 200

#: the events whose mark fades in when a micro-step reaches them, by the mark
#: they draw (a cut slides in instead: :meth:`StepMarksLayer.draw_cuts`)
FRESH_MARK = {"Placed": "placed", "Released": "released", "Coalesce": "released",
              "BuddyMerge": "released", "Grow": "grown"}
CUT_EVENTS = ("Split", "BuddySplit")


def current_colour(theme) -> QColor:
    """The ring of the event a micro-step stops at: the theme's contrast, see-through."""
    colour = QColor(theme.contrast)
    colour.setAlpha(90)
    return colour


def fit_width(label: QLabel, width: int) -> None:
    """Size ``label`` to its text on one line, or, when that is wider than
    ``width``, to ``width`` with the words wrapped."""
    if label.isHidden():
        return
    label.setWordWrap(False)
    label.adjustSize()
    if label.width() > width > 40:
        label.setWordWrap(True)
        label.resize(width, label.heightForWidth(width))


def heap_rects(widget, vb, brk: int, rb: int) -> list[QRect]:
    """The heap's bytes below the break ``brk`` on a map of rows of ``rb``
    bytes, in ``widget``'s pixels (its whole rows and the part of the last one)."""
    rows, rest = divmod(brk, max(rb, 1))
    out = []
    for a, b, c, d in ((0, 0, rb, rows), (0, rows, rest, rows + 1)):
        if c > a and d > b:
            r = QRectF(vb.mapViewToScene(QPointF(a, b)), vb.mapViewToScene(QPointF(c, d))).normalized()
            out.append(widget.mapFromScene(r).boundingRect().intersected(
                widget.mapFromScene(vb.sceneBoundingRect()).boundingRect()))
    return [r for r in out if not r.isEmpty()]


def folded_notes(layer, pointers) -> list[str]:
    """The words of the notes that float over the map folded into the line
    under it because every place for them covered the heap's bytes or a
    label: the failure banner's (``layer``), the note on a pointer at no block."""
    out = []
    if layer.banner_folded and layer.marks.failed:
        out.append(layer._banner_words[0])
    if pointers.note_folded and pointers.note_words:
        out.append(pointers.note_words)
    return out


def label_rects(widget, labels, request=None) -> list[QRect]:
    """The map's labels shown (the search's numbers, "+N not numbered", the
    pointers' names, a compare row's ``request`` id), in ``widget``'s pixels."""
    items = labels.numbers + [labels.skip] + labels.pointer_names + [request]
    return [widget.mapFromScene(i.sceneBoundingRect()).boundingRect()
            for i in items if i is not None and i.isVisible()]


def _contrast(theme):
    return theme.contrast


class StepMarksLayer:
    """The marks of the shown step on ``plot`` (a pyqtgraph PlotItem), and
    the failure banner floating over ``banner_parent`` (the plot widget)."""

    def __init__(self, plot, banner_parent) -> None:
        self.current = OutlineItem(current_colour(LIGHT), 10, z=8, theme_colour=current_colour)
        self.searched = OutlineItem(palette.SEARCHED, 2.5, z=10)
        self.grown = OutlineItem(palette.GROWN, 3, Qt.DotLine, z=10.5, theme_colour=lambda t: t.grown)
        self.released = OutlineItem(palette.RELEASED, 3, Qt.DashLine, z=11, theme_colour=_contrast)
        placed_fill = QColor(palette.PLACED)
        placed_fill.setAlpha(40)
        self.placed = OutlineItem(palette.PLACED, 4, brush=QBrush(placed_fill), z=12)
        self.cut = OutlineItem(palette.BLACK, 4, z=12.5, theme_colour=_contrast)
        self.failed = OutlineItem(palette.FAILED, 3, brush=QBrush(QColor(palette.FAILED), Qt.BDiagPattern),
                                  z=13)
        for item in self.items():
            plot.addItem(item)
        self.marks = StepMarks()
        #: rows a failure's hatching needs past the heap's last row
        self.extra_rows = 0
        self._searched_filled: bool | None = None
        self._line_scale = 1.0
        # The failure banner floats over the map (a child widget, not in a
        # layout, so showing it never moves the map).
        self.banner = QLabel(banner_parent)
        self.banner.setStyleSheet(f"background: {palette.FAILED}; color: white; padding: 6px 12px;"
                                  "border-radius: 4px; font-weight: bold;")
        self.banner.hide()
        self._flash = QTimer(self.banner)
        self._flash.setInterval(160)
        self._flash.timeout.connect(self._flash_tick)
        self._flash_left = 0
        #: the banner's words, whole and short
        self._banner_words = ("", "")
        #: a map whose line under it says a failure (a compare row's outcome,
        #: a lone map's line with the banner's words) folds its banner into
        #: that line rather than cover the heap's bytes
        self.banner_may_fold = True
        #: the banner is folded away for the shown failure
        self.banner_folded = False
        self._heap_end = (0, 1)     # (break, row bytes) of the failed step

    def items(self) -> list[OutlineItem]:
        return [self.current, self.searched, self.grown, self.released, self.placed, self.cut, self.failed]

    def apply_presentation(self, pres) -> None:
        """Outline widths and colours, and the banner's text size."""
        self._line_scale = pres.line_scale
        for item in self.items():
            item.apply_presentation(pres)
        self._searched_filled = None        # the searched outline's width: again
        self.style_searched(len(self.marks.visits))
        self.banner.setStyleSheet(f"background: {palette.FAILED}; color: white; padding: 6px 12px;"
                                  f"border-radius: 4px; font-weight: bold; font-size: {pres.pt(1.1):.1f}pt;")

    def show(self, marks: StepMarks, row_bytes: int, block_range) -> None:
        """Draw ``marks`` in rows of ``row_bytes``; ``block_range(addr)`` is
        the (addr, size) of the shown block holding an address, or None."""
        self.marks = marks
        self.style_searched(len(marks.visits))
        self.searched.show_ranges(marks.visits, row_bytes)
        self.placed.show_ranges(marks.placed, row_bytes)
        self.released.show_ranges(marks.released, row_bytes)
        self.grown.show_ranges(marks.grown, row_bytes)
        self.draw_cuts(row_bytes)
        ranges = []
        for a in marks.current:
            r = block_range(a)
            if r is not None and r not in ranges:
                ranges.append(r)
        self.current.show_ranges(ranges, row_bytes)

    def fresh_items(self) -> tuple[list, bool]:
        """What the current event (a micro-step's) adds: the marks that fade
        in, and whether its cut slides in."""
        ev = self.marks.current_event
        if ev is None:
            return [], False
        name = type(ev).__name__
        fresh = [self.current]
        if name in FRESH_MARK:
            fresh.append(getattr(self, FRESH_MARK[name]))
        return fresh, name in CUT_EVENTS

    def style_searched(self, visits: int) -> None:
        """A search of many blocks (K&R's free walking a ring of thousands) is
        lit by filling its blocks: thick outlines of thousands of blocks, each
        a pixel or two wide, cost 17 ms a frame to paint and read no better."""
        many = visits > MANY_VISITS
        if many == self._searched_filled:
            return
        self._searched_filled = many
        self.searched.set_width((1.0 if many else 2.5) * self._line_scale)
        fill = QColor(palette.SEARCHED)
        fill.setAlpha(150)
        self.searched.setBrush(QBrush(fill) if many else QBrush(Qt.NoBrush))

    def draw_cuts(self, row_bytes: int, newest: float = 1.0) -> None:
        """A thick line across the row at each cut; the newest one drawn to
        ``newest`` of its length (it slides down from the top of its row
        during a transition)."""
        path = QPainterPath()
        cuts = self.marks.cuts
        for i, addr in enumerate(cuts):
            x, y = addr % row_bytes, addr // row_bytes
            grow = newest if i == len(cuts) - 1 else 1.0
            path.moveTo(QPointF(x, y - 0.1))
            path.lineTo(QPointF(x, y - 0.1 + 1.2 * grow))
        self.cut.setPath(path)

    # ------------------------------------------------------------ a failure
    def show_failure(self, record, brk: int, row_bytes: int, rows: int) -> bool:
        """Hatch the bytes a failed request would have needed past the break
        ``brk`` and say it in the banner (flashing when it appears); True
        when the step failed."""
        failed = self.marks.failed
        self.extra_rows = 0
        if not failed:
            self.failed.clear()
            self.failed.setVisible(True)
            self.banner.hide()
            self.banner_folded = False
            self._flash.stop()
            return False
        # Where the heap would have had to grow: right after the break.
        self.failed.setPath(outline_path([(brk, failed)], row_bytes))
        self.extra_rows = max(0, -(-(brk + failed) // row_bytes) - rows)
        kind = getattr(record, "kind", "malloc")
        self._banner_words = (f"✗ {kind}({record.request}) failed: no block fits "
                              f"and the heap cannot grow by {failed:,} bytes", f"✗ {kind}({record.request}) failed")
        self.banner.setText(self._banner_words[0])
        self._heap_end = (brk, row_bytes)
        if not self.banner.isVisible() and not self.banner_folded:
            self.banner.show()
            self._flash_left = 6
            self._flash.start()
        return True

    def place_banner(self, widget, vb) -> None:
        """The banner over the map in ``widget`` (the plot widget, ``vb`` its
        view box), its words wrapped rather than cut off at the map's edge:
        at the top in the middle, else at another corner or edge of the map,
        the first that leaves the hatched bytes the request needed in view
        (else the one covering least of them).  A small heap drawn at compare
        mode's common scale has its break in the rows at the top, and the
        banner hid the failure it names.  A map that may fold it
        (:attr:`banner_may_fold`: a compare row, whose line under the map
        says "-> NULL (out of memory...)") hides it where every place
        covers the heap's bytes or the hatch; the hatch still flashes."""
        width = widget.width()
        view = widget.mapFromScene(vb.sceneBoundingRect()).boundingRect()
        for words in self._banner_words:
            # a short map (a compare row) gets the short words: the long ones
            # wrapped to most of its height (the line under it says the rest)
            self.banner.setText(words)
            fit_width(self.banner, width - 16)
            if self.banner.height() <= 0.4 * view.height():
                break
        w, h = self.banner.width(), self.banner.height()
        hatch = widget.mapFromScene(self.failed.mapRectToScene(self.failed.path().boundingRect())).boundingRect()
        hatch = hatch.intersected(view) if not self.failed.path().isEmpty() else QRect()
        xs = [max(0, (width - w) // 2), max(0, view.left() + 4), max(0, min(view.right() - w - 4, width - w))]
        ys = [8, max(8, view.bottom() - h - 4)]

        def covered(x: int, y: int) -> int:
            common = QRect(x, y, w, h).intersected(hatch)
            return 0 if common.isEmpty() else common.width() * common.height()

        spots = [(x, y) for y in ys for x in xs]
        x, y = min(spots, key=lambda p: (covered(*p), spots.index(p)))
        self.banner.move(x, y)
        if self.banner_may_fold and not self.failed.path().isEmpty():
            # bsd-buckets' row at step 45 in presenter mode (48 KiB heap
            # limit): the banner, wider than the map, lay over its first rows
            heap = self._heap_rects(widget, vb)
            over = any(QRect(x, y, w, h).intersects(r) for r in heap) or covered(x, y) > 0
            if over != self.banner_folded:
                self.banner_folded = over
                self.banner.setVisible(not over)

    def _heap_rects(self, widget, vb) -> list[QRect]:
        return heap_rects(widget, vb, *self._heap_end)

    def hatch_rects(self) -> list[tuple[float, float, float, float]]:
        """The failed request's hatch past the break as a scene rectangle
        (x0, y0, x1, y1), or none: a mark, which no label covers (next fit's
        "rover" lay on it at step 95 of a 48 KiB heap)."""
        if self.failed.path().isEmpty():
            return []
        r = self.failed.mapRectToScene(self.failed.path().boundingRect())
        return [(r.left(), r.top(), r.right(), r.bottom())]

    def hold_still(self) -> None:
        """End a flash now, the hatch shown (a picture of the step)."""
        if self._flash.isActive():
            self._flash.stop()
            self._flash_left = 0
            self.failed.setVisible(True)

    def _flash_tick(self) -> None:
        self._flash_left -= 1
        self.failed.setVisible(self._flash_left % 2 == 0)
        if self._flash_left <= 0:
            self.failed.setVisible(True)
            self._flash.stop()
