"""The lesson's narration panel: a dock beside the views (docs/lessons.md,
"Playing a lesson").

From the top: the lesson's title, where the lesson is ("Stop 3 / 9 · step
10"), the stop's heading and its narration rendered from Markdown (Qt's
own Markdown reader: emphasis, lists, code, images found beside the lesson
file), then the stop's question with its answers -- a button per choice, or
for a click question "The Heap Will Grow" beside the click on the map --
and Show the Answer; once answered, the verdict (✓ Right / ✗ Wrong, a mark
and a word, not colour alone) and the explanation; the score; a line when
the window no longer shows the stop; and Back, Back to Stop and Next.

The panel only draws a :class:`~heapscope.gui.lesson_player.LessonPlayer`
(:meth:`LessonPanel.show_player`, on the player's ``changed``); its buttons
are the lesson's actions (Page Up, Backspace, Page Down) or call the player.
No widget of it takes the keyboard focus: the keys stay the window's.
Its text follows the application font (presenter mode, screen size) and
palette (the dark theme).
"""

from __future__ import annotations

import html
import os
import re

from PySide6.QtCore import QEvent, Qt, QTimer, Signal
from PySide6.QtCore import QUrl
from PySide6.QtWidgets import (QFrame, QLabel, QPushButton, QScrollArea, QSizePolicy,
                               QHBoxLayout, QVBoxLayout, QWidget)

from . import palette
from .predict_bar import wrap_lines

#: the panel is at least this many average characters wide
WIDTH_CHARS = 30
#: ... or this many pixels at least, when the window has no more room
LEAST_WIDTH = 200
#: a choice's text is wrapped to at most this many lines on its button
CHOICE_LINES = 3
# an image of the narration: ![alt](path), the path relative to the lesson
_IMAGE = re.compile(r"(!\[[^\]]*\]\()([^)\s]+)")


def with_image_paths(markdown: str, folder: str) -> str:
    """``markdown`` with each image's relative path made a file URL in
    ``folder`` (the lesson's), so that a label finds it."""
    def absolute(m):
        path = m.group(2)
        if re.match(r"[a-z][a-z0-9+.-]*:", path) or os.path.isabs(path):
            return m.group(0)
        return m.group(1) + QUrl.fromLocalFile(os.path.join(folder, path)).toString()
    return _IMAGE.sub(absolute, markdown)


def _label(markdown: bool = False) -> QLabel:
    label = QLabel()
    label.setWordWrap(True)
    label.setTextFormat(Qt.MarkdownText if markdown else Qt.RichText)
    label.setTextInteractionFlags(Qt.NoTextInteraction)
    label.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Preferred)
    return label


class ChoiceButton(QPushButton):
    """A choice of a question (or another answer): its text wrapped to the button's width (a
    projector's narrow panel has no room for a long answer on one line)."""

    def __init__(self, choice: str, parent=None) -> None:
        super().__init__(choice, parent)
        self.choice = choice
        self.setFocusPolicy(Qt.NoFocus)
        self.setToolTip(choice)
        self.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Fixed)

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._fit()

    def changeEvent(self, event) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.FontChange:
            self._fit()

    def _fit(self) -> None:
        metrics = self.fontMetrics()
        text = wrap_lines(self.choice, metrics, max(self.width() - 2 * metrics.averageCharWidth(), 60),
                          CHOICE_LINES)
        if text != self.text():
            self.setText(text)
        self.setFixedHeight(metrics.lineSpacing() * (text.count("\n") + 1) + metrics.height() // 2 + 6)


class MoveButton(QPushButton):
    """A lesson move's button: the action's text ("Next ▶"), or only its
    arrow where the panel is too narrow for the words; enabled with it."""

    def __init__(self, act, parent=None) -> None:
        super().__init__(parent)
        self.act = act
        self.setFocusPolicy(Qt.NoFocus)
        self.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Fixed)
        self.clicked.connect(act.trigger)
        act.changed.connect(self._sync)
        self._sync()

    def _sync(self) -> None:
        self.setEnabled(self.act.isEnabled())
        self.setToolTip(self.act.toolTip())
        self._fit()

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._fit()

    def _fit(self) -> None:
        words = self.act.iconText()
        room = self.width() - self.fontMetrics().averageCharWidth()
        short = words.replace("Back", "").replace("Stop", "").replace("Next", "").strip()
        text = words if self.fontMetrics().horizontalAdvance(words) <= room else short
        if text != self.text():
            self.setText(text)


class LessonPanel(QWidget):
    #: a choice button was pressed (its text)
    chosen = Signal(str)
    #: The Heap Will Grow (a click question's other answer)
    grow_asked = Signal()
    #: Show the Answer
    reveal_asked = Signal()

    def __init__(self, act_back, act_stop, act_next, parent=None) -> None:
        super().__init__(parent)
        self.title = _label()
        self.where = _label()
        self.heading = _label(markdown=True)
        self.narration = _label(markdown=True)
        self.narration.setOpenExternalLinks(True)
        self.narration.setTextInteractionFlags(Qt.LinksAccessibleByMouse)
        # the question, its answers, then the verdict and the explanation
        self.question_box = QFrame()
        self.question_box.setFrameShape(QFrame.StyledPanel)
        self.question = _label(markdown=True)
        self.choices_box = QVBoxLayout()
        self.choices_box.setSpacing(4)
        self.choice_buttons: list[ChoiceButton] = []
        # wrapped like the choices: a narrow panel's page must not grow wider than its view
        self.grow_button = ChoiceButton("The Heap Will Grow")
        self.grow_button.setToolTip("A click question's other answer: no free block fits")
        self.grow_button.clicked.connect(self.grow_asked)
        self.reveal_button = ChoiceButton("Show the Answer")
        self.reveal_button.setToolTip("Play the step and show the answer; the question is not scored")
        self.reveal_button.clicked.connect(self.reveal_asked)
        self.verdict = _label()
        self.explanation = _label(markdown=True)
        qbox = QVBoxLayout(self.question_box)
        qbox.setContentsMargins(6, 6, 6, 6)
        qbox.addWidget(self.question)
        qbox.addLayout(self.choices_box)
        qbox.addWidget(self.grow_button)
        qbox.addWidget(self.reveal_button)
        qbox.addWidget(self.verdict)
        qbox.addWidget(self.explanation)
        self.score = _label()
        self.message = _label()
        self.back_button, self.stop_button, self.next_button = (
            self._tool(act) for act in (act_back, act_stop, act_next))
        nav = QHBoxLayout()
        nav.setSpacing(4)
        nav.addWidget(self.back_button)
        nav.addWidget(self.stop_button)
        nav.addWidget(self.next_button)
        # the heading, the narration and the question scroll together; the
        # title, the score and the moves stay in view
        page = QWidget()
        page_box = QVBoxLayout(page)
        page_box.setContentsMargins(0, 0, 4, 0)
        page_box.setSpacing(6)
        page_box.addWidget(self.heading)
        page_box.addWidget(self.narration)
        page_box.addWidget(self.question_box)
        page_box.addStretch(1)
        self.scroll = QScrollArea()
        self.scroll.setWidget(page)
        self.scroll.setWidgetResizable(True)
        self.scroll.setFrameShape(QFrame.NoFrame)
        self.scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        self.scroll.setFocusPolicy(Qt.NoFocus)
        box = QVBoxLayout(self)
        box.setContentsMargins(6, 4, 6, 4)
        box.setSpacing(4)
        box.addWidget(self.title)
        box.addWidget(self.where)
        box.addWidget(self.scroll, 1)
        box.addWidget(self.score)
        box.addWidget(self.message)
        box.addLayout(nav)
        self._drawn = None          # (lesson, stop, answered) the narration was drawn for
        self.room: int | None = None
        self._fit_width()

    @staticmethod
    def _tool(act) -> "MoveButton":
        return MoveButton(act)

    # ================================================================ drawing
    def show_player(self, player) -> None:
        """Draw ``player``'s lesson at its stop."""
        lesson = player.lesson
        if lesson is None:
            self._drawn = None
            return
        state = player.state
        answer = player.answers.get(player.index)
        key = (id(lesson), player.index, answer)
        if key != self._drawn:
            self._drawn = key
            self._draw_stop(lesson, player.index, state, answer, player.question_open)
        self.score.setVisible(any(s.question is not None for s in lesson.stops))
        self.score.setText(f"<b>Score:</b> {html.escape(player.score_text())}")
        note = player.message
        if not note and not player.at_stop:
            note = "You have left this stop: Backspace (Back to Stop) returns to it."
        self.message.setText(f"<i>{html.escape(note)}</i>" if note else "")
        self.message.setVisible(bool(note))

    def _draw_stop(self, lesson, index: int, state, answer, open_question: bool) -> None:
        count = len(lesson.stops)
        length = f" · about {lesson.minutes} min" if lesson.minutes else ""
        self.title.setText(f"<b>{html.escape(lesson.title)}</b>")
        where = f"step {state.step}" + (f", event {state.event}" if state.event is not None else "")
        self.where.setText(f"<b>Stop {index + 1} / {count}</b> · {where}{length}")
        self.heading.setText(f"#### {state.stop.title}")
        # the narration written after the question discusses its answer: shown once answered
        text = state.stop.before_reply if open_question else state.stop.narration
        if index == 0 and lesson.text.intro:
            text = f"{lesson.text.intro}\n\n---\n\n{text}"
        self.narration.setText(with_image_paths(text, os.path.dirname(os.path.abspath(lesson.text.path))))
        self._draw_question(state.question, answer, open_question)
        self.scroll.verticalScrollBar().setValue(0)
        if state.question is not None:
            # the question and its answers in view, once laid out, below the narration's end
            QTimer.singleShot(30, self._show_question)

    def _draw_question(self, question, answer, open_question: bool) -> None:
        for b in self.choice_buttons:
            self.choices_box.removeWidget(b)
            b.deleteLater()
        self.choice_buttons = []
        self.question_box.setVisible(question is not None)
        if question is None:
            return
        how = {"click": " *Click the block it takes on the heap map, or:*",
               "words": " *Think it over, then:*"}.get(question.kind, "")
        self.question.setText(f"**Question:** {question.text}{how if open_question else ''}")
        if question.kind == "choice":
            for choice in question.choices:
                b = ChoiceButton(choice)
                b.setEnabled(open_question)
                b.clicked.connect(lambda checked=False, c=choice: self.chosen.emit(c))
                self.choices_box.addWidget(b)
                self.choice_buttons.append(b)
        self.grow_button.setVisible(question.kind == "click" and open_question)
        self.reveal_button.setVisible(open_question)
        self.verdict.setVisible(answer is not None)
        self.explanation.setVisible(answer is not None and bool(question.explain))
        if answer is None:
            return
        answer_text = f"<b>{html.escape(question.answer)}</b>"
        if question.kind == "click":
            text = html.escape(answer.verdict)
            if answer.right is not None:
                text += f" (you said {html.escape(answer.given)})"
        elif answer.right is None:
            text = f"The answer: {answer_text}"
        elif answer.right:
            text = f"<span style='color:{palette.BLUISH_GREEN}'><b>✓ Right</b></span>: {answer_text}"
        else:
            text = (f"<span style='color:{palette.VERMILLION}'><b>✗ Wrong</b></span>: you said "
                    f"{html.escape(answer.given)}; the answer is {answer_text}")
        self.verdict.setText(text)
        self.explanation.setText(question.explain)

    def _show_question(self) -> None:
        """Scroll down (only down: the narration keeps its left edge) until
        the question box's bottom is in view, its top first if it is taller."""
        bar = self.scroll.verticalScrollBar()
        box = self.question_box
        bottom = box.y() + box.height() - self.scroll.viewport().height()
        bar.setValue(max(0, min(box.y(), bottom)))
        self.scroll.horizontalScrollBar().setValue(0)

    # ================================================================ sizing
    def set_room(self, pixels: int | None) -> None:
        """The window has only ``pixels`` beside its views (None: no limit):
        the panel may be narrower than :data:`WIDTH_CHARS` characters, down
        to :data:`LEAST_WIDTH` (its text wraps), so that the window keeps
        fitting its screen (1280 x 720 in presenter mode)."""
        self.room = pixels
        self._fit_width()

    def _fit_width(self) -> None:
        wanted = self.fontMetrics().averageCharWidth() * WIDTH_CHARS
        if self.room is not None:
            wanted = max(LEAST_WIDTH, min(wanted, self.room))
        self.setMinimumWidth(wanted)

    def changeEvent(self, event) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.FontChange:       # presenter mode: wider with its text
            self._fit_width()
