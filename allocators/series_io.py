"""The measures of a replay over time, written as CSV or JSON for a
spreadsheet, a notebook or a plotting script.

One row per step, the columns of the core's :class:`~heapscope.allocators.metrics.MetricSeries`
(``SERIES_COLUMNS``, then ``is_malloc``, ``failed`` and ``payload``) after a
``step`` column: step t is the heap after the t-th operation, as the window
and ``heapscope inspect`` number it.  Derived measures (external
fragmentation, waste, utilisation) are left to the reader: they are simple
functions of these columns (docs/gui.md gives them), and every script would
want them in its own form.

The window's File > Export writes these files (``gui/export.py``); no Qt here.
"""

from __future__ import annotations

import csv
import json
import os

from .metrics import SERIES_COLUMNS

#: the columns written, in order
FIELDS = ("step",) + SERIES_COLUMNS + ("is_malloc", "failed", "payload")


def step_range(series, start: int = 1, stop: int | None = None) -> range:
    """Steps ``start..stop`` (1-based, inclusive), clamped to the series."""
    stop = series.n if stop is None else min(int(stop), series.n)
    return range(max(1, int(start)), stop + 1)


def rows(series, start: int = 1, stop: int | None = None):
    """One list per step in ``start..stop``: the values of :data:`FIELDS`."""
    columns = [getattr(series, name) for name in FIELDS[1:]]
    for t in step_range(series, start, stop):
        r = t - 1
        out = [t]
        for col in columns:
            v = col[r]
            out.append(bool(v) if col.dtype == bool else int(v))
        yield out


#: rows written between two progress reports (a few tens of milliseconds)
CSV_CHUNK = 5_000


def csv_rows(series, a: int, b: int) -> list:
    """Rows of steps ``a..b - 1`` (1-based) for CSV: the columns read as
    lists once (a numpy scalar per cell cost 5 times more), flags as 0/1."""
    columns = [getattr(series, name)[a - 1:b - 1] for name in FIELDS[1:]]
    lists = [(col.astype("int64") if col.dtype == bool else col).tolist() for col in columns]
    return [list(row) for row in zip(range(a, b), *lists)]


def write_csv(series, path, start: int = 1, stop: int | None = None, progress=None) -> int:
    """Write steps ``start..stop`` to ``path`` as CSV (a header row of
    :data:`FIELDS`); the number of rows written.  ``progress(done, total)``
    is called after each :data:`CSV_CHUNK` rows (it may raise to stop)."""
    steps = step_range(series, start, stop)
    with open(os.fspath(path), "w", newline="") as f:
        writer = csv.writer(f, lineterminator="\n")
        writer.writerow(FIELDS)
        for a in range(steps.start, steps.stop, CSV_CHUNK):
            b = min(a + CSV_CHUNK, steps.stop)
            writer.writerows(csv_rows(series, a, b))
            if progress:
                progress(b - steps.start, len(steps))
    return len(steps)


def write_json(series, path, start: int = 1, stop: int | None = None, about: dict | None = None) -> int:
    """Write steps ``start..stop`` to ``path`` as one JSON object:
    ``{"about": {...}, "columns": FIELDS, "steps": [{column: value}]}``;
    the number of steps written.  ``about`` says what was replayed (trace,
    strategy, parameters)."""
    steps = [dict(zip(FIELDS, row)) for row in rows(series, start, stop)]
    with open(os.fspath(path), "w") as f:
        json.dump({"about": about or {}, "columns": list(FIELDS), "steps": steps}, f, indent=1)
        f.write("\n")
    return len(steps)
