"""The measures compare mode ranks strategies by, up to the shown step.

Compare mode's table is a live version of ``heapscope compare``'s: for each
strategy, what :func:`heapscope.allocators.metrics.summarize` would say if the trace
ended at the shown step -- max live bytes and max heap (Vo's Salloc and
Sarena, seed 000), waste = (max H - max L) / max L (Vo 1989), utilisation =
max L / max H (the CS:APP mdriver's), the mean and longest search of the
mallocs that succeeded, work units per operation, failed requests.

``summarize`` reads the whole series each time (a percentile, means over
every row): on a 178 000-op trace that is milliseconds per strategy, too
much for every frame of seven rows.  :class:`RunningSummary` computes each
measure for every prefix once, with running maxima and sums (numpy
``accumulate`` and ``cumsum``), so the table at any step is a lookup.  The
tests check it against ``summarize(series.prefix(t))``.

No Qt here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Measure:
    """One column of the table: the summary key, its heading, whether a
    smaller value ranks better, and how to write a value."""
    key: str
    heading: str
    smaller_is_better: bool
    tip: str

    def text(self, value) -> str:
        if value is None or (isinstance(value, float) and math.isnan(value)):
            return "–"
        if self.key in ("waste", "utilisation"):
            return f"{100 * value:.1f} %"
        if self.key in ("search_mean", "work_per_op"):
            return f"{value:.2f}"
        if self.key in ("max_heap", "max_live"):
            return _kib(value)
        return f"{int(value):,}"


def _kib(n: int) -> str:
    return f"{n / 1024:,.0f} KiB" if n >= 10 * 1024 else f"{n:,} B"


#: the columns of compare mode's table, in order; the first ranks by default
MEASURES = (
    Measure("waste", "waste", True, "(max heap − max live) / max live so far (Vo 1989)"),
    Measure("utilisation", "util.", False, "max live / max heap so far (CS:APP mdriver)"),
    Measure("search_mean", "search", True,
            "mean search length of the mallocs so far that succeeded\n"
            "(nodes examined, the one taken included)"),
    Measure("work_per_op", "work/op", True,
            "work units per operation so far (visits + splits + merges + rotations)"),
    Measure("failed", "failed", True, "requests that failed so far (heap limit or pool)"),
)
MEASURE_BY_KEY = {m.key: m for m in MEASURES}


class RunningSummary:
    """``summarize()`` of every prefix of one replay's series.

    Kept as integer running columns (running maxima, counts and sums); the
    ratios of a prefix (waste, utilisation, the mean search, work per
    operation) are divided out when :meth:`at` asks for one.  Made as float
    columns over every prefix they took 0.95 s at a million steps under
    load, for each of compare mode's seven rows, when the rows showed
    (issue 25's stall probe: a 10.7 s gap).

    The columns grow a run of rows at a time (:meth:`extend`), each run
    carried on from the last row's running values: integers all, so a
    summary made in many runs is the one made in one, bit for bit.  Compare
    mode makes a long one :data:`SUMMARY_ROWS_PER_TURN` rows per turn of
    the event loop, and one whose timeline is built in the background
    grows by the rows built since (a million rows in one go held the loop
    0.4-4.5 s under load)."""

    #: the running columns (int64, one row per step)
    COLUMNS = ("max_live", "max_heap", "searches", "search_total", "search_max", "work", "failed")

    def __init__(self, series=None, upto: int | None = None) -> None:
        self.n = 0
        #: the series the rows come from (a summary grows from the one it began with)
        self.source = series
        self._columns = {name: np.zeros(0, dtype=np.int64) for name in self.COLUMNS}
        if series is not None:
            self.extend(series, series.n if upto is None else upto)

    def __getattr__(self, name: str):
        columns = self.__dict__.get("_columns")
        if columns is not None and name in columns:
            return columns[name][:self.n]
        raise AttributeError(name)

    def extend(self, series, upto: int) -> None:
        """Add rows ``n .. upto - 1`` of ``series`` (the one the rows so far came from)."""
        a, b = self.n, min(int(upto), series.n)
        if b <= a:
            return
        self.source = series
        c = self._columns
        if len(c["work"]) < b:
            size = max(b, series.n, 2 * len(c["work"]))
            for name, column in c.items():
                wide = np.zeros(size, dtype=np.int64)
                wide[:a] = column[:a]
                c[name] = wide
        counted = series.is_malloc[a:b] & ~series.failed[a:b]
        searched = np.where(counted, series.search[a:b], 0)
        for name, part, running in (("max_live", series.live[a:b], np.maximum),
                                    ("max_heap", series.heap[a:b], np.maximum),
                                    ("search_max", searched, np.maximum),
                                    ("searches", counted, np.add),
                                    ("search_total", searched, np.add),
                                    ("work", series.work[a:b], np.add),
                                    ("failed", series.failed[a:b], np.add)):
            out = c[name][a:b]
            out[:] = part
            if a:
                out[0] = running(out[0], c[name][a - 1])
            running.accumulate(out, out=out)
        self.n = b

    def at(self, position: int) -> dict:
        """What ``summarize(series.prefix(position))`` says, for the table's
        measures (``{"ops": 0}`` at position 0, as summarize does)."""
        t = min(int(position), self.n)
        if t <= 0:
            return {"ops": 0}
        r = t - 1
        ml, mh = int(self.max_live[r]), int(self.max_heap[r])
        searches = int(self.searches[r])
        nan = float("nan")
        return {
            "ops": t,
            "failed": int(self.failed[r]),
            "max_live": ml,
            "max_heap": mh,
            "waste": (mh - ml) / ml if ml > 0 else nan,
            "utilisation": ml / mh if mh > 0 else nan,
            # summarize() says 0.0 while no malloc has succeeded: so does the table
            "search_mean": int(self.search_total[r]) / searches if searches > 0 else 0.0,
            "search_max": int(self.search_max[r]),
            "work_per_op": int(self.work[r]) / t,
        }


def ranked(rows: dict, key: str) -> list:
    """The names of ``rows`` ({name: summary}) best first by measure ``key``;
    a strategy without a value (nothing replayed yet) comes last, ties keep
    the order of ``rows``."""
    measure = MEASURE_BY_KEY[key]

    def sort_key(item):
        i, (name, row) = item
        v = row.get(key)
        if v is None or (isinstance(v, float) and math.isnan(v)):
            return (1, 0.0, i)
        return (0, v if measure.smaller_is_better else -v, i)

    return [name for _, (name, _) in sorted(enumerate(rows.items()), key=sort_key)]


def best_of(rows: dict, key: str):
    """The best value of measure ``key`` among ``rows`` (None if none has one)."""
    order = ranked(rows, key)
    if not order:
        return None
    v = rows[order[0]].get(key)
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return None
    return v
