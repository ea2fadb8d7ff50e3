"""The tree view (splay best fit): what it draws, read back from its graphics
items, against the structure data and the step's events."""

import pytest
from PySide6.QtCore import QPointF, Qt

from heapscope.allocators import events as ev
from heapscope.allocators.explain import explain_step
from heapscope.allocators.registry import make_strategy
from heapscope.allocators.replay import Timeline
from heapscope.gui.structure_views import view_for
from heapscope.gui.structure_views import tree_view as tv

from .big_heaps import big_heap


def depths_of(structure):
    """Depth of every node, walked from the root here (not by the view)."""
    by = {n["addr"]: n for n in structure["nodes"]}
    out = {}
    todo = [(structure["root"], 0)] if structure["root"] is not None else []
    while todo:
        a, d = todo.pop()
        out[a] = d
        for c in (by[a]["left"], by[a]["right"]):
            if c is not None:
                todo.append((c, d + 1))
    return out


@pytest.fixture(scope="module")
def splay_timeline(small_trace):
    return Timeline(small_trace, "splay-best-fit").build()


@pytest.fixture
def view(qtbot):
    v = view_for("tree")()
    qtbot.addWidget(v)
    v.resize(1280, 720)
    v.show()
    qtbot.waitExposed(v)
    return v


def show(view, timeline, step):
    s = timeline.seek(step)
    st = s.structure()
    ex = explain_step(s, timeline.last_record)
    view.show_step(st, ex, timeline.last_record)
    return st, ex


def test_tree_view_is_the_view_of_the_tree_kind():
    assert view_for("tree") is tv.TreeView


def test_drawn_tree_has_the_structures_nodes_in_order_x_by_rank_y_by_depth(view, splay_timeline):
    checked = 0
    for step in range(20, splay_timeline.n + 1, 23):
        st, ex = show(view, splay_timeline, step)
        d = view.drawn()
        nodes = st["nodes"]
        assert d["hidden"] == 0, "a tree this small is drawn whole"
        assert d["nodes"] == [n["addr"] for n in nodes]
        assert d["keys"] == [n["key"] for n in nodes]
        assert d["labels"] == [tv.tree_bytes(n["key"]) for n in nodes]
        xs = [d["x"][n["addr"]] for n in nodes]
        assert all(a < b for a, b in zip(xs, xs[1:])), "x follows the in-order rank"
        columns = sorted(xs + list(d["ghost_x"].values()))
        assert columns == [columns[0] + i * tv.SLOT for i in range(len(columns))] if columns else True, \
            "one column per rank (a node taken out this step keeps one, above the tree)"
        depth = depths_of(st)
        assert d["depth"] == depth
        assert {a: round(y) for a, y in d["y"].items()} == {a: round(k * tv.ROW_H) for a, k in depth.items()}
        edges = sorted((n["addr"], c) for n in nodes for c in (n["left"], n["right"]) if c is not None)
        assert d["edges"] == edges
        assert d["counts"] == {n["addr"]: len(n["blocks"]) for n in nodes}
        assert d["lists"] == {n["addr"]: n["blocks"][:tv.LIST_SHOWN + 1] for n in nodes}
        assert d["wilderness"] == st["wilderness"]
        checked += bool(nodes)
    assert checked > 10


def test_search_path_is_numbered_in_visit_order_and_splays_are_where_they_happened(view, splay_timeline):
    seen_rotation = seen_ghost = 0
    for step in range(1, splay_timeline.n + 1):
        kind, _, _ = splay_timeline.op(step)
        s = splay_timeline.seek(step)
        rec = splay_timeline.last_record
        if rec.rotations == 0:
            continue
        st = s.structure()
        ex = explain_step(s, rec)
        view.show_step(st, ex, rec)
        d = view.drawn()
        wild_addrs = {st["wilderness"]} | {a for e in rec.events if isinstance(e, ev.PointerMove)
                                           for a in (e.old, e.new) if a is not None}
        visits = [e.addr for e in rec.events if isinstance(e, ev.Visit)]
        drawn_visits = [(n, st["wilderness"] if a in wild_addrs else a) for n, a in d["visits"]]
        expected = [(i + 1, st["wilderness"] if a in wild_addrs else a) for i, a in enumerate(visits)]
        assert drawn_visits == expected
        rotations = [(e.kind, e.addr) for e in rec.events if isinstance(e, ev.Rotation)]
        assert [(k, a) for k, a, _, _ in d["rotations"]] == rotations
        # each splay climbs: every step ends where the next begins, the last one at the root
        runs = {}
        for k, a, frm, to in d["rotations"]:
            runs.setdefault(a, []).append((k, frm, to))
        for steps in runs.values():
            for (k, frm, to), nxt in zip(steps, steps[1:] + [None]):
                assert frm - to == {"zig": 1, "zig-zig": 2, "zig-zag": 2}[k]  # single rotations
                assert to == (0 if nxt is None else nxt[1])
        seen_rotation += 1
        taken = [e.addr for e in rec.events if isinstance(e, ev.Placed)]
        if taken and taken[0] not in {n["addr"] for n in st["nodes"]} and taken[0] not in wild_addrs:
            assert taken[0] in d["ghosts"] and d["taken"] == [taken[0]]
            seen_ghost += 1
        if seen_rotation > 40:
            break
    assert seen_rotation > 10 and seen_ghost > 5


def test_a_free_lights_the_leaf_or_list_member_it_inserted(view, splay_timeline):
    seen = set()
    for step in range(1, splay_timeline.n + 1):
        s = splay_timeline.seek(step)
        rec = splay_timeline.last_record
        inserts = [e for e in rec.events if isinstance(e, ev.TreeInsert)]
        if not inserts or rec.rotations:
            continue
        view.show_step(s.structure(), explain_step(s, rec), rec)
        assert view.drawn()["inserted"] == [inserts[-1].addr]
        seen.add(inserts[-1].side)
        if {"left", "right", "list"} <= seen:
            break
    assert {"left", "right", "list"} <= seen


def test_micro_steps_light_only_the_events_shown_so_far(view, splay_timeline):
    step = next(t for t in range(1, splay_timeline.n + 1)
                if splay_timeline.seek(t) and splay_timeline.last_record.rotations >= 2
                and splay_timeline.last_record.visits >= 3)
    st, ex = show(view, splay_timeline, step)
    first_rotation = next(e.index for e in ex if isinstance(e.event, ev.Rotation))
    view.set_current_event(1)
    assert [n for n, _ in view.drawn()["visits"]] == [1, 2]
    assert view.drawn()["rotations"] == []
    view.set_current_event(first_rotation)
    assert len(view.drawn()["rotations"]) == 1
    view.set_current_event(None)
    assert len(view.drawn()["rotations"]) == sum(isinstance(e.event, ev.Rotation) for e in ex)


def test_ten_thousand_free_blocks_are_summarised_and_say_so(view):
    _, st, ex, rec = big_heap("splay-best-fit", 10_000, max_size=160_000)
    view.show_step(st, ex, rec)
    d = view.drawn()
    nodes = st["nodes"]
    assert len(nodes) > 5000
    assert len(d["nodes"]) <= tv.NODE_BUDGET + 40
    assert len(d["nodes"]) + d["hidden"] == len(nodes)
    rank = {n["addr"]: i for i, n in enumerate(nodes)}
    ranks = [rank[a] for a in d["nodes"]]
    assert ranks == sorted(ranks), "drawn nodes keep their in-order rank order"
    assert "levels 0" in view.summary and str(d["hidden"]) in view.summary
    # the search path is drawn whole, whatever the depth cap
    visits = [e.event.addr for e in ex if isinstance(e.event, ev.Visit)]
    assert [a for _, a in d["visits"]] == [a for a in visits if a in rank or a in d["ghosts"]]


def test_a_degenerate_tree_draws_the_deep_leaf_a_free_inserted_and_skips_the_levels_above(view):
    s = make_strategy("splay-best-fit", record=False)
    pairs = [(s.malloc(16 + 8 * i), s.malloc(16)) for i in range(1200)]
    for a, _ in pairs[:-1]:
        s.free(a)                 # leaves without splaying: a right spine
    s.record = True
    s.free(pairs[-1][0])
    st = s.structure()
    view.show_step(st, explain_step(s, s.rec), s.rec)
    d = view.drawn()
    depth = depths_of(st)
    [leaf] = [e.addr for e in s.rec.events if isinstance(e, ev.TreeInsert)]
    assert depth[leaf] > 1000
    assert d["inserted"] == [leaf] and d["depth"][leaf] == depth[leaf]
    assert d["elided"] and max(d["elided"]) > 900
    assert "levels above the step's deep nodes skipped" in view.summary
    # selecting a node in the skipped levels draws it
    middle = st["nodes"][600]["addr"]
    assert middle not in d["nodes"]
    view.set_selection(middle)
    d = view.drawn()
    assert middle in d["nodes"] and d["selected"] == middle and d["depth"][middle] == depth[middle]


def item_centre_on_viewport(view, item, local=QPointF(0, 0)):
    scene_point = item.mapToScene(local)
    return view.graphics.mapFromScene(scene_point)


def test_clicking_a_node_or_a_list_member_emits_its_address(qtbot, view, splay_timeline):
    step = next(t for t in range(200, splay_timeline.n + 1)
                if splay_timeline.seek(t).structure()["nodes"]
                and any(len(n["blocks"]) > 2 for n in splay_timeline.strategy.structure()["nodes"]))
    st, _ = show(view, splay_timeline, step)
    node = next(n for n in st["nodes"] if len(n["blocks"]) > 2)
    item = view._nodes[node["addr"]]
    view.scroll_to(view.view_rect_of(item))
    qtbot.wait(10)
    with qtbot.waitSignal(view.block_clicked) as sig:
        qtbot.mouseClick(view.graphics.viewport(), Qt.LeftButton, pos=item_centre_on_viewport(view, item))
    assert sig.args == [node["addr"]]
    assert view.drawn()["selected"] == node["addr"]
    square = item.squares()[1]
    with qtbot.waitSignal(view.block_clicked) as sig:
        qtbot.mouseClick(view.graphics.viewport(), Qt.LeftButton,
                         pos=item_centre_on_viewport(view, item, square.center()))
    assert sig.args == [node["blocks"][2]]
    with qtbot.waitSignal(view.block_hovered) as sig:
        qtbot.mouseMove(view.graphics.viewport(), item_centre_on_viewport(view, item, item.squares()[0].center()))
    assert sig.args == [node["blocks"][1]]
    assert "member of the size list" in view.status.text()


def test_pyqtgraph_exports_the_drawing(tmp_path, view, splay_timeline):
    from pyqtgraph.exporters import ImageExporter
    show(view, splay_timeline, 300)
    path = tmp_path / "tree.png"
    ImageExporter(view.box).export(str(path))
    assert path.stat().st_size > 2000


def test_wheel_scrolls_ctrl_wheel_zooms_and_either_stops_following(qtbot, view, splay_timeline):
    from PySide6.QtCore import QPoint, QPointF as P
    from PySide6.QtGui import QWheelEvent
    from PySide6.QtWidgets import QApplication
    show(view, splay_timeline, 300)
    assert view.following

    def wheel(modifiers):
        vp = view.graphics.viewport()
        centre = P(vp.width() / 2, vp.height() / 2)
        event = QWheelEvent(centre, vp.mapToGlobal(centre), QPoint(0, 0), QPoint(0, -120),
                            Qt.NoButton, modifiers, Qt.NoScrollPhase, False)
        QApplication.sendEvent(vp, event)

    before = view.box.viewRect()
    wheel(Qt.NoModifier)
    after = view.box.viewRect()
    assert after.top() > before.top() and after.width() == pytest.approx(before.width())
    assert not view.following
    wheel(Qt.ControlModifier)
    assert view.box.viewRect().width() != pytest.approx(after.width())
    view.follow_button.setChecked(True)
    assert view.box.viewRect().width() == pytest.approx(before.width())


@pytest.fixture(scope="module")
def gcc_late_steps():
    """Splay best fit on the bundled gcc-cc1 trace (a real program): the
    structure and events at three late steps whose searches are deep or
    wide, replayed once without a Timeline."""
    from heapscope import traces
    from heapscope.allocators.replay import Program, apply_op
    trace = traces.load_trace("gcc-cc1")
    wanted = (55111, 57473, 60783)
    s, program = make_strategy("splay-best-fit", record=False), Program()
    out = {}
    for i, (kind, ident, size) in enumerate(zip(trace.kind.tolist()[:max(wanted)], trace.ids.tolist(),
                                                trace.sizes.tolist())):
        s.record = i + 1 in wanted
        rec = apply_op(s, program, kind, ident, size)
        if s.record:
            out[i + 1] = (s.structure(), explain_step(s, rec), rec)
    return out


@pytest.mark.parametrize("step", [55111, 57473, 60783])
def test_a_deep_search_is_framed_with_its_root_and_the_node_it_ended_at(qtbot, gcc_late_steps, step):
    """Issue 24: on gcc-cc1 the root (where every search starts) was drawn
    off the top or the right edge while the view followed the leaf the step
    inserted.  At the structure panel's size at 1280 x 720, the root's box
    and the step's last node are both inside the visible rectangle, clear of
    the Follow step / Fit all buttons."""
    from PySide6.QtCore import QRectF
    from PySide6.QtGui import QFont
    from PySide6.QtWidgets import QApplication
    from heapscope.gui.theme import Presentation
    # the text size of a 1280 x 720 window (put back after the test:
    # conftest.py's fresh_application_look)
    app = QApplication.instance()
    f = QFont(app.font())
    f.setPointSizeF(Presentation(screen_height=720).body_pt)
    app.setFont(f)
    view = view_for("tree")()
    qtbot.addWidget(view)
    view.set_zoom_factor(0.9)           # the drawings' zoom at 1280 x 720
    view.resize(532, 445)
    view.show()
    qtbot.waitExposed(view)
    structure, explained, record = gcc_late_steps[step]
    view.show_step(structure, explained, record)
    qtbot.wait(10)
    visible = view.box.viewRect()
    b = view.buttons
    buttons = QRectF(view.box.mapSceneToView(view.graphics.mapToScene(b.pos())),
                     view.box.mapSceneToView(view.graphics.mapToScene(b.pos() + b.rect().bottomRight())))
    root = view._nodes[structure["root"]]
    last = [it for it in view.nodes.everything() if it.isVisible() and it.role in ("taken", "inserted")]
    assert len(last) == 1, step
    root_rect = view.view_rect_of(root, root.box())
    last_rect = view.view_rect_of(last[0], last[0].box())
    _, room_h = view.legible_room()
    framed = [last[0]]
    if last_rect.united(root_rect).height() <= room_h:
        framed.append(root)
    else:
        # a path too deep for one legible frame: the line under the view says where the root is
        assert "Fit all shows the whole path" in view.summary, (step, view.summary)
    for item in framed:
        rect = view.view_rect_of(item, item.box())
        assert visible.contains(rect), (step, item.key, rect, visible)
        assert not rect.intersects(buttons), (step, item.key, rect, buttons)
    assert step == 60783 or root in framed       # only that one is too deep (a leaf at depth 5)
