"""allocators/ and traces/ are the headless core: they must never import Qt."""

import ast
import functools
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
QT_MODULES = {"PySide6", "shiboken6", "pyqtgraph", "PyQt5", "PyQt6", "PySide2", "gui"}


#: the fields of a statement that hold statements (an import is a statement,
#: so it is found in one of these, at any depth; expressions hold none)
STATEMENT_LISTS = ("body", "orelse", "finalbody", "handlers", "cases")


@functools.lru_cache(maxsize=None)
def import_statements(source: str) -> tuple[ast.Import | ast.ImportFrom, ...]:
    """Every ``import`` and ``from ... import`` in a module's text, nested
    ones too (in functions, classes, ifs, trys), in the order of their
    lines: the nodes ``ast.walk`` finds, walking statements only (ast.walk
    visits every expression node too).  Kept for the other tests of this
    file that scan the same files; the rest of the tree is dropped (all the
    trees kept alive made each collection walk them, and the parse slower)."""
    found, stack = [], [ast.parse(source)]
    while stack:
        node = stack.pop()
        for field in STATEMENT_LISTS:
            for child in getattr(node, field, ()):
                if isinstance(child, (ast.Import, ast.ImportFrom)):
                    found.append(child)
                else:
                    stack.append(child)
    return tuple(sorted(found, key=lambda n: (n.lineno, n.col_offset)))


def imported_modules(path: pathlib.Path) -> set[str]:
    names = set()
    for node in import_statements(path.read_text()):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level == 0:
                parts = module.split(".")
                # heapscope.gui is the window: as forbidden as Qt itself
                names.add("gui" if parts[:2] == ["heapscope", "gui"] else parts[0])
            elif node.level >= 2 or module.split(".")[0] == "gui":
                # from ..gui import x / from .. import gui: the sibling package
                first = module.split(".")[0] if module else ""
                names.update([first] if first else [a.name for a in node.names])
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
        "import sys\n"
        "from heapscope import traces\n"
        "from heapscope.allocators.replay import Timeline\n"
        "Timeline(traces.make_workload('vo1989', steps=200), 'next-fit').build()\n"
        "bad = [m for m in sys.modules if m.split('.')[0] in %r or m.startswith('heapscope.gui')]\n"
        "print(bad); sys.exit(1 if bad else 0)\n" % (sorted(QT_MODULES),)
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_layering_scan_sees_relative_imports_of_the_gui(tmp_path):
    # The scan above must catch the ways a core module could reach the window.
    for code in ("from ..gui import heap_map\n", "from .. import gui\n",
                 "from heapscope.gui.app import main\n", "import PySide6.QtCore\n",
                 # nested: in a method, under an if, in a try's handler
                 "class A:\n    def f(self):\n        if x:\n            from ..gui import heap_map\n",
                 "try:\n    pass\nexcept ImportError:\n    import PySide6\n"):
        path = tmp_path / "m.py"
        path.write_text(code)
        assert imported_modules(path) & QT_MODULES, code
    path.write_text("from ..traces.trace import ALLOC\nfrom .events import Visit\n")
    assert not imported_modules(path) & QT_MODULES


#: the folders pyproject.toml maps into heapscope; none of them is a top-level package once installed
MAPPED = {"allocators", "traces", "gui"}


def absolute_imports_of_mapped_folders(path: pathlib.Path) -> list[str]:
    """``import traces`` / ``from allocators.x import y`` in ``path``: they work
    from the checkout (its folder is on sys.path when tests run there) but not
    once installed, where only ``heapscope`` is at the top."""
    bad = []
    for node in import_statements(path.read_text()):
        if isinstance(node, ast.Import):
            bad += [f"line {node.lineno}: import {a.name}" for a in node.names if a.name.split(".")[0] in MAPPED]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] in MAPPED:
            bad.append(f"line {node.lineno}: from {node.module} import ...")
    return bad


def test_the_package_imports_its_parts_relatively_or_through_heapscope(tmp_path):
    offenders = []
    for folder in sorted(MAPPED | {"heapscope", "tests", "benchmarks", "examples"}):
        for path in sorted((ROOT / folder).rglob("*.py")):
            offenders += [f"{path.relative_to(ROOT)} {b}" for b in absolute_imports_of_mapped_folders(path)]
    assert not offenders, "\n".join(offenders)
    # the scan sees both forms, and lets the right ones pass
    probe = tmp_path / "m.py"
    for code in ("import traces\n", "from allocators.tlsf import TLSF\n", "import gui.heap_map as hm\n"):
        probe.write_text(code)
        assert absolute_imports_of_mapped_folders(probe), code
    probe.write_text("from .tlsf import TLSF\nfrom ..traces import rep\nfrom heapscope.gui import app\nimport heapscope.traces\n")
    assert absolute_imports_of_mapped_folders(probe) == []



def relative_imports_across_folders(source: str, depth: int) -> list[str]:
    """The ``from ..x import`` lines of a module ``depth`` subpackages below
    its source folder (0 for allocators/tlsf.py) that climb out of that
    folder: they work only under the installed name (heapscope.allocators),
    never from the checkout, where allocators/ is a package of its own."""
    return [f"line {node.lineno}: from {'.' * node.level}{node.module or ''}"
            for node in import_statements(source)
            if isinstance(node, ast.ImportFrom) and node.level - 1 > depth]


def test_no_import_reaches_across_source_folders_with_dots():
    offenders = []
    for folder in sorted(MAPPED):
        for path in sorted((ROOT / folder).rglob("*.py")):
            depth = len(path.relative_to(ROOT / folder).parts) - 1
            offenders += [f"{path.relative_to(ROOT)} {line}"
                          for line in relative_imports_across_folders(path.read_text(), depth)]
    assert not offenders, "\n".join(offenders)
    # in gui/structure_views/ (depth 1) '..' is gui itself, '...' is outside it
    probe = "from .. import palette\nfrom . import base\nfrom ...allocators import events\n"
    assert relative_imports_across_folders(probe, 1) == ["line 3: from ...allocators"]
    assert relative_imports_across_folders("from ..values import parse_size\n", 0) == [
        "line 1: from ..values"]


def test_the_checkout_imports_its_modules_under_their_folder_names():
    # `import allocators.tlsf` from the checkout works (issue 20: "both names work")
    code = "import allocators.tlsf, allocators.grading, traces.rep, traces.record; print('ok')"
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr
