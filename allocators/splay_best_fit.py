"""Best fit on a splay tree of free blocks keyed by size: Phong Vo's AT&T malloc
(1985-88, the "vsi" of seed 000: "The speed of vsi is due to the use of a splay
tree to maintain free blocks") as it lives on in vmalloc's Vmbest method
(K.-P. Vo, "Vmalloc: A General and Efficient Memory Allocator", Software:
Practice & Experience 26(3), 1996; ``src/lib/libast/vmalloc/vmbest.c`` in AT&T
ast), with the splay tree of Sleator & Tarjan, "Self-Adjusting Binary Search
Trees", JACM 32(3), 1985.

The rules, as simulated here:

* **Tree by size only.**  Free blocks sit in a binary search tree keyed by
  block size.  Blocks of equal size hang in a doubly linked list off the one
  tree node of that size (Vmbest's ``LINK``; a list member keeps its back link
  in its ``left`` word and is not a tree node).
* **Search.**  malloc walks down from the root remembering the smallest size
  >= the request (stopping early on an exact size), then **splays** that node
  to the root and takes it out.  If the node has a size list, its first
  member takes its place in the tree (Vmbest: "head of a link list, use next
  one for root"); otherwise its two subtrees are joined by splaying the least
  node of the right subtree to its top and hanging the left subtree under it
  (Sleator & Tarjan's join).  When nothing in the tree fits, the last node
  examined is splayed instead, as a splay tree does after any access.
* **Splaying** is bottom-up (Sleator & Tarjan's version; Vmbest itself splays
  top-down, which gives the same amortised bound): the node rises by **zig**
  (its parent is the root), **zig-zig** (it and its parent are both left or
  both right children: rotate the grandparent first) or **zig-zag** (rotate
  the parent, then the grandparent) steps.  Each step is a
  :class:`~heapscope.allocators.events.Rotation` event; ``rec.rotations`` counts single
  rotations (zig 1, zig-zig 2, zig-zag 2), Sleator & Tarjan's cost measure,
  apart from the visits (the nodes examined by the search).
* **Wilderness.**  The free block at the top of the heap stays out of the
  tree (Vmbest's ``vd->wild``) and is used only when no tree block fits; if it
  is too small the heap grows by ``sbrk`` of the shortfall rounded up to
  ``chunk`` (4096 bytes by default, vmalloc's ``incr``) and the wilderness is
  extended.
* **Split.**  The request takes the front of the block; the rest becomes a
  free block (a tree leaf, or the new wilderness) when it is at least
  ``MINSIZE + W`` bytes, as Vmbest splits when ``s >= sizeof(Head_t)+BODYSIZE``.
* **free** joins the block with both neighbours at once (the upper one through
  its header, the lower one through the ``PFREE`` bit and the self pointer in
  the last word of a free block, Vmbest's ``LAST(b)``), then inserts the result
  as a **leaf** without splaying (the next search splays), or makes it the
  wilderness when it reaches the top.

Block layout (W = word; one contiguous sbrk heap, so Vmbest's per-block
segment pointer is dropped and the header is one word):

    used block:  [size|BUSY|PFREE] [payload ...................]
    free node:   [size|PFREE] [left] [right] [parent] [link] ... [self]
    list member: [size|PFREE] [prev] [  -  ] [  -   ] [link] ... [self]

``MINSIZE`` = header + the tree node fields = 5 words (header, left, right,
parent, link); a free block also needs its self word, so the least block is
``MINSIZE + W`` = 6 words, rounded up to the alignment (48 bytes on LP64, as
Vmbest's ``sizeof(Block_t)`` there).  Requests are rounded up to a whole
number of alignment units after the header, and to that least block.

Cost: a malloc is O(log n) amortised in the number of distinct free sizes
(splay + join); free is O(1) to coalesce plus a leaf insertion whose depth is
not bounded until the next search splays.

View: the tree with a column of same-size blocks under each node, the search
path lit, the rotations animated step by step; the wilderness drawn apart.
"""

from __future__ import annotations

import struct
from typing import Iterator

from . import structure
from .events import (Coalesce, Grow, Note, Placed, PointerMove, Released, Rotation, Split,
                     TreeInsert, TreeJoin, TreeRemove, Visit)
from .params import MAX_CHUNK, SIZE, Param
from .strategy import META, Block, align_up
from .word_heap import WordHeap

#: header bit: the block is in use (Vmbest's BUSY)
BUSY = 1
#: header bit: the block just below is free (Vmbest's PFREE)
PFREE = 2
#: mask of the size in a header word
SIZE_MASK = -4
#: default least sbrk increment, in bytes (vmalloc's ``incr``: a page)
CHUNK = 4096
#: words of a free tree node after its header: left, right, parent, link
NODE_WORDS = 4
#: the Note that says a malloc's search moves from the tree to the wilderness
WILDERNESS_NOTE = "no block in the tree fits: the wilderness is tried"
#: the build's row of measures (SplayBestFit.measure_row): no largest_free (the
#: max of the two after it) nor the walked it never adds to
ROW_FIELDS = ("heap", "live", "in_use", "headers", "free", "top_free", "largest_below_top",
              "visits", "splits", "merges", "rotations", "grows", "payload")
_ROW = struct.Struct(f"<{len(ROW_FIELDS)}q")


class SplayBestFit(WordHeap):
    """Vo's best fit on a splay tree of sizes with a wilderness block (Vmbest)."""

    #: dicts and lists of ints only: a copy of the heap copies them without looking (state_copy.py)
    flat_state = WordHeap.flat_state + ('left', 'right', 'parent', 'link', 'prev')
    name = "splay-best-fit"
    #: the event types this policy's records can hold (conditions.py: a condition
    #: on another is answered without a replay)
    makes_events = frozenset({"Coalesce", "Grow", "GrowFailed", "Note", "Placed", "PointerMove",
                              "Released", "Rotation", "Split", "TreeInsert", "TreeJoin", "TreeRemove",
                              "Visit"})
    title = "Best fit on a splay tree (Vo, AT&T malloc / Vmbest)"
    citation = ("K.-P. Vo, Vmalloc: A General and Efficient Memory Allocator, SP&E 26(3), 1996 "
                "(Vmbest; AT&T malloc 1985-88); Sleator & Tarjan, JACM 32(3), 1985")

    size_mask = SIZE_MASK

    params = (
        Param("chunk", SIZE, CHUNK, "sbrk increment: the wilderness grows by the shortfall rounded "
              "up to a multiple of it (vmalloc's incr)", low=1, high=MAX_CHUNK),
    )

    def __init__(self, *, chunk: int = CHUNK, **common) -> None:
        super().__init__(chunk=chunk, **common)
        word = self.word
        #: header + left + right + parent + link
        self.minsize = (1 + NODE_WORDS) * word
        #: MINSIZE + the self word, aligned: the least block, and the least leftover that is split off
        self.min_block = align_up(self.minsize + word, self.grain)
        # mem holds the header words of every block and the self words of free blocks.
        # Tree node words, by block address.  ``link`` is also the next-member
        # word of list members, ``prev`` their back link (Vmbest keeps it in LEFT).
        self.left: dict[int, int | None] = {}
        self.right: dict[int, int | None] = {}
        self.parent: dict[int, int | None] = {}
        self.link: dict[int, int | None] = {}
        self.prev: dict[int, int] = {}
        self.root: int | None = None
        #: the free block at the top of the heap, kept out of the tree
        self.wilderness: int | None = None
        #: F, kept for the measures (fragmentation_probe)
        self.free_bytes = 0
        #: the largest size in the tree (0 when empty), kept for the measures:
        #: raised by an insert, found again (the rightmost node) when its node leaves
        self.tree_max = 0
        if self.arena.fixed:
            self._pool_init()

    def _pool_init(self) -> None:
        usable = self._pool_bytes()
        if usable >= self.min_block:
            self.top = self.start + usable
            self.mem[self.start] = usable
            self.mem[self.top - self.word] = self.start
            self.wilderness = self.start
            self.free_bytes = usable

    # ------------------------------------------------------------ malloc
    def _malloc(self, request: int) -> int | None:
        grain = self.grain
        need = (request + self.word + grain - 1) & -grain      # align_up
        if need < self.min_block:
            need = self.min_block
        mem = self.mem
        rec = self.rec
        events = rec.events
        left, right = self.left, self.right
        # Best fit: remember the least size >= need on the way down.
        x = self.root
        best = last = None
        visits = 0
        while x is not None:
            size = mem[x] & SIZE_MASK
            visits += 1
            if events is not None:
                events.append(Visit(x, size, size >= need))
            last = x
            if size == need:
                best = x
                break
            if size > need:
                best = x
                x = left[x]
            else:
                x = right[x]
        rec.visits += visits
        if best is not None:
            if self.parent[best] is not None:
                self._splay(best)
                self.root = best
            size = mem[best] & SIZE_MASK
            self._take_root(size)
            return self._place(best, size, need, request, False)
        if last is not None:
            self._splay(last)
            self.root = last
        # Nothing in the tree fits: the wilderness, extended if need be.
        if events is not None:
            events.append(Note(WILDERNESS_NOTE))
        wild = self.wilderness
        wild_size = 0
        if wild is not None:
            wild_size = mem[wild] & SIZE_MASK
            rec.visits += 1
            if events is not None:
                events.append(Visit(wild, wild_size, wild_size >= need))
        if wild_size < need:
            if not self._extend_wilderness(need - wild_size):
                return None
            wild = self.wilderness
            wild_size = mem[wild] & SIZE_MASK
            self._visit(wild, wild_size, True)
        return self._place(wild, wild_size, need, request, True)

    def _place(self, b: int, size: int, need: int, request: int, from_wild: bool) -> int:
        """Give the front ``need`` bytes of free block ``b`` (already out of the
        tree) to the request; a big enough rest stays free."""
        mem = self.mem
        word = self.word
        events = self.rec.events
        rest = size - need
        if rest >= self.min_block:          # leftover >= MINSIZE + W
            r = b + need
            self.rec.splits += 1
            if events is not None:
                events.append(Split(b, size, b, need, r, rest))
            mem[b] = need | BUSY | (mem[b] & PFREE)
            mem[r] = rest                    # its lower neighbour b is busy: no PFREE
            mem[r + rest - word] = r         # self word (the old one of b, now r's)
            if from_wild:
                self._set_wilderness(r)
            else:
                self._tree_insert(r, rest, False)
        else:
            need = size
            mem[b] |= BUSY
            del mem[b + size - word]
            upper = b + size
            if upper < self.top:
                mem[upper] &= ~PFREE
            if from_wild:
                self._set_wilderness(None)
        self.free_bytes -= need
        payload = b + word
        self._note_alloc(payload, b, need, request, word)
        if events is not None:
            events.append(Placed(b, need, payload, request))
        return payload

    def _extend_wilderness(self, shortfall: int) -> bool:
        """sbrk the shortfall rounded up to ``chunk``; the new memory joins the
        wilderness (or becomes it)."""
        # vmalloc's ROUND(s, r): by division, as chunk need not be a power of two.
        increment = -(-shortfall // self.chunk) * self.chunk
        top = self._grow(increment)
        if top is None:
            return False
        self.free_bytes += increment
        mem, word = self.mem, self.word
        wild = self.wilderness
        if wild is None:
            # The top block is busy (a free top block is always the wilderness).
            mem[top] = increment
            mem[top + increment - word] = top
            self._set_wilderness(top)
        else:
            size = mem[wild] & SIZE_MASK
            if self.rec.events is not None:
                self._event(Coalesce(wild, size, top, increment))
            del mem[top - word]
            mem[wild] = (size + increment) | (mem[wild] & PFREE)
            mem[top + increment - word] = wild
        return True

    def _set_wilderness(self, new: int | None) -> None:
        if new != self.wilderness:
            if self.rec.events is not None:
                self._event(PointerMove("wilderness", self.wilderness, new))
            self.wilderness = new

    # -------------------------------------------------------------- free
    def _free(self, payload: int) -> None:
        b, size, _, _ = self._note_free(payload)
        rec = self.rec
        events = rec.events
        if events is not None:
            events.append(Released(b, size))
        self.free_bytes += size
        mem, word = self.mem, self.word
        header = mem[b]
        if header & PFREE:
            low = mem[b - word]              # the lower block's self word: LAST(b)
            low_size = mem[low] & SIZE_MASK
            self._tree_remove(low, low_size)
            rec.merges += 1
            if events is not None:
                events.append(Coalesce(low, low_size, b, size))
            del mem[b - word], mem[b]
            header = mem[low]
            b = low
            size += low_size
        upper = b + size
        top = self.top
        if upper < top:
            upper_header = mem[upper]
            if not upper_header & BUSY:
                upper_size = upper_header & SIZE_MASK
                # The wilderness joined from below reaches the top: the joined
                # block becomes the wilderness (the PointerMove below).
                if upper != self.wilderness:
                    self._tree_remove(upper, upper_size)
                rec.merges += 1
                if events is not None:
                    events.append(Coalesce(b, size, upper, upper_size))
                del mem[upper]
                size += upper_size
        mem[b] = size | (header & PFREE)
        mem[b + size - word] = b
        upper = b + size
        if upper == top:
            self._set_wilderness(b)
        else:
            mem[upper] |= PFREE
            self._tree_insert(b, size, True)

    # ------------------------------------------------------------ the tree
    def _tree_insert(self, b: int, size: int, count_visits: bool) -> None:
        """Vmbest's leaf insertion: walk down by size; an equal size hangs ``b``
        in that node's list right after the node; no splaying."""
        mem = self.mem
        left, right, parent, link = self.left, self.right, self.parent, self.link
        rec = self.rec
        if size > self.tree_max:
            self.tree_max = size
        x = self.root
        if x is None:
            self.root = b
            left[b] = right[b] = parent[b] = link[b] = None
            if rec.events is not None:
                self._event(TreeInsert(b, size, None, "root"))
            return
        # A free's insertion walk is its search length: counted and shown.
        events = rec.events if count_visits else None
        depth = 0
        while True:
            depth += 1
            node_size = mem[x] & SIZE_MASK
            if size < node_size:
                child = left[x]
                if events is not None:
                    events.append(Visit(x, node_size, child is None, True))
                if child is None:
                    left[x] = b
                    side = "left"
                    break
            elif size > node_size:
                child = right[x]
                if events is not None:
                    events.append(Visit(x, node_size, child is None, True))
                if child is None:
                    right[x] = b
                    side = "right"
                    break
            else:
                if count_visits:
                    rec.visits += depth
                if events is not None:
                    events.append(Visit(x, node_size, True, True))
                first = link[x]
                link[b] = first
                if first is not None:
                    self.prev[first] = b
                link[x] = b
                self.prev[b] = x
                if rec.events is not None:
                    self._event(TreeInsert(b, size, x, "list"))
                return
            x = child
        if count_visits:
            rec.visits += depth
        left[b] = right[b] = link[b] = None
        parent[b] = x
        if rec.events is not None:
            self._event(TreeInsert(b, size, x, side))

    def _tree_remove(self, b: int, size: int) -> None:
        """Take free block ``b`` out of the tree (a neighbour being joined).
        A list member is unlinked in O(1); a tree node is splayed to the root
        and taken there, as Vmbest's REMOVE searches for it."""
        prev = self.prev
        if b in prev:
            before = prev.pop(b)
            after = self.link.pop(b)
            self.link[before] = after
            if after is not None:
                prev[after] = before
            if self.rec.events is not None:
                self._event(TreeRemove(b, size, None))
            return
        if self.parent[b] is not None:
            self._splay(b)
            self.root = b
        self._take_root(size)

    def _take_root(self, size: int) -> None:
        """Remove the root node: its first list member takes its place, or its
        subtrees are joined."""
        left, right, parent, link = self.left, self.right, self.parent, self.link
        events = self.rec.events
        x = self.root
        lo, hi = left.pop(x), right.pop(x)
        del parent[x]
        member = link.pop(x)
        if member is not None:
            # "head of a link list, use next one for root"
            del self.prev[member]
            left[member], right[member], parent[member] = lo, hi, None
            if lo is not None:
                parent[lo] = member
            if hi is not None:
                parent[hi] = member
            self.root = member
            if events is not None:
                events.append(TreeRemove(x, size, member))
            return
        if events is not None:
            events.append(TreeRemove(x, size, None))
        if size == self.tree_max:
            # the largest size left the tree: the next is the rightmost node
            # (larger sizes hang right), walked now, not when the measures ask,
            # so a heap's state is the same whether or not a probe ran
            top = hi if hi is not None else lo
            if top is None:
                self.tree_max = 0
            else:
                while right[top] is not None:
                    top = right[top]
                self.tree_max = self.mem[top] & SIZE_MASK
        if lo is None or hi is None:
            root = hi if lo is None else lo
            if root is not None:
                parent[root] = None
            self.root = root
            if events is not None:
                events.append(TreeJoin(lo, hi, root))
            return
        # Join: splay the least node of the right subtree to its top; it has no
        # left child then, so the left subtree hangs there.
        parent[hi] = None
        parent[lo] = None
        least = hi
        while left[least] is not None:
            least = left[least]
        if least != hi:
            self._splay(least)
        left[least] = lo
        parent[lo] = least
        self.root = least
        if events is not None:
            events.append(TreeJoin(lo, hi, least))

    def _splay(self, x: int) -> None:
        """Bottom-up splay (Sleator & Tarjan 1985): raise ``x`` until it has no
        parent, by zig, zig-zig and zig-zag steps.  The caller makes ``x`` the
        root of whatever (sub)tree it was splayed in.

        Each step's single rotations are written out, for the side ``x`` is on:
        ``near`` is the child map on that side (``left`` when ``x`` is a left
        child), ``far`` the other.  A rotation of a child ``c`` above its parent
        ``d`` moves ``c``'s far subtree under ``d`` (as its near child) and
        ``d`` under ``c`` (as its far child)."""
        parent = self.parent
        p = parent[x]
        if p is None:
            return
        left, right = self.left, self.right
        rec = self.rec
        events = rec.events
        key = self.mem[x] & SIZE_MASK if events is not None else 0
        rotations = 0
        while p is not None:
            g = parent[p]
            x_left = left[p] == x
            near, far = (left, right) if x_left else (right, left)
            if g is None:
                kind = "zig"
                # x above p
                inner = far[x]
                near[p] = inner
                if inner is not None:
                    parent[inner] = p
                far[x] = p
                parent[p] = x
                parent[x] = None
                rotations += 1
            else:
                gg = parent[g]
                if near[g] == p:
                    kind = "zig-zig"
                    # p above g, then x above p
                    inner = far[p]
                    near[g] = inner
                    if inner is not None:
                        parent[inner] = g
                    far[p] = g
                    parent[g] = p
                    inner = far[x]
                    near[p] = inner
                    if inner is not None:
                        parent[inner] = p
                    far[x] = p
                    parent[p] = x
                else:
                    kind = "zig-zag"
                    # x above p, then x above g (p is g's far child)
                    inner = far[x]
                    near[p] = inner
                    if inner is not None:
                        parent[inner] = p
                    inner = near[x]
                    far[g] = inner
                    if inner is not None:
                        parent[inner] = g
                    far[x] = p
                    near[x] = g
                    parent[p] = x
                    parent[g] = x
                parent[x] = gg
                if gg is not None:
                    if left[gg] == g:
                        left[gg] = x
                    else:
                        right[gg] = x
                rotations += 2
            if events is not None:
                events.append(Rotation(kind, key, x, p, g, "left" if x_left else "right"))
            p = parent[x]
        rec.rotations += rotations

    # ----------------------------------------------------------- explain
    def explain_event(self, e) -> str | None:
        """Vmbest's and Sleator & Tarjan's words: node, size list, splay steps,
        join, wilderness."""
        if isinstance(e, Visit):
            if e.place:
                return (f"insert walk: node {e.addr:#x} (size {e.size})"
                        + (": the block goes here" if e.fits else ""))
            return (f"node {e.addr:#x} (size {e.size}): "
                    + ("fits: the best so far, go left" if e.fits else "too small: go right"))
        if isinstance(e, Rotation):
            return _rotation_words(e)
        if isinstance(e, TreeInsert):
            if e.side == "root":
                return f"the tree is empty: {e.addr:#x} (size {e.size}) is its root"
            if e.side == "list":
                return (f"size {e.size} is in the tree: {e.addr:#x} hangs in the size list of node "
                        f"{e.parent:#x}")
            return f"{e.addr:#x} (size {e.size}) is a new leaf, the {e.side} child of {e.parent:#x}"
        if isinstance(e, TreeRemove):
            if e.replaced_by is not None:
                return (f"node {e.addr:#x} (size {e.size}) leaves the tree; {e.replaced_by:#x}, the "
                        "next in its size list, takes its place")
            return f"{e.addr:#x} (size {e.size}) leaves the tree"
        if isinstance(e, TreeJoin):
            if e.left is not None and e.right is not None:
                return (f"join: the least node {e.root:#x} of the right subtree rose to its top; "
                        f"the left subtree {e.left:#x} hangs under it; {e.root:#x} is the root")
            if e.root is None:
                return "join: both subtrees are empty: the tree is empty"
            return f"join: one subtree only: {e.root:#x} is the root"
        if isinstance(e, PointerMove) and e.name == "wilderness":
            return "no wilderness now" if e.new is None else f"wilderness = {e.new:#x}"
        if isinstance(e, Grow):
            return f"the wilderness is too small: sbrk({e.increment}) extends it at {e.old_brk:#x}"
        if isinstance(e, Split):
            return (f"split: {e.taken_size} B at {e.taken_addr:#x} for the request; the rest, "
                    f"{e.rest_size} B at {e.rest_addr:#x}, stays free")
        return None

    def explain_events(self, events: list) -> list[str | None]:
        """The wilderness's examination (after the Note), and whether a
        TreeRemove takes a size-list member or a node (a TreeJoin follows)."""
        out = [self.explain_event(e) for e in events]
        in_wilderness = False
        for i, e in enumerate(events):
            if isinstance(e, Note) and e.text == WILDERNESS_NOTE:
                in_wilderness = True
            elif isinstance(e, Coalesce) and i and isinstance(events[i - 1], Grow):
                out[i] = f"the new memory joins the wilderness {e.low_addr:#x}: {e.size} B"
            elif isinstance(e, TreeJoin) and e.left is not None and e.right is not None \
                    and isinstance(events[i - 1], TreeRemove):
                out[i] = (f"join: {e.root:#x}, the right subtree's root, is its least node already; "
                          f"the left subtree {e.left:#x} hangs under it; {e.root:#x} is the root")
            elif in_wilderness and isinstance(e, Visit):
                out[i] = (f"wilderness {e.addr:#x} ({e.size} B): "
                          + ("big enough: cut from its front" if e.fits else "too small"))
            elif isinstance(e, TreeRemove):
                # In a free, a block leaving the tree is a free neighbour about to be joined.
                joined = any(isinstance(x, Coalesce) and e.addr in (x.low_addr, x.high_addr)
                             for x in events[i + 1:])
                who = "the free neighbour " if joined else ""
                rest = events[i + 1:]
                nxt = next((x for x in rest if not isinstance(x, Rotation)), None)
                if e.replaced_by is not None:
                    out[i] = (f"{who}node {e.addr:#x} (size {e.size}) leaves the tree; {e.replaced_by:#x}, "
                              "the next in its size list, takes its place")
                elif isinstance(nxt, TreeJoin):
                    out[i] = (f"{who}node {e.addr:#x} (size {e.size}) leaves the root; no size list: "
                              "its two subtrees must be joined")
                else:
                    out[i] = f"{who}{e.addr:#x} (size {e.size}) is unlinked from its size list"
        return out

    # ------------------------------------------------------------- views
    def tree_root(self) -> int | None:
        """Address of the root node (None for an empty tree)."""
        return self.root

    def size_list(self, node: int) -> list[int]:
        """The blocks of node ``node``'s size: the node first, then its list."""
        out = [node]
        m = self.link[node]
        while m is not None:
            out.append(m)
            m = self.link[m]
        return out

    def tree(self, node: int | None = -1):
        """The tree (or the subtree at ``node``) as nested ``(size, [addrs],
        left, right)`` tuples, None for an empty subtree; ``addrs`` is the node
        then its size list.  Built without recursion: leaf insertion can make
        paths longer than Python's recursion limit until a search splays them."""
        if node == -1:
            node = self.root
        if node is None:
            return None
        left, right, mem = self.left, self.right, self.mem
        built: dict[int, tuple] = {}
        stack = [(node, False)]
        while stack:
            x, children_done = stack.pop()
            if children_done:
                lo, hi = left[x], right[x]
                built[x] = (mem[x] & SIZE_MASK, self.size_list(x),
                            built.pop(lo) if lo is not None else None,
                            built.pop(hi) if hi is not None else None)
                continue
            stack.append((x, True))
            for child in (left[x], right[x]):
                if child is not None:
                    stack.append((child, False))
        return built[node]

    def structure(self) -> dict:
        """The size tree as a flat in-order list of nodes, each with its list of
        same-size blocks; the wilderness is kept out of the tree."""
        mem, left, right = self.mem, self.left, self.right
        nodes = []
        sizes: dict[int, int] = {}
        for x in self.tree_nodes():
            key = mem[x] & SIZE_MASK
            blocks = self.size_list(x)
            for b in blocks:
                sizes[b] = key
            nodes.append({"addr": x, "key": key, "blocks": blocks, "left": left[x], "right": right[x]})
        wild = self.wilderness
        apart = []
        if wild is not None:
            sizes[wild] = mem[wild] & SIZE_MASK
            apart.append(structure.outside(wild, "wilderness"))
        return structure.make("tree", sizes, pointers=[structure.pointer("wilderness", wild, structure.MARKER)],
                              outside_blocks=apart, root=self.root, nodes=nodes, wilderness=wild)

    def tree_nodes(self) -> Iterator[int]:
        """Tree node addresses in increasing size order (no recursion)."""
        stack: list[int] = []
        x = self.root
        left, right = self.left, self.right
        while stack or x is not None:
            while x is not None:
                stack.append(x)
                x = left[x]
            x = stack.pop()
            yield x
            x = right[x]

    def free_blocks(self) -> Iterator[tuple[int, int]]:
        mem, link = self.mem, self.link
        for node in self.tree_nodes():
            size = mem[node] & SIZE_MASK
            m = node
            while m is not None:
                yield m, size
                m = link[m]
        if self.wilderness is not None:
            yield self.wilderness, mem[self.wilderness] & SIZE_MASK

    def fragmentation_probe(self) -> tuple[int, int, int, int]:
        """(F, largest free block, free block at the break or 0, largest other
        free block): F is kept as a running total, the wilderness is the block
        at the break, and the largest tree block is ``tree_max``, the rightmost
        node's size, booked as nodes come and go (:meth:`_take_root`)."""
        return self._probe()()

    def _probe(self):
        """The fragmentation probe, its containers bound once: a bulk
        replay's lifetime (see :meth:`measure_row`)."""
        s = self
        mem, arena = self.mem, self.arena

        def probe():
            tree_max = s.tree_max
            wild = s.wilderness
            wild_size = mem[wild] & SIZE_MASK if wild is not None else 0
            if s.top == arena.brk:
                return (s.free_bytes, wild_size if wild_size > tree_max else tree_max,
                        wild_size, tree_max)
            # a fixed pool's META tail: nothing touches the break
            below = wild_size if wild_size > tree_max else tree_max
            return s.free_bytes, below, 0, below
        return probe

    def measure_row(self, rec) -> tuple:
        """The build's row (``Strategy.measure_row``) through :meth:`_probe`
        and the counters this policy adds to, rotations among them; a
        subclass gets the default row."""
        if type(self) is not SplayBestFit:
            return super().measure_row(rec)
        s = self
        arena = self.arena
        fixed = arena.fixed
        probe = self._probe()
        pack = _ROW.pack_into

        def write(buf, off, live_bytes, payload):
            free, _, top, below = probe()
            pack(buf, off, s.touched_high - s.touched_low if fixed else arena.brk, live_bytes,
                 s.in_use, s.header_in_use, free, top, below,
                 rec.visits, rec.splits, rec.merges, rec.rotations, rec.grows, payload)
        return ROW_FIELDS, write

    def _in_use(self, header: int) -> bool:
        return bool(header & BUSY)

    def _policy_signature(self) -> tuple:
        return (self.wilderness, self.tree())

    # ------------------------------------------------------------- check
    def _check_structure(self, blocks: list[Block]) -> None:
        fail = self._fail
        mem, word = self.mem, self.word
        left, right, parent, link, prev = self.left, self.right, self.parent, self.link, self.prev
        # Heap walk: header bits, self words, coalescing, wilderness at the top.
        free_size: dict[int, int] = {}
        previous = None
        last = None
        for b in blocks:
            if b.state == META:
                continue
            header = mem[b.addr]
            if b.size < self.min_block or b.size % self.grain:
                fail(False, f"block {b.addr:#x} has size {b.size}: not a multiple of "
                            f"{self.grain} of at least {self.min_block} bytes")
            lower_free = previous is not None and previous.free
            if bool(header & PFREE) != lower_free:
                fail(False, f"block {b.addr:#x} has PFREE {'set' if header & PFREE else 'clear'} "
                            f"but the block below is {'free' if lower_free else 'not free'}")
            if b.free:
                if lower_free:
                    fail(False, f"free neighbours {previous.addr:#x} and {b.addr:#x} were not joined")
                self_word = mem.get(b.end - word)
                if self_word != b.addr:
                    fail(False, f"free block {b.addr:#x}: self word at {b.end - word:#x} "
                                f"holds {self_word!r}")
                free_size[b.addr] = b.size
            previous = last = b
        n_blocks = sum(1 for b in blocks if b.state != META)
        if len(mem) != n_blocks + len(free_size):
            fail(False, f"{len(mem)} words in memory, expected a header x {n_blocks} blocks "
                        f"+ a self word x {len(free_size)} free blocks (a stale word)")
        wild = self.wilderness
        if wild is not None:
            if wild not in free_size:
                fail(False, f"wilderness {wild:#x} is not a free block")
            if last.addr != wild:
                fail(False, f"wilderness {wild:#x} is not the last block (the last is {last.addr:#x})")
        elif last is not None and last.free:
            fail(False, f"the last block {last.addr:#x} is free but is not the wilderness")
        # The tree: order by size, parent links, size lists; each free block once.
        in_tree: set[int] = set()
        nodes: set[int] = set()
        members: set[int] = set()
        root = self.root
        if root is not None and parent.get(root, 0) is not None:
            fail(False, f"root {root:#x} has parent {parent.get(root, 'missing')!r}")
        stack: list[tuple[int, int, float]] = [(root, -1, float("inf"))] if root is not None else []
        while stack:
            x, lo, hi = stack.pop()
            if x in in_tree:
                fail(False, f"block {x:#x} appears twice in the tree (a cycle)")
            if x not in free_size or x == wild:
                fail(False, f"tree node {x:#x} is not a free block"
                            + (" (it is the wilderness)" if x == wild else ""))
            if x not in left or x not in right:
                fail(False, f"tree node {x:#x} has no left/right words")
            in_tree.add(x)
            nodes.add(x)
            key = free_size[x]
            if not lo < key < hi:
                fail(False, f"tree out of order: node {x:#x} of size {key} lies in a subtree "
                            f"for sizes in ({lo}, {hi})")
            for child, child_lo, child_hi, side in ((left[x], lo, key, "left"),
                                                    (right[x], key, hi, "right")):
                if child is None:
                    continue
                if parent.get(child) != x:
                    fail(False, f"{side} child {child:#x} of {x:#x} has parent "
                                f"{parent.get(child)!r}")
                stack.append((child, child_lo, child_hi))
            before, m = x, link.get(x)
            while m is not None:
                if m in in_tree:
                    fail(False, f"block {m:#x} appears twice in the tree (in the list of {x:#x})")
                if m not in free_size or free_size[m] != key:
                    fail(False, f"size list of node {x:#x} (size {key}) holds {m:#x} of size "
                                f"{free_size.get(m, 'not free')}")
                if prev.get(m) != before:
                    fail(False, f"list member {m:#x} has back link {prev.get(m)!r}, expected {before:#x}")
                in_tree.add(m)
                members.add(m)
                before, m = m, link.get(m)
        expected = set(free_size) - ({wild} if wild is not None else set())
        missing = sorted(expected - in_tree)
        if missing:
            fail(False, f"free blocks {[hex(a) for a in missing[:5]]} are not in the tree")
        if set(left) != nodes or set(parent) != nodes or set(right) != nodes:
            fail(False, f"stale tree words: {sorted(set(left) ^ nodes)[:5]}")
        if set(prev) != members:
            fail(False, f"stale list back links: {sorted(set(prev) ^ members)[:5]}")
        if set(link) != in_tree:
            fail(False, f"stale link words: {sorted(set(link) ^ in_tree)[:5]}")
        tree_sizes = [free_size[x] for x in nodes]
        if self.tree_max != max(tree_sizes, default=0):
            fail(False, f"the largest tree size is booked as {self.tree_max} but the tree's "
                        f"largest node is {max(tree_sizes, default=0)}")
        if self.free_bytes != sum(free_size.values()):
            fail(False, f"F is booked as {self.free_bytes} bytes but the free blocks "
                        f"add up to {sum(free_size.values())}")


def _rotation_words(e: Rotation) -> str:
    """One splay step in Sleator & Tarjan's terms."""
    head = f"{e.kind} at node {e.addr:#x} (size {e.key}): "
    if e.parent is None:
        return head + "splayed up"
    if e.kind == "zig":
        return head + f"its parent {e.parent:#x} is the top: rotate {e.addr:#x} above it"
    other = "right" if e.side == "left" else "left"
    if e.kind == "zig-zig":
        return (head + f"it and its parent {e.parent:#x} are both {e.side} children: rotate "
                f"{e.parent:#x} above {e.grandparent:#x}, then {e.addr:#x} above {e.parent:#x}")
    return (head + f"it is the {e.side} child of {e.parent:#x}, itself the {other} child of "
            f"{e.grandparent:#x}: rotate {e.addr:#x} above {e.parent:#x}, then above {e.grandparent:#x}")
