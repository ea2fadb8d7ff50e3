"""The window's one model of what is shown, and the views that subscribe to it:
every view updated once per step, computed once per step, closed views left
alone, timelines kept per strategy, costly redraws skipped while playing."""

import gc
import time

import pytest
import shiboken6
from PySide6.QtCore import QEvent, Qt
from PySide6.QtWidgets import QApplication

from heapscope import traces
from heapscope.allocators.replay import Timeline
from heapscope.gui.explain_panel import ExplainPanel
from heapscope.gui.heap_map import HeapMapWidget
from heapscope.gui.show_model import ShowModel, timeline_key
from heapscope.gui.structure_panel import StructurePanel
from heapscope.gui.subscriber import Subscriber

from .conftest import Counter, wait_loaded


@pytest.fixture
def count(loaded):
    """``Counter(obj, name)``, each method unwrapped after the test: a method
    left wrapped on an instance of the shared window's parts makes the next
    test's window anew (tests/gui/shared_window.py; issue 20)."""
    made = []

    def count(obj, name: str) -> Counter:
        made.append((obj, name))
        return Counter(obj, name)
    yield count
    for obj, name in reversed(made):
        if shiboken6.isValid(obj) and name in vars(obj):
            delattr(obj, name)


def drawing_counters(w, count) -> dict:
    """What each subscribed view does to draw a step."""
    return {
        "heap map": count(w.heap_map, "show_blocks"),
        "gauges": count(w.gauges, "show_measures"),
        "plots": count(w.plots, "set_position"),
        "timeline bar": count(w.bar, "show_position"),
        "explain panel": count(w.explain_panel, "show_events"),
        "structure view": count(w.structure_panel.view, "show_step"),
    }


def test_stepping_updates_every_subscriber_once_per_step(qtbot, loaded, count):
    w = loaded
    w.seek(100)
    steps = 7
    # the mouse rests on the map over a block free all along: its hover line
    # names where the structure keeps it, so the map reads structure() too
    fresh = Timeline(w.trace, "next-fit").build()
    free_all_along = None
    for t in range(100, 101 + steps):
        fresh.seek(t)
        free = {b.addr for b in fresh.strategy.walk() if b.state == "free"}
        free_all_along = free if free_all_along is None else free_all_along & free
    w.heap_map._mouse_moved(w.heap_map.scene_pos_of(min(free_all_along)))
    assert "in the free list" in w.heap_map.info.text()
    counters = drawing_counters(w, count)
    explains, structures = w.model.explain_calls, w.model.structure_calls
    for _ in range(steps):
        qtbot.keyClick(w, Qt.Key_Right)
    qtbot.wait(50)          # nothing arrives late either
    assert w.timeline.position == 107
    assert {name: len(c) for name, c in counters.items()} == {name: steps for name in counters}
    # explain_step() and structure() ran once per step, though two panels and
    # the map read them
    assert w.model.explain_calls - explains == steps
    assert w.model.structure_calls - structures == steps
    # every view shows the same, last step
    assert counters["timeline bar"].calls[-1][0] == 107
    assert counters["plots"].calls[-1][0] == 107
    assert w.explain_panel.title.text().startswith("Step 107:")
    assert "in the free list" in w.heap_map.info.text()


def test_seeking_to_the_shown_step_redraws_nothing(qtbot, loaded, count):
    loaded.seek(50)
    counters = drawing_counters(loaded, count)
    loaded.seek(50)
    assert all(len(c) == 0 for c in counters.values())


def test_a_closed_view_gets_no_more_updates_and_raises_nothing(qtbot, loaded, count):
    w = loaded
    w.seek(10)
    # a second map and explain panel on the same model, as compare mode will add
    extra_map, extra_explain = HeapMapWidget(), ExplainPanel()
    for v in (extra_map, extra_explain):
        qtbot.addWidget(v)
        v.show()
        v.bind(w.model)
    maps, explains = Counter(extra_map, "show_blocks"), Counter(extra_explain, "show_events")
    w.step_forward()
    assert (len(maps), len(explains)) == (1, 1)
    extra_map.close()
    extra_explain.close()
    assert extra_map.model is None and extra_explain.model is None
    structure = count(w.structure_panel.view, "show_step")
    w.structure_panel.close()
    for _ in range(3):
        w.step_forward()
    w.model.select(0)
    w.model.set_hover(0)
    w.model.set_event(1)
    assert (len(maps), len(explains), len(structure)) == (1, 1, 0)
    # the views still open kept following
    assert w.heap_map.selected == 0 and w.bar.step_box.value() == 14


def test_a_deleted_view_raises_nothing(qtbot, loaded):
    view = StructurePanel()
    view.bind(loaded.model)
    view.deleteLater()
    QApplication.sendPostedEvents(None, QEvent.DeferredDelete)
    del view
    gc.collect()
    loaded.step_forward()         # an exception in a slot would fail the test (pytest-qt)
    loaded.model.select(16)
    assert loaded.timeline.position == 1


def test_switching_back_to_a_strategy_replays_nothing(qtbot, loaded):
    w = loaded
    w.seek(300)
    first = w.timeline
    wait_loaded(qtbot, w, lambda: w.set_strategy("tlsf"))
    assert w.timeline.strategy_name == "tlsf" and w.timeline.position == 300
    w.seek(310)
    builds = []
    original = Timeline.build
    Timeline.build = lambda self, *a, **k: builds.append(self) or original(self, *a, **k)
    try:
        with qtbot.waitSignal(w.timeline_changed, timeout=1000):
            w.set_strategy("next-fit")
        assert not w.busy and builds == []
    finally:
        Timeline.build = original
    assert w.timeline is first and w.timeline.position == 310
    assert w.strategy_actions["next-fit"].isChecked()
    assert w.bar.description.text().startswith("step 310:")
    assert set(w.model.timelines()) == {timeline_key("next-fit"), timeline_key("tlsf")}


def test_a_new_trace_forgets_the_old_timelines(qtbot, loaded, tmp_path):
    wait_loaded(qtbot, loaded, lambda: loaded.set_strategy("buddy"))
    assert len(loaded.model.timelines()) == 2
    wait_loaded(qtbot, loaded, lambda: loaded.load_workload("vo1989", {"steps": 50}))
    assert list(loaded.model.timelines()) == [timeline_key("buddy")]
    assert loaded.timeline.n == 100


def test_while_playing_the_structure_view_may_skip_steps_but_draws_the_last(qtbot, loaded, count):
    w = loaded
    w.seek(200)
    qtbot.wait(200)     # longer than the play interval since the last redraw
    view = w.structure_panel.view
    draws = count(view, "show_step")
    w.model.playing = True
    t0 = time.perf_counter()
    for t in range(201, 221):
        w.seek(t)
    # at most one redraw a play interval (the seeks run without the event
    # loop, so on a loaded machine whole intervals may pass among them)
    intervals = int((time.perf_counter() - t0) * 1000 // Subscriber.PLAY_INTERVAL_MS)
    if intervals >= 19:
        pytest.skip("each seek took a whole play interval: too slow a machine to tell")
    assert len(draws) <= 1 + intervals
    qtbot.waitUntil(lambda: draws.calls and draws.calls[-1][1] == w.model.step().explained, timeout=2000)
    assert len(draws) <= 2 + intervals
    w.model.playing = False
    # what it was given last is the last step's structure
    assert draws.calls[-1][0] == w.timeline.strategy.structure()


def test_a_hidden_structure_view_costs_nothing_and_catches_up_when_shown(qtbot, loaded, count):
    w = loaded
    w.seek(20)
    w.act_structure.trigger()             # View > Structure View: hide it
    assert not w.structure_panel.isVisible() and not w.act_structure.isChecked()
    view = w.structure_panel.view
    draws = count(view, "show_step")
    before = w.model.structure_calls
    for _ in range(5):
        w.step_forward()
    assert len(draws) == 0 and w.model.structure_calls == before
    w.act_structure.trigger()
    assert w.structure_panel.isVisible()
    qtbot.waitUntil(lambda: len(draws) == 1, timeout=2000)
    assert draws.calls[0][0] == w.timeline.strategy.structure()
    assert w.model.structure_calls == before + 1


def test_the_panels_hide_show_and_give_their_room_to_the_map(qtbot, loaded):
    w = loaded
    map_height = w.heap_map.height()
    w.act_explain.trigger()
    qtbot.waitUntil(lambda: w.heap_map.height() > map_height)       # the map grows
    assert not w.explain_panel.isVisible() and not w.act_explain.isChecked()
    map_width = w.heap_map.width()
    w.act_structure.trigger()
    qtbot.waitUntil(lambda: w.heap_map.width() > map_width)
    assert not w.structure_panel.isVisible()
    w.act_explain.trigger()
    assert w.explain_panel.isVisible() and w.act_explain.isChecked()
    # dragged shut, a panel unticks its menu item; the item opens it again
    w.map_split.setSizes([sum(w.map_split.sizes()), 0])
    w.act_structure.trigger()
    assert w.structure_panel.isVisible() and w.map_split.sizes()[1] > 100
    w.left_split.moveSplitter(w.left_split.height(), 1)
    assert w.left_split.sizes()[1] == 0 and not w.act_explain.isChecked()
    w.act_explain.trigger()
    assert w.explain_panel.isVisible() and w.left_split.sizes()[1] > 100


# ------------------------------------------------------------- the model alone
@pytest.fixture(scope="module")
def two_timelines():
    trace = traces.make_workload("vo1989", steps=200, seed=4)
    return trace, Timeline(trace, "next-fit").build(), Timeline(trace, "tlsf").build()


def test_the_model_emits_each_change_once_and_nothing_for_no_change(qtbot, two_timelines):
    trace, nf, tl = two_timelines
    model = ShowModel()
    seen = []
    for name in ("trace_changed", "shown_changed", "step_changed", "event_changed",
                 "selection_changed", "hover_changed"):
        getattr(model, name).connect(lambda *a, name=name: seen.append((name,) + a))
    model.set_trace(trace, label="t")
    key = model.add_timeline(nf)
    model.show([key], 5)
    assert seen == [("trace_changed",), ("shown_changed",), ("step_changed", 0),
                    ("shown_changed",), ("step_changed", 5)]
    del seen[:]
    model.seek(5)
    model.select(None)
    model.set_event(None)
    assert seen == []
    model.seek(10_000)                   # clamped to n
    model.select(64)
    model.select(64)
    model.set_hover(-1)
    model.set_event(2)
    assert seen == [("step_changed", 400), ("selection_changed", 64), ("event_changed", 2)]
    assert model.position == 400 and model.step().record is nf.last_record


def test_the_model_shows_the_events_of_the_last_step_after_a_build(qtbot, two_timelines):
    # A timeline may be left at its end with the last step's events off (a
    # build replays that step with its events now, but the model must not
    # count on it); the shown step must still have its events for the
    # explain panel.
    trace = traces.make_workload("vo1989", steps=30, seed=2)
    timeline = Timeline(trace, "next-fit").build()
    assert timeline.last_record.events
    timeline.last_record.events = None
    model = ShowModel()
    model.set_trace(trace)
    model.show([model.add_timeline(timeline)], timeline.n)
    assert model.step().record.events
    assert model.step().explained


def test_the_model_refuses_a_timeline_of_another_trace(qtbot, two_timelines):
    trace, nf, _ = two_timelines
    model = ShowModel()
    model.set_trace(traces.make_workload("vo1989", steps=10, seed=1))
    with pytest.raises(ValueError):
        model.add_timeline(nf)
    with pytest.raises(KeyError):
        model.show([timeline_key("next-fit")])


def test_several_rows_share_the_position(qtbot, two_timelines):
    trace, nf, tl = two_timelines
    model = ShowModel()
    model.set_trace(trace)
    keys = [model.add_timeline(nf), model.add_timeline(tl)]
    model.show(keys, 123)
    assert [model.step(r).strategy_name for r in (0, 1)] == ["next-fit", "tlsf"]
    assert nf.position == tl.position == 123
    model.seek(124)
    assert nf.position == tl.position == 124
    assert model.step(2) is None


def test_the_shown_timelines_share_one_step_back_memory_bound():
    """Each timeline keeps copies of its heap for stepping back (a step-back
    cache, bounded in bytes): the model divides one bound between the rows
    it shows, and a timeline it stops showing drops its copies."""
    from heapscope.allocators.replay import BACK_CACHE_BYTES
    trace = traces.make_workload("vo1989", steps=1500, seed=2)
    model = ShowModel()
    model.set_trace(trace)
    keys = [model.add_timeline(Timeline(trace, name, checkpoint_every=1000).build())
            for name in ("next-fit", "tlsf", "buddy")]
    model.show(keys[:2], 1900)
    for t in range(1899, 1880, -1):
        model.seek(t)
    caches = [model._timelines[k].back_cache for k in keys]
    assert [c.max_bytes for c in caches[:2]] == [BACK_CACHE_BYTES // 2] * 2
    assert len(caches[0]) and len(caches[1]) and not len(caches[2])
    model.show([keys[2]])
    assert caches[2].max_bytes == BACK_CACHE_BYTES
    assert not len(caches[0]) and not len(caches[1])
