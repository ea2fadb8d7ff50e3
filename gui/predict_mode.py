"""Predict-the-block in the window: playback stops before each malloc and
asks which block the policy will take.

A :class:`PredictSession` puts one row of the window (one shown strategy; the
compare mode shows several) in predict mode.  :class:`PredictMode` holds the
sessions by row and decides where playback stops: before the next malloc
that some row in predict mode has not answered.  There the heap shows the
state just before the malloc; each such row answers by a click on a free
block (on its heap map or its structure view) or with "the heap will grow";
when every row has answered, the step plays (the window seeks to it, and the
animation of the step, when there is one, runs) and each row's answer is
marked right or wrong with the reason in its policy's words
(:func:`heapscope.allocators.predict.judge`).  "Show the answer" plays the step
without scoring it.  Scores are kept per row.

The window calls :meth:`PredictMode.stop_before` from the forward moves of
playback (Space, →); a jump elsewhere (the scrubber, Home, End, a click on a
plot) cancels the open question without scoring it.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal

from heapscope.allocators import predict
from heapscope.traces.trace import ALLOC


class PredictSession(QObject):
    """Predict mode for one row of the window: its open question, its
    answers and its score."""

    #: the question, an answer or the score changed
    changed = Signal()

    def __init__(self, model, row: int = 0, parent=None) -> None:
        super().__init__(parent)
        self.model, self.row = model, row
        self.active = False
        #: the step asked about (1-based; the row shows the heap before it), or None
        self.pending: int | None = None
        #: the answer given to the open question (a block address or GROW), or None
        self.guess = None
        self.before = None            # HeapState before the pending step
        #: every verdict of this session, in order (skipped questions included)
        self.verdicts: list[predict.Verdict] = []
        #: a click that was no answer, said until the next answer
        self.message = ""

    # ------------------------------------------------------------- the score
    @property
    def right(self) -> int:
        return sum(1 for v in self.verdicts if v.correct and not v.skipped)

    @property
    def answered(self) -> int:
        return sum(1 for v in self.verdicts if not v.skipped)

    @property
    def skipped(self) -> int:
        return sum(1 for v in self.verdicts if v.skipped)

    @property
    def last(self) -> predict.Verdict | None:
        return self.verdicts[-1] if self.verdicts else None

    def score_text(self) -> str:
        text = f"{self.right} of {self.answered} right" if self.answered else "no answers yet"
        if self.skipped:
            text += f", {self.skipped} shown without an answer"
        return text

    def reset(self) -> None:
        """Forget the answers and the score (a new round)."""
        self.verdicts = []
        self.message = ""
        self.changed.emit()

    def set_active(self, on: bool) -> None:
        if on == self.active:
            return
        self.active = on
        if not on:
            self.cancel()
        self.changed.emit()

    # ---------------------------------------------------------- questions
    def timeline(self):
        return self.model.timeline(self.row)

    def strategy_name(self) -> str:
        tl = self.timeline()
        return tl.strategy_name if tl is not None else ""

    def is_question(self, t: int) -> bool:
        """Step t (1-based) is a malloc: a question."""
        tl = self.timeline()
        if tl is None or not 1 <= t <= tl.n:
            return False
        return tl.op(t)[0] == ALLOC

    def ask(self, t: int) -> None:
        """Open the question of step t (the model shows position t - 1)."""
        tl = self.timeline()
        self.pending = t
        self.guess = None
        self.message = ""
        self.before = tl.after() if tl.position == t - 1 else tl.state_at(t - 1)
        self.changed.emit()

    def request(self) -> int:
        return self.timeline().op(self.pending)[2] if self.pending else 0

    def take(self, guess) -> bool:
        """A click (a heap address) or GROW for the open question: True when it
        is an answer; a click on no free block sets :attr:`message` instead."""
        if self.pending is None:
            return False
        if guess != predict.GROW:
            try:
                guess = predict.check_guess(self.before, guess)
            except predict.InvalidGuess as exc:
                self.message = str(exc)
                self.changed.emit()
                return False
        self.guess = guess
        self.message = ""
        self.changed.emit()
        return True

    def mark(self) -> predict.Verdict | None:
        """The step has played (the row shows it): mark the answer, or reveal
        the answer when none was given; close the question."""
        t = self.pending
        if t is None:
            return None
        tl = self.timeline()
        series = tl.series
        heap_before = int(series.heap[t - 2]) if t >= 2 else 0
        heap_after = int(series.heap[t - 1])
        args = (t, tl.op(t)[2], self.before, tl.last_record)
        if self.guess is None:
            verdict = predict.reveal(*args, tl.strategy_name, heap_before, heap_after)
        else:
            verdict = predict.judge(*args, self.guess, tl.strategy_name, heap_before, heap_after)
        self.verdicts.append(verdict)
        self.pending, self.guess, self.before = None, None, None
        self.changed.emit()
        return verdict

    def cancel(self) -> None:
        """Close the open question unscored (the teacher jumped elsewhere)."""
        if self.pending is not None:
            self.pending, self.guess, self.before = None, None, None
            self.message = ""
            self.changed.emit()


class PredictMode(QObject):
    """The rows in predict mode, and where playback stops for them."""

    #: predict mode turned on or off in some row
    active_changed = Signal(bool)
    #: a question opened (the step) or closed (None)
    question_changed = Signal(object)

    def __init__(self, model, parent=None) -> None:
        super().__init__(parent)
        self.model = model
        self.sessions: dict[int, PredictSession] = {}
        #: shows the answered step: the model's seek, or the window's step
        #: animator (gui/step_animator.py), which plays the step's events
        self.play = model.seek
        self._seeking = False
        model.step_changed.connect(self._model_moved)
        model.shown_changed.connect(self._shown_changed)

    def session(self, row: int = 0) -> PredictSession:
        s = self.sessions.get(row)
        if s is None:
            s = self.sessions[row] = PredictSession(self.model, row, self)
        return s

    @property
    def active(self) -> bool:
        return any(s.active for s in self.sessions.values())

    def active_sessions(self) -> list[PredictSession]:
        return [s for r, s in sorted(self.sessions.items()) if s.active and r < len(self.model.shown)]

    def set_active(self, on: bool, rows=None) -> None:
        """Predict mode on or off for ``rows`` (default: every shown row)."""
        rows = range(max(1, len(self.model.shown))) if rows is None else rows
        had = self.pending is not None
        for r in rows:
            self.session(r).set_active(on)
        if not self.active:
            self._close()
        if had and self.pending is None:
            # the rows turned off cancelled their question: the views that
            # hid the step's marks for it show them again
            self.question_changed.emit(None)
        self.active_changed.emit(self.active)

    @property
    def pending(self) -> int | None:
        """The step the open question is about, or None."""
        for s in self.active_sessions():
            if s.pending is not None:
                return s.pending
        return None

    # --------------------------------------------------------------- playback
    def first_question(self, frm: int, to: int) -> int | None:
        """The first malloc step t with frm < t <= to that an active row asks about."""
        sessions = self.active_sessions()
        if not sessions:
            return None
        for t in range(frm + 1, to + 1):
            if any(s.is_question(t) for s in sessions):
                return t
        return None

    def stop_before(self, frm: int, to: int) -> int:
        """Where a forward move from ``frm`` to ``to`` may go: ``to``, or
        the position just before the first question on the way, which is then
        asked."""
        t = self.first_question(frm, to)
        if t is None:
            return to
        self._seek(t - 1)
        for s in self.active_sessions():
            if s.is_question(t):
                s.ask(t)
        self.question_changed.emit(t)
        return t - 1

    def answer(self, row: int, guess) -> bool:
        """Row ``row`` answers the open question; when every asking row has
        answered, the step plays and each answer is marked.  False when the
        click was no answer (the row's message says why)."""
        s = self.session(row)
        if not s.active or s.pending is None or not s.take(guess):
            return False
        if all(x.guess is not None for x in self.active_sessions() if x.pending is not None):
            self._play()
        return True

    def reveal(self) -> None:
        """Play the open question's step without scoring the rows that did not answer."""
        if self.pending is not None:
            self._play()

    def _play(self) -> None:
        t = self.pending
        self._seeking = True
        try:
            self.play(t)
        finally:
            self._seeking = False
        for s in self.active_sessions():
            if s.pending == t:
                s.mark()
        self.question_changed.emit(None)

    def _seek(self, position: int) -> None:
        self._seeking = True
        try:
            self.model.seek(position)
        finally:
            self._seeking = False

    def _model_moved(self, position: int) -> None:
        pending = self.pending
        if pending is not None and not self._seeking and position != pending - 1:
            self._close()

    def _shown_changed(self) -> None:
        if not self._seeking:
            self._close()

    def _close(self) -> None:
        had = self.pending is not None
        for s in self.sessions.values():
            s.cancel()
        if had:
            self.question_changed.emit(None)
