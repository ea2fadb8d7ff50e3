"""A time limit on a strategy of your own where it runs in the window's process.

Its timeline is built in a worker process (gui/loader.py), but once built the
window seeks it from checkpoints, and the views ask it for its blocks, its
structure and its words: the user's code runs in the GUI thread then.  A
:class:`UserCodeWatch` stops it there when it loops:

* a 100 ms heartbeat timer of the event loop notes when the loop last ran;
* while a timeline of a strategy of your own is shown, an interval timer
  (``setitimer``, SIGALRM, every 0.2 s) runs a handler in the GUI thread, at
  whatever Python code it is running; when every tick for the time limit
  found the user's code on the stack and the event loop did not run in
  between, the handler raises :class:`~heapscope.allocators.user.StopUserCode` there
  (only there: never in heapscope's or Qt's own code);
* the exception unwinds the user's code and whatever seek or redraw called
  it (a Qt slot prints nothing: the watch keeps ``sys.excepthook`` quiet for
  it), the event loop runs again, and :attr:`stopped` tells the window, which
  shows the strategy before and says why (gui/main_window.py).

What is guarded: every call of the user's code in the GUI thread (seeks,
redraws, the explain panel, tooltips, playing).  What is not: a call into C
that never returns to Python (the handler runs between Python bytecodes), and
the window's process on Windows (no ``setitimer``).  ``os._exit`` in the
user's code still ends the window's process if it is called outside the
worker; the build, where the code runs first, is in the worker.
"""

from __future__ import annotations

import os
import signal
import sys
import time

from PySide6.QtCore import QObject, QTimer, Signal

from heapscope.allocators.isolation import ANSWER_EVERY, user_frame
from heapscope.allocators.user import StopUserCode, UserStrategy, _user_files

#: how often the event loop notes that it runs (ms)
HEARTBEAT_MS = 100


class UserCodeWatch(QObject):
    """Stops user code that holds the GUI thread past ``limit()`` seconds.
    ``classes()`` gives the user strategy classes shown now (empty: disarmed)."""

    #: the user's code was stopped: (the class's strategy name, what it was doing)
    stopped = Signal(str, str)

    def __init__(self, parent, limit, classes) -> None:
        super().__init__(parent)
        self._limit = limit
        self._classes = classes
        self.alive = time.monotonic()
        self._files: frozenset[str] = frozenset()
        self._names: dict[str, str] = {}        # source file -> strategy name
        self._armed = False
        self._previous_handler = None
        self._previous_hook = None
        self._stop: tuple[str, str] | None = None
        #: False: never arm (a caller with a MainThreadGuard of its own)
        self.enabled = True
        #: since when every tick found the user's code running (None: not now)
        self._since: float | None = None
        self._beat_timer = QTimer(self)
        self._beat_timer.setInterval(HEARTBEAT_MS)
        self._beat_timer.timeout.connect(self._beat)
        self._beat_timer.start()

    @property
    def armed(self) -> bool:
        return self._armed

    def _beat(self) -> None:
        self.alive = time.monotonic()
        self.refresh()
        if self._stop is not None:
            name, where = self._stop
            self._stop = None
            self.stopped.emit(name, where)

    def refresh(self, classes=None) -> None:
        """Arm while a strategy of your own shows (``classes``, default: those
        ``classes()`` gives), disarm otherwise.  The window calls this before
        it shows a timeline, so that its first seek is watched already."""
        if not self.enabled:      # another guard owns the timer (heapscope render's)
            self.disarm()
            return
        if classes is None:
            classes = self._classes()
        classes = [c for c in classes if isinstance(c, type) and issubclass(c, UserStrategy)]
        limit = self._limit()
        if classes and limit and hasattr(signal, "setitimer"):
            self._names = {f: c.name for c in classes for f in _user_files(c)}
            self._files = frozenset(self._names)
            self._arm()
        else:
            self.disarm()

    def _arm(self) -> None:
        if self._armed:
            return
        self._since = None
        self._previous_handler = signal.signal(signal.SIGALRM, self._alarm)
        self._previous_hook = sys.excepthook
        sys.excepthook = self._quiet_hook
        signal.setitimer(signal.ITIMER_REAL, ANSWER_EVERY, ANSWER_EVERY)
        self._armed = True

    def stop(self) -> None:
        """The window closes: disarm and never arm again.  (Its heartbeat
        would re-arm the watch of a closed window still showing a strategy
        of your own, and its SIGALRM handler outlive the window.)"""
        self.enabled = False
        self._beat_timer.stop()
        self.disarm()

    def disarm(self) -> None:
        """Stop watching (no user timeline shown)."""
        if not self._armed:
            return
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, self._previous_handler or signal.SIG_DFL)
        if sys.excepthook == self._quiet_hook:
            sys.excepthook = self._previous_hook
        self._armed = False

    def _alarm(self, signum, frame) -> None:
        """Every 0.2 s in the GUI thread: stop the user's code once every tick
        for ``limit`` seconds found it on the stack with no beat of the event
        loop in between (heapscope's own code between two of its calls, or an
        event loop that ran, starts the count again)."""
        where = user_frame(frame, self._files)
        now = time.monotonic()
        if where is None or self._since is None or self.alive > self._since:
            self._since = now if where is not None else None
            return                     # heapscope's or Qt's own work: never stopped
        limit = self._limit()
        if not limit or now - self._since <= limit:
            return
        if self._stop is None:
            self._stop = (self._name_of(frame) or "", where)
        raise StopUserCode()

    def _name_of(self, frame) -> str | None:
        """The strategy whose file the innermost user frame is in."""
        while frame is not None:
            path = os.path.realpath(frame.f_code.co_filename)
            if path in self._names:
                return self._names[path]
            frame = frame.f_back
        return None

    def _quiet_hook(self, kind, value, tb) -> None:
        # a stop raised in a slot that Qt called from C++ unwinds to Qt, which
        # prints it: not a traceback for the user (the dialog says it)
        if isinstance(kind, type) and issubclass(kind, StopUserCode):
            return
        (self._previous_hook or sys.__excepthook__)(kind, value, tb)
