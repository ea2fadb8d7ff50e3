"""The summary of a replay (one row of ``heapscope compare``), folded a chunk of steps at a time.

``heapscope compare`` prints one row per strategy and never shows a step, so
it need not keep the per-step measures of ten million operations (62 bytes
a step: docs/timeline.md): :class:`RunningSummary` takes them
:data:`SUMMARY_CHUNK` steps at a time (a :class:`~heapscope.allocators.metrics.MetricSeries`
of those steps) and keeps only what the row needs: maxima and where they
are, counts, sums, and the search lengths of the mallocs (for the 99th
percentile, which needs them all: 8 bytes a malloc).

It gives what :func:`heapscope.allocators.metrics.summarize` gives over the whole
series (which is this fold in one chunk), bit for bit, when the replay has at
most SUMMARY_CHUNK steps.  Beyond, the integer measures and maxima are the
same; the three means of floating-point measures (JW #1, the two external
fragmentations) are sums of chunk sums, where numpy sums the whole column in
one pairwise pass: they may differ in the last bits (a relative 1e-15, far
below the table's three decimals).
"""

from __future__ import annotations

import numpy as np

#: steps folded at once: every bundled trace fits in one chunk, so their
#: rows are exactly those of the whole series
SUMMARY_CHUNK = 1 << 18


class RunningSummary:
    """The summary row of the steps folded so far (:meth:`add`, then :meth:`row`)."""

    def __init__(self) -> None:
        self.n = 0
        self.failed = 0
        self.max_live = self.max_heap = None
        # at the first step where L peaks: H, A - L, the external fragmentation
        self.heap_at_live_peak = self.internal_at_live_peak = 0
        self.ext_at_live_peak = 0.0
        self.live_at_heap_peak = 0
        self.over_total = 0.0       # sum of (H - L) / L over steps with L > 0 ...
        self.over_count = 0         # ... and how many they are
        self.ext_total = 0.0
        self.ext_no_top_total = 0.0
        self.work_total = 0
        self.rotations = 0
        self.searches: list[np.ndarray] = []

    def add(self, s) -> None:
        """Fold the steps of ``s`` (a MetricSeries), which follow those folded so far."""
        if not s.n:
            return
        live, heap = s.live, s.heap
        t_live = int(np.argmax(live))
        t_heap = int(np.argmax(heap))
        ext = s.external(True)
        if self.max_live is None or int(live[t_live]) > self.max_live:
            self.max_live = int(live[t_live])
            self.heap_at_live_peak = int(heap[t_live])
            self.internal_at_live_peak = int(s.in_use[t_live]) - int(live[t_live])
            self.ext_at_live_peak = float(ext[t_live])
        if self.max_heap is None or int(heap[t_heap]) > self.max_heap:
            self.max_heap = int(heap[t_heap])
            self.live_at_heap_peak = int(live[t_heap])
        over = s.overhead_ratio()
        counted = ~np.isnan(over)
        over[~counted] = 0.0            # as np.nanmean sums: NaN as 0
        self.over_total += np.sum(over)
        self.over_count += int(np.count_nonzero(counted))
        self.ext_total += np.add.reduce(ext)
        self.ext_no_top_total += np.add.reduce(s.external(False))
        self.work_total += int(s.work.sum())
        self.rotations += int(s.rotations.sum())
        self.failed += int(s.failed.sum())
        if s.is_malloc.any():
            self.searches.append(s.search[s.is_malloc & ~s.failed])
        self.n += s.n

    def row(self) -> dict:
        """The summary row (see :func:`heapscope.allocators.metrics.summarize`)."""
        n = self.n
        if n == 0:
            return {"ops": 0}
        searches = (np.concatenate(self.searches).astype(np.int64) if self.searches
                    else np.zeros(0, np.int64))
        max_live, max_heap = self.max_live, self.max_heap
        return {
            "ops": n,
            "failed": self.failed,
            "max_live": max_live,                       # Salloc in seed 000
            "max_heap": max_heap,                       # Sarena in seed 000
            "waste": _ratio(max_heap - max_live, max_live),
            "utilisation": _ratio(max_live, max_heap),
            "jw1": float(self.over_total / self.over_count) if self.over_count else float("nan"),
            "jw2": _ratio(self.heap_at_live_peak, max_live) - 1,
            "jw3": _ratio(max_heap, self.live_at_heap_peak) - 1,
            "jw4": _ratio(max_heap, max_live) - 1,
            "ext_frag": float(self.ext_total / n),
            "ext_frag_no_top": float(self.ext_no_top_total / n),
            "ext_frag_at_peak": self.ext_at_live_peak,
            "internal_at_peak": self.internal_at_live_peak,
            "search_mean": float(searches.mean()) if searches.size else 0.0,
            "search_p99": float(np.percentile(searches, 99)) if searches.size else 0.0,
            "search_max": int(searches.max()) if searches.size else 0,
            # an exact integer sum: what numpy's mean of the column gives below 2**53
            "work_per_op": self.work_total / n,
            "rotations": self.rotations,
        }


def _ratio(num: float, den: float) -> float:
    return float(num) / float(den) if den else float("nan")
