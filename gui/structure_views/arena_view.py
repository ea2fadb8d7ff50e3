"""The V7/4BSD malloc's arena: one ring of *all* blocks, busy and idle.

Seventh Edition Unix ``malloc.c`` keeps no free list: every block's first
word points at the next block, its low bit saying busy, and the ring closes
through two static words, ``allocs``, outside the heap.  A malloc starts at
``allocp`` and steps over every block, busy ones included; an idle block
first absorbs the idle blocks after it.  That is what made seed 002's
"normal 4bsd" slow, and what this view shows.

The ring is a column of cards in address order, under the static
``allocs`` words drawn as a grey sentinel, with the closing link back up the
left edge: busy blocks grey, idle ones yellow, the top word ``alloct`` dark.
``allocp`` is an arrow at its card (a faint one where it was before the
step).  The blocks this step's search stood on carry their visit numbers
(the first and last :data:`VISIT_ENDS` of a long search); the block placed,
the idle rest a split left, the block freed, the memory ``sbrk`` added and the
blocks absorbed into an idle neighbour (drawn dashed where they were) are
outlined and named.  A long ring is summarised: the ends, ``allocp``, the
numbered and changed blocks and the selection stay, every other run folds
into "… 812 more, 40 examined …"; :attr:`summary` says so.

:meth:`drawn` reads the drawing back from the graphics items:

``sequence``
    the rows top to bottom: ``"allocs"``, ``("node", addr)``, ``("ghost",
    addr)`` or ``("fold", count)``;
``states``
    ``{addr: "busy" | "idle" | "top"}`` as painted on the cards;
``pointer`` / ``pointer_before``
    the address under the ``allocp`` arrow (``"allocs"`` at the static words),
    and the faint arrow's;
``numbers``
    ``[(number, addr)]`` of the visit badges, in number order;
``roles`` / ``notes``
    ``{addr: role}`` and ``{addr: text}`` as drawn;
``selected``
    the address of the card outlined as selected, or None.
"""

from __future__ import annotations

from bisect import insort

from PySide6.QtCore import QRectF

from heapscope.allocators import events as ev
from .. import palette
from . import register_view
from .canvas import (MUTED, SELECTED, SMALL_PX, TEXT_PX, Badge, Note, count_text, hex_addr, pen,
                     size_text, swatch_css, text_font)
from .card_column import CARD_H, NOTE_MIN_W, NOTE_RIGHT, ROW, X_CARD, CardColumn, CardColumnView
from .step_reader import StepReader
from .summarise import fold, spread

#: a search longer than twice this keeps the numbers of its first and last this many blocks
VISIT_ENDS = 8

CARD_W = 190
X_BADGE = X_CARD + CARD_W + 8

BUSY_FILL = "#C8C8C8"
#: role -> (outline colour, width, dashed, note colour)
ROLE_STYLE = {
    "placed": (palette.PLACED, 4.5, False, palette.PLACED),
    "rest": (palette.PLACED, 2.5, True, palette.PLACED),
    "freed": (palette.RELEASED, 3.5, True, palette.RELEASED),
    "new": (palette.RELEASED, 3.0, True, palette.RELEASED),
    "absorbed": (MUTED, 2.5, True, MUTED),
    "examined": (palette.SEARCHED, 3.5, False, "#9A6700"),
}
ROLE_ORDER = ("placed", "absorbed", "freed", "rest", "new", "examined")
STATE_WORD = {"busy": "busy", "free": "idle", "top": "top"}


class ArenaStep(StepReader):
    """What one step did to the arena, from its explained events."""

    def __init__(self, explained) -> None:
        self.busy_visits = 0
        self.roles: dict[int, set[str]] = {}
        self.notes: dict[int, str] = {}
        self.ghosts: dict[int, tuple[int, int]] = {}       # absorbed addr -> (size, into)
        self.pointer_before = None
        self.pointer_moved = False
        self.grow_failed = None
        super().__init__(explained)

    def on_Visit(self, e: ev.Visit) -> None:
        self.visit(e.addr)
        self.busy_visits += e.busy

    def on_Coalesce(self, e: ev.Coalesce) -> None:
        self.ghosts[e.high_addr] = (e.high_size, e.low_addr)
        self._mark(e.high_addr, "absorbed", f"absorbed into {hex_addr(e.low_addr)}")
        self._mark(e.low_addr, "examined", f"absorbed the idle block after it: {size_text(e.size)}")

    def on_Split(self, e: ev.Split) -> None:
        # a block absorbed earlier in the step may stand again as the rest
        self._revive(e.rest_addr)
        self._revive(e.taken_addr)
        self._mark(e.rest_addr, "rest", f"the rest: {size_text(e.rest_size)}, idle")

    def on_Placed(self, e: ev.Placed) -> None:
        self._revive(e.addr)
        self._mark(e.addr, "placed", f"placed {e.request} B: busy")

    def on_Released(self, e: ev.Released) -> None:
        self._mark(e.addr, "freed", "freed: idle, not joined")

    def on_ArenaExtended(self, e: ev.ArenaExtended) -> None:
        self._mark(e.addr, "new", f"new from sbrk: {size_text(e.size)}")
        if e.old_top is not None:
            self._mark(e.old_top, "new", "the old top word, idle now")

    def on_PointerMove(self, e: ev.PointerMove) -> None:
        if e.name == "allocp":
            if not self.pointer_moved:
                self.pointer_before = e.old
            self.pointer_moved = True

    def on_GrowFailed(self, e: ev.GrowFailed) -> None:
        self.grow_failed = e.increment

    def _revive(self, addr: int) -> None:
        if self.ghosts.pop(addr, None) is not None:
            self.roles[addr].discard("absorbed")

    def _mark(self, addr: int, role: str, note: str) -> None:
        self.roles.setdefault(addr, set()).add(role)
        self.notes[addr] = note

    def role(self, addr: int) -> str:
        mine = self.roles.get(addr, set())
        for r in ROLE_ORDER:
            if r in mine:
                return r
        return "examined" if addr in self.numbers else ""

    def changed(self) -> list[int]:
        return list(self.roles)


@register_view("arena-ring")
class ArenaRingView(CardColumnView):
    """V7's ring of all blocks from the static ``allocs``, with ``allocp``."""

    kinds = ("arena-ring",)
    role_words = {"placed": "the placed block", "rest": "the idle rest", "freed": "the freed block",
                  "new": "the new memory at", "absorbed": "the absorbed block"}

    def __init__(self, parent=None) -> None:
        super().__init__([
            ("stood on, in order", "badge:1"),
            ("busy", swatch_css("#6b6b6b", BUSY_FILL)),
            ("idle", swatch_css("#6b6b6b")),
            ("placed", swatch_css(palette.PLACED)),
            ("freed, new", swatch_css(palette.RELEASED, dashed=True)),
            ("selected", swatch_css(SELECTED, "#FFFFFF", width=4)),
        ], parent)
        self._say(self.title, "V7/4BSD malloc: one ring of every block, busy and idle; a search "
                              "starts at allocp and steps over busy blocks too")
        self.step: ArenaStep | None = None

    def set_selection(self, addr: int | None) -> None:
        """Busy blocks are selectable too (the map's blocks all are): a folded
        one is drawn out."""
        if addr is not None and addr not in self._cards and self._structure is not None \
                and any(a == addr for a, _, _ in self._structure["ring"]):
            self._selection = addr
            self._render(scroll=False)
        super().set_selection(addr)

    # -------------------------------------------------------------- draw
    def _draw(self, s: dict, scroll: bool) -> None:
        ring = [(int(a), int(size), state) for a, size, state in s["ring"]]
        state_of = {a: (size, state) for a, size, state in ring}
        step = self.step = ArenaStep(self._events())
        order = [a for a, _, _ in ring]
        for g in step.ghosts:
            if g not in state_of:
                insort(order, g)
        pointer = s.get("rover")
        runs, shown_numbers = self._fold_plan(order, step, pointer)

        rows, folded, folded_runs, folded_visited = self._folded_rows(order, runs, lambda a: ("node", a),
                                                                      step.numbers)
        rows.insert(0, ("allocs", None))
        self._keep_cards({r[1] for r in rows if r[0] == "node"} | {"allocs"})

        def draw_card(row, y):
            if row[0] == "allocs":
                return self._draw_allocs(y)
            return self._draw_node(row[1], state_of.get(row[1]), y, step, shown_numbers.get(row[1], []))

        y_of = self._lay_rows(rows, draw_card)
        self._draw_loop(y_of[0], y_of[-1])
        where = "allocs" if pointer is None else pointer
        before = ("allocs" if step.pointer_before is None else step.pointer_before) if step.pointer_moved else None
        y_at = {(row[1] if row[0] == "node" else "allocs"): y for row, y in zip(rows, y_of) if row[0] != "fold"}
        self._draw_pointers("allocp", where, before, y_at)
        for key, card in self._cards.items():
            card.set_selected(key == self._selection)
        if len(ring) == 0:
            note = self._add(Note("no sbrk yet: the arena is the two static words", text_font(TEXT_PX, italic=True),
                                  MUTED, max(NOTE_MIN_W, self._visible_width() - X_CARD - NOTE_RIGHT)))
            note.setPos(X_CARD, self._spans["allocs"][1] + ROW - CARD_H)
        self.canvas.finish()

        busy = sum(1 for _, _, st in ring if st == "busy")
        idle = sum(1 for _, _, st in ring if st == "free")
        words = [f"{count_text(len(ring))} blocks in the arena: {count_text(busy)} busy, {count_text(idle)} idle"]
        if step.visits:
            words.append(f"the search stood on {count_text(len(step.visits))}, "
                         f"{count_text(step.busy_visits)} of them busy (or the top word)")
        if step.grow_failed is not None:
            words.append(f"sbrk({size_text(step.grow_failed)}) failed: out of memory")
        summary = ""
        if folded:
            summary = (f"Summarised: {count_text(len(order) - folded)} of {count_text(len(order))} "
                       f"blocks shown (allocp, the first and last {VISIT_ENDS} stood on, the changed "
                       f"blocks, the ends); {count_text(folded)} folded in {count_text(folded_runs)} "
                       f"run{'s' if folded_runs != 1 else ''}"
                       + (f", {count_text(folded_visited)} of them stood on" if folded_visited else "")
                       + ".")
        self._set_words(" · ".join(words), summary, step.visits + step.changed(), shown_numbers)
        if scroll:
            self._scroll_to(where, step)
        else:
            self._say_summary()

    def _fold_plan(self, order: list[int], step: ArenaStep, pointer) -> tuple[list, dict]:
        """Which blocks of the ring (``order``, addresses) stay drawn when it
        is long, as summarise.fold's runs: the ends, ``allocp`` and where it
        was, the first and last :data:`VISIT_ENDS` stood on, the blocks
        changed, the selection; and the visit numbers kept, per block."""
        index = {a: i for i, a in enumerate(order)}
        keep = [(0, 1), (len(order) - 1, 1)] + self._kept_for_step(index, step)
        if pointer in index:
            keep.append((index[pointer], 2))
        numbered = set(spread(list(range(len(step.visits))), VISIT_ENDS))
        shown_numbers = {}
        for v in sorted(numbered):
            a = step.visits[v]
            shown_numbers.setdefault(a, []).append(v + 1)
            if a in index:
                keep.append((index[a], 0))
        return fold(len(order), keep), shown_numbers

    def _draw_allocs(self, y: float) -> float:
        card = self._card("allocs", None, CARD_W, CARD_H)
        card.set_row("allocs", "static")
        card.set_style(palette.META_GREY, pen("#000000", 1.5), "#FFFFFF", "allocs")
        card.setPos(X_CARD, y)
        card.setToolTip("allocs[0] and allocs[1]: two static words outside the heap that close "
                        "the ring; the link from allocs[1] to the heap is marked busy (the gap)")
        return self._place_note("the static words that close the ring", text_font(SMALL_PX, italic=True),
                                MUTED, X_BADGE, y, optional=True)

    def _draw_node(self, addr: int, info, y: float, step: ArenaStep, numbers: list[int]) -> float:
        """The block's card at row ``y``, its visit numbers and its note;
        returns the bottom of what was drawn."""
        card = self._card(addr, addr, CARD_W, CARD_H)
        ghost = info is None
        size, state = (step.ghosts[addr][0], "free") if ghost else info
        card.set_row(hex_addr(addr), f"{size_text(size)} {STATE_WORD[state]}")
        role = "absorbed" if ghost else step.role(addr)
        fill = {"busy": BUSY_FILL, "free": palette.YELLOW, "top": palette.META_GREY}[state]
        text = "#FFFFFF" if state == "top" else "#000000"
        if ghost:
            colour, width, _, _ = ROLE_STYLE["absorbed"]
            card.set_style("#FFFFFF", pen(colour, width, dash=True), MUTED, "absorbed")
        elif role:
            colour, width, dash, _ = ROLE_STYLE[role]
            card.set_style(fill, pen(colour, width, dash), text, role)
        else:
            card.set_style(fill, pen("#6b6b6b", 1.2), text, "")
        card.setPos(X_CARD, y)
        tip = [f"{'the top word alloct' if state == 'top' else STATE_WORD[state] + ' block'} "
               f"{hex_addr(addr)}: {size} bytes ({size_text(size)})"]
        x = X_BADGE
        if numbers:
            badge = self._add(Badge(", ".join(str(n) for n in numbers), addr))
            badge.setPos(x, y + (CARD_H - badge.h) / 2)
            x += badge.w + 8
            tip.append("the search stood on it: " + ", ".join(str(n) for n in numbers))
        note = step.notes.get(addr)
        bottom = y + CARD_H
        if note:
            colour = ROLE_STYLE.get(role, ROLE_STYLE["examined"])[3]
            bottom = self._place_note(note, text_font(SMALL_PX, bold=role not in ("examined", "absorbed")),
                                      colour, x, y, addr)
            tip.append(note)
        card.setToolTip("\n".join(tip))
        return bottom

    def _scroll_to(self, pointer, step: ArenaStep) -> None:
        self._follow(lambda: self._step_rect(pointer, step))

    def _step_rect(self, pointer, step: ArenaStep) -> QRectF:
        """What :meth:`_scroll_to` brings into view, for the canvas's height now."""
        return self._cards_rect(step.changed() + [pointer] + step.visits[:2])

    # ------------------------------------------------------------ readback
    def drawn(self) -> dict:
        column = CardColumn(self.canvas.root, "allocs", ("absorbed",))
        pointer, before = column.pointers()
        states = {int(c.left, 16): c.right.split()[-1] for c in column.cards if c.role != "allocs"}
        return {"sequence": column.sequence(), "states": states, "pointer": pointer, "pointer_before": before,
                "numbers": column.numbers(), "roles": column.roles(), "notes": column.notes(),
                "selected": column.selected()}
