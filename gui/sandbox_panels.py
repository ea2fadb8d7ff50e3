"""The sandbox's panels: the parameters panel (``K``) and the trace editor
(``T``), each in a dock on the window's left, hidden until asked for
(View > Parameters, View > Trace Editor), for one strategy and compare mode
alike; and Edit > Small-Demo Constants (``Ctrl+D``).

:class:`SandboxPanels` makes them and their actions once the window's
menus exist; the panels talk to the window through its show model, its
public parameters and its sandbox part (:mod:`heapscope.gui.sandbox_edits`).
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Qt
from PySide6.QtWidgets import QDockWidget

from .params_panel import ParamsPanel
from .trace_editor import TraceEditor
from .window_menus import action


#: a panel's width when it shows, at text scale 1
DOCK_WIDTH = 200


class SandboxPanels(QObject):
    def __init__(self, window) -> None:
        super().__init__(window)
        self.window = window
        self.params_panel = ParamsPanel(window)
        self.params_dock = self._dock(self.params_panel, "Parameters", "params")
        self.act_params = self._toggle("&Parameters", self.params_dock, ["K"],
                                       "Show or hide every parameter of the shown strategies")
        self.editor = TraceEditor(window)
        self.editor_dock = self._dock(self.editor, "Trace", "editor")
        self.act_editor = self._toggle("&Trace Editor", self.editor_dock, ["T"],
                                       "Show or hide the trace in the readable syntax, to edit")
        window.tabifyDockWidget(self.editor_dock, self.params_dock)
        self.act_small_demo = action(window, "S&mall-Demo Constants", self.small_demo, ["Ctrl+D"],
                                     tip="Keep each policy, scale its growth constants to this "
                                         "trace so that it fills the map")
        window.menus["view"].insertAction(window.act_plots, self.act_editor)
        window.menus["view"].insertAction(window.act_plots, self.act_params)
        edit = window.menus["edit"]
        edit.addSeparator()
        edit.addAction(self.act_small_demo)

    def _dock(self, widget, title: str, name: str) -> QDockWidget:
        dock = QDockWidget(title, self.window)
        dock.setObjectName(f"{name}_dock")
        dock.setWidget(widget)
        dock.setAllowedAreas(Qt.LeftDockWidgetArea | Qt.RightDockWidgetArea)
        self.window.addDockWidget(Qt.LeftDockWidgetArea, dock)
        dock.hide()
        return dock

    def _toggle(self, text: str, dock: QDockWidget, keys, tip: str):
        act = action(self.window, text, lambda: self.show_dock(dock, act.isChecked()), keys, tip=tip)
        act.setCheckable(True)
        dock.visibilityChanged.connect(lambda shown: act.setChecked(not dock.isHidden()))
        return act

    def show_dock(self, dock: QDockWidget, visible: bool) -> None:
        """Show or hide a panel; shown, it is a narrow column (the maps keep
        their room at 1280 x 720: compare mode's rows most of all)."""
        dock.setVisible(visible)
        if visible:
            dock.raise_()
            width = round(DOCK_WIDTH * self.window.presentation.text_scale)
            self.window.resizeDocks([dock], [width], Qt.Horizontal)

    def small_demo(self) -> None:
        """Edit > Small-Demo Constants: for every shown strategy, and the
        parameters panel shows what changed."""
        self.show_dock(self.params_dock, True)
        self.params_panel.apply_small_demo()
