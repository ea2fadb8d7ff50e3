"""The heap at the shown step -- its blocks as columns and the policy's
pointers -- kept up to date from each step's events instead of a walk of
the whole heap (Qt-free; the window's show model keeps one per timeline).

:class:`HeapTracker` keeps a :class:`~heapscope.allocators.heap_edits.TrackedHeap`
and, for a step forward, edits only the rows the step's events name (each
event type's own ``edit``, :mod:`heapscope.allocators.heap_edits`); a step
back undoes the last edit.  A seek, a jump, or a step whose events do not add
up rebuilds from the walk; a step back with no edit to undo (after a jump)
walks a few steps further back and edits the steps from there in
(:func:`seek_tracked`), so only one step back in :data:`BACK_WALK_AHEAD`
walks.

After the events, the block of the step's result (``rec.payload``) is
put as ``strategy.live`` books it, which covers a realloc that kept its
block and only changed the size asked for (``Strategy._rebook``, no event).

A step must then add up to what the strategy keeps anyway: the number of
live blocks, their bytes (A), their header bytes, the free bytes
(``fragmentation_probe()``, O(1) for every built-in policy), the break, and
every pointer at the start of a block.  A step that does not (a user
strategy recording no events; an event a policy left out) is rebuilt from
the walk and counted in :attr:`HeapTracker.rebuilds_after_bad_steps`.
So is a step holding an event of a type with no ``edit`` that does not say
``changes_blocks = False`` (``allocators/events.py``).
``tests/gui/test_heap_tracker.py`` compares the tracked heap with the walk
after every step of random programs, for every registered strategy, and
through the window's model; ``tests/test_heap_edits.py`` after every event.
"""

from __future__ import annotations

from collections import deque
from typing import Callable

import numpy as np

from .block_list import STATE_FREE, STATE_META, top_of
from .heap_edits import BlockEditor, Inconsistent, Totals, TrackedHeap, splice
from .replay import BACK_STEP_MOVE


#: a forward move of at most this many steps is replayed one step at a time
#: (each with its events) and edited in; a longer one rebuilds from the walk
STEPWISE_MAX = 64
#: ... unless the heap is small: a move of n > 1 steps walks instead when the
#: heap has fewer than this many blocks per step.  Editing a step in (its
#: replay with events, then the edit) costs what walking 70-165 blocks does
#: (next fit, TLSF, buddy, splay, dlmalloc on Vo's workload and the default
#: trace, ~600-800 blocks); a walk also repaints the whole map, so the line
#: sits below the cheapest ratio.  Playing 40 steps a frame on the default
#: trace then walks 600-800 blocks per row instead of editing 40 steps in.
WALK_BLOCKS_PER_STEP = 64
#: steps back that can be undone without a walk
UNDO_STEPS = 4096
#: a step back the tracker cannot undo (after a jump) walks the heap this many
#: steps further back and edits the steps up to the shown one in, so that
#: the next steps back are undone (one walk per this many steps, not one
#: each); the timeline's seek back there is still short enough to count as
#: stepping back, and keeps copies for the steps back that follow
BACK_WALK_AHEAD = BACK_STEP_MOVE - 1


def strategy_totals(strategy) -> Totals:
    """The strategy's own books, for the heap alone: blocks it mapped apart
    from the heap (dlmalloc's mmapped chunks) are live but not in the walk."""
    t = Totals(len(strategy.live), strategy.in_use, strategy.header_in_use,
               strategy.fragmentation_probe()[0])
    if getattr(strategy, "mapped_bytes", 0):
        for b in strategy.mapped_blocks():
            t.used -= 1
            t.used_bytes -= b.size
            t.header_bytes -= b.header
    return t


# ----------------------------------------------------------------- tracker
class HeapTracker:
    """One timeline's heap at one position, edited step by step.

    :meth:`forward` applies one step's record (the strategy standing just
    after it); :meth:`back` undoes the last one; :meth:`heap_at` gives the
    heap at a position, rebuilt from the walk when the tracker is not there.
    """

    def __init__(self) -> None:
        self.heap: TrackedHeap | None = None
        self.position: int | None = None
        self._totals: Totals | None = None
        # (position after the step, its undo splices, brk, pointers and totals
        # before it, the spans it changed)
        self._undo: deque = deque(maxlen=UNDO_STEPS)
        #: how the heaps were made (tests and the benchmark read them)
        self.walks = 0
        self.edits = 0
        self.undos = 0
        self.rebuilds_after_bad_steps = 0
        #: why the last bad step was refused
        self.last_refusal = ""

    def invalidate(self) -> None:
        self.heap = None
        self.position = None
        self._totals = None
        self._undo.clear()

    def rebuild(self, strategy, position: int, pointer_dicts) -> TrackedHeap:
        """The heap from a full walk of ``strategy`` (at ``position``)."""
        heap = TrackedHeap.walk(strategy, pointer_dicts)
        self.walks += 1
        self.invalidate()
        self.heap, self.position = heap, position
        self._totals = Totals.of_blocks(heap.blocks)
        return heap

    def walk_is_cheaper(self, steps: int) -> bool:
        """Whether a move forward by ``steps`` (more than one) costs less as a
        plain seek and a walk than edited in step by step: a small heap
        (:data:`WALK_BLOCKS_PER_STEP`).  One step is always edited in (its
        events animate it, and it can be undone)."""
        return (steps > 1 and self.heap is not None
                and len(self.heap.blocks.addr) < WALK_BLOCKS_PER_STEP * steps)

    def heap_at(self, strategy, position: int, pointer_dicts: Callable[[], list]) -> TrackedHeap:
        """The heap at ``position`` (the strategy's); ``pointer_dicts()``
        gives ``structure()["pointers"]`` when it must be rebuilt."""
        if self.heap is not None and self.position == position:
            return self.heap
        return self.rebuild(strategy, position, pointer_dicts())

    def forward(self, strategy, record, position: int) -> bool:
        """Apply the step that led to ``position`` (``strategy`` stands just
        after it, ``record`` is its record with events).  False (and the
        tracker forgets its heap) when it cannot."""
        if self.heap is None or self.position != position - 1 or record is None or record.events is None:
            self.invalidate()
            return False
        before = self.heap
        try:
            editor = BlockEditor(before, strategy.live)
            editor.apply_all(record.events)
            editor.settle(record, strategy.arena.brk)
            want = strategy_totals(strategy)
            totals = self._totals.plus(editor.delta())      # pending bytes counted nowhere yet
            pending = editor.pending_bytes()
            if pending:
                if totals.free_bytes + pending == want.free_bytes:
                    editor.resolve_pending(lambda row: STATE_FREE)
                    totals.free_bytes += pending
                elif totals.free_bytes == want.free_bytes:
                    editor.resolve_pending(lambda row: STATE_META)
                else:
                    raise Inconsistent(f"{pending} new bytes are neither free nor meta")
            after, pieces, undo = editor.finish(before.serial)
            self._check(strategy, after, totals, want)
        except Inconsistent as exc:
            self.last_refusal = f"step {position}: {exc}"
            self.rebuilds_after_bad_steps += 1
            self.invalidate()
            return False
        self._undo.append((position, undo, before.blocks.brk, before.pointers, self._totals, after.spans))
        self.heap, self.position, self._totals = after, position, totals
        self.edits += 1
        return True

    @staticmethod
    def _check(strategy, heap: TrackedHeap, totals: Totals, want: Totals) -> None:
        if totals != want:
            raise Inconsistent(f"the edited heap has {totals}, the strategy {want}")
        b = heap.blocks
        if b.brk != strategy.arena.brk:
            raise Inconsistent(f"the edited heap ends at {b.brk:#x}, the break is at {strategy.arena.brk:#x}")
        n = len(b)
        if n:
            end = b.addr[-1] + b.size[-1]
            if end != b.brk or np.any(b.addr[1:] != b.addr[:-1] + b.size[:-1]):
                raise Inconsistent("the edited blocks do not tile the heap")
        for p in heap.pointers:
            if p.addr is not None:
                i = b.index_at(p.addr)
                if i < 0 or b.addr[i] != p.addr:
                    raise Inconsistent(f"pointer {p.name} at {p.addr:#x} is not at a block")

    def can_undo(self, position: int) -> bool:
        """Whether the step to ``position + 1`` can be undone from here."""
        return bool(self._undo) and self.position == position + 1 and self._undo[-1][0] == position + 1

    def back(self, position: int) -> bool:
        """Undo the last step, to ``position``; False if it cannot."""
        if not self.can_undo(position):
            self.invalidate()
            return False
        _, undo, brk, pointers, totals, spans = self._undo.pop()
        self.heap = TrackedHeap(splice(self.heap.blocks, undo, brk, top_of([p._asdict() for p in pointers])),
                                pointers, self.heap.serial, spans)
        self.position, self._totals = position, totals
        self.undos += 1
        return True

    def before(self) -> TrackedHeap | None:
        """The heap before the step that led here, if the tracker edited it
        in (None otherwise: ask the timeline)."""
        if self.heap is None or not self._undo or self._undo[-1][0] != self.position:
            return None
        _, undo, brk, pointers, _, spans = self._undo[-1]
        return TrackedHeap(splice(self.heap.blocks, undo, brk, top_of([p._asdict() for p in pointers])),
                           pointers, self.heap.serial, spans)


def seek_tracked(timeline, tracker: HeapTracker, position: int) -> None:
    """Move ``timeline`` to ``position`` and keep ``tracker`` there: a short
    move forward one step at a time (each step replayed with its events and
    edited in), one step back by undoing the last edit, anything else by a
    plain seek (the tracker then rebuilds from the walk when asked).

    A step back that cannot be undone (the tracker walked the heap after a
    jump) walks the heap :data:`BACK_WALK_AHEAD` steps further back and edits
    the steps from there in, one at a time, as a short move forward: the
    next steps back are then undone, where each would have walked."""
    start = timeline.position
    if tracker.position == start and tracker.heap is not None:
        if 0 < position - start <= STEPWISE_MAX and not tracker.walk_is_cheaper(position - start):
            _edit_forward(timeline, tracker, start, position)
            return
        if position == start - 1:
            if tracker.can_undo(position):
                timeline.seek(position)
                tracker.back(position)
                return
            if position > 0:
                low = max(0, position - BACK_WALK_AHEAD)
                timeline.seek(low)
                tracker.rebuild(timeline.strategy, low, timeline.strategy.structure()["pointers"])
                _edit_forward(timeline, tracker, low, position)
                return
    if position != start:
        tracker.invalidate()
    timeline.seek(position)


def _edit_forward(timeline, tracker: HeapTracker, start: int, position: int) -> None:
    """Replay the steps after ``start`` up to ``position`` one at a time, each
    with its events, and edit them in (a plain seek if one does not fit)."""
    for t in range(start + 1, position + 1):
        timeline.seek(t)
        if not tracker.forward(timeline.strategy, timeline.last_record, t):
            timeline.seek(position)
            return
