"""Find over a strategy of your own, in a worker process with a time limit.

:func:`~heapscope.allocators.find.find_steps` walks the steps a condition's
columns leave undecided by replaying them with their events: for a
strategy of your own that is your code running, and code heapscope did not
write may loop.  The window's search thread must not run it (nothing could
stop it there: the window's watch, gui/user_code_watch.py, stops code in
the GUI thread only), so :func:`find_in_worker` runs the walk where every
build of your code runs, a worker process
(:class:`~heapscope.allocators.parallel.ParallelBuild`, with
:mod:`~heapscope.allocators.isolation`'s answers): silent past the time
limit, it is killed and the search says so; cancelled, it is killed at once.

The worker is given what the walk needs of the timeline built already --
its measures, its checkpoints (taken in the caller's thread by
:func:`walk_source`, since the window may add checkpoints meanwhile) --
not the timeline itself, and the condition as text, parsed again there.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Callable

import numpy as np

from .conditions import known_events, parse
from .find import find_steps, step_words
from .parallel import BuildFailed, BuildSpec, Note, ParallelBuild
from .replay import ReplayCancelled, Timeline
from .user import UserStrategyError


class FindStopped(Exception):
    """A search in a worker that gave no result: the strategy's mistake, or
    the worker killed (no answer within the time limit, an exit)."""


@dataclass(frozen=True)
class WalkSource:
    """What a walk of a built timeline reads: its strategy and parameters,
    its measures, its checkpoints and how many steps it built."""
    strategy_name: str
    params: dict
    series: object
    checkpoint_steps: tuple
    checkpoints: tuple
    built: int


def walk_source(timeline) -> WalkSource:
    """The timeline's walk source, copied now (call it where the timeline
    is not being changed: the window's thread)."""
    steps, blobs = tuple(timeline.checkpoint_steps), tuple(timeline.checkpoints)
    if len(steps) != len(blobs):            # added to meanwhile: walk from the start
        steps, blobs = (), ()
    return WalkSource(timeline.strategy_name, dict(timeline.params), timeline.series, steps, blobs,
                      timeline.built)


def _timeline_of(trace, source: WalkSource) -> Timeline:
    tl = Timeline(trace, source.strategy_name, source.params)
    tl.series = source.series
    tl.checkpoint_steps, tl.checkpoints = list(source.checkpoint_steps), list(source.checkpoints)
    tl.n = tl.built = source.built
    return tl


def _find_job(trace, spec: BuildSpec, note, *, source: WalkSource, condition: str, events: tuple,
              words: int):
    """In the worker: the matching steps, the steps walked and the words of
    the first ``words`` matches; or the mistake of the user's code."""
    try:
        tl = _timeline_of(trace, source)
        found = find_steps(tl, parse(condition, events), lambda done, total: note((0, done, total)))
        shown = found.steps[:words]
        texts = step_words(tl, shown, lambda done, total: note((1, done, total))) if len(shown) else []
        return "found", (found.steps, found.walked, texts)
    except UserStrategyError as exc:
        return "fault", str(exc)


def find_in_worker(trace, source: WalkSource, condition, *, words: int = 0,
                   progress: Callable[[int, int], None] | None = None,
                   cancel: Callable[[], bool] | None = None,
                   time_limit: float | None = None, tick: float = 0.05):
    """``(steps, walked, texts)``: :func:`find_steps` of ``condition`` over
    the timeline ``source`` was taken from, and the words of its first
    ``words`` matches, computed in a worker process.  ``progress(done,
    total)`` as the walk reports; ``cancel()`` asked every ``tick`` seconds
    kills the worker and raises :class:`ReplayCancelled`.  A worker silent
    past ``time_limit`` seconds, or a mistake of the user's code, raises
    :class:`FindStopped` with what happened."""
    events = known_events([source.strategy_name])
    job = functools.partial(_find_job, source=source, condition=condition.text, events=events,
                            words=words)
    spec = BuildSpec(source.strategy_name, source.params, key="find", job=job)
    build = ParallelBuild(trace, [spec], workers=1, time_limit=time_limit).start()
    try:
        while not build.finished:
            for event in build.poll(tick):
                if progress is not None and isinstance(event, Note):
                    stage, done, total = event.value
                    progress(done if stage == 0 else total, total)
            if cancel is not None and cancel():
                build.cancel()
                raise ReplayCancelled(0)
    except BaseException:
        build.cancel()
        raise
    result = build.results.get("find")
    if isinstance(result, BuildFailed) or result is None:
        raise FindStopped(result.error if result is not None else "the worker gave no result")
    kind, value = result
    if kind == "fault":
        raise FindStopped(value)
    steps, walked, texts = value
    return np.asarray(steps, dtype=np.int64), int(walked), list(texts)
