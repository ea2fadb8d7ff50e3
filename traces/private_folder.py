"""A folder only its owner can write, and files in it only its owner wrote.

``heapscope record`` loads a library it compiled into every program it
records (``LD_PRELOAD``): a library someone else planted where heapscope
looks for it would run as the user, in every recorded program.  So the
library lives in a *private folder* -- a real folder (not a symbolic link),
owned by the user running heapscope, writable by nobody else, in a parent
where nobody else can swap it for another -- and each file heapscope trusts
in it is checked the same way before each use (:func:`file_problem`).

The owner is compared with :func:`current_user` (the effective uid), one
function so that a test running as root can pretend to be someone else.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

#: mode bits that let someone other than the owner change a folder or file
OTHERS_WRITE = stat.S_IWGRP | stat.S_IWOTH
#: a private folder has exactly these
PRIVATE_MODE = 0o700


class UnsafeFolder(Exception):
    """A folder heapscope will not trust; the message names it and says why."""


def current_user() -> int:
    """The uid files must belong to: the effective uid of this process."""
    return os.geteuid()


def _mode(st: os.stat_result) -> str:
    return f"{stat.S_IMODE(st.st_mode):04o}"


def file_problem(st: os.stat_result) -> str | None:
    """Why a file with this ``lstat`` result cannot be trusted, or None: it
    must be a regular file (not a link), the user's own, writable by no one
    else."""
    if stat.S_ISLNK(st.st_mode):
        return "is a symbolic link"
    if not stat.S_ISREG(st.st_mode):
        return "is not a regular file"
    if st.st_uid != current_user():
        return f"belongs to uid {st.st_uid}, not to you (uid {current_user()})"
    if st.st_mode & OTHERS_WRITE:
        return f"others may write it (mode {_mode(st)})"
    return None


def _parent_problem(folder: Path) -> str | None:
    """Why the folder's parent lets anyone replace the folder, or None.

    A parent everyone may write is fine only with the sticky bit (as /tmp):
    then they cannot rename or remove what is ours.  A parent only its group
    may write is accepted: with a umask of 002 (Debian and Ubuntu give each
    user a group of their own) that is what ``~/.cache`` usually is."""
    try:
        st = os.stat(folder.parent)
    except OSError as e:
        return f"its parent {folder.parent} cannot be read: {e.strerror or e}"
    if st.st_mode & stat.S_IWOTH and not st.st_mode & stat.S_ISVTX:
        return (f"its parent {folder.parent} may be written by others (mode {_mode(st)}, "
                "no sticky bit), who could replace it")
    return None


def private_folder(folder: str | os.PathLike) -> tuple[Path, bool]:
    """Make sure ``folder`` is private, creating it (mode 0700) if needed.

    Returns (the folder, whether it had to be made safe): True when it was
    just created or its mode let others in -- then nothing already inside it
    is to be trusted, as someone else may have put it there.  Raises
    :class:`UnsafeFolder` when it cannot be made safe: a symbolic link or not
    a folder, another user's, or in a parent where others could replace it.
    """
    folder = Path(folder)
    created = False
    try:
        # a cache home created here is private too (as XDG asks), whatever the umask
        os.makedirs(folder.parent, mode=PRIVATE_MODE, exist_ok=True)
        os.mkdir(folder, PRIVATE_MODE)      # the umask may only take bits away
        created = True
    except FileExistsError:
        pass
    except OSError as e:
        raise UnsafeFolder(f"cannot create the folder {folder}: {e.strerror or e}") from None
    problem = _parent_problem(folder)
    if problem:
        raise UnsafeFolder(f"the folder {folder} is not safe: {problem}")
    try:
        st = os.lstat(folder)
    except OSError as e:
        raise UnsafeFolder(f"cannot read the folder {folder}: {e.strerror or e}") from None
    if stat.S_ISLNK(st.st_mode):
        raise UnsafeFolder(f"the folder {folder} is a symbolic link: heapscope keeps its "
                           "recorder in a real folder of yours; remove the link")
    if not stat.S_ISDIR(st.st_mode):
        raise UnsafeFolder(f"{folder} is not a folder; remove it")
    if st.st_uid != current_user():
        raise UnsafeFolder(f"the folder {folder} belongs to uid {st.st_uid}, not to you "
                           f"(uid {current_user()}): heapscope will not load a library from "
                           "it; remove it, or set XDG_CACHE_HOME to a folder of yours")
    opened_to_others = bool(st.st_mode & OTHERS_WRITE)
    if stat.S_IMODE(st.st_mode) != PRIVATE_MODE:
        try:
            os.chmod(folder, PRIVATE_MODE, follow_symlinks=False)
        except OSError as e:
            raise UnsafeFolder(f"the folder {folder} has mode {_mode(st)} and cannot be made "
                               f"private (0700): {e.strerror or e}") from None
    return folder, created or opened_to_others


__all__ = ["UnsafeFolder", "current_user", "file_problem", "private_folder", "PRIVATE_MODE"]
