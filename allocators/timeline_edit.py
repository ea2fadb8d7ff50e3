"""A timeline of an edited trace, replayed only from the edit on.

An edit of a trace (the sandbox, :mod:`heapscope.sandbox`: an operation
inserted, deleted or changed) leaves the operations before its first changed
step ``p`` as they were, and so everything a timeline knows of the positions
up to ``p``: the heap at each, the measures of the steps before ``p``, the
checkpoints at or before ``p`` (a position's heap depends only on the
operations before it).  :func:`rebuilt` keeps all of that and replays only
the rest, with its measures and checkpoints, as :meth:`Timeline.build` would:

* the heap at ``p`` is taken from where the old timeline stands when it is
  there (the window edits at the shown step: a copy of the shown heap,
  :func:`~heapscope.allocators.state_copy.copy_state`), else restored from
  its nearest checkpoint before ``p`` and replayed in bulk up to ``p``
  (:meth:`Timeline.heap_at`), which costs less than the measured build of
  those steps;
* the measures of the steps before ``p`` are copied from the old series;
* the build goes on from ``p`` (``Timeline.build(start=...)``).

The result is the timeline a full build of the edited trace gives, step for
step (``tests/test_timeline_edit.py`` compares every column and every heap).
"""

from __future__ import annotations

import numpy as np

from .metrics import ALL_COLUMNS
from .replay import Timeline
from .state_copy import copy_state


def first_difference(old, new) -> int:
    """The first operation index where traces ``old`` and ``new`` differ (in
    kind, id or size); the shorter length when one is a prefix of the other."""
    n = min(len(old), len(new))
    same = ((old.kind[:n] == new.kind[:n]) & (old.ids[:n] == new.ids[:n])
            & (old.sizes[:n] == new.sizes[:n]))
    differ = np.flatnonzero(~same)
    return int(differ[0]) if len(differ) else n


def rebuilt(old: Timeline, trace, changed_from: int | None = None, params: dict | None = None,
            **build) -> Timeline:
    """A built timeline of ``trace`` through ``old``'s strategy, ``trace``
    being ``old.trace`` edited from operation ``changed_from`` on (found by
    :func:`first_difference` when not given).  ``params``: other parameters
    for the strategy, which change every step: then it is a full build.
    ``build``: ``progress`` and ``cancel``, as :meth:`Timeline.build` takes."""
    same_params = params is None or dict(params) == old.params
    new = Timeline(trace, old.strategy_name, old.params if same_params else params,
                   checkpoint_every=old.every, checkpoints=old.keep_checkpoints)
    n = len(trace)
    if changed_from is None:
        changed_from = first_difference(old.trace, trace)
    # The build replays the last step with its events: start before it.
    p = min(changed_from, n - 1, old.built)
    if not same_params or old.fault is not None or p <= 0:
        return new.build(**build)
    if old.position == p:
        strategy, program, _ = copy_state(old.strategy, old.program)
    else:
        strategy, program = old.heap_at(p)
    kept = [(t, blob) for t, blob in zip(old.checkpoint_steps, old.checkpoints) if t <= p]
    new.checkpoint_steps = [t for t, _ in kept]
    new.checkpoints = [blob for _, blob in kept]
    for col in ALL_COLUMNS:    # put: an old column widened to int64 widens the new one
        new.series.put(col, slice(0, p), getattr(old.series, col)[:p])
    return new.build(start=(p, strategy, program), **build)
