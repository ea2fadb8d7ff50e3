"""``heapscope record``: run a program under the recorder and keep its traces.

The program runs with ``LD_PRELOAD`` set to the recorder library
(:mod:`heapscope.traces.preload`, C source in ``recorder.c``) and
``HEAPSCOPE_RECORD_DIR`` set to a temporary folder, where every process
appends fixed-size binary records to ``<pid>.hsr``.  When it has ended, each
file becomes one trace per program it ran (:func:`read_recordings`):

- a process that calls exec runs a new program on a new heap: the records
  after its START record go to a new trace;
- a forked child starts with its parent's heap, so its trace starts with the
  parent's operations up to the fork (the FORK record says how many records
  the parent had written), then goes on with its own;
- pointers become ids through :class:`heapscope.traces.pointer_trace.PointerTrace`.

The trace of the *main* program -- the last program run by the process
``record`` started, whose exit status ``record`` passes on -- is written to
the output file; every other program that allocated anything of its own gets
``OUT.<pid>.<program>.rep`` beside it.

Nothing the program did is lost, and nothing is left behind:

- ``-o`` is checked before the program runs (:func:`check_record_output`):
  its folder exists, and it names neither the program nor a file given as
  an argument; the traces are written through a temporary file and a
  rename (:mod:`heapscope.outputs`);
- a stop signal sent to heapscope goes to the program
  (:mod:`heapscope.traces.record_run`); what it recorded until it ended is written;
- a trace is never refused for its size after the program ran: the recorder
  stops at heapscope's limits (``traces/limits.py``) and says so at once,
  and the reader cuts each trace so that it keeps within them;
- a trace that does not hold everything the program did says so and why,
  in a ``#`` line at its end (after the operations, where the CS:APP
  driver, which reads a fixed count of them, never looks) and in the
  summary;
- the raw files live in a temporary folder removed whatever happens.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

from heapscope.outputs import OutputError, check_output, same_file
from heapscope.allocators.phrases import count

from .errors import TraceError
from .limits import MAX_INPUT_BYTES, MAX_OPS, MAX_SIZE
from .pointer_trace import PointerTrace, Snapshot
from .preload import preload_library
from .record_run import (LIMIT_BYTES, LIMIT_OPS, ProgramRun, Received, SignalRelay,
                         run_recorded, signal_name)
from .rep import format_rep, write_rep_bytes
from .trace import Trace

#: One record of the recorder's files (see recorder.c), native byte order.
RECORD = np.dtype([("kind", "=u4"), ("extra", "=u4"), ("a", "=u8"), ("b", "=u8"), ("c", "=u8")])
FORMAT_VERSION = 1
START, NAME, FORK, LIMIT = ord("S"), ord("N"), ord("K"), ord("L")
MALLOC, CALLOC, REALLOC, ALIGNED, FREE = (ord(c) for c in "MCRAF")
#: ops a record may add to a trace, and the frees at the end: a trace is cut
#: before a record that could take it past the limit
_MOST_OPS_A_RECORD_ADDS = 2
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
    #: why the trace stops before the program did: LIMIT_OPS or LIMIT_BYTES
    #: (a recorder limit), None if it holds everything recorded
    cut: int | None = None
    #: the process was still running when its recording was read
    still_running: bool = False
    #: allocations larger than a .rep may hold (MAX_SIZE), left out
    too_large: int = 0

    @property
    def own_ops(self) -> int:
        """The operations this program made itself."""
        return len(self.trace) - self.inherited - self.freed_at_end


@dataclass
class Recording:
    status: int
    programs: list[ProgramTrace] = field(default_factory=list)
    torn: list[int] = field(default_factory=list)   # pids whose file ends mid-record
    #: the main process's return code (negative: killed by that signal)
    returncode: int = 0
    #: stop signals heapscope received while the program ran, and after
    signals: list[Received] = field(default_factory=list)
    late_signals: list[Received] = field(default_factory=list)
    max_ops: int = MAX_OPS
    max_bytes: int = MAX_INPUT_BYTES

    @property
    def main(self) -> ProgramTrace | None:
        return next((p for p in self.programs if p.main), None)


# --- running ------------------------------------------------------------------

def exit_status(returncode: int) -> int:
    """A shell's exit status for a child's return code (killed by signal N: 128 + N)."""
    return 128 - returncode if returncode < 0 else returncode


def program_path(name: str, env: dict | None = None) -> str | None:
    """The file ``name`` runs, found as exec does: a name with a slash is a
    path, another is looked up on the PATH.  None if there is none."""
    if os.sep in name:
        return name if os.path.exists(name) else None
    path = (os.environ if env is None else env).get("PATH", os.defpath)
    return shutil.which(name, path=path)


def check_record_output(command: list[str], output: str | os.PathLike) -> None:
    """OutputError, before anything runs, if ``output`` cannot be written or
    would overwrite the program or a file named in its arguments."""
    check_output(output, what="trace")
    program = program_path(command[0])
    if program is not None and os.path.exists(output) and same_file(output, program):
        raise OutputError(f"{os.fspath(output)}: the trace would overwrite the program it "
                          f"records ({command[0]}); name another file")
    check_output(output, [a for a in command[1:] if os.path.exists(a)], what="trace")


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

    rec = Recording(status=0, max_ops=max_ops)
    snapshots: dict[tuple[int, int], tuple[Snapshot, int | None]] = {}
    # A trace is cut before a record that could take it (with the frees of
    # its live blocks at the end) past max_ops: the limit never refuses it.
    room = max_ops - _MOST_OPS_A_RECORD_ADDS
    for pid in order:
        path = files[pid]
        source = str(path)
        current: PointerTrace | None = None
        info: dict = {}
        cut = None
        programs_of_pid = 0
        want = wanted.get(pid, set())

        def finish(cur, inf, cut):
            trace = cur.finish(keep_live)
            rec.programs.append(ProgramTrace(
                pid=pid, parent=inf["parent"], program=inf["program"], trace=trace,
                inherited=inf["inherited"], forked_from=inf["forked_from"],
                exec_index=inf["exec_index"], counts=cur.counts,
                freed_at_end=0 if keep_live else cur.counts.live_at_end, cut=cut,
                too_large=inf["too_large"]))

        last_index = -1
        for index, kind, extra, a, b, c in _records(path):
            last_index = index
            if index in want and current is not None:
                snapshots[(pid, index)] = (current.snapshot(), cut)
            if kind == MALLOC or kind == CALLOC or kind == ALIGNED or kind == REALLOC:
                if cut is not None:
                    continue
                if len(current.kind) + len(current.live) > room:
                    cut = LIMIT_OPS
                elif c > MAX_SIZE:      # a .rep cannot hold it: left out, and counted
                    info["too_large"] += 1
                    if kind == REALLOC:
                        current.free(b)
                elif kind == REALLOC:
                    current.realloc(b, a, c)
                else:
                    current.alloc(a, c)
            elif kind == FREE:
                if cut is None:
                    current.free(a)
            elif kind == LIMIT:
                cut = cut or (LIMIT_BYTES if extra == LIMIT_BYTES else LIMIT_OPS)
            elif kind == NAME:
                info["program"] = _name_of(a, b, c)
                current.name = info["program"]
            elif kind == START or kind == FORK:
                if extra != FORMAT_VERSION:
                    raise TraceError(f"record {index}: recorder format {extra}, expected "
                                     f"{FORMAT_VERSION} (a recording from another heapscope?)",
                                     source)
                if current is not None:
                    finish(current, info, cut)
                cut = None
                if kind == FORK:
                    # the parent's heap at the fork, in the program it was running then
                    snap, cut = snapshots.get((b, c), (None, None))   # two children may share one
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
                info["too_large"] = 0
                programs_of_pid += 1
            else:
                raise TraceError(f"record {index}: unknown record kind {kind}", source)
        if last_index + 1 in want and current is not None:
            snapshots[(pid, last_index + 1)] = (current.snapshot(), cut)
        if current is not None:
            finish(current, info, cut)
            rec.programs[-1].still_running = pid != main_pid and _still_running(pid)
        if path.stat().st_size % RECORD.itemsize:
            rec.torn.append(pid)
    of_main = [p for p in rec.programs if p.pid == main_pid]
    if of_main:
        of_main[-1].main = True
    return rec


def _still_running(pid: int) -> bool:
    """Whether process ``pid`` is alive (a zombie has ended)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            state = f.read().rsplit(b")", 1)[-1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in (b"Z", b"X")


# --- output -------------------------------------------------------------------

def _split_ext(path: str) -> tuple[str, str]:
    low = path.lower()
    for ext in (".rep.gz", ".rep", ".gz"):
        if low.endswith(ext) and len(path) > len(ext):
            return path[: -len(ext)], path[-len(ext):]
    return path, ""


def output_paths(output: str | os.PathLike, programs: list[ProgramTrace],
                 avoid: list[str | os.PathLike] = ()) -> None:
    """Set ``path`` of each program to write: the main one to ``output``, the
    others to ``OUT.<pid>.<program>.rep`` (``.2`` and so on when one process
    ran the same program twice, or when the name is one of the files in
    ``avoid``: the program and its inputs).  Fork children with no operation
    of their own (most of them exec at once) and programs with no operation
    at all get no file."""
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
        while candidate in taken or any(os.path.exists(candidate + ext)
                                        and same_file(candidate + ext, a) for a in avoid):
            n += 1
            candidate = f"{name}.{n}"
        taken.add(candidate)
        prog.path = Path(candidate + ext)


def partial_notes(rec: Recording, prog: ProgramTrace) -> list[str]:
    """Why ``prog``'s trace does not hold everything the program did (empty
    if it does): each reason in a sentence."""
    notes = []
    if prog.main:
        notes += [got.describe() for got in rec.signals]
        if rec.returncode < 0:
            notes.append(f"the program was killed by {signal_name(-rec.returncode)}")
    if prog.cut == LIMIT_OPS:
        notes.append(f"the recording stopped at {rec.max_ops:,} operations, the most a trace "
                     "may have (traces/limits.py); the program went on unrecorded")
    elif prog.cut == LIMIT_BYTES:
        notes.append(f"the recorder's file reached {_human(rec.max_bytes)}, the most it may "
                     "hold (traces/limits.py); the program went on unrecorded")
    if prog.still_running:
        notes.append("the process was still running when heapscope record read its recording")
    return notes


def partial_line(notes: list[str]) -> str:
    """The ``#`` line a partial trace ends with."""
    return "# heapscope record: partial trace: " + "; ".join(notes)


def write_recorded(trace: Trace, path: str | os.PathLike, notes: list[str] = ()) -> None:
    """Write a recorded trace as a .rep (gzipped for a .gz name), atomically,
    with the partial line after the operations when there are ``notes``."""
    text = format_rep(trace)
    if notes:
        text += partial_line(notes) + "\n"
    write_rep_bytes(path, text.encode("utf-8", "replace"))


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def limit_message(pid: int, reason: int, program: str, max_ops: int, max_bytes: int) -> str:
    """What heapscope says, while the program runs, when a recording stops at a limit."""
    what = (f"{max_ops:,} operations, the most a trace may have" if reason == LIMIT_OPS
            else f"{_human(max_bytes)} of records, the most a recorder's file may hold")
    return (f"heapscope record: pid {pid} ({program}) reached {what} (traces/limits.py): "
            "its recording stops here and the program goes on; what was recorded will be "
            "written, marked partial")


def record(command: list[str], output: str | os.PathLike, keep_live: bool = False, *,
           max_ops: int = MAX_OPS, max_bytes: int = MAX_INPUT_BYTES,
           say: Callable[[str], None] = _say) -> Recording:
    """Run ``command`` under the recorder and write its traces (see module doc).

    ``say`` prints what heapscope has to say while the program runs (a
    recording stopped at a limit).  Raises OutputError (before anything runs)
    when ``output`` cannot or must not be written,
    :class:`heapscope.traces.preload.RecorderUnavailable` when the library cannot be
    built or checked, OSError when the command cannot start, TraceError when
    nothing was recorded or a raw file cannot be read.
    """
    check_record_output(command, output)
    library = preload_library()

    def on_limit(pid, reason, program):
        say(limit_message(pid, reason, program, max_ops, max_bytes))

    with SignalRelay() as relay:
        raw_dir = tempfile.mkdtemp(prefix="heapscope-record-")
        try:
            run: ProgramRun = run_recorded(command, raw_dir, library, max_ops=max_ops,
                                           max_bytes=max_bytes, relay=relay, on_limit=on_limit)
            try:
                rec = read_recordings(raw_dir, run.pid, keep_live, max_ops=max_ops)
            except TraceError as e:
                # the raw files go with their folder: say what, not where
                raise TraceError(f"the recording of {command[0]} cannot be read: {e.message} "
                                 f"(in a raw file, now removed, of pid {_pid_of(e.path)})",
                                 None) from None
        finally:
            shutil.rmtree(raw_dir, ignore_errors=True)
        rec.returncode = run.returncode
        rec.status = exit_status(run.returncode)
        rec.signals = run.signals
        rec.max_bytes = max_bytes
        if rec.main is None:
            raise TraceError(
                f"nothing was recorded from {command[0]} (exit status {rec.status}): is it "
                "statically linked, or setuid? The recorder needs a dynamically linked "
                "program that calls malloc", None)
        inputs = [p for p in [program_path(command[0])] + command[1:]
                  if p is not None and os.path.exists(p)]
        output_paths(output, rec.programs, avoid=inputs)
        for prog in rec.programs:
            if prog.path is not None:
                write_recorded(prog.trace, prog.path, partial_notes(rec, prog))
        rec.late_signals = [got for got in relay.received if not got.while_running]
    return rec


def _pid_of(path: str | None) -> str:
    stem = Path(path).stem if path else ""
    return stem if stem.isdigit() else "?"


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
    lines.append(f"heapscope record: {count(len(pids), ('process', 'processes'))}, "
                 f"{count(len(rec.programs), 'program')} run; "
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
        lines.append(f"  {what}pid {prog.pid} {prog.program}: {count(len(prog.trace), 'op', grouped=True)}, "
                     f"peak live {_human(st['max_live_bytes'])} in "
                     f"{count(st['max_live_blocks'], 'block', grouped=True)}"
                     f"{origin} {where}")
    if len(shown) > SUMMARY_PROGRAMS:
        rest = shown[SUMMARY_PROGRAMS:]
        written = sum(p.path is not None for p in rest)
        lines.append(f"  ... and {count(len(rest), 'more program')} ({written} written beside the main trace)")
    unknown = sum(p.counts.unknown_frees for p in rec.programs)
    missed = sum(p.counts.missed_frees for p in rec.programs)
    unknown_re = sum(p.counts.unknown_reallocs for p in rec.programs)
    if unknown:
        lines.append(f"  dropped {count(unknown, ('free of a block', 'frees of blocks'), grouped=True)} "
                     "allocated before recording began")
    if unknown_re:
        lines.append("  " + count(unknown_re, ("realloc of a block from before recording began became "
                                               "an allocation", "reallocs of blocks from before "
                                               "recording began became allocations"), grouped=True))
    if missed:
        lines.append("  " + count(missed, ("address came back", "addresses came back"), grouped=True)
                     + " while still live (a free the recorder did not see): freed there")
    for pid in rec.torn:
        lines.append(f"  the recording of pid {pid} ends mid-record (disk full?); its last "
                     f"record was dropped")
    too_large = sum(p.too_large for p in rec.programs)
    if too_large:
        lines.append("  " + count(too_large, ("allocation of more than 2**40 bytes was left out "
                                              "(a .rep cannot hold it)", "allocations of more than "
                                              "2**40 bytes were left out (a .rep cannot hold them)"),
                                   grouped=True))
    for prog in shown:
        notes = partial_notes(rec, prog)
        if notes and prog.path is not None:
            lines.append(f"  partial: {prog.path} (pid {prog.pid} {prog.program}): "
                         + "; ".join(notes))
    for got in rec.late_signals:
        lines.append(f"  {signal_name(got.signum)} came after the program had ended: the "
                     "traces were written first")
    return lines
