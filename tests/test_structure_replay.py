"""The events of a step say every change it made to the free structure: for
every registered strategy, on random programs, replaying a step's events on
``structure()`` before the step gives ``structure()`` after it
(allocators/structure_replay.py says which keys of each kind that covers).
Also: the counters of a step and its events agree, so the explain panel and
the map show what the measures count."""

import copy

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from heapscope.allocators import events as ev
from heapscope.allocators.dlmalloc import BinmapChange, BinmapProbe, BinProbe, BinWalkStep
from heapscope.allocators.segregated_fit import ClassProbe, ListWalkStep
from heapscope.allocators import make_strategy, strategy_names
from heapscope.allocators.replay import Program, apply_op
from heapscope.allocators.structure_replay import (REPLAYABLE_KINDS, ReplayError, StructureReplay,
                                                   replay_events, replayable)
from heapscope.traces import load_trace
from heapscope.traces.bundled import default_trace_path

from .heap_harness import apply_program, op_sequences
from tests.depth import pick

ALL = strategy_names()

params_strategy = st.one_of(
    st.fixed_dictionaries({"word": st.sampled_from([4, 8])}),
    st.fixed_dictionaries({"word": st.sampled_from([4, 8]), "heap_limit": st.integers(2000, 40000)}),
    st.fixed_dictionaries({"pool_size": st.integers(1000, 60000)}),
    st.fixed_dictionaries({"align": st.sampled_from([16, 64])}),
)


def replay_checked(s, ops):
    """Apply ops; after each, the replayed structure equals the real one and
    the step's counters match its events.  Returns the number of steps."""
    state = {"before": s.structure()}

    def after(step, where, asked):
        rec = s.rec
        real = s.structure()
        got = replay_events(state["before"], rec.events)
        assert got == replayable(real), f"step {step} ({rec.kind}): events {rec.events}"
        counters_match_events(s, rec)
        state["before"] = real

    apply_program(s, ops, after)
    return len(ops)


def counters_match_events(s, rec):
    """Each unit the measures count is an event the explain panel lists."""
    kinds = [type(e) for e in rec.events]
    search = sum(k in (ev.Visit, ev.BitmapProbe, ev.AvailProbe, BinProbe, BinmapProbe, ClassProbe)
                 for k in kinds)
    assert search == rec.visits, (rec, rec.events)
    assert sum(k in (ev.WalkStep, BinWalkStep, ListWalkStep) for k in kinds) == rec.walked
    assert kinds.count(ev.Split) + kinds.count(ev.BuddySplit) == rec.splits
    # Vmbest extends the wilderness by the new sbrk memory (a Coalesce right
    # after the Grow) without counting a merge; every other join is counted.
    extensions = sum(1 for a, b in zip(kinds, kinds[1:]) if a is ev.Grow and b is ev.Coalesce)
    assert kinds.count(ev.Coalesce) - extensions + kinds.count(ev.BuddyMerge) == rec.merges
    assert kinds.count(ev.Grow) == rec.grows
    rotations = sum(1 if e.kind == "zig" else 2 for e in rec.events if isinstance(e, ev.Rotation))
    assert rotations == rec.rotations


@pytest.mark.parametrize("name", ALL)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=op_sequences(max_ops=100, max_size=3000), params=params_strategy)
def test_events_replayed_on_the_structure_before_give_the_structure_after(name, ops, params):
    try:
        s = make_strategy(name, **params)
    except ValueError:          # an alignment this policy cannot give (TLSF: the word only)
        assume(False)
    if s.structure()["kind"] not in REPLAYABLE_KINDS:
        pytest.skip(f"{name} has the generic structure, which promises no events")
    replay_checked(s, ops)


@pytest.mark.parametrize("name", ALL)
def test_replay_follows_the_bundled_trace(name):
    # 3000 steps of the default trace: deep trees, long rings, many buckets.
    # V7's ring is every block of the arena, drawn whole at every step: 1000
    # of its steps (10 CPU-s less) meet every event type and every line of
    # its follower that 3000 do, and fail on the same broken follower.
    # (the quick suite, tests/depth.py: a third of them)
    steps = pick(400, 1000) if name == "v7-malloc" else pick(1000, 3000)
    trace = load_trace(str(default_trace_path()))
    s = make_strategy(name)
    program = Program()
    before = s.structure()
    for i, (kind, ident, size) in enumerate(trace):
        if i == steps:
            break
        rec = apply_op(s, program, kind, ident, size)
        after = s.structure()
        assert replay_events(before, rec.events) == replayable(after), f"step {i + 1}"
        counters_match_events(s, rec)
        before = after


def test_realloc_steps_replay_too():
    for name in ALL:
        s = make_strategy(name)
        ps = [s.malloc(n) for n in (100, 300, 50, 2000)]
        s.free(ps[1])
        before = s.structure()
        s.realloc(ps[0], 900)       # grows: moves for most policies
        assert replay_events(before, s.rec.events) == replayable(s.structure()), name


def recorded_step(name, ops, pick):
    """(structure before, events) of the step of ``ops`` chosen by ``pick(rec)``."""
    s = make_strategy(name)
    state = {"before": s.structure(), "found": None}

    def after(step, where, asked):
        if state["found"] is None and pick(s.rec):
            state["found"] = (state["before"], list(s.rec.events), s.structure())
        state["before"] = s.structure()

    apply_program(s, ops, after)
    assert state["found"] is not None
    return state["found"]


OPS = [(0, i, 40 + 37 * i % 900) for i in range(40)] + [(1, i, 0) for i in range(0, 40, 3)] + \
      [(0, 100 + i, 20 + 53 * i % 700) for i in range(30)] + [(1, i, 0) for i in range(1, 40, 3)]


@pytest.mark.parametrize("name,event_type", [
    ("buddy", ev.ListInsert), ("buddy", ev.ListRemove), ("next-fit", ev.ListInsert),
    ("next-fit", ev.ListRemove), ("rotating-list", ev.PointerMove), ("splay-best-fit", ev.TreeJoin),
    ("splay-best-fit", ev.Rotation), ("tlsf", ev.ListInsert), ("bsd-buckets", ev.BucketRefill),
    ("dlmalloc", ev.ListInsert), ("dlmalloc", ev.PointerMove), ("dlmalloc", BinmapChange),
    ("segregated-first-fit", ev.ListInsert), ("segregated-first-fit", ev.ListRemove),
])
def test_a_step_missing_one_event_does_not_replay(name, event_type):
    """The replay is no rubber stamp: drop one structure event and the result
    differs from the structure after the step, or the replay refuses."""
    before, events, after = recorded_step(name, OPS, lambda rec: any(isinstance(e, event_type) for e in rec.events))
    assert replay_events(before, events) == replayable(after)
    i = next(i for i, e in enumerate(events) if isinstance(e, event_type))
    short = events[:i] + events[i + 1:]
    try:
        got = replay_events(before, short)
    except ReplayError:
        return
    assert got != replayable(after)


def test_a_rotation_naming_the_wrong_parent_is_refused():
    before, events, _ = recorded_step("splay-best-fit", OPS, lambda rec: any(
        isinstance(e, ev.Rotation) and e.grandparent is not None for e in rec.events))
    i = next(i for i, e in enumerate(events) if isinstance(e, ev.Rotation) and e.grandparent is not None)
    r = events[i]
    wrong = ev.Rotation(r.kind, r.key, r.addr, r.grandparent, r.parent, r.side)
    with pytest.raises(ReplayError, match="names parent"):
        replay_events(before, events[:i] + [wrong] + events[i + 1:])


def test_micro_steps_give_a_structure_after_every_event():
    # buddy malloc(40) on an empty heap: the chunk appears on AVAIL[12], is
    # taken off, and each R4 half appears on its list one event at a time.
    s = make_strategy("buddy")
    before = s.structure()
    s.malloc(40)
    replay = StructureReplay(before)
    seen = []
    for e in s.rec.events:
        replay.apply(e)
        seen.append(sorted(replay.result(strict=False)["avail"]))
    assert seen[0] == [] and [12] in seen and seen[-1] == [6, 7, 8, 9, 10, 11]
    # orders appear one by one, from 11 down to 6, after AVAIL[12] emptied
    firsts = []
    for orders in seen:
        if orders and orders != [12] and orders[0] not in firsts:
            firsts.append(orders[0])
    assert firsts == [11, 10, 9, 8, 7, 6]


def test_generic_structure_is_not_replayable():
    with pytest.raises(ValueError, match="cannot be replayed"):
        StructureReplay({"kind": "lists", "sizes": {}, "pointers": [], "outside": [], "lists": {}})


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=op_sequences(max_ops=120, max_size=1500))
def test_splay_steps_keep_every_nodes_rank(ops):
    """Rotations keep the in-order rank, so a view laying nodes out by rank
    moves them only vertically; the micro-steps of a join show both subtrees
    in order too."""
    s = make_strategy("splay-best-fit")
    state = {"before": s.structure(), "rotations": 0}

    def after(step, where, asked):
        replay = StructureReplay(state["before"])
        ranks = None
        for e in s.rec.events:
            replay.apply(e)
            mid = replay.result(strict=False)
            now = [n["addr"] for n in mid["nodes"]]
            if isinstance(e, ev.Rotation):
                assert now == ranks, f"step {step}: {e} changed the in-order ranks"
                state["rotations"] += 1
            keys = [n["key"] for n in mid["nodes"]]
            assert keys == sorted(keys)
            ranks = now
        state["before"] = s.structure()

    apply_program(s, ops, after)
