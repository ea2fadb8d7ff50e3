"""The page-table views (gui/structure_views/pages_view.py): phkmalloc's page
directory and GNU malloc's block table, read back from their graphics items
and compared with the structure and the step's events."""

import pytest

from heapscope import traces
from heapscope.allocators import make_strategy
from heapscope.allocators.events import Visit
from heapscope.allocators.explain import explain_step
from heapscope.allocators.replay import Timeline
from heapscope.gui.structure_views import view_for
from heapscope.gui.structure_views.pages_view import (PER_CLASS, RUN_LIMIT, TILE_LIMIT, BlockTableView,
                                                      PageDirectoryView)


def make_view(qtbot, kind, width=760, height=900):
    view = view_for(kind)()
    qtbot.addWidget(view)
    view.resize(width, height)
    view.show()
    return view


def show(view, s, rec=None):
    rec = rec or s.rec
    structure = s.structure()
    explained = explain_step(s, rec)
    view.show_step(structure, explained, rec)
    return structure, explained


def expected_tiles(structure):
    """(addr, state) of every page or block, as documented."""
    if structure["kind"] == "page-directory":
        unit, runs = structure["pagesize"], structure["pages"]
        word = {"free": "free", "run": "used", "chunks": "chunks"}
    else:
        unit, runs = structure["blocksize"], structure["blocks"]
        word = {"free": "free", "busy": "used", "frags": "chunks", "table": "table"}
    return [(a + i * unit, word[state]) for a, n, state in runs for i in range(n)]


def expected_classes(structure):
    """{chunk size: [(place, free count)]} per non-empty list, in list order."""
    out = {}
    if structure["kind"] == "page-directory":
        pages = structure["chunk_pages"]
        for j, listed in structure["chunk_lists"].items():
            if listed:
                out[1 << int(j)] = [(p, pages[p]["free"]) for p in listed]
    else:
        B = structure["blocksize"]
        for log, addrs in structure["fraglists"].items():
            groups = []
            for a in addrs:
                b = a - a % B
                if groups and groups[-1][0] == b:
                    groups[-1][1] += 1
                else:
                    groups.append([b, 1])
            if groups:
                out[1 << int(log)] = [tuple(g) for g in groups]
    return out


def check_drawing(view, structure, explained):
    d = view.drawn()
    tiles = expected_tiles(structure)
    if len(tiles) <= TILE_LIMIT:
        assert d["tiles"] == tiles and d["folded_tiles"] == 0
    else:
        assert len(d["tiles"]) + d["folded_tiles"] == len(tiles)
        assert set(d["tiles"]) <= set(tiles)
    runs = structure["free_runs"] if structure["kind"] == "page-directory" else structure["free_clusters"]
    if len(runs) <= RUN_LIMIT:
        assert d["runs"] == runs
    else:
        assert d["runs"] == [a for a in runs if a in set(d["runs"])]
    if structure["kind"] == "block-table" and structure["heapindex"] in runs:
        # (mid-step _heapindex may still name a cluster a free just absorbed,
        # as in the original until the free resets it: no arrow then)
        assert d["pointer"] == structure["heapindex"]
    classes = expected_classes(structure)
    assert set(d["classes"]) == set(classes)
    for size, places in classes.items():
        drawn = d["classes"][size]
        assert drawn[:PER_CLASS] == places[:PER_CLASS]
        assert set(drawn) <= set(places)
    # the runs (and free walks) examined, numbered in order
    unit = structure.get("pagesize") or structure["blocksize"]
    visits = [e.event.addr for e in explained if isinstance(e.event, Visit)
              and (e.event.size >= unit or e.event.place)]
    drawn_runs = set(d["runs"])
    assert d["numbers"] == sorted((i + 1, a) for i, a in enumerate(visits) if a in drawn_runs)
    return d


def test_the_kinds_have_their_views():
    assert view_for("page-directory") is PageDirectoryView
    assert view_for("block-table") is BlockTableView


def test_phkmalloc_first_malloc_cuts_two_chunk_pages(qtbot):
    view = make_view(qtbot, "page-directory")
    s = make_strategy("phkmalloc")
    s.malloc(20)
    structure, explained = show(view, s)
    d = check_drawing(view, structure, explained)
    assert d["tiles"] == [(0, "chunks"), (4096, "chunks")]
    assert d["classes"] == {32: [(4096, 125)], 64: [(0, 62)]}
    assert d["roles"][("class", 4096)] == "taken" and d["roles"][("class", 0)] == "taken"


def test_phkmalloc_free_pages_join_and_the_top_goes_back(qtbot):
    view = make_view(qtbot, "page-directory")
    s = make_strategy("phkmalloc")
    s.malloc(20)
    a, b = s.malloc(3000), s.malloc(3000)
    s.malloc(3000)
    s.free(a)
    s.free(b)
    structure, explained = show(view, s)
    d = check_drawing(view, structure, explained)
    assert d["runs"] == [a] and d["roles"][("run", a)] == "joined"
    big = s.malloc(20 * 4096)
    s.free(big)
    structure, explained = show(view, s)
    check_drawing(view, structure, explained)
    assert "given back to the system" in view.info.text()


def test_gnu_fragments_are_grouped_by_block_and_heapindex_points_at_a_cluster(qtbot):
    view = make_view(qtbot, "block-table")
    s = make_strategy("gnu-malloc")
    a = s.malloc(20)
    structure, explained = show(view, s)
    d = check_drawing(view, structure, explained)
    assert d["tiles"][:6] == [(i * 4096, "table") for i in range(6)]
    assert d["classes"] == {32: [(24576, 127)]} and d["roles"][("class", 24576)] == "new"
    c = [s.malloc(5000) for _ in range(4)]
    s.free(c[0])
    s.free(c[2])
    s.free(c[1])                    # walks back from c[2] to c[0], joins both
    structure, explained = show(view, s)
    d = check_drawing(view, structure, explained)
    assert d["runs"] == [c[0]] and d["pointer"] == c[0]
    # the walk read c[2] (from _heapindex) then c[0]; c[2] was joined away
    assert [a for a in (e.event.addr for e in explained if isinstance(e.event, Visit))] == [c[2], c[0]]
    assert d["numbers"] == [(2, c[0])]


@pytest.mark.parametrize("name", ["phkmalloc", "gnu-malloc"])
@pytest.mark.parametrize("step", [1, 2, 50, 301, 460, 620, 799, 800])
def test_every_step_of_a_replay_draws_what_the_structure_says(qtbot, name, step):
    tl = Timeline(traces.make_workload("vo1989", steps=400, seed=11), name).build()
    tl.seek(step)
    view = make_view(qtbot, tl.strategy.structure()["kind"])
    structure, explained = show(view, tl.strategy, tl.last_record)
    check_drawing(view, structure, explained)


def test_a_big_heap_folds_the_table_and_says_so(qtbot):
    view = make_view(qtbot, "block-table")
    s = make_strategy("gnu-malloc")
    ps = [s.malloc(5000) for _ in range(300)]        # 600 blocks and the table
    for p in ps[::3]:
        s.free(p)
    structure, explained = show(view, s)
    d = check_drawing(view, structure, explained)
    assert d["folded_tiles"] > 0 and "folded" in view.summary
    assert len(structure["free_clusters"]) > RUN_LIMIT and len(d["runs"]) < len(structure["free_clusters"])


@pytest.mark.parametrize("name", ["phkmalloc", "gnu-malloc"])
def test_micro_steps_draw_the_table_after_each_event(qtbot, name):
    from heapscope.allocators.step_states import StepStates
    s = make_strategy(name)
    s.malloc(20)
    ps = [s.malloc(5000) for _ in range(4)]
    s.free(ps[0])
    s.free(ps[2])
    before = s.structure()
    s.free(ps[1])                      # a walk, joins on both sides
    after = s.structure()
    explained = explain_step(s, s.rec)
    states = StepStates(before, after, s.rec.events)
    assert states.available
    view = make_view(qtbot, after["kind"])
    view.show_step(after, explained, s.rec)
    view.set_states(states.at)
    runs = []
    for i in range(len(explained)):
        view.set_current_event(i)
        d = check_drawing(view, states.at(i), explained[:i + 1])
        runs.append(len(d["runs"]))
    assert runs[0] == 2 and runs[-1] == 1        # two runs before the joins, one after


@pytest.mark.parametrize("name", ["phkmalloc", "gnu-malloc"])
def test_in_a_narrow_view_headings_wrap_and_the_steps_card_shows_with_its_heading(qtbot, name):
    """Issue 24: in presenter mode at 1280 x 720 (about 530 x 140 pixels of
    canvas) GNU malloc's "_fraghead[8] (256 B fragments): 4 free in 1
    block" at step 5003 of the default trace ran off the right edge, and the
    view scrolled to the taken card left the heading cut at its top.  Read
    back at that size: no heading reaches past the viewport's right edge,
    and the heading of the step's card is wholly in view with the card."""
    from PySide6.QtWidgets import QApplication, QGraphicsSimpleTextItem
    tl = Timeline(traces.load_trace(traces.default_trace_path()), name).build()
    tl.seek(5003)
    view = make_view(qtbot, tl.strategy.structure()["kind"], width=530, height=330)
    assert 130 <= view.canvas.viewport().height() <= 160    # as in presenter mode at 720
    show(view, tl.strategy, tl.last_record)
    QApplication.processEvents()
    canvas = view.canvas
    seen = canvas.mapToScene(canvas.viewport().rect()).boundingRect()
    headings = [i for i in canvas.root.childItems() if type(i) is QGraphicsSimpleTextItem
                and i.font().bold()]
    assert headings
    for h in headings:
        assert h.sceneBoundingRect().right() <= seen.left() + canvas.viewport().width() / canvas.zoom, h.text()
    card = next(c for k, c in view._cards.items() if c.role and k[0] != "tile" and c.parentItem() is not None)
    assert seen.contains(card.sceneBoundingRect()), (seen, card.sceneBoundingRect())
    above = [h for h in headings if h.sceneBoundingRect().bottom() <= card.sceneBoundingRect().top() + 1]
    own = max(above, key=lambda h: h.sceneBoundingRect().bottom())
    assert seen.contains(own.sceneBoundingRect()), (own.text(), own.sceneBoundingRect(), seen)
