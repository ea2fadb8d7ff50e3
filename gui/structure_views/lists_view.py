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

Legible past a few hundred blocks: at most :data:`MAX_LISTS` lists and
:data:`BLOCK_BUDGET` boxes are drawn; a long list keeps its first and last
blocks and every block the step lit, the selection and the pointers, with a
"... 812 blocks ..." pill for each run left out, and runs of lists fold into
one line.  :attr:`summary` says what was left out; the view scrolls.
"""

from __future__ import annotations

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetricsF, QPainter, QPen
from PySide6.QtWidgets import (QFrame, QGraphicsItem, QGraphicsLineItem, QGraphicsRectItem,
                               QGraphicsScene, QGraphicsSimpleTextItem, QGraphicsTextItem,
                               QGraphicsView, QVBoxLayout)

from ...allocators import events as ev
from ...allocators.structure import parse_tlsf_key
from .. import palette
from ..gauges import human_bytes
from . import register_view
from .base import StructureView

#: lists drawn at most; beyond, runs of lists fold into one line
MAX_LISTS = 60
#: boxes drawn at most over all lists
BLOCK_BUDGET = 400
#: a list gets at least this many boxes, and at most PER_LIST_MAX
PER_LIST_MIN, PER_LIST_MAX = 12, 200

# item data keys
ROLE, ADDR, VALUE = 0, 1, 2


def labelled_lists(structure: dict) -> list[tuple[tuple | None, str, list[int]]]:
    """Any structure (docs/structure.md) as ``[(key, label, [addrs])]``, in
    the structure's own order, the blocks kept outside it last.  ``key`` is
    how the policy's events name the list (``ListInsert.where``: ``(k,)`` for
    AVAIL[k] and nextf[k], ``(fl, sl)`` for a TLSF list), or None."""
    kind = structure.get("kind")
    out: list[tuple[tuple | None, str, list[int]]] = []
    if kind == "address-ring":
        out.append((None, "free list in address order, from base", list(structure["free_list"])))
    elif kind == "ring":
        out.append((None, "free list from the head", list(structure["free_list"])))
    elif kind == "tree":
        root = structure.get("root")
        for node in structure["nodes"]:
            label = f"size {node['key']:,}" + (" (root)" if node["addr"] == root else "")
            out.append((None, label, list(node["blocks"])))
    elif kind == "buddy":
        for k in sorted(structure["avail"], key=int):
            out.append(((int(k),), f"AVAIL[{k}] ({human_bytes(1 << int(k))})",
                        list(structure["avail"][k])))
    elif kind == "tlsf":
        for key in sorted(structure["lists"], key=parse_tlsf_key):
            fl, sl = parse_tlsf_key(key)
            out.append(((fl, sl), f"list ({fl}, {sl})", list(structure["lists"][key])))
    elif kind == "buckets":
        sizes = structure.get("block_sizes", {})
        for k in sorted(structure["buckets"], key=int):
            size = sizes.get(k)
            label = f"nextf[{k}]" + (f" ({human_bytes(size)} blocks)" if size else "")
            out.append(((int(k),), label, list(structure["buckets"][k])))
    elif "lists" in structure:
        out.extend(((str(label),), str(label), list(addrs))
                   for label, addrs in structure["lists"].items())
    else:
        out.append((None, "free blocks", sorted(structure.get("sizes", {}))))
    for o in structure.get("outside", ()):
        out.append((None, f"outside: {o['why']}", [o["addr"]]))
    return out


def list_marks(explained, upto: int | None = None) -> dict[tuple, list[str]]:
    """{list key: what the step did to that list, in a few words}, from the
    events that name a list rather than a block in it (a block taken off a
    list is no longer drawn there)."""
    marks: dict[tuple, list[str]] = {}
    for e in explained:
        if upto is not None and e.index > upto:
            break
        x = e.event
        if isinstance(x, ev.ListRemove):
            marks.setdefault(tuple(x.where), []).append(f"took 0x{x.addr:x}")
        elif isinstance(x, ev.ListInsert):
            marks.setdefault(tuple(x.where), []).append(f"pushed 0x{x.addr:x}")
        elif isinstance(x, ev.AvailProbe):
            marks.setdefault((x.order,), []).append("probed" + (" (empty)" if x.first is None else ""))
        elif isinstance(x, ev.BucketRefill):
            marks.setdefault((x.bucket,), []).append(f"refilled with {x.count} blocks")
        elif isinstance(x, ev.MappingSearch):
            marks.setdefault((x.fl, x.sl), []).append("the search starts here")
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


class _Canvas(QGraphicsView):
    """The scrolling scene; mouse events go back to the view."""

    def __init__(self, owner: "ListsView") -> None:
        super().__init__()
        self.owner = owner
        self.setScene(QGraphicsScene(self))
        self.setRenderHint(QPainter.Antialiasing)
        self.setRenderHint(QPainter.TextAntialiasing)
        self.setAlignment(Qt.AlignLeft | Qt.AlignTop)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        self.setFrameShape(QFrame.NoFrame)
        self.setBackgroundBrush(QBrush(QColor("white")))
        self.setMouseTracking(True)
        self.setFocusPolicy(Qt.NoFocus)     # the window's keys step the trace

    def block_at(self, pos) -> int | None:
        item = self.itemAt(pos)
        while item is not None:
            if item.data(ROLE) == "block":
                return item.data(ADDR)
            item = item.parentItem()
        return None

    def mousePressEvent(self, event) -> None:
        if event.button() == Qt.LeftButton:
            self.owner._clicked(self.block_at(event.position().toPoint()))
            event.accept()
            return
        super().mousePressEvent(event)

    def mouseMoveEvent(self, event) -> None:
        self.owner._hovered(self.block_at(event.position().toPoint()))
        super().mouseMoveEvent(event)

    def leaveEvent(self, event) -> None:
        self.owner._hovered(None)
        super().leaveEvent(event)

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self.owner._width_changed()


@register_view("lists")
class ListsView(StructureView):
    """Labelled lists of free blocks; see the module docstring.

    :meth:`drawn` gives ``{"lists": [{"label", "blocks", "skipped"}],
    "folded_lists", "folded_blocks", "visited": [addrs in number order],
    "changed": [addrs], "pointers": {name: addr}, "selected": addr or None,
    "marked_lists": {label: what the step did to it}}``, read back from the
    scene's items."""

    kinds = ("lists",)

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.canvas = _Canvas(self)
        box = QVBoxLayout(self)
        box.setContentsMargins(0, 0, 0, 0)
        box.addWidget(self.canvas)
        self.structure: dict | None = None
        self.explained: list = []
        self.selected: int | None = None
        self.current_event: int | None = None
        self._hover: int | None = None
        self._boxes: dict[int, QGraphicsRectItem] = {}
        self._ring: list[QGraphicsRectItem] = []
        self._laid_width = 0
        base = self.font().pointSizeF()
        self.size_font = QFont(self.font())
        self.size_font.setPointSizeF(base * 1.15)
        self.size_font.setBold(True)
        self.addr_font = QFont(self.font())
        self.addr_font.setPointSizeF(base * 0.9)
        self.head_font = QFont(self.font())
        self.head_font.setPointSizeF(base * 1.1)
        self.head_font.setBold(True)
        self.mark_font = QFont(self.font())       # visit numbers and pointer flags
        self.mark_font.setPointSizeF(base)
        self.mark_font.setBold(True)

    # ------------------------------------------------------------- contract
    def show_step(self, structure: dict | None, explained: list, record=None) -> None:
        self.structure = structure
        self.explained = list(explained or ())
        self._layout()

    def set_selection(self, addr: int | None) -> None:
        self.selected = addr
        if addr is not None and addr not in self._boxes and self._holds(addr):
            self._layout()          # it was folded away: draw it
        self._place_ring()

    def set_current_event(self, index: int | None) -> None:
        if index != self.current_event:
            self.current_event = index
            self._layout()

    def drawn(self) -> dict:
        lists: list[dict] = []
        out = {"lists": lists, "folded_lists": 0, "folded_blocks": 0, "visited": [],
               "changed": [], "pointers": {}, "selected": None, "marked_lists": {}}
        numbers = []
        # items in the order they were added (a list's heading first)
        for item in sorted(self.canvas.scene().items(), key=lambda i: i.data(VALUE + 1) or 0):
            role = item.data(ROLE)
            if role == "header":
                lists.append({"label": item.data(VALUE), "blocks": [], "skipped": 0})
                if item.data(ADDR):
                    out["marked_lists"][item.data(VALUE)] = item.data(ADDR)
            elif role == "block":
                lists[-1]["blocks"].append(item.data(ADDR))
                if item.data(VALUE) == "changed":
                    out["changed"].append(item.data(ADDR))
            elif role == "gap":
                lists[-1]["skipped"] += item.data(VALUE)
            elif role == "folded":
                out["folded_lists"] += item.data(VALUE)[0]
                out["folded_blocks"] += item.data(VALUE)[1]
            elif role == "number":
                numbers.append((item.data(VALUE), item.data(ADDR)))
            elif role == "pointer":
                out["pointers"][item.data(VALUE)] = item.data(ADDR)
            elif role == "selection" and item.isVisible():
                out["selected"] = item.data(ADDR)
        out["visited"] = [a for _, a in sorted(numbers)]
        return out

    def box_centre(self, addr: int):
        """The viewport point at the middle of ``addr``'s box (tests click it), or None."""
        item = self._boxes.get(addr)
        if item is None:
            return None
        self.canvas.ensureVisible(item)
        return self.canvas.mapFromScene(item.sceneBoundingRect().center())

    # ------------------------------------------------------------- drawing
    def _holds(self, addr: int) -> bool:
        return self.structure is not None and addr in self.structure.get("sizes", {})

    def _width_changed(self) -> None:
        w = self.canvas.viewport().width()
        if self.structure is not None and abs(w - self._laid_width) > 24:
            self._layout()

    def _layout(self) -> None:
        scene = self.canvas.scene()
        scene.clear()
        self._boxes = {}
        self._ring = []
        self._order = 0
        self._laid_width = width = max(self.canvas.viewport().width(), 240)
        s = self.structure
        if s is None:
            self.summary = ""
            self._text("nothing to show", self.head_font, 8, 8, "#555")
            scene.setSceneRect(QRectF(0, 0, width, 40))
            return
        sizes = s.get("sizes", {})
        rows = labelled_lists(s)
        visits, changed = lit_blocks(self.explained, self.current_event)
        marks = list_marks(self.explained, self.current_event)
        pointers = {p["name"]: p["addr"] for p in s.get("pointers", ())}
        wanted_addrs = set(visits) | set(changed) | {a for a in pointers.values() if a is not None}
        if self.selected is not None:
            wanted_addrs.add(self.selected)

        # which lists to draw
        interesting = {i for i, (key, _, addrs) in enumerate(rows)
                       if key in marks or wanted_addrs.intersection(addrs)}
        if len(rows) <= MAX_LISTS:
            shown_rows = list(range(len(rows)))
        else:
            keep = set(range(MAX_LISTS * 2 // 3)) | set(range(len(rows) - MAX_LISTS // 6, len(rows)))
            shown_rows = sorted(keep | interesting)
        filled = sum(1 for r in shown_rows if rows[r][2])
        cap = max(PER_LIST_MIN, min(PER_LIST_MAX, BLOCK_BUDGET // max(1, filled)))

        y = 6.0
        folded_lists = folded_blocks = cut_lists = drawn_blocks = 0
        prev = -1
        pad = 8.0
        for r in shown_rows + [len(rows)]:
            if r != prev + 1:
                y = self._folded(rows[prev + 1:r], y, width)
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
            at_sentinel = [name for name, a in pointers.items()
                           if a is None and r == 0 and s.get("kind") in ("address-ring", "ring")]
            if at_sentinel:
                head += "   (" + ", ".join(at_sentinel) + " → base)"
            item = QGraphicsTextItem()
            item.setFont(self.head_font)
            item.setDefaultTextColor(QColor("#111"))
            mark = marks.get(key) if key is not None else None
            html = _escape(head)
            if mark:
                html += (f' <span style="color:{palette.PLACED}">◀ this step: '
                         f'{_escape(", ".join(mark))}</span>')
            item.setHtml(html)
            item.setTextWidth(width - 2 * pad)       # a long heading wraps
            item.setPos(pad - 4, y)
            self._tag(item, "header", label)
            item.setData(ADDR, ", ".join(mark) if mark else None)
            self.canvas.scene().addItem(item)
            y += item.boundingRect().height() + 2
            if not addrs:
                y += 6
                continue
            on_row = {a for a in pointers.values() if a in index_of}
            y = self._blocks(addrs, keep, sizes, visits, changed, pointers, bool(on_row), y, width,
                             outside=label.startswith("outside:"))
            y += 10
        total_blocks = sum(len(a) for _, _, a in rows)
        notes = []
        if drawn_blocks < total_blocks:
            notes.append(f"{drawn_blocks:,} of {total_blocks:,} blocks drawn")
        if cut_lists:
            notes.append(f"{cut_lists:,} list{'s' if cut_lists > 1 else ''} cut to {'their' if cut_lists > 1 else 'its'} "
                         "first and last blocks and what the step touched")
        if folded_lists:
            notes.append(f"{folded_lists:,} of {len(rows):,} lists folded")
        self.summary = "; ".join(notes)
        # the selection ring: a black ring with a white core, as on the map
        for colour, w, z in ((palette.SELECTED, 7, 30), (palette.SELECTED_CORE, 2.5, 31)):
            ring = QGraphicsRectItem()
            pen = QPen(QColor(colour), w)
            pen.setJoinStyle(Qt.MiterJoin)
            ring.setPen(pen)
            ring.setBrush(Qt.NoBrush)
            ring.setZValue(z)
            ring.setData(ROLE, "selection" if z == 31 else "selection-outer")
            ring.hide()
            scene.addItem(ring)
            self._ring.append(ring)
        scene.setSceneRect(QRectF(0, 0, width, y + 6))
        self._place_ring()
        if self.selected not in self._boxes:
            # follow the action: the first block the step lit, else the search pointer
            lit = sorted((a for a in visits if a in self._boxes), key=visits.get)
            lit += [a for a in changed if a in self._boxes]
            lit += [a for a in pointers.values() if a in self._boxes]
            if lit:
                self.canvas.ensureVisible(self._boxes[lit[0]], 20, 40)

    def _tag(self, item: QGraphicsItem, role: str, value=None, addr=None) -> None:
        self._order += 1
        item.setData(ROLE, role)
        item.setData(VALUE, value)
        item.setData(ADDR, addr)
        item.setData(VALUE + 1, self._order)

    def _text(self, text: str, font: QFont, x: float, y: float, colour: str, role: str = "text",
              value=None, parent=None) -> QGraphicsSimpleTextItem:
        item = QGraphicsSimpleTextItem(text, parent)
        item.setFont(font)
        item.setBrush(QBrush(QColor(colour)))
        item.setPos(x, y)
        self._tag(item, role, value)
        if parent is None:
            self.canvas.scene().addItem(item)
        return item

    def _folded(self, rows, y: float, width: float) -> float:
        blocks = sum(len(a) for _, _, a in rows)
        item = self._text(f"… {len(rows):,} lists folded ({blocks:,} blocks): "
                          f"{rows[0][1]} … {rows[-1][1]}", self.addr_font, 8, y, "#555",
                          role="folded", value=(len(rows), blocks))
        return y + item.boundingRect().height() + 8

    def _blocks(self, addrs, keep, sizes, visits, changed, pointers, flagged: bool, y: float,
                width: float, outside: bool) -> float:
        """Draw the kept blocks of one list as linked boxes, wrapping at ``width``."""
        scene = self.canvas.scene()
        size_h = self.size_font.pointSizeF() * 1.45
        addr_h = self.addr_font.pointSizeF() * 1.45
        box_h = size_h + addr_h + 8
        flag_h = self.mark_font.pointSizeF() * 1.8 if flagged else 0
        gap_x = 14.0
        x0 = x = 8.0
        y += flag_h
        names_at = {}
        for name, a in pointers.items():
            if a is not None:
                names_at.setdefault(a, []).append(name)
        previous = None
        items = []
        last = -1
        for i in keep:
            if i != last + 1:
                items.append(("gap", i - last - 1))
            items.append(("block", addrs[i]))
            last = i
        if last != len(addrs) - 1:
            items.append(("gap", len(addrs) - 1 - last))
        fm_size = QFontMetricsF(self.size_font)
        fm_addr = QFontMetricsF(self.addr_font)
        for what, value in items:
            if what == "block":
                size_text = human_bytes(sizes.get(value, 0))
                addr_text = f"0x{value:x}"
                w = max(fm_size.horizontalAdvance(size_text), fm_addr.horizontalAdvance(addr_text)) + 16
            else:
                text = f"… {value:,} …"
                w = fm_addr.horizontalAdvance(text) + 16
            if x + w > width - 8 and x > x0:
                x = x0
                y += box_h + 12 + flag_h
                previous = None
            if previous is not None:
                link = QGraphicsLineItem(previous, y + box_h / 2, x, y + box_h / 2)
                link.setPen(QPen(QColor("#777"), 2))
                self._tag(link, "link")
                scene.addItem(link)
            if what == "gap":
                pill = QGraphicsRectItem(0, 0, w, box_h)
                pill.setPos(x, y)
                pill.setPen(QPen(QColor("#999"), 1.5, Qt.DashLine))
                pill.setBrush(QBrush(QColor("#f2f2f2")))
                self._tag(pill, "gap", value)
                scene.addItem(pill)
                self._text(text, self.addr_font, 8, (box_h - addr_h) / 2, "#444", parent=pill)
            else:
                self._box(value, size_text, addr_text, x, y, w, box_h, size_h, visits, changed,
                          names_at.get(value, ()), outside)
            previous = x + w
            x += w + gap_x
        return y + box_h

    def _box(self, addr, size_text, addr_text, x, y, w, h, size_h, visits, changed, names,
             outside: bool) -> None:
        scene = self.canvas.scene()
        box = QGraphicsRectItem(0, 0, w, h)
        box.setPos(x, y)
        box.setBrush(QBrush(QColor(palette.BLUISH_GREEN if outside else palette.YELLOW)))
        state = "visited" if addr in visits else "changed" if addr in changed else ""
        if state == "visited":
            pen = QPen(QColor(palette.SEARCHED), 4)
        elif state == "changed":
            pen = QPen(QColor(palette.PLACED), 4)
        else:
            pen = QPen(QColor("#555"), 1.2)
        pen.setJoinStyle(Qt.MiterJoin)
        box.setPen(pen)
        box.setZValue(2)
        self._tag(box, "block", state, addr)
        scene.addItem(box)
        self._boxes[addr] = box
        ink = "white" if outside else "#111"
        self._text(size_text, self.size_font, 8, 3, ink, parent=box)
        self._text(addr_text, self.addr_font, 8, 3 + size_h, ink, parent=box)
        if state == "visited":
            n = visits[addr]
            badge = QGraphicsSimpleTextItem(str(n))
            badge.setFont(self.mark_font)
            badge.setBrush(QBrush(QColor("black")))
            r = badge.boundingRect()
            back = QGraphicsRectItem(0, 0, r.width() + 8, r.height() + 2)
            back.setBrush(QBrush(QColor(palette.SEARCHED)))
            back.setPen(QPen(Qt.NoPen))
            back.setPos(x + w - r.width() - 6, y - r.height() + 2)
            back.setZValue(5)
            badge.setParentItem(back)
            badge.setPos(4, 1)
            self._tag(back, "number", n, addr)
            scene.addItem(back)
        for k, name in enumerate(names):
            flag = QGraphicsSimpleTextItem(f"▼ {name}")
            flag.setFont(self.mark_font)
            flag.setBrush(QBrush(QColor(palette.SEARCHED).darker(140)))
            flag.setPos(x + 2, y - flag.boundingRect().height() * (k + 1) - 1)
            self._tag(flag, "pointer", name, addr)
            scene.addItem(flag)

    def _place_ring(self) -> None:
        box = self._boxes.get(self.selected) if self.selected is not None else None
        for ring in self._ring:
            if box is None:
                ring.hide()
                ring.setData(ADDR, None)
            else:
                ring.setRect(box.sceneBoundingRect().adjusted(-3, -3, 3, 3))
                ring.setData(ADDR, self.selected)
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

