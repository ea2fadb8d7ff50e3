"""Compare mode's new rows' heaps, made one per turn of the event loop
before the rows are shown.

Showing a row at step *t* restores its timeline's nearest checkpoint, replays
the steps from there and walks the heap (:meth:`ShowModel.prepare`): 30-40 ms
a row on gcc-cc1 half way through, on an idle machine.  ``ShowModel.show``
does that for every row it shows that is not at *t* yet, so seven new rows
in one call held the event loop over 250 ms, and a row joining those shown
(a big trace's rows, shown as each is built: gui/compare_rows.py) re-did the
rest of the show on top of its own heap (issue 25's stall probe).  Here each
new row's heap is made in a turn of its own; the show that follows then
finds every row there and only binds and draws.  A short trace's rows
are shown at once, as its jumps are made (``ShowModel._stage``).
"""

from __future__ import annotations

from typing import Callable

from PySide6.QtCore import QObject

from heapscope.allocators.isolation import needs_worker

from . import show_model
from .turns import turns


class HeapsInTurns(QObject):
    """Makes the heaps of rows about to be shown, one per turn, then calls back."""

    def __init__(self, model, parent=None) -> None:
        super().__init__(parent)
        self.model = model
        #: (keys still to make, position, callback) while at work, else None
        self._job: tuple[list, int, Callable[[], None]] | None = None

    @property
    def busy(self) -> bool:
        return self._job is not None

    def start(self, keys, position: int, then: Callable[[], None]) -> bool:
        """Make the heaps of ``keys`` (not shown yet) at the step a show of
        ``keys`` at ``position`` lands on, a turn each, then call ``then``.
        False (and nothing is called) when no heap is left to make, or the
        trace is short enough for a jump of every row at once (as
        ``ShowModel`` judges a jump: :data:`~heapscope.gui.show_model.STAGED_FROM_OPS`):
        the caller shows at once.  A job under way is dropped for this one."""
        self.cancel()
        model = self.model
        if model.trace is None or len(model.trace) < show_model.STAGED_FROM_OPS:
            return False
        at = model.position_for(keys, position)
        # a strategy of your own is left to the show, which watches its code
        # (a fault or a loop is said there, once: gui/user_code_watch.py)
        todo = [k for k in keys if k not in model.shown and not needs_worker(k[0])
                and not model.prepared(k, at)]
        if not todo:
            return False
        self._job = (todo, at, then)
        turns().call_soon(self._next, self)
        return True

    def cancel(self) -> None:
        """The rows asked for are not shown (compare mode left, other rows asked for)."""
        self._job = None

    def _next(self) -> None:
        if self._job is None:
            return
        todo, at, then = self._job
        if todo:
            key = todo.pop(0)
            if key in self.model.timelines():          # (not dropped since: another trace)
                self.model.prepare(key, at)
            turns().call_soon(self._next, self)
            return
        self._job = None
        then()
