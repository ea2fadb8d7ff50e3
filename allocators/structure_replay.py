"""Following a free structure from a step's events alone.

Given the structure before a step (``Strategy.structure()``, see
:mod:`heapscope.allocators.structure`) and the step's events, :class:`StructureReplay`
rebuilds the structure after it, event by event.  It is the executable form
of what the events promise in ``docs/structure.md``: a view that animates a
step, or shows it event by event, can trust them to say every change.  The
tests replay every step of random traces this way and compare the result with
``structure()`` after the step.

Each kind follows its events in its own module of
:mod:`heapscope.allocators.structure_kinds`: the kind's ``follower``, a
:class:`Follower` subclass, says which keys are replayed (its
:meth:`~Follower.replayable`, which picks the same keys out of a real
``structure()`` answer, so the two compare with ``==``) and how each event
changes them.  This module holds what they share: the sizes the events say,
the pointer moves, the lists keyed by an event's ``where``
(:class:`KeyedLists`) and the address-ordered runs (:class:`Runs`).

Not replayed: the generic ``lists`` kind (a user strategy promises no events)
and, kind by kind, what the heap walk says instead (see each follower).

Sizes come from the events that name a block with its size (ListInsert,
Visit, Split, Coalesce, BuddySplit, ...); a block no event resized keeps its
size from the structure before.
"""

from __future__ import annotations

from bisect import insort

from . import events as ev
from . import structure_kinds


class ReplayError(AssertionError):
    """An event does not fit the structure it is replayed on (a block inserted
    twice, a rotation naming the wrong parent...): the events lie or are missing."""


def __getattr__(name: str):
    # the kinds with a follower, read from the registry (a kind registered
    # later is one of them)
    if name == "REPLAYABLE_KINDS":
        return tuple(k for k in structure_kinds.names() if structure_kinds.get(k).follower is not None)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _follower_of(structure: dict) -> type[Follower]:
    kind = structure_kinds.get(structure["kind"])
    if kind is None or kind.follower is None:
        raise ValueError(f"the {structure['kind']!r} structure cannot be replayed from events")
    return kind.follower


def replayable(structure: dict) -> dict:
    """The part of a ``structure()`` answer that :class:`StructureReplay`
    rebuilds, in the same form, for comparison."""
    out: dict = {"kind": structure["kind"]}
    held = _follower_of(structure).replayable(structure, out)
    sizes = structure["sizes"]
    out["sizes"] = {a: sizes[a] for a in held}
    return out


def replay_events(before: dict, events) -> dict:
    """The :func:`replayable` part of the structure after ``events``, rebuilt
    from ``before`` (a ``structure()`` answer) and the events alone."""
    replay = StructureReplay(before)
    for event in events:
        replay.apply(event)
    return replay.result()


class StructureReplay:
    """A free structure followed event by event; :meth:`result` after any
    event gives the structure at that point (the micro-steps of a step)."""

    def __init__(self, before: dict) -> None:
        self.kind = before["kind"]
        self.follower = _follower_of(before)(before)

    def apply(self, event) -> None:
        """Follow one event."""
        self.follower.note_sizes(event)
        self.follower.apply(event)

    def result(self, strict: bool = True) -> dict:
        """The :func:`replayable` part of the structure at this point.  Mid-step
        a block's size may not be said yet (Vmbest names a new wilderness
        before it examines it): ``strict=False`` gives None for it instead of
        raising."""
        out: dict = {"kind": self.kind}
        out.update(self.follower.result(strict))
        return out


class Follower:
    """One kind's structure followed from events: subclass it in the kind's
    module and set it as the kind's ``follower``."""

    def __init__(self, before: dict) -> None:
        self._sizes_before = dict(before["sizes"])
        #: sizes the events have said so far
        self.known: dict[int, int] = {}
        #: the kind's one search pointer, if it has one
        self.pointer = None

    @staticmethod
    def replayable(structure: dict, out: dict) -> list[int]:
        """Copy the replayed keys of ``structure`` into ``out``; return the
        free blocks they hold (their sizes are compared too)."""
        raise NotImplementedError

    def apply(self, e) -> None:
        """Follow event ``e`` (its sizes are noted already)."""
        raise NotImplementedError

    def result(self, strict: bool) -> dict:
        """The replayed keys now, ``sizes`` included (see :meth:`sized`)."""
        raise NotImplementedError

    # ------------------------------------------------------------ helpers
    def note_sizes(self, e) -> None:
        """Remember the sizes ``e`` says."""
        known = self.known
        if isinstance(e, (ev.Visit, ev.WalkStep, ev.ListInsert, ev.ListRemove, ev.TreeInsert,
                          ev.TreeRemove, ev.Released, ev.Placed, ev.InsertionPoint)):
            known[e.addr] = e.size
        elif isinstance(e, ev.Split):
            known[e.taken_addr] = e.taken_size
            known[e.rest_addr] = e.rest_size
        elif isinstance(e, ev.Coalesce):
            known.pop(e.high_addr, None)
            known[e.low_addr] = e.size
        elif isinstance(e, ev.BuddySplit):
            known[e.addr] = known[e.buddy] = 1 << (e.order - 1)
        elif isinstance(e, ev.BuddyMerge):
            low, high = sorted((e.addr, e.buddy))
            known.pop(high, None)
            known[low] = 1 << (e.order + 1)
        elif isinstance(e, ev.BucketRefill):
            for i in range(e.count):
                known[e.addr + i * e.block_size] = e.block_size

    def move(self, e, name: str) -> None:
        """A PointerMove of the search pointer, which must start where it is."""
        if e.old != self.pointer:
            raise ReplayError(f"{name} moves from {hex_or_none(e.old)} but it points at "
                              f"{hex_or_none(self.pointer)}")
        self.pointer = e.new

    def size(self, a: int, strict: bool) -> int | None:
        """The size of block ``a``: as an event said it, else as before the step."""
        if a in self.known:
            return self.known[a]
        if a in self._sizes_before:
            return self._sizes_before[a]
        if strict:
            raise ReplayError(f"no event gives the size of {a:#x}, and it was not free before")
        return None

    def sized(self, out: dict, held, strict: bool) -> dict:
        """``out`` with the ``sizes`` of the blocks ``held``."""
        out["sizes"] = {a: self.size(a, strict) for a in held}
        return out


class KeyedLists(Follower):
    """Free lists named by the ``where`` of ListInsert and ListRemove: the
    buddy's AVAIL[k], TLSF's (fl, sl), the buckets' nextf[k], the size
    classes, dlmalloc's bins.  ListInsert pushes at the head (at the address
    place with :attr:`address_ordered`), ListRemove unlinks, BucketRefill
    makes the carved blocks the whole list."""

    #: the structure key of the lists
    lists_key = "lists"
    #: ListInsert keeps the list in address order instead of pushing at the head
    address_ordered = False

    def __init__(self, before: dict) -> None:
        super().__init__(before)
        self.lists: dict = {self.key(k): list(v) for k, v in before[self.lists_key].items() if v}

    @classmethod
    def replayable(cls, structure: dict, out: dict) -> list[int]:
        out[cls.lists_key] = lists = {int(k): list(v) for k, v in structure[cls.lists_key].items() if v}
        return [a for v in lists.values() for a in v]

    def key(self, where):
        """The list an event's ``where`` (or a structure key) names."""
        return int(where[0]) if isinstance(where, tuple) else int(where)

    def apply(self, e) -> None:
        lists = self.lists
        if isinstance(e, ev.ListInsert):
            members = lists.setdefault(self.key(e.where), [])
            if e.addr in members:
                raise ReplayError(f"{e.addr:#x} is put on list {self.key(e.where)} twice")
            if self.address_ordered:
                insort(members, e.addr)
            else:
                members.insert(0, e.addr)
        elif isinstance(e, ev.ListRemove):
            key = self.key(e.where)
            if e.addr not in lists.get(key, ()):
                raise ReplayError(f"{e.addr:#x} is taken off list {key} but is not on it")
            lists[key].remove(e.addr)
            if not lists[key]:
                del lists[key]
        elif isinstance(e, ev.BucketRefill):
            if lists.get(e.bucket):
                raise ReplayError(f"morecore refilled nextf[{e.bucket}], which was not empty")
            lists[e.bucket] = [e.addr + i * e.block_size for i in range(e.count)]

    def result(self, strict: bool) -> dict:
        lists = {k: list(v) for k, v in sorted(self.lists.items())}
        return self.sized({self.lists_key: lists}, [a for v in lists.values() for a in v], strict)


class Runs:
    """Free runs or clusters on one address-ordered list (phkmalloc's
    free-page list, GNU malloc's clusters): ListInsert/ListRemove with
    ``where = ()``, Split (the run keeps its place, its front taken),
    Coalesce (a run joined by the pages before or after it), TopExtended and
    Shrink (the last run cut at the break)."""

    def __init__(self, runs: dict[int, int]) -> None:
        #: ``{addr: size}`` of the listed runs
        self.runs = runs

    def apply(self, e) -> bool:
        """Follow ``e``; True if it was one of the runs' events."""
        runs = self.runs
        if isinstance(e, (ev.ListInsert, ev.ListRemove)) and e.where:
            return False
        if isinstance(e, ev.ListInsert):
            if e.addr in runs:
                raise ReplayError(f"run {e.addr:#x} is put on the list twice")
            runs[e.addr] = e.size
        elif isinstance(e, ev.ListRemove):
            size = runs.pop(e.addr, None)
            if size != e.size:
                raise ReplayError(f"run {e.addr:#x} of {e.size} B leaves the list, which holds "
                                  f"{hex_or_none(e.addr)} as {size} B")
        elif isinstance(e, ev.Split):
            if e.addr in runs:          # the run keeps its place; its front is taken
                if runs.pop(e.addr) != e.size:
                    raise ReplayError(f"run {e.addr:#x} is cut as {e.size} B, not its listed size")
                runs[e.rest_addr] = e.rest_size
        elif isinstance(e, ev.Coalesce):
            if e.low_addr in runs and e.high_addr not in runs and runs[e.low_addr] == e.low_size:
                runs[e.low_addr] = e.size
            elif e.high_addr in runs and e.low_addr not in runs and runs[e.high_addr] == e.high_size:
                del runs[e.high_addr]
                runs[e.low_addr] = e.size
            else:
                raise ReplayError(f"join of {e.low_addr:#x} and {e.high_addr:#x}: exactly one must be a "
                                  "listed run (a run absorbed leaves the list first)")
        elif isinstance(e, ev.TopExtended):
            if runs.get(e.addr) != e.old_size:
                raise ReplayError(f"cluster {e.addr:#x} of {e.old_size} B is extended but is not listed so")
            runs[e.addr] = e.size
        elif isinstance(e, ev.Shrink):
            last = next((a for a, size in runs.items() if a + size == e.old_brk), None)
            if last is not None:
                if runs[last] <= e.decrement:
                    raise ReplayError(f"the break goes down by {e.decrement} B through run {last:#x}")
                runs[last] -= e.decrement
        else:
            return False
        return True


def hex_or_none(a) -> str:
    return "None" if a is None else f"{a:#x}"
