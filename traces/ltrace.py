"""Importing ltrace output and villoc's input as a trace.

``ltrace -e malloc+free+calloc+realloc PROGRAM`` prints one line per call::

    prog->malloc(24)                                  = 0x5581c0a4e2a0
    libc.so.6->free(0x5581c0a4e2a0)                   = <void>

Villoc (wapiflapi/villoc, a heap visualiser) reads the same call syntax, and
its DynamoRIO and Pin tracers write it too (``malloc(24) = 0x...``, calloc's
size sometimes in hex, ``@villoc(...)`` annotations).  Understood here:

- with ``-f``, a pid before each line: ``[pid 1234] `` on a terminal,
  ``1234 `` in a file written with ``-o``; a call interrupted by another
  thread's is split into ``func(args <unfinished ...>`` and, later,
  ``<... func resumed> ) = ret``, matched per pid.  A call that never
  resumes (its thread died, the output was cut) is counted and left out:
  the reader keeps at most :data:`MAX_NESTED_CALLS` calls in flight per
  pid and :data:`MAX_PENDING_PIDS` pids with one, so that such calls cannot
  pile up in memory (ltrace shows one unfinished call per thread, one more
  for each traced call nested in it);
- ``-t``/``-tt``/``-ttt``/``-r`` time stamps and ``-i`` instruction pointers
  before the call; the ``lib->`` caller name ltrace 0.7 puts before it;
- ltrace's own lines (``--- SIGCHLD ---``, ``+++ exited (status 0) +++``),
  calls to other functions, the traced program's own output, ``<no return
  ...>``: all skipped;
- malloc, calloc, realloc, reallocarray, free, memalign, aligned_alloc,
  valloc, pvalloc.  posix_memalign returns its block through memory ltrace
  does not show: those calls are counted and skipped.

A free takes effect where it is called (another thread may get the address
before the call returns), an allocation where it returns; a realloc lets go of
its old address when called and takes the new one when it returns.  ltrace
cannot tell a thread (one heap) from a forked process (its own heap): all
pids go into one heap unless ``pids`` keeps only some.

The file is read as a bounded stream of lines (:mod:`heapscope.traces.source`:
gzip-compressed too, a FIFO too, with progress and cancel): lines, total size
and ops are capped by :mod:`heapscope.traces.limits`.  Errors name the file and line.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from heapscope.allocators.phrases import count
from .errors import TraceError
from .limits import MAX_OPS
from .pointer_trace import PointerTrace
from .rep import trace_name
from .source import DEFAULT_LIMITS, ReadLimits, TraceSource, open_source
from .trace import Trace

#: Calls of one pid kept waiting for their "<... resumed>": ltrace shows at
#: most one unfinished call per thread, and one more per traced call made
#: inside it (an interposed malloc calling the real one).  Past this, the
#: oldest of that pid's calls never resumed.
MAX_NESTED_CALLS = 4
#: Pids with a call in flight at once (threads of one program); past this the
#: pid whose calls started longest ago never resumed.
MAX_PENDING_PIDS = 4096

#: Prefixes ltrace may put before a call, stripped in any order.
_PREFIXES = re.compile(
    rb"\[pid (?P<pid>\d+)\]\s+"              # -f, to a terminal
    rb"|(?P<num>\d+)\s+(?=\S)"               # -f -o FILE (and villoc's pid prefix)
    rb"|\d\d:\d\d:\d\d(?:\.\d+)?\s+"         # -t, -tt
    rb"|\d+\.\d+\s+"                         # -ttt, -r
    rb"|\[(?:0x)?[0-9a-fA-F]+\]\s+")         # -i
_NAME = rb"(?:[\w.+-]+->)?(?P<func>@?[A-Za-z_]\w*)(?:@[\w.+-]+)?"
_DONE = re.compile(_NAME + rb"\((?P<args>.*)\)\s*=\s*(?P<ret>\S.*?)\s*$")
_UNFINISHED = re.compile(_NAME + rb"\((?P<args>.*?)\s*<unfinished \.\.\.>\s*$")
_NO_RETURN = re.compile(_NAME + rb"\((?P<args>.*?)\s*<no return \.\.\.>\s*$")
_RESUMED = re.compile(rb"<\.\.\. (?P<func>@?[A-Za-z_]\w*)(?:@[\w.+-]+)? resumed>\s*"
                      rb"(?P<args>.*)\)\s*=\s*(?P<ret>\S.*?)\s*$")
_NUMBER = re.compile(rb"[+-]?(?:0[xX][0-9a-fA-F]+|\d+)")
_NULLS = {b"nil", b"(nil)", b"NULL", b"null", b"<void>"}

#: the arguments of each function we read, by name (for messages)
ARG_NAMES = {b"malloc": ["size"], b"calloc": ["nmemb", "size"], b"realloc": ["ptr", "size"],
             b"reallocarray": ["ptr", "nmemb", "size"], b"free": ["ptr"],
             b"memalign": ["alignment", "size"], b"aligned_alloc": ["alignment", "size"],
             b"valloc": ["size"], b"pvalloc": ["size"],
             b"posix_memalign": ["memptr", "alignment", "size"]}
#: argument count of each function we read
ARITY = {func: len(names) for func, names in ARG_NAMES.items()}


def looks_like_ltrace(line: bytes) -> bool:
    """Whether one line has ltrace's shape (a call, a resumption, a marker)."""
    body = _strip_prefixes(line.strip())[1]
    if body.startswith((b"+++ ", b"--- ")) or _RESUMED.match(body):
        return True
    m = _DONE.match(body) or _UNFINISHED.match(body) or _NO_RETURN.match(body)
    return bool(m)


def _after_pid(rest: bytes) -> bool:
    """Whether text after a bare number is an ltrace line (so the number is a pid)."""
    return b"(" in rest or rest.startswith((b"<... ", b"+++ ", b"--- "))


def _strip_prefixes(line: bytes) -> tuple[int | None, bytes]:
    pid = None
    for _ in range(4):
        m = _PREFIXES.match(line)
        if not m:
            break
        if m.group("pid") is not None:
            pid = int(m.group("pid"))
        elif m.group("num") is not None and pid is None and _after_pid(line[m.end():]):
            pid = int(m.group("num"))
        elif m.group("num") is not None:
            break               # a number that is not a pid prefix
        line = line[m.end():]
    return pid, line


@dataclass
class _Pending:
    func: bytes
    args: bytes
    line: int
    released: tuple | None = None   # realloc's old block (ptr, (id, size))
    deferred: bool = False          # its arguments were not all on the first line


@dataclass
class LtraceCounts:
    failed: int = 0               # calls that returned NULL
    posix_memalign: int = 0       # skipped: the pointer is not in the output
    orphan_resumed: int = 0       # "<... resumed>" whose call is not in the file
    no_return: int = 0            # calls that never returned
    never_resumed: int = 0        # "<unfinished ...>" whose "<... resumed>" never came
    pids: set = field(default_factory=set)


class _Reader:
    def __init__(self, path: str, pids, keep_live: bool) -> None:
        self.path = path
        self.pids = None if not pids else set(pids)
        self.keep_live = keep_live
        self.out = PointerTrace(trace_name(path), path)
        self.pending: dict[int | None, list[_Pending]] = {}
        self.counts = LtraceCounts()
        self.calls = 0

    # --- values ---------------------------------------------------------------
    def _number(self, tok: bytes, what: str, func: bytes, line: int) -> int:
        tok = tok.strip()
        if tok.isdigit():                       # the common cases first
            return int(tok)
        if tok[:2] == b"0x" and len(tok) > 2 and tok[2:].isalnum():
            try:
                return int(tok, 16)
            except ValueError:
                pass
        if tok in _NULLS:
            return 0
        if not _NUMBER.fullmatch(tok):
            raise TraceError(f"{func.decode()}: expected a number for {what}, got "
                             f"{tok[:40].decode('utf-8', 'backslashreplace')!r}",
                             self.path, line)
        digits = tok.lstrip(b"+-")
        value = int(digits, 16) if digits[:2].lower() == b"0x" else int(digits, 10)
        return -value if tok.startswith(b"-") else value

    def _args(self, func: bytes, text: bytes, line: int) -> list[int]:
        parts = text.split(b",") if text.strip() else []
        names = ARG_NAMES[func]
        if len(parts) != len(names):
            want = len(names)
            raise TraceError(f"{func.decode()} takes {want} argument{'s' if want > 1 else ''}, "
                             f"found {len(parts)}", self.path, line)
        return [self._number(p, n, func, line) for p, n in zip(parts, names)]

    def _size(self, value: int, func: bytes, line: int) -> int:
        if value < 0:   # ltrace printed a size_t as signed: a huge request
            value += 1 << 64
        return value

    # --- calls ----------------------------------------------------------------
    def start(self, func: bytes, args: list[int], line: int) -> tuple | None:
        """The part of a call that happens when it is made: frees."""
        if func == b"free":
            if args[0]:
                self.out.free(args[0], line)
        elif func in (b"realloc", b"reallocarray") and args[0]:
            entry = self.out.release(args[0])
            return (args[0], entry)
        return None

    def finish(self, func: bytes, args: list[int], ret: int, line: int,
               released: tuple | None) -> None:
        """The part of a call that happens when it returns: allocations."""
        out = self.out
        if func == b"free":
            return
        if func == b"posix_memalign":
            self.counts.posix_memalign += 1
            return
        if func in (b"realloc", b"reallocarray"):
            size = self._size(args[1] if func == b"realloc" else args[1] * args[2], func, line)
            if not args[0]:
                if ret:
                    out.alloc(ret, size, line)
                else:
                    self.counts.failed += 1
                return
            old, entry = released
            if entry is None:                      # never seen allocated
                if ret:
                    out.realloc(old, ret, size, line)
                elif size == 0:
                    out.counts.unknown_frees += 1
                return
            if ret:
                out.moved(entry[0], ret, size, line)
            elif size == 0:
                out.free_id(entry[0], line)          # realloc(p, 0) freed p
            else:
                self.counts.failed += 1
                out.restore(old, entry)
            return
        if func == b"calloc":
            size = self._size(args[0], func, line) * self._size(args[1], func, line)
        else:
            size = self._size(args[-1], func, line)
        if ret:
            out.alloc(ret, size, line)
        else:
            self.counts.failed += 1

    # --- lines ----------------------------------------------------------------
    def feed(self, raw: bytes, lineno: int) -> None:
        pid, body = _strip_prefixes(raw.strip())
        if not body:
            return
        if self.pids is not None and pid not in self.pids:
            return
        m = _DONE.match(body)
        if m and m.group("func") == b"posix_memalign":
            self._seen(pid)
            self.counts.posix_memalign += 1
            return
        if m and m.group("func") in ARITY:
            func = m.group("func")
            self._seen(pid)
            args = self._args(func, m.group("args"), lineno)
            released = self.start(func, args, lineno)
            self.finish(func, args, self._number(m.group("ret"), "the result", func, lineno),
                        lineno, released)
            return
        m = _UNFINISHED.match(body)
        if m and m.group("func") in ARITY:
            func = m.group("func")
            self._seen(pid)
            text = m.group("args")
            if len([a for a in text.split(b",") if a.strip()]) < ARITY[func]:
                # cut before its last arguments: they come with the resumption
                p = _Pending(func, text, lineno, deferred=True)
            else:
                args = self._args(func, text, lineno)
                p = _Pending(func, text, lineno, self.start(func, args, lineno))
            self._wait_for(pid, p)
            return
        m = _RESUMED.match(body)
        if m and m.group("func") in ARITY:
            func = m.group("func")
            stack = self.pending.get(pid, ())
            for i in range(len(stack) - 1, -1, -1):
                if stack[i].func == func:
                    p = stack.pop(i)
                    if not stack:
                        del self.pending[pid]
                    break
            else:
                self.counts.orphan_resumed += 1
                return
            text = p.args
            if m.group("args").strip():
                text = text.rstrip().rstrip(b",") + b"," + m.group("args")
            args = self._args(func, text, p.line)
            if p.deferred:
                p.released = self.start(func, args, p.line)
            self.finish(func, args, self._number(m.group("ret"), "the result", func, lineno),
                        lineno, p.released)
            return
        m = _NO_RETURN.match(body)
        if m and m.group("func") in ARITY:
            func = m.group("func")
            self._seen(pid)
            args = self._args(func, m.group("args"), lineno)
            released = self.start(func, args, lineno)
            if released and released[1] is not None:
                self.out.restore(*released)
            self.counts.no_return += 1
        # anything else is ltrace's noise or the program's own output

    def _wait_for(self, pid, p: _Pending) -> None:
        """Keep an unfinished call until it resumes, within the bounds
        (:data:`MAX_NESTED_CALLS`, :data:`MAX_PENDING_PIDS`): past them the
        oldest call waited for never resumed."""
        pending = self.pending
        stack = pending.get(pid)
        if stack is None:
            if len(pending) >= MAX_PENDING_PIDS:
                for old in pending.pop(next(iter(pending))):   # dicts keep insertion order
                    self._never_resumed(old)
            stack = pending[pid] = []
        elif len(stack) >= MAX_NESTED_CALLS:
            self._never_resumed(stack.pop(0))
        stack.append(p)

    def _never_resumed(self, p: _Pending) -> None:
        """A call whose "<... resumed>" never came: counted; a realloc's old
        block, let go when it was called, is the program's again."""
        self.counts.never_resumed += 1
        if p.released and p.released[1] is not None:
            self.out.restore(*p.released)

    def _seen(self, pid) -> None:
        self.calls += 1
        if pid is not None:
            self.counts.pids.add(pid)

    def end(self, last_line: int) -> Trace:
        for stack in self.pending.values():
            for p in stack:
                self._never_resumed(p)
        self.pending.clear()
        if self.calls == 0:
            what = f" of pid {', '.join(map(str, sorted(self.pids)))}" if self.pids else ""
            raise TraceError(f"no malloc, calloc, realloc or free call{what} in this file "
                             "(is it the output of ltrace -e malloc+free+calloc+realloc?)",
                             self.path)
        return self.out.finish(self.keep_live, last_line)


def read_ltrace(path: str | os.PathLike, pids=None, keep_live: bool = False,
                max_ops: int = MAX_OPS, *, limits: ReadLimits = DEFAULT_LIMITS) -> Trace:
    """Read ltrace output (or villoc's input) from ``path`` into a trace.

    ``pids`` keeps only those pids' lines (``ltrace -f``); blocks still live at
    the end are freed there unless ``keep_live``.  :func:`import_ltrace` also
    tells what was skipped.
    """
    return import_ltrace(path, pids, keep_live, max_ops, limits=limits)[0]


def import_ltrace(path: str | os.PathLike, pids=None, keep_live: bool = False,
                  max_ops: int = MAX_OPS, *, limits: ReadLimits = DEFAULT_LIMITS
                  ) -> tuple[Trace, LtraceCounts, object]:
    """:func:`read_ltrace`, also returning what was skipped: (trace, the
    importer's counts, the pointer counts of :class:`PointerTrace`)."""
    with open_source(path, limits=limits) as source:
        return import_ltrace_source(source, pids, keep_live, max_ops)


def import_ltrace_source(source: TraceSource, pids=None, keep_live: bool = False,
                         max_ops: int = MAX_OPS) -> tuple[Trace, LtraceCounts, object]:
    """:func:`import_ltrace` from an open :class:`TraceSource`."""
    reader = _Reader(source.path, pids, keep_live)
    reader.out.max_ops = min(max_ops, source.limits.max_ops)
    last = 0
    for block in source.blocks():
        lines = block.split(b"\n")
        if block.endswith(b"\n"):
            lines.pop()             # nothing after the last line end
        for lineno, raw in enumerate(lines, source.line):
            reader.feed(raw, lineno)
        last = source.line + len(lines) - 1
    trace = reader.end(last)
    return trace, reader.counts, reader.out.counts


def skipped_lines(counts: LtraceCounts, pointer_counts) -> list[str]:
    """What an import left out, in words (for ``heapscope convert`` and
    ``heapscope check``)."""
    out = []
    if len(counts.pids) > 1:
        out.append(f"{len(counts.pids)} pids in one heap ({', '.join(map(str, sorted(counts.pids)))}): "
                   "ltrace cannot tell threads from processes; --pid keeps one")
    for n, what in ((pointer_counts.unknown_frees, ("free of a pointer never seen allocated: dropped",
                                                    "frees of pointers never seen allocated: dropped")),
                    (pointer_counts.unknown_reallocs, ("realloc of a pointer never seen allocated: "
                                                       "taken as an allocation",
                                                       "reallocs of pointers never seen allocated: "
                                                       "taken as allocations")),
                    (pointer_counts.missed_frees, ("address returned again while live: the old "
                                                   "block freed there",
                                                   "addresses returned again while live: the old "
                                                   "block freed there")),
                    (counts.failed, ("call that returned NULL: left out",
                                     "calls that returned NULL: left out")),
                    (counts.posix_memalign, ("posix_memalign call (ltrace does not show the "
                                             "block): left out",
                                             "posix_memalign calls (ltrace does not show the "
                                             "block): left out")),
                    (counts.orphan_resumed, ("resumed call whose start is not in the file: left out",
                                             "resumed calls whose start is not in the file: left out")),
                    (counts.no_return, ("call that never returned", "calls that never returned")),
                    (counts.never_resumed, ("call left unfinished (no \"<... resumed>\"): its "
                                            "allocation left out",
                                            "calls left unfinished (no \"<... resumed>\"): their "
                                            "allocations left out"))):
        if n:
            out.append(count(n, what, grouped=True))
    return out
