"""Reading a lesson file: its TOML front matter and its stops (docs/lessons.md).

A lesson is Markdown with a front matter between two ``+++`` lines, read with
the standard library's :mod:`tomllib`, then stops: each a ``##`` heading,
its narration, and directives, one a line, of the form ``word: value`` at
the start of the line (outside code fences)::

    +++
    title = "Where splinters gather"
    minutes = 20
    strategies = ["next-fit", "first-fit"]
    trace = '''
    a = malloc(100)
    free(a)
    b = malloc(40)
    '''
    +++

    ## b goes where a was
    Both strategies take the first free block that fits.

    step: 3
    select: b
    expect: places b at the address a had

This module only reads: every line of the file keeps its number, so a
mistake found later (a claim that is false, a name the trace does not hold)
is reported as ``FILE:LINE: message`` (:class:`LessonError`).  What the
directives mean is checked against the replay in :mod:`.checking`.
"""

from __future__ import annotations

import os
import re
import tomllib
from dataclasses import dataclass, field

__all__ = ["LessonError", "Directive", "Stop", "LessonText", "read_lesson_text", "DIRECTIVES", "PANELS"]

#: the directives a stop may hold, with what each takes (for messages and docs)
DIRECTIVES = {
    "step": "step: N (0 is the empty heap, N the heap after the N-th operation)",
    "event": "event: K (the K-th event of the step, from 1)",
    "select": "select: NAME (a block by its name in the trace)",
    "show": "show: PANEL, PANEL ... (panels: map, structure, explain, plots, gauges)",
    "expect": "expect: CLAIM (docs/lessons.md, 'Claims')",
    "ask": "ask: QUESTION (asked before the stop's step is shown)",
    "choices": "choices: A | B | C (the answers offered to an ask:)",
    "answer": "answer: A (the right one of the choices)",
    "explain": "explain: TEXT (shown once the question is answered)",
}
#: the window's panels a ``show:`` directive may name
PANELS = ("map", "structure", "explain", "plots", "gauges")
#: the front matter's keys
FRONT_KEYS = {"title", "minutes", "trace", "strategy", "strategies", "params", "summary"}

_FENCE = "+++"
# a directive: a lower-case word and a colon at the start of the line, then a
# space or the end ("http://" is no directive)
_DIRECTIVE = re.compile(r"([a-z][a-z-]*):(?:\s+(.*?))?\s*\Z")
_HEADING = re.compile(r"##\s+(.*?)\s*#*\s*\Z")
_CODE_FENCE = re.compile(r"\s{0,3}(```|~~~)")
_TOML_LINE = re.compile(r"at line (\d+)")


class LessonError(ValueError):
    """A lesson that cannot be played as written: ``path:line: message``."""

    def __init__(self, message: str, path: str | None = None, line: int | None = None) -> None:
        self.message = message
        self.path = path
        self.line = line
        super().__init__(message, path, line)

    def __str__(self) -> str:
        where = ":".join(str(p) for p in (self.path, self.line) if p is not None)
        return f"{where}: {self.message}" if where else self.message


@dataclass(frozen=True)
class Directive:
    """One ``word: value`` line of a stop, with its line number (1-based)."""
    word: str
    value: str
    line: int


@dataclass
class Stop:
    """A ``##`` heading, the narration under it (Markdown, directives taken
    out) and its directives in order.  ``reply`` is the part of the
    narration written after the stop's ``ask:`` line: it discusses the answer,
    so the window shows it once the question is answered (empty without a
    question, or with nothing after it)."""
    title: str
    line: int
    narration: str = ""
    directives: list[Directive] = field(default_factory=list)
    reply: str = ""
    asked_after: int | None = None       # narration lines before the ask: line (while reading)

    def values(self, word: str) -> list[Directive]:
        return [d for d in self.directives if d.word == word]

    @property
    def before_reply(self) -> str:
        """The narration shown while the stop's question waits for its answer."""
        if not self.reply:
            return self.narration
        return self.narration[:len(self.narration) - len(self.reply)].strip()

    def finish(self, lines: list[str]) -> None:
        """Its narration from the lines read under it."""
        self.narration = "\n".join(lines).strip()
        if self.asked_after is not None:
            self.reply = "\n".join(lines[self.asked_after:]).strip()


@dataclass
class LessonText:
    """What a lesson file says, read but not yet checked against a replay.

    ``front``: the front matter's table; ``key_lines``: the line of each
    top-level key of it (for messages); ``trace_line``: the line before the
    first line of an inline trace (its line 1 is file line trace_line + 1);
    ``intro``: the Markdown before the first stop."""
    path: str
    front: dict
    key_lines: dict[str, int]
    trace_line: int
    intro: str
    stops: list[Stop]

    def line_of(self, key: str) -> int:
        return self.key_lines.get(key, 1)

    @property
    def title(self) -> str:
        return str(self.front.get("title", os.path.basename(self.path)))

    @property
    def minutes(self) -> int | None:
        return self.front.get("minutes")


def _split_lines(text: str) -> list[str]:
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def _front_matter(lines: list[str], path: str) -> tuple[dict, dict[str, int], int, int]:
    """(table, key lines, inline trace offset, index of the first body line)."""
    first = 0
    while first < len(lines) and not lines[first].strip():
        first += 1
    if first == len(lines) or lines[first].strip() != _FENCE:
        raise LessonError("a lesson starts with its front matter between two '+++' lines "
                          "(title, minutes, trace, strategies)", path, first + 1 if first < len(lines) else 1)
    try:
        end = next(i for i in range(first + 1, len(lines)) if lines[i].strip() == _FENCE)
    except StopIteration:
        raise LessonError("the front matter opened here is never closed by a '+++' line", path,
                          first + 1) from None
    body = "\n".join(lines[first + 1:end])
    try:
        front = tomllib.loads(body)
    except tomllib.TOMLDecodeError as exc:
        m = _TOML_LINE.search(str(exc))
        line = first + 1 + int(m.group(1)) if m else first + 1
        message = _TOML_LINE.sub("", str(exc)).replace("()", "").strip().rstrip(" ,")
        raise LessonError(f"front matter: {message}", path, line) from None
    key_lines: dict[str, int] = {}
    trace_line = first + 1
    in_string = False       # inside a multi-line string: its lines are no keys
    for i in range(first + 1, end):
        m = None if in_string else re.match(r"\s*(?:\[\s*)?([A-Za-z_][A-Za-z0-9_-]*)", lines[i])
        if (lines[i].count('"""') + lines[i].count("'''")) % 2:
            in_string = not in_string
        if m and m.group(1) in front and m.group(1) not in key_lines:
            key_lines[m.group(1)] = i + 1
            if m.group(1) == "trace":
                # TOML drops the newline right after opening triple quotes
                rest = lines[i].split("=", 1)[-1].strip()
                opened = rest[:3] in ('"""', "'''")
                trace_line = i + 1 if opened and not rest[3:].strip() else i
    for key, kind, what in (("title", str, "a string"), ("summary", str, "a string"),
                            ("minutes", int, "a whole number of minutes")):
        value = front.get(key)
        if value is not None and (not isinstance(value, kind) or isinstance(value, bool)
                                  or (kind is int and value <= 0)):
            raise LessonError(f"front matter: {key} is {what}, not {value!r}", path,
                              key_lines.get(key, first + 1))
    for key in front:
        if key not in FRONT_KEYS:
            raise LessonError(f"front matter: unknown key {key!r}; a lesson's keys are "
                              f"{', '.join(sorted(FRONT_KEYS))}", path, key_lines.get(key, first + 1))
    return front, key_lines, trace_line, end + 1


def read_lesson_text(text: str, path: str = "<lesson>") -> LessonText:
    """Split a lesson into its front matter and stops; LessonError with the
    line for a missing or bad front matter, a directive outside a stop or
    one heapscope does not know, a lesson without stops."""
    lines = _split_lines(text)
    front, key_lines, trace_line, start = _front_matter(lines, path)
    intro: list[str] = []
    stops: list[Stop] = []
    narration: list[str] = intro
    in_code = False
    for index in range(start, len(lines)):
        line, number = lines[index], index + 1
        if _CODE_FENCE.match(line):
            in_code = not in_code
        if in_code or _CODE_FENCE.match(line):
            narration.append(line)
            continue
        heading = _HEADING.match(line)
        if heading:
            if stops:
                stops[-1].finish(narration)
            stops.append(Stop(heading.group(1), number))
            narration = []
            continue
        m = _DIRECTIVE.match(line)
        if m:
            word, value = m.group(1), (m.group(2) or "").strip()
            if word not in DIRECTIVES:
                raise LessonError(f"unknown directive {word!r}; a stop's directives are "
                                  f"{', '.join(DIRECTIVES)} (a narration line that starts with "
                                  f"'word:' is read as one: capitalise it)", path, number)
            if not stops:
                raise LessonError(f"directive {word!r} before the first stop (a '## heading')", path, number)
            if not value:
                raise LessonError(f"{word!r} needs a value: {DIRECTIVES[word]}", path, number)
            stops[-1].directives.append(Directive(word, value, number))
            if word == "ask":
                stops[-1].asked_after = len(narration)
            continue
        narration.append(line)
    if stops:
        stops[-1].finish(narration)
    else:
        raise LessonError("a lesson has at least one stop: a '## heading' with its narration", path,
                          len(lines))
    return LessonText(path, front, key_lines, trace_line, "\n".join(intro).strip(), stops)
