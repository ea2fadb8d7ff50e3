"""``ring``: Kruse's rotating free list (LIFO ring from its head).

From Kruse, *Data Structures and Program Design* (1989): the free blocks form a
ring in insertion (LIFO) order, not address order, with boundary tags for
joining neighbours; each search starts first fit at ``head``, which rotates
past the block used last.

Shape (docs/structure.md, "Per kind"): ``free_list``, the ring from ``head``
round; ``head``.
"""

from __future__ import annotations

from ..predict import Generic, hx, plural
from .. import events as ev
from ..inspect_text import addr_list
from ..phrases import at, count
from ..structure_replay import Follower, ReplayError
from . import StructureKind, register


class RotatingRing(Generic):
    """Kruse's rotating first fit: the ring from its head, LIFO order."""

    policy = "Kruse's rotating list"

    def __init__(self, facts) -> None:
        super().__init__(facts)
        p = facts.pointer("search")
        self.head = p["addr"] if p is not None else None

    def _start(self) -> str:
        return (f"Kruse's list searches first fit from its head ({hx(self.head)}), which rotated past "
                f"the block used last time; the ring is in LIFO order, not address order")

    def why_chosen(self) -> str:
        f = self.f
        n = len(f.visits)
        size = f.size_of(f.chosen)
        if n <= 1:
            return f"{self._start()}, and the head itself, {hx(f.chosen)} ({size:,} B), fits {f.need:,} B."
        return (f"{self._start()}: it examined {plural(n, 'block')} ({self._visit_list()}) and took "
                f"{hx(f.chosen)} ({size:,} B), the first big enough for {f.need:,} B.")

    def why_grow(self) -> str:
        f = self.f
        g = f.grow
        return (f"{self._start()}: a whole round ({plural(len(f.visits), 'block')}) found none big enough "
                f"for {f.need:,} B" + (f", so sbrk gives {g.increment:,} B of new memory." if g else "."))

    went_on = "went on round the ring"
    why_not_none_taken = Generic._not_big_enough_either

    def why_not_passed(self, guess: int, size: int) -> str:
        return (f"{hx(guess)} comes after {hx(self.f.chosen)} round the ring from the head ({hx(self.head)}): "
                f"the search stops at the first block that fits" + self._too_small_anyway(guess) + ".")


class RingFollower(Follower):
    """Replayed: ``free_list`` from the head, in ring order; ``head``;
    ``sizes``.  ListInsert puts the block just before the head (Kruse's LIFO
    push; the PointerMove that follows makes it the head), ListRemove unlinks
    it wherever it is, PointerMove 'head' moves the head.  Between the unlink
    of the block at the head and the head's move (mid-step only, with
    ``result(strict=False)``), ``free_list`` starts at the block after it;
    between a push on an empty ring and the head's move onto it, at that block."""

    def __init__(self, before: dict) -> None:
        super().__init__(before)
        ring = list(before["free_list"])
        self.nxt = {a: ring[(i + 1) % len(ring)] for i, a in enumerate(ring)}
        self.prv = {a: ring[i - 1] for i, a in enumerate(ring)}
        self.pointer = before["head"]
        self._off_ring_head = None

    @staticmethod
    def replayable(s: dict, out: dict) -> list[int]:
        out["free_list"] = list(s["free_list"])
        out["head"] = s["head"]
        return out["free_list"]

    def apply(self, e) -> None:
        nxt, prv = self.nxt, self.prv
        if isinstance(e, ev.ListInsert):
            b, head = e.addr, self.pointer
            if b in nxt:
                raise ReplayError(f"{b:#x} is pushed on the ring twice")
            if head is None:
                nxt[b] = prv[b] = b
            else:
                if head not in nxt:
                    raise ReplayError(f"push before the head {head:#x}, which is off the ring")
                last = prv[head]
                nxt[b], prv[b] = head, last
                nxt[last] = prv[head] = b
        elif isinstance(e, ev.ListRemove):
            b = e.addr
            if b not in nxt:
                raise ReplayError(f"{b:#x} is unlinked but is not on the ring")
            after, before = nxt.pop(b), prv.pop(b)
            if after != b:
                nxt[before], prv[after] = after, before
            if b == self.pointer:
                # Kruse unlinks the block at the head, then moves the head:
                # in between (mid-step only) the ring is read from its successor
                self._off_ring_head = (b, after if after != b else None)
        elif isinstance(e, ev.PointerMove) and e.name == "head":
            self.move(e, "the head")

    def result(self, strict: bool) -> dict:
        held = []
        head = start = self.pointer
        if head is None and self.nxt and not strict:
            start = next(iter(self.nxt))    # pushed on an empty ring; the head moves next
        elif head is not None and head not in self.nxt:
            dangling = self._off_ring_head
            if strict or dangling is None or dangling[0] != head:
                raise ReplayError(f"the head {head:#x} is off the ring")
            start = dangling[1] if dangling[1] in self.nxt else next(iter(self.nxt), None)
        if start is not None:
            b = start
            while True:
                held.append(b)
                b = self.nxt[b]
                if b == start or len(held) > len(self.nxt):
                    break
        elif self.nxt and strict:
            raise ReplayError("the head is None but the ring is not empty")
        return self.sized({"free_list": held, "head": head}, held, strict)


@register
class RingKind(StructureKind):
    name = "ring"
    follower = RingFollower
    speaker = RotatingRing
    pointer_keys = {"head": "head"}

    def members(self, s: dict) -> list[int]:
        return list(s["free_list"])

    def where(self, s: dict) -> dict[int, str]:
        return {a: "the free list" for a in s["free_list"]}

    # how it reads: Kruse's ring from its head
    list_sentinel = "base"

    def inspect_lines(self, s: dict, all_items: bool, named: set) -> list[str]:
        ring = s["free_list"]
        return [f"  ring from the head ({count(len(ring), 'block')}): " + addr_list(ring, s["sizes"], all_items),
                "  head -> " + at(s["head"], "NULL")]

    def labelled_lists(self, s: dict, named=()) -> list:
        return [(None, "free list from the head", list(s["free_list"]))]
