"""Compare mode densifies its rows' timelines while the window is idle
(gui/background_densifier.py): in slices between events, so keys are served
meanwhile; stopped by leaving compare mode or opening another trace, with no
timer or process left behind; the rows then seek replaying less, showing
exactly their strategy's heap."""

import copy
import multiprocessing
import random

import pytest
from PySide6.QtCore import Qt

from heapscope import traces
from heapscope.allocators.registry import make_strategy
from heapscope.allocators.replay import MIN_CHECKPOINT_GAP, Program, Timeline, replay_ops

from .test_compare_mode import drawn_blocks, walk_at

THREE = ["next-fit", "tlsf", "buddy"]


@pytest.fixture(scope="module")
def long_trace():
    return traces.make_workload("vo1989", steps=20000, seed=3)


#: {(trace id, strategy): its timeline built once a module, never handed out
#: itself (the densifier adds to the timelines it is given)}
_BUILT: dict = {}


def built(trace, names):
    """Timelines of ``trace`` through ``names``, as just built: copies of one
    build a module (a build of the long trace is about 0.3-0.7 s of CPU a
    strategy, a copy 5 ms; replay is deterministic, so the copy is the heap,
    series and checkpoints a new build makes)."""
    out = []
    for n in names:
        key = (id(trace), n)
        if key not in _BUILT:
            _BUILT[key] = (trace, Timeline(trace, n).build())
        out.append(copy.deepcopy(_BUILT[key][1], {id(trace): trace}))
    return out


def walks_at(trace, name: str, steps) -> dict:
    """{t: strategy ``name``'s blocks after the first t operations of
    ``trace``} for every t of ``steps``, from one replay from scratch here
    (as :func:`walk_at` gives each, replaying from the start for each)."""
    strategy = make_strategy(name)
    program, done, out = Program(), 0, {}
    for t in sorted(set(steps)):
        replay_ops(strategy, program, trace.kind[done:t].tolist(), trace.ids[done:t].tolist(),
                   trace.sizes[done:t].tolist())
        done = t
        out[t] = [(b[0], b[1]) for b in strategy.walk_tuples()]
    return out


def show(window, trace, names, position=5000):
    window.compare.show_timelines(trace, built(trace, names), position, label="long")
    return [window.model.timeline(r) for r in range(len(names))]


def total_replayed(timelines, steps) -> int:
    for tl in timelines:
        tl.replayed_ops = 0
    for t in steps:
        for tl in timelines:
            tl.seek(t)
    return sum(tl.replayed_ops for tl in timelines)


def test_entering_compare_mode_densifies_every_row_in_slices(qtbot, window, long_trace):
    w = window
    rows = show(w, long_trace, THREE)
    densifier = w.compare.densifier
    before = [len(tl.checkpoints) for tl in rows]
    assert densifier.busy and len(densifier.jobs) == 3
    # a key press is served while the work goes on, between two slices
    qtbot.waitUntil(lambda: densifier.slices >= 2, timeout=10000)
    qtbot.keyClick(w, Qt.Key_Right)
    assert w.model.position == 5001
    with qtbot.waitSignal(densifier.finished, timeout=60000):
        pass
    assert not densifier.busy and densifier.slices > 3
    assert all(len(tl.checkpoints) > b for tl, b in zip(rows, before))
    assert densifier.added == sum(len(tl.checkpoints) - b for tl, b in zip(rows, before))
    # the rows seek replaying less than timelines of the same build spacing
    # without the extra points, and each shows its own strategy's heap
    plain = built(long_trace, THREE)
    rng = random.Random(4)
    steps = [rng.randrange(1, len(long_trace)) for _ in range(25)]
    assert 2 * total_replayed(rows, steps) < total_replayed(plain, steps)
    expected = {n: walks_at(long_trace, n, steps[:5]) for n in THREE}
    for t in steps[:5]:
        w.seek(t)
        assert [drawn_blocks(r) for r in w.compare.view.shown_rows()] == \
            [expected[n][t] for n in THREE]
    assert multiprocessing.active_children() == []


def test_leaving_compare_mode_stops_the_work(qtbot, window, long_trace):
    w = window
    rows = show(w, long_trace, THREE)
    densifier = w.compare.densifier
    qtbot.waitUntil(lambda: densifier.slices >= 1, timeout=10000)
    assert densifier.busy
    w.compare.leave()
    assert not w.compare.active and not densifier.busy and densifier.jobs == []
    counts = [len(tl.checkpoints) for tl in rows]
    slices = densifier.slices
    qtbot.wait(200)                       # the event loop runs: nothing more happens
    assert densifier.slices == slices and [len(tl.checkpoints) for tl in rows] == counts
    assert multiprocessing.active_children() == []
    # what was added stays right: the shown strategy seeks to its own heap
    w.seek(12345)
    assert [(b[0], b[1]) for b in w.timeline.strategy.walk_tuples()] == \
        walk_at(long_trace, w.timeline.strategy_name, 12345)


def test_another_trace_stops_the_work(qtbot, window, long_trace, small_trace_path):
    w = window
    show(w, long_trace, THREE)
    densifier = w.compare.densifier
    assert densifier.busy
    w.model.set_trace(traces.make_workload("vo1989", steps=300, seed=2))
    assert not densifier.busy and densifier.jobs == []
    show(w, long_trace, THREE)
    assert densifier.busy
    with qtbot.waitSignal(w.compare.changed, timeout=60000):
        w.open_trace(small_trace_path)
    # the new trace's rows start their own (short) work, never the old trace's
    assert all(job.timeline.trace is w.model.trace for job in densifier.jobs)
    qtbot.waitUntil(lambda: not densifier.busy, timeout=30000)


def test_fewer_rows_add_nothing_and_rows_no_longer_shown_drop_theirs(qtbot, window, long_trace,
                                                                      monkeypatch):
    """Three rows' points serve two of them: nothing is added; the row no
    longer shown drops its points (all together stay within the budget), and
    gets them again when it shows again, alone in the work."""
    # A seek-time target no replay reaches: spans are cut by the number of rows
    # alone.  With the default one, each plan follows the replay speed just
    # measured, and on a loaded machine a later plan could cut finer.
    from heapscope.allocators import denser_checkpoints
    monkeypatch.setattr(denser_checkpoints, "SEEK_REPLAY_SECONDS", 3600.0)
    w = window
    rows = show(w, long_trace, THREE)
    densifier = w.compare.densifier
    with qtbot.waitSignal(densifier.finished, timeout=60000):
        pass
    next_fit = rows[0]
    build = sorted(set(next_fit.checkpoint_steps) - next_fit.added_checkpoint_steps)
    assert next_fit.added_checkpoint_steps and cut_in(next_fit, build, 3)
    added = densifier.added
    w.compare.compare(["tlsf", "buddy"])
    assert not densifier.busy and densifier.added == added
    assert next_fit.added_checkpoint_steps == set() and next_fit.added_checkpoint_bytes == 0
    assert all(rows[r].added_checkpoint_steps for r in (1, 2))
    w.compare.compare(THREE)
    assert [job.timeline for job in densifier.jobs] == [next_fit]
    with qtbot.waitSignal(densifier.finished, timeout=60000):
        pass
    assert cut_in(next_fit, build, 3)
    dense = list(next_fit.checkpoint_steps)
    # leaving compare mode keeps them: coming back adds nothing
    w.compare.leave()
    assert next_fit.checkpoint_steps == dense
    w.compare.compare(THREE)
    assert not densifier.busy and next_fit.checkpoint_steps == dense


def cut_in(tl, build: list[int], k: int) -> bool:
    """Each span between the build's checkpoints ``build`` is cut in ``k``
    at least (in spans of MIN_CHECKPOINT_GAP steps when shorter); the cuts
    depend on the replay speed measured, so they may differ between runs."""
    for start, end in zip(build, build[1:] + [tl.n]):
        inside = [t for t in tl.checkpoint_steps if start <= t < end] + [end]
        parts = max(1, min(k, (end - start) // MIN_CHECKPOINT_GAP))
        if max(b - a for a, b in zip(inside, inside[1:])) > -(-(end - start) // parts):
            return False
    return True


def test_work_that_raises_drops_that_row_only(qtbot, window, long_trace):
    """A user strategy's code may raise in the replay: that row keeps what
    it has and seeks as before; the others are densified; nothing escapes."""
    w = window
    rows = show(w, long_trace, THREE)
    densifier = w.compare.densifier
    broken = densifier.jobs[0]
    before = list(broken.timeline.checkpoint_steps)

    def run(seconds):
        raise RuntimeError("a user strategy's mistake")

    broken.run = run
    with qtbot.waitSignal(densifier.finished, timeout=60000):
        pass
    assert [(name, str(exc)) for name, exc in densifier.failures] == \
        [(broken.timeline.strategy_name, "a user strategy's mistake")]
    assert broken.timeline.checkpoint_steps == before
    assert all(tl.added_checkpoint_steps for tl in rows if tl is not broken.timeline)
    w.seek(7777)
    assert [drawn_blocks(r) for r in w.compare.view.shown_rows()] == \
        [walk_at(long_trace, n, 7777) for n in THREE]
