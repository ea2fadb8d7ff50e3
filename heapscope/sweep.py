"""``heapscope sweep``: every trace x strategy x parameter grid, one CSV row per cell.

A *cell* is one trace (a file, a bundled trace's name or a workload spec),
one strategy and one point of that strategy's parameter grid (``-P
buddy.max_order=12,14,16`` is three points; two such options of one strategy are
their product).  Each cell is measured as ``heapscope compare`` measures a
strategy (:func:`measure_cell`: the same timeline build and summary,
:func:`heapscope.allocators.parallel.summary_row`), so a row holds the
numbers ``compare`` prints for that trace, strategy and parameters.

The cells run on the local process pool through the experiments' job runner
(heapscope/experiments/runner.py, on allocators/parallel.py), ``-j N`` at
once.  Each row is appended to the results file and flushed as its cell
ends; a results file that already holds a cell (same trace, strategy and
parameters, an error row included) is not measured again, so a sweep stopped
half way (Ctrl-C, a killed session) resumes where it stopped when run again
with the same ``-o``.  A last row cut short by the stop is dropped (the file
rewritten without it, atomically: heapscope/outputs.py).
"""

from __future__ import annotations

import csv
import itertools
import math
import time
from dataclasses import dataclass
from typing import Callable, Iterable

from .allocators.params import ParamError, parse_param
from .allocators.parallel import summary_row
from .allocators.registry import STRATEGIES, make_strategy
from .allocators.replay import Timeline
from .allocators.user import UserStrategyError
from .experiments.runner import Job
from .traces import TraceError
from .traces.corpus import check_corpus, corpus_files

#: the columns naming a cell, before the measures
CELL_COLUMNS = ["trace", "strategy", "params"]


class SweepError(Exception):
    """A sweep that cannot start (a bad grid, a results file of other columns);
    the message names what is wrong."""


@dataclass(frozen=True)
class Cell:
    """One measurement: ``params`` the strategy's parameters as sorted
    ``(name, value)`` pairs (values parsed, as the strategy gets them)."""
    trace: str
    strategy: str
    params: tuple = ()

    @property
    def params_text(self) -> str:
        """The parameters as the results file spells them: ``max_order=14 min_order=5``."""
        return " ".join(f"{k}={_value_text(v)}" for k, v in self.params)

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.trace, self.strategy, self.params_text)

    def job(self) -> Job:
        return Job.of(self.key, self.trace, self.strategy, dict(self.params),
                      label=f"{self.strategy} {self.params_text}".strip())


def _value_text(value) -> str:
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


# ------------------------------------------------------------------ the grid
def parse_grid(given: Iterable[tuple[str, str, str]]) -> dict[str, dict[str, list]]:
    """``-P STRATEGY.NAME=V1,V2,...`` options (as ``(strategy, name, text)``)
    -> ``{strategy: {name: [values]}}``, each value parsed and checked
    against the strategy's declaration; SweepError names a bad one."""
    grid: dict[str, dict[str, list]] = {}
    for strategy, name, text in given:
        option = f"-P {strategy}.{name}={text}"
        cls = STRATEGIES.get(strategy)
        if cls is None:
            raise SweepError(f"{option}: unknown strategy {strategy!r}")
        if name in grid.get(strategy, {}):
            raise SweepError(f"{option}: {strategy}.{name} is given twice; "
                             "list its values in one option, V1,V2,...")
        words = [w.strip() for w in text.split(",")]
        if not all(words):
            raise SweepError(f"{option}: expected values separated by commas, e.g. "
                             f"{strategy}.{name}=3,4,5")
        if len(set(words)) != len(words):
            raise SweepError(f"{option}: a value is listed twice")
        try:
            values = [parse_param(cls, name, w) for w in words]
        except ParamError as exc:    # names the strategy, the parameter and its range
            raise SweepError(f"{option}: {exc}") from None
        grid.setdefault(strategy, {})[name] = values
    return grid


def cells(traces: list[str], strategies: list[str], grid: dict[str, dict[str, list]],
          common: dict | None = None) -> list[Cell]:
    """Every cell, trace by trace, strategy by strategy, the grid's points in
    the order their values were given (a strategy without -P: one cell, its
    defaults).  ``common``: the parameters every strategy gets (--word...),
    part of each cell's parameters, so a sweep with another --word is
    other cells."""
    out = []
    for trace in traces:
        for strategy in strategies:
            axes = grid.get(strategy, {})
            names = sorted(axes)
            for point in itertools.product(*(axes[n] for n in names)):
                params = dict(common or {}, **dict(zip(names, point)))
                out.append(Cell(trace, strategy, tuple(sorted(params.items()))))
    return out


def trace_specs(given: list[str]) -> list[str]:
    """The traces the command line names (traces/corpus.py: a folder stands
    for the files in it); SweepError for a folder with none."""
    try:
        return corpus_files(given)
    except TraceError as exc:
        raise SweepError(str(exc)) from None


# ------------------------------------------------------------ measuring
def measure_cell(job: Job, trace) -> dict:
    """A cell's row, as ``heapscope compare`` measures a strategy
    (heapscope/cli.py compare_rows, allocators/parallel.py's worker): the
    timeline without checkpoints, its summary and ``cpu_s``; ``error`` alone
    when the strategy refuses its parameters or fails on the way."""
    params = dict(job.params)
    try:
        make_strategy(job.strategy, **params)
        timeline = Timeline(trace, job.strategy, params, checkpoints=False, keep_series=False)
        timeline.build()
    except (ValueError, UserStrategyError) as exc:
        return {"error": str(exc)}
    if timeline.fault is not None:
        return {"error": str(timeline.fault)}
    return summary_row(timeline)


# ------------------------------------------------------------ the results file
class ResultsFile:
    """The CSV file of a sweep: ``columns`` its header; :meth:`done` the cells
    it holds; :meth:`append` one row, flushed at once."""

    def __init__(self, path: str, measures: list[str]) -> None:
        self.path = path
        self.columns = CELL_COLUMNS + list(measures) + ["error"]
        self._file = None
        self.held: set[tuple] = set()

    def open(self) -> "ResultsFile":
        """Read what the file holds (SweepError if its header is another's),
        drop a last row cut short, and open it to append."""
        from .outputs import atomic_output
        rows, complete = self._read()
        if rows is None or not complete:
            # a new file, or one whose last row a stop cut: written anew, whole rows only
            with atomic_output(self.path, "w") as f:
                writer = csv.writer(f, lineterminator="\n")
                writer.writerow(self.columns)
                writer.writerows(rows or [])
        self.held = {tuple(r[:len(CELL_COLUMNS)]) for r in rows or []}
        self._file = open(self.path, "a", newline="")
        self._writer = csv.writer(self._file, lineterminator="\n")
        return self

    def _read(self) -> tuple[list | None, bool]:
        """(the complete rows, whether the file ends with a whole row); None
        when there is no file yet (or an empty one)."""
        try:
            with open(self.path, newline="") as f:
                text = f.read()
        except FileNotFoundError:
            return None, True
        except (OSError, UnicodeDecodeError) as exc:
            raise SweepError(f"{self.path}: cannot read the results file: "
                             f"{getattr(exc, 'strerror', None) or exc}") from None
        if not text:
            return None, True
        records = list(csv.reader(text.splitlines(keepends=True)))
        if records[0] != self.columns:
            raise SweepError(f"{self.path}: not the results of this sweep (its columns are "
                             f"{','.join(records[0])[:120]}; expected {','.join(self.columns[:5])},...); "
                             "name another file")
        complete = text.endswith("\n")
        rows = records[1:] if complete else records[1:-1]
        # a row of other length is one the stop cut inside a quoted field
        good = [r for r in rows if len(r) == len(self.columns)]
        return good, complete and len(good) == len(rows)

    def append(self, cell: Cell, row: dict) -> None:
        self._writer.writerow([*cell.key] + [_csv_value(row.get(k)) for k in self.columns[3:-1]]
                              + [row.get("error", "")])
        self._file.flush()
        self.held.add(cell.key)

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


def _csv_value(value):
    """As ``heapscope compare --format csv`` writes a value (NaN: empty)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return value


# ------------------------------------------------------------ running
def check_traces(specs: list[str], load) -> None:
    """Load each trace once before any cell runs; SweepError names the first
    one that cannot be read (TraceError's message names file and line)."""
    try:
        check_corpus(specs, load)
    except TraceError as exc:
        raise SweepError(str(exc)) from None


ProgressFn = Callable[[int, int, float | None], None]


def run_sweep(todo: list[Cell], results: ResultsFile, workers: int | None,
              time_limit: float | None, progress: ProgressFn | None = None) -> int:
    """Measure the cells of ``todo``, appending each row to ``results`` as it
    ends; ``progress(done, total, eta_seconds)`` after each.  Returns how many
    rows have an error."""
    from .experiments.runner import run_jobs
    by_key = {c.key: c for c in todo}
    errors = [0]
    start = time.monotonic()

    def row_done(job: Job, row: dict) -> None:
        results.append(by_key[job.key], row)
        errors[0] += "error" in row

    def report(done: int, total: int, job: Job) -> None:
        if progress:
            elapsed = time.monotonic() - start
            progress(done, total, elapsed / done * (total - done) if done else None)

    run_jobs([c.job() for c in todo], workers, report, time_limit=time_limit,
             measure_job=measure_cell, row_done=row_done)
    return errors[0]


# ------------------------------------------------------------ Parquet
def parquet_missing() -> str | None:
    """Why ``--parquet`` cannot be written here (None: it can)."""
    import importlib.util
    if importlib.util.find_spec("pyarrow") is None:
        return "--parquet needs pyarrow: pip install 'heapscope[parquet]'"
    return None


def write_parquet(results_path: str, path: str, whole: set[str]) -> int:
    """Every row of the results file (CSV) as a Parquet table at ``path``,
    written beside it and renamed over it when complete (heapscope/outputs.py):
    the measures in ``whole`` as int64, the other measures float64, an empty
    cell null, the cell's names and ``error`` as text.  Returns the rows."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from .outputs import atomic_path
    with open(results_path, newline="") as f:
        records = list(csv.reader(f))
    header, rows = records[0], records[1:]
    text = set(CELL_COLUMNS) | {"error"}
    columns = {}
    for i, name in enumerate(header):
        values = [r[i] for r in rows]
        if name in text:
            columns[name] = pa.array(values, pa.string())
        elif name in whole:
            columns[name] = pa.array([int(v) if v else None for v in values], pa.int64())
        else:
            columns[name] = pa.array([float(v) if v else None for v in values], pa.float64())
    with atomic_path(path) as partial:
        pq.write_table(pa.table(columns), partial)
    return len(rows)
