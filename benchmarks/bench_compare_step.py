"""What a step costs in compare mode, against one strategy alone.

    python benchmarks/bench_compare_step.py [--trace SPEC] [--steps N] [--at T] [--size WxH] [--rounds R]

Issue 10 asks that stepping, seeking and playing in compare mode stay as
responsive as one strategy alone.  The window (1600x1000 unless --size)
shows the trace through next fit alone (heap map, structure view, explain
panel, gauges, plots: the window as it opens), and in compare mode with 3
and 7 rows (maps and gauges; 7 rows again with every structure view open).
For each, the time of:

* **step**: one step forward and the repaint (what a key press costs);
* **play**: one frame while playing (the player's flag on: costly views
  throttled), one step a frame;
* **play x40**: one frame that moves 40 steps (1 000 steps/s at 25 frames/s):
  every row seeks;
* **seek**: a jump to a random step and the repaint (median of 30);

Entering compare mode densifies the rows' timelines in the background
(gui/background_densifier.py); the run waits for that to end and reports its
time.  "1 strategy" is next fit with its build's checkpoints only (as the
window opens: leaving compare mode keeps the denser ones), and "7 rows, build's
checkpoints" is seven rows without the denser ones (compare mode before it
densified), so both ratios come from the same run.

The modes take turns, R rounds (default 3), and each figure is the best of
its rounds, so one mode does not get the quiet minute and another the busy
one; compare mode's figures are printed as ratios to one strategy's from the
same run.  Then the cost of leaving and entering compare mode once every
timeline is built (nothing is replayed: they are kept), and the wall time of
building the six timelines not built yet at once in worker processes.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from PySide6.QtCore import QEventLoop  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

SEVEN = ["next-fit", "rotating-list", "splay-best-fit", "buddy", "tlsf", "bsd-buckets", "dlmalloc"]
THREE = ["next-fit", "tlsf", "buddy"]
COLUMNS = ("step", "play", "play x40", "seek")


def per_frame(app, window, start: int, frames: int, stride: int = 1) -> float:
    """The mean time of a frame that moves ``stride`` steps."""
    window.seek(start)
    app.processEvents()
    t0 = time.perf_counter()
    for _ in range(frames):
        window.seek(window.model.position + stride)
        app.processEvents()          # paint, as the event loop would
    return (time.perf_counter() - t0) / frames


def seeks(app, window, n: int, count: int = 30, seed: int = 1) -> float:
    rng = random.Random(seed)
    times = []
    for _ in range(count):
        t = rng.randrange(1, n)
        t0 = time.perf_counter()
        window.seek(t)
        app.processEvents()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def measure(app, window, start: int, steps: int) -> dict:
    window.model.playing = False
    step = per_frame(app, window, start, steps)
    window.model.playing = True
    play = per_frame(app, window, start, steps)
    play40 = per_frame(app, window, start, max(10, steps // 4), stride=40)
    window.model.playing = False
    app.processEvents()
    seek = seeks(app, window, window.model.n)
    return {"step": step, "play": play, "play x40": play40, "seek": seek}


def wait(app, condition, timeout: float = 600) -> None:
    deadline = time.monotonic() + timeout
    while not condition() and time.monotonic() < deadline:
        app.processEvents(QEventLoop.AllEvents, 50)
        time.sleep(0.01)


def settle(app, rounds: int = 5) -> None:
    """Let the window's queued work run: ``rounds`` turns of the event loop."""
    for _ in range(rounds):
        app.processEvents()
        time.sleep(0.01)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--trace", default=None, help="a trace or workload spec (default: the bundled trace)")
    p.add_argument("--steps", type=int, default=60)
    p.add_argument("--at", type=int, default=5000, help="the step to start from")
    p.add_argument("--size", default="1600x1000")
    p.add_argument("--rounds", type=int, default=3)
    args = p.parse_args(argv)
    width, height = (int(v) for v in args.size.split("x"))

    app = QApplication.instance() or QApplication([])
    from heapscope import traces
    from heapscope.gui.app import configure_app
    from heapscope.gui.main_window import MainWindow
    configure_app(app)
    window = MainWindow()
    window.resize(width, height)
    window.show()
    spec = args.trace or str(traces.default_trace_path())
    window.load_spec(spec)
    wait(app, lambda: window.timeline is not None and not window.busy)
    n = window.model.n
    start = max(0, min(args.at, n - args.steps * 40 - 1))
    print(f"# {window.model.label}: {n:,} steps, window {width}x{height}, from step {start:,}, "
          f"best of {args.rounds} rounds")

    t0 = time.perf_counter()
    window.compare.compare(SEVEN)
    wait(app, lambda: window.compare.active and not window.busy)
    build = time.perf_counter() - t0
    densifier = window.compare.densifier
    t0 = time.perf_counter()
    wait(app, lambda: not densifier.busy)
    densify = time.perf_counter() - t0
    settle(app)

    view = window.compare.view
    timelines = [window.model.timeline(r) for r in range(len(SEVEN))]
    dense = {id(tl): (tl.checkpoints, tl.checkpoint_steps) for tl in timelines}
    # each timeline's build's own checkpoints, the added ones left out
    sparse = {id(tl): ([b for s, b in zip(tl.checkpoint_steps, tl.checkpoints)
                        if s not in tl.added_checkpoint_steps],
                       [s for s in tl.checkpoint_steps if s not in tl.added_checkpoint_steps])
              for tl in timelines}
    added_bytes = sum(tl.added_checkpoint_bytes for tl in timelines)
    added = sum(len(tl.added_checkpoint_steps) for tl in timelines)

    def use(which):
        for tl in timelines:
            tl.checkpoints, tl.checkpoint_steps = which[id(tl)]
            tl.back_cache.clear()

    def single():
        window.compare.leave()
        use(sparse)

    def rows(names, open_structures=False, densified=True):
        def show():
            use(dense if densified else sparse)
            window.compare.compare(names)
            window.compare.densifier.cancel()       # nothing left to do (or not wanted)
            view.set_structures_visible(open_structures)
        return show

    modes = {"1 strategy": single, "3 rows": rows(THREE), "7 rows": rows(SEVEN),
             "7 rows, open": rows(SEVEN, True),
             "7 rows, build's checkpoints": rows(SEVEN, densified=False)}
    results: dict[str, dict] = {}
    for _ in range(args.rounds):
        for name, show in modes.items():
            show()
            settle(app)
            assert window.compare.active == (name != "1 strategy")
            got = measure(app, window, start, args.steps)
            best = results.setdefault(name, got)
            for k in COLUMNS:
                best[k] = min(best[k], got[k])

    toggles = []
    use(dense)
    window.compare.compare(SEVEN)
    settle(app)
    for _ in range(3):
        t0 = time.perf_counter()
        window.compare.toggle()          # leave
        app.processEvents()
        leave = time.perf_counter() - t0
        t0 = time.perf_counter()
        window.compare.toggle()          # and come back
        app.processEvents()
        toggles.append((leave, time.perf_counter() - t0))
    leave, enter = min(toggles)

    base = results["1 strategy"]
    print(f"{'':28} " + " ".join(f"{k:>9}" for k in COLUMNS) + "   ratios to 1 strategy")
    for name, r in results.items():
        ratios = "" if name == "1 strategy" else "   " + "  ".join(
            f"{k} {r[k] / base[k]:.2f}" for k in COLUMNS)
        print(f"{name:28} " + " ".join(f"{1e3 * r[k]:7.1f}ms" for k in COLUMNS) + ratios)
    print(f"building the 6 strategies not built yet, at once: {build:.2f} s")
    print(f"densifying the 7 rows' timelines in the background: {densify:.2f} s, "
          f"{added} checkpoints, {added_bytes / 2**20:.1f} MiB")
    print(f"leaving compare mode (7 rows): {1e3 * leave:.0f} ms; entering it again: {1e3 * enter:.0f} ms "
          f"(no replay)")
    window.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
