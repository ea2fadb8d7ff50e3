"""The command line's tables and progress bars, drawn by rich (Textualize's
terminal library), the one place heapscope lays out text in columns or
draws a bar.

* :func:`table_text`: an aligned table (the first column left, the others
  right, two spaces between, a rule of dashes under the header).  For a
  pipe or a file it is plain text, the layout scripts and tests have always
  read; on a terminal the same layout with a bold header, dim rules and
  coloured notes (never cut to the terminal's width: a number cut short
  would mislead).  A row may end in a note
  that runs on across the columns after it (:class:`RunOn`: an error, "not
  available"), its width left out of theirs.
* :class:`Bars`: one progress bar per named task (a strategy replaying, the
  cells of a sweep) with its rate and the time left, on a terminal only;
  :func:`bars_for` gives None for a pipe, where a bar would be noise.

Whether a stream is a terminal is rich's answer (:func:`is_terminal`):
``isatty()``, overridden by the ``FORCE_COLOR`` / ``TTY_COMPATIBLE``
variables rich documents (``FORCE_COLOR=1 heapscope compare | less -R``).
JSON and CSV never come here.
"""

from __future__ import annotations

import io
import time
from dataclasses import dataclass
from typing import Callable, Sequence, TextIO

from rich.console import Console
from rich.progress import (BarColumn, MofNCompleteColumn, Progress, ProgressColumn, TaskProgressColumn, TextColumn,
                           TimeElapsedColumn, TimeRemainingColumn)
from rich.rule import Rule
from rich.segment import Segment, Segments
from rich.table import Table
from rich.text import Text

#: a plain table's lines are never wrapped: as wide as its widest row
PLAIN_WIDTH = 1 << 16


def is_terminal(stream: TextIO) -> bool:
    """Whether ``stream`` is a terminal, as rich decides (isatty, or forced)."""
    return Console(file=stream).is_terminal


def _console(terminal: bool) -> Console:
    """A console writing into a string, as wide as any table: styled for a
    terminal, plain text otherwise."""
    return Console(file=io.StringIO(), force_terminal=terminal, width=PLAIN_WIDTH,
                   color_system="standard" if terminal else None, highlight=False,
                   markup=False, emoji=False)


@dataclass(frozen=True)
class RunOn:
    """A row whose first ``at`` cells are aligned with the others and whose
    ``text`` then runs on, unaligned, across the columns after them."""
    cells: Sequence[str]
    at: int
    text: str
    style: str = "yellow"


def table_text(header: Sequence[str], rows: Sequence[Sequence[str] | RunOn], *,
               terminal: bool = False, column_styles: Sequence[str] | None = None,
               rule: bool = True) -> str:
    """``rows`` under ``header``, aligned (no trailing spaces, no final
    newline), with a rule of dashes under the header unless ``rule`` is
    false.  ``terminal``: with styles.
    ``column_styles``: each column's style on a terminal ("" for none)."""
    n = len(header)
    table = Table(box=None, pad_edge=False, padding=(0, 1), show_edge=False,
                  header_style="bold" if terminal else "")
    for i, title in enumerate(header):
        style = (column_styles[i] if column_styles and terminal else "") or None
        table.add_column(title, justify="left" if i == 0 else "right", no_wrap=True, style=style)
    dim = "dim" if terminal else ""
    table.add_row(*[Rule(characters="-", style=dim) for _ in range(n)])
    runs_on: dict[int, RunOn] = {}
    for j, row in enumerate(rows):
        if isinstance(row, RunOn):
            runs_on[j + 2] = row            # lines: the header, the rule, then the rows
            row = list(row.cells[:row.at]) + [""] * (n - row.at)
        table.add_row(*row)
    console = _console(terminal)
    lines = console.render_lines(table, console.options, pad=False, new_lines=False)
    starts = _column_starts(lines[1], n)
    out = []
    for j, line in enumerate(lines):
        run = runs_on.get(j)
        if run is not None:
            # the aligned cells, then the text from where column ``at`` starts
            line = Segment.adjust_line_length(line, starts[run.at]) if run.at < n else \
                line + [Segment("  ")]
            line = line + [Segment(run.text, console.get_style(run.style) if terminal else None)]
        if j != 1 or rule:
            out.append(_text(console, line))
    return "\n".join(out)


def _column_starts(rule_line: list[Segment], n: int) -> list[int]:
    """Where each column starts: the runs of dashes of the rule line."""
    text = "".join(s.text for s in rule_line)
    starts, inside = [], False
    for i, ch in enumerate(text):
        if ch == "-" and not inside:
            starts.append(i)
        inside = ch == "-"
    return (starts + [len(text) + 2] * n)[:n]


def _text(console: Console, line: list[Segment]) -> str:
    """One rendered line as text: escape codes on a terminal, trailing blanks dropped."""
    with console.capture() as capture:
        console.print(Segments(line), end="", soft_wrap=True)
    return capture.get().rstrip()


# ------------------------------------------------------------------ progress
class RateColumn(ProgressColumn):
    """A task's rate in its own unit: ``12,345 steps/s``."""

    def __init__(self, unit: str) -> None:
        super().__init__()
        self.unit = unit

    def render(self, task) -> Text:
        # rich's recent rate; before it has two samples (a short task), the mean so far
        speed = task.finished_speed or task.speed
        if speed is None and task.completed and task.elapsed:
            speed = task.completed / task.elapsed
        return Text("" if speed is None else f"{speed:,.0f} {self.unit}/s", style="cyan")


class Bars:
    """Progress bars on ``stream`` (a terminal), one per name given to
    :meth:`update`, each with its percentage, done of total, rate (``unit`` per second),
    time elapsed and time left (rich's estimate from the recent rate).
    Redrawn at most ``per_second`` times a second, and when a task ends;
    wiped when closed (``transient``), leaving the lines :meth:`say` wrote.
    No thread of its own: it draws when told, from the caller's thread (the
    workers are started by fork, which a drawing thread would not survive)."""

    def __init__(self, stream: TextIO, unit: str, *, per_second: float = 5.0,
                 console: Console | None = None, transient: bool = True,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.console = console or Console(file=stream)
        self.clock = clock
        self.progress = Progress(
            TextColumn("{task.description}"), BarColumn(), TaskProgressColumn(),
            MofNCompleteColumn(), RateColumn(unit), TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
            console=self.console, auto_refresh=False, transient=transient, get_time=clock)
        self.tasks: dict[str, int] = {}
        self.every = 1.0 / per_second
        self.last = float("-inf")
        self.started = False

    def _start(self) -> None:
        if not self.started:
            self.progress.start()
            self.started = True

    def update(self, name: str, done: float, total: float | None, description: str | None = None) -> None:
        """Task ``name`` has ``done`` of ``total`` (a new name: a new bar)."""
        self._start()
        task = self.tasks.get(name)
        if task is None:
            task = self.tasks[name] = self.progress.add_task(description or name, total=total)
        self.progress.update(task, completed=done, total=total,
                             description=description or self.progress.tasks[task].description)
        now = self.clock()
        if now - self.last >= self.every or (total is not None and done >= total):
            self.last = now
            self.progress.refresh()

    def say(self, text: str) -> None:
        """A line kept above the bars (a trace graded, a step drawn)."""
        self._start()
        self.progress.console.print(text, markup=False, highlight=False)

    def remove(self, name: str) -> None:
        task = self.tasks.pop(name, None)
        if task is not None:
            self.progress.remove_task(task)
            self.progress.refresh()

    def close(self) -> None:
        if self.started:
            self.progress.refresh()
            self.progress.stop()
            self.started = False

    def __enter__(self) -> "Bars":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def bars_for(stream: TextIO, unit: str) -> Bars | None:
    """:class:`Bars` on ``stream`` if it is a terminal, else None."""
    return Bars(stream, unit) if is_terminal(stream) else None


__all__ = ["Bars", "RunOn", "bars_for", "is_terminal", "table_text"]
