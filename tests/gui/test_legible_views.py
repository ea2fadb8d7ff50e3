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
