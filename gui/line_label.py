"""A label kept to a fixed number of lines: the heap map's line under the map.

With two lines or more it wraps between words within them (and keeps its
height, so the map above does not jump as the text changes).  With one line
it does not wrap but ends with an ellipsis where the text does not fit, and
shows the whole text as its tooltip: compare mode's seven rows need every
pixel of a 1280 x 720 projector.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QSizePolicy


class LineLabel(QLabel):
    """A QLabel of exactly :attr:`lines` lines of its font; ``setText`` takes
    the whole text, :meth:`full_text` gives it back (``text()`` is what shows,
    elided at one line)."""

    def __init__(self, text: str = " ", lines: int = 2, parent=None) -> None:
        super().__init__(parent)
        self.lines = lines
        self._full = text
        # A long line must not widen the window past the screen: it wraps or elides.
        self.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Fixed)
        self.setAlignment(Qt.AlignLeft | Qt.AlignTop)
        self.set_lines(lines)

    def set_lines(self, lines: int) -> None:
        """Show at most ``lines`` lines (the height follows the font: call
        again after a font change)."""
        self.lines = max(1, int(lines))
        self.setWordWrap(self.lines > 1)
        self.setFixedHeight(self.fontMetrics().lineSpacing() * self.lines + 4)
        self._show()

    def setText(self, text: str) -> None:      # noqa: N802 (Qt's name)
        self._full = text
        self._show()

    def full_text(self) -> str:
        return self._full

    def resizeEvent(self, event) -> None:      # noqa: N802 (Qt's name)
        super().resizeEvent(event)
        if self.lines == 1:
            self._show()

    def _show(self) -> None:
        text = self._full
        if self.lines == 1:
            shown = self.fontMetrics().elidedText(text, Qt.ElideRight, max(0, self.width() - 2))
            self.setToolTip(text if shown != text else "")
            text = shown
        else:
            self.setToolTip("")
        super().setText(text)
