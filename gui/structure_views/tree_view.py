"""The tree view: Vo's splay tree of free sizes (and the generic ``tree`` kind).

What it draws (docs/gui.md, "The tree view"):

* the binary search tree of free sizes laid out with **x = in-order rank** and
  **y = depth**.  A rotation keeps every node's in-order rank, so during a
  splay (Sleator & Tarjan, "Self-Adjusting Binary Search Trees", JACM 32(3),
  1985) each node only moves up or down its own column -- the animation of
  issue 9 moves items vertically, and a student can follow a node by its
  column.  In-order ranks also give every node a column no other node or edge
  enters below it, so its **list of equal-size blocks** (Vo's Vmbest ``LINK``
  list) hangs straight down from it without colliding with anything;
* the **wilderness** (Vmbest's ``vd->wild``) apart, above the tree's left end;
* the step: the **search path** (``Visit`` events) numbered in order, each
  **splay step** (zig, zig-zig, zig-zag) written at the depth where it
  happened in the column of the node that rose (its climb drawn as an arrow),
  the node **taken** (drawn above the tree as a dashed ghost, since it is no
  longer in it), the leaf or list member **inserted** by a free.

Deep or big trees are summarised, and :attr:`summary` says how: levels are
drawn down to the deepest one that keeps the drawing under
:data:`NODE_BUDGET` nodes (and :data:`MAX_LEVELS` deep); a subtree below it is
a grey triangle with its node count; the nodes the step touched are drawn
whatever their depth, the levels skipped above them written as a band
("... 880 levels ...").  A size list longer than :data:`LIST_SHOWN` shows its
first members and its length.  Long searches number their first and last
:data:`NUMBERED_AT_EACH_END` visits.

Items are kept per node address between steps (one :class:`NodeItem` each),
so an animation moves the very items a student is looking at: shown event
by event with a transition (:meth:`TreeView.set_current_event`), the nodes
glide from their places to their new ones -- under a rotation only up or
down their own column -- the edges follow them frame by frame, nodes that
come or go fade, the splay's climb and the step's words cross-fade, and the
camera glides to what the event touched.

The code, by what it does: :mod:`.tree_step` reads a step's events into
marks (pure Python), :mod:`.tree_layout` lays the tree out (pure geometry),
:mod:`.tree_items` are the graphics items and :mod:`.tree_sets` the sets of
them kept between steps; :meth:`TreeView._rebuild` draws a step as a few
named steps over these.
"""

from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import QGraphicsSimpleTextItem

from . import register_view
from .transition import Morph, cross_fade
from .scene_view import (FAINT, INSERTED, SELECTED, TAKEN, VISITED, WILD_FILL,
                         MIN_DESIGN_PX, SceneStructureView, font, short_bytes, size_of, swatch)
from .tree_items import LadderItem, levels_text
from .tree_layout import NODE_BUDGET, NODE_W, ROW_H, TreeLayout, layout_tree
from .tree_sets import LIST_SHOWN, MarkerPool, TreeEdges, TreeNodes
from .tree_step import NUMBERED_AT_EACH_END, ROTATIONS, StepMarks, climb_of, drawn_root, read_events
# the view's tests read these as the view's own
from .tree_items import tree_bytes  # noqa: F401,E402
from .tree_layout import SLOT  # noqa: F401,E402

#: the room the camera keeps over a step's node for its visit number and tag
BADGE_ROOM = 16.0


@register_view("tree")
class TreeView(SceneStructureView):
    """The splay tree of free sizes, its size lists, the wilderness and the
    step's search path and splay steps.

    :meth:`drawn` keys: ``nodes`` (addresses in x order), ``keys`` (their sizes
    as drawn), ``x`` and ``y`` ({addr: position}), ``depth`` ({addr: depth}),
    ``lists`` ({addr: [the node, then the members drawn as squares]}),
    ``counts`` ({addr: blocks of that size}), ``edges`` ([(parent, child)]),
    ``visits`` ([(number, addr)] in order), ``rotations`` ([(kind, addr,
    from_depth, to_depth)] in order), ``ghosts`` ([addr]) and ``ghost_x``, ``taken``,
    ``inserted``, ``wilderness``, ``hidden`` (nodes summarised by markers),
    ``elided`` (levels skipped by each dashed edge), ``selected``.
    """

    kinds = ("tree",)
    title = "Splay tree of free sizes"

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.edge_layer = self.new_layer(1)
        self.node_layer = self.new_layer(10)
        self.note_layer = self.new_layer(20)
        self.nodes = TreeNodes(self.node_layer)
        self._nodes = self.nodes.items      # addr or ("ghost", addr) -> NodeItem
        self.edges = TreeEdges(self.edge_layer)
        self._edges = self.edges.items      # child addr -> EdgeItem
        self._notes: list = []              # ladders, texts: rebuilt every step
        self._markers = MarkerPool(self.note_layer, self.edge_layer)
        self._owner: dict | None = None     # block addr -> node addr, built on demand
        self._extra_focus: set[int] = set()
        self._said = ""                 # the summary of what was drawn
        self._framed_key = None         # the item the camera keeps when the step does not fit
        self.layout: TreeLayout | None = None
        self.marks = StepMarks()
        self.set_summary("")

    # ------------------------------------------------------------ contract
    def show_step(self, structure: dict | None, explained: list, record=None) -> None:
        self._extra_focus = set()       # a node drawn out for a selection was the last step's
        super().show_step(structure, explained, record)

    def _new_structure(self) -> None:
        self._owner = None

    # ------------------------------------------------------------ moving
    def _items(self) -> dict:
        items = dict(self._nodes)
        if self.nodes.wild is not None:
            items["wild"] = self.nodes.wild
        return items

    def _snapshot(self) -> dict:
        return {"items": {k: (QPointF(it.pos()), it.isVisible()) for k, it in self._items().items()},
                "edges": {c: e.isVisible() for c, e in self._edges.items()},
                "camera": QRectF(self.box.viewRect())}

    def _morph_from(self, before: dict, leaving: list) -> Morph:
        m = Morph()
        was = before["items"]
        items = self._items()
        for key, item in items.items():
            old_pos, old_visible = was.get(key, (None, False))
            if (isinstance(key, tuple) and key[0] == "ghost" and item.isVisible() and not old_visible
                    and was.get(key[1], (None, False))[1] and not items[key[1]].isVisible()):
                # a node taken out of the tree rises from its place to its ghost's
                m.move(item, was[key[1]][0], item.pos())
                continue
            if item.isVisible():
                if old_visible:
                    m.move(item, old_pos, item.pos())
                else:
                    m.enter(item, (0.0, 1.0))
            elif old_visible and ("ghost", key) not in items or old_visible and not items[("ghost", key)].isVisible():
                item.setPos(old_pos)
                item.show()
                m.hide_at_end(item)
        edges_were = before["edges"]
        for child, e in self._edges.items():
            if e.isVisible() and not edges_were.get(child):
                m.enter(e)
            elif not e.isVisible() and edges_were.get(child):
                e.show()
                m.hide_at_end(e)
        m.call(self._edges_follow)
        cross_fade(m, leaving, list(self._notes))
        self.follow_camera(m, before["camera"])
        return m

    def _edges_follow(self, t: float) -> None:
        self.edges.follow(self._nodes)

    def mark_selection(self, addr: int | None) -> QRectF | None:
        self.finish_transition()
        owner = None
        if addr is not None and self._structure is not None:
            owner = self._owner_of(addr)
            item = self._nodes.get(owner) if owner is not None else None
            drawn_here = item is not None and item.isVisible() and (
                addr == owner or addr in item.blocks)
            if owner is not None and not drawn_here:
                # a node below the drawn levels, or a list member past the
                # squares: draw it (it becomes part of the focus)
                self._extra_focus = {owner}
                self.selected = addr
                self._rebuild(follow=False)
        item = self.nodes.select(addr)
        found = self.view_rect_of(item, item.box()) if item is not None else None
        if found is not None and owner is not None and owner != addr:
            item = self._nodes[owner]
            found = self.view_rect_of(item, item.boundingRect())
        return found

    def drawn(self) -> dict:
        nodes = sorted((it for it in self._nodes.values() if it.isVisible() and it.kind == "node"),
                       key=lambda it: it.pos().x())
        ghosts = [it for it in self._nodes.values() if it.isVisible() and it.kind == "ghost"]
        shown = [it for it in self.nodes.everything() if it.isVisible()]
        visits = [(n, it.addr) for it in shown for n in it.visit]
        rotations = []
        for note in self._notes:
            if isinstance(note, LadderItem):
                for kind, y0, y1, _, d0, d1 in note.steps:
                    rotations.append((kind, note.key[0], d0, d1, note.key[1]))
        rotations.sort(key=lambda r: r[4])
        selected, wild = None, self.nodes.wild
        for it in shown:
            if it.selected_addr is not None:
                selected = it.selected_addr
        return {
            "nodes": [it.addr for it in nodes],
            "keys": [it.size for it in nodes],
            "labels": [it.size_text() for it in nodes],
            "x": {it.addr: it.pos().x() for it in nodes},
            "y": {it.addr: it.pos().y() for it in nodes},
            "depth": {it.addr: it.depth for it in nodes},
            "lists": {it.addr: list(it.blocks) for it in nodes},
            "counts": {it.addr: it.count for it in nodes},
            "edges": sorted((e.parent_key, e.child) for e in self._edges.values() if e.isVisible()),
            "visits": sorted(visits),
            "rotations": [r[:4] for r in rotations],
            "ghosts": [it.addr for it in ghosts],
            "ghost_x": {it.addr: it.pos().x() for it in ghosts},
            "taken": [it.addr for it in shown if it.role == "taken"],
            "inserted": [it.addr for it in self._nodes.values() if it.isVisible() and it.role == "inserted"]
                        + [it.inserted_member for it in self._nodes.values()
                           if it.isVisible() and it.inserted_member is not None],
            "wilderness": wild.addr if wild is not None and wild.isVisible() else None,
            "hidden": self._markers.hidden_nodes(),
            "elided": sorted(n.levels for n in self._notes if hasattr(n, "levels")),
            "selected": selected,
        }

    # ------------------------------------------------------------ drawing
    def _owner_of(self, addr: int) -> int | None:
        if self._owner is None:
            owner = {}
            for nd in self._structure.get("nodes", []):
                for b in nd["blocks"]:
                    owner[b] = nd["addr"]
            self._owner = owner
        return self._owner.get(addr)

    def _rebuild(self, follow: bool) -> None:
        """Draw the structure shown (after the whole step, or after event
        ``_upto``) and light what the step did to it, then frame it."""
        self._drop_notes()
        s = self._structure
        if s is None:
            self._draw_nothing()
            return
        explained = self._explained if self._upto is None else self._explained[:self._upto + 1]
        marks = self.marks = read_events(explained)
        # The drawing is the state after the whole step, so the nodes the step
        # took out get their ghosts even while micro-steps show its beginning.
        whole = marks if self._upto is None else read_events(self._explained)
        lay = self.layout = self._lay_out(s, marks, whole.taken_out_of(s))
        self.nodes.place(s, lay, marks, self.selected,
                         self._owner_of(self.selected) if self.selected is not None else None)
        self._place_wilderness(s, lay, marks)
        for levels, x, y in self.edges.draw(lay):
            note = self._note(levels_text(levels), 16, True, x, y)
            note.levels = levels            # drawn() reads it back
        self._markers.draw(lay.markers, lay.pos)
        self._write_levels(lay, bool(s.get("nodes")))
        self._draw_splays(lay, marks, drawn_root(s))
        self._write_caption(s, lay, marks)
        if self.selected is not None:
            self.mark_selection(self.selected) if not self._extra_focus else self.nodes.select(self.selected)
        if follow:
            self._follow(lay, marks)

    def _drop_notes(self) -> None:
        """Take the last drawing's notes (texts, splay climbs) off the scene,
        or hand them to the transition being made, which fades them out."""
        for note in self._notes:
            if self._collect is not None:
                self._collect.append(note)
                continue
            note.setParentItem(None)
            if note.scene() is not None:
                note.scene().removeItem(note)
        self._notes = []

    def _draw_nothing(self) -> None:
        """Nothing loaded: every item hidden, the caption says so."""
        self.nodes.hide()
        self.edges.hide()
        self._markers.hide()
        self.caption.setText(f"<b>{self.title}</b>: nothing loaded")
        self.set_summary("")
        self.layout = None

    def _lay_out(self, s: dict, marks: StepMarks, ghosts: list) -> TreeLayout:
        """The tree laid out for the step (:meth:`_fitting_layout`), with rows
        for the depths a splay started from when it started deeper than the
        tree is now."""
        lay = self._fitting_layout(s.get("nodes", []), drawn_root(s), marks.focus_in(s) | self._extra_focus,
                                   ghosts)
        if not lay.hidden and not lay.bands:
            climb = max((climb_of(run[2]) for run in marks.splays), default=0)
            for d in range(lay.max_depth + 1, climb + 1):
                lay.rows.setdefault(d, d * ROW_H)
        return lay

    def _place_wilderness(self, s: dict, lay: TreeLayout, marks: StepMarks) -> None:
        """The wilderness, apart: in the row above the tree, left of it."""
        item = self.nodes.mark_wilderness(s, marks)
        if item is not None:
            item.setPos(self._wild_x(lay, s.get("root")), -ROW_H)
            item.show()

    def _write_levels(self, lay: TreeLayout, has_nodes: bool) -> None:
        """The bands of levels skipped above the step's deep nodes, the depth
        of each row at the left (or that the tree is empty)."""
        for y, levels in lay.bands:
            self._note(levels_text(levels), 18, True, -150, y - 12)
        if not has_nodes:
            self._note("the tree is empty", 18, False, -20, -12)
            return
        for d, y in lay.rows.items():
            self._note(f"depth {d}", MIN_DESIGN_PX, False, -150, y - 10)

    def _note(self, text: str, px: int, bold: bool, x: float, y: float) -> QGraphicsSimpleTextItem:
        """A faint text of this step's drawing at (x, y)."""
        t = QGraphicsSimpleTextItem(text)
        t.setFont(font(px, bold))
        t.setBrush(QBrush(QColor(FAINT)))
        t.setPos(x, y)
        t.setParentItem(self.note_layer)
        self._notes.append(t)
        return t

    def _draw_splays(self, lay: TreeLayout, marks: StepMarks, root) -> None:
        """Each splay's climb, in the column of the node that rose, each splay
        step written at the depth where it happened."""
        ghost_pos = {a: (x, y) for a, _, x, y in lay.ghosts}
        for addr, key, steps in marks.splays:
            col = lay.pos.get(addr) or ghost_pos.get(addr)
            if col is None:
                continue
            # a join's splay ends at the top of the right subtree, which
            # hangs at depth 1 until the join makes it the root
            d = climb_of(steps) + (1 if isinstance(root, list) and addr in root else 0)
            drawn_steps = []
            for kind, index, words in steps:
                d_to = d - ROTATIONS.get(kind, 1)
                drawn_steps.append((kind, self._row_y(d), self._row_y(d_to), words, d, d_to))
                d = d_to
            ladder = LadderItem((addr, steps[0][1]), drawn_steps,
                                ghost_pos[addr][1] if addr in ghost_pos else None)
            ladder.setParentItem(self.note_layer)
            ladder.setPos(col[0], 0)
            self._notes.append(ladder)

    def _wild_x(self, lay: TreeLayout, root) -> float:
        """Where the wilderness's box is centred, in the row above the root:
        its right edge where a 150-pixel box had it, left of the tree (a
        wider box grows leftwards), but near enough the root for both to fit
        the view at a legible zoom, when no ghost is in the way (on gcc-cc1
        a malloc cut from the wilderness with the root 760 pixels right of it)."""
        half = self.nodes.wild.width() / 2
        x = -45.0 - half
        if root in lay.pos:
            room, _ = self.legible_room()
            # (and its visit number's disc, left of its box, whole)
            disc = self.nodes.wild.box().left() - self.nodes.wild.badge_rect().left()
            near = lay.pos[root][0] + NODE_W / 2 + half + 24 + disc - room
            clear = all(abs(gx - near) >= half + NODE_W / 2 + 8 for _, _, gx, _ in lay.ghosts)
            if near > x and clear:
                x = near
        return x

    def _fitting_layout(self, nodes, root, focus: set, ghosts) -> TreeLayout:
        """The tree laid out so that the step's nodes (its search from the
        root, the node taken or inserted) span no more columns than the view
        shows at a legible zoom: full levels while they fit, else fewer, the
        nodes off the step's path summarised as grey triangles.  On gcc-cc1
        the 56 nodes in order put the root 2 800 design pixels right of the
        leaf a free inserted; the camera kept the leaf and lost the root."""
        room, _ = self.legible_room()
        for budget in (NODE_BUDGET, 40, 12, 1):
            lay = layout_tree(nodes, root, focus, ghosts, budget=budget)
            xs = [lay.pos[a][0] for a in focus if a in lay.pos] + [g[2] for g in lay.ghosts]
            if not xs or max(xs) - min(xs) + NODE_W <= room:
                break
        return lay

    def _row_y(self, d: int) -> float:
        rows = self.layout.rows
        if d in rows:
            return rows[d]
        return (self.layout.cap + 1) * ROW_H

    def _follow(self, lay: TreeLayout, marks: StepMarks) -> None:
        rect = QRectF()
        anchor = None
        step_items = [it for it in self._nodes.values() if it.isVisible() and
                      (it.visit or it.role or it.inserted_member is not None)]
        wild = self.nodes.wild
        if wild is not None and wild.isVisible() and (wild.visit or wild.role):
            step_items.append(wild)
        # a node's path from the root, so a leaf inserted by a free is seen where it hangs
        up = {child: parent for child, parent, _ in lay.edges}
        path = []
        for it in step_items:
            a = it.addr if it.kind == "node" else None
            while a in up and len(path) < 64:
                a = up[a]
                path.append(self._nodes[a])
        for it in step_items + path:
            # room for the visit number on its top edge (under the strip at 1080)
            # and its disc on the box's top-left corner whole (the wilderness's
            # "2,3" was cut at the left edge: docs/steps/splay-best-fit.gif)
            rect = rect.united(self.view_rect_of(it, it.box().adjusted(0, -BADGE_ROOM, 0, 0)
                                                 .united(it.badge_rect())))
        for note in self._notes:
            if isinstance(note, LadderItem):
                rect = rect.united(self.view_rect_of(note, note.boundingRect()))
        key_item = None
        for it in step_items:
            if it.role in ("taken", "inserted", "replaced"):
                key_item = it
        root = self._structure.get("root")
        if key_item is None and root in self._nodes and self._nodes[root].isVisible():
            key_item = self._nodes[root]
        if rect.isNull():
            if key_item is not None:
                rect = self.view_rect_of(key_item, key_item.boundingRect())
            elif wild is not None and wild.isVisible():
                rect = self.view_rect_of(wild, wild.boundingRect())
            else:
                return
        if key_item is not None:
            # the left end of its box: the camera keeps the anchor a margin
            # inside the edge, and a wide box (the wilderness and its words)
            # stays whole
            box = key_item.box()
            anchor = self.view_point_of(key_item, QPointF(box.left() + min(box.width() / 2, NODE_W / 2), 0))
            rect = self._root_and(key_item, rect, step_items + path)
        self._framed_key = key_item
        self.focus_on(rect, anchor, align_top=True)

    def framed(self) -> None:
        """A step too deep to frame from the root at a legible zoom: the line
        under the drawing says where the root is, first.  The splay's tags
        are kept inside the frame (:meth:`_fit_splay_tags`)."""
        said = self._said
        lost = self._fit_splay_tags()
        if lost:
            said = " ".join([f"Splay step{'s' if len(lost) > 1 else ''} {', '.join(lost)} "
                             "off the frame: Fit all shows the whole climb.", said]).strip()
        root = self._nodes.get(self._structure.get("root")) if self._structure else None
        if self.following and root is not None and root.isVisible() \
                and not self.box.viewRect().contains(self.view_rect_of(root, root.box())):
            key = self._framed_key
            depth = self.layout.depth.get(getattr(key, "addr", None)) if self.layout else None
            where = f" {depth} levels up," if depth else ""
            said = " ".join(filter(None, [f"The root (where the search started) is{where} not wholly in view: "
                                          "Fit all shows the whole path.", said]))
        if said != self.summary:
            self.set_summary(said)

    def _fit_splay_tags(self) -> list[str]:
        """Every splay step's tag inside the frame, below the buttons' strip
        (issue 24: in presenter mode at 1280 x 720 the camera frames the
        root and the node taken, and the zig / zig-zig tags on the climb
        below them were cut at the bottom edge): each ladder slides or
        writes its tags across (:meth:`LadderItem.fit`), clear of the nodes
        and the words drawn.  Returns the steps no place was found for."""
        ladders = [n for n in self._notes if isinstance(n, LadderItem)]
        if not ladders:
            return []
        visible = self.box.viewRect()
        cut = self.strip_height() * visible.height() / max(self.box.height(), 1.0)
        frame = visible.adjusted(4, cut + 4, -4, -4)
        group = self.box.childGroup
        obstacles = []
        for item in self._items().values():
            if item.isVisible():
                obstacles.append(self.view_rect_of(item, item.box().adjusted(-16, -16, 2, 2)))
                obstacles += [self.view_rect_of(item, q) for q in item.squares()]
        for note in self._notes:
            if isinstance(note, QGraphicsSimpleTextItem) and note.isVisible():
                obstacles.append(self.view_rect_of(note))
        lost = []
        for ladder in ladders:
            local = [ladder.mapRectFromItem(group, q) for q in obstacles]
            lost += ladder.fit(ladder.mapRectFromItem(group, frame), local)
            if ladder.across_rect is not None:
                obstacles.append(self.view_rect_of(ladder, ladder.across_rect))
            obstacles += [self.view_rect_of(ladder, r) for _, r in ladder.labels()]
        return lost

    def _root_and(self, key_item, rect: QRectF, items: list) -> QRectF:
        """What the camera frames when the whole of the step (``rect``) does
        not fit at a legible zoom: the root, where the search started, and
        ``key_item``, where it ended, if they fit together, with as many of
        the step's other ``items`` as still fit, nearest the key item first;
        else ``rect`` (the camera keeps the key item)."""
        w, h = self.legible_room()

        def fits(r: QRectF) -> bool:
            return r.width() <= w and r.height() <= h

        root = self._nodes.get(self._structure.get("root"))
        if fits(rect) or root is None or not root.isVisible():
            return rect
        def whole(item) -> QRectF:       # its box and its visit number, up and left of it
            return self.view_rect_of(item, item.box().adjusted(-14, -14, 0, 0).united(item.badge_rect()))

        core = whole(root).united(whole(key_item))
        if not fits(core):
            return rect
        centre = self.view_rect_of(key_item, key_item.box()).center()
        for it in sorted(items, key=lambda i: (self.view_rect_of(i, i.box()).center() - centre).manhattanLength()):
            trial = core.united(whole(it))
            if fits(trial):
                core = trial
        return core

    def _write_caption(self, s: dict, lay: TreeLayout, marks: StepMarks) -> None:
        nodes = s.get("nodes", [])
        n_blocks = len(s.get("sizes", ())) - len(s.get("outside", ()))   # the tree's blocks
        wild = s.get("wilderness")
        parts = [f"<b>{self.title}</b>: {len(nodes)} node{'s' if len(nodes) != 1 else ''}, "
                 f"{n_blocks} free block{'s' if n_blocks != 1 else ''}"]
        if lay.max_depth >= 0:
            parts.append(f"depth {lay.max_depth}")
        if wild is not None:
            parts.append(f"wilderness {short_bytes(size_of(s, wild))}")
        elif "wilderness" in s:
            parts.append("no wilderness")
        step = []
        if marks.visits:
            step.append(f"search visited {len(marks.visits)}")
        n_rot = sum(len(r[2]) for r in marks.splays)
        if n_rot:
            step.append(f"{n_rot} splay step{'s' if n_rot != 1 else ''}")
        key = " &nbsp; ".join([swatch(VISITED, "visited (in order)", True), swatch(TAKEN, "taken", True),
                               swatch(INSERTED, "inserted", True), swatch(WILD_FILL, "wilderness"),
                               swatch(SELECTED, "selected", True)])
        line2 = ("this step: " + ", ".join(step) + " &nbsp;&nbsp; ") if step else ""
        self.caption.setText(" \u00b7 ".join(parts) + "<br>" + line2 + key)
        said = []
        if lay.hidden:
            said.append(f"levels 0\u2013{lay.cap} of the tree's {lay.max_depth + 1} drawn; {lay.hidden} deeper "
                        f"node{'s' if lay.hidden != 1 else ''} shown as grey triangles with their counts")
        if lay.bands:
            said.append(f"{sum(b[1] for b in lay.bands)} levels above the step's deep nodes skipped")
        long_lists = sum(1 for nd in nodes if len(nd["blocks"]) > LIST_SHOWN + 1)
        if long_lists:
            said.append(f"{long_lists} size list{'s' if long_lists != 1 else ''} longer than "
                        f"{LIST_SHOWN} shown by their first {LIST_SHOWN} members and their length (\u00d7n)")
        if marks.skipped_visits:
            said.append(f"search of {len(marks.visits)} nodes: numbered its first and last "
                        f"{NUMBERED_AT_EACH_END}, {marks.skipped_visits} between not numbered")
        self._said = "Summarised: " + "; ".join(said) + "." if said else ""
        self.set_summary(self._said)
