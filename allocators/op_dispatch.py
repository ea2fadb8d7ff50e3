"""The one dispatch of a trace operation: which strategy call it makes and
what it does to the program's books.

A trace operation is (kind, id, size), kind one of ALLOC, FREE and REALLOC
(:mod:`heapscope.traces.trace`).  :func:`run_ops` maps each to a call of the strategy
and keeps the :class:`~heapscope.allocators.replay.Program`'s books (its live
ids, live bytes and the ids whose malloc failed), for every replay:

* one operation through the public calls, a record each
  (:func:`~heapscope.allocators.replay.apply_op`: seeks, grade's check pass);
* many with events off, calling the policy directly with one bulk record
  (:func:`~heapscope.allocators.replay.replay_ops`: seeks, bare replay);
* many with a row of measures packed after each
  (the timeline's build, ``_measure_ops`` in ``replay.py``).

What differs between them is only *which* callables it is handed
(:class:`Calls`: the public ones, :func:`public_calls`, or the policy's,
:func:`bulk_calls`) and whether a ``measure`` runs after each operation.
The loop is written once, here; ``tests/test_op_dispatch.py`` checks that
every replay path goes through it.

The rules, as C gives them to the traced program:

* ALLOC: ``malloc(size)``; a NULL result is remembered (the id's later free
  is ``free(NULL)``).
* FREE: ``free(payload)`` of the id's block; of an id whose malloc failed it
  is ``free(NULL)``, which does nothing (the public call still records it).
* REALLOC: ``realloc(payload, size)``; of an id with no block (never
  allocated or its malloc failed) it is ``realloc(NULL, size)``, a malloc.
  A failed realloc leaves the old block where it was.
"""

from __future__ import annotations

from typing import Callable, NamedTuple

from heapscope.traces.trace import ALLOC, FREE, REALLOC

from .events import FREE as FREE_KIND, MALLOC as MALLOC_KIND, REALLOC as REALLOC_KIND


class Calls(NamedTuple):
    """The strategy calls one replay makes.  ``realloc_null(size)`` is
    ``realloc(NULL, size)`` and ``free_null()`` is ``free(NULL)``, or None
    where it does nothing at all (bulk replay: there is no record to make)."""
    malloc: Callable
    free: Callable
    realloc: Callable
    realloc_null: Callable
    free_null: Callable | None


def public_calls(strategy) -> Calls:
    """The strategy's public malloc/free/realloc: one :class:`OpRecord` per
    call, with events when ``strategy.record`` is on."""
    realloc = strategy.realloc
    free = strategy.free
    return Calls(strategy.malloc, free, realloc, lambda size: realloc(None, size), lambda: free(None))


def bulk_calls(ops: tuple) -> Calls:
    """The policy's (malloc, free, realloc) as bulk replay calls them
    (``replay.policy_ops``): ``realloc(NULL, size)`` is its malloc, and
    ``free(NULL)`` calls nothing."""
    malloc, free, realloc = ops
    return Calls(malloc, free, realloc, malloc, None)


def run_ops(calls: Calls, program, rec, kinds, ids, sizes, measure: Callable | None = None,
            buf=None, off: int = 0, step: int = 1, done: list | None = None) -> None:
    """Apply the operations (parallel sequences of kind, id, size) through
    ``calls``, keeping ``program``'s books.

    ``rec`` is the record whose ``kind`` is set before each operation (the
    bulk record: K&R's free walk counts as search only inside a free; a
    scratch record for the public calls, which make their own).  After each
    operation ``measure(buf, off, live_bytes, payload)`` runs if given
    (``payload`` -1 for a NULL result and for ``free(NULL)``), ``off``
    advancing by ``step``; then ``done[0]`` says how many operations were
    applied and measured, also when one raises.

    The loop is :data:`DISPATCH`, compiled twice: with the measure after each
    operation, and without (a bare replay's hot loop then tests nothing it
    does not need)."""
    if measure is None:
        _run_bare(calls, program, rec, kinds, ids, sizes)
    else:
        _run_measured(calls, program, rec, kinds, ids, sizes, measure, buf, off, step, done)


#: The dispatch, written once: one trace operation (kind, ident, size) to
#: its strategy call (the names of :class:`Calls`) and the books (``live``,
#: ``failed``, ``live_bytes``), leaving ``payload`` (-1 for none) for a
#: measure.  :func:`_compile` puts it in the two loops of :func:`run_ops`.
DISPATCH = """\
if kind == ALLOC:
    rec.kind = MALLOC_KIND
    payload = malloc(size)
    if payload is None:
        failed.add(ident)
        payload = -1
    else:
        live[ident] = (payload, size)
        live_bytes += size
elif kind == FREE:
    rec.kind = FREE_KIND
    entry = live.pop(ident, None)
    if entry is None:
        failed.discard(ident)      # free(NULL) of a failed malloc
        if free_null is not None:
            free_null()
        payload = -1
    else:
        payload = entry[0]
        free(payload)
        live_bytes -= entry[1]
elif kind == REALLOC:
    rec.kind = REALLOC_KIND
    entry = live.get(ident)
    payload = realloc_null(size) if entry is None else realloc(entry[0], size)
    if payload is None:
        if entry is None:
            failed.add(ident)
        payload = -1
    else:
        failed.discard(ident)
        live[ident] = (payload, size)
        live_bytes += size - (entry[1] if entry else 0)
else:
    raise ValueError(f"unknown operation kind {kind}")
"""

_LOOP = """\
def {name}(calls, program, rec, kinds, ids, sizes{params}):
    malloc, free, realloc, realloc_null, free_null = calls
    live = program.live
    failed = program.failed_ids
    live_bytes = program.live_bytes
    start = off = {off}
    try:
        for kind, ident, size in zip(kinds, ids, sizes):
{dispatch}{after}
    finally:
        program.live_bytes = live_bytes
{count}
"""


def _compile(name: str, measured: bool):
    """One loop around :data:`DISPATCH`, with or without the measure."""
    source = _LOOP.format(
        name=name,
        params=", measure, buf, off, step, done" if measured else "",
        off="off" if measured else "0",
        dispatch="".join(" " * 12 + line + "\n" for line in DISPATCH.splitlines()),
        after=(" " * 12 + "measure(buf, off, live_bytes, payload)\n" + " " * 12 + "off += step")
        if measured else "",
        count=(" " * 8 + "if done is not None:\n" + " " * 12 + "done[0] = (off - start) // step")
        if measured else "")
    scope = {"ALLOC": ALLOC, "FREE": FREE, "REALLOC": REALLOC, "MALLOC_KIND": MALLOC_KIND,
             "FREE_KIND": FREE_KIND, "REALLOC_KIND": REALLOC_KIND}
    exec(compile(source, f"<op_dispatch {name}>", "exec"), scope)
    return scope[name]


_run_bare = _compile("_run_bare", measured=False)
_run_measured = _compile("_run_measured", measured=True)
