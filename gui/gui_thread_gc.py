"""Keep Python's cyclic garbage collector in the GUI thread while a worker runs.

CPython runs an automatic collection in whichever thread happens to allocate
when a generation's count passes its threshold.  While a replay runs, that is
nearly always the replay thread: it allocates far more than the GUI thread.
A collection frees every unreachable cycle, whoever made it, so Qt objects
made in the GUI thread can then be destroyed in the replay thread.  Qt forbids
it (widgets and pixmaps belong to the GUI thread), and the process crashed
some time later.

Such cycles are common: a closed window's pyqtgraph plots keep Python-owned,
parentless QMenus (``ViewBox.menu``, ``PlotItem.ctrlMenu``) that only the
collector frees, long after Qt deleted the window itself.

So while any worker runs, automatic collection is off, and a timer in the GUI
thread does what it would have done (the cure pyqtgraph's
``util.garbage_collector.GarbageCollector`` applies to a whole program, after
Erik Janssens, "Should the Python garbage collector be disabled?", 2014):
young generations are collected when their counts pass the thresholds.  When
the last worker ends, automatic collection comes back as it was.  The replay
itself makes almost no cyclic garbage, so a second's delay costs nothing.
"""

from __future__ import annotations

import gc

from PySide6.QtCore import QObject, QTimer

#: how often the GUI thread collects while a worker runs (ms)
COLLECT_EVERY_MS = 1000

# Workers running now, and whether automatic collection was on before the first.
_holders = 0
_was_enabled = True


def collect_due_generations() -> int:
    """What an automatic collection would do now: collect the oldest
    generation whose count passed its threshold (and the younger ones).
    Returns the number of unreachable objects found."""
    counts = gc.get_count()
    thresholds = gc.get_threshold()
    generation = -1
    for g in range(3):
        if counts[g] > thresholds[g]:
            generation = g
        else:
            break
    return gc.collect(generation) if generation >= 0 else 0


class GuiThreadCollector(QObject):
    """Hold automatic collection off while one worker runs (create it in the GUI
    thread; call :meth:`hold` before starting the worker and :meth:`release`
    after joining it)."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.held = False
        self._timer = QTimer(self)
        self._timer.setInterval(COLLECT_EVERY_MS)
        self._timer.timeout.connect(collect_due_generations)

    def hold(self) -> None:
        global _holders, _was_enabled
        if self.held:
            return
        if _holders == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _holders += 1
        self.held = True
        self._timer.start()

    def release(self) -> None:
        global _holders
        if not self.held:
            return
        self._timer.stop()
        self.held = False
        _holders -= 1
        if _holders == 0 and _was_enabled:
            gc.enable()


def keep_long_lived() -> None:
    """Move every object alive now out of the collector's reach (``gc.freeze``):
    the window's own (its widgets' wrappers, pyqtgraph's items, the modules'
    functions) live as long as the program, and a full collection, which
    went over each of them, held the event loop up to 0.3 s at a time
    (issue 25's stall probe).  Objects made later are collected as before;
    one frozen that dies is freed by its reference count.  Called once, when
    the program's window has shown (gui/app.py)."""
    gc.collect()
    gc.freeze()
