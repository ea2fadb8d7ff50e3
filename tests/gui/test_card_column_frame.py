"""The card-column views (next fit, first fit, Kruse's rotating list, V7
malloc) in presenter mode at 1280 x 720 (issue 24): their canvas is about
360 x 160 design pixels there.

- Every note drawn beside or under a card is whole inside the view's
  visible rectangle (a note wrapped to at least NOTE_MIN_W beside its card
  ran past the right edge: "walked pas…", "unlinked: a…"), at no less than
  the presentation's smallest text.
- A card the step names (a block it examined or changed) that is not in the
  frame is named so by the line under the drawing: "above the frame" when it
  lies wholly above it, "below the frame" wholly below, and the line says
  nothing of the frame when every one of them is in it.

Everything is read back from the drawn items in the viewport's pixels; what
the step names is read from its events (test_real_trace_views.step_names),
not from the view.  The default trace, every 97th step (the quick suite:
every 485th).
"""

from __future__ import annotations

import pytest
from PySide6.QtCore import QRectF
from PySide6.QtWidgets import QApplication

from heapscope.gui.structure_views.canvas import Badge, Card, Note
from heapscope.traces.bundled import default_trace_path

from .conftest import wait_loaded
from .test_presenter import at_size
from .test_real_trace_views import device_rect, frame, step_names
from tests.depth import pick, some_in_quick

#: next fit and first fit draw the same address-ordered ring (next fit with
#: its rover too): the quick suite draws next fit's, --deep both (issue 20)
STRATEGIES = some_in_quick(["next-fit", "first-fit", "rotating-list", "v7-malloc"],
                           keep=("next-fit", "rotating-list", "v7-malloc"))
#: every 97th step of the default trace; the quick suite every 485th (issue 20:
#: 24 CPU-s for the four, a thirtieth of the suite; every 291st until the
#: eighth pass, which made it every 485th: the counts still far above the
#: bounds the test asks: next fit 463 notes, 50 under their cards, the
#: rotating list 95 and 42, V7 malloc 90 and 81)
STEPS = pick(range(1, 20_000, 485), range(1, 20_000, 97))


def named_rects(view, addrs) -> list[QRectF]:
    """The viewport rectangles of the cards, badges and notes drawn for the
    blocks ``addrs``."""
    out = []
    for item in view.canvas.root.childItems():
        if not item.isVisible() or getattr(item, "addr", None) not in addrs:
            continue
        if isinstance(item, Card):
            out.append(device_rect(view, item, QRectF(0, 0, item.w, item.h)))
        elif isinstance(item, (Badge, Note)):
            out.append(device_rect(view, item))
    return out


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_notes_are_whole_in_the_frame_and_the_line_names_what_is_outside(qtbot, window, strategy):
    window.set_strategy(strategy)
    wait_loaded(qtbot, window, lambda: window.open_trace(str(default_trace_path())), timeout=120_000)
    qtbot.waitUntil(lambda: not window.model.building(), timeout=120_000)
    at_size(qtbot, window, 1280, 720, presenter=True)
    view = window.structure_panel.view
    zoom = view.canvas.zoom
    minimum = window.presentation.min_text_px - 0.01
    notes = under = above = below = whole = 0
    for t in STEPS:
        window.seek(t)
        QApplication.processEvents()
        inside = frame(view)
        # the presenter's small canvas, in design pixels
        assert inside.width() / zoom < 460 and inside.height() / zoom < 200, (inside, zoom)
        for item in view.canvas.root.childItems():
            if isinstance(item, Note) and item.isVisible():
                r = device_rect(view, item)
                assert r.left() >= inside.left() - 1 and r.right() <= inside.right() + 1, \
                    (t, item.text(), item.shown, r, inside)
                assert item.font.pixelSize() * zoom >= minimum, (t, item.text(), item.font.pixelSize())
                assert item.shown == item.text(), (t, "note cut", item.shown)
                notes += 1
                card = next((c for c in view.canvas.root.childItems() if isinstance(c, Card)
                             and c.addr == item.addr and item.addr is not None), None)
                if card is not None and item.scenePos().y() >= card.scenePos().y() + card.h:
                    under += 1
        events = [getattr(e, "event", e) for e in window.model.step().record.events]
        rects = named_rects(view, step_names(events)["addrs"])
        # a row (a card and its note) goes by its card: partly in the frame,
        # the line says it is cut at that edge
        said = view.summary.lower()
        if any(r.bottom() <= inside.top() for r in rects):
            assert "above the frame" in said or "at the top of the frame" in said, (t, view.summary)
            above += 1
        if any(r.top() >= inside.bottom() for r in rects):
            assert "below the frame" in said or "at the bottom of the frame" in said, (t, view.summary)
            below += 1
        if rects and all(inside.adjusted(-1, -1, 1, 1).contains(r) for r in rects):
            assert "the frame" not in view.summary, (t, view.summary)
            whole += 1
    # the checks ran on notes, on notes moved under their cards, on steps
    # whose named cards were all in the frame and on steps with some outside
    print(strategy, dict(notes=notes, under=under, whole=whole, above=above, below=below))
    assert notes > 50 and under > 5 and whole and above + below, (notes, under, whole, above, below)
