"""Denser checkpoints for a timeline already built, taken where nobody waits.

A build spaces its checkpoints so that pickling costs about
:data:`~heapscope.allocators.replay.CHECKPOINT_SHARE` of it and a seek replays at most
:data:`~heapscope.allocators.replay.SEEK_REPLAY_SECONDS` from one
(:meth:`Timeline._checkpoint_gap <allocators.replay.Timeline._checkpoint_gap>`).
That is one strategy's seek.  Compare mode seeks ``k`` timelines at once, so a
jump there costs ``k`` such replays; to cost what one strategy's seek costs,
each row should replay about ``1/k`` of it.

A :class:`Densifier` gives a built timeline the checkpoints for that *after*
its build, without slowing the build: it cuts each span between two of the
build's checkpoints into ``share`` spans (more if the bare replay of one would
still take longer than ``seconds / share``; never shorter than
:data:`~heapscope.allocators.replay.MIN_CHECKPOINT_GAP` steps), replays the trace bare
(events and measures off, :func:`~heapscope.allocators.replay.replay_ops` with the
policy's fused paths) from the span's checkpoint, and pickles the heap at each
cut into the timeline's ``checkpoints`` -- the same pickles the build keeps,
so a seek restores them as it restores the build's.  A span already cut as
finely (the timeline was densified before for as many rows or more) is left
alone.

It works in slices (:meth:`Densifier.run` for about so many seconds), so a GUI
can run it between key presses and stop it at any point: every checkpoint is
inserted whole, so a timeline densified halfway is as right as one densified
fully or not at all (a seek gives the same heap in all three; only the replay
it needs differs).

Memory is bounded: the checkpoints one timeline gains hold at most
``max_bytes`` together (their pickles' length).  When the points planned would
need more, each span gets proportionally fewer before any is taken (seeks then
replay more than ``1/share``); a point that would still pass the bound (the
heap grew faster than its span's checkpoint said) is not kept, and the
densifier stops there.  On a heap of 100 000 blocks a checkpoint is megabytes
and restoring it, not the replay, is much of a seek: a span whose checkpoint
is over :data:`MAX_CUT_CHECKPOINT` (2 MiB, some 20 ms to restore and 20 ms
to pickle, which a slice cannot split) is not cut, and the budget lets few
points in, or none.

This is the build's checkpointing done again at a finer grain, as replay
debuggers keep checkpoints to bound the re-execution behind a jump
(B. Boothe, "Efficient algorithms for bidirectional debugging", PLDI 2000).
"""

from __future__ import annotations

import gc
import pickle
import time
from bisect import bisect_left, bisect_right
from math import ceil

from .replay import MIN_CHECKPOINT_GAP, SEEK_REPLAY_SECONDS, Program, Timeline, _go_on_after, replay_ops

#: the checkpoints all shown timelines gain together hold at most this many
#: bytes (a GUI divides it between its rows); seven rows take 6 MiB on the
#: default trace, Vo's workload at 180 000 ops 7-9 MiB a row
DENSER_BYTES = 64 << 20
#: a span whose checkpoint pickles to more than this is not cut: restoring
#: it and pickling each point takes about 10 ms a MiB each, work a slice
#: cannot split (the window would pause for it), and restoring, not
#: replaying, is then much of such a seek anyway
MAX_CUT_CHECKPOINT = 2 << 20
#: a slice replays at most this many steps between two looks at the clock
#: (fewer when the replay's speed says they would pass the slice's end)
_CHUNK = 2048


class Densifier:
    """Adds checkpoints to a built ``timeline`` so that a seek replays about
    ``1/share`` of what it replayed (``share``: how many timelines seek
    together), and no more than about ``seconds / share``; the checkpoints
    it ever gained hold at most ``max_bytes`` in all.

    ``plan``: [(start, end, points)] per span of the build's checkpoints that
    gets points; ``gap``: the widest spacing planned; ``added`` and ``bytes``:
    what was added so far; ``bounded``: the byte budget took points out of
    the plan or stopped it; ``done`` once the plan is carried out or stopped,
    or the timeline was rebuilt under it."""

    def __init__(self, timeline: Timeline, share: int = 1, max_bytes: int = DENSER_BYTES,
                 seconds: float | None = None) -> None:
        self.timeline = timeline
        self.share = max(1, int(share))
        self.max_bytes = max_bytes
        if seconds is None:         # looked up here, so that a test can fix it
            seconds = SEEK_REPLAY_SECONDS
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
        # the spans err on the short side.
        self._step_seconds = timeline.bare_step_seconds or (
            timeline.wall_seconds / timeline.built if timeline.built else 0.0)
        self._budget_gap = 0        # > 0: no closer than this, to fit the byte budget
        self.plan = self._planned()
        self._fit_budget()
        self._next = 0              # the next span of the plan to open
        self._points: list[int] = []
        self._state = None          # (strategy, program, position) replayed on

    # ------------------------------------------------------------ planning
    def _parts(self, length: int) -> int:
        """How many spans a span of the build of ``length`` steps is cut into:
        ``share`` (each row replays 1/share of it), more if the bare replay
        of one would still take longer than ``seconds / share`` (a timeline
        built with checkpoints far apart, or none), never closer than
        MIN_CHECKPOINT_GAP steps, nor than the budget's gap.  (Under the
        budget one gap for all spans: spacing the points evenly over the
        trace gives the least replay per seek on average for their number.)"""
        parts = self.share
        if self._step_seconds > 0:
            parts = max(parts, ceil(length * self._step_seconds / self.target_seconds))
        parts = min(parts, length // MIN_CHECKPOINT_GAP)
        if self._budget_gap:
            parts = min(parts, ceil(length / self._budget_gap))
        return max(1, parts)

    def _planned(self) -> list[tuple[int, int, list[int]]]:
        """(start, end, the steps to add) for each span between the build's
        own checkpoints that needs some; a span already cut as finely
        (densified before for as many rows or more) needs none."""
        tl = self.timeline
        added = tl.added_checkpoint_steps
        steps = tl.checkpoint_steps
        built = [t for t in steps if t not in added]
        plan = []
        for start, end in zip([0] + built, built + [tl.n]):
            if start == end:
                continue
            blob = self._checkpoint_before(start)[1]
            if blob is not None and len(blob) > MAX_CUT_CHECKPOINT:
                continue
            parts = self._parts(end - start)
            if parts < 2:
                continue
            spacing = ceil((end - start) / parts)
            lo, hi = bisect_right(steps, start), bisect_left(steps, end)
            inside = [start] + steps[lo:hi] + [end]
            if max(b - a for a, b in zip(inside, inside[1:])) <= spacing:
                continue
            have = set(steps[lo:hi])
            points = [p for p in (start + (end - start) * j // parts for j in range(1, parts))
                      if p not in have]
            if points:
                plan.append((start, end, points))
        return plan

    @property
    def gap(self) -> int:
        """The widest spacing of the points planned (0: none planned)."""
        return max((ceil((e - s) / (len(p) + 1)) for s, e, p in self.plan), default=0)

    def _checkpoint_before(self, t: int) -> tuple[int, bytes | None]:
        """The last checkpoint at or before ``t`` (its step and pickle; a fresh heap at 0)."""
        tl = self.timeline
        k = bisect_right(tl.checkpoint_steps, t) - 1
        return (tl.checkpoint_steps[k], tl.checkpoints[k]) if k >= 0 else (0, None)

    def _estimate(self) -> int:
        """The bytes the planned points would take: each the size of its
        span's first checkpoint (the heap changes little within a span)."""
        total = 0
        for start, _, points in self.plan:
            blob = self._checkpoint_before(start)[1]
            total += len(points) * (len(blob) if blob is not None else 0)
        return total

    def _fit_budget(self) -> None:
        """Space the points wider until they fit what the budget has left."""
        room = self.max_bytes - self.timeline.added_checkpoint_bytes
        if room <= 0:
            self.bounded = bool(self.plan)
            self.plan = []
            return
        while self.plan and (need := self._estimate()) > room:
            self.bounded = True
            widest = self._budget_gap or self.gap
            self._budget_gap = max(widest + 1, ceil(widest * need / room))
            self.plan = self._planned()

    # ------------------------------------------------------------- running
    @property
    def done(self) -> bool:
        tl = self.timeline
        if tl.checkpoints is not self._lists[0] or tl.checkpoint_steps is not self._lists[1]:
            return True             # rebuilt since: it has checkpoints of its own
        return self._state is None and self._next >= len(self.plan)

    def run(self, seconds: float) -> bool:
        """Work for about ``seconds`` (one chunk of steps, or restoring or
        pickling one checkpoint, at least); True once done."""
        deadline = time.perf_counter() + seconds
        while not self.done:
            if self._state is None:
                self._open_next_segment()
            else:
                self._advance(deadline)
            if time.perf_counter() >= deadline:
                break
        return self.done

    def run_all(self) -> "Densifier":
        """Work until done (nobody waiting on it: tests, scripts)."""
        while not self.run(1.0):
            pass
        return self

    def _open_next_segment(self) -> None:
        """Restore the heap at the last checkpoint before the next span's first point."""
        self._points = list(self.plan[self._next][2])
        self._next += 1
        at, blob = self._checkpoint_before(self._points[0])
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
        self._state = (strategy, program, at)

    def _advance(self, deadline: float) -> None:
        """Replay towards the next point, a chunk at most (as many steps as
        fit before ``deadline`` at the speed known); keep it on arrival."""
        tl = self.timeline
        strategy, program, p = self._state
        target = self._points[0]
        chunk = _CHUNK
        if self._step_seconds > 0:
            chunk = min(chunk, max(16, int((deadline - time.perf_counter()) / self._step_seconds)))
        stop = min(target, p + chunk)
        t0 = time.perf_counter()
        replay_ops(strategy, program, tl._kinds[p:stop], tl._ids[p:stop], tl._sizes[p:stop],
                   largest=tl._largest)
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
            # the heap outgrew what its checkpoints said: stop at the bound
            self.bounded = True
            self._state = None
            self.plan = self.plan[:self._next]
            return
        tl.insert_checkpoint(target, blob)
        self.added += 1
        self.bytes += len(blob)
        # pickling slowed the original's attribute reads: go on as the build does
        strategy, program = _go_on_after(blob, strategy, program)
        self.seconds += time.perf_counter() - t0
        self._points.pop(0)
        self._state = (strategy, program, target) if self._points else None
