"""The words on the heap map: the search's numbers, the count of visits left
unnumbered, the pointers' names, and where each goes on screen.

:class:`MapLabels` writes 1, 2, 3... on the blocks a search examined, in
search order (one label per block: a block examined twice reads "1·27"); a
long search is numbered at both ends with the count it left out
(:meth:`MapLabels.number`).  :meth:`MapLabels.place` puts every label on
screen: a number standing on its block, a pointer's name under its symbol,
each kept inside the view and off the labels placed before it -- moved to
the nearest free spot, with a leader line back to its block.  A number with
no free spot is left out (the block taken, placed first, keeps its number)
and counts in :attr:`MapLabels.crowded`, which the line under the map says:
before, it was drawn over the others (seven compare rows at 1280 x 720 read
"2", "3" and "4" on top of one another).  A pointer's name with no free spot
still shows, over the others: a pointer is never left unnamed.
"""

from __future__ import annotations

import functools

import pyqtgraph as pg
from PySide6.QtCore import QPointF
from PySide6.QtGui import QColor, QFont, QPainterPath

from . import palette
from .map_outlines import OutlineItem
from .theme import Presentation

#: square pixels of map per search number at most (a label is about 30 x 22 px)
LABEL_ROOM = 5000
#: font sizes (points) of the search numbers and the pointer names: read
#: from the back of a lecture room
NUMBER_POINTS = 12
POINTER_POINTS = 11


@functools.lru_cache(maxsize=512)
def label_spots(w: float, h: float) -> tuple[tuple[float, float], ...]:
    """Offsets to try for a label ``w`` x ``h`` pixels, nearest first: up and
    down by rows of labels, then beside."""
    # labels come in a few sizes: sorting 65 offsets for every label of every
    # frame cost compare mode's seven maps 3 ms a frame
    spots = [(i * w, j * h) for i in range(-2, 3) for j in range(-6, 7)]
    spots.sort(key=lambda d: (abs(d[0]) / w) * 2.5 + abs(d[1]) / h)
    return tuple(spots)


def label_budget(width: float, height: float, pres: Presentation) -> int:
    """How many search numbers a map ``width`` x ``height`` pixels has room
    for (bigger numbers in presenter mode take more room each)."""
    room = LABEL_ROOM * pres.text_scale ** 2
    return int(width * height / room) if width > 50 else 40


def search_words(marks, crowded: int) -> str:
    """What a search's numbers on the map do not say, in words (the line
    under the map says it): the visits left unnumbered, the numbers crowded."""
    n, skipped = len(marks.visits), marks.skipped
    parts = []
    if skipped:
        last = len(marks.numbered) - marks.first
        parts.append(f"{n:,} blocks searched: 1–{marks.first} and {n - last + 1:,}–{n:,} "
                     f"numbered, {skipped:,} in between not")
    if crowded:
        parts.append(f"{crowded} number{'s' if crowded > 1 else ''} left out for room: zoom in (wheel) to read them")
    return "; ".join(parts)


def _numbers_of(label: pg.TextItem) -> list[str]:
    return label.textItem.toPlainText().split("·")


class MapLabels:
    """The map's labels on ``plot``, in the font ``family``."""

    def __init__(self, plot, family: str) -> None:
        self.plot = plot
        self.family = family
        self.presentation = Presentation()
        #: (label, role, points) of every label, for the presentation
        self._styled: list[tuple[pg.TextItem, str, int]] = []
        #: the number labels, made as a search needs them (hidden when unused)
        self.numbers: list[pg.TextItem] = []
        #: what each shown number label numbers: (first visit index, addr, size)
        self.numbered_blocks: list[tuple[int, int, int]] = []
        self.skip = self.text_item("note", NUMBER_POINTS - 1, z=21)
        self.pointer_names: list[pg.TextItem] = []
        #: from a moved number to its block
        self.leader = OutlineItem(palette.BLACK, 1, z=19.5, theme_colour=lambda t: t.contrast)
        plot.addItem(self.leader)
        # (label, anchor point in view coordinates, kind) of the labels on screen
        self.number_places: list = []
        self.pointer_places: list = []
        #: numbers left out at this zoom for want of room
        self.crowded = 0
        #: the label budget the shown numbers were chosen for
        self.numbered_for = -1

    # ---------------------------------------------------------------- style
    def text_item(self, role: str, points: int, z: float = 20) -> pg.TextItem:
        """A label on the map: a search number ("number", black on orange), a
        pointer's name ("pointer") or a note ("note"), styled by the
        presentation."""
        label = pg.TextItem("", anchor=(0, 0))
        label.setZValue(z)
        label.hide()
        self.plot.addItem(label)
        self._styled.append((label, role, points))
        self._dress(label, role, points)
        return label

    def _dress(self, label: pg.TextItem, role: str, points: int) -> None:
        pres = self.presentation
        theme = pres.theme
        if role == "number":
            # black on orange in both themes: the search's own colour
            ink, fill, border = palette.BLACK, QColor(palette.SEARCHED), palette.BLACK
        else:
            ink, fill, border = theme.ink, QColor(theme.background), theme.contrast
            if role == "pointer":
                fill.setAlpha(0xDD)
        label.setColor(ink)
        label.fill = pg.mkBrush(fill)
        label.border = pg.mkPen(border, width=pres.line_scale)
        label.setFont(QFont(self.family, round(points * pres.text_scale), QFont.Bold))
        label.update()

    def apply_presentation(self, pres: Presentation) -> None:
        """Text sizes, colours and the leader's width."""
        self.presentation = pres
        self.leader.apply_presentation(pres)
        for label, role, points in self._styled:
            self._dress(label, role, points)

    # -------------------------------------------------------------- numbers
    def number(self, marks, budget: int, block_top) -> None:
        """Number at most ``budget`` of the visits of ``marks`` (a
        :class:`~heapscope.gui.step_marks.StepMarks`, renumbered for it), each label
        standing on its block (``block_top(addr, size)``: view coordinates);
        the count left out under the first block left without a number."""
        self.numbered_for = budget
        marks.renumber(budget)
        by_block: dict[tuple[int, int], list[int]] = {}
        for i in marks.numbered:
            by_block.setdefault(marks.visits[i], []).append(i + 1)
        groups = sorted(by_block.items(), key=lambda kv: kv[1][0])
        while len(self.numbers) < len(groups):
            self.numbers.append(self.text_item("number", NUMBER_POINTS))
        self.numbered_blocks = []
        placed = []
        for i, label in enumerate(self.numbers):
            if i < len(groups):
                (addr, size), numbers = groups[i]
                label.setText("·".join(map(str, numbers)))
                label.show()
                self.numbered_blocks.append((numbers[0] - 1, addr, size))
                placed.append((label, block_top(addr, size), "number"))
            else:
                label.hide()
        skipped = marks.skipped
        if skipped:
            self.skip.setText(f"+{skipped:,} not numbered")
            self.skip.show()
            # under the first block left without a number
            placed.append((self.skip, block_top(*marks.skipped_at()), "below"))
        else:
            self.skip.hide()
        # the block taken (the last visit) gets its number first, should room run out
        last = str(len(marks.visits))
        placed.sort(key=lambda q: last not in _numbers_of(q[0]))
        self.number_places = placed

    def newest_numbers(self, marks) -> list[pg.TextItem]:
        """The shown label carrying the newest visit's number when a
        micro-step stops at a Visit (it fades in)."""
        if type(marks.current_event).__name__ != "Visit":
            return []
        last = str(len(marks.visits))
        return [label for label, _ in zip(self.numbers, self.numbered_blocks)
                if label.isVisible() and last in _numbers_of(label)]

    def name_pointers(self, named) -> None:
        """A label under each pointer's symbol: ``named`` is (name, view point)."""
        while len(self.pointer_names) < len(named):
            self.pointer_names.append(self.text_item("pointer", POINTER_POINTS, z=19))
        placed = []
        for i, label in enumerate(self.pointer_names):
            if i < len(named):
                name, point = named[i]
                label.setText(name)
                label.show()
                placed.append((label, point, "pointer"))
            else:
                label.hide()
        self.pointer_places = placed

    # ------------------------------------------------------------ placement
    def place(self, vb, occupied, half: float) -> None:
        """Put the labels on screen in the view box ``vb``, off the scene
        rectangles ``occupied`` (x0, y0, x1, y1: the pointers' symbols,
        ``half`` pixels round their points, and what the map keeps clear).
        A label keeps inside the view (a number on the first row is not
        drawn above the map) and off the labels placed before it: moved to
        the nearest free spot around its block, with a leader line to it."""
        view = vb.sceneBoundingRect()
        vl, vt, vr, vb_ = view.left() + 1, view.top() + 1, view.right() - 1, view.bottom() - 1
        occupied = list(occupied)

        def free(r) -> bool:
            x0, y0, x1, y1 = r
            for a0, b0, a1, b1 in occupied:
                if x0 < a1 and a0 < x1 and y0 < b1 and b0 < y1:
                    return False
            return True

        leaders = QPainterPath()
        self.crowded = 0
        for label, (x, y), kind in self.pointer_places + self.number_places:
            label.show()            # one left out at another zoom may have room now
            size = label.boundingRect()
            w, h = size.width(), size.height()
            p = vb.mapViewToScene(QPointF(x, y))
            if kind == "number":                    # standing on the block's top edge
                left, top = p.x() - w / 2, p.y() - h - 1
            elif kind == "below":
                left, top = p.x() - w / 2, p.y() + 2 * h
            else:                                   # under a pointer's symbol
                left, top = p.x() - w / 2, p.y() + half + 1
            inside = view.contains(p)
            first = rect = on_block = None
            for dx, dy in label_spots(float(w + 2), float(h + 2)):
                x0, y0 = left + dx, top + dy
                if inside:                          # keep it in the view
                    x0 = min(max(x0, vl), vr - w)
                    y0 = min(max(y0, vt), vb_ - h)
                r = (x0, y0, x0 + w, y0 + h)
                first = first or r
                if free(r):
                    # a number covers the top of its own block only if no
                    # other spot is free (a block in the map's first row
                    # had its number pushed down onto it)
                    if kind == "number" and x0 < p.x() < x0 + w and y0 < p.y() + 3 and p.y() < y0 + h:
                        on_block = on_block or r
                        continue
                    rect = r
                    break
            rect = rect or on_block
            if rect is None and kind != "pointer":
                label.hide()            # the line under the map says what it said
                self.crowded += kind == "number"
                continue
            rect = rect or first
            occupied.append(rect)
            label.setPos(vb.mapSceneToView(QPointF(rect[0], rect[1])))
            if kind == "number" and not (rect[0] <= p.x() <= rect[2] and rect[1] - 2 <= p.y() <= rect[3] + 2):
                # moved off its block: a line leads from the block to it
                end = QPointF(min(max(p.x(), rect[0]), rect[2]), rect[3] if p.y() > rect[3] else rect[1])
                leaders.moveTo(vb.mapSceneToView(p))
                leaders.lineTo(vb.mapSceneToView(end))
        self.leader.setPath(leaders)
