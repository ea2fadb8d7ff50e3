"""Replay speed of every strategy against the C library's own malloc, and seek
time on a long trace (DESIGN.md, performance budgets).

    python benchmarks/bench_replay.py [--steps N] [--seek-ops N]

Budgets:
* replay: each O(1)-class strategy (TLSF, buddy, buckets) at >= 1/100 of the
  speed of the C library's malloc replaying the same trace; list and tree
  strategies report the same ratio.
* seek to any step of a 1 000 000-op trace: <= 50 ms median.
  Reported beside it: ``Timeline.before()`` (the heap one step back, which a
  morphing view asks for once per shown step; no budget of its own).

The C side is a small replayer compiled here with the system compiler; it reads
the same ops from a binary file and calls malloc/free/realloc.  All numbers of
one report come from one run, as ratios, because these machines are noisy.
If no C compiler is found the C column says so and the rest still runs.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from heapscope.allocators.registry import make_strategy, strategy_names  # noqa: E402
from heapscope.allocators.replay import Timeline, replay_bare  # noqa: E402
from heapscope.traces import make_workload  # noqa: E402

O1_CLASS = {"tlsf", "buddy", "bsd-buckets"}

C_REPLAYER = r"""
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <time.h>
/* ops file: int64 n, then n records of (int64 kind, int64 id, int64 size) */
int main(int argc, char **argv) {
    FILE *f = fopen(argv[1], "rb");
    if (!f) { perror(argv[1]); return 1; }
    int64_t n, ids; fread(&n, 8, 1, f); fread(&ids, 8, 1, f);
    int64_t *ops = malloc(sizeof(int64_t) * 3 * n);
    fread(ops, 8, 3 * n, f); fclose(f);
    int reps = atoi(argv[2]);
    void **ptr = calloc(ids, sizeof(void *));
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int r = 0; r < reps; r++) {
        for (int64_t i = 0; i < n; i++) {
            int64_t k = ops[3*i], id = ops[3*i+1], sz = ops[3*i+2];
            if (k == 0) ptr[id] = malloc(sz);
            else if (k == 1) { free(ptr[id]); ptr[id] = 0; }
            else ptr[id] = realloc(ptr[id], sz);
        }
        for (int64_t i = 0; i < ids; i++) { free(ptr[i]); ptr[i] = 0; }
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    printf("%.9f\n", ((t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9) / reps);
    return 0;
}
"""


def c_malloc_seconds(trace, workdir: Path) -> float | None:
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        return None
    src = workdir / "replay.c"
    exe = workdir / "replay"
    src.write_text(C_REPLAYER)
    subprocess.run([cc, "-O2", "-o", str(exe), str(src)], check=True)
    ops = np.stack([trace.kind.astype(np.int64), trace.ids.astype(np.int64),
                    trace.sizes.astype(np.int64)], axis=1)
    data = workdir / "ops.bin"
    with open(data, "wb") as f:
        np.array([len(trace), int(trace.ids.max()) + 1], dtype=np.int64).tofile(f)
        ops.tofile(f)
    out = subprocess.run([str(exe), str(data), "50"], check=True, capture_output=True, text=True)
    return float(out.stdout)


def bench_replay(steps: int) -> None:
    trace = make_workload("vo1989", steps=steps, seed=1989)
    print(f"replay of vo1989 ({len(trace)} ops)")
    with tempfile.TemporaryDirectory() as tmp:
        c_s = c_malloc_seconds(trace, Path(tmp))
    if c_s is None:
        print("  no C compiler found (cc/gcc): ratios against the C library cannot be taken")
    else:
        print(f"  C library malloc: {c_s * 1e3:.2f} ms ({len(trace) / c_s / 1e6:.1f} M ops/s)")
    print(f"  {'strategy':16} {'ms':>9} {'k ops/s':>9} {'C speed ratio':>14}  budget")
    for name in strategy_names():
        secs = min(replay_bare(trace, make_strategy(name)) for _ in range(3))
        ratio = c_s / secs if c_s else float("nan")
        if name in O1_CLASS:
            verdict = "ok (>= 1/100)" if ratio >= 0.01 else "MISSES 1/100"
        else:
            verdict = "(reported)"
        print(f"  {name:16} {secs * 1e3:9.1f} {len(trace) / secs / 1e3:9.1f} {ratio:14.5f}  {verdict}")


def bench_seek(n_ops: int, strategies: list[str]) -> None:
    # A long trace with a steady live set: djgpp-style random actions on slots.
    trace = make_workload("djgpp1997", actions=n_ops, slots=1024, max_size=4096, seed=5)
    rng = np.random.default_rng(0)
    targets = rng.integers(0, len(trace) + 1, size=60).tolist()
    print(f"seek on a {len(trace)}-op trace (budget 50 ms median)")
    for name in strategies:
        t0 = time.perf_counter()
        tl = Timeline(trace, name).build()
        build = time.perf_counter() - t0
        times, befores = [], []
        for t in targets:
            s0 = time.perf_counter()
            tl.seek(t)
            s1 = time.perf_counter()
            tl.before()
            times.append(s1 - s0)
            befores.append(time.perf_counter() - s1)
        med = statistics.median(times) * 1e3
        mem = sum(len(c) for c in tl.checkpoints) / 2**20
        print(f"  {name:16} build {build:6.1f} s  seek median {med:6.1f} ms  max {max(times) * 1e3:6.1f} ms"
              f"  ratio to budget {med / 50:5.2f}  checkpoints {len(tl.checkpoints)} ({mem:.0f} MiB)"
              f"  before() median {statistics.median(befores) * 1e3:6.1f} ms")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=10000)
    ap.add_argument("--seek-ops", type=int, default=1_000_000)
    ap.add_argument("--seek-strategies", nargs="*", default=["next-fit"])
    args = ap.parse_args()
    bench_replay(args.steps)
    if args.seek_ops:
        bench_seek(args.seek_ops, args.seek_strategies)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main()
