"""phkmalloc: Poul-Henning Kamp's malloc for FreeBSD (1995), the "FreeBSD"
malloc of seed 003 (Dowdeswell 1999, where it beat NetBSD's and stayed in
step with GNU's and dlmalloc).

Read: FreeBSD ``src/lib/libc/stdlib/malloc.c``, the phkmalloc of FreeBSD 3.x
and 4.x (the file headed ``$FreeBSD$`` with ``malloc_cache = 16`` pages,
``malloc_minsize`` 16 and the page directory in mmap'ed memory, 1997-2003),
and the first version Kamp posted in 1995 (``$Id$``, the page directory in
sbrk'ed pages, ``malloc_cache`` 50 pages) to see what stayed the same.  The
file is beer-ware ("As long as you retain this notice you can do whatever you
want with this stuff"); the code here is our own.

The original, rule by rule:

* **Pages.** The heap is whole pages (``malloc_pagesize``, 4096), got with
  ``brk`` and described by a **page directory**, one entry per page:
  ``MALLOC_FREE``, ``MALLOC_FIRST`` (the first page of a run handed out),
  ``MALLOC_FOLLOW`` (the others), or a pointer to the ``struct pginfo`` of a
  page cut into chunks.  The directory itself lives outside the heap (mmap).
* **Small requests** (up to half a page, ``malloc_maxsize``) get a chunk: the
  request is raised to ``malloc_minsize`` (16) and to the next power of two
  2**j; ``page_dir[j]`` heads the list of pages of 2**j-byte chunks that still
  have a free one.  ``malloc_bytes`` takes the head page and the first set bit
  of its bitmap (bit set = chunk free); a page whose last free chunk goes
  leaves the list.  An empty list gets a new page (``malloc_make_chunks``),
  whose ``pginfo`` sits in the page itself, in its first chunks, when that
  wastes at most two chunks, else in a chunk ``malloc``'d for it.
* **Large requests** get whole pages (``malloc_pages``): first fit along the
  free-page list (runs of free pages, in address order, each described by a
  ``struct pgfree`` that is itself a ``malloc``'d chunk); the front of the run
  is taken.  No fit: ``map_pages`` moves the break up.
* **free of a chunk** sets its bit; a page that was full goes back on its list
  ("Insert in address order": the walk stops one page early, so the list is
  only nearly ordered); a page whose chunks are all free goes back to the
  pages (its outside ``pginfo`` freed first).
* **free of pages** marks them ``MALLOC_FREE`` and files the run in the
  address-ordered free-page list, joining the run before and after it
  ("Append to the previous entry", "And collapse the next too", "Prepend to
  entry").  A spare ``pgfree``, ``px``, is kept so a free need not malloc one.
* **Giving memory back**: when the last run ends at the break and is longer
  than ``malloc_cache`` (16 pages), the break goes down to leave just
  ``malloc_cache`` bytes free at the top.
* **realloc** keeps the block when the new size still needs it (pages: not
  more, and no page fewer; chunks: smaller, but more than half, or already
  the smallest); otherwise malloc, copy, free.

Simulation choices and deviations (each on ``docs/strategies/phkmalloc.md``):

* Word size W: ``struct pginfo`` is two pointers and four shorts before its
  bitmap of 32-bit words (``2W + 8`` bytes + 4 per 32 chunks), ``struct
  pgfree`` five words: on LP64 the first 16-, 32- and 64-byte chunk pages
  keep their ``pginfo`` in their first 4, 2 and 1 chunks; pages of 128 bytes
  and more keep it in a 32-byte chunk; every free run's ``pgfree`` is a
  64-byte chunk (32 on ILP32).  All these are the allocator's own bytes
  (``meta`` in the walk).
* ``malloc_init``'s ``px = imalloc(sizeof *px)`` (Kaleb Keithly's hack, to
  keep that chunk low) runs at the first malloc, as in the original.
* The junk/zero/hint/utrace/sysv/xmalloc options are left out (they change
  bytes, not the layout); ``realloc_in_place=False`` is the ``R`` option
  (always move), which ``J`` (junk) also turned on.
* When ``free_pages`` needs a ``pgfree`` and cannot malloc one (the original
  says "This cannot fail..." and would crash), the run is filed with its
  record kept off the heap, and a Note says so.  We found no program that
  gets there: whenever ``px`` is used up a free run exists, which the record's
  malloc can take.
* ``align`` above 16 (or ``minsize``) raises ``malloc_minsize``; pages of the
  smallest chunks then keep their ``pginfo`` in the page even where it costs
  more than two chunks, since a ``pginfo`` malloc'd apart would need a chunk of
  that very size (the 1995 version chose ``malloc_minsize`` as the smallest
  chunk that can hold its own pginfo, for the same reason).
* ``align`` above 16 raises ``malloc_minsize`` to it (chunks are aligned to
  their size); past half a page every request takes pages.  A fixed pool is
  handed out page by page from its bottom, and given back there.
* The walks along ``page_dir[j]`` in ``free_bytes`` are not counted as search.

Search length: the free page runs ``malloc_pages`` examined, plus the chunk
taken (one visit, as for the BSD buckets); ``ChunkTaken.words`` says how many
bitmap words the find-first-set read.  A free counts the runs its walk along
the free-page list passed.
"""

from __future__ import annotations

from bisect import bisect_left
from operator import attrgetter
from typing import Iterator

from . import structure
from .events import (FREE, ChunkFreed, ChunkPageDissolved, ChunkPageLinked, ChunkPageMade,
                     ChunkPageUnlinked, ChunkTaken, Coalesce, Grow, InsertionPoint, ListInsert,
                     ListRemove, Note, Placed, Released, Shrink, Split, Visit, WalkStep)
from .explain import count
from .free_classes import ROW, ROW_FIELDS, FreeClasses
from .params import BOOL, INT, SIZE, Param, ParamError
from .shrink import give_back
from .strategy import FREE_BLOCK, META, USED, Block, Strategy

#: page directory entries that are not a pginfo (the original's magic values)
MALLOC_FREE = 1
MALLOC_FIRST = 2
MALLOC_FOLLOW = 3
#: bits per word of a pginfo bitmap (MALLOC_BITS: 8 * sizeof(u_int))
MALLOC_BITS = 32
#: the free-page list carries no index in ListInsert/ListRemove
FREE_PAGES: tuple[int, ...] = ()


class PageInfo:
    """``struct pginfo``: a page of ``size``-byte chunks; bit i of ``bits`` set
    means chunk i is free.  ``info`` is where the struct lives: the page itself
    (its first ``stolen`` chunks) or a chunk of its own."""

    __slots__ = ("page", "size", "shift", "free", "total", "bits", "info", "stolen")

    def __init__(self, page: int, shift: int, total: int, info: int, stolen: int) -> None:
        self.page = page
        self.shift = shift
        self.size = 1 << shift
        self.info = info
        self.stolen = stolen
        self.total = total
        self.free = total
        # all valid bits set, the stolen ones cleared
        self.bits = ((1 << (stolen + total)) - 1) & ~((1 << stolen) - 1)

    def __getstate__(self):
        return tuple(getattr(self, k) for k in self.__slots__)

    def __setstate__(self, state):
        for k, v in zip(self.__slots__, state):
            setattr(self, k, v)


class Run:
    """``struct pgfree``: free pages ``[page, end)``; ``holder`` is the chunk
    the struct itself lives in (None when it could not be malloc'd)."""

    __slots__ = ("page", "end", "holder")

    def __init__(self, page: int, end: int, holder: int | None) -> None:
        self.page = page
        self.end = end
        self.holder = holder

    @property
    def size(self) -> int:
        return self.end - self.page

    def __getstate__(self):
        return (self.page, self.end, self.holder)

    def __setstate__(self, state):
        self.page, self.end, self.holder = state


#: a run's end, the key of the free-page list's walk
_run_end = attrgetter("end")


class PhkMalloc(Strategy):
    """Poul-Henning Kamp's FreeBSD malloc: a page directory, power-of-two chunk
    pages with bitmaps, runs of whole pages, free pages coalesced and given
    back at the top."""

    name = "phkmalloc"
    #: the event types this policy's records can hold (conditions.py: a condition
    #: on another is answered without a replay)
    makes_events = frozenset({"ChunkFreed", "ChunkPageDissolved", "ChunkPageLinked", "ChunkPageMade",
                              "ChunkPageUnlinked", "ChunkTaken", "Coalesce", "Grow", "GrowFailed",
                              "InsertionPoint", "ListInsert", "ListRemove", "Note", "Placed", "Released",
                              "Shrink", "Split", "Visit", "WalkStep"})
    title = "phkmalloc: page directory, chunk pages with bitmaps, page runs (FreeBSD)"
    citation = "P.-H. Kamp, FreeBSD src/lib/libc/stdlib/malloc.c (1995-2003)"

    params = (
        # one directory entry and one Python object per page; a page of the
        # smallest chunks holds pagesize/minsize of them
        Param("pagesize", SIZE, 4096, "malloc_pagesize: the heap is whole pages; requests up to "
              "half a page get a chunk", low=512, high=1 << 16, power_of_two=True),
        Param("minsize", SIZE, 16, "malloc_minsize: the smallest chunk", low=4, high=2048,
              power_of_two=True),
        Param("cache_pages", INT, 16, "malloc_cache: free pages kept at the top when memory is "
              "given back", low=1, high=1 << 20),
        Param("realloc_in_place", BOOL, True, "realloc keeps a block that still fits (false: "
              "the R option, every realloc moves)"),
    )

    def __init__(self, *, pagesize: int = 4096, minsize: int = 16, cache_pages: int = 16,
                 realloc_in_place: bool = True, **common) -> None:
        super().__init__(**common)
        if self.align > pagesize:
            raise ParamError(f"phkmalloc: align={self.align} is more than a page; pagesize accepts "
                             f"powers of two in {self.align}..65536 here")
        self.pagesize = pagesize
        self.pageshift = pagesize.bit_length() - 1
        self.maxsize = pagesize >> 1
        self.minsize = max(minsize, self.align)
        self.min_shift = self.minsize.bit_length() - 1
        self.cache = cache_pages * pagesize
        self.realloc_in_place = realloc_in_place
        W = self.word
        #: offsetof(struct pginfo, bits[0]): next, page, then four u_shorts
        self.pginfo_head = 2 * W + 8
        #: sizeof(struct pgfree): next, prev, page, end, size
        self.pgfree_size = 5 * W
        #: the page directory: page index -> MALLOC_FREE/FIRST/FOLLOW or a PageInfo
        self.page_dir: dict[int, int | PageInfo] = {}
        #: page_dir[j] for chunk sizes 2**j: the pages with a free chunk, list order
        self.buckets: dict[int, list[PageInfo]] = {j: [] for j in range(self.min_shift, self.pageshift)}
        #: the free-page list, address order
        self.runs: list[Run] = []
        #: the spare pgfree chunk (px), or None
        self.px: int | None = None
        #: chunks and page runs the allocator holds for itself: addr -> what
        self.meta: dict[int, str] = {}
        self.started = False
        self.classes = FreeClasses()

    # ------------------------------------------------------------ helpers
    def _index(self, addr: int) -> int:
        return addr >> self.pageshift

    def _chunk_path(self, size: int) -> bool:
        return max(size, self.minsize) <= self.maxsize

    def _pginfo_bytes(self, shift: int) -> int:
        """The bytes of a pginfo for pages of 2**shift chunks (``l`` in malloc_make_chunks)."""
        chunks = self.pagesize >> shift
        return self.pginfo_head + 4 * ((chunks + MALLOC_BITS - 1) // MALLOC_BITS)

    def _walk_runs(self, at: int) -> None:
        """A free's walk along the free-page list, runs 0 to ``at`` (where it
        stops): search in a free, work elsewhere, with an event a run when
        events are kept."""
        rec = self.rec
        search = rec.kind == FREE
        if search:
            rec.visits += at + 1
        else:
            rec.walked += at + 1
        events = rec.events
        if events is not None:
            for k, pf in enumerate(self.runs[:at + 1]):
                size, stop = pf.end - pf.page, k == at
                events.append(Visit(pf.page, size, stop, True) if search else WalkStep(pf.page, size, stop))

    # ------------------------------------------------------------- malloc
    def _malloc(self, size: int) -> int | None:
        if not self.started and not self._malloc_init():
            return None
        addr = self._imalloc(size)
        if addr is None:
            return None
        block = self._block_size(addr)
        self._note_alloc(addr, addr, block, size, 0)
        if self.rec.events is not None:
            self._event(Placed(addr, block, addr, size))
        return addr

    def _malloc_init(self) -> bool:
        """malloc_init: "We can sbrk(2) further back when we keep this on a low
        address": the spare pgfree px is malloc'd first."""
        self.started = True
        self._emit(Note, "malloc_init: px = imalloc(sizeof *px), a spare free-list record kept low")
        self.px = self._imalloc(self.pgfree_size, "pgfree")
        return True

    def _block_size(self, addr: int) -> int:
        """A chunk's size, or the bytes of the page run that starts at ``addr``."""
        index = addr >> self.pageshift                      # _index(addr)
        entry = self.page_dir[index]
        if isinstance(entry, PageInfo):
            return entry.size
        n = 1
        while self.page_dir.get(index + n) == MALLOC_FOLLOW:
            n += 1
        return n * self.pagesize

    def _pageround(self, size: int) -> int:
        mask = self.pagesize - 1
        return (size + mask) & ~mask

    def _imalloc(self, size: int, meta: str | None = None) -> int | None:
        if max(size, self.minsize) <= self.maxsize:         # _chunk_path(size)
            addr = self._malloc_bytes(size)
        else:
            addr = self._malloc_pages(max(size, self.minsize))
        if addr is not None and meta is not None:
            self.meta[addr] = meta
        return addr

    def _malloc_pages(self, size: int) -> int | None:
        """Allocate a number of complete pages: first fit on the free-page list."""
        size = self._pageround(size)
        p = None
        delay_free = None
        runs = self.runs
        rec = self.rec
        events = rec.events
        for i, pf in enumerate(runs):
            pf_size = pf.end - pf.page
            rec.visits += 1
            if events is not None:
                events.append(Visit(pf.page, pf_size, pf_size >= size))
            if pf_size < size:
                continue
            p = pf.page
            self.classes.runs.remove(pf.page, pf_size)
            if pf_size == size:
                del runs[i]
                self._emit(ListRemove, p, size, FREE_PAGES)
                delay_free = pf
            else:
                pf.page += size
                self.classes.runs.add(pf.page, pf_size - size)
                rec.splits += 1
                self._emit(Split, p, pf_size, p, size, pf.page, pf_size - size)
            break
        npages = size >> self.pageshift
        if p is None:
            p = self._take_core(size)       # map_pages
            if p is None:
                return None
        index = self._index(p)
        page_dir = self.page_dir
        page_dir[index] = MALLOC_FIRST
        for i in range(1, npages):
            page_dir[index + i] = MALLOC_FOLLOW
        if delay_free is not None and delay_free.holder is not None:
            if self.px is None:
                self.px = delay_free.holder
            else:
                self._ifree(delay_free.holder)
        return p

    def _make_chunks(self, shift: int) -> bool:
        """malloc_make_chunks: a new page cut into chunks of 2**shift bytes."""
        pp = self._malloc_pages(self.pagesize)
        if pp is None:
            return False
        size = 1 << shift
        l = self._pginfo_bytes(shift)
        if size <= l + l or size == self.minsize:
            # in the page, in its first chunks (for the smallest chunks always:
            # their pginfo would be a chunk of the very size being made)
            info, stolen = pp, (l + size - 1) // size
        else:
            info = self._imalloc(l, "pginfo")
            if info is None:
                self._ifree(pp)
                return False
            stolen = 0
        total = (self.pagesize >> shift) - stolen
        bp = PageInfo(pp, shift, total, info, stolen)
        self.page_dir[self._index(pp)] = bp
        self.buckets[shift].insert(0, bp)
        self.classes.add_chunk(size, total)
        self._emit(ChunkPageMade, pp, shift, size, total, info, stolen)
        return True

    def _malloc_bytes(self, size: int) -> int | None:
        """Allocate a chunk: the first free one of the head page of page_dir[j]."""
        if size < self.minsize:
            size = self.minsize
        j = (size - 1).bit_length()
        bucket = self.buckets[j]
        if not bucket and not self._make_chunks(j):
            return None
        bp = bucket[0]
        bits = bp.bits
        k = (bits & -bits).bit_length() - 1
        bp.bits = bits & ~(1 << k)
        bp.free -= 1
        chunk = 1 << j
        addr = bp.page + (k << j)
        self.classes.remove_chunk(chunk)
        rec = self.rec
        rec.visits += 1
        events = rec.events
        if events is not None:
            events.append(Visit(addr, chunk, True))
            events.append(ChunkTaken(bp.page, j, k, addr, chunk, k // MALLOC_BITS + 1))
        if not bp.free:
            del bucket[0]
            self._emit(ChunkPageUnlinked, bp.page, j)
        return addr

    # --------------------------------------------------------------- free
    def _free(self, payload: int) -> None:
        lb = self._note_free(payload)
        if self.rec.events is not None:
            self._event(Released(lb.block_addr, lb.block_size))
        self._ifree(payload)

    def _ifree(self, ptr: int) -> None:
        info = self.page_dir[ptr >> self.pageshift]         # page_dir[_index(ptr)]
        if isinstance(info, PageInfo):
            self._free_bytes(ptr, info)
        else:
            self._free_pages(ptr)

    def _free_bytes(self, ptr: int, info: PageInfo) -> None:
        """Free a chunk, and possibly the page it's on, if the page becomes empty."""
        shift = info.shift
        i = (ptr - info.page) >> shift
        info.bits |= 1 << i
        info.free += 1
        self.meta.pop(ptr, None)
        self.classes.add_chunk(info.size)
        if self.rec.events is not None:
            self._event(ChunkFreed(info.page, shift, i, ptr, info.size))
        bucket = self.buckets[shift]
        if info.free == 1:
            # "Insert in address order": the walk compares the next page, so it
            # stops one place early
            at = 0
            while at + 1 < len(bucket) and bucket[at + 1].page < info.page:
                at += 1
            bucket.insert(at, info)
            self._emit(ChunkPageLinked, info.page, shift, bucket[at - 1].page if at else None)
            return
        if info.free != info.total:
            return
        bucket.remove(info)
        self._emit(ChunkPageUnlinked, info.page, shift)
        self.classes.remove_chunk(info.size, info.total)
        self.page_dir[self._index(info.page)] = MALLOC_FIRST
        self._emit(ChunkPageDissolved, info.page, shift, self.pagesize)
        if info.info != info.page:
            self._ifree(info.info)      # "Order is important !"
        self._ifree(info.page)

    def _free_pages(self, ptr: int) -> None:
        """Free a sequence of pages: mark them free, file the run, join its
        neighbours, maybe give the top back."""
        page_dir = self.page_dir
        P = self.pagesize
        index = self._index(ptr)
        page_dir[index] = MALLOC_FREE
        i = 1
        while page_dir.get(index + i) == MALLOC_FOLLOW:
            page_dir[index + i] = MALLOC_FREE
            i += 1
        l = i * P
        tail = ptr + l
        self.meta.pop(ptr, None)
        if self.px is None:
            got = self._imalloc(self.pgfree_size, "pgfree")
            if self.px is not None:
                # malloc_pages took a run whole and made its record px; the
                # assignment below overwrites it: the original loses that chunk
                self.meta[self.px] = "lost pgfree"
                self._event(Note(f"the free-list record at {self.px:#x} is lost: px was set while "
                                 "px = imalloc(...) ran (as in the original)"))
            self.px = got
            if self.px is None:
                self._event(Note("no memory for a free-list record (the original would crash): "
                                 "this run's record is kept off the heap"))
        holder, self.px = self.px, None
        runs = self.runs
        index_runs = self.classes.runs
        pt = None
        if not runs:
            runs.append(Run(ptr, tail, holder))
            index_runs.add(ptr, l)
            self._emit(InsertionPoint, ptr, l, None, None)
            self._emit(ListInsert, ptr, l, FREE_PAGES)
            at = 0
        else:
            # The walk stops at the first run that does not end below ptr, or
            # the last (runs are in address order: their ends ascend).
            at = min(bisect_left(runs, ptr, key=_run_end), len(runs) - 1)
            self._walk_runs(at)
            pf = runs[at]
            if pf.page > tail:
                # Insert before entry
                runs.insert(at, Run(ptr, tail, holder))
                index_runs.add(ptr, l)
                self._emit(InsertionPoint, ptr, l, runs[at - 1].page if at else None, pf.page)
                self._emit(ListInsert, ptr, l, FREE_PAGES)
            elif pf.end == ptr:
                # Append to the previous entry
                nxt = runs[at + 1] if at + 1 < len(runs) else None
                self._emit(InsertionPoint, ptr, l, pf.page, nxt.page if nxt else None)
                index_runs.remove(pf.page, pf.end - pf.page)
                self.rec.merges += 1
                self._emit(Coalesce, pf.page, pf.end - pf.page, ptr, l)
                pf.end += l
                if nxt is not None and pf.end == nxt.page:
                    # And collapse the next too.
                    index_runs.remove(nxt.page, nxt.end - nxt.page)
                    self._emit(ListRemove, nxt.page, nxt.end - nxt.page, FREE_PAGES)
                    self.rec.merges += 1
                    self._emit(Coalesce, pf.page, pf.end - pf.page, nxt.page, nxt.end - nxt.page)
                    pf.end = nxt.end
                    del runs[at + 1]
                    pt = nxt
                index_runs.add(pf.page, pf.end - pf.page)
                self.px = holder
            elif pf.page == tail:
                # Prepend to entry
                self._emit(InsertionPoint, ptr, l, runs[at - 1].page if at else None, pf.page)
                index_runs.remove(pf.page, pf.end - pf.page)
                self.rec.merges += 1
                self._emit(Coalesce, ptr, l, pf.page, pf.end - pf.page)
                pf.page = ptr
                index_runs.add(pf.page, pf.end - pf.page)
                self.px = holder
            elif at + 1 == len(runs):
                # Append at tail of chain
                runs.append(Run(ptr, tail, holder))
                index_runs.add(ptr, l)
                at += 1
                self._emit(InsertionPoint, ptr, l, pf.page, None)
                self._emit(ListInsert, ptr, l, FREE_PAGES)
            else:
                raise AssertionError("phkmalloc: freelist is destroyed")
        pf = runs[at]
        # Return something to OS ?
        if at + 1 == len(runs) and pf.end - pf.page > self.cache and pf.end == self.core_top:
            keep = pf.page + self.cache
            extra = pf.end - keep
            index_runs.remove(pf.page, pf.end - pf.page)
            pf.end = keep
            index_runs.add(pf.page, self.cache)
            give_back(self, extra)
            for idx in range(self._index(keep), self._index(keep + extra)):
                del page_dir[idx]
        if pt is not None and pt.holder is not None:
            self._ifree(pt.holder)

    # ------------------------------------------------------------ realloc
    def _realloc(self, payload: int, size: int) -> int | None:
        """irealloc: keep the block if the new size still needs it, else
        malloc, copy, free (a failed malloc keeps the old block)."""
        lb = self.live[payload]
        osize = lb.block_size
        if self.realloc_in_place:
            info = self.page_dir[self._index(payload)]
            if isinstance(info, PageInfo):
                stay = size < osize and (size > osize // 2 or osize == self.minsize)
            else:
                stay = osize - self.pagesize < size <= osize
            if stay:
                self._rebook(payload, size)
                return payload
        return self._move_to_new_block(payload, size)

    # ------------------------------------------------------------ explain
    def explain_event(self, e) -> str | None:
        """malloc.c's words: ``page_dir[j]``, ``pginfo``, ``bits``, ``free_list``, ``px``."""
        if isinstance(e, ChunkTaken):
            return (f"malloc_bytes: page_dir[{e.shift}] -> page {e.page:#x}; first set bit in "
                    f"bits[{e.words - 1}]: chunk {e.index} at {e.addr:#x} ({e.size} B), bit cleared")
        if isinstance(e, ChunkPageMade):
            where = (f"in the page, in its first {count(e.stolen, 'chunk')}".replace("first 1 chunk", "first chunk")
                     if e.info == e.page else f"in a chunk of its own at {e.info:#x}")
            return (f"malloc_make_chunks({e.shift}): page {e.page:#x} cut into {e.size} B chunks, "
                    f"{e.total} free; its pginfo is {where}; page_dir[{e.shift}] = it")
        if isinstance(e, ChunkFreed):
            return f"free_bytes: chunk {e.index} of page {e.page:#x} ({e.addr:#x}, {e.size} B): bit set"
        if isinstance(e, ChunkPageLinked):
            where = "at the head" if e.after is None else f"after page {e.after:#x}"
            return f"the page was full: back on page_dir[{e.shift}], {where}"
        if isinstance(e, ChunkPageUnlinked):
            return f"page {e.page:#x} leaves page_dir[{e.shift}]"
        if isinstance(e, ChunkPageDissolved):
            return (f"every chunk of page {e.page:#x} is free: page_dir entry = MALLOC_FIRST; "
                    "ifree the page")
        if isinstance(e, Visit):
            if e.place:
                return (f"free_pages walk: pf = {e.addr:#x} ({e.size} B)"
                        + (": the freed pages go here" if e.fits else ": pf->end < ptr, on"))
            if self._is_chunk_visit(e):
                return f"malloc_bytes: the first free chunk of the head page: {e.addr:#x} ({e.size} B)"
            verdict = "pf->size >= size: take its front" if e.fits else "pf->size < size: continue"
            return f"malloc_pages: free run {e.addr:#x} ({count(e.size // self.pagesize, 'page')}): {verdict}"
        if isinstance(e, WalkStep):
            return f"free_pages walk: pf = {e.addr:#x} ({e.size} B)" + (": here" if e.stop else "")
        if isinstance(e, Split):
            return (f"pf->page += {e.taken_size}: pages {e.taken_addr:#x}.. taken, the run now "
                    f"starts at {e.rest_addr:#x} ({e.rest_size} B)")
        if isinstance(e, ListRemove):
            return f"the run {e.addr:#x} ({e.size} B) fits exactly: off the free list"
        if isinstance(e, ListInsert):
            return f"free_pages: run {e.addr:#x} ({count(e.size // self.pagesize, 'page')}) on the free list"
        if isinstance(e, InsertionPoint):
            if e.prev is None and e.next is None:
                return f"free_pages: the free list is empty: {e.addr:#x} ({e.size} B) goes at its head"
            where = (f"after {e.prev:#x}" if e.prev is not None else "at the head") + \
                (f", before {e.next:#x}" if e.next is not None else ", at the tail")
            return f"free_pages: pages {e.addr:#x} ({e.size} B) go {where}"
        if isinstance(e, Coalesce):
            return (f"free_pages: {e.low_addr:#x} ({e.low_size} B) and {e.high_addr:#x} "
                    f"({e.high_size} B) touch: one run of {e.size} B")
        if isinstance(e, Grow):
            return f"map_pages: brk up by {count(e.increment // self.pagesize, 'page')}, from {e.old_brk:#x}"
        if isinstance(e, Shrink):
            return (f"the last run is longer than malloc_cache ({self.cache} B): brk back by "
                    f"{e.decrement} B to {e.old_brk - e.decrement:#x}")
        if isinstance(e, Placed):
            return f"malloc returns {e.payload:#x} ({e.size} B) for {e.request} B"
        if isinstance(e, Released):
            what = "chunk" if e.size <= self.maxsize else "pages"
            return f"ifree({e.addr:#x}): the page directory says {what} ({e.size} B)"
        return None

    def explain_events(self, events: list) -> list[str | None]:
        """The chunks phkmalloc takes or frees for itself, said so: a page's
        outside pginfo (malloc'd just before the page is cut, freed just after
        it is dissolved) and a free run's record (``px = imalloc(sizeof *px)``)."""
        out = [self.explain_event(e) for e in events]
        infos = {e.info for e in events if isinstance(e, ChunkPageMade) and e.info != e.page}
        dissolved = False
        freeing_pages = False
        for i, e in enumerate(events):
            if isinstance(e, ChunkPageDissolved):
                dissolved = True
            elif isinstance(e, Released):
                freeing_pages = e.size > self.maxsize
            elif isinstance(e, InsertionPoint):
                freeing_pages = False
            elif isinstance(e, ChunkTaken):
                if e.addr in infos:
                    out[i] = (f"imalloc({self._pginfo_bytes(self._shift_of_info(events, e.addr))}) for the "
                              f"pginfo of the page being cut: chunk {e.index} of page {e.page:#x} "
                              f"({e.addr:#x})")
                elif freeing_pages and e.size >= self.pgfree_size:
                    out[i] = (f"px is gone: px = imalloc({self.pgfree_size}) for the freed run's record: "
                              f"chunk {e.index} of page {e.page:#x} ({e.addr:#x})")
            elif isinstance(e, ChunkFreed) and dissolved:
                out[i] = f"ifree(pginfo): its pginfo chunk {e.addr:#x} goes back to page {e.page:#x}"
                dissolved = False
        return out

    @staticmethod
    def _shift_of_info(events: list, info: int) -> int:
        return next(e.shift for e in events if isinstance(e, ChunkPageMade) and e.info == info)

    def _is_chunk_visit(self, e: Visit) -> bool:
        return e.size <= self.maxsize and not e.place

    def describe_record(self, rec) -> list[str]:
        out = super().describe_record(rec)
        made = [e for e in rec.events or () if isinstance(e, ChunkPageMade)]
        out.extend(f"cut page {e.page:#x} into {e.size} B chunks" for e in made)
        if any(isinstance(e, Shrink) for e in rec.events or ()):
            out.append("gave pages back to the system")
        return out

    # -------------------------------------------------------------- views
    def structure(self) -> dict:
        """The page directory as runs, each chunk page with its bitmap, the
        lists ``page_dir[j]`` and the free-page list (kind ``page-directory``)."""
        sizes: dict[int, int] = {}
        chunk_pages = {}
        for idx, entry in self.page_dir.items():
            if isinstance(entry, PageInfo):
                free = self._free_chunks(entry)
                for a in free:
                    sizes[a] = entry.size
                chunk_pages[entry.page] = {"shift": entry.shift, "size": entry.size, "total": entry.total,
                                           "free": entry.free, "bitmap": entry.bits, "free_chunks": free,
                                           "info": entry.info, "stolen": entry.stolen}
        for r in self.runs:
            sizes[r.page] = r.end - r.page
        chunk_lists = {j: [bp.page for bp in lst] for j, lst in self.buckets.items()}
        apart = []
        reserve = self.arena.brk - self.core_top
        if reserve:
            sizes[self.core_top] = reserve
            apart.append(structure.outside(self.core_top, "the pool not handed out yet"))
        lists = {f"free pages": [r.page for r in self.runs]}
        for j, pages in chunk_lists.items():
            for page in pages:
                lists[f"page_dir[{j}] page {page:#x}"] = chunk_pages[page]["free_chunks"]
        return structure.make("page-directory", dict(sorted(sizes.items())), outside_blocks=apart,
                              pagesize=self.pagesize, pages=self._page_runs(),
                              chunk_pages=dict(sorted(chunk_pages.items())), chunk_lists=chunk_lists,
                              free_runs=[r.page for r in self.runs], lists=lists)

    def _free_chunks(self, bp: PageInfo) -> list[int]:
        out = []
        bits = bp.bits
        while bits:
            low = bits & -bits
            out.append(bp.page + ((low.bit_length() - 1) << bp.shift))
            bits ^= low
        return out

    def _page_runs(self) -> list[list]:
        """[[addr, npages, state]] in address order: 'free', 'run' or 'chunks'."""
        out = []
        P = self.pagesize
        base = self.arena.base
        page_dir = self.page_dir
        idx = self._index(base)
        end = self._index(self.core_top)
        while idx < end:
            entry = page_dir[idx]
            n = 1
            if isinstance(entry, PageInfo):
                state = "chunks"
            elif entry == MALLOC_FIRST:
                while page_dir.get(idx + n) == MALLOC_FOLLOW:
                    n += 1
                state = "run"
            elif entry == MALLOC_FREE:
                while page_dir.get(idx + n) == MALLOC_FREE and idx + n < end:
                    n += 1
                state = "free"
            else:
                raise AssertionError(f"page {idx * P:#x} has directory entry {entry!r}")
            out.append([idx * P, n, state])
            idx += n
        return out

    def free_blocks(self) -> Iterator[tuple[int, int]]:
        for r in self.runs:
            yield r.page, r.end - r.page
        for entry in self.page_dir.values():
            if isinstance(entry, PageInfo):
                for a in self._free_chunks(entry):
                    yield a, entry.size
        reserve = self.arena.brk - self.core_top
        if reserve:
            yield self.core_top, reserve

    def fragmentation_probe(self) -> tuple[int, int, int, int]:
        top_end = self.core_top
        reserve = self.arena.brk - top_end
        top_chunk = 0
        if not reserve and top_end > self.arena.base:
            last = self.page_dir.get(self._index(top_end - 1))
            if isinstance(last, PageInfo) and last.bits >> ((self.pagesize >> last.shift) - 1) & 1:
                top_chunk = last.size
        return self.classes.probe(top_end, top_chunk, reserve)

    def measure_row(self, rec) -> tuple:
        """The build's row through :meth:`fragmentation_probe` worked out in
        place, the page directory and the books bound once, and the counters
        this policy adds to (:data:`~heapscope.allocators.free_classes.ROW_FIELDS`);
        a subclass gets the default row."""
        if type(self) is not PhkMalloc:
            return super().measure_row(rec)
        s = self
        arena = self.arena
        fixed = arena.fixed
        page_dir = self.page_dir
        pageshift, pagesize = self.pageshift, self.pagesize
        probe = self.classes.probe
        pack = ROW.pack_into

        def write(buf, off, live_bytes, payload):
            top_end = s.core_top
            reserve = arena.brk - top_end
            top_chunk = 0
            if not reserve and top_end > arena.base:
                last = page_dir.get((top_end - 1) >> pageshift)
                if isinstance(last, PageInfo) and last.bits >> ((pagesize >> last.shift) - 1) & 1:
                    top_chunk = last.size
            free, _, top, below = probe(top_end, top_chunk, reserve)
            pack(buf, off, s.touched_high - s.touched_low if fixed else arena.brk, live_bytes,
                 s.in_use, s.header_in_use, free, top, below,
                 rec.visits, rec.splits, rec.merges, rec.grows, rec.walked, payload)
        return ROW_FIELDS, write

    def _blocks(self):
        P = self.pagesize
        meta = self.meta
        for addr, n, state in self._page_runs():
            if state == "free":
                yield addr, n * P, FREE_BLOCK, None
            elif state == "run":
                if addr in meta:
                    yield addr, n * P, META, None
                else:
                    yield addr, n * P, USED, addr
            else:
                bp = self.page_dir[self._index(addr)]
                size = bp.size
                bits = bp.bits
                for i in range(P >> bp.shift):
                    a = addr + i * size
                    if bits >> i & 1:
                        yield a, size, FREE_BLOCK, None
                    elif i < bp.stolen or a in meta:
                        yield a, size, META, None
                    else:
                        yield a, size, USED, a
        if self.core_top < self.arena.brk:
            yield self.core_top, self.arena.brk - self.core_top, FREE_BLOCK, None

    def _policy_signature(self) -> tuple:
        return (tuple((j, tuple(bp.page for bp in lst)) for j, lst in self.buckets.items()),
                tuple((r.page, r.end, r.holder) for r in self.runs), self.px)

    # -------------------------------------------------------------- check
    def _check_structure(self, blocks: list[Block]) -> None:
        fail = self._fail
        P = self.pagesize
        page_dir = self.page_dir
        base_idx = self._index(self.arena.base)
        top_idx = self._index(self.core_top)
        fail(self.core_top % P == 0, f"the break {self.core_top:#x} is not on a page boundary")
        fail(set(page_dir) == set(range(base_idx, top_idx)),
             "the page directory does not describe exactly the pages below the break")
        # The free-page list: address order, joined, every free page on it once.
        free_pages = set()
        prev_end = None
        for r in self.runs:
            if r.page >= r.end or r.page % P or r.end % P:
                fail(False, f"free run [{r.page:#x}, {r.end:#x}) is empty or not whole pages")
            if prev_end is not None and r.page <= prev_end:
                fail(False, f"free run {r.page:#x} is not after the previous one, or touches it "
                            "(runs that touch must be joined)")
            prev_end = r.end
            for idx in range(self._index(r.page), self._index(r.end)):
                free_pages.add(idx)
            if r.holder is not None and self.meta.get(r.holder) != "pgfree":
                fail(False, f"the record of run {r.page:#x} at {r.holder:#x} is not a pgfree chunk")
        marked = {idx for idx, e in page_dir.items() if e == MALLOC_FREE}
        fail(marked == free_pages, f"pages marked MALLOC_FREE {sorted(marked)[:5]} differ from the "
                                   f"free-page list's {sorted(free_pages)[:5]}")
        if self.runs and self.runs[-1].end == self.core_top and not self.arena.fixed:
            fail(self.runs[-1].end - self.runs[-1].page <= self.cache,
                 "the last run is longer than malloc_cache but was not given back")
        # Chunk pages: bitmaps, counts, lists.
        listed = {}
        for j, lst in self.buckets.items():
            for bp in lst:
                if bp.page in listed:
                    fail(False, f"page {bp.page:#x} is on page_dir[{j}] twice or on two lists")
                listed[bp.page] = j
        free_counts: dict[int, int] = {}
        for idx, e in page_dir.items():
            if not isinstance(e, PageInfo):
                if e == MALLOC_FOLLOW and page_dir.get(idx - 1) not in (MALLOC_FIRST, MALLOC_FOLLOW):
                    fail(False, f"page {idx * P:#x} follows no first page")
                continue
            n = P >> e.shift
            fail(e.page == idx * P and e.size == 1 << e.shift, f"pginfo of page {idx * P:#x} is not its own")
            fail(e.total + e.stolen == n, f"page {e.page:#x}: {e.total} chunks + {e.stolen} stolen "
                                          f"is not {n}")
            fail(bin(e.bits).count("1") == e.free and e.bits >> n == 0 and e.bits & ((1 << e.stolen) - 1) == 0,
                 f"page {e.page:#x}: bitmap {e.bits:#x} disagrees with its {e.free} free chunks")
            fail(0 < e.free < e.total or (e.free == 0 and e.page not in listed),
                 f"page {e.page:#x} has {e.free} of {e.total} chunks free")
            fail((e.free > 0) == (listed.get(e.page) == e.shift),
                 f"page {e.page:#x} with {e.free} free chunks is {'not ' if e.free else ''}on "
                 f"page_dir[{e.shift}]")
            if e.stolen:
                fail(e.info == e.page, f"page {e.page:#x} steals chunks but its pginfo is elsewhere")
            else:
                fail(self.meta.get(e.info) == "pginfo", f"the pginfo of page {e.page:#x} at "
                                                        f"{e.info:#x} is not a pginfo chunk")
            if e.free:
                free_counts[e.size] = free_counts.get(e.size, 0) + e.free
        wrong = self.classes.mismatch(free_counts)
        fail(wrong is None, wrong)
        runs = sorted(r.end - r.page for r in self.runs)
        fail(list(self.classes.runs.sizes) == runs, "the free run index does not match the runs")
        if self.px is not None:
            fail(self.meta.get(self.px) == "pgfree", f"px {self.px:#x} is not a pgfree chunk")
        holders = [r.holder for r in self.runs if r.holder is not None] + \
            ([self.px] if self.px is not None else [])
        fail(sorted(holders) == sorted(a for a, m in self.meta.items() if m == "pgfree"),
             "pgfree chunks and free-list records disagree")
