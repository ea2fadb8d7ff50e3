"""Compare mode in the window: what it shows, how it gets there, and back.

:class:`CompareMode` belongs to the :class:`~heapscope.gui.main_window.MainWindow`.  It
keeps the strategies to compare (2 to 7, user strategies included), owns the
actions (Strategy > Compare Mode ``C``, Compare Strategies… ``Shift+C``), the
:class:`~heapscope.gui.compare_view.CompareView` (one page of the window's stack) and
a :class:`~heapscope.gui.parallel_loader.ParallelLoader`.

Timelines are built once: the model keeps every timeline built for the open
trace, per (strategy, parameters), so entering compare mode builds only the
strategies not built yet -- all of them at once, one worker process each --
and switching strategies or leaving and entering compare mode afterwards
replays nothing.  Entering and leaving keep the position.  While compare mode
shows, the single-strategy views are unbound from the model (they cost
nothing), and the compare rows are unbound when it leaves.

A jump seeks every row; so that seven rows jump nearly as fast as one
strategy, showing the rows starts a :class:`~heapscope.gui.background_densifier.BackgroundDensifier`
that gives each row's timeline checkpoints as many times denser as there are
rows, in short slices while the window is idle; leaving compare mode or
opening another trace stops it.

A new trace opened in compare mode is read on the loader's thread, then its
strategies are built in parallel; only when they are built does the window
switch to it (cancelling keeps the trace shown before).

:func:`build_compare_window` makes a window in compare mode with no event
loop needed (``heapscope render`` and the benchmarks use it).
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QAction, QKeySequence

from heapscope.allocators.predict import GROW
from heapscope.allocators.registry import STRATEGIES

from .background_densifier import BackgroundDensifier
from .compare_dialog import CompareDialog
from .compare_memory import ask_before_building
from .compare_rows import RowsAsBuilt
from .compare_view import MAX_ROWS, MIN_ROWS, CompareView
from .predict_bar import PredictBar
from .row_heaps import HeapsInTurns
from .turns import turns
from .step_words import request_words
from .parallel_loader import BuildRequest, ParallelLoader
from .show_model import timeline_key


class CompareError(ValueError):
    """Strategies compare mode cannot show (too few, too many, unknown)."""


def check_names(names) -> list[str]:
    """``names`` without repeats, checked: 2 to 7 known strategies."""
    names = list(dict.fromkeys(names))
    unknown = [n for n in names if n not in STRATEGIES]
    if unknown:
        raise CompareError(f"unknown strateg{'y' if len(unknown) == 1 else 'ies'} "
                           f"{', '.join(map(repr, unknown))}; known: {', '.join(STRATEGIES)}")
    if not MIN_ROWS <= len(names) <= MAX_ROWS:
        raise CompareError(f"compare mode shows {MIN_ROWS} to {MAX_ROWS} strategies, "
                           f"not {len(names)}")
    return names


class CompareMode(QObject):
    #: compare mode showed new rows, or left (argument: whether it is on)
    changed = Signal(bool)

    def __init__(self, window) -> None:
        super().__init__(window)
        self.window = window
        #: the strategies compared, in row order
        self.names: list[str] = []
        #: compare mode is on (its page shows, or will once the trace is built)
        self.active = False
        self.view = CompareView()
        self.loader = ParallelLoader(window)
        self.loader.succeeded.connect(self._built)
        self.loader.cancelled.connect(self._build_cancelled)
        #: denser checkpoints for the rows shown, while the window is idle
        self.densifier = BackgroundDensifier(self)
        #: a big trace's rows, built in the background and shown as each is ready
        self.rows = RowsAsBuilt(self)
        #: the heaps of rows about to be shown, made a turn each before they show
        self.heaps = HeapsInTurns(window.model, self)
        self.densifier.held = lambda: turns().busy
        window.model.trace_changed.connect(self.densifier.cancel)
        window.model.trace_changed.connect(self.heaps.cancel)
        self.dialog: CompareDialog | None = None
        #: the dialog saying what the rows would need, while it is open
        self.memory_dialog = None
        # predict mode (gui/predict_mode.py) asks every row: a click in a row
        # answers for that row, an open question quiets the rows
        self.view.row_clicked.connect(window.predict_click)
        self.view.rows_joined.connect(self._rows_joined)
        # the View menu's Structure View says what the rows show (a row's own
        # button opens one and closes another), so S and a lesson's stop
        # always turn it the way they mean
        self.view.structures_changed.connect(self._structures_changed)
        window.predict.question_changed.connect(self._question_changed)
        self.act_toggle = self._action("&Compare Mode", self.toggle, "C",
                                       "Show the compared strategies side by side, or one strategy")
        self.act_toggle.setCheckable(True)
        self.act_pick = self._action("Compare &Strategies…", self.ask_names, "Shift+C",
                                     "Choose the strategies to compare (2 to 7)")

    def _action(self, text: str, slot, key: str, tip: str) -> QAction:
        act = QAction(text, self.window)
        act.setShortcut(QKeySequence(key))
        act.setToolTip(f"{tip} ({key})")
        act.triggered.connect(lambda checked=False: slot())
        self.window.addAction(act)
        return act

    @property
    def busy(self) -> bool:
        """Building rows behind the dialog, making the heaps of rows about to
        show, or rows joining the view a turn at a time."""
        return self.loader.busy or self.heaps.busy or self.view.joining()

    # ------------------------------------------------------------ choosing
    def ask_names(self) -> None:
        """Open the dialog; on OK compare what was ticked."""
        w = self.window
        built = [name for name in STRATEGIES if w.trace is not None
                 and w.model.timeline_for(name, w.params_for(name)) is not None]
        ticked = self.names or [w.strategy_name]
        dialog = self.dialog = CompareDialog(ticked, built, w)
        dialog.accepted.connect(lambda: self.compare(dialog.chosen()))
        dialog.finished.connect(lambda _=0: setattr(self, "dialog", None))
        dialog.open()

    def toggle(self) -> None:
        """C: compare mode on (with the strategies chosen last) or off."""
        if self.active:
            self.leave()
        elif self.names:
            self.compare(self.names)
        else:
            self.ask_names()
        self._sync_action()

    def compare(self, names, memory_asked: bool = False) -> None:
        """Show ``names`` side by side at the current step, building (all at
        once) those not built yet for this trace and these parameters.  If
        the rows would need more memory than compare mode may take, a dialog
        says so first and offers fewer (gui/compare_memory.py); its answer
        comes back here with ``memory_asked``."""
        names = check_names(names)
        w = self.window
        if not memory_asked and not w.loader.busy and ask_before_building(
                self, names, lambda picked: self.compare(picked, memory_asked=True)):
            return
        self.names = names
        if w.loader.busy:
            # a trace is being read: read it for compare mode instead
            self._activate_page()
            w.loading.start(w.loader.request)
            return
        if w.trace is None:
            # nothing to show yet: the trace loaded next is built for these
            self._activate_page()
            return
        missing = [n for n in names if w.model.timeline_for(n, w.params_for(n)) is None]
        self.rows.cancel()
        if missing and self.rows.wanted(w.trace):
            # a big trace: the rows show as each is built (gui/compare_rows.py)
            w.player.pause()
            self._activate_page()
            self.rows.build(names, missing, w.model.position)
            return
        if missing:
            w.player.pause()
            w.statusBar().showMessage(f"Replaying {w.model.label} through {', '.join(missing)}…")
            self.loader.start(BuildRequest(w.trace, [(n, w.params_for(n)) for n in missing],
                                           w.model.label, {"names": names,
                                                           "position": w.model.position}))
            return
        self._show(names, w.model.position, in_turns=True)

    def _sync_action(self) -> None:
        self.act_toggle.setChecked(self.active)

    # -------------------------------------------------------------- building
    def build_trace(self, result) -> None:
        """The loader has read a new trace for compare mode: build its
        strategies at once; the window switches to it when they are built."""
        w = self.window
        req = result.request
        if self.rows.wanted(result.trace):
            # a big trace: shown now, its rows as each is built (gui/compare_rows.py)
            w.model.set_trace(result.trace, req.source, req.label)
            if req.source:
                w.recent.remember(req.source)
            self.rows.build(list(self.names), list(self.names), 0)
            return
        self.loader.start(BuildRequest(result.trace, [(n, w.params_for(n)) for n in self.names],
                                       req.label, {"names": list(self.names), "new_trace": True,
                                                   "source": req.source,
                                                   "position": req.keep_position or 0}))

    def _built(self, result) -> None:
        w = self.window
        ctx = result.request.context
        model = w.model
        if ctx.get("new_trace"):
            if not result.timelines:
                self._say_failures(result.failures, none_left=True)
                return
            model.set_trace(result.request.trace, ctx.get("source"), result.request.label)
            if ctx.get("source"):
                w.recent.remember(ctx["source"])
        for timeline in result.timelines.values():
            model.add_timeline(timeline)
        names = [n for n in ctx["names"] if model.timeline_for(n, w.params_for(n)) is not None]
        if result.failures:
            self._say_failures(result.failures, none_left=len(names) < MIN_ROWS)
        if len(names) >= MIN_ROWS:
            self._show(names, ctx.get("position", 0), in_turns=True)
        elif ctx.get("new_trace") and names:
            self._leave_to(names[0], ctx.get("position", 0))

    def _say_failures(self, failures: dict, none_left: bool) -> None:
        text = "\n".join(f"{name}: {error}" for name, error in failures.items())
        more = (" Compare mode needs at least two strategies." if none_left else
                " The others are shown.")
        self.window.show_error("Some strategies could not replay this trace",
                               f"{', '.join(failures)} could not replay it.{more}", text)

    def _build_cancelled(self, request) -> None:
        w = self.window
        w.statusBar().showMessage(f"Cancelled: still showing {w.model.label or 'nothing'}", 8000)
        if request.context.get("new_trace") and w.trace is None:
            return
        if not self.view.shown_rows():
            # compare mode was waiting for these: back to the one strategy
            self._deactivate_page()

    # --------------------------------------------------------------- showing
    def _activate_page(self) -> None:
        w = self.window
        if not self.active:
            self.active = True
            w.bind_single_views(False)
            w.window_layout.show_page(compare=True)
        self._sync_action()

    def deactivate(self) -> None:
        """Compare mode off, before anything is compared (a strategy picked
        while the trace is still being read)."""
        self.loader.cancel()
        self._deactivate_page()
        self.changed.emit(False)

    def _deactivate_page(self) -> None:
        w = self.window
        self.densifier.cancel()
        self.heaps.cancel()
        if self.active:
            self.active = False
            self.view.unbind()
            w.window_layout.show_page(compare=False)
            w.bind_single_views(True)
        self._sync_action()

    def _show(self, names: list[str], position: int, keys=None, in_turns: bool = False) -> None:
        """Show ``names`` at ``position``; ``in_turns``: the new rows' heaps
        are made one per turn of the event loop first (gui/row_heaps.py), the
        rows not made yet join the view one per turn (CompareView._join_next),
        and :attr:`changed` is emitted once every row has joined."""
        w = self.window
        w.player.pause()
        if keys is None:
            keys = [timeline_key(n, w.params_for(n)) for n in names]
        if in_turns and self.heaps.start(keys, position, lambda: self._show_now(names, position, keys)):
            return                  # _show_now, once each new row's heap is made
        self.heaps.cancel()
        self._show_now(names, position, keys, in_turns)

    def _show_now(self, names: list[str], position: int, keys, in_turns: bool = True) -> None:
        w = self.window
        self.names = names
        self._activate_page()
        self.view.join_in_turns = in_turns
        try:
            w.model.show(keys, position)
            self.densify_shown()
            if self.view.model is not w.model:
                self.view.bind(w.model)
        finally:
            self.view.join_in_turns = False
        label = w.model.label or "trace"
        w.setWindowTitle(f"heapscope — {label}[*] — compare: {', '.join(names)}")
        w.trace_label.setText(f"{label} · {w.model.n:,} steps")
        w.strategy_title.setText(self.title())
        if self.view.joining():
            w.statusBar().showMessage(f"{label}: {len(names)} strategies side by side; "
                                      f"rows joining…")
            return               # _rows_joined, once every row is there
        self._rows_joined()

    def _rows_joined(self) -> None:
        """Every shown row is in the view: predict bands, the Structure
        action, and :attr:`changed`."""
        w = self.window
        if not self.active or self.view.model is not w.model:
            return
        names = self.names
        self._structures_changed(self.view.any_structure_open())
        self._predict_bars()
        if w.predict.active:
            w.predict.set_active(True)           # every row asks
        label = w.model.label or "trace"
        w.statusBar().showMessage(f"{label}: {len(names)} strategies side by side; "
                                  f"C shows one strategy, Shift+C picks others")
        self.changed.emit(True)

    def show_rows(self, names: list[str], position: int) -> None:
        """Show the kept timelines of ``names`` side by side at ``position``,
        rows not made yet joining one per turn (compare_rows.py's rows, as
        each is built)."""
        self._show(names, position, in_turns=True)

    def densify_shown(self) -> None:
        """Denser checkpoints for the rows shown whose build has ended (a
        build in the background ships its own checkpoints meanwhile)."""
        model = self.window.model
        shown = [model.timeline(r) for r, key in enumerate(model.shown) if not model.building(key)]
        self.densifier.start(shown, [tl for tl in model.timelines().values() if tl not in shown])

    def _predict_bars(self) -> None:
        """A predict band above each row's map, for that row's session."""
        w = self.window
        for row in self.view.shown_rows():
            session = w.predict.session(row.row)
            if row.predict_bar is None or row.predict_bar.session is not session:
                bar = PredictBar(session, w.act_predict_grow, w.act_predict_reveal,
                                 grow=lambda r=row.row: w.predict.answer(r, GROW))
                bar.apply_presentation(w.presentation)
                bar.set_compact(True)        # seven bands must leave the maps room
                row.set_predict_bar(bar)
                bar.refresh()

    def apply_presentation(self, pres) -> None:
        """The rows' predict bands in ``pres``'s sizes and colours (the view
        itself is styled with the window's other views)."""
        for row in self.view.rows:
            if row.predict_bar is not None:
                row.predict_bar.apply_presentation(pres)

    def _structures_changed(self, any_open: bool) -> None:
        if self.active:
            self.window.act_structure.setChecked(any_open)

    def _question_changed(self, step) -> None:
        if self.active:
            for row in self.view.shown_rows():
                row.set_quiet(step is not None)

    def title(self) -> str:
        """What the tool bar says while compare mode shows."""
        return f"comparing {len(self.names)}: {', '.join(self.names)}"

    def leave(self) -> None:
        """Back to one strategy (the one picked last) at the same step."""
        if not self.active:
            return
        w = self.window
        name = w.strategy_name
        if w.model.timeline_for(name, w.params_for(name)) is None:
            name = self.names[0] if self.names else name
        self._leave_to(name, w.model.position)

    def _leave_to(self, name: str, position: int) -> None:
        w = self.window
        w.player.pause()
        self.loader.cancel()
        self.rows.cancel()
        self.densifier.cancel()
        key = timeline_key(name, w.params_for(name))
        if w.model.timeline_for(name, w.params_for(name)) is None:
            # not built with the window's parameters: build it, as picking it would
            self._deactivate_page()
            self.changed.emit(False)
            w.set_strategy(name)
            return
        self.view.unbind()
        self.active = False
        # the action says the one strategy's panel again, not the rows'
        w.act_structure.setChecked(not w.structure_panel.isHidden())
        w.strategy_name = name
        w.model.show([key], position)
        w.window_layout.show_page(compare=False)
        w.bind_single_views(True)
        w.loading.shown_single()
        self._sync_action()
        self.changed.emit(False)

    def step_words(self) -> str:
        """The shown step's request, the same for every row."""
        return request_words(self.window.model)

    # ------------------------------------------------------------- offscreen
    def show_timelines(self, trace, timelines, position: int = 0, source: str | None = None,
                       label: str = "", in_turns: bool = False) -> None:
        """Show timelines already built for ``trace`` (2 to 7 of them, e.g.
        from :func:`heapscope.allocators.parallel.build_timelines`) side by side at
        ``position``: no build; no event loop needed unless ``in_turns`` (the
        rows then join one per turn, as :meth:`_show` says: :attr:`busy`
        until they all have)."""
        timelines = list(timelines)
        names = check_names([tl.strategy_name for tl in timelines])
        w = self.window
        self.rows.cancel()              # (rows still building for other names join no more)
        if w.model.trace is not trace:
            w.model.set_trace(trace, source, label)
        keys = [w.model.add_timeline(tl) for tl in timelines]
        self._show(names, position, keys, in_turns)


def build_compare_window(trace, names, position: int = 0, params: dict | None = None,
                         strategy_params: dict | None = None, size=(1920, 1080)):
    """A :class:`~heapscope.gui.main_window.MainWindow` in compare mode showing ``trace``
    (a Trace, or a spec :func:`heapscope.traces.load_trace` reads) through ``names``
    at ``position``, ``size`` pixels big; the timelines are built first, all
    at once in worker processes.  Needs a QApplication; returns the window
    (not shown: ``window.grab()`` renders it offscreen)."""
    from heapscope import traces
    from heapscope.allocators.parallel import BuildFailed, BuildSpec, build_timelines
    from .main_window import MainWindow
    names = check_names(names)
    if isinstance(trace, str):
        trace = traces.load_trace(trace)
    params = dict(params or {})
    own = {k: dict(v) for k, v in (strategy_params or {}).items()}
    specs = [BuildSpec(n, {**params, **own.get(n, {})}) for n in names]
    from heapscope.allocators.isolation import DEFAULT_TIME_LIMIT
    built = build_timelines(trace, specs, time_limit=DEFAULT_TIME_LIMIT)   # a plugin that loops is stopped
    failed = [r for r in built.values() if isinstance(r, BuildFailed)]
    if failed:
        raise CompareError("; ".join(str(f) for f in failed))
    window = MainWindow()
    window.params = params
    window.strategy_params = own
    window.strategy_name = names[0]
    window.resize(*size)
    window.compare.show_timelines(trace, [built[n] for n in names], position)
    return window
