"""TLSF, Two-Level Segregated Fit: M. Masmano, I. Ripoll, A. Crespo, J. Real,
"TLSF: a new dynamic memory allocator for real-time systems", ECRTS 2004, with
the mapping, block layout and operations of Matthew Conte's reference code
(github.com/mattconte/tlsf, ``tlsf.c``; read at commit a1f743ff).  The function
names below are the reference's, one verb each; the code is our own.

Parameters (the reference's 64-bit ones when ``word=8``; its 32-bit ones when
``word=4``):

* ``ALIGN_SIZE = W``, ``SL_INDEX_COUNT_LOG2 = 5`` (32 second-level lists per
  first-level class), ``FL_INDEX_SHIFT = 5 + log2(W)`` (8 on LP64) and
  ``SMALL_BLOCK_SIZE = 1 << FL_INDEX_SHIFT`` (256): blocks smaller than that
  all live in first-level class 0, split linearly in steps of ``W``.
* ``mapping_insert(s)`` (where a free block of size s is filed):
  ``f = fls(s)``, ``sl = (s >> (f - 5)) ^ 32``, ``fl = f - (FL_INDEX_SHIFT - 1)``
  (``fl = fls(s) - 7`` on LP64); small sizes go to ``(0, s // W)``.
* ``mapping_search(s)`` (where a search for s starts) first rounds s up by
  ``(1 << (fls(s) - 5)) - 1`` when ``s >= SMALL_BLOCK_SIZE``, so every block in
  the class found is big enough ("good fit": no list is ever scanned).
* ``search_suitable_block``: ``sl_bitmap[fl] & (~0 << sl)``; if empty, the lowest
  set bit of ``fl_bitmap`` above ``fl`` and the lowest set bit of that row.
  The head of that list is taken: one bitmap probe, or three, never a list walk.
* Free lists are LIFO, one per ``(fl, sl)``.

Block layout (the reference's ``block_header_t``): a block is a size word
whose two low bits say "this block is free" and "the previous block is free",
followed by the payload.  The ``prev_phys_block`` pointer of the C struct lives
in the *last word of the previous block*, so it exists only while that block is
free; a free block also keeps its list links in its payload.  Hence:

* header overhead = 1 word; the smallest block holds 3 words after its size
  word (``block_size_min = sizeof(block_header_t) - sizeof(prev_phys) = 3W``);
* a block's TLSF size is the number of bytes after its size word: the block
  spans ``[addr, addr + W + size)`` in :meth:`walk`, its payload starts at
  ``addr + W`` (``block_start_offset`` from the C struct's start is ``2W``
  because the struct starts with the neighbour's ``prev_phys`` word);
* a block splits when it holds ``sizeof(block_header_t) + size`` (``4W + size``),
  the remainder being a header plus a minimum block;
* ``free`` coalesces at once with the previous block (found through
  ``prev_phys``, if the prev-free bit says it is free) and the next one.

A pool ``[mem, mem + bytes)`` is laid out as ``tlsf_add_pool`` does: the first
block's C struct starts one word *before* ``mem`` (so its ``prev_phys`` falls
outside the pool and its size word is at ``mem``), its size is
``align_down(bytes - 2W, W)``, and a zero-size used sentinel block ends the pool.
:meth:`walk` reports the sentinel's size word and any bytes ``align_down`` left
over as one META block, so the walk covers the heap exactly.

Two heap modes:

* **fixed pool** (``TLSF(pool_size=N)``): the arena is the pool, offset 0 is
  ``mem``; payload offsets are those the reference returns for a pool of N
  bytes (``tests/test_tlsf.py`` checks this against the C code).
* **sbrk growth** (the default, our extension: the reference only takes whole
  pools): the heap starts empty.  When no block fits, the heap grows by
  ``max(needed, chunk)`` bytes (``chunk`` defaults to 4096), where *needed* is
  the least growth after which the search finds a block: the first growth lays
  out a pool as above; later ones turn the end sentinel into a free block,
  coalesce it with a free last block and put a new sentinel at the new end.
  If the chunk is refused (heap limit), exactly *needed* is tried.  The heap
  never exceeds ``block_size_max`` (4 GiB on LP64): no block may outgrow the
  first-level index.

Deviations from the reference, forced by the trace model:

* ``malloc(0)``: the reference returns NULL.  Traces do contain malloc(0) and
  expect a live block (as C allows and glibc does), so by default it gets the
  minimum block, as ``tlsf_malloc(1)`` would.  ``zero_returns_null=True``
  gives the reference's NULL.
* ``realloc(p, 0)``: the reference frees p and returns NULL, but a None from
  our ``realloc`` means "failed, old block kept"; we shrink p in place to the
  minimum block instead (ISO C lets either happen).
* ``realloc(p, n)`` with n too large for any block returns None and keeps p
  (the reference would trim p to nothing: ``adjust_request_size`` gives 0).

Events: :class:`MappingSearch` (the request, its rounded size and the search
cell), one ``BitmapProbe`` per bitmap word looked at (each counts in
``rec.probes`` and in ``rec.visits``; the block taken adds one ``Visit``, so the
search length is probes + 1), ``ListRemove``/``ListInsert`` with
``where=(fl, sl)``, ``Split``, ``Coalesce``, ``Grow``/``GrowFailed``,
``Placed`` and ``Released``.  Event sizes are whole blocks (size word
included), as in every strategy; the TLSF size of such a block is ``size - W``.

View: the fl x sl matrix with ``fl_bitmap`` and ``sl_bitmap``, the insert cell
and the search cell lit, and the find-first-set scan along the row and column.

This module is the policy, in the reference's order.  Beside it, each in a
module of its own: its words for the explain panel
(:mod:`heapscope.allocators.tlsf_explain`), the fused bulk path
(:mod:`heapscope.allocators.tlsf_fast`), its fragmentation probe and row of
measures (:mod:`heapscope.allocators.tlsf_measures`) and ``tlsf_check``
(:mod:`heapscope.allocators.tlsf_check`).  The last three import this
module's constants, so the policy looks them up when first asked for.
"""

from __future__ import annotations

from typing import Iterator

from . import structure
from .events import (BitmapProbe, Coalesce, Grow, GrowFailed, ListInsert, ListRemove, MappingSearch,
                     Note, Placed, Released, Split, Visit)
from heapscope.values import format_size
from .params import BOOL, INT, MAX_CHUNK, SIZE, Param, ParamError
from .strategy import FREE_BLOCK, META, USED, Block, Strategy
from .tlsf_explain import TLSFWords

#: bit 0 of a size word: this block is free
FREE_BIT = 1
#: bit 1 of a size word: the previous physical block is free
PREV_FREE_BIT = 2
FLAG_BITS = FREE_BIT | PREV_FREE_BIT

#: log2 of the number of second-level lists per first-level class
SL_INDEX_COUNT_LOG2 = 5
SL_INDEX_COUNT = 1 << SL_INDEX_COUNT_LOG2

#: heap growth in sbrk mode when the request needs less
CHUNK = 4096


def fls(word: int) -> int:
    """Index of the highest set bit (the reference's ``tlsf_fls``); -1 for 0."""
    return word.bit_length() - 1


def ffs(word: int) -> int:
    """Index of the lowest set bit (the reference's ``tlsf_ffs``); -1 for 0."""
    return (word & -word).bit_length() - 1


class TLSF(TLSFWords, Strategy):
    """Two-Level Segregated Fit after Masmano et al. 2004 and mattconte/tlsf."""

    #: dicts and lists of ints only: a copy of the heap copies them without
    #: looking (heapscope.allocators.state_copy)
    flat_state = Strategy.flat_state + ('_size_word', '_prev_phys', 'sl_bitmap')
    flat_lists = ("_lists",)
    name = "tlsf"
    #: the event types this policy's records can hold (conditions.py: a condition
    #: on another is answered without a replay)
    makes_events = frozenset({"BitmapProbe", "Coalesce", "Grow", "GrowFailed", "ListInsert", "ListRemove",
                              "MappingSearch", "Note", "Placed", "Released", "Shrink", "Split", "Visit"})
    title = "TLSF, two-level segregated fit (Masmano et al. 2004)"
    citation = ("Masmano, Ripoll, Crespo & Real, TLSF: a new dynamic memory allocator "
                "for real-time systems, ECRTS 2004; reference code mattconte/tlsf")
    #: its state is dicts and lists of ints, with no reference back to the heap:
    #: after a checkpoint the build goes on from a twin (heapscope.allocators.replay, _go_on_after)
    plain_state = True

    params = (
        Param("align", INT, None, "payload alignment in bytes: TLSF aligns every block to the word "
              "(ALIGN_SIZE), so it gives no more than the word", choices=(4, 8), none_ok=True,
              none_means="the word"),
        Param("chunk", SIZE, CHUNK, "least heap growth in sbrk mode (0: exactly what the search "
              "needs)", low=0, high=MAX_CHUNK),
        Param("zero_returns_null", BOOL, False, "malloc(0) returns NULL as the reference does, "
              "instead of a minimum block"),
    )

    def __init__(self, *, chunk: int = CHUNK, zero_returns_null: bool = False, **common) -> None:
        super().__init__(**common)
        W = self.word
        if self.align > W:
            raise ParamError(f"tlsf: align={self.align} is more than TLSF gives: it aligns every "
                             f"payload to the word (ALIGN_SIZE = {W}); align accepts "
                             f"{'4 or 8' if W == 8 else '4'} with word={W}")
        # A weaker alignment is met by the word's.
        self.align = W
        self.chunk = chunk
        self.zero_returns_null = zero_returns_null
        align_size_log2 = W.bit_length() - 1
        self.fl_index_shift = SL_INDEX_COUNT_LOG2 + align_size_log2
        self.fl_index_max = 32 if W == 8 else 30
        self.fl_index_count = self.fl_index_max - self.fl_index_shift + 1
        self.small_block_size = 1 << self.fl_index_shift
        #: sizeof(block_header_t): prev_phys, size, next_free, prev_free
        self.block_header_size = 4 * W
        self.block_size_min = self.block_header_size - W
        self.block_size_max = 1 << self.fl_index_max

        self.fl_bitmap = 0
        self.sl_bitmap = [0] * self.fl_index_count
        # One LIFO free list per (fl, sl), at index fl * 32 + sl.  A dict keeps
        # insertion order, so its last key is the list head, and any block can
        # be unlinked in O(1), as with the reference's doubly linked lists.
        self._lists: list[dict[int, None]] = [{} for _ in range(self.fl_index_count * SL_INDEX_COUNT)]
        #: the size word of every block, sentinel included, with FREE_BIT and PREV_FREE_BIT
        self._size_word: dict[int, int] = {}
        #: prev_phys_block, kept in the last word of the previous block: valid
        #: only while the PREV_FREE_BIT of the block is set
        self._prev_phys: dict[int, int] = {}
        #: F: bytes of the blocks on the free lists, size words included
        self._free_bytes = 0
        self._first: int | None = None      # first block of the heap (its size word is at the base)
        self._sentinel: int | None = None   # the zero-size used block at the end
        if self.arena.fixed:
            largest = self.block_size_max + self.pool_overhead - 1
            if self.arena.size > largest:
                raise ParamError(
                    f"tlsf: pool_size={format_size(self.arena.size)} is too large: a TLSF pool holds "
                    f"blocks below {format_size(self.block_size_max)} (2**fl_index_max with word={W}), "
                    f"so pool_size accepts at most {largest} bytes here")
            self.tlsf_add_pool(self.arena.base, self.arena.size)

    # The reference's block_header_overhead and tlsf_pool_overhead() follow
    # from the word; as properties they keep the instance at fewer than 30
    # attributes, the most CPython 3.11 reads inline (tests/test_attribute_reads.py;
    # its fused path reads locals, so for TLSF alone that costs nothing either
    # way: benchmarks/bench_inline_attributes.py).
    @property
    def block_header_overhead(self) -> int:
        """``block_header_overhead``: the size word a used block costs."""
        return self.word

    @property
    def pool_overhead(self) -> int:
        """``tlsf_pool_overhead()``: the first block's size word and the
        sentinel's, ``2 * block_header_overhead``."""
        return 2 * self.word

    def largest_request(self) -> int:
        """The largest request whose search lands in a list: past
        ``block_size_max - block_size_max / 64`` the search rounding
        (``mapping_search``) reaches ``2**fl_index_max``, past the last first
        level, and tlsf_malloc returns NULL.  Also at most the room."""
        size_max = self.block_size_max
        return min(super().largest_request(), size_max - (size_max >> (SL_INDEX_COUNT_LOG2 + 1)))

    # --------------------------------------------------------- mapping
    def adjust_request_size(self, size: int) -> int:
        """Align up to the word and to at least ``block_size_min``; 0 when the
        request cannot be served (0 bytes in reference mode, or too large)."""
        if size == 0 and self.zero_returns_null:
            return 0
        W = self.word
        aligned = (size + W - 1) & -W
        if aligned >= self.block_size_max:
            return 0
        return aligned if aligned > self.block_size_min else self.block_size_min

    def mapping_insert(self, size: int) -> tuple[int, int]:
        """The (fl, sl) list a free block of TLSF size ``size`` is filed in."""
        if size < self.small_block_size:
            return 0, size // self.word
        f = size.bit_length() - 1
        return f - (self.fl_index_shift - 1), (size >> (f - SL_INDEX_COUNT_LOG2)) ^ SL_INDEX_COUNT

    def mapping_search(self, size: int) -> tuple[int, int]:
        """The (fl, sl) cell a search for ``size`` starts at: ``size`` rounded up
        to the next class boundary, so every block found there is big enough."""
        return self.mapping_insert(self._search_rounding(size))

    def _search_rounding(self, size: int) -> int:
        if size >= self.small_block_size:
            size += (1 << (size.bit_length() - 1 - SL_INDEX_COUNT_LOG2)) - 1
        return size

    def class_floor(self, fl: int, sl: int) -> int:
        """Smallest TLSF block size filed in (fl, sl)."""
        if fl == 0:
            return sl * self.word
        return (SL_INDEX_COUNT + sl) << (fl + self.fl_index_shift - 1 - SL_INDEX_COUNT_LOG2)

    # ----------------------------------------------------------- views
    def class_list(self, fl: int, sl: int) -> list[int]:
        """Block addresses on list (fl, sl), head first."""
        return list(reversed(self._lists[fl * SL_INDEX_COUNT + sl]))

    def structure(self) -> dict:
        """Both bitmaps, the non-empty (fl, sl) lists head first, and each
        first level's smallest block size."""
        W = self.word
        size_word = self._size_word
        lists: dict[str, list[int]] = {}
        sizes: dict[int, int] = {}
        for i, members in enumerate(self._lists):
            if members:
                head_first = list(reversed(members))
                lists[structure.tlsf_key(i // SL_INDEX_COUNT, i % SL_INDEX_COUNT)] = head_first
                for b in head_first:
                    sizes[b] = W + (size_word[b] & ~FLAG_BITS)
        return structure.make("tlsf", sizes, fl_bitmap=self.fl_bitmap, sl_bitmap=list(self.sl_bitmap),
                              lists=lists, fl_count=self.fl_index_count, sl_count=SL_INDEX_COUNT,
                              row_floor=[self.class_floor(fl, 0) for fl in range(self.fl_index_count)],
                              small_block_size=self.small_block_size)

    def block_size(self, addr: int) -> int:
        """TLSF size of the block at ``addr`` (bytes after its size word)."""
        return self._size_word[addr] & ~FLAG_BITS

    @property
    def sentinel(self) -> int | None:
        """Address of the zero-size block that ends the heap (None while empty)."""
        return self._sentinel

    # ------------------------------------------------------ free lists
    def remove_free_block(self, block: int, fl: int, sl: int) -> None:
        """Unlink ``block`` from list (fl, sl); clear the bitmap bits it leaves empty."""
        free_list = self._lists[fl * SL_INDEX_COUNT + sl]
        del free_list[block]
        self._free_bytes -= self.word + (self._size_word[block] & ~FLAG_BITS)
        if not free_list:
            row = self.sl_bitmap[fl] & ~(1 << sl)
            self.sl_bitmap[fl] = row
            if not row:
                self.fl_bitmap &= ~(1 << fl)
        events = self.rec.events
        if events is not None:
            events.append(ListRemove(block, self.word + (self._size_word[block] & ~FLAG_BITS), (fl, sl)))

    def insert_free_block(self, block: int, fl: int, sl: int) -> None:
        """Push ``block`` on the head of list (fl, sl) and set both bitmap bits."""
        self._lists[fl * SL_INDEX_COUNT + sl][block] = None
        self._free_bytes += self.word + (self._size_word[block] & ~FLAG_BITS)
        self.fl_bitmap |= 1 << fl
        self.sl_bitmap[fl] |= 1 << sl
        events = self.rec.events
        if events is not None:
            events.append(ListInsert(block, self.word + (self._size_word[block] & ~FLAG_BITS), (fl, sl)))

    def block_remove(self, block: int) -> None:
        fl, sl = self.mapping_insert(self._size_word[block] & ~FLAG_BITS)
        self.remove_free_block(block, fl, sl)

    def block_insert(self, block: int) -> None:
        fl, sl = self.mapping_insert(self._size_word[block] & ~FLAG_BITS)
        self.insert_free_block(block, fl, sl)

    # ------------------------------------------------------ block edits
    def block_next(self, block: int) -> int:
        return block + self.word + (self._size_word[block] & ~FLAG_BITS)

    def block_link_next(self, block: int) -> int:
        """Write ``block`` into its next neighbour's prev_phys; return the neighbour."""
        nxt = block + self.word + (self._size_word[block] & ~FLAG_BITS)
        self._prev_phys[nxt] = block
        return nxt

    def block_mark_as_free(self, block: int) -> None:
        nxt = self.block_link_next(block)
        self._size_word[nxt] |= PREV_FREE_BIT
        self._size_word[block] |= FREE_BIT

    def block_mark_as_used(self, block: int) -> None:
        size_word = self._size_word
        nxt = block + self.word + (size_word[block] & ~FLAG_BITS)
        size_word[nxt] &= ~PREV_FREE_BIT
        size_word[block] &= ~FREE_BIT

    def block_can_split(self, block: int, size: int) -> bool:
        return (self._size_word[block] & ~FLAG_BITS) >= self.block_header_size + size

    def block_split(self, block: int, size: int) -> int:
        """Cut ``block`` to ``size``; the rest becomes a free block (not yet on a
        list) whose prev-free bit the caller sets.  Returns the rest."""
        W = self.word
        size_word = self._size_word
        word = size_word[block]
        old_size = word & ~FLAG_BITS
        remaining = block + W + size
        remain_size = old_size - (size + W)
        size_word[remaining] = remain_size
        size_word[block] = size | (word & FLAG_BITS)
        self.block_mark_as_free(remaining)
        self.rec.splits += 1
        events = self.rec.events
        if events is not None:
            events.append(Split(block, W + old_size, block, W + size, remaining, W + remain_size))
        return remaining

    def block_absorb(self, prev: int, block: int) -> int:
        """Join ``block`` into the physically previous ``prev`` (flags of prev kept)."""
        W = self.word
        size_word = self._size_word
        prev_size = size_word[prev] & ~FLAG_BITS
        block_size = size_word.pop(block) & ~FLAG_BITS
        self._prev_phys.pop(block, None)
        size_word[prev] += block_size + W
        self.block_link_next(prev)
        self.rec.merges += 1
        events = self.rec.events
        if events is not None:
            events.append(Coalesce(prev, W + prev_size, block, W + block_size))
        return prev

    def block_merge_prev(self, block: int) -> int:
        """Coalesce a just-freed block with its previous neighbour if that is free."""
        if self._size_word[block] & PREV_FREE_BIT:
            prev = self._prev_phys[block]
            self.block_remove(prev)
            block = self.block_absorb(prev, block)
        return block

    def block_merge_next(self, block: int) -> int:
        """Coalesce a free block with its next neighbour if that is free."""
        nxt = self.block_next(block)
        if self._size_word[nxt] & FREE_BIT:
            self.block_remove(nxt)
            block = self.block_absorb(block, nxt)
        return block

    def block_trim_free(self, block: int, size: int) -> None:
        """Give the tail of a free block beyond ``size`` back to the lists."""
        if self.block_can_split(block, size):
            remaining = self.block_split(block, size)
            self.block_link_next(block)
            self._size_word[remaining] |= PREV_FREE_BIT
            self.block_insert(remaining)

    def block_trim_used(self, block: int, size: int) -> None:
        """Give the tail of a used block beyond ``size`` back, joined to a free next block."""
        if self.block_can_split(block, size):
            remaining = self.block_split(block, size)
            self._size_word[remaining] &= ~PREV_FREE_BIT
            remaining = self.block_merge_next(remaining)
            self.block_insert(remaining)

    # ------------------------------------------------------------ search
    def search_suitable_block(self, fl: int, sl: int) -> tuple[int, int] | None:
        """The (fl, sl) of the first non-empty list at or above the search cell,
        by find-first-set on the bitmaps; None when there is none."""
        rec = self.rec
        events = rec.events
        sl_map = self.sl_bitmap[fl] & (~0 << sl)
        rec.probes += 1
        rec.visits += 1
        if sl_map:
            found = (fl, ffs(sl_map))
            if events is not None:
                events.append(BitmapProbe("sl", fl, sl, found))
            return found
        if events is not None:
            events.append(BitmapProbe("sl", fl, sl, None))
        fl_map = self.fl_bitmap & (~0 << (fl + 1))
        rec.probes += 1
        rec.visits += 1
        if not fl_map:
            if events is not None:
                events.append(BitmapProbe("fl", fl + 1, 0, None))
            return None
        scan_from = fl + 1
        fl = ffs(fl_map)
        found = (fl, ffs(self.sl_bitmap[fl]))
        rec.probes += 1
        rec.visits += 1
        if events is not None:
            # The fl scan starts above the search row; both probes end in the cell found.
            events.append(BitmapProbe("fl", scan_from, 0, found))
            events.append(BitmapProbe("sl", fl, 0, found))
        return found

    def block_locate_free(self, size: int, request: int | None = None) -> int | None:
        """Find a free block of at least ``size`` and take it off its list
        (``request``, the program's size, is only said in the events)."""
        rounded = self._search_rounding(size)
        fl, sl = self.mapping_insert(rounded)
        events = self.rec.events
        if events is not None:
            events.append(MappingSearch(size, rounded, fl, sl, request))
        if fl >= self.fl_index_count:
            return None
        found = self.search_suitable_block(fl, sl)
        if found is None:
            return None
        fl, sl = found
        free_list = self._lists[fl * SL_INDEX_COUNT + sl]
        block = next(reversed(free_list))
        rec = self.rec
        rec.visits += 1
        if events is not None:
            events.append(Visit(block, self.word + (self._size_word[block] & ~FLAG_BITS), True))
        self.remove_free_block(block, fl, sl)
        return block

    def block_prepare_used(self, block: int, size: int, request: int) -> int:
        """Trim the found block to ``size``, mark it used and book it."""
        self.block_trim_free(block, size)
        self.block_mark_as_used(block)
        W = self.word
        payload = block + W
        block_bytes = W + (self._size_word[block] & ~FLAG_BITS)
        self._note_alloc(payload, block, block_bytes, request, W)
        events = self.rec.events
        if events is not None:
            events.append(Placed(block, block_bytes, payload, request))
        return payload

    # -------------------------------------------------------------- pool
    def tlsf_add_pool(self, mem: int, nbytes: int) -> None:
        """Lay out ``[mem, mem + nbytes)`` as one free block and a sentinel, as the
        reference's ``tlsf_add_pool`` does.  A pool too small for one block stays
        unused (the reference refuses it)."""
        W = self.word
        pool_bytes = (nbytes - self.pool_overhead) & -W
        if pool_bytes >= self.block_size_max:
            raise ValueError(f"a TLSF pool holds blocks below {self.block_size_max} bytes; "
                             f"{nbytes} bytes is too many")
        if pool_bytes < self.block_size_min:
            return
        block = mem  # the C struct starts at mem - W, its size word at mem
        self._first = block
        self._size_word[block] = pool_bytes | FREE_BIT
        self.block_insert(block)
        sentinel = self.block_link_next(block)
        self._size_word[sentinel] = PREV_FREE_BIT
        self._sentinel = sentinel

    def _grow(self, adjust: int) -> bool:
        """sbrk mode: grow the heap until a search for ``adjust`` will succeed."""
        fl, sl = self.mapping_search(adjust)
        if fl >= self.fl_index_count:
            return False
        W = self.word
        # The least TLSF size the search is sure to find.
        need = self.class_floor(fl, sl)
        sentinel = self._sentinel
        if sentinel is None:
            needed = need + self.pool_overhead
        elif self._size_word[sentinel] & PREV_FREE_BIT:
            # The old sentinel's word and the new bytes join the free last block.
            needed = need - (self._size_word[self._prev_phys[sentinel]] & ~FLAG_BITS)
        else:
            needed = need + W
        chunked = max(needed, (self.chunk + W - 1) & -W)
        # Ask for the chunk; if refused (heap limit), for exactly what is needed.
        tries = (chunked, needed) if chunked != needed else (needed,)
        arena = self.arena
        old_brk = None
        for increment in tries:
            # No block may reach block_size_max, so neither may the heap.
            if arena.size + increment <= self.block_size_max:
                old_brk = arena.sbrk(increment)
            if old_brk is not None:
                break
            if self.rec.events is not None:
                self._event(GrowFailed(increment))
        if old_brk is None:
            return False
        self.rec.grows += 1
        if self.rec.events is not None:
            self._event(Grow(old_brk, increment))
        if sentinel is None:
            self.tlsf_add_pool(old_brk, increment)
            return True
        # The old sentinel becomes a free block reaching the new sentinel.
        size_word = self._size_word
        size_word[sentinel] = (increment - W) | (size_word[sentinel] & PREV_FREE_BIT)
        new_sentinel = sentinel + increment
        size_word[new_sentinel] = 0
        self._sentinel = new_sentinel
        self.block_mark_as_free(sentinel)
        block = self.block_merge_prev(sentinel)
        self.block_insert(block)
        return True

    # ------------------------------------------------------ malloc & free
    def _malloc(self, size: int) -> int | None:
        adjust = self.adjust_request_size(size)
        if not adjust:
            self._event(Note(f"TLSF returns NULL for a request of {size} bytes"))
            return None
        block = self.block_locate_free(adjust, size)
        if block is None:
            if self.arena.fixed or not self._grow(adjust):
                return None
            block = self.block_locate_free(adjust, size)
        return self.block_prepare_used(block, adjust, size)

    def _free(self, payload: int) -> None:
        lb = self._note_free(payload)
        block = lb.block_addr
        events = self.rec.events
        if events is not None:
            events.append(Released(block, lb.block_size))
        self.block_mark_as_free(block)
        block = self.block_merge_prev(block)
        block = self.block_merge_next(block)
        self.block_insert(block)

    def _realloc(self, payload: int, size: int) -> int | None:
        """``tlsf_realloc``: grow in place into a free next block when the two
        suffice, else malloc-copy-free; shrink in place, giving the tail back."""
        W = self.word
        block = payload - W
        size_word = self._size_word
        cursize = size_word[block] & ~FLAG_BITS
        nxt = block + W + cursize
        combined = cursize + (size_word[nxt] & ~FLAG_BITS) + W
        adjust = self.adjust_request_size(size if size else 1)
        if not adjust:
            self._event(Note(f"TLSF cannot hold a block of {size} bytes"))
            return None
        if adjust > cursize and (not size_word[nxt] & FREE_BIT or adjust > combined):
            # tlsf_realloc: "If the next block is used, or when combined with
            # the current block, does not offer enough space, we must
            # reallocate and copy."
            return self._move_to_new_block(payload, size)
        lb = self._note_free(payload)
        events = self.rec.events
        if adjust > cursize:
            if events is not None:
                events.append(Note("realloc grows in place into the free next block"))
            self.block_merge_next(block)
            self.block_mark_as_used(block)
        self.block_trim_used(block, adjust)
        block_bytes = W + (size_word[block] & ~FLAG_BITS)
        self._note_alloc(payload, block, block_bytes, size, lb.header)
        if events is not None:
            events.append(Placed(block, block_bytes, payload, size))
        return payload

    # ------------------------------------------------- the fused bulk path
    def bulk_ops(self) -> tuple:
        """Fused malloc, free and realloc for bulk replay (``Strategy.bulk_ops``):
        :func:`heapscope.allocators.tlsf_fast.fused_ops`, while events are off
        and for this class only (a subclass may have changed a verb the fused
        code stands in for)."""
        if self.rec.events is not None or type(self) is not TLSF:
            return super().bulk_ops()
        from .tlsf_fast import fused_ops        # it imports this module
        return fused_ops(self)

    # ------------------------------------------------------------ walking
    def _blocks(self) -> Iterator[tuple[int, int, str, int | None]]:
        W = self.word
        size_word = self._size_word
        block = self._first
        sentinel = self._sentinel
        if block is not None:
            while block != sentinel:
                word = size_word[block]
                end = block + W + (word & ~FLAG_BITS)
                if word & FREE_BIT:
                    yield block, end - block, FREE_BLOCK, None
                else:
                    yield block, end - block, USED, block + W
                block = end
        # The sentinel's size word, and in a pool the bytes align_down left over.
        start = self.arena.base if sentinel is None else sentinel
        if self.arena.brk > start:
            yield start, self.arena.brk - start, META, None

    def free_blocks(self) -> Iterator[tuple[int, int]]:
        W = self.word
        size_word = self._size_word
        for free_list in self._lists:
            for block in free_list:
                yield block, W + (size_word[block] & ~FLAG_BITS)

    def fragmentation_probe(self) -> tuple[int, int, int, int]:
        """(F, largest free block, top block, largest other), without a scan:
        F is kept as blocks enter and leave the lists, and the largest free
        blocks sit in the highest non-empty list (fls of both bitmaps).  The
        "top" block is the free block just below the sentinel: TLSF never lets a
        free block touch the break itself (:mod:`heapscope.allocators.tlsf_measures`)."""
        return self._probe()()

    def _probe(self):
        """The fragmentation probe, its containers bound once
        (:func:`heapscope.allocators.tlsf_measures.probe_of`)."""
        from .tlsf_measures import probe_of     # it imports this module
        return probe_of(self)

    def measure_row(self, rec) -> tuple:
        """The build's row through this policy's own probe and counters
        (:func:`heapscope.allocators.tlsf_measures.row_writer`); a subclass
        gets the default row."""
        if type(self) is not TLSF:
            return super().measure_row(rec)
        from .tlsf_measures import row_writer
        return row_writer(self, rec)
    def _policy_signature(self) -> tuple:
        lists = tuple((i // SL_INDEX_COUNT, i % SL_INDEX_COUNT, tuple(reversed(lst)))
                      for i, lst in enumerate(self._lists) if lst)
        return (self.fl_bitmap, tuple(self.sl_bitmap), lists)

    def _check_structure(self, blocks: list[Block]) -> None:
        """``tlsf_check`` and ``tlsf_check_pool`` of the reference, and more
        (:func:`heapscope.allocators.tlsf_check.tlsf_check`)."""
        from .tlsf_check import tlsf_check      # it imports this module
        tlsf_check(self, blocks)
