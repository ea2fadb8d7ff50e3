"""File > Workload: pick one of the seeds' workload generators, one of the
seed's own runs, and the parameters.

The form is built from the parameters each generator declares
(:func:`heapscope.traces.workloads.workload`, the same
:class:`~heapscope.allocators.params.Param` declarations strategies use): a
spin box bounded by the parameter's range for a whole number, a list for a
choice, a check box for true/false, a text field for a size (``128K`` is read
by the shared value parsing of :mod:`heapscope.values`), each starting at the
default and explained by its help in a tooltip.  ``seed`` gets a "new seed"
button.  "Seed's runs" sets the parameters of a run the seed itself made
(Plotnick's four, Machin's smaller blocks, Dowdeswell's region counts).  A
value out of range is named under the form and the dialog stays open.  The
dialog does not run the generator: the window does, off the GUI thread, with
:meth:`WorkloadDialog.choice`.
"""

from __future__ import annotations

import random

from PySide6.QtWidgets import (QCheckBox, QComboBox, QDialog, QDialogButtonBox, QFormLayout,
                               QHBoxLayout, QLabel, QLineEdit, QPushButton, QSpinBox, QVBoxLayout,
                               QWidget)

from heapscope.allocators.params import BOOL, SIZE, Param, ParamError
from heapscope.values import format_size

INT_MAX = 2**31 - 1
#: the first entry of the runs list: the parameters as they are
YOUR_OWN = "(your own parameters)"


def parameters_of(generator) -> list[tuple[str, object]]:
    """(name, default) of each parameter a workload generator declares."""
    return [(p.name, p.default) for p in generator.params]


def _first_paragraph(doc: str | None) -> str:
    return " ".join((doc or "").strip().split("\n\n")[0].split())


class WorkloadDialog(QDialog):
    def __init__(self, workloads: dict, parent=None, initial: str | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Generate a workload")
        self.workloads = workloads
        self.editors: dict[str, QWidget] = {}
        self.params: dict[str, Param] = {}
        self.picker = QComboBox()
        self.picker.addItems(list(workloads))
        self.runs = QComboBox()
        self.runs.setToolTip("runs the seed itself made: sets their parameters")
        self.about = QLabel()
        self.about.setWordWrap(True)
        self.about.setMinimumWidth(460)
        self.form_host = QWidget()
        self.form = QFormLayout(self.form_host)
        self.problem = QLabel()
        self.problem.setWordWrap(True)
        self.problem.setStyleSheet("color: #D55E00")
        self.buttons = QDialogButtonBox(QDialogButtonBox.Ok | QDialogButtonBox.Cancel)
        self.buttons.button(QDialogButtonBox.Ok).setText("Generate")
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        top = QFormLayout()
        top.addRow("Workload", self.picker)
        top.addRow("Seed's runs", self.runs)
        box = QVBoxLayout(self)
        box.addLayout(top)
        box.addWidget(self.about)
        box.addWidget(self.form_host)
        box.addWidget(self.problem)
        box.addWidget(self.buttons)
        self.picker.currentTextChanged.connect(self._build_form)
        self.runs.activated.connect(self._apply_run)
        if initial in workloads:
            self.picker.setCurrentText(initial)
        self._build_form(self.picker.currentText())

    # ------------------------------------------------------------ the form
    def _build_form(self, name: str) -> None:
        while self.form.rowCount():
            self.form.removeRow(0)
        self.editors = {}
        generator = self.workloads[name]
        self.params = {p.name: p for p in generator.params}
        self.about.setText(_first_paragraph(generator.__doc__))
        self.problem.clear()
        self.runs.clear()
        self.runs.addItem(YOUR_OWN)
        self.runs.addItems(list(generator.presets))
        for p in generator.params:
            editor = self._editor_for(p)
            editor.setToolTip(f"{p.help}; {p.accepts()}")
            self.editors[p.name] = editor
            if p.name == "seed":
                editor.setGroupSeparatorShown(False)   # a seed is a name, not a quantity
                row = QHBoxLayout()
                row.addWidget(editor, 1)
                again = QPushButton("new seed")
                again.clicked.connect(lambda _=False, e=editor: e.setValue(random.randrange(1, 100000)))
                row.addWidget(again)
                self.form.addRow(p.name, row)
            else:
                self.form.addRow(p.name, editor)

    @staticmethod
    def _editor_for(p: Param) -> QWidget:
        if p.kind == BOOL:
            w = QCheckBox()
            w.setChecked(bool(p.default))
        elif p.choices:
            w = QComboBox()
            w.addItems([str(c) for c in p.choices])
            w.setCurrentText(str(p.default))
        elif p.kind == SIZE:
            w = QLineEdit(format_size(p.default))
            w.setPlaceholderText("bytes: 4096, 8K, 2M")
        else:
            w = QSpinBox()
            w.setRange(max(p.low, -INT_MAX), min(p.high, INT_MAX))
            w.setGroupSeparatorShown(True)
            w.setValue(p.default)
        return w

    def _apply_run(self, index: int) -> None:
        label = self.runs.itemText(index)
        presets = self.workloads[self.picker.currentText()].presets
        if label not in presets:
            return
        for name, p in self.params.items():
            self.set_value(name, presets[label].get(name, p.default))
        self.problem.clear()

    # ------------------------------------------------------------ values
    def values(self) -> dict:
        """The parameters as chosen, each read and checked by its declaration
        (ParamError names the one that is not accepted)."""
        out = {}
        owner = f"workload {self.picker.currentText()!r}"
        for name, w in self.editors.items():
            p = self.params[name]
            if isinstance(w, QCheckBox):
                out[name] = w.isChecked()
            elif isinstance(w, QComboBox):
                out[name] = p.parse(w.currentText(), owner)
            elif isinstance(w, QSpinBox):
                out[name] = p.check(w.value(), owner)
            else:
                out[name] = p.parse(w.text(), owner)
        return out

    def set_value(self, name: str, value) -> None:
        w = self.editors[name]
        if isinstance(w, QCheckBox):
            w.setChecked(bool(value))
        elif isinstance(w, QComboBox):
            w.setCurrentText(str(value))
        elif isinstance(w, QSpinBox):
            w.setValue(value)
        else:
            w.setText(format_size(value) if isinstance(value, int) else str(value))

    def choice(self) -> tuple[str, dict]:
        """(workload name, parameters)."""
        return self.picker.currentText(), self.values()

    def accept(self) -> None:
        try:
            self.values()
        except ParamError as exc:
            self.problem.setText(str(exc))
            return
        super().accept()
