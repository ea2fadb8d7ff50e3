"""Write a real recorded trace repeated end to end to a given size, with fresh ids.

Issue 25's budgets are set on a real program's trace of 10 000 000
operations (117 MB of .rep text: too big to commit).  This makes one from a
bundled recording: the trace is written again and again, each copy's ids
shifted past the previous copy's, until ``--ops`` operations are written;
the last copy is cut short and its live blocks freed, so the total is
``--ops`` or one fewer.  Every bundled recording frees all its blocks
by its end, so each copy starts on an empty heap and the result is a valid
trace of a program that does the same job over and over.

    python benchmarks/make_scale_trace.py [--trace gcc-cc1] [--ops 10000000]
                                          [-o /tmp/gcc-cc1-10m.rep]
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from heapscope.traces.trace import FREE, KIND_LETTERS  # noqa: E402
from heapscope.traces.load import load_trace  # noqa: E402


def live_after_each(trace) -> list[int]:
    """For each prefix length p (0..len), the ids live after its first p ops, in
    the order they were allocated."""
    live: dict[int, None] = {}
    counts = [0]
    for k, ident, _ in trace:
        if k == FREE:
            del live[ident]
        else:
            live.setdefault(ident, None)
        counts.append(len(live))
    return counts


def plan(trace, ops_wanted: int) -> tuple[int, int]:
    """(whole copies, prefix length of the last partial copy) so that the copies,
    the prefix and the frees closing it come to at most ``ops_wanted`` ops, as
    close as the trace allows (within one op)."""
    n = len(trace)
    copies, rest = divmod(ops_wanted, n)
    counts = live_after_each(trace)
    prefix = max((p for p in range(n + 1) if p + counts[p] <= rest), default=0)
    return copies, prefix


def _rep_lines(kind: np.ndarray, ids: np.ndarray, sizes: np.ndarray) -> str:
    letters = np.array([KIND_LETTERS[k] for k in range(3)])
    tail = np.where(kind == FREE, "", np.char.add(" ", sizes.astype(str)))
    lines = np.char.add(np.char.add(np.char.add(letters[kind], " "), ids.astype(str)), tail)
    return "\n".join(lines.tolist()) + "\n"


def write_repeated(trace_spec: str, ops_wanted: int, path: str) -> tuple[int, int]:
    """Write ``trace_spec`` repeated to ``ops_wanted`` ops (or one fewer) as a
    .rep at ``path``; return (ops, ids) written."""
    trace = load_trace(trace_spec)
    counts = live_after_each(trace)
    if counts[-1]:
        raise SystemExit(f"{trace_spec} leaves {counts[-1]} blocks live at its end; "
                         f"its copies would pile up")
    copies, prefix = plan(trace, ops_wanted)
    n, num_ids = len(trace), trace.num_ids
    # the ids the prefix leaves live, freed in the order they were allocated
    live: dict[int, None] = {}
    for k, ident, _ in list(trace)[:prefix]:
        if k == FREE:
            del live[ident]
        else:
            live.setdefault(ident, None)
    closing = np.array(list(live), dtype=np.int64)
    total_ops = n * copies + prefix + len(closing)
    total_ids = num_ids * (copies + (prefix > 0))
    ids64 = trace.ids.astype(np.int64)
    with open(path, "w", encoding="ascii") as out:
        out.write(f"0\n{total_ids}\n{total_ops}\n1\n")
        for c in range(copies):
            out.write(_rep_lines(trace.kind, ids64 + c * num_ids, trace.sizes))
        if prefix:
            out.write(_rep_lines(trace.kind[:prefix], ids64[:prefix] + copies * num_ids,
                                 trace.sizes[:prefix]))
        if len(closing):
            out.write(_rep_lines(np.full(len(closing), FREE, dtype=np.uint8),
                                 closing + copies * num_ids, np.zeros(len(closing), np.int64)))
    return total_ops, total_ids


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--trace", default="gcc-cc1", help="a bundled trace (default gcc-cc1)")
    p.add_argument("--ops", type=int, default=10_000_000)
    p.add_argument("-o", "--output", default=None,
                   help="default /tmp/TRACE-OPS.rep")
    args = p.parse_args(argv)
    path = args.output or f"/tmp/{args.trace}-{args.ops}.rep"
    ops, ids = write_repeated(args.trace, args.ops, path)
    print(f"{path}: {ops:,} ops, {ids:,} ids, {os.path.getsize(path) / 1e6:.1f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
