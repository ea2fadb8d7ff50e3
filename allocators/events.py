"""What one operation did, so a view can animate it and the explain panel can
say it in words.

Every public operation of a :class:`~allocators.strategy.Strategy` fills one
:class:`OpRecord`.  Its counters (visits, splits, merges, rotations, probes) are
always kept because the measures need them; the ordered list of events is only
kept while ``strategy.record`` is true (bulk replay switches it off and turns it
on for the one step being shown).

Events are small frozen dataclasses.  Addresses are block addresses (the
header), not payload addresses, unless a field says ``payload``.
"""

from __future__ import annotations

from dataclasses import dataclass

MALLOC = "malloc"
FREE = "free"
REALLOC = "realloc"


@dataclass(frozen=True, slots=True)
class Visit:
    """A free block examined by a search, in order; ``fits`` if it was big enough."""
    addr: int
    size: int
    fits: bool


@dataclass(frozen=True, slots=True)
class Split:
    """Block ``addr`` of ``size`` bytes cut in two: ``taken`` goes to the request,
    ``rest`` stays free."""
    addr: int
    size: int
    taken_addr: int
    taken_size: int
    rest_addr: int
    rest_size: int


@dataclass(frozen=True, slots=True)
class Coalesce:
    """Free neighbours ``low`` and ``high`` joined into one block at ``low_addr``."""
    low_addr: int
    low_size: int
    high_addr: int
    high_size: int

    @property
    def size(self) -> int:
        return self.low_size + self.high_size


@dataclass(frozen=True, slots=True)
class Grow:
    """The heap grew: ``sbrk(increment)`` returned ``old_brk``."""
    old_brk: int
    increment: int


@dataclass(frozen=True, slots=True)
class GrowFailed:
    """``sbrk(increment)`` failed (limit reached or fixed pool): ENOMEM."""
    increment: int


@dataclass(frozen=True, slots=True)
class PointerMove:
    """A named search pointer moved (K&R's rover ``freep``, Kruse's list head)."""
    name: str
    old: int | None
    new: int | None


@dataclass(frozen=True, slots=True)
class Placed:
    """The request was given block ``addr`` of ``size`` bytes, payload at ``payload``."""
    addr: int
    size: int
    payload: int
    request: int


@dataclass(frozen=True, slots=True)
class Released:
    """Block ``addr`` of ``size`` bytes was handed back by free."""
    addr: int
    size: int


@dataclass(frozen=True, slots=True)
class Rotation:
    """A splay step on the node keyed ``key``: 'zig', 'zig-zig' or 'zig-zag'."""
    kind: str
    key: int
    addr: int


@dataclass(frozen=True, slots=True)
class BuddySplit:
    """Knuth 2.5 algorithm R: a block of order ``order`` at ``addr`` halved;
    the upper half ``buddy`` goes on AVAIL[order-1]."""
    addr: int
    order: int
    buddy: int


@dataclass(frozen=True, slots=True)
class BuddyMerge:
    """Knuth 2.5 algorithm S: ``addr`` and its buddy ``addr ^ 2**order``
    (relative to the chunk) joined into one block of order ``order + 1``."""
    addr: int
    buddy: int
    order: int


@dataclass(frozen=True, slots=True)
class BitmapProbe:
    """TLSF: a bitmap looked at.  ``level`` is 'sl' or 'fl'; ``found`` is the
    (fl, sl) found or None."""
    level: str
    fl: int
    sl: int
    found: tuple[int, int] | None


@dataclass(frozen=True, slots=True)
class ListInsert:
    """A free block pushed on a segregated list (TLSF (fl, sl), a bucket, AVAIL[k])."""
    addr: int
    size: int
    where: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class ListRemove:
    """A free block taken off a segregated list."""
    addr: int
    size: int
    where: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Note:
    """Anything a strategy wants said in the explain panel."""
    text: str


# ---- events of one policy each (their views read them from here too)

@dataclass(frozen=True, slots=True)
class AvailProbe:
    """Buddy system: algorithm R, step R1, looked at ``AVAIL[order]``: ``first`` is the block
    at its head (the one R2 takes), or None when the list was empty."""
    order: int
    first: int | None


@dataclass(frozen=True, slots=True)
class BucketRefill:
    """BSD buckets: ``morecore(bucket)`` carved ``count`` blocks of ``block_size`` bytes
    from ``addr`` and pushed them all on ``nextf[bucket]``."""
    bucket: int
    addr: int
    block_size: int
    count: int


@dataclass(frozen=True, slots=True)
class TreeInsert:
    """Splay best fit: free block ``addr`` of ``size`` bytes put in the tree: ``side`` is 'root',
    'left' or 'right' (a new leaf under ``parent``) or 'list' (hung in the size
    list of node ``parent``)."""
    addr: int
    size: int
    parent: int | None
    side: str


@dataclass(frozen=True, slots=True)
class TreeRemove:
    """Splay best fit: free block ``addr`` of ``size`` bytes taken out of the tree; if it was a
    tree node with a size list, ``replaced_by`` (the first list member) took its place."""
    addr: int
    size: int
    replaced_by: int | None


@dataclass(frozen=True, slots=True)
class MappingSearch:
    """TLSF ``mapping_search``: the adjusted request ``size`` was rounded up to
    ``rounded`` so that any block of class ``(fl, sl)`` or above fits; the
    bitmap search starts at that cell."""
    size: int
    rounded: int
    fl: int
    sl: int


class OpRecord:
    """What one malloc/free/realloc did.

    ``visits`` is the search length of DESIGN.md (nodes examined, the one taken
    included); ``work`` adds splits, merges and rotations into one deterministic
    cost.  A plain class whose counters default at class level: one is made per
    operation, and this is twice as cheap to create as a dataclass.
    """

    payload: int | None = None      # malloc/realloc result, or the freed address
    old_payload: int | None = None  # realloc's argument
    visits = 0
    probes = 0                      # bitmap / order probes, part of visits for segregated fits
    splits = 0
    merges = 0
    rotations = 0
    grows = 0
    walked = 0                      # nodes passed that are not search (K&R's morecore inserting)
    failed = False

    def __init__(self, kind: str = MALLOC, request: int = 0, events: list | None = None) -> None:
        self.kind = kind
        self.request = request
        self.events = events

    @property
    def work(self) -> int:
        return self.visits + self.walked + self.splits + self.merges + self.rotations

    @property
    def search_length(self) -> int:
        return self.visits

    def __repr__(self) -> str:
        fields = ", ".join(f"{k}={v!r}" for k, v in vars(self).items() if k != "events")
        n = len(self.events) if self.events is not None else None
        return f"OpRecord({fields}, events={n})"
