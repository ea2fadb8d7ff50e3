"""The buddy view: split trees and AVAIL lists read back from the drawn items,
against the structure data and the step's events."""

import re
from bisect import bisect_right

import pytest
from PySide6.QtCore import QPointF, Qt

from heapscope.allocators import events as ev
from heapscope.allocators.explain import explain_step
from heapscope.allocators.registry import make_strategy
from heapscope.allocators.replay import Timeline
from heapscope.gui.structure_views import buddy_view as bv
from heapscope.gui.structure_views import view_for

from .big_heaps import big_heap


@pytest.fixture(scope="module")
def buddy_timeline(small_trace):
    return Timeline(small_trace, "buddy").build()


@pytest.fixture
def view(qtbot):
    v = view_for("buddy")()
    qtbot.addWidget(v)
    v.resize(1280, 720)
    v.show()
    qtbot.waitExposed(v)
    return v


def show(view, timeline, step):
    s = timeline.seek(step)
    st = s.structure()
    view.show_step(st, explain_step(s, timeline.last_record), timeline.last_record)
    return st, timeline.last_record


def leaves_by_chunk(st):
    """The structure's blocks grouped by the chunk holding them (computed here)."""
    starts = sorted(c["addr"] for c in st["chunks"])
    out = {a: [] for a in starts}
    for addr, order, state in st["blocks"]:
        out[starts[bisect_right(starts, addr) - 1]].append((addr, order, state))
    return out


def test_buddy_view_is_the_view_of_the_buddy_kind():
    assert view_for("buddy") is bv.BuddyView


def test_split_trees_and_avail_lists_are_the_structures(view, buddy_timeline):
    for step in range(10, buddy_timeline.n + 1, 37):
        st, _ = show(view, buddy_timeline, step)
        d = view.drawn()
        assert d["chunks"] == leaves_by_chunk(st)
        assert d["avail"] == {int(k): len(v) for k, v in st["avail"].items()}
        # a block taken off a list this step keeps a dashed chip at the front
        assert d["avail_front"] == {int(k): v[:bv.CHIPS_SHOWN - (int(k) in d["avail_taken"])]
                                    for k, v in st["avail"].items()}
        rec = buddy_timeline.last_record
        taken = {e.where[0]: e.addr for e in rec.events if isinstance(e, ev.ListRemove)}
        taken.update({e.order: e.buddy for e in rec.events if isinstance(e, ev.BuddyMerge)})
        assert d["avail_taken"] == taken


def test_the_focus_chunk_is_a_split_tree_whose_leaves_tile_the_chunk(view, buddy_timeline):
    for step in range(10, buddy_timeline.n + 1, 41):
        st, _ = show(view, buddy_timeline, step)
        d = view.drawn()
        chunk = d["focus_chunk"]
        order = next(c["order"] for c in st["chunks"] if c["addr"] == chunk)
        nodes = {(a, k): state for a, k, state in d["focus_blocks"]}
        leaves = sorted((a, k, s) for (a, k), s in nodes.items() if s != "split")
        assert leaves == leaves_by_chunk(st)[chunk]
        # every split block's two halves are drawn, and the leaves cover the chunk exactly once
        for (a, k), state in nodes.items():
            if state == "split":
                assert (a, k - 1) in nodes and (a + (1 << (k - 1)), k - 1) in nodes
        assert (chunk, order) in nodes
        end = chunk
        for a, k, _ in leaves:
            assert a == end
            end += 1 << k
        assert end == chunk + (1 << order)


def numbered_events(rec):
    n = 0
    out = []
    for e in rec.events:
        if isinstance(e, (ev.AvailProbe, ev.BuddySplit, ev.BuddyMerge)):
            n += 1
            out.append((n, e))
    return out


def check_xor(labels, chunk_order_of):
    for text in labels:
        lo, bit, hi = re.fullmatch(r"\+(0x[0-9a-f]+) \u2295 (0x[0-9a-f]+) = \+(0x[0-9a-f]+)", text).groups()
        assert int(lo, 16) ^ int(bit, 16) == int(hi, 16)


def test_probes_splits_and_merges_are_numbered_in_step_order_with_their_xor(view, buddy_timeline):
    seen_split = seen_merge = 0
    for step in range(1, buddy_timeline.n + 1):
        s = buddy_timeline.seek(step)
        rec = buddy_timeline.last_record
        if not (rec.splits or rec.merges):
            continue
        view.show_step(s.structure(), explain_step(s, rec), rec)
        d = view.drawn()
        numbered = numbered_events(rec)
        assert d["probes"] == [(n, e.order) for n, e in numbered if isinstance(e, ev.AvailProbe)]
        assert d["empty_probes"] == sorted(e.order for _, e in numbered
                                           if isinstance(e, ev.AvailProbe) and e.first is None)
        assert d["splits"] == [(n, e.addr, e.order, e.buddy) for n, e in numbered if isinstance(e, ev.BuddySplit)]
        assert d["merges"] == [(n, e.addr, e.order, e.buddy) for n, e in numbered if isinstance(e, ev.BuddyMerge)]
        check_xor(d["xor"], None)
        assert len(d["xor"]) == rec.splits + rec.merges
        # the words say the same arithmetic, relative to the chunk
        chunk = d["focus_chunk"]
        for n, e in numbered:
            if isinstance(e, ev.BuddySplit):
                half = 1 << (e.order - 1)
                assert any(line.startswith(f"{n}. split") and f"\u2295 {half:#x} = +{e.buddy - chunk:#x}" in line
                           for line in d["notes"])
        if rec.merges:
            assert any(line.startswith("S1:") for line in d["notes"]), "why the merging stopped"
        seen_split += bool(rec.splits)
        seen_merge += bool(rec.merges)
        if seen_split > 5 and seen_merge > 5:
            break
    assert seen_split > 5 and seen_merge > 5


def test_whole_chunks_in_one_state_are_one_tile_and_the_view_says_so(view):
    s = make_strategy("buddy", record=False)
    big = [s.malloc(4000) for _ in range(12)]           # twelve chunks, each one used block
    s.record = True
    s.malloc(100)                                        # a thirteenth chunk, split
    st = s.structure()
    view.show_step(st, explain_step(s, s.rec), s.rec)
    d = view.drawn()
    assert d["runs"] == [(st["chunks"][0]["addr"], 12)]
    assert d["chunks"] == leaves_by_chunk(st)
    assert "whole chunks" in view.summary
    assert len(big) == 12


def test_ten_thousand_free_blocks(view):
    _, st, ex, rec = big_heap("buddy", 12_000)
    assert len(st["sizes"]) >= 10_000
    view.show_step(st, ex, rec)
    d = view.drawn()
    assert d["chunks"] == leaves_by_chunk(st)
    assert d["avail"] == {int(k): len(v) for k, v in st["avail"].items()}
    assert "first 3 blocks" in view.summary


def viewport_point(view, item, local):
    return view.graphics.mapFromScene(item.mapToScene(local))


def test_clicking_a_chip_a_block_and_an_overview_tile_emits_the_address(qtbot, view, buddy_timeline):
    step = next(t for t in range(50, buddy_timeline.n) if buddy_timeline.seek(t) and
                buddy_timeline.last_record.splits)
    st, _ = show(view, buddy_timeline, step)
    k, row = next((k, r) for k, r in view._rows.items() if r.isVisible() and r.count and not r.taken)
    view.scroll_to(view.view_rect_of(row))
    qtbot.wait(20)
    with qtbot.waitSignal(view.block_clicked) as sig:
        qtbot.mouseClick(view.graphics.viewport(), Qt.LeftButton,
                         pos=viewport_point(view, row, row.chip_rects()[0].center()))
    assert sig.args == [st["avail"][k][0]]
    leaf = next(it for it in view._blocks.values() if it.isVisible() and it.state != "split")
    view.scroll_to(view.view_rect_of(leaf))
    qtbot.wait(20)
    with qtbot.waitSignal(view.block_clicked) as sig:
        qtbot.mouseClick(view.graphics.viewport(), Qt.LeftButton,
                         pos=viewport_point(view, leaf, leaf.boundingRect().center()))
    assert sig.args == [leaf.addr]
    assert view.drawn()["selected"] == leaf.addr
    ov = view.overview
    g = ov.groups[0]
    a, k, _ = g.leaves[0]
    r = ov.tile_rect(0)
    local = QPointF(r.left() + (a - g.chunk + (1 << k) / 2) / (1 << g.order) * bv.TILE_W, r.bottom() - 3)
    view.scroll_to(view.view_rect_of(ov, r))
    qtbot.wait(20)
    with qtbot.waitSignal(view.block_clicked) as sig:
        qtbot.mouseClick(view.graphics.viewport(), Qt.LeftButton, pos=viewport_point(view, ov, local))
    assert sig.args == [a]
    assert view.drawn()["selected_tile"] == a
    # selecting a block from elsewhere marks it wherever it is drawn
    k, front = next((int(k), v) for k, v in st["avail"].items() if v)
    view.set_selection(front[0])
    d = view.drawn()
    assert d["selected_chip"] == front[0] and d["selected_tile"] == front[0]


def test_micro_steps_number_only_the_events_shown_so_far(view, buddy_timeline):
    step = next(t for t in range(1, buddy_timeline.n + 1) if buddy_timeline.seek(t)
                and buddy_timeline.last_record.splits >= 2 and buddy_timeline.last_record.probes >= 2)
    st, rec = show(view, buddy_timeline, step)
    first_split = next(i for i, e in enumerate(rec.events) if isinstance(e, ev.BuddySplit))
    view.set_current_event(0)
    d = view.drawn()
    assert [n for n, _ in d["probes"]] == [1] and d["splits"] == []
    view.set_current_event(first_split)
    assert len(view.drawn()["splits"]) == 1
    view.set_current_event(None)
    assert len(view.drawn()["splits"]) == rec.splits
