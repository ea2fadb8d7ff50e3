"""A rotating explicit free list with boundary tags: the "rotating freelist"
allocator Niels Jørgen Kruse defended against Phong Vo on Usenet
(May 1989, seed 000: "Rotating freelist allocators can be made to go *very*
fast.  That requires an explicit freelist however."), built on Knuth's
boundary-tag method (TAOCP vol. 1, 2.5, algorithm C, with algorithm A's
search and exercise 6's roving start).

The rules, as simulated here:

* **Blocks and tags.**  Every block, free or used, carries a one-word header
  tag at its first word and an identical footer tag at its last word: the
  block size with the low bit set when the block is free (Knuth's TAG/SIZE,
  "-" for free).  The footer is what makes coalescing with the *lower*
  neighbour O(1): the word just below a block is its lower neighbour's footer.
* **Free list.**  Free blocks form one circular doubly linked list whose links
  live in the free block's payload (next at +W, prev at +2W).  It is *not*
  address ordered.  A block that becomes free is inserted LIFO at the head:
  it goes just before the old head and becomes the head.
* **Minimum block** = header + footer + two links = 4 words, rounded up to the
  alignment; the payload starts one word into the block and is aligned to
  ``align``.
* **malloc** = first fit from the head, once round the ring.  The block found
  is cut if the remainder is at least a minimum block: as Knuth's algorithm A
  (step A4) the *upper* part is handed out, so the free part keeps its address
  and its place on the ring; otherwise the whole block is unlinked.  Then the
  head is **rotated to the successor** of the block used, so the next search
  starts where this one ended (Kruse's rotation; next fit on an unordered list).
* **free** joins the block with both neighbours in O(1) through the tags
  (algorithm C: the lower neighbour via its footer, the upper via its header),
  unlinking them from the ring, and pushes the result at the head.
* **Growth.**  When a whole round finds nothing, the heap grows with
  ``sbrk(max(need, chunk))`` (chunk 4096 bytes by default); the new memory is
  freed like a block, so it joins a free block at the end of the heap, and
  the search takes it.

Cost: a malloc examines up to f blocks (f = free blocks), f/2 on average as Vo
notes in seed 000; free is O(1).

View: the ring of free blocks with the head arrow rotating past each block
used, the scanned blocks lit in order, LIFO pushes at the head.
"""

from __future__ import annotations

import struct
from typing import Iterator

from . import structure
from .events import (Coalesce, Grow, ListInsert, ListRemove, Placed, PointerMove,
                     Released, Split, Visit)
from .free_index import FreeSizeIndex
from .params import MAX_CHUNK, SIZE, Param
from .strategy import META, Block, align_up
from .strategy_measures import probed_row_writer
from .word_heap import WordHeap

#: low bit of a tag word: the block is free (Knuth's TAG = "-")
FREE_TAG = 1
#: default least sbrk increment, in bytes
CHUNK = 4096
#: where a free block keeps its list links, in words from the block start
NEXT_WORD, PREV_WORD = 1, 2
#: the free list is one list: ListInsert/ListRemove carry no index
ONE_LIST: tuple[int, ...] = ()
#: the build's row of measures (RotatingList.measure_row): no largest_free (the
#: max of the two after it) nor the rotations and walked it never adds to
ROW_FIELDS = ("heap", "live", "in_use", "headers", "free", "top_free", "largest_below_top",
              "visits", "splits", "merges", "grows", "payload")
_ROW = struct.Struct(f"<{len(ROW_FIELDS)}q")


class RotatingList(WordHeap):
    """Kruse's rotating first-fit free list over Knuth's boundary tags."""

    name = "rotating-list"
    #: the event types this policy's records can hold (conditions.py: a condition
    #: on another is answered without a replay)
    makes_events = frozenset({"Coalesce", "Grow", "GrowFailed", "ListInsert", "ListRemove", "Note",
                              "Placed", "PointerMove", "Released", "Split", "Visit"})
    title = "Rotating free list, boundary tags (Kruse 1989)"
    citation = ("N. J. Kruse, Usenet, 9 May 1989 (rotating freelist allocators); "
                "Knuth, TAOCP 1, 2.5, algorithms A and C (boundary tags)")

    params = (
        Param("chunk", SIZE, CHUNK, "least sbrk increment in bytes (rounded up to the alignment)",
              low=1, high=MAX_CHUNK),
    )

    def __init__(self, *, chunk: int = CHUNK, **common) -> None:
        super().__init__(chunk=chunk, **common)
        #: header + footer + next + prev
        self.min_block = align_up(4 * self.word, self.grain)
        # mem holds the tags of every block and the links of free blocks.
        #: the rotating head of the ring, None when nothing is free
        self.head: int | None = None
        # For the measures only (fragmentation_probe), not used by the policy:
        # the size of each block on the ring, and their sum F.
        self.free_index = FreeSizeIndex()
        if self.arena.fixed:
            self._pool_init()

    def _pool_init(self) -> None:
        """A fixed pool is one free block from the start (a META tail keeps
        whatever does not make a whole block)."""
        usable = self._pool_bytes()
        if usable >= self.min_block:
            self.top = self.start + usable
            self.mem[self.start] = self.mem[self.top - self.word] = usable
            self._release(self.start, usable)

    # ------------------------------------------------------------ malloc
    def _malloc(self, request: int) -> int | None:
        word = self.word
        grain = self.grain
        need = (request + 2 * word + grain - 1) & -grain       # align_up
        if need < self.min_block:
            need = self.min_block
        mem = self.mem
        rec = self.rec
        events = rec.events
        head = self.head
        b = head
        if b is not None:
            # First fit, once round the ring from the head.
            visits = 0
            while True:
                size = mem[b] & -2
                visits += 1
                if size >= need:
                    rec.visits += visits
                    if events is not None:
                        events.append(Visit(b, size, True))
                    return self._take(b, size, need, request)
                if events is not None:
                    events.append(Visit(b, size, False))
                b = mem[b + word]
                if b == head:
                    break
            rec.visits += visits
        b = self._morecore(need)
        if b is None:
            return None
        size = mem[b] & -2
        self._visit(b, size, True)
        return self._take(b, size, need, request)

    def _take(self, b: int, size: int, need: int, request: int) -> int:
        """Hand out ``need`` bytes of free block ``b`` and rotate the head past it."""
        word = self.word
        mem = self.mem
        events = self.rec.events
        succ = mem[b + word]
        rest = size - need
        if rest >= self.min_block:
            # Knuth A4: allocate the upper part; b keeps its address and ring place.
            mem[b] = mem[b + rest - word] = rest | FREE_TAG
            index = self.free_index
            index.remove(b, size)
            index.add(b, rest)
            taken = b + rest
            self.rec.splits += 1
            if events is not None:
                events.append(Split(b, size, taken, need, b, rest))
            new_head = succ
        else:
            need = size
            taken = b
            self._unlink(b, size)
            new_head = None if succ == b else succ
        mem[taken] = mem[taken + need - word] = need
        if events is not None:
            self._move_head(new_head)
        else:
            self.head = new_head
        payload = taken + word
        self._note_alloc(payload, taken, need, request, 2 * word)
        if events is not None:
            events.append(Placed(taken, need, payload, request))
        return payload

    def _morecore(self, need: int) -> int | None:
        """sbrk(max(need, chunk)) and free the new memory; the resulting free
        block (joined to a free block at the old end) is returned."""
        increment = max(need, self.chunk)
        b = self._grow(increment)
        if b is None:
            return None
        self.mem[b] = self.mem[b + increment - self.word] = increment
        return self._release(b, increment)

    # -------------------------------------------------------------- free
    def _free(self, payload: int) -> None:
        b, size, _, _ = self._note_free(payload)
        if self.rec.events is not None:
            self._event(Released(b, size))
        self._release(b, size)

    def _release(self, b: int, size: int) -> int:
        """Knuth's algorithm C: join block ``b`` with its free neighbours through
        the tags, then push the result at the head of the ring.  Returns its address."""
        word = self.word
        mem = self.mem
        rec = self.rec
        events = rec.events
        if b > self.start:
            lower_tag = mem[b - word]          # the lower neighbour's footer
            if lower_tag & FREE_TAG:
                lower_size = lower_tag & -2
                low = b - lower_size
                self._ring_remove(low, lower_size)
                rec.merges += 1
                if events is not None:
                    events.append(Coalesce(low, lower_size, b, size))
                del mem[b - word], mem[b]
                b = low
                size += lower_size
        upper = b + size
        if upper < self.top:
            upper_tag = mem[upper]             # the upper neighbour's header
            if upper_tag & FREE_TAG:
                upper_size = upper_tag & -2
                self._ring_remove(upper, upper_size)
                rec.merges += 1
                if events is not None:
                    events.append(Coalesce(b, size, upper, upper_size))
                del mem[upper - word], mem[upper]
                size += upper_size
        mem[b] = mem[b + size - word] = size | FREE_TAG
        self._push(b, size)
        return b

    # ------------------------------------------------------------ the ring
    def _push(self, b: int, size: int) -> None:
        """LIFO insert: ``b`` goes just before the head and becomes the head
        (a ListInsert, then the PointerMove of the head to it)."""
        word = self.word
        mem = self.mem
        head = self.head
        if head is None:
            mem[b + word] = mem[b + 2 * word] = b
        else:
            last = mem[head + 2 * word]
            mem[b + word] = head
            mem[b + 2 * word] = last
            mem[last + word] = b
            mem[head + 2 * word] = b
        self.free_index.add(b, size)
        if self.rec.events is not None:
            self._event(ListInsert(b, size, ONE_LIST))
            self._move_head(b)
        else:
            self.head = b

    def _unlink(self, b: int, size: int) -> None:
        """Take ``b`` off the ring (the head is the caller's business)."""
        word = self.word
        mem = self.mem
        nxt = mem.pop(b + word)
        prv = mem.pop(b + 2 * word)
        if nxt != b:
            mem[prv + word] = nxt
            mem[nxt + 2 * word] = prv
        self.free_index.remove(b, size)
        if self.rec.events is not None:
            self._event(ListRemove(b, size, ONE_LIST))

    def _ring_remove(self, b: int, size: int) -> None:
        """Unlink a free neighbour being joined; a head on it steps to its
        successor first (a PointerMove before the ListRemove)."""
        if b == self.head:
            succ = self.mem[b + self.word]
            new = None if succ == b else succ
            if self.rec.events is not None:
                self._move_head(new)
            else:
                self.head = new
        self._unlink(b, size)

    def _move_head(self, new: int | None) -> None:
        if new != self.head:
            if self.rec.events is not None:
                self._event(PointerMove("head", self.head, new))
            self.head = new

    # ----------------------------------------------------------- explain
    def explain_event(self, e) -> str | None:
        """Kruse's ring and Knuth's boundary tags (algorithms A and C)."""
        if isinstance(e, Visit):
            return (f"{e.addr:#x} ({e.size} B): "
                    + ("big enough: take it" if e.fits else "too small: on round the ring"))
        if isinstance(e, ListInsert):
            return f"LIFO push: {e.addr:#x} ({e.size} B) goes on the ring just before the head"
        if isinstance(e, ListRemove):
            return f"unlinked {e.addr:#x} ({e.size} B) from the ring"
        if isinstance(e, PointerMove) and e.name == "head":
            return "the ring is empty: head = NULL" if e.new is None else f"head = {e.new:#x}"
        if isinstance(e, Split):
            return (f"A4: the upper {e.taken_size} B at {e.taken_addr:#x} go to the request; "
                    f"{e.addr:#x} keeps {e.rest_size} B and its place on the ring")
        if isinstance(e, Coalesce):
            return (f"algorithm C: the tags say {e.low_addr:#x} ({e.low_size} B) and {e.high_addr:#x} "
                    f"({e.high_size} B) are free neighbours: joined, {e.size} B")
        if isinstance(e, Grow):
            return (f"a whole round found nothing: sbrk({e.increment}) at {e.old_brk:#x}; "
                    "the new memory is freed onto the ring")
        if isinstance(e, Released):
            return f"free {e.addr:#x} ({e.size} B): tags marked free"
        return None

    def explain_events(self, events: list) -> list[str | None]:
        """Which move of the head this is: onto a block just pushed, off a
        block being joined, or Kruse's rotation past the block used."""
        out = [self.explain_event(e) for e in events]
        for i, e in enumerate(events):
            before = events[i - 1] if i else None
            if isinstance(e, ListRemove) and isinstance(before, Visit) and before.fits:
                out[i] = (f"the rest would be below a {self.min_block}-byte block: "
                          f"{e.addr:#x} ({e.size} B) leaves the ring whole")
            if not (isinstance(e, PointerMove) and e.name == "head") or e.new is None:
                continue
            after = events[i + 1] if i + 1 < len(events) else None
            if isinstance(before, ListInsert) and before.addr == e.new:
                out[i] = f"head = {e.new:#x}, the block just pushed"
            elif isinstance(after, ListRemove) and after.addr == e.old:
                out[i] = f"the head {e.old:#x} is being joined: it steps to its successor {e.new:#x}"
            else:
                out[i] = f"rotate: head = {e.new:#x}, the successor of the block used"
        return out

    # ------------------------------------------------------------- views
    def structure(self) -> dict:
        """Kruse's explicit ring from its head, and the head."""
        ring = self.free_list()
        mem = self.mem
        return structure.make("ring", {b: mem[b] & -2 for b in ring},
                              pointers=[structure.pointer("head", self.head)],
                              free_list=ring, head=self.head)

    def free_list(self) -> list[int]:
        """Free block addresses in ring order, starting at the head."""
        out = []
        head = b = self.head
        if b is None:
            return out
        mem, word = self.mem, self.word
        while True:
            out.append(b)
            b = mem[b + word]
            if b == head:
                return out

    def free_blocks(self) -> Iterator[tuple[int, int]]:
        mem = self.mem
        for b in self.free_list():
            yield b, mem[b] & -2

    def fragmentation_probe(self) -> tuple[int, int, int, int]:
        """From the running free-size index, without walking the ring; the top
        block is the free block ending at the break (:meth:`_probe`)."""
        return self._probe()()

    def _probe(self):
        """The fragmentation probe, its containers bound once (see
        :func:`~heapscope.allocators.strategy_measures.probed_row_writer`)."""
        index_probe = self.free_index.probe
        arena = self.arena

        def probe():
            return index_probe(arena.brk)
        return probe

    def measure_row(self, rec) -> tuple:
        """The build's row through this policy's own probe and counters
        (:func:`~heapscope.allocators.strategy_measures.probed_row_writer`); a subclass
        gets the default row."""
        if type(self) is not RotatingList:
            return super().measure_row(rec)
        return ROW_FIELDS, probed_row_writer(self, rec, _ROW, joins=True)

    def _payload_capacity(self, payload: int) -> int:
        # The footer tag occupies the last word of the block.
        lb = self.live[payload]
        return lb.block_addr + lb.block_size - self.word - payload

    def _in_use(self, tag: int) -> bool:
        return not tag & FREE_TAG

    def _policy_signature(self) -> tuple:
        return (self.head, tuple(self.free_list()))

    # ------------------------------------------------------------- check
    def _check_structure(self, blocks: list[Block]) -> None:
        fail = self._fail
        mem, word = self.mem, self.word
        free_sizes: dict[int, int] = {}
        previous = None
        n_blocks = 0
        # Messages are only built when a test fails: check() runs after every op.
        for b in blocks:
            if b.state == META:
                continue
            n_blocks += 1
            header, footer = mem.get(b.addr), mem.get(b.end - word)
            if header != footer:
                fail(False, f"block {b.addr:#x}+{b.size}: header tag {header!r} differs from "
                            f"footer tag {footer!r} at {b.end - word:#x}")
            if b.size < self.min_block or b.size % self.grain:
                fail(False, f"block {b.addr:#x} has size {b.size}: not a multiple of "
                            f"{self.grain} of at least {self.min_block} bytes")
            if b.free:
                free_sizes[b.addr] = b.size
                if previous is not None and previous.free:
                    fail(False, f"free neighbours {previous.addr:#x} and {b.addr:#x} were not joined")
            previous = b
        index = self.free_index
        if list(index.sizes) != sorted(free_sizes.values()) or index.total != sum(free_sizes.values()):
            fail(False, f"free-size books ({len(index.sizes)} blocks, {index.total} bytes) "
                        f"disagree with the heap ({len(free_sizes)} blocks, "
                        f"{sum(free_sizes.values())} bytes)")
        # Memory holds two tags per block and two links per free block, nothing stale.
        if len(mem) != 2 * n_blocks + 2 * len(free_sizes):
            fail(False, f"{len(mem)} words in memory, expected 2 tags x {n_blocks} blocks "
                        f"+ 2 links x {len(free_sizes)} free blocks (a stale tag or link)")
        head = self.head
        if head is None:
            if free_sizes:
                fail(False, f"head is None but {len(free_sizes)} blocks are free, "
                            f"first {min(free_sizes):#x}")
            return
        if head not in free_sizes:
            fail(False, f"head {head:#x} is not a free block")
        seen: set[int] = set()
        b = head
        while True:
            if b in seen:
                fail(False, f"free list comes back to {b:#x} without passing the head {head:#x}")
            seen.add(b)
            nxt = mem.get(b + word)
            if nxt not in free_sizes:
                fail(False, f"next link of free block {b:#x} is {nxt!r}, not a free block")
            back = mem.get(nxt + 2 * word)
            if back != b:
                fail(False, f"prev link of {nxt:#x} is {back!r} but {b:#x} links forward to it")
            b = nxt
            if b == head:
                break
        missing = sorted(set(free_sizes) - seen)
        if missing:
            fail(False, f"free blocks {[hex(a) for a in missing[:5]]} are not on the free list")
