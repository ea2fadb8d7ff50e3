"""The explain panel's words (allocators/explain.py and each strategy's
explain_event / explain_events) and the one-line step description
(Timeline.describe): in order, one line per event, in each original's terms,
worked by hand on small heaps; and on random programs for every strategy."""

import pytest
from hypothesis import HealthCheck, given, settings

from heapscope.allocators import events as ev
from heapscope.allocators import make_strategy, strategy_names
from heapscope.allocators.explain import describe_event, explain_step
from heapscope.allocators.replay import Timeline
from heapscope.traces import Trace, make_workload

from .heap_harness import apply_program, op_sequences
from .test_splay_best_fit import build_tree

ALL = strategy_names()


def texts(s):
    return [x.text for x in explain_step(s, s.rec)]


@pytest.mark.parametrize("name", ALL)
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=op_sequences(max_ops=60, max_size=3000))
def test_every_event_gets_one_line_in_order(name, ops):
    s = make_strategy(name, heap_limit=30000)

    def after(step, where, asked):
        lines = explain_step(s, s.rec)
        assert [x.event for x in lines] == s.rec.events
        assert [x.index for x in lines] == list(range(len(s.rec.events)))
        own = s.explain_events(s.rec.events)
        assert len(own) == len(s.rec.events)
        for x, words in zip(lines, own):
            # words, never the fallback repr of an event nobody words
            assert x.text and not x.text.startswith(type(x.event).__name__ + "(")
            assert all(isinstance(a, int) for a in x.addrs)
            # the policy's words win wherever it has words for the event
            if s.explain_event(x.event) is not None:
                assert words is not None and x.text == words

    apply_program(s, ops, after)


def test_kr_free_walk_and_joins_in_kr_words():
    s = make_strategy("next-fit")
    a, b, c = s.malloc(100), s.malloc(20), s.malloc(300)
    s.free(b)                      # block 0x3f50, above block 0 (the rest of the arena)
    assert texts(s) == [
        "free: bp = 0x3f50, a block of 3 units (48 B)",
        "free walk: p = 0x0 (15888 B): bp goes right after it",
        "free walk: bp = 0x3f50 > 0x0, the highest free block: insert at the end",
        "p->s.ptr = bp: 0x3f50 (48 B) linked after 0x0",
        "freep = p = 0x0",
    ]
    d = s.malloc(40)               # next fit from after the rover: 0x3f50 too small, then 0x0
    assert texts(s)[:2] == ["p = 0x3f50: 3 units (48 B): too small",
                            "p = 0x0: 993 units (15888 B): p->s.size >= nunits: it fits"]
    assert "freep = prevp = &base" in texts(s)
    s.free(c)                      # block 0x3e10: its upper neighbour 0x3f50 is free
    assert texts(s)[2:6] == [
        "free walk: 0x0 < bp = 0x3e10 < 0x3f50: insert here",
        "the upper nbr 0x3f50 (48 B) is free: it leaves the list",
        "join to upper nbr: bp = 0x3e10 absorbs 0x3f50: 368 B",
        "p->s.ptr = bp: 0x3e10 (368 B) linked after 0x0",
    ]
    s.free(d)                      # block 0x3dd0, between block 0 and 0x3e10: both joins
    assert texts(s)[2:] == [
        "the upper nbr 0x3e10 (368 B) is free: it leaves the list",
        "join to upper nbr: bp = 0x3dd0 absorbs 0x3e10: 432 B",
        "join to lower nbr: p = 0x0 absorbs bp: 16256 B at 0x0; bp is not linked",
        # the rover stays on block 0: no move, no line
    ]
    s.malloc(16240)                # 1016 units: an exact fit of block 0, all that is free
    assert "exact fit: p = 0x0 (16256 B) unlinked: prevp->s.ptr = p->s.ptr" in texts(s)
    del a


def test_buddy_in_knuths_steps():
    s = make_strategy("buddy")
    p = s.malloc(40)               # order 6 from a new 4 KiB chunk: six splits
    lines = texts(s)
    assert lines[:7] == [f"R1: AVAIL[{k}] empty" for k in range(6, 13)]
    assert lines[7:11] == [
        "R1 found no AVAIL list with a block big enough: a new chunk, sbrk(4096) at 0x0 (order 12)",
        "the new chunk 0x0 goes on AVAIL[12]",
        "R1: AVAIL[12] holds 0x0: j = 12",
        "R2: take 0x0 off the front of AVAIL[12]",
    ]
    assert lines[11:13] == ["R3: split order 12 at 0x0; the buddy 0x800 goes on AVAIL[11]",
                            "R4: the upper half 0x800 becomes the only block of AVAIL[11]"]
    s.free(p)
    lines = texts(s)
    assert lines[1:3] == ["S1: buddy 0x40 = 0x0 XOR 2^6 is free and of order 6: merge",
                          "S2: unlink the buddy 0x40 from AVAIL[6]; k = 7"]
    assert lines[-1] == "S3: 0x0 (4096 B) goes on the front of AVAIL[12]"


def test_buddy_xor_is_said_relative_to_a_chunk_that_is_not_aligned_to_its_order():
    # A 16 KiB request gets a chunk of order 15 after the first 4 KiB chunk,
    # at 0x1000: its halves' buddies are not 'addr XOR 2^k' in absolute terms.
    s = make_strategy("buddy")
    s.malloc(10)
    big = s.malloc(8000)           # order 13 chunk at 0x1000
    s.free(big)
    assert texts(s)[-1] == "S3: 0x1000 (8192 B) goes on the front of AVAIL[13]"
    q = s.malloc(3000)             # order 12 from 0x1000: buddy 0x2000
    r = s.malloc(3000)
    s.free(q)
    s.free(r)
    assert "S1: buddy 0x1000 = chunk 0x1000 + (0x1000 XOR 2^12) is free and of order 12: merge" in texts(s)


def test_splay_rotations_and_join_in_sleator_tarjans_words():
    s = build_tree()
    s.malloc(336)
    lines = texts(s)
    assert lines[6:9] == [
        "zig-zag at node 0x6f0 (size 352): it is the right child of 0x598, itself the left child of "
        "0x3d8: rotate 0x6f0 above 0x598, then above 0x3d8",
        "zig-zig at node 0x6f0 (size 352): it and its parent 0x2b8 are both right children: rotate "
        "0x2b8 above 0x210, then 0x6f0 above 0x2b8",
        "zig at node 0x6f0 (size 352): its parent 0x0 is the top: rotate 0x6f0 above it",
    ]
    assert lines[9] == ("node 0x6f0 (size 352) leaves the tree; 0x880, the next in its size list, "
                        "takes its place")
    s.malloc(232)
    assert texts(s)[3:6] == [
        "node 0x2b8 (size 240) leaves the root; no size list: its two subtrees must be joined",
        "zig at node 0x598 (size 296): its parent 0x880 is the top: rotate 0x598 above it",
        "join: the least node 0x598 of the right subtree rose to its top; the left subtree 0x210 "
        "hangs under it; 0x598 is the root",
    ]


def test_splay_says_when_it_turns_to_the_wilderness():
    s = build_tree()
    s.malloc(592)                  # nothing in the tree is 600 bytes
    lines = texts(s)
    i = lines.index("no block in the tree fits: the wilderness is tried")
    assert lines[i + 1] == "wilderness 0xce0 (800 B): big enough: cut from its front"


def test_rotating_list_head_moves_in_kruses_words():
    s = make_strategy("rotating-list")
    ps = [s.malloc(n) for n in (100, 20, 300, 40)]
    s.free(ps[1])
    assert texts(s)[-1] == "head = 0xf60, the block just pushed"
    s.free(ps[0])                  # joins 0xf60, the head: the head steps on first
    assert texts(s)[1] == "the head 0xf60 is being joined: it steps to its successor 0x0"
    s.malloc(40)
    assert "rotate: head = 0x0, the successor of the block used" in texts(s)


def test_bsd_refill_in_4_3bsd_words():
    s = make_strategy("bsd-buckets")
    s.malloc(945)                  # bucket 7: 1024-byte blocks, carved from a fresh page
    lines = texts(s)
    assert "nextf[7] empty: morecore carved 4 blocks of 1024 B at 0xff8" in lines
    assert "the head of nextf[7] is 0xff8 (1024 B): take it" in lines


def test_generic_words_name_every_event_type():
    for cls in [c for c in vars(ev).values() if isinstance(c, type) and c.__module__ == ev.__name__
                and hasattr(c, "__dataclass_fields__")]:
        fields = {f: 0 for f in cls.__dataclass_fields__}
        for f in ("kind", "name", "level", "side", "text"):
            if f in fields:
                fields[f] = "zig" if f == "kind" else "x"
        if "where" in fields:
            fields["where"] = (3,)
        event = cls(**fields)
        assert not describe_event(event).startswith(cls.__name__ + "("), cls


# ------------------------------------------------------------- step lines

TRACE = Trace.from_ops([("a", 0, 239), ("a", 1, 40), ("a", 2, 600), ("f", 1), ("r", 0, 200),
                        ("r", 2, 5000), ("f", 0), ("a", 3, 945)])


@pytest.mark.parametrize("name", ALL)
def test_a_realloc_step_is_described_as_a_realloc(name):
    tl = Timeline(TRACE, name).build()
    tl.seek(5)                     # realloc of id 0 to 200: the block holds it, or a move
    line = tl.describe()
    old = tl.program.live[0][0] if "(in place)" in line else None
    assert line.startswith("step 5: realloc(0x") and ", 200) for id 0 -> 0x" in line
    assert "malloc(" not in line
    if old is not None:
        assert f"realloc({old:#x}, 200) for id 0 -> {old:#x} (in place)" in line
    tl.seek(6)
    assert tl.describe().startswith("step 6: realloc(0x") and ", 5000) for id 2" in tl.describe()


def test_step_lines_count_in_each_policys_unit():
    trace = make_workload("vo1989", steps=400, seed=3)
    words = {"tlsf": "bitmap probe", "buddy": "AVAIL list", "next-fit": "free block",
             "splay-best-fit": "free block", "rotating-list": "free block"}
    for name, unit in words.items():
        tl = Timeline(trace, name).build()
        lines = []
        for t in range(1, 200):
            tl.seek(t)
            lines.append(tl.describe())
        mallocs = [x for x in lines if "malloc(" in x]
        assert all(unit in x for x in mallocs), (name, [x for x in mallocs if unit not in x][:2])
        if name != "next-fit" and name != "splay-best-fit" and name != "rotating-list":
            assert not any("free block" in x for x in lines), name
    tl = Timeline(trace, "tlsf").build()
    tl.seek(1)
    assert tl.describe() == (f"step 1: malloc({trace.op(0)[2]}) for id 0 -> 0x8 after "
                             f"{tl.last_record.probes} bitmap probes; split once; grew the heap once")
    tl = Timeline(trace, "buddy").build()
    tl.seek(1)
    assert "split" in tl.describe() and "(R3-R4)" in tl.describe()


def test_bsd_step_lines_name_the_bucket_and_its_refill():
    tl = Timeline(TRACE, "bsd-buckets").build()
    tl.seek(3)                     # malloc(600): bucket 7 (1024-byte blocks), empty until now
    assert tl.describe() == ("step 3: malloc(600) for id 2 -> 0x3000 from nextf[7]; nextf[7] empty: "
                             "morecore carved 4 blocks of 1024 B at 0x2ff8")
    tl.seek(4)                     # free of id 1 (40 B, bucket 3)
    assert tl.describe() == "step 4: free(0x2000) for id 1: back on the front of nextf[3]"
    tl.seek(8)                     # malloc(945): the 1024-byte block the realloc of id 2 gave back
    assert tl.describe() == "step 8: malloc(945) for id 3 -> 0x3000 from nextf[7]"
    tl.seek(1)
    assert "the first call padded the break to a page boundary" in tl.describe()
    assert "grew the heap" not in tl.describe()


def test_step_line_separators():
    tl = Timeline(TRACE, "tlsf").build()
    tl.seek(5)                     # realloc in place that gives its tail back
    assert tl.describe() == "step 5: realloc(0x8, 200) for id 0 -> 0x8 (in place); split once; coalesced once"
    tl.seek(7)
    assert tl.describe() == "step 7: free(0x8) for id 0: coalesced once"
    tl = Timeline(TRACE, "next-fit").build()
    tl.seek(4)
    assert tl.describe() == "step 4: free(0x3ed0) for id 1: walked 1 free block"
