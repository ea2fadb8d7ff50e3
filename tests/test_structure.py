"""The structure protocol (allocators/structure.py): every strategy's
``structure()`` agrees with its heap walk after every operation, on random
traces and on hand-made ones, and a broken answer is caught."""

import copy
import json
import pickle

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
