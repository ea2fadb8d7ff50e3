"""dlmalloc's fragmentation probe without a walk of the heap: its running
total of binned bytes, the front of the highest non-empty bin, the last
remainder and top, for :class:`heapscope.allocators.dlmalloc.Dlmalloc` (its
``fragmentation_probe``), and the build's row of measures packed through it
(:func:`row_writer`, ``Dlmalloc.measure_row``).
"""

from __future__ import annotations

import struct

from .dlmalloc import LR_BIN, PREV_INUSE

#: the build's row of measures (``Dlmalloc.measure_row``): no largest_free
#: (the max of the two after it), and of the counters all but the rotations,
#: which dlmalloc never adds to
ROW_FIELDS = ("heap", "live", "in_use", "headers", "free", "top_free", "largest_below_top",
              "visits", "splits", "merges", "grows", "walked", "payload")
_ROW = struct.Struct(f"<{len(ROW_FIELDS)}q")


def largest_binned(dl) -> int:
    """Largest chunk in a bin: the front chunk of the highest non-empty
    bin (large bins are sorted, largest first; small bins hold one size),
    which the policy books as it files and unlinks (``_high_bin``)."""
    i = dl._high_bin
    return dl._head[dl._fd[~i]] & ~PREV_INUSE if i else 0


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


def row_writer(dl, rec):
    """``write(buf, off, live_bytes, payload)``, packing the build's row of
    :data:`ROW_FIELDS` after a step: :func:`fragmentation_probe` worked out
    in place, on the heap's containers bound once (they live as long as the
    heap), with the counters of ``rec`` the policy adds to."""
    s = dl
    arena = dl.arena
    fixed = arena.fixed
    fd, head = dl._fd, dl._head
    pack = _ROW.pack_into

    def write(buf, off, live_bytes, payload):
        i = s._high_bin
        below = head[fd[~i]] & ~PREV_INUSE if i else 0
        lr = fd[LR_BIN]
        if lr != LR_BIN:
            lr_size = head[lr] & ~PREV_INUSE
            if lr_size > below:
                below = lr_size
        core_top = s.core_top
        top = s.top
        top = 0 if top is None else core_top - top
        total = s._free_bytes + top
        tail = arena.brk - core_top
        if tail > 0:
            total += tail
            if top > below:
                below = top
            top = tail
        pack(buf, off, s.touched_high - s.touched_low if fixed else arena.brk + s.mapped_bytes,
             live_bytes, s.in_use, s.header_in_use, total, top, below,
             rec.visits, rec.splits, rec.merges, rec.grows, rec.walked, payload)
    return write
