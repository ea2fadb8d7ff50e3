"""``tree``: Vo's splay tree of free blocks by size (best fit), the wilderness apart.

From Kiem-Phong Vo, "Vmalloc: A General and Efficient Memory Allocator"
(Software: Practice and Experience, 1996), the Vmbest method of AT&T's
malloc: one node per size, blocks of the same size hung in the node's list,
splayed to the root on each search; the free block at the top of the heap
(the wilderness) is kept out of the tree.  A strategy of your own may answer
with the same generic tree.

Shape (docs/structure.md, "Per kind"): ``root``, the root's address or None;
``nodes``, the in-order list of ``{"addr", "key", "blocks", "left", "right"}``
(``blocks``: the node itself then its list; children by address);
``wilderness`` (splay only).
"""

from __future__ import annotations

from ..predict import Generic, hx
from .. import events as ev
from ..inspect_text import LIST_ITEMS, TREE_DRAWN_NODES
from ..phrases import at, count
from ..structure import StructureMismatch
from ..structure_replay import Follower, ReplayError, hex_or_none
from . import StructureKind, register


class SplayTree(Generic):
    """Vo's best fit on a splay tree of sizes, the wilderness kept apart."""

    policy = "best fit"

    def __init__(self, facts) -> None:
        super().__init__(facts)
        self.wild = facts.structure.get("wilderness")
        self.tree_visits = [v for v in facts.visits if v.addr != self.wild]

    def _path(self) -> str:
        sizes = [f"{v.size:,}" for v in self.tree_visits[:8]]
        if len(self.tree_visits) > 8:
            sizes.append("…")
        return ", ".join(sizes)

    def _largest_in_tree(self) -> int:
        nodes = self.f.structure.get("nodes", ())
        return max((n["key"] for n in nodes), default=0)

    def why_chosen(self) -> str:
        f = self.f
        size = f.size_of(f.chosen)
        if f.chosen == self.wild:
            largest = self._largest_in_tree()
            return (f"best fit looks in the tree first: no block there fits {f.need:,} B"
                    + (f" (the largest size in it is {largest:,} B)" if largest else " (it is empty)")
                    + f", so it cuts the request from the front of the wilderness {hx(self.wild)} "
                      f"({size:,} B).")
        path = self._path()
        return (f"best fit takes the smallest block that fits {f.need:,} B: the search went down the "
                f"tree from the root" + (f" (sizes {path})" if path else "")
                + f" and the smallest size at least {f.need:,} B was {size:,} B, the node "
                  f"{hx(f.chosen)}.")

    def why_grow(self) -> str:
        f = self.f
        largest = self._largest_in_tree()
        wild_size = f.size_of(self.wild) if self.wild is not None else 0
        g = f.grow
        return (f"no block in the tree fits {f.need:,} B"
                + (f" (the largest size in it is {largest:,} B)" if largest else "")
                + (f" and the wilderness is too small ({wild_size:,} B)" if self.wild is not None
                   else " and there is no wilderness")
                + (f", so sbrk extends the wilderness by {g.increment:,} B." if g else "."))

    def why_not(self, guess: int) -> str:
        f = self.f
        size = f.size_of(guess)
        if f.chosen is None:
            return f"{hx(guess)} ({size:,} B) is too small for {f.need:,} B."
        chosen_size = f.size_of(f.chosen)
        if guess == self.wild:
            return (f"the wilderness {hx(guess)} is kept out of the tree and used only when no block in "
                    f"the tree fits; here {hx(f.chosen)} ({chosen_size:,} B) does.")
        if size < f.need:
            return f"{hx(guess)} ({size:,} B) is too small for {f.need:,} B."
        if f.chosen == self.wild:
            return f"{hx(guess)} ({size:,} B) is too small for {f.need:,} B."
        if size > chosen_size:
            return (f"{hx(guess)} ({size:,} B) fits but is bigger than {hx(f.chosen)} ({chosen_size:,} B): "
                    f"best fit compares sizes and takes the smallest block that fits, not the first one "
                    f"nor the lowest.")
        return (f"{hx(guess)} has the same size ({size:,} B) but hangs in the size list of node "
                f"{hx(f.chosen)}: the search ends at the node, and the node is taken first.")


class TreeFollower(Follower):
    """Replayed: ``root``, ``nodes`` (every node with its children and size
    list), ``wilderness`` (the only ``outside`` block), ``sizes``: TreeInsert,
    TreeRemove, Rotation, TreeJoin and PointerMove 'wilderness' rebuild the
    tree exactly, rotation by rotation.  Between a node's removal and its
    TreeJoin (mid-step only) ``root`` is None, ``subtrees`` names the tops of
    the two subtrees, and ``nodes`` holds both, left one first: still in
    order of size."""

    def __init__(self, before: dict) -> None:
        super().__init__(before)
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

    @staticmethod
    def replayable(s: dict, out: dict) -> list[int]:
        out["root"] = s["root"]
        out["nodes"] = [dict(n, blocks=list(n["blocks"])) for n in s["nodes"]]
        out["wilderness"] = s["wilderness"]
        held = [a for n in s["nodes"] for a in n["blocks"]]
        if s["wilderness"] is not None:
            held.append(s["wilderness"])
        return held

    def apply(self, e) -> None:
        left, right, parent = self.left, self.right, self.parent
        if isinstance(e, ev.TreeInsert):
            b = e.addr
            if b in left or b in self.member_of:
                raise ReplayError(f"{b:#x} is put in the tree twice")
            if e.side == "list":
                if e.parent not in left:
                    raise ReplayError(f"{b:#x} hangs in the size list of {hex_or_none(e.parent)}, not a node")
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
                    raise ReplayError(f"{b:#x} goes {e.side} of {hex_or_none(e.parent)}, which has no free "
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
                raise ReplayError(f"tree node {b:#x} is removed but the root is {hex_or_none(self.root)}")
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
                raise ReplayError(f"join of {hex_or_none(e.left)} and {hex_or_none(e.right)} under {hex_or_none(e.root)} "
                                  f"after a removal that left {self.pending_join}")
            root = e.root
            if e.left is not None and e.right is not None:
                if parent[root] is not None or left[root] is not None:
                    raise ReplayError(f"join root {root:#x} is not the top of the right subtree "
                                      f"with no left child")
                left[root] = e.left
                parent[e.left] = root
            elif root != (e.left if e.right is None else e.right):
                raise ReplayError(f"join of one subtree names root {hex_or_none(root)}")
            self.root = root
            self.pending_join = None
        elif isinstance(e, ev.PointerMove) and e.name == "wilderness":
            self.move(e, "the wilderness")

    def _rotation(self, e) -> None:
        left, parent = self.left, self.parent
        x = e.addr
        p = parent.get(x)
        if p != e.parent or p is None:
            raise ReplayError(f"{e.kind} at {x:#x} names parent {hex_or_none(e.parent)}, the tree has {hex_or_none(p)}")
        g = parent[p]
        side = "left" if left[p] == x else "right"
        if g != e.grandparent or side != e.side:
            raise ReplayError(f"{e.kind} at {x:#x} names grandparent {hex_or_none(e.grandparent)} and side "
                              f"{e.side!r}; the tree has {hex_or_none(g)} and {side!r}")
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


    def result(self, strict: bool) -> dict:
        out: dict = {}
        nodes, held = [], []
        tops = [self.root] if self.pending_join is None else list(self.pending_join)
        for x in (x for top in tops for x in self._in_order(top)):
            blocks = [x] + self.size_list[x]
            held.extend(blocks)
            nodes.append({"addr": x, "key": self.size(x, strict), "blocks": blocks,
                          "left": self.left[x], "right": self.right[x]})
        out["root"] = self.root
        out["nodes"] = nodes
        if self.pending_join is not None:
            # mid-step only: a removal left two subtrees the TreeJoin to come joins
            out["subtrees"] = list(self.pending_join)
        out["wilderness"] = self.pointer
        if self.pointer is not None:
            held.append(self.pointer)
        return self.sized(out, held, strict)


@register
class TreeKind(StructureKind):
    name = "tree"
    speaker = SplayTree
    follower = TreeFollower
    pointer_keys = {"wilderness": "wilderness"}
    apart = (("wilderness", "wilderness"),)

    def members(self, s: dict) -> list[int]:
        return [a for node in s["nodes"] for a in node["blocks"]]

    def where(self, s: dict) -> dict[int, str]:
        return {a: f"the tree node of size {node['key']}" for node in s["nodes"] for a in node["blocks"]}

    def check(self, s: dict) -> None:
        nodes = s["nodes"]
        by_addr = {n["addr"]: n for n in nodes}
        keys = [n["key"] for n in nodes]
        if any(a >= b for a, b in zip(keys, keys[1:])):
            raise StructureMismatch(f"in-order keys are not strictly increasing: {keys[:8]}")
        sizes = s["sizes"]
        for n in nodes:
            if n["blocks"][:1] != [n["addr"]]:
                raise StructureMismatch(f"node {n['addr']:#x} does not head its own block list")
            for a in n["blocks"]:
                if sizes[a] != n["key"]:
                    raise StructureMismatch(f"block {a:#x} of {sizes[a]} bytes hangs under key {n['key']}")
        # The nodes reachable from the root, visited in order, are the list given.
        order: list[int] = []
        stack: list[int] = []
        x = s["root"]
        while stack or x is not None:
            while x is not None:
                if len(stack) > len(nodes):
                    raise StructureMismatch("the tree has a cycle")
                stack.append(x)
                x = by_addr[x]["left"] if x in by_addr else None
            x = stack.pop()
            order.append(x)
            x = by_addr[x]["right"] if x in by_addr else None
        if order != [n["addr"] for n in nodes]:
            raise StructureMismatch("the nodes list is not the in-order walk from the root")

    # how it reads: the tree sideways while it is small, its nodes in order
    # beyond; a list per node, its equal-size blocks, in the lists view
    def inspect_lines(self, s: dict, all_items: bool, named: set) -> list[str]:
        nodes = s["nodes"]
        root = s["root"]
        out = [f"  {count(len(nodes), 'node')}, root {at(root, 'none')}"]
        if not nodes:
            return out
        by_addr = {n["addr"]: n for n in nodes}

        def label(n: dict) -> str:
            more = len(n["blocks"]) - 1
            return f"{n['key']}@{n['addr']:#x}" + (f" (+{more} of that size)" if more else "")

        if len(nodes) <= TREE_DRAWN_NODES or all_items:
            # Sideways, right subtree above: read it with your head tilted left.
            depth_of = {root: 0}
            for n in _walk_from(root, by_addr):
                for child in (n["left"], n["right"]):
                    if child is not None:
                        depth_of[child] = depth_of[n["addr"]] + 1
            for n in reversed(nodes):     # in-order reversed: largest size on top
                out.append("  " + "    " * depth_of[n["addr"]] + label(n))
            out.append("  (sideways: the root at the left, larger sizes above)")
        else:
            shown = nodes[:LIST_ITEMS]
            out.append("  in order: " + ", ".join(label(n) for n in shown)
                       + f", ... {len(nodes) - len(shown)} more (--all draws the tree)")
        return out

    def labelled_lists(self, s: dict, named=()) -> list:
        root = s.get("root")
        return [(None, f"size {node['key']:,}" + (" (root)" if node["addr"] == root else ""),
                 list(node["blocks"])) for node in s["nodes"]]


def _walk_from(root, by_addr: dict):
    """The nodes reachable from ``root``, each before its children."""
    stack = [root]
    while stack:
        x = stack.pop()
        if x is None:
            continue
        n = by_addr[x]
        yield n
        stack.extend((n["left"], n["right"]))
