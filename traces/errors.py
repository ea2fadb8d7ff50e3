"""The one exception type the trace readers raise for bad input."""

from __future__ import annotations

import os


class TraceError(Exception):
    """A trace that cannot be read or does not make sense.

    ``path`` is the file (None for text given directly), ``line`` the 1-based
    line where the problem is (None when it is not about one line, e.g. the
    file cannot be opened), ``message`` what is wrong.  ``str(err)`` reads
    ``"{path}:{line}: {message}"``, leaving out the parts that are None, the
    form compilers use so editors can jump to the spot.
    """

    def __init__(self, message: str, path: str | os.PathLike | None = None,
                 line: int | None = None) -> None:
        self.message = message
        self.path = None if path is None else os.fspath(path)
        self.line = line
        super().__init__(message, self.path, line)

    def __str__(self) -> str:
        where = ":".join(str(p) for p in (self.path, self.line) if p is not None)
        return f"{where}: {self.message}" if where else self.message

    def __repr__(self) -> str:
        return f"TraceError({self.message!r}, path={self.path!r}, line={self.line!r})"


class ReadCancelled(Exception):
    """Reading a trace was cancelled (the ``cancel()`` hook turned true)."""

    def __init__(self, path: str | None = None) -> None:
        super().__init__(f"reading {path or 'the trace'} was cancelled")
        self.path = path
