"""Going forward to a lesson's next stop by playing the steps in between.

A class should see the policy move between two stops, not a jump: a
:class:`StopTravel` plays the steps from the shown position to the target
one at a time, each through the window's step animator (gui/step_animator.py)
as Play does -- at the animated speeds (up to 4 steps a second) a step plays
its events, faster it jumps -- at the player's speed (read at every step, so
``+`` / ``-`` change it on the way).  A long way plays its last
:data:`MAX_PLAYED` steps only: the steps before them are jumped over at
once, so that Next never keeps a lecture waiting.

:meth:`finish` jumps to the target at once (Next pressed again on the way);
a move of the model by someone else (the scrubber, a key) ends the travel
without arriving (:attr:`StopTravel.left`): the student took over.
"""

from __future__ import annotations

from typing import Callable

from PySide6.QtCore import QObject, QTimer, Signal

from .own_moves import OwnMoves

#: at most this many steps play on the way to a stop; the rest are jumped over
MAX_PLAYED = 8
#: after an animated step, the share of a step's time the whole step stays on show
REST_SHARE = 0.25


class StopTravel(QObject):
    #: the target is shown (played to, or jumped to by finish())
    arrived = Signal()
    #: someone else moved the model on the way: the travel is over, not arrived
    left = Signal()

    def __init__(self, model, animator, speed: Callable[[], float], parent=None) -> None:
        super().__init__(parent)
        self.model = model
        self.animator = animator
        #: the player's speed, in steps per second
        self.speed = speed
        self.target: int | None = None
        self._ours = OwnMoves()
        self._waiting = False        # for the animator to end a step's script
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self._next)
        animator.finished.connect(self._step_played)
        model.step_changed.connect(self._model_moved)
        model.shown_changed.connect(self._model_moved)

    @property
    def traveling(self) -> bool:
        return self.target is not None

    def go(self, target: int) -> None:
        """Play the steps from the shown position to ``target``; a target at or
        before the shown position is shown at once.  :attr:`arrived` follows."""
        self.stop()
        model = self.model
        target = max(0, min(int(target), model.n))
        if target <= model.position:
            self._move(lambda: model.seek(target))
            self.arrived.emit()
            return
        self.target = target
        if target - model.position > MAX_PLAYED:
            self._move(lambda: model.seek(target - MAX_PLAYED))
        self._next()

    def finish(self) -> None:
        """Show the target at once and arrive."""
        if self.target is None:
            return
        target = self.target
        self.stop()
        self._move(lambda: self.model.seek(target))
        self.arrived.emit()

    def stop(self) -> None:
        """End the travel where it is, without arriving."""
        self._timer.stop()
        self._waiting = False
        if self.target is not None:
            self.target = None
            self._move(self.animator.finish)

    # ------------------------------------------------------------- stepping
    def _step_ms(self) -> int:
        return max(1, round(1000.0 / max(1.0, float(self.speed()))))

    def _next(self) -> None:
        if self.target is None:
            return
        model = self.model
        if model.position >= self.target:
            self.target = None
            self.arrived.emit()
            return
        self._move(lambda: self.animator.step_to(model.position + 1))
        if self.animator.running:
            self._waiting = True           # _step_played goes on
        else:
            self._timer.start(self._step_ms())

    def _step_played(self) -> None:
        if self._waiting and self.target is not None:
            self._waiting = False
            self._timer.start(max(1, round(self._step_ms() * REST_SHARE)))

    def _move(self, change) -> None:
        self._ours.run(change)

    def _model_moved(self, *_) -> None:
        if self.target is not None and not self._ours.active:
            self._timer.stop()
            self._waiting = False
            self.target = None
            self.left.emit()
