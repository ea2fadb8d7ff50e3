"""File > Workload: pick one of the seeds' workload generators and its parameters.

The form is built from the generator's signature: one spin box per int
parameter, a decimal box per float, a check box per bool, a line edit for
anything else, each starting at the default.  ``seed`` (every generator has
one) gets a "new seed" button.  The dialog does not run the generator: the
window does, off the GUI thread, with :meth:`WorkloadDialog.choice`.
"""

from __future__ import annotations

import inspect
import random

from PySide6.QtWidgets import (QCheckBox, QComboBox, QDialog, QDialogButtonBox, QDoubleSpinBox,
                               QFormLayout, QHBoxLayout, QLabel, QLineEdit, QPushButton, QSpinBox,
                               QVBoxLayout, QWidget)

INT_MAX = 2**31 - 1


def parameters_of(generator) -> list[tuple[str, object]]:
    """(name, default) of each keyword parameter of a workload generator."""
    out = []
    for name, p in inspect.signature(generator).parameters.items():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        out.append((name, None if p.default is p.empty else p.default))
    return out


def _first_line(doc: str | None) -> str:
    return (doc or "").strip().split("\n\n")[0].replace("\n", " ")


class WorkloadDialog(QDialog):
    def __init__(self, workloads: dict, parent=None, initial: str | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Generate a workload")
        self.workloads = workloads
        self.editors: dict[str, QWidget] = {}
        self.picker = QComboBox()
        self.picker.addItems(list(workloads))
        self.about = QLabel()
        self.about.setWordWrap(True)
        self.about.setMinimumWidth(460)
        self.form_host = QWidget()
        self.form = QFormLayout(self.form_host)
        buttons = QDialogButtonBox(QDialogButtonBox.Ok | QDialogButtonBox.Cancel)
        buttons.button(QDialogButtonBox.Ok).setText("Generate")
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        top = QFormLayout()
        top.addRow("Workload", self.picker)
        box = QVBoxLayout(self)
        box.addLayout(top)
        box.addWidget(self.about)
        box.addWidget(self.form_host)
        box.addWidget(buttons)
        self.picker.currentTextChanged.connect(self._build_form)
        if initial in workloads:
            self.picker.setCurrentText(initial)
        self._build_form(self.picker.currentText())

    def _build_form(self, name: str) -> None:
        while self.form.rowCount():
            self.form.removeRow(0)
        self.editors = {}
        generator = self.workloads[name]
        self.about.setText(_first_line(generator.__doc__))
        for pname, default in parameters_of(generator):
            editor = self._editor_for(default)
            self.editors[pname] = editor
            if pname == "seed":
                editor.setGroupSeparatorShown(False)   # a seed is a name, not a quantity
                row = QHBoxLayout()
                row.addWidget(editor, 1)
                again = QPushButton("new seed")
                again.clicked.connect(lambda _=False, e=editor: e.setValue(random.randrange(1, 100000)))
                row.addWidget(again)
                self.form.addRow(pname, row)
            else:
                self.form.addRow(pname, editor)

    @staticmethod
    def _editor_for(default) -> QWidget:
        if isinstance(default, bool):
            w = QCheckBox()
            w.setChecked(default)
        elif isinstance(default, int):
            w = QSpinBox()
            w.setRange(min(0, default), INT_MAX)
            w.setGroupSeparatorShown(True)
            w.setValue(default)
        elif isinstance(default, float):
            w = QDoubleSpinBox()
            w.setRange(-1e12, 1e12)
            w.setDecimals(3)
            w.setValue(default)
        else:
            w = QLineEdit("" if default is None else str(default))
        return w

    def values(self) -> dict:
        """The parameters as typed, converted to the defaults' types."""
        out = {}
        for name, w in self.editors.items():
            if isinstance(w, QCheckBox):
                out[name] = w.isChecked()
            elif isinstance(w, (QSpinBox, QDoubleSpinBox)):
                out[name] = w.value()
            else:
                out[name] = w.text()
        return out

    def set_value(self, name: str, value) -> None:
        w = self.editors[name]
        if isinstance(w, QCheckBox):
            w.setChecked(bool(value))
        elif isinstance(w, (QSpinBox, QDoubleSpinBox)):
            w.setValue(value)
        else:
            w.setText(str(value))

    def choice(self) -> tuple[str, dict]:
        """(workload name, parameters)."""
        return self.picker.currentText(), self.values()
