"""The TLSF view: the matrix and both bitmaps read back from the drawn items,
the step's mapping_search cell and find-first-set scan against its events."""

import pytest
from PySide6.QtCore import Qt

from heapscope.allocators import events as ev
from heapscope.allocators.explain import explain_step
from heapscope.allocators.replay import Timeline
from heapscope.allocators.structure import parse_tlsf_key
from heapscope.gui.structure_views import tlsf_view as tv
from heapscope.gui.structure_views import view_for

from .big_heaps import big_heap


@pytest.fixture(scope="module")
def tlsf_timeline(small_trace):
    return Timeline(small_trace, "tlsf").build()


@pytest.fixture
def view(qtbot):
    v = view_for("tlsf")()
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


def test_tlsf_view_is_the_view_of_the_tlsf_kind():
    assert view_for("tlsf") is tv.TlsfView


def test_lit_cells_are_the_non_empty_lists_and_the_bits_drawn_are_the_bitmaps(view, tlsf_timeline):
    for step in range(5, tlsf_timeline.n + 1, 29):
        st, _ = show(view, tlsf_timeline, step)
        d = view.drawn()
        non_empty = sorted(parse_tlsf_key(k) for k, v in st["lists"].items() if v)
        assert d["lit"] == non_empty
        assert d["counts"] == {parse_tlsf_key(k): len(v) for k, v in sorted(st["lists"].items())}
        assert d["fl_bitmap"] == st["fl_bitmap"]
        assert d["sl_bitmap"] == st["sl_bitmap"]
        # the rows folded away hold nothing
        if d["folded"]:
            a, b = d["folded"]
            assert all(st["sl_bitmap"][fl] == 0 for fl in range(a, b + 1))
            assert d["rows"] == list(range(a))


def test_search_cell_and_scan_path_are_the_steps_events(view, tlsf_timeline):
    seen_three = 0
    seen = 0
    for step in range(1, tlsf_timeline.n + 1):
        s = tlsf_timeline.seek(step)
        rec = tlsf_timeline.last_record
        searches = [e for e in rec.events if isinstance(e, ev.MappingSearch)]
        if not searches:
            continue
        view.show_step(s.structure(), explain_step(s, rec), rec)
        d = view.drawn()
        m = searches[-1]          # after growing the heap, the search runs again
        assert d["search"] == (m.fl, m.sl)
        assert f"mapping_search({m.size})" in d["search_text"] and f"rounded up to {m.rounded}" in d["search_text"]
        probes = [e for e in rec.events if isinstance(e, ev.BitmapProbe)]
        assert d["scan"] == [(p.level, p.fl, p.sl, p.found) for p in probes]
        found = sorted({p.found for p in probes if p.found})
        assert d["found"] == found
        assert d["taken"] == sorted({tuple(e.where) for e in rec.events if isinstance(e, ev.ListRemove)})
        seen += 1
        seen_three += len(probes) == 3
        if seen > 60 and seen_three > 3:
            break
    assert seen_three > 3


def test_a_freed_block_lights_its_mapping_insert_cell(view, tlsf_timeline):
    seen = 0
    for step in range(1, tlsf_timeline.n + 1):
        kind, _, _ = tlsf_timeline.op(step)
        s = tlsf_timeline.seek(step)
        rec = tlsf_timeline.last_record
        inserts = [e for e in rec.events if isinstance(e, ev.ListInsert)]
        if not inserts or any(isinstance(e, ev.MappingSearch) for e in rec.events):
            continue
        view.show_step(s.structure(), explain_step(s, rec), rec)
        d = view.drawn()
        [ins] = inserts
        # the cell is where mapping_insert files the block's TLSF size (one word less)
        assert d["inserted"] == [s.mapping_insert(ins.size - s.word)] == [tuple(ins.where)]
        fl, sl = ins.where
        assert any(line.startswith(f"mapping_insert({ins.size - s.word}) = ({fl}, {sl})") for line in d["list_lines"])
        seen += 1
        if seen > 20:
            break
    assert seen > 20


def test_clicking_a_cell_lists_its_blocks_and_selects_the_first(qtbot, view, tlsf_timeline):
    st, _ = show(view, tlsf_timeline, 400)
    key, addrs = max(st["lists"].items(), key=lambda kv: len(kv[1]))
    cell = view._cells[parse_tlsf_key(key)]
    view.scroll_to(view.view_rect_of(cell))
    qtbot.wait(20)
    with qtbot.waitSignal(view.block_clicked) as sig:
        qtbot.mouseClick(view.graphics.viewport(), Qt.LeftButton,
                         pos=view.graphics.mapFromScene(cell.mapToScene(cell.boundingRect().center())))
    assert sig.args == [addrs[0]]
    d = view.drawn()
    assert d["cell_list"] == addrs and d["listed_cell"] == parse_tlsf_key(key)
    assert d["selected"] == parse_tlsf_key(key)
    # selecting a block from elsewhere marks its cell and lists it
    other_key, other = next((k, v) for k, v in st["lists"].items() if k != key)
    view.set_selection(other[-1])
    d = view.drawn()
    assert d["selected"] == parse_tlsf_key(other_key) and d["cell_list"] == other
    # a click on an entry of the list selects that block
    item = view.cell_list.item(len(other))
    with qtbot.waitSignal(view.block_clicked) as sig:
        view.cell_list.itemClicked.emit(item)
    assert sig.args == [other[-1]]


def test_ten_thousand_free_blocks_fold_the_empty_rows_and_say_so(view):
    _, st, ex, rec = big_heap("tlsf", 10_000)
    assert len(st["sizes"]) >= 10_000
    view.show_step(st, ex, rec)
    d = view.drawn()
    assert d["lit"] == sorted(parse_tlsf_key(k) for k in st["lists"])
    assert d["fl_bitmap"] == st["fl_bitmap"] and d["sl_bitmap"] == st["sl_bitmap"]
    assert d["folded"] and "folded" in view.summary
    assert "click a cell" in view.summary        # lists longer than a cell can show


def test_micro_steps_walk_the_scan_one_probe_at_a_time(view, tlsf_timeline):
    step = next(t for t in range(1, tlsf_timeline.n + 1) if tlsf_timeline.seek(t)
                and tlsf_timeline.last_record.probes == 3)
    st, rec = show(view, tlsf_timeline, step)
    view.set_current_event(0)                       # mapping_search only
    d = view.drawn()
    assert d["search"] is not None and d["scan"] == []
    for k in (1, 2, 3):
        view.set_current_event(k)
        assert len(view.drawn()["scan"]) == k
    view.set_current_event(None)
    assert len(view.drawn()["scan"]) == 3


@pytest.mark.parametrize("width", [395, 420])
def test_a_narrow_view_in_presenter_mode_shows_its_row_names_and_step_lines_whole(qtbot, tlsf_timeline,
                                                                                  width):
    """Issue 24: about 395 px wide (what a tlsf lesson leaves the view in
    presenter mode at 1280 x 720) the line under the matrix
    ("mapping_search(136): rounded up to 136 → list (0, 17)") ran off the
    right edge: it was wrapped to the matrix's width, wider than the view.
    Read back: the fl row names and the step's lines lie inside the visible
    rectangle."""
    from PySide6.QtGui import QFont
    from PySide6.QtWidgets import QApplication

    from heapscope.gui.theme import Presentation
    pres = Presentation(presenter=True, screen_height=720)
    app = QApplication.instance()
    font = QFont(app.font())
    font.setPointSizeF(pres.body_pt)          # as presenter mode sets it (window_layout)
    app.setFont(font)                         # put back after the test (conftest.py)
    check_narrow_view(qtbot, tlsf_timeline, width, pres)


def check_narrow_view(qtbot, tlsf_timeline, width, pres):
    from PySide6.QtWidgets import QApplication, QGraphicsSimpleTextItem
    v = view_for("tlsf")()
    qtbot.addWidget(v)
    v.set_zoom_factor(pres.drawing_scale)
    v.resize(width, 600)
    v.show()
    qtbot.waitExposed(v)
    for step in (60, 120, 480):     # (at 250 the step names more columns than fit: the camera pans)
        show(v, tlsf_timeline, step)
        QApplication.processEvents()
        visible = v.box.viewRect()
        labels = [i for i in v.graphics.scene().items()
                  if isinstance(i, QGraphicsSimpleTextItem) and i.isVisible() and i.text().strip()]
        assert any(i.text().startswith("fl ") for i in labels), step
        lines = [i for i in labels if isinstance(i, tv.StepWords)]
        assert lines, (step, [i.text()[:30] for i in labels])
        for item in lines + [i for i in labels if i.text().startswith("fl ")]:
            rect = v.view_rect_of(item)
            assert visible.contains(rect), (step, item.text()[:40], rect, visible)
