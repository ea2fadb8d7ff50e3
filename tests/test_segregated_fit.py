"""Segregated free lists searched first fit (allocators/segregated_fit.py),
worked by hand from CS:APP 9.9.14 and its heap layout.

Hand-worked examples use ``word=4``, CS:APP's own 32-bit layout: 4-byte
header and footer, double-word (8-byte) alignment, a 16-byte minimum block,
and the heap framed by a padding word, a prologue block and an epilogue.
"""

import copy

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from heapscope.allocators.events import Coalesce, Grow, ListInsert, ListRemove, Split, Visit
from heapscope.allocators.explain import explain_step
from heapscope.allocators.registry import make_strategy
from heapscope.allocators.segregated_fit import ClassProbe, ListWalkStep, SegregatedFirstFit
from heapscope.allocators.strategy import FREE_BLOCK, META, USED, HeapInvariantError
from heapscope.allocators.structure import StructureMismatch, check_against_heap, where
from heapscope.traces import default_trace_path, read_rep

from .heap_harness import assert_probe_matches_walk, check_long_trace, op_sequences, run_checked


def of_type(s, *classes) -> list:
    return [e for e in s.rec.events if isinstance(e, classes)]


def layout(s) -> list[tuple[int, int, str]]:
    return [(b.addr, b.size, b.state) for b in s.walk()]


def spaced(s, sizes):
    """malloc each size with an 8-byte block after it, so freeing one never
    joins its neighbours; the payloads."""
    out = []
    for n in sizes:
        out.append(s.malloc(n))
        s.malloc(8)
    return out


def test_classes_are_powers_of_two_of_the_block_size():
    s = SegregatedFirstFit(word=4)
    assert s.min_block == 16 and s.min_class == 4 and s.last_class == 13
    # block size: request + header + footer, rounded to 8, at least 16
    # class k holds 2**(k-1) + 1 .. 2**k bytes; class 13 everything above 4096
    assert [s.size_class(n) for n in (16, 17, 32, 33, 64, 65, 4096, 4097, 1 << 30)] == \
        [4, 5, 5, 6, 6, 7, 12, 13, 13]
    assert s.class_label(5) == "class 5 (17-32 B)" and s.class_label(13) == "class 13 (4097 B and up)"
    t = SegregatedFirstFit()                 # LP64: 8-byte tags, 16-byte grain, 32-byte minimum
    assert t.min_block == 32 and t.min_class == 5 and t.grain == 16
    u = SegregatedFirstFit(word=4, last_class=256)
    assert u.last_class == 9 and u.size_class(300) == 9 and u.class_label(9) == "class 9 (257 B and up)"


def test_the_heap_starts_as_cs_app_lays_it_out():
    s = SegregatedFirstFit(word=4)
    assert s.walk() == [] and s.heap_size == 0       # mm_init runs at the first malloc
    p = s.malloc(100)                                # 100 + 8 -> 112 bytes
    s.check()
    # [pad 4][prologue header 4, footer 4] then the first block at 12 (payload
    # 16, aligned); extend_heap(4096) turned the epilogue into a free block of
    # 4096, which the request split; the new epilogue is the last word.
    assert p == 16
    assert layout(s) == [(0, 12, META), (12, 112, USED), (124, 3984, FREE_BLOCK), (4108, 4, META)]
    assert of_type(s, Grow) == [Grow(0, 16), Grow(16, 4096)]     # mm_init: 4 words, then CHUNKSIZE
    assert of_type(s, Split) == [Split(12, 4096, 12, 112, 124, 3984)]
    assert s.class_list(12) == [124]                  # 3984 is in class 12 (2049-4096)


def test_first_fit_in_lifo_order_is_not_best_fit():
    s = SegregatedFirstFit(word=4)
    a, b = spaced(s, (100, 120))                     # blocks of 112 and 128: both class 7
    s.free(a)
    s.free(b)
    s.check()
    assert s.class_list(7) == [b - 4, a - 4]          # LIFO: the last freed first
    p = s.malloc(96)                                 # 104 bytes, class 7
    s.check()
    # the head (128 bytes) fits and is taken, though 112 would fit better;
    # the 24 bytes left go to class 5
    assert p == b
    assert [e for e in s.rec.events if isinstance(e, (ClassProbe, Visit))] == [
        ClassProbe(7, b - 4), Visit(b - 4, 128, True)]
    assert of_type(s, Split) == [Split(b - 4, 128, b - 4, 104, b - 4 + 104, 24)]
    assert of_type(s, ListInsert) == [ListInsert(b - 4 + 104, 24, (5,))]
    assert s.rec.visits == 2 and s.rec.probes == 1


def test_a_rest_of_one_minimum_block_is_split_off_a_smaller_one_is_not():
    s = SegregatedFirstFit(word=4)
    a, = spaced(s, (120,))                           # a 128-byte block
    s.free(a)
    assert s.malloc(104) == a                        # 112 bytes: 16 left, a minimum block
    assert of_type(s, Split) == [Split(a - 4, 128, a - 4, 112, a - 4 + 112, 16)]
    assert of_type(s, ListInsert) == [ListInsert(a - 4 + 112, 16, (4,))]
    t = SegregatedFirstFit(word=4)
    b, = spaced(t, (120,))
    t.free(b)
    assert t.malloc(105) == b                        # 120 bytes: 8 left, too few
    assert not of_type(t, Split) and t.live[b].block_size == 128
    t.check()


def test_a_class_without_a_fit_sends_the_search_to_the_larger_classes():
    s = SegregatedFirstFit(word=4)
    a, b = spaced(s, (60, 300))                      # 72 (class 7) and 312 (class 9)
    s.free(a)
    s.free(b)
    p = s.malloc(100)                                # 112: class 7 holds only 72
    s.check()
    assert p == b
    assert [e for e in s.rec.events if isinstance(e, (ClassProbe, Visit))] == [
        ClassProbe(7, a - 4), Visit(a - 4, 72, False), ClassProbe(8, None), ClassProbe(9, b - 4),
        Visit(b - 4, 312, True)]
    assert s.rec.visits == 5                          # 3 lists + 2 blocks


def test_address_ordered_lists_take_the_lowest_fit():
    s = SegregatedFirstFit(word=4, address_ordered=True)
    a, b, c = spaced(s, (120, 100, 110))
    for p in (a, c, b):
        s.free(p)
        s.check()
    assert s.class_list(7) == [a - 4, b - 4, c - 4]
    assert [e.addr for e in of_type(s, ListWalkStep)] == [a - 4]   # b's insert passed a
    assert s.malloc(90) == a                          # the lowest block that fits


def test_free_coalesces_both_neighbours_through_the_tags():
    s = SegregatedFirstFit(word=4)
    a, b, c = s.malloc(100), s.malloc(100), s.malloc(100)
    s.malloc(8)
    s.free(a)
    s.free(c)
    s.free(b)                                         # joins a below and c above
    s.check()
    assert of_type(s, Coalesce) == [Coalesce(a - 4, 112, b - 4, 112), Coalesce(a - 4, 224, c - 4, 112)]
    assert of_type(s, ListRemove) == [ListRemove(a - 4, 112, (7,)), ListRemove(c - 4, 112, (7,))]
    assert of_type(s, ListInsert) == [ListInsert(a - 4, 336, (9,))]
    assert s.rec.merges == 2


def test_the_heap_grows_by_the_request_or_the_chunk_joining_a_free_last_block():
    s = SegregatedFirstFit(word=4)
    s.malloc(100)                                     # 3984 bytes stay free at the end
    p = s.malloc(6000)                                # 6008: no list holds it
    s.check()
    # extend_heap(max(6008, 4096)): the new block joins the free 3984 before it
    assert of_type(s, Grow) == [Grow(4112, 6008)]
    assert of_type(s, Coalesce) == [Coalesce(124, 3984, 4108, 6008)]
    assert p == 128 and s.heap_size == 4112 + 6008
    assert s.class_list(12) == [124 + 6008] and s.block_size(124 + 6008) == 3984


def test_realloc_stays_while_the_block_holds_it_else_moves():
    s = SegregatedFirstFit(word=4)
    p = s.malloc(100)                                 # 112 bytes: holds 104
    assert s.realloc(p, 104) == p and s.realloc(p, 1) == p
    q = s.realloc(p, 105)
    assert q != p and s.live[q].request == 105
    s.check()


def test_in_a_pool_mem_sbrk_hands_it_out_from_the_bottom():
    s = SegregatedFirstFit(word=4, pool_size=6000)
    assert layout(s) == [(0, 6000, FREE_BLOCK)] and s.footprint == 0
    assert s.malloc(100) == 16
    assert layout(s)[-1] == (4112, 1888, FREE_BLOCK)
    assert s.structure()["outside"] == [{"addr": 4112, "why": "the pool not handed out by mem_sbrk yet"}]
    assert s.malloc(5000) is None                      # 5008 more bytes are not there
    s.check()


def test_check_finds_a_block_on_the_wrong_list_a_bad_footer_and_free_neighbours():
    s = SegregatedFirstFit(word=4)
    a, b = spaced(s, (100, 300))
    s.free(a)
    s.check()
    broken = copy.deepcopy(s)
    broken._ftr[a - 4 + 112 - 4] = 120
    with pytest.raises(HeapInvariantError, match="footer of"):
        broken.check()
    broken = copy.deepcopy(s)
    broken._remove(a - 4, 112)
    broken._next[a - 4], broken._prev[a - 4] = broken._next[~8], ~8
    broken._prev[broken._next[~8]] = a - 4
    broken._next[~8] = a - 4
    broken._free_bytes += 112
    with pytest.raises(HeapInvariantError, match="on the list of class 8, not 7"):
        broken.check()
    broken = copy.deepcopy(s)
    nxt = a - 4 + 112                                   # the 16-byte block after a
    broken._note_free(nxt + 4)
    broken._set(nxt, 16)
    with pytest.raises(HeapInvariantError, match="not coalesced"):
        broken.check()


def test_structure_is_one_list_per_class_in_class_order():
    s = SegregatedFirstFit(word=4)
    a, b = spaced(s, (100, 300))
    s.free(a)
    s.free(b)
    struct = s.structure()
    check_against_heap(struct, s.walk())
    assert struct["kind"] == "size-classes" and struct["order"] == "lifo"
    assert list(struct["lists"]) == list(range(4, 14))
    assert struct["lists"][7] == [a - 4] and struct["lists"][9] == [b - 4]
    assert (struct["class_low"][7], struct["class_high"][7], struct["class_high"][13]) == (65, 128, None)
    assert where(struct)[b - 4] == "the list of class 9"
    moved = copy.deepcopy(struct)
    moved["lists"][8] = moved["lists"].pop(9)
    moved["lists"][9] = []
    with pytest.raises(StructureMismatch, match="class 8 holds"):
        check_against_heap(moved, s.walk())


def test_explain_words_name_the_classes():
    s = SegregatedFirstFit(word=4)
    a, b = spaced(s, (60, 300))
    s.free(a)
    s.free(b)
    s.malloc(100)
    lines = [e.text for e in explain_step(s, s.rec)]
    assert "the list of class 8 (129-256 B) is empty" in lines
    assert any(line.startswith("the list of class 7 (65-128 B) starts at") for line in lines)


# ---------------------------------------------------- random and bundled
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(op_sequences(max_size=3000), st.sampled_from([4, 8]), st.booleans())
def test_random_traces_keep_every_invariant(ops, word, address_ordered):
    run_checked(SegregatedFirstFit(word=word, address_ordered=address_ordered), ops)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(op_sequences(max_size=9000), st.integers(0, 40000), st.sampled_from([16, 64]),
       st.sampled_from([16, 512, 1 << 20]))
def test_random_traces_under_a_limit_an_alignment_and_class_bounds(ops, limit, align, last_class):
    s = SegregatedFirstFit(heap_limit=limit, align=align, chunk=64, last_class=last_class)
    run_checked(s, ops)
    assert s.footprint <= limit


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(op_sequences(max_size=3000))
def test_fragmentation_probe_agrees_with_a_walk(ops):
    for s in (SegregatedFirstFit(word=4), SegregatedFirstFit(pool_size=20000)):
        assert_probe_matches_walk(s, ops)


def test_bundled_default_trace():
    trace = read_rep(default_trace_path())
    ops = list(zip(trace.kind.tolist(), trace.ids.tolist(), trace.sizes.tolist()))
    for address_ordered in (False, True):
        s = SegregatedFirstFit(record=False, address_ordered=address_ordered)
        where_ = check_long_trace(s, ops)
        assert where_ == {} and not s.rec.failed


def test_snapshot_restores_the_lists_in_order():
    s = SegregatedFirstFit()
    ptrs = spaced(s, (40, 700, 40, 900, 40, 700))
    for p in ptrs[1::2]:
        s.free(p)
    copy_ = SegregatedFirstFit.restore(s.snapshot())
    assert copy_.state_signature() == s.state_signature()
    assert copy_.malloc(700) == s.malloc(700)


def test_registered():
    s = make_strategy("segregated-first-fit", word=4, address_ordered=True)
    assert isinstance(s, SegregatedFirstFit) and s.address_ordered
