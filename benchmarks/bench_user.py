"""What the user-strategy layer costs: the checks UserStrategy makes at every
operation, heapscope grade's checking pass, and the window's timeline build,
each as a ratio to the same strategy replayed bare (checks off), in one run.

    python benchmarks/bench_user.py [TRACE ...]      (default: default gcc-cc1 plotnick1983)

The strategy is the tutorial's finished segregated fit (examples/segfit.py);
the built-in TLSF's bare replay is given beside it for scale.  No budget in
DESIGN.md covers user strategies; these figures say what a student pays for
the checks, and where the time of `heapscope grade` goes.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from heapscope.allocators import plugins  # noqa: E402
from heapscope.allocators.grading import check_trace  # noqa: E402
from heapscope.allocators.registry import make_strategy  # noqa: E402
from heapscope.allocators.replay import Timeline, replay_bare  # noqa: E402
from heapscope.traces import load_trace  # noqa: E402


def best(fn, runs=3) -> float:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main(specs: list[str]) -> None:
    cls = plugins.load_file(f"{ROOT / 'examples' / 'segfit.py'}:SegFit")

    def bare():
        s = cls()
        s.guarded = False
        return s

    print(f"{'trace':14} {'ops':>7} {'bare s':>8} {'checked':>8} {'grade pass':>11} "
          f"{'timeline':>9} {'tlsf bare':>10}")
    for spec in specs:
        trace = load_trace(spec)
        t_bare = best(lambda: replay_bare(trace, bare()))
        t_checked = best(lambda: replay_bare(trace, cls()))
        t_grade = best(lambda: check_trace(cls, trace), runs=1)
        t_timeline = best(lambda: Timeline(trace, cls.name).build(), runs=1)
        t_tlsf = best(lambda: replay_bare(trace, make_strategy("tlsf")))
        print(f"{spec:14} {len(trace):>7} {t_bare:>8.3f} {t_checked / t_bare:>7.2f}x "
              f"{t_grade / t_bare:>10.2f}x {t_timeline / t_bare:>8.2f}x {t_tlsf / t_bare:>9.2f}x")


if __name__ == "__main__":
    main(sys.argv[1:] or ["default", "gcc-cc1", "plotnick1983"])
