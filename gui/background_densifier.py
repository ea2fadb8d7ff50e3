"""Denser checkpoints for the shown timelines, taken while the window is idle.

Compare mode seeks every row's timeline at each jump; each restores its
nearest checkpoint and replays from it, so ``k`` rows cost ``k`` times one
strategy's seek.  When compare mode shows its rows, a
:class:`BackgroundDensifier` gives each row's timeline checkpoints ``k`` times
denser (:class:`~heapscope.allocators.denser_checkpoints.Densifier`), so each replays
about ``1/k`` of one strategy's replay.

The work runs on the GUI thread in short slices from a zero-interval timer
(Qt runs it when no other event waits), :data:`SLICE_SECONDS` at a time, so
a key press waits at most one slice; a thread would hold the interpreter
lock as long, and garbage collected off the GUI thread may delete Qt objects
there (DESIGN.md's pitfalls).  It stops when compare mode is left or another
trace is opened (:meth:`BackgroundDensifier.cancel`): the checkpoints taken
until then stay, each whole, and a seek gives the same heap with or without
them.  The rows share one byte budget
(:data:`~heapscope.allocators.denser_checkpoints.DENSER_BYTES`).
"""

from __future__ import annotations

from PySide6.QtCore import QObject, QTimer, Signal

from heapscope.allocators.denser_checkpoints import DENSER_BYTES

#: one slice of work between two looks at the event queue, in seconds
SLICE_SECONDS = 0.008
#: while held (:attr:`BackgroundDensifier.held`), a look this often (ms) whether it may go on
HELD_MS = 30


class BackgroundDensifier(QObject):
    """Densifies timelines in timer slices until done or cancelled."""

    #: every timeline given is as dense as asked (not emitted when cancelled)
    finished = Signal()

    def __init__(self, parent=None, max_bytes: int = DENSER_BYTES) -> None:
        super().__init__(parent)
        self.max_bytes = max_bytes
        self.jobs: list = []            # Densifier, the one being worked on first
        #: slices run and checkpoints added since made (tests and benchmarks read them)
        self.slices = 0
        self.added = 0
        #: (strategy, exception) of the work that raised (a user strategy's
        #: code), dropped without a word: the row just seeks as before
        self.failures: list = []
        #: () -> True while other work on the GUI thread goes first (pieces
        #: waiting their turn, gui/turns.py: a slice run in the same pass of
        #: the event loop as a row joining made one long gap), or None
        self.held = None
        self._timer = QTimer(self)
        self._timer.setInterval(0)
        self._timer.timeout.connect(self._slice)

    @property
    def busy(self) -> bool:
        return self._timer.isActive()

    def start(self, timelines, others=()) -> None:
        """Densify ``timelines`` (the rows shown together) for their number
        of rows, each within its share of the byte budget; cancels any work
        under way first.  ``others``: the trace's timelines not shown, which
        drop the checkpoints they gained, so that all together never hold
        more than the budget."""
        self.cancel()
        for tl in others:
            if tl not in timelines and getattr(tl, "drop_added_checkpoints", None) is not None:
                tl.drop_added_checkpoints()
        timelines = [tl for tl in timelines if getattr(tl, "densify", None) is not None]
        share = len(timelines)
        if share < 2:
            return
        budget = self.max_bytes // share
        self.jobs = [job for job in (tl.densify(share, budget) for tl in timelines) if not job.done]
        if self.jobs:
            self._timer.start()

    def cancel(self) -> None:
        """Stop; the checkpoints added so far stay."""
        self._timer.stop()
        self.jobs = []

    def _slice(self) -> None:
        if not self.jobs:
            self._timer.stop()
            return
        if self.held is not None and self.held():
            self._timer.setInterval(HELD_MS)
            return
        self._timer.setInterval(0)
        self.slices += 1
        job = self.jobs[0]
        before = job.added
        try:
            finished = job.run(SLICE_SECONDS)
        except Exception as exc:        # noqa: BLE001 -- a user strategy's own code
            # Only an optimisation: that row keeps the checkpoints it has
            # (each whole) and seeks as before; the others go on.
            self.failures.append((job.timeline.strategy_name, exc))
            finished = True
        if finished:
            self.jobs.pop(0)
        self.added += job.added - before
        if not self.jobs:
            self._timer.stop()
            self.finished.emit()
