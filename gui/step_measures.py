"""The measures the gauges and plots show, per position of the timeline.

Pure numpy over a :class:`heapscope.allocators.metrics.MetricSeries`, derived
from the series' rows when they are asked for (a step's gauges, the rows a
plot draws), from running values kept every :data:`STRIDE` rows.  Position ``t`` (the heap after t
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

from heapscope.allocators.metrics import MetricSeries


#: the running values are kept at every this many rows (:class:`StepMeasures`)
STRIDE = 4096
_LOWEST = np.iinfo(np.int64).min
_INTEGER = ("max_live", "max_heap", "searches_so_far")


class StepMeasures:
    """The derived measures of one replay, by row.

    ``built``: how many rows of ``series`` are written (default: all).  A
    timeline built in the background (gui/background_build.py) writes its
    rows as it goes, and :meth:`grow` takes the new ones.

    Nothing is kept per row: a column of a million rows of float64 is 8 MB,
    and eight of them beside the series' own 56 bytes a row held 640 MB more
    in the window at ten million operations (issue 25's 2 GB budget).  The
    running values (largest live and heap bytes so far, the mallocs that
    succeeded so far and their searches) are kept at every
    :data:`STRIDE`-th row, so any rows' columns are derived from the series
    from the nearest mark before them (:meth:`columns`), and one position's
    gauges from at most :data:`STRIDE` rows (:meth:`at`).  The columns read
    as attributes (``external``, ``search_mean``, ...) are the first
    :attr:`n` rows derived at once: for tests and short traces; the plots
    ask for the rows they draw."""

    _COLUMNS = ("external", "external_no_top", "max_live", "max_heap", "utilisation", "waste",
                "searches_so_far", "search_mean")

    def __init__(self, series, built: int | None = None) -> None:
        #: the whole series (its first :attr:`n` rows taken so far)
        self.full_series = series
        total = series.n
        marks = total // STRIDE + 1
        # mark j: the running values over rows [0, j * STRIDE); mark 0 is the empty prefix
        self._max_live_before = np.full(marks, _LOWEST, dtype=np.int64)
        self._max_heap_before = np.full(marks, _LOWEST, dtype=np.int64)
        self._searches_before = np.zeros(marks, dtype=np.int64)
        self._search_sum_before = np.zeros(marks, dtype=np.int64)
        self._marks_set = 1
        self.n = 0
        self.search_max = 0
        self.grow(total if built is None else built)

    def __getattr__(self, name: str):
        if name in StepMeasures._COLUMNS and "n" in self.__dict__:
            return self.columns(0, self.n)[name]
        raise AttributeError(name)

    @property
    def series(self):
        """The series' first :attr:`n` rows."""
        return self.full_series.prefix(self.n)

    def grow(self, built: int) -> None:
        """Take the rows up to ``built`` (those written since the last call)."""
        a, b = self.n, min(int(built), self.full_series.n)
        if b <= a:
            return
        s = self.full_series
        self.search_max = max(self.search_max, int(s.search[a:b].max()))
        while self._marks_set * STRIDE <= b:
            self._set_mark(self._marks_set)
            self._marks_set += 1
        self.n = b

    def _set_mark(self, j: int) -> None:
        """Mark ``j`` from mark ``j - 1`` and the :data:`STRIDE` rows between them."""
        s, lo, hi = self.full_series, (j - 1) * STRIDE, j * STRIDE
        self._max_live_before[j] = max(self._max_live_before[j - 1], int(s.live[lo:hi].max()))
        self._max_heap_before[j] = max(self._max_heap_before[j - 1], int(s.heap[lo:hi].max()))
        counted = s.is_malloc[lo:hi] & ~s.failed[lo:hi]
        self._searches_before[j] = self._searches_before[j - 1] + int(np.count_nonzero(counted))
        self._search_sum_before[j] = (self._search_sum_before[j - 1]
                                      + int(s.search[lo:hi][counted].sum(dtype=np.int64)))

    def columns(self, a: int, b: int) -> dict[str, np.ndarray]:
        """Every derived column over rows ``a``..``b - 1`` (within the first :attr:`n`)."""
        a, b = max(int(a), 0), min(int(b), self.n)
        if b <= a:
            return {name: np.zeros(0, dtype=np.int64 if name in _INTEGER else np.float64)
                    for name in self._COLUMNS}
        j = a // STRIDE
        start = j * STRIDE
        s = self.full_series
        out = {}
        rows = MetricSeriesRows(s, a, b)
        out["external"] = rows.external(True)
        out["external_no_top"] = rows.external(False)
        # the running values from mark j's row, the rows before ``a`` cut off after
        cut = a - start
        max_live = np.maximum.accumulate(np.maximum(s.live[start:b], self._max_live_before[j]))[cut:]
        max_heap = np.maximum.accumulate(np.maximum(s.heap[start:b], self._max_heap_before[j]))[cut:]
        counted = s.is_malloc[start:b] & ~s.failed[start:b]
        so_far = (self._searches_before[j] + np.cumsum(counted, dtype=np.int64))[cut:]
        total = (self._search_sum_before[j]
                 + np.cumsum(np.where(counted, s.search[start:b], 0), dtype=np.int64))[cut:]
        heap = max_heap.astype(np.float64)
        ml = max_live.astype(np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            out["utilisation"] = np.where(heap > 0, max_live / np.where(heap > 0, heap, 1), np.nan)
            out["waste"] = np.where(ml > 0, (max_heap - ml) / np.where(ml > 0, ml, 1), np.nan)
            out["search_mean"] = np.where(so_far > 0, total / np.maximum(so_far, 1), np.nan)
        out["max_live"], out["max_heap"], out["searches_so_far"] = max_live, max_heap, so_far
        return out

    def at(self, position: int) -> dict | None:
        """Everything the gauges show at ``position``; None at position 0."""
        if position <= 0 or position > self.n:
            return None
        r = position - 1
        s = self.full_series
        c = {name: column[0] for name, column in self.columns(r, position).items()}
        return {
            "external": float(c["external"]),
            "external_no_top": float(c["external_no_top"]),
            "free": int(s.free[r]),
            "largest_free": int(s.largest_free[r]),
            "search": int(s.search[r]),
            "is_malloc": bool(s.is_malloc[r]),
            "failed": bool(s.failed[r]),
            "search_mean": float(c["search_mean"]),
            "mallocs_so_far": int(c["searches_so_far"]),
            "utilisation": float(c["utilisation"]),
            "waste": float(c["waste"]),
            "max_live": int(c["max_live"]),
            "max_heap": int(c["max_heap"]),
            "heap": int(s.heap[r]),
            "live": int(s.live[r]),
            "in_use": int(s.in_use[r]),
            "headers": int(s.headers[r]),
            "padding": int(s.in_use[r] - s.live[r] - s.headers[r]),
        }


class MetricSeriesRows:
    """Rows ``a``..``b`` of a series, read as a series of their own (the
    columns :class:`StepMeasures` derives from)."""

    def __init__(self, series, a: int, b: int) -> None:
        self.n = b - a
        for name in ("live", "heap", "search", "is_malloc", "failed", "free", "largest_free",
                     "top_free", "largest_below_top"):
            setattr(self, name, getattr(series, name)[a:b])

    external = MetricSeries.external
