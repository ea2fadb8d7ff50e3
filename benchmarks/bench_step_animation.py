"""What playing a step event by event costs, against showing it at once.

    python benchmarks/bench_step_animation.py [--step N] [--steps K]

For each strategy's structure view on the bundled default trace, from step N
on, K steps are shown three ways and timed (medians per step):

* **static**: ``show_step`` of the whole step (what every step costs);
* **events**: ``show_step``, then ``set_current_event(i)`` for every event of
  the step with no transition -- the drawings a micro-step or an animation
  makes, the structure after each event (``ShownStep.structure_at``, rebuilt
  from ``Timeline.before()``) included;
* **frame**: one frame of a transition (``Transition.seek``) plus a render of
  the view into an image the size of the view, mid-way through each event.

Reported as ratios to *static*, in one run (DESIGN.md: speed is measured as
ratios).  Budget: a frame of a transition fits in a 40 ms tick (25 frames
per second) and an event's drawing costs about what the static drawing of a
step does, so an animated step at 1-4 steps per second never falls behind.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from PySide6.QtGui import QImage  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from heapscope import traces  # noqa: E402
from heapscope.allocators.replay import Timeline  # noqa: E402
from heapscope.gui.show_model import ShowModel  # noqa: E402
from heapscope.gui.structure_views import view_for  # noqa: E402

STRATEGIES = ("next-fit", "rotating-list", "splay-best-fit", "buddy", "tlsf", "bsd-buckets")
FRAME_BUDGET_MS = 40.0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--step", type=int, default=9000)
    ap.add_argument("--steps", type=int, default=30)
    args = ap.parse_args()
    app = QApplication.instance() or QApplication([])
    trace = traces.load_trace(str(traces.default_trace_path()))
    print(f"default trace, steps {args.step + 1}..{args.step + args.steps}; medians per step (per frame)")
    print(f"{'strategy':15s} {'static':>9s} {'events':>9s} {'ratio':>6s} {'frame':>9s} {'events/step':>12s}")
    for name in STRATEGIES:
        tl = Timeline(trace, name).build()
        model = ShowModel()
        model.set_trace(trace)
        model.show([model.add_timeline(tl)], args.step)
        step = model.step()
        view = view_for(step.structure["kind"])()
        view.resize(560, 700)
        view.show()
        app.processEvents()
        image = QImage(view.size(), QImage.Format_ARGB32_Premultiplied)
        static, events, frames, counts = [], [], [], []
        for p in range(args.step + 1, args.step + args.steps + 1):
            model.seek(p)
            step = model.step()
            step.structure
            step.explained
            t0 = time.perf_counter()
            view.set_states(step.structure_at)
            view.show_step(step.structure, step.explained, step.record)
            static.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            view.show_step(step.structure, step.explained, step.record)
            for i in range(step.event_count):
                view.set_current_event(i)
            events.append(time.perf_counter() - t0)
            counts.append(step.event_count)
            view.manual_transitions = True
            view.show_step(step.structure, step.explained, step.record)
            view.set_current_event(0)
            for i in range(1, step.event_count):
                view.set_current_event(i, 200)
                tr = view.transition
                t0 = time.perf_counter()
                if tr is not None and tr.running:
                    tr.seek(100)
                view.render(image)
                frames.append(time.perf_counter() - t0)
            view.manual_transitions = False
            view.finish_transition()
        s, e = statistics.median(static) * 1000, statistics.median(events) * 1000
        f = statistics.median(frames) * 1000 if frames else float("nan")
        print(f"{name:15s} {s:7.2f}ms {e:7.2f}ms {e / s:6.1f} {f:7.2f}ms {statistics.mean(counts):12.1f}"
              + ("" if f <= FRAME_BUDGET_MS else "   OVER the frame budget"))
        view.close()


if __name__ == "__main__":
    main()
