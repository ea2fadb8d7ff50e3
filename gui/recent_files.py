"""File > Open Recent: the traces opened last, kept in the settings.

:class:`RecentFiles` owns the list (the ``recent_files`` key of the app's
QSettings, newest first, at most :data:`MAX_RECENT`) and the menu that shows
it.  It knows nothing of loading: a click on an entry calls the ``open_path``
it was given (the window's ``open_trace``).
"""

from __future__ import annotations

import os
from typing import Callable

from PySide6.QtCore import QObject, QSettings
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu

#: how many traces File > Open Recent lists
MAX_RECENT = 8


class RecentFiles(QObject):
    """The recent traces and their menu (refilled each time it opens)."""

    def __init__(self, settings: QSettings, menu: QMenu, clear_action: QAction,
                 open_path: Callable[[str], None], parent=None) -> None:
        super().__init__(parent)
        self.settings = settings
        self.menu = menu
        self.clear_action = clear_action
        self.open_path = open_path
        menu.aboutToShow.connect(self.fill_menu)
        self.fill_menu()

    def files(self) -> list[str]:
        """The recent traces' paths, newest first."""
        value = self.settings.value("recent_files", [])
        if isinstance(value, str):        # one entry comes back from the INI file as text
            value = [value]
        return [str(v) for v in (value or [])]

    def remember(self, path: str) -> None:
        """``path`` was opened: first in the list, once."""
        path = os.path.abspath(path)
        files = [path] + [p for p in self.files() if p != path]
        self.settings.setValue("recent_files", files[:MAX_RECENT])
        self.settings.sync()

    def clear(self) -> None:
        self.settings.setValue("recent_files", [])
        self.settings.sync()

    def fill_menu(self) -> None:
        """One entry per recent trace (its number is its mnemonic), then Clear Recent."""
        menu = self.menu
        menu.clear()
        files = self.files()
        for i, path in enumerate(files):
            act = menu.addAction(f"&{i + 1} {os.path.basename(path)}")
            act.setToolTip(path)
            act.setData(path)
            act.triggered.connect(lambda checked=False, p=path: self.open_path(p))
        if not files:
            menu.addAction("(none)").setEnabled(False)
        menu.addSeparator()
        menu.addAction(self.clear_action)
