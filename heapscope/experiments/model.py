"""What an experiment produces: tables in the seed's own columns, findings
in words, and a chart described as data (drawn by gui/experiment_chart.py).

A :class:`Table` has :class:`Column` s, each marked as the seed's published
figure (``source="seed"``) or ours, and rows of plain values (numbers, text,
None for a blank).  A row is one strategy; a strategy the seed ran that is
not registered in this heapscope has a row with ``available`` False and a
note saying why, so the table keeps the seed's rows and fills them in as
soon as the strategy exists.

No Qt here: the command line, the tests and the docs use these as data.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

SEED = "seed"
OURS = "ours"


@dataclass(frozen=True)
class Column:
    """One column: ``key`` in the rows, ``title`` for people, ``fmt`` a
    format for numbers (text is shown as it is), and whose figure it is."""
    key: str
    title: str
    fmt: str = "{}"
    source: str = OURS
    #: numbers above this are shown with ``flag`` after them (a heap beyond RAM)
    flag_above: float | None = None
    flag: str = "*"

    def show(self, value) -> str:
        if value is None:
            return ""
        if isinstance(value, str):
            return value
        if isinstance(value, float) and math.isnan(value):
            return "n/a"
        if isinstance(value, bool):
            return "yes" if value else "no"
        text = self.fmt.format(value)
        if self.flag_above is not None and value > self.flag_above:
            text += self.flag
        return text


@dataclass
class Table:
    """One table of an experiment: ``key`` names it in CSV and JSON."""
    key: str
    title: str
    columns: list[Column]
    rows: list[dict] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def row(self, strategy: str) -> dict:
        """The row of ``strategy`` (KeyError if none)."""
        for r in self.rows:
            if r.get("strategy") == strategy:
                return r
        raise KeyError(strategy)

    def value(self, strategy: str, key: str):
        """Column ``key`` of ``strategy``'s row; None when the strategy has no
        row (left out of the run) or no such value."""
        try:
            return self.row(strategy).get(key)
        except KeyError:
            return None


@dataclass(frozen=True)
class Series:
    """One line or set of bars of a chart panel: a value per x label (None:
    no value there, e.g. ENOMEM or a strategy not available)."""
    label: str
    values: list
    kind: str = "bar"          # "bar" or "line"
    source: str = OURS
    marks: tuple = ()          # x indices to mark with a cross (ENOMEM)


@dataclass(frozen=True)
class Panel:
    title: str
    x_labels: list[str]
    series: list[Series]
    y_label: str = ""
    log_y: bool = False
    #: (value, label) horizontal reference lines, e.g. a heap limit
    hlines: tuple = ()
    x_title: str = ""
    #: the height at which a series' marks are drawn (a heap limit), else its highest value
    mark_at: float | None = None


@dataclass(frozen=True)
class Chart:
    title: str
    panels: list[Panel]


@dataclass
class Result:
    """Everything ``heapscope experiment NAME`` prints or saves."""
    experiment: str
    title: str
    source: str                          # the seed: who, where, when
    setup: list[str]                     # what was run, in words (workloads, parameters)
    tables: list[Table]
    findings: list[str] = field(default_factory=list)
    chart: Chart | None = None
    params: dict = field(default_factory=dict)   # the settings and overrides used

    def table(self, key: str) -> Table:
        for t in self.tables:
            if t.key == key:
                return t
        raise KeyError(key)
