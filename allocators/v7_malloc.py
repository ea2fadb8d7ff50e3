"""The V7 / 4BSD malloc: one circular list of *all* blocks, busy and free,
searched first fit from a roving pointer and coalesced lazily while it is
searched.  This is the "normal 4bsd" malloc of seed 002 (Mark Plotnick, "In
Search Of... fast malloc", 1983), the one that took 101.5 s where Kingsley's
Caltech buckets took 2.3 s.

Read: Seventh Edition Unix, ``/usr/src/libc/gen/malloc.c`` (1979), as kept in
Diomidis Spinellis's unix-history-repo (file read at commit 272e975e); 32V and
4.1BSD ship the same algorithm.  Its own summary: "circular first-fit
strategy ... each block is preceded by a ptr to the (pointer of) the next
following block ... bit in ptr is 1 for busy, 0 for idle ... gaps in arena are
merely noted as busy blocks ... last block of arena (pointed to by alloct) is
empty and has a pointer to first ... idle blocks are coalesced during space
search".  The code here is our own.

The original, rule by rule:

* **Words.** ``union store`` is one pointer (``WORD``, 4 bytes on the VAX; 8 on
  LP64), padded to ``ALIGN``.  A request of ``nbytes`` takes
  ``nw = (nbytes + 2*WORD - 1) / WORD`` words: the payload rounded up, plus the
  link word in front (Plotnick: "the 4bsd versions actually allocate space in
  chunks of size m+4 bytes").
* **The arena** is the ring of every block in address order: each block's
  first word is the address of the next block, with the low bit set when the
  block is busy.  It starts as two static words, ``allocs[0]`` and
  ``allocs[1]``, which point at each other, busy.  ``alloct``, the top, is the
  last block: one word pointing back to ``allocs``, busy.
* **malloc** starts at ``allocp``.  At a free block it first absorbs every free
  block that follows (``p->ptr = q->ptr``), then takes it if it now holds
  ``nw`` words; otherwise it steps to the next block, busy or not.  Passing
  the top back to ``allocs`` a second time means the whole arena was looked
  at: it asks ``sbrk`` for ``((nw + BLOCK/WORD) / (BLOCK/WORD)) * (BLOCK/WORD)``
  words (BLOCK = 1024 bytes), hangs them after the old top (a busy gap link
  when not contiguous: the first time, from the static ``allocs[1]``), makes
  them one free block and a new top word, and **searches again from
  ``allocs``**: a full pass over every block, which is what made Plotnick's
  benchmark quadratic.
* **Placing** cuts the block: the request takes the front ``nw`` words, the rest
  stays free after it, and ``allocp`` points past the block handed out (at the
  rest, or at the next block when it fitted exactly).
* **free** only clears the busy bit and sets ``allocp`` to the block ("freeing
  strategy tuned for LIFO allocation"): no search, no merge.
* **realloc** frees the block, then mallocs; the search starting at the freed
  block absorbs the free blocks after it, so the block often grows or shrinks
  where it is (``q == p``), else the data is copied.

Deviations (each also on ``docs/strategies/v7-malloc.md``):

* The static ``allocs`` words live outside the heap (in the program's data):
  they are not in ``walk()`` and the search does not count them; every block
  of the heap the search stands on counts, busy ones and the top word
  included (``Visit`` with ``busy=True``).  The blocks a free block absorbs
  count as merges, not visits.
* ``align`` above the word pads ``union store`` to it, as raising ``ALIGN``
  would: the word unit W becomes ``max(word, align)``.  ``block`` below W is
  taken as one W (``BLOCK/WORD`` would be 0).
* A realloc whose malloc fails keeps its block, as C requires and the replay
  relies on: V7 had already freed it, so we mark it busy again at its old
  size (cutting it out of a free block the failed search may have merged it
  into).  V7's ``allocx`` word restore after an overlapping copy moves data
  only and is not simulated.
* A search that ends in a failed ``sbrk`` may have absorbed the block
  ``allocp`` points at (V7 would start the next search from that stale
  word, inside a larger block): we move ``allocp`` to the block that
  absorbed it.
* The pdp11's ``GRANULE`` (0 elsewhere) and the ``q+temp < q`` overflow test
  are left out.
* In a fixed pool, ``sbrk`` carves the pool from its bottom; the part not
  carved yet is one free block outside the arena.

Search length: blocks of the heap the search stood on, busy or free.  Work
adds the merges and the split.
"""

from __future__ import annotations

import struct
from typing import Iterator

from . import structure
from .events import (ArenaExtended, Coalesce, Grow, Note, Placed, PointerMove, Released, Split,
                     Visit)
from .free_index import FreeSizeIndex
from .params import SIZE, MAX_CHUNK, Param
from .strategy import FREE_BLOCK, META, USED, Block, Strategy
from .strategy_measures import probed_row_writer

#: V7's BLOCK: the least sbrk, in bytes
BLOCK = 1024
BUSY = 1
#: the build's row of measures (V7Malloc.measure_row): no largest_free (the
#: max of the two after it) nor the rotations and walked it never adds to
ROW_FIELDS = ("heap", "live", "in_use", "headers", "free", "top_free", "largest_below_top",
              "visits", "splits", "merges", "grows", "payload")
_ROW = struct.Struct(f"<{len(ROW_FIELDS)}q")


class V7Malloc(Strategy):
    """Seventh Edition Unix malloc.c: first fit on the ring of all blocks,
    roving ``allocp``, lazy coalescing during the search."""

    #: dicts and lists of ints only: a copy of the heap copies them without looking (state_copy.py)
    flat_state = Strategy.flat_state + ('link',)
    name = "v7-malloc"
    #: the event types this policy's records can hold (conditions.py: a condition
    #: on another is answered without a replay)
    makes_events = frozenset({"ArenaExtended", "Coalesce", "Grow", "GrowFailed", "Note", "Placed",
                              "PointerMove", "Released", "Shrink", "Split", "Visit"})
    title = "V7/4BSD malloc: first fit on a ring of all blocks, roving allocp"
    citation = "Seventh Edition Unix, /usr/src/libc/gen/malloc.c (1979); 4.1BSD libc"
    search_unit = ("block", "blocks")

    params = (
        Param("block", SIZE, BLOCK, "least sbrk in bytes: growth is a whole number of blocks "
              "(V7's BLOCK)", low=16, high=MAX_CHUNK, power_of_two=True),
    )

    def __init__(self, *, block: int = BLOCK, **common) -> None:
        super().__init__(**common)
        # sizeof(union store): a pointer padded to ALIGN
        self.unit = max(self.word, self.align)
        self.align = self.unit
        self.block = block
        self.blockw = max(1, block // self.unit)       # BLOCK/WORD
        W = self.unit
        #: the static words allocs[0] and allocs[1], in the program's data
        #: below the heap (not next to it: the first sbrk leaves a gap)
        self.allocs0 = self.arena.base - 4 * W
        self.allocs1 = self.arena.base - 3 * W
        #: each block's first word: the next block's address | BUSY
        self.link: dict[int, int] = {self.allocs0: self.allocs1 | BUSY,
                                     self.allocs1: self.allocs0 | BUSY}
        self.alloct = self.allocs1
        self.allocp = self.allocs0
        self.free_index = FreeSizeIndex()     # for the measures only

    # ---------------------------------------------------------- helpers
    def in_heap(self, a: int) -> bool:
        return a >= self.arena.base

    def _pointer(self, a: int) -> int | None:
        """An arena address as the structure names it: None for the static words."""
        return a if a >= self.arena.base else None

    def _move_allocp(self, new: int) -> None:
        old = self.allocp
        if new != old and self.rec.events is not None:
            self._event(PointerMove("allocp", self._pointer(old), self._pointer(new)))
        self.allocp = new

    # ------------------------------------------------------------ malloc
    def _malloc(self, nbytes: int) -> int | None:
        W = self.unit
        nw = (nbytes + W + W - 1) // W
        need = nw * W
        link = self.link
        base = self.arena.base
        rec = self.rec
        events = rec.events
        index_add = self.free_index.add
        index_remove = self.free_index.remove
        p = self.allocp
        while True:
            temp = 0
            # The static words allocs[0] and allocs[1] do not count: a search
            # starting at allocs[0] steps on both before the heap, and so does
            # each pass back to allocs (below), so each busy step counts and
            # these two are taken off.
            visits = -2 if p < base else 0
            while True:
                lp = link[p]
                if lp & 1:              # testbusy(p->ptr): BUSY is the low bit
                    visits += 1
                    nxt = lp - 1
                    if events is not None and p >= base:
                        events.append(Visit(p, (nxt if nxt >= base else p + W) - p, False, busy=True))
                    if nxt > p:
                        p = nxt
                        continue
                    # the top's link leads back to allocs: once, then twice
                    p = nxt
                    temp += 1
                    if temp > 1:
                        break
                    visits -= 2
                    continue
                q = lp
                lq = link[q]
                merged = not lq & 1
                if merged:
                    # p's entry in the free index is made again once, after its last merge
                    index_remove(p, q - p)
                    while True:
                        # absorb the free block q: p->ptr = q->ptr
                        index_remove(q, lq - q)
                        rec.merges += 1
                        if events is not None:
                            events.append(Coalesce(p, q - p, q, lq - q))
                        del link[q]
                        if q == self.allocp:
                            # only a search that fails leaves allocp here
                            self._move_allocp(p)
                        q = lq
                        lq = link[q]
                        if lq & 1:
                            break
                    link[p] = q
                visits += 1
                fits = q - p >= need
                if events is not None:
                    events.append(Visit(p, q - p, fits))
                if fits:
                    rec.visits += visits
                    if not merged:
                        index_remove(p, q - p)
                    return self._place(p, q, nw, nbytes)
                if merged:
                    index_add(p, q - p)
                p = q
            rec.visits += visits
            if not self._extend(nw):
                return None
            # ... and the search starts again from allocs: p is allocs[0] here

    def _place(self, p: int, q: int, nw: int, nbytes: int) -> int:
        """found: the request takes the front nw words of the free block p..q
        (already out of the free index)."""
        W = self.unit
        rec = self.rec
        events = rec.events
        split_at = p + nw * W
        if q > split_at:
            self.link[split_at] = q
            self.free_index.add(split_at, q - split_at)
            rec.splits += 1
            if events is not None:
                events.append(Split(p, q - p, p, nw * W, split_at, q - split_at))
        self.link[p] = split_at | BUSY
        if events is not None:
            self._move_allocp(split_at)
        else:
            self.allocp = split_at
        payload = p + W
        self._note_alloc(payload, p, nw * W, nbytes, W)
        if events is not None:
            events.append(Placed(p, nw * W, payload, nbytes))
        return payload

    def _extend(self, nw: int) -> bool:
        """Ask sbrk for whole BLOCKs, more than nw words, and hang them after alloct."""
        W = self.unit
        bw = self.blockw
        temp = ((nw + bw) // bw) * bw
        q = self._take_core(temp * W)
        if q is None:
            return False
        link = self.link
        old_top = self.alloct
        contiguous = q == old_top + W
        # alloct->ptr = q, marked busy when there is a gap (the static top the first time)
        link[old_top] = q if contiguous else q | BUSY
        if contiguous:
            self.free_index.add(old_top, W)
        top = q + (temp - 1) * W
        link[q] = top
        link[top] = self.allocs0 | BUSY
        self.alloct = top
        self.free_index.add(q, top - q)
        self._emit(ArenaExtended, old_top if contiguous else None, q, top - q, top, W)
        return True

    # -------------------------------------------------------------- free
    def _free(self, payload: int) -> None:
        lb = self._note_free(payload)
        p = lb.block_addr
        self.link[p] &= ~BUSY
        self.free_index.add(p, lb.block_size)
        if self.rec.events is not None:
            self._event(Released(p, lb.block_size))
            self._move_allocp(p)
        else:
            self.allocp = p

    def _realloc(self, payload: int, nbytes: int) -> int | None:
        """V7 realloc: free, then malloc (the search starts at the freed block,
        so it may stay where it is, grown into the free blocks after it)."""
        lb = self.live[payload]
        self._free(payload)
        new = self._malloc(nbytes)
        if new is None:
            self._take_back(lb.block_addr, lb.block_size, lb.request)
        return new

    def _take_back(self, p: int, size: int, request: int) -> None:
        """A failed realloc keeps its block: mark [p, p+size) busy again,
        cutting it out of the free block that now holds it."""
        W = self.unit
        link = self.link
        index = self.free_index
        r = self._block_holding(p)
        end = link[r]
        assert not end & BUSY and r <= p and p + size <= end
        index.remove(r, end - r)
        if r < p:
            link[r] = p
            index.add(r, p - r)
            self.rec.splits += 1
            self._emit(Split, r, end - r, p, end - p, r, p - r)
        if p + size < end:
            link[p + size] = end
            index.add(p + size, end - p - size)
            self.rec.splits += 1
            self._emit(Split, p, end - p, p, size, p + size, end - p - size)
        link[p] = (p + size) | BUSY
        self._note_alloc(p + W, p, size, request, W)
        self._emit(Placed, p, size, p + W, request)
        self._emit(Note, "realloc failed: the old block is kept (V7 had already freed it)")

    def _block_holding(self, a: int) -> int:
        p = self.arena.base
        link = self.link
        while True:
            nxt = link[p] & ~BUSY
            if p <= a < nxt:
                return p
            p = nxt

    # ----------------------------------------------------------- explain
    def explain_event(self, e) -> str | None:
        """V7's words: ``p``, ``q``, ``p->ptr``, ``allocp``, ``alloct``, ``testbusy``."""
        W = self.unit
        if isinstance(e, Visit):
            if e.busy:
                return f"p = {e.addr:#x}: testbusy(p->ptr): busy ({e.size} B): on to p->ptr"
            verdict = f"q >= p+nw: it fits" if e.fits else "too small: on to q"
            return f"p = {e.addr:#x} is idle: {e.size // W} words up to q ({e.size} B): {verdict}"
        if isinstance(e, Coalesce):
            return (f"q = {e.high_addr:#x} is idle too: p->ptr = q->ptr: {e.low_addr:#x} now spans "
                    f"{e.size} B")
        if isinstance(e, Split):
            return (f"allocp = p+nw = {e.rest_addr:#x}; allocp->ptr = p->ptr: the rest "
                    f"({e.rest_size} B) stays idle")
        if isinstance(e, Placed):
            return (f"p->ptr = setbusy(allocp): block {e.addr:#x} ({e.size // W} words) for "
                    f"{e.request} B; return p+1 = {e.payload:#x}")
        if isinstance(e, Released):
            return f"free: p = {e.addr:#x}; p->ptr = clearbusy(p->ptr): idle, not merged"
        if isinstance(e, PointerMove) and e.name == "allocp":
            return f"allocp = {'&allocs[0]' if e.new is None else f'{e.new:#x}'}"
        if isinstance(e, Grow):
            return f"the whole arena was searched twice: sbrk({e.increment}) = {e.old_brk:#x}"
        if isinstance(e, ArenaExtended):
            link = ("the static allocs[1] -> q, marked busy: the gap below the heap"
                    if e.old_top is None else f"alloct = {e.old_top:#x} -> q: an idle word")
            return (f"{link}; q = {e.addr:#x} idle ({e.size} B); alloct = {e.top:#x} -> allocs; "
                    "search again from allocs")
        return None

    def explain_events(self, events: list) -> list[str | None]:
        """The busy block a search passes just before it comes back to
        ``allocs`` is the top word: said so."""
        out = [self.explain_event(e) for e in events]
        for i, e in enumerate(events):
            if isinstance(e, Visit) and e.busy:
                after = events[i + 1] if i + 1 < len(events) else None
                wraps = not isinstance(after, (Visit, Coalesce)) or \
                    (isinstance(after, Visit) and after.addr < e.addr) or \
                    (isinstance(after, Coalesce) and after.low_addr < e.addr)
                if wraps:
                    out[i] = (f"p = {e.addr:#x}: the top word alloct, busy: p->ptr leads back to "
                              "allocs")
        return out

    # ------------------------------------------------------------- views
    def ring(self) -> list[tuple[int, int, str]]:
        """The arena's blocks in ring order from the heap's first block to
        ``alloct``: (addr, size, 'busy' | 'free' | 'top')."""
        out = []
        base = self.arena.base
        if self.alloct < base:
            return out
        link = self.link
        p = base
        top = self.alloct
        while p != top:
            lp = link[p]
            nxt = lp & ~BUSY
            out.append((p, nxt - p, "busy" if lp & BUSY else "free"))
            p = nxt
        out.append((top, self.unit, "top"))
        return out

    def structure(self) -> dict:
        """The ring of all blocks (kind ``arena-ring``), ``allocp`` and ``alloct``."""
        ring = self.ring()
        sizes = {a: s for a, s, st in ring if st == "free"}
        apart = []
        reserve = self.arena.brk - self.core_top
        if reserve:
            sizes[self.core_top] = reserve
            apart.append(structure.outside(self.core_top, "the pool not carved by sbrk yet"))
        rover = self._pointer(self.allocp)
        top = self._pointer(self.alloct)
        return structure.make("arena-ring", sizes, outside_blocks=apart,
                              pointers=[structure.pointer("allocp", rover)],
                              ring=[[a, s, st] for a, s, st in ring], rover=rover, top=top)

    def free_blocks(self) -> Iterator[tuple[int, int]]:
        link = self.link
        for p, lp in link.items():
            if not lp & BUSY:
                yield p, lp - p
        reserve = self.arena.brk - self.core_top
        if reserve:
            yield self.core_top, reserve

    def fragmentation_probe(self) -> tuple[int, int, int, int]:
        """From the running free-size index (:meth:`_probe`)."""
        return self._probe()()

    def _probe(self):
        """The fragmentation probe, its containers bound once (see
        :func:`~heapscope.allocators.strategy_measures.probed_row_writer`): the
        free-size index, and in a fixed pool the part not carved yet, a free
        block at the break.  (With sbrk, the carved core ends at the break.)"""
        index_probe = self.free_index.probe
        arena = self.arena
        if not arena.fixed:
            def probe():
                return index_probe(arena.brk)
            return probe
        s = self

        def probe():
            brk = arena.brk
            total, largest, top, below = index_probe(brk)
            reserve = brk - s.core_top
            if reserve:
                return total + reserve, max(largest, reserve), reserve, largest
            return total, largest, top, below
        return probe

    def measure_row(self, rec) -> tuple:
        """The build's row through this policy's own probe and counters
        (:func:`~heapscope.allocators.strategy_measures.probed_row_writer`); a subclass
        gets the default row."""
        if type(self) is not V7Malloc:
            return super().measure_row(rec)
        return ROW_FIELDS, probed_row_writer(self, rec, _ROW, joins=True)

    def _blocks(self):
        W = self.unit
        for a, s, st in self.ring():
            if st == "busy":
                yield a, s, USED, a + W
            elif st == "free":
                yield a, s, FREE_BLOCK, None
            else:
                yield a, s, META, None
        if self.core_top < self.arena.brk:
            yield self.core_top, self.arena.brk - self.core_top, FREE_BLOCK, None

    def _policy_signature(self) -> tuple:
        return (self.allocp, self.alloct)

    # ------------------------------------------------------------- check
    def _check_structure(self, blocks: list[Block]) -> None:
        fail = self._fail
        W = self.unit
        link = self.link
        base = self.arena.base
        # The ring from allocs[0]: the static words, then the heap in address order.
        fail(link[self.allocs0] == self.allocs1 | BUSY, "allocs[0] does not point at allocs[1], busy")
        heap_started = self.alloct >= base
        first = link[self.allocs1]
        if heap_started:
            fail(first == base | BUSY, f"allocs[1] does not lead to the heap's first block, busy "
                                       f"(it holds {first:#x})")
        else:
            fail(first == self.allocs0 | BUSY and self.alloct == self.allocs1,
                 "before the first sbrk the arena must be allocs[0] <-> allocs[1]")
        fail(link[self.alloct] == self.allocs0 | BUSY, "the top word alloct does not point back to allocs")
        ring = self.ring()
        fail(len(ring) + 2 == len(link), f"the ring reaches {len(ring)} heap blocks but {len(link) - 2} "
                                        "headers are linked (a lost block)")
        if heap_started:
            fail(self.alloct + W == self.core_top, f"the top word {self.alloct:#x} is not the last word "
                                                   f"carved ({self.core_top:#x})")
        on_ring = {a for a, _, _ in ring} | {self.allocs0, self.allocs1}
        fail(self.allocp in on_ring, f"allocp {self.allocp:#x} is not a block of the arena")
        walked = [b for b in blocks if b.addr < self.core_top]
        fail([(b.addr, b.size) for b in walked] == [(a, s) for a, s, _ in ring],
             "walk() and the ring disagree")
        for a, s, st in ring:
            if s % W or (a - base) % W:
                fail(False, f"block {a:#x} of {s} bytes is not whole {W}-byte words")
        for b in blocks:
            if b.state == USED and (b.payload != b.addr + W or b.header != W):
                fail(False, f"used block {b.addr:#x}: payload {b.payload:#x} is not one word in")
        free_sizes = sorted(s for _, s, st in ring if st == "free")
        index = self.free_index
        if list(index.sizes) != free_sizes:
            fail(False, f"free size index {list(index.sizes)[:8]} does not match the idle blocks "
                        f"{free_sizes[:8]}")
