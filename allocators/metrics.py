"""The measures of DESIGN.md, per step and summed up over a whole replay.

Per step t (after operation t-1 has been applied):

* L = live requested bytes, A = bytes in live blocks (headers and padding
  included), H = heap size (break - base), F = bytes in free blocks, Fmax =
  largest free block.
* internal fragmentation A - L, split into header bytes and padding;
* external fragmentation 1 - Fmax/F (0 when F = 0), with and without the top
  (wilderness) block;
* search length of a malloc (nodes examined, the one taken included) and work
  units (visits + splits + merges + rotations).

Summaries: waste (Vo 1989, seed 000) = (max H - max L) / max L; utilisation
(CS:APP mdriver) = max L / max H; Johnstone & Wilson 1998 (ISMM,
"The Memory Fragmentation Problem: Solved?") measures #1 to #4.

mdriver divides by the heap size at the end of a trace, which is its largest
heap: its memlib never shrinks.  A heap that gives memory back (dlmalloc's
malloc_trim) may end far below its peak, so utilisation divides by max H,
which is H at the end wherever the heap never shrinks.
"""

from __future__ import annotations

import numpy as np

#: columns kept for every step; all int64 except the boolean ones
SERIES_COLUMNS = ("heap", "live", "in_use", "headers", "free", "largest_free", "top_free",
                  "largest_below_top", "search", "work", "rotations", "splits", "merges", "grows")


#: one row of measures as the timeline's build packs it after every step (the
#: full set; a policy's ``Strategy.measure_row`` may pack a subset): H, L, A,
#: header bytes, the fragmentation probe (F, largest, top, largest below the
#: top), the bulk record's running counters, and the payload (-1 for none)
ROW_FIELDS = ("heap", "live", "in_use", "headers", "free", "largest_free", "top_free",
              "largest_below_top", "visits", "splits", "merges", "rotations", "grows", "walked",
              "payload")
#: the running counters of a row, in ROW_FIELDS order
ROW_COUNTERS = ("visits", "splits", "merges", "rotations", "grows", "walked")


class MetricSeries:
    """Numpy columns, one row per step; row t describes the heap after op t."""

    def __init__(self, n: int) -> None:
        self.n = n
        for col in SERIES_COLUMNS:
            setattr(self, col, np.zeros(n, dtype=np.int64))
        self.is_malloc = np.zeros(n, dtype=bool)   # malloc or realloc: has a search
        self.failed = np.zeros(n, dtype=bool)
        self.payload = np.full(n, -1, dtype=np.int64)

    def truncate(self, n: int) -> None:
        """Keep the first n rows (a cancelled replay)."""
        for col in SERIES_COLUMNS + ("is_malloc", "failed", "payload"):
            setattr(self, col, getattr(self, col)[:n])
        self.n = n

    def prefix(self, n: int) -> "MetricSeries":
        """The first ``n`` rows (views of these columns, no copy): the replay
        up to step ``n``, which :func:`summarize` sums up as if the trace had
        ended there (compare mode's table ranks strategies by it)."""
        n = max(0, min(int(n), self.n))
        out = MetricSeries.__new__(MetricSeries)
        out.n = n
        for col in SERIES_COLUMNS + ("is_malloc", "failed", "payload"):
            setattr(out, col, getattr(self, col)[:n])
        return out

    # ---------------------------------------------------------- derived
    @property
    def internal(self) -> np.ndarray:
        return self.in_use - self.live

    @property
    def padding(self) -> np.ndarray:
        return self.in_use - self.live - self.headers

    def external(self, with_top: bool = True) -> np.ndarray:
        """1 - Fmax/F per step (0 where nothing is free)."""
        if with_top:
            free, largest = self.free, self.largest_free
        else:
            free, largest = self.free - self.top_free, self.largest_below_top
        out = np.zeros(self.n, dtype=np.float64)
        nz = free > 0
        out[nz] = 1.0 - largest[nz] / free[nz]
        return out

    def overhead_ratio(self) -> np.ndarray:
        """(H - L) / L per step, NaN while nothing is live."""
        out = np.full(self.n, np.nan)
        nz = self.live > 0
        out[nz] = (self.heap[nz] - self.live[nz]) / self.live[nz]
        return out

    def at(self, t: int) -> dict:
        """Every measure at row t, for the gauges."""
        ext = self.external(True)[t] if self.n else 0.0
        return {
            "heap": int(self.heap[t]), "live": int(self.live[t]), "in_use": int(self.in_use[t]),
            "headers": int(self.headers[t]), "padding": int(self.padding[t]),
            "free": int(self.free[t]), "largest_free": int(self.largest_free[t]),
            "top_free": int(self.top_free[t]), "external": float(ext),
            "external_no_top": float(self.external(False)[t]),
            "search": int(self.search[t]), "work": int(self.work[t]),
        }


def _ratio(num: float, den: float) -> float:
    return float(num) / float(den) if den else float("nan")


def summarize(s: MetricSeries) -> dict:
    """One row of the comparison table."""
    n = s.n
    if n == 0:
        return {"ops": 0}
    max_live = int(s.live.max())
    max_heap = int(s.heap.max())
    t_live_peak = int(np.argmax(s.live))
    t_heap_peak = int(np.argmax(s.heap))
    over = s.overhead_ratio()
    searches = s.search[s.is_malloc & ~s.failed] if s.is_malloc.any() else np.zeros(0, np.int64)
    ext = s.external(True)
    ext_nt = s.external(False)
    return {
        "ops": n,
        "failed": int(s.failed.sum()),
        "max_live": max_live,                       # Salloc in seed 000
        "max_heap": max_heap,                       # Sarena in seed 000
        "waste": _ratio(max_heap - max_live, max_live),
        "utilisation": _ratio(max_live, max_heap),
        "jw1": float(np.nanmean(over)) if np.isfinite(over).any() else float("nan"),
        "jw2": _ratio(int(s.heap[t_live_peak]), int(s.live[t_live_peak])) - 1,
        "jw3": _ratio(int(s.heap[t_heap_peak]), int(s.live[t_heap_peak])) - 1,
        "jw4": _ratio(max_heap, max_live) - 1,
        "ext_frag": float(ext.mean()),
        "ext_frag_no_top": float(ext_nt.mean()),
        "ext_frag_at_peak": float(ext[t_live_peak]),
        "internal_at_peak": int(s.internal[t_live_peak]),
        "search_mean": float(searches.mean()) if searches.size else 0.0,
        "search_p99": float(np.percentile(searches, 99)) if searches.size else 0.0,
        "search_max": int(searches.max()) if searches.size else 0,
        "work_per_op": float(s.work.mean()),
        "rotations": int(s.rotations.sum()),
    }
