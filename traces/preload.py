"""Building the recorder's LD_PRELOAD library, and checking it before each use.

The C source (``recorder.c``) ships inside the package; the first
``heapscope record`` compiles it with the system's C compiler into a per-user
cache, ``$XDG_CACHE_HOME/heapscope`` (``~/.cache/heapscope`` by default),
under a name that carries a hash of the source and the machine, so that a new
heapscope rebuilds it and two machines sharing a home folder do not mix them
up.  The compiler is ``$CC`` if set, else the first of cc, gcc, clang on the
PATH.  Without one the user is told, in one line, what to install.

The library runs inside every recorded program, so it is never loaded on
trust (:func:`preload_library`):

- the cache folder is private (:mod:`heapscope.traces.private_folder`): created 0700,
  the user's own, not a link; a folder others could write is closed (0700)
  and what was in it rebuilt; another user's folder is refused;
- beside each library a *build record* (``recorder-KEY.json``) keeps the
  sha256 of the library as it was built and of the source it was built from;
  before each use the library and its record are checked (a regular file of
  the user's, writable by no one else, the library's content hashing to the
  recorded sha256, the source's hash the one shipped now).  A library that
  fails any check -- empty, changed, planted, another user's -- is rebuilt,
  never loaded.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import platform
import shlex
import shutil
import subprocess
import sys
import tempfile
from importlib import resources
from pathlib import Path

from .private_folder import UnsafeFolder, file_problem, private_folder

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


def build_record_path(lib: Path) -> Path:
    """The build record kept beside a library: ``recorder-KEY.json``."""
    return lib.with_suffix(".json")


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


_fstat = os.fstat   # one name, for a test to make a file look like another user's


def _read_checked(path: Path) -> tuple[bytes | None, str | None]:
    """(content, None) of a file that checks (see :func:`file_problem`), or
    (None, why not).  The checks are made on the open file, so what is read
    is what was checked."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        return None, "is missing"
    except OSError as e:
        if e.errno == errno.ELOOP:      # what O_NOFOLLOW says of a link
            return None, "is a symbolic link"
        return None, f"cannot be opened: {e.strerror or e}"
    with os.fdopen(fd, "rb") as f:
        problem = file_problem(_fstat(fd))
        if problem:
            return None, problem
        return f.read(), None


def library_problem(lib: Path, source: bytes) -> str | None:
    """Why the cached library ``lib`` must not be loaded, or None if it checks:
    it and its build record are the user's own regular files, writable by no
    one else; the record names the sha256 of ``source`` and of the library's
    present content."""
    content, problem = _read_checked(lib)
    if problem:
        return f"the library {problem}"
    if not content:
        return "the library is empty"
    text, problem = _read_checked(build_record_path(lib))
    if problem:
        return f"its build record {problem}"
    try:
        built = json.loads(text)
        recorded_library, recorded_source = built["library_sha256"], built["source_sha256"]
    except (ValueError, TypeError, KeyError):
        return "its build record cannot be read"
    if recorded_source != _sha256(source):
        return "it was built from another source"
    if recorded_library != _sha256(content):
        return "its content is not what was built (its sha256 differs from the build record's)"
    return None


def preload_library() -> Path:
    """The recorder library, checked; compiled now if the cache has none that
    checks.  RecorderUnavailable when it cannot be built or the cache folder
    is not safe."""
    check_platform()
    source = recorder_source()
    lib = library_path(source)
    try:
        _, opened = private_folder(lib.parent)
    except UnsafeFolder as e:
        raise RecorderUnavailable(str(e)) from None
    # In a folder others could write until now, a library that "checks" may
    # still be someone else's work: build it again.
    if not opened and library_problem(lib, source) is None:
        return lib
    _build(source, lib)
    return lib


def _build(source: bytes, lib: Path) -> None:
    """Compile ``source`` to ``lib`` and write its build record beside it."""
    compiler = find_compiler()
    if compiler is None:
        raise RecorderUnavailable(NO_COMPILER)
    # Compile into a temporary folder inside the private one and rename: two
    # recordings started at once never load a half-written library.  The
    # source is named relative to the compiler's working folder, so that no
    # temporary name ends up in the library and two builds give the same bytes.
    try:
        with tempfile.TemporaryDirectory(dir=lib.parent) as tmp:
            (Path(tmp) / SOURCE_NAME).write_bytes(source)
            out = Path(tmp) / lib.name
            cmd = compiler + CFLAGS + ["-o", lib.name, SOURCE_NAME] + LIBS
            try:
                done = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=tmp)
            except (OSError, subprocess.TimeoutExpired) as e:
                raise RecorderUnavailable(f"cannot run the C compiler {compiler[0]}: {e}") from None
            if done.returncode != 0 or not out.is_file() or not out.stat().st_size:
                first = (done.stderr.strip().splitlines() or ["no message"])[0]
                raise RecorderUnavailable(f"the C compiler failed to build the recorder "
                                          f"({shlex.join(cmd)}): {first}")
            os.chmod(out, 0o755)     # whatever the umask: no one else writes it
            record = Path(tmp) / build_record_path(lib).name
            record.write_text(json.dumps({
                "library_sha256": _sha256(out.read_bytes()), "source_sha256": _sha256(source),
                "machine": platform.machine(), "compiler": shlex.join(compiler)}, indent=1) + "\n")
            os.chmod(record, 0o644)
            os.replace(out, lib)
            os.replace(record, build_record_path(lib))
    except OSError as e:
        raise RecorderUnavailable(f"cannot build the recorder in {lib.parent}: "
                                  f"{e.strerror or e}") from None
