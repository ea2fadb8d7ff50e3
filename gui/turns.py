"""The window's work done a piece at a time: one piece per turn of the event loop.

Several parts of the window do long work on the GUI thread in pieces so
that the event loop is never blocked more than 100 ms (issue 25): compare
mode's rows made and joining the view one at a time, the new rows' heaps
made before they show, a big trace's jump made a row at a time, a long
ranking summed up in parts.  Each used to run from a timer of its own;
timers due together all run in the same pass of Qt's event loop, so
pieces of 30-60 ms from three parts made one gap of 150-270 ms (the stall
probe, benchmarks/bench_stall.py).  Here they wait in one queue and run one
per turn, first asked first run, with the paints and the user's input
between two.

:func:`turns` gives the window's queue (one per application).
"""

from __future__ import annotations

from collections import deque
from typing import Callable

import shiboken6
from PySide6.QtCore import QCoreApplication, QObject, QTimer

#: the wait (ms) before the next piece: a timer, not a zero-time call, so
#: that the event loop's other timers, the paints and the input run between
TURN_MS = 1


class Turns(QObject):
    """A queue of pieces of work, one run per turn of the event loop."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self._queue: deque[tuple[QObject | None, Callable[[], None]]] = deque()
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(TURN_MS)
        self._timer.timeout.connect(self._run_one)
        #: pieces run since made (tests read it)
        self.ran = 0

    @property
    def busy(self) -> bool:
        """Pieces are waiting their turn."""
        return bool(self._queue)

    def call_soon(self, fn: Callable[[], None], owner: QObject | None = None) -> None:
        """Run ``fn`` in a turn of its own, after those asked before; once
        however often it is asked before it runs.  ``owner``: a Qt object
        ``fn`` works on; if it is deleted first, ``fn`` is not run."""
        if any(queued == fn for _, queued in self._queue):
            return
        self._queue.append((owner, fn))
        if not self._timer.isActive():
            self._timer.start()

    def _run_one(self) -> None:
        if not self._queue:
            return
        owner, fn = self._queue.popleft()
        try:
            if owner is None or shiboken6.isValid(owner):
                self.ran += 1
                fn()
        finally:
            if self._queue and not self._timer.isActive():
                self._timer.start()


def turns() -> Turns:
    """The application's queue of pieces of work (made on first use)."""
    app = QCoreApplication.instance()
    queue = getattr(app, "_heapscope_turns", None)
    if queue is None or not shiboken6.isValid(queue):
        queue = Turns(app)
        app._heapscope_turns = queue
    return queue
