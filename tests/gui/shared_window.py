"""One MainWindow shared by the window tests that do not need a fresh one.

Making and showing a window costs about a fifth of a second of CPU
(pyqtgraph's plots, the first paints, the collection when it is freed),
which every test of the ``loaded`` fixture paid.  :class:`SharedWindow`
keeps one shown window a process and, before each test takes it, puts it
back as a fresh one is (:func:`reset`): nothing playing or loading, no
dialog, menu or message box open, next fit, the default speed, the panels
shown and the splitters where they were, no hover, the keys' focus on the
map, the settings (recent files, breakpoints, the sandbox's cut tick) of
the test's own folder, the sandbox of the trace shown forgotten, a new
structure view, pyqtgraph's axes with the room they had.  Then the test's
``loaded`` fixture opens its small trace in it as in a fresh window.

The reset is checked, not trusted: the window's whole state
(tests/gui/window_state.py) after the reset and the load must equal the
state it had the first time (when it was fresh); when it does not, the
window is thrown away and the test gets a new one.  What the reset does
not undo (:func:`far_from_fresh`: compare mode, a lesson, unsaved edits,
presenter mode, a resize, a dock shown...; a method a test wrapped on an
instance; a failed test) throws it away at once.  So a test that leaves
something behind costs a window, never another test's correctness.
tests/gui/test_shared_window.py dirties each piece of state and checks
that the reset returns a window equal to a fresh one.

Tests that need a window made for them (one built with settings already
written, one they close) are marked ``fresh_window``.
"""

from __future__ import annotations

import functools
import gc
import types

import shiboken6
from PySide6.QtCore import QEvent
from PySide6.QtWidgets import (QApplication, QDockWidget, QLineEdit, QSplitter, QToolTip,
                               QWidget)

from .window_state import differences, receivers, window_state


def make_window(qtbot):
    """A new MainWindow, shown and active (as the ``window`` fixture's always was)."""
    from heapscope.gui.app import configure_app
    from heapscope.gui.main_window import MainWindow
    configure_app(QApplication.instance())
    w = MainWindow()
    w.show()
    qtbot.waitExposed(w)
    w.activateWindow()
    w._fresh_counters = [(obj, name, getattr(obj, name)) for obj, names in (
        (w.model.counts, ("explain", "structure")),
        (w.heap_map.cells, ("full_paints", "partial_paints")),
        (w.file_watch, ("reloads",)),
        (w.player, ("_asked", "_offset_ms", "_last_ask_ms", "_held")),
        (w.animator, ("_at", "enabled")),
        (w.lessons.panel, ("room",))) for name in names]
    w._fresh_splits = [(split, split.sizes()) for split in w.findChildren(QSplitter)]
    w._fresh_presentation = w.presentation
    w._fresh_size = w.size()
    # a dock once shown leaves the window's dock tabs and scroll bars changed
    w._fresh_dock_shown = []
    for dock in w.findChildren(QDockWidget):
        dock.visibilityChanged.connect(lambda on, d=dock: on and w._fresh_dock_shown.append(d))
    return w


def _fresh_structure_view(panel) -> None:
    """The structure panel with no view, as in a window just made: the next
    step shown makes its view anew (zoom, scroll and hover as a new one's),
    as the panel does when the structure's kind changes."""
    from PySide6.QtWidgets import QLabel
    old = panel.view
    if old is None:
        return
    panel._placeholder = QLabel("")
    panel._box.replaceWidget(old, panel._placeholder)
    panel._box.setStretchFactor(panel._placeholder, 1)
    old.hide()
    old.deleteLater()
    panel.view, panel.kind = None, None


def _axes(w) -> list:
    import pyqtgraph as pg
    return [item for view in w.findChildren(pg.GraphicsView) for item in view.items()
            if isinstance(item, pg.AxisItem)]


def note_axes(w) -> None:
    """Note the room each pyqtgraph axis keeps for its labels once the first
    trace is shown (tests/gui/conftest.py's ``loaded``, in a fresh window)."""
    w._fresh_axis_room = {id(a): (a.textWidth, a.textHeight) for a in _axes(w)}


def _fresh_axes(w) -> None:
    """pyqtgraph's axes widen for the longest tick label they showed and
    never narrow again (another strategy's bigger numbers, a zoom): back to
    the room they had in the fresh window with the small trace shown, which
    the next load needs again (pyqtgraph has no public call for it)."""
    for axis in _axes(w):
        room = getattr(w, "_fresh_axis_room", {}).get(id(axis))
        if room is not None and room != (axis.textWidth, axis.textHeight):
            axis.textWidth, axis.textHeight = room
            # only the side the axis sizes itself along: _updateHeight on a
            # left axis fixes its height at a bottom axis's (39 px on a map
            # 150 px tall, the next test's map drawn with a stub of an axis)
            if axis.orientation in ("left", "right"):
                axis._updateWidth()
            else:
                axis._updateHeight()


def quiet(w) -> None:
    """Nothing playing, animating or loading in ``w``, no message box open
    (what the ``window`` fixture's teardown always did)."""
    w.player.pause()
    w.animator.finish()
    if w.message_box is not None:
        w.message_box.close()
    w.loader.cancel()
    w.loader.wait()


def destroy(w) -> None:
    """Close ``w`` and let Qt delete it while no replay thread runs.  Its
    Python wrappers are freed by the collection here or a later one in the
    GUI thread (gui/gui_thread_gc.py): pyqtgraph's parentless menus in those
    cycles are live QWidgets, and a widget freed in the middle of its own
    paint crashed the process (tests/conftest.py's ``qtbot``)."""
    QToolTip.hideText()
    QApplication.processEvents()       # what it queued for itself (a relayout) runs first
    w.close()
    w.deleteLater()
    QApplication.sendPostedEvents(None, QEvent.DeferredDelete)
    del w
    gc.collect()


def _close_others(w) -> None:
    """Close every other top-level window shown (dialogs, menus, boxes; not
    another MainWindow, which has its owner)."""
    from heapscope.gui.main_window import MainWindow
    for other in QApplication.topLevelWidgets():
        if other is not w and other.isVisible() and not isinstance(other, MainWindow):
            other.close()
    QApplication.sendPostedEvents(None, QEvent.DeferredDelete)


def _fresh_predict_bar(bar) -> None:
    """The predict band as a window's new one is, its mode off: hidden, its
    labels and buttons empty (the band keeps the last question's texts when
    it is turned off, and a fresh band never had any)."""
    from PySide6.QtWidgets import QPushButton
    bar.setVisible(False)
    bar.question.set_full_text("")
    bar.verdict.set_full_text("")
    bar.verdict.setStyleSheet("")
    bar.score.setText("")
    for button in bar.findChildren(QPushButton):
        button.setText("")
        button.setEnabled(True)


def fresh_speed_box(w) -> None:
    """The default speed, and the speed box's items only gui/player.py's
    SPEEDS: a speed off that list (``MAX_ANIMATED_SPEED``, 4 steps/s, the
    fastest that plays a step's events) gets an item of its own
    (``TimelineBar.show_speed``), which a fresh window does not have."""
    from heapscope.gui.player import DEFAULT_SPEED, SPEEDS
    w.player.set_speed(DEFAULT_SPEED)
    box = w.bar.speed_box
    for i in reversed(range(box.count())):
        if box.itemData(i) not in SPEEDS:
            box.removeItem(i)


def reset(w) -> None:
    """Put ``w`` back as a fresh window is, before a test takes it (see the
    module's docstring); what it leaves, :class:`SharedWindow` notices."""
    from heapscope.gui.main_window import DEFAULT_STRATEGY, open_settings
    from heapscope.gui.find_panel import FIND_PROMPT
    from heapscope.gui.sandbox_edits import CUT_SETTING, setting_bool
    quiet(w)
    _close_others(w)
    if w.lessons.player.lesson is not None:      # (playing, or its first stop to come)
        w.lessons.player.close()
    if w.compare.active:
        w.compare.leave()
    w.compare.loader.cancel()
    w.loading.stop()
    w.finder.stop()
    w.finder.dock.hide()
    w.finder.panel.say(FIND_PROMPT)
    # the sandbox of the trace shown (made on first use: the trace editor,
    # a block's menu), its undo and redo with it; unsaved edits never get here
    w.edits.sandbox = None
    w.edits.refresh()
    w.set_predict(False)
    w.reset_predict_score()
    _fresh_predict_bar(w.predict_bar)
    for dock in (w.panels.params_dock, w.panels.editor_dock, w.lessons.dock):
        dock.hide()
    # the test's own settings folder (tests/gui/conftest.py points IniFormat there)
    settings = open_settings()
    w.settings = w.recent.settings = w.finder.breakpoints.settings = settings
    w.finder.breakpoints.load()
    if w.presentation != w._fresh_presentation:
        w.apply_presentation(w._fresh_presentation)
    w.edits.act_cut.setChecked(setting_bool(settings.value(CUT_SETTING, False)))
    fresh_speed_box(w)
    w.strategy_name = DEFAULT_STRATEGY
    w.loading.last_builtin = DEFAULT_STRATEGY
    w.sync_strategy_widgets()
    w.statusBar().clearMessage()
    # the panels as they open, the splitters where they were
    w.set_plots_visible(True)
    for panel, act in ((w.structure_panel, w.act_structure), (w.explain_panel, w.act_explain)):
        act.setChecked(True)
        w.window_layout.show_panel(panel, True)
    # what a step's animation leaves behind
    w.animator._final = None
    w.animator._script = []
    if "_move_share" in vars(w.animator):
        del w.animator._move_share
    # the pointer off the map and the views, as over a window just shown
    for widget in w.findChildren(QWidget):
        if type(widget).__module__.startswith("heapscope."):
            QApplication.sendEvent(widget, QEvent(QEvent.Leave))
    w.model.set_hover(None)
    _fresh_structure_view(w.structure_panel)
    _fresh_axes(w)
    w.resize(1400, 900)
    QApplication.processEvents()
    # counters the tests read (how often the costly parts ran, the map's
    # paints), as they were in the fresh window
    for obj, name, value in w._fresh_counters:
        setattr(obj, name, value)
    for split, sizes in w._fresh_splits:
        split.setSizes(sizes)
    w.window_layout.sync_panel_actions()
    w.recent.fill_menu()
    w.activateWindow()
    w.heap_map.plot_widget.setFocus()
    QApplication.processEvents()
    # counters the tests read (how often the costly parts ran, the map's
    # paints), as they were in the fresh window
    for obj, name, value in w._fresh_counters:
        setattr(obj, name, value)


def far_from_fresh(w) -> bool:
    """``w`` was taken where the reset does not bring it back from: compare
    mode's rows, closed, a lesson, unsaved edits in the sandbox or the trace editor
    filled, a strategy of the user's own or with parameters, checking after
    every step, a search or its panel's text, presenter mode
    or the dark theme, the window resized (pyqtgraph's axes keep the room
    their bigger labels took), a dock shown (the window's dock tabs and
    scroll bars stay changed)."""
    from heapscope.allocators.registry import STRATEGIES
    return bool(not w.isVisible() or w.compare.active or w.compare.names or w.lessons.player.lesson is not None
                or w.edits.dirty or w.params or w.strategy_params
                or not STRATEGIES[w.strategy_name].__module__.startswith("heapscope.")
                or w.check_steps.on
                or w.finder._condition is not None or w.finder.result is not None
                or w.finder.panel.findChildren(QLineEdit)[0].text()
                or getattr(w.panels.editor, "text_ops", None)
                or w.presentation != w._fresh_presentation
                or w.size() != w._fresh_size or w._fresh_dock_shown)


def wrapped_methods(w) -> list[str]:
    """Methods a test replaced on an instance of the window's parts (as
    tests/gui/conftest.py's ``Counter`` does): no reset unwraps them."""
    from .window_state import reachable
    found = []
    for path, obj in reachable(w):
        for name, value in vars(obj).items():
            if isinstance(value, (types.FunctionType, types.MethodType, functools.partial)) \
                    and isinstance(getattr(type(obj), name, None), types.FunctionType):
                found.append(f"{path}.{name}")
    return found


def connected(w, pristine) -> list[str]:
    """The signals of the window and its parts connected to more slots than
    in the fresh window (a test's own function, left connected)."""
    if pristine is None:
        return []
    fresh = pristine["receivers"]
    return [name for name, n in receivers(w).items() if name in fresh and n > fresh[name]]


class SharedWindow:
    """The shared window of one test process (see the module's docstring)."""

    def __init__(self) -> None:
        self.window = None
        #: the window's state the first time, when it was fresh
        self.pristine: dict | None = None
        #: how often a reset window was thrown away, and why (the first difference)
        self.replaced: list[str] = []
        #: tests served, windows made
        self.taken = self.made = 0

    def take(self, qtbot):
        """The shared window, reset (a new one the first time)."""
        if self.window is not None and not shiboken6.isValid(self.window):
            self.window = None              # a test deleted it
        if self.window is not None:
            self.window.move(self._home)    # give_back moved it aside
            reset(self.window)
        else:
            self.window = make_window(qtbot)
            self.pristine = None        # its state, once loaded, is the fresh one
            self.made += 1
        return self.window

    def check(self, placeholders: dict) -> None:
        """After the test's fixture loaded its trace: the state equals the
        first one, else the window is replaced by a new one (which the
        caller loads again)."""
        state = window_state(self.window, placeholders)
        if self.pristine is None:
            self.pristine = state
            note_axes(self.window)
            return
        found = differences(self.pristine, state, limit=1)
        if found:
            self.replaced.append(found[0])
            self.drop()
            raise Replaced(found[0])

    def give_back(self, failed: bool) -> None:
        """The test is over: quiet the window; after a failure, or when the
        test went where the reset does not follow, throw it away now (rather
        than after the next test's load)."""
        if self.window is None:
            return
        if not shiboken6.isValid(self.window):
            self.window = None
            return
        quiet(self.window)
        if failed or far_from_fresh(self.window) or wrapped_methods(self.window) or connected(
                self.window, self.pristine):
            self.drop()
        else:
            # Moved aside between its tests (hiding it would cost its active
            # state): a window left over the screen takes the cursor's moves
            # meant for another test's own widget (a hover test of the tree
            # view timed out behind it).
            self._home = self.window.pos()
            self.window.move(self._home.x() + 8000, self._home.y())

    def drop(self) -> None:
        if self.window is not None:
            w, self.window = self.window, None
            quiet(w)
            destroy(w)


class Replaced(Exception):
    """The reset window was not as fresh as the first: a new one was made."""
