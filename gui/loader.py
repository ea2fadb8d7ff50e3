"""Reading a trace and replaying it off the GUI thread.

A :class:`ReplayJob` runs on a plain Python thread: it makes the trace (reads
a file, runs a workload generator, or takes a trace already in memory), builds
the :class:`heapscope.allocators.replay.Timeline` with progress reports, and hands the
result back through signals, which Qt queues to the GUI thread because the
job object itself lives there.  (The job is not moved to a QThread: after such
a thread ended, deleting its objects raced Qt's own deferred deletion, and a
garbage collection in the GUI thread crashed the process about once in a
dozen test runs.  A job that never leaves the GUI thread is deleted there,
like any other Python object.)  The :class:`Loader` owns the thread and a
cancellable QProgressDialog; cancelling makes ``Timeline.build`` raise
``ReplayCancelled`` at its next progress point, and the window keeps what it
showed before.  Only one job runs at a time: starting another cancels the
first.  A file is read by a :class:`ReadTrace` request, which reports the bytes
read and looks at the cancel flag after every chunk and while it waits for a
silent FIFO, so a huge or endless input shows progress and can be cancelled
(the reader's limits stop it anyway).

A trace of :data:`~heapscope.gui.background_build.BACKGROUND_FROM_OPS` operations
or more is not replayed there: the job makes its timeline, unbuilt, and the
window shows step 0 at once and builds it in a worker process
(gui/background_build.py), with its progress on the scrubber.

A strategy of your own (a plugin) is not replayed on that thread: the thread
runs an :class:`heapscope.allocators.parallel.ParallelBuild` of it in a worker process
with the window's time limit (allocators/isolation.py) and waits for it.
Cancel, another strategy or closing the window kills the worker at once
(:meth:`ReplayJob.cancel`); a worker silent past the limit, one that dies or
exits, fails the load with the reason (``BuildFailed``), and the window keeps
what it showed.

While the job runs, Python's cyclic garbage collector runs only in the GUI
thread (:mod:`heapscope.gui.gui_thread_gc`): an automatic collection triggered by the
replay's allocations would otherwise destroy, in the replay thread, Qt objects
that the GUI thread made and left in reference cycles (a closed window's
pyqtgraph menus), and the process crashed some time later.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from dataclasses import dataclass
from typing import Callable

from PySide6.QtCore import QObject, Qt, Signal, Slot
from PySide6.QtWidgets import QProgressDialog

from heapscope.allocators.isolation import DEFAULT_TIME_LIMIT, needs_worker
from heapscope.allocators.parallel import BuildFailed, BuildSpec, ParallelBuild
from heapscope.allocators.replay import ReplayCancelled, Timeline
from heapscope.traces import ReadCancelled, load_trace, read_trace_file
from . import background_build
from .gui_thread_gc import GuiThreadCollector

#: the progress dialog appears only for jobs that take longer than this (ms)
SHOW_PROGRESS_AFTER_MS = 300
#: Python's thread switch interval while a job runs (s).  The replay is pure
#: Python and holds the GIL; every paint of the window calls back into Python
#: (pyqtgraph items) and, with the default 5 ms, each of those calls could wait
#: a whole interval: the first paint of the window then took 1.5 s.
SWITCH_INTERVAL_WHILE_BUSY = 0.001
#: the least time between two reports of the bytes read (s)
READ_REPORT_EVERY = 0.1


def reading_progress(label: str, done: int, total: int) -> tuple[str, int, int]:
    """(label, value, maximum) of the progress dialog after ``done`` bytes of
    ``total`` were read: per mille, as QProgressDialog counts in int; with no
    size (a FIFO, a device) a busy bar, maximum 0."""
    read = f"{done / 1e6:,.1f} MB" + (f" of {total / 1e6:,.1f} MB" if total else "")
    if not total:
        return f"Reading {label}: {read}", 0, 0
    return f"Reading {label}: {read}", min(done * 1000 // total, 1000), 1000


@dataclass(frozen=True)
class ReadTrace:
    """A request's ``make_trace`` that reads a file (or a spec, as
    :func:`heapscope.traces.load_trace` takes it) with the job's progress and cancel.
    ``is_file``: ``spec`` is a path even if it looks like a workload name."""
    spec: str | os.PathLike
    is_file: bool = False

    def __call__(self, progress=None, cancel=None):
        read = read_trace_file if self.is_file else load_trace
        return read(self.spec, progress=progress, cancel=cancel)


@dataclass
class LoadRequest:
    """What to load: ``make_trace()`` runs in the worker (one with a true
    ``replays`` attribute is called with ``progress`` and ``cancel``);
    ``source`` is the file (for the recent list) or None; ``keep_position``
    the step to show after.  ``strategy`` None: the trace only (compare mode
    builds its strategies next, all at once: gui/compare_mode.py)."""
    label: str
    make_trace: Callable
    strategy: str
    params: dict
    source: str | None = None
    keep_position: int | None = None
    #: seconds a strategy of your own may go without an answer in its worker
    time_limit: float | None = DEFAULT_TIME_LIMIT


@dataclass
class LoadResult:
    request: LoadRequest
    trace: object
    timeline: Timeline | None     # None when the request asked for the trace only
    #: the timeline is not built: the window shows it and builds it in the
    #: background (gui/background_build.py)
    building: bool = False


class ReplayJob(QObject):
    # Every signal names its request, so that the Loader can drop the late
    # signals of a job it has already given up on.
    progress = Signal(object, int, int)
    read_progress = Signal(object, int, int)   # request, bytes read, size (0: unknown)
    succeeded = Signal(object)          # LoadResult
    failed = Signal(object, object)     # request, the exception
    cancelled = Signal(object)          # request
    done = Signal(object)               # request

    def __init__(self, request: LoadRequest) -> None:
        super().__init__()
        self.request = request
        self._cancel = threading.Event()
        self._last_read_report = 0.0
        #: the worker build of a strategy of your own, while it runs
        self.build: ParallelBuild | None = None
        self._build_lock = threading.Lock()

    @property
    def cancel_asked(self) -> bool:
        return self._cancel.is_set()

    def cancel(self) -> None:
        """Stop the job: at its next progress point, or, for a strategy of your
        own, now (its worker is killed here, whichever thread calls)."""
        self._cancel.set()
        with self._build_lock:
            build = self.build
        if build is not None:
            build.cancel()

    @Slot()
    def run(self) -> None:
        req = self.request
        try:
            if isinstance(req.make_trace, ReadTrace):
                trace = req.make_trace(progress=self._report_read, cancel=self._cancel.is_set)
            elif getattr(req.make_trace, "replays", False):
                # it replays to make what it gives (a lesson: gui/lesson_part.py):
                # the steps replayed are its progress, and Cancel stops it
                trace = req.make_trace(progress=self._report, cancel=self._cancel.is_set)
            else:
                trace = req.make_trace()
            if self._cancel.is_set():
                raise ReplayCancelled(0)
            # the trace keeps its statistics once made: made here, where they
            # cost no paint (the heap map asks for them: 1.9 s at a million
            # operations under load, on the GUI thread)
            stats = getattr(trace, "stats", None)
            if callable(stats):
                stats()
            timeline, building = None, False
            if req.strategy is not None and needs_worker(req.strategy):
                timeline = self._build_in_worker(trace)
            elif req.strategy is not None:
                timeline = Timeline(trace, req.strategy, req.params)
                building = len(trace) >= background_build.BACKGROUND_FROM_OPS
                if not building:
                    self.progress.emit(req, 0, max(timeline.n, 1))
                    timeline.build(progress=self._report, cancel=self._cancel.is_set)
        except (ReplayCancelled, ReadCancelled):
            self.cancelled.emit(req)
        except Exception as exc:       # shown to the user; the window keeps its trace
            self.failed.emit(req, exc)
        else:
            self.succeeded.emit(LoadResult(req, trace, timeline, timeline is not None and building))
        finally:
            self.done.emit(req)

    def _build_in_worker(self, trace) -> Timeline:
        """The timeline of a strategy of your own, built in a worker process;
        ReplayCancelled when cancelled, BuildFailed when the worker gave none."""
        req = self.request
        build = ParallelBuild(trace, [BuildSpec(req.strategy, dict(req.params))], workers=1,
                              time_limit=req.time_limit, keep_faults=True)
        with self._build_lock:
            if self._cancel.is_set():
                raise ReplayCancelled(0)
            self.build = build
        try:
            self.progress.emit(req, 0, max(len(trace), 1))
            build.wait(progress=lambda key, done, total: self._report(done, total),
                       cancel=self._cancel.is_set)
        finally:
            with self._build_lock:
                self.build = None
            build.cancel()            # nothing left running, whatever happened
        result = build.results.get(req.strategy)
        if result is None or self._cancel.is_set():
            raise ReplayCancelled(0)
        if isinstance(result, BuildFailed):
            raise result
        return result

    def _report(self, done: int, total: int) -> None:
        self.progress.emit(self.request, done, total)

    def _report_read(self, done: int, total: int) -> None:
        now = time.monotonic()
        if now - self._last_read_report >= READ_REPORT_EVERY:
            self._last_read_report = now
            self.read_progress.emit(self.request, done, total)


class Loader(QObject):
    """Runs one :class:`ReplayJob` at a time with a progress dialog over ``parent``."""

    succeeded = Signal(object)
    failed = Signal(object, object)   # exception, LoadRequest
    cancelled = Signal(object)        # LoadRequest
    busy_changed = Signal(bool)

    def __init__(self, parent) -> None:
        super().__init__(parent)
        self.window = parent
        self.job: ReplayJob | None = None
        self.thread: threading.Thread | None = None
        self.dialog: QProgressDialog | None = None
        # Dialogs closed while one of them was inside setValue(), deleted once
        # it has returned (see _set_value).
        self._closed_dialogs: list[QProgressDialog] = []
        self._in_set_value = 0
        self._request: LoadRequest | None = None
        self._switch_interval = sys.getswitchinterval()
        # No garbage collection in the replay thread: see gui.gui_thread_gc.
        self.collector = GuiThreadCollector(self)
        self._stragglers: list[tuple[threading.Thread, ReplayJob]] = []

    @property
    def busy(self) -> bool:
        return self.job is not None

    @property
    def request(self) -> LoadRequest | None:
        """What the running job loads (None when idle)."""
        return self._request if self.busy else None

    def start(self, request: LoadRequest) -> None:
        if self.busy:
            self.cancel()
            if not self.wait():
                # It did not stop in time.  Keep it here until its thread has
                # ended, so that the job (a QObject) is freed in this thread,
                # never in its own when the thread drops its target.
                self._stragglers.append((self.thread, self.job))
        self._request = request
        self.job = ReplayJob(request)
        self.thread = threading.Thread(target=self.job.run, name="heapscope-replay", daemon=True)
        self.job.progress.connect(self._progress)
        self.job.read_progress.connect(self._read_progress)
        self.job.succeeded.connect(self._succeeded)
        self.job.failed.connect(self._failed)
        self.job.cancelled.connect(self._cancelled)
        self.job.done.connect(self._done)
        doing = (f"Reading {request.label}…" if isinstance(request.make_trace, ReadTrace)
                 else f"Preparing {request.label}…" if request.strategy is None
                 else f"Replaying {request.label} through {request.strategy}…")
        self.dialog = QProgressDialog(doing, "Cancel", 0, 0, self.window)
        self.dialog.setWindowTitle("heapscope")
        self.dialog.setWindowModality(Qt.WindowModal)
        self.dialog.setMinimumDuration(SHOW_PROGRESS_AFTER_MS)
        self.dialog.setAutoClose(False)
        self.dialog.setAutoReset(False)
        self.dialog.setMinimumWidth(420)
        self.dialog.canceled.connect(self.cancel)
        self.dialog.setValue(0)
        self.busy_changed.emit(True)
        self._switch_interval = sys.getswitchinterval()
        sys.setswitchinterval(min(self._switch_interval, SWITCH_INTERVAL_WHILE_BUSY))
        # A collection the replay's allocations triggered would run in the replay
        # thread and could destroy Qt objects there (gui.gui_thread_gc).
        self.collector.hold()
        self.thread.start()

    def cancel(self) -> None:
        if self.job is not None:
            self.job.cancel()

    def wait(self, ms: int = 30000) -> bool:
        """Block until the worker thread ends (closing the window, tests)."""
        if self.thread is None:
            return True
        self.thread.join(ms / 1000)
        ok = not self.thread.is_alive()
        if ok:
            self._finish()
        return ok

    def _current(self, request: LoadRequest) -> bool:
        return self.job is not None and request is self._request

    @Slot(object, int, int)
    def _progress(self, request, done: int, total: int) -> None:
        dialog = self.dialog
        if self._current(request) and dialog is not None:
            dialog.setMaximum(total)
            through = f" through {request.strategy}" if request.strategy is not None else ""
            dialog.setLabelText(f"Replaying {request.label}{through}: step {done:,} of {total:,}")
            # last: a modal dialog's setValue processes events, which may end the job
            self._set_value(dialog, done)

    @Slot(object, int, int)
    def _read_progress(self, request, done: int, total: int) -> None:
        dialog = self.dialog
        if self._current(request) and dialog is not None:
            text, value, maximum = reading_progress(request.label, done, total)
            dialog.setLabelText(text)
            dialog.setMaximum(maximum)
            # last: a modal dialog's setValue processes events, which may end the job
            self._set_value(dialog, value)

    def _set_value(self, dialog: QProgressDialog, value: int) -> None:
        """``dialog.setValue(value)``, with the dialog kept alive until it returns.

        A modal progress dialog that has been shown processes events inside
        setValue.  The job's last signals may be among them, and closing the
        dialog there used to call its deleteLater(), which that same
        processEvents() then carried out (the deferred delete was posted at a
        deeper level than the one processing it): QProgressDialog::setValue
        went on in a deleted dialog and the process died (SIGSEGV in
        ``_progress``; whenever a load outlasted SHOW_PROGRESS_AFTER_MS)."""
        self._in_set_value += 1
        try:
            dialog.setValue(value)
        finally:
            self._in_set_value -= 1
        if not self._in_set_value:
            self._delete_closed_dialogs()

    def _delete_closed_dialogs(self) -> None:
        closed, self._closed_dialogs = self._closed_dialogs, []
        for dialog in closed:
            dialog.deleteLater()

    # The job's last signals: tidy up first (the worker only has to return), so
    # that ``busy`` is already false when the window hears the outcome.
    @Slot(object)
    def _succeeded(self, result: LoadResult) -> None:
        if self._current(result.request):
            # Cancel pressed after the job's last step but before its result
            # got here (a short job): the user asked to keep what was shown.
            cancel_asked = self.job.cancel_asked
            self._finish()
            if cancel_asked:
                self.cancelled.emit(result.request)
            else:
                self.succeeded.emit(result)

    @Slot(object, object)
    def _failed(self, request, exc: Exception) -> None:
        if self._current(request):
            self._finish()
            self.failed.emit(exc, request)

    @Slot(object)
    def _cancelled(self, request) -> None:
        if self._current(request):
            self._finish()
            self.cancelled.emit(request)

    @Slot(object)
    def _done(self, request) -> None:
        if self._current(request):
            self._finish()

    def _finish(self) -> None:
        if self.thread is None:
            return
        # The job has emitted its last signal; this returns at once.
        self.thread.join()
        self.thread = None
        self.job = None
        self._request = None          # a finished load keeps nothing of what it read
        self._stragglers = [(t, job) for t, job in self._stragglers if t.is_alive()]
        if not self._stragglers:
            self.collector.release()
        sys.setswitchinterval(self._switch_interval)
        self._close_dialog()
        self.busy_changed.emit(False)

    def _close_dialog(self) -> None:
        if self.dialog is not None:
            # its Cancel button hides it before we hear of it: it was shown then too
            shown = self.dialog.isVisible() or self.dialog.wasCanceled()
            self.dialog.canceled.disconnect(self.cancel)
            self.dialog.reset()
            self.dialog.hide()
            if shown and self.window.isVisible():
                # The window-modal dialog was the active window: without
                # this no window is active once it hides (offscreen, and
                # window managers that do not hand focus back), and the
                # arrow keys step nothing until the user clicks.
                self.window.activateWindow()
            self._closed_dialogs.append(self.dialog)
            self.dialog = None
            if not self._in_set_value:
                self._delete_closed_dialogs()
