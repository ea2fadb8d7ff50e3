"""Writing an output file so that a failure never leaves half of it, and never
touches an input: the one way heapscope's commands write what they make.

:func:`check_output` is called before any work starts (a missing folder, an
output that is one of the inputs, a folder where a file is wanted: each an
:class:`OutputError` naming the path); :func:`atomic_output` then writes to a
temporary file beside the target and renames it over the target only when
the writing finished, as ``os.replace`` is atomic within one file system.
A link is followed (the file it names is replaced, the link kept); a target
that is not a regular file (``/dev/stdout``, a FIFO) cannot be replaced and
is written directly.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from typing import Iterable, Iterator


class OutputError(Exception):
    """An output path heapscope will not write; the message names it."""


def same_file(a: str | os.PathLike, b: str | os.PathLike) -> bool:
    """Whether ``a`` and ``b`` name one file (through links and ``..``)."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)


#: folders whose entries name open descriptors and devices (/dev/stdout,
#: /dev/fd/3, /proc/self/fd/1): what they lead to is written, never replaced
SYSTEM_FOLDERS = ("/dev/", "/proc/")


def _written_in_place(path: str) -> bool:
    """Whether ``path`` (as given: /dev/stdout may lead to a pipe) exists and
    is neither a regular file nor a folder (a device, a FIFO, a pipe), or is
    one of the system's names for a descriptor: written into, never replaced."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return (not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))
            or os.path.abspath(path).startswith(SYSTEM_FOLDERS))


def check_output(path: str | os.PathLike, inputs: Iterable[str | os.PathLike] = (),
                 what: str = "output") -> None:
    """OutputError unless ``path`` can be written: its folder exists and is a
    folder, it is not itself a folder, and it is none of ``inputs``."""
    path = os.fspath(path)
    real = os.path.realpath(path)        # through a link, the folder the file is in
    folder = os.path.dirname(real)
    if _written_in_place(path):
        if not os.access(path, os.W_OK):
            raise OutputError(f"{path}: cannot write the {what}: it is not writable")
    elif not os.path.isdir(folder):
        if not os.path.islink(path):     # name the folder as given
            folder = os.path.dirname(os.path.abspath(path))
        raise OutputError(f"{path}: cannot write the {what}: the folder {folder} does not exist")
    elif not os.access(folder, os.W_OK):
        raise OutputError(f"{path}: cannot write the {what}: the folder {folder} is not writable")
    if os.path.isdir(path):
        raise OutputError(f"{path}: cannot write the {what}: it is a folder")
    for given in inputs:
        given = os.fspath(given)
        if os.path.exists(given) and os.path.exists(path) and same_file(path, given):
            raise OutputError(f"{path}: the {what} would overwrite its input {given}; "
                              "name another file")


def _put_in_place(tmp: str, path: str) -> None:
    """Rename the finished ``tmp`` over ``path``, with the mode ``path`` has,
    or the one the umask gives a new file (mkstemp's 0600 would surprise)."""
    try:
        os.chmod(tmp, os.stat(path).st_mode & 0o7777)
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
    os.replace(tmp, path)


@contextlib.contextmanager
def atomic_output(path: str | os.PathLike, mode: str = "wb") -> Iterator:
    """``with atomic_output(path) as f: f.write(...)``: ``f`` is a temporary
    file beside ``path``, renamed over it when the block ends without an
    exception and removed otherwise."""
    with atomic_path(path) as tmp, open(tmp, mode) as f:
        yield f


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[str]:
    """As :func:`atomic_output` for a writer that wants a file name (an
    encoder, ``QImage.save``): yields a temporary path beside ``path`` with
    the same suffix, renamed over ``path`` when the block ends cleanly."""
    base = os.path.basename(os.fspath(path))     # the suffix asked for, even through a link
    if _written_in_place(path):
        yield os.fspath(path)
        return
    path = os.path.realpath(path)
    folder = os.path.dirname(path)
    suffix = "".join(s for s in (".gz",) if base.endswith(s))
    stem, ext = os.path.splitext(base[:len(base) - len(suffix)] if suffix else base)
    fd, tmp = tempfile.mkstemp(prefix=f".{stem}.", suffix=f".part{ext}{suffix}", dir=folder)
    os.close(fd)
    try:
        yield tmp
        _put_in_place(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


__all__ = ["OutputError", "atomic_output", "atomic_path", "check_output", "same_file"]
