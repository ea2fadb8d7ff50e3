"""Seek: the heap reached by seek(k) equals the heap reached by replaying ops 0..k
from scratch, forwards and backwards, for every strategy."""

from hypothesis import given, settings
from hypothesis import strategies as st
import pytest

from heapscope.allocators.registry import make_strategy, strategy_names
from heapscope.allocators.replay import Program, ReplayCancelled, Timeline, apply_op
from heapscope.traces import make_workload

TRACE = make_workload("vo1989", steps=400, seed=7)


def replayed_from_scratch(name: str, k: int):
    s = make_strategy(name)
    program = Program()
    for kind, ident, size in list(TRACE)[:k]:
        apply_op(s, program, kind, ident, size)
    return s, program


def noted_from_scratch(name: str, steps, note) -> dict:
    """``note(strategy, program)`` after the first ``k`` operations replayed
    from scratch, for each ``k`` in ``steps``: what
    :func:`replayed_from_scratch` gives at each, from one replay instead of
    one from the start per step (a test asking for a few steps each time
    replayed the trace over and over)."""
    wanted = set(steps)
    s = make_strategy(name)
    program = Program()
    notes = {0: note(s, program)} if 0 in wanted else {}
    for k, (kind, ident, size) in enumerate(list(TRACE)[:max(wanted)], 1):
        apply_op(s, program, kind, ident, size)
        if k in wanted:
            notes[k] = note(s, program)
    return notes


@pytest.fixture(scope="module", params=strategy_names())
def timeline(request):
    return Timeline(TRACE, request.param, checkpoint_every=37).build()


@settings(max_examples=25, deadline=None)
@given(ks=st.lists(st.integers(0, len(TRACE)), min_size=1, max_size=6))
def test_seek_matches_replay_from_scratch(timeline, ks):
    want = noted_from_scratch(timeline.strategy_name, ks, lambda s, p: (s.state_signature(), dict(p.live)))
    for k in ks:     # a random walk: forwards, backwards, repeats
        s = timeline.seek(k)
        signature, live = want[k]
        assert timeline.position == k
        assert s.state_signature() == signature
        assert timeline.program.live == live
        s.check()


def test_seek_keeps_the_events_of_the_shown_step_only(timeline):
    timeline.seek(150)
    rec = timeline.last_record
    assert rec is not None and rec.events is not None and len(rec.events) > 0
    assert timeline.describe().startswith("step 150: ")


def test_step_back_and_forward(timeline):
    timeline.seek(100)
    before = timeline.strategy.state_signature()
    timeline.step_forward()
    assert timeline.position == 101
    timeline.step_back()
    assert timeline.position == 100
    assert timeline.strategy.state_signature() == before


def test_measures_at_a_step_match_the_heap_there(timeline):
    for k in (1, 57, 200, len(TRACE)):
        s = timeline.seek(k)
        row = k - 1
        assert timeline.series.heap[row] == s.heap_size
        assert timeline.series.in_use[row] == sum(b.size for b in s.walk() if b.state == "used")
        assert timeline.series.free[row] == sum(b.size for b in s.walk() if b.free)


def test_cancelled_build_keeps_the_steps_done():
    trace = make_workload("vo1989", steps=6000, seed=1)
    tl = Timeline(trace, "next-fit")
    calls = []
    with pytest.raises(ReplayCancelled) as info:
        tl.build(progress=lambda d, n: calls.append(d), cancel=lambda: True)
    assert info.value.done == 4096 and tl.n == 4096
    assert tl.series.n == 4096
    tl.seek(4000)
    tl.strategy.check()


def test_progress_and_cancel_do_not_depend_on_the_checkpoint_interval():
    # An interval that does not divide 4096: progress must still come every 4096 steps.
    trace = make_workload("vo1989", steps=5000, seed=2)
    tl = Timeline(trace, "tlsf", checkpoint_every=1000)
    seen = []
    with pytest.raises(ReplayCancelled):
        tl.build(progress=lambda d, n: seen.append(d), cancel=lambda: len(seen) >= 2)
    assert seen == [4096, 8192] and tl.n == 8192
    tl.seek(8192)
    tl.strategy.check()


def test_steps_that_grew_the_heap_are_marked():
    trace = make_workload("vo1989", steps=300, seed=2)
    tl = Timeline(trace, "next-fit").build()
    grew = tl.series.grows.nonzero()[0]
    assert grew.size > 0
    for row in grew[:5]:
        before = tl.series.heap[row - 1] if row else 0
        assert tl.series.heap[row] > before
    assert (tl.series.heap[1:] > tl.series.heap[:-1]).sum() == (tl.series.grows[1:] > 0).sum()


@settings(max_examples=15, deadline=None)
@given(k=st.integers(1, len(TRACE)))
def test_before_is_the_heap_one_step_back_and_after_the_shown_one(timeline, k):
    timeline.seek(k)
    shown = timeline.strategy.state_signature()
    before = timeline.before()
    want = noted_from_scratch(timeline.strategy_name, (k - 1, k),
                              lambda s, p: (s.walk_tuples(), s.structure(), p.id_of_payload()))
    assert before.position == k - 1
    assert (before.blocks, before.structure, before.ids) == want[k - 1]
    # computed on a copy: the shown heap and position are untouched
    assert timeline.position == k and timeline.strategy.state_signature() == shown
    after = timeline.after()
    assert (after.position, after.blocks, after.structure, after.ids) == (k, *want[k])


def test_before_is_kept_while_the_position_stays_and_never_computed_by_seek(timeline, monkeypatch):
    timeline.seek(0)
    assert timeline.before() is None
    timeline.seek(120)
    first = timeline.before()
    assert timeline.before() is first             # asked again: not rebuilt
    timeline.seek(121)
    second = timeline.before()
    assert second is not first and second.position == 120
    assert second.blocks == timeline.state_at(120).blocks

    def refuse(t):
        raise AssertionError(f"seek computed the state at {t}")

    monkeypatch.setattr(timeline, "state_at", refuse)
    for t in (5, 300, 299, 300, 0, len(TRACE)):
        timeline.seek(t)
        timeline.step_back()
        timeline.step_forward()


def test_state_at_works_before_the_timeline_is_built():
    tl = Timeline(TRACE, "tlsf")
    tl.seek(40)
    ref, _ = replayed_from_scratch("tlsf", 39)
    assert tl.before().structure == ref.structure()
    with pytest.raises(IndexError):
        tl.state_at(len(TRACE) + 1)


def record_fields(rec):
    return (rec.kind, rec.request, rec.payload, rec.failed, rec.visits, rec.splits, rec.merges,
            rec.grows, rec.events)


def test_seeking_to_a_multiple_of_the_checkpoint_interval_shows_that_step(timeline):
    # At t = m * every the checkpoint at t holds the heap *after* step t, so seek
    # must restore the one before and replay step t with its events on: the
    # shown step is then what a replay from scratch did at step t.
    every = timeline.every
    multiples = list(range(every, timeline.n + 1, every))
    assert len(multiples) >= 3
    want = noted_from_scratch(timeline.strategy_name, multiples,
                              lambda s, p: (record_fields(s.rec), s.state_signature()))
    for t in multiples:
        fields, signature = want[t]
        for start in (timeline.n, 0):          # from far after and from before
            timeline.seek(start)
            timeline.seek(t)
            rec = timeline.last_record
            assert rec is not None, f"step {t} (from {start}) has no record"
            assert record_fields(rec) == fields, f"step {t} (from {start})"
            assert timeline.strategy.state_signature() == signature
            text = timeline.describe()
            assert text.startswith(f"step {t}: ")
            kind, payload = fields[0], fields[2]
            if kind == "malloc":
                assert f"-> 0x{payload:x}" in text
            else:
                assert f"free(0x{payload:x})" in text
