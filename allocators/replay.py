"""Replaying a trace through a strategy, and the timeline that can show any step.

:func:`replay_into` applies ops to a strategy and keeps the per-step measures.
:class:`Timeline` does one full replay up front, keeping a checkpoint (the
strategy's pickled state plus which trace ids are live where) every K steps.
Any step t is then reached by restoring the checkpoint at or before t and
replaying forward with events off, switching them on only for the last
operation so a view can animate it.  Stepping backwards is such a seek.

Step numbering: position t in ``[0, n]`` is the heap after the first t
operations; "step t" (1-based, as the GUI says it) is operation ``t - 1``.

A view that morphs the heap across the shown step needs the state before it
too: :meth:`Timeline.before` rebuilds position ``t - 1`` from a checkpoint on
a copy, only when asked (never on the seek path), and keeps it while the
position stays; :meth:`Timeline.after` is the shown state in the same form.

A free of an id whose malloc failed (the heap limit was reached) does nothing,
as ``free(NULL)`` does in C: the program would have got NULL back.

A user strategy that makes a mistake (:class:`~allocators.user.UserStrategyError`)
stops the build there: the timeline keeps the steps before it, as a cancelled
build does, and ``fault`` holds the error for the window to show.
"""

from __future__ import annotations

import pickle
import time
from dataclasses import dataclass, field
from typing import Callable

from ..traces.trace import ALLOC, FREE, REALLOC

from .events import OpRecord
from .metrics import MetricSeries, summarize
from .registry import make_strategy
from .strategy import Strategy
from .user import UserStrategyError

ProgressFn = Callable[[int, int], None]
CancelFn = Callable[[], bool]

KIND_NAMES = {ALLOC: "malloc", FREE: "free", REALLOC: "realloc"}


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
    """Apply one trace operation; return the strategy's record of it."""
    live = program.live
    if kind == ALLOC:
        payload = strategy.malloc(size)
        if payload is None:
            program.failed_ids.add(ident)
        else:
            live[ident] = (payload, size)
            program.live_bytes += size
    elif kind == FREE:
        entry = live.pop(ident, None)
        if entry is None:
            # Its malloc failed: the program holds NULL, and free(NULL) is a no-op.
            program.failed_ids.discard(ident)
            strategy.free(None)
        else:
            strategy.free(entry[0])
            program.live_bytes -= entry[1]
    elif kind == REALLOC:
        entry = live.get(ident)
        old = entry[0] if entry else None
        payload = strategy.realloc(old, size)
        if payload is None:
            if entry is None:
                program.failed_ids.add(ident)
        else:
            program.failed_ids.discard(ident)
            live[ident] = (payload, size)
            program.live_bytes += size - (entry[1] if entry else 0)
    else:
        raise ValueError(f"unknown operation kind {kind}")
    return strategy.rec


def record_row(series: MetricSeries, t: int, strategy: Strategy, program: Program,
               rec: OpRecord, kind: int) -> None:
    """Fill row t of the series from the heap after an operation."""
    free, largest, top, below = strategy.fragmentation_probe()
    series.heap[t] = strategy.footprint
    series.live[t] = program.live_bytes
    series.in_use[t] = strategy.in_use
    series.headers[t] = strategy.header_in_use
    series.free[t] = free
    series.largest_free[t] = largest
    series.top_free[t] = top
    series.largest_below_top[t] = below
    series.search[t] = strategy.search_length(rec)
    series.work[t] = rec.work
    series.rotations[t] = rec.rotations
    series.splits[t] = rec.splits
    series.merges[t] = rec.merges
    series.grows[t] = rec.grows
    series.is_malloc[t] = kind != FREE
    series.failed[t] = rec.failed
    series.payload[t] = -1 if rec.payload is None else rec.payload


def replay_bare(trace, strategy: Strategy) -> float:
    """Replay with no measures and no events; return the seconds spent."""
    strategy.record = False
    program = Program()
    t0 = time.perf_counter()
    for kind, ident, size in zip(trace.kind.tolist(), trace.ids.tolist(), trace.sizes.tolist()):
        apply_op(strategy, program, kind, ident, size)
    return time.perf_counter() - t0


def default_checkpoint_interval(n: int) -> int:
    """Every K steps: about a thousand checkpoints for long traces, K >= 64."""
    return max(64, n // 1000)


class Timeline:
    """A trace replayed through one strategy, seekable to any step."""

    def __init__(self, trace, strategy: str | Callable[[], Strategy], params: dict | None = None,
                 checkpoint_every: int | None = None) -> None:
        self.trace = trace
        self.params = dict(params or {})
        if isinstance(strategy, str):
            self.strategy_name = strategy
            self._factory = lambda: make_strategy(strategy, **self.params)
        else:
            self._factory = strategy
            self.strategy_name = strategy().name
        self.n = len(trace)
        self.every = checkpoint_every or default_checkpoint_interval(self.n)
        self._kinds = trace.kind.tolist()
        self._ids = trace.ids.tolist()
        self._sizes = trace.sizes.tolist()
        self.series = MetricSeries(self.n)
        self.checkpoints: list[bytes] = []
        self.built = 0          # steps replayed by build(); < n if cancelled
        self.wall_seconds = 0.0
        self.strategy: Strategy = self._factory()
        self.program = Program()
        self.position = 0
        self.last_record: OpRecord | None = None
        #: the user strategy's mistake that stopped the build, or None
        self.fault: UserStrategyError | None = None
        self._before: HeapState | None = None     # before(), kept while the position stays

    # -------------------------------------------------------------- build
    def build(self, progress: ProgressFn | None = None, cancel: CancelFn | None = None) -> "Timeline":
        """Replay the whole trace once, keeping measures and checkpoints.

        ``progress(done, total)`` is called every 4096 steps; if ``cancel()``
        turns true, :class:`ReplayCancelled` is raised and the timeline keeps the
        steps done so far (its ``n`` shrinks to them).
        """
        strategy = self._factory()
        strategy.record = False
        program = Program()
        series = self.series
        every = self.every
        kinds, ids, sizes = self._kinds, self._ids, self._sizes
        self.checkpoints = []
        self.fault = None
        self._before = None
        t0 = time.perf_counter()
        for t in range(self.n):
            try:
                if t % every == 0:
                    self.checkpoints.append(self._pack(strategy, program))
                if t & 4095 == 0 and t:
                    if progress:
                        progress(t, self.n)
                    if cancel and cancel():
                        self._finish_build(t, t0, strategy, program, cancelled=True)
                        raise ReplayCancelled(t)
                kind = kinds[t]
                rec = apply_op(strategy, program, kind, ids[t], sizes[t])
                record_row(series, t, strategy, program, rec, kind)
            except UserStrategyError as exc:
                self._stop_at_fault(t, t0, exc)
                return self
        self._finish_build(self.n, t0, strategy, program, cancelled=False)
        if progress:
            progress(self.n, self.n)
        return self

    def _finish_build(self, done: int, t0: float, strategy, program, cancelled: bool) -> None:
        self.wall_seconds = time.perf_counter() - t0
        self.built = done
        if cancelled:
            self.n = done
            self.series.truncate(done)
        # Leave the timeline at the end, where the full replay left the heap.
        strategy.record = True
        self.strategy, self.program, self.position = strategy, program, done
        self.last_record = strategy.rec if done else None

    def _stop_at_fault(self, t: int, t0: float, exc: UserStrategyError) -> None:
        """Operation t broke the user strategy: keep the t steps before it.  The
        strategy's state after the fault is not trusted; seeks restore the
        checkpoints, all taken before it."""
        if exc.step is None:
            exc.step = t + 1
        self.fault = exc
        self._finish_build(t, t0, self._factory(), Program(), cancelled=True)
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

    # --------------------------------------------------------------- seek
    def seek(self, t: int) -> Strategy:
        """Show the heap after the first t operations (0 <= t <= n)."""
        if not 0 <= t <= self.n:
            raise IndexError(f"step {t} is outside 0..{self.n}")
        if t == self.position:
            return self.strategy
        if not (self.position < t and t - self.position <= self.every):
            # The checkpoint before t-1, so that at least the shown step is replayed.
            k = min((t - 1) // self.every, len(self.checkpoints) - 1) if t else -1
            if k < 0:
                self.strategy, self.program, self.position = self._factory(), Program(), 0
            else:
                self.strategy, self.program = pickle.loads(self.checkpoints[k])
                self.position = k * self.every
            self.last_record = None
        strategy, program = self.strategy, self.program
        kinds, ids, sizes = self._kinds, self._ids, self._sizes
        strategy.record = False
        for i in range(self.position, t):
            if i == t - 1:
                strategy.record = True   # only the shown step keeps its events
            self.last_record = apply_op(strategy, program, kinds[i], ids[i], sizes[i])
        strategy.record = True
        self.position = t
        return strategy

    # ------------------------------------------------- before and after
    def before(self) -> HeapState | None:
        """The heap before the shown step (position ``t - 1``), None at
        position 0.  Rebuilt on a copy from the checkpoint at or before
        ``t - 1`` when first asked at a position (at most ``every`` steps
        replayed, plus unpickling the checkpoint), then kept until the
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
        k = min(t // self.every, len(self.checkpoints) - 1)
        if k < 0:
            strategy, program, start = self._factory(), Program(), 0
        else:
            strategy, program = pickle.loads(self.checkpoints[k])
            start = k * self.every
        strategy.record = False
        kinds, ids, sizes = self._kinds, self._ids, self._sizes
        for i in range(start, t):
            apply_op(strategy, program, kinds[i], ids[i], sizes[i])
        strategy.record = True
        return HeapState.of(t, strategy, program)

    def step_forward(self) -> Strategy:
        return self.seek(min(self.position + 1, self.n))

    def step_back(self) -> Strategy:
        return self.seek(max(self.position - 1, 0))

    # ---------------------------------------------------------- explain
    def op(self, t: int) -> tuple[int, int, int]:
        """(kind, id, size) of step t (1-based)."""
        return self._kinds[t - 1], self._ids[t - 1], self._sizes[t - 1]

    def describe(self) -> str:
        """The current step in words, in the strategy's own terms (its
        :attr:`~Strategy.search_unit` and :meth:`~Strategy.describe_record`),
        e.g. 'step 1234: malloc(512) for id 17 -> 0x1a40 after examining 12
        free blocks; split once' or 'step 77: malloc(240) for id 5 -> 0x2c8
        after 3 bitmap probes'."""
        t = self.position
        if t == 0:
            return f"step 0 of {self.n}: empty heap, nothing replayed yet"
        kind, ident, size = self.op(t)
        rec = self.last_record
        head = f"step {t}: "
        if kind == FREE:
            if rec is None or rec.payload is None:
                return head + f"free id {ident}: nothing to free (its malloc had failed)"
            text = head + f"free(0x{rec.payload:x}) for id {ident}"
        elif kind == ALLOC:
            text = head + f"malloc({size}) for id {ident}"
        elif rec is None:
            text = head + f"realloc of id {ident} to {size} bytes"
        else:
            old = "NULL" if rec.old_payload is None else f"0x{rec.old_payload:x}"
            text = head + f"realloc({old}, {size}) for id {ident}"
        if rec is None:
            return text
        if kind != FREE:
            if rec.failed:
                why = "the pool is used up" if self.strategy.arena.fixed else "the heap limit was reached"
                text += f" -> NULL (out of memory: {why})"
            else:
                text += f" -> 0x{rec.payload:x}"
                if kind == REALLOC and rec.payload == rec.old_payload:
                    text += " (in place)"
        clauses = self.strategy.describe_record(rec)
        if not clauses:
            return text
        if kind == FREE:
            sep = ": "
        else:   # "-> 0x40 after examining 3 free blocks; split once", "-> 0x40 (in place); split once"
            sep = " " if clauses[0].startswith(("after ", "from ")) else "; "
        return text + sep + "; ".join(clauses)

    def summary(self) -> dict:
        row = summarize(self.series)
        row["wall_s"] = self.wall_seconds
        return row
