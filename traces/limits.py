"""The largest trace heapscope reads, in one place for every reader.

A trace past one of these is refused with a message naming the limit, so that
no input -- a huge file, an endless stream, a recording of a long-running
program -- can take unbounded memory or time.  Readers of text files take
them through :class:`heapscope.traces.source.ReadLimits`, whose defaults these are.  ``MAX_IDS`` and ``MAX_SIZE``
come from :mod:`heapscope.traces.trace`, where the Trace type stores them.
"""

from __future__ import annotations

from .trace import MAX_IDS, MAX_SIZE

#: Operations in one trace (a Trace takes about 17 bytes an op: 170 MB here).
MAX_OPS = 10_000_000
#: Bytes of text read from one file by a line-oriented importer, after
#: decompression (an endless stream stops here).
MAX_INPUT_BYTES = 2 * 1024**3
#: Bytes in one line of text; a longer line is not a trace line.  (A .rep line
#: may hold several ops, as the CS:APP driver reads them: 1 MiB is some
#: 70 000 of them.)
MAX_LINE_BYTES = 1024 * 1024
#: Requests past this many bytes (1 GiB) are valid but unlikely to be a real
#: program's: ``heapscope check`` warns of them.  (A request larger than a
#: strategy's heap can ever hold fails at once in every strategy:
#: ``Strategy.largest_request``.)
LARGE_REQUEST = 1 << 30

__all__ = ["MAX_OPS", "MAX_IDS", "MAX_SIZE", "MAX_INPUT_BYTES", "MAX_LINE_BYTES", "LARGE_REQUEST"]
