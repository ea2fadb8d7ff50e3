"""Lessons in the window: File > Lessons, the lesson's keys and its narration
dock (docs/lessons.md, "Playing a lesson").

:class:`LessonPart` belongs to the :class:`~heapscope.gui.main_window.MainWindow`.
It makes

* **File > Lessons**: the bundled lessons (``heapscope/lessons/*.md``, by
  title), then Open Lesson File… (``Ctrl+Shift+O``), then the lesson's moves;
* the moves, each an action with its key: **Next Stop** (Page Down),
  **Previous Stop** (Page Up) -- the keys a presentation clicker sends -- and
  **Back to Stop** (Backspace: the current stop again after wandering off
  with the free controls, which all stay);
* the narration panel (:class:`~heapscope.gui.lesson_panel.LessonPanel`) in a
  dock on the window's right, shown while a lesson plays.

A lesson is loaded and checked (:func:`heapscope.lessons.load_lesson`: every
claim) before the window changes, on a loader thread of its own
(:class:`~heapscope.gui.loader.Loader`), so that the window goes on drawing
while its strategies are replayed (2 s for vo1989-table's three; issue 25),
with the steps replayed in a progress dialog and its Cancel; a broken one
is a message box naming the file and line, and the window keeps what it
showed.  The stops are played by a
:class:`~heapscope.gui.lesson_player.LessonPlayer`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from PySide6.QtCore import QCoreApplication, QEvent, QObject, Qt, QTimer
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QDockWidget, QFileDialog, QMenu

from heapscope.lessons import LessonError, bundled_lessons, lesson_path, load_lesson

from .lesson_panel import WIDTH_CHARS, LessonPanel
from .lesson_player import LessonPlayer
from .loader import Loader, LoadRequest
from .step_animator import MAX_ANIMATED_SPEED
from .window_menus import action

LESSON_FILTER = "Lessons (*.md);;All files (*)"
#: the dock's width at text scale 1
DOCK_WIDTH = 300
#: pixels left beside the narration for the views' minimum to grow
ROOM_SLACK = 48
#: a window narrower than this (at text scale 1) gives compare mode's ranking
#: column's room to the narration while a lesson plays
ROOMY_WIDTH = 1500
#: a lesson opened while the player is faster than steps animate
#: (gui/step_animator.py) brings it down to this, so that the steps between
#: two stops play their events
LESSON_SPEED = 2


@dataclass(frozen=True)
class LoadLesson:
    """A loader request's ``make_trace`` that loads, replays and checks the
    lesson in ``path`` on the loader's thread: the steps replayed are its
    progress, and Cancel stops the replays (:class:`~heapscope.gui.loader.ReplayJob`
    passes both, as ``replays`` says)."""
    path: str
    replays = True

    def __call__(self, progress=None, cancel=None):
        lesson = load_lesson(self.path, progress=progress, cancel=cancel)
        stats = getattr(lesson.trace, "stats", None)
        if callable(stats):
            stats()             # made here, not in the heap map's first paint
        return lesson


class LessonPart(QObject):
    def __init__(self, window) -> None:
        super().__init__(window)
        self.window = window
        self.player = LessonPlayer(window)
        #: loads a lesson off the GUI thread (the window's own loader reads traces)
        self.loader = Loader(window)
        self.loader.succeeded.connect(self._loaded)
        self.loader.failed.connect(self._load_failed)
        self.loader.cancelled.connect(self._load_cancelled)
        self.act_next = action(window, "&Next Stop", self.player.next, ["PgDown"],
                               tip="The lesson's next stop, playing the steps on the way")
        self.act_back = action(window, "&Previous Stop", self.player.back, ["PgUp"],
                               tip="The lesson's stop before, as it was")
        self.act_stop = action(window, "&Back to Stop", self.player.back_to_stop, ["Backspace"],
                               tip="The lesson's current stop again, after looking around")
        self.act_open = action(window, "&Open Lesson File…", self.ask_open, ["Ctrl+Shift+O"],
                               tip="Play a lesson written in a file (docs/lessons.md)")
        for act, text in ((self.act_next, "Next ▶"), (self.act_back, "◀ Back"), (self.act_stop, "↩ Stop")):
            act.setIconText(text)
            act.setEnabled(False)
        self.panel = LessonPanel(self.act_back, self.act_stop, self.act_next)
        self.dock = QDockWidget("Lesson", window)
        self.dock.setObjectName("lesson_dock")
        self.dock.setWidget(self.panel)
        self.dock.setAllowedAreas(Qt.LeftDockWidgetArea | Qt.RightDockWidgetArea)
        window.addDockWidget(Qt.RightDockWidgetArea, self.dock)
        self.dock.hide()
        self.menu = self._menu()
        self.player.changed.connect(lambda: self.panel.show_player(self.player))
        self.player.changed.connect(self._make_room)
        # presenter mode changes every size: the room is measured again once laid out
        window.act_presenter.toggled.connect(lambda *_: QTimer.singleShot(0, self._make_room))
        self.player.active_changed.connect(self._active)
        self.panel.chosen.connect(self.player.answer_choice)
        self.panel.grow_asked.connect(self.player.answer_grow)
        self.panel.reveal_asked.connect(self.player.reveal)
        # a click on a block answers a click question (and selects it, as always)
        window.heap_map.block_clicked.connect(lambda addr: self.player.answer_click(0, addr))
        window.structure_panel.block_clicked.connect(lambda addr: self.player.answer_click(0, addr))
        window.compare.view.row_clicked.connect(self.player.answer_click)

    def _menu(self):
        w = self.window
        menu = QMenu("&Lessons", w.menus["file"])
        w.menus["file"].insertMenu(w.act_workload, menu)      # after Open Example
        menu.setToolTipsVisible(True)
        for path in bundled_lessons():
            act = menu.addAction(path.stem)
            act.setToolTip(f"heapscope lesson {path.stem}")
            act.triggered.connect(lambda checked=False, p=str(path): self.open_file(p))
        menu.addSeparator()
        menu.addAction(self.act_open)
        menu.addSeparator()
        for act in (self.act_next, self.act_back, self.act_stop):
            menu.addAction(act)
        self.act_panel = self.dock.toggleViewAction()      # the panel again, once closed
        self.act_panel.setText("Lesson &Panel")
        menu.addAction(self.act_panel)
        return menu

    # ================================================================ opening
    def ask_open(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self.window, "Open a lesson", "", LESSON_FILTER)
        if path:
            self.open_file(path)

    def open_name(self, spec: str) -> None:
        """A bundled lesson's name (``roving-pointer``) or a lesson file."""
        bundled = lesson_path(spec)
        self.open_file(str(bundled) if bundled is not None and not os.path.exists(spec) else spec)

    def open_file(self, path: str) -> None:
        """Load, check and play the lesson in ``path``, loaded on the
        lesson loader's thread; a broken one is a message box with its file
        and line (the window keeps what it shows).  Returns at once."""
        name = os.path.basename(path)
        self.window.statusBar().showMessage(f"Checking the lesson {name}…")
        self.loader.start(LoadRequest(f"the lesson {name}", LoadLesson(path), None, {}, source=path,
                                      time_limit=None))

    @property
    def loading(self) -> bool:
        """A lesson is being loaded (or its first stop is still to show)."""
        return self.loader.busy or self.player.starting

    def stop_loading(self) -> None:
        """Cancel a lesson being loaded and wait for its thread (closing the window)."""
        self.loader.cancel()
        self.loader.wait()

    def _loaded(self, result) -> None:
        self.play(result.trace)

    def _load_failed(self, exc, request) -> None:
        w = self.window
        path = request.source
        w.statusBar().showMessage(f"Could not open the lesson {path}", 8000)
        if isinstance(exc, LessonError):
            box = w.show_error(f"Cannot play {os.path.basename(path)}", "This lesson cannot be played "
                               "as written (heapscope lesson check says the same).", str(exc))
        else:
            box = w.show_error(f"Cannot play {os.path.basename(path)}", f"Loading the lesson failed: {exc}")
        # the keys go to the window again once the box closes, as after the
        # loader's progress dialog (offscreen, and window managers that do
        # not hand focus back, leave no window active)
        box.finished.connect(lambda _=0: w.activateWindow() if w.isVisible() else None)

    def _load_cancelled(self, request) -> None:
        self.window.statusBar().showMessage(f"Cancelled: {request.label} was not opened", 8000)

    def play(self, lesson, stop: int = 0, at_once: bool = False) -> None:
        """Play ``lesson`` (loaded and checked) from its stop ``stop``
        (``at_once``: shown before this returns, not a turn later)."""
        w = self.window
        if w.player.speed > MAX_ANIMATED_SPEED:
            w.player.set_speed(LESSON_SPEED)
        self.player.start(lesson, stop, at_once)     # the keys said once it shows (_active)

    def presentation_changed(self) -> None:
        """The window's text size or screen changed (presenter mode, a
        screen of another height): the narration's room is made again once
        the views have their new sizes."""
        if self.player.active:
            QTimer.singleShot(0, self._make_room)

    def _make_room(self) -> None:
        """On a narrow window, compare mode's ranking column makes way for the
        narration, and the narration takes no more than the views leave."""
        w = self.window
        narrow = w.width() < ROOMY_WIDTH * w.presentation.text_scale
        w.compare.view.set_side_visible(not (self.player.active and narrow))
        if not self.player.active:
            # no narration to make room for (a lesson's first stop is shown
            # before its panel: measuring here was 24 ms of that turn)
            w.gauges.set_narrow(False)
            return
        screen = w.screen()
        width = screen.availableGeometry().width() if screen is not None else w.width()

        def room() -> int:
            # the gauges' new fonts reach the layouts through posted events
            QCoreApplication.sendPostedEvents(None, QEvent.LayoutRequest)
            views = w.centralWidget().minimumSizeHint().width()
            # the gauges' numbers widen the views' minimum as they change: keep some slack
            return min(width, max(w.width(), views)) - views - ROOM_SLACK

        # One strategy on a narrow window: the six gauges' strip held the
        # window to 1061 px in presenter mode at 1280 x 720, and the
        # narration to 205; narrow gauges (titles wrapped, smaller numbers)
        # leave it its width, and the map and the structure view keep theirs.
        gauges = w.gauges
        narrow = False
        if self.player.active and not w.compare.active:
            gauges.set_narrow(False)
            wanted = self.panel.fontMetrics().averageCharWidth() * WIDTH_CHARS
            narrow = room() < wanted
        gauges.set_narrow(narrow)
        self.panel.set_room(room())
        if narrow:
            # the room the narrow gauges gave goes to the narration, once
            # the window has laid them out (each time: the dock may show
            # only after the gauges narrowed, a lesson's first stop a turn later)
            QTimer.singleShot(0, self._widen_dock)

    def _widen_dock(self) -> None:
        # to the narration's own width (its 30 characters), no wider: the
        # structure view beside it keeps the rest (TLSF's matrix needs it)
        wanted = self.panel.fontMetrics().averageCharWidth() * WIDTH_CHARS + 8
        if self.dock.isVisible() and self.dock.width() < wanted:
            self.window.resizeDocks([self.dock], [wanted], Qt.Horizontal)

    def _active(self, on: bool) -> None:
        if not on:
            self._make_room()
        for act in (self.act_next, self.act_back, self.act_stop, self.act_panel):
            act.setEnabled(on)
        self.dock.setVisible(on)
        if on:
            self.window.statusBar().showMessage(
                f"{self.player.lesson.title}: Page Down for the next stop, Page Up for the one "
                f"before, Backspace back to the stop", 10000)
            self.dock.raise_()
            width = round(DOCK_WIDTH * self.window.presentation.text_scale)
            self.window.resizeDocks([self.dock], [width], Qt.Horizontal)
            # measured with the dock shown (its first stop, shown in the turn
            # before: LessonPlayer._first_stop, measured it hidden), and again
            # once the gauges it narrowed are laid out: the room they gave
            # goes to the narration then
            self._make_room()
            QTimer.singleShot(0, self._make_room)
