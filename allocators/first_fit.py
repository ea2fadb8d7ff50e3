"""First fit on an address-ordered free list: the baseline every study compares
against (Knuth, TAOCP vol. 1, 2.5, algorithm A; Wilson, Johnstone, Neely &
Boles, "Dynamic Storage Allocation: A Survey and Critical Review", 1995, 3.4).

It is K&R's allocator (see :mod:`heapscope.allocators.next_fit`) with one change: every
search starts from the lowest address instead of the rover, so small free
blocks collect near the start of the heap ("splinters") and searches there grow
long.  Blocks, headers, tail cutting, coalescing and ``morecore`` are K&R's.
"""

from __future__ import annotations

from .next_fit import NextFit


class FirstFit(NextFit):
    """Address-ordered first fit: K&R's list searched from base every time."""

    name = "first-fit"
    title = "First fit, address-ordered list"
    citation = "Knuth, TAOCP 1, 2.5, algorithm A; K&R 8.7 block layout"
    roving = False

    def _policy_signature(self) -> tuple:
        return (tuple(self.free_list()),)
