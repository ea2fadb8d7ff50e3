"""Importing a memray capture (``memray run -o CAPTURE.bin prog.py``) as a trace.

memray (bloomberg/memray) records every allocation and deallocation a Python
program makes, one record per call, in the order the calls happened across all
threads.  Its own reader, :class:`memray.FileReader`, gives those records back
(:meth:`~memray.FileReader.get_allocation_records`); we read the file through
it rather than parsing memray's binary format ourselves, so memray's format
changes are memray's business.  memray is an optional extra
(``pip install heapscope[memray]``); without it a capture is refused with a
message saying so.

What becomes the trace:

- the system allocator's calls: malloc, calloc, realloc, posix_memalign,
  aligned_alloc, memalign, valloc, pvalloc allocate, free frees.  memray
  records a realloc as a free of the old block followed by an allocation of
  the new one (its ``REALLOC`` record), so a realloc here is a free and a new
  block, not a block resized in place;
- pymalloc's calls (``memray run --trace-python-allocators``) and mmap/munmap
  are left out and counted, unless ``keep`` names them (``"pymalloc"``,
  ``"mmap"``): pymalloc carves its blocks out of arenas it got from mmap, so
  keeping both counts the same bytes twice.  A kept munmap frees the mapping
  that starts at its address (a partial munmap is taken as the whole);
- threads are merged in record order (one process has one heap), or one is
  kept (``thread``: memray's thread number, 1 for the main thread); a block
  one thread allocates and another frees then stays live to the end;
- a free of a block allocated before tracking began (or by an allocator left
  out) is counted and dropped, as for ltrace (:class:`PointerTrace`).

An aggregated capture (``memray run --aggregate``) keeps only totals per stack,
not the order of the calls, so it cannot be replayed: it is refused by name.
Record numbers (1-based) stand in for line numbers in messages.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from heapscope.allocators.phrases import count
from .errors import ReadCancelled, TraceError
from .limits import MAX_OPS
from .pointer_trace import PointerTrace
from .rep import trace_name
from .source import TraceSource
from .trace import Trace

#: a capture's first bytes: memray's magic, bare or (``memray run``'s default)
#: inside an lz4 frame, whose first block starts with literal bytes
MAGIC = b"memray\x00"
LZ4_FRAME = b"\x04\x22\x4d\x18"
#: how far into an lz4 frame the magic may start (frame header: 7 to 19 bytes,
#: then the block size and the literals' token)
_MAGIC_WITHIN = 32

#: memray's AllocatorType names, by what heapscope does with them
SYSTEM_ALLOCS = ("MALLOC", "CALLOC", "REALLOC", "POSIX_MEMALIGN", "ALIGNED_ALLOC",
                 "MEMALIGN", "VALLOC", "PVALLOC")
SYSTEM_FREES = ("FREE",)
OPTIONAL = {"pymalloc": (("PYMALLOC_MALLOC", "PYMALLOC_CALLOC", "PYMALLOC_REALLOC"),
                         ("PYMALLOC_FREE",)),
            "mmap": (("MMAP",), ("MUNMAP",))}
#: how often (in records) a long read reports progress and looks at its cancel hook
_CHECK_EVERY = 1 << 14

INSTALL_HINT = "pip install heapscope[memray]"


def looks_like_memray(head: bytes) -> bool:
    """Whether a file's first bytes are a memray capture's (compressed or not)."""
    if head.startswith(MAGIC):
        return True
    return head.startswith(LZ4_FRAME) and MAGIC in head[:_MAGIC_WITHIN]


@dataclass
class MemrayCounts:
    """What an import left out, by kind of record (memray's names, lower case)."""
    left_out: dict = field(default_factory=dict)     # "pymalloc_malloc" -> n
    threads: set = field(default_factory=set)
    other_threads: int = 0                           # records of threads not kept
    records: int = 0


def _reader(path: str):
    """memray's FileReader of ``path``; TraceError for no memray, an
    aggregated capture or a file memray cannot read."""
    try:
        import memray
    except ImportError:
        raise TraceError(f"this is a memray capture; reading it needs memray: {INSTALL_HINT}",
                         path) from None
    if not os.path.isfile(path):
        raise TraceError("a memray capture is read by memray itself, from a regular file "
                         "(not a pipe, not gzip-compressed)", path)
    try:
        reader = memray.FileReader(path)
    except (OSError, ValueError, RuntimeError) as exc:
        raise TraceError(f"memray cannot read this capture: {exc}", path) from None
    if reader.metadata.file_format != memray.FileFormat.ALL_ALLOCATIONS:
        reader.close()
        raise TraceError("an aggregated memray capture (memray run --aggregate) keeps totals, "
                         "not the order of the calls, so it cannot be replayed; capture again "
                         "without --aggregate", path)
    return memray, reader


def import_memray(path: str | os.PathLike, keep: tuple[str, ...] = (), keep_live: bool = False,
                  thread: int | None = None, max_ops: int = MAX_OPS, cancel=None, progress=None
                  ) -> tuple[Trace, MemrayCounts, object]:
    """Read a memray capture into a trace: (trace, what was left out, the
    pointer counts of :class:`PointerTrace`).  ``keep`` adds ``"pymalloc"``
    and/or ``"mmap"`` records; ``thread`` keeps only that thread's; blocks still live at the end are freed there
    unless ``keep_live``; ``cancel()`` turning true stops the read
    (:class:`~heapscope.traces.errors.ReadCancelled`); ``progress(done, total)``
    hears of the records read, of the capture's total (memray's metadata)."""
    path = os.fspath(path)
    unknown = set(keep) - set(OPTIONAL)
    if unknown:
        raise TraceError(f"cannot keep {', '.join(sorted(unknown))}: memray's optional "
                         f"allocators are {', '.join(OPTIONAL)}", path)
    memray, reader = _reader(path)
    kinds = memray.AllocatorType
    allocs = {int(kinds[name]) for name in SYSTEM_ALLOCS}
    frees = {int(kinds[name]) for name in SYSTEM_FREES}
    for group in keep:
        allocs |= {int(kinds[name]) for name in OPTIONAL[group][0]}
        frees |= {int(kinds[name]) for name in OPTIONAL[group][1]}
    out = PointerTrace(trace_name(path), path, max_ops)
    counts = MemrayCounts()
    left_out: dict[int, int] = {}
    number = 0
    total = reader.metadata.total_allocations
    try:
        for number, record in enumerate(reader.get_allocation_records(), 1):
            if number % _CHECK_EVERY == 0:
                if cancel is not None and cancel():
                    raise ReadCancelled(path)
                if progress is not None:
                    progress(number, total)
            kind = record.allocator
            counts.threads.add(record.tid)
            if thread is not None and record.tid != thread:
                counts.other_threads += 1
                continue
            if kind in allocs:
                if record.address:
                    out.alloc(record.address, record.size, number)
            elif kind in frees:
                if record.address:
                    out.free(record.address, number)
            else:
                left_out[kind] = left_out.get(kind, 0) + 1
    except (OSError, ValueError, RuntimeError) as exc:    # memray's reader failing mid-file
        raise TraceError(f"memray cannot read this capture past record {number:,}: {exc}",
                         path, number or None) from None
    finally:
        reader.close()
    counts.records = number
    counts.left_out = {kinds(k).name.lower(): n for k, n in sorted(left_out.items())}
    if thread is not None and thread not in counts.threads:
        raise TraceError(f"no thread {thread} in this memray capture (its threads: "
                         f"{', '.join(map(str, sorted(counts.threads)))})", path)
    if len(out) == 0:
        raise TraceError(f"no system allocator call (malloc, free, ...) in this memray capture's "
                         f"{number:,} records", path)
    return out.finish(keep_live, number), counts, out.counts


def read_memray_source(source: TraceSource) -> Trace:
    """The reader :mod:`heapscope.traces.formats` calls: memray reads the file
    itself, by its path (the open source only told what it is)."""
    return import_memray(source.path, cancel=source.cancelled, progress=source.report_share)[0]


def skipped_lines(counts: MemrayCounts, pointer_counts) -> list[str]:
    """What an import left out, in words (for ``heapscope convert`` and
    ``heapscope check``)."""
    out = []
    if counts.other_threads:
        out.append(count(counts.other_threads, ("record of other threads left out",
                                                "records of other threads left out"), grouped=True))
    elif len(counts.threads) > 1:
        out.append(f"{len(counts.threads)} threads merged in record order "
                   f"({', '.join(map(str, sorted(counts.threads)))}): --thread N keeps one")
    for name, n in counts.left_out.items():
        group = "pymalloc" if name.startswith("pymalloc") else "mmap"
        out.append(count(n, f"{name} record", grouped=True) + f" left out (--keep {group} keeps them)")
    if pointer_counts.unknown_frees:
        out.append(count(pointer_counts.unknown_frees, ("free of a block", "frees of blocks"), grouped=True)
                   + " allocated before tracking began (or by an allocator left out): dropped")
    if pointer_counts.missed_frees:
        out.append(count(pointer_counts.missed_frees, ("address returned", "addresses returned"),
                         grouped=True) + " again while live: the old block freed there")
    return out
