"""Binary buddy system: Knuth, *The Art of Computer Programming*, vol. 1,
section 2.5, algorithms R (reservation) and S (liberation); the method is
K. C. Knowlton's ("A fast storage allocator", CACM 8(10), 1965) and H.
Markowitz's (SIMSCRIPT).  DESIGN.md strategy 4.

Knuth's rules, followed step by step:

* Every block has size ``2**k`` and starts at an address that is a multiple of
  ``2**k`` relative to the start of its pool, so the *buddy* of the block of
  size ``2**k`` at ``x`` is ``BUDDY_k(x) = x XOR 2**k`` (relative to the pool).
* Each block begins with ``TAG`` (1 = available) and ``KVAL`` (k).  Available
  blocks of size ``2**k`` are on the doubly linked list ``AVAIL[k]``
  (``LINKF``/``LINKB``, circular through the list head ``LOC(AVAIL[k])``).
* **R1** find the smallest ``j >= k`` with ``AVAIL[j]`` non-empty;
  **R2** remove its first block L; **R3/R4** while ``j > k``: ``j -= 1`` and the
  upper half ``P = L + 2**j`` becomes the only block of ``AVAIL[j]``.
* **S1** if ``k`` is the pool's order, or the buddy P is reserved, or free with
  ``KVAL(P) != k``, go to S3; **S2** unlink P from ``AVAIL[k]``, ``k += 1``,
  ``L = min(L, P)``, back to S1; **S3** put L at the *front* of ``AVAIL[k]``.

What heapscope adds, because Knuth's pool is one fixed block of ``2**m`` words
and a malloc only passes a size:

* **Chunks.** The heap grows by ``sbrk`` one chunk of ``2**max_order`` bytes at
  a time (4 KiB by default); each chunk is its own Knuth pool (its ``m``), and
  XOR is taken relative to the chunk start, so blocks of different chunks are
  never buddies.  A request too big for one chunk gets a chunk of its own
  order ``K > max_order``.  Every chunk's size is a multiple of
  ``2**max_order``, so chunks start on ``2**max_order`` boundaries of the
  arena.  With a fixed pool (``pool_size=N``) chunks are carved from the pool
  in the same order instead of ``sbrk``; the part of the pool not yet carved
  is one free block outside every AVAIL list.
* **Header.** ``TAG`` and ``KVAL`` take one word in front of the payload,
  booked as header bytes (``max(word, align)`` bytes, so payloads stay
  aligned); free reports ``KVAL`` from it, as Knuth's exercise 2.5-28 suggests,
  instead of being told k.  A request of n bytes takes the smallest order k
  with ``2**k >= n + header`` (and ``k >= min_order``).
* **Smallest block.** A free block holds its header word and ``LINKF`` /
  ``LINKB``.  As MIX packs both links into one word, we store them as two
  32-bit offsets from the arena base in the word after the header, so the
  smallest block is ``header + 8`` bytes rounded up to a power of two:
  16 bytes (``min_order = 4``) on LP64 and ILP32.
* **Realloc** (not in Knuth): the block is kept while the new size fits, else
  malloc-copy-free (the base class's rule).

Search length (DESIGN.md, "buddy: orders probed + splits"): each list head
looked at in R1 counts one visit (and one probe; the list found holds the block
taken), the splits of R4 are counted in ``rec.splits``; a malloc's work is
therefore orders probed + splits.  When every list is empty the heap grows by a
chunk and R1 probes its list once more.

View: the split tree over each chunk (:meth:`BinaryBuddy.split_tree`) next to
the ``AVAIL[k]`` lists (:meth:`BinaryBuddy.avail`); :class:`AvailProbe`,
:class:`~heapscope.allocators.events.BuddySplit` and
:class:`~heapscope.allocators.events.BuddyMerge` events animate the search, the split
cascade and the merge cascade with the XOR
(:meth:`BinaryBuddy.buddy_of`).
"""

from __future__ import annotations

import struct
from bisect import bisect_right
from typing import Iterator, NamedTuple

from . import structure
from .events import AvailProbe, BuddyMerge, BuddySplit, Grow, ListInsert, ListRemove, Note, Placed, Released
from .explain import times as _times
from .params import INT, Param, ParamError
from .strategy import FREE_BLOCK, USED, Block, LiveBlock, Strategy
from .strategy_measures import probed_row_writer

#: state of an inner node of :meth:`BinaryBuddy.split_tree`: a block split in two
SPLIT = "split"
#: bytes of the two 32-bit links LINKF/LINKB a free block keeps after its header
LINK_BYTES = 8
#: default chunk order: 4 KiB chunks
MAX_ORDER = 12

#: the fused path (:meth:`BinaryBuddy.bulk_ops`) finds the order of requests
#: below this many bytes in a table, one per (header, min_order)
FUSED_ORDER_TABLE = 4096
_order_tables: dict[tuple[int, int], list[int]] = {}
#: the build's row of measures (BinaryBuddy.measure_row): no largest_free (the
#: max of the two after it) nor the rotations and walked it never adds to
ROW_FIELDS = ("heap", "live", "in_use", "headers", "free", "top_free", "largest_below_top",
              "visits", "splits", "merges", "grows", "payload")
_ROW = struct.Struct(f"<{len(ROW_FIELDS)}q")


class SplitNode(NamedTuple):
    """One node of a chunk's split tree: a leaf is a block (USED or FREE_BLOCK)
    with no children; an inner node (state SPLIT) has its two halves."""
    addr: int
    order: int
    state: str
    children: tuple = ()


def _avail_head(k: int) -> int:
    """The key of ``LOC(AVAIL[k])``, the list head: negative, never a heap address."""
    return -1 - k


class BinaryBuddy(Strategy):
    """Knuth's binary buddy system (TAOCP 1, 2.5, algorithms R and S) over
    ``sbrk``-grown chunks of ``2**max_order`` bytes."""

    #: dicts and lists of ints only: a copy of the heap copies them without looking (state_copy.py)
    flat_state = Strategy.flat_state + ('kval', 'linkf', 'linkb', 'chunk_order', '_chunk_starts', 'avail_count')
    name = "buddy"
    #: the event types this policy's records can hold (conditions.py: a condition
    #: on another is answered without a replay)
    makes_events = frozenset({"AvailProbe", "BuddyMerge", "BuddySplit", "Grow", "GrowFailed",
                              "ListInsert", "ListRemove", "Note", "Placed", "Released", "Visit"})
    title = "Binary buddy system (Knuth 2.5, algorithms R and S)"
    citation = ("Knuth, TAOCP vol. 1, 2.5, algorithms R and S; "
                "Knowlton, CACM 8(10), 1965")
    search_counts_splits = True   # DESIGN.md: "buddy: orders probed + splits"
    search_unit = ("AVAIL list", "AVAIL lists")
    search_verb = "looking at"
    #: its state is dicts and lists of ints, with no reference back to the heap:
    #: after a checkpoint the build goes on from a twin (replay.py, _go_on_after)
    plain_state = True

    params = (
        # 2**40 bytes: the largest request a trace may hold, and within the
        # int64 columns of the measures (2**63 chunks overflowed them).
        Param("max_order", INT, None, "chunks of 2**max_order bytes, each one Knuth pool; "
              "a larger request gets a chunk of its own", low=4, high=40, none_ok=True,
              none_means="12, or min_order when that is larger"),
        # at most 1 MiB: every live block takes at least 2**min_order bytes
        Param("min_order", INT, None, "smallest block 2**min_order bytes", low=4, high=20,
              none_ok=True, none_means="the least holding a free block's header and links "
              "(4 unless align > 8)"),
    )

    def __init__(self, *, max_order: int | None = None, min_order: int | None = None,
                 **common) -> None:
        super().__init__(**common)
        # TAG + KVAL in one word, padded so the payload stays aligned: the
        # header is how a buddy system honours any alignment, since every
        # block starts on a multiple of its own power-of-two size.
        self.header = max(self.word, self.align)
        least = (self.header + LINK_BYTES - 1).bit_length()
        if min_order is None:
            min_order = least
        elif min_order < least:
            raise ParamError(
                f"buddy: min_order={min_order} gives {1 << min_order}-byte blocks, too small for a "
                f"free block's {self.header}-byte header (align={self.align}) and its two 4-byte "
                f"links; min_order accepts {least}..{max_order} here")
        if max_order is None:
            max_order = max(MAX_ORDER, min_order)
        if max_order < min_order:
            raise ParamError(f"buddy: max_order={max_order} is below min_order={min_order}"
                             + (f" (the least order that holds a {self.header}-byte header with "
                                f"align={self.align})" if min_order == least else "")
                             + f"; max_order accepts {min_order}..40 here")
        self.min_order = min_order
        self.max_order = max_order
        # KVAL of every block, free or reserved, by block address.
        self.kval: dict[int, int] = {}
        # LINKF/LINKB of the free blocks (TAG = 1 iff the address is a key)
        # and of the list heads LOC(AVAIL[k]) (negative keys).
        self.linkf: dict[int, int] = {}
        self.linkb: dict[int, int] = {}
        self.avail_count: list[int] = []
        self.top_order = -1            # highest k with an AVAIL[k] head
        #: at or above the highest non-empty AVAIL[k] (not in Knuth): where
        #: the measures' probe starts looking for the largest free block,
        #: raised when a block goes on a higher list, lowered by the probe
        self.avail_high = -1
        self._add_orders(max_order)
        self._chunks: list[tuple[int, int]] = []
        self.chunk_order: dict[int, int] = {}
        # chunk starts in address order, to find a block's chunk by bisection
        self._chunk_starts: list[int] = []
        self.free_bytes = 0            # bytes on the AVAIL lists
        #: (chunk end, address, order) of the last block, for the measures
        self._last_block = (-1, -1, -1)

    # ------------------------------------------------------------ malloc
    def _malloc(self, size: int) -> int | None:
        """Algorithm R, with heap growth when R1 finds nothing."""
        header = self.header
        k = max(self.min_order, (size + header - 1).bit_length())
        rec = self.rec
        events = rec.events
        linkf = self.linkf
        # R1. [Find block.]
        j = k
        top = self.top_order
        while j <= top:
            rec.visits += 1
            rec.probes += 1
            first = linkf[-1 - j]
            if first >= 0:
                if events is not None:
                    events.append(AvailProbe(j, first))
                break
            if events is not None:
                events.append(AvailProbe(j, None))
            j += 1
        else:
            # No AVAIL[j] holds a block: a new chunk, then R1 looks at its list.
            j = self._grow_chunk(k)
            if j is None:
                return None
            rec.visits += 1
            rec.probes += 1
            if events is not None:
                events.append(AvailProbe(j, linkf[-1 - j]))
        # R2. [Remove from list.]
        block = self._avail_remove_first(j)
        # R3/R4. [Split required? Split.]
        kval = self.kval
        while j > k:
            j -= 1
            buddy = block + (1 << j)
            kval[buddy] = j
            rec.splits += 1
            if events is not None:
                events.append(BuddySplit(block, j + 1, buddy))
                events.append(ListInsert(buddy, 1 << j, (j,)))
            self._avail_insert(buddy, j)
        kval[block] = k
        block_size = 1 << k
        self.free_bytes -= block_size
        payload = block + header
        self._note_alloc(payload, block, block_size, size, header)
        if events is not None:
            events.append(Placed(block, block_size, payload, size))
        return payload

    def _grow_chunk(self, k: int) -> int | None:
        """Add one chunk (one Knuth pool) of order ``max(k, max_order)`` and put it
        on its AVAIL list; return its order, or None if the heap cannot grow."""
        order = max(k, self.max_order)
        size = 1 << order
        addr = self._take_core(size)
        if addr is None:
            return None
        self._chunks.append((addr, order))
        self.chunk_order[addr] = order
        self._chunk_starts.append(addr)
        self._add_orders(order)
        self.kval[addr] = order
        self._avail_insert(addr, order)
        self.free_bytes += size
        self._event(ListInsert(addr, size, (order,)))
        return order

    # -------------------------------------------------------------- free
    def _free(self, payload: int) -> None:
        """Algorithm S: merge with the buddy while it is free and of the same order."""
        lb = self._note_free(payload)
        block = lb.block_addr
        kval = self.kval
        linkf = self.linkf
        k = kval[block]
        rec = self.rec
        events = rec.events
        if events is not None:
            events.append(Released(block, 1 << k))
        starts = self._chunk_starts
        chunk = starts[bisect_right(starts, block) - 1]
        m = self.chunk_order[chunk]
        # S1. [Is buddy available?]
        while k < m:
            buddy = chunk + ((block - chunk) ^ (1 << k))
            if buddy not in linkf or kval[buddy] != k:
                break
            # S2. [Combine with buddy.]
            self._avail_unlink(buddy, k)
            rec.merges += 1
            if events is not None:
                events.append(BuddyMerge(block, buddy, k))
                events.append(ListRemove(buddy, 1 << k, (k,)))
            if buddy < block:
                del kval[block]
                block = buddy
            else:
                del kval[buddy]
            k += 1
        # S3. [Put on list.]
        kval[block] = k
        self._avail_insert(block, k)
        self.free_bytes += lb.block_size
        if events is not None:
            events.append(ListInsert(block, 1 << k, (k,)))

    def largest_request(self) -> int:
        """A request of n bytes takes a block of the least power of two holding
        ``n + header``, and no block outgrows the room (the heap limit, the
        pool, the address space): past the largest power of two within it,
        less the header, a request fails at once."""
        return (1 << (self.arena.room.bit_length() - 1)) - self.header if self.arena.room else -1

    # ------------------------------------------------- the fused bulk path
    def bulk_ops(self) -> tuple:
        """Fused malloc, free and realloc for bulk replay (``Strategy.bulk_ops``):
        algorithms R and S above with ``_avail_remove_first``,
        ``_avail_insert``, ``_avail_unlink``, ``_note_alloc`` and
        ``_note_free`` inlined, no events, and the counters added once per
        operation; every dict is written in the order the readable methods
        write it (``tests/test_fused_paths.py`` runs both in lockstep).  A
        malloc that finds every AVAIL list empty probes nothing itself and
        hands the request to the readable ``_malloc``, which probes, grows the
        heap by a chunk and goes on."""
        rec = self.rec
        if rec.events is not None or type(self) is not BinaryBuddy:
            # events wanted, or a subclass, which may have changed a method
            # the fused code stands in for
            return super().bulk_ops()
        header = self.header
        min_order = self.min_order
        key = (header, min_order)
        orders = _order_tables.get(key)
        if orders is None:
            orders = _order_tables[key] = [max(min_order, (n + header - 1).bit_length())
                                           for n in range(FUSED_ORDER_TABLE)]
        table = FUSED_ORDER_TABLE
        linkf = self.linkf
        linkb = self.linkb
        kval = self.kval
        avail_count = self.avail_count
        starts = self._chunk_starts
        chunk_order = self.chunk_order
        live = self.live
        new_tuple = tuple.__new__
        slow_malloc = self._malloc

        def malloc(size: int) -> int | None:
            """Algorithm R: R1 over the list heads, R2, R3/R4; _note_alloc."""
            k = orders[size] if size < table else max(min_order, (size + header - 1).bit_length())
            # R1. [Find block.]
            j = k
            top = self.top_order
            while j <= top:
                block = linkf[-1 - j]
                if block >= 0:
                    break
                j += 1
            else:
                return slow_malloc(size)        # no AVAIL[j] holds a block: grow a chunk
            probes = j - k + 1
            rec.visits += probes
            rec.probes += probes
            # R2. [Remove from list.]
            head = -1 - j
            after = linkf.pop(block)
            del linkb[block]
            linkf[head] = after
            linkb[after] = head
            avail_count[j] -= 1
            # R3/R4. [Split required? Split.]
            if j > k:
                rec.splits += j - k
                while j > k:
                    j -= 1
                    buddy = block + (1 << j)
                    kval[buddy] = j
                    head = -1 - j
                    first = linkf[head]
                    linkf[buddy] = first
                    linkb[first] = buddy
                    linkb[buddy] = head
                    linkf[head] = buddy
                    avail_count[j] += 1
            kval[block] = k
            block_size = 1 << k
            self.free_bytes -= block_size
            payload = block + header
            live[payload] = new_tuple(LiveBlock, (block, block_size, size, header))
            self.in_use += block_size
            self.header_in_use += header
            if block < self.touched_low:
                self.touched_low = block
            if block + block_size > self.touched_high:
                self.touched_high = block + block_size
            return payload

        def free(payload: int) -> None:
            """_note_free; algorithm S: S1/S2 while the buddy is free and of
            order k, S3 at the front of AVAIL[k]."""
            lb = live.pop(payload)
            block = lb[0]
            block_size = lb[1]
            self.in_use -= block_size
            self.header_in_use -= lb[3]
            k = kval[block]
            chunk = starts[bisect_right(starts, block) - 1]
            m = chunk_order[chunk]
            merges = 0
            # S1. [Is buddy available?]
            while k < m:
                buddy = chunk + ((block - chunk) ^ (1 << k))
                if buddy not in linkf or kval[buddy] != k:
                    break
                # S2. [Combine with buddy.]
                after = linkf.pop(buddy)
                before = linkb.pop(buddy)
                linkf[before] = after
                linkb[after] = before
                avail_count[k] -= 1
                merges += 1
                if buddy < block:
                    del kval[block]
                    block = buddy
                else:
                    del kval[buddy]
                k += 1
            if merges:
                rec.merges += merges
            # S3. [Put on list.]
            kval[block] = k
            head = -1 - k
            first = linkf[head]
            linkf[block] = first
            linkb[first] = block
            linkb[block] = head
            linkf[head] = block
            avail_count[k] += 1
            if k > self.avail_high:
                self.avail_high = k
            self.free_bytes += block_size

        def realloc(payload: int, size: int) -> int | None:
            """The base class's rule: kept while the block holds ``size``,
            else malloc, then free."""
            lb = live[payload]
            if size <= lb[0] + lb[1] - payload:
                live[payload] = lb._replace(request=size)
                return payload
            new = malloc(size)
            if new is None:
                return None
            free(payload)
            return new

        return malloc, free, realloc

    # -------------------------------------------------------- AVAIL lists
    def _add_orders(self, order: int) -> None:
        """Create the empty list heads ``AVAIL[k]`` up to ``order``."""
        for k in range(self.top_order + 1, order + 1):
            head = _avail_head(k)
            self.linkf[head] = self.linkb[head] = head
            self.avail_count.append(0)
        self.top_order = max(self.top_order, order)

    def _avail_insert(self, block: int, k: int) -> None:
        """Put ``block`` at the front of ``AVAIL[k]`` (step S3, LIFO)."""
        linkf = self.linkf
        head = -1 - k
        first = linkf[head]
        linkf[block] = first
        self.linkb[first] = block
        self.linkb[block] = head
        linkf[head] = block
        self.avail_count[k] += 1
        if k > self.avail_high:
            self.avail_high = k

    def _avail_remove_first(self, k: int) -> int:
        """Take the first block off ``AVAIL[k]`` (step R2)."""
        linkf = self.linkf
        head = -1 - k
        block = linkf[head]
        after = linkf.pop(block)
        del self.linkb[block]
        linkf[head] = after
        self.linkb[after] = head
        self.avail_count[k] -= 1
        if self.rec.events is not None:
            self.rec.events.append(ListRemove(block, 1 << k, (k,)))
        return block

    def _avail_unlink(self, block: int, k: int) -> None:
        """Take ``block`` out of the middle of ``AVAIL[k]`` (step S2)."""
        after = self.linkf.pop(block)
        before = self.linkb.pop(block)
        self.linkf[before] = after
        self.linkb[after] = before
        self.avail_count[k] -= 1

    # ----------------------------------------------------------- explain
    def explain_event(self, e) -> str | None:
        """Knuth's words: the steps R1-R4 and S1-S3, AVAIL[k], KVAL, the XOR."""
        if isinstance(e, AvailProbe):
            if e.first is None:
                return f"R1: AVAIL[{e.order}] empty"
            return f"R1: AVAIL[{e.order}] holds {e.first:#x}: j = {e.order}"
        if isinstance(e, BuddySplit):
            return (f"R3: split order {e.order} at {e.addr:#x}; the buddy {e.buddy:#x} goes on "
                    f"AVAIL[{e.order - 1}]")
        if isinstance(e, BuddyMerge):
            return (f"S1: buddy {e.buddy:#x} = {self._xor_words(e.addr, e.order)} is free and of order "
                    f"{e.order}: merge")
        if isinstance(e, ListInsert):
            return f"{e.addr:#x} ({e.size} B) goes on the front of AVAIL[{e.where[0]}]"
        if isinstance(e, ListRemove):
            return f"{e.addr:#x} ({e.size} B) comes off AVAIL[{e.where[0]}]"
        if isinstance(e, Grow):
            return (f"R1 found no AVAIL list with a block big enough: a new chunk, sbrk({e.increment}) "
                    f"at {e.old_brk:#x} (order {e.increment.bit_length() - 1})")
        if isinstance(e, Placed):
            k = e.size.bit_length() - 1
            return f"reserved {e.addr:#x}: TAG = 0, KVAL = {k}; payload {e.payload:#x}"
        if isinstance(e, Released):
            return f"free {e.addr:#x}: KVAL says order {e.size.bit_length() - 1} ({e.size} B)"
        return None

    def explain_events(self, events: list) -> list[str | None]:
        """Which step of R or S a list change is: R2 and S2 both take a block
        off a list; R4, S3 and a new chunk all put one on."""
        out = [self.explain_event(e) for e in events]
        for i, e in enumerate(events):
            before = events[i - 1] if i else None
            if isinstance(e, ListRemove):
                k = e.where[0]
                if isinstance(before, BuddyMerge):
                    out[i] = f"S2: unlink the buddy {e.addr:#x} from AVAIL[{k}]; k = {k + 1}"
                elif isinstance(before, AvailProbe):
                    out[i] = f"R2: take {e.addr:#x} off the front of AVAIL[{k}]"
            elif isinstance(e, ListInsert):
                k = e.where[0]
                if isinstance(before, BuddySplit):
                    out[i] = f"R4: the upper half {e.addr:#x} becomes the only block of AVAIL[{k}]"
                elif isinstance(before, (Grow, Note)):
                    out[i] = f"the new chunk {e.addr:#x} goes on AVAIL[{k}]"
                else:
                    out[i] = f"S3: {e.addr:#x} ({e.size} B) goes on the front of AVAIL[{k}]"
        return out

    def _xor_words(self, addr: int, k: int) -> str:
        """'0x40 XOR 2^6', relative to the chunk when the chunk start matters."""
        try:
            chunk = self.chunk_of(addr)
        except ValueError:
            chunk = 0
        if (addr ^ (1 << k)) == chunk + ((addr - chunk) ^ (1 << k)):
            return f"{addr:#x} XOR 2^{k}"
        return f"chunk {chunk:#x} + ({addr - chunk:#x} XOR 2^{k})"

    def describe_record(self, rec) -> list[str]:
        out = super().describe_record(rec)
        words = {f"split {_times(rec.splits)}": f"split {_times(rec.splits)} (R3-R4)",
                 f"coalesced {_times(rec.merges)}": f"merged with its buddy {_times(rec.merges)} (S1-S2)"}
        return [words.get(c, c) for c in out]

    # ------------------------------------------------------------- views
    @property
    def chunks(self) -> list[tuple[int, int]]:
        """(address, order) of every chunk, in address order."""
        return list(self._chunks)

    def avail(self, k: int) -> list[int]:
        """Block addresses on ``AVAIL[k]`` in list order (front first)."""
        if not 0 <= k <= self.top_order:
            return []
        out = []
        head = _avail_head(k)
        p = self.linkf[head]
        while p != head:
            out.append(p)
            p = self.linkf[p]
        return out

    def structure(self) -> dict:
        """AVAIL[k] for every order, the chunks, and every carved block with its
        order (each chunk's split tree follows from them)."""
        avail = {k: self.avail(k) for k in range(self.min_order, self.top_order + 1)}
        sizes = {a: 1 << k for k, addrs in avail.items() for a in addrs}
        kval, linkf = self.kval, self.linkf
        blocks = [[a, kval[a], "free" if a in linkf else "used"] for a in sorted(kval)]
        apart = []
        reserve = self.arena.brk - self.core_top
        if reserve:
            sizes[self.core_top] = reserve
            apart.append(structure.outside(self.core_top, "the pool not carved into chunks yet"))
        return structure.make("buddy", sizes, outside_blocks=apart, avail=avail,
                              min_order=self.min_order, max_order=self.top_order,
                              chunks=[{"addr": a, "order": k} for a, k in self._chunks], blocks=blocks)

    def chunk_of(self, addr: int) -> int:
        """Start of the chunk holding ``addr``."""
        i = bisect_right(self._chunk_starts, addr) - 1
        if i < 0 or addr >= self.core_top:
            raise ValueError(f"address {addr:#x} is in no chunk")
        return self._chunk_starts[i]

    def buddy_of(self, addr: int, k: int) -> int:
        """``BUDDY_k(addr)``: ``addr XOR 2**k`` relative to its chunk's start."""
        chunk = self.chunk_of(addr)
        return chunk + ((addr - chunk) ^ (1 << k))

    def order_for(self, size: int) -> int:
        """The order k a request of ``size`` bytes is given."""
        return max(self.min_order, (size + self.header - 1).bit_length())

    def split_tree(self, chunk: int) -> SplitNode:
        """The chunk at ``chunk`` as a binary tree: a block is a leaf, a region
        that was split is an inner node whose children are its two halves."""
        order = self.chunk_order.get(chunk)
        if order is None:
            raise ValueError(f"no chunk starts at {chunk:#x}")
        kval = self.kval
        linkf = self.linkf

        def node(addr: int, k: int) -> SplitNode:
            if kval.get(addr) == k:
                return SplitNode(addr, k, FREE_BLOCK if addr in linkf else USED)
            if k <= self.min_order:
                raise ValueError(f"no block of order >= {self.min_order} starts at {addr:#x}")
            half = 1 << (k - 1)
            return SplitNode(addr, k, SPLIT, (node(addr, k - 1), node(addr + half, k - 1)))

        return node(chunk, order)

    def free_blocks(self) -> Iterator[tuple[int, int]]:
        kval = self.kval
        for addr in self.linkf:
            if addr >= 0:
                yield addr, 1 << kval[addr]
        reserve = self.arena.brk - self.core_top
        if reserve:
            yield self.core_top, reserve

    def fragmentation_probe(self) -> tuple[int, int, int, int]:
        """O(orders): the AVAIL counts give the largest free block; the block
        touching the break is found by trying each order below it, and kept
        until a split, a merge or a new chunk changes it (:meth:`_probe`)."""
        return self._probe()()

    def _probe(self):
        """The fragmentation probe, its containers bound once (see
        :func:`~heapscope.allocators.strategy_measures.probed_row_writer`); it holds
        the containers of now: a bulk replay's lifetime."""
        s = self
        arena = self.arena
        kval = self.kval
        linkf = self.linkf
        chunks = self._chunks
        counts = self.avail_count
        min_order = self.min_order

        def probe():
            end = s.core_top
            reserve = arena.brk - end
            top = 0
            top_order = -1
            if reserve:
                top = reserve
            elif chunks:
                # the block touching the break, kept until it changes
                cached_end, block, k = s._last_block
                if cached_end != end or kval.get(block) != k:
                    for k in range(min_order, s.top_order + 1):
                        block = end - (1 << k)
                        if kval.get(block) == k:
                            break
                    s._last_block = (end, block, k)
                if block in linkf:
                    top, top_order = 1 << k, k
            # the largest block on the AVAIL lists other than the top one;
            # the highest non-empty list found becomes avail_high
            k = s.avail_high
            while k >= min_order and not counts[k]:
                k -= 1
            s.avail_high = k
            if k == top_order and counts[k] == 1:
                k -= 1
                while k >= min_order and not counts[k]:
                    k -= 1
            below = 1 << k if k >= min_order else 0
            return s.free_bytes + reserve, top if top > below else below, top, below
        return probe

    def measure_row(self, rec) -> tuple:
        """The build's row through this policy's own probe and counters
        (:func:`~heapscope.allocators.strategy_measures.probed_row_writer`); a subclass
        gets the default row."""
        if type(self) is not BinaryBuddy:
            return super().measure_row(rec)
        return ROW_FIELDS, probed_row_writer(self, rec, _ROW, joins=True)

    def _blocks(self):
        kval = self.kval
        linkf = self.linkf
        header = self.header
        for addr in sorted(kval):
            if addr in linkf:
                yield addr, 1 << kval[addr], FREE_BLOCK, None
            else:
                yield addr, 1 << kval[addr], USED, addr + header
        if self.core_top < self.arena.brk:
            yield self.core_top, self.arena.brk - self.core_top, FREE_BLOCK, None

    def _policy_signature(self) -> tuple:
        return tuple(tuple(self.avail(k)) for k in range(self.top_order + 1))

    # ------------------------------------------------------------- check
    def _check_structure(self, blocks: list[Block]) -> None:
        fail = self._fail
        base = self.arena.base
        starts = self._chunk_starts
        # Chunks tile [base, core_top), each a multiple of 2**max_order.
        pos = base
        for chunk, order in self._chunks:
            fail(chunk == pos, f"chunk {chunk:#x} does not start where the previous one ends ({pos:#x})")
            fail(order >= self.max_order, f"chunk {chunk:#x} has order {order} < max_order {self.max_order}")
            fail(self.chunk_order.get(chunk) == order,
                 f"chunk {chunk:#x} is booked with order {self.chunk_order.get(chunk)}, not {order}")
            pos = chunk + (1 << order)
        fail(pos == self.core_top, f"chunks end at {pos:#x} but {self.core_top:#x} has been carved")
        fail(starts == [c for c, _ in self._chunks], "the chunk start index differs from the chunk list")
        fail(len(self.chunk_order) == len(self._chunks), "chunk_order books chunks that are not in the list")
        fail(self.core_top == self.arena.brk or self.arena.fixed,
             f"uncarved bytes [{self.core_top:#x}, {self.arena.brk:#x}) in a heap grown by sbrk")

        kval = self.kval
        linkf = self.linkf
        linkb = self.linkb
        header = self.header
        # Every block: a power of two, aligned to its size inside its chunk.
        free_in_heap = set()
        n_blocks = 0
        free_bytes = 0
        for b in blocks:
            if b.addr >= self.core_top:
                fail(b.state == FREE_BLOCK, f"the uncarved pool at {b.addr:#x} is not reported free")
                continue
            n_blocks += 1
            # Conditions first, messages only when one fails: check() runs after every op.
            k = kval.get(b.addr)
            if k is None or b.size != 1 << k:
                fail(False, f"block {b.addr:#x} has size {b.size} but KVAL {k}")
            chunk = starts[bisect_right(starts, b.addr) - 1]
            order = self.chunk_order[chunk]
            if not self.min_order <= k <= order:
                fail(False, f"block {b.addr:#x} has order {k}, outside [{self.min_order}, {order}] "
                            f"of chunk {chunk:#x}")
            if (b.addr - chunk) & (b.size - 1):
                fail(False, f"block {b.addr:#x} of order {k} is not aligned to 2**{k} relative to "
                            f"chunk {chunk:#x} (offset {b.addr - chunk:#x})")
            if b.state == USED:
                if b.addr in linkf:
                    fail(False, f"reserved block {b.addr:#x} is linked on an AVAIL list")
                if b.payload != b.addr + header:
                    fail(False, f"payload {b.payload:#x} of block {b.addr:#x} is not right after "
                                f"its {header}-byte header")
                if b.header != header:
                    fail(False, f"block {b.addr:#x} is booked with {b.header} header bytes, not {header}")
            else:
                if b.state != FREE_BLOCK:
                    fail(False, f"block {b.addr:#x} has state {b.state!r} inside a chunk")
                if b.addr not in linkf:
                    fail(False, f"free block {b.addr:#x} (order {k}) has TAG 1 but is on no AVAIL list")
                free_in_heap.add(b.addr)
                free_bytes += b.size
        fail(len(kval) == n_blocks, f"{len(kval)} KVAL entries for {n_blocks} blocks")
        fail(free_bytes == self.free_bytes, f"free blocks add up to {free_bytes} bytes, booked {self.free_bytes}")

        # AVAIL[k]: circular, doubly linked, holding exactly the free blocks of order k.
        on_lists = set()
        for k in range(self.top_order + 1):
            head = _avail_head(k)
            prev, p, n = head, linkf.get(head), 0
            while p != head:
                if p is None or p < 0:
                    fail(False, f"AVAIL[{k}] reaches {p!r}, which is not a free block")
                if linkb.get(p) != prev:
                    fail(False, f"LINKB({p:#x}) is {linkb.get(p)!r} but the block before it on "
                                f"AVAIL[{k}] is {prev:#x}")
                if p in on_lists:
                    fail(False, f"block {p:#x} is on AVAIL[{k}] twice, or on two lists")
                if kval.get(p) != k:
                    fail(False, f"block {p:#x} of order {kval.get(p)} is on AVAIL[{k}]")
                on_lists.add(p)
                n += 1
                prev, p = p, linkf.get(p)
            fail(linkb[head] == prev, f"LINKB of AVAIL[{k}]'s head is {linkb[head]!r}, not its last block {prev!r}")
            fail(n == self.avail_count[k], f"AVAIL[{k}] holds {n} blocks but its count says {self.avail_count[k]}")
        fail(on_lists == free_in_heap,
             f"free blocks {sorted(free_in_heap - on_lists)[:5]} are on no list; "
             f"listed {sorted(on_lists - free_in_heap)[:5]} are not free blocks")
        fail(len(linkf) == len(on_lists) + self.top_order + 1 and len(linkb) == len(linkf),
             "LINKF/LINKB hold entries for blocks that are on no AVAIL list")
        high = max((k for k in range(self.top_order + 1) if self.avail_count[k]), default=-1)
        fail(self.avail_high >= high, f"avail_high is {self.avail_high}, below AVAIL[{high}], "
                                      "which holds a block")

        # Algorithm S leaves no free buddies of the same order unmerged.
        for p in on_lists:
            k = kval[p]
            chunk = starts[bisect_right(starts, p) - 1]
            if k < self.chunk_order[chunk]:
                q = chunk + ((p - chunk) ^ (1 << k))
                if q in on_lists and kval[q] == k:
                    fail(False, f"free buddies {min(p, q):#x} and {max(p, q):#x} of order {k} were not merged")
