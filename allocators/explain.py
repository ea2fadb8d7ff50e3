"""A step's events in words: what the explain panel lists and ``heapscope
inspect`` prints.

:func:`explain_step` turns the events of one :class:`~allocators.events.OpRecord`
into :class:`ExplainedEvent` lines, in order.  Each line carries the event, its
text, and the block addresses it names (so a click on the line can select the
block on the map and in the structure view).

Words come first from the strategy (:meth:`Strategy.explain_events`, which
by default asks :meth:`Strategy.explain_event` for each event: there a policy
says things its own way, "R1: AVAIL[10] empty", "mapping_search(239): rounded
to 240, class (0, 30)"; ``explain_events`` sees the whole step, for the words
that depend on where an event falls, such as Knuth's R2 against S2), then
from the generic phrases below, which say what any event means in any policy.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from . import events as ev


@dataclass(frozen=True)
class ExplainedEvent:
    """One line of the explain panel."""
    index: int                  # position of the event in the step (0-based)
    event: object               # the event itself
    text: str                   # the line, in the policy's words
    addrs: tuple[int, ...]      # block addresses the line names, the main one first

    @property
    def type(self) -> str:
        return type(self.event).__name__


def explain_step(strategy, record) -> list[ExplainedEvent]:
    """The events of ``record`` (the strategy's record of one operation) in words."""
    if record is None or record.events is None:
        return []
    events = record.events
    texts = strategy.explain_events(events) if strategy is not None else [None] * len(events)
    return [ExplainedEvent(i, event, text or describe_event(event), event_addresses(event))
            for i, (event, text) in enumerate(zip(events, texts))]


def event_addresses(event) -> tuple[int, ...]:
    """Block addresses an event names, the one it is mostly about first."""
    if isinstance(event, ev.PointerMove):
        return tuple(a for a in (event.new, event.old) if a is not None)
    if isinstance(event, ev.Coalesce):
        return (event.low_addr, event.high_addr)
    if isinstance(event, ev.Split):
        return (event.taken_addr, event.rest_addr)
    if isinstance(event, ev.Grow):
        return (event.old_brk,)
    if isinstance(event, ev.BuddySplit):
        return (event.addr, event.buddy)
    if isinstance(event, ev.BuddyMerge):
        return (event.addr, event.buddy)
    if isinstance(event, ev.AvailProbe):
        return () if event.first is None else (event.first,)
    if isinstance(event, ev.InsertionPoint):
        return tuple(a for a in (event.addr, event.prev, event.next) if a is not None)
    if isinstance(event, ev.TreeJoin):
        return tuple(dict.fromkeys(a for a in (event.root, event.left, event.right) if a is not None))
    if isinstance(event, ev.Rotation):
        return tuple(a for a in (event.addr, event.parent, event.grandparent) if a is not None)
    if isinstance(event, (ev.ChunkTaken, ev.ChunkFreed)):
        return (event.addr, event.page)
    if isinstance(event, ev.ChunkPageMade):
        return tuple(dict.fromkeys((event.page, event.info)))
    if isinstance(event, (ev.ChunkPageLinked, ev.FragLinked)):
        first = event.page if isinstance(event, ev.ChunkPageLinked) else event.addr
        return tuple(a for a in (first, event.after) if a is not None)
    if isinstance(event, (ev.ChunkPageUnlinked, ev.ChunkPageDissolved)):
        return (event.page,)
    if isinstance(event, (ev.BlockFragmented, ev.FragBlockEmptied)):
        return (event.block,)
    if isinstance(event, ev.TableMoved):
        return (event.new_addr, event.old_addr)
    if isinstance(event, ev.TopExtended):
        return (event.addr,)
    if isinstance(event, ev.ArenaExtended):
        return tuple(a for a in (event.addr, event.top, event.old_top) if a is not None)
    if isinstance(event, ev.Shrink):
        return ()
    out = []
    for f in fields(event):
        if f.name in ("addr", "parent", "replaced_by") or f.name.endswith("_addr"):
            value = getattr(event, f.name)
            if isinstance(value, int):
                out.append(value)
    return tuple(out)


def _b(n: int) -> str:
    return f"{n} B"


def nbytes(n: int) -> str:
    """'512 B': how every line says a size."""
    return f"{n} B"


def at(addr: int | None, none: str = "NULL") -> str:
    """An address as the lines write it (0x1a40), ``none`` for None."""
    return none if addr is None else f"{addr:#x}"


def count(n: int, unit: tuple[str, str] | str) -> str:
    """'1 free block', '3 free blocks'; ``unit`` is (singular, plural) or a
    noun made plural with an s."""
    one, many = unit if isinstance(unit, tuple) else (unit, unit + "s")
    return f"{n} {one if n == 1 else many}"


def times(n: int) -> str:
    """'once', 'twice', '3 times'."""
    return {1: "once", 2: "twice"}.get(n, f"{n} times")


def describe_event(event) -> str:
    """Generic words for an event, true of any policy."""
    if isinstance(event, ev.Visit):
        if event.busy:
            return f"passed busy block {event.addr:#x} ({_b(event.size)})"
        if event.place:
            tail = ": the block goes here" if event.fits else ""
            return f"walked past free block {event.addr:#x} ({_b(event.size)}) to the freed block's place{tail}"
        verdict = "big enough" if event.fits else "too small"
        return f"examined free block {event.addr:#x} ({_b(event.size)}): {verdict}"
    if isinstance(event, ev.WalkStep):
        tail = ": the new memory goes after it" if event.stop else ""
        return f"walked past free block {event.addr:#x} ({_b(event.size)}) to file the new memory{tail}"
    if isinstance(event, ev.InsertionPoint):
        return (f"block {event.addr:#x} ({_b(event.size)}) belongs between {at(event.prev, 'the start')} "
                f"and {at(event.next, 'the end')} in address order")
    if isinstance(event, ev.TreeJoin):
        if event.left is not None and event.right is not None:
            return (f"joined the subtrees: {event.root:#x}, the least node of the right subtree, "
                    f"took the left subtree {event.left:#x} as its left child and is the root")
        if event.root is None:
            return "the tree is empty"
        return f"its only subtree, rooted at {event.root:#x}, is the tree now"
    if isinstance(event, ev.Split):
        return (f"split {event.addr:#x} ({_b(event.size)}): {_b(event.taken_size)} at "
                f"{event.taken_addr:#x} for the request, {_b(event.rest_size)} at {event.rest_addr:#x} stays free")
    if isinstance(event, ev.Coalesce):
        return (f"joined free neighbours {event.low_addr:#x} ({_b(event.low_size)}) and "
                f"{event.high_addr:#x} ({_b(event.high_size)}) into {_b(event.size)} at {event.low_addr:#x}")
    if isinstance(event, ev.Grow):
        return f"grew the heap: sbrk({event.increment}) returned {event.old_brk:#x}"
    if isinstance(event, ev.GrowFailed):
        return f"could not grow the heap by {_b(event.increment)} (out of memory)"
    if isinstance(event, ev.PointerMove):
        old = "the start" if event.old is None else f"{event.old:#x}"
        new = "the start" if event.new is None else f"{event.new:#x}"
        return f"{event.name} moved from {old} to {new}"
    if isinstance(event, ev.Placed):
        return (f"placed the request ({_b(event.request)}) in block {event.addr:#x} of "
                f"{_b(event.size)}; payload at {event.payload:#x}")
    if isinstance(event, ev.Released):
        return f"released block {event.addr:#x} ({_b(event.size)})"
    if isinstance(event, ev.Rotation):
        return f"splay step {event.kind} on the node of size {event.key} at {event.addr:#x}"
    if isinstance(event, ev.MappingSearch) and event.request is not None and event.request != event.rounded:
        return (f"mapping_search({event.request}): rounded to {event.rounded}, "
                f"class ({event.fl}, {event.sl})")
    if isinstance(event, ev.BuddySplit):
        return (f"split the block of order {event.order} at {event.addr:#x}; its upper half "
                f"{event.buddy:#x} goes on AVAIL[{event.order - 1}]")
    if isinstance(event, ev.BuddyMerge):
        return (f"merged {event.addr:#x} with its buddy {event.buddy:#x} into a block of "
                f"order {event.order + 1}")
    if isinstance(event, ev.AvailProbe):
        if event.first is None:
            return f"AVAIL[{event.order}] is empty"
        return f"AVAIL[{event.order}] holds {event.first:#x} at its front"
    if isinstance(event, ev.BitmapProbe):
        found = "nothing" if event.found is None else f"list {event.found}"
        return f"looked at the {event.level} bitmap from ({event.fl}, {event.sl}): found {found}"
    if isinstance(event, ev.MappingSearch):
        return (f"mapping_search({event.size}): rounded to {event.rounded}, "
                f"class ({event.fl}, {event.sl})")
    if isinstance(event, ev.ListInsert):
        return f"pushed {event.addr:#x} ({_b(event.size)}) on list {_where(event.where)}"
    if isinstance(event, ev.ListRemove):
        return f"took {event.addr:#x} ({_b(event.size)}) off list {_where(event.where)}"
    if isinstance(event, ev.TreeInsert):
        if event.side == "root":
            return f"put {event.addr:#x} ({_b(event.size)}) in the empty tree as its root"
        if event.side == "list":
            return f"hung {event.addr:#x} ({_b(event.size)}) in the size list of node {event.parent:#x}"
        return f"put {event.addr:#x} ({_b(event.size)}) in the tree as the {event.side} child of {event.parent:#x}"
    if isinstance(event, ev.TreeRemove):
        tail = "" if event.replaced_by is None else f"; {event.replaced_by:#x} of its list takes its place"
        return f"took {event.addr:#x} ({_b(event.size)}) out of the tree{tail}"
    if isinstance(event, ev.BucketRefill):
        return (f"bucket {event.bucket} was empty: carved {event.count} blocks of "
                f"{_b(event.block_size)} from {event.addr:#x}")
    if isinstance(event, ev.Shrink):
        return (f"gave {_b(event.decrement)} back to the system: the break went down from "
                f"{event.old_brk:#x} to {event.old_brk - event.decrement:#x}")
    if isinstance(event, ev.TopExtended):
        return (f"the last free block {event.addr:#x} ({_b(event.old_size)}) ends at the break: "
                f"it grew by {_b(event.added)} of new memory to {_b(event.size)}")
    if isinstance(event, ev.ArenaExtended):
        old = "the static top" if event.old_top is None else f"the old top word {event.old_top:#x}"
        return (f"{old} now leads into the new memory: a free block of {_b(event.size)} at "
                f"{event.addr:#x}, the new top word at {event.top:#x}")
    if isinstance(event, ev.BlockFragmented):
        return (f"cut block {event.block:#x} into {event.count} fragments of {_b(1 << event.log)}; "
                f"all but the first went on the fragment list of {_b(1 << event.log)}")
    if isinstance(event, ev.FragLinked):
        return (f"linked fragment {event.addr:#x} ({_b(event.size)}) after {event.after:#x}, "
                f"a free fragment of the same block")
    if isinstance(event, ev.FragBlockEmptied):
        return (f"every fragment of block {event.block:#x} is free: its {event.count - 1} other "
                f"fragments left the fragment list of {_b(1 << event.log)} and the block is freed whole")
    if isinstance(event, ev.TableMoved):
        return (f"the block table moved from {event.old_addr:#x} ({_b(event.old_size)}) to "
                f"{event.new_addr:#x} ({_b(event.new_size)})")
    if isinstance(event, ev.ChunkPageMade):
        return (f"cut page {event.page:#x} into {event.total} free chunks of {_b(event.size)}"
                + (f" (its bookkeeping took {event.stolen} more)" if event.stolen else ""))
    if isinstance(event, ev.ChunkTaken):
        return f"took chunk {event.index} at {event.addr:#x} ({_b(event.size)}) of page {event.page:#x}"
    if isinstance(event, ev.ChunkFreed):
        return f"chunk {event.index} at {event.addr:#x} ({_b(event.size)}) of page {event.page:#x} is free"
    if isinstance(event, ev.ChunkPageLinked):
        where = "at the head" if event.after is None else f"after {event.after:#x}"
        return f"page {event.page:#x} has a free chunk again: back on its list of {_b(1 << event.shift)} chunks, {where}"
    if isinstance(event, ev.ChunkPageUnlinked):
        return f"page {event.page:#x} left the list of pages of {_b(1 << event.shift)} chunks"
    if isinstance(event, ev.ChunkPageDissolved):
        return f"every chunk of page {event.page:#x} is free: it is a plain page again"
    if isinstance(event, ev.Note):
        return event.text
    return repr(event)


def _where(where: tuple) -> str:
    return "(" + ", ".join(str(w) for w in where) + ")" if len(where) != 1 else f"{where[0]}"
