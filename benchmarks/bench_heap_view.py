"""Frame time of the heap map with 100 000 blocks, and stepping through such
a heap (DESIGN.md, performance budgets).

    python benchmarks/bench_heap_view.py [--blocks N] [--frames N] [--steps N] [--size WxH]

Budgets: a heap view frame with 100 000 blocks in <= 16 ms; stepping through
such a heap at >= 30 redraws per second.

The heap is real: K&R next fit after N mallocs of 1..500 bytes with every
sixth block freed again (so used and free blocks alternate and nothing
coalesces into one big block).  A frame is what the window does for each
step: cut the blocks into runs and paint the cell image (numpy), hand it to
the ``pg.ImageItem`` (an indexed QImage), and render the map's view into a
QImage the size of the widget.  Two heaps that differ by a few hundred blocks
alternate, so no frame can reuse the previous one's picture.

Reported apart, because it is the core's part and not the view's: turning
``strategy.walk_tuples()`` (a list of 100 000 tuples, built in Python) into
numpy columns, and ``walk_tuples()`` itself.

**Stepping** is what the window does when a student presses the right arrow
on a 100 000-block heap: a timeline of the same heap (the N mallocs and
frees, then random mallocs and frees of the same sizes), the window's model
and a heap map bound to it; one redraw is ``model.seek(t + 1)`` (the
timeline replays the step with its events, the heap tracker edits the
blocks it changed: allocators/heap_tracker.py), the map's redraw, and rendering
its view.  Reported as redraws per second and as a ratio to the 30 per
second budget, for steps forward, steps back (the tracker undoes its
edits; the timeline starts from a copy in its step-back cache, replayed
once from a checkpoint on the first step back: allocators/replay.py,
``BackCache``), and, for comparison, steps that walk the whole heap as the
map did before the tracker (the tracker made to forget its heap before each
step), and steps back after a jump (the tracker has no edit to undo: it
walks once every few steps, allocators/heap_tracker.py).  For the step-back cache: the slowest step back (the one that fills
it), the copies it holds and their bytes (as the cache counts them, and one
copy measured by tracemalloc).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import tracemalloc
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402
from PySide6.QtGui import QImage, QPainter  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from heapscope.allocators.registry import make_strategy  # noqa: E402
from heapscope.gui import heap_cells  # noqa: E402

BUDGET_MS = 16.0


def build_heap(n_blocks: int, seed: int = 1):
    """A next-fit heap of about ``n_blocks`` blocks; the strategy."""
    rng = np.random.default_rng(seed)
    s = make_strategy("next-fit", record=False)
    # freeing every sixth block splits no block and joins none: one block per malloc
    payloads = [s.malloc(int(x)) for x in rng.integers(1, 501, size=n_blocks)]
    for p in payloads[::6]:
        s.free(p)
    return s, payloads


def median_ms(fn, repeats: int) -> float:
    times = []
    for i in range(repeats):
        t0 = time.perf_counter()
        fn(i)
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--blocks", type=int, default=100_000)
    ap.add_argument("--frames", type=int, default=40)
    ap.add_argument("--size", default="1000x600", help="heap map size in pixels")
    ap.add_argument("--steps", type=int, default=120, help="steps stepped through, each way")
    ap.add_argument("--strategy", action="append", default=None,
                    help="strategies stepped through (default: next-fit and tlsf)")
    args = ap.parse_args(argv)
    args.strategy = args.strategy or ["next-fit", "tlsf"]
    width, height = (int(v) for v in args.size.split("x"))

    app = QApplication.instance() or QApplication([])
    from heapscope.gui.app import configure_app
    from heapscope.gui.heap_map import HeapMapWidget
    configure_app(app)

    t0 = time.perf_counter()
    strategy, payloads = build_heap(args.blocks)
    setup_s = time.perf_counter() - t0
    walk_a = strategy.walk_tuples()
    # the second heap: free 300 more blocks
    for p in payloads[1:1800:6]:
        strategy.free(p)
    walk_b = strategy.walk_tuples()
    brk = strategy.arena.brk
    arrays = [heap_cells.block_arrays(walk_a, brk), heap_cells.block_arrays(walk_b, brk)]
    n_blocks = len(walk_a)

    view = HeapMapWidget()
    view.resize(width, height)
    view.show()
    for _ in range(5):
        app.processEvents()
    plot = view.plot_widget
    canvas = QImage(plot.size(), QImage.Format_ARGB32_Premultiplied)

    def render_view() -> None:
        painter = QPainter(canvas)
        plot.render(painter)
        painter.end()

    def frame(i: int) -> None:
        view.show_blocks(arrays[i % 2])
        render_view()

    for i in range(3):   # warm-up: first layout, fonts, axis pictures
        frame(i)
    frame_ms = median_ms(frame, args.frames)

    def image_only(i: int) -> None:
        heap_cells.heap_image(arrays[i % 2], layout=view.layout_, scratch=view._scratch)

    def upload_and_render(i: int) -> None:
        view.image_item.setImage(view.image if i % 2 else view.image[::-1].copy(), autoLevels=False)
        render_view()

    image_ms = median_ms(image_only, args.frames)
    upload_ms = median_ms(upload_and_render, args.frames)
    walks = [walk_a, walk_b]
    arrays_ms = median_ms(lambda i: heap_cells.block_arrays(walks[i % 2], brk), max(5, args.frames // 4))
    walk_ms = median_ms(lambda i: strategy.walk_tuples(), 5)
    lay = view.layout_

    print(f"heap map frame, {n_blocks:,} blocks, heap {brk / 2**20:.1f} MiB, "
          f"image {lay.rows} x {lay.cols} cells of {lay.bytes_per_cell} B, view {width}x{height} px")
    print(f"  frame (runs + cells + setImage + render) median {frame_ms:6.2f} ms   "
          f"= {frame_ms / BUDGET_MS:.2f} x the {BUDGET_MS:.0f} ms budget "
          f"({'within' if frame_ms <= BUDGET_MS else 'OVER'} budget)")
    print(f"    runs + cell image (numpy)        median {image_ms:6.2f} ms")
    print(f"    setImage + render to a QImage    median {upload_ms:6.2f} ms")
    print("  core side, not part of the frame budget:")
    print(f"    walk_tuples() -> numpy columns   median {arrays_ms:6.2f} ms")
    print(f"    walk_tuples() itself             median {walk_ms:6.2f} ms")
    print(f"  (building the heap took {setup_s:.1f} s)")
    view.close()
    stepping(app, args, width, height)
    return 0


def stepping_trace(n_blocks: int, extra: int, seed: int = 1):
    """N mallocs of 1..500 bytes, every sixth block freed (the heap of the
    frame benchmark), then ``extra`` random mallocs and frees of the same
    sizes; the position where the extra operations begin."""
    from heapscope import traces
    rng = np.random.default_rng(seed)
    ops = [("a", i, int(x)) for i, x in enumerate(rng.integers(1, 501, size=n_blocks))]
    ops += [("f", i) for i in range(0, n_blocks, 6)]
    start = len(ops)
    live = [i for i in range(n_blocks) if i % 6]
    nid = n_blocks
    for _ in range(extra):
        if rng.random() < 0.5:
            ops.append(("f", live.pop(int(rng.integers(len(live))))))
        else:
            ops.append(("a", nid, int(rng.integers(1, 501))))
            live.append(nid)
            nid += 1
    return traces.Trace.from_ops(ops), start


def stepping(app, args, width: int, height: int) -> None:
    """Redraws per second stepping through a 100 000-block heap in the model."""
    trace, start = stepping_trace(args.blocks, 4 * args.steps + 10)
    for strategy in args.strategy:
        stepping_one(app, args, width, height, trace, start, strategy)


def stepping_one(app, args, width, height, trace, start, strategy) -> None:
    from heapscope.allocators.replay import Timeline
    from heapscope.gui.heap_map import HeapMapWidget
    from heapscope.gui.show_model import ShowModel

    t0 = time.perf_counter()
    # few checkpoints: pickling a 100 000-block heap every few hundred steps
    # would cost more than the replay
    timeline = Timeline(trace, strategy, checkpoint_every=max(1, len(trace) // 8)).build()
    build_s = time.perf_counter() - t0
    model = ShowModel()
    model.set_trace(trace)
    key = model.add_timeline(timeline)
    view = HeapMapWidget()
    view.resize(width, height)
    view.show()
    for _ in range(5):
        app.processEvents()
    view.bind(model)
    model.show([key], start)
    tracker = model._trackers[key]
    # the timeline's own replay of a step, timed apart: it is the core's cost
    # (K&R's free walks the ring to its address place, thousands of blocks)
    replay_ms = []
    seek = timeline.seek

    def timed_seek(t):
        t0 = time.perf_counter()
        try:
            return seek(t)
        finally:
            replay_ms[-1] += (time.perf_counter() - t0) * 1000

    timeline.seek = timed_seek

    def redraw_to(t: int) -> float:
        replay_ms.append(0.0)
        t0 = time.perf_counter()
        model.seek(t)
        app.processEvents()            # the map paints, as in the window
        return (time.perf_counter() - t0) * 1000

    redraw_to(start)
    n_blocks = len(model.step().blocks)
    replay_ms.clear()
    forward = [redraw_to(start + k) for k in range(1, args.steps + 1)]
    forward_replay = replay_ms[:]
    replay_ms.clear()
    back = [redraw_to(start + args.steps - k) for k in range(1, args.steps + 1)]
    back_replay = replay_ms[:]
    edits, undos = tracker.edits, tracker.undos
    replay_ms.clear()
    walked = []
    for k in range(1, max(4, args.steps // 10) + 1):
        tracker.invalidate()                  # as before the tracker: walk the heap every step
        walked.append(redraw_to(start + k))
    walked_replay = replay_ms[:]
    # a jump, then steps back: the tracker has no edit to undo at first
    redraw_to(start + 3 * args.steps)
    replay_ms.clear()
    walks_before = tracker.walks
    jumped = [redraw_to(start + 3 * args.steps - k) for k in range(1, args.steps // 2 + 1)]
    jumped_replay = replay_ms[:]
    jumped_walks = tracker.walks - walks_before
    budget = 1000 / 30

    def line(what: str, times: list[float], replays: list[float]) -> str:
        ms = statistics.median(times)
        own = statistics.median([t - r for t, r in zip(times, replays)])
        return (f"  {what:32s} {ms:7.1f} ms = {1000 / ms:5.1f} /s = {1000 / ms / 30:5.2f} x budget"
                f" | without the replay {own:6.1f} ms = {1000 / own:5.1f} /s = {1000 / own / 30:5.2f} x"
                f" ({'within' if own <= budget else 'OVER'})")

    print(f"stepping through a {n_blocks:,}-block heap ({strategy}, view {width}x{height} px; "
          f"{len(trace):,} ops built in {build_s:.1f} s); medians; budget 30 redraws/s")
    print(line("step forward (events edited in)", forward, forward_replay))
    print(line("step back (edits undone)", back, back_replay))
    print(line("step walking the heap (before)", walked, walked_replay))
    print(line("step back after a jump", jumped, jumped_replay)
          + f" [{jumped_walks} walks in {len(jumped)} steps]")
    print(f"  replay of the step by the timeline: median {statistics.median(forward_replay):.1f} ms forward, "
          f"{statistics.median(back_replay):.1f} ms back (from a checkpoint every "
          f"{timeline.every:,} ops)")
    print(f"  the tracker edited {edits} steps in, undid {undos}, walked {tracker.walks} times"
          f" ({tracker.rebuilds_after_bad_steps} steps refused)")
    cache = timeline.back_cache
    slowest = max(range(len(back)), key=back.__getitem__)
    print(f"  step-back cache: the slowest step back was #{slowest + 1}, {back[slowest]:.0f} ms "
          f"(the timeline's part {back_replay[slowest]:.0f} ms: a checkpoint restored and replayed, "
          f"copies kept); the others at most {max(back[:slowest] + back[slowest + 1:]):.0f} ms")
    print(f"    {len(cache)} copies every {cache.spacing} steps, {cache.bytes / 2**20:.0f} MiB "
          f"(peak {cache.peak_bytes / 2**20:.0f} MiB; bounds {cache.states} copies, "
          f"{cache.max_bytes / 2**20:.0f} MiB); checkpoints restored {timeline.restores}, "
          f"copies kept {timeline.copies_kept}, taken {timeline.copies_taken}")
    from heapscope.allocators.state_copy import copy_state
    tracemalloc.start()
    twin = copy_state(timeline.strategy, timeline.program)
    traced = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    print(f"    one copy: {twin[2] / 2**20:.1f} MiB as the cache counts it, "
          f"{traced / 2**20:.1f} MiB by tracemalloc")
    del twin
    view.close()


if __name__ == "__main__":
    sys.exit(main())
