"""The measures the gauges and plots show, per position of the timeline.

Pure numpy over a :class:`heapscope.allocators.metrics.MetricSeries`, computed once per
replay so that showing a step is a lookup.  Position ``t`` (the heap after t
operations) reads row ``t - 1`` of the series; position 0 is the empty heap.

* external fragmentation = 1 - Fmax / F, with and without the top block
  (DESIGN.md, after Johnstone & Wilson 1998);
* internal fragmentation = (A - L) / A, the share of the used blocks' bytes
  that are headers or padding rather than what the program asked for;
* search length of the step (nodes examined) and the running mean over the
  mallocs so far that succeeded (the summary's ``search_mean`` at the end);
* utilisation *at the current step* = max live so far / max heap so far (the
  CS:APP mdriver's measure, which it takes at the end of a trace, where its
  heap, which never shrinks, is at its largest; a heap that gives memory back
  is divided by its largest size so far too);
* waste *at the current step* = (max heap so far - max live so far) / max live
  so far (Vo 1989, seed 000, taken over the prefix).
"""

from __future__ import annotations

import numpy as np


class StepMeasures:
    """Per-row derived columns of one replay."""

    def __init__(self, series) -> None:
        self.series = series
        self.n = series.n
        self.external = series.external(True)
        self.external_no_top = series.external(False)
        self.max_live = np.maximum.accumulate(series.live) if self.n else series.live.copy()
        self.max_heap = np.maximum.accumulate(series.heap) if self.n else series.heap.copy()
        heap = self.max_heap.astype(np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            self.utilisation = np.where(heap > 0, self.max_live / np.where(heap > 0, heap, 1), np.nan)
            ml = self.max_live.astype(np.float64)
            self.waste = np.where(ml > 0, (self.max_heap - ml) / np.where(ml > 0, ml, 1), np.nan)
        counted = series.is_malloc & ~series.failed
        self.searches_so_far = np.cumsum(counted)
        total = np.cumsum(np.where(counted, series.search, 0))
        with np.errstate(divide="ignore", invalid="ignore"):
            self.search_mean = np.where(self.searches_so_far > 0,
                                        total / np.maximum(self.searches_so_far, 1), np.nan)
        self.search_max = int(series.search.max()) if self.n else 0

    def at(self, position: int) -> dict | None:
        """Everything the gauges show at ``position``; None at position 0."""
        if position <= 0 or position > self.n:
            return None
        r = position - 1
        s = self.series
        return {
            "external": float(self.external[r]),
            "external_no_top": float(self.external_no_top[r]),
            "free": int(s.free[r]),
            "largest_free": int(s.largest_free[r]),
            "search": int(s.search[r]),
            "is_malloc": bool(s.is_malloc[r]),
            "failed": bool(s.failed[r]),
            "search_mean": float(self.search_mean[r]),
            "mallocs_so_far": int(self.searches_so_far[r]),
            "utilisation": float(self.utilisation[r]),
            "waste": float(self.waste[r]),
            "max_live": int(self.max_live[r]),
            "max_heap": int(self.max_heap[r]),
            "heap": int(s.heap[r]),
            "live": int(s.live[r]),
            "in_use": int(s.in_use[r]),
            "headers": int(s.headers[r]),
            "padding": int(s.in_use[r] - s.live[r] - s.headers[r]),
        }
