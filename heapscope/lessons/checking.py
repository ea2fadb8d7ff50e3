"""Loading a lesson: its trace and strategies replayed, each stop's directives
and claims checked against the replay (docs/lessons.md).

:func:`load_lesson` returns a :class:`Lesson` whose stops say their state
exactly (step, event, selection, panels) and in words (:meth:`Lesson.describe`,
what ``heapscope lesson check`` prints); any mistake, a claim that is false
included, is a :class:`~.reader.LessonError` naming the file and line.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from heapscope.allocators.explain import describe_event
from heapscope.allocators.params import ParamError, parse_param
from heapscope.allocators.registry import STRATEGIES, make_strategy
from heapscope.allocators.replay import ReplayCancelled, Timeline
from heapscope.traces import TraceError, load_trace
from heapscope.traces.readable import EXTENSION, parse_readable, read_lines
from heapscope.traces.trace import ALLOC, FREE

from .claims import Claim, ClaimError, StepFacts, parse_claim
from .reader import PANELS, LessonError, LessonText, Stop, read_lesson_text

__all__ = ["Lesson", "Question", "StopState", "load_lesson", "load_lesson_text", "run_measures", "CLICK"]

#: the answer of a question answered by a click on the block the step's
#: malloc takes (or "the heap will grow"): the replay knows which is right
CLICK = "click"


@dataclass(frozen=True)
class Question:
    """An ``ask:`` of a stop: the question, the choices offered (none: the
    student answers in words, the window only reveals ``answer``), the right
    one, and the explanation shown after."""
    text: str
    choices: tuple[str, ...]
    answer: str
    explain: str = ""

    def is_right(self, given: str) -> bool:
        return given.strip().casefold() == self.answer.casefold()

    @property
    def kind(self) -> str:
        """How it is answered: ``"choice"`` (one of the choices), ``"click"``
        (``answer: click``: the block the step's malloc takes, clicked on the
        heap before the step, or "the heap will grow"; judged by the replay),
        or ``"words"`` (no choices: thought over, then revealed)."""
        if self.choices:
            return "choice"
        return "click" if self.answer.casefold() == CLICK else "words"


@dataclass
class StopState:
    """A stop as the window sets it: the step, the event in it (1-based, or
    None for the whole step), the selected block's name, the panels shown,
    and the claims checked there."""
    stop: Stop
    step: int
    event: int | None = None
    select: str | None = None
    show: tuple[str, ...] = ()
    claims: list[Claim] = field(default_factory=list)
    question: Question | None = None


@dataclass
class Lesson:
    """A lesson loaded and checked: every claim of every stop holds."""
    text: LessonText
    trace: object
    strategies: list[str]
    params: dict[str, dict]
    names: dict[int, str]
    timelines: dict[str, Timeline]
    stops: list[StopState]

    @property
    def title(self) -> str:
        return self.text.title

    @property
    def minutes(self) -> int | None:
        return self.text.minutes

    def claim_count(self) -> int:
        return sum(len(s.claims) for s in self.stops)

    def describe(self, index: int) -> list[str]:
        """Stop ``index``'s state in words: one line per strategy (the
        timeline's account of the step and its measures), then what is
        selected and shown and the claims that hold."""
        state = self.stops[index]
        lines = [f"stop {index + 1} (line {state.stop.line}): {state.stop.title}"]
        for name in self.strategies:
            timeline = self.timelines[name]
            timeline.seek(state.step)
            words = timeline.describe()
            if state.step:
                ident = timeline.op(state.step)[1]
                words = words.replace(f"for id {ident}", f"for {self.names.get(ident, ident)}", 1)
                words = words.replace(f"free id {ident}", f"free {self.names.get(ident, ident)}", 1)
            m = _measures(timeline, state.step)
            lines.append(f"  {name}: {words}")
            lines.append(f"  {' ' * len(name)}  heap {m['heap']} bytes, live {m['live']}, free {m['free']} "
                         f"(largest {m['largest_free']}), frag {m['external']:.2f}")
        if state.event is not None:
            lines.append(f"  event {state.event} of the step")
            for name in self.strategies:
                # the event itself, in the generic words inspect uses
                timeline = self.timelines[name]
                timeline.seek(state.step)
                events = (timeline.last_record.events or []) if timeline.last_record else []
                if state.event <= len(events):
                    lines.append(f"    {name}: {describe_event(events[state.event - 1])}")
        if state.select is not None:
            lines.append(f"  select {state.select}")
        if state.show:
            lines.append(f"  show {', '.join(state.show)}")
        if state.question is not None:
            q = state.question
            offered = f" ({' | '.join(q.choices)})" if q.choices else ""
            lines.append(f"  ask: {q.text}{offered} -> {q.answer}")
        for claim in state.claims:
            lines.append(f"  holds: {claim.text}")
        return lines


def _measures(timeline: Timeline, step: int) -> dict:
    """The measures after ``step`` (the gauges'), and :func:`run_measures` over steps 1..step."""
    if step == 0:
        zero = {k: 0 for k in ("heap", "live", "in_use", "headers", "padding", "free", "largest_free",
                               "top_free", "search", "work", "rotations")}
        return dict(zero, external=0.0, external_no_top=0.0, **run_measures(timeline, 0))
    series = timeline.series
    # the single rotations of the step's splay steps (zig 1, zig-zig and zig-zag 2)
    return dict(series.at(step - 1), rotations=int(series.rotations[step - 1]), **run_measures(timeline, step))


def run_measures(timeline: Timeline, step: int) -> dict:
    """The measures of the run so far, over steps 1..``step``:

    - ``peak_live``: the most bytes live at once, max L (Vo 1989's Salloc;
      CS:APP 9.9.3's max P_i, the peak aggregate payload);
    - ``peak_heap``: the largest heap, max H (Vo's Sarena, "the total sbrk space");
    - ``waste``: (peak_heap - peak_live) / peak_live, Vo's Waste (0 while nothing was live);
    - ``peak_util``: peak_live / H after the step, CS:APP's peak utilisation
      U_k (0 with no heap): at the last step, what ``heapscope grade`` reports
      when no request failed;
    - ``mean_search``: the mean search length of the mallocs and reallocs
      that succeeded (``compare``'s "search mean" at the last step; 0 before
      the first).
    """
    if step == 0:
        return {"peak_live": 0, "peak_heap": 0, "waste": 0.0, "peak_util": 0.0, "mean_search": 0.0}
    series = timeline.series
    peak_live = int(series.live[:step].max())
    peak_heap = int(series.heap[:step].max())
    heap = int(series.heap[step - 1])
    searched = series.is_malloc[:step] & ~series.failed[:step]
    searches = series.search[:step][searched]
    return {"peak_live": peak_live, "peak_heap": peak_heap,
            "waste": (peak_heap - peak_live) / peak_live if peak_live else 0.0,
            "peak_util": peak_live / heap if heap else 0.0,
            "mean_search": float(searches.mean()) if searches.size else 0.0}


def _facts(lesson_trace, timeline: Timeline, step: int) -> StepFacts:
    timeline.seek(step)
    rec = timeline.last_record
    ids = lesson_trace.ids[:step].tolist()
    kinds = lesson_trace.kind[:step].tolist()
    payloads = timeline.series.payload[:step].tolist()
    addresses: dict[int, int] = {}
    live: dict[int, bool] = {}
    for kind, ident, payload in zip(kinds, ids, payloads):
        if payload >= 0:
            addresses[ident] = payload
        live[ident] = kind != FREE and payload >= 0
    return StepFacts(timeline.strategy_name, step, list(rec.events or []) if rec else [],
                     _measures(timeline, step), addresses, live)


def _load_trace(text: LessonText):
    """(trace, id -> name): inline readable text, or a spec load_trace reads
    (a file relative to the lesson's folder first)."""
    path, value = text.path, text.front.get("trace")
    line = text.line_of("trace")
    if not isinstance(value, str) or not value.strip():
        raise LessonError("front matter: 'trace' is missing: the trace itself (a multi-line string in the "
                          "readable form, a = malloc(240)), a bundled trace, a workload or a file", path, line)
    if "\n" in value.strip() or "(" in value:
        try:
            trace = parse_readable(value, path)
        except TraceError as exc:
            raise LessonError(f"trace: {exc.message}", path,
                              text.trace_line + exc.line if exc.line else line) from None
        parsed = read_lines(value)
        return trace, {i: parsed.name_of(i) for i in set(trace.ids.tolist())}
    spec = value.strip()
    beside = Path(path).parent / spec
    spec = str(beside) if beside.is_file() else spec
    try:
        trace = load_trace(spec)
    except TraceError as exc:
        raise LessonError(f"trace: {exc}", path, line) from None
    names = {i: str(i) for i in set(trace.ids.tolist())}
    if spec.endswith(EXTENSION) and os.path.isfile(spec):
        # a readable file's blocks keep the names it gives them (the ids
        # are the same: one reader, traces/readable.py)
        with open(spec, encoding="utf-8", errors="replace") as f:
            parsed = read_lines(f.read())
        names = {i: parsed.name_of(i) for i in names}
    return trace, names


def _strategies(text: LessonText) -> tuple[list[str], dict[str, dict]]:
    path, front = text.path, text.front
    one, many = front.get("strategy"), front.get("strategies")
    if (one is None) == (many is None):
        raise LessonError("front matter: give either strategy = \"NAME\" or strategies = [\"A\", \"B\"]",
                          path, text.line_of("strategies" if many is not None else "strategy"))
    names = [one] if one is not None else many
    line = text.line_of("strategy" if one is not None else "strategies")
    if not isinstance(names, list) or not names or not all(isinstance(n, str) for n in names):
        raise LessonError("front matter: strategies is a list of strategy names", path, line)
    for name in names:
        if name not in STRATEGIES:
            raise LessonError(f"front matter: unknown strategy {name!r}; known: {', '.join(STRATEGIES)}",
                              path, line)
    given = front.get("params", {})
    pline = text.line_of("params")
    if not isinstance(given, dict):
        raise LessonError("front matter: [params] is a table: NAME = VALUE for every strategy, "
                          "[params.STRATEGY] for one", path, pline)
    common = {k: v for k, v in given.items() if not isinstance(v, dict)}
    params: dict[str, dict] = {}
    for name in names:
        mine = dict(common, **given.get(name, {}))
        try:
            mine = {k: parse_param(STRATEGIES[name], k, v) if isinstance(v, str) else v
                    for k, v in mine.items()}
            make_strategy(name, **mine)
        except (ParamError, TypeError, ValueError) as exc:
            raise LessonError(f"front matter: {name}: {exc}", path, pline) from None
        params[name] = mine
    for key, value in given.items():
        if isinstance(value, dict) and key not in names:
            raise LessonError(f"front matter: [params.{key}] names no strategy of this lesson "
                              f"({', '.join(names)})", path, pline)
    return names, params


def _int(d, lo: int, hi: int, path: str, what: str) -> int:
    try:
        value = int(d.value, 0)
    except ValueError:
        raise LessonError(f"{d.word}: {d.value!r} is not a whole number ({what})", path, d.line) from None
    if not lo <= value <= hi:
        raise LessonError(f"{d.word}: {value} is outside {lo}..{hi} ({what})", path, d.line)
    return value


def _only(stop: Stop, word: str, path: str):
    found = stop.values(word)
    if len(found) > 1:
        raise LessonError(f"a stop has one {word!r} line (another is on line {found[0].line})", path,
                          found[1].line)
    return found[0] if found else None


def load_lesson_text(source: str, path: str = "<lesson>", progress=None, cancel=None) -> Lesson:
    """Read, replay and check a lesson given as text; LessonError at the first
    mistake, with its line.  ``progress(done, total)``: the steps replayed so
    far over every strategy; ``cancel()`` turning true stops the replays with
    :class:`~heapscope.allocators.replay.ReplayCancelled` (the window loads a
    lesson on a thread, with a progress dialog and Cancel)."""
    text = read_lesson_text(source, path)
    trace, names = _load_trace(text)
    strategies, params = _strategies(text)
    ids = {name: ident for ident, name in names.items()}
    timelines = _built(trace, strategies, params, progress, cancel)
    n = len(trace)
    states: list[StopState] = []
    step = 0
    for stop in text.stops:
        if cancel is not None and cancel():
            raise ReplayCancelled(0)
        d = _only(stop, "step", path)
        if d is not None:
            step = _int(d, 0, n, path, f"the trace has {n} operations")
        state = StopState(stop, step)
        facts = {name: _facts(trace, timelines[name], step) for name in strategies}
        d = _only(stop, "event", path)
        if d is not None:
            fewest = min(strategies, key=lambda s: len(facts[s].events))
            state.event = _int(d, 1, max(1, len(facts[fewest].events)), path,
                               f"{fewest}'s step {step} has {len(facts[fewest].events)} events")
            if not facts[fewest].events:
                raise LessonError(f"event: {fewest}'s step {step} has no events", path, d.line)
        d = _only(stop, "select", path)
        if d is not None:
            if d.value not in ids:
                raise LessonError(f"select: the trace has no block named {d.value!r} "
                                  f"(its names: {', '.join(sorted(ids)[:12])})", path, d.line)
            if not any(facts[s].live.get(ids[d.value]) for s in strategies):
                raise LessonError(f"select: {d.value} is not live after step {step}", path, d.line)
            state.select = d.value
        d = _only(stop, "show", path)
        if d is not None:
            shown = tuple(p.strip() for p in d.value.split(",") if p.strip())
            for panel in shown:
                if panel not in PANELS:
                    raise LessonError(f"show: unknown panel {panel!r}; panels: {', '.join(PANELS)}",
                                      path, d.line)
            state.show = shown
        state.question = _question(stop, path, step >= 1 and int(trace.kind[step - 1]) == ALLOC)
        for d in stop.values("expect"):
            state.claims.append(_checked_claim(d, strategies, facts, ids, path))
        states.append(state)
    return Lesson(text, trace, strategies, params, names, timelines, states)


def _built(trace, strategies: list[str], params: dict, progress=None, cancel=None) -> dict:
    """{strategy: its timeline of ``trace``, built}, one after the other,
    reporting the steps replayed over all of them."""
    n, total = len(trace), len(trace) * len(strategies)
    timelines = {}
    for i, name in enumerate(strategies):
        done = i * n
        report = None if progress is None else (lambda d, _t, done=done: progress(done + d, total))
        timelines[name] = Timeline(trace, name, params[name]).build(progress=report, cancel=cancel)
    if progress is not None:
        progress(total, total)
    return timelines


def _question(stop: Stop, path: str, malloc_step: bool) -> Question | None:
    """The stop's ``ask:`` with its ``choices:``, ``answer:`` and ``explain:``;
    LessonError for an answer missing or not among the choices, parts
    of a question without the ``ask:``, or ``answer: click`` on a step that
    is no malloc (``malloc_step``: the stop's step is one)."""
    ask, choices, answer, explain = (_only(stop, w, path) for w in ("ask", "choices", "answer", "explain"))
    if ask is None:
        stray = choices or answer or explain
        if stray is not None:
            raise LessonError(f"{stray.word!r} belongs to a question: the stop has no 'ask:' line",
                              path, stray.line)
        return None
    if answer is None:
        raise LessonError("a question needs its 'answer:' line", path, ask.line)
    offered = tuple(c.strip() for c in choices.value.split("|") if c.strip()) if choices else ()
    if choices is not None and len(offered) < 2:
        raise LessonError("choices: at least two, separated by '|'", path, choices.line)
    if offered and answer.value.casefold() not in (c.casefold() for c in offered):
        raise LessonError(f"answer: {answer.value!r} is not one of the choices ({' | '.join(offered)})",
                          path, answer.line)
    if not offered and answer.value.casefold() == CLICK and not malloc_step:
        raise LessonError("answer: click asks for the block the stop's step takes: the step must be "
                          "a malloc (or give choices: A | B)", path, answer.line)
    return Question(ask.value, offered, answer.value, explain.value if explain else "")


def _checked_claim(d, strategies: list[str], facts: dict[str, StepFacts], ids: dict[str, int],
                   path: str) -> Claim:
    try:
        claim = parse_claim(d.value, strategies)
    except ClaimError as exc:
        raise LessonError(f"expect: {exc}", path, d.line) from None

    def id_of(name: str) -> int:
        if name not in ids:
            raise ClaimError(f"the trace has no block named {name!r}")
        return ids[name]

    for name in [claim.strategy] if claim.strategy else strategies:
        try:
            why = claim.false_because(facts[name], id_of)
        except ClaimError as exc:
            raise LessonError(f"expect: {exc}", path, d.line) from None
        if why is not None:
            raise LessonError(f"claim is false: {d.value!r}: {why}", path, d.line)
    return claim


def load_lesson(path: str | os.PathLike, progress=None, cancel=None) -> Lesson:
    """Read, replay and check the lesson in file ``path`` (``progress`` and
    ``cancel`` as :func:`load_lesson_text` takes them)."""
    path = os.fspath(path)
    try:
        with open(path, encoding="utf-8") as f:
            source = f.read()
    except OSError as exc:
        raise LessonError(f"cannot read the lesson: {exc.strerror or exc}", path) from None
    except UnicodeDecodeError:
        raise LessonError("a lesson is UTF-8 text", path) from None
    return load_lesson_text(source, path, progress, cancel)
