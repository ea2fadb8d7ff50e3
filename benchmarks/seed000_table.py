"""Seed 000 (Phong Vo, Usenet, May 1989) measured waste = (Sarena -
Salloc) / Salloc on a 10 000-step workload: bsi (4.3BSD buckets) 1.58, fsi (old
first-fit/next-fit libc) 0.29, vsi (splay best fit) 0.18, on a VAX 8650.

This prints our figures on the same workload, over ten seeds, for LP64 and for
the VAX's 4-byte words (4.3BSD's 1 KiB pages for bsd-buckets), as the markdown
table that docs/strategies.md shows.

    python benchmarks/seed000_table.py
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from heapscope.allocators.registry import strategy_names  # noqa: E402
from heapscope.allocators.replay import Timeline  # noqa: E402
from heapscope.traces import make_workload  # noqa: E402

SEEDS = range(1, 11)
VO = {"bsd-buckets": 1.58, "next-fit": 0.29, "first-fit": 0.29, "splay-best-fit": 0.18}
SETTINGS = {
    "LP64": ({"word": 8}, {}),
    "VAX": ({"word": 4}, {"bsd-buckets": {"pagesize": 1024}}),
}


def main() -> None:
    traces = [make_workload("vo1989", seed=s) for s in SEEDS]
    salloc = statistics.mean(int(t.stats()["max_live_bytes"]) for t in traces)
    print(f"mean Salloc over seeds {SEEDS.start}-{SEEDS.stop - 1}: {salloc:.0f} (Vo: 304921)\n")
    print("| strategy | Vo 1989 waste | ours, LP64 (mean ± sd) | ours, VAX words | search mean (LP64) |")
    print("|---|---|---|---|---|")
    for name in strategy_names():
        cells = {}
        search = []
        for label, (common, own) in SETTINGS.items():
            wastes = []
            for t in traces:
                row = Timeline(t, name, dict(common, **own.get(name, {}))).build().summary()
                wastes.append(row["waste"])
                if label == "LP64":
                    search.append(row["search_mean"])
            cells[label] = f"{statistics.mean(wastes):.2f} ± {statistics.stdev(wastes):.2f}"
        vo = f"{VO[name]:.2f}" if name in VO else "–"
        print(f"| `{name}` | {vo} | {cells['LP64']} | {cells['VAX']} | {statistics.mean(search):.1f} |")


if __name__ == "__main__":
    main()
