"""Building the recorder's LD_PRELOAD library on first use.

The C source (``recorder.c``) ships inside the package; the first
``heapscope record`` compiles it with the system's C compiler into a per-user
cache, ``$XDG_CACHE_HOME/heapscope`` (``~/.cache/heapscope`` by default),
under a name that carries a hash of the source and the machine, so that a new
heapscope rebuilds it and two machines sharing a home folder do not mix them
up.  The compiler is ``$CC`` if set, else the first of cc, gcc, clang on the
PATH.  Without one the user is told, in one line, what to install.
"""

from __future__ import annotations

import hashlib
import os
import platform
import shlex
import shutil
import subprocess
import sys
import tempfile
from importlib import resources
from pathlib import Path

SOURCE_NAME = "recorder.c"
COMPILERS = ("cc", "gcc", "clang")
CFLAGS = ["-shared", "-fPIC", "-O2", "-pthread"]
LIBS = ["-ldl"]

NO_COMPILER = ("heapscope record needs a C compiler once, to build the library it loads into "
               "the program: install one (Debian/Ubuntu: sudo apt install gcc; Fedora: "
               "sudo dnf install gcc) or set CC")


class RecorderUnavailable(Exception):
    """Recording cannot work here; the message says why in one line."""


def recorder_source() -> bytes:
    return resources.files(__package__).joinpath(SOURCE_NAME).read_bytes()


def cache_dir() -> Path:
    """``$XDG_CACHE_HOME/heapscope``, or ``~/.cache/heapscope``."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "heapscope"


def find_compiler() -> list[str] | None:
    """The C compiler command: ``$CC`` (split like a shell word list) or the
    first of cc, gcc, clang on the PATH; None if there is none."""
    cc = os.environ.get("CC", "").strip()
    if cc:
        words = shlex.split(cc)
        found = shutil.which(words[0])
        return [found] + words[1:] if found else None
    for name in COMPILERS:
        found = shutil.which(name)
        if found:
            return [found]
    return None


def library_path(source: bytes | None = None) -> Path:
    """Where the compiled library for this source and machine is cached."""
    source = recorder_source() if source is None else source
    key = hashlib.sha256(source + platform.machine().encode()).hexdigest()[:16]
    return cache_dir() / f"recorder-{key}.so"


def check_platform() -> None:
    if not sys.platform.startswith("linux"):
        raise RecorderUnavailable(
            f"heapscope record works on Linux only (it loads its library into the program "
            f"with LD_PRELOAD); this is {sys.platform}")


def preload_library() -> Path:
    """The recorder library, compiled now if the cache does not have it."""
    check_platform()
    source = recorder_source()
    lib = library_path(source)
    if lib.is_file():
        return lib
    compiler = find_compiler()
    if compiler is None:
        raise RecorderUnavailable(NO_COMPILER)
    try:
        lib.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise RecorderUnavailable(f"cannot create the cache folder {lib.parent}: "
                                  f"{e.strerror or e}") from None
    # Compile into a temporary name and rename: two recordings started at once
    # never load a half-written library.
    with tempfile.TemporaryDirectory(dir=lib.parent) as tmp:
        src = Path(tmp) / SOURCE_NAME
        src.write_bytes(source)
        out = Path(tmp) / lib.name
        cmd = compiler + CFLAGS + ["-o", str(out), str(src)] + LIBS
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        except (OSError, subprocess.TimeoutExpired) as e:
            raise RecorderUnavailable(f"cannot run the C compiler {compiler[0]}: {e}") from None
        if done.returncode != 0 or not out.is_file():
            first = (done.stderr.strip().splitlines() or ["no message"])[0]
            raise RecorderUnavailable(f"the C compiler failed to build the recorder "
                                      f"({shlex.join(cmd)}): {first}")
        os.replace(out, lib)
    return lib
