"""The TLSF view: the two-level segregated fit of Masmano, Ripoll, Crespo &
Real (ECRTS 2004), with the mapping and bitmaps of Matthew Conte's reference
code (mattconte/tlsf).

What it draws (docs/gui.md, "The TLSF view"):

* the **fl x sl matrix** of free lists, one row per first level (its size
  range written beside it: ``row_floor``), one cell per second level.  A cell
  is yellow when its bit of ``sl_bitmap[fl]`` is set -- that is, when its list
  is non-empty -- and shows the list's length; the **fl_bitmap** is the column
  of bits on the left, one per row.  The empty rows above the highest one in
  use are folded into one line that says so;
* the step: the cell ``mapping_search`` chose for a request, with the request
  and its rounded size (``MappingSearch``); the **find-first-set scan**, one
  numbered band per ``BitmapProbe`` -- along the row from the search cell
  (``sl_bitmap[fl] & (~0 << sl)``), then down the fl_bitmap column
  (``fl_bitmap & (~0 << (fl + 1))``), then along the row found -- ending in the
  cell found; the cells a block was taken from and pushed on
  (``ListRemove`` / ``ListInsert``: a freed block's ``mapping_insert`` cell);
* a click on a cell lists its blocks under the matrix and selects the first.

Sizes here are TLSF sizes (the bytes after a block's size word), as
``mapping_insert`` files them; the heap map and ``structure()["sizes"]`` count
whole blocks, one word more.

One item per cell, keyed by (fl, sl), and one per fl_bitmap bit, so an
animation can walk the scan cell by cell: shown event by event with a
transition (:meth:`TlsfView.set_current_event`), a ``BitmapProbe``'s band
grows from the cell where the scan starts, one cell (one bit) at a time, to
the bit it finds; the words cross-fade and the camera glides.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetricsF
from PySide6.QtWidgets import QGraphicsSimpleTextItem, QListWidget, QListWidgetItem

from heapscope.allocators import events as ev
from heapscope.allocators.structure import parse_tlsf_key
from . import register_view
from .transition import Morph, cross_fade, signature
from .scene_view import (EMPTY_FILL, FAINT, FREE_FILL, INK, INSERTED, MIN_FOLLOW_SCALE, SELECTED, TAKEN,
                         VISITED, FOCUS_MARGIN, Glyph, SceneStructureView, fitted_font, font, pen, short_bytes, size_of,
                         swatch)
from .tlsf_numbers import NUMBER_R, place_scan_numbers
from .tlsf_layout import (CELL_H, CELL_W, FOLD_W, HEADER_H, LABEL_PX, ROW_FOLD_H, ColumnFold, Columns,  # noqa: F401
                          RowFold, Rows, count_text, lay_columns, lay_rows, named_cells)

#: the fl_bitmap column, then the row names ("fl 3"); their size ranges and
#: the matrix follow, as wide as the row names and ranges drawn need
#: (:meth:`TlsfView._lay_across`)
BIT_X, LABEL_X = 0.0, 52.0
#: the space between a row's name and its range, and between its range and
#: the first cell (a scan band's number, 14 px round its corner, stays clear)
LABEL_GAP, RANGE_GAP = 8.0, 16.0
#: a line of words under the matrix
LINE_H = 28.0
#: how far left of the fl_bitmap a scan down it draws its number
SCAN_LEFT = 30.0

#: blocks listed when a cell is clicked
LISTED = 500


def size_range(structure: dict, fl: int, sl: int) -> tuple[int, int]:
    """The TLSF sizes filed in list (fl, sl), first and last."""
    n = structure["sl_count"]
    if fl == 0:
        step = structure["small_block_size"] // n
        return sl * step, sl * step + step - 1
    floor = structure["row_floor"][fl]
    step = floor // n
    return floor + sl * step, floor + (sl + 1) * step - 1


def row_range(structure: dict, fl: int) -> tuple[int, int]:
    first, _ = size_range(structure, fl, 0)
    _, last = size_range(structure, fl, structure["sl_count"] - 1)
    return first, last


def range_text(lo: int, hi: int) -> str:
    if hi < 1024:
        return f"{lo}\u2013{hi} B"
    return f"{short_bytes(lo)}\u2013{short_bytes(hi + 1)}"


def fold_name(a: int, b: int) -> str:
    """A folded run of rows' name: ``fl 3\u20137``."""
    return f"fl {a}\u2013{b}" if a != b else f"fl {a}"


def fold_range(structure: dict, a: int, b: int) -> str:
    return range_text(row_range(structure, a)[0], row_range(structure, b)[1])


def probe_words(n: int, level: str, fl: int, sl: int, found) -> str:
    """The line of the step's ``n``-th BitmapProbe."""
    if level == "sl":
        return (f"{n}. sl_bitmap[{fl}] & (~0 << {sl}): "
                + (f"lowest set bit {found[1]}" if found else "no bit set: look up the first level"))
    return (f"{n}. fl_bitmap & (~0 << {fl}): "
            + (f"lowest set bit {found[0]}" if found else "no bit set: no free block is big enough"))


# ------------------------------------------------------------------ items

class CellItem(Glyph):
    """List (fl, sl): its sl_bitmap bit (yellow when set) and its length."""

    def __init__(self, key) -> None:
        super().__init__(key)
        self.fl, self.sl = key
        self.bit = False
        self.count = 0
        self.head: int | None = None
        self.marks: set[str] = set()      # "search", "found", "taken", "inserted", "selected"
        self.range_words = ""
        self.setZValue(10)
        self.set_rect(QRectF(0, 0, CELL_W, CELL_H))

    def block_at(self, local: QPointF) -> int | None:
        return self.head if self._rect.contains(local) else None

    def describe_at(self, local: QPointF) -> str:
        if not self._rect.contains(local):
            return ""
        n = self.count
        state = f"{n} block{'s' if n != 1 else ''}, bit set" if self.bit else "empty, bit clear"
        return f"list ({self.fl}, {self.sl}): TLSF sizes {self.range_words}; {state}; click to list its blocks"

    def paint(self, painter, option, widget=None) -> None:
        r = self._rect
        painter.setPen(pen("#BDBDBD", 1))
        painter.setBrush(QBrush(QColor(FREE_FILL if self.bit else EMPTY_FILL)))
        painter.drawRect(r)
        if self.count:
            text = count_text(self.count, CELL_W - 1, 18)
            painter.setPen(pen(INK))
            painter.setFont(fitted_font(text, CELL_W - 1, 18, True))
            painter.drawText(r, Qt.AlignCenter, text)
        for mark, colour, width, style, inset in (("selected", SELECTED, 5, Qt.SolidLine, 2.5),
                                                  ("found", TAKEN, 4, Qt.SolidLine, 2),
                                                  ("taken", TAKEN, 4, Qt.DashLine, 2),
                                                  ("inserted", INSERTED, 3.5, Qt.DashLine, 5),
                                                  ("search", VISITED, 5, Qt.SolidLine, -1)):
            if mark in self.marks:
                painter.setPen(pen(colour, width, style))
                painter.setBrush(Qt.NoBrush)
                painter.drawRect(r.adjusted(inset, inset, -inset, -inset))


class FlBitItem(Glyph):
    """One bit of fl_bitmap: is any list of row fl non-empty."""

    def __init__(self, fl: int) -> None:
        super().__init__(fl)
        self.fl = fl
        self.bit = False
        self.set_rect(QRectF(6, 3, CELL_W, CELL_H - 6))
        self.setZValue(10)

    def describe_at(self, local: QPointF) -> str:
        if not self._rect.contains(local):
            return ""
        return f"fl_bitmap bit {self.fl} = {int(self.bit)}: row {self.fl} has {'a' if self.bit else 'no'} non-empty list"

    def paint(self, painter, option, widget=None) -> None:
        r = self._rect
        painter.setPen(pen(INK if self.bit else "#BDBDBD", 1.5))
        painter.setBrush(QBrush(QColor(FREE_FILL if self.bit else EMPTY_FILL)))
        painter.drawRect(r)
        painter.setPen(pen(INK if self.bit else FAINT))
        painter.setFont(font(18, True))
        painter.drawText(r, Qt.AlignCenter, "1" if self.bit else "0")


class StepWords(QGraphicsSimpleTextItem):
    """One of the step's lines under the matrix, broken at word gaps to
    ``width`` design pixels; :meth:`text` is the line unbroken."""

    def __init__(self, words: str, font_: QFont, width: float) -> None:
        super().__init__()
        self.setFont(font_)
        self.words = words
        metrics = QFontMetricsF(font_)
        lines, line = [], ""
        for w in words.split(" "):
            trial = f"{line} {w}" if line else w
            if line and metrics.horizontalAdvance(trial) > width:
                lines.append(line)
                line = "   " + w
            else:
                line = trial
        lines.append(line)
        self.setText("\n".join(lines))

    def text(self) -> str:
        return self.words


class ScanItem(Glyph):
    """One BitmapProbe: the bits it looked at, as a numbered band with an arrow."""

    def __init__(self, key, rect: QRectF, vertical: bool, number: int, words: str,
                 bits: int | None = None) -> None:
        super().__init__(key)
        self._bits = bits
        self.vertical = vertical
        self.number = number
        self.words = words
        self.setZValue(20)
        self.band = rect
        #: how much of the scan is drawn, 0..1: whole bits only (an animation walks it)
        self.progress = 1.0
        #: the centre of the numbered disc; a band down the fl_bitmap has it
        #: to its left, off the bits; a band along a row at its first cell's
        #: top left corner unless :meth:`TlsfView._place_numbers` moves it
        #: off a cell's number (with a leader line back to the band)
        self.centre = QPointF(rect.left() - 17, rect.top() + 14) if vertical else QPointF(rect.left(), rect.top())
        self.leader = False
        self._fit_rect()

    def _fit_rect(self) -> None:
        band = self.band.adjusted(-4, -4, 4, 4)
        if self.vertical:
            band = band.adjusted(-SCAN_LEFT, 0, 0, 0)
        self.set_rect(band.united(self.number_rect()))

    def number_rect(self) -> QRectF:
        """The numbered disc, in the item's coordinates."""
        c = self.centre
        return QRectF(c.x() - NUMBER_R, c.y() - NUMBER_R, 2 * NUMBER_R, 2 * NUMBER_R)

    def move_number(self, centre: QPointF, leader: bool) -> None:
        self.prepareGeometryChange()
        self.centre = QPointF(centre)
        self.leader = leader
        self._fit_rect()
        self.update()

    def bits(self) -> int:
        """How many bits (cells) the band covers."""
        if self._bits is not None:      # down the fl_bitmap, across folded rows
            return self._bits
        return max(1, round((self.band.height() / CELL_H) if self.vertical else (self.band.width() / CELL_W)))

    def set_progress(self, t: float) -> None:
        self.progress = t
        self.update()

    def shown_band(self) -> QRectF:
        """The band up to the bit the scan has reached."""
        import math
        n = self.bits()
        k = max(1, min(n, math.ceil(self.progress * n - 1e-9)))
        r = QRectF(self.band)
        if self.vertical:
            r.setHeight(r.height() * k / n)
        else:
            r.setWidth(r.width() * k / n)
        return r

    def describe_at(self, local: QPointF) -> str:
        return self.words if self.band.contains(local) else ""

    def paint(self, painter, option, widget=None) -> None:
        painter.setRenderHint(painter.RenderHint.Antialiasing)
        r = self.shown_band()
        c = QColor(VISITED)
        c.setAlpha(70)
        painter.setPen(pen(VISITED, 2.5))
        painter.setBrush(QBrush(c))
        painter.drawRoundedRect(r, 6, 6)
        # the direction of the scan
        p = pen(VISITED, 3)
        painter.setPen(p)
        if self.vertical:
            x = r.right() - 5
            painter.drawLine(QPointF(x, r.top() + 8), QPointF(x, r.bottom() - 6))
            painter.drawLine(QPointF(x - 5, r.bottom() - 12), QPointF(x, r.bottom() - 6))
            painter.drawLine(QPointF(x + 5, r.bottom() - 12), QPointF(x, r.bottom() - 6))
        else:
            y = r.bottom() - 5
            painter.drawLine(QPointF(r.left() + 8, y), QPointF(r.right() - 6, y))
            painter.drawLine(QPointF(r.right() - 12, y - 5), QPointF(r.right() - 6, y))
            painter.drawLine(QPointF(r.right() - 12, y + 5), QPointF(r.right() - 6, y))
        centre = self.centre
        if self.leader:             # from the disc moved aside to the band's end
            painter.setPen(pen(VISITED, 2))
            painter.drawLine(QPointF(centre.x() - NUMBER_R, centre.y()), QPointF(r.right(), centre.y()))
        painter.setPen(pen("#FFFFFF", 2))
        painter.setBrush(QBrush(QColor(VISITED)))
        painter.drawEllipse(centre, 14, 14)
        painter.setPen(pen(INK))
        painter.setFont(font(16, True))
        painter.drawText(QRectF(centre.x() - 14, centre.y() - 14, 28, 28), Qt.AlignCenter, str(self.number))


# ------------------------------------------------------------------ the step

@dataclass
class TlsfStep:
    search: tuple | None = None                  # (size, rounded, fl, sl)
    probes: list = field(default_factory=list)   # (number, level, fl, sl, found)
    taken: list = field(default_factory=list)    # (fl, sl) of ListRemove
    inserted: list = field(default_factory=list)  # (fl, sl) of ListInsert
    list_moves: list = field(default_factory=list)  # ("took" | "pushed", addr, block bytes, (fl, sl))
    visited: list = field(default_factory=list)  # block addrs (the one taken)


def read_events(explained: list) -> TlsfStep:
    out = TlsfStep()
    for e in explained:
        event = e.event
        if isinstance(event, ev.MappingSearch):
            out.search = (event.size, event.rounded, event.fl, event.sl)
        elif isinstance(event, ev.BitmapProbe):
            out.probes.append((len(out.probes) + 1, event.level, event.fl, event.sl, event.found))
        elif isinstance(event, ev.ListRemove) and len(event.where) == 2:
            out.taken.append(tuple(event.where))
            out.list_moves.append(("took", event.addr, event.size, tuple(event.where)))
        elif isinstance(event, ev.ListInsert) and len(event.where) == 2:
            out.inserted.append(tuple(event.where))
            out.list_moves.append(("pushed", event.addr, event.size, tuple(event.where)))
        elif isinstance(event, ev.Visit):
            out.visited.append(event.addr)
    return out


def step_words(s: dict, step: TlsfStep) -> list[tuple[str, bool, str]]:
    """The step's lines under the matrix, in order: (words, bold, role)."""
    lines = []
    if step.search:
        size, rounded, fl, sl = step.search
        lines.append((f"mapping_search({size}): rounded up to {rounded} → list ({fl}, {sl})"
                      if fl < s["fl_count"] else
                      f"mapping_search({size}): rounded up to {rounded}, beyond every list", True, "search"))
    lines += [(probe_words(*p), False, "") for p in step.probes]
    word = s["small_block_size"] // s["sl_count"]
    for verb, addr, size, (fl, sl) in step.list_moves:
        if verb == "pushed":
            words = (f"mapping_insert({size - word}) = ({fl}, {sl}): pushed {addr:#x} ({size} B) "
                     f"on the head of list ({fl}, {sl})")
        else:
            words = f"took {addr:#x} ({size} B) off list ({fl}, {sl})"
        lines.append((words, False, verb))
    return lines


def rows_by_weight(step: TlsfStep, also) -> list[int]:
    """The rows the step names, the most important first: where it ended
    (the lists pushed on and taken from, the cells found), its search, the
    cells listed and selected, then the rows its scans only passed."""
    cells = [tuple(c) for c in step.inserted + step.taken]
    cells += [tuple(p[4]) for p in reversed(step.probes) if p[4]]
    if step.search:
        cells.append(tuple(step.search[2:]))
    cells += [c for c in also if c is not None]
    rows = [c[0] for c in cells] + [c[0] for c in named_cells(step, also)]
    return list(dict.fromkeys(rows))


def lay_across(s: dict, rows: Rows) -> tuple[float, float]:
    """Where the size ranges and the matrix start, (range_x, matrix_x):
    after the widest row name and range drawn, with a gap (a range of 138
    px, "128 MiB–256 MiB", ran into the first cell of a fixed column)."""
    names, ranges = [], []
    for fl in rows.kept:
        names.append((f"fl {fl}", font(18, True)))
        ranges.append(range_text(*row_range(s, fl)))
    for a, b in rows.folds:
        names.append((fold_name(a, b), font(LABEL_PX)))
        ranges.append(fold_range(s, a, b))
    name_w = max([QFontMetricsF(f).horizontalAdvance(t) for t, f in names] or [0.0])
    metrics = QFontMetricsF(font(LABEL_PX))
    range_w = max([metrics.horizontalAdvance(t) for t in ranges] or [0.0])
    range_x = LABEL_X + max(name_w, 36.0) + LABEL_GAP
    return range_x, range_x + max(range_w, 60.0) + RANGE_GAP


def caption_text(title: str, counts: dict, step: TlsfStep) -> str:
    """The caption over the matrix: what the structure holds, what the step
    did, the colour key."""
    n_free = sum(counts.values())
    parts = [f"<b>{title}</b> (Masmano et al. 2004): {len(counts)} non-empty "
             f"list{'s' if len(counts) != 1 else ''}, {n_free} free block{'s' if n_free != 1 else ''}"]
    what = []
    if step.search:
        what.append(f"search for {step.search[1]}")
    if step.probes:
        what.append(f"{len(step.probes)} bitmap probe{'s' if len(step.probes) != 1 else ''}")
    key = " &nbsp; ".join([swatch(FREE_FILL, "bit set (number: list length)"),
                           swatch(VISITED, "search, scan", True),
                           swatch(TAKEN, "found, taken", True), swatch(INSERTED, "pushed", True),
                           swatch(SELECTED, "selected", True)])
    line2 = ("this step: " + ", ".join(what) + " &nbsp;&nbsp; ") if what else ""
    return " \u00b7 ".join(parts) + "<br>" + line2 + key


def read_back(view) -> dict:
    """:meth:`TlsfView.drawn`: what the view drew, read from its items."""
    # cells and bits are named by where they are drawn, not by their keys,
    # so a cell drawn in the wrong place reads back as the wrong cell
    cells = {}
    for c in view._cells.values():
        if c.isVisible():
            sl = view.columns.sl_at(c.pos().x() - view.matrix_x)
            fl = view.rows.fl_at(c.pos().y() - HEADER_H)
            cells[(-1 if fl is None else fl, -1 if sl is None else sl)] = c
    bits = {view.rows.fl_at(b.pos().y() - HEADER_H): b for b in view._bits.values() if b.isVisible()}
    rows = sorted(bits)
    sl_bitmap = []
    for fl in range(len(view._structure["sl_bitmap"]) if view._structure else 0):
        word = 0
        for sl in range(view._structure["sl_count"]):
            c = cells.get((fl, sl))
            if c is not None and c.bit:
                word |= 1 << sl
        sl_bitmap.append(word)
    scans = sorted(n.key for n in view._notes if isinstance(n, ScanItem))
    search = next((k for k, c in cells.items() if "search" in c.marks), None)
    return {
        "lit": sorted(k for k, c in cells.items() if c.bit),
        "counts": {k: c.count for k, c in sorted(cells.items()) if c.count},
        "fl_bitmap": sum(1 << fl for fl, b in bits.items() if b.bit),
        "sl_bitmap": sl_bitmap,
        "rows": rows,
        "folded": view.folded,
        "search": search,
        "search_text": next((n.text() for n in view._notes if getattr(n, "role", "") == "search"), ""),
        "list_lines": [n.text() for n in view._notes if getattr(n, "role", "") in ("took", "pushed")],
        "scan": [s[1:] for s in scans],
        "found": sorted(k for k, c in cells.items() if "found" in c.marks),
        "taken": sorted(k for k, c in cells.items() if "taken" in c.marks),
        "inserted": sorted(k for k, c in cells.items() if "inserted" in c.marks),
        "cell_list": [view.cell_list.item(i).data(Qt.UserRole) for i in range(view.cell_list.count())
                      if view.cell_list.item(i).data(Qt.UserRole) is not None],
        "listed_cell": view.listed_cell,
        "selected": next((k for k, c in cells.items() if "selected" in c.marks), None),
        "folded_columns": list(view.columns.folds),
        "folded_rows": list(view.rows.folds),
    }


# ------------------------------------------------------------------ the view

@register_view("tlsf")
class TlsfView(SceneStructureView):
    """The fl x sl matrix with both bitmaps, and the step's search and scan.

    :meth:`drawn` keys: ``lit`` (cells drawn with their bit set, sorted),
    ``counts`` ({(fl, sl): length drawn}), ``fl_bitmap`` (the int the drawn
    fl bits spell), ``sl_bitmap`` ([the int each row's cells spell], folded
    rows counted as 0), ``rows`` (first levels drawn as rows), ``folded``
    ((first, last) of the empty rows above the last in use, or None),
    ``folded_rows`` and ``folded_columns`` ((first, last) of each run drawn
    as one grey strip or column), ``search`` ((fl, sl) of
    the cell marked as mapping_search's, or None) and ``search_text``,
    ``scan`` ([(number, level, fl, sl, found)] from the scan bands, in
    order), ``found``, ``taken``, ``inserted`` (cells), ``cell_list``
    (addresses listed after a click on a cell) and ``listed_cell``,
    ``selected`` (the cell marked selected).
    """

    kinds = ("tlsf",)
    title = "TLSF"

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.grid_layer = self.new_layer(10)
        self.note_layer = self.new_layer(20)
        self._cells: dict[tuple[int, int], CellItem] = {}
        self._bits: dict[int, FlBitItem] = {}
        self._notes: list = []
        self._cell_of: dict[int, tuple[int, int]] | None = None
        self._lines_room = 0.0              # design pixels left for the step's lines
        self._lines_left_out = 0            # lines that did not fit
        self.rows_drawn = 0
        self.folded: tuple[int, int] | None = None
        #: where the second levels are drawn (folded runs of empty columns)
        self.columns = Columns(0, set())
        #: where the first levels are drawn (folded runs of rows), the last
        #: row laid out, where the ranges and the matrix start
        self.rows = Rows(0, set())
        self.last_row = 0
        self.range_x = self.matrix_x = 0.0
        self._laid_for = (0, 0)
        self.listed_cell: tuple[int, int] | None = None
        self.step = TlsfStep()
        self.cell_list = QListWidget()
        self.cell_list.setMaximumHeight(130)
        self.cell_list.setFlow(QListWidget.LeftToRight)
        self.cell_list.setWrapping(True)
        self.cell_list.setFont(self.caption.font())
        self.cell_list.hide()
        self.cell_list.itemClicked.connect(self._list_item_clicked)
        self.layout().insertWidget(2, self.cell_list)
        self.set_summary("")

    # ------------------------------------------------------------ contract
    def show_step(self, structure: dict | None, explained: list, record=None) -> None:
        super().show_step(structure, explained, record)
        if self.listed_cell is not None:
            self.list_cell(self.listed_cell, select_first=False)

    def _new_structure(self) -> None:
        self._cell_of = None

    def _morph_from(self, before: dict, leaving: list) -> Morph:
        m = Morph()
        # a new probe walks its bits one by one; the rest cross-fades
        old_scans = {signature(n) for n in leaving if isinstance(n, ScanItem)}
        walking = [n for n in self._notes if isinstance(n, ScanItem) and signature(n) not in old_scans]
        for scan in walking:
            scan.set_progress(0.0)
            m.call(scan.set_progress)
        cross_fade(m, leaving, [n for n in self._notes if n not in walking])
        self.follow_camera(m, before["camera"])
        return m

    def _box_resized(self, *_) -> None:
        # what is folded and which lines fit depend on the view's size
        if self._structure is not None and self.transition is None and self._room() != self._laid_for:
            self._rebuild(follow=self.following)
            return
        super()._box_resized()

    def _room(self) -> tuple[int, int]:
        """The room the drawing is laid out for (rows and columns fold to it)."""
        return round(self.drawing_room()), round(self.drawing_height())

    def cell_of(self, addr: int) -> tuple[int, int] | None:
        if self._cell_of is None:
            self._cell_of = {a: parse_tlsf_key(k) for k, addrs in self._structure["lists"].items() for a in addrs} \
                if self._structure else {}
        return self._cell_of.get(addr)

    def mark_selection(self, addr: int | None) -> QRectF | None:
        cell = self.cell_of(addr) if addr is not None else None
        found = None
        for key, item in self._cells.items():
            had = "selected" in item.marks
            if key == cell and item.isVisible():
                item.marks.add("selected")
                found = self.view_rect_of(item)
            else:
                item.marks.discard("selected")
            if had != ("selected" in item.marks):
                item.update()
        if cell is not None and cell != self.listed_cell:
            self.list_cell(cell, select_first=False)
        if cell is not None:
            for i in range(self.cell_list.count()):
                it = self.cell_list.item(i)
                if it.data(Qt.UserRole) == addr:
                    self.cell_list.setCurrentItem(it)
        return found

    def drawn(self) -> dict:
        return read_back(self)

    # ------------------------------------------------------------ clicks
    def glyph_clicked(self, item, local) -> None:
        if isinstance(item, CellItem):
            self.list_cell(item.key, select_first=True)
            return
        super().glyph_clicked(item, local)

    def list_cell(self, cell: tuple[int, int], select_first: bool) -> None:
        """List the blocks of ``cell`` under the matrix; with ``select_first``,
        select its head and say so (``block_clicked``)."""
        from heapscope.allocators.structure import tlsf_key
        s = self._structure
        if s is None:
            return
        addrs = s["lists"].get(tlsf_key(*cell), [])
        self.listed_cell = cell
        self.cell_list.clear()
        lo, hi = size_range(s, *cell)
        head = QListWidgetItem(f"list ({cell[0]}, {cell[1]}), TLSF sizes {range_text(lo, hi)}: "
                               f"{len(addrs)} block{'s' if len(addrs) != 1 else ''}"
                               + (", head first:" if addrs else ""))
        head.setFlags(Qt.NoItemFlags)
        self.cell_list.addItem(head)
        for a in addrs[:LISTED]:
            it = QListWidgetItem(f"{a:#x} ({short_bytes(size_of(s, a))})")
            it.setData(Qt.UserRole, a)
            self.cell_list.addItem(it)
        if len(addrs) > LISTED:
            more = QListWidgetItem(f"\u2026 and {len(addrs) - LISTED} more")
            more.setFlags(Qt.NoItemFlags)
            self.cell_list.addItem(more)
        self.cell_list.show()
        if select_first and addrs:
            self.set_selection(addrs[0], scroll=False)
            self.block_clicked.emit(addrs[0])

    def _list_item_clicked(self, item: QListWidgetItem) -> None:
        addr = item.data(Qt.UserRole)
        if addr is not None:
            self.set_selection(addr, scroll=True)
            self.block_clicked.emit(addr)

    # ------------------------------------------------------------ drawing
    def _rebuild(self, follow: bool) -> None:
        """Draw the structure shown and the step up to the event shown: lay
        the rows and columns out for the view's size, draw the rows, the
        columns' numbers, then the step's search, scan and list lines, then
        the camera."""
        s = self._structure
        self._drop_notes()
        if s is None:
            self._draw_nothing()
            return
        explained = self._explained if self._upto is None else self._explained[:self._upto + 1]
        step = self.step = read_events(explained)
        counts = {parse_tlsf_key(k): len(v) for k, v in s["lists"].items()}
        # the caption first: its height is the drawing's (a caption written
        # after the layout left a fresh view laid out for another height)
        self.caption.setText(caption_text(self.title, counts, step))
        self._laid_for = self._room()
        last = self.last_row = self._last_row(s, step)
        self.folded = (last + 1, s["fl_count"] - 1) if last + 1 < s["fl_count"] else None
        also = (self.listed_cell, self.cell_of(self.selected) if self.selected is not None else None)
        lines = step_words(s, step)
        width = self.drawing_room() - LABEL_X
        used = {fl for fl in range(s["fl_count"]) if s["fl_bitmap"] >> fl & 1}
        named = rows_by_weight(step, also)
        self.rows, _ = lay_rows(s["fl_count"], last, used, named, self.drawing_height() - HEADER_H,
                                [self._line_height(w, bold, width) for w, bold, _ in lines])
        self.rows_drawn = len(self.rows.kept)
        self.range_x, self.matrix_x = lay_across(s, self.rows)
        # room kept right of the matrix for a scan's number moved off the cells
        # (_place_numbers): a drawing wider than the view pans, and the row
        # names at its left go out of it
        right_room = 2 * NUMBER_R + 8 if any(p[1] == "sl" for p in step.probes) else 0.0
        self.columns = lay_columns(s, step, counts, last, also, self.drawing_room() - self.matrix_x - right_room)
        self._draw_rows(s, counts)
        self._draw_header(s)
        bottom = HEADER_H + self.rows.height
        self._lines_room = self.drawing_height() - bottom
        self._lines_left_out = 0
        bottom = self._draw_step(s, step, lines, bottom)
        for c in self._cells.values():
            c.update()
        self._write_caption(s, counts, step)
        if self.selected is not None:
            self.mark_selection(self.selected)
        if follow:
            self._follow_step(step, explained, bottom)

    # -- the parts of a drawing
    def _drop_notes(self) -> None:
        for note in self._notes:
            if self._collect is not None:
                self._collect.append(note)      # it fades out during the transition
            elif note.scene() is not None:
                note.scene().removeItem(note)
        self._notes = []

    def _draw_nothing(self) -> None:
        for c in list(self._cells.values()) + list(self._bits.values()):
            c.hide()
        self.caption.setText(f"<b>{self.title}</b>: nothing loaded")
        self.cell_list.hide()
        self.listed_cell = None
        self.set_summary("")

    @staticmethod
    def _last_row(s: dict, step: TlsfStep) -> int:
        """The last row drawn: one past the highest in use or touched by the step."""
        fl_count = s["fl_count"]
        used_rows = [fl for fl in range(fl_count) if s["fl_bitmap"] >> fl & 1]
        touched = [c[0] for c in step.taken + step.inserted]
        touched += [p[2] for p in step.probes] + [p[4][0] for p in step.probes if p[4]]
        if step.search:
            touched.append(step.search[2])
        return min(fl_count - 1, max(used_rows + [t for t in touched if t < fl_count] + [0]) + 1)

    def drawing_height(self) -> float:
        """How tall a drawing fits the view at the lowest zoom the camera
        takes, in design pixels (the buttons' strip and the margins taken off).
        Read from the view's own height less its caption, status line and
        cell list, not from the drawing box's height of the moment: the same
        view size gives the same drawing whenever it is laid out."""
        vh = float(self.height() - self.caption.heightForWidth(max(self.width() - 4, 50))
                   - self.status.sizeHint().height() - 16)
        if self.cell_list.isVisible():
            vh -= self.cell_list.height()
        vh -= self.strip_height()
        return vh / (self.zoom_factor * MIN_FOLLOW_SCALE) - 2 * FOCUS_MARGIN - 4

    def drawing_room(self) -> float:
        """How wide a drawing fits the view at the lowest zoom the camera
        takes, in design pixels (its margins taken off, and the room left of
        the fl_bitmap for a scan's number)."""
        vw, _ = self._view_size()
        return vw / (self.zoom_factor * MIN_FOLLOW_SCALE) - 2 * FOCUS_MARGIN - 4 - SCAN_LEFT

    def _draw_rows(self, s: dict, counts: dict) -> None:
        """Each row drawn: its fl_bitmap bit, its cells, its name and size
        range; each folded run of rows, a strip; each folded run of columns."""
        heads = {parse_tlsf_key(k): v[0] for k, v in s["lists"].items() if v}
        cols, rows = self.columns, self.rows
        for fl in range(s["fl_count"]):
            shown = fl in rows.kept
            y = HEADER_H + rows.top(fl)
            bit = self._bits.get(fl)
            if bit is None and shown:
                bit = FlBitItem(fl)
                bit.setParentItem(self.grid_layer)
                self._bits[fl] = bit
            if bit is not None:
                bit.setVisible(shown)
                if shown:
                    bit.bit = bool(s["fl_bitmap"] >> fl & 1)
                    bit.setPos(BIT_X, y)
                    bit.update()
            for sl in range(s["sl_count"]):
                key = (fl, sl)
                cell = self._cells.get(key)
                visible = shown and sl in cols.kept
                if cell is None and visible:
                    cell = CellItem(key)
                    cell.setParentItem(self.grid_layer)
                    cell.range_words = range_text(*size_range(s, fl, sl))
                    self._cells[key] = cell
                if cell is None:
                    continue
                cell.setVisible(visible)
                if visible:
                    cell.setPos(self.matrix_x + cols.x[sl], y)
                    cell.bit = bool(s["sl_bitmap"][fl] >> sl & 1)
                    cell.count = counts.get(key, 0)
                    cell.head = heads.get(key)
                    cell.marks = {"selected"} & cell.marks
                    cell.update()
            if shown:
                self._row_text(f"fl {fl}", font(18, True), LABEL_X, y + 4)
                self._row_text(range_text(*row_range(s, fl)), font(LABEL_PX), self.range_x, y + 5)
        for a, b in rows.folds:
            y = HEADER_H + rows.top(a)
            across = [(self.matrix_x + cols.x[sl] - BIT_X, CELL_W,
                       sum(counts.get((fl, sl), 0) for fl in range(a, b + 1))) for sl in sorted(cols.kept)]
            fold = RowFold((a, b), QRectF(0, 0, self.matrix_x + cols.width - BIT_X, ROW_FOLD_H), 6.0,
                           across, [s["fl_bitmap"] >> fl & 1 for fl in range(a, b + 1)])
            fold.setPos(BIT_X, y)
            self._add_note(fold)
            for text, x in ((fold_name(a, b), LABEL_X), (fold_range(s, a, b), self.range_x)):
                self._row_text(text, font(LABEL_PX), x, y + 2).setZValue(7)     # on the strip
        for a, b in cols.folds:
            segments = [(rows.top(fl), CELL_H, fl, sum(counts.get((fl, sl), 0) for sl in range(a, b + 1)))
                        for fl in sorted(rows.kept)]
            segments += [(rows.top(ra), ROW_FOLD_H, None,
                          sum(counts.get((fl, sl), 0) for fl in range(ra, rb + 1) for sl in range(a, b + 1)))
                         for ra, rb in rows.folds]
            fold = ColumnFold((a, b), QRectF(0, 0, FOLD_W, rows.height), segments)
            fold.setPos(self.matrix_x + cols.x[a], HEADER_H)
            fold.setZValue(6)           # over the row folds it crosses, with their blocks counted
            self._add_note(fold)

    def _row_text(self, text: str, font_: QFont, x: float, y: float) -> QGraphicsSimpleTextItem:
        t = QGraphicsSimpleTextItem(text)
        t.setFont(font_)
        t.setPos(x, y)
        self._add_note(t)
        return t

    def _draw_header(self, s: dict) -> None:
        """The columns' numbers (a folded run: its first and last), the bitmaps' names."""
        cols = self.columns
        for sl in range(s["sl_count"]):
            if sl in cols.kept:
                self._header_text(str(sl), self.matrix_x + cols.x[sl], CELL_W)
        for a, b in cols.folds:
            self._header_text("⋯", self.matrix_x + cols.x[a], FOLD_W)
        for text, x in (("fl_bitmap", BIT_X), ("sl →", self.range_x)):
            t = QGraphicsSimpleTextItem(text)
            t.setFont(font(LABEL_PX, True))
            t.setPos(x, HEADER_H - 24)
            self._add_note(t)

    def _header_text(self, text: str, x: float, width: float) -> None:
        t = QGraphicsSimpleTextItem(text)
        t.setFont(font(LABEL_PX))
        t.setBrush(QBrush(QColor(FAINT)))
        w = t.boundingRect().width()
        t.setPos(x + (width - w) / 2, HEADER_H - 24)
        self._add_note(t)

    def _shown_cell(self, cell) -> CellItem | None:
        item = self._cells.get(tuple(cell))
        return item if item is not None and item.isVisible() else None

    def _draw_step(self, s: dict, step: TlsfStep, lines: list, bottom: float) -> float:
        """The step: the search cell marked, a band per bitmap probe, the
        cells found, taken and pushed marked, then its lines; the new bottom."""
        if step.search and self._shown_cell(step.search[2:]):
            self._shown_cell(step.search[2:]).marks.add("search")
        for n, level, fl, sl, found in step.probes:
            self._scan_band(n, level, fl, sl, found, s)
            if found and self._shown_cell(found):
                self._shown_cell(found).marks.add("found")
        for marks, cells in (("taken", step.taken), ("inserted", step.inserted)):
            for cell in cells:
                if self._shown_cell(cell):
                    self._shown_cell(cell).marks.add(marks)
        self._place_numbers()
        for words, bold, role in lines:
            bottom = self._step_line(words, bottom, bold, role)
        return bottom

    def count_rects(self) -> list[QRectF]:
        """Where the cells' numbers (list lengths) are drawn, in the notes'
        coordinates: each text's own rectangle, centred in its cell."""
        out = []
        for cell in self._cells.values():
            if not cell.isVisible() or not cell.count:
                continue
            text = count_text(cell.count, CELL_W - 1, 18)
            m = QFontMetricsF(fitted_font(text, CELL_W - 1, 18, True))
            w, h = m.horizontalAdvance(text), m.height()
            c = cell.pos() + QPointF(CELL_W / 2, CELL_H / 2)
            out.append(QRectF(c.x() - w / 2, c.y() - h / 2, w, h))
        for fold in self._notes:
            if isinstance(fold, (RowFold, ColumnFold)):
                out += [fold.mapRectToParent(r) for r in fold.count_rects()]
        return out

    def _place_numbers(self) -> None:
        """Each scan's disc clear of the cells' numbers, the labels and the
        discs before it (tlsf_numbers.place_scan_numbers)."""
        taken = self.count_rects() + [n.mapRectToParent(n.boundingRect()) for n in self._notes
                                      if isinstance(n, QGraphicsSimpleTextItem)]
        place_scan_numbers([n for n in self._notes if isinstance(n, ScanItem)], taken,
                           self.matrix_x + self.columns.width)

    @staticmethod
    def _line_height(words: str, bold: bool, width: float) -> float:
        return max(LINE_H, StepWords(words, font(17, bold), width).boundingRect().height() + 6)

    def _step_line(self, words: str, bottom: float, bold: bool = False, role: str = "") -> float:
        """A line of words under the matrix, wrapped to what the view shows at
        its lowest zoom (a long line is not cut at the right edge); the new
        bottom.  A line that would not fit under the others at that zoom is
        left out and counted (:meth:`_say_lines_left_out`).  Wrapped to the
        view, not to a matrix wider than it: about 395 px wide (a tlsf lesson
        in presenter mode at 1280 x 720) the line ran off the right edge."""
        width = self.drawing_room() - LABEL_X
        t = StepWords(words, font(17, bold), width)
        t.role = role
        height = max(LINE_H, t.boundingRect().height() + 6)
        if self._lines_left_out or height > self._lines_room:
            self._lines_left_out += 1
            return bottom
        self._lines_room -= height
        t.setPos(LABEL_X, bottom + 4)
        self._add_note(t)
        return bottom + height

    def _follow_step(self, step: TlsfStep, explained: list, bottom: float) -> None:
        """The camera on the whole drawing; when it does not fit at a readable
        zoom, on the cell the step ended in."""
        right = self.matrix_x + self.columns.width
        notes = [self.view_rect_of(n) for n in self._notes if isinstance(n, (QGraphicsSimpleTextItem, ScanItem))]
        right = max([right] + [r.right() for r in notes])
        left = min([BIT_X] + [r.left() for r in notes])
        rect = QRectF(left, 0, right - left, bottom + 4)
        main = (step.inserted[-1:] or [p[4] for p in step.probes if p[4]][-1:]
                or ([step.search[2:]] if step.search else []))
        anchor = None
        if main and tuple(main[0]) in self._cells and self._cells[tuple(main[0])].isVisible():
            anchor = self.view_point_of(self._cells[tuple(main[0])], QPointF(CELL_W / 2, CELL_H / 2))
        if self._upto is not None:
            # shown event by event: keep where the latest event happens in view
            anchor = self._event_anchor(explained) or anchor
        self.focus_on(rect, anchor, align_top=True)

    def _event_anchor(self, explained: list) -> QPointF | None:
        """The point of the drawing where the last of ``explained`` happens."""
        for e in reversed(explained):
            event = e.event
            cell = None
            if isinstance(event, ev.BitmapProbe):
                if event.level == "fl":
                    fl = event.found[0] if event.found else event.fl
                    bit = self._bits.get(fl)
                    if bit is not None and bit.isVisible():
                        return self.view_point_of(bit, QPointF(CELL_W / 2, CELL_H / 2))
                    continue
                cell = event.found or (event.fl, event.sl)
            elif isinstance(event, ev.MappingSearch):
                cell = (event.fl, event.sl)
            elif isinstance(event, (ev.ListInsert, ev.ListRemove)) and len(event.where) == 2:
                cell = tuple(event.where)
            if cell is not None:
                item = self._cells.get(tuple(cell))
                if item is not None and item.isVisible():
                    return self.view_point_of(item, QPointF(CELL_W / 2, CELL_H / 2))
        return None

    def _add_note(self, item) -> None:
        item.setParentItem(self.note_layer)
        self._notes.append(item)

    def _scan_band(self, n, level, fl, sl, found, s) -> None:
        """The band of one BitmapProbe: along row ``fl`` from ``sl``, or down
        the fl_bitmap column from ``fl`` (across the folded rows between)."""
        rows = self.rows
        if level == "sl":
            if fl not in rows.kept:
                return
            end = max(found[1] if found else s["sl_count"] - 1, sl)
            cols = self.columns
            left, right = cols.left_of(sl), cols.left_of(end) + cols.width_of(end)
            rect = QRectF(self.matrix_x + left + 1, HEADER_H + rows.top(fl) + 1, right - left - 2, CELL_H - 2)
            item = ScanItem((n, "sl", fl, sl, found), rect, False, n, probe_words(n, level, fl, sl, found))
        else:
            last = self.last_row
            first = min(fl, last)
            stop = max(found[0] if found else last, first)
            top, bottom = HEADER_H + rows.top(first), HEADER_H + rows.bottom(stop)
            rect = QRectF(BIT_X + 4, top + 1, CELL_W + 4, bottom - top - 2)
            item = ScanItem((n, "fl", fl, sl, found), rect, True, n, probe_words(n, level, fl, sl, found),
                            bits=stop - first + 1)
        self._add_note(item)

    def _write_caption(self, s, counts, step: TlsfStep) -> None:
        said = []
        if self._lines_left_out:
            n = self._lines_left_out
            said.append(f"{n} line{'s' if n != 1 else ''} of the step in the explain panel only")
        folds = [f"{name} " + ", ".join(f"{a}\u2013{b}" if a != b else str(a) for a, b in runs)
                 for name, runs in (("fl", self.rows.folds), ("sl", self.columns.folds)) if runs]
        if folds:
            said.append(" and ".join(folds) + " folded (grey: their blocks counted)")
        if any(c > 99 for c in counts.values()):
            said.append("long lists show their length only; click a cell to list its blocks")
        self.set_summary("Summarised: " + "; ".join(said) + "." if said else "")
