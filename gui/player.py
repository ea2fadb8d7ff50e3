"""Playback: a clock that asks for so many steps per second.

The timer fires at most 25 times a second; at each tick the player works out
from the elapsed time how many steps are due (``speed x seconds`` minus the
steps already asked for), so the replay keeps its speed in steps per second
even when a frame takes longer than a tick.

While a step plays its events (gui/step_animator.py) the player is *held*:
it asks for nothing, and once released the next step comes one step time
after the last one was asked for, or, if the animation took longer, after
the whole step has been on show for a quarter of a step's time.
"""

from __future__ import annotations

from PySide6.QtCore import QElapsedTimer, QObject, QTimer, Signal

#: the speeds +/- walk through, in steps per second
SPEEDS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000]
DEFAULT_SPEED = 10
#: shortest time between two frames, ms (25 frames per second)
MIN_INTERVAL_MS = 40
#: after an animated step, the share of a step's time the whole step stays on show at least
REST_SHARE = 0.25


class Player(QObject):
    """Emits :attr:`advance` with the number of steps to move forward."""

    advance = Signal(int)
    playing_changed = Signal(bool)
    speed_changed = Signal(int)

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self._speed = DEFAULT_SPEED
        self._timer = QTimer(self)
        self._timer.timeout.connect(self._tick)
        self._clock = QElapsedTimer()
        self._asked = 0
        self._offset_ms = 0.0       # the clock counts from this far into the first step
        self._last_ask_ms = 0.0     # when the last step was asked for, on the clock
        self._held = False

    # ------------------------------------------------------------- speed
    @property
    def speed(self) -> int:
        return self._speed

    def set_speed(self, steps_per_second: int) -> None:
        steps_per_second = max(1, int(steps_per_second))
        if steps_per_second == self._speed:
            return
        self._speed = steps_per_second
        if self.playing:
            self._restart_clock()
        self.speed_changed.emit(steps_per_second)

    def faster(self) -> None:
        bigger = [s for s in SPEEDS if s > self._speed]
        self.set_speed(bigger[0] if bigger else SPEEDS[-1])

    def slower(self) -> None:
        smaller = [s for s in SPEEDS if s < self._speed]
        self.set_speed(smaller[-1] if smaller else SPEEDS[0])

    # ---------------------------------------------------------- playing
    @property
    def playing(self) -> bool:
        return self._timer.isActive()

    def play(self) -> None:
        if not self.playing:
            self._restart_clock()
            self.playing_changed.emit(True)

    def pause(self) -> None:
        if self.playing:
            self._timer.stop()
            self.playing_changed.emit(False)

    def toggle(self) -> None:
        self.pause() if self.playing else self.play()

    def _restart_clock(self, offset_ms: float = 0.0) -> None:
        self._timer.setInterval(MIN_INTERVAL_MS)
        self._clock.start()
        self._asked = 0
        self._offset_ms = offset_ms
        self._last_ask_ms = -offset_ms
        self._timer.start()

    # ---------------------------------------------------- animated steps
    @property
    def held(self) -> bool:
        return self._held

    def hold(self) -> None:
        """A step is playing its events: ask for no step until :meth:`release`."""
        self._held = True

    def release(self) -> None:
        """The step's animation ended: the next step is due one step time
        after the last was asked for (at once if that is past)."""
        if not self._held:
            return
        self._held = False
        if self.playing:
            period = 1000.0 / self._speed
            left = self._last_ask_ms + period - self._clock.elapsed()
            # the whole step stays on show a moment, even after a long animation
            left = max(left, REST_SHARE * period)
            self._restart_clock(offset_ms=period - min(period, left))

    def _tick(self) -> None:
        if self._held:
            return
        due = int(self._speed * (self._clock.elapsed() + self._offset_ms) / 1000.0)
        steps = due - self._asked
        if steps > 0:
            self._asked = due
            self._last_ask_ms = self._clock.elapsed()
            self.advance.emit(steps)
