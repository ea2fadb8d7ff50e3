"""The README's two commands are the ones that work: CI runs the test command
exactly, and the install command installs what the program needs."""

import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parent.parent


def readme_commands() -> list[str]:
    text = (ROOT / "README.md").read_text()
    return re.findall(r"```sh\n(.+?)\n```", text)[:2]


def test_readme_opens_with_install_and_test_commands():
    install, test = readme_commands()
    assert "pip install" in install and '".[test]"' in install and install.endswith("heapscope")
    assert "pytest" in test and "QT_QPA_PLATFORM=offscreen" in test


def test_ci_runs_exactly_the_readme_test_command():
    _, test = readme_commands()
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert test in ci, f"{test!r} is not a line of .ci/run"
    install, _ = readme_commands()
    pip_part = install.split("&&")[1].strip()
    assert any(pip_part.replace(".venv/bin/pip install", "") in line for line in ci if "pip install" in line)
