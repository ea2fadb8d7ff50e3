"""Running answers to "how much is free, and how big is the largest free block?"
for strategies whose free structure cannot say it cheaply (address-ordered
lists).  The measures ask after every step; walking every free block each time
made a list strategy's replay several times slower than the strategy itself.

Sizes are kept in a ``sortedcontainers.SortedList`` (O(log n) add and remove,
the largest at the end); blocks are also indexed by their end address, so the
top block, the free block touching the break, is one lookup.
"""

from __future__ import annotations

from sortedcontainers import SortedList


class FreeSizeIndex:
    """The free blocks' sizes, total and ends, updated as blocks come and go."""

    __slots__ = ("sizes", "total", "by_end")

    def __init__(self) -> None:
        self.sizes = SortedList()
        self.total = 0
        self.by_end: dict[int, int] = {}   # end address -> size

    def add(self, addr: int, size: int) -> None:
        self.sizes.add(size)
        self.total += size
        self.by_end[addr + size] = size

    def remove(self, addr: int, size: int) -> None:
        self.sizes.remove(size)
        self.total -= size
        del self.by_end[addr + size]

    def resize(self, addr: int, old: int, new: int) -> None:
        self.remove(addr, old)
        self.add(addr, new)

    def probe(self, top_end: int) -> tuple[int, int, int, int]:
        """(F, largest, top block size or 0, largest other than the top), the top
        block being the free block that ends at ``top_end``."""
        sizes = self.sizes
        if not sizes:
            return 0, 0, 0, 0
        largest = sizes[-1]
        top = self.by_end.get(top_end, 0)
        if top and top == largest:
            below = sizes[-2] if len(sizes) > 1 else 0
        else:
            below = largest
        return self.total, largest, top, below
