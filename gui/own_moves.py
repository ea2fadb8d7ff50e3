"""Telling one's own moves of the show model from everyone else's.

A part that moves the model (the step animator, a lesson's travel between
stops, the lesson player) listens to the model too: a move made by someone
else -- the scrubber, a key -- ends what it was doing, its own must not.
:class:`OwnMoves` runs a change with a flag up, so the part's listener can
ask whether the move it hears is its own.
"""

from __future__ import annotations

from typing import Callable


class OwnMoves:
    """``run(change)`` with :attr:`active` true while it runs (nested runs too)."""

    def __init__(self) -> None:
        self._depth = 0

    @property
    def active(self) -> bool:
        return self._depth > 0

    def run(self, change: Callable[[], object]) -> None:
        self._depth += 1
        try:
            change()
        finally:
            self._depth -= 1
