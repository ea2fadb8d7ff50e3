"""The band over the heap map in predict mode: the question, the answers
one can give besides a click, the verdict with its reason, and the score.

It shows one :class:`~gui.predict_mode.PredictSession` (one row of the
window) and redraws when the session changes.  Right and wrong are told
apart by a mark and a word (✓ Right / ✗ Wrong), not by colour alone; the
colours are Okabe & Ito's bluish green and vermillion.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QSizePolicy, QVBoxLayout

from . import palette
from .theme import Presentation

RIGHT, WRONG = palette.BLUISH_GREEN, palette.VERMILLION


class PredictBar(QFrame):
    """Question, buttons, verdict and score of one predict session."""

    def __init__(self, session, grow_action, reveal_action, parent=None) -> None:
        super().__init__(parent)
        self.session = session
        self.setObjectName("predict")
        self.setFrameShape(QFrame.StyledPanel)
        self.presentation = Presentation()
        self.question = QLabel()
        big = QFont(self.font())
        big.setPointSizeF(self.font().pointSizeF() * 1.25)
        big.setBold(True)
        self.question.setFont(big)
        self.question.setWordWrap(True)
        self.question.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Preferred)
        self.score = QLabel()
        self.score.setAlignment(Qt.AlignRight | Qt.AlignVCenter)
        self.grow_button = QPushButton()
        self.grow_button.setFocusPolicy(Qt.NoFocus)
        self.grow_button.clicked.connect(grow_action.trigger)
        self.reveal_button = QPushButton()
        self.reveal_button.setFocusPolicy(Qt.NoFocus)
        self.reveal_button.clicked.connect(reveal_action.trigger)
        self._actions = (grow_action, reveal_action)
        self.verdict = QLabel()
        self.verdict.setWordWrap(True)
        self.verdict.setTextFormat(Qt.RichText)
        self.verdict.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Preferred)
        self.verdict.setTextInteractionFlags(Qt.TextSelectableByMouse)
        top = QHBoxLayout()
        top.addWidget(self.question, 1)
        top.addWidget(self.grow_button)
        top.addWidget(self.reveal_button)
        top.addWidget(self.score)
        box = QVBoxLayout(self)
        box.setContentsMargins(8, 4, 8, 4)
        box.setSpacing(2)
        box.addLayout(top)
        box.addWidget(self.verdict)
        session.changed.connect(self.refresh)
        self.refresh()

    def apply_presentation(self, pres: Presentation) -> None:
        self.presentation = pres
        self.refresh()

    def refresh(self) -> None:
        s = self.session
        self.setVisible(s.active)
        if not s.active:
            return
        name = s.strategy_name() or "the strategy"
        grow, reveal = (a.shortcut().toString() for a in self._actions)
        self.grow_button.setText(f"The heap will grow ({grow})")
        self.reveal_button.setText(f"Show the answer ({reveal})")
        asking = s.pending is not None
        self.grow_button.setEnabled(asking and s.guess is None)
        self.reveal_button.setEnabled(asking)
        if asking:
            tl = s.timeline()
            kind, ident, size = tl.op(s.pending)
            self.question.setText(f"Predict: step {s.pending}, malloc({size:,}) for id {ident}. "
                                  f"Click the block {name} will take.")
        else:
            self.question.setText(f"Predict mode ({name}): press → or Space; the replay stops before "
                                  f"each malloc for your answer.")
        self.score.setText(f"Score: {s.score_text()}")
        muted = self.presentation.muted
        if s.message:
            self.verdict.setText(f'<span style="color:{WRONG}">{_esc(s.message)}</span>')
        elif asking:
            self.verdict.setText(f'<span style="color:{muted}">Click a free block on the map or in '
                                 f'the structure view; or say the heap will grow.</span>')
        elif s.last is not None:
            v = s.last
            colour = muted if v.skipped else (RIGHT if v.correct else WRONG)
            self.verdict.setText(f'<b style="color:{colour}">{_esc(v.headline)}.</b> {_esc(v.reason)}')
        else:
            self.verdict.setText(" ")


def _esc(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
