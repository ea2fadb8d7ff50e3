"""Benchmark: issue 25's budgets on a real recorded trace of 10 000 000 operations.

Budgets (DESIGN.md, "Performance budgets"; issue 25):

* ``heapscope check TRACE``: within 8 s and 500 MB;
* ``heapscope compare TRACE`` of every built-in strategy: within 150 s of
  wall time on two cores, and no process (the command or a worker) over 1 GB;
* ``heapscope compare -s next-fit TRACE`` alone, for scale.

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
BUDGETS = {"check": (8.0, 500), "next-fit": (None, 1024), "compare": (150.0, 1024)}


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


def run(argv: list[str]) -> dict:
    """Run ``heapscope argv``; wall and CPU seconds, and each process's peak RSS (MiB)."""
    import tempfile
    t0 = time.perf_counter()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(HEAPSCOPE + argv, stdout=out, stderr=err)
        peaks: dict[int, int] = {}
        while True:
            # wait4 gives the CPU of the command and of every child it waited for
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            for p in [proc.pid] + _children(proc.pid):
                peaks[p] = max(peaks.get(p, 0), _peak_kib(p))
            time.sleep(0.2)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(), err.read().decode()
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime,
            "peak_mib": {pid: kib / 1024 for pid, kib in peaks.items()},
            "main_mib": peaks.get(proc.pid, 0) / 1024, "returncode": proc.returncode,
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
    return (f"{name}: wall {result['wall']:.1f} s{wall_ok}, CPU {result['cpu']:.1f} s, "
            f"largest process {worst:.0f} MiB{mem_ok}; command {result['main_mib']:.0f} MiB, "
            f"others {workers} MiB; exit {result['returncode']}")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--trace", default="/tmp/gcc-cc1-10000000.rep")
    p.add_argument("--only", default="check,next-fit,compare",
                   help="comma-separated: check, next-fit, compare")
    args = p.parse_args(argv)
    if not os.path.exists(args.trace):
        print(f"{args.trace}: no such file (make it with benchmarks/make_scale_trace.py)",
              file=sys.stderr)
        return 2
    with open("/proc/loadavg") as f:
        print(f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load average "
              f"{' '.join(f.read().split()[:3])}, {os.cpu_count()} cores; {args.trace}")
    commands = {"check": ["check", args.trace],
                "next-fit": ["compare", "-s", "next-fit", args.trace],
                "compare": ["compare", args.trace]}
    for name in args.only.split(","):
        result = run(commands[name])
        print(report(name, result), flush=True)
        if name != "check":
            print(result["stdout"], flush=True)
        if result["returncode"]:
            print(result["stderr"], file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
