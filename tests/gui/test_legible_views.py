"""Issue 24: every structure view readable from the back of the room.  On
the bundled default trace, at an early, a middle and a late step, at 1280 x
720, 1920 x 1080 and in presenter mode, read back from the drawn items: every
label lies inside the view's visible rectangle and clear of the Follow step /
Fit all buttons, and none is smaller on screen than the stated minimum
(``Presentation.min_text_px``: 11 px at 1280 x 720, 16 px in presenter mode)."""

import pytest
from PySide6.QtCore import QPointF, QRectF
from PySide6.QtWidgets import QApplication, QGraphicsSimpleTextItem

from heapscope import traces

from .conftest import wait_loaded
from .test_presenter import at_size

#: early, middle and late steps of the default trace (20 000 operations)
STEPS = (120, 10_000, 19_500)
SCREENS = [(1280, 720, False), (1920, 1080, False), (1280, 720, True)]


@pytest.fixture
def tlsf_window(qtbot, window):
    window.set_strategy("tlsf")
    wait_loaded(qtbot, window, lambda: window.open_trace(str(traces.default_trace_path())), timeout=60000)
    return window


def scene_labels(view) -> list:
    """The text items of a scene view's drawing, shown."""
    return [i for i in view.graphics.scene().items()
            if isinstance(i, QGraphicsSimpleTextItem) and i.isVisible() and i.text().strip()]


def on_screen_height(view, item) -> float:
    """The item's font height in screen pixels, as drawn (items are not
    scaled: one design pixel is one view unit)."""
    return item.font().pixelSize() / view.box.viewPixelSize()[1]


def buttons_rect(view) -> QRectF:
    """The floating buttons, in the view box's coordinates."""
    b = view.buttons
    top_left = view.graphics.mapToScene(b.pos())
    bottom_right = view.graphics.mapToScene(b.pos() + b.rect().bottomRight())
    return QRectF(view.box.mapSceneToView(top_left), view.box.mapSceneToView(bottom_right))


@pytest.mark.parametrize("width,height,presenter", SCREENS)
def test_the_tlsf_view_shows_every_label_whole_and_legible(qtbot, tlsf_window, width, height, presenter):
    """Issue 24: the fl row names, the fl_bitmap column and the start of the
    mapping_search and scan lines were cut off at the left, at every size.
    Presenter mode on a 720-line screen leaves the view about 180 design
    pixels of height at a legible zoom: there every label must be whole
    across and none cut at the top; the rows below scroll."""
    w = tlsf_window
    at_size(qtbot, w, width, height, presenter=presenter)
    minimum = w.presentation.min_text_px
    for t in STEPS:
        w.seek(t)
        QApplication.processEvents()
        qtbot.wait(20)
        view = w.structure_panel.view
        visible = view.box.viewRect()
        buttons = buttons_rect(view)
        labels = scene_labels(view)
        assert any(i.text().startswith("fl ") for i in labels)
        for item in labels:
            rect = view.view_rect_of(item)
            across = visible.left() <= rect.left() and rect.right() <= visible.right()
            if presenter and height == 720:
                assert across and rect.top() >= visible.top(), (t, item.text()[:40], rect, visible)
            else:
                assert visible.contains(rect), (t, item.text()[:40], rect, visible)
            assert not rect.intersects(buttons), (t, item.text()[:40])
            assert on_screen_height(view, item) >= minimum - 0.01, (t, item.text()[:40])


@pytest.fixture
def buddy_window(qtbot, window):
    window.set_strategy("buddy")
    wait_loaded(qtbot, window, lambda: window.open_trace(str(traces.default_trace_path())), timeout=60000)
    return window


@pytest.mark.parametrize("width,height,presenter", SCREENS[:2])
def test_the_buddy_view_follows_the_avail_lists_its_step_names(qtbot, buddy_window, width, height, presenter):
    """Issue 24: the buddy view showed the empty top orders while the step
    split or merged far below them.  Every AVAIL row the step's events name
    (probed, split, merged, taken from, pushed on: read from the events
    here, not from the view) has its name and length inside the visible
    rectangle, clear of the buttons."""
    from heapscope.allocators import events as ev
    w = buddy_window
    at_size(qtbot, w, width, height, presenter=presenter)
    checked = 0
    for t in STEPS:
        w.seek(t)
        QApplication.processEvents()
        qtbot.wait(20)
        view = w.structure_panel.view
        visible, buttons = view.box.viewRect(), buttons_rect(view)
        named = set()
        for e in w.model.step().record.events:
            if isinstance(e, ev.AvailProbe):
                named.add(e.order)
            elif isinstance(e, ev.BuddySplit):
                named.update((e.order, e.order - 1))
            elif isinstance(e, ev.BuddyMerge):
                named.update((e.order, e.order + 1))
            elif isinstance(e, (ev.ListRemove, ev.ListInsert)) and e.where:
                named.add(int(e.where[0]))
        assert named, t
        for k in named:
            row = view._rows[k]
            # the row's name, size and length (the chips may scroll sideways)
            rect = view.view_rect_of(row, QRectF(0, 0, 300, row.boundingRect().height()))
            assert visible.contains(rect), (t, k, rect, visible)
            assert not rect.intersects(buttons), (t, k)
            checked += 1
    assert checked >= len(STEPS)


def test_on_a_big_heap_the_buddy_view_follows_the_small_orders(qtbot, window, tmp_path):
    """A 1 MiB request makes the chunk order 20; the small requests after
    it work in AVAIL[7] and [8], far below the top orders: those rows are
    shown, not the top of the table."""
    from heapscope.allocators import events as ev
    ops = ["a 0 1000000", "f 0"] + [f"a {i} 100" for i in range(1, 9)] + ["f 3", "a 9 100", "f 5"]
    path = tmp_path / "big.rep"
    path.write_text(f"0\n10\n{len(ops)}\n1\n" + "\n".join(ops) + "\n")
    window.set_strategy("buddy")
    wait_loaded(qtbot, window, lambda: window.open_trace(str(path)))
    at_size(qtbot, window, 1280, 720)
    for t in (len(ops) - 2, len(ops) - 1, len(ops)):
        window.seek(t)
        QApplication.processEvents()
        qtbot.wait(20)
        view = window.structure_panel.view
        named = set()
        for e in window.model.step().record.events:
            if isinstance(e, ev.AvailProbe):
                named.add(e.order)
            elif isinstance(e, (ev.ListRemove, ev.ListInsert)) and e.where:
                named.add(int(e.where[0]))
        assert named and max(named) <= 12, (t, named)
        visible = view.box.viewRect()
        for k in named:
            row = view._rows[k]
            rect = view.view_rect_of(row, QRectF(0, 0, 300, row.boundingRect().height()))
            assert visible.contains(rect), (t, k, rect, visible)
