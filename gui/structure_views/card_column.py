"""A column of cards: the rings (next fit, first fit, Kruse's rotating
list) and the V7 arena draw one card a row, top down, with the search
pointer's arrow at the left, visit badges at the right and notes beside
them, and the ring's closing link up the left edge.  What they draw alike
is here once: the column's geometry, :class:`CardColumnView` (the closing
link, the notes' width, the rectangle a step's cards fit in) and
:class:`CardColumn` (reading the drawing back for :meth:`drawn`).
"""

from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF

from .. import palette
from .canvas import MUTED, Arrow, Badge, Card, Fold, Note, Pointer
from .card_view import CardView

# The column's layout, in pixels at zoom 1 (each view has its own card width).
X_LOOP = 8
X_POINTER = 16
POINTER_LEN = 74
X_CARD = X_POINTER + POINTER_LEN + 4
CARD_H = 36
#: notes beside a card wrap to the view's width, but never narrower than this
NOTE_MIN_W = 120
ROW = 50
TOP = 40
LINK_X = X_CARD + 26


class CardColumnView(CardView):
    """Base of the views drawn as a column of cards: rows top down, each a
    card (a block, or the sentinel that closes the ring) or a fold of
    cards not drawn, linked to the row above."""

    #: a fold's left edge and width (a little wider than the cards)
    fold_x, fold_w = X_CARD - 20, 230

    def _folded_rows(self, order: list, runs: list, node_row, examined) -> tuple[list, int, int, int]:
        """The rows for ``order`` (addresses) under ``runs`` (summarise.fold):
        ``node_row(addr)`` for each address shown, ``("fold", count,
        examined)`` for each run folded, where ``examined`` counts the
        addresses in ``examined``.  Returns the rows and the folded
        addresses, runs and examined ones among them."""
        rows = []
        folded = folded_runs = folded_examined = 0
        for kind, lo, hi in runs:
            if kind == "show":
                rows.extend(node_row(order[i]) for i in range(lo, hi))
            else:
                seen = sum(1 for a in order[lo:hi] if a in examined)
                rows.append(("fold", hi - lo, seen))
                folded += hi - lo
                folded_runs += 1
                folded_examined += seen
        return rows, folded, folded_runs, folded_examined

    def _kept_for_step(self, index: dict, step) -> list[tuple[int, int]]:
        """What a long column keeps drawn for the step, as summarise.fold's
        (index, radius) pairs: where the pointer was before it, the blocks it
        changed (with a neighbour each side), the selection (two)."""
        keep = []
        if step.pointer_moved and step.pointer_before in index:
            keep.append((index[step.pointer_before], 1))
        for a in step.changed():
            if a in index:
                keep.append((index[a], 1))
        if self._selection in index:
            keep.append((index[self._selection], 2))
        return keep

    def _lay_rows(self, rows: list, draw_card) -> list[float]:
        """Each row at its place, top down (``draw_card(row, y)`` draws a
        card's; a fold is drawn here), linked to the row above (dashed next
        to a fold).  Returns each row's y."""
        y_of = []
        for r, row in enumerate(rows):
            y = TOP + r * ROW
            y_of.append(y)
            if row[0] == "fold":
                f = self._add(Fold(row[1], row[2], self.fold_w, CARD_H))
                f.setPos(self.fold_x, y)
            else:
                draw_card(row, y)
            if r:
                dashed = row[0] == "fold" or rows[r - 1][0] == "fold"
                self._add(Arrow([QPointF(LINK_X, y - ROW + CARD_H + 1), QPointF(LINK_X, y - 1)],
                                "#444444", 1.8, dash=dashed, head=7))
        return y_of

    def _draw_pointers(self, name: str, where, before, y_at: dict) -> None:
        """The search pointer's arrow at the row of ``where``, and a faint
        one at ``before`` (where it was before the step; None: it did not
        move); ``y_at``: each drawn row's name -> y."""
        if where is not None and where in y_at:
            p = self._add(Pointer(name, palette.SEARCHED, POINTER_LEN - 2))
            p.setPos(X_POINTER, y_at[where] + CARD_H / 2)
            p.setZValue(5)
        if before is not None and before != where and before in y_at:
            p = self._add(Pointer("before", MUTED, POINTER_LEN - 2, faint=True))
            p.setPos(X_POINTER, y_at[before] + CARD_H / 2)
            p.setZValue(4)

    def _note_width(self, x: float) -> float:
        """Wrap notes at the right edge of the view, so nothing needs a sideways scroll."""
        return max(NOTE_MIN_W, self._visible_width() - x - 22)

    def _draw_loop(self, y_first: float, y_last: float) -> None:
        """The ring's closing link: from under the last row, up the left
        edge, into the top of the first row."""
        bottom = y_last + CARD_H
        pts = [QPointF(LINK_X, bottom + 1), QPointF(LINK_X, bottom + 12), QPointF(X_LOOP, bottom + 12),
               QPointF(X_LOOP, y_first - 14), QPointF(LINK_X, y_first - 14), QPointF(LINK_X, y_first - 1)]
        loop = self._add(Arrow(pts, "#444444", 1.8, head=7))
        loop.setZValue(-1)

    def _cards_rect(self, focus: list) -> QRectF:
        """The cards of ``focus`` (keys, most wanted first), as many as fit
        the canvas's height now, with a margin: what a step brings into view."""
        rect = None
        height = self.canvas.viewport().height() / max(self.canvas.zoom, 1e-6)
        for key in focus:
            card = self._cards.get(key)
            if card is None:
                continue
            r = card.sceneBoundingRect().adjusted(0, -20, 0, 20)
            grown = r if rect is None else rect.united(r)
            if rect is None or grown.height() <= height:
                rect = grown
        return QRectF(0, 0, 10, 10) if rect is None else rect


class CardColumn:
    """The cards, folds, pointers, badges and notes on a canvas ``root``
    item, read as a column.  ``sentinel``: the role of the card that stands
    for the list's static head (``"base"``, ``"allocs"``), named by that
    word rather than an address; ``ghost_roles``: the roles of the cards
    drawn where a block was before the step."""

    def __init__(self, root, sentinel: str, ghost_roles: tuple[str, ...]) -> None:
        self.items = root.childItems()
        self.cards = [c for c in self.items if isinstance(c, Card)]
        self.sentinel = sentinel
        self.ghost_roles = ghost_roles

    def name(self, card: Card | None):
        """The sentinel's word, a card's block address, or None."""
        if card is None:
            return None
        return self.sentinel if card.role == self.sentinel else int(card.left, 16)

    def sequence(self) -> list:
        """The rows top to bottom: the sentinel's word, ``("node", addr)``,
        ``("ghost", addr)`` or ``("fold", count)``."""
        rows = []
        for item in self.items:
            if isinstance(item, Card):
                if item.role == self.sentinel:
                    rows.append((item.scenePos().y(), self.sentinel))
                elif item.role in self.ghost_roles:
                    rows.append((item.scenePos().y(), ("ghost", int(item.left, 16))))
                else:
                    rows.append((item.scenePos().y(), ("node", int(item.left, 16))))
            elif isinstance(item, Fold):
                rows.append((item.scenePos().y(), ("fold", item.count_shown())))
        rows.sort(key=lambda r: r[0])
        return [r[1] for r in rows]

    def card_at(self, point: QPointF) -> Card | None:
        """The card drawn at ``point`` (scene coordinates), give or take 2 px."""
        for c in self.cards:
            if c.mapToScene(c.rect()).boundingRect().adjusted(-2, -2, 2, 2).contains(point):
                return c
        return None

    def row_card(self, item) -> Card | None:
        """The card on the row of ``item``'s centre."""
        cy = item.sceneBoundingRect().center().y()
        for c in self.cards:
            r = c.mapToScene(c.rect()).boundingRect()
            if r.top() <= cy <= r.bottom():
                return c
        return None

    def pointers(self) -> tuple:
        """The names under the pointer arrow and under the faint one (where
        it was before the step)."""
        pointer = before = None
        for item in self.items:
            if isinstance(item, Pointer):
                target = self.name(self.card_at(item.tip + QPointF(4, 0)))
                if item.faint:
                    before = target
                else:
                    pointer = target
        return pointer, before

    def numbers(self) -> list[tuple[int, object]]:
        """``(number, name)`` of every visit badge, in number order."""
        numbers = []
        for item in self.items:
            if isinstance(item, Badge):
                owner = self.name(self.row_card(item))
                numbers.extend((int(n), owner) for n in item.text.split(", "))
        numbers.sort()
        return numbers

    def roles(self) -> dict[int, str]:
        """``{addr: role}`` of the cards drawn with one (not the sentinel)."""
        return {int(c.left, 16): c.role for c in self.cards if c.role and c.role != self.sentinel}

    def notes(self) -> dict[int, str]:
        """``{addr: text}`` of the notes beside the cards."""
        return {item.addr: item.text() for item in self.items if isinstance(item, Note) and item.addr is not None}

    def selected(self):
        """The name of the card outlined as selected, or None."""
        selected = [self.name(c) for c in self.cards if c.selected]
        return selected[0] if selected else None
