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
(``allocators/replay.py``, ``bounded_ops``).
"""

from __future__ import annotations

import pickle
import struct
from itertools import chain, repeat
from typing import Callable, Iterator, NamedTuple

from . import structure
from .arena import Arena
from .events import FREE, MALLOC, REALLOC, Grow, GrowFailed, Note, OpRecord, Visit
from .explain import count, times
from .metrics import ROW_FIELDS
from .params import BOOL, INT, MAX_BYTES, SIZE, Param, ParamError, check_params

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


_new_tuple = tuple.__new__


class LiveBlock(NamedTuple):
    block_addr: int
    block_size: int
    request: int
    header: int


class Strategy:
    """Base class of all strategies; see the module docstring for the contract."""

    #: registry key, e.g. ``"next-fit"``
    name = "abstract"
    #: attributes that are dicts, lists or sets of immutable items only (ints,
    #: None, tuples of ints: ``live`` holds LiveBlocks), by construction: a
    #: copy of the heap (``copy_state``) copies them without looking at their
    #: items, which costs a third of the copy at 100 000 blocks
    flat_state: tuple[str, ...] = ("live",)
    #: attributes that are lists of such containers (TLSF's free lists, one
    #: dict per (fl, sl) cell)
    flat_lists: tuple[str, ...] = ()
    #: one line for menus and tables
    title = "abstract strategy"
    #: the original this strategy follows
    citation = ""
    #: DESIGN.md counts a buddy system's splits in its search length (orders
    #: probed + splits); other strategies count nodes examined only.
    search_counts_splits = False
    #: what one unit of a step's search is, singular and plural: the one-line
    #: description of a step counts in it ("after examining 12 free blocks",
    #: "after 3 bitmap probes", "after looking at 2 AVAIL lists")
    search_unit = ("free block", "free blocks")
    #: the words before that count ("" for none)
    search_verb = "examining"

    #: the parameters every strategy takes (allocators/params.py); a subclass
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
        return list(map(Block._make, self.walk_tuples()))

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

    # ------------------------------------------------------------------ measures
    def search_length(self, rec: OpRecord | None = None) -> int:
        """Search length of an operation (the last one by default)."""
        rec = rec or self.rec
        return rec.visits + rec.splits if self.search_counts_splits else rec.visits

    @property
    def heap_size(self) -> int:
        """Bytes of the simulated heap: the break minus the base (a whole fixed pool)."""
        return self.arena.size

    @property
    def footprint(self) -> int:
        """H of the measures (DESIGN.md): the heap size in a heap grown by sbrk,
        plus the bytes of any regions mapped apart from it (:meth:`mapped_blocks`);
        in a fixed pool, where the whole pool exists from the start, the
        high-water mark of the pool the strategy has touched: the span of the
        least address range holding every block it has handed out and every
        region it has carved so far.  Blocks the strategy only laid out as
        free (a pool handed to free() as one block) are not touched until a
        request is given part of them.  The timeline's build reads the same
        fields directly after every step (allocators/replay.py): keep the two
        in step."""
        if self.arena.fixed:
            return max(0, self.touched_high - self.touched_low)
        return self.arena.size + self.mapped_bytes

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

    def explain_event(self, event) -> str | None:
        """This policy's own words for one of its events, or None for the
        generic words of :func:`heapscope.allocators.explain.describe_event`.  Override to
        say what an event means in the original's terms."""
        return None

    def explain_events(self, events: list) -> list[str | None]:
        """Words for every event of one step, in order (None: the generic
        words).  The default asks :meth:`explain_event` for each; a policy
        overrides this where an event's words depend on the events around it
        (Knuth's R2 and S2 both take a block off an AVAIL list)."""
        return [self.explain_event(e) for e in events]

    def search_units(self, rec: OpRecord) -> int:
        """How many :attr:`search_unit` the operation's search took: the visits
        by default; TLSF counts its bitmap probes."""
        return rec.visits

    def describe_record(self, rec: OpRecord) -> list[str]:
        """What an operation did, as the clauses that follow the call and its
        result in the one-line description of a step (``Timeline.describe``):
        ``["after examining 12 free blocks", "split once"]``.  Policies with
        their own words override it (buddy's "merged with its buddy twice")."""
        out = []
        n = self.search_units(rec)
        if rec.kind == FREE:
            if n:
                out.append(f"walked {count(n, self.search_unit)}")
        elif n or not (rec.kind == REALLOC and rec.payload == rec.old_payload):
            verb = f"{self.search_verb} " if self.search_verb else ""
            out.append(f"after {verb}{count(n, self.search_unit)}")
        if rec.splits:
            out.append(f"split {times(rec.splits)}")
        if rec.merges:
            out.append(f"coalesced {times(rec.merges)}")
        if rec.rotations:
            out.append(count(rec.rotations, "rotation"))
        if rec.grows:
            out.append(f"grew the heap {times(rec.grows)}")
        return out

    def fragmentation_probe(self) -> tuple[int, int, int, int]:
        """(free bytes F, largest free block, the top block's size or 0, largest
        free block other than the top one), in one pass over the free blocks.

        The top (wilderness) block is the free block at the end of the heap: it
        touches the break, or, in a strategy with an end sentinel (TLSF), the
        sentinel.  Strategies with a cheaper answer override this."""
        total = largest = top = largest_below = 0
        brk = self.arena.brk
        for addr, size in self.free_blocks():
            total += size
            if addr + size == brk:
                top = size
            elif size > largest_below:
                largest_below = size
        largest = max(top, largest_below)
        return total, largest, top, largest_below

    def measure_row(self, rec: OpRecord) -> tuple[tuple[str, ...], Callable]:
        """``(fields, row)``: what the timeline's build packs after every step
        (``allocators/replay.py``), ``row(buf, offset, live_bytes, payload)``
        packing one row of ``fields`` (names of ``metrics.ROW_FIELDS``, in
        that order) as little-endian int64s at ``offset`` of ``buf``.

        This default packs every field, read from the fields this base class
        keeps (:attr:`footprint`'s, ``in_use``, ``header_in_use``), the
        policy's :meth:`fragmentation_probe` and the counters of ``rec`` (the
        bulk record).  A policy may pack a cheaper row: the probe worked out
        in place, its containers bound once, ``largest_free`` left out (it is
        the max of ``top_free`` and ``largest_below_top``, as every probe
        gives it), and only the counters it ever adds to (the build checks
        after each block of steps that the others did not move).  Its values must be exactly this default's (tests
        compare every column with :func:`~heapscope.allocators.replay.record_row`)."""
        probe = self.fragmentation_probe
        pack = _FULL_ROW.pack_into
        if self.arena.fixed:
            def row(buf, off, live_bytes, payload):
                free, largest, top, below = probe()
                pack(buf, off, self.touched_high - self.touched_low, live_bytes, self.in_use,
                     self.header_in_use, free, largest, top, below, rec.visits, rec.splits,
                     rec.merges, rec.rotations, rec.grows, rec.walked, payload)
        else:
            arena = self.arena

            def row(buf, off, live_bytes, payload):
                free, largest, top, below = probe()
                pack(buf, off, arena.brk + self.mapped_bytes, live_bytes, self.in_use,
                     self.header_in_use, free, largest, top, below, rec.visits, rec.splits,
                     rec.merges, rec.rotations, rec.grows, rec.walked, payload)
        return ROW_FIELDS, row

    # ---------------------------------------------------------- checkpointing
    def __getstate__(self) -> dict:
        # The live blocks go into pickles (the timeline's checkpoints) as two
        # flat lists: pickling a NamedTuple costs a Python call per block,
        # which made checkpoints cost more than the replay itself.  The record
        # of the last operation is no part of the heap and stays out.
        state = self.__dict__.copy()
        live = state["live"]
        state["live"] = (list(live), list(chain.from_iterable(live.values())))
        state["rec"] = None
        return state

    def __setstate__(self, state: dict) -> None:
        payloads, flat = state["live"]
        fields = iter(flat)
        blocks = map(_new_tuple, repeat(LiveBlock), zip(fields, fields, fields, fields))
        state["live"] = dict(zip(payloads, blocks))
        state["rec"] = OpRecord()
        # One by one, not __dict__.update(): CPython (3.11+) keeps the
        # attributes of an instance whose __dict__ was never asked for inline,
        # and reads them faster; a restored heap replays at full speed.
        for name, value in state.items():
            setattr(self, name, value)

    def copy_state(self, copier) -> "Strategy":
        """A copy of this heap to replay on apart (the timeline's step-back
        cache, ``allocators/state_copy.py``): containers copied, their
        immutable items shared, much cheaper than a pickle round trip.  A
        strategy whose state is not plain data may override this; it must
        replay exactly as a restored checkpoint would."""
        from .state_copy import copy_strategy
        return copy_strategy(self, copier)

    def snapshot(self) -> bytes:
        """The whole state as bytes, for the timeline's checkpoints."""
        return pickle.dumps(self, protocol=pickle.HIGHEST_PROTOCOL)

    @staticmethod
    def restore(data: bytes) -> "Strategy":
        return pickle.loads(data)

    def state_signature(self) -> tuple:
        """A value equal for equal heaps: used by tests comparing seek with replay."""
        return (self.arena.brk, tuple(self.walk()), self._policy_signature())

    def _policy_signature(self) -> tuple:
        """Policy state not visible in walk() (rover, list order); override."""
        return ()

    # ------------------------------------------------------ for subclasses
    def bulk_ops(self) -> tuple:
        """The (malloc, free, realloc) callables bulk replay calls
        (``allocators/replay.py``: ``replay_ops`` and the timeline's build),
        taking the arguments of ``_malloc``, ``_free`` and ``_realloc``.

        By default those three methods themselves.  A policy written one verb
        per function, as its original is, may return *fused* versions instead:
        the same operations with the verbs inlined into one function each, for
        speed.  A fused operation must leave the heap, the books and the
        counters of ``self.rec`` exactly as the readable one does (tests run
        the two in lockstep); it makes no events, so it is only given while
        events are off, and it may hold on to the record and the strategy's
        containers: bulk replay asks for it after putting its bulk record in
        place and uses it only until the end of that replay."""
        return self._malloc, self._free, self._realloc

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


_FULL_ROW = struct.Struct(f"<{len(ROW_FIELDS)}q")


def probed_row_writer(strategy: "Strategy", rec, row: struct.Struct, joins: bool):
    """The timeline build's row writer (``Strategy.measure_row``) for a
    policy whose fragmentation probe is bound once (``strategy._probe()``,
    the very function :meth:`Strategy.fragmentation_probe` answers with: one
    account of the free blocks, not a second one inline): the heap, the
    books, the probe's free/top/below and the counters the policy adds to,
    visits and grows, and with ``joins`` its splits and merges too (TLSF,
    the buddy system; BSD's buckets never split nor join)."""
    s = strategy
    arena = s.arena
    fixed = arena.fixed
    probe = s._probe()
    pack = row.pack_into
    if joins:
        def write(buf, off, live_bytes, payload):
            free, _, top, below = probe()
            pack(buf, off, s.touched_high - s.touched_low if fixed else arena.brk, live_bytes,
                 s.in_use, s.header_in_use, free, top, below,
                 rec.visits, rec.splits, rec.merges, rec.grows, payload)
    else:
        def write(buf, off, live_bytes, payload):
            free, _, top, below = probe()
            pack(buf, off, s.touched_high - s.touched_low if fixed else arena.brk, live_bytes,
                 s.in_use, s.header_in_use, free, top, below, rec.visits, rec.grows, payload)
    return write


def align_up(n: int, a: int) -> int:
    return (n + a - 1) & -a
