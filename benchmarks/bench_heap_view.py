"""Frame time of the heap map with 100 000 blocks (DESIGN.md, performance budgets).

    python benchmarks/bench_heap_view.py [--blocks N] [--frames N] [--size WxH]

Budget: a heap view frame with 100 000 blocks in <= 16 ms.

The heap is real: K&R next fit after N mallocs of 1..500 bytes with every
sixth block freed again (so used and free blocks alternate and nothing
coalesces into one big block).  A frame is what the window does for each
step: cut the blocks into runs and paint the cell image (numpy), hand it to
the ``pg.ImageItem`` (an indexed QImage), and render the map's view into a
QImage the size of the widget.  Two heaps that differ by a few hundred blocks
alternate, so no frame can reuse the previous one's picture.

Reported apart, because it is the core's part and not the view's: turning
``strategy.walk_tuples()`` (a list of 100 000 tuples, built in Python) into
numpy columns, and ``walk_tuples()`` itself (what the map calls).
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
    args = ap.parse_args(argv)
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
    print(f"  core side, not part of the frame budget:")
    print(f"    walk_tuples() -> numpy columns   median {arrays_ms:6.2f} ms")
    print(f"    walk_tuples() itself             median {walk_ms:6.2f} ms")
    print(f"  (building the heap took {setup_s:.1f} s)")
    view.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
