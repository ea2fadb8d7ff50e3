"""Find (Ctrl+F), F3 / Shift+F3 and breakpoints in the window.

:class:`FindPart` puts the :class:`~heapscope.gui.find_panel.FindPanel` in a
dock beside the map (Ctrl+F shows it and puts the cursor in the condition
box).  A condition is read by :mod:`heapscope.allocators.conditions` (a
mistake is said under the box, with its column, and the cursor goes
there) and searched over the whole replay of every shown strategy (the one
shown, or every row of compare mode) in the background with progress and
Cancel (:class:`~heapscope.gui.find_job.Searcher`).  The matches are ticked
on the scrubber, dotted on the plots (one strategy shown), counted, and listed with their words; F3 and Shift+F3 go to
the next and the previous match from the shown step (round at the ends),
with the event that matched chosen in the explain panel and its block
selected on the map.

The breakpoints are :class:`~heapscope.gui.breakpoints.Breakpoints`', listed
in the same panel with a check box each; the window's playing asks
:meth:`FindPart.stop_before` how far it may go.  Everything goes through the
show model (``seek``, ``select``) and the window's public widgets.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QObject, Qt
from PySide6.QtWidgets import QDockWidget

from heapscope.allocators.conditions import ConditionError

from .breakpoints import Breakpoints, read_condition
from .find_job import SearchRequest, Searcher
from .find_panel import FindPanel

#: the dock's width at text scale 1
DOCK_WIDTH = 340


class FindPart(QObject):
    def __init__(self, window) -> None:
        super().__init__(window)
        self.window = window
        self.model = window.model
        self.panel = FindPanel()
        self.dock = QDockWidget("Find and breakpoints", window)
        self.dock.setObjectName("find")
        self.dock.setWidget(self.panel)
        self.dock.setAllowedAreas(Qt.LeftDockWidgetArea | Qt.RightDockWidgetArea)
        window.addDockWidget(Qt.RightDockWidgetArea, self.dock)
        window.resizeDocks([self.dock], [DOCK_WIDTH], Qt.Horizontal)
        self.dock.hide()
        self.searcher = Searcher(self)
        self.breakpoints = Breakpoints(self.model, window.settings, self)
        #: the last search's result (None: none, or the shown strategies changed since)
        self.result = None
        self.matches = np.zeros(0, dtype=np.int64)
        self._condition = None
        p = self.panel
        p.find_requested.connect(self.find)
        p.cancel_requested.connect(self.searcher.cancel)
        p.match_clicked.connect(self.go_to)
        p.next_requested.connect(self.next_match)
        p.previous_requested.connect(self.previous_match)
        p.breakpoint_added.connect(self.add_breakpoint)
        p.breakpoint_toggled.connect(self.breakpoints.set_enabled)
        p.breakpoint_removed.connect(self.breakpoints.remove)
        self.searcher.progress.connect(lambda done, total: p.progress.setValue(done))
        self.searcher.busy_changed.connect(p.set_busy)
        self.searcher.succeeded.connect(self._found)
        self.searcher.failed.connect(lambda message: p.say(f"The search stopped: {message}", True))
        self.searcher.cancelled.connect(lambda: p.say("Cancelled."))
        self.breakpoints.changed.connect(self._breakpoints_changed)
        self.model.shown_changed.connect(self._shown_changed)
        self._breakpoints_changed()

    # ------------------------------------------------------------ commands
    def show_find(self) -> None:
        """Ctrl+F: the panel, the cursor in the condition box."""
        self.dock.show()
        self.dock.raise_()
        self.panel.focus_condition()

    def find(self, text: str) -> bool:
        """Search the shown replays for ``text`` in the background; False
        (said in the panel) when it cannot be read or nothing is shown."""
        if not self.model.shown:
            self.panel.say("Open a trace first.", True)
            return False
        condition = self._read(text)
        if condition is None:
            return False
        self._condition = condition
        rows = [(key, self.model.timeline(r)) for r, key in enumerate(self.model.shown)]
        names = ", ".join(key[0] for key in self.model.shown)
        self.panel.say(f"Searching {names} for {condition.text}…")
        self.searcher.start(SearchRequest(condition, rows, time_limit=self.window.time_limit))
        return True

    def _read(self, text: str):
        try:
            return read_condition(text, [key[0] for key in self.model.shown])
        except ConditionError as exc:
            self.panel.say(f"Cannot read the condition: {exc}", True)
            self.panel.edit.setFocus()
            self.panel.edit.setCursorPosition(exc.column - 1)
            return None

    def next_match(self) -> None:
        """F3: the first match after the shown step (the first of all past the last)."""
        self._move(+1)

    def previous_match(self) -> None:
        """Shift+F3: the last match before the shown step (the last of all before the first)."""
        self._move(-1)

    def _move(self, direction: int) -> None:
        steps = self.matches
        if not len(steps):
            self.window.statusBar().showMessage("No matches: Find (Ctrl+F) first", 5000)
            return
        position = self.model.position
        if direction > 0:
            i = int(np.searchsorted(steps, position, side="right"))
            wrapped = i >= len(steps)
            step = int(steps[0 if wrapped else i])
        else:
            i = int(np.searchsorted(steps, position, side="left")) - 1
            wrapped = i < 0
            step = int(steps[-1 if wrapped else i])
        self.go_to(step)
        k = int(np.searchsorted(steps, step)) + 1
        self.window.statusBar().showMessage(
            f"Match {k:,} of {len(steps):,}: step {step:,}" + (" (from the other end)" if wrapped else ""),
            8000)

    def go_to(self, step: int) -> None:
        """Show match ``step``, its matching event chosen and its block selected."""
        self.window.player.pause()
        self.window.seek(step)
        shown = self.model.step(0)
        condition = self._condition
        index = condition.matching_event(shown.record) if (condition and shown) else None
        if index is not None:
            self.model.set_event(index)
            addrs = shown.explained[index].addrs
            if addrs:
                self.model.select(addrs[0])
        self.panel.mark_match(step)

    def add_breakpoint(self, text: str) -> None:
        try:
            self.breakpoints.add(text)
        except ConditionError as exc:
            self.panel.say(f"Cannot read the condition: {exc}", True)

    def stop_before(self, position: int, target: int):
        """Playing from ``position`` to ``target``: (where to stop, the
        breakpoint that stops it there or None)."""
        return self.breakpoints.stop_before(position, target)

    def stopped_at(self, step: int, breakpoint) -> None:
        """Say that ``breakpoint`` stopped playing at ``step``."""
        self.window.statusBar().showMessage(f"Stopped at step {step:,}: breakpoint {breakpoint.text}", 15000)
        self.panel.say(f"Breakpoint {breakpoint.text} stopped playing at step {step:,}.")

    def stop(self) -> None:
        """Closing the window: no search goes on."""
        self.searcher.stop()
        self.breakpoints.stop()

    # ------------------------------------------------------------ results
    def _found(self, result) -> None:
        self.result = result
        self.matches = result.union
        n = self.model.n
        count = len(self.matches)
        rows = len(result.steps)
        where = (f"{count:,} step{'s' if count != 1 else ''} of {n:,} where {result.request.condition.text}"
                 + (f" (in some of the {rows} rows)" if rows > 1 else ""))
        words = [(step, text if rows == 1 else f"{text}   [{key[0]}]") for step, key, text in result.words]
        more = count - len(words) if rows == 1 else 0
        tail = f"; the first {len(words):,} listed" if more > 0 else ""
        never = "; ".join(result.never)
        self.panel.say(where + tail + (". F3: next, Shift+F3: previous." if count else ".")
                       + (f" ({never}, so nothing was replayed for it.)" if never else ""))
        self.panel.show_matches(words)
        self.window.bar.marks.set_marks(matches=self.matches)
        self.window.plots.set_matches(self.matches if rows == 1 else [])

    def _shown_changed(self) -> None:
        if self.searcher.busy:
            self.searcher.stop()
        if self.result is not None:
            self.result = None
            self.matches = np.zeros(0, dtype=np.int64)
            self.window.bar.marks.set_marks(matches=self.matches)
            self.window.plots.set_matches(self.matches)
            self.panel.show_matches([])
            self.panel.say("The shown replay changed: Find again (Enter).")

    def _breakpoints_changed(self) -> None:
        bp = self.breakpoints
        self.panel.show_breakpoints([(b.text, b.enabled, bp.state(b)) for b in bp.items])
        self.window.bar.marks.set_marks(breaks=bp.all_steps())
