"""The heap at the shown step -- its blocks as columns and the policy's
pointers -- kept up to date from each step's events instead of a walk of
the whole heap.

``Strategy.walk_tuples()`` of a 100 000-block heap takes 100-240 ms of
Python: a map that walked the heap on every step could not step faster than
about five frames a second.  One step changes a handful of blocks, and its
events (``allocators/events.py``; docs/structure.md, "Events a view can rely
on") name every block it cut, joined, handed out or took back, with its
size.  So :class:`HeapTracker` keeps the blocks as
:class:`~gui.heap_cells.BlockArrays` and, for a step forward, edits only the
rows the events name (:class:`BlockEditor`: work in the number of events,
plus one copy of the columns in numpy); a step back undoes the last edit.
A seek, a jump, or a step whose events do not add up rebuilds from the walk;
a step back with no edit to undo (after a jump) walks a few steps further
back and edits the steps from there in (:func:`seek_tracked`), so only one
step back in :data:`BACK_WALK_AHEAD` walks.

How each event edits the blocks (``put`` makes a byte range one block, and
trims the blocks it overlaps; the state of a block cut by ``put`` stays):

=======================  ==================================================
``Placed``               the range becomes a used block (payload, request;
                         its header bytes from ``strategy.live``)
``Released``             the range becomes a free block
``Split``                ``rest`` becomes free; ``taken`` keeps the state of
                         the block it was cut from (a ``Placed`` follows)
``Coalesce``             the joined range becomes one free block
``Grow``                 the new bytes are *pending* until the events that
                         follow name the blocks made of them (``morecore``
                         frees them, a chunk goes on AVAIL, a page is carved
                         into a bucket); bytes still pending at the end of
                         the step are free or allocator meta, whichever makes
                         the free bytes add up (TLSF's end sentinel and the
                         BSD first call's pad are meta; Vmbest's new
                         wilderness is free)
``BuddySplit``           two free halves of ``2**(order-1)`` bytes
``BuddyMerge``           one free block of ``2**(order+1)`` bytes
``BucketRefill``         ``count`` free blocks of ``block_size`` bytes
``ListInsert``,          the named block is free (a fixed pool's uncarved
``TreeInsert``           tail shrinks when a chunk is carved from it)
``PointerMove``          the pointer moves
``Note`` "carved N       a fixed pool's bytes taken into use
bytes at A from the      (``Strategy._take_core``): pending, as grown bytes
pool"
a policy's event with    the heap ends ``extra`` bytes lower (dlmalloc's
``old_brk``, ``extra``   ``Trim``; a break found lower after the step, too)
``Shrink``               the heap ends ``decrement`` bytes lower (GNU
                         malloc, phkmalloc); in a fixed pool the bytes join
                         the free block of the pool not handed out
``ArenaExtended``        V7: the old top word a free block, then the new
                         free block and the new top word (meta)
``BlockFragmented``      GNU: ``count`` fragments of ``2**log`` bytes; the
                         first is taken (see ``ChunkTaken``), the rest free
``FragLinked``           GNU: the fragment is free
``FragBlockEmptied``     GNU: the block's fragments become one free block
``TableMoved``           GNU: the new ``_heapinfo`` is meta (the old one is
                         freed by the events that follow)
``TopExtended``          GNU: the last cluster and the new bytes, one free
                         block
``ChunkPageMade``        phkmalloc: ``stolen`` meta chunks (the ``pginfo``),
                         then ``total`` free chunks of ``size`` bytes
``ChunkTaken``           phkmalloc: the chunk is used if ``strategy.live``
                         books its address as a payload, else meta (a
                         ``pginfo`` or ``pgfree``)
``ChunkFreed``           phkmalloc: the chunk is free
``ChunkPageDissolved``   phkmalloc: the page is one meta block until the
                         events that follow free it
=======================  ==================================================

A block wholly past the break is memory mapped apart from the heap
(dlmalloc's mmapped chunks, ``Strategy.mapped_blocks``): the map does not
draw it, and the books below leave it out.

After the events, the block of the step's result (``rec.payload``) is
put as ``strategy.live`` books it, which covers a realloc that kept its
block and only changed the size asked for (``Strategy._rebook``, no event).

A step must then add up to what the strategy keeps anyway: the number of
live blocks, their bytes (A), their header bytes, the free bytes
(``fragmentation_probe()``, O(1) for every built-in policy), the break, and
every pointer at the start of a block.  A step that does not (a user
strategy recording no events; an event a policy left out) is rebuilt from
the walk and counted in :attr:`HeapTracker.rebuilds_after_bad_steps`.
So is a step holding an event of a kind the table does not edit and that
does not say ``changes_blocks = False`` (``allocators/events.py``): a user
strategy's own event may cut or join blocks and keep every total the same
(a block cut into fragments keeps its free bytes), which the books above
would not catch.
``tests/gui/test_heap_tracker.py`` compares the edited heap with the walk
after every step of random programs, for every registered strategy.
"""

from __future__ import annotations

from collections import deque
import itertools
import re
from dataclasses import dataclass, field
from typing import Callable, NamedTuple

import numpy as np

from ..allocators.events import (ArenaExtended, BlockFragmented, BucketRefill, BuddyMerge, BuddySplit,
                                 ChunkFreed, ChunkPageDissolved, ChunkPageMade, ChunkTaken, Coalesce,
                                 FREE, FragBlockEmptied, FragLinked, Grow, ListInsert, Note, Placed,
                                 PointerMove, Released, Shrink, Split, TableMoved, TopExtended,
                                 TreeInsert)

from ..allocators.replay import BACK_STEP_MOVE

from .heap_cells import (STATE_FREE, STATE_META, STATE_USED, BlockArrays, block_arrays, top_of)

#: the state of bytes the heap grew by, until an event says what they are
STATE_PENDING = 3
#: the columns of a block row, in order (rows are [addr, size, state, payload, request, header])
COLUMNS = ("addr", "size", "state", "payload", "request", "header")
#: a forward move of at most this many steps is replayed one step at a time
#: (each with its events) and edited in; a longer one rebuilds from the walk
STEPWISE_MAX = 64
#: ... unless the heap is small: a move of n > 1 steps walks instead when the
#: heap has fewer than this many blocks per step.  Editing a step in (its
#: replay with events, then the edit) costs what walking 70-165 blocks does
#: (next fit, TLSF, buddy, splay, dlmalloc on Vo's workload and the default
#: trace, ~600-800 blocks); a walk also repaints the whole map, so the line
#: sits below the cheapest ratio.  Playing 40 steps a frame on the default
#: trace then walks 600-800 blocks per row instead of editing 40 steps in.
WALK_BLOCKS_PER_STEP = 64
#: steps back that can be undone without a walk
UNDO_STEPS = 4096
#: a step back the tracker cannot undo (after a jump) walks the heap this many
#: steps further back and edits the steps up to the shown one in, so that
#: the next steps back are undone (one walk per this many steps, not one
#: each); the timeline's seek back there is still short enough to count as
#: stepping back, and keeps copies for the steps back that follow
BACK_WALK_AHEAD = BACK_STEP_MOVE - 1


_SERIALS = itertools.count()


class Pointer(NamedTuple):
    """One of the policy's named pointers (``structure()["pointers"]``)."""
    name: str
    addr: int | None
    role: str


@dataclass(frozen=True)
class TrackedHeap:
    """The heap as the map draws it: every block, and the policy's pointers
    (their roles as ``structure()`` gives them: ``search`` or ``marker``).

    A heap edited from another says so: ``base`` is the other's ``serial``
    and ``spans`` the byte ranges ``[lo, hi)`` outside which the two draw
    the same (blocks, states and the top block alike), so a view that drew
    the other need only redraw those (``base`` -1: made from a walk)."""
    blocks: BlockArrays
    pointers: tuple[Pointer, ...]
    base: int = -1
    spans: tuple = ()
    serial: int = field(default_factory=lambda: next(_SERIALS))

    @staticmethod
    def of(blocks_list, brk: int, pointer_dicts) -> "TrackedHeap":
        """From a ``walk_tuples()`` list and ``structure()["pointers"]``."""
        pointers = tuple(Pointer(p["name"], p["addr"], p["role"]) for p in pointer_dicts)
        return TrackedHeap(block_arrays(blocks_list, brk, top_of(pointer_dicts)), pointers)

    @staticmethod
    def walk(strategy, pointer_dicts=None) -> "TrackedHeap":
        """A strategy's heap from a full walk (``pointer_dicts`` default: its structure's)."""
        if pointer_dicts is None:
            pointer_dicts = strategy.structure()["pointers"]
        return TrackedHeap.of(strategy.walk_tuples(), strategy.arena.brk, pointer_dicts)

    def pointer_dicts(self) -> list[dict]:
        return [p._asdict() for p in self.pointers]


class Inconsistent(Exception):
    """The events cannot be applied to the blocks as they are (or do not add up)."""


class _Window:
    """Rows replacing the base rows [i0, i1), covering the same bytes (the
    last window may reach past the base's break: the heap grew)."""
    __slots__ = ("i0", "i1", "rows")

    def __init__(self, i0: int, i1: int, rows: list) -> None:
        self.i0, self.i1, self.rows = i0, i1, rows


class BlockEditor:
    """Applies events to a :class:`TrackedHeap` without copying its columns
    until :meth:`finish`: the rows the events touch are pulled out into small
    Python lists (windows) and edited there.

    ``live`` is the strategy's ``{payload: LiveBlock}``, read for the header
    bytes of a placed block; without it (a micro-step drawn from the events
    alone) they come from ``after``, the heap after the whole step."""

    def __init__(self, heap: TrackedHeap, live: dict | None = None,
                 after: TrackedHeap | None = None) -> None:
        self.after = after
        self.base = heap.blocks
        self.brk = heap.blocks.brk
        self.pointers = {p.name: p for p in heap.pointers}
        self.live = live if live is not None else {}
        self.windows: list[_Window] = []

    # ------------------------------------------------------------- windows
    def _base_rows(self, i: int, j: int) -> list:
        b = self.base
        return [list(r) for r in zip(b.addr[i:j].tolist(), b.size[i:j].tolist(), b.state[i:j].tolist(),
                                     b.payload[i:j].tolist(), b.request[i:j].tolist(),
                                     b.header[i:j].tolist())]

    def _window(self, a: int, b: int) -> _Window:
        """The window holding every block that overlaps [a, b) (pulled out of
        the base, and merged with the windows it meets)."""
        base = self.base
        n = len(base)
        if a >= base.brk:
            i0 = i1 = n
        else:
            i0 = max(0, int(np.searchsorted(base.addr, a, side="right")) - 1)
            i1 = max(i0 + 1, int(np.searchsorted(base.addr, b, side="left")))
        meet = [w for w in self.windows if w.i0 <= i1 and i0 <= w.i1]
        if len(meet) == 1 and meet[0].i0 <= i0 and i1 <= meet[0].i1:
            return meet[0]
        lo = min([i0] + [w.i0 for w in meet])
        hi = max([i1] + [w.i1 for w in meet])
        rows, cursor = [], lo
        for w in sorted(meet, key=lambda w: w.i0):
            rows += self._base_rows(cursor, w.i0)
            rows += w.rows
            cursor = w.i1
        rows += self._base_rows(cursor, hi)
        merged = _Window(lo, hi, rows)
        self.windows = sorted([w for w in self.windows if w not in meet] + [merged], key=lambda w: w.i0)
        return merged

    def row_at(self, addr: int) -> list | None:
        """The current block holding ``addr`` (a row; None outside the heap)."""
        if addr < 0 or addr >= self.brk:
            return None
        w = self._window(addr, addr + 1)
        for r in w.rows:
            if r[0] <= addr < r[0] + r[1]:
                return r
        return None

    # --------------------------------------------------------------- edits
    def put_rows(self, new_rows: list) -> None:
        """Make the contiguous ``new_rows`` the blocks of the bytes they
        cover; blocks they overlap are cut back to what lies outside."""
        a = new_rows[0][0]
        b = new_rows[-1][0] + new_rows[-1][1]
        if a >= self.brk and self.brk > 0 and a > self.base.brk:
            # memory mapped apart from the heap (dlmalloc's mmapped chunks):
            # not drawn; the books, which count it apart, say if it was not
            return
        if b > self.brk or a < 0 or b <= a:
            raise Inconsistent(f"block [{a:#x}, {b:#x}) is outside the heap (break {self.brk:#x})")
        w = self._window(a, b)
        rows = w.rows
        if not rows or rows[0][0] > a or rows[-1][0] + rows[-1][1] < b:
            raise Inconsistent(f"block [{a:#x}, {b:#x}) is not inside the blocks around it")
        before, after = [], []
        for r in rows:
            end = r[0] + r[1]
            if end <= a:
                before.append(r)
            elif r[0] >= b:
                after.append(r)
            else:          # overlapped: keep what lies outside [a, b)
                if r[0] < a:
                    before.append([r[0], a - r[0]] + r[2:])
                if end > b:
                    after.append([b, end - b] + r[2:])
        w.rows = before + [list(r) for r in new_rows] + after

    def put(self, addr: int, size: int, state: int, payload: int = -1, request: int = 0,
            header: int = 0) -> None:
        self.put_rows([[addr, size, state, payload, request, header]])

    def put_free(self, addr: int, size: int) -> None:
        self.put(addr, size, STATE_FREE)

    def put_used(self, addr: int, size: int, payload: int, request: int) -> None:
        lb = self.live.get(payload)
        header = lb[3] if lb is not None else 0
        if lb is None and self.after is not None:
            b = self.after.blocks
            i = b.index_at(addr)
            if i >= 0 and b.payload[i] == payload:
                header = int(b.header[i])
        self.put(addr, size, STATE_USED, payload, request, header)

    def grow(self, old_brk: int, increment: int) -> None:
        """New bytes at the break, *pending* until an event names the blocks
        made of them; what is left pending at the end is settled by the books
        (:meth:`resolve_pending`)."""
        if old_brk != self.brk:
            raise Inconsistent(f"the heap grew from {old_brk:#x} but its break is {self.brk:#x}")
        w = self._window(old_brk, old_brk)
        w.rows.append([old_brk, increment, STATE_PENDING, -1, 0, 0])
        self.brk = old_brk + increment

    def carve(self, addr: int, size: int) -> None:
        """A fixed pool's bytes ``[addr, addr + size)`` taken into use
        (``Strategy._take_core`` says so in a Note): pending, as the bytes
        of a :meth:`grow` (an end mark may move into them)."""
        if size > 0 and addr + size <= self.brk:
            self.put(addr, size, STATE_PENDING)

    def shrink(self, new_brk: int) -> None:
        """The heap gave its top bytes back (dlmalloc's ``malloc_trim``)."""
        if new_brk >= self.brk:
            return
        w = self._window(new_brk, self.brk)
        w.rows = [r if r[0] + r[1] <= new_brk else [r[0], new_brk - r[0]] + r[2:]
                  for r in w.rows if r[0] < new_brk]
        self.brk = new_brk

    def pending_bytes(self) -> int:
        return sum(r[1] for w in self.windows for r in w.rows if r[2] == STATE_PENDING)

    def resolve_pending(self, state_of) -> None:
        """Give every pending block the state ``state_of(row)`` returns."""
        for w in self.windows:
            for r in w.rows:
                if r[2] == STATE_PENDING:
                    r[2] = state_of(r)

    def apply(self, event) -> None:
        """Edit the blocks (or the pointers) as ``event`` says."""
        edit = _EDITS.get(type(event))
        if edit is None and type(event) not in _IGNORED:
            edit = _edit_for(type(event))
        if edit is not None:
            edit(self, event)

    def apply_all(self, events) -> None:
        """:meth:`apply` each event; most of a long step's are looks (visits,
        probes) that change nothing, skipped by type."""
        edits = _EDITS
        for event in events:
            edit = edits.get(type(event))
            if edit is not None:
                edit(self, event)
            elif type(event) not in _IGNORED:
                self.apply(event)

    def _split(self, e) -> None:
        taken = self.row_at(e.taken_addr)
        if taken is None:
            raise Inconsistent(f"split of {e.addr:#x} outside the heap")
        self.put_free(e.rest_addr, e.rest_size)
        self.put_rows([[e.taken_addr, e.taken_size] + taken[2:]])

    def _buddy_split(self, e) -> None:
        half = 1 << (e.order - 1)
        lo, hi = sorted((e.addr, e.buddy))
        self.put_rows([[lo, half, STATE_FREE, -1, 0, 0], [hi, half, STATE_FREE, -1, 0, 0]])

    def _refill(self, e) -> None:
        bs = e.block_size
        self.put_rows([[e.addr + i * bs, bs, STATE_FREE, -1, 0, 0] for i in range(e.count)])

    def put_taken(self, addr: int, size: int) -> None:
        """A block handed out with no ``Placed`` (yet) and no header, its
        payload at ``addr`` (GNU malloc's first fragment, a phkmalloc chunk):
        used when the books (or ``after``) have that payload, else the
        allocator's own (phkmalloc's ``pginfo`` and ``pgfree`` chunks)."""
        lb = self.live.get(addr)
        if lb is not None:
            self.put(addr, size, STATE_USED, addr, lb[2], lb[3])
            return
        if self.after is not None:
            b = self.after.blocks
            i = b.index_at(addr)
            if i >= 0 and b.state[i] == STATE_USED and b.payload[i] == addr:
                self.put(addr, size, STATE_USED, addr, int(b.request[i]), int(b.header[i]))
                return
        self.put(addr, size, STATE_META)

    def _fragmented(self, e) -> None:
        frag = 1 << e.log
        self.put_taken(e.block, frag)
        self.put_rows([[e.block + i * frag, frag, STATE_FREE, -1, 0, 0] for i in range(1, e.count)])

    def _chunk_page(self, e) -> None:
        size = e.size
        state = [STATE_META] * e.stolen + [STATE_FREE] * e.total
        self.put_rows([[e.page + i * size, size, st, -1, 0, 0] for i, st in enumerate(state)])

    def _shrink_event(self, e) -> None:
        new_top = e.old_brk - e.decrement
        if e.old_brk == self.brk:
            self.shrink(new_top)
        elif new_top < self.brk:
            # a fixed pool: the bytes join the part not handed out, drawn as one free block
            self.put_free(new_top, self.brk - new_top)

    def _arena_extended(self, e) -> None:
        rows = [[e.addr, e.size, STATE_FREE, -1, 0, 0], [e.top, e.top_size, STATE_META, -1, 0, 0]]
        if e.old_top is not None:
            # the old top word leads into the new memory: a free one-word block
            rows.insert(0, [e.old_top, e.addr - e.old_top, STATE_FREE, -1, 0, 0])
        self.put_rows(rows)

    def _pointer(self, e) -> None:
        old = self.pointers.get(e.name)
        role = old.role if old is not None else "search"
        self.pointers[e.name] = Pointer(e.name, e.new, role)

    def settle(self, record, brk: int | None = None) -> None:
        """After a whole step: the heap ends at the strategy's break ``brk``
        (a policy that gives bytes back may say so with no event), and the
        blocks of its result and, for a realloc, of its argument, are as
        ``strategy.live`` books them (a realloc that keeps its block, or takes
        it back after a failed move, says so with no ``Placed``)."""
        if brk is not None and brk < self.brk:
            self.shrink(brk)
        if record is None or record.kind == FREE:
            return
        for payload in {record.payload, record.old_payload}:
            lb = self.live.get(payload) if payload is not None else None
            if lb is not None:
                self.put(lb[0], lb[1], STATE_USED, payload, lb[2], lb[3])

    # -------------------------------------------------------------- result
    def delta(self) -> "Totals":
        """What the edits change in the :class:`Totals` (pending bytes count nowhere)."""
        d = Totals()
        b = self.base
        for w in self.windows:
            for r in w.rows:
                if r[2] == STATE_USED:
                    d.used += 1
                    d.used_bytes += r[1]
                    d.header_bytes += r[5]
                elif r[2] == STATE_FREE:
                    d.free_bytes += r[1]
            d = d.plus(Totals.of_rows(b.state[w.i0:w.i1], b.size[w.i0:w.i1], b.header[w.i0:w.i1]), -1)
        return d

    def finish(self, base_serial: int = -1) -> tuple[TrackedHeap, list, list]:
        """The edited heap; the splices that made it (``(i0, i1, rows)`` in the
        base) and the splices that undo them (in the result)."""
        pieces, undo, spans = [], [], []
        shift = 0
        b = self.base
        for w in self.windows:
            rows = _rows_array(w.rows)
            pieces.append((w.i0, w.i1, rows))
            start = w.i0 + shift
            undo.append((start, start + len(rows), _columns_rows(b, w.i0, w.i1)))
            shift += len(rows) - (w.i1 - w.i0)
            # the bytes the window covered before and covers now
            lo = int(b.addr[w.i0]) if w.i0 < w.i1 else b.brk
            hi = int(b.addr[w.i1 - 1] + b.size[w.i1 - 1]) if w.i0 < w.i1 else b.brk
            if len(rows):
                lo, hi = min(lo, int(rows[0, 0])), max(hi, int(rows[-1, 0] + rows[-1, 1]))
            spans.append((lo, hi))
        pointers = tuple(self.pointers.values())
        top = top_of([p._asdict() for p in pointers])
        blocks = splice(b, pieces, self.brk, top)
        if blocks.brk < b.brk:                     # the heap shrank: its old end is past the break
            spans.append((blocks.brk, b.brk))
        spans += top_spans(b, blocks)
        return TrackedHeap(blocks, pointers, base_serial, tuple(spans)), pieces, undo


def top_spans(a: BlockArrays, b: BlockArrays) -> list[tuple[int, int]]:
    """Where two heaps differ in their top block (coloured apart): the old
    top block and the new one, when the policy moved its wilderness."""
    if a.top == b.top:
        return []
    out = []
    for arrays in (a, b):
        i = arrays.top_index()
        if i >= 0:
            out.append((int(arrays.addr[i]), int(arrays.addr[i] + arrays.size[i])))
    return out


#: the words ``Strategy._take_core`` uses when it carves a fixed pool
_CARVED = re.compile(r"carved (\d+) bytes at (0x[0-9a-f]+) from the pool")


def _note(editor: "BlockEditor", e) -> None:
    m = _CARVED.search(e.text)
    if m:
        editor.carve(int(m.group(2), 16), int(m.group(1)))


#: how each kind of event edits the blocks (docs in the module's table)
_EDITS = {
    Placed: lambda ed, e: ed.put_used(e.addr, e.size, e.payload, e.request),
    Released: lambda ed, e: ed.put_free(e.addr, e.size),
    ListInsert: lambda ed, e: ed.put_free(e.addr, e.size),
    TreeInsert: lambda ed, e: ed.put_free(e.addr, e.size),
    Split: BlockEditor._split,
    Coalesce: lambda ed, e: ed.put_free(e.low_addr, e.low_size + e.high_size),
    Grow: lambda ed, e: ed.grow(e.old_brk, e.increment),
    BuddySplit: BlockEditor._buddy_split,
    BuddyMerge: lambda ed, e: ed.put_free(min(e.addr, e.buddy), 2 << e.order),
    BucketRefill: BlockEditor._refill,
    PointerMove: BlockEditor._pointer,
    Note: _note,
    Shrink: BlockEditor._shrink_event,
    # V7 malloc
    ArenaExtended: BlockEditor._arena_extended,
    # GNU malloc
    BlockFragmented: BlockEditor._fragmented,
    FragLinked: lambda ed, e: ed.put_free(e.addr, e.size),
    FragBlockEmptied: lambda ed, e: ed.put_free(e.block, e.count << e.log),
    TableMoved: lambda ed, e: ed.put(e.new_addr, e.new_size, STATE_META),
    TopExtended: lambda ed, e: ed.put_free(e.addr, e.old_size + e.added),
    # phkmalloc
    ChunkPageMade: BlockEditor._chunk_page,
    ChunkTaken: lambda ed, e: ed.put_taken(e.addr, e.size),
    ChunkFreed: lambda ed, e: ed.put_free(e.addr, e.size),
    ChunkPageDissolved: lambda ed, e: ed.put(e.page, e.pagesize, STATE_META),
}
#: kinds of event that change no block (``changes_blocks = False``; found so
#: far: the rest are looked up once)
_IGNORED: set = set()


def _cannot_edit(editor: "BlockEditor", e) -> None:
    """The edit of a kind that may change blocks in a way the map cannot
    know (a user strategy's own event): the step is refused, so walked."""
    raise Inconsistent(f"{type(e).__name__} may change blocks and the map has no edit for it "
                       "(an event that changes none says changes_blocks = False)")


def _edit_for(kind):
    """The edit of an event type not in :data:`_EDITS` -- a subclass of one
    of its kinds, or a policy's own event that gives the top of the heap back
    (fields ``old_brk`` and ``extra``: dlmalloc's ``Trim``) -- or None for a
    kind that says it changes no block (remembered in :data:`_IGNORED`).
    Any other kind gets :func:`_cannot_edit`: totals that still add up (a
    block cut in fragments of the same free bytes) would not show what it did."""
    for base, edit in _EDITS.items():
        if edit is not _cannot_edit and issubclass(kind, base):
            _EDITS[kind] = edit
            return edit
    names = {f for f in getattr(kind, "__dataclass_fields__", ())}
    if {"old_brk", "extra"} <= names:
        _EDITS[kind] = lambda ed, e: ed.shrink(e.old_brk - e.extra)
        return _EDITS[kind]
    if getattr(kind, "changes_blocks", True):
        _EDITS[kind] = _cannot_edit
        return _cannot_edit
    _IGNORED.add(kind)
    return None


def _rows_array(rows: list) -> np.ndarray:
    return np.array(rows, dtype=np.int64).reshape(len(rows), len(COLUMNS))


def _columns_rows(b: BlockArrays, i0: int, i1: int) -> np.ndarray:
    """Rows [i0, i1) of ``b`` as an (n, 6) array."""
    return np.stack([getattr(b, c)[i0:i1].astype(np.int64) for c in COLUMNS], axis=1) \
        if i1 > i0 else np.zeros((0, len(COLUMNS)), np.int64)


def splice(b: BlockArrays, pieces: list, brk: int, top: int) -> BlockArrays:
    """``b`` with its rows [i0, i1) replaced by ``rows`` for each ``(i0, i1,
    rows)`` of ``pieces`` (in address order, not overlapping)."""
    cols = []
    for c, name in enumerate(COLUMNS):
        src = getattr(b, name)
        parts, cursor = [], 0
        for i0, i1, rows in pieces:
            parts.append(src[cursor:i0])
            parts.append(rows[:, c].astype(src.dtype))
            cursor = i1
        parts.append(src[cursor:])
        cols.append(np.concatenate(parts) if len(parts) > 1 else src)
    return BlockArrays(*cols, brk=brk, top=top)


def apply_events(heap: TrackedHeap, events, live: dict | None = None,
                 after: TrackedHeap | None = None) -> TrackedHeap:
    """``heap`` after ``events`` (a step's first events: the micro-steps of
    the map).  New bytes still pending take the state they have in
    ``after``, the heap after the whole step (free without it).  Raises
    :class:`Inconsistent` when the events do not fit ``heap``."""
    editor = BlockEditor(heap, live, after)
    editor.apply_all(events)

    def state_of(row) -> int:
        if after is not None:
            i = after.blocks.index_at(row[0])
            if i >= 0 and after.blocks.state[i] != STATE_USED:
                return int(after.blocks.state[i])
        return STATE_FREE

    editor.resolve_pending(state_of)
    return editor.finish(heap.serial)[0]


# ------------------------------------------------------------------ totals
@dataclass
class Totals:
    """What a step must add up to: live blocks, their bytes and header bytes, free bytes."""
    used: int = 0
    used_bytes: int = 0
    header_bytes: int = 0
    free_bytes: int = 0

    @staticmethod
    def of_rows(state, size, header) -> "Totals":
        used = state == STATE_USED
        return Totals(int(used.sum()), int(size[used].sum()), int(header[used].sum()),
                      int(size[state == STATE_FREE].sum()))

    @staticmethod
    def of_blocks(b: BlockArrays) -> "Totals":
        return Totals.of_rows(b.state, b.size, b.header)

    @staticmethod
    def of_array(rows: np.ndarray) -> "Totals":
        return Totals.of_rows(rows[:, 2], rows[:, 1], rows[:, 5])

    def plus(self, other: "Totals", sign: int = 1) -> "Totals":
        return Totals(self.used + sign * other.used, self.used_bytes + sign * other.used_bytes,
                      self.header_bytes + sign * other.header_bytes, self.free_bytes + sign * other.free_bytes)


def strategy_totals(strategy) -> Totals:
    """The strategy's own books, for the heap alone: blocks it mapped apart
    from the heap (dlmalloc's mmapped chunks) are live but not in the walk."""
    t = Totals(len(strategy.live), strategy.in_use, strategy.header_in_use,
               strategy.fragmentation_probe()[0])
    if getattr(strategy, "mapped_bytes", 0):
        for b in strategy.mapped_blocks():
            t.used -= 1
            t.used_bytes -= b.size
            t.header_bytes -= b.header
    return t


# ----------------------------------------------------------------- tracker
class HeapTracker:
    """One timeline's heap at one position, edited step by step.

    :meth:`forward` applies one step's record (the strategy standing just
    after it); :meth:`back` undoes the last one; :meth:`heap_at` gives the
    heap at a position, rebuilt from the walk when the tracker is not there.
    """

    def __init__(self) -> None:
        self.heap: TrackedHeap | None = None
        self.position: int | None = None
        self._totals: Totals | None = None
        # (position after the step, its undo splices, brk, pointers and totals
        # before it, the spans it changed)
        self._undo: deque = deque(maxlen=UNDO_STEPS)
        #: how the heaps were made (tests and the benchmark read them)
        self.walks = 0
        self.edits = 0
        self.undos = 0
        self.rebuilds_after_bad_steps = 0
        #: why the last bad step was refused
        self.last_refusal = ""

    def invalidate(self) -> None:
        self.heap = None
        self.position = None
        self._totals = None
        self._undo.clear()

    def rebuild(self, strategy, position: int, pointer_dicts) -> TrackedHeap:
        """The heap from a full walk of ``strategy`` (at ``position``)."""
        heap = TrackedHeap.walk(strategy, pointer_dicts)
        self.walks += 1
        self.invalidate()
        self.heap, self.position = heap, position
        self._totals = Totals.of_blocks(heap.blocks)
        return heap

    def walk_is_cheaper(self, steps: int) -> bool:
        """Whether a move forward by ``steps`` (more than one) costs less as a
        plain seek and a walk than edited in step by step: a small heap
        (:data:`WALK_BLOCKS_PER_STEP`).  One step is always edited in (its
        events animate it, and it can be undone)."""
        return (steps > 1 and self.heap is not None
                and len(self.heap.blocks.addr) < WALK_BLOCKS_PER_STEP * steps)

    def heap_at(self, strategy, position: int, pointer_dicts: Callable[[], list]) -> TrackedHeap:
        """The heap at ``position`` (the strategy's); ``pointer_dicts()``
        gives ``structure()["pointers"]`` when it must be rebuilt."""
        if self.heap is not None and self.position == position:
            return self.heap
        return self.rebuild(strategy, position, pointer_dicts())

    def forward(self, strategy, record, position: int) -> bool:
        """Apply the step that led to ``position`` (``strategy`` stands just
        after it, ``record`` is its record with events).  False (and the
        tracker forgets its heap) when it cannot."""
        if self.heap is None or self.position != position - 1 or record is None or record.events is None:
            self.invalidate()
            return False
        before = self.heap
        try:
            editor = BlockEditor(before, strategy.live)
            editor.apply_all(record.events)
            editor.settle(record, strategy.arena.brk)
            want = strategy_totals(strategy)
            totals = self._totals.plus(editor.delta())      # pending bytes counted nowhere yet
            pending = editor.pending_bytes()
            if pending:
                if totals.free_bytes + pending == want.free_bytes:
                    editor.resolve_pending(lambda row: STATE_FREE)
                    totals.free_bytes += pending
                elif totals.free_bytes == want.free_bytes:
                    editor.resolve_pending(lambda row: STATE_META)
                else:
                    raise Inconsistent(f"{pending} new bytes are neither free nor meta")
            after, pieces, undo = editor.finish(before.serial)
            self._check(strategy, after, totals, want)
        except Inconsistent as exc:
            self.last_refusal = f"step {position}: {exc}"
            self.rebuilds_after_bad_steps += 1
            self.invalidate()
            return False
        self._undo.append((position, undo, before.blocks.brk, before.pointers, self._totals, after.spans))
        self.heap, self.position, self._totals = after, position, totals
        self.edits += 1
        return True

    @staticmethod
    def _check(strategy, heap: TrackedHeap, totals: Totals, want: Totals) -> None:
        if totals != want:
            raise Inconsistent(f"the edited heap has {totals}, the strategy {want}")
        b = heap.blocks
        if b.brk != strategy.arena.brk:
            raise Inconsistent(f"the edited heap ends at {b.brk:#x}, the break is at {strategy.arena.brk:#x}")
        n = len(b)
        if n:
            end = b.addr[-1] + b.size[-1]
            if end != b.brk or np.any(b.addr[1:] != b.addr[:-1] + b.size[:-1]):
                raise Inconsistent("the edited blocks do not tile the heap")
        for p in heap.pointers:
            if p.addr is not None:
                i = b.index_at(p.addr)
                if i < 0 or b.addr[i] != p.addr:
                    raise Inconsistent(f"pointer {p.name} at {p.addr:#x} is not at a block")

    def can_undo(self, position: int) -> bool:
        """Whether the step to ``position + 1`` can be undone from here."""
        return bool(self._undo) and self.position == position + 1 and self._undo[-1][0] == position + 1

    def back(self, position: int) -> bool:
        """Undo the last step, to ``position``; False if it cannot."""
        if not self.can_undo(position):
            self.invalidate()
            return False
        _, undo, brk, pointers, totals, spans = self._undo.pop()
        self.heap = TrackedHeap(splice(self.heap.blocks, undo, brk, top_of([p._asdict() for p in pointers])),
                                pointers, self.heap.serial, spans)
        self.position, self._totals = position, totals
        self.undos += 1
        return True

    def before(self) -> TrackedHeap | None:
        """The heap before the step that led here, if the tracker edited it
        in (None otherwise: ask the timeline)."""
        if self.heap is None or not self._undo or self._undo[-1][0] != self.position:
            return None
        _, undo, brk, pointers, _, spans = self._undo[-1]
        return TrackedHeap(splice(self.heap.blocks, undo, brk, top_of([p._asdict() for p in pointers])),
                           pointers, self.heap.serial, spans)


def seek_tracked(timeline, tracker: HeapTracker, position: int) -> None:
    """Move ``timeline`` to ``position`` and keep ``tracker`` there: a short
    move forward one step at a time (each step replayed with its events and
    edited in), one step back by undoing the last edit, anything else by a
    plain seek (the tracker then rebuilds from the walk when asked).

    A step back that cannot be undone (the tracker walked the heap after a
    jump) walks the heap :data:`BACK_WALK_AHEAD` steps further back and edits
    the steps from there in, one at a time, as a short move forward: the
    next steps back are then undone, where each would have walked."""
    start = timeline.position
    if tracker.position == start and tracker.heap is not None:
        if 0 < position - start <= STEPWISE_MAX and not tracker.walk_is_cheaper(position - start):
            _edit_forward(timeline, tracker, start, position)
            return
        if position == start - 1:
            if tracker.can_undo(position):
                timeline.seek(position)
                tracker.back(position)
                return
            if position > 0:
                low = max(0, position - BACK_WALK_AHEAD)
                timeline.seek(low)
                tracker.rebuild(timeline.strategy, low, timeline.strategy.structure()["pointers"])
                _edit_forward(timeline, tracker, low, position)
                return
    if position != start:
        tracker.invalidate()
    timeline.seek(position)


def _edit_forward(timeline, tracker: HeapTracker, start: int, position: int) -> None:
    """Replay the steps after ``start`` up to ``position`` one at a time, each
    with its events, and edit them in (a plain seek if one does not fit)."""
    for t in range(start + 1, position + 1):
        timeline.seek(t)
        if not tracker.forward(timeline.strategy, timeline.last_record, t):
            timeline.seek(position)
            return
