"""Next fit with a roving pointer: the storage allocator of Kernighan & Ritchie,
*The C Programming Language*, 2nd ed., section 8.7 (the old Unix malloc that
seed 000 calls "fsi").

The original, followed line by line:

* Memory is counted in units of ``sizeof(Header)``: a header is one pointer and
  one ``unsigned`` size padded to the most restrictive alignment, so on LP64
  one unit is 16 bytes, twice the word.  A request of ``nbytes`` takes
  ``(nbytes + sizeof(Header) - 1) / sizeof(Header) + 1`` units: the payload
  rounded up, plus the header.
* Free blocks sit on a circular list in increasing address order, closed by a
  zero-size ``base`` header that lives outside the heap (in static data, so at
  an address below every heap block: we use ``BASE = -1``).
* ``malloc`` searches from the block after the rover ``freep``.  An exact fit is
  unlinked; otherwise the *tail* of the block is cut off and returned, so the
  free block keeps its place in the list.  The rover is then left at the block
  *before* the one used (``freep = prevp``).
* When the search comes back round to ``freep``, ``morecore`` calls
  ``sbrk(max(nunits, NALLOC) * sizeof(Header))`` with ``NALLOC = 1024`` and
  hands the new memory to ``free``.
* ``free`` walks from ``freep`` to the address-ordered place of the block,
  joins it to its upper and lower neighbours when they touch, and leaves the
  rover at the block before it: the rover moves on free too.

Two parameters K&R's code fixes at compile time:

* ``align``: K&R pads the header union to ``Align``, "the most restrictive
  type"; asking for a larger alignment is asking for a larger ``Align``, so
  the unit becomes ``max(2W, align)`` and every payload, one unit into a block
  that starts on a unit boundary, is aligned.
* ``pool_size``: a fixed pool is laid out as K&R's allocator would take memory
  it was handed: ``morecore``'s way, the pool's whole units are one block given
  to ``free``, so the ring holds ``base`` and that block from the start.  Bytes
  that do not make a whole unit stay a META tail; ``sbrk`` then always fails.

Finding without walking (bulk replay).  K&R's two walks, malloc's search
round the ring and free's walk to the address-ordered place, are the cost of
this strategy on big heaps.  The ring is address ordered, so what each walk
finds and how many blocks it passes follow from the blocks' ranks:
:class:`RingIndex` keeps the free blocks' addresses and sizes in two sorted
parallel lists, free's walk becomes two bisections, and malloc's search a scan
of the sizes in C.  The index only replaces the walks while no events are
recorded (bulk replay); a shown step walks the ring as K&R does, and the tests
check that both give the same block, rover, search length and heap
(``indexed = False`` keeps the plain walk everywhere).

View: the rover arrow moving round the ring, the scanned blocks lit in order.
"""

from __future__ import annotations

import struct
from bisect import bisect_left
from heapq import heappush
from itertools import accumulate, compress, islice, takewhile
from typing import Iterator

from .events import (FREE, Coalesce, Grow, GrowFailed, InsertionPoint, ListInsert, ListRemove, Placed,
                     PointerMove, Released, Split, Visit, WalkStep)
from . import structure
from .free_index import FreeSizeIndex
from .params import INT, Param
from .strategy import FREE_BLOCK, META, USED, Block, Strategy

#: the address of K&R's static ``base`` header: below every heap address.
BASE = -1
#: K&R's minimum number of units to ask sbrk for.
NALLOC = 1024
#: K&R has one free list: ListInsert/ListRemove carry no index
ONE_LIST: tuple[int, ...] = ()
#: the build's row of measures (:meth:`NextFit.measure_row`): no largest_free
#: (the max of the two after it) nor the rotations K&R never adds to
ROW_FIELDS = ("heap", "live", "in_use", "headers", "free", "top_free", "largest_below_top",
              "visits", "splits", "merges", "grows", "walked", "payload")
_ROW = struct.Struct(f"<{len(ROW_FIELDS)}q")


class RingIndex(FreeSizeIndex):
    """The measures' free size index, plus K&R's ring as two parallel lists
    sorted by address: the free blocks' addresses and their sizes in bytes.
    Position 0 of the ring is ``base``, position ``i + 1`` is ``addrs[i]``.

    A search from base (first fit's every search, next fit's once it wraps)
    is a bisection of the sizes' running maximum, ``prefix_max[i]`` being
    the largest of ``bytes[:i + 1]``: the first block that fits is the first
    place that maximum reaches the request.  Only its first ``valid`` entries
    hold: a block that comes, goes or changes size at index ``i`` cuts it
    back to ``i``, and a search extends it over the blocks it scanned."""

    __slots__ = ("addrs", "bytes", "prefix_max", "valid")

    def __init__(self) -> None:
        super().__init__()
        self.addrs: list[int] = []
        self.bytes: list[int] = []
        self.prefix_max: list[int] = []
        self.valid = 0

    def add(self, addr: int, size: int) -> None:
        super().add(addr, size)
        i = bisect_left(self.addrs, addr)
        self.addrs.insert(i, addr)
        self.bytes.insert(i, size)
        if i < self.valid:
            self.valid = i

    def remove(self, addr: int, size: int) -> None:
        super().remove(addr, size)
        i = bisect_left(self.addrs, addr)
        del self.addrs[i]
        del self.bytes[i]
        if i < self.valid:
            self.valid = i

    def resize(self, addr: int, old: int, new: int) -> None:
        # FreeSizeIndex.remove and add, without the by_end lookups they
        # would undo (the block keeps its address), and its ring place.
        stale = self.stale
        stale[old] = stale.get(old, 0) + 1
        heappush(self.heap, -new)
        self.total += new - old
        by_end = self.by_end
        del by_end[addr + old]
        by_end[addr + new] = new
        i = bisect_left(self.addrs, addr)
        self.bytes[i] = new
        if i < self.valid:
            self.valid = i
        if len(self.heap) > 2 * len(by_end) + 64:
            self.compact()

    def position(self, p: int) -> int:
        """Ring position of free block ``p`` (0 for base)."""
        return 0 if p == BASE else bisect_left(self.addrs, p) + 1

    def first_fit(self, need: int, lo: int, hi: int) -> int:
        """Index of the first block in ``addrs[lo:hi]`` of at least ``need``
        bytes, or -1: a scan in C, not a Python loop (from base, a bisection
        of the running maximum as far as it holds, then the scan)."""
        if not lo:
            return self._first_fit_from_base(need, hi)
        fits = map(need.__le__, islice(self.bytes, lo, hi))
        return next(compress(range(lo, hi), fits), -1)

    def _first_fit_from_base(self, need: int, hi: int) -> int:
        """:meth:`first_fit` of ``addrs[:hi]``: where the running maximum
        reaches ``need``; past where it holds, it is extended block by block
        (in C) while it stays below ``need``, and the block that stops it fits."""
        prefix_max = self.prefix_max
        valid = self.valid
        if valid and prefix_max[valid - 1] >= need:
            i = bisect_left(prefix_max, need, 0, valid)
            return i if i < hi else -1
        del prefix_max[valid:]
        running = accumulate(islice(self.bytes, valid, hi), max, initial=prefix_max[-1] if valid else 0)
        next(running)                   # the initial value, not a block's
        prefix_max.extend(takewhile(need.__gt__, running))
        self.valid = end = len(prefix_max)
        return end if end < hi else -1


class NextFit(Strategy):
    """K&R 8.7 malloc/free on a circular address-ordered free list with a rover."""

    #: dicts and lists of ints only: a copy of the heap copies them without looking (state_copy.py)
    flat_state = Strategy.flat_state + ('size', 'next')
    name = "next-fit"
    #: the event types this policy's records can hold (conditions.py: a condition
    #: on another is answered without a replay)
    makes_events = frozenset({"Coalesce", "Grow", "GrowFailed", "InsertionPoint", "ListInsert",
                              "ListRemove", "Note", "Placed", "PointerMove", "Released", "Split", "Visit",
                              "WalkStep"})
    title = "Next fit, roving pointer (K&R 8.7)"
    citation = "Kernighan & Ritchie, The C Programming Language, 2nd ed., 8.7 (1988)"

    #: K&R moves the rover; first fit (a subclass) always starts from base.
    roving = True
    #: find with the RingIndex instead of walking while no events are recorded
    indexed = True

    params = (
        Param("nalloc", INT, NALLOC, "least number of header units morecore asks sbrk for "
              "(K&R's NALLOC)", low=1, high=1 << 20),
    )

    def __init__(self, *, nalloc: int = NALLOC, **common) -> None:
        super().__init__(**common)
        # sizeof(Header): a pointer plus an unsigned, padded to Align (a long,
        # or whatever larger alignment was asked for).
        self.unit = max(2 * self.word, self.align)
        self.align = self.unit
        self.nalloc = nalloc
        # size in units of every block, free or used, by header address
        self.size: dict[int, int] = {BASE: 0}
        # s.ptr of the free blocks (and base): the circular free list
        self.next: dict[int, int] = {BASE: BASE}
        self.freep = BASE
        self.free_index = RingIndex()   # for the measures, and the walks of bulk replay
        #: end of the last whole unit of a fixed pool (the break otherwise)
        self.pool_end: int | None = None
        if self.arena.fixed:
            self._pool_init()

    def _pool_init(self) -> None:
        """Hand the pool's whole units to free() as one block, as morecore
        hands over what sbrk gave; a pool under one unit stays all META."""
        base = self.arena.base
        units = self.arena.size // self.unit
        self.pool_end = base + units * self.unit
        if units:
            self.size[base] = units
            self._insert_free(base)

    # ------------------------------------------------------------ malloc
    def _malloc(self, nbytes: int) -> int | None:
        unit = self.unit
        size = self.size
        nunits = (nbytes + unit - 1) // unit + 1
        if not self.roving:
            self.freep = BASE
        rec = self.rec
        events = rec.events
        if events is None and self.indexed:
            found = self._search_indexed(nunits)
        else:
            found = self._search(nunits)
        if found is None:
            return None
        prevp, p = found
        psize = size[p]
        if psize == nunits:
            nxt = self.next
            nxt[prevp] = nxt.pop(p)
            self.free_index.remove(p, psize * unit)
            if events is not None:
                events.append(ListRemove(p, psize * unit, ONE_LIST))
        else:
            # Cut the tail: the free block keeps its address and list place.
            rest = psize - nunits
            size[p] = rest
            self.free_index.resize(p, psize * unit, rest * unit)
            taken = p + rest * unit
            size[taken] = nunits
            rec.splits += 1
            if events is not None:
                events.append(Split(p, psize * unit, taken, nunits * unit, p, rest * unit))
            p = taken
        if events is None:
            self.freep = prevp              # _move_rover, with no event to make
        else:
            self._move_rover(prevp)
        payload = p + unit
        self._note_alloc(payload, p, nunits * unit, nbytes, unit)
        if events is not None:
            events.append(Placed(p, nunits * unit, payload, nbytes))
        return payload

    def _search(self, nunits: int) -> tuple[int, int] | None:
        """K&R's search: from the block after the rover round the ring, the
        first block of at least ``nunits``, with the block before it; on
        coming back to the rover, morecore, and on.  None if sbrk fails."""
        unit = self.unit
        size = self.size
        nxt = self.next
        prevp = self.freep
        p = nxt[prevp]
        while True:
            psize = size[p]
            if p != BASE:
                self._visit(p, psize * unit, psize >= nunits)
            if psize >= nunits:
                return prevp, p
            if p == self.freep:
                # Wrapped round the whole list: ask the system for more.
                p = self._morecore(nunits)
                if p is None:
                    return None
            prevp = p
            p = nxt[p]

    def _search_indexed(self, nunits: int) -> tuple[int, int] | None:
        """:meth:`_search` by ranks: the blocks it examines are the ring from
        the rover's successor round to the rover itself, so the first fit is
        a scan of the sizes, and the search length the blocks before it."""
        index = self.free_index
        addrs, sizes = index.addrs, index.bytes
        need = nunits * self.unit
        rec = self.rec
        while True:
            n = len(addrs)
            freep = self.freep
            r = 0 if freep == BASE else bisect_left(addrs, freep) + 1     # index.position(freep)
            if r < n and sizes[r] >= need:     # the rover's successor fits: the common case
                i = r
            else:
                i = index.first_fit(need, r, n)
            if i >= 0:
                rec.visits += i - r + 1
            else:
                i = index.first_fit(need, 0, r)
                if i >= 0:
                    rec.visits += n - r + i + 1
            if i >= 0:
                return (addrs[i - 1] if i else BASE), addrs[i]
            rec.visits += n            # every block, the rover last, and none fits
            if self._morecore(nunits) is None:
                return None

    def _morecore(self, nunits: int) -> int | None:
        nu = max(nunits, self.nalloc)
        cp = self.arena.sbrk(nu * self.unit)
        if cp is None:
            self._event(GrowFailed(nu * self.unit))
            return None
        self.rec.grows += 1
        self._event(Grow(cp, nu * self.unit))
        self.size[cp] = nu
        self._insert_free(cp)
        return self.freep

    # -------------------------------------------------------------- free
    def _free(self, payload: int) -> None:
        lb = self._note_free(payload)
        bp = lb.block_addr
        if self.rec.events is not None:
            self._event(Released(bp, lb.block_size))
        if not self.roving:
            self.freep = BASE
        self._insert_free(bp)

    def _insert_free(self, bp: int) -> None:
        """K&R's free() body: find the address-ordered place, join neighbours.
        The free size index is told only the outcome: the upper neighbour
        gone, the lower one grown, or the new block, of its joined size."""
        size = self.size
        nxt = self.next
        unit = self.unit
        rec = self.rec
        events = rec.events
        # A free's walk is its search length (Visit events, numbered by the
        # map); inside malloc (morecore) it is work, but not part of the search
        # that malloc's view numbers (WalkStep events).
        is_search = rec.kind == FREE
        if events is None and self.indexed:
            p, walked = self._place_indexed(bp)
        else:
            p, walked = self._place(bp, is_search)
        if is_search:
            rec.visits += walked
        else:
            rec.walked += walked
        index = self.free_index
        bsize = size[bp] * unit
        q = nxt[p]
        if events is not None:
            events.append(InsertionPoint(bp, bsize, self._pointer_addr(p), self._pointer_addr(q)))
        if bp + bsize == q:      # join to the upper neighbour: bp takes q's place
            rec.merges += 1
            qsize = size[q] * unit
            if events is not None:
                events.append(ListRemove(q, qsize, ONE_LIST))
                events.append(Coalesce(bp, bsize, q, qsize))
            index.remove(q, qsize)
            bsize += qsize
            size[bp] += size.pop(q)
            nxt[bp] = nxt.pop(q)
        else:
            nxt[bp] = q
        if p != BASE and p + size[p] * unit == bp:   # join to the lower neighbour: bp is never linked
            rec.merges += 1
            psize = size[p] * unit
            if events is not None:
                events.append(Coalesce(p, psize, bp, bsize))
            index.resize(p, psize, psize + bsize)
            size[p] += size.pop(bp)
            nxt[p] = nxt.pop(bp)
        else:
            index.add(bp, bsize)
            nxt[p] = bp
            if events is not None:
                events.append(ListInsert(bp, bsize, ONE_LIST))
        if events is None:
            self.freep = p                  # _move_rover, with no event to make
        else:
            self._move_rover(p)

    def _place(self, bp: int, is_search: bool) -> tuple[int, int]:
        """K&R free()'s walk from the rover: the free block after which ``bp``
        goes (base if none is below it), and the blocks passed to get there.
        A free's walk is its search (Visit events, numbered by the map);
        inside malloc (morecore) it is work (WalkStep events)."""
        size = self.size
        nxt = self.next
        unit = self.unit
        events = self.rec.events
        p = self.freep
        walked = 0
        while not (p < bp < nxt[p]):
            # p is the highest free block and bp lies past it or before the lowest.
            if p >= nxt[p] and (bp > p or bp < nxt[p]):
                break
            p = nxt[p]
            if p != BASE:
                walked += 1
                if events is not None:
                    stop = p < bp < nxt[p] or (p >= nxt[p] and (bp > p or bp < nxt[p]))
                    events.append(Visit(p, size[p] * unit, stop, True) if is_search
                                  else WalkStep(p, size[p] * unit, stop))
        return p, walked

    def _place_indexed(self, bp: int) -> tuple[int, int]:
        """:meth:`_place` by ranks: the walk ends at the highest free block
        below ``bp`` (base if none), having passed the ring positions from the
        rover's to that one's, base not counted."""
        addrs = self.free_index.addrs
        freep = self.freep
        r = 0 if freep == BASE else bisect_left(addrs, freep) + 1     # index.position(freep)
        j = bisect_left(addrs, bp)            # the place's ring position
        if j >= r:
            walked = j - r
        else:                                 # round the end, past base
            walked = len(addrs) - r + j
        return (addrs[j - 1] if j else BASE), walked

    def _move_rover(self, new: int) -> None:
        if new != self.freep and self.roving and self.rec.events is not None:
            self._event(PointerMove("rover", self._pointer_addr(self.freep), self._pointer_addr(new)))
        self.freep = new

    @staticmethod
    def _pointer_addr(p: int) -> int | None:
        return None if p == BASE else p

    # ----------------------------------------------------------- explain
    def explain_event(self, e) -> str | None:
        """K&R's words: ``p``, ``bp``, ``freep``, ``nunits``, ``base``."""
        unit = self.unit
        if isinstance(e, Visit):
            if e.place:
                return f"free walk: p = {e.addr:#x} ({e.size} B)" + (": bp goes right after it" if e.fits else "")
            verdict = "p->s.size >= nunits: it fits" if e.fits else "too small"
            return f"p = {e.addr:#x}: {e.size // unit} units ({e.size} B): {verdict}"
        if isinstance(e, WalkStep):
            return (f"morecore's free walk: p = {e.addr:#x} ({e.size} B)"
                    + (": the new block goes right after it" if e.stop else ""))
        if isinstance(e, InsertionPoint):
            if e.prev is None and e.next is None:
                return f"free walk: the list is empty: bp = {e.addr:#x} is its only block"
            if e.prev is None:
                return f"free walk: bp = {e.addr:#x} < {e.next:#x}, the lowest free block: insert at the start"
            if e.next is None:
                return f"free walk: bp = {e.addr:#x} > {e.prev:#x}, the highest free block: insert at the end"
            return f"free walk: {e.prev:#x} < bp = {e.addr:#x} < {e.next:#x}: insert here"
        if isinstance(e, Split):
            return (f"allocate the tail end: {e.addr:#x} keeps {e.rest_size // unit} units ({e.rest_size} B); "
                    f"the block is {e.taken_addr:#x} ({e.taken_size} B)")
        if isinstance(e, PointerMove) and e.name == "rover":
            return f"freep = {'&base' if e.new is None else f'{e.new:#x}'}"
        if isinstance(e, Grow):
            return (f"morecore: sbrk({e.increment}) = {e.old_brk:#x} ({e.increment // unit} units); "
                    "free() puts the new block on the list")
        if isinstance(e, ListInsert):
            return f"linked {e.addr:#x} ({e.size} B) into the free list"
        if isinstance(e, ListRemove):
            return f"unlinked {e.addr:#x} ({e.size} B) from the free list"
        if isinstance(e, Coalesce):
            return (f"joined {e.low_addr:#x} ({e.low_size} B) and its upper neighbour "
                    f"{e.high_addr:#x} ({e.high_size} B): {e.size} B")
        if isinstance(e, Released):
            return f"free: bp = {e.addr:#x}, a block of {e.size // unit} units ({e.size} B)"
        if isinstance(e, Placed):
            return (f"return p+1: block {e.addr:#x} ({e.size // unit} units) for {e.request} B, "
                    f"payload {e.payload:#x}")
        return None

    def explain_events(self, events: list) -> list[str | None]:
        """K&R's words for the steps whose meaning depends on the walk before
        them: an exact fit's unlink, free()'s joins to the upper and lower
        neighbour, the link ``p->s.ptr = bp``, and which ``freep = ...``."""
        out: list[str | None] = []
        place = None          # the InsertionPoint of the free() under way
        for e in events:
            text = None
            if isinstance(e, InsertionPoint):
                place = e
            elif isinstance(e, (Grow, Placed)) or (isinstance(e, Visit) and not e.place):
                place = None
            elif place is not None:
                if isinstance(e, ListRemove):
                    text = f"the upper nbr {e.addr:#x} ({e.size} B) is free: it leaves the list"
                elif isinstance(e, Coalesce):
                    if e.high_addr == place.addr:
                        text = (f"join to lower nbr: p = {e.low_addr:#x} absorbs bp: "
                                f"{e.size} B at {e.low_addr:#x}; bp is not linked")
                    else:
                        text = (f"join to upper nbr: bp = {e.low_addr:#x} absorbs {e.high_addr:#x}: "
                                f"{e.size} B")
                elif isinstance(e, ListInsert):
                    after = "&base" if place.prev is None else f"{place.prev:#x}"
                    text = f"p->s.ptr = bp: {e.addr:#x} ({e.size} B) linked after {after}"
                elif isinstance(e, PointerMove) and e.name == "rover":
                    text = f"freep = p = {'&base' if e.new is None else f'{e.new:#x}'}"
            if text is None and place is None:
                if isinstance(e, ListRemove):
                    text = f"exact fit: p = {e.addr:#x} ({e.size} B) unlinked: prevp->s.ptr = p->s.ptr"
                elif isinstance(e, PointerMove) and e.name == "rover":
                    text = f"freep = prevp = {'&base' if e.new is None else f'{e.new:#x}'}"
            out.append(text or self.explain_event(e))
        return out

    # ------------------------------------------------------------- views
    @property
    def rover(self) -> int | None:
        """Header address of the block the rover points at; None when it is at base."""
        return self._pointer_addr(self.freep)

    def structure(self) -> dict:
        """K&R's ring: the free blocks after ``base`` (address order) and the rover."""
        ring = self.free_list()
        unit, size = self.unit, self.size
        pointers = [structure.pointer("rover", self.rover)] if self.roving else []
        return structure.make("address-ring", {a: size[a] * unit for a in ring}, pointers=pointers,
                              free_list=ring, rover=self.rover if self.roving else None)

    def free_list(self) -> list[int]:
        """Free block addresses in list order, starting after base."""
        out = []
        p = self.next[BASE]
        while p != BASE:
            out.append(p)
            p = self.next[p]
        return out

    def fragmentation_probe(self) -> tuple[int, int, int, int]:
        return self.free_index.probe(self.arena.brk)

    def measure_row(self, rec) -> tuple:
        """The build's row (:data:`ROW_FIELDS`) through the free size index's
        probe, looked up once, and the counters K&R adds to; a subclass with
        a probe of its own gets the default row.  It holds the index of now:
        a bulk replay's lifetime."""
        if type(self).fragmentation_probe is not NextFit.fragmentation_probe:
            return super().measure_row(rec)
        s = self
        arena = self.arena
        fixed = arena.fixed
        probe = self.free_index.probe
        pack = _ROW.pack_into

        def row(buf, off, live_bytes, payload):
            brk = arena.brk
            free, _, top, below = probe(brk)
            pack(buf, off, s.touched_high - s.touched_low if fixed else brk, live_bytes,
                 s.in_use, s.header_in_use, free, top, below,
                 rec.visits, rec.splits, rec.merges, rec.grows, rec.walked, payload)
        return ROW_FIELDS, row

    def free_blocks(self) -> Iterator[tuple[int, int]]:
        unit = self.unit
        for addr in self.next:
            if addr != BASE:
                yield addr, self.size[addr] * unit

    def _blocks(self):
        unit = self.unit
        nxt = self.next
        for addr in sorted(self.size):
            if addr == BASE:
                continue
            if addr in nxt:
                yield addr, self.size[addr] * unit, FREE_BLOCK, None
            else:
                yield addr, self.size[addr] * unit, USED, addr + unit
        if self.pool_end is not None and self.pool_end < self.arena.brk:
            yield self.pool_end, self.arena.brk - self.pool_end, META, None

    def _policy_signature(self) -> tuple:
        return (self.freep, tuple(self.free_list()))

    # ------------------------------------------------------------- check
    def _check_structure(self, blocks: list[Block]) -> None:
        fail = self._fail
        if self.size.get(BASE) != 0:
            fail(False, "base header must have size 0")
        # Walk the ring by hand, bounded, so a cycle that skips base cannot hang check().
        nxt = self.next
        ring = []
        p = nxt[BASE]
        while p != BASE and len(ring) < len(nxt):
            ring.append(p)
            p = nxt.get(p, BASE)
        if len(ring) != len(nxt) - 1:
            fail(False, f"free list ring reaches {len(ring)} blocks but {len(nxt) - 1} are linked "
                        "(a cycle that skips base, or a lost block)")
        if any(a >= b for a, b in zip(ring, ring[1:])):
            fail(False, f"free list is not in address order: {ring[:8]}")
        free_blocks = [b for b in blocks if b[2] == FREE_BLOCK]
        free_addrs = [b[0] for b in free_blocks]
        if free_addrs != ring:
            fail(False, f"free blocks in the heap {free_addrs[:8]} differ from the free list {ring[:8]}")
        previous_free = False
        pool_end = self.pool_end
        for b in blocks:
            if b[2] == META:
                if pool_end is None or b[0] != pool_end or b[1] >= self.unit:
                    fail(False, f"META block {b[0]:#x}+{b[1]} is not the part of a fixed pool "
                                "too small for a unit")
                continue
            is_free = b[2] == FREE_BLOCK
            if is_free and previous_free:
                fail(False, f"free neighbours ending at {b[0]:#x} and starting there were not joined")
            previous_free = is_free
            if b[1] % self.unit:
                fail(False, f"block {b[0]:#x} size {b[1]} is not a whole number of units")
            if (b[0] - self.arena.base) % self.unit:
                fail(False, f"block {b[0]:#x} does not start on a {self.unit}-byte unit boundary")
        if not (self.freep == BASE or self.freep in nxt):
            fail(False, f"rover {self.freep:#x} points at a block that is not free")
        index = self.free_index
        if index.addrs != ring or index.bytes != [b[1] for b in free_blocks]:
            fail(False, f"ring index {index.addrs[:8]} {index.bytes[:8]} does not match the ring "
                        f"{ring[:8]} and its sizes")
        held = index.prefix_max[:index.valid]
        if index.valid > len(index.bytes) or held != list(accumulate(index.bytes[:index.valid], max)):
            fail(False, f"ring index's running maximum {held[:8]} (valid {index.valid}) is not that of "
                        f"the sizes {index.bytes[:8]}")
        free_sizes = sorted(b[1] for b in free_blocks)
        if list(index.sizes) != free_sizes or index.total != sum(free_sizes):
            fail(False, f"free size index {list(index.sizes)[:8]} (total {index.total}) does not match "
                        f"the free blocks {free_sizes[:8]} (total {sum(free_sizes)})")
