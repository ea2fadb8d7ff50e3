"""``heapscope record``: run a program under the recorder and keep its traces.

The program runs with ``LD_PRELOAD`` set to the recorder library
(:mod:`traces.preload`, C source in ``recorder.c``) and
``HEAPSCOPE_RECORD_DIR`` set to a temporary folder, where every process
appends fixed-size binary records to ``<pid>.hsr``.  When it has ended, each
file becomes one trace per program it ran (:func:`read_recordings`):

- a process that calls exec runs a new program on a new heap: the records
  after its START record go to a new trace;
- a forked child starts with its parent's heap, so its trace starts with the
  parent's operations up to the fork (the FORK record says how many records
  the parent had written), then goes on with its own;
- pointers become ids through :class:`traces.pointer_trace.PointerTrace`.

The trace of the *main* program -- the last program run by the process
``record`` started, whose exit status ``record`` passes on -- is written to
the output file; every other program that allocated anything of its own gets
``OUT.<pid>.<program>.rep`` beside it.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .errors import TraceError
from .limits import MAX_OPS
from .pointer_trace import PointerTrace, Snapshot
from .preload import preload_library
from .rep import write_rep
from .trace import Trace

#: One record of the recorder's files (see recorder.c), native byte order.
RECORD = np.dtype([("kind", "=u4"), ("extra", "=u4"), ("a", "=u8"), ("b", "=u8"), ("c", "=u8")])
FORMAT_VERSION = 1
START, NAME, FORK = ord("S"), ord("N"), ord("K")
MALLOC, CALLOC, REALLOC, ALIGNED, FREE = (ord(c) for c in "MCRAF")
#: programs listed one a line in the summary
SUMMARY_PROGRAMS = 12
_CHUNK = 1 << 16   # records read at a time: bounded memory for any file size


@dataclass
class ProgramTrace:
    """The trace of one program run by one process."""
    pid: int
    parent: int
    program: str
    trace: Trace
    #: ops at its start copied from the parent it was forked from (0 if none)
    inherited: int = 0
    #: the parent pid when this program began as a fork of it
    forked_from: int | None = None
    #: 0 for the program the process started with, 1 after its first exec...
    exec_index: int = 0
    main: bool = False
    counts: object = None
    path: Path | None = None
    #: frees added at the end for the blocks still live (0 with keep_live)
    freed_at_end: int = 0

    @property
    def own_ops(self) -> int:
        """The operations this program made itself."""
        return len(self.trace) - self.inherited - self.freed_at_end


@dataclass
class Recording:
    status: int
    programs: list[ProgramTrace] = field(default_factory=list)
    torn: list[int] = field(default_factory=list)   # pids whose file ends mid-record

    @property
    def main(self) -> ProgramTrace | None:
        return next((p for p in self.programs if p.main), None)


# --- running ------------------------------------------------------------------

def exit_status(returncode: int) -> int:
    """A shell's exit status for a child's return code (killed by signal N: 128 + N)."""
    return 128 - returncode if returncode < 0 else returncode


def run_recorded(command: list[str], raw_dir: str, library: str | os.PathLike,
                 env: dict | None = None, cwd=None, stdin=None) -> tuple[int, int]:
    """Run ``command`` with the recorder loaded; (its return code, its pid).

    The program shares our terminal: its input and output pass through
    (``stdin`` may give it another input, ``env`` another environment).
    Ctrl+C reaches it (the whole foreground group gets it) while we only wait,
    so that what it recorded is still converted.  OSError if it cannot start.
    """
    env = dict(os.environ if env is None else env)
    preload = env.get("LD_PRELOAD", "").strip()
    env["LD_PRELOAD"] = os.fspath(library) + (" " + preload if preload else "")
    env["HEAPSCOPE_RECORD_DIR"] = raw_dir
    # A Python handler (not SIG_IGN, which exec would keep) while we wait.
    old = signal.signal(signal.SIGINT, lambda *_: None)
    try:
        proc = subprocess.Popen(command, env=env, cwd=cwd, stdin=stdin)
        return proc.wait(), proc.pid
    finally:
        signal.signal(signal.SIGINT, old)


# --- converting ---------------------------------------------------------------

def _records(path: Path):
    """(index, kind, extra, a, b, c) for each whole record of a file, read in chunks."""
    index = 0
    with open(path, "rb") as f:
        while True:
            chunk = np.fromfile(f, dtype=RECORD, count=_CHUNK)
            if not len(chunk):
                return
            yield from zip(range(index, index + len(chunk)), chunk["kind"].tolist(),
                           chunk["extra"].tolist(), chunk["a"].tolist(), chunk["b"].tolist(),
                           chunk["c"].tolist())
            index += len(chunk)


def _first_record(path: Path):
    head = np.fromfile(path, dtype=RECORD, count=1)
    return head[0] if len(head) else None


def _name_of(a: int, b: int, c: int) -> str:
    raw = np.array([a, b, c], dtype="=u8").tobytes().split(b"\0")[0]
    return raw.decode("utf-8", "replace") or "?"


def read_recordings(raw_dir: str | os.PathLike, main_pid: int | None = None,
                    keep_live: bool = False, max_ops: int = MAX_OPS) -> Recording:
    """Turn the recorder's ``<pid>.hsr`` files into one trace per program.

    Parents are read before the children forked from them.  Blocks still live
    when a program ends (exit, or exec) are freed there unless ``keep_live``.
    The main program is ``main_pid``'s last one.
    """
    raw_dir = Path(raw_dir)
    files = {}
    for p in raw_dir.glob("*.hsr"):
        if p.stem.isdigit():
            files[int(p.stem)] = p
    heads = {pid: _first_record(p) for pid, p in files.items()}
    heads = {pid: h for pid, h in heads.items() if h is not None}
    wanted: dict[int, set[int]] = {}
    for pid, h in heads.items():
        if int(h["kind"]) == FORK:
            wanted.setdefault(int(h["b"]), set()).add(int(h["c"]))
        elif int(h["kind"]) != START:
            raise TraceError(f"not a heapscope recording (first record kind {int(h['kind'])})",
                             str(files[pid]))
    # Parents before their children; a parent without a file starts nothing.
    order, done = [], set()
    pending = sorted(heads)
    while pending:
        rest = []
        for pid in pending:
            h = heads[pid]
            parent = int(h["b"])
            if int(h["kind"]) == FORK and parent in heads and parent not in done and parent != pid:
                rest.append(pid)
            else:
                order.append(pid)
                done.add(pid)
        if len(rest) == len(pending):      # a cycle (pid reuse): take them as they are
            order += rest
            break
        pending = rest

    rec = Recording(status=0)
    snapshots: dict[tuple[int, int], Snapshot] = {}
    for pid in order:
        path = files[pid]
        source = str(path)
        current: PointerTrace | None = None
        info: dict = {}
        programs_of_pid = 0
        want = wanted.get(pid, set())

        def finish(cur, inf):
            trace = cur.finish(keep_live)
            rec.programs.append(ProgramTrace(
                pid=pid, parent=inf["parent"], program=inf["program"], trace=trace,
                inherited=inf["inherited"], forked_from=inf["forked_from"],
                exec_index=inf["exec_index"], counts=cur.counts,
                freed_at_end=0 if keep_live else cur.counts.live_at_end))

        last_index = -1
        for index, kind, extra, a, b, c in _records(path):
            last_index = index
            if index in want and current is not None:
                snapshots[(pid, index)] = current.snapshot()
            if kind == MALLOC or kind == CALLOC or kind == ALIGNED:
                current.alloc(a, c)
            elif kind == FREE:
                current.free(a)
            elif kind == REALLOC:
                current.realloc(b, a, c)
            elif kind == NAME:
                info["program"] = _name_of(a, b, c)
                current.name = info["program"]
            elif kind == START or kind == FORK:
                if extra != FORMAT_VERSION:
                    raise TraceError(f"record {index}: recorder format {extra}, expected "
                                     f"{FORMAT_VERSION} (a recording from another heapscope?)",
                                     source)
                if current is not None:
                    finish(current, info)
                if kind == FORK:
                    # the parent's heap at the fork, in the program it was running then
                    snap = snapshots.get((b, c))   # two children may share one
                    current = (PointerTrace.continued(snap, source=source) if snap is not None
                               else PointerTrace(source=source, max_ops=max_ops))
                    name = snap.owner.name if snap is not None and snap.owner.name else "?"
                    current.name = name
                    info = {"parent": b, "program": name, "forked_from": b,
                            "inherited": len(current), "exec_index": programs_of_pid}
                else:
                    current = PointerTrace(source=source, max_ops=max_ops)
                    info = {"parent": b, "program": "?", "forked_from": None, "inherited": 0,
                            "exec_index": programs_of_pid}
                programs_of_pid += 1
            else:
                raise TraceError(f"record {index}: unknown record kind {kind}", source)
        if last_index + 1 in want and current is not None:
            snapshots[(pid, last_index + 1)] = current.snapshot()
        if current is not None:
            finish(current, info)
        if path.stat().st_size % RECORD.itemsize:
            rec.torn.append(pid)
    of_main = [p for p in rec.programs if p.pid == main_pid]
    if of_main:
        of_main[-1].main = True
    return rec


# --- output -------------------------------------------------------------------

def _split_ext(path: str) -> tuple[str, str]:
    low = path.lower()
    for ext in (".rep.gz", ".rep", ".gz"):
        if low.endswith(ext) and len(path) > len(ext):
            return path[: -len(ext)], path[-len(ext):]
    return path, ""


def output_paths(output: str | os.PathLike, programs: list[ProgramTrace]) -> None:
    """Set ``path`` of each program to write: the main one to ``output``, the
    others to ``OUT.<pid>.<program>.rep`` (``.2`` and so on when one process
    ran the same program twice).  Fork children with no operation of their
    own (most of them exec at once) and programs with no operation at all get
    no file."""
    stem, ext = _split_ext(os.fspath(output))
    ext = ext or ".rep"
    taken: set[str] = set()
    for prog in programs:
        if prog.main:
            prog.path = Path(output)
            continue
        if prog.own_ops == 0:
            continue
        safe = re.sub(r"[^A-Za-z0-9_.+-]", "_", prog.program).strip(".") or "program"
        name = f"{stem}.{prog.pid}.{safe}"
        candidate, n = name, 1
        while candidate in taken:
            n += 1
            candidate = f"{name}.{n}"
        taken.add(candidate)
        prog.path = Path(candidate + ext)


def record(command: list[str], output: str | os.PathLike, keep_live: bool = False) -> Recording:
    """Run ``command`` under the recorder and write its traces (see module doc).

    Raises :class:`traces.preload.RecorderUnavailable` when the library cannot
    be built, OSError when the command cannot start, TraceError when nothing
    was recorded or a trace is past the limits.
    """
    folder = Path(output).parent
    if not folder.is_dir():   # say so before the program runs, not after
        raise TraceError(f"no such folder {str(folder)!r} for the trace", os.fspath(output))
    library = preload_library()
    raw_dir = tempfile.mkdtemp(prefix="heapscope-record-")
    try:
        returncode, pid = run_recorded(command, raw_dir, library)
        rec = read_recordings(raw_dir, pid, keep_live)
    finally:
        shutil.rmtree(raw_dir, ignore_errors=True)
    rec.status = exit_status(returncode)
    if rec.main is None:
        raise TraceError(
            f"nothing was recorded from {command[0]} (exit status {rec.status}): is it "
            "statically linked, or setuid? The recorder needs a dynamically linked "
            "program that calls malloc", None)
    output_paths(output, rec.programs)
    for prog in rec.programs:
        if prog.path is not None:
            write_rep(prog.trace, prog.path)
    return rec


def _human(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)


def summary_lines(rec: Recording) -> list[str]:
    """What ``heapscope record`` prints when it is done."""
    lines = []
    pids = {p.pid for p in rec.programs}
    lines.append(f"heapscope record: {len(pids)} process{'es' if len(pids) != 1 else ''}, "
                 f"{len(rec.programs)} program{'s' if len(rec.programs) != 1 else ''} run; "
                 f"exit status {rec.status}")
    shown = sorted(rec.programs, key=lambda p: not p.main)   # the main one first
    for prog in shown[:SUMMARY_PROGRAMS]:
        st = prog.trace.stats()
        what = "main " if prog.main else "     "
        origin = ""
        if prog.forked_from is not None:
            origin = f", forked from {prog.forked_from} (its first {prog.inherited:,} ops are the parent's)"
        elif prog.exec_index:
            origin = ", after exec"
        where = f"-> {prog.path}" if prog.path else "(no allocations of its own: not written)"
        lines.append(f"  {what}pid {prog.pid} {prog.program}: {len(prog.trace):,} ops, peak live "
                     f"{_human(st['max_live_bytes'])} in {st['max_live_blocks']:,} blocks"
                     f"{origin} {where}")
    if len(shown) > SUMMARY_PROGRAMS:
        rest = shown[SUMMARY_PROGRAMS:]
        written = sum(p.path is not None for p in rest)
        lines.append(f"  ... and {len(rest)} more programs ({written} written beside the main trace)")
    unknown = sum(p.counts.unknown_frees for p in rec.programs)
    missed = sum(p.counts.missed_frees for p in rec.programs)
    unknown_re = sum(p.counts.unknown_reallocs for p in rec.programs)
    if unknown:
        lines.append(f"  dropped {unknown:,} frees of blocks allocated before recording began")
    if unknown_re:
        lines.append(f"  {unknown_re:,} reallocs of blocks from before recording began became allocations")
    if missed:
        lines.append(f"  {missed:,} addresses came back while still live (a free the recorder "
                     f"did not see): freed there")
    for pid in rec.torn:
        lines.append(f"  the recording of pid {pid} ends mid-record (disk full?); its last "
                     f"record was dropped")
    return lines
