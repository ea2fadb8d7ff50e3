"""How far the shown timeline is built, beside the scrubber, with Cancel.

While a big trace's timeline is built in the background
(gui/background_build.py) this strip in the scrubber's row says how far it
is ("building 45 %", or, when a seek waits past the built part, "waiting
for step 800,000 (built 45 %)"; the tooltip has the steps), with a Cancel
button; the scrubber itself shades the steps not built yet
(:meth:`ScrubberMarks.set_built`).  It hides when nothing is being built.  It replaces the modal progress dialog for that part of a
load: the window stays usable (step, seek the built part, play).
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHBoxLayout, QLabel, QToolButton, QWidget


def building_text(done: int, total: int, waiting: int | None) -> tuple[str, str]:
    """What the strip says after ``done`` of ``total`` steps, a seek to
    ``waiting`` (or None) waiting for them: its words, and its tooltip."""
    percent = 100 * done // total if total else 100
    tip = f"the timeline is being built: {done:,} of {total:,} steps so far"
    if waiting is not None and waiting > done:
        return f"waiting for step {waiting:,} (built {percent} %)", tip
    return f"building {percent} %", tip


class BuildBar(QWidget):
    """The strip: words, a thin bar and Cancel; bound to a BackgroundBuild and the model."""

    def __init__(self, background, model, parent=None) -> None:
        super().__init__(parent)
        self.background, self.model = background, model
        self.label = QLabel("")
        self.cancel_button = QToolButton()
        self.cancel_button.setText("Cancel")
        self.cancel_button.setFocusPolicy(Qt.NoFocus)
        self.cancel_button.setToolTip("Stop building: the timeline ends at the steps built so far")
        self.cancel_button.clicked.connect(background.cancel)
        row = QHBoxLayout(self)
        row.setContentsMargins(8, 0, 0, 0)
        row.addWidget(self.label)
        row.addWidget(self.cancel_button)
        self._done, self._total = 0, 0
        background.progress.connect(self._progress)
        background.ended.connect(lambda whole: self._refresh())
        model.waiting_changed.connect(lambda _: self._refresh())
        model.shown_changed.connect(self._refresh)
        self.hide()

    def _progress(self, done: int, total: int) -> None:
        self._done, self._total = done, total
        self._refresh()

    def _refresh(self) -> None:
        if not (self.background.active and self.model.building()):
            self.hide()
            return
        done, total = self._done, self._total
        text, tip = building_text(done, total, self.model.waiting)
        if self.label.text() != text:
            self.label.setText(text)
            self.label.setToolTip(tip)
        self.show()
