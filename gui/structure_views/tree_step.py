"""What one step did to a splay tree of free sizes, read from its events.

Vo's Vmbest best fit (and any strategy answering the generic ``tree``
kind) tells a step as :class:`~heapscope.allocators.events.Visit` (a node
compared on the search path, in order), :class:`~heapscope.allocators.events.Rotation`
(one splay step: zig, zig-zig or zig-zag, Sleator & Tarjan 1985),
:class:`~heapscope.allocators.events.TreeRemove` / ``TreeJoin`` (a node taken
out, its subtrees joined), :class:`~heapscope.allocators.events.TreeInsert` (a
leaf or a size-list member added), ``Placed`` / ``Released``, a ``Split``
and the ``wilderness`` pointer's moves.  :func:`read_events` turns them into
:class:`StepMarks`, which also say which nodes the drawing must show
whatever their depth (:meth:`StepMarks.focus_in`) and which it draws as
ghosts above the tree (:meth:`StepMarks.taken_out_of`).  Pure Python, no Qt.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from heapscope.allocators import events as ev

#: a search longer than twice this numbers its first and last visits only
NUMBERED_AT_EACH_END = 15
#: splay steps: single rotations each costs (Sleator & Tarjan)
ROTATIONS = {"zig": 1, "zig-zig": 2, "zig-zag": 2}


def climb_of(steps) -> int:
    """How many levels a splay's ``steps`` ((kind, ...) each) lift its node."""
    return sum(ROTATIONS.get(step[0], 1) for step in steps)


def drawn_root(s: dict):
    """The root the tree is laid out from: mid-removal (a micro-step between
    TreeRemove and TreeJoin) the tree is two subtrees, drawn where they hung
    under the root (a list of their tops)."""
    root = s.get("root")
    if root is None and s.get("subtrees"):
        root = [t for t in s["subtrees"] if t is not None]
    return root


@dataclass
class StepMarks:
    """What the shown step did to the tree, read from its events."""
    visits: list = field(default_factory=list)         # addrs in search order
    numbered: dict = field(default_factory=dict)       # addr -> its numbers, in order
    skipped_visits: int = 0
    splays: list = field(default_factory=list)         # (addr, key, [(kind, event index, words)])
    removed: list = field(default_factory=list)        # (addr, size, replaced_by)
    inserted: list = field(default_factory=list)       # (addr, size, parent, side)
    taken: int | None = None                           # Placed.addr
    released: int | None = None
    wild_was: set = field(default_factory=set)          # addresses the wilderness had this step
    joined: set = field(default_factory=set)           # removed nodes whose subtrees were joined
    split: tuple | None = None                         # (taken bytes, rest bytes) of a Split

    def focus_in(self, s: dict) -> set[int]:
        """The nodes of ``s`` the drawing shows whatever their depth: the
        search path, the nodes splayed, inserted and their parents, the
        successors of the nodes removed, and the root."""
        focus = set(self.numbered) | {a for a, _, _ in self.splays} | {i[0] for i in self.inserted}
        focus |= {i[2] for i in self.inserted if i[2] is not None}
        focus |= {r[2] for r in self.removed if r[2] is not None}
        if s.get("root") is not None:
            focus.add(s["root"])
        return focus

    def taken_out_of(self, s: dict) -> list[tuple[int, int]]:
        """``(addr, size)`` of each node the step took out of the tree ``s``
        (the structure after the step), once each: drawn as ghosts above it.
        A removal with a successor was a tree node; one without is a node
        only if no node of its size is left (else it was a list member)."""
        if not self.removed:
            return []
        nodes = s.get("nodes", [])
        keys_present = {nd["key"] for nd in nodes}
        addrs_present = {nd["addr"] for nd in nodes}
        wild = s.get("wilderness")
        ghosts = {}
        for addr, size, replaced_by in self.removed:
            if addr in addrs_present or addr == wild:
                continue
            if replaced_by is not None or addr in self.joined or size not in keys_present:
                ghosts[addr] = (addr, size)
        return list(ghosts.values())


def read_events(explained: list) -> StepMarks:
    """The marks of a step's explained events (ExplainedEvent list, in order);
    a run of Rotations of one node is one splay."""
    marks = StepMarks()
    run = None
    for e in explained:
        event = e.event
        if isinstance(event, ev.Rotation):
            if run is None or run[0] != event.addr:
                run = (event.addr, event.key, [])
                marks.splays.append(run)
            run[2].append((event.kind, e.index, e.text))
            continue
        run = None
        if isinstance(event, ev.Visit):
            marks.visits.append(event.addr)
        elif isinstance(event, ev.TreeRemove):
            marks.removed.append((event.addr, event.size, event.replaced_by))
        elif isinstance(event, getattr(ev, "TreeJoin", ())) and marks.removed:
            # the removal just before it was of a tree node (not a list member)
            marks.joined.add(marks.removed[-1][0])
        elif isinstance(event, ev.TreeInsert):
            marks.inserted.append((event.addr, event.size, event.parent, event.side))
        elif isinstance(event, ev.Placed):
            marks.taken = event.addr
        elif isinstance(event, ev.Released):
            marks.released = event.addr
        elif isinstance(event, ev.PointerMove) and event.name == "wilderness":
            marks.wild_was |= {a for a in (event.old, event.new) if a is not None}
        elif isinstance(event, ev.Split):
            marks.split = (event.taken_size, event.rest_size)
    v = marks.visits
    if len(v) <= 2 * NUMBERED_AT_EACH_END + 2:
        for i, a in enumerate(v):
            marks.numbered.setdefault(a, []).append(i + 1)
    else:
        k = NUMBERED_AT_EACH_END
        for i, a in list(enumerate(v))[:k] + list(enumerate(v))[-k:]:
            marks.numbered.setdefault(a, []).append(i + 1)
        marks.skipped_visits = len(v) - 2 * k
    return marks
