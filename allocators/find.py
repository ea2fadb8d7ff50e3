"""Finding the steps of a replay where a condition holds
(:mod:`heapscope.allocators.conditions`), and those steps in words.

:func:`find_steps` decides what it can from the timeline's columns (the
metric series and the trace, as numpy arrays) and replays with their events
only the steps the columns leave undecided, in one forward walk
(:class:`StepWalk`) on a heap of its own: the timeline does not move, so the
window can search the shown strategy in a background thread while it steps.
:func:`step_words` walks to given steps for their words
(:func:`heapscope.allocators.step_text.describe_step`), the words the window
says them in.

Both report ``progress(done, total)`` and stop with
:class:`~heapscope.allocators.replay.ReplayCancelled` when ``cancel()``
turns true, every :data:`CHECK_EVERY` steps walked.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterable, Iterator

import numpy as np

from .conditions import Condition, StepColumns, decide
from .replay import ReplayCancelled, Timeline, apply_op, replay_ops
from .step_text import describe_step

#: a walk reports progress and looks at its cancel flag every this many visits
CHECK_EVERY = 256
#: a walk jumps to a checkpoint rather than replay forward when the next
#: step is more than this many operations past where it stands (restoring
#: a checkpoint costs about as much as replaying a few tens of thousands)
JUMP_PAST = 50_000


class StepWalk:
    """Visits steps of a timeline in ascending order with their events, on a
    heap of its own restored from the timeline's checkpoints: ``visit(steps)``
    yields ``(step, record, strategy)`` after each step (1-based; the
    strategy as that step left it).  Between visits the operations are
    replayed in bulk with events off."""

    def __init__(self, timeline: Timeline) -> None:
        self.timeline = timeline
        self.kinds, self.ids, self.sizes, self.largest = timeline.operations
        self.strategy = None
        self.program = None
        self.position = -1              # no heap yet

    def _move_to(self, target: int) -> None:
        """Bring the walk's heap to position ``target`` (events off)."""
        if self.position < 0 or target < self.position or target - self.position > JUMP_PAST:
            strategy, program, at = self.timeline.heap_at_checkpoint(target)
            if self.position < 0 or target < self.position or at > self.position:
                self.strategy, self.program, self.position = strategy, program, at
        p = self.position
        if target > p:
            replay_ops(self.strategy, self.program, self.kinds[p:target], self.ids[p:target],
                       self.sizes[p:target], largest=self.largest)
            self.position = target

    def visit(self, steps: Iterable[int]) -> Iterator[tuple[int, object, object]]:
        for step in steps:
            step = int(step)
            self._move_to(step - 1)
            strategy = self.strategy
            strategy.record = True
            i = step - 1
            rec = apply_op(strategy, self.program, self.kinds[i], self.ids[i], self.sizes[i])
            self.position = step
            yield step, rec, strategy


def _checked(steps, progress, cancel, total: int) -> Iterator[int]:
    for done, step in enumerate(steps):
        if done % CHECK_EVERY == 0:
            if progress:
                progress(done, total)
            if cancel and cancel():
                raise ReplayCancelled(done)
        yield step


@dataclass
class Found:
    """The steps a condition matched (1-based, ascending, a numpy array),
    and how they were found: ``walked`` steps replayed with their events
    (those the columns left undecided)."""
    condition: Condition
    steps: np.ndarray
    walked: int
    n: int                  # steps searched (the timeline's built steps)
    #: the event tests no step can pass, as (name, event types): the
    #: strategy never makes those types (Strategy.makes_events)
    never: list = field(default_factory=list)

    def never_text(self, strategy_name: str) -> str:
        """What :attr:`never` means, in words ("" when empty): 'tlsf makes
        no AvailProbe event: avail holds at no step'."""
        return "; ".join(f"{strategy_name} makes no {' or '.join(types)} event: {name} holds at no step"
                         for name, types in self.never)

    @property
    def count(self) -> int:
        return int(len(self.steps))


def find_steps(timeline: Timeline, condition: Condition,
               progress: Callable[[int, int], None] | None = None,
               cancel: Callable[[], bool] | None = None) -> Found:
    """Every step of ``timeline`` (up to what it built) where ``condition``
    holds.  A test of an event type the strategy never makes holds at no
    step, decided without a replay (``Found.never`` says which)."""
    cols = StepColumns.of(timeline)
    matched, undecided = decide(condition, cols)
    rows = np.flatnonzero(undecided)
    if len(rows):
        walk = StepWalk(timeline)
        for step, rec, _ in walk.visit(_checked(rows + 1, progress, cancel, len(rows))):
            if condition.test(cols, step - 1, rec):
                matched[step - 1] = True
    if progress:
        progress(len(rows), len(rows))
    return Found(condition, np.flatnonzero(matched) + 1, int(len(rows)), cols.n,
                 condition.never_made(cols.makes))


def step_words(timeline: Timeline, steps, progress: Callable[[int, int], None] | None = None,
               cancel: Callable[[], bool] | None = None) -> list[str]:
    """The words of each of ``steps`` (ascending), as the window says the
    step when it shows it (:meth:`Timeline.describe`)."""
    walk = StepWalk(timeline)
    n = timeline.n
    names = getattr(timeline.trace, "names", None)
    return [describe_step(step, n, timeline.op(step), rec, strategy, names)
            for step, rec, strategy in walk.visit(_checked(steps, progress, cancel, len(steps)))]
