"""A timeline built in another process and shipped back in chunks, as it goes.

The window shows step 0 of a trace at once and builds its timeline in the
background (issue 25).  A build on a thread of the window's process would
hold the interpreter lock (the replay is pure Python) and every paint of the
window would wait for it; so the build runs in a worker process
(:class:`~heapscope.allocators.parallel.ParallelBuild` with ``keep="stream"``) and
sends what it has built so far, a :class:`Chunk` at a time: the measures'
rows and the checkpoints taken since the last chunk, and how many steps are
built.  The window's own :class:`~heapscope.allocators.replay.Timeline` of the trace,
never built here, takes each chunk in (:func:`take_chunk`): its ``series``
fills in, its ``checkpoints`` grow, and its ``built`` says how far a seek
may go (a seek needs the checkpoint at or before its step, which is in
place once the step is built).  The last message, a :class:`StreamEnd`, has
the rest and the build's times; a cancelled build leaves the timeline
truncated to what was built (:func:`stop_at_built`), as a cancelled
``Timeline.build`` does.

In the worker, :class:`ChunkSender` is the build's progress callback: at
most every :data:`SEND_EVERY` seconds it sends the rows and checkpoints not
sent yet (the build writes the rows before it reports a step, and takes a
checkpoint before it replays past it), and drops the checkpoints it has
sent from the worker's timeline.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

#: the least time between two chunks a worker sends (s): often enough for a
#: seek waiting on the build, seldom enough that taking chunks in costs little
SEND_EVERY = 0.15


def series_columns(series) -> tuple[str, ...]:
    """The names of a :class:`~heapscope.allocators.metrics.MetricSeries`'s columns
    (every attribute that is an array of one value per step)."""
    return tuple(name for name, value in vars(series).items()
                 if isinstance(value, np.ndarray) and value.ndim == 1)


@dataclass
class Chunk:
    """Steps ``start``..``done`` of a build: their measures' rows (by column),
    the checkpoints taken since the last chunk (steps and pickled heaps)."""
    start: int
    done: int
    total: int
    rows: dict
    checkpoint_steps: list = field(default_factory=list)
    checkpoints: list = field(default_factory=list)


@dataclass
class StreamEnd:
    """The build's last chunk, and what :meth:`Timeline.build` leaves besides."""
    chunk: Chunk
    n: int
    wall_seconds: float
    cpu_seconds: float
    fault: object = None


class ChunkSender:
    """The worker's progress callback: ships what is built, a chunk at a time."""

    def __init__(self, timeline, send, every: float = SEND_EVERY) -> None:
        self.timeline = timeline
        self.send = send
        self.every = every
        self.rows_sent = 0
        self.checkpoints_sent = 0
        self._last = 0.0

    def __call__(self, done: int, total: int) -> None:
        now = time.monotonic()
        if now - self._last >= self.every:
            self._last = now
            self.send(("chunk", self.chunk(done, total)))

    def chunk(self, done: int, total: int) -> Chunk:
        """The rows up to ``done`` and the checkpoints not sent yet."""
        tl = self.timeline
        start, self.rows_sent = self.rows_sent, done
        rows = {name: getattr(tl.series, name)[start:done].copy() for name in series_columns(tl.series)}
        # the steps' list grows after the heaps' (Timeline._keep_checkpoint)
        k = len(tl.checkpoint_steps)
        sent = self.checkpoints_sent
        steps, blobs = tl.checkpoint_steps[sent:k], tl.checkpoints[sent:k]
        # The window keeps them: the worker forgets the heaps it ships (the
        # build never reads one back), or at ten million operations it held
        # gigabytes of them beside the window's copy.
        tl.checkpoints[sent:k] = [None] * (k - sent)
        self.checkpoints_sent = k
        return Chunk(start, done, total, rows, steps, blobs)

    def end(self) -> StreamEnd:
        """What is left once the build has returned."""
        tl = self.timeline
        return StreamEnd(self.chunk(tl.n, tl.n), tl.n, tl.wall_seconds, tl.cpu_seconds, tl.fault)


def take_chunk(timeline, chunk: Chunk) -> None:
    """Put ``chunk`` in ``timeline`` (the window's, never built itself): its
    rows in the series, its checkpoints after the others; then ``built``,
    last, so a step counts as built only once all it needs is in place."""
    series = timeline.series
    for name, values in chunk.rows.items():
        getattr(series, name)[chunk.start:chunk.start + len(values)] = values
    for t, blob in zip(chunk.checkpoint_steps, chunk.checkpoints):
        timeline.checkpoints.append(blob)
        timeline.checkpoint_steps.append(t)
    timeline.built = max(timeline.built, chunk.done)


def take_end(timeline, end: StreamEnd) -> None:
    """The build's end: the last chunk, its times, and a fault that stopped
    a strategy of your own (the timeline then ends before it)."""
    take_chunk(timeline, end.chunk)
    timeline.wall_seconds, timeline.cpu_seconds = end.wall_seconds, end.cpu_seconds
    timeline.fault = end.fault
    if end.n < timeline.n:
        stop_at_built(timeline, end.n)
    timeline.built = timeline.n


def stop_at_built(timeline, steps: int | None = None) -> None:
    """A build stopped (cancelled) at ``steps`` (default: what arrived): the
    timeline keeps those, as ``Timeline.build`` keeps the steps before a
    cancel; a position past them goes back to the last one."""
    steps = timeline.built if steps is None else steps
    timeline.built = steps
    if steps < timeline.n:
        timeline.n = steps
        timeline.series.truncate(steps)
    if timeline.position > steps:
        timeline.seek(steps)
