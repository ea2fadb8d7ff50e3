"""``arena-ring``: the V7/4BSD malloc's ring of every block of the arena.

From the malloc of Seventh Edition Unix (kept in 4BSD): every block, busy or
idle, is on one ring in address order, ended by the one-word ``alloct``; the
search is first fit from the roving ``allocp``, which may rest on a busy
block, joining idle neighbours as it goes.

Shape (docs/structure.md, "Per kind"): ``ring``, ``[[addr, size, state]]`` of
every block in ring order, state ``"free"``, ``"busy"`` or ``"top"`` (last);
``rover``, the block ``allocp`` points at, None at the static ``allocs``;
``top``, ``alloct``.
"""

from __future__ import annotations

from .. import events as ev
from ..inspect_text import LIST_ITEMS
from ..phrases import at, count
from ..structure import StructureMismatch
from ..structure_replay import Follower, ReplayError, hex_or_none
from . import StructureKind, register


class ArenaRingFollower(Follower):
    """Replayed: ``ring`` (every block with its size and state), ``rover``,
    ``top`` and ``sizes``: Coalesce joins two idle neighbours, Split cuts an
    idle block in two idle ones, Placed marks a block busy, Released idle,
    ArenaExtended adds the new idle block and top word (the old top word
    turning idle), PointerMove 'allocp' moves the rover."""

    def __init__(self, before: dict) -> None:
        super().__init__(before)
        self.arena = {a: [size, state] for a, size, state in before["ring"]}
        self.pointer = before["rover"]
        self.top = before["top"]

    @staticmethod
    def replayable(s: dict, out: dict) -> list[int]:
        out["ring"] = [list(b) for b in s["ring"]]
        out["rover"] = s["rover"]
        out["top"] = s["top"]
        return [a for a, _, state in s["ring"] if state == "free"]

    def apply(self, e) -> None:
        arena = self.arena

        def block(a, state, what):
            b = arena.get(a)
            if b is None or b[1] != state:
                raise ReplayError(f"{what} {hex_or_none(a)}, which is not a {state} block of the arena")
            return b

        if isinstance(e, ev.Coalesce):
            low = block(e.low_addr, "free", "joins")
            block(e.high_addr, "free", "joins")
            del arena[e.high_addr]
            low[0] = e.size
        elif isinstance(e, ev.Split):
            block(e.addr, "free", "cuts")
            del arena[e.addr]
            arena[e.taken_addr] = [e.taken_size, "free"]
            arena[e.rest_addr] = [e.rest_size, "free"]
        elif isinstance(e, ev.Placed):
            b = block(e.addr, "free", "places a request in")
            if b[0] != e.size:
                raise ReplayError(f"places {e.size} B in {e.addr:#x}, an idle block of {b[0]} B")
            b[1] = "busy"
        elif isinstance(e, ev.Released):
            block(e.addr, "busy", "frees")[1] = "free"
        elif isinstance(e, ev.PointerMove) and e.name == "allocp":
            self.move(e, "allocp")
        elif isinstance(e, ev.ArenaExtended):
            if e.old_top is not None:
                if e.old_top != self.top:
                    raise ReplayError(f"the arena grows after {e.old_top:#x}, but its top is {hex_or_none(self.top)}")
                arena[e.old_top][1] = "free"
            elif self.top is not None:
                raise ReplayError("the arena grows from the static top, but it has a top word in the heap")
            arena[e.addr] = [e.size, "free"]
            arena[e.top] = [e.top_size, "top"]
            self.top = e.top

    def result(self, strict: bool) -> dict:
        ring = [[a, *self.arena[a]] for a in sorted(self.arena)]
        return {"ring": ring, "rover": self.pointer, "top": self.top,
                "sizes": {a: size for a, size, state in ring if state == "free"}}


@register
class ArenaRingKind(StructureKind):
    name = "arena-ring"
    follower = ArenaRingFollower
    busy_pointer = True
    pointer_keys = {"allocp": "rover"}

    def members(self, s: dict) -> list[int]:
        return [a for a, _, state in s["ring"] if state == "free"]

    def where(self, s: dict) -> dict[int, str]:
        return {a: "the arena (idle)" for a, _, state in s["ring"] if state == "free"}

    def check(self, s: dict) -> None:
        ring = s["ring"]
        for (a, size, _), (b, _, _) in zip(ring, ring[1:]):
            if a + size != b:
                raise StructureMismatch(f"the arena ring is not contiguous: {a:#x}+{size} is followed by {b:#x}")
        if ring and (ring[-1][2] != "top" or ring[-1][0] != s["top"]):
            raise StructureMismatch("the arena ring does not end with its top word")
        if any(state not in ("free", "busy", "top") for _, _, state in ring) or \
                sum(state == "top" for _, _, state in ring) > 1:
            raise StructureMismatch("an arena block has an unknown state, or there are two tops")
        if s["rover"] is not None and s["rover"] not in {a for a, _, _ in ring}:
            raise StructureMismatch(f"allocp {s['rover']:#x} is not a block of the arena")

    def inspect_lines(self, s: dict, all_items: bool, named: set) -> list[str]:
        """V7's ring of all blocks, busy, idle and the top, with allocp;
        around the named blocks unless ``all_items``."""
        ring = s["ring"]
        free = sum(1 for b in ring if b[2] == "free")
        out = [f"  ring from allocs (static), {count(len(ring), 'block')} in the heap, {free} idle:"]
        if all_items or len(ring) <= LIST_ITEMS:
            keep = set(range(len(ring)))
        else:
            # the ends, allocp, and the blocks the step names if they are few
            named_at = [i for i, b in enumerate(ring) if b[0] in named]
            keep = {0, 1, len(ring) - 2, len(ring) - 1}
            keep |= {i for i, b in enumerate(ring) if b[0] == s["rover"]}
            if len(named_at) <= LIST_ITEMS:
                keep |= set(named_at)
        line, skipped = [], 0
        for i, (a, size, state) in enumerate(ring):
            if i not in keep:
                skipped += 1
                continue
            if skipped:
                line.append(f"... {skipped} more")
                skipped = 0
            mark = {"busy": "busy", "free": "idle", "top": "top"}[state]
            line.append(f"{a:#x} ({size} B {mark})")
        out.append("  " + " -> ".join(line) + (" -> allocs" if ring else "allocs[0] <-> allocs[1]"))
        out.append("  allocp -> " + at(s["rover"], "&allocs[0]") + ", alloct -> " + at(s["top"], "&allocs[1]"))
        return out
