"""Where the TLSF view draws its matrix: which first levels (rows) and second
levels (columns) are drawn whole, and which runs of them are folded into one
narrow strip that counts their blocks (docs/gui.md, "The TLSF view").

The view is laid out for the lowest zoom its camera takes (every label stays
at least the stated minimum on screen), so a matrix bigger than the view is
never shrunk: what the step names is drawn whole, the non-empty lists nearest
it next, and the rest folds, each fold saying what it holds.  Presenter mode
on a 720-line screen leaves about 190 design pixels of height: the 13 rows of
a 2.7 MiB heap (gcc-cc1) scrolled off at the bottom before rows folded.
"""

from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QFontMetricsF

from .scene_view import FAINT, FREE_FILL, INK, Glyph, fitted_font, pen

CELL_W, CELL_H = 32.0, 28.0
#: a folded run of columns: as wide as a cell, so that its count of three
#: digits is written whole at 16 px (26 px cut "929")
FOLD_W = 32.0
#: a folded run of rows: one line of LABEL_PX text and its margins
ROW_FOLD_H = 24.0
#: the row of column numbers above the matrix
HEADER_H = 30.0
#: the smallest text drawn, in design pixels (docs/gui.md, "Legible sizes")
LABEL_PX = 16
#: the step's lines under the matrix take at most this share of the height
#: the rows would otherwise fold for (the rows the step names are kept whatever)
LINES_SHARE = 0.45
#: a fold's faint fill
FOLD_FILL = "#F2F2F2"


class Runs:
    """Where ``n`` levels are drawn along one axis: ``at[k]`` from the
    matrix's edge for the levels kept, each ``whole`` long; each run of the
    others is one fold ``fold`` long (``folds``: (first, last) of each run)."""

    def __init__(self, n: int, kept, whole: float, fold: float) -> None:
        self.kept = set(kept)
        self.whole, self.fold = whole, fold
        self.at: dict[int, float] = {}
        self.folds: list[tuple[int, int]] = []
        pos, k = 0.0, 0
        while k < n:
            if k in self.kept:
                self.at[k] = pos
                pos += whole
                k += 1
                continue
            run = k
            while k < n and k not in self.kept:
                k += 1
            self.folds.append((run, k - 1))
            for j in range(run, k):
                self.at[j] = pos
            pos += fold
        self.length = pos

    def size_of(self, k: int) -> float:
        return self.whole if k in self.kept else self.fold

    def kept_at(self, pos: float) -> int | None:
        """The level kept whose place starts at ``pos``, or None."""
        for k in self.kept:
            if abs(self.at[k] - pos) < 0.5:
                return k
        return None

    def fold_of(self, k: int) -> tuple[int, int] | None:
        return next((f for f in self.folds if f[0] <= k <= f[1]), None)


class Columns(Runs):
    """Where the second levels are drawn: ``x[sl]`` from the matrix's left
    edge for the columns kept; each run of the others is one folded column
    :data:`FOLD_W` wide."""

    def __init__(self, n: int, kept: set[int]) -> None:
        super().__init__(n, kept, CELL_W, FOLD_W)
        self.x = self.at
        self.width = self.length

    def left_of(self, sl: int) -> float:
        return self.x[sl]

    def width_of(self, sl: int) -> float:
        return self.size_of(sl)

    def sl_at(self, x: float) -> int | None:
        return self.kept_at(x)


class Rows(Runs):
    """Where the first levels are drawn: ``y[fl]`` from the matrix's top for
    the rows kept; each run of the others (the empty rows above the highest
    in use among them) is one strip :data:`ROW_FOLD_H` high."""

    def __init__(self, n: int, kept) -> None:
        super().__init__(n, kept, CELL_H, ROW_FOLD_H)
        self.y = self.at
        self.height = self.length

    def top(self, fl: int) -> float:
        return self.y[fl]

    def bottom(self, fl: int) -> float:
        return self.y[fl] + self.size_of(fl)

    def fl_at(self, y: float) -> int | None:
        return self.kept_at(y)


def named_cells(step, also) -> list[tuple[int, int]]:
    """The (fl, sl) cells the step names (its search, the scan's rows and
    finds, the lists taken from and pushed on) and ``also`` (cells listed or
    selected, None for none); an fl probe names only its row."""
    cells = [c for c in also if c is not None]
    if step.search:
        cells.append(tuple(step.search[2:]))
    for _, level, fl, sl, found in step.probes:
        cells.append((fl, sl if level == "sl" else -1))
        if found:
            cells.append(tuple(found))
    return cells + [tuple(c) for c in step.taken + step.inserted]


def lay_rows(n: int, last: int, used: set[int], named, room: float,
             line_heights: list[float]) -> tuple[Rows, float]:
    """Which of the ``n`` first levels are drawn whole in ``room`` design
    pixels, the step's lines (``line_heights``, in order) under them; and the
    height those lines are given.  Rows ``0..last`` when they and the lines
    fit.  Else the rows the step ``named`` are kept, most important first
    (``named`` in order; a set: lowest first), the first always, the others
    while they fit: a step naming more rows than the view holds at a
    legible zoom (presenter mode at 1280 x 720, step 250 of the default
    trace: five rows in 135 px) folds the least important ones, not the
    bottom of the matrix off the view.  The lines get their height, up to
    :data:`LINES_SHARE` of ``room`` (the first line always, if it fits beside
    the named rows); then the rows in ``used`` (non-empty) nearest the named
    ones, then the empty ones, while they fit.  The rest fold, a strip per
    run."""
    every = Rows(n, range(last + 1))
    total = sum(line_heights)
    if every.height + total <= room:
        return every, total
    order = sorted(named) if isinstance(named, (set, frozenset)) else list(named)
    named = set()
    for fl in order:
        if 0 <= fl < n and fl not in named and (not named or Rows(n, named | {fl}).height <= room):
            named.add(fl)
    spare = room - Rows(n, named).height
    budget = min(total, spare, max(LINES_SHARE * room, line_heights[0] if line_heights else 0.0))
    lines = 0.0
    for h in line_heights:
        if lines + h > budget:
            break
        lines += h
    rows_room = room - lines
    if every.height <= rows_room:
        return every, lines

    def nearness(fl: int) -> tuple:
        return (fl not in used, min([abs(fl - k) for k in named] or [fl]), fl)

    keep = set(named)
    for fl in sorted(set(range(last + 1)) - named, key=nearness):
        if Rows(n, keep | {fl}).height <= rows_room:
            keep.add(fl)
    return Rows(n, keep), lines


def lay_columns(s: dict, step, counts: dict, last: int, also, room: float) -> Columns:
    """Where each second level is drawn, in ``room`` design pixels.  Every
    column when the matrix fits; else runs of columns whose lists are all
    empty in the rows drawn, and which the step (or ``also``: the cells
    listed and selected) does not name, fold into one narrow column each; if
    that is still too wide, the runs the step does not name fold too, each
    showing its rows' block counts (summarised, not shrunk)."""
    n = s["sl_count"]
    if n * CELL_W <= room:
        return Columns(n, set(range(n)))
    named = {sl for _, sl in named_cells(step, also) if sl >= 0}
    used = {sl for (fl, sl), k in counts.items() if k and fl <= last}
    cols = Columns(n, used | named)
    if cols.width <= room:
        return cols
    # the step's columns first, then the non-empty ones nearest them, while they fit
    keep = set(named)
    for sl in sorted(used - named, key=lambda c: min([abs(c - k) for k in named] or [c])):
        if Columns(n, keep | {sl}).width > room:
            break
        keep.add(sl)
    return Columns(n, keep)


#: how far a count may reach past its cell's edges, in all (three digits
#: in bold 16 px take 33.4 px of a 32 px cell, inside its outline)
COUNT_SLACK = 2.0


def count_text(n: int, width: float, px: int = LABEL_PX) -> str:
    """A block count that fits ``width`` design pixels in bold text of at
    least :data:`LABEL_PX`: the number, else in thousands (``12k``), else
    ``…`` (the hover line says it whole).  At 10 000 free blocks "1234"
    was cut to "23" in a folded column 26 px wide."""
    for text in (str(n), f"{round(n / 1000)}k" if n >= 1000 else None, "\u2026"):
        if text is None:
            continue
        f = fitted_font(text, width, px, True)
        if QFontMetricsF(f).horizontalAdvance(text) <= width + COUNT_SLACK:
            return text
    return "\u2026"


def draw_count(painter, r: QRectF, n: int) -> None:
    """A fold's block count: a yellow box with the number."""
    painter.setPen(pen(INK, 1))
    painter.setBrush(QBrush(QColor(FREE_FILL)))
    painter.drawRect(r.adjusted(2, 3, -2, -3))
    text = count_text(n, r.width())
    painter.setFont(fitted_font(text, r.width(), LABEL_PX, True))
    painter.drawText(r, Qt.AlignCenter, text)


def plural(n: int, word: str) -> str:
    return f"{n} {word}{'s' if n != 1 else ''}"


class ColumnFold(Glyph):
    """A run of second-level columns folded into one narrow grey column
    (hover: which).  ``segments``: (top, height, first level or None for a
    folded run of rows, blocks in the folded lists there) down the matrix."""

    def __init__(self, key, rect: QRectF, segments: list[tuple[float, float, int | None, int]]) -> None:
        super().__init__(key)
        self.set_rect(rect)
        self.segments = list(segments)
        self.setZValue(5)

    def describe_at(self, local: QPointF) -> str:
        a, b = self.key
        seg = next((g for g in self.segments if g[0] <= local.y() < g[0] + g[1]), None)
        if seg is None:
            return ""
        _, _, fl, n = seg
        where = f"row {fl}" if fl is not None else "the folded rows"
        return (f"second levels {a}\u2013{b} of {where}, folded: "
                + (f"{plural(n, 'block')} in their lists" if n else "every list empty"))

    def count_rects(self) -> list[QRectF]:
        """Its block counts' boxes, in its own coordinates."""
        return [QRectF(0, top, FOLD_W, height).adjusted(2, 3, -2, -3) for top, height, _, n in self.segments if n]

    def paint(self, painter, option, widget=None) -> None:
        painter.setPen(pen("#BDBDBD", 1, Qt.DashLine))
        painter.setBrush(QBrush(QColor(FOLD_FILL)))
        painter.drawRect(self._rect)
        for top, height, _, n in self.segments:
            if n:
                draw_count(painter, QRectF(0, top, FOLD_W, height), n)


class RowFold(Glyph):
    """A run of first levels folded into one grey strip across the matrix:
    its fl_bitmap bits ("0" when all clear), and per column drawn, the
    blocks in the folded lists (hover: which rows, how many blocks)."""

    def __init__(self, key, rect: QRectF, bits_x: float, cells: list[tuple[float, float, int]],
                 bits: list[int]) -> None:
        super().__init__(key)
        self.set_rect(rect)
        self.bits_x = bits_x
        #: (left, width, blocks) of each column drawn, from the strip's left edge
        self.cells = list(cells)
        #: the fl_bitmap bits of the folded rows, in order
        self.bits = list(bits)
        self.setZValue(5)

    def describe_at(self, local: QPointF) -> str:
        if not self._rect.contains(local):
            return ""
        a, b = self.key
        n = sum(c[2] for c in self.cells)
        set_bits = [a + i for i, bit in enumerate(self.bits) if bit]
        bits = (f"fl_bitmap bits {', '.join(map(str, set_bits))} set" if set_bits
                else f"fl_bitmap bits {a}\u2013{b} are 0")
        return (f"first levels {a}\u2013{b}, folded: "
                + (f"{plural(n, 'block')} in their lists" if n else "every list empty") + f"; {bits}")

    def count_rects(self) -> list[QRectF]:
        """Its block counts' boxes, in its own coordinates."""
        r = self._rect
        return [QRectF(left, r.top(), width, r.height()).adjusted(2, 3, -2, -3) for left, width, n in self.cells if n]

    def paint(self, painter, option, widget=None) -> None:
        r = self._rect
        painter.setPen(pen("#BDBDBD", 1, Qt.DashLine))
        painter.setBrush(QBrush(QColor(FOLD_FILL)))
        painter.drawRect(r)
        bit = QRectF(self.bits_x, r.top(), CELL_W, r.height())
        painter.setPen(pen(FAINT))
        painter.setFont(fitted_font("0", CELL_W, LABEL_PX, True))
        painter.drawText(bit, Qt.AlignCenter, "\u22ee" if any(self.bits) else "0")
        for left, width, n in self.cells:
            if n:
                draw_count(painter, QRectF(left, r.top(), width, r.height()), n)
