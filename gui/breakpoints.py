"""Breakpoints: conditions that stop playback when a step holding them is
reached.

A :class:`Breakpoints` keeps the list (each a condition's text and whether
it is on), saves it with the window's settings, and knows, for the shown
timelines, the steps where each one holds.  Those are found when the list or
the shown strategy changes: a condition the metric columns decide is found
at once, one that needs the steps' events by a background search
(:class:`~heapscope.gui.find_job.Searcher`); until that answers, the
breakpoint is "searching" and stops nothing.  Playing asks
:meth:`Breakpoints.stop_before` how far it may go: to the first step a
breakpoint holds at after the shown one, where the window pauses and says
which breakpoint stopped it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np
from PySide6.QtCore import QObject, Signal

from heapscope.allocators.conditions import ConditionError, StepColumns, decide, known_events, parse

from .find_job import SearchRequest, Searcher

#: the settings key the list is saved under (JSON: [[text, on], ...])
SETTINGS_KEY = "breakpoints"


@dataclass
class Breakpoint:
    text: str
    enabled: bool = True


def read_condition(text: str, strategy_names):
    """``text`` parsed for the strategies shown (ConditionError if it cannot be)."""
    return parse(text, known_events(strategy_names))


class Breakpoints(QObject):
    """The breakpoint list and where each one holds in the shown timelines."""

    #: the list changed (added, removed, toggled) or its steps were found
    changed = Signal()

    def __init__(self, model, settings, parent=None) -> None:
        super().__init__(parent)
        self.model = model
        self.settings = settings
        self.items: list[Breakpoint] = []
        #: (text, timeline key) -> steps where it holds (1-based, ascending)
        self._steps: dict[tuple, np.ndarray] = {}
        self.searcher = Searcher(self)
        self.searcher.succeeded.connect(self._found)
        self.searcher.failed.connect(lambda message: self._search_next())
        self._queue: list[str] = []
        self.load()
        model.shown_changed.connect(self.refresh)

    # ------------------------------------------------------------ the list
    def load(self) -> None:
        raw = self.settings.value(SETTINGS_KEY, "")
        try:
            saved = json.loads(str(raw)) if raw else []
            self.items = [Breakpoint(str(text), bool(on)) for text, on in saved]
        except (ValueError, TypeError):
            self.items = []            # a settings file edited by hand: start empty

    def save(self) -> None:
        self.settings.setValue(SETTINGS_KEY, json.dumps([[b.text, b.enabled] for b in self.items]))

    def add(self, text: str) -> Breakpoint:
        """A new breakpoint (on); ConditionError if ``text`` cannot be read."""
        text = text.strip()
        read_condition(text, self._names())
        for b in self.items:
            if b.text == text:
                b.enabled = True
                break
        else:
            b = Breakpoint(text)
            self.items.append(b)
        self.save()
        self.refresh()
        return b

    def remove(self, index: int) -> None:
        del self.items[index]
        self.save()
        self.changed.emit()

    def set_enabled(self, index: int, on: bool) -> None:
        if self.items[index].enabled != on:
            self.items[index].enabled = on
            self.save()
            self.refresh()

    # ------------------------------------------------------- where they hold
    def _names(self) -> list[str]:
        return [key[0] for key in self.model.shown]

    def _rows(self) -> list:
        return [(key, self.model.timeline(r)) for r, key in enumerate(self.model.shown)]

    def refresh(self) -> None:
        """Find the steps of every enabled breakpoint not known yet for the
        shown timelines: at once from the columns, or in the background."""
        shown = set(self.model.shown)
        self._steps = {k: v for k, v in self._steps.items() if k[1] in shown}
        self._queue = []
        for b in self.items:
            if not b.enabled or self.state(b) != "searching":
                continue
            try:
                condition = read_condition(b.text, self._names())
            except ConditionError:
                continue            # another strategy's event type: not here
            pending = False
            for key, timeline in self._rows():
                matched, undecided = decide(condition, StepColumns.of(timeline))
                if undecided.any():
                    pending = True
                else:
                    self._steps[(b.text, key)] = np.flatnonzero(matched) + 1
            if pending:
                self._queue.append(b.text)
        self.changed.emit()
        self._search_next()

    def _search_next(self) -> None:
        if self.searcher.busy or not self._queue:
            return
        text = self._queue.pop(0)
        try:
            condition = read_condition(text, self._names())
        except ConditionError:
            self._search_next()
            return
        self.searcher.start(SearchRequest(condition, self._rows(), words=0, tag=text))

    def _found(self, result) -> None:
        for key, steps in result.steps.items():
            self._steps[(result.request.tag, key)] = steps
        self.changed.emit()
        self._search_next()

    def state(self, b: Breakpoint) -> str:
        """'off', 'searching', or how many steps it holds at ('12 steps')."""
        if not b.enabled:
            return "off"
        keys = self.model.shown
        found = [self._steps.get((b.text, k)) for k in keys]
        if not keys or any(f is None for f in found):
            return "searching" if keys else "no trace"
        count = len(np.unique(np.concatenate(found))) if found else 0
        return f"{count:,} step{'s' if count != 1 else ''}"

    def steps(self, b: Breakpoint) -> np.ndarray:
        """The steps ``b`` holds at in some shown row (empty while searching)."""
        found = [self._steps.get((b.text, k)) for k in self.model.shown]
        found = [f for f in found if f is not None]
        return np.unique(np.concatenate(found)) if found else np.zeros(0, dtype=np.int64)

    def all_steps(self) -> np.ndarray:
        """Every step an enabled breakpoint holds at (the scrubber's marks)."""
        found = [self.steps(b) for b in self.items if b.enabled]
        return np.unique(np.concatenate(found)) if found else np.zeros(0, dtype=np.int64)

    def stop_before(self, position: int, target: int) -> tuple[int, Breakpoint | None]:
        """Playing from ``position`` towards ``target``: the first step in
        (position, target] an enabled breakpoint holds at and that
        breakpoint, or (target, None)."""
        best, which = target + 1, None
        for b in self.items:
            if not b.enabled:
                continue
            steps = self.steps(b)
            i = int(np.searchsorted(steps, position, side="right"))
            if i < len(steps) and steps[i] < best:
                best, which = int(steps[i]), b
        return (best, which) if which is not None else (target, None)

    def stop(self) -> None:
        """Cancel a search under way (closing the window)."""
        self.searcher.stop()
