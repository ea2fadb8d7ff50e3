"""The events of dlmalloc 2.6 beyond the shared ones
(:mod:`heapscope.allocators.events`): the bins and ``binblocks`` looked at
and changed, ``frontlink``'s walk, ``malloc_trim`` and the mmap regions.
Its view, the explain panel and the structure replay (kind ``bins``) read
them; :mod:`heapscope.allocators.dlmalloc` names them too.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class BinProbe:
    """dlmalloc: bin ``bin`` looked at; ``last`` is the chunk at its back
    (``last(bin)``, where a scan of it starts), None when the bin is empty.
    One unit of search (``rec.probes``, ``rec.visits``)."""
    changes_blocks = False
    bin: int
    last: int | None

    def list_mark(self) -> tuple[tuple, str]:
        return (self.bin,), "looked at" + (" (empty)" if self.last is None else "")


@dataclass(frozen=True, slots=True)
class BinmapProbe:
    """dlmalloc's bin scan tested bit ``block`` of ``binblocks`` (bins
    ``4*block`` .. ``4*block+3``): ``marked`` says whether the block may hold
    chunks.  One unit of search."""
    changes_blocks = False
    block: int
    marked: bool


@dataclass(frozen=True, slots=True)
class BinmapChange:
    """Bit ``block`` of ``binblocks`` set (``mark_binblock``: a chunk went into
    an empty bin of the block) or cleared (the scan found the block empty)."""
    changes_blocks = False
    block: int
    marked: bool


@dataclass(frozen=True, slots=True)
class BinWalkStep:
    """``frontlink`` passed chunk ``addr`` (larger than the one being linked)
    walking bin ``bin`` to its size place; counted in ``rec.walked``."""
    changes_blocks = False
    addr: int
    size: int
    bin: int


@dataclass(frozen=True, slots=True)
class Trim:
    """``malloc_trim``: ``sbrk(-extra)`` gave the top ``extra`` bytes back; the
    break (the end of top) moved down from ``old_brk``."""
    old_brk: int
    extra: int

    def edit(self, heap) -> None:
        heap.shrink(self.old_brk - self.extra)


@dataclass(frozen=True, slots=True)
class Mapped:
    """``mmap_chunk``: a region of ``size`` bytes at ``addr``, apart from the
    heap, holds one chunk whose payload is ``payload``."""
    # apart from the heap: the map does not draw it
    changes_blocks = False
    addr: int
    size: int
    payload: int
    request: int


@dataclass(frozen=True, slots=True)
class Unmapped:
    """``munmap_chunk``: the region at ``addr`` of ``size`` bytes was released."""
    # apart from the heap: the map does not draw it
    changes_blocks = False
    addr: int
    size: int

