"""What a step costs in the whole window: every view that follows the model.

    python benchmarks/bench_window_step.py [--trace SPEC] [--strategy S ...] [--steps N] [--at T]

The window keeps one model and every view subscribes to it (gui/show_model.py);
a step redraws the heap map, the gauges, the plots' cursor, the timeline bar,
the explain panel and the structure view, and paints them.  This measures,
in one run and on one machine, the time per step (seek + repaint) of:

* **hidden**: the structure view and the explain panel hidden (the window as
  it was before them: map, gauges, plots, bar);
* **stepping**: both panels shown, as when a student steps by hand (every
  step redraws them);
* **playing**: both shown, the player running (they redraw at most every
  125 ms; the rest every frame).

and reports stepping and playing as ratios to hidden.  Budget (the issue "See
each policy think"): playing costs about what hidden does, so playback keeps
its frame rate; stepping stays well under the 100 ms a key repeat allows.
Each figure is the best of three runs of N consecutive steps.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from PySide6.QtCore import QEventLoop  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402


def per_step(app, window, start: int, steps: int, reps: int = 3) -> float:
    best = float("inf")
    for _ in range(reps):
        window.seek(start)
        app.processEvents()
        t0 = time.perf_counter()
        for _ in range(steps):
            window.step_forward()
            app.processEvents()          # paint, as the event loop would
        best = min(best, (time.perf_counter() - t0) / steps)
    return best


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--trace", default=None, help="a trace or workload spec (default: the bundled trace)")
    p.add_argument("--strategy", "-s", action="append", default=None)
    p.add_argument("--steps", type=int, default=100)
    p.add_argument("--at", type=int, default=5000, help="the step to start from")
    args = p.parse_args(argv)

    app = QApplication.instance() or QApplication([])
    from heapscope import traces
    from heapscope.gui.app import configure_app
    from heapscope.gui.main_window import MainWindow
    configure_app(app)
    window = MainWindow()
    window.resize(1400, 900)
    window.show()
    spec = args.trace or str(traces.default_trace_path())
    print(f"{'strategy':16} {'hidden':>9} {'stepping':>9} {'playing':>9}  stepping/hidden  playing/hidden")
    for name in args.strategy or ["next-fit", "rotating-list", "splay-best-fit", "buddy", "tlsf",
                                  "bsd-buckets"]:
        loop = QEventLoop()
        window.timeline_changed.connect(loop.quit)
        window.set_strategy(name)
        if window.trace is None:
            window.load_spec(spec)
        if window.busy:
            loop.exec()
        window.timeline_changed.disconnect(loop.quit)
        start = min(args.at, window.timeline.n - args.steps)
        for act in (window.act_structure, window.act_explain):
            if not act.isChecked():
                act.trigger()
        app.processEvents()
        stepping = per_step(app, window, start, args.steps)
        window.model.playing = True
        playing = per_step(app, window, start, args.steps)
        window.model.playing = False
        window.act_structure.trigger()
        window.act_explain.trigger()
        app.processEvents()
        hidden = per_step(app, window, start, args.steps)
        window.act_structure.trigger()
        window.act_explain.trigger()
        print(f"{name:16} {1e3 * hidden:7.1f}ms {1e3 * stepping:7.1f}ms {1e3 * playing:7.1f}ms"
              f"  {stepping / hidden:15.2f}  {playing / hidden:14.2f}")
    window.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
