"""A trace opened from a file is read again when the file changes on disk.

A teacher edits a demonstration in her editor beside the window; on every
save the window reads the file again and shows the same step
(:class:`FileWatch`, a ``QFileSystemWatcher`` on the shown trace's file).
Editors save in bursts (and often by writing a new file and renaming it over
the old one, which ends a watch on that path), so a change is acted on
after a short quiet time, and the path is watched again once it is back.

The window's own saves (File > Save) change the file too: the size and the
modification time it left are remembered and that change is not read back.
While the trace has unsaved edits in the window, the file is not read over
them; the status bar says so.
"""

from __future__ import annotations

import os

from PySide6.QtCore import QFileSystemWatcher, QObject, QTimer

#: ms of quiet after a change before the file is read again
SETTLE_MS = 150
#: tries, SETTLE_MS apart, to find a file renamed away and back (an editor's save)
RETRIES = 10


class FileWatch(QObject):
    def __init__(self, window) -> None:
        super().__init__(window)
        self.window = window
        self.model = window.model
        self.watcher = QFileSystemWatcher(self)
        self.watcher.fileChanged.connect(self._changed)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(SETTLE_MS)
        self._timer.timeout.connect(self._settled)
        self._tries = 0
        #: (path, size, mtime_ns) the window's own last save left
        self._own: tuple | None = None
        #: how many times the file was read again (tests count it)
        self.reloads = 0
        self.model.trace_changed.connect(self.follow)
        window.edits.saved.connect(self._saved)

    @property
    def path(self) -> str | None:
        """The file watched, or None."""
        files = self.watcher.files()
        return files[0] if files else None

    def follow(self) -> None:
        """Watch the shown trace's file (and no other)."""
        source = self.model.source
        want = os.path.abspath(source) if source and os.path.isfile(source) else None
        if self.path == want:
            return
        if self.watcher.files():
            self.watcher.removePaths(self.watcher.files())
        if want:
            self.watcher.addPath(want)

    def _saved(self, path: str) -> None:
        self._own = _stamp(os.path.abspath(path))
        self.follow()

    def _changed(self, path: str) -> None:
        self._tries = 0
        self._timer.start()

    def _settled(self) -> None:
        source = self.model.source
        if not source:
            return
        path = os.path.abspath(source)
        if not os.path.isfile(path):
            # renamed away by an editor's save: it comes back under its name
            self._tries += 1
            if self._tries < RETRIES:
                self._timer.start()
            return
        if path not in self.watcher.files():
            self.watcher.addPath(path)
        stamp = _stamp(path)
        if stamp == self._own:
            return                      # the window's own save
        w = self.window
        if w.edits.dirty:
            w.statusBar().showMessage(f"{os.path.basename(path)} changed on disk; not read again "
                                      "over your unsaved changes (save them, or undo them)", 10000)
            return
        self.reloads += 1
        w.statusBar().showMessage(f"{os.path.basename(path)} changed on disk: read again", 5000)
        w.open_trace(path, self.model.position)


def _stamp(path: str) -> tuple | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (path, st.st_size, st.st_mtime_ns)
