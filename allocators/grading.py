"""``heapscope grade``: a user strategy checked and scored on traces, in the
manner of the CS:APP malloc lab driver (Bryant & O'Hallaron, *Computer
Systems: A Programmer's Perspective*, 9.9; its ``mdriver``).  Nothing of the
lab's code or traces is used: what follows is its published rules.

**Correctness**, at every operation of every trace: each payload a malloc or
realloc returns is aligned, lies inside the heap and overlaps no live
payload, and realloc keeps the first min(old, new) bytes (the rules of
mdriver; :class:`~allocators.user.UserStrategy` checks them, with a tag per
block standing for its bytes).  More than mdriver: the strategy's books and
results agree, no exception escapes it, its heap walk covers the heap with no
gap or overlap and agrees with the books, its own ``_check_structure`` holds
and its ``structure()`` names every free block once.

The heap walk costs time in proportion to the heap, so the walk checks run
after every operation while the heap holds few blocks and every k
operations on big heaps, k = blocks / :data:`WALK_BUDGET`, which keeps them
to about WALK_BUDGET blocks visited per operation.  When one fails, the
replay goes back to the last state that passed (a pickled snapshot) and
checks after every operation from there, so the error reported is the first
operation after which the heap was wrong (one corrected again before the next
check is missed: ``check_every=1`` checks every operation).

**Score**: per trace, utilisation = peak live payload / final heap size (H:
the break, or the touched part of a fixed pool) and throughput = operations /
seconds; then, as mdriver, a performance index of 100 x (0.6 x mean
utilisation + 0.4 x min(T / T_ref, 1)), zero when any trace has an error.
T is the total operations over the total seconds of all the traces, timed
with the result checks off (the trace has passed them already), the best of a
few runs; T_ref is the same figure for the built-in TLSF (:data:`REFERENCE`)
on the same traces in the same run, on the same machine, replayed through its
readable methods as a user strategy is: not through the fused bulk path
(``Strategy.bulk_ops``) bulk replay gives it elsewhere, which would double
T_ref.
"""

from __future__ import annotations

import pickle
from dataclasses import dataclass, field
from typing import Callable

from ..traces.trace import ALLOC, FREE
from . import structure as structure_protocol
from .replay import KIND_NAMES, Program, apply_op, replay_bare
from .registry import make_strategy
from .user import UserStrategy, UserStrategyError

#: the built-in strategy whose throughput is the reference
REFERENCE = "tlsf"
#: blocks the walk checks may visit per operation, on average
WALK_BUDGET = 16
#: a timed replay is repeated (best of up to this many) while it is short
TIMED_RUNS = 3
#: ... and stops repeating once the runs took this long (s)
TIMED_ENOUGH = 0.5

WEIGHT_UTIL = 0.6
WEIGHT_THROUGHPUT = 0.4


@dataclass
class TraceGrade:
    """One trace graded."""
    spec: str                         # as the user named it: a path, a bundled name, a workload
    name: str
    ops: int
    error: UserStrategyError | None = None
    line: int | None = None           # the error's line in the trace file
    path: str | None = None           # the trace file, if it is one
    operation: str = ""               # the failing operation as the trace says it
    max_live: int = 0
    heap: int = 0
    seconds: float | None = None      # the strategy, timed
    reference_seconds: float | None = None

    @property
    def valid(self) -> bool:
        return self.error is None

    @property
    def utilisation(self) -> float | None:
        if not self.valid:
            return None
        if self.heap == 0:
            return 1.0 if self.max_live == 0 else 0.0
        return self.max_live / self.heap

    @property
    def throughput(self) -> float | None:
        return self.ops / self.seconds if self.seconds else None

    @property
    def reference_throughput(self) -> float | None:
        return self.ops / self.reference_seconds if self.reference_seconds else None


@dataclass
class Grade:
    """Every trace graded, and the index."""
    strategy: str
    params: dict
    traces: list[TraceGrade] = field(default_factory=list)
    reference: str = REFERENCE
    reference_note: str = ""          # why the reference ran with other parameters, if it did

    @property
    def valid(self) -> bool:
        return all(t.valid for t in self.traces)

    @property
    def mean_utilisation(self) -> float | None:
        utils = [t.utilisation for t in self.traces if t.valid]
        return sum(utils) / len(utils) if utils else None

    def _total(self, attr: str) -> float | None:
        timed = [t for t in self.traces if t.valid and getattr(t, attr)]
        if not timed:
            return None
        return sum(t.ops for t in timed) / sum(getattr(t, attr) for t in timed)

    @property
    def throughput(self) -> float | None:
        """T: total operations / total seconds over the traces."""
        return self._total("seconds")

    @property
    def reference_throughput(self) -> float | None:
        return self._total("reference_seconds")

    @property
    def throughput_ratio(self) -> float | None:
        t, ref = self.throughput, self.reference_throughput
        return t / ref if t and ref else None

    @property
    def perf_index(self) -> float:
        """100 x (0.6 x mean utilisation + 0.4 x min(T / T_ref, 1)); 0 with any error."""
        if not self.valid or not self.traces:
            return 0.0
        ratio = self.throughput_ratio or 0.0
        return 100 * (WEIGHT_UTIL * (self.mean_utilisation or 0.0)
                      + WEIGHT_THROUGHPUT * min(ratio, 1.0))


# ---------------------------------------------------------------- correctness
def full_check(strategy: UserStrategy) -> int:
    """The walk checks: the walk against the heap and the books, the user's
    ``_check_structure``, and a ``structure()`` the user wrote against the
    walk.  Returns the number of blocks (the cost of the next check)."""
    blocks = strategy.check()
    if type(strategy).structure is not UserStrategy.structure:
        s = strategy.structure()
        try:
            structure_protocol.check_against_heap(s, blocks)
        except structure_protocol.StructureMismatch as exc:
            raise strategy._mistake("structure", f"your structure() disagrees with your walk: {exc}")
        except Exception as exc:
            raise strategy._mistake("structure", "your structure() is not in the shape of "
                                    f"docs/structure.md ({type(exc).__name__}: {exc})")
    return len(blocks)


def _snapshot(strategy: UserStrategy, program: Program) -> bytes:
    try:
        return pickle.dumps((strategy, program), protocol=pickle.HIGHEST_PROTOCOL)
    except Exception as exc:
        raise strategy.pickling_error(exc) from exc


def check_trace(factory: Callable[[], UserStrategy], trace, check_every: int | None = None
                ) -> tuple[UserStrategyError | None, int, int]:
    """Replay ``trace`` with every check; (the first error or None, peak live
    payload bytes, final heap size H).  ``check_every`` fixes the interval of
    the walk checks (1: after every operation); None adapts it to the heap.
    The strategy is pickled at the start and the end, as the window's
    checkpoints will, and wherever a later rewind may need it."""
    kinds, ids, sizes = trace.kind.tolist(), trace.ids.tolist(), trace.sizes.tolist()
    n = len(kinds)
    max_live = 0
    t = -1
    try:
        strategy = factory()
        program = Program()
        good, good_t = _snapshot(strategy, program), 0   # the last state that passed, after good_t ops
        next_check = 1
        for t in range(n):
            apply_op(strategy, program, kinds[t], ids[t], sizes[t])
            if program.live_bytes > max_live:
                max_live = program.live_bytes
            if t + 1 < next_check and t + 1 < n:
                continue
            try:
                nblocks = full_check(strategy)
            except UserStrategyError:
                if good_t < t:     # more than this one operation since the last good state
                    _find_first_walk_error(good, good_t, t, kinds, ids, sizes)
                raise
            interval = check_every or max(1, nblocks // WALK_BUDGET)
            next_check = t + 1 + interval
            good_t = t + 1
            if interval > 1 or t + 1 == n:
                good = _snapshot(strategy, program)
    except UserStrategyError as exc:
        if exc.step is None and t >= 0:
            exc.step = t + 1
        return exc, max_live, 0
    return None, max_live, strategy.footprint


def _find_first_walk_error(good: bytes, good_t: int, bad_t: int, kinds, ids, sizes) -> None:
    """Replay from the snapshot after ``good_t`` operations, checking after
    every one, up to operation ``bad_t``; raises the first error."""
    strategy, program = pickle.loads(good)
    for t in range(good_t, bad_t + 1):
        apply_op(strategy, program, kinds[t], ids[t], sizes[t])
        full_check(strategy)


def time_replay(make: Callable, trace, fused: bool = True) -> float:
    """Seconds of the best of a few bare replays (no events, no measures);
    ``fused=False`` through the readable methods of a strategy with a fused
    bulk path."""
    best = None
    spent = 0.0
    for _ in range(TIMED_RUNS):
        strategy = make()
        seconds = replay_bare(trace, strategy, fused)
        best = seconds if best is None else min(best, seconds)
        spent += seconds
        if spent >= TIMED_ENOUGH:
            break
    return best


def _unguarded(factory: Callable[[], UserStrategy]) -> Callable[[], UserStrategy]:
    def make():
        s = factory()
        s.guarded = False
        return s
    return make


def describe_op(trace, step: int) -> str:
    """Operation ``step`` (1-based) as the trace says it: ``malloc(24) for id 17``."""
    kind = int(trace.kind[step - 1])
    ident = int(trace.ids[step - 1])
    size = int(trace.sizes[step - 1])
    if kind == ALLOC:
        return f"malloc({size}) for id {ident}"
    if kind == FREE:
        return f"free of id {ident}"
    return f"realloc of id {ident} to {size} bytes"


def grade(cls: type[UserStrategy], traces: list[tuple[str, object]], params: dict | None = None,
          check_every: int | None = None, reference_params: dict | None = None,
          progress: Callable[[str, str], None] | None = None, timing: bool = True) -> Grade:
    """Grade ``cls`` on ``traces`` (``(spec, Trace)`` pairs) built with
    ``params``.  The reference (TLSF) runs with ``reference_params`` (default:
    the same).  ``progress(trace_name, what)`` is told what runs."""
    params = dict(params or {})
    result = Grade(cls.name, params)

    def factory():
        return cls(**params)

    ref_params = dict(params if reference_params is None else reference_params)
    try:
        make_strategy(REFERENCE, **ref_params)
    except ValueError as exc:
        result.reference_note = f"{REFERENCE} refuses these parameters ({exc}); it ran with its defaults"
        ref_params = {}
    for spec, trace in traces:
        tg = TraceGrade(spec, trace.name or spec, len(trace))
        tg.path = getattr(trace, "source", None)
        if progress:
            progress(tg.name, "checking")
        error, tg.max_live, tg.heap = check_trace(factory, trace, check_every)
        if error is not None:
            tg.error = error
            step = error.step
            if step is not None and 1 <= step <= len(trace):
                tg.operation = describe_op(trace, step)
                lines = getattr(trace, "line_numbers", None)
                if lines is not None:
                    tg.line = int(lines[step - 1])
        elif timing:
            if progress:
                progress(tg.name, "timing")
            tg.seconds = time_replay(_unguarded(factory), trace)
            tg.reference_seconds = time_replay(lambda: make_strategy(REFERENCE, **ref_params), trace,
                                               fused=False)
        result.traces.append(tg)
    return result


__all__ = ["Grade", "TraceGrade", "REFERENCE", "KIND_NAMES", "check_trace", "full_check", "grade"]
