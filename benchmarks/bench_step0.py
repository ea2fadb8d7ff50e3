"""Benchmark: how long after the window appears step 0 of a trace is drawn (issue 25).

    python benchmarks/make_scale_trace.py --ops 1000000      # /tmp/gcc-cc1-1000000.rep
    python benchmarks/bench_step0.py [--trace PATH] [--runs 3]

Each run is a fresh process doing what ``heapscope TRACE`` does (gui/app.py:
``make_window``, ``show_on_screen``, ``keep_long_lived``, then the workers'
server), offscreen at 1280 x 720, and prints the wall time from the window
shown to step 0 drawn (the timeline set and the event loop's next turn, its
paint), and this process's CPU time over the same span (every thread).
``--as-before`` starts the workers' server beside the load, as gui/app.py
did before (it now waits for the first load: ``warm_up_after_load``).
Runs alternate before/after so that both see the same load.  Not a timed
test: the figures go to docs/benchmarks.md with the date and the load.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time


def child(path: str, as_before: bool) -> None:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication
    app = QApplication([])
    from heapscope.allocators.parallel import warm_up
    from heapscope.gui import app as gui_app
    from heapscope.gui.gui_thread_gc import keep_long_lived
    window = gui_app.make_window(path)
    window.resize(1280, 720)
    gui_app.show_on_screen(window)
    wall, cpu = time.perf_counter(), time.process_time()
    keep_long_lived()
    if as_before:
        warm_up()
    else:
        gui_app.warm_up_after_load(window)
    while window.timeline is None:
        app.processEvents()
        time.sleep(0.002)
    app.processEvents()
    print(f"{time.perf_counter() - wall:.2f} {time.process_time() - cpu:.2f}", flush=True)
    os._exit(0)       # the window's worker is not waited for


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--trace", default="/tmp/gcc-cc1-1000000.rep")
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--child", choices=["before", "after"], help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        child(args.trace, args.child == "before")
        return 0
    print(f"# {time.strftime('%Y-%m-%d %H:%M')} load average {os.getloadavg()[0]:.2f}; {args.trace}")
    for run in range(args.runs):
        for mode in ("before", "after"):
            out = subprocess.run([sys.executable, __file__, "--trace", args.trace, "--child", mode],
                                 capture_output=True, text=True, timeout=600).stdout.split()
            print(f"{mode:6} run {run + 1}: step 0 drawn {out[0]} s after the window shows, "
                  f"{out[1]} s CPU (load {os.getloadavg()[0]:.1f})", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
