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
        # the heap before the step: the timeline walks forward, one step at a
        # time (state_at(t - 1) would restore a checkpoint and replay to it)
        tl.seek(t - 1)
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


# ------------------------------------------------------------- a fixed pool (--pool-size)
#
# In a pool nothing calls sbrk: the heap as the gauges measure it is the part
# of the pool touched so far, so a block reaching into the untouched part makes
# the heap grow too and both answers count.  Worked by hand on an 8 KiB pool.

from heapscope.traces import Trace  # noqa: E402

POOL_TRACE = Trace.from_ops([("a", 0, 100), ("a", 1, 200), ("f", 0), ("a", 2, 50), ("a", 3, 5000)])


def pool_steps(name):
    tl = Timeline(POOL_TRACE, name, {"pool_size": 8192}).build()
    return {t: (before, rec, size, hb, ha) for t, before, rec, size, hb, ha in malloc_steps(tl)}


def test_next_fit_in_a_pool_first_malloc_counts_both_answers():
    # K&R: 100 B is 7 units of 16 B + a header unit = 128 B, cut from the tail
    # of the one free block 0x0 (8192 B); the heap grows from 0 to 128 B.
    before, rec, size, hb, ha = pool_steps("next-fit")[1]
    assert (hb, ha) == (0, 128)
    v = reveal(1, size, before, rec, "next-fit", hb, ha)
    assert v.answers == (0, GROW) and v.answer == 0
    assert "both answers count" in v.reason
    for guess in (0, GROW, 0x100):          # any byte of the block means the block
        assert judge(1, size, before, rec, guess, "next-fit", hb, ha).correct
    # without the heap sizes around the step nothing says the pool was carved
    assert reveal(1, size, before, rec, "next-fit").answers == (0,)


def test_next_fit_in_a_pool_a_reused_block_is_the_only_answer():
    # step 4, malloc(50): 4 units + header = 80 B; the freed 128 B block at
    # 8192 - 128 = 0x1f80 comes right after the rover (0x0) and fits; the heap
    # stays at 128 + 224 = 352 B, so "the heap grows" is wrong
    before, rec, size, hb, ha = pool_steps("next-fit")[4]
    assert (hb, ha) == (352, 352)
    v = reveal(4, size, before, rec, "next-fit", hb, ha)
    assert v.answers == (0x1f80,) and "both answers" not in v.reason
    wrong = judge(4, size, before, rec, GROW, "next-fit", hb, ha)
    assert not wrong.correct
    assert wrong.reason.startswith("The heap does not grow: 0x1f80 (128 B) is free and big enough for 80 B.")
    assert not judge(4, size, before, rec, 0x0, "next-fit", hb, ha).correct
    assert judge(4, size, before, rec, 0x1f80, "next-fit", hb, ha).headline == "✓ Right: malloc(50) took block 0x1f80"


def test_next_fit_in_a_pool_a_big_request_reaches_the_untouched_part():
    # step 5, malloc(5000): 313 units + header = 5024 B from the tail of 0x0
    # (7840 B), below the 352 B touched so far: the heap grows by 5024 B
    before, rec, size, hb, ha = pool_steps("next-fit")[5]
    assert (hb, ha) == (352, 352 + 5024)
    v = reveal(5, size, before, rec, "next-fit", hb, ha)
    assert v.answers == (0, GROW)
    assert "5,024 B" in v.reason and "both answers count" in v.reason
    assert v.headline == "step 5: malloc(5000) took block 0x0" and v.skipped


def test_buddy_in_a_pool_carves_a_chunk_then_fails_past_the_pool():
    steps = pool_steps("buddy")
    # step 1: the first 4 KiB chunk of the pool is carved (H 0 -> 4096) and
    # halved down to order 7 (100 B + 8 B header <= 128 B)
    before, rec, size, hb, ha = steps[1]
    assert (hb, ha) == (0, 4096)
    v = reveal(1, size, before, rec, "buddy", hb, ha)
    assert v.answers == (0, GROW) and "order 7" in v.reason and "both answers count" in v.reason
    # step 2: 200 B + 8 needs order 8; AVAIL[8] holds the buddy 0x100 of R3: no growth
    before, rec, size, hb, ha = steps[2]
    v = reveal(2, size, before, rec, "buddy", hb, ha)
    assert v.answers == (0x100,) and "AVAIL[8] is not empty" in v.reason
    assert not judge(2, size, before, rec, GROW, "buddy", hb, ha).correct
    # step 5: 5000 B needs order 13 (8 KiB), the whole pool and more: NULL
    before, rec, size, hb, ha = steps[5]
    assert rec.failed
    v = judge(5, size, before, rec, GROW, "buddy", hb, ha)
    assert v.correct and v.answers == (GROW,) and "returns NULL" in v.reason
    assert v.headline == "✓ Right: malloc(5000) took new memory: the heap grew"


def test_tlsf_in_a_pool_names_the_class_and_counts_both_answers():
    steps = pool_steps("tlsf")
    before, rec, size, hb, ha = steps[1]
    v = reveal(1, size, before, rec, "tlsf", hb, ha)
    # mapping_search: 100 B rounds to 104 (8-byte aligned), class (0, 13) with
    # 8-byte second-level cells below 256 B: 104 // 8 = 13
    assert v.answers == (0, GROW) and "class (0, 13)" in v.reason
    before, rec, size, hb, ha = steps[4]                  # 50 B -> 56 B, class (0, 7): the freed 112 B block
    v = reveal(4, size, before, rec, "tlsf", hb, ha)
    # the freed block 0x0 holds 100 B rounded to 104 plus its 8 B size word: 112 B, filed in (0, 104 // 8)
    assert v.answers == (0,) and v.reason == (
        "TLSF's mapping_search rounds 50 B up to 56 B, class (0, 7), so that every block of that class and "
        "above fits; list (0, 7) is empty, and sl_bitmap[0] gives the next non-empty list of that first "
        "level, list (0, 13), and TLSF takes its head, 0x0 (112 B).")
    wrong = judge(4, size, before, rec, 320, "tlsf", hb, ha)
    assert not wrong.correct and wrong.headline == "✗ Wrong: malloc(50) took block 0x0"


# ------------------------------------------------------------- the judge on a heap made by hand
#
# A four-block heap and the events of one malloc written by hand, no strategy:
# every line below is what the docstrings of allocators/predict.py promise,
# with the numbers worked out here.

from types import SimpleNamespace  # noqa: E402

from heapscope.allocators.explain import times as _times  # noqa: E402
from heapscope.allocators.predict import _sentence, hx, ordinal, plural  # noqa: E402

HEAP = [(0x0, 64, "free"), (0x40, 32, "used"), (0x60, 128, "free"), (0xe0, 256, "free"), (0x1e0, 16, "meta")]
LISTS = {"kind": "lists", "sizes": {0x0: 64, 0x60: 128, 0xe0: 256}, "pointers": [], "outside": [],
         "lists": {"all": [0x0, 0x60, 0xe0]}}
BEFORE = SimpleNamespace(blocks=HEAP, structure=LISTS)


def record(events, failed=False):
    rec = ev.OpRecord("malloc", 0, events)
    rec.failed = failed
    return rec


# malloc(90): the search passes 0x0 (64 B), takes 0x60 (128 B) and cuts 96 B from it
FOUND = record([ev.Visit(0x0, 64, False), ev.Visit(0x60, 128, True), ev.Split(0x60, 128, 0x60, 96, 0xc0, 32),
                ev.Placed(0x60, 96, 0x68, 90)])
WHY_FOUND = "The policy examined 2 blocks (0x0 64 B, 0x60 128 B) and took 0x60 (128 B), the first that fits 96 B."
# malloc(500): nothing fits; sbrk(4096), the block of 512 B placed in the new memory
GREW = record([ev.Visit(0x0, 64, False), ev.Visit(0x60, 128, False), ev.Visit(0xe0, 256, False),
               ev.Grow(0x1f0, 4096), ev.Placed(0x1f0, 512, 0x1f8, 500)])
WHY_GREW = ("No free block was taken for 500 B: the policy examined 3 blocks, none big enough "
            "(the largest free block was 256 B), so the heap grows by 4,096 B (sbrk).")


def test_the_generic_account_of_a_search_that_found_a_block():
    v = reveal(3, 90, BEFORE, FOUND)
    assert v.answers == (0x60,) and v.reason == WHY_FOUND and v.skipped
    assert v.headline == "step 3: malloc(90) took block 0x60"
    right = judge(3, 90, BEFORE, FOUND, 0x70)             # a byte of 0x60 means 0x60
    assert right.correct and right.guess == 0x60 and right.reason == WHY_FOUND
    assert right.headline == "✓ Right: malloc(90) took block 0x60"
    grow = judge(3, 90, BEFORE, FOUND, GROW)
    assert grow.reason == "The heap does not grow: 0x60 (128 B) is free and big enough for 96 B. " + WHY_FOUND
    assert grow.headline == "✗ Wrong: malloc(90) took block 0x60"
    passed = judge(3, 90, BEFORE, FOUND, 0x0)
    assert passed.reason == "0x0 (64 B) is too small for 96 B: the search examined it 1st and went on. " + WHY_FOUND
    later = judge(3, 90, BEFORE, FOUND, 0xe0)
    assert later.reason == "0xe0 (256 B) was not examined: the search stopped at 0x60. " + WHY_FOUND
    assert not (grow.correct or passed.correct or later.correct)


def test_the_generic_account_of_a_search_that_grew_the_heap():
    v = reveal(4, 500, BEFORE, GREW)
    assert v.answers == (GROW,) and v.answer == GROW and v.reason == WHY_GREW
    assert v.headline == "step 4: malloc(500) took new memory: the heap grew"
    assert judge(4, 500, BEFORE, GREW, GROW).correct
    third = judge(4, 500, BEFORE, GREW, 0xe0)              # no Split: the block placed is the need, 512 B
    assert third.reason == "0xe0 (256 B) is too small for 512 B: the search examined it 3rd and went on. " + WHY_GREW
    # a heap grown in a pool without sbrk: both answers would count, but no block was chosen here
    assert reveal(4, 500, BEFORE, GREW, "", 100, 700).answers == (GROW,)


def test_a_failed_malloc_and_a_search_of_nothing():
    failed = record([ev.GrowFailed(4096)], failed=True)
    v = judge(5, 5000, BEFORE, failed, GROW)
    assert v.correct and v.reason == (
        "No free block was taken for 5,000 B: nothing in the free structure could serve it (the largest free "
        "block was 256 B), so the heap must grow. Here it cannot: the heap limit (or the pool) is reached, "
        "so malloc returns NULL.")
    small = judge(5, 5000, BEFORE, failed, 0x0)
    assert small.reason.startswith("0x0 (64 B) is too small for 5,000 B. No free block")
    empty = SimpleNamespace(blocks=[(0x0, 32, "used")], structure=dict(LISTS, sizes={}, lists={}))
    assert reveal(1, 8, empty, record([ev.Grow(0x20, 4096), ev.Placed(0x20, 16, 0x28, 8)])).reason == (
        "No free block was taken for 8 B: nothing in the free structure could serve it (nothing was free), "
        "so the heap grows by 4,096 B (sbrk).")


def test_a_long_search_lists_six_blocks_then_how_many_more():
    blocks = [(i * 0x10, 16, "free") for i in range(9)] + [(0x90, 64, "free")]
    before = SimpleNamespace(blocks=blocks, structure=dict(LISTS, sizes={b[0]: b[1] for b in blocks}))
    rec = record([ev.Visit(a, 16, False) for a, _, _ in blocks[:9]] + [ev.Visit(0x90, 64, True),
                                                                        ev.Placed(0x90, 64, 0x98, 50)])
    assert reveal(1, 50, before, rec, "my-fit").reason == (
        "My-fit examined 10 blocks (0x0 16 B, 0x10 16 B, 0x20 16 B, 0x30 16 B, 0x40 16 B, 0x50 16 B, … 4 more) "
        "and took 0x90 (64 B), the first that fits 64 B.")
    direct = record([ev.Placed(0x90, 64, 0x98, 50)])       # no search shown at all
    assert reveal(1, 50, before, direct, "my-fit").reason == "My-fit took 0x90 (64 B) for 64 B."


def test_clicks_that_are_no_answer():
    with pytest.raises(InvalidGuess, match=r"^block 0x40 \(32 B\) is in use: malloc only hands out free blocks "
                                           r"\(yellow, or the green top block\)$"):
        judge(3, 90, BEFORE, FOUND, 0x5f)
    with pytest.raises(InvalidGuess, match="^block 0x1e0 is the allocator's own bytes: click a free block$"):
        check_guess(BEFORE, 0x1e0)
    with pytest.raises(InvalidGuess, match="^0x1f0 is past the break: click a free block, or answer that the "
                                           "heap will grow$"):
        check_guess(BEFORE, 0x1f0)
    with pytest.raises(InvalidGuess, match="past the break"):
        check_guess(SimpleNamespace(blocks=[(0x10, 16, "free")], structure=LISTS), 0x8)   # below the heap
    assert check_guess(BEFORE, 0x1df) == 0xe0 and check_guess(BEFORE, 0) == 0


def test_the_wording_helpers():
    assert [ordinal(n) for n in (1, 2, 3, 4, 10, 11, 12, 13, 20, 21, 22, 23, 101, 111, 112, 113, 120, 121)] == [
        "1st", "2nd", "3rd", "4th", "10th", "11th", "12th", "13th", "20th", "21st", "22nd", "23rd",
        "101st", "111th", "112th", "113th", "120th", "121st"]
    assert plural(1, "block") == "1 block" and plural(0, "block") == "0 blocks"
    assert plural(1500, "block") == "1,500 blocks" and plural(2, "child", "children") == "2 children"
    assert hx(None) == "base" and hx(0) == "0x0" and hx(0x1f80) == "0x1f80"
    assert (_times(1), _times(2), _times(3)) == ("once", "twice", "3 times")
    assert _sentence("  the  heap\ngrows ") == "The heap grows" and _sentence("") == ""


# the buddy system (Knuth's algorithm R) and 4.3BSD's buckets on heaps made by hand

BUDDY_HEAP = [(0x0, 64, "used"), (0x40, 64, "free"), (0x80, 128, "free"), (0x100, 256, "free"),
              (0x200, 64, "free"), (0x240, 64, "used")]
BUDDY = SimpleNamespace(blocks=BUDDY_HEAP, structure={
    "kind": "buddy", "sizes": {0x40: 64, 0x80: 128, 0x100: 256, 0x200: 64}, "pointers": [], "outside": [],
    "avail": {5: [], 6: [0x40, 0x200], 7: [0x80], 8: [0x100], 9: []}})


def test_buddy_r1_goes_up_one_order_and_r3_halves_once():
    # malloc(20): 20 + 8 B header fits 2^5; AVAIL[5] empty, AVAIL[6] holds 0x40
    rec = record([ev.AvailProbe(5, None), ev.AvailProbe(6, 0x40), ev.ListRemove(0x40, 64, (6,)),
                  ev.BuddySplit(0x40, 6, 0x60), ev.ListInsert(0x60, 32, (5,)), ev.Placed(0x40, 32, 0x48, 20)])
    why = ("The request needs a block of order 5, 2^5 = 32 B with its header; AVAIL[5] is empty, so R1 goes up "
           "to AVAIL[6] and takes its first block, 0x40 (2^6 B), which R3 halves once down to 2^5.")
    assert reveal(1, 20, BUDDY, rec, "buddy").reason == why
    assert judge(1, 20, BUDDY, rec, 0x80, "buddy").reason == (
        "0x80 is in AVAIL[7]: R1 takes the smallest non-empty AVAIL[j] with j ≥ 5, here AVAIL[6], and splits "
        "it rather than a bigger block. " + why)
    three = record([ev.AvailProbe(5, None), ev.AvailProbe(6, None), ev.AvailProbe(7, None), ev.AvailProbe(8, 0x100),
                    ev.Placed(0x100, 32, 0x108, 20)])
    assert reveal(1, 20, BUDDY, three, "buddy").reason == (
        "The request needs a block of order 5, 2^5 = 32 B with its header; AVAIL[5] to AVAIL[7] are empty, so R1 "
        "goes up to AVAIL[8] and takes its first block, 0x100 (2^8 B), which R3 halves 3 times down to 2^5.")


def test_buddy_r2_takes_the_front_of_its_list():
    # malloc(40): 48 B fits 2^6, and AVAIL[6] is not empty
    rec = record([ev.AvailProbe(6, 0x40), ev.ListRemove(0x40, 64, (6,)), ev.Placed(0x40, 64, 0x48, 40)])
    why = ("The request needs a block of order 6, 2^6 = 64 B with its header; AVAIL[6] is not empty, so R2 "
           "takes its first block, 0x40.")
    assert reveal(2, 40, BUDDY, rec, "buddy").reason == why
    assert judge(2, 40, BUDDY, rec, 0x200, "buddy").reason == (
        "0x200 is in AVAIL[6] but not at its front: R2 takes the first block of the list. " + why)
    # malloc(100): 108 B needs 2^7; a block of AVAIL[6] is too small
    big = record([ev.AvailProbe(7, 0x80), ev.ListRemove(0x80, 128, (7,)), ev.Placed(0x80, 128, 0x88, 100)])
    assert judge(3, 100, BUDDY, big, 0x40, "buddy").reason.startswith(
        "0x40 is in AVAIL[6]: a block of 2^6 = 64 B is too small. The request needs a block of order 7, "
        "2^7 = 128 B with its header; AVAIL[7] is not empty")


def test_buddy_grows_by_a_chunk_when_every_list_up_is_empty():
    rec = record([ev.AvailProbe(k, None) for k in (9, 10, 11, 12)] + [ev.Grow(0x280, 4096),
                 ev.Placed(0x280, 512, 0x288, 300)])
    assert reveal(4, 300, BUDDY, rec, "buddy").reason == (
        "The request needs a block of order 9, 2^9 = 512 B with its header; AVAIL[9] to AVAIL[12] are all "
        "empty, so a new chunk of 4,096 B comes from sbrk.")
    one = record([ev.AvailProbe(12, None), ev.Grow(0x280, 4096), ev.Placed(0x280, 4096, 0x288, 4000)])
    assert reveal(4, 4000, BUDDY, one, "buddy").reason.startswith(
        "The request needs a block of order 12, 2^12 = 4,096 B with its header; AVAIL[12] is empty, so")


BUCKETS = SimpleNamespace(
    blocks=[(0x0, 32, "free"), (0x20, 32, "free"), (0x40, 64, "free"), (0x80, 64, "used")],
    structure={"kind": "buckets", "sizes": {0x0: 32, 0x20: 32, 0x40: 64}, "pointers": [], "outside": [],
               "buckets": {2: [0x0, 0x20], 3: [0x40], 4: []}, "block_sizes": {2: 32, 3: 64, 4: 128}})


def test_buckets_take_the_head_of_one_bucket_and_no_other():
    rec = record([ev.ListRemove(0x0, 32, (2,)), ev.Placed(0x0, 32, 0x8, 20)])
    why = ("4.3BSD malloc rounds 20 B plus its header up to a power of two: nextf[2] (blocks of 32 B); it takes "
           "the head of that list, 0x0, and never looks at another bucket.")
    assert reveal(1, 20, BUCKETS, rec, "bsd-buckets").reason == why
    assert judge(1, 20, BUCKETS, rec, 0x40, "bsd-buckets").reason == (
        "0x40 is in nextf[3] (blocks of 64 B): malloc takes only from nextf[2] (blocks of 32 B); buckets are "
        "never split nor joined. " + why)
    assert judge(1, 20, BUCKETS, rec, 0x20, "bsd-buckets").reason == (
        "0x20 is in the right bucket but not at its head: nextf[2] is LIFO, the head goes first. " + why)


def test_buckets_refill_an_empty_bucket_from_sbrk():
    rec = record([ev.Grow(0x100, 4096), ev.BucketRefill(4, 0x100, 128, 32), ev.ListRemove(0x100, 128, (4,)),
                  ev.Placed(0x100, 128, 0x108, 100)])
    assert reveal(2, 100, BUCKETS, rec, "bsd-buckets").reason == (
        "4.3BSD malloc rounds 100 B plus its header up to nextf[4] (blocks of 128 B), and that list is empty, "
        "so morecore gets 4,096 B from sbrk and carves it into 32 blocks of 128 B.")


def test_best_fit_names_at_most_eight_sizes_of_its_path_down_the_tree():
    blocks = [(0x100 * i, 16 * (i + 1), "free") for i in range(10)]
    nodes = [{"addr": a, "key": s, "blocks": [a], "left": None, "right": None} for a, s, _ in blocks]
    before = SimpleNamespace(blocks=blocks, structure={
        "kind": "tree", "sizes": {a: s for a, s, _ in blocks}, "pointers": [], "outside": [],
        "root": None, "nodes": nodes, "wilderness": None})
    rec = record([ev.Visit(a, s, s >= 160) for a, s, _ in blocks] + [ev.Placed(0x900, 160, 0x908, 150)])
    assert reveal(1, 150, before, rec, "splay-best-fit").reason == (
        "Best fit takes the smallest block that fits 160 B: the search went down the tree from the root "
        "(sizes 16, 32, 48, 64, 80, 96, 112, 128, …) and the smallest size at least 160 B was 160 B, the node 0x900.")


def ring_heap(rover):
    blocks = [(0x0, 32, "free"), (0x20, 64, "used"), (0x60, 128, "free"), (0xe0, 256, "free")]
    pointers = [] if rover is False else [{"name": "rover", "addr": rover, "role": "search"}]
    return SimpleNamespace(blocks=blocks, structure={
        "kind": "address-ring", "sizes": {0x0: 32, 0x60: 128, 0xe0: 256}, "pointers": pointers, "outside": [],
        "free_list": [0x0, 0x60, 0xe0], "rover": rover or None})


def test_first_fit_from_the_start_of_the_list_in_its_words():
    rec = record([ev.Visit(0x0, 32, False), ev.Visit(0x60, 128, True), ev.Split(0x60, 128, 0x60, 96, 0xc0, 32),
                  ev.Placed(0x60, 96, 0x68, 90)])
    why = ("First fit searches from the start of the list (the lowest address) every time and takes the first "
           "block that fits: it examined 2 blocks (0x0 32 B, 0x60 128 B); the first big enough for 96 B was "
           "0x60 (128 B).")
    before = ring_heap(False)
    assert reveal(1, 90, before, rec, "first-fit").reason == why
    assert judge(1, 90, before, rec, 0xe0, "first-fit").reason == (
        "0xe0 lies above 0x60: first fit takes the first block that fits from the start of the list. " + why)
    assert judge(1, 90, before, rec, 0x0, "first-fit").reason == (
        "0x0 (32 B) is too small for 96 B: the search examined it 1st and went on. " + why)


def test_next_fit_from_the_rover_in_its_words():
    rec = record([ev.Visit(0xe0, 256, True), ev.Placed(0xe0, 256, 0xe8, 200)])
    why = "Next fit starts its search just after the rover (freep = 0x60), and the first block it meets, " \
          "0xe0 (256 B), fits 256 B."
    before = ring_heap(0x60)
    assert reveal(1, 200, before, rec, "next-fit").reason == why
    assert judge(1, 200, before, rec, 0x0, "next-fit").reason == (
        "Next fit starts at the rover (0x60), not at the start of the list: 0x0 lies below the rover, so this "
        "search reaches it only after wrapping round, and it stopped at 0xe0 first; and at 32 B it is too "
        "small for 256 B anyway. " + why)


def test_best_fit_says_why_another_block_is_not_the_best():
    blocks = [(0x0, 64, "free"), (0x100, 128, "free"), (0x200, 256, "free"), (0x300, 1024, "free")]
    nodes = [{"addr": a, "key": s, "blocks": [a], "left": None, "right": None} for a, s, _ in blocks[:3]]
    before = SimpleNamespace(blocks=blocks, structure={
        "kind": "tree", "sizes": {a: s for a, s, _ in blocks}, "pointers": [],
        "outside": [{"addr": 0x300, "why": "wilderness"}], "root": 0x100, "nodes": nodes, "wilderness": 0x300})
    rec = record([ev.Visit(0x100, 128, True), ev.Visit(0x0, 64, False), ev.Split(0x100, 128, 0x100, 104, 0x168, 24),
                  ev.Placed(0x100, 104, 0x108, 100)])
    why = (" Best fit takes the smallest block that fits 104 B: the search went down the tree from the root "
           "(sizes 128, 64) and the smallest size at least 104 B was 128 B, the node 0x100.")
    assert judge(1, 100, before, rec, 0x200, "splay-best-fit").reason == (
        "0x200 (256 B) fits but is bigger than 0x100 (128 B): best fit compares sizes and takes the smallest "
        "block that fits, not the first one nor the lowest." + why)
    assert judge(1, 100, before, rec, 0x300, "splay-best-fit").reason == (
        "The wilderness 0x300 is kept out of the tree and used only when no block in the tree fits; here 0x100 "
        "(128 B) does." + why)
    assert judge(1, 100, before, rec, 0x0, "splay-best-fit").reason == "0x0 (64 B) is too small for 104 B." + why


def kruse_ring(head):
    """Kruse's ring in LIFO order from its head: 0xe0 (256 B), 0x0 (32 B), 0x60 (128 B)."""
    blocks = [(0x0, 32, "free"), (0x20, 64, "used"), (0x60, 128, "free"), (0xe0, 256, "free")]
    return SimpleNamespace(blocks=blocks, structure={
        "kind": "ring", "sizes": {0x0: 32, 0x60: 128, 0xe0: 256}, "outside": [],
        "pointers": [{"name": "head", "addr": head, "role": "search"}],
        "free_list": [0xe0, 0x0, 0x60], "head": head})


def test_kruses_ring_says_why_not_in_its_words():
    """The three answers of why_not for a ring (predict's one account of a
    search, its ring words): a block examined and passed, one the search
    never reached, and one when the whole round found nothing."""
    before = kruse_ring(0x0)
    rec = record([ev.Visit(0x0, 32, False), ev.Visit(0x60, 128, True), ev.Split(0x60, 128, 0x60, 96, 0xc0, 32),
                  ev.Placed(0x60, 96, 0x68, 90)])
    why = ("Kruse's list searches first fit from its head (0x0), which rotated past the block used last time; "
           "the ring is in LIFO order, not address order: it examined 2 blocks (0x0 32 B, 0x60 128 B) and took "
           "0x60 (128 B), the first big enough for 96 B.")
    assert judge(1, 90, before, rec, 0x0, "rotating-list").reason == (
        "0x0 (32 B) is too small for 96 B: the search examined it 1st and went on round the ring. " + why)
    assert judge(1, 90, before, rec, 0xe0, "rotating-list").reason == (
        "0xe0 comes after 0x60 round the ring from the head (0x0): the search stops at the first block "
        "that fits. " + why)
    grew = record([ev.Visit(0x0, 32, False), ev.Visit(0x60, 128, False), ev.Visit(0xe0, 256, False),
                   ev.Grow(0x1f0, 4096), ev.Placed(0x1f0, 512, 0x1f8, 500)])
    reason = judge(1, 500, before, grew, 0x60, "rotating-list").reason
    assert reason.startswith("0x60 (128 B) is too small for 512 B: the search examined it 2nd and went on "
                             "round the ring. "), reason
    short = record([ev.Visit(0x0, 32, False), ev.Visit(0x60, 128, False), ev.Grow(0x1f0, 4096),
                    ev.Placed(0x1f0, 512, 0x1f8, 500)])
    for name, heap in (("rotating-list", before), ("first-fit", ring_heap(False))):
        reason = judge(1, 500, heap, short, 0xe0, name).reason
        assert reason.startswith("0xe0 (256 B) was not big enough either. "), (name, reason)
