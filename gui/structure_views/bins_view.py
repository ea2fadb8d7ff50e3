"""dlmalloc's bins: the generic lists view, with what the bins alone do not say.

Lea's malloc.c 2.6 keeps beside its bins ``binblocks``, ``last_remainder``,
``top`` and the chunks ``mmap_chunk`` maps apart (docs/structure.md, "Per
kind", ``bins``; allocators/structure_kinds/bins.py).  The bins are drawn as
the lists view draws any kind (lists_view.py, titled "Free structure: bins,
drawn as lists"); above them the bin map, its 32 bits as cells (yellow when
set, each covering four bins; the bits the step's scan tested numbered in
orange, a bit it set or cleared in vermillion), a line naming the last
remainder and top (or saying there is none), and below the bins the chunks
mmapped apart from the heap, one box each, outside the heap's address range.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor, QPen
from PySide6.QtWidgets import QGraphicsRectItem, QGraphicsSimpleTextItem

from heapscope.allocators.dlmalloc import BINBLOCKWIDTH, BinmapChange, BinmapProbe, Mapped, Unmapped
from .. import palette
from ..gauges import human_bytes
from . import register_view
from .lists_view import GAP_X, ListsView, _Mark


@register_view("bins")
class BinsView(ListsView):
    """The lists view of dlmalloc's bins, with the bin map above them and the
    mmapped chunks below; see the module docstring.

    :meth:`drawn` gives the lists view's keys and ``"binmap": {"bits": int
    the cells spell, "probed": [bits in scan order], "changed": [bits]}``,
    ``"kept": {"last_remainder": addr or None, "top": addr or None}`` and
    ``"mapped": [(addr, size, lit)]``."""

    def drawn(self) -> dict:
        out = super().drawn()
        if "binmap" in out:
            out["binmap"]["probed"] = [b for _, b in sorted(out["binmap"]["probed"])]
        return out

    def _read_mark(self, m: _Mark, out: dict) -> None:
        if m.role == "binbit":
            binmap = out.setdefault("binmap", {"bits": 0, "probed": [], "changed": []})
            if m.set:
                binmap["bits"] |= 1 << m.bit
            if m.number:
                binmap["probed"].append((m.number, m.bit))
            if m.changed:
                binmap["changed"].append(m.bit)
        elif m.role == "kept":
            out["kept"] = dict(m.kept)
        elif m.role == "mapped":
            out.setdefault("mapped", []).append((m.addr, m.size, m.lit))

    def _above_lists(self, s: dict, y: float, width: float) -> float:
        """``binblocks`` as 32 cells (bit b: bins 4b..4b+3), the step's scan
        numbered on them, then the last remainder and top in words."""
        f = self.fonts
        probed: dict[int, int] = {}
        changed: set[int] = set()
        for e in self.explained:
            if self.current_event is not None and e.index > self.current_event:
                break
            if isinstance(e.event, BinmapProbe):
                probed.setdefault(e.event.block, len(probed) + 1)
            elif isinstance(e.event, BinmapChange):
                changed.add(e.event.block)
        bits = int(s.get("binblocks") or 0)
        nbits = max(32, bits.bit_length())
        head = (f"bin map (binblocks) · {bin(bits).count('1')} of {nbits} bits set · "
                f"bit b: bins {BINBLOCKWIDTH}b..{BINBLOCKWIDTH}b+{BINBLOCKWIDTH - 1}")
        did = []
        if probed:
            did.append(f"the scan tested {len(probed)} bit{'s' if len(probed) > 1 else ''}")
        if changed:
            did.append("changed bit " + ", ".join(map(str, sorted(changed))))
        item = self._heading(head, ", ".join(did), 4, y, width - 16)
        y += item.boundingRect().height() + 2 + f.mark_m.height()
        cell = max(f.width(f.addr_m, "31") + 8, f.addr_m.height() + 6)
        fits = int((width - 16) // cell)
        per_row = next((n for n in (nbits, 16, 8) if n <= fits), 8)   # whole rows of 16 or 8
        for b in range(nbits):
            row, col = divmod(b, per_row)
            x, cy = 8 + col * cell, y + row * (cell + f.mark_m.height() + 4)
            on = bool(bits >> b & 1)
            rect = QGraphicsRectItem(0, 0, cell, cell)
            rect.setPos(x, cy)
            if b in changed:
                pen = QPen(QColor(palette.PLACED), 3)
            elif b in probed:
                pen = QPen(QColor(palette.SEARCHED), 3)
            else:
                pen = QPen(QColor("#777"), 1)
            rect.setPen(pen)
            rect.setBrush(QBrush(QColor(palette.YELLOW if on else "white")))
            rect.setToolTip(f"binblocks bit {b} = {int(on)}: bins {BINBLOCKWIDTH * b}.."
                            f"{BINBLOCKWIDTH * b + BINBLOCKWIDTH - 1} "
                            + ("may hold chunks" if on else "hold none"))
            self._keep(rect, _Mark("binbit", self._next(), bit=b, set=on, number=probed.get(b, 0),
                                   changed=b in changed))
            label = QGraphicsSimpleTextItem(str(b), rect)
            label.setFont(f.addr)
            label.setBrush(QBrush(QColor("#111" if on else "#888")))
            label.setPos((cell - f.width(f.addr_m, str(b))) / 2, (cell - f.addr_m.height()) / 2)
            if b in probed:
                number = QGraphicsSimpleTextItem(str(probed[b]), rect)
                number.setFont(f.mark)
                number.setBrush(QBrush(QColor(palette.SEARCHED).darker(140)))
                number.setPos((cell - f.width(f.mark_m, str(probed[b]))) / 2, -f.mark_m.height() - 1)
        rows = -(-nbits // per_row)
        y += rows * (cell + f.mark_m.height() + 4) + 2

        def named(key: str) -> str:
            a = s.get(key)
            if a is None:
                return "none"
            size = s.get("sizes", {}).get(a)
            return f"0x{a:x}" + (f" ({human_bytes(size)})" if size is not None else "")
        kept = {"last_remainder": s.get("last_remainder"), "top": s.get("top")}
        text = f"last remainder: {named('last_remainder')}   ·   top: {named('top')}   (drawn below the bins)"
        if f.width(f.addr_m, text) > width - 16:          # a narrow view: one per line
            text = f"last remainder: {named('last_remainder')}\ntop: {named('top')}\n(drawn below the bins)"
        line = self._add_text(text, f.addr, 8, y, "#333", _Mark("kept", self._next(), kept=kept))
        return y + line.boundingRect().height() + 10

    def _below_lists(self, s: dict, y: float, width: float) -> float:
        """The chunks mmapped apart from the heap (``mmap_chunk``), one box
        each, the step's map or unmap lit."""
        f = self.fonts
        regions = s.get("mapped") or []
        lit: set[int] = set()
        gone: list[tuple[int, int]] = []
        for e in self.explained:
            if self.current_event is not None and e.index > self.current_event:
                break
            if isinstance(e.event, Mapped):
                lit.add(e.event.addr)
            elif isinstance(e.event, Unmapped):
                gone.append((e.event.addr, e.event.size))
        total = sum(r["size"] for r in regions)
        head = (f"mmapped apart from the heap · {len(regions)} chunk{'' if len(regions) == 1 else 's'}"
                + (f" · {human_bytes(total)}" if regions else " (none)"))
        did = [f"mapped 0x{a:x}" for a in sorted(lit)] + [f"unmapped 0x{a:x} ({human_bytes(n)})"
                                                          for a, n in gone]
        item = self._heading(head, ", ".join(did), 4, y, width - 16)
        y += item.boundingRect().height() + 2
        x = 8.0
        for r in regions:
            addr, size = r["addr"], r["size"]
            top_text, low_text = f"{human_bytes(size)} in use", f"0x{addr:x}"
            w = max(f.width(f.size_m, top_text), f.width(f.addr_m, low_text)) + 16
            if x + w > width - 8 and x > 8:
                x, y = 8.0, y + f.box_h + 10
            rect = QGraphicsRectItem(0, 0, w, f.box_h)
            rect.setPos(x, y)
            on = addr in lit
            rect.setPen(QPen(QColor(palette.PLACED), 4) if on else QPen(QColor("#555"), 1.2, Qt.DashLine))
            rect.setBrush(QBrush(QColor(palette.BLUE)))
            rect.setToolTip(f"mmap'ed region 0x{addr:x}, {size:,} bytes, payload 0x{r['payload']:x}: "
                            "one chunk apart from the heap, given back by munmap when freed")
            self._keep(rect, _Mark("mapped", self._next(), addr=addr, size=size, lit=on))
            for text, font, dy in ((top_text, f.size, 3), (low_text, f.addr, 3 + f.size_m.height())):
                t = QGraphicsSimpleTextItem(text, rect)
                t.setFont(font)
                t.setBrush(QBrush(QColor("white")))
                t.setPos(8, dy)
            x += w + GAP_X
        return y + (f.box_h + 10 if regions else 6)
