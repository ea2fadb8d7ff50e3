"""Tests for traces.rep (.rep reading/writing), traces.trace and traces.errors."""

from __future__ import annotations

import collections
import gzip
import pickle
import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from heapscope.traces import (ALLOC, FREE, REALLOC, Trace, TraceError, format_rep, parse_rep, read_rep,
                    write_rep)
from heapscope.traces import rep as rep_module
from heapscope.traces import source as source_module

# A small trace touching every kind of op, including realloc(NULL, n) (id 2).
TINY_OPS = [
    (ALLOC, 0, 10),    # live 10, 1 block
    (ALLOC, 1, 20),    # 30, 2
    (REALLOC, 0, 50),  # 70, 2   <- max live bytes
    (FREE, 1, 0),      # 50, 1
    (REALLOC, 2, 5),   # 55, 2   realloc of a never-allocated id acts as malloc
    (ALLOC, 1, 7),     # 62, 3   <- max live blocks; id 1 reused after its free
    (FREE, 0, 0),      # 12, 2
    (FREE, 2, 0),      # 7, 1
    (FREE, 1, 0),      # 0, 0
]


def rep_text(body: str, num_ids: int = 10, num_ops: int | None = None,
             first: int = 0, last: int = 1) -> str:
    """A .rep text: a 4-line header (lines 1-4), then ``body`` from line 5.

    num_ops defaults to the number of op lines in body, so that only the
    error a test is about is present.
    """
    lines = body.splitlines()
    if num_ops is None:
        num_ops = sum(1 for s in lines if s.strip() and not s.strip().startswith("#"))
    return f"{first}\n{num_ids}\n{num_ops}\n{last}\n" + "".join(s + "\n" for s in lines)


def read_error(tmp_path, content: str | bytes, name: str = "bad.rep") -> TraceError:
    """Write content to a file, read it, and return the TraceError raised."""
    path = tmp_path / name
    path.write_bytes(content.encode() if isinstance(content, str) else content)
    with pytest.raises(TraceError) as info:
        read_rep(path)
    err = info.value
    assert err.path == str(path)
    assert str(err).startswith(str(path) + ":")
    if err.line is not None:
        assert str(err).startswith(f"{path}:{err.line}: ")
    return err


def assert_same_ops(a: Trace, b: Trace) -> None:
    assert len(a) == len(b)
    assert np.array_equal(a.kind, b.kind)
    assert np.array_equal(a.ids, b.ids)
    assert np.array_equal(a.sizes, b.sizes)
    assert a.num_ids == b.num_ids


# --- TraceError ---------------------------------------------------------------

def test_trace_error_str_omits_missing_parts():
    assert str(TraceError("boom", "x.rep", 7)) == "x.rep:7: boom"
    assert str(TraceError("boom", "x.rep")) == "x.rep: boom"
    assert str(TraceError("boom", None, 7)) == "7: boom"
    assert str(TraceError("boom")) == "boom"
    err = TraceError("boom", "x.rep", 7)
    assert (err.path, err.line, err.message) == ("x.rep", 7, "boom")
    again = pickle.loads(pickle.dumps(err))
    assert (again.path, again.line, again.message) == ("x.rep", 7, "boom")


# --- Trace --------------------------------------------------------------------

def test_trace_arrays_access_and_iteration():
    t = Trace.from_ops(TINY_OPS, name="tiny")
    assert len(t) == 9 and t.num_ids == 3 and t.name == "tiny"
    assert t.kind.dtype == np.uint8 and t.ids.dtype == np.int32 and t.sizes.dtype == np.int64
    assert list(t) == TINY_OPS
    assert t.op(2) == (REALLOC, 0, 50)
    assert all(type(v) is int for v in t.op(2))
    assert all(type(v) is int for op in t for v in op)
    assert t.line_numbers is None and t.source is None and t.header is None


def test_trace_arrays_are_read_only():
    t = Trace.from_ops(TINY_OPS)
    with pytest.raises(ValueError):
        t.sizes[0] = 99
    kind = np.array([ALLOC, FREE], dtype=np.uint8)
    Trace(kind, [0, 0], [8, 0])
    kind[0] = FREE  # the caller's own array stays writable
    assert kind[0] == FREE


def test_from_ops_accepts_letters_and_short_frees():
    t = Trace.from_ops([("a", 0, 8), ("r", 0, 16), ("f", 0)])
    assert list(t) == [(ALLOC, 0, 8), (REALLOC, 0, 16), (FREE, 0, 0)]
    with pytest.raises(TraceError, match="op 2: expected"):
        Trace.from_ops([("a", 0, 8), ("x", 0, 8)])
    with pytest.raises(TraceError, match="op 1: expected"):
        Trace.from_ops([(ALLOC, 0)])


def test_stats_of_a_tiny_trace():
    s = Trace.from_ops(TINY_OPS).stats()
    assert s == {
        "num_ops": 9, "num_ids": 3, "allocs": 3, "frees": 4, "reallocs": 2,
        "max_live_bytes": 70, "max_live_blocks": 3, "total_requested": 92,
        "min_size": 5, "max_size": 50, "mean_size": pytest.approx(18.4),
    }


def test_stats_of_an_empty_trace():
    s = Trace.from_ops([]).stats()
    assert s["num_ops"] == 0 and s["max_live_bytes"] == 0 and s["mean_size"] == 0.0


def test_stats_match_a_plain_python_replay():
    rng = np.random.default_rng(5)
    ops, live, next_id = [], {}, 0
    for _ in range(3000):
        r = rng.random()
        if live and r < 0.4:
            i = list(live)[rng.integers(len(live))]
            ops.append((FREE, i, 0))
            del live[i]
        elif live and r < 0.6:
            i = list(live)[rng.integers(len(live))]
            live[i] = int(rng.integers(0, 500))
            ops.append((REALLOC, i, live[i]))
        else:
            live[next_id] = int(rng.integers(0, 500))
            ops.append((ALLOC, next_id, live[next_id]))
            next_id += 1
    max_bytes = max_blocks = 0
    cur: dict[int, int] = {}
    for k, i, size in ops:
        if k == FREE:
            del cur[i]
        else:
            cur[i] = size
        max_bytes = max(max_bytes, sum(cur.values()))
        max_blocks = max(max_blocks, len(cur))
    s = Trace.from_ops(ops).stats()
    assert s["max_live_bytes"] == max_bytes
    assert s["max_live_blocks"] == max_blocks


def test_errors_without_line_numbers_name_the_op():
    with pytest.raises(TraceError) as info:
        Trace.from_ops([(ALLOC, 0, 8), (FREE, 0, 0), (FREE, 0, 0)])
    assert info.value.line is None
    assert str(info.value) == "op 3: double free of id 0 (freed at op 2)"


def test_validate_rechecks():
    t = Trace.from_ops(TINY_OPS)
    t.validate()  # no error
    bad = Trace([ALLOC, ALLOC], [0, 0], [1, 1], validate=False)
    with pytest.raises(TraceError, match="already live"):
        bad.validate()


# --- reading and writing ----------------------------------------------------

@pytest.mark.parametrize("name", ["t.rep", "t.rep.gz"])
def test_round_trip(tmp_path, name):
    t = Trace.from_ops(TINY_OPS, num_ids=5)
    path = tmp_path / name
    write_rep(t, path)
    back = read_rep(path)
    assert_same_ops(t, back)
    assert back.header == (0, 5, 9, 1)
    assert back.name == "t"
    assert back.source == str(path)
    assert list(back.line_numbers) == list(range(5, 14))
    raw = path.read_bytes()
    assert raw.startswith(b"\x1f\x8b") == name.endswith(".gz")
    text = gzip.decompress(raw) if name.endswith(".gz") else raw
    assert text.decode().splitlines()[:6] == ["0", "5", "9", "1", "a 0 10", "a 1 20"]


def test_gz_output_is_reproducible(tmp_path):
    t = Trace.from_ops(TINY_OPS)
    write_rep(t, tmp_path / "a.rep.gz")
    write_rep(t, tmp_path / "b.rep.gz")
    assert (tmp_path / "a.rep.gz").read_bytes() == (tmp_path / "b.rep.gz").read_bytes()


def test_write_rep_header_options():
    t = Trace.from_ops(TINY_OPS)
    assert format_rep(t, sugg_heapsize=4096, weight=3).splitlines()[:4] == ["4096", "3", "9", "3"]


@pytest.mark.parametrize("header", [
    "20000\n3\n4\n1\n",          # classic: sugg_heapsize num_ids num_ops weight
    "1\n3\n4\n0\n",              # CMU: weight num_ids num_ops ignore_ranges
    "20000 3 4 1\n",             # all on one line
    "1 3\n4\t0\n",               # on two lines
    "# made by hand\n\n0\n3\n\n4\n1\n",  # comments and blank lines around
])
def test_header_variants(header):
    t = parse_rep(header + "a 0 8\nr 0 16\na 2 4\nf 0\n")
    assert t.num_ids == 3 and len(t) == 4
    assert t.header[1:3] == (3, 4)
    assert list(t) == [(ALLOC, 0, 8), (REALLOC, 0, 16), (ALLOC, 2, 4), (FREE, 0, 0)]


def test_comments_blank_lines_crlf_and_spacing():
    text = ("0\r\n3\r\n3\r\n1\r\n"
            "# first op next\r\n"
            "a 0 8\r\n"
            "\r\n"
            "   a\t1   16  \r\n"
            "    # indented comment\r\n"
            "f 0\r\n\r\n\r\n")
    t = parse_rep(text)
    assert list(t) == [(ALLOC, 0, 8), (ALLOC, 1, 16), (FREE, 0, 0)]
    assert list(t.line_numbers) == [6, 8, 10]


# The CS:APP driver reads with fscanf: any whitespace separates fields, so it
# reads CR-only files and several ops on a line like one op a line.
FORM_OPS = [(ALLOC, 0, 8), (REALLOC, 0, 16), (ALLOC, 1, 4), (FREE, 0, 0), (ALLOC, 3, 100),
            (FREE, 1, 0)]
FORMS = [
    # (text, line of each op)
    ("0\n4\n6\n1\na 0 8\nr 0 16\na 1 4\nf 0\na 3 100\nf 1\n", [5, 6, 7, 8, 9, 10]),
    ("0\r4\r6\r1\ra 0 8\rr 0 16\ra 1 4\rf 0\ra 3 100\rf 1\r", [5, 6, 7, 8, 9, 10]),
    ("0\r\n4\r\n6\r\n1\r\na 0 8\r\nr 0 16\r\na 1 4\r\nf 0\r\na 3 100\r\nf 1", [5, 6, 7, 8, 9, 10]),
    ("0\n4\n6\n1\na 0 8 r 0 16\na 1 4\tf 0  a 3 100\nf 1\n", [5, 5, 6, 6, 6, 7]),
    ("0 4 6 1 a 0 8 r 0 16 a 1 4 f 0 a 3 100 f 1", [1] * 6),     # all on one line
    ("0\r4\r6\r1\ra 0 8\tr 0 16\r\ra 1 4  f 0\r# c\ra 3 100\rf 1", [5, 5, 7, 7, 9, 10]),
    # LF then CR is two line ends; CRLF one
    ("0\n4\r\n6\r1\na 0 8\r\nr 0 16\ra 1 4\n\rf 0 a 3 100\r\n\r\nf 1\r", [5, 6, 7, 9, 9, 11]),
]


@pytest.mark.parametrize("text, lines", FORMS)
def test_cr_only_and_several_ops_a_line_read_as_one_op_a_line(tmp_path, text, lines):
    plain = tmp_path / "t.rep"
    packed = tmp_path / "t.rep.gz"
    plain.write_bytes(text.encode())
    packed.write_bytes(gzip.compress(text.encode()))
    for t in (parse_rep(text), read_rep(plain), read_rep(packed)):
        assert list(t) == FORM_OPS
        assert list(t.line_numbers) == lines
        assert t.header == (0, 4, 6, 1)


def test_the_forms_use_the_fast_path(monkeypatch):
    def boom(*args):
        raise AssertionError("slow path used")
    monkeypatch.setattr(rep_module, "_parse_body_slow", boom)
    for text, lines in FORMS:
        assert list(parse_rep(text).line_numbers) == lines


# (whole file, line of the error, text the message must contain)
FORM_ERRORS = [
    ("0\r10\r2\r1\ra 0 8\rf 1\r", 6, "free of id 1, which is not live"),
    ("0\r10\r2\r1\r\r\ra 0 8\rx 1\r", 8, "unknown operation 'x'"),
    ("0\r\n10\r\n2\r\n1\r\na 0 8\r\n\r\nf 1\r\n", 7, "free of id 1"),
    ("0\n10\n2\n1\na 0 8 f\n", 5, "wrong number of fields: 'f' takes 1 (f id), found 0"),
    ("0\n10\n3\n1\na 0 8 f 0 f 0\n", 5, "double free of id 0 (freed at line 5)"),
    ("0 10 2 1 a 0 8 q 0", 1, "wrong number of fields: 'a' takes 2 (a id bytes), found 4"),
    ("0 10 2 1 7 a 0 8\n", 1, "unexpected '7' after the 4 header integers"),
    ("0 10 2 1 a 0 8\n f 0 8\n", 2, "wrong number of fields: 'f' takes 1 (f id), found 2"),
    ("0 10 1 1 a 0 8 f 0\n", 1, "the header says num_ops = 1, but the file has 2 operations"),
    # an op does not go on on the next line (mdriver's fscanf would read it)
    ("0\n10\n1\n1\na 0\n8\n", 5, "wrong number of fields: 'a' takes 2 (a id bytes), found 1"),
    # the tokens count up right, but one op's field sits after the next op's letter
    ("0\n10\n2\n1\na 0 f 8 0\n", 5, "wrong number of fields: 'a' takes 2 (a id bytes), found 1"),
    ("0\r10\r1\r1\ra 0\r8\r", 5, "wrong number of fields: 'a' takes 2 (a id bytes), found 1"),
]


@pytest.mark.parametrize("content, line, message", FORM_ERRORS)
def test_errors_in_the_other_forms_name_the_line(tmp_path, content, line, message):
    err = read_error(tmp_path, content)
    assert err.line == line
    assert message in err.message


def test_parse_rep_accepts_text_bytes_and_lines():
    text = rep_text("a 0 8\nf 0")
    for src in (text, text.encode(), text.splitlines(), text.splitlines(keepends=True)):
        t = parse_rep(src, path="x/given.rep")
        assert list(t) == [(ALLOC, 0, 8), (FREE, 0, 0)]
        assert t.name == "given"
        assert list(t.line_numbers) == [5, 6]


def test_empty_trace_and_no_trailing_newline():
    assert len(parse_rep("0\n0\n0\n1")) == 0
    assert list(parse_rep("0\n1\n2\n1\na 0 5\nf 0")) == [(ALLOC, 0, 5), (FREE, 0, 0)]


def test_fast_path_is_used_for_plain_files(monkeypatch):
    """The reference parser must not run on a plain file (speed budget)."""
    def boom(*args):
        raise AssertionError("slow path used")
    monkeypatch.setattr(rep_module, "_parse_body_slow", boom)
    t = parse_rep(rep_text("a 0 8\nr 0 16\nf 0\na 12 3", num_ids=13))
    assert list(t) == [(ALLOC, 0, 8), (REALLOC, 0, 16), (FREE, 0, 0), (ALLOC, 12, 3)]


# --- errors: each names the file and the exact line --------------------------

# (body starting at line 5, line of the error, text the message must contain)
BODY_ERRORS = [
    ("a 0 8\nx 0 8", 6, "unknown operation 'x'"),
    ("a 0 8\nmalloc 0 8", 6, "unknown operation 'malloc'"),
    ("a abc 8", 5, "expected an integer id, got 'abc'"),
    ("a 0 8\nf 0x1", 6, "expected an integer id, got '0x1'"),
    ("a 0 eight", 5, "expected an integer size in bytes, got 'eight'"),
    ("a 0 1_000", 5, "expected an integer size in bytes, got '1_000'"),
    ("a 0 8\na 1", 6, "wrong number of fields: 'a' takes 2 (a id bytes), found 1"),
    ("a 0 8\nf 0 8", 6, "wrong number of fields: 'f' takes 1 (f id), found 2"),
    ("a 0 8\nr 0 8 9", 6, "wrong number of fields: 'r' takes 2"),
    ("a 0 8\na 1 8 # note", 6, "wrong number of fields"),
    ("a 0 8\nf", 6, "wrong number of fields"),
    # the token counts add up, but not line by line
    ("a 0 8 9\nf", 5, "wrong number of fields: 'a' takes 2 (a id bytes), found 3"),
    ("a 0\nf 0 8", 5, "wrong number of fields: 'a' takes 2 (a id bytes), found 1"),
    ("a 0 8\na 10 8", 6, "id 10 is out of range [0, 10)"),
    ("a 0 8\na -1 8", 6, "id -1 is out of range"),
    ("a 0 8\nf 5", 6, "free of id 5, which is not live"),
    ("a 5 8\nf 5\nf 5", 7, "double free of id 5 (freed at line 6)"),
    ("a 5 8\n# gap\n\nf 5\na 1 1\nr 5 16", 10, "realloc of id 5, which was freed at line 8"),
    ("a 5 8\na 5 8", 6, "alloc of id 5, which is already live (allocated at line 5)"),
    ("a 5 8\nr 5 9\na 5 8", 7, "already live (allocated at line 6)"),
    ("a 0 8\na 1 -3", 6, "negative size -3 for id 1"),
    ("a 0 8\nr 0 1099511627777", 6, "absurd size 1099511627777 for id 0"),
    ("a 0 99999999999999999999999999", 5, "absurd size"),
    ("a 0 8\nf 99999999999999999999999999", 6, "out of range"),
    ("a 0 8\na 1 " + "9" * 5000, 6, "got '999999999999999999999999999999...' (5000 characters)"),
    ("a 0 8\na\xa01 8", 6, "unknown operation"),
]


@pytest.mark.parametrize("body, line, message", BODY_ERRORS)
def test_body_errors_name_file_and_line(tmp_path, body, line, message):
    err = read_error(tmp_path, rep_text(body))
    assert err.line == line
    assert message in err.message


# (whole file, line of the error, text the message must contain)
HEADER_ERRORS = [
    ("a 0 8\nf 0\n", 1, "expected an integer for sugg_heapsize (or weight), got 'a' "
                        "(is the header missing?)"),
    ("0\nten\n2\n1\na 0 8\nf 0\n", 2, "expected an integer for num_ids, got 'ten'"),
    ("0\n10\n2.5\n1\n", 3, "expected an integer for num_ops, got '2.5'"),
    ("1" * 5000 + "\n10\n0\n1\n", 1, "(5000 characters)"),
    ("0\n10\n", 2, "expected 4 integers"),
    ("", 1, "expected 4 integers"),
    ("# only a comment\n", 1, "but the file ends after 0"),
    ("0 10 2 1 7\na 0 8\nf 0\n", 1, "unexpected '7' after the 4 header integers"),
    ("0\n-1\n0\n1\n", 2, "num_ids = -1 is out of range"),
    ("0\n10\n-2\n1\n", 3, "num_ops = -2 is negative"),
    # count mismatches point at the num_ops field of the header
    ("0\n10\n3\n1\na 0 8\nf 0\n", 3, "the header says num_ops = 3, but the file has 2 operations"),
    ("0\n10\n1\n1\na 0 8\nf 0\n", 3, "num_ops = 1, but the file has 2"),
    ("# c\n\n0 10\n5 1\na 0 8\nf 0\n", 4, "num_ops = 5"),
]


@pytest.mark.parametrize("content, line, message", HEADER_ERRORS)
def test_header_errors_name_file_and_line(tmp_path, content, line, message):
    err = read_error(tmp_path, content)
    assert err.line == line
    assert message in err.message


def test_invalid_utf8_names_the_line(tmp_path):
    err = read_error(tmp_path, rep_text("a 0 8\nf 0").encode() + b"a 1 \xff8\n",
                     name="enc.rep")
    assert err.line == 7
    assert "UTF-8" in err.message and "0xff" in err.message


def test_invalid_utf8_in_a_comment_is_ignored():
    t = parse_rep(rep_text("a 0 8\nf 0").encode() + b"# caf\xe9\n")
    assert len(t) == 2


def test_errors_deep_in_a_big_file(tmp_path):
    """Bulk parsing must still find the exact line of a late problem."""
    ops = "\n".join(f"a {i} {i % 97 + 1}" for i in range(5000))
    err = read_error(tmp_path, rep_text(ops + "\nf 12\nq 3\nf 0", num_ids=5000))
    assert err.line == 4 + 5000 + 2 and "unknown operation 'q'" in err.message
    # a semantic error behind comments: the filtered fast path maps the lines
    ops_with_comments = ops.replace("a 100 ", "# hundred\na 100 ")
    err = read_error(tmp_path, rep_text(ops_with_comments + "\nf 12\nf 12", num_ids=5000))
    assert err.line == 4 + 5000 + 1 + 2
    assert err.message == f"double free of id 12 (freed at line {4 + 5000 + 1 + 1})"


def test_unreadable_files(tmp_path):
    err = read_error(tmp_path, b"0\n1\n0\n1\n", name="plain-text.rep.gz")
    assert err.line is None and "gzip" in err.message
    good = gzip.compress(rep_text("a 0 8\nf 0").encode())
    err = read_error(tmp_path, good[: len(good) // 2], name="truncated.rep.gz")
    assert err.line is None and "gzip" in err.message
    missing = tmp_path / "missing.rep"
    with pytest.raises(TraceError) as info:
        read_rep(missing)
    assert info.value.path == str(missing) and info.value.line is None
    assert "cannot read" in str(info.value)
    with pytest.raises(TraceError, match="cannot read"):
        read_rep(tmp_path)  # a directory
    with pytest.raises(TraceError, match="cannot write"):
        write_rep(Trace.from_ops(TINY_OPS), tmp_path / "no-such-dir" / "x.rep")


def test_parse_rep_errors_name_the_given_path():
    with pytest.raises(TraceError) as info:
        parse_rep(rep_text("a 0 8\nf 1"), path="given.rep")
    assert str(info.value) == ("given.rep:6: free of id 1, which is not live "
                               "(it was never allocated)")
    with pytest.raises(TraceError) as info:
        parse_rep(rep_text("a 0 8\nf 1"))
    assert info.value.path is None and str(info.value).startswith("6: ")


# --- fuzzing: nothing but TraceError, and the fast path agrees -----------------

def _op_line(kind: int, ident: int, size: int) -> str:
    return f"f {ident}" if kind == FREE else f"{'ar'[kind == REALLOC]} {ident} {size}"


@st.composite
def rep_layouts(draw):
    """(the trace one op a line with LF, the same laid out as mdriver reads it:
    LF, CR or CRLF line ends, several ops on a line, blank lines)."""
    n = draw(st.integers(0, 30))
    ops, live, next_id = [], [], 0
    for _ in range(n):
        choice = draw(st.integers(0, 2))
        if choice == 1 and live:
            ops.append((FREE, live.pop(draw(st.integers(0, len(live) - 1))), 0))
        elif choice == 2 and live:
            ops.append((REALLOC, live[draw(st.integers(0, len(live) - 1))],
                        draw(st.integers(0, 5000))))
        else:
            ops.append((ALLOC, next_id, draw(st.integers(0, 5000))))
            live.append(next_id)
            next_id += 1
    header = ["0", str(max(next_id, 1)), str(len(ops)), "1"]
    plain = "".join(s + "\n" for s in header + [_op_line(*op) for op in ops])
    end = draw(st.sampled_from(["\n", "\r", "\r\n"]))
    laid_out = end.join(header)
    for op in ops:
        # mostly a line end; sometimes a space or tab (same line), or a blank line
        laid_out += draw(st.sampled_from([end, end, end, " ", "\t", end + end])) + _op_line(*op)
    return plain, laid_out + draw(st.sampled_from(["", end]))


def valid_rep_texts():
    return rep_layouts().map(lambda pair: pair[1])


MUTATION_CHARS = list("0123456789arfx -+#\t\r\n\x00\xe9")


@st.composite
def mutated_rep_texts(draw):
    text = draw(valid_rep_texts())
    for _ in range(draw(st.integers(1, 4))):
        pos = draw(st.integers(0, len(text)))
        how = draw(st.sampled_from(["insert", "delete", "replace", "dup-line", "swap-lines",
                                    "move-token", "join-lines", "swap-tokens"]))
        if how == "insert":
            text = text[:pos] + draw(st.sampled_from(MUTATION_CHARS)) + text[pos:]
        elif how == "delete":
            text = text[:pos] + text[pos + 1:]
        elif how == "replace":
            text = text[:pos] + draw(st.sampled_from(MUTATION_CHARS)) + text[pos + 1:]
        else:
            lines = text.split("\n")
            i = draw(st.integers(0, len(lines) - 1))
            j = draw(st.integers(0, len(lines) - 1))
            if how == "dup-line":
                lines.insert(j, lines[i])
            elif how == "join-lines" and i + 1 < len(lines):  # several ops on a line
                lines[i] += draw(st.sampled_from([" ", "\t", "\r"])) + lines.pop(i + 1)
            elif how == "swap-tokens":  # keeps the tokens of a line, breaks their order
                fields = lines[i].split()
                if len(fields) >= 2:
                    k = draw(st.integers(0, len(fields) - 2))
                    fields[k], fields[k + 1] = fields[k + 1], fields[k]
                    lines[i] = " ".join(fields)
            elif how == "move-token":  # keeps the token count, breaks lines
                fields = lines[i].split()
                if fields:
                    lines[i] = " ".join(fields[:-1])
                    lines[j] += " " + fields[-1]
            else:
                lines[i], lines[j] = lines[j], lines[i]
            text = "\n".join(lines)
    return text


def _parse_or_error(src):
    try:
        return parse_rep(src, path="fuzz.rep")
    except TraceError as e:
        assert e.path == "fuzz.rep"
        assert e.line is None or e.line >= 1
        return e


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200))
def test_fuzz_random_bytes_raise_only_trace_error(data):
    _parse_or_error(data)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=200))
def test_fuzz_random_text_raises_only_trace_error(text):
    _parse_or_error(text)


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated_rep_texts())
def test_fuzz_mutated_traces_raise_only_trace_error(text):
    result = _parse_or_error(text)
    if isinstance(result, Trace):
        result.validate()
        # each op's line holds as many kind letters as ops were read from it
        lines = re.split("\r\n|\r|\n", text)
        ops_on = collections.Counter(result.line_numbers.tolist())
        assert all(sum(f in ("a", "r", "f") for f in lines[n - 1].split()) == k
                   for n, k in ops_on.items())


@settings(max_examples=300, deadline=None)
@given(rep_layouts())
def test_valid_traces_parse_and_round_trip(layouts):
    plain, text = layouts
    t = parse_rep(text)
    assert_same_ops(t, parse_rep(plain))
    assert parse_rep(format_rep(t)).header == (0, t.num_ids, len(t), 1)
    assert_same_ops(parse_rep(format_rep(t)), t)


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated_rep_texts())
def test_fast_path_agrees_with_reference_parser(text):
    """Whatever the bulk parser accepts, the line-by-line parser reads the same."""
    # past the (usual) header, with the line ends as the reader gives them
    body = source_module._lf_only("\n".join(text.split("\n")[4:]).encode())
    for fast in (rep_module._parse_body_fast, rep_module._parse_body_filtered):
        got = fast(body, 1)
        if got is None:
            continue
        ref = rep_module._parse_body_slow(body, 1, None)  # must not raise
        for a, b in zip(got, ref):
            assert np.array_equal(a, b)


@st.composite
def bodies_with_tokens_swapped(draw):
    """An op body with several ops on some lines, two neighbouring tokens of
    one line swapped: a field may now sit after the next op's letter."""
    _, text = draw(rep_layouts())
    lines = source_module._lf_only(text.encode()).decode().split("\n")
    body = [line.split() for line in lines]
    # the header may share its last line with ops: swap only past the 4 integers
    seen, start = 0, 0
    while start < len(body) and seen + len(body[start]) <= 4:
        seen += len(body[start])
        start += 1
    if start < len(body):
        body[start] = body[start][4 - seen:]
    candidates = [i for i in range(start, len(body)) if len(body[i]) >= 2]
    if candidates:
        i = draw(st.sampled_from(candidates))
        k = draw(st.integers(0, len(body[i]) - 2))
        body[i][k], body[i][k + 1] = body[i][k + 1], body[i][k]
    return "\n".join(" ".join(fields) for fields in body[start:]).encode(), start + 1


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(bodies_with_tokens_swapped())
def test_fast_path_agrees_when_tokens_move_within_a_line(body_and_line):
    body, first_line = body_and_line
    got = rep_module._parse_body_fast(body, first_line)
    if got is not None:
        ref = rep_module._parse_body_slow(body, first_line, None)  # must not raise
        for a, b in zip(got, ref):
            assert np.array_equal(a, b)


# ------------------------------------------------------------- names, text and writing, word for word

def test_trace_names_drop_gz_then_rep_whatever_their_case():
    from heapscope.traces.rep import trace_name
    assert trace_name("/a/b/binary2-bal.rep") == "binary2-bal"
    assert trace_name("x/realloc.REP.GZ") == "realloc"
    assert trace_name("t.gz") == "t" and trace_name("t.rep.txt") == "t.rep.txt"
    assert trace_name(".rep") == ".rep" and trace_name(".gz") == ".gz"     # nothing would be left
    assert trace_name("a.rep.rep") == "a.rep"                             # one .rep only


def test_format_rep_writes_the_classic_header_and_one_op_a_line():
    t = Trace.from_ops([("a", 0, 8), ("r", 0, 24), ("a", 1, 1), ("f", 0), ("f", 1)])
    assert format_rep(t) == "0\n2\n5\n1\na 0 8\nr 0 24\na 1 1\nf 0\nf 1\n"
    assert format_rep(t, sugg_heapsize=4096, weight=7).startswith("4096\n2\n5\n7\na 0 8\n")
    assert format_rep(Trace.from_ops([])) == "0\n0\n0\n1\n"


def test_write_rep_plain_and_gzip_and_its_errors(tmp_path):
    t = Trace.from_ops([("a", 0, 8), ("f", 0)])
    plain, packed, upper = tmp_path / "t.rep", tmp_path / "t.rep.gz", tmp_path / "T.REP.GZ"
    write_rep(t, plain)
    write_rep(t, packed, sugg_heapsize=64)
    write_rep(t, upper)
    assert plain.read_bytes() == b"0\n1\n2\n1\na 0 8\nf 0\n"
    assert gzip.decompress(packed.read_bytes()) == b"64\n1\n2\n1\na 0 8\nf 0\n"
    assert packed.read_bytes()[4:8] == b"\0\0\0\0"                     # mtime 0: the same bytes each time
    assert packed.read_bytes()[3] == 0                                  # and no file name in the header
    assert gzip.decompress(upper.read_bytes()).startswith(b"0\n1\n2\n1\n")
    target = tmp_path / "no-such-dir" / "x.rep"
    with pytest.raises(TraceError) as info:
        write_rep(t, target)
    assert str(info.value) == f"{target}: cannot write the file: No such file or directory"
    assert info.value.line is None


def test_parse_rep_refuses_lines_that_are_not_text():
    with pytest.raises(TraceError) as info:
        parse_rep(["0 1 1 1\n", 5], path="list.rep")
    assert str(info.value) == "list.rep: expected lines of text, got int"
    assert len(parse_rep([b"0 1 2 1\n", bytearray(b"a 0 8"), "f 0\n"])) == 2    # bytes, bytearray and str lines


def test_a_lone_surrogate_in_a_line_of_text_is_a_trace_error():
    with pytest.raises(TraceError) as info:
        parse_rep(["0 1 2 1", "a 0 8", "f \ud800"], path="s.rep")
    assert info.value.path == "s.rep" and info.value.line == 3 and "UTF-8" in info.value.message


def test_a_header_byte_that_is_not_utf8_is_placed_in_its_own_line(tmp_path):
    # the header starts on line 2, after an empty line: the bad byte is the first of that line
    err = read_error(tmp_path, b"\n\xff0\n10\n2\n1\n")
    assert err.line == 2 and err.message == "not UTF-8 text (byte 0xff at column 1)"


@pytest.mark.parametrize("comment_line", [0, 1, 2, 3])
def test_a_comment_on_any_line_of_the_file_is_blank(comment_line):
    lines = ["0 1 2 1", "a 0 8", "f 0", ""]
    lines.insert(comment_line, "# a comment")
    t = parse_rep("\n".join(lines))
    assert [tuple(int(x) for x in op) for op in t] == [(ALLOC, 0, 8), (FREE, 0, 0)]


def test_more_operations_than_the_limit_names_the_first_line_past_it(tmp_path):
    from heapscope.traces.source import ReadLimits
    path = tmp_path / "long.rep"
    # the header admits 2 operations, the file holds 4; the limit is 3: line 5 + 3 = 8 is the 4th op
    path.write_text("0\n4\n2\n1\na 0 8\nf 0\na 1 8\nf 1\n")
    with pytest.raises(TraceError) as info:
        read_rep(path, limits=ReadLimits(max_ops=3))
    assert str(info.value) == f"{path}:8: more than 3 operations, the most heapscope reads"


@pytest.mark.parametrize("text", ["0 1\n# between the header's lines\n2 1\na 0 8\nf 0\n",
                                  "0\n# one\n1 2\n# two\n1\na 0 8\nf 0\n"])
def test_a_comment_between_the_header_lines_is_blank(text):
    t = parse_rep(text)
    assert t.header == (0, 1, 2, 1) and len(t) == 2
