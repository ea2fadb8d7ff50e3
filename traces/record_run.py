"""Running the program ``heapscope record`` records: its signals and its limits.

While the program runs, heapscope only waits for it, and whatever asks
heapscope to stop is meant for the program:

- SIGTERM, SIGINT and SIGHUP (:data:`STOP_SIGNALS`) do not stop heapscope
  (:class:`SignalRelay`): each is passed on to the program, and when the
  program has ended what it recorded is still converted and written, marked
  as partial.  A SIGINT that the terminal sent (Ctrl+C goes to the whole
  foreground process group) has reached the program already, and is not
  sent a second time.  A signal that comes after the program ended (while
  the traces are written) is noted and the writing finishes first.
- The recorder stops a recording that reaches heapscope's limits and leaves a
  ``PID-RECORDS.limit`` file in the raw folder; the wait loop sees it within
  :data:`POLL_SECONDS` and says so at once, while the program goes on.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
from dataclasses import dataclass, field
from typing import Callable

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
#: how often the wait loop looks for recordings stopped at a limit
POLL_SECONDS = 0.2
#: the reasons a recorder writes in its .limit file and its 'L' record
LIMIT_OPS, LIMIT_BYTES = 1, 2


def signal_name(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


def _foreground_group() -> int | None:
    """The foreground process group of heapscope's terminal, None without one."""
    try:
        fd = os.open("/dev/tty", os.O_RDONLY | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        return os.tcgetpgrp(fd)
    except OSError:
        return None
    finally:
        os.close(fd)


def terminal_sent_it_too(pid: int) -> bool:
    """Whether a SIGINT heapscope got reached the program ``pid`` as well: it
    came from the terminal (Ctrl+C), which signals the whole foreground group,
    and heapscope and the program are both in it."""
    group = _foreground_group()
    if group is None or group != os.getpgrp():
        return False
    try:
        return os.getpgid(pid) == group
    except OSError:
        return False


@dataclass
class Received:
    """One stop signal heapscope received."""
    signum: int
    #: sent on to the program (False: the terminal sent it to the program too,
    #: or the program had ended)
    passed_on: bool
    #: the program was still running
    while_running: bool

    def describe(self) -> str:
        name = signal_name(self.signum)
        if self.passed_on:
            return f"heapscope record received {name} and passed it on to the program"
        if self.while_running:
            return f"{name} came from the terminal, to the program and heapscope record alike"
        return f"heapscope record received {name} after the program had ended"


class SignalRelay:
    """``with SignalRelay() as relay:`` the stop signals do not stop heapscope:
    each is noted in ``received`` and, while ``relay.program`` (a Popen) runs,
    passed on to it.  Outside the main thread (where Python cannot set
    handlers) it does nothing."""

    def __init__(self) -> None:
        self.program: subprocess.Popen | None = None
        self.received: list[Received] = []
        self._old: dict[int, object] = {}

    def __enter__(self) -> "SignalRelay":
        if threading.current_thread() is threading.main_thread():
            for signum in STOP_SIGNALS:
                self._old[signum] = signal.signal(signum, self._on_signal)
        return self

    def __exit__(self, *exc) -> None:
        for signum, handler in self._old.items():
            signal.signal(signum, handler)
        self._old.clear()

    def _on_signal(self, signum: int, frame) -> None:
        self.received.append(self._pass_on(signum))

    def _pass_on(self, signum: int) -> Received:
        proc = self.program
        if proc is None or proc.poll() is not None:
            return Received(signum, False, False)
        if signum == signal.SIGINT and terminal_sent_it_too(proc.pid):
            return Received(signum, False, True)
        proc.send_signal(signum)
        return Received(signum, True, True)

    def started(self, proc: subprocess.Popen) -> None:
        """The program runs: signals received before it started go to it now."""
        self.program = proc
        for i, got in enumerate(self.received):
            self.received[i] = self._pass_on(got.signum)

    def ended(self) -> list[Received]:
        """The program has ended: what was received while it ran."""
        self.program = None
        return [r for r in self.received if r.while_running]


@dataclass
class ProgramRun:
    """How the recorded program ran."""
    returncode: int
    pid: int
    #: stop signals heapscope received while it ran
    signals: list[Received] = field(default_factory=list)
    #: (pid, reason, program name) of each recording stopped at a limit
    limits: list[tuple[int, int, str]] = field(default_factory=list)


class LimitWatch:
    """Finds the ``PID-RECORDS.limit`` files recorders leave in ``raw_dir``
    and reports each once."""

    def __init__(self, raw_dir: str | os.PathLike, report: Callable[[int, int, str], None] | None):
        self.raw_dir = os.fspath(raw_dir)
        self.report = report
        self.seen: dict[str, tuple[int, int, str]] = {}

    def look(self) -> None:
        try:
            names = [e.name for e in os.scandir(self.raw_dir) if e.name.endswith(".limit")]
        except OSError:
            return
        for name in sorted(set(names) - set(self.seen)):
            pid = name.split("-", 1)[0]
            try:
                with open(os.path.join(self.raw_dir, name), "rb") as f:
                    text = f.read(64).decode("utf-8", "replace")
            except OSError:
                text = ""
            reason = LIMIT_BYTES if text[:1] == str(LIMIT_BYTES) else LIMIT_OPS
            found = (int(pid) if pid.isdigit() else 0, reason, text[2:] or "?")
            self.seen[name] = found
            if self.report is not None:
                self.report(*found)

    @property
    def found(self) -> list[tuple[int, int, str]]:
        return list(self.seen.values())


def run_recorded(command: list[str], raw_dir: str, library: str | os.PathLike,
                 env: dict | None = None, cwd=None, stdin=None, *, max_ops: int = 0,
                 max_bytes: int = 0, relay: SignalRelay | None = None,
                 on_limit: Callable[[int, int, str], None] | None = None) -> ProgramRun:
    """Run ``command`` with the recorder loaded and wait for it to end.

    The program shares our terminal: its input and output pass through
    (``stdin`` may give it another input, ``env`` another environment).  The
    stop signals are passed on to it through ``relay`` (one is made if not
    given); ``max_ops`` and ``max_bytes`` (0: none) are the recorder's limits,
    and ``on_limit(pid, reason, program)`` is called as soon as a recording
    stops at one.  OSError if the program cannot start.
    """
    env = dict(os.environ if env is None else env)
    preload = env.get("LD_PRELOAD", "").strip()
    env["LD_PRELOAD"] = os.fspath(library) + (" " + preload if preload else "")
    env["HEAPSCOPE_RECORD_DIR"] = raw_dir
    env["HEAPSCOPE_RECORD_MAX_OPS"] = str(max_ops)
    env["HEAPSCOPE_RECORD_MAX_BYTES"] = str(max_bytes)
    watch = LimitWatch(raw_dir, on_limit)
    own_relay = relay is None
    relay = relay or SignalRelay()
    if own_relay:
        relay.__enter__()
    try:
        # Python handlers (not SIG_IGN, which exec would keep): the program
        # starts with the default actions.
        proc = subprocess.Popen(command, env=env, cwd=cwd, stdin=stdin)
        relay.started(proc)
        while True:
            try:
                returncode = proc.wait(timeout=POLL_SECONDS)
                break
            except subprocess.TimeoutExpired:
                watch.look()
        watch.look()
        return ProgramRun(returncode, proc.pid, relay.ended(), watch.found)
    finally:
        if own_relay:
            relay.__exit__(None, None, None)


__all__ = ["STOP_SIGNALS", "LIMIT_OPS", "LIMIT_BYTES", "ProgramRun", "Received", "SignalRelay",
           "run_recorded", "signal_name", "terminal_sent_it_too"]
