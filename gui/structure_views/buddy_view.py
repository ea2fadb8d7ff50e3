"""The buddy view: Knuth's binary buddy system (TAOCP 1, 2.5, algorithms R and S).

What it draws (docs/gui.md, "The buddy view"), one horizontal band per order
k, largest on top, so that everything about blocks of 2**k bytes is on one
line:

* on the left, ``AVAIL[k]``: its block size, its length and its first blocks
  (front first: step S3 pushes at the front and R2 takes from it).  The lists
  algorithm R looked at this step (``AvailProbe``) are numbered in order,
  empty ones marked so;
* on the right, the **split tree of the chunk the step worked in** (an icicle:
  the chunk on top, each split block's two halves on the band below it, a
  block reaching down through the bands it was not split into), with the
  step's splits and merges numbered in the same sequence as the probes, and
  under each pair of buddies the XOR that names them: ``buddy = x XOR 2**k``
  relative to the chunk.  Under the tree the same in words, with the
  arithmetic;
* below, **every chunk** as a small split tree, in address order (the step's
  chunk outlined).  Runs of three or more chunks that are each one whole block
  in one state are drawn as one tile that says how many (the view's
  summary says so too).

The focus chunk keeps one item per block, keyed by (address, order), so an
animation can cut a block in two or join two buddies; the overview keeps one
item per chunk.  Shown event by event with a transition
(:meth:`BuddyView.set_current_event`), a split's two halves come down out of
the block cut, one band per event, so a cascade of splits goes down level by
level; a merge's two buddies go up into the block they make; a block that
changes its extent stretches to it; the words cross-fade.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field
from typing import NamedTuple

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QFontMetricsF
from PySide6.QtWidgets import QGraphicsSimpleTextItem

from heapscope.allocators import events as ev
from ..predict_bar import wrap_lines
from . import register_view
from .transition import Morph, cross_fade, lerp_rect
from .scene_view import (EMPTY_FILL, FAINT, FOCUS_MARGIN, FREE_FILL, INK, INSERTED, MIN_DESIGN_PX, MIN_FOLLOW_SCALE,
                         SELECTED, SPLIT_FILL, TAKEN, USED_FILL, VISITED, Glyph, SceneStructureView,
                         fitted_font, font, pen, short_bytes, size_of, swatch)

#: height of one order's band
BAND_H = 56.0
#: the AVAIL table: label, size, length, then the first blocks as chips
AVAIL_X, SIZE_X, COUNT_X, CHIPS_X = 40.0, 156.0, 226.0, 310.0
CHIP_W, CHIP_GAP = 92.0, 6.0
#: chips drawn per list (at most: fewer when the view is too narrow for them
#: at a legible zoom, :meth:`BuddyView.chips_that_fit`)
CHIPS_SHOWN = 3
#: room kept right of the chips for "+N" (how many more the list holds)
MORE_W = 48.0
#: the words under the table, one line this high
NOTE_LINE_H = 26.0
#: where the focus chunk's split tree starts, and its width
TREE_X = CHIPS_X + CHIPS_SHOWN * (CHIP_W + CHIP_GAP) + 80.0
TREE_W = 768.0
#: the overview of all chunks: tiles per row, tile size
TILES_PER_ROW = 5
TILE_W, TILE_LEVEL_H, TILE_GAP = 240.0, 7.0, 26.0
#: a chunk with more blocks than this is drawn in one item in the focus band too
MAX_BLOCK_ITEMS = 1024
#: runs of at least this many whole chunks in one state are collapsed into one tile
MIN_RUN = 3


def rel(x: int) -> str:
    return f"+{x:#x}"


def chunk_nodes(chunk: int, order: int, leaves: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """The chunk's split tree as ``(addr, order, state)`` nodes: the leaves
    (blocks, 'free' or 'used') and every block they were split out of
    ('split'), largest first."""
    split = set()
    for addr, k, _ in leaves:
        off = addr - chunk
        for j in range(k + 1, order + 1):
            split.add((chunk + (off >> j << j), j))
    nodes = [(a, j, "split") for a, j in split] + [tuple(x) for x in leaves]
    nodes.sort(key=lambda n: (-n[1], n[0]))
    return nodes


# ------------------------------------------------------------------ items

class BlockItem(Glyph):
    """One block of the focus chunk's split tree: a leaf (free or used,
    reaching down to the smallest order's band) or a split block."""

    def __init__(self, key) -> None:
        super().__init__(key)
        self.addr, self.order = key
        self.state = "free"
        self.offset = 0
        self.numbers: list[int] = []
        self.role = ""               # "taken", "released", "inserted"
        self.selected = False
        self.setZValue(10)

    def set_geometry(self, w: float, h: float) -> None:
        self.set_rect(QRectF(0, 0, w, h))

    def block_at(self, local: QPointF) -> int | None:
        if self.state != "split" and self.boundingRect().contains(local):
            return self.addr
        return None

    def describe_at(self, local: QPointF) -> str:
        if not self.boundingRect().contains(local):
            return ""
        size = short_bytes(1 << self.order)
        if self.state == "split":
            half = 1 << (self.order - 1)
            return (f"split block of {size} at {self.addr:#x} ({rel(self.offset)} in its chunk): halves "
                    f"{rel(self.offset)} and {rel(self.offset ^ half)} = {rel(self.offset)} XOR {half:#x}")
        return f"{self.state} block {self.addr:#x}: {size}, order {self.order}, {rel(self.offset)} in its chunk"

    def paint(self, painter, option, widget=None) -> None:
        r = self._rect
        fill = {"free": FREE_FILL, "used": USED_FILL, "split": SPLIT_FILL}[self.state]
        painter.setPen(pen("#FFFFFF", 1.0))
        painter.setBrush(QBrush(QColor(fill)))
        painter.drawRect(r)
        band = QRectF(r.left(), r.top(), r.width(), min(r.height(), BAND_H))
        # labels in the top of the band: its bottom is for the XOR brackets
        if r.width() >= 40:
            painter.setPen(pen("#FFFFFF" if self.state == "used" else INK))
            text = "split" if self.state == "split" else short_bytes(1 << self.order)
            painter.setFont(fitted_font(text, r.width() - 6, 17, self.state != "split"))
            painter.drawText(QRectF(r.left(), r.top() + 2, r.width(), 22), Qt.AlignCenter, text)
            if self.state != "split" and r.height() > 1.5 * BAND_H:
                # the offset in the band below: the bottom of this one may hold a bracket
                painter.setFont(fitted_font(rel(self.offset), r.width() - 6, MIN_DESIGN_PX))
                painter.drawText(QRectF(r.left(), r.top() + BAND_H + 2, r.width(), 20), Qt.AlignCenter,
                                 rel(self.offset))
        outline = None
        if self.selected:
            outline = pen(SELECTED, 5)
        elif self.role == "taken":
            outline = pen(TAKEN, 4)
        elif self.role in ("released", "inserted"):
            outline = pen(INSERTED, 3.5, Qt.DashLine)
        elif self.numbers:
            outline = pen(VISITED, 3.5)
        if outline is not None:
            painter.setPen(outline)
            painter.setBrush(Qt.NoBrush)
            w = outline.widthF() / 2
            painter.drawRect(band.adjusted(w, w, -w, -w) if self.state == "split" else r.adjusted(w, w, -w, -w))
        if self.numbers:
            text = ",".join(map(str, self.numbers))
            radius = 13 if len(text) < 3 else 6 + 4 * len(text)
            c = QPointF(r.left() + min(radius + 2, r.width() / 2), r.top() + radius - 4)
            painter.setPen(pen("#FFFFFF", 2))
            painter.setBrush(QBrush(QColor(INK)))
            painter.drawEllipse(c, radius, 13)
            painter.setPen(pen("#FFFFFF"))
            painter.setFont(font(MIN_DESIGN_PX, True))
            painter.drawText(QRectF(c.x() - radius, c.y() - 13, 2 * radius, 26), Qt.AlignCenter, text)


class ChunkGroup(NamedTuple):
    """One tile of the overview: a chunk and its blocks, or a run of
    ``run`` whole chunks of one order in one state.  (A named tuple: a big
    heap has thousands of them on every step.)"""
    chunk: int
    order: int
    leaves: list                    # [[addr, order, state], ...] in address order
    run: int = 1
    run_end: int = 0


def paint_chunk(painter, x0: float, y0: float, width: float, level_h: float, g: ChunkGroup, min_order: int,
                focus: bool, selected: int | None) -> None:
    """A chunk's split tree (an icicle: a block reaches down from its order's
    level to the smallest one; what is above it was split) in the box at
    (x0, y0) of ``width``, one ``level_h`` per order, under a one-line caption."""
    painter.setPen(pen(INK))
    painter.setFont(font(MIN_DESIGN_PX, focus))
    caption = (f"{g.chunk:#x}" if g.run == 1 else
               f"{g.run} \u00d7 {short_bytes(1 << g.order)}: {g.chunk:#x}\u2013{g.run_end:#x}")
    painter.drawText(QRectF(x0, y0, width, 18), Qt.AlignLeft | Qt.AlignVCenter, caption)
    levels = g.order - min_order + 1
    tr = QRectF(x0, y0 + 20, width, levels * level_h)
    scale = width / (1 << g.order)
    painter.setPen(Qt.NoPen)
    if g.run > 1:
        state = g.leaves[0][2]
        painter.setBrush(QBrush(QColor(FREE_FILL if state == "free" else USED_FILL)))
        painter.drawRect(tr)
        painter.setPen(pen("#FFFFFF" if state == "used" else INK))
        painter.setFont(font(MIN_DESIGN_PX, True))
        painter.drawText(tr, Qt.AlignCenter, f"{g.run} whole chunks, {state}")
    else:
        painter.setBrush(QBrush(QColor(SPLIT_FILL)))
        painter.drawRect(tr)
        free, used = QBrush(QColor(FREE_FILL)), QBrush(QColor(USED_FILL))
        for addr, k, state in g.leaves:
            x = tr.left() + (addr - g.chunk) * scale
            y = tr.top() + (g.order - k) * level_h
            painter.setBrush(free if state == "free" else used)
            painter.drawRect(QRectF(x, y, max((1 << k) * scale, 0.8), tr.bottom() - y))
        painter.setPen(pen("#FFFFFF", 0.8))
        for addr, k, state in g.leaves:
            if (1 << k) * scale >= 3:          # a white line between blocks where there is room
                x = tr.left() + (addr - g.chunk) * scale
                painter.drawLine(QPointF(x, tr.top() + (g.order - k) * level_h), QPointF(x, tr.bottom()))
        if selected is not None:
            hit = next((x for x in g.leaves if x[0] == selected), None)
            if hit is not None:
                addr, k, _ = hit
                x = tr.left() + (addr - g.chunk) * scale
                y = tr.top() + (g.order - k) * level_h
                painter.setPen(pen(SELECTED, 3))
                painter.setBrush(Qt.NoBrush)
                painter.drawRect(QRectF(x - 2, y - 2, max((1 << k) * scale, 2) + 4, tr.bottom() - y + 4))
    painter.setBrush(Qt.NoBrush)
    painter.setPen(pen(TAKEN if focus else FAINT, 3 if focus else 1))
    painter.drawRect(tr)


class OverviewItem(Glyph):
    """Every chunk, in address order, as a grid of small split trees painted
    by one item (thousands of chunks would cost thousands of items on every
    step); only the tiles in the exposed area are painted."""

    def __init__(self) -> None:
        super().__init__("overview")
        self.groups: list[ChunkGroup] = []
        self.min_order = 0
        self.focus_chunk: int | None = None
        self.selected_addr: int | None = None
        self.row_y: list[float] = []          # top of each row of tiles
        self.row_h: list[float] = []
        self.setFlag(self.GraphicsItemFlag.ItemUsesExtendedStyleOption)
        self.setZValue(5)

    def set_groups(self, groups: list[ChunkGroup], min_order: int) -> None:
        self.groups, self.min_order = groups, min_order
        self.row_y, self.row_h = [], []
        y = 0.0
        for i in range(0, len(groups), TILES_PER_ROW):
            h = 20 + max(g.order - min_order + 1 for g in groups[i:i + TILES_PER_ROW]) * TILE_LEVEL_H
            self.row_y.append(y)
            self.row_h.append(h)
            y += h + TILE_GAP
        self.set_rect(QRectF(0, 0, TILES_PER_ROW * (TILE_W + TILE_GAP), max(y, 1.0)))

    def tile_rect(self, index: int) -> QRectF:
        row, col = divmod(index, TILES_PER_ROW)
        return QRectF(col * (TILE_W + TILE_GAP), self.row_y[row], TILE_W, self.row_h[row])

    def index_of_chunk(self, chunk: int) -> int | None:
        for i, g in enumerate(self.groups):
            if g.chunk == chunk:
                return i
        return None

    def _group_at(self, local: QPointF) -> tuple[int, ChunkGroup] | None:
        row = bisect_right(self.row_y, local.y()) - 1
        col = int(local.x() // (TILE_W + TILE_GAP))
        if row < 0 or not 0 <= col < TILES_PER_ROW:
            return None
        i = row * TILES_PER_ROW + col
        if i >= len(self.groups) or not self.tile_rect(i).contains(local):
            return None
        return i, self.groups[i]

    def block_at(self, local: QPointF) -> int | None:
        hit = self._group_at(local)
        if hit is None:
            return None
        i, g = hit
        r = self.tile_rect(i)
        if local.y() < r.top() + 20:
            return None
        if g.run > 1:
            return None
        at = g.chunk + int((local.x() - r.left()) / TILE_W * (1 << g.order))
        for addr, k, _ in g.leaves:
            if addr <= at < addr + (1 << k):
                level_top = r.top() + 20 + (g.order - k) * TILE_LEVEL_H
                return addr if local.y() >= level_top else None
        return None

    def describe_at(self, local: QPointF) -> str:
        hit = self._group_at(local)
        if hit is None:
            return ""
        _, g = hit
        if g.run > 1:
            addr, k, state = g.leaves[0]
            return f"{g.run} chunks {g.chunk:#x}\u2013{g.run_end:#x}, each one {state} block of {short_bytes(1 << k)}"
        n_free = sum(1 for x in g.leaves if x[2] == "free")
        text = f"chunk {g.chunk:#x} ({short_bytes(1 << g.order)}): {len(g.leaves)} blocks, {n_free} free"
        a = self.block_at(local)
        if a is not None:
            _, k, state = next(x for x in g.leaves if x[0] == a)
            text += f"; under the mouse: {state} {a:#x}, {short_bytes(1 << k)}"
        return text

    def paint(self, painter, option, widget=None) -> None:
        exposed = option.exposedRect if option is not None else self._rect
        first = max(0, bisect_right(self.row_y, exposed.top()) - 1)
        for row in range(first, len(self.row_y)):
            if self.row_y[row] > exposed.bottom():
                break
            for i in range(row * TILES_PER_ROW, min(len(self.groups), (row + 1) * TILES_PER_ROW)):
                r = self.tile_rect(i)
                if r.intersects(exposed):
                    g = self.groups[i]
                    paint_chunk(painter, r.left(), r.top(), TILE_W, TILE_LEVEL_H, g, self.min_order,
                                g.chunk == self.focus_chunk, self.selected_addr)


class BigChunkItem(Glyph):
    """The focus chunk drawn in one item when it has too many blocks for an
    item each (a big chunk cut into thousands of small blocks)."""

    def __init__(self) -> None:
        super().__init__("big chunk")
        self.group: ChunkGroup | None = None
        self.min_order = 0
        self.selected_addr: int | None = None
        self.setZValue(10)

    def set_group(self, g: ChunkGroup, min_order: int) -> None:
        self.group, self.min_order = g, min_order
        self.set_rect(QRectF(0, -20, TREE_W, 20 + (g.order - min_order + 1) * BAND_H))

    def block_at(self, local: QPointF) -> int | None:
        g = self.group
        if g is None or not QRectF(0, 0, TREE_W, self._rect.bottom()).contains(local):
            return None
        at = g.chunk + int(local.x() / TREE_W * (1 << g.order))
        for addr, k, _ in g.leaves:
            if addr <= at < addr + (1 << k):
                return addr if local.y() >= (g.order - k) * BAND_H else None
        return None

    def describe_at(self, local: QPointF) -> str:
        a = self.block_at(local)
        if a is None:
            return ""
        _, k, state = next(x for x in self.group.leaves if x[0] == a)
        return f"{state} block {a:#x}: {short_bytes(1 << k)}, {rel(a - self.group.chunk)} in its chunk"

    def paint(self, painter, option, widget=None) -> None:
        if self.group is not None:
            paint_chunk(painter, 0, -20, TREE_W, BAND_H, self.group, self.min_order, True, self.selected_addr)


class AvailRowItem(Glyph):
    """``AVAIL[k]``: the order, the block size, the length and the first blocks."""

    def __init__(self, k: int) -> None:
        super().__init__(k)
        self.k = k
        self.count = 0
        self.chips: list[int] = []
        self.numbers: list[int] = []
        self.empty_probe = False
        self.note_folded = False         # its "was empty" would not fit: said under the drawing
        self.taken: int | None = None
        self.inserted: set[int] = set()
        self.selected_addr: int | None = None
        self.shown = CHIPS_SHOWN         # chips the row has room for
        self.setZValue(10)
        self.set_rect(QRectF(0, 0, TREE_X - 40, BAND_H))

    def chip_rects(self) -> list[QRectF]:
        out = []
        x = CHIPS_X
        for _ in self.chips:
            out.append(QRectF(x, 6, CHIP_W, BAND_H - 12))
            x += CHIP_W + CHIP_GAP
        return out

    def block_at(self, local: QPointF) -> int | None:
        for a, r in zip(self.chips, self.chip_rects()):
            if r.contains(local):
                return a
        return None

    def describe_at(self, local: QPointF) -> str:
        if not self._rect.contains(local):
            return ""
        a = self.block_at(local)
        head = f"AVAIL[{self.k}]: free blocks of {short_bytes(1 << self.k)}, {self.count} on the list"
        if a is not None:
            where = "taken off its front this step" if a == self.taken else f"{self.chips.index(a) + 1}. from the front"
            head += f"; {a:#x} ({where})"
        return head

    def paint(self, painter, option, widget=None) -> None:
        painter.setRenderHint(painter.RenderHint.Antialiasing)
        if self.numbers or self.inserted or self.taken is not None:
            colour = TAKEN if self.taken is not None else VISITED if self.numbers else INSERTED
            painter.setPen(pen(colour, 3, Qt.SolidLine if self.numbers or self.taken is not None else Qt.DashLine))
            painter.setBrush(QBrush(QColor(255, 255, 255, 0)))
            right = CHIPS_X + self.shown * (CHIP_W + CHIP_GAP) + MORE_W
            painter.drawRoundedRect(QRectF(AVAIL_X - 6, 3, right - AVAIL_X + 6, BAND_H - 6), 8, 8)
        painter.setPen(pen(INK))
        painter.setFont(font(18, True))
        painter.drawText(QRectF(AVAIL_X, 0, SIZE_X - AVAIL_X, BAND_H), Qt.AlignVCenter | Qt.AlignLeft,
                         f"AVAIL[{self.k}]")
        painter.setFont(font(16))
        painter.drawText(QRectF(SIZE_X, 0, COUNT_X - SIZE_X, BAND_H), Qt.AlignVCenter | Qt.AlignLeft,
                         short_bytes(1 << self.k))
        painter.setFont(fitted_font(str(self.count), CHIPS_X - COUNT_X - 10, 20, True))
        painter.setPen(pen(INK if self.count else FAINT))
        painter.drawText(QRectF(COUNT_X, 0, CHIPS_X - COUNT_X - 8, BAND_H), Qt.AlignVCenter | Qt.AlignRight,
                         str(self.count))
        for a, r in zip(self.chips, self.chip_rects()):
            taken = a == self.taken
            painter.setBrush(QBrush(QColor(EMPTY_FILL if taken else FREE_FILL)))
            if a == self.selected_addr:
                painter.setPen(pen(SELECTED, 4))
            elif taken:
                painter.setPen(pen(TAKEN, 3, Qt.DashLine))
            elif a in self.inserted:
                painter.setPen(pen(INSERTED, 3, Qt.DashLine))
            else:
                painter.setPen(pen(INK, 1.2))
            painter.drawRoundedRect(r, 5, 5)
            painter.setPen(pen(INK))
            painter.setFont(fitted_font(f"{a:#x}", r.width() - 6, MIN_DESIGN_PX))
            painter.drawText(r, Qt.AlignCenter, f"{a:#x}")
        hidden = self.count - len([a for a in self.chips if a != self.taken])
        if hidden > 0:
            x = CHIPS_X + len(self.chips) * (CHIP_W + CHIP_GAP)
            painter.setPen(pen(INK))
            painter.setFont(font(MIN_DESIGN_PX, True))
            painter.drawText(QRectF(x, 0, 80, BAND_H), Qt.AlignVCenter | Qt.AlignLeft, f"+{hidden}")
        if self.empty_probe and not self.note_folded:
            # R1 found it empty; a split of this step may have pushed a block since
            x = CHIPS_X + len(self.chips) * (CHIP_W + CHIP_GAP) + (MORE_W if hidden > 0 else 0)
            painter.setPen(pen(VISITED))
            painter.setFont(font(16, True))
            painter.drawText(QRectF(x, 0, 200, BAND_H), Qt.AlignVCenter | Qt.AlignLeft,
                             "was empty" if self.count else "empty")
        if self.numbers:
            text = ",".join(map(str, self.numbers))
            c = QPointF(AVAIL_X - 22, BAND_H / 2)
            painter.setPen(pen("#FFFFFF", 2))
            painter.setBrush(QBrush(QColor(VISITED)))
            painter.drawEllipse(c, 15, 15)
            painter.setPen(pen(INK))
            painter.setFont(font(16, True))
            painter.drawText(QRectF(c.x() - 15, c.y() - 15, 30, 30), Qt.AlignCenter, text)


class XorItem(Glyph):
    """Two buddies marked by a bracket along the bottom of their band (one
    tick at each end, one at the boundary between them), with the XOR that
    makes one the other's buddy written beside it."""

    def __init__(self, key, left: QRectF, right: QRectF, text: str, number: int, limit: float) -> None:
        super().__init__(key)
        self.left_rect, self.right_rect, self.text, self.number = left, right, text, number
        self.setZValue(30)
        self.label_font = font(16, True)
        width = QFontMetricsF(self.label_font).horizontalAdvance(text) + 14
        y = left.bottom() - 14
        if right.right() + 8 + width <= limit:
            self.label = QRectF(right.right() + 6, y - 12, width, 24)
        elif left.left() - 8 - width >= limit - TREE_W:
            self.label = QRectF(left.left() - 6 - width, y - 12, width, 24)
        else:
            self.label = QRectF((left.left() + right.right() - width) / 2, y - 12, width, 24)
        self.set_rect(left.united(right).united(self.label).adjusted(0, left.height() - 30, 0, 0))

    def describe_at(self, local: QPointF) -> str:
        return self.text if self._rect.contains(local) else ""

    def paint(self, painter, option, widget=None) -> None:
        painter.setRenderHint(painter.RenderHint.Antialiasing)
        a, m, b = self.left_rect.left() + 2, self.left_rect.right(), self.right_rect.right() - 2
        y = self.left_rect.bottom() - 14
        painter.setPen(pen("#FFFFFF", 6))
        painter.drawLine(QPointF(a, y), QPointF(b, y))
        painter.setPen(pen(INK, 2.5))
        painter.drawLine(QPointF(a, y), QPointF(b, y))
        for x in (a, m, b):
            painter.drawLine(QPointF(x, y - 8), QPointF(x, y + 8))
        painter.setPen(pen(INK, 1.5))
        painter.setBrush(QBrush(QColor(255, 255, 255, 240)))
        painter.drawRoundedRect(self.label, 6, 6)
        painter.setFont(self.label_font)
        painter.drawText(self.label, Qt.AlignCenter, self.text)


# ------------------------------------------------------------------ the step

@dataclass
class BuddyStep:
    """What the shown step did, read from its events; one numbering for the
    probes, splits and merges, in event order."""
    probes: list = field(default_factory=list)      # (number, order, first)
    splits: list = field(default_factory=list)      # (number, addr, order, buddy)
    merges: list = field(default_factory=list)      # (number, addr, buddy, order)
    removed: list = field(default_factory=list)     # (addr, order)
    inserted: list = field(default_factory=list)    # (addr, order)
    placed: tuple | None = None                     # (addr, size)
    released: tuple | None = None


def step_orders(step: BuddyStep) -> set[int]:
    """The orders whose AVAIL lists the step's events name: probed, split
    from and into, merged from and into, taken from or pushed on."""
    named = {order for _, order, _ in step.probes}
    named.update(order for _, _, order, _ in step.splits)
    named.update(order - 1 for _, _, order, _ in step.splits)
    named.update(order for _, _, _, order in step.merges)
    named.update(order + 1 for _, _, _, order in step.merges)
    named.update(order for _, order in step.removed + step.inserted)
    return named


def step_rows_rect(rect: QRectF, step: BuddyStep, band_y: dict, room: float, notes: float,
                   bottom: float) -> QRectF:
    """What the camera follows: the AVAIL rows the step's events name (the
    probes, the lists a split or merge fed or emptied) and, when they fit
    ``room`` too, the step's words under the table -- not the top orders a
    big chunk leaves empty above them (issue 24: AVAIL[21..15] shown while
    the step merged into [11] and [12]).  ``rect``: the whole drawing."""
    named = [k for k in step_orders(step) if k in band_y]
    if not named:
        return rect
    y0 = min(band_y[k] for k in named)
    y1 = max(band_y[k] for k in named) + BAND_H
    if y0 <= 0:
        return rect
    if bottom + notes - y0 <= room:
        return QRectF(0, y0, rect.width(), bottom + notes - y0)
    return QRectF(0, y0, rect.width(), y1 - y0)


def read_events(explained: list) -> BuddyStep:
    out = BuddyStep()
    n = 0
    for e in explained:
        event = e.event
        if isinstance(event, ev.AvailProbe):
            n += 1
            out.probes.append((n, event.order, event.first))
        elif isinstance(event, ev.BuddySplit):
            n += 1
            out.splits.append((n, event.addr, event.order, event.buddy))
            out.inserted.append((event.buddy, event.order - 1))
        elif isinstance(event, ev.BuddyMerge):
            n += 1
            out.merges.append((n, event.addr, event.buddy, event.order))
            out.removed.append((event.buddy, event.order))
        elif isinstance(event, ev.ListRemove) and event.where:
            out.removed.append((event.addr, int(event.where[0])))
        elif isinstance(event, ev.ListInsert) and event.where:
            out.inserted.append((event.addr, int(event.where[0])))
        elif isinstance(event, ev.Placed):
            out.placed = (event.addr, event.size)
        elif isinstance(event, ev.Released):
            out.released = (event.addr, event.size)
    out.removed = list(dict.fromkeys(out.removed))
    out.inserted = list(dict.fromkeys(out.inserted))
    return out


class DrawnBlock(NamedTuple):
    addr: int
    order: int
    item: object


# ------------------------------------------------------------------ the view

@register_view("buddy")
class BuddyView(SceneStructureView):
    """AVAIL[k] and the split tree of the step's chunk on one band per order;
    every chunk below.

    :meth:`drawn` keys: ``avail`` ({k: length drawn}), ``avail_front`` ({k:
    [chip addresses]}), ``avail_taken`` ({k: the block taken off it, drawn dashed}), ``probes`` ([(number, k)]), ``focus_chunk``,
    ``focus_blocks`` ([(addr, order, state)] of the focus chunk's items),
    ``chunks`` ({chunk: [(addr, order, state)] leaves} from the overview
    tiles, runs expanded), ``runs`` ([(first chunk, count)]), ``splits`` and
    ``merges`` ([(number, addr, order, buddy)] from the split tree's badges
    and XOR brackets), ``xor`` (the bracket labels), ``notes`` (the lines in
    words), ``taken``, ``released``, ``selected`` (in the focus chunk), ``selected_chip``,
    ``selected_tile`` (in the overview).
    """

    kinds = ("buddy",)
    title = "Binary buddy system"

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.band_layer = self.new_layer(5)
        self.tree_layer = self.new_layer(10)
        self.tile_layer = self.new_layer(10)
        self.note_layer = self.new_layer(30)
        self._rows: dict[int, AvailRowItem] = {}
        self._blocks: dict = {}
        self.overview = OverviewItem()
        self.overview.setParentItem(self.tile_layer)
        self.big_chunk = BigChunkItem()
        self.big_chunk.setParentItem(self.tree_layer)
        self.big_chunk.hide()
        self._notes: list = []
        self._structure: dict | None = None
        self._explained: list = []
        self._upto: int | None = None
        self.focus_chunk: int | None = None
        self.step = BuddyStep()
        self.chips_shown = CHIPS_SHOWN
        self._note_lines = 0
        self._said: list[str] = []
        self._top = 0
        self._scale = 1.0
        self._after: dict | None = None     # the structure after the whole step
        self._collect: list | None = None   # notes leaving while a transition is made
        self.set_summary("")

    # show_step and set_current_event are SceneStructureView's: the base
    # does what this view did (its _new_structure forgets nothing here).

    # ------------------------------------------------------------ moving
    def _snapshot(self) -> dict:
        return {"blocks": {k: (QPointF(it.pos()), QRectF(it.boundingRect()), it.isVisible())
                           for k, it in self._blocks.items()},
                "chunk": self.focus_chunk, "camera": QRectF(self.box.viewRect()),
                "rows": {k: (tuple(r.chips), frozenset(r.inserted), r.taken) for k, r in self._rows.items()}}

    def _morph_from(self, before: dict, leaving: list) -> Morph:
        m = Morph()
        was = before["blocks"]
        same_chunk = before["chunk"] == self.focus_chunk
        for key, item in self._blocks.items():
            pos, rect, visible = was.get(key, (None, None, False))
            if item.isVisible() and visible and same_chunk:
                m.move(item, pos, item.pos())
                if rect != item.boundingRect():
                    m.call(_stretch(item, rect, QRectF(item.boundingRect())))
            elif item.isVisible():
                # a half out of a split comes down from the band above it
                addr, k = key
                start = item.pos() - QPointF(0, BAND_H) if same_chunk and _parent_was_drawn(was, addr, k) \
                    else item.pos()
                m.move(item, start, item.pos())
                m.enter(item, (0.0, 1.0))
            elif visible and same_chunk:
                # a buddy merged away goes up into the block it joined
                item.show()
                item.set_geometry(rect.width(), rect.height())
                m.move(item, pos, pos - QPointF(0, BAND_H))
                m.hide_at_end(item, (0.0, 1.0))
        for k, row in self._rows.items():       # a list the event pushed on or took from
            if row.isVisible() and before["rows"].get(k) != (tuple(row.chips), frozenset(row.inserted), row.taken):
                m.fade(row, 0.35, 1.0, (0.0, 1.0))
        cross_fade(m, leaving, list(self._notes))
        self.follow_camera(m, before["camera"])
        return m

    def mark_selection(self, addr: int | None) -> QRectF | None:
        found = None
        for row in self._rows.values():
            row.selected_addr = addr if addr in row.chips else None
            row.update()
        for item in self._blocks.values():
            item.selected = item.isVisible() and addr is not None and item.addr == addr and item.state != "split"
            item.update()
            if item.selected:
                found = self.view_rect_of(item)
        self.big_chunk.selected_addr = addr
        self.big_chunk.update()
        self.overview.selected_addr = addr
        self.overview.update()
        if found is None and addr is not None and self.overview.isVisible():
            for i, g in enumerate(self.overview.groups):
                if g.run == 1 and g.chunk <= addr < g.chunk + (1 << g.order) and \
                        any(x[0] == addr for x in g.leaves):
                    found = self.view_rect_of(self.overview, self.overview.tile_rect(i))
                    break
        return found

    def drawn(self) -> dict:
        # rows and blocks are named by where they are drawn (band, x, width),
        # so a block drawn in the wrong place reads back as another block
        rows = {self._top - round(r.pos().y() / BAND_H): r for r in self._rows.values() if r.isVisible()}
        blocks = []
        chunk = self.focus_chunk
        for it in self._blocks.values():
            if not it.isVisible():
                continue
            k = self._top - round(it.pos().y() / BAND_H)
            size = round(it.boundingRect().width() / self._scale)
            addr = chunk + round((it.pos().x() - TREE_X) / self._scale)
            blocks.append(DrawnBlock(addr, k if size == 1 << k else -1, it))
        blocks.sort(key=lambda b: (-b.order, b.addr))
        chunks: dict[int, list] = {}
        runs = []
        for g in (self.overview.groups if self.overview.isVisible() else []):
            if g.run > 1:
                runs.append((g.chunk, g.run))
                size = 1 << g.order
                for i in range(g.run):
                    chunks[g.chunk + i * size] = [(g.chunk + i * size, g.order, g.leaves[0][2])]
            else:
                chunks[g.chunk] = [tuple(x) for x in g.leaves]
        splits, merges = [], []
        for note in self._notes:
            if isinstance(note, XorItem):
                kind, number, addr, order, other = note.key
                (splits if kind == "split" else merges).append((number, addr, order, other))
        return {
            "avail": {k: r.count for k, r in rows.items()},
            "avail_front": {k: [a for a in r.chips if a != r.taken] for k, r in rows.items()},
            "avail_taken": {k: r.taken for k, r in rows.items() if r.taken is not None},
            "probes": sorted((n, k) for k, r in rows.items() for n in r.numbers),
            "empty_probes": sorted(k for k, r in rows.items() if r.empty_probe),
            "focus_chunk": self.focus_chunk,
            "focus_blocks": [(b.addr, b.order, b.item.state) for b in blocks],
            "focus_numbers": sorted((n, b.addr, b.order) for b in blocks for n in b.item.numbers),
            "chunks": dict(sorted(chunks.items())),
            "runs": sorted(runs),
            "splits": sorted(splits),
            "merges": sorted(merges),
            "xor": [n.text for n in self._notes if isinstance(n, XorItem)],
            "notes": [n.text().replace("\n", " ") for n in self._notes if isinstance(n, QGraphicsSimpleTextItem)],
            "chips_shown": self.chips_shown,
            "taken": [b.addr for b in blocks if b.item.role == "taken"],
            "released": [b.addr for b in blocks if b.item.role == "released"],
            "selected": next((b.addr for b in blocks if b.item.selected), None),
            "selected_chip": next((r.selected_addr for r in rows.values() if r.selected_addr is not None), None),
            "selected_tile": next((x[0] for g in self.overview.groups if g.run == 1 for x in g.leaves
                                   if x[0] == self.overview.selected_addr), None),
        }

    # ------------------------------------------------------------ drawing
    def _rebuild(self, follow: bool) -> None:
        s = self._structure
        for note in self._notes:
            if self._collect is not None:
                self._collect.append(note)      # it fades out during the transition
            elif note.scene() is not None:
                note.scene().removeItem(note)
        self._notes = []
        if s is None:
            for group in (self._rows, self._blocks):
                for item in group.values():
                    item.hide()
            self.overview.hide()
            self.big_chunk.hide()
            self.caption.setText(f"<b>{self.title}</b>: nothing loaded")
            self.set_summary("")
            return
        explained = self._explained if self._upto is None else self._explained[:self._upto + 1]
        step = read_events(explained)
        self.step = step
        avail = {int(k): list(v) for k, v in s["avail"].items()}
        min_order = int(s.get("min_order", min(avail) if avail else 4))
        max_order = int(s.get("max_order", max(avail) if avail else min_order))
        chunks = [(int(c["addr"]), int(c["order"])) for c in s.get("chunks", [])]
        top = max([max_order] + [k for _, k in chunks])
        self._top = top
        band_y = {k: (top - k) * BAND_H for k in range(min_order, top + 1)}

        # the AVAIL rows
        shown = self.chips_shown = chips_that_fit(self.legible_room()[0])
        self._notes_folded: list[int] = []     # rows whose "was empty" is in the line under the drawing
        taken_from = {k: a for a, k in step.removed}
        inserted_in: dict[int, set] = {}
        for a, k in step.inserted:
            inserted_in.setdefault(k, set()).add(a)
        for k in range(min_order, top + 1):
            row = self._rows.get(k)
            if row is None:
                row = AvailRowItem(k)
                row.setParentItem(self.band_layer)
                self._rows[k] = row
            members = avail.get(k, [])
            row.count = len(members)
            chips = members[:shown]
            row.taken = taken_from.get(k)
            if row.taken is not None and row.taken not in members and shown:
                chips = [row.taken] + members[:shown - 1]
            else:
                row.taken = None
            row.empty_probe = any(order == k and first is None for _, order, first in step.probes)
            row.note_folded = row.empty_probe and bool(chips) and \
                not note_fits_beside(len(chips), row.count, self.legible_room()[0])
            if row.note_folded:
                self._notes_folded.append(k)
            row.chips = chips
            row.shown = shown
            row.inserted = inserted_in.get(k, set())
            row.numbers = [n for n, order, _ in step.probes if order == k]
            row.setPos(0, band_y[k])
            row.show()
            row.update()
        for k, row in self._rows.items():
            if k not in band_y:
                row.hide()

        # which chunk the step worked in
        # (the whole step's, also when it is shown event by event: the chunk
        # stays in view from the first event on, and is empty until a new
        # chunk arrives)
        starts = [a for a, _ in chunks]
        whole = step if self._upto is None else read_events(self._explained)
        touched = [x for x in (whole.placed and whole.placed[0], whole.released and whole.released[0])
                   if x is not None]
        touched += [a for _, a, _, _ in whole.splits] + [a for _, a, _, _ in whole.merges]
        focus = None
        for a in touched:
            i = bisect_right(starts, a) - 1
            if i >= 0 and a < chunks[i][0] + (1 << chunks[i][1]):
                focus = chunks[i]
                break
        if focus is None and chunks and not touched:
            if self.selected is not None and bisect_right(starts, self.selected) > 0:
                focus = chunks[bisect_right(starts, self.selected) - 1]
            else:
                focus = chunks[0]
        self.focus_chunk = focus[0] if focus else None

        # leaves per chunk: slices of the carved blocks, both lists in address
        # order (no tuple per block: at 10 000 free blocks that is 20 000)
        blocks = s.get("blocks", [])
        per_chunk: dict[int, list] = {}
        lo = 0
        for ci, a in enumerate(starts):
            end = starts[ci + 1] if ci + 1 < len(starts) else None
            hi = bisect_left(blocks, [end]) if end is not None else len(blocks)
            per_chunk[a] = blocks[lo:hi]
            lo = hi

        self._draw_focus(focus, per_chunk, band_y, min_order, top, step)
        notes_h = NOTE_LINE_H * self._note_lines + 16 * bool(self._note_lines)
        grid_top = (top - min_order + 1) * BAND_H + 40 + notes_h
        n_runs = self._draw_tiles(chunks, per_chunk, min_order, grid_top)
        self._write_caption(s, avail, chunks, step, n_runs)
        if self.selected is not None:
            self.mark_selection(self.selected)
        if follow:
            rect = QRectF(0, 0, TREE_X + TREE_W + 20, (top - min_order + 1) * BAND_H + notes_h + 30)
            _, vh = self._view_size()
            room = vh / (self.zoom_factor * MIN_FOLLOW_SCALE) - 2 * FOCUS_MARGIN
            rect = step_rows_rect(rect, step, band_y, room, notes_h + 30,
                                  (top - min_order + 1) * BAND_H)
            # too wide for a readable zoom: the AVAIL table (where R1 starts)
            # stays in view -- except while the step is shown event by event
            # and has got to its splits or merges: then they do
            anchor = None
            if self._upto is not None:
                item = self._latest_block(step)
                if item is not None:
                    anchor = self.view_point_of(item, item.boundingRect().center())
            self.focus_on(rect.adjusted(-40, -30, 0, 0), anchor, align_top=True)

    def _latest_block(self, step: BuddyStep):
        """The focus chunk's item of the step's latest split, merge or freed block."""
        keys = []
        if step.released:
            keys.append((step.released[0], None))
        for _, addr, k, _ in step.splits:
            keys.append((addr, k - 1))
        for _, addr, buddy, k in step.merges:
            keys.append((min(addr, buddy), k + 1))
        for addr, k in reversed(keys):
            for key, item in self._blocks.items():
                if item.isVisible() and key[0] == addr and (k is None or key[1] == k):
                    return item
        return None

    def _draw_focus(self, focus, per_chunk, band_y, min_order, top, step: BuddyStep) -> None:
        self._notes_text = []
        self._note_lines = 0
        self._summary_extra = ""
        seen = set()
        self.big_chunk.hide()
        if focus is None:
            for item in self._blocks.values():
                item.hide()
            return
        chunk, order = focus
        leaves = per_chunk.get(chunk, [])
        nodes = chunk_nodes(chunk, order, leaves)
        scale = self._scale = TREE_W / (1 << order)
        bottom = band_y[min_order] + BAND_H
        title = QGraphicsSimpleTextItem(f"chunk {chunk:#x}  ({short_bytes(1 << order)}, offsets {rel(0)}\u2013"
                                        f"{rel((1 << order) - 1)})" + ("  \u2190 this step" if step.probes or
                                        step.splits or step.merges or step.placed or step.released else ""))
        title.setFont(font(18, True))
        title.setPos(TREE_X, band_y[order] - 34)
        title.setParentItem(self.note_layer)
        self._notes.append(title)
        numbers: dict = {}
        for n, addr, k, _ in step.splits:
            numbers.setdefault((addr, k), []).append(n)
        for n, addr, buddy, k in step.merges:
            numbers.setdefault((min(addr, buddy), k + 1), []).append(n)
        roles = {}
        if step.placed:
            roles[step.placed[0]] = "taken"
        if step.released:
            roles[step.released[0]] = "released"
        if len(nodes) > MAX_BLOCK_ITEMS:
            # too many blocks for an item each: the chunk's overview tile, scaled up
            for item in self._blocks.values():
                item.hide()
            self.big_chunk.set_group(ChunkGroup(chunk, order, leaves), min_order)
            self.big_chunk.setPos(TREE_X, band_y[order])
            self.big_chunk.show()
            self._summary_extra = (f"the step's chunk has {len(leaves)} blocks: drawn as one picture, "
                                   f"without an item per block")
        else:
            self._summary_extra = ""
            for addr, k, state in nodes:
                key = (addr, k)
                item = self._blocks.get(key)
                if item is None:
                    item = BlockItem(key)
                    item.setParentItem(self.tree_layer)
                    self._blocks[key] = item
                item.state = state
                item.offset = addr - chunk
                item.numbers = numbers.get(key, [])
                item.role = roles.get(addr, "") if state != "split" else ""
                if state != "split" and any(a == addr for a, _ in step.inserted) and not item.role:
                    item.role = "inserted"
                y = band_y[k]
                h = BAND_H if state == "split" else bottom - y
                item.set_geometry(max((1 << k) * scale, 1.0), h)
                item.setPos(TREE_X + (addr - chunk) * scale, y)
                item.show()
                item.update()
                seen.add(key)
            for key, item in self._blocks.items():
                if key not in seen:
                    item.hide()
        # brackets with the XOR under each pair of buddies, and the words
        for n, addr, k, buddy in step.splits:
            lo, hi = sorted((addr, buddy))
            self._xor(("split", n, addr, k, buddy), chunk, scale, band_y[k - 1], lo, hi, k - 1, n)
            o, ob = addr - chunk, buddy - chunk
            self._notes_text.append(
                f"{n}. split {short_bytes(1 << k)} at {rel(o)}: its buddies of {short_bytes(1 << (k - 1))} are "
                f"{rel(o)} and {rel(o)} \u2295 {1 << (k - 1):#x} = {rel(ob)}; {rel(ob)} goes on AVAIL[{k - 1}]")
        for n, addr, buddy, k in step.merges:
            lo, hi = sorted((addr, buddy))
            self._xor(("merge", n, addr, k, buddy), chunk, scale, band_y[k], lo, hi, k, n)
            o, ob = addr - chunk, buddy - chunk
            self._notes_text.append(
                f"{n}. buddy of {rel(o)} ({short_bytes(1 << k)}) = {rel(o)} \u2295 {1 << k:#x} = {rel(ob)}: "
                f"free and of order {k}, so they merge into {short_bytes(1 << (k + 1))} at {rel(min(o, ob))}")
        if step.released and (step.merges or step.released[0] >= chunk):
            self._stop_note(chunk, order, leaves, step)
        # under the AVAIL table, wrapped to the width a legible zoom shows
        # (issue 24: they began under the tree, right of what a 1280 x 720
        # window shows, and ran off its edge)
        # (the frame starts 40 + FOCUS_MARGIN left of the table: _rebuild's focus)
        width = max(self.legible_room()[0] - 40.0 + FOCUS_MARGIN - 12, 240.0)
        y = bottom + 16
        for i, text in enumerate(self._notes_text):
            f = font(17, i == len(self._notes_text) - 1 and bool(step.released))
            lines = wrap_lines(text, QFontMetricsF(f), width, 1 << 10).split("\n")
            t = QGraphicsSimpleTextItem("\n".join(lines))
            t.setFont(f)
            t.setPos(0, y)
            t.setParentItem(self.note_layer)
            self._notes.append(t)
            y += NOTE_LINE_H * len(lines)
            self._note_lines += len(lines)

    def _stop_note(self, chunk, order, leaves, step: BuddyStep) -> None:
        """Why algorithm S stopped merging: the freed block's buddy is in use,
        split, or there is no buddy (the whole chunk)."""
        final = None
        for a, k in step.inserted:
            if chunk <= a < chunk + (1 << order):
                final = (a, k)
        if final is None:
            return
        a, k = final
        o = a - chunk
        if k >= order:
            self._notes_text.append(f"S1: the block is the whole chunk ({short_bytes(1 << k)}): no buddy; "
                                    f"on AVAIL[{k}]")
            return
        b = o ^ (1 << k)
        there = next((x for x in leaves if x[0] == chunk + b), None)
        if there is not None and there[1] == k:
            why = "in use"
        elif there is not None and there[1] < k or any(chunk + b <= x[0] < chunk + b + (1 << k) for x in leaves):
            why = "split into smaller blocks"
        else:
            why = "part of a larger block"
        self._notes_text.append(f"S1: buddy of {rel(o)} = {rel(o)} \u2295 {1 << k:#x} = {rel(b)} is {why}: "
                                f"stop; {rel(o)} goes on AVAIL[{k}]")

    def _xor(self, key, chunk, scale, y, lo, hi, k, n) -> None:
        left = QRectF(TREE_X + (lo - chunk) * scale, y, (1 << k) * scale, BAND_H)
        right = QRectF(TREE_X + (hi - chunk) * scale, y, (1 << k) * scale, BAND_H)
        item = XorItem(key, left, right, f"{rel(lo - chunk)} \u2295 {1 << k:#x} = {rel(hi - chunk)}", n,
                       TREE_X + TREE_W + 200)
        item.setParentItem(self.note_layer)
        self._notes.append(item)

    def _draw_tiles(self, chunks, per_chunk, min_order, top_y) -> int:
        """The overview: every chunk as a tile, runs of whole chunks in one
        state as one tile.  Returns the number of runs collapsed."""
        header = QGraphicsSimpleTextItem(f"All {len(chunks)} chunks, in address order")
        header.setFont(font(18, True))
        header.setPos(0, top_y)
        header.setParentItem(self.note_layer)
        self._notes.append(header)
        groups: list[ChunkGroup] = []
        i = 0
        while i < len(chunks):
            a, k = chunks[i]
            leaves = per_chunk.get(a, [])
            whole = len(leaves) == 1 and leaves[0][1] == k and a != self.focus_chunk
            j = i + 1
            if whole:
                while j < len(chunks):
                    b, kb = chunks[j]
                    lb = per_chunk.get(b, [])
                    if kb == k and len(lb) == 1 and lb[0][1] == k and lb[0][2] == leaves[0][2] \
                            and b != self.focus_chunk:
                        j += 1
                    else:
                        break
            if whole and j - i >= MIN_RUN:
                groups.append(ChunkGroup(a, k, leaves, j - i, chunks[j - 1][0]))
                i = j
            else:
                groups.append(ChunkGroup(a, k, leaves, 1, a))
                i += 1
        self.overview.set_groups(groups, min_order)
        self.overview.focus_chunk = self.focus_chunk
        self.overview.setPos(0, top_y + 34)
        self.overview.show()
        self.overview.update()
        return sum(1 for g in groups if g.run > 1)

    def _write_caption(self, s, avail, chunks, step: BuddyStep, n_runs: int) -> None:
        self.caption.setText(caption_html(self.title, s, avail, chunks, step))
        self._said = summary_parts(avail, n_runs, self.chips_shown, self._summary_extra)
        self.framed()

    def framed(self) -> None:
        """The summary, what the frame leaves out first; a size that fits
        another number of chips draws the rows again (as a lone view would)."""
        if self._structure is not None and chips_that_fit(self.legible_room()[0]) != self.chips_shown:
            return self._rebuild(follow=self.following)
        said = [f"AVAIL[{k}] was empty when R1 probed it (a split pushed a block on it since)"
                for k in getattr(self, "_notes_folded", ())] + left_out(self) + self._said
        self.set_summary("Summarised: " + "; ".join(said) + "." if said else "")



# ------------------------------------------------------------------ words

def chips_that_fit(room: float) -> int:
    """How many chips an AVAIL row shows: as many as fit, with its "+N", in
    ``room``, the width a view shows at the lowest zoom the camera takes
    (:meth:`SceneStructureView.legible_room`; the camera starts 40 units left
    of the table), 0 to :data:`CHIPS_SHOWN` (0: the lengths only, and the
    summary says so).  In presenter mode at 1280 x 720 the third and second
    ran off the right edge (issue 24)."""
    right = room - 40.0 + FOCUS_MARGIN - 8
    n = int((right - CHIPS_X - MORE_W) // (CHIP_W + CHIP_GAP))
    return min(max(n, 0), CHIPS_SHOWN)


def note_fits_beside(chips: int, count: int, room: float) -> bool:
    """Whether "was empty", after a row's ``chips`` chips and the "+N" of the
    rest, ends inside ``room`` (as :func:`chips_that_fit`).  Where it does
    not, the line under the drawing says it: in presenter mode at 1280 x 720
    AVAIL[8]'s was cut to "was em" at the right edge (issue 24)."""
    right = room - 40.0 + FOCUS_MARGIN - 8
    note = QFontMetricsF(font(16, True)).horizontalAdvance("was empty") + 8
    return CHIPS_X + chips * (CHIP_W + CHIP_GAP) + (MORE_W if count > chips else 0) + note <= right


def caption_html(title: str, s: dict, avail: dict, chunks: list, step: BuddyStep) -> str:
    """The caption: what the structure holds, what the step did, the key."""
    n_free = sum(len(v) for v in avail.values())
    parts = [f"<b>{title}</b> (Knuth 2.5, algorithms R and S): {len(chunks)} "
             f"chunk{'s' if len(chunks) != 1 else ''}, {n_free} free block{'s' if n_free != 1 else ''}"]
    if s.get("outside"):
        parts.append(f"{short_bytes(size_of(s, s['outside'][0]['addr']))} of the pool not carved yet")
    what = []
    if step.probes:
        what.append(f"R1 probed {len(step.probes)} list{'s' if len(step.probes) != 1 else ''}")
    if step.splits:
        what.append(f"{len(step.splits)} split{'s' if len(step.splits) != 1 else ''}")
    if step.merges:
        what.append(f"{len(step.merges)} merge{'s' if len(step.merges) != 1 else ''}")
    key = " &nbsp; ".join([swatch(FREE_FILL, "free"), swatch(USED_FILL, "used"), swatch(SPLIT_FILL, "split"),
                           swatch(VISITED, "probed (in order)", True), swatch(TAKEN, "taken off a list", True),
                           swatch(INSERTED, "pushed / freed", True), swatch(SELECTED, "selected", True)])
    line2 = ("this step: " + ", ".join(what) + " &nbsp;&nbsp; ") if what else ""
    return " \u00b7 ".join(parts) + "<br>" + line2 + key


def summary_parts(avail: dict, n_runs: int, chips_shown: int, extra: str) -> list[str]:
    """What the drawing summarised, whatever the frame shows."""
    said = []
    if n_runs:
        said.append(f"{n_runs} run{'s' if n_runs != 1 else ''} of whole chunks in one state "
                    f"drawn as one tile each")
    if not chips_shown:
        said.append("AVAIL lists show their lengths only (no room for a block's address: a wider "
                    "panel or Fit all)")
    elif any(len(v) > chips_shown for v in avail.values()):
        first = "block" if chips_shown == 1 else f"{chips_shown} blocks"
        said.append(f"AVAIL lists show their first {first} and how many more")
    if extra:
        said.append(extra)
    return said


def left_out(view: BuddyView) -> list[str]:
    """What ``view``'s frame leaves out of what the step did: AVAIL rows it
    names above or below the frame, the split tree right of it, the
    arithmetic under the table."""
    said = []
    frame = view.box.viewRect()
    top = frame.top() + view.strip_height() * frame.height() / max(view.box.height(), 1.0)
    out = []
    for k in sorted(step_orders(view.step), reverse=True):
        row = view._rows.get(k)
        if row is None or not row.isVisible():
            continue
        r = view.view_rect_of(row, QRectF(0, 0, CHIPS_X, BAND_H))
        if r.top() < top - 1:
            out.append((k, "above"))
        elif r.bottom() > frame.bottom() + 1:
            out.append((k, "below"))
    for where in ("above", "below"):
        ks = [k for k, w in out if w == where]
        if ks:
            names = ", ".join(f"AVAIL[{k}]" for k in ks)
            said.append(f"the step's {names} {'is' if len(ks) == 1 else 'are'} {where} the frame "
                        f"(scroll{' up' if where == 'above' else ''})")
    tree_x = view.view_point_of(view.tree_layer, QPointF(TREE_X, 0)).x()
    tree_right = view.view_point_of(view.tree_layer, QPointF(TREE_X + TREE_W, 0)).x()
    if view.focus_chunk is not None and tree_x > frame.right() - 40:
        said.append(f"the split tree of chunk {view.focus_chunk:#x} is right of the frame "
                    f"(Shift+wheel, or Fit all)")
    elif view.focus_chunk is not None and tree_right > frame.right() + 1:
        # issue 24 (assets/structure-buddy.png): the tree ran off the right
        # edge while the line under it spoke of the AVAIL lists only
        said.append(f"the split tree of chunk {view.focus_chunk:#x} is cut at the frame's right edge "
                    f"(Shift+wheel, or Fit all)")
    notes = [n for n in view._notes if isinstance(n, QGraphicsSimpleTextItem) and "\u2295" in n.text()]
    if notes and view.view_rect_of(notes[0]).top() > frame.bottom() - 10:
        said.append("the step's arithmetic is under the table (scroll)")
    return said


def _stretch(item, start: QRectF, end: QRectF):
    def frame(t: float) -> None:
        r = lerp_rect(start, end, t)
        item.set_geometry(r.width(), r.height())
    return frame


def _parent_was_drawn(was: dict, addr: int, k: int) -> bool:
    """The block of order k + 1 holding ``addr`` was drawn before."""
    for (a, order), (_, _, visible) in was.items():
        if order == k + 1 and visible and a <= addr < a + (1 << order):
            return True
    return False
