"""``heapscope inspect``: one step of a replay, without a window.

The debugging face a student uses from a script, and what the tests check the
views against: the step's operation, its events in the explain panel's words
(:func:`heapscope.allocators.explain.explain_step`), the heap's blocks and the
strategy's free structure (``Strategy.structure()``, docs/structure.md).

:func:`inspect_step` builds the report as plain data (what ``--format json``
prints); :func:`format_text` writes it for a person.  Step numbering is the
timeline's: step 0 is the heap before any operation, step t the heap after
the t-th operation, whose events are the ones shown.
"""

from __future__ import annotations

import functools
import json
from dataclasses import asdict, is_dataclass

from .allocators import structure_kinds
from .allocators.explain import explain_step
from .allocators.isolation import needs_worker
from .allocators.phrases import count
from .allocators.user import UserStrategyError
from .allocators.registry import make_strategy
from .allocators.replay import KIND_NAMES, Timeline
from .traces.trace import FREE, block_words

#: text format: a heap of at most this many blocks is listed whole
FULL_HEAP_BLOCKS = 64
#: text format: blocks shown on each side of a block the step's events name
CONTEXT_BLOCKS = 2
# (a structure's cuts are allocators/inspect_text.py's, shared by the kinds)


class InspectError(ValueError):
    """A step or strategy the report cannot be made for (exit status 2)."""


def inspect_step(trace, strategy_name: str, step: int, params: dict | None = None,
                 time_limit: float | None = None) -> dict:
    """The report of step ``step`` of ``trace`` replayed through
    ``strategy_name`` with ``params``: a dict of plain data with the keys
    ``step``, ``strategy``, ``trace``, ``operation``, ``events``, ``blocks``
    and ``structure`` (see docs/structure.md, "heapscope inspect").

    With ``time_limit``, a strategy of your own is replayed in a worker
    process silent at most that many seconds (allocators/isolation.py): one
    that loops, exits or dies is an InspectError naming it and the step."""
    params = dict(params or {})
    if time_limit is not None and needs_worker(strategy_name):
        return _inspect_in_worker(trace, strategy_name, step, params, time_limit)
    n = len(trace)
    if not 0 <= step <= n:
        raise InspectError(f"step {step} is outside 0..{n} ({trace.name or 'the trace'} has {n} operations)")
    try:
        make_strategy(strategy_name, **params)
    except TypeError as exc:
        raise InspectError(f"{strategy_name}: {exc}") from None
    timeline = Timeline(trace, strategy_name, params)
    strategy = timeline.seek(step)
    rec = timeline.last_record if step else None
    operation = None
    if step:
        kind, ident, size = timeline.op(step)
        lines = getattr(trace, "line_numbers", None)
        operation = {
            "kind": KIND_NAMES[kind],
            "id": ident,
            # the block's name in a readable trace (a = malloc(240)), else null
            "name": (getattr(trace, "names", None) or {}).get(ident),
            # a free's size is what the program had asked for that block
            "size": (rec.request if rec is not None else 0) if kind == FREE else size,
            "line": int(lines[step - 1]) if lines is not None else None,
            "result": rec.payload if rec is not None else None,
            "old": rec.old_payload if rec is not None else None,
            "failed": bool(rec.failed) if rec is not None else False,
            "description": timeline.describe(),
        }
    events = [{"type": x.type, "text": x.text, "addrs": list(x.addrs), "fields": _plain(x.event)}
              for x in explain_step(strategy, rec)]
    ids = timeline.program.id_of_payload()
    walk = strategy.walk_tuples()
    blocks = [[b[0], b[1], b[2]] for b in walk]
    return {
        "step": step,
        "strategy": strategy_name,
        "trace": {"name": trace.name, "ops": n},
        "operation": operation,
        "events": events,
        "blocks": blocks,
        "structure": strategy.structure(),
        # not part of the JSON contract: for the text format
        "_ids": {b[0]: ids[b[3]] for b in walk if b[3] in ids},
        "_names": getattr(trace, "names", None),
        "_title": strategy.title,
        "_heap_size": strategy.heap_size,
    }


def _inspect_job(trace, spec, note, *, step: int):
    """In the worker: the report, or the mistake that stopped the replay."""
    try:
        return "report", inspect_step(trace, spec.name, step, spec.params)
    except UserStrategyError as exc:
        return "fault", exc
    except InspectError as exc:
        return "refused", str(exc)


def _inspect_in_worker(trace, strategy_name: str, step: int, params: dict, time_limit: float) -> dict:
    job = functools.partial(_inspect_job, step=step)
    return report_in_worker(trace, strategy_name, params, job, time_limit, InspectError)


def report_in_worker(trace, strategy_name: str, params: dict, job, time_limit: float, refused):
    """What ``job`` (a module-level function or a partial of one, run as a
    :class:`~heapscope.allocators.parallel.BuildSpec` job) reports from a
    worker process replaying a strategy of your own with the time limit.
    The job answers ``("report", value)``, ``("fault", UserStrategyError)``
    (raised here) or ``("refused", message)`` (raised as ``refused``, as
    is a worker that failed)."""
    from .allocators.parallel import BuildFailed, BuildSpec, build_timelines
    result = build_timelines(trace, [BuildSpec(strategy_name, params, job=job)], workers=1,
                             time_limit=time_limit)[strategy_name]
    if isinstance(result, BuildFailed):
        raise refused(str(result))
    kind, value = result
    if kind == "fault":
        raise value
    if kind == "refused":
        raise refused(value)
    return value


def to_json(report: dict) -> str:
    """The report as JSON: the documented keys only."""
    return json.dumps({k: v for k, v in report.items() if not k.startswith("_")}, indent=1)


def _plain(event) -> dict:
    return asdict(event) if is_dataclass(event) else {"repr": repr(event)}


# ------------------------------------------------------------------ text

def format_text(report: dict, *, all_blocks: bool = False) -> str:
    """The report for a person: operation, events, heap, structure."""
    out: list[str] = []
    trace = report["trace"]
    out.append(f"{report['strategy']} ({report['_title']}) on {trace['name'] or 'a trace'}, "
               f"step {report['step']} of {trace['ops']}")
    op = report["operation"]
    if op is None:
        out.append("Operation: none yet (step 0 is the heap before the first operation)")
    else:
        where = f", trace line {op['line']}" if op["line"] is not None else ""
        size = f"{op['size']} B" + (" (the size it was asked with)" if op["kind"] == "free" else "")
        who = block_words(op["id"], report.get("_names"))
        out.append(f"Operation: {op['kind']} of {who}, {size}{where}")
        out.append(f"  {op['description']}")
    out.append("")
    events = report["events"]
    out.append(f"What {report['strategy']} did ({count(len(events), 'event')}):")
    if not events:
        out.append("  nothing")
    width = len(str(len(events)))
    for i, e in enumerate(events, 1):
        out.append(f"  {str(i).rjust(width)}. {e['text']}")
    out.append("")
    out.extend(_heap_lines(report, all_blocks))
    out.append("")
    named = {a for e in report["events"] for a in e["addrs"]}
    out.extend(_structure_lines(report["structure"], all_blocks, named))
    return "\n".join(out)


def _heap_lines(report: dict, all_blocks: bool) -> list[str]:
    blocks = report["blocks"]
    counts = {s: sum(1 for b in blocks if b[2] == s) for s in ("used", "free", "meta")}
    out = [f"Heap: {count(report['_heap_size'], 'byte')} in {count(len(blocks), 'block')} "
           f"({counts['used']} used, {counts['free']} free, {counts['meta']} meta)"]
    if not blocks:
        return out
    named: dict[int, list[int]] = {}
    for i, e in enumerate(report["events"], 1):
        for a in dict.fromkeys(e["addrs"]):
            named.setdefault(a, []).append(i)
    show = set(range(len(blocks)))
    if not all_blocks and len(blocks) > FULL_HEAP_BLOCKS:
        show = set()
        for i, b in enumerate(blocks):
            if b[0] in named:
                show.update(range(max(0, i - CONTEXT_BLOCKS), min(len(blocks), i + CONTEXT_BLOCKS + 1)))
        show.update((0, len(blocks) - 1))
        out.append(f"  (showing the blocks the events name, {CONTEXT_BLOCKS} on each side, and the "
                   "first and last; --all lists every block)")
    ids = report["_ids"]
    width = max(len(f"{blocks[-1][0]:#x}"), 6)
    out.append(f"  {'addr'.rjust(width)}  {'size'.rjust(8)}  state")
    skipped: list = []
    for i, b in enumerate(blocks):
        if i not in show:
            skipped.append(b)
            continue
        if skipped:
            out.append(_skipped_line(skipped, width))
            skipped = []
        addr, size, state = b
        note = ""
        payload_id = ids.get(addr)
        if payload_id is not None:
            note += "  " + block_words(payload_id, report.get("_names"))
        if addr in named:
            note += f"  <- event{'s' if len(named[addr]) > 1 else ''} {', '.join(map(str, named[addr]))}"
        out.append(f"  {addr:#{width}x}  {size:8d}  {state}{note}")
    if skipped:
        out.append(_skipped_line(skipped, width))
    return out


def _skipped_line(skipped: list, width: int) -> str:
    used = sum(1 for b in skipped if b[2] == "used")
    free = sum(1 for b in skipped if b[2] == "free")
    return (f"  {'...'.rjust(width)}  {count(len(skipped), 'block')} "
            f"not shown ({used} used, {free} free, {count(sum(b[1] for b in skipped), 'byte')})")


def _structure_lines(s: dict, all_items: bool, named: set = frozenset()) -> list[str]:
    """The structure under its heading: the lines its kind says it reads as
    (``StructureKind.inspect_lines``, in the kind's module under
    allocators/structure_kinds/), then the blocks kept apart."""
    kind = structure_kinds.get(s["kind"]) or structure_kinds.StructureKind()
    out = [f"Structure ({s['kind']}):"]
    out.extend(kind.inspect_lines(s, all_items, named))
    sizes = s["sizes"]
    for o in s["outside"]:
        out.append(f"  kept apart: {o['addr']:#x} ({sizes.get(o['addr'], '?')} B): {o['why']}")
    return out
