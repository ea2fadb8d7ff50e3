"""Loading user strategies: from a file (``--allocator path/to/file.py:ClassName``)
or from an installed package (the entry point group ``heapscope.allocators``).

A loaded strategy is registered under its ``name`` in
:data:`heapscope.allocators.registry.STRATEGIES`, so the picker, ``compare``,
``heapscope strategies`` and ``-P NAME.param=...`` see it as they see the
built-ins.  Every mistake in the file is one :class:`PluginError` naming the
file (and the line of a syntax error): the command line prints it and exits
with status 2.

A file is imported as a module of its own, named after its resolved path
(``_heapscope_user_<stem>_<hash>``), and kept in ``sys.modules`` so that
``pickle`` finds its classes again (the timeline pickles checkpoints).
The file's folder is on ``sys.path`` while it runs, so it may import a
helper module next to it.  Loading the same file twice gives the same class.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import subprocess
import sys
from dataclasses import dataclass

from .registry import STRATEGIES, register
from .strategy import Strategy
from .user import NAME_PATTERN, UserStrategy

#: the entry point group installed packages declare their strategies in
ENTRY_POINT_GROUP = "heapscope.allocators"

#: where each user strategy came from, by name: ``examples/segfit.py:SegFit``,
#: or ``entry point segfit = mypkg.segfit:SegFit (mypkg 1.0)``
ORIGINS: dict[str, str] = {}

#: modules loaded from files, by resolved path
_MODULES: dict[str, object] = {}

#: the strategies every user class must write
REQUIRED = ("_malloc", "_free", "_blocks")


class PluginError(Exception):
    """A user strategy that cannot be loaded; the message names the file."""


@dataclass(frozen=True)
class AllocatorSpec:
    """``path/to/file.py:ClassName`` taken apart."""
    path: str
    class_name: str

    @property
    def text(self) -> str:
        return f"{self.path}:{self.class_name}"


def parse_spec(text: str) -> AllocatorSpec:
    """``'path/to/file.py:ClassName'`` -> AllocatorSpec; PluginError if malformed."""
    path, colon, cls = text.rpartition(":")
    if not colon or not path or not cls or not cls.isidentifier():
        raise PluginError(f"--allocator {text!r}: expected FILE.py:ClassName, "
                          "e.g. examples/segfit.py:SegFit")
    return AllocatorSpec(path, cls)


def load_file(text: str) -> type[UserStrategy]:
    """Import ``FILE.py:ClassName`` and register the class; the class."""
    spec = parse_spec(text)
    module = _import_file(spec.path)
    cls = getattr(module, spec.class_name, None)
    if cls is None:
        found = sorted(n for n, v in vars(module).items()
                       if isinstance(v, type) and issubclass(v, UserStrategy) and v is not UserStrategy)
        hint = f"; it defines {', '.join(found)}" if found else \
            "; it defines no subclass of heapscope.UserStrategy"
        raise PluginError(f"{spec.path}: no class {spec.class_name}{hint}")
    check_class(cls, spec.path)
    register_user(cls, spec.text, spec.path)
    return cls


#: what the probe's child prints once the file's top level has run
_PROBE_DONE = "heapscope: the file imported"
#: the child: import heapscope (what a strategy file imports first: the
#: interpreter's start and heapscope's own imports are not the file's time,
#: and take seconds on a busy machine), then run the file's top level as an
#: import would (not as __main__), its folder first on sys.path, under a
#: timer of the time limit whose signal ends the child (also in a C loop),
#: then say so; a sys.exit is left to the import in heapscope's own process,
#: which names its line
_PROBE_CODE = "\n".join([
    "import os, runpy, signal, sys",
    "import heapscope.allocators.user",
    "path, limit = sys.argv[1], float(sys.argv[2])",
    "sys.path.insert(0, os.path.dirname(path))",
    "if limit > 0 and hasattr(signal, 'setitimer'):",
    "    signal.signal(signal.SIGALRM, signal.SIG_DFL)",
    "    signal.setitimer(signal.ITIMER_REAL, limit)",
    "try:",
    "    runpy.run_path(path, run_name='_heapscope_probe')",
    "except SystemExit:",
    "    pass",
    "if hasattr(signal, 'setitimer'):",
    "    signal.setitimer(signal.ITIMER_REAL, 0)",
    f"print({_PROBE_DONE!r}, flush=True)"])
#: seconds the probe's child may take to start, beyond the time limit, before
#: the parent gives up on it (its own timer ends it at the limit)
PROBE_START_ALLOWANCE = 60.0


def probe_import(text: str, time_limit: float | None) -> None:
    """Run the top level of ``FILE.py`` (of ``FILE.py:ClassName``) once in a
    child process before heapscope imports it into its own: a file that loops
    while it is imported, or ends the process (``os._exit``, a signal), is a
    PluginError naming it instead of a hang or a silent exit.  A file that
    raises is left to :func:`load_file`, whose message names its line.  The
    time limit counts from the moment the child has started and imported
    heapscope.  Costs one interpreter start (about a third of a second); the
    command line calls it, the tests' in-process loads need not."""
    spec = parse_spec(text)
    if not os.path.isfile(spec.path):
        return                                # load_file says what is wrong with it
    real = os.path.realpath(spec.path)
    if real in _MODULES:
        return
    import signal
    no_answer = PluginError(f"{spec.path}: importing it gave no answer in {time_limit:g} s (a loop "
                            "at the top level of the file? --time-limit SECONDS sets the limit)")
    try:
        done = subprocess.run([sys.executable, "-c", _PROBE_CODE, real, str(time_limit or 0)],
                              capture_output=True, text=True, stdin=subprocess.DEVNULL,
                              timeout=None if time_limit is None else time_limit + PROBE_START_ALLOWANCE)
    except subprocess.TimeoutExpired:
        raise no_answer from None
    if _PROBE_DONE in done.stdout or done.returncode == 1:
        return                        # imported, raised or called sys.exit: load_file reports it
    if time_limit and done.returncode == -getattr(signal, "SIGALRM", 0):
        raise no_answer               # the child's timer, at the limit
    if done.returncode < 0:
        name = signal.Signals(-done.returncode).name
        raise PluginError(f"{spec.path}: importing it killed the process (signal {name})")
    raise PluginError(f"{spec.path}: importing it ended the process with exit status "
                      f"{done.returncode} (os._exit at the top level of the file?)")


def _import_file(path: str):
    if not os.path.isfile(path):
        raise PluginError(f"{path}: no such file" if not os.path.exists(path) else
                          f"{path}: not a file")
    if not path.endswith(".py"):
        raise PluginError(f"{path}: a strategy file is Python source ending in .py")
    real = os.path.realpath(path)
    if real in _MODULES:
        return _MODULES[real]
    stem = "".join(c if c.isalnum() else "_" for c in os.path.basename(real)[:-3])
    name = f"_heapscope_user_{stem}_{hashlib.sha1(real.encode()).hexdigest()[:8]}"
    loader_spec = importlib.util.spec_from_file_location(name, real)
    module = importlib.util.module_from_spec(loader_spec)
    sys.modules[name] = module
    folder = os.path.dirname(real)
    sys.path.insert(0, folder)
    try:
        loader_spec.loader.exec_module(module)
    except SyntaxError as exc:
        del sys.modules[name]
        where = f"{path}:{exc.lineno}" if exc.lineno else path
        raise PluginError(f"{where}: syntax error: {exc.msg}") from None
    except KeyboardInterrupt:
        del sys.modules[name]
        raise
    except BaseException as exc:     # SystemExit at the top of the file too: not heapscope's exit
        del sys.modules[name]
        raise PluginError(f"{path}{_line_in(exc, real)}: importing it raised "
                          f"{type(exc).__name__}: {exc}") from None
    finally:
        try:
            sys.path.remove(folder)
        except ValueError:
            pass
    _MODULES[real] = module
    return module


def _line_in(exc: BaseException, real: str) -> str:
    tb, line = exc.__traceback__, None
    while tb is not None:
        if os.path.realpath(tb.tb_frame.f_code.co_filename) == real:
            line = tb.tb_lineno
        tb = tb.tb_next
    return f":{line}" if line else ""


def check_class(cls, where: str) -> None:
    """PluginError unless ``cls`` is a usable subclass of UserStrategy."""
    label = getattr(cls, "__name__", repr(cls))
    if not isinstance(cls, type):
        raise PluginError(f"{where}: {label} is not a class")
    if not issubclass(cls, UserStrategy):
        base = "Strategy (heapscope's internal base)" if issubclass(cls, Strategy) else \
            ", ".join(b.__name__ for b in cls.__bases__)
        raise PluginError(f"{where}: {cls.__name__} derives from {base}, not from "
                          "heapscope.UserStrategy: write class "
                          f"{cls.__name__}(UserStrategy) after 'from heapscope import UserStrategy'")
    missing = [m for m in REQUIRED if getattr(cls, m) is getattr(UserStrategy, m)]
    if missing:
        raise PluginError(f"{where}: {cls.__name__} does not write {', '.join(missing)}: a strategy "
                          "needs _malloc(self, size), _free(self, payload) and _blocks(self)")
    name = cls.name
    if not isinstance(name, str) or not NAME_PATTERN.fullmatch(name):
        raise PluginError(f"{where}: {cls.__name__}.name is {name!r}: a strategy name is lower "
                          "case letters, digits, '-', '_' or '+', starting with a letter or digit")


def register_user(cls: type[UserStrategy], origin: str, where: str) -> None:
    """Register ``cls`` under its name; PluginError if the name is taken."""
    name = cls.name
    taken = STRATEGIES.get(name)
    if taken is cls:
        return
    if taken is not None:
        if name in ORIGINS:
            raise PluginError(f"{where}: {cls.__name__} is named {name!r}, like the strategy "
                              f"loaded from {ORIGINS[name]}: give one of them another name = '...'")
        raise PluginError(f"{where}: {cls.__name__} is named {name!r}, the name of a built-in "
                          f"strategy: give it another name = '...' (taken: {', '.join(STRATEGIES)})")
    register(cls)
    ORIGINS[name] = origin


def forget(name: str) -> None:
    """Unregister user strategy ``name`` (tests load and drop strategies)."""
    if name in ORIGINS:
        del ORIGINS[name]
        STRATEGIES.pop(name, None)


def is_user(name: str) -> bool:
    return name in ORIGINS


# ----------------------------------------------------------------- entry points
_installed_loaded = False


def load_installed(warn=None) -> list[str]:
    """Register the strategies installed packages declare under the entry
    point group ``heapscope.allocators`` (``name = package.module:Class``),
    once per process; the names registered.  One that cannot be loaded is
    left out and ``warn(message)`` says why: a broken package must not stop
    heapscope."""
    global _installed_loaded
    if _installed_loaded:
        return []
    _installed_loaded = True
    from importlib.metadata import entry_points
    names = []
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        dist = getattr(ep, "dist", None)
        package = f"{dist.name} {dist.version}" if dist is not None else "an installed package"
        where = f"entry point {ep.name} = {ep.value} ({package})"
        try:
            cls = ep.load()
            check_class(cls, where)
            register_user(cls, where, where)
        except PluginError as exc:
            if warn:
                warn(str(exc))
            continue
        except Exception as exc:
            if warn:
                warn(f"{where}: loading it raised {type(exc).__name__}: {exc}")
            continue
        names.append(cls.name)
    return names


def reset_installed() -> None:
    """Let :func:`load_installed` look again (tests install a package mid-run)."""
    global _installed_loaded
    _installed_loaded = False
