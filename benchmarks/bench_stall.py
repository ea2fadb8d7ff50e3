"""The stall probe: the longest the window's event loop is blocked, per phase.

    python benchmarks/bench_stall.py [--trace SPEC ...] [--ops N] [--phases load,seeks,...]

Issue 25: the event loop is never blocked more than 100 ms while a trace
loads, compare mode is entered, the user seeks, steps, plays, exports or
finds.  A :class:`StallProbe` ticks a QTimer every 10 ms in the real window
and records the longest gap between two ticks in each phase; a watchdog
thread samples the GUI thread's stack (with faulthandler) every 20 ms
while a gap is longer than 100 ms, so each phase's worst gap comes with
where the GUI thread was (the heapscope frame seen most often, and the
innermost frame).  Every action is driven from inside the event loop
(single-shot timers, as a person's key presses arrive), never from a loop
that blocks it.

The traces: the bundled real recordings (``gcc-cc1`` by default) and a
generated trace of ``--ops`` operations (1 000 000 by default: the Vo 1989
workload, written to a .rep file first so that reading it is measured too).

Phases, in order: ``load`` (open the file: until step 0 shows, then until
the timeline is built, the two figures apart), ``seeks`` (20 jumps),
``steps`` (30 steps forward, 10 back), ``play`` (2 s), ``export`` (the heap
map as PNG, the measures as CSV), ``find`` (``search > 10``), ``compare``
(compare mode with seven strategies, until every row is ready), then
``c-seeks``, ``c-steps`` and ``c-play`` in compare mode, and ``lesson``
(File > Lessons > vo1989-table, until its first stop shows).

Not a timed test: the figures depend on the machine and its load, and go to
docs/benchmarks.md with the date and the load.
"""

from __future__ import annotations

import argparse
import collections
import faulthandler
import os
import random
import re
import sys
import tempfile
import threading
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from PySide6.QtCore import QEventLoop, QObject, QTimer  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from heapscope.gui.gui_thread_gc import GuiThreadCollector  # noqa: E402

#: the probe's tick (ms) and what counts as a stall (s)
TICK_MS = 10
STALL_SECONDS = 0.1
#: the watchdog samples the GUI thread this often during a stall (s)
SAMPLE_SECONDS = 0.02
COMPARED = ["next-fit", "first-fit", "rotating-list", "splay-best-fit", "buddy", "tlsf", "bsd-buckets"]
PHASES = ["load", "seeks", "steps", "play", "export", "find", "compare", "c-seeks", "c-steps", "c-play",
          "lesson"]
#: the lesson the last phase opens (File > Lessons): the longest of the bundled ones to load
LESSON = "vo1989-table"
SOURCE = str(Path(__file__).resolve().parent.parent)


def _source_of_heapscope() -> str:
    """The tree the heapscope imported comes from (this script run with another
    tree's venv, a copy of it elsewhere, names that tree's frames)."""
    import heapscope
    return str(Path(heapscope.__file__).resolve().parent.parent)


class StallProbe(QObject):
    """Longest gap between ticks of a 10 ms timer, per phase, with where it was."""

    def __init__(self) -> None:
        super().__init__()
        self.phase = "start"
        self.worst: dict[str, tuple[float, str]] = {}
        self.stalls: dict[str, int] = collections.Counter()
        #: this process's CPU seconds (every thread; not the workers') per phase
        self.cpu: dict[str, float] = collections.Counter()
        self._cpu_at = time.process_time()
        self._last = time.perf_counter()
        self._samples: list[str] = []
        self._main = threading.main_thread().ident
        self._lock = threading.Lock()
        self._timer = QTimer(self)
        self._timer.setInterval(TICK_MS)
        self._timer.timeout.connect(self._tick)
        self._running = True
        self._watchdog = threading.Thread(target=self._watch, name="stall-watchdog", daemon=True)

    def start(self) -> None:
        # The watchdog thread allocates; an automatic collection run there could
        # free Qt objects off the GUI thread (DESIGN.md's pitfalls: it crashed
        # two runs).  So while the probe runs, collections run in the GUI thread
        # at every tick, as the automatic ones would (gui/gui_thread_gc.py):
        # their cost stays in the gaps measured.
        self._collector = GuiThreadCollector(self)
        self._collector._timer.setInterval(TICK_MS)
        self._collector.hold()
        self._last = time.perf_counter()
        self._timer.start()
        self._watchdog.start()

    def stop(self) -> None:
        self._running = False
        self._timer.stop()
        self._watchdog.join()
        self._collector.release()

    def set_phase(self, phase: str) -> None:
        self._tick()            # the gap so far belongs to the phase before
        now = time.process_time()
        self.cpu[self.phase] += now - self._cpu_at
        self._cpu_at = now
        self.phase = phase
        self.worst.setdefault(phase, (0.0, ""))

    def _tick(self) -> None:
        now = time.perf_counter()
        with self._lock:
            gap, samples = now - self._last, self._samples
            self._last, self._samples = now, []
        if gap > STALL_SECONDS:
            self.stalls[self.phase] += 1
        if gap > self.worst.get(self.phase, (0.0, ""))[0]:
            self.worst[self.phase] = (gap, self._where(samples))

    @staticmethod
    def _where(samples: list[str]) -> str:
        if not samples:
            return ""
        ours = collections.Counter(s.split(" | ")[0] for s in samples)
        inner = collections.Counter(s.split(" | ")[-1] for s in samples)
        return f"{ours.most_common(1)[0][0]} (innermost: {inner.most_common(1)[0][0]})"

    def _watch(self) -> None:
        # The GUI thread's stack is read with faulthandler, which writes it
        # out from C and makes no frame object.  sys._current_frames() gave
        # this thread references to the GUI thread's frames: a frame whose
        # function returned meanwhile was then freed here, with its locals,
        # and a Qt object among them destroyed on this thread left its timer
        # registered with the GUI thread (a segmentation fault in
        # QTimerInfoList::activateTimers, three runs in three entering
        # compare mode on the 1 000 000-op trace).
        main = f"0x{self._main:016x}"
        with tempfile.TemporaryFile() as dump:
            fd = dump.fileno()
            while self._running:
                time.sleep(SAMPLE_SECONDS)
                with self._lock:
                    stalled = time.perf_counter() - self._last > STALL_SECONDS
                if not stalled:
                    continue
                os.lseek(fd, 0, os.SEEK_SET)
                os.ftruncate(fd, 0)
                faulthandler.dump_traceback(dump, all_threads=True)
                os.lseek(fd, 0, os.SEEK_SET)
                text = self._sample_text(os.read(fd, 1 << 20).decode("utf-8", "replace"), main)
                if text:
                    with self._lock:
                        self._samples.append(text)

    @staticmethod
    def _sample_text(dump: str, main: str) -> str:
        """The GUI thread's three innermost heapscope frames (``a < b``: a,
        called from b) and its innermost frame, from a faulthandler dump."""
        frames, inside = [], False
        for line in dump.splitlines():
            if line.startswith(("Thread ", "Current thread ")):
                inside = main in line
                continue
            m = re.match(r'\s+File "(.*)", line (\d+) in (.*)', line)
            if inside and m:
                frames.append((m.group(1), m.group(2), m.group(3)))     # innermost first
        if not frames:
            return ""
        ours = [f for f in frames if f[0].startswith(SOURCE) and
                not any(part in f[0] for part in ("benchmarks", ".venv", "site-packages"))]
        picks = ours[:3] or frames[:1]
        path = " < ".join(f"{os.path.relpath(f, SOURCE)}:{n} {name}" for f, n, name in picks)
        f, n, name = frames[0]
        return f"{path} | {os.path.basename(f)}:{n} {name}"


def wait_until(app, done, timeout: float) -> float:
    """Run the event loop until ``done()``; the seconds it took (timeout: raise)."""
    loop = QEventLoop()
    t0 = time.perf_counter()
    check = QTimer()
    check.setInterval(5)

    def look():
        if done() or time.perf_counter() - t0 > timeout:
            loop.quit()
    check.timeout.connect(look)
    check.start()
    if not done():
        loop.exec()
    check.stop()
    if not done():
        raise TimeoutError(f"not done after {timeout:g} s")
    return time.perf_counter() - t0


def settle(app, seconds: float) -> None:
    """Run the event loop for ``seconds``: what a shown window has posted
    (its first polish and layout, the palette's change) is delivered before a
    phase starts, as it is before a person's first key press."""
    t0 = time.perf_counter()
    wait_until(app, lambda: time.perf_counter() - t0 > seconds, seconds + 5)


def run_actions(app, actions, every_ms: int = 30) -> None:
    """Run each of ``actions`` from the event loop, ``every_ms`` apart."""
    todo = list(actions)

    def next_one():
        if todo:
            todo.pop(0)()
            QTimer.singleShot(every_ms, next_one)
    QTimer.singleShot(every_ms, next_one)
    wait_until(app, lambda: not todo, 600)
    settle(app, 0.05)


def built(window) -> bool:
    """The window shows a timeline, built to its end, and loads nothing."""
    building = getattr(window.model, "building", None)
    return window.timeline is not None and not window.busy and not (building and building())


def rows_ready(window) -> bool:
    """Compare mode shows every row, each built to its end."""
    building = getattr(window.model, "building", None)
    joining = getattr(window.compare.view, "joining", lambda: False)     # rows joining a turn at a time
    return (window.compare.active and not window.compare.busy and not joining()
            and len(window.model.shown) == len(COMPARED) and not (building and building()))


def measure(app, window, probe, path: str, phases: list[str], out_dir: str,
            as_before: bool = False) -> dict:
    figures = {}
    rnd = random.Random(1)

    def seeks():
        # each jump made before the next (compare mode makes a big trace's
        # jump a row at a time: model.staging), then 40 ms as a person's keys
        n = window.model.n
        for _ in range(20):
            window.seek(rnd.randrange(n + 1))
            wait_until(app, lambda: getattr(window.model, "staging", None) is None, 600)
            t0 = time.perf_counter()
            wait_until(app, lambda: time.perf_counter() - t0 > 0.04, 5)

    def steps():
        window.seek(window.model.n // 3)
        window.player.set_speed(window.player.speed)
        run_actions(app, [window.step_forward] * 30 + [window.step_back] * 10, 25)

    def play():
        window.seek(window.model.n // 2)
        window.toggle_play()
        t0 = time.perf_counter()
        wait_until(app, lambda: time.perf_counter() - t0 > 2.0, 5)
        window.player.pause()

    for phase in phases:
        probe.set_phase(phase)
        t0 = time.perf_counter()
        if phase == "load":
            window.open_trace(path)
            if not as_before:
                from heapscope.gui.app import warm_up_after_load
                warm_up_after_load(window)   # as gui/app.py does: once step 0 shows
            figures["step 0 shown after"] = wait_until(app, lambda: window.timeline is not None, 600)
            figures["built after"] = wait_until(app, lambda: built(window), 3600) + figures["step 0 shown after"]
        elif phase in ("seeks", "c-seeks"):
            seeks()
        elif phase in ("steps", "c-steps"):
            steps()
        elif phase in ("play", "c-play"):
            play()
        elif phase == "export":
            from heapscope.gui.export import ExportRequest
            run_actions(app, [lambda: window.run_export(ExportRequest("map", os.path.join(out_dir, "map.png"))),
                              lambda: window.run_export(ExportRequest("measures",
                                                                      os.path.join(out_dir, "m.csv")))])
        elif phase == "find":
            window.finder.find("search > 10")
            wait_until(app, lambda: not window.finder.searcher.busy, 600)
        elif phase == "lesson":
            figures["steps"] = window.model.n       # the trace's, before the lesson's shows
            from heapscope.lessons import lesson_path
            window.lessons.open_file(str(lesson_path(LESSON)))
            figures["lesson shown after"] = wait_until(app, lambda: window.lessons.player.active
                                                       and not getattr(window.lessons, "loading", False), 600)
        elif phase == "compare":
            window.compare.compare(COMPARED)
            figures["compare rows ready after"] = wait_until(app, lambda: rows_ready(window), 3600)
            wait_until(app, lambda: not window.compare.densifier.busy, 600)
        figures[f"{phase} took"] = time.perf_counter() - t0
    probe.set_phase("end")
    return figures


def generated(ops: int, folder: str) -> str:
    from heapscope import traces
    path = os.path.join(folder, f"vo1989-{ops}.rep")
    if not os.path.exists(path):
        traces.write_rep(traces.make_workload("vo1989", steps=ops // 2, seed=1), path)
    return path


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--trace", action="append", default=None,
                   help="a bundled trace's name or a file (default: gcc-cc1, then the generated one)")
    p.add_argument("--ops", type=int, default=1_000_000, help="operations of the generated trace (0: none)")
    p.add_argument("--phases", default=",".join(PHASES))
    p.add_argument("--as-before", action="store_true",
                   help="without what gui/app.py does once the window shows (gc.freeze, the forkserver)")
    args = p.parse_args(argv)
    phases = args.phases.split(",")
    global SOURCE
    SOURCE = _source_of_heapscope()

    app = QApplication.instance() or QApplication([])
    from heapscope.traces.bundled import example_path
    from heapscope.gui.app import configure_app
    from heapscope.gui.main_window import MainWindow
    configure_app(app)
    if not args.as_before:
        from heapscope.gui.gui_thread_gc import keep_long_lived
        from heapscope.gui.structure_views import load_all
        load_all()                    # as gui/app.py does before its window shows
    out_dir = tempfile.mkdtemp(prefix="heapscope-stall-")
    paths = [t if os.path.exists(t) else str(example_path(t))
             for t in (args.trace or ["gcc-cc1"])]
    if args.ops:
        paths.append(generated(args.ops, tempfile.gettempdir()))
    print(f"# {time.strftime('%Y-%m-%d %H:%M')} load average {os.getloadavg()[0]:.2f}; "
          f"longest event-loop gap per phase (a tick every {TICK_MS} ms)")
    for path in paths:
        window = MainWindow()
        window.resize(1280, 720)
        window.show()
        settle(app, 1.0)
        if not args.as_before:
            keep_long_lived()         # as gui/app.py does once its window shows
        probe = StallProbe()
        probe.start()
        figures = measure(app, window, probe, path, phases, out_dir, args.as_before)
        probe.stop()
        steps = figures.pop("steps", window.model.n)
        print(f"\n## {os.path.basename(path)} ({steps:,} steps)")
        for name, value in figures.items():
            if not name.endswith(" took"):
                print(f"  {name}: {value:.2f} s")
        for phase in phases:
            gap, where = probe.worst.get(phase, (0.0, ""))
            print(f"  {phase:9} longest gap {1e3 * gap:7.0f} ms  stalls>100ms {probe.stalls[phase]:3}"
                  f"  took {figures.get(phase + ' took', 0):6.1f} s  CPU {probe.cpu[phase]:5.1f} s  {where}")
        window.compare.loader.cancel()
        window.close()
        window.deleteLater()
        settle(app, 0.2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
