"""Segregated free lists searched first fit: the policy seed 004 says BSA uses.

Seed 004 (E. Coppa, "Adaptive allocators", Sapienza 2010) compares TLSF with
BSA, a student allocator written for the CS:APP malloc lab, and says only that
"BSA uses a first-fit policy" over segregated lists.  That is not enough to
copy BSA, so this is a classic published design of that policy, named for what
it is:

* R. E. Bryant and D. R. O'Hallaron, *Computer Systems: A Programmer's
  Perspective* (CS:APP, 2003; 2nd ed. 2010), section 9.9.14, "Segregated
  Fits": "an array of free lists ... each free list is associated with a size
  class ... we determine the size class of the request and do a first-fit
  search of the appropriate free list for a block that fits.  If we find one,
  then we (optionally) split it and insert the fragment in the appropriate
  free list.  If we cannot find a block that fits, then we search the free
  list for the next larger size class. ... If none of the free lists yields a
  block that fits, then we request additional heap memory ... To free a
  block, we coalesce and place the result on the appropriate free list."
  Size classes by powers of two as its example: {1}, {2}, {3,4}, {5-8}, ...,
  {1025-2048}, {2049-4096}, {4097-inf} (here in bytes of whole blocks).
* The same book's heap layout and boundary tags (9.9.11-9.9.12, after Knuth's
  boundary tags, TAOCP 1, 2.5): every block has a one-word header and an
  identical footer (size, allocated bit); an alignment word, a prologue block
  (header and footer, allocated) and an epilogue header (size 0, allocated)
  frame the blocks, so coalescing needs no edge cases; ``extend_heap`` turns
  the old epilogue into the header of the new free block, which is coalesced
  with a free last block; the heap starts with ``CHUNKSIZE`` (4096) bytes and
  grows by ``max(asize, CHUNKSIZE)``.  Blocks are double-word aligned.
* P. R. Wilson, M. S. Johnstone, M. Neely, D. Boles, "Dynamic Storage
  Allocation: A Survey and Critical Review" (IWMM 1995), section 3.6,
  "segregated fits": sequential-fit searches within an array of size-class
  lists, first fit within a class, then the next larger classes; "an
  approximation of best fit" when each class is a narrow range.

Steps, as simulated:

* ``asize`` = the request plus header and footer, rounded up to the alignment
  (two words), at least the minimum block (header, two list links, footer).
* **malloc**: look at the list of ``asize``'s class, then each larger class in
  turn; in each, first fit from the head.  The block found is taken off its
  list; if the rest would make a minimum block, it is split off (the request
  takes the front) and pushed on the list of its own class.  When no list
  has a fit, the heap grows by ``max(asize, chunk)`` and the new block (joined
  to a free last block) is used.
* **free**: mark the block free and join it at once with a free lower
  neighbour (found through its footer) and a free upper one (its header),
  taking them off their lists; push the result on its class's list.
* Lists are LIFO (CS:APP 9.9.13's constant-time choice) or, with
  ``address_ordered=True``, kept in address order (its other choice, which
  "enjoys better memory utilization, approaching that of best fit").
* **realloc**: the block stays while it holds the new size; otherwise
  malloc-copy-free, the old block kept if the malloc fails (CS:APP's
  ``mm_realloc`` always mallocs, copies and frees).

Events: :class:`ClassProbe` per class list looked at (``rec.probes`` and
``rec.visits``), ``Visit`` per block examined, ``ListRemove``/``ListInsert``
with ``where=(class,)``, :class:`ListWalkStep` per block an address-ordered
insertion passes (``rec.walked``), ``Split``, ``Coalesce``, ``Grow``,
``GrowFailed``, ``Placed`` and ``Released``.  They say every change to
``structure()`` (kind ``size-classes``), which
:mod:`heapscope.allocators.structure_replay` follows.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Iterator

from . import structure
from .free_index import FreeSizeIndex
from .events import Coalesce, ListInsert, ListRemove, Note, Placed, Released, Split, Visit
from .params import BOOL, MAX_BYTES, MAX_CHUNK, SIZE, Param
from .strategy import FREE_BLOCK, META, USED, Block, Strategy, align_up

#: low bit of a header or footer: the block is allocated
ALLOC_BIT = 1
#: CS:APP's CHUNKSIZE: the first heap and the least growth
CHUNK = 4096
#: CS:APP's example classes end with {2049-4096}, {4097-inf}
LAST_CLASS = 4096
#: the build's row of measures (:meth:`SegregatedFirstFit.measure_row`): no
#: largest_free (the max of the two after it) nor the rotations it never adds to
ROW_FIELDS = ("heap", "live", "in_use", "headers", "free", "top_free", "largest_below_top",
              "visits", "splits", "merges", "grows", "walked", "payload")
_ROW = struct.Struct(f"<{len(ROW_FIELDS)}q")


@dataclass(frozen=True, slots=True)
class ClassProbe:
    """Segregated fit: the free list of size class ``cls`` looked at (blocks
    of ``2**(cls-1) + 1`` to ``2**cls`` bytes; the last class holds every
    larger block too); ``head`` is its first block, None when it is empty.
    One unit of search (``rec.probes``, ``rec.visits``)."""
    changes_blocks = False
    cls: int
    head: int | None

    def list_mark(self) -> tuple[tuple, str]:
        return (self.cls,), "looked at" + (" (empty)" if self.head is None else "")


@dataclass(frozen=True, slots=True)
class ListWalkStep:
    """An address-ordered insertion into class ``cls`` passed block ``addr``
    (lower than the block being inserted); counted in ``rec.walked``."""
    changes_blocks = False
    addr: int
    size: int
    cls: int


class SegregatedFirstFit(Strategy):
    """Segregated free lists by power-of-two size classes, first fit within a
    class then the larger ones, immediate coalescing with boundary tags."""

    #: dicts and lists of ints only: a copy of the heap copies them without looking (state_copy.py)
    flat_state = Strategy.flat_state + ('_hdr', '_ftr', '_next', '_prev')
    name = "segregated-first-fit"
    #: the event types this policy's records can hold (conditions.py: a condition
    #: on another is answered without a replay)
    makes_events = frozenset({"ClassProbe", "Coalesce", "Grow", "GrowFailed", "ListInsert", "ListRemove",
                              "ListWalkStep", "Note", "Placed", "Released", "Split", "Visit"})
    search_unit = ("list or block", "lists and blocks")
    search_verb = "looking at"
    title = "Segregated free lists, first fit (CS:APP 9.9.14; Wilson et al. 1995)"
    citation = ("Bryant & O'Hallaron, CS:APP 9.9.14 'Segregated Fits' with 9.9.11-12 boundary tags; "
                "Wilson, Johnstone, Neely & Boles 1995, 3.6; the policy of seed 004's BSA")

    params = (
        Param("chunk", SIZE, CHUNK, "the first heap and the least sbrk increment (CS:APP's "
              "CHUNKSIZE)", low=1, high=MAX_CHUNK),
        Param("last_class", SIZE, LAST_CLASS, "the largest power-of-two class bound: blocks above "
              "it share one last list", low=16, high=MAX_BYTES, power_of_two=True),
        Param("address_ordered", BOOL, False, "keep each list in address order instead of LIFO"),
    )

    def __init__(self, *, chunk: int = CHUNK, last_class: int = LAST_CLASS,
                 address_ordered: bool = False, **common) -> None:
        super().__init__(**common)
        W = self.word
        #: blocks are multiples of this (CS:APP's DSIZE, or a larger alignment)
        self.grain = max(2 * W, self.align)
        self.align = self.grain
        #: header, two list links, footer
        self.min_block = align_up(4 * W, self.grain)
        self.chunk = align_up(chunk, self.grain)
        self.address_ordered = address_ordered
        self.min_class = (self.min_block - 1).bit_length()
        self.last_class = max(last_class.bit_length() - 1, self.min_class) + 1
        #: header word of every block and of the prologue and epilogue, by address
        self._hdr: dict[int, int] = {}
        #: footer word of every block and of the prologue, by address
        self._ftr: dict[int, int] = {}
        #: list links; class k's list head is the key ~k
        self._next: dict[int, int] = {}
        self._prev: dict[int, int] = {}
        for k in range(self.min_class, self.last_class + 1):
            self._next[~k] = self._prev[~k] = ~k
        self._first: int | None = None      # the first block (after the prologue)
        self._epilogue: int | None = None   # the epilogue header's address
        self._free_bytes = 0
        self._free_index = FreeSizeIndex()  # for the measures only

    # ------------------------------------------------------------ classes
    def size_class(self, size: int) -> int:
        """The class of a block of ``size`` bytes: k with 2**(k-1) < size <= 2**k,
        and every size above the last class bound in the last class."""
        return min(max((size - 1).bit_length(), self.min_class), self.last_class)

    def class_range(self, k: int) -> tuple[int, int | None]:
        """Smallest and largest block size of class ``k`` (None: no bound)."""
        low = self.min_block if k == self.min_class else (1 << (k - 1)) + 1
        return low, None if k == self.last_class else 1 << k

    def class_label(self, k: int) -> str:
        low, high = self.class_range(k)
        if high is None:
            return f"class {k} ({low} B and up)"
        return f"class {k} ({low} B)" if low == high else f"class {k} ({low}-{high} B)"

    def class_list(self, k: int) -> list[int]:
        """Blocks on class ``k``'s list, head first."""
        out = []
        p = self._next[~k]
        while p != ~k:
            out.append(p)
            p = self._next[p]
        return out

    def block_size(self, addr: int) -> int:
        return self._hdr[addr] & ~ALLOC_BIT

    # -------------------------------------------------------------- lists
    def _insert(self, b: int, size: int) -> None:
        # size_class(size), worked out in place (a chunk below the smallest
        # block, the `chunk` parameter's least, leaves smaller free blocks)
        k = (size - 1).bit_length()
        if k > self.last_class:
            k = self.last_class
        elif k < self.min_class:
            k = self.min_class
        nxt, prv = self._next, self._prev
        at = ~k
        rec = self.rec
        if self.address_ordered:
            p = nxt[at]
            while p != ~k and p < b:
                rec.walked += 1
                if rec.events is not None:
                    rec.events.append(ListWalkStep(p, self._hdr[p] & ~ALLOC_BIT, k))
                at = p
                p = nxt[p]
        after = nxt[at]
        nxt[b] = after
        prv[b] = at
        prv[after] = b
        nxt[at] = b
        self._free_bytes += size
        self._free_index.add(b, size)
        if rec.events is not None:
            rec.events.append(ListInsert(b, size, (k,)))

    def _remove(self, b: int, size: int) -> None:
        nxt, prv = self._next, self._prev
        before = prv.pop(b)
        after = nxt.pop(b)
        nxt[before] = after
        prv[after] = before
        self._free_bytes -= size
        self._free_index.remove(b, size)
        events = self.rec.events
        if events is not None:
            events.append(ListRemove(b, size, (self.size_class(size),)))

    def _set(self, b: int, word: int) -> None:
        """Write header and footer of the block at ``b``."""
        self._hdr[b] = word
        self._ftr[b + (word & ~ALLOC_BIT) - self.word] = word

    # ------------------------------------------------------------- growth
    def _init_heap(self) -> bool:
        """``mm_init``: the alignment padding, the prologue and the epilogue,
        then ``extend_heap(CHUNKSIZE)``."""
        W = self.word
        base = self.core_top
        pad = (-(base + 3 * W)) % self.grain
        start = self._take_core(pad + 3 * W)
        if start is None:
            return False
        prologue = start + pad
        self._hdr[prologue] = self._ftr[prologue + W] = 2 * W | ALLOC_BIT
        self._epilogue = prologue + 2 * W
        self._hdr[self._epilogue] = ALLOC_BIT
        self._first = self._epilogue
        self._extend(self.chunk)
        return True

    def _extend(self, size: int) -> int | None:
        """``extend_heap``: ``size`` more bytes; the old epilogue becomes the
        header of a new free block, coalesced with a free last block.  Returns
        the free block, or None (ENOMEM)."""
        if self._take_core(size) is None:
            return None
        b = self._epilogue
        del self._hdr[b]
        self._set(b, size)
        self._epilogue = b + size
        self._hdr[self._epilogue] = ALLOC_BIT
        return self._coalesce(b, size)

    # ------------------------------------------------------------- malloc
    def _malloc(self, size: int) -> int | None:
        if self._epilogue is None and not self._init_heap():
            return None
        grain = self.grain
        asize = (size + 2 * self.word + grain - 1) & -grain       # align_up(size + 2W, grain)
        if asize < self.min_block:
            asize = self.min_block
        b = self._find_fit(asize)
        if b is None:
            b = self._extend(max(asize, self.chunk))
            if b is None:
                return None
            self._visit(b, self._hdr[b] & ~ALLOC_BIT, True)
        return self._place(b, asize, size)

    def _find_fit(self, asize: int) -> int | None:
        """First fit in the request's class, then in each larger class."""
        rec = self.rec
        events = rec.events
        hdr, nxt = self._hdr, self._next
        last = self.last_class
        k = (asize - 1).bit_length()        # size_class(asize): asize is at least min_block
        if k > last:
            k = last
        while k <= last:
            end = ~k
            head = nxt[end]
            rec.probes += 1
            rec.visits += 1
            if events is not None:
                events.append(ClassProbe(k, None if head == end else head))
            p = head
            while p != end:
                size = hdr[p]               # a listed block is free: no allocated bit to mask
                fits = size >= asize
                rec.visits += 1
                if events is not None:
                    events.append(Visit(p, size, fits))
                if fits:
                    return p
                p = nxt[p]
            k += 1
        return None

    def _place(self, b: int, asize: int, request: int) -> int:
        """CS:APP's ``place``: take ``b`` off its list; split off the rest
        when it makes a minimum block."""
        hdr, ftr = self._hdr, self._ftr
        W = self.word
        size = hdr[b]                       # b is free: no allocated bit to mask
        self._remove(b, size)
        rest = size - asize
        rec = self.rec
        if rest >= self.min_block:
            # _set(b, asize | ALLOC_BIT), then _set(b + asize, rest)
            hdr[b] = ftr[b + asize - W] = asize | ALLOC_BIT
            hdr[b + asize] = ftr[b + size - W] = rest
            rec.splits += 1
            if rec.events is not None:
                rec.events.append(Split(b, size, b, asize, b + asize, rest))
            self._insert(b + asize, rest)
            size = asize
        else:
            hdr[b] = ftr[b + size - W] = size | ALLOC_BIT          # _set(b, size | ALLOC_BIT)
        payload = b + W
        self._note_alloc(payload, b, size, request, 2 * W)
        if rec.events is not None:
            rec.events.append(Placed(b, size, payload, request))
        return payload

    # --------------------------------------------------------------- free
    def _free(self, payload: int) -> None:
        lb = self._note_free(payload)
        b, size = lb.block_addr, lb.block_size
        if self.rec.events is not None:
            self.rec.events.append(Released(b, size))
        self._hdr[b] = self._ftr[b + size - self.word] = size           # _set(b, size)
        self._coalesce(b, size)

    def _coalesce(self, b: int, size: int) -> int:
        """CS:APP's ``coalesce``, its four cases, then the list insert."""
        W = self.word
        hdr, ftr = self._hdr, self._ftr
        rec = self.rec
        prev_word = ftr[b - W]
        if not prev_word & ALLOC_BIT:
            psize = prev_word
            prv = b - psize
            self._remove(prv, psize)
            rec.merges += 1
            if rec.events is not None:
                rec.events.append(Coalesce(prv, psize, b, size))
            del hdr[b]
            del ftr[b - W]
            b = prv
            size += psize
            hdr[b] = ftr[b + size - W] = size           # _set(b, size)
        nxt = b + size
        next_word = hdr[nxt]
        if not next_word & ALLOC_BIT:
            nsize = next_word
            self._remove(nxt, nsize)
            rec.merges += 1
            if rec.events is not None:
                rec.events.append(Coalesce(b, size, nxt, nsize))
            del hdr[nxt]
            del ftr[nxt - W]
            size += nsize
            hdr[b] = ftr[b + size - W] = size           # _set(b, size)
        self._insert(b, size)
        return b

    def _payload_capacity(self, payload: int) -> int:
        lb = self.live[payload]
        return lb.block_addr + lb.block_size - self.word - payload

    # ------------------------------------------------------------ walking
    def _blocks(self) -> Iterator[tuple[int, int, str, int | None]]:
        base = self.arena.base
        end = base
        if self._epilogue is not None:
            W = self.word
            hdr = self._hdr
            yield base, self._first - base, META, None          # padding and prologue
            b = self._first
            epilogue = self._epilogue
            while b != epilogue:
                word = hdr[b]
                size = word & ~ALLOC_BIT
                if word & ALLOC_BIT:
                    yield b, size, USED, b + W
                else:
                    yield b, size, FREE_BLOCK, None
                b += size
            yield epilogue, W, META, None
            end = epilogue + W
        if self.arena.brk > end:
            yield end, self.arena.brk - end, FREE_BLOCK, None   # a pool not handed out yet

    def free_blocks(self) -> Iterator[tuple[int, int]]:
        hdr = self._hdr
        for b in self._next:
            if b >= 0:
                yield b, hdr[b]
        tail = self.arena.brk - self.core_top
        if tail > 0:
            yield self.core_top, tail

    def fragmentation_probe(self) -> tuple[int, int, int, int]:
        """From a running index of the listed blocks (the measures ask after
        every step; the base's walk of every free block cost five times the
        replay).  No listed block touches the break, which the epilogue ends;
        only a pool's tail not handed out yet does."""
        index = self._free_index
        total, largest = index.total, index.largest()
        tail = self.arena.brk - self.core_top
        if tail <= 0:
            return total, largest, 0, largest
        return total + tail, tail if tail > largest else largest, tail, largest

    def measure_row(self, rec) -> tuple:
        """The build's row (:data:`ROW_FIELDS`) through this policy's probe,
        looked up once, and the counters it adds to; a subclass with a probe
        of its own gets the default row."""
        if type(self).fragmentation_probe is not SegregatedFirstFit.fragmentation_probe:
            return super().measure_row(rec)
        s = self
        arena = self.arena
        fixed = arena.fixed
        probe = self.fragmentation_probe
        pack = _ROW.pack_into

        def row(buf, off, live_bytes, payload):
            free, _, top, below = probe()
            pack(buf, off, s.touched_high - s.touched_low if fixed else arena.brk, live_bytes,
                 s.in_use, s.header_in_use, free, top, below,
                 rec.visits, rec.splits, rec.merges, rec.grows, rec.walked, payload)
        return ROW_FIELDS, row

    def _policy_signature(self) -> tuple:
        return tuple((k, tuple(self.class_list(k))) for k in range(self.min_class, self.last_class + 1))

    def structure(self) -> dict:
        """One list per size class, head first, every class from the smallest
        to the last (kind ``size-classes``, docs/structure.md), with each
        class's smallest and largest block size and the list order."""
        hdr = self._hdr
        lists: dict[int, list[int]] = {}
        low: dict[int, int] = {}
        high: dict[int, int | None] = {}
        sizes: dict[int, int] = {}
        for k in range(self.min_class, self.last_class + 1):
            members = self.class_list(k)
            lists[k] = members
            for b in members:
                sizes[b] = hdr[b]
            low[k], high[k] = self.class_range(k)
        outs = []
        tail = self.arena.brk - self.core_top
        if tail > 0:
            sizes[self.core_top] = tail
            outs.append(structure.outside(self.core_top, "the pool not handed out by mem_sbrk yet"))
        return structure.make("size-classes", sizes, outside_blocks=outs, lists=lists, class_low=low,
                              class_high=high, order="address" if self.address_ordered else "lifo")

    def explain_event(self, event) -> str | None:
        if isinstance(event, ClassProbe):
            label = self.class_label(event.cls)
            if event.head is None:
                return f"the list of {label} is empty"
            return f"the list of {label} starts at {event.head:#x}: first fit along it"
        if isinstance(event, ListWalkStep):
            return f"passed {event.addr:#x} ({event.size} B), lower, on the address-ordered list of class {event.cls}"
        if isinstance(event, ListInsert) and event.where:
            how = "in address order on" if self.address_ordered else "at the head of"
            return f"put {event.addr:#x} ({event.size} B) {how} the list of {self.class_label(event.where[0])}"
        if isinstance(event, ListRemove) and event.where:
            return f"took {event.addr:#x} ({event.size} B) off the list of {self.class_label(event.where[0])}"
        return None

    # -------------------------------------------------------------- check
    def _check_structure(self, blocks: list[Block]) -> None:
        """Boundary tags (header = footer on every block, prologue and
        epilogue in place), full coalescing, every free block on the list of
        its class and nothing else there, the lists doubly linked (and in
        address order when asked), the free bytes adding up."""
        def broken(message: str) -> None:
            self._fail(False, message)

        W = self.word
        hdr, ftr, nxt, prv = self._hdr, self._ftr, self._next, self._prev
        on_list: dict[int, int] = {}
        for k in range(self.min_class, self.last_class + 1):
            before = ~k
            p = nxt[before]
            while p != ~k:
                if prv.get(p) != before:
                    broken(f"prev link of {p:#x} is {prv.get(p)!r}, not {before:#x} (class {k})")
                if p in on_list:
                    broken(f"block {p:#x} is on the lists twice")
                word = hdr.get(p)
                if word is None or word & ALLOC_BIT:
                    broken(f"class {k}'s list holds {p:#x}, which is no free block")
                if self.size_class(word) != k:
                    broken(f"block {p:#x} of {word} bytes is on the list of class {k}, "
                           f"not {self.size_class(word)}")
                if self.address_ordered and before >= 0 and before > p:
                    broken(f"class {k}'s list is not in address order at {p:#x}")
                on_list[p] = k
                if len(on_list) > len(nxt):
                    broken(f"class {k}'s list does not lead back to its head")
                before = p
                p = nxt[p]
            if prv[~k] != before:
                broken(f"class {k}'s head points back at {prv[~k]!r}, not {before:#x}")
        if len(nxt) - (self.last_class - self.min_class + 1) != len(on_list) or len(prv) != len(nxt):
            broken(f"{len(on_list)} blocks are on lists but {len(nxt)} have links")

        if self._epilogue is None:
            if hdr or ftr:
                broken("tags exist before mm_init")
            return
        first = self._first
        prologue = first - 2 * W
        if hdr.get(prologue) != 2 * W | ALLOC_BIT or ftr.get(prologue + W) != 2 * W | ALLOC_BIT:
            broken("the prologue block is not an allocated block of two words")
        if hdr.get(self._epilogue) != ALLOC_BIT:
            broken(f"the epilogue at {self._epilogue:#x} is not an allocated header of size 0")
        if self._epilogue + W != self.core_top:
            broken(f"the epilogue ends at {self._epilogue + W:#x}, not where the heap ends, {self.core_top:#x}")
        free_bytes = 0
        previous_free = False
        count = 0
        for b in blocks:
            if b.state == META or b.addr >= self.core_top:
                continue
            count += 1
            word = hdr.get(b.addr)
            if word is None:
                broken(f"no header at {b.addr:#x}")
            if (word & ~ALLOC_BIT) != b.size or b.size < self.min_block or b.size % self.grain:
                broken(f"block {b.addr:#x} has size {b.size}: header says {word}, minimum "
                       f"{self.min_block}, grain {self.grain}")
            if ftr.get(b.addr + b.size - W) != word:
                broken(f"the footer of {b.addr:#x} says {ftr.get(b.addr + b.size - W)!r}, its header {word}")
            is_free = b.state == FREE_BLOCK
            if is_free == bool(word & ALLOC_BIT):
                broken(f"block {b.addr:#x}: its allocated bit and its walk state {b.state!r} disagree")
            if is_free:
                if previous_free:
                    broken(f"free block {b.addr:#x} follows a free block: not coalesced")
                if b.addr not in on_list:
                    broken(f"free block {b.addr:#x} of {b.size} bytes is on no list "
                           f"(it belongs on class {self.size_class(b.size)})")
                free_bytes += b.size
            elif b.payload != b.addr + W:
                broken(f"used block {b.addr:#x} has payload {b.payload!r}, not {b.addr + W:#x}")
            previous_free = is_free
        if len(hdr) != count + 2 or len(ftr) != count + 1:
            broken(f"{len(hdr)} headers and {len(ftr)} footers are kept for {count} blocks")
        if free_bytes != self._free_bytes or len(on_list) != sum(
                1 for b in blocks if b.state == FREE_BLOCK and b.addr < self.core_top):
            broken(f"free blocks add up to {free_bytes} bytes but {self._free_bytes} are booked")
        if not self.arena.base <= self.core_top <= self.arena.brk:
            broken(f"mem_sbrk's end {self.core_top:#x} is outside the heap")
