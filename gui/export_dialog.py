"""File > Export: what to save, in which format, which steps, how fast.

The dialog only gathers an :class:`~heapscope.gui.export.ExportRequest`; the window
runs it (:meth:`MainWindow.run_export`, :func:`export_with_progress`) with a
progress dialog that can be cancelled.  The formats offered follow what is chosen: a part of the window
as PNG, SVG, GIF or MP4 (MP4 greyed out, with the reason, when no encoder
is installed), the measures over time as CSV or JSON.  The step range and
the frame rate matter for animations and measures only.
"""

from __future__ import annotations

import os

from PySide6.QtCore import QCoreApplication, QEventLoop, Qt
from PySide6.QtWidgets import (QCheckBox, QComboBox, QDialog, QDialogButtonBox, QDoubleSpinBox, QFileDialog,
                               QFormLayout, QHBoxLayout, QLabel, QLineEdit, QPushButton, QSpinBox,
                               QVBoxLayout)

from . import export

#: (key, label) of what can be exported, in the dialog's order
WHAT = [(key, label[0].upper() + label[1:]) for key, label in export.PARTS.items()] + [
    ("measures", "The measures over time")]
FORMAT_LABELS = {"png": "PNG picture", "svg": "SVG picture (vectors)", "gif": "GIF animation of the steps",
                 "mp4": "MP4 video of the steps", "csv": "CSV table", "json": "JSON"}


class ExportDialog(QDialog):
    """Choose the part, the format, the steps, the frame rate and the file."""

    def __init__(self, n: int, position: int, folder: str = "", parent=None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Export")
        self.n, self.position = n, position
        self.folder = folder
        self.what = QComboBox()
        for key, label in WHAT:
            self.what.addItem(label, key)
        self.format = QComboBox()
        self.first = QSpinBox()
        self.last = QSpinBox()
        for box, value in ((self.first, position), (self.last, min(n, position + 20))):
            box.setRange(0, n)
            box.setValue(value)
            box.setKeyboardTracking(False)
        self.fps = QDoubleSpinBox()
        self.fps.setRange(0.2, 60.0)
        self.fps.setDecimals(1)
        self.fps.setValue(4.0)
        self.fps.setSuffix(" frames/s")
        self.animate = QCheckBox("Play each step's events (several frames a step, as at 1 step/s)")
        self.animate.toggled.connect(self._animate_toggled)
        self.path = QLineEdit()
        browse = QPushButton("Browse…")
        browse.clicked.connect(self._browse)
        file_row = QHBoxLayout()
        file_row.addWidget(self.path, 1)
        file_row.addWidget(browse)
        steps_row = QHBoxLayout()
        steps_row.addWidget(self.first)
        steps_row.addWidget(QLabel("to"))
        steps_row.addWidget(self.last)
        steps_row.addStretch(1)
        self.note = QLabel(" ")
        self.note.setWordWrap(True)
        form = QFormLayout()
        form.addRow("Export", self.what)
        form.addRow("As", self.format)
        form.addRow("Steps", steps_row)
        form.addRow("Frame rate", self.fps)
        form.addRow("", self.animate)
        form.addRow("File", file_row)
        self.buttons = QDialogButtonBox(QDialogButtonBox.Save | QDialogButtonBox.Cancel)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        box = QVBoxLayout(self)
        box.addLayout(form)
        box.addWidget(self.note)
        box.addWidget(self.buttons)
        self.what.currentIndexChanged.connect(self._what_changed)
        self.format.currentIndexChanged.connect(self._format_changed)
        self._what_changed()

    # ---------------------------------------------------------------- state
    def part(self) -> str:
        return self.what.currentData()

    def fmt(self) -> str:
        return self.format.currentData()

    def _what_changed(self, *_) -> None:
        measures = self.part() == "measures"
        keep = self.fmt()
        self.format.blockSignals(True)
        self.format.clear()
        formats = export.MEASURE_FORMATS if measures else export.PICTURE_FORMATS + export.ANIMATION_FORMATS
        video = export.video_unavailable()
        for f in formats:
            self.format.addItem(FORMAT_LABELS[f], f)
            if f == "mp4" and video:
                item = self.format.model().item(self.format.count() - 1)
                item.setEnabled(False)
                item.setToolTip(video)
        i = self.format.findData(keep)
        self.format.setCurrentIndex(i if i >= 0 and self.format.model().item(i).isEnabled() else 0)
        self.format.blockSignals(False)
        if measures:
            self.first.setValue(1)
            self.last.setValue(self.n)
        self._format_changed()

    def _format_changed(self, *_) -> None:
        fmt = self.fmt()
        ranged = fmt in export.ANIMATION_FORMATS + export.MEASURE_FORMATS
        self.first.setEnabled(ranged)
        self.last.setEnabled(ranged)
        self.fps.setEnabled(fmt in export.ANIMATION_FORMATS)
        self.animate.setEnabled(fmt in export.ANIMATION_FORMATS)
        notes = {"png": "The pixels as on screen.",
                 "svg": "Vectors: text, outlines and the heap's blocks stay sharp at any size.",
                 "gif": "One frame per step; GIF keeps every frame in memory: for long ranges, MP4.",
                 "mp4": "One frame per step, H.264.",
                 "csv": "One row per step, one column per measure of the replay.",
                 "json": "The same as CSV, as one JSON object."}
        text = notes.get(fmt, "")
        if fmt in export.PICTURE_FORMATS:
            text += f" At the shown step, {self.position}."
        video = export.video_unavailable()
        if video and self.part() != "measures":
            text += f"\n(MP4: {video}.)"
        self.note.setText(text)
        name = self.path.text()
        stem = os.path.splitext(name)[0] if name else os.path.join(self.folder, f"heapscope-{self.part()}")
        self.path.setText(f"{stem}.{fmt}")

    def _animate_toggled(self, on: bool) -> None:
        # a glide needs more frames than a jump from step to step
        if on and self.fps.value() < 12:
            self.fps.setValue(12)
        elif not on and self.fps.value() == 12:
            self.fps.setValue(4)

    def _browse(self) -> None:
        fmt = self.fmt()
        path, _ = QFileDialog.getSaveFileName(self, "Export to", self.path.text(),
                                              f"{FORMAT_LABELS[fmt]} (*.{fmt})")
        if path:
            if not path.lower().endswith("." + fmt):
                path += "." + fmt
            self.path.setText(path)

    def request(self) -> export.ExportRequest:
        """What the dialog asks for (after it was accepted)."""
        fmt = self.fmt()
        steps = None
        if fmt in export.ANIMATION_FORMATS + export.MEASURE_FORMATS:
            first, last = sorted((self.first.value(), self.last.value()))
            steps = export.StepRange(first, last, self.fps.value(),
                                     animate=fmt in export.ANIMATION_FORMATS and self.animate.isChecked())
        path = self.path.text().strip()
        if not path.lower().endswith("." + fmt):
            path += "." + fmt
        return export.ExportRequest(self.part(), path, steps)


def ask_and_export(window) -> None:
    """File > Export: the dialog, then the export with its progress."""
    if window.timeline is None:
        window.show_error("Nothing to export", "Open a trace first.")
        return
    window.player.pause()
    folder = str(window.settings.value("export_folder", "") or "")
    dialog = ExportDialog(window.model.n, window.model.position, folder, window)
    if dialog.exec():
        request = dialog.request()
        window.settings.setValue("export_folder", os.path.dirname(os.path.abspath(request.path)))
        window.run_export(request)


def export_with_progress(window, request) -> str | None:
    """Do an :class:`~heapscope.gui.export.ExportRequest`, with a progress dialog
    (shown after half a second) that can cancel it; the line saying what
    was written, or None when it failed or was cancelled (a message box
    says why)."""
    from PySide6.QtWidgets import QProgressDialog
    position = window.model.position
    progress = QProgressDialog("Exporting…", "Cancel", 0, 100, window)
    progress.setWindowTitle("Export")
    progress.setWindowModality(Qt.WindowModal)
    progress.setMinimumDuration(500)
    progress.setAutoClose(False)

    def report(done, total):
        progress.setMaximum(total)
        progress.setValue(done)
        progress.setLabelText(f"Exporting step {done:,} of {total:,}…")
        if not progress.isVisible():
            # the dialog runs the event loop in setValue once it shows (after
            # half a second); until then the window would not paint (issue 25)
            QCoreApplication.processEvents(QEventLoop.ExcludeUserInputEvents)

    try:
        text = export.export(window, request, report, progress.wasCanceled)
    except export.ExportCancelled as exc:
        window.statusBar().showMessage(f"Export cancelled: {exc}", 8000)
        return None
    except (export.ExportError, OSError) as exc:
        window.show_error("Cannot export", f"heapscope could not export to {request.path}.", str(exc))
        return None
    finally:
        progress.close()
        progress.deleteLater()
        if request.steps is not None and window.model.position != position:
            window.seek(position)          # back where the teacher was
    window.statusBar().showMessage(text[0].upper() + text[1:], 8000)
    return text
