"""Fixtures for the window tests: offscreen Qt, settings in a temporary folder,
small traces on disk, a shown MainWindow and a helper that waits for a load."""

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402
from PySide6.QtCore import QSettings  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from heapscope import traces  # noqa: E402

from .shared_window import Replaced, SharedWindow, destroy, make_window, quiet  # noqa: E402

#: small enough to replay in a few tens of milliseconds
SMALL_STEPS = 500


@pytest.fixture(autouse=True)
def temporary_settings(tmp_path):
    """Recent files etc. go to a fresh INI file, never to the user's own."""
    QSettings.setPath(QSettings.IniFormat, QSettings.UserScope, str(tmp_path / "settings"))
    yield


@pytest.fixture(scope="session")
def _fresh_look(qapp):
    """The application's font and palette as a fresh window has them: the
    font ``configure_app`` sets for the screen, the light theme's palette."""
    from PySide6.QtGui import QFont, QPalette
    from heapscope.gui.app import configure_app
    from heapscope.gui.theme import LIGHT, qt_palette
    configure_app(qapp)
    qapp.setPalette(qt_palette(LIGHT))
    return QFont(qapp.font()), QPalette(qapp.palette())


@pytest.fixture(autouse=True)
def fresh_application_look(qapp, _fresh_look):
    """After each test, the application's font and palette are a fresh
    window's again: presenter mode (or a test) sets the application font
    and the dark theme its palette, and a view made by the next test took
    them (a narrow TLSF view folded other rows at presenter mode's 16 pt).
    Set up before the windows, torn down after them (a shared window's reset
    puts its own presentation back first)."""
    put_back_look(qapp, *_fresh_look)
    yield
    put_back_look(qapp, *_fresh_look)


def put_back_look(app, font, palette) -> None:
    """The application's font and palette set to these (when they differ:
    a change is sent to every widget)."""
    if app.font() != font:
        app.setFont(font)
    if app.palette() != palette:
        app.setPalette(palette)


@pytest.fixture(scope="session")
def small_trace():
    return traces.make_workload("vo1989", steps=SMALL_STEPS, seed=11)


@pytest.fixture
def small_trace_path(tmp_path, small_trace):
    path = tmp_path / "small.rep"
    traces.write_rep(small_trace, path)
    return str(path)


#: the window the ``loaded`` tests share (tests/gui/shared_window.py)
SHARED = SharedWindow()


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "fresh_window: the test gets a window made for it, not the shared one "
        "(tests/gui/shared_window.py)")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Keep each phase's report on the item: a shared window a test failed
    in is thrown away, whatever state it was left in."""
    outcome = yield
    report = outcome.get_result()
    setattr(item, "report_" + report.when, report)


@pytest.fixture(scope="session", autouse=True)
def _close_the_shared_window(qapp):
    """At the end of the session, close the shared window while the
    application still exists."""
    yield
    SHARED.drop()


def pytest_terminal_summary(terminalreporter):
    """HEAPSCOPE_SHARED_WINDOW=1: how often the shared window served, and why
    a reset one was replaced."""
    if os.environ.get("HEAPSCOPE_SHARED_WINDOW") and SHARED.taken:
        terminalreporter.write_line(f"shared window: {SHARED.taken} tests, "
                                    f"{SHARED.made} windows made, {len(SHARED.replaced)} replaced "
                                    "after a reset")
        for why in SHARED.replaced:
            terminalreporter.write_line("  replaced: " + why[:300])
    from .shared_compare import MADE
    for shared in MADE if os.environ.get("HEAPSCOPE_SHARED_WINDOW") else ():
        terminalreporter.write_line(f"shared compare window ({', '.join(shared.names)}): "
                                    f"{shared.taken} tests, {shared.made} windows made, "
                                    f"{len(shared.replaced)} replaced after a reset")
        for why in shared.replaced:
            terminalreporter.write_line("  replaced: " + why[:300])


def _shared(request) -> bool:
    """The test may have the shared window: it uses ``loaded`` (a trace
    opened in it after the reset) and is not marked ``fresh_window``."""
    return "loaded" in request.fixturenames and request.node.get_closest_marker("fresh_window") is None


@pytest.fixture
def window(request, qtbot):
    if _shared(request):
        w = SHARED.take(qtbot)
        yield w
        report = getattr(request.node, "report_call", None)
        SHARED.give_back(failed=report is None or report.failed)
        return
    w = make_window(qtbot)
    qtbot.addWidget(w)
    yield w
    quiet(w)
    # Tear the window down here, while no replay thread runs: close it and let
    # Qt delete it (tests/gui/shared_window.py, destroy).
    destroy(w)


def wait_loaded(qtbot, window, start, timeout=20000):
    """Run ``start()`` (which begins a background load) and wait until the
    window shows the new timeline."""
    with qtbot.waitSignal(window.timeline_changed, timeout=timeout):
        start()
    assert not window.busy


@pytest.fixture
def loaded(request, qtbot, window, small_trace_path, tmp_path):
    """The window showing the small trace (through next-fit): the shared
    window, reset (tests/gui/shared_window.py), unless the test is marked
    ``fresh_window``."""
    settings = window.settings
    written = {key: settings.value(key) for key in settings.allKeys()}
    wait_loaded(qtbot, window, lambda: window.open_trace(small_trace_path))
    if window is not SHARED.window:
        return window
    qtbot.wait(1)           # the views' redraws after the load, as a fresh window's
    try:
        SHARED.check({str(tmp_path): "<tmp>"})
    except Replaced:
        # a new window, made before the load as a fresh one is (the load
        # wrote the recent files a window reads when it is made)
        settings.clear()
        for key, value in written.items():
            settings.setValue(key, value)
        settings.sync()
        window = SHARED.take(qtbot)
        wait_loaded(qtbot, window, lambda: window.open_trace(small_trace_path))
        qtbot.wait(1)
        SHARED.pristine = None          # a fresh window's state is fresh by definition
        SHARED.check({str(tmp_path): "<tmp>"})
    SHARED.taken += 1
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


def opened_window():
    """The MainWindow shown that is not the shared one (tests/gui/shared_window.py,
    which may be shown too): the one the command line opened."""
    from heapscope.gui.main_window import MainWindow
    return next(x for x in QApplication.topLevelWidgets()
                if isinstance(x, MainWindow) and x.isVisible() and x is not SHARED.window)


def window_from_command_line(qtbot, monkeypatch, argv):
    """``heapscope ARGV`` run in the test (``heapscope.cli.main``), with the
    event loop's ``exec`` replaced: the window it opened, shown, its load
    perhaps still under way."""
    from heapscope.cli import main
    shown = []

    def fake_exec(*args):
        shown.append(opened_window())
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
