"""Malloc/free traces for heapscope: the Trace type, .rep files, workloads.

Pure Python + numpy; never imports Qt.

    >>> from heapscope.traces import load_trace
    >>> t = load_trace("vo1989:steps=500")
    >>> len(t), t.stats()["max_live_blocks"] > 0
    (1000, True)
"""

from .bundled import default_trace_path
from .errors import ReadCancelled, TraceError
from .formats import read_trace_file, sniff_file
from .ltrace import read_ltrace
from .load import load_trace, names_a_file, parse_spec
from .readable import ReadableParse, looks_readable, parse_readable, read_lines, write_readable
from .rep import format_rep, parse_rep, read_rep, write_rep
from .source import DEFAULT_LIMITS, ReadLimits, TraceSource, open_source
from .trace import ALLOC, FREE, REALLOC, Trace
from .workloads import WORKLOADS, make_workload

__all__ = [
    "ALLOC", "FREE", "REALLOC", "Trace", "TraceError", "ReadCancelled",
    "ReadLimits", "DEFAULT_LIMITS", "TraceSource", "open_source",
    "read_rep", "parse_rep", "write_rep", "format_rep",
    "parse_readable", "read_lines", "write_readable", "looks_readable", "ReadableParse",
    "read_trace_file", "sniff_file", "read_ltrace",
    "WORKLOADS", "make_workload", "load_trace", "names_a_file", "parse_spec", "default_trace_path",
]
