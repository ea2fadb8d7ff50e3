"""allocators/ and traces/ are the headless core: they must never import Qt."""

import ast
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
QT_MODULES = {"PySide6", "shiboken6", "pyqtgraph", "PyQt5", "PyQt6", "PySide2", "gui"}


def imported_modules(path: pathlib.Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def test_core_packages_do_not_import_qt_or_the_gui():
    offenders = []
    for package in ("allocators", "traces"):
        files = sorted((ROOT / package).rglob("*.py"))
        assert files, f"{package}/ has no Python files"
        for path in files:
            bad = imported_modules(path) & QT_MODULES
            if bad:
                offenders.append(f"{path.relative_to(ROOT)} imports {sorted(bad)}")
    assert not offenders, "\n".join(offenders)


def test_replaying_a_trace_loads_no_qt_module():
    # Importing and running the core in a fresh interpreter must not pull Qt in
    # indirectly (through a dependency) either.
    code = (
        "import sys, allocators, traces\n"
        "from allocators.replay import Timeline\n"
        "Timeline(traces.make_workload('vo1989', steps=200), 'next-fit').build()\n"
        "bad = [m for m in sys.modules if m.split('.')[0] in %r]\n"
        "print(bad); sys.exit(1 if bad else 0)\n" % (sorted(QT_MODULES),)
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
