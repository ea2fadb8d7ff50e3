"""``heapscope grade`` with the student's code in a worker process.

:func:`grade_in_workers` is :func:`heapscope.allocators.grading.grade` (same
arguments, same :class:`~heapscope.allocators.grading.Grade`), except that each
trace is graded in a worker process of its own with a time limit
(allocators/isolation.py): the checks, the timed runs and the reference's
timed runs of one trace run there, one trace after the other, so the timings
are those of one process alone as in-process grading had them.  A trace
whose worker is silent past the limit, dies (``os._exit``, a signal) or
fails otherwise is graded invalid with that reason as its error, at the last
step heard of; the other traces are graded as usual.

grading.py is left as it is: this wraps its per-trace work from the outside
(``grade`` called on one trace in the worker).
"""

from __future__ import annotations

import functools
from typing import Callable

from . import grading, isolation, registry
from .parallel import BuildFailed, BuildSpec, Note, ParallelBuild
from .user import UserStrategy


def _grade_one(trace, spec: BuildSpec, note, *, trace_spec: str, options: dict):
    """In the worker: one trace graded by grading.grade; its Grade."""
    cls = registry.STRATEGIES[spec.name]
    return grading.grade(cls, [(trace_spec, trace)], spec.params,
                         progress=lambda name, what: note((name, what)), **options)


def failed_trace(cls: type[UserStrategy], trace_spec: str, trace, failure: BuildFailed):
    """The TraceGrade of a trace whose worker gave no grade: invalid, the
    failure's reason as its error, at the step last heard of."""
    text = failure.error
    if failure.where:     # the report shows where apart ("in Loop._malloc (loop.py:9)")
        text = text.replace(f", in {failure.where}", "").replace(f" in {failure.where}", "")
    tg = grading.TraceGrade(trace_spec, trace.name or trace_spec, len(trace))
    tg.path = getattr(trace, "source", None)
    tg.error = isolation.worker_error(cls.__name__, text, failure.step, failure.where)
    step = failure.step
    if step and 1 <= step <= len(trace):
        tg.operation = grading.describe_op(trace, step)
        lines = getattr(trace, "line_numbers", None)
        if lines is not None:
            tg.line = int(lines[step - 1])
    return tg


def grade_in_workers(cls: type[UserStrategy], traces: list[tuple[str, object]],
                     params: dict | None = None, *,
                     time_limit: float | None = isolation.DEFAULT_TIME_LIMIT,
                     progress: Callable[[str, str], None] | None = None,
                     start_method: str | None = None, **options) -> grading.Grade:
    """:func:`grading.grade` of ``cls`` on ``traces``, each trace in a worker
    process silent at most ``time_limit`` seconds.  ``options`` are grade's
    own (``check_every``, ``reference_params``, ``timing``...), passed on."""
    params = dict(params or {})
    base: grading.Grade | None = None
    graded = []
    for trace_spec, trace in traces:
        job = functools.partial(_grade_one, trace_spec=trace_spec, options=options)
        build = ParallelBuild(trace, [BuildSpec(cls.name, params, job=job)], workers=1,
                              time_limit=time_limit, start_method=start_method)
        build.start()
        try:
            while not build.finished:
                for event in build.poll(0.1):
                    if progress and isinstance(event, Note):
                        progress(*event.value)
        except BaseException:
            build.cancel()
            raise
        result = build.results[cls.name]
        if isinstance(result, BuildFailed):
            graded.append(failed_trace(cls, trace_spec, trace, result))
        else:
            base = base or result
            graded.extend(result.traces)
    if base is None:
        base = grading.Grade(cls.name, params, baseline=options.get("baseline"))
    base.traces = graded
    return base
