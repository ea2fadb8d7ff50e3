"""Kingsley's power-of-two buckets (4.2/4.3BSD malloc, Caltech 1982) as
columns.

The allocator keeps one LIFO list per bucket, ``nextf[k]``, of blocks of
2^(k+3) bytes (a page more for the big ones), never split nor joined; an
empty bucket is refilled by ``morecore``, which carves a page into equal
blocks.  The view draws one column per bucket in use -- every bucket with
free blocks, and any bucket this step touched -- left to right by block
size.  A column's header names the bucket, its block size and how many
blocks are free; the arrow under it is the list head ``nextf[k]``, and the
list hangs below, head first.  The block a malloc took off the head is drawn
dashed above the new head; the block a free pushed is the head, outlined;
the header of a bucket that ``morecore`` refilled says how many blocks it
carved, and the carved blocks are outlined as new memory.  Only the first
:data:`SHOWN_PER_BUCKET` blocks of a list are drawn (the head is where all
the action is), the rest folded into "… 309 more …"; a selected block deeper
in a list is drawn out between two folds.  :attr:`summary` says what was
folded.  Part of a fixed pool not carved yet stands apart, in a last column.
Shown event by event, a refill fills its column: the carved blocks drop in
from under the header one after another.

:meth:`drawn` reads back, from the graphics items:

``columns``
    one dict per column, left to right: ``bucket`` and ``count`` (parsed
    from the header text), ``block_size`` (the header's size text),
    ``nodes`` (the addresses of the list's cards, top down), ``folded``
    (the counts of the folds in it), ``taken`` (the ghost's address or
    None), ``refill`` (the refill line of the header, or None);
``pushed`` / ``taken`` / ``new``
    addresses of the cards drawn as pushed, taken and carved this step;
``outside``
    ``(addr, size text)`` of the uncarved pool, or None;
``selected``
    the address of the card outlined as selected, or None.
"""

from __future__ import annotations

import re

from PySide6.QtCore import QPointF, QRectF

from heapscope.allocators import events as ev

from .. import palette
from . import register_view
from .canvas import (MUTED, SELECTED, SMALL_PX, TEXT_PX, Arrow, Card, Fold, Note, count_text, hex_addr,
                     mono_font, pen, size_text, swatch_css, text_font)
from .card_view import CardView, int_keys
from .step_reader import StepReader

#: blocks drawn at the head of each list before the rest is folded
SHOWN_PER_BUCKET = 5

# Layout, in pixels at zoom 1.
COL_W = 118
COL_GAP = 12
LEFT = 10
TOP = 8
HEADER_H = 80
HEAD_ARROW = 26
CARD_H = 34
MARKED_H = 50
PITCH_GAP = 10
#: room kept under the block the step took or pushed when the view scrolls down to it
MARK_MARGIN = 4

_BUCKET = re.compile(r"nextf\[(\d+)\]")
_FREE = re.compile(r"([\d\u202f]+) free")


class BucketStep(StepReader):
    """What one step did to the buckets, from its events."""

    def __init__(self, explained) -> None:
        self.taken: dict[int, int] = {}        # bucket -> block taken off its head
        self.pushed: dict[int, int] = {}       # bucket -> block pushed on its head
        self.refills: dict[int, object] = {}   # bucket -> BucketRefill
        super().__init__(explained)

    def on_ListRemove(self, e: ev.ListRemove) -> None:
        if e.where:
            self.taken[int(e.where[0])] = e.addr

    def on_ListInsert(self, e: ev.ListInsert) -> None:
        if e.where:
            self.pushed[int(e.where[0])] = e.addr

    def on_BucketRefill(self, e: ev.BucketRefill) -> None:
        self.refills[e.bucket] = e

    def on_Note(self, e: ev.Note) -> None:
        self.said.append(e.text)

    def touched(self) -> set[int]:
        return set(self.taken) | set(self.pushed) | set(self.refills)

    def carved(self, bucket: int, addr: int) -> bool:
        r = self.refills.get(bucket)
        return r is not None and r.addr <= addr < r.addr + r.count * r.block_size


def list_rows(addrs: list[int], taken: int | None, selected: int | None) -> tuple[list[tuple], int]:
    """The rows of one bucket's list, head first: the block a malloc took
    off the head (``("ghost", addr)``, if no longer on it), the first
    :data:`SHOWN_PER_BUCKET` blocks (``("node", addr)``; the whole list if
    one more would fold), the rest folded (``("fold", count)``) around the
    ``selected`` block drawn out, or ``("null", None)`` for an empty list.
    Returns the rows and how many blocks are folded."""
    rows: list[tuple] = []
    if taken is not None and taken not in addrs:
        rows.append(("ghost", taken))
    n = len(addrs)
    if n <= SHOWN_PER_BUCKET + 1:
        rows += [("node", a) for a in addrs]
        folded = 0
    else:
        rows += [("node", a) for a in addrs[:SHOWN_PER_BUCKET]]
        rest = n - SHOWN_PER_BUCKET
        if selected is not None and selected not in addrs[:SHOWN_PER_BUCKET]:
            i = addrs.index(selected)
            before = i - SHOWN_PER_BUCKET
            if before:
                rows.append(("fold", before))
            rows.append(("node", selected))
            after = n - i - 1
            if after:
                rows.append(("fold", after))
            folded = before + after
        else:
            rows.append(("fold", rest))
            folded = rest
    if not addrs:
        rows.append(("null", None))
    return rows, folded


@register_view("buckets")
class BucketsView(CardView):
    """One column per bucket in use: nextf[k], its block size, its free count
    and its list, head first."""

    kinds = ("buckets",)

    def __init__(self, parent=None) -> None:
        super().__init__([
            ("taken by malloc", swatch_css(palette.PLACED, "#FFFFFF", dashed=True)),
            ("pushed by free", swatch_css(palette.RELEASED, dashed=True)),
            ("refilled, new", swatch_css(palette.RELEASED, "#E8E8E8", dashed=True)),
            ("selected", swatch_css(SELECTED, "#FFFFFF", width=4)),
        ], parent)
        self._say(self.title, "4.3BSD buckets (Kingsley): one LIFO list nextf[k] per power-of-two size; "
                           "never split nor joined")
        self.step: BucketStep | None = None
        self._words = ""              # the line under the drawing, before the summary
        self._folded_summary = ""     # the summary of the folds, before what the scroll leaves out

    # -------------------------------------------------------------- draw
    def _draw(self, s: dict, scroll: bool) -> None:
        buckets = {int(k): v for k, v in s["buckets"].items()}
        block_sizes = int_keys(s["block_sizes"])
        step = self.step = BucketStep(self._events())
        where = {}
        sel = self._selection
        if sel is not None:
            for k, addrs in buckets.items():
                if addrs and sel in addrs:
                    where[sel] = k
                    break
        # the columns the whole step touches are there from its first event
        # on, so the columns stand still while it is shown event by event
        whole = step if self._event_index is None else BucketStep(self._explained)
        touched = step.touched() | whole.touched()
        shown = sorted(k for k, addrs in buckets.items() if addrs or k in touched)
        wanted: set = set()
        touched_at = None
        folded_total = folded_lists = 0
        marked = None       # the touched column's header and the block the step took or pushed
        for c, k in enumerate(shown):
            x = LEFT + c * (COL_W + COL_GAP)
            folded, col_wanted, col_marked = self._draw_column(x, k, buckets[k], block_sizes.get(k, 0), step,
                                                               sel if where.get(sel) == k else None)
            wanted |= col_wanted
            if folded:
                folded_total += folded
                folded_lists += 1
            if k in touched and touched_at is None:
                touched_at = c
                marked = (k, col_marked)
        if s.get("outside"):
            x = LEFT + len(shown) * (COL_W + COL_GAP)
            sizes = int_keys(s["sizes"])
            for o in s["outside"]:
                self._draw_outside(x, o["addr"], sizes.get(o["addr"], 0), o.get("why", ""))
                wanted.add(o["addr"])
                x += COL_W + COL_GAP
        self._keep_cards(wanted)
        for key, card in self._cards.items():
            card.set_selected(sel is not None and key == sel)
        if not shown and not s.get("outside"):
            note = self._add(Note("every bucket is empty: nothing has been freed or carved yet",
                                  text_font(TEXT_PX, italic=True), MUTED, 300))
            note.setPos(LEFT, TOP)
        self.canvas.finish()

        total_free = sum(len(v) for v in buckets.values())
        free_bytes = sum(len(v) * block_sizes.get(k, 0) for k, v in buckets.items())
        words = [f"{count_text(total_free)} free block{'s' if total_free != 1 else ''} in "
                 f"{count_text(sum(1 for v in buckets.values() if v))} bucket"
                 f"{'s' if sum(1 for v in buckets.values() if v) != 1 else ''}, {size_text(free_bytes)}"]
        words += step.said
        self.summary = ""
        if folded_total:
            self.summary = (f"Summarised: each list shows its first {SHOWN_PER_BUCKET} blocks from the head; "
                            f"{count_text(folded_total)} more in {count_text(folded_lists)} "
                            f"list{'s' if folded_lists != 1 else ''} are folded.")
        self._words = " · ".join(words)
        self._folded_summary = self.summary
        self._say(self.info, self._words + ("\n" + self.summary if self.summary else ""))
        if scroll or self._event_index is not None:
            columns = len(shown) + len(s.get("outside") or ())
            self.canvas.keep_scrolled(lambda: self._scroll_to_column(touched_at, columns, marked))

    def _scroll_to_column(self, column: int | None, columns: int, marked=None) -> None:
        """Show the touched column with as many neighbours as fit, whole
        columns only (none cut in half at the left edge), headers in view;
        and, when the column is taller than the view, the block the step
        took or pushed (``marked``: the bucket and that block's top and
        bottom), whole, its header as far in view as it goes (the line under
        the drawing then says the header is cut).  Everything here comes
        from the state's layout and the viewport's size now, never from the
        scroll before (the canvas runs it again on every resize): one
        picture per state, the still of a step and the last frame of its
        animation alike."""
        pitch = COL_W + COL_GAP
        zoom = max(self.canvas.zoom, 1e-6)
        width = self.canvas.viewport().width() / zoom
        height = self.canvas.viewport().height() / zoom
        fits = max(1, int((width - LEFT) // pitch))
        first = 0 if column is None else max(0, min(column - (fits - 1) // 2, columns - fits))
        left = LEFT + first * pitch - COL_GAP / 2
        rect = QRectF(self.canvas.root.boundingRect())      # the drawing, as canvas.finish() fitted it
        if left + width > rect.right():
            # the last columns: leave blank room on the right rather than cut a column on the left
            rect.setRight(left + width)
        self.canvas.scene().setSceneRect(rect)
        top = rect.top()
        cut = None
        if marked is not None and marked[1] is not None:
            k, (block_top, block_bottom) = marked
            if block_bottom + MARK_MARGIN > top + height:
                top = min(block_bottom + MARK_MARGIN - height, block_top - MARK_MARGIN)
                if top > TOP:
                    cut = k
        self.canvas.centerOn(left + width / 2, top + height / 2)
        self.summary = self._folded_summary
        if cut is not None:
            where = "above the frame" if top >= TOP + HEADER_H else "cut at the top edge"
            self.summary = f"{self.summary} The header of nextf[{cut}] is {where}.".strip()
        self._say(self.info, self._words + ("\n" + self.summary if self.summary else ""))

    def _draw_column(self, x: float, k: int, addrs: list[int], block_size: int, step: BucketStep,
                     selected: int | None):
        """One bucket's column; returns (blocks folded, card keys drawn, the top and bottom of
        the first block the step took, pushed or carved in it, or None)."""
        y = self._draw_header(x, k, addrs, block_size, step)
        # the head pointer nextf[k]
        self._add(Arrow([QPointF(x + 28, y + 2), QPointF(x + 28, y + HEAD_ARROW - 2)], "#000000", 2.2, head=8))
        y += HEAD_ARROW
        rows, folded = list_rows(addrs, step.taken.get(k), selected)
        wanted = {("bucket", k)}
        marked = None
        for r, (kind, a) in enumerate(rows):
            if r:
                self._add(Arrow([QPointF(x + 28, y - PITCH_GAP + 1), QPointF(x + 28, y - 1)], "#444444",
                                1.6, dash=kind == "fold" or rows[r - 1][0] == "fold", head=6))
            if kind == "fold":
                f = self._add(Fold(a, 0, COL_W, CARD_H, px=SMALL_PX - 1, compact=True))
                f.setPos(x, y)
                y += CARD_H + PITCH_GAP
            elif kind == "null":
                item = self._add(Note("NULL: empty", text_font(SMALL_PX, italic=True), MUTED, COL_W))
                item.setPos(x + 8, y)
                y += CARD_H
            else:
                bottom = self._draw_block(x, y, k, a, block_size, kind == "ghost", step)
                if marked is None and (kind == "ghost" or step.pushed.get(k) == a or step.carved(k, a)):
                    marked = (y, bottom)
                y = bottom + PITCH_GAP
                wanted.add(a)
        return folded, wanted, marked

    def _draw_header(self, x: float, k: int, addrs: list[int], block_size: int, step: BucketStep) -> float:
        """The column's header (nextf[k], its block size, its free count;
        outlined when the step touched it) and the refill's line under it;
        returns the y below them."""
        header = self._card(("bucket", k), None, COL_W, HEADER_H)
        lines = [f"nextf[{k}]", size_text(block_size), f"{count_text(len(addrs))} free"]
        fonts = [mono_font(TEXT_PX), text_font(SMALL_PX), text_font(TEXT_PX, bold=True)]
        header.set_lines(lines, fonts)
        refill = step.refills.get(k)
        touched = k in step.touched()
        if refill is not None:
            header.set_style("#E8E8E8", pen(palette.RELEASED, 3.5, dash=True), "#000000", "refill")
        else:
            header.set_style("#E8E8E8", pen("#000000" if touched else "#8a8a8a", 2.5 if touched else 1.2),
                             "#000000", "header")
        header.setPos(x, TOP)
        header.setToolTip(f"nextf[{k}]: the free list of {block_size}-byte blocks (a request "
                          "and its header fit in one); LIFO, head first")
        y = TOP + HEADER_H
        if refill is not None:
            note = self._add(Note(f"refilled: {count_text(refill.count)} × {size_text(refill.block_size)} "
                                  f"carved at {hex_addr(refill.addr)}",
                                  text_font(SMALL_PX - 1, bold=True), palette.RELEASED, COL_W, None))
            note.setPos(x, y + 4)
            y += 4 + note.boundingRect().height()
        return y

    def _draw_block(self, x: float, y: float, k: int, addr: int, block_size: int, ghost: bool,
                    step: BucketStep) -> float:
        pushed = step.pushed.get(k) == addr
        new = step.carved(k, addr)
        marked = ghost or pushed or new
        card = self._card(addr, addr, COL_W, MARKED_H if ghost or pushed else CARD_H)
        font = mono_font(SMALL_PX + 1)
        if ghost:
            card.set_lines([hex_addr(addr), "taken"], [font, text_font(SMALL_PX - 1, bold=True)])
            card.set_style("#FFFFFF", pen(palette.PLACED, 3.5, dash=True), palette.PLACED, "taken")
        elif pushed:
            card.set_lines([hex_addr(addr), "pushed"], [font, text_font(SMALL_PX - 1, bold=True)])
            card.set_style(palette.YELLOW, pen(palette.RELEASED, 3.5, dash=True), "#000000", "pushed")
        elif new:
            card.set_lines([hex_addr(addr)], [font])
            card.set_style(palette.YELLOW, pen(palette.RELEASED, 2.5, dash=True), "#000000", "new")
        else:
            card.set_lines([hex_addr(addr)], [font])
            card.set_style(palette.YELLOW, pen("#6b6b6b", 1.2), "#000000", "")
        card.setPos(x, y)
        what = ("taken off the head by this malloc" if ghost else
                "pushed on the head by this free" if pushed else
                "carved by this step's refill" if new else "")
        card.setToolTip(f"free block {hex_addr(addr)} on nextf[{k}]: {block_size} bytes "
                        f"({size_text(block_size)})" + (f"\n{what}" if marked else ""))
        return y + card.h

    def _draw_outside(self, x: float, addr: int, size: int, why: str) -> None:
        card = self._card(addr, addr, COL_W, HEADER_H)
        card.set_lines(["not carved", hex_addr(addr), size_text(size)],
                       [text_font(SMALL_PX, italic=True), mono_font(SMALL_PX), text_font(SMALL_PX, bold=True)])
        card.set_style("#FFFFFF", pen(MUTED, 1.5, dash=True), "#000000", "outside")
        card.setPos(x, TOP)
        card.setToolTip(f"{why}: {size} bytes at {hex_addr(addr)}")

    # ------------------------------------------------------------ moving
    def _morph_from(self, before, leaving):
        # the blocks a refill carved, per column, top down: they fill it one by one
        self._entering: dict = {}
        for key, card in self._cards.items():
            if key not in before[0] and card.role == "new":
                self._entering.setdefault(round(card.pos().x()), []).append(card)
        for cards in self._entering.values():
            cards.sort(key=lambda c: c.pos().y())
        return super()._morph_from(before, leaving)

    def _appear(self, m, key, card) -> None:
        column = self._entering.get(round(card.pos().x()), [])
        if card not in column:
            super()._appear(m, key, card)
            return
        # dropped from under the header, one after another, top block first
        j, n = column.index(card), len(column)
        start = 0.6 * j / max(n, 1)
        window = (start, min(1.0, start + 0.45))
        m.move(card, QPointF(card.pos().x(), TOP + HEADER_H), card.pos(), window)
        m.enter(card, window)

    # ------------------------------------------------------------ readback
    def drawn(self) -> dict:
        root = self.canvas.root
        cards = [c for c in root.childItems() if isinstance(c, Card)]
        headers = sorted((c for c in cards if c.role in ("header", "refill")), key=lambda c: c.scenePos().x())
        columns = []
        for h in headers:
            left, right = h.scenePos().x(), h.scenePos().x() + h.w
            inside = lambda item: left - 1 <= item.scenePos().x() <= right - 1  # noqa: E731
            members = sorted((c for c in cards if c.role not in ("header", "refill", "outside") and inside(c)),
                             key=lambda c: c.scenePos().y())
            folds = sorted((f for f in root.childItems() if isinstance(f, Fold) and inside(f)),
                           key=lambda f: f.scenePos().y())
            refill = [n.text() for n in root.childItems() if isinstance(n, Note) and inside(n)
                      and n.text().startswith("refilled")]
            columns.append({
                "bucket": int(_BUCKET.search(h.lines[0]).group(1)),
                "block_size": h.lines[1],
                "count": int(_FREE.search(h.lines[2]).group(1).replace("\u202f", "")),
                "nodes": [int(c.lines[0], 16) for c in members if c.role != "taken"],
                "taken": next((int(c.lines[0], 16) for c in members if c.role == "taken"), None),
                "folded": [f.count_shown() for f in folds],
                "refill": refill[0] if refill else None,
            })
        by_role = lambda role: [int(c.lines[0], 16) for c in cards if c.role == role]  # noqa: E731
        outside = next(((int(c.lines[1], 16), c.lines[2]) for c in cards if c.role == "outside"), None)
        selected = [c.addr for c in cards if c.selected]
        return {"columns": columns, "pushed": by_role("pushed"), "taken": by_role("taken"),
                "new": by_role("new"), "outside": outside, "selected": selected[0] if selected else None}
