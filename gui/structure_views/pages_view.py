"""Heaps kept in whole pages or blocks, with a table that says what each one
is: phkmalloc's page directory (Kamp, FreeBSD) and GNU malloc's block table
(Haertel, ``_heapinfo``).

Both allocators describe the heap unit by unit -- a 4 KiB page or block is
free, handed out (alone or as the first of a run), cut into equal chunks or
fragments, or the table itself -- keep the free units in runs on one
address-ordered list, and keep, per power-of-two size, a list of the places
holding free chunks (phkmalloc: the pages with a free chunk, ``page_dir[j]``;
GNU malloc: the free fragments themselves, ``_fraghead[log]``, where a
block's free fragments sit together).  The view draws the three, top down:

* **the table**: one tile per page or block in address order, wrapped to the
  view's width: free (yellow), handed out (blue; the first of a run says how
  many), chunks or fragments (white, with their size and how many are free),
  the table itself (dark).  Tiles the step touched are outlined.  A heap of
  more than :data:`TILE_LIMIT` units keeps the touched ones, the ends and the
  selection and folds the rest;
* **the free list of runs** (phkmalloc's free pages; GNU malloc's free
  clusters from the anchor, with ``_heapindex`` as an arrow): one card per run,
  its address and length, the runs the step examined numbered in order;
* **one row per chunk size** with free chunks: the pages (phkmalloc) or
  blocks (GNU malloc) that hold them, in list order, each with its free count;
  the ones the step took a chunk from or gave one back to are outlined.

:meth:`drawn` reads back from the graphics items:

``tiles``
    ``[(addr, state)]`` in address order (``state`` is ``"free"``, ``"used"``,
    ``"chunks"`` or ``"table"``), the folded units left out;
``folded_tiles``
    how many units were folded;
``runs``
    run addresses in list order; ``pointer``: the address under the
    ``_heapindex`` arrow (None when there is no arrow or it is at the anchor;
    a list if more than one arrow were drawn);
``classes``
    ``{chunk size: [(addr, free count)]}`` per row, in list order;
``numbers``
    ``[(number, addr)]`` of the visit badges;
``roles``
    ``{(section, addr): role}`` of the outlined cards, section ``"tile"``,
    ``"run"`` or ``"class"``;
``selected``
    the address of the card outlined as selected, or None.
"""

from __future__ import annotations

import re

from PySide6.QtCore import QPointF, QRectF
from PySide6.QtGui import QFontMetricsF

from heapscope.allocators import events as ev
from .. import palette
from ..predict_bar import wrap_lines
from . import register_view
from .canvas import (MUTED, SELECTED, SMALL_PX, TEXT_PX, Badge, Card, Fold, Pointer,
                     count_text, hex_addr, label, mono_font, pen, size_text, swatch_css, text_font)
from .card_view import CardView, int_keys
from .step_reader import StepReader
from .summarise import fold

#: units drawn as tiles before the table is folded
TILE_LIMIT = 400
#: pages or blocks drawn per chunk-size row before the row is folded
PER_CLASS = 6
#: runs drawn before the run list is folded
RUN_LIMIT = 24

LEFT = 10
TOP = 8
TILE_W, TILE_H, TILE_GAP = 66, 44, 6
CARD_W, CARD_H, CARD_GAP = 150, 44, 14
HEAD_H = 30
SECTION_GAP = 18
POINTER_W = 112

STATE_FILL = {"free": palette.YELLOW, "used": "#9CC6E8", "chunks": "#FFFFFF", "table": palette.META_GREY}
ROLE_COLOUR = {"examined": palette.SEARCHED, "taken": palette.PLACED, "placed": palette.PLACED,
               "new": palette.RELEASED, "freed": palette.RELEASED, "joined": palette.RELEASED,
               "emptied": MUTED, "given back": MUTED}
_FREE = re.compile(r"([\d\u202f]+) free")


class PagesStep(StepReader):
    """What one step did, from its events: runs examined (numbered), runs
    and units touched, and the chunk places taken from or given to."""

    def __init__(self, explained, unit: int) -> None:
        self.unit = unit
        self.run_roles: dict[int, str] = {}
        self.unit_roles: dict[int, str] = {}      # page/block address -> role
        self.class_roles: dict[int, str] = {}     # page/block address on a size row -> role
        super().__init__(explained)

    def _base(self, addr: int) -> int:
        """The page or block holding ``addr``."""
        return addr - addr % self.unit

    def _chunk_place(self, place: int, role: str) -> None:
        """A chunk taken from (``"taken"``) or given back to (``"freed"``) the
        page or block at ``place``, on its size row and in the table."""
        self.class_roles[place] = role
        self.unit_roles[place] = "placed" if role == "taken" else "freed"

    def _made(self, place: int) -> None:
        """The page or block at ``place`` cut into chunks or fragments."""
        self.class_roles[place] = "new"
        self.unit_roles[place] = "new"

    def on_Visit(self, e: ev.Visit) -> None:
        if e.size >= self.unit or e.place:
            self.visit(e.addr)

    def on_Split(self, e: ev.Split) -> None:
        if e.size >= self.unit:
            self.run_roles[e.rest_addr] = "taken"
            self.unit_roles[self._base(e.taken_addr)] = "placed"

    # A ListRemove or ListInsert without a list name is on the free list of
    # runs; with one, on a size row (GNU malloc's fragments).
    def on_ListRemove(self, e: ev.ListRemove) -> None:
        if not e.where:
            self.run_roles.setdefault(e.addr, "taken")
        else:
            self._chunk_place(self._base(e.addr), "taken")

    def on_ListInsert(self, e: ev.ListInsert) -> None:
        if not e.where:
            self.run_roles[e.addr] = "new"
        else:
            self._chunk_place(self._base(e.addr), "freed")

    def on_FragLinked(self, e: ev.FragLinked) -> None:
        self._chunk_place(self._base(e.addr), "freed")

    def on_Coalesce(self, e: ev.Coalesce) -> None:
        self.run_roles[e.low_addr] = "joined"

    def on_TopExtended(self, e: ev.TopExtended) -> None:
        self.run_roles[e.addr] = "joined"
        self.said.append(f"the last run grew by {size_text(e.added)} at the break")

    def on_Shrink(self, e: ev.Shrink) -> None:
        self.said.append(f"{size_text(e.decrement)} given back to the system")

    def on_ChunkTaken(self, e: ev.ChunkTaken) -> None:
        self._chunk_place(e.page, "taken")

    def on_ChunkFreed(self, e: ev.ChunkFreed) -> None:
        self._chunk_place(e.page, "freed")

    def on_ChunkPageMade(self, e: ev.ChunkPageMade) -> None:
        self._made(e.page)

    def on_ChunkPageDissolved(self, e: ev.ChunkPageDissolved) -> None:
        self.unit_roles[e.page] = "emptied"
        self.said.append(f"page {hex_addr(e.page)}'s chunks are all free: a plain page again")

    def on_BlockFragmented(self, e: ev.BlockFragmented) -> None:
        self._made(e.block)

    def on_FragBlockEmptied(self, e: ev.FragBlockEmptied) -> None:
        self.unit_roles[e.block] = "emptied"
        self.said.append(f"block {hex_addr(e.block)}'s fragments are all free: the block is freed")

    def on_TableMoved(self, e: ev.TableMoved) -> None:
        self.unit_roles[e.new_addr] = "new"
        self.said.append(f"the table moved to {hex_addr(e.new_addr)}")

    def on_Placed(self, e: ev.Placed) -> None:
        self.unit_roles.setdefault(self._base(e.addr), "placed")

    def on_Released(self, e: ev.Released) -> None:
        self.unit_roles.setdefault(self._base(e.addr), "freed")


class _PagesView(CardView):
    """The shared drawing; subclasses read their kind's keys."""

    unit_word = "page"
    run_title = "free pages"
    pointer_name: str | None = None

    def __init__(self, parent=None) -> None:
        super().__init__([
            ("examined, in order", "badge:1"),
            ("free", swatch_css("#6b6b6b")),
            ("handed out", swatch_css("#6b6b6b", STATE_FILL["used"])),
            ("chunks", swatch_css("#6b6b6b", "#FFFFFF")),
            ("taken / placed", swatch_css(palette.PLACED, "#FFFFFF")),
            ("freed, new, joined", swatch_css(palette.RELEASED, "#FFFFFF", dashed=True)),
            ("selected", swatch_css(SELECTED, "#FFFFFF", width=4)),
        ], parent)
        self.step: PagesStep | None = None

    # --------------------------------------------------- what the kind says
    def _unit(self, s: dict) -> int:
        raise NotImplementedError

    def _tiles(self, s: dict) -> list[tuple[int, str, list[str], str]]:
        """(addr, state, text lines, tooltip) per unit, in address order."""
        raise NotImplementedError

    def _runs(self, s: dict) -> list[int]:
        raise NotImplementedError

    def _classes(self, s: dict) -> list[tuple[int, str, list[tuple[int, int]]]]:
        """(chunk size, row title, [(page or block, free count)]) per non-empty list."""
        raise NotImplementedError

    def _pointer(self, s: dict) -> int | None:
        return None

    # -------------------------------------------------------------- draw
    def _draw(self, s: dict, scroll: bool) -> None:
        """The table, the free list of runs and the chunk-size rows, top down."""
        unit = self._unit(s)
        sizes = int_keys(s["sizes"])
        step = self.step = PagesStep(self._events(), unit)
        wanted: set = set()
        self._wanted = wanted
        self._heading_of: dict = {}      # a card's key -> the heading of its section or row
        summary = []
        y = self._draw_table(s, unit, step, TOP, wanted, summary)
        y = self._draw_runs(s, sizes, step, y + SECTION_GAP, wanted, summary)
        self._draw_classes(y, step, wanted, summary)
        self._finish(sizes, step, summary, scroll)

    def _draw_table(self, s: dict, unit: int, step: PagesStep, y: float, wanted: set, summary: list) -> float:
        """One tile per page or block from ``y`` down, wrapped to the view's
        width, the untouched runs of them folded; returns the y below."""
        tiles = self._tiles(s)
        y = self._heading(f"the {self.unit_word} table: {count_text(len(tiles))} {self.unit_word}s", y)
        per_row = max(4, int((self._visible_width() - LEFT - 24) // (TILE_W + TILE_GAP)))
        keep = [(0, 1), (len(tiles) - 1, 1)]
        index = {t[0]: i for i, t in enumerate(tiles)}
        for a in list(step.unit_roles) + [self._selection]:
            if a is not None:
                at = index.get(a - a % unit)
                if at is not None:
                    keep.append((at, per_row))
        runs = fold(len(tiles), keep, full_limit=TILE_LIMIT, min_fold=per_row)
        col = 0
        folded_tiles = 0
        for kind, lo, hi in runs:
            if kind == "fold":
                if col:
                    y += TILE_H + TILE_GAP
                    col = 0
                f = self._add(Fold(hi - lo, 0, per_row * (TILE_W + TILE_GAP) - TILE_GAP, TILE_H - 8))
                f.setPos(LEFT, y)
                y += TILE_H + TILE_GAP
                folded_tiles += hi - lo
                continue
            for i in range(lo, hi):
                addr, state, lines, tip = tiles[i]
                self._draw_tile(("tile", addr), addr, state, lines, tip, step.unit_roles.get(addr),
                                LEFT + col * (TILE_W + TILE_GAP), y)
                wanted.add(("tile", addr))
                self._heading_of[("tile", addr)] = self._heading_item
                col += 1
                if col == per_row:
                    col = 0
                    y += TILE_H + TILE_GAP
        if col:
            y += TILE_H + TILE_GAP
        if folded_tiles:
            summary.append(f"{count_text(folded_tiles)} {self.unit_word}{'s' if folded_tiles != 1 else ''} "
                           "of the table folded")
        return y

    def _draw_runs(self, s: dict, sizes: dict, step: PagesStep, y: float, wanted: set, summary: list) -> float:
        """The free list of runs from ``y`` down, a card each, with the search
        pointer's arrow; returns the y below."""
        run_addrs = self._runs(s)
        y = self._heading(f"{self.run_title}: {count_text(len(run_addrs))} "
                          f"run{'s' if len(run_addrs) != 1 else ''}, "
                          f"{size_text(sum(sizes.get(a, 0) for a in run_addrs))}", y)
        pointer = self._pointer(s)
        x0 = LEFT + (POINTER_W + 8 if self.pointer_name else 0)
        shown_runs = run_addrs if len(run_addrs) <= RUN_LIMIT else self._some(run_addrs, step, pointer)
        x = x0
        per_line = max(1, int((self._visible_width() - x0 - 24) // (CARD_W + CARD_GAP)))
        col = 0
        for a in shown_runs:
            if a == pointer and col:
                # the arrow lives in the left margin: its run starts a line
                col, x = 0, x0
                y += CARD_H + CARD_GAP
            if isinstance(a, tuple):          # ("fold", n): runs not drawn
                f = self._add(Fold(a[1], 0, CARD_W, CARD_H, px=SMALL_PX, compact=True))
                f.setPos(x, y)
            else:
                self._draw_run(a, x, y, sizes, step, pointer)
                wanted.add(("run", a))
                self._heading_of[("run", a)] = self._heading_item
            col += 1
            x += CARD_W + CARD_GAP
            if col == per_line:
                col, x = 0, x0
                y += CARD_H + CARD_GAP
        drawn_runs = [a for a in shown_runs if not isinstance(a, tuple)]
        if len(drawn_runs) < len(run_addrs):
            left = len(run_addrs) - len(drawn_runs)
            summary.append(f"{count_text(left)} run{'s' if left != 1 else ''} not drawn")
        if not run_addrs:
            empty = self._add(label("empty", text_font(SMALL_PX, italic=True), MUTED))
            empty.setPos(x0, y)
            if self.pointer_name:
                p = self._add(Pointer(self.pointer_name, palette.SEARCHED, POINTER_W))
                p.setPos(x0 - POINTER_W - 6, y + 10)
        return y + CARD_H + CARD_GAP

    def _draw_run(self, a: int, x: float, y: float, sizes: dict, step: PagesStep, pointer) -> None:
        card = self._card(("run", a), a, CARD_W, CARD_H)
        card.set_lines([hex_addr(a), size_text(sizes.get(a, 0))], [mono_font(SMALL_PX), text_font(SMALL_PX)])
        self._style(card, palette.YELLOW, step.run_roles.get(a) or
                    ("examined" if step.numbers.get(a, []) else ""))
        card.setPos(x, y)
        card.setToolTip(f"free run {hex_addr(a)}: {sizes.get(a, 0)} bytes")
        numbers = step.numbers.get(a, [])
        if numbers:
            badge = self._add(Badge(", ".join(str(n) for n in numbers), a))
            badge.setPos(x + CARD_W - badge.w / 2, y - badge.h / 2)
        if pointer == a:
            p = self._add(Pointer(self.pointer_name, palette.SEARCHED, POINTER_W))
            p.setPos(x - POINTER_W - 6, y + CARD_H / 2)

    def _draw_classes(self, y: float, step: PagesStep, wanted: set, summary: list) -> None:
        """One row per chunk size with free chunks."""
        classes = self._classes(self._structure)
        y += SECTION_GAP - CARD_GAP
        for size, title, places in classes:
            y = self._heading(title, y)
            show = places[:PER_CLASS]
            for a, _ in places[PER_CLASS:]:
                if a in step.class_roles or a == self._selection:
                    show.append((a, dict(places)[a]))
            x = LEFT
            for a, n in show:
                card = self._card(("class", a), a, CARD_W, CARD_H)
                card.set_lines([hex_addr(a), f"{count_text(n)} free"], [mono_font(SMALL_PX), text_font(SMALL_PX)])
                self._style(card, "#FFFFFF", step.class_roles.get(a, ""))
                card.setPos(x, y)
                card.setToolTip(f"{self.unit_word} {hex_addr(a)}: {n} free chunks of {size} bytes")
                wanted.add(("class", a))
                self._heading_of[("class", a)] = self._heading_item
                x += CARD_W + CARD_GAP
                if x + CARD_W > max(self._visible_width() - 24, LEFT + CARD_W + CARD_GAP):
                    x = LEFT
                    y += CARD_H + CARD_GAP
            if len(show) < len(places):
                f = self._add(Fold(len(places) - len(show), 0, CARD_W, CARD_H))
                f.setPos(x, y)
                left = len(places) - len(show)
                summary.append(f"{count_text(left)} {self.unit_word}{'s' if left != 1 else ''} of "
                               f"{size_text(size)} chunks not drawn")
            y += CARD_H + CARD_GAP
        if not classes:
            note = self._add(label("no free chunks of any size", text_font(SMALL_PX, italic=True), MUTED))
            note.setPos(LEFT, y)

    def _finish(self, sizes: dict, step: PagesStep, summary: list, scroll: bool) -> None:
        self._keep_cards(self._wanted)
        for key, card in self._cards.items():
            card.set_selected(self._selection is not None and card.addr == self._selection
                              and key[0] != "tile")
        self.canvas.finish()
        free_total = sum(sizes.values())
        words = [f"{size_text(free_total)} free"]
        if step.visits:
            words.append(f"{count_text(len(step.visits))} examined")
        words += step.said
        self.summary = ("Summarised: " + "; ".join(summary) + ".") if summary else ""
        self._say(self.info, " · ".join(words) + ("\n" + self.summary if self.summary else ""))
        if scroll:
            self._scroll_to_step()

    def _scroll_to_step(self) -> None:
        """Bring the cards the step changed into view: its size row or run
        first, then its tile; the top when it changed none."""
        touched = [(k, c) for k, c in self._cards.items() if c.role and k[0] != "tile"] + \
            [(k, c) for k, c in self._cards.items() if c.role and k[0] == "tile"]
        if touched:
            key, card = touched[0]
            heading = self._heading_of.get(key)

            def wanted() -> QRectF:
                # the card with its heading, where both fit: scrolled to the
                # card alone, "_fraghead[8] (256 B …" was cut at the top edge
                r = card.sceneBoundingRect()
                if heading is None:
                    return r
                both = r.united(heading.sceneBoundingRect())
                room = self.canvas.viewport().height() / max(self.canvas.zoom, 1e-6) - 40
                return both if both.height() <= room else r
            self.canvas.reveal(wanted, 20, 20)
        else:
            top_left = self.canvas.root.childrenBoundingRect().topLeft()
            self.canvas.reveal(QRectF(top_left.x(), top_left.y(), 1, 1), 1, 1)

    def _some(self, addrs: list[int], step: PagesStep, pointer) -> list:
        """The runs of a long list worth drawing, in order, with ("fold", n)
        for each run of the others."""
        keep = set(addrs[:RUN_LIMIT // 2]) | set(addrs[-2:]) | set(step.run_roles) | set(step.visits)
        keep |= {pointer, self._selection}
        out: list = []
        for a in addrs:
            if a in keep:
                out.append(a)
            elif out and isinstance(out[-1], tuple):
                out[-1] = ("fold", out[-1][1] + 1)
            else:
                out.append(("fold", 1))
        return out

    def _heading(self, text: str, y: float) -> float:
        """A heading at ``y``, wrapped at words to the view's width (GNU
        malloc's "_fraghead[8] (256 B fragments): 4 free in 1 …" ran off the
        right edge in presenter mode); returns the y under it."""
        f = text_font(TEXT_PX, bold=True)
        metrics = QFontMetricsF(f)
        width = max(self._visible_width() - LEFT - 16, 12 * metrics.averageCharWidth())
        lines = wrap_lines(text, metrics, width, 1 << 10)
        item = self._heading_item = self._add(label(lines, f))
        item.setPos(LEFT, y)
        return y + HEAD_H + (lines.count("\n")) * metrics.lineSpacing()

    def _style(self, card: Card, fill: str, role: str) -> None:
        if role:
            dashed = role in ("new", "freed", "joined", "emptied", "given back")
            card.set_style(fill, pen(ROLE_COLOUR[role], 4.0 if not dashed else 3.0, dash=dashed),
                           "#000000", role)
        else:
            card.set_style(fill, pen("#6b6b6b", 1.2), "#000000", "")

    def _draw_tile(self, key, addr: int, state: str, lines: list[str], tip: str, role, x, y) -> None:
        card = self._card(key, addr, TILE_W, TILE_H)
        fonts = [text_font(SMALL_PX - 1, bold=True), text_font(SMALL_PX - 2)][:len(lines)]
        card.set_lines(lines, fonts)
        text = "#FFFFFF" if state == "table" else "#000000"
        if role:
            card.set_style(STATE_FILL[state], pen(ROLE_COLOUR[role], 3.5, dash=role in ("new", "freed")),
                           text, role)
        else:
            card.set_style(STATE_FILL[state], pen("#6b6b6b", 1.0), text, "")
        card.state = state
        card.setPos(x, y)
        card.setToolTip(tip)

    # ------------------------------------------------------------ readback
    def drawn(self) -> dict:
        root = self.canvas.root
        tiles, runs, classes, roles = [], [], {}, {}
        selected = None
        for key, card in self._cards.items():
            if card.parentItem() is None:
                continue
            section, addr = key
            if card.role:
                roles[(section, addr)] = card.role
            if card.selected:
                selected = addr
        ordered = sorted(self._cards.items(), key=lambda kv: (kv[1].scenePos().y(), kv[1].scenePos().x()))
        headings = sorted(((i.scenePos().y(), i.text().replace("\n", " ")) for i in root.childItems()
                           if type(i).__name__ == "QGraphicsSimpleTextItem"), key=lambda t: t[0])
        for key, card in ordered:
            section, addr = key
            if section == "tile":
                tiles.append((addr, card.state))
            elif section == "run":
                runs.append(addr)
            else:
                title = [t for yy, t in headings if yy <= card.scenePos().y()][-1]
                size = int(re.search(r"\((\d+) B", title).group(1))
                count = int(_FREE.search(card.lines[1]).group(1).replace("\u202f", ""))
                classes.setdefault(size, []).append((addr, count))
        folded = sum(f.count_shown() for f in root.childItems() if isinstance(f, Fold)
                     and f.h == TILE_H - 8)
        targets = []
        run_cards = [c for k, c in self._cards.items() if k[0] == "run"]
        for item in root.childItems():
            if isinstance(item, Pointer):
                tip = item.tip + QPointF(6, 0)
                hit = [c.addr for c in run_cards
                       if c.mapToScene(c.rect()).boundingRect().adjusted(-2, -2, 2, 2).contains(tip)]
                targets.append(hit[0] if hit else None)
        pointer = targets[0] if len(targets) == 1 else (targets or None)
        numbers = []
        for item in root.childItems():
            if isinstance(item, Badge):
                numbers.extend((int(n), item.addr) for n in item.text.split(", "))
        return {"tiles": tiles, "folded_tiles": folded, "runs": runs, "pointer": pointer,
                "classes": classes, "numbers": sorted(numbers), "roles": roles, "selected": selected}


@register_view("page-directory")
class PageDirectoryView(_PagesView):
    """phkmalloc: the page directory, the free-page list, page_dir[j]."""

    kinds = ("page-directory",)
    unit_word = "page"
    run_title = "free-page list"

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self._say(self.title, "phkmalloc (FreeBSD): a page directory; pages of equal chunks with a "
                              "bitmap each, listed per size in page_dir[j]; runs of whole pages")

    def _unit(self, s: dict) -> int:
        return s["pagesize"]

    def _tiles(self, s: dict):
        P = s["pagesize"]
        pages = int_keys(s["chunk_pages"])
        out = []
        for addr, n, state in s["pages"]:
            for i in range(n):
                a = addr + i * P
                if state == "free":
                    out.append((a, "free", [f"{n} p" if i == 0 else "", "free"] if i == 0 else ["free"],
                                f"page {hex_addr(a)}: MALLOC_FREE, in the run at {hex_addr(addr)}"))
                elif state == "run":
                    out.append((a, "used", ([f"{n} p" if n > 1 else "1 p", "run"] if i == 0 else ["…"]),
                                f"page {hex_addr(a)}: MALLOC_{'FIRST' if i == 0 else 'FOLLOW'} of a "
                                f"{n}-page run at {hex_addr(addr)}"))
                elif a not in pages:
                    # mid-step: the page directory is the one after the step,
                    # the chunk pages as replayed so far (not cut yet)
                    out.append((a, "used", ["page"], f"page {hex_addr(a)}: about to be cut into chunks"))
                else:
                    info = pages[a]
                    out.append((a, "chunks", [f"{info['size']} B", f"{info['free']} free"],
                                f"page {hex_addr(a)}: {info['total']} chunks of {info['size']} bytes, "
                                f"{info['free']} free; pginfo "
                                + (f"in its first {info['stolen']} chunks" if info["stolen"]
                                   else f"at {hex_addr(info['info'])}")))
        return out

    def _runs(self, s: dict) -> list[int]:
        return list(s["free_runs"])

    def _classes(self, s: dict):
        pages = int_keys(s["chunk_pages"])
        out = []
        for j, listed in sorted(int_keys(s["chunk_lists"]).items()):
            if listed:
                out.append((1 << j, f"page_dir[{j}] ({1 << j} B chunks): {count_text(len(listed))} "
                                    f"page{'s' if len(listed) != 1 else ''} with a free chunk",
                            [(p, pages[p]["free"] if p in pages else 0) for p in listed]))
        return out


@register_view("block-table")
class BlockTableView(_PagesView):
    """GNU malloc: the block table, the free clusters with _heapindex, _fraghead[log]."""

    kinds = ("block-table",)
    unit_word = "block"
    run_title = "free clusters from the anchor"
    pointer_name = "_heapindex"

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self._say(self.title, "GNU malloc (Haertel): a block table _heapinfo; power-of-two fragments "
                              "on _fraghead[log]; free clusters searched from _heapindex")

    def _unit(self, s: dict) -> int:
        return s["blocksize"]

    def _tiles(self, s: dict):
        B = s["blocksize"]
        frags = int_keys(s["frag_blocks"])
        out = []
        for addr, n, state in s["blocks"]:
            for i in range(n):
                a = addr + i * B
                if state == "free":
                    out.append((a, "free", [f"{n} blk", "free"] if i == 0 else ["free"],
                                f"block {hex_addr(a)}: in the free cluster at {hex_addr(addr)} ({n} blocks)"))
                elif state == "busy":
                    out.append((a, "used", [f"{n} blk" if n > 1 else "1 blk", "busy"] if i == 0 else ["…"],
                                f"block {hex_addr(a)}: of a {n}-block object at {hex_addr(addr)}"))
                elif state == "table":
                    out.append((a, "table", ["table"] if i == 0 else ["…"],
                                f"block {hex_addr(a)}: _heapinfo, the block table itself"))
                elif a not in frags:
                    out.append((a, "used", ["block"], f"block {hex_addr(a)}"))
                else:
                    info = frags[a]
                    out.append((a, "chunks", [f"{1 << info['log']} B", f"{info['nfree']} free"],
                                f"block {hex_addr(a)}: fragments of {1 << info['log']} bytes, "
                                f"{info['nfree']} free"))
        return out

    def _runs(self, s: dict) -> list[int]:
        return list(s["free_clusters"])

    def _pointer(self, s: dict) -> int | None:
        return s["heapindex"]

    def _classes(self, s: dict):
        B = s["blocksize"]
        out = []
        for log, addrs in sorted(int_keys(s["fraglists"]).items()):
            if not addrs:
                continue
            groups: list[list] = []
            for a in addrs:
                block = a - a % B
                if groups and groups[-1][0] == block:
                    groups[-1][1] += 1
                else:
                    groups.append([block, 1])
            out.append((1 << log, f"_fraghead[{log}] ({1 << log} B fragments): {count_text(len(addrs))} "
                                  f"free in {count_text(len(groups))} block{'s' if len(groups) != 1 else ''}",
                        [(b, n) for b, n in groups]))
        return out
