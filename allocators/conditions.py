"""Conditions over what a step did: the debugger's query language.

A condition is a small boolean expression over one step of a replay, read by
``heapscope find --when``, the window's Find (Ctrl+F) and its breakpoints::

    failed                          a request the heap could not meet
    search > 100                    the search examined more than 100 nodes
    merges >= 3                     three merges or more (a buddy cascade)
    id == 2782                      an operation on trace id 2782
    grew and frag > 0.5             the heap grew while fragmented
    rotation == "zig-zag"           the splay did a zig-zag step
    free and not merged             a free that joined nothing
    (avail == 7 or split) and size >= 4096

Grammar (``docs/gui.md``, "Conditions", lists every name)::

    condition  := or
    or         := and ("or" and)*
    and        := not ("and" not)*
    not        := "not" not | "(" or ")" | test
    test       := NAME [OP value]
    OP         := "==" | "!=" | "<" | "<=" | ">" | ">="
    value      := NUMBER | STRING | "(" NUMBER ("," NUMBER)* ")"

Names come in three groups (:data:`FIELDS`): the step's **operation**
(``kind``, ``malloc``, ``free``, ``realloc``, ``id``, ``size``, ``line``,
``step``, ``result``), its **measures** (``search``, ``work``, ``splits``,
``merges``, ``rotations``, ``grows``, ``failed``, ``grew``, ``split``,
``merged``, ``frag``, ``heap``, ``live``, ``util`` ...: the timeline's metric
series, :mod:`heapscope.allocators.metrics`) and its **events** (``rotation``,
``avail``, ``cell``, ``list``, ``refill``, ``event``, ``addr``: what the
step's :class:`~heapscope.allocators.events.OpRecord` holds).  An event test
is true when some event of the step satisfies it (``rotation != "zig"``:
some rotation that was not a zig).  ``event == "Trim"`` names an event type,
a user strategy's own among them (:func:`event_types`).

The text is read by a tokenizer and a recursive-descent parser (never
``eval``); a mistake is a :class:`ConditionError` naming the column and what
was expected there, with the known names.

**Evaluation** (:func:`evaluate`) never replays with a callback per step
where it can help it (DESIGN.md, "Debugger conditions"): every test on the
operation or the measures is a comparison of numpy columns (:class:`StepColumns`);
each event test gives a sound *upper bound* from the columns (a rotation
needs ``rotations > 0``, an AVAIL probe a malloc) and a lower bound of
nothing.  ``and``/``or``/``not`` combine the (lower, upper) pairs, so the
condition is decided from the columns wherever the bounds agree, and only
the steps in between are replayed with their events
(:mod:`heapscope.allocators.find`).  A strategy of your own promises no
counters behind its events, so for it an event test bounds nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, is_dataclass
from typing import Callable

import numpy as np

from heapscope.traces.trace import ALLOC, FREE, REALLOC, previous_op_same_id

from . import events as _events

OPS = ("==", "!=", "<=", ">=", "<", ">")
_COMPARE = {"==": np.equal, "!=": np.not_equal, "<": np.less, "<=": np.less_equal,
            ">": np.greater, ">=": np.greater_equal}
_COMPARE_ONE = {"==": lambda a, b: a == b, "!=": lambda a, b: a != b, "<": lambda a, b: a < b,
                "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b}
KEYWORDS = ("and", "or", "not")
KIND_CODES = {"malloc": ALLOC, "free": FREE, "realloc": REALLOC}
ROTATION_KINDS = ("zig", "zig-zig", "zig-zag")


class ConditionError(ValueError):
    """A condition that cannot be read: ``column`` (1-based) is where, the
    message says what was expected there."""

    def __init__(self, message: str, column: int, text: str = "") -> None:
        super().__init__(f"column {column}: {message}")
        self.column = column
        self.reason = message
        self.text = text

    def pointer(self) -> str:
        """The condition with a caret under the column (for a terminal)."""
        return f"{self.text}\n{' ' * (self.column - 1)}^"


# ------------------------------------------------------------------ tokens
@dataclass(frozen=True)
class Token:
    kind: str          # NAME, NUMBER, STRING, OP, KEYWORD, "(", ")", ",", END
    text: str
    column: int        # 1-based
    value: object = None


_NUMBER = re.compile(r"-?(0[xX][0-9a-fA-F_]+|(\d[\d_]*)?\.?\d[\d_]*([eE][-+]?\d+)?)")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def tokenize(text: str) -> list[Token]:
    """The tokens of ``text``, ending with an END token; ConditionError at
    the first character that starts none."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        col = i + 1
        if c.isspace():
            i += 1
        elif c in "(),":
            out.append(Token(c, c, col))
            i += 1
        elif text.startswith(OPS, i) or c in "=!<>":
            op = next((o for o in OPS if text.startswith(o, i)), None)
            if op is None:
                raise ConditionError(f"unknown operator {c!r}; expected one of {', '.join(OPS)}", col, text)
            out.append(Token("OP", op, col))
            i += len(op)
        elif c in "\"'":
            end = text.find(c, i + 1)
            if end < 0:
                raise ConditionError(f"a string opened with {c} is not closed", col, text)
            out.append(Token("STRING", text[i:end + 1], col, text[i + 1:end]))
            i = end + 1
        elif c.isdigit() or (c in "-." and i + 1 < n and (text[i + 1].isdigit() or text[i + 1] == ".")):
            m = _NUMBER.match(text, i)
            word = m.group(0)
            clean = word.replace("_", "")
            try:
                value = int(clean, 0) if re.fullmatch(r"-?(0[xX][0-9a-fA-F]+|\d+)", clean) else float(clean)
            except ValueError:
                raise ConditionError(f"{word!r} is not a number", col, text) from None
            if m.end() < n and (text[m.end()].isalnum() or text[m.end()] == "_"):
                raise ConditionError(f"{text[i:m.end() + 1]!r} is not a number; expected a number "
                                     "such as 100, 0.5 or 0x1a40", col, text)
            out.append(Token("NUMBER", word, col, value))
            i = m.end()
        elif c.isalpha() or c == "_":
            m = _NAME.match(text, i)
            word = m.group(0)
            out.append(Token("KEYWORD" if word in KEYWORDS else "NAME", word, col))
            i = m.end()
        else:
            raise ConditionError(f"unexpected character {c!r}; expected a name, a number, a string, "
                                 "an operator or a parenthesis", col, text)
    out.append(Token("END", "", n + 1))
    return out


# ------------------------------------------------------------------ fields
@dataclass(frozen=True)
class Field:
    """One name a condition can use.

    ``kind``: 'number' (compared), 'string' (== and != against ``choices``),
    'flag' (true or false on its own), or, for event fields, 'event' (true
    on its own when the step has such an event, and compared against the
    event's value: a number, a string or a tuple).  ``column(cols)`` gives
    the values of a vectorised field for every step; ``values(rec)`` the
    values an event field takes in one step's record, and ``bound(cols)``
    the steps that can hold such an event at all (None: any step)."""
    name: str
    group: str               # "operation", "measure" or "event"
    kind: str
    doc: str
    column: Callable | None = None
    values: Callable | None = None
    bound: Callable | None = None
    choices: tuple = ()
    value_kind: str = "number"   # what an event field is compared with: number, string, tuple
    types: tuple = ()

    @property
    def needs_events(self) -> bool:
        return self.values is not None


def _kinds_of(rec_events, types):
    return [e for e in rec_events if isinstance(e, types)]


def _rotation_kinds(rec):
    return [e.kind for e in _kinds_of(rec.events or (), _events.Rotation)]


def _avail_orders(rec):
    return [e.order for e in _kinds_of(rec.events or (), _events.AvailProbe)]


def _tlsf_cells(rec):
    out = []
    for e in rec.events or ():
        if isinstance(e, _events.MappingSearch):
            out.append((e.fl, e.sl))
        elif isinstance(e, _events.BitmapProbe) and e.found is not None:
            out.append(tuple(e.found))
        elif isinstance(e, (_events.ListInsert, _events.ListRemove)) and len(e.where) == 2:
            out.append(tuple(e.where))
    return out


def _lists(rec):
    return [tuple(e.where) for e in _kinds_of(rec.events or (), (_events.ListInsert, _events.ListRemove))]


def _refills(rec):
    return [e.bucket for e in _kinds_of(rec.events or (), _events.BucketRefill)]


def _event_names(rec):
    return [type(e).__name__ for e in rec.events or ()]


def _addresses(rec):
    from .explain import event_addresses
    out = [a for a in (rec.payload, rec.old_payload) if a is not None]
    for e in rec.events or ():
        out.extend(event_addresses(e))
    return out


def _request_sizes(cols):
    """The size of each step's request: a malloc's or realloc's size, and for
    a free the size the id was last asked for (what inspect calls its size)."""
    trace = cols.trace
    sizes = np.asarray(trace.sizes[:cols.n], dtype=np.int64).copy()
    kinds = np.asarray(trace.kind[:cols.n])
    prev = previous_op_same_id(np.asarray(trace.ids[:cols.n]))
    frees = (kinds == FREE) & (prev >= 0)
    sizes[frees] = np.asarray(trace.sizes)[prev[frees]]
    return sizes


def _lines(cols):
    lines = getattr(cols.trace, "line_numbers", None)
    if lines is None:            # a workload made in memory: no file, no line
        return np.full(cols.n, -1, dtype=np.int64)
    return np.asarray(lines[:cols.n], dtype=np.int64)


def _ratio(num, den):
    out = np.zeros(len(num), dtype=np.float64)
    nz = den > 0
    out[nz] = num[nz] / den[nz]
    return out


def _series(name):
    """A column of the series as a condition computes with it: numbers as
    int64 (the series may keep them as int32, where ``heap * 4`` could wrap)."""
    def column(cols):
        values = getattr(cols.series, name)[:cols.n]
        return values if values.dtype == bool else values.astype(np.int64)
    return column


def _kind_is(code):
    return lambda cols: np.asarray(cols.trace.kind[:cols.n]) == code


def _counted(name):
    """A flag of a counter of the series: the step counted one or more."""
    return lambda cols: getattr(cols.series, name)[:cols.n] > 0


#: the column a built-in policy's event of each type implies (an upper
#: bound of the steps holding one): the counter it adds to, or
#: ``is_malloc`` for the events only a malloc's search makes.
#: tests/test_conditions.py checks each on every built-in strategy.
EVENT_BOUNDS = {"Rotation": "rotations", "Coalesce": "merges", "BuddyMerge": "merges",
                "Split": "splits", "BuddySplit": "splits", "Grow": "grows",
                "AvailProbe": "is_malloc", "BucketRefill": "is_malloc",
                "MappingSearch": "is_malloc", "BitmapProbe": "is_malloc"}


def event_bound(type_name: str):
    """The steps that can hold an event of ``type_name`` (a boolean column
    of :class:`StepColumns`), or None: any step."""
    column = EVENT_BOUNDS.get(type_name)
    if column is None:
        return None
    if column == "is_malloc":
        return lambda cols: cols.series.is_malloc[:cols.n]
    return _counted(column)


_FIELD_LIST = [
    # the operation
    Field("step", "operation", "number", "the step's number (1 is the first operation)",
          column=lambda cols: np.arange(1, cols.n + 1, dtype=np.int64)),
    Field("kind", "operation", "string", 'the operation: "malloc", "free" or "realloc"',
          column=lambda cols: np.asarray(cols.trace.kind[:cols.n]), choices=tuple(KIND_CODES)),
    Field("malloc", "operation", "flag", "the operation is a malloc", column=_kind_is(ALLOC)),
    Field("free", "operation", "flag", "the operation is a free", column=_kind_is(FREE)),
    Field("realloc", "operation", "flag", "the operation is a realloc", column=_kind_is(REALLOC)),
    Field("id", "operation", "number", "the trace id the operation is on",
          column=lambda cols: np.asarray(cols.trace.ids[:cols.n], dtype=np.int64)),
    Field("size", "operation", "number",
          "bytes asked for (a free: the size its id was asked for)", column=_request_sizes),
    Field("line", "operation", "number", "the trace file's line of the operation (-1: a workload)",
          column=_lines),
    Field("result", "operation", "number", "the payload address a malloc or realloc returned "
          "(-1: NULL, and for a free)", column=_series("payload")),
    # the measures (allocators/metrics.py), per step
    Field("search", "measure", "number", "search length: nodes examined, the one taken included",
          column=_series("search")),
    Field("work", "measure", "number", "work units: visits + splits + merges + rotations",
          column=_series("work")),
    Field("splits", "measure", "number", "blocks split by the step", column=_series("splits")),
    Field("merges", "measure", "number", "free blocks joined by the step (coalesces, buddy merges)",
          column=_series("merges")),
    Field("rotations", "measure", "number", "splay rotations", column=_series("rotations")),
    Field("grows", "measure", "number", "times the heap grew in the step", column=_series("grows")),
    Field("failed", "measure", "flag", "a malloc or realloc that returned NULL",
          column=_series("failed")),
    Field("grew", "measure", "flag", "the heap grew", column=_counted("grows")),
    Field("split", "measure", "flag", "some block was split", column=_counted("splits")),
    Field("merged", "measure", "flag", "some free blocks were joined (coalesced, merged)",
          column=_counted("merges")),
    Field("frag", "measure", "number", "external fragmentation after the step, 1 - Fmax/F (0..1)",
          column=lambda cols: cols.series.external(True)[:cols.n]),
    Field("frag_no_top", "measure", "number", "external fragmentation without the top block",
          column=lambda cols: cols.series.external(False)[:cols.n]),
    Field("heap", "measure", "number", "heap size H in bytes after the step", column=_series("heap")),
    Field("live", "measure", "number", "live requested bytes L after the step", column=_series("live")),
    Field("in_use", "measure", "number", "bytes in live blocks A (headers, padding)",
          column=_series("in_use")),
    Field("free_bytes", "measure", "number", "bytes in free blocks F", column=_series("free")),
    Field("largest_free", "measure", "number", "the largest free block Fmax",
          column=_series("largest_free")),
    Field("internal", "measure", "number", "internal fragmentation A - L in bytes",
          column=lambda cols: (cols.series.in_use[:cols.n].astype(np.int64)
                               - cols.series.live[:cols.n])),
    Field("util", "measure", "number", "utilisation after the step, L / H (0 with no heap)",
          column=lambda cols: _ratio(cols.series.live[:cols.n], cols.series.heap[:cols.n])),
    # the events of the step's record
    Field("rotation", "event", "event", 'a splay step: "zig", "zig-zig" or "zig-zag"',
          values=_rotation_kinds, bound=event_bound("Rotation"), choices=ROTATION_KINDS,
          value_kind="string", types=("Rotation",)),
    Field("avail", "event", "event", "the buddy system probed AVAIL[k] (compared: the order k)",
          values=_avail_orders, bound=event_bound("AvailProbe"), types=("AvailProbe",)),
    Field("cell", "event", "event", "a TLSF cell (fl, sl) searched, found or filed into, "
          "e.g. cell == (3, 5)", values=_tlsf_cells, value_kind="tuple",
          types=("MappingSearch", "BitmapProbe", "ListInsert", "ListRemove")),
    Field("list", "event", "event", "a free list a block went on or off: (fl, sl), (k,) or a "
          "bucket k", values=_lists, value_kind="tuple", types=("ListInsert", "ListRemove")),
    Field("refill", "event", "event", "4.3BSD: an empty bucket refilled (compared: the bucket)",
          values=_refills, bound=event_bound("BucketRefill"), types=("BucketRefill",)),
    Field("event", "event", "event", 'an event of a type, e.g. event == "Coalesce" (a strategy of '
          "your own's types too)", values=_event_names, value_kind="string"),
    Field("addr", "event", "event", "a block address the step involved (its events' blocks, the "
          "payload returned or freed)", values=_addresses),
]
#: every name a condition can use, in the order the docs list them
FIELDS: dict[str, Field] = {f.name: f for f in _FIELD_LIST}
#: aliases people reach for
ALIASES = {"coalesced": "merged", "coalesces": "merges", "fragmentation": "frag", "external": "frag",
           "utilisation": "util", "utilization": "util", "search_length": "search", "op": "kind"}


def event_types(modules=()) -> tuple[str, ...]:
    """The names of the event types a step can hold: the frozen, slotted
    dataclasses of :mod:`heapscope.allocators.events` and of the modules of
    the registered strategies (dlmalloc's ``Trim`` ...; a loaded strategy of
    your own's too), and every dataclass of ``modules`` (module objects or
    names: a strategy of your own's file, whose event types need no
    ``describe``)."""
    import sys
    from .registry import STRATEGIES
    names = set()

    def add(module, everything: bool) -> None:
        if isinstance(module, str):
            module = sys.modules.get(module)
        for value in vars(module).values() if module is not None else ():
            if (isinstance(value, type) and is_dataclass(value) and _defined_by(value, module, everything)
                    and (everything or _frozen_slotted(value))):
                names.add(value.__name__)

    add(_events, False)
    for cls in STRATEGIES.values():
        add(cls.__module__, False)
    for module in modules:
        add(module, True)
    return tuple(sorted(names))


def known_events(strategy_names=()) -> tuple[str, ...]:
    """The event types a condition on the strategies ``strategy_names`` may
    name: the built-in ones and, for a strategy of your own, those of its
    file."""
    from .registry import STRATEGIES
    classes = [STRATEGIES.get(name) for name in strategy_names]
    return event_types([cls.__module__ for cls in classes if cls is not None])


def _defined_by(cls, module, everything: bool) -> bool:
    """A strategy of one's own names its own classes; a built-in policy's
    events may live in a module beside it (dlmalloc's in dlmalloc_events)."""
    if cls.__module__ == module.__name__:
        return True
    return not everything and cls.__module__.startswith(_events.__name__.rpartition(".")[0] + ".")


def _frozen_slotted(cls) -> bool:
    # heapscope's events are all @dataclass(frozen=True, slots=True)
    return cls.__dataclass_params__.frozen and "__slots__" in vars(cls)


# ------------------------------------------------------------------ syntax tree
class Node:
    """A part of a condition.  ``bounds(cols)`` gives (lower, upper): boolean
    columns with lower <= truth <= upper at every step; ``test(cols, row,
    rec)`` the truth at one step, given its record (with events)."""
    needs_events = False

    def bounds(self, cols):
        raise NotImplementedError

    def test(self, cols, row: int, rec) -> bool:
        raise NotImplementedError


@dataclass
class Compare(Node):
    field: Field
    op: str | None          # None: the field on its own (a flag, or "has such an event")
    value: object = None
    code: object = None     # a string field's value as its column's code

    @property
    def needs_events(self) -> bool:
        return self.field.needs_events

    def _vector(self, cols):
        values = cols.column(self.field)
        if self.op is None:
            return values.astype(bool, copy=False)
        return _COMPARE[self.op](values, self.code if self.code is not None else self.value)

    @property
    def event_types(self) -> tuple:
        """The event types this test reads (empty: any type)."""
        if self.field.name == "event" and self.op == "==" and isinstance(self.value, str):
            return (self.value,)
        return self.field.types

    def never_made(self, makes) -> tuple:
        """The event types this test reads, when the strategy (which makes
        ``makes``; None: any) makes none of them: no step can hold one."""
        types = self.event_types
        if makes is None or not types or not self.needs_events or not makes.isdisjoint(types):
            return ()
        return types

    def bounds(self, cols):
        if not self.needs_events:
            exact = self._vector(cols)
            return exact, exact
        lower = np.zeros(cols.n, dtype=bool)
        if self.never_made(cols.makes):         # e.g. avail == 3 on TLSF: no step, no replay
            return lower, lower
        bound = self.field.bound
        if self.field.name == "event" and self.op == "==":
            bound = event_bound(self.value)
        upper = bound(cols) if (bound and cols.counted) else np.ones(cols.n, dtype=bool)
        return lower, upper

    def test(self, cols, row, rec) -> bool:
        if not self.needs_events:
            values = cols.column(self.field)
            v = values[row]
            if self.op is None:
                return bool(v)
            return bool(_COMPARE_ONE[self.op](v, self.code if self.code is not None else self.value))
        found = self.field.values(rec) if rec is not None else []
        if self.op is None:
            return bool(found)
        want = self.value
        compare = _COMPARE_ONE[self.op]
        for v in found:
            if isinstance(want, tuple) and not isinstance(v, tuple):
                v = (v,)
            elif isinstance(v, tuple) and not isinstance(want, tuple):
                want = (want,)
            try:
                if compare(v, want):
                    return True
            except TypeError:      # a user event's field of another type: no match
                continue
        return False


@dataclass
class Not(Node):
    inner: Node

    @property
    def needs_events(self) -> bool:
        return self.inner.needs_events

    def bounds(self, cols):
        lower, upper = self.inner.bounds(cols)
        return ~upper, ~lower

    def test(self, cols, row, rec) -> bool:
        return not self.inner.test(cols, row, rec)


@dataclass
class Both(Node):
    """``and`` (``any_`` False) or ``or`` (True) of two or more parts."""
    parts: list
    any_: bool

    @property
    def needs_events(self) -> bool:
        return any(p.needs_events for p in self.parts)

    def bounds(self, cols):
        lows, ups = zip(*(p.bounds(cols) for p in self.parts))
        join = np.logical_or if self.any_ else np.logical_and
        return join.reduce(lows), join.reduce(ups)

    def test(self, cols, row, rec) -> bool:
        results = (p.test(cols, row, rec) for p in self.parts)
        return any(results) if self.any_ else all(results)


# ------------------------------------------------------------------ parser
@dataclass
class Condition:
    """A parsed condition: ``text`` as written, ``root`` its tree."""
    text: str
    root: Node
    names: tuple = field(default=())     # the field names it uses

    @property
    def needs_events(self) -> bool:
        return self.root.needs_events

    def bounds(self, cols):
        return self.root.bounds(cols)

    def test(self, cols, row: int, rec) -> bool:
        return self.root.test(cols, row, rec)

    def never_made(self, makes) -> list[tuple[str, tuple]]:
        """[(the test as a name, the event types it reads)] for each event
        test that no step can pass because the strategy, which makes the
        event types ``makes`` (None: undeclared), never makes those types:
        what Find says when it answers without a replay."""
        out = []
        for leaf in _nodes(self.root):
            if isinstance(leaf, Compare):
                types = leaf.never_made(makes)
                if types:
                    out.append((leaf.field.name, types))
        return out

    def matching_event(self, rec) -> int | None:
        """The index of the first event of ``rec`` that one of the
        condition's event tests holds for on its own (the event Find
        selects at a match), or None (no event test, or none holds)."""
        leaves = [n for n in _nodes(self.root) if isinstance(n, Compare) and n.needs_events]
        if not leaves or rec is None or not rec.events:
            return None
        for i, event in enumerate(rec.events):
            alone = _OneEvent([event])
            if any(leaf.test(None, 0, alone) for leaf in leaves):
                return i
        return None


class _OneEvent:
    """A record holding one event and no result: what matching_event tests."""
    payload = old_payload = None

    def __init__(self, events) -> None:
        self.events = events


def _nodes(node):
    yield node
    for child in getattr(node, "parts", None) or ([node.inner] if isinstance(node, Not) else []):
        yield from _nodes(child)


def known_names() -> str:
    return ", ".join(FIELDS)


class _Parser:
    def __init__(self, text: str, events: tuple[str, ...]) -> None:
        self.text = text
        self.tokens = tokenize(text)
        self.i = 0
        self.events = events
        self.names: list[str] = []

    def error(self, message: str, token: Token | None = None):
        token = token or self.peek()
        return ConditionError(message, token.column, self.text)

    def peek(self) -> Token:
        return self.tokens[self.i]

    def take(self) -> Token:
        token = self.tokens[self.i]
        self.i += 1
        return token

    def expect(self, kind: str, what: str) -> Token:
        token = self.peek()
        if token.kind != kind:
            raise self.error(f"expected {what}, found {_shown(token)}")
        return self.take()

    def parse(self) -> Condition:
        if self.peek().kind == "END":
            raise self.error(f"the condition is empty; expected a name such as failed or search > 100 "
                             f"(known: {known_names()})")
        root = self.or_()
        token = self.peek()
        if token.kind != "END":
            raise self.error(f"expected 'and', 'or' or the end, found {_shown(token)}")
        return Condition(self.text, root, tuple(dict.fromkeys(self.names)))

    def or_(self) -> Node:
        parts = [self.and_()]
        while self.peek().kind == "KEYWORD" and self.peek().text == "or":
            self.take()
            parts.append(self.and_())
        return parts[0] if len(parts) == 1 else Both(parts, True)

    def and_(self) -> Node:
        parts = [self.not_()]
        while self.peek().kind == "KEYWORD" and self.peek().text == "and":
            self.take()
            parts.append(self.not_())
        return parts[0] if len(parts) == 1 else Both(parts, False)

    def not_(self) -> Node:
        token = self.peek()
        if token.kind == "KEYWORD" and token.text == "not":
            self.take()
            return Not(self.not_())
        if token.kind == "(":
            self.take()
            inner = self.or_()
            self.expect(")", "')' to close the '(' of column %d" % token.column)
            return inner
        return self.test()

    def test(self) -> Node:
        token = self.peek()
        if token.kind != "NAME":
            raise self.error(f"expected a name, 'not' or '(', found {_shown(token)} "
                             f"(known names: {known_names()})")
        self.take()
        name = ALIASES.get(token.text.lower(), token.text.lower())
        spec = FIELDS.get(name)
        if spec is None:
            raise self.error(f"unknown name {token.text!r}; known names: {known_names()}", token)
        self.names.append(name)
        if self.peek().kind != "OP":
            if spec.kind in ("number", "string") or spec.name in ("event", "addr"):
                example = {"string": f'{name} == "{spec.choices[0]}"' if spec.choices else f'{name} == "..."',
                           "number": f"{name} > 100"}.get(spec.kind, f"{name} == ...")
                if spec.name == "event":
                    example = 'event == "Coalesce"'
                elif spec.name == "addr":
                    example = "addr == 0x1a40"
                raise self.error(f"{name} is compared, not true on its own: expected an operator "
                                 f"({', '.join(OPS)}), e.g. {example}; found {_shown(self.peek())}")
            return Compare(spec, None)
        op_token = self.take()
        if spec.kind == "flag":
            raise self.error(f"{name} is true or false on its own: write {name} or not {name}, "
                             f"without {op_token.text}", op_token)
        value_token = self.peek()
        value = self.value()
        return self.checked(spec, op_token, value_token, value)

    def value(self):
        token = self.peek()
        if token.kind in ("NUMBER", "STRING"):
            self.take()
            return token.value
        if token.kind == "(":
            self.take()
            items = [self.expect("NUMBER", "a number in the tuple").value]
            while self.peek().kind == ",":
                self.take()
                items.append(self.expect("NUMBER", "a number after ','").value)
            self.expect(")", "',' or ')' to end the tuple")
            return tuple(items)
        raise self.error(f"expected a value (a number such as 100 or 0x1a40, a string such as "
                         f'"zig-zag", or a tuple such as (3, 5)), found {_shown(token)}')

    def checked(self, spec: Field, op_token: Token, value_token: Token, value) -> Compare:
        name = spec.name
        wants = spec.value_kind if spec.kind == "event" else spec.kind
        if wants == "string":
            if not isinstance(value, str):
                raise self.error(f'{name} is compared with a string, e.g. {name} == "'
                                 f'{(spec.choices or self.events or ("...",))[0]}"', value_token)
            if op_token.text not in ("==", "!="):
                raise self.error(f"{name} is a word: compare it with == or !=, not {op_token.text}", op_token)
            choices = spec.choices or (self.events if name == "event" else ())
            if choices and value not in choices:
                what = "event" if name == "event" else f"value of {name}"
                raise self.error(f"unknown {what} {value!r}; known: {', '.join(choices)}", value_token)
            code = KIND_CODES[value] if name == "kind" else None
            return Compare(spec, op_token.text, value, code)
        if isinstance(value, str):
            raise self.error(f"{name} is compared with a number{' or a tuple' if wants == 'tuple' else ''}, "
                             f"not the string {value!r}", value_token)
        if isinstance(value, tuple) and wants != "tuple":
            raise self.error(f"{name} is compared with a number, not a tuple", value_token)
        if name == "cell" and (not isinstance(value, tuple) or len(value) != 2):
            raise self.error("a TLSF cell is two numbers, (fl, sl), e.g. cell == (3, 5)", value_token)
        return Compare(spec, op_token.text, value)


def _shown(token: Token) -> str:
    return "the end" if token.kind == "END" else repr(token.text)


def parse(text: str, events: tuple[str, ...] | None = None) -> Condition:
    """The condition ``text`` parsed and checked; ConditionError names the
    column of the first mistake.  ``events``: the event type names
    ``event == "..."`` may name (default: :func:`event_types`)."""
    return _Parser(text, event_types() if events is None else tuple(events)).parse()


# ------------------------------------------------------------------ columns
class StepColumns:
    """The columns a condition reads, for the first ``n`` steps of a
    timeline (its series and its trace), each computed on first use and kept.

    ``counted``: the counters of the series stand behind the events (a
    built-in policy: each Rotation is counted in ``rotations``); False for a
    strategy of your own, whose events may come uncounted.  ``makes``: the
    event types the strategy declares it makes (``Strategy.makes_events``;
    None: any): a test of another type holds at no step."""

    def __init__(self, series, trace, n: int, counted: bool = True,
                 makes: frozenset | None = None) -> None:
        self.series = series
        self.trace = trace
        self.n = n
        self.counted = counted
        self.makes = makes
        self._kept: dict[str, np.ndarray] = {}

    @classmethod
    def of(cls, timeline) -> "StepColumns":
        from .user import UserStrategy
        user = isinstance(timeline.strategy, UserStrategy)
        return cls(timeline.series, timeline.trace, timeline.built, counted=not user,
                   makes=None if user else getattr(type(timeline.strategy), "makes_events", None))

    def column(self, spec: Field) -> np.ndarray:
        got = self._kept.get(spec.name)
        if got is None:
            got = self._kept[spec.name] = np.asarray(spec.column(self))
        return got


def decide(condition: Condition, cols: StepColumns) -> tuple[np.ndarray, np.ndarray]:
    """(matched, undecided): boolean columns of the steps the condition
    matches from the columns alone, and of those only the step's events can
    decide (:func:`heapscope.allocators.find.find_steps` replays them)."""
    lower, upper = condition.bounds(cols)
    lower = np.broadcast_to(lower, (cols.n,))
    upper = np.broadcast_to(upper, (cols.n,))
    return lower.copy(), upper & ~lower


def reference() -> str:
    """Every name, grouped, one line each (``heapscope find --help``)."""
    lines = []
    for group in ("operation", "measure", "event"):
        lines.append(f"{group} names:")
        for f in _FIELD_LIST:
            if f.group == group:
                lines.append(f"  {f.name:<13}{f.doc}")
    return "\n".join(lines)
