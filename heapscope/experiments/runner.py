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
processes (``concurrent.futures``: many short jobs on a few workers, where
allocators/parallel.py runs one long build a process), started as
allocators/parallel.py starts its workers (``default_start_method``: forked
when this process is a plain single-threaded command, afresh otherwise, since
a forked Qt process can inherit locks no thread will release).
"""

from __future__ import annotations

import multiprocessing as mp
import signal
import threading
import time
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable, Iterable

import numpy as np

from ..allocators.parallel import cores, default_start_method
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
def measure(job: Job) -> dict:
    """Replay one job; its row (``error`` alone when the strategy refused its
    parameters or failed)."""
    params = dict(job.params)
    trace = load(job.trace)
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
    row["wall_s"] = replay_bare(trace, make_strategy(job.strategy, **params))
    if job.resident_page:
        row["resident"], row["resident_touched"] = resident_pages(
            trace, make_strategy(job.strategy, **params), job.resident_page)
    return row


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
             progress: ProgressFn | None = None) -> dict[tuple, dict]:
    """Measure every job; ``{job.key: row}``.  ``workers``: processes at once
    (default: one per core; 1 runs them here, one after the other).
    ``progress(done, total, job)`` is called as each job ends."""
    jobs = list(jobs)
    keys = [j.key for j in jobs]
    if len(set(keys)) != len(keys):
        raise ValueError("two jobs share a key")
    workers = min(workers or cores(), len(jobs)) if jobs else 1
    results: dict[tuple, dict] = {}
    if workers <= 1:
        for i, job in enumerate(jobs):
            results[job.key] = measure(job)
            if progress:
                progress(i + 1, len(jobs), job)
        return results
    context = mp.get_context(default_start_method())
    pool = ProcessPoolExecutor(max_workers=workers, mp_context=context, initializer=_worker_start)
    pending = {pool.submit(measure, job): job for job in jobs}
    # SIGTERM (kill, a closed session) would end this process and leave the
    # workers replaying on their own: end them too, as for Ctrl-C
    old_term = None
    if threading.current_thread() is threading.main_thread():
        old_term = signal.signal(signal.SIGTERM, _terminated)
    try:
        while pending:
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                job = pending.pop(future)
                results[job.key] = future.result()
                if progress:
                    progress(len(results), len(jobs), job)
    except BaseException:
        # Ctrl-C, or a worker that died: stop the others now rather than
        # wait for their replays to end
        processes = list(getattr(pool, "_processes", {}).values())
        pool.shutdown(wait=False, cancel_futures=True)
        for process in processes:
            process.terminate()
        for process in processes:
            process.join()
        raise
    finally:
        if old_term is not None:
            signal.signal(signal.SIGTERM, old_term)
    pool.shutdown()
    return {k: results[k] for k in keys}


def _terminated(signum, frame) -> None:
    raise SystemExit(128 + signum)


def _worker_start() -> None:
    # Ctrl-C on a terminal reaches the whole process group: the parent stops
    # the workers, which need not each print a traceback.
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def progress_line(stream, name: str) -> ProgressFn:
    """One line on a terminal, rewritten in place: runs done and the last one."""
    last = [0.0]

    def show(done: int, total: int, job: Job) -> None:
        now = time.monotonic()
        if now - last[0] > 0.2 or done == total:
            last[0] = now
            line = f"experiment {name}: {done}/{total} runs done (last: {job.label})"
            stream.write("\r" + line[:100].ljust(100))
            if done == total:
                stream.write("\r" + " " * 100 + "\r")
            stream.flush()
    return show
