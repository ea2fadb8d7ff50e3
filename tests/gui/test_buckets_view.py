"""The buckets view (gui/structure_views/buckets_view.py): Kingsley's 4.2BSD
nextf[k] lists as columns, read back from the graphics items and compared
with the structure and the step's events."""

import pytest
from PySide6.QtCore import Qt

from heapscope import traces
from heapscope.allocators.events import BucketRefill, ListInsert, ListRemove
from heapscope.allocators.explain import explain_step
from heapscope.allocators.replay import Timeline
from heapscope.gui.structure_views import view_for
from heapscope.gui.structure_views.buckets_view import SHOWN_PER_BUCKET, BucketsView
from heapscope.gui.structure_views.canvas import Card, count_text, size_text

from tests.depth import pick

from .big_heaps import every_other_freed, replay_last_steps


def make_view(qtbot, width=560, height=700):
    view = view_for("buckets")()
    qtbot.addWidget(view)
    view.resize(width, height)
    view.show()
    return view


def events_of(explained, kind):
    return [e.event for e in explained if isinstance(e.event, kind)]


def check_drawing(view, structure, explained):
    d = view.drawn()
    buckets = {int(k): v for k, v in structure["buckets"].items()}
    touched = {int(e.where[0]) for e in events_of(explained, ListRemove) + events_of(explained, ListInsert)}
    touched |= {e.bucket for e in events_of(explained, BucketRefill)}
    want = sorted(k for k, v in buckets.items() if v or k in touched)
    assert [c["bucket"] for c in d["columns"]] == want
    for c in d["columns"]:
        k = c["bucket"]
        addrs = buckets[k]
        assert c["count"] == len(addrs)
        assert c["block_size"] == size_text(structure["block_sizes"][k])
        # the list from the head, the rest folded; nothing drawn twice or lost
        if len(addrs) <= SHOWN_PER_BUCKET + 1:
            assert c["nodes"] == addrs and not c["folded"]
        else:
            assert c["nodes"][:SHOWN_PER_BUCKET] == addrs[:SHOWN_PER_BUCKET]
            assert len(c["nodes"]) + sum(c["folded"]) == len(addrs)
            assert all(a in addrs for a in c["nodes"])
    # the block malloc took off a head (and is off the list now), the block free pushed on one
    assert sorted(d["taken"]) == sorted(e.addr for e in events_of(explained, ListRemove)
                                        if e.addr not in buckets[e.where[0]])
    assert sorted(d["pushed"]) == sorted(e.addr for e in events_of(explained, ListInsert)
                                         if buckets[e.where[0]][:1] == [e.addr])
    for e in events_of(explained, BucketRefill):
        col = next(c for c in d["columns"] if c["bucket"] == e.bucket)
        assert col["refill"] and count_text(e.count) in col["refill"]
    assert (sum(sum(c["folded"]) for c in d["columns"]) > 0) == bool(view.summary)
    return d


@pytest.fixture(scope="module")
def small_trace():
    return traces.make_workload("vo1989", steps=150, seed=5)


def test_every_step_of_a_short_replay_draws_the_buckets(qtbot, small_trace):
    tl = Timeline(small_trace, "bsd-buckets").build()
    view = make_view(qtbot)
    refills = takes = pushes = folded = 0
    # every step with --deep, every other one in the quick suite (issue 20)
    for t in range(1, tl.n + 1, pick(2, 1)):
        tl.seek(t)
        structure = tl.strategy.structure()
        explained = explain_step(tl.strategy, tl.last_record)
        view.show_step(structure, explained)
        d = check_drawing(view, structure, explained)
        refills += any(c["refill"] for c in d["columns"])
        takes += bool(d["taken"])
        pushes += bool(d["pushed"])
        folded += bool(view.summary)
    assert refills and takes and pushes and folded


def test_the_touched_bucket_is_scrolled_into_view_whole(qtbot, small_trace):
    tl = Timeline(small_trace, "bsd-buckets").build()
    view = make_view(qtbot, width=330)
    qtbot.waitExposed(view)
    checked = 0
    for t in range(200, 260):
        tl.seek(t)
        explained = explain_step(tl.strategy, tl.last_record)
        touched = {int(e.where[0]) for e in events_of(explained, ListRemove) + events_of(explained, ListInsert)}
        view.show_step(tl.strategy.structure(), explained)
        visible = view.canvas.mapToScene(view.canvas.viewport().rect()).boundingRect()
        headers = [c for c in view.canvas.root.childItems() if isinstance(c, Card) and c.role == "header"]
        for h in headers:
            r = h.mapToScene(h.rect()).boundingRect()
            if int(h.lines[0][6:-1]) in touched:
                assert visible.contains(r), (t, h.lines[0])
                checked += 1
            # no column is cut in half at the left edge
            assert r.right() <= visible.left() or r.left() >= visible.left() - 1
    assert checked > 20


def test_a_refill_outlines_the_carved_blocks_and_says_how_many(qtbot):
    tl = Timeline(traces.Trace.from_ops([("a", 0, 100), ("a", 1, 100)]), "bsd-buckets").build()
    view = make_view(qtbot)
    tl.seek(0)
    tl.seek(1)
    structure = tl.strategy.structure()
    explained = explain_step(tl.strategy, tl.last_record)
    view.show_step(structure, explained)
    d = check_drawing(view, structure, explained)
    [refill] = events_of(explained, BucketRefill)
    [col] = d["columns"]
    assert col["bucket"] == refill.bucket and col["count"] == refill.count - 1
    assert f"{count_text(refill.count)} × {size_text(refill.block_size)}" in col["refill"]
    # the block malloc took is drawn dashed above the new head
    assert col["taken"] == refill.addr and d["taken"] == [refill.addr]
    assert set(d["new"]) == set(col["nodes"])
    tl.seek(2)
    structure = tl.strategy.structure()
    view.show_step(structure, explain_step(tl.strategy, tl.last_record))
    d = view.drawn()
    assert d["columns"][0]["refill"] is None and d["new"] == []


@pytest.fixture(scope="module")
def big_buckets():
    # 10 000 free 32-byte blocks on one list, every other one of 20 000
    return replay_last_steps(every_other_freed(10000), "bsd-buckets")[1]


def test_ten_thousand_free_blocks_fold_below_the_head(qtbot, big_buckets):
    view = make_view(qtbot)
    for structure, explained in big_buckets:
        view.show_step(structure, explained)
        d = check_drawing(view, structure, explained)
        big = max(d["columns"], key=lambda c: c["count"])
        assert big["count"] >= 9999
        assert len(big["nodes"]) == SHOWN_PER_BUCKET and big["folded"] == [big["count"] - SHOWN_PER_BUCKET]
        assert "Summarised" in view.summary and view.summary in view.info.text()
        cards = [c for c in view.canvas.root.childItems() if isinstance(c, Card)]
        assert len(cards) < 60


def test_selecting_a_deep_block_draws_it_between_two_folds(qtbot, big_buckets):
    view = make_view(qtbot, height=420)
    structure, explained = big_buckets[-1]
    view.show_step(structure, explained)
    k, addrs = max(((int(k), v) for k, v in structure["buckets"].items()), key=lambda kv: len(kv[1]))
    target = addrs[len(addrs) // 2]
    view.canvas.verticalScrollBar().setValue(0)       # looking at the headers
    view.set_selection(target)
    d = view.drawn()
    col = next(c for c in d["columns"] if c["bucket"] == k)
    assert d["selected"] == target and col["nodes"][-1] == target
    i = addrs.index(target)
    assert col["folded"] == [i - SHOWN_PER_BUCKET, len(addrs) - i - 1]
    card = next(c for c in view.canvas.root.childItems() if isinstance(c, Card) and c.addr == target)
    visible = view.canvas.mapToScene(view.canvas.viewport().rect()).boundingRect()
    assert visible.contains(card.sceneBoundingRect().center())


def test_clicking_a_block_emits_its_address(qtbot, small_trace):
    tl = Timeline(small_trace, "bsd-buckets").build()
    view = make_view(qtbot)
    tl.seek(100)
    view.show_step(tl.strategy.structure(), explain_step(tl.strategy, tl.last_record))
    addr = view.drawn()["columns"][0]["nodes"][1]
    card = next(c for c in view.canvas.root.childItems() if isinstance(c, Card) and c.addr == addr)
    view.canvas.ensureVisible(card.sceneBoundingRect())
    pos = view.canvas.mapFromScene(card.sceneBoundingRect().center())
    with qtbot.waitSignal(view.block_clicked, timeout=2000) as clicked:
        qtbot.mouseClick(view.canvas.viewport(), Qt.LeftButton, pos=pos)
    assert clicked.args == [addr]
    # a bucket's header is not a block
    header = next(c for c in view.canvas.root.childItems() if isinstance(c, Card) and c.role == "header")
    view.canvas.ensureVisible(header.sceneBoundingRect())
    with qtbot.assertNotEmitted(view.block_clicked):
        qtbot.mouseClick(view.canvas.viewport(), Qt.LeftButton,
                         pos=view.canvas.mapFromScene(header.sceneBoundingRect().center()))


def test_a_fixed_pool_shows_its_uncarved_part_apart(qtbot):
    from heapscope.allocators import make_strategy
    s = make_strategy("bsd-buckets", pool_size=64 * 1024)
    s.malloc(100)
    structure = s.structure()
    assert structure["outside"]
    view = make_view(qtbot)
    view.show_step(structure, explain_step(s, s.rec))
    d = view.drawn()
    [o] = structure["outside"]
    assert d["outside"] == (o["addr"], size_text(structure["sizes"][o["addr"]]))


def test_view_for_picks_the_buckets_view_and_nothing_loaded_clears_it(qtbot, small_trace):
    assert view_for("buckets") is BucketsView
    tl = Timeline(small_trace, "bsd-buckets").build()
    view = make_view(qtbot)
    tl.seek(20)
    view.show_step(tl.strategy.structure(), explain_step(tl.strategy, tl.last_record))
    assert view.drawn()["columns"]
    view.show_step(None, [])
    assert view.drawn()["columns"] == [] and view.summary == ""


def test_a_json_round_trip_of_the_structure_draws_the_same(qtbot, small_trace):
    import json
    tl = Timeline(small_trace, "bsd-buckets").build()
    view = make_view(qtbot)
    tl.seek(120)
    structure = tl.strategy.structure()
    explained = explain_step(tl.strategy, tl.last_record)
    view.show_step(structure, explained)
    before = view.drawn()
    view.show_step(json.loads(json.dumps(structure)), explained)
    assert view.drawn() == before


def test_a_short_view_scrolls_to_the_steps_block_and_says_how_the_header_is_cut(qtbot, small_trace):
    """A column taller than the view (issue 24, presenter mode at 720): the
    block the step took or pushed is whole in the frame, and the line under
    the drawing says the header is "above the frame" only when none of it
    shows, "cut at the top edge" when part of it does, nothing when it is
    whole (three heights of view: its canvas about 70, 140 and 260 px tall)."""
    tl = Timeline(small_trace, "bsd-buckets").build()
    seen = {"whole": 0, "cut": 0, "above": 0}
    for height in (260, 330, 450):
        view = make_view(qtbot, width=330, height=height)
        qtbot.waitExposed(view)
        for t in range(60, tl.n + 1, 3):
            tl.seek(t)
            view.show_step(tl.strategy.structure(), explain_step(tl.strategy, tl.last_record))
            visible = view.canvas.mapToScene(view.canvas.viewport().rect()).boundingRect()
            cards = [c for c in view.canvas.root.childItems() if isinstance(c, Card)]
            marks = [c for c in cards if c.role in ("taken", "pushed")]
            if not marks:
                continue
            mark = marks[0].mapToScene(marks[0].rect()).boundingRect()
            assert visible.contains(mark), (height, t, marks[0].lines)
            [header] = [c for c in cards if c.role in ("header", "refill")
                        and c.scenePos().x() <= mark.left() < c.scenePos().x() + c.w]
            r = header.mapToScene(header.rect()).boundingRect()
            name = header.lines[0]
            if r.bottom() <= visible.top():
                assert f"The header of {name} is above the frame." in view.summary, (height, t, view.summary)
                seen["above"] += 1
            elif r.top() < visible.top() - 0.5:
                assert f"The header of {name} is cut at the top edge." in view.summary, (height, t, view.summary)
                seen["cut"] += 1
            else:
                assert "The header of" not in view.summary, (height, t, view.summary)
                seen["whole"] += 1
        view.close()
    assert all(seen.values()), seen
