"""Timelines the window shows while they are built, in a worker process.

Issue 25: the window shows step 0 of a trace at once and builds its timeline
in the background.  A :class:`BackgroundBuild` starts a
:class:`~heapscope.allocators.parallel.ParallelBuild` with ``keep="stream"`` for
timelines the model already shows (made, never built, in this process) and,
from a timer in the GUI thread, takes in each chunk the worker sends
(:mod:`heapscope.allocators.build_stream`): the measures' rows, the checkpoints,
how far it is built.  The model is told (``ShowModel.grown``): the scrubber
shades what is not built yet, the plots and gauges fill in, and a seek
waiting past the built part is made once the build gets there.

Why a process: the replay is pure Python, and on a thread of this process
it holds the interpreter lock; every paint of the window calls back into
Python and waited for it (a paint took up to a second during a build).  In
its own process the build takes the other core and the window never waits;
what comes back is a few arrays and pickled checkpoints (bytes) per chunk.

Each build is started and heard on a thread of its own (:class:`Receiver`):
starting a worker waits for the process server to fork it, and a chunk is
received only once the worker has written all of it; the GUI thread takes
what that thread queued, at most :data:`TAKE_SECONDS` a poll.  While a build
runs, Python's collector runs only in the GUI thread
(:mod:`heapscope.gui.gui_thread_gc`), as while the loader's thread replays.

:meth:`cancel` (the scrubber's Cancel) stops the worker and keeps what was
built: the timeline ends there, as a cancelled ``Timeline.build`` does.
:meth:`cancel` with ``quiet`` does the same without a word (another
trace or strategy was asked for: the window drops the half-built timeline
once the next one shows).  Closing the window abandons it; no worker is
left behind (``ParallelBuild.cancel`` waits for each).  A trace shorter than
:data:`BACKGROUND_FROM_OPS` operations is built on the loader's thread as
before (a fraction of a second) and shown built.
"""

from __future__ import annotations

import queue
import threading
import time

from PySide6.QtCore import QObject, QTimer, Signal

from heapscope.allocators.build_stream import stop_at_built, take_chunk, take_end
from heapscope.allocators.parallel import BuildSpec, Failed, Finished, ParallelBuild, Streamed

from .gui_thread_gc import GuiThreadCollector

#: a trace of at least this many operations is shown before it is built
#: (a shorter one builds in well under a second, on the loader's thread)
BACKGROUND_FROM_OPS = 50_000
#: how often the GUI thread looks for chunks (ms)
POLL_MS = 40
#: the least time between two reports of growth to the model (s): each lets
#: the plots and the scrubber redraw
GROW_EVERY = 0.3
#: the longest the GUI thread spends taking chunks in at one poll (s)
TAKE_SECONDS = 0.03


class Receiver:
    """One :class:`ParallelBuild`, started and heard on a thread of its own.

    Starting a worker blocks until the process server has forked it (a
    second or more on a busy machine, the first time while the server still
    imports the replay), and receiving a chunk blocks until the worker has
    written all of it; on this thread the GUI thread waits for neither.  The
    events go into :attr:`events` for the GUI thread to take; a Qt object is
    never touched here."""

    def __init__(self, build: ParallelBuild) -> None:
        self.build = build
        self.events: queue.SimpleQueue = queue.SimpleQueue()
        self.pids: list[int] = []
        self.ended = False              # set by the thread, last
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="heapscope-build", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        build = self.build
        try:
            build.start()
            while not build.finished and not self._stop.is_set():
                self._note_pids()
                for event in build.poll(0.1):
                    self.events.put(event)
        except Exception as exc:                  # noqa: BLE001 -- said in the window
            self.events.put(exc)
        finally:
            if self._stop.is_set() or not build.finished:
                build.cancel()          # every worker ended before this thread does
            self.ended = True

    def _note_pids(self) -> None:
        for pid in self.build.running.values():
            if pid not in self.pids:
                self.pids.append(pid)

    def stop(self, wait: float | None = None) -> None:
        """Stop the build (its workers are ended on the thread); wait up to
        ``wait`` seconds for that (None: until it has)."""
        self._stop.set()
        self._thread.join(wait)


class BackgroundBuild(QObject):
    """Builds shown timelines in worker processes, chunk by chunk."""

    #: (done, total) steps over every timeline being built
    progress = Signal(int, int)
    #: the build ended (argument: True when every timeline was built whole)
    ended = Signal(bool)
    #: a build failed: the key, the :class:`~heapscope.allocators.parallel.BuildFailed`
    failed = Signal(object, object)

    def __init__(self, model, parent=None) -> None:
        super().__init__(parent)
        self.model = model
        #: the builds under way, each a ParallelBuild of one or more timelines on its thread
        self.builds: list[Receiver] = []
        # no collection on the builds' threads (gui/gui_thread_gc.py)
        self.collector = GuiThreadCollector(self)
        #: (build, spec key) -> (model key, timeline) of what is being built
        self._timelines: dict[tuple, tuple] = {}
        self._grown_at = 0.0
        self._stale: set[tuple] = set()
        self._timer = QTimer(self)
        self._timer.setInterval(POLL_MS)
        self._timer.timeout.connect(self._poll)
        #: worker process ids started (tests look for leftovers)
        self.started_pids: list[int] = []

    @property
    def active(self) -> bool:
        return bool(self.builds)

    def keys(self) -> list:
        """The model keys of the timelines being built."""
        return [key for key, _ in self._timelines.values()]

    def start(self, trace, timelines: dict, time_limit: float | None = None, add: bool = False) -> None:
        """Build ``timelines`` ({model key: timeline of ``trace``, unbuilt})
        in the background; each already kept by the model with
        ``building=True``.  A build under way is stopped first (its
        timelines keep what they have), unless ``add`` (compare mode's rows
        are built beside the shown strategy's)."""
        if self.active and not add:
            self.cancel(quiet=True)
        specs, entries = [], {}
        for key, timeline in timelines.items():
            spec_key = f"{key[0]}#{len(specs)}"
            specs.append(BuildSpec(timeline.strategy_name, dict(timeline.params), key=spec_key))
            entries[spec_key] = (key, timeline)
        self.collector.hold()
        build = Receiver(ParallelBuild(trace, specs, keep="stream", time_limit=time_limit))
        self.builds.append(build)
        for spec_key, entry in entries.items():
            self._timelines[(id(build), spec_key)] = entry
        self._timer.start()
        self._emit_progress()

    def done_and_total(self) -> tuple[int, int]:
        """Steps built and to build, over every timeline under way."""
        done = sum(tl.built for _, tl in self._timelines.values())
        total = sum(len(tl.trace) for _, tl in self._timelines.values())
        return done, total

    def cancel(self, quiet: bool = False) -> None:
        """Stop now; each timeline keeps the steps built so far and ends
        there.  ``quiet``: without :attr:`ended` (the caller drops them)."""
        if not self.active:
            return
        timelines = list(self._timelines.values())
        self._stop()
        for key, timeline in timelines:
            stop_at_built(timeline)
            self.model.grown(key, done=True)
        if not quiet:
            self.ended.emit(False)

    def abandon(self) -> None:
        """Stop now, telling nobody (closing the window)."""
        if self.active:
            self._stop()

    def _stop(self) -> None:
        """Stop every build and wait until its workers have ended (none is
        left behind); their late events are dropped with them."""
        self._timer.stop()
        builds, self.builds = self.builds, []
        self._timelines = {}
        self._stale.clear()
        for build in builds:
            build.stop(wait=0)
        for build in builds:
            build.stop()
            self._note_pids(build)
        self.collector.release()

    def _note_pids(self, build: Receiver) -> None:
        for pid in list(build.pids):
            if pid not in self.started_pids:
                self.started_pids.append(pid)

    def _poll(self) -> None:
        t0 = time.perf_counter()
        finished = []
        for build in list(self.builds):
            self._note_pids(build)
            ended = build.ended         # read first: every event is queued before it is set
            # a few chunks at a time: the rest wait for the next poll
            while time.perf_counter() - t0 < TAKE_SECONDS and build in self.builds:
                try:
                    event = build.events.get_nowait()
                except queue.Empty:
                    if ended:
                        finished.append(build)
                    break
                self._take(build, event)
        if not self.builds:
            return
        now = time.monotonic()
        if self._stale and now - self._grown_at >= GROW_EVERY:
            self._grown_at = now
            self._report()
        if finished:
            self._report()
            for build in finished:
                self.builds.remove(build)
                self._timelines = {k: v for k, v in self._timelines.items() if k[0] != id(build)}
            if not self.builds:
                self._timer.stop()
                self.collector.release()
                self.ended.emit(True)

    def _take(self, build, event) -> None:
        if isinstance(event, Exception):        # the build could not start its workers
            for key, timeline in [v for k, v in self._timelines.items() if k[0] == id(build)]:
                stop_at_built(timeline)
                self.model.grown(key, done=True)
                self.failed.emit(key, event)
            return
        entry = self._timelines.get((id(build), event.key))
        if entry is None:
            return
        key, timeline = entry
        where = (id(build), event.key)
        if isinstance(event, Streamed):
            take_chunk(timeline, event.chunk)
            self._stale.add(where)
        elif isinstance(event, Finished):
            take_end(timeline, event.result)
            self._stale.discard(where)
            self.model.grown(key, done=True)
            self._emit_progress()
        elif isinstance(event, Failed):
            stop_at_built(timeline)
            self._stale.discard(where)
            self.model.grown(key, done=True)
            self.failed.emit(key, build.build.results.get(event.key))

    def _report(self) -> None:
        for spec_key in list(self._stale):
            entry = self._timelines.get(spec_key)
            if entry is not None:
                self.model.grown(entry[0])
        self._stale.clear()
        self._emit_progress()

    def _emit_progress(self) -> None:
        done, total = self.done_and_total()
        self.progress.emit(done, total)
