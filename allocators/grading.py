"""``heapscope grade``: a user strategy checked and scored on traces, in the
manner of the CS:APP malloc lab driver (Bryant & O'Hallaron, *Computer
Systems: A Programmer's Perspective*, 9.9; its ``mdriver``).  Nothing of the
lab's code or traces is used: what follows is its published rules.

**Correctness**, at every operation of every trace: each payload a malloc or
realloc returns is aligned, lies inside the heap and overlaps no live
payload, and realloc keeps the first min(old, new) bytes (the rules of
mdriver; :class:`~heapscope.allocators.user.UserStrategy` checks them, with a tag per
block standing for its bytes).  More than mdriver: the strategy's books and
results agree, no exception escapes it, its heap walk covers the heap with no
gap or overlap and agrees with the books, its own ``_check_structure`` holds
and its ``structure()`` names every free block once.

A NULL (None) result is an error, as mdriver's "mm_malloc failed", unless
the heap was refused growth during that request (``arena.refusals`` rose:
the heap limit, or a full fixed pool), the heap is a fixed pool, or the
request is for 0 bytes (C allows NULL there; it costs nothing below).  The heap
grows only through ``self._take_core``: a break (or limit, base, pool) that
moves any other way is an error.  Every trace is replayed several times (the
check pass, then the timed runs); a strategy whose books differ between two
replays is an error, "not deterministic", naming the first step whose
address differs (the books are compared by a digest after each timed run;
only when they differ does one more replay look for that step).

The heap walk costs time in proportion to the heap, so the walk checks are
spread out by what the strategy itself spends: the next walk comes once
:data:`WALK_SHARE` (a half) of the time spent in the strategy's own
malloc/free/realloc has caught up with the time spent on walk checks (and
snapshots) so far, one more walk like the last included (so that one walk
of a big heap does not overshoot), and :data:`CHECK_SHARE` of it with
everything the check pass spent beside the strategy (the walks and the result checks of every
operation, which on a fast allocator cost half its own time: walks then
come less often, but never less than :data:`LEAST_WALK_SHARE` of its time).
The checks therefore cost at most as much again as the allocator's own work,
on every trace (``benchmarks/bench_grade.py``): often on a slow allocator or
a small heap, rarely on a fast one with a big heap.
When one fails, the replay goes back to the last state that passed (a
pickled snapshot) and checks after every operation from there, so the error
reported is the first operation after which the heap was wrong (one
corrected again before the next check is missed: ``check_every=1`` checks
every operation, and ``check_every=N`` every N, whatever they cost).

**Score**: per trace, utilisation = U / (H + R), where U is the trace's own
peak live payload with every request counted as if it succeeded (computed
from the trace alone: ids, sizes, reallocs, frees), H the final heap size
(the break minus the base, or the touched part of a fixed pool) and R the
sum of the sizes of the requests that failed (a malloc's size, a realloc's
new size, each rounded up to the alignment and at least one alignment unit:
:func:`failed_charge`), as if the heap had grown by each and never reused
it, as a bump allocator would have.  Failing can therefore only lower utilisation, which
stays <= 1, and a trace with H + R = 0 has utilisation 0, never 1.
Throughput = operations / seconds; then, as mdriver, a performance index of
100 x (0.6 x mean utilisation + 0.4 x min(T / T_ref, 1)), zero when any
trace has an error.
T is the total operations over the total seconds of all the traces, timed
with the result checks off (the trace has passed them already), the best of a
few runs; T_ref is the same figure for the built-in TLSF (:data:`REFERENCE`)
on the same traces in the same run, on the same machine, replayed through its
readable methods as a user strategy is: not through the fused bulk path
(``Strategy.bulk_ops``) bulk replay gives it elsewhere, which would double
T_ref.  A *baseline* (``grade --baseline next-fit``) is a built-in strategy
scored the same way beside the student's, for comparison only.
"""

from __future__ import annotations

import hashlib
import pickle
from dataclasses import dataclass, field
from time import perf_counter
from typing import Callable

from heapscope.traces.trace import ALLOC, FREE, block_words
from . import structure as structure_protocol
from . import checked_calls, replay
from .events import OpRecord
from .op_dispatch import Calls, public_calls
from .phrases import count
from .replay import KIND_NAMES, Program, apply_op, replay_ops
from .registry import make_strategy
from .user import UserStrategy, UserStrategyError

#: the built-in strategy whose throughput is the reference
REFERENCE = "tlsf"
#: a timed replay is repeated (best of up to this many) while it is short
TIMED_RUNS = 3
#: ... and stops repeating once the runs took this long (s)
TIMED_ENOUGH = 0.5
#: the walk checks may take this share of the time spent in the strategy's
#: own methods.  Not 1: interleaved walks slow the strategy itself down (its
#: data leaves the caches), by up to 1.6x on the implicit free list of
#: benchmarks/bench_grade.py, so its time measured between walks overstates
#: its bare work; half of it keeps the walks under the bare replay's time.
WALK_SHARE = 0.5
#: everything the check pass spends beside the strategy's own methods (walks,
#: result checks, the replay's own loop) may take this share of their time:
#: under 1 for the same reason, the strategy measured inside the pass being
#: a little slower than bare (docs/benchmarks.md, segfit's table)
CHECK_SHARE = 0.6
#: ... except that the walks may always take this share, however costly the
#: result checks are (an allocator so fast that they alone take CHECK_SHARE
#: of its time is still walked now and then, not only at the end)
LEAST_WALK_SHARE = 0.2
#: the check pass tells ``progress`` how far it is about this many times a trace
PROGRESS_STEPS = 50

#: the utilisation rule in one line, for the reports
UTILISATION_RULE = ("the trace's peak live payload (every request counted as if it succeeded) / "
                    "(final heap + the bytes of every request that failed, aligned); 0 when both are 0")

WEIGHT_UTIL = 0.6
WEIGHT_THROUGHPUT = 0.4


def utilisation(peak_live: int, heap: int, failed_bytes: int) -> float:
    """U / (H + R) (see the module docstring): 0 when H + R is 0."""
    room = heap + failed_bytes
    return peak_live / room if room > 0 else 0.0


def failed_charge(size: int, align: int) -> int:
    """What a failed request adds to R: the least the heap would have grown
    by for it, its size rounded up to the alignment and at least one
    alignment unit (two payloads never share an aligned address), as a bump
    allocator would have grown it."""
    return max(size + (-size) % align, align)


def trace_peak_live(trace) -> int:
    """U: the trace's own peak live payload, every request counted as if it
    succeeded (the trace's statistics: a realloc replaces its id's size, a
    free drops it); nothing of any strategy enters it."""
    return trace.stats()["max_live_bytes"] if len(trace) else 0


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
    max_live: int = 0                 # U: the trace's peak live payload
    heap: int = 0                     # H: the final heap
    failed_bytes: int = 0             # R: bytes of the requests that failed
    failed: int = 0                   # how many requests failed
    seconds: float | None = None      # the strategy, timed
    reference_seconds: float | None = None
    check_seconds: float = 0.0        # the walk checks and snapshots of the check pass
    own_seconds: float = 0.0          # the strategy's own methods during the check pass
    baseline: "BaselineRun | None" = None

    @property
    def valid(self) -> bool:
        return self.error is None

    @property
    def utilisation(self) -> float | None:
        if not self.valid:
            return None
        return utilisation(self.max_live, self.heap, self.failed_bytes)

    @property
    def throughput(self) -> float | None:
        return self.ops / self.seconds if self.seconds else None

    @property
    def reference_throughput(self) -> float | None:
        return self.ops / self.reference_seconds if self.reference_seconds else None

    def summary(self) -> str:
        """One line: ``valid, util 0.812, 45.2 Kops/s`` (or the error's step)."""
        if not self.valid:
            step = self.error.step
            return "INVALID" + (f" at step {step}" if step else "") + f": {self.error.message}"
        text = f"valid, util {self.utilisation:.3f}"
        if self.throughput:
            text += f", {self.throughput / 1000:.1f} Kops/s"
        if self.failed:
            text += f", {count(self.failed, 'request')} refused"
        return text


@dataclass
class BaselineRun:
    """A built-in strategy replayed on a trace beside the student's."""
    heap: int = 0
    failed_bytes: int = 0
    seconds: float | None = None
    max_live: int = 0
    error: str | None = None          # the strategy refused the trace (its own exception)

    @property
    def utilisation(self) -> float | None:
        if self.error:
            return None
        return utilisation(self.max_live, self.heap, self.failed_bytes)

    def throughput(self, ops: int) -> float | None:
        return ops / self.seconds if self.seconds else None


@dataclass
class Grade:
    """Every trace graded, and the index."""
    strategy: str
    params: dict
    traces: list[TraceGrade] = field(default_factory=list)
    reference: str = REFERENCE
    reference_note: str = ""          # why the reference ran with other parameters, if it did
    baseline: str | None = None       # the built-in strategy graded beside, if any

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
    def baseline_mean_utilisation(self) -> float | None:
        utils = [t.baseline.utilisation for t in self.traces
                 if t.baseline is not None and t.baseline.utilisation is not None]
        return sum(utils) / len(utils) if utils else None

    @property
    def baseline_throughput(self) -> float | None:
        timed = [t for t in self.traces if t.baseline is not None and t.baseline.seconds]
        if not timed:
            return None
        return sum(t.ops for t in timed) / sum(t.baseline.seconds for t in timed)

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
    walk; then that nothing of them moved the heap.  Returns the number of
    blocks."""
    with strategy.walked_once():          # structure() reads the walk check() made
        blocks = strategy.check()
        s = strategy.structure() if type(strategy).structure is not UserStrategy.structure else None
    if s is not None:
        try:
            structure_protocol.check_against_heap(s, blocks)
        except structure_protocol.StructureMismatch as exc:
            raise strategy._mistake("structure", f"your structure() disagrees with your walk: {exc}")
        except Exception as exc:
            raise strategy._mistake("structure", "your structure() is not in the shape of "
                                    f"docs/structure.md ({type(exc).__name__}: {exc})")
    strategy._check_door("_blocks")
    return len(blocks)


def _snapshot(strategy: UserStrategy, program: Program) -> bytes:
    try:
        return pickle.dumps((strategy, program), protocol=pickle.HIGHEST_PROTOCOL)
    except Exception as exc:
        raise strategy.pickling_error(exc) from exc


@dataclass
class CheckedTrace:
    """What the check pass of one trace found."""
    error: UserStrategyError | None = None
    heap: int = 0                       # H after the last operation
    failed_bytes: int = 0               # R
    failed: int = 0
    results: list = field(default_factory=list)   # what each operation returned (None for a free)
    digest: bytes = b""                 # of the final books (books_digest)
    check_seconds: float = 0.0          # the walk checks and snapshots
    own_seconds: float = 0.0            # the strategy's own methods
    checks: int = 0                     # walk checks run


def check_trace(factory: Callable[[], UserStrategy], trace, check_every: int | None = None,
                progress: Callable[[int], None] | None = None) -> CheckedTrace:
    """Replay ``trace`` with every check; what it found (:class:`CheckedTrace`).
    ``check_every`` fixes the interval of the walk checks (1: after every
    operation); None spreads them so that they cost at most the time the
    strategy spent in its own methods (see the module docstring).  The
    strategy is pickled at the start, as the window's checkpoints will, and
    after each walk a later rewind may start from; at the end its own
    attributes are, by :func:`books_digest`.
    ``progress(done)`` is told the operations done, now and then.

    The operations run in runs between two walk checks, through
    :func:`~heapscope.allocators.op_dispatch.run_ops` with the guard's checks
    fused into one call per operation (allocators/checked_calls.py); a run
    of the adaptive schedule is as long as the time per operation so far
    says it takes for the next walk to be due (:func:`_walk_due`)."""
    kinds, ids, sizes = trace.kind.tolist(), trace.ids.tolist(), trace.sizes.tolist()
    n = len(kinds)
    out = CheckedTrace()
    results = out.results
    report_every = max(1, n // PROGRESS_STEPS)
    strategy = None
    walked = -1                    # the operations done when a walk check started, while one runs
    try:
        strategy = factory()
        strategy.own_seconds = 0.0     # count the time in the student's own methods
        # No events: the window records them, grade checks results and walks;
        # making an event per block a search visits would cost the check pass
        # several times the strategy's own work (the timed runs keep none either).
        strategy.record = False
        program = Program()
        c0 = begin = perf_counter()
        good, good_t = _snapshot(strategy, program), 0   # the last state that passed, after good_t ops
        out.check_seconds += perf_counter() - c0
        calls, rec = _pass_calls(strategy, out)
        done = 0
        last = 0.0                 # what the last walk check and its snapshot took: the next one's cost
        next_check = 1 if check_every is not None else 0
        next_report = 0
        while done < n:
            if progress is not None and done >= next_report:
                progress(done)
                next_report = done - done % report_every + report_every
            # (a run is at most report_every long: an estimate made early, on
            # operations cheaper than the later ones, is made again soon)
            stop = min(n, _next_walk(strategy.own_seconds, out.check_seconds + last,
                                     perf_counter() - begin + last, done, next_check),
                       done + report_every, next_report or n)
            replay.run_ops(calls, program, rec, kinds[done:stop], ids[done:stop], sizes[done:stop])
            done = stop
            if done < n:
                if check_every is not None:
                    if done < next_check:
                        continue
                elif not _walk_due(strategy.own_seconds, out.check_seconds + last,
                                   perf_counter() - begin + last):
                    continue       # no room yet for one more walk like the last: wait
            walked = done
            c0 = perf_counter()
            try:
                full_check(strategy)
                out.checks += 1
            except UserStrategyError:
                if good_t < done - 1:   # more than this one operation since the last good state
                    _find_first_walk_error(good, good_t, done - 1, kinds, ids, sizes)
                raise
            if check_every is not None:
                next_check = done + check_every
            if check_every != 1 and done < n:   # (at the end books_digest pickles the user's state)
                good = _snapshot(strategy, program)
            good_t = done
            last = perf_counter() - c0
            out.check_seconds += last
            walked = -1
        out.heap = strategy.heap_held
        out.digest = books_digest(strategy, program)
    except UserStrategyError as exc:
        if exc.step is None and (walked > 0 or results):
            exc.step = walked if walked > 0 else len(results) + 1
        out.error = exc
    if strategy is not None:
        out.own_seconds = strategy.own_seconds
    return out


#: the operations of the first run of the adaptive schedule, before the
#: strategy's time per operation is known
FIRST_RUN = 16


def _walk_due(own: float, walks: float, elapsed: float) -> bool:
    """Whether the next walk check is due, ``own`` seconds having been spent
    in the strategy's methods, ``walks`` in the walk checks and snapshots, and
    ``elapsed`` in the whole pass so far (see the module docstring)."""
    if WALK_SHARE * own < walks:
        return False
    return walks <= LEAST_WALK_SHARE * own or elapsed - own <= CHECK_SHARE * own


def _next_walk(own: float, walks: float, elapsed: float, done: int, next_check: int) -> int:
    """Where the run starting after ``done`` operations ends: at the next
    fixed check (``next_check`` > 0), or, adaptive, after as many operations
    as the time per operation so far (the strategy's, and the rest of the
    pass's) says it takes for the next walk to be due (:func:`_walk_due`;
    at least one)."""
    if next_check:
        return next_check
    if not done or own <= 0:
        return done + FIRST_RUN
    own_rate = own / done
    rest_rate = max(0.0, elapsed - own - walks) / done     # the result checks, per operation
    # the walk share is reached after `share` more operations...
    share = (walks / WALK_SHARE - own) / own_rate
    # ... and the whole budget (or the least walk share) after `budget`
    least = (walks / LEAST_WALK_SHARE - own) / own_rate
    spare = CHECK_SHARE * own_rate - rest_rate
    budget = min(least, (elapsed - own - CHECK_SHARE * own) / spare) if spare > 0 else least
    return done + max(1, int(max(share, budget)) + 1)


def _pass_calls(strategy: UserStrategy, out: CheckedTrace):
    """The calls of the check pass and the record run_ops keeps the kind in:
    the guard's checks fused (checked_calls) where they may be, else the
    strategy's public calls; each notes its result in ``out.results`` and
    counts a request that failed (:func:`failed_charge`)."""
    align = strategy.align

    def refused(size: int) -> None:
        out.failed += 1
        out.failed_bytes += failed_charge(size, align)

    if checked_calls.fused(strategy):
        rec = replay.bulk_record(strategy)
        return checked_calls.checked_calls(strategy, out.results, refused), rec
    malloc, free, realloc, realloc_null, free_null = public_calls(strategy)
    results = out.results

    def noting(call, returns: bool):
        def noted(*args):
            call(*args)
            payload = strategy.rec.payload
            results.append(payload)
            if returns and payload is None and args[-1]:
                refused(args[-1])
            return payload
        return noted
    return Calls(noting(malloc, True), noting(free, False), noting(realloc, True),
                 noting(realloc_null, True), noting(free_null, False)), OpRecord()


def _find_first_walk_error(good: bytes, good_t: int, bad_t: int, kinds, ids, sizes) -> None:
    """Replay from the snapshot after ``good_t`` operations, checking after
    every one, up to operation ``bad_t``; raises the first error."""
    strategy, program = pickle.loads(good)
    for t in range(good_t, bad_t + 1):
        apply_op(strategy, program, kinds[t], ids[t], sizes[t])
        full_check(strategy)


# --------------------------------------------------------------- determinism
_BASE_ATTRS: frozenset[str] | None = None


def _own_state(strategy: UserStrategy) -> dict:
    """The attributes the user's code set (the base's own bookkeeping differs
    between a guarded and an unguarded replay, and is left out)."""
    global _BASE_ATTRS
    if _BASE_ATTRS is None:
        _BASE_ATTRS = frozenset(vars(UserStrategy()))
    return {k: v for k, v in vars(strategy).items() if k not in _BASE_ATTRS}


def books_digest(strategy: UserStrategy, program: Program) -> bytes:
    """A digest of where a replay ended: the program's live ids and their
    addresses, the failed ids, the break, the live blocks as booked and the
    strategy's own attributes.  Two replays of one trace by a deterministic
    strategy end with the same digest."""
    arena = strategy.arena
    # the live blocks as plain tuples: a LiveBlock pickles through its class, several times slower
    booked = [(payload, *lb) for payload, lb in sorted(strategy.live.items())]
    books = (sorted(program.live.items()), sorted(program.failed_ids), arena.base, arena.brk,
             booked, _own_state(strategy))
    try:
        blob = pickle.dumps(books, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception as exc:
        raise strategy.pickling_error(exc) from exc
    return hashlib.blake2b(blob, digest_size=16).digest()


def _first_difference(factory: Callable[[], UserStrategy], trace, results: list
                      ) -> UserStrategyError | None:
    """Replay ``trace`` once more (checks off) and name the first step whose
    result differs from the check pass's ``results``; None when every one
    agrees (the books differed in the strategy's own attributes only, e.g. a
    cache its walk fills: the addresses are what must not change)."""
    kinds, ids, sizes = trace.kind.tolist(), trace.ids.tolist(), trace.sizes.tolist()
    strategy = factory()
    strategy.guarded = False
    program = Program()
    cls = type(strategy).__name__
    for t in range(len(kinds)):
        payload = apply_op(strategy, program, kinds[t], ids[t], sizes[t]).payload
        if payload != results[t]:
            method = "_free" if kinds[t] == FREE else "_malloc" if kinds[t] == ALLOC else "_realloc"
            return UserStrategyError(
                f"not deterministic: step {t + 1} returned {_address(results[t])} the first time "
                f"and {_address(payload)} the second: the same trace must give the same heap "
                "every time (seed any random numbers you use, and do not depend on the time, "
                "id() or the order of a set of objects)", method=method, cls_name=cls, step=t + 1)
    return None


def _address(value) -> str:
    return "None" if value is None else f"{value:#x}" if isinstance(value, int) else repr(value)


# ------------------------------------------------------------------- timing
def _timed_runs(make: Callable, trace, fused: bool = True,
                after: Callable | None = None) -> float:
    """Seconds of the best of a few bare replays (no events, no measures);
    ``fused=False`` through the readable methods of a strategy with a fused
    bulk path.  ``after(strategy, program)`` is called after each run, untimed."""
    kinds, ids, sizes = trace.kind.tolist(), trace.ids.tolist(), trace.sizes.tolist()
    best = None
    spent = 0.0
    for _ in range(TIMED_RUNS):
        strategy = make()
        program = Program()
        t0 = perf_counter()
        replay_ops(strategy, program, kinds, ids, sizes, fused)
        seconds = perf_counter() - t0
        if after is not None:
            after(strategy, program)
        best = seconds if best is None else min(best, seconds)
        spent += seconds
        if spent >= TIMED_ENOUGH:
            break
    return best


def time_replay(make: Callable, trace, fused: bool = True) -> float:
    """Seconds of the best of a few bare replays (see :func:`_timed_runs`)."""
    return _timed_runs(make, trace, fused)


def _unguarded(factory: Callable[[], UserStrategy]) -> Callable[[], UserStrategy]:
    def make():
        s = factory()
        s.guarded = False
        return s
    return make


def _time_and_compare(factory, trace, digest: bytes) -> tuple[float, bool]:
    """The timed runs of the user's strategy, each compared with the check
    pass by :func:`books_digest` (untimed); (the best seconds, whether one
    ended with other books)."""
    differs = []

    def compare(strategy, program):
        if not differs and books_digest(strategy, program) != digest:
            differs.append(True)
    seconds = _timed_runs(_unguarded(factory), trace, after=compare)
    return seconds, bool(differs)


def run_baseline(name: str, params: dict, trace, timing: bool = True) -> BaselineRun:
    """A built-in strategy on ``trace``, scored by the same rule: one plain
    replay for H and R, then timed through its readable methods, as the
    reference is."""
    run = BaselineRun(max_live=trace_peak_live(trace))
    kinds, ids, sizes = trace.kind.tolist(), trace.ids.tolist(), trace.sizes.tolist()
    try:
        strategy = make_strategy(name, **params)
        strategy.record = False
        program = Program()
        for kind, ident, size in zip(kinds, ids, sizes):
            if apply_op(strategy, program, kind, ident, size).payload is None and kind != FREE \
                    and size:
                run.failed_bytes += failed_charge(size, strategy.align)
        run.heap = strategy.footprint
        if timing:
            run.seconds = time_replay(lambda: make_strategy(name, **params), trace, fused=False)
    except Exception as exc:     # a built-in strategy that cannot take this trace
        run.error = f"{type(exc).__name__}: {exc}"
    return run


def describe_op(trace, step: int) -> str:
    """Operation ``step`` (1-based) as the trace says it: ``malloc(24) for
    id 17`` (``for a (id 0)`` when the trace names its blocks)."""
    kind = int(trace.kind[step - 1])
    ident = int(trace.ids[step - 1])
    size = int(trace.sizes[step - 1])
    who = block_words(ident, getattr(trace, "names", None))
    if kind == ALLOC:
        return f"malloc({size}) for {who}"
    if kind == FREE:
        return f"free of {who}"
    return f"realloc of {who} to {size} bytes"


def grade(cls: type[UserStrategy], traces: list[tuple[str, object]], params: dict | None = None,
          check_every: int | None = None, reference_params: dict | None = None,
          progress: Callable[[str, str], None] | None = None, timing: bool = True,
          baseline: str | None = None) -> Grade:
    """Grade ``cls`` on ``traces`` (``(spec, Trace)`` pairs) built with
    ``params``.  The reference (TLSF) runs with ``reference_params`` (default:
    the same), and so does ``baseline``, a built-in strategy scored beside.
    ``progress(trace_name, what)`` is told what runs: ``"checking 40%"``,
    ``"timing"``, and when a trace is done ``"done: "`` and its summary line
    (:meth:`TraceGrade.summary`)."""
    params = dict(params or {})
    result = Grade(cls.name, params, baseline=baseline)

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
        tg.max_live = trace_peak_live(trace)
        tell = None
        if progress:
            progress(tg.name, "checking")
            n = max(1, len(trace))
            def tell(done, name=tg.name, n=n):
                progress(name, f"checking {100 * done // n}%")
        checked = check_trace(factory, trace, check_every, tell)
        tg.heap, tg.failed_bytes, tg.failed = checked.heap, checked.failed_bytes, checked.failed
        tg.check_seconds, tg.own_seconds = checked.check_seconds, checked.own_seconds
        error = checked.error
        if error is None and timing:
            if progress:
                progress(tg.name, "timing")
            try:
                tg.seconds, differs = _time_and_compare(factory, trace, checked.digest)
                if differs:
                    error = _first_difference(factory, trace, checked.results)
            except UserStrategyError as exc:
                error = exc
            if error is None:
                tg.reference_seconds = time_replay(
                    lambda: make_strategy(REFERENCE, **ref_params), trace, fused=False)
        if error is not None:
            tg.error = error
            tg.seconds = None
            step = error.step
            if step is not None and 1 <= step <= len(trace):
                tg.operation = describe_op(trace, step)
                lines = getattr(trace, "line_numbers", None)
                if lines is not None:
                    tg.line = int(lines[step - 1])
        if baseline:
            if progress:
                progress(tg.name, f"baseline {baseline}")
            tg.baseline = run_baseline(baseline, ref_params, trace, timing)
        if progress:
            progress(tg.name, "done: " + tg.summary())
        result.traces.append(tg)
    return result


__all__ = ["Grade", "TraceGrade", "BaselineRun", "CheckedTrace", "REFERENCE", "KIND_NAMES",
           "books_digest", "check_trace", "full_check", "grade", "run_baseline",
           "failed_charge", "trace_peak_live", "utilisation", "UTILISATION_RULE"]
