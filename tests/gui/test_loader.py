"""The background replay never runs Python's garbage collector in its thread:
a collection there destroyed Qt objects of the GUI thread (a closed window's
pyqtgraph menus) and crashed the process some time later."""

import gc
import threading

import pytest

from heapscope import traces
from heapscope.allocators.replay import Timeline
from heapscope.gui import gui_thread_gc

from .conftest import wait_loaded

#: enough allocations to pass generation 0's threshold many times over
BIG_STEPS = 4000


@pytest.fixture(autouse=True)
def replayed_on_the_loaders_thread(monkeypatch):
    """These tests are about the loader's thread replaying a trace: a trace of
    any length is replayed there (a big one is otherwise built in a worker
    process while it shows, tests/gui/test_background_build.py)."""
    from heapscope.gui import background_build
    monkeypatch.setattr(background_build, "BACKGROUND_FROM_OPS", 10 ** 12)


@pytest.fixture(autouse=True)
def collection_back_on():
    """Whatever a test does, automatic collection is on for the next one."""
    yield
    gc.enable()


@pytest.fixture
def collections():
    """The names of the threads in which each garbage collection ran."""
    seen = []

    def record(phase, info):
        if phase == "start":
            seen.append(threading.current_thread().name)

    gc.callbacks.append(record)
    yield seen
    gc.callbacks.remove(record)


def test_a_replay_on_a_plain_thread_would_collect_there(collections):
    # The control: without the loader's guard, the replay's own allocations
    # trigger collections in its thread.  Earlier tests' windows are collected
    # here first, in the GUI thread: collected in the worker, they broke the
    # keyboard shortcuts of a later test (the hazard itself).
    gc.collect()
    trace = traces.make_workload("vo1989", steps=BIG_STEPS, seed=1)
    worker = threading.Thread(target=lambda: Timeline(trace, "next-fit").build(), name="plain-replay")
    worker.start()
    worker.join()
    assert "plain-replay" in collections


def test_no_collection_runs_in_the_replay_thread(qtbot, window, collections):
    trace = traces.make_workload("vo1989", steps=BIG_STEPS, seed=1)
    window.loader.collector._timer.setInterval(10)     # collect often in the GUI thread
    wait_loaded(qtbot, window, lambda: window.load_trace(trace, "big"))
    assert window.timeline.n == 2 * BIG_STEPS
    assert "heapscope-replay" not in collections
    assert gc.isenabled()                              # automatic collection is back


def test_the_gui_thread_collects_while_a_replay_runs(qtbot, window, collections):
    # The replay's own allocations make collections due; the GUI thread's timer
    # does them (automatic collection is off, so nothing else can).
    trace = traces.make_workload("vo1989", steps=30_000, seed=2)
    window.loader.collector._timer.setInterval(10)
    with qtbot.waitSignal(window.timeline_changed, timeout=60000):
        window.load_trace(trace, "long")
        assert window.busy and not gc.isenabled()
        collections.clear()
        qtbot.waitUntil(lambda: threading.main_thread().name in collections, timeout=10000)
        assert window.busy, "the replay ended before the GUI thread was seen collecting"
    assert "heapscope-replay" not in collections
    assert gc.isenabled()


def test_collection_stays_off_after_a_replay_if_it_was_off_before(qtbot, window, small_trace_path):
    gc.disable()
    try:
        wait_loaded(qtbot, window, lambda: window.open_trace(small_trace_path))
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_two_loaders_give_collection_back_only_when_both_are_done(qtbot):
    from PySide6.QtCore import QObject
    owner = QObject()
    a = gui_thread_gc.GuiThreadCollector(owner)
    b = gui_thread_gc.GuiThreadCollector(owner)
    assert gc.isenabled()
    a.hold()
    b.hold()
    a.release()
    assert not gc.isenabled()
    a.release()                     # a second release of the same holder changes nothing
    assert not gc.isenabled()
    b.release()
    assert gc.isenabled()


def test_due_generations_are_collected_as_the_automatic_collector_would():
    gc.collect()
    old = gc.get_threshold()
    try:
        gc.disable()
        gc.set_threshold(10, 10, 10)
        for _ in range(50):
            cycle = []
            cycle.append(cycle)
        del cycle
        assert gc.get_count()[0] > 10
        assert gui_thread_gc.collect_due_generations() >= 49
        assert gc.get_count()[0] < 10
        assert gui_thread_gc.collect_due_generations() == 0      # nothing due now
    finally:
        gc.set_threshold(*old)
        gc.enable()


# --------------------------------------------- the progress dialog, once shown
def dialog_shown_at_once(window, monkeypatch) -> list:
    """Make the window's loads show their progress dialog at once; the list
    returned says, at each progress report, whether the dialog was showing."""
    from heapscope.gui import loader as loader_module

    monkeypatch.setattr(loader_module, "SHOW_PROGRESS_AFTER_MS", 0)
    shown = []
    progress = window.loader._progress

    def watched(request, done, total):
        dialog = window.loader.dialog
        shown.append(dialog is not None and dialog.isVisible())
        progress(request, done, total)

    monkeypatch.setattr(window.loader, "_progress", watched)
    return shown


def test_a_load_whose_progress_dialog_was_shown_ends_without_a_crash(qtbot, window, small_trace_path,
                                                                     monkeypatch):
    # A modal QProgressDialog that has been shown processes events inside
    # setValue().  The job's last signals (succeeded, done) are among them;
    # closing the dialog there called deleteLater(), which that same
    # processEvents() carried out, and setValue() went on in a deleted dialog:
    # SIGSEGV in Loader._progress whenever a load outlasted
    # SHOW_PROGRESS_AFTER_MS (a busy machine, a big trace).  Shown at once here,
    # on every load; a crash ends the whole test run.
    from PySide6.QtCore import QEvent
    from PySide6.QtWidgets import QApplication, QProgressDialog

    shown = dialog_shown_at_once(window, monkeypatch)
    for _ in range(6):
        wait_loaded(qtbot, window, lambda: window.open_trace(small_trace_path))
        assert window.timeline.n == 1000
    assert any(shown), "the progress dialog was never shown"
    QApplication.sendPostedEvents(None, QEvent.DeferredDelete)
    assert not [w for w in QApplication.topLevelWidgets() if isinstance(w, QProgressDialog) and w.isVisible()]
    assert window.loader._closed_dialogs == []      # every closed dialog was handed to deleteLater


def test_after_a_load_with_its_dialog_shown_the_arrow_keys_step_again(qtbot, window, small_trace_path,
                                                                       monkeypatch):
    # The window-modal progress dialog is the active window while it shows;
    # once it hid, no window was active and nothing had focus, so the arrow
    # keys stepped nothing until the user clicked the window.
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QApplication

    window.activateWindow()
    shown = dialog_shown_at_once(window, monkeypatch)
    wait_loaded(qtbot, window, lambda: window.open_trace(small_trace_path))
    assert any(shown), "the progress dialog was never shown"
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window, timeout=2000)
    focused = QApplication.focusWidget()
    assert focused is not None and focused.window() is window
    start = window.model.position
    qtbot.keyClick(focused, Qt.Key_Right)      # where a real key press goes
    qtbot.waitUntil(lambda: window.model.position == start + 1, timeout=3000)
