"""Reading and writing CS:APP malloc-lab trace files (.rep, .rep.gz).

Format: four header integers, then one operation per line::

    20000        <- sugg_heapsize   (CMU variant: weight)
    3            <- num_ids
    4            <- num_ops
    1            <- weight          (CMU variant: ignore_ranges)
    a 0 512      <- malloc 512 bytes as block 0
    r 0 1024     <- realloc block 0 to 1024 bytes
    a 1 16
    f 0          <- free block 0

In both header variants the 2nd integer is num_ids and the 3rd num_ops, which
is all a reader needs; the header may also sit on fewer lines, separated by
whitespace.  Blank lines and lines starting with ``#`` are ignored.  Files
whose name ends in ``.gz`` are gzip-compressed.

Every problem is a :class:`TraceError` naming the file and line.  When a file
has several, the first syntax error is reported, then a num_ops mismatch,
then the first semantic error (double free, ...) in file order.

Speed (budget: >= 1M ops/s).  A plain file is parsed without a Python loop
over lines: the op lines are tokenised and their integers decoded with numpy
on the raw bytes (:func:`_parse_body_fast`).  That path only accepts the
plain form -- ASCII digits, the letters a/r/f, spaces, tabs, CR and LF, one op
per line -- and gives up (returns None) on anything else.  A file with
comments or blank lines is then filtered line by line and tried again; what
still does not fit goes to the line-by-line reference parser
(:func:`_parse_body_slow`), which accepts the same files and, when a file is
bad, says precisely what and where.
"""

from __future__ import annotations

import gzip
import os
import zlib
from typing import Iterable

import numpy as np

from .errors import TraceError
from .trace import ALLOC, FREE, KIND_LETTERS, LETTER_KINDS, MAX_IDS, REALLOC, Trace

__all__ = ["read_rep", "parse_rep", "write_rep", "format_rep", "trace_name", "HEADER_FIELDS"]

HEADER_FIELDS = ("sugg_heapsize (or weight)", "num_ids", "num_ops",
                 "weight (or ignore_ranges)")
_USAGE = {ALLOC: "a id bytes", FREE: "f id", REALLOC: "r id bytes"}
# Integers beyond this cannot be stored in int64 arrays; they are reported at
# once (as an out-of-range id or an absurd size) by the line-by-line parser.
_INT_LIMIT = 2**62

PathLike = str | os.PathLike


# --- public API --------------------------------------------------------------

def read_rep(path: PathLike) -> Trace:
    """Read a .rep (or gzip-compressed .rep.gz) file into a checked Trace."""
    where = os.fsdecode(path)
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise TraceError(f"cannot read the file: {e.strerror or e}", where) from None
    if _is_gzip_name(where):
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as e:
            raise TraceError(f"not a valid gzip file: {e}", where) from None
    return _parse(data, where, trace_name(where))


def parse_rep(text_or_lines: str | bytes | Iterable[str], path: PathLike | None = None) -> Trace:
    """Parse .rep content: a whole text (str or bytes) or an iterable of lines.

    ``path`` is only used to name the trace and in error messages.  Lines
    given as an iterable may keep or drop their trailing newline.
    """
    src = text_or_lines
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
                raise TraceError(f"expected lines of text, got {type(line).__name__}",
                                 None if path is None else os.fsdecode(path))
            parts.append(line[:-1] if line.endswith(b"\n") else bytes(line))
        data = b"\n".join(parts)
    where = None if path is None else os.fsdecode(path)
    return _parse(data, where, trace_name(where) if where else "")


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
    Errors writing the file are raised as TraceError.
    """
    where = os.fsdecode(path)
    data = format_rep(trace, sugg_heapsize=sugg_heapsize, weight=weight).encode("ascii")
    try:
        with open(path, "wb") as f:
            if _is_gzip_name(where):
                with gzip.GzipFile(filename="", mode="wb", fileobj=f, mtime=0,
                                   compresslevel=6) as gz:
                    gz.write(data)
            else:
                f.write(data)
    except OSError as e:
        raise TraceError(f"cannot write the file: {e.strerror or e}", where) from None


def trace_name(path: str) -> str:
    """Display name of a trace file: its base name without .gz and .rep."""
    name = os.path.basename(path)
    for ext in (".gz", ".rep"):
        if name.lower().endswith(ext) and len(name) > len(ext):
            name = name[: -len(ext)]
    return name


# --- parsing ---------------------------------------------------------------

def _is_gzip_name(path: str) -> bool:
    return path.lower().endswith(".gz")


def _parse(data: bytes, path: str | None, name: str) -> Trace:
    if data.startswith(b"\xef\xbb\xbf"):  # a UTF-8 byte order mark
        data = data[3:]
    header, header_lines, body_start, body_line = _read_header(data, path)
    body = data[body_start:]
    parsed = _parse_body_fast(body, body_line)
    if parsed is None:
        parsed = _parse_body_filtered(body, body_line)
    if parsed is None:
        parsed = _parse_body_slow(body, body_line, path)
    kind, ids, sizes, line_numbers = parsed
    num_ops = header[2]
    if len(kind) != num_ops:
        raise TraceError(f"the header says num_ops = {num_ops}, but the file has "
                         f"{len(kind)} operations", path, header_lines[2])
    # The Trace constructor runs the semantic checks, naming file and line.
    return Trace(kind, ids, sizes, header[1], name=name, source=path,
                 header=tuple(header), line_numbers=line_numbers)


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


def _read_header(data: bytes, path: str | None) -> tuple[list[int], list[int], int, int]:
    """Find the 4 header integers.

    Returns (values, line of each value, byte offset of the body, line
    number of the body's first line).
    """
    values: list[int] = []
    lines: list[int] = []
    pos, lineno = 0, 0
    while len(values) < 4:
        if pos > len(data):
            raise TraceError(
                f"header: expected 4 integers ({', '.join(HEADER_FIELDS)}), "
                f"but the file ends after {len(values)}", path, lines[-1] if lines else 1)
        end = data.find(b"\n", pos)
        if end < 0:
            end = len(data)
        lineno += 1
        raw = data[pos:end]
        pos = end + 1
        fields = raw.split()  # ASCII whitespace, as C's isspace() in mdriver
        if _is_ignored(fields):
            continue
        for tok in fields:
            if len(values) == 4:
                raise _fail(f"header: unexpected {_show(tok)} after the 4 header integers",
                            raw, path, lineno)
            value = _to_int(tok)
            if value is None:
                hint = " (is the header missing?)" if tok in _BYTE_KINDS else ""
                raise _fail(f"header: expected an integer for "
                            f"{HEADER_FIELDS[len(values)]}, got {_show(tok)}{hint}",
                            raw, path, lineno)
            values.append(value)
            lines.append(lineno)
    num_ids, num_ops = values[1], values[2]
    if not 0 <= num_ids <= MAX_IDS:
        raise TraceError(f"header: num_ids = {num_ids} is out of range [0, {MAX_IDS}]",
                         path, lines[1])
    if num_ops < 0:
        raise TraceError(f"header: num_ops = {num_ops} is negative", path, lines[2])
    return values, lines, min(pos, len(data)), lineno + 1


_BYTE_KINDS = {letter.encode(): kind for letter, kind in LETTER_KINDS.items()}

# Byte classes for the fast path.
_FAST_ALPHABET = b"0123456789arf \t\r\n"
_KIND_OF_BYTE = np.full(256, 255, dtype=np.uint8)
for _letter, _kind in LETTER_KINDS.items():
    _KIND_OF_BYTE[ord(_letter)] = _kind
_IS_SEPARATOR = np.zeros(256, dtype=bool)
_IS_SEPARATOR[list(b" \t\r\n")] = True
del _letter, _kind

ParsedBody = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def _empty_body() -> ParsedBody:
    return (np.zeros(0, np.uint8), np.zeros(0, np.int64), np.zeros(0, np.int64),
            np.zeros(0, np.int32))


def _parse_body_fast(body: bytes, first_line: int) -> ParsedBody | None:
    """Parse op lines in bulk with numpy, or return None if not plain.

    Plain means: only the bytes of ``_FAST_ALPHABET``; every line starts
    with a kind letter followed by a separator; exactly as many kind letters
    as lines; 1 integer on each 'f' line and 2 on each 'a'/'r' line.  Then
    the digit runs, taken in order, fall on the right lines: line i owns runs
    first_run[i]..last_run[i], and it is enough to check that the first of
    them starts after the line's start and the last ends before its newline.
    """
    body = body.rstrip(b" \t\r\n")  # trailing blank lines change nothing
    if not body:
        return _empty_body()
    if body.translate(None, _FAST_ALPHABET):
        return None  # some other byte: comments, signs, junk, non-ASCII
    buf = np.frombuffer(body + b"\n", dtype=np.uint8)
    newlines = np.flatnonzero(buf == 10)
    n = len(newlines)
    if body.count(b"a") + body.count(b"r") + body.count(b"f") != n:
        return None  # a letter inside a line (or blank lines: fewer letters)
    starts = np.empty(n, dtype=np.int64)
    starts[0] = 0
    starts[1:] = newlines[:-1] + 1
    kind = _KIND_OF_BYTE[buf[starts]]
    if (kind == 255).any():
        return None  # a line that does not start with a kind letter
    if not _IS_SEPARATOR[buf[starts + 1]].all():
        return None  # the letter is glued to something ('a12 5')

    # Digit runs: +1 in the diff where one starts, -1 where one ends.  The
    # buffer starts with a letter and ends with '\n', so every run has both.
    is_digit = (buf - np.uint8(48)) < 10
    edges = np.diff(is_digit.view(np.int8))
    run_start = np.flatnonzero(edges == 1) + 1
    run_end = np.flatnonzero(edges == -1) + 1
    per_line = np.where(kind == FREE, 1, 2)
    first_run = np.cumsum(per_line) - per_line
    if len(run_start) != int(per_line.sum()):
        return None
    last_run = first_run + per_line - 1
    if not ((run_start[first_run] > starts).all() and (run_end[last_run] <= newlines).all()):
        return None
    values = _decode_runs(buf, run_start, run_end)
    if values is None:
        return None
    ids = values[first_run]
    sizes = np.where(kind == FREE, 0, values[np.minimum(first_run + 1, len(values) - 1)])
    line_numbers = np.arange(first_line, first_line + n, dtype=np.int32)
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


def _parse_body_filtered(body: bytes, first_line: int) -> ParsedBody | None:
    """Drop blank and comment lines, strip the rest, and try the fast path."""
    kept_lines: list[bytes] = []
    kept_numbers: list[int] = []
    changed = False
    for i, raw in enumerate(body.split(b"\n")):
        line = raw.strip()  # ASCII whitespace, like bytes.split() in the slow path
        if line and not line.startswith(b"#"):
            kept_lines.append(line)
            kept_numbers.append(i)
        if len(line) != len(raw) or not line or line.startswith(b"#"):
            changed = True
    if not changed:
        return None  # same text as the fast path already refused
    parsed = _parse_body_fast(b"\n".join(kept_lines), 0)
    if parsed is None:
        return None
    kind, ids, sizes, _ = parsed
    return kind, ids, sizes, np.array(kept_numbers, dtype=np.int32) + first_line


def _parse_body_slow(body: bytes, first_line: int, path: str | None) -> ParsedBody:
    """Reference parser, one line at a time: exact messages for bad lines."""
    kinds: list[int] = []
    ids: list[int] = []
    sizes: list[int] = []
    numbers: list[int] = []
    for lineno, raw in enumerate(body.split(b"\n"), first_line):
        fields = raw.split()
        if _is_ignored(fields):
            continue  # even a comment that is not UTF-8
        op = fields[0]
        kind = _BYTE_KINDS.get(op)
        if kind is None:
            raise _fail(f"unknown operation {_show(op)} (expected 'a', 'r' or 'f')",
                        raw, path, lineno)
        want = 2 if kind == FREE else 3
        if len(fields) != want:
            raise _fail(f"wrong number of fields: {_show(op)} takes {want - 1} "
                        f"({_USAGE[kind]}), found {len(fields) - 1}", raw, path, lineno)
        ident = _to_int(fields[1])
        if ident is None:
            raise _fail(f"expected an integer id, got {_show(fields[1])}", raw, path, lineno)
        if abs(ident) > _INT_LIMIT:
            raise TraceError(f"id {ident} is out of range", path, lineno)
        size = 0
        if kind != FREE:
            size = _to_int(fields[2])
            if size is None:
                raise _fail(f"expected an integer size in bytes, got {_show(fields[2])}",
                            raw, path, lineno)
            if abs(size) > _INT_LIMIT:
                raise TraceError(f"absurd size {size} for id {ident} (more than 2**40 bytes)",
                                 path, lineno)
        kinds.append(kind)
        ids.append(ident)
        sizes.append(size)
        numbers.append(lineno)
    return (np.array(kinds, dtype=np.uint8), np.array(ids, dtype=np.int64),
            np.array(sizes, dtype=np.int64), np.array(numbers, dtype=np.int32))

