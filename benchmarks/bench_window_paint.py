"""What every window pays for: making it and its rows, and painting them (issues 20, 25).

    python benchmarks/bench_window_paint.py [--trace SPEC] [--rounds R] [--steps N]

Measured as CPU seconds of this process (``time.process_time``: the machine
is shared, wall time says little), each figure the best of R rounds (a
window's and a map's the least of 3 and 10 made in a round):

* **window**: ``MainWindow()``, shown at 1400x900 and painted once;
* **map**: one ``HeapMapWidget()`` (what each compare row makes);
* **step**: one step forward of the window on the bundled trace and its paint;
* **seek**: a jump of 997 steps and its paint;
* **compare row**: one more row of compare mode (six rows to seven), and its paint;
* **compare step**: one step of seven rows in compare mode and its paint.

Run it with the checkout before a change and the one after, taking turns,
to get ratios from one run (docs/benchmarks.md, "The window's own costs").
"""

from __future__ import annotations

import argparse
import os
import sys
import time

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtWidgets import QApplication  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_compare_step import SEVEN, settle as _settle, wait  # noqa: E402  (one copy of the helpers)


def settle(app) -> None:
    _settle(app, rounds=3)


def cpu(fn, n: int) -> float:
    """CPU seconds of one call of ``fn`` (the mean of ``n``)."""
    t0 = time.process_time()
    for _ in range(n):
        fn()
    return (time.process_time() - t0) / n


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--trace", default=None)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--steps", type=int, default=30)
    args = p.parse_args(argv)

    app = QApplication.instance() or QApplication([])
    from heapscope import traces
    from heapscope.gui.app import configure_app
    from heapscope.gui.heap_map import HeapMapWidget
    from heapscope.gui.main_window import MainWindow
    configure_app(app)
    spec = args.trace or str(traces.default_trace_path())

    def new_window():
        w = MainWindow()
        w.resize(1400, 900)
        w.show()
        app.processEvents()
        w.close()
        w.deleteLater()
        app.processEvents()

    def new_map():
        m = HeapMapWidget()
        m.deleteLater()

    window = MainWindow()
    window.resize(1400, 900)
    window.show()
    window.load_spec(spec)
    wait(app, lambda: window.timeline is not None and not window.busy)
    start = 5000

    def step():
        window.step_forward()
        app.processEvents()

    def seek():
        window.seek((window.model.position + 997) % (window.model.n - 1))
        app.processEvents()

    window.compare.compare(SEVEN)
    wait(app, lambda: window.compare.active and not window.busy)
    wait(app, lambda: not window.compare.densifier.busy)
    settle(app)

    def compare_row():
        window.compare.compare(SEVEN[:6])
        app.processEvents()
        t0 = time.process_time()
        window.compare.compare(SEVEN)
        app.processEvents()
        return time.process_time() - t0

    results: dict[str, float] = {}

    def keep(name, value):
        results[name] = min(results.get(name, float("inf")), value)

    for _ in range(args.rounds):
        window.compare.leave()
        settle(app)
        window.seek(start)
        app.processEvents()
        keep("step", cpu(step, args.steps))
        keep("seek", cpu(seek, args.steps))
        keep("window", min(cpu(new_window, 1) for _ in range(3)))
        keep("map", min(cpu(new_map, 1) for _ in range(10)))
        settle(app)
        window.compare.compare(SEVEN)
        window.compare.densifier.cancel()
        settle(app)
        window.seek(start)
        app.processEvents()
        keep("compare step", cpu(step, args.steps))
        keep("compare row", min(compare_row() for _ in range(2)))
    for name in ("window", "map", "step", "seek", "compare row", "compare step"):
        print(f"{name:14} {results[name] * 1000:8.1f} ms CPU")
    return 0


if __name__ == "__main__":
    sys.exit(main())
