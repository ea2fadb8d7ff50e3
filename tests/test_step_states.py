"""The whole structure after each event of a step (allocators/step_states.py):
after the last event it is ``structure()`` after the step, key for key; before
the first, the structure before; in between, every state names each block it
holds once, with a size, and the buddy's blocks agree with its AVAIL lists."""

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from heapscope.allocators import events as ev
from heapscope.allocators import make_strategy, strategy_names
from heapscope.allocators import structure as sp
from heapscope.allocators.step_states import StepStates

from .heap_harness import apply_program, op_sequences

ALL = strategy_names()

params_strategy = st.one_of(
    st.fixed_dictionaries({"word": st.sampled_from([4, 8])}),
    st.fixed_dictionaries({"pool_size": st.integers(1000, 60000)}),
    st.fixed_dictionaries({"heap_limit": st.integers(2000, 40000)}),
)


def check_states(s, ops):
    state = {"before": s.structure(), "mid": 0}

    def after(step, where, asked):
        real = s.structure()
        events = list(s.rec.events)
        states = StepStates(state["before"], real, events)
        if real["kind"] == "lists":
            assert not states.available and states.at(0 if events else None) is real
        else:
            assert states.available
            assert states.at(-1) == state["before"]
            for i in range(len(events)):
                mid = states.at(i)
                named = sp.members(mid)
                assert len(named) == len(set(named)), f"step {step} event {i}: a block named twice"
                assert set(mid["sizes"]) == set(named), f"step {step} event {i}: {events[i]}"
                assert all(isinstance(n, int) for n in mid["sizes"].values())
                if mid["kind"] == "buddy" and not isinstance(events[i], ev.BuddyMerge):
                    # every block on a list is a free block (between S2's merge
                    # and the unlink after it, the buddy is in the merged block
                    # and still on its list; a half cut off by R3 is free
                    # before R4 puts it on its list)
                    free = {a for a, _, st_ in mid["blocks"] if st_ == "free"}
                    assert {a for v in mid["avail"].values() for a in v} <= free
                    for k, addrs in mid["avail"].items():
                        assert all(mid["sizes"][a] == 1 << int(k) for a in addrs)
                state["mid"] += 1
            assert states.available, f"step {step}: the replay gave up mid-step: {events}"
            if events:
                assert states.at(len(events) - 1) == real, f"step {step} ({s.rec.kind}): {events}"
        state["before"] = real

    apply_program(s, ops, after)


@pytest.mark.parametrize("name", ALL)
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=op_sequences(max_ops=80, max_size=3000), params=params_strategy)
def test_the_state_after_the_last_event_is_the_structure_after_the_step(name, ops, params):
    try:
        s = make_strategy(name, **params)
    except ValueError:
        assume(False)
    check_states(s, ops)


def test_buddy_split_cascade_halves_one_block_per_event():
    s = make_strategy("buddy")
    before = s.structure()
    s.malloc(40)
    states = StepStates(before, s.structure(), s.rec.events)
    leaves_per_event = []
    for i, e in enumerate(s.rec.events):
        blocks = states.at(i)["blocks"]
        if isinstance(e, ev.BuddySplit):
            # the block split is now order - 1 and its buddy is a free block of that order
            assert [e.addr, e.order - 1] == blocks[0][:2] or [e.addr, e.order - 1, "used"] in blocks
            assert [e.buddy, e.order - 1, "free"] in blocks
        leaves_per_event.append(len(blocks))
    assert leaves_per_event[-1] == 7            # 4 KiB down to 64 B: six splits, seven blocks
    # no block before sbrk's chunk; then one more block per split
    assert sorted(set(leaves_per_event)) == [0, 1, 2, 3, 4, 5, 6, 7]


def test_a_looking_event_shares_the_state_before_it():
    s = make_strategy("next-fit")
    ps = [s.malloc(n) for n in (100, 200, 300, 400, 500)]
    s.free(ps[1])
    s.free(ps[3])
    before = s.structure()
    s.malloc(450)
    events = s.rec.events
    states = StepStates(before, s.structure(), events)
    for i in range(1, len(events)):
        if isinstance(events[i], ev.Visit):
            assert states.at(i) is states.at(i - 1)
            assert not states.changes(i)


def test_events_that_lie_give_the_whole_step():
    s = make_strategy("tlsf")
    p = s.malloc(100)
    before = s.structure()
    s.free(p)
    after = s.structure()
    lying = [e for e in s.rec.events if not isinstance(e, ev.ListInsert)] + \
            [ev.ListRemove(12345, 64, (0, 3))]
    states = StepStates(before, after, lying)
    assert states.at(len(lying) - 1) is after
    assert not states.available


# ------------------------------------------------------------- every event, by its own rule
#
# Each event says what it did to the structure (allocators/events.py); the
# state right after it must show that, whatever came before.  The expected
# value is read off the event itself, never from StepStates.

#: the named pointers each kind's structure() carries (docs/structure.md), which
#: a PointerMove of the same name moves
POINTERS = {"address-ring": {"rover"}, "ring": {"head"}, "tree": {"wilderness"},
            "bins": {"last_remainder", "top"}, "arena-ring": {"allocp"}, "block-table": {"_heapindex"}}

PROGRAM = [(0, i, n) for i, n in enumerate((40, 900, 24, 3000, 100, 17, 600, 48, 2, 256, 70, 5000))] + [
    (1, 1, 0), (1, 3, 0), (0, 12, 33), (2, 4, 700), (1, 5, 0), (1, 7, 0), (0, 13, 8), (2, 0, 2000),
    (1, 2, 0), (1, 9, 0), (0, 14, 1000), (0, 15, 12), (1, 6, 0), (1, 8, 0), (1, 10, 0), (1, 11, 0),
    (1, 12, 0), (1, 4, 0), (1, 13, 0), (1, 0, 0), (1, 14, 0), (1, 15, 0)]
PARAMS = [{}, {"pool_size": 20000}, {"word": 4}]


def _pointer(state, name):
    return next(p["addr"] for p in state["pointers"] if p["name"] == name)


def check_event_rule(kind, e, mid, prev, end):
    """Assert what event ``e`` says about the state after it (``mid``); ``prev``
    is the state before it, ``end`` the structure after the step."""
    held = set(sp.members(mid))
    if isinstance(e, ev.ListInsert):
        assert e.addr in held and mid["sizes"][e.addr] == e.size
    elif isinstance(e, ev.ListRemove):
        assert sp.where(mid).get(e.addr) != sp.where(prev).get(e.addr) or e.addr not in held
    elif isinstance(e, ev.TreeInsert):
        assert any(e.addr in n["blocks"] for n in mid["nodes"])
    elif isinstance(e, ev.TreeRemove):
        assert not any(e.addr in n["blocks"] for n in mid["nodes"])
    elif isinstance(e, ev.PointerMove) and e.name in POINTERS.get(kind, ()):
        assert _pointer(mid, e.name) == e.new
    if kind == "buddy":
        blocks = {a: (k, state) for a, k, state in mid["blocks"]}
        if isinstance(e, ev.BuddySplit):      # R3: two halves of order - 1
            assert blocks[e.addr][0] == blocks[e.buddy][0] == e.order - 1 and blocks[e.buddy][1] == "free"
        elif isinstance(e, ev.BuddyMerge):    # S2: one block of order + 1 at the lower address
            low, high = sorted((e.addr, e.buddy))
            assert blocks[low][0] == e.order + 1 and high not in blocks
        elif isinstance(e, ev.Placed):
            assert blocks[e.addr][1] == "used"
        elif isinstance(e, ev.Released):
            assert blocks[e.addr][1] == "free"
        assert sum(1 << k for k, _ in blocks.values()) == sum(1 << c["order"] for c in mid["chunks"])
    if kind == "tree" and mid.get("wilderness") is not None:
        assert {"addr": mid["wilderness"], "why": "wilderness"} in mid["outside"]
    if kind == "bins":
        kept = {o["addr"]: o["why"] for o in mid["outside"]}
        for name, why in (("top", "top"), ("last_remainder", "the last remainder")):
            if mid[name] is not None:
                assert kept.get(mid[name]) == why and _pointer(mid, name) == mid[name]
    if kind == "page-directory":
        for page, info in mid["chunk_pages"].items():
            bits = sum(1 << ((a - page) // info["size"]) for a in info["free_chunks"])
            assert info["bitmap"] == bits and info["free"] == len(info["free_chunks"])
        if isinstance(e, ev.ChunkTaken):
            assert e.addr not in mid["chunk_pages"][e.page]["free_chunks"]
            assert not mid["chunk_pages"][e.page]["bitmap"] >> e.index & 1
        elif isinstance(e, ev.ChunkFreed):
            assert mid["chunk_pages"][e.page]["bitmap"] >> e.index & 1
        elif isinstance(e, ev.ChunkPageLinked):
            assert e.page in mid["chunk_lists"][e.shift]
        elif isinstance(e, ev.ChunkPageUnlinked):
            assert e.page not in mid["chunk_lists"][e.shift]
        elif isinstance(e, ev.ChunkPageMade):
            assert mid["chunk_pages"][e.page]["free"] == e.total
        assert set(mid["chunk_lists"]) == set(end["chunk_lists"])   # every size's list, empty or not
    if kind == "block-table":
        if isinstance(e, ev.FragLinked):
            assert e.addr in mid["fraglists"][e.log]
        elif isinstance(e, ev.BlockFragmented):
            assert len([a for a in mid["fraglists"][e.log] if a - a % mid["blocksize"] == e.block]) == e.count - 1
        elif isinstance(e, ev.FragBlockEmptied):
            assert not [a for a in mid["fraglists"][e.log] if a - a % mid["blocksize"] == e.block]
        assert set(mid["fraglists"]) == set(end["fraglists"])
    if kind in ("buckets", "size-classes", "buddy"):
        key = {"buckets": "buckets", "size-classes": "lists", "buddy": "avail"}[kind]
        assert set(mid[key]) == set(end[key])                      # every list, empty or not


@pytest.mark.parametrize("name", ALL)
def test_each_event_shows_in_the_state_after_it(name):
    seen: set[str] = set()
    for params in PARAMS:
        try:
            s = make_strategy(name, **params)
        except ValueError:
            continue
        state = {"before": s.structure()}

        def after(step, where, asked):
            real = s.structure()
            events = list(s.rec.events or ())
            states = StepStates(state["before"], real, events)
            state["before"] = real
            if not states.available:
                return
            prev = states.at(-1)
            for i, e in enumerate(events):
                mid = states.at(i)
                check_event_rule(real["kind"], e, mid, prev, real)
                looks = isinstance(e, (ev.Visit, ev.WalkStep, ev.AvailProbe, ev.BitmapProbe, ev.MappingSearch,
                                       ev.Note, ev.InsertionPoint, ev.GrowFailed))
                assert states.changes(i) is not looks
                seen.add(type(e).__name__)
                prev = mid

        apply_program(s, PROGRAM, after)
    assert seen, name


def test_the_ends_and_the_bounds_of_a_step():
    s = make_strategy("next-fit")
    p = s.malloc(100)
    before = s.structure()
    s.free(p)
    after = s.structure()
    events = s.rec.events
    states = StepStates(before, after, events)
    assert len(states) == len(events) and states.available
    assert states.at(-1) is before and states.at(None) is after
    assert states.at(len(events) + 5) == states.at(len(events) - 1) == after
    assert not states.changes(-1) and not states.changes(len(events))
    # no structure before, or a structure of another kind before: the whole step
    for other in (None, make_strategy("buddy").structure()):
        whole = StepStates(other, after, events)
        assert not whole.available and whole.at(0) is after and whole.at(-1) is after
        assert not whole.changes(0)
    # a user strategy's lists: no replay, the structure after the step throughout
    lists = sp.make("lists", {}, lists={})
    assert not StepStates(lists, lists, []).available


def test_buddy_split_cascade_in_knuths_closed_form():
    # R1..R4 for malloc(40) on an empty buddy heap: sbrk's 4 KiB chunk (order 12)
    # is a new chunk; each R3 split of order n leaves blocks 0 and 2**(n-1) of
    # order n-1 and the buddies of every order from n up to 11 split before.
    s = make_strategy("buddy")
    before = s.structure()
    s.malloc(40)
    events = s.rec.events
    states = StepStates(before, s.structure(), events)
    chunk_at = next(i for i, e in enumerate(events) if isinstance(e, ev.ListInsert))
    for i, e in enumerate(events):
        st_ = states.at(i)
        assert st_["chunks"] == ([] if i < chunk_at else [{"addr": 0, "order": 12}])
        if isinstance(e, ev.BuddySplit):
            n = e.order
            assert st_["blocks"] == [[0, n - 1, "free"], [1 << (n - 1), n - 1, "free"]] + \
                [[1 << m, m, "free"] for m in range(n, 12)]
    assert states.at(len(events) - 1)["blocks"][0] == [0, 6, "used"]   # Placed: 40 + 8 B header in 64 B


def test_buddy_merge_cascade_in_knuths_closed_form():
    s = make_strategy("buddy")
    p = s.malloc(40)
    before = s.structure()
    s.free(p)
    events = s.rec.events
    states = StepStates(before, s.structure(), events)
    assert states.at(0)["blocks"][0] == [0, 6, "free"]           # Released: free before S1
    for i, e in enumerate(events):
        if isinstance(e, ev.BuddyMerge):                          # S2 joins 0 with its buddy 2**k
            k = e.order
            assert states.at(i)["blocks"] == [[0, k + 1, "free"]] + [[1 << m, m, "free"] for m in range(k + 1, 12)]
    assert states.at(len(events) - 1)["avail"][12] == [0]


def test_a_pool_is_carved_only_from_the_event_that_carves_it():
    # a fixed pool: the part not handed out yet stays as it was before the step
    # until the step carves (its Note or growth), then is as after the step
    s = make_strategy("buddy", pool_size=8192)
    s.malloc(40)
    before = s.structure()
    s.malloc(3000)                                  # needs a fresh 4 KiB chunk of the pool
    after = s.structure()
    events = s.rec.events
    states = StepStates(before, after, events)
    carve = next(i for i, e in enumerate(events) if isinstance(e, (ev.Note, ev.Grow, ev.ListInsert)))
    assert before["outside"] != after["outside"]
    for i in range(len(events)):
        expected = before["outside"] if i < carve else after["outside"]
        assert states.at(i)["outside"] == expected, (i, events[i])


def test_a_chunk_page_made_and_dissolved_within_one_step():
    # phkmalloc, pages of 256 B: page 0x100 is cut into sixteen 16 B chunks,
    # one is taken and given back, and the page is dissolved, all in one step;
    # neither the structure before nor after has the page, so its pginfo in
    # the states between comes from its ChunkPageMade alone
    empty = sp.make("page-directory", {0x0: 256}, pagesize=256, pages=[], chunk_pages={},
                    chunk_lists={4: []}, free_runs=[0x0], lists={})
    events = [ev.ChunkPageMade(0x100, 4, 16, 16, 0x100, 0), ev.ChunkTaken(0x100, 4, 0, 0x100, 16, 0),
              ev.ChunkFreed(0x100, 4, 0, 0x100, 16), ev.ChunkPageUnlinked(0x100, 4),
              ev.ChunkPageDissolved(0x100, 4, 256)]
    states = StepStates(empty, empty, events)
    all_chunks = [0x100 + 16 * i for i in range(16)]
    made = states.at(0)
    assert made["chunk_lists"] == {4: [0x100]}
    page = made["chunk_pages"][0x100]
    assert sorted(page.pop("free_chunks")) == all_chunks
    assert page == {"shift": 4, "size": 16, "total": 16, "free": 16, "bitmap": 0xffff, "info": 0x100, "stolen": 0}
    taken = states.at(1)["chunk_pages"][0x100]
    assert taken["free"] == 15 and taken["bitmap"] == 0xfffe and 0x100 not in taken["free_chunks"]
    assert states.at(2)["chunk_pages"][0x100]["bitmap"] == 0xffff
    assert states.at(3)["chunk_lists"] == {4: []}
    assert states.at(4)["chunk_pages"] == {} and states.available


def test_by_the_last_event_the_pool_is_as_after_the_step():
    # a step that only looks (one Visit) yet whose structure after names another
    # untouched pool tail: the state after its last event is the state after it
    def ring(tail, size):
        return sp.make("address-ring", {0x0: 16, tail: size}, pointers=[sp.pointer("rover", None)],
                       outside_blocks=[sp.outside(tail, "the pool not carved yet")], free_list=[0x0], rover=None)
    before, after = ring(0x100, 0x100), ring(0x180, 0x80)
    states = StepStates(before, after, [ev.Visit(0x0, 16, False)])
    assert states.at(0)["outside"] == [{"addr": 0x180, "why": "the pool not carved yet"}]
    assert states.at(0)["sizes"] == {0x0: 16, 0x180: 0x80}
    two = StepStates(before, after, [ev.Visit(0x0, 16, False), ev.Visit(0x0, 16, False)])
    assert two.at(0)["outside"] == before["outside"] and two.at(1)["outside"] == after["outside"]
