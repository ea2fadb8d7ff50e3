"""A whole replay's summary row, folded a part per turn of the event loop.

When a big trace's timeline has been built in the background, the status
bar says its measures (waste, utilisation, mean search): ``summarize()`` of
its whole series, 220-240 ms on the GUI thread at a million steps (issue 25's
stall probe, the load phase).  Here a
:class:`~heapscope.allocators.running_summary.RunningSummary` folds
:data:`~heapscope.allocators.running_summary.SUMMARY_CHUNK` rows a turn
(gui/turns.py), as ``heapscope compare`` folds its chunks; the row is then
the same (to the last bits of the mean fragmentations, see
running_summary.py).
"""

from __future__ import annotations

from typing import Callable

from PySide6.QtCore import QObject

from heapscope.allocators.running_summary import SUMMARY_CHUNK, RunningSummary

from .turns import turns


class SummaryInTurns(QObject):
    """Folds one timeline's series a part a turn, then calls back with the row."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        #: (series, rows folded so far, the fold, callback) while at work, else None
        self._job = None

    @property
    def busy(self) -> bool:
        return self._job is not None

    def start(self, series, then: Callable[[dict], None]) -> None:
        """Fold ``series`` (a MetricSeries) over turns, then ``then(row)``;
        a fold under way is dropped for this one."""
        self._job = [series, 0, RunningSummary(), then]
        turns().call_soon(self._next, self)

    def cancel(self) -> None:
        self._job = None

    def _next(self) -> None:
        if self._job is None:
            return
        series, done, fold, then = self._job
        if done < series.n:
            fold.add(series.part(done, done + SUMMARY_CHUNK))
            self._job[1] = done + SUMMARY_CHUNK
            turns().call_soon(self._next, self)
            return
        self._job = None
        then(fold.row())
