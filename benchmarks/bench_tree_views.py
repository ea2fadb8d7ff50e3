"""Redraw time of the tree, buddy and TLSF structure views at 10 000 free blocks.

    python benchmarks/bench_tree_views.py [--free N] [--repeats N]

Goal (issue 8): fast enough to redraw on every shown step.  A redraw is
``show_step(structure, explained)`` (the view's Python: layout, items
updated) plus painting the widget (``grab()``, what Qt does on screen).  Two
heaps built with different seeds alternate, so no redraw finds the previous
one's picture.  Reported beside them, as the ratio this benchmark watches:
``strategy.structure()`` itself, the core's part of every shown step.

Heaps (``tests/gui/big_heaps.py``): 2N mallocs of random sizes with every
other block freed, so nothing coalesces; the splay tree's sizes go up to
160 000 bytes so that it has thousands of distinct nodes (the hard case for
its layout), the buddy heap is made a little bigger because neighbours there
do merge.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from PySide6.QtWidgets import QApplication  # noqa: E402

from heapscope.gui.structure_views import view_for  # noqa: E402
from tests.gui.big_heaps import big_heap  # noqa: E402

CASES = [
    # strategy, view kind, extra arguments of big_heap, free blocks asked for
    ("splay-best-fit", "tree", {"max_size": 160_000}, 1.0),
    ("buddy", "buddy", {}, 1.2),
    ("tlsf", "tlsf", {}, 1.0),
]


def median_ms(fn, repeats: int) -> float:
    times = []
    for i in range(repeats):
        t0 = time.perf_counter()
        fn(i)
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--free", type=int, default=10_000, help="free blocks in the heap (default 10000)")
    ap.add_argument("--repeats", type=int, default=11)
    args = ap.parse_args(argv)
    app = QApplication.instance() or QApplication([])
    print(f"{'view':6} {'free':>6} {'structure()':>12} {'show_step':>10} {'paint':>8} {'redraw':>8} "
          f"{'redraw/structure()':>19}")
    for strategy, kind, extra, factor in CASES:
        heaps = [big_heap(strategy, int(args.free * factor), seed=seed, **extra) for seed in (7, 8)]
        view = view_for(kind)()
        view.resize(1280, 720)
        view.show()
        app.processEvents()
        structure_ms = median_ms(lambda i: heaps[i % 2][0].structure(), args.repeats)

        def show(i):
            _, st, ex, rec = heaps[i % 2]
            view.show_step(st, ex, rec)

        show(1)          # items created once, as on the first step shown
        show_ms = median_ms(show, args.repeats)

        def redraw(i):
            show(i)
            view.grab()

        redraw_ms = median_ms(redraw, args.repeats)
        free = len(heaps[0][1]["sizes"])
        print(f"{kind:6} {free:>6} {structure_ms:>10.1f}ms {show_ms:>8.1f}ms {redraw_ms - show_ms:>6.1f}ms "
              f"{redraw_ms:>6.1f}ms {redraw_ms / structure_ms:>18.1f}x")
        print(f"       summary: {view.summary}")
        view.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
