"""The interface every allocation strategy implements, and the heap invariants
they all share.

A strategy subclass implements four things:

* ``_malloc(size) -> payload | None`` and ``_free(payload)``: the policy itself.
  It reports what it does through :meth:`Strategy._visit`,
  :meth:`Strategy._event` and the counters of ``self.rec``, and books every
  block it hands out or takes back with :meth:`Strategy._note_alloc` /
  :meth:`Strategy._note_free`, so that the shared measures (A, header bytes)
  stay right without each strategy recomputing them.
* ``_blocks()``: every block in address order as ``(addr, size, state, payload)``.
* ``_check_structure(blocks)``: the policy's own invariants (free list order,
  tree order, bitmap bits, buddy orders...).  Raise :class:`HeapInvariantError`.

The public ``malloc``/``free``/``realloc`` wrap those and open one
:class:`~heapscope.allocators.events.OpRecord` per call.  ``check()`` runs the shared
invariants of DESIGN.md (blocks cover ``[base, brk)`` exactly, no overlap or gap,
payload alignment, live blocks and books agree) and then the policy's own;
tests call it after every operation, as sortedcontainers calls ``_check()``.

A request no heap of the strategy could ever hold (past
:meth:`Strategy.largest_request`: the heap limit, the pool, the 1 TiB
address space, or a bound of the policy's own model, such as TLSF's largest
block class) never reaches the policy: it fails at once, in O(1) memory and
time, recorded as refused growth (:meth:`Strategy._refuse_request`).  Bulk
replay, which calls the policy directly, applies the same bound
(``heapscope.allocators.replay``, ``bounded_ops``).
"""

from __future__ import annotations

from itertools import repeat
from typing import Iterator, NamedTuple

from . import structure
from .arena import Arena
from .events import FREE, MALLOC, REALLOC, Grow, GrowFailed, Note, OpRecord, Visit
from .params import INT, MAX_BYTES, SIZE, Param, check_params
from .strategy_bulk import BulkReplay
from .strategy_measures import StrategyMeasures
from .strategy_state import LiveBlock, StrategyState, _new_tuple
from .strategy_words import StrategyWords

USED = "used"
FREE_BLOCK = "free"
META = "meta"  # bytes the allocator keeps for itself: sentinels, page headers, padding between chunks


class HeapInvariantError(AssertionError):
    """``check()`` found the heap or a free structure in a state the policy forbids."""


class InvalidFree(ValueError):
    """free/realloc of an address that is not a live payload of this heap."""


class Block(NamedTuple):
    """One block of the heap as ``walk()`` reports it."""
    addr: int
    size: int
    state: str                 # USED, FREE_BLOCK or META
    payload: int | None = None  # payload address of a used block
    request: int = 0            # bytes the program asked for (used blocks)
    header: int = 0             # bytes of header/footer/tags in this used block

    @property
    def free(self) -> bool:
        return self.state == FREE_BLOCK

    @property
    def end(self) -> int:
        return self.addr + self.size

    @property
    def padding(self) -> int:
        """Alignment and rounding bytes of a used block (neither header nor payload)."""
        return self.size - self.header - self.request if self.state == USED else 0


class Strategy(StrategyWords, StrategyMeasures, StrategyState, BulkReplay):
    """Base class of all strategies; see the module docstring for the contract.

    This class is the policy's contract: the public calls and the record of
    each, the books of live blocks, the walk and the shared invariants, and
    the verbs a policy is written in.  Its other jobs are parts of their
    own, each in its module: the explain texts (:class:`StrategyWords`,
    ``heapscope.allocators.strategy_words``), the measures
    (:class:`StrategyMeasures`, ``strategy_measures``), checkpoints and
    copies (:class:`StrategyState`, ``strategy_state``) and bulk replay's
    entry (:class:`BulkReplay`, ``strategy_bulk``).  They are mixed in
    rather than held: the measures and the fused paths read the books on
    the strategy itself on every step, and a strategy's own words or probe
    override theirs as methods do."""

    #: registry key, e.g. ``"next-fit"``
    name = "abstract"
    #: one line for menus and tables
    title = "abstract strategy"
    #: the original this strategy follows
    citation = ""
    #: the names of the event types its records can hold, or None (not
    #: declared: any, as for a strategy of your own); a condition on events it
    #: never makes is answered without a replay (conditions.py)
    makes_events: frozenset | None = None

    #: the parameters every strategy takes (heapscope.allocators.params); a subclass
    #: lists its own in ``params`` too, and may narrow one of these
    params = (
        Param("word", INT, 8, "word size in bytes: 8 for LP64, 4 for ILP32", choices=(4, 8)),
        Param("align", INT, None, "payload alignment in bytes; a strategy that cannot give "
              "it refuses it when built", low=4, high=4096, power_of_two=True, none_ok=True,
              none_means="the word"),
        Param("heap_limit", SIZE, None, "cap on the heap grown by sbrk: a request past it fails "
              "(ENOMEM) and the replay goes on", low=0, high=MAX_BYTES, none_ok=True,
              none_means="no limit"),
        Param("pool_size", SIZE, None, "one fixed pool of this many bytes instead of a heap "
              "grown by sbrk", low=0, high=MAX_BYTES, none_ok=True,
              none_means="a heap grown by sbrk"),
    )

    def __new__(cls, *args, **params):
        # Every way of building a strategy (make_strategy, the class itself)
        # passes here, before any __init__ has used a value.  pickle calls
        # __new__ with no arguments.
        if args:
            raise TypeError(f"{cls.__name__} takes keyword arguments only")
        check_params(cls, params)
        return super().__new__(cls)

    def __init__(self, *, word: int = 8, align: int | None = None,
                 heap_limit: int | None = None, pool_size: int | None = None,
                 record: bool = True) -> None:
        self.word = word
        self.align = align or word
        self.arena = Arena(pool_size=pool_size, limit=heap_limit)
        self.record = record
        self.live: dict[int, LiveBlock] = {}
        self.in_use = 0          # A: bytes of live blocks, headers and padding included
        self.header_in_use = 0   # header/footer bytes inside live blocks
        self.rec = OpRecord()
        #: end of the memory carved so far, for strategies that take fresh memory
        #: with :meth:`_take_core` (in a fixed pool it lags behind the break)
        self.core_top = self.arena.base
        # The least address range holding every block handed out and every
        # region carved so far: in a fixed pool, the part of it touched
        # (see footprint).  Empty (low > high) until something is touched.
        self.touched_low = self.arena.brk
        self.touched_high = self.arena.base

    # ----------------------------------------------------------------- public API
    def malloc(self, size: int) -> int | None:
        """Allocate ``size`` bytes; the payload address, or None if the heap cannot grow."""
        if size < 0:
            raise ValueError(f"malloc of a negative size {size}")
        rec = self.rec = OpRecord(MALLOC, size, [] if self.record else None)
        if size > self.largest_request():
            payload = self._refuse_request(size)
        else:
            payload = self._malloc(size)
        rec.payload = payload
        if payload is None:
            rec.failed = True
        return payload

    def free(self, payload: int | None) -> None:
        """Give back the block whose payload is at ``payload`` (free(NULL) does nothing)."""
        rec = self.rec = OpRecord(FREE, 0, [] if self.record else None)
        if payload is None:
            return
        lb = self.live.get(payload)
        if lb is None:
            raise InvalidFree(f"free of {payload:#x}, which is not a live block of this heap")
        rec.payload = payload
        rec.request = lb.request
        self._free(payload)

    def realloc(self, payload: int | None, size: int) -> int | None:
        """C's realloc: None payload means malloc; a failed realloc keeps the old block."""
        if size < 0:
            raise ValueError(f"realloc to a negative size {size}")
        rec = self.rec = OpRecord(REALLOC, size, [] if self.record else None)
        rec.old_payload = payload
        if payload is not None and payload not in self.live:
            raise InvalidFree(f"realloc of {payload:#x}, which is not a live block of this heap")
        if size > self.largest_request():
            new = self._refuse_request(size)    # the old block stays, as a failed realloc leaves it
        elif payload is None:
            new = self._malloc(size)
        else:
            new = self._realloc(payload, size)
        rec.payload = new
        if new is None:
            rec.failed = True
        return new

    def walk(self) -> list[Block]:
        """Every block of the heap in address order."""
        # tuple.__new__ over repeat(Block): no Python frame per block, as Block._make has
        # (a walk check of grade makes one list of these per walk)
        return list(map(_new_tuple, repeat(Block), self.walk_tuples()))

    def walk_tuples(self) -> list[tuple]:
        """walk() as plain (addr, size, state, payload, request, header) tuples:
        several times cheaper than Blocks for views of 100 000-block heaps."""
        live = self.live
        out = []
        append = out.append
        for addr, size, state, payload in self._blocks():
            if state == USED:
                lb = live.get(payload)
                if lb is not None:
                    append((addr, size, state, payload, lb[2], lb[3]))
                    continue
            append((addr, size, state, payload, 0, 0))
        return out

    def check(self) -> list[Block]:
        """Raise :class:`HeapInvariantError` if any invariant is broken; return
        the blocks checked, so a caller need not walk the heap again."""
        blocks = self.walk()
        self._check_heap(blocks)
        self._check_structure(blocks)
        return blocks

    # ------------------------------------------------------- absurd requests
    def largest_request(self) -> int:
        """The largest request this strategy could ever grant; a larger one
        fails at once, before the policy sees it (:meth:`_refuse_request`).

        By default the heap's room (the pool, the heap limit or the address
        space, :attr:`Arena.room`) less a word: every built-in policy puts at
        least a word beside each block it hands out, a header or boundary tag
        in the block or its own pages in the heap (tests/test_request_bounds.py
        checks that none grants more).  A policy whose model is smaller
        (TLSF's largest block class, the buddy system's powers of two)
        narrows it; :class:`~heapscope.allocators.user.UserStrategy` allows the whole
        room.  The value must not change while the strategy lives: bulk
        replay reads it once."""
        return self.arena.room - self.word

    def _refuse_request(self, size: int) -> None:
        """Fail a request past :meth:`largest_request` at once: the heap would
        have to grow past what it may ever span, so it counts as refused
        growth (``Arena.refuse``; ``heapscope grade`` accepts the NULL) and
        is recorded as the policies record a refused ``sbrk``."""
        self.arena.refuse()
        events = self.rec.events
        if events is not None:
            events.append(Note(f"{size} bytes is more than {self.name} can ever hand out "
                               f"(at most {self.largest_request()} here): it fails at once"))
            events.append(GrowFailed(size))
        return None

    #: bytes of the regions :meth:`mapped_blocks` lists (dlmalloc's mmapped chunks)
    mapped_bytes = 0

    def mapped_blocks(self) -> list[Block]:
        """Used blocks in memory mapped apart from the heap, each its own region
        outside ``[base, brk)``, in address order: dlmalloc's mmapped chunks.
        They are not in :meth:`walk` (the heap map draws the heap) but they are
        booked as live blocks (A counts them), H counts their bytes
        (:attr:`mapped_bytes`) and :meth:`check` checks them.  None for most
        strategies."""
        return []

    def free_blocks(self) -> Iterator[tuple[int, int]]:
        """(addr, size) of each free block; strategies override with their free structure."""
        for b in self._blocks():
            if b[2] == FREE_BLOCK:
                yield b[0], b[1]

    def structure(self) -> dict:
        """The free structure as plain data, in the one shape of
        :mod:`heapscope.allocators.structure` (``docs/structure.md``): what the structure
        view draws, ``heapscope inspect`` prints and the tests compare with the
        heap walk.  Cheap enough to call on every shown step.

        The default is the generic ``lists`` shape with one list, the free
        blocks in address order; strategies override with their own shape."""
        free = sorted(self.free_blocks())
        return structure.make("lists", dict(free), lists={"free blocks": [a for a, _ in free]})

    # ------------------------------------------------------ for subclasses
    def _malloc(self, size: int) -> int | None:
        raise NotImplementedError

    def _free(self, payload: int) -> None:
        raise NotImplementedError

    def _realloc(self, payload: int, size: int) -> int | None:
        """Default realloc: keep the block if the payload still fits, else
        malloc-copy-free (the old block stays if malloc fails)."""
        if size <= self._payload_capacity(payload):
            self._rebook(payload, size)
            return payload
        return self._move_to_new_block(payload, size)

    def _move_to_new_block(self, payload: int, size: int) -> int | None:
        """The realloc that cannot stay where it is, as C's malloc-copy-free:
        a new block of ``size``, then the old one freed; None, the old block
        kept, when the malloc fails.  (The simulation holds no payload bytes,
        so there is nothing to copy.)"""
        new = self._malloc(size)
        if new is None:
            return None
        self._free(payload)
        return new

    def _payload_capacity(self, payload: int) -> int:
        """Bytes the program may use at ``payload`` without moving it; strategies
        with a footer or boundary tag at the block end override."""
        lb = self.live[payload]
        return lb.block_addr + lb.block_size - payload

    def _blocks(self) -> Iterator[tuple[int, int, str, int | None]]:
        raise NotImplementedError

    def _check_structure(self, blocks: list[Block]) -> None:
        pass

    def _visit(self, addr: int, size: int, fits: bool) -> None:
        """Count one node of the search path and record it."""
        rec = self.rec
        rec.visits += 1
        if rec.events is not None:
            rec.events.append(Visit(addr, size, fits))

    def _take_core(self, size: int) -> int | None:
        """``size`` fresh bytes at the top: ``sbrk`` them, or, in a fixed pool,
        carve them from the part not carved yet.  None when neither can."""
        arena = self.arena
        if arena.fixed:
            if self.core_top + size > arena.brk:
                arena.refuse()
                self._event(GrowFailed(size))
                return None
            addr = self.core_top
            self._event(Note(f"carved {size} bytes at {addr:#x} from the pool"))
        else:
            addr = arena.sbrk(size)
            if addr is None:
                self._event(GrowFailed(size))
                return None
            self.rec.grows += 1
            self._event(Grow(addr, size))
        self.core_top = addr + size
        if addr < self.touched_low:
            self.touched_low = addr
        if addr + size > self.touched_high:
            self.touched_high = addr + size
        return addr

    def _event(self, event) -> None:
        """Record ``event`` if this operation's events are kept.  On a hot
        path, test ``self.rec.events is not None`` before making the event:
        making a frozen event costs about a microsecond, more than a fast
        policy's whole step in bulk replay, where no event is kept."""
        events = self.rec.events
        if events is not None:
            events.append(event)

    def _emit(self, kind, *fields, **named) -> None:
        """Record the event ``kind(*fields, **named)`` if this operation's
        events are kept, making it only then: :meth:`_event` with the event
        made for it, without the microsecond a bulk replay would spend on one
        it throws away (the fields are still worked out: keep them cheap)."""
        if self.rec.events is not None:
            self._event(kind(*fields, **named))

    def _note_alloc(self, payload: int, block_addr: int, block_size: int,
                    request: int, header: int) -> None:
        # tuple.__new__ skips the namedtuple's Python-level __new__: half the cost per malloc.
        self.live[payload] = _new_tuple(LiveBlock, (block_addr, block_size, request, header))
        self.in_use += block_size
        self.header_in_use += header
        if block_addr < self.touched_low:
            self.touched_low = block_addr
        if block_addr + block_size > self.touched_high:
            self.touched_high = block_addr + block_size

    def _note_free(self, payload: int) -> LiveBlock:
        lb = self.live.pop(payload)
        self.in_use -= lb.block_size
        self.header_in_use -= lb.header
        return lb

    def _rebook(self, payload: int, request: int) -> None:
        """A realloc that stays in place: only the requested size changes."""
        lb = self.live[payload]
        self.live[payload] = lb._replace(request=request)

    def _fail(self, condition: bool, message: str) -> None:
        if not condition:
            raise HeapInvariantError(f"{self.name}: {message}")

    def _check_heap(self, blocks: list[Block]) -> None:
        """The invariants every strategy shares (DESIGN.md, core model).

        Messages are built only on failure: check() runs after every operation
        in the tests, so its cost matters."""
        fail = self._fail
        pos = self.arena.base
        live = self.live
        used_payloads = set()
        in_use = header = 0
        for b in blocks:
            if b.size <= 0:
                fail(False, f"block at {b.addr:#x} has size {b.size}")
            if b.addr != pos:
                fail(False, f"gap before block {b.addr:#x} (previous block ends at {pos:#x})"
                     if b.addr > pos else
                     f"block {b.addr:#x} overlaps the previous block, which ends at {pos:#x}")
            pos = b.addr + b.size
            if b.state == USED:
                p = b.payload
                if p is None or not b.addr <= p <= pos:
                    fail(False, f"used block {b.addr:#x} has payload {p!r} outside it")
                if p % self.align:
                    fail(False, f"payload {p:#x} is not aligned to {self.align}")
                lb = live.get(p)
                if lb is None:
                    fail(False, f"used block {b.addr:#x} is not booked as live")
                if lb.block_addr != b.addr or lb.block_size != b.size:
                    fail(False, f"block {b.addr:#x}+{b.size} is booked as {lb.block_addr:#x}+{lb.block_size}")
                if p + b.request > pos:
                    fail(False, f"payload {p:#x} of {b.request} bytes runs past its block end {pos:#x}")
                used_payloads.add(p)
                in_use += b.size
                header += b.header
            elif b.state != FREE_BLOCK and b.state != META:
                fail(False, f"block {b.addr:#x} has unknown state {b.state!r}")
        if pos != self.arena.brk:
            fail(False, f"blocks end at {pos:#x} but the break is at {self.arena.brk:#x}")
        mapped = self.mapped_blocks()
        if mapped:
            in_use, header = self._check_mapped(mapped, used_payloads, in_use, header)
        if len(used_payloads) != len(live):
            missing = set(live) - used_payloads
            fail(False, f"live payloads {sorted(missing)[:5]} are in no used block")
        if in_use != self.in_use:
            fail(False, f"used blocks add up to {in_use} bytes but A is booked as {self.in_use}")
        if header != self.header_in_use:
            fail(False, f"headers add up to {header} bytes but are booked as {self.header_in_use}")

    def _check_mapped(self, mapped: list[Block], used_payloads: set, in_use: int,
                      header: int) -> tuple[int, int]:
        """The shared invariants for :meth:`mapped_blocks`: used, booked, aligned,
        outside the heap and apart from each other, adding up to mapped_bytes.
        Returns A and the header bytes with theirs added."""
        fail = self._fail
        live = self.live
        end = self.arena.brk
        total = 0
        for b in mapped:
            if b.state != USED or b.size <= 0:
                fail(False, f"mapped region {b.addr:#x} is not one used block")
            if b.addr < end:
                fail(False, f"mapped region {b.addr:#x} overlaps the heap or the region before it, "
                     f"which ends at {end:#x}")
            end = b.addr + b.size
            p = b.payload
            lb = live.get(p)
            if p is None or not b.addr <= p <= end or lb is None:
                fail(False, f"mapped region {b.addr:#x} has payload {p!r}, which is not booked in it")
            if p % self.align:
                fail(False, f"payload {p:#x} is not aligned to {self.align}")
            if lb.block_addr != b.addr or lb.block_size != b.size:
                fail(False, f"region {b.addr:#x}+{b.size} is booked as {lb.block_addr:#x}+{lb.block_size}")
            if p + b.request > end:
                fail(False, f"payload {p:#x} of {b.request} bytes runs past its region end {end:#x}")
            used_payloads.add(p)
            in_use += b.size
            header += b.header
            total += b.size
        if total != self.mapped_bytes:
            fail(False, f"mapped regions add up to {total} bytes but {self.mapped_bytes} are booked")
        return in_use, header



def align_up(n: int, a: int) -> int:
    return (n + a - 1) & -a
