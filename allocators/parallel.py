"""Several strategies' timelines for one trace, built at once in worker processes.

The replay is pure Python and holds the interpreter lock, so threads would
take turns on one core; each build runs in a process of its own instead.
A :class:`ParallelBuild` starts the workers, reports each build's progress
and result as events, and can be cancelled at any time, leaving no process
behind::

    build = ParallelBuild(trace, [BuildSpec("tlsf"), BuildSpec("buddy", {"max_order": 14})])
    build.start()
    while not build.finished:
        for event in build.poll(timeout=0.1):    # Progress, Finished or Failed
            ...
    build.results    # {"tlsf": Timeline, "buddy": Timeline}

or, in one call, :func:`build_timelines`.  A GUI polls from a timer (``poll(0)``
never blocks on a message that has not arrived) or runs :meth:`ParallelBuild.wait`
on a thread of its own; :meth:`ParallelBuild.cancel` may be called from
anywhere, a progress callback included.

What comes back: with ``keep="timeline"`` a :class:`~heapscope.allocators.replay.Timeline`
of the caller's own trace, rebuilt from what the worker shipped
(:class:`~heapscope.allocators.replay.BuiltTimeline`: measures, checkpoints, final
state; never the trace, which the caller has); with ``keep="summary"`` only
the summary row (``heapscope compare``, which keeps no checkpoints either).

User code (a strategy of your own, allocators/user.py) may loop forever or
end its process: with ``time_limit=SECONDS`` every build of a user strategy
answers from its worker while it runs, and one silent for that long is
killed and fails with "no answer in N s at step S"; a worker that dies or a
``BaseException`` that escapes fails its build with the reason and the last
step heard (allocators/isolation.py).  A :class:`BuildSpec` with a ``job``
runs that function in the worker instead of a timeline build
(``heapscope grade`` grades a trace there, ``inspect`` makes its report);
when every spec has a job the trace may be None (each job brings its own:
``heapscope experiment`` measures many traces in one build), and
:meth:`ParallelBuild.withdraw` takes back builds not yet started.

Start method: a fork is the cheapest start, but forking a process that runs
other threads (a Qt window does) can leave the child holding locks no thread
will release, so ``fork`` is used only when this process runs one thread and
has no Qt loaded; otherwise ``forkserver`` (a clean server process started
once, which forks the workers) or ``spawn``.
"""

from __future__ import annotations

import multiprocessing as mp
import multiprocessing.connection
import os
import signal
import sys
import threading
import time
import traceback
from collections import deque
from dataclasses import dataclass, field
from typing import Callable, Iterable

from . import isolation, registry
from .build_stream import ChunkSender
from .shipped_trace import ShippedTrace
from .replay import Timeline
from .replay_costs import longest_first

#: above this many operations, at most one worker per core runs at a time
#: (a timeline's build holds its measures, 62 bytes an op, and the trace's
#: arrays, 17: docs/timeline.md);
#: below it every build starts at once and the system shares the cores
ALL_AT_ONCE_UP_TO = 250_000


@dataclass(frozen=True)
class BuildSpec:
    """One build: a registered strategy, its parameters, and the key its
    events and result go by (the strategy's name unless given).

    ``job``: run this instead of a timeline build, as ``job(trace, spec,
    note)`` in the worker; its return value (picklable) is the result, and
    ``note(value)`` reaches the parent as a :class:`Note` event.  A
    module-level function or a ``functools.partial`` of one (a worker
    started afresh imports it by name)."""
    name: str
    params: dict = field(default_factory=dict)
    key: str = ""
    job: Callable | None = None

    def __post_init__(self) -> None:
        if not self.key:
            object.__setattr__(self, "key", self.name)


@dataclass(frozen=True)
class Progress:
    key: str
    done: int
    total: int


@dataclass(frozen=True)
class Streamed:
    """What a ``keep="stream"`` build has built since its last report
    (:class:`~heapscope.allocators.build_stream.Chunk`)."""
    key: str
    chunk: object

    @property
    def done(self) -> int:
        return self.chunk.done


@dataclass(frozen=True)
class Finished:
    key: str
    result: object          # a Timeline, or a summary dict with keep="summary"


@dataclass(frozen=True)
class Note:
    """What a :class:`BuildSpec` job told the parent on the way (``note(value)``)."""
    key: str
    value: object


@dataclass(frozen=True)
class Failed:
    """A build that raised (``error`` is the exception's type and message,
    ``details`` its traceback in the worker), whose worker died or which was
    killed at its time limit; ``step`` is the last step heard of, ``where``
    the user's code it was in (``Loop._malloc (loop.py:9)``) if known."""
    key: str
    error: str
    details: str = ""
    step: int = 0
    where: str | None = None


class BuildFailed(Exception):
    """What :func:`build_timelines` gives for a build that failed."""

    def __init__(self, key: str, error: str, details: str = "", step: int = 0,
                 where: str | None = None) -> None:
        super().__init__(f"{key}: {error}")
        self.key, self.error, self.details = key, error, details
        self.step, self.where = step, where


def cores() -> int:
    """The cores this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def default_start_method() -> str:
    """``fork`` when it is safe (one thread, no Qt), else ``forkserver`` or ``spawn``."""
    methods = mp.get_all_start_methods()
    if "fork" in methods and threading.active_count() == 1 and not any(
            name.startswith("PySide6") for name in sys.modules):
        return "fork"
    return "forkserver" if "forkserver" in methods else "spawn"


#: set unless the forkserver started by :func:`warm_up` is still importing
#: the replay (a build launches its workers once it is set: server_starting)
_server_ready = threading.Event()
_server_ready.set()
#: warm_up has been called in this process
_warmed = False


def warm_up() -> None:
    """Start the forkserver now, on a thread of its own, so that the first
    build does not wait for it: the server imports the replay before it
    forks a worker, and a build started meanwhile blocked its caller (the
    window's GUI thread, 15 s under load) writing the worker's arguments,
    then reading the worker's pid (227 ms on an idle machine: compare mode
    entered just after the first load, issue 25's stall probe).  Until the
    server has forked a first worker, :func:`server_starting` is true and
    builds wait to launch theirs (ParallelBuild._launch, poll).  Once a
    process: a later call does nothing."""
    global _warmed
    if default_start_method() != "forkserver" or _warmed:
        return
    _warmed = True
    context = mp.get_context("forkserver")
    context.set_forkserver_preload([__name__])
    from multiprocessing import forkserver
    _server_ready.clear()

    def start_server() -> None:
        try:
            forkserver.ensure_running()
            # the server answers a fork once it has imported the preload
            first = context.Process(target=_nothing, name="heapscope warm-up", daemon=True)
            first.start()
            first.join()
        except Exception:   # noqa: BLE001 -- the first build starts the server as before, and says why
            pass
        finally:
            _server_ready.set()
    threading.Thread(target=start_server, name="heapscope-forkserver", daemon=True).start()


def server_starting() -> bool:
    """The forkserver :func:`warm_up` started has not forked its first worker yet."""
    return not _server_ready.is_set()


def _nothing() -> None:
    """A worker with nothing to do: the forkserver's first fork (warm_up)."""


def strategy_source(name: str) -> tuple | None:
    """Where a worker started afresh (forkserver, spawn) finds strategy
    ``name`` when it is no built-in: a user strategy's file or installed
    package (allocators/plugins.py), or the module and class it was
    registered from.  None for a built-in or an unknown name."""
    from . import plugins
    cls = registry.STRATEGIES.get(name)
    if cls is None or cls.__module__.startswith(registry.__name__.rsplit(".", 1)[0]):
        return None
    origin = plugins.ORIGINS.get(name)
    if origin is not None:
        return ("installed",) if origin.startswith("entry point") else ("file", origin)
    return ("class", cls.__module__, cls.__qualname__)


def _find_strategy(name: str, source: tuple | None) -> None:
    """Register strategy ``name`` in this worker from where the parent had it."""
    if source is None or name in registry.STRATEGIES:
        return
    from . import plugins
    if source[0] == "file":
        plugins.load_file(source[1])
    elif source[0] == "installed":
        plugins.load_installed()
    else:
        import importlib
        obj = importlib.import_module(source[1])
        for part in source[2].split("."):
            obj = getattr(obj, part)
        registry.STRATEGIES[name] = obj


def summary_row(timeline: Timeline) -> dict:
    """A built timeline's row as ``heapscope compare`` prints it: its summary
    and ``cpu_s``, the CPU time of the replay (``heapscope sweep`` measures
    each cell with this too, so its numbers are compare's)."""
    row = timeline.summary()
    row["cpu_s"] = timeline.cpu_seconds
    return row


#: a build's progress goes to the parent at most this often (the last step always):
#: a message every 4096 steps took 4% of a fast replay on ten million operations
PROGRESS_SECONDS = 0.05


def _throttled(send) -> Callable[[int, int], None]:
    """A build's progress callback that sends ("progress", done, total) at most
    every PROGRESS_SECONDS, and always at the end."""
    last = [float("-inf")]

    def progress(done: int, total: int) -> None:
        now = time.monotonic()
        if done >= total or now - last[0] >= PROGRESS_SECONDS:
            last[0] = now
            send(("progress", done, total))
    return progress


#: a build streamed to a window (keep="stream": the window's background
#: builds) runs this much nicer than the window: the window's event loop,
#: drawing what comes in, gets a core before seven workers do (issue 25's
#: stall probe: a compare row's 50 ms of CPU took 0.12-0.31 s of wall beside them)
STREAM_NICE = 5


def _nicer(by: int) -> None:
    try:
        os.nice(by)
    except (AttributeError, OSError):      # no os.nice (Windows), or not allowed
        pass


def _worker(conn, trace, spec: BuildSpec, keep: str, checkpoints: bool, source: tuple | None,
            answer=None, keep_faults: bool = False) -> None:
    """The body of a worker process: build (or run ``spec.job``), send
    progress, send the result.  ``answer``: a shared step counter when the
    worker must answer the parent regularly while the user's code runs
    (isolation.Answering), else None."""
    # Ctrl-C on a terminal reaches the whole process group: the parent
    # cancels the workers, which need not print a traceback each.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if keep == "stream":
        _nicer(STREAM_NICE)
    lock = threading.Lock()       # the answering thread sends too

    def send(message) -> None:
        with lock:
            conn.send(message)

    answering = None
    try:
        try:
            _find_strategy(spec.name, source)
            if answer is not None:
                answering = isolation.Answering(send, registry.STRATEGIES.get(spec.name),
                                                answer).start()
            if spec.job is not None:
                result = spec.job(trace, spec, lambda value: send(("note", value)))
            else:
                # a summary needs no per-step series: it is folded as the build goes
                timeline = Timeline(trace, spec.name, spec.params, checkpoints=checkpoints,
                                    keep_series=keep != "summary")
                # keep="stream": what is built goes back in chunks (allocators/build_stream.py)
                report = ChunkSender(timeline, send) if keep == "stream" else _throttled(send)
                timeline.build(progress=report)
                if timeline.fault is not None and not (keep_faults and keep == "timeline"):
                    # a user strategy's mistake, in its own words
                    send(("failed", str(timeline.fault), "", timeline.fault.step or 0))
                    return
                if keep == "summary":
                    result = summary_row(timeline)
                elif keep == "stream":
                    result = report.end()
                else:
                    result = timeline.export()
        except Exception as exc:                      # reported, with the strategy's key
            send(("failed", f"{type(exc).__name__}: {exc}", traceback.format_exc(),
                  isolation.current_step()))
        except BaseException as exc:                  # SystemExit, GeneratorExit... from user code
            step = isolation.current_step()
            send(("failed", isolation.escaped_text(exc, registry.STRATEGIES.get(spec.name), step),
                  "", step))
        else:
            if answering is not None:
                answering.stop()
            send(("done", result))
    except (BrokenPipeError, EOFError, OSError):
        pass                                          # the parent has gone or cancelled
    finally:
        if answering is not None:
            answering.stop()
        with lock:
            conn.close()


class ParallelBuild:
    """Builds of one trace through several strategies, one worker process each.

    ``specs``: :class:`BuildSpec` items or plain strategy names.  ``workers``:
    how many run at once (default: all of them for traces up to
    :data:`ALL_AT_ONCE_UP_TO` operations, else one per core).  ``keep``:
    ``"timeline"``, ``"summary"`` or ``"stream"`` (:class:`Chunk` events as the
    build goes, then a :class:`~heapscope.allocators.build_stream.StreamEnd`:
    allocators/build_stream.py); ``checkpoints``: False for measures only.
    ``time_limit``: seconds a build of a user strategy may go without an
    answer before its worker is killed (None: no limit); ``keep_faults``:
    a timeline stopped by a user strategy's mistake is a result (its
    ``fault`` set, as an in-process build leaves it), not a failure.
    """

    def __init__(self, trace, specs: Iterable[BuildSpec | str], *, keep: str = "timeline",
                 checkpoints: bool = True, workers: int | None = None,
                 start_method: str | None = None, time_limit: float | None = None,
                 keep_faults: bool = False) -> None:
        if keep not in ("timeline", "summary", "stream"):
            raise ValueError(f"keep must be 'timeline', 'summary' or 'stream', not {keep!r}")
        self.trace = trace
        self.specs = [s if isinstance(s, BuildSpec) else BuildSpec(s) for s in specs]
        keys = [s.key for s in self.specs]
        if len(set(keys)) != len(keys):
            raise ValueError(f"two builds share a key: {keys}")
        self.keep = keep
        self.checkpoints = checkpoints
        self.time_limit = time_limit
        self.keep_faults = keep_faults
        self._specs = {s.key: s for s in self.specs}
        #: key -> what was last heard of each running build watched by the time limit
        self._hearings: dict[str, isolation.Hearing] = {}
        if trace is None and any(s.job is None for s in self.specs):
            raise ValueError("a build without a trace runs jobs only (BuildSpec(job=...))")
        ops = len(trace) if trace is not None else 0
        if workers is None:
            workers = len(self.specs) if ops <= ALL_AT_ONCE_UP_TO else cores()
        self.workers = max(1, workers)
        self.start_method = start_method or default_start_method()
        self._context = mp.get_context(self.start_method)
        if self.start_method == "forkserver":
            # Workers forked from the server start with the replay imported.
            self._context.set_forkserver_preload([__name__])
        self._pending: deque[BuildSpec] = deque()
        self._running: dict[str, tuple] = {}     # key -> (process, connection)
        #: workers whose result (or failure) came, joined once they have exited (_reap)
        self._exiting: list = []
        self.progress: dict[str, tuple[int, int]] = {s.key: (0, ops) for s in self.specs}
        self.results: dict[str, object] = {}     # key -> Timeline / summary / BuildFailed
        self.cancelled = False
        self.ship_seconds: dict[str, float] = {}  # key -> seconds to receive and unpickle the result
        self._started = False
        #: the trace as the workers get it (a file, unless they are forked: shipped_trace.py)
        self._shipped = None
        # poll() and cancel() may run on different threads (a GUI timer, a button)
        self._lock = threading.RLock()

    # ------------------------------------------------------------ running
    def start(self) -> "ParallelBuild":
        if self._started:
            raise RuntimeError("this build has already started")
        self._started = True
        with self._lock:
            self._pending.extend(self._start_order())
            self._launch()
        return self

    def _start_order(self) -> list[BuildSpec]:
        """The builds in the order workers take them: for a table (``keep
        ="summary"``, which waits for them all) with fewer workers than
        builds, the longest first (allocators/replay_costs.py), so that the
        short ones end the run; else as given (the window shows each build
        as it comes, the user's first; jobs, ``BuildSpec.job``, have no
        known cost)."""
        if (self.keep != "summary" or self.workers >= len(self.specs)
                or any(s.job is not None for s in self.specs)):
            return list(self.specs)
        return longest_first(self.specs, lambda spec: spec.name)

    def _launch(self) -> None:
        if self.start_method == "forkserver" and server_starting():
            return          # launched from poll() once the server answers (warm_up)
        while self._pending and len(self._running) < self.workers and not self.cancelled:
            spec = self._pending.popleft()
            receiver, sender = self._context.Pipe(duplex=False)
            watched = self.time_limit is not None and isolation.needs_worker(spec.name)
            # the step each operation of the user's code starts, read when its worker dies
            shared_step = self._context.RawValue("q", 0) if watched else None
            process = self._context.Process(
                target=_worker, args=(sender, self._trace_for_workers(), spec, self.keep, self.checkpoints,
                                      strategy_source(spec.name), shared_step, self.keep_faults),
                name=f"heapscope build {spec.key}", daemon=True)
            process.start()
            sender.close()        # the worker holds the only sending end: EOF when it dies
            self._running[spec.key] = (process, receiver)
            if watched:
                self._hearings[spec.key] = isolation.Hearing(time.monotonic(), shared=shared_step)

    def _trace_for_workers(self):
        """The trace, or for a worker not forked, a file holding it: pickled
        down the worker's pipe it blocked ``start()`` (allocators/shipped_trace.py)."""
        if self.trace is None or self.start_method == "fork":
            return self.trace
        if self._shipped is None:
            self._shipped = ShippedTrace(self.trace)
        return self._shipped

    def _forget_shipped(self) -> None:
        """No worker runs or waits to (a worker reads the file only as it
        starts, maybe after others ended): the trace's file goes."""
        if self._shipped is not None and not self._pending and not self._running:
            self._shipped.remove()

    def withdraw(self, keys: Iterable[str]) -> list[str]:
        """Take back the builds of ``keys`` that have not started: they will
        not run and get no result.  Returns the keys taken back (those still
        waiting for a worker)."""
        wanted = set(keys)
        with self._lock:
            taken = [s.key for s in self._pending if s.key in wanted]
            self._pending = deque(s for s in self._pending if s.key not in wanted)
        return taken

    @property
    def running(self) -> dict[str, int]:
        """The builds running now: key -> worker process id."""
        with self._lock:
            return {key: process.pid for key, (process, _) in self._running.items()}

    @property
    def finished(self) -> bool:
        """Every build has a result (or failed), withdrawn ones aside, or the
        whole build was cancelled."""
        return self.cancelled or (self._started and not self._pending and not self._running
                                  and not self._exiting)

    def poll(self, timeout: float | None = 0.0) -> list:
        """Receive what the workers sent, waiting up to ``timeout`` seconds
        (None: until something arrives) for the first message; returns the
        events, in the order they came."""
        with self._lock:
            self._reap()
            connections = {conn: key for key, (_, conn) in self._running.items()}
            exiting = [p.sentinel for p in self._exiting]
            if self._hearings:
                # wake in time to kill a silent worker (one stuck in C code sends nothing)
                first = min(h.last for h in self._hearings.values()) + self.time_limit
                left = max(0.0, first - time.monotonic()) + 0.01
                timeout = left if timeout is None else min(timeout, left)
        if not connections:
            if exiting:                     # the last workers' exits, then finished
                mp.connection.wait(exiting, timeout)
                with self._lock:
                    self._reap()
            elif self._pending and not self.cancelled:      # waiting for the server (warm_up)
                _server_ready.wait(timeout)
                with self._lock:
                    self._launch()
            return []
        try:
            ready = mp.connection.wait(list(connections), timeout)
        except (OSError, ValueError):     # cancelled meanwhile: the connections are closed
            return []
        events = []
        with self._lock:
            for conn in ready:
                key = connections[conn]
                while key in self._running:
                    event = self._receive(key, conn)
                    if event is not None:
                        events.append(event)
                    if key not in self._running or not conn.poll():
                        break
            events += self._kill_silent()
            self._launch()
        return events

    def _kill_silent(self) -> list:
        """Kill the watched workers that gave no answer within the time limit."""
        events = []
        now = time.monotonic()
        for key, hearing in list(self._hearings.items()):
            if key in self._running and hearing.silent(now, self.time_limit):
                process, _ = self._running[key]
                process.kill()
                events.append(self._end(key, Failed(
                    key, isolation.no_answer_text(self.time_limit, hearing.step, hearing.where),
                    step=hearing.step, where=hearing.where)))
        return events

    def _receive(self, key: str, conn):
        process, _ = self._running[key]
        t0 = time.perf_counter()
        hearing = self._hearings.get(key)
        try:
            message = conn.recv()
        except (EOFError, OSError):
            process.join()
            if hearing is not None:
                step = hearing.last_step()
                # the last answer's place, unless the worker went on past it
                where = hearing.where if step == hearing.step else None
                return self._end(key, Failed(key, isolation.ended_text(process.exitcode, step, where),
                                             step=step, where=where))
            return self._end(key, Failed(key, f"the worker process ended without a result "
                                              f"(exit code {process.exitcode})"))
        kind = message[0]
        if kind == "alive":
            if hearing is not None:
                hearing.heard(message[1], message[2], time.monotonic())
            return None
        if hearing is not None:          # anything else it sends is an answer too
            hearing.last = time.monotonic()
        if kind == "progress":
            self.progress[key] = (message[1], message[2])
            return Progress(key, message[1], message[2])
        if kind == "chunk":
            chunk = message[1]
            self.progress[key] = (chunk.done, chunk.total)
            return Streamed(key, chunk)
        if kind == "note":
            return Note(key, message[1])
        if kind == "failed":
            step = message[3] if len(message) > 3 else 0
            where = hearing.where if hearing is not None else None
            return self._end(key, Failed(key, message[1], message[2], step=step, where=where))
        result = message[1]
        if self.keep == "timeline" and self._specs[key].job is None:
            result = Timeline.from_built(self.trace, result)
        self.ship_seconds[key] = time.perf_counter() - t0
        total = self.progress[key][1]
        self.progress[key] = (total, total)
        return self._end(key, Finished(key, result))

    def _end(self, key: str, event):
        process, conn = self._running.pop(key)
        self._forget_shipped()
        self._hearings.pop(key, None)
        conn.close()
        # Joined once it has exited, not waited for here: a worker exiting
        # after its result (freeing its heap) held the window's poll 100 ms
        # and more (issue 25's stall probe, compare mode on sqlite3-sql).
        self._exiting.append(process)
        self._reap()
        if isinstance(event, Failed):
            self.results[key] = BuildFailed(key, event.error, event.details, event.step, event.where)
        else:
            self.results[key] = event.result
        return event

    def _reap(self) -> None:
        """Join the workers that have ended since their result came."""
        for process in list(self._exiting):
            process.join(0)
            if process.exitcode is not None:
                process.close()
                self._exiting.remove(process)

    def wait(self, progress: Callable[[str, int, int], None] | None = None,
             cancel: Callable[[], bool] | None = None, tick: float = 0.1) -> dict:
        """Run to the end, calling ``progress(key, done, total)`` as reports
        come; ``cancel()`` is asked every ``tick`` seconds.  Returns
        :attr:`results`; an exception here (Ctrl-C) cancels the workers."""
        if not self._started:
            self.start()
        try:
            while not self.finished:
                for event in self.poll(tick):
                    if progress and isinstance(event, Progress):
                        progress(event.key, event.done, event.total)
                if cancel and cancel():
                    self.cancel()
        except BaseException:
            self.cancel()
            raise
        return self.results

    def cancel(self) -> None:
        """Stop every worker now and wait until each has ended: no process is
        left behind.  Results already received are kept.  Safe to call from
        any thread, and from a progress callback."""
        with self._lock:
            self.cancelled = True
            self._pending.clear()
            running, self._running = self._running, {}
            watched, self._hearings = set(self._hearings), {}
            for key, (process, _) in running.items():
                if process.is_alive():
                    # user code may trap SIGTERM: its worker is killed outright
                    process.kill() if key in watched else process.terminate()
            ending = [(process, conn) for process, conn in running.values()]
            ending += [(process, None) for process in self._exiting]
            self._exiting = []
            for process, conn in ending:
                process.join(2.0)
                if process.exitcode is None:
                    process.kill()
                    process.join()
                if conn is not None:
                    conn.close()
                process.close()
            self._forget_shipped()

    def __enter__(self) -> "ParallelBuild":
        return self

    def __exit__(self, *exc) -> None:
        if not self.finished:
            self.cancel()


def build_timelines(trace, specs: Iterable[BuildSpec | str], *,
                    progress: Callable[[str, int, int], None] | None = None,
                    cancel: Callable[[], bool] | None = None, **options) -> dict:
    """Build several timelines of ``trace`` at once; ``{key: result}`` in the
    order of ``specs``, where a failed build's result is a :class:`BuildFailed`.
    ``options`` are those of :class:`ParallelBuild`."""
    build = ParallelBuild(trace, specs, **options)
    results = build.wait(progress, cancel)
    return {s.key: results[s.key] for s in build.specs if s.key in results}
