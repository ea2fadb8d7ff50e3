"""What one operation did, so a view can animate it and the explain panel can
say it in words.

Every public operation of a :class:`~heapscope.allocators.strategy.Strategy` fills one
:class:`OpRecord`.  Its counters (visits, splits, merges, rotations, probes) are
always kept because the measures need them; the ordered list of events is only
kept while ``strategy.record`` is true (bulk replay switches it off and turns it
on for the one step being shown).

Events are small frozen dataclasses.  Addresses are block addresses (the
header), not payload addresses, unless a field says ``payload``.

The events of a step say every change the step made to the policy's free
structure, in order: a view can follow the structure from the events alone
(:mod:`heapscope.allocators.structure_replay` does, and the tests check it against
``structure()``).  Which event changes what, kind by kind, is in
``docs/structure.md`` ("Events a view can rely on").

**Each event type carries its meaning**, as methods of its class (one
definition per type, nothing per instance: the classes keep ``__slots__``):

- ``describe()``: its generic words, true of any policy, the line the
  explain panel and ``heapscope inspect`` show when the strategy has none of
  its own (:func:`heapscope.allocators.explain.describe_event`);
- ``addresses()``: the block addresses it names, the one it is mostly about
  first (:func:`heapscope.allocators.explain.event_addresses`: a click on the
  line selects them);
- ``edit(heap)``: how it changes the heap map's block list, in the verbs of
  :class:`heapscope.allocators.heap_edits.BlockEditor` (``put_free``,
  ``put_used``, ``put_rows``, ``grow``, ``move_pointer`` ...);
- ``list_mark()``, for an event that names a free list rather than a block
  in it: ``(the list's key, what it did to that list in a few words)``, the
  mark the window's lists view puts on that list's heading
  (``gui/structure_views/lists_view.py``, ``list_marks``).  An event without
  one marks no list.

An event that changes no block of the heap walk -- a look (a visit, a probe,
a walk), a change to a list, a tree or a pointer, or memory apart from the
heap -- has no ``edit`` and says so with the class attribute
``changes_blocks = False``.  A user strategy's own event type plugs in the
same way (docs/user-strategies.md): with an ``edit`` the map edits it in;
with neither ``edit`` nor ``changes_blocks = False`` a step holding it is
drawn from a full walk of the heap, since the map cannot know what it did.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .phrases import at, list_name, nbytes

MALLOC = "malloc"
FREE = "free"
REALLOC = "realloc"

#: the words ``Strategy._take_core`` uses in the Note it records when it carves
#: bytes of a fixed pool
_CARVED = re.compile(r"carved (\d+) bytes at (0x[0-9a-f]+) from the pool")


@dataclass(frozen=True, slots=True)
class Visit:
    """A free block examined by a search, in order; each one counts in
    ``rec.visits``, the search length.

    In a malloc's search (``place`` False) ``fits`` says the block was big
    enough.  A free whose search length is a walk to the freed block's place
    (K&R 8.7 free(): ``for (p = freep; !(bp > p && bp < p->s.ptr); p = p->s.ptr)``;
    Vmbest's leaf insertion) has ``place`` True, and ``fits`` marks the node
    where the walk stopped: the block goes after it (K&R) or under it (Vmbest).

    A policy whose search passes busy blocks too (the V7/4BSD malloc walks one
    ring of all blocks: ``if(!testbusy(p->ptr))``) records each busy block it
    reads with ``busy`` True (and ``fits`` False): they count in the search
    length, which is why that malloc was slow (seed 002)."""
    changes_blocks = False
    addr: int
    size: int
    fits: bool
    place: bool = False
    busy: bool = False

    def describe(self) -> str:
        if self.busy:
            return f"passed busy block {self.addr:#x} ({nbytes(self.size)})"
        if self.place:
            tail = ": the block goes here" if self.fits else ""
            return (f"walked past free block {self.addr:#x} ({nbytes(self.size)}) "
                    f"to the freed block's place{tail}")
        verdict = "big enough" if self.fits else "too small"
        return f"examined free block {self.addr:#x} ({nbytes(self.size)}): {verdict}"

    def addresses(self) -> tuple[int, ...]:
        return (self.addr,)


@dataclass(frozen=True, slots=True)
class WalkStep:
    """A free block passed by a walk that is work but not the operation's
    search: K&R 8.7's ``morecore`` hands the new memory to ``free()``, whose
    address walk passes these blocks inside a malloc.  Counted in
    ``rec.walked``, not in ``rec.visits``, so the numbered search of the
    malloc is the search alone.  ``stop`` marks the block after which the new
    memory goes."""
    changes_blocks = False
    addr: int
    size: int
    stop: bool

    def describe(self) -> str:
        tail = ": the new memory goes after it" if self.stop else ""
        return f"walked past free block {self.addr:#x} ({nbytes(self.size)}) to file the new memory{tail}"

    def addresses(self) -> tuple[int, ...]:
        return (self.addr,)


@dataclass(frozen=True, slots=True)
class InsertionPoint:
    """K&R 8.7 free(): the address walk found the place of block ``addr``:
    ``prev < addr < next`` on the address-ordered ring, ``prev``/``next``
    None for K&R's ``base`` sentinel (``addr`` lies below the lowest free
    block, past the highest, or the ring is empty).  The ring changes that
    follow are ListInsert/ListRemove events: K&R links ``addr`` after
    ``prev`` unless it joins ``prev`` (a Coalesce), and a join with ``next``
    takes ``next`` off the ring."""
    changes_blocks = False
    addr: int
    size: int
    prev: int | None
    next: int | None

    def describe(self) -> str:
        return (f"block {self.addr:#x} ({nbytes(self.size)}) belongs between {at(self.prev, 'the start')} "
                f"and {at(self.next, 'the end')} in address order")

    def addresses(self) -> tuple[int, ...]:
        return tuple(a for a in (self.addr, self.prev, self.next) if a is not None)


@dataclass(frozen=True, slots=True)
class Split:
    """Block ``addr`` of ``size`` bytes cut in two: ``taken`` goes to the request,
    ``rest`` stays free.  Which end is taken is the policy's: K&R 8.7 and
    Knuth's algorithm A (step A4) hand out the upper part, so the free block
    keeps its address and its place on the list (``rest_addr == addr``);
    Vmbest and TLSF (``block_split``) hand out the front.  Where the rest goes
    is said by the events that follow (a ListInsert, a TreeInsert, a
    PointerMove of the wilderness), or by nothing when it stays where it was."""
    addr: int
    size: int
    taken_addr: int
    taken_size: int
    rest_addr: int
    rest_size: int

    def describe(self) -> str:
        return (f"split {self.addr:#x} ({nbytes(self.size)}): {nbytes(self.taken_size)} at "
                f"{self.taken_addr:#x} for the request, {nbytes(self.rest_size)} at {self.rest_addr:#x} "
                "stays free")

    def addresses(self) -> tuple[int, ...]:
        return (self.taken_addr, self.rest_addr)

    def edit(self, heap) -> None:
        # ``rest`` becomes free; ``taken`` keeps the state of the block it
        # was cut from (a Placed follows)
        taken = heap.row_at(self.taken_addr)
        if taken is None:
            heap.refuse(f"split of {self.addr:#x} outside the heap")
        heap.put_free(self.rest_addr, self.rest_size)
        heap.put_rows([[self.taken_addr, self.taken_size] + taken[2:]])


@dataclass(frozen=True, slots=True)
class Coalesce:
    """Free neighbours ``low`` and ``high`` joined into one block at ``low_addr``
    (K&R 8.7 free()'s "join to upper/lower nbr"; Knuth's algorithm C;
    Vmbest's free; TLSF's ``block_absorb``).  The free structure is changed by
    the list and tree events around it, not by this one."""
    low_addr: int
    low_size: int
    high_addr: int
    high_size: int

    @property
    def size(self) -> int:
        return self.low_size + self.high_size

    def describe(self) -> str:
        return (f"joined free neighbours {self.low_addr:#x} ({nbytes(self.low_size)}) and "
                f"{self.high_addr:#x} ({nbytes(self.high_size)}) into {nbytes(self.size)} at {self.low_addr:#x}")

    def addresses(self) -> tuple[int, ...]:
        return (self.low_addr, self.high_addr)

    def edit(self, heap) -> None:
        heap.put_free(self.low_addr, self.low_size + self.high_size)


@dataclass(frozen=True, slots=True)
class Grow:
    """The heap grew: ``sbrk(increment)`` returned ``old_brk`` (K&R's
    ``morecore``, Vmbest's wilderness extension, a buddy chunk, a TLSF pool
    extension, 4.3BSD's ``morecore``)."""
    old_brk: int
    increment: int

    def describe(self) -> str:
        return f"grew the heap: sbrk({self.increment}) returned {self.old_brk:#x}"

    def addresses(self) -> tuple[int, ...]:
        return (self.old_brk,)

    def edit(self, heap) -> None:
        # pending until the events that follow name the blocks made of them
        heap.grow(self.old_brk, self.increment)


@dataclass(frozen=True, slots=True)
class GrowFailed:
    """``sbrk(increment)`` failed (limit reached or fixed pool): ENOMEM."""
    changes_blocks = False
    increment: int

    def describe(self) -> str:
        return f"could not grow the heap by {nbytes(self.increment)} (out of memory)"

    def addresses(self) -> tuple[int, ...]:
        return ()


@dataclass(frozen=True, slots=True)
class PointerMove:
    """A named pointer into the free structure moved: K&R 8.7's rover
    ``freep`` (``name`` 'rover'), Kruse's list head ('head'), Vmbest's
    wilderness ``vd->wild`` ('wilderness').  ``old``/``new`` are block
    addresses, None at K&R's ``base`` sentinel or when nothing is pointed at."""
    changes_blocks = False
    name: str
    old: int | None
    new: int | None

    def describe(self) -> str:
        return f"{self.name} moved from {at(self.old, 'the start')} to {at(self.new, 'the start')}"

    def addresses(self) -> tuple[int, ...]:
        return tuple(a for a in (self.new, self.old) if a is not None)

    def edit(self, heap) -> None:
        # no block changes, but the map draws the pointer
        heap.move_pointer(self.name, self.new)


@dataclass(frozen=True, slots=True)
class Placed:
    """The request was given block ``addr`` of ``size`` bytes, payload at
    ``payload`` (every policy's last malloc step: K&R's ``return (void *)(p+1)``,
    Knuth's R2/R4 end, TLSF's ``block_prepare_used``)."""
    addr: int
    size: int
    payload: int
    request: int

    def describe(self) -> str:
        return (f"placed the request ({nbytes(self.request)}) in block {self.addr:#x} of "
                f"{nbytes(self.size)}; payload at {self.payload:#x}")

    def addresses(self) -> tuple[int, ...]:
        return (self.addr,)

    def edit(self, heap) -> None:
        heap.put_used(self.addr, self.size, self.payload, self.request)


@dataclass(frozen=True, slots=True)
class Released:
    """Block ``addr`` of ``size`` bytes was handed back by free (the first
    event of every free; what the policy does with it follows)."""
    addr: int
    size: int

    def describe(self) -> str:
        return f"released block {self.addr:#x} ({nbytes(self.size)})"

    def addresses(self) -> tuple[int, ...]:
        return (self.addr,)

    def edit(self, heap) -> None:
        heap.put_free(self.addr, self.size)


@dataclass(frozen=True, slots=True)
class Rotation:
    """One step of a bottom-up splay (Sleator & Tarjan 1985, section 3) raising
    node ``addr`` (keyed ``key``): 'zig' (its parent is the top), 'zig-zig'
    (node and parent both ``side`` children: the grandparent is rotated first)
    or 'zig-zag' (the node is a ``side`` child, its parent a child on the
    other side: the parent is rotated, then the grandparent).

    ``parent`` and ``grandparent`` are the nodes it moves above (``grandparent``
    None for a zig), ``side`` is 'left' or 'right': which child of ``parent``
    the node was before the step.  Rotations keep the in-order rank of every
    node, so a view laying the tree out by rank moves nodes only vertically.
    The step is done on the tree as the events before it left it: during a
    removal's join that is the detached right subtree (see :class:`TreeJoin`)."""
    changes_blocks = False
    kind: str
    key: int
    addr: int
    parent: int | None = None
    grandparent: int | None = None
    side: str = ""

    def describe(self) -> str:
        return f"splay step {self.kind} on the node of size {self.key} at {self.addr:#x}"

    def addresses(self) -> tuple[int, ...]:
        return tuple(a for a in (self.addr, self.parent, self.grandparent) if a is not None)


@dataclass(frozen=True, slots=True)
class BuddySplit:
    """Knuth 2.5 algorithm R, step R3: a block of order ``order`` at ``addr``
    halved; the lower half stays at ``addr`` and the upper half ``buddy`` goes on
    AVAIL[order-1] (step R4: the ListInsert that follows)."""
    addr: int
    order: int
    buddy: int

    def describe(self) -> str:
        return (f"split the block of order {self.order} at {self.addr:#x}; its upper half "
                f"{self.buddy:#x} goes on AVAIL[{self.order - 1}]")

    def addresses(self) -> tuple[int, ...]:
        return (self.addr, self.buddy)

    def edit(self, heap) -> None:
        half = 1 << (self.order - 1)
        lo, hi = sorted((self.addr, self.buddy))
        heap.put_rows([heap.free_row(lo, half), heap.free_row(hi, half)])


@dataclass(frozen=True, slots=True)
class BuddyMerge:
    """Knuth 2.5 algorithm S, steps S1-S2: the buddy ``addr ^ 2**order``
    (relative to the chunk) of ``addr`` is free and of order ``order``, so the
    two join into one block of order ``order + 1`` at the lower address.  The
    buddy's unlink from AVAIL[order] is the ListRemove that follows."""
    addr: int
    buddy: int
    order: int

    def describe(self) -> str:
        return (f"merged {self.addr:#x} with its buddy {self.buddy:#x} into a block of "
                f"order {self.order + 1}")

    def addresses(self) -> tuple[int, ...]:
        return (self.addr, self.buddy)

    def edit(self, heap) -> None:
        heap.put_free(min(self.addr, self.buddy), 2 << self.order)


@dataclass(frozen=True, slots=True)
class BitmapProbe:
    """TLSF ``search_suitable_block``: one bitmap word looked at.  ``level``
    'sl': ``sl_bitmap[fl] & (~0 << sl)``; 'fl': ``fl_bitmap & (~0 << fl)``
    (``fl`` is then the first level the scan starts at, ``sl`` 0).  ``found``
    is the (fl, sl) of the list the find-first-set reached, or None."""
    changes_blocks = False
    level: str
    fl: int
    sl: int
    found: tuple[int, int] | None

    def describe(self) -> str:
        found = "nothing" if self.found is None else f"list {self.found}"
        return f"looked at the {self.level} bitmap from ({self.fl}, {self.sl}): found {found}"

    def addresses(self) -> tuple[int, ...]:
        return ()


@dataclass(frozen=True, slots=True)
class ListInsert:
    """A free block put on a free list: ``where`` names the list (TLSF
    ``(fl, sl)``, a bucket ``(k,)``, ``AVAIL[k]`` as ``(k,)``; ``()`` for a
    policy's only list).  Segregated lists and Kruse's ring push at the head
    (Kruse: just before the head, which a PointerMove then moves to it);
    K&R's ring links the block at its address place (an InsertionPoint before
    it says where)."""
    addr: int
    size: int
    where: tuple[int, ...]

    def describe(self) -> str:
        return f"pushed {self.addr:#x} ({nbytes(self.size)}) on list {list_name(self.where)}"

    def addresses(self) -> tuple[int, ...]:
        return (self.addr,)

    def list_mark(self) -> tuple[tuple, str]:
        return tuple(self.where), f"pushed 0x{self.addr:x}"

    def edit(self, heap) -> None:
        # the block is free (a fixed pool's uncarved tail shrinks when a
        # chunk is carved from it)
        heap.put_free(self.addr, self.size)


@dataclass(frozen=True, slots=True)
class ListRemove:
    """A free block taken off a free list (``where`` as in ListInsert), from
    wherever it was on it."""
    changes_blocks = False
    addr: int
    size: int
    where: tuple[int, ...]

    def describe(self) -> str:
        return f"took {self.addr:#x} ({nbytes(self.size)}) off list {list_name(self.where)}"

    def addresses(self) -> tuple[int, ...]:
        return (self.addr,)

    def list_mark(self) -> tuple[tuple, str]:
        return tuple(self.where), f"took 0x{self.addr:x}"


@dataclass(frozen=True, slots=True)
class Note:
    """Anything a strategy wants said in the explain panel."""
    text: str

    def describe(self) -> str:
        return self.text

    def addresses(self) -> tuple[int, ...]:
        return ()

    def edit(self, heap) -> None:
        # the words ``Strategy._take_core`` uses when it carves a fixed pool:
        # those bytes are taken into use (pending, as grown bytes)
        m = _CARVED.search(self.text)
        if m:
            heap.carve(int(m.group(2), 16), int(m.group(1)))


# ---- events of one policy each (their views read them from here too)

@dataclass(frozen=True, slots=True)
class AvailProbe:
    """Buddy system: algorithm R, step R1, looked at ``AVAIL[order]``: ``first`` is the block
    at its head (the one R2 takes), or None when the list was empty."""
    changes_blocks = False
    order: int
    first: int | None

    def describe(self) -> str:
        if self.first is None:
            return f"AVAIL[{self.order}] is empty"
        return f"AVAIL[{self.order}] holds {self.first:#x} at its front"

    def addresses(self) -> tuple[int, ...]:
        return () if self.first is None else (self.first,)

    def list_mark(self) -> tuple[tuple, str]:
        return (self.order,), "probed" + (" (empty)" if self.first is None else "")


@dataclass(frozen=True, slots=True)
class BucketRefill:
    """4.3BSD malloc's ``morecore(bucket)``: ``nextf[bucket]`` was empty, so
    ``count`` blocks of ``block_size`` bytes were carved from ``addr`` and
    became the whole list, in address order (head ``addr``)."""
    bucket: int
    addr: int
    block_size: int
    count: int

    def describe(self) -> str:
        return (f"bucket {self.bucket} was empty: carved {self.count} blocks of "
                f"{nbytes(self.block_size)} from {self.addr:#x}")

    def addresses(self) -> tuple[int, ...]:
        return (self.addr,)

    def edit(self, heap) -> None:
        heap.put_free_run(self.addr, self.block_size, self.count)

    def list_mark(self) -> tuple[tuple, str]:
        return (self.bucket,), f"refilled with {self.count} blocks"


@dataclass(frozen=True, slots=True)
class TreeInsert:
    """Vmbest's leaf insertion (no splaying): free block ``addr`` of ``size``
    bytes put in the tree: ``side`` is 'root' (the tree was empty), 'left' or
    'right' (a new leaf under ``parent``) or 'list' (hung in the size list of
    node ``parent``, right after the node: Vmbest's ``LINK``)."""
    addr: int
    size: int
    parent: int | None
    side: str

    def describe(self) -> str:
        if self.side == "root":
            return f"put {self.addr:#x} ({nbytes(self.size)}) in the empty tree as its root"
        if self.side == "list":
            return f"hung {self.addr:#x} ({nbytes(self.size)}) in the size list of node {self.parent:#x}"
        return (f"put {self.addr:#x} ({nbytes(self.size)}) in the tree as the {self.side} child "
                f"of {self.parent:#x}")

    def addresses(self) -> tuple[int, ...]:
        return (self.addr,) if self.parent is None else (self.addr, self.parent)

    def edit(self, heap) -> None:
        heap.put_free(self.addr, self.size)


@dataclass(frozen=True, slots=True)
class TreeRemove:
    """Vmbest's removal: free block ``addr`` of ``size`` bytes taken out of the
    tree.  A size-list member is unlinked (``replaced_by`` None).  A tree node
    is removed at the root, where a splay (the Rotation events before) brought
    it: if it has a size list, its first member ``replaced_by`` takes its place
    ("head of a link list, use next one for root"); otherwise its subtrees are
    joined (the TreeJoin that follows)."""
    changes_blocks = False
    addr: int
    size: int
    replaced_by: int | None

    def describe(self) -> str:
        tail = "" if self.replaced_by is None else f"; {self.replaced_by:#x} of its list takes its place"
        return f"took {self.addr:#x} ({nbytes(self.size)}) out of the tree{tail}"

    def addresses(self) -> tuple[int, ...]:
        return (self.addr,) if self.replaced_by is None else (self.addr, self.replaced_by)


@dataclass(frozen=True, slots=True)
class TreeJoin:
    """Splay best fit: the join that ends the removal of a tree node with no
    size list (Sleator & Tarjan 1985, "join"; Vmbest's removal).  The removed
    root left subtrees ``left`` and ``right`` (their roots, None when empty).
    With both there, the least node of ``right`` was splayed to the top of that
    subtree (the Rotation events just before), so it has no left child, and
    ``left`` hangs there as its left child.  ``root`` is the new root of the
    tree: that least node, the one non-empty subtree, or None."""
    changes_blocks = False
    left: int | None
    right: int | None
    root: int | None

    def describe(self) -> str:
        if self.left is not None and self.right is not None:
            return (f"joined the subtrees: {self.root:#x}, the least node of the right subtree, "
                    f"took the left subtree {self.left:#x} as its left child and is the root")
        if self.root is None:
            return "the tree is empty"
        return f"its only subtree, rooted at {self.root:#x}, is the tree now"

    def addresses(self) -> tuple[int, ...]:
        return tuple(dict.fromkeys(a for a in (self.root, self.left, self.right) if a is not None))


@dataclass(frozen=True, slots=True)
class MappingSearch:
    """TLSF ``mapping_search``: the adjusted request ``size`` (``adjust_request_size``:
    word-aligned, at least ``block_size_min``) was rounded up to ``rounded`` so
    that any block of class ``(fl, sl)`` or above fits; the bitmap search
    starts at that cell.  ``request`` is what the program asked for."""
    changes_blocks = False
    size: int
    rounded: int
    fl: int
    sl: int
    request: int | None = None

    def describe(self) -> str:
        # the program's request when rounding changed it, else the adjusted size
        asked = self.request if self.request is not None and self.request != self.rounded else self.size
        return f"mapping_search({asked}): rounded to {self.rounded}, class ({self.fl}, {self.sl})"

    def addresses(self) -> tuple[int, ...]:
        return ()

    def list_mark(self) -> tuple[tuple, str]:
        return (self.fl, self.sl), "the search starts here"


# ---- events of the seeds' classic allocators (V7, GNU malloc, phkmalloc)

@dataclass(frozen=True, slots=True)
class Shrink:
    """The heap gave memory back: ``sbrk`` with a negative increment moved the
    break down from ``old_brk`` by ``decrement`` bytes, taking them off the
    end of the free run or cluster that ended there.  phkmalloc's
    ``free_pages``: "Return something to OS ?" (``brk(pf->end)``, keeping
    ``malloc_cache`` bytes); GNU malloc's ``_free_internal``: "see if we can
    return stuff to the system" (``(*__morecore) (-bytes)``, the whole final
    cluster once it has FINAL_FREE_BLOCKS blocks).  In a fixed pool the bytes
    go back to the part of the pool not handed out."""
    old_brk: int
    decrement: int

    def describe(self) -> str:
        return (f"gave {nbytes(self.decrement)} back to the system: the break went down from "
                f"{self.old_brk:#x} to {self.old_brk - self.decrement:#x}")

    def addresses(self) -> tuple[int, ...]:
        return ()

    def edit(self, heap) -> None:
        heap.shrink_to(self.old_brk - self.decrement, self.old_brk)


@dataclass(frozen=True, slots=True)
class TopExtended:
    """GNU malloc's large-request search came round without a fit, and the
    last free cluster (at ``addr``, ``old_size`` bytes) ends at the break: only
    the missing ``added`` bytes were got from the system ("we don't need to
    get as much"), and the cluster grew in place by them.  Not a merge: no two
    free blocks were joined."""
    addr: int
    old_size: int
    added: int

    @property
    def size(self) -> int:
        return self.old_size + self.added

    def describe(self) -> str:
        return (f"the last free block {self.addr:#x} ({nbytes(self.old_size)}) ends at the break: "
                f"it grew by {nbytes(self.added)} of new memory to {nbytes(self.size)}")

    def addresses(self) -> tuple[int, ...]:
        return (self.addr,)

    def edit(self, heap) -> None:
        # the last cluster and the new bytes: one free block
        heap.put_free(self.addr, self.old_size + self.added)


@dataclass(frozen=True, slots=True)
class ArenaExtended:
    """V7 malloc, after ``q = sbrk(temp*WORD)``: ``alloct->ptr = q`` makes
    the old top word ``old_top`` lead into the new memory (a free one-word
    block when the memory is contiguous; None the first time, when the top is
    the static ``allocs[1]`` outside the heap and the link is marked busy: "gaps
    in arena are merely noted as busy blocks"); ``q->ptr = alloct =
    q+temp-1`` makes a free block of ``size`` bytes at ``addr`` and the new
    one-word top at ``top`` (``top_size`` bytes: one word), which points back
    to ``allocs``."""
    old_top: int | None
    addr: int
    size: int
    top: int
    top_size: int

    def describe(self) -> str:
        old = "the static top" if self.old_top is None else f"the old top word {self.old_top:#x}"
        return (f"{old} now leads into the new memory: a free block of {nbytes(self.size)} at "
                f"{self.addr:#x}, the new top word at {self.top:#x}")

    def addresses(self) -> tuple[int, ...]:
        return tuple(a for a in (self.addr, self.top, self.old_top) if a is not None)

    def edit(self, heap) -> None:
        rows = [heap.free_row(self.addr, self.size), heap.meta_row(self.top, self.top_size)]
        if self.old_top is not None:
            # the old top word leads into the new memory: a free one-word block
            rows.insert(0, heap.free_row(self.old_top, self.addr - self.old_top))
        heap.put_rows(rows)


@dataclass(frozen=True, slots=True)
class BlockFragmented:
    """GNU malloc: ``_fraghead[log]`` was empty, so ``malloc (BLOCKSIZE)``
    gave block ``block``, cut into ``count`` fragments of ``2**log`` bytes: the
    first is the request's, the others are pushed on ``_fraghead[log]`` one by
    one in address order ("Link all fragments but the first into the free
    list"), so the last one ends at the head."""
    block: int
    log: int
    count: int

    def describe(self) -> str:
        return (f"cut block {self.block:#x} into {self.count} fragments of {nbytes(1 << self.log)}; "
                f"all but the first went on the fragment list of {nbytes(1 << self.log)}")

    def addresses(self) -> tuple[int, ...]:
        return (self.block,)

    def edit(self, heap) -> None:
        # the first fragment is the request's (taken), the rest are free
        frag = 1 << self.log
        heap.put_taken(self.block, frag)
        heap.put_free_run(self.block + frag, frag, self.count - 1)


@dataclass(frozen=True, slots=True)
class FragLinked:
    """GNU malloc's free of fragment ``addr`` (``size`` = ``2**log`` bytes) of a
    block with other free fragments: linked into ``_fraghead[log]`` right
    after ``after``, the block's first free fragment ("link this fragment into
    the fragment list after the first free fragment of this block"), so a
    block's free fragments stay together on the list."""
    addr: int
    size: int
    log: int
    after: int

    def describe(self) -> str:
        return (f"linked fragment {self.addr:#x} ({nbytes(self.size)}) after {self.after:#x}, "
                f"a free fragment of the same block")

    def addresses(self) -> tuple[int, ...]:
        return tuple(a for a in (self.addr, self.after) if a is not None)

    def edit(self, heap) -> None:
        heap.put_free(self.addr, self.size)


@dataclass(frozen=True, slots=True)
class FragBlockEmptied:
    """GNU malloc's free: every fragment of block ``block`` is free now, so
    its ``count - 1`` other fragments, together on ``_fraghead[log]`` from the
    block's first free one, are unlinked ("remove them from the fragment list
    and free the whole block"), and the block is freed as one block."""
    block: int
    log: int
    count: int

    def describe(self) -> str:
        return (f"every fragment of block {self.block:#x} is free: its {self.count - 1} other "
                f"fragments left the fragment list of {nbytes(1 << self.log)} and the block is freed whole")

    def addresses(self) -> tuple[int, ...]:
        return (self.block,)

    def edit(self, heap) -> None:
        heap.put_free(self.block, self.count << self.log)


@dataclass(frozen=True, slots=True)
class TableMoved:
    """GNU malloc's ``morecore``: the heap grew past the blocks ``_heapinfo``
    describes, so a table twice as big (``new_size`` bytes) was put at
    ``new_addr`` (``align``, at the top) and the old one at ``old_addr``
    (``old_size`` bytes, whole blocks) is freed like any block."""
    old_addr: int
    old_size: int
    new_addr: int
    new_size: int

    def describe(self) -> str:
        return (f"the block table moved from {self.old_addr:#x} ({nbytes(self.old_size)}) to "
                f"{self.new_addr:#x} ({nbytes(self.new_size)})")

    def addresses(self) -> tuple[int, ...]:
        return (self.new_addr, self.old_addr)

    def edit(self, heap) -> None:
        # the new ``_heapinfo`` is meta; the old one is freed by the events that follow
        heap.put_meta(self.new_addr, self.new_size)


@dataclass(frozen=True, slots=True)
class ChunkPageMade:
    """phkmalloc's ``malloc_make_chunks(bits)``: page ``page`` was cut into
    chunks of ``size`` = ``2**shift`` bytes and put at the head of
    ``page_dir[shift]``.  Its ``pginfo`` is at ``info``: in the page itself
    when it costs at most two chunks ("Don't waste more than two chunks on
    this"), taking its first ``stolen`` chunks, else a chunk of its own
    elsewhere.  The ``total`` chunks left are all free."""
    page: int
    shift: int
    size: int
    total: int
    info: int
    stolen: int

    def describe(self) -> str:
        return (f"cut page {self.page:#x} into {self.total} free chunks of {nbytes(self.size)}"
                + (f" (its bookkeeping took {self.stolen} more)" if self.stolen else ""))

    def addresses(self) -> tuple[int, ...]:
        return tuple(dict.fromkeys((self.page, self.info)))

    def edit(self, heap) -> None:
        # ``stolen`` meta chunks (the pginfo), then ``total`` free chunks
        size = self.size
        heap.put_rows([heap.meta_row(self.page + i * size, size) for i in range(self.stolen)]
                      + [heap.free_row(self.page + i * size, size)
                         for i in range(self.stolen, self.stolen + self.total)])


@dataclass(frozen=True, slots=True)
class ChunkTaken:
    """phkmalloc's ``malloc_bytes``: chunk ``index`` (at ``addr``, ``size``
    bytes) of page ``page``, the head of ``page_dir[shift]``, taken: the first
    set bit of the page's bitmap, found in its ``words``-th 32-bit word
    ("Find first word of bitmap which isn't empty"), cleared."""
    page: int
    shift: int
    index: int
    addr: int
    size: int
    words: int

    def describe(self) -> str:
        return f"took chunk {self.index} at {self.addr:#x} ({nbytes(self.size)}) of page {self.page:#x}"

    def addresses(self) -> tuple[int, ...]:
        return (self.addr, self.page)

    def edit(self, heap) -> None:
        # used if the books have its payload, else meta (a pginfo or pgfree)
        heap.put_taken(self.addr, self.size)


@dataclass(frozen=True, slots=True)
class ChunkFreed:
    """phkmalloc's ``free_bytes``: chunk ``index`` (at ``addr``, ``size``
    bytes) of page ``page`` is free again: its bit is set."""
    page: int
    shift: int
    index: int
    addr: int
    size: int

    def describe(self) -> str:
        return f"chunk {self.index} at {self.addr:#x} ({nbytes(self.size)}) of page {self.page:#x} is free"

    def addresses(self) -> tuple[int, ...]:
        return (self.addr, self.page)

    def edit(self, heap) -> None:
        heap.put_free(self.addr, self.size)


@dataclass(frozen=True, slots=True)
class ChunkPageLinked:
    """phkmalloc's ``free_bytes``: page ``page`` had no free chunk and now
    has one, so it goes back on ``page_dir[shift]``, right after ``after``
    (None: at the head).  The original's walk ("Insert in address order")
    stops one page early, so the list is only nearly in address order."""
    changes_blocks = False
    page: int
    shift: int
    after: int | None

    def describe(self) -> str:
        place = "at the head" if self.after is None else f"after {self.after:#x}"
        return (f"page {self.page:#x} has a free chunk again: back on its list of "
                f"{nbytes(1 << self.shift)} chunks, {place}")

    def addresses(self) -> tuple[int, ...]:
        return tuple(a for a in (self.page, self.after) if a is not None)


@dataclass(frozen=True, slots=True)
class ChunkPageUnlinked:
    """phkmalloc: page ``page`` left ``page_dir[shift]``: its last free chunk
    was taken (``malloc_bytes``: "If there are no more free, remove from
    free-list") or all its chunks are free and the page goes back to the free
    pages (``free_bytes``: "Find & remove this page in the queue")."""
    changes_blocks = False
    page: int
    shift: int

    def describe(self) -> str:
        return f"page {self.page:#x} left the list of pages of {nbytes(1 << self.shift)} chunks"

    def addresses(self) -> tuple[int, ...]:
        return (self.page,)


@dataclass(frozen=True, slots=True)
class ChunkPageDissolved:
    """phkmalloc's ``free_bytes``: every chunk of page ``page`` is free, so it
    is a plain page again (``page_dir[...] = MALLOC_FIRST``) of ``pagesize``
    bytes, about to be freed with ``free_pages``; an outside ``pginfo`` is
    freed too."""
    page: int
    shift: int
    pagesize: int

    def describe(self) -> str:
        return f"every chunk of page {self.page:#x} is free: it is a plain page again"

    def addresses(self) -> tuple[int, ...]:
        return (self.page,)

    def edit(self, heap) -> None:
        # one meta block until the events that follow free it
        heap.put_meta(self.page, self.pagesize)


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
