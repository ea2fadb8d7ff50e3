"""The window's commands: its actions (each with its keys and tool tip), the
menus that list them, and the tool bar with the strategy picker.

Every command is a QAction with its shortcut, in a menu: File (New, Open, Open
Recent, Open Example, Workload, Save, Save As, Export, Export Screenshot,
Quit), Edit (Undo, Redo, Malloc, Free and Realloc the selected block, Cut
What Follows an Insertion: gui/sandbox_edits.py), View (Fit
Heap, Structure View S, Explain Panel E, Plots L, Presenter Mode F5, Dark
Theme D), Playback (Play/Pause Space, Step Back Left, Step Forward Right,
Previous / Next Event Shift+Left / Shift+Right, Start Home, End End, Go to
Step Ctrl+G, Faster +, Slower -, Find Ctrl+F, Find Next F3, Find Previous
Shift+F3), Predict, Strategy (one per strategy,
Ctrl+1..., Compare Mode C, Compare Strategies Shift+C), Help (Keys F1,
About).  The F1 list reads them back (:mod:`heapscope.gui.keys_help`).

These functions make the window's public command attributes (``act_*``,
``strategy_actions``, ``menus``, ``strategy_box``, ``toolbar`` ...), each
action connected to the window's public slot of the same name; they run
once, from the window's ``__init__``.
"""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QAction, QActionGroup, QKeySequence
from PySide6.QtWidgets import QComboBox, QLabel, QStyle, QToolBar, QToolButton, QWidget

from heapscope.allocators.registry import STRATEGIES, strategy_names
from heapscope.traces.bundled import examples as bundled_examples

from .keys_help import plain
from .recent_files import RecentFiles


def action(w, text: str, slot, keys=(), icon=None, tip: str = "") -> QAction:
    act = QAction(text, w)
    if keys:
        act.setShortcuts([QKeySequence(k) for k in keys])
    if icon is not None:
        act.setIcon(w.style().standardIcon(icon))
        act.setProperty("standard_icon", int(icon))
    tip = tip or plain(text).rstrip("…")
    if keys:
        tip += f" ({QKeySequence(keys[0]).toString(QKeySequence.NativeText)})"
    act.setToolTip(tip)
    act.triggered.connect(lambda checked=False: slot())
    w.addAction(act)   # the shortcut works even when no menu is open
    return act


def make_actions(w) -> None:
    S = QStyle
    w.act_open = action(w, "&Open Trace…", w.ask_open, [QKeySequence.Open],
                                 S.SP_DialogOpenButton)
    w.act_workload = action(w, "&Workload…", w.ask_workload, ["Ctrl+Shift+N"],
                                     S.SP_FileDialogNewFolder, "Generate a workload from the seeds")
    w.act_export = action(w, "&Export…", w.ask_export, ["Ctrl+E"],
                                   tip="Save the map, a view, the gauges or the window as PNG or "
                                       "SVG, the measures as CSV or JSON, steps as GIF or MP4")
    w.act_screenshot = action(w, "Export &Screenshot…", w.ask_screenshot, ["Ctrl+Shift+E"],
                              tip="Save a picture of the window (PNG)")
    w.act_quit = action(w, "&Quit", w.close, ["Ctrl+Q"])
    w.act_clear_recent = action(w, "Clear Recent", w.clear_recent, ["Ctrl+Shift+Del"])
    w.act_fit = action(w, "&Fit Heap to Window", w.heap_map_fit, ["0"])
    w.act_structure = action(w, "&Structure View", w.toggle_structure, ["S"],
                                      tip="Show or hide the strategy's free structure")
    w.act_explain = action(w, "&Explain Panel", w.toggle_explain, ["E"],
                                    tip="Show or hide the step's events in words")
    for act in (w.act_structure, w.act_explain):
        act.setCheckable(True)
        act.setChecked(True)
    w.act_plots = action(w, "P&lots", w.toggle_plots, ["L"],
                                  tip="Show or hide the plots over time")
    w.act_plots.setCheckable(True)
    w.act_plots.setChecked(True)
    w.act_presenter = action(w, "&Presenter Mode", w.toggle_presenter, ["F5"],
                                      tip="Large text, thick outlines, high contrast: for a projector")
    w.act_dark = action(w, "&Dark Theme", w.toggle_dark, ["D"],
                                 tip="White on black (the heap keeps its colour-blind-safe colours)")
    for act, on in ((w.act_presenter, w.presentation.presenter),
                    (w.act_dark, w.presentation.theme_name == "dark")):
        act.setCheckable(True)
        act.setChecked(on)
    w.act_play = action(w, "&Play", w.toggle_play, ["Space"], S.SP_MediaPlay,
                                 "Play / pause")
    w.act_back = action(w, "Step &Back", w.step_back, ["Left"], S.SP_MediaSeekBackward)
    w.act_forward = action(w, "Step &Forward", w.step_forward, ["Right"],
                                    S.SP_MediaSeekForward)
    w.act_start = action(w, "Jump to &Start", w.go_start, ["Home"], S.SP_MediaSkipBackward)
    w.act_end = action(w, "Jump to &End", w.go_end, ["End"], S.SP_MediaSkipForward)
    w.act_event_forward = action(w, "Next E&vent", w.event_forward, ["Shift+Right"],
                                          tip="One event of the step forward (micro-step)")
    w.act_event_back = action(w, "Previous Eve&nt", w.event_back, ["Shift+Left"],
                                       tip="One event of the step back (micro-step)")
    w.act_goto = action(w, "&Go to Step…", w.ask_go_to_step, ["Ctrl+G"])
    w.act_faster = action(w, "Fas&ter", w.faster, ["+", "="])
    w.act_slower = action(w, "Slo&wer", w.slower, ["-"])
    make_predict_actions(w)
    make_find_actions(w)
    w.act_keys = action(w, "&Keyboard Shortcuts", w.show_keys, ["F1"])
    w.act_about = action(w, "&About heapscope", w.show_about, ["Shift+F1"])
    w.strategy_group = QActionGroup(w)
    w.strategy_actions: dict[str, QAction] = {}
    for i, name in enumerate(strategy_names()):
        # '&&' shows one '&' (K&R, AT&T); a lone one would be a mnemonic
        act = action(w, f"{name} — {STRATEGIES[name].title}".replace("&", "&&"),
                           lambda name=name: w.set_strategy(name), strategy_keys(i))
        act.setCheckable(True)
        act.setChecked(name == w.strategy_name)
        w.strategy_group.addAction(act)
        w.strategy_actions[name] = act


def make_find_actions(w) -> None:
    """Find and its moves: the window's finder is made after the actions, so
    each calls it when triggered."""
    w.act_find = action(w, "&Find…", lambda: w.finder.show_find(), [QKeySequence.Find],
                        tip="Find the steps where a condition holds; add breakpoints")
    w.act_find_next = action(w, "Find &Next", lambda: w.finder.next_match(), ["F3"],
                             tip="The next step Find matched")
    w.act_find_previous = action(w, "Find Pre&vious", lambda: w.finder.previous_match(), ["Shift+F3"],
                                 tip="The step Find matched before this one")


def make_predict_actions(w) -> None:
    w.act_predict = action(w, "&Predict Mode", w.toggle_predict, ["P"],
                                    tip="Stop before each malloc: click the block the policy will take")
    w.act_predict.setCheckable(True)
    w.act_predict_grow = action(w, "The Heap Will &Grow", w.answer_grow, ["G"],
                                         tip="Predict mode: answer that no free block fits")
    w.act_predict_reveal = action(w, "Show the &Answer", w.reveal_answer, ["A"],
                                           tip="Predict mode: play the step without an answer")
    w.act_predict_reset = action(w, "&Reset Score", w.reset_predict_score, ["Shift+P"])


def make_menus(w) -> None:
    mb = w.menuBar()
    file_menu = mb.addMenu("&File")
    file_menu.addAction(w.act_open)
    w.recent_menu = file_menu.addMenu("Open &Recent")
    w.recent = RecentFiles(w.settings, w.recent_menu, w.act_clear_recent,
                           lambda path: w.open_trace(path), w)
    w.examples_menu = make_examples_menu(w, file_menu)
    file_menu.addAction(w.act_workload)
    file_menu.addSeparator()
    file_menu.addAction(w.edits.act_save)
    file_menu.addAction(w.edits.act_save_as)
    file_menu.addSeparator()
    file_menu.addAction(w.act_export)
    file_menu.addAction(w.act_screenshot)
    file_menu.addSeparator()
    file_menu.addAction(w.act_quit)
    edit_menu = mb.addMenu("&Edit")
    w.edits.fill_menus(file_menu, edit_menu)
    view_menu = mb.addMenu("&View")
    view_menu.addAction(w.act_fit)
    view_menu.addSeparator()
    view_menu.addAction(w.act_structure)
    view_menu.addAction(w.act_explain)
    view_menu.addAction(w.act_plots)
    view_menu.addSeparator()
    view_menu.addAction(w.act_presenter)
    view_menu.addAction(w.act_dark)
    play_menu = mb.addMenu("&Playback")
    for act in (w.act_play, w.act_back, w.act_forward, w.act_start, w.act_end,
                w.act_goto):
        play_menu.addAction(act)
    play_menu.addSeparator()
    play_menu.addAction(w.act_event_back)
    play_menu.addAction(w.act_event_forward)
    play_menu.addSeparator()
    play_menu.addAction(w.act_faster)
    play_menu.addAction(w.act_slower)
    play_menu.addSeparator()
    for act in (w.act_find, w.act_find_next, w.act_find_previous):
        play_menu.addAction(act)
    play_menu.addAction(w.check_steps.act)
    predict_menu = mb.addMenu("P&redict")
    for act in (w.act_predict, w.act_predict_grow, w.act_predict_reveal,
                w.act_predict_reset):
        predict_menu.addAction(act)
    strategy_menu = mb.addMenu("&Strategy")
    for act in w.strategy_actions.values():
        strategy_menu.addAction(act)
    strategy_menu.addSeparator()
    strategy_menu.addAction(w.compare.act_toggle)
    strategy_menu.addAction(w.compare.act_pick)
    help_menu = mb.addMenu("&Help")
    help_menu.addAction(w.act_keys)
    help_menu.addAction(w.act_about)
    w.menus = {"file": file_menu, "edit": edit_menu, "view": view_menu, "playback": play_menu,
                  "predict": predict_menu, "strategy": strategy_menu, "help": help_menu}


def make_examples_menu(w, file_menu):
    """File > Open Example: the bundled traces, real programs among them."""
    menu = file_menu.addMenu("Open &Example")
    menu.setToolTipsVisible(True)
    for ex in bundled_examples():
        act = menu.addAction(ex.label)
        act.setToolTip(ex.how)
        act.triggered.connect(lambda checked=False, p=str(ex.path): w.open_trace(p))
    return menu


def make_toolbar(w) -> None:
    tb = QToolBar("Main")
    tb.setMovable(False)
    tb.setIconSize(QSize(22, 22))
    tb.setToolButtonStyle(Qt.ToolButtonTextBesideIcon)
    tb.addAction(w.act_open)
    tb.addAction(w.act_workload)
    tb.addSeparator()
    tb.addWidget(QLabel(" Strategy: "))
    w.strategy_box = QComboBox()
    w.strategy_box.setFocusPolicy(Qt.NoFocus)
    for name in strategy_names():
        w.strategy_box.addItem(name, name)
        w.strategy_box.setItemData(w.strategy_box.count() - 1, STRATEGIES[name].title,
                                      Qt.ToolTipRole)
    w.strategy_box.setCurrentText(w.strategy_name)
    w.strategy_box.activated.connect(
        lambda i: w.set_strategy(w.strategy_box.itemData(i)))
    tb.addWidget(w.strategy_box)
    w.compare_button = QToolButton()
    w.compare_button.setDefaultAction(w.compare.act_toggle)
    w.compare_button.setText("Compare")
    w.compare_button.setFocusPolicy(Qt.NoFocus)
    tb.addWidget(w.compare_button)
    pick = QToolButton()
    pick.setDefaultAction(w.compare.act_pick)
    pick.setText("…")
    pick.setFocusPolicy(Qt.NoFocus)
    tb.addWidget(pick)
    w.strategy_title = QLabel()
    w.strategy_title.setStyleSheet("color: #333; padding-left: 8px;")
    tb.addWidget(w.strategy_title)
    spacer = QWidget()
    spacer.setSizePolicy(spacer.sizePolicy().horizontalPolicy().Expanding,
                         spacer.sizePolicy().verticalPolicy())
    tb.addWidget(spacer)
    w.trace_label = QLabel()
    w.trace_label.setStyleSheet("padding-right: 8px;")
    tb.addWidget(w.trace_label)
    w.addToolBar(tb)
    w.toolbar = tb


def strategy_keys(i: int) -> list[str]:
    """The keys of the i-th strategy (0-based): Ctrl+1 ... Ctrl+9, then
    Alt+1 ... Alt+9 for the strategies of your own past the ninth."""
    if i < 9:
        return [f"Ctrl+{i + 1}"]
    if i < 18:
        return [f"Alt+{i - 8}"]
    return []
