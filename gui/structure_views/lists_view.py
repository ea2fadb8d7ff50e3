"""The generic structure view: the free structure as labelled lists of blocks.

This is the shape a user strategy gives (``structure()``'s ``lists`` kind,
docs/structure.md), and the view the window falls back on for any kind whose
own drawing is not there: every kind reads as labelled lists (K&R's ring is one
list from ``base``; each AVAIL[k], each TLSF list (fl, sl), each bucket, each
node of a size tree with its equal-size blocks is one list), plus the blocks
kept outside the structure.

Each list is a heading ("AVAIL[7] · 3 blocks · 384 B") and a row of boxes,
one per free block in the list's own order, linked left to right, each box
with the block's size in large type and its address under it.  What the shown
step did is lit from its explained events: the blocks the search examined,
numbered in order (orange, as on the heap map), and the blocks any other event
named (a split's remainder, a merge, an insert: vermillion).  The policy's
pointers (rover, head) are flags over their blocks.  The selected block has
the heap map's selection ring.

A kind drawn as lists with a part of its own above or below the lists
subclasses the view and draws it in :meth:`ListsView._above_lists` and
:meth:`ListsView._below_lists` (dlmalloc's bins: bins_view.py).

Legible past a few hundred blocks: at most :data:`MAX_LISTS` lists and
:data:`BLOCK_BUDGET` boxes are drawn; a long list keeps its first and last
blocks and every block the step lit, the selection and the pointers, with a
"... 812 blocks ..." pill for each run left out, and runs of lists fold into
one line.  :attr:`summary` says what was left out; the view scrolls.

Each box is one item that paints itself (rectangle, texts, number, pointer
flags, the link from the box before it), kept per block address from one step
to the next: a step moves and restyles the boxes it keeps and makes only the
new ones, and the scene draws only the boxes in sight.
"""

from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetricsF, QPainter, QPen
from PySide6.QtWidgets import (QFrame, QGraphicsItem, QGraphicsRectItem, QGraphicsScene,
                               QGraphicsSimpleTextItem, QGraphicsTextItem, QGraphicsView, QLabel,
                               QSizePolicy, QVBoxLayout)

from heapscope.allocators import events as ev
from heapscope.allocators import structure_kinds
from .. import palette
from ..gauges import human_bytes
from . import register_view
from .base import StructureView
from .scene_view import LinesLabel

#: lists drawn at most; beyond, runs of lists fold into one line
MAX_LISTS = 60
#: boxes drawn at most over all lists
BLOCK_BUDGET = 400
#: a list gets at least this many boxes, and at most PER_LIST_MAX
PER_LIST_MIN, PER_LIST_MAX = 12, 200

#: space between two boxes of a list (the link is drawn there)
GAP_X = 14.0


def labelled_lists(structure: dict, named=()) -> list[tuple[tuple | None, str, list[int]]]:
    """Any structure (docs/structure.md) as ``[(key, label, [addrs])]``, in
    the structure's own order, the blocks kept outside it last.  ``key`` is
    how the policy's events name the list (``ListInsert.where``: ``(k,)`` for
    AVAIL[k] and nextf[k], ``(fl, sl)`` for a TLSF list), or None.  Bins,
    which a structure lists only when non-empty, are listed empty too when
    their key is in ``named`` (the bin a step took its last block from).
    The lists are the kind's own (``StructureKind.labelled_lists``)."""
    out = list(_kind_of(structure).labelled_lists(structure, named))
    for o in structure.get("outside", ()):
        out.append((None, f"outside: {o['why']}", [o["addr"]]))
    return out


def _kind_of(structure: dict) -> structure_kinds.StructureKind:
    """The structure's registered kind, which says how it reads as lists
    (in its module, allocators/structure_kinds/), or the generic reading."""
    return structure_kinds.get(structure.get("kind")) or structure_kinds.StructureKind()


def list_marks(explained, upto: int | None = None) -> dict[tuple, list[str]]:
    """{list key: what the step did to that list, in a few words}, from the
    events that name a list rather than a block in it (a block taken off a
    list is no longer drawn there): each event type says its mark
    (``list_mark``, allocators/events.py), one without marks no list."""
    marks: dict[tuple, list[str]] = {}
    for e in explained:
        if upto is not None and e.index > upto:
            break
        mark = getattr(e.event, "list_mark", None)
        if mark is not None:
            key, words = mark()
            marks.setdefault(key, []).append(words)
    return marks


def lit_blocks(explained, upto: int | None = None) -> tuple[dict[int, int], dict[int, int]]:
    """({addr: visit number} of the blocks the step's search examined,
    {addr: index of the first event naming it} of the other blocks its events
    name), from events 0..``upto``.  A pointer's old place is not lit."""
    visits: dict[int, int] = {}
    changed: dict[int, int] = {}
    for e in explained:
        if upto is not None and e.index > upto:
            break
        if isinstance(e.event, ev.Visit):
            visits.setdefault(e.event.addr, len(visits) + 1)
        elif isinstance(e.event, ev.PointerMove):
            if e.event.new is not None:
                changed.setdefault(e.event.new, e.index)
        elif not isinstance(e.event, ev.Placed):
            for a in e.addrs:
                changed.setdefault(a, e.index)
    return visits, changed


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def keep_indices(n: int, cap: int, wanted: set[int]) -> list[int]:
    """Which of a list's n positions to draw: all when n <= cap, else the
    first and last ones and each wanted position with a neighbour each side."""
    if n <= cap:
        return list(range(n))
    head, tail = max(1, cap * 2 // 3), max(1, cap // 6)
    keep = set(range(head)) | set(range(n - tail, n))
    for i in wanted:
        keep.update(j for j in (i - 1, i, i + 1) if 0 <= j < n)
    return sorted(keep)


def lists_shown(rows: list, marks: dict, wanted: set[int]) -> tuple[list[int], int]:
    """Which of the ``rows`` (labelled_lists) to draw, and how many blocks at
    most to draw of each: every list while there are at most
    :data:`MAX_LISTS`, else the first and last ones and those the step
    marked or holding a ``wanted`` block; the block budget shared among the
    non-empty lists drawn."""
    interesting = {i for i, (key, _, addrs) in enumerate(rows)
                   if key in marks or wanted.intersection(addrs)}
    if len(rows) <= MAX_LISTS:
        shown_rows = list(range(len(rows)))
    else:
        keep = set(range(MAX_LISTS * 2 // 3)) | set(range(len(rows) - MAX_LISTS // 6, len(rows)))
        shown_rows = sorted(keep | interesting)
    filled = sum(1 for r in shown_rows if rows[r][2])
    return shown_rows, max(PER_LIST_MIN, min(PER_LIST_MAX, BLOCK_BUDGET // max(1, filled)))


def summary_of(total_blocks: int, drawn_blocks: int, cut_lists: int, folded_lists: int, lists: int) -> str:
    """What the lists view summarised, in words ("" when it drew everything)."""
    notes = []
    if drawn_blocks < total_blocks:
        notes.append(f"{drawn_blocks:,} of {total_blocks:,} blocks drawn")
    if cut_lists:
        notes.append(f"{cut_lists:,} list{'s' if cut_lists > 1 else ''} cut to "
                     f"{'their' if cut_lists > 1 else 'its'} first and last blocks and what "
                     "the step touched")
    if folded_lists:
        notes.append(f"{folded_lists:,} of {lists:,} lists folded")
    return "; ".join(notes)


class _Fonts:
    """The view's fonts and their metrics, scaled from the widget's font so
    that they grow with it (presenter mode)."""

    def __init__(self, base: QFont) -> None:
        pt = base.pointSizeF()

        def font(scale: float, bold: bool) -> QFont:
            f = QFont(base)
            f.setPointSizeF(pt * scale)
            f.setBold(bold)
            return f

        self.size, self.addr = font(1.15, True), font(1.0, False)
        self.head, self.mark = font(1.1, True), font(1.0, True)
        self.size_m, self.addr_m, self.mark_m = (QFontMetricsF(f) for f in (self.size, self.addr, self.mark))
        self.box_h = self.size_m.height() + self.addr_m.height() + 8
        self.flag_h = self.mark_m.height() + 2
        self._widths: dict[tuple[int, str], float] = {}

    def width(self, which: QFontMetricsF, text: str) -> float:
        key = (id(which), text)
        w = self._widths.get(key)
        if w is None:
            w = self._widths[key] = which.horizontalAdvance(text)
        return w


class BlockBox(QGraphicsItem):
    """One free block of a list, painting itself; what it shows is in plain
    attributes that :meth:`ListsView.drawn` reads back."""

    def __init__(self, fonts: _Fonts, addr: int) -> None:
        super().__init__()
        self.fonts = fonts
        self.addr = addr
        self.list_index = 0          # which list it is drawn in
        self.order = 0               # drawing order within the view
        self.size_text = self.addr_text = ""
        self.w = 60.0
        self.state = ""              # "", "visited" or "changed"
        self.number = 0              # visit number, when visited
        self.flags: tuple[str, ...] = ()
        self.linked = False          # a link from the box before it
        self.outside = False
        self.setZValue(2)

    def restyle(self, size_text, state, number, flags, linked, outside) -> None:
        self.prepareGeometryChange()
        self.size_text, self.state, self.number = size_text, state, number
        self.flags, self.linked, self.outside = tuple(flags), linked, outside
        self.addr_text = f"0x{self.addr:x}"
        f = self.fonts
        self.w = max(f.width(f.size_m, size_text), f.width(f.addr_m, self.addr_text)) + 16
        self.update()

    def boundingRect(self) -> QRectF:
        f = self.fonts
        above = max(f.flag_h * len(self.flags), f.mark_m.height() if self.number else 0) + 4
        return QRectF(-GAP_X - 1, -above, self.w + GAP_X + 6, f.box_h + above + 4)

    def paint(self, painter: QPainter, option, widget=None) -> None:
        f = self.fonts
        h = f.box_h
        if self.linked:
            painter.setPen(QPen(QColor("#777"), 2))
            painter.drawLine(QPointF(-GAP_X, h / 2), QPointF(0, h / 2))
        if self.state == "visited":
            pen = QPen(QColor(palette.SEARCHED), 4)
        elif self.state == "changed":
            pen = QPen(QColor(palette.PLACED), 4)
        else:
            pen = QPen(QColor("#555"), 1.2)
        pen.setJoinStyle(Qt.MiterJoin)
        painter.setPen(pen)
        painter.setBrush(QBrush(QColor(palette.BLUISH_GREEN if self.outside else palette.YELLOW)))
        painter.drawRect(QRectF(0, 0, self.w, h))
        ink = QColor("white" if self.outside else "#111")
        painter.setPen(ink)
        painter.setFont(f.size)
        painter.drawText(QPointF(8, 3 + f.size_m.ascent()), self.size_text)
        painter.setFont(f.addr)
        painter.drawText(QPointF(8, 3 + f.size_m.height() + f.addr_m.ascent()), self.addr_text)
        painter.setFont(f.mark)
        if self.number:
            text = str(self.number)
            tw = f.width(f.mark_m, text)
            badge = QRectF(self.w - tw - 8, -f.mark_m.height() + 2, tw + 8, f.mark_m.height())
            painter.fillRect(badge, QColor(palette.SEARCHED))
            painter.setPen(QColor("black"))
            painter.drawText(QPointF(badge.left() + 4, badge.top() + f.mark_m.ascent()), text)
        if self.flags:
            painter.setPen(QColor(palette.SEARCHED).darker(140))
            for k, name in enumerate(self.flags):
                painter.drawText(QPointF(2, -f.flag_h * k - 4 - f.mark_m.descent()), f"▼ {name}")


class _Canvas(QGraphicsView):
    """The scrolling scene; it tells the view of clicks, hovers and width
    changes by signals (a reference back to the view would make a reference
    cycle of Qt objects)."""

    clicked = Signal(object)       # block address or None
    hovered = Signal(object)       # block address or None
    menu_asked = Signal(int, object)   # a right click on a block: its address, the screen point
    width_changed = Signal()

    def __init__(self) -> None:
        super().__init__()
        scene = QGraphicsScene(self)
        scene.setItemIndexMethod(QGraphicsScene.NoIndex)    # items move on every step
        self.setScene(scene)
        self.setRenderHint(QPainter.Antialiasing)
        self.setRenderHint(QPainter.TextAntialiasing)
        self.setAlignment(Qt.AlignLeft | Qt.AlignTop)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        # Always there, so the width the lists wrap to does not change with
        # their height: the view lays out again at every change of width,
        # and a step looks the same however the view came to this width.
        self.setVerticalScrollBarPolicy(Qt.ScrollBarAlwaysOn)
        self.setFrameShape(QFrame.NoFrame)
        self.setBackgroundBrush(QBrush(QColor("white")))
        self.setMouseTracking(True)
        self.setFocusPolicy(Qt.NoFocus)     # the window's keys step the trace

    def block_at(self, pos) -> int | None:
        for item in self.items(pos):
            if isinstance(item, BlockBox) and item.isVisible():
                local = item.mapFromScene(self.mapToScene(pos))
                if 0 <= local.x() <= item.w and 0 <= local.y() <= item.fonts.box_h:
                    return item.addr
        return None

    def mousePressEvent(self, event) -> None:
        if event.button() == Qt.LeftButton:
            self.clicked.emit(self.block_at(event.position().toPoint()))
            event.accept()
            return
        if event.button() == Qt.RightButton:
            addr = self.block_at(event.position().toPoint())
            if addr is not None:
                self.menu_asked.emit(addr, event.globalPosition().toPoint())
                event.accept()
                return
        super().mousePressEvent(event)

    def mouseMoveEvent(self, event) -> None:
        self.hovered.emit(self.block_at(event.position().toPoint()))
        super().mouseMoveEvent(event)

    def leaveEvent(self, event) -> None:
        self.hovered.emit(None)
        super().leaveEvent(event)

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self.width_changed.emit()


class _Mark:
    """What a heading, a pill or a fold line stands for (read back by drawn())."""

    def __init__(self, role: str, order: int, **values) -> None:
        self.role, self.order = role, order
        self.__dict__.update(values)


@register_view("lists")
class ListsView(StructureView):
    """Labelled lists of free blocks; see the module docstring.

    :meth:`drawn` gives ``{"lists": [{"label", "blocks", "skipped"}],
    "folded_lists", "folded_blocks", "visited": [addrs in number order],
    "changed": [addrs], "pointers": {name: addr}, "selected": addr or None,
    "marked_lists": {label: what the step did to it}}``, read back from the
    scene's items (a subclass's own marks by :meth:`_read_mark`)."""

    kinds = ("lists",)

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.canvas = _Canvas()
        self.canvas.clicked.connect(self._clicked)
        self.canvas.menu_asked.connect(self.block_menu_asked)
        self.canvas.hovered.connect(self._hovered)
        self.canvas.width_changed.connect(self._width_changed)
        self.title = QLabel("Free blocks, as lists")
        big = QFont(self.font())
        big.setPointSizeF(self.font().pointSizeF() * 1.15)
        big.setBold(True)
        self.title.setFont(big)
        self.title.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Preferred)
        # what was summarised, on two lines cut at a word with "…" (the whole
        # in the tooltip): one line ran off the view ("... and wh" on dlmalloc)
        self.info = LinesLabel(2)
        self.info.setWordWrap(True)
        self.info.setTextFormat(Qt.PlainText)
        self.info.setStyleSheet("color: #555;")
        self.info.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Fixed)
        box = QVBoxLayout(self)
        box.setContentsMargins(0, 0, 0, 0)
        box.setSpacing(2)
        box.addWidget(self.title)
        box.addWidget(self.info)
        box.addWidget(self.canvas, 1)
        self.structure: dict | None = None
        self._after: dict | None = None       # the structure after the whole step
        self.explained: list = []
        self.selected: int | None = None
        self.current_event: int | None = None
        self._hover: int | None = None
        self.fonts = _Fonts(self.font())
        self._boxes: dict[int, BlockBox] = {}       # the boxes drawn, by block address
        self._others: list[QGraphicsItem] = []      # headings, pills, fold lines
        self._ring: list[QGraphicsRectItem] = []
        for colour, width in ((palette.SELECTED, 7), (palette.SELECTED_CORE, 2.5)):
            ring = QGraphicsRectItem()
            pen = QPen(QColor(colour), width)
            pen.setJoinStyle(Qt.MiterJoin)
            ring.setPen(pen)
            ring.setZValue(30 + len(self._ring))
            ring.hide()
            self.canvas.scene().addItem(ring)
            self._ring.append(ring)
        self._ring_addr: int | None = None
        self._laid_width = 0

    # ------------------------------------------------------------- contract
    def show_step(self, structure: dict | None, explained: list, record=None) -> None:
        self.structure = self._after = structure
        self.explained = list(explained or ())
        self.current_event = None
        self._layout()
        kind = structure.get("kind", "lists") if structure else None
        if kind is None:
            self.title.setText("Free blocks, as lists")
        elif kind == "lists":
            self.title.setText("Free structure: the strategy's lists")
        else:
            # a kind whose own view is not there: say what is drawn instead
            self.title.setText(f"Free structure: {kind}, drawn as lists")
        self.info.setText(f"summarised: {self.summary}" if self.summary else " ")

    def set_selection(self, addr: int | None) -> None:
        self.selected = addr
        if addr is not None and addr not in self._boxes and self._holds(addr):
            self._layout()          # it was folded away: draw it
        self._place_ring()

    def set_current_event(self, index: int | None, duration_ms: int = 0) -> None:
        # the structure after that event when its kind's events say it (a
        # user strategy's lists promise none: the structure after the whole
        # step), lit up to the event; nothing moves here
        structure = self.structure_for(index, self._after)
        if index != self.current_event or structure is not self.structure:
            self.current_event = index
            self.structure = structure
            if self.structure is not None:
                self._layout()

    def drawn(self) -> dict:
        lists: list[dict] = []
        out = {"lists": lists, "folded_lists": 0, "folded_blocks": 0, "visited": [],
               "changed": [], "pointers": {}, "selected": None, "marked_lists": {}}
        numbers = []
        items = [i for i in self.canvas.scene().items() if isinstance(i, BlockBox) or hasattr(i, "mark")]
        for item in sorted(items, key=lambda i: i.order if isinstance(i, BlockBox) else i.mark.order):
            if isinstance(item, BlockBox):
                lists[-1]["blocks"].append(item.addr)
                if item.state == "changed":
                    out["changed"].append(item.addr)
                if item.number:
                    numbers.append((item.number, item.addr))
                for name in item.flags:
                    out["pointers"][name] = item.addr
                continue
            m = item.mark
            if m.role == "header":
                lists.append({"label": m.label, "blocks": [], "skipped": 0})
                # read off the heading as drawn: what a student sees
                _, mark, did = item.toPlainText().partition("◀ this step: ")
                if mark:
                    out["marked_lists"][m.label] = did
            elif m.role == "gap":
                lists[-1]["skipped"] += m.count
            elif m.role == "folded":
                out["folded_lists"] += m.lists
                out["folded_blocks"] += m.blocks
            else:
                self._read_mark(m, out)
        out["visited"] = [a for _, a in sorted(numbers)]
        ring = self._ring[1]
        if ring.isVisible():
            out["selected"] = self._ring_addr
        return out

    def _read_mark(self, mark: "_Mark", out: dict) -> None:
        """drawn(): read back a mark of a part of a subclass's own."""

    def box_centre(self, addr: int):
        """The viewport point at the middle of ``addr``'s box (tests click it), or None."""
        item = self._boxes.get(addr)
        if item is None:
            return None
        self.canvas.ensureVisible(item)
        return self.canvas.mapFromScene(item.mapToScene(QPointF(item.w / 2, self.fonts.box_h / 2)))

    # ------------------------------------------------------------- drawing
    def _holds(self, addr: int) -> bool:
        return self.structure is not None and addr in self.structure.get("sizes", {})

    def set_zoom_factor(self, factor: float) -> None:
        if factor != self.zoom_factor:
            super().set_zoom_factor(factor)
            self.canvas.resetTransform()
            self.canvas.scale(factor, factor)
            if self.structure is not None:
                self._layout()

    def _width_changed(self) -> None:
        w = self.canvas.viewport().width() / self.zoom_factor
        if self.structure is not None and w != self._laid_width:
            self._layout()

    def _layout(self) -> None:
        scene = self.canvas.scene()
        for item in self._others:
            scene.removeItem(item)
        self._others = []
        self._order = 0
        self._laid_width = width = max(self.canvas.viewport().width() / self.zoom_factor, 240)
        old_boxes, self._boxes = self._boxes, {}
        s = self.structure
        if s is None:
            self._drop(old_boxes)
            self.summary = ""
            self._add_text("nothing to show", self.fonts.head, 8, 8, "#555")
            scene.setSceneRect(QRectF(0, 0, width, 40))
            self._place_ring()
            return
        self._draw_lists(s, old_boxes, width)

    def _draw_lists(self, s: dict, old_boxes: dict, width: float) -> None:
        """The structure's lists top down, a heading each and its blocks
        (the lists and blocks the step did not touch folded when there are
        many), between what a subclass draws above and below them; then what
        the step did brought into view."""
        scene = self.canvas.scene()
        sizes = s.get("sizes", {})
        visits, changed = lit_blocks(self.explained, self.current_event)
        marks = list_marks(self.explained, self.current_event)
        rows = labelled_lists(s, named=set(marks))
        pointers = {p["name"]: p["addr"] for p in s.get("pointers", ())}
        flags_at: dict[int, list[str]] = {}
        for name, a in pointers.items():
            if a is not None:
                flags_at.setdefault(a, []).append(name)
        wanted_addrs = set(visits) | set(changed) | set(flags_at)
        if self.selected is not None:
            wanted_addrs.add(self.selected)

        shown_rows, cap = lists_shown(rows, marks, wanted_addrs)

        sentinel = _kind_of(s).list_sentinel      # K&R's and Kruse's base
        y = self._above_lists(s, 6.0, width)
        first_marked = None          # the heading of the first list the step touched
        folded_lists = folded_blocks = cut_lists = drawn_blocks = 0
        prev = -1
        pad = 8.0
        for r in shown_rows + [len(rows)]:
            if r != prev + 1:
                y = self._folded(rows[prev + 1:r], y)
                folded_lists += r - prev - 1
                folded_blocks += sum(len(a) for _, _, a in rows[prev + 1:r])
            prev = r
            if r == len(rows):
                break
            key, label, addrs = rows[r]
            index_of = {a: i for i, a in enumerate(addrs)}
            keep = keep_indices(len(addrs), cap, {index_of[a] for a in wanted_addrs if a in index_of})
            drawn_blocks += len(keep)
            total = sum(sizes.get(a, 0) for a in addrs)
            count = f"{len(addrs):,} block" + ("" if len(addrs) == 1 else "s")
            head = f"{label} · " + (f"{count} · {human_bytes(total)}" if addrs else "empty")
            if len(keep) < len(addrs):
                cut_lists += 1
                head += f" · {len(keep):,} drawn"
            at_sentinel = [name for name, a in pointers.items() if a is None and r == 0 and sentinel]
            if at_sentinel:
                head += "   (" + ", ".join(at_sentinel) + f" → {sentinel})"
            did = ", ".join(marks[key]) if key is not None and key in marks else ""
            item = self._heading(head, did, pad - 4, y, width - 2 * pad,
                                 _Mark("header", self._next(), label=label, did=did))
            if did and first_marked is None:
                first_marked = item
            y += item.boundingRect().height() + 2
            if not addrs:
                y += 6
                continue
            y = self._blocks(r, addrs, keep, sizes, visits, changed, flags_at, old_boxes, y, width,
                             outside=label.startswith("outside:"))
            y += 10
        self._drop(old_boxes)
        y = self._below_lists(s, y, width)
        self.summary = summary_of(sum(len(a) for _, _, a in rows), drawn_blocks, cut_lists, folded_lists,
                                  len(rows))
        scene.setSceneRect(QRectF(0, 0, width, y + 6))
        # the view's own rectangle too: its scroll range follows at once, so
        # the scroll to the step below is not cut to the last drawing's range
        self.canvas.setSceneRect(QRectF(0, 0, width, y + 6))
        self._place_ring()
        if self.selected not in self._boxes:
            self._follow_step(visits, changed, flags_at, first_marked)

    def _follow_step(self, visits: dict, changed: dict, flags_at: dict, first_marked) -> None:
        """Scroll to what the step did (the selection is not drawn)."""
        # follow the action: the first block the step lit, else the list
        # it touched (a block taken leaves it: dlmalloc's bin taken
        # from), else the search pointers
        lit = sorted((a for a in visits if a in self._boxes), key=visits.get)
        lit += [a for a in changed if a in self._boxes]
        pointed = [a for a in flags_at if a in self._boxes]
        bar = self.canvas.verticalScrollBar()
        # the bar counts the view's pixels: scene units times the zoom
        zoom = self.canvas.transform().m22()
        if lit or first_marked is None and pointed:
            # near the top, with a line above for context: what follows is
            # the rest of the step (the search path runs on down)
            box = self._boxes[(lit or pointed)[0]]
            bar.setValue(max(0, int((box.y() - self.fonts.box_h - 28) * zoom)))
        elif first_marked is not None:
            # only a list was touched (its block was taken): show its heading
            bar.setValue(max(0, int((first_marked.y() - 8) * zoom)))
        else:
            bar.setValue(0)       # the step lit nothing here: the top, whatever came before

    def _above_lists(self, s: dict, y: float, width: float) -> float:
        """A subclass's part above the lists, from ``y`` down; the y below it."""
        return y

    def _below_lists(self, s: dict, y: float, width: float) -> float:
        """A subclass's part below the lists, from ``y`` down; the y below it."""
        return y

    def _next(self) -> int:
        self._order += 1
        return self._order

    def _heading(self, head: str, did: str, x: float, y: float, width: float,
                 mark: _Mark | None = None) -> QGraphicsTextItem:
        """A heading at (x, y), ``width`` wide (a long one wraps), with what
        the step did to it after a mark (nothing when ``did`` is empty)."""
        html = _escape(head)
        if did:
            html += f' <span style="color:{palette.PLACED}">◀ this step: {_escape(did)}</span>'
        item = QGraphicsTextItem()
        item.setFont(self.fonts.head)
        item.setDefaultTextColor(QColor("#111"))
        item.setHtml(html)
        item.setTextWidth(width)
        item.setPos(x, y)
        self._keep(item, mark)
        return item

    def _keep(self, item: QGraphicsItem, mark: _Mark | None = None) -> None:
        item.mark = mark if mark is not None else _Mark("text", self._next())
        self.canvas.scene().addItem(item)
        self._others.append(item)

    def _drop(self, boxes: dict) -> None:
        scene = self.canvas.scene()
        for item in boxes.values():
            scene.removeItem(item)

    def _add_text(self, text: str, font: QFont, x: float, y: float, colour: str,
                  mark: _Mark | None = None) -> QGraphicsSimpleTextItem:
        item = QGraphicsSimpleTextItem(text)
        item.setFont(font)
        item.setBrush(QBrush(QColor(colour)))
        item.setPos(x, y)
        self._keep(item, mark)
        return item

    def _folded(self, rows, y: float) -> float:
        blocks = sum(len(a) for _, _, a in rows)
        item = self._add_text(f"… {len(rows):,} lists folded ({blocks:,} blocks): "
                              f"{rows[0][1]} … {rows[-1][1]}", self.fonts.addr, 8, y, "#555",
                              _Mark("folded", self._next(), lists=len(rows), blocks=blocks))
        return y + item.boundingRect().height() + 8

    def _blocks(self, r, addrs, keep, sizes, visits, changed, flags_at, old_boxes, y: float,
                width: float, outside: bool) -> float:
        """Place the kept blocks of list ``r`` as linked boxes, wrapping at ``width``."""
        f = self.fonts
        box_h = f.box_h
        flagged = any(a in flags_at for a in addrs)
        flag_h = f.flag_h if flagged else 0
        x0 = x = 8.0
        y += flag_h
        items: list[tuple[str, int]] = []
        last = -1
        for i in keep:
            if i != last + 1:
                items.append(("gap", i - last - 1))
            items.append(("block", addrs[i]))
            last = i
        if last != len(addrs) - 1:
            items.append(("gap", len(addrs) - 1 - last))
        first_on_line = True
        for what, value in items:
            if what == "block":
                size_text = human_bytes(sizes.get(value, 0))
                w = max(f.width(f.size_m, size_text), f.width(f.addr_m, f"0x{value:x}")) + 16
            else:
                text = f"… {value:,} …"
                w = f.width(f.addr_m, text) + 16
            if x + w > width - 8 and x > x0:
                x = x0
                y += box_h + 12 + flag_h
                first_on_line = True
            if what == "gap":
                pill = QGraphicsRectItem(0, 0, w, box_h)
                pill.setPos(x, y)
                pill.setPen(QPen(QColor("#999"), 1.5, Qt.DashLine))
                pill.setBrush(QBrush(QColor("#f2f2f2")))
                self._keep(pill, _Mark("gap", self._next(), count=value))
                label = QGraphicsSimpleTextItem(text, pill)
                label.setFont(f.addr)
                label.setBrush(QBrush(QColor("#444")))
                label.setPos(8, (box_h - f.addr_m.height()) / 2)
            else:
                box = old_boxes.pop(value, None)
                if box is None:
                    box = BlockBox(f, value)
                    self.canvas.scene().addItem(box)
                state = "visited" if value in visits else "changed" if value in changed else ""
                box.restyle(size_text, state, visits.get(value, 0), flags_at.get(value, ()),
                            not first_on_line, outside)
                box.list_index, box.order = r, self._next()
                box.setPos(x, y)
                self._boxes[value] = box
            first_on_line = False
            x += w + GAP_X
        return y + box_h

    def _place_ring(self) -> None:
        box = self._boxes.get(self.selected) if self.selected is not None else None
        self._ring_addr = None if box is None else self.selected
        for ring in self._ring:
            if box is None:
                ring.hide()
            else:
                ring.setRect(QRectF(box.pos(), box.pos() + QPointF(box.w, self.fonts.box_h))
                             .adjusted(-3, -3, 3, 3))
                ring.show()
        if box is not None:
            self.canvas.ensureVisible(box, 20, 20)

    # ---------------------------------------------------------------- mouse
    def _clicked(self, addr: int | None) -> None:
        self.set_selection(addr)
        self.block_clicked.emit(-1 if addr is None else addr)

    def _hovered(self, addr: int | None) -> None:
        if addr != self._hover:
            self._hover = addr
            self.block_hovered.emit(-1 if addr is None else addr)
