"""Running answers to the measures' questions (free bytes, largest free
block, the top block) for heaps whose free memory is of two sorts: runs of
whole pages or blocks, of any length (phkmalloc's free page runs, GNU
malloc's free clusters), and small chunks of a few power-of-two sizes
(phkmalloc's chunks, GNU malloc's fragments).  The measures ask after every
step; walking thousands of free chunks each time would cost more than the
policy itself.

Runs are kept in a :class:`~heapscope.allocators.free_index.FreeSizeIndex`; chunks
only as a count per size, since all chunks of a size are alike.
"""

from __future__ import annotations

import struct

from .free_index import FreeSizeIndex

#: the build's row of measures of the policies kept with these books (GNU
#: malloc's and phkmalloc's ``measure_row``): no largest_free (the max of the
#: two after it), and of the counters all but the rotations, which they never
#: add to
ROW_FIELDS = ("heap", "live", "in_use", "headers", "free", "top_free", "largest_below_top",
              "visits", "splits", "merges", "grows", "walked", "payload")
ROW = struct.Struct(f"<{len(ROW_FIELDS)}q")


class FreeClasses:
    """Free runs by size and end, free chunks counted per chunk size."""

    __slots__ = ("runs", "chunks", "chunk_total", "chunk_largest")

    def __init__(self) -> None:
        self.runs = FreeSizeIndex()
        #: chunk size -> how many free chunks of that size
        self.chunks: dict[int, int] = {}
        #: bytes of all free chunks, kept as they come and go: the probe runs
        #: after every step of a build, and summing the sizes there cost
        #: about a microsecond a step
        self.chunk_total = 0
        #: the largest size with a free chunk (0: none), kept likewise: a
        #: max() over the sizes at every probe cost more than the books
        self.chunk_largest = 0

    def add_chunk(self, size: int, n: int = 1) -> None:
        chunks = self.chunks
        chunks[size] = chunks.get(size, 0) + n
        self.chunk_total += size * n
        if size > self.chunk_largest:
            self.chunk_largest = size

    def remove_chunk(self, size: int, n: int = 1) -> None:
        chunks = self.chunks
        left = chunks[size] - n
        if left:
            chunks[size] = left
        else:
            del chunks[size]
            if size == self.chunk_largest:
                self.chunk_largest = max(chunks, default=0)
        self.chunk_total -= size * n

    def chunk_bytes(self) -> int:
        """Bytes of all free chunks, summed from the counts (``check()``
        compares it with the running :attr:`chunk_total`)."""
        return sum(size * n for size, n in self.chunks.items())

    def mismatch(self, counts: dict[int, int]) -> str | None:
        """What is wrong with the books, given the free chunks counted on the
        heap itself (chunk size -> count), or None (``check()`` calls this)."""
        if counts != self.chunks:
            return f"free chunk counts {counts} differ from the books {self.chunks}"
        if self.chunk_total != self.chunk_bytes():
            return (f"the running total of free chunk bytes is {self.chunk_total}, "
                    f"the chunks hold {self.chunk_bytes()}")
        if self.chunk_largest != max(self.chunks, default=0):
            return (f"the largest free chunk is booked as {self.chunk_largest} bytes, "
                    f"the chunks' largest is {max(self.chunks, default=0)}")
        return None

    def probe(self, top_end: int, top_chunk: int = 0, reserve: int = 0) -> tuple[int, int, int, int]:
        """(F, largest free block, the top block's size or 0, largest other
        than the top) with the top block being: ``reserve`` (a fixed pool's
        part not handed out yet, which ends the heap) if any, else the run
        ending at ``top_end``, else a free chunk of ``top_chunk`` bytes that
        ends there (0: none)."""
        total, run_largest, run_top, run_below = self.runs.probe(top_end)
        chunk_largest = self.chunk_largest
        total += self.chunk_total + reserve
        # (comparisons, not max(): the probe runs after every step of a build)
        largest = run_largest if run_largest > chunk_largest else chunk_largest
        if reserve:
            return total, largest if largest > reserve else reserve, reserve, largest
        if run_top:
            return total, largest, run_top, run_below if run_below > chunk_largest else chunk_largest
        if top_chunk:
            # The largest chunk but the top one: the largest size unless the top
            # chunk is its only one.
            others = chunk_largest
            if top_chunk == chunk_largest and self.chunks[top_chunk] == 1:
                others = max((size for size in self.chunks if size != top_chunk), default=0)
            return total, largest, top_chunk, run_largest if run_largest > others else others
        return total, largest, 0, largest
