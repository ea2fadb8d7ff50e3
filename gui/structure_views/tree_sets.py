"""The tree view's items, kept between steps, and how each set is placed
for a step.

:class:`~.tree_view.TreeView` draws a step in named steps, each handing
one set its part of the layout (:mod:`.tree_layout`) and of the step's marks
(:mod:`.tree_step`): :class:`TreeNodes` (one item per node address, per ghost
of a node taken out, and the wilderness), :class:`TreeEdges` (one link per
child) and :class:`MarkerPool` (the grey triangles).  Items are kept per key,
so that a transition moves the very item a student is looking at.
"""

from __future__ import annotations

from .scene_view import short_bytes, size_of
from .tree_items import EdgeItem, MarkerItem, NodeItem
from .tree_layout import TreeLayout
from .tree_step import StepMarks

#: members of a size list drawn as squares (the node itself not counted)
LIST_SHOWN = 5


class TreeNodes:
    """The node items: ``items`` maps a node's address, or ``("ghost",
    addr)`` for a node the step takes out of the tree (drawn dashed above
    it), to its :class:`~.tree_items.NodeItem`; ``wild`` is the wilderness's."""

    def __init__(self, layer) -> None:
        self.layer = layer
        self.items: dict = {}
        self.wild: NodeItem | None = None

    def item(self, key, kind: str = "node") -> NodeItem:
        """The item kept for ``key``, made on first use."""
        item = self.items.get(key)
        if item is None:
            item = NodeItem(key, kind)
            item.setParentItem(self.layer)
            self.items[key] = item
        return item

    def everything(self) -> list[NodeItem]:
        """Every item, the wilderness's last."""
        return list(self.items.values()) + ([self.wild] if self.wild is not None else [])

    def hide(self) -> None:
        for item in self.everything():
            item.hide()

    def place(self, s: dict, lay: TreeLayout, marks: StepMarks, selected: int | None,
              selected_owner: int | None) -> None:
        """The nodes and ghosts the layout draws, at their places, with what
        the step did to them; every other item hidden."""
        shown = self._place_nodes(s, lay, marks, selected, selected_owner) | self._place_ghosts(lay, marks)
        for key, item in self.items.items():
            if key not in shown:
                item.hide()
        self._mark_changes(marks)

    def _place_nodes(self, s: dict, lay: TreeLayout, marks: StepMarks, selected, selected_owner) -> set:
        """Each node with its size list (the ``selected`` member drawn even
        past the first :data:`LIST_SHOWN`) and its visit numbers."""
        by_addr = {nd["addr"]: nd for nd in s.get("nodes", [])}
        for addr, (x, y) in lay.pos.items():
            item = self.item(addr)
            blocks = by_addr[addr]["blocks"]
            shown = blocks[:LIST_SHOWN + 1]
            if selected_owner == addr and selected not in shown:
                shown = blocks[:LIST_SHOWN] + [selected]
            item.set_content(by_addr[addr]["key"], shown, len(blocks), lay.depth[addr])
            item.visit = tuple(marks.numbered.get(addr, ()))
            item.role, item.inserted_member = "", None
            item.note = f"depth {lay.depth[addr]}" if lay.depth[addr] > lay.cap else ""
            item.setPos(x, y)
            item.show()
        return set(lay.pos)

    def _place_ghosts(self, lay: TreeLayout, marks: StepMarks) -> set:
        """The nodes the step takes out, above the tree in their in-order columns."""
        shown = set()
        for addr, key, x, y in lay.ghosts:
            item = self.item(("ghost", addr), "ghost")
            item.set_content(key, [addr], 1, -1)
            item.visit = tuple(marks.numbered.get(addr, ()))
            gone = any(r[0] == addr for r in marks.removed)
            item.role = "taken" if addr == marks.taken else "removed" if gone else ""
            item.note = item.role or "leaves later"
            item.inserted_member = None
            item.setPos(x, y)
            item.show()
            shown.add(("ghost", addr))
        return shown

    def _shown(self, addr) -> bool:
        item = self.items.get(addr)
        return item is not None and item.isVisible()

    def _mark_changes(self, marks: StepMarks) -> None:
        """The leaf or list member a free inserted, and the successor that
        moved up into a removed node's place."""
        for addr, size, parent, side in marks.inserted:
            if side == "list" and self._shown(parent):
                self.items[parent].inserted_member = addr
                self.items[parent].note = f"\u00d7{self.items[parent].count} (+1)"
            elif self._shown(addr):
                self.items[addr].role, self.items[addr].note = "inserted", "new"
        for addr, size, replaced_by in marks.removed:
            if replaced_by is not None and self._shown(replaced_by):
                self.items[replaced_by].role, self.items[replaced_by].note = "replaced", "moved up"

    def mark_wilderness(self, s: dict, marks: StepMarks) -> NodeItem | None:
        """The wilderness's item with what the step did to it (not placed
        yet: its place depends on its width), or None (hidden) when ``s``
        has none."""
        wild = s.get("wilderness")
        if wild is None:
            if self.wild is not None:
                self.wild.hide()
            return None
        if self.wild is None:
            self.wild = NodeItem(wild, "wild")
            self.wild.setParentItem(self.layer)
        item = self.wild
        item.key = item.addr = wild
        item.set_content(size_of(s, wild), [wild], 1, -1)
        # the wilderness keeps its item when its address moves (a split
        # cut the request off its front): it is one thing to a student
        was = marks.wild_was | {wild}
        item.visit = tuple(sorted(n for a, ns in marks.numbered.items() if a in was for n in ns))
        item.role = "taken" if marks.taken in was else ""
        item.note = f"gave {short_bytes(marks.split[0])}" if item.role and marks.split else ""
        item._relayout()          # as wide as its words
        return item

    def select(self, addr: int | None) -> NodeItem | None:
        """Outline the node, size-list member or wilderness at ``addr`` (None:
        clear); returns the item that holds it, if drawn."""
        found = None
        for item in self.everything():
            mine = addr is not None and item.isVisible() and (
                addr == item.addr and item.kind != "ghost" or addr in item.blocks[1:])
            item.selected_addr = addr if mine else None
            item.update()
            if mine:
                found = item
        return found


class TreeEdges:
    """The links from each drawn node to its parent: ``items`` maps a child's
    address to its :class:`~.tree_items.EdgeItem`."""

    def __init__(self, layer) -> None:
        self.layer = layer
        self.items: dict = {}

    def draw(self, lay: TreeLayout) -> list[tuple[int, float, float]]:
        """Each drawn node linked to its nearest drawn ancestor, dashed where
        levels between them are not drawn; the others hidden.  Returns where
        to write each run of levels skipped: (levels, x, y)."""
        linked = set()
        skips = []
        for child, parent_addr, skipped in lay.edges:
            e = self.items.get(child)
            if e is None:
                e = EdgeItem(child)
                e.setParentItem(self.layer)
                self.items[child] = e
            (cx, cy), (px, py) = lay.pos[child], lay.pos[parent_addr]
            e.link(parent_addr, (px, py), (cx, cy), skipped > 0)
            e.show()
            linked.add(child)
            if skipped:
                skips.append((skipped, px + 0.65 * (cx - px) + 14, py + 0.65 * (cy - py) - 10))
        for child, e in self.items.items():
            if child not in linked:
                e.hide()
        return skips

    def follow(self, nodes: dict) -> None:
        """Each shown link from its parent's box to its child's, where the
        node items are now (frame by frame during a transition)."""
        for child, e in self.items.items():
            if not e.isVisible() or e.parent_key not in nodes or child not in nodes:
                continue
            c, p = nodes[child].pos(), nodes[e.parent_key].pos()
            e.link(e.parent_key, (p.x(), p.y()), (c.x(), c.y()), getattr(e, "elided", False))

    def hide(self) -> None:
        for e in self.items.values():
            e.hide()


class MarkerPool:
    """The grey triangles of the runs of nodes not drawn, each with the link
    to its parent when that is drawn.  Pooled: a big tree has a hundred of
    them on every step, so the items are kept and reused."""

    def __init__(self, marker_layer, link_layer) -> None:
        self._layers = (marker_layer, link_layer)
        self.pairs: list[tuple[MarkerItem, EdgeItem]] = []

    def draw(self, markers: list, pos: dict) -> None:
        """``markers``: (x, y, count, depths, parent addr or None) each
        (:attr:`~.tree_layout.TreeLayout.markers`); ``pos``: the drawn
        nodes' places."""
        for i, (x, y, count, depths, parent_addr) in enumerate(markers):
            if i < len(self.pairs):
                m, line = self.pairs[i]
            else:
                m, line = MarkerItem(("marker", i), 0, (0, 0)), EdgeItem(("marker", i))
                m.setParentItem(self._layers[0])
                line.setParentItem(self._layers[1])
                self.pairs.append((m, line))
            m.count, m.depths = count, depths
            m.setPos(x, y)
            m.show()
            m.update()
            if parent_addr is not None:
                line.link(parent_addr, pos[parent_addr], (x, y), True)
                line.show()
            else:
                line.hide()
        self.hide(len(markers))

    def hide(self, first: int = 0) -> None:
        """Hide the markers from ``first`` on."""
        for m, line in self.pairs[first:]:
            m.hide()
            line.hide()

    def hidden_nodes(self) -> int:
        """How many nodes the markers shown stand for."""
        return sum(m.count for m, _ in self.pairs if m.isVisible())
