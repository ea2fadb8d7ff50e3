"""The shared window (tests/gui/shared_window.py): its reset returns a
window every test left dirty to the state of a fresh one, what the reset
cannot undo costs a new window, and the check notices what a reset missed."""

import pytest
from PySide6.QtCore import QSettings, Qt
from PySide6.QtWidgets import QApplication

from .conftest import SHARED, Counter, wait_loaded
from .shared_window import Replaced, SharedWindow, destroy, make_window, quiet
from .window_state import differences, window_state
from tests.depth import some_in_quick


@pytest.fixture
def pool(qtbot):
    """A SharedWindow of the test's own (the session's stays as it is)."""
    own = SharedWindow()
    yield own
    own.drop()


def loaded_state(qtbot, w, path, tmp_path, settings_folder):
    wait_loaded(qtbot, w, lambda: w.open_trace(path))
    qtbot.wait(1)
    return window_state(w, {str(tmp_path / settings_folder): "<settings>", str(tmp_path): "<tmp>"})


def dirty_everything(qtbot, w, tmp_path) -> None:
    """What a test leaves behind that the reset undoes: the step, the
    selection, a zoom, another strategy, the speed, panels hidden and the
    a splitter dragged, a breakpoint
    (written to the settings), a message box and the keys window open, the
    focus in the step box, the pointer over the map and the structure view, the
    sandbox made (a block's menu), the counters the tests read, predict
    mode left on with a question open and an answer scored."""
    with qtbot.waitSignal(w.timeline_changed, timeout=20000):
        w.set_strategy("tlsf")
    w.seek(200)
    qtbot.keyClick(w, Qt.Key_Right)
    w.model.select(int(w.heap_map.blocks.addr[2]))
    w.heap_map.plot_widget.getViewBox().scaleBy((0.5, 0.5))
    w.faster()
    w.act_plots.setChecked(False)
    w.toggle_plots()
    w.act_explain.setChecked(False)
    w.toggle_explain()
    w.main_split.setSizes([300, 400])
    w.finder.add_breakpoint("size > 4000")
    assert w.edits.current() is not None
    w.model.counts.explain += 5
    # predict mode on, a question answered and the next one left open
    w.set_predict(True)
    for answer in (True, False):
        for _ in range(40):
            qtbot.keyClick(w, Qt.Key_Right)
            qtbot.wait(10)
            if w.predict.pending is not None:
                break
        if answer:
            w.reveal_answer()
            qtbot.wait(20)
    assert w.predict_bar.isVisible() and w.predict.pending is not None
    assert w.predict.session(0).skipped == 1
    w.show_about()
    w.show_keys()
    w.heap_map._mouse_moved(w.heap_map.scene_pos_of(int(w.heap_map.blocks.addr[1])))
    w.statusBar().showMessage("left over")
    w.bar.step_box.setFocus()           # the keys would go to the step box
    qtbot.wait(20)
    # the settings and the recent files belong to this test's folder
    assert w.settings.value("breakpoints") and w.recent_files()


def test_the_reset_returns_a_dirty_window_to_a_fresh_ones_state(qtbot, pool, small_trace_path,
                                                                 tmp_path, monkeypatch):
    fresh = make_window(qtbot)
    try:
        expected = loaded_state(qtbot, fresh, small_trace_path, tmp_path, "settings")
    finally:
        quiet(fresh)
        destroy(fresh)
    w = pool.take(qtbot)
    wait_loaded(qtbot, w, lambda: w.open_trace(small_trace_path))
    pool.check({str(tmp_path): "<tmp>"})
    dirty_everything(qtbot, w, tmp_path)
    from .shared_window import connected, far_from_fresh, wrapped_methods
    assert not (far_from_fresh(w) or wrapped_methods(w) or connected(w, pool.pristine)), \
        connected(w, pool.pristine)
    pool.give_back(failed=False)
    assert pool.window is w, "a window the reset can clean was thrown away"
    next_tests_settings(tmp_path, "next")
    assert pool.take(qtbot) is w
    assert [x for x in QApplication.topLevelWidgets() if x is not w and x.isVisible()
            and x is not SHARED.window] == []
    assert w.settings.allKeys() == [] and w.finder.breakpoints.items == []
    state = loaded_state(qtbot, w, small_trace_path, tmp_path, "next")
    # the recent files: the fresh window's folder had the one load, as this one has
    found = differences(expected, state)
    assert found == [], "\n".join(found)


@pytest.mark.parametrize("leave", some_in_quick(
    ["compare names", "sandbox", "parameters", "find", "presenter", "dark", "resized",
     "docks", "closed", "wrapped method", "connected", "failed"], every=3))
def test_what_the_reset_does_not_undo_costs_a_new_window(qtbot, pool, small_trace_path, tmp_path,
                                                         leave):
    w = pool.take(qtbot)
    wait_loaded(qtbot, w, lambda: w.open_trace(small_trace_path))
    pool.check({str(tmp_path): "<tmp>"})
    if leave == "compare names":
        w.compare.names = ["next-fit", "tlsf"]       # as after compare mode
    elif leave == "sandbox":
        w.edits.malloc(100)             # an unsaved edit
    elif leave == "parameters":
        w.strategy_params["tlsf"] = {"chunk": 1024}
    elif leave == "find":
        assert w.finder.find("size > 100")
    elif leave == "presenter":
        w.set_presenter(True)
    elif leave == "dark":
        w.set_theme("dark")
    elif leave == "resized":
        w.resize(1000, 700)
    elif leave == "docks":
        w.finder.show_find()
        w.finder.dock.hide()
    elif leave == "closed":
        w.close()
    elif leave == "connected":
        w.model.step_changed.connect(lambda position: None)
    elif leave == "wrapped method":
        Counter(w.heap_map, "show_blocks")
    pool.give_back(failed=leave == "failed")
    assert pool.window is None
    assert pool.take(qtbot) is not w


def next_tests_settings(tmp_path, name: str) -> None:
    """The settings folder of the next test, as tests/gui/conftest.py gives."""
    QSettings.setPath(QSettings.IniFormat, QSettings.UserScope, str(tmp_path / name))


def test_a_difference_the_reset_leaves_is_found_and_the_window_replaced(qtbot, pool, small_trace_path,
                                                                         tmp_path):
    w = pool.take(qtbot)
    wait_loaded(qtbot, w, lambda: w.open_trace(small_trace_path))
    pool.check({str(tmp_path): "<tmp>"})
    w.time_limit = 3.0          # nothing resets it
    pool.give_back(failed=False)
    next_tests_settings(tmp_path, "next")
    assert pool.take(qtbot) is w
    wait_loaded(qtbot, w, lambda: w.open_trace(small_trace_path))
    with pytest.raises(Replaced, match="time_limit"):
        pool.check({str(tmp_path): "<tmp>"})
    assert pool.window is None and pool.replaced


def test_loaded_tests_share_one_window(qtbot, loaded):
    assert loaded is SHARED.window


@pytest.mark.fresh_window
def test_a_test_marked_fresh_window_gets_its_own(qtbot, loaded):
    assert SHARED.window is not loaded
    assert loaded.timeline is not None
