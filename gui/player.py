"""Playback: a clock that asks for so many steps per second.

The timer fires at most 25 times a second; at each tick the player works out
from the elapsed time how many steps are due (``speed x seconds`` minus the
steps already asked for), so the replay keeps its speed in steps per second
even when a frame takes longer than a tick.
"""

from __future__ import annotations

from PySide6.QtCore import QElapsedTimer, QObject, QTimer, Signal

#: the speeds +/- walk through, in steps per second
SPEEDS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000]
DEFAULT_SPEED = 10
#: shortest time between two frames, ms (25 frames per second)
MIN_INTERVAL_MS = 40


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

    def _restart_clock(self) -> None:
        self._timer.setInterval(max(MIN_INTERVAL_MS, 1000 // self._speed))
        self._clock.start()
        self._asked = 0
        self._timer.start()

    def _tick(self) -> None:
        due = int(self._speed * self._clock.elapsed() / 1000.0)
        steps = due - self._asked
        if steps > 0:
            self._asked = due
            self.advance.emit(steps)
