"""Turning the recorder's binary files into traces, on records written by the
test (no C compiler needed): ids for pointers, dropped frees, exec, fork."""

from __future__ import annotations

import numpy as np
import pytest

from heapscope.traces import TraceError
from heapscope.traces.record import FORMAT_VERSION, RECORD, output_paths, read_recordings
from heapscope.traces.record_run import LIMIT_BYTES, LIMIT_OPS


def rec(kind: str, a: int = 0, b: int = 0, c: int = 0, extra: int = 0):
    return (ord(kind), extra, a, b, c)


def start(pid: int, ppid: int = 1):
    return [rec("S", pid, ppid, 0, FORMAT_VERSION), name("prog")]


def name(text: str):
    raw = text.encode().ljust(24, b"\0")
    a, b, c = np.frombuffer(raw, dtype="=u8").tolist()
    return rec("N", a, b, c)


def write(path, records, tail: bytes = b""):
    path.write_bytes(np.array(records, dtype=RECORD).tobytes() + tail)


def ops(trace):
    letters = "afr"
    return [(letters[k], i) if k == 1 else (letters[k], i, s) for k, i, s in trace]


def test_pointers_become_ids_and_a_reused_pointer_gets_a_new_one(tmp_path):
    write(tmp_path / "100.hsr", start(100) + [
        rec("M", 0x10, 0, 24), rec("C", 0x20, 3, 48), rec("F", 0x10),
        rec("M", 0x10, 0, 8),            # same address, new block
        rec("R", 0x30, 0x20, 100),       # moved
        rec("A", 0x40, 64, 200),
        rec("F", 0x999),                 # never allocated: dropped, counted
        rec("R", 0x50, 0x998, 7),        # realloc of an unknown block: an allocation
        rec("F", 0x30)])
    r = read_recordings(tmp_path, 100)
    (p,) = r.programs
    assert p.main and p.program == "prog" and p.pid == 100
    assert ops(p.trace) == [("a", 0, 24), ("a", 1, 48), ("f", 0), ("a", 2, 8), ("r", 1, 100),
                            ("a", 3, 200), ("a", 4, 7), ("f", 1),
                            ("f", 2), ("f", 3), ("f", 4)]      # live at exit, oldest first
    assert p.counts.unknown_frees == 1 and p.counts.unknown_reallocs == 1
    assert p.counts.live_at_end == 3


def test_keep_live_leaves_the_blocks_live_at_exit(tmp_path):
    write(tmp_path / "7.hsr", start(7) + [rec("M", 0x10, 0, 24), rec("M", 0x20, 0, 8),
                                          rec("F", 0x10)])
    (p,) = read_recordings(tmp_path, 7, keep_live=True).programs
    assert ops(p.trace) == [("a", 0, 24), ("a", 1, 8), ("f", 0)]


def test_an_address_handed_out_while_live_frees_the_old_block_first(tmp_path):
    write(tmp_path / "7.hsr", start(7) + [rec("M", 0x10, 0, 24), rec("M", 0x10, 0, 32)])
    (p,) = read_recordings(tmp_path, 7).programs
    assert ops(p.trace) == [("a", 0, 24), ("f", 0), ("a", 1, 32), ("f", 1)]
    assert p.counts.missed_frees == 1


def test_exec_starts_a_new_program_on_a_new_heap(tmp_path):
    write(tmp_path / "9.hsr", start(9) + [rec("M", 0x10, 0, 24), rec("M", 0x20, 0, 5)]
          + [rec("S", 9, 1, 0, FORMAT_VERSION), name("other"), rec("M", 0x10, 0, 99),
             rec("F", 0x20)])   # the old program's block: unknown here
    r = read_recordings(tmp_path, 9)
    first, second = r.programs
    assert (first.program, second.program) == ("prog", "other")
    assert ops(first.trace) == [("a", 0, 24), ("a", 1, 5), ("f", 0), ("f", 1)]
    assert ops(second.trace) == [("a", 0, 99), ("f", 0)]
    assert second.exec_index == 1 and second.counts.unknown_frees == 1
    assert second.main and not first.main          # the last program of the main pid


def test_a_forked_child_starts_with_its_parents_heap_at_the_fork(tmp_path):
    # the parent had written 4 records (S, N, two mallocs) when it forked
    write(tmp_path / "20.hsr", start(20) + [rec("M", 0x10, 0, 24), rec("M", 0x20, 0, 8),
                                            rec("F", 0x10), rec("M", 0x30, 0, 1)])
    write(tmp_path / "21.hsr", [rec("K", 21, 20, 4, FORMAT_VERSION), rec("F", 0x20),
                                rec("M", 0x40, 0, 77)])
    r = read_recordings(tmp_path, 20)
    parent, child = sorted(r.programs, key=lambda p: p.pid)
    assert ops(child.trace) == [("a", 0, 24), ("a", 1, 8),     # the parent's, up to the fork
                                ("f", 1), ("a", 2, 77),        # the child's own
                                ("f", 0), ("f", 2)]            # live at exit
    assert child.inherited == 2 and child.own_ops == 2 and child.forked_from == 20
    assert child.program == "prog"
    assert ops(parent.trace) == [("a", 0, 24), ("a", 1, 8), ("f", 0), ("a", 2, 1),
                                 ("f", 1), ("f", 2)]
    output_paths(tmp_path / "out.rep.gz", r.programs)
    assert parent.path == tmp_path / "out.rep.gz"
    assert child.path == tmp_path / "out.21.prog.rep.gz"


def test_two_children_forked_at_the_same_point_both_get_the_parents_heap(tmp_path):
    write(tmp_path / "20.hsr", start(20) + [rec("M", 0x10, 0, 24)])
    for child in (21, 22):
        write(tmp_path / f"{child}.hsr", [rec("K", child, 20, 3, FORMAT_VERSION),
                                          rec("M", 0x20, 0, child)])
    r = read_recordings(tmp_path, 20)
    children = sorted((p for p in r.programs if p.forked_from), key=lambda p: p.pid)
    assert [ops(p.trace) for p in children] == [
        [("a", 0, 24), ("a", 1, n), ("f", 0), ("f", 1)] for n in (21, 22)]


def test_a_child_that_only_execs_gets_no_file(tmp_path):
    write(tmp_path / "20.hsr", start(20) + [rec("M", 0x10, 0, 24)])
    write(tmp_path / "21.hsr", [rec("K", 21, 20, 3, FORMAT_VERSION),
                                rec("S", 21, 20, 0, FORMAT_VERSION), name("ls"),
                                rec("M", 0x10, 0, 5)])
    r = read_recordings(tmp_path, 20)
    output_paths(tmp_path / "o.rep", r.programs)
    files = {(p.pid, p.program): p.path for p in r.programs}
    assert files[(21, "prog")] is None                   # the fork before exec
    assert files[(21, "ls")] == tmp_path / "o.21.ls.rep"


def test_a_file_cut_in_the_middle_of_a_record_keeps_the_whole_ones(tmp_path):
    write(tmp_path / "5.hsr", start(5) + [rec("M", 0x10, 0, 24)], tail=b"\x4d\0\0")
    r = read_recordings(tmp_path, 5)
    assert ops(r.main.trace) == [("a", 0, 24), ("f", 0)]
    assert r.torn == [5]


def test_records_of_another_format_are_refused(tmp_path):
    write(tmp_path / "5.hsr", [rec("S", 5, 1, 0, FORMAT_VERSION + 1)])
    with pytest.raises(TraceError, match="recorder format"):
        read_recordings(tmp_path, 5)
    write(tmp_path / "5.hsr", start(5) + [rec("Z", 1)])
    with pytest.raises(TraceError, match="record 2: unknown record kind"):
        read_recordings(tmp_path, 5)


def test_a_recording_past_the_op_limit_is_cut_to_the_longest_prefix_that_fits(tmp_path):
    """11 mallocs never freed, a limit of 10 ops: each kept malloc costs 2 ops
    (itself and its free at the end), so 5 fit -- 10 ops -- and the 6th would
    not.  The trace is kept, cut there and marked; before issue 19 the whole
    recording was refused after the program had run."""
    write(tmp_path / "5.hsr", start(5) + [rec("M", 0x10 * i, 0, 8 + i) for i in range(1, 12)])
    r = read_recordings(tmp_path, 5, max_ops=10)
    assert ops(r.main.trace) == [("a", i, 9 + i) for i in range(5)] + [("f", i) for i in range(5)]
    assert r.main.cut == LIMIT_OPS


def test_frees_after_the_cut_are_not_taken(tmp_path):
    """Cut at the limit, a later free of a kept block is dropped too: the
    trace is a prefix of what the program did, then the frees at the end."""
    write(tmp_path / "5.hsr", start(5) + [rec("M", 0x10, 0, 1), rec("M", 0x20, 0, 2),
                                          rec("M", 0x30, 0, 3), rec("F", 0x10)])
    r = read_recordings(tmp_path, 5, max_ops=5)
    # a record is taken while ops + live blocks <= 5 - 2 (it may add 2):
    # 0 and 2 before the first two mallocs, 4 before the third: cut there.
    assert ops(r.main.trace) == [("a", 0, 1), ("a", 1, 2), ("f", 0), ("f", 1)]
    assert r.main.cut == LIMIT_OPS


def test_a_recording_the_recorder_stopped_is_marked_and_exec_starts_afresh(tmp_path):
    """The recorder's 'L' record (a limit reached): the program's trace is cut
    there; a program the same process execs afterwards is a new recording."""
    write(tmp_path / "5.hsr", start(5) + [
        rec("M", 0x10, 0, 24), rec("L", 1, 1, 2, extra=LIMIT_BYTES),
        rec("S", 5, 1, 0, FORMAT_VERSION), name("ls"), rec("M", 0x10, 0, 7)])
    r = read_recordings(tmp_path, 5)
    first, second = r.programs
    assert ops(first.trace) == [("a", 0, 24), ("f", 0)] and first.cut == LIMIT_BYTES
    assert ops(second.trace) == [("a", 0, 7), ("f", 0)] and second.cut is None and second.main


def test_a_child_forked_after_the_cut_is_cut_too(tmp_path):
    write(tmp_path / "20.hsr", start(20) + [rec("M", 0x10, 0, 24),
                                            rec("L", 1, 1, 3, extra=LIMIT_OPS)])
    write(tmp_path / "21.hsr", [rec("K", 21, 20, 4, FORMAT_VERSION), rec("M", 0x20, 0, 5)])
    r = read_recordings(tmp_path, 20)
    child = next(p for p in r.programs if p.pid == 21)
    assert child.cut == LIMIT_OPS


def test_an_allocation_larger_than_a_rep_holds_is_left_out_and_counted(tmp_path):
    """malloc(2**41) can succeed (overcommit); a .rep cannot hold it.  Before
    issue 19 the recording was refused after the run."""
    write(tmp_path / "5.hsr", start(5) + [
        rec("M", 0x10, 0, 2**41), rec("M", 0x20, 0, 8), rec("R", 0x30, 0x20, 2**42),
        rec("F", 0x10), rec("F", 0x30)])
    r = read_recordings(tmp_path, 5)
    assert ops(r.main.trace) == [("a", 0, 8), ("f", 0)]
    assert r.main.too_large == 2
    assert r.main.counts.unknown_frees == 2
