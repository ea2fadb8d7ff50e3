"""Knuth's binary buddy system (TAOCP 1, 2.5, algorithms R and S), worked by hand.

LP64 defaults: the header (TAG + KVAL) is one 8-byte word, chunks are
2**12 = 4096 bytes, the smallest block is 2**4 = 16 bytes.  A request of n
bytes takes the smallest order k >= 4 with 2**k >= n + 8.
"""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from heapscope.allocators.buddy import SPLIT, AvailProbe, BinaryBuddy, SplitNode
from heapscope.allocators.events import BuddyMerge, BuddySplit, Grow, GrowFailed, ListInsert, ListRemove
from heapscope.allocators.registry import make_strategy
from heapscope.allocators.strategy import FREE_BLOCK, USED, HeapInvariantError, Strategy
from heapscope.traces import default_trace_path, read_rep

from .heap_harness import assert_probe_matches_walk, check_long_trace, op_sequences, run_checked


def avail_lists(s: BinaryBuddy) -> dict[int, list[int]]:
    """The non-empty AVAIL[k] lists, front first."""
    return {k: s.avail(k) for k in range(s.top_order + 1) if s.avail(k)}


def of_type(s: BinaryBuddy, cls) -> list:
    return [e for e in s.rec.events if isinstance(e, cls)]


def test_request_sizes_map_to_orders():
    s = BinaryBuddy()
    # n + 8 rounded up to a power of two, never below 16:
    #   0 -> 8 -> 16 (order 4, the minimum);  8 -> 16 (4);  9 -> 17 -> 32 (5);
    #   40 -> 48 -> 64 (6);  56 -> 64 (6);  57 -> 65 -> 128 (7);
    #   4088 -> 4096 (12, a whole chunk);  4089 -> 4097 -> 8192 (13).
    assert [s.order_for(n) for n in (0, 8, 9, 40, 56, 57, 4088, 4089)] == [4, 4, 5, 6, 6, 7, 12, 13]
    # ILP32: a 4-byte header, so 12 bytes still fit 16 and 13 need 32.
    t = BinaryBuddy(word=4)
    assert [t.order_for(n) for n in (12, 13, 28, 29)] == [4, 5, 5, 6]


def test_split_cascade_and_merge_cascade_by_hand():
    s = BinaryBuddy()

    # malloc(40): 40 + 8 = 48 -> k = 6 (64 bytes).  R1 probes AVAIL[6..12]: all
    # empty (7 probes), so a 4096-byte chunk is sbrk'd at 0 and put on AVAIL[12];
    # R1 looks at AVAIL[12] once more (8th probe) and R2 takes block 0.  R4 splits
    # 6 times, each time putting the upper half on the list below:
    #   j=11: buddy 0 + 2048 -> AVAIL[11]     j=10: 0 + 1024 -> AVAIL[10]
    #   j=9:  0 + 512  -> AVAIL[9]            j=8:  0 + 256  -> AVAIL[8]
    #   j=7:  0 + 128  -> AVAIL[7]            j=6:  0 + 64   -> AVAIL[6]
    # Block 0 (order 6) is reserved; its payload is after the 8-byte header.
    p = s.malloc(40)
    s.check()
    assert p == 8
    assert s.heap_size == 4096 and s.chunks == [(0, 12)]
    assert of_type(s, Grow) == [Grow(0, 4096)]
    assert of_type(s, BuddySplit) == [
        BuddySplit(0, 12, 2048), BuddySplit(0, 11, 1024), BuddySplit(0, 10, 512),
        BuddySplit(0, 9, 256), BuddySplit(0, 8, 128), BuddySplit(0, 7, 64)]
    assert avail_lists(s) == {6: [64], 7: [128], 8: [256], 9: [512], 10: [1024], 11: [2048]}
    assert [e.order for e in of_type(s, AvailProbe)] == [6, 7, 8, 9, 10, 11, 12, 12]
    # Every list change is an event: the new chunk on AVAIL[12], R2 taking it
    # off, and each R4 upper half on the list below, right after its split.
    list_ops = [e for e in s.rec.events if isinstance(e, (ListInsert, ListRemove, BuddySplit))]
    assert list_ops == [ListInsert(0, 4096, (12,)), ListRemove(0, 4096, (12,))] + [
        e for j in range(11, 5, -1) for e in (BuddySplit(0, j + 1, 1 << j), ListInsert(1 << j, 1 << j, (j,)))]
    assert s.rec.visits == 8 and s.rec.probes == 8 and s.rec.splits == 6
    assert s.rec.work == 14           # orders probed + splits
    lb = s.live[p]
    assert (lb.block_addr, lb.block_size, lb.header) == (0, 64, 8)
    # Free bytes: 4096 - 64; the largest free block is the 2048 at the top.
    assert s.fragmentation_probe() == (4032, 2048, 2048, 1024)

    # free: S1 finds each buddy free with the same KVAL, S2 merges, k rises:
    #   k=6: 0 XOR 64 = 64     k=7: 0 XOR 128 = 128    k=8: 0 XOR 256 = 256
    #   k=9: 0 XOR 512 = 512   k=10: 0 XOR 1024 = 1024 k=11: 0 XOR 2048 = 2048
    # At k = 12 = the chunk's order S1 stops; S3 puts block 0 on AVAIL[12].
    s.free(p)
    s.check()
    assert of_type(s, BuddyMerge) == [
        BuddyMerge(0, 64, 6), BuddyMerge(0, 128, 7), BuddyMerge(0, 256, 8),
        BuddyMerge(0, 512, 9), BuddyMerge(0, 1024, 10), BuddyMerge(0, 2048, 11)]
    assert of_type(s, ListInsert) == [ListInsert(0, 4096, (12,))]
    # S2 unlinks each buddy from AVAIL[k] right after S1 found it free
    list_ops = [e for e in s.rec.events if isinstance(e, (ListRemove, BuddyMerge))]
    assert list_ops == [e for k in range(6, 12)
                        for e in (BuddyMerge(0, 1 << k, k), ListRemove(1 << k, 1 << k, (k,)))]
    assert s.rec.merges == 6
    assert avail_lists(s) == {12: [0]}
    assert [(b.addr, b.size, b.state) for b in s.walk()] == [(0, 4096, FREE_BLOCK)]


def test_search_length_is_orders_probed_and_lifo_insert_at_the_front():
    s = BinaryBuddy()
    a = s.malloc(40)                  # block 0, AVAIL[6] = [64], AVAIL[7] = [128], ...
    # malloc(40) again: AVAIL[6] = [64] is not empty: 1 probe, no split.
    b = s.malloc(40)
    assert (b, s.rec.visits, s.rec.splits) == (64 + 8, 1, 0)
    # A third: AVAIL[6] empty, AVAIL[7] = [128]: 2 probes; 128 splits once,
    # buddy 128 + 64 = 192 goes on AVAIL[6].
    c = s.malloc(40)
    assert (c, s.rec.visits, s.rec.splits) == (128 + 8, 2, 1)
    assert of_type(s, BuddySplit) == [BuddySplit(128, 7, 192)]
    assert s.avail(6) == [192]
    # free(b): block 64's buddy is 64 XOR 64 = 0, reserved: no merge, and S3
    # puts 64 at the FRONT of AVAIL[6], before 192.
    s.free(b)
    s.check()
    assert s.rec.merges == 0
    assert s.avail(6) == [64, 192]
    # So the next 64-byte request takes 64 again (LIFO).
    assert s.malloc(50) == 64 + 8
    # free(c): block 128's buddy 128 XOR 64 = 192 is free of order 6: merge to
    # 128 (order 7); its buddy 128 XOR 128 = 0 is split (KVAL 6 != 7): stop.
    s.free(c)
    s.check()
    assert of_type(s, BuddyMerge) == [BuddyMerge(128, 192, 6)]
    assert s.avail(6) == [] and s.avail(7) == [128]
    s.free(a)
    s.check()


def test_buddy_xor_is_taken_relative_to_the_chunk():
    s = BinaryBuddy()
    s.malloc(40)                      # chunk 0 (order 12), split down to 64
    # Plain XOR works inside a chunk aligned to its size:
    assert s.buddy_of(64, 6) == 0 and s.buddy_of(0, 6) == 64
    assert s.buddy_of(768, 8) == 512          # 0x300 XOR 0x100 = 0x200
    assert s.buddy_of(1024, 10) == 0
    # malloc(5000): 5008 -> order 13, bigger than a chunk: a chunk of its own,
    # 8192 bytes at 4096 (the break).  It is aligned to 4096, not to 8192.
    big = s.malloc(5000)
    assert big == 4096 + 8 and s.chunks == [(0, 12), (4096, 13)]
    assert s.heap_size == 4096 + 8192
    # Within it the upper half of order 12 is at 4096 + 4096 = 8192; its buddy is
    # 4096 + (4096 XOR 4096) = 4096, while the absolute 8192 XOR 4096 = 12288
    # would point into nothing (past the break).
    assert s.buddy_of(8192, 12) == 4096 and 8192 ^ 4096 == 12288
    s.free(big)                       # the whole chunk: k = 13 = m, no merge
    s.check()
    assert s.rec.merges == 0 and s.avail(13) == [4096]
    # malloc(3000): 3008 -> order 12.  AVAIL[12] is empty (chunk 0 is split),
    # AVAIL[13] = [4096]: 2 probes, one split; the buddy 8192 goes on AVAIL[12].
    d = s.malloc(3000)
    assert d == 4096 + 8
    assert (s.rec.visits, s.rec.splits) == (2, 1)
    assert of_type(s, BuddySplit) == [BuddySplit(4096, 13, 8192)]
    assert s.avail(12) == [8192]
    # free(d): its buddy 4096 + (0 XOR 4096) = 8192 is free of order 12: they
    # merge back into the order-13 chunk.  Absolute XOR would have looked at
    # 4096 XOR 4096 = 0, in the other chunk.
    s.free(d)
    s.check()
    assert of_type(s, BuddyMerge) == [BuddyMerge(4096, 8192, 12)]
    assert s.avail(13) == [4096] and s.avail(12) == []


def test_split_tree_of_a_chunk():
    s = BinaryBuddy(max_order=6)      # 64-byte chunks: a small tree
    a = s.malloc(8)                   # 16 bytes: 64 -> 32 -> 16, block 0
    s.malloc(20)                      # 28 -> 32: block 32 from AVAIL[5]
    s.free(a)                         # 0's buddy 16 is free: merge to 0 (order 5)
    s.check()
    assert s.split_tree(0) == SplitNode(0, 6, SPLIT, (
        SplitNode(0, 5, FREE_BLOCK),
        SplitNode(32, 5, USED)))
    t = BinaryBuddy(max_order=6)
    t.malloc(8)
    assert t.split_tree(0) == SplitNode(0, 6, SPLIT, (
        SplitNode(0, 5, SPLIT, (SplitNode(0, 4, USED), SplitNode(16, 4, FREE_BLOCK))),
        SplitNode(32, 5, FREE_BLOCK)))


def test_realloc_stays_while_the_block_holds_it():
    s = BinaryBuddy()
    p = s.malloc(40)                  # 64-byte block: 56 payload bytes
    assert s.realloc(p, 56) == p      # still fits
    assert s.realloc(p, 10) == p      # shrinking keeps the block
    # 57 + 8 = 65 needs order 7: malloc takes 128 from AVAIL[7], then the free
    # of block 0 merges it with its buddy 64 into a free 128-byte block at 0
    # (its buddy 128 is the new block: no further merge).
    q = s.realloc(p, 57)
    assert q == 128 + 8
    s.check()
    assert s.avail(6) == [] and s.avail(7) == [0]


def test_heap_limit_failure_returns_null_and_keeps_the_heap():
    s = BinaryBuddy(heap_limit=4096)
    assert s.malloc(40) is not None
    # 4000 + 8 -> order 12: AVAIL[12] is empty (the chunk is split), so R1 fails
    # and the new chunk would pass the limit: NULL.
    assert s.malloc(4000) is None
    assert s.rec.failed and of_type(s, GrowFailed) == [GrowFailed(4096)]
    assert s.malloc(5000) is None     # an order-13 chunk fails too
    s.check()
    assert s.heap_size == 4096
    assert s.malloc(1000) is not None  # order 10 is still on AVAIL[10]
    s.check()


def test_fixed_pool_carves_chunks_from_the_pool():
    s = BinaryBuddy(pool_size=10000)
    assert s.heap_size == 10000
    s.check()                          # the uncarved pool is one free block
    assert [(b.addr, b.size, b.state) for b in s.walk()] == [(0, 10000, FREE_BLOCK)]
    a = s.malloc(40)
    assert a == 8 and s.chunks == [(0, 12)]
    assert s.malloc(5000) is None      # an 8192-byte chunk: only 5904 bytes left
    b = s.malloc(4000)                 # a second 4096 chunk: 1808 bytes left
    assert b == 4096 + 8
    assert s.malloc(4000) is None
    s.check()
    assert s.walk()[-1][:3] == (8192, 1808, FREE_BLOCK)
    assert s.fragmentation_probe() == Strategy.fragmentation_probe(s)


def test_min_order_must_hold_a_free_block():
    with pytest.raises(ValueError, match=r"min_order must be an integer in 4\.\.20"):
        BinaryBuddy(min_order=3)      # 8 bytes < 8-byte header + 8 bytes of links
    with pytest.raises(ValueError, match="too small"):
        BinaryBuddy(align=16, min_order=4)   # 16-byte header + links need 32


# ------------------------------------------------------------------ corruption
def test_check_detects_unmerged_buddies():
    s = BinaryBuddy()
    s.free(s.malloc(40))              # back to one free 4096 block on AVAIL[12]
    s.check()
    # Corrupt: split it by hand into two free 2048 buddies left on AVAIL[11].
    s._avail_unlink(0, 12)
    s.kval[0] = s.kval[2048] = 11
    s._avail_insert(0, 11)
    s._avail_insert(2048, 11)
    with pytest.raises(HeapInvariantError, match="free buddies 0x0 and 0x800 of order 11 were not merged"):
        s.check()


def test_check_detects_a_block_on_the_wrong_list():
    s = BinaryBuddy()
    s.malloc(40)
    s._avail_unlink(128, 7)
    s._avail_insert(128, 6)
    with pytest.raises(HeapInvariantError, match=r"block 0x80 of order 7 is on AVAIL\[6\]"):
        s.check()


def test_check_detects_a_broken_back_link():
    s = BinaryBuddy()
    s.malloc(40)                      # AVAIL[6] = [64]
    s.linkb[64] = 12345
    with pytest.raises(HeapInvariantError, match=r"LINKB\(0x40\) is 12345"):
        s.check()


def test_check_detects_a_misaligned_block():
    s = BinaryBuddy()
    s.malloc(40)
    # Corrupt: the free blocks 64 (order 6) and 128 (order 7) become 64 (order 7)
    # and 192 (order 6): still tiling [64, 256), but 64 is not a multiple of 128.
    s._avail_unlink(64, 6)
    s._avail_unlink(128, 7)
    del s.kval[128]
    s.kval[64], s.kval[192] = 7, 6
    s._avail_insert(64, 7)
    s._avail_insert(192, 6)
    with pytest.raises(HeapInvariantError, match=r"block 0x40 of order 7 is not aligned to 2\*\*7"):
        s.check()


def test_check_detects_a_free_block_missing_from_its_list():
    s = BinaryBuddy()
    s.malloc(40)
    s.avail_count[9] = 0              # AVAIL[9] still holds 512
    with pytest.raises(HeapInvariantError, match=r"AVAIL\[9\] holds 1 blocks but its count says 0"):
        s.check()


# --------------------------------------------------------- random and bundled
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(op_sequences(max_size=6000))
def test_random_traces_keep_every_invariant(ops):
    run_checked(BinaryBuddy(), ops)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(op_sequences(max_size=3000),
       st.sampled_from([dict(word=4), dict(max_order=8), dict(max_order=10, word=4, min_order=5),
                        dict(heap_limit=12000), dict(pool_size=9000), dict(align=16, min_order=5)]))
def test_random_traces_under_other_parameters(ops, params):
    s = BinaryBuddy(**params)
    run_checked(s, ops)
    # The O(orders) probe agrees with the generic one-pass computation.
    assert s.fragmentation_probe() == Strategy.fragmentation_probe(s)


@settings(max_examples=60, deadline=None)
@given(op_sequences(max_ops=60, max_size=5000))
def test_fragmentation_probe_matches_the_generic_one_after_every_op(ops):
    assert_probe_matches_walk(BinaryBuddy(), ops)


def test_bundled_default_trace():
    trace = read_rep(default_trace_path())
    s = make_strategy("buddy")
    assert isinstance(s, BinaryBuddy)
    check_long_trace(s, list(trace))
    # The trace frees everything at the end: every chunk is whole again.
    assert not s.live
    assert all(s.avail(order).count(addr) == 1 for addr, order in s.chunks)


def test_snapshot_restores_the_same_heap_and_lists():
    s = BinaryBuddy()
    ptrs = [s.malloc(n) for n in (40, 300, 17, 900, 5000, 64)]
    s.free(ptrs[1])
    s.free(ptrs[3])
    r = Strategy.restore(s.snapshot())
    assert r.state_signature() == s.state_signature()
    assert r.malloc(100) == s.malloc(100)
    r.check()


def test_a_huge_request_gets_one_chunk_of_its_own_order():
    # 2**30 + 8 bytes need order 31: one 2 GiB chunk, found by bisection (no
    # per-page table), and freed back whole.
    s = BinaryBuddy()
    p = s.malloc(2**30)
    assert p == 8 and s.chunks == [(0, 31)] and s.heap_size == 2**31
    s.check()
    s.free(p)
    s.check()
    assert s.avail(31) == [0]
