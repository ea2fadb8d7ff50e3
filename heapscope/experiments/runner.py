"""Running an experiment's replays: one job per (trace, strategy, parameters),
measured by the core (a :class:`~heapscope.allocators.replay.Timeline` and its summary
from :mod:`heapscope.allocators.metrics`), several at once in worker processes.

A job's row is the timeline's summary (the same numbers ``heapscope compare``
prints) plus what the seeds' tables need and a summary does not keep:

* ``mean_heap``: H averaged over the operations, and ``heap_by_work``: H
  averaged over the run's time counted in work units (Plotnick's ``kdata``,
  from csh's ``time``, is the data size averaged over the CPU time);
* ``work_total``, ``grows`` (times the heap grew) and ``first_failure`` (the 1-based operation whose malloc
  first failed under a heap limit: Machin's "malloc failed after %d
  iterations", Dowdeswell's ENOMEM);
* ``wall_s``: the wall time of a bare replay, allocator alone, as
  ``heapscope compare`` times it;
* with ``resident_page`` set, ``resident`` and ``resident_touched``: the peak
  number of bytes in distinct pages written so far, by the allocator alone
  (headers, free-list links) and by the allocator plus a program that fills
  every block it gets (Machin's memset), in pages of that size
  (:func:`resident_pages`).

The replays are pure Python and hold the interpreter lock, so jobs run in
worker processes, through the project's one parallel machinery
(allocators/parallel.py: a :class:`~heapscope.allocators.parallel.BuildSpec` job per
replay, started as it starts its workers).  A strategy of your own runs
there always, with a time limit (allocators/isolation.py, ``--time-limit``):
a plugin that loops, exits, dies or raises any ``BaseException`` gives its
row an error naming it and the trace (:func:`failure_text`), never a hang
or a traceback; so does one whose second replay (the timed one) ends with
another heap than its timeline (:func:`same_heap_again`).
"""

from __future__ import annotations

import functools
import signal
import threading
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable, Iterable

import numpy as np

from ..allocators import plugins
from ..allocators.isolation import DEFAULT_TIME_LIMIT, needs_worker
from ..allocators.parallel import BuildSpec, Failed, Note, ParallelBuild, cores
from ..allocators.registry import make_strategy
from ..allocators.replay import Program, Timeline, apply_op, replay_bare
from ..allocators.user import UserStrategyError
from ..traces import load_trace, make_workload
from ..traces.trace import ALLOC, FREE


@dataclass(frozen=True)
class Job:
    """One replay.  ``trace`` is a spec :func:`heapscope.traces.load_trace` reads (a
    bundled trace's name, a file) or ``(workload, ((key, value), ...))``;
    ``params`` the strategy's parameters as sorted ``(key, value)`` pairs."""
    key: tuple
    trace: str | tuple
    strategy: str
    params: tuple = ()
    resident_page: int = 0
    label: str = ""

    @staticmethod
    def of(key: tuple, trace, strategy: str, params: dict | None = None, *,
           resident_page: int = 0, label: str = "") -> "Job":
        if isinstance(trace, tuple):
            trace = (trace[0], tuple(sorted(trace[1].items())))
        return Job(key, trace, strategy, tuple(sorted((params or {}).items())), resident_page,
                   label or f"{strategy}")


def workload_ref(name: str, params: dict) -> tuple:
    """A job's trace: workload ``name`` with ``params``."""
    return (name, dict(params))


@lru_cache(maxsize=8)
def load(ref) -> object:
    """The trace a job names (kept: a worker runs several jobs on one trace)."""
    if isinstance(ref, tuple):
        name, items = ref
        return make_workload(name, **dict(items))
    return load_trace(ref)


# ----------------------------------------------------------------- measuring
def measure(job: Job, trace=None) -> dict:
    """Replay one job (on ``trace``, else the one it names, loaded); its row
    (``error`` alone when the strategy refused its parameters or failed)."""
    params = dict(job.params)
    trace = load(job.trace) if trace is None else trace
    try:
        make_strategy(job.strategy, **params)
        # one checkpoint, at step 0: a table never seeks
        timeline = Timeline(trace, job.strategy, params, checkpoint_every=len(trace) + 1).build()
    except (ValueError, UserStrategyError) as exc:
        return {"error": str(exc)}
    if timeline.fault is not None:
        return {"error": str(timeline.fault)}
    series = timeline.series
    row = timeline.summary()
    row["mean_heap"] = float(series.heap.mean()) if series.n else 0.0
    work = series.work.sum()
    row["heap_by_work"] = float((series.heap * series.work).sum() / work) if work else row["mean_heap"]
    row["work_total"] = int(series.work.sum())
    row["grows"] = int(series.grows.sum())     # sbrk calls that grew the heap
    failed = np.flatnonzero(series.failed)
    row["first_failure"] = int(failed[0]) + 1 if failed.size else None
    try:
        # the timed replay, and the resident pages, replay the trace again:
        # a strategy of your own must give the heap the timeline measured
        bare, program = make_strategy(job.strategy, **params), Program()
        row["wall_s"] = replay_bare(trace, bare, program=program)
        if needs_worker(job.strategy):
            same_heap_again(timeline, bare, program)
        if job.resident_page:
            row["resident"], row["resident_touched"] = resident_pages(
                trace, make_strategy(job.strategy, **params), job.resident_page)
    except UserStrategyError as exc:
        return {"error": str(exc)}
    return row


def same_heap_again(timeline: Timeline, strategy, program: Program) -> None:
    """UserStrategyError "not deterministic" when a second replay of the
    timeline's trace (``strategy`` and ``program`` after it) ended with
    another heap: another break or other blocks held by the program."""
    built, again = timeline.program.live, program.live
    brk_built, brk_again = timeline.strategy.arena.brk, strategy.arena.brk
    if built == again and brk_built == brk_again:
        return
    moved = sorted(i for i in built.keys() | again.keys() if built.get(i) != again.get(i))
    what = (f"block {moved[0]} of the trace ends at {_where(built.get(moved[0]))} in one replay "
            f"and at {_where(again.get(moved[0]))} in the next" if moved else
            f"the break ends at {brk_built:#x} in one replay and at {brk_again:#x} in the next")
    raise UserStrategyError(
        f"not deterministic: two replays of the trace ended with different heaps ({what}): the "
        "same trace must give the same heap every time (seed any random numbers you use, and do "
        "not depend on the time, id() or the order of a set of objects)",
        method="_malloc", cls_name=type(strategy).__name__)


def _where(held) -> str:
    return "nowhere (freed)" if held is None else f"{held[0]:#x}"


def _pages(low: int, high: int, page: int) -> range:
    """The pages holding bytes [low, high)."""
    return range(low // page, (high - 1) // page + 1) if high > low else range(0)


def resident_pages(trace, strategy, page: int) -> tuple[int, int]:
    """Peak bytes of resident memory, in whole pages, without and with the
    program touching its blocks (John Machin's variant of seed 001: "making
    it slightly more realistic by using say memset() to touch the allocated
    memory").

    A page becomes resident the first time a byte of it is written, and stays
    so until the heap shrinks below it.  What is written, as we model it: the
    allocator writes a block's header (the bytes between the block's start and
    its payload) when it hands the block out, the header after it when it
    splits, and a freed block's header and two link words; the program, when
    it touches, writes every byte it asked for (a realloc writes its new
    size).  Allocators that keep no header in the block (page directories,
    block tables) write nothing there on malloc, and on free only where the
    original links the freed block through itself (:func:`links_outside`):
    phkmalloc never (a bit in the page's ``pginfo``, a run's ``pgfree`` is a
    chunk of its own), GNU malloc for fragments only (``struct list``; a free
    cluster is described in ``_heapinfo``).  phkmalloc's ``pginfo`` and
    ``pgfree`` records, in the heap, count when made (:func:`_phk_bookkeeping`);
    GNU's ``_heapinfo`` table is not counted (3 words per 4 KiB block).  Regions mapped apart from the heap
    count when written and are not given back.  Returns (peak without
    touching, peak with), in bytes.
    """
    strategy.record = False
    program = Program()
    live = strategy.live
    word = strategy.word
    arena = strategy.arena
    by_allocator: set[int] = set()
    touched: set[int] = set()
    peak_a = peak_t = 0
    brk = arena.brk
    bookkeeping = _phk_bookkeeping(strategy, page) if strategy.name == "phkmalloc" else None
    for kind, ident, size in zip(trace.kind.tolist(), trace.ids.tolist(), trace.sizes.tolist()):
        old = program.live.get(ident)
        if kind != ALLOC and old is not None:          # free, or the block a realloc leaves
            block = live[old[0]]
            end = free_writes(strategy, block, old[0])
            for p in _pages(block.block_addr, end, page):
                by_allocator.add(p)
                touched.add(p)
        rec = apply_op(strategy, program, kind, ident, size)
        if kind != FREE and rec.payload is not None and not rec.failed:
            payload = rec.payload
            block = live[payload]
            written = list(_pages(block.block_addr, payload, page))
            if rec.splits and not links_outside(strategy, block.block_size):
                end = block.block_addr + block.block_size
                written += _pages(end, end + word, page)
            by_allocator.update(written)
            touched.update(written)
            touched.update(_pages(payload, payload + size, page))
        if bookkeeping is not None:
            written = bookkeeping(rec.payload if kind != FREE and not rec.failed else None)
            by_allocator.update(written)
            touched.update(written)
        if arena.brk < brk:                             # sbrk(-n): the pages above are gone
            top = -(-arena.brk // page)
            by_allocator = {p for p in by_allocator if p < top or p * page >= brk}
            touched = {p for p in touched if p < top or p * page >= brk}
        brk = arena.brk
        peak_a = max(peak_a, len(by_allocator))
        peak_t = max(peak_t, len(touched))
    return peak_a * page, peak_t * page


def _phk_bookkeeping(strategy, page: int):
    """phkmalloc keeps its bookkeeping in the heap: a page cut into chunks
    gets its ``pginfo`` written (in the page's first chunks, or in a chunk of
    its own), a free run its ``pgfree`` (a chunk).  Returns a function of the
    payload just handed out (or None) giving the pages those writes touched."""
    seen_pages: set[tuple[int, int]] = set()
    meta_seen: set[int] = set(strategy.meta)

    def written(payload: int | None) -> list[int]:
        out: list[int] = []
        if payload is not None:
            info = strategy.page_dir.get(strategy._index(payload))
            if hasattr(info, "info") and (info.page, info.shift) not in seen_pages:
                seen_pages.add((info.page, info.shift))
                out.append(info.info // page)
        if len(strategy.meta) != len(meta_seen) or not meta_seen.issuperset(strategy.meta):
            out += [a // page for a in strategy.meta if a not in meta_seen]
            meta_seen.clear()
            meta_seen.update(strategy.meta)
        return out
    return written


def links_outside(strategy, block_size: int) -> bool:
    """Whether the original describes a free block of this size outside it
    (writing nothing in it when it frees or splits one): phkmalloc always (a
    bit in the page's ``pginfo``; a free run's ``pgfree`` is a chunk of its
    own), GNU malloc for whole blocks (``_heapinfo``)."""
    if strategy.name == "phkmalloc":
        return True
    return strategy.name == "gnu-malloc" and block_size > (1 << strategy.blocklog) // 2


def free_writes(strategy, block, payload: int) -> int:
    """Where the bytes ``free`` writes in the freed block end (they start at
    its ``block_addr``): its header and two link words, or nothing
    (:func:`links_outside`)."""
    if links_outside(strategy, block.block_size):
        return block.block_addr
    return min(block.block_addr + block.block_size, payload + 2 * strategy.word)


# ------------------------------------------------------------------ running
ProgressFn = Callable[[int, int, Job], None]


def run_jobs(jobs: Iterable[Job], workers: int | None = None,
             progress: ProgressFn | None = None, *,
             time_limit: float | None = DEFAULT_TIME_LIMIT,
             start_method: str | None = None,
             measure_job: Callable[[Job, object], dict] | None = None,
             row_done: Callable[[Job, dict], None] | None = None) -> dict[tuple, dict]:
    """Measure every job; ``{job.key: row}``.  ``workers``: processes at once
    (default: one per core; 1 runs the built-in strategies' jobs here, one
    after the other).  ``progress(done, total, job)`` is called as each job
    ends.  ``measure_job(job, trace)``: what a job's row is (default
    :func:`measure`; a module-level function, which a worker started afresh
    imports by name); ``row_done(job, row)`` is called with each row as it
    ends (``heapscope sweep`` writes it at once).

    A strategy of your own (a plugin) always runs in a worker process,
    silent at most ``time_limit`` seconds (allocators/isolation.py): one that
    loops, exits or dies, or whose second replay gives another heap, has a
    row with only ``error``, naming it and the trace (:func:`failure_text`),
    and its runs not yet started are not started (each would fail alike)."""
    jobs = list(jobs)
    keys = [j.key for j in jobs]
    if len(set(keys)) != len(keys):
        raise ValueError("two jobs share a key")
    workers = min(workers or cores(), len(jobs)) if jobs else 1
    results: dict[tuple, dict] = {}
    measure_job = measure_job or measure

    def finished(job: Job, row: dict) -> None:
        if "error" in row and needs_worker(job.strategy):
            row = {"error": failure_text(job, row["error"])}
        results[job.key] = row
        if row_done:
            row_done(job, row)
        if progress:
            progress(len(results), len(jobs), job)

    # no process to start for a built-in strategy when one worker is asked for
    here = [j for j in jobs if workers <= 1 and not needs_worker(j.strategy)]
    for job in here:
        finished(job, measure_job(job, load(job.trace)))
    if len(here) < len(jobs):
        _run_in_workers([j for j in jobs if j.key not in results], workers, time_limit,
                        start_method, finished, measure_job)
    return {k: results[k] for k in keys}


#: the built-in strategies' jobs are measured in batches, about this many
#: per worker: a process started per job costs more than a small job (its
#: start, and a fresh interpreter warming up to the replay), and one batch
#: per worker would leave the others idle while the slowest ends
BATCHES_PER_WORKER = 8


def batches(jobs: list[Job], workers: int) -> list[list[Job]]:
    """``jobs`` cut into the batches worker processes measure, one batch a
    process: a strategy of your own's jobs one by one (each under its time
    limit, a failure its own), a built-in strategy's in batches of one
    strategy (a worker replays it warm) of about ``len(jobs) /
    (workers * BATCHES_PER_WORKER)`` jobs each."""
    size = max(1, -(-len(jobs) // (workers * BATCHES_PER_WORKER)))
    by_strategy: dict[str, list[Job]] = {}
    for job in jobs:
        by_strategy.setdefault(job.strategy, []).append(job)
    out = []
    for strategy, group in by_strategy.items():
        if needs_worker(strategy):
            out += [[job] for job in group]
            continue
        cuts = -(-len(group) // size)
        per = -(-len(group) // cuts)             # the batches of one strategy alike in size
        out += [group[i:i + per] for i in range(0, len(group), per)]
    return out


def _run_in_workers(jobs: list[Job], workers: int, time_limit: float | None,
                    start_method: str | None, finished: Callable[[Job, dict], None],
                    measure_job: Callable[[Job, object], dict] = measure) -> None:
    """``jobs`` measured by allocators/parallel.py in :func:`batches`, a
    worker process each, ``workers`` at once; ``finished(job, row)`` as each
    job ends."""
    # each trace loaded once, here: a forked worker has it without a copy
    traces = {}
    for job in jobs:
        if job.trace not in traces:
            traces[job.trace] = load(job.trace)
    by_key = {str(i): batch for i, batch in enumerate(batches(jobs, workers))}
    specs = [BuildSpec(batch[0].strategy, dict(batch[0].params), key=key,
                       job=functools.partial(_measure_batch, jobs=tuple(batch), measure_job=measure_job,
                                             traces=tuple(traces[j.trace] for j in batch)))
             for key, batch in by_key.items()]
    build = ParallelBuild(None, specs, workers=workers, time_limit=time_limit,
                          start_method=start_method)
    done: set[tuple] = set()

    def end(job: Job, row: dict) -> None:
        done.add(job.key)
        finished(job, row)

    # SIGTERM (kill, a closed session) would end this process and leave the
    # workers replaying on their own: end them too, as for Ctrl-C
    old_term = None
    if threading.current_thread() is threading.main_thread():
        old_term = signal.signal(signal.SIGTERM, _terminated)
    try:
        build.start()
        while not build.finished:
            for event in build.poll(0.5):
                if isinstance(event, Note):          # one job of the batch measured
                    index, row = event.value
                    end(by_key[event.key][index], row)
                elif isinstance(event, Failed):      # its worker failed: the jobs it had left
                    batch = by_key[event.key]
                    for job in batch:
                        if job.key not in done:
                            end(job, {"error": event.error})
                    if needs_worker(batch[0].strategy):
                        # its other runs would loop or die alike: said once, not waited for
                        same = [k for k, b in by_key.items() if b[0].strategy == batch[0].strategy]
                        for key in build.withdraw(same):
                            for job in by_key[key]:
                                end(job, {"error": f"not run: {batch[0].label} failed first "
                                                   f"({event.error})"})
    except BaseException:
        # Ctrl-C: stop the workers now rather than wait for their replays to end
        build.cancel()
        raise
    finally:
        if old_term is not None:
            signal.signal(signal.SIGTERM, old_term)


def _measure_batch(trace, spec: BuildSpec, note, *, jobs: tuple, traces: tuple,
                   measure_job: Callable[[Job, object], dict] = measure) -> int:
    """A :class:`~heapscope.allocators.parallel.BuildSpec` job: :func:`measure`
    each job of a batch on its trace in the worker, its row sent as a note
    as it ends; returns how many."""
    for index, (job, loaded) in enumerate(zip(jobs, traces)):
        note((index, measure_job(job, loaded)))
    return len(jobs)


def failure_text(job: Job, error: str) -> str:
    """A strategy of your own's error, naming it (its file), the trace and the run:
    ``loops (mine.py:Loops) on vo1989:seed=1,steps=300 (loops, vax, seed 1): no answer...``."""
    origin = plugins.ORIGINS.get(job.strategy)
    who = f"{job.strategy} ({origin})" if origin else job.strategy
    return f"{who} on {trace_text(job.trace)} ({job.label}): {error}"


def trace_text(ref) -> str:
    """A job's trace as the command line would name it: ``vo1989:seed=1,steps=300``."""
    if isinstance(ref, tuple):
        name, items = ref
        return name + (":" + ",".join(f"{k}={v}" for k, v in items) if items else "")
    return str(ref)


def _terminated(signum, frame) -> None:
    raise SystemExit(128 + signum)
