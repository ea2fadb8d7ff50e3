"""The ring views (gui/structure_views/ring_view.py): K&R's address-ordered
ring (next fit, first fit) and Kruse's rotating ring, read back from their
graphics items and compared with the structure and the step's events."""

import json

import pytest
from PySide6.QtCore import Qt

from heapscope import traces
from heapscope.allocators.events import Visit
from heapscope.allocators.explain import explain_step
from heapscope.allocators.replay import Timeline
from heapscope.gui.structure_views import view_for
from heapscope.gui.structure_views.canvas import Card, Note, count_text
from heapscope.gui.structure_views.ring_view import VISIT_ENDS, AddressRingView, RotatingRingView
from heapscope.gui.structure_views.summarise import FULL_LIMIT

from .big_heaps import every_other_freed, replay_last_steps


def make_view(qtbot, kind, width=560, height=700):
    view = view_for(kind)()
    qtbot.addWidget(view)
    view.resize(width, height)
    view.show()
    return view


def shown(view, timeline):
    """Show the timeline's current step; return (structure, explained)."""
    s = timeline.strategy
    structure = s.structure()
    explained = explain_step(s, timeline.last_record)
    view.show_step(structure, explained, timeline.last_record)
    return structure, explained


def visits_of(explained):
    return [e.event.addr for e in explained if isinstance(e.event, Visit)]


def expected_order(structure, explained):
    """The documented drawing order of the list (without ghosts)."""
    ring = list(structure["free_list"])
    if structure["kind"] == "ring":
        v = visits_of(explained)
        if v and v[0] in ring:
            k = ring.index(v[0])
            ring = ring[k:] + ring[:k]
    return ring


def check_drawing(view, structure, explained):
    """What every step must satisfy, whatever was folded."""
    d = view.drawn()
    order = expected_order(structure, explained)
    seq = [e for e in d["sequence"] if not (isinstance(e, tuple) and e[0] == "ghost")]
    if structure["kind"] == "address-ring":
        assert seq[0] == "base"
        seq = seq[1:]
    # nodes and folds walk the list in order and cover it exactly once
    i = 0
    for entry in seq:
        if entry[0] == "fold":
            assert entry[1] >= 2
            i += entry[1]
        else:
            assert entry == ("node", order[i]), (entry, i)
            i += 1
    assert i == len(order)
    # ghosts (blocks that left the list this step) are drawn where they were
    rows = [e for e in d["sequence"] if isinstance(e, tuple) and e[0] in ("node", "ghost")]
    if structure["kind"] == "address-ring":
        addrs = [e[1] for e in rows]
        assert addrs == sorted(addrs)
    else:
        for k, e in enumerate(rows):
            if e[0] == "ghost" and d["roles"][e[1]] == "unlinked" and structure["head"] in d["nodes"]:
                assert rows[k + 1] == ("node", structure["head"])
    assert (sum(d["folds"]) > 0) == ("Summarised" in view.summary)
    if len(order) <= FULL_LIMIT:
        assert d["nodes"] == order and not d["folds"]
    # the search pointer
    if structure["kind"] == "address-ring":
        roving = any(p["name"] == "rover" for p in structure["pointers"])
        want = (structure["rover"] if structure["rover"] is not None else "base") if roving else None
    else:
        want = structure["head"]
    assert d["pointer"] == want
    # the visit numbers: each badge sits on the block visited with that number
    visits = visits_of(explained)
    for n, addr in d["numbers"]:
        assert visits[n - 1] == addr
    numbered = set(range(1, min(VISIT_ENDS, len(visits)) + 1)) | \
        set(range(max(1, len(visits) - VISIT_ENDS + 1), len(visits) + 1))
    drawn_numbers = {n for n, _ in d["numbers"]}
    present = set(d["nodes"]) | set(d["ghosts"])
    for n in numbered:
        if visits[n - 1] in present:
            assert n in drawn_numbers
    if not d["folds"]:
        assert [a for _, a in d["numbers"]] == visits
    # the ring closes: from the last row back to the first
    first = "base" if structure["kind"] == "address-ring" else (d["sequence"][0][1] if d["sequence"] else None)
    if d["sequence"]:
        last = d["sequence"][-1]
        assert d["loop"][0] == first
        if last[0] != "fold":
            assert d["loop"][1] == last[1] if isinstance(last, tuple) else last
    return d


@pytest.fixture(scope="module")
def small_trace():
    return traces.make_workload("vo1989", steps=150, seed=5)


@pytest.mark.parametrize("strategy", ["next-fit", "first-fit", "rotating-list"])
def test_every_step_of_a_short_replay_draws_the_structure(qtbot, small_trace, strategy):
    tl = Timeline(small_trace, strategy).build()
    view = None
    seen_folds = seen_ghosts = seen_before = 0
    for t in range(1, tl.n + 1):
        tl.seek(t)
        structure = tl.strategy.structure()
        if view is None:
            view = make_view(qtbot, structure["kind"])
        structure, explained = shown(view, tl)
        d = check_drawing(view, structure, explained)
        seen_folds += bool(d["folds"])
        seen_ghosts += bool(d["ghosts"])
        seen_before += d["pointer_before"] is not None
    # the replay went through the interesting cases, not only the easy ones
    assert seen_ghosts
    if strategy != "first-fit":
        assert seen_before


def test_the_rover_arrow_follows_next_fits_rover_on_every_step(qtbot, small_trace):
    tl = Timeline(small_trace, "next-fit").build()
    view = make_view(qtbot, "address-ring")
    moved = 0
    for t in range(1, tl.n + 1):
        tl.seek(t)
        structure, _ = shown(view, tl)
        rover = tl.strategy.rover          # the strategy's own rover, not the structure's
        assert view.drawn()["pointer"] == (rover if rover is not None else "base")
        moved += rover is not None
    assert moved > tl.n // 2


def test_first_fit_has_no_rover_and_says_searches_start_at_base(qtbot, small_trace):
    tl = Timeline(small_trace, "first-fit").build()
    view = make_view(qtbot, "address-ring")
    tl.seek(100)
    shown(view, tl)
    d = view.drawn()
    assert d["pointer"] is None
    assert "every search starts" in view.title.text()
    base_notes = [i.text() for i in view.canvas.root.childItems() if isinstance(i, Note)]
    assert any("every search starts here" in t for t in base_notes)


@pytest.fixture(scope="module")
def big_heaps():
    """For each ring strategy, the last three steps over 10 000 free blocks:
    the last free, a malloc that searches them all, a small malloc."""
    trace = every_other_freed(10000)
    return {name: replay_last_steps(trace, name)[1] for name in ("next-fit", "first-fit", "rotating-list")}


@pytest.mark.parametrize("strategy", ["next-fit", "first-fit", "rotating-list"])
def test_ten_thousand_free_blocks_are_summarised(qtbot, big_heaps, strategy):
    view = None
    for i, (structure, explained) in enumerate(big_heaps[strategy]):
        assert len(structure["free_list"]) >= 9999
        if view is None:
            view = make_view(qtbot, structure["kind"])
        view.show_step(structure, explained)
        d = check_drawing(view, structure, explained)
        assert len(d["nodes"]) < 60
        assert d["folds"] and sum(d["folds"]) + len(d["nodes"]) == len(structure["free_list"])
        assert "Summarised" in view.summary
        assert f"of {count_text(len(structure['free_list']))} free blocks" in view.summary
        assert view.summary in view.info.text()
        # without the step's events, only the pointer's own place keeps it in view
        view.show_step(structure, [])
        d = check_drawing(view, structure, [])
        assert d["pointer"] is not None or strategy == "first-fit"
        view.show_step(structure, explained)
        d = view.drawn()
        if i == 1:
            # the long search: its first and last VISIT_ENDS nodes carry numbers
            visits = visits_of(explained)
            assert len(visits) > 5000
            numbers = [n for n, _ in d["numbers"]]
            assert set(range(1, VISIT_ENDS + 1)) <= set(numbers)
            assert set(range(len(visits) - VISIT_ENDS + 1, len(visits) + 1)) <= set(numbers)
            assert "examined" in view.summary


def test_a_json_round_trip_of_the_structure_draws_the_same(qtbot, small_trace):
    tl = Timeline(small_trace, "next-fit").build()
    view = make_view(qtbot, "address-ring")
    tl.seek(200)
    structure, explained = shown(view, tl)
    before = view.drawn()
    view.show_step(json.loads(json.dumps(structure)), explained)
    assert view.drawn() == before


def kr(ops, strategy="next-fit"):
    tl = Timeline(traces.Trace.from_ops(ops), strategy).build()
    return tl


def test_an_exact_fit_leaves_a_ghost_where_the_block_was(qtbot):
    # K&R cuts blocks from the top down: block 3 lies below block 1.  Free both,
    # then ask for exactly their size: the search from the rover unlinks block 3 whole.
    tl = kr([("a", 0, 100), ("a", 1, 100), ("a", 2, 100), ("a", 3, 100), ("a", 4, 100),
             ("f", 1), ("f", 3), ("a", 5, 100)])
    view = make_view(qtbot, "address-ring")
    tl.seek(7)
    gone = tl.strategy.structure()["free_list"]
    assert len(gone) == 3
    tl.seek(8)
    structure, explained = shown(view, tl)
    d = view.drawn()
    [ghost] = d["ghosts"]
    assert ghost not in structure["free_list"] and ghost in gone
    assert d["roles"][ghost] == "unlinked"
    assert "unlinked" in d["notes"][ghost]
    # it is drawn at its address place: the rows after base stay in address order
    assert d["sequence"][0] == "base" and not d["folds"]
    addrs = [e[1] for e in d["sequence"][1:]]
    assert addrs == sorted(addrs) and ghost in addrs and ghost != addrs[-1]


def test_a_free_that_coalesces_shows_what_joined(qtbot):
    # blocks 0..3; free 1, then 2: block 2 joins 1 below it, and the top above it
    tl = kr([("a", 0, 100), ("a", 1, 100), ("a", 2, 100), ("f", 1), ("f", 2)])
    view = make_view(qtbot, "address-ring")
    tl.seek(4)
    tl.seek(5)          # stepped to (right after build() the last step has no events)
    structure, explained = shown(view, tl)
    d = view.drawn()
    survivor = min(a for a in structure["free_list"])
    assert d["roles"][survivor] == "joined"
    assert "joined in" in d["notes"][survivor]
    for g in d["ghosts"]:
        assert d["roles"][g] == "absorbed" and f"{survivor:#x}" in d["notes"][g]
    assert d["ghosts"], "the free block above was on the list and joined: a ghost"


def test_kruse_ring_is_drawn_from_where_the_search_started(qtbot):
    # four blocks freed in an order that makes the LIFO ring differ from address order
    ops = [("a", i, 64) for i in range(8)] + [("f", 1), ("f", 5), ("f", 3), ("a", 9, 200), ("a", 10, 40)]
    tl = kr(ops, "rotating-list")
    view = make_view(qtbot, "ring")
    tl.seek(len(ops) - 1)          # malloc(200): examines every small block, grows, takes new memory
    structure, explained = shown(view, tl)
    d = view.drawn()
    visits = visits_of(explained)
    assert len(visits) >= 3
    assert d["sequence"][0] == ("node", visits[0])
    assert d["nodes"] != sorted(d["nodes"]), "LIFO order, not address order"
    tl.seek(len(ops))              # malloc(40): the head rotates past the block used
    structure, explained = shown(view, tl)
    d = view.drawn()
    visits = visits_of(explained)
    assert d["pointer"] == structure["head"]
    assert d["pointer_before"] == visits[0]
    assert d["numbers"][0] == (1, visits[0])


def test_micro_steps_number_only_the_visits_so_far(qtbot, small_trace):
    tl = Timeline(small_trace, "rotating-list").build()
    view = make_view(qtbot, "ring")
    # step to the first malloc that examines three blocks or more
    for t in range(1, tl.n + 1):
        tl.seek(t)
        if sum(isinstance(e, Visit) for e in (tl.last_record.events or [])) >= 3:
            break
    structure, explained = shown(view, tl)
    first_visits = [e.index for e in explained if isinstance(e.event, Visit)]
    view.set_current_event(first_visits[1])
    assert [n for n, _ in view.drawn()["numbers"]] == [1, 2]
    view.set_current_event(None)
    assert len(view.drawn()["numbers"]) == len(first_visits)


def card_of(view, addr):
    return next(c for c in view.canvas.root.childItems() if isinstance(c, Card) and c.addr == addr)


def test_clicking_a_node_emits_its_address_and_hovering_names_it(qtbot, small_trace):
    tl = Timeline(small_trace, "next-fit").build()
    view = make_view(qtbot, "address-ring")
    tl.seek(120)
    structure, _ = shown(view, tl)
    addr = view.drawn()["nodes"][1]
    card = card_of(view, addr)
    view.canvas.ensureVisible(card.sceneBoundingRect())
    pos = view.canvas.mapFromScene(card.sceneBoundingRect().center())
    with qtbot.waitSignal(view.block_hovered, timeout=2000) as hovered:
        qtbot.mouseMove(view.canvas.viewport(), pos)
    assert hovered.args == [addr]
    with qtbot.waitSignal(view.block_clicked, timeout=2000) as clicked:
        qtbot.mouseClick(view.canvas.viewport(), Qt.LeftButton, pos=pos)
    assert clicked.args == [addr]
    # the base is not a block: a click there emits nothing
    base = next(c for c in view.canvas.root.childItems() if isinstance(c, Card) and c.role == "base")
    view.canvas.ensureVisible(base.sceneBoundingRect())
    with qtbot.assertNotEmitted(view.block_clicked):
        qtbot.mouseClick(view.canvas.viewport(), Qt.LeftButton,
                         pos=view.canvas.mapFromScene(base.sceneBoundingRect().center()))


def test_selecting_a_folded_block_draws_it_out_and_scrolls_to_it(qtbot, big_heaps):
    view = make_view(qtbot, "address-ring", height=420)
    structure, explained = big_heaps["next-fit"][-1]
    view.show_step(structure, explained)
    target = structure["free_list"][-20]
    assert target not in view.drawn()["nodes"]
    view.canvas.verticalScrollBar().setValue(0)      # looking at the top of the list
    view.set_selection(target)
    d = view.drawn()
    assert d["selected"] == target and target in d["nodes"]
    card = card_of(view, target)
    visible = view.canvas.mapToScene(view.canvas.viewport().rect()).boundingRect()
    assert visible.contains(card.sceneBoundingRect().center())
    check_drawing(view, structure, explained)
    view.set_selection(None)
    assert view.drawn()["selected"] is None


def test_the_drawing_exports_whole_with_pyqtgraph(qtbot, small_trace):
    import pyqtgraph.exporters as exporters
    tl = Timeline(small_trace, "next-fit").build()
    view = make_view(qtbot, "address-ring", height=300)
    tl.seek(150)
    shown(view, tl)
    image = exporters.ImageExporter(view.export_item()).export(toBytes=True)
    drawing = view.export_item().boundingRect()
    assert image.height() >= drawing.height() - 1 > view.canvas.viewport().height()
    # not blank: the yellow of the free blocks is in it
    colours = {image.pixelColor(x, y).name() for x in range(0, image.width(), 7)
               for y in range(0, image.height(), 7)}
    assert "#f0e442" in colours


def test_nothing_loaded_clears_the_view(qtbot, small_trace):
    tl = Timeline(small_trace, "rotating-list").build()
    view = make_view(qtbot, "ring")
    tl.seek(50)
    shown(view, tl)
    assert view.drawn()["nodes"]
    view.show_step(None, [])
    d = view.drawn()
    assert d["nodes"] == [] and d["pointer"] is None and view.summary == ""


def test_view_for_picks_the_ring_views():
    assert view_for("address-ring") is AddressRingView
    assert view_for("ring") is RotatingRingView


def test_a_narrow_view_wraps_notes_instead_of_cutting_them(qtbot, small_trace):
    tl = Timeline(small_trace, "next-fit").build()
    view = make_view(qtbot, "address-ring", width=500)
    tl.seek(1)
    shown(view, tl)
    width = view.canvas.viewport().width()
    notes = [i for i in view.canvas.root.childItems() if isinstance(i, Note)]
    assert notes
    for n in notes:
        assert n.sceneBoundingRect().right() <= width + 1, n.text()


def test_a_free_walk_is_worded_as_a_walk_not_a_search():
    """Issue 24: first fit's view called a block a free walked past "big
    enough" while the explain panel said the freed block goes after it.  A
    free's visits (Visit.place, K&R 8.7 free()) are worded as the walk."""
    from heapscope.gui.structure_views.ring_step import read_step
    events = [Visit(0x100, 64, False, place=True), Visit(0x300, 32, True, place=True)]
    step = read_step(events, {0x100, 0x300}, {0x100: 64, 0x300: 32}, "rover", lifo=False)
    assert step.note(0x100) == "walked past"
    assert step.note(0x300) == "the freed block goes right after it"
    search = read_step([Visit(0x100, 64, True)], {0x100}, {0x100: 64}, "rover", lifo=False)
    assert search.note(0x100) == "big enough"


def test_the_line_under_the_drawing_fits_its_label_and_keeps_the_whole_text(qtbot, big_heaps):
    """The summary under a ring keeps four lines: a longer one is cut at a
    word with "…" and the whole of it is in the tooltip (next fit's summary
    on the SQLite trace in presenter mode ran on under the label's bottom
    edge, cut mid-line).  Ten thousand free blocks, a wide and a narrow view."""
    from PySide6.QtCore import QRect
    from PySide6.QtWidgets import QLabel
    cut = whole = 0
    for width in (560, 200):
        view = make_view(qtbot, "address-ring", width=width, height=600)
        info = view.info
        metrics = info.fontMetrics()
        four = metrics.boundingRect(QRect(0, 0, 1000, 1000), Qt.TextWordWrap, "a\nb\nc\nd").height()
        for structure, explained in big_heaps["next-fit"]:
            view.show_step(structure, explained)
            full, drawn = info.text(), QLabel.text(info)
            assert view.summary in full
            height = metrics.boundingRect(QRect(0, 0, info.contentsRect().width(), 1 << 20),
                                          Qt.TextWordWrap, drawn).height()
            assert height <= min(four, info.contentsRect().height()), (width, drawn)
            if drawn != full:
                cut += 1
                assert drawn.endswith("…") and full.startswith(drawn[:-1].rstrip()), drawn
                assert info.toolTip() == full
            else:
                whole += 1
                assert info.toolTip() == ""
    assert cut and whole, (cut, whole)


def test_a_closed_ring_view_torn_down_raises_nothing(qtbot):
    """A closed card view's scroll bar still moves while Python tears the
    view down (its attributes gone): the slot that says the line under the
    drawing again after a scroll raised AttributeError ('no canvas'), caught
    here by pytest-qt as an exception in a Qt callback.  Two views in turn,
    as a script drawing pictures of several steps does."""
    import gc
    from PySide6.QtWidgets import QApplication
    from heapscope import traces
    from heapscope.allocators.explain import explain_step
    from heapscope.allocators.replay import Timeline
    from heapscope.gui.structure_views import view_for
    trace = traces.load_trace(str(traces.default_trace_path()))
    for name, step in (("next-fit", 2056), ("rotating-list", 2099), ("first-fit", 2056)):
        tl = Timeline(trace, name).build()
        tl.seek(step)
        s = tl.strategy.structure()
        view = view_for(s["kind"])()
        view.resize(520, 600)
        view.show()
        QApplication.processEvents()
        view.show_step(s, explain_step(tl.strategy, tl.last_record), tl.last_record)
        QApplication.processEvents()
        view.close()
        QApplication.processEvents()
    del view            # the last one; the others went as the name was bound again
    gc.collect()
    QApplication.processEvents()
