"""What ``heapscope grade``'s checks cost, against the student's allocator.

    python benchmarks/bench_grade.py [--pairs N] [--traces SPEC,...] [--allocator FILE.py:Class]

DESIGN.md's budget: grade's checks cost at most the student's allocator's
own work again, on every trace.  The allocator here is the CS:APP textbook
implicit free list (examples/implicit.py: first fit over every block,
boundary tags), the case issue 19 measured at 211 s a replay.  Its traces:

* **binary2-like**, generated here (never the lab's file): N pairs of a
  small (16 B) and a large (112 B) allocation, then every small one freed
  and N larger (128 B) blocks allocated, none of which fits a 16-byte hole,
  so first fit walks every block of the heap; then everything freed.  With
  the default N = 2400 that is 12 000 operations.
* the bundled traces and workloads ``heapscope grade`` replays by default.

For each trace, in one run: the bare replay (checks off, as grade times the
strategy; the median of 3), the check pass (every result check, the walk checks
spread by the allocator's own time), and the ratios:

* ``walks / own``: seconds of the walk checks and snapshots over those
  spent inside the allocator's own methods during the check pass (grade
  keeps it under ``grading.WALK_SHARE``, plus one last walk);
* ``walks / bare``: the walk checks over the bare replay: DESIGN.md's budget,
  <= 1 (the walks slow the allocator down between them, which is why the
  share is a half);
* ``pass / bare``: the whole check pass over the bare replay (what grading a
  trace costs, the per-operation result checks included).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from heapscope.allocators import plugins                    # noqa: E402
from heapscope.allocators.grading import check_trace               # noqa: E402
from heapscope.allocators.replay import replay_bare                  # noqa: E402
from heapscope.cli import default_grade_traces              # noqa: E402
from heapscope.traces import load_trace                     # noqa: E402
from heapscope.traces.trace import ALLOC, FREE, Trace       # noqa: E402


def binary2_like(pairs: int = 2400) -> Trace:
    """Alternate 16 B and 112 B allocations, free the small ones, allocate
    128 B blocks, then free the large ones (the 128 B blocks stay live, as
    in the lab's trace): ``5 * pairs`` operations."""
    ops = []
    for i in range(pairs):
        ops.append((ALLOC, 2 * i, 16))
        ops.append((ALLOC, 2 * i + 1, 112))
    for i in range(pairs):
        ops.append((FREE, 2 * i, 0))
    big = 2 * pairs
    for i in range(pairs):
        ops.append((ALLOC, big + i, 128))
    for i in range(pairs):
        ops.append((FREE, 2 * i + 1, 0))
    return Trace.from_ops(ops, name=f"binary2-like ({pairs} pairs)")


def measure(cls, trace, rounds: int = 1, clock=time.perf_counter) -> dict:
    """The bare replays and the check pass of ``trace``, ``rounds`` times
    in turn: the median of each figure (on a shared machine one round is
    luck; each round's bare time is the median of 3).  ``clock`` times the
    bare replays and the whole pass (``time.process_time``: the CPU time of
    this process, which other jobs on the machine disturb less); the own and
    walk seconds are the pass's own, wall time."""
    def bare_run():
        strategy = _unguarded(cls)
        t0 = clock()
        replay_bare(trace, strategy)
        return clock() - t0
    runs = []
    for _ in range(rounds):
        # the median of a few bare replays, not the best: on a shared machine the
        # check pass's own time is a sum over the whole pass, average luck
        bare = statistics.median(bare_run() for _ in range(3))
        t0 = clock()
        checked = check_trace(cls, trace)
        total = clock() - t0
        if checked.error is not None:
            raise SystemExit(f"{trace.name}: {checked.error}")
        runs.append({"bare": bare, "pass": total, "own": checked.own_seconds,
                     "walks": checked.check_seconds, "checks": checked.checks,
                     "ratio": total / bare})
    out = {key: statistics.median(run[key] for run in runs) for key in runs[0]}
    out["ops"] = len(trace)
    return out


def _unguarded(cls):
    s = cls()
    s.guarded = False
    return s


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=2400)
    ap.add_argument("--allocator", default=str(ROOT / "examples" / "implicit.py") + ":Implicit",
                    help="FILE.py:Class (default: examples/implicit.py:Implicit)")
    ap.add_argument("--traces", default=None,
                    help="comma-separated trace specs (default: grade's default traces)")
    ap.add_argument("--rounds", type=int, default=1,
                    help="bare replays and check pass this many times in turn, medians shown "
                         "(pass / bare: the median of each round's ratio)")
    ap.add_argument("--cpu", action="store_true",
                    help="time the bare replays and the pass in CPU time (time.process_time)")
    args = ap.parse_args(argv)
    clock = time.process_time if args.cpu else time.perf_counter
    cls = plugins.load_file(args.allocator)
    traces = [binary2_like(args.pairs)]
    for spec in (args.traces.split(",") if args.traces else default_grade_traces()):
        trace = load_trace(spec)
        trace.name = trace.name or spec
        traces.append(trace)
    print(f"{'trace':28} {'ops':>7} {'bare s':>8} {'pass s':>8} {'own s':>8} {'walks s':>8} "
          f"{'walks':>6} {'walks/own':>9} {'walks/bare':>10} {'pass/bare':>9}")
    worst = 0.0
    for trace in traces:
        m = measure(cls, trace, args.rounds, clock)
        ratio = m["walks"] / m["own"] if m["own"] else float("inf")
        budget = m["walks"] / m["bare"]
        worst = max(worst, budget)
        print(f"{trace.name[:28]:28} {m['ops']:7} {m['bare']:8.2f} {m['pass']:8.2f} "
              f"{m['own']:8.2f} {m['walks']:8.2f} {m['checks']:6} {ratio:9.2f} {budget:10.2f} "
              f"{m['ratio']:9.2f}", flush=True)
    print(f"worst walks / bare: {worst:.2f} (budget: 1)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
