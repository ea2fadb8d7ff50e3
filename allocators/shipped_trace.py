"""A trace handed to worker processes through a file rather than their pipe.

A worker started by the ``forkserver`` or ``spawn`` method gets its
arguments pickled down a pipe, and the parent's ``Process.start()`` blocks
writing them until the child reads them all; the child reads the last part
only after it has imported the parent's main module, which for a window is
PySide6 and the whole program (seconds on a busy machine).  A trace of a
million operations is megabytes, far more than a pipe holds, so the window's
event loop stood still that long at each worker started (issue 25's stall
probe: 1.7 s opening a trace, 6.6 s entering compare mode).

:class:`ShippedTrace` writes the trace once to a temporary file and pickles
as that file's name (a few dozen bytes); each worker reads the trace from
the file as it unpickles its arguments.  The file goes when the build that
made it has finished or been cancelled (:meth:`ShippedTrace.remove`), or at
the latest when the program exits.
"""

from __future__ import annotations

import os
import pickle
import tempfile
import weakref


def _read_trace(path: str):
    with open(path, "rb") as f:
        return pickle.load(f)


class ShippedTrace:
    """``trace`` in a temporary file; pickles as a call that reads it back."""

    def __init__(self, trace) -> None:
        fd, self.path = tempfile.mkstemp(prefix="heapscope-trace-", suffix=".pickle")
        with os.fdopen(fd, "wb") as f:
            pickle.dump(trace, f, protocol=pickle.HIGHEST_PROTOCOL)
        self._finalizer = weakref.finalize(self, _remove, self.path)

    def __reduce__(self):
        return _read_trace, (self.path,)

    def remove(self) -> None:
        """Delete the file (no worker still to start may need it)."""
        self._finalizer()


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
