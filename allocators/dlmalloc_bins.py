"""dlmalloc 2.6's bins (``av_``), as geometry: how many there are, which
chunk sizes each holds (``bin_index``; the smallest of each, ``BIN_FLOOR``)
and how many one bit of ``binblocks`` covers.  Read by the policy
(:mod:`heapscope.allocators.dlmalloc`, which names them too), its words
(:mod:`heapscope.allocators.dlmalloc_explain`) and its view.
"""

from __future__ import annotations

#: number of bins (``NAV``)
NAV = 128
#: bins per binblocks bit
BINBLOCKWIDTH = 4
MAX_SMALLBIN_SIZE = 512
SMALLBIN_WIDTH = 8


def bin_index(sz: int) -> int:
    """The original's ``bin_index``: the bin of a free chunk of ``sz`` bytes."""
    s = sz >> 9
    if s == 0:
        return sz >> 3
    if s <= 4:
        return 56 + (sz >> 6)
    if s <= 20:
        return 91 + (sz >> 9)
    if s <= 84:
        return 110 + (sz >> 12)
    if s <= 340:
        return 119 + (sz >> 15)
    if s <= 1364:
        return 124 + (sz >> 18)
    return 126


def _bin_floors() -> list[int | None]:
    """Smallest chunk size of each bin (None for bin 127, which no size
    reaches); ``bin_index`` never decreases, so each bin is one range."""
    hi = 1 << 24
    floors: list[int | None] = []
    for i in range(NAV):
        lo, top = 0, hi
        while lo < top:
            mid = (lo + top) // 2
            if bin_index(mid) >= i:
                top = mid
            else:
                lo = mid + 1
        floors.append(lo if bin_index(lo) == i else None)
    return floors


#: the smallest chunk size filed in each bin
BIN_FLOOR = _bin_floors()


def bin_words(i: int) -> str:
    """What sizes bin ``i`` holds, in words."""
    lo = BIN_FLOOR[i]
    if lo is None:
        return "no size"
    hi = next((f for f in BIN_FLOOR[i + 1:] if f is not None), None)
    if i < 64:
        return f"chunks of {lo} B"
    if hi is None:
        return f"chunks of {lo} B and more"
    return f"chunks of {lo}-{hi - 1} B"
