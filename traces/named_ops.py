"""A trace as a list of operations on names, as a person edits it.

In the sandbox (:mod:`heapscope.sandbox`) a trace is a list of
:class:`NamedOp`: ``a = malloc(240)`` is ``NamedOp(ALLOC, "a", 240)``,
``free(a)`` is ``NamedOp(FREE, "a")``, ``a = realloc(a, 500)`` is
``NamedOp(REALLOC, "a", 500)``.  Names are the user's; the :class:`Trace`
replayed and saved numbers them (each name one id, in the order the names
first appear), so a .rep written from it has its ids and header computed.

An edit can make an operation meaningless: a free of a name that is no
longer live (its malloc was deleted, or freed earlier by a new operation),
a malloc of a name still live.  :func:`check_named` keeps such operations in
the list, says what is wrong with each, and leaves them out of the trace it
replays (DESIGN.md, "The sandbox": marked and skipped, never a crash).  The
rules are the .rep reader's (:func:`heapscope.traces.trace.check_ops`): a
realloc of a name never seen is a malloc, as ``realloc(NULL, n)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from .readable import ReadableParse
from .trace import ALLOC, FREE, MAX_SIZE, REALLOC, Trace

#: what an operation is called in the messages
VERBS = {ALLOC: "malloc", FREE: "free", REALLOC: "realloc"}


class NamedOp(NamedTuple):
    """One operation of an edited trace: its kind (ALLOC, FREE, REALLOC), the
    name of the block, the size asked (0 for a free)."""
    kind: int
    name: str
    size: int = 0

    def text(self) -> str:
        """The operation as the readable syntax writes it: ``a = malloc(240)``."""
        if self.kind == FREE:
            return f"free({self.name})"
        if self.kind == REALLOC:
            return f"{self.name} = realloc({self.name}, {self.size})"
        return f"{self.name} = malloc({self.size})"


@dataclass(frozen=True)
class CheckedOps:
    """An edited trace checked: the trace of its valid operations and where
    each operation is in it."""
    #: the valid operations, ids numbered by name
    trace: Trace
    #: {operation index: what is wrong with it} for the operations skipped
    problems: dict
    #: for each operation index, the step it is (1-based), or for a skipped
    #: one the step before it (the heap it leaves is that one)
    step_of_op: list
    #: for each step t (index t - 1), the index of its operation
    op_of_step: list
    #: {trace id: name}
    names: dict

    def name_of(self, ident: int) -> str | None:
        return self.names.get(ident)

    def index_after_step(self, step: int) -> int:
        """The operation index just after step ``step``'s operation (0 for
        step 0): where an operation inserted after that step goes."""
        return self.op_of_step[step - 1] + 1 if step > 0 else 0


def check_named(ops, name: str = "", source: str | None = None,
                known: dict | None = None) -> CheckedOps:
    """Check ``ops`` (NamedOps) in order; see the module docstring.
    ``known``: {name: id} for names that keep an id (a trace read from a
    file keeps its ids); other names take the next ids in order of first use."""
    ids: dict[str, int] = dict(known or {})
    next_id = max(ids.values(), default=-1) + 1
    live: set[str] = set()
    seen: set[str] = set()
    kinds, id_list, sizes = [], [], []
    problems: dict[int, str] = {}
    step_of_op, op_of_step = [], []
    for i, op in enumerate(ops):
        why = _problem(op, live, seen)
        if why is not None:
            problems[i] = why
            step_of_op.append(len(op_of_step))
            continue
        seen.add(op.name)
        if op.kind == FREE:
            live.discard(op.name)
        else:
            live.add(op.name)
        ident = ids.get(op.name)
        if ident is None:
            ident = ids[op.name] = next_id
            next_id += 1
        kinds.append(op.kind)
        id_list.append(ident)
        sizes.append(op.size if op.kind != FREE else 0)
        op_of_step.append(i)
        step_of_op.append(len(op_of_step))
    names = {i: n for n, i in ids.items() if n in seen}
    trace = Trace(kinds, id_list, sizes, next_id, name=name, source=source, names=names)
    return CheckedOps(trace, problems, step_of_op, op_of_step, names)


def _problem(op: NamedOp, live: set, seen: set) -> str | None:
    """What makes ``op`` meaningless where it stands, or None."""
    verb = VERBS.get(op.kind)
    if verb is None:
        return f"unknown operation kind {op.kind}"
    if not op.name:
        return f"{verb} names no block"
    if op.kind != FREE and not 0 <= op.size <= MAX_SIZE:
        return f"{verb}({op.size}): the size must be 0 to 2**40 bytes"
    if op.kind == ALLOC and op.name in live:
        return f"{op.name} is already live: free it first, or use another name"
    if op.kind == FREE and op.name not in live:
        return (f"free({op.name}): {op.name} is not live (freed before)" if op.name in seen
                else f"free({op.name}): no block is called {op.name}")
    if op.kind == REALLOC and op.name in seen and op.name not in live:
        return f"realloc({op.name}): {op.name} was freed before"
    return None


def op_texts(ops) -> list[str]:
    """Each operation of ``ops`` as a line of the readable form: a realloc
    of a name not live there (a malloc, as ``realloc(NULL, n)`` is) is
    written ``a = realloc(NULL, 8)``, so that the line reads back the same."""
    live: set[str] = set()
    out = []
    for op in ops:
        if op.kind == REALLOC and op.name not in live:
            out.append(f"{op.name} = realloc(NULL, {op.size})")
        else:
            out.append(op.text())
        if op.kind == FREE:
            live.discard(op.name)
        else:
            live.add(op.name)
    return out


def named_ops(trace: Trace, names: dict | None = None) -> list[NamedOp]:
    """The operations of ``trace`` on names: ``names`` ({id: name}) where
    given, else the names the readable form writes for them (a, b, ... in
    order of first use: :func:`heapscope.traces.readable.write_readable`)."""
    shown = ReadableParse(trace, names=dict(names or {}))
    name_of = {}
    out = []
    for kind, ident, size in trace:
        name = name_of.get(ident)
        if name is None:
            name = name_of[ident] = shown.name_of(ident)
        out.append(NamedOp(kind, name, size))
    return out


def fresh_name(ops) -> str:
    """A short name no operation of ``ops`` uses: ``a`` ... ``z``, then
    ``a1`` ... ``z1``, ``a2`` ..."""
    used = {op.name for op in ops}
    n = 0
    while True:
        for letter in "abcdefghijklmnopqrstuvwxyz":
            name = letter + (str(n) if n else "")
            if name not in used:
                return name
        n += 1
