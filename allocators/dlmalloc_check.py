"""dlmalloc's invariants: malloc.c 2.6's ``do_check_*`` (compiled in with
DEBUG) and more, for :class:`heapscope.allocators.dlmalloc.Dlmalloc` (its
``_check_structure``, which ``Strategy.check`` calls after the invariants
every heap shares).
"""

from __future__ import annotations

from .dlmalloc import MMAP_BASE, PREV_INUSE
from .dlmalloc_bins import BINBLOCKWIDTH, NAV, bin_index
from .strategy import FREE_BLOCK, Block


def check_dlmalloc(dl, blocks: list[Block]) -> None:
    """The original's ``do_check_*`` and more: boundary tags along the
    heap (PREV_INUSE bits, feet of free chunks), full coalescing, each free
    chunk in the bin ``bin_index`` names or the last remainder, the bins
    doubly linked and sorted, binblocks set for every non-empty bin, the
    highest non-empty bin booked (``_high_bin``), top
    at the end of the sbrk'd memory, the break on a page, the mmap regions
    booked."""
    def broken(message: str) -> None:
        dl._fail(False, message)

    W = dl.size_sz
    head, foot, fd, bk = dl._head, dl._foot, dl._fd, dl._bk
    minsize, mask = dl.minsize, dl.alignment - 1
    top = dl.top

    # The bins.
    in_bins: dict[int, int] = {}
    for i in range(NAV):
        q = ~i
        prev = q
        p = fd[q]
        last_size = None
        n = 0
        while p != q:
            n += 1
            if n > len(fd):
                broken(f"bin {i} does not lead back to its header")
            if bk.get(p) != prev:
                broken(f"bk of {p:#x} is {bk.get(p)!r}, not {prev:#x} (bin {i})")
            s = head.get(p)
            if s is None:
                broken(f"bin {i} holds {p:#x}, which is no chunk of the heap")
            s &= ~PREV_INUSE
            if p in in_bins:
                broken(f"chunk {p:#x} is linked twice")
            in_bins[p] = i
            if i >= 2 and bin_index(s) != i:
                broken(f"chunk {p:#x} of {s} bytes is in bin {i}, not bin {bin_index(s)}")
            if i >= 2 and last_size is not None and s > last_size:
                broken(f"bin {i} is not in decreasing size order: {s} after {last_size}")
            last_size = s
            prev = p
            p = fd[p]
        if bk[q] != prev:
            broken(f"bin {i}'s header points back at {bk[q]!r}, not its last chunk {prev:#x}")
        if i >= 2 and n and not dl.binblocks >> (i // BINBLOCKWIDTH) & 1:
            broken(f"bin {i} holds chunks but binblocks bit {i // BINBLOCKWIDTH} is clear")
        if i == 1 and n > 1:
            broken(f"the last_remainder bin holds {n} chunks")
        if i == 0 and n:
            broken("bin 0 (top's cell) holds chunks")
    high = max((i for i in in_bins.values() if i >= 2), default=0)
    if dl._high_bin != high:
        broken(f"the highest bin holding a chunk is {high}, not {dl._high_bin} as booked")
    if dl.binblocks >> (NAV // BINBLOCKWIDTH):
        broken(f"binblocks {dl.binblocks:#x} has bits past block {NAV // BINBLOCKWIDTH - 1}")
    if len(fd) != NAV + len(in_bins) or len(bk) != len(fd):
        broken(f"{len(fd) - NAV} chunks have links but {len(in_bins)} are in bins")

    # The heap, chunk by chunk.
    if dl._first is None:
        if head or top is not None:
            broken("chunks exist before the first sbrk")
    else:
        if (dl._first + W) & mask:
            broken(f"the first chunk {dl._first:#x} gives a misaligned payload")
        p = dl._first
        prev_free = False
        prev = None
        seen = 0
        free_bytes = 0
        while p != top:
            s = head.get(p)
            if s is None:
                broken(f"no chunk at {p:#x} (after {prev!r})")
            seen += 1
            size = s & ~PREV_INUSE
            if size < minsize or size & mask:
                broken(f"chunk {p:#x} has size {size}: below MINSIZE or not a multiple of {mask + 1}")
            if bool(s & PREV_INUSE) == prev_free:
                broken(f"chunk {p:#x} has PREV_INUSE {'set' if s & PREV_INUSE else 'clear'} but "
                       f"the chunk before is {'free' if prev_free else 'in use'}")
            if prev_free and foot.get(p) != head[prev] & ~PREV_INUSE:
                broken(f"the foot before {p:#x} says {foot.get(p)!r}, not {head[prev] & ~PREV_INUSE}")
            nxt = p + size
            if nxt not in head:
                broken(f"chunk {p:#x} of {size} bytes is followed by no chunk at {nxt:#x}")
            is_free = not head[nxt] & PREV_INUSE
            if is_free:
                if prev_free:
                    broken(f"free chunks {prev:#x} and {p:#x} are neighbours: not coalesced")
                if p not in in_bins:
                    broken(f"free chunk {p:#x} of {size} bytes is in no bin "
                           f"(it belongs in bin {bin_index(size)})")
                free_bytes += size
            elif p in in_bins:
                broken(f"chunk {p:#x} is in bin {in_bins[p]} but in use")
            prev_free = is_free
            prev = p
            p = nxt
        tsize = head.get(top)
        if tsize is None:
            broken("top is no chunk")
        if not tsize & PREV_INUSE or prev_free:
            broken(f"top {top:#x} follows a free chunk or has PREV_INUSE clear: not coalesced")
        tsize &= ~PREV_INUSE
        if tsize < minsize:
            broken(f"top has {tsize} bytes, below MINSIZE")
        if top - W + tsize != dl.core_top:
            broken(f"top ends at {top - W + tsize:#x} but MORECORE's memory ends at {dl.core_top:#x}")
        if dl.core_top % dl.pagesize:
            broken(f"the end of the sbrk'd memory {dl.core_top:#x} is not on a page")
        if top in in_bins:
            broken("top is in a bin")
        if seen + 1 != len(head):
            broken(f"{len(head)} size words are kept but the heap has {seen + 1} chunks")
        wanted_feet = {b.addr + b.size for b in blocks if b.state == FREE_BLOCK
                       and b.addr != top and b.addr < dl.core_top}
        if set(foot) != wanted_feet:
            broken(f"feet are kept at {sorted(set(foot) ^ wanted_feet)[:4]}, which do (not) follow "
                   "a free chunk")
        if free_bytes != dl._free_bytes:
            broken(f"free chunks add up to {free_bytes} bytes but {dl._free_bytes} are booked")
        if len(in_bins) != sum(1 for b in blocks if b.state == FREE_BLOCK) \
                - 1 - (dl.arena.brk > dl.core_top):
            broken("the bins hold other chunks than the free chunks of the heap")
    if dl.arena.fixed:
        if not dl.arena.base <= dl.core_top <= dl.arena.brk:
            broken(f"MORECORE's end {dl.core_top:#x} is outside the pool")
    elif dl.core_top != dl.arena.brk:
        broken(f"the sbrk'd memory ends at {dl.core_top:#x} but the break is at {dl.arena.brk:#x}")

    # The mmap regions.
    mapped = 0
    for region, (size, payload) in dl._regions.items():
        if region < MMAP_BASE or region % dl.pagesize or size % dl.pagesize:
            broken(f"mmap region {region:#x} of {size} bytes is not on pages")
        if dl._region_of.get(payload) != region:
            broken(f"payload {payload:#x} does not name its region {region:#x}")
        mapped += size
    if mapped != dl.mapped_bytes or len(dl._regions) != dl.n_mmaps:
        broken(f"mmap regions hold {mapped} bytes in {len(dl._regions)} regions but "
               f"{dl.mapped_bytes} in {dl.n_mmaps} are booked")
    if dl.n_mmaps > max(dl.mallopt.n_mmaps_max, 0):
        broken(f"{dl.n_mmaps} mmap regions, more than mmap_max = {dl.mallopt.n_mmaps_max}")
