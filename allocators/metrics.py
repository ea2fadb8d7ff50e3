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

from .running_summary import RunningSummary

#: columns kept for every step; numbers (int32, widened to int64 when needed:
#: :class:`MetricSeries`) except the boolean ones
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


#: the columns that hold a number (SERIES_COLUMNS and the payload)
NUMBER_COLUMNS = SERIES_COLUMNS + ("payload",)
#: every column, in the order series_io writes them
ALL_COLUMNS = SERIES_COLUMNS + ("is_malloc", "failed", "payload")
#: the bytes a step's row takes while every value fits in int32 (the usual
#: case: heaps under 2 GiB): 15 int32 columns and 2 booleans
NARROW_BYTES_PER_STEP = 4 * len(NUMBER_COLUMNS) + 2

_INT32 = np.iinfo(np.int32)
_INT32_MIN, _INT32_MAX = int(_INT32.min), int(_INT32.max)


class MetricSeries:
    """Numpy columns, one row per step; row t describes the heap after op t.

    The number columns start as int32 and a column is widened to int64 (a
    copy, once) the first time :meth:`put` is given a value past int32: most
    heaps are far below 2 GiB, and the series of ten million steps then takes
    62 bytes a step, not 122 (:data:`NARROW_BYTES_PER_STEP`).  So write
    values with :meth:`put`: numpy's own assignment would wrap a value past
    int32 round without a word.  Arithmetic on the columns stays exact: a
    difference of two int32 sizes fits in int32, sums and means go through
    int64 or float64 (numpy's rule for reductions)."""

    def __init__(self, n: int) -> None:
        self.n = n
        for col in SERIES_COLUMNS:
            setattr(self, col, np.zeros(n, dtype=np.int32))
        self.is_malloc = np.zeros(n, dtype=bool)   # malloc or realloc: has a search
        self.failed = np.zeros(n, dtype=bool)
        self.payload = np.full(n, -1, dtype=np.int32)

    def put(self, name: str, at, values) -> None:
        """``column[at] = values``, widening the column to int64 first if a
        value does not fit in its dtype."""
        column = getattr(self, name)
        if column.dtype == np.int32:
            if type(values) is int:
                # one Python int (a row at a time: record_row): its own bounds,
                # without making an array of it to take its min and max
                wide = not _INT32_MIN <= values <= _INT32_MAX
            else:
                values = np.asarray(values)
                wide = bool(values.size) and values.dtype != bool and (
                    int(values.min()) < _INT32_MIN or int(values.max()) > _INT32_MAX)
            if wide:
                column = column.astype(np.int64)
                setattr(self, name, column)
        column[at] = values

    @property
    def nbytes(self) -> int:
        """The bytes the columns hold."""
        return sum(getattr(self, col).nbytes for col in ALL_COLUMNS)

    def truncate(self, n: int) -> None:
        """Keep the first n rows (a cancelled replay)."""
        for col in ALL_COLUMNS:
            setattr(self, col, getattr(self, col)[:n])
        self.n = n

    def prefix(self, n: int) -> "MetricSeries":
        """The first ``n`` rows (views of these columns, no copy): the replay
        up to step ``n``, which :func:`summarize` sums up as if the trace had
        ended there (compare mode's table ranks strategies by it)."""
        n = max(0, min(int(n), self.n))
        out = MetricSeries.__new__(MetricSeries)
        out.n = n
        for col in ALL_COLUMNS:
            setattr(out, col, getattr(self, col)[:n])
        return out

    def part(self, start: int, stop: int) -> "MetricSeries":
        """Rows ``start`` to ``stop`` (views, no copy): a part a
        :class:`~heapscope.allocators.running_summary.RunningSummary` folds
        after the rows before it."""
        start = max(0, min(int(start), self.n))
        stop = max(start, min(int(stop), self.n))
        out = MetricSeries.__new__(MetricSeries)
        out.n = stop - start
        for col in ALL_COLUMNS:
            setattr(out, col, getattr(self, col)[start:stop])
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


def summarize(s: MetricSeries) -> dict:
    """One row of the comparison table: the steps of ``s`` folded in one chunk
    (:class:`~heapscope.allocators.running_summary.RunningSummary`, which
    ``heapscope compare`` folds chunk by chunk without keeping the series)."""
    summary = RunningSummary()
    summary.add(s)
    return summary.row()
