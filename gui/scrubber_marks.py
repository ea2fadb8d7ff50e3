"""Marks on the scrubber: a tick at every step Find matched and at every
breakpoint's step, drawn over the slider's groove; while the timeline is
built in the background, the steps not built yet shaded.

The ticks are computed per pixel column (a million matches are at most as
many ticks as the groove is wide), with numpy; the widget lies over the
slider and lets the mouse through, so dragging the slider is unchanged.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QEvent, QObject, QRect, Qt
from PySide6.QtGui import QBrush, QColor, QPainter, QPen
from PySide6.QtWidgets import QStyle, QStyleOptionSlider, QWidget

#: the ticks' colours: Find's matches (Okabe-Ito vermilion), breakpoints (blue)
MATCH_INK = "#D55E00"
BREAK_INK = "#0072B2"
#: the groove past the built part while a timeline is built in the background
UNBUILT_INK = "#7f7f7f"


def tick_columns(steps: np.ndarray, n: int, left: int, span: int) -> np.ndarray:
    """The pixel columns of ``steps`` (positions 0..n) on a groove whose
    position 0 is at ``left`` and position n at ``left + span``, each once."""
    if not len(steps) or n <= 0:
        return np.zeros(0, dtype=np.int64)
    x = left + np.asarray(steps, dtype=np.int64) * span // n
    return np.unique(x)


class ScrubberMarks(QWidget):
    """Ticks over ``slider``: :meth:`set_marks` with the steps of each kind."""

    def __init__(self, slider) -> None:
        super().__init__(slider)
        self.slider = slider
        self.setAttribute(Qt.WA_TransparentForMouseEvents)
        self.setAttribute(Qt.WA_NoSystemBackground)
        self.matches = np.zeros(0, dtype=np.int64)
        self.breaks = np.zeros(0, dtype=np.int64)
        #: the last position built while a build runs (None: all built)
        self.built: int | None = None
        self._watch = _Resized(self)
        slider.installEventFilter(self._watch)
        self.setGeometry(slider.rect())

    def set_marks(self, matches=None, breaks=None) -> None:
        """Show ``matches`` (Find) and ``breaks`` (breakpoints), step numbers;
        None leaves that kind as it is."""
        if matches is not None:
            self.matches = np.asarray(matches, dtype=np.int64)
        if breaks is not None:
            self.breaks = np.asarray(breaks, dtype=np.int64)
        self.update()

    def set_built(self, built: int | None) -> None:
        """Shade the groove past position ``built`` (None: nothing shaded)."""
        if built != self.built:
            self.built = built
            self.update()

    def groove(self) -> tuple[int, int]:
        """(x of position 0, pixels to the last position) on the slider."""
        opt = QStyleOptionSlider()
        self.slider.initStyleOption(opt)
        style = self.slider.style()
        groove = style.subControlRect(QStyle.CC_Slider, opt, QStyle.SC_SliderGroove, self.slider)
        handle = style.subControlRect(QStyle.CC_Slider, opt, QStyle.SC_SliderHandle, self.slider)
        half = handle.width() // 2
        return groove.left() + half, max(1, groove.width() - handle.width())

    def paintEvent(self, event) -> None:
        n = self.slider.maximum()
        unbuilt = self.built is not None and self.built < n
        if n <= 0 or not (len(self.matches) or len(self.breaks) or unbuilt):
            return
        left, span = self.groove()
        painter = QPainter(self)
        h = self.height()
        if unbuilt:
            # not built yet: hatched grey over the groove from the built end on
            x = left + self.built * span // n
            shade = QColor(UNBUILT_INK)
            shade.setAlpha(110)
            painter.fillRect(QRect(x, h // 4, left + span - x + 1, h - h // 2), QBrush(shade, Qt.Dense4Pattern))
        for steps, ink, rect in ((self.matches, MATCH_INK, QRect(0, 0, 0, h // 2)),
                                 (self.breaks, BREAK_INK, QRect(0, h // 2, 0, h - h // 2))):
            xs = tick_columns(steps, n, left, span)
            if not len(xs):
                continue
            painter.setPen(QPen(QColor(ink), 2))
            top, bottom = rect.top(), rect.top() + rect.height()
            for x in xs.tolist():
                painter.drawLine(x, top, x, bottom)
        painter.end()


class _Resized(QObject):
    """Keeps the marks over the whole slider when it is resized."""

    def __init__(self, marks: ScrubberMarks) -> None:
        super().__init__(marks)
        self.marks = marks

    def eventFilter(self, obj, event) -> bool:
        if event.type() == QEvent.Resize:
            self.marks.setGeometry(obj.rect())
        return False
