"""What one step did to a circular free list, read from its events.

Both list rings -- K&R's address-ordered ring (next fit, first fit; K&R 8.7)
and Kruse's rotating LIFO ring -- are changed by the same few events:
:class:`~heapscope.allocators.events.Visit` (a node examined, in order),
:class:`~heapscope.allocators.events.Split` (the tail or upper part of a node handed
out, the rest stays on the list), :class:`~heapscope.allocators.events.Placed` of a
block that is no longer on the list (unlinked whole: an exact fit),
:class:`~heapscope.allocators.events.Released` and
:class:`~heapscope.allocators.events.Coalesce` (a freed block linked in, or joined to
its free neighbours), :class:`~heapscope.allocators.events.Grow` (new memory from
sbrk, handed to free), ListInsert / ListRemove and PointerMove.

:func:`read_step` turns them, with the structure after the step, into marks
per block address: the visit numbers, a role that picks the drawing's style,
a short note, and the *ghosts* -- blocks the step took off the list, drawn
where they were so the student sees what left.  Pure Python, no Qt.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from heapscope.allocators import events as ev
from .canvas import hex_addr, size_text

#: roles, strongest first: the style of a card is its strongest role
ROLES = ("unlinked", "absorbed", "split", "joined", "inserted", "grown", "examined")


@dataclass
class Ghost:
    """A block that was on the list before the step and is not after it."""
    addr: int
    size: int
    role: str               # "unlinked" (handed out whole) or "absorbed" (joined into another)
    into: int | None = None  # the block it was joined into


@dataclass
class RingStep:
    """The marks of one step on a ring."""
    # A long search is 10 000 visits or more: kept as flat lists and dicts of
    # ints (no tuple or list per visit), cheap to build and to free.
    visits: list[int] = field(default_factory=list)                 # addresses examined, in order
    first: dict[int, int] = field(default_factory=dict)             # addr -> its first visit number (1-based)
    again: dict[int, list[int]] = field(default_factory=dict)       # addr -> its later visit numbers
    fits: dict[int, bool] = field(default_factory=dict)            # addr -> its last visit's verdict
    #: blocks a free walked past to the freed block's place (Visit.place)
    placing: set[int] = field(default_factory=set)
    roles: dict[int, set[str]] = field(default_factory=dict)
    notes: dict[int, list[str]] = field(default_factory=dict)
    ghosts: list[Ghost] = field(default_factory=list)
    pointer_before: int | None = None
    pointer_moved: bool = False
    grow_failed: int | None = None

    def role(self, addr: int) -> str:
        """The strongest role of ``addr`` ('' when the step did not touch it)."""
        mine = self.roles.get(addr)
        if not mine:
            return "examined" if addr in self.first else ""
        return next(r for r in ROLES if r in mine)

    def numbers(self, addr: int) -> list[int]:
        """The visit numbers of ``addr`` (1-based, in order; [] if not examined)."""
        if addr not in self.first:
            return []
        return [self.first[addr]] + self.again.get(addr, [])

    def changed(self) -> list[int]:
        """Blocks the step did more to than examine them."""
        return list(self.roles)

    def note(self, addr: int) -> str:
        """What the step did to ``addr``, in a few words ('' if nothing)."""
        notes = self.notes.get(addr)
        if notes:
            return "; ".join(notes)
        if addr in self.placing:
            # a free's walk to the freed block's address (K&R 8.7 free()),
            # not a search for room: the explain panel's words
            return "the freed block goes right after it" if self.fits.get(addr) else "walked past"
        if addr in self.first:
            return "big enough" if self.fits.get(addr) else "too small"
        return ""

    def mark(self, addr: int, role: str, note: str | None = None) -> None:
        self.roles.setdefault(addr, set()).add(role)
        if note:
            notes = self.notes.setdefault(addr, [])
            if note not in notes:
                notes.append(note)


def read_step(explained, on_list: set[int], sizes: dict, pointer_name: str,
              lifo: bool) -> RingStep:
    """The marks of a step from its explained events (or bare events).

    ``on_list``: addresses on the list after the step; ``sizes``: their
    sizes; ``pointer_name``: the PointerMove name of the search pointer
    ('rover' or 'head'); ``lifo``: freed blocks are pushed at the head
    (Kruse) rather than linked in at their address (K&R).
    """
    out = RingStep()
    placed: list[ev.Placed] = []
    split_taken: set[int] = set()
    released: int | None = None
    grown: tuple[int, int] | None = None
    joined_into: dict[int, int] = {}     # high -> low, per Coalesce
    removed: list[ev.ListRemove] = []    # unlinks, in order
    was_on_list: set[int] = set()        # blocks a Coalesce or ListRemove shows were on the list
    # A long search is thousands of Visits: they take the short path.
    Visit = ev.Visit
    visits, first, again, fits = out.visits, out.first, out.again, out.fits
    for item in explained:
        e = getattr(item, "event", item)
        if type(e) is Visit:
            a = e.addr
            visits.append(a)
            if a in first:
                again.setdefault(a, []).append(len(visits))
            else:
                first[a] = len(visits)
            fits[a] = e.fits
            if e.place:
                out.placing.add(a)
        elif isinstance(e, ev.Split):
            split_taken.add(e.taken_addr)
            out.mark(e.rest_addr, "split",
                     f"split: {size_text(e.taken_size)} taken, {size_text(e.rest_size)} left")
        elif isinstance(e, ev.Placed):
            placed.append(e)
        elif isinstance(e, ev.Released):
            released = e.addr
        elif isinstance(e, ev.Coalesce):
            joined_into[e.high_addr] = e.low_addr
            # the one of the pair that is not the block being freed (or the new
            # memory) was on the list
            for a in (e.low_addr, e.high_addr):
                if a != released and (grown is None or a != grown[0]):
                    was_on_list.add(a)
        elif isinstance(e, ev.Grow):
            grown = (e.old_brk, e.increment)
        elif isinstance(e, ev.GrowFailed):
            out.grow_failed = e.increment
        elif isinstance(e, ev.ListRemove):
            was_on_list.add(e.addr)
            removed.append(e)
        elif isinstance(e, ev.PointerMove) and e.name == pointer_name:
            if not out.pointer_moved:
                out.pointer_before = e.old
            out.pointer_moved = True

    def survivor(a: int) -> int:
        seen = 0
        while a in joined_into and seen < 64:
            a = joined_into[a]
            seen += 1
        return a

    was_on_list.update(first)
    if grown is not None:
        g, inc = grown
        s = survivor(g)
        out.mark(s, "grown", f"grown by sbrk({size_text(inc)})" if s != g else f"new memory: sbrk({size_text(inc)})")
    # Blocks joined into another that had been on the list: drawn as ghosts.
    absorbed_into: dict[int, list[int]] = {}
    for high, low in joined_into.items():
        if high in was_on_list and high not in on_list and high != released:
            into = survivor(low)
            out.ghosts.append(Ghost(high, _coalesce_size(explained, high), "absorbed", into))
            out.mark(high, "absorbed", f"joined into {hex_addr(into)}")
            absorbed_into.setdefault(into, []).append(high)
    if released is not None:
        s = survivor(released)
        others = [hex_addr(a) for a in absorbed_into.pop(s, [])]
        size = sizes.get(s)
        now = f": now {size_text(size)}" if size is not None and (others or s != released) else ""
        if s == released:
            where = "pushed at the head" if lifo else "linked in by address"
            text = f"freed, {where}" if not others else f"freed, joined {', '.join(others)}{now}"
            out.mark(s, "joined" if others else "inserted", text)
        else:
            with_ = f" with {', '.join(others)}" if others else ""
            out.mark(s, "joined", f"{hex_addr(released)} freed, joined in{with_}{now}")
    for into, highs in absorbed_into.items():
        out.mark(into, "joined", f"{', '.join(hex_addr(a) for a in highs)} joined in")
    # A block handed out whole (an exact fit) left the list: a ghost too.
    for p in placed:
        if p.addr not in split_taken and p.addr not in on_list and p.addr in was_on_list:
            out.ghosts.append(Ghost(p.addr, p.size, "unlinked"))
            out.mark(p.addr, "unlinked", f"unlinked: all {size_text(p.size)} taken")
    # Shown up to an event (a micro-step), a block may be off the list before
    # the events that say why (the Placed of an exact fit, a join): it stays
    # where it was, as a ghost, so the rows do not close up and open again.
    ghosted = {g.addr for g in out.ghosts}
    for e in removed:
        if e.addr not in on_list and e.addr not in ghosted:
            ghosted.add(e.addr)
            out.ghosts.append(Ghost(e.addr, e.size, "unlinked"))
            out.mark(e.addr, "unlinked", "taken off the list")
    return out


def _coalesce_size(explained, high: int) -> int:
    for item in explained:
        e = getattr(item, "event", item)
        if isinstance(e, ev.Coalesce) and e.high_addr == high:
            return e.high_size
    return 0
