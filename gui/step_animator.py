"""Animated steps and micro-steps: a step played as a short sequence of its events.

At slow playback speeds (up to :data:`MAX_ANIMATED_SPEED` steps per second) a
step forward -- a key press or the player's clock -- shows its events one
after another: the :class:`StepAnimator` moves the model's event index along
a *script* (:func:`plan`) with a single-shot ``QTimer``, and every view
subscribed to ``event_changed`` (the heap map, the structure view, the
explain panel, the timeline bar) draws the step up to that event, moving from
the previous event over :attr:`ShowModel.transition_ms <gui.show_model.ShowModel.transition_ms>`.
The script ends on the whole step (event index None).  Faster, the views jump.

Nothing blocks: while a script plays, an application event filter watches
for a key press or a mouse click; the first one finishes the animation at once
(the views show the step's final state) and then goes on to do what it does.
Stepping back never plays anything backwards: it shows the step before as it
stands.  The player waits for a script to end before it asks for the next
step (:attr:`StepAnimator.started` / :attr:`StepAnimator.finished` hold and
release it).

Micro-steps (:meth:`StepAnimator.micro_forward`, Shift+Right, and
:meth:`StepAnimator.micro_back`, Shift+Left) move one event within the step;
past the last event they go on to the next step's first, before the first to
the previous step's last.  In compare mode every row moves one event of its
own step at once (:meth:`ShowModel.event_in_row
<gui.show_model.ShowModel.event_in_row>`); a step is as long as the row with
the most events, and a row whose step has fewer holds its last event.  A micro-step forward is animated at any speed (at
the slowest animated speed's durations above it); one back jumps.

Durations scale with the speed: a script fills :data:`SCRIPT_SHARE` of a
step's time at the playback speed, each event a share by its weight (a block
looked at weighs less than a block cut or moved), but gives each event at
least :data:`EYE_MS` per unit of weight at 1 step/s (half that at 2 steps/s),
so a step of many events plays longer than a step's time (the player waits
for it), up to :data:`MAX_SCRIPT_STEPS` step times; every event within
[:data:`MIN_EVENT_MS`, :data:`MAX_EVENT_MS`].  A long search keeps the first
and last :data:`RUN_ENDS` looks of each run and jumps over the middle, so a
step never plays longer than :data:`MAX_SCRIPT_STEPS` step times -- save
where :data:`MIN_EVENT_MS` an event asks more (twenty events that are no
long run, at 4 steps/s: 0.9 s, not 0.75).  The views
move during :data:`MOVE_SHARE` of an event's time and hold the rest.

:func:`step_frames` plays one step on one view with the clock stopped and
yields its frames at a fixed frame rate: the same frames on every run, for
an exporter working offscreen.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QTimer, Signal
from PySide6.QtWidgets import QApplication

from heapscope.allocators import events as ev

from .own_moves import OwnMoves

#: steps per second above which steps jump instead of playing their events
MAX_ANIMATED_SPEED = 4
#: the share of a step's time (at the playback speed) its script takes
SCRIPT_SHARE = 0.8
#: one event's time, at least and at most (ms)
MIN_EVENT_MS, MAX_EVENT_MS = 40, 900
#: the share of an event's time the views spend moving to it (they hold the rest)
MOVE_SHARE = 0.7
#: a run of looks longer than twice this keeps its first and last this many
RUN_ENDS = 6
#: a block looked at is on show at least this long at 1 step/s (twice that for a change)
EYE_MS = 220
#: a script is cut to fit this many step times
MAX_SCRIPT_STEPS = 3
#: a micro-step forward moves in this long at 1 step/s (and up to 4 times faster)
MICRO_STEP_MS = 400

#: events that only look (a search's visits and probes): light, and quick
LOOKS = (ev.Visit, ev.WalkStep, ev.AvailProbe, ev.BitmapProbe)
#: events that say something without changing anything
WORDS = (ev.Note, ev.MappingSearch, ev.InsertionPoint, ev.GrowFailed)


def event_weight(event) -> float:
    """How long an event holds the eye, relative to a block looked at."""
    if isinstance(event, LOOKS):
        return 1.0
    if isinstance(event, WORDS):
        return 1.0
    return 2.0          # a block cut, joined, moved, a pointer moved, the heap grown


def plan(events, speed: float) -> list[tuple[int, int]]:
    """The script of a step at ``speed`` steps per second: ``(event index, ms
    until the next)`` for the events shown, in order (the first is shown at
    once, the others each moved to)."""
    n = len(events)
    if n == 0:
        return []
    speed = max(1e-3, min(float(speed), MAX_ANIMATED_SPEED))
    step_ms = 1000.0 / speed
    shown = list(range(n))
    weights = [event_weight(e) for e in events]
    if sum(weights) * MIN_EVENT_MS > MAX_SCRIPT_STEPS * step_ms:
        shown = _thin_runs(events)
    total = sum(weights[i] for i in shown)
    # as much of the step's time as there is, but never less than an eye
    # needs per event; never more than MAX_SCRIPT_STEPS step times in all
    unit = max(SCRIPT_SHARE * step_ms / total, EYE_MS / speed)
    unit = min(unit, MAX_SCRIPT_STEPS * step_ms / total)
    return [(i, int(min(MAX_EVENT_MS, max(MIN_EVENT_MS, weights[i] * unit)))) for i in shown]


def _thin_runs(events) -> list[int]:
    """The indices kept when runs of looks are long: each run's first and last
    :data:`RUN_ENDS`, and every event that changes something."""
    keep, run = [], []

    def close():
        keep.extend(run if len(run) <= 2 * RUN_ENDS else run[:RUN_ENDS] + run[-RUN_ENDS:])
        run.clear()

    for i, e in enumerate(events):
        if isinstance(e, LOOKS):
            run.append(i)
        else:
            close()
            keep.append(i)
    close()
    return keep


def move_ms(slot_ms: int) -> int:
    """How long the views move within an event's time."""
    return max(1, int(slot_ms * MOVE_SHARE))


class StepAnimator(QObject):
    """Moves the model's event index through a step's script; see the module."""

    #: a script began (the player holds its next step)
    started = Signal()
    #: the script ended or was cut short (the player may go on)
    finished = Signal()

    def __init__(self, model, parent=None) -> None:
        super().__init__(parent)
        self.model = model
        self.speed = 1.0
        #: steps play their events at slow speeds (False: they always jump)
        self.enabled = True
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self._next)
        self._script: list[tuple[int, int]] = []
        self._at = 0
        self._final: int | None = None      # the event shown when the animation ends
        self._running = False
        self._filtering = False
        self._ours = OwnMoves()             # the model changes under way that are ours
        model.step_changed.connect(self._model_moved)
        model.shown_changed.connect(self._model_moved)

    # ------------------------------------------------------------- state
    @property
    def running(self) -> bool:
        """A script or a micro-step's move is under way."""
        return self._running

    @property
    def animates(self) -> bool:
        """Steps forward play their events at the current speed."""
        return self.enabled and self.speed <= MAX_ANIMATED_SPEED

    def set_speed(self, steps_per_second: float) -> None:
        self.speed = float(steps_per_second)
        if self._running and not self.animates and self._final is None:
            self.finish()        # too fast now: the clock cuts the step short

    # ----------------------------------------------------------- stepping
    def step_to(self, position: int) -> None:
        """Show ``position``: the step after the one shown plays its events
        when steps animate; any other position is shown as it stands."""
        self.finish()
        model = self.model
        if not (self.animates and position == model.position + 1 and model.n >= position):
            model.seek(position)
            return
        self._with_model(lambda: model.seek(position, 0))
        # in compare mode the rows play in lockstep, as long as the longest step
        events = model.script_events()
        script = plan(events, self.speed) if events else []
        if len(script) < 2:
            if model.event_index is not None:
                self._with_model(lambda: model.set_event(None))
            return
        self._begin(script, None)

    def micro_forward(self) -> None:
        """One event forward: the next event of the step (animated), or the
        next step's first event."""
        self.finish()
        model = self.model
        if not model.shown:
            return
        i, n = model.event_index, model.event_count
        if i is not None and i + 1 < n:
            ms = int(MICRO_STEP_MS / min(max(self.speed, 1.0), MAX_ANIMATED_SPEED))
            self._begin([(i + 1, ms)], i + 1, first_shown=False, move_share=1.0)
        elif model.position < model.n:
            self._with_model(lambda: model.seek(model.position + 1, 0))

    def micro_back(self) -> None:
        """One event back, at once: the event before the one shown (the whole
        step counts as its last event), or the previous step's last event."""
        self.finish()
        model = self.model
        if not model.shown:
            return
        n = model.event_count
        i = model.event_index if model.event_index is not None else n - 1
        if i - 1 >= 0:
            self._with_model(lambda: model.set_event(i - 1))
        elif model.position > 0:
            self._with_model(lambda: model.seek(model.position - 1, -1))

    # ------------------------------------------------------------ playing
    def _begin(self, script, final, first_shown: bool = True, move_share: float = MOVE_SHARE) -> None:
        self._script, self._at, self._final = script, 0, final
        self._move_share = move_share
        self._running = True
        self._install_filter()
        self.started.emit()
        if first_shown:
            # the first event is on show already (the seek landed on it)
            self._timer.start(script[0][1])
            self._at = 1
        else:
            self._next()

    def _next(self) -> None:
        if not self._running:
            return
        if self._at >= len(self._script):
            self._end(self._final)
            return
        index, slot = self._script[self._at]
        self._at += 1
        model = self.model
        model.transition_ms = max(1, int(slot * self._move_share))
        try:
            self._with_model(lambda: model.set_event(index))
        finally:
            model.transition_ms = 0
        self._timer.start(slot)

    def finish(self) -> None:
        """Cut the animation short: the views show its end at once."""
        if self._running:
            self._end(self._final)

    def _end(self, final) -> None:
        self._timer.stop()
        self._running = False
        self._remove_filter()
        model = self.model
        model.transition_ms = 0
        if model.event_index != final:
            self._with_model(lambda: model.set_event(final))
        else:
            # the views may still be moving to it: tell them to be there now
            self._with_model(lambda: model.event_changed.emit(final))
        self.finished.emit()

    def _with_model(self, change) -> None:
        self._ours.run(change)

    def _model_moved(self, *_) -> None:
        if self._running and not self._ours.active:
            # someone else moved the model (the scrubber, a strategy change):
            # the script is over, and the model already shows something else
            self._timer.stop()
            self._running = False
            self._remove_filter()
            self.model.transition_ms = 0
            self.finished.emit()

    # ------------------------------------------------------- input cuts it
    def _install_filter(self) -> None:
        app = QApplication.instance()
        if app is not None and not self._filtering:
            app.installEventFilter(self)
            self._filtering = True

    def _remove_filter(self) -> None:
        app = QApplication.instance()
        if app is not None and self._filtering:
            app.removeEventFilter(self)
            self._filtering = False

    _CUTS = (QEvent.KeyPress, QEvent.ShortcutOverride, QEvent.MouseButtonPress, QEvent.MouseButtonDblClick)

    def eventFilter(self, obj, event) -> bool:
        if self._running and event.type() in self._CUTS:
            if event.type() in (QEvent.KeyPress, QEvent.ShortcutOverride) and _lone_modifier(event):
                return False
            self.finish()
        return False         # the key or click then does what it does


def _lone_modifier(event) -> bool:
    from PySide6.QtCore import Qt
    return event.key() in (Qt.Key_Shift, Qt.Key_Control, Qt.Key_Alt, Qt.Key_Meta, Qt.Key_AltGr)


# ------------------------------------------------------------------ export

def step_frames(view, step, speed: float = 1.0, fps: float = 25.0):
    """Play ``step`` (a :class:`~heapscope.gui.show_model.ShownStep`) on the structure
    ``view`` at ``speed`` steps per second and yield one ``QImage`` per frame
    at ``fps``, stepped in time rather than by the clock: the same frames on
    every run.  The first frame shows the first event, the last the whole
    step."""
    events = step.record.events if step.record is not None and step.record.events else []
    script = plan(events, speed)
    frame_ms = 1000.0 / fps
    view.manual_transitions = True
    try:
        view.set_states(step.structure_at)
        view.show_step(step.structure, step.explained, step.record)
        for k, (index, slot) in enumerate(script):
            view.set_current_event(index, move_ms(slot) if k else 0)
            transition = view.transition
            for f in range(max(1, round(slot / frame_ms))):
                if transition is not None and transition.running:
                    transition.seek((f + 1) * frame_ms)
                yield view.grab().toImage()
        view.set_current_event(None)
        yield view.grab().toImage()
    finally:
        view.manual_transitions = False
        view.finish_transition()
