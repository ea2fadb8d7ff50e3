"""The words on the heap map: the search's numbers, the count of visits left
unnumbered, the pointers' names, and where each goes on screen.

:class:`MapLabels` writes 1, 2, 3... beside the blocks a search examined, in
search order (one label per block: a block examined twice reads "1·27"); a
long search is numbered at both ends with the count it left out
(:meth:`MapLabels.number`).  :meth:`MapLabels.place` puts every label on
screen: a number over its block's top edge, a pointer's name under its
symbol, each kept inside the view, off the labels placed before it and off
every block a shown number points at and the step placed or freed
(:meth:`MapLabels.kept_clear`; issue 24, "no label over data": a number
stood on the row above its block, over the blocks numbered there, and on
its own block in the first row) -- moved to the nearest free spot, with a
leader line from its block.  A number with no free spot is left out (the
block taken, placed first, keeps its number) and counts in
:attr:`MapLabels.crowded`, which the line under the map says, naming the
numbers (:attr:`MapLabels.left_out`).  A pointer's name with no free spot
still shows, over the others: a pointer is never left unnamed.
"""

from __future__ import annotations

import functools

import numpy as np
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
#: how far round its block a label looks for room: label widths each way,
#: label heights each way
SPOTS_ACROSS, SPOTS_DOWN = 3, 8
#: a block piece with room for this many labels is not kept clear of them
BIG_PIECE = 8


@functools.lru_cache(maxsize=512)
def label_spots(w: float, h: float) -> np.ndarray:
    """Offsets (n x 2) to try for a label ``w`` x ``h`` pixels, nearest
    first: up and down by rows of labels, then beside."""
    # labels come in a few sizes: sorting the offsets for every label of every
    # frame cost compare mode's seven maps 3 ms a frame
    spots = [(i * w, j * h) for i in range(-SPOTS_ACROSS, SPOTS_ACROSS + 1) for j in range(-SPOTS_DOWN, SPOTS_DOWN + 1)]
    spots += [(i * w / 2, j * h) for i in (-1, 1) for j in range(-SPOTS_DOWN, SPOTS_DOWN + 1)]
    spots.sort(key=lambda d: (abs(d[0]) / w) * 2.5 + abs(d[1]) / h)
    out = np.array(spots, dtype=float)
    out.flags.writeable = False
    return out


def view_to_scene(vb) -> tuple[float, float, float, float]:
    """(ax, bx, ay, by): the view box ``vb`` maps view (x, y) to the scene's
    (ax x + bx, ay y + by) (it only scales and shifts; one Qt call each
    point cost a seven-row frame milliseconds)."""
    p, q = vb.mapViewToScene(QPointF(0, 0)), vb.mapViewToScene(QPointF(1, 1))
    return q.x() - p.x(), p.x(), q.y() - p.y(), p.y()


def block_pieces(vb, row_bytes: int, addr: int, size: int, scale=None) -> list[tuple[float, float, float, float]]:
    """Scene rectangles (x0, y0, x1, y1) of a block drawn in rows of
    ``row_bytes``: its piece in its first row, the whole rows it fills, its
    piece in its last row (``scale``: :func:`view_to_scene` of ``vb``)."""
    ax, bx, ay, by = scale or view_to_scene(vb)
    end = addr + max(size, 1)
    y0, y1 = addr // row_bytes, (end - 1) // row_bytes
    x0, x1 = addr % row_bytes, (end - 1) % row_bytes + 1
    if y0 == y1:
        views = [(x0, y0, x1, y0 + 1)]
    else:
        views = [(x0, y0, row_bytes, y0 + 1)]
        if y1 > y0 + 1:
            views.append((0, y0 + 1, row_bytes, y1))
        views.append((0, y1, x1, y1 + 1))
    out = []
    for a, b, c, d in views:
        xa, xc, yb, yd = ax * a + bx, ax * c + bx, ay * b + by, ay * d + by
        out.append((min(xa, xc), min(yb, yd), max(xa, xc), max(yb, yd)))
    return out


class _Rects:
    """Scene rectangles labels keep off (x0, y0, x1, y1, and the area in view
    of a block's piece, 0 for the rest), growing as labels are placed."""

    def __init__(self, rects, more: int) -> None:
        self.n = len(rects)
        self.r = np.zeros((self.n + more + 1, 5))
        for i, r in enumerate(rects):
            self.r[i, :len(r)] = r

    def add(self, rect) -> None:
        self.r[self.n, :4] = rect
        self.n += 1

    def first_free(self, x0s, y0s, w: float, h: float) -> int:
        """Index of the first spot (left ``x0s``, top ``y0s``) whose ``w`` x
        ``h`` rectangle meets none of them (touching is not meeting; a piece
        with room for :data:`BIG_PIECE` such labels does not count), or -1."""
        r = self.r[:self.n]
        r = r[r[:, 4] < BIG_PIECE * w * h]
        if not len(r):
            return 0
        # every spot at once: numpy's cost is in the calls, not the elements
        x, y = x0s[:, None], y0s[:, None]
        meets = (x < r[:, 2]) & (r[:, 0] < x + w) & (y < r[:, 3]) & (r[:, 1] < y + h)
        free = ~meets.any(axis=1)
        return int(free.argmax()) if free.any() else -1


def label_budget(width: float, height: float, pres: Presentation) -> int:
    """How many search numbers a map ``width`` x ``height`` pixels has room
    for (bigger numbers in presenter mode take more room each)."""
    room = LABEL_ROOM * pres.text_scale ** 2
    return int(width * height / room) if width > 50 else 40


def search_words(marks, crowded: int, left_out=()) -> str:
    """What a search's numbers on the map do not say, in words (the line
    under the map says it): the visits left unnumbered, the numbers crowded
    (``left_out``: their texts, in search order, named when given)."""
    n, skipped = len(marks.visits), marks.skipped
    parts = []
    if skipped:
        last = len(marks.numbered) - marks.first
        parts.append(f"{n:,} blocks searched: 1–{marks.first} and {n - last + 1:,}–{n:,} "
                     f"numbered, {skipped:,} in between not")
    if crowded:
        which = ""
        if left_out:
            names = sorted(left_out, key=lambda t: int(t.split("·")[0]))
            which = " (" + ", ".join(names[:6]) + (", …" if len(names) > 6 else "") + ")"
        parts.append(f"{crowded} number{'s' if crowded > 1 else ''}{which} left out for room: "
                     "zoom in (wheel) to read them")
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
        #: numbers left out at this zoom for want of room, and their texts
        self.crowded = 0
        self.left_out: list[str] = []
        self._block_of: dict[int, tuple[int, int]] = {}
        self._skip_block: tuple[int, int] | None = None
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
        self._block_of = {}
        placed = []
        for i, label in enumerate(self.numbers):
            if i < len(groups):
                (addr, size), numbers = groups[i]
                label.setText("·".join(map(str, numbers)))
                label.show()
                self.numbered_blocks.append((numbers[0] - 1, addr, size))
                self._block_of[id(label)] = (addr, size)
                placed.append((label, block_top(addr, size), "number"))
            else:
                label.hide()
        skipped = marks.skipped
        if skipped:
            self.skip.setText(f"+{skipped:,} not numbered")
            self.skip.show()
            # under the first block left without a number
            self._skip_block = marks.skipped_at()
            placed.append((self.skip, block_top(*self._skip_block), "below"))
        else:
            self.skip.hide()
            self._skip_block = None
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
    def kept_clear(self, vb, row_bytes: int, marked=(), scale=None) -> list[tuple[float, ...]]:
        """Scene rectangles (x0, y0, x1, y1, area in view) of the blocks no
        label may cover: every block a shown number (or "+N not numbered")
        points at, and
        ``marked`` ((addr, size): the block placed, the blocks freed), one
        per row piece in view.  A label may lie on a piece with room in view
        for :data:`BIG_PIECE` labels its size (it hides at most that fraction
        of it; a heap-wide block would otherwise leave no room for any number)."""
        view = vb.sceneBoundingRect()
        vl, vt, vr, vb_ = view.left(), view.top(), view.right(), view.bottom()
        blocks = {(a, s) for _, a, s in self.numbered_blocks} | set(marked)
        if self._skip_block is not None:       # (whether or not a placement before left it out)
            blocks.add(self._skip_block)        # "+N not numbered" points at it
        scale = scale or view_to_scene(vb)
        out = []
        for addr, size in blocks:
            for x0, y0, x1, y1 in block_pieces(vb, row_bytes, addr, size, scale):
                w, h = min(x1, vr) - max(x0, vl), min(y1, vb_) - max(y0, vt)
                if w > 0 and h > 0:
                    out.append((x0, y0, x1, y1, w * h))
        return out

    def place(self, vb, occupied, half: float, row_bytes: int = 1, marks=None) -> None:
        """Put the labels on screen in the view box ``vb``, off the scene
        rectangles ``occupied`` (x0, y0, x1, y1: the pointers' symbols,
        ``half`` pixels round their points, and what the map keeps clear)
        and the blocks the numbers point at and those the step ``marks``
        placed or freed (:meth:`kept_clear`, in a map of rows of ``row_bytes``).
        A label keeps inside the view (a number on the first row is not
        drawn above the map) and off the labels placed before it and the
        blocks kept clear: moved to the nearest free spot round its block,
        with a leader line from the block to it.  A number with no free spot
        is left out (counted in :attr:`crowded`, named in :attr:`left_out`)."""
        view = vb.sceneBoundingRect()
        vl, vt, vr, vb_ = view.left() + 1, view.top() + 1, view.right() - 1, view.bottom() - 1
        scale = ax, bx, ay, by = view_to_scene(vb)
        clear = self.kept_clear(vb, row_bytes, marks.placed + marks.released if marks else (), scale)

        def to_view(x: float, y: float) -> QPointF:
            return QPointF((x - bx) / ax, (y - by) / ay) if ax and ay else vb.mapSceneToView(QPointF(x, y))

        taken = _Rects(list(occupied) + clear, len(self.pointer_places) + len(self.number_places))
        leaders = QPainterPath()
        self.crowded, self.left_out = 0, []
        for label, (x, y), kind in self.pointer_places + self.number_places:
            label.show()            # one left out at another zoom may have room now
            size = label.boundingRect()
            w, h = size.width(), size.height()
            p = QPointF(ax * x + bx, ay * y + by)
            if kind == "number":                    # over the block's top edge
                left, top = p.x() - w / 2, p.y() - h - 1
            elif kind == "below":
                left, top = p.x() - w / 2, p.y() + 2 * h
            else:                                   # under a pointer's symbol
                left, top = p.x() - w / 2, p.y() + half + 1
            spots = label_spots(float(w + 2), float(h + 2))
            x0s, y0s = left + spots[:, 0], top + spots[:, 1]
            if view.contains(p):                    # keep it in the view
                x0s = np.clip(x0s, vl, vr - w)
                y0s = np.clip(y0s, vt, vb_ - h)
            i = taken.first_free(x0s, y0s, w, h)
            if i < 0 and kind != "pointer":
                label.hide()            # the line under the map says what it said
                if kind == "number":
                    self.crowded += 1
                    self.left_out.append(label.textItem.toPlainText())
                continue
            i = max(i, 0)
            rect = (float(x0s[i]), float(y0s[i]), float(x0s[i]) + w, float(y0s[i]) + h)
            taken.add(rect)
            label.setPos(to_view(rect[0], rect[1]))
            if kind == "number":
                # a line leads from the block's nearest point to the label
                px0, py0, px1, py1 = block_pieces(vb, row_bytes, *self._block_of[id(label)], scale)[0]
                a = QPointF(min(max((rect[0] + rect[2]) / 2, px0), px1), min(max((rect[1] + rect[3]) / 2, py0), py1))
                b = QPointF(min(max(a.x(), rect[0]), rect[2]), min(max(a.y(), rect[1]), rect[3]))
                if abs(a.x() - b.x()) + abs(a.y() - b.y()) > 1:
                    leaders.moveTo(to_view(a.x(), a.y()))
                    leaders.lineTo(to_view(b.x(), b.y()))
        self.leader.setPath(leaders)
