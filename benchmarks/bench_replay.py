"""Replay, build, compare and seek against DESIGN.md's budgets, as ratios in one run.

    python benchmarks/bench_replay.py [--trace FILE ...] [--quick] [--seek-ops N]

For each trace (Vo 1989 and DJGPP 1997 workloads, every bundled real trace
``traces/bundled/*.rep.gz``, and any ``--trace``):

* **replay**: each strategy's bare replay (events and measures off) against
  the C library's malloc replaying the same ops: a small replayer compiled
  here with the system compiler (the mean of 50 passes).  Budget: TLSF, buddy
  and BSD buckets at >= 1/100 of its speed; the others are reported.  For a
  strategy with a fused bulk path (``Strategy.bulk_ops``: TLSF, buddy) the
  replay through its readable methods is shown beside it (``readable``).
  Beside the C library's warm mean (the budget's measure) its first pass in
  a fresh process is shown, and the **shared floor**: the replay loop and the
  books every policy keeps (``SharedFloor``, a "policy" that bumps a pointer
  and frees nothing), i.e. how much of the 1/100 budget is left to a policy.
* **build**: the timeline's build (replay with measures and checkpoints)
  against the same strategy's bare replay.  Budget: >= 1/2 of its speed.
* **compare**: ``heapscope compare FILE`` (every strategy, a process each)
  against a plain Python pass over the same file (parse + a dict of live
  ids), both timed as whole processes, start included.  Budget: <= 25x.
  Again with only the seven strategies there were when the budget was set.
  Beside it the same in CPU seconds (all of compare's processes), and that
  ratio spread over the cores: what an idle machine would show at best.
* **shipping**: every strategy's timeline built in worker processes and sent
  back (allocators/parallel.py): wall time, and the time spent receiving and
  unpickling the results in this process.

Then **seek** on a 1 000 000-op trace: median and max over 60 random steps,
budget 50 ms median; beside it ``Timeline.before()`` (the heap one step back,
which a morphing view asks for once per shown step; no budget of its own).

Replay and build are timed in CPU seconds of this process (the C replayer's
too): on this shared machine wall time counts the time other processes held
the cores.  Each is the best of a few runs, interleaved so that what noise is
left falls on both sides of each ratio alike; compare ratios inside one
report, not numbers across reports.  Compare and the plain pass are whole
processes, timed on the wall clock: that is what a user waits for.  If no C compiler is found the C
column says so and the rest still runs.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from heapscope.allocators.parallel import build_timelines, cores  # noqa: E402
from heapscope.allocators.registry import make_strategy, strategy_names  # noqa: E402
from heapscope.allocators.replay import Timeline, bulk_record, policy_ops, replay_bare  # noqa: E402
from heapscope.allocators.strategy import LiveBlock, Strategy  # noqa: E402
from heapscope.traces import load_trace, make_workload, write_rep  # noqa: E402

O1_CLASS = {"tlsf", "buddy", "bsd-buckets"}
#: the strategies there were when DESIGN.md set compare's budget (seed 000's and the reference TLSF)
SEVEN = ["next-fit", "first-fit", "rotating-list", "splay-best-fit", "buddy", "tlsf", "bsd-buckets"]
BUNDLED = Path(__file__).resolve().parent.parent / "traces" / "bundled"

C_REPLAYER = r"""
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <time.h>
/* ops file: int64 n, int64 ids, then n records of (int64 kind, int64 id, int64 size).
   The mean time of one pass over `reps` passes, each ending with a free of
   every block still live (as the first version of this benchmark measured). */
int main(int argc, char **argv) {
    FILE *f = fopen(argv[1], "rb");
    if (!f) { perror(argv[1]); return 1; }
    int64_t n, ids; fread(&n, 8, 1, f); fread(&ids, 8, 1, f);
    int64_t *ops = malloc(sizeof(int64_t) * 3 * n);
    fread(ops, 8, 3 * n, f); fclose(f);
    int reps = atoi(argv[2]);
    void **ptr = calloc(ids, sizeof(void *));
    struct timespec t0, t1;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
    for (int r = 0; r < reps; r++) {
        for (int64_t i = 0; i < n; i++) {
            int64_t k = ops[3*i], id = ops[3*i+1], sz = ops[3*i+2];
            if (k == 0) ptr[id] = malloc(sz);
            else if (k == 1) { free(ptr[id]); ptr[id] = 0; }
            else ptr[id] = realloc(ptr[id], sz);
        }
        for (int64_t i = 0; i < ids; i++) { free(ptr[i]); ptr[i] = 0; }
    }
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t1);
    printf("%.9f\n", ((t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9) / reps);
    return 0;
}
"""

#: the plain Python pass compare is measured against: parse the .rep, keep a dict of live ids
PLAIN_PASS = r"""
import gzip, sys
path = sys.argv[1]
live = {}
with (gzip.open if path.endswith(".gz") else open)(path, "rt") as f:
    for _ in range(4):
        f.readline()
    for line in f:
        parts = line.split()
        if not parts:
            continue
        if parts[0] == "f":
            del live[parts[1]]
        else:
            live[parts[1]] = int(parts[2])
"""


def build_c_replayer(workdir: Path) -> Path | None:
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        return None
    src = workdir / "replay.c"
    exe = workdir / "replay"
    src.write_text(C_REPLAYER)
    subprocess.run([cc, "-O2", "-o", str(exe), str(src)], check=True)
    return exe


def c_malloc_seconds(trace, exe: Path | None, workdir: Path, passes: int = 50) -> float | None:
    """Mean time of the C library's malloc replaying the trace, over ``passes`` passes."""
    if exe is None:
        return None
    ops = np.stack([trace.kind.astype(np.int64), trace.ids.astype(np.int64),
                    trace.sizes.astype(np.int64)], axis=1)
    data = workdir / "ops.bin"
    with open(data, "wb") as f:
        np.array([len(trace), int(trace.ids.max()) + 1], dtype=np.int64).tofile(f)
        ops.tofile(f)
    out = subprocess.run([str(exe), str(data), str(passes)], check=True, capture_output=True, text=True)
    return float(out.stdout)


def c_first_pass_seconds(trace, exe: Path | None, workdir: Path, tries: int = 10) -> float | None:
    """The C library's first pass over the trace in a fresh process (a heap
    that grows as it goes, an empty tcache), the best of ``tries`` processes:
    beside the warm mean of :func:`c_malloc_seconds`, which is the budget's."""
    if exe is None:
        return None
    c_malloc_seconds(trace, exe, workdir, passes=1)     # writes ops.bin
    data = workdir / "ops.bin"
    return min(float(subprocess.run([str(exe), str(data), "1"], check=True, capture_output=True,
                                    text=True).stdout) for _ in range(tries))


class SharedFloor(Strategy):
    """Not a policy: what bulk replay costs before any policy works.  Its
    fused malloc bumps a pointer and its free does nothing, but both keep the
    books every policy keeps in bulk replay, as TLSF's and buddy's fused paths
    do (``Strategy._note_alloc``/``_note_free`` inlined: the live block, A,
    header bytes, the touched range), and the replay loop around them is the
    real one (``replay_ops``).  Its time is the floor under every strategy's
    bare replay."""
    name = "shared-floor"

    def bulk_ops(self) -> tuple:
        s = self
        live = self.live
        new_tuple = tuple.__new__
        W = self.word
        top = [0]

        def malloc(size: int) -> int:
            block = top[0]
            block_size = (size + 2 * W - 1) & -W
            top[0] = block + block_size
            payload = block + W
            live[payload] = new_tuple(LiveBlock, (block, block_size, size, W))
            s.in_use += block_size
            s.header_in_use += W
            if block < s.touched_low:
                s.touched_low = block
            if block + block_size > s.touched_high:
                s.touched_high = block + block_size
            return payload

        def free(payload: int) -> None:
            _, block_size, _, header = live.pop(payload)
            s.in_use -= block_size
            s.header_in_use -= header

        def realloc(payload: int, size: int) -> int:
            new = malloc(size)
            free(payload)
            return new

        return malloc, free, realloc


def process_seconds(argv: list[str]) -> tuple[float, float]:
    """(wall, CPU) seconds of one run of ``argv``, its own processes included."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def has_fused_path(name: str) -> bool:
    s = make_strategy(name)
    bulk_record(s)
    return policy_ops(s, fused=True) != policy_ops(s, fused=False)


def bench_trace(trace, label: str, exe: Path | None, workdir: Path, runs: int,
                names: list[str]) -> dict:
    n = len(trace)
    print(f"\n## {label}: {n} ops")
    c_s = c_malloc_seconds(trace, exe, workdir)
    if c_s is None:
        print("  no C compiler found (cc/gcc): no ratio to the C library")
    else:
        first = c_first_pass_seconds(trace, exe, workdir)
        print(f"  C library malloc: {c_s * 1e3:.2f} ms, {c_s / n * 1e9:.1f} ns an op (the mean of 50 "
              f"passes, the budget's); a first pass in a fresh process {first / n * 1e9:.1f} ns an op")
    floor = float("inf")
    for _ in range(max(3, runs)):
        t0 = time.process_time()
        replay_bare(trace, SharedFloor())
        floor = min(floor, time.process_time() - t0)
    if c_s:
        budget = c_s * 100
        print(f"  the shared loop and books alone (no policy): {floor / n * 1e6:.2f} us an op, "
              f"{floor / budget:.0%} of the 1/100 budget ({budget / n * 1e6:.2f} us an op); "
              f"the policy has {(budget - floor) / n * 1e6:.2f} us an op left")
    print(f"  {'strategy':15} {'bare us/op':>10} {'to C':>8}  {'budget':14} {'build us/op':>11} "
          f"{'to bare':>8}  budget      readable us/op, to C")
    rows = {}
    for name in names:
        fused = has_fused_path(name)
        bare = build = readable = float("inf")
        for _ in range(runs):      # interleaved: the noise falls on both sides
            t0 = time.process_time()
            replay_bare(trace, make_strategy(name))
            bare = min(bare, time.process_time() - t0)
            if fused:
                t0 = time.process_time()
                replay_bare(trace, make_strategy(name), fused=False)
                readable = min(readable, time.process_time() - t0)
            t0 = time.process_time()
            Timeline(trace, name).build()
            build = min(build, time.process_time() - t0)
        to_c = c_s / bare if c_s else float("nan")
        to_bare = bare / build
        c_verdict = ("ok >= 1/100" if to_c >= 0.01 else "MISSES 1/100") if name in O1_CLASS else "(reported)"
        b_verdict = "ok >= 1/2" if to_bare >= 0.5 else "MISSES 1/2"
        beside = (f"  {readable / n * 1e6:10.2f} {c_s / readable if c_s else float('nan'):8.4f}"
                  if fused else "")
        print(f"  {name:15} {bare / n * 1e6:10.2f} {to_c:8.4f}  {c_verdict:14} {build / n * 1e6:11.2f} "
              f"{to_bare:8.2f}  {b_verdict:10}{beside}")
        rows[name] = (to_c, to_bare)
    return rows


def bench_compare(trace, label: str, workdir: Path, runs: int) -> None:
    path = workdir / "trace.rep"
    write_rep(trace, path)
    plain = workdir / "plain_pass.py"
    plain.write_text(PLAIN_PASS)
    py = sys.executable
    plain_s = compare_s = plain_cpu = compare_cpu = float("inf")
    for _ in range(runs):
        wall, cpu = process_seconds([py, str(plain), str(path)])
        plain_s, plain_cpu = min(plain_s, wall), min(plain_cpu, cpu)
        wall, cpu = process_seconds([py, "-m", "heapscope", "compare", str(path)])
        compare_s, compare_cpu = min(compare_s, wall), min(compare_cpu, cpu)
    seven = [a for name in SEVEN for a in ("-s", name)]
    seven_s = seven_cpu = float("inf")
    for _ in range(runs):
        wall, cpu = process_seconds([py, "-m", "heapscope", "compare", str(path), *seven])
        seven_s, seven_cpu = min(seven_s, wall), min(seven_cpu, cpu)
    n_cores = cores()
    for what, wall, cpu in ((f"all {len(strategy_names())} strategies", compare_s, compare_cpu),
                            ("the seven of the budget's time", seven_s, seven_cpu)):
        ratio = wall / plain_s
        print(f"  compare, {what}: {wall:.2f} s; plain Python pass {plain_s:.3f} s; "
              f"ratio {ratio:.1f}x  {'ok <= 25x' if ratio <= 25 else 'MISSES 25x'}")
        print(f"    in CPU seconds: compare {cpu:.2f} (all its processes), plain pass {plain_cpu:.3f}: "
              f"{cpu / plain_cpu:.0f}x, {cpu / plain_cpu / n_cores:.1f}x over {n_cores} idle cores")


def bench_shipping(trace) -> None:
    t0 = time.perf_counter()
    build = build_timelines(trace, strategy_names())
    wall = time.perf_counter() - t0
    from heapscope.allocators.parallel import ParallelBuild
    pb = ParallelBuild(trace, strategy_names())
    pb.wait()
    ship = sum(pb.ship_seconds.values())
    mb = sum(sum(map(len, tl.checkpoints)) + sum(getattr(tl.series, c).nbytes for c in vars(tl.series)
                                                   if isinstance(getattr(tl.series, c), np.ndarray))
             for tl in pb.results.values()) / 2**20
    print(f"  all timelines built in workers and shipped back: {wall:.2f} s wall "
          f"({len(build)} timelines); receiving and unpickling {ship:.3f} s in all "
          f"({ship / wall:.1%} of the wall time) for {mb:.0f} MiB of measures and checkpoints")


def bench_seek(n_ops: int, strategies: list[str]) -> None:
    # A long trace with a steady live set: djgpp-style random actions on slots.
    trace = make_workload("djgpp1997", actions=n_ops, slots=1024, max_size=4096, seed=5)
    rng = np.random.default_rng(0)
    targets = rng.integers(0, len(trace) + 1, size=60).tolist()
    print(f"\n## seek on a {len(trace)}-op trace (budget 50 ms median)")
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
        print(f"  {name:15} build {build:6.1f} s  seek median {med:6.1f} ms  max {max(times) * 1e3:6.1f} ms"
              f"  ratio to budget {med / 50:5.2f}  checkpoints {len(tl.checkpoints)} ({mem:.0f} MiB)"
              f"  before() median {statistics.median(befores) * 1e3:6.1f} ms")


#: rows of the bundled SQLite workload for DESIGN.md's "178k-op real trace"
#: (3 000 rows give the bundled 20 521 ops; 40 000 give about 175 000)
BIG_SQLITE_ROWS = 40_000


def record_big_sqlite():
    """A real trace the size of DESIGN.md's for the compare budget: SQLite's
    shell running the bundled workload on 40 000 rows, recorded now with
    ``heapscope record`` (traces/make_real_traces.py's recipe, bigger); None,
    with the reason printed, when this machine cannot record it."""
    from heapscope.traces import make_real_traces as real
    from heapscope.traces.preload import RecorderUnavailable, preload_library
    if shutil.which("sqlite3") is None:
        print("# no sqlite3 on this machine: no real 178k-op trace recorded")
        return None
    recipe = real.Recipe("sqlite3-sql-40k", "SQLite's shell, the bundled workload on 40 000 rows",
                         ["sqlite3", ":memory:"], ["sqlite3", "--version"],
                         {"work.sql": real.SQL_WORKLOAD.replace("x < 3000", f"x < {BIG_SQLITE_ROWS}")},
                         stdin="work.sql")
    try:
        library = preload_library()
    except RecorderUnavailable as exc:
        print(f"# the recorder cannot run here ({exc}): no real 178k-op trace recorded")
        return None
    sys.stdout.flush()
    shown = os.dup(1)                  # the shell's query results would land in this report
    with tempfile.TemporaryDirectory() as tmp, open(os.devnull, "w") as devnull:
        os.dup2(devnull.fileno(), 1)
        try:
            real.record_recipe(recipe, library, Path(tmp), max_bytes=None)
        finally:
            os.dup2(shown, 1)
            os.close(shown)
        return load_trace(str(Path(tmp) / f"{recipe.name}.rep.gz"))


def traces_to_run(extra: list[str], quick: bool) -> list[tuple[str, object]]:
    """The synthetic workloads, the bundled real traces, a real trace of
    DESIGN.md's size for the compare budget (recorded now), and any others
    asked for.  Vo's workload at 90 000 steps has the same 180 000 ops, with
    longer free lists than real programs keep."""
    scale = 5 if quick else 1
    out = [(f"vo1989, {20_000 // scale} steps", make_workload("vo1989", steps=20_000 // scale, seed=1989)),
           (f"vo1989, {90_000 // scale} steps", make_workload("vo1989", steps=90_000 // scale, seed=1990)),
           (f"djgpp1997, {100_000 // scale} actions, sizes to 4 KiB",
            make_workload("djgpp1997", actions=100_000 // scale, max_size=4096, seed=7))]
    for path in sorted(BUNDLED.glob("*.rep.gz")) + [Path(p) for p in extra]:
        out.append((path.name, load_trace(str(path))))
    if not quick:
        big = record_big_sqlite()
        if big is not None:
            out.append((f"sqlite3-sql on {BIG_SQLITE_ROWS} rows, recorded now", big))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--trace", action="append", default=[], help="another trace file to measure")
    ap.add_argument("--quick", action="store_true", help="smaller workloads, one run each")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--seek-ops", type=int, default=1_000_000)
    ap.add_argument("--seek-strategies", nargs="*", default=["next-fit", "tlsf"])
    ap.add_argument("--no-compare", action="store_true")
    ap.add_argument("--strategies", nargs="*", default=None,
                    help="replay and build only these strategies (all by default)")
    args = ap.parse_args()
    runs = 1 if args.quick else args.runs
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        exe = build_c_replayer(workdir)
        for label, trace in traces_to_run(args.trace, args.quick):
            bench_trace(trace, label, exe, workdir, runs, args.strategies or strategy_names())
            if not args.no_compare:
                bench_compare(trace, label, workdir, runs)
                bench_shipping(trace)
    if args.seek_ops:
        bench_seek(args.seek_ops, args.seek_strategies)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main()
