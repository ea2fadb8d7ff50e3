"""The window's parts talk through public interfaces (issue 20).

``MainWindow`` is composed of parts, each a class in its own module: loading
(``gui/window_loading.py``), recent files (``gui/recent_files.py``), the
layout (``gui/window_layout.py``), the commands (``gui/window_menus.py``,
``gui/keys_help.py``) and compare mode (``gui/compare_mode.py``).  As in
napari (models emit events, widgets listen), they reach each other through
the show model and public methods and signals: none reads or calls another
object's ``_private`` member (compare mode used to call five of the
window's).  Read from the source with :mod:`ast`; no Qt needed.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PARTS = ["gui/main_window.py", "gui/window_loading.py", "gui/recent_files.py", "gui/window_layout.py",
         "gui/window_menus.py", "gui/keys_help.py", "gui/compare_mode.py", "gui/sandbox_edits.py", "gui/sandbox_panels.py", "gui/params_panel.py",
         "gui/trace_editor.py",
         "gui/file_watch.py", "gui/lesson_part.py", "gui/lesson_player.py", "gui/lesson_panel.py",
         "gui/lesson_stop.py", "gui/stop_travel.py"]


def private_reaches(source: str) -> list[str]:
    """``obj._name`` (read, call or write) where ``obj`` is not ``self`` or
    ``cls``: each as ``line: obj._name``.  Dunder names are not private."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if (isinstance(node, ast.Attribute) and node.attr.startswith("_")
                and not node.attr.startswith("__")
                and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))):
            found.append(f"{node.lineno}: {ast.unparse(node)}")
    return found


@pytest.mark.parametrize("path", PARTS)
def test_a_part_uses_no_other_objects_private_members(path):
    assert private_reaches((ROOT / path).read_text(encoding="utf-8")) == []


def test_the_check_sees_a_reach_into_the_window():
    """What compare mode did before (``w._start(...)``), and what it may do."""
    assert private_reaches("def f(w):\n    w._start(w.loader.request)\n") == ["2: w._start"]
    assert private_reaches("def f(w):\n    w.window._bind(True)\n") == ["2: w.window._bind"]
    assert private_reaches("class A:\n    def f(self):\n        self._x = self.loading.start()\n") == []

