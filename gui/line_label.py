"""A label kept to a fixed number of lines: the heap map's line under the map.

With two lines or more it wraps between words within them (and keeps its
height, so the map above does not jump as the text changes); a longer text
is cut at a word and ends in "…" (the whole of it in the tooltip), where a
third line was cut in half at the label's bottom edge.  With one line
it does not wrap but ends with an ellipsis where the text does not fit, and
shows the whole text as its tooltip: compare mode's seven rows need every
pixel of a 1280 x 720 projector.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QFontMetrics
from PySide6.QtWidgets import QLabel, QSizePolicy


def cut_to_lines(metrics: QFontMetrics, width: int, room: int, text: str) -> str:
    """``text`` as it fits ``room`` pixels of height when word-wrapped at
    ``width``: whole, or the most words that fit followed by " …"."""
    def fits(t: str) -> bool:
        return metrics.boundingRect(0, 0, max(1, width), 1 << 20, Qt.TextWordWrap, t).height() <= room

    if fits(text):
        return text
    words = text.split(" ")
    lo, hi = 0, len(words)          # the most words that fit, with the "…"
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if fits(" ".join(words[:mid]) + " …"):
            lo = mid
        else:
            hi = mid - 1
    return " ".join(words[:lo]) + " …"


def lines_height(metrics: QFontMetrics, lines: int) -> int:
    """What ``lines`` lines take as a label lays them out: a line is often a
    pixel taller than lineSpacing() (24 px spacing, 25 px a line at 16 pt)."""
    return metrics.boundingRect(0, 0, 1 << 20, 1 << 20, Qt.TextWordWrap, "\n".join("X" * lines)).height()


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
        self.setFixedHeight(max(self.fontMetrics().lineSpacing() * self.lines,
                                lines_height(self.fontMetrics(), self.lines)) + 4)
        self._show()

    def setText(self, text: str) -> None:      # noqa: N802 (Qt's name)
        self._full = text
        self._show()

    def full_text(self) -> str:
        return self._full

    def resizeEvent(self, event) -> None:      # noqa: N802 (Qt's name)
        super().resizeEvent(event)
        self._show()

    def _show(self) -> None:
        text = self._full
        if self.lines == 1:
            shown = self.fontMetrics().elidedText(text, Qt.ElideRight, max(0, self.width() - 2))
            self.setToolTip(text if shown != text else "")
            text = shown
        else:
            shown = cut_to_lines(self.fontMetrics(), self.contentsRect().width(), self.contentsRect().height(), text)
            self.setToolTip(text if shown != text else "")
            text = shown
        super().setText(text)
