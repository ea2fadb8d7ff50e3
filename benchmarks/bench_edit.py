"""What an edit in the sandbox costs: a 100-operation trace replayed through
every built-in strategy (12), an operation inserted, deleted or changed, and
every timeline rebuilt for the edited trace.

    python benchmarks/bench_edit.py [--ops N] [--rounds R]

Issue 21's budget: an edit of a 100-operation trace with 12 strategies
replayed in under 50 ms.  An edit replays each timeline from the first step
it changed (allocators/timeline_edit.py): the checkpoints and measures before
it are kept, and the heap there is the shown one copied (the window edits at
the shown step) or one restored from a checkpoint.  For scale, the full
build of the 12 timelines of the edited trace (what an edit would cost
without that), and the ratio of the two, from the same run.  Each figure is
the best of R rounds (default 5); the edits are at a quarter, half and three
quarters of the trace, the timelines standing at the edited step.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from heapscope.allocators.registry import strategy_names  # noqa: E402
from heapscope.allocators.replay import Timeline  # noqa: E402
from heapscope.sandbox import Sandbox  # noqa: E402
from heapscope.traces import make_workload  # noqa: E402
from heapscope.traces.named_ops import NamedOp  # noqa: E402
from heapscope.traces.trace import ALLOC  # noqa: E402

BUDGET_MS = 50.0


def edits(box: Sandbox, step: int) -> dict:
    """name -> an edit of ``box`` at ``step`` (a function doing it)."""
    at = box.checked.op_of_step[step - 1]
    return {
        "insert a malloc": lambda: box.malloc_after(step, 300),
        "delete an op": lambda: box.delete(at, step),
        "change a size": lambda: box.replace(at, 1, [NamedOp(ALLOC, "zz", 123)], step),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ops", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    trace = make_workload("vo1989", steps=args.ops // 2, min_life=2, max_life=30)
    names = strategy_names()     # the built-in ones: no plugin is loaded here
    print(f"{len(trace)} operations, {len(names)} strategies: {', '.join(names)}")
    print(f"{'edit':18} {'at':>4} {'edit ms':>8} {'full build ms':>14} {'ratio':>6}")
    worst = 0.0
    for step in (len(trace) // 4, len(trace) // 2, 3 * len(trace) // 4):
        for what in ("insert a malloc", "delete an op", "change a size"):
            best_edit = best_full = float("inf")
            for _ in range(args.rounds):
                box = Sandbox.of_trace(trace)
                timelines = [Timeline(box.trace, n).build() for n in names]
                for tl in timelines:
                    tl.seek(step)
                old = box.trace
                t0 = time.perf_counter()
                edits(box, step)[what]()
                box.replayed(timelines, old)
                best_edit = min(best_edit, time.perf_counter() - t0)
                t0 = time.perf_counter()
                for n in names:
                    Timeline(box.trace, n).build()
                best_full = min(best_full, time.perf_counter() - t0)
            worst = max(worst, best_edit)
            print(f"{what:18} {step:>4} {best_edit * 1e3:>8.1f} {best_full * 1e3:>14.1f} "
                  f"{best_edit / best_full:>6.2f}")
    verdict = "within" if worst * 1e3 <= BUDGET_MS else "OVER"
    print(f"slowest edit {worst * 1e3:.1f} ms: {verdict} the {BUDGET_MS:.0f} ms budget")


if __name__ == "__main__":
    main()
