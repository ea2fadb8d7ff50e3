"""Trace files shipped with heapscope, and the list of them shown as examples.

``default.rep`` is ``vo1989()`` -- Phong Vo's 1989 simulation with its default
parameters -- written by ``python -m heapscope.traces.make_bundled``.  The
``*.rep.gz`` files are real programs recorded with ``heapscope record`` by
``python -m heapscope.traces.make_real_traces``, which also writes
``manifest.json`` (read here) and ``README.md`` (for people): the command,
the program's version and the date of each.  These files are package data: a
distribution must include ``traces/bundled/*.rep``, ``*.rep.gz``, ``*.json``
and ``*.md``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

DEFAULT_NAME = "default.rep"
MANIFEST_NAME = "manifest.json"


@dataclass(frozen=True)
class Example:
    """One bundled trace: ``name`` is what ``heapscope compare NAME`` takes."""
    name: str
    file: str
    title: str
    ops: int
    how: str = ""

    @property
    def path(self) -> Path:
        return bundled_path(self.file)

    @property
    def label(self) -> str:
        """For a menu: the title and the size."""
        return f"{self.title} ({self.ops:,} ops)"


DEFAULT_EXAMPLE = Example("default", DEFAULT_NAME, "Vo 1989 workload, generated", 20000,
                          "vo1989() with its default seed (traces/make_bundled.py)")


def bundled_path(name: str) -> Path:
    """Path of a bundled trace file (the package must be installed unzipped)."""
    return Path(str(resources.files(__name__).joinpath(name)))


def default_trace_path() -> Path:
    """Path of the default trace, ``traces/bundled/default.rep``."""
    return bundled_path(DEFAULT_NAME)


def manifest() -> list[dict]:
    """The entries of ``manifest.json`` (empty if it is missing)."""
    path = bundled_path(MANIFEST_NAME)
    if not path.is_file():
        return []
    return json.loads(path.read_text(encoding="utf-8"))["traces"]


def examples() -> list[Example]:
    """The default trace, then the recorded real programs."""
    out = [DEFAULT_EXAMPLE]
    for entry in manifest():
        out.append(Example(entry["name"], entry["file"], entry["title"], entry["ops"],
                           f"{entry['command']} ({entry['version']}, {entry['recorded']})"))
    return out


def example_path(name: str) -> Path | None:
    """The file of the bundled trace called ``name``, or None."""
    for ex in examples():
        if ex.name == name:
            return ex.path
    return None


def examples_help() -> str:
    """The bundled traces, one a line, for a command's ``--help``."""
    items = examples()
    width = max(len(ex.name) for ex in items)
    lines = ["bundled traces (give the name instead of a file):"]
    for ex in items:
        lines.append(f"  {ex.name.ljust(width)}  {ex.label}")
    lines.append("how each was made: traces/bundled/README.md")
    return "\n".join(lines)
