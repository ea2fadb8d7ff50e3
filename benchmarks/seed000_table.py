"""Seed 000 (Phong Vo, Usenet, May 1989) measured waste = (Sarena -
Salloc) / Salloc on a 10 000-step workload: bsi (4.3BSD buckets) 1.58, fsi (old
first-fit/next-fit libc) 0.29, vsi (splay best fit) 0.18, on a VAX 8650.

This prints our figures on the same workload, over ten seeds, for LP64 and for
the VAX's 4-byte words (4.3BSD's 1 KiB VAX pages for bsd-buckets), as the markdown
table that docs/strategies.md shows.  The runs are those of
``heapscope experiment vo1989`` (heapscope/experiments/vo1989.py), which prints
Vo's whole table beside ours.

    python benchmarks/seed000_table.py
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from heapscope.experiments import run_experiment  # noqa: E402


def main() -> None:
    result = run_experiment("vo1989", settings={"runs": "10", "machines": "lp64,vax"})
    lp64, vax = result.table("lp64"), result.table("vax")
    salloc = [r["salloc"] for r in lp64.rows if r.get("salloc")]
    print(f"mean Salloc over seeds 1-10: {salloc[0]:.0f} (Vo: 304921)\n")
    print("| strategy | Vo 1989 waste | ours, LP64 (mean ± sd) | ours, VAX words | search mean (LP64) |")
    print("|---|---|---|---|---|")
    for row in lp64.rows:
        if row.get("waste") is None:
            continue
        name = row["strategy"]
        other = vax.row(name)
        vo = f"{row['seed_waste']:.2f} ({row['seed_name']})" if row.get("seed_waste") else "–"
        print(f"| `{name}` | {vo} | {row['waste']:.2f} ± {row['waste_sd']:.2f} | "
              f"{other['waste']:.2f} ± {other['waste_sd']:.2f} | {row['search_mean']:.1f} |")


if __name__ == "__main__":
    main()
