"""dlmalloc's fragmentation probe without a walk of the heap: its running
total of binned bytes, the front of the highest non-empty bin, the last
remainder and top, for :class:`heapscope.allocators.dlmalloc.Dlmalloc` (its
``fragmentation_probe``; the build packs the default row through it).
"""

from __future__ import annotations

from .dlmalloc import LR_BIN, PREV_INUSE
from .dlmalloc_bins import BINBLOCKWIDTH


def largest_binned(dl) -> int:
    """Largest chunk in a bin: the front chunk of the highest non-empty
    bin (large bins are sorted, largest first; small bins hold one size)."""
    fd, head = dl._fd, dl._head
    blocks = dl.binblocks
    while blocks:
        b = blocks.bit_length() - 1
        for i in range(b * BINBLOCKWIDTH + BINBLOCKWIDTH - 1, b * BINBLOCKWIDTH - 1, -1):
            p = fd[~i]
            if p != ~i:
                return head[p] & ~PREV_INUSE
        blocks &= ~(1 << b)
    return 0

def fragmentation_probe(dl) -> tuple[int, int, int, int]:
    """(F, largest free, top, largest other) without a walk; "top" is the
    free block touching the break: top, or in a pool the part not handed
    out yet, and then top counts among the others."""
    below = largest_binned(dl)
    lr = dl._fd[LR_BIN]
    if lr != LR_BIN:
        lr_size = dl._head[lr] & ~PREV_INUSE
        if lr_size > below:
            below = lr_size
    total = dl._free_bytes
    top = 0
    if dl.top is not None:
        top = dl.core_top - dl.top
        total += top
    tail = dl.arena.brk - dl.core_top
    if tail > 0:
        total += tail
        if top > below:
            below = top
        top = tail
    return total, max(top, below), top, below
