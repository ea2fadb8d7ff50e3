"""Running answers to "how much is free, and how big is the largest free block?"
for strategies whose free structure cannot say it cheaply (address-ordered
lists).  The measures ask after every step; walking every free block each time
made a list strategy's replay several times slower than the strategy itself.

Sizes are kept in a max-heap (``heapq``, negated) with lazy deletion: a block
that leaves is only counted as stale, and stale entries are dropped when they
reach the top; the heap is rebuilt when they outnumber the live ones.  Every
operation is a C call or two (a sorted list in Python cost more than the
allocator's own step).  Blocks are also indexed by their end address, so the
top block, the free block touching the break, is one lookup.
"""

from __future__ import annotations

from heapq import heapify, heappop, heappush


class FreeSizeIndex:
    """The free blocks' sizes, total and ends, updated as blocks come and go."""

    __slots__ = ("heap", "stale", "total", "by_end")

    def __init__(self) -> None:
        self.heap: list[int] = []            # -size of every free block, and stale ones
        self.stale: dict[int, int] = {}      # size -> entries of the heap no block has any more
        self.total = 0
        self.by_end: dict[int, int] = {}     # end address -> size: one entry per free block

    def add(self, addr: int, size: int) -> None:
        heappush(self.heap, -size)
        self.total += size
        self.by_end[addr + size] = size

    def remove(self, addr: int, size: int) -> None:
        stale = self.stale
        stale[size] = stale.get(size, 0) + 1
        self.total -= size
        del self.by_end[addr + size]
        if len(self.heap) > 2 * len(self.by_end) + 64:
            self.compact()

    def compact(self) -> None:
        """Drop the stale entries: the heap again holds the free blocks only."""
        self.heap = [-s for s in self.by_end.values()]
        heapify(self.heap)
        self.stale.clear()

    def resize(self, addr: int, old: int, new: int) -> None:
        self.remove(addr, old)
        self.add(addr, new)

    @property
    def sizes(self) -> list[int]:
        """The free blocks' sizes, ascending."""
        return sorted(self.by_end.values())

    def _largest(self) -> int:
        """The largest live size: stale entries popped off the top first."""
        heap, stale = self.heap, self.stale
        while True:
            size = -heap[0]
            n = stale.get(size)
            if not n:
                return size
            heappop(heap)
            if n == 1:
                del stale[size]
            else:
                stale[size] = n - 1

    def largest(self) -> int:
        """The largest free block's size, 0 if there is none."""
        if not self.by_end:
            return 0
        size = -self.heap[0]
        return self._largest() if size in self.stale else size

    def probe(self, top_end: int) -> tuple[int, int, int, int]:
        """(F, largest, top block size or 0, largest other than the top), the top
        block being the free block that ends at ``top_end``."""
        by_end = self.by_end
        if not by_end:
            return 0, 0, 0, 0
        heap = self.heap
        largest = -heap[0]
        if largest in self.stale:           # a stale top: pop it (and any under it)
            largest = self._largest()
        top = by_end.get(top_end, 0)
        if top and top == largest:
            if len(by_end) > 1:
                heappop(heap)               # the top block's entry, for a moment
                below = self._largest()
                heappush(heap, -largest)
            else:
                below = 0
        else:
            below = largest
        return self.total, largest, top, below
