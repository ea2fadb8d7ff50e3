"""Compare mode's jumps on a big trace, a row at a time (issue 25): the event
loop runs between the rows' restores, and every row moves at once."""

import pytest

from heapscope.allocators.replay import Timeline
from heapscope.gui import show_model

from .test_compare_mode import THREE, compare


@pytest.fixture
def staged(qtbot, loaded, monkeypatch):
    """The small trace in compare mode, its jumps made as a big trace's are."""
    monkeypatch.setattr(show_model, "STAGED_FROM_OPS", 0)
    compare(qtbot, loaded, THREE)
    return loaded


def heap_of(timeline) -> list:
    return list(timeline.strategy.walk_tuples())


def fresh(w, name: str, t: int):
    """The heap at ``t`` of a timeline of the same trace, built and seeked
    here: what every row must show."""
    tl = Timeline(w.trace, name, w.params_for(name)).build()
    tl.seek(t)
    return tl


def test_a_jump_moves_every_row_once_all_are_ready(qtbot, staged):
    w = staged
    model = w.model
    before = model.position
    assert abs(before - 400) > show_model.STEPWISE_MAX
    shown = []
    model.step_changed.connect(shown.append)
    w.seek(400)
    # nothing moved yet: the rows' heaps are made in turns of the event loop
    assert model.position == before and model.staging == 400 and shown == []
    assert all(model.timeline(r).position == before for r in range(3))
    qtbot.waitUntil(lambda: model.staging is None, timeout=10000)
    assert model.position == 400 and shown == [400]       # once, every row together
    for r, name in enumerate(THREE):
        tl = model.timeline(r)
        expected = fresh(w, name, 400)
        assert tl.position == 400 and heap_of(tl) == heap_of(expected)
        # the step's events, as a seek gives them, and the walked heap the map draws
        assert tl.last_record.events == expected.last_record.events
        step = model.step(r)
        assert list(zip(step.blocks.addr.tolist(), step.blocks.size.tolist())) == \
            [(a, s) for a, s, *_ in heap_of(expected)]


def test_a_second_jump_before_the_first_is_made_wins(qtbot, staged):
    w = staged
    model = w.model
    w.seek(100)
    w.seek(450)
    qtbot.waitUntil(lambda: model.staging is None, timeout=10000)
    assert model.position == 450
    for r, name in enumerate(THREE):
        assert heap_of(model.timeline(r)) == heap_of(fresh(w, name, 450))
    # and stepping on from there edits the rows as usual
    w.step_forward()
    assert model.position == 451 and model.staging is None
    for r, name in enumerate(THREE):
        assert heap_of(model.timeline(r)) == heap_of(fresh(w, name, 451))


def test_a_short_move_is_made_at_once(qtbot, staged):
    w = staged
    w.seek(200)
    qtbot.waitUntil(lambda: w.model.staging is None, timeout=10000)
    w.seek(210)
    assert w.model.position == 210 and w.model.staging is None


def test_a_long_timelines_ranking_is_summed_up_a_row_a_turn(qtbot, loaded, monkeypatch):
    from heapscope.allocators.metrics import summarize
    from heapscope.gui import compare_view
    monkeypatch.setattr(compare_view, "SUMMARY_LATER_FROM", 0)
    w = loaded
    table = w.compare.view.table
    compare(qtbot, w, THREE)
    qtbot.waitUntil(lambda: len(table.summaries) == 3, timeout=10000)
    w.seek(333)
    qtbot.waitUntil(lambda: w.model.staging is None, timeout=10000)
    qtbot.wait(10)
    for r, name in enumerate(THREE):
        expected = summarize(w.model.timeline(r).series.prefix(333))
        assert table.rows[name]["max_heap"] == expected["max_heap"]
        assert table.rows[name]["search_mean"] == expected["search_mean"]
    assert sorted(table.order) == sorted(THREE)


def test_a_jump_asked_at_once_is_made_at_once(qtbot, staged):
    """An export (a frame of a video) reads the step it asked for at once."""
    w = staged
    w.model.seek(380)
    w.model.seek(420, at_once=True)
    assert w.model.position == 420 and w.model.staging is None
    for r, name in enumerate(THREE):
        assert heap_of(w.model.timeline(r)) == heap_of(fresh(w, name, 420))
