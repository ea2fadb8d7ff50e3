"""Kruse's rotating free list on Knuth's boundary tags, worked by hand.

LP64: W = 8.  Every block has a header and a footer tag (2 words), so a
request of n bytes takes need = max(round8(n + 16), 32) bytes; the least block
is header + footer + next + prev = 32.  The payload is one word into the block.
A fruitless round grows the heap by sbrk(max(need, 4096)).
"""

from hypothesis import HealthCheck, given, settings
import pytest

from heapscope.allocators.events import (Coalesce, Grow, GrowFailed, ListInsert, ListRemove, PointerMove,
                               Split, Visit)
from heapscope.allocators.registry import STRATEGIES, make_strategy
from heapscope.allocators.rotating_list import FREE_TAG, RotatingList
from heapscope.allocators.strategy import HeapInvariantError
from heapscope.traces import read_rep
from heapscope.traces.bundled import default_trace_path

from .heap_harness import ALLOC, FREE, assert_probe_matches_walk, check_long_trace, op_sequences, run_checked


def ring(s: RotatingList) -> list[tuple[int, int]]:
    """The free list from the head as (address, size)."""
    return [(a, s.mem[a] & -2) for a in s.free_list()]


def visits(s: RotatingList) -> list[tuple[int, int, bool]]:
    return [(e.addr, e.size, e.fits) for e in s.rec.events if isinstance(e, Visit)]


def test_registered_by_name():
    assert STRATEGIES["rotating-list"] is RotatingList
    assert isinstance(make_strategy("rotating-list", word=4), RotatingList)


def test_rotating_head_and_lifo_insertion_by_hand():
    s = RotatingList()

    # 1. malloc(100): need round8(116) = 120.  The ring is empty, so sbrk(4096)
    #    at 0; the new block [0, 4096) is pushed (head None -> 0), visited, and
    #    its upper 120 bytes cut off (Knuth A4): 0 keeps 3976, block 3976,
    #    payload 3984.  The successor of block 0 is block 0 itself: head stays.
    a = s.malloc(100)
    s.check()
    assert a == 3984
    assert s.heap_size == 4096
    assert ring(s) == [(0, 3976)]
    assert s.rec.grows == 1 and s.rec.splits == 1 and s.rec.visits == 1
    assert s.rec.events[:4] == [Grow(0, 4096), ListInsert(0, 4096, ()), PointerMove("head", None, 0),
                                Visit(0, 4096, True)]
    assert Split(0, 4096, 3976, 120, 0, 3976) in s.rec.events

    # 2-4. need 40, 72, 48, each cut from the top of block 0:
    #    b = 3976-40 = 3936 (payload 3944), c = 3936-72 = 3864 (3872),
    #    d = 3864-48 = 3816 (3824).  Block 0 keeps 3816 bytes.
    b, c, d = s.malloc(20), s.malloc(50), s.malloc(30)
    assert (b, c, d) == (3944, 3872, 3824)
    assert ring(s) == [(0, 3816)]

    # 5. free(c): block 3864 (72).  The word below it (3856) is d's footer, used;
    #    the block above (3936) is b, used: no join.  LIFO: 3864 goes in front
    #    of the head and becomes the head.
    s.free(c)
    s.check()
    assert ring(s) == [(3864, 72), (0, 3816)]
    assert PointerMove("head", 0, 3864) in s.rec.events

    # 6. free(a): block 3976 (120); below is b's footer, above is the break.
    #    Pushed at the head: ring 3976, 3864, 0.
    s.free(a)
    s.check()
    assert ring(s) == [(3976, 120), (3864, 72), (0, 3816)]

    # 7. malloc(60): need 80.  The head 3976 (120) fits at once; the rest 40 >= 32
    #    stays: 3976 keeps 40 and the block is 3976+40 = 4016, payload 4024.  The
    #    head rotates to the successor of the block used: 3864.
    e = s.malloc(60)
    s.check()
    assert e == 4024
    assert visits(s) == [(3976, 120, True)]
    assert PointerMove("head", 3976, 3864) in s.rec.events
    assert ring(s) == [(3864, 72), (0, 3816), (3976, 40)]

    # 8. malloc(100): need 120.  From the head: 3864 (72, too small), 0 (fits).
    #    Cut 120 off the top of 0: 3816-120 = 3696, payload 3704.  The head
    #    rotates past 0 to 3976: the next search starts where this one ended.
    f = s.malloc(100)
    s.check()
    assert f == 3704
    assert visits(s) == [(3864, 72, False), (0, 3816, True)]
    assert s.rec.visits == 2
    assert s.head == 3976
    assert ring(s) == [(3976, 40), (3864, 72), (0, 3696)]

    # 9. malloc(50): need 72.  3976 (40) no; 3864 (72) fits exactly (rest 0 < 32),
    #    so it is unlinked whole, payload 3872; the head goes to its successor 0.
    g = s.malloc(50)
    s.check()
    assert g == 3872
    assert s.rec.splits == 0
    assert ListRemove(3864, 72, ()) in s.rec.events
    assert PointerMove("head", 3976, 0) in s.rec.events
    assert ring(s) == [(0, 3696), (3976, 40)]

    # 10. free(d): block 3816 (48) between f (3696, used) and g (3864, used): pushed.
    s.free(d)
    assert ring(s) == [(3816, 48), (0, 3696), (3976, 40)]

    # 11. free(g): block 3864 (72).  The word below, 3856, is d's footer tag
    #     48|FREE: d is unlinked (the head steps off it) and joined below:
    #     3816 of 120 bytes, pushed back at the head.  Above is b (used).
    s.free(g)
    s.check()
    assert Coalesce(3816, 48, 3864, 72) in s.rec.events
    assert ring(s) == [(3816, 120), (0, 3696), (3976, 40)]

    # 12. free(b): block 3936 (40).  Below: 3816 (120, free); above: 3976 (40,
    #     free).  Both joined at once through the tags: 3816 of 120+40+40 = 200.
    s.free(b)
    s.check()
    assert [e for e in s.rec.events if isinstance(e, Coalesce)] == [
        Coalesce(3816, 120, 3936, 40), Coalesce(3816, 160, 3976, 40)]
    assert s.rec.merges == 2
    assert ring(s) == [(3816, 200), (0, 3696)]
    assert s.mem[3816] == s.mem[3816 + 200 - 8] == 200 | FREE_TAG

    # 13. free(e): block 4016 (80) joins 3816 below: 280 bytes up to the break.
    s.free(e)
    assert ring(s) == [(3816, 280), (0, 3696)]

    # 14. malloc(5000): need 5016.  3816 (280) no, 0 (3696) no: a whole round.
    #     sbrk(max(5016, 4096)) = 5016 bytes at 4096; the new block is freed
    #     like any block: its lower neighbour 3816 (free, 280) joins it: 3816 of
    #     5296 bytes, pushed at the head, visited and cut: 3816 keeps
    #     5296-5016 = 280, the block is 3816+280 = 4096, payload 4104.  The head
    #     rotates to 0.  Three visits: two in the round, one after the growth.
    h = s.malloc(5000)
    s.check()
    assert h == 4104
    assert s.heap_size == 4096 + 5016
    assert Grow(4096, 5016) in s.rec.events
    assert Coalesce(3816, 280, 4096, 5016) in s.rec.events
    assert visits(s) == [(3816, 280, False), (0, 3696, False), (3816, 5296, True)]
    assert s.head == 0
    assert ring(s) == [(0, 3696), (3816, 280)]
    assert s.walk()[-1].size == 5016 and s.walk()[-1].payload == 4104


def test_payload_capacity_excludes_the_footer():
    s = RotatingList()
    p = s.malloc(100)                  # block of 120: header, 104 bytes, footer
    assert s._payload_capacity(p) == 120 - 16
    assert s.realloc(p, 104) == p      # still fits in place
    q = s.realloc(p, 105)              # would overwrite the footer: moves
    assert q != p
    s.check()


def test_alignment_and_word_parameters():
    # align 16 with W = 8: blocks start at 8 mod 16 after an 8-byte META prologue,
    # so payloads (one word in) are 16-aligned; sizes are multiples of 16.
    s = RotatingList(align=16)
    ps = [s.malloc(n) for n in (1, 17, 100)]
    s.check()
    assert all(p % 16 == 0 for p in ps)
    assert s.walk()[0].state == "meta" and s.walk()[0].size == 8
    # W = 4: least block 16, tags of 4 bytes.
    t = RotatingList(word=4)
    p = t.malloc(0)
    assert t.live[p].block_size == 16
    t.check()


def test_failing_malloc_under_a_heap_limit_keeps_the_heap():
    s = RotatingList(heap_limit=4096)
    a = s.malloc(3000)                 # the whole 4096 comes from one sbrk
    assert a is not None
    assert s.malloc(2000) is None      # needs another sbrk(4096): past the limit
    assert s.rec.failed
    assert GrowFailed(4096) in s.rec.events
    s.check()
    assert s.heap_size == 4096
    assert sum(b.size for b in s.walk()) == 4096
    assert s.malloc(1000) is not None  # the remaining 1080 bytes still serve
    s.check()


def test_fixed_pool():
    s = RotatingList(pool_size=1003)   # 1000 usable bytes, a 3-byte META tail
    assert ring(s) == [(0, 1000)]
    p = s.malloc(900)
    assert p is not None
    assert s.malloc(200) is None
    s.free(p)
    s.check()
    assert ring(s) == [(0, 1000)]


def _three_free_blocks() -> RotatingList:
    s = RotatingList()
    ps = [s.malloc(40) for _ in range(6)]
    for p in ps[::2]:
        s.free(p)
    s.check()
    return s


def test_check_detects_a_footer_that_disagrees_with_its_header():
    s = _three_free_blocks()
    b = s.head
    size = s.mem[b] & -2
    s.mem[b + size - 8] = size            # footer says "used"
    with pytest.raises(HeapInvariantError, match=rf"block {b:#x}\+{size}: header tag .* footer tag"):
        s.check()


def test_check_detects_a_broken_prev_link():
    s = _three_free_blocks()
    first, second = s.free_list()[:2]
    s.mem[second + 16] = second           # prev of the second should be the first
    with pytest.raises(HeapInvariantError, match=rf"prev link of {second:#x} is {second} but {first:#x}"):
        s.check()


def test_check_detects_a_block_missing_from_the_ring():
    s = _three_free_blocks()
    first, second, third = s.free_list()[:3]
    # Splice the second block out of the ring by hand.
    s.mem[first + 8] = third
    s.mem[third + 16] = first
    with pytest.raises(HeapInvariantError, match=rf"\['{second:#x}'\] are not on the free list"):
        s.check()


def test_check_detects_uncoalesced_neighbours():
    s = RotatingList()
    a, b = s.malloc(40), s.malloc(40)
    s.malloc(40)
    s.free(a)
    # Mark b free by hand and push it: two free neighbours.
    blk = s.live.pop(b).block_addr
    s.in_use -= 56
    s.header_in_use -= 16
    s.mem[blk] = s.mem[blk + 56 - 8] = 56 | FREE_TAG
    s._push(blk, 56)
    with pytest.raises(HeapInvariantError, match="were not joined"):
        s.check()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(op_sequences())
def test_random_traces_keep_every_invariant(ops):
    run_checked(RotatingList(), ops)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(op_sequences(max_size=9000))
def test_random_traces_under_a_heap_limit_and_other_layouts(ops):
    run_checked(RotatingList(heap_limit=30000, word=4), ops)
    run_checked(RotatingList(align=16, chunk=64), ops)
    run_checked(RotatingList(pool_size=20005), ops)


def test_bundled_default_trace_keeps_every_invariant():
    trace = read_rep(default_trace_path())
    ops = list(zip(trace.kind.tolist(), trace.ids.tolist(), trace.sizes.tolist()))
    assert len(ops) >= 10000 and {k for k, _, _ in ops} <= {ALLOC, FREE}
    s = RotatingList(record=False)
    where = check_long_trace(s, ops)
    assert where == {}
    assert not s.live                       # the trace frees everything at the end
    assert len(s.free_list()) == 1          # all joined back into one block


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(op_sequences(max_size=5000))
def test_fast_fragmentation_probe_agrees_with_a_walk(ops):
    # The override keeps running totals; the base class walks free_blocks().
    for s in (RotatingList(), RotatingList(pool_size=30001, align=16)):
        assert_probe_matches_walk(s, ops)
