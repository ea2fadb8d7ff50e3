"""Strategy > Compare Strategies…: pick the 2 to 7 strategies compare mode shows."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (QDialog, QDialogButtonBox, QLabel, QListWidget, QListWidgetItem,
                               QVBoxLayout)

from heapscope.allocators.registry import STRATEGIES, strategy_names

from .compare_view import MAX_ROWS, MIN_ROWS


class CompareDialog(QDialog):
    """A checkable list of every strategy (user strategies included); OK only
    with 2 to 7 ticked.  :meth:`chosen` gives them in the list's order."""

    def __init__(self, checked=(), built=(), parent=None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Compare strategies")
        intro = QLabel(f"Tick {MIN_ROWS} to {MAX_ROWS} strategies to show side by side, one row "
                       f"each, at the same step.  A strategy already replayed for this trace "
                       f"shows at once; the others replay together, one process each.")
        intro.setWordWrap(True)
        self.list = QListWidget()
        built = set(built)
        for name in strategy_names():
            item = QListWidgetItem(f"{name} — {STRATEGIES[name].title}"
                                   + ("   (replayed)" if name in built else ""))
            item.setData(Qt.UserRole, name)
            item.setFlags(Qt.ItemIsEnabled | Qt.ItemIsUserCheckable)
            item.setCheckState(Qt.Checked if name in checked else Qt.Unchecked)
            self.list.addItem(item)
        self.list.setMinimumWidth(self.list.sizeHintForColumn(0) + 40)
        self.list.setMinimumHeight(min(self.list.count(), 12) * (self.list.sizeHintForRow(0) + 2) + 8)
        self.list.itemChanged.connect(self._sync)
        self.hint = QLabel("")
        self.buttons = QDialogButtonBox(QDialogButtonBox.Ok | QDialogButtonBox.Cancel)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        box = QVBoxLayout(self)
        box.addWidget(intro)
        box.addWidget(self.list, 1)
        box.addWidget(self.hint)
        box.addWidget(self.buttons)
        self._sync()

    def chosen(self) -> list[str]:
        return [self.list.item(i).data(Qt.UserRole) for i in range(self.list.count())
                if self.list.item(i).checkState() == Qt.Checked]

    def set_chosen(self, names) -> None:
        names = set(names)
        for i in range(self.list.count()):
            item = self.list.item(i)
            item.setCheckState(Qt.Checked if item.data(Qt.UserRole) in names else Qt.Unchecked)

    def _sync(self, *_) -> None:
        n = len(self.chosen())
        ok = MIN_ROWS <= n <= MAX_ROWS
        self.buttons.button(QDialogButtonBox.Ok).setEnabled(ok)
        if ok:
            self.hint.setText(f"{n} strategies ticked.")
            self.hint.setStyleSheet("")
        else:
            self.hint.setText(f"{n} ticked: tick {MIN_ROWS} to {MAX_ROWS}.")
            self.hint.setStyleSheet("color: #D55E00;")
