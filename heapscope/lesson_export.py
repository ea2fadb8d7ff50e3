"""``heapscope lesson export FILE -o DIR``: a lesson as slides for a course
page (issue 23, docs/lessons.md, "Exporting a lesson").

Each stop becomes one PNG, ``DIR/stop-01.png`` ..., the window as it shows
that stop: the stop's step (and event), its selection outlined, its panels,
each of the lesson's strategies in a window of its own side by side, with
the lesson's parameters.  The narration becomes ``DIR/lesson.md``: the
title and introduction, then each stop's heading, narration, question (with
its choices), picture, and the answer with its explanation (after the
picture: a question is asked before the step is shown).

The windows are :mod:`heapscope.render`'s (:func:`~heapscope.render.make_windows`,
:func:`~heapscope.render.side_by_side`): a stop's picture is what
``heapscope render`` draws at that step, set as the lesson says.  The lesson
is loaded and checked (every claim) before any window is made, so a broken
lesson writes nothing; every file is checked before drawing and written
atomically (:mod:`heapscope.outputs`).
"""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
from dataclasses import dataclass
from typing import Callable

from .outputs import OutputError, atomic_output, check_output
from .allocators import phrases
from .render import DEFAULT_SIZE, RenderError, RenderRequest, check_request

__all__ = ["ExportRequest", "export_lesson", "lesson_markdown", "picture_name", "MARKDOWN_NAME"]

#: the narration's file in the output folder
MARKDOWN_NAME = "lesson.md"


@dataclass
class ExportRequest:
    folder: str
    size: tuple[int, int] = DEFAULT_SIZE
    presenter: bool = False
    theme: str = "light"


def picture_name(index: int, count: int) -> str:
    """The PNG of stop ``index`` (from 0): stop-01.png ... (as many digits as
    the last stop needs, so the files sort in order)."""
    return f"stop-{index + 1:0{max(2, len(str(count)))}d}.png"


def _answer_block(question, reply: str = "") -> list[str]:
    """The answer, its explanation and the narration written after the
    question (``reply``: it discusses the answer), folded."""
    if question is None:
        return []
    # a click question's answer is the block the picture shows taken
    answer = "the block the picture shows taken" if question.kind == "click" else question.answer
    lines = ["<details><summary>Answer</summary>", "", f"**{answer}**"]
    if question.explain:
        lines += ["", question.explain]
    if reply:
        lines += ["", _blank_runs(reply)]
    return lines + ["", "</details>", ""]


def _blank_runs(text: str) -> str:
    """The directives taken out leave runs of blank lines: one is enough."""
    return re.sub(r"\n\s*\n(\s*\n)+", "\n\n", text)


def _question_block(question) -> list[str]:
    if question is None:
        return []
    lines = [f"> **Question:** {question.text}"]
    if question.choices:
        lines.append(">")
        lines += [f"> - {choice}" for choice in question.choices]
    return lines + [""]


def lesson_markdown(lesson) -> str:
    """The lesson's narration as one Markdown page linking each stop's PNG."""
    count = len(lesson.stops)
    length = f", about {lesson.minutes} minutes" if lesson.minutes else ""
    lines = [f"# {lesson.title}", "",
             f"*{', '.join(lesson.strategies)}; {phrases.count(count, 'stop')}{length}*", ""]
    if lesson.text.intro:
        lines += [lesson.text.intro, ""]
    for index, state in enumerate(lesson.stops):
        stop = state.stop
        where = f"step {state.step}" + (f", event {state.event}" if state.event is not None else "")
        lines += [f"## {stop.title}", ""]
        # a question's reply (the narration after its ask: line) goes with its answer
        narration = stop.before_reply if state.question is not None else stop.narration
        if narration:
            lines += [_blank_runs(narration), ""]
        lines += _question_block(state.question)
        lines += [f"![{stop.title} ({where})]({picture_name(index, count)})", ""]
        lines += _answer_block(state.question, stop.reply if state.question is not None else "")
    return "\n".join(lines).rstrip() + "\n"


def planned_files(lesson, folder: str) -> list[str]:
    """Every file the export writes: the stops' PNGs, then the Markdown."""
    count = len(lesson.stops)
    return [os.path.join(folder, picture_name(i, count)) for i in range(count)] + [
        os.path.join(folder, MARKDOWN_NAME)]


def check_folder(folder: str) -> None:
    """OutputError unless ``folder`` is a folder, or can be made as one (its
    parent exists and is writable); nothing is made here."""
    if os.path.isdir(folder):
        if not os.access(folder, os.W_OK):
            raise OutputError(f"{folder}: cannot write the lesson there: the folder is not writable")
        return
    if os.path.exists(folder):
        raise OutputError(f"{folder}: cannot write the lesson there: it is a file, not a folder")
    parent = os.path.dirname(os.path.abspath(folder))
    if not os.path.isdir(parent):
        raise OutputError(f"{folder}: cannot make the folder: {parent} does not exist")
    if not os.access(parent, os.W_OK):
        raise OutputError(f"{folder}: cannot make the folder: {parent} is not writable")


def export_lesson(lesson, request: ExportRequest, lesson_file: str | None = None,
                  progress: Callable[[int, int], None] | None = None) -> list[str]:
    """Write ``lesson`` (loaded and checked) into ``request.folder``; the files
    written.  OutputError or RenderError, before any drawing, for a folder or
    picture that cannot be written.  ``progress(done, total)`` hears of each
    stop drawn."""
    check_folder(request.folder)
    render_request = RenderRequest(lesson.title, list(lesson.strategies),
                                   os.path.join(request.folder, picture_name(0, len(lesson.stops))),
                                   size=request.size, presenter=request.presenter, theme=request.theme)
    made = not os.path.isdir(request.folder)
    os.makedirs(request.folder, exist_ok=True)
    try:
        paths = planned_files(lesson, request.folder)
        inputs = [lesson_file] if lesson_file else []
        for path in paths:
            check_output(path, inputs)
        check_request(render_request, lesson.trace, "png")      # the pixel budget of the pictures
        timelines = [lesson.timelines[name] for name in lesson.strategies]
        with tempfile.TemporaryDirectory(prefix="heapscope-lesson-", ignore_cleanup_errors=True) as settings:
            written = _draw_stops(lesson, timelines, render_request, paths[:-1], settings, progress)
        with atomic_output(paths[-1], "w") as f:
            f.write(lesson_markdown(lesson))
    except BaseException:
        if made:          # a folder made for nothing is not left behind (one with pictures is)
            with contextlib.suppress(OSError):
                os.rmdir(request.folder)
        raise
    return written + [paths[-1]]


def _draw_stops(lesson, timelines, render_request, paths, settings, progress) -> list[str]:
    from .gui import export
    from .render import close_windows, make_windows, side_by_side
    first = lesson.stops[0].step
    windows = make_windows(lesson.trace, timelines, render_request, None, first, settings)
    ids = {name: ident for ident, name in lesson.names.items()}
    written = []
    try:
        for w, timeline in zip(windows, timelines):
            # the blocks by the lesson trace's names in the window's words ("malloc(40) for d")
            w.model.replace_trace(lesson.trace, [timeline], first, lesson.names)
        for index, (state, path) in enumerate(zip(lesson.stops, paths)):
            for w in windows:
                set_stop(w, state, ids)
            export.settle()
            try:
                export.save_image(side_by_side([export.grab_image(w) for w in windows]), path)
            except export.ExportError as exc:
                raise RenderError(str(exc)) from None
            written.append(path)
            if progress is not None:
                progress(index + 1, len(lesson.stops))
    finally:
        close_windows(windows)
    return written


def set_stop(window, state, ids: dict[str, int]) -> None:
    """Set ``window`` as the lesson's stop says: the step and event, the
    panels (a stop without ``show:`` keeps the previous stop's), the
    selected block (none when it is not live in this window's heap); the
    window's lesson player sets its stops the same way (gui/lesson_stop.py)."""
    from .gui.lesson_stop import set_stop as set_window_stop
    set_window_stop(window, state, ids, state.show or None)
