"""`heapscope --version` prints the package's version."""

import re
from importlib import metadata
from pathlib import Path

import pytest

from heapscope import version
from heapscope.cli import main

ROOT = Path(__file__).resolve().parent.parent


def pyproject_version() -> str:
    """pyproject's [project] version, read with a pattern (not tomllib, as the code does)."""
    text = (ROOT / "pyproject.toml").read_text()
    return re.search(r'^\[project\][^\[]*?^version\s*=\s*"([^"]+)"', text, re.M | re.S).group(1)


def test_version_option_prints_the_installed_version(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["--version"])
    assert stop.value.code == 0
    out = capsys.readouterr().out.strip()
    assert out == f"heapscope {metadata.version('heapscope')}"
    assert out == f"heapscope {pyproject_version()}"     # the install is of this checkout


def test_a_checkout_not_installed_reads_pyproject(monkeypatch):
    def not_installed(name):
        raise metadata.PackageNotFoundError(name)
    monkeypatch.setattr(version.metadata, "version", not_installed)
    assert version.package_version() == pyproject_version()


def test_neither_installed_nor_a_checkout_says_unknown(monkeypatch, tmp_path):
    def not_installed(name):
        raise metadata.PackageNotFoundError(name)
    monkeypatch.setattr(version.metadata, "version", not_installed)
    monkeypatch.setattr(version, "PYPROJECT", tmp_path / "missing.toml")
    assert version.package_version() == "unknown"


def test_the_module_version_is_the_same_number():
    import heapscope
    assert heapscope.__version__ == pyproject_version()
