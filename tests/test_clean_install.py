"""A clean install (issue 26): the wheel built from this checkout, installed
without ``-e`` into a fresh virtual environment, runs from a folder outside
the checkout -- so the bundled traces, the recorder's C source and the
lessons it reads are in the package, not only beside it.

Slow (about a minute: building the wheel, a venv, installing numpy, PySide6
and the rest from pip's cache), so it is one test, whose venv serves every
command, and it runs in the deep suite (``pytest --deep``, which CI runs),
not the README's quick one: under pytest-xdist it held one worker for a
tenth of the quick suite's wall time.  Nothing
is taken from the checkout's own environment: the fresh venv has no
``--system-site-packages``.  ``-m "not clean_install"`` leaves it out of a
quick local run.  The wheel's contents are checked here too (one top-level
package, every subpackage in it), on the wheel this test builds anyway.
"""

import os
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

from heapscope.traces.preload import NO_COMPILER, find_compiler

ROOT = Path(__file__).resolve().parent.parent
#: what the wheel is built from: pyproject.toml's packages (their folders) and the readme
SOURCES = ("pyproject.toml", "README.md", "heapscope", "allocators", "traces", "gui")

# in the deep suite only, which CI runs (.ci/run): in the quick one it held an
# xdist worker 33 s (20 CPU-s in pip and the venv), a tenth of its wall time
pytestmark = [pytest.mark.clean_install, pytest.mark.deep]


def _run(argv, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(argv, capture_output=True, text=True, timeout=600, **kwargs)


def _check(done: subprocess.CompletedProcess, what: str) -> str:
    assert done.returncode == 0, f"{what} failed ({done.returncode}):\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
    return done.stdout


def _build_wheel(tmp: Path) -> Path:
    """The wheel of a copy of the checkout's package sources (a build in
    place would leave build/ and *.egg-info in the checkout), built in
    pip's isolated build environment with the setuptools pyproject.toml
    asks for (the venv's own may be older and lack bdist_wheel)."""
    src = tmp / "src"
    src.mkdir()
    for name in SOURCES:
        path = ROOT / name
        if path.is_dir():
            shutil.copytree(path, src / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(path, src / name)
    wheels = tmp / "wheels"
    # "./src", not "src": a bare name is a requirement pip looks up in the index
    _check(_run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps",
                 "-w", str(wheels), f".{os.sep}src"], cwd=tmp), "building the wheel")
    built = sorted(wheels.glob("heapscope-*.whl"))
    assert len(built) == 1, built
    return built[0]


def _assert_one_top_level_package(wheel: Path) -> None:
    """'traces' is the name of another package on PyPI: installing ours must
    not put allocators/, traces/ or gui/ at the top of site-packages; and
    every source package (a folder with __init__.py) is in the wheel, so a
    new subpackage cannot be left out of pyproject's package list unnoticed.
    (Checked on this test's wheel: tests/test_layering.py built one more of
    its own for it, about 5 CPU-s.)"""
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/")[0] for n in names if not n.split("/")[0].endswith((".dist-info", ".data"))}
    assert tops == {"heapscope"}
    for folder in ("allocators", "traces", "gui", "heapscope"):
        for init in (ROOT / folder).rglob("__init__.py"):
            rel = init.relative_to(ROOT).as_posix()
            inside = rel if folder == "heapscope" else "heapscope/" + rel
            assert inside in names, f"{rel} is not in the wheel (add its package to pyproject.toml)"
    for needed in ("heapscope/allocators/tlsf.py", "heapscope/traces/rep.py", "heapscope/gui/heap_map.py",
                   "heapscope/cli.py", "heapscope/__main__.py", "heapscope/traces/bundled/default.rep"):
        assert needed in names


def _fresh_venv(tmp: Path, wheel: Path) -> Path:
    """A venv without pip of its own (ensurepip is the slow part), the wheel
    and its dependencies installed into it by this interpreter's pip
    (``--python``), from pip's cache where it holds them."""
    venv = tmp / "venv"
    _check(_run([sys.executable, "-m", "venv", "--without-pip", str(venv)]), "making the venv")
    python = venv / "bin" / "python"
    _check(_run([sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet",
                 str(wheel)]), "installing the wheel")
    return venv


def test_the_wheel_installed_in_a_fresh_venv_runs_from_outside_the_checkout(tmp_path):
    wheel = _build_wheel(tmp_path)
    _assert_one_top_level_package(wheel)
    venv = _fresh_venv(tmp_path, wheel)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "FORCE_COLOR")}
    env.update(QT_QPA_PLATFORM="offscreen", XDG_CACHE_HOME=str(tmp_path / "cache"),
               PATH=f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}")

    def heapscope(*args) -> subprocess.CompletedProcess:
        return _run([str(venv / "bin" / "heapscope"), *args], cwd=outside, env=env)

    # the package comes from the venv, not from the checkout
    where = _check(_run([str(venv / "bin" / "python"), "-c", "import heapscope; print(heapscope.__file__)"],
                        cwd=outside, env=env), "import")
    assert Path(where.strip()).is_relative_to(venv) and not Path(where.strip()).is_relative_to(ROOT)

    with open(ROOT / "pyproject.toml", "rb") as f:
        version = tomllib.load(f)["project"]["version"]
    assert _check(heapscope("--version"), "--version").strip() == f"heapscope {version}"

    # the bundled default trace: its header line, then a row per strategy
    out = _check(heapscope("compare", "default", "-s", "tlsf", "-s", "buddy"), "compare default")
    lines = out.splitlines()
    assert lines[0].startswith("# default: ") and [line.split()[0] for line in lines[3:]] == ["tlsf", "buddy"]

    # offscreen Qt from the venv's PySide6: a PNG
    picture = outside / "x.png"
    _check(heapscope("render", "default", "-s", "tlsf", "--step", "100", "-o", str(picture)), "render")
    assert picture.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    # the recorder's C source, compiled into a fresh cache on first use
    recorded = heapscope("record", "-o", str(outside / "true.rep"), "--", "/bin/true")
    if find_compiler() is None:
        assert recorded.returncode == 2 and NO_COMPILER in recorded.stderr
    else:
        _check(recorded, "record")
        assert (outside / "true.rep").read_text().split()[:1] == ["0"]   # a .rep header
        assert list((tmp_path / "cache" / "heapscope").iterdir())       # built there, not in the venv

    # the bundled lessons, one line each, named by their files
    listed = _check(heapscope("lesson", "list"), "lesson list").splitlines()
    names = sorted(p.stem for p in (ROOT / "heapscope" / "lessons").glob("*.md"))
    assert [line.split(":")[0] for line in listed] == names
