"""The strip under the heap: transport buttons, the scrubber, the step box, the
speed, and the current step in words (with the event shown, during a
micro-step or an animated step: "event 3 of 8" and its line).

The buttons show the window's QActions (the same ones the menus and keys
trigger), so there is one place where each command is defined.  The bar only
reports what the user asked for (:attr:`TimelineBar.seek_requested`,
:attr:`TimelineBar.speed_requested`).  Bound to the window's
:class:`~heapscope.gui.show_model.ShowModel`, a seek request moves the model, and the
bar shows the model's position and its step in words.
"""

from __future__ import annotations

from PySide6.QtCore import QSignalBlocker, Qt, Signal
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (QComboBox, QHBoxLayout, QLabel, QSlider, QSpinBox, QToolButton,
                               QVBoxLayout, QWidget)

from .player import SPEEDS
from .scrubber_marks import ScrubberMarks
from .step_words import request_words
from .subscriber import Subscriber

#: what the step line says when no trace is shown
NOTHING_LOADED = "No trace loaded: File > Open (Ctrl+O) or File > Workload (Ctrl+N)."


def unbreakable_tail(text: str) -> str:
    """``text`` with the spaces of its trailing ``[file line N]`` made
    no-break, so a wrapped step line never splits the file from its line."""
    head, sep, tail = text.rpartition("[")
    if not sep or not tail.endswith("]"):
        return text
    return head + sep + tail.replace(" ", "\u00a0")


class TimelineBar(Subscriber, QWidget):
    seek_requested = Signal(int)
    speed_requested = Signal(int)

    SUBSCRIBES = {"shown_changed": "_model_shown", "step_changed": "_model_step",
                  "event_changed": "_model_event", "built_changed": "_model_built"}
    REQUESTS = {"seek_requested": "seek"}

    def __init__(self, actions: dict, parent=None) -> None:
        """``actions``: QActions named start, back, play, forward, end."""
        super().__init__(parent)
        self.n = 0
        buttons = []
        for name in ("start", "back", "play", "forward", "end"):
            b = QToolButton()
            b.setDefaultAction(actions[name])
            b.setToolButtonStyle(Qt.ToolButtonIconOnly)
            b.setAutoRaise(True)
            b.setFocusPolicy(Qt.NoFocus)
            b.setIconSize(b.iconSize() * 1.5)
            buttons.append(b)
        self.buttons = buttons
        self._icon_size = buttons[0].iconSize()
        self.play_button = buttons[2]

        self.slider = QSlider(Qt.Horizontal)
        self.slider.setFocusPolicy(Qt.NoFocus)   # arrows and Space belong to the window
        self.slider.setRange(0, 0)
        self.slider.setTracking(True)
        self.slider.valueChanged.connect(self._slider_moved)
        #: ticks at Find's matches and the breakpoints' steps (gui/find_part.py)
        self.marks = ScrubberMarks(self.slider)

        self.step_box = QSpinBox()
        self.step_box.setRange(0, 0)
        self.step_box.setKeyboardTracking(False)
        self.step_box.setToolTip("type a step and press Enter (Ctrl+G)")
        self.step_box.setFocusPolicy(Qt.ClickFocus)
        self.step_box.valueChanged.connect(self._step_typed)
        self.of_label = QLabel("of 0")
        #: "event 3 of 8" while the step is shown up to one of its events
        self.event_label = QLabel("")
        self.event_label.setToolTip("the event of the step shown (Shift+Left / Shift+Right)")
        self._step_text = " "

        self.speed_box = QComboBox()
        self.speed_box.setFocusPolicy(Qt.NoFocus)
        for s in SPEEDS:
            self.speed_box.addItem(f"{s:,} steps/s", s)
        self.speed_box.setToolTip("playback speed (+ / −)")
        self.speed_box.activated.connect(lambda i: self.speed_requested.emit(self.speed_box.itemData(i)))

        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        for b in buttons:
            row.addWidget(b)
        row.addWidget(self.slider, 1)
        row.addWidget(QLabel("step"))
        row.addWidget(self.step_box)
        row.addWidget(self.of_label)
        row.addSpacing(8)
        row.addWidget(self.event_label)
        row.addSpacing(12)
        row.addWidget(QLabel("speed"))
        row.addWidget(self.speed_box)

        self.description = QLabel(" ")
        big = QFont(self.font())
        big.setPointSizeF(self.font().pointSizeF() * 1.3)
        self.description.setFont(big)
        self.description.setWordWrap(True)
        self.description.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.description.setMinimumHeight(self.description.fontMetrics().height() * 2 + 4)
        self.description.setAlignment(Qt.AlignLeft | Qt.AlignTop)

        self._row = row
        box = QVBoxLayout(self)
        box.setContentsMargins(6, 2, 6, 4)
        box.setSpacing(2)
        box.addLayout(row)
        box.addWidget(self.description)

    def add_to_row(self, widget: QWidget) -> None:
        """Put ``widget`` in the scrubber's row, after the step box (the
        build's progress, gui/build_bar.py)."""
        row = self._row
        row.insertWidget(row.indexOf(self.of_label) + 1, widget)

    def apply_presentation(self, pres) -> None:
        """Bigger buttons and step text with the text (presenter mode)."""
        for b in self.buttons:
            b.setIconSize(self._icon_size * pres.text_scale)
        big = QFont(self.description.font())
        big.setPointSizeF(pres.pt(1.3))
        self.description.setFont(big)
        self.description.setMinimumHeight(self.description.fontMetrics().lineSpacing() * 2 + 4)
        self.set_length(self.n)

    def set_length(self, n: int) -> None:
        """A new timeline of n steps (positions 0..n)."""
        self.n = n
        with QSignalBlocker(self.slider), QSignalBlocker(self.step_box):
            self.slider.setRange(0, n)
            self.slider.setPageStep(max(1, n // 20))
            self.step_box.setRange(0, n)
            self.step_box.setMinimumWidth(self.step_box.fontMetrics().horizontalAdvance(f"{n:,}0") + 30)
        self.of_label.setText(f"of {n:,}")
        # room kept for "event i of n": the bar does not shift while a step
        # plays, and a played step ends on the picture a seek gives
        self.event_label.setMinimumWidth(self.event_label.fontMetrics().horizontalAdvance("event 88 of 88"))

    def show_position(self, position: int, description: str) -> None:
        with QSignalBlocker(self.slider), QSignalBlocker(self.step_box):
            self.slider.setValue(position)
            self.step_box.setValue(position)
        self._step_text = unbreakable_tail(description)
        self.description.setText(self._step_text)

    def model_bound(self) -> None:
        self._model_shown()
        self._model_step()

    def _model_shown(self) -> None:
        self.set_length(self.model.n)
        self._model_built()

    def _model_built(self) -> None:
        """Shade the steps not built yet (none once built); a stopped build
        ends the timeline where it stopped."""
        if self.model.n != self.n:
            self.set_length(self.model.n)
        self.marks.set_built(self.model.ready if self.model.building() else None)

    def _model_step(self, position: int | None = None) -> None:
        step = self.model.step(self.row)
        if step is None:
            self.show_position(0, NOTHING_LOADED)
        elif len(self.model.shown) > 1:
            # compare mode: the request, the same for every row (each row says what its strategy did)
            self.show_position(step.position, request_words(self.model))
        else:
            self.show_position(step.position, step.describe())
        self._model_event(self.model.event_index)

    def _model_event(self, index=None) -> None:
        """Say which event of the step is shown, and what it did."""
        step = self.model.step(self.row) if self.model is not None else None
        if step is None or index is None or not self.model.event_count:
            text, line = "", self._step_text
        elif len(self.model.shown) > 1:
            # compare mode: the rows move in lockstep, each through its own events
            text = f"event {index + 1} of {self.model.event_count}"
            line = (f"{self._step_text}\n\u25b6 {text}: each row at its own event {index + 1} "
                    f"(a row whose step has fewer shows its last)")
        else:
            n = step.event_count
            text = f"event {index + 1} of {n}"
            explained = step.explained
            said = explained[index].text if index < len(explained) else ""
            line = f"{self._step_text}\n\u25b6 {text}: {said}"
        if self.event_label.text() != text:
            self.event_label.setText(text)
        if self.description.text() != line:
            self.description.setText(line)

    def event_text(self) -> str:
        """The "event i of n" shown ("" for the whole step)."""
        return self.event_label.text()

    def show_speed(self, speed: int) -> None:
        i = self.speed_box.findData(speed)
        if i < 0:
            self.speed_box.addItem(f"{speed:,} steps/s", speed)
            i = self.speed_box.count() - 1
        self.speed_box.setCurrentIndex(i)

    def _slider_moved(self, value: int) -> None:
        self.seek_requested.emit(value)

    def _step_typed(self, value: int) -> None:
        self.seek_requested.emit(value)
