"""GNU malloc: Mike Haertel's allocator (written May 1989), the malloc of
glibc 1.x and of Emacs' ``gmalloc.c`` before glibc moved to ptmalloc: the
"GNU" malloc of seed 003 (Dowdeswell 1999), fastest or close on most of his
region counts.

Read: the standalone GNU malloc as NetBSD imported it,
``external/gpl2/libmalloc/dist/`` in NetBSD's src (``malloc.c`` "Copyright
1990, 1991, 1992, 1993, 1994, 1995", ``free.c`` and ``realloc.c`` 1990-1994,
``malloc.h`` 1990-1995; read at commits 34bf7bd2, c7c5421c and 9dabb0e2).
It is GPL-licensed code: we read it for the algorithm and wrote our own.

The original, rule by rule:

* **Blocks.** The heap is a sequence of ``BLOCKSIZE`` = 4096-byte blocks
  (``BLOCKLOG`` 12), numbered from 1 at ``_heapbase``; the **block info
  table** ``_heapinfo`` holds one entry per block (three words: busy ``type``
  with fragment counts or a size, or a free cluster's size, next and prev).
  The table itself is the first thing in the heap: ``initialize`` gets room
  for ``HEAP / BLOCKSIZE`` = 1024 entries (enough for 4 MiB), and the heap's
  first block is the table's.  No object has a header: the table says
  everything, so the payload is the block (or fragment) address.
* **Large requests** (more than half a block) get ``BLOCKIFY(size)`` whole
  blocks.  The free clusters form one circular list in address order through
  entry 0, the anchor (size 0).  The search is first fit *from the roving
  index* ``_heapindex`` ("Search the free list in a circle starting at the
  last place visited"); the front of the cluster is taken and the rest stays
  on the list where it was, with ``_heapindex`` at it.  No fit: if the last
  free cluster ends at the break, ``morecore`` only the missing blocks and
  extend it; else ``morecore`` the whole request.
* **Small requests** are raised to ``sizeof (struct list)`` (two pointers) and
  to a power of two 2**log; ``_fraghead[log]`` is a doubly linked list of free
  fragments of that size.  The head is taken.  An empty list gets a new block
  (``malloc (BLOCKSIZE)``), cut into fragments: the first is returned, the
  others are pushed on the list.  The block's entry counts its free
  fragments (``nfree``) and names the first (``first``).
* **free** of blocks walks from ``_heapindex`` to the cluster before the
  block, joins it to that cluster or links it after it, joins the next
  cluster if it touches, and sets ``_heapindex`` there.  When the last
  cluster reaches the end of the heap and has at least ``FINAL_FREE_BLOCKS``
  (8) blocks, it is all given back to the system.
* **free** of a fragment links it right after its block's first free
  fragment (or at the head when it is the block's only free one), so a
  block's free fragments stay together on the list; when every fragment of
  the block is free, they all leave the list and the block is freed.
* **morecore** grows the table when the heap outgrows it: a table twice as
  large is put at the top, the old one is freed like any block.
* **realloc**: a large block that shrinks gives its tail back in place; one
  that grows is freed first ("in case there is sufficient adjacent free space
  to grow without moving", with giving memory back to the system held off),
  then malloc'd; if that fails, the block is taken back ("unfree").  A large
  block shrinking to a small size moves to a fragment; a fragment stays when
  the new size is of its class, else moves.

Simulation choices and deviations (each on ``docs/strategies/gnu-malloc.md``):

* Word W: an info entry is ``3W`` bytes (24 on LP64: a 24 KiB initial table,
  6 blocks; 12 on ILP32), ``struct list`` is ``2W``: the smallest fragment is
  16 bytes on LP64, 8 on ILP32.
* ``realloc(p, 0)`` frees p and returns ``malloc (0)`` as the original does;
  if that malloc fails, the heap is put back as it was before the call (the
  original would have lost p; a failed realloc keeps its block in the
  replay).
* ``align`` above ``2W`` raises the smallest fragment to it (fragments are
  aligned to their size, blocks to BLOCKSIZE); ``align`` may not exceed the
  block size.  ``blocksize`` is 512 (``BLOCKLOG`` 9, 16-bit ints) to 4096.
* ``memalign``/``valloc``, the hooks, the statistics and the mmap'd variant
  are left out.  A fixed pool is handed out by ``morecore`` from its bottom
  and takes given-back blocks back; its first table spans the pool, not
  ``HEAP`` (a port sizes that constant to its memory).
* A table's last block is taken whole at once (``align`` would pad the break
  to the next block boundary at its next call: the same memory).

Search length: the free clusters a large request's search examined (the
anchor not counted); a small request examines the one fragment it takes,
plus the search for a new block when its list was empty.  A free of blocks
counts the clusters its walk from ``_heapindex`` read.
"""

from __future__ import annotations

import copy
from typing import Iterator

from . import structure
from .events import (FREE, BlockFragmented, Coalesce, FragBlockEmptied, FragLinked, Grow,
                     InsertionPoint, ListInsert, ListRemove, Note, Placed, PointerMove, Released,
                     Shrink, Split, TableMoved, TopExtended, Visit, WalkStep)
from .explain import count
from .free_classes import ROW, ROW_FIELDS, FreeClasses
from .params import INT, SIZE, Param, ParamError
from .shrink import give_back
from .strategy import FREE_BLOCK, META, USED, Block, Strategy

#: HEAP: the bytes of heap the first info table describes
HEAP = 4194304
#: FINAL_FREE_BLOCKS: a final free cluster this long goes back to the system
FINAL_FREE_BLOCKS = 8
#: the one list of free clusters carries no index in ListInsert/ListRemove
CLUSTERS: tuple[int, ...] = ()


class GNUMalloc(Strategy):
    """Mike Haertel's GNU malloc (1989-1995): a block info table, power-of-two
    fragments with per-size lists, first fit over free clusters from a roving
    index."""

    #: dicts and lists of ints only: a copy of the heap copies them without looking (state_copy.py)
    flat_state = Strategy.flat_state + ('fsize', 'fnext', 'fprev', 'busy_size', 'frag_log', 'nfree', 'first', 'frag_next', 'frag_prev')
    name = "gnu-malloc"
    #: the event types this policy's records can hold (conditions.py: a condition
    #: on another is answered without a replay)
    makes_events = frozenset({"BlockFragmented", "Coalesce", "FragBlockEmptied", "FragLinked", "Grow",
                              "GrowFailed", "InsertionPoint", "ListInsert", "ListRemove", "Note",
                              "Placed", "PointerMove", "Released", "Shrink", "Split", "TableMoved",
                              "TopExtended", "Visit", "WalkStep"})
    title = "GNU malloc (Haertel): block table, fragment lists, clusters from a roving index"
    citation = "M. Haertel, GNU malloc.c/free.c/realloc.c (1989-1995), glibc 1.x, Emacs gmalloc.c"

    params = (
        Param("blocksize", SIZE, 4096, "BLOCKSIZE: the heap is whole blocks; requests up to half "
              "a block get a fragment", low=512, high=4096, power_of_two=True),
        Param("final_free_blocks", INT, FINAL_FREE_BLOCKS, "FINAL_FREE_BLOCKS: a free cluster "
              "this long at the end of the heap goes back to the system", low=1, high=1 << 20),
    )

    def __init__(self, *, blocksize: int = 4096, final_free_blocks: int = FINAL_FREE_BLOCKS,
                 **common) -> None:
        super().__init__(**common)
        if self.align > blocksize:
            raise ParamError(f"gnu-malloc: align={self.align} is more than a block; blocksize "
                             f"accepts powers of two in {self.align}..4096 here")
        self.B = blocksize
        self.final_free_blocks = final_free_blocks
        self.heapbase = self.arena.base      # _heapbase: where the first table goes
        self.heapsize = 0                    # entries in _heapinfo
        self.heaplimit = 0                   # _heaplimit
        self.heapindex = 0                   # _heapindex
        self.table = (0, 0)                  # (block, blocks) of the current _heapinfo
        # free clusters: _heapinfo[b].free.{size,next,prev}; entry 0 is the anchor
        self.fsize: dict[int, int] = {0: 0}
        self.fnext: dict[int, int] = {0: 0}
        self.fprev: dict[int, int] = {0: 0}
        # busy blocks: a large object's first block -> its blocks; fragment blocks -> log
        self.busy_size: dict[int, int] = {}
        self.frag_log: dict[int, int] = {}
        self.nfree: dict[int, int] = {}
        self.first: dict[int, int] = {}
        # _fraghead[log]: doubly linked by fragment address; HEAD(log) = -1 - log
        self.frag_next: dict[int, int | None] = {}
        self.frag_prev: dict[int, int] = {}
        self.internal: set[int] = set()      # large objects malloc'd for the allocator itself
        self.classes = FreeClasses()

    # Sizes that follow from BLOCKSIZE and the word, as the original's macros
    # do; as properties they keep the instance at fewer than 30 attributes,
    # the most CPython 3.11 reads inline (tests/test_attribute_reads.py; as
    # attributes they cost its replay 7%: benchmarks/bench_inline_attributes.py).
    @property
    def blocklog(self) -> int:
        """BLOCKLOG: log2 of BLOCKSIZE."""
        return self.B.bit_length() - 1

    @property
    def entry(self) -> int:
        """sizeof (malloc_info): one _heapinfo entry, three words."""
        return 3 * self.word

    @property
    def list_size(self) -> int:
        """sizeof (struct list), or the alignment asked when that is more."""
        return max(2 * self.word, self.align)

    @property
    def min_log(self) -> int:
        """log2 of the smallest fragment: a struct list."""
        return (self.list_size - 1).bit_length()

    @property
    def initialized(self) -> bool:
        """__malloc_initialized: _heapinfo exists (it always has entries)."""
        return self.heapsize > 0

    # ------------------------------------------------------------ helpers
    def BLOCK(self, a: int) -> int:
        return (a - self.heapbase) // self.B + 1

    def ADDRESS(self, b: int) -> int:
        return (b - 1) * self.B + self.heapbase

    @staticmethod
    def _head(log: int) -> int:
        return -1 - log

    def _cluster_addr(self, b: int) -> int | None:
        return None if b == 0 else self.ADDRESS(b)

    def _set_heapindex(self, b: int) -> None:
        if b != self.heapindex:
            self._emit(PointerMove, "_heapindex", self._cluster_addr(self.heapindex), self._cluster_addr(b))
        self.heapindex = b

    def _blockify(self, size: int) -> int:
        return (size + self.B - 1) // self.B

    # --------------------------------------------------------- core memory
    def _align(self, size: int) -> int | None:
        """align(): morecore memory on a block boundary (the break always is one here)."""
        return self._take_core(size)

    def _initialize(self) -> bool:
        heapsize = HEAP // self.B
        if self.arena.fixed:
            # HEAP is "the amount of memory spanned by the initial heap
            # table": a port to a fixed pool sizes it to the pool (entry 0 is
            # the anchor, so one more than the pool's blocks)
            heapsize = min(HEAP, self.arena.size) // self.B + 1
        addr = self._align(self._blockify(heapsize * self.entry) * self.B)
        if addr is None:
            return False
        self.heapsize = heapsize
        self.heapbase = addr
        self.table = (self.BLOCK(addr), self._blockify(heapsize * self.entry))
        self._event(Note(f"initialize: _heapinfo, {heapsize} entries of {self.entry} B, is the "
                         f"first thing in the heap, at {addr:#x}"))
        return True

    def _morecore(self, size: int) -> int | None:
        """morecore(): memory for ``size`` bytes, growing the info table when
        the heap outgrows it."""
        result = self._align(size)
        if result is None:
            return None
        if self.BLOCK(result + size) > self.heapsize:
            newsize = self.heapsize
            while self.BLOCK(result + size) > newsize:
                newsize *= 2
            newinfo = self._align(self._blockify(newsize * self.entry) * self.B)
            if newinfo is None:
                give_back(self, size)
                return None
            old_block, old_blocks = self.table
            self.table = (self.BLOCK(newinfo), self._blockify(newsize * self.entry))
            self._event(TableMoved(self.ADDRESS(old_block), old_blocks * self.B, newinfo,
                                   self.table[1] * self.B))
            # the old table becomes a busy object, freed like any other
            self.busy_size[old_block] = old_blocks
            self.internal.add(old_block)
            self.heapsize = newsize
            self._free_blocks(old_block)
        self.heaplimit = self.BLOCK(result + size)
        return result

    # ------------------------------------------------------------- malloc
    def _malloc(self, size: int) -> int | None:
        result = self._gmalloc(size)
        if result is None:
            return None
        B = self.B
        b = (result - self.heapbase) // B + 1           # BLOCK(result)
        log = self.frag_log.get(b)
        block = (1 << log) if log is not None else self.busy_size[b] * B
        self._note_alloc(result, result, block, size, 0)
        if self.rec.events is not None:
            self._event(Placed(result, block, result, size))
        return result

    def _gmalloc(self, size: int, internal: bool = False) -> int | None:
        """malloc(): a fragment or a run of blocks."""
        if not self.heapsize and not self._initialize():     # (not initialized)
            return None
        list_size = 2 * self.word                           # (list_size, inline)
        if self.align > list_size:
            list_size = self.align
        if size < list_size:
            size = list_size
        if size <= self.B // 2:
            return self._fragment(size)
        return self._blocks_for(self._blockify(size), internal)

    def _fragment(self, size: int) -> int | None:
        log = (size - 1).bit_length()
        frag = 1 << log
        head = -1 - log                                     # _head(log)
        nxt = self.frag_next
        prv = self.frag_prev
        first = nxt.get(head)
        rec = self.rec
        if first is not None:
            # Pop a fragment out of the fragment list.
            after = nxt.pop(first)
            del prv[first]
            nxt[head] = after
            if after is not None:
                prv[after] = head
            B, heapbase = self.B, self.heapbase
            block = (first - heapbase) // B + 1             # BLOCK(first)
            nfree = self.nfree
            left = nfree[block] = nfree[block] - 1
            if left:
                self.first[block] = (after - ((block - 1) * B + heapbase)) >> log
            self.classes.remove_chunk(frag)
            rec.visits += 1
            if rec.events is not None:
                rec.events.append(Visit(first, frag, True))
                rec.events.append(ListRemove(first, frag, (log,)))
            return first
        # No free fragments of the desired size: a new block, broken into fragments.
        result = self._blocks_for(1, internal=True)
        if result is None:
            return None
        block = self.BLOCK(result)
        del self.busy_size[block]
        self.internal.discard(block)
        count = self.B >> log
        for i in range(1, count):
            f = result + (i << log)
            old = nxt.get(head)
            nxt[f] = old
            prv[f] = head
            nxt[head] = f
            if old is not None:
                prv[old] = f
        self.frag_log[block] = log
        self.nfree[block] = count - 1
        self.first[block] = count - 1
        self.classes.add_chunk(frag, count - 1)
        self._emit(BlockFragmented, result, log, count)
        return result

    def _blocks_for(self, blocks: int, internal: bool = False) -> int | None:
        """The large-request path: first fit in a circle from _heapindex."""
        fsize, fnext, fprev = self.fsize, self.fnext, self.fprev
        rec = self.rec
        events = rec.events
        B = self.B
        start = block = self.heapindex
        while True:
            size = fsize[block]
            if block:
                rec.visits += 1
                if events is not None:
                    events.append(Visit(self.ADDRESS(block), size * B, size >= blocks))
            if size >= blocks:
                break
            block = fnext[block]
            if block == start:
                # Need to get more from the system.  Is the last free cluster at the break?
                block = fprev[0]
                lastblocks = fsize[block]
                if (self.heaplimit != 0 and block + lastblocks == self.heaplimit
                        and self.core_top == self.ADDRESS(block + lastblocks)):
                    if self._morecore((blocks - lastblocks) * B) is not None:
                        # the final cluster may have changed, joined to a freed table
                        block = fprev[0]
                        self.classes.runs.remove(self.ADDRESS(block), fsize[block] * B)
                        self._event(TopExtended(self.ADDRESS(block), fsize[block] * B,
                                                (blocks - lastblocks) * B))
                        fsize[block] += blocks - lastblocks
                        self.classes.runs.add(self.ADDRESS(block), fsize[block] * B)
                        continue
                result = self._morecore(blocks * B)
                if result is None:
                    return None
                b = self.BLOCK(result)
                self.busy_size[b] = blocks
                if internal:
                    self.internal.add(b)
                return result
        # A suitable free list entry: take what we need from its front.
        result = self.ADDRESS(block)
        have = fsize[block]
        self.classes.runs.remove(result, have * B)
        if have > blocks:
            rest = block + blocks
            fsize[rest] = have - blocks
            fnext[rest] = fnext[block]
            fprev[rest] = fprev[block]
            fnext[fprev[block]] = rest
            fprev[fnext[block]] = rest
            self.classes.runs.add(self.ADDRESS(rest), (have - blocks) * B)
            rec.splits += 1
            self._emit(Split, result, have * B, result, blocks * B, self.ADDRESS(rest), (have - blocks) * B)
            new_index = rest
        else:
            fprev[fnext[block]] = fprev[block]
            fnext[fprev[block]] = fnext[block]
            self._emit(ListRemove, result, have * B, CLUSTERS)
            new_index = fnext[block]
        del fsize[block], fnext[block], fprev[block]
        self._set_heapindex(new_index)
        self.busy_size[block] = blocks
        if internal:
            self.internal.add(block)
        return result

    # --------------------------------------------------------------- free
    def _free(self, payload: int) -> None:
        lb = self._note_free(payload)
        if self.rec.events is not None:
            self._event(Released(lb.block_addr, lb.block_size))
        self._free_internal(payload)

    def _free_internal(self, ptr: int) -> None:
        block = (ptr - self.heapbase) // self.B + 1         # BLOCK(ptr)
        log = self.frag_log.get(block)
        if log is None:
            self._free_blocks(block)
        else:
            self._free_fragment(ptr, block, log)

    def _walk(self, block: int) -> int:
        """The cluster before ``block`` in the free list, walked to from
        _heapindex ("this may benefit programs with locality of allocation")."""
        fnext, fprev, fsize = self.fnext, self.fprev, self.fsize
        path = []
        i = self.heapindex
        if i > block:
            while i > block:
                path.append(i)
                i = fprev[i]
        else:
            while True:
                path.append(i)
                i = fnext[i]
                if not (0 < i < block):
                    break
            path.append(i)
            i = fprev[i]
        path.append(i)
        rec = self.rec
        search = rec.kind == FREE
        events = rec.events
        seen = set()
        for c in path:
            if c == 0 or c in seen:
                continue
            seen.add(c)
            stop = c == i
            if search:
                rec.visits += 1
            else:
                rec.walked += 1
            if events is not None:
                a, s = self.ADDRESS(c), fsize[c] * self.B
                events.append(Visit(a, s, stop, True) if search else WalkStep(a, s, stop))
        return i

    def _free_blocks(self, block: int, may_return: bool = True) -> None:
        """_free_internal, case 0: link or join the blocks into the free list,
        and give the last ones back to the system if ``may_return`` (realloc,
        freeing before it mallocs again, sets _heaplimit = 0 to keep them)."""
        fsize, fnext, fprev = self.fsize, self.fnext, self.fprev
        B = self.B
        runs = self.classes.runs
        blocks = self.busy_size.pop(block)
        self.internal.discard(block)
        i = self._walk(block)
        nxt = fnext[i]
        if self.rec.events is not None:
            self._event(InsertionPoint(self.ADDRESS(block), blocks * B, self._cluster_addr(i),
                                       self._cluster_addr(nxt)))
        if i and block == i + fsize[i]:
            # Coalesce this block with its predecessor.
            self.rec.merges += 1
            self._emit(Coalesce, self.ADDRESS(i), fsize[i] * B, self.ADDRESS(block), blocks * B)
            runs.remove(self.ADDRESS(i), fsize[i] * B)
            fsize[i] += blocks
            block = i
        else:
            fsize[block] = blocks
            fnext[block] = nxt
            fprev[block] = i
            fnext[i] = block
            fprev[nxt] = block
            self._emit(ListInsert, self.ADDRESS(block), blocks * B, CLUSTERS)
        nxt = fnext[block]
        if nxt and block + fsize[block] == nxt:
            # ... and with its successor.
            runs.remove(self.ADDRESS(nxt), fsize[nxt] * B)
            self._emit(ListRemove, self.ADDRESS(nxt), fsize[nxt] * B, CLUSTERS)
            self.rec.merges += 1
            self._emit(Coalesce, self.ADDRESS(block), fsize[block] * B, self.ADDRESS(nxt), fsize[nxt] * B)
            fsize[block] += fsize[nxt]
            fnext[block] = fnext[nxt]
            fprev[fnext[nxt]] = block
            del fsize[nxt], fnext[nxt], fprev[nxt]
        # Now see if we can return stuff to the system.
        blocks = fsize[block]
        if (may_return and blocks >= self.final_free_blocks and block + blocks == self.heaplimit
                and self.core_top == self.ADDRESS(block + blocks)):
            self.heaplimit -= blocks
            prev = fprev[block]
            fnext[prev] = fnext[block]
            fprev[fnext[block]] = prev
            del fsize[block], fnext[block], fprev[block]
            self._emit(ListRemove, self.ADDRESS(block), blocks * B, CLUSTERS)
            give_back(self, blocks * B)
            block = prev
        else:
            runs.add(self.ADDRESS(block), blocks * B)
        self._set_heapindex(block)

    def _free_fragment(self, ptr: int, block: int, log: int) -> None:
        """_free_internal, a fragment: link it beside its block's other free
        ones, or free the whole block when they are all free."""
        frag = 1 << log
        B = self.B
        count = B >> log
        nxt, prv = self.frag_next, self.frag_prev
        nfree = self.nfree[block]
        address = (block - 1) * B + self.heapbase           # ADDRESS(block)
        first = address + (self.first[block] << log)
        if nfree == count - 1:
            # All fragments of this block are free: off the list, free the block.
            self._emit(FragBlockEmptied, address, log, count)
            prev_of_group = prv[first]
            f = first
            for _ in range(count - 1):
                after = nxt.pop(f)
                del prv[f]
                f = after
            nxt[prev_of_group] = f
            if f is not None:
                prv[f] = prev_of_group
            self.classes.remove_chunk(frag, count - 1)
            del self.frag_log[block], self.nfree[block], self.first[block]
            self.busy_size[block] = 1
            self.internal.add(block)
            self._free_blocks(block)
        elif nfree:
            after = nxt[first]
            nxt[ptr] = after
            prv[ptr] = first
            nxt[first] = ptr
            if after is not None:
                prv[after] = ptr
            self.nfree[block] = nfree + 1
            self.classes.add_chunk(frag)
            if self.rec.events is not None:
                self._event(FragLinked(ptr, frag, log, first))
        else:
            head = -1 - log                                 # _head(log)
            old = nxt.get(head)
            nxt[ptr] = old
            prv[ptr] = head
            nxt[head] = ptr
            if old is not None:
                prv[old] = ptr
            self.nfree[block] = 1
            self.first[block] = (ptr - address) >> log
            self.classes.add_chunk(frag)
            if self.rec.events is not None:
                self._event(ListInsert(ptr, frag, (log,)))

    # ------------------------------------------------------------ realloc
    def _realloc(self, payload: int, size: int) -> int | None:
        if size == 0:
            return self._realloc_to_zero(payload)
        block = self.BLOCK(payload)
        log = self.frag_log.get(block)
        if log is not None:
            if (1 << (log - 1)) < size <= (1 << log):
                self._rebook(payload, size)
                return payload
            return self._move_to_new_block(payload, size)
        B = self.B
        if size <= B // 2:
            new = self._malloc(size)
            if new is not None:
                self._free(payload)
                return new
        blocks = self._blockify(size)
        have = self.busy_size[block]
        lb = self.live[payload]
        if blocks < have:
            # Smaller: the tail goes back to the free list.
            tail = block + blocks
            self.busy_size[block] = blocks
            self.busy_size[tail] = have - blocks
            self.internal.add(tail)
            self.rec.splits += 1
            self._emit(Split, payload, have * B, payload, blocks * B, self.ADDRESS(tail), (have - blocks) * B)
            self._note_free(payload)
            self._note_alloc(payload, payload, blocks * B, size, 0)
            self._free_blocks(tail)
            return payload
        if blocks == have:
            self._rebook(payload, size)
            return payload
        # Won't fit: free first (not giving memory back), then malloc.
        self._note_free(payload)
        self._emit(Released, payload, have * B)
        self._free_blocks(block, may_return=False)
        result = self._gmalloc(size)
        if result is None:
            self._unfree(block, have)
            self._note_alloc(payload, payload, have * B, lb.request, 0)
            self._emit(Note, "realloc failed: the block was taken back where it was (\"unfree\")")
            return None
        nb = self.busy_size[self.BLOCK(result)]
        self._note_alloc(result, result, nb * B, size, 0)
        self._emit(Placed, result, nb * B, result, size)
        return result

    def _unfree(self, block: int, blocks: int) -> None:
        """"Now we're really in trouble.  We have to unfree the thing we just
        freed.  Unfortunately it might have been coalesced with its neighbors."""
        B = self.B
        if self.heapindex == block:
            self._blocks_for(blocks)
        else:
            previous = self._blocks_for(block - self.heapindex, internal=True)
            self._blocks_for(blocks)
            self._free_internal(previous)

    def _realloc_to_zero(self, payload: int) -> int | None:
        """free (ptr); return malloc (0): with the heap put back if that malloc fails."""
        saved = copy.deepcopy({k: v for k, v in vars(self).items() if k != "rec"})
        rec = self.rec
        counters = {k: getattr(rec, k) for k in ("visits", "splits", "merges", "grows", "walked")}
        events = list(rec.events) if rec.events is not None else None
        self._free(payload)
        new = self._malloc(0)
        if new is None:
            vars(self).update(saved)
            for k, v in counters.items():
                setattr(rec, k, v)
            if events is not None:
                rec.events[:] = events
            self._event(Note("realloc(p, 0): free(p) then malloc(0) failed: the heap is as it was, "
                             "p kept"))
        return new

    # ------------------------------------------------------------ explain
    def explain_event(self, e) -> str | None:
        """malloc.c's words: ``_heapinfo``, ``_heapindex``, ``_fraghead[log]``, ``BLOCKIFY``."""
        B = self.B
        if isinstance(e, Visit):
            if e.place:
                return (f"free: i = {e.addr:#x} ({count(e.size // B, 'block')}) on the way from _heapindex"
                        + (": the freed block goes after it" if e.fits else ""))
            if e.size < B:
                return f"_fraghead[{e.size.bit_length() - 1}].next = {e.addr:#x}: pop it"
            verdict = "free.size >= blocks: take it" if e.fits else "free.size < blocks: next"
            return f"block {self.BLOCK(e.addr)} at {e.addr:#x}: {count(e.size // B, ('free block', 'free blocks'))}: {verdict}"
        if isinstance(e, WalkStep):
            return (f"free (inside this call): i = {e.addr:#x} ({count(e.size // B, 'block')})"
                    + (": the freed block goes after it" if e.stop else ""))
        if isinstance(e, ListRemove):
            if e.where:
                return f"unlinked fragment {e.addr:#x} from _fraghead[{e.where[0]}]"
            return f"cluster {e.addr:#x} ({count(e.size // B, 'block')}) leaves the free list"
        if isinstance(e, ListInsert):
            if e.where:
                return (f"fragment {e.addr:#x} is its block's only free one: pushed on "
                        f"_fraghead[{e.where[0]}]")
            return f"linked {e.addr:#x} ({count(e.size // B, 'block')}) into the free list"
        if isinstance(e, Split):
            return (f"took {count(e.taken_size // B, 'block')} at {e.taken_addr:#x}; the tail end "
                    f"({count(e.rest_size // B, 'block')} at {e.rest_addr:#x}) is relinked in its place")
        if isinstance(e, Coalesce):
            return (f"joined {e.low_addr:#x} ({count(e.low_size // B, 'block')}) and {e.high_addr:#x} "
                    f"({count(e.high_size // B, 'block')}): {count(e.size // B, 'block')}")
        if isinstance(e, PointerMove) and e.name == "_heapindex":
            return f"_heapindex = {'0 (the anchor)' if e.new is None else f'{e.new:#x}'}"
        if isinstance(e, BlockFragmented):
            return (f"_fraghead[{e.log}] empty: malloc (BLOCKSIZE) = {e.block:#x}, cut into {e.count} "
                    f"fragments of {1 << e.log} B; the first is returned, the rest linked")
        if isinstance(e, FragLinked):
            return f"free: fragment {e.addr:#x} linked after {e.after:#x}, its block's first free one"
        if isinstance(e, FragBlockEmptied):
            return (f"free: every fragment of block {e.block:#x} is free: unlink them from "
                    f"_fraghead[{e.log}] and free the block")
        if isinstance(e, TableMoved):
            return (f"morecore: the heap outgrew _heapinfo: a table of {e.new_size} B at "
                    f"{e.new_addr:#x}; the old one ({e.old_size} B at {e.old_addr:#x}) is freed")
        if isinstance(e, Grow):
            return f"morecore: __morecore ({e.increment}) = {e.old_brk:#x}"
        if isinstance(e, Shrink):
            return (f"the final free cluster has {e.decrement // B} >= {self.final_free_blocks} "
                    f"blocks and ends the heap: __morecore (-{e.decrement})")
        if isinstance(e, InsertionPoint):
            prev = "the anchor" if e.prev is None else f"{e.prev:#x}"
            return f"free: block {e.addr:#x} ({count(e.size // B, 'block')}) goes after {prev}"
        if isinstance(e, Placed):
            return f"malloc returns {e.payload:#x} ({e.size} B) for {e.request} B"
        if isinstance(e, Released):
            return f"free ({e.addr:#x}): _heapinfo says {e.size} B"
        return None

    def describe_record(self, rec) -> list[str]:
        """The generic clauses, then what the step did to fragments, the table
        and the break."""
        out = super().describe_record(rec)
        for e in rec.events or ():
            if isinstance(e, BlockFragmented):
                out.append(f"cut a block into {e.count} fragments of {1 << e.log} B")
            elif isinstance(e, FragBlockEmptied):
                out.append("freed a block whose fragments were all free")
            elif isinstance(e, TableMoved):
                out.append(f"moved the block table to {e.new_addr:#x}")
            elif isinstance(e, Shrink):
                out.append(f"gave {count(e.decrement // self.B, 'block')} back to the system")
        return out

    # -------------------------------------------------------------- views
    def _frag_list(self, log: int) -> list[int]:
        out = []
        f = self.frag_next.get(self._head(log))
        while f is not None:
            out.append(f)
            f = self.frag_next[f]
        return out

    def free_clusters(self) -> list[int]:
        """Cluster block numbers in list order from the anchor (address order)."""
        out = []
        b = self.fnext[0]
        while b != 0:
            out.append(b)
            b = self.fnext[b]
        return out

    def _block_runs(self) -> list[list]:
        """[[addr, nblocks, state]]: 'table', 'free', 'busy', 'frags'."""
        out = []
        if not self.initialized:
            return out
        b = self.BLOCK(self.heapbase)
        end = self.BLOCK(self.core_top)
        tb, tn = self.table
        while b < end:
            if b == tb:
                n, state = tn, "table"
            elif b in self.fsize:
                n, state = self.fsize[b], "free"
            elif b in self.busy_size:
                n, state = self.busy_size[b], "busy"
            elif b in self.frag_log:
                n, state = 1, "frags"
            else:
                raise AssertionError(f"block {b} at {self.ADDRESS(b):#x} is described by nothing")
            out.append([self.ADDRESS(b), n, state])
            b += n
        return out

    def structure(self) -> dict:
        """The block table as runs, the free-cluster list from the anchor,
        ``_heapindex`` and the fragment lists (kind ``block-table``)."""
        B = self.B
        clusters = [self.ADDRESS(b) for b in self.free_clusters()]
        sizes = {self.ADDRESS(b): self.fsize[b] * B for b in self.free_clusters()}
        fraglists = {}
        for log in range(self.min_log, self.blocklog):
            fraglists[log] = lst = self._frag_list(log)
            for f in lst:
                sizes[f] = 1 << log
        frag_blocks = {self.ADDRESS(b): {"log": log, "nfree": self.nfree[b], "first": self.first[b]}
                       for b, log in sorted(self.frag_log.items())}
        apart = []
        reserve = self.arena.brk - self.core_top
        if reserve:
            sizes[self.core_top] = reserve
            apart.append(structure.outside(self.core_top, "the pool not handed out by morecore yet"))
        heapindex = self._cluster_addr(self.heapindex)
        lists = {"free clusters (from the anchor)": clusters}
        lists.update({f"_fraghead[{log}] ({1 << log} B)": lst for log, lst in fraglists.items()})
        return structure.make("block-table", dict(sorted(sizes.items())), outside_blocks=apart,
                              pointers=[structure.pointer("_heapindex", heapindex)],
                              blocksize=B, blocks=self._block_runs(), free_clusters=clusters,
                              heapindex=heapindex, fraglists=fraglists, frag_blocks=frag_blocks,
                              lists=lists)

    def free_blocks(self) -> Iterator[tuple[int, int]]:
        B = self.B
        for b in self.free_clusters():
            yield self.ADDRESS(b), self.fsize[b] * B
        for f in self.frag_prev:
            yield f, 1 << self.frag_log[self.BLOCK(f)]
        reserve = self.arena.brk - self.core_top
        if reserve:
            yield self.core_top, reserve

    def fragmentation_probe(self) -> tuple[int, int, int, int]:
        top_end = self.core_top
        reserve = self.arena.brk - top_end
        top_chunk = 0
        if not reserve and self.initialized:
            last = self.BLOCK(top_end - 1)
            log = self.frag_log.get(last)
            if log is not None and top_end - (1 << log) in self.frag_prev:
                top_chunk = 1 << log
        return self.classes.probe(top_end, top_chunk, reserve)

    def measure_row(self, rec) -> tuple:
        """The build's row through :meth:`fragmentation_probe` worked out in
        place and the counters this policy adds to
        (:data:`~heapscope.allocators.free_classes.ROW_FIELDS`); a subclass gets
        the default row."""
        if type(self) is not GNUMalloc:
            return super().measure_row(rec)
        s = self
        arena = self.arena
        fixed = arena.fixed
        B = self.B
        pack = ROW.pack_into

        # The books are read through s at each step: a failed realloc(p, 0)
        # puts back copies of them (_realloc_to_zero).
        def write(buf, off, live_bytes, payload):
            top_end = s.core_top
            reserve = arena.brk - top_end
            top_chunk = 0
            if not reserve and s.heapsize:
                log = s.frag_log.get((top_end - 1 - s.heapbase) // B + 1)
                if log is not None and top_end - (1 << log) in s.frag_prev:
                    top_chunk = 1 << log
            free, _, top, below = s.classes.probe(top_end, top_chunk, reserve)
            pack(buf, off, s.touched_high - s.touched_low if fixed else arena.brk, live_bytes,
                 s.in_use, s.header_in_use, free, top, below,
                 rec.visits, rec.splits, rec.merges, rec.grows, rec.walked, payload)
        return ROW_FIELDS, write

    def _blocks(self):
        B = self.B
        free_frags = self.frag_prev
        for addr, n, state in self._block_runs():
            if state == "free":
                yield addr, n * B, FREE_BLOCK, None
            elif state == "table" or (state == "busy" and self.BLOCK(addr) in self.internal):
                yield addr, n * B, META, None
            elif state == "busy":
                yield addr, n * B, USED, addr
            else:
                size = 1 << self.frag_log[self.BLOCK(addr)]
                for a in range(addr, addr + B, size):
                    if a in free_frags:
                        yield a, size, FREE_BLOCK, None
                    else:
                        yield a, size, USED, a
        if self.core_top < self.arena.brk:
            yield self.core_top, self.arena.brk - self.core_top, FREE_BLOCK, None

    def _policy_signature(self) -> tuple:
        return (self.heapindex, tuple(self.free_clusters()),
                tuple(tuple(self._frag_list(log)) for log in range(self.min_log, self.blocklog)))

    # -------------------------------------------------------------- check
    def _check_structure(self, blocks: list[Block]) -> None:
        fail = self._fail
        B = self.B
        fsize, fnext, fprev = self.fsize, self.fnext, self.fprev
        if not self.initialized:
            fail(self.core_top == self.arena.base, "memory was taken before initialize")
            return
        fail(fsize[0] == 0, "the anchor's size is not 0")
        runs = self._block_runs()     # raises if a block is described by nothing
        # The free list: a ring through the anchor, address order, nothing touching.
        clusters = self.free_clusters()
        fail(len(clusters) == len(fsize) - 1, f"the free list reaches {len(clusters)} of "
                                              f"{len(fsize) - 1} clusters")
        prev = 0
        for b in clusters:
            fail(fprev[b] == prev, f"cluster {b}: prev is {fprev[b]}, not {prev}")
            fail(fsize[b] > 0, f"cluster {b} is empty")
            if prev:
                fail(prev + fsize[prev] < b, f"clusters {prev} and {b} are out of order or touch")
            prev = b
        fail(fprev[0] == prev, "the anchor's prev is not the last cluster")
        fail(self.heapindex == 0 or self.heapindex in fsize,
             f"_heapindex {self.heapindex} is not a free cluster")
        # (a final cluster of FINAL_FREE_BLOCKS may stay: realloc frees with
        # _heaplimit = 0 and its malloc may leave the tail of that cluster)
        # Fragment lists: each block's free fragments together, nfree and first right.
        seen: dict[int, list[int]] = {}
        for log in range(self.min_log, self.blocklog):
            lst = self._frag_list(log)
            prev_f = self._head(log)
            prev_block = None
            for f in lst:
                if self.frag_prev.get(f) != prev_f:
                    fail(False, f"fragment {f:#x}: broken back link")
                prev_f = f
                b = self.BLOCK(f)
                if self.frag_log.get(b) != log or (f - self.ADDRESS(b)) % (1 << log):
                    fail(False, f"fragment {f:#x} on _fraghead[{log}] is not a fragment of "
                                f"{1 << log} B of its block {b}")
                if b in seen and prev_block != b:
                    fail(False, f"the free fragments of block {b} are not together on the list")
                seen.setdefault(b, []).append(f)
                prev_block = b
        fail(sum(len(g) for g in seen.values()) == len(self.frag_prev), "fragments linked outside the lists")
        for b, log in self.frag_log.items():
            group = seen.get(b, [])
            fail(len(group) == self.nfree[b], f"block {b} says {self.nfree[b]} free fragments, "
                                              f"the list has {len(group)}")
            fail(0 <= self.nfree[b] < B >> log, f"block {b} has {self.nfree[b]} free fragments")
            if group:
                fail(self.ADDRESS(b) + (self.first[b] << log) == group[0],
                     f"block {b}: first is fragment {self.first[b]}, the list starts at {group[0]:#x}")
        # A block entirely free of fragments would have been freed.
        chunk_counts: dict[int, int] = {}
        for b, log in self.frag_log.items():
            if self.nfree[b]:
                chunk_counts[1 << log] = chunk_counts.get(1 << log, 0) + self.nfree[b]
        wrong = self.classes.mismatch(chunk_counts)
        fail(wrong is None, f"free fragments: {wrong}")
        fail(sorted(fsize[b] * B for b in clusters) == list(self.classes.runs.sizes),
             "the free cluster index does not match the clusters")
        fail(self.internal <= set(self.busy_size), "internal objects that are not busy")
        for addr, n, state in runs:
            if state == "busy" and self.BLOCK(addr) not in self.internal:
                lb = self.live.get(addr)
                fail(lb is not None and lb.block_size == n * B, f"busy object {addr:#x} is not booked")
