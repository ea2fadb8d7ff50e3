"""The explain panel's words (allocators/explain.py and each strategy's
explain_event / explain_events) and the one-line step description
(Timeline.describe): in order, one line per event, in each original's terms,
worked by hand on small heaps; and on random programs for every strategy."""

import pytest
from hypothesis import HealthCheck, given, settings

from heapscope.allocators import events as ev
from heapscope.allocators import make_strategy, strategy_names
from heapscope.allocators.explain import at, count, describe_event, event_addresses, explain_step, nbytes, times
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


# ------------------------------------------------------------- generic words, one by one
#
# Each event type with distinct, small values, and the line and addresses a
# reader should see, written out by hand from the event's documented meaning
# (allocators/events.py), not from describe_event.

HAND_WORDED = [
    (ev.Visit(0x40, 48, fits=False, busy=True), "passed busy block 0x40 (48 B)", (0x40,)),
    (ev.Visit(0x40, 48, fits=True, place=True),
     "walked past free block 0x40 (48 B) to the freed block's place: the block goes here", (0x40,)),
    (ev.Visit(0x40, 48, fits=False, place=True),
     "walked past free block 0x40 (48 B) to the freed block's place", (0x40,)),
    (ev.Visit(0x40, 48, fits=True), "examined free block 0x40 (48 B): big enough", (0x40,)),
    (ev.Visit(0x40, 48, fits=False), "examined free block 0x40 (48 B): too small", (0x40,)),
    (ev.WalkStep(0x80, 16, stop=True),
     "walked past free block 0x80 (16 B) to file the new memory: the new memory goes after it", (0x80,)),
    (ev.WalkStep(0x80, 16, stop=False), "walked past free block 0x80 (16 B) to file the new memory", (0x80,)),
    (ev.InsertionPoint(0x200, 32, prev=0x100, next=0x300),
     "block 0x200 (32 B) belongs between 0x100 and 0x300 in address order", (0x200, 0x100, 0x300)),
    (ev.InsertionPoint(0x200, 32, prev=None, next=None),
     "block 0x200 (32 B) belongs between the start and the end in address order", (0x200,)),
    (ev.TreeJoin(left=0x10, right=0x30, root=0x20),
     "joined the subtrees: 0x20, the least node of the right subtree, took the left subtree 0x10 "
     "as its left child and is the root", (0x20, 0x10, 0x30)),
    (ev.TreeJoin(left=None, right=None, root=None), "the tree is empty", ()),
    (ev.TreeJoin(left=None, right=0x30, root=0x30), "its only subtree, rooted at 0x30, is the tree now", (0x30,)),
    (ev.TreeJoin(left=0x10, right=None, root=0x10), "its only subtree, rooted at 0x10, is the tree now", (0x10,)),
    (ev.Split(0x100, 96, 0x100, 32, 0x120, 64),
     "split 0x100 (96 B): 32 B at 0x100 for the request, 64 B at 0x120 stays free", (0x100, 0x120)),
    (ev.Coalesce(0x100, 32, 0x120, 64),
     "joined free neighbours 0x100 (32 B) and 0x120 (64 B) into 96 B at 0x100", (0x100, 0x120)),
    (ev.Grow(0x1000, 4096), "grew the heap: sbrk(4096) returned 0x1000", (0x1000,)),
    (ev.GrowFailed(4096), "could not grow the heap by 4096 B (out of memory)", ()),
    (ev.PointerMove("rover", None, 0x40), "rover moved from the start to 0x40", (0x40,)),
    (ev.PointerMove("rover", 0x40, None), "rover moved from 0x40 to the start", (0x40,)),
    (ev.PointerMove("rover", 0x40, 0x80), "rover moved from 0x40 to 0x80", (0x80, 0x40)),
    (ev.Placed(0x100, 48, 0x108, 40), "placed the request (40 B) in block 0x100 of 48 B; payload at 0x108",
     (0x100,)),
    (ev.Released(0x100, 48), "released block 0x100 (48 B)", (0x100,)),
    (ev.Rotation("zig-zag", 64, 0x50, parent=0x60, grandparent=0x70, side="left"),
     "splay step zig-zag on the node of size 64 at 0x50", (0x50, 0x60, 0x70)),
    (ev.Rotation("zig", 64, 0x50, parent=0x60), "splay step zig on the node of size 64 at 0x50", (0x50, 0x60)),
    (ev.MappingSearch(240, 256, 1, 2, request=239),
     "mapping_search(239): rounded to 256, class (1, 2)", ()),
    (ev.MappingSearch(240, 256, 1, 2, request=256),
     "mapping_search(240): rounded to 256, class (1, 2)", ()),
    (ev.MappingSearch(240, 256, 1, 2), "mapping_search(240): rounded to 256, class (1, 2)", ()),
    (ev.BuddySplit(0x400, 10, 0x600),
     "split the block of order 10 at 0x400; its upper half 0x600 goes on AVAIL[9]", (0x400, 0x600)),
    (ev.BuddyMerge(0x400, 0x600, 9), "merged 0x400 with its buddy 0x600 into a block of order 10",
     (0x400, 0x600)),
    (ev.AvailProbe(7, None), "AVAIL[7] is empty", ()),
    (ev.AvailProbe(7, 0x80), "AVAIL[7] holds 0x80 at its front", (0x80,)),
    (ev.BitmapProbe("second-level", 1, 2, None),
     "looked at the second-level bitmap from (1, 2): found nothing", ()),
    (ev.BitmapProbe("first-level", 1, 2, (3, 4)),
     "looked at the first-level bitmap from (1, 2): found list (3, 4)", ()),
    (ev.ListInsert(0x40, 16, (5,)), "pushed 0x40 (16 B) on list 5", (0x40,)),
    (ev.ListInsert(0x40, 16, (1, 30)), "pushed 0x40 (16 B) on list (1, 30)", (0x40,)),
    (ev.ListRemove(0x40, 16, (1, 30)), "took 0x40 (16 B) off list (1, 30)", (0x40,)),
    (ev.ListRemove(0x40, 16, ()), "took 0x40 (16 B) off list ()", (0x40,)),
    (ev.TreeInsert(0x40, 16, None, "root"), "put 0x40 (16 B) in the empty tree as its root", (0x40,)),
    (ev.TreeInsert(0x40, 16, 0x90, "list"), "hung 0x40 (16 B) in the size list of node 0x90", (0x40, 0x90)),
    (ev.TreeInsert(0x40, 16, 0x90, "left"), "put 0x40 (16 B) in the tree as the left child of 0x90",
     (0x40, 0x90)),
    (ev.TreeRemove(0x40, 16, None), "took 0x40 (16 B) out of the tree", (0x40,)),
    (ev.TreeRemove(0x40, 16, 0x90), "took 0x40 (16 B) out of the tree; 0x90 of its list takes its place",
     (0x40, 0x90)),
    (ev.BucketRefill(3, 0x800, 64, 16), "bucket 3 was empty: carved 16 blocks of 64 B from 0x800", (0x800,)),
    (ev.Shrink(0x3000, 0x1000),
     "gave 4096 B back to the system: the break went down from 0x3000 to 0x2000", ()),
    (ev.TopExtended(0x700, 100, 28),
     "the last free block 0x700 (100 B) ends at the break: it grew by 28 B of new memory to 128 B", (0x700,)),
    (ev.ArenaExtended(None, 0x10, 64, 0x50, 8),
     "the static top now leads into the new memory: a free block of 64 B at 0x10, the new top word at 0x50",
     (0x10, 0x50)),
    (ev.ArenaExtended(0x8, 0x10, 64, 0x50, 8),
     "the old top word 0x8 now leads into the new memory: a free block of 64 B at 0x10, "
     "the new top word at 0x50", (0x10, 0x50, 0x8)),
    (ev.BlockFragmented(0x1000, 5, 128),
     "cut block 0x1000 into 128 fragments of 32 B; all but the first went on the fragment list of 32 B",
     (0x1000,)),
    (ev.FragLinked(0x1040, 32, 5, 0x1020),
     "linked fragment 0x1040 (32 B) after 0x1020, a free fragment of the same block", (0x1040, 0x1020)),
    (ev.FragBlockEmptied(0x1000, 5, 128),
     "every fragment of block 0x1000 is free: its 127 other fragments left the fragment list of 32 B "
     "and the block is freed whole", (0x1000,)),
    (ev.TableMoved(0x1000, 4096, 0x8000, 8192),
     "the block table moved from 0x1000 (4096 B) to 0x8000 (8192 B)", (0x8000, 0x1000)),
    (ev.ChunkPageMade(0x2000, 4, 16, 254, 0x2000, 2),
     "cut page 0x2000 into 254 free chunks of 16 B (its bookkeeping took 2 more)", (0x2000,)),
    (ev.ChunkPageMade(0x2000, 4, 16, 256, 0x5000, 0),
     "cut page 0x2000 into 256 free chunks of 16 B", (0x2000, 0x5000)),
    (ev.ChunkTaken(0x2000, 4, 3, 0x2030, 16, 0), "took chunk 3 at 0x2030 (16 B) of page 0x2000", (0x2030, 0x2000)),
    (ev.ChunkFreed(0x2000, 4, 3, 0x2030, 16), "chunk 3 at 0x2030 (16 B) of page 0x2000 is free", (0x2030, 0x2000)),
    (ev.ChunkPageLinked(0x2000, 4, None),
     "page 0x2000 has a free chunk again: back on its list of 16 B chunks, at the head", (0x2000,)),
    (ev.ChunkPageLinked(0x2000, 4, 0x1000),
     "page 0x2000 has a free chunk again: back on its list of 16 B chunks, after 0x1000", (0x2000, 0x1000)),
    (ev.ChunkPageUnlinked(0x2000, 5), "page 0x2000 left the list of pages of 32 B chunks", (0x2000,)),
    (ev.ChunkPageDissolved(0x2000, 5, 4096), "every chunk of page 0x2000 is free: it is a plain page again",
     (0x2000,)),
    (ev.Note("anything at all"), "anything at all", ()),
]


@pytest.mark.parametrize("event, words, addrs", HAND_WORDED, ids=lambda x: type(x).__name__)
def test_generic_words_and_addresses_of_each_event(event, words, addrs):
    assert describe_event(event) == words
    assert event_addresses(event) == addrs


def test_explain_step_without_a_strategy_uses_the_generic_words():
    rec = ev.OpRecord("malloc", 40, [ev.Grow(0x1000, 4096), ev.Released(0x100, 48)])
    lines = explain_step(None, rec)
    assert [(x.index, x.text, x.addrs, x.type) for x in lines] == [
        (0, "grew the heap: sbrk(4096) returned 0x1000", (0x1000,), "Grow"),
        (1, "released block 0x100 (48 B)", (0x100,), "Released")]
    assert explain_step(None, None) == [] and explain_step(None, ev.OpRecord("free", 0, None)) == []


def test_explain_step_prefers_the_strategys_words_and_falls_back_per_event():
    class Half:
        def explain_events(self, events):
            return ["mine" if i == 0 else None for i in range(len(events))]
    rec = ev.OpRecord("malloc", 40, [ev.GrowFailed(8), ev.GrowFailed(16)])
    assert [x.text for x in explain_step(Half(), rec)] == [
        "mine", "could not grow the heap by 16 B (out of memory)"]


def test_the_small_wording_helpers():
    assert nbytes(512) == "512 B"
    assert at(None) == "NULL" and at(None, "the start") == "the start" and at(0x1a40) == "0x1a40"
    assert count(1, "free block") == "1 free block" and count(3, "free block") == "3 free blocks"
    assert count(0, "free block") == "0 free blocks"
    assert count(1, ("child", "children")) == "1 child" and count(2, ("child", "children")) == "2 children"
    assert times(1) == "once" and times(2) == "twice" and times(3) == "3 times" and times(0) == "0 times"


def test_an_unknown_event_names_its_address_fields():
    from dataclasses import dataclass

    @dataclass(frozen=True)
    class Odd:
        addr: int
        parent: int
        replaced_by: object
        low_addr: int
        size: int
        name: str

    odd = Odd(1, 2, None, 4, 5, "x")
    assert event_addresses(odd) == (1, 2, 4)        # addr, parent, *_addr; never None, never size
    assert describe_event(odd) == repr(odd)


def test_an_explained_line_cannot_be_changed_once_made():
    import dataclasses
    line = explain_step(None, ev.OpRecord("free", 0, [ev.Released(0x100, 48)]))[0]
    with pytest.raises(dataclasses.FrozenInstanceError):
        line.text = "something else"           # the panel and the structure view share the line
