"""Searching the shown replays for a condition off the GUI thread.

A :class:`Searcher` runs one :class:`SearchJob` at a time on a plain Python
thread, as :mod:`heapscope.gui.loader` runs a replay (the job object stays in
the GUI thread, its signals are queued to it; Python's collector runs only
in the GUI thread meanwhile, :mod:`heapscope.gui.gui_thread_gc`).  The job
calls :func:`heapscope.allocators.find.find_steps` on each timeline it is
given (the shown strategy, or every row of compare mode), then
:func:`heapscope.allocators.find.step_words` for the first matches; both
walk heaps of their own, so the window steps and plays while it runs.
Cancel stops it at its next progress point; starting another search cancels
the one running.

A strategy of your own is not walked on that thread: its code could loop
there with nothing to stop it.  Its row is searched in a worker process
(:func:`heapscope.allocators.isolated_find.find_in_worker`), as its build
was, with the request's time limit; the thread only waits for it, and
Cancel kills the worker at once.
"""

from __future__ import annotations

import sys
import threading
from dataclasses import dataclass, field

import numpy as np
from PySide6.QtCore import QObject, Signal, Slot

from heapscope.allocators.find import find_steps, step_words
from heapscope.allocators.isolated_find import FindStopped, find_in_worker, walk_source
from heapscope.allocators.isolation import DEFAULT_TIME_LIMIT, needs_worker
from heapscope.allocators.replay import ReplayCancelled

from .gui_thread_gc import GuiThreadCollector

#: the matches listed in words at most (the scrubber and F3 have them all)
WORDS_LIMIT = 500
#: the thread switch interval while a search runs (s): as the loader's, so
#: that the window's paints do not wait behind the walk
SWITCH_INTERVAL_WHILE_BUSY = 0.001


@dataclass
class SearchRequest:
    """What to search: ``condition`` (parsed) over ``rows``, a list of
    (timeline key, timeline); ``words`` matches of the first row with
    matches get their words.  ``tag`` is the caller's, handed back."""
    condition: object
    rows: list
    words: int = WORDS_LIMIT
    tag: object = None
    #: seconds a worker searching a strategy of your own may go without an answer
    time_limit: float | None = DEFAULT_TIME_LIMIT
    #: {timeline key: WalkSource} of the rows searched in a worker (made by
    #: :meth:`Searcher.start`, in the window's thread)
    sources: dict = field(default_factory=dict)


@dataclass
class SearchResult:
    request: SearchRequest
    #: the matching steps (1-based, ascending) of each row's timeline key
    steps: dict = field(default_factory=dict)
    #: (step, key, text) of the first matches, in step order
    words: list = field(default_factory=list)
    #: steps replayed with their events, over every row
    walked: int = 0
    #: what a row's strategy never makes, in words (Found.never_text)
    never: list = field(default_factory=list)

    @property
    def union(self) -> np.ndarray:
        """Every step some row matched, ascending."""
        arrays = list(self.steps.values())
        if not arrays:
            return np.zeros(0, dtype=np.int64)
        return np.unique(np.concatenate(arrays)) if len(arrays) > 1 else arrays[0]


class SearchJob(QObject):
    progress = Signal(object, int, int)     # job, done, total
    succeeded = Signal(object, object)      # job, SearchResult
    failed = Signal(object, str)            # job, message
    cancelled = Signal(object)              # job

    def __init__(self, request: SearchRequest) -> None:
        super().__init__()
        self.request = request
        self._cancel = threading.Event()
        self._stage = (0, 1)               # (row being searched, rows), for progress

    def cancel(self) -> None:
        self._cancel.set()

    def _report(self, done: int, total: int) -> None:
        row, rows = self._stage
        # each row (and the words) a share of the bar, per mille
        share = 1000 // rows
        self.progress.emit(self, row * share + (done * share // max(total, 1)), 1000)

    @Slot()
    def run(self) -> None:
        req = self.request
        result = SearchResult(req)
        worded: dict = {}               # key -> the words a worker gave
        try:
            rows = len(req.rows) + 1
            for i, (key, timeline) in enumerate(req.rows):
                self._stage = (i, rows)
                source = req.sources.get(key)
                if source is not None:   # a strategy of your own: in a worker
                    steps, walked, texts = find_in_worker(
                        timeline.trace, source, req.condition, words=req.words, progress=self._report,
                        cancel=self._cancel.is_set, time_limit=req.time_limit)
                    result.steps[key], worded[key] = steps, texts
                    result.walked += walked
                    continue
                found = find_steps(timeline, req.condition, self._report, self._cancel.is_set)
                result.steps[key] = found.steps
                result.walked += found.walked
                if found.never:
                    result.never.append(found.never_text(key[0]))
            self._stage = (rows - 1, rows)
            for key, timeline in req.rows:
                shown = result.steps[key][:req.words]
                if len(shown):
                    texts = worded[key] if key in worded else \
                        step_words(timeline, shown, self._report, self._cancel.is_set)
                    result.words = [(int(s), key, t) for s, t in zip(shown, texts)]
                    break
        except ReplayCancelled:
            self.cancelled.emit(self)
        except FindStopped as exc:      # a strategy of your own stopped in its worker
            self.failed.emit(self, str(exc))
        except Exception as exc:        # a user strategy's mistake, shown in the panel
            self.failed.emit(self, f"{type(exc).__name__}: {exc}")
        else:
            self.succeeded.emit(self, result)


class Searcher(QObject):
    """One search at a time, on its own thread."""

    progress = Signal(int, int)         # done, total (per mille)
    succeeded = Signal(object)          # SearchResult
    failed = Signal(str)
    cancelled = Signal()
    busy_changed = Signal(bool)

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.job: SearchJob | None = None
        self.thread: threading.Thread | None = None
        self.collector = GuiThreadCollector(self)
        self._switch_interval = sys.getswitchinterval()

    @property
    def busy(self) -> bool:
        return self.job is not None

    def start(self, request: SearchRequest) -> None:
        self.stop()
        # what a worker walks of each strategy of your own, taken here, where
        # the timelines do not change meanwhile
        request.sources = {key: walk_source(timeline) for key, timeline in request.rows
                           if needs_worker(timeline.strategy_name)}
        job = self.job = SearchJob(request)
        job.progress.connect(self._progress)
        job.succeeded.connect(self._succeeded)
        job.failed.connect(self._failed)
        job.cancelled.connect(self._cancelled)
        self.thread = threading.Thread(target=job.run, name="heapscope-find", daemon=True)
        self._switch_interval = sys.getswitchinterval()
        sys.setswitchinterval(min(self._switch_interval, SWITCH_INTERVAL_WHILE_BUSY))
        self.collector.hold()
        self.busy_changed.emit(True)
        self.thread.start()

    def cancel(self) -> None:
        """Ask the running search to stop (it says so with :attr:`cancelled`)."""
        if self.job is not None:
            self.job.cancel()

    def stop(self, timeout: float = 30.0) -> None:
        """Cancel the running search and wait for its thread (a new search,
        closing the window)."""
        if self.job is None:
            return
        self.job.cancel()
        self.thread.join(timeout)
        self._finish()

    def wait(self, timeout: float = 30.0) -> bool:
        """Block until the search's thread ends (tests)."""
        if self.thread is not None:
            self.thread.join(timeout)
            return not self.thread.is_alive()
        return True

    def _current(self, job) -> bool:
        return job is self.job

    def _finish(self) -> None:
        if self.job is None:
            return
        self.thread.join()
        self.job = None
        self.thread = None
        self.collector.release()
        sys.setswitchinterval(self._switch_interval)
        self.busy_changed.emit(False)

    def _progress(self, job, done: int, total: int) -> None:
        if self._current(job):
            self.progress.emit(done, total)

    def _succeeded(self, job, result) -> None:
        if self._current(job):
            self._finish()
            self.succeeded.emit(result)

    def _failed(self, job, message: str) -> None:
        if self._current(job):
            self._finish()
            self.failed.emit(message)

    def _cancelled(self, job) -> None:
        if self._current(job):
            self._finish()
            self.cancelled.emit()
