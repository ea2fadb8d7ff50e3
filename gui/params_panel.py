"""The parameters panel: every declared parameter of each shown strategy,
edited in the window (View > Parameters, ``K``).

One group per shown strategy (each compare row), one line per parameter
its class declares (:func:`heapscope.allocators.params.declared`: the
policy's own and those every strategy takes), with what it accepts and its
help (the same texts as ``heapscope strategies`` and the docs' tables).  A
value is checked as the command line checks ``-P`` (:meth:`Param.parse`, and
the strategy built with it); a bad one is refused with the reason under its
group and nothing replays.  A good one is an edit of the sandbox
(:meth:`heapscope.sandbox.Sandbox.set_params`): the strategy's timeline is
rebuilt with it, and Edit > Undo takes it back.

**Small-demo constants** (:mod:`heapscope.allocators.small_demo`): the
button (or Edit > Small-Demo Constants, ``Ctrl+D``) keeps each shown
policy and scales its growth constants to the trace; the panel and the
status bar say what changed.  For a small trace whose heap is mostly free
the panel offers it (:meth:`ParamsPanel.offer`).
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (QCheckBox, QComboBox, QGroupBox, QLabel, QLineEdit,
                               QPushButton, QScrollArea, QVBoxLayout, QWidget)

from heapscope.allocators.params import BOOL, SIZE, ParamError, declared
from heapscope.allocators.registry import STRATEGIES, make_strategy
from heapscope.allocators.small_demo import SMALL_TRACE_OPS, small_demo
from heapscope.allocators.strategy import Strategy
from heapscope.values import format_size

#: the panel offers the small-demo constants when a row's heap is used less than this at its peak
OFFER_BELOW = 0.3


def value_text(p, value) -> str:
    """A parameter's value as the panel writes it (and reads it back)."""
    if value is None:
        return "none"
    if p.kind == BOOL:
        return "true" if value else "false"
    return format_size(value) if p.kind == SIZE else str(value)


def own_first(cls) -> list:
    """``cls``'s parameters, its policy's own first (K&R's nalloc), then
    those every strategy takes (word, align, heap_limit, pool_size)."""
    params = declared(cls)
    common = declared(Strategy)
    return ([p for name, p in params.items() if name not in common]
            + [p for name, p in params.items() if name in common])


class ParamsPanel(QWidget):
    """The panel (module docstring); ``window`` gives the shown rows, their
    parameters and the sandbox part that applies an edit."""

    #: a value was refused: (strategy, parameter, message)
    refused = Signal(str, str, str)

    def __init__(self, window) -> None:
        super().__init__()
        self.window = window
        self.editors: dict[tuple[str, str], QWidget] = {}
        self.errors: dict[str, QLabel] = {}
        self.offer_label = QLabel("")
        self.offer_label.setWordWrap(True)
        self.small_button = QPushButton("Small demo")
        self.small_button.setToolTip("Keep each policy, scale its growth constants to this trace "
                                     "(K&R's NALLOC, chunk and page sizes) so that it fills the map")
        self.small_button.clicked.connect(self.apply_small_demo)
        self.note = QLabel("")
        self.note.setWordWrap(True)
        self.groups = QWidget()
        self.groups_box = QVBoxLayout(self.groups)
        self.groups_box.setContentsMargins(0, 0, 0, 0)
        scroll = QScrollArea()
        scroll.setWidget(self.groups)
        scroll.setWidgetResizable(True)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        self.small_button.setMinimumWidth(0)
        box = QVBoxLayout(self)
        box.setContentsMargins(4, 4, 4, 4)
        box.addWidget(self.offer_label)
        box.addWidget(self.small_button)
        box.addWidget(self.note)
        box.addWidget(scroll, 1)
        #: {timeline key: its group} of the rows shown
        self._groups: dict[tuple, QGroupBox] = {}
        window.model.shown_changed.connect(lambda: self.rebuild(keep_shown=True))
        window.edits.changed.connect(lambda edit: self.rebuild())
        self.rebuild()

    # ------------------------------------------------------------- reading
    def shown_strategies(self) -> list[str]:
        return [key[0] for key in self.window.model.shown]

    def value_of(self, strategy: str, name: str):
        """What ``strategy`` is built with for parameter ``name`` now."""
        p = declared(STRATEGIES[strategy])[name]
        return self.window.params_for(strategy).get(name, p.default)

    # ------------------------------------------------------------ building
    def rebuild(self, keep_shown: bool = False) -> None:
        """One group per shown strategy, its values as they are now;
        ``keep_shown`` (other rows shown): the groups of timelines still
        shown stay as they are, only the new rows' are made (a compare row
        joining those shown remade all seven groups: issue 25's stall probe)."""
        keys = list(self.window.model.shown)
        kept = {k: g for k, g in self._groups.items() if keep_shown and k in keys}
        while self.groups_box.count():
            self.groups_box.takeAt(0)       # (the stretch; the groups are put back below)
        for key, group in self._groups.items():
            if key not in kept:
                group.hide()
                group.deleteLater()
                self.errors.pop(key[0], None)
                for name in [e for e in self.editors if e[0] == key[0]]:
                    del self.editors[name]
        self._groups = {}
        for key in keys:
            self._groups[key] = kept.get(key) or self._group(key[0])
            self.groups_box.addWidget(self._groups[key])
        self.groups_box.addStretch(1)
        self.offer()

    def _group(self, strategy: str) -> QGroupBox:
        """The strategy's parameters one under the other (the panel is a
        narrow column: beside the map at 1280 x 720 in presenter mode)."""
        group = QGroupBox(strategy)
        column = QVBoxLayout(group)
        column.setSpacing(1)
        for p in own_first(STRATEGIES[strategy]):
            editor = self._editor(strategy, p)
            editor.setToolTip(f"{p.help}\naccepts {p.accepts()}; default {p.default_text()}")
            self.editors[(strategy, p.name)] = editor
            name = QLabel(f"<b>{p.name}</b>")
            hint = QLabel(f"{p.accepts()}; default {p.default_text()}. {p.help}")
            hint.setWordWrap(True)
            column.addWidget(name)
            column.addWidget(editor)
            column.addWidget(hint)
            column.addSpacing(4)
        error = self.errors[strategy] = QLabel("")
        error.setWordWrap(True)
        error.setStyleSheet("color: #d55e00;")
        error.hide()
        column.addWidget(error)
        return group

    def _editor(self, strategy: str, p) -> QWidget:
        value = self.value_of(strategy, p.name)
        if p.kind == BOOL:
            box = QCheckBox()
            box.setChecked(bool(value))
            box.toggled.connect(lambda on, s=strategy, p=p: self.set_value(s, p.name, on))
            return box
        if p.choices:
            combo = QComboBox()
            options = ([None] if p.none_ok else []) + list(p.choices)
            for option in options:
                combo.addItem(value_text(p, option), option)
            combo.setCurrentIndex(options.index(value) if value in options else 0)
            combo.activated.connect(lambda i, s=strategy, p=p, c=combo: self.set_value(s, p.name, c.itemData(i)))
            return combo
        line = QLineEdit(value_text(p, value))
        line.editingFinished.connect(lambda s=strategy, p=p, e=line: self.set_text(s, p.name, e.text()))
        return line

    # ------------------------------------------------------------- editing
    def set_text(self, strategy: str, name: str, text: str) -> bool:
        """The value typed for ``name``: parsed as ``-P`` parses it, then set."""
        p = declared(STRATEGIES[strategy])[name]
        try:
            value = p.parse(text, strategy)
        except ParamError as exc:
            return self._refuse(strategy, name, str(exc))
        return self.set_value(strategy, name, value)

    def set_value(self, strategy: str, name: str, value) -> bool:
        """Build ``strategy`` with ``name`` = ``value`` (a replay, undoable);
        refused with the reason when the strategy does not take it."""
        w = self.window
        if value == self.value_of(strategy, name):
            self._clear_error(strategy)
            return True
        own = dict(w.strategy_params.get(strategy, {}))
        base = {**w.params}.get(name, declared(STRATEGIES[strategy])[name].default)
        if value == base:
            own.pop(name, None)
        else:
            own[name] = value
        try:
            make_strategy(strategy, **{**w.params, **own})      # the checks a build makes
        except (ParamError, ValueError, TypeError) as exc:
            return self._refuse(strategy, name, str(exc))
        self._clear_error(strategy)
        w.edits.edit(lambda box, step: box.set_params(strategy, own, step), animate=False)
        return True

    def _refuse(self, strategy: str, name: str, message: str) -> bool:
        label = self.errors.get(strategy)
        if label is not None:
            label.setText(message)
            label.show()
        editor = self.editors.get((strategy, name))
        if isinstance(editor, QLineEdit):
            editor.setStyleSheet("border: 2px solid #d55e00;")
        self.refused.emit(strategy, name, message)
        return False

    def _clear_error(self, strategy: str) -> None:
        label = self.errors.get(strategy)
        if label is not None:
            label.hide()

    # ---------------------------------------------------------- small demo
    def presets(self) -> list:
        trace = self.window.model.trace
        if trace is None:
            return []
        word = self.window.params.get("word", 8)
        return [small_demo(name, trace, word) for name in self.shown_strategies()]

    def offer(self) -> bool:
        """Offer the small-demo constants when the trace is small, some row's
        heap is mostly free and its constants are not applied yet; whether
        it is offered."""
        model = self.window.model
        trace = model.trace
        offered = False
        if trace is not None and 0 < len(trace) <= SMALL_TRACE_OPS:
            for row, preset in enumerate(self.presets()):
                series = model.timeline(row).series
                peak = int(series.heap.max()) if series.n else 0
                if (preset.params and peak and series.in_use.max() / peak < OFFER_BELOW
                        and any(self.value_of(preset.strategy, k) != v for k, v in preset.params.items())):
                    offered = True
                    self.offer_label.setText(
                        f"A small trace: {preset.strategy}'s heap reaches {format_size(peak)} for "
                        f"{format_size(int(series.in_use.max()))} of blocks. The small-demo constants "
                        "keep each policy and shrink its growth to this trace.")
                    break
        if not offered:
            self.offer_label.setText("")     # no old offer's words under a hidden label
        self.offer_label.setVisible(offered)
        self.small_button.setEnabled(trace is not None and any(p.params for p in self.presets()))
        return offered

    def apply_small_demo(self) -> str:
        """Every shown strategy with its small-demo constants, as one edit;
        what changed, in words (also in the panel and the status bar)."""
        w = self.window
        presets = self.presets()
        wanted = {p.strategy: {**w.strategy_params.get(p.strategy, {}), **p.params} for p in presets}
        said = "Small-demo constants: " + "; ".join(p.text() for p in presets)
        if not presets:
            return ""
        w.edits.edit(lambda box, step: box.set_many(wanted, step), animate=False)
        self.note.setText(said)
        w.statusBar().showMessage(said, 10000)
        return said
