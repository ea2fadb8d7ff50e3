"""Denser checkpoints after the build (allocators/denser_checkpoints.py): a
seek gives exactly the heap it gives without them (every attribute of the
state, the walk, the structure, the measures, the shown step's record), and
replays less; the points added keep within their byte budget; the work can
stop anywhere and the timeline stays right."""

import random

import pytest

from heapscope import traces
from heapscope.allocators import plugins
from heapscope.allocators.denser_checkpoints import Densifier
from heapscope.allocators.registry import strategy_names
from heapscope.allocators.replay import MIN_CHECKPOINT_GAP, BackCache, Timeline
from heapscope.traces import default_trace_path, read_rep

from .test_step_back import (EXAMPLES, forward, plain_states, random_trace, state_of,
                             strategy_and_params_pairs)
from tests.depth import pick, some_in_quick


def built(trace, name, params=None, every=None, checkpoints=True) -> Timeline:
    """A built timeline whose seeks always restore a checkpoint (no step-back copies)."""
    tl = Timeline(trace, name, params, checkpoint_every=every, checkpoints=checkpoints).build()
    tl.back_cache = BackCache(states=0)
    return tl


def same_seeks(tl: Timeline, ref: Timeline, steps) -> None:
    """Seek both to each step; the whole state must be equal after each."""
    for t in steps:
        tl.seek(t)
        ref.seek(t)
        got, want = state_of(tl), state_of(ref)
        for part in want:
            assert got[part] == want[part], f"{tl.strategy_name} at {t}: {part} differs"


def plain_seeks(tl: Timeline, ref: Timeline, steps) -> None:
    """Seek ``tl`` to each step; its whole state must equal the plain
    timeline ``ref``'s there (:func:`~tests.test_step_back.forward`: never
    built, no checkpoints, each heap replayed from the start in one pass
    forward over the steps, :func:`~tests.test_step_back.plain_states`)."""
    wanted = plain_states(ref, steps)
    for t in steps:
        tl.seek(t)
        got, want = state_of(tl), wanted[t]
        for part in want:
            assert got[part] == want[part], f"{tl.strategy_name} at {t}: {part} differs"


def replays_without_cache(checkpoint_steps, n: int, steps) -> int:
    """The operations a built timeline standing at its end, with checkpoints
    at ``checkpoint_steps`` and a step-back cache that keeps nothing,
    replays seeking to each of ``steps`` in turn (derived from
    :meth:`Timeline.seek`'s rule, not measured: the heap before the shown
    step comes from where it stands if that is at or after the last
    checkpoint at or before it, else from that checkpoint; then the shown
    step itself).  What the timeline of the same build without the denser
    checkpoints replays, without replaying it."""
    from bisect import bisect_right
    position, total = n, 0
    for t in steps:
        if t == position:
            continue
        target = t - 1 if t else 0
        k = bisect_right(checkpoint_steps, target) - 1
        checkpoint = checkpoint_steps[k] if k >= 0 else 0
        if not checkpoint <= position <= target:
            position = checkpoint
        total += target - position + (1 if t else 0)
        position = t
    return total


def jumps(n: int, seed: int, count: int = 60) -> list[int]:
    rng = random.Random(seed)
    return [rng.randint(0, n) for _ in range(count)] + [n, 0, 1, n - 1]


def by_share(tl: Timeline, share: int) -> Densifier:
    """A densifier whose seek-time target no replay here reaches, so that the
    spans are cut by ``share`` alone: with the default target a loaded
    machine's slower replay cut them finer, and the counts below varied."""
    return Densifier(tl, share, seconds=3600)


def spans(tl: Timeline) -> list[int]:
    steps = tl.checkpoint_steps
    return [b - a for a, b in zip(steps, steps[1:] + [tl.n])]


@pytest.mark.parametrize("name, params",
                         strategy_and_params_pairs([{}, {"pool_size": 60_000}, {"heap_limit": 50_000}]))
def test_a_densified_timeline_seeks_to_the_same_heaps_replaying_less(name, params):
    trace = random_trace(3, n=1500)
    tl = built(trace, name, params, every=600)
    # the build's own checkpoints, noted before the densifier adds to them
    # (the same as a second build's: checkpoints every 600 steps)
    build_steps, build_bytes = list(tl.checkpoint_steps), sum(map(len, tl.checkpoints))
    job = by_share(tl, 4).run_all()
    assert job.done and job.added > 0 and not job.bounded
    assert tl.added_checkpoint_bytes == job.bytes == sum(map(len, tl.checkpoints)) - build_bytes
    assert tl.checkpoint_steps == sorted(set(tl.checkpoint_steps))
    assert max(spans(tl)) <= max(MIN_CHECKPOINT_GAP, 600 // 4)
    assert job.gap == 150
    # the quick suite seeks to 20 random steps (and the four ends), the deep one to 60
    steps = jumps(tl.n, 7, count=pick(20, 60))
    tl.replayed_ops = 0
    plain_seeks(tl, forward(trace, name, params), steps)
    assert tl.replayed_ops * 2 < replays_without_cache(build_steps, tl.n, steps), \
        "the denser checkpoints were not used"


@pytest.fixture(scope="module")
def default_trace():
    return read_rep(default_trace_path())


@pytest.mark.parametrize("name", some_in_quick(["next-fit", "splay-best-fit", "buddy", "tlsf", "dlmalloc"], every=2))
def test_seven_rows_replay_a_seventh_on_the_bundled_trace(default_trace, name):
    """Adaptive checkpoints as the window builds them; densified for seven
    rows, each span the build left is cut in seven (or in spans of
    MIN_CHECKPOINT_GAP steps); the reference's checkpoints, spaced by time,
    may fall elsewhere."""
    tl, ref = built(default_trace, name), built(default_trace, name)
    own = list(tl.checkpoint_steps)
    tl.densify(share=7).run_all()
    for start, end in zip(own, own[1:] + [tl.n]):
        inside = [t for t in tl.checkpoint_steps if start <= t < end] + [end]
        longest = max(b - a for a, b in zip(inside, inside[1:]))
        parts = max(1, min(7, (end - start) // MIN_CHECKPOINT_GAP))
        assert longest <= -(-(end - start) // parts), (start, end)
    steps = jumps(tl.n, 11, count=pick(15, 40))
    tl.replayed_ops = 0
    plain_seeks(tl, forward(default_trace, name), steps)
    assert tl.replayed_ops * 3 < replays_without_cache(ref.checkpoint_steps, ref.n, steps)


def test_stopped_halfway_it_is_still_right():
    """Slices of no time at all: one chunk or one checkpoint each; every
    state in between seeks right, and the points come in order of steps."""
    trace = random_trace(5, n=1500)
    tl, ref = built(trace, "tlsf", every=700), built(trace, "tlsf", every=700)
    job = tl.densify(share=5)
    slices = 0
    while not job.run(0):
        slices += 1
        if slices % 3 == 0:
            same_seeks(tl, ref, jumps(tl.n, slices, count=3))
    assert slices > job.added > 3


def test_a_timeline_without_checkpoints_gets_them_from_a_fresh_heap():
    trace = random_trace(9, n=900)
    tl, ref = built(trace, "next-fit", checkpoints=False), built(trace, "next-fit", checkpoints=False)
    assert tl.checkpoint_steps == []
    tl.densify(share=3).run_all()
    assert tl.checkpoint_steps and tl.checkpoint_steps[0] > 0
    tl.replayed_ops = ref.replayed_ops = 0
    same_seeks(tl, ref, jumps(tl.n, 2, count=30))
    assert tl.replayed_ops * 2 < ref.replayed_ops


def test_the_byte_budget_widens_the_gap_and_is_never_passed():
    trace = random_trace(4, n=2000)
    free = built(trace, "dlmalloc", every=1000).densify(share=8).run_all()
    tl, ref = built(trace, "dlmalloc", every=1000), built(trace, "dlmalloc", every=1000)
    budget = free.bytes // 3
    job = tl.densify(share=8, max_bytes=budget).run_all()
    assert job.gap > free.gap
    assert 0 < tl.added_checkpoint_bytes <= budget
    same_seeks(tl, ref, jumps(tl.n, 4, count=30))
    # densifying again for more rows adds nothing past the same budget
    again = tl.densify(share=16, max_bytes=budget).run_all()
    assert tl.added_checkpoint_bytes <= budget and (again.bounded or again.added == 0)
    none = built(trace, "dlmalloc", every=1000).densify(share=8, max_bytes=0)
    assert none.done and none.bounded and none.added == 0


def test_the_bound_holds_when_the_heap_outgrows_its_estimate():
    """The estimate takes each span's first checkpoint as the size of its
    points; a heap that grows along the span makes them bigger: the last
    point that fits is kept and the work stops there."""
    ops = [("a", i, 64) for i in range(3000)]      # the heap only grows
    trace = traces.Trace.from_ops(ops)
    tl = built(trace, "next-fit", every=3000)      # one checkpoint: the empty heap
    free = built(trace, "next-fit", every=3000)
    Densifier(free, share=10, max_bytes=1 << 30, seconds=1e6).run_all()
    sizes = free.checkpoints
    budget = len(sizes[1]) + len(sizes[2]) + 1       # the points at 300 and 600 steps
    # no time limit: the gap is the span's tenth
    job = Densifier(tl, share=10, max_bytes=budget, seconds=1e6)
    assert job.gap == 300 and not job.bounded       # nine points of an empty heap would fit
    job.run_all()
    assert job.bounded and job.added == 2 and tl.added_checkpoint_bytes <= budget
    assert tl.checkpoint_steps == [0, 300, 600]
    ref = built(trace, "next-fit", every=3000)
    same_seeks(tl, ref, jumps(tl.n, 1, count=20))


def test_a_span_of_a_big_heap_is_not_cut(monkeypatch):
    """Restoring and pickling a big heap's checkpoint cannot be split into
    slices: spans whose checkpoint is over MAX_CUT_CHECKPOINT get no points."""
    from heapscope.allocators import denser_checkpoints
    trace = traces.Trace.from_ops([("a", i, 64) for i in range(3000)])     # the heap only grows
    tl = built(trace, "next-fit", every=1000)
    monkeypatch.setattr(denser_checkpoints, "MAX_CUT_CHECKPOINT", len(tl.checkpoints[1]) - 1)
    job = by_share(tl, 4).run_all()
    assert job.added == 3 and sorted(tl.added_checkpoint_steps) == [250, 500, 750]
    same_seeks(tl, built(trace, "next-fit", every=1000), jumps(tl.n, 3, count=10))


def test_densifying_again_for_as_many_rows_adds_nothing():
    trace = random_trace(6, n=1200)
    tl = built(trace, "buddy", every=600)
    by_share(tl, 4).run_all()
    steps = list(tl.checkpoint_steps)
    again = by_share(tl, 4)
    assert again.run_all().added == 0 and tl.checkpoint_steps == steps


def test_dropping_the_added_checkpoints_leaves_the_builds():
    trace = random_trace(10, n=1200)
    tl, ref = built(trace, "next-fit", every=600), built(trace, "next-fit", every=600)
    lists = (tl.checkpoints, tl.checkpoint_steps)
    by_share(tl, 4).run_all()
    assert tl.checkpoint_steps != ref.checkpoint_steps
    tl.drop_added_checkpoints()
    assert (tl.checkpoints, tl.checkpoint_steps) == (ref.checkpoints, ref.checkpoint_steps)
    assert lists == (tl.checkpoints, tl.checkpoint_steps) and lists[0] is tl.checkpoints   # in place
    assert tl.added_checkpoint_bytes == 0 and not tl.added_checkpoint_steps
    same_seeks(tl, ref, jumps(tl.n, 10, count=20))


def test_a_rebuild_stops_the_work():
    trace = random_trace(8, n=1200)
    tl = built(trace, "tlsf", every=600)
    job = tl.densify(share=6)
    job.run(0)
    tl.build()
    assert job.done
    ref = built(trace, "tlsf", every=600)
    assert tl.checkpoint_steps == ref.checkpoint_steps


def test_a_user_strategy_is_densified_through_its_pickles():
    plugins.load_file(f"{EXAMPLES / 'segfit.py'}:SegFit")
    try:
        trace = random_trace(7, n=1200)
        tl, ref = built(trace, "segfit", every=600), built(trace, "segfit", every=600)
        assert tl.densify(share=5).run_all().added > 0
        same_seeks(tl, ref, jumps(tl.n, 5, count=30))
    finally:
        plugins.forget("segfit")


def test_the_densifier_is_the_timelines():
    tl = built(random_trace(1), "next-fit", every=200)
    assert isinstance(tl.densify(2), Densifier)
