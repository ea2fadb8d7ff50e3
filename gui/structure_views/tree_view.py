"""The tree view: Vo's splay tree of free sizes (and the generic ``tree`` kind).

What it draws (docs/gui.md, "The tree view"):

* the binary search tree of free sizes laid out with **x = in-order rank** and
  **y = depth**.  A rotation keeps every node's in-order rank, so during a
  splay (Sleator & Tarjan, "Self-Adjusting Binary Search Trees", JACM 32(3),
  1985) each node only moves up or down its own column -- the animation of
  issue 9 moves items vertically, and a student can follow a node by its
  column.  In-order ranks also give every node a column no other node or edge
  enters below it, so its **list of equal-size blocks** (Vo's Vmbest ``LINK``
  list) hangs straight down from it without colliding with anything;
* the **wilderness** (Vmbest's ``vd->wild``) apart, above the tree's left end;
* the step: the **search path** (``Visit`` events) numbered in order, each
  **splay step** (zig, zig-zig, zig-zag) written at the depth where it
  happened in the column of the node that rose (its climb drawn as an arrow),
  the node **taken** (drawn above the tree as a dashed ghost, since it is no
  longer in it), the leaf or list member **inserted** by a free.

Deep or big trees are summarised, and :attr:`summary` says how: levels are
drawn down to the deepest one that keeps the drawing under
:data:`NODE_BUDGET` nodes (and :data:`MAX_LEVELS` deep); a subtree below it is
a grey triangle with its node count; the nodes the step touched are drawn
whatever their depth, the levels skipped above them written as a band
("... 880 levels ...").  A size list longer than :data:`LIST_SHOWN` shows its
first members and its length.  Long searches number their first and last
:data:`NUMBERED_AT_EACH_END` visits.

Items are kept per node address between steps (one :class:`NodeItem` each),
so an animation moves the very items a student is looking at: shown event
by event with a transition (:meth:`TreeView.set_current_event`), the nodes
glide from their places to their new ones -- under a rotation only up or
down their own column -- the edges follow them frame by frame, nodes that
come or go fade, the splay's climb and the step's words cross-fade, and the
camera glides to what the event touched.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import Counter
from dataclasses import dataclass, field

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QFontMetricsF, QPainterPath, QPolygonF
from PySide6.QtWidgets import QGraphicsPathItem, QGraphicsSimpleTextItem

from heapscope.allocators import events as ev
from . import register_view
from .transition import Morph, cross_fade
from .scene_view import (FAINT, FREE_FILL, INK, INSERTED, SELECTED, TAKEN, VISITED, WILD_FILL,
                         Glyph, MIN_DESIGN_PX, SceneStructureView, fitted_font, font, pen, short_bytes, size_of, swatch)

#: width of one in-order rank (a column), in design pixels
SLOT = 60.0
#: width of a run of undrawn nodes between two drawn ones
GAP = 36.0
#: height of one depth level
ROW_H = 100.0
NODE_W = 80.0
NODE_H = 48.0
# A node's box overhangs its column by (NODE_W - SLOT) / 2 on each side, so
# under a node the strip |x| < SLOT - NODE_W / 2 (20 px) is its own: the size
# list hangs in its left half, a splay's climb is drawn in its right half.
#: the squares of a size list hanging under a node (centre x, size, gap)
SQUARE_X, SQUARE_W, SQUARE_H, SQUARE_GAP = -10.0, 16.0, 14.0, 4.0
#: the centre line of a splay's climb
LADDER_X = 10.0
#: members of a size list drawn as squares (the node itself not counted)
LIST_SHOWN = 5
#: full levels are drawn while the tree keeps at most this many nodes
NODE_BUDGET = 160
#: and at most this many levels below the root
MAX_LEVELS = 24
#: a search longer than twice this numbers its first and last visits only
NUMBERED_AT_EACH_END = 15
#: splay steps: single rotations each costs (Sleator & Tarjan)
ROTATIONS = {"zig": 1, "zig-zig": 2, "zig-zag": 2}


# --------------------------------------------------------------- the items

def tree_bytes(n: int) -> str:
    """A node's key in at most 8 characters, exact below 100 000 bytes: a best
    fit search compares the request with these, and neighbours differ by a
    few bytes (``24008 B`` and ``24016 B`` must not both read ``23 KiB``)."""
    return f"{n} B" if n < 100_000 else short_bytes(n)


class NodeItem(Glyph):
    """A tree node: its size, its list of equal-size blocks hanging below,
    and what the step did to it.  Also draws the wilderness and the ghost of
    a node the step took out of the tree."""

    def __init__(self, key, kind: str = "node") -> None:
        super().__init__(key)
        self.kind = kind                  # "node", "wild" or "ghost"
        self.addr = key if kind != "ghost" else key[1]
        self.size = 0
        self.blocks: list[int] = []       # the node, then the members drawn as squares
        self.count = 0                    # blocks of this size (node included)
        self.depth = 0                    # the node's real depth in the tree
        self.visit: tuple = ()            # its numbers on the search path (the wilderness
                                          # is examined twice when the heap grows)
        self.role = ""                    # "", "taken", "inserted", "replaced", "removed"
        self.inserted_member: int | None = None
        self.selected_addr: int | None = None
        self.note = ""                    # a second line under the size, if any
        self.setZValue(10)
        self._relayout()

    # geometry
    def width(self) -> float:
        if self.kind != "wild":
            return NODE_W
        # as wide as its words at the smallest legible size ("wilderness:
        # gave 904 B" was squeezed to 6 px on a projector)
        words = "wilderness" + (f": {self.note}" if self.note else "")
        return max(150.0, QFontMetricsF(font(MIN_DESIGN_PX, True)).horizontalAdvance(words) + 14)

    def box(self) -> QRectF:
        w = self.width()
        return QRectF(-w / 2, -NODE_H / 2, w, NODE_H)

    def squares(self) -> list[QRectF]:
        out = []
        y = NODE_H / 2 + 6
        for _ in self.blocks[1:]:
            out.append(QRectF(SQUARE_X - SQUARE_W / 2, y, SQUARE_W, SQUARE_H))
            y += SQUARE_H + SQUARE_GAP
        return out

    def _relayout(self) -> None:
        w = self.width()
        bottom = NODE_H / 2 + 6 + (len(self.blocks) - 1) * (SQUARE_H + SQUARE_GAP) + 22
        self.set_rect(QRectF(-w / 2 - 18, -NODE_H / 2 - 18, w + 26, bottom + NODE_H / 2 + 18))

    def set_content(self, size: int, blocks: list[int], count: int, depth: int) -> None:
        self.size, self.blocks, self.count, self.depth = size, blocks, count, depth
        self._relayout()

    def size_text(self) -> str:
        return short_bytes(self.size) if self.kind == "wild" else tree_bytes(self.size)

    # hit testing
    def block_at(self, local: QPointF) -> int | None:
        if self.box().contains(local):
            return self.addr
        for addr, r in zip(self.blocks[1:], self.squares()):
            if r.adjusted(-3, -2, 3, 2).contains(local):
                return addr
        return None

    def describe_at(self, local: QPointF) -> str:
        addr = self.block_at(local)
        if addr is None:
            return ""
        if self.kind == "wild":
            return f"wilderness {addr:#x}: {short_bytes(self.size)}, the top block, kept out of the tree"
        if self.kind == "ghost":
            return f"{addr:#x} ({short_bytes(self.size)}) was taken out of the tree this step"
        where = "the tree node" if addr == self.addr else "a member of the size list"
        return (f"{addr:#x}: {self.size} B free, {where} of size {short_bytes(self.size)} "
                f"(depth {self.depth}, {self.count} block{'s' if self.count != 1 else ''} of this size)")

    # painting
    def paint(self, painter, option, widget=None) -> None:
        painter.setRenderHint(painter.RenderHint.Antialiasing)
        box = self.box()
        sel_node = self.selected_addr is not None and self.selected_addr == self.addr
        if sel_node:
            painter.setPen(pen(SELECTED, 7))
            painter.setBrush(Qt.NoBrush)
            painter.drawRoundedRect(box.adjusted(-6, -6, 6, 6), 12, 12)
        fill = {"wild": WILD_FILL, "ghost": "#FFFFFF"}.get(self.kind, FREE_FILL)
        edge = pen(INK, 1.5)
        if self.role == "taken":
            edge = pen(TAKEN, 4, Qt.DashLine if self.kind == "ghost" else Qt.SolidLine)
        elif self.role in ("inserted", "replaced"):
            edge = pen(INSERTED, 3.5, Qt.DashLine)
        elif self.kind == "ghost":
            edge = pen(INK, 2.5, Qt.DashLine)
        elif self.visit:
            edge = pen(VISITED, 4.5)
        painter.setPen(edge)
        painter.setBrush(QBrush(QColor(fill)))
        painter.drawRoundedRect(box, 8, 8)
        painter.setPen(pen(INK))
        second = self.note or (f"\u00d7{self.count}" if self.count > 1 else "")
        if self.kind == "wild":
            second = "wilderness" + (f": {self.note}" if self.note else "")
        if second:
            painter.setFont(fitted_font(self.size_text(), box.width() - 6, 18, True))
            painter.drawText(box.adjusted(0, 2, 0, -NODE_H / 2 + 4), Qt.AlignHCenter | Qt.AlignVCenter,
                             self.size_text())
            painter.setFont(fitted_font(second, box.width() - 6, MIN_DESIGN_PX, self.kind != "node"))
            painter.drawText(box.adjusted(0, NODE_H / 2 - 3, 0, -1), Qt.AlignHCenter | Qt.AlignVCenter, second)
        else:
            painter.setFont(fitted_font(self.size_text(), box.width() - 6, 18, True))
            painter.drawText(box, Qt.AlignCenter, self.size_text())
        for addr, r in zip(self.blocks[1:], self.squares()):
            painter.setBrush(QBrush(QColor(FREE_FILL)))
            if addr == self.selected_addr:
                painter.setPen(pen(SELECTED, 4))
            elif addr == self.inserted_member:
                painter.setPen(pen(INSERTED, 3, Qt.DashLine))
            else:
                painter.setPen(pen(INK, 1.2))
            painter.drawRect(r)
        hidden = self.count - len(self.blocks)
        if hidden > 0:
            painter.setPen(pen(INK))
            painter.setFont(font(15, True))
            y = NODE_H / 2 + 6 + (len(self.blocks) - 1) * (SQUARE_H + SQUARE_GAP)
            painter.drawText(QRectF(SQUARE_X - 10, y - 2, 20, 20), Qt.AlignHCenter | Qt.AlignTop, "\u22ee")
        if self.visit:
            text = ",".join(map(str, self.visit))
            r = 14 if len(text) < 3 else 7 + 4 * len(text)
            centre = QPointF(box.left() - 4, box.top() - 2)
            painter.setPen(pen("#FFFFFF", 2))
            painter.setBrush(QBrush(QColor(VISITED)))
            painter.drawEllipse(centre, r, r)
            painter.setPen(pen(INK))
            painter.setFont(font(16 if len(text) < 3 else 13, True))
            painter.drawText(QRectF(centre.x() - r, centre.y() - r, 2 * r, 2 * r), Qt.AlignCenter, text)


class MarkerItem(Glyph):
    """A subtree (or a run of nodes) not drawn: a grey triangle and its count."""

    def __init__(self, key, count: int, depths: tuple[int, int]) -> None:
        super().__init__(key)
        self.count = count
        self.depths = depths
        self.setZValue(5)
        self.set_rect(QRectF(-GAP / 2, -NODE_H / 2, GAP, NODE_H + 22))

    def describe_at(self, local: QPointF) -> str:
        lo, hi = self.depths
        levels = f"depth {lo}" if lo == hi else f"depths {lo}\u2013{hi}"
        return f"{self.count} node{'s' if self.count != 1 else ''} not drawn here ({levels})"

    def paint(self, painter, option, widget=None) -> None:
        painter.setRenderHint(painter.RenderHint.Antialiasing)
        tri = QPolygonF([QPointF(0, -NODE_H / 2), QPointF(GAP / 2 - 2, NODE_H / 2 - 14),
                         QPointF(-GAP / 2 + 2, NODE_H / 2 - 14)])
        painter.setPen(pen(FAINT, 1.5))
        painter.setBrush(QBrush(QColor("#E4E4E4")))
        painter.drawPolygon(tri)
        painter.setPen(pen(INK))
        painter.setFont(font(15, True))
        painter.drawText(QRectF(-GAP, NODE_H / 2 - 14, 2 * GAP, 22), Qt.AlignHCenter | Qt.AlignTop,
                         str(self.count))


class LadderItem(Glyph):
    """One splay: the node's climb up its own column (in-order ranks do not
    change under rotation), each splay step written along the climb at the
    depth where it happened, reading upwards."""

    def __init__(self, key, steps: list[tuple[str, float, float, str]], to_ghost: float | None) -> None:
        super().__init__(key)
        self.steps = steps              # (kind, y from, y to, words, depth from, depth to), first first
        self.to_ghost = to_ghost        # y of the ghost above the root, if the node was taken
        self.setZValue(20)
        top = min([s[2] for s in steps] + ([to_ghost + NODE_H / 2] if to_ghost is not None else []))
        bottom = max(s[1] for s in steps)
        self.set_rect(QRectF(LADDER_X - 14, top - 4, 28, bottom - top + 18))

    def labels(self) -> list[tuple[str, QRectF]]:
        """Each step's label, as the rectangle it covers (upright coordinates)."""
        out = []
        for kind, y0, y1, *_ in self.steps:
            tip = y1 + NODE_H / 2 + 16
            length = min(86.0, abs(y0 - tip) - 12)
            mid = (y0 + tip) / 2
            out.append((kind, QRectF(LADDER_X - 11, mid - length / 2, 22, length)))
        return out

    def describe_at(self, local: QPointF) -> str:
        for kind, y0, y1, words, *_ in self.steps:
            if abs(local.x() - LADDER_X) < 14 and min(y0, y1) <= local.y() <= max(y0, y1) + 12:
                return words
        return ""

    def paint(self, painter, option, widget=None) -> None:
        painter.setRenderHint(painter.RenderHint.Antialiasing)
        x = LADDER_X
        colour = QColor(VISITED)
        start = self.steps[0][1]
        painter.setPen(pen(VISITED, 3))
        painter.setBrush(QBrush(QColor("#FFFFFF")))
        painter.drawEllipse(QPointF(x, start + 4), 7, 7)
        for kind, y0, y1, *_ in self.steps:
            tip = y1 + NODE_H / 2 + 2       # at the bottom of the box the node reached
            p = pen(VISITED, 5)
            p.setCapStyle(Qt.FlatCap)
            painter.setPen(p)
            painter.drawLine(QPointF(x, y0 - 3), QPointF(x, tip + 12))
            painter.setPen(Qt.NoPen)
            painter.setBrush(QBrush(colour))
            painter.drawPolygon(QPolygonF([QPointF(x, tip), QPointF(x - 9, tip + 16), QPointF(x + 9, tip + 16)]))
        if self.to_ghost is not None:
            top = min(s[2] for s in self.steps)
            painter.setPen(pen(TAKEN, 3, Qt.DashLine))
            painter.drawLine(QPointF(x, top + NODE_H / 2), QPointF(x, self.to_ghost + NODE_H / 2 + 2))
        for kind, r in self.labels():
            painter.save()
            painter.translate(r.center())
            painter.rotate(-90)
            upright = QRectF(-r.height() / 2, -r.width() / 2, r.height(), r.width())
            painter.setPen(pen(VISITED, 1.5))
            painter.setBrush(QBrush(QColor("#FFFFFF")))
            painter.drawRoundedRect(upright, 5, 5)
            painter.setPen(pen(INK))
            painter.setFont(fitted_font(kind, upright.width() - 4, 16, True))
            painter.drawText(upright, Qt.AlignCenter, kind)
            painter.restore()


class EdgeItem(QGraphicsPathItem):
    """The link from a node to its parent (dashed when levels between them are
    not drawn)."""

    def __init__(self, child) -> None:
        super().__init__()
        self.child = child
        self.parent_key = None
        self.setZValue(1)

    def set_ends(self, parent_key, a: QPointF, b: QPointF, elided: bool) -> None:
        self.parent_key = parent_key
        self.elided = elided
        path = QPainterPath(a)
        path.lineTo(b)
        self.setPath(path)
        self.setPen(pen(FAINT if elided else "#555555", 2.5, Qt.DashLine if elided else Qt.SolidLine))


# --------------------------------------------------------------- the layout

@dataclass
class TreeLayout:
    """Where each drawn thing goes (design pixels), computed from the data."""
    pos: dict = field(default_factory=dict)            # node addr -> (x, y)
    ghosts: list = field(default_factory=list)         # (addr, key, x, y)
    markers: list = field(default_factory=list)        # (x, y, count, (dmin, dmax), parent addr|None)
    edges: list = field(default_factory=list)          # (child addr, parent addr, skipped levels)
    bands: list = field(default_factory=list)          # (y, levels skipped)
    rows: dict = field(default_factory=dict)           # depth -> y
    depth: dict = field(default_factory=dict)          # drawn node addr -> depth
    cap: int = 0
    max_depth: int = -1
    hidden: int = 0
    width: float = 0.0


def tree_depths(nodes: list[dict], root, index: dict | None = None) -> tuple[list[int], list[int]]:
    """Depth and parent index of every node (iterative: a degenerate splay
    tree is deeper than Python's recursion limit).  ``root`` may be a list of
    subtree tops (mid-removal, before the join): they are at depth 1, under
    the place of the root that was taken out."""
    n = len(nodes)
    if index is None:
        index = {nd["addr"]: i for i, nd in enumerate(nodes)}
    depth = [0] * n
    parent = [-1] * n
    tops = [r for r in (root if isinstance(root, list) else [root]) if r is not None and r in index]
    if not tops:
        return depth, parent
    if isinstance(root, list):
        for r in tops:
            depth[index[r]] = 1
    stack = [index[r] for r in tops]
    while stack:
        i = stack.pop()
        d = depth[i] + 1
        nd = nodes[i]
        for child in (nd["left"], nd["right"]):
            if child is not None:
                j = index[child]
                depth[j] = d
                parent[j] = i
                stack.append(j)
    return depth, parent


def layout_tree(nodes: list[dict], root, focus: set[int], ghosts: list[tuple[int, int]],
                budget: int = NODE_BUDGET, max_levels: int = MAX_LEVELS) -> TreeLayout:
    """x = in-order rank (runs of undrawn nodes narrowed to a gap), y = depth;
    full levels down to the deepest that keeps ``budget`` nodes, plus the
    ``focus`` addresses wherever they are; ``ghosts`` ``(addr, key)`` get a
    column at their key's in-order place, above the root."""
    out = TreeLayout()
    n = len(nodes)
    index = {nd["addr"]: i for i, nd in enumerate(nodes)}
    depth, parent = tree_depths(nodes, root, index)
    out.max_depth = max(depth) if n else -1
    counts = Counter(depth)
    total = 0
    cap = 0
    for d in range(0, out.max_depth + 1):
        total += counts[d]
        if (total > budget or d > max_levels) and d > 0:
            break
        cap = d
    out.cap = cap
    drawn = [d <= cap for d in depth]
    deep = sorted({depth[index[a]] for a in focus if a in index and depth[index[a]] > cap})
    for a in focus:
        i = index.get(a)
        if i is not None:
            drawn[i] = True
    # rows: depth -> y; levels below the cap only where a drawn node is
    for d in range(cap + 1):
        out.rows[d] = d * ROW_H
    y = (cap + 1) * ROW_H
    prev = cap + 1
    for d in deep:
        if d == cap + 1:
            out.rows[d] = y
            continue
        if d > prev + 1:
            out.bands.append((y + 0.75 * ROW_H, d - prev - 1))
            y += 1.5 * ROW_H
        else:
            y += ROW_H
        out.rows[d] = y
        prev = d
    marker_y = (cap + 1) * ROW_H
    # x: one column per drawn node or ghost, a narrow gap per run of others
    ghost_list = sorted(ghosts, key=lambda g: g[1])
    keys = [nd["key"] for nd in nodes] if ghost_list else []
    ghost_at = [bisect_left(keys, g[1]) for g in ghost_list]
    cursor = 0.0
    run: list | None = None         # [count, dmin, dmax, shallowest index]

    def close_run():
        nonlocal cursor, run
        if run is not None:
            count, dmin, dmax, shallow = run
            p = parent[shallow]
            out.markers.append((cursor + GAP / 2, marker_y, count, (dmin, dmax),
                                nodes[p]["addr"] if p >= 0 and drawn[p] and dmin == depth[p] + 1 else None))
            out.hidden += count
            cursor += GAP
            run = None

    g = 0
    for i in range(n + 1):
        while g < len(ghost_list) and ghost_at[g] == i:
            close_run()
            out.ghosts.append((ghost_list[g][0], ghost_list[g][1], cursor + SLOT / 2, -ROW_H))
            cursor += SLOT
            g += 1
        if i == n:
            break
        if drawn[i]:
            close_run()
            addr = nodes[i]["addr"]
            out.pos[addr] = (cursor + SLOT / 2, out.rows[depth[i]])
            out.depth[addr] = depth[i]
            cursor += SLOT
        else:
            d = depth[i]
            if run is None:
                run = [1, d, d, i]
            else:
                run[0] += 1
                if d < run[1]:
                    run[1], run[3] = d, i
                run[2] = max(run[2], d)
    close_run()
    out.width = cursor
    # edges to the nearest drawn ancestor
    for i in range(n):
        if not drawn[i] or parent[i] < 0:
            continue
        p, skipped = parent[i], 0
        while p >= 0 and not drawn[p]:
            p, skipped = parent[p], skipped + 1
        if p >= 0:
            out.edges.append((nodes[i]["addr"], nodes[p]["addr"], skipped))
    return out


# --------------------------------------------------------------- the view

@dataclass
class StepMarks:
    """What the shown step did to the tree, read from its events."""
    visits: list = field(default_factory=list)         # addrs in search order
    numbered: dict = field(default_factory=dict)       # addr -> its numbers, in order
    skipped_visits: int = 0
    splays: list = field(default_factory=list)         # (addr, key, [(kind, event index, words)])
    removed: list = field(default_factory=list)        # (addr, size, replaced_by)
    inserted: list = field(default_factory=list)       # (addr, size, parent, side)
    taken: int | None = None                           # Placed.addr
    released: int | None = None
    wild_was: set = field(default_factory=set)          # addresses the wilderness had this step
    joined: set = field(default_factory=set)           # removed nodes whose subtrees were joined
    split: tuple | None = None                         # (taken bytes, rest bytes) of a Split


def read_events(explained: list) -> StepMarks:
    marks = StepMarks()
    run = None
    for e in explained:
        event = e.event
        if isinstance(event, ev.Rotation):
            if run is None or run[0] != event.addr:
                run = (event.addr, event.key, [])
                marks.splays.append(run)
            run[2].append((event.kind, e.index, e.text))
            continue
        run = None
        if isinstance(event, ev.Visit):
            marks.visits.append(event.addr)
        elif isinstance(event, ev.TreeRemove):
            marks.removed.append((event.addr, event.size, event.replaced_by))
        elif isinstance(event, getattr(ev, "TreeJoin", ())) and marks.removed:
            # the removal just before it was of a tree node (not a list member)
            marks.joined.add(marks.removed[-1][0])
        elif isinstance(event, ev.TreeInsert):
            marks.inserted.append((event.addr, event.size, event.parent, event.side))
        elif isinstance(event, ev.Placed):
            marks.taken = event.addr
        elif isinstance(event, ev.Released):
            marks.released = event.addr
        elif isinstance(event, ev.PointerMove) and event.name == "wilderness":
            marks.wild_was |= {a for a in (event.old, event.new) if a is not None}
        elif isinstance(event, ev.Split):
            marks.split = (event.taken_size, event.rest_size)
    v = marks.visits
    if len(v) <= 2 * NUMBERED_AT_EACH_END + 2:
        for i, a in enumerate(v):
            marks.numbered.setdefault(a, []).append(i + 1)
    else:
        k = NUMBERED_AT_EACH_END
        for i, a in list(enumerate(v))[:k] + list(enumerate(v))[-k:]:
            marks.numbered.setdefault(a, []).append(i + 1)
        marks.skipped_visits = len(v) - 2 * k
    return marks


@register_view("tree")
class TreeView(SceneStructureView):
    """The splay tree of free sizes, its size lists, the wilderness and the
    step's search path and splay steps.

    :meth:`drawn` keys: ``nodes`` (addresses in x order), ``keys`` (their sizes
    as drawn), ``x`` and ``y`` ({addr: position}), ``depth`` ({addr: depth}),
    ``lists`` ({addr: [the node, then the members drawn as squares]}),
    ``counts`` ({addr: blocks of that size}), ``edges`` ([(parent, child)]),
    ``visits`` ([(number, addr)] in order), ``rotations`` ([(kind, addr,
    from_depth, to_depth)] in order), ``ghosts`` ([addr]) and ``ghost_x``, ``taken``,
    ``inserted``, ``wilderness``, ``hidden`` (nodes summarised by markers),
    ``elided`` (levels skipped by each dashed edge), ``selected``.
    """

    kinds = ("tree",)
    title = "Splay tree of free sizes"

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.edge_layer = self.new_layer(1)
        self.node_layer = self.new_layer(10)
        self.note_layer = self.new_layer(20)
        self._nodes: dict = {}              # addr or ("ghost", addr) -> NodeItem
        self._edges: dict = {}              # child addr -> EdgeItem
        self._notes: list = []              # ladders, texts: rebuilt every step
        self._markers: list = []            # (MarkerItem, EdgeItem) pool, reused every step
        self._wild: NodeItem | None = None
        self._structure: dict | None = None
        self._explained: list = []
        self._upto: int | None = None
        self._owner: dict | None = None     # block addr -> node addr, built on demand
        self._extra_focus: set[int] = set()
        self._said = ""                 # the summary of what was drawn
        self._framed_key = None         # the item the camera keeps when the step does not fit
        self._after: dict | None = None     # the structure after the whole step
        self._collect: list | None = None   # notes leaving while a transition is made
        self.layout: TreeLayout | None = None
        self.marks = StepMarks()
        self.set_summary("")

    # ------------------------------------------------------------ contract
    def show_step(self, structure: dict | None, explained: list, record=None) -> None:
        self.finish_transition()
        self._structure = self._after = structure
        self._explained = list(explained or [])
        self._upto = None
        self._owner = None
        self._extra_focus = set()
        self._rebuild(follow=True)

    def set_current_event(self, index: int | None, duration_ms: int = 0) -> None:
        self.finish_transition()
        structure = self.structure_for(index, self._after)
        if index == self._upto and structure is self._structure:
            return
        moving = duration_ms > 0 and self._structure is not None and structure is not None
        before = self._snapshot() if moving else None
        self._upto = index
        if structure is not self._structure:
            self._structure = structure
            self._owner = None
        if not moving:
            self._rebuild(follow=True)
            return
        leaving = self.redraw_collecting_leavers(lambda: self._rebuild(follow=True))
        self.play_transition(self._morph_from(before, leaving), duration_ms)

    # ------------------------------------------------------------ moving
    def _items(self) -> dict:
        items = dict(self._nodes)
        if self._wild is not None:
            items["wild"] = self._wild
        return items

    def _snapshot(self) -> dict:
        return {"items": {k: (QPointF(it.pos()), it.isVisible()) for k, it in self._items().items()},
                "edges": {c: e.isVisible() for c, e in self._edges.items()},
                "camera": QRectF(self.box.viewRect())}

    def _morph_from(self, before: dict, leaving: list) -> Morph:
        m = Morph()
        was = before["items"]
        items = self._items()
        for key, item in items.items():
            old_pos, old_visible = was.get(key, (None, False))
            if (isinstance(key, tuple) and key[0] == "ghost" and item.isVisible() and not old_visible
                    and was.get(key[1], (None, False))[1] and not items[key[1]].isVisible()):
                # a node taken out of the tree rises from its place to its ghost's
                m.move(item, was[key[1]][0], item.pos())
                continue
            if item.isVisible():
                if old_visible:
                    m.move(item, old_pos, item.pos())
                else:
                    m.enter(item, (0.0, 1.0))
            elif old_visible and ("ghost", key) not in items or old_visible and not items[("ghost", key)].isVisible():
                item.setPos(old_pos)
                item.show()
                m.hide_at_end(item)
        edges_were = before["edges"]
        for child, e in self._edges.items():
            if e.isVisible() and not edges_were.get(child):
                m.enter(e)
            elif not e.isVisible() and edges_were.get(child):
                e.show()
                m.hide_at_end(e)
        m.call(self._edges_follow)
        cross_fade(m, leaving, list(self._notes))
        self.follow_camera(m, before["camera"])
        return m

    def _edges_follow(self, t: float) -> None:
        """Each drawn edge from its parent's box to its child's, where they are now."""
        nodes = self._nodes
        for child, e in self._edges.items():
            if not e.isVisible() or e.parent_key not in nodes or child not in nodes:
                continue
            c, p = nodes[child].pos(), nodes[e.parent_key].pos()
            corner = -(NODE_W / 2 - 12) if c.x() < p.x() else (NODE_W / 2 - 12)
            e.set_ends(e.parent_key, QPointF(p.x() + corner, p.y() + NODE_H / 2),
                       QPointF(c.x(), c.y() - NODE_H / 2), getattr(e, "elided", False))

    def mark_selection(self, addr: int | None) -> QRectF | None:
        self.finish_transition()
        owner = None
        if addr is not None and self._structure is not None:
            owner = self._owner_of(addr)
            item = self._nodes.get(owner) if owner is not None else None
            drawn_here = item is not None and item.isVisible() and (
                addr == owner or addr in item.blocks)
            if owner is not None and not drawn_here:
                # a node below the drawn levels, or a list member past the
                # squares: draw it (it becomes part of the focus)
                self._extra_focus = {owner}
                self.selected = addr
                self._rebuild(follow=False)
        found = None
        for key, item in self._nodes.items():
            mine = addr is not None and item.isVisible() and (addr == item.addr and item.kind != "ghost"
                                                              or addr in item.blocks[1:])
            item.selected_addr = addr if mine else None
            item.update()
            if mine:
                found = self.view_rect_of(item, item.box())
        if self._wild is not None:
            mine = addr is not None and self._wild.isVisible() and addr == self._wild.addr
            self._wild.selected_addr = addr if mine else None
            self._wild.update()
            if mine:
                found = self.view_rect_of(self._wild, self._wild.box())
        if found is not None and owner is not None and owner != addr:
            item = self._nodes[owner]
            found = self.view_rect_of(item, item.boundingRect())
        return found

    def drawn(self) -> dict:
        nodes = sorted((it for it in self._nodes.values() if it.isVisible() and it.kind == "node"),
                       key=lambda it: it.pos().x())
        ghosts = [it for it in self._nodes.values() if it.isVisible() and it.kind == "ghost"]
        visits = [(n, it.addr) for it in list(self._nodes.values()) + [self._wild]
                  if it is not None and it.isVisible() for n in it.visit]
        rotations = []
        for note in self._notes:
            if isinstance(note, LadderItem):
                for kind, y0, y1, _, d0, d1 in note.steps:
                    rotations.append((kind, note.key[0], d0, d1, note.key[1]))
        rotations.sort(key=lambda r: r[4])
        selected = None
        for it in list(self._nodes.values()) + [self._wild]:
            if it is not None and it.isVisible() and it.selected_addr is not None:
                selected = it.selected_addr
        return {
            "nodes": [it.addr for it in nodes],
            "keys": [it.size for it in nodes],
            "labels": [it.size_text() for it in nodes],
            "x": {it.addr: it.pos().x() for it in nodes},
            "y": {it.addr: it.pos().y() for it in nodes},
            "depth": {it.addr: it.depth for it in nodes},
            "lists": {it.addr: list(it.blocks) for it in nodes},
            "counts": {it.addr: it.count for it in nodes},
            "edges": sorted((e.parent_key, e.child) for e in self._edges.values() if e.isVisible()),
            "visits": sorted(visits),
            "rotations": [r[:4] for r in rotations],
            "ghosts": [it.addr for it in ghosts],
            "ghost_x": {it.addr: it.pos().x() for it in ghosts},
            "taken": [it.addr for it in list(self._nodes.values()) + [self._wild]
                      if it is not None and it.isVisible() and it.role == "taken"],
            "inserted": [it.addr for it in self._nodes.values() if it.isVisible() and it.role == "inserted"]
                        + [it.inserted_member for it in self._nodes.values()
                           if it.isVisible() and it.inserted_member is not None],
            "wilderness": self._wild.addr if self._wild is not None and self._wild.isVisible() else None,
            "hidden": sum(m.count for m, _ in self._markers if m.isVisible()),
            "elided": sorted(n.levels for n in self._notes if hasattr(n, "levels")),
            "selected": selected,
        }

    # ------------------------------------------------------------ drawing
    def _owner_of(self, addr: int) -> int | None:
        if self._owner is None:
            owner = {}
            for nd in self._structure.get("nodes", []):
                for b in nd["blocks"]:
                    owner[b] = nd["addr"]
            self._owner = owner
        return self._owner.get(addr)

    def _rebuild(self, follow: bool) -> None:
        s = self._structure
        explained = self._explained if self._upto is None else self._explained[:self._upto + 1]
        for note in self._notes:
            if self._collect is not None:
                self._collect.append(note)      # it fades out during the transition
                continue
            note.setParentItem(None)
            if note.scene() is not None:
                note.scene().removeItem(note)
        self._notes = []
        if s is None:
            for item in self._nodes.values():
                item.hide()
            for e in self._edges.values():
                e.hide()
            for m, line in self._markers:
                m.hide()
                line.hide()
            if self._wild is not None:
                self._wild.hide()
            self.caption.setText(f"<b>{self.title}</b>: nothing loaded")
            self.set_summary("")
            self.layout = None
            return
        nodes = s.get("nodes", [])
        marks = read_events(explained)
        self.marks = marks
        # The drawing is the state after the whole step, so the nodes the step
        # took out get their ghosts even while micro-steps show its beginning.
        whole = marks if self._upto is None else read_events(self._explained)
        removed = whole.removed
        keys_present = {nd["key"] for nd in nodes} if removed else set()
        addrs_present = {nd["addr"] for nd in nodes} if removed else set()
        wild = s.get("wilderness")
        ghosts = []
        for addr, size, replaced_by in whole.removed:
            # A removal with a successor was a tree node; one without is a node
            # only if no node of its size is left (else it was a list member).
            if addr in addrs_present or addr == wild:
                continue
            if replaced_by is not None or addr in whole.joined or size not in keys_present:
                ghosts.append((addr, size))
        ghosts = list(dict((g[0], g) for g in ghosts).values())
        focus = set(marks.numbered) | {a for a, _, _ in marks.splays} | {i[0] for i in marks.inserted}
        focus |= {i[2] for i in marks.inserted if i[2] is not None}
        focus |= {r[2] for r in marks.removed if r[2] is not None}
        focus |= self._extra_focus
        if s.get("root") is not None:
            focus.add(s["root"])
        # mid-removal (a micro-step between TreeRemove and TreeJoin) the
        # tree is two subtrees, drawn where they hung under the root
        root = s.get("root")
        if root is None and s.get("subtrees"):
            root = [t for t in s["subtrees"] if t is not None]
        lay = self._fitting_layout(nodes, root, focus, ghosts)
        self.layout = lay
        if not lay.hidden and not lay.bands:
            # a splay may have started deeper than the tree is now: give its
            # depths rows below the last one
            climb = max((sum(ROTATIONS.get(k, 1) for k, _, _ in run[2]) for run in marks.splays), default=0)
            for d in range(lay.max_depth + 1, climb + 1):
                lay.rows.setdefault(d, d * ROW_H)

        # nodes
        seen = set()
        by_addr = {nd["addr"]: nd for nd in nodes}
        owner_sel = self._owner_of(self.selected) if self.selected is not None else None
        for addr, (x, y) in lay.pos.items():
            nd = by_addr[addr]
            item = self._nodes.get(addr)
            if item is None:
                item = NodeItem(addr)
                item.setParentItem(self.node_layer)
                self._nodes[addr] = item
            blocks = nd["blocks"]
            shown = blocks[:LIST_SHOWN + 1]
            if owner_sel == addr and self.selected not in shown:
                shown = blocks[:LIST_SHOWN] + [self.selected]
            item.set_content(nd["key"], shown, len(blocks), lay.depth[addr])
            item.visit = tuple(marks.numbered.get(addr, ()))
            item.role, item.inserted_member = "", None
            item.note = f"depth {lay.depth[addr]}" if lay.depth[addr] > lay.cap else ""
            item.setPos(x, y)
            item.show()
            seen.add(addr)
        for addr, key, x, y in lay.ghosts:
            gk = ("ghost", addr)
            item = self._nodes.get(gk)
            if item is None:
                item = NodeItem(gk, "ghost")
                item.setParentItem(self.node_layer)
                self._nodes[gk] = item
            item.set_content(key, [addr], 1, -1)
            item.visit = tuple(marks.numbered.get(addr, ()))
            gone = any(r[0] == addr for r in marks.removed)
            item.role = "taken" if addr == marks.taken else "removed" if gone else ""
            item.note = item.role or "leaves later"
            item.inserted_member = None
            item.setPos(x, y)
            item.show()
            seen.add(gk)
        for key, item in self._nodes.items():
            if key not in seen:
                item.hide()
        for addr, size, parent, side in marks.inserted:
            if side == "list" and parent in self._nodes and self._nodes[parent].isVisible():
                self._nodes[parent].inserted_member = addr
                self._nodes[parent].note = f"\u00d7{self._nodes[parent].count} (+1)"
            elif addr in self._nodes and self._nodes[addr].isVisible():
                self._nodes[addr].role, self._nodes[addr].note = "inserted", "new"
        for addr, size, replaced_by in marks.removed:
            if replaced_by is not None and replaced_by in self._nodes and self._nodes[replaced_by].isVisible():
                self._nodes[replaced_by].role, self._nodes[replaced_by].note = "replaced", "moved up"

        # the wilderness, apart: above the tree's left end
        if wild is not None:
            if self._wild is None:
                self._wild = NodeItem(wild, "wild")
                self._wild.setParentItem(self.node_layer)
            self._wild.key = self._wild.addr = wild
            self._wild.set_content(size_of(s, wild), [wild], 1, -1)
            # the wilderness keeps its item when its address moves (a split
            # cut the request off its front): it is one thing to a student
            was = marks.wild_was | {wild}
            self._wild.visit = tuple(sorted(n for a, ns in marks.numbered.items() if a in was for n in ns))
            self._wild.role = "taken" if marks.taken in was else ""
            self._wild.note = (f"gave {short_bytes(marks.split[0])}" if self._wild.role and marks.split
                               else "")
            self._wild._relayout()          # as wide as its words
            self._wild.setPos(self._wild_x(lay, s.get("root")), -ROW_H)
            self._wild.show()
        elif self._wild is not None:
            self._wild.hide()

        # edges
        seen_edges = set()
        for child, parent_addr, skipped in lay.edges:
            e = self._edges.get(child)
            if e is None:
                e = EdgeItem(child)
                e.setParentItem(self.edge_layer)
                self._edges[child] = e
            cx, cy = lay.pos[child]
            px, py = lay.pos[parent_addr]
            corner = -(NODE_W / 2 - 12) if cx < px else (NODE_W / 2 - 12)
            e.set_ends(parent_addr, QPointF(px + corner, py + NODE_H / 2),
                       QPointF(cx, cy - NODE_H / 2), skipped > 0)
            e.show()
            seen_edges.add(child)
            if skipped:
                t = QGraphicsSimpleTextItem(f"\u2026 {skipped} level{'s' if skipped != 1 else ''} \u2026")
                t.levels = skipped
                t.setFont(font(16, True))
                t.setBrush(QBrush(QColor(FAINT)))
                t.setPos(px + 0.65 * (cx - px) + 14, py + 0.65 * (cy - py) - 10)
                t.setParentItem(self.note_layer)
                self._notes.append(t)
        for child, e in self._edges.items():
            if child not in seen_edges:
                e.hide()

        # summarised subtrees, skipped levels, depth labels
        # markers and their links are pooled: a big tree has a hundred of them on every step
        for i, (x, y, count, depths, parent_addr) in enumerate(lay.markers):
            if i < len(self._markers):
                m, line = self._markers[i]
            else:
                m, line = MarkerItem(("marker", i), 0, (0, 0)), EdgeItem(("marker", i))
                m.setParentItem(self.note_layer)
                line.setParentItem(self.edge_layer)
                self._markers.append((m, line))
            m.count, m.depths = count, depths
            m.setPos(x, y)
            m.show()
            m.update()
            if parent_addr is not None:
                px, py = lay.pos[parent_addr]
                line.set_ends(parent_addr, QPointF(px + (-(NODE_W / 2 - 12) if x < px else NODE_W / 2 - 12),
                                                   py + NODE_H / 2), QPointF(x, y - NODE_H / 2), True)
                line.show()
            else:
                line.hide()
        for m, line in self._markers[len(lay.markers):]:
            m.hide()
            line.hide()
        for y, levels in lay.bands:
            t = QGraphicsSimpleTextItem(f"\u2026 {levels} level{'s' if levels != 1 else ''} \u2026")
            t.setFont(font(18, True))
            t.setBrush(QBrush(QColor(FAINT)))
            t.setPos(-150, y - 12)
            t.setParentItem(self.note_layer)
            self._notes.append(t)
        if not nodes:
            t = QGraphicsSimpleTextItem("the tree is empty")
            t.setFont(font(18))
            t.setBrush(QBrush(QColor(FAINT)))
            t.setPos(-20, -12)
            t.setParentItem(self.note_layer)
            self._notes.append(t)
        for d, y in (lay.rows.items() if nodes else ()):
            t = QGraphicsSimpleTextItem(f"depth {d}")
            t.setFont(font(MIN_DESIGN_PX))
            t.setBrush(QBrush(QColor(FAINT)))
            t.setPos(-150, y - 10)
            t.setParentItem(self.note_layer)
            self._notes.append(t)

        # splay steps: each at the depth where it happened, in the column of the node that rose
        ghost_pos = {a: (x, y) for a, _, x, y in lay.ghosts}
        for n_run, (addr, key, steps) in enumerate(marks.splays):
            col = lay.pos.get(addr) or ghost_pos.get(addr)
            if col is None:
                continue
            climb = sum(ROTATIONS.get(k, 1) for k, _, _ in steps)
            # a join's splay ends at the top of the right subtree, which
            # hangs at depth 1 until the join makes it the root
            d = climb + (1 if isinstance(root, list) and addr in root else 0)
            drawn_steps = []
            for kind, index, words in steps:
                d_to = d - ROTATIONS.get(kind, 1)
                drawn_steps.append((kind, self._row_y(d), self._row_y(d_to), words, d, d_to))
                d = d_to
            ladder = LadderItem((addr, steps[0][1]), drawn_steps,
                                ghost_pos[addr][1] if addr in ghost_pos else None)
            ladder.setParentItem(self.note_layer)
            ladder.setPos(col[0], 0)
            self._notes.append(ladder)

        self._write_caption(s, lay, marks)
        if self.selected is not None:
            self.mark_selection(self.selected) if not self._extra_focus else self._mark_only(self.selected)
        if follow:
            self._follow(lay, marks)

    def _wild_x(self, lay: TreeLayout, root) -> float:
        """Where the wilderness's box is centred, in the row above the root:
        its right edge where a 150-pixel box had it, left of the tree (a
        wider box grows leftwards), but near enough the root for both to fit
        the view at a legible zoom, when no ghost is in the way (on gcc-cc1
        a malloc cut from the wilderness with the root 760 pixels right of it)."""
        half = self._wild.width() / 2
        x = -45.0 - half
        if root in lay.pos:
            room, _ = self.legible_room()
            near = lay.pos[root][0] + NODE_W / 2 + half + 24 - room
            clear = all(abs(gx - near) >= half + NODE_W / 2 + 8 for _, _, gx, _ in lay.ghosts)
            if near > x and clear:
                x = near
        return x

    def _fitting_layout(self, nodes, root, focus: set, ghosts) -> TreeLayout:
        """The tree laid out so that the step's nodes (its search from the
        root, the node taken or inserted) span no more columns than the view
        shows at a legible zoom: full levels while they fit, else fewer, the
        nodes off the step's path summarised as grey triangles.  On gcc-cc1
        the 56 nodes in order put the root 2 800 design pixels right of the
        leaf a free inserted; the camera kept the leaf and lost the root."""
        room, _ = self.legible_room()
        for budget in (NODE_BUDGET, 40, 12, 1):
            lay = layout_tree(nodes, root, focus, ghosts, budget=budget)
            xs = [lay.pos[a][0] for a in focus if a in lay.pos] + [g[2] for g in lay.ghosts]
            if not xs or max(xs) - min(xs) + NODE_W <= room:
                break
        return lay

    def _mark_only(self, addr: int) -> None:
        for item in list(self._nodes.values()) + [self._wild]:
            if item is None:
                continue
            mine = item.isVisible() and (addr == item.addr and item.kind != "ghost" or addr in item.blocks[1:])
            item.selected_addr = addr if mine else None
            item.update()

    def _row_y(self, d: int) -> float:
        rows = self.layout.rows
        if d in rows:
            return rows[d]
        return (self.layout.cap + 1) * ROW_H

    def _follow(self, lay: TreeLayout, marks: StepMarks) -> None:
        rect = QRectF()
        anchor = None
        step_items = [it for it in self._nodes.values() if it.isVisible() and
                      (it.visit or it.role or it.inserted_member is not None)]
        if self._wild is not None and self._wild.isVisible() and (self._wild.visit or self._wild.role):
            step_items.append(self._wild)
        # a node's path from the root, so a leaf inserted by a free is seen where it hangs
        up = {child: parent for child, parent, _ in lay.edges}
        path = []
        for it in step_items:
            a = it.addr if it.kind == "node" else None
            while a in up and len(path) < 64:
                a = up[a]
                path.append(self._nodes[a])
        for it in step_items + path:
            rect = rect.united(self.view_rect_of(it, it.box()))
        for note in self._notes:
            if isinstance(note, LadderItem):
                rect = rect.united(self.view_rect_of(note, note.boundingRect()))
        key_item = None
        for it in step_items:
            if it.role in ("taken", "inserted", "replaced"):
                key_item = it
        root = self._structure.get("root")
        if key_item is None and root in self._nodes and self._nodes[root].isVisible():
            key_item = self._nodes[root]
        if rect.isNull():
            if key_item is not None:
                rect = self.view_rect_of(key_item, key_item.boundingRect())
            elif self._wild is not None and self._wild.isVisible():
                rect = self.view_rect_of(self._wild, self._wild.boundingRect())
            else:
                return
        if key_item is not None:
            # the left end of its box: the camera keeps the anchor a margin
            # inside the edge, and a wide box (the wilderness and its words)
            # stays whole
            box = key_item.box()
            anchor = self.view_point_of(key_item, QPointF(box.left() + min(box.width() / 2, NODE_W / 2), 0))
            rect = self._root_and(key_item, rect, step_items + path)
        self._framed_key = key_item
        self.focus_on(rect, anchor, align_top=True)

    def framed(self) -> None:
        """A step too deep to frame from the root at a legible zoom: the line
        under the drawing says where the root is, first."""
        said = self._said
        root = self._nodes.get(self._structure.get("root")) if self._structure else None
        if self.following and root is not None and root.isVisible() \
                and not self.box.viewRect().contains(self.view_rect_of(root, root.box())):
            key = self._framed_key
            depth = self.layout.depth.get(getattr(key, "addr", None)) if self.layout else None
            where = f" {depth} levels up," if depth else ""
            said = " ".join(filter(None, [f"The root (where the search started) is{where} not wholly in view: "
                                          "Fit all shows the whole path.", said]))
        if said != self.summary:
            self.set_summary(said)

    def _root_and(self, key_item, rect: QRectF, items: list) -> QRectF:
        """What the camera frames when the whole of the step (``rect``) does
        not fit at a legible zoom: the root, where the search started, and
        ``key_item``, where it ended, if they fit together, with as many of
        the step's other ``items`` as still fit, nearest the key item first;
        else ``rect`` (the camera keeps the key item)."""
        w, h = self.legible_room()

        def fits(r: QRectF) -> bool:
            return r.width() <= w and r.height() <= h

        root = self._nodes.get(self._structure.get("root"))
        if fits(rect) or root is None or not root.isVisible():
            return rect
        def whole(item) -> QRectF:       # its box and its visit number, up and left of it
            return self.view_rect_of(item, item.box().adjusted(-14, -14, 0, 0))

        core = whole(root).united(whole(key_item))
        if not fits(core):
            return rect
        centre = self.view_rect_of(key_item, key_item.box()).center()
        for it in sorted(items, key=lambda i: (self.view_rect_of(i, i.box()).center() - centre).manhattanLength()):
            trial = core.united(whole(it))
            if fits(trial):
                core = trial
        return core

    def _write_caption(self, s: dict, lay: TreeLayout, marks: StepMarks) -> None:
        nodes = s.get("nodes", [])
        n_blocks = len(s.get("sizes", ())) - len(s.get("outside", ()))   # the tree's blocks
        wild = s.get("wilderness")
        parts = [f"<b>{self.title}</b>: {len(nodes)} node{'s' if len(nodes) != 1 else ''}, "
                 f"{n_blocks} free block{'s' if n_blocks != 1 else ''}"]
        if lay.max_depth >= 0:
            parts.append(f"depth {lay.max_depth}")
        if wild is not None:
            parts.append(f"wilderness {short_bytes(size_of(s, wild))}")
        elif "wilderness" in s:
            parts.append("no wilderness")
        step = []
        if marks.visits:
            step.append(f"search visited {len(marks.visits)}")
        n_rot = sum(len(r[2]) for r in marks.splays)
        if n_rot:
            step.append(f"{n_rot} splay step{'s' if n_rot != 1 else ''}")
        key = " &nbsp; ".join([swatch(VISITED, "visited (in order)", True), swatch(TAKEN, "taken", True),
                               swatch(INSERTED, "inserted", True), swatch(WILD_FILL, "wilderness"),
                               swatch(SELECTED, "selected", True)])
        line2 = ("this step: " + ", ".join(step) + " &nbsp;&nbsp; ") if step else ""
        self.caption.setText(" \u00b7 ".join(parts) + "<br>" + line2 + key)
        said = []
        if lay.hidden:
            said.append(f"levels 0\u2013{lay.cap} of the tree's {lay.max_depth + 1} drawn; {lay.hidden} deeper "
                        f"node{'s' if lay.hidden != 1 else ''} shown as grey triangles with their counts")
        if lay.bands:
            said.append(f"{sum(b[1] for b in lay.bands)} levels above the step's deep nodes skipped")
        long_lists = sum(1 for nd in nodes if len(nd["blocks"]) > LIST_SHOWN + 1)
        if long_lists:
            said.append(f"{long_lists} size list{'s' if long_lists != 1 else ''} longer than "
                        f"{LIST_SHOWN} shown by their first {LIST_SHOWN} members and their length (\u00d7n)")
        if marks.skipped_visits:
            said.append(f"search of {len(marks.visits)} nodes: numbered its first and last "
                        f"{NUMBERED_AT_EACH_END}, {marks.skipped_visits} between not numbered")
        self._said = "Summarised: " + "; ".join(said) + "." if said else ""
        self.set_summary(self._said)
