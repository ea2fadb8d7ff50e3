"""The band over the heap map in predict mode: the question, the answers
one can give besides a click, the verdict with its reason, and the score.

It shows one :class:`~heapscope.gui.predict_mode.PredictSession` (one row of the
window) and redraws when the session changes.  Right and wrong are told
apart by a mark and a word (✓ Right / ✗ Wrong), not by colour alone; the
colours are Okabe & Ito's bluish green and vermillion.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QFont, QFontMetrics
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QSizePolicy, QVBoxLayout

from . import palette
from .theme import Presentation

RIGHT, WRONG = palette.BLUISH_GREEN, palette.VERMILLION
#: the verdict's reason is cut to this many lines (the whole of it in the tooltip)
REASON_LINES = 3


def wrap_lines(text: str, metrics: QFontMetrics, width: int, lines: int) -> str:
    """``text`` wrapped at word breaks to ``width`` pixels, at most ``lines``
    lines, the last one ended with '…' when the text goes on."""
    words, out, line = text.split(), [], ""
    for i, word in enumerate(words):
        trial = f"{line} {word}".strip()
        if metrics.horizontalAdvance(trial) <= width or not line:
            line = trial
            continue
        out.append(line)
        line = word
        if len(out) == lines:
            return "\n".join(out[:-1] + [metrics.elidedText(out[-1] + " " + " ".join(words[i:]),
                                                             Qt.ElideRight, width)])
    out.append(line)
    if len(out) > lines:
        out = out[:lines - 1] + [metrics.elidedText(" ".join(out[lines - 1:]), Qt.ElideRight, width)]
    return "\n".join(out)


class ReasonLabel(QLabel):
    """Plain text cut to ``lines`` lines at word breaks (a projector's short
    screen has no room for a paragraph); the tooltip holds it all."""

    def __init__(self, lines: int = REASON_LINES, parent=None) -> None:
        super().__init__(parent)
        self.lines = lines
        self.full = ""
        self.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Preferred)
        self.setAlignment(Qt.AlignLeft | Qt.AlignTop)

    def set_full_text(self, text: str) -> None:
        self.full = text
        self.setToolTip(text if text.strip() else "")
        self._fit()

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._fit()

    def changeEvent(self, event) -> None:
        super().changeEvent(event)
        if event.type() == event.Type.FontChange:
            self._fit()

    def _fit(self) -> None:
        metrics = self.fontMetrics()
        self.setFixedHeight(metrics.lineSpacing() * self.lines + 2)
        self.setText(wrap_lines(self.full, metrics, max(self.width() - 4, 80), self.lines))


class PredictBar(QFrame):
    """Question, buttons, verdict and score of one predict session."""

    def __init__(self, session, grow_action, reveal_action, parent=None, grow=None) -> None:
        """``grow_action`` and ``reveal_action`` give the buttons their keys;
        the grow button triggers ``grow_action`` (every asking row answers
        "the heap will grow"), or calls ``grow()`` when given (a compare
        row's bar: ``lambda: predict.answer(row, GROW)``)."""
        super().__init__(parent)
        self.session = session
        self.setObjectName("predict")
        self.setFrameShape(QFrame.StyledPanel)
        self.presentation = Presentation()
        self.question = ReasonLabel(lines=1)
        big = QFont(self.font())
        big.setPointSizeF(self.font().pointSizeF() * 1.2)
        big.setBold(True)
        self.question.setFont(big)
        self.score = QLabel()
        self.score.setAlignment(Qt.AlignRight | Qt.AlignVCenter)
        self.grow_button = QPushButton()
        self.grow_button.setFocusPolicy(Qt.NoFocus)
        # (the button's checked flag is not passed on: grow takes no argument)
        self._grow = grow if grow is not None else grow_action.trigger
        self.grow_button.clicked.connect(lambda _checked=False: self._grow())
        self.reveal_button = QPushButton()
        self.reveal_button.setFocusPolicy(Qt.NoFocus)
        self.reveal_button.clicked.connect(reveal_action.trigger)
        self._actions = (grow_action, reveal_action)
        self.verdict = ReasonLabel()
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

    def set_compact(self, compact: bool) -> None:
        """A crowded screen (presenter mode at 720 lines): the reason gets one
        line less (all of it stays in the tooltip), so the window still fits."""
        lines = REASON_LINES - 1 if compact else REASON_LINES
        if lines != self.verdict.lines:
            self.verdict.lines = lines
            self.verdict._fit()

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
            self.question.set_full_text(f"Step {s.pending}: malloc({size:,}). Which block will {name} take?")
        else:
            self.question.set_full_text(f"Predict ({name}): → or Space plays on to the next malloc")
        self.score.setText(f"Score: {s.score_text()}")
        muted, ink = self.presentation.muted, self.presentation.theme.ink
        if s.message:
            colour, text = WRONG, s.message
        elif asking:
            colour, text = muted, ("Click a free block on the map or in the structure view, "
                                   "or say the heap will grow.")
        elif s.last is not None:
            v = s.last
            colour = muted if v.skipped else (RIGHT if v.correct else WRONG)
            text = f"{v.headline}. {v.reason}"
        else:
            colour, text = ink, " "
        # the mark and the colour of right and wrong, on the whole reason
        self.verdict.setStyleSheet(f"color: {colour};")
        self.verdict.set_full_text(text)
