"""TLSF's measures: its fragmentation probe without a scan of the free
blocks, and the build's row packed through it
(:func:`heapscope.allocators.strategy_measures.probed_row_writer`), for
:class:`heapscope.allocators.tlsf.TLSF` (its ``fragmentation_probe``,
``_probe`` and ``measure_row`` hand these out).
"""

from __future__ import annotations

import struct

from .strategy_measures import probed_row_writer
from .tlsf import FLAG_BITS, PREV_FREE_BIT, SL_INDEX_COUNT

#: the build's row of measures (:func:`row_writer`): no largest_free (the max of
#: the two after it) nor the rotations and walked TLSF never adds to
ROW_FIELDS = ("heap", "live", "in_use", "headers", "free", "top_free", "largest_below_top",
              "visits", "splits", "merges", "grows", "payload")
_ROW = struct.Struct(f"<{len(ROW_FIELDS)}q")


def probe_of(tlsf):
    """The fragmentation probe, its containers bound once (see
    :func:`~heapscope.allocators.strategy_measures.probed_row_writer`); it holds
    the containers of now: a bulk replay's lifetime."""
    s = tlsf
    W = tlsf.word
    size_word = tlsf._size_word
    prev_phys = tlsf._prev_phys
    lists = tlsf._lists
    sl_bitmap = tlsf.sl_bitmap
    size_bits = ~FLAG_BITS

    def probe():
        total = s._free_bytes
        if not total:
            return 0, 0, 0, 0
        top = below = 0
        sentinel = s._sentinel
        if size_word[sentinel] & PREV_FREE_BIT:
            top_block = prev_phys[sentinel]
            top = W + (size_word[top_block] & size_bits)
        else:
            top_block = None
        # the largest blocks other than the top one are in the highest
        # non-empty list that holds one: fls of both bitmaps
        fl_map = s.fl_bitmap
        while fl_map:
            fl = fl_map.bit_length() - 1
            row_map = sl_bitmap[fl]
            while row_map:
                sl = row_map.bit_length() - 1
                for block in lists[fl * SL_INDEX_COUNT + sl]:
                    if block != top_block:
                        size = size_word[block] & size_bits
                        if size > below:
                            below = size
                if below:
                    break
                row_map ^= 1 << sl
            if below:
                below += W
                break
            fl_map ^= 1 << fl
        return total, top if top > below else below, top, below
    return probe


def row_writer(tlsf, rec) -> tuple:
    """``(fields, row)`` of ``TLSF.measure_row``: the probe above and the
    counters TLSF adds to (visits, splits, merges, grows)."""
    return ROW_FIELDS, probed_row_writer(tlsf, rec, _ROW, joins=True)
