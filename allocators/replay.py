"""Replaying a trace through a strategy, and the timeline that can show any step.

:func:`apply_op` applies one operation through the strategy's public calls
(one :class:`OpRecord` each, with events when the strategy records them).
:func:`replay_ops` applies many with events off, as fast as the interpreter
allows: it calls the policy's ``_malloc``/``_free``/``_realloc`` directly (or
the fused versions a policy offers in their place, ``Strategy.bulk_ops``) and
gives the strategy one *bulk* record whose counters run on over all the
operations (see :func:`bulk_record`), so no record is made per operation.
Both, and the timeline's build with its measures, dispatch every operation
through the one loop of :mod:`heapscope.allocators.op_dispatch` (what a trace op calls
and what it does to the :class:`Program`'s books is written there once).

:class:`Timeline` does one full replay up front (:meth:`Timeline.build`),
keeping the per-step measures (:mod:`heapscope.allocators.metrics`) and checkpoints:
the strategy's pickled state plus which trace ids are live where.  Any step t
is then reached by restoring the checkpoint at or before t and replaying
forward with events off, switching them on only for the last operation so a
view can animate it.  Stepping backwards is such a seek, from a copy of the
heap kept a few steps below when the timeline is stepping back
(:class:`BackCache`: a checkpoint of a big heap costs far more to restore
than the step's replay).

Checkpoints cost what they must: by default they are spaced by what they were
measured to cost, so that pickling takes about :data:`CHECKPOINT_SHARE` of the
build (a thirtieth), and no further apart than a seek can replay within its budget
(:data:`SEEK_REPLAY_SECONDS`); ``checkpoint_every=K`` keeps one every K steps
instead, and ``checkpoints=False`` (``heapscope compare``) keeps none.

Step numbering: position t in ``[0, n]`` is the heap after the first t
operations; "step t" (1-based, as the GUI says it) is operation ``t - 1``.

A view that morphs the heap across the shown step needs the state before it
too: :meth:`Timeline.before` rebuilds position ``t - 1`` from a checkpoint on
a copy, only when asked (never on the seek path), and keeps it while the
position stays; :meth:`Timeline.after` is the shown state in the same form.

A free of an id whose malloc failed (the heap limit was reached) does nothing,
as ``free(NULL)`` does in C: the program would have got NULL back.

A user strategy that makes a mistake (:class:`~heapscope.allocators.user.UserStrategyError`)
stops the build there: the timeline keeps the steps before it, as a cancelled
build does, and ``fault`` holds the error for the window to show.
"""

from __future__ import annotations

import gc
import pickle
import struct
import time
from bisect import bisect_right, insort
from math import isqrt
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from heapscope.traces.trace import ALLOC, FREE, REALLOC

from .events import MALLOC as MALLOC_KIND, OpRecord
from .op_dispatch import bulk_calls, public_calls, run_ops
from .packed_ops import packed_ops
from .metrics import ROW_COUNTERS, ROW_FIELDS, MetricSeries, summarize
from .running_summary import SUMMARY_CHUNK, RunningSummary
from .registry import make_strategy
from .state_copy import copy_state
from .step_text import describe_step
from .strategy import Strategy
from .user import UserStrategy, UserStrategyError

ProgressFn = Callable[[int, int], None]
CancelFn = Callable[[], bool]

KIND_NAMES = {ALLOC: "malloc", FREE: "free", REALLOC: "realloc"}

#: what checkpoints may cost, as a share of the build's replay time: 3%, not
#: 5% as first set, since the build with its measures runs at about half the
#: speed of a bare replay and every percent of it counts; seeks replay at
#: most SEEK_REPLAY_SECONDS from a checkpoint either way
CHECKPOINT_SHARE = 0.03
#: a seek replays at most about this long (at build speed) from the
#: checkpoint it restores: half of it on average, well inside the 50 ms budget
SEEK_REPLAY_SECONDS = 0.03
#: adaptive checkpoints are never closer than this many steps
MIN_CHECKPOINT_GAP = 64
#: the build reports progress and looks at its cancel flag every this many steps
PROGRESS_EVERY = 4096

#: the step-back cache (:class:`BackCache`) keeps at most this many copies of
#: the heap ...
BACK_CACHE_STATES = 8
#: ... holding at most about this many bytes together (a copy of a 100 000-block
#: heap holds 16-21 MiB: its containers; their items are shared)
BACK_CACHE_BYTES = 128 << 20
#: copies kept on the way back are never closer than this many steps
MIN_BACK_SPACING = 16
#: a seek back by at most this many steps is stepping back, and keeps copies
#: for the next steps back (a jump back does not: it pays for no copies it
#: may never use)
BACK_STEP_MOVE = 16

#: the counters of an OpRecord that a bulk record runs on
COUNTERS = ("visits", "probes", "splits", "merges", "rotations", "grows", "walked")


class ReplayCancelled(Exception):
    """The user cancelled a long replay; the work done so far is kept."""

    def __init__(self, done: int) -> None:
        super().__init__(f"replay cancelled after {done} operations")
        self.done = done


@dataclass(frozen=True)
class HeapState:
    """The heap at one position of a timeline, as views draw it: the blocks
    (``walk_tuples()``: addr, size, state, payload, request, header), the free
    structure (``structure()``, docs/structure.md) and which trace id holds
    each live payload."""
    position: int
    blocks: list
    structure: dict
    ids: dict

    @classmethod
    def of(cls, position: int, strategy: "Strategy", program: "Program") -> "HeapState":
        return cls(position, strategy.walk_tuples(), strategy.structure(), program.id_of_payload())


@dataclass
class Program:
    """What the traced program holds: for each live trace id its payload address
    and requested size; ids whose malloc failed are remembered apart."""
    live: dict[int, tuple[int, int]] = field(default_factory=dict)
    failed_ids: set[int] = field(default_factory=set)
    live_bytes: int = 0

    def id_of_payload(self) -> dict[int, int]:
        return {addr: i for i, (addr, _) in self.live.items()}


def apply_op(strategy: Strategy, program: Program, kind: int, ident: int, size: int) -> OpRecord:
    """Apply one trace operation through the strategy's public calls; return
    the strategy's record of it.  The operation is dispatched by
    :func:`~heapscope.allocators.op_dispatch.run_ops`, as every replay's are."""
    run_ops(public_calls(strategy), program, _SCRATCH, (kind,), (ident,), (size,))
    return strategy.rec


#: the record run_ops sets the kind of when the public calls make their own
_SCRATCH = OpRecord()


def bulk_record(strategy: Strategy) -> OpRecord:
    """Give ``strategy`` one record for many operations, with events off, and
    return it.

    The public malloc/free/realloc open a fresh :class:`OpRecord` per call,
    which costs as much as a fast policy's whole operation.  Bulk replay calls
    the policy's ``_malloc``/``_free``/``_realloc`` directly instead, with this
    one record in ``strategy.rec``: the policy adds to its counters as usual,
    so they count every operation so far, and an operation's own counts are
    differences.  Its ``kind`` is set before each operation (K&R's free walk
    counts as search only inside a free)."""
    rec = OpRecord(MALLOC_KIND, 0, None)
    for name in COUNTERS:   # in the instance dict: read faster than class defaults
        setattr(rec, name, 0)
    strategy.record = False
    strategy.rec = rec
    return rec


def calls_policy_directly(strategy: Strategy) -> bool:
    """Whether bulk replay may call the policy's ``_malloc``/``_free``/
    ``_realloc`` itself: not for a strategy that watches its public calls (a
    user strategy checks every result there), which goes through them --
    unless its checks are off (``guarded`` false: ``heapscope grade`` timing
    a strategy it has checked, against TLSF replayed the same way)."""
    cls = type(strategy)
    plain = cls.malloc is Strategy.malloc and cls.free is Strategy.free and cls.realloc is Strategy.realloc
    return plain or not getattr(strategy, "guarded", True)


def _add_counts(total: OpRecord, rec: OpRecord) -> None:
    for name in COUNTERS:
        setattr(total, name, getattr(total, name) + getattr(rec, name))


def policy_ops(strategy: Strategy, fused: bool = True, largest: int = 0) -> tuple:
    """The (malloc, free, realloc) a bulk replay calls, once the bulk record is
    in place: the policy's :meth:`~Strategy.bulk_ops` (fused versions where
    the policy has them, e.g. TLSF's), or with ``fused=False`` its readable
    ``_malloc``, ``_free`` and ``_realloc`` (to time or test the two apart);
    bounded (:func:`bounded_ops`) when ``largest``, the largest request the
    replay will make, is past what the strategy can ever grant."""
    ops = strategy.bulk_ops() if fused else (strategy._malloc, strategy._free, strategy._realloc)
    return bounded_ops(strategy, ops, largest)


def bounded_ops(strategy: Strategy, ops: tuple, largest: int) -> tuple:
    """``ops`` as they are when no request up to ``largest`` can be past
    ``strategy.largest_request()`` (every ordinary trace: nothing is added to
    the hot loop); else ops whose malloc and realloc fail such a request at
    once, as the public calls do (``Strategy._refuse_request``), instead of
    handing it to the policy, whose model could spend memory and time in
    proportion to it (phkmalloc books every page of a run)."""
    bound = strategy.largest_request()
    if largest <= bound:
        return ops
    malloc, free, realloc = ops
    refuse = strategy._refuse_request

    def bounded_malloc(size: int) -> int | None:
        return refuse(size) if size > bound else malloc(size)

    def bounded_realloc(payload: int, size: int) -> int | None:
        return refuse(size) if size > bound else realloc(payload, size)

    return bounded_malloc, free, bounded_realloc


def largest_size(sizes) -> int:
    """The largest request among ``sizes`` (a list or an array), 0 for none."""
    if isinstance(sizes, np.ndarray):
        return int(sizes.max()) if len(sizes) else 0
    return max(sizes, default=0)


def replay_ops(strategy: Strategy, program: Program, kinds: list, ids: list, sizes: list,
               fused: bool = True, largest: int | None = None) -> OpRecord:
    """Apply the operations (parallel lists of kind, id, size) with events
    off: the same as :func:`apply_op` on each, without a record per operation.
    Returns the bulk record, whose counters add up those operations; the
    strategy is left with a fresh, empty record.  ``fused=False`` calls the
    policy's readable methods even where it has fused ones (:func:`policy_ops`).
    ``largest`` is the largest of ``sizes`` if the caller knows it (else it
    is looked up): a request past the strategy's bound fails at once."""
    rec = bulk_record(strategy)
    try:
        if calls_policy_directly(strategy):
            if largest is None:
                largest = largest_size(sizes)
            run_ops(bulk_calls(policy_ops(strategy, fused, largest)), program, rec, kinds, ids, sizes)
        else:
            def add_counts(buf, off, live_bytes, payload):
                _add_counts(rec, strategy.rec)
            run_ops(public_calls(strategy), program, _SCRATCH, kinds, ids, sizes, add_counts)
    finally:
        strategy.rec = OpRecord()
    return rec


def replay_bare(trace, strategy: Strategy, fused: bool = True, program: Program | None = None) -> float:
    """Replay with no measures and no events; return the seconds spent.
    ``program``: the program the replay keeps its blocks in (a fresh one if
    None), to look at the heap it ended with."""
    kinds, ids, sizes = trace.kind.tolist(), trace.ids.tolist(), trace.sizes.tolist()
    largest = largest_size(trace.sizes)
    program = Program() if program is None else program
    t0 = time.perf_counter()
    replay_ops(strategy, program, kinds, ids, sizes, fused, largest)
    return time.perf_counter() - t0


# ------------------------------------------------------------------ measures
# A row of measures (metrics.ROW_FIELDS, or the subset a policy's
# Strategy.measure_row packs) is packed after every step as int64s.
_COUNTER_FIELDS = ROW_COUNTERS


def _row_size(fields: tuple) -> int:
    return 8 * len(fields)


def _measure_ops(strategy: Strategy, program: Program, counted: OpRecord, kinds: list, ids: list,
                 sizes: list, buf: bytearray, row: int, done: list, largest: int) -> None:
    """:func:`replay_ops` counting in the bulk record ``counted``, packing a
    row of measures into ``buf`` after every operation, the first at row
    ``row``; ``done[0]`` says how many operations were applied, also when one
    raises.  The row is the policy's (``Strategy.measure_row``: by default
    every field of ``metrics.ROW_FIELDS``), what :func:`record_row` would read
    from the heap.  A policy's row may leave out counters it never adds to:
    they are checked here not to have moved.  ``largest`` bounds ``sizes``
    (:func:`bounded_ops`)."""
    if not calls_policy_directly(strategy):
        return _measure_public_ops(strategy, program, counted, kinds, ids, sizes, buf, row, done)
    rec = strategy.rec = counted
    calls = bulk_calls(bounded_ops(strategy, strategy.bulk_ops(), largest))
    fields, measure = strategy.measure_row(rec)
    left_out = [name for name in ROW_COUNTERS if name not in fields]
    before = [getattr(rec, name) for name in left_out]
    step = _row_size(fields)
    run_ops(calls, program, rec, kinds, ids, sizes, measure, buf, row * step, step, done)
    moved = [name for name, was in zip(left_out, before) if getattr(rec, name) != was]
    if moved:
        raise RuntimeError(f"{strategy.name}: its measure_row leaves out the counters {moved}, "
                           "but the policy added to them: the rows would miss them")


def _measure_public_ops(strategy: Strategy, program: Program, counted: OpRecord, kinds: list,
                        ids: list, sizes: list, buf: bytearray, row: int, done: list) -> None:
    """:func:`_measure_ops` through the public calls, one record each."""
    fields = strategy.measure_row(counted)[0]
    step = _row_size(fields)

    def measure(buf, off, live_bytes, payload):
        rec = strategy.rec
        buf[off:off + step] = _packed_row(fields, _row_after(strategy, live_bytes, rec, counted))
        _add_counts(counted, rec)

    run_ops(public_calls(strategy), program, _SCRATCH, kinds, ids, sizes, measure, buf, row * step,
            step, done)


def _packed_row(fields: tuple, full: tuple) -> bytes:
    """The ``fields`` of a full row (:data:`ROW_FIELDS` order), packed."""
    return struct.pack(f"<{len(fields)}q", *(full[ROW_FIELDS.index(f)] for f in fields))


def _row_after(strategy: Strategy, live_bytes: int, rec: OpRecord, counted: OpRecord) -> tuple:
    """The full row (:data:`ROW_FIELDS`) of one operation applied by
    :func:`apply_op` (its own record ``rec``; the program then holds
    ``live_bytes``), its counters added to the bulk record ``counted``."""
    arena = strategy.arena
    heap = strategy.touched_high - strategy.touched_low if arena.fixed else arena.brk + strategy.mapped_bytes
    return (heap, live_bytes, strategy.in_use, strategy.header_in_use,
            *strategy.fragmentation_probe(),
            *(getattr(counted, name) + getattr(rec, name) for name in _COUNTER_FIELDS),
            -1 if rec.payload is None else rec.payload)


class _SeriesWriter:
    """Unpacks rows of measures into a :class:`MetricSeries`, a block at a time.

    With ``fold`` (a :class:`~heapscope.allocators.running_summary.RunningSummary`)
    the series is a buffer of at most SUMMARY_CHUNK rows, not the whole
    replay's: when a block would go past its end, the rows it holds are
    folded into the summary and it starts again (``heapscope compare``)."""

    def __init__(self, series: MetricSeries, kinds: np.ndarray, strategy: Strategy,
                 fields: tuple = ROW_FIELDS, fold: RunningSummary | None = None) -> None:
        self.series = series
        self.kinds = kinds
        self.fixed = strategy.arena.fixed
        self.base = strategy.arena.base
        self.search_counts_splits = strategy.search_counts_splits
        self.fields = fields
        #: where each counter the rows hold is, in ROW_COUNTERS order; the others did not move
        self.counter_at = [fields.index(c) for c in ROW_COUNTERS if c in fields]
        self.counter_names = [c for c in ROW_COUNTERS if c in fields]
        self.counted = np.zeros(len(self.counter_at), dtype=np.int64)   # running counters so far
        self.fold = fold
        self.first = 0          # with fold: the step of the buffer's first row ...
        self.filled = 0         # ... and how many rows it holds

    def write(self, start: int, buf, rows: int) -> None:
        if not rows:
            return
        table = np.frombuffer(buf, dtype=np.int64, count=rows * len(self.fields)).reshape(rows, -1)
        cols = dict(zip(self.fields, table.T))
        s = self.series
        at = slice(start, start + rows)
        if self.fold is not None:
            if start - self.first + rows > s.n:
                self.flush()
                self.first = start
            self.filled = start - self.first + rows
            at = slice(start - self.first, self.filled)
        put = s.put
        heap = cols["heap"]
        put("heap", at, np.maximum(heap, 0) if self.fixed else heap - self.base)
        for name in ("live", "in_use", "headers", "free", "top_free", "largest_below_top", "payload"):
            put(name, at, cols[name])
        # The largest free block is the top one or the largest below it: a
        # row may leave it out (every fragmentation probe gives that max).
        largest = cols.get("largest_free")
        put("largest_free", at, (np.maximum(cols["top_free"], cols["largest_below_top"])
                                 if largest is None else largest))
        running = table[:, self.counter_at]
        own = np.diff(running, axis=0, prepend=self.counted[None, :])
        self.counted = running[-1].copy()
        none = np.zeros(rows, dtype=np.int64)
        counts = dict(zip(self.counter_names, own.T))
        visits, splits, merges, rotations, grows, walked = (counts.get(c, none) for c in ROW_COUNTERS)
        put("search", at, visits + splits if self.search_counts_splits else visits)
        put("work", at, visits + walked + splits + merges + rotations)
        put("rotations", at, rotations)
        put("splits", at, splits)
        put("merges", at, merges)
        put("grows", at, grows)
        is_malloc = self.kinds[start:start + rows] != FREE
        s.is_malloc[at] = is_malloc
        s.failed[at] = is_malloc & (cols["payload"] == -1)

    def flush(self) -> None:
        """With fold: fold the rows the buffer holds into the summary."""
        if self.fold is not None and self.filled:
            self.fold.add(self.series.prefix(self.filled))
            self.filled = 0


def record_row(series: MetricSeries, t: int, strategy: Strategy, program: Program,
               rec: OpRecord, kind: int) -> None:
    """Fill row t of the series from the heap after an operation applied by
    :func:`apply_op`: the plain, one-step form of what the build packs."""
    free, largest, top, below = strategy.fragmentation_probe()
    put = series.put
    put("heap", t, strategy.footprint)
    put("live", t, program.live_bytes)
    put("in_use", t, strategy.in_use)
    put("headers", t, strategy.header_in_use)
    put("free", t, free)
    put("largest_free", t, largest)
    put("top_free", t, top)
    put("largest_below_top", t, below)
    put("search", t, strategy.search_length(rec))
    put("work", t, rec.work)
    put("rotations", t, rec.rotations)
    put("splits", t, rec.splits)
    put("merges", t, rec.merges)
    put("grows", t, rec.grows)
    series.is_malloc[t] = kind != FREE
    series.failed[t] = rec.failed
    put("payload", t, -1 if rec.payload is None else rec.payload)


class BackCache:
    """Copies of the heap at a few positions (:mod:`heapscope.allocators.state_copy`),
    for stepping back.

    A checkpoint is a pickle: restoring one of a big heap costs far more than
    a copy (a 100 000-block heap: 100-250 ms against 10-20 ms), and the steps
    from it to the position asked may be thousands.  When a seek goes back
    and must replay a long way to get there, it replays once and keeps a
    copy every ``spacing`` steps below the position (``spacing`` = the square
    root of that replay, at least :data:`MIN_BACK_SPACING`); each of the
    following steps back starts from a copy of the nearest copy and replays
    at most ``spacing`` steps.  Bounded: at most ``states`` copies of at most
    ``max_bytes`` together (the copies' own containers, as
    :func:`~heapscope.allocators.state_copy.copy_state` counts them); the copies
    farthest from where the timeline goes are dropped first."""

    def __init__(self, states: int = BACK_CACHE_STATES, max_bytes: int = BACK_CACHE_BYTES) -> None:
        self.states = states
        self.max_bytes = max_bytes
        self.steps: list[int] = []          # the positions kept, ascending
        self._entries: dict[int, tuple] = {}
        self.bytes = 0
        #: the most bytes the copies ever held together, and the last copy's size
        self.peak_bytes = 0
        self.last_bytes = 0
        #: the steps between the copies of the last replay that kept some
        self.spacing = MIN_BACK_SPACING

    def __len__(self) -> int:
        return len(self.steps)

    def clear(self) -> None:
        self.steps.clear()
        self._entries.clear()
        self.bytes = 0

    def nearest(self, t: int) -> int:
        """The last position kept at or before ``t``, or -1."""
        i = bisect_right(self.steps, t) - 1
        return self.steps[i] if i >= 0 else -1

    def plan(self, base: int, target: int) -> list[int]:
        """Where to keep copies on a replay from ``base`` to ``target`` (ascending)."""
        spacing = self.spacing = max(MIN_BACK_SPACING, isqrt(target - base))
        room = self.states
        if self.last_bytes:
            room = min(room, self.max_bytes // self.last_bytes)
        return [p for p in (target - j * spacing for j in range(room, 0, -1)) if p > base]

    def take(self, t: int) -> tuple[Strategy, "Program"]:
        """A copy of the heap kept at ``t``, to replay on (the kept one stays)."""
        strategy, program, _ = self._entries[t]
        twin, prog, _ = copy_state(strategy, program)
        return twin, prog

    def keep(self, t: int, strategy: Strategy, program: "Program", size: int, near: int) -> None:
        """Keep ``strategy`` and ``program`` (never to be replayed on) as the
        heap at ``t``; ``near``: where the timeline is going.  Over the
        bounds, the copies above ``near`` go first (a step forward needs
        none), then the farthest below."""
        self.last_bytes = size
        if t in self._entries:
            return
        # Make room first, the new copy a candidate too: the cache never
        # holds more than its bounds, even for a moment.
        steps = self.steps + [t]
        total = self.bytes + size
        while steps and (len(steps) > self.states or total > self.max_bytes):
            far = max(steps, key=lambda p: (p > near, abs(p - near)))
            steps.remove(far)
            if far == t:            # the new copy is the one to go
                self.bytes = total - size
                return
            total -= self._entries.pop(far)[2]
            self.steps.remove(far)
        insort(self.steps, t)
        self._entries[t] = (strategy, program, size)
        self.bytes = total
        self.peak_bytes = max(self.peak_bytes, total)


def _go_on_after(blob: bytes, strategy: Strategy, program: Program) -> tuple[Strategy, Program]:
    """The heap the build goes on with after pickling ``strategy`` into the
    checkpoint ``blob``.

    Pickling asked for the strategy's ``__dict__``, and from then on CPython
    3.11 reads its attributes 30-50% slower (a fast policy's whole step).  In
    general the build goes on from the checkpoint unpickled, as a seek would
    restore it (``Strategy.__setstate__`` sets the attributes one by one, so
    they are inline again).  Unpickling a big heap costs more than pickling
    it, though (3 ms of a 5 ms checkpoint on gcc's trace), so a policy whose
    state is plain containers with no reference back to the heap (its class
    says ``plain_state = True`` itself: a subclass may add such a reference)
    goes on from a *twin*: a new instance given the same attribute values, in
    the same order, sharing the containers the old one drops.  It is the
    state the checkpoint holds, at the cost of a few attribute stores."""
    cls = type(strategy)
    if not cls.__dict__.get("plain_state", False):
        return pickle.loads(blob)
    twin = cls.__new__(cls)
    for name, value in strategy.__dict__.items():
        setattr(twin, name, value)
    return twin, program


@dataclass
class BuiltTimeline:
    """What a build leaves for seeking, without the trace: the measures, the
    checkpoints and the final state.  A worker process ships this back
    (:mod:`heapscope.allocators.parallel`); :meth:`Timeline.from_built` takes it."""
    strategy_name: str
    params: dict
    n: int
    built: int
    series: MetricSeries
    checkpoints: list
    checkpoint_steps: list
    final_state: bytes
    last_record: OpRecord | None
    wall_seconds: float
    cpu_seconds: float
    #: the user strategy's mistake that stopped the build (Timeline.fault), or None
    fault: object = None



def unpickled_heap(blob: bytes) -> tuple[Strategy, Program]:
    """The (strategy, program) a checkpoint holds, unpickled with the
    collector off: unpickling a big heap makes hundreds of thousands of
    objects, and the collector's passes over them (which can find no
    garbage: the objects are new and referenced) took 60% of it."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        return pickle.loads(blob)
    finally:
        if collecting:
            gc.enable()

class Timeline:
    """A trace replayed through one strategy, seekable to any step.

    ``checkpoint_every=K`` keeps a checkpoint every K steps; by default they
    are spaced by their measured cost (module docstring); ``checkpoints=False``
    keeps none (the measures alone: a seek then replays from the start).
    ``ops``: the trace's (kinds, ids, sizes), read like lists (by default
    :func:`~heapscope.allocators.packed_ops.packed_ops`: the trace's own arrays, a
    span turned into lists only when replayed).  ``keep_series=False``
    (``heapscope compare``, with ``checkpoints=False``) keeps no per-step
    measures: they are folded into :meth:`summary` as the build goes
    (:class:`~heapscope.allocators.running_summary.RunningSummary`), and
    ``series`` holds only the last chunk of them."""

    def __init__(self, trace, strategy: str | Callable[[], Strategy], params: dict | None = None,
                 checkpoint_every: int | None = None, checkpoints: bool = True,
                 ops: tuple | None = None, keep_series: bool = True) -> None:
        self.trace = trace
        self.params = dict(params or {})
        if isinstance(strategy, str):
            self.strategy_name = strategy
            self._factory = lambda: make_strategy(strategy, **self.params)
        else:
            self._factory = strategy
            self.strategy_name = strategy().name
        self.n = len(trace)
        self.every = checkpoint_every
        self.keep_checkpoints = checkpoints
        # The ops read like lists, a span at a time (allocators/packed_ops.py):
        # the whole trace as lists would cost some 70 bytes an operation.
        if ops is None:
            ops = packed_ops(trace)
        self._kinds, self._ids, self._sizes = ops
        #: the largest request of the trace: bulk replay bounds requests past
        #: the strategy's largest_request only when there is one
        self._largest = largest_size(trace.sizes)
        #: with keep_series False: the summary so far, and series is its buffer
        self.running = None if keep_series else RunningSummary()
        self.series = MetricSeries(self.n if keep_series else min(self.n, SUMMARY_CHUNK))
        self._writer: _SeriesWriter | None = None
        self.checkpoints: list[bytes] = []
        self.checkpoint_steps: list[int] = []   # the position of each checkpoint, ascending
        #: the checkpoints added after the build (:meth:`densify`): their steps and bytes
        self.added_checkpoint_steps: set[int] = set()
        self.added_checkpoint_bytes = 0
        #: seconds a step of bare replay took, as densifying measured it (0: not yet)
        self.bare_step_seconds = 0.0
        self.built = 0          # steps replayed by build(); < n if cancelled
        self.wall_seconds = 0.0
        self.cpu_seconds = 0.0
        self.strategy: Strategy = self._factory()
        self.program = Program()
        self.position = 0
        self.last_record: OpRecord | None = None
        #: the user strategy's mistake that stopped the build, or None
        self.fault: UserStrategyError | None = None
        self._before: HeapState | None = None     # before(), kept while the position stays
        #: copies of the heap kept on the way back (:class:`BackCache`)
        self.back_cache = BackCache()
        #: what seeks and state_at() did, counted (tests read them): operations
        #: replayed, checkpoints unpickled, copies of the heap taken from the
        #: step-back cache and put in it
        self.replayed_ops = 0
        self.restores = 0
        self.copies_taken = 0
        self.copies_kept = 0

    # -------------------------------------------------------------- build
    def build(self, progress: ProgressFn | None = None, cancel: CancelFn | None = None,
              start: tuple | None = None) -> "Timeline":
        """Replay the whole trace once, keeping measures and checkpoints.

        ``progress(done, total)`` is called every :data:`PROGRESS_EVERY` steps;
        if ``cancel()`` turns true, :class:`ReplayCancelled` is raised and the
        timeline keeps the steps done so far (its ``n`` shrinks to them).
        The last operation is replayed with its events, so the timeline ends
        showing it as a seek there would.  ``start``: ``(t, strategy,
        program)``, the heap at position ``t < n`` to go on from, the
        checkpoints and measures before it already in place (an edited
        trace, :mod:`heapscope.allocators.timeline_edit`).
        """
        t, strategy, program = start or (0, self._factory(), Program())
        t0 = t                  # where this replay starts (its speed is over the steps from here)
        n = self.n
        counted = bulk_record(strategy)
        fields = strategy.measure_row(counted)[0]
        if self.running is not None:
            if start is not None:
                raise ValueError("a timeline without its series is built from the start")
            self.running = RunningSummary()
        writer = self._writer = _SeriesWriter(self.series, self.trace.kind, strategy, fields,
                                              self.running)
        kinds, ids, sizes = self._kinds, self._ids, self._sizes
        if start is None:
            self.checkpoints, self.checkpoint_steps = [], []
        self.added_checkpoint_steps, self.added_checkpoint_bytes = set(), 0
        self.fault = None
        self._before = None
        self.back_cache.clear()
        # Rows are packed into buf and unpacked into the series a block at a
        # time, at each progress point: never across one.
        buf = bytearray(min(n, PROGRESS_EVERY) * _row_size(fields))
        block = t               # the step of buf's first row
        wall0, cpu0 = time.perf_counter(), time.process_time()
        # Checkpoints are spaced by the CPU time of this thread (the replay's
        # and the pickles'): on a loaded machine the wall time of each step
        # grew several-fold and they came as many times closer (at 1M ops
        # and load 20, the window's build took ten times compare's time).
        spent = 0.0             # replay seconds, checkpoints left out
        pickled = [0.0, 0]      # seconds and bytes of the checkpoints so far
        done = [0]              # operations applied by the last _measure_ops
        next_checkpoint = (t + self._checkpoint_gap(0, 0, 0) if start else 0) if self.keep_checkpoints else n
        last = n - 1            # replayed apart, with its events
        while t < last:
            if t == next_checkpoint:
                c0 = time.thread_time()
                try:
                    blob = self._keep_checkpoint(t, strategy, program)
                except UserStrategyError as exc:     # a user strategy that cannot be pickled
                    writer.write(block, buf, t - block)
                    self._stop_at_fault(t, wall0, cpu0, exc)
                    return self
                # Pickling asked for the strategy's __dict__, and from then on
                # CPython 3.11 reads its attributes 30-50% slower: go on with
                # a heap whose attributes are inline again (_go_on_after).
                strategy, program = _go_on_after(blob, strategy, program)
                size = len(blob)
                pickled[0] += time.thread_time() - c0
                pickled[1] += size
                # What this one cost, at the mean speed of all so far: a
                # pause of the machine (a collection, another process) while
                # one was pickled does not space the rest out.
                cost = size * pickled[0] / pickled[1]
                next_checkpoint = t + self._checkpoint_gap(cost, spent, t - t0)
            if t and t % PROGRESS_EVERY == 0:
                writer.write(block, buf, t - block)
                block = t
                if progress:
                    progress(t, n)
                if cancel and cancel():
                    self._finish_build(t, wall0, cpu0, strategy, program, None)
                    raise ReplayCancelled(t)
            stop = min(last, next_checkpoint, (t // PROGRESS_EVERY + 1) * PROGRESS_EVERY)
            s0 = time.thread_time()
            try:
                _measure_ops(strategy, program, counted, kinds[t:stop], ids[t:stop], sizes[t:stop],
                             buf, t - block, done, self._largest)
            except UserStrategyError as exc:
                t += done[0]
                writer.write(block, buf, t - block)
                self._stop_at_fault(t, wall0, cpu0, exc)
                return self
            spent += time.thread_time() - s0
            t = stop
        writer.write(block, buf, t - block)
        record = None
        if n:
            try:
                if t == next_checkpoint:
                    self._keep_checkpoint(t, strategy, program)
                strategy.record = True
                record = apply_op(strategy, program, kinds[last], ids[last], sizes[last])
            except UserStrategyError as exc:
                self._stop_at_fault(last, wall0, cpu0, exc)
                return self
            writer.write(last, _packed_row(fields, _row_after(strategy, program.live_bytes, record, counted)), 1)
        self._finish_build(n, wall0, cpu0, strategy, program, record)
        if progress:
            progress(n, n)
        return self

    def _checkpoint_gap(self, cost: float, spent: float, t: int) -> int:
        """Steps to the next checkpoint, given what this one cost: enough that
        checkpoints take about CHECKPOINT_SHARE of the build, few enough that a
        seek replays no more than about SEEK_REPLAY_SECONDS (the replay's
        speed so far, ``spent`` seconds for ``t`` steps, says how many)."""
        if self.every:
            return self.every
        if not t or spent <= 0:
            return MIN_CHECKPOINT_GAP
        step_seconds = spent / t
        seconds = min(cost / CHECKPOINT_SHARE, SEEK_REPLAY_SECONDS)
        return max(MIN_CHECKPOINT_GAP, int(seconds / step_seconds))

    def _keep_checkpoint(self, t: int, strategy: Strategy, program: Program) -> bytes:
        blob = self._pack(strategy, program)
        self.checkpoints.append(blob)
        self.checkpoint_steps.append(t)
        return blob

    def insert_checkpoint(self, t: int, blob: bytes) -> None:
        """Keep ``blob`` (:meth:`_pack` of the heap at position ``t``) as one
        more checkpoint, after the build; one already at ``t`` stays."""
        k = bisect_right(self.checkpoint_steps, t)
        if k and self.checkpoint_steps[k - 1] == t:
            return
        self.checkpoint_steps.insert(k, t)
        self.checkpoints.insert(k, blob)
        self.added_checkpoint_steps.add(t)
        self.added_checkpoint_bytes += len(blob)

    def drop_added_checkpoints(self) -> None:
        """Forget the checkpoints added after the build (their memory), in place."""
        added = self.added_checkpoint_steps
        if not added:
            return
        kept = [(t, blob) for t, blob in zip(self.checkpoint_steps, self.checkpoints) if t not in added]
        self.checkpoint_steps[:] = [t for t, _ in kept]
        self.checkpoints[:] = [blob for _, blob in kept]
        added.clear()
        self.added_checkpoint_bytes = 0

    def densify(self, share: int = 1, max_bytes: int | None = None):
        """A :class:`~heapscope.allocators.denser_checkpoints.Densifier` that adds
        checkpoints so that a seek replays about ``1/share`` of what it
        replays now (compare mode: ``share`` rows seek together), run in
        slices by the caller (``.run(seconds)``, ``.run_all()``)."""
        from .denser_checkpoints import DENSER_BYTES, Densifier
        return Densifier(self, share, DENSER_BYTES if max_bytes is None else max_bytes)

    def _finish_build(self, done: int, wall0: float, cpu0: float, strategy, program,
                      record: OpRecord | None) -> None:
        self.wall_seconds = time.perf_counter() - wall0
        self.cpu_seconds = time.process_time() - cpu0
        self.built = done
        if self._writer is not None:
            self._writer.flush()
            self._writer = None
        if done < self.n:
            self.n = done
            if self.running is None:
                self.series.truncate(done)
        # Leave the timeline at the end, where the full replay left the heap.
        strategy.record = True
        if record is None:
            strategy.rec = OpRecord()
        self.strategy, self.program, self.position = strategy, program, done
        self.last_record = record

    def _stop_at_fault(self, t: int, wall0: float, cpu0: float, exc: UserStrategyError) -> None:
        """Operation t broke the user strategy: keep the t steps before it.  The
        strategy's state after the fault is not trusted; seeks restore the
        checkpoints, all taken before it."""
        if exc.step is None:
            exc.step = t + 1
        self.fault = exc
        self._finish_build(t, wall0, cpu0, self._factory(), Program(), None)
        self.position = 0
        self.last_record = None

    @staticmethod
    def _pack(strategy: Strategy, program: Program) -> bytes:
        try:
            return pickle.dumps((strategy, program), protocol=pickle.HIGHEST_PROTOCOL)
        except Exception as exc:
            explain = getattr(strategy, "pickling_error", None)   # user strategies say which attribute
            if explain is None:
                raise
            raise explain(exc) from exc

    # ------------------------------------------------------ shipping
    def export(self) -> BuiltTimeline:
        """The built timeline without its trace, to send to another process."""
        return BuiltTimeline(self.strategy_name, self.params, self.n, self.built, self.series,
                             self.checkpoints, self.checkpoint_steps,
                             self._pack(self.strategy, self.program), self.last_record,
                             self.wall_seconds, self.cpu_seconds, self.fault)

    @classmethod
    def from_built(cls, trace, built: BuiltTimeline, ops: tuple | None = None) -> "Timeline":
        """A timeline of ``trace`` built elsewhere (:meth:`export`), positioned
        at its end as :meth:`build` leaves it."""
        tl = cls(trace, built.strategy_name, built.params, ops=ops)
        tl.n, tl.built = built.n, built.built
        tl.series = built.series
        tl.checkpoints, tl.checkpoint_steps = built.checkpoints, built.checkpoint_steps
        tl.wall_seconds, tl.cpu_seconds = built.wall_seconds, built.cpu_seconds
        tl.fault = built.fault
        tl.strategy, tl.program = pickle.loads(built.final_state)
        tl.position = built.n
        tl.last_record = built.last_record
        if built.last_record is not None:
            tl.strategy.rec = built.last_record
        if built.fault is not None:     # as _stop_at_fault leaves it: a fresh heap at step 0
            tl.position, tl.last_record = 0, None
        return tl

    # --------------------------------------------------------------- seek
    def seek(self, t: int) -> Strategy:
        """Show the heap after the first t operations (0 <= t <= n).

        The heap is taken from the nearest of: where the timeline stands, a
        copy in the step-back cache, a checkpoint (at or before ``t - 1``,
        so that at least the shown step is replayed); the steps from there
        are replayed in bulk and the shown step with its events.  A seek
        back by at most :data:`BACK_STEP_MOVE` steps that must replay more
        than ``2 * MIN_BACK_SPACING`` steps from a checkpoint (or more than
        twice the cache's spacing from a copy) keeps copies on the way
        (:class:`BackCache`), so the next steps back replay only a short
        span each."""
        if not 0 <= t <= self.n:
            raise IndexError(f"step {t} is outside 0..{self.n}")
        if t == self.position:
            return self.strategy
        back = 0 < self.position - t <= BACK_STEP_MOVE
        target = t - 1 if t else 0      # the heap before the shown step
        copies = self.copies_taken
        if not self.position <= target:
            self.strategy, self.program, self.position = self._restore(target)
        elif self.position + MIN_BACK_SPACING < self.back_cache.nearest(target):
            # a copy costs about as much as replaying a few dozen steps: only
            # one well ahead of here (steps forward after steps back pass
            # the copies above them)
            self._take_copy(self.back_cache.nearest(target))
        elif self.position < self._checkpoint_at(target):
            self.strategy, self.program, self.position = self._restore(target)
        else:
            back = False                # from here: nothing restored
        # From a copy, the cache's spacing is the usual replay: refill only
        # from a copy left far below (an earlier window).
        spacing = self.back_cache.spacing if self.copies_taken > copies else MIN_BACK_SPACING
        if back and target - self.position > 2 * spacing:
            self._replay_keeping_copies(target)
        self._replay_to(target)
        strategy, program = self.strategy, self.program
        if t:
            shown = t - 1
            strategy.record = True      # only the shown step keeps its events
            self.last_record = apply_op(strategy, program, self._kinds[shown], self._ids[shown],
                                        self._sizes[shown])
            self.replayed_ops += 1
            if isinstance(strategy, UserStrategy):
                self._same_as_built(shown, self.last_record.payload)
        else:
            self.last_record = None
        strategy.record = True
        self.position = t
        return strategy

    def _same_as_built(self, shown: int, payload: int | None) -> None:
        """UserStrategyError when the shown step, replayed by a seek, returns
        another address than the build recorded for it: a strategy of your
        own that is not deterministic would show one step as two heaps
        (issue 19; ``heapscope grade`` says so at the first differing step)."""
        if shown >= self.built:         # not built that far (inspect seeks unbuilt)
            return
        built = int(self.series.payload[shown])
        now = -1 if payload is None else payload
        if built != now:
            def hx(a):
                return "NULL" if a < 0 else f"{a:#x}"
            strategy = self.strategy
            raise UserStrategyError(
                f"not deterministic: step {shown + 1} returned {hx(built)} when the timeline was "
                f"built and {hx(now)} when replayed to show it; a strategy must give the same heap "
                "on every replay of a trace (seed any random numbers you use)",
                method="_malloc", cls_name=type(strategy).__name__, step=shown + 1)

    def _checkpoint_at(self, t: int) -> int:
        """The position of the last checkpoint at or before ``t`` (0 without one)."""
        k = bisect_right(self.checkpoint_steps, t) - 1
        return self.checkpoint_steps[k] if k >= 0 else 0

    def _take_copy(self, at: int) -> None:
        self.strategy, self.program = self.back_cache.take(at)
        self.position = at
        self.copies_taken += 1

    def _replay_to(self, t: int) -> None:
        """Replay the timeline's own heap forward to position ``t``, events off."""
        p = self.position
        if t > p:
            replay_ops(self.strategy, self.program, self._kinds[p:t], self._ids[p:t], self._sizes[p:t],
                       largest=self._largest)
            self.replayed_ops += t - p
            self.position = t

    def _replay_keeping_copies(self, target: int) -> None:
        """Replay to ``target`` keeping copies on the way in the step-back cache."""
        cache = self.back_cache
        for p in cache.plan(self.position, target):
            self._replay_to(p)
            twin, prog, size = copy_state(self.strategy, self.program)
            # Keep the original, replay on the copy: reading the original's
            # attributes asked for its __dict__, and CPython 3.11 reads an
            # instance's attributes slower from then on.
            cache.keep(p, self.strategy, self.program, size, target)
            self.strategy, self.program = twin, prog
            self.copies_kept += 1

    # ------------------------------------------------- before and after
    def before(self) -> HeapState | None:
        """The heap before the shown step (position ``t - 1``), None at
        position 0.  Rebuilt on a copy from the checkpoint at or before
        ``t - 1`` when first asked at a position (the steps from that
        checkpoint replayed, plus unpickling it), then kept until the
        position changes; seeking never computes it."""
        t = self.position
        if t == 0:
            return None
        cached = self._before
        if cached is None or cached.position != t - 1:
            cached = self._before = self.state_at(t - 1)
        return cached

    def after(self) -> HeapState:
        """The heap the shown step left (the current position), in the form of
        :meth:`before`."""
        return HeapState.of(self.position, self.strategy, self.program)

    def state_at(self, t: int) -> HeapState:
        """The heap at position ``t`` without moving the timeline: built on a
        copy restored from the checkpoint at or before ``t``."""
        if not 0 <= t <= self.n:
            raise IndexError(f"step {t} is outside 0..{self.n}")
        if t == self.position:
            return self.after()
        return HeapState.of(t, *self.heap_at(t))

    def heap_at(self, t: int) -> tuple[Strategy, Program]:
        """A heap of its own at position ``t`` (a strategy and its program),
        restored from the checkpoint at or before ``t`` and replayed; the
        timeline does not move."""
        strategy, program, start = self._restore(t)
        replay_ops(strategy, program, self._kinds[start:t], self._ids[start:t], self._sizes[start:t],
                   largest=self._largest)
        self.replayed_ops += t - start
        strategy.record = True
        return strategy, program

    def adopt(self, t: int, strategy: Strategy, program: Program) -> None:
        """Stand at position ``t`` on ``strategy`` and ``program``, a heap of
        its own there (:meth:`heap_at`, made while this timeline showed
        another step: the window's compare mode, a row at a time)."""
        self.strategy, self.program, self.position = strategy, program, t
        self.last_record = None

    def _restore(self, t: int) -> tuple[Strategy, Program, int]:
        """A heap of its own at the last position at or before ``t`` that a
        checkpoint or the step-back cache holds (a fresh heap without one),
        and that position.  A copy costs far less than unpickling: at the
        same position the copy wins."""
        k = bisect_right(self.checkpoint_steps, t) - 1
        near = self.back_cache.nearest(t)
        if near >= 0 and (k < 0 or near >= self.checkpoint_steps[k]):
            strategy, program = self.back_cache.take(near)
            self.copies_taken += 1
            return strategy, program, near
        if k < 0:
            return self._factory(), Program(), 0
        self.restores += 1
        return (*unpickled_heap(self.checkpoints[k]), self.checkpoint_steps[k])

    def step_forward(self) -> Strategy:
        return self.seek(min(self.position + 1, self.n))

    def step_back(self) -> Strategy:
        return self.seek(max(self.position - 1, 0))

    # ---------------------------------------------------------- explain
    def op(self, t: int) -> tuple[int, int, int]:
        """(kind, id, size) of step t (1-based)."""
        return self._kinds[t - 1], self._ids[t - 1], self._sizes[t - 1]

    def describe(self) -> str:
        """The current step in words, in the strategy's own terms
        (:func:`heapscope.allocators.step_text.describe_step`), e.g. 'step
        1234: malloc(512) for id 17 -> 0x1a40 after examining 12 free blocks;
        split once'."""
        t = self.position
        return describe_step(t, self.n, self.op(t) if t else None, self.last_record, self.strategy,
                             getattr(self.trace, "names", None))

    # ------------------------------------------------- walks of their own
    @property
    def operations(self) -> tuple[list, list, list, int]:
        """The trace's (kinds, ids, sizes), read like lists, and its largest request:
        what a walk of its own (:mod:`heapscope.allocators.find`) replays."""
        return self._kinds, self._ids, self._sizes, self._largest

    def heap_at_checkpoint(self, t: int) -> tuple[Strategy, Program, int]:
        """A heap of its own at the last checkpoint at or before position
        ``t`` (a fresh one without), and its position; the timeline does not
        move and its step-back cache is not touched, so another thread may
        seek it meanwhile."""
        steps, blobs = list(self.checkpoint_steps), list(self.checkpoints)
        k = bisect_right(steps, t) - 1
        if k < 0 or len(blobs) != len(steps):
            return self._factory(), Program(), 0
        return (*unpickled_heap(blobs[k]), steps[k])

    def summary(self) -> dict:
        row = summarize(self.series) if self.running is None else self.running.row()
        row["wall_s"] = self.wall_seconds
        return row
