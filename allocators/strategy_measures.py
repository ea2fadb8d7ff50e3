"""A strategy's measures: search length, H, the fragmentation probe and the
row of measures the timeline's build packs after every step.

:class:`StrategyMeasures` is one of the parts
:class:`~heapscope.allocators.strategy.Strategy` is made of.  It reads the
books the base keeps (``in_use``, ``header_in_use``, the touched range, the
arena) on the strategy itself: the build's row writer reads them after
every step, where one more object between would cost an attribute read
each.  A policy with a cheaper probe keeps it beside its policy
(``heapscope.allocators.tlsf_measures``) and packs its row with
:func:`probed_row_writer`.
"""

from __future__ import annotations

import struct
from typing import TYPE_CHECKING, Callable

from .events import OpRecord
from .metrics import ROW_FIELDS

if TYPE_CHECKING:
    from .strategy import Strategy


class StrategyMeasures:
    """The measures of a heap and of its last operation (a part of every ``Strategy``)."""

    #: DESIGN.md counts a buddy system's splits in its search length (orders
    #: probed + splits); other strategies count nodes examined only.
    search_counts_splits = False

    def search_length(self, rec: OpRecord | None = None) -> int:
        """Search length of an operation (the last one by default)."""
        rec = rec or self.rec
        return rec.visits + rec.splits if self.search_counts_splits else rec.visits

    @property
    def heap_size(self) -> int:
        """Bytes of the simulated heap: the break minus the base (a whole fixed pool)."""
        return self.arena.size

    @property
    def footprint(self) -> int:
        """H of the measures (DESIGN.md): the heap size in a heap grown by sbrk,
        plus the bytes of any regions mapped apart from it (:meth:`mapped_blocks`);
        in a fixed pool, where the whole pool exists from the start, the
        high-water mark of the pool the strategy has touched: the span of the
        least address range holding every block it has handed out and every
        region it has carved so far.  Blocks the strategy only laid out as
        free (a pool handed to free() as one block) are not touched until a
        request is given part of them.  The timeline's build reads the same
        fields directly after every step (``heapscope.allocators.replay``): keep the two
        in step."""
        if self.arena.fixed:
            return max(0, self.touched_high - self.touched_low)
        return self.arena.size + self.mapped_bytes

    def fragmentation_probe(self) -> tuple[int, int, int, int]:
        """(free bytes F, largest free block, the top block's size or 0, largest
        free block other than the top one), in one pass over the free blocks.

        The top (wilderness) block is the free block at the end of the heap: it
        touches the break, or, in a strategy with an end sentinel (TLSF), the
        sentinel.  Strategies with a cheaper answer override this."""
        total = largest = top = largest_below = 0
        brk = self.arena.brk
        for addr, size in self.free_blocks():
            total += size
            if addr + size == brk:
                top = size
            elif size > largest_below:
                largest_below = size
        largest = max(top, largest_below)
        return total, largest, top, largest_below

    def measure_row(self, rec: OpRecord, probe: Callable | None = None) -> tuple[tuple[str, ...], Callable]:
        """``(fields, row)``: what the timeline's build packs after every step
        (``heapscope.allocators.replay``), ``row(buf, offset, live_bytes, payload)``
        packing one row of ``fields`` (names of ``metrics.ROW_FIELDS``, in
        that order) as little-endian int64s at ``offset`` of ``buf``.

        This default packs every field, read from the fields this base class
        keeps (:attr:`footprint`'s, ``in_use``, ``header_in_use``), the
        policy's :meth:`fragmentation_probe` and the counters of ``rec`` (the
        bulk record).  A policy may pack a cheaper row: the probe worked out
        in place, its containers bound once, ``largest_free`` left out (it is
        the max of ``top_free`` and ``largest_below_top``, as every probe
        gives it), and only the counters it ever adds to (the build checks
        after each block of steps that the others did not move).  Its values
        must be exactly this default's (tests compare every column with
        :func:`~heapscope.allocators.replay.record_row`).  ``probe``: the
        probe the row calls instead of :meth:`fragmentation_probe`, the same
        function looked up once (dlmalloc's method imports it at each call)."""
        probe = probe or self.fragmentation_probe
        pack = _FULL_ROW.pack_into
        if self.arena.fixed:
            def row(buf, off, live_bytes, payload):
                free, largest, top, below = probe()
                pack(buf, off, self.touched_high - self.touched_low, live_bytes, self.in_use,
                     self.header_in_use, free, largest, top, below, rec.visits, rec.splits,
                     rec.merges, rec.rotations, rec.grows, rec.walked, payload)
        else:
            arena = self.arena

            def row(buf, off, live_bytes, payload):
                free, largest, top, below = probe()
                pack(buf, off, arena.brk + self.mapped_bytes, live_bytes, self.in_use,
                     self.header_in_use, free, largest, top, below, rec.visits, rec.splits,
                     rec.merges, rec.rotations, rec.grows, rec.walked, payload)
        return ROW_FIELDS, row


_FULL_ROW = struct.Struct(f"<{len(ROW_FIELDS)}q")


def probed_row_writer(strategy: "Strategy", rec, row: struct.Struct, joins: bool):
    """The timeline build's row writer (``Strategy.measure_row``) for a
    policy whose fragmentation probe is bound once (``strategy._probe()``,
    the very function :meth:`StrategyMeasures.fragmentation_probe` answers with: one
    account of the free blocks, not a second one inline): the heap, the
    books, the probe's free/top/below and the counters the policy adds to,
    visits and grows, and with ``joins`` its splits and merges too (TLSF,
    the buddy system; BSD's buckets never split nor join)."""
    s = strategy
    arena = s.arena
    fixed = arena.fixed
    probe = s._probe()
    pack = row.pack_into
    if joins:
        def write(buf, off, live_bytes, payload):
            free, _, top, below = probe()
            pack(buf, off, s.touched_high - s.touched_low if fixed else arena.brk, live_bytes,
                 s.in_use, s.header_in_use, free, top, below,
                 rec.visits, rec.splits, rec.merges, rec.grows, payload)
    else:
        def write(buf, off, live_bytes, payload):
            free, _, top, below = probe()
            pack(buf, off, s.touched_high - s.touched_low if fixed else arena.brk, live_bytes,
                 s.in_use, s.header_in_use, free, top, below, rec.visits, rec.grows, payload)
    return write

