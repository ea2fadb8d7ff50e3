"""The packed trace (issue 25): a .rep read into packed arrays as a stream,
checked and counted a chunk at a time, gives exactly what the text says.

The expected values come from a plain Python reading of the text (a line
split into fields; a dict of the live ids for the statistics), never from
the reader; the chunked checks are compared with themselves in one chunk,
so that every chunk boundary is crossed."""

from __future__ import annotations

import gzip
import tracemalloc
from contextlib import contextmanager

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from heapscope.traces import TraceError, parse_rep, read_rep
from heapscope.traces import trace as trace_module
from tests.depth import walked_examples
from heapscope.traces.source import CHUNK_BYTES

from .heap_harness import op_sequences

LETTERS = {"a": 0, "f": 1, "r": 2}


@contextmanager
def check_chunk(n: int):
    """CHECK_CHUNK set to ``n`` for a while (hypothesis runs a test many times
    within one fixture, so this is no fixture)."""
    old = trace_module.CHECK_CHUNK
    trace_module.CHECK_CHUNK = n
    try:
        yield
    finally:
        trace_module.CHECK_CHUNK = old


def plain_reading(text: str):
    """(kinds, ids, sizes, lines) of a .rep text with one op a line, read in Python."""
    kinds, ids, sizes, lines = [], [], [], []
    header = 0
    for number, line in enumerate(text.splitlines(), 1):
        fields = line.split()
        if not fields or fields[0].startswith("#"):
            continue
        if header < 4:
            header += 1
            continue
        kinds.append(LETTERS[fields[0]])
        ids.append(int(fields[1]))
        sizes.append(int(fields[2]) if len(fields) > 2 else 0)
        lines.append(number)
    return kinds, ids, sizes, lines


def plain_stats(kinds, ids, sizes) -> dict:
    """Trace.stats() computed op by op with a dict of the live ids."""
    live: dict[int, int] = {}
    live_bytes = max_bytes = max_blocks = 0
    requested = [s for k, s in zip(kinds, sizes) if k != 1]
    for k, i, s in zip(kinds, ids, sizes):
        if k == 1:
            live_bytes -= live.pop(i)
        else:
            live_bytes += s - live.get(i, 0)
            live[i] = s
        max_bytes = max(max_bytes, live_bytes)
        max_blocks = max(max_blocks, len(live))
    return {"allocs": kinds.count(0), "frees": kinds.count(1), "reallocs": kinds.count(2),
            "max_live_bytes": max_bytes, "max_live_blocks": max_blocks,
            "total_requested": sum(requested), "min_size": min(requested, default=0),
            "max_size": max(requested, default=0),
            "mean_size": sum(requested) / len(requested) if requested else 0.0}


def plain_previous(ids) -> list[int]:
    last: dict[int, int] = {}
    out = []
    for t, i in enumerate(ids):
        out.append(last.get(i, -1))
        last[i] = t
    return out


def rep_of(ops, num_ids: int | None = None) -> str:
    num_ids = max((i for _, i, _ in ops), default=-1) + 1 if num_ids is None else num_ids
    body = [f"a {i} {s}" if k == 0 else f"f {i}" if k == 1 else f"r {i} {s}" for k, i, s in ops]
    return "\n".join(["0", str(num_ids), str(len(ops)), "1"] + body) + "\n"


def assert_reads_as_written(trace, text: str) -> None:
    kinds, ids, sizes, lines = plain_reading(text)
    assert trace.kind.dtype == np.uint8 and trace.ids.dtype == np.int32
    assert trace.sizes.dtype == np.int64 and trace.line_numbers.dtype == np.int32
    assert trace.kind.tolist() == kinds
    assert trace.ids.tolist() == ids
    assert trace.sizes.tolist() == sizes
    assert trace.line_numbers.tolist() == lines
    stats = trace.stats()
    assert {k: stats[k] for k in plain_stats(kinds, ids, sizes)} == plain_stats(kinds, ids, sizes)
    assert trace.previous_same_id().tolist() == plain_previous(ids)


@pytest.mark.parametrize("example", walked_examples(), ids=lambda ex: ex.name)
def test_every_bundled_trace_reads_as_its_text_says(example):
    raw = example.path.read_bytes()
    text = (gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw).decode()
    assert_reads_as_written(read_rep(example.path), text)


@settings(max_examples=60, deadline=None)
@given(ops=op_sequences(max_ops=60, max_size=5000), chunk=st.integers(1, 9))
def test_random_traces_read_and_count_the_same_in_any_chunk(ops, chunk):
    text = rep_of(ops)
    whole = parse_rep(text)
    assert_reads_as_written(whole, text)
    with check_chunk(chunk):
        chunked = parse_rep(text)
        assert chunked.stats() == whole.stats()
        assert chunked.previous_same_id().tolist() == whole.previous_same_id().tolist()


@st.composite
def broken_traces(draw):
    """A valid trace with one op changed into a mistake somewhere."""
    ops = list(draw(op_sequences(max_ops=40, max_size=100)))
    i = draw(st.integers(0, len(ops) - 1))
    k, ident, size = ops[i]
    ops[i] = draw(st.sampled_from([(1, ident, 0), (0, ident, size), (2, ident + 1000, 8),
                                   (0, 99999, 8), (1, ops[0][1], 0)]))
    return ops


@settings(max_examples=80, deadline=None)
@given(ops=broken_traces(), chunk=st.integers(1, 7))
def test_the_first_mistake_is_reported_in_any_chunk(ops, chunk):
    text = rep_of(ops, num_ids=2000)

    def error():
        try:
            parse_rep(text, "t.rep")
        except TraceError as exc:
            return str(exc)
        return None

    whole = error()
    with check_chunk(chunk):
        assert error() == whole


def test_an_id_past_int32_is_reported_with_its_value(tmp_path):
    path = tmp_path / "big.rep"
    path.write_text("0\n10\n2\n1\na 0 8\na 5000000000 8\n")
    with pytest.raises(TraceError, match=r"big.rep:6: id 5000000000 is out of range \[0, 10\)"):
        read_rep(path)


# ------------------------------------------------------- read as a stream
STREAM_OPS = 2_000_000
#: what a read holds beside numpy's arrays: a block of text (CHUNK_BYTES)
#: and its copies as it is parsed, never an object per operation (2M ops as
#: Python ints in lists would be 100 MB and more)
PYTHON_OBJECT_BOUND = 6 * CHUNK_BYTES
#: numpy's arrays at the peak (docs/traces.md): the trace's 17 bytes an op,
#: the previous-op index (4) and the sort's indices (8, then 4) while it runs
ARRAY_BYTES_PER_OP = 34


@pytest.fixture(scope="module")
def stream_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("stream") / "two-million.rep"
    half = STREAM_OPS // 2
    body = "".join(f"a {i} {16 + i % 512}\nf {i}\n" for i in range(half))
    path.write_text(f"0\n{half}\n{STREAM_OPS}\n1\n{body}")
    return path


def test_a_2m_op_trace_is_read_without_an_object_per_op(stream_file):
    not_numpy = tracemalloc.DomainFilter(inclusive=False, domain=np.lib.tracemalloc_domain)
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        trace = read_rep(stream_file)
        python_peak = tracemalloc.get_traced_memory()[1]
        snapshot = tracemalloc.take_snapshot().filter_traces([not_numpy])
    finally:
        tracemalloc.stop()
    assert len(trace) == STREAM_OPS
    assert trace.stats()["max_live_blocks"] == 1
    held_objects = sum(stat.size for stat in snapshot.statistics("filename"))
    assert held_objects < PYTHON_OBJECT_BOUND, f"{held_objects:,} bytes of Python objects kept"
    assert python_peak < ARRAY_BYTES_PER_OP * STREAM_OPS + PYTHON_OBJECT_BOUND, \
        f"peak {python_peak:,} bytes: {python_peak / STREAM_OPS:.1f} an op"
