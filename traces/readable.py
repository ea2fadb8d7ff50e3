"""The readable form of a trace (``.heap``): ``a = malloc(240)``, ``free(a)``.

A teacher writes a demonstration the way C reads, with names of her own
instead of the numbered ids of a .rep file (DESIGN.md, "Traces"; issue 21)::

    # two blocks, a hole, and a request that fits in it
    a = malloc(240)
    b = calloc(4, 60)      # 240 bytes too
    free(a)
    c = malloc(200)
    b = realloc(b, 500)
    free(b)

One operation per line; ``#`` starts a comment (on a line of its own or after
an operation); blank lines are ignored; a trailing ``;`` is allowed, as in C.
The operations:

- ``NAME = malloc(SIZE)``: a new block; ``NAME`` must not be live.
- ``NAME = calloc(COUNT, SIZE)``: the same, of COUNT x SIZE bytes.
- ``NAME = realloc(NAME, SIZE)``: resize a live block (it keeps its name);
  ``NAME = realloc(NULL, SIZE)`` is realloc of nothing, which allocates, for
  a name not used before.
- ``free(NAME)``: free a live block.
- ``malloc(SIZE)`` or ``calloc(...)`` with no ``NAME =``: a block never freed.
- a .rep line, ``a ID SIZE``, ``r ID SIZE``, ``f ID``: the id is the name,
  so ``free(7)`` frees what ``a 7 24`` allocated.  Up to four lines holding
  only integers before the first operation are a .rep header, and ignored
  (counts are computed when the trace is saved as .rep).

A name is an identifier (``a``, ``buf_2``) or a .rep id (``7``); sizes are
whole numbers of bytes (decimal, or hexadecimal ``0x100``), at most 2**40.

When the trace becomes a :class:`~heapscope.traces.trace.Trace`, each name
gets an id: a .rep id keeps its number, other names take the free ids in the
order they first appear.  So a .rep whose ids appear in order (the CS:APP
traces, heapscope's recordings, every bundled trace) comes back with the same
ids after :func:`write_readable` and :func:`parse_readable`; others come back
renumbered in order of first appearance, the same operations otherwise.

Two readers share one line parser:

- :func:`parse_readable` (and :func:`read_readable_source` for files, which
  :mod:`heapscope.traces.formats` picks by content) is strict: the first bad
  line is a :class:`TraceError` naming the file and line.
- :func:`read_lines` is lenient, for an editor: a bad line is recorded in
  :attr:`ReadableParse.problems` and skipped, and the lines after it see the
  heap as if it were not there (DESIGN.md, "The sandbox": an invalid
  operation is kept, marked and skipped by the replay).  It never raises.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import Iterable, Mapping, Sequence

import numpy as np

from .errors import TraceError
from .rep import trace_name, write_rep_bytes
from .source import TraceSource
from .trace import ALLOC, FREE, MAX_IDS, MAX_SIZE, REALLOC, Trace

__all__ = ["ReadableParse", "parse_readable", "read_lines", "read_readable_source",
           "write_readable", "write_readable_file", "op_text", "looks_readable", "looks_readable_line",
           "block_name", "mark_skipped", "unmark_skipped", "FUNCTIONS", "EXTENSION", "SKIPPED_MARK"]

#: the file extension of the readable form
EXTENSION = ".heap"
#: how a saved file keeps a line the replay skipped (it does not parse, or
#: names a block not live there): as a comment starting with this, so every
#: reader passes over it and the sandbox shows the line again, underlined
SKIPPED_MARK = "#! "
#: the calls the readable form knows, with the arguments each takes (for messages)
FUNCTIONS = {
    "malloc": "malloc(size)",
    "calloc": "calloc(count, size)",
    "realloc": "realloc(name, size)",
    "free": "free(name)",
}
_RESERVED = frozenset(FUNCTIONS) | {"NULL"}
_USAGE = ("expected an operation: name = malloc(size), name = calloc(count, size), "
          "name = realloc(name, size), free(name), or a .rep line (a id size, r id size, f id)")

_IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
_NAME_RE = re.compile(rf"(?:{_IDENT}|[0-9]+)\Z")
# A whole line (comment and blanks already stripped): [target =] func(args) [;]
_CALL = re.compile(rf"(?:(?P<target>\S+?)\s*=\s*)?(?P<func>{_IDENT})\s*\((?P<args>.*)\)\s*;?\Z")
_CALL_START = re.compile(rf"\s*(?:(?:{_IDENT}|[0-9]+)\s*=\s*)?(?:malloc|calloc|realloc|free)\s*\(")
_INT = re.compile(r"[+-]?(?:0[xX][0-9A-Fa-f]{1,100}|[0-9]{1,100})\Z")
_REP_LETTERS = {"a": ALLOC, "r": REALLOC, "f": FREE}

# --- recognising the form -----------------------------------------------------


def looks_readable_line(line: str | bytes) -> bool:
    """Whether one line is a call of the readable form (``a = malloc(8)``,
    ``free(a)``, a comment after it allowed); .rep lines are not enough, as
    they are a .rep file's too."""
    if isinstance(line, (bytes, bytearray)):
        line = bytes(line).decode("utf-8", "replace")
    code = line.split("#", 1)[0].strip()
    return bool(_CALL_START.match(code)) and bool(_CALL.match(code))


def looks_readable(text: str | bytes) -> bool:
    """Whether a text would be read in the readable form: one of its first 50
    lines that are neither blank nor a comment is a malloc/calloc/realloc/free
    call, before any ltrace line (the rule of
    :func:`heapscope.traces.formats.sniff`, which files are read by)."""
    from .formats import sniff     # formats imports this module
    from .source import _lf_only
    if isinstance(text, str):
        text = text.encode("utf-8", "surrogatepass")
    return sniff(_lf_only(bytes(text)) + b"\n") == "heap"


# --- one line -----------------------------------------------------------------

class _Bad(Exception):
    """A line that does not parse; the message says why."""


#: how a line wrote its operation: a call, ``realloc(NULL, n)``, a .rep line
CALL, NULL_REALLOC, REP_LINE = "call", "null", "rep"


@dataclass(frozen=True, slots=True)
class _Op:
    """One parsed line: kind, the block's name (None: a block with no name),
    the size, and its ``form`` (CALL, NULL_REALLOC or REP_LINE: a .rep ``r``
    line may realloc a live id or, as realloc(NULL, n) does, a new one)."""
    kind: int
    name: str | None
    size: int
    form: str = CALL


def _size(token: str, what: str = "size") -> int:
    token = token.strip()
    if not _INT.match(token):
        shown = token if len(token) <= 40 else token[:30] + "..."
        unit = " of bytes" if what == "size" else ""
        raise _Bad(f"the {what} must be a whole number{unit}, got {shown!r}")
    value = int(token, 0) if token.lstrip("+-")[:2].lower() == "0x" else int(token, 10)
    if value < 0:
        raise _Bad(f"negative {what} {value}")
    if value > MAX_SIZE:
        raise _Bad(f"absurd {what} {value} (more than 2**40 bytes)")
    return value


def _name(token: str, role: str = "name") -> str:
    token = token.strip()
    if not _NAME_RE.match(token):
        shown = token if len(token) <= 40 else token[:30] + "..."
        raise _Bad(f"{shown!r} is not a {role}: a name is a word of letters, digits and _ "
                   "(a = malloc(8)) or a .rep id (7)")
    if token in _RESERVED:
        raise _Bad(f"{token!r} cannot name a block (it is a C name: choose another)")
    if token.isdigit():
        if int(token) >= MAX_IDS:
            raise _Bad(f"id {token} is out of range [0, {MAX_IDS})")
        token = str(int(token))     # 007 is id 7
    return token


def _arguments(func: str, args: str, want: int) -> list[str]:
    parts = [a.strip() for a in args.split(",")] if args.strip() else []
    if len(parts) != want:
        raise _Bad(f"{func} takes {want} argument{'s' if want > 1 else ''} "
                   f"({FUNCTIONS[func]}), found {len(parts)}")
    if not all(parts):
        raise _Bad(f"an argument of {func} is empty ({FUNCTIONS[func]})")
    return parts


def _parse_call(m: re.Match) -> _Op:
    func, target, args = m.group("func"), m.group("target"), m.group("args")
    if func not in FUNCTIONS:
        close = [f for f in FUNCTIONS if f[0] == func[:1].lower()]
        hint = f" (did you mean {close[0]}?)" if close else ""
        raise _Bad(f"unknown function {func!r}{hint}: the readable form knows "
                   "malloc, calloc, realloc and free")
    if "(" in args or ")" in args:
        raise _Bad(f"{func}'s arguments must be plain numbers and names ({FUNCTIONS[func]})")
    name = None if target is None else _name(target)
    if func == "free":
        if name is not None:
            raise _Bad("free returns nothing: write free(name), with no 'name ='")
        (arg,) = _arguments(func, args, 1)
        if arg == "NULL":
            raise _Bad("free(NULL) does nothing in a trace: remove the line")
        return _Op(FREE, _name(arg, "block name"), 0)
    if func == "malloc":
        (size,) = _arguments(func, args, 1)
        return _Op(ALLOC, name, _size(size))
    if func == "calloc":
        count, size = _arguments(func, args, 2)
        n, each = _size(count, "count"), _size(size)
        if n * each > MAX_SIZE:
            raise _Bad(f"absurd size {n} x {each} = {n * each} (more than 2**40 bytes)")
        return _Op(ALLOC, name, n * each)
    old, size = _arguments(func, args, 2)
    nbytes = _size(size)
    if old == "NULL":
        return _Op(REALLOC, name, nbytes, NULL_REALLOC)
    old = _name(old, "block name")
    if name is not None and name != old:
        raise _Bad(f"realloc keeps its block's name: write {old} = realloc({old}, {nbytes})")
    return _Op(REALLOC, old, nbytes)


def _parse_rep_line(fields: list[str]) -> _Op:
    letter = fields[0]
    kind = _REP_LETTERS[letter]
    want = 1 if kind == FREE else 2
    if len(fields) - 1 != want:
        usage = "f id" if kind == FREE else f"{letter} id size"
        more = " (one operation per line)" if len(fields) - 1 > want else ""
        raise _Bad(f"a .rep line {letter!r} takes {want} number{'s' if want > 1 else ''} "
                   f"({usage}), found {len(fields) - 1}{more}")
    ident = fields[1]
    if not ident.isdigit():
        if _INT.match(ident) and ident.startswith("-"):
            raise _Bad(f"negative id {ident}")
        raise _Bad(f"expected an integer id, got {ident!r}")
    name = _name(str(int(ident)))
    size = 0 if kind == FREE else _size(fields[2])
    return _Op(kind, name, size, REP_LINE)


def _parse_line(text: str) -> _Op | int | None:
    """One line: an _Op, the count of integers on a line holding only
    integers (a .rep header's), or None for nothing (blank, comment); _Bad
    when it cannot be read."""
    code = text.split("#", 1)[0].strip()
    if not code:
        return None
    if ";" in code.rstrip(";"):
        raise _Bad("one operation per line")
    m = _CALL.match(code)
    if m:
        return _parse_call(m)
    fields = code.split()
    if fields[0] in _REP_LETTERS and "=" not in code and "(" not in code:
        return _parse_rep_line(fields)
    if all(_INT.match(f) for f in fields):
        return len(fields)
    word = re.match(_IDENT, code)
    if word and word.group() in FUNCTIONS:
        raise _Bad(f"write {FUNCTIONS[word.group()]}, with parentheses")
    if "=" in code and "(" not in code:
        raise _Bad(f"after '=' comes a call: name = {FUNCTIONS['malloc']}")
    if code.count("(") != code.count(")"):
        raise _Bad("unbalanced parentheses; " + _USAGE)
    raise _Bad(_USAGE)


class _Unreadable(str):
    """The message of a line that cannot be read (kept in the cache below)."""


@functools.lru_cache(maxsize=1 << 16)
def _read_line(text: str) -> _Op | int | None | _Unreadable:
    """:func:`_parse_line`, its failure returned as an _Unreadable, cached: an
    editor reads its lines again after each edit, and most did not change."""
    try:
        return _parse_line(text)
    except _Bad as bad:
        return _Unreadable(bad)


# --- many lines: the heap of names ---------------------------------------------

def _said(name: str) -> str:
    """How a message names a block: ``x``, or ``id 7`` for a .rep id."""
    return f"id {name}" if name.isdigit() else name


class _Reader:
    """Lines read so far: the operations kept and which names are live.

    ``strict``: the first problem raises TraceError(path, line); otherwise
    problems are recorded by line index and their lines skipped.  Line
    indices are 0-based; messages and TraceError say 1-based lines.
    """

    def __init__(self, *, strict: bool, path: str | None = None, max_ops: int | None = None) -> None:
        self.strict = strict
        self.path = path
        self.max_ops = max_ops
        self.key_of: dict[str, int] = {}    # name -> key (order of first use)
        self.key_names: list[str | None] = []
        self.live: dict[int, int] = {}      # key -> line index where it became live
        self.freed: dict[int, int] = {}     # key -> line index where it was last freed
        self.kinds: list[int] = []
        self.keys: list[int] = []
        self.sizes: list[int] = []
        self.lines: list[int] = []
        self.problems: dict[int, str] = {}
        self.header_ints = 0
        self.seen_op = False
        self.mentioned: set[str] = set()    # every name an op line uses, kept or not

    def feed(self, index: int, text: str) -> None:
        parsed = _read_line(text)
        if parsed is None:
            return
        try:
            if isinstance(parsed, _Unreadable):
                raise _Bad(parsed)
            if isinstance(parsed, int):
                self._header(parsed)
                return
            self.seen_op = True
            if parsed.name is not None:
                self.mentioned.add(parsed.name)
            self._apply(parsed, index)
        except _Bad as bad:
            if self.strict:
                raise TraceError(str(bad), self.path, index + 1) from None
            self.problems[index] = str(bad)

    def _header(self, count: int) -> None:
        if self.seen_op:
            raise _Bad("a line of numbers only, after the operations began; " + _USAGE)
        if self.header_ints + count > 4:
            raise _Bad(f"more than the 4 integers of a .rep header ({self.header_ints + count}) "
                       "before the first operation; " + _USAGE)
        self.header_ints += count

    def _apply(self, op: _Op, index: int) -> None:
        name = op.name
        key = None if name is None else self.key_of.get(name)
        live = key in self.live
        # ALLOC and realloc(NULL, n) make a block: the name may not be live.
        # FREE and realloc(name, n) need a live block.  A .rep r line is
        # either (as the Trace reads it): a live id, or an id never used.
        if live and (op.kind == ALLOC or op.form == NULL_REALLOC):
            raise _Bad(f"{_said(name)} is already live (allocated at line "
                       f"{self.live[key] + 1}): free it first, or choose another name")
        if not live and (op.kind == FREE or (op.kind == REALLOC and op.form == CALL)
                         or (op.kind == REALLOC and key is not None)):
            raise _Bad(self._not_live(op, name, key))
        if self.max_ops is not None and len(self.kinds) >= self.max_ops:
            raise TraceError(f"more than {self.max_ops:,} operations, the most heapscope reads",
                             self.path, index + 1)
        if key is None:
            key = len(self.key_names)
            self.key_names.append(name)
            if name is not None:
                self.key_of[name] = key
        if op.kind == FREE:
            del self.live[key]
            self.freed[key] = index
        elif op.kind == ALLOC or key not in self.live:
            self.live[key] = index
        self.kinds.append(op.kind)
        self.keys.append(key)
        self.sizes.append(op.size)
        self.lines.append(index)

    def _not_live(self, op: _Op, name: str, key: int | None) -> str:
        who = _said(name)
        why = "it was never allocated" if key is None else \
            f"it was freed at line {self.freed[key] + 1}"
        if op.kind == FREE:
            return f"free of {who}, which is not live ({why})"
        if op.form != CALL:      # realloc(NULL, n) or a .rep r line, of a freed name
            fix = (f"write {name} = malloc({op.size})" if not name.isdigit()
                   else f"write a {name} {op.size}")
            return f"realloc of {who}, which is not live ({why}): {fix}"
        return (f"realloc of {who}, which is not live ({why}): write {name} = malloc({op.size}) "
                f"or {name} = realloc(NULL, {op.size})")

    # --- the result ---------------------------------------------------------
    def key_ids(self) -> np.ndarray:
        """The id of each key: a .rep id keeps its number, the other names
        take the free ids in order of first use."""
        taken = {int(n) for n in self.key_names if n is not None and n.isdigit()}
        ids = np.empty(len(self.key_names), dtype=np.int64)
        free_id = 0
        for key, name in enumerate(self.key_names):
            if name is not None and name.isdigit():
                ids[key] = int(name)
                continue
            while free_id in taken:
                free_id += 1
            ids[key] = free_id
            free_id += 1
        return ids

    def trace(self, name: str = "", source: str | None = None) -> tuple[Trace, np.ndarray]:
        key_ids = self.key_ids()
        ids = key_ids[np.array(self.keys, dtype=np.int64)] if self.keys else np.zeros(0, np.int64)
        num_ids = int(key_ids.max()) + 1 if len(key_ids) else 0
        # The constructor checks the ops again (check_ops), naming file and line:
        # a second derivation of what _apply decided.
        # the names a person wrote (a .rep line's id is no name of its own)
        names = {int(key_ids[k]): n for k, n in enumerate(self.key_names)
                 if n is not None and not n.isdigit()}
        trace = Trace(np.array(self.kinds, dtype=np.uint8), ids,
                      np.array(self.sizes, dtype=np.int64), num_ids, name=name, source=source,
                      line_numbers=np.array(self.lines, dtype=np.int64) + 1, names=names)
        return trace, key_ids


# --- strict: a whole text or a file ----------------------------------------------

def _split_lines(text: str) -> list[str]:
    """Lines as editors count them: LF, CRLF or a lone CR end a line (not the
    other separators str.splitlines knows, which would shift line numbers)."""
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def parse_readable(text: str, source: str = "<text>") -> Trace:
    """The trace a readable text describes; TraceError ``source:line: message``
    at the first line that is malformed or makes no sense (a free or realloc
    of a name that is not live, a name malloc'ed again while live, a negative
    or absurd size)."""
    if isinstance(text, (bytes, bytearray)):
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError as e:
            line = text.count(b"\n", 0, e.start) + 1
            raise TraceError("not UTF-8 text", source, line) from None
    reader = _Reader(strict=True, path=source)
    for index, line in enumerate(_split_lines(text)):
        reader.feed(index, line)
    from_file = None if source == "<text>" else source
    return reader.trace(trace_name(from_file) if from_file else "", from_file)[0]


def read_readable_source(source: TraceSource) -> Trace:
    """Read readable content from an open :class:`TraceSource` (a file, a pipe,
    gzip data), within its limits; TraceError naming the file and line."""
    reader = _Reader(strict=True, path=source.path, max_ops=source.limits.max_ops)
    for block in source.blocks():
        first = source.line - 1
        for offset, raw in enumerate(block.split(b"\n")):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as e:
                raise TraceError(f"not UTF-8 text (byte 0x{raw[e.start]:02x} at column "
                                 f"{e.start + 1})", source.path, first + offset + 1) from None
            reader.feed(first + offset, line)
        source.check_cancel()
    trace, key_ids = reader.trace(trace_name(source.path) if source.path else "", source.path)
    if trace.num_ids > source.limits.max_ids:
        raise TraceError(source.limits.too_many_ids(trace.num_ids), source.path)
    return trace


# --- lenient: an editor's lines ------------------------------------------------------

@dataclass
class ReadableParse:
    """What an editor's lines say (:func:`read_lines`).

    ``trace``: the operations of the valid lines, in order (their
    ``line_numbers`` are 1-based lines); ``problems``: 0-based line index ->
    what is wrong with it (the line was skipped); ``op_line[i]``: the line
    index of op ``i``; ``line_op``: the inverse, for the lines that hold an
    op; ``names``: id -> the name the lines give it (``write_readable(trace,
    names)`` writes them back); ``mentioned``: every name any line uses, the
    skipped ones too (a new block's name should be none of them).
    """

    trace: Trace
    problems: dict[int, str] = field(default_factory=dict)
    op_line: list[int] = field(default_factory=list)
    line_op: dict[int, int] = field(default_factory=dict)
    names: dict[int, str] = field(default_factory=dict)
    mentioned: set[str] = field(default_factory=set)
    _shown: dict[int, str] | None = field(default=None, init=False, repr=False, compare=False)

    def step_of_line(self, index: int) -> int:
        """How many ops the lines up to ``index`` (included) hold: the step
        whose heap is shown after that line."""
        return int(np.searchsorted(np.asarray(self.op_line, dtype=np.int64), index, side="right"))

    def name_of(self, ident: int) -> str:
        """The name of id ``ident``: the lines', or the one :func:`write_readable`
        would generate for a block the lines leave unnamed (``malloc(8)``);
        for an id no line uses, the id itself, which is a name too."""
        if self._shown is None:
            self._shown = _names_for(self.trace, self.names)
        return self._shown.get(ident, str(ident))

    def live_after(self, index: int) -> list[str]:
        """The names live after line ``index`` (0-based), in the order they
        became live (a realloc keeps a block's place)."""
        n = self.step_of_line(index)
        live: dict[int, None] = {}
        for kind, ident in zip(self.trace.kind[:n].tolist(), self.trace.ids[:n].tolist()):
            if kind == FREE:
                live.pop(ident, None)
            else:
                live.setdefault(ident, None)
        return [self.name_of(i) for i in live]

    def fresh_name(self) -> str:
        """A name no line uses, for a block the user adds: the first of a, b,
        ..., z, aa, ... that is free."""
        taken = self.mentioned | set(self.names.values())
        rank = 0
        while block_name(rank) in taken:
            rank += 1
        return block_name(rank)


def read_lines(lines: Sequence[str] | Iterable[str]) -> ReadableParse:
    """Read an editor's lines leniently: a line that is malformed or makes no
    sense is recorded in ``problems`` (0-based line index -> message) and
    skipped, and the lines after it see the heap as if it were absent.
    Never raises for any text.  ``lines`` may also be one whole text."""
    if isinstance(lines, str):       # a whole text, not its characters
        lines = _split_lines(lines)
    reader = _Reader(strict=False)
    for index, line in enumerate(lines):
        reader.feed(index, line.rstrip("\r\n") if isinstance(line, str) else str(line))
    trace, key_ids = reader.trace()
    names = {int(key_ids[k]): n for k, n in enumerate(reader.key_names) if n is not None}
    return ReadableParse(trace=trace, problems=reader.problems, op_line=list(reader.lines),
                         line_op={line: i for i, line in enumerate(reader.lines)}, names=names,
                         mentioned=reader.mentioned)


# --- writing -------------------------------------------------------------------------

def mark_skipped(lines: Sequence[str], problems: Mapping[int, str]) -> list[str]:
    """``lines`` with each line of ``problems`` (0-based index -> message)
    kept as a comment, :data:`SKIPPED_MARK` before it: a line the replay
    skips survives a save in the readable form, and a strict reader (the
    command line's) passes over it as the replay did."""
    return [SKIPPED_MARK + line if i in problems else line for i, line in enumerate(lines)]


def unmark_skipped(lines: Sequence[str]) -> list[str]:
    """The lines a :func:`mark_skipped` file was written from: the marked
    comments are lines again (an editor reads them, and underlines them as
    it did before the save)."""
    n = len(SKIPPED_MARK)
    return [line[n:] if line.startswith(SKIPPED_MARK) else line for line in lines]


def block_name(rank: int) -> str:
    """The generated name of the ``rank``-th block (0-based): a ... z, aa,
    ab, ..., zz, aaa: bijective base 26, as spreadsheet columns are named."""
    out = ""
    rank += 1
    while rank:
        rank, digit = divmod(rank - 1, 26)
        out = chr(97 + digit) + out
    return out


def _first_appearance(trace: Trace) -> np.ndarray:
    """The trace's ids in the order they are first used."""
    if not len(trace):
        return np.zeros(0, dtype=np.int64)
    _, first = np.unique(trace.ids, return_index=True)
    return trace.ids[np.sort(first)].astype(np.int64)


def _names_for(trace: Trace, names: Mapping[int, str] | Sequence[str] | None) -> dict[int, str]:
    """id -> name for every id the trace uses: the given names (checked),
    generated ones (a, b, ... in order of first use) for the others."""
    given: dict[int, str] = {}
    if names is not None:
        items = names.items() if isinstance(names, Mapping) else enumerate(names)
        for ident, name in items:
            if name is None:
                continue
            try:
                _name(name)
            except _Bad as bad:
                raise ValueError(f"name of id {ident}: {bad}") from None
            given[int(ident)] = name
        if len(set(given.values())) != len(given):
            raise ValueError("two ids are given the same name")
    taken = set(given.values())
    out: dict[int, str] = {}
    rank = 0
    for ident in _first_appearance(trace).tolist():
        if ident in given:
            out[ident] = given[ident]
            continue
        name = block_name(rank)
        while name in taken or name in _RESERVED:
            rank += 1
            name = block_name(rank)
        rank += 1
        out[ident] = name
    return out


def op_text(kind: int, name: str, size: int = 0, *, new: bool = False) -> str:
    """One operation as a readable line: ``a = malloc(240)``, ``free(a)``,
    ``a = realloc(a, 500)``; ``new``: a realloc of a block not live, written
    ``a = realloc(NULL, 500)``."""
    if kind == ALLOC:
        return f"{name} = malloc({size})"
    if kind == FREE:
        return f"free({name})"
    return f"{name} = realloc({'NULL' if new else name}, {size})"


def write_readable(trace: Trace, names: Mapping[int, str] | Sequence[str] | None = None, *,
                   title: str | None = None) -> str:
    """The readable text of a trace, one operation a line.

    ``names``: id -> name (a mapping, or a sequence indexed by id); ids
    without one are named a, b, ..., z, aa, ... in order of first use,
    skipping given names.  ``parse_readable`` of the text gives the same
    operations (ids renumbered in order of first use, see the module's
    docstring).  ``title``: a comment line put first (default: the trace's
    name and size; "" for none).
    """
    if names is None:
        names = getattr(trace, "names", None)    # the names the trace was written with
    name_of = _names_for(trace, names)
    prev = trace.previous_same_id().tolist()
    kinds = trace.kind.tolist()
    out: list[str] = []
    if title is None:
        title = f"{trace.name or 'trace'}: {len(trace):,} operations (heapscope readable form)"
    if title:
        out.append(f"# {title}")
    for i, (kind, ident, size) in enumerate(trace):
        # a realloc of an id not live before it is a realloc(NULL, n)
        out.append(op_text(kind, name_of[ident], size,
                           new=kind == REALLOC and (prev[i] < 0 or kinds[prev[i]] == FREE)))
    out.append("")
    return "\n".join(out)


def write_readable_file(trace: Trace, path, names=None, *, title: str | None = None) -> None:
    """Write :func:`write_readable` of ``trace`` (``names``, ``title``) to
    ``path`` (gzip-compressed if the name ends in .gz), atomically;
    TraceError naming ``path`` if it cannot be written (see
    :func:`heapscope.traces.rep.write_rep_bytes`)."""
    write_rep_bytes(path, write_readable(trace, names, title=title).encode("utf-8"))
