"""What the 29-attribute workaround saves, as ratios in one run.

    python benchmarks/bench_inline_attributes.py [--runs N] [--quick]

CPython 3.11 (and 3.12) keeps an instance's attribute values inline, read at
a fixed index (``LOAD_ATTR_INSTANCE_VALUE``), only while its class's shared
keys hold at most 29 names; with a 30th every instance gets a real dict and
every ``self.x`` of the policy becomes a dict lookup with a hint
(``LOAD_ATTR_WITH_HINT``; ``tests/test_attribute_reads.py`` shows the line on
a plain class).  Three policies stay under it by a workaround: TLSF's
``block_header_overhead`` and ``pool_overhead`` and GNU malloc's
``blocklog``, ``entry``, ``list_size`` and ``min_log`` are properties
computed from the word, and dlmalloc's four mallopt values are one named
tuple (``Mallopt``).

For each of the three this times the bare replay (events and measures off,
the policy's fused path where it has one) and the timeline's build of the
same trace, as built and with the workaround **undone**: the instance given
back the names the workaround saved (TLSF's two and GNU malloc's four
properties turned into plain attributes of the same values, three more names
for dlmalloc's mallopt tuple as four), so it holds as many names as it would
without it.  Shared keys belong to the class and never shrink, so each
variant runs in a fresh process; the processes alternate, each number is the
best of ``--runs`` in CPU seconds, and the column to read is the ratio
(undone / as built: above 1 is what the workaround saves).

With ``--instructions`` (valgrind installed) it counts instead the machine
instructions of one bare replay of sqlite's trace (cachegrind's ``I refs``
of three replays less those of one, halved), which the other processes of
a busy machine do not move: the measure to trust there.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

BUNDLED = Path(__file__).resolve().parent.parent / "traces" / "bundled"

#: strategy -> the names the workaround saved, made plain attributes again
#: (None: a name of its own, for dlmalloc's mallopt values read as one tuple)
UNDONE = {
    "tlsf": ("block_header_overhead", "pool_overhead"),
    "gnu-malloc": ("blocklog", "entry", "list_size", "min_log"),
    "dlmalloc": (None, None, None),
}


def undo_workaround(name: str) -> None:
    """In this process only: give every new ``name`` strategy the names its
    workaround saved as plain instance attributes, set at the end of its
    ``__init__``."""
    from heapscope.allocators.registry import STRATEGIES
    cls = STRATEGIES[name]
    names = UNDONE[name]
    for attr in names:
        if attr is not None:
            # a non-data descriptor instead of the property: __init__ may read
            # the name before it is set, and the instance's own value shadows it
            setattr(cls, attr, _Computed(getattr(cls, attr).fget))
    original_init = cls.__init__

    def __init__(self, **params):
        original_init(self, **params)
        for i, attr in enumerate(names):
            if attr is None:
                setattr(self, f"mallopt_value_{i}", self.mallopt[i])
            else:
                setattr(self, attr, getattr(self, attr))

    cls.__init__ = __init__


class _Computed:
    """The property's getter, as a non-data descriptor."""

    def __init__(self, fget) -> None:
        self.fget = fget

    def __get__(self, obj, owner=None):
        return self if obj is None else self.fget(obj)


def traces(quick: bool):
    from heapscope.traces import load_trace, make_workload
    out = [("vo1989 20k", make_workload("vo1989", steps=10_000 if quick else 20_000, seed=1989))]
    for file in ("gcc-cc1.rep.gz", "sqlite3-sql.rep.gz"):
        out.append((file.split(".")[0], load_trace(str(BUNDLED / file))))
    return out


def child(name: str, undone: bool, runs: int, quick: bool) -> None:
    """Print {trace: [replay us/op, build us/op, attributes]} as JSON."""
    if undone:
        undo_workaround(name)
    from heapscope.allocators.registry import make_strategy
    from heapscope.allocators.replay import Timeline, replay_bare
    result = {}
    for label, trace in traces(quick):
        n = len(trace.kind)
        replay = build = float("inf")
        for _ in range(runs):
            s = make_strategy(name)
            t0 = time.process_time()
            replay_bare(trace, s)
            replay = min(replay, time.process_time() - t0)
            t0 = time.process_time()
            Timeline(trace, name).build()
            build = min(build, time.process_time() - t0)
        result[label] = [replay / n * 1e6, build / n * 1e6, len(vars(s))]
    print(json.dumps(result))


def replays(name: str, undone: bool, count: int) -> None:
    """Replay sqlite's trace ``count`` times, for an instruction count."""
    if undone:
        undo_workaround(name)
    from heapscope.allocators.registry import make_strategy
    from heapscope.allocators.replay import replay_bare
    from heapscope.traces import load_trace
    trace = load_trace(str(BUNDLED / "sqlite3-sql.rep.gz"))
    for _ in range(count):
        replay_bare(trace, make_strategy(name))


def instructions(name: str, undone: bool) -> float:
    """Instructions of one bare replay (cachegrind: three replays less one, halved)."""
    counts = []
    for count in (1, 3):
        cmd = ["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null",
               sys.executable, __file__, "--replays", str(count), "--child", name]
        cmd += ["--undone"] if undone else []
        out = subprocess.run(cmd, capture_output=True, text=True, check=True,
                             env=dict(os.environ, PYTHONHASHSEED="0"))
        counts.append(int(re.search(r"I\s+refs:\s+([\d,]+)", out.stderr).group(1).replace(",", "")))
    return (counts[1] - counts[0]) / 2


def run_child(name: str, undone: bool, runs: int, quick: bool) -> dict:
    cmd = [sys.executable, __file__, "--child", name, "--runs", str(runs)]
    cmd += ["--undone"] if undone else []
    cmd += ["--quick"] if quick else []
    out = subprocess.run(cmd, capture_output=True, text=True, check=True,
                         env=dict(os.environ, PYTHONHASHSEED="0"))
    return json.loads(out.stdout)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=3, help="best of this many, in each process")
    ap.add_argument("--rounds", type=int, default=2, help="processes of each variant, alternating")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--child")
    ap.add_argument("--undone", action="store_true")
    ap.add_argument("--instructions", action="store_true",
                    help="count instructions with valgrind instead of timing")
    ap.add_argument("--replays", type=int, default=0)
    args = ap.parse_args()
    if args.child and args.replays:
        replays(args.child, args.undone, args.replays)
        return
    if args.child:
        child(args.child, args.undone, args.runs, args.quick)
        return
    if args.instructions:
        if shutil.which("valgrind") is None:
            sys.exit("--instructions needs valgrind")
        print("instructions of one bare replay of sqlite3-sql (millions)")
        for name in UNDONE:
            built, undone = instructions(name, False), instructions(name, True)
            print(f"{name:12s} as built {built / 1e6:8.1f}  undone {undone / 1e6:8.1f}  "
                  f"undone/built {undone / built:.3f}", flush=True)
        return
    print(f"CPython {sys.version.split()[0]}; best of {args.runs} x {args.rounds} processes, CPU us an op")
    print(f"{'strategy':12s} {'trace':12s} {'attrs':>9s} {'replay':>15s} {'undone/built':>12s}"
          f" {'build':>15s} {'undone/built':>12s}")
    for name in UNDONE:
        built: dict = {}
        undone: dict = {}
        for r in range(args.rounds):
            order = (False, True) if r % 2 == 0 else (True, False)
            for variant in order:
                res = run_child(name, variant, args.runs, args.quick)
                into = undone if variant else built
                for label, row in res.items():
                    best = into.get(label)
                    into[label] = row if best is None else [min(best[0], row[0]), min(best[1], row[1]), row[2]]
        for label in built:
            b, u = built[label], undone[label]
            print(f"{name:12s} {label:12s} {b[2]:>4d}->{u[2]:<4d} {b[0]:6.3f}->{u[0]:6.3f} {u[0] / b[0]:12.3f}"
                  f" {b[1]:6.3f}->{u[1]:6.3f} {u[1] / b[1]:12.3f}")


if __name__ == "__main__":
    main()
