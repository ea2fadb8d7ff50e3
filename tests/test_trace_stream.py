"""Traces read as bounded streams: gzip bombs, /dev/zero, FIFOs, the limits,
and blocks cut anywhere (traces.source with traces.rep).

Memory is measured with a limit, not a timer: the endless inputs are read by
``heapscope check`` in a subprocess whose address space is capped at
MEMORY_CAP, far below what the input would inflate to.  (The subprocess
timeout is only a safety net against a hang.)
"""

from __future__ import annotations

import functools
import gzip
import os
import resource
import subprocess
import sys
import threading
import time

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from heapscope.traces import (DEFAULT_LIMITS, ReadCancelled, ReadLimits, Trace, TraceError,
                              load_trace, parse_rep, read_rep, write_rep)
from heapscope.traces import source as source_module
from tests.depth import deep, pick
from tests.test_rep import FORM_OPS, FORMS, assert_same_ops, mutated_rep_texts

#: address space of the reading subprocess: Python + numpy take about 100 MB of it
MEMORY_CAP = 256 << 20
GIB = 1 << 30


def _cap() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))


def run_capped(*args: str) -> subprocess.CompletedProcess:
    """``python -m heapscope ARGS`` with its address space capped at MEMORY_CAP."""
    return subprocess.run([sys.executable, "-m", "heapscope", *args], capture_output=True,
                          text=True, preexec_fn=_cap, timeout=120)


def read_capped(path, **limits: int) -> subprocess.CompletedProcess:
    """``read_rep(path)`` with limits (ReadLimits' fields), under MEMORY_CAP,
    reporting as the command does (the default byte limit, 2 GiB, would take
    long to reach)."""
    code = ("import sys\n"
            "from heapscope.traces import ReadLimits, TraceError, read_rep\n"
            "try:\n"
            f"    read_rep(sys.argv[1], limits=ReadLimits(**{limits!r}))\n"
            "except TraceError as e:\n"
            "    print(f'heapscope: error: {e}', file=sys.stderr)\n"
            "    sys.exit(2)\n")
    return subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True,
                          text=True, preexec_fn=_cap, timeout=120)


def assert_refused(result: subprocess.CompletedProcess, where: str, message: str) -> None:
    """Exit status 2 and one line ``heapscope: error: WHERE: ...MESSAGE...``."""
    assert "Traceback" not in result.stderr and "MemoryError" not in result.stderr, result.stderr
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith(f"heapscope: error: {where}"), result.stderr
    assert message in result.stderr


def gzip_repeated(path, head: bytes, piece: bytes, times: int) -> None:
    """A gzip file inflating to head + piece * times, made fast: one member
    per piece, all alike (a gzip file may hold many members, read as one)."""
    member = gzip.compress(piece, compresslevel=9, mtime=0)
    with open(path, "wb") as f:
        f.write(gzip.compress(head, mtime=0))
        for _ in range(times):
            f.write(member)


# --- endless and inflating input, under a memory cap -----------------------------

def test_the_memory_cap_is_tight_enough_to_catch_a_whole_file_read(tmp_path):
    """The old reader's way (inflate the whole file) dies under MEMORY_CAP."""
    bomb = tmp_path / "zeros.gz"
    gzip_repeated(bomb, b"", bytes(16 << 20), 64)
    code = ("import gzip, resource; resource.setrlimit(resource.RLIMIT_AS, (%d, %d)); "
            "gzip.decompress(open(%r, 'rb').read())" % (MEMORY_CAP, MEMORY_CAP, str(bomb)))
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode != 0 and "MemoryError" in result.stderr


def test_a_gzip_bomb_of_zeros_stops_at_the_line_limit(tmp_path):
    bomb = tmp_path / "zeros.rep.gz"         # 1 MB inflating to 1 GiB of zero bytes
    gzip_repeated(bomb, b"", bytes(16 << 20), GIB // (16 << 20))
    assert os.path.getsize(bomb) < 2 << 20
    assert_refused(run_capped("check", str(bomb)), f"{bomb}:1: ",
                   "line longer than 1 MiB, the longest heapscope reads")


def test_a_gzip_bomb_of_blank_lines_stops_at_the_byte_limit(tmp_path):
    """The deep suite: 320 MiB of text against a 256 MiB limit, which the
    cap could not hold beside Python.  The quick one: 80 MiB against 64 MiB
    (1.9 -> 0.5 CPU-s); the text held whole fits under the cap then, but a
    list entry kept per blank line (67 million: 512 MiB) does not, and
    test_a_gzip_bomb_of_zeros_stops_at_the_line_limit inflates 1 GiB."""
    bomb = tmp_path / "blank.rep"            # a .rep name: gzip is known by its magic bytes
    limit, shown = pick((64 << 20, "64 MiB of text (67,108,864 bytes)"),
                        (256 << 20, "256 MiB of text (268,435,456 bytes)"))
    gzip_repeated(bomb, b"0\n1\n0\n1\n", b"\n" * (16 << 20), (limit >> 24) * 5 // 4)
    assert_refused(read_capped(bomb, max_bytes=limit), f"{bomb}:",
                   f"more than {shown}, the most heapscope reads")


def test_dev_zero_stops_with_a_message():
    assert_refused(run_capped("check", "/dev/zero"), "/dev/zero:1: ",
                   "line longer than 1 MiB")


def deadline(seconds: float = 20.0):
    """A cancel hook that turns true after ``seconds``: a read of a FIFO that
    would wait forever fails the test (ReadCancelled) instead of hanging it."""
    end = time.monotonic() + seconds
    return lambda: time.monotonic() > end


def write_all(out, data: bytes) -> None:
    """All of ``data`` into an unbuffered file: a raw write to a pipe may take
    only part of it (a signal arriving mid-write: the profiler's, once), and
    the rest, dropped, left a line cut in two for the reader to reject."""
    view = memoryview(data)
    while view:
        view = view[out.write(view):]


class FifoWriter(threading.Thread):
    """Writes ``head`` then ``piece`` forever (or ``times`` times) into a new
    FIFO at ``path``, pausing ``pause`` s between pieces; stops when the reader
    goes away."""

    def __init__(self, path, head: bytes, piece: bytes = b"", times: int | None = None,
                 pause: float = 0.0) -> None:
        super().__init__(daemon=True)
        os.mkfifo(path)
        self.path, self.head, self.piece, self.times, self.pause = path, head, piece, times, pause
        self.written = 0
        self.reader_left = False
        self.stop = threading.Event()

    def run(self) -> None:
        try:
            with open(self.path, "wb", buffering=0) as out:
                write_all(out, self.head)
                n = 0
                while not self.stop.is_set() and (self.times is None or n < self.times):
                    write_all(out, self.piece)
                    self.written += len(self.piece)
                    n += 1
                    if self.pause:
                        time.sleep(self.pause)
        except BrokenPipeError:
            self.reader_left = True

    def __enter__(self) -> "FifoWriter":
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop.set()
        if self.is_alive():
            # a writer still blocked in open(): let it in, then it sees stop
            try:
                fd = os.open(self.path, os.O_RDONLY | os.O_NONBLOCK)
                os.close(fd)
            except OSError:
                pass
        self.join(10)


def test_an_endless_fifo_of_valid_ops_stops_at_the_op_limit(tmp_path):
    """The deep suite: ``heapscope check`` at its own limit, 10 million
    operations (1.9 CPU-s).  The quick one reads the FIFO under a limit of 2
    million (read_capped): packed, they fit under the cap; an object per
    operation (about 100 bytes each) does not."""
    fifo = tmp_path / "endless"
    with FifoWriter(fifo, b"0 1 4 1\n", b"a 0 8\nf 0\n" * 6554) as writer:
        if deep():
            result, most = run_capped("check", str(fifo)), 10_000_000
        else:
            most = 2_000_000
            result = read_capped(fifo, max_ops=most)
    assert_refused(result, f"{fifo}:{most + 2}: ",
                   f"more than {most:,} operations, the most heapscope reads")
    assert writer.reader_left


def test_an_endless_fifo_without_line_ends_stops_at_the_line_limit(tmp_path):
    fifo = tmp_path / "endless"
    with FifoWriter(fifo, b"0 1 4 1\na 0 8 ", b"x" * 65536) as writer:
        result = run_capped("check", str(fifo))
    assert_refused(result, f"{fifo}:2: ", "line longer than 1 MiB")
    assert writer.reader_left


def test_a_bad_line_in_an_endless_fifo_is_reported_when_reached(tmp_path):
    """The writer never stops, so the read can only end at the bad line."""
    fifo = tmp_path / "endless"
    head = b"0\n10\n2\n1\n" + b"a 0 8\nf 0\n" * 50_000 + b"a 0 8 9\n"
    with FifoWriter(fifo, head, b"a 0 8\nf 0\n" * 100, pause=0.01):
        with pytest.raises(TraceError) as info:
            read_rep(fifo, cancel=deadline())
    assert info.value.line == 4 + 100_000 + 1
    assert "wrong number of fields: 'a' takes 2 (a id bytes), found 3" in info.value.message


# --- FIFOs and devices that hold a trace -----------------------------------------

@pytest.mark.parametrize("packed", [False, True])
def test_a_fifo_fed_a_trace_in_small_pieces_is_read(tmp_path, packed):
    text, lines = FORMS[5]                  # CR-only, several ops a line
    data = gzip.compress(text.encode()) if packed else text.encode()
    fifo = tmp_path / "trace"

    class Trickle(FifoWriter):
        def run(self):
            with open(self.path, "wb", buffering=0) as out:
                for i in range(len(data)):   # one byte at a time: the gzip magic, CR, ...
                    out.write(data[i:i + 1])
                    time.sleep(0.001)

    with Trickle(fifo, b""):
        t = read_rep(fifo, cancel=deadline())
    assert list(t) == FORM_OPS and list(t.line_numbers) == lines
    assert t.source == str(fifo)


def test_a_fifo_without_a_writer_can_be_cancelled(tmp_path):
    fifo = tmp_path / "silent"
    os.mkfifo(fifo)
    asked = []

    def cancel():
        asked.append(time.monotonic())
        return len(asked) > 3

    with pytest.raises(ReadCancelled):
        read_rep(fifo, cancel=cancel)
    # it was asked while waiting, at the poll interval, not only between chunks
    assert len(asked) == 4


def test_dev_null_is_an_empty_file():
    with pytest.raises(TraceError) as info:
        load_trace("/dev/null")
    assert (info.value.path, info.value.line) == ("/dev/null", 1)
    assert "expected 4 integers" in info.value.message and "ends after 0" in info.value.message


def test_gzip_is_known_by_its_magic_bytes(tmp_path):
    t = Trace.from_ops(FORM_OPS)
    path = tmp_path / "packed.rep.gz"
    write_rep(t, path)
    renamed = tmp_path / "packed.rep"
    os.rename(path, renamed)
    assert_same_ops(read_rep(renamed), t)


def test_progress_reports_the_bytes_read(tmp_path):
    from tests.test_rep import rep_text
    path = tmp_path / "big.rep"
    path.write_text(rep_text("\n".join(f"a {i} 8\nf {i}" for i in range(200_000)), num_ids=200_000))
    size = os.path.getsize(path)
    seen = []
    read_rep(path, progress=lambda done, total: seen.append((done, total)))
    assert len(seen) >= size // source_module.CHUNK_BYTES
    assert all(total == size for _, total in seen)
    assert [d for d, _ in seen] == sorted(d for d, _ in seen) and seen[-1][0] == size


# --- a bad line deep in a large file ------------------------------------------------

@functools.cache
def large_ops(n: int) -> tuple[str, ...]:
    """n mallocs then their n frees, one line each: made once for the three
    line ends below (each test copies it before putting its bad line in)."""
    return tuple([f"a {i} {i % 1000 + 1}" for i in range(n)] + [f"f {i}" for i in range(n)])


@pytest.mark.parametrize("end, packed", [("\n", False), ("\r", False), ("\r\n", True)])
def test_a_bad_line_deep_in_a_large_file_names_its_line(tmp_path, end, packed):
    n = 400_000            # ~5 MB: the bad line is blocks away from the start
    ops = list(large_ops(n))
    bad_at = 4 + 654_321   # 1-based line of the bad op
    ops[bad_at - 5] = "a 12 x"
    text = end.join(["0", str(n), str(2 * n), "1"] + ops) + end
    path = tmp_path / ("big.rep.gz" if packed else "big.rep")
    # packed at gzip's fastest level: the reader inflates any level alike
    path.write_bytes(gzip.compress(text.encode(), compresslevel=1) if packed else text.encode())
    with pytest.raises(TraceError) as info:
        read_rep(path)
    assert (info.value.path, info.value.line) == (str(path), bad_at)
    assert info.value.message == "expected an integer size in bytes, got 'x'"


# --- the limits, each named in its message ------------------------------------------

def test_the_default_limits_are_the_documented_ones():
    from heapscope.traces import limits
    assert DEFAULT_LIMITS == ReadLimits(max_bytes=limits.MAX_INPUT_BYTES,
                                        max_line=limits.MAX_LINE_BYTES,
                                        max_ops=limits.MAX_OPS, max_ids=limits.MAX_IDS)
    assert (limits.MAX_INPUT_BYTES, limits.MAX_LINE_BYTES, limits.MAX_OPS, limits.MAX_IDS) == \
        (2 << 30, 1 << 20, 10_000_000, 2**31 - 1)     # as README.md states them


LIMIT_CASES = [
    # (limits, text, line, message)
    (ReadLimits(max_ops=3), "0\n10\n4\n1\n", 3,
     "header: num_ops = 4: more than 3 operations, the most heapscope reads"),
    # a header that says less than the file holds: stopped at the 4th op
    (ReadLimits(max_ops=3), "0\n10\n2\n1\na 0 8\nf 0\na 1 8\nf 1\na 2 8\n", 8,
     "more than 3 operations, the most heapscope reads"),
    (ReadLimits(max_ids=9), "0\n10\n0\n1\n", 2,
     "header: num_ids = 10 is more than 9, the most heapscope reads"),
    # the line holding the 101st byte: 4 header lines and 9 comments come before
    (ReadLimits(max_bytes=100), "0\n10\n2\n1\n" + "# comment\n" * 20 + "a 0 8\nf 0\n", 14,
     "more than 100 bytes of text, the most heapscope reads"),
    (ReadLimits(max_line=64), "0\n10\n2\n1\na 0 8\n" + " " * 100 + "f 0\n", 6,
     "line longer than 64 bytes, the longest heapscope reads (is this a trace file?)"),
]


@pytest.mark.parametrize("limits, text, line, message", LIMIT_CASES)
def test_each_limit_gives_its_message(tmp_path, limits, text, line, message):
    path = tmp_path / "t.rep"
    path.write_text(text)
    with pytest.raises(TraceError) as info:
        read_rep(path, limits=limits)
    assert (info.value.line, info.value.message) == (line, message)
    # just under the limit, the same file is fine (or fails for another reason)
    roomier = ReadLimits(**{k: getattr(limits, k) * 4 if getattr(limits, k) !=
                            getattr(DEFAULT_LIMITS, k) else getattr(limits, k)
                            for k in ("max_bytes", "max_line", "max_ops", "max_ids")})
    try:
        read_rep(path, limits=roomier)
    except TraceError as e:
        assert "the most heapscope reads" not in e.message


def test_the_byte_limit_counts_compressed_input_too(tmp_path):
    """Empty gzip members inflate to nothing: the file itself is counted."""
    path = tmp_path / "members.rep.gz"
    with open(path, "wb") as f:
        f.write(gzip.compress(b"0 1 0 1\n"))
        empty = gzip.compress(b"", mtime=0)
        f.write(empty * 1000)
    with pytest.raises(TraceError, match="more than 10,000 bytes of text"):
        read_rep(path, limits=ReadLimits(max_bytes=10_000))
    assert len(read_rep(path)) == 0


# --- blocks cut anywhere read the same ------------------------------------------------

def _outcome(text):
    try:
        t = parse_rep(text, path="cut.rep")
    except TraceError as e:
        return ("error", e.line, e.message)
    return ("trace", t.kind.tolist(), t.ids.tolist(), t.sizes.tolist(), t.line_numbers.tolist())


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated_rep_texts(), st.sampled_from([1, 2, 3, 5, 8]))
def test_reading_in_tiny_chunks_gives_the_same_result(text, chunk):
    """Chunk edges fall inside tokens, between CR and LF, inside a BOM."""
    text = "\ufeff" + text if chunk == 2 else text
    whole = _outcome(text)
    saved = source_module.CHUNK_BYTES
    source_module.CHUNK_BYTES = chunk
    try:
        cut = _outcome(text)
    finally:
        source_module.CHUNK_BYTES = saved
    assert cut == whole


def test_tiny_chunks_of_the_forms(monkeypatch):
    monkeypatch.setattr(source_module, "CHUNK_BYTES", 1)
    for text, lines in FORMS:
        t = parse_rep(text)
        assert list(t) == FORM_OPS and list(t.line_numbers) == lines
    assert np.array_equal(parse_rep("\ufeff" + FORMS[0][0]).line_numbers, FORMS[0][1])


@pytest.mark.parametrize("chunk", [1, 7, 64, 1 << 20])
@pytest.mark.parametrize("at", [1, 5, 7])
def test_the_line_limit_is_exact_wherever_the_line_falls(monkeypatch, chunk, at):
    """A line of max_line bytes is read and one more byte is refused, whether
    the line starts a file, a read or sits inside one."""
    monkeypatch.setattr(source_module, "CHUNK_BYTES", chunk)
    lines = ["0", "10", "3", "1", "a 0 8", "a 1 8", "f 0"]

    def text(width):
        padded = list(lines)
        padded[at - 1] = padded[at - 1].ljust(width)
        return "\r\n".join(padded) + "\r\n"

    limits = ReadLimits(max_line=64)
    assert len(parse_rep(text(64), limits=limits)) == 3
    with pytest.raises(TraceError) as info:
        parse_rep(text(65), limits=limits)
    assert info.value.line == at and "line longer than 64 bytes" in info.value.message


def test_a_long_line_ending_a_read_with_a_cr_is_refused(monkeypatch):
    """The CR ending a read waits for the next byte; the line before it is
    still measured."""
    monkeypatch.setattr(source_module, "CHUNK_BYTES", 8)
    # the 10th read ends with the line's CR; after the 9th the line was short enough
    text = "0\r10\r1\r1\r" + "a 0 8".ljust(70) + "\r\nf 0\r\n"
    assert text[79] == "\r" and (79 + 1) % 8 == 0 and 79 - 8 - 9 < 64
    with pytest.raises(TraceError) as info:
        parse_rep(text, limits=ReadLimits(max_line=64))
    assert info.value.line == 5 and "line longer than 64 bytes" in info.value.message


def test_what_head_read_goes_through_the_same_checks(tmp_path):
    """A format sniffs the start of the file; the lines it saw are still
    measured and counted."""
    from heapscope.traces import open_source
    from heapscope.traces.rep import read_rep_source
    path = tmp_path / "short.rep"
    path.write_bytes(b"0\r\n10\r\n1\r\n1\r\n" + b"a 0 8".ljust(70) + b"\r\n")
    with open_source(path, limits=ReadLimits(max_line=64)) as source:
        assert source.head(10) == b"0\r\n10\r\n1\r\n"
        with pytest.raises(TraceError) as info:
            read_rep_source(source)
    assert info.value.line == 5 and "line longer than 64 bytes" in info.value.message
    with open_source(path) as source:
        source.head()
        assert list(read_rep_source(source)) == [(0, 0, 8)]


# --- every format reads from the same stream -------------------------------------

LTRACE_TEXT = (b"[pid 7] prog->malloc(24) = 0x1000\n"
               b"[pid 7] prog->realloc(0x1000, 48) = 0x2000\n"
               b"[pid 7] prog->free(0x2000) = <void>\n")


def test_ltrace_output_in_a_fifo_is_sniffed_and_read(tmp_path):
    """The sniffed first lines stay in the stream for the ltrace reader."""
    from heapscope.traces import read_trace_file
    fifo = tmp_path / "calls"
    with FifoWriter(fifo, LTRACE_TEXT[:10], LTRACE_TEXT[10:], times=1, pause=0.05):
        t = read_trace_file(fifo, cancel=deadline())
    assert [(int(k), int(i), int(s)) for k, i, s in t] == [(0, 0, 24), (2, 0, 48), (1, 0, 0)]
    assert list(t.line_numbers) == [1, 2, 3]


def test_endless_ltrace_noise_stops_at_the_line_limit(tmp_path):
    fifo = tmp_path / "calls"
    with FifoWriter(fifo, LTRACE_TEXT + b"the program prints ", b"x" * 65536) as writer:
        result = run_capped("check", str(fifo))
    assert_refused(result, f"{fifo}:4: ", "line longer than 1 MiB")
    assert writer.reader_left


def test_ltrace_output_obeys_the_byte_limit_with_its_line(tmp_path):
    from heapscope.traces import read_trace_file
    path = tmp_path / "calls.gz"
    text = LTRACE_TEXT + b"--- SIGCHLD ---\n" * 100_000
    path.write_bytes(gzip.compress(text))
    for chunk in (source_module.CHUNK_BYTES, 4096):
        source_module.CHUNK_BYTES, saved = chunk, source_module.CHUNK_BYTES
        try:
            with pytest.raises(TraceError) as info:
                read_trace_file(path, limits=ReadLimits(max_bytes=100_000))
        finally:
            source_module.CHUNK_BYTES = saved
        assert info.value.message == "more than 100,000 bytes of text, the most heapscope reads"
        # the line holding byte 100,001, wherever the reads end
        assert info.value.line == text[:100_000].count(b"\n") + 1
