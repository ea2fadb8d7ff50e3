"""The structure protocol (allocators/structure.py): every strategy's
``structure()`` agrees with its heap walk after every operation, on random
traces and on hand-made ones, and a broken answer is caught."""

import copy
import json
import pickle
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from heapscope.allocators import make_strategy, strategy_names
from heapscope.allocators.structure import (KINDS, StructureMismatch, check_against_heap, members,
                                            parse_tlsf_key, where)

ALL = strategy_names()

ops_strategy = st.lists(
    st.tuples(st.sampled_from("aaf"), st.integers(0, 30), st.integers(0, 3000)),
    min_size=1, max_size=120)


def replay_checking(s, ops, after):
    live = {}
    for op, ident, size in ops:
        if op == "a":
            if ident in live:
                p = s.realloc(live[ident], size)
            else:
                p = s.malloc(size)
            if p is not None:
                live[ident] = p
        else:
            s.free(live.pop(ident, None))
        after(s)


def policy_rules(s, struct):
    """What each kind must satisfy, checked against the strategy itself (not
    only the structure's own data)."""
    kind = struct["kind"]
    sizes = struct["sizes"]
    if kind == "address-ring":
        assert struct["free_list"] == sorted(struct["free_list"])
        if s.roving:
            assert struct["rover"] == s.rover
            assert struct["rover"] is None or struct["rover"] in struct["free_list"]
    elif kind == "tlsf":
        for key, addrs in struct["lists"].items():
            fl, sl = parse_tlsf_key(key)
            assert struct["fl_bitmap"] >> fl & 1 and struct["sl_bitmap"][fl] >> sl & 1
            for a in addrs:
                # each block is filed where mapping_insert puts its TLSF size (size word excluded)
                assert s.mapping_insert(sizes[a] - s.word) == (fl, sl), (hex(a), key)
        assert bin(struct["fl_bitmap"]).count("1") == sum(1 for row in struct["sl_bitmap"] if row)
    elif kind == "tree":
        keys = [n["key"] for n in struct["nodes"]]
        assert keys == sorted(set(keys))
        assert struct["wilderness"] == s.wilderness
        if struct["root"] is not None:
            assert struct["root"] == s.root
    elif kind == "buddy":
        for k, addrs in struct["avail"].items():
            assert all(sizes[a] == 1 << k for a in addrs)
            assert addrs == s.avail(k)
    elif kind == "buckets":
        for k, addrs in struct["buckets"].items():
            assert all(sizes[a] == struct["block_sizes"][k] for a in addrs)
    elif kind == "ring":
        assert struct["head"] == s.head
        assert (struct["head"] is None) == (not struct["free_list"])
        if struct["free_list"]:
            assert struct["free_list"][0] == struct["head"]


@pytest.mark.parametrize("name", ALL)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=ops_strategy, word=st.sampled_from([4, 8]), limited=st.booleans())
def test_structure_matches_the_heap_after_every_operation(name, ops, word, limited):
    params = {"word": word}
    if limited:
        params["heap_limit"] = 20000
    s = make_strategy(name, **params)

    def after(s):
        struct = s.structure()
        assert struct["kind"] in KINDS
        check_against_heap(struct, s.walk())
        policy_rules(s, struct)

    replay_checking(s, ops, after)


@pytest.mark.parametrize("name", ALL)
def test_structure_is_plain_data(name):
    s = make_strategy(name)
    replay_checking(s, [("a", i, 40 * i + 8) for i in range(12)] + [("f", i, 0) for i in range(0, 12, 3)],
                    lambda s: None)
    struct = s.structure()
    # picklable and JSON-writable as it is, with no Qt or strategy object inside
    assert pickle.loads(pickle.dumps(struct)) == struct
    text = json.dumps(struct)
    assert json.loads(text)["kind"] == struct["kind"]
    # every free block is somewhere the views can name
    places = where(struct)
    assert set(places) == set(members(struct))
    assert all(isinstance(v, str) and v for v in places.values())


def test_a_structure_missing_a_free_block_is_caught():
    s = make_strategy("tlsf")
    ps = [s.malloc(n) for n in (100, 200, 300, 400)]
    s.free(ps[0])
    s.free(ps[2])
    struct = s.structure()
    check_against_heap(struct, s.walk())
    broken = copy.deepcopy(struct)
    key = next(iter(broken["lists"]))
    broken["lists"][key] = broken["lists"][key][1:]
    with pytest.raises(StructureMismatch, match="not in the tlsf structure"):
        check_against_heap(broken, s.walk())


def test_a_block_named_twice_or_a_wrong_bit_is_caught():
    s = make_strategy("tlsf")
    ps = [s.malloc(n) for n in (100, 200, 300)]
    s.free(ps[1])
    struct = s.structure()
    twice = copy.deepcopy(struct)
    key = next(iter(twice["lists"]))
    twice["lists"][key] = twice["lists"][key] * 2
    with pytest.raises(StructureMismatch, match="named twice"):
        check_against_heap(twice, s.walk())
    bit = copy.deepcopy(struct)
    bit["fl_bitmap"] ^= 1 << 7
    with pytest.raises(StructureMismatch, match="fl_bitmap bit 7"):
        check_against_heap(bit, s.walk())


def test_a_tree_out_of_order_or_a_ring_out_of_order_is_caught():
    s = make_strategy("splay-best-fit")
    ps = [s.malloc(n) for n in (100, 20, 300, 40, 500, 60)]
    for p in ps[::2]:
        s.free(p)
    struct = s.structure()
    check_against_heap(struct, s.walk())
    assert len(struct["nodes"]) >= 2
    swapped = copy.deepcopy(struct)
    swapped["nodes"][0]["key"], swapped["nodes"][1]["key"] = swapped["nodes"][1]["key"], swapped["nodes"][0]["key"]
    with pytest.raises(StructureMismatch):
        check_against_heap(swapped, s.walk())

    k = make_strategy("next-fit")
    ps = [k.malloc(n) for n in (100, 20, 300, 40, 500)]
    k.free(ps[0])
    k.free(ps[2])
    ring = k.structure()
    check_against_heap(ring, k.walk())
    assert len(ring["free_list"]) >= 2
    ring["free_list"].reverse()
    with pytest.raises(StructureMismatch, match="out of order"):
        check_against_heap(ring, k.walk())


def test_hand_made_next_fit_ring_with_its_rover():
    # K&R on LP64: 16-byte units; the first malloc asks sbrk for 1024 units
    # (16 KiB) and cuts its block from the tail; the rest stays at 0.  The
    # search found block 0 right after base, so freep = prevp = &base.
    s = make_strategy("next-fit")
    a = s.malloc(100)            # 7 data units + 1 header = 8 units = 128 B
    struct = s.structure()
    assert struct["free_list"] == [0]
    assert struct["sizes"] == {0: 16384 - 128}
    assert struct["rover"] is None
    # free walks from base past block 0, joins the freed tail to it, and
    # leaves freep at the block before the freed one: block 0.
    s.free(a)
    struct = s.structure()
    assert struct["free_list"] == [0] and struct["sizes"] == {0: 16384}
    assert struct["pointers"] == [{"name": "rover", "addr": 0, "role": "search"}]


def test_hand_made_buddy_avail_lists():
    # min order 4, chunk order 12: malloc(50) + 8-byte header -> order 6;
    # R splits 4096 -> 2048 -> ... -> 64, leaving one free buddy on each of
    # AVAIL[6..11].
    s = make_strategy("buddy")
    p = s.malloc(50)
    struct = s.structure()
    assert {k: v for k, v in struct["avail"].items() if v} == {
        6: [64], 7: [128], 8: [256], 9: [512], 10: [1024], 11: [2048]}
    assert struct["blocks"][0] == [0, 6, "used"]
    s.free(p)
    assert {k: v for k, v in s.structure()["avail"].items() if v} == {12: [0]}


def test_splay_wilderness_is_outside_the_tree():
    s = make_strategy("splay-best-fit")
    p = s.malloc(100)
    struct = s.structure()
    assert struct["nodes"] == [] and struct["root"] is None
    wild = struct["wilderness"]
    assert wild is not None and struct["outside"] == [{"addr": wild, "why": "wilderness"}]
    assert {"name": "wilderness", "addr": wild, "role": "marker"} in struct["pointers"]
    s.free(p)


# ------------------------------------------------------------- the validator on invalid input
#
# One small hand-made structure of each kind that agrees with its heap, then
# one defect at a time: check_against_heap must name it.  The heaps are written
# out by hand (address, size, state), so nothing here comes from a strategy.

from heapscope.allocators.structure import make, outside, pointer  # noqa: E402


def ring_case():
    blocks = [(0x00, 0x20, "free"), (0x20, 0x40, "used"), (0x60, 0x30, "free"), (0x90, 0x10, "free")]
    struct = make("address-ring", {0x00: 0x20, 0x60: 0x30, 0x90: 0x10},
                  pointers=[pointer("rover", 0x60)], free_list=[0x00, 0x60, 0x90], rover=0x60)
    return struct, blocks


def tree_case():
    # keys 16 < 32 < 48; node 0x100 (32) is the root with children 0x000 and
    # 0x200; 0x300 (32) hangs in the size list of 0x100.
    blocks = [(0x000, 16, "free"), (0x100, 32, "free"), (0x200, 48, "free"), (0x300, 32, "free"),
              (0x400, 64, "free")]
    nodes = [{"addr": 0x000, "key": 16, "blocks": [0x000], "left": None, "right": None},
             {"addr": 0x100, "key": 32, "blocks": [0x100, 0x300], "left": 0x000, "right": 0x200},
             {"addr": 0x200, "key": 48, "blocks": [0x200], "left": None, "right": None}]
    struct = make("tree", {0x000: 16, 0x100: 32, 0x200: 48, 0x300: 32, 0x400: 64},
                  pointers=[pointer("wilderness", 0x400, "marker")],
                  outside_blocks=[outside(0x400, "wilderness")], root=0x100, nodes=nodes, wilderness=0x400)
    return struct, blocks


def buddy_case():
    blocks = [(0, 64, "used"), (64, 64, "free"), (128, 128, "free")]
    struct = make("buddy", {64: 64, 128: 128}, avail={6: [64], 7: [128]}, min_order=6, max_order=8,
                  chunks=[{"addr": 0, "order": 8}], blocks=[[0, 6, "used"], [64, 6, "free"], [128, 7, "free"]])
    return struct, blocks


def tlsf_case():
    # two first levels of four second levels: lists (0, 2) and (1, 3) hold a block each
    blocks = [(0x10, 40, "free"), (0x80, 200, "free")]
    struct = make("tlsf", {0x10: 40, 0x80: 200}, fl_bitmap=0b11, sl_bitmap=[0b0100, 0b1000],
                  lists={"0,2": [0x10], "1,3": [0x80]}, fl_count=2, sl_count=4,
                  row_floor=[0, 128], small_block_size=128)
    return struct, blocks


def bins_case():
    # bin floors 16, 32, 48, 64 (then none): bin 1 holds 40 and 32 largest first,
    # bin 3 holds 64; binblocks bit 0 covers bins 0..3; top kept apart
    floors = [16, 32, 48, 64, None]
    blocks = [(0x100, 40, "free"), (0x200, 32, "free"), (0x300, 64, "free"), (0x400, 500, "free")]
    struct = make("bins", {0x100: 40, 0x200: 32, 0x300: 64, 0x400: 500},
                  pointers=[pointer("top", 0x400, "marker")], outside_blocks=[outside(0x400, "top")],
                  bins={1: [0x100, 0x200], 3: [0x300]}, binblocks=0b1, bin_floor=floors,
                  last_remainder=None, top=0x400, mapped=[])
    return struct, blocks


def size_classes_case():
    blocks = [(0x10, 16, "free"), (0x40, 24, "free"), (0x80, 100, "free")]
    struct = make("size-classes", {0x10: 16, 0x40: 24, 0x80: 100}, lists={0: [0x10], 1: [0x40, 0x80]},
                  class_low={0: 16, 1: 17}, class_high={0: 16, 1: None}, order="address")
    return struct, blocks


def arena_ring_case():
    blocks = [(0x0, 0x20, "used"), (0x20, 0x30, "free"), (0x50, 0x8, "used")]
    struct = make("arena-ring", {0x20: 0x30}, pointers=[pointer("allocp", 0x0)],
                  ring=[[0x0, 0x20, "busy"], [0x20, 0x30, "free"], [0x50, 0x8, "top"]], rover=0x0, top=0x50)
    return struct, blocks


def page_directory_case():
    # pages of 0x100 B: a run of 2 free pages at 0x000, a page at 0x300 cut into
    # 16 B chunks of which chunks 1 and 3 are free, a free page at 0x500
    blocks = [(0x000, 0x200, "free"), (0x310, 16, "free"), (0x330, 16, "free"), (0x500, 0x100, "free")]
    struct = make("page-directory", {0x000: 0x200, 0x310: 16, 0x330: 16, 0x500: 0x100}, pagesize=0x100,
                  pages=[], chunk_pages={0x300: {"shift": 4, "size": 16, "total": 16, "free": 2,
                                                 "bitmap": 0b1010, "free_chunks": [0x310, 0x330],
                                                 "info": 0x300, "stolen": 0}},
                  chunk_lists={4: [0x300], 5: []}, free_runs=[0x000, 0x500], lists={})
    return struct, blocks


def block_table_case():
    # blocks of 0x100 B: free clusters at 0x100 and 0x400; block 0x600 holds
    # fragments of 32 B, two of them free (together on _fraghead[5])
    blocks = [(0x100, 0x100, "free"), (0x400, 0x200, "free"), (0x620, 32, "free"), (0x660, 32, "free")]
    struct = make("block-table", {0x100: 0x100, 0x400: 0x200, 0x620: 32, 0x660: 32}, blocksize=0x100,
                  blocks=[], frag_blocks={0x600: {"log": 5, "nfree": 2, "first": 0x620}},
                  free_clusters=[0x100, 0x400], heapindex=0x400, fraglists={4: [], 5: [0x620, 0x660]},
                  lists={})
    return struct, blocks


def lists_case():
    blocks = [(0x10, 16, "free"), (0x40, 24, "free")]
    return make("lists", {0x10: 16, 0x40: 24}, lists={"small": [0x10], "big": [0x40]}), blocks


CASES = {"address-ring": ring_case, "tree": tree_case, "buddy": buddy_case, "tlsf": tlsf_case,
         "bins": bins_case, "size-classes": size_classes_case, "arena-ring": arena_ring_case,
         "page-directory": page_directory_case, "block-table": block_table_case, "lists": lists_case}


@pytest.mark.parametrize("kind", list(CASES))
def test_each_hand_made_structure_agrees_with_its_heap(kind):
    struct, blocks = CASES[kind]()
    check_against_heap(struct, blocks)
    free = sorted(a for a, _, state in blocks if state == "free")
    assert sorted(members(struct)) == free
    assert set(where(struct)) == set(free)


def test_members_keep_the_structures_own_order_and_outside_last():
    assert members(tree_case()[0]) == [0x000, 0x100, 0x300, 0x200, 0x400]
    assert members(bins_case()[0]) == [0x100, 0x200, 0x300, 0x400]
    assert members(page_directory_case()[0]) == [0x310, 0x330, 0x000, 0x500]
    assert members(block_table_case()[0]) == [0x100, 0x400, 0x620, 0x660]
    assert members(arena_ring_case()[0]) == [0x20]
    assert members(lists_case()[0]) == [0x10, 0x40]
    with pytest.raises(ValueError, match="^unknown structure kind 'heap'$"):
        members({"kind": "heap", "outside": []})


def test_where_says_each_place_in_the_policys_words():
    assert where(ring_case()[0]) == {0x00: "the free list", 0x60: "the free list", 0x90: "the free list"}
    assert where(tree_case()[0]) == {0x000: "the tree node of size 16", 0x100: "the tree node of size 32",
                                     0x300: "the tree node of size 32", 0x200: "the tree node of size 48",
                                     0x400: "wilderness"}
    assert where(buddy_case()[0]) == {64: "AVAIL[6]", 128: "AVAIL[7]"}
    assert where(tlsf_case()[0]) == {0x10: "list (0, 2)", 0x80: "list (1, 3)"}
    assert where(bins_case()[0]) == {0x100: "bin 1", 0x200: "bin 1", 0x300: "bin 3", 0x400: "top"}
    assert where(size_classes_case()[0]) == {0x10: "the list of class 0", 0x40: "the list of class 1",
                                             0x80: "the list of class 1"}
    assert where(arena_ring_case()[0]) == {0x20: "the arena (idle)"}
    assert where(page_directory_case()[0]) == {0x310: "page_dir[4], page 0x300", 0x330: "page_dir[4], page 0x300",
                                               0x000: "the free-page list", 0x500: "the free-page list"}
    assert where(block_table_case()[0]) == {0x100: "the free cluster list", 0x400: "the free cluster list",
                                            0x620: "_fraghead[5]", 0x660: "_fraghead[5]"}
    assert where(lists_case()[0]) == {0x10: "small", 0x40: "big"}
    ring = make("ring", {0x8: 8}, free_list=[0x8], head=0x8)
    assert members(ring) == [0x8] and where(ring) == {0x8: "the free list"}


def test_make_refuses_an_unknown_kind_and_fills_the_common_keys():
    # the registered kinds, in alphabetical order (allocators/structure_kinds/)
    with pytest.raises(ValueError, match="^unknown structure kind 'heap'; known: address-ring, "
                       "arena-ring, bins, block-table, buckets, buddy, lists, page-directory, ring, "
                       "size-classes, tlsf, tree$"):
        make("heap", {})
    assert make("lists", {1: 2}, lists={}) == {"kind": "lists", "sizes": {1: 2}, "pointers": [],
                                                "outside": [], "lists": {}}


def _set(path, value):
    """A defect: the structure with the key at ``path`` set to ``value``."""
    def change(struct, blocks):
        node = struct
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value
        return struct, blocks
    return change


def _with_full_page(struct, blocks, listed):
    """The page-directory case with a second page of 16 B chunks, 0x400, none
    of them free, and ``listed`` as page_dir[4]."""
    struct["chunk_pages"][0x400] = {"shift": 4, "size": 16, "total": 16, "free": 0, "bitmap": 0,
                                    "free_chunks": [], "info": 0x400, "stolen": 0}
    struct["chunk_lists"][4] = listed
    return struct, blocks


def _heap(new_blocks):
    return lambda struct, blocks: (struct, new_blocks)


DEFECTS = [
    # the common rules, on the ring
    ("address-ring", _set(("free_list",), [0x00, 0x60, 0x90, 0x60]),
     "free block 0x60 is named twice by the address-ring structure"),
    ("address-ring", _set(("free_list",), [0x00, 0x90]),
     r"free blocks \['0x60'\] are in the heap but not in the address-ring structure"),
    ("address-ring", _heap([(0x00, 0x20, "free"), (0x20, 0x40, "used"), (0x60, 0x30, "used"), (0x90, 0x10, "free")]),
     r"the address-ring structure names \['0x60'\], which are not free blocks of the heap"),
    ("address-ring", _set(("sizes", 0x90), 0x11), "free block 0x90 has 16 bytes but the structure says 17"),
    ("address-ring", _set(("sizes", 0x20), 0x40), "'sizes' names other blocks than the structure holds"),
    ("address-ring", _set(("pointers",), [pointer("rover", 0x20)]),
     "pointer rover points at 0x20, which is not a free block"),
    ("address-ring", _set(("free_list",), [0x00, 0x90, 0x60]), r"the address-ordered ring is out of order: \[0, 144, 96\]"),
    ("address-ring", _set(("free_list",), [0x00, 0x60, 0x60]), "free block 0x60 is named twice by the address-ring structure"),
    ("address-ring", lambda s, b: (dict(s, rover=0x40, pointers=[]), b), "the rover 0x40 is not on the ring"),
    # the tree
    ("tree", _set(("nodes", 2, "key"), 32), r"in-order keys are not strictly increasing: \[16, 32, 32\]"),
    ("tree", _set(("nodes", 1, "blocks"), [0x300, 0x100]), "node 0x100 does not head its own block list"),
    ("tree", _set(("sizes", 0x300), 33), "free block 0x300 has 32 bytes but the structure says 33"),
    ("tree", _set(("nodes", 0, "left"), 0x100), "the tree has a cycle"),
    ("tree", _set(("root",), 0x200), "the nodes list is not the in-order walk from the root"),
    ("tree", _set(("nodes", 1, "right"), None), "the nodes list is not the in-order walk from the root"),
    # the buddy system
    ("buddy", _set(("avail",), {6: [128], 7: [64]}), "AVAIL\\[6\\] holds 0x80 of 128 bytes, not 64"),
    # TLSF
    ("tlsf", _set(("fl_bitmap",), 0b01), r"fl_bitmap bit 1 disagrees with sl_bitmap\[1\] = 0x8"),
    ("tlsf", _set(("sl_bitmap",), [0b0110, 0b1000]), r"sl_bitmap\[0\] bit 1 disagrees with list \(0, 1\)"),
    ("tlsf", _set(("sl_bitmap",), [0b0100, 0b0000]), r"fl_bitmap bit 1 disagrees with sl_bitmap\[1\] = 0x0"),
    # dlmalloc's bins
    ("bins", _set(("bins", 2), []), "bin 2 is listed but empty"),
    ("bins", _set(("binblocks",), 0b10), "bin 1 holds chunks but binblocks bit 0 is clear"),
    ("bins", _set(("bins", 1), [0x200, 0x100]), r"bin 1 is not largest first: \[32, 40\]"),
    ("bins", lambda s, b: (dict(s, bins={0: [0x100, 0x200], 3: [0x300]}), b),
     "bin 0 holds 0x100 of 40 bytes, outside its sizes"),
    ("bins", lambda s, b: (dict(s, bins={1: [0x100], 2: [0x200], 3: [0x300]}), b),
     "bin 2 holds 0x200 of 32 bytes, outside its sizes"),
    ("bins", lambda s, b: (dict(s, bins={1: [0x100, 0x200], 4: [0x300]}, binblocks=0b11), b),
     "bin 4 holds 0x300 of 64 bytes, outside its sizes"),
    ("bins", lambda s, b: (dict(s, bins={1: [0x100, 0x200], 2: [0x300]}), b),
     "bin 2 holds 0x300 of 64 bytes, outside its sizes"),
    ("bins", lambda s, b: (dict(s, last_remainder=0x300), b), "last_remainder 0x300 is not kept apart in 'outside'"),
    # segregated lists
    ("size-classes", _set(("lists",), {0: [0x10, 0x40], 1: [0x80]}),
     r"the list of class 0 holds 0x40 of 24 bytes, outside 16..16"),
    ("size-classes", _set(("lists",), {0: [], 1: [0x10, 0x40, 0x80]}), r"the list of class 1 holds 0x10 of 16 bytes, outside 17\.\.None"),
    ("size-classes", _set(("lists",), {0: [0x10], 1: [0x80, 0x40]}), r"the list of class 1 is not in address order: \[128, 64\]"),
    # V7's arena ring
    ("arena-ring", _set(("ring", 0, 1), 0x18), r"the arena ring is not contiguous: 0x0\+24 is followed by 0x20"),
    ("arena-ring", _set(("top",), 0x20), "the arena ring does not end with its top word"),
    ("arena-ring", _set(("ring", 2, 2), "busy"), "the arena ring does not end with its top word"),
    ("arena-ring", _set(("ring", 0, 2), "top"), "an arena block has an unknown state, or there are two tops"),
    ("arena-ring", _set(("ring", 0, 2), "lent"), "an arena block has an unknown state, or there are two tops"),
    ("arena-ring", _set(("rover",), 0x30), "allocp 0x30 is not a block of the arena"),
    # phkmalloc's page directory
    ("page-directory", _set(("free_runs",), [0x500, 0x000]), "free page runs 0x500 and 0x0 are out of order or touch"),
    ("page-directory", _set(("chunk_lists",), {4: [], 5: [0x300]}),
     r"page_dir\[5\] holds 0x300, not a page of 32 B chunks, or holds it twice"),
    ("page-directory", lambda s, b: _with_full_page(s, b, [0x300, 0x400, 0x400]),
     r"page_dir\[4\] holds 0x400, not a page of 16 B chunks, or holds it twice"),
    ("page-directory", _set(("chunk_lists", 4), [0x300, 0x900]), r"page_dir\[4\] holds 0x900, not a page of 16 B chunks, or holds it twice"),
    ("page-directory", lambda s, b: _with_full_page(s, b, [0x300, 0x400]),
     "page 0x400 has 0 free chunks and is on its list"),
    ("page-directory", _set(("chunk_pages", 0x300, "bitmap"), 0b1110),
     "page 0x300: bitmap, free count and free chunks disagree"),
    ("page-directory", _set(("chunk_pages", 0x300, "free"), 3), "page 0x300: bitmap, free count and free chunks disagree"),
    ("page-directory", _set(("chunk_pages", 0x300, "size"), 32), "chunk 0x310 is not a 32 B chunk of page 0x300"),
    # GNU malloc's block table
    ("block-table", _set(("free_clusters",), [0x400, 0x100]), "free clusters 0x400 and 0x100 are out of order or touch"),
    ("block-table", _set(("heapindex",), 0x300), "_heapindex 0x300 is not a free cluster"),
    ("block-table", lambda s, b: (dict(s, sizes={**s["sizes"], 0x620: 16}),
                                  [(a, 16 if a == 0x620 else n, st_) for a, n, st_ in b]),
     r"_fraghead\[5\] holds 0x620, not a fragment of 32 B"),
    ("block-table", lambda s, b: (dict(s, frag_blocks={}), b), r"_fraghead\[5\] holds 0x620, not a fragment of 32 B"),
    ("block-table", _set(("frag_blocks", 0x600, "nfree"), 3),
     r"block 0x600 says 3 free fragments, _fraghead\[5\] has 2"),
]


@pytest.mark.parametrize("kind, defect, message", DEFECTS, ids=[f"{k}-{i}" for i, (k, _, _) in enumerate(DEFECTS)])
def test_check_against_heap_names_each_kind_of_mismatch(kind, defect, message):
    struct, blocks = defect(*CASES[kind]())
    with pytest.raises(StructureMismatch) as info:
        check_against_heap(struct, blocks)
    assert re.fullmatch(message, str(info.value)), str(info.value)   # the whole message, word for word


def test_pointers_that_may_rest_elsewhere_are_accepted():
    struct, blocks = ring_case()
    struct["pointers"] = [pointer("rover", None), pointer("mark", 0x20, "marker")]
    check_against_heap(struct, blocks)             # None (at base) and a marker on a used block are fine
    struct, blocks = arena_ring_case()
    check_against_heap(struct, blocks)             # V7's allocp rests on a busy block


def test_a_run_that_touches_the_next_is_caught():
    struct, blocks = page_directory_case()
    struct["sizes"][0x000] = 0x500                  # 0x000 + 0x500 touches the free page at 0x500
    blocks[0] = (0x000, 0x500, "free")
    with pytest.raises(StructureMismatch, match="^free page runs 0x0 and 0x500 are out of order or touch$"):
        check_against_heap(struct, blocks)
    struct, blocks = page_directory_case()
    struct["sizes"][0x000] = 0x180
    blocks[0] = (0x000, 0x180, "free")
    with pytest.raises(StructureMismatch, match="^free run 0x0 of 384 B is not whole pages$"):
        check_against_heap(struct, blocks)


def test_a_block_tables_fragments_apart_on_their_list_are_caught():
    struct, blocks = block_table_case()
    # a second fragment block at 0x700 whose fragment sits between the two of 0x600
    struct["frag_blocks"][0x700] = {"log": 5, "nfree": 1, "first": 0x700}
    struct["fraglists"][5] = [0x620, 0x700, 0x660]
    struct["sizes"][0x700] = 32
    blocks.append((0x700, 32, "free"))
    with pytest.raises(StructureMismatch, match="^the free fragments of block 0x600 are not together$"):
        check_against_heap(struct, blocks)


def test_tlsf_keys_round_trip():
    from heapscope.allocators.structure import tlsf_key
    assert tlsf_key(3, 17) == "3,17" and parse_tlsf_key("3,17") == (3, 17)
