"""Where the tree view draws each node: x = in-order rank, y = depth.

A rotation keeps every node's in-order rank, so during a splay (Sleator &
Tarjan, "Self-Adjusting Binary Search Trees", JACM 32(3), 1985) each node
only moves up or down its own column; in-order ranks also give every node a
column no other node or edge enters below it, where its size list hangs.
Deep or big trees are summarised: full levels are laid out down to the
deepest one that keeps :data:`NODE_BUDGET` nodes (and :data:`MAX_LEVELS`),
the nodes off them as runs (grey triangles, :attr:`TreeLayout.markers`),
the step's own nodes wherever they are, the levels skipped above them as
bands.  Pure geometry from the structure's data: no Qt (the view,
:mod:`.tree_view`, places its items at these points).
"""

from __future__ import annotations

from bisect import bisect_left
from collections import Counter
from dataclasses import dataclass, field

#: width of one in-order rank (a column), in design pixels
SLOT = 60.0
#: width of a run of undrawn nodes between two drawn ones
GAP = 36.0
#: height of one depth level
ROW_H = 100.0
NODE_W = 80.0
NODE_H = 48.0
#: full levels are drawn while the tree keeps at most this many nodes
NODE_BUDGET = 160
#: and at most this many levels below the root
MAX_LEVELS = 24


@dataclass
class TreeLayout:
    """Where each drawn thing goes (design pixels), computed from the data."""
    pos: dict = field(default_factory=dict)            # node addr -> (x, y)
    ghosts: list = field(default_factory=list)         # (addr, key, x, y)
    markers: list = field(default_factory=list)        # (x, y, count, (dmin, dmax), parent addr|None)
    edges: list = field(default_factory=list)          # (child addr, parent addr, skipped levels)
    bands: list = field(default_factory=list)          # (y, levels skipped)
    rows: dict = field(default_factory=dict)           # depth -> y
    depth: dict = field(default_factory=dict)          # drawn node addr -> depth
    cap: int = 0
    max_depth: int = -1
    hidden: int = 0
    width: float = 0.0


def tree_depths(nodes: list[dict], root, index: dict | None = None) -> tuple[list[int], list[int]]:
    """Depth and parent index of every node (iterative: a degenerate splay
    tree is deeper than Python's recursion limit).  ``root`` may be a list of
    subtree tops (mid-removal, before the join): they are at depth 1, under
    the place of the root that was taken out."""
    n = len(nodes)
    if index is None:
        index = {nd["addr"]: i for i, nd in enumerate(nodes)}
    depth = [0] * n
    parent = [-1] * n
    tops = [r for r in (root if isinstance(root, list) else [root]) if r is not None and r in index]
    if not tops:
        return depth, parent
    if isinstance(root, list):
        for r in tops:
            depth[index[r]] = 1
    stack = [index[r] for r in tops]
    while stack:
        i = stack.pop()
        d = depth[i] + 1
        nd = nodes[i]
        for child in (nd["left"], nd["right"]):
            if child is not None:
                j = index[child]
                depth[j] = d
                parent[j] = i
                stack.append(j)
    return depth, parent


def layout_tree(nodes: list[dict], root, focus: set[int], ghosts: list[tuple[int, int]],
                budget: int = NODE_BUDGET, max_levels: int = MAX_LEVELS) -> TreeLayout:
    """x = in-order rank (runs of undrawn nodes narrowed to a gap), y = depth;
    full levels down to the deepest that keeps ``budget`` nodes, plus the
    ``focus`` addresses wherever they are; ``ghosts`` ``(addr, key)`` get a
    column at their key's in-order place, above the root."""
    out = TreeLayout()
    index = {nd["addr"]: i for i, nd in enumerate(nodes)}
    depth, parent = tree_depths(nodes, root, index)
    out.max_depth = max(depth) if nodes else -1
    out.cap = cap = full_levels(depth, out.max_depth, budget, max_levels)
    drawn = [d <= cap for d in depth]
    deep = sorted({depth[index[a]] for a in focus if a in index and depth[index[a]] > cap})
    for a in focus:
        i = index.get(a)
        if i is not None:
            drawn[i] = True
    _lay_rows(out, cap, deep)
    _lay_columns(out, nodes, depth, parent, drawn, ghosts)
    _lay_edges(out, nodes, parent, drawn)
    return out


def full_levels(depth: list[int], max_depth: int, budget: int, max_levels: int) -> int:
    """The deepest level down to which every level is drawn: the levels
    keep at most ``budget`` nodes and ``max_levels`` (the root always)."""
    counts = Counter(depth)
    total = 0
    cap = 0
    for d in range(0, max_depth + 1):
        total += counts[d]
        if (total > budget or d > max_levels) and d > 0:
            break
        cap = d
    return cap


def _lay_rows(out: TreeLayout, cap: int, deep: list[int]) -> None:
    """``out.rows`` (depth -> y): a row per full level, and below the cap
    only the ``deep`` levels where a drawn node is, a band (``out.bands``)
    written where levels between them are skipped."""
    for d in range(cap + 1):
        out.rows[d] = d * ROW_H
    y = (cap + 1) * ROW_H
    prev = cap + 1
    for d in deep:
        if d == cap + 1:
            out.rows[d] = y
            continue
        if d > prev + 1:
            out.bands.append((y + 0.75 * ROW_H, d - prev - 1))
            y += 1.5 * ROW_H
        else:
            y += ROW_H
        out.rows[d] = y
        prev = d


def _lay_columns(out: TreeLayout, nodes: list[dict], depth: list[int], parent: list[int], drawn: list[bool],
                 ghosts: list[tuple[int, int]]) -> None:
    """x in in-order: one column per drawn node (``out.pos``, ``out.depth``)
    or ghost (``out.ghosts``, above the root at its key's place), a narrow
    gap per run of nodes not drawn (``out.markers``, under the cap, linked
    to the run's parent when that is drawn just above it)."""
    n = len(nodes)
    marker_y = (out.cap + 1) * ROW_H
    ghost_list = sorted(ghosts, key=lambda g: g[1])
    keys = [nd["key"] for nd in nodes] if ghost_list else []
    ghost_at = [bisect_left(keys, g[1]) for g in ghost_list]
    cursor = 0.0
    run: list | None = None         # [count, dmin, dmax, shallowest index]

    def close_run():
        nonlocal cursor, run
        if run is not None:
            count, dmin, dmax, shallow = run
            p = parent[shallow]
            out.markers.append((cursor + GAP / 2, marker_y, count, (dmin, dmax),
                                nodes[p]["addr"] if p >= 0 and drawn[p] and dmin == depth[p] + 1 else None))
            out.hidden += count
            cursor += GAP
            run = None

    g = 0
    for i in range(n + 1):
        while g < len(ghost_list) and ghost_at[g] == i:
            close_run()
            out.ghosts.append((ghost_list[g][0], ghost_list[g][1], cursor + SLOT / 2, -ROW_H))
            cursor += SLOT
            g += 1
        if i == n:
            break
        if drawn[i]:
            close_run()
            addr = nodes[i]["addr"]
            out.pos[addr] = (cursor + SLOT / 2, out.rows[depth[i]])
            out.depth[addr] = depth[i]
            cursor += SLOT
        else:
            d = depth[i]
            if run is None:
                run = [1, d, d, i]
            else:
                run[0] += 1
                if d < run[1]:
                    run[1], run[3] = d, i
                run[2] = max(run[2], d)
    close_run()
    out.width = cursor


def _lay_edges(out: TreeLayout, nodes: list[dict], parent: list[int], drawn: list[bool]) -> None:
    """``out.edges``: each drawn node to its nearest drawn ancestor, with
    the levels skipped between them."""
    for i in range(len(nodes)):
        if not drawn[i] or parent[i] < 0:
            continue
        p, skipped = parent[i], 0
        while p >= 0 and not drawn[p]:
            p, skipped = parent[p], skipped + 1
        if p >= 0:
            out.edges.append((nodes[i]["addr"], nodes[p]["addr"], skipped))
