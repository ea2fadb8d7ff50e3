"""From calls on addresses to ops on ids (traces/pointer_trace.py), worked by
hand: each allocation a new id, unknown frees dropped and counted, an address
handed out again while live counted as a missed free, blocks live at the end
freed there oldest first, forks continuing their parent's heap, limits."""

import pytest

from heapscope.traces.errors import TraceError
from heapscope.traces.pointer_trace import PointerTrace
from heapscope.traces.trace import ALLOC, FREE, REALLOC

A, F, R = ALLOC, FREE, REALLOC


def ops(trace):
    return [tuple(int(x) for x in op) for op in trace]


def test_each_allocation_is_a_new_id_even_at_a_reused_address():
    p = PointerTrace("t", "prog.ltrace")
    p.alloc(0x10, 8, line=3)
    assert p.free(0x10, line=4) is True
    p.alloc(0x10, 24, line=5)            # same address, a new block of the program's life
    t = p.finish(line=9)
    assert ops(t) == [(A, 0, 8), (F, 0, 0), (A, 1, 24), (F, 1, 0)]
    assert t.num_ids == 2 and t.name == "t" and t.source == "prog.ltrace"
    assert list(t.line_numbers) == [3, 4, 5, 9]
    assert p.counts.live_at_end == 1 and p.counts.unknown_frees == 0 and len(p) == 4


def test_unknown_frees_are_dropped_and_unknown_reallocs_become_allocations():
    p = PointerTrace()
    assert p.free(0x99) is False
    p.realloc(0x50, 0x60, 32)            # never saw 0x50: a new allocation at 0x60
    p.free(0x60)
    assert ops(p.finish()) == [(A, 0, 32), (F, 0, 0)]
    assert (p.counts.unknown_frees, p.counts.unknown_reallocs, p.counts.missed_frees) == (1, 1, 0)


def test_a_realloc_keeps_its_id_and_follows_the_new_address():
    p = PointerTrace()
    p.alloc(0x10, 8)
    p.alloc(0x20, 8)
    p.realloc(0x10, 0x30, 100)
    assert p.free(0x10) is False          # the old address is no longer live
    p.free(0x30)
    assert ops(p.finish()) == [(A, 0, 8), (A, 1, 8), (R, 0, 100), (F, 0, 0), (F, 1, 0)]


def test_an_address_handed_out_again_while_live_is_a_missed_free():
    p = PointerTrace()
    p.alloc(0x10, 8)
    p.alloc(0x10, 16)                    # we never saw 0x10 freed
    p.alloc(0x20, 4)
    p.realloc(0x20, 0x10, 40)            # realloc onto a live address: that one was freed too
    t = p.finish()
    assert ops(t) == [(A, 0, 8), (F, 0, 0), (A, 1, 16), (A, 2, 4), (F, 1, 0), (R, 2, 40), (F, 2, 0)]
    assert p.counts.missed_frees == 2 and p.counts.live_at_end == 1


def test_blocks_live_at_the_end_are_freed_oldest_first_unless_kept():
    p = PointerTrace()
    for ptr, size in ((0x30, 1), (0x10, 2), (0x20, 3)):
        p.alloc(ptr, size)
    assert ops(p.finish()) == [(A, 0, 1), (A, 1, 2), (A, 2, 3), (F, 0, 0), (F, 1, 0), (F, 2, 0)]
    assert p.counts.live_at_end == 3
    q = PointerTrace()
    q.alloc(0x10, 5)
    t = q.finish(keep_live=True)
    assert ops(t) == [(A, 0, 5)] and q.counts.live_at_end == 1 and t.line_numbers is None


def test_release_restore_and_free_id_for_a_realloc_under_way():
    p = PointerTrace()
    p.alloc(0x10, 8)
    entry = p.release(0x10)
    assert entry == (0, 8) and p.release(0x10) is None
    p.restore(0x10, entry)                # the realloc failed: the block stays
    assert p.live == {0x10: (0, 8)}
    p.alloc(0x20, 4)
    p.restore(0x20, (7, 7))               # an address live again is not overwritten
    assert p.live[0x20] == (1, 4)
    released = p.release(0x10)
    p.free_id(released[0], line=12)       # realloc(p, 0) freed it
    p.moved(1, 0x40, 64, line=13)         # (a moved id need not be released through us)
    assert ops(p.finish(keep_live=True)) == [(A, 0, 8), (A, 1, 4), (F, 0, 0), (R, 1, 64)]
    assert list(p.finish(keep_live=True).line_numbers) == [0, 0, 12, 13]


def test_a_fork_continues_the_parents_heap_without_its_lines():
    parent = PointerTrace("parent", "p.log")
    parent.alloc(0x10, 8, line=1)
    parent.alloc(0x20, 16, line=2)
    snap = parent.snapshot()
    parent.free(0x10, line=3)             # after the fork: not the child's
    child = PointerTrace.continued(snap, "child", "c.log")
    assert snap.ops == 2 and snap.next_id == 2 and snap.live == {0x10: (0, 8), 0x20: (1, 16)}
    child.free(0x20, line=7)
    child.alloc(0x30, 4, line=8)
    t = child.finish(line=9)
    assert ops(t) == [(A, 0, 8), (A, 1, 16), (F, 1, 0), (A, 2, 4), (F, 0, 0), (F, 2, 0)]
    assert list(t.line_numbers) == [0, 0, 7, 8, 9, 9] and t.name == "child" and t.source == "c.log"
    assert ops(parent.finish()) == [(A, 0, 8), (A, 1, 16), (F, 0, 0), (F, 1, 0)]


def test_an_empty_trace():
    t = PointerTrace().finish()
    assert len(t) == 0 and t.num_ids == 0 and t.line_numbers is None


def test_sizes_and_the_op_limit_are_errors_naming_the_input_line():
    p = PointerTrace(source="x.ltrace")
    p.alloc(0x10, 2**40)                  # the largest size accepted
    with pytest.raises(TraceError) as e:
        p.alloc(0x20, 2**40 + 1, line=4)
    assert str(e.value) == "x.ltrace:4: absurd size 1099511627777 (more than 2**40 bytes)"
    with pytest.raises(TraceError) as e:
        p.moved(0, 0x30, -1, line=5)
    assert str(e.value) == "x.ltrace:5: negative size -1"
    with pytest.raises(TraceError) as e:
        p.alloc(0x40, -2)
    assert e.value.line is None and e.value.message == "negative size -2"
    small = PointerTrace(source="y.ltrace", max_ops=3)
    for i in range(3):
        small.alloc(0x10 * (i + 1), 1, line=i + 1)
    with pytest.raises(TraceError) as e:
        small.free(0x10, line=4)
    assert str(e.value) == "y.ltrace:4: more than 3 operations: heapscope reads traces of at most 3"
    big = PointerTrace(max_ops=1500)
    for i in range(1500):
        big.alloc(i + 1, 0)
    with pytest.raises(TraceError, match="more than 1,500 operations: heapscope reads traces of at most 1,500"):
        big.alloc(0, 0)
    assert PointerTrace.continued(small.snapshot()).max_ops == 3


def test_calls_without_a_line_record_line_0():
    p = PointerTrace()
    p.alloc(0x10, 8, line=3)
    p.release(0x10)                       # a realloc under way
    p.moved(0, 0x20, 16)                  # returned 0x20; no line given
    p.alloc(0x30, 1, line=4)
    p.free_all()                          # no line given either
    assert list(p.finish().line_numbers) == [3, 0, 4, 0, 0]


def test_counts_and_snapshots_are_plain_records():
    from heapscope.traces.pointer_trace import Counts, Snapshot
    assert Counts() == Counts(0, 0, 0, 0, {}) and Counts().extra == {}
    a, b = Counts(), Counts()
    a.extra["x"] = 1
    assert b.extra == {}                  # each has its own dict
    p = PointerTrace()
    p.alloc(0x10, 8)
    assert p.snapshot() == Snapshot(p, 1, {0x10: (0, 8)}, 1)


def test_every_unknown_free_is_counted_and_a_trace_is_unnamed_by_default():
    p = PointerTrace()
    p.alloc(0x10, 8)
    for ptr in (0x99, 0x98, 0x99):        # three frees of pointers never allocated
        assert p.free(ptr) is False
    assert p.free(0x10) is True
    t = p.finish()
    assert p.counts.unknown_frees == 3
    assert t.name == "" and t.source is None
