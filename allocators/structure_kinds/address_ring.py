"""``address-ring``: K&R's free list, a ring in address order (next fit, first fit).

From Kernighan & Ritchie, *The C Programming Language* 2nd ed., 8.7: the free
blocks form a ring after the ``base`` sentinel, kept in increasing address
order so that ``free`` can join neighbours; next fit starts each search at
``freep`` (the rover), first fit at ``base``.

Shape (docs/structure.md, "Per kind"): ``free_list``, the blocks in ring order
after ``base`` (address order); ``rover``, the block ``freep`` points at, None
at ``base``.
"""

from __future__ import annotations

from ..predict import Generic, hx, plural
from .. import events as ev
from ..inspect_text import addr_list
from ..phrases import at, count
from ..structure import StructureMismatch
from ..structure_replay import Follower, ReplayError
from . import StructureKind, register


class AddressRing(Generic):
    """K&R 8.7 next fit (the rover) and first fit (from K&R's base)."""

    def __init__(self, facts) -> None:
        super().__init__(facts)
        p = facts.pointer("search")
        self.rover = p["addr"] if p is not None else None
        self.next_fit = p is not None and p.get("name") == "rover"
        self.policy = "next fit" if self.next_fit else "first fit"

    def _start(self) -> str:
        if self.next_fit:
            return (f"next fit starts its search just after the rover (freep = {hx(self.rover)})"
                    if self.rover is not None else
                    "next fit's rover is at base, so this search starts from the lowest block")
        return "first fit searches from the start of the list (the lowest address) every time"

    def why_chosen(self) -> str:
        f = self.f
        n = len(f.visits)
        head = self._start()
        size = f.size_of(f.chosen)
        if n <= 1:
            return f"{head}, and the first block it meets, {hx(f.chosen)} ({size:,} B), fits {f.need:,} B."
        return (f"{head} and takes the first block that fits: it examined {plural(n, 'block')} "
                f"({self._visit_list()}); the first big enough for {f.need:,} B was "
                f"{hx(f.chosen)} ({size:,} B).")

    def why_grow(self) -> str:
        f = self.f
        n = len(f.visits)
        largest = max((s for _, s in f.free_blocks()), default=0)
        text = (f"{self._start()}, and went all the way round the ring: {plural(n, 'block')} examined, "
                f"none big enough for {f.need:,} B" + (f" (the largest was {largest:,} B)" if largest else ""))
        g = f.grow
        return text + (f", so morecore asks sbrk for {g.increment:,} B." if g is not None else ".")

    why_not_none_taken = Generic._not_big_enough_either

    def why_not_passed(self, guess: int, size: int) -> str:
        f = self.f
        if not self.next_fit:
            return (f"{hx(guess)} lies above {hx(f.chosen)}: first fit takes the first block that fits "
                    f"from the start of the list" + self._too_small_anyway(guess) + ".")
        rover = self.rover if self.rover is not None else -1
        if guess <= rover < f.chosen:
            return (f"next fit starts at the rover ({hx(self.rover)}), not at the start of the list: "
                    f"{hx(guess)} lies below the rover, so this search reaches it only after wrapping "
                    f"round, and it stopped at {hx(f.chosen)} first" + self._too_small_anyway(guess) + ".")
        return (f"{hx(guess)} comes after {hx(f.chosen)} on the ring from the rover: the search stops at "
                f"the first block that fits" + self._too_small_anyway(guess) + ".")


class AddressRingFollower(Follower):
    """Replayed: ``free_list`` (address order), ``rover``, ``sizes``.
    ListInsert links a block at its address place, ListRemove unlinks it,
    PointerMove 'rover' moves the rover."""

    def __init__(self, before: dict) -> None:
        super().__init__(before)
        self.members = set(before["free_list"])
        self.pointer = before["rover"]

    @staticmethod
    def replayable(s: dict, out: dict) -> list[int]:
        out["free_list"] = list(s["free_list"])
        out["rover"] = s["rover"]
        return out["free_list"]

    def apply(self, e) -> None:
        if isinstance(e, ev.ListInsert):
            if e.addr in self.members:
                raise ReplayError(f"{e.addr:#x} is linked into the ring twice")
            self.members.add(e.addr)
        elif isinstance(e, ev.ListRemove):
            if e.addr not in self.members:
                raise ReplayError(f"{e.addr:#x} is unlinked but is not on the ring")
            self.members.discard(e.addr)
        elif isinstance(e, ev.PointerMove) and e.name == "rover":
            self.move(e, "the rover")

    def result(self, strict: bool) -> dict:
        ring = sorted(self.members)
        return self.sized({"free_list": ring, "rover": self.pointer}, ring, strict)


@register
class AddressRingKind(StructureKind):
    name = "address-ring"
    follower = AddressRingFollower
    speaker = AddressRing
    pointer_keys = {"rover": "rover"}

    def members(self, s: dict) -> list[int]:
        return list(s["free_list"])

    def where(self, s: dict) -> dict[int, str]:
        return {a: "the free list" for a in s["free_list"]}

    def check(self, s: dict) -> None:
        ring = s["free_list"]
        if any(a >= b for a, b in zip(ring, ring[1:])):
            raise StructureMismatch(f"the address-ordered ring is out of order: {ring[:8]}")
        if s["rover"] is not None and s["rover"] not in ring:
            raise StructureMismatch(f"the rover {s['rover']:#x} is not on the ring")

    # how it reads: the ring after K&R's base, and next fit's rover (freep)
    list_sentinel = "base"

    def inspect_lines(self, s: dict, all_items: bool, named: set) -> list[str]:
        ring = s["free_list"]
        out = [f"  free list after base, in address order ({count(len(ring), 'block')}): "
               + addr_list(ring, s["sizes"], all_items)]
        if any(p["name"] == "rover" for p in s["pointers"]):
            out.append("  rover freep -> " + at(s["rover"], "&base"))
        return out

    def labelled_lists(self, s: dict, named=()) -> list:
        return [(None, "free list in address order, from base", list(s["free_list"]))]
