"""The build with measures as ``heapscope compare`` runs it, this tree against another.

Each ``compare`` worker runs ``Timeline(trace, strategy, checkpoints=False,
keep_series=False).build()``: the replay with a row of measures after every
step, folded into the summary (``allocators/running_summary.py``).  This
times that build for every strategy in this tree and in a reference commit
(``--ref``, default ``main``: ``git archive`` of it unpacked in a scratch
folder, imported as ``heapscope`` from there), in separate processes,
interleaved (round by round, strategy by strategy, the two trees in
alternating order), in CPU seconds of the build alone (``time.process_time``
in the child), and reports the best of the rounds for each and their ratio,
new / ref (``--new COMMIT`` times a commit instead of the work tree, so
the tree can change while it runs).  Both trees' summary rows are printed side by side too and must
be equal, value for value (the run says so and exits 1 if not).

    python benchmarks/bench_measures.py [--trace gcc-cc1] [--rounds 3]
                                        [--ref main] [--strategies tlsf ...]
                                        [--ops 10000000]

``--ops`` projects ``compare`` of all the strategies to a trace of that
many operations from the CPU an operation here (its CPU, and the wall time
on two idle cores: half of it, or the longest single build if more).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CHILD = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])
import heapscope.allocators.replay as replay
from heapscope.allocators.replay import Timeline
from heapscope.traces.load import load_trace
assert replay.__file__.startswith(sys.argv[1]), replay.__file__
trace = load_trace(sys.argv[2])
out = []
for _ in range(int(sys.argv[4])):
    tl = Timeline(trace, sys.argv[3], checkpoints=False, keep_series=False)
    c0 = time.process_time()
    tl.build()
    out.append(time.process_time() - c0)
row = tl.summary()
row.pop("wall_s")
print(json.dumps({"cpu": out, "ops": len(trace), "row": row}))
"""


def tree_of_ref(ref: str, scratch: Path, tag: str) -> Path:
    """``ref`` of this repository unpacked as an importable ``heapscope`` under
    ``scratch`` (``tag``: its folder's name, so that one commit can be timed
    against itself, to see the noise)."""
    src = scratch / f"src-{tag}"
    src.mkdir()
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", ref, "heapscope", "allocators",
                              "traces", "gui"], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(src)], input=archive, check=True)
    return package_of(src, scratch / f"tree-{tag}")


def package_of(src: Path, at: Path) -> Path:
    """A folder holding ``heapscope`` laid out as the install maps it (pyproject's package-dir)."""
    pkg = at / "heapscope"
    pkg.mkdir(parents=True)
    for entry in (src / "heapscope").iterdir():
        (pkg / entry.name).symlink_to(entry)
    for name in ("allocators", "traces", "gui"):
        (pkg / name).symlink_to(src / name)
    return at


def run(tree: Path, trace: str, strategy: str, repeat: int) -> dict:
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    done = subprocess.run([sys.executable, "-c", CHILD, str(tree), trace, strategy, str(repeat)],
                          check=True, capture_output=True, text=True, env=env)
    return json.loads(done.stdout.splitlines()[-1])


def same(a: dict, b: dict) -> bool:
    if a.keys() != b.keys():
        return False
    for key, x in a.items():
        y = b[key]
        if isinstance(x, float) and math.isnan(x):
            if not (isinstance(y, float) and math.isnan(y)):
                return False
        elif x != y:
            return False
    return True


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trace", default="gcc-cc1")
    ap.add_argument("--ref", default="main")
    ap.add_argument("--new", help="a commit to time as the new tree (default: this work tree)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=1, help="builds a process (best taken)")
    ap.add_argument("--strategies", nargs="*")
    ap.add_argument("--ops", type=int, default=10_000_000)
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT.parent))
    from heapscope.allocators.registry import strategy_names
    names = args.strategies or strategy_names()
    with tempfile.TemporaryDirectory(prefix="bench_measures-") as tmp:
        scratch = Path(tmp)
        ref = tree_of_ref(args.ref, scratch, "ref")
        new = tree_of_ref(args.new, scratch, "new") if args.new else package_of(ROOT, scratch / "new")
        best = {(name, which): math.inf for name in names for which in ("new", "ref")}
        rows: dict = {}
        ops = 0
        for r in range(args.rounds):
            for i, name in enumerate(names):
                order = (("new", new), ("ref", ref)) if (r + i) % 2 == 0 else (("ref", ref), ("new", new))
                for which, tree in order:
                    got = run(tree, args.trace, name, args.repeat)
                    ops = got["ops"]
                    best[name, which] = min(best[name, which], *got["cpu"])
                    rows[name, which] = got["row"]
            print(f"round {r + 1} of {args.rounds} done", file=sys.stderr, flush=True)
    print(f"{args.trace}, {ops} ops; build with measures (compare's), CPU s, best of {args.rounds}"
          f" x {args.repeat}; ref = {args.ref}")
    print(f"| strategy | ref s | new s | ref us/op | new us/op | new / ref | summary equal |")
    print("|---|---|---|---|---|---|---|")
    total = {"new": 0.0, "ref": 0.0}
    longest = {"new": 0.0, "ref": 0.0}
    equal = True
    for name in names:
        r, n = best[name, "ref"], best[name, "new"]
        total["ref"] += r
        total["new"] += n
        longest["ref"] = max(longest["ref"], r)
        longest["new"] = max(longest["new"], n)
        eq = same(rows[name, "new"], rows[name, "ref"])
        equal &= eq
        print(f"| {name} | {r:.3f} | {n:.3f} | {1e6 * r / ops:.2f} | {1e6 * n / ops:.2f} | "
              f"{n / r:.2f} | {'yes' if eq else '**NO**'} |")
    print(f"| all | {total['ref']:.3f} | {total['new']:.3f} | {1e6 * total['ref'] / ops:.2f} | "
          f"{1e6 * total['new'] / ops:.2f} | {total['new'] / total['ref']:.2f} | |")
    for which in ("ref", "new"):
        cpu = total[which] * args.ops / ops
        wall = max(cpu / 2, longest[which] * args.ops / ops)
        print(f"{which}: compare of these {len(names)} at {args.ops} ops, projected: {cpu:.0f} s CPU,"
              f" {wall:.0f} s wall on two idle cores")
    if not equal:
        print("summary rows differ", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
