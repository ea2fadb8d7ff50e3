"""The free list as a ring: K&R's address-ordered ring (next fit, first fit)
and Kruse's rotating LIFO ring.

**address-ring** (Kernighan & Ritchie, *The C Programming Language*, 8.7;
first fit is Knuth's algorithm A on the same list).  The free blocks sit on
a circular list in increasing address order, closed by K&R's ``base``: a
header of size 0 outside the heap, drawn at the top as the grey sentinel it
is.  The rover ``freep`` is an arrow at the node it points at; a next-fit
search starts at the node *after* it.  First fit keeps no rover: every
search starts after ``base``, and the view says so at ``base``.

**ring** (N. J. Kruse's rotating free list, seed 000, on Knuth's boundary
tags).  The explicit free list in list order -- LIFO pushes, *not* address
order -- with its ``head``.  A malloc searches from the head and then
rotates the head to the successor of the block used, so the ring is drawn
from the node where this step's search started (its first examined node)
when the step searched, and from the head otherwise: the numbered nodes
then read top down, followed by the head's new place.

Both are drawn as a column of cards, one per free block (address in hex,
size in B/KiB), linked top to bottom, with the closing link of the ring
running back up the left edge.  The nodes this step examined carry their
visit numbers in order; the block split, the block unlinked whole (an exact
fit, drawn dashed where it was), the block a free linked in or pushed, the
blocks joined by coalescing and the memory sbrk added are outlined and
named beside their card.  A list longer than
:data:`~.summarise.FULL_LIMIT` is summarised: the view keeps the first
nodes, the last, the pointer's neighbourhood, the numbered nodes (the first
and last :data:`VISIT_ENDS` of a long search), the changed nodes and the
selection, and folds every other run into a "… 4 213 more …" row;
:attr:`summary` says what was folded.

:meth:`drawn` reads the drawing back from the graphics items:

``sequence``
    the rows top to bottom: ``"base"``, ``("node", addr)``, ``("ghost",
    addr)`` (a block that left the list this step) or ``("fold", count)``;
``nodes`` / ``ghosts`` / ``folds``
    the node addresses, ghost addresses and folded counts, in that order;
``pointer`` / ``pointer_before``
    the address of the card under the pointer arrow's tip, ``"base"``, or
    None when no arrow is drawn (first fit; an empty Kruse list); the
    faint arrow at the pointer's place before the step, if it moved;
``numbers``
    ``[(number, addr)]`` of the visit badges, in number order, each badge
    matched to the card on its row;
``roles`` / ``notes``
    ``{addr: role}`` and ``{addr: text}`` as drawn;
``loop``
    the (first, last) rows the ring's closing arrow joins;
``selected``
    the address of the card outlined as selected, or None.
"""

from __future__ import annotations

from bisect import insort

from PySide6.QtCore import QPointF, QRectF

from .. import palette
from . import register_view
from .card_column import CARD_H, NOTE_MIN_W, NOTE_RIGHT, TOP, X_CARD, CardColumn, CardColumnView
from .card_view import int_keys
from .canvas import (MUTED, SELECTED, SMALL_PX, TEXT_PX, Arrow, Badge, Note,
                     count_text, hex_addr, ordinal, pen, size_text, swatch_css, text_font)
from .ring_step import RingStep, read_step
from .summarise import fold, spread

#: a search longer than twice this keeps the numbers of its first and last this many nodes
VISIT_ENDS = 10

# Layout, in pixels at zoom 1 (the column's own in card_column.py).
CARD_W = 170
X_BADGE = X_CARD + CARD_W + 8

#: role -> (card outline colour, width, dashed, note colour)
ROLE_STYLE = {
    "examined": (palette.SEARCHED, 4.0, False, "#9A6700"),
    "split": (palette.PLACED, 4.5, False, palette.PLACED),
    "unlinked": (palette.PLACED, 3.5, True, palette.PLACED),
    "inserted": (palette.RELEASED, 3.5, True, palette.RELEASED),
    "joined": (palette.RELEASED, 3.5, True, palette.RELEASED),
    "grown": (palette.RELEASED, 3.5, True, palette.RELEASED),
    "absorbed": (MUTED, 2.5, True, MUTED),
}

class _RingView(CardColumnView):
    """The shared drawing of both rings; subclasses say which ring."""

    #: PointerMove name of the search pointer
    pointer_name = "rover"
    #: frees push at the head (Kruse) instead of linking in by address (K&R)
    lifo = False
    #: a 'base' sentinel heads the drawing
    has_base = False
    fold_x = X_CARD - 30
    role_words = {"split": "the split block", "unlinked": "the block handed out whole",
                  "inserted": "the freed block", "joined": "the joined block", "grown": "the new memory at",
                  "absorbed": "the absorbed block"}

    def __init__(self, parent=None) -> None:
        super().__init__([
            ("examined, in order", "badge:1"),
            ("split", swatch_css(palette.PLACED)),
            ("freed, joined, new", swatch_css(palette.RELEASED, dashed=True)),
            ("left the list", swatch_css(palette.PLACED, "#FFFFFF", dashed=True)),
            ("selected", swatch_css(SELECTED, "#FFFFFF", width=4)),
        ], parent)
        self.step: RingStep | None = None
        self._set_title(None)

    # ----------------------------------------------------- what to draw
    def _pointer(self, s: dict):
        """Where the search pointer is after the step: an address, 'base',
        or None when the policy has none to draw."""
        raise NotImplementedError

    def _order(self, s: dict, step: RingStep) -> list[int]:
        """The addresses of the list's rows in drawing order, the step's
        ghosts (``step.ghosts``) put back where they were."""
        raise NotImplementedError

    def _draw_nothing(self) -> None:
        self._set_title(None)
        super()._draw_nothing()

    def _draw(self, s: dict, scroll: bool) -> None:
        self._set_title(s)
        sizes = int_keys(s["sizes"])
        ring = list(s["free_list"])
        step = self.step = read_step(self._events(), set(ring), sizes, self.pointer_name, self.lifo)
        order = self._order(s, step)
        ghosts = {g.addr: g for g in step.ghosts}
        pointer = self._pointer(s)
        runs = self._fold_plan(order, step, pointer)

        # Rows: ('base',) then nodes, ghosts and folds in order.
        rows, folded_nodes, folded_runs, folded_examined = self._folded_rows(
            order, runs, lambda a: ("node", a, ghosts.get(a)), step.first)
        if self.has_base:
            rows.insert(0, ("base", None, None))

        wanted = {r[1] for r in rows if r[0] == "node"}
        if self.has_base:
            wanted.add("base")
        self._keep_cards(wanted)

        def draw_card(row, y):
            if row[0] == "base":
                return self._draw_base(y, pointer)
            return self._draw_node(row[1], row[2], y, sizes, step)

        y_of = self._lay_rows(rows, draw_card)
        if rows:
            self._draw_loop(y_of[0], y_of[-1])
        else:
            empty = self._add(Note("the free list is empty (head = NULL)", text_font(TEXT_PX, italic=True),
                                   MUTED, max(NOTE_MIN_W, self._visible_width() - X_CARD - NOTE_RIGHT)))
            empty.setPos(X_CARD, TOP)

        before = None
        if step.pointer_moved:
            before = "base" if step.pointer_before is None and self.has_base else step.pointer_before
        y_at = {(row[1] if row[0] == "node" else "base"): y for row, y in zip(rows, y_of) if row[0] != "fold"}
        self._draw_pointers(self.pointer_name, pointer, before, y_at)
        for key, card in self._cards.items():
            card.set_selected(key == self._selection)
        self.canvas.finish()
        folded = self._summary_text(len(ring), folded_nodes, folded_runs, folded_examined, step,
                                    pointer is not None)
        self._set_words(self._info_text(sizes, ring, pointer, step), folded, step.visits + step.changed(),
                        {a: step.numbers(a) for a in self._spans if isinstance(a, int)})
        if scroll:
            self._scroll_to_step(pointer, step)
        else:
            self._say_summary()

    def _fold_plan(self, order: list[int], step: RingStep, pointer) -> list:
        """What must stay visible when the list is folded, as summarise.fold's
        runs over ``order``: the ends, the pointer and where it was, the
        first and last :data:`VISIT_ENDS` examined, the blocks changed, the
        selection."""
        index = {addr: i for i, addr in enumerate(order)}
        keep = [(0, 1), (len(order) - 1, 0)] + self._kept_for_step(index, step)
        if isinstance(pointer, int) and pointer in index:
            keep.append((index[pointer], 2))
        numbered = spread(list(range(len(step.visits))), VISIT_ENDS)
        for v in numbered:
            a = step.visits[v]
            if a in index:
                keep.append((index[a], 1))
        return fold(len(order), keep)

    def _draw_base(self, y: float, pointer) -> float:
        card = self._card("base", None, CARD_W, CARD_H)
        card.set_row("base", "0 B")
        card.set_style(palette.META_GREY, pen("#000000", 1.5), "#FFFFFF", "base")
        card.setPos(X_CARD, y)
        note = "K&R's sentinel: a 0-byte header below the heap"
        if pointer is None:
            note = "first fit: every search starts here, after base"
        # the tooltip says what the note does: a narrow view leaves the note out
        card.setToolTip("K&R's base: a header of size 0 in static storage, below every heap "
                        "address; it closes the ring and is never handed out"
                        + ("\n" + note if pointer is None else ""))
        return self._place_note(note, text_font(SMALL_PX, italic=pointer is not None, bold=pointer is None),
                                MUTED if pointer else "#000000", X_BADGE, y, optional=True)

    def _draw_node(self, addr: int, ghost, y: float, sizes: dict, step: RingStep) -> float:
        """The block's card at row ``y``, its visit numbers and its note;
        returns the bottom of what was drawn."""
        card = self._card(addr, addr, CARD_W, CARD_H)
        size = ghost.size if ghost is not None else sizes.get(addr, 0)
        card.set_row(hex_addr(addr), size_text(size))
        role = step.role(addr)
        if ghost is not None:
            colour, width, dash, _ = ROLE_STYLE[ghost.role]
            card.set_style("#FFFFFF", pen(colour, width, dash=True), MUTED, ghost.role)
        elif role:
            colour, width, dash, _ = ROLE_STYLE[role]
            card.set_style(palette.YELLOW, pen(colour, width, dash), "#000000", role)
        else:
            card.set_style(palette.YELLOW, pen("#6b6b6b", 1.2), "#000000", "")
        card.setPos(X_CARD, y)
        tip = [f"free block {hex_addr(addr)}: {size} bytes ({size_text(size)})",
               f"ends at {hex_addr(addr + size)}"]
        x = X_BADGE
        numbers = step.numbers(addr)
        if numbers:
            badge = self._add(Badge(", ".join(str(n) for n in numbers), addr))
            badge.setPos(x, y + (CARD_H - badge.h) / 2)
            x += badge.w + 8
            tip.append("examined " + ", ".join(ordinal(n) for n in numbers) + " this step")
        text = step.note(addr)
        bottom = y + CARD_H
        if text:
            colour = ROLE_STYLE[role][3] if role else "#000000"
            bottom = self._place_note(text, text_font(SMALL_PX, bold=role not in ("examined", "absorbed")),
                                      colour, x, y, addr)
            tip.append(text)
        if ghost is not None:
            tip.insert(0, "no longer on the free list after this step")
        card.setToolTip("\n".join(tip))
        return bottom

    def _scroll_to_step(self, pointer, step: RingStep) -> None:
        """Bring what the step did into view, as much as fits, in this order:
        the blocks it changed, the pointer, where the pointer was (the
        search started there), the first nodes examined."""
        self._follow(lambda: self._step_rect(pointer, step))

    def _step_rect(self, pointer, step: RingStep) -> QRectF:
        """What :meth:`_scroll_to_step` brings into view, for the canvas's height now."""
        focus = step.changed() + [pointer]
        if step.pointer_moved:
            focus.append("base" if step.pointer_before is None and self.has_base else step.pointer_before)
        return self._cards_rect(focus + step.visits[:3])

    # ------------------------------------------------------------- words
    def _set_title(self, s) -> None:
        raise NotImplementedError

    def _info_text(self, sizes, ring, pointer, step) -> str:
        total = sum(sizes.values())
        if pointer is None:
            where = ""
        elif pointer == "base":
            where = f"{self.pointer_name} at base"
        else:
            where = f"{self.pointer_name} at {hex_addr(pointer)}"
        parts = [f"{count_text(len(ring))} free block{'s' if len(ring) != 1 else ''}, {size_text(total)}"]
        if where:
            parts.append(where)
        if step.visits:
            parts.append(f"{count_text(len(step.visits))} examined")
        if step.grow_failed is not None:
            parts.append(f"sbrk({size_text(step.grow_failed)}) failed: out of memory")
        return " · ".join(parts)

    def _summary_text(self, n: int, folded: int, runs: int, examined: int, step: RingStep,
                      has_pointer: bool) -> str:
        if not folded:
            return ""
        kept = [f"the {self.pointer_name}"] if has_pointer else []
        if step.visits:
            v = len(step.visits)
            kept.append(f"the first and last {VISIT_ENDS} examined" if v > 2 * VISIT_ENDS else "the examined")
        kept.append("the changed blocks, the ends")
        text = (f"Summarised: {count_text(n - folded)} of {count_text(n)} free blocks shown "
                f"({', '.join(kept)}); {count_text(folded)} folded in {count_text(runs)} "
                f"run{'s' if runs != 1 else ''}")
        if examined:
            text += f", {count_text(examined)} of them examined"
        return text + "."

    # ------------------------------------------------------------ readback
    def drawn(self) -> dict:
        column = CardColumn(self.canvas.root, "base", ("unlinked", "absorbed"))
        sequence = column.sequence()
        pointer, before = column.pointers()
        loop = None
        for item in column.items:
            if isinstance(item, Arrow) and len(item.points) == 6:
                start = column.card_at(item.points[0] + QPointF(0, -4))
                end = column.card_at(item.tip + QPointF(0, 4))
                loop = (column.name(end), column.name(start))
        return {
            "sequence": sequence,
            "nodes": [e[1] for e in sequence if isinstance(e, tuple) and e[0] == "node"],
            "ghosts": [e[1] for e in sequence if isinstance(e, tuple) and e[0] == "ghost"],
            "folds": [e[1] for e in sequence if isinstance(e, tuple) and e[0] == "fold"],
            "pointer": pointer,
            "pointer_before": before,
            "numbers": column.numbers(),
            "roles": column.roles(),
            "notes": column.notes(),
            "loop": loop,
            "selected": column.selected(),
        }


@register_view("address-ring")
class AddressRingView(_RingView):
    """K&R's circular free list in address order, from ``base``, with the rover."""

    kinds = ("address-ring",)
    pointer_name = "rover"
    lifo = False
    has_base = True

    def _pointer(self, s: dict):
        roving = any(p.get("name") == "rover" for p in s.get("pointers", ()))
        if not roving:
            return None
        return "base" if s.get("rover") is None else s["rover"]

    def _order(self, s: dict, step: RingStep) -> list[int]:
        # Ghosts go back where they were: the list is in address order.
        rows = list(s["free_list"])
        for g in step.ghosts:
            insort(rows, g.addr)
        return rows

    def _set_title(self, s) -> None:
        if s is not None and self._pointer(s) is None:
            self._say(self.title, "First fit: K&R's free list, a ring in address order; "
                               "every search starts at base")
        else:
            self._say(self.title, "Next fit: K&R's free list, a ring in address order; "
                               "a search starts just after the rover (freep)")


@register_view("ring")
class RotatingRingView(_RingView):
    """Kruse's explicit free list as a ring in list (LIFO) order, with its head."""

    kinds = ("ring",)
    pointer_name = "head"
    lifo = True
    has_base = False

    def _pointer(self, s: dict):
        return s.get("head")

    def _order(self, s: dict, step: RingStep) -> list[int]:
        rows = list(s["free_list"])
        # Start where this step's search started, so the numbers read top down.
        if step.visits and step.visits[0] in rows:
            k = rows.index(step.visits[0])
            rows = rows[k:] + rows[:k]
        head = s.get("head")
        visits = step.visits
        for g in step.ghosts:
            if g.role == "absorbed" and g.into in rows:
                at = rows.index(g.into) + 1
            elif g.addr in step.first:
                # where the search found it: after the node examined before it
                # (the same place whether or not the head has moved past it yet)
                k = step.first[g.addr] - 1
                at = rows.index(visits[k - 1]) + 1 if k and visits[k - 1] in rows else 0
            elif head in rows:
                # unlinked whole: it sat just before the block the head moved to
                at = rows.index(head)
            else:
                at = len(rows)
            rows.insert(at, g.addr)
        return rows

    def _set_title(self, s) -> None:
        self._say(self.title, "Rotating list (Kruse): the free list as a ring in LIFO order, "
                           "not by address; a search starts at the head")
