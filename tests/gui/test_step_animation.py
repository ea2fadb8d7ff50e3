"""Animated steps and micro-steps (gui/step_animator.py, the structure views'
transitions): every animated event kind ends on the static drawing of the
step and leaves nothing running; a key or a click cuts an animation short and
then acts; micro-steps walk every event of a step and back; stepping back and
fast speeds never animate; the player waits for a step's events; frames for
export come out the same on every run."""

import pytest
from PySide6.QtCore import QAbstractAnimation, Qt

from heapscope import traces
from heapscope.allocators import events as ev
from heapscope.allocators.replay import Timeline
from heapscope.gui.show_model import ShowModel
from heapscope.gui.step_animator import MAX_ANIMATED_SPEED, plan, step_frames
from heapscope.gui.structure_views import view_for
from tests.depth import some_in_quick

#: how long each test transition lasts (ms): it is caught running as it starts
#: (nothing runs between the start and that look), then waited for to end on
#: its clock: 30 ms is two of Qt's animation ticks
MOVE_MS = 30


@pytest.fixture(scope="module")
def trace():
    return traces.make_workload("vo1989", steps=500, seed=11)


_timelines = {}


def model_at(trace, strategy, kind, start=20, at_least=1):
    """A model showing the first step from ``start`` with an event of type
    ``kind`` (at least ``at_least`` of them) after its first event."""
    key = strategy
    # the module's trace fixture is made again when a worker comes back to
    # this module after another (xdist's worksteal): a timeline of the old
    # trace object is refused by the model ("replays another trace")
    if key not in _timelines or _timelines[key].trace is not trace:
        _timelines[key] = Timeline(trace, strategy).build()
    model = ShowModel()
    model.set_trace(trace)
    model.show([model.add_timeline(_timelines[key])], start)
    cls = getattr(ev, kind)
    for t in range(start, model.n + 1):
        model.seek(t)
        events = model.step().record.events
        # (a join that empties the tree changes nothing drawn)
        if sum(isinstance(e, cls) and getattr(e, "root", 0) is not None for e in events[1:]) >= at_least:
            return model
    raise AssertionError(f"no {kind} step in {strategy}")


def make_view(qtbot, kind, width=900, height=700):
    view = view_for(kind)()
    qtbot.addWidget(view)
    view.setAttribute(Qt.WA_ShowWithoutActivating)     # the window keeps the keys
    view.resize(width, height)
    view.show()
    qtbot.waitExposed(view)
    return view


def shown(view, step, index=None):
    view.set_states(step.structure_at)
    view.show_step(step.structure, step.explained, step.record)
    if index is not None:
        view.set_current_event(index)
    return view


def nothing_runs(view) -> bool:
    """No transition of the view and no Qt animation under it is running."""
    running = [a for a in view.findChildren(QAbstractAnimation) if a.state() == QAbstractAnimation.Running]
    return not running and (view.transition is None or not view.transition.running)


ANIMATED = [
    ("next-fit", "Visit"), ("next-fit", "Split"), ("next-fit", "Coalesce"), ("next-fit", "Grow"),
    ("next-fit", "PointerMove"), ("next-fit", "ListInsert"), ("next-fit", "ListRemove"),
    ("first-fit", "Visit"),
    ("rotating-list", "PointerMove"), ("rotating-list", "ListRemove"), ("rotating-list", "ListInsert"),
    ("splay-best-fit", "Rotation"), ("splay-best-fit", "TreeJoin"), ("splay-best-fit", "TreeInsert"),
    ("splay-best-fit", "TreeRemove"),
    ("buddy", "BuddySplit"), ("buddy", "BuddyMerge"), ("buddy", "ListInsert"),
    # (TLSF's MappingSearch is a step's first event, shown as the step starts;
    # the bitmap scan after it is what moves)
    ("tlsf", "BitmapProbe"), ("tlsf", "ListInsert"), ("tlsf", "ListRemove"),
    ("bsd-buckets", "BucketRefill"), ("bsd-buckets", "ListRemove"), ("bsd-buckets", "ListInsert"),
]


@pytest.mark.parametrize("strategy, kind", some_in_quick(ANIMATED, every=3))
def test_an_animated_step_ends_on_the_static_drawing_and_leaves_nothing_running(qtbot, trace, strategy, kind):
    model = model_at(trace, strategy, kind)
    step = model.step()
    events = step.record.events
    kind_type = getattr(ev, kind)
    animated = shown(make_view(qtbot, step.structure["kind"]), step, 0)
    moved = 0
    # a structure view shows new memory when it joins the structure, at an
    # event after the Grow (the heap map shows the Grow itself)
    grown = False
    previous = animated.drawn()
    for i in range(1, len(events)):
        animated.set_current_event(i, MOVE_MS)
        tr = animated.transition
        ran = tr is not None and tr.running
        qtbot.waitUntil(lambda: nothing_runs(animated), timeout=3000)
        # each event ends where a view simply shown that event is
        still = shown(make_view(qtbot, step.structure["kind"]), step, i)
        drawn = still.drawn()
        assert animated.drawn() == drawn, f"event {i} ({type(events[i]).__name__})"
        still.close()
        is_kind = isinstance(events[i], kind_type)
        grown = grown or (is_kind and kind == "Grow")
        if drawn != previous and (is_kind or grown):
            # the event of this kind changed the drawing: it was moved to, not jumped to
            assert ran, f"{kind} at event {i} did not animate"
            moved += 1
            grown = False
        previous = drawn
    assert moved >= 1
    # the end of the animation is the static drawing of the whole step
    static = shown(make_view(qtbot, step.structure["kind"]), step)
    assert animated.drawn() == static.drawn()
    animated.set_current_event(None)
    assert animated.drawn() == static.drawn()
    assert nothing_runs(animated)


def midway(view, index):
    """Start a transition to ``index`` and stop it half way."""
    view.manual_transitions = True
    view.set_current_event(index, 400)
    tr = view.transition
    assert tr is not None
    tr.seek(200)
    return tr


def test_a_rotation_moves_nodes_only_up_or_down(qtbot, trace):
    model = model_at(trace, "splay-best-fit", "Rotation")
    step = model.step()
    i = next(i for i, e in enumerate(step.record.events) if i and isinstance(e, ev.Rotation))
    view = shown(make_view(qtbot, "tree"), step, i - 1)
    before = view.drawn()["y"]
    tr = midway(view, i)
    moved = [(item, a, b) for item, a, b, _ in tr.morph.moves if a.y() != b.y()]
    assert moved, "no node changed depth"
    for item, a, b in moved:
        assert a.x() == b.x(), "a node left its in-order column"
        assert min(a.y(), b.y()) < item.pos().y() < max(a.y(), b.y()), "not gliding"
    event = step.record.events[i]
    tr.finish()
    after = view.drawn()["y"]
    assert after[event.addr] < before[event.addr]          # the node rose
    assert nothing_runs(view)


def test_the_rover_slides_to_its_new_node(qtbot, trace):
    from heapscope.gui.structure_views.canvas import Pointer
    model = model_at(trace, "next-fit", "PointerMove")
    step = model.step()
    i = next(i for i, e in enumerate(step.record.events)
             if i and isinstance(e, ev.PointerMove) and e.old != e.new)
    view = shown(make_view(qtbot, "address-ring"), step, i - 1)
    pointer_y = lambda: next(p.pos().y() for p in view._transient if isinstance(p, Pointer) and not p.faint)  # noqa: E731
    y0 = pointer_y()
    tr = midway(view, i)
    y_mid = pointer_y()
    tr.finish()
    y1 = pointer_y()
    assert y0 != y1 and min(y0, y1) < y_mid < max(y0, y1)
    new = step.record.events[i].new
    assert view.drawn()["pointer"] == ("base" if new is None else new)


def test_a_buddy_split_brings_its_halves_down_one_band(qtbot, trace):
    model = model_at(trace, "buddy", "BuddySplit")
    step = model.step()
    i = next(i for i, e in enumerate(step.record.events) if i and isinstance(e, ev.BuddySplit))
    e = step.record.events[i]
    view = shown(make_view(qtbot, "buddy", 1500), step, i - 1)
    assert (e.buddy, e.order - 1) not in {b[:2] for b in view.drawn()["focus_blocks"]}
    tr = midway(view, i)
    half = view._blocks[(e.buddy, e.order - 1)]
    start, end = next((a, b) for item, a, b, _ in tr.morph.moves if item is half)
    assert end.y() - start.y() > 0 and start.y() < half.pos().y() < end.y()
    assert 0 < half.opacity() < 1
    tr.finish()
    assert (e.buddy, e.order - 1, "free") in view.drawn()["focus_blocks"]


def test_the_tlsf_scan_walks_bit_by_bit(qtbot, trace):
    from heapscope.gui.structure_views.tlsf_view import ScanItem
    model = model_at(trace, "tlsf", "BitmapProbe")
    step = model.step()
    # a probe whose band covers several bits
    view = shown(make_view(qtbot, "tlsf"), step)
    long = [n for n in view._notes if isinstance(n, ScanItem) and n.bits() > 1]
    if not long:
        pytest.skip("no probe of several bits in this step")
    number = long[0].number
    i = [k for k, e in enumerate(step.record.events) if isinstance(e, ev.BitmapProbe)][number - 1]
    view.set_current_event(i - 1)
    tr = midway(view, i)
    scan = next(n for n in view._notes if isinstance(n, ScanItem) and n.number == number)
    shown_rect, band = scan.shown_band(), scan.band
    assert 0 < (shown_rect.width() * shown_rect.height()) < band.width() * band.height()
    tr.finish()
    assert scan.shown_band() == band


def test_a_refill_fills_its_column_block_after_block(qtbot, trace):
    model = model_at(trace, "bsd-buckets", "BucketRefill")
    step = model.step()
    i = next(i for i, e in enumerate(step.record.events) if isinstance(e, ev.BucketRefill))
    view = shown(make_view(qtbot, "buckets"), step, i - 1)
    view.manual_transitions = True
    view.set_current_event(i, 400)
    tr = view.transition
    new = sorted((c for c in view._cards.values() if c.role == "new"), key=lambda c: c.pos().y())
    assert len(new) >= 2
    tr.seek(100)
    # the top block is on its way in while the last has not started
    assert new[0].opacity() > 0 and new[-1].opacity() == 0
    tr.finish()
    assert all(c.opacity() == 1 for c in new)


# ------------------------------------------------------------ the window

@pytest.fixture
def slow(qtbot, loaded):
    """The window at 1 step per second, on a step whose successor searches."""
    w = loaded
    w.player.set_speed(1)
    assert w.animator.animates
    t = 60
    nxt = Timeline(w.trace, "next-fit").build()
    while True:
        w.seek(t)
        nxt.seek(t + 1)
        if len(nxt.last_record.events) >= 3:
            break
        t += 1
    return w


def static_drawing(qtbot, w, index=None):
    step = w.model.step()
    view = shown(make_view(qtbot, step.structure["kind"], w.structure_panel.view.width(),
                           w.structure_panel.view.height()), step, index)
    d = view.drawn()
    view.close()
    w.activateWindow()
    w.heap_map.plot_widget.setFocus()
    return d


def every_event_at_the_fastest_animated_speed(w):
    """The window at MAX_ANIMATED_SPEED, where the next step's script still
    shows each of its events (no run of looks thinned): a test that waits
    for a whole script waits a quarter of 1 step/s's time for it."""
    w.player.set_speed(MAX_ANIMATED_SPEED)
    assert w.animator.animates
    nxt = Timeline(w.trace, w.strategy_name).build()
    nxt.seek(w.model.position + 1)
    events = nxt.last_record.events
    assert len(plan(events, MAX_ANIMATED_SPEED)) == len(events) >= 3


def test_a_step_forward_plays_its_events_and_ends_on_the_whole_step(qtbot, slow):
    w = slow
    every_event_at_the_fastest_animated_speed(w)
    p = w.model.position
    seen = []
    w.model.event_changed.connect(seen.append)
    qtbot.keyClick(w, Qt.Key_Right)
    assert w.animator.running and w.model.position == p + 1 and w.model.event_index == 0
    assert w.bar.event_text() == f"event 1 of {w.model.step().event_count}"
    qtbot.waitUntil(lambda: not w.animator.running, timeout=15000)
    n = w.model.step().event_count
    assert seen == list(range(n)) + [None]
    assert w.model.event_index is None and w.bar.event_text() == ""
    qtbot.waitUntil(lambda: nothing_runs(w.structure_panel.view), timeout=2000)
    assert w.structure_panel.view.drawn() == static_drawing(qtbot, w)


def test_a_key_press_during_an_animation_finishes_it_and_then_acts(qtbot, slow):
    w = slow
    p = w.model.position
    qtbot.keyClick(w, Qt.Key_Right)
    assert w.animator.running and w.model.event_index == 0
    qtbot.keyClick(w, Qt.Key_Left)          # cut short, then back one step
    assert not w.animator.running and w.player.held is False
    assert w.model.position == p and w.model.event_index is None
    assert nothing_runs(w.structure_panel.view)
    assert w.structure_panel.view.drawn() == static_drawing(qtbot, w)
    # a Right during the animation: the step ends at once, and the next one starts
    qtbot.keyClick(w, Qt.Key_Right)
    qtbot.waitUntil(lambda: w.model.event_index not in (None, 0), timeout=5000)
    qtbot.keyClick(w, Qt.Key_Right)
    assert w.model.position == p + 2 and w.model.event_index == 0 and w.animator.running
    # a Shift press alone (the start of Shift+Right) does not cut it
    qtbot.keyPress(w, Qt.Key_Shift)
    assert w.animator.running
    qtbot.keyRelease(w, Qt.Key_Shift)
    qtbot.keyClick(w, Qt.Key_Space)          # cut short, then play
    assert w.model.event_index is None and w.player.playing
    w.player.pause()


def test_a_click_during_an_animation_finishes_it_and_then_acts(qtbot, slow):
    w = slow
    qtbot.keyClick(w, Qt.Key_Right)
    assert w.animator.running
    step = w.model.step()
    placed = next(e for e in step.record.events if isinstance(e, (ev.Placed, ev.Released)))
    vp = w.heap_map.plot_widget.viewport()
    scene_pos = w.heap_map.scene_pos_of(placed.addr + placed.size // 2)
    pos = w.heap_map.plot_widget.mapFromScene(scene_pos)
    qtbot.mouseClick(vp, Qt.LeftButton, pos=pos)
    assert not w.animator.running and w.model.event_index is None
    assert nothing_runs(w.structure_panel.view)
    assert w.model.selection == placed.addr          # and the click selected the block


def test_stepping_back_shows_the_step_before_as_it_stands(qtbot, slow):
    w = slow
    changes = []
    w.model.event_changed.connect(changes.append)
    qtbot.keyClick(w, Qt.Key_Left)
    assert not w.animator.running and changes == [] and w.model.event_index is None
    assert nothing_runs(w.structure_panel.view)
    assert w.structure_panel.view.drawn() == static_drawing(qtbot, w)


def test_above_the_speed_threshold_steps_jump(qtbot, slow):
    w = slow
    w.player.set_speed(5)
    assert 5 > MAX_ANIMATED_SPEED and not w.animator.animates
    changes = []
    w.model.event_changed.connect(changes.append)
    p = w.model.position
    qtbot.keyClick(w, Qt.Key_Right)
    assert w.model.position == p + 1
    assert not w.animator.running and changes == [] and w.model.event_index is None
    assert nothing_runs(w.structure_panel.view)
    # playing fast: no step plays its events either
    w.player.set_speed(50)
    w.player.play()
    qtbot.waitUntil(lambda: w.model.position >= p + 5, timeout=5000)
    w.player.pause()
    assert changes == [] and not w.animator.running


def test_speeding_up_during_an_animation_cuts_it_short(qtbot, slow):
    w = slow
    qtbot.keyClick(w, Qt.Key_Right)
    assert w.animator.running
    w.player.set_speed(100)
    assert not w.animator.running and w.model.event_index is None


def test_micro_steps_visit_every_event_in_order_and_back(qtbot, slow):
    w = slow
    w.player.set_speed(10)         # micro-steps move at any speed
    p = w.model.position
    nxt = Timeline(w.trace, "next-fit").build()
    nxt.seek(p + 1)
    n = len(nxt.last_record.events)
    visited = []
    for _ in range(n + 1):
        qtbot.keyClick(w, Qt.Key_Right, Qt.ShiftModifier)
        visited.append((w.model.position, w.model.event_index))
        # the timeline says which event, the explain panel marks it
        i = w.model.event_index
        assert w.bar.event_text() == f"event {i + 1} of {w.model.step().event_count}"
        marked = [t for t in w.explain_panel.texts() if t.startswith("▶")]
        assert marked and marked[0].startswith(f"▶ {i + 1}. ")
    assert visited[:n] == [(p + 1, i) for i in range(n)]
    assert visited[n] == (p + 2, 0)
    # each event's drawing is the structure after that event
    qtbot.keyClick(w, Qt.Key_Left, Qt.ShiftModifier)
    back = [(w.model.position, w.model.event_index)]
    assert nothing_runs(w.structure_panel.view)
    assert w.structure_panel.view.drawn() == static_drawing(qtbot, w, n - 1)
    for _ in range(n):
        qtbot.keyClick(w, Qt.Key_Left, Qt.ShiftModifier)
        back.append((w.model.position, w.model.event_index))
        assert nothing_runs(w.structure_panel.view)       # back is never animated
    assert back[:n] == [(p + 1, i) for i in reversed(range(n))]
    assert back[n][0] == p and back[n][1] == w.model.step().event_count - 1


def test_micro_step_forward_moves_and_the_next_key_lands_it(qtbot, slow):
    w = slow
    w.player.set_speed(MAX_ANIMATED_SPEED)     # a micro-step moves in a quarter of 1 step/s's time
    p = w.model.position
    qtbot.keyClick(w, Qt.Key_Right, Qt.ShiftModifier)
    assert (w.model.position, w.model.event_index) == (p + 1, 0)
    qtbot.keyClick(w, Qt.Key_Right, Qt.ShiftModifier)
    assert w.model.event_index == 1 and w.animator.running
    qtbot.keyClick(w, Qt.Key_Right, Qt.ShiftModifier)     # lands event 1, moves on to 2
    assert w.model.event_index == 2
    qtbot.waitUntil(lambda: not w.animator.running and nothing_runs(w.structure_panel.view), timeout=5000)
    assert w.structure_panel.view.drawn() == static_drawing(qtbot, w, 2)


def test_the_player_waits_for_a_step_to_play_its_events(qtbot, slow):
    w = slow
    w.player.set_speed(MAX_ANIMATED_SPEED)       # scripts longer than a step's time
    log = []
    during = []
    # (before the window's own slot, which starts the next step's animation)
    w.player.advance.disconnect(w._advance)
    w.player.advance.connect(lambda n: during.append(w.animator.running))
    w.player.advance.connect(w._advance)
    w.model.step_changed.connect(lambda pos: log.append(("step", plan(w.model.step().record.events,
                                                                      MAX_ANIMATED_SPEED))))
    w.model.event_changed.connect(lambda i: log.append(("event", i)))
    p = w.model.position
    w.player.play()
    qtbot.waitUntil(lambda: w.model.position >= p + 3, timeout=20000)
    w.player.pause()
    w.animator.finish()
    steps = [i for i, x in enumerate(log) if x[0] == "step"]
    for a, b in zip(steps, steps[1:]):
        between = [x[1] for x in log[a + 1:b]]
        # every step played all its events in order and ended on the whole
        # step before the next one came
        assert between == [i for i, _ in log[a][1]] + [None], between
    # the clock never asked for a step while one was playing
    assert during and not any(during)
    assert any(sum(ms for _, ms in x[1]) > 1000 / MAX_ANIMATED_SPEED for x in log if x[0] == "step")


def test_export_frames_are_the_same_on_every_run(qtbot, trace):
    model = model_at(trace, "splay-best-fit", "Rotation")
    step = model.step()
    runs = []
    for _ in range(2):
        view = make_view(qtbot, "tree", 700, 500)
        frames = list(step_frames(view, step, speed=1, fps=20))
        runs.append([bytes(f.constBits()) for f in frames])
        assert nothing_runs(view) and not view.manual_transitions
        static = shown(make_view(qtbot, "tree", 700, 500), step)
        assert view.drawn() == static.drawn()
    assert runs[0] == runs[1]
    script = plan(step.record.events, 1)
    assert len(runs[0]) > len(script)              # moves between events, not just the events
    assert len(set(runs[0])) > len(script) // 2    # and they differ from one another


def test_the_step_states_come_from_the_step_before(qtbot, trace):
    model = model_at(trace, "next-fit", "ListInsert")
    step = model.step()
    states = step.states
    assert states.available
    assert states.at(-1) == step.timeline.state_at(step.position - 1).structure
    assert step.structure_at(step.event_count - 1) == step.structure


def test_a_generic_lists_view_lights_events_without_moving(qtbot, trace):
    from heapscope.allocators.step_states import StepStates
    model = model_at(trace, "next-fit", "Visit", at_least=2)
    step = model.step()
    generic = {"kind": "lists", "sizes": dict(step.structure["sizes"]), "pointers": [], "outside": [],
               "lists": {"free blocks": list(step.structure["free_list"])}}
    states = StepStates(step.structure, generic, step.record.events)
    assert not states.available and states.at(1) is generic
    view = make_view(qtbot, "lists")
    view.set_states(states.at)
    view.show_step(generic, step.explained, step.record)
    whole = view.drawn()
    view.set_current_event(0, MOVE_MS)
    assert nothing_runs(view)
    assert len(view.drawn()["visited"]) < len(whole["visited"])
    view.set_current_event(None)
    assert view.drawn() == whole


@pytest.mark.parametrize("strategy", ["dlmalloc", "segregated-first-fit"])
def test_kinds_drawn_as_lists_show_the_structure_after_each_event(qtbot, trace, strategy):
    model = model_at(trace, strategy, "ListRemove", start=100)
    step = model.step()
    assert step.states.available
    i = next(i for i, e in enumerate(step.record.events) if i and isinstance(e, ev.ListRemove))
    addr = step.record.events[i].addr
    view = shown(make_view(qtbot, step.structure["kind"]), step, i - 1)
    listed = lambda: {b for lst in view.drawn()["lists"] for b in lst.get("addrs", lst.get("blocks", []))}  # noqa: E731
    before = listed()
    view.set_current_event(i, MOVE_MS)
    assert nothing_runs(view)
    assert addr in before and addr not in listed()


def test_the_timeline_cache_follows_the_trace_object(trace):
    """The module's trace is made again when an xdist worker comes back to
    this module (CI failed with "the timeline replays another trace than the
    model's"): a second trace object gets a timeline of its own."""
    first = model_at(trace, "next-fit", "Visit")
    again = traces.make_workload("vo1989", steps=500, seed=11)
    second = model_at(again, "next-fit", "Visit")
    assert second.trace is again and first.trace is trace
