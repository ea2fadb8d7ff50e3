"""Fixtures for the window tests: offscreen Qt, settings in a temporary folder,
small traces on disk, a shown MainWindow and a helper that waits for a load."""

import gc
import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402
from PySide6.QtCore import QEvent, QSettings  # noqa: E402
from PySide6.QtWidgets import QApplication, QToolTip  # noqa: E402

from heapscope import traces  # noqa: E402

#: small enough to replay in a few tens of milliseconds
SMALL_STEPS = 500


@pytest.fixture(autouse=True)
def temporary_settings(tmp_path):
    """Recent files etc. go to a fresh INI file, never to the user's own."""
    QSettings.setPath(QSettings.IniFormat, QSettings.UserScope, str(tmp_path / "settings"))
    yield


@pytest.fixture(scope="session")
def small_trace():
    return traces.make_workload("vo1989", steps=SMALL_STEPS, seed=11)


@pytest.fixture
def small_trace_path(tmp_path, small_trace):
    path = tmp_path / "small.rep"
    traces.write_rep(small_trace, path)
    return str(path)


@pytest.fixture
def window(qtbot):
    from heapscope.gui.app import configure_app
    from heapscope.gui.main_window import MainWindow
    configure_app(QApplication.instance())
    w = MainWindow()
    qtbot.addWidget(w)
    w.show()
    qtbot.waitExposed(w)
    w.activateWindow()
    yield w
    w.player.pause()
    if w.message_box is not None:
        w.message_box.close()
    w.loader.cancel()
    w.loader.wait()
    # Tear the window down here, while no replay thread runs: close it and let
    # Qt delete it.  Its Python wrappers are freed later: pytest still holds
    # the fixture's value during this collection, and pyqtgraph's parentless
    # menus in those cycles are live QWidgets.  A later collection must run
    # in the GUI thread, which the Loader sees to (gui/gui_thread_gc.py).
    QToolTip.hideText()
    w.close()
    w.deleteLater()
    QApplication.sendPostedEvents(None, QEvent.DeferredDelete)
    del w
    gc.collect()


def wait_loaded(qtbot, window, start, timeout=20000):
    """Run ``start()`` (which begins a background load) and wait until the
    window shows the new timeline."""
    with qtbot.waitSignal(window.timeline_changed, timeout=timeout):
        start()
    assert not window.busy


@pytest.fixture
def loaded(qtbot, window, small_trace_path):
    """The window showing the small trace (through next-fit)."""
    wait_loaded(qtbot, window, lambda: window.open_trace(small_trace_path))
    return window


class Counter:
    """Wraps a bound method on its instance and counts the calls."""

    def __init__(self, obj, name: str) -> None:
        self.calls = []
        original = getattr(obj, name)

        def counted(*args, **kwargs):
            self.calls.append(args)
            return original(*args, **kwargs)

        setattr(obj, name, counted)

    def __len__(self) -> int:
        return len(self.calls)


def window_from_command_line(qtbot, monkeypatch, argv):
    """``heapscope ARGV`` run in the test (``heapscope.cli.main``), with the
    event loop's ``exec`` replaced: the window it opened, shown, its load
    perhaps still under way."""
    from heapscope.cli import main
    from heapscope.gui.main_window import MainWindow
    shown = []

    def fake_exec(*args):
        shown.append(next(x for x in QApplication.topLevelWidgets()
                          if isinstance(x, MainWindow) and x.isVisible()))
        return 0

    monkeypatch.setattr(QApplication, "exec", fake_exec)
    assert main(argv) == 0
    w = shown[0]
    qtbot.addWidget(w)
    return w


#: tests/data/misbehaving.py: user strategies that misbehave on purpose
MISBEHAVING = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data",
                           "misbehaving.py")


def misbehaving_plugin(class_name: str):
    """A fixture body: ``class_name`` of tests/data/misbehaving.py registered
    (before the window is made: its picker lists the strategies then), and
    forgotten after the test."""
    from heapscope.allocators import plugins
    cls = plugins.load_file(f"{MISBEHAVING}:{class_name}")
    yield cls
    plugins.forget(cls.name)
