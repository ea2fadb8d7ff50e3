"""Benchmark: issue 25's budgets on a real recorded trace of 10 000 000 operations.

Budgets (DESIGN.md, "Performance budgets"; issue 25):

* ``heapscope check TRACE``: within 8 s and 500 MB;
* ``heapscope compare TRACE`` of every built-in strategy: within 150 s of
  wall time on two cores, and no process (the command or a worker) over 1 GB;
* ``heapscope compare -s next-fit TRACE`` alone, for scale;
* the window with one strategy (``window``): within 2 GB, its whole
  timeline built within 3 times ``compare``'s time for that strategy;
* compare mode with seven rows (``window7``): within 6 GB, or the window
  says before it starts what it will need and offers fewer rows
  (gui/compare_memory.py).

The window runs offscreen in a child process (``--window-child``): it opens
the trace, waits until the whole timeline is built (and with ``--rows N``,
until compare mode shows N rows, each built), and prints how long that
took.  Its own CPU and that of its workers (the forkserver's children,
which ``wait4`` on the window does not see) is the sum of each process's
``utime + stime`` from /proc, sampled with the peaks.

The trace is a bundled recording repeated end to end with fresh ids
(benchmarks/make_scale_trace.py writes it to /tmp; 116 MB of text is not
committed).  Each command runs as a child process; every 0.2 s the
benchmark reads the peak resident size (``VmHWM`` in /proc) of it and of
every process under it, so each compare worker's peak is seen, and its CPU
time (user + system, children included) comes from ``wait4``.

    python benchmarks/make_scale_trace.py              # /tmp/gcc-cc1-10000000.rep
    nice -n 10 python benchmarks/bench_scale.py [--trace PATH] [--only check,next-fit,compare]

The machine is shared: run it niced, and read the CPU column as well as the
wall one (docs/benchmarks.md, "Ten million operations").
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

HEAPSCOPE = [sys.executable, "-m", "heapscope"]
BUDGETS = {"check": (8.0, 500), "next-fit": (None, 1024), "compare": (150.0, 1024),
           "window": (None, 2048), "window7": (None, 6144)}
#: compare mode's seven rows (as benchmarks/bench_stall.py enters it)
SEVEN = ["next-fit", "first-fit", "rotating-list", "splay-best-fit", "buddy", "tlsf", "bsd-buckets"]
_TICKS = os.sysconf("SC_CLK_TCK")


def _children(pid: int) -> list[int]:
    """Every process under ``pid`` (from /proc/PID/task/*/children)."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        try:
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children") as f:
                    kids = [int(k) for k in f.read().split()]
                out += kids
                todo += kids
        except OSError:
            continue
    return out


def _peak_kib(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def _cpu_seconds(pid: int) -> float | None:
    """utime + stime of ``pid`` so far (/proc/PID/stat), or None once it has gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rpartition(")")[2].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / _TICKS


def run(argv: list[str], command: list[str] | None = None) -> dict:
    """Run ``heapscope argv``; wall and CPU seconds, and each process's peak RSS (MiB)."""
    import tempfile
    t0 = time.perf_counter()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen((command or HEAPSCOPE) + argv, stdout=out, stderr=err)
        peaks: dict[int, int] = {}
        cpus: dict[int, float] = {}     # each process's CPU, as last seen
        order: list[int] = []           # the processes in the order they were first seen
        while True:
            # wait4 gives the CPU of the command and of every child it waited for
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            for p in [proc.pid] + _children(proc.pid):
                if p not in peaks:
                    order.append(p)
                peaks[p] = max(peaks.get(p, 0), _peak_kib(p))
                cpu = _cpu_seconds(p)
                if cpu is not None:
                    cpus[p] = cpu
            time.sleep(0.2)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(), err.read().decode()
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime,
            "peak_mib": {pid: kib / 1024 for pid, kib in peaks.items()},
            "main_mib": peaks.get(proc.pid, 0) / 1024, "returncode": proc.returncode,
            "order": order, "cpus": cpus, "sampled_cpu": sum(cpus.values()),
            "stdout": stdout, "stderr": stderr}


def report(name: str, result: dict) -> str:
    wall_budget, mib_budget = BUDGETS[name]
    peaks = sorted(result["peak_mib"].values(), reverse=True)
    worst = peaks[0] if peaks else 0
    workers = [round(p) for p in peaks[1:]] if len(peaks) > 1 else []
    wall_ok = "" if wall_budget is None else (" (budget %.0f s: %s)" % (
        wall_budget, "met" if result["wall"] <= wall_budget else
        "missed by %.0f s" % (result["wall"] - wall_budget)))
    mem_ok = " (budget %d MB: %s)" % (mib_budget, "met" if worst <= mib_budget else
                                      "missed by %.0f MB" % (worst - mib_budget))
    each = ", ".join(f"{result['peak_mib'][p]:.0f} MiB/{result['cpus'].get(p, 0):.1f} s"
                     for p in result["order"])
    return (f"{name}: wall {result['wall']:.1f} s{wall_ok}, CPU {result['cpu']:.1f} s "
            f"(sampled per process: {result['sampled_cpu']:.1f} s), "
            f"largest process {worst:.0f} MiB{mem_ok}, all together {sum(peaks):.0f} MiB; command {result['main_mib']:.0f} MiB, "
            f"others {workers} MiB; exit {result['returncode']}\n"
            f"  each process in the order it started (peak RSS / CPU): {each}")


def window_child(path: str, rows: int) -> int:
    """In this process: the window, offscreen, opening ``path`` and building
    its whole timeline; with ``rows`` > 1, then compare mode with the first
    ``rows`` of :data:`SEVEN`, until every row is built.  Prints the seconds
    each took (wall) and this process's CPU."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from PySide6.QtWidgets import QApplication
    from bench_stall import built, settle, wait_until
    from heapscope.gui.app import configure_app
    from heapscope.gui.main_window import MainWindow
    app = QApplication.instance() or QApplication([])
    configure_app(app)
    window = MainWindow()
    window.resize(1280, 720)
    window.show()
    settle(app, 1.0)
    t0 = time.perf_counter()
    window.open_trace(path)
    wait_until(app, lambda: window.timeline is not None, 3600)
    shown = time.perf_counter() - t0
    wait_until(app, lambda: built(window), 36000)
    print(f"window: step 0 shown after {shown:.1f} s, {window.strategy_name}'s whole timeline "
          f"built after {time.perf_counter() - t0:.1f} s wall, {time.process_time():.1f} s of "
          f"the window's own CPU", flush=True)
    if rows > 1:
        names = SEVEN[:rows]
        t1 = time.perf_counter()
        window.compare.compare(names)
        building = getattr(window.model, "building", None)
        wait_until(app, lambda: (window.compare.active and not window.compare.busy
                                 and len(window.model.shown) == rows
                                 and not (building and building())), 36000)
        print(f"compare mode: {rows} rows built after {time.perf_counter() - t1:.1f} s wall",
              flush=True)
    window.close()
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--trace", default="/tmp/gcc-cc1-10000000.rep")
    p.add_argument("--only", default="check,next-fit,compare",
                   help="comma-separated: check, next-fit, compare, window, window7")
    p.add_argument("--window-child", type=int, default=0, metavar="ROWS", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.window_child:
        return window_child(args.trace, args.window_child)
    if not os.path.exists(args.trace):
        print(f"{args.trace}: no such file (make it with benchmarks/make_scale_trace.py)",
              file=sys.stderr)
        return 2
    with open("/proc/loadavg") as f:
        print(f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load average "
              f"{' '.join(f.read().split()[:3])}, {os.cpu_count()} cores; {args.trace}")
    commands = {"check": ["check", args.trace],
                "next-fit": ["compare", "-s", "next-fit", args.trace],
                "compare": ["compare", args.trace],
                "window": ["--trace", args.trace, "--window-child", "1"],
                "window7": ["--trace", args.trace, "--window-child", "7"]}
    child = [sys.executable, os.path.abspath(__file__)]
    for name in args.only.split(","):
        result = run(commands[name], child if name.startswith("window") else None)
        print(report(name, result), flush=True)
        if name == "compare":
            # the workers start longest first (allocators/replay_costs.py): their processes above
            from heapscope.allocators.registry import strategy_names
            from heapscope.allocators.replay_costs import longest_first
            print(f"  the workers' strategies, in the order they started: "
                  f"{', '.join(longest_first(strategy_names()))}")
        if name != "check":
            print(result["stdout"], flush=True)
        if result["returncode"]:
            print(result["stderr"], file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
