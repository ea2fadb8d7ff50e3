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

from .allocators.explain import count, explain_step
from .allocators.isolation import needs_worker
from .allocators.user import UserStrategyError
from .allocators.registry import make_strategy
from .allocators.replay import KIND_NAMES, Timeline
from .allocators.structure import where as structure_where
from .traces.trace import FREE, block_words

#: text format: a heap of at most this many blocks is listed whole
FULL_HEAP_BLOCKS = 64
#: text format: blocks shown on each side of a block the step's events name
CONTEXT_BLOCKS = 2
#: text format: addresses shown per list before "... N more"
LIST_ITEMS = 12
#: text format: a tree of at most this many nodes is drawn sideways
TREE_DRAWN_NODES = 40
#: text format: lists shown (those the step's events name come first)
LISTS_SHOWN = 16


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
    out.append(f"What {report['strategy']} did ({len(events)} event{'s' if len(events) != 1 else ''}):")
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
    out = [f"Heap: {report['_heap_size']} bytes in {len(blocks)} blocks "
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
    return (f"  {'...'.rjust(width)}  {len(skipped)} block{'s' if len(skipped) != 1 else ''} "
            f"not shown ({used} used, {free} free, {sum(b[1] for b in skipped)} bytes)")


def _at(addr, none: str) -> str:
    return none if addr is None else f"{addr:#x}"


def _addrs(addrs: list, sizes: dict, all_items: bool) -> str:
    shown = addrs if all_items else addrs[:LIST_ITEMS]
    text = ", ".join(f"{a:#x} ({sizes[a]} B)" if a in sizes else f"{a:#x}" for a in shown)
    if len(shown) < len(addrs):
        text += f", ... {len(addrs) - len(shown)} more"
    return text or "empty"


def _some_lists(lists: dict, named: set, all_items: bool):
    """The (key, addrs) of the non-empty lists to show: every one with
    ``all_items``, else those holding a block the step names, then the
    first others, up to LISTS_SHOWN; and how many were left out."""
    full = [(k, v) for k, v in lists.items() if v]
    if all_items or len(full) <= LISTS_SHOWN:
        return full, 0
    touched = [kv for kv in full if named.intersection(kv[1])]
    rest = [kv for kv in full if not named.intersection(kv[1])]
    shown = touched + rest[:max(0, LISTS_SHOWN - len(touched))]
    order = {k: i for i, (k, _) in enumerate(full)}
    return sorted(shown, key=lambda kv: order[kv[0]]), len(full) - len(shown)


def _chunk_runs(chunks: list) -> str:
    """'99 of order 12 from 0x0 to 0x62000, 1 of order 13 at 0x63000'."""
    runs: list[list] = []
    for c in chunks:
        if runs and runs[-1][0] == c["order"]:
            runs[-1][2] = c["addr"]
            runs[-1][3] += 1
        else:
            runs.append([c["order"], c["addr"], c["addr"], 1])
    return ", ".join(f"{n} of order {k} from {a:#x} to {b:#x}" if n > 1 else f"1 of order {k} at {a:#x}"
                     for k, a, b, n in runs)


def _structure_lines(s: dict, all_items: bool, named: set = frozenset()) -> list[str]:
    kind = s["kind"]
    sizes = s["sizes"]
    out = [f"Structure ({kind}):"]
    if kind == "address-ring":
        out.append(f"  free list after base, in address order ({count(len(s['free_list']), 'block')}): "
                   + _addrs(s["free_list"], sizes, all_items))
        if any(p["name"] == "rover" for p in s["pointers"]):
            out.append("  rover freep -> " + _at(s["rover"], "&base"))
    elif kind == "ring":
        out.append(f"  ring from the head ({count(len(s['free_list']), 'block')}): " + _addrs(s["free_list"], sizes, all_items))
        out.append("  head -> " + _at(s["head"], "NULL"))
    elif kind == "tree":
        out.extend(_tree_lines(s, all_items))
    elif kind == "buddy":
        for k, addrs in s["avail"].items():
            if addrs or all_items:
                out.append(f"  AVAIL[{k}] ({1 << int(k)} B): " + _addrs(addrs, {}, all_items))
        if not any(s["avail"].values()):
            out.append("  every AVAIL list is empty")
        out.append(f"  chunks: {_chunk_runs(s['chunks'])}" if s["chunks"] else "  no chunk yet")
    elif kind == "tlsf":
        out.append(f"  fl_bitmap    = {s['fl_bitmap']:0{s['fl_count']}b}  (bit fl, right to left)")
        for fl, row in enumerate(s["sl_bitmap"]):
            if row:
                out.append(f"  sl_bitmap[{fl}] = {row:0{s['sl_count']}b}  (sizes from {s['row_floor'][fl]} B)")
        shown, left_out = _some_lists(s["lists"], named, all_items)
        for key, addrs in shown:
            out.append(f"  list ({key.replace(',', ', ')}): " + _addrs(addrs, sizes, all_items))
        if left_out:
            out.append(f"  ... {left_out} more non-empty lists (--all shows them)")
        if not s["lists"]:
            out.append("  every list is empty")
    elif kind == "buckets":
        for k, addrs in _some_lists(s["buckets"], named, all_items)[0]:
            out.append(f"  nextf[{k}] ({s['block_sizes'][k]} B blocks, {len(addrs)} free): "
                       + _addrs(addrs, {}, all_items))
        if not any(s["buckets"].values()):
            out.append("  every bucket is empty")
    elif kind == "bins":
        out.append(f"  binblocks = {s['binblocks']:032b}  (bit b: bins 4b..4b+3, right to left)")
        shown, left_out = _some_lists(s["bins"], named, all_items)
        for i, addrs in shown:
            out.append(f"  bin {i} (from {s['bin_floor'][int(i)]} B): " + _addrs(addrs, sizes, all_items))
        if left_out:
            out.append(f"  ... {left_out} more non-empty bins (--all shows them)")
        if not s["bins"]:
            out.append("  every bin is empty")
        out.append("  last_remainder -> " + _at(s["last_remainder"], "none"))
        out.append("  top -> " + _at(s["top"], "none (nothing sbrk'd yet)"))
        for m in s["mapped"]:
            out.append(f"  mmap region {m['addr']:#x} ({m['size']} B), payload {m['payload']:#x}")
    elif kind == "size-classes":
        shown, left_out = _some_lists(s["lists"], named, all_items)
        for k, addrs in shown:
            high = s["class_high"][k]
            span = f"{s['class_low'][k]} B and up" if high is None else f"{s['class_low'][k]}-{high} B"
            out.append(f"  class {k} ({span}): " + _addrs(addrs, sizes, all_items))
        if left_out:
            out.append(f"  ... {left_out} more non-empty classes (--all shows them)")
        if not any(s["lists"].values()):
            out.append("  every class list is empty")
    elif kind == "arena-ring":
        out.extend(_arena_ring_lines(s, all_items, named))
    elif "lists" in s:
        for label, addrs in s["lists"].items():
            out.append(f"  {label}: " + _addrs(addrs, sizes, all_items))
    else:
        # a kind with no lines of its own here (docs/architecture.md): its
        # blocks, grouped by where the kind says it keeps them
        kept = {o["addr"] for o in s["outside"]}
        places: dict[str, list] = {}
        for a, place in structure_where(s).items():
            if a not in kept:
                places.setdefault(place, []).append(a)
        for place, addrs in places.items():
            out.append(f"  {place}: " + _addrs(addrs, sizes, all_items))
    for o in s["outside"]:
        out.append(f"  kept apart: {o['addr']:#x} ({sizes.get(o['addr'], '?')} B): {o['why']}")
    return out


def _arena_ring_lines(s: dict, all_items: bool, named: set) -> list[str]:
    """V7's ring of all blocks: busy ones as ``B``, idle ones as ``.``, the
    top as ``T``, with allocp; around the named blocks unless ``all_items``."""
    ring = s["ring"]
    free = sum(1 for b in ring if b[2] == "free")
    out = [f"  ring from allocs (static), {count(len(ring), 'block')} in the heap, {free} idle:"]
    if all_items or len(ring) <= LIST_ITEMS:
        keep = set(range(len(ring)))
    else:
        # the ends, allocp, and the blocks the step names if they are few
        named_at = [i for i, b in enumerate(ring) if b[0] in named]
        keep = {0, 1, len(ring) - 2, len(ring) - 1}
        keep |= {i for i, b in enumerate(ring) if b[0] == s["rover"]}
        if len(named_at) <= LIST_ITEMS:
            keep |= set(named_at)
    line, skipped = [], 0
    for i, (a, size, state) in enumerate(ring):
        if i not in keep:
            skipped += 1
            continue
        if skipped:
            line.append(f"... {skipped} more")
            skipped = 0
        mark = {"busy": "busy", "free": "idle", "top": "top"}[state]
        line.append(f"{a:#x} ({size} B {mark})")
    out.append("  " + " -> ".join(line) + (" -> allocs" if ring else "allocs[0] <-> allocs[1]"))
    out.append("  allocp -> " + _at(s["rover"], "&allocs[0]") + ", alloct -> " + _at(s["top"], "&allocs[1]"))
    return out


def _tree_lines(s: dict, all_items: bool) -> list[str]:
    nodes = s["nodes"]
    root = s["root"]
    out = [f"  {count(len(nodes), 'node')}, root {_at(root, 'none')}"]
    if not nodes:
        return out
    by_addr = {n["addr"]: n for n in nodes}

    def label(n: dict) -> str:
        more = len(n["blocks"]) - 1
        return f"{n['key']}@{n['addr']:#x}" + (f" (+{more} of that size)" if more else "")

    if len(nodes) <= TREE_DRAWN_NODES or all_items:
        # Sideways, right subtree above: read it with your head tilted left.
        depth_of = {root: 0}
        for n in _walk_from(root, by_addr):
            for child in (n["left"], n["right"]):
                if child is not None:
                    depth_of[child] = depth_of[n["addr"]] + 1
        for n in reversed(nodes):     # in-order reversed: largest size on top
            out.append("  " + "    " * depth_of[n["addr"]] + label(n))
        out.append("  (sideways: the root at the left, larger sizes above)")
    else:
        shown = nodes[:LIST_ITEMS]
        out.append("  in order: " + ", ".join(label(n) for n in shown)
                   + f", ... {len(nodes) - len(shown)} more (--all draws the tree)")
    return out


def _walk_from(root, by_addr: dict):
    stack = [root]
    while stack:
        x = stack.pop()
        if x is None:
            continue
        n = by_addr[x]
        yield n
        stack.extend((n["left"], n["right"]))
