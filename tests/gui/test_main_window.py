"""The main window driven as a user would: menus, dialogs, keys, the scrubber,
the plots, the strategy picker, errors and the workload dialog."""

import math
import os
import subprocess
import sys

import numpy as np
import pytest
from PySide6.QtCore import QPoint, QPointF, Qt, QTimer
from PySide6.QtWidgets import (QApplication, QDialogButtonBox, QFileDialog, QInputDialog,
                               QMessageBox, QPushButton, QSlider)

from heapscope import traces
from heapscope.gui.main_window import MainWindow
from heapscope.gui.workload_dialog import WorkloadDialog, parameters_of

from .conftest import SMALL_STEPS, opened_window, wait_loaded

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def menu_action(window: MainWindow, menu: str, text: str):
    """The action of a menu whose text (without '&') starts with ``text``."""
    for act in window.menus[menu].actions():
        if act.text().replace("&", "").startswith(text):
            return act
    raise AssertionError(f"no {text!r} in the {menu} menu")


def step_text(window) -> str:
    return window.bar.description.text()


# ------------------------------------------------------------------ opening
def test_file_open_goes_through_the_dialog_and_remembers_the_file(qtbot, window, small_trace_path,
                                                                   monkeypatch):
    asked = []

    def fake_dialog(parent, caption, folder, filters):
        asked.append(filters)
        return small_trace_path, filters.split(";;")[0]

    monkeypatch.setattr(QFileDialog, "getOpenFileName", staticmethod(fake_dialog))
    wait_loaded(qtbot, window, menu_action(window, "file", "Open Trace").trigger)
    assert asked and "*.rep" in asked[0] and "*.rep.gz" in asked[0]
    assert window.timeline.n == 2 * SMALL_STEPS          # a malloc and a free per step
    assert window.timeline.strategy_name == "next-fit"
    assert "small.rep" in window.windowTitle()
    assert step_text(window).startswith(f"step 0 of {2 * SMALL_STEPS}")
    # remembered in the settings, listed under File > Open Recent
    assert window.recent_files() == [os.path.abspath(small_trace_path)]
    window._fill_recent_menu()
    recent = [a for a in window.recent_menu.actions() if a.data() == os.path.abspath(small_trace_path)]
    assert len(recent) == 1


def test_a_recent_file_opens_again_from_its_menu(qtbot, loaded, small_trace_path):
    first = loaded.timeline
    loaded._fill_recent_menu()
    act = next(a for a in loaded.recent_menu.actions() if a.data())
    wait_loaded(qtbot, loaded, act.trigger)
    assert loaded.timeline is not first and loaded.timeline.n == first.n


def test_a_gzipped_trace_opens(qtbot, loaded, tmp_path, small_trace):
    window = loaded                  # the shared window, showing small.rep
    path = tmp_path / "small.rep.gz"
    traces.write_rep(small_trace, path)
    wait_loaded(qtbot, window, lambda: window.open_trace(str(path)))
    assert window.trace_source == str(path) and window.timeline.n == len(small_trace)


def test_a_broken_trace_is_reported_with_file_and_line_and_the_old_one_stays(
        qtbot, loaded, tmp_path):
    old_timeline, old_source = loaded.timeline, loaded.trace_source
    loaded.seek(40)
    bad = tmp_path / "broken.rep"
    # lines 1-4 header; line 5 a 0 16; line 6 f 0; line 7 frees id 0 again
    bad.write_text("0\n2\n3\n1\na 0 16\nf 0\nf 0\n")
    with qtbot.waitSignal(loaded.load_failed, timeout=10000) as failed:
        loaded.open_trace(str(bad))
    box = loaded.message_box
    assert isinstance(box, QMessageBox) and box.isVisible()
    shown = box.text() + "\n" + box.informativeText()
    assert f"{bad}:7:" in shown and "double free" in shown
    assert failed.args[0].startswith(f"{bad}:7:")
    # nothing else changed
    assert loaded.timeline is old_timeline and loaded.trace_source == old_source
    assert loaded.timeline.position == 40 and step_text(loaded).startswith("step 40:")
    box.close()


def test_a_missing_file_is_reported(qtbot, loaded, tmp_path):
    missing = str(tmp_path / "nope.rep")
    with qtbot.waitSignal(loaded.load_failed, timeout=10000) as failed:
        loaded.open_trace(missing)
    assert missing in failed.args[0]
    assert loaded.trace_source.endswith("small.rep")


# --------------------------------------------------------------------- keys
def test_keys_step_jump_and_play(qtbot, loaded):
    w = loaded
    n = w.timeline.n
    qtbot.keyClick(w, Qt.Key_Right)
    assert w.timeline.position == 1 and step_text(w).startswith("step 1: malloc(")
    qtbot.keyClick(w, Qt.Key_Right)
    assert step_text(w).startswith("step 2:")
    qtbot.keyClick(w, Qt.Key_Left)
    assert w.timeline.position == 1 and step_text(w).startswith("step 1:")
    qtbot.keyClick(w, Qt.Key_End)
    assert w.timeline.position == n and step_text(w).startswith(f"step {n}:")
    assert w.bar.slider.value() == n
    qtbot.keyClick(w, Qt.Key_Home)
    assert w.timeline.position == 0 and w.bar.slider.value() == 0
    # Space plays (at 200 steps/s, a few steps in a few ticks), Space pauses:
    # 50 ms after, ten steps' time at that speed, it has not moved
    w.player.set_speed(200)
    qtbot.keyClick(w, Qt.Key_Space)
    assert w.player.playing
    qtbot.waitUntil(lambda: w.timeline.position >= 3, timeout=3000)
    qtbot.keyClick(w, Qt.Key_Space)
    assert not w.player.playing
    stopped = w.timeline.position
    qtbot.wait(50)
    assert w.timeline.position == stopped
    assert step_text(w).startswith(f"step {stopped}:")


def test_plus_and_minus_change_the_speed(qtbot, loaded):
    w = loaded
    assert w.player.speed == 10
    qtbot.keyClick(w, Qt.Key_Plus)
    assert w.player.speed == 20 and w.bar.speed_box.currentData() == 20
    qtbot.keyClick(w, Qt.Key_Minus)
    qtbot.keyClick(w, Qt.Key_Minus)
    assert w.player.speed == 5 and w.bar.speed_box.currentText().startswith("5 ")


def test_playing_stops_at_the_end(qtbot, loaded):
    w = loaded
    w.seek(w.timeline.n - 3)
    w.player.set_speed(100)
    w.toggle_play()
    qtbot.waitUntil(lambda: not w.player.playing, timeout=3000)
    assert w.timeline.position == w.timeline.n


def test_menus_show_the_shortcuts(loaded):
    expected = {"Play": "Space", "Step Back": "Left", "Step Forward": "Right",
                "Jump to Start": "Home", "Jump to End": "End", "Faster": "+", "Slower": "-",
                "Go to Step": "Ctrl+G"}
    for text, key in expected.items():
        act = menu_action(loaded, "playback", text)
        assert act.shortcut().toString() == key, text
        assert act in loaded.actions()          # active without opening the menu
    assert menu_action(loaded, "file", "Open Trace").shortcut().toString() == "Ctrl+O"


def test_go_to_step_asks_for_a_number(qtbot, loaded, monkeypatch):
    monkeypatch.setattr(QInputDialog, "getInt", staticmethod(lambda *a, **k: (123, True)))
    menu_action(loaded, "playback", "Go to Step").trigger()
    assert loaded.timeline.position == 123 and step_text(loaded).startswith("step 123:")


# ----------------------------------------------------------------- scrubber
def test_dragging_the_scrubber_seeks(qtbot, loaded):
    slider = loaded.bar.slider
    slider.setSliderDown(True)                 # the user grabs the handle...
    slider.setSliderPosition(321)              # ...and drags it
    slider.setSliderDown(False)
    assert loaded.timeline.position == 321
    assert step_text(loaded).startswith("step 321:")
    slider.triggerAction(QSlider.SliderPageStepAdd)   # a click in the groove
    assert loaded.timeline.position == 321 + slider.pageStep()
    assert loaded.bar.step_box.value() == loaded.timeline.position


def test_clicking_the_scrubber_with_the_mouse_moves_towards_the_click(qtbot, loaded):
    slider = loaded.bar.slider
    qtbot.mouseClick(slider, Qt.LeftButton, pos=QPoint(slider.width() - 4, slider.height() // 2))
    # a click right of the handle pages forward (or jumps there, by style)
    assert loaded.timeline.position > 0
    assert step_text(loaded).startswith(f"step {loaded.timeline.position}:")


def test_typing_a_step_number_seeks(qtbot, loaded):
    box = loaded.bar.step_box
    box.setValue(77)
    assert loaded.timeline.position == 77


# -------------------------------------------------------------------- plots
@pytest.mark.parametrize("plot_name", ["heap_plot", "frag_plot", "search_plot"])
def test_clicking_a_plot_seeks_near_there(qtbot, loaded, plot_name):
    panel = loaded.plots
    plot = getattr(panel, plot_name)
    target = 600
    (y0, y1) = plot.vb.viewRange()[1]
    scene = plot.vb.mapViewToScene(QPointF(target, (y0 + y1) / 2))
    where = panel.view.mapFromScene(scene)
    qtbot.mouseClick(panel.view.viewport(), Qt.LeftButton, pos=where)
    # one pixel is a few steps wide at this zoom
    steps_per_pixel = loaded.timeline.n / plot.vb.width()
    assert abs(loaded.timeline.position - target) <= max(2, 2 * steps_per_pixel)
    assert all(abs(c.value() - loaded.timeline.position) < 1e-9 for c in panel.cursors)


# ------------------------------------------------------------------- gauges
@pytest.mark.parametrize("t", [1, 137, 500, 999])
def test_gauges_show_the_core_measures_of_the_step(loaded, t):
    loaded.seek(t)
    s = loaded.timeline.series
    g = loaded.gauges
    r = t - 1
    ext = s.external(True)[r]
    assert g.frag.value_label.text() == f"{100 * ext:.1f} %"
    assert math.isclose(g.frag.value, ext)
    assert g.search.value_label.text() == str(int(s.search[r]))
    counted = (s.is_malloc & ~s.failed)[:t]
    mean = s.search[:t][counted].mean()
    assert g.search.second_label.text() == f"mean {mean:.2f}"
    max_live, max_heap = s.live[:t].max(), s.heap[:t].max()
    util = max_live / s.heap[r]
    waste = (max_heap - max_live) / max_live
    assert g.util.value_label.text() == f"{100 * util:.1f} %"
    assert g.waste.value_label.text() == f"{100 * waste:.1f} %"
    internal = (s.in_use[r] - s.live[r]) / s.in_use[r] if s.in_use[r] else float("nan")
    if s.in_use[r]:
        assert g.internal.value_label.text() == f"{100 * internal:.1f} %"


def test_gauges_at_the_end_agree_with_the_summary(loaded):
    loaded.go_end()
    summary = loaded.timeline.summary()
    assert math.isclose(loaded.gauges.util.value, summary["utilisation"])
    assert math.isclose(loaded.gauges.waste.value, summary["waste"])
    assert loaded.gauges.search.second_label.text() == f"mean {summary['search_mean']:.2f}"


def test_the_running_mean_search_leaves_out_failed_mallocs(qtbot, window, small_trace_path):
    # Under a 48 KiB heap limit some mallocs fail after searching the whole ring:
    # the gauge's running mean (and the summary's) is over the mallocs that
    # succeeded only, computed here by a plain loop over the replay's columns.
    window.params = {"heap_limit": 48 * 1024}
    wait_loaded(qtbot, window, lambda: window.open_trace(small_trace_path))
    s = window.timeline.series
    total = count = total_all = count_all = 0
    expected = {}             # step -> the mean shown there, where failures change it
    for r in range(s.n):
        if s.is_malloc[r]:
            total_all += int(s.search[r])
            count_all += 1
            if not s.failed[r]:
                total += int(s.search[r])
                count += 1
        if s.failed[r] and f"{total / count:.2f}" != f"{total_all / count_all:.2f}":
            expected[r + 1] = f"mean {total / count:.2f}"
    assert expected, "no failed malloc changes the mean: the test would prove nothing"
    steps = sorted(expected)
    for t in steps[:: max(1, len(steps) // 10)]:
        window.seek(t)
        assert window.gauges.search.second_label.text() == expected[t], f"step {t}"
    assert window.timeline.summary()["search_mean"] == pytest.approx(total / count)
    assert f"mean search {total / count:.2f}," in window.statusBar().currentMessage()


def test_gauges_before_the_first_step_show_no_value(loaded):
    loaded.go_start()
    assert loaded.gauges.frag.value_label.text() == "–"


# ----------------------------------------------------------------- strategy
def test_changing_the_strategy_replays_the_same_trace_and_keeps_the_step(qtbot, loaded):
    loaded.seek(250)
    trace = loaded.trace
    box = loaded.strategy_box
    i = box.findData("tlsf")
    wait_loaded(qtbot, loaded, lambda: box.activated.emit(i))
    assert loaded.timeline.strategy_name == "tlsf" and loaded.strategy_name == "tlsf"
    assert loaded.trace is trace
    assert loaded.timeline.position == 250 and step_text(loaded).startswith("step 250:")
    assert loaded.strategy_actions["tlsf"].isChecked()
    assert "tlsf" in loaded.windowTitle()
    # and back through the Strategy menu (Ctrl+1 is next-fit)
    wait_loaded(qtbot, loaded, lambda: qtbot.keyClick(loaded, Qt.Key_1, Qt.ControlModifier))
    assert loaded.timeline.strategy_name == "next-fit" and loaded.timeline.position == 250


def test_cancelling_a_long_replay_keeps_the_trace_shown(qtbot, loaded, monkeypatch):
    # replayed on the loader's thread behind its dialog (a trace this long is
    # otherwise built in the background while it shows: test_background_build.py)
    from heapscope.gui import background_build
    monkeypatch.setattr(background_build, "BACKGROUND_FROM_OPS", 10 ** 12)
    before = loaded.timeline
    loaded.seek(10)
    big = traces.make_workload("vo1989", steps=150_000, seed=3)
    with qtbot.waitSignal(loaded.loader.cancelled, timeout=20000):
        loaded.load_trace(big, "big")
        # The window stays responsive while the worker replays: its timers keep
        # firing.  (A single stall of a few hundred ms has been seen once in a
        # full run on a busy machine, so the test waits for the ticks rather
        # than counting them at the moment the dialog appears.)
        assert loaded.busy
        ticks = []
        timer = QTimer()
        timer.timeout.connect(lambda: ticks.append(1))
        timer.start(20)
        qtbot.waitUntil(lambda: loaded.loader.dialog is not None and loaded.loader.dialog.isVisible(),
                        timeout=5000)
        qtbot.waitUntil(lambda: len(ticks) >= 5, timeout=5000)
        timer.stop()
        assert loaded.busy, "the replay ended before the window was seen ticking during it"
        # ...and the progress dialog's Cancel button stops it
        loaded.loader.dialog.findChild(QPushButton).click()
    qtbot.waitUntil(lambda: not loaded.busy, timeout=5000)
    assert loaded.timeline is before and loaded.timeline.position == 10


# ----------------------------------------------------------------- workload
def test_the_workload_dialog_form_follows_the_declared_parameters(qtbot):
    dialog = WorkloadDialog(traces.WORKLOADS)
    qtbot.addWidget(dialog)
    for name, func in traces.WORKLOADS.items():
        dialog.picker.setCurrentText(name)
        assert list(dialog.editors) == [p.name for p in func.params]
        assert dialog.values() == dict(parameters_of(func))      # starts at the defaults
        for p in func.params:                                   # each explained by its help
            assert p.help in dialog.editors[p.name].toolTip()
    assert "dowdeswell1999" in traces.WORKLOADS


def test_the_workload_dialog_offers_the_seeds_runs_and_reads_sizes(qtbot):
    dialog = WorkloadDialog(traces.WORKLOADS, initial="plotnick1983")
    qtbot.addWidget(dialog)
    runs = [dialog.runs.itemText(i) for i in range(dialog.runs.count())]
    assert runs[1:] == list(traces.WORKLOADS["plotnick1983"].presets)
    index = runs.index("20000 x 100, giant free(malloc()) first")
    dialog.runs.setCurrentIndex(index)
    dialog.runs.activated.emit(index)
    assert dialog.values() == dict(n=20000, m=100, giant_first=True, seed=0)
    # a size is typed with the suffixes every size takes
    dialog.picker.setCurrentText("djgpp1997")
    dialog.editors["max_size"].setText("8K")
    assert dialog.choice() == ("djgpp1997", dict(actions=10000, slots=1024, max_size=8192, seed=1997))
    # the spin boxes stop at the declared range
    dialog.picker.setCurrentText("dowdeswell1999")
    spin = dialog.editors["regions"]
    assert (spin.minimum(), spin.maximum()) == (1, 1 << 20)


def test_a_value_out_of_range_keeps_the_workload_dialog_open(qtbot):
    dialog = WorkloadDialog(traces.WORKLOADS, initial="djgpp1997")
    qtbot.addWidget(dialog)
    dialog.show()
    dialog.editors["max_size"].setText("lots")
    dialog.buttons.button(QDialogButtonBox.Ok).click()
    assert dialog.isVisible() and dialog.result() == 0
    assert "max_size must be a size in bytes" in dialog.problem.text()
    dialog.editors["max_size"].setText("64K")
    dialog.buttons.button(QDialogButtonBox.Ok).click()
    assert not dialog.isVisible() and dialog.result() == 1


def test_the_workload_dialog_generates_a_trace(qtbot, loaded):
    window = loaded                  # the shared window, showing small.rep
    def fill_in():
        dialog = QApplication.activeModalWidget()
        assert isinstance(dialog, WorkloadDialog)
        dialog.picker.setCurrentText("vo1989")
        dialog.set_value("steps", 300)
        dialog.set_value("seed", 5)
        dialog.findChild(QDialogButtonBox).button(QDialogButtonBox.Ok).click()

    QTimer.singleShot(100, fill_in)
    wait_loaded(qtbot, window, menu_action(window, "file", "Workload").trigger)
    assert len(window.trace) == 600
    assert window.trace.name == "vo1989:steps=300,seed=5"
    expected = traces.make_workload("vo1989", steps=300, seed=5)
    assert np.array_equal(window.trace.sizes, expected.sizes)
    assert window.trace_source is None


def test_the_windows_workload_dialog_offers_each_seeds_workload_with_its_parameters(qtbot, loaded):
    window = loaded                  # the shared window, showing small.rep
    from heapscope.experiments import EXPERIMENTS
    from heapscope.experiments.coppa2010 import REAL
    seen, errors = {}, []

    def look_and_pick():
        dialog = QApplication.activeModalWidget()
        try:
            look(dialog)
        except BaseException as exc:       # fail the test, not hang on a modal dialog
            errors.append(exc)
            dialog.reject()

    def look(dialog):
        assert isinstance(dialog, WorkloadDialog)
        offered = [dialog.picker.itemText(i) for i in range(dialog.picker.count())]
        for exp in EXPERIMENTS.values():
            if exp.workload is None:
                continue
            generator = traces.WORKLOADS[exp.workload]
            assert exp.workload in offered, exp.name
            dialog.picker.setCurrentText(exp.workload)
            seen[exp.workload] = (list(dialog.editors), dialog.values(),
                                  [dialog.runs.itemText(i) for i in range(1, dialog.runs.count())])
            assert seen[exp.workload] == ([p.name for p in generator.params],
                                          dict(parameters_of(generator)), list(generator.presets))
        # one of the seed's own runs, generated by the window
        dialog.picker.setCurrentText("dowdeswell1999")
        index = [dialog.runs.itemText(i) for i in range(dialog.runs.count())].index("512 regions")
        dialog.runs.setCurrentIndex(index)
        dialog.runs.activated.emit(index)
        dialog.findChild(QDialogButtonBox).button(QDialogButtonBox.Ok).click()

    QTimer.singleShot(100, look_and_pick)
    with qtbot.waitSignal(window.timeline_changed, timeout=20000):
        menu_action(window, "file", "Workload").trigger()
        if errors:
            raise errors[0]
    assert set(seen) == {e.workload for e in EXPERIMENTS.values() if e.workload}
    expected = traces.make_workload("dowdeswell1999", regions=512)
    assert len(window.trace) == len(expected) and np.array_equal(window.trace.sizes, expected.sizes)
    # coppa2010 replays recorded programs: File > Open Example has each of them
    examples = {ex.name: ex.label for ex in traces.bundled.examples()}
    labels = [a.text() for a in window.examples_menu.actions()]
    for name in REAL:
        assert examples[name] in labels


# ------------------------------------------------------------- help / about
def test_about_and_keys_boxes(qtbot, loaded):
    menu_action(loaded, "help", "About").trigger()
    assert "heapscope" in loaded.message_box.text() and loaded.message_box.isVisible()
    loaded.message_box.close()
    menu_action(loaded, "help", "Keyboard").trigger()
    assert "Space" in loaded.message_box.text()
    loaded.message_box.close()


# ------------------------------------------------------------- entry point
def test_make_window_opens_a_workload_spec(qtbot):
    from heapscope.gui.app import make_window
    w = make_window("vo1989:steps=100,seed=2")
    qtbot.addWidget(w)
    qtbot.waitUntil(lambda: w.timeline is not None, timeout=10000)
    assert w.timeline.n == 200 and w.strategy_name == "next-fit"


def test_python_m_heapscope_open_help_runs():
    r = subprocess.run([sys.executable, "-m", "heapscope", "open", "--help"], cwd=ROOT, capture_output=True,
                       text=True, timeout=60, env={**os.environ, "QT_QPA_PLATFORM": "offscreen"})
    assert r.returncode == 0, r.stderr
    assert "--strategy" in r.stdout


def test_main_opens_the_window_with_options(qtbot, monkeypatch):
    from heapscope.cli import main
    shown = []

    def fake_exec(*args):
        # the event loop would run here; look at the window it opened instead
        shown.append(opened_window())
        return 0

    monkeypatch.setattr(QApplication, "exec", fake_exec)
    assert main(["open", "vo1989:steps=50,seed=4", "--strategy", "tlsf", "--heap-limit", "64K",
                 "-P", "tlsf.chunk=1K", "-P", "buddy.max_order=10"]) == 0
    w = shown[0]
    qtbot.addWidget(w)
    qtbot.waitUntil(lambda: w.timeline is not None, timeout=10000)
    assert w.timeline.strategy_name == "tlsf" and w.params == {"heap_limit": 65536}
    assert w.timeline.n == 100
    # -P reaches its own strategy only, here and after switching strategy
    assert w.timeline.strategy.chunk == 1024 and w.timeline.params == {"heap_limit": 65536, "chunk": 1024}
    with qtbot.waitSignal(w.timeline_changed, timeout=10000):
        w.set_strategy("buddy")
    assert w.timeline.params == {"heap_limit": 65536, "max_order": 10}
    assert w.timeline.strategy.max_order == 10


def test_picking_a_strategy_while_loading_redoes_the_load(qtbot, loaded, small_trace_path):
    window = loaded                  # the shared window, showing small.rep
    with qtbot.waitSignal(window.timeline_changed, timeout=20000):
        window.open_trace(small_trace_path)
        window.set_strategy("first-fit")
    qtbot.waitUntil(lambda: not window.busy, timeout=5000)
    assert window.timeline.strategy_name == "first-fit"
    assert window.trace_source == small_trace_path


def test_a_second_load_replaces_the_first(qtbot, loaded, small_trace_path):
    window = loaded                  # the shared window, showing small.rep
    with qtbot.waitSignal(window.timeline_changed, timeout=20000):
        window.load_workload("vo1989", {"steps": 20_000})
        window.open_trace(small_trace_path)
    qtbot.waitUntil(lambda: not window.busy, timeout=5000)
    qtbot.wait(100)        # any late signal of the first job would land now
    assert window.trace_source == small_trace_path and window.timeline.n == 2 * SMALL_STEPS
