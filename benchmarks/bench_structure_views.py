"""Redraw time of the ring and bucket structure views at 10 000 free blocks.

    python benchmarks/bench_structure_views.py [--free N] [--frames N] [--size WxH] [--shots DIR]

Budget (DESIGN.md): a view redraws on every shown step, so one redraw --
``show_step`` plus painting the view -- should fit in a 16 ms frame, the heap
map's budget, and cost about what the strategy's own ``structure()`` call
does (the data the view is drawn from, which the window pays anyway).

The heap: 2N mallocs of 24 bytes with every other one freed (N free blocks
that cannot coalesce; Plotnick's giant free(malloc()) first, seed 002), then
a malloc bigger than any free block -- a search through all N, ~N Visit
events -- and a small malloc.  Each policy's last three steps (the last free,
the long search, the small malloc) are shown in turn, so no redraw reuses
the previous picture.  Reported per view: the median of ``show_step`` alone
and of ``show_step`` + render into a QImage the size of the view, over the
three steps and over the two short ones (the long search reads 10 000 events).

``--shots DIR`` also saves screenshots of each view at an early, a middle
and a late step of the bundled default trace and on the big heap.
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
from heapscope.allocators.explain import explain_step  # noqa: E402
from heapscope.allocators.replay import Timeline  # noqa: E402
from tests.gui.big_heaps import every_other_freed, replay_last_steps  # noqa: E402

BUDGET_MS = 16.0
STRATEGIES = ("next-fit", "first-fit", "rotating-list", "bsd-buckets")


def median_ms(fn, repeats: int) -> float:
    times = []
    for i in range(repeats):
        t0 = time.perf_counter()
        fn(i)
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def save_shots(directory: Path, size: tuple[int, int], big: dict) -> None:
    from heapscope.gui.structure_views import view_for
    directory.mkdir(parents=True, exist_ok=True)
    trace = traces.load_trace(str(traces.default_trace_path()))
    for name in STRATEGIES:
        tl = Timeline(trace, name).build()
        for label, t in (("early", 60), ("middle", tl.n // 4), ("late", tl.n - 40)):
            tl.seek(t - 1)
            tl.seek(t)
            structure = tl.strategy.structure()
            view = view_for(structure["kind"])()
            view.resize(*size)
            view.show()
            QApplication.processEvents()     # laid out, as in the window
            view.show_step(structure, explain_step(tl.strategy, tl.last_record))
            QApplication.processEvents()
            view.grab().save(str(directory / f"{name}-{label}-{t}.png"))
            view.close()
        structure, explained = big[name][1]
        view = view_for(structure["kind"])()
        view.resize(*size)
        view.show()
        QApplication.processEvents()
        view.show_step(structure, explained)
        QApplication.processEvents()
        view.grab().save(str(directory / f"{name}-big.png"))
        view.close()
    print(f"screenshots in {directory}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--free", type=int, default=10_000, help="free blocks in the big heap")
    ap.add_argument("--frames", type=int, default=30)
    ap.add_argument("--size", default="560x700", help="view size in pixels")
    ap.add_argument("--shots", type=Path, default=None, help="also save screenshots here")
    args = ap.parse_args(argv)
    width, height = (int(v) for v in args.size.split("x"))

    app = QApplication.instance() or QApplication([])
    from heapscope.gui.app import configure_app
    from heapscope.gui.structure_views import view_for
    configure_app(app)

    trace = every_other_freed(args.free)
    big = {}
    for name in STRATEGIES:
        big[name] = replay_last_steps(trace, name)[1]

    print(f"structure views at {args.free:,} free blocks, view {width}x{height} px; "
          f"median ms of {args.frames} redraws (show_step, then render into a QImage)")
    print(f"  {'strategy':14} {'free':>7}  {'last free':>17}  {'search of all':>17}  {'small malloc':>17}"
          f"  {'structure()':>11}")
    for name in STRATEGIES:
        steps = big[name]
        structure = steps[0][0]
        view = view_for(structure["kind"])()
        view.resize(width, height)
        view.show()
        for _ in range(3):
            app.processEvents()
        canvas = QImage(view.size(), QImage.Format_ARGB32_Premultiplied)
        show_times: list[list[float]] = [[] for _ in steps]
        frame_times: list[list[float]] = [[] for _ in steps]
        for i in range(3 + args.frames * len(steps)):
            k = i % len(steps)
            structure, explained = steps[k]
            t0 = time.perf_counter()
            view.show_step(structure, explained)
            t1 = time.perf_counter()
            view.render(canvas)
            t2 = time.perf_counter()
            if i >= 3:     # warm-up: first layout, fonts
                show_times[k].append((t1 - t0) * 1000)
                frame_times[k].append((t2 - t0) * 1000)
        s, _ = replay_last_steps(trace, name, last=1)
        structure_ms = median_ms(lambda i: s.structure(), max(5, args.frames // 3))
        free = len(structure.get("free_list") or [a for v in structure.get("buckets", {}).values() for a in v])
        cells = []
        for k, (_, explained) in enumerate(steps):
            cells.append(f"{statistics.median(show_times[k]):5.1f} /{statistics.median(frame_times[k]):5.1f}"
                         f" ({len(explained):>5})")
        print(f"  {name:14} {free:>7,}  " + "  ".join(cells) + f"  {structure_ms:8.2f} ms")
        view.close()
    print("  each cell: show_step / show_step + render, in ms (events in the step); "
          f"budget {BUDGET_MS:.0f} ms a frame")
    if args.shots:
        save_shots(args.shots, (width, height), big)
    return 0


if __name__ == "__main__":
    sys.exit(main())
