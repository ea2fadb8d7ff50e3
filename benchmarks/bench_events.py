"""What reading events costs now that each event type carries its meaning
(allocators/events.py: ``describe``, ``addresses``, ``edit``).

    python benchmarks/bench_events.py

Two numbers, each the best of 7 runs (the machine is shared, and the best
run is the one least disturbed):

* **the map's edit loop**: ``BlockEditor.apply_all`` over one long step of
  20 004 events -- 20 001 looks that change no block (``Visit``,
  ``BitmapProbe``, ``ListRemove``: skipped by one look-up of their type) and
  a split, a placement and a list insertion that edit it -- on a small heap,
  then ``finish()``; reported per event;
* **the explain lines**: ``explain.describe_event`` and
  ``explain.event_addresses`` over a mix of six event types, per event.
"""

from __future__ import annotations

import sys
import timeit
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from heapscope.allocators import events as ev  # noqa: E402
from heapscope.allocators.block_list import block_arrays  # noqa: E402
from heapscope.allocators.explain import describe_event, event_addresses  # noqa: E402
from heapscope.allocators.heap_edits import BlockEditor, TrackedHeap  # noqa: E402


def best_per_call(fn, number: int) -> float:
    return min(timeit.repeat(fn, number=number, repeat=7)) / number


def main() -> int:
    heap = TrackedHeap(block_arrays([(0, 4096, "free", None, 0, 0)], 4096), ())
    looks = [ev.Visit(0, 4096, False), ev.BitmapProbe("sl", 0, 0, None), ev.ListRemove(0, 4096, ())] * 6667
    step = looks + [ev.Split(0, 4096, 0, 64, 64, 4032), ev.Placed(0, 64, 16, 40), ev.ListInsert(64, 4032, ())]

    def edit_step():
        editor = BlockEditor(heap)
        editor.apply_all(step)
        editor.finish()

    t = best_per_call(edit_step, 50)
    print(f"edit loop: {len(step):,} events in {t * 1e3:.3f} ms = {t / len(step) * 1e9:.0f} ns an event")

    mix = [ev.Visit(0x40, 64, True), ev.Split(0, 128, 0, 64, 64, 64), ev.ListInsert(64, 64, (3,)),
           ev.PointerMove("rover", 0, 64), ev.ChunkPageDissolved(4096, 4, 4096),
           ev.TreeInsert(64, 64, 0, "left")] * 500
    t = best_per_call(lambda: [(describe_event(e), event_addresses(e)) for e in mix], 20)
    print(f"explain lines: {len(mix):,} events in {t * 1e3:.2f} ms = {t / len(mix) * 1e9:.0f} ns an event "
          "(describe_event + event_addresses)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
