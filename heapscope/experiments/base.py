"""What every experiment shares: the seed's allocators and ours in one
lineup, settings declared as strategy parameters are, and the path from
settings to jobs to a :class:`~experiments.model.Result`.

An experiment names the strategies the seed ran by the names heapscope
gives them (:class:`SeedAllocator`, e.g. Vo's ``bsi`` is ``bsd-buckets``).
The lineup lists them first, in the seed's order, then every other
registered strategy ("ours").  A seed allocator whose strategy is not
registered keeps its row, marked not available: its figures stay in the
table, and the row fills in as soon as a strategy of that name is
registered (nothing else to change).
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field

from ..allocators.params import INT, Param, ParamError
from ..allocators.registry import STRATEGIES, strategy_names
from ..traces.workloads import declared_workload
from ..values import BadValue, format_size, parse_int, parse_size
from .model import OURS, SEED, Column, Result
from .runner import Job

NAMES = "names"


@dataclass(frozen=True)
class ListParam(Param):
    """A setting holding a list, written with commas: ``512,1024,2048`` (whole
    numbers or sizes, each in ``low..high``) or ``gcc-cc1,perl-words`` (names)."""
    item_kind: str = INT

    def accepts(self) -> str:
        if self.item_kind == NAMES:
            return "names separated by commas"
        noun = "sizes (K, M suffixes)" if self.item_kind == "size" else "whole numbers"
        return f"{noun} in {self.low}..{self.high}, separated by commas"

    def default_text(self) -> str:
        if self.default is None:
            return self.none_means
        shown = format_size if self.item_kind == "size" else str
        return ",".join(shown(v) for v in self.default)

    def check(self, value, owner):
        if value is None and self.none_ok:
            return None
        if not isinstance(value, (list, tuple)) or not value:
            raise self._error(owner, value)
        if self.item_kind == NAMES:
            if not all(isinstance(v, str) and v for v in value):
                raise self._error(owner, value)
            return list(value)
        for v in value:
            if isinstance(v, bool) or not isinstance(v, int) or not self.low <= v <= self.high:
                raise self._error(owner, value)
        return list(value)

    def parse(self, text: str, owner):
        items = [t.strip() for t in text.split(",") if t.strip()]
        if self.item_kind != NAMES:
            read = parse_size if self.item_kind == "size" else parse_int
            try:
                items = [read(t) for t in items]
            except BadValue:
                raise self._error(owner, text) from None
        try:
            return self.check(items, owner)
        except ParamError:
            raise self._error(owner, text) from None


@dataclass(frozen=True)
class SeedAllocator:
    """An allocator the seed measured: its name there, what it was, the
    strategies of ours that follow it (best first; empty when none can), and
    its published figures by table key and column key."""
    label: str
    what: str
    strategies: tuple[str, ...] = ()
    figures: dict = field(default_factory=dict)
    why_missing: str = ""


@dataclass(frozen=True)
class Entry:
    """One row of the lineup."""
    strategy: str
    seed: SeedAllocator | None
    available: bool = True
    note: str = ""

    @property
    def role(self) -> str:
        return SEED if self.seed is not None else OURS


class ExperimentError(ValueError):
    """A setting or an override that the experiment cannot take (exit status 2)."""


@dataclass
class Run:
    """One run's choices: the lineup, the settings, the workload overrides."""
    lineup: list[Entry]
    settings: dict
    workload: dict
    workers: int | None = None

    @property
    def strategies(self) -> list[str]:
        return [e.strategy for e in self.lineup if e.available]


class Experiment:
    """One seed's experiment.  Subclasses set the class attributes and write
    :meth:`jobs` and :meth:`result`."""

    name = "abstract"
    title = ""
    #: who, where, when: "seed 000: Phong Vo, Usenet (net.lang.c), 10 May 1989"
    source = ""
    #: the workload generator the experiment runs, whose parameters -W overrides
    workload: str | None = None
    #: workload parameters the experiment sets differently from the generator
    workload_defaults: dict = {}
    #: workload parameters the experiment varies itself (-W may not set them)
    workload_fixed: tuple[str, ...] = ()
    settings: tuple[Param, ...] = ()
    seed_allocators: tuple[SeedAllocator, ...] = ()
    #: strategies of ours not run unless named with -s, and why (a replay
    #: that would take far longer than all the others together)
    left_out: dict[str, str] = {}
    #: the list setting a user's corpus of recorded traces fills
    #: (``heapscope experiment NAME --traces FOLDER``); None for an experiment
    #: that replays workloads it generates, where a corpus means nothing
    corpus: str | None = None

    def _result(self, run: Run, setup: list[str], tables, findings, chart) -> Result:
        """The run's :class:`Result`: its setup and tables, then the
        findings and the chart the experiment reads off them."""
        result = Result(self.name, self.title, self.source, setup, tables,
                        params={"settings": run.settings, "workload": run.workload})
        result.findings = findings(result)
        result.chart = chart(result)
        return result

    # ------------------------------------------------------------ choices
    def lineup(self, only: list[str] | None = None) -> list[Entry]:
        """The seed's allocators (available or not), then ours; ``only``
        keeps those strategies, and the seed's rows no strategy can fill
        (their figures cost nothing to show)."""
        entries: list[Entry] = []
        listed: set[str] = set()
        for sa in self.seed_allocators:
            present = [s for s in sa.strategies if s in STRATEGIES and s not in listed]
            for s in present:
                entries.append(Entry(s, sa))
                listed.add(s)
            if not present:
                name = sa.strategies[0] if sa.strategies else "(none)"
                why = sa.why_missing or (f"not available: no strategy named {name} is registered"
                                         if sa.strategies else "not available")
                entries.append(Entry(name, sa, available=False, note=why))
        for s in strategy_names():
            if s not in listed:
                if s in self.left_out and not (only and s in only):
                    entries.append(Entry(s, None, available=False,
                                         note=f"not run unless asked (-s {s}): {self.left_out[s]}"))
                else:
                    entries.append(Entry(s, None))
                listed.add(s)
        if only:
            unknown = [s for s in only if s not in STRATEGIES]
            if unknown:
                raise ExperimentError(f"unknown strategy {unknown[0]!r}; known: "
                                      f"{', '.join(strategy_names())}")
            entries = [e for e in entries if e.strategy in only or not e.available]
        return entries

    def declared_settings(self) -> dict[str, Param]:
        return {p.name: p for p in self.settings}

    def parse_settings(self, raw: dict[str, str]) -> dict:
        """Defaults, replaced by the ``-X NAME=VALUE`` given (text)."""
        declared = self.declared_settings()
        out = {name: p.default for name, p in declared.items()}
        for key, text in raw.items():
            p = declared.get(key)
            if p is None:
                takes = ", ".join(declared) or "none"
                raise ExperimentError(f"experiment {self.name} has no setting {key!r} (it takes: {takes})")
            try:
                out[key] = p.parse(text, f"experiment {self.name}")
            except ParamError as exc:
                raise ExperimentError(str(exc)) from None
        return out

    def parse_workload(self, raw: dict[str, str]) -> dict:
        """The workload's parameters: the experiment's defaults, replaced by
        the ``-W KEY=VALUE`` given, each read by the workload's declaration."""
        if raw and self.workload is None:
            raise ExperimentError(f"experiment {self.name} replays recorded traces: -W does not "
                                  "apply (its settings: heapscope experiment, with no name, lists them)")
        out = dict(self.workload_defaults)
        if self.workload is None:
            return out
        declared = declared_workload(self.workload)
        for key, text in raw.items():
            p = declared.get(key)
            if p is None:
                raise ExperimentError(f"workload {self.workload!r} has no parameter {key!r} "
                                      f"(it takes: {', '.join(declared)})")
            if key in self.workload_fixed:
                raise ExperimentError(f"experiment {self.name} sets {key} itself, run by run; "
                                      f"see its settings (heapscope experiment, with no name, lists them)")
            try:
                out[key] = p.parse(text, f"workload {self.workload!r}")
            except ParamError as exc:
                raise ExperimentError(str(exc)) from None
        return out

    def prepare(self, only: list[str] | None = None, settings: dict[str, str] | None = None,
                workload: dict[str, str] | None = None, workers: int | None = None,
                corpus: list[str] | None = None) -> Run:
        """The run's choices; ``corpus``: trace files (a folder's, already
        listed: traces/corpus.py) that replace the experiment's own traces."""
        parsed = self.parse_settings(settings or {})
        if corpus is not None:
            parsed[self.corpus_setting(settings or {})] = list(corpus)
        return Run(self.lineup(only), parsed, self.parse_workload(workload or {}), workers)

    def corpus_setting(self, settings: dict[str, str]) -> str:
        """The setting ``--traces`` fills; ExperimentError when the experiment
        takes no corpus, or the same setting is also given with -X."""
        if self.corpus is None:
            from . import EXPERIMENTS
            takers = [e.name for e in EXPERIMENTS.values() if e.corpus]
            raise ExperimentError(f"experiment {self.name} replays workloads it generates: "
                                  f"--traces does not apply (experiments over recorded traces: "
                                  f"{', '.join(takers)})")
        if self.corpus in settings:
            raise ExperimentError(f"--traces and -X {self.corpus}=... both name the traces: "
                                  "give one")
        return self.corpus

    # ------------------------------------------------------------ running
    def jobs(self, run: Run) -> list[Job]:
        raise NotImplementedError

    def result(self, run: Run, rows: dict[tuple, dict]) -> Result:
        raise NotImplementedError


# ----------------------------------------------------------- row helpers
def base_row(entry: Entry) -> dict:
    row = {"strategy": entry.strategy, "seed_name": entry.seed.label if entry.seed else "",
           "role": entry.role}
    if not entry.available:
        row["available"] = False
        row["note"] = entry.note
    return row


def seed_figures(entry: Entry, table: str) -> dict:
    return dict(entry.seed.figures.get(table, {})) if entry.seed else {}


def strategy_columns() -> list[Column]:
    return [Column("strategy", "strategy"), Column("seed_name", "seed's name", source=SEED)]


def mean_sd(values: list[float]) -> tuple[float, float | None]:
    values = [v for v in values if v is not None]
    if not values:
        return float("nan"), None
    if len(values) == 1:
        return float(values[0]), None
    return statistics.mean(values), statistics.stdev(values)


def ratio(a, b):
    if a is None or b is None or not b:
        return None
    return a / b


def combine(measured: list[dict]) -> dict:
    """One row from several runs' rows: the first error if any run failed;
    else each measure's mean (its value itself for one run), ``waste_sd``
    the standard deviation of waste, ``first_failure`` the earliest."""
    errors = [m["error"] for m in measured if "error" in m]
    if errors:
        return {"error": errors[0]}
    if len(measured) == 1:
        return dict(measured[0])
    out = {}
    for key in measured[0]:
        values = [m.get(key) for m in measured]
        if key == "first_failure":
            present = [v for v in values if v is not None]
            out[key] = min(present) if present else None
        elif all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
            out[key] = statistics.mean(values)
    out["waste_sd"] = statistics.stdev([m["waste"] for m in measured])
    return out


def percent_less(value, baseline):
    """How much smaller ``value`` is than ``baseline``, in percent."""
    if value is None or not baseline:
        return None
    return 100.0 * (1.0 - value / baseline)
