"""What running a strategy of your own in a worker process costs
(allocators/isolation.py): each command's work on a user strategy in this
process against the same work in a worker with a time limit, wall time, best
of a few runs, in one run of this script.

    python benchmarks/bench_isolation.py [TRACE]      (default: the bundled default trace)

The strategy is the tutorial's finished segregated fit (examples/segfit.py).
Rows:

* grade: ``grading.grade`` on the trace (checks, timed runs, TLSF's timed
  runs) against ``isolated_grade.grade_in_workers`` (the same, in a worker);
* compare row: a timeline build with measures only, as ``compare`` runs it,
  against ``build_timelines(keep="summary", time_limit=...)``;
* window build: a timeline with checkpoints against the worker's build
  shipped back (``keep="timeline"``), with fork (the command line's start
  method) and forkserver (the window's: Qt runs threads);
* inspect: ``inspect_step`` at the last step, in-process and in a worker;
* fixed cost: a window build of a 100-op trace (the worker's start, the
  answering thread, shipping back), and the CPU cost of the wrapper the
  worker puts around each public operation, as a ratio of bare replays.

The worker's cost is its start, shipping the trace there and the result
back, the answering thread, and a wrapper around each public operation that
notes the step (in the worker only).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from heapscope.allocators import grading, isolation, plugins  # noqa: E402
from heapscope.allocators.isolated_grade import grade_in_workers  # noqa: E402
from heapscope.allocators.isolation import DEFAULT_TIME_LIMIT  # noqa: E402
from heapscope.allocators.parallel import BuildSpec, build_timelines  # noqa: E402
from heapscope.allocators.replay import Timeline, replay_bare  # noqa: E402
from heapscope.inspection import inspect_step  # noqa: E402
from heapscope.traces import load_trace, make_workload  # noqa: E402
from heapscope.traces.bundled import default_trace_path  # noqa: E402


def best(fn, runs: int = 3) -> float:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main(spec: str) -> None:
    cls = plugins.load_file(f"{ROOT / 'examples' / 'segfit.py'}:SegFit")
    name = cls.name
    trace = load_trace(spec)
    limit = DEFAULT_TIME_LIMIT
    n = len(trace)

    def worker_build(keep: str, method: str):
        out = build_timelines(trace, [BuildSpec(name)], keep=keep, checkpoints=keep == "timeline",
                              time_limit=limit, start_method=method)[name]
        assert not isinstance(out, Exception), out
        return out

    rows = [
        ("grade", lambda: grading.grade(cls, [(spec, trace)]),
         lambda: grade_in_workers(cls, [(spec, trace)], time_limit=limit, start_method="fork"), 2),
        ("compare row", lambda: Timeline(trace, name, checkpoints=False).build(),
         lambda: worker_build("summary", "fork"), 3),
        ("window build (fork)", lambda: Timeline(trace, name).build(),
         lambda: worker_build("timeline", "fork"), 3),
        ("window build (forkserver)", lambda: Timeline(trace, name).build(),
         lambda: worker_build("timeline", "forkserver"), 3),
        ("inspect", lambda: inspect_step(trace, name, n),
         lambda: inspect_step(trace, name, n, time_limit=limit), 3),
    ]
    tiny = make_workload("vo1989", steps=50, seed=1)
    rows.append(("fixed cost (100-op trace)", lambda: Timeline(tiny, name).build(),
                 lambda: build_timelines(tiny, [BuildSpec(name)], time_limit=limit,
                                         start_method="fork")[name], 5))
    print(f"{name} on {spec} ({n} ops), time limit {limit:g} s")
    print(f"{'work':26} {'in-process s':>13} {'worker s':>9} {'ratio':>6} {'added s':>8}")
    for label, here, there, runs in rows:
        there()                     # a first run: the forkserver starts, caches warm
        t_here = best(here, runs)
        t_there = best(there, runs)
        print(f"{label:26} {t_here:>13.3f} {t_there:>9.3f} {t_there / t_here:>5.2f}x "
              f"{t_there - t_here:>+8.3f}")
    print(f"the worker's step-noting wrapper, bare replay: {wrapper_cost(cls, trace):.2f}x")


def wrapper_cost(cls, trace) -> float:
    """CPU time of a bare replay with the worker's wrapper around each public
    operation over one without, measured in a forked child (the wrapper is
    put on the class there, never in this process)."""
    import multiprocessing as mp

    def bare():
        s = cls()
        s.guarded = False
        return s

    def cpu():
        t0 = time.process_time()
        replay_bare(trace, bare())
        return time.process_time() - t0

    def child(conn):
        plain = min(cpu() for _ in range(3))
        isolation._watch_calls(mp.RawValue("q", 0))
        watched = min(cpu() for _ in range(3))
        conn.send(watched / plain)

    receiver, sender = mp.get_context("fork").Pipe(duplex=False)
    process = mp.get_context("fork").Process(target=child, args=(sender,))
    process.start()
    ratio = receiver.recv()
    process.join()
    return ratio


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else str(default_trace_path()))
