"""Lessons: guided demonstrations a teacher writes in one text file (issue 23,
docs/lessons.md).

A lesson is Markdown with a TOML front matter naming the trace and the
strategies, then stops (``##`` headings) with directives (``step: 12``,
``select: b``, ``show: structure``) and claims (``expect: buddy splits 3
times``) that are checked against the replay when the lesson is loaded, so a
lesson cannot silently lie after a trace or a strategy changes.

- :mod:`.reader`: the file read into front matter and stops, lines kept;
- :mod:`.claims`: what an ``expect:`` line may say, and its check;
- :mod:`.checking`: the lesson replayed and every directive and claim checked.

The bundled lessons are the ``*.md`` files of this package
(:func:`bundled_lessons`).  Nothing here imports Qt: the window plays a
:class:`Lesson`, it does not read one.
"""

from __future__ import annotations

from pathlib import Path

from .checking import Lesson, Question, StopState, load_lesson, load_lesson_text
from .reader import DIRECTIVES, PANELS, LessonError, read_lesson_text

__all__ = ["Lesson", "Question", "StopState", "LessonError", "load_lesson", "load_lesson_text", "read_lesson_text",
           "bundled_lessons", "lesson_path", "DIRECTIVES", "PANELS"]

_HERE = Path(__file__).resolve().parent


def bundled_lessons() -> list[Path]:
    """The lessons shipped with heapscope, by file name."""
    return sorted(_HERE.glob("*.md"))


def lesson_path(name: str) -> Path | None:
    """The bundled lesson called ``name`` (its file name without ``.md``), or None."""
    for path in bundled_lessons():
        if path.stem == name:
            return path
    return None
