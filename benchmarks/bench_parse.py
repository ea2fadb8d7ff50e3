"""Benchmark: .rep parse speed against the budget of 1,000,000 ops/s.

Generates a 1,000,000-op trace (a mix of mallocs, reallocs and frees, ids up
to ~200k, sizes up to 64 KiB), writes it to a temporary .rep file, and reads
it back with ``traces.read_rep`` (best of 5 runs, file in the page cache).
The semantic checks are included: that is what a user waits for.

    python benchmarks/bench_parse.py [--ops N] [--repeat R] [--forms] [--readable]

``--readable`` also times the same trace in the readable form (a .heap file,
``a = malloc(240)``: traces/readable.py), which has no budget of its own: it
is for traces a person writes, read line by line in Python.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from heapscope.traces import (ALLOC, FREE, REALLOC, Trace, read_rep, read_trace_file,  # noqa: E402
                              write_rep)
from heapscope.traces import readable  # noqa: E402

BUDGET_OPS_PER_S = 1_000_000


def synthetic_trace(num_ops: int, seed: int = 0) -> Trace:
    """A valid random trace of exactly ``num_ops`` ops: 45% frees, 10%
    reallocs, the rest mallocs of fresh ids (blocks live at the end stay so)."""
    rng = np.random.default_rng(seed)
    live: list[int] = []
    ops: list[tuple[int, int, int]] = []
    next_id = 0
    coins = rng.random(num_ops).tolist()
    sizes = rng.integers(1, 65536, size=num_ops).tolist()
    picks = rng.random(num_ops).tolist()
    for coin, size, pick in zip(coins, sizes, picks):
        j = int(pick * len(live))
        if live and coin < 0.45:
            live[j], live[-1] = live[-1], live[j]
            ops.append((FREE, live.pop(), 0))
        elif live and coin < 0.55:
            ops.append((REALLOC, live[j], size))
        else:
            ops.append((ALLOC, next_id, size))
            live.append(next_id)
            next_id += 1
    return Trace.from_ops(ops, name="bench")


def best_time(path: str, repeat: int, trace: Trace) -> tuple[float, float]:
    """(best, median) seconds to read ``path``, checking it gives ``trace``."""
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        parsed = read_rep(path)
        times.append(time.perf_counter() - t0)
    assert len(parsed) == len(trace) and np.array_equal(parsed.sizes, trace.sizes)
    return min(times), sorted(times)[len(times) // 2]


def readable_time(tmp: str, repeat: int, trace: Trace) -> float:
    """Best seconds to read ``trace`` written in the readable form, each run
    with the line cache emptied (a file read once, as a command reads it)."""
    path = os.path.join(tmp, "bench.heap")
    with open(path, "w") as f:
        f.write(readable.write_readable(trace))
    times = []
    for _ in range(repeat):
        readable._read_line.cache_clear()
        t0 = time.perf_counter()
        parsed = read_trace_file(path)
        times.append(time.perf_counter() - t0)
    assert list(parsed) == list(trace)
    return min(times)


def other_forms(text: str) -> dict[str, str]:
    """The same trace as mdriver also reads it: CR-only lines, and four ops a line."""
    lines = text.split("\n")
    header, ops = lines[:4], [s for s in lines[4:] if s]
    packed = [" ".join(ops[i:i + 4]) for i in range(0, len(ops), 4)]
    return {"CR-only": "\r".join(lines), "4 ops a line": "\n".join(header + packed) + "\n"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--forms", action="store_true",
                        help="also time the CR-only and several-ops-a-line forms")
    parser.add_argument("--readable", action="store_true",
                        help="also time the readable form (.heap) of the same trace")
    args = parser.parse_args()
    trace = synthetic_trace(args.ops)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "bench.rep")
        write_rep(trace, path)
        size_mb = os.path.getsize(path) / 1e6
        best, median = best_time(path, args.repeat, trace)
        rate = len(trace) / best
        print(f"parsed {len(trace):,} ops ({size_mb:.1f} MB) in {best * 1000:.0f} ms "
              f"(best of {args.repeat}; median {median * 1000:.0f} ms)")
        print(f"{rate:,.0f} ops/s = {rate / BUDGET_OPS_PER_S:.2f} x the budget of "
              f"{BUDGET_OPS_PER_S:,} ops/s -> {'OK' if rate >= BUDGET_OPS_PER_S else 'TOO SLOW'}")
        if args.forms:
            with open(path) as f:
                text = f.read()
            for name, form in other_forms(text).items():
                other = os.path.join(tmp, "form.rep")
                with open(other, "w", newline="") as f:
                    f.write(form)
                form_best, _ = best_time(other, args.repeat, trace)
                print(f"  {name}: {len(trace) / form_best:,.0f} ops/s "
                      f"({best / form_best:.2f} x the plain file's speed)")
        if args.readable:
            heap_best = readable_time(tmp, args.repeat, trace)
            print(f"  readable form (.heap): {len(trace) / heap_best:,.0f} ops/s "
                  f"({best / heap_best:.3f} x the .rep's speed)")


if __name__ == "__main__":
    main()
