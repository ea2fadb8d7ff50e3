"""Reading and writing CS:APP malloc-lab trace files (.rep, .rep.gz).

Format: four header integers, then the operations::

    20000        <- sugg_heapsize   (CMU variant: weight)
    3            <- num_ids
    4            <- num_ops
    1            <- weight          (CMU variant: ignore_ranges)
    a 0 512      <- malloc 512 bytes as block 0
    r 0 1024     <- realloc block 0 to 1024 bytes
    a 1 16
    f 0          <- free block 0

In both header variants the 2nd integer is num_ids and the 3rd num_ops, which
is all a reader needs.  The CS:APP driver (mdriver) reads these files with
fscanf, which takes any whitespace between fields, so we read what it reads:
the header may sit on fewer lines; lines may end in LF, CRLF or a lone CR; a
line may hold several operations (``a 0 8 a 1 16 f 0``), even after the 4th
header integer.  We are stricter in one way: an operation does not continue
on the next line, so that a line with a missing or extra field is reported
as such.  Blank lines and lines starting with ``#`` are ignored.  gzip data
is inflated as it is read (see :mod:`heapscope.traces.source`).

The file is read as a stream, in blocks of lines (:mod:`heapscope.traces.source`), so
memory stays bounded whatever the input: past the limits of
:class:`~heapscope.traces.source.ReadLimits` (bytes, line length, operations, ids)
the trace is refused with a message naming the limit.

Every problem is a :class:`TraceError` naming the file and line.  A line
that cannot be read (bad token, wrong number of fields) is reported as soon
as the block holding it is parsed; the count of operations is compared with
num_ops at the end, and then the operations are checked in file order
(double free, ...).  So when a file has several problems, the first syntax
error is reported, then a num_ops mismatch, then the first semantic error.

Speed (budget: >= 1M ops/s).  A block of plain lines is parsed without a
Python loop over lines: it is tokenised and its integers decoded with numpy
on the raw bytes (:func:`_parse_body_fast`).  That path only accepts the
plain form -- ASCII digits, the letters a/r/f, spaces, tabs and LF -- and
gives up (returns None) on anything else.  A block with comment lines has
them blanked and is tried again; what still does not fit goes to the
line-by-line reference parser (:func:`_parse_body_slow`), which accepts the
same text and, when it is bad, says precisely what and where.
"""

from __future__ import annotations

import gzip
import os
import re
from typing import Iterable

import numpy as np

from heapscope.outputs import atomic_output
from .errors import TraceError
from .source import DEFAULT_LIMITS, Cancel, Progress, ReadLimits, TraceSource, open_source
from .trace import ALLOC, FREE, KIND_LETTERS, LETTER_KINDS, MAX_IDS, REALLOC, Trace

__all__ = ["read_rep", "parse_rep", "read_rep_source", "write_rep", "format_rep", "trace_name",
           "HEADER_FIELDS"]

HEADER_FIELDS = ("sugg_heapsize (or weight)", "num_ids", "num_ops",
                 "weight (or ignore_ranges)")
_USAGE = {ALLOC: "a id bytes", FREE: "f id", REALLOC: "r id bytes"}
# Integers beyond this cannot be stored in int64 arrays; they are reported at
# once (as an out-of-range id or an absurd size) by the line-by-line parser.
_INT_LIMIT = 2**62

PathLike = str | os.PathLike


# --- public API --------------------------------------------------------------

def read_rep(path: PathLike, *, limits: ReadLimits = DEFAULT_LIMITS,
             progress: Progress | None = None, cancel: Cancel | None = None) -> Trace:
    """Read a .rep file (plain or gzip-compressed; a FIFO or device too) into
    a checked Trace.  ``progress`` and ``cancel`` are as in
    :func:`heapscope.traces.source.open_source`."""
    with open_source(path, limits=limits, progress=progress, cancel=cancel) as source:
        return read_rep_source(source)


def read_rep_source(source: TraceSource) -> Trace:
    """Read .rep content from an open :class:`TraceSource`."""
    reader = _RepReader(source)
    for block in source.blocks():
        reader.feed(block)
    return reader.finish()


def parse_rep(text_or_lines: str | bytes | Iterable[str], path: PathLike | None = None, *,
              limits: ReadLimits = DEFAULT_LIMITS) -> Trace:
    """Parse .rep content: a whole text (str or bytes) or an iterable of lines.

    ``path`` is only used to name the trace and in error messages.  Lines
    given as an iterable may keep or drop their trailing newline.
    """
    src = text_or_lines
    where = None if path is None else os.fsdecode(path)
    if isinstance(src, (bytes, bytearray, memoryview)):
        data = bytes(src)
    elif isinstance(src, str):
        # surrogatepass: any str, even one with lone surrogates, gives bytes.
        data = src.encode("utf-8", "surrogatepass")
    else:
        parts = []
        for line in src:
            if isinstance(line, str):
                line = line.encode("utf-8", "surrogatepass")
            elif not isinstance(line, (bytes, bytearray)):
                raise TraceError(f"expected lines of text, got {type(line).__name__}", where)
            parts.append(line[:-1] if line.endswith(b"\n") else bytes(line))
        data = b"\n".join(parts)
    with TraceSource.from_bytes(data, where, limits=limits) as source:
        return read_rep_source(source)


def format_rep(trace: Trace, *, sugg_heapsize: int = 0, weight: int = 1) -> str:
    """The .rep text of a trace, with the classic header
    ``sugg_heapsize num_ids num_ops weight``."""
    letter = [KIND_LETTERS[k] for k in (ALLOC, FREE, REALLOC)]
    out = [str(sugg_heapsize), str(trace.num_ids), str(len(trace)), str(weight)]
    out += [f"{letter[k]} {i}" if k == FREE else f"{letter[k]} {i} {s}"
            for k, i, s in trace]
    out.append("")
    return "\n".join(out)


def write_rep(trace: Trace, path: PathLike, *, sugg_heapsize: int = 0, weight: int = 1) -> None:
    """Write a trace as a .rep file (gzip-compressed if the name ends in .gz).

    The header is the classic one; ``sugg_heapsize`` is 0 unless given.
    A .gz file gets a zero timestamp so the same trace gives the same bytes.
    The file is written beside ``path`` and renamed over it when complete
    (:func:`heapscope.outputs.atomic_output`), so a failure part way leaves
    whatever ``path`` held before.  Errors writing the file are raised as
    TraceError.
    """
    write_rep_bytes(path, format_rep(trace, sugg_heapsize=sugg_heapsize, weight=weight).encode("ascii"))


def write_rep_bytes(path: PathLike, data: bytes) -> None:
    """Write a trace file's bytes (.rep, or the readable form's) gzip-compressed
    if the name ends in .gz, with a zero timestamp, atomically; TraceError naming ``path`` if it
    cannot be written."""
    where = os.fsdecode(path)
    try:
        with atomic_output(path, "wb") as f:
            if where.lower().endswith(".gz"):
                with gzip.GzipFile(filename="", mode="wb", fileobj=f, mtime=0,
                                   compresslevel=6) as gz:
                    gz.write(data)
            else:
                f.write(data)
    except OSError as e:
        raise TraceError(f"cannot write the file: {e.strerror or e}", where) from None


def trace_name(path: str) -> str:
    """Display name of a trace file: its base name without .gz and then .rep
    or .heap (the readable form's extension)."""
    name = os.path.basename(path)
    for extensions in ((".gz",), (".rep", ".heap")):
        for ext in extensions:      # one of each group at most
            if name.lower().endswith(ext) and len(name) > len(ext):
                name = name[: -len(ext)]
                break
    return name


# --- parsing ---------------------------------------------------------------

class _RepReader:
    """The state of one .rep read: the header so far, then the operations.

    Fed blocks of whole lines (LF line ends) in file order; the header may
    span blocks.  Once the header is read the operations go straight into
    packed arrays of num_ops entries (:class:`_PackedColumns`: kind, id,
    size, line: 17 bytes an op), a block at a time.  Operations past the
    header's num_ops are parsed (a bad line is still reported) and counted
    but not kept, so memory is bounded by num_ops, itself at most
    ``limits.max_ops``.
    """

    def __init__(self, source: TraceSource) -> None:
        self.source = source
        self.path = source.path
        self.limits = source.limits
        self.values: list[int] = []   # header integers read so far
        self.lines: list[int] = []    # the line of each
        self.columns: _PackedColumns | None = None    # once the header is read
        self.kept = 0                 # operations kept (at most num_ops)
        self.count = 0                # operations seen

    def feed(self, block: bytes) -> None:
        line = self.source.line
        if len(self.values) < 4:
            start = self._header(block, line)
            if start is None:
                return
            offset, line = start
            block = block[offset:]
        self._body(block, line)

    # --- header ---------------------------------------------------------------
    def _header(self, block: bytes, lineno: int) -> tuple[int, int] | None:
        """Take header integers from ``block``; once the 4th is read, return
        (offset of the body in block, its line number), else None."""
        if b"#" in block:
            block = _blank_comments(block)
        pos = 0
        while True:
            found = _NOT_BLANK.search(block, pos)
            if found is None:
                return None
            lineno += block.count(b"\n", pos, found.start())
            start = block.rfind(b"\n", 0, found.start()) + 1
            end = block.find(b"\n", found.start())
            end = len(block) if end < 0 else end
            raw = block[start:end]
            for token in _TOKEN.finditer(raw):
                tok = token.group()
                if len(self.values) == 4:
                    if tok in _BYTE_KINDS:   # operations right after the header, as fscanf reads
                        return start + token.start(), lineno
                    raise _fail(f"header: unexpected {_show(tok)} after the 4 header integers",
                                raw, self.path, lineno)
                value = _to_int(tok)
                if value is None:
                    hint = " (is the header missing?)" if tok in _BYTE_KINDS else ""
                    raise _fail(f"header: expected an integer for "
                                f"{HEADER_FIELDS[len(self.values)]}, got {_show(tok)}{hint}",
                                raw, self.path, lineno)
                self.values.append(value)
                self.lines.append(lineno)
            if len(self.values) == 4:
                self._check_header()
                return end + 1, lineno + 1
            pos = end + 1
            lineno += 1

    def _check_header(self) -> None:
        num_ids, num_ops = self.values[1], self.values[2]
        max_ids = min(self.limits.max_ids, MAX_IDS)
        if num_ids < 0:
            raise TraceError(f"header: num_ids = {num_ids} is out of range [0, {max_ids}]",
                             self.path, self.lines[1])
        if num_ids > max_ids:
            raise TraceError("header: " + self.limits.too_many_ids(num_ids),
                             self.path, self.lines[1])
        if num_ops < 0:
            raise TraceError(f"header: num_ops = {num_ops} is negative", self.path, self.lines[2])
        if num_ops > self.limits.max_ops:
            raise TraceError(f"header: num_ops = {num_ops:,}: " + self.limits.too_many_ops(),
                             self.path, self.lines[2])

    # --- operations -----------------------------------------------------------
    def _body(self, block: bytes, first_line: int) -> None:
        parsed = _parse_body_fast(block, first_line)
        if parsed is None:
            parsed = _parse_body_filtered(block, first_line)
        if parsed is None:
            parsed = _parse_body_slow(block, first_line, self.path)
        n = len(parsed[0])
        if not n:
            return
        if self.count + n > self.limits.max_ops:
            line = int(parsed[3][self.limits.max_ops - self.count])
            raise TraceError(self.limits.too_many_ops(), self.path, line)
        room = self.values[2] - self.kept
        if room > 0:
            if self.columns is None:
                self.columns = _PackedColumns(self.values[2])
            self.columns.put(self.kept, [values[:room] for values in parsed])
            self.kept += min(n, room)
        self.count += n

    def finish(self) -> Trace:
        if len(self.values) < 4:
            raise TraceError(
                f"header: expected 4 integers ({', '.join(HEADER_FIELDS)}), "
                f"but the file ends after {len(self.values)}", self.path,
                self.lines[-1] if self.lines else 1)
        num_ops = self.values[2]
        if self.count != num_ops:
            raise TraceError(f"the header says num_ops = {num_ops}, but the file has "
                             f"{self.count} operations", self.path, self.lines[2])
        kind, ids, sizes, line_numbers = (_empty_body() if self.columns is None
                                          else self.columns.arrays())
        self.columns = None
        name = trace_name(self.path) if self.path else ""
        # The Trace constructor runs the semantic checks, naming file and line;
        # it takes the arrays as they are (copy=False): no second copy of the trace.
        return Trace(kind, ids, sizes, self.values[1], name=name, source=self.path,
                     header=tuple(self.values), line_numbers=line_numbers, copy=False)


class _PackedColumns:
    """The operations of a .rep file, packed as they are parsed: kind (uint8),
    id (int32), size (int64) and line (int32) of each of ``num_ops``.

    The arrays are allocated once for the header's num_ops (their pages are
    touched only as they fill, so a header that promises more than the file
    holds costs address space, not memory).  An id that does not fit in
    int32 is out of range for any trace: the id column is widened to int64
    then, so that the checks report it with its value as read."""

    def __init__(self, num_ops: int) -> None:
        self.kind = np.empty(num_ops, np.uint8)
        self.ids = np.empty(num_ops, np.int32)
        self.sizes = np.empty(num_ops, np.int64)
        self.lines = np.empty(num_ops, np.int32)
        self.filled = 0

    def put(self, start: int, parsed: ParsedBody) -> None:
        kind, ids, sizes, lines = parsed
        end = start + len(kind)
        if self.ids.dtype == np.int32 and len(ids) and (
                int(ids.min()) < _INT32.min or int(ids.max()) > _INT32.max):
            self.ids = self.ids.astype(np.int64)
        self.kind[start:end] = kind
        self.ids[start:end] = ids
        self.sizes[start:end] = sizes
        self.lines[start:end] = lines
        self.filled = end

    def arrays(self) -> ParsedBody:
        n = self.filled
        return self.kind[:n], self.ids[:n], self.sizes[:n], self.lines[:n]


def _to_int(tok: bytes) -> int | None:
    """An optionally signed run of ASCII digits as an int, else None.

    Stricter than int(), which would also take '1_000' or spaces around.
    Runs of more than 100 digits are refused too (int() itself refuses
    more than 4300 with a ValueError).
    """
    digits = tok[1:] if tok[:1] in (b"+", b"-") else tok
    if digits.isdigit() and len(digits) <= 100:  # bytes.isdigit(): ASCII only
        return int(tok)
    return None


def _show(tok: bytes) -> str:
    """A token quoted for a message, undecodable bytes escaped, long ones cut."""
    if len(tok) > 40:
        return repr(tok[:30].decode("utf-8", "backslashreplace") + "...") + \
            f" ({len(tok)} characters)"
    return repr(tok.decode("utf-8", "backslashreplace"))


def _fail(message: str, raw: bytes, path: str | None, lineno: int) -> TraceError:
    """The error for a bad line; if the line is not even UTF-8, say that."""
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as e:
        message = f"not UTF-8 text (byte 0x{raw[e.start]:02x} at column {e.start + 1})"
    return TraceError(message, path, lineno)


def _is_ignored(fields: list[bytes]) -> bool:
    """Blank lines and lines starting with '#' carry nothing."""
    return not fields or fields[0].startswith(b"#")


_BYTE_KINDS = {letter.encode(): kind for letter, kind in LETTER_KINDS.items()}

# Byte classes for the fast path: separators < '0' <= digits <= '9' < letters.
_FAST_ALPHABET = b"0123456789arf \t\n"
_KIND_OF_BYTE = np.full(256, 255, dtype=np.uint8)
for _letter, _kind in LETTER_KINDS.items():
    _KIND_OF_BYTE[ord(_letter)] = _kind
del _letter, _kind
# What bytes.split() splits on (C isspace); the header and the slow path use it.
_NOT_BLANK = re.compile(rb"[^ \t\n\r\x0b\x0c]")
_TOKEN = re.compile(rb"[^ \t\n\r\x0b\x0c]+")
_IS_BLANK = np.zeros(256, dtype=bool)
_IS_BLANK[list(b" \t\n\r\x0b\x0c")] = True

ParsedBody = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]
_INT32 = np.iinfo(np.int32)


def _empty_body() -> ParsedBody:
    return (np.zeros(0, np.uint8), np.zeros(0, np.int64), np.zeros(0, np.int64),
            np.zeros(0, np.int32))


def _parse_body_fast(body: bytes, first_line: int) -> ParsedBody | None:
    """Parse a block of op lines in bulk with numpy, or return None if not plain.

    Plain means: only the bytes of ``_FAST_ALPHABET``; every letter stands
    alone between separators; 1 integer after each 'f' and 2 after each
    'a'/'r', on the letter's own line.  The tokens are the letters and the
    digit runs; taken in order, op i owns the runs first_run[i]..last_run[i],
    and it is enough to check that the first of them starts after its letter
    and the last ends before both the next letter and the end of its line.
    """
    if body.translate(None, _FAST_ALPHABET):
        return None  # some other byte: comments, signs, junk, non-ASCII, CR
    # A newline on each side: every letter and run has a byte before and after.
    buf = np.frombuffer(b"\n" + body + b"\n", dtype=np.uint8)
    letters = np.flatnonzero(buf > 57)
    n = len(letters)
    if not n:
        return _empty_body() if not body.strip() else None  # digits without an op
    if not ((buf[letters - 1] < 48).all() and (buf[letters + 1] < 48).all()):
        return None  # a letter glued to something ('a12 5', 'af')
    kind = _KIND_OF_BYTE[buf[letters]]

    # Digit runs: +1 in the diff where one starts, -1 where one ends.
    is_digit = (buf - np.uint8(48)) < 10
    edges = np.diff(is_digit.view(np.int8))
    run_start = np.flatnonzero(edges == 1) + 1
    run_end = np.flatnonzero(edges == -1) + 1
    per_op = np.where(kind == FREE, 1, 2)
    first_run = np.cumsum(per_op) - per_op
    if len(run_start) != int(first_run[-1] + per_op[-1]):
        return None
    last_run = first_run + per_op - 1
    newlines = np.flatnonzero(buf == 10)
    line_index = np.searchsorted(newlines, letters)   # the newline ending the op's line
    limit = newlines[line_index]
    limit[:-1] = np.minimum(limit[:-1], letters[1:])
    if not ((run_start[first_run] > letters).all() and (run_end[last_run] <= limit).all()):
        return None
    values = _decode_runs(buf, run_start, run_end)
    if values is None:
        return None
    ids = values[first_run]
    sizes = np.where(kind == FREE, 0, values[np.minimum(first_run + 1, len(values) - 1)])
    # line_index counts the padding newline too
    line_numbers = (line_index + (first_line - 1)).astype(np.int32)
    return kind, ids, sizes, line_numbers


def _decode_runs(buf: np.ndarray, start: np.ndarray, end: np.ndarray) -> np.ndarray | None:
    """Decimal value of each digit run buf[start:end], vectorised over runs.

    Digit j from the right contributes d * 10**j; runs shorter than j+1
    are masked out.  None if a run is too long for int64.
    """
    length = end - start
    longest = int(length.max())
    if longest > 18:
        return None
    values = np.zeros(len(start), dtype=np.int64)
    for j in range(longest):
        pos = end - 1 - j
        digit = buf[pos].astype(np.int64) - 48
        if j:
            digit *= 10**j
            digit[length <= j] = 0
        values += digit
    return values


def _blank_comments(block: bytes) -> bytes:
    """``block`` with every comment line (its first non-blank byte is '#')
    turned into spaces: same length, same lines.  Vectorised, as a file may
    hold millions of comment lines."""
    buf = np.frombuffer(block, dtype=np.uint8)
    hashes = np.flatnonzero(buf == 35)
    if not len(hashes):
        return block
    ends = np.append(np.flatnonzero(buf == 10), len(buf))
    line = np.searchsorted(ends, hashes)        # the line end after each '#'
    line_start = np.zeros(len(hashes), dtype=np.int64)
    line_start[line > 0] = ends[line[line > 0] - 1] + 1
    # non-blank bytes before position i: content[i]
    content = np.zeros(len(buf) + 1, dtype=np.int64)
    np.cumsum(~_IS_BLANK[buf], out=content[1:])
    first = content[hashes] == content[line_start]   # nothing but blanks before the '#'
    edges = np.zeros(len(buf) + 1, dtype=np.int8)
    edges[hashes[first]] = 1
    edges[ends[line[first]]] = -1
    out = buf.copy()
    out[np.cumsum(edges[:-1], dtype=np.int8) > 0] = 32
    return out.tobytes()


def _parse_body_filtered(body: bytes, first_line: int) -> ParsedBody | None:
    """Blank the comment lines (keeping the line count) and try the fast path."""
    if b"#" not in body:
        return None  # same text as the fast path already refused
    return _parse_body_fast(_blank_comments(body), first_line)


def _parse_body_slow(body: bytes, first_line: int, path: str | None) -> ParsedBody:
    """Reference parser, one line at a time: exact messages for bad lines.

    A line holds one or more operations; each starts at a kind letter and
    takes the fields up to the next kind letter or the end of the line.
    """
    kinds: list[int] = []
    ids: list[int] = []
    sizes: list[int] = []
    numbers: list[int] = []
    for lineno, raw in enumerate(body.split(b"\n"), first_line):
        fields = raw.split()
        if _is_ignored(fields):
            continue  # even a comment that is not UTF-8
        i = 0
        while i < len(fields):
            op = fields[i]
            kind = _BYTE_KINDS.get(op)
            if kind is None:
                raise _fail(f"unknown operation {_show(op)} (expected 'a', 'r' or 'f')",
                            raw, path, lineno)
            end = i + 1
            while end < len(fields) and fields[end] not in _BYTE_KINDS:
                end += 1
            args = fields[i + 1:end]
            want = 1 if kind == FREE else 2
            if len(args) != want:
                raise _fail(f"wrong number of fields: {_show(op)} takes {want} "
                            f"({_USAGE[kind]}), found {len(args)}", raw, path, lineno)
            ident = _to_int(args[0])
            if ident is None:
                raise _fail(f"expected an integer id, got {_show(args[0])}", raw, path, lineno)
            if abs(ident) > _INT_LIMIT:
                raise TraceError(f"id {ident} is out of range", path, lineno)
            size = 0
            if kind != FREE:
                size = _to_int(args[1])
                if size is None:
                    raise _fail(f"expected an integer size in bytes, got {_show(args[1])}",
                                raw, path, lineno)
                if abs(size) > _INT_LIMIT:
                    raise TraceError(f"absurd size {size} for id {ident} (more than 2**40 bytes)",
                                     path, lineno)
            kinds.append(kind)
            ids.append(ident)
            sizes.append(size)
            numbers.append(lineno)
            i = end
    return (np.array(kinds, dtype=np.uint8), np.array(ids, dtype=np.int64),
            np.array(sizes, dtype=np.int64), np.array(numbers, dtype=np.int32))
