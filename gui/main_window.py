"""heapscope's main window: a trace replayed through one strategy, step by step.

What is shown lives in one :class:`~gui.show_model.ShowModel` (the trace, the
timelines built from it, the shown strategy, the position, the event within
the step, the selected and the hovered block).  Every view subscribes to it
and redraws from it (:mod:`gui.subscriber`); the window only composes the
views, owns the actions and menus, and loads traces.

Layout: the heap map (with its legend) on the left over the explain panel
(the step's events in the policy's words); beside them the structure view of
the shown strategy, in splitters that collapse; the plots of the whole replay
under them, the gauges on the right, and the timeline bar (buttons, scrubber,
step box, speed, the step in words) at the bottom.  A tool bar holds the
strategy picker.

Every command is a QAction with its shortcut, in a menu: File (Open, Open
Recent, Open Example, Workload, Save Screenshot, Quit), View (Fit Heap,
Structure View S, Explain Panel E), Playback (Play/Pause Space, Step Back Left,
Step Forward Right, Previous / Next Event Shift+Left / Shift+Right, Start
Home, End End, Go to Step Ctrl+G, Faster +, Slower -), Strategy (one per
strategy, Ctrl+1..., Compare Mode C, Compare Strategies Shift+C), Help (Keys
F1, About).

Compare mode (:mod:`gui.compare_mode`) shows 2 to 7 strategies side by side,
one row each, in a second page of the window's stack; the timeline bar, the
player, the step animator and the keys drive both pages.

Loading a trace and changing the strategy replay the trace in the background
(:mod:`gui.loader`); a strategy already replayed for this trace shows at once.
A trace that cannot be read is reported in a message box naming the file and
line, and the window keeps what it showed.
"""

from __future__ import annotations

import dataclasses
import os

from PySide6.QtCore import QSettings, QSize, Qt, Signal
from PySide6.QtGui import QAction, QActionGroup, QKeySequence
from PySide6.QtWidgets import (QComboBox, QFileDialog, QFrame, QHBoxLayout, QInputDialog, QLabel,
                               QMainWindow, QMessageBox, QScrollArea, QSplitter, QStackedWidget,
                               QStyle, QToolBar, QToolButton, QVBoxLayout, QWidget)

from .. import traces
from ..allocators.params import ParamError
from ..allocators.user import UserStrategyError
from ..traces.bundled import examples as bundled_examples
from ..allocators.registry import STRATEGIES, strategy_names

from .compare_mode import CompareMode
from .explain_panel import ExplainPanel
from .gauges import GaugePanel
from .heap_map import HeapMapWidget
from .loader import LoadRequest, Loader, ReadTrace
from .player import Player
from .plots import PlotPanel
from .show_model import ShowModel, timeline_key
from .step_animator import StepAnimator
from .structure_panel import StructurePanel
from .timeline_bar import TimelineBar
from .workload_dialog import WorkloadDialog

ORGANIZATION = "heapscope"
APPLICATION = "heapscope"
DEFAULT_STRATEGY = "next-fit"
MAX_RECENT = 8
TRACE_FILTER = ("malloc traces (*.rep *.rep.gz *.ltrace *.txt *.log *.out *.gz);;"
                "All files (*)")


def open_settings() -> QSettings:
    """The app's settings, always in INI format (tests point IniFormat's user
    path at a temporary folder with ``QSettings.setPath``)."""
    return QSettings(QSettings.IniFormat, QSettings.UserScope, ORGANIZATION, APPLICATION)


class MainWindow(QMainWindow):
    #: a new timeline is shown (a trace loaded or the strategy changed)
    timeline_changed = Signal()
    #: the shown position moved
    position_changed = Signal(int)
    #: a load failed; the argument is the message shown
    load_failed = Signal(str)

    def __init__(self, settings: QSettings | None = None) -> None:
        super().__init__()
        self.settings = settings or open_settings()
        #: the strategy picked (shown once its timeline is built)
        self.strategy_name = DEFAULT_STRATEGY
        #: the parameters every strategy takes (word, align, heap_limit, pool_size)
        self.params: dict = {}
        #: each strategy's own parameters, by strategy name (-P on the command line)
        self.strategy_params: dict[str, dict] = {}
        self.message_box: QMessageBox | None = None
        self.setWindowTitle("heapscope")
        self.resize(1400, 900)

        self.model = ShowModel(self)
        self.player = Player(self)
        self.animator = StepAnimator(self.model, self)
        self.loader = Loader(self)
        self._make_actions()
        self.compare = CompareMode(self)
        self.heap_map = HeapMapWidget()
        self.structure_panel = StructurePanel()
        self.explain_panel = ExplainPanel()
        self.plots = PlotPanel()
        self.gauges = GaugePanel()
        self.bar = TimelineBar({"start": self.act_start, "back": self.act_back, "play": self.act_play,
                                "forward": self.act_forward, "end": self.act_end})
        self._make_menus()
        self._make_toolbar()
        self._make_layout()

        for view in self.views():
            view.bind(self.model)
        self._single_bound = True
        self.model.step_changed.connect(self.position_changed)
        self.player.advance.connect(self._advance)
        self.player.playing_changed.connect(self._playing_changed)
        self.player.speed_changed.connect(self.bar.show_speed)
        self.player.speed_changed.connect(self.animator.set_speed)
        self.animator.set_speed(self.player.speed)
        # the player waits while a step plays its events
        self.animator.started.connect(self.player.hold)
        self.animator.finished.connect(self.player.release)
        self.bar.seek_requested.connect(self._bar_seek)
        self.bar.speed_requested.connect(self.player.set_speed)
        self.loader.succeeded.connect(self._loaded)
        self.loader.failed.connect(self._load_failed)
        self.loader.cancelled.connect(self._load_cancelled)
        self.bar.show_speed(self.player.speed)
        self._sync_strategy_widgets()

    def views(self) -> list:
        """Every view subscribed to the model."""
        return [self.heap_map, self.structure_panel, self.explain_panel, self.gauges, self.plots,
                self.bar]

    def single_views(self) -> list:
        """The views of the one-strategy page (compare mode unbinds them)."""
        return [v for v in self.views() if v is not self.bar]

    def _bind_single_views(self, bound: bool) -> None:
        if bound == self._single_bound:
            return
        self._single_bound = bound
        for view in self.single_views():
            if bound:
                view.bind(self.model)
            else:
                view.unbind()

    # What is shown, read from the model.
    @property
    def trace(self):
        return self.model.trace

    @property
    def trace_source(self) -> str | None:
        return self.model.source

    @property
    def timeline(self):
        """The shown timeline (None before a trace is loaded)."""
        return self.model.timeline()

    @property
    def measures(self):
        return self.model.measures()

    # ================================================================ actions
    def _action(self, text: str, slot, keys=(), icon=None, tip: str = "") -> QAction:
        act = QAction(text, self)
        if keys:
            act.setShortcuts([QKeySequence(k) for k in keys])
        if icon is not None:
            act.setIcon(self.style().standardIcon(icon))
        tip = tip or text.replace("&", "").rstrip("…")
        if keys:
            tip += f" ({QKeySequence(keys[0]).toString(QKeySequence.NativeText)})"
        act.setToolTip(tip)
        act.triggered.connect(lambda checked=False: slot())
        self.addAction(act)   # the shortcut works even when no menu is open
        return act

    def _make_actions(self) -> None:
        S = QStyle
        self.act_open = self._action("&Open Trace…", self.ask_open, [QKeySequence.Open],
                                     S.SP_DialogOpenButton)
        self.act_workload = self._action("&Workload…", self.ask_workload, ["Ctrl+N"],
                                         S.SP_FileDialogNewFolder, "Generate a workload from the seeds")
        self.act_screenshot = self._action("Save &Screenshot…", self.ask_screenshot, ["Ctrl+S"])
        self.act_quit = self._action("&Quit", self.close, [QKeySequence.Quit])
        self.act_clear_recent = self._action("Clear Recent", self.clear_recent)
        self.act_fit = self._action("&Fit Heap to Window", self.heap_map_fit, ["0"])
        self.act_structure = self._action("&Structure View", self.toggle_structure, ["S"],
                                          tip="Show or hide the strategy's free structure")
        self.act_explain = self._action("&Explain Panel", self.toggle_explain, ["E"],
                                        tip="Show or hide the step's events in words")
        for act in (self.act_structure, self.act_explain):
            act.setCheckable(True)
            act.setChecked(True)
        self.act_play = self._action("&Play", self.toggle_play, ["Space"], S.SP_MediaPlay,
                                     "Play / pause")
        self.act_back = self._action("Step &Back", self.step_back, ["Left"], S.SP_MediaSeekBackward)
        self.act_forward = self._action("Step &Forward", self.step_forward, ["Right"],
                                        S.SP_MediaSeekForward)
        self.act_start = self._action("Jump to &Start", self.go_start, ["Home"], S.SP_MediaSkipBackward)
        self.act_end = self._action("Jump to &End", self.go_end, ["End"], S.SP_MediaSkipForward)
        self.act_event_forward = self._action("Next E&vent", self.event_forward, ["Shift+Right"],
                                              tip="One event of the step forward (micro-step)")
        self.act_event_back = self._action("Previous Eve&nt", self.event_back, ["Shift+Left"],
                                           tip="One event of the step back (micro-step)")
        self.act_goto = self._action("&Go to Step…", self.ask_go_to_step, ["Ctrl+G"])
        self.act_faster = self._action("Fas&ter", self.faster, ["+", "="])
        self.act_slower = self._action("Slo&wer", self.slower, ["-"])
        self.act_keys = self._action("&Keyboard Shortcuts", self.show_keys, ["F1"])
        self.act_about = self._action("&About heapscope", self.show_about)
        self.strategy_group = QActionGroup(self)
        self.strategy_actions: dict[str, QAction] = {}
        for i, name in enumerate(strategy_names()):
            keys = [f"Ctrl+{i + 1}"] if i < 9 else []
            act = self._action(f"{name} — {STRATEGIES[name].title}",
                               lambda name=name: self.set_strategy(name), keys)
            act.setCheckable(True)
            act.setChecked(name == self.strategy_name)
            self.strategy_group.addAction(act)
            self.strategy_actions[name] = act

    def _make_menus(self) -> None:
        mb = self.menuBar()
        file_menu = mb.addMenu("&File")
        file_menu.addAction(self.act_open)
        self.recent_menu = file_menu.addMenu("Open &Recent")
        self.recent_menu.aboutToShow.connect(self._fill_recent_menu)
        self._fill_recent_menu()
        self.examples_menu = self._make_examples_menu(file_menu)
        file_menu.addAction(self.act_workload)
        file_menu.addSeparator()
        file_menu.addAction(self.act_screenshot)
        file_menu.addSeparator()
        file_menu.addAction(self.act_quit)
        view_menu = mb.addMenu("&View")
        view_menu.addAction(self.act_fit)
        view_menu.addSeparator()
        view_menu.addAction(self.act_structure)
        view_menu.addAction(self.act_explain)
        play_menu = mb.addMenu("&Playback")
        for act in (self.act_play, self.act_back, self.act_forward, self.act_start, self.act_end,
                    self.act_goto):
            play_menu.addAction(act)
        play_menu.addSeparator()
        play_menu.addAction(self.act_event_back)
        play_menu.addAction(self.act_event_forward)
        play_menu.addSeparator()
        play_menu.addAction(self.act_faster)
        play_menu.addAction(self.act_slower)
        strategy_menu = mb.addMenu("&Strategy")
        for act in self.strategy_actions.values():
            strategy_menu.addAction(act)
        strategy_menu.addSeparator()
        strategy_menu.addAction(self.compare.act_toggle)
        strategy_menu.addAction(self.compare.act_pick)
        help_menu = mb.addMenu("&Help")
        help_menu.addAction(self.act_keys)
        help_menu.addAction(self.act_about)
        self.menus = {"file": file_menu, "view": view_menu, "playback": play_menu,
                      "strategy": strategy_menu, "help": help_menu}

    def _make_examples_menu(self, file_menu):
        """File > Open Example: the bundled traces, real programs among them."""
        menu = file_menu.addMenu("Open &Example")
        menu.setToolTipsVisible(True)
        for ex in bundled_examples():
            act = menu.addAction(ex.label)
            act.setToolTip(ex.how)
            act.triggered.connect(lambda checked=False, p=str(ex.path): self.open_trace(p))
        return menu

    def _make_toolbar(self) -> None:
        tb = QToolBar("Main")
        tb.setMovable(False)
        tb.setIconSize(QSize(22, 22))
        tb.setToolButtonStyle(Qt.ToolButtonTextBesideIcon)
        tb.addAction(self.act_open)
        tb.addAction(self.act_workload)
        tb.addSeparator()
        tb.addWidget(QLabel(" Strategy: "))
        self.strategy_box = QComboBox()
        self.strategy_box.setFocusPolicy(Qt.NoFocus)
        for name in strategy_names():
            self.strategy_box.addItem(name, name)
            self.strategy_box.setItemData(self.strategy_box.count() - 1, STRATEGIES[name].title,
                                          Qt.ToolTipRole)
        self.strategy_box.setCurrentText(self.strategy_name)
        self.strategy_box.activated.connect(
            lambda i: self.set_strategy(self.strategy_box.itemData(i)))
        tb.addWidget(self.strategy_box)
        self.compare_button = QToolButton()
        self.compare_button.setDefaultAction(self.compare.act_toggle)
        self.compare_button.setText("Compare")
        self.compare_button.setFocusPolicy(Qt.NoFocus)
        tb.addWidget(self.compare_button)
        pick = QToolButton()
        pick.setDefaultAction(self.compare.act_pick)
        pick.setText("…")
        pick.setFocusPolicy(Qt.NoFocus)
        tb.addWidget(pick)
        self.strategy_title = QLabel()
        self.strategy_title.setStyleSheet("color: #333; padding-left: 8px;")
        tb.addWidget(self.strategy_title)
        spacer = QWidget()
        spacer.setSizePolicy(spacer.sizePolicy().horizontalPolicy().Expanding,
                             spacer.sizePolicy().verticalPolicy())
        tb.addWidget(spacer)
        self.trace_label = QLabel()
        self.trace_label.setStyleSheet("padding-right: 8px;")
        tb.addWidget(self.trace_label)
        self.addToolBar(tb)
        self.toolbar = tb

    def _make_layout(self) -> None:
        # The explain panel under the map (its lines are long: it gets the
        # map's width), the structure view beside both, full height (a drawing
        # wants room).  Both collapse: drag a handle, or View > Structure View
        # / Explain Panel.
        self.left_split = left = QSplitter(Qt.Vertical)
        left.addWidget(self.heap_map)
        left.addWidget(self.explain_panel)
        left.setCollapsible(0, False)
        left.setStretchFactor(0, 3)
        left.setStretchFactor(1, 1)
        left.setSizes([420, 170])
        self.map_split = top = QSplitter(Qt.Horizontal)
        top.addWidget(left)
        top.addWidget(self.structure_panel)
        top.setCollapsible(0, False)
        top.setStretchFactor(0, 3)
        top.setStretchFactor(1, 2)
        top.setSizes([620, 460])
        top.splitterMoved.connect(self._sync_panel_actions)
        left.splitterMoved.connect(self._sync_panel_actions)
        split = QSplitter(Qt.Vertical)
        split.addWidget(top)
        split.addWidget(self.plots)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 1)
        split.setSizes([600, 180])
        split.setChildrenCollapsible(False)
        self.plots.setMinimumHeight(170)
        # On a short screen the six gauges scroll rather than squeeze their text.
        gauge_scroll = QScrollArea()
        gauge_scroll.setWidget(self.gauges)
        gauge_scroll.setWidgetResizable(True)
        gauge_scroll.setFrameShape(QFrame.NoFrame)
        gauge_scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        gauge_scroll.setFixedWidth(316)
        single = QWidget()
        middle = QHBoxLayout(single)
        middle.setContentsMargins(4, 4, 4, 0)
        middle.addWidget(split, 1)
        middle.addWidget(gauge_scroll)
        # one page for one strategy, one for compare mode; the bar drives both
        self.pages = QStackedWidget()
        self.pages.addWidget(single)
        self.pages.addWidget(self.compare.view)
        central = QWidget()
        box = QVBoxLayout(central)
        box.setContentsMargins(0, 0, 0, 0)
        box.setSpacing(0)
        box.addWidget(self.pages, 1)
        box.addWidget(self.bar)
        self.setCentralWidget(central)
        # Keys go to the window's actions: keep focus off the spin boxes.
        self.heap_map.plot_widget.setFocusPolicy(Qt.StrongFocus)
        self.heap_map.plot_widget.setFocus()

    # ================================================================ loading
    def ask_open(self) -> None:
        """File > Open: pick a .rep / .rep.gz and load it."""
        start = os.path.dirname(self.trace_source) if self.trace_source else ""
        path, _ = QFileDialog.getOpenFileName(self, "Open a malloc trace", start, TRACE_FILTER)
        if path:
            self.open_trace(path)

    def open_trace(self, path: str, position: int | None = None) -> None:
        """Read ``path`` and replay it through the current strategy, in the
        background, then show step ``position`` (default 0).  A bad file is
        reported and the current trace stays."""
        path = os.fspath(path)
        # .rep or ltrace/villoc output, told apart by content
        self._start(LoadRequest(os.path.basename(path), ReadTrace(path, is_file=True),
                                self.strategy_name, self.params_for(self.strategy_name), source=path,
                                keep_position=position))

    def load_workload(self, name: str, params: dict | None = None) -> None:
        """Generate workload ``name`` (in the background) and show it."""
        params = dict(params or {})
        label = name + (":" + ",".join(f"{k}={v}" for k, v in params.items()) if params else "")
        self._start(LoadRequest(label, lambda: traces.make_workload(name, **params),
                                self.strategy_name, self.params_for(self.strategy_name)))

    def load_spec(self, spec: str, position: int | None = None) -> None:
        """A path or a workload spec such as ``vo1989:steps=500`` (the command
        line); then show step ``position`` (default 0)."""
        if os.path.exists(spec) or spec.lower().endswith((".rep", ".gz")) or os.sep in spec:
            self.open_trace(spec, position)
        else:
            self._start(LoadRequest(spec, ReadTrace(spec),
                                    self.strategy_name, self.params_for(self.strategy_name),
                                    keep_position=position))

    def load_trace(self, trace, label: str | None = None) -> None:
        """Show a Trace already in memory."""
        self._start(LoadRequest(label or trace.name or "trace", lambda: trace,
                                self.strategy_name, self.params_for(self.strategy_name)))

    def set_strategy(self, name: str) -> None:
        """Replay the same trace through another strategy, keeping the step
        (in compare mode: leave it for that strategy)."""
        if name not in STRATEGIES:
            raise ValueError(f"unknown strategy {name!r}")
        if self.compare.active:
            self.strategy_name = name
            if self.trace is not None and not self.loader.busy:
                self.compare.leave()
                return
            self.compare.deactivate()    # nothing compared shows yet: just this one
        if self.loader.busy:
            # a load is under way: redo it with this strategy
            self._start(dataclasses.replace(self.loader.request, strategy=name,
                                            params=self.params_for(name)))
            return
        key = timeline_key(name, self.params_for(name))
        if self.model.shown == [key]:
            self._sync_strategy_widgets()
            return
        if self.trace is None:
            self.strategy_name = name
            self._sync_strategy_widgets()
            return
        if self.model.timeline_for(name, self.params_for(name)) is not None:
            # built before for this trace: show it at once, at the same step
            self.player.pause()
            self._show(name, key, self.model.position)
            return
        trace = self.trace
        self._start(LoadRequest(self._trace_label(), lambda: trace, name, self.params_for(name),
                                source=self.trace_source,
                                keep_position=self.timeline.position if self.timeline else 0))

    def params_for(self, name: str) -> dict:
        """The parameters strategy ``name`` is built with: the common ones and its own."""
        return {**self.params, **self.strategy_params.get(name, {})}

    @property
    def busy(self) -> bool:
        """A trace is being read or replayed."""
        return self.loader.busy or self.compare.busy

    def _start(self, request: LoadRequest) -> None:
        self.player.pause()
        if self.compare.active:
            # compare mode: read the trace here, then build its strategies at once
            self.compare.loader.cancel()
            request = dataclasses.replace(request, strategy=None)
            self.statusBar().showMessage(f"Reading {request.label}…")
        else:
            self.statusBar().showMessage(f"Replaying {request.label} through {request.strategy}…")
        self.loader.start(request)

    def _loaded(self, result) -> None:
        req = result.request
        if result.timeline is None:
            self.compare.build_trace(result)
            return
        model = self.model
        if result.trace is not model.trace or req.source != model.source:
            model.set_trace(result.trace, req.source)
        key = model.add_timeline(result.timeline)
        if req.source:
            self._remember_recent(req.source)
        position = req.keep_position if req.keep_position is not None else 0
        self._show(req.strategy, key, position)

    def _show(self, strategy: str, key, position: int) -> None:
        """Show the kept timeline ``key`` at ``position``: the views follow the model."""
        self.strategy_name = strategy
        self.model.show([key], position)
        self._shown_single()

    def _shown_single(self) -> None:
        """Titles, status and signals once one strategy shows."""
        self._sync_strategy_widgets()
        timeline = self.timeline
        self.setWindowTitle(f"heapscope — {self._trace_label()} — {self.strategy_name}")
        self.trace_label.setText(f"{self._trace_label()} · {timeline.n:,} steps")
        s = timeline.summary()
        self.statusBar().showMessage(
            f"{self._trace_label()} through {self.strategy_name}: waste {_pct(s.get('waste'))}, "
            f"utilisation at the end {_pct(s.get('utilisation'))}, mean search "
            f"{s.get('search_mean', 0):.2f}, {s.get('failed', 0)} failed; replayed in "
            f"{timeline.wall_seconds:.2f} s")
        self.timeline_changed.emit()
        if self.timeline.fault is not None:
            self._show_fault(self.timeline.fault)

    def _show_fault(self, fault) -> None:
        """A user strategy broke during the replay: the timeline stops before
        that step; say what happened, in terms of the user's code."""
        n = self.timeline.n
        self.statusBar().showMessage(f"{self.strategy_name} stopped at step {fault.step}: "
                                     f"{fault.message}")
        self._message(QMessageBox.Warning, f"{self.strategy_name} stopped at step {fault.step}",
                      f"The replay stopped at step {fault.step}"
                      + (f" ({fault.operation})" if fault.operation else "")
                      + f": in {fault.where()}.",
                      f"{fault.message}\n\nThe heap shown is the one after step {n}, "
                      f"before the operation that failed.")

    def _load_failed(self, exc: Exception, request) -> None:
        self._sync_strategy_widgets()
        if isinstance(exc, (traces.TraceError, ParamError, UserStrategyError)):
            text = str(exc)           # "path:line: message", "tlsf: pool_size=... is too large"
        else:
            text = f"{type(exc).__name__}: {exc}"
        what = request.source or request.label
        self.statusBar().showMessage(f"Could not load {what}", 8000)
        self.show_error(f"Cannot load {os.path.basename(what)}",
                        f"heapscope could not load {what}.",
                        text)
        self.load_failed.emit(text)

    def _load_cancelled(self, request) -> None:
        self._sync_strategy_widgets()
        self.statusBar().showMessage(f"Cancelled: still showing "
                                     f"{self._trace_label() if self.trace else 'nothing'}", 8000)

    def _trace_label(self) -> str:
        return self.model.label or "trace"

    def _sync_strategy_widgets(self) -> None:
        name = self.strategy_name
        self.strategy_box.setCurrentIndex(self.strategy_box.findData(name))
        extra = ", ".join(f"{k.replace('_', ' ')} {_param_text(v)}" for k, v in self.params_for(name).items())
        self.strategy_title.setText(STRATEGIES[name].title + (f"  [{extra}]" if extra else ""))
        if self.compare.active and self.compare.view.shown_rows():
            self.strategy_title.setText(self.compare.title())    # rows still show
        self.strategy_actions[name].setChecked(True)

    # ------------------------------------------------------------ recent files
    def recent_files(self) -> list[str]:
        value = self.settings.value("recent_files", [])
        if isinstance(value, str):
            value = [value]
        return [str(v) for v in (value or [])]

    def _remember_recent(self, path: str) -> None:
        path = os.path.abspath(path)
        files = [path] + [p for p in self.recent_files() if p != path]
        self.settings.setValue("recent_files", files[:MAX_RECENT])
        self.settings.sync()

    def clear_recent(self) -> None:
        self.settings.setValue("recent_files", [])
        self.settings.sync()

    def _fill_recent_menu(self) -> None:
        menu = self.recent_menu
        menu.clear()
        files = self.recent_files()
        for i, path in enumerate(files):
            act = menu.addAction(f"&{i + 1} {os.path.basename(path)}")
            act.setToolTip(path)
            act.setData(path)
            act.triggered.connect(lambda checked=False, p=path: self.open_trace(p))
        if not files:
            menu.addAction("(none)").setEnabled(False)
        menu.addSeparator()
        menu.addAction(self.act_clear_recent)

    # ============================================================ navigation
    def seek(self, position: int) -> None:
        """Show the heap after ``position`` operations (clamped to 0..n)."""
        self.animator.finish()
        self.model.seek(position)

    def step_forward(self) -> None:
        """The next step: it plays its events at slow speeds (gui/step_animator.py)."""
        self.animator.step_to(self.model.position + 1)

    def step_back(self) -> None:
        """The step before, as it stands: nothing plays backwards."""
        self.animator.finish()
        self.model.seek(self.model.position - 1)

    def event_forward(self) -> None:
        """Micro-step: the next event of the step, or the next step's first."""
        if self.timeline is not None:
            self.animator.micro_forward()

    def event_back(self) -> None:
        """Micro-step: the event before, or the previous step's last."""
        if self.timeline is not None:
            self.animator.micro_back()

    def go_start(self) -> None:
        self.seek(0)

    def go_end(self) -> None:
        self.seek(self.model.n)

    def ask_go_to_step(self) -> None:
        if self.timeline is None:
            return
        n = self.model.n
        value, ok = QInputDialog.getInt(self, "Go to step", f"Step (0 – {n:,}):",
                                        self.model.position, 0, n)
        if ok:
            self.seek(value)

    def toggle_play(self) -> None:
        if self.timeline is None:
            return
        if not self.player.playing and self.model.position >= self.model.n:
            self.seek(0)      # play again from the start
        self.player.toggle()

    def faster(self) -> None:
        self.player.faster()

    def slower(self) -> None:
        self.player.slower()

    def heap_map_fit(self) -> None:
        if self.compare.active:
            self.compare.view.fit_all()
        else:
            self.heap_map.fit()

    def toggle_structure(self) -> None:
        if self.compare.active:
            self.compare.view.set_structures_visible(self.act_structure.isChecked())
            return
        self._show_panel(self.structure_panel, self.act_structure.isChecked())

    def toggle_explain(self) -> None:
        self._show_panel(self.explain_panel, self.act_explain.isChecked())

    def _show_panel(self, panel, visible: bool) -> None:
        panel.setVisible(visible)
        if visible:
            split = self.map_split if panel is self.structure_panel else self.left_split
            sizes = split.sizes()
            if sizes[1] < 100:        # it had been dragged shut: open it again
                total = sum(sizes)
                split.setSizes([total * 3 // 5, total - total * 3 // 5])

    def _sync_panel_actions(self, *_) -> None:
        """A splitter dragged shut unticks its panel's menu item."""
        for act, panel, size in ((self.act_structure, self.structure_panel, self.map_split.sizes()[1]),
                                 (self.act_explain, self.explain_panel, self.left_split.sizes()[1])):
            act.setChecked(panel.isVisibleTo(self) and size > 0)

    def _advance(self, steps: int) -> None:
        if self.timeline is None:
            self.player.pause()
            return
        self.animator.step_to(self.model.position + steps)
        if self.model.position >= self.model.n:
            self.player.pause()

    def _bar_seek(self, position: int) -> None:
        # the bar's request already moved the model: give the keys back to the window
        self.heap_map.plot_widget.setFocus()

    def _playing_changed(self, playing: bool) -> None:
        self.model.playing = playing
        self.act_play.setText("&Pause" if playing else "&Play")
        self.act_play.setIcon(self.style().standardIcon(
            QStyle.SP_MediaPause if playing else QStyle.SP_MediaPlay))

    # =============================================================== dialogs
    def show_error(self, title: str, text: str, detail: str = "") -> QMessageBox:
        """A window-modal error box that does not block the caller (tests read
        :attr:`message_box`)."""
        return self._message(QMessageBox.Critical, title, text, detail)

    def _message(self, icon, title: str, text: str, detail: str = "") -> QMessageBox:
        if self.message_box is not None:
            self.message_box.close()
        box = QMessageBox(icon, title, text, QMessageBox.Ok, self)
        if detail:
            box.setInformativeText(detail)
        box.setAttribute(Qt.WA_DeleteOnClose)
        box.finished.connect(lambda _=0, b=box: self._message_closed(b))
        self.message_box = box
        box.open()
        return box

    def _message_closed(self, box) -> None:
        if self.message_box is box:
            self.message_box = None

    def ask_workload(self) -> None:
        dialog = WorkloadDialog(traces.WORKLOADS, self)
        if dialog.exec():
            name, params = dialog.choice()
            self.load_workload(name, params)

    def ask_screenshot(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Save a screenshot", "heapscope.png",
                                              "PNG images (*.png)")
        if path:
            self.grab().save(path)
            self.statusBar().showMessage(f"Saved {path}", 5000)

    def show_keys(self) -> None:
        rows = []
        for act in (self.act_play, self.act_back, self.act_forward, self.act_event_back,
                    self.act_event_forward, self.act_start, self.act_end, self.act_goto,
                    self.act_faster, self.act_slower, self.act_fit, self.act_structure,
                    self.act_explain, self.compare.act_toggle, self.compare.act_pick,
                    self.act_open, self.act_workload):
            keys = ", ".join(k.toString(QKeySequence.NativeText) for k in act.shortcuts())
            rows.append(f"<tr><td><b>{keys}</b></td><td>&nbsp;&nbsp;{act.text().replace('&', '')}</td></tr>")
        rows.append("<tr><td><b>wheel / drag</b></td><td>&nbsp;&nbsp;zoom / pan the heap map</td></tr>")
        rows.append("<tr><td><b>click a plot</b></td><td>&nbsp;&nbsp;go to that step</td></tr>")
        rows.append("<tr><td><b>click a block</b></td><td>&nbsp;&nbsp;select it on the map and in "
                    "the structure view</td></tr>")
        rows.append("<tr><td><b>click an event</b></td><td>&nbsp;&nbsp;select the block it names</td></tr>")
        self._message(QMessageBox.Information, "Keyboard shortcuts",
                      "<table>" + "".join(rows) + "</table>")

    def show_about(self) -> None:
        self._message(QMessageBox.Information, "About heapscope",
                      "<h3>heapscope</h3><p>Replays malloc/free traces through classic allocator "
                      "strategies and shows, step by step, what each does to the heap.</p>"
                      "<p>Strategies: " + ", ".join(
                          f"<br>• <b>{n}</b>: {STRATEGIES[n].title}" for n in strategy_names()) +
                      "</p><p>Colours: Okabe &amp; Ito's colour-blind-safe palette.</p>")

    # =============================================================== closing
    def closeEvent(self, event) -> None:
        self.animator.finish()
        self.player.pause()
        self.loader.cancel()
        self.loader.wait()
        self.compare.loader.cancel()
        super().closeEvent(event)


def _pct(x) -> str:
    if x is None or x != x:
        return "n/a"
    return f"{100 * x:.1f} %"


def _param_text(value) -> str:
    if isinstance(value, bool):
        return "on" if value else "off"
    return f"{value:,}" if isinstance(value, int) else str(value)
