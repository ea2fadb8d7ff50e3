"""Doug Lea's malloc as the seeds measured it: the 2.6 line of 1996-1999.

Read: ``malloc.c`` "VERSION 2.6.6 Sun Mar 5 19:10:03 2000" (public domain;
its History dates the release Dec 5 1999), as vendored in the CVS history of
SQLite (``contrib/dlmalloc.c``, check-in 7c68d60b, "CVS 152").  Its History
lists no change to the algorithm since 2.6.4 (Nov 1996, the version John
Machin proposed to DJGPP in seed 001) but "fixed ordering problem with
boundary-stamping" (2.6.5) and WIN32 and negative-argument changes (2.6.6);
2.6.4 was read beside it (the Cygwin copy of Dec 1997) for the steps below.
The names below are the original's (``request2size``, ``bin_index``,
``frontlink``, ``last_remainder``, ``malloc_extend_top``, ``malloc_trim``,
``mmap_chunk``); the Python is our own.

Chunks and boundary tags
------------------------
A chunk is ``prev_size`` (a word), ``size`` (a word whose bit 0 is
PREV_INUSE: the chunk *before* this one is in use), then the payload; the
user pointer is two words in (``chunk2mem``).  A free chunk keeps ``fd`` and
``bk`` in its payload and its size again in the *next* chunk's ``prev_size``
(the foot), so free() finds a free lower neighbour through the foot.  A used
chunk has no foot: its payload runs over the next chunk's ``prev_size`` word,
so a chunk of S bytes holds S - W bytes (``request2size(n) = (n + W + 2W-1)
& ~(2W-1)``, at least MINSIZE = 4W).

heapscope names a chunk by the address of its ``size`` word, one word after
the original's chunk pointer: that is where its block starts in ``walk()``,
because the chunk's own ``prev_size`` word belongs to the block before it (as
that block's foot, or as the last word of its payload).  The first chunk's
``prev_size`` is never used (the first chunk has PREV_INUSE set): ``walk()``
reports it, and any alignment padding in front, as one META block.  Payload
addresses are the original's.

Where free chunks live
----------------------
* **128 bins** (``av_``), doubly linked, searched from the back (``last``,
  following ``bk``).  Sizes below 512 bytes have exact bins 8 bytes apart
  (``smallbin_index(s) = s >> 3``); larger ones go to log-spaced bins
  (``bin_index``: 32 bins 64 apart, 16 of 512, 8 of 4096, 4 of 32768, 2 of
  262144, one for the rest), kept in decreasing size order, a new chunk in
  front of chunks of its size (``frontlink``), so ties are taken oldest first.
* **binblocks**: one bit per block of 4 bins, set when a chunk is linked into
  an empty bin of the block; cleared only when malloc's scan finds the whole
  block empty ("NOT always cleared as soon as all bins in a block are empty").
* **last_remainder**: the remainder of the last split of a binned chunk, in a
  bin of its own (bin 1); tried after the exact bins and before the bin scan.
* **top**: the chunk bordering the end of the sbrk'd memory, in no bin;
  always at least MINSIZE once the heap exists.
* **mmap**: a request of at least ``mmap_threshold`` that top cannot serve
  gets a region of its own, page-rounded, released by free() (munmap).

Steps (malloc, ``mALLOc``): exact small bins ``idx`` and ``idx + 1``; or the
large request's own bin, back to front, taking an exact fit (remainder below
MINSIZE); then last_remainder (re-split, exhaust, or put in its bin); then the
bin scan from the next bin up, one binblocks block at a time, taking the first
chunk that fits (the smallest, bins being sorted) and making its remainder the
last remainder; then top, split; if top is too small, mmap (large requests)
or ``malloc_extend_top`` (``sbrk(nb + top_pad + MINSIZE)``, page-rounded after
the first call), then top again.  free (``fREe``): munmap a mapped chunk; join
a chunk bordering top into top (and its free lower neighbour), then
``malloc_trim(top_pad)`` if top reaches ``trim_threshold``; otherwise join
both free neighbours (keeping the last remainder in place if either was it)
and ``frontlink`` the result.  realloc (``rEALLOc``): forward into a free next
chunk or top, backward into a free previous chunk (with the next too), else
malloc-copy-free, where a new chunk right after the old one (cut from top) is
joined in place; any excess of at least MINSIZE is split off and freed.

Simulation choices (each listed in ``docs/strategies/dlmalloc.md``):

* ``word`` is SIZE_SZ (and the pointer size); MALLOC_ALIGNMENT = 2W as in
  2.6.  An ``align`` beyond 2W raises MALLOC_ALIGNMENT (2.7's compile-time
  option; 2.6 hardwires 2W): chunk sizes and MINSIZE round up to it.
* ``malloc_extend_top``'s two sbrk calls (the request, then the correction
  that page-aligns the break) are made as one, of their sum; when it fails
  nothing is taken (the original would keep the first call's memory).
* **mmap** regions are simulated apart from the sbrk heap, from address
  ``MMAP_BASE`` (2**46) up, lowest free gap first.  ``walk()`` is the sbrk
  heap only (what the heap map draws); :meth:`mapped_blocks` lists the regions,
  each one used block; they are booked as live blocks (A counts them), ``H``
  (``footprint``) is sbrk'd plus mapped bytes, as the original's
  ``max_total_mem`` and the seeds' "heap bytes" count both, and ``check()``
  checks them.  The heap may never grow into MMAP_BASE.
* ``heap_limit`` caps sbrk'd plus mapped bytes together.
* In a fixed pool, MORECORE hands out the pool from its bottom (as an
  embedded port's sbrk over a fixed region does) and takes trimmed memory
  back; the part not handed out is one free block outside the bins.  There
  is no mmap in a pool.
* HAVE_MREMAP is 0 (the default outside Linux libc): a mapped chunk that must
  grow is malloc-copy-freed.

Events: :class:`BinProbe` per bin looked at, :class:`BinmapProbe` per
binblocks bit tested by the scan (both count in ``rec.probes`` and
``rec.visits``), ``Visit`` per chunk examined (bin chunks, last remainder,
top), ``ListInsert``/``ListRemove`` with ``where=(bin,)``, :class:`BinWalkStep`
per chunk ``frontlink`` passes to reach a large chunk's place (``rec.walked``),
:class:`BinmapChange`, ``PointerMove`` of 'last_remainder' and 'top',
``Split`` (``rec.splits``), ``Coalesce`` (``rec.merges``), ``Grow`` (new
memory at the end of top, whose next ``Visit`` gives its new size),
:class:`Trim`, :class:`Mapped`, :class:`Unmapped`, ``Placed``, ``Released``.
A step's events say every change to ``structure()``:
:mod:`heapscope.allocators.structure_replay` follows them (kind ``bins``).
"""

from __future__ import annotations

from typing import Iterator, NamedTuple

from . import structure
from .dlmalloc_bins import BIN_FLOOR, BINBLOCKWIDTH, MAX_SMALLBIN_SIZE, NAV, SMALLBIN_WIDTH, bin_index
from .dlmalloc_events import BinmapChange, BinmapProbe, BinProbe, BinWalkStep, Mapped, Trim, Unmapped
from .dlmalloc_explain import DlmallocWords
from .events import Coalesce, GrowFailed, ListInsert, ListRemove, Note, Placed, PointerMove, Released, Split, Visit
from .params import INT, MAX_BYTES, MAX_CHUNK, SIZE, Param
from .strategy import FREE_BLOCK, META, USED, Block, Strategy, align_up

#: named here too: the bins' geometry and this policy's events have modules of their own
__all__ = ["Dlmalloc", "Mallopt", "PREV_INUSE", "LR_BIN", "MMAP_BASE", "NAV", "BINBLOCKWIDTH",
           "MAX_SMALLBIN_SIZE", "SMALLBIN_WIDTH", "BIN_FLOOR", "bin_index", "BinProbe", "BinmapProbe",
           "BinmapChange", "BinWalkStep", "Trim", "Mapped", "Unmapped"]

#: size-word bit: the previous chunk is in use
PREV_INUSE = 1
#: key of the last_remainder pseudo-bin (bin 1) in the link tables
LR_BIN = ~1

DEFAULT_TRIM_THRESHOLD = 128 * 1024
DEFAULT_TOP_PAD = 0
DEFAULT_MMAP_THRESHOLD = 128 * 1024
DEFAULT_MMAP_MAX = 64
DEFAULT_PAGESIZE = 4096

#: where simulated mmap regions go: far above any sbrk heap
MMAP_BASE = 1 << 46



class Mallopt(NamedTuple):
    """The four values ``mallopt()`` sets (M_TRIM_THRESHOLD, M_TOP_PAD,
    M_MMAP_THRESHOLD, M_MMAP_MAX), the original's globals of those names.
    One attribute for the four keeps a Dlmalloc at fewer than 30 instance
    attributes, the most CPython 3.11 reads inline (tests/test_attribute_reads.py;
    four attributes instead cost its replay 14% more instructions:
    benchmarks/bench_inline_attributes.py)."""
    trim_threshold: int | None
    top_pad: int
    mmap_threshold: int
    n_mmaps_max: int


class Dlmalloc(DlmallocWords, Strategy):
    """Doug Lea's malloc 2.6 (1996-1999): boundary tags, 128 bins, last
    remainder, top, mmap and trimming."""

    #: dicts and lists of ints only: a copy of the heap copies them without
    #: looking (heapscope.allocators.state_copy)
    flat_state = Strategy.flat_state + ('_head', '_foot', '_fd', '_bk')
    name = "dlmalloc"
    #: the event types this policy's records can hold (conditions.py: a condition
    #: on another is answered without a replay)
    makes_events = frozenset({"BinProbe", "BinWalkStep", "BinmapChange", "BinmapProbe", "Coalesce",
                              "Grow", "GrowFailed", "ListInsert", "ListRemove", "Mapped", "Note",
                              "Placed", "PointerMove", "Released", "Shrink", "Split", "Trim", "Unmapped",
                              "Visit"})
    title = "Doug Lea's malloc 2.6 (dlmalloc, 1996-1999)"
    citation = ("D. Lea, malloc.c version 2.6.6 (1999; public domain), algorithmically as "
                "2.6.4 (1996)")
    search_counts_splits = False

    params = (
        Param("heap_limit", SIZE, None, "cap on H, the sbrk'd plus the mmapped bytes: a request "
              "past it fails (ENOMEM) and the replay goes on", low=0, high=MAX_BYTES, none_ok=True,
              none_means="no limit"),
        Param("mmap_threshold", SIZE, DEFAULT_MMAP_THRESHOLD, "a padded request of at least this "
              "many bytes that top cannot serve gets an mmap region of its own "
              "(M_MMAP_THRESHOLD)", low=0, high=MAX_BYTES),
        Param("mmap_max", INT, DEFAULT_MMAP_MAX, "most mmap regions at once (M_MMAP_MAX); 0: never "
              "mmap, as on systems without it (DJGPP)", low=0, high=1 << 16),
        Param("trim_threshold", SIZE, DEFAULT_TRIM_THRESHOLD, "free() calls malloc_trim when top "
              "reaches this many bytes (M_TRIM_THRESHOLD)", low=0, high=MAX_BYTES, none_ok=True,
              none_means="never trim"),
        Param("top_pad", SIZE, DEFAULT_TOP_PAD, "extra bytes asked of sbrk on each extension, and "
              "kept by a trim (M_TOP_PAD)", low=0, high=MAX_CHUNK),
        Param("pagesize", SIZE, DEFAULT_PAGESIZE, "system page size (malloc_getpagesize): sbrk and "
              "mmap sizes round up to it", low=512, high=1 << 16, power_of_two=True),
    )

    def __init__(self, *, mmap_threshold: int = DEFAULT_MMAP_THRESHOLD,
                 mmap_max: int = DEFAULT_MMAP_MAX, trim_threshold: int | None = DEFAULT_TRIM_THRESHOLD,
                 top_pad: int = DEFAULT_TOP_PAD, pagesize: int = DEFAULT_PAGESIZE, **common) -> None:
        super().__init__(**common)
        W = self.word
        #: SIZE_SZ
        self.size_sz = W
        # MALLOC_ALIGNMENT (the property alignment): 2W, or the alignment
        # asked when that is more
        self.align = max(2 * W, self.align)
        #: MINSIZE: prev_size, size, fd, bk
        self.minsize = align_up(4 * W, self.align)
        # A pool has no mmap: its MORECORE is the pool.
        self.mallopt = Mallopt(trim_threshold=trim_threshold, top_pad=top_pad,
                               mmap_threshold=mmap_threshold,
                               n_mmaps_max=0 if self.arena.fixed else mmap_max)
        self.pagesize = pagesize

        #: size word of every chunk of the sbrk heap, top included, by chunk name
        self._head: dict[int, int] = {}
        #: ``prev_size`` of the chunks whose previous chunk is free (its foot)
        self._foot: dict[int, int] = {}
        #: links of free chunks and of the bin headers (bin i's header is ~i)
        self._fd: dict[int, int] = {}
        self._bk: dict[int, int] = {}
        for i in range(NAV):
            self._fd[~i] = self._bk[~i] = ~i
        self.binblocks = 0
        #: the highest bin holding a chunk (0: none), kept by frontlink and
        #: unlink: the measures' largest binned chunk is its front chunk, one
        #: lookup where a scan down the bins cost more than a step of the policy
        self._high_bin = 0
        #: the top chunk, None before the first malloc_extend_top
        self.top: int | None = None
        #: the first chunk (``sbrk_base`` plus alignment, plus one word)
        self._first: int | None = None
        #: bytes of the chunks in bins and of the last remainder, as walk() counts them
        self._free_bytes = 0
        #: mmap regions: region address -> (region bytes, payload)
        self._regions: dict[int, tuple[int, int]] = {}
        self._region_of: dict[int, int] = {}   # payload -> region
        self.n_mmaps = 0
        self.mapped_bytes = 0       # mmapped_mem; H counts it (Strategy.footprint)
        self.max_total_mem = 0      # the original's high-water mark of sbrk'd + mapped bytes

    # ------------------------------------------------------------ sizes
    @property
    def alignment(self) -> int:
        """MALLOC_ALIGNMENT: 2W, or the alignment asked when that is more (the
        base's ``align``, one attribute fewer: test_attribute_reads.py)."""
        return self.align

    def request2size(self, req: int) -> int:
        """The original's ``request2size``: ``req`` plus the size word, rounded
        up to MALLOC_ALIGNMENT, at least MINSIZE."""
        mask = self.align - 1
        if req + self.size_sz + mask < self.minsize + mask:
            return self.minsize
        return (req + self.size_sz + mask) & ~mask

    def chunk_size(self, h: int) -> int:
        """``chunksize``: bytes of the chunk named ``h`` (top included)."""
        return self._head[h] & ~PREV_INUSE

    @property
    def last_remainder(self) -> int | None:
        """The chunk in the last_remainder bin, or None."""
        lr = self._fd[LR_BIN]
        return None if lr == LR_BIN else lr

    def bin(self, i: int) -> list[int]:
        """Chunks of bin ``i`` front first (the order ``fd`` follows from the
        header: for a large bin, largest first; the scan goes the other way)."""
        fd = self._fd
        out = []
        p = fd[~i]
        while p != ~i:
            out.append(p)
            p = fd[p]
        return out

    # ----------------------------------------------------------- links
    def _unlink(self, p: int, size: int) -> None:
        """``unlink``: take chunk ``p`` of ``size`` bytes off its bin (or out of
        the last_remainder bin)."""
        fd, bk = self._fd, self._bk
        b = bk.pop(p)
        f = fd.pop(p)
        fd[b] = f
        bk[f] = b
        self._free_bytes -= size
        if b == f == ~self._high_bin:
            self._lower_high_bin()
        events = self.rec.events
        if events is not None:
            if b == LR_BIN:
                events.append(PointerMove("last_remainder", p, None))
            else:
                events.append(ListRemove(p, size, (bin_index(size),)))

    def _frontlink(self, p: int, s: int) -> None:
        """``frontlink``: file chunk ``p`` of ``s`` bytes in its bin: in front of
        a small bin; in a large bin before the first chunk not larger."""
        fd, bk = self._fd, self._bk
        events = self.rec.events
        if s < MAX_SMALLBIN_SIZE:
            idx = s >> 3
            if not self.binblocks >> (idx // BINBLOCKWIDTH) & 1:
                self._mark_binblock(idx)
            back = ~idx
            front = fd[back]
        else:
            idx = bin_index(s)
            back = ~idx
            front = fd[back]
            if front == back and not self.binblocks >> (idx // BINBLOCKWIDTH) & 1:
                self._mark_binblock(idx)
            else:
                head = self._head
                rec = self.rec
                while front != back and s < head[front] & ~PREV_INUSE:
                    rec.walked += 1
                    if events is not None:
                        events.append(BinWalkStep(front, head[front] & ~PREV_INUSE, idx))
                    front = fd[front]
                back = bk[front]
        bk[p] = back
        fd[p] = front
        bk[front] = p
        fd[back] = p
        self._free_bytes += s
        if idx > self._high_bin:
            self._high_bin = idx
        if events is not None:
            events.append(ListInsert(p, s, (idx,)))

    def _lower_high_bin(self) -> None:
        """The highest bin has just been emptied: the next non-empty one down
        (0: none), looked for only in blocks whose binblocks bit is set (every
        non-empty bin's is), from the highest such block down."""
        fd = self._fd
        i = self._high_bin
        blocks = self.binblocks & ((2 << (i // BINBLOCKWIDTH)) - 1)     # i's block and below
        while blocks:
            b = blocks.bit_length() - 1
            lo = b * BINBLOCKWIDTH
            j = min(i, lo + BINBLOCKWIDTH - 1)
            while j >= lo and j > 1:
                if fd[~j] != ~j:
                    self._high_bin = j
                    return
                j -= 1
            blocks &= ~(1 << b)
        self._high_bin = 0

    def _mark_binblock(self, idx: int) -> None:
        """``mark_binblock``: the bit of bin ``idx``'s block set, if it is not
        (callers in a hot path test it first)."""
        bit = 1 << (idx // BINBLOCKWIDTH)
        if not self.binblocks & bit:
            self.binblocks |= bit
            if self.rec.events is not None:
                self._event(BinmapChange(idx // BINBLOCKWIDTH, True))

    def _link_last_remainder(self, p: int, size: int) -> None:
        """``link_last_remainder``: ``p`` becomes the last remainder (whatever
        was there is gone: re-split or joined)."""
        fd, bk = self._fd, self._bk
        old = fd[LR_BIN]
        if old != LR_BIN:
            self._free_bytes -= self._head[old] & ~PREV_INUSE if old != p else 0
            fd.pop(old, None)
            bk.pop(old, None)
        fd[LR_BIN] = bk[LR_BIN] = p
        fd[p] = bk[p] = LR_BIN
        self._free_bytes += size
        if self.rec.events is not None:
            self._event(PointerMove("last_remainder", None if old == LR_BIN else old, p))

    # ----------------------------------------------------------- chunks
    def _set_inuse_at(self, p: int, s: int) -> None:
        """``set_inuse_bit_at_offset(p, s)``: the chunk at ``p + s`` says ``p`` is in use."""
        nxt = p + s
        self._head[nxt] |= PREV_INUSE
        self._foot.pop(nxt, None)

    # ------------------------------------------------------------- malloc
    def _malloc(self, size: int) -> int | None:
        nb = self.request2size(size)
        mem = self._chunk_alloc(nb, size)
        if mem is None:
            return None
        region = self._region_of.get(mem)
        if region is not None:
            self._note_alloc(mem, region, self._regions[region][0], size, 2 * self.size_sz)
        else:
            h = mem - self.size_sz
            block = self._head[h] & ~PREV_INUSE
            self._note_alloc(mem, h, block, size, self.size_sz)
            if self.rec.events is not None:    # (an event costs more than a step here)
                self._event(Placed(h, block, mem, size))
        return mem

    def _chunk_alloc(self, nb: int, request: int) -> int | None:
        """``mALLOc`` on a padded size: the payload address, or None.  Its
        steps in the original's order, a verb each: "check for exact match
        in a bin" (:meth:`_exact_fit`), "try to use the last split-off
        remainder" (:meth:`_last_remainder_fit`), "search for best fitting
        chunk by scanning bins in blockwidth units" (:meth:`_binblock_scan`),
        then "try to use top chunk" (:meth:`_top_fit`: split top, else mmap
        or malloc_extend_top, then top again)."""
        mem, idx = self._exact_fit(nb)
        if mem is not None:
            return mem
        if self._fd[LR_BIN] != LR_BIN:
            mem = self._last_remainder_fit(nb)
            if mem is not None:
                return mem
        # (the last remainder, binned, may have set a binblocks bit)
        if 1 << (idx // BINBLOCKWIDTH) <= self.binblocks:
            mem = self._binblock_scan(nb, idx)
            if mem is not None:
                return mem
        return self._top_fit(nb, request)

    def _exact_fit(self, nb: int) -> tuple[int | None, int]:
        """Step 1: a chunk of the request's own bin that leaves less than
        MINSIZE over, taken whole; a small request also tries the next bin.
        Returns the payload (or None) and the bin the scan of step 3 starts
        at: the next one, or this one again when a large bin held a chunk
        too big to take whole ("rescan this bin after the last remainder")."""
        head = self._head
        if nb < MAX_SMALLBIN_SIZE - SMALLBIN_WIDTH:
            idx = nb >> 3
            victim = self._bin_probe(idx)
            if victim == ~idx:
                # The next bin too: its chunks leave a remainder below MINSIZE.
                victim = self._bin_probe(idx + 1)
                if victim == ~(idx + 1):
                    return None, idx + 2
            return self._take_chunk(victim, head[victim] & ~PREV_INUSE), idx
        idx = bin_index(nb)
        q = ~idx
        bk = self._bk
        minsize = self.minsize
        victim = self._bin_probe(idx)
        while victim != q:
            vsize = head[victim] & ~PREV_INUSE
            rsize = vsize - nb
            if rsize >= minsize:
                # Too big: rescan this bin after the last remainder.
                self._visit(victim, vsize, False)
                return None, idx
            if rsize >= 0:
                return self._take_chunk(victim, vsize), idx
            self._visit(victim, vsize, False)
            victim = bk[victim]
        return None, idx + 1

    def _last_remainder_fit(self, nb: int) -> int | None:
        """Step 2: the last remainder, re-split when it holds ``nb`` and
        MINSIZE more (the rest stays the last remainder), taken whole when it
        fits with less over, else put in its bin (``clear_last_remainder``,
        ``frontlink``)."""
        fd, bk = self._fd, self._bk
        victim = fd[LR_BIN]
        vsize = self._head[victim] & ~PREV_INUSE
        rsize = vsize - nb
        self._visit(victim, vsize, rsize >= 0)
        if rsize >= self.minsize:
            remainder = self._split_chunk(victim, vsize, nb)
            self._free_bytes -= vsize
            fd.pop(victim)
            bk.pop(victim)
            fd[LR_BIN] = bk[LR_BIN] = remainder
            fd[remainder] = bk[remainder] = LR_BIN
            self._free_bytes += rsize
            if self.rec.events is not None:
                self._event(PointerMove("last_remainder", victim, remainder))
            return victim + self.size_sz
        self._unlink(victim, vsize)           # clear_last_remainder
        if rsize >= 0:
            self._set_inuse_at(victim, vsize)
            return victim + self.size_sz
        self._frontlink(victim, vsize)
        return None

    def _binblock_scan(self, nb: int, idx: int) -> int | None:
        """Step 3: from bin ``idx`` up, one binblocks block of four bins at a
        time, skipping blocks whose bit is clear: the first chunk that fits
        (:meth:`_best_in_bin`: the smallest, bins being sorted).  A block
        found empty has its bit cleared (:meth:`_clear_binblock_if_empty`)."""
        block = 1 << (idx // BINBLOCKWIDTH)
        if not block & self.binblocks:
            # Get to the first marked block.
            self._binmap_probe(idx // BINBLOCKWIDTH, False)
            idx = (idx & ~(BINBLOCKWIDTH - 1)) + BINBLOCKWIDTH
            block <<= 1
            while not block & self.binblocks:
                self._binmap_probe(idx // BINBLOCKWIDTH, False)
                idx += BINBLOCKWIDTH
                block <<= 1
        while True:
            self._binmap_probe(idx // BINBLOCKWIDTH, True)
            startidx = idx
            while True:
                mem = self._best_in_bin(nb, idx)
                if mem is not None:
                    return mem
                idx += 1
                if not idx & (BINBLOCKWIDTH - 1):
                    break
            self._clear_binblock_if_empty(startidx, block)
            block <<= 1
            if block > self.binblocks:
                return None
            while not block & self.binblocks:
                self._binmap_probe(idx // BINBLOCKWIDTH, False)
                idx += BINBLOCKWIDTH
                block <<= 1

    def _best_in_bin(self, nb: int, idx: int) -> int | None:
        """Bin ``idx`` from its back (the smallest chunk first): the first
        chunk that holds ``nb``, split when MINSIZE more is left (the rest
        becomes the last remainder), else taken whole; None if none does."""
        head, bk = self._head, self._bk
        minsize = self.minsize
        q = ~idx
        victim = self._bin_probe(idx)
        while victim != q:
            vsize = head[victim] & ~PREV_INUSE
            rsize = vsize - nb
            if rsize >= minsize:
                self._visit(victim, vsize, True)
                self._unlink(victim, vsize)
                remainder = self._split_chunk(victim, vsize, nb)
                self._link_last_remainder(remainder, rsize)
                return victim + self.size_sz
            if rsize >= 0:
                return self._take_chunk(victim, vsize)
            self._visit(victim, vsize, False)
            victim = bk[victim]
        return None

    def _clear_binblock_if_empty(self, startidx: int, block: int) -> None:
        """Clear the block's bit if all its bins are empty: the ones scanned
        were, and those below ``startidx`` are looked at again ("NOT always
        cleared as soon as all bins in a block are empty")."""
        fd = self._fd
        i = startidx
        while True:
            if not i & (BINBLOCKWIDTH - 1):
                self.binblocks &= ~block
                if self.rec.events is not None:
                    self._event(BinmapChange(i // BINBLOCKWIDTH, False))
                return
            i -= 1
            if fd[~i] != ~i:
                return

    def _top_fit(self, nb: int, request: int) -> int | None:
        """Steps 4-6: split top when it holds ``nb`` and MINSIZE more; else
        mmap a large request (``mmap_chunk``) or ``malloc_extend_top`` and
        try top again."""
        head = self._head
        W = self.size_sz
        minsize = self.minsize
        top = self.top
        tsize = 0 if top is None else head[top] & ~PREV_INUSE
        rsize = tsize - nb
        if top is not None:
            self._visit(top, tsize - W, rsize >= minsize)
        if rsize < minsize:
            if nb >= self.mallopt.mmap_threshold:
                mem = self._mmap_chunk(nb, request)
                if mem is not None:
                    return mem
            if not self._extend_top(nb):
                return None
            top = self.top
            tsize = head[top] & ~PREV_INUSE
            rsize = tsize - nb
            self._visit(top, tsize - W, rsize >= minsize)
            if rsize < minsize:
                return None
        head[top] = nb | PREV_INUSE
        new_top = top + nb
        head[new_top] = rsize | PREV_INUSE
        self.top = new_top
        self._split_event(top, tsize - W, nb)
        if self.rec.events is not None:
            self._event(PointerMove("top", top, new_top))
        return top + W

    def _bin_probe(self, idx: int) -> int:
        """Bin ``idx`` looked at: its last chunk (``last(bin)``, where a scan
        of it starts), or its header ``~idx`` when it is empty.  One unit of
        search."""
        q = ~idx
        victim = self._bk[q]
        rec = self.rec
        rec.probes += 1
        rec.visits += 1
        if rec.events is not None:
            rec.events.append(BinProbe(idx, None if victim == q else victim))
        return victim

    def _take_chunk(self, victim: int, vsize: int) -> int:
        """Chunk ``victim`` of ``vsize`` bytes fits with less than MINSIZE
        over: taken whole off its bin, and the next chunk says it is in use."""
        self._visit(victim, vsize, True)
        self._unlink(victim, vsize)
        self._set_inuse_at(victim, vsize)
        return victim + self.size_sz

    def _split_chunk(self, victim: int, vsize: int, nb: int) -> int:
        """Cut chunk ``victim`` of ``vsize`` bytes: its first ``nb`` for the
        request, the rest a free chunk with its head and foot (``set_head``,
        ``set_foot``); returns the rest."""
        head = self._head
        remainder = victim + nb
        rsize = vsize - nb
        head[victim] = nb | PREV_INUSE
        head[remainder] = rsize | PREV_INUSE
        self._foot[remainder + rsize] = rsize         # set_foot
        self._split_event(victim, vsize, nb)
        return remainder

    def _visit(self, addr: int, size: int, fits: bool) -> None:
        rec = self.rec
        rec.visits += 1
        if rec.events is not None:
            rec.events.append(Visit(addr, size, fits))

    def _binmap_probe(self, block: int, marked: bool) -> None:
        rec = self.rec
        rec.probes += 1
        rec.visits += 1
        if rec.events is not None:
            rec.events.append(BinmapProbe(block, marked))

    def _split_event(self, victim: int, vsize: int, nb: int) -> None:
        """Chunk ``victim`` of ``vsize`` walk bytes cut: its first ``nb`` bytes
        for the request, the rest stays free."""
        rec = self.rec
        rec.splits += 1
        if rec.events is not None:
            rec.events.append(Split(victim, vsize, victim, nb, victim + nb, vsize - nb))

    # ------------------------------------------------------- system memory
    def _morecore(self, n: int) -> int | None:
        """MORECORE(n): the old end of the sbrk'd memory, or None (ENOMEM)."""
        arena = self.arena
        if not arena.fixed:
            limit = arena.limit
            if (limit is not None and arena.size + self.mapped_bytes + n > limit) \
                    or arena.brk + n > MMAP_BASE:
                self._event(GrowFailed(n))
                return None
        addr = self._take_core(n)
        if addr is not None:
            self._note_total()
        return addr

    def _note_total(self) -> None:
        total = self.arena.size + self.mapped_bytes if not self.arena.fixed else self.core_top
        if total > self.max_total_mem:
            self.max_total_mem = total

    def _extend_top(self, nb: int) -> bool:
        """``malloc_extend_top``: sbrk ``nb + top_pad + MINSIZE``, page-rounded
        after the first call; the first call also aligns the first chunk and
        the break (one sbrk here where the original makes two)."""
        pagesz = self.pagesize
        W = self.size_sz
        sbrk_size = nb + self.mallopt.top_pad + self.minsize
        old_top = self.top
        if old_top is not None:
            sbrk_size = (sbrk_size + pagesz - 1) & ~(pagesz - 1)
            brk = self._morecore(sbrk_size)
            if brk is None:
                return False
            # The new memory joins top (the break was top's end); the Grow
            # says so, and the Visit of top that follows gives its new size.
            old_size = self._head[old_top] & ~PREV_INUSE
            self._head[old_top] = (old_size + sbrk_size) | PREV_INUSE
            return True
        start = self.core_top
        # The chunk starts so that chunk2mem (two words in) is aligned ...
        front = (-(start + 2 * W)) % self.alignment
        # ... and the break ends on a page boundary.
        end = start + front + sbrk_size
        correction = front + ((end + pagesz - 1) & ~(pagesz - 1)) - end
        brk = self._morecore(sbrk_size + correction)
        if brk is None:
            return False
        chunk = brk + front
        top = chunk + W
        self._first = top
        self._head[top] = (self.core_top - chunk) | PREV_INUSE
        self.top = top
        self._event(PointerMove("top", None, top))
        return True

    def _malloc_trim(self, pad: int) -> bool:
        """``malloc_trim(pad)``: give whole pages of top back, keeping ``pad``
        bytes and MINSIZE."""
        pagesz = self.pagesize
        top = self.top
        top_size = self._head[top] & ~PREV_INUSE
        extra = ((top_size - pad - self.minsize + (pagesz - 1)) // pagesz - 1) * pagesz
        if extra < pagesz:
            return False
        old_end = self.core_top
        if self.arena.fixed:
            self._event(Note(f"malloc_trim gave {extra} bytes back to the pool"))
        else:
            self.arena.shrink(extra)
        self.core_top = old_end - extra
        self._head[top] = (top_size - extra) | PREV_INUSE
        self._event(Trim(old_end, extra))
        return True

    def _mmap_chunk(self, nb: int, request: int) -> int | None:
        """``mmap_chunk``: a region of its own, page-rounded, for ``nb`` bytes
        plus the word no next chunk lends; None when mmap may not be used."""
        if self.n_mmaps >= self.mallopt.n_mmaps_max:
            return None
        W = self.size_sz
        pagesz = self.pagesize
        # 2.6 needs no offset (2W alignment); with a larger MALLOC_ALIGNMENT the
        # chunk starts into its region and prev_size records how far (as memalign does).
        offset = (-(2 * W)) % self.alignment
        size = (nb + W + offset + pagesz - 1) & ~(pagesz - 1)
        limit = self.arena.limit
        if limit is not None and self.arena.size + self.mapped_bytes + size > limit:
            self._event(Note(f"mmap of {size} bytes refused: past the heap limit"))
            return None
        region = self._find_region(size)
        payload = region + offset + 2 * W
        self._regions[region] = (size, payload)
        self._region_of[payload] = region
        self.n_mmaps += 1
        self.mapped_bytes += size
        self._note_total()
        self._event(Mapped(region, size, payload, request))
        return payload

    def _find_region(self, size: int) -> int:
        """Lowest gap of the mmap area holding ``size`` bytes, on a page (and
        an alignment) boundary: deterministic, as the seeds need."""
        step = max(self.pagesize, self.alignment)
        at = MMAP_BASE
        for start in sorted(self._regions):
            if start - at >= size:
                break
            at = max(at, align_up(start + self._regions[start][0], step))
        return at

    def _munmap_chunk(self, payload: int) -> None:
        region = self._region_of.pop(payload)
        size, _ = self._regions.pop(region)
        self.n_mmaps -= 1
        self.mapped_bytes -= size
        self._event(Unmapped(region, size))

    def mapped_blocks(self) -> list[Block]:
        """The mmap regions, each one used block, in address order."""
        live = self.live
        out = []
        for region in sorted(self._regions):
            size, payload = self._regions[region]
            lb = live.get(payload)
            out.append(Block(region, size, USED, payload, lb.request if lb else 0,
                             lb.header if lb else 0))
        return out

    # --------------------------------------------------------------- free
    def _free(self, payload: int) -> None:
        lb = self._note_free(payload)
        if payload in self._region_of:
            self._munmap_chunk(payload)
            return
        if self.rec.events is not None:
            self._event(Released(lb.block_addr, lb.block_size))
        self._chunk_free(lb.block_addr)

    def _chunk_free(self, p: int) -> None:
        """``fREe`` on a chunk of the sbrk heap."""
        head, foot = self._head, self._foot
        rec = self.rec
        events = rec.events
        W = self.size_sz
        hd = head[p]
        sz = hd & ~PREV_INUSE
        nxt = p + sz
        nextsz = head[nxt] & ~PREV_INUSE

        if nxt == self.top:
            # Merge with top, then with a free lower neighbour.
            rec.merges += 1
            if events is not None:
                events.append(Coalesce(p, sz, nxt, nextsz - W))
            del head[nxt]
            sz += nextsz
            if not hd & PREV_INUSE:
                prevsz = foot.pop(p)
                prv = p - prevsz
                self._unlink(prv, prevsz)
                rec.merges += 1
                if events is not None:
                    events.append(Coalesce(prv, prevsz, p, sz - W))
                del head[p]
                p = prv
                sz += prevsz
            head[p] = sz | PREV_INUSE
            old_top = self.top
            self.top = p
            if events is not None and old_top != p:
                events.append(PointerMove("top", old_top, p))
            trim_threshold = self.mallopt.trim_threshold
            if trim_threshold is not None and sz >= trim_threshold:
                self._malloc_trim(self.mallopt.top_pad)
            return

        head[nxt] = nextsz                    # clear the in-use bit of p
        islr = False
        if not hd & PREV_INUSE:
            prevsz = foot.pop(p)
            prv = p - prevsz
            if self._bk[prv] == LR_BIN:
                islr = True                    # keep it as the last remainder
                self._free_bytes -= prevsz
            else:
                self._unlink(prv, prevsz)
            rec.merges += 1
            if events is not None:
                events.append(Coalesce(prv, prevsz, p, sz))
            del head[p]
            p = prv
            sz += prevsz
        if not head[nxt + nextsz] & PREV_INUSE:
            # The next chunk is free too.
            if not islr and self._bk[nxt] == LR_BIN:
                islr = True
                self._free_bytes -= nextsz
                rec.merges += 1
                if events is not None:
                    events.append(Coalesce(p, sz, nxt, nextsz))
                self._fd.pop(nxt)
                self._bk.pop(nxt)
                self._fd[LR_BIN] = self._bk[LR_BIN] = p
                self._fd[p] = self._bk[p] = LR_BIN
                if events is not None:
                    events.append(PointerMove("last_remainder", nxt, p))
            else:
                self._unlink(nxt, nextsz)
                rec.merges += 1
                if events is not None:
                    events.append(Coalesce(p, sz, nxt, nextsz))
            foot.pop(nxt + nextsz)
            del head[nxt]
            sz += nextsz
        head[p] = sz | PREV_INUSE
        foot[p + sz] = sz                     # set_foot
        if islr:
            self._free_bytes += sz
        else:
            self._frontlink(p, sz)

    # ------------------------------------------------------------ realloc
    def _realloc(self, payload: int, size: int) -> int | None:
        """``rEALLOc``."""
        W = self.size_sz
        nb = self.request2size(size)
        if payload in self._region_of:
            region = self._region_of[payload]
            oldsize = self._regions[region][0] - (payload - 2 * W - region)
            if oldsize - W >= nb:
                self._rebook(payload, size)
                self._event(Note("realloc of an mmapped chunk that still holds the request: "
                                 "nothing to do"))
                return payload
            new = self._malloc(size)
            if new is None:
                return None
            self._note_free(payload)
            self._munmap_chunk(payload)
            return new

        head = self._head
        events = self.rec.events
        oldp = payload - W
        lb = self._note_free(payload)
        newp = oldp
        oldsize = newsize = head[oldp] & ~PREV_INUSE
        if oldsize < nb:
            nxt = oldp + oldsize
            top = self.top
            nextsize = 0
            if nxt == top or not head[nxt + (head[nxt] & ~PREV_INUSE)] & PREV_INUSE:
                nextsize = head[nxt] & ~PREV_INUSE
                if nxt == top:
                    if nextsize + newsize >= nb + self.minsize:
                        self._absorb_top(oldp, newsize, nb)
                        return self._rebook_chunk(payload, oldp, size, lb.header)
                elif nextsize + newsize >= nb:
                    self._unlink(nxt, nextsize)
                    self._join(oldp, newsize, nxt, nextsize)
                    newsize += nextsize
                    return self._realloc_split(payload, newp, newsize, nb, size, lb.header)
            else:
                nxt = None
            if not head[oldp] & PREV_INUSE:
                prevsize = self._foot[oldp]
                prv = oldp - prevsize
                if nxt is not None:
                    if nxt == top:
                        if nextsize + prevsize + newsize >= nb + self.minsize:
                            self._unlink(prv, prevsize)
                            self._join(prv, prevsize, oldp, newsize)
                            newsize += prevsize
                            self._absorb_top(prv, newsize, nb)
                            return self._rebook_chunk(prv + W, prv, size, lb.header, moved_from=payload)
                    elif nextsize + prevsize + newsize >= nb:
                        self._unlink(nxt, nextsize)
                        self._unlink(prv, prevsize)
                        self._join(oldp, newsize, nxt, nextsize)
                        newsize += nextsize
                        self._join(prv, prevsize, oldp, newsize)
                        newsize += prevsize
                        return self._realloc_split(prv + W, prv, newsize, nb, size, lb.header,
                                                   moved_from=payload)
                if prevsize + newsize >= nb:
                    self._unlink(prv, prevsize)
                    self._join(prv, prevsize, oldp, newsize)
                    newsize += prevsize
                    return self._realloc_split(prv + W, prv, newsize, nb, size, lb.header,
                                               moved_from=payload)
            # Must allocate: the old chunk is still in use meanwhile.
            self._note_alloc(payload, oldp, oldsize, lb.request, lb.header)
            new = self._chunk_alloc(nb, size)
            if new is None:
                return None
            self._note_free(payload)
            if new == oldp + oldsize + W:
                # Cut from top right after the old chunk: join them in place.
                newsize += head[new - W] & ~PREV_INUSE
                self._join(oldp, oldsize, new - W, head[new - W] & ~PREV_INUSE)
                head[oldp] = newsize | (head[oldp] & PREV_INUSE)
                return self._realloc_split(payload, oldp, newsize, nb, size, lb.header)
            if new in self._region_of:
                region = self._region_of[new]
                self._note_alloc(new, region, self._regions[region][0], size, 2 * W)
            else:
                h = new - W
                block = head[h] & ~PREV_INUSE
                self._note_alloc(new, h, block, size, W)
                if events is not None:
                    events.append(Placed(h, block, new, size))
            if events is not None:
                events.append(Released(oldp, oldsize))
            self._chunk_free(oldp)
            return new
        return self._realloc_split(payload, oldp, newsize, nb, size, lb.header)

    def _join(self, low: int, low_size: int, high: int, high_size: int) -> None:
        """realloc's joins: chunk ``low`` grows over chunk ``high`` (a free
        neighbour already taken off its bin, or the old chunk moving down):
        ``high``'s size word, and the foot before it, are gone."""
        rec = self.rec
        rec.merges += 1
        if rec.events is not None:
            rec.events.append(Coalesce(low, low_size, high, high_size))
        del self._head[high]
        self._foot.pop(high, None)

    def _absorb_top(self, p: int, psize: int, nb: int) -> None:
        """realloc "forward into top": chunk ``p`` of ``psize`` bytes takes
        ``nb`` bytes from its start and top keeps the rest."""
        head = self._head
        W = self.size_sz
        top = self.top
        tsize = head[top] & ~PREV_INUSE
        self._join(p, psize, top, tsize - W)
        total = psize + tsize
        new_top = p + nb
        head[p] = nb | (head[p] & PREV_INUSE)
        head[new_top] = (total - nb) | PREV_INUSE
        self.top = new_top
        self._split_event(p, total - W, nb)
        self._event(PointerMove("top", top, new_top))

    def _realloc_split(self, payload: int, newp: int, newsize: int, nb: int, request: int,
                       header: int, moved_from: int | None = None) -> int:
        """realloc's ``split:``: cut off an excess of at least MINSIZE and free it."""
        head = self._head
        prev_bit = head[newp] & PREV_INUSE
        if newsize - nb >= self.minsize:
            remainder = newp + nb
            rsize = newsize - nb
            head[newp] = nb | prev_bit
            head[remainder] = rsize | PREV_INUSE
            self._set_inuse_at(remainder, rsize)
            self._split_event(newp, newsize, nb)
            self._chunk_free(remainder)
        else:
            head[newp] = newsize | prev_bit
            self._set_inuse_at(newp, newsize)
        return self._rebook_chunk(payload, newp, request, header, moved_from=moved_from)

    def _rebook_chunk(self, payload: int, p: int, request: int, header: int,
                      moved_from: int | None = None) -> int:
        block = self._head[p] & ~PREV_INUSE
        self._note_alloc(payload, p, block, request, header)
        events = self.rec.events
        if events is not None:
            if moved_from is not None:
                events.append(Note(f"realloc moved the payload back into the free chunk before "
                                   f"it: {moved_from:#x} -> {payload:#x}"))
            events.append(Placed(p, block, payload, request))
        return payload

    # ------------------------------------------------------------ walking
    def _blocks(self) -> Iterator[tuple[int, int, str, int | None]]:
        base = self.arena.base
        first = self._first
        head = self._head
        if first is not None:
            yield base, first - base, META, None
            W = self.size_sz
            top = self.top
            p = first
            while p != top:
                s = head[p] & ~PREV_INUSE
                nxt = p + s
                if head[nxt] & PREV_INUSE:
                    yield p, s, USED, p + W
                else:
                    yield p, s, FREE_BLOCK, None
                p = nxt
            end = self.core_top
            yield top, end - top, FREE_BLOCK, None
        else:
            end = base
        if self.arena.brk > end:
            # In a pool, the part MORECORE has not handed out yet.
            yield end, self.arena.brk - end, FREE_BLOCK, None

    def free_blocks(self) -> Iterator[tuple[int, int]]:
        head = self._head
        for p in self._fd:
            if p >= 0:
                yield p, head[p] & ~PREV_INUSE
        if self.top is not None:
            yield self.top, self.core_top - self.top
        if self.arena.brk > self.core_top:
            yield self.core_top, self.arena.brk - self.core_top

    def fragmentation_probe(self) -> tuple[int, int, int, int]:
        """(F, largest free, top, largest other) without a walk
        (:func:`heapscope.allocators.dlmalloc_measures.fragmentation_probe`)."""
        from .dlmalloc_measures import fragmentation_probe     # it imports this module
        return fragmentation_probe(self)

    def measure_row(self, rec, probe=None) -> tuple:
        """The build's row through this policy's probe worked out in place and
        the counters it adds to (:func:`heapscope.allocators.dlmalloc_measures.row_writer`);
        a subclass with a probe of its own gets the default row through it."""
        if probe is None and type(self).fragmentation_probe is Dlmalloc.fragmentation_probe:
            from . import dlmalloc_measures     # it imports this module
            return dlmalloc_measures.ROW_FIELDS, dlmalloc_measures.row_writer(self, rec)
        return super().measure_row(rec, probe)

    def _policy_signature(self) -> tuple:
        bins = tuple((i, tuple(self.bin(i))) for i in range(2, NAV) if self._fd[~i] != ~i)
        return (self.binblocks, bins, self.last_remainder, self.top,
                tuple(sorted((r, s, p) for r, (s, p) in self._regions.items())))

    # ---------------------------------------------------------- structure
    def structure(self) -> dict:
        """The bins with their chunks front first, ``binblocks``, the last
        remainder and top (both kept apart from the bins), and the mmap
        regions (docs/structure.md, kind ``bins``)."""
        head = self._head
        sizes: dict[int, int] = {}
        bins: dict[int, list[int]] = {}
        fd = self._fd
        for i in range(2, NAV):
            p = fd[~i]
            if p != ~i:
                chunks = []
                while p != ~i:
                    chunks.append(p)
                    sizes[p] = head[p] & ~PREV_INUSE
                    p = fd[p]
                bins[i] = chunks
        outs = []
        lr = self.last_remainder
        if lr is not None:
            sizes[lr] = head[lr] & ~PREV_INUSE
            outs.append(structure.outside(lr, "the last remainder"))
        if self.top is not None:
            sizes[self.top] = self.core_top - self.top
            outs.append(structure.outside(self.top, "top"))
        if self.arena.brk > self.core_top:
            sizes[self.core_top] = self.arena.brk - self.core_top
            outs.append(structure.outside(self.core_top, "the pool not handed out by MORECORE yet"))
        pointers = [structure.pointer("last_remainder", lr, structure.SEARCH),
                    structure.pointer("top", self.top, structure.MARKER)]
        mapped = [{"addr": r, "size": s, "payload": p} for r, (s, p) in sorted(self._regions.items())]
        return structure.make("bins", sizes, pointers=pointers, outside_blocks=outs, bins=bins,
                              binblocks=self.binblocks, bin_floor=list(BIN_FLOOR),
                              last_remainder=lr, top=self.top, mapped=mapped)

    # -------------------------------------------------------------- check
    def _check_structure(self, blocks: list[Block]) -> None:
        """The original's ``do_check_*`` and more
        (:func:`heapscope.allocators.dlmalloc_check.check_dlmalloc`)."""
        from .dlmalloc_check import check_dlmalloc     # it imports this module
        check_dlmalloc(self, blocks)
