"""The ltrace / villoc importer on sample text written for the test, content
sniffing, and ``heapscope convert``."""

from __future__ import annotations

import gzip

import re

import pytest

from heapscope.cli import main
from heapscope.traces import (ReadLimits, TraceError, load_trace, read_rep, read_trace_file,
                              sniff_file)
from heapscope.traces.ltrace import import_ltrace, read_ltrace


def ops(trace):
    letters = "afr"
    return [(letters[k], i) if k == 1 else (letters[k], i, s) for k, i, s in trace]


def write(tmp_path, text: str, name: str = "trace.txt"):
    path = tmp_path / name
    path.write_text(text)
    return path


# Two threads of one program under `ltrace -f -e malloc+free+calloc+realloc`:
# calls interrupted by the other thread's, an address freed by one thread and
# handed to the other before the free returned, and one taken while a realloc
# was moving away from it; ltrace's own lines and the program's output between.
THREADS = """\
[pid 4100] prog->malloc(16)                           = 0x5000
[pid 4100] prog->calloc(4, 8)                         = 0x5020
[pid 4101] prog->malloc(100 <unfinished ...>
[pid 4100] prog->free(0x5000 <unfinished ...>
[pid 4101] <... malloc resumed> )                     = 0x5000
[pid 4100] <... free resumed> )                       = <void>
[pid 4100] prog->realloc(0x5020, 64 <unfinished ...>
[pid 4101] libc.so.6->malloc(24)                      = 0x5020
[pid 4100] <... realloc resumed> )                    = 0x6000
[pid 4100] --- SIGCHLD (Child exited) ---
hello from the program
[pid 4101] prog->free(0x5000)                         = <void>
[pid 4101] +++ exited (status 0) +++
[pid 4100] prog->free(0x7777)                         = <void>
[pid 4100] prog->malloc(18446744073709551615)         = nil
[pid 4100] prog->realloc(0x6000, 0)                   = nil
[pid 4100] +++ exited (status 0) +++
"""
THREADS_OPS = [("a", 0, 16), ("a", 1, 32), ("f", 0), ("a", 2, 100), ("a", 3, 24),
               ("r", 1, 64), ("f", 2), ("f", 1),
               ("f", 3)]                       # still live at the end: freed there
THREADS_LINES = [1, 2, 4, 5, 8, 9, 12, 16, 17]


def test_interleaved_f_output_with_resumed_calls(tmp_path):
    path = write(tmp_path, THREADS)
    trace, counts, pointer_counts = import_ltrace(path)
    assert ops(trace) == THREADS_OPS
    assert trace.line_numbers.tolist() == THREADS_LINES
    assert counts.pids == {4100, 4101}
    assert counts.failed == 1                    # malloc(SIZE_MAX) = nil
    assert pointer_counts.unknown_frees == 1     # free(0x7777): never allocated
    assert pointer_counts.missed_frees == 0


def test_the_same_calls_written_with_o_have_bare_pid_prefixes(tmp_path):
    text = THREADS.replace("[pid 4100] ", "4100 ").replace("[pid 4101] ", "4101 ")
    assert ops(read_ltrace(write(tmp_path, text))) == THREADS_OPS


def test_keep_live_and_one_pid(tmp_path):
    path = write(tmp_path, THREADS)
    assert ops(read_ltrace(path, keep_live=True)) == THREADS_OPS[:-1]
    # 4101 alone: the block it got from 4100's heap is its own
    assert ops(read_ltrace(path, pids=[4101])) == [("a", 0, 100), ("a", 1, 24), ("f", 0), ("f", 1)]
    with pytest.raises(TraceError, match="no malloc, calloc, realloc or free call of pid 9"):
        read_ltrace(path, pids=[9])


def test_plain_ltrace_with_time_stamps_and_instruction_pointers(tmp_path):
    text = """\
07:38:25.150773 [0x5586494ff221] malloc(10)                       = 0x55866c8382a0
07:38:25.151083 [0x5586494ff277] posix_memalign(0x7ffe46934d18, 64, 100, 0) = 0
07:38:25.151083 [0x5586494ff277] puts("hello")                      = 6
07:38:25.151542 [0x5586494ff2af] realloc(0x55866c8382a0, 300)     = 0x55866c838400
07:38:25.151542 [0x5586494ff2af] realloc(0, 40)                   = 0x55866c838000
07:38:25.151542 [0x5586494ff2af] free(0x55866c838400)              = <void>
  0.000257 memalign(64, 128)                                       = 0x55866c839000
  0.000257 aligned_alloc(256, 512)                                 = 0x55866c83a000
  0.000257 valloc(4000)                                            = 0x55866c83b000
  0.000257 reallocarray(0x55866c83b000, 10, 20)                    = 0x55866c83c000
  0.000257 exit(0 <no return ...>
+++ exited (status 0) +++
"""
    trace, counts, _ = import_ltrace(write(tmp_path, text))
    assert ops(trace) == [("a", 0, 10), ("r", 0, 300), ("a", 1, 40), ("f", 0), ("a", 2, 128),
                          ("a", 3, 512), ("a", 4, 4000), ("r", 4, 200),
                          ("f", 1), ("f", 2), ("f", 3), ("f", 4)]
    assert counts.posix_memalign == 1


def test_villoc_tracer_output_and_annotations(tmp_path):
    # the syntax villoc's Pin and DynamoRIO tracers write (calloc's size in hex)
    text = """\
@villoc(setup, A) = <void>
malloc(32) = 0x602010
calloc(3,0x10) = 0x602040
free(0x602010) = <void>
realloc(0x602040,100) = 0x602080
free((nil)) = <void>
"""
    assert ops(read_ltrace(write(tmp_path, text))) == [("a", 0, 32), ("a", 1, 48), ("f", 0),
                                                       ("r", 1, 100), ("f", 1)]


def test_a_realloc_cut_before_its_last_argument_is_put_together(tmp_path):
    text = """\
[pid 1] prog->malloc(8) = 0x10
[pid 1] prog->realloc(0x10, <unfinished ...>
[pid 2] prog->malloc(5) = 0x30
[pid 1] <... realloc resumed> 64) = 0x20
"""
    assert ops(read_ltrace(write(tmp_path, text))) == [("a", 0, 8), ("a", 1, 5), ("r", 0, 64),
                                                       ("f", 0), ("f", 1)]


@pytest.mark.parametrize("line, message", [
    ("malloc(abc) = 0x10", "2: malloc: expected a number for size, got 'abc'"),
    ("free(0x10, 3) = <void>", "2: free takes 1 argument, found 2"),
    ("calloc(4) = 0x10", "2: calloc takes 2 arguments, found 1"),
    ("malloc(2000000000000) = 0x10", "2: absurd size 2000000000000"),
    ("[pid 3] malloc(8) = zzz", "2: malloc: expected a number for the result, got 'zzz'"),
])
def test_bad_lines_are_reported_with_file_and_line(tmp_path, line, message):
    path = write(tmp_path, "malloc(1) = 0x1\n" + line + "\n")
    with pytest.raises(TraceError) as err:
        read_ltrace(path)
    assert str(err.value) == f"{path}:{message}" or str(err.value).startswith(f"{path}:{message}")


def test_a_line_too_long_is_refused_without_reading_it_all(tmp_path):
    path = write(tmp_path, "malloc(1) = 0x1\n" + "x" * 1000 + "\n")
    with pytest.raises(TraceError, match=r":2: line longer than 100 bytes"):
        read_ltrace(path, limits=ReadLimits(max_line=100))


def test_an_endless_stream_of_noise_stops_at_the_byte_limit(tmp_path):
    path = write(tmp_path, "malloc(1) = 0x1\n" + "--- SIGCHLD (Child exited) ---\n" * 1000)
    with pytest.raises(TraceError, match="more than 10,000 bytes of text"):
        read_ltrace(path, limits=ReadLimits(max_bytes=10_000))


def test_too_many_operations_are_refused(tmp_path):
    path = write(tmp_path, "".join(f"malloc(8) = {0x10 * (i + 1):#x}\n" for i in range(20)))
    with pytest.raises(TraceError, match="more than 10 operations"):
        read_ltrace(path, max_ops=10)


# --- chosen by content --------------------------------------------------------

def test_the_reader_is_chosen_by_content_not_by_name(tmp_path):
    ltrace_named_rep = write(tmp_path, THREADS, "looks.rep")
    rep_named_txt = write(tmp_path, "0\n2\n3\n1\na 0 10\na 1 20\nf 0\n", "looks.txt")
    assert sniff_file(ltrace_named_rep) == "ltrace"
    assert sniff_file(rep_named_txt) == "rep"
    assert ops(read_trace_file(ltrace_named_rep)) == THREADS_OPS
    assert ops(read_trace_file(rep_named_txt)) == [("a", 0, 10), ("a", 1, 20), ("f", 0)]
    assert ops(load_trace(str(ltrace_named_rep))) == THREADS_OPS
    gz = tmp_path / "calls.gz"
    gz.write_bytes(gzip.compress(THREADS.encode()))
    assert ops(read_trace_file(gz)) == THREADS_OPS


def test_a_bad_rep_keeps_the_rep_readers_message(tmp_path):
    path = write(tmp_path, "0\n1\n1\n1\nx 0 10\n", "bad.txt")
    with pytest.raises(TraceError, match=r"bad.txt:5: unknown operation 'x'"):
        read_trace_file(path)


# --- heapscope convert --------------------------------------------------------

def test_convert_writes_a_rep_that_reads_back_the_same(tmp_path, capsys):
    src = write(tmp_path, THREADS)
    out = tmp_path / "out.rep"
    assert main(["convert", str(src), "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert "9 ops" in err
    assert "2 pids in one heap (4100, 4101)" in err
    assert "1 free of a pointer never seen allocated: dropped" in err
    assert "1 call that returned NULL" in err
    assert ops(read_rep(out)) == THREADS_OPS
    assert main(["convert", str(src), "-o", str(out), "--pid", "4101", "--keep-live"]) == 0
    assert ops(read_rep(out)) == [("a", 0, 100), ("a", 1, 24), ("f", 0)]


def test_convert_reports_a_bad_line_and_exits_2(tmp_path, capsys):
    src = write(tmp_path, "malloc(1) = 0x1\nfree(0x1, 2) = <void>\n")
    assert main(["convert", str(src), "-o", str(tmp_path / "o.rep")]) == 2
    assert f"{src}:2: free takes 1 argument" in capsys.readouterr().err
    assert not (tmp_path / "o.rep").exists()


def test_convert_pid_on_a_rep_is_refused(tmp_path, capsys):
    src = write(tmp_path, "0\n1\n1\n1\na 0 10\n", "t.rep")
    assert main(["convert", str(src), "-o", str(tmp_path / "o.rep"), "--pid", "3"]) == 2
    assert "ltrace" in capsys.readouterr().err


def test_a_pipe_is_not_read_twice_to_sniff_it(tmp_path):
    import os
    import threading
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)

    def feed():
        with open(fifo, "w") as f:
            f.write("0\n2\n3\n1\na 0 10\na 1 20\nf 0\n")

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    assert ops(read_trace_file(fifo)) == [("a", 0, 10), ("a", 1, 20), ("f", 0)]
    writer.join(5)


# --- calls that never resume ---------------------------------------------------
def _unfinished_text(n: int, pids: int) -> str:
    """n malloc calls cut by "<unfinished ...>" that never resume, spread
    over ``pids`` threads, each thread's first call between two that do return."""
    lines = ["[pid 1] prog->malloc(8) = 0x10"]
    lines += [f"[pid {2 + i % pids}] prog->malloc({16 + i % 7} <unfinished ...>" for i in range(n)]
    lines.append("[pid 1] prog->free(0x10) = <void>")
    return "\n".join(lines) + "\n"


def _fed(text: str):
    """A reader fed ``text`` line by line, and the most calls it held in flight."""
    from heapscope.traces.ltrace import _Reader
    reader = _Reader("gen.txt", None, False)
    most = 0
    for lineno, raw in enumerate(text.encode().splitlines(), 1):
        reader.feed(raw, lineno)
        most = max(most, sum(map(len, reader.pending.values())))
    return reader, most


def _fed_bounds(text: str):
    """A reader fed ``text`` line by line, the most pids it held calls in
    flight for, and the longest stack of calls in flight one pid had.

    The same bound as ``_fed``'s sum, read in constant time a line: a line
    adds a call to its own pid's stack only, so that stack, read after each
    line, is every stack at its longest, and the calls in flight are never
    more than the pids times the longest stack.  (Summing every stack after
    each of 60 000 lines over 4 096 pids took 7 CPU-s.)"""
    from heapscope.traces.ltrace import _Reader
    reader = _Reader("gen.txt", None, False)
    pid_of = re.compile(rb"^\[pid (\d+)\]")
    most_pids = longest = 0
    for lineno, raw in enumerate(text.encode().splitlines(), 1):
        reader.feed(raw, lineno)
        most_pids = max(most_pids, len(reader.pending))
        longest = max(longest, len(reader.pending.get(int(pid_of.match(raw)[1]), ())))
    return reader, most_pids, longest


@pytest.mark.parametrize("pids", [1, 10_000])
def test_calls_that_never_resume_are_bounded_in_memory_and_counted(pids):
    from heapscope.traces.ltrace import MAX_NESTED_CALLS, MAX_PENDING_PIDS
    n = 60_000
    reader, most_pids, longest = _fed_bounds(_unfinished_text(n, pids))
    # never more in flight than the bounds allow, whatever the input's length
    assert most_pids <= min(pids, MAX_PENDING_PIDS)
    assert longest <= MAX_NESTED_CALLS
    assert most_pids * longest < n // 10
    trace = reader.end(n + 2)
    assert reader.counts.never_resumed == n
    assert not reader.pending
    assert ops(trace) == [("a", 0, 8), ("f", 0)]


def test_a_realloc_that_never_resumes_gives_its_block_back():
    # the second unfinished call of pid 1 is past the bound: the realloc's 0x10
    # is the program's again, freed at the end as any block still live
    text = "[pid 1] prog->malloc(8) = 0x10\n[pid 1] prog->realloc(0x10, 64 <unfinished ...>\n" + \
        "".join(f"[pid 1] prog->free(0x{0x100 + i:x} <unfinished ...>\n" for i in range(4))
    reader, _ = _fed(text)
    assert reader.counts.never_resumed == 1
    assert ops(reader.end(6)) == [("a", 0, 8), ("f", 0)]


def test_nested_unfinished_calls_of_one_thread_still_resume():
    text = """\
[pid 1] prog->realloc(0x0, 32 <unfinished ...>
[pid 1] prog->malloc(8 <unfinished ...>
[pid 2] prog->malloc(5) = 0x30
[pid 1] <... malloc resumed> ) = 0x10
[pid 1] <... realloc resumed> ) = 0x20
"""
    reader, _ = _fed(text)
    assert ops(reader.end(5)) == [("a", 0, 5), ("a", 1, 8), ("a", 2, 32),
                                  ("f", 0), ("f", 1), ("f", 2)]
    assert reader.counts.never_resumed == 0


def test_convert_names_the_calls_that_never_resumed(tmp_path, capsys):
    src = write(tmp_path, _unfinished_text(500, 3))
    out = tmp_path / "out.rep"
    assert main(["convert", str(src), "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert "500 calls left unfinished" in err
    # calls still waiting at the end of the file count too
    src = write(tmp_path, "[pid 1] prog->malloc(8) = 0x10\n[pid 2] prog->malloc(9 <unfinished ...>\n",
                "end.txt")
    assert main(["convert", str(src), "-o", str(out)]) == 0
    assert "1 call left unfinished (no \"<... resumed>\"): its allocation left out" in \
        capsys.readouterr().err


# --- what an import left out, in words -----------------------------------------
# One line of each kind convert reports, counted by hand: pids 1 and 2; a free of
# 0x99 and a realloc of 0x77, never allocated; 0x10 returned again while live;
# one NULL; two posix_memalign; a resumption with no start; a malloc that never
# returned; pid 2's malloc(9) still unfinished at the end.
EVERY_SKIP = """\
[pid 1] prog->malloc(8) = 0x10
[pid 2] prog->free(0x99) = <void>
[pid 1] prog->realloc(0x77, 16) = 0x20
[pid 1] prog->malloc(8) = 0x10
[pid 1] prog->malloc(4) = nil
[pid 1] prog->posix_memalign(0x7ffe0, 64, 100) = 0
[pid 2] prog->posix_memalign(0x7ffe8, 64, 200) = 0
[pid 1] <... malloc resumed> ) = 0x40
[pid 1] prog->malloc(5 <no return ...>
[pid 2] prog->malloc(9 <unfinished ...>
"""


def test_skipped_lines_names_every_kind_of_call_left_out(tmp_path):
    from heapscope.traces.ltrace import skipped_lines
    trace, counts, pointer_counts = import_ltrace(write(tmp_path, EVERY_SKIP))
    assert ops(trace) == [("a", 0, 8), ("a", 1, 16), ("f", 0), ("a", 2, 8), ("f", 1), ("f", 2)]
    assert skipped_lines(counts, pointer_counts) == [
        "2 pids in one heap (1, 2): ltrace cannot tell threads from processes; --pid keeps one",
        "1 free of a pointer never seen allocated: dropped",
        "1 realloc of a pointer never seen allocated: taken as an allocation",
        "1 address returned again while live: the old block freed there",
        "1 call that returned NULL: left out",
        "2 posix_memalign calls (ltrace does not show the block): left out",
        "1 resumed call whose start is not in the file: left out",
        "1 call that never returned",
        '1 call left unfinished (no "<... resumed>"): its allocation left out',
    ]


def test_check_counts_what_the_import_left_out(tmp_path, capsys):
    # heapscope check on ltrace output says what convert says it left out:
    # the call of pid 2 that never resumed among them (issue 19)
    assert main(["check", str(write(tmp_path, EVERY_SKIP))]) == 0
    out = capsys.readouterr().out
    assert "OK, a valid trace" in out
    notes = out.split("  import notes:\n", 1)[1].splitlines()
    assert notes[0] == "    2 pids in one heap (1, 2): ltrace cannot tell threads from processes; --pid keeps one"
    assert '    1 call left unfinished (no "<... resumed>"): its allocation left out' in notes
    assert "    2 posix_memalign calls (ltrace does not show the block): left out" in notes
    assert len(notes) == 9
    # thousands grouped, plural: 1,500 calls that never resumed
    assert main(["check", str(write(tmp_path, _unfinished_text(1500, 3), "many.txt"))]) == 0
    assert '    1,500 calls left unfinished (no "<... resumed>"): their allocations left out' in \
        capsys.readouterr().out.splitlines()


def test_check_of_a_rep_has_no_import_notes(tmp_path, capsys):
    path = tmp_path / "t.rep"
    path.write_text("0\n1\n2\n1\na 0 8\nf 0\n")
    assert main(["check", str(path)]) == 0
    assert "import notes" not in capsys.readouterr().out


def test_a_file_with_no_call_says_what_ltrace_command_makes_one(tmp_path):
    path = write(tmp_path, "hello from the program\n+++ exited (status 0) +++\n")
    with pytest.raises(TraceError) as err:
        read_ltrace(path)
    assert str(err.value) == (f"{path}: no malloc, calloc, realloc or free call in this file "
                              "(is it the output of ltrace -e malloc+free+calloc+realloc?)")


@pytest.mark.parametrize("line, message", [
    # a size_t printed as signed: -16 is 2**64 - 16, a huge request, not 16
    ("malloc(-16) = 0x10", "2: absurd size 18446744073709551600"),
    # posix_memalign's arguments are read (and named) when it is cut and resumed
    ("posix_memalign(0x7ffe0, 64, big <unfinished ...>",
     "2: posix_memalign: expected a number for size, got 'big'"),
])
def test_more_bad_lines_name_the_argument_and_the_value(tmp_path, line, message):
    path = write(tmp_path, "malloc(1) = 0x1\n" + line + "\n")
    with pytest.raises(TraceError) as err:
        read_ltrace(path)
    assert str(err.value).startswith(f"{path}:{message}")
