"""K&R 8.7 next fit, worked by hand, and first fit beside it.

LP64: sizeof(Header) = 16 bytes (a pointer and an unsigned, padded to a long),
so one unit is 16 bytes and a request of n bytes takes (n + 15) // 16 + 1
units.  morecore asks for max(nunits, 1024) units = 16 KiB at least.
"""

import pytest
from hypothesis import HealthCheck, given, settings

from heapscope.allocators.events import (Coalesce, Grow, InsertionPoint, ListInsert, ListRemove, Placed, PointerMove,
                                         Released,
                                         Split, Visit, WalkStep)
from heapscope.allocators.first_fit import FirstFit
from heapscope.allocators.next_fit import BASE, NextFit
from heapscope.allocators.replay import Timeline
from heapscope.allocators.strategy import HeapInvariantError
from heapscope.traces import Trace

from .heap_harness import ALLOC, FREE, assert_probe_matches_walk, op_sequences, run_checked


def ring(s: NextFit) -> list[tuple[int, int]]:
    """The free list as (address, units)."""
    return [(a, s.size[a]) for a in s.free_list()]


def test_kr_next_fit_by_hand():
    s = NextFit()

    # 1. malloc(100): 8 units.  The list holds only base, so the search wraps at
    #    once and morecore(8) asks sbrk for 1024 units = 16384 bytes at 0.  free()
    #    puts [0, 1024u) on the list; the search resumes after base, finds block 0
    #    and cuts its tail: 0 keeps 1016 units, the new block is at 1016*16 = 16256,
    #    payload 16272.  The rover stays at base (prevp).
    a = s.malloc(100)
    s.check()
    assert a == 16272
    assert s.heap_size == 16384
    assert ring(s) == [(0, 1016)]
    assert s.freep == BASE
    assert s.rec.visits == 1 and s.rec.grows == 1 and s.rec.splits == 1
    # morecore's new memory goes through free(): the ring was empty, so its
    # place is between base and base, and it is linked there; then the search.
    assert s.rec.events == [Grow(0, 16384), InsertionPoint(0, 16384, None, None), ListInsert(0, 16384, ()),
                            Visit(0, 16384, True), Split(0, 16384, 16256, 128, 0, 16256),
                            Placed(16256, 128, 16272, 100)]

    # 2. malloc(20): 3 units cut from the tail of block 0: 0 keeps 1013 units,
    #    the block is at 1013*16 = 16208, payload 16224.
    b = s.malloc(20)
    assert b == 16224
    # 3. malloc(300): 20 units: 0 keeps 993, block at 993*16 = 15888, payload 15904.
    c = s.malloc(300)
    assert c == 15904
    s.check()
    assert ring(s) == [(0, 993)]

    # 4. free(b): block 16208.  The walk from the rover (base) passes block 0
    #    (0 < 16208 and 0 is the highest free block) and stops there; neither
    #    neighbour is free (c below, a above).  The rover moves to block 0.
    s.free(b)
    s.check()
    assert ring(s) == [(0, 993), (16208, 3)]
    assert s.freep == 0
    assert PointerMove("rover", None, 0) in s.rec.events
    # The walk is free's search: one Visit on block 0, where it stops; then
    # the place found (0 < bp, past the highest block) and the link.
    assert s.rec.events == [Released(16208, 48), Visit(0, 15888, True, True),
                            InsertionPoint(16208, 48, 0, None), ListInsert(16208, 48, ()),
                            PointerMove("rover", None, 0)]
    assert s.rec.visits == 1

    # 5. malloc(40): 4 units.  Next fit starts AFTER the rover: block 16208 (3 units,
    #    too small), then base, then block 0, which fits: its tail goes, 0 keeps
    #    989 units, the block is at 989*16 = 15824.  Rover = base (the block before).
    d = s.malloc(40)
    s.check()
    assert d == 15840
    assert [(e.addr, e.fits) for e in s.rec.events if isinstance(e, Visit)] == [(16208, False), (0, True)]
    assert s.rec.visits == 2
    assert s.freep == BASE

    # 6. free(c): block 15888, 20 units.  Its upper neighbour 16208 (3 units) is
    #    free: they join into 23 units at 15888.  Block 0 ends at 15824 (d sits
    #    between), so no lower join.  Rover = block 0.
    s.free(c)
    s.check()
    assert ring(s) == [(0, 989), (15888, 23)]
    assert Coalesce(15888, 320, 16208, 48) in s.rec.events
    assert s.freep == 0
    # 0 < 15888 < 16208: insert here.  The upper join takes 16208 off the ring
    # and bp is linked in its place, 368 bytes.
    assert s.rec.events == [Released(15888, 320), Visit(0, 15824, True, True),
                            InsertionPoint(15888, 320, 0, 16208), ListRemove(16208, 48, ()),
                            Coalesce(15888, 320, 16208, 48), ListInsert(15888, 368, ()),
                            PointerMove("rover", None, 0)]

    # 7. malloc(350): 23 units.  After the rover comes block 15888, an exact fit:
    #    it is unlinked whole, payload 15904.  (First fit would cut block 0 instead.)
    f = s.malloc(350)
    s.check()
    assert f == 15904
    assert s.rec.splits == 0 and s.rec.visits == 1
    assert ring(s) == [(0, 989)]

    # 8. free(d): block 15824, 4 units, joins block 0 below it (0 + 989*16 = 15824):
    #    block 0 grows back to 993 units.
    s.free(d)
    s.check()
    assert ring(s) == [(0, 993)]
    assert s.rec.merges == 1

    # 9. malloc(16400): 1026 units.  After the rover (block 0) comes base, then
    #    block 0 itself: too small, and the search is back at the rover, so
    #    morecore(1026) (> NALLOC) grows the heap by 1026*16 = 16416 bytes at 16384.
    #    The new block is not next to block 0 (a and f sit between), so it is
    #    linked after it, and the search takes it as an exact fit: payload 16400.
    g = s.malloc(16400)
    s.check()
    assert g == 16400
    assert s.heap_size == 16384 + 16416
    assert s.rec.visits == 2 and s.rec.grows == 1
    assert ring(s) == [(0, 993)]


def test_first_fit_cuts_the_lowest_block_where_next_fit_took_the_exact_fit():
    # The same first six steps as above, then malloc(350): first fit searches
    # from base, so block 0 (989 units) comes first and its tail is cut:
    # 0 keeps 989 - 23 = 966 units, block at 966*16 = 15456, payload 15472.
    s = FirstFit()
    a, b, c = s.malloc(100), s.malloc(20), s.malloc(300)
    assert (a, b, c) == (16272, 16224, 15904)
    s.free(b)
    d = s.malloc(40)
    assert d == 15840
    assert s.rec.visits == 1            # block 0 is first from base and fits
    s.free(c)
    f = s.malloc(350)
    s.check()
    assert f == 15472
    assert ring(s) == [(0, 966), (15888, 23)]


def test_failed_morecore_returns_null_and_keeps_the_heap():
    s = NextFit(heap_limit=16384)
    assert s.malloc(16000) is not None
    assert s.malloc(1000) is None          # needs another 16 KiB: past the limit
    assert s.rec.failed
    s.check()
    assert s.heap_size == 16384


def test_check_detects_uncoalesced_neighbours():
    s = NextFit()
    a = s.malloc(100)
    s.malloc(100)
    s.free(a)
    s.check()
    # Corrupt: split the big free block 0 into two free blocks by hand.
    first = s.free_list()[0]
    units = s.size[first]
    half = units // 2
    s.size[first] = half
    s.size[first + half * s.unit] = units - half
    s.next[first + half * s.unit] = s.next[first]
    s.next[first] = first + half * s.unit
    with pytest.raises(HeapInvariantError, match="were not joined"):
        s.check()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(op_sequences())
def test_next_fit_random_traces_keep_every_invariant(ops):
    run_checked(NextFit(), ops)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(op_sequences())
def test_first_fit_random_traces_keep_every_invariant(ops):
    run_checked(FirstFit(), ops)


@settings(max_examples=60, deadline=None)
@given(op_sequences(max_size=9000))
def test_next_fit_under_a_heap_limit(ops):
    run_checked(NextFit(heap_limit=40000, word=4), ops)


@settings(max_examples=80, deadline=None)
@given(op_sequences(max_size=20000))
def test_running_free_index_matches_a_walk_of_the_free_list(ops):
    for s in (NextFit(), FirstFit()):
        assert_probe_matches_walk(s, ops)


def test_morecore_inside_malloc_is_work_but_not_search():
    # Twelve 1000-byte blocks (63 units each) cut from the first 16 KiB, every
    # other one freed: seven free blocks.  malloc(20000) finds none big enough,
    # so morecore frees 20 KiB of new memory, and free's walk from the rover
    # (block 0, left there by the malloc(10)) to the new block's place passes
    # the six other free blocks.  Those six are work, not search: the search
    # length stays the blocks the search looked at, the ones the view numbers.
    s = NextFit()
    ps = [s.malloc(1000) for _ in range(12)]
    for p in ps[::2]:
        s.free(p)
    s.malloc(10)
    assert s.rover == 0 and len(s.free_list()) == 7
    s.malloc(20000)
    visits = [e for e in s.rec.events if isinstance(e, Visit)]
    walk = [e for e in s.rec.events if isinstance(e, WalkStep)]
    assert s.rec.walked == 6
    assert s.rec.visits == len(visits) and not any(v.place for v in visits)
    # morecore's walk is shown, as WalkSteps, not as the malloc's search
    assert len(walk) == 6 and [w.stop for w in walk] == [False] * 5 + [True]
    assert [w.addr for w in walk] == sorted(w.addr for w in walk)
    assert s.rec.work == s.rec.visits + 6 + s.rec.splits + s.rec.merges
    s.check()


def test_a_free_walk_is_the_search_length_of_the_free():
    # docs/strategies/next-fit.md: free walks the ring from the rover to the
    # block's address; the free blocks it passes (base not counted) are the
    # free's search length ("free: blocks walked" on the gauge).
    # Eight malloc(10) (2 units each) cut from the top of the first 16 KiB:
    # blocks at 16352 (id 0), 16320, ... 16128 (id 7); block 0 keeps 1008 units.
    ops = [(ALLOC, i, 10) for i in range(8)]
    # free id 6 (16160): rover at base, walks past block 0 (1); rover = 0.
    # free id 4 (16224): from block 0 past 16160 (1); rover = 16160.
    # free id 2 (16288): from 16160 past 16224 (1); rover = 16224.
    ops += [(FREE, 6, 0), (FREE, 4, 0), (FREE, 2, 0)]
    # malloc(100), 8 units: after the rover 16288 (too small), base, then block 0,
    # whose tail is cut (2 visits); the rover goes back to base.
    ops += [(ALLOC, 8, 100)]
    # free id 0 (16352, the top block): from base past 0, 16160, 16224, 16288 (4).
    # free id 7 (16128): from the rover 16288 past 16352, round base, to block 0
    # (2), and joins 16160 above it.
    ops += [(FREE, 0, 0), (FREE, 7, 0)]
    tl = Timeline(Trace.from_ops(ops, name="walks"), "next-fit").build()
    assert tl.series.search.tolist() == [1] * 8 + [1, 1, 1, 2, 4, 2]
    assert tl.series.merges.tolist()[-1] == 1
    assert tl.series.work.tolist()[-2:] == [4, 2 + 1]
    tl.seek(13)
    assert tl.describe() == "step 13: free(0x3ff0) for id 0: walked 4 free blocks"
    tl.seek(14)
    assert tl.describe() == "step 14: free(0x3f10) for id 7: walked 2 free blocks; coalesced once"
