"""User code run where it can be stopped: a worker process with a time limit.

A strategy of your own (allocators/user.py) is code heapscope did not write:
it may loop forever, call ``sys.exit`` or ``os._exit``, or raise a
``BaseException`` that is no ``Exception``.  Its replays therefore run in a
worker process (:class:`heapscope.allocators.parallel.ParallelBuild`, which starts the
workers, ships the strategy's source and kills them), and this module is what
makes such a worker stoppable and its end explainable:

* **In the worker**, :class:`Answering` starts a thread that answers the
  parent every :data:`ANSWER_EVERY` seconds with the step the replay has
  reached (the ``_step`` of the user strategy the replay called last) and
  where the main thread is in the user's code, if it is (``Loop._malloc
  (loop.py:9)``).  A thread of the worker can answer while the main thread
  runs a Python loop (the interpreter switches threads every few ms); a
  main thread stuck in C code holding the interpreter lock silences it,
  which is a "no answer" as well.
* **In the parent**, a :class:`Hearing` per worker keeps the time of the
  last answer that *counts*: one with a new step, or one that found the main
  thread outside the user's code (heapscope's own work between steps, a
  checkpoint, the final summary).  An answer repeating the same step from
  inside the user's code does not count: the user's code has held that step
  all along.  After ``time_limit`` seconds without one the parent kills the
  worker and the strategy's result is the error :func:`no_answer_text`:
  ``no answer in 20 s at step 17, in Loop._malloc (loop.py:9)``.
* A worker that ends without a result (``os._exit``, a signal, the kernel's
  out-of-memory killer) is told by :func:`ended_text` with the last step it
  was heard at; a ``BaseException`` that escaped the user's methods
  (allocators/user.py wraps them, so only one raised where heapscope does
  not call through a wrapper) by :func:`escaped_text`.  Never a traceback,
  never a silent exit status 0.

Built-in strategies need none of this and stay in-process where that is
faster (``heapscope inspect``, ``render`` of one strategy, the window).

:class:`MainThreadGuard` is the other half, for user code that must run in
the caller's own process (the window seeking a user timeline it has built,
``render`` drawing its frames): a timer interrupts the main thread with
:class:`~heapscope.allocators.user.StopUserCode` once the limit has passed.  It can
stop Python code only; a call into C that never returns is not stopped.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import traceback
from dataclasses import dataclass

from . import checked_calls
from .user import UserStrategy, UserStrategyError, StopUserCode, _shown_path, _user_files

#: seconds without an answer after which a worker running user code is
#: killed (``--time-limit``); a step of a student's strategy, checks included,
#: takes milliseconds, so 20 s means it is stuck
DEFAULT_TIME_LIMIT = 20.0
#: how often a worker answers (s)
ANSWER_EVERY = 0.2
#: the least time limit accepted: a few answers must fit in it (s)
LEAST_TIME_LIMIT = 0.5


def time_limit_text(text: str) -> float:
    """``--time-limit`` parsed: seconds, at least :data:`LEAST_TIME_LIMIT`;
    ValueError with the message otherwise."""
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not LEAST_TIME_LIMIT <= value < float("inf"):
        raise ValueError(f"a time limit is a number of seconds >= {LEAST_TIME_LIMIT:g}, got {text!r}")
    return value


def needs_worker(name: str) -> bool:
    """Strategy ``name`` is user code (a plugin): its replays belong in a worker."""
    from . import registry
    cls = registry.STRATEGIES.get(name)
    return isinstance(cls, type) and issubclass(cls, UserStrategy)


# ================================================================ the worker
#: the user strategy the replay called last (a list: set from the main
#: thread, read from the answering thread)
_current: list = [None]
_watching = False


def _watch_calls(shared_step=None) -> None:
    """Make UserStrategy's public operations note their instance, in this
    worker process only (the parent's classes are not touched): the answering
    thread reads that instance's step.  ``shared_step`` (a RawValue the
    parent holds too) gets the step each operation starts, so that a worker
    killed between two answers (a signal, the out-of-memory killer) still
    tells the parent where it was."""
    global _watching
    if _watching:
        return
    _watching = True
    for name in ("malloc", "free", "realloc"):
        method = getattr(UserStrategy, name)
        if shared_step is None:
            def noting(self, *args, _method=method):
                _current[0] = self
                return _method(self, *args)
        else:
            def noting(self, *args, _method=method, _shared=shared_step):
                _current[0] = self
                _shared.value = self._step + 1       # the operation about to run
                return _method(self, *args)
        noting.__name__ = noting.__qualname__ = name
        noting.__doc__ = method.__doc__
        setattr(UserStrategy, name, noting)
    # grade's check pass calls the user's methods through closures of its own
    # (allocators/checked_calls.py): they note the same two things
    checked_calls.WATCH[:] = [_current, shared_step]


def current_step() -> int:
    """The step of the user strategy the replay called last (0 before any)."""
    strategy = _current[0]
    return getattr(strategy, "_step", 0) or 0


def user_frame(frame, files: frozenset[str]) -> str | None:
    """The innermost frame of ``frame``'s stack in one of ``files``, as
    ``Loop._malloc (loop.py:9)``; None when the stack holds none."""
    while frame is not None:
        code = frame.f_code
        if code.co_filename in files or os.path.realpath(code.co_filename) in files:
            name = getattr(code, "co_qualname", code.co_name)
            return f"{name} ({_shown_path(code.co_filename)}:{frame.f_lineno})"
        frame = frame.f_back
    return None


class Answering:
    """In a worker: a daemon thread that sends ``("alive", step, where)``
    through ``send`` every :data:`ANSWER_EVERY` seconds.  ``send`` must be
    safe to call from two threads (the caller's lock around its pipe)."""

    def __init__(self, send, cls: type, shared_step=None) -> None:
        self._send = send
        self._shared_step = shared_step
        self._files = _user_files(cls) if isinstance(cls, type) and issubclass(cls, UserStrategy) \
            else frozenset()
        self._main = threading.main_thread().ident
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="heapscope answering", daemon=True)

    def start(self) -> "Answering":
        _watch_calls(self._shared_step)
        self._tell_before_exit()
        self._thread.start()
        return self

    def _tell_before_exit(self) -> None:
        """``os._exit`` called in this worker answers once more, with the
        step and the user's line that called it, before the process ends."""
        real_exit = os._exit

        def exit_telling(status, _real=real_exit):
            try:
                self._send(("alive", current_step(), user_frame(sys._getframe(1), self._files)))
            except Exception:
                pass
            _real(status)
        os._exit = exit_telling

    def stop(self) -> None:
        self._stop.set()

    def where(self) -> str | None:
        return user_frame(sys._current_frames().get(self._main), self._files)

    def _run(self) -> None:
        while not self._stop.wait(ANSWER_EVERY):
            try:
                self._send(("alive", current_step(), self.where()))
            except (BrokenPipeError, EOFError, OSError):
                return                       # the parent has gone: nothing to answer


def escaped_text(exc: BaseException, cls: type | None, step: int) -> str:
    """A BaseException that escaped the user's code in a worker, in words:
    ``step 3: your code raised SystemExit: 0, in Quit._malloc (quit.py:7)``."""
    text = str(exc)
    what = type(exc).__name__ + (f": {text}" if text else "")
    where = None
    if isinstance(cls, type) and issubclass(cls, UserStrategy):
        files = _user_files(cls)
        for frame, lineno in traceback.walk_tb(exc.__traceback__):
            if os.path.realpath(frame.f_code.co_filename) in files:
                name = getattr(frame.f_code, "co_qualname", frame.f_code.co_name)
                where = f"{name} ({_shown_path(frame.f_code.co_filename)}:{lineno})"
    head = f"step {step}: " if step else ""
    return f"{head}your code raised {what}" + (f", in {where}" if where else "")


# ================================================================ the parent
@dataclass
class Hearing:
    """What the parent has heard from one worker: the step and place of its
    last answer and when an answer last counted (module docstring)."""
    last: float
    step: int = 0
    where: str | None = None
    #: the worker's shared step counter (the operation under way), if any
    shared: object = None

    def last_step(self) -> int:
        """The furthest step known: the last answer's or the shared counter's."""
        shared = self.shared.value if self.shared is not None else 0
        return max(self.step, shared)

    def heard(self, step: int, where: str | None, now: float) -> None:
        if step != self.step or where is None:
            self.last = now
        self.step, self.where = step, where

    def silent(self, now: float, limit: float) -> bool:
        return now - self.last > limit


def no_answer_text(limit: float, step: int, where: str | None) -> str:
    """The error of a worker killed at its time limit."""
    return (f"no answer in {limit:g} s at step {step}" + (f", in {where}" if where else "")
            + " (the time limit; --time-limit SECONDS sets it)")


def ended_text(exitcode: int | None, step: int, where: str | None) -> str:
    """The error of a worker that ended without a result."""
    if exitcode is not None and exitcode < 0:
        try:
            how = f"was killed by signal {signal.Signals(-exitcode).name}"
        except ValueError:
            how = f"was killed by signal {-exitcode}"
    else:
        how = f"ended with exit status {exitcode}"
        if exitcode == 0:
            how += " (os._exit in your code?)"
    return f"the worker process running it {how} without a result, at step {step}" + \
        (f" in {where}" if where else "")


class WorkerFault(UserStrategyError):
    """A worker's failure as the UserStrategyError a report shows: killed at
    its time limit, exited or died.  Where the user's code was is known only
    when an answer said so (``method`` "" otherwise: its worker process)."""

    def where(self) -> str:
        if not self.method:
            return f"{self.cls_name}'s worker process"
        return super().where()


def worker_error(cls_name: str, text: str, step: int, where: str | None) -> UserStrategyError:
    """:class:`WorkerFault` with the step, and the method and file:line of
    ``where`` (``Loop._malloc (loop.py:9)``)."""
    method, location = "", None
    if where:
        qualname, _, rest = where.partition(" (")
        method = qualname.rsplit(".", 1)[-1]
        location = rest.rstrip(")") or None
    return WorkerFault(text, method=method, cls_name=cls_name, step=step or None, location=location)


# ====================================================== in the caller's process
class UserCodeTimedOut(Exception):
    """:class:`MainThreadGuard` stopped code that ran past its limit, or that
    called ``os._exit``."""

    def __init__(self, text: str, limit: float | None = None) -> None:
        super().__init__(text)
        self.limit = limit


class MainThreadGuard:
    """A time limit on user code run in this process's main thread: the
    window seeking a user timeline it has built, ``render`` drawing frames.

    ``with MainThreadGuard(limit, "seeking loops"):`` runs the block; after
    ``limit`` seconds a timer (``setitimer``, SIGALRM) raises
    :class:`~heapscope.allocators.user.StopUserCode` wherever the main thread runs
    Python -- the user's loop -- and again every :data:`ANSWER_EVERY` s
    until the block ends (an exception swallowed by the user's ``except:``
    or by a Qt callback is raised again); the block then ends with
    :class:`UserCodeTimedOut` ("no answer in N s ...").  :meth:`rearm`
    starts the limit again (one limit per frame drawn).  While the block
    runs, ``os._exit`` in this process raises UserCodeTimedOut instead of
    ending it (``sys.exit`` is a SystemExit, which allocators/user.py
    reports as the user's mistake).

    Not stopped: a call into C that never returns to Python (the timer's
    exception waits for the interpreter).  No limit, another thread than the
    main one, or no ``setitimer`` (Windows): the block runs unguarded."""

    def __init__(self, limit: float | None, what: str = "from your code", classes=()) -> None:
        self.limit = limit
        self.what = what
        #: the user's source files: the timer stops the main thread only while
        #: one of them is on its stack (never heapscope's or Qt's own work);
        #: empty, it stops whatever runs
        self.files = frozenset().union(*(_user_files(c) for c in classes))
        self.fired = False
        self._armed = False
        self._previous = None
        self._real_exit = None

    def __enter__(self) -> "MainThreadGuard":
        self.fired = False
        if (not self.limit or threading.current_thread() is not threading.main_thread()
                or not hasattr(signal, "setitimer")):
            return self
        self._previous = signal.signal(signal.SIGALRM, self._stop)
        self._armed = True
        self.rearm()
        self._real_exit, pid = os._exit, os.getpid()

        def refuse_exit(status, _real=self._real_exit):
            if os.getpid() != pid:        # a child forked meanwhile ends as it means to
                _real(status)
            raise UserCodeTimedOut(f"your code called os._exit({status}) {self.what}")
        os._exit = refuse_exit
        # Qt calls the views' slots from C++: a stop raised in one is printed
        # through sys.excepthook there, and the block goes on (the timer fires
        # again).  Not a traceback for the user to read: kept quiet.
        self._previous_hook = sys.excepthook

        def quiet_stop(kind, value, tb, _previous=self._previous_hook):
            if isinstance(kind, type) and issubclass(kind, StopUserCode):
                self.fired = True
                return
            _previous(kind, value, tb)
        sys.excepthook = quiet_stop
        return self

    def rearm(self) -> None:
        if self._armed:
            signal.setitimer(signal.ITIMER_REAL, self.limit, ANSWER_EVERY)

    def _stop(self, signum, frame) -> None:
        if self.files and user_frame(frame, self.files) is None:
            return     # heapscope's or Qt's own work runs on; the timer fires again soon
        self.fired = True
        raise StopUserCode()

    def check(self) -> None:
        """UserCodeTimedOut if the limit has passed (before writing a result)."""
        if self.fired:
            raise self._timed_out()

    def _timed_out(self) -> "UserCodeTimedOut":
        return UserCodeTimedOut(f"no answer in {self.limit:g} s {self.what} (the time limit; "
                                "--time-limit SECONDS sets it)", self.limit)

    def __exit__(self, kind, exc, tb) -> bool:
        if not self._armed:
            return False
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, self._previous)
        os._exit = self._real_exit
        sys.excepthook = self._previous_hook
        self._armed = False
        if kind is StopUserCode or (self.fired and (kind is None or not issubclass(kind, UserCodeTimedOut))):
            raise self._timed_out() from None
        return False
