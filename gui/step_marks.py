"""What the heap map draws over the cells for one step -- or for the first
events of a step, a micro-step -- worked out from the events alone (no Qt).

The marks follow the events in order, so a micro-step shows exactly what
the step has done so far: the free blocks its search examined, numbered in
search order; where a block was cut (``Split``, ``BuddySplit``); the block
handed out (``Placed``); the block given back and what it joined
(``Released``, ``Coalesce``, ``BuddyMerge``); the bytes the heap grew by
(``Grow``); a request that failed (``GrowFailed``, or the record's failure
at the end of the step); and the blocks the current event names.

Long searches are numbered at both ends: the first :data:`FIRST_NUMBERED`
visits and the last :data:`LAST_NUMBERED` (the block taken among them), and
the map says how many in between it left without a number.  (A small map
numbers fewer: :meth:`StepMarks.renumber`.)
"""

from __future__ import annotations

from dataclasses import dataclass, field

from heapscope.allocators.events import (BuddyMerge, BuddySplit, Coalesce, Grow, GrowFailed, Placed,
                                 Released, Split, Visit)
from heapscope.allocators.explain import event_addresses

#: a search of up to FIRST_NUMBERED + LAST_NUMBERED visits is numbered whole;
#: a longer one gets its first FIRST_NUMBERED and its last LAST_NUMBERED numbers
FIRST_NUMBERED = 20
LAST_NUMBERED = 20


def numbered_visits(n: int, first: int = FIRST_NUMBERED, last: int = LAST_NUMBERED) -> list[int]:
    """Indexes (0-based) of the visits of an n-visit search that get a
    number: all of them up to ``first + last``, else the first ``first`` and
    the last ``last``."""
    if n <= first + last:
        return list(range(n))
    return list(range(first)) + list(range(n - last, n))


@dataclass
class StepMarks:
    """The marks of a step (or of its first events)."""
    #: (addr, size) of every block the search examined, in order (a block
    #: examined twice is there twice)
    visits: list = field(default_factory=list)
    #: indexes into ``visits`` written as numbers (number = index + 1)
    numbered: list = field(default_factory=list)
    #: how many of the first visits are numbered when some are left out
    first: int = FIRST_NUMBERED
    placed: list = field(default_factory=list)
    #: blocks given back, and the blocks they were joined into
    released: list = field(default_factory=list)
    #: addresses where a block was cut in two (the upper part's first byte)
    cuts: list = field(default_factory=list)
    #: (old break, bytes) of each growth of the heap
    grown: list = field(default_factory=list)
    #: bytes the refused sbrk of a failed request asked for (None: nothing failed)
    failed: int | None = None
    #: addresses the current event names (micro-steps; empty for a whole step)
    current: tuple = ()
    #: the current event itself (None for a whole step)
    current_event: object = None

    def renumber(self, most: int) -> None:
        """Number at most ``most`` visits (half at each end of the search)."""
        most = max(2, min(most, FIRST_NUMBERED + LAST_NUMBERED))
        self.first = (most + 1) // 2
        self.numbered = numbered_visits(len(self.visits), self.first, most - self.first)

    @property
    def skipped(self) -> int:
        """Visits left without a number."""
        return len(self.visits) - len(self.numbered)

    def skipped_at(self) -> tuple[int, int] | None:
        """(addr, size) of the first visit left without a number."""
        numbered = set(self.numbered)
        for i, v in enumerate(self.visits):
            if i not in numbered:
                return v
        return None


def step_marks(record, upto: int | None = None) -> StepMarks:
    """The marks of ``record``'s events up to and including event ``upto``
    (None: the whole step)."""
    marks = StepMarks()
    if record is None:
        return marks
    events = record.events or []
    refused = None
    last = len(events) - 1 if upto is None else min(upto, len(events) - 1)
    visits = marks.visits
    for ev in events[:last + 1]:
        kind = type(ev)
        if kind is Visit:                  # the most common by far: a search's looks
            visits.append((ev.addr, ev.size))
        elif kind is Placed:
            marks.placed.append((ev.addr, ev.size))
        elif kind is Released:
            marks.released.append((ev.addr, ev.size))
        elif kind is Coalesce:
            marks.released.append((ev.low_addr, ev.low_size + ev.high_size))
        elif kind is BuddyMerge:
            marks.released.append((min(ev.addr, ev.buddy), 2 << ev.order))
        elif kind is Split:
            marks.cuts.append(max(ev.taken_addr, ev.rest_addr))
        elif kind is BuddySplit:
            marks.cuts.append(max(ev.addr, ev.buddy))
        elif kind is Grow:
            marks.grown.append((ev.old_brk, ev.increment))
        elif kind is GrowFailed:
            refused = ev.increment
    marks.numbered = numbered_visits(len(marks.visits))
    whole = upto is None or last >= len(events) - 1
    # A refused sbrk fails the request only if nothing else served it (TLSF
    # asks for a chunk, then for exactly what it needs).
    if record.failed:
        if refused is not None:
            marks.failed = refused
        elif whole:
            marks.failed = max(record.request, 1)
    if upto is not None and 0 <= last:
        marks.current_event = events[last]
        marks.current = event_addresses(events[last])
    return marks
