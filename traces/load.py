"""Turning a user's trace spec (a file path or a workload name) into a Trace.

A spec is either a path to a trace file (a .rep, a readable .heap, or ltrace/villoc output,
gzip-compressed or not; a FIFO or a device too: see :mod:`heapscope.traces.formats`), a
bundled trace, or a workload name from :data:`heapscope.traces.workloads.WORKLOADS`
with optional parameters::

    traces/bundled/default.rep
    vo1989
    vo1989:seed=3,steps=500
    plotnick1983:m=100,giant_first=true

A bundled trace's or a workload's name always means it, even where the
current folder holds a file of that name; such a file needs a path
(``./default``).
"""

from __future__ import annotations

import os

from heapscope.values import BadValue, parse_assignments, parse_scalar
from .bundled import example_path, examples
from .errors import TraceError
from .formats import read_noting, read_trace_file
from .source import DEFAULT_LIMITS, Cancel, Progress, ReadLimits, open_source
from .trace import Trace
from .workloads import WORKLOADS, make_workload, parse_workload_params


def parse_spec(spec: str) -> tuple[str, dict]:
    """Split ``"name:k=v,k=v"`` into the name and a dict of values.  A known
    workload's values are read by its declared parameters (``max_size=8K``;
    TraceError naming the parameter for a bad one); other names' by
    :func:`heapscope.values.parse_scalar`."""
    name, _, rest = spec.partition(":")
    name = name.strip()
    try:
        raw = parse_assignments(rest)
    except BadValue as exc:
        raise TraceError(f"{exc} in {spec!r}") from None
    if name in WORKLOADS:
        return name, parse_workload_params(name, raw)
    return name, {key: parse_scalar(value) for key, value in raw.items()}


def _looks_like_path(spec: str) -> bool:
    low = spec.lower()
    return low.endswith((".rep", ".rep.gz", ".heap", ".gz")) or os.sep in spec or "/" in spec


def names_a_file(spec: str | os.PathLike) -> bool:
    """Whether :func:`load_trace` reads ``spec`` as a file: a path, or a bare
    name that is neither a bundled trace nor a workload and exists."""
    if not isinstance(spec, str) or _looks_like_path(spec):
        return True
    if example_path(spec) is not None or spec.partition(":")[0].strip() in WORKLOADS:
        return False
    return os.path.exists(spec)


def load_trace(spec: str | os.PathLike, *, limits: ReadLimits = DEFAULT_LIMITS,
               progress: Progress | None = None, cancel: Cancel | None = None) -> Trace:
    """Load a trace from a file path, a bundled example or a workload spec;
    TraceError if none.

    A spec names a file when it is a path object, ends in .rep / .rep.gz / .heap or
    contains a path separator.  Otherwise a bundled trace's name
    (``gcc-cc1``: see :func:`heapscope.traces.bundled.examples`) or a workload's
    (with optional ``:key=value,...`` parameters) always means that trace,
    even when the current folder holds a file of that name: ``heapscope
    grade`` with no trace names must grade the bundled traces, whatever
    folder it runs in.  A file of the current folder is named with a path
    (``./default``); a bare name that is no bundled trace or workload is
    still read as a file when one exists (a FIFO, a device too).
    ``limits``, ``progress`` and ``cancel`` are for files (see
    :func:`heapscope.traces.formats.read_trace_file`).
    """
    hooks = dict(limits=limits, progress=progress, cancel=cancel)
    if names_a_file(spec):
        return read_trace_file(spec, **hooks)
    bundled = example_path(spec)
    if bundled is not None:
        return read_trace_file(bundled, **hooks)
    name, params = parse_spec(spec)
    if name not in WORKLOADS:
        raise TraceError(f"{spec!r} is neither a trace file nor a known workload "
                         f"(workloads: {', '.join(WORKLOADS)}; bundled traces: "
                         f"{', '.join(ex.name for ex in examples())}; a file of the current "
                         f"folder is named with a path: ./{spec})")
    return make_workload(name, **params)


def load_trace_noting(spec: str | os.PathLike) -> tuple[Trace, list[str]]:
    """:func:`load_trace`, and what reading a file left out or merged, in
    words (:func:`heapscope.traces.formats.read_noting`: an ltrace import's
    calls that never resumed...); no words for a bundled trace or a workload."""
    if not names_a_file(spec):
        return load_trace(spec), []
    with open_source(spec) as source:
        return read_noting(source)
