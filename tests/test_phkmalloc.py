"""phkmalloc (Kamp, FreeBSD src/lib/libc/stdlib/malloc.c), worked by hand.

LP64 defaults: 4096-byte pages, ``malloc_minsize`` 16, ``malloc_cache`` 16
pages.  ``struct pginfo`` is 24 bytes before its bitmap of 32-bit words
(``l = 24 + 4 * ceil(chunks / 32)``), kept in the page when the chunk is at
most ``2l``; ``struct pgfree`` is 40 bytes, a 64-byte chunk.
"""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from heapscope.allocators.events import (ChunkFreed, ChunkPageDissolved, ChunkPageLinked, ChunkPageMade,
                                         ChunkPageUnlinked, ChunkTaken, Coalesce, Grow, InsertionPoint,
                                         ListInsert, ListRemove, Shrink, Split, Visit, WalkStep)
from heapscope.allocators.phkmalloc import MALLOC_FIRST, MALLOC_FOLLOW, MALLOC_FREE, PageInfo, PhkMalloc
from heapscope.allocators.registry import make_strategy
from heapscope.allocators.replay import Program, apply_op
from heapscope.allocators.strategy import FREE_BLOCK, META, USED, HeapInvariantError, Strategy
from heapscope.allocators.structure import check_against_heap
from heapscope.traces import default_trace_path, read_rep

from .heap_harness import assert_probe_matches_walk, check_long_trace, op_sequences, run_checked

P = 4096


def of_type(s, cls) -> list:
    return [e for e in s.rec.events if isinstance(e, cls)]


def test_pginfo_in_the_page_or_apart():
    s = PhkMalloc()
    # l = 24 + 4 * ceil(chunks / 32); in the page when 2**j <= 2l:
    #   16 B: 256 chunks, l = 56: in the page, ceil(56/16) = 4 chunks stolen
    #   32 B: l = 40: 2 stolen;  64 B: l = 32: 64 <= 64, 1 stolen
    #   128 B and up: l = 28: apart, in a 32-byte chunk
    assert [s._pginfo_bytes(j) for j in (4, 5, 6, 7, 11)] == [56, 40, 32, 28, 28]
    for n in (16, 32, 64, 128, 2048):
        s.malloc(n)
    pages = {bp.size: (bp.stolen, bp.info == bp.page) for bp in s.page_dir.values()
             if isinstance(bp, PageInfo)}
    assert pages == {16: (4, True), 32: (2, True), 64: (1, True), 128: (0, False), 2048: (0, False)}
    s.check()
    # ILP32: l = 16 + ...: 64-byte chunks already keep theirs apart
    t = PhkMalloc(word=4)
    assert [t._pginfo_bytes(j) for j in (4, 5, 6)] == [48, 32, 24]


def test_first_malloc_makes_px_then_a_page_of_32_byte_chunks():
    s = PhkMalloc()
    a = s.malloc(20)
    s.check()
    # malloc_init: px = imalloc(40): a page of 64-byte chunks at 0 (its pginfo
    # in chunk 0), px = chunk 1.  Then malloc(20) -> 32-byte chunks: page
    # 0x1000, pginfo in its chunks 0 and 1, chunk 2 returned.
    assert a == 0x1040
    assert of_type(s, Grow) == [Grow(0, P), Grow(P, P)]
    assert of_type(s, ChunkPageMade) == [ChunkPageMade(0, 6, 64, 63, 0, 1),
                                         ChunkPageMade(P, 5, 32, 126, P, 2)]
    assert of_type(s, ChunkTaken) == [ChunkTaken(0, 6, 1, 64, 64, 1), ChunkTaken(P, 5, 2, 0x1040, 32, 1)]
    assert s.px == 64 and s.meta == {64: "pgfree"}
    assert s.rec.visits == 2
    blocks = [b[:3] for b in s.walk()]
    assert blocks[:3] == [(0, 64, META), (64, 64, META), (128, 64, FREE_BLOCK)]
    assert (0x1040, 32, USED) in blocks and (0x1000, 32, META) in blocks and (0x1020, 32, META) in blocks


def test_a_128_byte_chunk_page_keeps_its_pginfo_in_a_32_byte_chunk():
    s = PhkMalloc()
    s.malloc(20)
    b = s.malloc(100)
    # malloc_make_chunks(7): the page first (0x2000), then imalloc(28) for the
    # pginfo: the next 32-byte chunk, 0x1060
    assert b == 0x2000
    assert of_type(s, ChunkPageMade) == [ChunkPageMade(0x2000, 7, 128, 32, 0x1060, 0)]
    assert s.meta[0x1060] == "pginfo"
    s.check()


def test_pages_first_fit_and_the_front_of_a_run_is_taken():
    s = PhkMalloc()
    s.malloc(20)
    a = s.malloc(5 * P - 100)                      # 5 pages at 0x2000
    s.malloc(3000)                                 # 1 page at 0x7000
    s.free(a)
    assert [(r.page, r.end) for r in s.runs] == [(0x2000, 0x7000)]
    p = s.malloc(2 * P)
    assert p == 0x2000
    assert s.rec.events[:2] == [Visit(0x2000, 5 * P, True), Split(0x2000, 5 * P, 0x2000, 2 * P, 0x4000, 3 * P)]
    assert [(r.page, r.end) for r in s.runs] == [(0x4000, 0x7000)]
    assert s.page_dir[2] == MALLOC_FIRST and s.page_dir[3] == MALLOC_FOLLOW and s.page_dir[4] == MALLOC_FREE
    s.check()


def test_free_pages_use_px_then_malloc_a_record_and_join_neighbours():
    s = PhkMalloc()
    s.malloc(20)
    a, b, c = s.malloc(3000), s.malloc(3000), s.malloc(3000)      # pages 2, 3, 4
    s.malloc(3000)                                               # page 5 keeps the top busy
    s.free(a)                     # the first run takes px (64) as its record
    assert s.runs[0].holder == 64 and s.px is None
    assert of_type(s, ListInsert) == [ListInsert(a, P, ())]
    s.free(c)                     # px is gone: imalloc(40) gives the 64-byte chunk 128
    assert s.runs[1].holder == 128 and s.meta[128] == "pgfree"
    s.free(b)                     # appended to a's run, and c's run collapsed into it
    assert of_type(s, InsertionPoint) == [InsertionPoint(b, P, a, c)]
    assert of_type(s, ListRemove) == [ListRemove(c, P, ())]
    assert of_type(s, Coalesce) == [Coalesce(a, P, b, P), Coalesce(a, 2 * P, c, P)]
    # the spare record px came back unused, and c's record (128) was freed
    assert s.px is not None and 128 not in s.meta
    assert [(r.page, r.end) for r in s.runs] == [(a, a + 3 * P)]
    s.check()


def test_pages_prepended_to_a_run():
    s = PhkMalloc()
    s.malloc(20)
    a, b = s.malloc(3000), s.malloc(3000)
    s.malloc(3000)
    s.free(b)
    s.free(a)                                  # "Prepend to entry": the run now starts at a
    assert of_type(s, Coalesce) == [Coalesce(a, P, b, P)]
    assert [(r.page, r.end) for r in s.runs] == [(a, b + P)]
    s.check()


def test_the_top_is_given_back_beyond_malloc_cache():
    s = PhkMalloc()
    s.malloc(20)
    top = s.heap_size
    big = s.malloc(20 * P)
    s.free(big)
    # the last run ends at the break and is 20 > 16 pages: brk goes down to
    # keep 16 pages
    assert of_type(s, Shrink) == [Shrink(top + 20 * P, 4 * P)]
    assert s.heap_size == top + 16 * P and s.arena.peak == top + 20 * P
    assert [(r.page, r.end) for r in s.runs] == [(top, top + 16 * P)]
    s.check()
    t = PhkMalloc(cache_pages=1)
    t.malloc(20)
    t.free(t.malloc(3 * P))
    assert t.heap_size == top + P


def test_a_full_page_leaves_its_list_and_comes_back_on_free():
    s = PhkMalloc()
    chunks = [s.malloc(2048) for _ in range(2)]        # one page of two 2048-byte chunks
    assert of_type(s, ChunkPageUnlinked) == [ChunkPageUnlinked(chunks[0], 11)]
    assert s.buckets[11] == []
    s.free(chunks[1])
    assert of_type(s, ChunkFreed) == [ChunkFreed(chunks[0], 11, 1, chunks[1], 2048)]
    assert of_type(s, ChunkPageLinked) == [ChunkPageLinked(chunks[0], 11, None)]
    s.free(chunks[0])
    # all free: off the list, back to a plain page (its outside pginfo freed
    # first), then to the free pages
    kinds = [type(e).__name__ for e in s.rec.events]
    assert kinds.index("ChunkPageUnlinked") < kinds.index("ChunkPageDissolved") < kinds.index("ListInsert")
    assert chunks[0] not in {bp.page for bp in s.buckets[11]}
    assert s.page_dir[s._index(chunks[0])] == MALLOC_FREE
    s.check()


def test_the_page_list_insertion_stops_one_page_early():
    """free_bytes' "Insert in address order" compares the *next* page, so a
    page can land before a lower one: the list is only nearly in address order."""
    s = PhkMalloc()
    pages = []
    for _ in range(3):
        pages.append([s.malloc(2048), s.malloc(2048)])     # three full pages A < B < C
    A, B, C = (p[0] for p in pages)
    assert A < B < C and s.buckets[11] == []
    s.free(pages[1][1])             # B: [B]
    s.free(pages[0][1])             # A: [A, B]
    s.free(pages[2][1])             # C: the walk stops at A (B is not below C... its next): [A, C, B]
    assert [bp.page for bp in s.buckets[11]] == [A, C, B]
    assert of_type(s, ChunkPageLinked) == [ChunkPageLinked(C, 11, A)]
    s.check()


def test_realloc_rules():
    s = PhkMalloc()
    a = s.malloc(100)                           # a 128-byte chunk
    assert s.realloc(a, 65) == a                # smaller, more than half: stays
    assert s.realloc(a, 128) != a               # not smaller ("size < osize"): moves
    b = s.malloc(5000)                          # two pages
    assert s.realloc(b, 4097) == b              # still needs both pages
    assert s.realloc(b, 4096) != b              # one page fewer: moves
    c = s.malloc(16)
    assert s.realloc(c, 1) == c                 # the smallest chunk stays
    t = PhkMalloc(realloc_in_place=False)       # the R option: every realloc moves
    d = t.malloc(100)
    assert t.realloc(d, 90) != d
    s.check()
    t.check()


def test_align_raises_minsize_and_past_half_a_page_takes_pages():
    s = PhkMalloc(align=64)
    p = s.malloc(1)
    assert s.live[p].block_size == 64 and p % 64 == 0
    s.check()
    t = PhkMalloc(align=4096)
    q = t.malloc(1)
    assert t.live[q].block_size == 4096 and q % 4096 == 0
    t.check()


# ------------------------------------------------------------------ corruption
def test_check_detects_a_wrong_bitmap_and_a_page_off_its_list():
    s = PhkMalloc()
    s.malloc(20)
    bp = s.page_dir[1]
    bp.free += 1
    with pytest.raises(HeapInvariantError, match="bitmap"):
        s.check()
    t = PhkMalloc()
    t.malloc(20)
    t.buckets[5].clear()
    with pytest.raises(HeapInvariantError, match="on page_dir"):
        t.check()


def test_check_detects_unjoined_runs():
    s = PhkMalloc()
    s.malloc(20)
    a, b = s.malloc(3000), s.malloc(3000)
    s.malloc(3000)
    s.free(a)
    s.free(b)
    run = s.runs[0]
    s.runs[:] = [type(run)(a, b, run.holder), type(run)(b, b + P, None)]
    with pytest.raises(HeapInvariantError, match="touches it"):
        s.check()


# --------------------------------------------------------- random and bundled
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(op_sequences(max_size=20000))
def test_random_traces_keep_every_invariant(ops):
    run_checked(PhkMalloc(), ops)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(op_sequences(max_size=20000),
       st.sampled_from([dict(word=4), dict(pagesize=512), dict(cache_pages=1), dict(minsize=4, word=4),
                        dict(heap_limit=60000), dict(pool_size=70000), dict(align=256),
                        dict(realloc_in_place=False)]))
def test_random_traces_under_other_parameters(ops, params):
    s = PhkMalloc(**params)
    run_checked(s, ops)
    check_against_heap(s.structure(), s.check())


@settings(max_examples=60, deadline=None)
@given(op_sequences(max_ops=60, max_size=20000))
def test_fragmentation_probe_matches_the_generic_one_after_every_op(ops):
    assert_probe_matches_walk(PhkMalloc(), ops)


def test_bundled_default_trace():
    trace = read_rep(default_trace_path())
    s = make_strategy("phkmalloc")
    assert isinstance(s, PhkMalloc)
    check_long_trace(s, list(trace))
    assert not s.live


def test_snapshot_restores_the_same_directory_and_lists():
    s = PhkMalloc()
    ps = [s.malloc(n) for n in (40, 3000, 17, 9000, 5000, 64)]
    s.free(ps[1])
    s.free(ps[3])
    r = Strategy.restore(s.snapshot())
    assert r.state_signature() == s.state_signature()
    assert r.malloc(3000) == s.malloc(3000)
    r.check()


def test_explain_in_the_originals_words():
    from heapscope.allocators.explain import explain_step
    s = PhkMalloc()

    def lines():
        return [x.text for x in explain_step(s, s.rec)]

    s.malloc(20)
    assert ("malloc_make_chunks(5): page 0x1000 cut into 32 B chunks, 126 free; its pginfo is in the "
            "page, in its first 2 chunks; page_dir[5] = it") in lines()
    assert ("malloc_bytes: page_dir[5] -> page 0x1000; first set bit in bits[0]: chunk 2 at 0x1040 "
            "(32 B), bit cleared") in lines()
    s.malloc(100)
    assert "imalloc(28) for the pginfo of the page being cut: chunk 3 of page 0x1000 (0x1060)" in lines()
    a, b, c = s.malloc(3000), s.malloc(3000), s.malloc(3000)
    s.malloc(3000)
    s.free(a)
    s.free(c)
    assert "px is gone: px = imalloc(40) for the freed run's record: chunk 2 of page 0x0 (0x80)" in lines()
    s.free(b)
    assert "free_pages: 0x3000 (4096 B) and 0x4000 (4096 B) touch: one run of 8192 B" in lines()
    big = s.malloc(20 * P)
    s.free(big)
    assert lines()[-1].startswith("the last run is longer than malloc_cache (65536 B): brk back by")
    assert "gave pages back to the system" in s.describe_record(s.rec)


def test_rare_steps_replay_from_their_events():
    """A record lost the way the original loses it: each step says every
    change it makes to the structure."""
    from heapscope.allocators.events import Note
    from heapscope.allocators.structure_replay import replay_events, replayable

    def stepper(s):
        def step(f, *args):
            before = s.structure()
            out = f(*args)
            assert replay_events(before, s.rec.events) == replayable(s.structure()), s.rec.events
            s.check()
            return out
        return step

    s = PhkMalloc()
    step = stepper(s)
    step(s.malloc, 20)                         # px is chunk 1 of the 64-byte page 0
    for _ in range(62):
        step(s.malloc, 64)                     # page 0 full: page_dir[6] empty
    a, b, c, d = (step(s.malloc, 3000) for _ in range(4))
    step(s.free, a)                            # run a takes px as its record
    step(s.free, c)
    # px = imalloc(40): page_dir[6] is empty, so a page of 64-byte chunks is
    # made from the free run a, taken whole: its record becomes px inside the
    # call, then px is overwritten: lost, as in the original
    assert list(s.meta.values()).count("lost pgfree") == 1
    assert any(isinstance(e, Note) and "lost" in e.text for e in s.rec.events)

    step(s.free, b)                            # a's page holds chunks now: b joins c's run
    step(s.free, d)
    assert [(r.page, r.end) for r in s.runs] == [(b, d + P)]



@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(op_sequences(max_size=20000))
def test_each_ops_counters_match_its_events(ops):
    # The free-page list's walk counts its runs in one go (PhkMalloc._walk_runs):
    # a Visit (in a free) or a WalkStep (elsewhere) for each run counted.
    s = PhkMalloc()
    program = Program()
    for kind, ident, size in ops:
        rec = apply_op(s, program, kind, ident, size)
        assert rec.visits == sum(isinstance(e, Visit) for e in rec.events), (kind, size)
        assert rec.walked == sum(isinstance(e, WalkStep) for e in rec.events), (kind, size)
