"""The heap map in the window: colours read back from the rendered image,
hover, the step's highlights, a failed request, zoom and fit."""

import pytest
from PySide6.QtCore import QEvent, QPoint, QPointF, QRectF, Qt
from PySide6.QtGui import QMouseEvent, QWheelEvent
from PySide6.QtWidgets import QApplication

from heapscope.allocators.events import Coalesce, Placed, PointerMove, Visit
from heapscope.allocators.next_fit import NextFit
from heapscope.gui import palette
from heapscope.gui.heap_map import HeapMapWidget
from heapscope.allocators.heap_edits import TrackedHeap, apply_events

from .conftest import wait_loaded


def used_block(strategy, min_request=64):
    return next(b for b in strategy.walk() if b.state == "used" and b.request >= min_request)


def free_block(strategy, min_size=64):
    return next(b for b in strategy.walk() if b.state == "free" and b.size >= min_size)


def test_cells_have_the_palette_colour_of_what_they_hold(loaded):
    loaded.seek(400)
    s = loaded.timeline.strategy
    hm = loaded.heap_map
    b = used_block(s)
    assert hm.cell_colour(b.payload + b.request // 2) == palette.rgba(palette.BLUE)
    # K&R's header is the first 16 bytes of the block
    assert b.payload - b.addr == 16
    assert hm.cell_colour(b.addr + 8) == palette.rgba(palette.SKY_BLUE)
    f = next(x for x in s.walk()[:-1] if x.state == "free" and x.size >= 64)
    assert hm.cell_colour(f.addr + f.size // 2) == palette.rgba(palette.YELLOW)
    # past the break, in the last row
    lay = hm.layout_
    if lay.rows * lay.row_bytes > s.arena.brk + lay.bytes_per_cell:
        assert hm.cell_colour(s.arena.brk + lay.bytes_per_cell // 2) == palette.rgba(palette.BEYOND_HEAP)


def test_padding_has_its_colour_and_next_fit_has_no_top_block(loaded):
    # At the end every block is freed and coalesced: one free block.  K&R's
    # malloc keeps no wilderness: its last block is free like any other.
    loaded.go_end()
    s = loaded.timeline.strategy
    [last] = s.walk()
    assert last.state == "free"
    assert loaded.heap_map.cell_colour(last.addr + last.size // 2) == palette.rgba(palette.YELLOW)
    assert not loaded.heap_map.legend.entries["top"].isVisibleTo(loaded.heap_map.legend)
    # K&R rounds requests up to 16-byte units: a request of 16k+1..16k+8 leaves padding
    loaded.seek(300)
    s = loaded.timeline.strategy
    b = next(b for b in s.walk() if b.state == "used" and b.padding >= 8)
    assert loaded.heap_map.cell_colour(b.payload + b.request + b.padding // 2) == \
        palette.rgba(palette.REDDISH_PURPLE)


def test_hovering_a_block_names_its_trace_id_and_sizes(qtbot, loaded):
    loaded.seek(420)
    tl = loaded.timeline
    b = used_block(tl.strategy)
    ident = tl.program.id_of_payload()[b.payload]
    hm = loaded.heap_map
    scene = hm.scene_pos_of(b.payload + b.request // 2)
    view = hm.plot_widget
    local = QPointF(view.mapFromScene(scene))
    move = QMouseEvent(QEvent.MouseMove, local, QPointF(view.viewport().mapToGlobal(local.toPoint())),
                       Qt.NoButton, Qt.NoButton, Qt.NoModifier)
    QApplication.sendEvent(view.viewport(), move)
    qtbot.waitUntil(lambda: "trace id" in hm.info.text(), timeout=2000)
    text = hm.info.text()
    assert f"block 0x{b.addr:x}, {b.size:,} B" in text
    assert f"trace id {ident}" in text and f"requested {b.request:,} B" in text
    assert "used" in text


def test_the_search_path_and_the_placed_block_are_outlined(loaded):
    s = loaded.timeline.series
    # a malloc that examined several blocks and did not grow the heap
    for t in (i + 1 for i in range(s.n) if s.is_malloc[i] and 3 <= s.search[i] <= 40):
        loaded.seek(t)
        rec = loaded.timeline.last_record
        if rec.grows == 0:
            break
    visits = [e for e in rec.events if isinstance(e, Visit)]
    placed = next(e for e in rec.events if isinstance(e, Placed))
    hm = loaded.heap_map
    assert len(visits) == s.search[t - 1]
    numbers = [lab for lab in hm._order_labels if lab.isVisible()]
    assert [lab.textItem.toPlainText() for lab in numbers] == [str(i + 1) for i in range(len(visits))]
    x, y = hm.layout_.point_of(placed.addr)
    assert hm.placed_item.path().contains(QPointF(x + 0.5, y + 0.5))
    x, y = hm.layout_.point_of(visits[0].addr)
    assert hm.searched_item.path().contains(QPointF(x + 0.5, y + 0.5))
    assert not hm.banner.isVisible()


def test_a_failed_malloc_is_flagged(qtbot, window, small_trace_path):
    window.params = {"heap_limit": 48 * 1024}
    wait_loaded(qtbot, window, lambda: window.open_trace(small_trace_path))
    s = window.timeline.series
    failed = [i + 1 for i in range(s.n) if s.failed[i]]
    assert failed, "the heap limit should make some mallocs fail"
    window.seek(failed[0])
    hm = window.heap_map
    # the banner over the map, or, where every place for it covers the
    # heap's bytes, its words in the line under the map (issue 24)
    assert hm.banner.isVisible() and "failed" in hm.banner.text() or \
        not hm.banner.isVisible() and hm.marks_layer.banner_folded and "failed" in hm.info.text()
    assert not hm.failed_item.path().isEmpty()
    # drawn past the break, where the heap would have had to grow
    brk = window.timeline.strategy.arena.brk
    x, y = hm.layout_.point_of(brk)
    assert hm.failed_item.path().contains(QPointF(x + 0.5, y + 0.5))
    assert "NULL" in window.bar.description.text()
    window.seek(0)
    assert not hm.banner.isVisible() and hm.failed_item.path().isEmpty()
    assert "failed" not in hm.info.text()


def test_zoom_then_fit_brings_the_whole_heap_back(qtbot, loaded):
    loaded.seek(300)
    hm = loaded.heap_map
    full = hm.vb.viewRange()
    view = hm.plot_widget
    centre = view.viewport().rect().center()
    wheel = QWheelEvent(QPointF(centre), QPointF(view.viewport().mapToGlobal(centre)), QPoint(0, 0),
                        QPoint(0, 480), Qt.NoButton, Qt.NoModifier, Qt.NoScrollPhase, False)
    QApplication.sendEvent(view.viewport(), wheel)
    zoomed = hm.vb.viewRange()
    assert zoomed[0][1] - zoomed[0][0] < full[0][1] - full[0][0]
    assert not hm.follow
    loaded.seek(301)                       # stepping keeps the user's zoom
    assert sum(hm.vb.viewRange(), []) == pytest.approx(sum(zoomed, []))
    qtbot.keyClick(loaded, Qt.Key_0)       # View > Fit Heap to Window
    assert hm.follow
    assert hm.vb.viewRange()[0] == pytest.approx(full[0], rel=0.05)


def test_the_hover_line_follows_the_heap_when_the_step_changes(qtbot, loaded):
    # Hover a spot, then step: the line must describe the new heap at that spot,
    # not keep the old text (it once said "heap ends at 0x0" after stepping).
    loaded.seek(0)
    hm = loaded.heap_map
    loaded.seek(420)
    b = used_block(loaded.timeline.strategy)
    hm._mouse_moved(hm.scene_pos_of(b.payload + b.request // 2))
    first = hm.info.text()
    loaded.go_end()
    after = hm.info.text()
    assert after != first
    assert after == hm.describe_address(hm.address_at(hm._hover_pos))


# ------------------------------------------- one step of K&R next fit, by hand
def next_fit_after(ops):
    """A NextFit heap after (kind, id, size) ops; its last record has its events."""
    s = NextFit()
    where = {}
    for kind, ident, size in ops:
        if kind == "a":
            where[ident] = s.malloc(size)
        else:
            s.free(where.pop(ident))
    return s


def shown_map(qtbot, strategy):
    hm = HeapMapWidget()
    qtbot.addWidget(hm)
    hm.show_heap(strategy, strategy.rec)
    return hm


def test_the_pointer_is_drawn_where_the_step_left_it(qtbot):
    # Eight malloc(10) (2 units) cut from the top of the first 16 KiB (blocks at
    # 16352 (id 0) down to 16128); free ids 6, 4, 2; malloc(100) from block 0;
    # free id 0: the rover is left at 16288.  malloc(20000) (1251 units) finds
    # nothing, so morecore frees 20016 new bytes at 16384; free joins them to
    # block 16352 and moves the rover there; the search goes on round the ring,
    # cuts the tail of 16352 and leaves the rover at the block before it, 16288.
    ops = [("a", i, 10) for i in range(8)] + [("f", 6, 0), ("f", 4, 0), ("f", 2, 0),
                                              ("a", 8, 100), ("f", 0, 0), ("a", 9, 20000)]
    s = next_fit_after(ops)
    moves = [e.new for e in s.rec.events if isinstance(e, PointerMove)]
    assert moves == [16352, 16288] and s.rover == 16288
    hm = shown_map(qtbot, s)
    row_bytes = hm.layout_.row_bytes
    xs, ys = hm.pointer_item.getData()
    # the triangle sits under the first byte of its block, pointing up at it
    assert list(zip(xs, ys)) == [(16288 % row_bytes, 16288 // row_bytes + 1)]
    # The window does not walk the heap after a step: it edits the heap before
    # it with the step's events (allocators/heap_edits.py).  That path too must
    # leave the rover at the last move, 16288, not the first, 16352 (the step
    # started with the rover at 16288, where free id 0 left it).
    before = TrackedHeap.walk(next_fit_after(ops[:-1]))
    assert [(p.name, p.addr) for p in before.pointers] == [("rover", 16288)]
    edited = apply_events(before, s.rec.events, s.live)
    assert [(p.name, p.addr) for p in edited.pointers] == [("rover", 16288)]
    hm.show_blocks(edited.blocks, s.rec, pointers=edited.pointers, heap=edited)
    xs, ys = hm.pointer_item.getData()
    assert list(zip(xs, ys)) == [(16288 % row_bytes, 16288 // row_bytes + 1)]


def test_a_coalesced_block_is_outlined_whole(qtbot):
    # Four malloc(10): blocks at 16352 (id 0), 16320, 16288, 16256 (id 3).
    # Free ids 2 and 0, then id 1: it joins 16352 above and 16288 below, so the
    # freed block becomes [16288, 16384), outlined as one rectangle.
    s = next_fit_after([("a", i, 10) for i in range(4)] + [("f", 2, 0), ("f", 0, 0), ("f", 1, 0)])
    assert [(e.low_addr, e.size) for e in s.rec.events if isinstance(e, Coalesce)] == \
        [(16320, 64), (16288, 96)]
    hm = shown_map(qtbot, s)
    row_bytes = hm.layout_.row_bytes
    # 16384 is a multiple of any row length of at least 128, so the joined block
    # ends a row and fits in it.
    assert row_bytes >= 128
    rects = [p.boundingRect() for p in hm.released_item.path().toSubpathPolygons()]
    assert QRectF(16288 % row_bytes, 16288 // row_bytes, 96, 1) in rects


def test_a_map_deleted_right_after_a_resize_is_not_relaid_out(qtbot):
    # A resize asks for a relayout once the events are processed; a map deleted
    # before then (a window closed at once) must not be called back:
    # "Internal C++ object (ViewBox) already deleted" in the Qt callback.
    hm = HeapMapWidget()
    hm.show()
    qtbot.waitExposed(hm)
    hm.resize(hm.width() + 40, hm.height() + 40)
    hm.deleteLater()
    QApplication.sendPostedEvents(None, QEvent.DeferredDelete)
    qtbot.wait(20)              # pytest-qt fails the test on an exception in a callback


def test_a_right_click_on_the_map_or_a_plot_opens_no_pyqtgraph_menu(qtbot, loaded):
    """pyqtgraph's menus were built for each map and plot, then disabled at
    once; now they are never built (a sixth of the window's making).  A
    right click on the map opens the sandbox's own menu (its commands:
    tests/gui/test_sandbox_window.py), on a plot none."""
    w = loaded
    for item in [w.heap_map.plot] + w.plots.plots:
        assert not item.menuEnabled()
        assert item.getViewBox().menu is None and not item.getViewBox().menuEnabled()
    pyqtgraph_words = {"View All", "X axis", "Y axis", "Mouse Mode", "Plot Options", "Export..."}
    for view, item in [(w.heap_map.plot_widget, w.heap_map.plot)] + [(w.plots.view, p) for p in w.plots.plots]:
        centre = view.mapFromScene(item.getViewBox().sceneBoundingRect().center())
        qtbot.mouseClick(view.viewport(), Qt.RightButton, pos=centre)
        qtbot.wait(10)
        popup = QApplication.activePopupWidget()
        if view is w.heap_map.plot_widget:
            assert popup is w.edits.block_menu
        else:
            assert popup is None, [a.text() for a in popup.actions()]
        if popup is not None:
            assert not pyqtgraph_words & {a.text() for a in popup.actions()}
            popup.close()


def test_the_empty_heaps_words_wrap_inside_a_narrow_map(qtbot, loaded):
    # a compare row's map beside its open structure view cut the one line
    # "empty heap: press Space to play, → to step" at both ends
    w = loaded
    w.seek(0)
    hm = w.heap_map
    text = hm.cells.empty_text
    assert text.isVisible()
    one_line = text.textItem.document().idealWidth()
    line_px = text.textItem.boundingRect().height()
    w.set_window_size(700, 720)
    qtbot.waitUntil(lambda: hm.vb.width() < one_line, timeout=5000)
    qtbot.wait(20)
    view_px = hm.vb.width()
    words_px = text.textItem.boundingRect().width()       # TextItem draws in pixels
    assert words_px <= view_px, (words_px, view_px)
    assert text.textItem.boundingRect().height() > 1.5 * line_px       # wrapped, not cut
