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

from heapscope.allocators.metrics import MetricSeries


class StepMeasures:
    """Per-row derived columns of one replay.

    ``built``: how many rows of ``series`` are written (default: all).  A
    timeline built in the background (gui/background_build.py) writes its
    rows as it goes: :meth:`grow` derives the new rows only, from the last
    row's running values (maxima, sums), so a million rows cost what they
    cost once, however many chunks they come in.  The columns read here
    (``external``, ``search_mean``, ...) and :attr:`series` are the first
    :attr:`n` rows."""

    _COLUMNS = ("external", "external_no_top", "max_live", "max_heap", "utilisation", "waste",
                "searches_so_far", "search_mean")

    def __init__(self, series, built: int | None = None) -> None:
        #: the whole series (its first :attr:`n` rows derived so far)
        self.full_series = series
        total = series.n
        self._columns = {name: np.zeros(total, dtype=np.int64 if name in (
            "max_live", "max_heap", "searches_so_far") else np.float64) for name in self._COLUMNS}
        self._search_total = 0
        self.n = 0
        self.search_max = 0
        self.grow(total if built is None else built)

    def __getattr__(self, name: str):
        columns = self.__dict__.get("_columns")
        if columns is not None and name in columns:
            return columns[name][:self.n]
        raise AttributeError(name)

    @property
    def series(self):
        """The series' first :attr:`n` rows."""
        return self.full_series.prefix(self.n)

    def grow(self, built: int) -> None:
        """Derive the rows up to ``built`` (those written since the last call)."""
        a, b = self.n, min(int(built), self.full_series.n)
        if b <= a:
            return
        s, c = self.full_series.prefix(b), self._columns
        part = MetricSeriesRows(s, a, b)
        c["external"][a:b] = part.external(True)
        c["external_no_top"][a:b] = part.external(False)
        prev_live = c["max_live"][a - 1] if a else part.live[0]
        prev_heap = c["max_heap"][a - 1] if a else part.heap[0]
        max_live = c["max_live"][a:b] = np.maximum.accumulate(np.maximum(part.live, prev_live))
        max_heap = c["max_heap"][a:b] = np.maximum.accumulate(np.maximum(part.heap, prev_heap))
        heap = max_heap.astype(np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            c["utilisation"][a:b] = np.where(heap > 0, max_live / np.where(heap > 0, heap, 1), np.nan)
            ml = max_live.astype(np.float64)
            c["waste"][a:b] = np.where(ml > 0, (max_heap - ml) / np.where(ml > 0, ml, 1), np.nan)
        counted = part.is_malloc & ~part.failed
        before = c["searches_so_far"][a - 1] if a else 0
        so_far = c["searches_so_far"][a:b] = before + np.cumsum(counted)
        total = self._search_total + np.cumsum(np.where(counted, part.search, 0))
        self._search_total = int(total[-1])
        with np.errstate(divide="ignore", invalid="ignore"):
            c["search_mean"][a:b] = np.where(so_far > 0, total / np.maximum(so_far, 1), np.nan)
        self.search_max = max(self.search_max, int(part.search.max()))
        self.n = b

    def at(self, position: int) -> dict | None:
        """Everything the gauges show at ``position``; None at position 0."""
        if position <= 0 or position > self.n:
            return None
        r = position - 1
        s = self.full_series
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


class MetricSeriesRows:
    """Rows ``a``..``b`` of a series, read as a series of their own (the
    columns :class:`StepMeasures` derives from)."""

    def __init__(self, series, a: int, b: int) -> None:
        self.n = b - a
        for name in ("live", "heap", "search", "is_malloc", "failed", "free", "largest_free",
                     "top_free", "largest_below_top"):
            setattr(self, name, getattr(series, name)[a:b])

    external = MetricSeries.external
