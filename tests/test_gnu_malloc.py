"""GNU malloc (Haertel, malloc.c/free.c/realloc.c 1989-1995), worked by hand.

LP64 defaults: BLOCKSIZE 4096; an info entry is 3 words (24 bytes), so the
first ``_heapinfo`` (HEAP / BLOCKSIZE = 1024 entries) is 24576 bytes, blocks
1-6 at address 0; ``struct list`` is 16 bytes, the smallest fragment.  Block
b is at ``(b - 1) * 4096``.  No object has a header.
"""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from heapscope.allocators.events import (BlockFragmented, Coalesce, FragBlockEmptied, FragLinked, Grow,
                                         GrowFailed, ListInsert, ListRemove, PointerMove, Shrink, Split,
                                         TableMoved, TopExtended, Visit, WalkStep)
from heapscope.allocators.gnu_malloc import GNUMalloc
from heapscope.allocators.registry import make_strategy
from heapscope.allocators.strategy import FREE_BLOCK, META, USED, HeapInvariantError, Strategy
from heapscope.allocators.structure import check_against_heap
from heapscope.traces import default_trace_path, read_rep

from .heap_harness import assert_probe_matches_walk, check_long_trace, op_sequences, run_checked

TABLE = 24576          # the first _heapinfo: 1024 entries of 24 bytes, blocks 1-6


def of_type(s, cls) -> list:
    return [e for e in s.rec.events if isinstance(e, cls)]


def test_fragment_sizes():
    s = GNUMalloc()
    # raised to sizeof (struct list) = 16, then to a power of two; more than
    # half a block (2048) takes whole blocks
    got = {}
    for n in (0, 16, 17, 20, 32, 33, 2048, 2049, 4096, 4097):
        p = s.malloc(n)
        got[n] = s.live[p].block_size
    assert got == {0: 16, 16: 16, 17: 32, 20: 32, 32: 32, 33: 64, 2048: 2048, 2049: 4096,
                   4096: 4096, 4097: 8192}
    t = GNUMalloc(word=4)             # ILP32: struct list is 8 bytes, the entry 12
    p = t.malloc(1)
    assert t.live[p].block_size == 8 and t.table == (1, 3)


def test_first_fragment_cuts_a_block_after_the_table():
    s = GNUMalloc()
    a = s.malloc(20)
    s.check()
    # initialize: _heapinfo (24576 bytes) at 0.  _fraghead[5] is empty, so
    # malloc (BLOCKSIZE): the free list is only the anchor, nothing to search:
    # morecore a block, block 7 at 24576, cut into 128 fragments of 32 bytes:
    # the first is returned, 127 pushed one by one (the last ends at the head).
    assert a == TABLE
    assert of_type(s, Grow) == [Grow(0, TABLE), Grow(TABLE, 4096)]
    assert of_type(s, BlockFragmented) == [BlockFragmented(TABLE, 5, 128)]
    assert s.rec.visits == 0
    lst = s.structure()["fraglists"][5]
    assert lst[0] == TABLE + 127 * 32 and lst[-1] == TABLE + 32 and len(lst) == 127
    assert s.nfree[7] == 127 and s.first[7] == 127
    assert [b[:3] for b in s.walk()[:3]] == [(0, TABLE, META), (TABLE, 32, USED), (TABLE + 32, 32, FREE_BLOCK)]
    # The next one pops the head: fragment 127; first becomes 126.
    b = s.malloc(20)
    assert b == TABLE + 127 * 32 and s.rec.visits == 1
    assert s.rec.events[:2] == [Visit(b, 32, True), ListRemove(b, 32, (5,))]
    assert s.nfree[7] == 126 and s.first[7] == 126


def test_a_freed_fragment_joins_its_block_group_and_an_empty_block_is_freed():
    s = GNUMalloc()
    a, b = s.malloc(20), s.malloc(20)        # fragments 0 and 127 of block 7
    s.free(b)
    # the block has free fragments: b goes right after the first of them (126)
    assert of_type(s, FragLinked) == [FragLinked(b, 32, 5, TABLE + 126 * 32)]
    assert s.structure()["fraglists"][5][:2] == [TABLE + 126 * 32, b]
    s.free(a)
    # every fragment of block 7 is free: off the list, the block is freed whole
    assert of_type(s, FragBlockEmptied) == [FragBlockEmptied(TABLE, 5, 128)]
    assert s.structure()["fraglists"][5] == []
    assert s.structure()["free_clusters"] == [TABLE]
    assert of_type(s, ListInsert) == [ListInsert(TABLE, 4096, ())]
    s.check()


def test_a_fragment_of_a_full_block_goes_at_the_head_and_names_itself_first():
    s = GNUMalloc()
    frags = [s.malloc(2048) for _ in range(2)]     # one block, two 2048-byte fragments
    assert frags == [TABLE, TABLE + 2048]
    s.free(frags[1])
    assert of_type(s, ListInsert) == [ListInsert(TABLE + 2048, 2048, (11,))]
    assert s.nfree[7] == 1 and s.first[7] == 1
    s.check()


def test_large_requests_search_from_the_roving_heapindex():
    s = GNUMalloc()
    a, b, c, d = (s.malloc(5000) for _ in range(4))    # 2 blocks each: blocks 7, 9, 11, 13
    assert [a, b, c, d] == [TABLE, TABLE + 8192, TABLE + 16384, TABLE + 24576]
    s.free(a)
    s.free(c)
    assert s.structure()["free_clusters"] == [a, c] and s.structure()["heapindex"] == c
    # Next fit, not first fit: the search starts at _heapindex (c), not at a.
    assert s.malloc(5000) == c
    assert s.rec.events[:3] == [Visit(c, 8192, True), ListRemove(c, 8192, ()),
                                PointerMove("_heapindex", c, None)]
    s.check()


def test_the_front_of_a_cluster_is_taken_and_the_rest_keeps_its_place():
    s = GNUMalloc()
    a = s.malloc(5 * 4096)
    s.malloc(20)                                        # a fragment block after it
    s.free(a)
    p = s.malloc(2 * 4096)
    assert p == a
    assert of_type(s, Split) == [Split(a, 5 * 4096, a, 2 * 4096, a + 2 * 4096, 3 * 4096)]
    assert s.structure()["heapindex"] == a + 2 * 4096
    s.check()


def test_free_joins_both_neighbours_and_walks_from_heapindex():
    s = GNUMalloc()
    a, b, c, d = (s.malloc(5000) for _ in range(4))
    s.free(a)
    s.free(c)                # heapindex = c
    s.free(b)                # walk back from c to a; b joins a, then c
    assert of_type(s, Visit) == [Visit(c, 8192, False, True), Visit(a, 8192, True, True)]
    assert s.rec.visits == 2
    assert of_type(s, Coalesce) == [Coalesce(a, 8192, b, 8192), Coalesce(a, 16384, c, 8192)]
    assert s.rec.merges == 2
    assert s.structure()["free_clusters"] == [a] and s.fsize[7] == 6
    s.check()


def test_a_final_cluster_of_eight_blocks_goes_back_to_the_system():
    s = GNUMalloc()
    s.malloc(20)
    top = s.heap_size
    p = s.malloc(7 * 4096)
    s.free(p)                                   # 7 blocks: kept
    assert s.heap_size == top + 7 * 4096 and not of_type(s, Shrink)
    q = s.malloc(8 * 4096)                       # from the 7 free blocks, the one missing is added
    assert q == p and of_type(s, TopExtended) == [TopExtended(p, 7 * 4096, 4096)]
    assert of_type(s, Grow) == [Grow(top + 7 * 4096, 4096)]
    s.free(q)                                   # 8 blocks ending the heap: all given back
    assert of_type(s, Shrink) == [Shrink(top + 8 * 4096, 8 * 4096)]
    assert s.heap_size == top and s.arena.peak == top + 8 * 4096
    assert s.structure()["free_clusters"] == []
    s.check()


def test_the_table_moves_when_the_heap_outgrows_it():
    s = GNUMalloc()
    s.malloc(5000)                                # blocks 7-8
    p = s.malloc(4 * 1024 * 1024)                 # ends past block 1024
    # a table of 2048 entries (49152 bytes, 12 blocks) at the top; the old
    # one (6 blocks at 0) is freed like a block and becomes a free cluster
    end = TABLE + 8192 + 4 * 1024 * 1024
    assert of_type(s, TableMoved) == [TableMoved(0, TABLE, end, 49152)]
    assert s.table == (s.BLOCK(end), 12)
    assert s.structure()["free_clusters"] == [0] and s.fsize[1] == 6
    assert of_type(s, WalkStep) == [] and s.rec.walked == 0    # the list was empty: no walk
    blocks = s.structure()["blocks"]
    assert blocks[0] == [0, 6, "free"] and blocks[-1] == [end, 12, "table"]
    s.check()


def test_realloc_shrinks_in_place_and_grows_into_its_free_neighbour():
    s = GNUMalloc()
    a = s.malloc(4 * 4096)
    b = s.malloc(2 * 4096)
    s.malloc(20)
    assert s.realloc(a, 4096 + 1) == a              # 2 blocks: the tail (2) is freed
    assert of_type(s, Split) == [Split(a, 4 * 4096, a, 2 * 4096, a + 2 * 4096, 2 * 4096)]
    assert s.structure()["free_clusters"] == [a + 2 * 4096]
    s.free(b)                                       # joins the tail: 4 free blocks after a
    # growing: free a first, so it joins the 4 after it, then malloc from there
    assert s.realloc(a, 5 * 4096) == a
    assert s.live[a].block_size == 5 * 4096
    s.check()
    assert s.realloc(a, 100) != a                   # a large block shrinking small moves to a fragment
    s.check()


def test_realloc_that_cannot_grow_takes_the_block_back():
    s = GNUMalloc(heap_limit=TABLE + 6 * 4096)
    x = s.malloc(2 * 4096)
    a = s.malloc(2 * 4096)
    s.malloc(4096)
    s.free(x)                         # a's predecessor is free: the free joins them
    assert s.realloc(a, 5 * 4096) is None
    assert s.rec.failed and a in s.live and s.live[a].block_size == 2 * 4096
    # "unfree": malloc the predecessor's part, then a's blocks, then free the former
    assert [b for b in s.structure()["blocks"]] == [[0, 6, "table"], [TABLE, 2, "free"],
                                                    [TABLE + 8192, 2, "busy"], [TABLE + 16384, 1, "busy"]]
    s.check()


def test_realloc_to_zero_frees_then_mallocs_and_undoes_a_failure():
    s = GNUMalloc()
    a = s.malloc(100)
    # free(a): a was the only fragment in use of its block of 128-byte
    # fragments, so the block is freed; malloc(0) cuts that same block into
    # 16-byte fragments and returns its first: the same address, another class
    b = s.realloc(a, 0)
    assert b == a and s.live[b].block_size == 16
    assert s.structure()["frag_blocks"][a]["log"] == 4
    s.check()
    t = GNUMalloc(heap_limit=TABLE + 4096)
    p = t.malloc(2048)
    q = t.malloc(2048)                 # the block is full of 2048-byte fragments
    before = t.state_signature()
    assert t.realloc(p, 0) is None     # malloc(0) needs a new block: past the limit
    assert t.state_signature() == before and p in t.live
    t.check()


# ------------------------------------------------------------------ corruption
def test_check_detects_a_broken_cluster_list_and_a_wrong_nfree():
    s = GNUMalloc()
    a, b, c = (s.malloc(5000) for _ in range(3))
    s.free(a)
    s.free(c)
    s.fprev[s.BLOCK(c)] = 0
    with pytest.raises(HeapInvariantError, match="prev is 0"):
        s.check()
    t = GNUMalloc()
    t.malloc(20)
    t.nfree[7] += 1
    with pytest.raises(HeapInvariantError, match="free fragments"):
        t.check()


def test_check_detects_scattered_fragments_of_one_block():
    s = GNUMalloc()
    ps = [s.malloc(2048) for _ in range(4)]          # blocks 7 and 8, two fragments each
    s.free(ps[1])
    s.free(ps[3])                                     # list: [block 8's, block 7's]
    lst = s._frag_list(11)
    assert len(lst) == 2
    with pytest.raises(HeapInvariantError):
        s.nfree[7] = 2
        s.check()


# --------------------------------------------------------- random and bundled
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(op_sequences(max_size=20000))
def test_random_traces_keep_every_invariant(ops):
    run_checked(GNUMalloc(), ops)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(op_sequences(max_size=20000),
       st.sampled_from([dict(word=4), dict(blocksize=512), dict(final_free_blocks=1),
                        dict(heap_limit=60000), dict(pool_size=70000), dict(align=64),
                        dict(align=4096, word=4)]))
def test_random_traces_under_other_parameters(ops, params):
    s = GNUMalloc(**params)
    run_checked(s, ops)
    check_against_heap(s.structure(), s.check())


@settings(max_examples=60, deadline=None)
@given(op_sequences(max_ops=60, max_size=20000))
def test_fragmentation_probe_matches_the_generic_one_after_every_op(ops):
    assert_probe_matches_walk(GNUMalloc(), ops)


def test_bundled_default_trace():
    trace = read_rep(default_trace_path())
    s = make_strategy("gnu-malloc")
    assert isinstance(s, GNUMalloc)
    check_long_trace(s, list(trace))
    assert not s.live and not s._frag_list(5)


def test_snapshot_restores_the_same_table_and_lists():
    s = GNUMalloc()
    ps = [s.malloc(n) for n in (40, 3000, 17, 9000, 5000, 64)]
    s.free(ps[1])
    s.free(ps[3])
    r = Strategy.restore(s.snapshot())
    assert r.state_signature() == s.state_signature()
    assert r.malloc(3000) == s.malloc(3000)
    r.check()


def test_explain_in_the_originals_words():
    from heapscope.allocators.explain import explain_step
    s = GNUMalloc()

    def lines():
        return [x.text for x in explain_step(s, s.rec)]

    a = s.malloc(20)
    assert ("_fraghead[5] empty: malloc (BLOCKSIZE) = 0x6000, cut into 128 fragments of 32 B; the "
            "first is returned, the rest linked") in lines()
    assert "cut a block into 128 fragments of 32 B" in s.describe_record(s.rec)
    b = s.malloc(20)
    assert lines()[0] == "_fraghead[5].next = 0x6fe0: pop it"
    c = [s.malloc(5000) for _ in range(4)]
    s.free(c[0])
    s.free(c[2])
    s.free(b)
    assert lines()[-1] == "free: fragment 0x6fe0 linked after 0x6fc0, its block's first free one"
    s.free(c[1])
    assert "free: i = 0xb000 (2 blocks) on the way from _heapindex" in lines()
    assert lines()[-1] == "_heapindex = 0x7000"
    p = s.malloc(50000)
    s.free(p)
    assert lines()[-1] == ("the final free cluster has 13 >= 8 blocks and ends the heap: "
                           "__morecore (-53248)")
    assert "gave 13 blocks back to the system" in s.describe_record(s.rec)


def test_rare_steps_replay_from_their_events():
    """The steps random programs seldom reach (a cluster extended at the
    break, the table moving, the unfree of a failed realloc, a cluster given
    back) say every change they make to the structure."""
    from heapscope.allocators.structure_replay import replay_events, replayable
    s = GNUMalloc(heap_limit=5 * 1024 * 1024)
    seen = set()

    def step(f, *args):
        before = s.structure()
        out = f(*args)
        assert replay_events(before, s.rec.events) == replayable(s.structure()), s.rec.events
        seen.update(type(e).__name__ for e in s.rec.events)
        s.check()
        return out

    a = step(s.malloc, 20)
    p = step(s.malloc, 7 * 4096)
    step(s.free, p)
    q = step(s.malloc, 9 * 4096)          # the 7 free blocks at the break are extended
    big = step(s.malloc, 4 * 1024 * 1024)  # the table moves
    step(s.free, q)
    x = step(s.malloc, 2 * 4096)
    step(s.malloc, 4096)
    assert step(s.realloc, x, 2 * 1024 * 1024) is None    # free, fail, unfree
    r = step(s.malloc, 12 * 4096)         # no cluster is that long: at the break
    assert r + 12 * 4096 == s.core_top
    step(s.free, r)                       # given back
    step(s.free, big)
    step(s.free, a)
    assert {"TopExtended", "TableMoved", "Shrink", "FragBlockEmptied", "Split", "Coalesce"} <= seen
