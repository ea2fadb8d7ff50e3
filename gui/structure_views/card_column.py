"""A column of cards: the rings (next fit, first fit, Kruse's rotating
list) and the V7 arena draw one card a row, top down, with the search
pointer's arrow at the left, visit badges at the right and notes beside
them, and the ring's closing link up the left edge.  What they draw alike
is here once: the column's geometry, :class:`CardColumnView` (the closing
link, where a note goes, the rectangle a step's cards fit in, what the line
under the drawing says of the step's cards outside the frame) and
:class:`CardColumn` (reading the drawing back for :meth:`drawn`).

A note goes beside its card when it fits there whole; in a narrow view
(presenter mode at 1280 x 720 leaves the canvas about 400 x 160 design
pixels, and a note beside a card wrapped to at least NOTE_MIN_W ran past the
right edge, cut: "walked pas…", issue 24) it goes under the card, right of
the link to the next row, in the gap between the rows, and the next row
moves down as far as it needs; a sentinel's note (base, allocs: what the
title and the card's tooltip say too) is left out rather than take a
narrow view's height.  When the step's cards cannot all be in the frame,
the line under the drawing says first which are above or below it, or cut
at its edge, and says so again after a scroll or a resize.
"""

from __future__ import annotations

import math

from PySide6.QtCore import QPointF, QRectF, Slot

from .. import palette
from .canvas import MUTED, Arrow, Badge, Card, Fold, Note, Pointer, hex_addr, ordinal
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
#: a note that does not fit beside its card goes under it, from here (right
#: of the link down to the next row), this far under the card, in the gap
#: between the rows; the next row comes this far under the note
X_NOTE_UNDER = LINK_X + 12
NOTE_UNDER_GAP = 2
NOTE_UNDER_AFTER = 8
#: what a note keeps clear of the view's right edge (the drawing's margin
#: and a little air: less, and a sideways scroll bar comes)
NOTE_RIGHT = 22
#: a row this much past the frame's edge still counts as in it (outlines'
#: pens stand out of the card by half their width)
FRAME_TOLERANCE = 4
#: the margin a step's rows are brought into view with, above and below
STEP_MARGIN = 20
#: room kept above a row the frame's top edge is moved to (a pointer's name
#: stands above its card's top)
ROW_HEADROOM = 12


class CardColumnView(CardView):
    """Base of the views drawn as a column of cards: rows top down, each a
    card (a block, or the sentinel that closes the ring) or a fold of
    cards not drawn, linked to the row above."""

    #: a fold's left edge and width (a little wider than the cards)
    fold_x, fold_w = X_CARD - 20, 230
    #: role -> how the line under the drawing names a card of that role
    #: outside the frame ("the split block 0x8800")
    role_words: dict[str, str] = {}

    def __init__(self, legend, parent=None) -> None:
        super().__init__(legend, parent)
        #: each drawn row's key -> (top, bottom) in scene units: the card
        #: and what stands beside or under it
        self._spans: dict = {}
        #: the keys of the cards the step names (examined or changed), in
        #: the order the line under the drawing names them
        self._named: list = []
        #: key -> the visit numbers drawn on it
        self._numbers_of: dict = {}
        #: the line's parts: the counts, and what was folded
        self._words = ""
        self._folded_summary = ""
        self.summary = ""
        self.canvas.verticalScrollBar().valueChanged.connect(self._scrolled)

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
        card's and returns the bottom of what it drew, a note under the card
        included; a fold is drawn here), linked to the row above (dashed next
        to a fold).  A row is ROW high; a note under its card hangs in the
        gap to the next row, which moves down as far as it needs.  Returns
        each row's y; each card row's span is kept in :attr:`_spans` under
        its key (the address, or the sentinel's word)."""
        y_of = []
        self._spans, self._named = {}, []
        y = TOP
        for r, row in enumerate(rows):
            y_of.append(y)
            if row[0] == "fold":
                f = self._add(Fold(row[1], row[2], self.fold_w, CARD_H))
                f.setPos(self.fold_x, y)
                bottom = y + CARD_H
            else:
                bottom = max(y + CARD_H, draw_card(row, y) or 0)
                self._spans[row[1] if row[0] == "node" else row[0]] = (y, bottom)
            if r:
                dashed = row[0] == "fold" or rows[r - 1][0] == "fold"
                self._add(Arrow([QPointF(LINK_X, y_of[r - 1] + CARD_H + 1), QPointF(LINK_X, y - 1)],
                                "#444444", 1.8, dash=dashed, head=7))
            y = max(y + ROW, bottom + NOTE_UNDER_AFTER)
        return y_of

    def _place_note(self, text: str, font, colour: str, x: float, y: float, addr=None,
                    optional: bool = False) -> float:
        """The note beside the card at row ``y``, from ``x``, when it fits
        there whole (wrapped to the view's right edge in at most two lines,
        nothing cut); else under the card, right of the link down to the next
        row, wrapped to the view's width in at most three lines -- or, when
        ``optional`` (a sentinel's note, which the card's tooltip and the
        title say too), not at all: a narrow view keeps its height for the
        step's rows.  Returns the bottom of the card and its note."""
        right = self._visible_width() - NOTE_RIGHT
        beside = right - x
        if beside >= 40:
            item = Note(text, font, colour, beside, addr)
            if item.shown == text and item.boundingRect().width() <= beside + 0.5:
                self._add(item)
                item.setPos(x, y + (CARD_H - item.boundingRect().height()) / 2)
                return max(y + CARD_H, item.y() + item.boundingRect().height())
        if optional:
            return y + CARD_H
        item = self._add(Note(text, font, colour, max(NOTE_MIN_W, right - X_NOTE_UNDER), addr, max_lines=3))
        item.setPos(X_NOTE_UNDER, y + CARD_H + NOTE_UNDER_GAP)
        return item.y() + item.boundingRect().height()

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

    def _draw_loop(self, y_first: float, y_last: float) -> None:
        """The ring's closing link: from under the last row, up the left
        edge, into the top of the first row."""
        bottom = y_last + CARD_H
        pts = [QPointF(LINK_X, bottom + 1), QPointF(LINK_X, bottom + 12), QPointF(X_LOOP, bottom + 12),
               QPointF(X_LOOP, y_first - 14), QPointF(LINK_X, y_first - 14), QPointF(LINK_X, y_first - 1)]
        loop = self._add(Arrow(pts, "#444444", 1.8, head=7))
        loop.setZValue(-1)

    def _cards_rect(self, focus: list) -> QRectF:
        """The rows of ``focus`` (keys, most wanted first: a card with the
        note under it), as many as fit the canvas's height now, with a
        margin: what a step brings into view."""
        rect = None
        height = self.canvas.viewport().height() / max(self.canvas.zoom, 1e-6)
        for key in focus:
            card = self._cards.get(key)
            if card is None or key not in self._spans:
                continue
            top, bottom = self._spans[key]
            box = card.sceneBoundingRect()
            r = QRectF(box.left(), top - STEP_MARGIN, box.width(), bottom - top + 2 * STEP_MARGIN)
            grown = r if rect is None else rect.united(r)
            if rect is None or grown.height() <= height:
                rect = grown
        return QRectF(0, 0, 10, 10) if rect is None else rect

    def _follow(self, rect) -> None:
        """Scroll to ``rect`` (a function of no arguments giving it, for the
        canvas's size now) as the canvas's reveal does, with no row cut at
        the frame's top edge (:meth:`_clear_top_edge`), and say what of the
        step is outside the frame then (again after a resize)."""
        def then(shown: QRectF) -> None:
            self._clear_top_edge(shown.adjusted(0, STEP_MARGIN, 0, -STEP_MARGIN))
            self._say_summary()
        self.canvas.reveal(rect, 10, 10, then=then)

    def _clear_top_edge(self, core: QRectF) -> None:
        """A row the frame's top edge cuts (the note under a card showing
        without its card, or half an address) is scrolled out above when the
        rows ``core`` stay in the frame (what comes in at the bottom is the
        step's more often than not: its rows run down from where the search
        started), else brought whole into the frame when they stay in it."""
        bar = self.canvas.verticalScrollBar()
        zoom = max(self.canvas.zoom, 1e-6)
        shown = self.canvas.mapToScene(self.canvas.viewport().rect()).boundingRect()
        t = FRAME_TOLERANCE
        for top, bottom in sorted(self._spans.values()):
            if not (top < shown.top() - t and bottom > shown.top() + t):
                continue
            up = shown.top() - (top - ROW_HEADROOM)
            down = bottom + NOTE_UNDER_AFTER - shown.top()
            if core.top() >= shown.top() + down:
                bar.setValue(bar.value() + math.ceil(down * zoom))
            elif core.bottom() <= shown.bottom() - up:
                bar.setValue(bar.value() - math.ceil(up * zoom))
            return

    def _draw_nothing(self) -> None:
        self._spans, self._named, self._numbers_of = {}, [], {}
        self._words, self._folded_summary = "nothing loaded", ""
        super()._draw_nothing()

    # ------------------------------------------------------------ the line under the drawing
    def _set_words(self, words: str, folded: str, named: list, numbers: dict) -> None:
        """The line's counts and folded summary for this drawing, the keys of
        the cards the step names and the visit numbers drawn on them; the
        line is said by :meth:`_say_summary` (again after every scroll)."""
        self._words, self._folded_summary = words, folded
        self._named = [k for k in dict.fromkeys(named) if k in self._spans]
        self._numbers_of = numbers

    @Slot(int)
    def _scrolled(self, _value: int) -> None:
        # the bar moves while a closed view is torn down, its attributes gone
        # (AttributeError: no 'canvas', after a script closed a ring view)
        if "canvas" in self.__dict__:
            self._say_summary()

    def _say_summary(self) -> None:
        """:attr:`summary` and the line under the drawing: where the step's
        cards are not all in the frame, which are above or below it (first:
        it is about this step), then what was folded."""
        frame = self._frame_words()
        self.summary = " ".join(t for t in (frame, self._folded_summary) if t)
        self._say(self.info, self._words + ("\n" + self.summary if self.summary else ""))

    def _outside(self) -> dict[str, list]:
        """The named cards' rows not wholly in the frame now, by where:
        ``above``, ``top`` (cut at its top edge), ``bottom``, ``below``."""
        shown = self.canvas.mapToScene(self.canvas.viewport().rect()).boundingRect()
        out = {"above": [], "top": [], "bottom": [], "below": []}
        t = FRAME_TOLERANCE
        for key in self._named:
            if key not in self._spans:
                continue
            top, bottom = self._spans[key]
            if bottom <= shown.top() + t:
                out["above"].append(key)
            elif top < shown.top() - t:
                out["top"].append(key)
            elif top >= shown.bottom() - t:
                out["below"].append(key)
            elif bottom > shown.bottom() + t:
                out["bottom"].append(key)
        return out

    def _frame_words(self) -> str:
        """"Above the frame: the 1st to 3rd examined." and the like, or ''
        when every card the step names is in the frame."""
        out = self._outside()
        places = (("above", "Above the frame"), ("top", "Cut at the top of the frame"),
                  ("bottom", "Cut at the bottom of the frame"), ("below", "Below the frame"))
        return " ".join(f"{words}: {self._name_cards(out[where])}." for where, words in places if out[where])

    def _name_cards(self, keys: list) -> str:
        """The cards ``keys`` as the line names them: the examined by their
        numbers (one with its address), the others by role and address."""
        numbers = sorted(n for k in keys for n in self._numbers_of.get(k, ()))
        unnumbered = [k for k in keys if not self._numbers_of.get(k) and self._role(k) == "examined"]
        parts = []
        if len(numbers) == 1:
            key = next(k for k in keys if self._numbers_of.get(k))
            parts.append(f"the {ordinal(numbers[0])} examined ({self._key_text(key)})")
        elif numbers:
            runs = [[numbers[0], numbers[0]]]
            for n in numbers[1:]:
                if n == runs[-1][1] + 1:
                    runs[-1][1] = n
                else:
                    runs.append([n, n])
            words = [ordinal(a) if a == b else f"{ordinal(a)} to {ordinal(b)}" for a, b in runs]
            listed = words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]
            parts.append(f"the {listed} examined")
        if len(unnumbered) == 1:
            parts.append(f"{'one more' if numbers else 'one'} examined ({self._key_text(unnumbered[0])})")
        elif unnumbered:
            parts.append(f"{len(unnumbered)} {'more ' if numbers else ''}examined")
        for key in keys:
            if self._numbers_of.get(key) or key in unnumbered:
                continue
            parts.append(f"{self.role_words.get(self._role(key), 'the block')} {self._key_text(key)}")
        return ", ".join(parts)

    def _role(self, key) -> str:
        card = self._cards.get(key)
        return card.role if card is not None else ""

    @staticmethod
    def _key_text(key) -> str:
        return hex_addr(key) if isinstance(key, int) else str(key)


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
