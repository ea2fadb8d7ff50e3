"""Starting the window: ``heapscope`` / ``python -m heapscope [open] [TRACE] [options]``.

The options (the trace, ``--strategy``, the strategy parameters) are parsed
and checked by the one parser of :mod:`heapscope.cli`; :func:`main` receives
them as a :class:`heapscope.cli.WindowRequest`.
"""

from __future__ import annotations

import sys

from PySide6.QtCore import QCoreApplication, QTimer
from PySide6.QtGui import QFont, QGuiApplication
from PySide6.QtWidgets import QApplication

from .theme import BASE_PT, Presentation

#: base font size in points on a 900-line screen (gui/theme.py scales it with the screen)
BASE_FONT_PT = BASE_PT


def configure_pyqtgraph() -> None:
    import pyqtgraph as pg
    pg.setConfigOptions(antialias=True, background="w", foreground="k")


def configure_app(app: QApplication, screen_height: int | None = None) -> QApplication:
    """Names (for QSettings), the font size and pyqtgraph's colours.  The font
    follows the screen (``screen_height`` logical pixels; default the primary
    screen's): 11 pt on a 900-line screen, 13.2 pt on 1080 lines
    (:func:`heapscope.gui.theme.screen_factor`)."""
    from .main_window import APPLICATION, ORGANIZATION
    QCoreApplication.setOrganizationName(ORGANIZATION)
    QCoreApplication.setApplicationName(APPLICATION)
    app.setApplicationDisplayName("heapscope")
    if screen_height is None:
        screen = QGuiApplication.primaryScreen()
        screen_height = screen.availableGeometry().height() if screen is not None else 900
    font = QFont(app.font())
    font.setPointSizeF(Presentation(screen_height=screen_height).body_pt)
    app.setFont(font)
    configure_pyqtgraph()
    return app


def make_window(spec: str | None = None, strategy: str | None = None, params: dict | None = None,
                strategy_params: dict[str, dict] | None = None, step: int | None = None,
                compare: list[str] | None = None, presenter: bool | None = None,
                theme: str | None = None, time_limit: float | None = None, lesson=None):
    """A configured MainWindow loading ``spec`` (None: the bundled default
    trace) through ``strategy`` with the parameters every strategy takes
    (``params``: word, align, heap_limit, pool_size) and each strategy's own
    (``strategy_params``, by strategy name: what -P gave), showing ``step``
    (clamped to the replay's length) once loaded; in presenter mode and the
    ``theme`` when given (else as the settings remember them).  ``compare``: 2
    to 7 strategies to show side by side instead (built at once, in worker
    processes).  ``lesson``: a lesson loaded and checked, played instead
    (it names its trace, strategies and parameters: docs/lessons.md)."""
    from heapscope import traces
    from .main_window import DEFAULT_STRATEGY, MainWindow
    app = QApplication.instance()
    configure_app(app)
    from .structure_views import load_all
    load_all()              # now, not when the first step is drawn
    window = MainWindow()
    if presenter is not None:
        window.set_presenter(presenter)
    if theme is not None:
        window.set_theme(theme)
    window.params = dict(params or {})
    if time_limit is not None:
        window.time_limit = time_limit
    window.strategy_params = {k: dict(v) for k, v in (strategy_params or {}).items()}
    if lesson is not None:
        window.lessons.play(lesson, at_once=True)       # (no event loop runs yet)
        return window
    window.set_strategy(strategy or (compare[0] if compare else DEFAULT_STRATEGY))
    if compare:
        window.compare.compare(compare)
    window.load_spec(spec if spec else str(traces.default_trace_path()), position=step)
    return window


def show_on_screen(window) -> None:
    """Show ``window`` no larger than the screen it opens on: its designed
    size (``MainWindow`` starts at 1400 x 900), cut to the screen's available
    rectangle with the window frame counted, and moved inside it (issue 24: a
    1280 x 720 projector got a window 1400 x 900, its timeline off the bottom)."""
    screen = window.screen() or QGuiApplication.primaryScreen()
    if screen is None:
        window.show()
        return
    avail = screen.availableGeometry()
    minimum = window.minimumSizeHint()
    window.resize(max(min(window.width(), avail.width()), minimum.width()),
                  max(min(window.height(), avail.height()), minimum.height()))
    window.show()
    # Only a shown window knows its frame (title bar, borders): cut that too.
    frame = window.frameGeometry()
    extra_w, extra_h = frame.width() - window.width(), frame.height() - window.height()
    width = max(min(window.width(), avail.width() - extra_w), minimum.width())
    height = max(min(window.height(), avail.height() - extra_h), minimum.height())
    if (width, height) != (window.width(), window.height()):
        window.resize(width, height)
    frame = window.frameGeometry()
    if not avail.contains(frame):
        window.move(max(avail.left(), min(frame.left(), avail.right() + 1 - frame.width())),
                    max(avail.top(), min(frame.top(), avail.bottom() + 1 - frame.height())))


def missing_display() -> str | None:
    """Why no window can open here, or None.  Qt aborts the process when it
    finds no display; a one-line reason with what to do instead is kinder."""
    import os
    if os.environ.get("QT_QPA_PLATFORM") or not sys.platform.startswith("linux"):
        return None
    if os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"):
        return None
    return ("no display found (DISPLAY and WAYLAND_DISPLAY are unset). "
            "'heapscope compare' prints the comparison table without a window; "
            "QT_QPA_PLATFORM=offscreen runs the window without a screen.")


def main(request) -> int:
    """Open the window as ``request`` (a :class:`heapscope.cli.WindowRequest`)
    says and run the event loop; the exit status."""
    reason = missing_display()
    if reason:
        print(f"heapscope: {reason}", file=sys.stderr)
        return 2
    app = QApplication.instance() or QApplication(sys.argv[:1])
    window = make_window(request.trace, request.strategy, request.params, request.strategy_params,
                         request.step, getattr(request, "compare", None),
                         getattr(request, "presenter", None), getattr(request, "theme", None),
                         getattr(request, "time_limit", None), getattr(request, "lesson", None))
    show_on_screen(window)
    from .gui_thread_gc import keep_long_lived
    keep_long_lived()         # the window's objects: no full collection goes over them again
    warm_up_after_load(window)
    return app.exec()


def warm_up_after_load(window) -> None:
    """Start the worker processes' server (``allocators.parallel.warm_up``)
    once the window's first load has ended, its step 0 drawn: a fresh Python
    importing the replay took the cores the trace's reading and the first
    paint needed, and step 0 of a 1 000 000-op trace showed 0.3 s later for
    it (issue 25, docs/benchmarks.md).  Each build starts the server itself
    if it is not up (on a thread of its own), so none waits for this."""
    from heapscope.allocators.parallel import warm_up
    loader = window.loader
    if not loader.busy:
        warm_up()
        return

    def loaded(busy: bool) -> None:
        if not busy:
            loader.busy_changed.disconnect(loaded)
            QTimer.singleShot(0, warm_up)     # after the paint the load asked for
    loader.busy_changed.connect(loaded)
