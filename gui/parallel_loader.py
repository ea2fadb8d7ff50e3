"""Building several strategies' timelines at once for the window.

The window's :class:`~heapscope.gui.loader.Loader` builds one timeline on a Python
thread; for compare mode that would replay the strategies one after the
other on one core (the replay is pure Python and holds the interpreter
lock).  A :class:`ParallelLoader` runs an :class:`heapscope.allocators.parallel.ParallelBuild`
instead -- one worker process per strategy, every core busy -- and polls it
from a Qt timer (``poll(0)`` never blocks), so the window keeps drawing.
Its :class:`BuildDialog` shows one progress bar per strategy and a Cancel
button; cancelling terminates every worker and waits for each
(``ParallelBuild.cancel``), so no process is left behind, and the window
keeps what it showed.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from PySide6.QtCore import QObject, Qt, QTimer, Signal
from PySide6.QtWidgets import (QDialog, QDialogButtonBox, QGridLayout, QLabel, QProgressBar,
                               QVBoxLayout)

from heapscope.allocators.parallel import (BuildFailed, BuildSpec, Failed, Finished, ParallelBuild, Progress,
                                          warm_up)

#: how often the build is polled (ms)
POLL_MS = 40
#: the dialog appears only for builds that take longer than this (ms)
SHOW_DIALOG_AFTER_MS = 300


@dataclass
class BuildRequest:
    """Timelines to build for ``trace``: ``specs`` is ``[(strategy, params), ...]``.
    ``context`` is whatever the caller wants back with the result (the
    position to show, a new trace's source...)."""
    trace: object
    specs: list
    label: str = "trace"
    context: dict = field(default_factory=dict)


@dataclass
class BuildResult:
    request: BuildRequest
    #: strategy name -> Timeline of the request's trace
    timelines: dict
    #: strategy name -> the error in words, for builds that failed
    failures: dict


class BuildDialog(QDialog):
    """One progress bar per strategy, and Cancel."""

    cancel_requested = Signal()

    def __init__(self, label: str, names: list[str], total: int, parent=None) -> None:
        super().__init__(parent)
        self.setWindowTitle("heapscope")
        self.setWindowModality(Qt.WindowModal)
        self.setMinimumWidth(480)
        title = QLabel(f"Replaying {label} through {len(names)} strategies at once…")
        title.setWordWrap(True)
        grid = QGridLayout()
        grid.setColumnStretch(1, 1)
        self.bars: dict[str, QProgressBar] = {}
        self.states: dict[str, QLabel] = {}
        for i, name in enumerate(names):
            grid.addWidget(QLabel(name), i, 0)
            bar = QProgressBar()
            bar.setRange(0, max(total, 1))
            bar.setValue(0)
            grid.addWidget(bar, i, 1)
            state = QLabel("waiting")
            state.setMinimumWidth(state.fontMetrics().horizontalAdvance("step 10,000,000") + 8)
            grid.addWidget(state, i, 2)
            self.bars[name] = bar
            self.states[name] = state
        buttons = QDialogButtonBox(QDialogButtonBox.Cancel)
        buttons.rejected.connect(self.cancel_requested)
        box = QVBoxLayout(self)
        box.addWidget(title)
        box.addLayout(grid)
        box.addWidget(buttons)

    def show_progress(self, name: str, done: int, total: int) -> None:
        bar = self.bars.get(name)
        if bar is None:
            return
        bar.setMaximum(max(total, 1))
        bar.setValue(done)
        self.states[name].setText(f"step {done:,}")

    def show_done(self, name: str, ok: bool) -> None:
        bar = self.bars.get(name)
        if bar is None:
            return
        if ok:
            bar.setValue(bar.maximum())
        self.states[name].setText("done" if ok else "failed")

    def reject(self) -> None:          # Escape, the close box
        self.cancel_requested.emit()


class ParallelLoader(QObject):
    """Runs one :class:`BuildRequest` at a time through a ParallelBuild."""

    succeeded = Signal(object)        # BuildResult
    cancelled = Signal(object)        # BuildRequest
    busy_changed = Signal(bool)

    def __init__(self, parent) -> None:
        super().__init__(parent)
        self.window = parent
        self.build: ParallelBuild | None = None
        self.request: BuildRequest | None = None
        self.dialog: BuildDialog | None = None
        #: the worker process ids of every build started (tests check they are gone)
        self.started_pids: list[int] = []
        #: how many strategies this loader has had built, in all (tests count replays)
        self.builds_started = 0
        self._timer = QTimer(self)
        self._timer.setInterval(POLL_MS)
        self._timer.timeout.connect(self._poll)
        self._dialog_timer = QTimer(self)
        self._dialog_timer.setSingleShot(True)
        self._dialog_timer.timeout.connect(self._show_dialog)

    @property
    def busy(self) -> bool:
        return self.build is not None

    def start(self, request: BuildRequest) -> None:
        """Build ``request``'s timelines in worker processes (cancelling a build under way)."""
        if self.busy:
            self.cancel()
        self.request = request
        specs = [BuildSpec(name, dict(params), key=name) for name, params in request.specs]
        self.builds_started += len(specs)
        # The server's start on a thread of its own, if the first load's
        # warm-up has not begun it (compare mode entered just after that
        # load): the workers are launched from _poll once it answers, not
        # here, where reading the first one's pid held the GUI thread 227-447 ms.
        warm_up()
        # a strategy of your own among them: its worker is stopped at the window's time limit
        self.build = ParallelBuild(request.trace, specs,
                                   time_limit=getattr(self.window, "time_limit", None)).start()
        self._note_pids()
        self.dialog = BuildDialog(request.label, [s.key for s in specs], len(request.trace), self.window)
        self.dialog.cancel_requested.connect(self.cancel)
        self._dialog_timer.start(SHOW_DIALOG_AFTER_MS)
        self._timer.start()
        self.busy_changed.emit(True)

    def _note_pids(self) -> None:
        for pid in self.build.running.values():
            if pid not in self.started_pids:
                self.started_pids.append(pid)

    def _show_dialog(self) -> None:
        if self.dialog is not None:
            self.dialog.show()

    def _poll(self) -> None:
        build = self.build
        if build is None:
            return
        for event in build.poll(0):
            if self.dialog is None:
                break
            if isinstance(event, Progress):
                self.dialog.show_progress(event.key, event.done, event.total)
            elif isinstance(event, Finished):
                self.dialog.show_done(event.key, True)
            elif isinstance(event, Failed):
                self.dialog.show_done(event.key, False)
        if self.build is not build:
            return               # cancelled from the dialog meanwhile
        self._note_pids()        # workers started as others ended
        if build.finished:
            self._finish_success()

    def _finish_success(self) -> None:
        build, request = self.build, self.request
        timelines, failures = {}, {}
        for name, result in build.results.items():
            if isinstance(result, BuildFailed):
                failures[name] = result.error
            else:
                timelines[name] = result
        self._tidy()
        self.succeeded.emit(BuildResult(request, timelines, failures))

    def cancel(self) -> None:
        """Stop every worker (waiting for each to end); the window keeps what it showed."""
        build, request = self.build, self.request
        if build is None:
            return
        build.cancel()
        self._tidy()
        self.cancelled.emit(request)

    def wait(self, ms: int = 60000) -> bool:
        """Run the build to its end here, without the event loop (tests, closing)."""
        import time
        deadline = time.monotonic() + ms / 1000
        while self.build is not None and time.monotonic() < deadline:
            self.build.poll(0.05)
            if self.build.finished:
                self._finish_success()
        return self.build is None

    def _tidy(self) -> None:
        self._timer.stop()
        self._dialog_timer.stop()
        self.build = None
        self.request = None
        if self.dialog is not None:
            self.dialog.cancel_requested.disconnect(self.cancel)
            self.dialog.hide()
            self.dialog.deleteLater()
            self.dialog = None
        self.busy_changed.emit(False)
