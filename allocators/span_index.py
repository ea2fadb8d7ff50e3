"""Disjoint address intervals, for the guard's overlap test: which live
block a new block would overlap (allocators/user.py checks every block a
user strategy hands out against the blocks the program still holds).

Live intervals are disjoint, so a new interval ``[b, e)`` overlaps one only
if it overlaps the live interval starting last at or before ``b``, or the
one starting first after it: one ``bisect`` in the sorted starts finds both.
The starts are a sorted list of ints and the ends a dict by start (no Python
object per interval).  Removing an interval only deletes its end: its start
stays in the list as a *tombstone*, skipped by the lookups, until a block is
placed at that very address again (an allocator reusing a freed block, the
commonest case, then costs no insertion either) or the tombstones outnumber
the live intervals and the list is compacted.  So a free costs a dict
deletion and a malloc one bisect, where a sorted list kept exact cost two
bisects and two moves of the list's tail per malloc and free (on 20 000 live
blocks, 160 KB moved an operation, more than a fast allocator's own step).

A lookup that walks past many tombstones cuts them out of the list, so each
tombstone is walked past a bounded number of times.
"""

from __future__ import annotations

from bisect import bisect_right

#: tombstones walked past in one lookup before the lookup cuts them out
CUT_AFTER = 8
#: the starts are compacted once the tombstones outnumber the live intervals by this many
COMPACT_PAST = 64


class SpanIndex:
    """Disjoint intervals ``[start, end)`` of ints, ``start < end``."""

    __slots__ = ("starts", "end_of", "dead")

    def __init__(self) -> None:
        self.starts: list[int] = []        # sorted: every live start, and tombstones
        self.end_of: dict[int, int] = {}   # live start -> its end
        self.dead = 0                      # tombstones in starts

    def __len__(self) -> int:
        return len(self.end_of)

    def place(self, start: int, end: int, add: bool = True) -> int | None:
        """The start of a live interval that ``[start, end)`` overlaps (shares
        a byte with: ``s < end and start < e``), the one at or before
        ``start`` first; None if there is none, and then, ``add``, the
        interval is added (``start < end``)."""
        starts, end_of = self.starts, self.end_of
        i = bisect_right(starts, start)
        j = i - 1
        while j >= 0:                          # the live interval starting last at or before start
            s = starts[j]
            e = end_of.get(s)
            if e is not None:
                if start < e and s < end:
                    return s
                break
            j -= 1
        if i - j > CUT_AFTER + 1:
            del starts[j + 1:i - 1]            # tombstones, keeping the one at starts[i - 1]
            self.dead -= i - 2 - j
            i = j + 2
        k = i
        n = len(starts)
        while k < n:                           # the live interval starting first after start
            s = starts[k]
            if s >= end:
                break
            if s in end_of:
                return s
            k += 1
        if k - i > CUT_AFTER:
            del starts[i:k]
            self.dead -= k - i
        if add:
            if i and starts[i - 1] == start:   # a tombstone at this very address: live again
                self.dead -= 1
            else:
                starts.insert(i, start)
            end_of[start] = end
        return None

    def remove(self, start: int) -> None:
        """Remove the interval that starts at ``start`` (KeyError if none)."""
        del self.end_of[start]
        self.dead += 1
        if self.dead > len(self.end_of) + COMPACT_PAST:
            self.compact()

    def compact(self) -> None:
        """Drop every tombstone from the starts, in place (callers may hold
        the list: allocators/checked_calls.py reads it directly)."""
        end_of = self.end_of
        self.starts[:] = [s for s in self.starts if s in end_of]
        self.dead = 0

    def intervals(self) -> list[tuple[int, int]]:
        """Every live interval, in address order."""
        return sorted(self.end_of.items())


__all__ = ["COMPACT_PAST", "CUT_AFTER", "SpanIndex"]
