"""The trace editor panel (View > Trace Editor, ``T``): the shown trace in
the readable syntax, one operation a line, edited in place.

    a = malloc(240)
    b = calloc(4, 60)
    free(a)
    c = malloc(200)      # fits where a was?

The lines are the sandbox's operations (:func:`heapscope.traces.named_ops.op_texts`);
the shown step's line is lit and kept in view.  Typing replays: after a
short pause the lines are read leniently (:func:`heapscope.traces.readable.read_lines`,
the syntax ``heapscope check`` reads strictly), the sandbox takes the valid
ones as one edit (:meth:`heapscope.sandbox.Sandbox.set_all`: undone by
Ctrl+Z like any edit, the window's undo, not the text's) and every shown
strategy replays from the first changed operation, the view staying on the
same step.  A line that does not parse, or names a block that is not live
there, is underlined with its message (a tooltip over it, and the line
under the editor while the cursor is on it); the replay skips it, so the
heap shown is the last valid one.  Comments, blank lines and skipped lines
stay: an edit made elsewhere (Malloc…, a block's menu, undo) puts its lines
in or takes them out (after an edit that left skipped operations in the
sandbox, the lines are written again from the operations).  Saving writes
these lines (:meth:`TraceEditor.saved_lines`): a ``.heap`` keeps the
skipped ones as comments that mark them, and opened again the editor shows
them underlined as before (``#! `` lines: :func:`heapscope.traces.readable.mark_skipped`).
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, Qt, QTimer
from PySide6.QtGui import QColor, QFont, QKeySequence, QTextCharFormat, QTextCursor, QTextFormat
from PySide6.QtWidgets import QLabel, QPlainTextEdit, QTextEdit, QToolTip, QVBoxLayout, QWidget

from heapscope.sandbox import Splice
from heapscope.traces.named_ops import NamedOp, op_texts
from heapscope.traces.readable import read_lines

#: ms of quiet after typing before the lines are read and replayed
TYPING_PAUSE_MS = 350
#: the editor shows traces of at most this many operations (Malloc… and the
#: block menu edit any trace)
MAX_LINES = 20_000
#: the underline of a line the replay skips (Okabe & Ito's vermillion)
PROBLEM_COLOUR = QColor(213, 94, 0)
#: the shown step's line (Okabe & Ito's yellow, light)
STEP_COLOUR = QColor(240, 228, 66, 110)

HELP = ("One operation a line: a = malloc(240), b = calloc(4, 60), a = realloc(a, 500), "
        "free(a); # starts a comment. Typing replays every row.")


def _end_of(lines: list) -> int:
    """Where a line added at the end goes: before the trailing blank lines."""
    end = len(lines)
    while end and not lines[end - 1].strip():
        end -= 1
    return end


class TraceText(QPlainTextEdit):
    """The text: the window's Ctrl+Z / Ctrl+Shift+Z undo and redo the
    sandbox's edits (the text's own undo would make a second history), and a
    tooltip names what is wrong with the line under the mouse."""

    def __init__(self, panel) -> None:
        super().__init__()
        self.panel = panel
        self.setUndoRedoEnabled(False)
        self.setLineWrapMode(QPlainTextEdit.NoWrap)
        # monospace, at the window's text size (presenter mode scales it: the
        # family alone is set, the size is the window's)
        font = QFont(self.font())
        font.setFamily("monospace")
        font.setStyleHint(QFont.Monospace)
        self.setFont(font)

    def event(self, e) -> bool:
        if e.type() == QEvent.ShortcutOverride and (e.matches(QKeySequence.Undo)
                                                    or e.matches(QKeySequence.Redo)):
            e.ignore()                  # the window's action takes it
            return False
        if e.type() == QEvent.ToolTip:
            line = self.cursorForPosition(e.pos()).blockNumber()
            message = self.panel.problems.get(line)
            if message:
                QToolTip.showText(e.globalPos(), f"line {line + 1}: {message}", self)
            else:
                QToolTip.hideText()
            return True
        return super().event(e)


class TraceEditor(QWidget):
    """The panel (module docstring), for ``window``'s sandbox part."""

    def __init__(self, window) -> None:
        super().__init__()
        self.window = window
        self.model = window.model
        self.text = TraceText(self)
        self.message = QLabel(HELP)
        self.message.setWordWrap(True)
        box = QVBoxLayout(self)
        box.setContentsMargins(4, 4, 4, 4)
        box.addWidget(self.text, 1)
        box.addWidget(self.message)
        #: {0-based line: what is wrong with it} of the lines the replay skips
        self.problems: dict[int, str] = {}
        #: the line of each step's operation (index t - 1)
        self.line_of_step: list[int] = []
        self._writing = False           # the text is being set, not typed
        self._mine = False              # the sandbox edit under way comes from the text
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(TYPING_PAUSE_MS)
        self._timer.timeout.connect(self.apply)
        self.text.textChanged.connect(self._typed)
        self.text.cursorPositionChanged.connect(self._say_line)
        #: the valid operations of the text as last read (NamedOps)
        self.text_ops: list = []
        window.edits.changed.connect(self._sandbox_changed)
        window.edits.editor_lines = self.saved_lines
        window.edits.before_undo.connect(self.flush)
        self.model.trace_changed.connect(self._trace_changed)
        self.model.step_changed.connect(self._show_step)

    # ------------------------------------------------------------ writing
    def showEvent(self, event) -> None:
        super().showEvent(event)
        self.write()

    def write(self) -> None:
        """The lines again from the sandbox's operations (the shown trace)."""
        if not self.isVisible():
            return                      # written when it shows: a big trace costs
        self._timer.stop()
        trace = self.model.trace
        if trace is None:
            lines = []
        elif len(trace) > MAX_LINES:
            self._set_text("")
            self.text.setReadOnly(True)
            self.message.setText(f"This trace has {len(trace):,} operations: the editor shows "
                                 f"traces of at most {MAX_LINES:,}. Malloc… (M) and a block's right "
                                 "click edit any trace.")
            return
        else:
            lines = self.window.edits.current().text_lines()
        self.text.setReadOnly(False)
        self._set_text("\n".join(lines))
        self._read(lines)
        self._show_step()

    def _set_text(self, text: str) -> None:
        self._writing = True
        try:
            self.text.setPlainText(text)
        finally:
            self._writing = False

    def _trace_changed(self) -> None:
        box = self.window.edits.sandbox
        if box is None or box.trace is not self.model.trace:
            self.write()                # another trace (an edit's follows as changed)

    def _sandbox_changed(self, edit) -> None:
        """An edit made elsewhere (Malloc…, a block's menu, undo, a
        parameter): the text follows it, keeping its comments and skipped
        lines when it can (the edit's lines put in or taken out), else
        written again from the operations."""
        if self._mine or not self.isVisible():
            return
        box = self.window.edits.sandbox
        if box is None:
            return
        valid = [box.ops[i] for i in box.checked.op_of_step]
        if valid == self.text_ops:      # a parameter: the lines stay
            self._show_step()
            return
        if not (isinstance(edit, Splice) and self._splice_lines(box, edit)):
            self.write()

    def _splice_lines(self, box, edit) -> bool:
        """Put ``edit``'s operations in the text's lines, or take them out;
        False when the text does not hold exactly the operations before it."""
        before = box.ops[:edit.at] + list(edit.removed) + box.ops[edit.at + len(edit.inserted):]
        if before != self.text_ops:     # the model holds skipped operations: no line for each
            return False
        lines = self.lines()
        op_line = self.line_of_step
        first = op_line[edit.at] if edit.at < len(op_line) else _end_of(lines)
        for line in sorted((op_line[edit.at + k] for k in range(len(edit.removed))), reverse=True):
            del lines[line]
        texts = op_texts(box.ops)[edit.at:edit.at + len(edit.inserted)]
        lines[first:first] = texts
        self._set_text("\n".join(lines))
        self._read(lines)
        if self.text_ops != [box.ops[i] for i in box.checked.op_of_step]:
            # a skipped line reads now (its block came live): the heap shows it too
            self.apply()
        self._show_step()
        return True

    # ------------------------------------------------------------ reading
    def _typed(self) -> None:
        if not self._writing:
            self._timer.start()

    def flush(self) -> None:
        """Read what was typed now, not after the pause (before an undo)."""
        if self._timer.isActive():
            self._timer.stop()
            self.apply()

    def lines(self) -> list[str]:
        return self.text.toPlainText().split("\n")

    def saved_lines(self) -> list[str] | None:
        """The lines a save writes (what was typed read first), comments and
        skipped lines included; None when the editor does not hold the
        shown trace (hidden since, or a trace too long for it)."""
        self.flush()
        box = self.window.edits.sandbox
        if box is None or box.trace is not self.model.trace or self.text.isReadOnly():
            return None
        if self.text_ops != [box.ops[i] for i in box.checked.op_of_step]:
            return None
        lines = self.lines()
        return lines[:_end_of(lines)]

    def apply(self) -> None:
        """Read the lines and replay their valid operations as one edit."""
        w = self.window
        self._read(self.lines())
        ops = list(self.text_ops)
        if self.model.trace is None:
            w.edits.new_trace()
        self._mine = True
        try:
            w.edits.edit(lambda box, step: box.set_all(ops, step), animate=False)
        finally:
            self._mine = False
        self._show_step()

    def _read(self, lines):
        """Read ``lines`` leniently; keep their problems and where each step is."""
        parse = read_lines(lines)
        self.problems = dict(parse.problems)
        self.line_of_step = list(parse.op_line)
        self.text_ops = [NamedOp(kind, parse.name_of(ident), size) for kind, ident, size in parse.trace]
        self._say_line()
        return parse

    # ----------------------------------------------------------- showing
    def _show_step(self, *_) -> None:
        """Light the shown step's line and underline the skipped ones."""
        t = self.model.position
        doc = self.text.document()
        selections = []
        for line, message in self.problems.items():
            block = doc.findBlockByNumber(line)
            if not block.isValid():
                continue
            sel = QTextEdit.ExtraSelection()
            cursor = QTextCursor(block)
            cursor.movePosition(QTextCursor.EndOfBlock, QTextCursor.KeepAnchor)
            sel.cursor = cursor
            fmt = QTextCharFormat()
            fmt.setUnderlineStyle(QTextCharFormat.SpellCheckUnderline)
            fmt.setUnderlineColor(PROBLEM_COLOUR)
            fmt.setToolTip(message)
            sel.format = fmt
            selections.append(sel)
        if 0 < t <= len(self.line_of_step):
            block = doc.findBlockByNumber(self.line_of_step[t - 1])
            if block.isValid():
                sel = QTextEdit.ExtraSelection()
                sel.cursor = QTextCursor(block)
                fmt = QTextCharFormat()
                fmt.setBackground(STEP_COLOUR)
                fmt.setProperty(QTextFormat.FullWidthSelection, True)
                sel.format = fmt
                selections.insert(0, sel)
                if not self.text.hasFocus():        # do not move what is being typed
                    self.text.setTextCursor(QTextCursor(block))
                    self.text.ensureCursorVisible()
        self.text.setExtraSelections(selections)

    def _say_line(self) -> None:
        """Under the editor: the cursor's line's problem, else how many lines
        are skipped, else how to write one."""
        line = self.text.textCursor().blockNumber()
        if line in self.problems:
            self.message.setText(f"line {line + 1}: {self.problems[line]} (skipped)")
        elif self.problems:
            first = min(self.problems)
            n = len(self.problems)
            self.message.setText(f"{n} line{'s' if n > 1 else ''} skipped; line {first + 1}: "
                                 f"{self.problems[first]}")
        else:
            self.message.setText(HELP)

    def problem_lines(self) -> list[int]:
        """The lines underlined now (tests read them back from the editor)."""
        fmt_lines = []
        for sel in self.text.extraSelections():
            if sel.format.underlineStyle() == QTextCharFormat.SpellCheckUnderline:
                fmt_lines.append(sel.cursor.blockNumber())
        return sorted(fmt_lines)
