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
import html
import os
import re

from PySide6.QtCore import QSettings, QSize, Qt, Signal
from PySide6.QtGui import QAction, QActionGroup, QFont, QKeySequence
from PySide6.QtWidgets import (QComboBox, QDialog, QDialogButtonBox, QFileDialog, QFrame, QHBoxLayout,
                               QInputDialog, QLabel,
                               QMainWindow, QMessageBox, QScrollArea, QSplitter, QStackedWidget,
                               QStyle, QToolBar, QToolButton, QVBoxLayout, QWidget)

from .. import traces
from ..allocators.isolation import DEFAULT_TIME_LIMIT, needs_worker
from ..allocators.parallel import BuildFailed
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
from .predict_bar import PredictBar
from .predict_mode import PredictMode
from .show_model import ShowModel, timeline_key
from .step_animator import StepAnimator
from .structure_panel import StructurePanel
from .theme import FontScaler, Presentation, THEMES, qt_palette, tinted_icon
from .timeline_bar import TimelineBar
from .user_code_watch import UserCodeWatch
from .workload_dialog import WorkloadDialog

#: the gauge column's width and the plots' least height at text scale 1
GAUGE_COLUMN_WIDTH = 316
PLOTS_MIN_HEIGHT = 64
MAP_MIN_HEIGHT = 120

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
        #: seconds a strategy of your own may go without an answer (--time-limit):
        #: in its worker while it is built, and in this process while a step is shown
        self.time_limit: float | None = DEFAULT_TIME_LIMIT
        self.message_box: QMessageBox | None = None
        self.setWindowTitle("heapscope")
        self.resize(1400, 900)
        #: presenter mode, theme and text size (gui/theme.py)
        self.presentation = Presentation(
            presenter=_setting_bool(self.settings.value("presenter", False)),
            theme_name=str(self.settings.value("theme", "light")) if str(
                self.settings.value("theme", "light")) in THEMES else "light",
            screen_height=_screen_height(self))
        self.font_scaler = FontScaler()

        self.model = ShowModel(self)
        self.player = Player(self)
        self.animator = StepAnimator(self.model, self)
        self.loader = Loader(self)
        # a strategy of your own that loops in this process (a seek, a redraw)
        # is stopped at the time limit (gui/user_code_watch.py)
        self.user_watch = UserCodeWatch(self, lambda: self.time_limit, self._shown_user_classes)
        self.user_watch.stopped.connect(self._user_code_stopped)
        self.model.shown_changed.connect(self.user_watch.refresh)
        #: the last built-in strategy shown alone: what shows when one of yours is stopped
        self._last_builtin = DEFAULT_STRATEGY
        #: predict-the-block, per row (gui/predict_mode.py)
        self.predict = PredictMode(self.model, self)
        self.predict.play = self.animator.step_to      # an answered step plays its events
        self._make_actions()
        self.compare = CompareMode(self)
        self.heap_map = HeapMapWidget()
        self.structure_panel = StructurePanel()
        self.explain_panel = ExplainPanel()
        self.plots = PlotPanel()
        self.gauges = GaugePanel()
        self.bar = TimelineBar({"start": self.act_start, "back": self.act_back, "play": self.act_play,
                                "forward": self.act_forward, "end": self.act_end})
        self.predict_bar = PredictBar(self.predict.session(0), self.act_predict_grow,
                                      self.act_predict_reveal)
        self._make_menus()
        self._make_toolbar()
        self._make_layout()

        self.structure_panel.font_scaler = self.font_scaler
        for view in self.views():
            view.bind(self.model)
        self._single_bound = True
        self.model.step_changed.connect(self.position_changed)
        self.heap_map.block_clicked.connect(lambda addr: self.predict_click(0, addr))
        self.structure_panel.block_clicked.connect(lambda addr: self.predict_click(0, addr))
        self.predict.active_changed.connect(self.act_predict.setChecked)
        self.predict.question_changed.connect(self._question_changed)
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
        self.apply_presentation(self.presentation)

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
            act.setProperty("standard_icon", int(icon))
        tip = tip or _plain(text).rstrip("…")
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
        self.act_export = self._action("&Export…", self.ask_export, ["Ctrl+E"],
                                       tip="Save the map, a view, the gauges or the window as PNG or "
                                           "SVG, the measures as CSV or JSON, steps as GIF or MP4")
        self.act_screenshot = self._action("Save &Screenshot…", self.ask_screenshot, ["Ctrl+S"])
        self.act_quit = self._action("&Quit", self.close, ["Ctrl+Q"])
        self.act_clear_recent = self._action("Clear Recent", self.clear_recent, ["Ctrl+Shift+Del"])
        self.act_fit = self._action("&Fit Heap to Window", self.heap_map_fit, ["0"])
        self.act_structure = self._action("&Structure View", self.toggle_structure, ["S"],
                                          tip="Show or hide the strategy's free structure")
        self.act_explain = self._action("&Explain Panel", self.toggle_explain, ["E"],
                                        tip="Show or hide the step's events in words")
        for act in (self.act_structure, self.act_explain):
            act.setCheckable(True)
            act.setChecked(True)
        self.act_plots = self._action("P&lots", self.toggle_plots, ["L"],
                                      tip="Show or hide the plots over time")
        self.act_plots.setCheckable(True)
        self.act_plots.setChecked(True)
        self.act_presenter = self._action("&Presenter Mode", self.toggle_presenter, ["F5"],
                                          tip="Large text, thick outlines, high contrast: for a projector")
        self.act_dark = self._action("&Dark Theme", self.toggle_dark, ["D"],
                                     tip="White on black (the heap keeps its colour-blind-safe colours)")
        for act, on in ((self.act_presenter, self.presentation.presenter),
                        (self.act_dark, self.presentation.theme_name == "dark")):
            act.setCheckable(True)
            act.setChecked(on)
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
        self._make_predict_actions()
        self.act_keys = self._action("&Keyboard Shortcuts", self.show_keys, ["F1"])
        self.act_about = self._action("&About heapscope", self.show_about, ["Shift+F1"])
        self.strategy_group = QActionGroup(self)
        self.strategy_actions: dict[str, QAction] = {}
        for i, name in enumerate(strategy_names()):
            # '&&' shows one '&' (K&R, AT&T); a lone one would be a mnemonic
            act = self._action(f"{name} — {STRATEGIES[name].title}".replace("&", "&&"),
                               lambda name=name: self.set_strategy(name), _strategy_keys(i))
            act.setCheckable(True)
            act.setChecked(name == self.strategy_name)
            self.strategy_group.addAction(act)
            self.strategy_actions[name] = act

    def _make_predict_actions(self) -> None:
        self.act_predict = self._action("&Predict Mode", self.toggle_predict, ["P"],
                                        tip="Stop before each malloc: click the block the policy will take")
        self.act_predict.setCheckable(True)
        self.act_predict_grow = self._action("The Heap Will &Grow", self.answer_grow, ["G"],
                                             tip="Predict mode: answer that no free block fits")
        self.act_predict_reveal = self._action("Show the &Answer", self.reveal_answer, ["A"],
                                               tip="Predict mode: play the step without an answer")
        self.act_predict_reset = self._action("&Reset Score", self.reset_predict_score, ["Shift+P"])

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
        file_menu.addAction(self.act_export)
        file_menu.addAction(self.act_screenshot)
        file_menu.addSeparator()
        file_menu.addAction(self.act_quit)
        view_menu = mb.addMenu("&View")
        view_menu.addAction(self.act_fit)
        view_menu.addSeparator()
        view_menu.addAction(self.act_structure)
        view_menu.addAction(self.act_explain)
        view_menu.addAction(self.act_plots)
        view_menu.addSeparator()
        view_menu.addAction(self.act_presenter)
        view_menu.addAction(self.act_dark)
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
        predict_menu = mb.addMenu("P&redict")
        for act in (self.act_predict, self.act_predict_grow, self.act_predict_reveal,
                    self.act_predict_reset):
            predict_menu.addAction(act)
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
                      "predict": predict_menu, "strategy": strategy_menu, "help": help_menu}

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
        self.plots.setMinimumHeight(PLOTS_MIN_HEIGHT)
        self.main_split = split
        # The gauges: a column beside the map where the screen is tall
        # enough for all six, else a compact strip across the window above
        # the timeline (_adapt_layout); the column scrolls only while a
        # resize is under way.
        self.gauge_scroll = gauge_scroll = QScrollArea()
        gauge_scroll.setWidget(self.gauges)
        gauge_scroll.setWidgetResizable(True)
        gauge_scroll.setFrameShape(QFrame.NoFrame)
        gauge_scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        gauge_scroll.setFixedWidth(GAUGE_COLUMN_WIDTH)
        self.gauge_strip = QWidget()
        strip_box = QHBoxLayout(self.gauge_strip)
        strip_box.setContentsMargins(4, 2, 4, 0)
        self.gauge_strip.hide()
        middle = QHBoxLayout()
        middle.setContentsMargins(4, 4, 4, 0)
        middle.addWidget(split, 1)
        middle.addWidget(gauge_scroll)
        # one page for one strategy (its predict band and gauge strip too),
        # one for compare mode (a band per row); the timeline bar serves both
        single = QWidget()
        single_box = QVBoxLayout(single)
        single_box.setContentsMargins(0, 0, 0, 0)
        single_box.setSpacing(0)
        single_box.addWidget(self.predict_bar)
        single_box.addLayout(middle, 1)
        single_box.addWidget(self.gauge_strip)
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

    # =========================================================== presentation
    def apply_presentation(self, pres: Presentation) -> None:
        """Show the window as ``pres`` says: the application's font and
        palette, every view's text sizes, outlines and colours, and the
        layout that fits (gauges in a column or a strip)."""
        from PySide6.QtWidgets import QApplication
        self.presentation = pres
        app = QApplication.instance()
        font = QFont(app.font())
        font.setPointSizeF(pres.body_pt)
        app.setFont(font)
        app.setPalette(qt_palette(pres.theme))
        self.font_scaler.apply(self, pres.text_scale)
        for view in (self.heap_map, self.plots, self.gauges, self.bar, self.explain_panel,
                     self.structure_panel, self.compare.view):
            view.apply_presentation(pres)
        self._apply_predict_presentation(pres)
        k = pres.text_scale
        self.gauge_scroll.setFixedWidth(round(GAUGE_COLUMN_WIDTH * k))
        self.toolbar.setIconSize(QSize(round(22 * k), round(22 * k)))
        self.strategy_title.setStyleSheet(f"color: {pres.muted}; padding-left: 8px;")
        for act, on in ((self.act_presenter, pres.presenter), (self.act_dark, pres.theme_name == "dark")):
            act.setChecked(on)
        self._theme_icons()
        self._adapt_layout()

    def _theme_icons(self) -> None:
        """The standard icons, in white on the dark theme."""
        for act in self.actions():
            which = act.property("standard_icon")
            if which is None:
                continue
            icon = self.style().standardIcon(QStyle.StandardPixmap(which))
            if self.presentation.theme_name == "dark":
                icon = tinted_icon(icon, self.presentation.theme.ink)
            act.setIcon(icon)

    def set_presenter(self, on: bool) -> None:
        """Presenter mode on or off (F5), remembered in the settings."""
        self.settings.setValue("presenter", bool(on))
        self.apply_presentation(self.presentation.with_(presenter=bool(on)))

    def set_theme(self, name: str) -> None:
        """The light or the dark theme (D), remembered in the settings."""
        if name not in THEMES:
            raise ValueError(f"unknown theme {name!r}; known: {', '.join(THEMES)}")
        self.settings.setValue("theme", name)
        self.apply_presentation(self.presentation.with_(theme_name=name))

    def toggle_presenter(self) -> None:
        self.set_presenter(not self.presentation.presenter)

    def toggle_dark(self) -> None:
        self.set_theme("light" if self.presentation.theme_name == "dark" else "dark")

    def _screen_changed(self, *_) -> None:
        height = _screen_height(self)
        if height != self.presentation.screen_height:
            self.apply_presentation(self.presentation.with_(screen_height=height))

    def showEvent(self, event) -> None:
        super().showEvent(event)
        handle = self.windowHandle()
        if handle is not None and not getattr(self, "_screen_hooked", False):
            handle.screenChanged.connect(self._screen_changed)
            self._screen_hooked = True
            self._screen_changed()

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._adapt_layout()

    def set_window_size(self, width: int, height: int) -> None:
        """Resize to ``width`` x ``height``, arranging the gauges for that
        height first (a resize cannot go below the minimum of the
        arrangement shown; ``heapscope render`` and the tests use this)."""
        chrome = self.height() - self.centralWidget().height()
        self._adapt_layout(height - chrome)
        self.resize(width, height)
        self._adapt_layout()

    def _adapt_layout(self, central_height: int | None = None) -> None:
        """Gauges in a column when the window is tall enough for all six,
        else in a strip above the timeline (a 1280 x 720 projector)."""
        central = self.centralWidget()
        if central is None:
            return
        if central_height is None:
            central_height = central.height()
        available = central_height - self.bar.sizeHint().height() - 8
        strip = self.gauges.column_height() > available
        self._compact(strip)
        if strip == (self.gauges.arrangement == self.gauges.STRIP):
            return
        # the map and the structure view first: the plots and the explain
        # panel get what is left (a splitter drag gives them more)
        total = sum(self.main_split.sizes())
        self.main_split.setSizes([round(total * (0.8 if strip else 0.75)), round(total * (0.2 if strip else 0.25))])
        if strip:
            self.gauge_scroll.takeWidget()
            self.gauges.set_arrangement(self.gauges.STRIP)
            self.gauge_strip.layout().addWidget(self.gauges)
            self.gauge_scroll.hide()
            self.gauge_strip.show()
        else:
            self.gauge_strip.layout().removeWidget(self.gauges)
            self.gauges.set_arrangement(self.gauges.COLUMN)
            self.gauge_scroll.setWidget(self.gauges)
            self.gauge_strip.hide()
            self.gauge_scroll.show()
        self.gauges.show()

    def _compact(self, compact: bool) -> None:
        """On a short screen (gauges in a strip) the structure view's hover
        line goes (the map's hover line says the same) and, in presenter
        mode, the status bar.  The plots and the map keep small minimums in
        every arrangement, so that a window dragged shorter reaches the
        height where the gauges become a strip."""
        self.plots.setMinimumHeight(PLOTS_MIN_HEIGHT)
        self.heap_map.plot_widget.setMinimumHeight(MAP_MIN_HEIGHT)
        self.structure_panel.facts.setVisible(not compact)
        self.plots.set_compact(compact)
        self.heap_map.legend.set_compact(compact)
        # Presenter mode on a short screen has no room for readable plots:
        # they give way to the map (L shows them again).
        crowded = compact and self.presentation.presenter
        self.predict_bar.set_compact(crowded)
        self.structure_panel.set_compact(crowded)
        if crowded != getattr(self, "_crowded", False):
            self._crowded = crowded
            self.set_plots_visible(not crowded)
        self.statusBar().setVisible(not (compact and self.presentation.presenter))

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
        if traces.names_a_file(spec):     # a bundled trace's or workload's name wins over a file
            self.open_trace(spec, position)
        else:
            self._start(LoadRequest(spec, ReadTrace(spec),
                                    self.strategy_name, self.params_for(self.strategy_name),
                                    keep_position=position))

    def load_trace(self, trace, label: str | None = None) -> None:
        """Show a Trace already in memory."""
        self._start(LoadRequest(label or trace.name or "trace", lambda: trace,
                                self.strategy_name, self.params_for(self.strategy_name)))

    def show_built(self, trace, timeline, source: str | None = None, position: int = 0,
                   label: str | None = None) -> None:
        """Show a timeline already built (``heapscope render`` builds it in its
        own thread of control, no loader): the trace, then its step
        ``position``."""
        if self.model.trace is not trace:
            self.model.set_trace(trace, source, label or "")
        key = self.model.add_timeline(timeline)
        self._show(timeline.strategy_name, key, position)

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
        request = dataclasses.replace(request, time_limit=self.time_limit)
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
        # watched from its first seek on, if it is a strategy of your own
        self.user_watch.refresh([STRATEGIES.get(strategy)])
        self.strategy_name = strategy
        self.model.show([key], position)
        self._shown_single()

    def _shown_user_classes(self) -> list:
        """The classes of the strategies of your own shown now (the watch's)."""
        return [STRATEGIES.get(key[0]) for key in self.model.shown if needs_worker(key[0])]

    def _user_code_stopped(self, name: str, where: str) -> None:
        """A strategy of your own held the window past the time limit and was
        stopped mid-step: its heap is not to be trusted any more.  Shown alone,
        it makes way for the last built-in shown (its timeline is dropped: picked
        again, it is built afresh); the dialog says what happened."""
        self.player.pause()
        step = self.model.position
        text = f"no answer in {self.time_limit:g} s at step {step}, in {where}"
        if not self.compare.active and self.strategy_name == name:
            dropped = self.model.shown
            self.set_strategy(self._last_builtin)
            for key in dropped:
                if key not in self.model.shown:
                    self.model.forget_timeline(key)
        self.statusBar().showMessage(f"{name} stopped: {text}", 8000)
        self.show_error(f"{name} stopped", f"{name}'s code gave {text}; heapscope stopped it.",
                        "Your code ran in the window's own process here (seeking a step, drawing "
                        "it) and did not return within the time limit (--time-limit SECONDS).")

    def _shown_single(self) -> None:
        """Titles, status and signals once one strategy shows."""
        if not needs_worker(self.strategy_name):
            self._last_builtin = self.strategy_name
        self._sync_strategy_widgets()
        timeline = self.timeline
        self.setWindowTitle(f"heapscope — {self._trace_label()} — {self.strategy_name}")
        self.trace_label.setText(f"{self._trace_label()} · {timeline.n:,} steps")
        self.statusBar().showMessage(self.summary_text())
        self.timeline_changed.emit()
        if self.timeline.fault is not None:
            self._show_fault(self.timeline.fault)

    def summary_text(self, timed: bool = True) -> str:
        """The status bar's line: the whole replay's measures (and, when
        ``timed``, how long the replay took, which differs run to run)."""
        timeline = self.timeline
        s = timeline.summary()
        text = (f"{self._trace_label()} through {self.strategy_name}: waste {_pct(s.get('waste'))}, "
                f"utilisation at the end {_pct(s.get('utilisation'))}, mean search "
                f"{s.get('search_mean', 0):.2f}, {s.get('failed', 0)} failed")
        return text + (f"; replayed in {timeline.wall_seconds:.2f} s" if timed else "")

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
        if isinstance(exc, BuildFailed):
            # a strategy of your own stopped in its worker: looped past the time
            # limit, exited or died; what showed before stays shown
            name = request.strategy
            self.statusBar().showMessage(f"{name} stopped: still showing "
                                         f"{self._trace_label() if self.trace else 'nothing'}", 8000)
            self.show_error(f"{name} stopped", f"{name} gave no timeline of "
                            f"{request.label}: {exc.error}.", exc.details)
            self.load_failed.emit(str(exc))
            return
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
        """The next step: it plays its events at slow speeds (gui/step_animator.py).
        In predict mode a malloc asks first, and → on an open question shows
        the answer."""
        if self.predict.pending is not None:
            self.predict.reveal()
            return
        position = self.model.position
        target = self.predict.stop_before(position, position + 1)
        if target != position:
            self.animator.step_to(target)

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
        if self.predict.pending is not None:
            self.predict.reveal()         # Space on an open question: show the answer
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

    def toggle_plots(self) -> None:
        self.set_plots_visible(self.act_plots.isChecked())

    def set_plots_visible(self, visible: bool) -> None:
        """Show or hide the plots over time (L)."""
        self.plots.setVisible(visible)
        self.act_plots.setChecked(visible)

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
        if self.timeline is None or self.predict.pending is not None:
            self.player.pause()
            return
        position = self.model.position
        target = self.predict.stop_before(position, position + steps)
        if target < position + steps:
            self.player.pause()           # a question: wait for the answer
            return
        self.animator.step_to(target)
        if self.model.position >= self.model.n:
            self.player.pause()

    def _bar_seek(self, position: int) -> None:
        # the bar's request already moved the model: give the keys back to the window
        self.heap_map.plot_widget.setFocus()

    def _playing_changed(self, playing: bool) -> None:
        self.model.playing = playing
        self.act_play.setText("&Pause" if playing else "&Play")
        self.act_play.setProperty("standard_icon",
                                  int(QStyle.SP_MediaPause if playing else QStyle.SP_MediaPlay))
        self._theme_icons()

    # ================================================================ predict
    def set_predict(self, on: bool, rows=None) -> None:
        """Predict mode on or off for ``rows`` of the window (default: every
        shown row; one today, several in compare mode)."""
        self.predict.set_active(on, rows)
        if on:
            self.player.pause()
            self.statusBar().showMessage("Predict mode: → or Space plays on to the next malloc, "
                                         "then click the block the policy will take", 8000)

    def toggle_predict(self) -> None:
        self.set_predict(not self.predict.active)

    def answer_grow(self) -> None:
        """Predict mode: the heap will grow (G)."""
        for s in self.predict.active_sessions():
            if s.pending is not None and s.guess is None:
                self.predict.answer(s.row, "grow")

    def reveal_answer(self) -> None:
        self.predict.reveal()

    def reset_predict_score(self) -> None:
        for s in self.predict.sessions.values():
            s.reset()

    def predict_click(self, row: int, addr) -> None:
        """A click on a block of row ``row`` (its heap map or structure view):
        an answer while a question is open.  Compare mode connects each
        row's views here with the row's number."""
        if self.predict.pending is not None and addr is not None and addr >= 0:
            self.predict.answer(row, addr)

    def _question_changed(self, step) -> None:
        """While a question is open the map and the structure view show the
        heap before the malloc without the last step's marks (its search
        numbers would be noise, or a hint); the policy's pointers stay."""
        for view in (self.heap_map, self.structure_panel):
            view.set_quiet(step is not None)

    def _apply_predict_presentation(self, pres) -> None:
        self.predict_bar.apply_presentation(pres)
        compare = getattr(self, "compare", None)
        for row in compare.view.rows if compare is not None else ():
            if row.predict_bar is not None:
                row.predict_bar.apply_presentation(pres)

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

    def ask_export(self) -> None:
        """File > Export: the dialog, then the export with its progress."""
        from .export_dialog import ExportDialog
        if self.timeline is None:
            self.show_error("Nothing to export", "Open a trace first.")
            return
        self.player.pause()
        folder = str(self.settings.value("export_folder", "") or "")
        dialog = ExportDialog(self.model.n, self.model.position, folder, self)
        if dialog.exec():
            request = dialog.request()
            self.settings.setValue("export_folder", os.path.dirname(os.path.abspath(request.path)))
            self.run_export(request)

    def run_export(self, request) -> str | None:
        """Do an :class:`~gui.export.ExportRequest`, with a progress dialog
        (shown after half a second) that can cancel it; the line saying what
        was written, or None when it failed or was cancelled (a message box
        says why)."""
        from PySide6.QtWidgets import QProgressDialog
        from . import export
        position = self.model.position
        progress = QProgressDialog("Exporting…", "Cancel", 0, 100, self)
        progress.setWindowTitle("Export")
        progress.setWindowModality(Qt.WindowModal)
        progress.setMinimumDuration(500)
        progress.setAutoClose(False)

        def report(done, total):
            progress.setMaximum(total)
            progress.setValue(done)
            progress.setLabelText(f"Exporting step {done:,} of {total:,}…")

        try:
            text = export.export(self, request, report, progress.wasCanceled)
        except export.ExportCancelled as exc:
            self.statusBar().showMessage(f"Export cancelled: {exc}", 8000)
            return None
        except (export.ExportError, OSError) as exc:
            self.show_error("Cannot export", f"heapscope could not export to {request.path}.", str(exc))
            return None
        finally:
            progress.close()
            progress.deleteLater()
            if request.steps is not None and self.model.position != position:
                self.seek(position)          # back where the teacher was
        self.statusBar().showMessage(text[0].upper() + text[1:], 8000)
        return text

    def ask_screenshot(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Save a screenshot", "heapscope.png",
                                              "PNG images (*.png)")
        if path:
            from . import export
            export.save_png(self, path)
            self.statusBar().showMessage(f"Saved {path}", 5000)

    def key_rows(self) -> list[tuple[str, str, list[str]]]:
        """(menu, command, keys) for every command with a key, read from the
        menus' actions (their shortcuts as shown in the menus), so the F1
        list cannot fall out of date; then the window's actions that are in
        no menu."""
        rows, seen = [], set()

        def walk(menu, title):
            for act in menu.actions():
                if act.menu() is not None:
                    walk(act.menu(), title)
                elif act.shortcuts() and id(act) not in seen:
                    seen.add(id(act))
                    # a strategy by its name alone: its original is in the menu
                    rows.append((title, _plain(act.text()).rstrip("…").split(" — ")[0], _key_texts(act)))

        for menu in self.menus.values():
            walk(menu, _plain(menu.title()))
        for act in self.actions():
            if act.shortcuts() and id(act) not in seen:
                seen.add(id(act))
                rows.append(("", _plain(act.text()), _key_texts(act)))
        return rows

    #: what the mouse does, for the F1 list
    MOUSE_ROWS = (("wheel / drag", "zoom / pan the heap map"),
                  ("click a plot", "go to that step"),
                  ("click a block", "select it (map and structure view)"),
                  ("… in predict mode", "your answer"),
                  ("click an event", "select the block it names"))

    def keys_html(self, columns: int = 3) -> str:
        """The F1 list: every command with its keys, by menu, then the mouse,
        the menus in ``columns`` columns (a single long column would not fit
        a projector's screen)."""
        sections, last = [], None
        for menu, text, keys in self.key_rows():
            if menu != last:
                sections.append((menu or "Other", []))
                last = menu
            sections[-1][1].append((", ".join(keys), text))
        sections.append(("Mouse", list(self.MOUSE_ROWS)))

        def table(title, rows):
            cells = "".join(f"<tr><td><b>{html.escape(k)}</b></td>"
                            f"<td>&nbsp;&nbsp;{html.escape(t)}</td></tr>" for k, t in rows)
            return (f"<p><b><u>{html.escape(title)}</u></b></p>"
                    f"<table cellspacing=0 cellpadding=1>{cells}</table>")

        # fill the columns in order, each about as long as the others
        total = sum(len(rows) + 2 for _, rows in sections)
        cols, height = [[]], 0
        for title, rows in sections:
            if height and height + len(rows) / 2 > total / columns and len(cols) < columns:
                cols.append([])
                height = 0
            cols[-1].append(table(title, rows))
            height += len(rows) + 2
        tds = "".join(f"<td valign=top style='padding-right: 24px'>{''.join(c)}</td>" for c in cols)
        return f"<table><tr>{tds}</tr></table>"

    def show_keys(self) -> None:
        """F1: the list of keys in a window of its own, as wide as its columns
        (a message box squeezes them), scrolling on a small screen."""
        if self.message_box is not None:
            self.message_box.close()
        dialog = KeysDialog(self.keys_html(), self)
        dialog.finished.connect(lambda _=0, d=dialog: self._message_closed(d))
        self.message_box = dialog
        dialog.open()

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
        self.user_watch.disarm()
        super().closeEvent(event)


class KeysDialog(QDialog):
    """The F1 list: the keys' table (rich text, never wrapped) in a scroll
    area, and a Close button.  ``text()`` is the table, as a message box's."""

    def __init__(self, table_html: str, parent=None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Keyboard shortcuts")
        self.setAttribute(Qt.WA_DeleteOnClose)
        self._html = table_html
        label = QLabel(table_html)
        label.setTextFormat(Qt.RichText)
        label.setWordWrap(False)
        label.setContentsMargins(12, 8, 12, 8)
        scroll = QScrollArea()
        scroll.setWidget(label)
        scroll.setFrameShape(QFrame.NoFrame)
        buttons = QDialogButtonBox(QDialogButtonBox.Close)
        buttons.rejected.connect(self.reject)
        box = QVBoxLayout(self)
        box.addWidget(scroll, 1)
        box.addWidget(buttons)
        bar = self.style().pixelMetric(QStyle.PM_ScrollBarExtent)
        want = label.sizeHint() + QSize(40 + bar, 80 + bar)
        room = parent.size() * 0.92 if parent is not None else want
        self.resize(min(want.width(), room.width()), min(want.height(), room.height()))

    def text(self) -> str:
        return self._html


def _plain(text: str) -> str:
    """A menu text without its mnemonic: 'Fas&ter' -> 'Faster', 'K&&R' -> 'K&R'."""
    return re.sub(r"&(.)", r"\1", text)


def _key_texts(act: QAction) -> list[str]:
    return [k.toString(QKeySequence.NativeText) for k in act.shortcuts()]


def _strategy_keys(i: int) -> list[str]:
    """The keys of the i-th strategy (0-based): Ctrl+1 ... Ctrl+9, then
    Alt+1 ... Alt+9 for the strategies of your own past the ninth."""
    if i < 9:
        return [f"Ctrl+{i + 1}"]
    if i < 18:
        return [f"Alt+{i - 8}"]
    return []


def _setting_bool(value) -> bool:
    """A QSettings value read back from the INI file (booleans come back as text)."""
    return value is True or str(value).lower() in ("true", "1", "yes")


def _screen_height(widget) -> int:
    """Logical height of the screen ``widget`` is on (or the primary one)."""
    from PySide6.QtGui import QGuiApplication
    screen = widget.screen() if widget is not None else None
    screen = screen or QGuiApplication.primaryScreen()
    return screen.availableGeometry().height() if screen is not None else 900


def _pct(x) -> str:
    if x is None or x != x:
        return "n/a"
    return f"{100 * x:.1f} %"


def _param_text(value) -> str:
    if isinstance(value, bool):
        return "on" if value else "off"
    return f"{value:,}" if isinstance(value, int) else str(value)
