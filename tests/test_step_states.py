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
