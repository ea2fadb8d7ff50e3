"""Following a free structure from a step's events alone.

Given the structure before a step (``Strategy.structure()``, see
:mod:`allocators.structure`) and the step's events, :class:`StructureReplay`
rebuilds the structure after it, event by event.  It is the executable form
of what the events promise in ``docs/structure.md``: a view that animates a
step, or shows it event by event, can trust them to say every change.  The
tests replay every step of random traces this way and compare the result with
``structure()`` after the step.

What is replayed, kind by kind (:func:`replayable` picks the same keys out of
a real ``structure()`` answer, so the two compare with ``==``):

``address-ring`` (K&R)
    ``free_list`` (address order), ``rover``, ``sizes``.  ListInsert links a
    block at its address place, ListRemove unlinks it, PointerMove 'rover'
    moves the rover.
``ring`` (Kruse)
    ``free_list`` from the head, in ring order; ``head``; ``sizes``.
    ListInsert puts the block just before the head (Kruse's LIFO push; the
    PointerMove that follows makes it the head), ListRemove unlinks it
    wherever it is, PointerMove 'head' moves the head.  Between the unlink
    of the block at the head and the head's move (mid-step only, with
    ``result(strict=False)``), ``free_list`` starts at the block after it;
    between a push on an empty ring and the head's move onto it, at that block.
``tree`` (Vmbest splay)
    ``root``, ``nodes`` (every node with its children and size list),
    ``wilderness`` (the only ``outside`` block), ``sizes``: TreeInsert,
    TreeRemove, Rotation, TreeJoin and PointerMove 'wilderness' rebuild the
    tree exactly, rotation by rotation.  Between a node's removal and its
    TreeJoin (mid-step only) ``root`` is None, ``subtrees`` names the tops of
    the two subtrees, and ``nodes`` holds both, left one first: still in
    order of size.
``buddy`` (Knuth)
    ``avail`` (non-empty lists, front first) and their ``sizes``: ListInsert
    pushes at the front, ListRemove unlinks.
``tlsf``
    ``lists`` (head first), ``fl_bitmap`` and ``sl_bitmap`` (as the lists
    imply them) and ``sizes``.
``buckets`` (4.3BSD)
    ``buckets`` (non-empty, head first) and their ``sizes``: ListInsert,
    ListRemove and BucketRefill (the carved blocks become the whole list).
``bins`` (dlmalloc 2.6)
    ``bins`` (non-empty, front first), ``binblocks``, ``last_remainder``,
    ``top``, ``mapped`` and the ``sizes`` of the chunks in bins, the last
    remainder and top.  ListInsert files a chunk as ``frontlink`` does (the
    front of a small bin; in a large bin before the first chunk not larger),
    ListRemove unlinks it, BinmapChange sets or clears a bit, PointerMove
    'last_remainder' and 'top' move those, Trim shrinks top, Mapped and
    Unmapped add and remove regions.
``size-classes`` (segregated first fit)
    ``lists`` (non-empty, head first) and their ``sizes``: ListInsert pushes
    at the head, or at the block's address place when ``order`` is
    ``"address"``; ListRemove unlinks.
``arena-ring`` (V7)
    ``ring`` (every block with its size and state), ``rover``, ``top`` and
    ``sizes``: Coalesce joins two idle neighbours, Split cuts an idle block in
    two idle ones, Placed marks a block busy, Released idle, ArenaExtended
    adds the new idle block and top word (the old top word turning idle),
    PointerMove 'allocp' moves the rover.
``page-directory`` (phkmalloc)
    ``free_runs``, ``chunk_lists`` (non-empty, head first), ``chunk_free``
    (each chunk page's free chunks, in address order) and ``sizes`` (of the
    runs and of the listed pages' chunks: a page taken off its list to be
    dissolved names none): the
    free-page list follows ListInsert/ListRemove (``where = ()``), Split (the
    run keeps its place, its front taken), Coalesce (a run joined by the pages
    before or after it) and Shrink (the last run cut at the break); the chunk
    pages follow ChunkPageMade, ChunkTaken, ChunkFreed, ChunkPageLinked,
    ChunkPageUnlinked and ChunkPageDissolved.
``block-table`` (GNU malloc)
    ``free_clusters``, ``heapindex``, ``fraglists`` (non-empty, head first)
    and ``sizes``: clusters as phkmalloc's runs, plus TopExtended; fragments
    follow ListInsert/ListRemove with ``where = (log,)``, FragLinked,
    BlockFragmented and FragBlockEmptied; PointerMove '_heapindex'.

Not replayed: the page directory's and the block table's page and block
maps (``pages``, ``blocks``, the pginfo and fragment counts: the heap walk
says those), the generic ``lists`` kind (a user strategy promises no events),
the buddy's ``chunks`` and ``blocks`` (the heap walk says those), and the
uncarved tail of a fixed pool that buddy and BSD buckets keep in ``outside``
(it shrinks under a Note, not a structure event).

Sizes come from the events that name a block with its size (ListInsert,
Visit, Split, Coalesce, BuddySplit, ...); a block no event resized keeps its
size from the structure before.
"""

from __future__ import annotations

from bisect import insort

from . import events as ev
from . import structure as st
from .dlmalloc import BinmapChange, Mapped, Trim, Unmapped

#: the kinds :class:`StructureReplay` can follow
REPLAYABLE_KINDS = ("address-ring", "ring", "tree", "buddy", "tlsf", "buckets", "bins", "size-classes",
                    "arena-ring", "page-directory", "block-table")


class ReplayError(AssertionError):
    """An event does not fit the structure it is replayed on (a block inserted
    twice, a rotation naming the wrong parent...): the events lie or are missing."""


def replayable(structure: dict) -> dict:
    """The part of a ``structure()`` answer that :class:`StructureReplay`
    rebuilds, in the same form, for comparison."""
    kind = structure["kind"]
    if kind not in REPLAYABLE_KINDS:
        raise ValueError(f"the {kind!r} structure cannot be replayed from events")
    out: dict = {"kind": kind}
    if kind == "address-ring":
        out["free_list"] = list(structure["free_list"])
        out["rover"] = structure["rover"]
        held = out["free_list"]
    elif kind == "ring":
        out["free_list"] = list(structure["free_list"])
        out["head"] = structure["head"]
        held = out["free_list"]
    elif kind == "tree":
        out["root"] = structure["root"]
        out["nodes"] = [dict(n, blocks=list(n["blocks"])) for n in structure["nodes"]]
        out["wilderness"] = structure["wilderness"]
        held = [a for n in structure["nodes"] for a in n["blocks"]]
        if structure["wilderness"] is not None:
            held.append(structure["wilderness"])
    elif kind == "buddy":
        out["avail"] = {int(k): list(v) for k, v in structure["avail"].items() if v}
        held = [a for v in out["avail"].values() for a in v]
    elif kind == "tlsf":
        out["lists"] = {k: list(v) for k, v in structure["lists"].items()}
        out["fl_bitmap"] = structure["fl_bitmap"]
        out["sl_bitmap"] = list(structure["sl_bitmap"])
        held = [a for v in out["lists"].values() for a in v]
    elif kind == "bins":
        out["bins"] = {int(k): list(v) for k, v in structure["bins"].items() if v}
        out["binblocks"] = structure["binblocks"]
        out["last_remainder"] = structure["last_remainder"]
        out["top"] = structure["top"]
        out["mapped"] = [dict(m) for m in structure["mapped"]]
        held = [a for v in out["bins"].values() for a in v]
        held += [a for a in (structure["last_remainder"], structure["top"]) if a is not None]
    elif kind == "size-classes":
        out["lists"] = {int(k): list(v) for k, v in structure["lists"].items() if v}
        held = [a for v in out["lists"].values() for a in v]
    elif kind == "arena-ring":
        out["ring"] = [list(b) for b in structure["ring"]]
        out["rover"] = structure["rover"]
        out["top"] = structure["top"]
        held = [a for a, _, state in structure["ring"] if state == "free"]
    elif kind == "page-directory":
        out["free_runs"] = list(structure["free_runs"])
        out["chunk_lists"] = {int(j): list(v) for j, v in structure["chunk_lists"].items() if v}
        out["chunk_free"] = {int(p): list(info["free_chunks"]) for p, info in structure["chunk_pages"].items()}
        listed = {p for v in out["chunk_lists"].values() for p in v}
        held = out["free_runs"] + [a for p, v in out["chunk_free"].items() if p in listed for a in v]
    elif kind == "block-table":
        out["free_clusters"] = list(structure["free_clusters"])
        out["heapindex"] = structure["heapindex"]
        out["fraglists"] = {int(k): list(v) for k, v in structure["fraglists"].items() if v}
        held = out["free_clusters"] + [a for v in out["fraglists"].values() for a in v]
    else:  # buckets
        out["buckets"] = {int(k): list(v) for k, v in structure["buckets"].items() if v}
        held = [a for v in out["buckets"].values() for a in v]
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
        kind = before["kind"]
        if kind not in REPLAYABLE_KINDS:
            raise ValueError(f"the {kind!r} structure cannot be replayed from events")
        self.kind = kind
        self._sizes_before = dict(before["sizes"])
        self.known: dict[int, int] = {}
        if kind == "address-ring":
            self.members = set(before["free_list"])
            self.pointer = before["rover"]
        elif kind == "ring":
            ring = list(before["free_list"])
            self.nxt = {a: ring[(i + 1) % len(ring)] for i, a in enumerate(ring)}
            self.prv = {a: ring[i - 1] for i, a in enumerate(ring)}
            self.pointer = before["head"]
        elif kind == "tree":
            self.left: dict[int, int | None] = {}
            self.right: dict[int, int | None] = {}
            self.parent: dict[int, int | None] = {}
            self.size_list: dict[int, list[int]] = {}
            self.member_of: dict[int, int] = {}
            for n in before["nodes"]:
                x = n["addr"]
                self.left[x], self.right[x] = n["left"], n["right"]
                self.parent.setdefault(x, None)
                for child in (n["left"], n["right"]):
                    if child is not None:
                        self.parent[child] = x
                self.size_list[x] = list(n["blocks"][1:])
                for m in n["blocks"][1:]:
                    self.member_of[m] = x
            self.root = before["root"]
            self.pointer = before["wilderness"]
            self.pending_join: tuple | None = None
        elif kind == "arena-ring":
            self.arena = {a: [size, state] for a, size, state in before["ring"]}
            self.pointer = before["rover"]
            self.top = before["top"]
        elif kind == "page-directory":
            sizes = before["sizes"]
            self.runs = {a: sizes[a] for a in before["free_runs"]}
            self.lists = {int(j): list(v) for j, v in before["chunk_lists"].items() if v}
            self.chunk_size = {int(p): info["size"] for p, info in before["chunk_pages"].items()}
            self.chunk_free = {int(p): set(info["free_chunks"]) for p, info in before["chunk_pages"].items()}
        elif kind == "block-table":
            sizes = before["sizes"]
            self.runs = {a: sizes[a] for a in before["free_clusters"]}
            self.lists = {int(k): list(v) for k, v in before["fraglists"].items() if v}
            self.pointer = before["heapindex"]
        else:
            lists = {"buddy": "avail", "tlsf": "lists", "buckets": "buckets", "bins": "bins",
                     "size-classes": "lists"}[kind]
            self.lists: dict = {self._key(k): list(v) for k, v in before[lists].items() if v}
            if kind == "tlsf":
                self.fl_count = len(before["sl_bitmap"])
            elif kind == "bins":
                self.binblocks = before["binblocks"]
                self.last_remainder = before["last_remainder"]
                self.top = before["top"]
                self.mapped = {m["addr"]: dict(m) for m in before["mapped"]}
            elif kind == "size-classes":
                self.address_ordered = before["order"] == "address"

    # ------------------------------------------------------------ events
    def apply(self, event) -> None:
        """Follow one event."""
        self._note_sizes(event)
        kind = self.kind
        if kind == "address-ring":
            self._address_ring(event)
        elif kind == "ring":
            self._ring(event)
        elif kind == "tree":
            self._tree(event)
        elif kind == "bins":
            self._bins(event)
        elif kind == "arena-ring":
            self._arena_ring(event)
        elif kind == "page-directory":
            if not self._runs(event):
                self._chunk_pages(event)
        elif kind == "block-table":
            if not self._runs(event):
                self._fragments(event)
        else:
            self._segregated(event)

    def _note_sizes(self, e) -> None:
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

    def _move(self, e, name: str) -> None:
        if e.old != self.pointer:
            raise ReplayError(f"{name} moves from {_hex(e.old)} but it points at {_hex(self.pointer)}")
        self.pointer = e.new

    def _address_ring(self, e) -> None:
        if isinstance(e, ev.ListInsert):
            if e.addr in self.members:
                raise ReplayError(f"{e.addr:#x} is linked into the ring twice")
            self.members.add(e.addr)
        elif isinstance(e, ev.ListRemove):
            if e.addr not in self.members:
                raise ReplayError(f"{e.addr:#x} is unlinked but is not on the ring")
            self.members.discard(e.addr)
        elif isinstance(e, ev.PointerMove) and e.name == "rover":
            self._move(e, "the rover")

    def _ring(self, e) -> None:
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
            self._move(e, "the head")

    def _arena_ring(self, e) -> None:
        arena = self.arena

        def block(a, state, what):
            b = arena.get(a)
            if b is None or b[1] != state:
                raise ReplayError(f"{what} {_hex(a)}, which is not a {state} block of the arena")
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
            self._move(e, "allocp")
        elif isinstance(e, ev.ArenaExtended):
            if e.old_top is not None:
                if e.old_top != self.top:
                    raise ReplayError(f"the arena grows after {e.old_top:#x}, but its top is {_hex(self.top)}")
                arena[e.old_top][1] = "free"
            elif self.top is not None:
                raise ReplayError("the arena grows from the static top, but it has a top word in the heap")
            arena[e.addr] = [e.size, "free"]
            arena[e.top] = [e.top_size, "top"]
            self.top = e.top

    def _runs(self, e) -> bool:
        """Free runs or clusters on one address-ordered list (phkmalloc's
        free-page list, GNU malloc's clusters); True if ``e`` was one of theirs."""
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
                                  f"{_hex(e.addr)} as {size} B")
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

    def _chunk_pages(self, e) -> None:
        lists, free = self.lists, self.chunk_free
        if isinstance(e, ev.ChunkPageMade):
            if e.page in free:
                raise ReplayError(f"page {e.page:#x} is cut into chunks twice")
            free[e.page] = {e.page + (e.stolen + i) * e.size for i in range(e.total)}
            self.chunk_size[e.page] = e.size
            lists.setdefault(e.shift, []).insert(0, e.page)
        elif isinstance(e, (ev.ChunkTaken, ev.ChunkFreed)):
            chunks = free.get(e.page)
            if chunks is None or (e.addr in chunks) != isinstance(e, ev.ChunkTaken):
                raise ReplayError(f"chunk {e.addr:#x} of page {e.page:#x} is "
                                  f"{'taken' if isinstance(e, ev.ChunkTaken) else 'freed'} twice")
            if isinstance(e, ev.ChunkTaken):
                chunks.remove(e.addr)
            else:
                chunks.add(e.addr)
        elif isinstance(e, ev.ChunkPageLinked):
            lst = lists.setdefault(e.shift, [])
            if e.page in lst or (e.after is not None and e.after not in lst):
                raise ReplayError(f"page {e.page:#x} goes on page_dir[{e.shift}] after {_hex(e.after)}")
            lst.insert(0 if e.after is None else lst.index(e.after) + 1, e.page)
        elif isinstance(e, ev.ChunkPageUnlinked):
            lst = lists.get(e.shift, [])
            if e.page not in lst:
                raise ReplayError(f"page {e.page:#x} leaves page_dir[{e.shift}] but is not on it")
            lst.remove(e.page)
            if not lst:
                del lists[e.shift]
        elif isinstance(e, ev.ChunkPageDissolved):
            if free.pop(e.page, None) is None:
                raise ReplayError(f"page {e.page:#x} is no chunk page")
            del self.chunk_size[e.page]

    def _fragments(self, e) -> None:
        lists = self.lists
        if isinstance(e, ev.ListInsert):
            lists.setdefault(int(e.where[0]), []).insert(0, e.addr)
        elif isinstance(e, ev.ListRemove):
            lst = lists.get(int(e.where[0]), [])
            if e.addr not in lst:
                raise ReplayError(f"fragment {e.addr:#x} leaves _fraghead[{e.where[0]}] but is not on it")
            lst.remove(e.addr)
            if not lst:
                del lists[int(e.where[0])]
        elif isinstance(e, ev.FragLinked):
            lst = lists.get(e.log, [])
            if e.after not in lst or e.addr in lst:
                raise ReplayError(f"fragment {e.addr:#x} goes after {e.after:#x}, which is not on "
                                  f"_fraghead[{e.log}]")
            lst.insert(lst.index(e.after) + 1, e.addr)
        elif isinstance(e, ev.BlockFragmented):
            lst = lists.setdefault(e.log, [])
            for i in range(1, e.count):
                lst.insert(0, e.block + (i << e.log))
        elif isinstance(e, ev.FragBlockEmptied):
            lst = lists.get(e.log, [])
            end = e.block + (e.count << e.log)
            kept = [a for a in lst if not e.block <= a < end]
            if len(lst) - len(kept) != e.count - 1:
                raise ReplayError(f"block {e.block:#x} is emptied but {len(lst) - len(kept)} of its "
                                  f"fragments are on _fraghead[{e.log}], not {e.count - 1}")
            if kept:
                lists[e.log] = kept
            else:
                lists.pop(e.log, None)
        elif isinstance(e, ev.PointerMove) and e.name == "_heapindex":
            self._move(e, "_heapindex")

    def _segregated(self, e) -> None:
        lists = self.lists
        if isinstance(e, ev.ListInsert):
            members = lists.setdefault(self._key(e.where), [])
            if e.addr in members:
                raise ReplayError(f"{e.addr:#x} is put on list {self._key(e.where)} twice")
            if self.kind == "size-classes" and self.address_ordered:
                insort(members, e.addr)
            else:
                members.insert(0, e.addr)
        elif isinstance(e, ev.ListRemove):
            key = self._key(e.where)
            if e.addr not in lists.get(key, ()):
                raise ReplayError(f"{e.addr:#x} is taken off list {key} but is not on it")
            lists[key].remove(e.addr)
            if not lists[key]:
                del lists[key]
        elif isinstance(e, ev.BucketRefill):
            if lists.get(e.bucket):
                raise ReplayError(f"morecore refilled nextf[{e.bucket}], which was not empty")
            lists[e.bucket] = [e.addr + i * e.block_size for i in range(e.count)]

    def _bins(self, e) -> None:
        lists = self.lists
        if isinstance(e, ev.ListInsert):
            i = self._key(e.where)
            chunks = lists.setdefault(i, [])
            if e.addr in chunks:
                raise ReplayError(f"{e.addr:#x} is linked into bin {i} twice")
            at = 0
            if e.size >= 512:     # frontlink: past the larger chunks of a large bin
                while at < len(chunks) and e.size < self._size(chunks[at], True):
                    at += 1
            chunks.insert(at, e.addr)
        elif isinstance(e, ev.ListRemove):
            self._segregated(e)
        elif isinstance(e, BinmapChange):
            bit = 1 << e.block
            if bool(self.binblocks & bit) == e.marked:
                raise ReplayError(f"binblocks bit {e.block} is {'set' if e.marked else 'cleared'} twice")
            self.binblocks ^= bit
        elif isinstance(e, ev.PointerMove) and e.name in ("last_remainder", "top"):
            now = getattr(self, e.name)
            if e.old != now:
                raise ReplayError(f"{e.name} moves from {_hex(e.old)} but is {_hex(now)}")
            setattr(self, e.name, e.new)
        elif isinstance(e, Trim):
            if self.top is None:
                raise ReplayError("a trim with no top")
            self.known[self.top] = self._size(self.top, True) - e.extra
        elif isinstance(e, Mapped):
            self.mapped[e.addr] = {"addr": e.addr, "size": e.size, "payload": e.payload}
        elif isinstance(e, Unmapped):
            if self.mapped.pop(e.addr, None) is None:
                raise ReplayError(f"region {e.addr:#x} is unmapped but was not mapped")

    def _key(self, where):
        if self.kind == "tlsf":
            if isinstance(where, str):
                return where
            return st.tlsf_key(*where)
        return int(where[0]) if isinstance(where, tuple) else int(where)

    # -------------------------------------------------------------- tree
    def _tree(self, e) -> None:
        left, right, parent = self.left, self.right, self.parent
        if isinstance(e, ev.TreeInsert):
            b = e.addr
            if b in left or b in self.member_of:
                raise ReplayError(f"{b:#x} is put in the tree twice")
            if e.side == "list":
                if e.parent not in left:
                    raise ReplayError(f"{b:#x} hangs in the size list of {_hex(e.parent)}, not a node")
                self.size_list[e.parent].insert(0, b)
                self.member_of[b] = e.parent
                return
            if e.side == "root":
                if self.root is not None:
                    raise ReplayError(f"{b:#x} is put in as the root of a tree rooted at {self.root:#x}")
                self.root = b
            else:
                children = left if e.side == "left" else right
                if children.get(e.parent, 0) is not None:
                    raise ReplayError(f"{b:#x} goes {e.side} of {_hex(e.parent)}, which has no free "
                                      f"{e.side} place")
                children[e.parent] = b
            left[b] = right[b] = None
            parent[b] = e.parent
            self.size_list[b] = []
        elif isinstance(e, ev.TreeRemove):
            b = e.addr
            if b in self.member_of:
                self.size_list[self.member_of.pop(b)].remove(b)
                return
            if b != self.root:
                raise ReplayError(f"tree node {b:#x} is removed but the root is {_hex(self.root)}")
            lo, hi = left.pop(b), right.pop(b)
            del parent[b]
            members = self.size_list.pop(b)
            if e.replaced_by is not None:
                if members[:1] != [e.replaced_by]:
                    raise ReplayError(f"{e.replaced_by:#x} replaces {b:#x} but heads no list there")
                m = members[0]
                del self.member_of[m]
                left[m], right[m], parent[m] = lo, hi, None
                for child in (lo, hi):
                    if child is not None:
                        parent[child] = m
                self.size_list[m] = members[1:]
                for rest in members[1:]:
                    self.member_of[rest] = m
                self.root = m
            else:
                if members:
                    raise ReplayError(f"node {b:#x} is removed with its size list {members}")
                for child in (lo, hi):
                    if child is not None:
                        parent[child] = None
                self.root = None
                self.pending_join = (lo, hi)
        elif isinstance(e, ev.Rotation):
            self._rotation(e)
        elif isinstance(e, ev.TreeJoin):
            # the right subtree's top is its least node now, if the join splayed it
            expected = (e.left, e.root if e.left is not None and e.right is not None else e.right)
            if self.pending_join != expected:
                raise ReplayError(f"join of {_hex(e.left)} and {_hex(e.right)} under {_hex(e.root)} "
                                  f"after a removal that left {self.pending_join}")
            root = e.root
            if e.left is not None and e.right is not None:
                if parent[root] is not None or left[root] is not None:
                    raise ReplayError(f"join root {root:#x} is not the top of the right subtree "
                                      f"with no left child")
                left[root] = e.left
                parent[e.left] = root
            elif root != (e.left if e.right is None else e.right):
                raise ReplayError(f"join of one subtree names root {_hex(root)}")
            self.root = root
            self.pending_join = None
        elif isinstance(e, ev.PointerMove) and e.name == "wilderness":
            self._move(e, "the wilderness")

    def _rotation(self, e) -> None:
        left, parent = self.left, self.parent
        x = e.addr
        p = parent.get(x)
        if p != e.parent or p is None:
            raise ReplayError(f"{e.kind} at {x:#x} names parent {_hex(e.parent)}, the tree has {_hex(p)}")
        g = parent[p]
        side = "left" if left[p] == x else "right"
        if g != e.grandparent or side != e.side:
            raise ReplayError(f"{e.kind} at {x:#x} names grandparent {_hex(e.grandparent)} and side "
                              f"{e.side!r}; the tree has {_hex(g)} and {side!r}")
        if e.kind == "zig":
            if g is not None:
                raise ReplayError(f"zig at {x:#x}, whose parent {p:#x} is not the top")
            self._rotate_up(x, p)
        else:
            same = (left[g] == p) == (side == "left")
            if e.kind == "zig-zig" and same:
                self._rotate_up(p, g)
                self._rotate_up(x, p)
            elif e.kind == "zig-zag" and not same:
                self._rotate_up(x, p)
                self._rotate_up(x, g)
            else:
                raise ReplayError(f"{e.kind} at {x:#x} does not match the sides in the tree")
        if parent[x] is None:
            if self.pending_join is None:
                self.root = x
            else:       # the join's splay raised x to the top of the detached right subtree
                self.pending_join = (self.pending_join[0], x)

    def _rotate_up(self, x: int, p: int) -> None:
        left, right, parent = self.left, self.right, self.parent
        g = parent[p]
        if left[p] == x:
            inner = right[x]
            left[p], right[x] = inner, p
        else:
            inner = left[x]
            right[p], left[x] = inner, p
        if inner is not None:
            parent[inner] = p
        parent[p], parent[x] = x, g
        if g is not None:
            if left[g] == p:
                left[g] = x
            else:
                right[g] = x

    # ------------------------------------------------------------ result
    def _size(self, a: int, strict: bool) -> int | None:
        if a in self.known:
            return self.known[a]
        if a in self._sizes_before:
            return self._sizes_before[a]
        if strict:
            raise ReplayError(f"no event gives the size of {a:#x}, and it was not free before")
        return None

    def result(self, strict: bool = True) -> dict:
        """The :func:`replayable` part of the structure at this point.  Mid-step
        a block's size may not be said yet (Vmbest names a new wilderness
        before it examines it): ``strict=False`` gives None for it instead of
        raising."""
        kind = self.kind
        out: dict = {"kind": kind}
        if kind == "address-ring":
            out["free_list"] = held = sorted(self.members)
            out["rover"] = self.pointer
        elif kind == "ring":
            held = []
            head = start = self.pointer
            if head is None and self.nxt and not strict:
                start = next(iter(self.nxt))    # pushed on an empty ring; the head moves next
            elif head is not None and head not in self.nxt:
                dangling = getattr(self, "_off_ring_head", None)
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
            out["free_list"] = held
            out["head"] = head
        elif kind == "tree":
            nodes, held = [], []
            tops = [self.root] if self.pending_join is None else list(self.pending_join)
            for x in (x for top in tops for x in self._in_order(top)):
                blocks = [x] + self.size_list[x]
                held.extend(blocks)
                nodes.append({"addr": x, "key": self._size(x, strict), "blocks": blocks,
                              "left": self.left[x], "right": self.right[x]})
            out["root"] = self.root
            out["nodes"] = nodes
            if self.pending_join is not None:
                # mid-step only: a removal left two subtrees the TreeJoin to come joins
                out["subtrees"] = list(self.pending_join)
            out["wilderness"] = self.pointer
            if self.pointer is not None:
                held.append(self.pointer)
        elif kind == "bins":
            bins = {k: list(v) for k, v in sorted(self.lists.items())}
            out["bins"] = bins
            out["binblocks"] = self.binblocks
            out["last_remainder"] = self.last_remainder
            out["top"] = self.top
            out["mapped"] = [self.mapped[a] for a in sorted(self.mapped)]
            held = [a for v in bins.values() for a in v]
            held += [a for a in (self.last_remainder, self.top) if a is not None]
        elif kind == "page-directory":
            out["free_runs"] = sorted(self.runs)
            out["chunk_lists"] = {j: list(v) for j, v in sorted(self.lists.items()) if v}
            out["chunk_free"] = {p: sorted(v) for p, v in sorted(self.chunk_free.items())}
            sizes = {a: self.runs[a] for a in out["free_runs"]}
            # the free blocks are the free chunks of the listed pages (a page
            # off its list mid-step, about to be dissolved, names none)
            listed = {p for v in out["chunk_lists"].values() for p in v}
            for p, chunks in out["chunk_free"].items():
                if p in listed:
                    for a in chunks:
                        sizes[a] = self.chunk_size[p]
            out["sizes"] = sizes
            return out
        elif kind == "block-table":
            out["free_clusters"] = sorted(self.runs)
            out["heapindex"] = self.pointer
            out["fraglists"] = {k: list(v) for k, v in sorted(self.lists.items()) if v}
            sizes = {a: self.runs[a] for a in out["free_clusters"]}
            for log, addrs in out["fraglists"].items():
                for a in addrs:
                    sizes[a] = 1 << log
            out["sizes"] = sizes
            return out
        elif kind == "arena-ring":
            ring = [[a, *self.arena[a]] for a in sorted(self.arena)]
            out["ring"] = ring
            out["rover"] = self.pointer
            out["top"] = self.top
            out["sizes"] = {a: size for a, size, state in ring if state == "free"}
            return out
        else:
            name = {"buddy": "avail", "tlsf": "lists", "buckets": "buckets", "size-classes": "lists"}[kind]
            if kind == "tlsf":
                lists = {k: list(v) for k, v in sorted(self.lists.items(), key=lambda kv: st.parse_tlsf_key(kv[0]))}
                fl_bitmap, sl_bitmap = 0, [0] * self.fl_count
                for key in lists:
                    fl, sl = st.parse_tlsf_key(key)
                    fl_bitmap |= 1 << fl
                    sl_bitmap[fl] |= 1 << sl
                out["lists"] = lists
                out["fl_bitmap"], out["sl_bitmap"] = fl_bitmap, sl_bitmap
            else:
                lists = {k: list(v) for k, v in sorted(self.lists.items())}
                out[name] = lists
            held = [a for v in lists.values() for a in v]
        out["sizes"] = {a: self._size(a, strict) for a in held}
        return out

    def _in_order(self, top):
        left, right = self.left, self.right
        stack: list[int] = []
        x = top
        seen = 0
        while stack or x is not None:
            while x is not None:
                stack.append(x)
                x = left[x]
            x = stack.pop()
            seen += 1
            if seen > len(left):
                raise ReplayError("the replayed tree has a cycle")
            yield x
            x = right[x]


def _hex(a) -> str:
    return "None" if a is None else f"{a:#x}"
