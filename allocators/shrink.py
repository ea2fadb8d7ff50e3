"""Giving memory back at the top of the heap, the way the seeds' page
allocators do it: ``sbrk`` with a negative increment (phkmalloc's
``brk(pf->end)``, GNU malloc's ``(*__morecore) (-bytes)``).

The measures keep their maximum-heap meaning (Sarena, waste and Johnstone &
Wilson #3 and #4 take the largest H over the steps; ``Arena.peak`` keeps the
highest break).  In a fixed pool there is no break to lower: the bytes go
back to the part of the pool not handed out yet, as a morecore over a fixed
region would take them, and a Note says so.
"""

from __future__ import annotations

from .events import Note, Shrink


def give_back(strategy, nbytes: int) -> None:
    """Give the top ``nbytes`` of what ``strategy`` has taken with
    ``_take_core`` back, and record a :class:`Shrink` event."""
    old = strategy.core_top
    if strategy.arena.fixed:
        strategy._event(Note(f"{nbytes} bytes at {old - nbytes:#x} go back to the pool"))
    else:
        strategy.arena.shrink(nbytes)
    strategy.core_top = old - nbytes
    strategy._event(Shrink(old, nbytes))
