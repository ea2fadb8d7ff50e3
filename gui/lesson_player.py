"""Playing a lesson in the window: its stops, Next and Back, its questions and
the score (issue 23, docs/lessons.md, "Playing a lesson").

A :class:`LessonPlayer` holds a loaded lesson (:class:`heapscope.lessons.Lesson`,
every claim checked), the stop shown and the answers given, and sets the
window to each stop through the window's public parts
(:mod:`heapscope.gui.lesson_stop`): the show model, the View menu's actions,
the step animator, compare mode for a lesson of several strategies.

* **Next** goes to the following stop, playing the steps in between
  (:class:`~heapscope.gui.stop_travel.StopTravel`), then sets the stop's
  event and selection; **Back** sets the stop before exactly, at once
  (nothing plays backwards); **Back to stop** sets the current stop again
  after the student wandered off with the free controls.
* A stop with a **question** is first shown as it was before its step
  (:meth:`LessonPlayer.asked_at`: the question is asked before the step is
  shown) and Next waits for the answer: one of the choices, a click on the block the step's malloc takes
  (``answer: click``; judged by the replay, :mod:`heapscope.allocators.predict`,
  for the lesson's first strategy), or, for a question without choices,
  Show the Answer.  Then the step plays, the verdict and the explanation
  show, and the score counts it ("2 of 3 right"); a question shown without
  an answer is not scored.  Back to an answered stop shows it answered.

The player emits :attr:`changed` whenever what the lesson panel shows
changed; it holds no widget (gui/lesson_panel.py draws it).
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QObject, Signal

from heapscope.allocators.predict import GROW

from .lesson_stop import select_block, set_panels, shown_panels
from .own_moves import OwnMoves
from .predict_mode import PredictSession
from .show_model import timeline_key
from .stop_travel import StopTravel
from .turns import turns


@dataclass(frozen=True)
class Answer:
    """The answer given at a stop's question."""
    given: str              # in words: the choice, "the block at 0x2b0", "the heap will grow"
    right: bool | None      # None: the answer was shown without one (not scored)
    verdict: str = ""       # why, in the policy's words (a click question)


def _shown(state) -> tuple[int, int | None]:
    """(position, event index or None) a stop shows once answered."""
    return state.step, None if state.event is None else state.event - 1


def _order(shown: tuple[int, int | None]) -> tuple[int, float]:
    """A shown state's place in time: the whole step comes after its events."""
    position, event = shown
    return position, float("inf") if event is None else event


class LessonPlayer(QObject):
    #: what the lesson panel shows changed (the stop, an answer, arrival, a move away)
    changed = Signal()
    #: a lesson started (True) or closed (False)
    active_changed = Signal(bool)

    def __init__(self, window) -> None:
        super().__init__(window)
        self.window = window
        self.model = window.model
        self.lesson = None
        #: a lesson started whose first stop is not shown yet (a turn later)
        self.starting = False
        #: the shown stop's index (from 0)
        self.index = 0
        #: the answers given, by stop index
        self.answers: dict[int, Answer] = {}
        #: said in the panel until the next move ("answer the question first")
        self.message = ""
        self.travel = StopTravel(self.model, window.animator, lambda: window.player.speed, self)
        self.travel.arrived.connect(self._arrived)
        self.travel.left.connect(self.changed)
        self.session = PredictSession(self.model, 0, self)     # a click question's, row 0
        self._ids: dict[str, int] = {}
        self._start_panels: tuple[str, ...] = ()
        self._setting = OwnMoves()      # the stops this player sets (not the student's moves)
        for signal in (self.model.step_changed, self.model.event_changed, self.model.selection_changed):
            signal.connect(self._model_moved)
        self.model.trace_changed.connect(self._trace_changed)

    # ================================================================ opening
    @property
    def active(self) -> bool:
        """A lesson plays: its panel and first stop are shown (not :attr:`starting`)."""
        return self.lesson is not None and not self.starting

    def start(self, lesson, stop: int = 0, at_once: bool = False) -> None:
        """Show ``lesson`` (loaded and checked) in the window at its stop
        ``stop``: its trace with the names it gives, its strategies (two or
        more side by side in compare mode) with its parameters; its panel
        and stop a turn later (:attr:`starting` until then), or in this
        call if ``at_once`` (a window made before its event loop runs)."""
        w = self.window
        self.close()
        w.player.pause()
        w.animator.finish()
        w.loader.cancel()
        w.compare.loader.cancel()
        if w.predict.active:
            w.set_predict(False)           # the lesson asks its own questions
        self._start_panels = shown_panels(w)
        self.starting = True            # (not active until its first stop shows)
        self.lesson = lesson            # before set_trace: this trace is the lesson's
        self._ids = {name: ident for ident, name in lesson.names.items()}
        self.answers = {}
        self.index = max(0, min(stop, len(lesson.stops) - 1))
        self.model.set_trace(lesson.trace, None, self.label, names=dict(lesson.names))
        self._show_rows(in_turns=not at_once)
        # its panel and first stop in a turn of their own (gui/turns.py),
        # once its rows have joined the view: the rows shown, the panels and
        # the stop in one turn held the event loop 110-210 ms (issue 25's
        # stall probe)
        if at_once:
            self._first_stop(lesson, at_once=True)
        else:
            turns().call_soon(lambda: self._first_stop(lesson), self)

    def _first_stop(self, lesson, at_once: bool = False) -> None:
        if self.lesson is lesson:           # (not closed, nor another started, since)
            compare = self.window.compare
            if compare.heaps.busy or compare.view.joining():     # its rows, a turn each
                turns().call_soon(lambda: self._first_stop(lesson), self)
                return
            if at_once:
                self.starting = False
                self.active_changed.emit(True)
                self.go(self.index, travel=False)
                return
            # the stop's step and panels in this turn, the lesson's panel and
            # the room made for it in the next: the two in one turn held the
            # event loop 100-110 ms (issue 25's stall probe)
            self.go(self.index, travel=False)
            turns().call_soon(lambda: self._shown(lesson), self)

    def _shown(self, lesson) -> None:
        if self.lesson is lesson:
            self.starting = False
            self.active_changed.emit(True)

    @property
    def label(self) -> str:
        return f"lesson: {self.lesson.title}" if self.lesson is not None else ""

    def _show_rows(self, in_turns: bool = False) -> None:
        """The lesson's strategies shown, with its parameters: one, or two
        and more side by side in compare mode, its own timelines (built when
        it was loaded; ``in_turns``: the rows join the view a turn each,
        CompareMode.show_timelines); nothing changes when they show already."""
        w, lesson = self.window, self.lesson
        keys = [timeline_key(name, lesson.params[name]) for name in lesson.strategies]
        several = len(keys) > 1
        if self.model.shown == keys and w.compare.active == several and not w.loader.busy:
            return
        w.loader.cancel()
        w.compare.loader.cancel()
        w.params = {}
        w.strategy_params = {name: dict(p) for name, p in lesson.params.items()}
        timelines = [lesson.timelines[name] for name in lesson.strategies]
        position = self.model.position
        if several:
            w.strategy_name = lesson.strategies[0]
            w.compare.show_timelines(lesson.trace, timelines, position, in_turns=in_turns)
        else:
            if w.compare.active:
                w.compare.deactivate()
            w.show_built(lesson.trace, timelines[0], None, position, self.label)

    def close(self) -> None:
        """No lesson any more (another trace was opened)."""
        self.starting = False
        if self.lesson is None:
            return
        self.travel.stop()
        self._quiet(False)
        self.session.cancel()
        self.lesson = None
        self.message = ""
        self.active_changed.emit(False)
        self.changed.emit()

    def _trace_changed(self) -> None:
        if self.lesson is not None and self.model.trace is not self.lesson.trace:
            self.close()

    # ================================================================ reading
    @property
    def stops(self) -> list:
        return self.lesson.stops if self.lesson is not None else []

    @property
    def state(self):
        """The shown stop (a :class:`heapscope.lessons.StopState`)."""
        return self.stops[self.index] if self.lesson is not None else None

    @property
    def question_open(self) -> bool:
        """The shown stop asks a question not answered yet: Next waits."""
        state = self.state
        return state is not None and state.question is not None and self.index not in self.answers

    @property
    def traveling(self) -> bool:
        return self.travel.traveling

    def panels_at(self, index: int) -> tuple[str, ...]:
        """The panels stop ``index`` shows: its ``show:``, else the last stop's
        before it that has one, else those shown when the lesson opened."""
        for state in reversed(self.stops[:index + 1]):
            if state.show:
                return tuple(state.show)
        return self._start_panels

    def target(self, index: int | None = None) -> tuple[int, int | None]:
        """(position, event index or None) stop ``index`` shows now: while its
        question is open, the state it is asked at (:meth:`asked_at`)."""
        index = self.index if index is None else index
        state = self.stops[index]
        if state.question is not None and index not in self.answers:
            return self.asked_at(index)
        return _shown(state)

    def asked_at(self, index: int) -> tuple[int, int | None]:
        """Where stop ``index``'s question is asked: before the stop's step is
        shown -- the heap just before its step, or, when the stop before is
        later than that and not past this one, that stop's state (a question
        about an event of a step already shown, or about a step the last
        stop showed whole).  A click question always asks on the heap just
        before its malloc (predict's rule)."""
        state = self.stops[index]
        before = (max(0, state.step - 1), None)
        if index == 0 or state.question.kind == "click":
            return before
        previous = _shown(self.stops[index - 1])
        if _order(before) < _order(previous) <= _order(_shown(state)):
            return previous
        return before

    @property
    def at_stop(self) -> bool:
        """The window shows the current stop as it says (not wandered off)."""
        if self.lesson is None or self.traveling:
            return self.lesson is not None
        position, event = self.target()
        model = self.model
        if (model.position, model.event_index) != (position, event):
            return False
        select = None if self.question_open else self.state.select
        if select is None:
            return model.selection is None
        return self.window.compare.active or model.selection == self._address(select)

    def score(self) -> tuple[int, int]:
        """(right, answered): the questions answered right, and those answered."""
        scored = [a for a in self.answers.values() if a.right is not None]
        return sum(1 for a in scored if a.right), len(scored)

    def score_text(self) -> str:
        right, answered = self.score()
        shown = sum(1 for a in self.answers.values() if a.right is None)
        text = f"{right} of {answered} right" if answered else "no answers yet"
        return text + (f", {shown} shown without an answer" if shown else "")

    # ================================================================= moving
    def next(self) -> None:
        """Page Down: on to the next stop, playing the steps in between; on
        the way, to the stop at once; an open question waits for its answer."""
        if self.lesson is None:
            return
        if self.traveling:
            self.travel.finish()
            return
        if self.question_open:
            self.message = "Answer the question first (or Show the Answer)."
            self.changed.emit()
            return
        if self.index + 1 >= len(self.stops):
            self.message = "This is the last stop."
            self.changed.emit()
            return
        self.go(self.index + 1, travel=True)

    def back(self) -> None:
        """Page Up: the stop before, set exactly and at once."""
        if self.lesson is not None:
            self.go(max(0, self.index - 1), travel=False)

    def back_to_stop(self) -> None:
        """Backspace: the current stop as it says, after wandering off."""
        if self.lesson is not None:
            self.go(self.index, travel=False)

    def go(self, index: int, travel: bool = False) -> None:
        """Show stop ``index``: its panels at once, then its step (played to
        from the shown one when ``travel``), its event and selection, or its
        open question on the heap before the step."""
        self.travel.stop()
        self.session.cancel()
        self._quiet(False)
        self.window.player.pause()
        self.index = index
        self.message = ""
        self._set(self._show_rows)          # the student may have picked other strategies
        self._set(lambda: (set_panels(self.window, self.panels_at(index)), select_block(self.window, None)))
        position, _ = self.target(index)
        if travel and position > self.model.position:
            self.travel.go(position)      # arrives in _arrived
        else:
            self._arrived()
        self.changed.emit()

    def _arrived(self) -> None:
        """The stop's step (or the heap before its question) is shown: set
        the rest, or open the question."""
        if self.lesson is None:
            return
        state = self.state
        position, event = self.target()

        def finish():
            self.model.seek(position, event)
            if self.question_open:
                if state.question.kind == "click":
                    self.session.ask(state.step)
                    self._quiet(True)
                select_block(self.window, None)
            else:
                select_block(self.window, self._ids.get(state.select) if state.select else None)
        self._set(finish)
        self.changed.emit()

    # ================================================================ answers
    def answer_choice(self, given: str) -> None:
        """One of the choices of the open question (a button)."""
        q = self.state.question if self.question_open else None
        if q is None or q.kind != "choice":
            return
        self._answered(Answer(given, q.is_right(given)))

    def answer_click(self, row: int, addr) -> bool:
        """A click on a block of row ``row`` (its map or structure view) while
        a click question is open; False when it is no answer (the reason is
        in :attr:`message`)."""
        q = self.state.question if self.question_open else None
        if q is None or q.kind != "click" or addr is None or addr < 0:
            return False
        if self.traveling or (self.model.position, self.model.event_index) != self.asked_at(self.index):
            self.message = "Backspace goes back to the question's heap first."
        elif row != 0:
            self.message = f"Answer in the top row: the question is about {self.lesson.strategies[0]}."
        elif self.session.take(addr):
            self._answered(Answer(f"the block at 0x{int(self.session.guess):x}", False))
            return True
        else:
            self.message = self.session.message
        self.changed.emit()
        return False

    def answer_grow(self) -> None:
        """A click question's other answer: no free block fits, the heap grows."""
        q = self.state.question if self.question_open else None
        if q is not None and q.kind == "click" and self.session.pending is not None:
            self.session.take(GROW)
            self._answered(Answer("the heap will grow", False))

    def reveal(self) -> None:
        """Show the Answer: the step plays, the question is not scored."""
        if self.question_open:
            self._answered(Answer("shown without an answer", None))

    def _answered(self, answer: Answer) -> None:
        """Play the question's step from the heap before it, then mark the
        answer (a click question's by the replay: predict's judge, or its
        reveal when no answer was given) and arrive at the stop."""
        self._quiet(False)
        state = self.state
        position, event = self.asked_at(self.index)
        self._set(lambda: self.model.seek(position, event))
        self.answers[self.index] = answer          # the stop's target is its own state now
        self.message = ""
        if state.question.kind == "click" and self.session.pending is not None:
            self.travel.go(state.step)  # one step: its events play; the timeline is at it already
            verdict = self.session.mark()
            if verdict is not None:
                right = None if verdict.skipped else bool(verdict.correct)
                self.answers[self.index] = Answer(answer.given, right, f"{verdict.headline}. {verdict.reason}")
        elif position < state.step:
            self.session.cancel()
            self.travel.go(state.step)  # arrives in _arrived, which sets the event
        else:
            # asked inside the stop's step: the next event plays, if it is the stop's
            if state.event is not None and event is not None and event + 1 == state.event - 1:
                self._set(self.window.animator.micro_forward)
            self._arrived()
        self.changed.emit()

    # ================================================================= helpers
    def _address(self, name: str):
        step = self.model.step(0)
        ident = self._ids.get(name)
        return next((a for a, i in step.ids.items() if i == ident), None) if step is not None else None

    def _quiet(self, quiet: bool) -> None:
        """While a click question is open the views show the heap without the
        last step's marks (predict mode's rule: they would be a hint)."""
        w = self.window
        for view in (w.heap_map, w.structure_panel):
            view.set_quiet(quiet)
        for row in w.compare.view.shown_rows():
            row.set_quiet(quiet)

    def _set(self, change) -> None:
        self._setting.run(change)

    def _model_moved(self, *_) -> None:
        if self.lesson is not None and not self._setting.active and not self.traveling:
            self.changed.emit()          # the panel says whether this is still the stop
