"""Which reader a trace file needs, chosen by its content, not its name.

Three kinds of text are read: a .rep trace (``traces.rep``: header integers,
then ``a``/``r``/``f`` ops), ltrace output or villoc's input
(``traces.ltrace``: ``malloc(24) = 0x...``) and the readable form
(``traces.readable``: ``a = malloc(24)``, ``free(a)``, the ``.heap``
files).  The file is opened once, as a bounded stream (:func:`heapscope.traces.source.open_source`: gzip inflated as it is
read, limits, progress, cancel), and its first lines -- decompressed, and
left in the stream for the reader, so a pipe can be sniffed too -- decide: a
call, an ltrace resumption or an ltrace marker line there means ltrace; a
readable call (``a = malloc(24)``, ``free(a)``: no ``= result`` after it)
means the readable form, whatever the file is called (it may hold .rep
lines too, so those alone do not decide); anything else goes to the .rep
reader, whose messages say what a .rep should
look like.  A binary memray capture (``memray run``: :mod:`heapscope.traces.memray_capture`)
is told by its magic, before any line is looked at, and read by memray
itself from its path.  A new format adds its test to :func:`sniff` and its reader of a
:class:`~heapscope.traces.source.TraceSource` to :data:`READERS`.
"""

from __future__ import annotations

import os

from .ltrace import import_ltrace_source, looks_like_ltrace
from .memray_capture import looks_like_memray, read_memray_source
from .readable import looks_readable_line, read_readable_source
from .rep import read_rep_source
from .source import (DEFAULT_LIMITS, Cancel, Progress, ReadLimits, TraceSource, _lf_only,
                     open_source)
from .trace import Trace

#: bytes looked at to decide
SNIFF_BYTES = 64 * 1024
#: significant lines looked at to decide
SNIFF_LINES = 50


def sniff(head: bytes) -> str:
    """``"memray"``, ``"ltrace"``, ``"heap"`` or ``"rep"`` for the first bytes of a
    (decompressed) file."""
    if looks_like_memray(head):
        return "memray"
    seen = 0
    for line in head.split(b"\n")[:-1] if b"\n" in head else [head]:
        text = line.strip()
        if not text or text.startswith(b"#"):
            continue
        if looks_like_ltrace(text):
            return "ltrace"
        if looks_readable_line(text):
            return "heap"
        seen += 1
        if seen >= SNIFF_LINES:
            break
    return "rep"


def sniff_source(source: TraceSource) -> str:
    """:func:`sniff` for an open source (its first bytes stay in it)."""
    return sniff(_lf_only(source.head(SNIFF_BYTES)))


def sniff_file(path: str | os.PathLike) -> str:
    """:func:`sniff`: the reader that ``path`` needs.  (This reads
    the file's first bytes: to read a pipe, open it once and use
    :func:`sniff_source`, as :func:`read_trace_file` does.)"""
    with open_source(path) as source:
        return sniff_source(source)


def read_noting(source: TraceSource) -> tuple[Trace, list[str]]:
    """The trace in ``source``, read by its format's reader, and what the
    reading left out or merged, in words: an importer's (ltrace's calls left
    unfinished, memray's records of other allocators...; ``heapscope check``
    and ``convert`` print them), nothing for a .rep or a readable file."""
    form = sniff_source(source)
    if form == "ltrace":
        from .ltrace import skipped_lines
        trace, counts, pointer_counts = import_ltrace_source(source)
        return trace, skipped_lines(counts, pointer_counts)
    if form == "memray":
        from .memray_capture import import_memray, skipped_lines
        trace, counts, pointer_counts = import_memray(source.path, cancel=source.cancelled,
                                                      progress=source.report_share)
        return trace, skipped_lines(counts, pointer_counts)
    return READERS[form](source), []


#: each format's reader of an open source
READERS = {
    "ltrace": lambda source: import_ltrace_source(source)[0],
    "heap": read_readable_source,
    "rep": read_rep_source,
    "memray": read_memray_source,
}


def read_trace_file(path: str | os.PathLike, *, limits: ReadLimits = DEFAULT_LIMITS,
                    progress: Progress | None = None, cancel: Cancel | None = None) -> Trace:
    """Read any trace file heapscope understands, chosen by its content.

    ``limits``, ``progress`` and ``cancel`` are as in
    :func:`heapscope.traces.source.open_source`.
    """
    with open_source(path, limits=limits, progress=progress, cancel=cancel) as source:
        return READERS[sniff_source(source)](source)
