"""``heapscope find``: the steps of a replay where a condition holds, without
a window.

The conditions are :mod:`heapscope.allocators.conditions`' (docs/gui.md,
"Conditions"); the search is :func:`heapscope.allocators.find.find_steps`,
the words of each step the window's (:func:`heapscope.allocators.find.step_words`).
:func:`find_report` builds the report as plain data (what ``--format json``
prints); :func:`format_text` writes it for a person.  A strategy of your own
is replayed in a worker process with the time limit, as ``inspect`` does.
"""

from __future__ import annotations

import functools
import json

from .allocators.conditions import ConditionError, known_events, parse
from .allocators.find import find_steps, step_words
from .allocators.isolation import needs_worker
from .allocators.phrases import count
from .allocators.replay import Timeline
from .allocators.user import UserStrategyError


class FindError(ValueError):
    """A condition or strategy the search cannot be made for (exit status 2)."""


def read_condition(text: str, strategy_name: str):
    """The condition ``text`` parsed for ``strategy_name``; FindError
    with the column and a caret under it when it cannot be read."""
    try:
        return parse(text, known_events([strategy_name]))
    except ConditionError as exc:
        raise FindError(f"bad condition: {exc}\n  {exc.pointer().replace(chr(10), chr(10) + '  ')}") from None


def find_report(trace, strategy_name: str, condition_text: str, params: dict | None = None,
                words: int | None = None, time_limit: float | None = None,
                progress=None) -> dict:
    """The report of the steps of ``trace`` replayed through
    ``strategy_name`` where the condition holds: plain data with the keys
    ``trace``, ``strategy``, ``condition``, ``steps`` (how many were
    searched), ``count`` and ``matches`` (``{"step", "text"}`` for the first
    ``words`` matches, all of them when None; none when 0)."""
    params = dict(params or {})
    condition = read_condition(condition_text, strategy_name)
    if time_limit is not None and needs_worker(strategy_name):
        return _find_in_worker(trace, strategy_name, condition_text, params, words, time_limit)
    timeline = Timeline(trace, strategy_name, params)
    timeline.build(progress=progress)
    found = find_steps(timeline, condition)
    shown = found.steps if words is None else found.steps[:words]
    texts = step_words(timeline, shown)
    return {
        "trace": {"name": trace.name, "ops": len(trace)},
        "strategy": strategy_name,
        "params": params,
        "condition": condition_text,
        "steps": found.n,
        "count": found.count,
        "walked": found.walked,
        # the event tests no step can pass: the strategy never makes their events
        "never": found.never_text(strategy_name),
        "matches": [{"step": int(s), "text": t} for s, t in zip(shown, texts)],
        # a strategy of your own that made a mistake: its steps before it were searched
        "stopped": None if timeline.fault is None else str(timeline.fault),
    }


def _find_job(trace, spec, note, *, condition: str, words):
    """In the worker: the report, or the mistake that stopped the replay."""
    try:
        return "report", find_report(trace, spec.name, condition, spec.params, words)
    except UserStrategyError as exc:
        return "fault", exc
    except FindError as exc:
        return "refused", str(exc)


def _find_in_worker(trace, strategy_name: str, condition: str, params: dict, words,
                    time_limit: float) -> dict:
    from .inspection import report_in_worker
    job = functools.partial(_find_job, condition=condition, words=words)
    return report_in_worker(trace, strategy_name, params, job, time_limit, FindError)


def to_json(report: dict) -> str:
    return json.dumps(report, indent=1)


def format_text(report: dict) -> str:
    """A heading line, then one line per match in the window's words."""
    n, found = report["steps"], report["count"]
    head = (f"# {report['trace']['name'] or 'trace'}, {report['strategy']}: {found:,} of "
            f"{count(n, 'step', grouped=True)} where {report['condition']}")
    lines = [head] + ([f"# {report['never']}"] if report.get("never") else [])
    lines += [m["text"] for m in report["matches"]]
    if len(report["matches"]) < found:
        lines.append(f"# ... and {found - len(report['matches']):,} more (--limit)")
    return "\n".join(lines)
