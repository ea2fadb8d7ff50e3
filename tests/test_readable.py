"""The readable trace form (``a = malloc(240)``, ``free(a)``: traces/readable.py,
issue 21): strict and lenient parsing, writing back, recognition by content.

Expected values are worked by hand (the .rep text a readable trace must
become) or derived another way (the strict parser of a text with the bad
lines blanked, for the lenient one; the .rep reader, for the round trips).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from heapscope.traces import ALLOC, FREE, REALLOC, Trace, TraceError, format_rep, load_trace, parse_rep
from tests.depth import walked_examples
from heapscope.traces.formats import read_trace_file, sniff_file
from heapscope.traces.readable import (block_name, looks_readable, op_text, parse_readable,
                                       read_lines, write_readable)

# A hole and a request that fits in it: six operations, worked by hand.
DEMO = """\
# a hole, and a request that fits in it
a = malloc(240)
b = calloc(4, 60)     # 4 x 60 = 240 bytes
free(a)
c = malloc(200);
b = realloc(b, 500)
free(c)
"""
# Names take ids in order of first use: a = 0, b = 1, c = 2; calloc is a malloc
# of count x size; the header is counted: 3 ids, 6 ops.
DEMO_REP = """\
0
3
6
1
a 0 240
a 1 240
f 0
a 2 200
r 1 500
f 2
"""


def ops(trace: Trace) -> list[tuple[int, int, int]]:
    return list(trace)


def test_the_demo_is_the_rep_worked_by_hand():
    trace = parse_readable(DEMO)
    assert format_rep(trace) == DEMO_REP
    assert ops(trace) == ops(parse_rep(DEMO_REP))
    assert trace.line_numbers.tolist() == [2, 3, 4, 5, 6, 7]   # comment and op lines counted


def test_rep_lines_mix_in_and_their_ids_are_kept():
    # a .rep id keeps its number (5); the names take the free ids around it
    text = "x = malloc(16)\na 5 100\ny = malloc(8)\nr 5 3\nfree(5)\nfree(x)\n"
    trace = parse_readable(text)
    assert ops(trace) == [(ALLOC, 0, 16), (ALLOC, 5, 100), (ALLOC, 1, 8), (REALLOC, 5, 3),
                          (FREE, 5, 0), (FREE, 0, 0)]
    assert trace.num_ids == 6


def test_a_name_never_takes_an_id_a_rep_line_uses():
    # x is the first name, but id 0 is the .rep line's: x takes 1
    assert ops(parse_readable("a 0 8\nx = malloc(3)\nfree(0)\nfree(x)\n")) == [
        (ALLOC, 0, 8), (ALLOC, 1, 3), (FREE, 0, 0), (FREE, 1, 0)]
    # and a .rep id written with leading zeros in a call is the same id
    assert ops(parse_readable("a 7 1\nfree(007)\n")) == [(ALLOC, 7, 1), (FREE, 7, 0)]


def test_a_block_stays_live_from_its_malloc_through_its_reallocs():
    with pytest.raises(TraceError) as info:
        parse_readable("a = malloc(1)\na = realloc(a, 2)\na = malloc(3)\n")
    assert info.value.line == 3 and "allocated at line 1" in info.value.message


def test_rep_r_of_a_freed_id_is_refused_as_the_rep_reader_does():
    with pytest.raises(TraceError) as info:
        parse_readable("a 5 1\nf 5\nr 5 3\n", "t.heap")
    assert (info.value.path, info.value.line) == ("t.heap", 3)
    assert "freed at line 2" in info.value.message


def test_a_rep_header_before_the_operations_is_ignored():
    assert ops(parse_readable(DEMO_REP)) == ops(parse_rep(DEMO_REP))
    assert ops(parse_readable("0 3 6 1\nx = malloc(3)\n")) == [(ALLOC, 0, 3)]


def test_realloc_of_null_and_unnamed_blocks():
    trace = parse_readable("p = realloc(NULL, 24)\nmalloc(8)\np = realloc(p, 48)\ncalloc(2, 3)\n")
    # realloc(NULL, n) is a realloc of an id never used (the Trace's realloc(NULL));
    # the unnamed blocks get ids of their own, in order
    assert ops(trace) == [(REALLOC, 0, 24), (ALLOC, 1, 8), (REALLOC, 0, 48), (ALLOC, 2, 6)]
    again = parse_readable(write_readable(trace))
    assert ops(again) == ops(trace)


def test_sizes_in_hexadecimal_and_ids_with_leading_zeros():
    assert ops(parse_readable("a = malloc(0x100)\nfree(a)\na 007 1\nf 7\n")) == [
        (ALLOC, 0, 256), (FREE, 0, 0), (ALLOC, 7, 1), (FREE, 7, 0)]


# (text, line of the error, what the message must say)
ERRORS = [
    ("a = malloc(8)\nfree(x)\n", 2, "free of x, which is not live (it was never allocated)"),
    ("a = malloc(8)\nfree(a)\nfree(a)\n", 3, "free of a, which is not live (it was freed at line 2)"),
    ("a = malloc(8)\n\n# c\na = malloc(9)\n", 4, "a is already live (allocated at line 1)"),
    ("a = realloc(a, 8)\n", 1, "realloc of a, which is not live (it was never allocated)"),
    ("a = malloc(1)\nfree(a)\nb = malloc(2)\na = realloc(a, 8)\n", 4, "freed at line 2"),
    ("a = malloc(1)\nfree(a)\na = realloc(NULL, 8)\n", 3, "write a = malloc(8)"),
    ("a = malloc(1)\na = realloc(NULL, 8)\n", 2, "already live"),
    ("a = malloc(-3)\n", 1, "negative size -3"),
    ("a = malloc(1099511627777)\n", 1, "absurd size 1099511627777"),
    ("a = calloc(1048576, 1048577)\n", 1, "absurd size"),
    ("a = calloc(-1, 4)\n", 1, "negative count -1"),
    ("a = malloc(8)\na = mallok(3)\n", 2, "unknown function 'mallok'"),
    ("malloc 100\n", 1, "write malloc(size), with parentheses"),
    ("a = malloc(4 * 60)\n", 1, "whole number of bytes, got '4 * 60'"),
    ("a = malloc(1, 2)\n", 1, "malloc takes 1 argument"),
    ("a = calloc(2)\n", 1, "calloc takes 2 arguments"),
    ("a = malloc(1)\nb = realloc(a, 2)\n", 2, "realloc keeps its block's name"),
    ("a = malloc(1)\nx = free(a)\n", 2, "free returns nothing"),
    ("free(NULL)\n", 1, "free(NULL) does nothing"),
    ("a = malloc(1); free(a)\n", 1, "one operation per line"),
    ("free = malloc(1)\n", 1, "'free' cannot name a block"),
    ("2x = malloc(1)\n", 1, "'2x' is not a name"),
    ("a = malloc(1)\nhello world\n", 2, "expected an operation"),
    ("a 0\n", 1, "'a' takes 2 numbers (a id size), found 1"),
    ("a 0 8 f 0\n", 1, "one operation per line"),
    ("a -1 8\n", 1, "negative id -1"),
    ("x = malloc(1)\n7\n", 2, "a line of numbers only"),
    ("1\n2\n3\n4\n5\nx = malloc(1)\n", 5, "more than the 4 integers of a .rep header"),
    ("a = malloc((8)\n", 1, "arguments must be plain numbers and names"),
    ("a = malloc(8\n", 1, "unbalanced parentheses"),
    ("a =malloc(8\n", 1, "unbalanced parentheses"),
    ("a = calloc(x, 8)\n", 1, "the count must be a whole number, got 'x'"),
]


@pytest.mark.parametrize("text, line, message", ERRORS)
def test_each_error_names_its_file_and_line(text, line, message):
    with pytest.raises(TraceError) as info:
        parse_readable(text, "lesson.heap")
    err = info.value
    assert (err.path, err.line) == ("lesson.heap", line), str(err)
    assert message in err.message, err.message
    assert str(err).startswith(f"lesson.heap:{line}: ")


@pytest.mark.parametrize("text, line, message", ERRORS)
def test_the_lenient_reader_reports_the_same_problem_on_the_same_line(text, line, message):
    parse = read_lines(text.split("\n"))
    assert min(parse.problems) == line - 1
    assert message in parse.problems[line - 1]


def test_a_file_is_read_by_content_whatever_its_name(tmp_path):
    for name in ("demo.heap", "demo.txt", "demo.rep", "demo"):
        path = tmp_path / name
        path.write_text(DEMO)
        assert sniff_file(path) == "heap"
        trace = read_trace_file(path)
        assert ops(trace) == ops(parse_rep(DEMO_REP))
        assert trace.source == str(path)
        assert load_trace(str(path)).name == ("demo" if name != "demo.txt" else "demo.txt")


def test_a_bare_heap_name_is_a_file_of_the_current_folder(tmp_path, monkeypatch):
    (tmp_path / "lesson.heap").write_text(DEMO)
    monkeypatch.chdir(tmp_path)
    assert ops(load_trace("lesson.heap")) == ops(parse_rep(DEMO_REP))
    # one that is missing is a missing file, not an unknown workload
    with pytest.raises(TraceError) as info:
        load_trace("lessons.heap")
    assert info.value.path == "lessons.heap" and "No such file" in info.value.message


def test_a_bad_file_names_the_file_and_line_through_every_reader(tmp_path):
    path = tmp_path / "oops.txt"
    path.write_text("a = malloc(8)\n# fine so far\nfree(b)\n")
    with pytest.raises(TraceError) as info:
        load_trace(str(path))
    assert str(info.value).startswith(f"{path}:3: free of b")


def test_a_file_read_in_many_blocks_keeps_its_line_numbers(tmp_path, monkeypatch):
    from heapscope.traces import source
    monkeypatch.setattr(source, "CHUNK_BYTES", 37)      # a block every line or two
    lines = ["# many blocks"] + [f"b{i} = malloc({i})  # block {i}" for i in range(60)]
    path = tmp_path / "long.txt"
    path.write_text("\n".join(lines + ["free(b7)", "free(b7)"]) + "\n")
    with pytest.raises(TraceError) as info:
        read_trace_file(path)
    assert info.value.line == 63 and "freed at line 62" in info.value.message
    path.write_text("\n".join(lines) + "\n")
    trace = read_trace_file(path)
    assert trace.line_numbers.tolist() == list(range(2, 62))
    assert ops(trace) == ops(parse_readable("\n".join(lines)))


def test_not_utf8_is_named_by_its_line(tmp_path):
    path = tmp_path / "t.heap"
    path.write_bytes(b"a = malloc(8)\nfree(\xff)\n")
    with pytest.raises(TraceError) as info:
        read_trace_file(path)
    assert info.value.line == 2 and "not UTF-8" in info.value.message


def test_gzip_and_crlf_are_read_too(tmp_path):
    import gzip
    path = tmp_path / "t.heap.gz"
    path.write_bytes(gzip.compress(DEMO.replace("\n", "\r\n").encode()))
    trace = read_trace_file(path)
    assert format_rep(trace) == DEMO_REP and trace.name == "t"


def test_recognition_needs_a_call_rep_lines_alone_stay_rep():
    assert looks_readable(DEMO)
    assert looks_readable("a 0 8\n\n# x\nfree(0)  # a call after a .rep line\n")
    assert not looks_readable(DEMO_REP)
    assert not looks_readable("malloc(24) = 0x55d0\nfree(0x55d0) = <void>\n")   # ltrace
    assert not looks_readable("# a = malloc(3) in a comment only\n")


# --- lenient ----------------------------------------------------------------------

def test_lenient_skips_a_bad_line_and_keeps_the_rest():
    lines = ["a = malloc(240)",    # 0
             "free(x)",            # 1: x was never allocated
             "free(a)",            # 2: still works
             "",                   # 3
             "b = malloc(16)  # b", # 4
             "garbage",            # 5
             "free(a)"]            # 6: a was freed on line 2
    parse = read_lines(lines)
    assert set(parse.problems) == {1, 5, 6}
    assert "never allocated" in parse.problems[1]
    assert "freed at line 3" in parse.problems[6]
    assert ops(parse.trace) == [(ALLOC, 0, 240), (FREE, 0, 0), (ALLOC, 1, 16)]
    assert parse.op_line == [0, 2, 4]
    assert parse.line_op == {0: 0, 2: 1, 4: 2}
    assert parse.names == {0: "a", 1: "b"}
    assert parse.live_after(0) == ["a"] and parse.live_after(3) == [] and parse.live_after(6) == ["b"]
    assert parse.step_of_line(1) == 1 and parse.step_of_line(4) == 3


def test_names_for_the_editor_unnamed_blocks_and_a_fresh_name():
    parse = read_lines(["a = malloc(8)", "malloc(16)", "c = malloc(4)", "free(b) # b: never", "d = oops(1)"])
    # the unnamed block gets the first generated name not given (b), as written back
    assert [parse.name_of(i) for i in range(3)] == ["a", "b", "c"]
    assert parse.live_after(4) == ["a", "b", "c"]
    assert parse.mentioned == {"a", "c", "b"}      # b is named by a skipped line
    assert parse.fresh_name() == "d"               # d is on a line, but no op: no name yet
    assert read_lines(["a = malloc(1)", "b = malloc(2)", "free(c)"]).fresh_name() == "d"
    assert op_text(ALLOC, "x", 8) == "x = malloc(8)" and op_text(FREE, "x") == "free(x)"
    assert op_text(REALLOC, "x", 9) == "x = realloc(x, 9)"
    assert op_text(REALLOC, "x", 9, new=True) == "x = realloc(NULL, 9)"


def test_a_skipped_malloc_leaves_its_name_free_for_later_lines():
    # line 1 fails (bad size), so a is not live: the free on line 2 is the problem,
    # and the malloc on line 3 is fine
    parse = read_lines(["a = malloc(-1)", "free(a)", "a = malloc(5)", "free(a)"])
    assert set(parse.problems) == {0, 1}
    assert ops(parse.trace) == [(ALLOC, 0, 5), (FREE, 0, 0)]


def test_lenient_takes_a_whole_text_too_and_strict_takes_bytes():
    assert ops(read_lines(DEMO).trace) == ops(parse_rep(DEMO_REP))
    assert ops(parse_readable(DEMO.encode())) == ops(parse_rep(DEMO_REP))
    with pytest.raises(TraceError) as info:
        parse_readable(b"a = malloc(1)\n\xff\n", "b.heap")
    assert (info.value.path, info.value.line) == ("b.heap", 2)


def test_lenient_reads_nothing_at_all():
    parse = read_lines([])
    assert len(parse.trace) == 0 and parse.problems == {} and parse.live_after(5) == []


# --- writing back --------------------------------------------------------------------

def test_block_names_run_like_spreadsheet_columns():
    assert [block_name(i) for i in (0, 1, 25, 26, 27, 51, 52, 701, 702)] == [
        "a", "b", "z", "aa", "ab", "az", "ba", "zz", "aaa"]


def test_write_readable_of_the_demo_reads_as_written_by_hand():
    text = write_readable(parse_rep(DEMO_REP), title="")
    assert text == ("a = malloc(240)\nb = malloc(240)\nfree(a)\nc = malloc(200)\n"
                    "b = realloc(b, 500)\nfree(c)\n")


def test_write_readable_names_blocks_in_order_of_first_use():
    trace = Trace.from_ops([(ALLOC, 5, 8), (ALLOC, 2, 16), (FREE, 5), (REALLOC, 9, 4)])
    assert write_readable(trace, title="") == ("a = malloc(8)\nb = malloc(16)\nfree(a)\n"
                                               "c = realloc(NULL, 4)\n")


def test_write_readable_keeps_given_names_and_generates_around_them():
    trace = parse_rep(DEMO_REP)
    text = write_readable(trace, {1: "a", 2: "hole"}, title="")
    # id 0 has no name: it gets the first generated one not given (b)
    assert text.splitlines()[:4] == ["b = malloc(240)", "a = malloc(240)", "free(b)",
                                     "hole = malloc(200)"]
    assert ops(parse_readable(text)) == ops(trace)
    with pytest.raises(ValueError):
        write_readable(trace, {0: "malloc"})
    with pytest.raises(ValueError):
        write_readable(trace, {0: "x", 1: "x"})


def test_lenient_names_written_back_give_the_users_names():
    parse = read_lines(["buf = malloc(64)", "tmp = malloc(8)", "free(tmp)", "buf = realloc(buf, 128)"])
    text = write_readable(parse.trace, parse.names, title="")
    assert text == "buf = malloc(64)\ntmp = malloc(8)\nfree(tmp)\nbuf = realloc(buf, 128)\n"


def test_rep_ids_written_back_are_names_that_keep_their_ids():
    parse = read_lines(["a 5 100", "x = malloc(3)", "f 5"])
    text = write_readable(parse.trace, parse.names, title="")
    assert text == "5 = malloc(100)\nx = malloc(3)\nfree(5)\n"
    assert ops(parse_readable(text)) == ops(parse.trace) == [(ALLOC, 5, 100), (ALLOC, 0, 3), (FREE, 5, 0)]


def test_a_readable_file_is_written_atomically_and_reads_back(tmp_path):
    from heapscope.traces.readable import write_readable_file
    trace = parse_rep(DEMO_REP)
    path = tmp_path / "demo.heap"
    write_readable_file(trace, path, {0: "first"}, title="six operations")
    assert path.read_text().splitlines()[:2] == ["# six operations", "first = malloc(240)"]
    assert ops(read_trace_file(path)) == ops(trace)
    with pytest.raises(TraceError) as info:
        write_readable_file(trace, tmp_path / "nowhere" / "x.heap")
    assert info.value.path == str(tmp_path / "nowhere" / "x.heap")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["demo.heap"]    # no leftovers


def test_every_bundled_trace_goes_to_readable_and_back_unchanged():
    for example in walked_examples():     # the longest in the deep suite only
        trace = load_trace(example.name)
        again = parse_readable(write_readable(trace))
        assert np.array_equal(again.kind, trace.kind), example.name
        assert np.array_equal(again.ids, trace.ids), example.name
        assert np.array_equal(again.sizes, trace.sizes), example.name
        assert again.num_ids == trace.num_ids, example.name
        assert format_rep(again) == format_rep(trace), example.name


# --- random traces -------------------------------------------------------------------

@st.composite
def valid_traces(draw, max_ops=40):
    """Valid op lists with ids in order of first use: alloc a new id, free or
    realloc a live one, realloc a new one (realloc(NULL)), alloc a freed one again."""
    ops_: list[tuple[int, int, int]] = []
    live: list[int] = []
    freed: list[int] = []
    next_id = 0
    for _ in range(draw(st.integers(0, max_ops))):
        choice = draw(st.sampled_from(["new", "new", "free", "realloc", "null", "again"]))
        size = draw(st.integers(0, 5000))
        if choice == "free" and live:
            ops_.append((FREE, live.pop(draw(st.integers(0, len(live) - 1))), 0))
            freed.append(ops_[-1][1])
        elif choice == "realloc" and live:
            ops_.append((REALLOC, draw(st.sampled_from(live)), size))
        elif choice == "again" and freed:
            ident = freed.pop(draw(st.integers(0, len(freed) - 1)))
            ops_.append((ALLOC, ident, size))
            live.append(ident)
        else:
            ops_.append((REALLOC if choice == "null" else ALLOC, next_id, size))
            live.append(next_id)
            next_id += 1
    return Trace.from_ops(ops_)


@settings(max_examples=150, deadline=None)
@given(valid_traces())
def test_random_traces_go_to_readable_and_back(trace):
    again = parse_readable(write_readable(trace))
    assert ops(again) == ops(trace)
    assert format_rep(again) == format_rep(trace)


@settings(max_examples=100, deadline=None)
@given(valid_traces(), st.randoms(use_true_random=False))
def test_random_ids_come_back_renumbered_in_order_of_first_use(trace, rnd):
    ids = list(range(max(trace.num_ids, 1) + 3))
    rnd.shuffle(ids)
    shuffled = Trace.from_ops([(k, ids[i], s) for k, i, s in trace])
    again = parse_readable(write_readable(shuffled))
    assert ops(again) == ops(trace)     # trace's own ids are in first-use order


LINE_PARTS = st.sampled_from([
    "a = malloc(8)", "b = malloc(16)", "c = calloc(2, 8)", "free(a)", "free(b)", "free(c)",
    "a = realloc(a, 32)", "b = realloc(NULL, 4)", "free(zz)", "a 3 10", "f 3", "r 3 5", "r 4 1",
    "malloc(2)", "", "# note", "free(a) # again", "oops", "a = malloc(-1)", "7", "x = free(a)",
    "a = malloc(1); free(a)", "\u00e9 = malloc(3)", "b = realloc(a, 3)", "free(NULL)",
])


@settings(max_examples=200, deadline=None)
@given(st.lists(LINE_PARTS | st.text(max_size=12), max_size=25))
def test_lenient_is_the_strict_reader_of_the_lines_it_kept(lines):
    """Never raises; what it keeps is what the strict reader reads of the
    same lines with the problem lines blanked (a second derivation)."""
    lines = [line.replace("\r", " ").replace("\n", " ").replace("\x0b", " ") for line in lines]
    parse = read_lines(lines)
    kept = ["" if i in parse.problems else line for i, line in enumerate(lines)]
    strict = parse_readable("\n".join(kept))
    assert ops(strict) == ops(parse.trace)
    assert [line - 1 for line in strict.line_numbers.tolist()] == parse.op_line
    if parse.problems:
        with pytest.raises(TraceError) as info:
            parse_readable("\n".join(lines))
        assert info.value.line == min(parse.problems) + 1
    else:
        assert ops(parse_readable("\n".join(lines))) == ops(parse.trace)
