"""heapscope's main window: a trace replayed through one strategy, step by step.

What is shown lives in one :class:`~heapscope.gui.show_model.ShowModel` (the trace, the
timelines built from it, the shown strategy, the position, the event within
the step, the selected and the hovered block).  Every view subscribes to it
and redraws from it (:mod:`heapscope.gui.subscriber`).  The window composes the views
and its parts, each a class in a module of its own that talks to the others
through the model and public methods and signals:

* :mod:`heapscope.gui.window_loading` (:class:`TraceLoading`): opening a trace,
  replaying it in the background (:mod:`heapscope.gui.loader`), showing the result,
  the watch on a strategy of your own; a strategy already replayed for this
  trace shows at once; a trace that cannot be read is reported in a message
  box naming the file and line, and the window keeps what it showed;
* :mod:`heapscope.gui.recent_files` (:class:`RecentFiles`): File > Open Recent;
* :mod:`heapscope.gui.window_layout` (:class:`WindowLayout`): the panels, the gauges
  in a column or a strip, the sizes for presenter mode and the theme;
* :mod:`heapscope.gui.compare_mode` (:class:`CompareMode`): 2 to 7 strategies side by
  side, in a second page of the window's stack; the timeline bar, the
  player, the step animator and the keys drive both pages;
* :mod:`heapscope.gui.find_part` (:class:`FindPart`): Find (Ctrl+F), F3 /
  Shift+F3 and the breakpoints that stop playing;
* :mod:`heapscope.gui.window_menus`: the actions, menus and tool bar;
  :mod:`heapscope.gui.keys_help`: the F1 list read back from them.

The window keeps the commands (navigation, predict mode, dialogs) and the
public attributes the tests, ``heapscope render`` and the benchmarks use,
delegating to its parts.
"""

from __future__ import annotations


from PySide6.QtCore import QSettings, Qt, Signal
from PySide6.QtWidgets import QFileDialog, QInputDialog, QMainWindow, QMessageBox, QStyle

from heapscope import traces
from heapscope.allocators.isolation import DEFAULT_TIME_LIMIT
from heapscope.allocators.registry import STRATEGIES, strategy_names

from . import keys_help, window_menus
from .compare_mode import CompareMode
from .explain_panel import ExplainPanel
from .file_watch import FileWatch
from .find_part import FindPart
from .gauges import GaugePanel
from .heap_map import HeapMapWidget
from .keys_help import KeysDialog
from .lesson_part import LessonPart
from .player import Player
from .plots import PlotPanel
from .predict_bar import PredictBar
from .predict_mode import PredictMode
from .check_steps import CheckSteps
from .sandbox_edits import SandboxEdits, setting_bool
from .sandbox_panels import SandboxPanels
from .show_model import ShowModel
from .step_animator import StepAnimator
from .structure_panel import StructurePanel
from .theme import FontScaler, Presentation, THEMES
from .timeline_bar import TimelineBar
from .window_layout import WindowLayout
from .window_loading import TraceLoading
from .workload_dialog import WorkloadDialog

ORGANIZATION = "heapscope"
APPLICATION = "heapscope"
DEFAULT_STRATEGY = "next-fit"


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
            presenter=setting_bool(self.settings.value("presenter", False)),
            theme_name=str(self.settings.value("theme", "light")) if str(
                self.settings.value("theme", "light")) in THEMES else "light",
            screen_height=_screen_height(self))
        self.font_scaler = FontScaler()

        self.model = ShowModel(self)
        self.player = Player(self)
        self.animator = StepAnimator(self.model, self)
        #: loading traces and showing what was built (gui/window_loading.py)
        self.loading = TraceLoading(self, DEFAULT_STRATEGY)
        self.loader = self.loading.loader
        self.user_watch = self.loading.user_watch
        self.check_steps = CheckSteps(self)     # Playback > Check Your Strategy After Every Step
        #: predict-the-block, per row (gui/predict_mode.py)
        self.predict = PredictMode(self.model, self)
        self.predict.play = self.animator.step_to      # an answered step plays its events
        window_menus.make_actions(self)
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
        #: the sandbox: New, Save, Undo, Malloc…, a block's menu (gui/sandbox_edits.py)
        self.edits = SandboxEdits(self)
        self.file_watch = FileWatch(self)       # a file changed on disk is read again
        window_menus.make_menus(self)
        window_menus.make_toolbar(self)
        #: the panels, the gauges' arrangement, presenter sizes (gui/window_layout.py)
        self.window_layout = WindowLayout(self)
        self.panels = SandboxPanels(self)       # parameters, trace editor (gui/sandbox_panels.py)
        #: Find (Ctrl+F), F3, breakpoints (gui/find_part.py)
        self.finder = FindPart(self)
        self.lessons = LessonPart(self)         # File > Lessons, the narration dock (gui/lesson_part.py)

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
        self.loading.connect_loader()
        self.loading.shown.connect(self.timeline_changed)
        self.loading.failed.connect(self.load_failed)
        self.bar.show_speed(self.player.speed)
        self.sync_strategy_widgets()
        self.apply_presentation(self.presentation)

    def views(self) -> list:
        """Every view subscribed to the model."""
        return [self.heap_map, self.structure_panel, self.explain_panel, self.gauges, self.plots,
                self.bar]

    def single_views(self) -> list:
        """The views of the one-strategy page (compare mode unbinds them)."""
        return [v for v in self.views() if v is not self.bar]

    def bind_single_views(self, bound: bool) -> None:
        """Bind the one-strategy page's views to the model, or unbind them
        (while compare mode shows they cost nothing)."""
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

    # The layout's parts, by their old names.
    pages = property(lambda self: self.window_layout.pages)
    left_split = property(lambda self: self.window_layout.left_split)
    map_split = property(lambda self: self.window_layout.map_split)
    main_split = property(lambda self: self.window_layout.main_split)
    gauge_scroll = property(lambda self: self.window_layout.gauge_scroll)
    gauge_strip = property(lambda self: self.window_layout.gauge_strip)

    # ========================================================= presentation
    def apply_presentation(self, pres: Presentation) -> None:
        """Show the window as ``pres`` says (gui/window_layout.py)."""
        self.window_layout.apply_presentation(pres)

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
        self.window_layout.adapt()

    def set_window_size(self, width: int, height: int) -> None:
        """Resize to ``width`` x ``height``, arranging the gauges for that
        height first (``heapscope render`` and the tests use this)."""
        self.window_layout.set_window_size(width, height)

    def set_plots_visible(self, visible: bool) -> None:
        """Show or hide the plots over time (L)."""
        self.window_layout.set_plots_visible(visible)

    def toggle_plots(self) -> None:
        self.set_plots_visible(self.act_plots.isChecked())

    def toggle_structure(self) -> None:
        if self.compare.active:
            self.act_structure.setChecked(self.compare.view.show_structures(self.act_structure.isChecked()))
            return
        self.window_layout.show_panel(self.structure_panel, self.act_structure.isChecked())

    def toggle_explain(self) -> None:
        self.window_layout.show_panel(self.explain_panel, self.act_explain.isChecked())

    # ================================================================ loading
    # (gui/window_loading.py does them; these are the window's commands)
    def ask_open(self) -> None:
        """File > Open: pick a .rep / .rep.gz and load it."""
        self.loading.ask_open()

    def open_trace(self, path: str, position: int | None = None) -> None:
        """Read ``path`` and replay it through the current strategy, in the
        background, then show step ``position`` (default 0).  A bad file is
        reported and the current trace stays."""
        self.loading.open_trace(path, position)

    def load_workload(self, name: str, params: dict | None = None) -> None:
        """Generate workload ``name`` (in the background) and show it."""
        self.loading.load_workload(name, params)

    def load_spec(self, spec: str, position: int | None = None) -> None:
        """A path or a workload spec such as ``vo1989:steps=500`` (the command
        line); then show step ``position`` (default 0)."""
        self.loading.load_spec(spec, position)

    def load_trace(self, trace, label: str | None = None) -> None:
        """Show a Trace already in memory."""
        self.loading.load_trace(trace, label)

    def show_built(self, trace, timeline, source: str | None = None, position: int = 0,
                   label: str | None = None) -> None:
        """Show a timeline already built (``heapscope render`` builds it
        itself, no loader): the trace, then its step ``position``."""
        self.loading.show_built(trace, timeline, source, position, label)

    def set_strategy(self, name: str) -> None:
        """Replay the same trace through another strategy, keeping the step
        (in compare mode: leave it for that strategy)."""
        self.loading.set_strategy(name)

    def params_for(self, name: str) -> dict:
        """The parameters strategy ``name`` is built with: the common ones and its own."""
        return {**self.params, **self.strategy_params.get(name, {}), **self.check_steps.params(name)}

    @property
    def busy(self) -> bool:
        """A trace is being read or replayed."""
        return self.loader.busy or self.compare.busy

    def _show(self, strategy: str, key, position: int) -> None:
        self.loading.show(strategy, key, position)

    def summary_text(self, timed: bool = True) -> str:
        """The status bar's line: the whole replay's measures."""
        return self.loading.summary_text(timed)

    def sync_strategy_widgets(self) -> None:
        """The strategy picker, its title and the Strategy menu say the strategy picked."""
        name = self.strategy_name
        self.strategy_box.setCurrentIndex(self.strategy_box.findData(name))
        extra = ", ".join(f"{k.replace('_', ' ')} {_param_text(v)}" for k, v in self.params_for(name).items())
        self.strategy_title.setText(STRATEGIES[name].title + (f"  [{extra}]" if extra else ""))
        if self.compare.active and self.compare.view.shown_rows():
            self.strategy_title.setText(self.compare.title())    # rows still show
        self.strategy_actions[name].setChecked(True)

    # ------------------------------------------------------------ recent files
    def recent_files(self) -> list[str]:
        return self.recent.files()

    def clear_recent(self) -> None:
        self.recent.clear()

    def _fill_recent_menu(self) -> None:
        self.recent.fill_menu()

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

    def _advance(self, steps: int) -> None:
        if self.timeline is None or self.predict.pending is not None:
            self.player.pause()
            return
        position = self.model.position
        target = self.predict.stop_before(position, position + steps)
        if target < position + steps:
            self.player.pause()           # a question: wait for the answer
            return
        target, stopped = self.finder.stop_before(position, target)
        self.animator.step_to(target)
        if stopped is not None or self.model.position >= self.model.n:
            self.player.pause()
        if stopped is not None:
            self.finder.stopped_at(target, stopped)

    def _bar_seek(self, position: int) -> None:
        # the bar's request already moved the model: give the keys back to the window
        self.heap_map.plot_widget.setFocus()

    def _playing_changed(self, playing: bool) -> None:
        self.model.playing = playing
        self.act_play.setText("&Pause" if playing else "&Play")
        self.act_play.setProperty("standard_icon",
                                  int(QStyle.SP_MediaPause if playing else QStyle.SP_MediaPlay))
        self.window_layout.theme_icons()

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


    # =============================================================== dialogs
    def show_error(self, title: str, text: str, detail: str = "") -> QMessageBox:
        """A window-modal error box that does not block the caller (tests read
        :attr:`message_box`)."""
        return self.message(QMessageBox.Critical, title, text, detail)

    def message(self, icon, title: str, text: str, detail: str = "") -> QMessageBox:
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
        from .export_dialog import ask_and_export
        ask_and_export(self)

    def run_export(self, request) -> str | None:
        """Do an :class:`~heapscope.gui.export.ExportRequest` with a progress dialog that
        can cancel it: the line saying what was written, or None (a message
        box says why) (gui/export_dialog.py)."""
        from .export_dialog import export_with_progress
        return export_with_progress(self, request)

    def ask_screenshot(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Save a screenshot", "heapscope.png",
                                              "PNG images (*.png)")
        if path:
            from . import export
            export.save_png(self, path)
            self.statusBar().showMessage(f"Saved {path}", 5000)

    # ============================================================ F1, About
    def key_rows(self) -> list[tuple[str, str, list[str]]]:
        """(menu, command, keys) for every command with a key (gui/keys_help.py)."""
        return keys_help.key_rows(self.menus.values(), self.actions())

    #: what the mouse does, for the F1 list
    MOUSE_ROWS = keys_help.MOUSE_ROWS

    def keys_html(self, columns: int = 3) -> str:
        """The F1 list: every command with its keys, by menu, then the mouse."""
        return keys_help.keys_html(self.key_rows(), columns)

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
        self.message(QMessageBox.Information, "About heapscope",
                      "<h3>heapscope</h3><p>Replays malloc/free traces through classic allocator "
                      "strategies and shows, step by step, what each does to the heap.</p>"
                      "<p>Strategies: " + ", ".join(
                          f"<br>• <b>{n}</b>: {STRATEGIES[n].title}" for n in strategy_names()) +
                      "</p><p>Colours: Okabe &amp; Ito's colour-blind-safe palette.</p>")

    # =============================================================== closing
    def closeEvent(self, event) -> None:
        if not self.edits.close_allowed():      # unsaved changes: it asks first
            event.ignore()
            return
        self.animator.finish()
        self.player.pause()
        self.loading.stop()
        self.compare.loader.cancel()
        self.finder.stop()
        self.user_watch.stop()
        super().closeEvent(event)



def _screen_height(widget) -> int:
    """Logical height of the screen ``widget`` is on (or the primary one)."""
    from PySide6.QtGui import QGuiApplication
    screen = widget.screen() if widget is not None else None
    screen = screen or QGuiApplication.primaryScreen()
    return screen.availableGeometry().height() if screen is not None else 900


def _param_text(value) -> str:
    if isinstance(value, bool):
        return "on" if value else "off"
    return f"{value:,}" if isinstance(value, int) else str(value)
