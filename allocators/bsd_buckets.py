"""Power-of-two buckets: Chris Kingsley's malloc (Caltech, 2/21/82) as shipped
in 4.2BSD and, in the form followed here, 4.3BSD libc (``lib/libc/gen/malloc.c``
5.6, 1986): the allocator seed 000 calls "bsi".  DESIGN.md strategy 6.

The original, rule by rule:

* **Header.** Each block starts with a ``union overhead``: a pointer
  ``ov_next`` while the block is free, ``ov_magic``/``ov_index`` (the bucket)
  while it is in use.  The union is one pointer wide, 4 bytes on the VAX; on
  LP64 the pointer makes it 8 bytes, which is also what keeps the payload
  8-byte aligned.  We take ``header = max(word, align)`` bytes: one pointer,
  widened to the alignment when ``align > word`` as later versions of the code
  widen it with a ``double strut``.
* **Buckets.** ``nextf[k]`` is a LIFO list of free blocks of ``2**(k+3)`` bytes,
  ``k < NBUCKETS = 30``; ``nextf[0]`` holds 8-byte blocks.  Blocks are never
  split and never coalesced.
* **Bucket choice.** A request of n bytes goes to the smallest bucket whose
  blocks hold n bytes after the header.  For buckets smaller than a page that
  is ``2**(k+3) - header >= n``: on LP64 20 and 24 bytes go to the 32-byte
  bucket, 25 to the 64-byte one.  4.3BSD gives buckets of a page or more one
  extra page (see ``morecore``), so bucket k >= ``pagebucket`` holds
  ``2**(k+3) + pagesize - header`` bytes ("round to 2**n+pagesize-overhead for
  large blocks", revision 4.5): a request of 3000 bytes takes bucket 9 and an
  8192-byte block.
* **First call** (4.3BSD): ``sbrk`` enough bytes that the break sits
  ``header`` bytes below a page boundary, so that every payload carved later is
  page aligned (blocks of one page then never straddle two).  From base 0 that
  is ``pagesize - header`` bytes, shown as a META block.
* **morecore(bucket)**: if the block size ``sz = 2**(k+3)`` is below the page
  size, ``sbrk(pagesize)`` and carve it into ``pagesize / sz`` blocks, all
  pushed on the bucket's list in address order; otherwise ``sbrk`` one block of
  ``sz + pagesize`` bytes (4.3BSD) or of ``sz`` bytes (``large_extra_page=False``:
  4.2BSD and the later FreeBSD rtld copy).
* **free** pushes the block on the front of ``nextf[ov_index]``.
* **realloc** keeps the block when the new size maps to the same bucket
  (``capacity(k-1) < n <= capacity(k)``, so shrinking a lot moves the block);
  otherwise 4.3BSD frees first and then mallocs.  We do the same, except that
  if that malloc fails the old block is taken back off its list and kept:
  4.3BSD would have lost it, C's realloc keeps it and the replay relies on that.
* The magic-number and range checks (``MAGIC``, ``RCHECK``) and the
  "compaction" realloc of an already freed block are left out: the replay
  never frees twice.

Fixed pool (``pool_size=N``): memory is carved from the pool instead of sbrk,
as the FreeBSD rtld copy carves its ``pagepool``; the part not yet carved is
one free block on no list.

Search length: the bucket index is computed without looking at any block, and
the block at the head of ``nextf[k]`` is taken, so a malloc that succeeds
examines exactly one block (one visit), morecore or not; a failed one examines
none.

View: one column per bucket (:meth:`BSDBuckets.bucket_sizes`,
:meth:`BSDBuckets.bucket`), blocks stacked in list order; a
:class:`BucketRefill` event shows a page carved into equal blocks.
"""

from __future__ import annotations

import struct
from bisect import bisect_left
from typing import Iterator

from . import structure
from .events import BucketRefill, Grow, ListInsert, ListRemove, Note, Placed, Released, Visit
from .explain import times
from .params import BOOL, SIZE, Param, ParamError
from .strategy import FREE_BLOCK, META, USED, Block, Strategy
from .strategy_measures import probed_row_writer

#: number of buckets, nextf[0 .. NBUCKETS-1], as in 4.3BSD
NBUCKETS = 30
#: nextf[0] holds 2**3 = 8-byte blocks
FIRST_BUCKET_SHIFT = 3
#: how the Note of 4.3BSD's first-call padding begins
FIRST_CALL = "first call:"
#: the build's row of measures (BSDBuckets.measure_row): no largest_free (the
#: max of the two after it), and of the counters only the visits and grows
#: the policy ever adds to
ROW_FIELDS = ("heap", "live", "in_use", "headers", "free", "top_free", "largest_below_top",
              "visits", "grows", "payload")
_ROW = struct.Struct(f"<{len(ROW_FIELDS)}q")


class BSDBuckets(Strategy):
    """Kingsley's power-of-two bucket allocator (4.3BSD malloc.c)."""

    #: dicts and lists of ints only: a copy of the heap copies them without looking (state_copy.py)
    flat_state = Strategy.flat_state + ('ov_next', 'ov_index')
    name = "bsd-buckets"
    #: the event types this policy's records can hold (conditions.py: a condition
    #: on another is answered without a replay)
    makes_events = frozenset({"BucketRefill", "Grow", "GrowFailed", "ListInsert", "ListRemove", "Note",
                              "Placed", "Released", "Shrink", "Visit"})
    title = "Power-of-two buckets (Kingsley, 4.3BSD malloc)"
    citation = "C. Kingsley, malloc.c (Caltech 1982), 4.2/4.3BSD libc"
    #: its state is dicts and lists of ints, with no reference back to the heap:
    #: after a checkpoint the build goes on from a twin (replay.py, _go_on_after)
    plain_state = True

    params = (
        # morecore carves a page into pagesize/8 blocks, each a Python dict
        # entry: 64 MiB pages took 3.5 GB, 64 KiB pages take a few MB.
        Param("pagesize", SIZE, 4096, "page size: buckets below it are carved from one page, "
              "larger ones get an extra page", low=8, high=1 << 16, power_of_two=True),
        Param("page_align", BOOL, True, "the first call pads the break so that payloads are "
              "page aligned (4.3BSD)"),
        Param("large_extra_page", BOOL, True, "blocks of a page or more get one extra page "
              "(4.3BSD; false: 4.2BSD)"),
    )

    def __init__(self, *, pagesize: int = 4096, page_align: bool = True,
                 large_extra_page: bool = True, **common) -> None:
        super().__init__(**common)
        # sizeof(union overhead): one pointer, widened to the alignment.
        self.header = max(self.word, self.align)
        if pagesize < 2 * self.header:
            raise ParamError(f"bsd-buckets: pagesize={pagesize} cannot hold two {self.header}-byte "
                             f"block headers (align={self.align}); pagesize accepts powers of two "
                             f"in {2 * self.header}..64K here")
        self.pagesize = pagesize
        self.page_align = page_align
        self.large_extra_page = large_extra_page
        self.pagebucket = pagesize.bit_length() - 1 - FIRST_BUCKET_SHIFT
        # Bytes of a block of bucket k, and what a request may use of it.
        self.block_sizes = [self._bucket_block_size(k) for k in range(NBUCKETS)]
        self.capacities = [s - self.header for s in self.block_sizes]
        self.nextf: list[int | None] = [None] * NBUCKETS
        self.ov_next: dict[int, int | None] = {}   # free blocks: their ov_next
        self.ov_index: dict[int, int] = {}         # every carved block: its bucket
        self.free_count = [0] * NBUCKETS
        self.free_bytes = 0                        # bytes on the bucket lists
        self.regions: list[tuple[int, int, int]] = []  # (addr, bucket, blocks) per morecore
        #: the highest bucket holding a free block, -1 if none: the measures'
        #: largest free block (not in 4.3BSD, which never needs it)
        self.free_high = -1
        self.pad = 0                # META bytes the first call sbrk'd to page-align payloads
        self.started = False        # 4.3BSD's "pagesz != 0": the first call has run
        self.last_block: int | None = None

    def _bucket_block_size(self, k: int) -> int:
        sz = 1 << (k + FIRST_BUCKET_SHIFT)
        if sz >= self.pagesize and self.large_extra_page:
            return sz + self.pagesize
        return sz

    def largest_request(self) -> int:
        """No request past the largest bucket's capacity is ever granted (4.3BSD
        returns NULL for it): it fails at once, as any request past the room."""
        return min(super().largest_request(), self.capacities[-1])

    def bucket_for(self, nbytes: int) -> int:
        """The bucket a request of ``nbytes`` goes to (NBUCKETS if none holds it)."""
        return bisect_left(self.capacities, nbytes)

    # ------------------------------------------------------------ malloc
    def _malloc(self, nbytes: int) -> int | None:
        if not self.started and not self._start():
            return None
        bucket = bisect_left(self.capacities, nbytes)
        if bucket >= NBUCKETS:
            self._event(Note(f"{nbytes} bytes is more than the largest bucket holds"))
            return None
        op = self.nextf[bucket]
        if op is None:
            self._morecore(bucket)
            op = self.nextf[bucket]
            if op is None:
                return None
        # Remove from the linked list.
        self.nextf[bucket] = self.ov_next.pop(op)
        self.free_count[bucket] -= 1
        if self.nextf[bucket] is None and bucket == self.free_high:
            self._lower_free_high()
        size = self.block_sizes[bucket]
        self.free_bytes -= size
        rec = self.rec
        rec.visits += 1
        payload = op + self.header
        self._note_alloc(payload, op, size, nbytes, self.header)
        events = rec.events
        if events is not None:
            # the one block the search looks at: the head of nextf[bucket]
            events.append(Visit(op, size, True))
            events.append(ListRemove(op, size, (bucket,)))
            events.append(Placed(op, size, payload, nbytes))
        return payload

    def _start(self) -> bool:
        """4.3BSD's first call: move the break to ``header`` bytes below a page
        boundary so that payloads are page aligned."""
        if self.page_align:
            n = self.pagesize - self.header - (self.core_top & (self.pagesize - 1))
            if n < 0:
                n += self.pagesize
            if n:
                if self._take_core(n) is None:
                    return False
                self.pad = n
                self._event(Note(f"{FIRST_CALL} {n} bytes of padding put the break {self.header} bytes "
                                 f"below a page boundary, so payloads are page aligned"))
        self.started = True
        return True

    def _morecore(self, bucket: int) -> None:
        """Allocate more memory to the indicated bucket (4.3BSD ``morecore``)."""
        sz = 1 << (bucket + FIRST_BUCKET_SHIFT)
        if sz < self.pagesize:
            amt = self.pagesize
            nblks = amt // sz
        else:
            amt = sz = self.block_sizes[bucket]
            nblks = 1
        op = self._take_core(amt)
        if op is None:
            return
        self.regions.append((op, bucket, nblks))
        ov_next = self.ov_next
        ov_index = self.ov_index
        # The list was empty: the carved blocks become the whole list, in address order.
        self.nextf[bucket] = op
        last = op + (nblks - 1) * sz
        for addr in range(op, last, sz):
            ov_next[addr] = addr + sz
            ov_index[addr] = bucket
        ov_next[last] = None
        ov_index[last] = bucket
        self.last_block = last
        self.free_count[bucket] += nblks
        if bucket > self.free_high:
            self.free_high = bucket
        self.free_bytes += amt
        self._event(BucketRefill(bucket, op, sz, nblks))

    # -------------------------------------------------------------- free
    def _free(self, payload: int) -> None:
        lb = self._note_free(payload)
        op = lb.block_addr
        bucket = self.ov_index[op]
        self.ov_next[op] = self.nextf[bucket]
        self.nextf[bucket] = op
        self.free_count[bucket] += 1
        if bucket > self.free_high:
            self.free_high = bucket
        self.free_bytes += lb.block_size
        events = self.rec.events
        if events is not None:
            events.append(Released(op, lb.block_size))
            events.append(ListInsert(op, lb.block_size, (bucket,)))

    def _realloc(self, payload: int, nbytes: int) -> int | None:
        """4.3BSD realloc: stay if the size maps to the same bucket, else free
        then malloc (keeping the old block if that malloc fails)."""
        lb = self.live[payload]
        bucket = self.ov_index[lb.block_addr]
        smaller = self.capacities[bucket - 1] if bucket else 0
        if smaller < nbytes <= self.capacities[bucket]:
            self._rebook(payload, nbytes)
            return payload
        self._free(payload)
        new = self._malloc(nbytes)
        if new is None:
            self._take_back(lb, payload)
        return new

    def _lower_free_high(self) -> None:
        """The highest bucket's list just emptied: the next non-empty one down."""
        k = self.free_high - 1
        counts = self.free_count
        while k >= 0 and not counts[k]:
            k -= 1
        self.free_high = k

    def _take_back(self, lb, payload: int) -> None:
        """Undo the free of a realloc whose malloc failed: the block is still
        at the head of its list, since nothing was pushed there since."""
        op = lb.block_addr
        bucket = self.ov_index[op]
        self.nextf[bucket] = self.ov_next.pop(op)
        self.free_count[bucket] -= 1
        if self.nextf[bucket] is None and bucket == self.free_high:
            self._lower_free_high()
        self.free_bytes -= lb.block_size
        self._event(ListRemove(op, lb.block_size, (bucket,)))
        self._note_alloc(payload, op, lb.block_size, lb.request, lb.header)
        self._event(Note("realloc failed: the old block is kept (4.3BSD had already freed it)"))

    # ----------------------------------------------------------- explain
    def explain_event(self, e) -> str | None:
        """4.3BSD malloc.c's words: ``nextf[bucket]``, ``morecore``, ``ov_next``."""
        if isinstance(e, BucketRefill):
            return (f"nextf[{e.bucket}] empty: morecore carved {e.count} "
                    f"block{'s' if e.count != 1 else ''} of {e.block_size} B at {e.addr:#x}")
        if isinstance(e, Visit):
            return f"the head of nextf[{self._bucket_of(e.size)}] is {e.addr:#x} ({e.size} B): take it"
        if isinstance(e, ListRemove):
            return f"nextf[{e.where[0]}] = its ov_next: {e.addr:#x} leaves the bucket"
        if isinstance(e, ListInsert):
            return f"free: {e.addr:#x} ({e.size} B) goes on the front of nextf[{e.where[0]}]"
        if isinstance(e, Grow):
            return f"sbrk({e.increment}) = {e.old_brk:#x}"
        if isinstance(e, Placed):
            return (f"{e.addr:#x} ({e.size} B): ov_index = {self._bucket_of(e.size)}; "
                    f"payload {e.payload:#x} for {e.request} B")
        if isinstance(e, Released):
            return f"free {e.addr:#x}: its ov_index names bucket {self._bucket_of(e.size)} ({e.size} B)"
        return None

    def _bucket_of(self, block_size: int) -> int:
        sizes = self.block_sizes
        return sizes.index(block_size) if block_size in sizes else -1

    def describe_record(self, rec) -> list[str]:
        """The bucket and its refill, in place of "grew the heap"."""
        events = rec.events or ()
        refills = [e for e in events if isinstance(e, BucketRefill)]
        out = []
        taken = next((e for e in events if isinstance(e, ListRemove)), None)
        if rec.kind != "free" and taken is not None and not rec.failed:
            out.append(f"from nextf[{taken.where[0]}]")
        elif rec.kind == "free":
            pushed = next((e for e in events if isinstance(e, ListInsert)), None)
            if pushed is not None:
                out.append(f"back on the front of nextf[{pushed.where[0]}]")
        else:
            out = super().describe_record(rec)[:1]
        out.extend(self.explain_event(e) for e in refills)
        extra = rec.grows - len(refills)
        if any(isinstance(e, Note) and e.text.startswith(FIRST_CALL) for e in events):
            out.append("the first call padded the break to a page boundary")
            extra -= 1
        if extra > 0:
            out.append(f"grew the heap {times(extra)}")
        return out

    # ------------------------------------------------------------- views
    def bucket_sizes(self) -> list[int]:
        """Block size of each bucket ``nextf[k]``, k = 0 .. NBUCKETS-1."""
        return list(self.block_sizes)

    def bucket(self, k: int) -> list[int]:
        """Block addresses on ``nextf[k]``, head first."""
        out = []
        p = self.nextf[k]
        while p is not None:
            out.append(p)
            p = self.ov_next[p]
        return out

    def structure(self) -> dict:
        """``nextf[k]`` of every bucket, head first, and each bucket's block size."""
        buckets = {k: self.bucket(k) for k in range(NBUCKETS)}
        block_sizes = {k: self.block_sizes[k] for k in range(NBUCKETS)}
        sizes = {a: block_sizes[k] for k, addrs in buckets.items() for a in addrs}
        apart = []
        reserve = self.arena.brk - self.core_top
        if reserve:
            sizes[self.core_top] = reserve
            apart.append(structure.outside(self.core_top, "the pool not carved into buckets yet"))
        return structure.make("buckets", sizes, outside_blocks=apart, buckets=buckets,
                              block_sizes=block_sizes)

    def free_blocks(self) -> Iterator[tuple[int, int]]:
        sizes = self.block_sizes
        ov_index = self.ov_index
        for addr in self.ov_next:
            yield addr, sizes[ov_index[addr]]
        reserve = self.arena.brk - self.core_top
        if reserve:
            yield self.core_top, reserve

    def fragmentation_probe(self) -> tuple[int, int, int, int]:
        """O(buckets) from the per-bucket counts (:meth:`_probe`)."""
        return self._probe()()

    def _probe(self):
        """The fragmentation probe, its containers bound once (see
        :func:`~heapscope.allocators.strategy_measures.probed_row_writer`); it holds
        the containers of now: a bulk replay's lifetime."""
        s = self
        arena = self.arena
        ov_next = self.ov_next
        ov_index = self.ov_index
        counts = self.free_count
        sizes = self.block_sizes

        def probe():
            reserve = arena.brk - s.core_top
            top_bucket = -1
            if reserve:
                top = reserve
            else:
                last = s.last_block
                if last in ov_next:      # the last carved block is free
                    top_bucket = ov_index[last]
                    top = sizes[top_bucket]
                else:
                    top = 0
            below = 0
            k = s.free_high              # buckets above it are empty
            while k >= 0:
                n = counts[k]
                if n and (n > 1 or k != top_bucket):
                    below = sizes[k]
                    break
                k -= 1
            return s.free_bytes + reserve, top if top > below else below, top, below
        return probe

    def measure_row(self, rec) -> tuple:
        """The build's row through this policy's own probe and counters
        (:func:`~heapscope.allocators.strategy_measures.probed_row_writer`); a subclass
        gets the default row."""
        if type(self) is not BSDBuckets:
            return super().measure_row(rec)
        return ROW_FIELDS, probed_row_writer(self, rec, _ROW, joins=False)

    def _blocks(self):
        base = self.arena.base
        if self.pad:
            yield base, self.pad, META, None
        ov_next = self.ov_next
        header = self.header
        sizes = self.block_sizes
        for op, bucket, nblks in self.regions:
            sz = sizes[bucket]
            for addr in range(op, op + nblks * sz, sz):
                if addr in ov_next:
                    yield addr, sz, FREE_BLOCK, None
                else:
                    yield addr, sz, USED, addr + header
        if self.core_top < self.arena.brk:
            yield self.core_top, self.arena.brk - self.core_top, FREE_BLOCK, None

    def _policy_signature(self) -> tuple:
        return tuple(tuple(self.bucket(k)) for k in range(NBUCKETS))

    # ------------------------------------------------------------- check
    def _check_structure(self, blocks: list[Block]) -> None:
        fail = self._fail
        base = self.arena.base
        page = self.pagesize
        header = self.header
        sizes = self.block_sizes
        ov_index = self.ov_index
        ov_next = self.ov_next
        # Layout: the first call's pad, then the morecore regions end to end.
        pos = base + self.pad
        carved = 0
        for op, bucket, nblks in self.regions:
            fail(op == pos, f"morecore region {op:#x} does not start where the previous one ends ({pos:#x})")
            fail(0 <= bucket < NBUCKETS, f"region {op:#x} has bucket {bucket}")
            sz = sizes[bucket]
            fail(nblks == (page // sz if sz < page else 1),
                 f"region {op:#x} of bucket {bucket} holds {nblks} blocks of {sz} bytes")
            if self.page_align:
                fail((op + header) % page == 0,
                     f"region {op:#x} does not start {header} bytes below a page boundary")
            for addr in range(op, op + nblks * sz, sz):
                if ov_index.get(addr) != bucket:
                    fail(False, f"block {addr:#x} in a page of bucket {bucket} has ov_index {ov_index.get(addr)!r}")
            carved += nblks
            pos = op + nblks * sz
        fail(pos == self.core_top, f"regions end at {pos:#x} but {self.core_top:#x} has been carved")
        fail(len(ov_index) == carved, f"{len(ov_index)} ov_index entries for {carved} carved blocks")
        fail(self.core_top == self.arena.brk or self.arena.fixed,
             f"uncarved bytes [{self.core_top:#x}, {self.arena.brk:#x}) in a heap grown by sbrk")

        free_in_heap = set()
        free_bytes = 0
        bucket_for = self.bucket_for
        caps = self.capacities
        for b in blocks:
            if b.state == META:
                fail(b.addr == base and b.size == self.pad,
                     f"META block {b.addr:#x}+{b.size} is not the first-call pad")
                continue
            if b.addr >= self.core_top:
                fail(b.state == FREE_BLOCK, f"the uncarved pool at {b.addr:#x} is not reported free")
                continue
            # Conditions first, messages only when one fails: check() runs after every op.
            bucket = ov_index.get(b.addr)
            if bucket is None or b.size != sizes[bucket]:
                fail(False, f"block {b.addr:#x} of {b.size} bytes does not match its bucket {bucket!r}")
            if b.state == USED:
                if b.payload != b.addr + header:
                    fail(False, f"payload {b.payload:#x} of block {b.addr:#x} is not right after "
                                f"its {header}-byte header")
                if b.header != header:
                    fail(False, f"block {b.addr:#x} is booked with {b.header} header bytes, not {header}")
                # bucket_for(request) == bucket, without the bisect
                if not (b.request <= caps[bucket] and (bucket == 0 or caps[bucket - 1] < b.request)):
                    fail(False, f"used block {b.addr:#x} is in bucket {bucket} but a request of "
                                f"{b.request} bytes maps to bucket {bucket_for(b.request)}")
            else:
                free_in_heap.add(b.addr)
                free_bytes += b.size
        fail(free_bytes == self.free_bytes, f"free blocks add up to {free_bytes} bytes, booked {self.free_bytes}")

        # nextf[k]: each free block on exactly one list, the list of its bucket.
        on_lists = set()
        for k in range(NBUCKETS):
            p, n = self.nextf[k], 0
            while p is not None:
                if p not in ov_next:
                    fail(False, f"nextf[{k}] reaches {p:#x}, which is not a free block")
                if p in on_lists:
                    fail(False, f"block {p:#x} is reached twice (a cycle, or on two lists)")
                if ov_index.get(p) != k:
                    fail(False, f"block {p:#x} of bucket {ov_index.get(p)!r} is on nextf[{k}] "
                                f"({sizes[k]}-byte blocks)")
                on_lists.add(p)
                n += 1
                p = ov_next[p]
            fail(n == self.free_count[k], f"nextf[{k}] holds {n} blocks but its count says {self.free_count[k]}")
        fail(on_lists == free_in_heap,
             f"free blocks {sorted(free_in_heap - on_lists)[:5]} are on no list; "
             f"listed {sorted(on_lists - free_in_heap)[:5]} are not free blocks")
        fail(len(ov_next) == len(on_lists), "ov_next holds blocks that are on no bucket list")
        high = max((k for k in range(NBUCKETS) if self.nextf[k] is not None), default=-1)
        fail(self.free_high == high, f"free_high is {self.free_high} but the highest non-empty "
                                     f"bucket is {high}")
