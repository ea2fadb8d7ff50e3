"""Vo's best fit on a splay tree (Vmbest), worked by hand.

LP64: W = 8.  A block has a one-word header, so a request of n bytes takes
need = max(round8(n + 8), 48) bytes: 48 = MINSIZE (header + left, right,
parent, link = 5 words) + the self word.  A block of k bytes is asked for
with malloc(k - 8).  The first malloc grows the heap by 4096 bytes and cuts
blocks from the front of the wilderness, so blocks come in address order.

Tree pictures below are written  key@addr  with L/R children.
"""

from hypothesis import HealthCheck, given, settings
import pytest

from heapscope.allocators.events import Coalesce, Grow, GrowFailed, PointerMove, Rotation, Visit
from heapscope.allocators.registry import STRATEGIES, make_strategy
from heapscope.allocators.events import TreeJoin
from heapscope.allocators.splay_best_fit import PFREE, SplayBestFit, TreeInsert, TreeRemove
from heapscope.allocators.strategy import HeapInvariantError
from heapscope.traces import read_rep
from heapscope.traces.bundled import default_trace_path

from .heap_harness import ALLOC, FREE, assert_probe_matches_walk, check_long_trace, op_sequences, run_checked

SEPARATOR = 40   # malloc(40) -> a 48-byte used block between two freed ones


def rotations(s: SplayBestFit) -> list[tuple[str, int, int]]:
    return [(e.kind, e.key, e.addr) for e in s.rec.events if isinstance(e, Rotation)]


def visits(s: SplayBestFit) -> list[tuple[int, int, bool]]:
    return [(e.addr, e.size, e.fits) for e in s.rec.events if isinstance(e, Visit)]


def leaf(key, *addrs):
    return (key, list(addrs), None, None)


def build_tree() -> SplayBestFit:
    """Blocks of 480, 120, 240, 400, 296, 352, 352, 64, 560 bytes, each followed
    by a 48-byte used separator, then freed in that order (leaf insertions).

    Addresses: 480@0 (sep 480), 120@528 (sep 648), 240@696 (sep 936),
    400@984 (sep 1384), 296@1432 (sep 1728), 352@1776 (sep 2128),
    352@2176 (sep 2528), 64@2576 (sep 2640), 560@2688 (sep 3248);
    the wilderness is [3296, 4096).

    Leaf insertion, by size:   480@0
                              /      \\
                        120@528      560@2688
                        /     \\
                   64@2576   240@696
                                 \\
                                400@984
                                /
                           296@1432
                                 \\
                                352@1776 -> list [2176]
    """
    s = SplayBestFit()
    blocks = []
    for k in (480, 120, 240, 400, 296, 352, 352, 64, 560):
        blocks.append(s.malloc(k - 8))
        s.malloc(SEPARATOR)
    assert [p - 8 for p in blocks] == [0, 528, 696, 984, 1432, 1776, 2176, 2576, 2688]
    assert s.wilderness == 3296
    for p in blocks:
        s.free(p)
        s.check()
    return s


def test_registered_by_name():
    assert STRATEGIES["splay-best-fit"] is SplayBestFit
    assert isinstance(make_strategy("splay-best-fit", word=4), SplayBestFit)


def test_minsize_and_least_block():
    s = SplayBestFit()
    assert s.minsize == 40 and s.min_block == 48
    p = s.malloc(0)
    assert s.live[p].block_size == 48
    t = SplayBestFit(word=4)
    assert t.minsize == 20 and t.min_block == 24


def test_leaf_insertions_build_the_expected_tree():
    s = build_tree()
    assert s.tree() == (
        480, [0],
        (120, [528], leaf(64, 2576),
         (240, [696], None,
          (400, [984],
           (296, [1432], None, leaf(352, 1776, 2176)),
           None))),
        leaf(560, 2688))
    assert s.wilderness == 3296
    assert s.rec.rotations == 0          # insertions never splay


def test_splay_zig_zag_then_zig_zig_then_zig():
    s = build_tree()
    # malloc(336): need 344.  Search, remembering the least size >= 344:
    #   480@0 fits (best, go left), 120@528 no (right), 240@696 no (right),
    #   400@984 fits (best, left), 296@1432 no (right), 352@1776 fits (best,
    #   left: empty).  Six nodes examined; best = 352@1776, depth 5, path
    #   L R R L R from the root.
    # Bottom-up splay of 1776:
    #   1. parent 1432 is a LEFT child of 984 and 1776 a RIGHT child of 1432:
    #      zig-zag.  1432 becomes 1776's left, 984 its right; 1776 hangs right of 696.
    #   2. parent 696 is a RIGHT child of 528 and 1776 a RIGHT child of 696:
    #      zig-zig.  Rotate 528-696 first (696 up, 528 its left), then 696-1776
    #      (1776 up; 696 takes 1776's old left 1432 as its right).  1776 is now
    #      the left child of the root.
    #   3. parent 0 is the root: zig.  0 takes 1776's right (984) as its left.
    #   Rotations: 2 + 2 + 1 = 5.
    # 1776 heads a size list: its first member 2176 takes its place (Vmbest:
    # "use next one for root").  352 - 344 = 8 < 48: no split, payload 1784.
    p = s.malloc(336)
    s.check()
    assert p == 1784
    assert visits(s) == [(0, 480, True), (528, 120, False), (696, 240, False),
                         (984, 400, True), (1432, 296, False), (1776, 352, True)]
    assert s.rec.visits == 6
    assert rotations(s) == [("zig-zag", 352, 1776), ("zig-zig", 352, 1776), ("zig", 352, 1776)]
    # each step names the nodes it moved and the side 1776 hung on
    assert [e for e in s.rec.events if isinstance(e, Rotation)] == [
        Rotation("zig-zag", 352, 1776, 1432, 984, "right"),
        Rotation("zig-zig", 352, 1776, 696, 528, "right"),
        Rotation("zig", 352, 1776, 0, None, "left")]
    assert s.rec.rotations == 5
    assert TreeRemove(1776, 352, 2176) in s.rec.events
    assert s.rec.splits == 0
    #        352@2176
    #       /         \
    #   240@696       480@0
    #   /     \       /    \
    # 120@528 296   400    560
    #  /     @1432  @984   @2688
    # 64@2576
    assert s.tree() == (
        352, [2176],
        (240, [696], (120, [528], leaf(64, 2576), None), leaf(296, 1432)),
        (480, [0], leaf(400, 984), leaf(560, 2688)))
    assert s.tree_root() == 2176

    # malloc(232): need 240.  352@2176 fits (best, left), 240@696 exact: stop.
    # 696's parent is the root: one zig.  696 has no size list: its subtrees
    # 120@528 and 352@2176 are joined by splaying the least node of the right
    # one (296@1432, the left child of 2176: a zig) and hanging 120@528 on it.
    q = s.malloc(232)
    s.check()
    assert q == 704
    assert visits(s) == [(2176, 352, True), (696, 240, True)]
    assert rotations(s) == [("zig", 240, 696), ("zig", 296, 1432)]
    assert s.rec.rotations == 2
    assert TreeRemove(696, 240, None) in s.rec.events
    # The join's zig happens at the top of the detached right subtree (no
    # grandparent), then 120@528 hangs left of 1432, the new root.
    tree_ops = [e for e in s.rec.events if isinstance(e, (Rotation, TreeRemove, TreeJoin))]
    assert tree_ops == [Rotation("zig", 240, 696, 2176, None, "left"), TreeRemove(696, 240, None),
                        Rotation("zig", 296, 1432, 2176, None, "left"), TreeJoin(528, 2176, 1432)]
    assert s.tree() == (
        296, [1432],
        (120, [528], leaf(64, 2576), None),
        (352, [2176], None, (480, [0], leaf(400, 984), leaf(560, 2688))))

    # free the separator 480 (48 bytes): PFREE says the block below is free;
    # its self word names 480@0.  Removing 0 from the tree splays it first:
    # 1432 -R-> 2176 -R-> 0 is a zig-zig; then its subtrees (2176..., 560@2688)
    # join with no rotation (2688 has no left child).  Joined: 0 of 528 bytes.
    # Above it, 120@528 is free: splayed out (zig-zig, then zig at the root),
    # its subtrees joined by a zig of 296@1432.  Joined: 0 of 648 bytes.  Above
    # is the separator at 648 (used): 0 is inserted as a leaf, right of 560@2688
    # after two visits.  Rotations 2 + 2 + 1 + 1 = 6.
    s.free(488)
    s.check()
    assert rotations(s) == [("zig-zig", 480, 0), ("zig-zig", 120, 528), ("zig", 120, 528),
                            ("zig", 296, 1432)]
    assert s.rec.rotations == 6
    assert [e for e in s.rec.events if isinstance(e, Coalesce)] == [
        Coalesce(0, 480, 480, 48), Coalesce(0, 528, 528, 120)]
    assert TreeInsert(0, 648, 2688, "right") in s.rec.events
    assert s.rec.visits == 2
    # free's search is the insertion walk: 296@1432 (go right), 560@2688 (stop)
    assert [e for e in s.rec.events if isinstance(e, Visit)] == [
        Visit(1432, 296, False, True), Visit(2688, 560, True, True)]
    assert s.mem[648] & PFREE
    assert s.tree() == (
        296, [1432],
        leaf(64, 2576),
        (560, [2688], (352, [2176], None, leaf(400, 984)), leaf(648, 0)))


def test_wilderness_used_only_when_no_tree_block_fits():
    s = build_tree()
    # need 600: nothing in the tree is that big (480@0, then 560@2688: both too
    # small); the last node examined (2688) is splayed (a zig), then the
    # wilderness 3296 (800 bytes) is cut: the rest 200 stays the wilderness.
    p = s.malloc(592)
    s.check()
    assert p == 3304
    assert visits(s) == [(0, 480, False), (2688, 560, False), (3296, 800, True)]
    assert rotations(s) == [("zig", 560, 2688)]
    assert s.wilderness == 3896
    assert PointerMove("wilderness", 3296, 3896) in s.rec.events
    # need 64: the tree has 64@2576 (an exact fit), the wilderness is not looked at.
    q = s.malloc(56)
    assert q == 2584
    assert s.wilderness == 3896


def test_wilderness_grows_and_gathers_free_blocks_at_the_top():
    s = SplayBestFit()
    a = s.malloc(100)           # need 112: sbrk(4096); a = [0, 112), wilderness 112
    assert (a, s.wilderness) == (8, 112)
    # malloc(5000): need 5008.  The tree is empty; the wilderness (3984) is too
    # small: sbrk the shortfall 1024 rounded up to 4096 at 4096; the wilderness
    # 112 grows to 8080 and its front 5008 goes: b = 112, wilderness 5120 (3072).
    b = s.malloc(5000)
    s.check()
    assert b == 120
    assert s.heap_size == 8192
    assert Grow(4096, 4096) in s.rec.events
    assert Coalesce(112, 3984, 4096, 4096) in s.rec.events
    assert visits(s) == [(112, 3984, False), (112, 8080, True)]
    assert s.wilderness == 5120
    # free(b): its upper neighbour is the wilderness: joined, and the block
    # reaches the top, so it is the wilderness (never in the tree).
    s.free(b)
    s.check()
    assert s.wilderness == 112 and s.tree() is None
    # the old wilderness is named as it is replaced by the joined block
    assert [e for e in s.rec.events if isinstance(e, PointerMove)] == [PointerMove("wilderness", 5120, 112)]
    s.free(a)
    s.check()
    assert s.wilderness == 0 and s.walk()[0].size == 8192


def test_split_leftover_threshold_is_minsize_plus_a_word():
    s = SplayBestFit()
    x = s.malloc(192)           # block of 200
    s.malloc(SEPARATOR)
    s.free(x)
    # need 152: leftover 48 = MINSIZE + W: split, the 48 bytes go back as a leaf.
    p = s.malloc(144)
    assert s.rec.splits == 1 and s.live[p].block_size == 152
    assert s.tree() == leaf(48, 152)
    s.check()
    t = SplayBestFit()
    x = t.malloc(192)
    t.malloc(SEPARATOR)
    t.free(x)
    # need 160: leftover 40 < 48: the whole 200-byte block is handed out.
    p = t.malloc(152)
    assert t.rec.splits == 0 and t.live[p].block_size == 200
    assert t.tree() is None
    t.check()


def test_failing_malloc_under_a_heap_limit_keeps_the_heap():
    s = SplayBestFit(heap_limit=4096)
    assert s.malloc(3000) is not None      # 3008 from the first 4096
    assert s.malloc(2000) is None          # wilderness 1088 < 2008; sbrk(4096) fails
    assert s.rec.failed
    assert GrowFailed(4096) in s.rec.events
    s.check()
    assert s.heap_size == 4096
    assert sum(b.size for b in s.walk()) == 4096
    assert s.malloc(1000) is not None      # the wilderness still serves
    s.check()


def test_fixed_pool():
    s = SplayBestFit(pool_size=1000)
    assert s.wilderness == 0
    p = s.malloc(900)
    assert s.malloc(200) is None
    s.free(p)
    s.check()
    assert s.wilderness == 0


def test_check_detects_broken_tree_order():
    s = build_tree()
    root = s.tree_root()
    s.left[root], s.right[root] = s.right[root], s.left[root]
    with pytest.raises(HeapInvariantError, match="tree out of order"):
        s.check()


def test_check_detects_a_wrong_parent_link():
    s = build_tree()
    s.parent[984] = 0                      # 984 is the right child of 696
    with pytest.raises(HeapInvariantError, match=r"right child 0x3d8 of 0x2b8 has parent 0"):
        s.check()


def test_check_detects_a_block_of_another_size_in_a_size_list():
    s = build_tree()
    # Move leaf 64@2576 from the tree into the size list of 352@1776, after 2176.
    s.left[528] = None
    del s.left[2576], s.right[2576], s.parent[2576]
    s.link[2176] = 2576
    s.prev[2576] = 2176
    with pytest.raises(HeapInvariantError,
                       match=r"size list of node 0x6f0 \(size 352\) holds 0xa10 of size 64"):
        s.check()


def test_check_detects_a_lost_pfree_bit():
    s = build_tree()
    s.mem[480] &= ~PFREE                   # the separator above 480@0 forgets it is free
    with pytest.raises(HeapInvariantError, match="block 0x1e0 has PFREE clear but the block below is free"):
        s.check()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(op_sequences())
def test_random_traces_keep_every_invariant(ops):
    run_checked(SplayBestFit(), ops)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(op_sequences(max_size=9000))
def test_random_traces_under_a_heap_limit_and_other_layouts(ops):
    run_checked(SplayBestFit(heap_limit=30000, word=4), ops)
    run_checked(SplayBestFit(align=16, chunk=64), ops)
    run_checked(SplayBestFit(pool_size=20005), ops)


def test_snapshot_restores_the_same_heap():
    s = build_tree()
    s.malloc(336)
    t = SplayBestFit.restore(s.snapshot())
    assert t.state_signature() == s.state_signature()
    assert t.malloc(232) == s.malloc(232)
    assert t.state_signature() == s.state_signature()


def test_bundled_default_trace_keeps_every_invariant():
    trace = read_rep(default_trace_path())
    ops = list(zip(trace.kind.tolist(), trace.ids.tolist(), trace.sizes.tolist()))
    assert len(ops) >= 10000 and {k for k, _, _ in ops} <= {ALLOC, FREE}
    s = SplayBestFit(record=False)
    check_long_trace(s, ops)
    assert not s.live
    # Everything freed: one block, the wilderness, and an empty tree.
    assert s.tree() is None and s.wilderness == s.start


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(op_sequences(max_size=5000))
def test_fast_fragmentation_probe_agrees_with_a_walk(ops):
    # The override keeps running totals; the base class walks free_blocks().
    for s in (SplayBestFit(), SplayBestFit(pool_size=30001, align=16)):
        assert_probe_matches_walk(s, ops)


def test_a_chunk_that_is_not_a_power_of_two_rounds_growth_to_its_multiples():
    # vmalloc's ROUND(s, r) divides; the bit trick of align_up only works for
    # powers of two (it grew the heap by 5111 & -5000 = 104 bytes here).
    s = SplayBestFit(chunk=5000)
    s.malloc(100)                 # 112 bytes needed: one chunk
    assert s.heap_size == 5000
    s.malloc(6000)                # 6008 needed, 4888 left in the wilderness: one more chunk
    assert s.heap_size == 10_000
    s.check()
