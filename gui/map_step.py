"""The step a heap map shows, and the heap it draws for it.

:class:`DrawnStep` holds the heap after the step, the step's record and the
heap before it (or a function giving it, asked only for a micro-step), and
gives the heap at one of the step's events: the heap before the step with
the events so far applied (:func:`heapscope.allocators.heap_edits.apply_events`), made once
per event and step.
"""

from __future__ import annotations

from . import block_facts, heap_cells
from heapscope.allocators.heap_edits import Inconsistent, TrackedHeap, apply_events


class DrawnStep:
    """The heap after a step (``heap``), the step's ``record`` and the heap
    before it (``before``: a TrackedHeap, a function giving one, or None).
    ``ids_source()`` gives {payload: trace id} and ``places_source()`` {free
    block: where the structure keeps it}, each asked only when a hover
    needs it."""

    def __init__(self, heap: TrackedHeap | None = None, record=None, before=None,
                 ids_source=None, places_source=None) -> None:
        self.heap = heap if heap is not None else TrackedHeap(heap_cells.block_arrays([], 0), ())
        self.record = record
        self._before = before
        self._micro: dict[int, TrackedHeap] = {}
        self._ids_source = ids_source
        self._ids: dict | None = None
        self.places_source = places_source

    def describe(self, blocks, address: int) -> str:
        """What is at ``address`` of ``blocks`` (this step's heap or one of
        its micro-steps), in words (the structure view's words, :mod:`heapscope.gui.block_facts`)."""
        if address is None or address < 0:
            return " "
        if self._ids is None:
            self._ids = self._ids_source() if self._ids_source else {}
        return block_facts.describe_address(blocks, address, self._ids, self.places_source)

    def is_micro(self, index: int | None) -> bool:
        """Event ``index`` of this step is a micro-step (the step has events)."""
        return bool(index is not None and self.record is not None and self.record.events)

    def before(self) -> TrackedHeap | None:
        """The heap before the step (asked of the function once)."""
        before = self._before
        if callable(before):
            before = self._before = before()
        return before

    def heap_at(self, index: int | None) -> TrackedHeap:
        """The heap after the step's events up to ``index`` (None: the whole step)."""
        if not self.is_micro(index):
            return self.heap
        heap = self._micro.get(index)
        if heap is None:
            before = self.before()
            events = self.record.events or []
            if before is None or index >= len(events) - 1:
                heap = self.heap
            else:
                try:
                    heap = apply_events(before, events[:index + 1], after=self.heap)
                except Inconsistent:
                    heap = self.heap
            self._micro[index] = heap
        return heap

    def heap_end(self, index: int | None) -> int:
        """Bytes the map lays out at event ``index``: the break after the
        step, or before it when the step's events shrink the heap."""
        end = self.heap.blocks.brk
        if self.is_micro(index):
            before = self.before()
            if before is not None:
                end = max(end, before.blocks.brk)
        return end
