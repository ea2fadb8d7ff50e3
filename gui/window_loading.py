"""Loading in the window: opening a trace, replaying it through the picked
strategy in the background, showing the result, and the user-code watch.

:class:`TraceLoading` owns the window's :class:`~heapscope.gui.loader.Loader` (one
strategy, on a thread; compare mode's parallel build is
:class:`~heapscope.gui.compare_mode.CompareMode`'s) and its
:class:`~heapscope.gui.user_code_watch.UserCodeWatch`.  A built timeline is added to
the show model and shown there; every view follows the model.  What the user
is told (the window's title, the trace label, the status bar, a message box
when a load fails or a strategy of your own stops) goes through the window's
public widgets and :meth:`~heapscope.gui.main_window.MainWindow.show_error` /
:meth:`~heapscope.gui.main_window.MainWindow.message`.

Signals: :attr:`shown` once one strategy shows (the window's
``timeline_changed``), :attr:`failed` with the message shown when a load
fails (the window's ``load_failed``).
"""

from __future__ import annotations

import dataclasses
import os

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import QFileDialog, QMessageBox

from heapscope import traces
from heapscope.allocators.isolation import needs_worker
from heapscope.allocators.parallel import BuildFailed
from heapscope.allocators.params import ParamError
from heapscope.allocators.registry import STRATEGIES
from heapscope.allocators.user import UserStrategyError

from .background_build import BackgroundBuild
from .build_bar import BuildBar
from .loader import LoadRequest, Loader, ReadTrace
from .show_model import timeline_key
from .summary_in_turns import SummaryInTurns
from .user_code_watch import UserCodeWatch

TRACE_FILTER = ("malloc traces (*.rep *.rep.gz *.heap *.heap.gz *.ltrace *.txt *.log *.out *.gz *.bin);;"
                "All files (*)")


class TraceLoading(QObject):
    #: one strategy shows (a trace loaded, or the strategy changed)
    shown = Signal()
    #: a load failed; the argument is the message shown
    failed = Signal(str)

    def __init__(self, window, default_strategy: str) -> None:
        super().__init__(window)
        self.window = window
        self.model = window.model
        self.loader = Loader(window)
        #: a big trace's timeline, built in a worker while it shows (gui/background_build.py)
        self.background = BackgroundBuild(self.model, self)
        #: the status line's summary of a timeline built in the background, a part a turn
        self.summaries = SummaryInTurns(self)
        self.background.ended.connect(self._built)
        self.background.failed.connect(lambda key, exc: window.statusBar().showMessage(
            f"{key[0]} stopped building: {exc}; the steps built so far show", 8000))
        #: timelines whose build was stopped for another load: dropped once another shows
        self._half_built: set = set()
        # a strategy of your own that loops in this process (a seek, a redraw)
        # is stopped at the time limit (gui/user_code_watch.py)
        self.user_watch = UserCodeWatch(window, lambda: window.time_limit, self.shown_user_classes)
        self.user_watch.stopped.connect(self._user_code_stopped)
        # queued: the seek that found the fault has unwound before the heap goes
        self.model.user_fault.connect(self._user_fault, Qt.QueuedConnection)
        self.model.shown_changed.connect(self.user_watch.refresh)
        #: the last built-in strategy shown alone: what shows when one of yours is stopped
        self.last_builtin = default_strategy

    def connect_loader(self) -> None:
        """Listen to the loader (once the window's views exist)."""
        #: beside the scrubber: how far the build is, with Cancel
        self.build_bar = BuildBar(self.background, self.model)
        self.window.bar.add_to_row(self.build_bar)
        self.loader.succeeded.connect(self._loaded)
        self.loader.failed.connect(self._load_failed)
        self.loader.cancelled.connect(self._load_cancelled)

    @property
    def label(self) -> str:
        """The shown trace's label."""
        return self.model.label or "trace"

    # ============================================================ requests
    def ask_open(self) -> None:
        """File > Open: pick a .rep / .rep.gz and load it."""
        source = self.model.source
        start = os.path.dirname(source) if source else ""
        path, _ = QFileDialog.getOpenFileName(self.window, "Open a malloc trace", start, TRACE_FILTER)
        if path:
            self.window.open_trace(path)

    def open_trace(self, path: str, position: int | None = None) -> None:
        """Read ``path`` and replay it through the current strategy, in the
        background, then show step ``position`` (default 0)."""
        w = self.window
        path = os.fspath(path)
        # .rep or ltrace/villoc output, told apart by content
        self.start(LoadRequest(os.path.basename(path), ReadTrace(path, is_file=True),
                               w.strategy_name, w.params_for(w.strategy_name), source=path,
                               keep_position=position))

    def load_workload(self, name: str, params: dict | None = None) -> None:
        """Generate workload ``name`` (in the background) and show it."""
        w = self.window
        params = dict(params or {})
        label = name + (":" + ",".join(f"{k}={v}" for k, v in params.items()) if params else "")
        self.start(LoadRequest(label, lambda: traces.make_workload(name, **params),
                               w.strategy_name, w.params_for(w.strategy_name)))

    def load_spec(self, spec: str, position: int | None = None) -> None:
        """A path or a workload spec such as ``vo1989:steps=500``."""
        w = self.window
        if traces.names_a_file(spec):     # a bundled trace's or workload's name wins over a file
            w.open_trace(spec, position)
        else:
            self.start(LoadRequest(spec, ReadTrace(spec), w.strategy_name,
                                   w.params_for(w.strategy_name), keep_position=position))

    def load_trace(self, trace, label: str | None = None) -> None:
        """Show a Trace already in memory."""
        w = self.window
        self.start(LoadRequest(label or trace.name or "trace", lambda: trace,
                               w.strategy_name, w.params_for(w.strategy_name)))

    def show_built(self, trace, timeline, source: str | None = None, position: int = 0,
                   label: str | None = None) -> None:
        """Show a timeline already built (no loader): the trace, then its step ``position``."""
        if self.model.trace is not trace:
            self.model.set_trace(trace, source, label or "")
        key = self.model.add_timeline(timeline)
        self.show(timeline.strategy_name, key, position)

    def set_strategy(self, name: str) -> None:
        """Replay the same trace through another strategy, keeping the step
        (in compare mode: leave it for that strategy)."""
        w = self.window
        if name not in STRATEGIES:
            raise ValueError(f"unknown strategy {name!r}")
        if w.compare.active:
            w.strategy_name = name
            if self.model.trace is not None and not self.loader.busy:
                w.compare.leave()
                return
            w.compare.deactivate()    # nothing compared shows yet: just this one
        if self.loader.busy:
            # a load is under way: redo it with this strategy
            self.start(dataclasses.replace(self.loader.request, strategy=name,
                                           params=w.params_for(name)))
            return
        key = timeline_key(name, w.params_for(name))
        if self.model.shown == [key]:
            w.sync_strategy_widgets()
            return
        if self.model.trace is None:
            w.strategy_name = name
            w.sync_strategy_widgets()
            return
        if self.model.timeline_for(name, w.params_for(name)) is not None:
            # built before for this trace: show it at once, at the same step
            w.player.pause()
            self.show(name, key, self.model.position)
            return
        trace = self.model.trace
        timeline = self.model.timeline()
        self.start(LoadRequest(self.label, lambda: trace, name, w.params_for(name),
                               source=self.model.source,
                               keep_position=timeline.position if timeline else 0))

    def start(self, request: LoadRequest) -> None:
        """Start ``request`` on the loader (in compare mode: read the trace
        only; compare mode builds its strategies)."""
        w = self.window
        w.player.pause()
        self.stop_building()
        request = dataclasses.replace(request, time_limit=w.time_limit)
        if w.compare.active:
            # compare mode: read the trace here, then build its strategies at once
            w.compare.loader.cancel()
            request = dataclasses.replace(request, strategy=None)
            w.statusBar().showMessage(f"Reading {request.label}…")
        else:
            w.statusBar().showMessage(f"Replaying {request.label} through {request.strategy}…")
        self.loader.start(request)

    # ============================================================= results
    def _loaded(self, result) -> None:
        req = result.request
        if result.timeline is None:
            self.window.compare.build_trace(result)
            return
        model = self.model
        if result.trace is not model.trace or req.source != model.source:
            model.set_trace(result.trace, req.source)
        key = model.add_timeline(result.timeline, building=result.building)
        if req.source:
            self.window.recent.remember(req.source)
        position = req.keep_position if req.keep_position is not None else 0
        if result.building:
            # step 0 now; the rest as the worker builds it (a later step waits for it)
            self.background.start(result.trace, {key: result.timeline}, self.window.time_limit)
        self.show(req.strategy, key, position)

    def stop_building(self) -> None:
        """Stop a background build for another load: the timeline keeps what
        was built while it still shows, and is dropped once another shows."""
        if self.background.active:
            self._half_built.update(self.background.keys())
            self.background.cancel(quiet=True)

    def stop(self) -> None:
        """Closing the window: no load, no worker left."""
        self.loader.cancel()
        self.loader.wait()
        self.background.abandon()

    def _built(self, whole: bool) -> None:
        """The background build ended: all built, or cancelled (it ends there)."""
        w = self.window
        timeline = self.model.timeline()
        if timeline is None or self.model.building():
            return
        if whole:
            # (a big series: summed up a part a turn, then said)
            self.summaries.start(timeline.series, lambda row, tl=timeline: self._say_summary(tl, row))
        else:
            w.trace_label.setText(f"{self.label} · {timeline.n:,} steps (stopped)")
            w.statusBar().showMessage(f"Stopped building: {self.label} shows its first "
                                      f"{timeline.n:,} steps of {len(self.model.trace):,}", 8000)

    def show(self, strategy: str, key, position: int) -> None:
        """Show the kept timeline ``key`` at ``position``: the views follow the model."""
        # watched from its first seek on, if it is a strategy of your own
        self.user_watch.refresh([STRATEGIES.get(strategy)])
        self.window.strategy_name = strategy
        self.model.show([key], position)
        for dropped in self._half_built - {key}:
            if dropped not in self.model.shown and self.model.timelines().get(dropped) is not None:
                self.model.forget_timeline(dropped)
        self._half_built.clear()
        self.shown_single()

    def shown_single(self) -> None:
        """Titles, status and signals once one strategy shows."""
        w = self.window
        if not needs_worker(w.strategy_name):
            self.last_builtin = w.strategy_name
        w.sync_strategy_widgets()
        timeline = self.model.timeline()
        w.setWindowTitle(f"heapscope — {self.label}[*] — {w.strategy_name}")
        w.trace_label.setText(f"{self.label} · {timeline.n:,} steps")
        if self.model.building():
            w.statusBar().showMessage(f"{self.label} through {w.strategy_name}: step 0 shown, "
                                      "the rest is being built (the scrubber shows how far)")
        else:
            w.statusBar().showMessage(self.summary_text())
        self.shown.emit()
        if timeline.fault is not None:
            self._show_fault(timeline.fault)

    def _say_summary(self, timeline, row: dict) -> None:
        if self.model.timeline() is timeline and not self.model.building():
            self.window.statusBar().showMessage(self.summary_text(row=row))

    def summary_text(self, timed: bool = True, row: dict | None = None) -> str:
        """The status bar's line: the whole replay's measures (its summary
        ``row`` if given, else the timeline's; and, when ``timed``, how long
        the replay took, which differs run to run)."""
        timeline = self.model.timeline()
        s = timeline.summary() if row is None else dict(row, wall_s=timeline.wall_seconds)
        text = (f"{self.label} through {self.window.strategy_name}: waste {_pct(s.get('waste'))}, "
                f"utilisation at the end {_pct(s.get('utilisation'))}, mean search "
                f"{s.get('search_mean', 0):.2f}, {s.get('failed', 0)} failed")
        return text + (f"; replayed in {timeline.wall_seconds:.2f} s" if timed else "")

    def _show_fault(self, fault) -> None:
        """A user strategy broke during the replay: the timeline stops before
        that step; say what happened, in terms of the user's code."""
        w = self.window
        name = w.strategy_name
        n = self.model.timeline().n
        shown = self.model.step(0)
        line = shown.fault_line if shown is not None else None
        if line is not None and line.addrs:
            self.model.select(line.addrs[0])    # the block the mistake names, outlined
        w.statusBar().showMessage(f"{name} stopped at step {fault.step}: {fault.message}")
        w.message(QMessageBox.Warning, f"{name} stopped at step {fault.step}",
                  f"The replay stopped at step {fault.step}"
                  + (f" ({fault.operation})" if fault.operation else "")
                  + f": in {fault.where()}.",
                  f"{fault.message}\n\nThe heap shown is the one after step {n}, "
                  f"before the operation that failed.")

    def _still_showing(self) -> str:
        return self.label if self.model.trace else "nothing"

    def _load_failed(self, exc: Exception, request) -> None:
        w = self.window
        w.sync_strategy_widgets()
        if isinstance(exc, BuildFailed):
            # a strategy of your own stopped in its worker: looped past the time
            # limit, exited or died; what showed before stays shown
            name = request.strategy
            w.statusBar().showMessage(f"{name} stopped: still showing {self._still_showing()}", 8000)
            w.show_error(f"{name} stopped", f"{name} gave no timeline of "
                         f"{request.label}: {exc.error}.", exc.details)
            self.failed.emit(str(exc))
            return
        if isinstance(exc, (traces.TraceError, ParamError, UserStrategyError)):
            text = str(exc)           # "path:line: message", "tlsf: pool_size=... is too large"
        else:
            text = f"{type(exc).__name__}: {exc}"
        what = request.source or request.label
        w.statusBar().showMessage(f"Could not load {what}", 8000)
        w.show_error(f"Cannot load {os.path.basename(what)}", f"heapscope could not load {what}.", text)
        self.failed.emit(text)

    def _load_cancelled(self, request) -> None:
        self.window.sync_strategy_widgets()
        self.window.statusBar().showMessage(f"Cancelled: still showing {self._still_showing()}", 8000)

    # ===================================================== user-code watch
    def shown_user_classes(self) -> list:
        """The classes of the strategies of your own shown now (the watch's)."""
        return [STRATEGIES.get(key[0]) for key in self.model.shown if needs_worker(key[0])]

    def _user_fault(self, name: str, message: str) -> None:
        """A seek in this process replayed a strategy of your own to another
        result than its build (not deterministic) or to a mistake: its heap
        is not to be trusted, so it goes as a stopped one does."""
        self._drop_user_heap(name, message, "Your strategy's timeline was built in a worker "
                             "process; replaying it here, to show this step, gave another result.")

    def _user_code_stopped(self, name: str, where: str) -> None:
        """A strategy of your own held the window past the time limit and was
        stopped mid-step: its heap is not to be trusted any more.  Shown alone,
        it makes way for the last built-in shown (its timeline is dropped: picked
        again, it is built afresh); the dialog says what happened."""
        text = f"no answer in {self.window.time_limit:g} s at step {self.model.position}, in {where}"
        self._drop_user_heap(name, f"{name}'s code gave {text}; heapscope stopped it.",
                             "Your code ran in the window's own process here (seeking a step, "
                             "drawing it) and did not return within the time limit "
                             "(--time-limit SECONDS).")

    def _drop_user_heap(self, name: str, text: str, detail: str) -> None:
        """Shown alone, the strategy ``name`` makes way for the last built-in
        shown (its timeline is dropped: picked again, it is built afresh); the
        dialog says what happened."""
        w = self.window
        w.player.pause()
        if not w.compare.active and w.strategy_name == name:
            dropped = self.model.shown
            w.set_strategy(self.last_builtin)
            for key in dropped:
                if key not in self.model.shown:
                    self.model.forget_timeline(key)
        w.statusBar().showMessage(f"{name} stopped: {text}", 8000)
        w.show_error(f"{name} stopped", text, detail)


def _pct(x) -> str:
    if x is None or x != x:
        return "n/a"
    return f"{100 * x:.1f} %"
