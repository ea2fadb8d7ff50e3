"""The build's fast rows of measures (``Strategy.measure_row``) against the
heap walked after every op.

TLSF, buddy and BSD buckets pack their own rows: the fragmentation probe
worked out in place (bitmaps, AVAIL counts, bucket counts) and only the
counters they add to.  Here every row of a build is compared with what the
plain walk of the heap says after the same op: F, the largest free block,
the top block and the largest other one from the free blocks themselves, A
and the header bytes from the used ones, H from the footprint, L from the
program; and the counters with the per-op record of the public calls."""

from __future__ import annotations

from itertools import compress
from operator import add, not_
from pathlib import Path

import pytest
from hypothesis import given, settings

from heapscope.allocators.metrics import ROW_FIELDS
from heapscope.allocators.registry import make_strategy
from heapscope.allocators.strategy import FREE_BLOCK, USED
from heapscope.allocators.replay import Program, Timeline, apply_op
from heapscope.allocators.tlsf import TLSF
from heapscope.traces import Trace, load_trace

from .depth import pick
from .heap_harness import op_sequences

BUNDLED = Path(__file__).resolve().parent.parent / "traces" / "bundled"

FAST_ROWS = ["tlsf", "buddy", "bsd-buckets", "next-fit", "first-fit", "segregated-first-fit", "rotating-list", "v7-malloc", "splay-best-fit", "dlmalloc", "gnu-malloc", "phkmalloc"]
SETTINGS = [{}, {"heap_limit": 12_000}, {"pool_size": 9_000}, {"word": 4}]


def walked_row(s, program: Program, rec) -> dict:
    """The measures after one op, from walk(): the top block is the free block
    at the end of the heap (TLSF: just below its end sentinel).

    The walk is read column by column (its plain tuples, ``walk_tuples``, as
    ``walk()`` wraps them in Blocks; ``compress`` picks a column's free or
    used entries): the same sums and maxima as block by block, without a
    Python frame a block -- BSD buckets' walk is some 700 blocks, after each
    of 5000 ops."""
    end = s.sentinel if isinstance(s, TLSF) else s.arena.brk
    blocks = s.walk_tuples()
    addrs, sizes, states, _, _, headers = zip(*blocks) if blocks else ((),) * 6
    is_free = list(map(FREE_BLOCK.__eq__, states))
    is_used = list(map(USED.__eq__, states))
    free_sizes = list(compress(sizes, is_free))
    at_end = list(map(end.__eq__, map(add, compress(addrs, is_free), free_sizes)))
    top = next(compress(free_sizes, at_end), 0)
    below = max(compress(free_sizes, map(not_, at_end)), default=0)
    return {"heap": s.footprint, "live": program.live_bytes, "in_use": sum(compress(sizes, is_used)),
            "headers": sum(compress(headers, is_used)), "free": sum(free_sizes),
            "largest_free": max(top, below), "top_free": top, "largest_below_top": below,
            "search": s.search_length(rec), "splits": rec.splits, "merges": rec.merges,
            "grows": rec.grows, "rotations": rec.rotations, "work": rec.work,
            "payload": -1 if rec.payload is None else rec.payload}


def assert_rows_match_the_walk(name: str, params: dict, ops, every: int = 1, **build) -> None:
    """Every row of the build against the walk, or with ``every``, the rows
    after every ``every``-th op (each op is still replayed)."""
    tl = Timeline(Trace.from_ops(ops, name="ops"), name, params, **build).build()
    s = make_strategy(name, **params)
    s.record = False
    program = Program()
    series = tl.series
    for t, (kind, ident, size) in enumerate(ops):
        rec = apply_op(s, program, kind, ident, size)
        if t % every:
            continue
        want = walked_row(s, program, rec)
        got = {col: int(getattr(series, col)[t]) for col in want}
        assert got == want, f"{name} {params}, after op {t} {(kind, ident, size)}: " + ", ".join(
            f"{c} built {got[c]}, walked {want[c]}" for c in want if got[c] != want[c])


@pytest.mark.parametrize("name", FAST_ROWS)
def test_each_policy_packs_its_own_row(name):
    # The test below must be testing the fast rows, not the default one.
    s = make_strategy(name)
    fields, _ = s.measure_row(s.rec)
    assert fields != ROW_FIELDS and set(fields) < set(ROW_FIELDS)


@pytest.mark.parametrize("name", FAST_ROWS)
@pytest.mark.parametrize("params", SETTINGS, ids=["sbrk", "limit", "pool", "ilp32"])
@settings(max_examples=12, deadline=None)
@given(ops=op_sequences(max_ops=150, max_size=5000))
def test_built_rows_equal_the_walk_after_every_op_of_random_programs(name, params, ops):
    assert_rows_match_the_walk(name, params, ops, checkpoint_every=11)


@pytest.mark.parametrize("name", FAST_ROWS)
def test_built_rows_equal_the_walk_after_every_op_of_a_bundled_trace(name):
    """The deep suite walks the heap after each of the 5000 ops; the quick
    one after every third (the walk is the cost: BSD buckets' is some 700
    blocks; every op is still replayed, and the random programs above
    compare the row of every op in both suites)."""
    trace = load_trace(str(BUNDLED / "sqlite3-sql.rep.gz"))
    ops = list(trace)[:5000]
    assert_rows_match_the_walk(name, {}, ops, every=pick(3, 1))
