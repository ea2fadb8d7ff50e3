"""One window already in compare mode, shared by the compare tests that look.

tests/gui/test_compare_mode.py's ``compared`` tests each paid for a window,
the small trace's load and compare mode's three rows (next fit, TLSF,
buddy: two timelines built in worker processes, three maps, gauges and
structure views made and painted): about a second of CPU before the test
did anything.  :class:`SharedCompare` keeps one such window a module and,
before a test takes it, puts it back where it was when it was new
(:func:`reset`: nothing playing, no dialog or message box, the step it
showed, the default speed, the maps fitted, no hover or selection, the
table ranked as it opens, the rows' structure views as they were).

As with tests/gui/shared_window.py, the reset is checked, not trusted: the
window's whole state (tests/gui/window_state.py) after the reset must equal
the state it had when it was new, or it is thrown away and the test gets a
new one.  A window left out of compare mode or with other rows, another
trace, predict mode, a wrapped method, a failed test is thrown away at once.
So a test that leaves something behind costs a window, never another test's
correctness.
"""

from __future__ import annotations

import shiboken6
from PySide6.QtCore import QEvent
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QApplication, QWidget

from .shared_window import (_close_others, _fresh_predict_bar, connected, destroy, fresh_speed_box,
                            make_window, quiet, wrapped_methods)
from .window_state import differences, window_state


def reset(w, position: int, counters: dict) -> None:
    """Put the compare window ``w`` back as it was when it was new, at ``position``."""
    from heapscope.gui.ranking import MEASURES
    quiet(w)
    _close_others(w)
    fresh_speed_box(w)
    w.statusBar().clearMessage()
    view = w.compare.view
    table = view.table
    table.rank_by = MEASURES[0].key
    for widget in w.findChildren(QWidget):
        if type(widget).__module__.startswith("heapscope."):
            QApplication.sendEvent(widget, QEvent(QEvent.Leave))
    w.model.set_hover(None)
    w.model.select(None)
    if w.predict.active:
        w.set_predict(False)
    w.reset_predict_score()
    _fresh_predict_bar(w.predict_bar)
    for row in view.shown_rows():
        row.select(None)
        # the last request's label place, kept for a redraw while it shows
        vars(row.map).pop("_request_at", None)
    w.animator._final = None
    w.animator._script = []
    if "_move_share" in vars(w.animator):
        del w.animator._move_share
    # the seeks' caches and counters, as in the timelines just built (their
    # checkpoints, the densifier's among them, stay: it finished before the
    # window's state was first read, see SharedCompare._make)
    w.seek(position)
    from heapscope.allocators.heap_tracker import HeapTracker
    from heapscope.allocators.replay import BackCache
    model = w.model
    for key in model._trackers:
        model._trackers[key] = HeapTracker()
    for key, tl in model._timelines.items():
        tl.back_cache = BackCache(tl.back_cache.states, tl.back_cache.max_bytes)
        tl.replayed_ops = tl.restores = tl.copies_taken = tl.copies_kept = 0
    table._widest = {}
    table.redraw()
    # a redraw's throttle clock, made by the first redraw a step asked for
    if not table.__dict__.get("_redraw_pending"):
        table.__dict__.pop("_redraw_pending", None)
        table.__dict__.pop("_redraw_clock", None)
    timer = table.__dict__.get("_redraw_timer")
    if timer is not None and not timer.isActive():
        del table._redraw_timer
    # the counters tests read (how often the costly parts ran, the player's
    # asks), as when new
    for name, value in counters.items():
        setattr(model.counts, name, value)
    for obj, name, value in w._fresh_counters:
        setattr(obj, name, value)
    w.heap_map_fit()
    QApplication.processEvents()
    w.activateWindow()
    QApplication.processEvents()


#: every SharedCompare made in this process (HEAPSCOPE_SHARED_WINDOW=1 reports them)
MADE: list = []


class SharedCompare:
    """The compare-mode window of one module's tests (see the module's docstring)."""

    def __init__(self, names: list[str]) -> None:
        MADE.append(self)
        self.names = list(names)
        self.window = None
        self.pristine: dict | None = None
        self.trace = None
        self.position = 0
        self.placeholders: dict = {}
        #: why a reset window was thrown away (the first difference)
        self.replaced: list[str] = []
        self.taken = self.made = 0

    def take(self, qtbot, trace_path: str, tmp_path, enter, test: str = "") -> object:
        """The shared compare window, reset (a new one the first time, or
        when the reset one is not as it was)."""
        w = self.window
        if w is not None and not shiboken6.isValid(w):
            self.window = w = None
        if w is not None:
            w.move(self._home)
            reset(w, self.position, self.counters)
            found = differences(self.pristine, window_state(w, self.placeholders), limit=3)
            if found:
                self.replaced.append(f"after {self.last_test}: " + " | ".join(found))
                self.drop()
                w = None
        if w is None:
            w = self._make(qtbot, trace_path, tmp_path, enter)
        self.taken += 1
        self.last_test = test
        return w

    def _make(self, qtbot, trace_path, tmp_path, enter):
        from .conftest import wait_loaded
        w = self.window = make_window(qtbot)
        self.made += 1
        wait_loaded(qtbot, w, lambda: w.open_trace(trace_path))
        enter(qtbot, w, self.names)
        densifier = w.compare.densifier
        if densifier.busy:
            with qtbot.waitSignal(densifier.finished, timeout=60000):
                pass
        self.trace = w.trace
        self.position = w.model.position
        self.counters = dict(vars(w.model.counts))
        self.actions = len(w.findChildren(QAction))
        self.placeholders = {str(tmp_path): "<tmp>"}
        reset(w, self.position, self.counters)
        self.pristine = window_state(w, self.placeholders)
        self._receivers = {"receivers": self.pristine["receivers"]}
        return w

    def give_back(self, failed: bool) -> None:
        """The test is over: keep the window only where the reset can bring
        it back from; move it aside (off the screen other tests' widgets use)."""
        w = self.window
        if w is None:
            return
        if not shiboken6.isValid(w):
            self.window = None
            return
        quiet(w)
        names = [r.name.text() for r in w.compare.view.shown_rows()] if w.compare.active else None
        if (failed or names != self.names or w.trace is not self.trace or w.predict.active
                or w.lessons.player.lesson is not None or w.edits.dirty or w.params or w.check_steps.on
                or w.presentation != w._fresh_presentation or w.size() != w._fresh_size
                or w._fresh_dock_shown
                # a row's structure view once shown keeps its actions
                or len(w.findChildren(QAction)) != self.actions
                or wrapped_methods(w) or connected(w, self._receivers)):
            self.drop()
            return
        self._home = w.pos()
        w.move(self._home.x() + 8000, self._home.y())

    def drop(self) -> None:
        if self.window is not None:
            w, self.window = self.window, None
            quiet(w)
            destroy(w)
