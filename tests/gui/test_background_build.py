"""A big trace shows step 0 at once and is built in the background (issue 25).

The window builds a trace of ``BACKGROUND_FROM_OPS`` operations or more in a
worker process and takes its timeline in chunks (gui/background_build.py,
allocators/build_stream.py).  Here on a generated trace of 300 000
operations (about 150 000 mallocs and their frees): long enough that its
build takes seconds on this machine, so the tests act while it runs; each
test waits for what it needs, never for a time.
"""

import multiprocessing
import threading

import pytest

from heapscope import traces
from heapscope.allocators.replay import Timeline

STEPS = 150_000          # the Vo 1989 workload's steps: a malloc and a free each


@pytest.fixture(scope="module")
def big_trace():
    return traces.make_workload("vo1989", steps=STEPS, seed=5)


@pytest.fixture(scope="module")
def big_trace_path(tmp_path_factory, big_trace):
    path = tmp_path_factory.mktemp("big") / "big.rep"
    traces.write_rep(big_trace, path)
    return str(path)


def open_building(qtbot, window, path):
    """Open ``path`` and wait until step 0 shows (the build goes on)."""
    with qtbot.waitSignal(window.timeline_changed, timeout=60000):
        window.open_trace(path)
    return window.model.timeline()


def heap_of(strategy):
    return [(b[0], b[1], b[2]) for b in strategy.walk()]


def test_step_0_shows_and_steps_before_the_timeline_is_built(qtbot, window, big_trace_path, big_trace):
    timeline = open_building(qtbot, window, big_trace_path)
    model = window.model
    assert model.building() and timeline.built < timeline.n == 2 * STEPS
    assert model.position == 0
    assert window.bar.n == 2 * STEPS                 # the scrubber spans the whole trace
    assert window.bar.marks.built is not None        # and shades what is not built
    assert window.loading.build_bar.isVisible()
    qtbot.waitUntil(lambda: model.ready >= 3, timeout=60000)
    window.step_forward()
    window.animator.finish()
    assert model.position == 1
    first = heap_of(timeline.strategy)
    window.step_forward()
    window.animator.finish()
    window.step_back()
    assert model.position == 1
    assert heap_of(timeline.strategy) == first
    # the gauges read the rows shipped so far: after the first malloc, what is
    # live is its request
    assert model.step().measures_row["live"] == int(big_trace.sizes[0])
    assert model.building()            # all that before the build's end
    window.loading.background.cancel()


def test_a_seek_past_the_built_part_waits_and_lands_on_the_right_step(qtbot, window, big_trace_path,
                                                                       big_trace):
    timeline = open_building(qtbot, window, big_trace_path)
    model = window.model
    target = timeline.built + 30_001         # past the part built: waits for that much only
    assert target < timeline.n
    window.seek(target)
    assert model.waiting == target and model.position == 0      # not yet: it waits
    assert "waiting for step" in window.loading.build_bar.label.text()
    qtbot.waitUntil(lambda: model.position == target, timeout=120000)
    assert model.waiting is None
    # the same heap as a timeline built here, in one go, sought there
    reference = Timeline(big_trace, "next-fit", checkpoints=False)
    strategy, _ = reference.heap_at(target)
    assert heap_of(timeline.strategy) == heap_of(strategy)
    assert model.building()               # it did not wait for the whole build


def test_cancel_mid_build_keeps_the_steps_built_and_the_window_usable(qtbot, window, big_trace_path):
    timeline = open_building(qtbot, window, big_trace_path)
    model = window.model
    qtbot.waitUntil(lambda: model.ready > 4096, timeout=60000)
    window.seek(2 * STEPS)                    # waiting for the end
    window.loading.build_bar.cancel_button.click()
    assert not model.building() and not window.loading.background.active
    assert not window.loading.build_bar.isVisible() and window.bar.marks.built is None
    kept = timeline.n
    assert 4096 < kept < 2 * STEPS
    assert model.n == kept and window.bar.n == kept
    assert model.waiting is None and model.position == kept     # the waiting seek went to the end
    window.seek(kept // 2)
    assert model.position == kept // 2
    window.step_forward()
    window.animator.finish()
    assert model.position == kept // 2 + 1
    assert "Stopped building" in window.statusBar().currentMessage()


def test_closing_the_window_mid_build_leaves_no_thread_or_process(qtbot, window, big_trace_path):
    threads_before = set(threading.enumerate())
    open_building(qtbot, window, big_trace_path)
    background = window.loading.background
    assert background.active
    qtbot.waitUntil(lambda: bool(background.started_pids), timeout=30000)     # its worker runs
    window.close()
    assert not background.active
    assert multiprocessing.active_children() == []
    left = [t for t in threading.enumerate() if t not in threads_before and t.is_alive()]
    assert left == []


def test_another_strategy_mid_build_drops_the_half_built_timeline(qtbot, window, big_trace_path):
    first = open_building(qtbot, window, big_trace_path)
    with qtbot.waitSignal(window.timeline_changed, timeout=60000):
        window.set_strategy("tlsf")
    assert window.model.timeline().strategy_name == "tlsf"
    assert window.model.timeline_for("next-fit") is None      # built again if asked for
    assert first.n < 2 * STEPS                                # it stopped where it was
    window.loading.background.cancel()


def test_compare_rows_appear_as_each_is_built_to_the_step_shown(qtbot, window, big_trace_path):
    timeline = open_building(qtbot, window, big_trace_path)
    model = window.model
    qtbot.waitUntil(lambda: model.ready >= 5000, timeout=60000)
    window.seek(5000)
    names = ["next-fit", "first-fit", "tlsf"]
    window.compare.compare(names)
    assert window.compare.active and not window.compare.busy      # no dialog, no waiting loader
    background = window.loading.background
    assert background.active and len(background.keys()) == 3     # next-fit's, and the two rows'
    # rows show once two are built to step 5000; all three in the end, at that step
    qtbot.waitUntil(lambda: len(model.shown) == 3, timeout=120000)
    assert [key[0] for key in model.shown] == names and model.position == 5000
    for row, name in enumerate(names):
        assert model.timeline(row).built >= 5000
    assert model.timeline(0) is timeline
    window.loading.build_bar.cancel_button.click()
    assert not background.active
    import multiprocessing
    assert multiprocessing.active_children() == []
    assert not model.building()
    window.seek(model.n)
    # a big trace's jump in compare mode is made a row at a time (ShowModel._stage)
    qtbot.waitUntil(lambda: model.staging is None, timeout=30000)
    assert model.position == model.n == min(model.timeline(r).n for r in range(3))


def test_the_workers_server_starts_once_the_first_load_has_shown(qtbot, window, monkeypatch):
    """gui/app.py starts the forkserver after the first load, not beside it:
    beside it, a fresh Python took the cores the trace's reading needed."""
    from heapscope.allocators import parallel
    from heapscope.gui.app import warm_up_after_load
    started = []
    monkeypatch.setattr(parallel, "warm_up", lambda: started.append(window.loader.busy))
    window.load_workload("vo1989", {"steps": 300, "seed": 2})
    assert window.loader.busy
    warm_up_after_load(window)
    assert started == []                        # not while the trace is read
    qtbot.waitUntil(lambda: started != [], timeout=30000)
    assert started == [False] and window.model.timeline() is not None
    warm_up_after_load(window)                  # nothing loading: at once
    assert started == [False, False]


def test_compare_mode_entered_while_the_server_starts_launches_its_workers_from_the_poll(
        qtbot, loaded, monkeypatch):
    # compare mode entered just after the first load: the GUI thread read
    # the first worker's pid from a server still importing the replay,
    # 227-447 ms (issue 25's stall probe); the rows are built once it answers
    from heapscope.allocators import parallel
    from heapscope.gui import parallel_loader
    w = loaded
    ready = threading.Event()
    ready.set()
    monkeypatch.setattr(parallel, "_server_ready", ready)
    warmed = []
    # as warm_up does when the server is not up: it starts on a thread of its own
    monkeypatch.setattr(parallel_loader, "warm_up", lambda: (warmed.append(1), ready.clear()))
    launched = []
    launch = parallel.ParallelBuild._launch
    monkeypatch.setattr(parallel.ParallelBuild, "_launch",
                        lambda build: (launch(build), launched.append(len(build._running)))[0])
    w.compare.compare(["first-fit", "tlsf"])          # (neither built yet: two workers)
    assert w.compare.loader.busy
    assert warmed == [1] and launched == [0]        # started: no worker launched in the call
    qtbot.wait(100)
    assert w.compare.loader.build.running == {} and not w.compare.active
    ready.set()                             # the server answers
    qtbot.waitUntil(lambda: w.compare.active and not w.compare.busy, timeout=60000)
    assert 2 in launched
    assert [key[0] for key in w.model.shown] == ["first-fit", "tlsf"]


def test_compare_rows_widgets_are_made_ahead_a_row_a_turn_while_they_build(qtbot, window, big_trace_path,
                                                                          monkeypatch):
    # making seven rows' maps when the rows showed held the event loop 1.5 s
    # (issue 25's stall probe): they are made while the timelines build, one
    # per turn, and the rows then show in them
    from heapscope.gui.compare_view import CompareView
    made, ahead = [], []
    new_row, prepare_next = CompareView._new_row, CompareView._prepare_next

    def counted(self, *args, **kwargs):
        made.append(self)
        return new_row(self, *args, **kwargs)

    def one_turn(self):
        before = len(made)
        prepare_next(self)
        ahead.append(len(made) - before)
    monkeypatch.setattr(CompareView, "_new_row", counted)
    monkeypatch.setattr(CompareView, "_prepare_next", one_turn)
    open_building(qtbot, window, big_trace_path)
    model, view = window.model, window.compare.view
    qtbot.waitUntil(lambda: model.ready >= 20_000, timeout=120000)
    window.seek(20_000)        # the rows show once built to here: about a second (their
    # widgets, made ahead meanwhile, took 0.2 s in all on this machine)
    had = len(view.rows)
    names = ["next-fit", "first-fit", "tlsf"]
    window.compare.compare(names)
    assert len(view.rows) == had                      # none made in the call
    qtbot.waitUntil(lambda: len(model.shown) == 3, timeout=120000)
    # the rows then join the view a turn at a time (CompareView._join_next)
    qtbot.waitUntil(lambda: not view.joining(), timeout=30000)
    assert max(ahead) <= 1 and sum(ahead) == len(made) == max(0, 3 - had)
    assert [r.key[0] for r in view.shown_rows()] == names
    assert all(r.map.model is model and r.isVisible() for r in view.shown_rows())
    window.loading.build_bar.cancel_button.click()


def test_compare_rows_still_building_keep_their_room_until_they_join(qtbot, window, big_trace_path):
    """Each row shown as it is built once added a slot to the splitter, and
    every row there was resized and laid out again (15-25 ms a show on
    gcc-cc1): the rows to come hold their slots ("building…") from the
    first show on; the structure views stay closed as for three rows; a
    cancelled build takes the slots of the rows that will not come."""
    from PySide6.QtWidgets import QLabel
    open_building(qtbot, window, big_trace_path)
    model, view = window.model, window.compare.view
    qtbot.waitUntil(lambda: model.ready >= 20_000, timeout=120000)
    window.seek(20_000)
    names = ["next-fit", "first-fit", "tlsf"]
    seen = []           # at each row joining: (widgets in the splitter, rows bound, slots' words)

    def on_join():
        slots = [view.rows_split.widget(i) for i in range(len(view.rows), view.rows_split.count())]
        seen.append((view.rows_split.count(), len(view.shown_rows()),
                     [s.findChild(QLabel).text() for s in slots], len(view.rows)))
    view.row_joined.connect(on_join)
    window.compare.compare(names)
    qtbot.waitUntil(lambda: len(model.shown) == 3 and not view.joining(), timeout=120000)
    assert seen and all(count == 3 for count, _, _, _ in seen)
    assert all(words == ["building…"] * (3 - rows) for _, _, words, rows in seen)
    assert seen[0][1] < 3                       # rows joined while others were still building
    assert not any(r.structure_visible() for r in view.shown_rows())
    assert view.rows_split.count() == 3 and [view.rows_split.widget(i) for i in range(3)] == view.shown_rows()
    window.loading.build_bar.cancel_button.click()
    # fewer rows shown next hold no slots for the three that came
    with qtbot.waitSignal(window.compare.changed, timeout=60000):
        window.compare.compare(names[:2])
    qtbot.waitUntil(lambda: not view.joining(), timeout=30000)
    assert len(view.shown_rows()) == 2 and view.rows_split.count() == len(view.rows)


def test_a_cancelled_compare_build_gives_back_the_room_kept_for_its_rows(qtbot, window, big_trace_path):
    open_building(qtbot, window, big_trace_path)
    model, view = window.model, window.compare.view
    qtbot.waitUntil(lambda: model.ready >= 3000, timeout=120000)
    window.seek(3000)
    names = ["next-fit", "first-fit", "rotating-list", "tlsf", "buddy"]
    window.compare.compare(names)
    qtbot.waitUntil(lambda: len(view.shown_rows()) >= 2 and not view.joining(), timeout=120000)
    if len(view.shown_rows()) == len(names):
        pytest.skip("every row was built before it could be cancelled")
    assert view.rows_split.count() == len(names)        # the rows to come keep their slots
    window.compare.rows.cancel()
    shown = len(view.shown_rows())
    assert view.rows_split.count() == len(view.rows) and shown < len(names)
    window.loading.build_bar.cancel_button.click()
