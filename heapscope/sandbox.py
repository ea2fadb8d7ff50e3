"""The sandbox: a trace edited by hand, its undo and redo, and its replay.

A :class:`Sandbox` holds the edited trace as operations on names
(:mod:`heapscope.traces.named_ops`), checked after every change (operations
an edit made meaningless are kept, marked and skipped), the parameters
each strategy is replayed with, and an undo stack.  It knows no window:
the window's sandbox part (``gui/sandbox_edits.py``) asks it for edits and
shows what it answers; the tests drive it with no Qt at all.

* **Edits** are splices (:class:`Splice`: at an operation index, some
  operations removed, some inserted): inserting after a step, deleting,
  replacing, cutting what follows.  A parameter change is one too
  (:class:`ParamChange`).  Each is pushed on the undo stack with the step
  shown before and after it, so undo and redo show the step they left.
* **Replay** (:meth:`Sandbox.replayed`): each timeline of the old trace is
  rebuilt for the new one from the first step the edit changed
  (:func:`heapscope.allocators.timeline_edit.rebuilt`: the checkpoints and
  measures before it are kept), or from the start when its parameters
  changed.
* **What follows an insertion** either stays (``KEEP``: the rest of the
  trace replays on the changed heap, and what it makes meaningless is
  marked) or goes (``CUT``): the caller says which.
* **Dirty**: whether the trace differs from what was last saved or opened
  (the undo stack's position against the one at the save).
* **Lines**: the trace's text in the readable form -- the file's own lines
  (comments, lines the replay skips) while no edit changed its operations,
  or the trace editor's.  Saving keeps a skipped line in a ``.heap`` as a
  comment that marks it (:func:`~heapscope.traces.readable.mark_skipped`)
  and says which lines a ``.rep`` leaves out.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from heapscope.allocators.params import check_params
from heapscope.allocators.registry import STRATEGIES
from heapscope.allocators.timeline_edit import first_difference, rebuilt
from heapscope.traces.named_ops import CheckedOps, NamedOp, check_named, fresh_name, named_ops, op_texts
from heapscope.traces.readable import EXTENSION, mark_skipped, read_lines
from heapscope.traces.rep import write_rep, write_rep_bytes
from heapscope.traces.trace import ALLOC, FREE, REALLOC

#: what follows an insertion point: it stays, replayed on the changed heap, or it is cut
KEEP, CUT = "keep", "cut"


@dataclass(frozen=True)
class Splice:
    """Operations ``removed`` at index ``at`` replaced by ``inserted``; the
    step shown before the edit and the one to show after it."""
    at: int
    removed: tuple
    inserted: tuple
    step_before: int
    step_after: int

    def reversed(self) -> "Splice":
        return Splice(self.at, self.inserted, self.removed, self.step_after, self.step_before)


@dataclass(frozen=True)
class ParamChange:
    """Strategies' own parameters, from ``old`` to ``new`` ({strategy:
    {parameter: value}}; a strategy with none: its defaults)."""
    old: dict
    new: dict
    step_before: int
    step_after: int

    def reversed(self) -> "ParamChange":
        return ParamChange(self.new, self.old, self.step_after, self.step_before)


@dataclass
class Sandbox:
    """An edited trace with its undo stack (module docstring)."""
    ops: list = field(default_factory=list)
    #: each strategy's own parameters, by name (what the window's -P gives)
    params: dict = field(default_factory=dict)
    name: str = "new trace"
    #: the file the trace was read from or saved to, or None
    path: str | None = None
    #: {name: id} of the names that keep their ids (a trace read from a file)
    known_ids: dict = field(default_factory=dict)
    #: the readable lines the trace was read from (comments and skipped
    #: lines with them), or None; they stand for the trace while its
    #: operations are the ones they hold
    lines: list | None = None

    def __post_init__(self) -> None:
        self.ops = list(self.ops)
        self.params = {k: dict(v) for k, v in self.params.items()}
        self._undo: list = []
        self._redo: list = []
        self._saved_depth: int | None = 0
        self.checked: CheckedOps = self._check(self.ops)
        self._keep_lines(self.lines)

    @classmethod
    def of_trace(cls, trace, names: dict | None = None, params: dict | None = None,
                 path: str | None = None, lines: list | None = None) -> "Sandbox":
        """A sandbox editing a trace read from a file or made (ids named by
        ``names``, {id: name}, else ``b0``, ``b1`` ...); each keeps its id.
        ``lines``: the readable text it was read from, kept for the editor
        and the next save when its valid lines are exactly the trace."""
        ops = named_ops(trace, names)
        known = {op.name: int(i) for op, i in zip(ops, trace.ids.tolist())}
        return cls(ops, params or {}, trace.name or "trace", path, known, lines)

    def _keep_lines(self, lines) -> None:
        """Keep ``lines`` as the trace's text if they hold its operations."""
        ok = lines is not None and self._holds_ops(read_lines(lines))
        self.lines = list(lines) if ok else None
        self._lines_ops = list(self.ops) if ok else None

    def _holds_ops(self, parse) -> bool:
        """Whether the valid lines of ``parse`` (a read_lines) are the
        operations the sandbox replays, name for name."""
        valid = [NamedOp(kind, parse.name_of(ident), size) for kind, ident, size in parse.trace]
        return valid == [self.ops[i] for i in self.checked.op_of_step]

    def _check(self, ops) -> CheckedOps:
        return check_named(ops, self.name, self.path, self.known_ids)

    # ------------------------------------------------------------ reading
    @property
    def trace(self):
        """The trace replayed: the valid operations, ids numbered by name."""
        return self.checked.trace

    @property
    def problems(self) -> dict:
        """{operation index: what is wrong with it} for those skipped."""
        return self.checked.problems

    @property
    def dirty(self) -> bool:
        """The trace (or a parameter) differs from the one last saved or opened."""
        return self._saved_depth != len(self._undo)

    @property
    def can_undo(self) -> bool:
        return bool(self._undo)

    @property
    def can_redo(self) -> bool:
        return bool(self._redo)

    def undo_text(self) -> str:
        return describe(self._undo[-1]) if self._undo else ""

    def redo_text(self) -> str:
        return describe(self._redo[-1]) if self._redo else ""

    def name_of_id(self, ident: int) -> str | None:
        """The name of trace id ``ident`` (the map's blocks carry ids)."""
        return self.checked.name_of(ident)

    def text_lines(self) -> list[str]:
        """The trace in the readable form, a line each: the file's own lines
        while no edit changed its operations, else one per operation (those
        the replay skips too)."""
        if self.lines is not None and self.ops == self._lines_ops:
            return list(self.lines)
        return op_texts(self.ops)

    def new_name(self) -> str:
        return fresh_name(self.ops)

    def params_for(self, strategy: str) -> dict:
        return dict(self.params.get(strategy, {}))

    # -------------------------------------------------------------- edits
    def insert_after(self, step: int, ops, follow: str = KEEP) -> Splice:
        """Insert ``ops`` (NamedOps) right after step ``step``'s operation;
        with ``CUT`` every operation after them goes.  The step shown after
        it is the last inserted one's."""
        ops = tuple(ops)
        at = self.checked.index_after_step(step)
        removed = tuple(self.ops[at:]) if follow == CUT else ()
        return self._splice(at, removed, ops, step, None)

    def malloc_after(self, step: int, size: int, follow: str = KEEP) -> Splice:
        return self.insert_after(step, [NamedOp(ALLOC, self.new_name(), size)], follow)

    def free_after(self, step: int, name: str, follow: str = KEEP) -> Splice:
        return self.insert_after(step, [NamedOp(FREE, name)], follow)

    def realloc_after(self, step: int, name: str, size: int, follow: str = KEEP) -> Splice:
        return self.insert_after(step, [NamedOp(REALLOC, name, size)], follow)

    def replace(self, at: int, count: int, ops, step: int) -> Splice | None:
        """Operations ``at`` to ``at + count`` replaced by ``ops`` (a line
        edited, deleted or inserted); the view stays on step ``step``
        (clamped to the new trace).  None when nothing changes."""
        ops = tuple(ops)
        removed = tuple(self.ops[at:at + count])
        if removed == ops:
            return None
        return self._splice(at, removed, ops, step, step)

    def _splice(self, at: int, removed: tuple, inserted: tuple, step: int,
                step_after: int | None) -> Splice:
        """Push the splice; ``step_after`` None: the last inserted
        operation's step (else clamped to the new trace's steps)."""
        ops = _apply(self.ops, Splice(at, removed, inserted, step, step))
        checked = self._check(ops)
        if step_after is None:
            step_after = checked.step_of_op[at + len(inserted) - 1] if inserted else step
        edit = Splice(at, removed, inserted, step, min(step_after, len(checked.op_of_step)))
        self._push(edit, checked)
        return edit

    def delete(self, at: int, step: int) -> Splice | None:
        return self.replace(at, 1, (), step)

    def set_all(self, ops, step: int) -> Splice | None:
        """The whole list replaced by ``ops`` (the editor panel's text), as
        one splice of what differs."""
        ops = list(ops)
        start = 0
        while start < min(len(ops), len(self.ops)) and ops[start] == self.ops[start]:
            start += 1
        end_old, end_new = len(self.ops), len(ops)
        while end_old > start and end_new > start and ops[end_new - 1] == self.ops[end_old - 1]:
            end_old -= 1
            end_new -= 1
        return self.replace(start, end_old - start, ops[start:end_new], step)

    def set_params(self, strategy: str, params: dict, step: int) -> ParamChange | None:
        """Strategy ``strategy``'s own parameters set to ``params`` (checked:
        :class:`~heapscope.allocators.params.ParamError` names what is wrong)."""
        return self.set_many({strategy: params}, step)

    def set_many(self, params: dict, step: int) -> ParamChange | None:
        """Several strategies' own parameters at once ({strategy: params}),
        as one edit (the small-demo constants of every row)."""
        for strategy, own in params.items():
            check_params(STRATEGIES[strategy], dict(own))
        old = {name: self.params_for(name) for name in params}
        new = {name: dict(own) for name, own in params.items()}
        if old == new:
            return None
        return self._push(ParamChange(old, new, step, step))

    def _push(self, edit, checked: CheckedOps | None = None):
        self._apply(edit, checked)
        self._undo.append(edit)
        self._redo.clear()
        if self._saved_depth is not None and self._saved_depth >= len(self._undo):
            self._saved_depth = None        # the state saved can no longer be reached
        return edit

    def _apply(self, edit, checked: CheckedOps | None = None) -> None:
        if isinstance(edit, Splice):
            self.ops = _apply(self.ops, edit)
            self.checked = checked or self._check(self.ops)
        else:
            for name, own in edit.new.items():
                if own:
                    self.params[name] = dict(own)
                else:
                    self.params.pop(name, None)

    def undo(self):
        """Undo the last edit; it is returned reversed (its ``step_after`` is
        the step to show), or None when there is none."""
        return self._move(self._undo, self._redo)

    def take_back(self) -> None:
        """Undo the last edit and forget it (its replay was cancelled): no
        redo brings it back."""
        if self.undo() is not None:
            self._redo.pop()

    def redo(self):
        """Redo the last undone edit (returned as applied), or None."""
        return self._move(self._redo, self._undo)

    def _move(self, source: list, target: list):
        """Take the last edit of ``source``, apply it reversed, keep it on ``target``."""
        if not source:
            return None
        edit = source.pop().reversed()
        self._apply(edit)
        target.append(edit)
        return edit

    # ------------------------------------------------------------- replay
    def replayed(self, timelines, old_trace, common: dict | None = None, extra=None, **build) -> list:
        """Each of ``timelines`` (of ``old_trace``) rebuilt for the current
        trace and parameters (``common``, those every strategy takes, e.g.
        the window's --word, then the strategy's own from the sandbox, then
        ``extra(name)``'s: the window's Check After Every Step): from the
        first changed step, or from the start for a strategy whose
        parameters changed.  ``build``: ``progress`` and ``cancel``, as
        :meth:`~heapscope.allocators.replay.Timeline.build` takes them."""
        changed = first_difference(old_trace, self.trace)
        common = dict(common or {})

        def params(name: str) -> dict:
            return {**common, **self.params_for(name), **(extra(name) if extra else {})}
        return [rebuilt(tl, self.trace, changed, params=params(tl.strategy_name), **build)
                for tl in timelines]

    # --------------------------------------------------------------- save
    def save(self, path: str, lines: list | None = None) -> list:
        """Write the trace to ``path``: in the readable form with its names
        when the name ends in ``.heap`` (or ``.heap.gz``), else as a .rep (ids
        and header computed).  ``lines``: the text to save (the trace
        editor's), used when its valid lines are the trace, else
        :meth:`text_lines`.  A line the replay skips stays in a .heap as a
        comment that marks it (reopened, it is a skipped line again) and is
        left out of a .rep.  Remember it as saved.  Returns the skipped
        lines, ``[(1-based line, text, why)]``; TraceError when it cannot be
        written."""
        lines, problems = self._lines_to_save(lines)
        if readable_name(path):
            write_rep_bytes(path, "\n".join(mark_skipped(lines, problems) + [""]).encode("utf-8"))
            self.lines, self._lines_ops = list(lines), list(self.ops)
        else:
            write_rep(self.trace, path)
        self.mark_saved(path)
        return [(i + 1, lines[i], why) for i, why in sorted(problems.items())]

    def _lines_to_save(self, lines) -> tuple[list, dict]:
        """The lines to write and their problems (0-based line -> why)."""
        for text in (lines, self.lines if self.ops == self._lines_ops else None):
            if text is not None:
                parse = read_lines(text)
                if self._holds_ops(parse):
                    return list(text), dict(parse.problems)
        return op_texts(self.ops), dict(self.problems)

    def mark_saved(self, path: str | None = None) -> None:
        """What is shown now is what the file holds."""
        if path is not None:
            self.path = os.fspath(path)
        self._saved_depth = len(self._undo)


def readable_name(path: str) -> bool:
    """Whether ``path`` names a file of the readable form (``.heap``, ``.heap.gz``)."""
    lower = os.fspath(path).lower()
    return lower.endswith(EXTENSION) or lower.endswith(EXTENSION + ".gz")


def _apply(ops: list, edit: Splice) -> list:
    return ops[:edit.at] + list(edit.inserted) + ops[edit.at + len(edit.removed):]


def describe(edit) -> str:
    """An edit in a few words, for Edit > Undo's text."""
    if isinstance(edit, ParamChange):
        return ", ".join(edit.new) + " parameters"
    if len(edit.inserted) == 1 and not edit.removed:
        return edit.inserted[0].text()
    if edit.removed and not edit.inserted:
        return "delete " + (edit.removed[0].text() if len(edit.removed) == 1 else f"{len(edit.removed)} operations")
    if edit.removed and len(edit.inserted) == 1 and edit.inserted[0] != edit.removed[0]:
        return edit.inserted[0].text() + (f", cut {len(edit.removed)}" if len(edit.removed) > 1 else "")
    return "edit"
