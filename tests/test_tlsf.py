"""TLSF (Masmano et al. 2004; reference code mattconte/tlsf), worked by hand and
checked against the reference's own output.

LP64 parameters: ALIGN_SIZE 8, SL_INDEX_COUNT_LOG2 5, FL_INDEX_SHIFT 8,
SMALL_BLOCK_SIZE 256.  A block is a size word (8 bytes) then the payload; its
TLSF size counts the bytes after the size word, so walk() shows it as
8 + size bytes and the payload at addr + 8.  The smallest TLSF size is 24, and a
block splits when its size >= 32 + the size wanted.

A pool of N bytes holds one free block at 0 of TLSF size align_down(N - 16, 8)
and a zero-size sentinel right after it.
"""

import json
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from heapscope.allocators.explain import explain_step
from heapscope.allocators.events import BitmapProbe, Coalesce, Grow, GrowFailed, ListInsert, ListRemove, Placed, Split, Visit
from heapscope.allocators.registry import make_strategy
from heapscope.allocators.strategy import META, HeapInvariantError
from heapscope.allocators.tlsf import TLSF, MappingSearch

from .heap_harness import ALLOC, FREE, assert_probe_matches_walk, check_long_trace, op_sequences, run_checked

GOLDEN = Path(__file__).parent / "data" / "tlsf_reference_offsets.json"


def layout(s: TLSF) -> list[tuple[int, int, str]]:
    return [(b.addr, b.size, b.state) for b in s.walk()]


# ------------------------------------------------------------------ mapping
def test_mapping_of_300_bytes():
    s = TLSF()
    # mapping_insert(300): fls(300) = 8 (256 <= 300 < 512);
    # sl = (300 >> (8 - 5)) ^ 32 = 37 ^ 32 = 5; fl = 8 - (8 - 1) = 1.
    assert s.mapping_insert(300) == (1, 5)
    # mapping_search(300): round = (1 << (8 - 5)) - 1 = 7; 307 >> 3 = 38;
    # sl = 38 ^ 32 = 6, fl = 1.  Class (1, 5) holds 296..303, so a 296-byte
    # block there would be too small: the search starts one class up.
    assert s.mapping_search(300) == (1, 6)
    # Class (1, 6) starts at (32 + 6) << 3 = 304: malloc(300) adjusts to 304,
    # exactly that floor, so it is stored and searched in the same class.
    assert s.class_floor(1, 6) == 304
    assert s.adjust_request_size(300) == 304
    assert s.mapping_insert(304) == s.mapping_search(304) == (1, 6)


def test_mapping_of_small_sizes_is_linear_in_fl_0():
    s = TLSF()
    # Below SMALL_BLOCK_SIZE = 256: fl = 0, sl = size // 8, no rounding.
    assert s.mapping_insert(24) == s.mapping_search(24) == (0, 3)
    assert s.mapping_insert(104) == s.mapping_search(104) == (0, 13)
    assert s.mapping_insert(248) == s.mapping_search(248) == (0, 31)
    # 256 is the first size of fl 1: fls = 8, sl = (256 >> 3) ^ 32 = 0.
    assert s.mapping_insert(256) == (1, 0)
    # malloc(0) and malloc(1) take the minimum block, 24 bytes; in reference
    # mode malloc(0) is refused (adjust 0 means NULL).
    assert s.adjust_request_size(0) == s.adjust_request_size(1) == 24
    assert TLSF(zero_returns_null=True).adjust_request_size(0) == 0


def test_mapping_of_large_sizes():
    s = TLSF()
    # 1 000 000: fls = 19 (524288 <= n < 1048576); 1000000 >> 14 = 61;
    # sl = 61 ^ 32 = 29; fl = 19 - 7 = 12.
    assert s.mapping_insert(1_000_000) == (12, 29)
    # search: + (1 << 14) - 1 = 1016383; >> 14 = 62; sl = 30.
    assert s.mapping_search(1_000_000) == (12, 30)
    # Rounding can cross a power of two: 1016 is filed in (2, 31)
    # (fls 9, 1016 >> 4 = 63, 63 ^ 32 = 31) but 1016 + 15 = 1031 has fls 10,
    # 1031 >> 5 = 32, sl 0, fl 3: the search starts in the next row.
    assert s.mapping_insert(1016) == (2, 31)
    assert s.mapping_search(1016) == (3, 0)
    # A request the first level cannot index (>= 2**32 bytes) fails.
    assert s.adjust_request_size(1 << 32) == 0
    assert s.malloc(1 << 32) is None


def test_mapping_on_a_32_bit_heap():
    s = TLSF(word=4)
    # ILP32: ALIGN_SIZE 4, FL_INDEX_SHIFT 7, SMALL_BLOCK_SIZE 128, minimum block 12.
    assert s.mapping_insert(100) == (0, 25)
    # 300: fls 8, 300 >> 3 = 37, sl 5, fl = 8 - 6 = 2.
    assert s.mapping_insert(300) == (2, 5)
    assert s.adjust_request_size(1) == 12


# ----------------------------------------------------- a pool, by hand
def test_split_and_merge_in_a_pool_by_hand():
    # Pool of 1024: pool_bytes = align_down(1024 - 16, 8) = 1008.  Block 0 has
    # TLSF size 1008 (walk size 1016), the sentinel's size word is at
    # 0 + 8 + 1008 = 1016, META [1016, 1024).  1008 is filed in (2, 31):
    # fls 9, 1008 >> 4 = 63, 63 ^ 32 = 31, fl 9 - 7 = 2.
    s = TLSF(pool_size=1024)
    s.check()
    assert layout(s) == [(0, 1016, "free"), (1016, 8, "meta")]
    assert s.class_list(2, 31) == [0]
    assert s.fl_bitmap == 1 << 2 and s.sl_bitmap[2] == 1 << 31

    # malloc(100): adjust 104, search cell (0, 13).  sl_bitmap[0] is empty; the
    # fl scan from 1 finds fl 2, whose lowest sl bit is 31: three probes, then
    # the block.  1008 >= 32 + 104, so it splits: the rest is at 0 + 8 + 104 =
    # 112 with size 1008 - 104 - 8 = 896, filed in (2, 24) (896 >> 4 = 56, ^ 32).
    a = s.malloc(100)
    s.check()
    assert a == 8
    assert s.rec.probes == 3 and s.rec.visits == 4 and s.rec.splits == 1
    assert s.rec.events == [
        MappingSearch(104, 104, 0, 13, 100),
        BitmapProbe("sl", 0, 13, None),
        BitmapProbe("fl", 1, 0, (2, 31)),
        BitmapProbe("sl", 2, 0, (2, 31)),
        Visit(0, 1016, True),
        ListRemove(0, 1016, (2, 31)),
        Split(0, 1016, 0, 112, 112, 904),
        ListInsert(112, 904, (2, 24)),
        Placed(0, 112, 8, 100),
    ]
    # The explain panel says it in the reference's words (sizes are whole
    # blocks; classes come from the TLSF size, a word less).
    assert [x.text for x in explain_step(s, s.rec)] == [
        "mapping_search(100): rounded to 104, class (0, 13)",
        "sl_bitmap[0] has no bit at or above 13",
        "fl_bitmap: next class 2",
        "sl_bitmap[2]: lowest bit 31: list (2, 31)",
        "took the head of list (2, 31), 1016 B",
        "remove_free_block: 0x0 (1016 B) off list (2, 31)",
        "split off 904 B into (2, 24); 112 B at 0x0 stay",
        "insert_free_block: 0x70 (904 B) at the head of list (2, 24)",
        "block_prepare_used: 0x0 (112 B) is used; payload 0x8",
    ]

    # malloc(200): 200 from (2, 24) at 112: payload 120, rest at 112 + 8 + 200 =
    # 320 of 896 - 208 = 688, filed in (2, 11) (688 >> 4 = 43, ^ 32).
    b = s.malloc(200)
    assert b == 120
    assert s.class_list(2, 11) == [320]
    # malloc(50): adjust 56 from 320: payload 328, rest at 384 of 688 - 64 = 624
    # in (2, 7) (624 >> 4 = 39).
    c = s.malloc(50)
    assert c == 328
    assert s.class_list(2, 7) == [384]
    s.check()

    # free(a): block 0 (size 104); b follows, used; nothing before: filed in (0, 13).
    s.free(a)
    s.check()
    assert s.class_list(0, 13) == [0]
    assert s.rec.merges == 0

    # free(b): block 112's prev-free bit is set, prev_phys = 0: block 0 absorbs
    # it, 104 + 8 + 200 = 312, filed in (1, 7) (312 >> 3 = 39, ^ 32).
    s.free(b)
    s.check()
    assert Coalesce(0, 112, 112, 208) in s.rec.events
    assert s.class_list(1, 7) == [0] and s.class_list(0, 13) == []

    # malloc(300): adjust 304, search (1, 6) (304 + 7 = 311, >> 3 = 38).
    # sl_bitmap[1] & (~0 << 6) has bit 7: one probe.  312 < 32 + 304, so the
    # block is not split: d gets all 312 bytes at payload 8.
    d = s.malloc(300)
    s.check()
    assert d == 8
    assert s.rec.probes == 1 and s.rec.visits == 2 and s.rec.splits == 0
    assert s.rec.events[1] == BitmapProbe("sl", 1, 6, (1, 7))

    # free(c): block 320 (56) joins the free block 384 (624) after it:
    # 56 + 8 + 624 = 688 at 320, back in (2, 11).
    s.free(c)
    s.check()
    assert Coalesce(320, 64, 384, 632) in s.rec.events
    assert layout(s) == [(0, 320, "used"), (320, 696, "free"), (1016, 8, "meta")]
    assert s.class_list(2, 11) == [320]


def test_realloc_in_a_pool_by_hand():
    s = TLSF(pool_size=1024)
    a = s.malloc(100)                       # block 0 of 104, free rest 112 of 896
    # realloc(a, 200): the next block is free and 104 + 896 + 8 = 1008 >= 200:
    # grow in place (block 0 becomes 1008), then trim to 200: the rest is at
    # 0 + 8 + 200 = 208 with 1008 - 208 = 800, in (2, 18).
    assert s.realloc(a, 200) == 8
    s.check()
    assert layout(s) == [(0, 208, "used"), (208, 808, "free"), (1016, 8, "meta")]
    assert s.class_list(2, 18) == [208]
    b = s.malloc(16)                        # 24 at 208: payload 216, rest 240 of 768
    assert b == 216
    # realloc(a, 400): the next block (b) is used: malloc(400) first
    # (search (1, 18), found (2, 16) = 768 at 240: payload 248, rest at
    # 240 + 8 + 400 = 648 of 360), then free(a).
    a2 = s.realloc(a, 400)
    s.check()
    assert a2 == 248
    assert layout(s) == [(0, 208, "free"), (208, 32, "used"), (240, 408, "used"),
                         (648, 368, "free"), (1016, 8, "meta")]
    # realloc(a2, 16): shrink in place to 24; the cut tail 272 (368) joins the
    # free block 648 after it: 368 + 8 + 360 = 736 at 272.
    assert s.realloc(a2, 16) == 248
    s.check()
    assert layout(s) == [(0, 208, "free"), (208, 32, "used"), (240, 32, "used"),
                         (272, 744, "free"), (1016, 8, "meta")]
    # realloc(p, 0) shrinks to the minimum block rather than freeing
    # (a None from realloc means "failed, block kept" in heapscope).
    assert s.realloc(b, 0) == 216 and 216 in s.live


def test_pool_exhaustion_returns_null_and_an_unaligned_pool_end_is_meta():
    # 4099 bytes: pool_bytes = align_down(4083, 8) = 4080, sentinel at 4088,
    # META [4088, 4099) = 8 + 3 bytes.
    s = TLSF(pool_size=4099)
    assert layout(s) == [(0, 4088, "free"), (4088, 11, "meta")]
    # Good fit refuses malloc(4080) although the free block has exactly 4080:
    # 4080 sits in (4, 31) (fls 11, 4080 >> 6 = 63), which holds 4032..4095,
    # so the search rounds up to 4080 + 63 = 4143 and starts at (5, 0).
    assert s.malloc(4080) is None
    # 4032 is the floor of (4, 31): found.  4080 >= 32 + 4032, so it splits:
    # rest at 8 + 4032 = 4040 of 4080 - 4040 = 40, in (0, 5).
    assert s.malloc(4032) == 8
    # 40 takes the rest whole (40 < 32 + 40): payload 4048.  Now nothing is left.
    assert s.malloc(40) == 4048
    assert s.malloc(1) is None
    assert s.rec.failed and s.rec.probes == 2    # both bitmaps empty
    s.check()
    assert sum(b.size for b in s.walk()) == s.heap_size == 4099
    # A pool too small for one block (< 16 + 24 bytes) is all META.
    tiny = TLSF(pool_size=39)
    assert layout(tiny) == [(0, 39, "meta")]
    assert tiny.malloc(1) is None
    tiny.check()


# ----------------------------------------------------- sbrk mode, by hand
def test_sbrk_growth_by_hand():
    s = TLSF()
    assert s.walk() == [] and s.heap_size == 0
    # malloc(100): no block.  The search cell (0, 13) starts at 104, so a pool
    # of 104 + 16 would do; the chunk makes it 4096: block 0 of 4080, sentinel
    # at 4088.  Then the search finds it and cuts 104: rest 112 of 3968.
    a = s.malloc(100)
    s.check()
    assert a == 8 and s.heap_size == 4096
    assert Grow(0, 4096) in s.rec.events
    assert layout(s) == [(0, 112, "used"), (112, 3976, "free"), (4088, 8, "meta")]
    # malloc(5000): search cell: fls 12, + 127 = 5127, 5127 >> 7 = 40, sl 8,
    # fl 5; its floor is 40 << 7 = 5120.  The last block (3968) is free, so
    # 5120 - 3968 = 1152 bytes would do; the chunk gives 4096 at 4096.  The
    # old sentinel 4088 becomes a free block of 4096 - 8 = 4088 and joins 112:
    # 3968 + 8 + 4088 = 8064, new sentinel at 8184.  Then 5000 is cut from it:
    # payload 120, rest at 112 + 8 + 5000 = 5120 of 8064 - 5008 = 3056.
    b = s.malloc(5000)
    s.check()
    assert b == 120 and s.heap_size == 8192
    assert Coalesce(112, 3976, 4088, 4096) in s.rec.events
    assert layout(s) == [(0, 112, "used"), (112, 5008, "used"), (5120, 3064, "free"), (8184, 8, "meta")]


def test_exact_growth_without_a_chunk():
    s = TLSF(chunk=0)
    # malloc(100): 104 + 16 = 120 bytes: block 0 of 104, sentinel at 112.
    assert s.malloc(100) == 8 and s.heap_size == 120
    # malloc(300): search (1, 6), floor 304; the last block is used, so the
    # old sentinel becomes a block of 304: growth 304 + 8 = 312, brk 432.
    assert s.malloc(300) == 120 and s.heap_size == 432
    s.check()
    assert layout(s) == [(0, 112, "used"), (112, 312, "used"), (424, 8, "meta")]


def test_growth_falls_back_to_the_exact_need_under_a_limit():
    s = TLSF(heap_limit=200)
    # The 4096 chunk is refused; exactly 120 bytes is not.
    assert s.malloc(100) == 8
    # MappingSearch, the sl probe and the fl probe fail first.
    assert s.rec.events[3:5] == [GrowFailed(4096), Grow(0, 120)]
    # Another malloc(100) needs 104 + 8 = 112 more: 232 > 200.
    assert s.malloc(100) is None and s.heap_size == 120
    s.check()


# ------------------------------------------------------- corruption
def test_check_names_the_cell_of_a_flipped_bitmap_bit():
    s = TLSF(pool_size=1024)
    s.malloc(100)
    s.check()
    s.sl_bitmap[1] |= 1 << 5        # list (1, 5) is empty
    with pytest.raises(HeapInvariantError, match=r"sl_bitmap\[1\] bit 5 is 1 but free list \(1, 5\) is empty"):
        s.check()
    s.sl_bitmap[1] = 0
    s.check()
    s.sl_bitmap[2] &= ~(1 << 24)    # the rest (896) is on (2, 24)
    with pytest.raises(HeapInvariantError, match=r"free list \(2, 24\) holds 1 blocks"):
        s.check()


def test_check_finds_a_block_on_the_wrong_list_and_a_wrong_prev_free_bit():
    s = TLSF(pool_size=1024)
    a = s.malloc(100)
    s.malloc(100)
    s.free(a)                         # block 0 (104) on (0, 13)
    s.check()
    moved = TLSF.restore(s.snapshot())
    moved._lists[0 * 32 + 13].clear()
    moved._lists[0 * 32 + 14][0] = None
    moved.sl_bitmap[0] = 1 << 14
    with pytest.raises(HeapInvariantError, match=r"belongs on list \(0, 13\) but is on list \(0, 14\)"):
        moved.check()
    s._size_word[112] &= ~2           # block 112 follows free block 0
    with pytest.raises(HeapInvariantError, match="prev-free bit is clear"):
        s.check()


# -------------------------------------------------- random traces
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(op_sequences())
def test_sbrk_random_traces_keep_every_invariant(ops):
    run_checked(TLSF(), ops)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(op_sequences(max_size=3000))
def test_small_chunk_random_traces_keep_every_invariant(ops):
    run_checked(TLSF(chunk=64, word=4), ops)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(op_sequences(max_size=3000))
def test_pool_random_traces_keep_every_invariant_through_exhaustion(ops):
    run_checked(TLSF(pool_size=6000), ops)


@settings(max_examples=60, deadline=None)
@given(op_sequences(max_size=9000))
def test_random_traces_under_a_heap_limit(ops):
    run_checked(TLSF(heap_limit=20000), ops)


def brute_force_probe(s: TLSF) -> tuple[int, int, int, int]:
    """F, largest, top, largest other, from walk(); top = the free block just
    below the sentinel."""
    free = [b for b in s.walk() if b.free]
    top = next((b.size for b in free if b.end == s.sentinel), 0)
    below = max((b.size for b in free if b.end != s.sentinel), default=0)
    return sum(b.size for b in free), max(top, below), top, below


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(op_sequences(max_size=3000))
def test_fragmentation_probe_agrees_with_a_walk(ops):
    for s in (TLSF(chunk=256), TLSF(pool_size=8000)):
        assert_probe_matches_walk(s, ops, slow=brute_force_probe)


def test_bundled_default_trace():
    from heapscope.traces import default_trace_path, read_rep
    trace = read_rep(default_trace_path())
    ops = list(zip(trace.kind.tolist(), trace.ids.tolist(), trace.sizes.tolist()))
    s = TLSF(record=False)
    where = check_long_trace(s, ops)
    assert where == {} and not s.rec.failed


def test_snapshot_restores_the_lists_in_order():
    s = TLSF()
    ptrs = [s.malloc(n) for n in (40, 300, 40, 700, 40, 300, 40)]
    for p in ptrs[1::2]:
        s.free(p)
    copy = TLSF.restore(s.snapshot())
    assert copy.state_signature() == s.state_signature()
    assert copy.malloc(300) == s.malloc(300)


def test_registered():
    s = make_strategy("tlsf", pool_size=4096)
    assert isinstance(s, TLSF) and s.heap_size == 4096


# ---------------------------------------- the reference's own offsets
def replay_golden(scenario: dict, zero_returns_null: bool, results_key: str, walks_key: str) -> int:
    s = TLSF(pool_size=scenario["pool_size"], zero_returns_null=zero_returns_null, record=False)
    held: dict[int, int | None] = {}
    compared = 0
    for step, ((kind, ident, size), want) in enumerate(zip(scenario["ops"], scenario[results_key])):
        if kind == ALLOC:
            got = held[ident] = s.malloc(size)
        elif kind == FREE:
            s.free(held.pop(ident))
            got = None
        else:
            got = s.realloc(held[ident], size)
            if got is not None:
                held[ident] = got
        assert got == want, (f"{scenario['name']}: op {step} {(kind, ident, size)} gave {got}, "
                             f"the reference {want}")
        compared += 1
        walk = scenario[walks_key].get(str(step + 1))
        if walk is not None:
            s.check()
            mine = [[b.addr + 8, b.size - 8, int(b.state == "used")] for b in s.walk() if b.state != META]
            assert mine == walk, f"{scenario['name']}: heap differs from the reference after {step + 1} ops"
    return compared


def test_same_offsets_as_the_reference_code():
    golden = json.loads(GOLDEN.read_text())
    total = nulls = 0
    for scenario in golden["scenarios"]:
        total += replay_golden(scenario, True, "results", "walks")
        total += replay_golden(scenario, False, "results_zero_as_one", "walks_zero_as_one")
        nulls += sum(1 for (k, _, n), r in zip(scenario["ops"], scenario["results"])
                     if k != FREE and n != 0 and r is None)
    assert total >= 10_000
    assert nulls > 100          # pool exhaustion is part of what is compared


def test_replay_speed_smoke():
    # Not a benchmark: a guard against an accidental O(n) step.
    from heapscope.traces import default_trace_path, read_rep
    trace = read_rep(default_trace_path())
    s = TLSF(record=False)
    where: dict[int, int] = {}
    t0 = time.perf_counter()
    for kind, ident, size in zip(trace.kind.tolist(), trace.ids.tolist(), trace.sizes.tolist()):
        if kind == ALLOC:
            where[ident] = s.malloc(size)
        elif kind == FREE:
            s.free(where.pop(ident))
        else:
            where[ident] = s.realloc(where.get(ident), size)
    assert time.perf_counter() - t0 < 5.0
