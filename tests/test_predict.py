"""Predict-the-block's judge (allocators/predict.py): the policy's own choice
is marked right and any other free block wrong, at every malloc of a replay,
for every strategy; the reasons say what the policy examined, in its words
(next fit's rover, TLSF's class, best fit's sizes, the buddy's AVAIL lists,
the buckets); a click on no free block is no answer."""

import random

import pytest

from heapscope.allocators import strategy_names
from heapscope.allocators import events as ev
from heapscope.allocators.predict import GROW, InvalidGuess, check_guess, judge, reveal
from heapscope.allocators.replay import Timeline
from heapscope.traces import make_workload
from heapscope.traces.trace import ALLOC


@pytest.fixture(scope="module")
def trace():
    return make_workload("vo1989", steps=300, seed=5)


def malloc_steps(timeline, params=None):
    """(t, before, record, request, heap_before, heap_after) for every malloc."""
    tl = timeline
    for t in range(1, tl.n + 1):
        kind, _, size = tl.op(t)
        if kind != ALLOC:
            continue
        before = tl.state_at(t - 1)
        tl.seek(t)
        hb = int(tl.series.heap[t - 2]) if t > 1 else 0
        yield t, before, tl.last_record, size, hb, int(tl.series.heap[t - 1])


def free_blocks(before):
    return [(b[0], b[1]) for b in before.blocks if b[2] == "free"]


@pytest.mark.parametrize("pool", [False, True], ids=["sbrk", "pool"])
@pytest.mark.parametrize("name", strategy_names())
def test_the_policys_choice_is_right_and_every_other_block_wrong(trace, name, pool):
    params = {"pool_size": 1 << 20} if pool else {}
    tl = Timeline(trace, name, params).build()
    rng = random.Random(7)
    grew = chosen = 0
    for t, before, rec, size, hb, ha in malloc_steps(tl):
        answer = reveal(t, size, before, rec, name, hb, ha)
        placed = next(e for e in rec.events if isinstance(e, ev.Placed))
        if any(isinstance(e, ev.Grow) for e in rec.events):
            assert answer.answers == (GROW,)
            grew += 1
        else:
            block = answer.answer
            assert block != GROW
            # the block the policy chose is where it placed the block
            assert block < placed.addr + placed.size and placed.addr < block + dict(free_blocks(before))[block]
            chosen += 1
        for right in answer.answers:
            v = judge(t, size, before, rec, right, name, hb, ha)
            assert v.correct and not v.skipped and v.reason
        others = [a for a, _ in free_blocks(before) if a not in answer.answers]
        for wrong in rng.sample(others, min(3, len(others))) + ([GROW] if GROW not in answer.answers else []):
            v = judge(t, size, before, rec, wrong, name, hb, ha)
            assert not v.correct and v.reason and v.guess == wrong
    assert chosen > 50 and (grew > 0 or pool)


def first_fit_from_base(before, need):
    """The lowest free block that fits: what a student who forgets the rover picks."""
    for addr, size in sorted(free_blocks(before)):
        if size >= need:
            return addr
    return None


def test_next_fit_a_click_on_the_first_fit_from_base_is_wrong_because_of_the_rover(trace):
    tl = Timeline(trace, "next-fit").build()
    cases = 0
    for t, before, rec, size, hb, ha in malloc_steps(tl):
        answer = reveal(t, size, before, rec, "next-fit", hb, ha)
        if answer.answer == GROW:
            continue
        split = next((e for e in rec.events if isinstance(e, ev.Split)), None)
        need = split.taken_size if split else next(e for e in rec.events if isinstance(e, ev.Placed)).size
        rover = next(p["addr"] for p in before.structure["pointers"] if p["name"] == "rover")
        naive = first_fit_from_base(before, need)
        if naive is None or naive == answer.answer or rover is None or not naive <= rover < answer.answer:
            continue
        wrong = judge(t, size, before, rec, naive, "next-fit", hb, ha)
        assert not wrong.correct
        assert "starts at the rover" in wrong.reason and "not at the start of the list" in wrong.reason
        assert f"0x{rover:x}" in wrong.reason and f"0x{naive:x}" in wrong.reason
        right = judge(t, size, before, rec, answer.answer, "next-fit", hb, ha)
        assert right.correct and "just after the rover" in right.reason
        assert f"0x{answer.answer:x}" in right.reason
        cases += 1
    assert cases >= 3


def test_next_fit_a_block_the_search_passed_is_too_small_in_its_order(trace):
    tl = Timeline(trace, "next-fit").build()
    for t, before, rec, size, hb, ha in malloc_steps(tl):
        visits = [e for e in rec.events if isinstance(e, ev.Visit) and not e.fits]
        if len(visits) >= 2 and not any(isinstance(e, ev.Grow) for e in rec.events):
            v = judge(t, size, before, rec, visits[1].addr, "next-fit", hb, ha)
            assert not v.correct
            assert "too small" in v.reason and "examined it 2nd" in v.reason
            return
    pytest.fail("no malloc passed two blocks")


def tlsf_class_of(before, addr):
    for key, addrs in before.structure["lists"].items():
        if addr in addrs:
            return tuple(int(x) for x in key.split(","))
    return None


def test_tlsf_names_the_class_searched_and_marks_a_fitting_block_below_it_wrong(trace):
    tl = Timeline(trace, "tlsf").build()
    below = above = 0
    for t, before, rec, size, hb, ha in malloc_steps(tl):
        m = next(e for e in rec.events if isinstance(e, ev.MappingSearch))
        answer = reveal(t, size, before, rec, "tlsf", hb, ha)
        assert f"class ({m.fl}, {m.sl})" in answer.reason
        if answer.answer == GROW:
            continue
        found = tlsf_class_of(before, answer.answer)
        for addr, bsize in free_blocks(before):
            cls = tlsf_class_of(before, addr)
            if cls is None or addr == answer.answer:
                continue
            v = judge(t, size, before, rec, addr, "tlsf", hb, ha)
            assert not v.correct
            if cls < (m.fl, m.sl):
                assert f"is in list ({cls[0]}, {cls[1]}), below the class searched, ({m.fl}, {m.sl})" in v.reason
                below += 1
            elif cls > found:
                assert f"above ({found[0]}, {found[1]})" in v.reason and "first non-empty list" in v.reason
                above += 1
        right = judge(t, size, before, rec, answer.answer, "tlsf", hb, ha)
        assert right.correct and f"list ({found[0]}, {found[1]})" in right.reason and "head" in right.reason
    assert below and above


def test_best_fit_says_a_bigger_block_is_not_the_smallest_that_fits(trace):
    tl = Timeline(trace, "splay-best-fit").build()
    for t, before, rec, size, hb, ha in malloc_steps(tl):
        answer = reveal(t, size, before, rec, "splay-best-fit", hb, ha)
        wild = before.structure.get("wilderness")
        if answer.answer in (GROW, wild):
            continue
        chosen = dict(free_blocks(before))[answer.answer]
        bigger = [a for a, s in free_blocks(before) if s > chosen and a != wild]
        if bigger:
            v = judge(t, size, before, rec, bigger[0], "splay-best-fit", hb, ha)
            assert not v.correct and "takes the smallest block that fits" in v.reason
            assert f"({chosen:,} B)" in v.reason
            return
    pytest.fail("no malloc with a bigger block in the tree")


def test_buddy_and_buckets_name_their_lists(trace):
    for name, word in (("buddy", "AVAIL["), ("bsd-buckets", "nextf[")):
        tl = Timeline(trace, name).build()
        seen = 0
        for t, before, rec, size, hb, ha in malloc_steps(tl):
            answer = reveal(t, size, before, rec, name, hb, ha)
            assert word in answer.reason
            others = [a for a, _ in free_blocks(before) if a not in answer.answers]
            if others:
                v = judge(t, size, before, rec, others[0], name, hb, ha)
                assert not v.correct and word in v.reason
                seen += 1
        assert seen > 20


def test_a_failed_malloc_is_the_heap_growing_and_says_null():
    trace = make_workload("vo1989", steps=200, seed=2)
    tl = Timeline(trace, "next-fit", {"heap_limit": 40_000}).build()
    for t, before, rec, size, hb, ha in malloc_steps(tl):
        if rec.failed:
            v = judge(t, size, before, rec, GROW, "next-fit", hb, ha)
            assert v.correct and "NULL" in v.reason
            return
    pytest.fail("no malloc failed under the limit")


def test_a_click_on_a_used_block_or_past_the_break_is_no_answer(trace):
    tl = Timeline(trace, "next-fit").build()
    before = tl.state_at(150)
    used = next(b for b in before.blocks if b[2] == "used")
    with pytest.raises(InvalidGuess, match="in use"):
        check_guess(before, used[0] + 1)
    brk = before.blocks[-1][0] + before.blocks[-1][1]
    with pytest.raises(InvalidGuess, match="past the break"):
        check_guess(before, brk + 100)
    free = next(b for b in before.blocks if b[2] == "free")
    assert check_guess(before, free[0] + free[1] - 1) == free[0]    # any byte of the block means it


def test_next_fit_after_wrapping_round_a_later_block_is_later_on_the_ring(trace):
    """When the search wrapped past the end of the list, a block between the
    one taken and the rover was simply not reached: it is later on the ring,
    not 'below the rover' (which is why next fit differs from first fit)."""
    tl = Timeline(trace, "next-fit").build()
    cases = 0
    for t, before, rec, size, hb, ha in malloc_steps(tl):
        answer = reveal(t, size, before, rec, "next-fit", hb, ha)
        rover = next(p["addr"] for p in before.structure["pointers"] if p["name"] == "rover")
        if answer.answer == GROW or rover is None or not answer.answer < rover:
            continue
        visited = {e.addr for e in rec.events if isinstance(e, ev.Visit)}
        between = [a for a, _ in free_blocks(before) if answer.answer < a <= rover and a not in visited]
        for guess in between:
            v = judge(t, size, before, rec, guess, "next-fit", hb, ha)
            assert not v.correct
            assert "comes after" in v.reason and "on the ring from the rover" in v.reason
            assert "lies below the rover" not in v.reason
            cases += 1
    assert cases >= 3
