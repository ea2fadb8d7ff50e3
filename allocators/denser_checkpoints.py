"""Denser checkpoints for a timeline already built, taken where nobody waits.

A build spaces its checkpoints so that pickling costs about
:data:`~allocators.replay.CHECKPOINT_SHARE` of it and a seek replays at most
:data:`~allocators.replay.SEEK_REPLAY_SECONDS` from one
(:meth:`Timeline._checkpoint_gap <allocators.replay.Timeline._checkpoint_gap>`).
That is one strategy's seek.  Compare mode seeks ``k`` timelines at once, so a
jump there costs ``k`` such replays; to cost what one strategy's seek costs,
each row should replay about ``1/k`` of it.

A :class:`Densifier` gives a built timeline the checkpoints for that *after*
its build, without slowing the build: it replays the trace bare (events and
measures off, :func:`~allocators.replay.replay_ops` with the policy's fused
paths) from each of the timeline's own checkpoints, and pickles the heap every
``gap`` steps into the timeline's ``checkpoints`` (the same pickles the build
keeps, so a seek restores them as it restores the build's).  ``gap`` comes
from the timeline's own bare replay speed, measured as it goes, so that a
seek replays at most ``seconds / share``.

It works in slices (:meth:`Densifier.run` for about so many seconds), so a GUI
can run it between key presses and stop it at any point: every checkpoint is
inserted whole, so a timeline densified halfway is as right as one densified
fully or not at all (a seek gives the same heap in all three; only the replay
it needs differs).

Memory is bounded: the checkpoints one timeline gains hold at most
``max_bytes`` together (their pickles' length).  When the points wanted would
need more, the gap is widened to fit before any is taken (seeks then replay
more than ``seconds / share``, proportionally); a point that would still pass
the bound (the heap grew faster than its checkpoints said) is not kept, and
the densifier stops there.

This is the checkpointing of the build, not a new algorithm: the incremental
checkpointing of replay debuggers (e.g. rr's, or Boothe's 2000 "Efficient
algorithms for bidirectional debugging"), where denser snapshots are taken in
the background to bound the replay behind each jump.
"""

from __future__ import annotations

import gc
import pickle
import time
from math import ceil

from .replay import MIN_CHECKPOINT_GAP, SEEK_REPLAY_SECONDS, Program, Timeline, _go_on_after, replay_ops

#: the checkpoints all shown timelines gain together hold at most this many
#: bytes (a GUI divides it between its rows); the default trace needs well
#: under 1 MiB for seven rows, a 178 000-op real trace a few MiB a row
DENSER_BYTES = 64 << 20
#: a slice replays at most this many steps between two looks at the clock
_CHUNK = 2048


class Densifier:
    """Adds checkpoints to a built ``timeline`` so that a seek replays at most
    about ``seconds / share`` (``share``: how many timelines seek together),
    the checkpoints it ever gained holding at most ``max_bytes`` in all.

    ``gap``: the steps planned between checkpoints; ``added`` and ``bytes``:
    what was added so far; ``done`` once every segment is dense enough, the
    bound was reached (``bounded``), or the timeline was rebuilt under it."""

    def __init__(self, timeline: Timeline, share: int = 1, max_bytes: int = DENSER_BYTES,
                 seconds: float = SEEK_REPLAY_SECONDS) -> None:
        self.timeline = timeline
        self.share = max(1, int(share))
        self.max_bytes = max_bytes
        self.target_seconds = seconds / self.share
        self.added = 0
        self.bytes = 0
        self.bounded = False
        #: seconds spent (restoring, replaying, pickling) and steps replayed so far
        self.seconds = 0.0
        self.replayed = 0
        self._bare_seconds = 0.0
        self._lists = (timeline.checkpoints, timeline.checkpoint_steps)
        # Until the bare replay is measured (here or by an earlier densifier),
        # the build's speed (measures and checkpoints included): slower, so
        # the first gap errs on the dense side.
        self._step_seconds = timeline.bare_step_seconds or (
            timeline.wall_seconds / timeline.built if timeline.built else 0.0)
        self._budget_gap = 0        # the gap the byte budget allows, at least
        # the longest span the build left (not counting points added since:
        # densifying twice for as many rows adds nothing)
        steps = [t for t in timeline.checkpoint_steps if t not in timeline.added_checkpoint_steps]
        self._span = max((b - a for a, b in zip([0] + steps, steps + [timeline.n])), default=0)
        self.gap = self._gap()
        self._plan = self._segments()
        self._fit_budget()
        self._next = 0              # the next segment of the plan to open
        self._points: list[int] = []
        self._state = None          # (strategy, program, position) replayed on

    # ------------------------------------------------------------ planning
    def _gap(self) -> int:
        """Steps a seek may replay within its share: at the bare replay's
        speed known so far, and no more than its share of the longest span
        the build left (which the build measured at its own, slower speed)."""
        by_speed = (int(self.target_seconds / self._step_seconds) if self._step_seconds > 0
                    else MIN_CHECKPOINT_GAP)
        return max(MIN_CHECKPOINT_GAP, min(by_speed, self._span // self.share), self._budget_gap)

    def _segments(self) -> list[tuple[int, bytes | None, int]]:
        """The spans between the timeline's checkpoints longer than ``gap``:
        (start step, its checkpoint, or None for a fresh heap at 0; end step)."""
        tl = self.timeline
        steps, blobs = list(tl.checkpoint_steps), list(tl.checkpoints)
        if not steps or steps[0] != 0:
            steps, blobs = [0] + steps, [None] + blobs
        ends = steps[1:] + [tl.n]
        return [(s, b, e) for s, b, e in zip(steps, blobs, ends) if e - s > self.gap]

    def _points_in(self, start: int, end: int) -> list[int]:
        """Evenly spaced steps strictly inside (start, end), at most ``gap`` apart."""
        parts = ceil((end - start) / self.gap)
        return [start + (end - start) * j // parts for j in range(1, parts)]

    def _estimate(self) -> int:
        """The bytes the planned points would take: each the size of its
        segment's first checkpoint (the heap changes little between two)."""
        return sum(len(self._points_in(s, e)) * (len(b) if b is not None else 0)
                   for s, b, e in self._plan)

    def _fit_budget(self) -> None:
        """Widen the gap until the planned points fit what the budget has left."""
        room = self.max_bytes - self.timeline.added_checkpoint_bytes
        while self._plan and self._estimate() > room:
            if room <= 0:
                self._plan = []
                self.bounded = True
                return
            self._budget_gap = self.gap = max(self.gap + 1, ceil(self.gap * self._estimate() / room))
            self._plan = [seg for seg in self._plan if seg[2] - seg[0] > self.gap]

    # ------------------------------------------------------------- running
    @property
    def done(self) -> bool:
        tl = self.timeline
        if tl.checkpoints is not self._lists[0] or tl.checkpoint_steps is not self._lists[1]:
            return True             # rebuilt since: it has checkpoints of its own
        return self._state is None and self._next >= len(self._plan)

    def run(self, seconds: float) -> bool:
        """Work for about ``seconds`` (one chunk of steps, or restoring or
        pickling one checkpoint, at least); True once done."""
        deadline = time.perf_counter() + seconds
        while not self.done:
            if self._state is None:
                self._open_next_segment()
            else:
                self._advance()
            if time.perf_counter() >= deadline:
                break
        return self.done

    def run_all(self) -> "Densifier":
        """Work until done (nobody waiting on it: tests, scripts)."""
        while not self.run(1.0):
            pass
        return self

    def _open_next_segment(self) -> None:
        start, blob, end = self._plan[self._next]
        self._next += 1
        # the speed measured meanwhile may have widened the gap: fewer points
        self._points = self._points_in(start, end)
        if not self._points:
            return
        t0 = time.perf_counter()
        if blob is None:
            strategy, program = self.timeline._factory(), Program()
        else:
            collecting = gc.isenabled()
            gc.disable()            # as Timeline._restore: new objects, no garbage to find
            try:
                strategy, program = pickle.loads(blob)
            finally:
                if collecting:
                    gc.enable()
        self.seconds += time.perf_counter() - t0
        self._state = (strategy, program, start)

    def _advance(self) -> None:
        """Replay towards the next point, a chunk at most; keep it on arrival."""
        tl = self.timeline
        strategy, program, p = self._state
        target = self._points[0]
        stop = min(target, p + _CHUNK)
        t0 = time.perf_counter()
        replay_ops(strategy, program, tl._kinds[p:stop], tl._ids[p:stop], tl._sizes[p:stop])
        spent = time.perf_counter() - t0
        self.seconds += spent
        self._bare_seconds += spent
        self.replayed += stop - p
        if self.replayed >= MIN_CHECKPOINT_GAP:     # never from a tiny sample
            self._step_seconds = tl.bare_step_seconds = self._bare_seconds / self.replayed
        if stop < target:
            self._state = (strategy, program, stop)
            return
        t0 = time.perf_counter()
        blob = Timeline._pack(strategy, program)
        if tl.added_checkpoint_bytes + len(blob) > self.max_bytes:
            # the heap grew past what its checkpoints said: stop at the bound
            self.bounded = True
            self._state = None
            self._plan = self._plan[:self._next]
            return
        tl.insert_checkpoint(target, blob)
        self.added += 1
        self.bytes += len(blob)
        # pickling slowed the original's attribute reads: go on as the build does
        strategy, program = _go_on_after(blob, strategy, program)
        self.seconds += time.perf_counter() - t0
        self._points.pop(0)
        if self._points:
            self._state = (strategy, program, target)
            return
        self._state = None
        self.gap = self._gap()
        self._plan = self._plan[:self._next] + [
            seg for seg in self._plan[self._next:] if seg[2] - seg[0] > self.gap]
