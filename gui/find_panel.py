"""The Find panel's widgets: the condition, its matches, the breakpoints.

:class:`FindPanel` is only the widgets and what they report
(:attr:`find_requested`, :attr:`match_clicked` ...); what a search does and
where the window goes is :class:`heapscope.gui.find_part.FindPart`'s.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (QHBoxLayout, QLabel, QLineEdit, QListWidget, QListWidgetItem,
                               QProgressBar, QPushButton, QSizePolicy, QVBoxLayout, QWidget)

from heapscope.allocators.conditions import reference

#: what the condition box says when empty
PLACEHOLDER = "e.g. failed   search > 100   merges >= 3   grew and frag > 0.5"
ERROR_INK = "#b3261e"
#: what the status line says before the first condition is typed
FIND_PROMPT = "Type a condition and press Enter."


class FindPanel(QWidget):
    """The condition box with Find and Cancel, the progress, the matches and
    the breakpoint list."""

    #: Find pressed (or Enter): the condition's text
    find_requested = Signal(str)
    cancel_requested = Signal()
    #: a match of the list was clicked: its step
    match_clicked = Signal(int)
    next_requested = Signal()
    previous_requested = Signal()
    #: "Add as breakpoint": the condition's text
    breakpoint_added = Signal(str)
    #: a breakpoint's check box: its row, on or off
    breakpoint_toggled = Signal(int, bool)
    breakpoint_removed = Signal(int)

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.edit = QLineEdit()
        self.edit.setPlaceholderText(PLACEHOLDER)
        self.edit.setClearButtonEnabled(True)
        self.edit.setToolTip("A condition over what a step did (docs/gui.md, Conditions):\n\n"
                             + reference())
        self.edit.returnPressed.connect(lambda: self.find_requested.emit(self.edit.text()))
        self.find_button = QPushButton("Find")
        self.find_button.clicked.connect(lambda: self.find_requested.emit(self.edit.text()))
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.clicked.connect(self.cancel_requested)
        self.cancel_button.hide()
        self.progress = QProgressBar()
        self.progress.setRange(0, 1000)
        self.progress.setTextVisible(False)
        self.progress.setMaximumHeight(8)
        self.progress.hide()
        self.status = QLabel(FIND_PROMPT)
        self.status.setWordWrap(True)
        self.status.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.status.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Preferred)
        self.matches = QListWidget()
        self.matches.setWordWrap(True)
        self.matches.setFocusPolicy(Qt.NoFocus)    # the window's keys step the trace
        self.matches.itemClicked.connect(lambda item: self.match_clicked.emit(item.data(Qt.UserRole)))
        self.previous_button = QPushButton("◀ Previous")
        self.previous_button.setToolTip("the match before the shown step (Shift+F3)")
        self.previous_button.clicked.connect(self.previous_requested)
        self.next_button = QPushButton("Next ▶")
        self.next_button.setToolTip("the match after the shown step (F3)")
        self.next_button.clicked.connect(self.next_requested)

        self.break_title = QLabel("Breakpoints: playing stops where one holds")
        bold = QFont(self.font())
        bold.setBold(True)
        self.break_title.setFont(bold)
        self.break_title.setWordWrap(True)
        self.breaks = QListWidget()
        self.breaks.setFocusPolicy(Qt.NoFocus)
        self.breaks.itemChanged.connect(self._break_changed)
        self.add_break = QPushButton("Add as Breakpoint")
        self.add_break.setToolTip("stop playing at every step where the condition holds")
        self.add_break.clicked.connect(lambda: self.breakpoint_added.emit(self.edit.text()))
        self.remove_break = QPushButton("Remove")
        self.remove_break.clicked.connect(self._remove_clicked)

        top = QHBoxLayout()
        top.addWidget(self.edit, 1)
        top.addWidget(self.find_button)
        top.addWidget(self.cancel_button)
        moves = QHBoxLayout()
        moves.addWidget(self.previous_button)
        moves.addWidget(self.next_button)
        break_buttons = QHBoxLayout()
        break_buttons.addWidget(self.add_break)
        break_buttons.addWidget(self.remove_break)
        box = QVBoxLayout(self)
        box.setContentsMargins(6, 4, 6, 4)
        box.addLayout(top)
        box.addWidget(self.progress)
        box.addWidget(self.status)
        box.addWidget(self.matches, 3)
        box.addLayout(moves)
        box.addWidget(self.break_title)
        box.addWidget(self.breaks, 1)
        box.addLayout(break_buttons)
        self._filling = False

    # ------------------------------------------------------------- showing
    def set_busy(self, busy: bool) -> None:
        self.cancel_button.setVisible(busy)
        self.find_button.setVisible(not busy)
        self.progress.setVisible(busy)
        if busy:
            self.progress.setValue(0)

    def say(self, text: str, error: bool = False) -> None:
        self.status.setStyleSheet(f"color: {ERROR_INK};" if error else "")
        self.status.setText(text)

    def show_matches(self, rows: list[tuple[int, str]]) -> None:
        """The matches listed: (step, its words)."""
        self.matches.clear()
        for step, text in rows:
            item = QListWidgetItem(text)
            item.setData(Qt.UserRole, step)
            self.matches.addItem(item)

    def mark_match(self, step: int) -> None:
        """Highlight the listed match of ``step`` (none if it is not listed)."""
        self.matches.clearSelection()
        for i in range(self.matches.count()):
            item = self.matches.item(i)
            if item.data(Qt.UserRole) == step:
                item.setSelected(True)
                self.matches.scrollToItem(item)
                return

    def show_breakpoints(self, rows: list[tuple[str, bool, str]]) -> None:
        """The breakpoints listed: (condition, on, state)."""
        self._filling = True
        try:
            self.breaks.clear()
            for text, on, state in rows:
                item = QListWidgetItem(f"{text}   — {state}")
                item.setFlags(item.flags() | Qt.ItemIsUserCheckable)
                item.setCheckState(Qt.Checked if on else Qt.Unchecked)
                item.setToolTip(f"{text}: {state}")
                self.breaks.addItem(item)
        finally:
            self._filling = False

    def texts(self) -> list[str]:
        """The listed matches' lines (tests)."""
        return [self.matches.item(i).text() for i in range(self.matches.count())]

    def focus_condition(self) -> None:
        self.edit.setFocus(Qt.ShortcutFocusReason)
        self.edit.selectAll()

    # ------------------------------------------------------------- events
    def _break_changed(self, item) -> None:
        if not self._filling:
            self.breakpoint_toggled.emit(self.breaks.row(item), item.checkState() == Qt.Checked)

    def _remove_clicked(self) -> None:
        row = self.breaks.currentRow()
        if row >= 0:
            self.breakpoint_removed.emit(row)
