"""The tree view's graphics items: a node (with its size list, and the
wilderness and the ghost of a node taken out drawn by the same item), a grey
triangle for nodes not drawn, a splay's climb, the link to a parent.

Each is kept per key between steps by :class:`~.tree_view.TreeView`, so an
animation moves the very item a student is looking at.
"""

from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QFontMetricsF, QPainterPath, QPolygonF
from PySide6.QtWidgets import QGraphicsPathItem

from .scene_view import (FAINT, FREE_FILL, INK, INSERTED, SELECTED, TAKEN, VISITED, WILD_FILL,
                         Glyph, MIN_DESIGN_PX, fitted_font, font, pen, short_bytes)
from .tree_layout import GAP, NODE_H, NODE_W

# A node's box overhangs its column by (NODE_W - SLOT) / 2 on each side, so
# under a node the strip |x| < SLOT - NODE_W / 2 (20 px) is its own: the size
# list hangs in its left half, a splay's climb is drawn in its right half.
#: the squares of a size list hanging under a node (centre x, size, gap)
SQUARE_X, SQUARE_W, SQUARE_H, SQUARE_GAP = -10.0, 16.0, 14.0, 4.0
#: the centre line of a splay's climb
LADDER_X = 10.0


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

    def badge_rect(self) -> QRectF:
        """The visit number's disc on the box's top-left corner (with its
        white ring), or the box's corner when the node was not visited."""
        box = self.box()
        if not self.visit:
            return QRectF(box.topLeft(), box.topLeft())
        r = self._badge_radius() + 1
        return QRectF(box.left() - 4 - r, box.top() - 2 - 15, 2 * r, 30)

    def _badge_radius(self) -> float:
        """Half the disc's width: 14, or wide enough for its numbers at the
        smallest legible size ("2,3" was drawn at 13 px in a 14 px disc,
        below the 16 the views keep)."""
        text = ",".join(map(str, self.visit))
        return max(14.0, QFontMetricsF(font(MIN_DESIGN_PX, True)).horizontalAdvance(text) / 2 + 6)

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
            painter.setFont(font(MIN_DESIGN_PX, True))
            y = NODE_H / 2 + 6 + (len(self.blocks) - 1) * (SQUARE_H + SQUARE_GAP)
            painter.drawText(QRectF(SQUARE_X - 10, y - 2, 20, 20), Qt.AlignHCenter | Qt.AlignTop, "\u22ee")
        if self.visit:
            text = ",".join(map(str, self.visit))
            r = self._badge_radius()
            centre = QPointF(box.left() - 4, box.top() - 2)
            painter.setPen(pen("#FFFFFF", 2))
            painter.setBrush(QBrush(QColor(VISITED)))
            # a disc, or an ellipse as tall as the disc where the numbers need more width
            painter.drawEllipse(centre, r, 14)
            painter.setPen(pen(INK))
            painter.setFont(font(MIN_DESIGN_PX, True))
            painter.drawText(QRectF(centre.x() - r, centre.y() - 14, 2 * r, 28), Qt.AlignCenter, text)


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
        painter.setFont(font(MIN_DESIGN_PX, True))
        painter.drawText(QRectF(-GAP, NODE_H / 2 - 14, 2 * GAP, 22), Qt.AlignHCenter | Qt.AlignTop,
                         str(self.count))


class LadderItem(Glyph):
    """One splay: the node's climb up its own column (in-order ranks do not
    change under rotation), each splay step written along the climb at the
    depth where it happened, reading upwards.

    A step's tag whose place on the climb is outside the camera's frame
    (presenter mode at 1280 x 720 frames the root and the node taken, the
    climb below them) slides along the climb into the frame; where the part
    of the climb in the frame is too short for it, the tags left are written
    across, on one tag, beside the climb where it covers no node nor word
    (:meth:`fit`).  What finds no place at all is named by :meth:`fit`, for
    the line under the drawing."""

    #: a tag written across: its height, and its padding each side of the words
    ACROSS_H, ACROSS_PAD = 24.0, 6.0

    def __init__(self, key, steps: list[tuple[str, float, float, str]], to_ghost: float | None) -> None:
        super().__init__(key)
        self.steps = steps              # (kind, y from, y to, words, depth from, depth to), first first
        self.to_ghost = to_ghost        # y of the ghost above the root, if the node was taken
        self.setZValue(20)
        top = min([s[2] for s in steps] + ([to_ghost + NODE_H / 2] if to_ghost is not None else []))
        bottom = max(s[1] for s in steps)
        self._climb_rect = QRectF(LADDER_X - 14, top - 4, 28, bottom - top + 18)
        #: tags slid along the climb (step index -> rectangle), the steps
        #: written across instead and that tag's rectangle
        self.moved: dict[int, QRectF] = {}
        self.across: list[int] = []
        self.across_rect: QRectF | None = None
        self.set_rect(self._climb_rect)

    def natural_labels(self) -> list[tuple[str, QRectF]]:
        """Each step's tag on the climb, where it happened."""
        out = []
        for kind, y0, y1, *_ in self.steps:
            tip = y1 + NODE_H / 2 + 16
            length = min(86.0, abs(y0 - tip) - 12)
            mid = (y0 + tip) / 2
            out.append((kind, QRectF(LADDER_X - 11, mid - length / 2, 22, length)))
        return out

    def labels(self) -> list[tuple[str, QRectF]]:
        """Each step's tag drawn along the climb, as the rectangle it covers
        (upright coordinates); the steps written across are not among them."""
        return [(kind, self.moved.get(i, r)) for i, (kind, r) in enumerate(self.natural_labels())
                if i not in self.across]

    def across_text(self) -> str:
        return ", ".join(self.steps[i][0] for i in self.across)

    @staticmethod
    def tag_length(kind: str) -> float:
        """The length along the climb a tag needs for its words at the smallest legible size."""
        return QFontMetricsF(font(MIN_DESIGN_PX, True)).horizontalAdvance(kind) + 10

    def fit(self, frame: QRectF, obstacles: list[QRectF]) -> list[str]:
        """Keep every tag inside ``frame`` (item coordinates): a tag out of it
        slides along its step's part of the climb to where that part is in
        the frame; the tags for which that part is too short are written
        across, on one tag, at the first place beside the climb inside the
        frame that meets none of ``obstacles`` (the nodes, the words drawn).
        Returns the steps' names no place was found for."""
        self.moved, self.across, self.across_rect = {}, [], None
        for i, (kind, r) in enumerate(self.natural_labels()):
            if frame.contains(r):
                continue
            _, y0, y1, *_ = self.steps[i]
            lo = max(y1 + NODE_H / 2 + 22, frame.top() + 1)     # below the arrow's head
            hi = min(y0 - 6, frame.bottom() - 1)
            need = self.tag_length(kind)
            if hi - lo >= need and frame.left() <= r.left() and r.right() <= frame.right():
                length = min(r.height(), hi - lo)
                mid = min(max((r.top() + r.bottom()) / 2, lo + length / 2), hi - length / 2)
                self.moved[i] = QRectF(r.left(), mid - length / 2, r.width(), length)
            else:
                self.across.append(i)
        lost: list[str] = []
        if self.across:
            text = self.across_text()
            w = QFontMetricsF(font(MIN_DESIGN_PX, True)).horizontalAdvance(text) + 2 * self.ACROSS_PAD
            h = self.ACROSS_H
            spot = self._spot_across(frame, obstacles + [r for _, r in self.labels()], w, h)
            if spot is None:
                lost = [self.steps[i][0] for i in self.across]
            else:
                self.across_rect = spot
        rect = QRectF(self._climb_rect)
        for _, r in self.labels():
            rect = rect.united(r)
        if self.across_rect is not None:
            rect = rect.united(self.across_rect)
        self.set_rect(rect)
        return lost

    def _spot_across(self, frame: QRectF, obstacles: list[QRectF], w: float, h: float) -> QRectF | None:
        """The first place for a ``w`` x ``h`` tag inside ``frame`` meeting
        none of ``obstacles``: right of the climb, then left of it, at the
        rows the node reached (the last first), between them, then at the
        frame's bottom and top."""
        rows = [s[2] for s in reversed(self.steps)] + [s[1] for s in reversed(self.steps)]
        ys = [y - h / 2 for y in rows] + [y + NODE_H / 2 + 8 for y in rows]
        ys += [frame.bottom() - h - 2, frame.top() + 2]
        xs = [NODE_W / 2 + 6, LADDER_X + 16, -NODE_W / 2 - 6 - w, LADDER_X - 16 - w]
        for y in ys:
            for x in xs:
                r = QRectF(min(max(x, frame.left() + 1), frame.right() - w - 1),
                           min(max(y, frame.top() + 1), frame.bottom() - h - 1), w, h)
                if frame.contains(r) and not any(r.intersects(q) for q in obstacles) \
                        and not r.intersects(QRectF(LADDER_X - 10, r.top(), 20, h)):
                    return r
        return None

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
        if self.across_rect is not None:
            painter.setPen(pen(VISITED, 1.5))
            painter.setBrush(QBrush(QColor("#FFFFFF")))
            painter.drawRoundedRect(self.across_rect, 5, 5)
            painter.setPen(pen(INK))
            painter.setFont(font(MIN_DESIGN_PX, True))
            painter.drawText(self.across_rect, Qt.AlignCenter, self.across_text())


class EdgeItem(QGraphicsPathItem):
    """The link from a node to its parent (dashed when levels between them are
    not drawn)."""

    def __init__(self, child) -> None:
        super().__init__()
        self.child = child
        self.parent_key = None
        self.setZValue(1)

    def link(self, parent_key, parent: tuple[float, float], child: tuple[float, float], elided: bool) -> None:
        """From the lower corner of the parent's box on the child's side
        (``parent``, ``child``: the boxes' centres) to the top of the child's."""
        (px, py), (cx, cy) = parent, child
        corner = -(NODE_W / 2 - 12) if cx < px else (NODE_W / 2 - 12)
        self.set_ends(parent_key, QPointF(px + corner, py + NODE_H / 2), QPointF(cx, cy - NODE_H / 2), elided)

    def set_ends(self, parent_key, a: QPointF, b: QPointF, elided: bool) -> None:
        self.parent_key = parent_key
        self.elided = elided
        path = QPainterPath(a)
        path.lineTo(b)
        self.setPath(path)
        self.setPen(pen(FAINT if elided else "#555555", 2.5, Qt.DashLine if elided else Qt.SolidLine))


def levels_text(levels: int) -> str:
    """The words of a run of levels not drawn."""
    return f"\u2026 {levels} level{'s' if levels != 1 else ''} \u2026"
