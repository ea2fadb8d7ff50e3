"""One step of a replay in words: the line the window's status bar, ``heapscope
inspect`` and ``heapscope find`` print, in the strategy's own terms (its
:attr:`~heapscope.allocators.strategy.Strategy.search_unit` and
:meth:`~heapscope.allocators.strategy.Strategy.describe_record`).

It needs the step's operation, its record and the strategy as the step left
it: :meth:`heapscope.allocators.replay.Timeline.describe` gives those of the
shown step, a walk of its own (:mod:`heapscope.allocators.find`) those of
each step it visits.
"""

from __future__ import annotations

from heapscope.traces.trace import ALLOC, FREE, REALLOC, block_words


def describe_step(t: int, n: int, op: tuple[int, int, int] | None, rec, strategy,
                  names: dict | None = None) -> str:
    """Step ``t`` of ``n`` in words, e.g. 'step 1234: malloc(512) for id 17
    -> 0x1a40 after examining 12 free blocks; split once' or 'step 77:
    malloc(240) for id 5 -> 0x2c8 after 3 bitmap probes'.  ``op`` is the
    step's (kind, id, size), ``rec`` its OpRecord (None: the words of the
    request alone), ``strategy`` the heap after the step; ``names``: the
    trace's names ({id: name}: 'malloc(240) for a (id 0)')."""
    if t == 0:
        return f"step 0 of {n}: empty heap, nothing replayed yet"
    kind, ident, size = op
    who = block_words(ident, names)
    head = f"step {t}: "
    if kind == FREE:
        if rec is None or rec.payload is None:
            return head + f"free {who}: nothing to free (its malloc had failed)"
        text = head + f"free(0x{rec.payload:x}) for {who}"
    elif kind == ALLOC:
        text = head + f"malloc({size}) for {who}"
    elif rec is None:
        text = head + f"realloc of {who} to {size} bytes"
    else:
        old = "NULL" if rec.old_payload is None else f"0x{rec.old_payload:x}"
        text = head + f"realloc({old}, {size}) for {who}"
    if rec is None:
        return text
    if kind != FREE:
        if rec.failed:
            largest = strategy.largest_request()
            if size > largest:      # refused before the policy saw it: no search to tell
                text += f" -> NULL (more than {strategy.name} can ever hand out: at most {largest})"
                return text
            why = "the pool is used up" if strategy.arena.fixed else "the heap limit was reached"
            text += f" -> NULL (out of memory: {why})"
        else:
            text += f" -> 0x{rec.payload:x}"
            if kind == REALLOC and rec.payload == rec.old_payload:
                text += " (in place)"
    clauses = strategy.describe_record(rec)
    if not clauses:
        return text
    if kind == FREE:
        sep = ": "
    else:   # "-> 0x40 after examining 3 free blocks; split once", "-> 0x40 (in place); split once"
        sep = " " if clauses[0].startswith(("after ", "from ")) else "; "
    return text + sep + "; ".join(clauses)
