"""The heap's block list edited from a step's events instead of walked:
Qt-free, the core of the heap map's stepping (:mod:`heapscope.allocators.heap_tracker`
keeps one per timeline; the window draws what it gives).

``Strategy.walk_tuples()`` of a 100 000-block heap takes 100-240 ms of
Python: a map that walked the heap on every step could not step faster than
about five frames a second.  One step changes a handful of blocks, and its
events (:mod:`heapscope.allocators.events`; docs/structure.md, "Events a view
can rely on") name every block it cut, joined, handed out or took back, with
its size.  So a :class:`BlockEditor` pulls the rows the events name out of
the :class:`~heapscope.allocators.block_list.BlockArrays` into small Python
lists, edits them there, and :meth:`BlockEditor.finish` splices them back in
(work in the number of events, plus one copy of the columns in numpy).

**Each event type says its own edit**: a method ``edit(self, editor)`` on its
class, beside its fields, in the verbs of the editor below (``put`` makes a
byte range one block and trims the blocks it overlaps; the state of a block
cut by ``put`` stays):

=======================  ==================================================
``put_rows(rows)``       contiguous rows ``[addr, size, state, payload,
                         request, header]`` become the blocks of their bytes
``put(addr, size, st)``  one block (``STATE_FREE``, ``STATE_USED``,
                         ``STATE_META`` of :mod:`~heapscope.allocators.block_list`)
``put_free``             one free block
``put_used``             a used block (payload, request; its header bytes
                         from ``strategy.live``)
``put_taken``            a block handed out with no ``Placed``: used if the
                         books have its payload, else the allocator's own
``put_free_run``         ``count`` free blocks of one size
``row_at(addr)``         the current row holding ``addr`` (to keep a state)
``grow(old_brk, n)``     new bytes at the break, *pending* until the events
                         that follow name the blocks made of them; bytes
                         still pending at the end of the step are free or
                         allocator meta, whichever makes the free bytes add
                         up (TLSF's end sentinel and the BSD first call's
                         pad are meta; Vmbest's new wilderness is free)
``carve(addr, n)``       a fixed pool's bytes taken into use: pending too
``shrink(new_brk)``,     the heap ends lower (at the break; in a fixed pool
``shrink_to``            the bytes join the free part not handed out)
``move_pointer``         a named pointer of the policy moves
=======================  ==================================================

An event that changes no block says ``changes_blocks = False`` and has no
edit.  A type with neither (a user strategy's own event) cannot be edited:
:func:`edit_of` gives it an edit that refuses the step, and the tracker
walks the heap instead, because such an event may cut or join blocks and
keep every total the same.  (One exception, kept from before events carried
their edits: a type with fields ``old_brk`` and ``extra`` gives the top of the
heap back, as dlmalloc's ``Trim``.)

A block wholly past the break is memory mapped apart from the heap
(dlmalloc's mmapped chunks, ``Strategy.mapped_blocks``): the map does not
draw it, and the books leave it out.
``tests/test_heap_edits.py`` checks the edits against the walk after every
event of every built-in strategy, with no window.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from .block_list import STATE_FREE, STATE_META, STATE_USED, BlockArrays, block_arrays, top_of
from .events import FREE

#: the state of bytes the heap grew by, until an event says what they are
STATE_PENDING = 3
#: the columns of a block row, in order (rows are [addr, size, state, payload, request, header])
COLUMNS = ("addr", "size", "state", "payload", "request", "header")


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
    Python lists (windows) and edited there.  Each event's own
    ``edit(editor)`` calls the verbs below (``put_free``, ``put_rows``,
    ``grow``, ``move_pointer`` ...: the module's table); :meth:`apply_all`
    finds it once per event type (:func:`edit_of`).

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
        """Edit the blocks (or the pointers) as ``event`` says (its ``edit``)."""
        edit = edit_of(type(event))
        if edit is not None:
            edit(event, self)

    def apply_all(self, events) -> None:
        """:meth:`apply` each event; most of a long step's are looks (visits,
        probes) that change nothing, skipped by type (one dict look-up)."""
        edits = _EDIT_OF
        for event in events:
            edit = edits.get(type(event), _UNKNOWN)
            if edit is _UNKNOWN:
                edit = edit_of(type(event))
            if edit is not None:
                edit(event, self)

    # ---------------------------------------------- verbs the events' edits use
    @staticmethod
    def free_row(addr: int, size: int) -> list:
        """A row of :meth:`put_rows`: a free block."""
        return [addr, size, STATE_FREE, -1, 0, 0]

    @staticmethod
    def meta_row(addr: int, size: int) -> list:
        """A row of :meth:`put_rows`: the allocator's own bytes."""
        return [addr, size, STATE_META, -1, 0, 0]

    def put_meta(self, addr: int, size: int) -> None:
        self.put(addr, size, STATE_META)

    def refuse(self, why: str) -> None:
        """The events do not fit the blocks: the step is walked instead."""
        raise Inconsistent(why)

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

    def put_free_run(self, addr: int, block_size: int, count: int) -> None:
        """``count`` free blocks of ``block_size`` bytes from ``addr`` on."""
        self.put_rows([[addr + i * block_size, block_size, STATE_FREE, -1, 0, 0] for i in range(count)])

    def shrink_to(self, new_top: int, old_brk: int) -> None:
        """The heap gave back the bytes from ``new_top`` to ``old_brk`` (a
        ``Shrink``): at the break it ends lower; in a fixed pool, whose break
        does not move, the bytes join the part not handed out, drawn as one
        free block."""
        if old_brk == self.brk:
            self.shrink(new_top)
        elif new_top < self.brk:
            self.put_free(new_top, self.brk - new_top)

    def move_pointer(self, name: str, addr: int | None) -> None:
        """The policy's pointer ``name`` now at ``addr`` (its role kept; a
        new one is a search pointer)."""
        old = self.pointers.get(name)
        role = old.role if old is not None else "search"
        self.pointers[name] = Pointer(name, addr, role)

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


# ------------------------------------------------------- edits of event types
#: what :func:`edit_of` gave each event type so far (None: changes no block)
_EDIT_OF: dict = {}
#: marks a type :data:`_EDIT_OF` has not seen yet
_UNKNOWN = object()


def _cannot_edit(event, editor: "BlockEditor") -> None:
    """The edit of a type that may change blocks in a way the map cannot
    know (a user strategy's own event with no ``edit``): the step is
    refused, so walked."""
    raise Inconsistent(f"{type(event).__name__} may change blocks and the map has no edit for it "
                       "(an event that changes none says changes_blocks = False)")


def _give_top_back(event, editor: "BlockEditor") -> None:
    editor.shrink(event.old_brk - event.extra)


def edit_of(kind):
    """How events of type ``kind`` edit a :class:`BlockEditor`: its method
    ``edit(self, editor)`` (a subclass inherits its base's), or None for a
    type that says ``changes_blocks = False``.  A type with neither that
    gives the top of the heap back (fields ``old_brk`` and ``extra``, as
    dlmalloc's ``Trim``) shrinks the heap; any other gets
    :func:`_cannot_edit`: totals that still add up (a block cut in fragments
    of the same free bytes) would not show what it did.  Looked up once per
    type."""
    edit = _EDIT_OF.get(kind, _UNKNOWN)
    if edit is not _UNKNOWN:
        return edit
    edit = getattr(kind, "edit", None)
    if edit is None:
        names = set(getattr(kind, "__dataclass_fields__", ()))
        if {"old_brk", "extra"} <= names:
            edit = _give_top_back
        elif getattr(kind, "changes_blocks", True):
            edit = _cannot_edit
    _EDIT_OF[kind] = edit
    return edit


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
