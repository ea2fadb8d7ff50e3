"""Issue 24's test on a real trace: for every strategy, at steps 89 000 and
150 000 of sqlite3-sql-40k (175 334 operations, SQLite's shell; the only
bundled trace that long), at 1280 x 720, 1920 x 1080 and in presenter mode:

- the items the step's events name -- the blocks by their address, TLSF's
  cells by (fl, sl), the buddy view's AVAIL rows by order, dlmalloc's bins by
  number -- that the structure view draws are inside its visible rectangle,
  clear of the Follow step / Fit all strip (a named item left outside it
  only when the line under the drawing says what it left out), and at least
  one of them is drawn;
- on the heap map the step's block is inside the map's view;
- no text drawn on screen, in the structure view or on the map, is smaller
  than the stated minimum (``Presentation.min_text_px``, docs/gui.md).

Everything is read back from the drawn items, in the viewport's pixels: the
text sizes from the fonts each item paints with (its ``paint`` run on a
recording painter), the places from each item's device transform.  What the
step names is read from its events here, not from the view.

Each strategy's timeline is built once (on the first 150 000 operations: a
prefix of a trace is a trace with the same first steps); the quick suite
runs four strategies, each at 1280 x 720 and one of the other two screens in
turn (screens_of), ``--deep`` all twelve on all three.
"""

from __future__ import annotations

import math

import pytest
from PySide6.QtCore import QPointF, QRectF
from PySide6.QtGui import QImage, QPainter
from PySide6.QtWidgets import (QApplication, QGraphicsSimpleTextItem, QGraphicsTextItem,
                               QStyleOptionGraphicsItem)

from heapscope.allocators import events as ev
from heapscope.allocators.registry import strategy_names
from heapscope.gui.map_coords import block_top
from heapscope.traces import Trace, load_trace, write_rep

from .conftest import wait_loaded
from .test_presenter import at_size
from tests.depth import QUICK_STRATEGIES, deep, some_in_quick

TRACE = "sqlite3-sql-40k"
STEPS = (89_000, 150_000)
SCREENS = [(1280, 720, False), (1920, 1080, False), (1280, 720, True)]


def screens_of(strategy: str) -> list:
    """The screens a strategy is looked at on: all three in the deep suite;
    in the quick one 1280 x 720 (the tightest) and, in turn, 1920 x 1080 or
    presenter mode (next fit and TLSF the one, splay and buddy the other),
    so each screen still meets two of the four views (issue 20)."""
    if deep() or strategy not in QUICK_STRATEGIES:
        return SCREENS
    return [SCREENS[0], SCREENS[1 + QUICK_STRATEGIES.index(strategy) % 2]]
#: event fields that hold a block's address
ADDRESS_FIELDS = ("addr", "taken_addr", "rest_addr", "low_addr", "high_addr", "buddy", "new_addr")
#: the page of phkmalloc's page directory and GNU malloc's block table
PAGE = 4096
#: an item counts as inside when it is inside the frame grown by this much
#: (bounding rectangles carry a pen's width or a badge's ring round them)
SLACK = 6
#: a tree node's visit number stands on its box's top edge
BADGE_ROOM = 16


@pytest.fixture(scope="module")
def prefix_path(tmp_path_factory):
    """The trace's first 150 000 operations, as a file the window opens."""
    whole = load_trace(TRACE)
    assert len(whole) >= 150_000
    n = max(STEPS)
    t = Trace(whole.kind[:n], whole.ids[:n], whole.sizes[:n], whole.num_ids)
    path = tmp_path_factory.mktemp("real") / f"{TRACE}-150k.rep"
    write_rep(t, path)
    return str(path)


# ------------------------------------------------------------ what the step names

def step_names(events) -> dict[str, set]:
    """What the step's events name: block addresses, TLSF cells (fl, sl),
    buddy orders, bin numbers (``where`` of a list event)."""
    addrs, cells, lists = set(), set(), set()
    for e in events:
        for name in ADDRESS_FIELDS:
            v = getattr(e, name, None)
            if isinstance(v, int) and not isinstance(v, bool):
                addrs.add(v)
        if isinstance(e, ev.MappingSearch):
            cells.add((e.fl, e.sl))
        if isinstance(e, (ev.ListInsert, ev.ListRemove)) and e.where:
            lists.add(tuple(e.where))
            if len(e.where) == 2:
                cells.add(tuple(e.where))
    return {"addrs": addrs, "cells": cells, "lists": lists}


def named_items(view, names) -> list:
    """The drawn items of ``view`` that stand for something the step names:
    a block by its address (the page or block-table card of a page holding
    it: phkmalloc's and GNU malloc's are 4 KiB pages), a TLSF cell, a buddy
    AVAIL row, a list's heading by its number (dlmalloc's "bin 32",
    segregated fit's "class 5", a bucket's nextf[2])."""
    from heapscope.gui.structure_views.buddy_view import BuddyView, step_orders
    from heapscope.gui.structure_views.pages_view import _PagesView
    from heapscope.gui.structure_views.tlsf_view import CellItem
    addrs = set(names["addrs"])
    if isinstance(view, _PagesView):
        addrs |= {a & ~(PAGE - 1) for a in names["addrs"]}
    numbers = {w[0] for w in names["lists"]}
    out = []
    if isinstance(view, BuddyView):
        out += [view._rows[k] for k in step_orders(view.step) if k in view._rows]
    for item in scene_of(view).items():
        if not item.isVisible() or item.opacity() == 0:
            continue
        if isinstance(item, CellItem):
            if item.key in names["cells"]:
                out.append(item)
            continue
        addr = getattr(item, "addr", None)
        if isinstance(addr, int) and addr in addrs:
            out.append(item)
            continue
        mark = getattr(item, "mark", None)        # a lists view's heading
        if getattr(mark, "role", "") == "header" and list_number(mark.label) in numbers:
            out.append(item)
            continue
        lines = getattr(item, "lines", None)      # a bucket's header card: nextf[k]
        if addr is None and isinstance(lines, list) and lines and isinstance(lines[0], str) and \
                list_number(lines[0]) in numbers:
            out.append(item)
    return out


def name_of(item):
    """What a named item stands for: its address, cell, order or heading."""
    for attr in ("addr", "key", "order"):
        v = getattr(item, attr, None)
        if v is not None:
            return v
    mark = getattr(item, "mark", None)
    return getattr(mark, "label", None) or (item.lines[0] if getattr(item, "lines", None) else id(item))


def list_number(label: str) -> int | None:
    """The number a list's heading names: "bin 32 (...)", "class 5 (...)",
    "nextf[2]"."""
    import re
    m = re.match(r"\s*[A-Za-z_]+(?:\[(\d+)\]| (\d+))", label)
    return int(m.group(1) or m.group(2)) if m else None


# ------------------------------------------------------------ read back, in viewport pixels

def graphics_of(view):
    """The QGraphicsView the structure view draws in."""
    return view.graphics if hasattr(view, "graphics") else view.canvas


def scene_of(view):
    return graphics_of(view).scene()


def device_rect(view, item, rect: QRectF | None = None) -> QRectF:
    """``rect`` of ``item`` (default: its bounding rectangle) in the
    viewport's pixels."""
    gv = graphics_of(view)
    return item.deviceTransform(gv.viewportTransform()).mapRect(item.boundingRect() if rect is None else rect)


def frame(view) -> QRectF:
    """The viewport's rectangle, less the buttons' strip of a scene view."""
    r = QRectF(graphics_of(view).viewport().rect())
    if hasattr(view, "buttons") and view.buttons.isVisible():
        r.setTop(view.buttons.geometry().bottom() + 1)
    return r


def item_rect(view, item) -> QRectF:
    """What an item covers: a buddy row's name, size, length and chips
    (its bounding rectangle runs on for the chips it scrolls sideways)."""
    from heapscope.gui.structure_views import buddy_view as bv
    if isinstance(item, bv.AvailRowItem):
        right = bv.CHIPS_X + len(item.chips) * (bv.CHIP_W + bv.CHIP_GAP)
        return device_rect(view, item, QRectF(0, 0, min(right, 300), item.boundingRect().height()))
    if callable(getattr(item, "box", None)):      # a tree node: its box, not the size list under it
        return device_rect(view, item, item.box().adjusted(0, -BADGE_ROOM, 0, 0))
    if hasattr(item, "w") and hasattr(item, "h") and not callable(item.w):
        return device_rect(view, item, QRectF(0, 0, item.w, item.h))   # a card: not its selection ring
    return device_rect(view, item)


class FontsPainted(QPainter):
    """A painter that keeps the font of every ``drawText`` called on it."""

    def __init__(self, image) -> None:
        super().__init__(image)
        self.fonts = []

    def drawText(self, *args):          # noqa: N802 (Qt's name)
        text = next((a for a in args if isinstance(a, str)), "")
        if text.strip():
            self.fonts.append((QPainter.font(self), text))
        return super().drawText(*args)


def font_px(font, dpi: float) -> float:
    return font.pixelSize() if font.pixelSize() > 0 else font.pointSizeF() * dpi / 72


def drawn_texts(gv, items) -> list[tuple[str, float, QRectF]]:
    """(text, height on screen in pixels, rectangle in the viewport) of
    every text drawn by ``items`` that shows in the viewport."""
    shown = QRectF(gv.viewport().rect())
    dpi = gv.logicalDpiY()
    image = QImage(8, 8, QImage.Format_ARGB32)
    option = QStyleOptionGraphicsItem()
    out = []
    for item in items:
        if not item.isVisible() or item.opacity() == 0:
            continue
        t = item.deviceTransform(gv.viewportTransform())
        rect = t.mapRect(item.boundingRect())
        if not rect.intersects(shown):
            continue
        scale = math.hypot(t.m21(), t.m22())
        if isinstance(item, QGraphicsSimpleTextItem):
            fonts = [(item.font(), item.text())] if item.text().strip() else []
        elif isinstance(item, QGraphicsTextItem):
            fonts = [(item.font(), item.toPlainText())] if item.toPlainText().strip() else []
        else:
            painter = FontsPainted(image)
            try:
                item.paint(painter, option, None)
            finally:
                painter.end()
            fonts = painter.fonts
        if isinstance(item, QGraphicsTextItem) or getattr(item, "ItemIgnoresTransformations", None):
            pass
        out += [(text[:30], font_px(f, dpi) * scale, rect) for f, text in fonts]
    return out


def map_texts(m) -> list[tuple[str, float]]:
    """The heap map's labels (pyqtgraph TextItems keep their font's size on
    screen whatever the zoom): the search's numbers, "+N not numbered", the
    pointers' names, the request's id."""
    labels = m.labels
    items = labels.numbers + [labels.skip] + labels.pointer_names + [getattr(m, "request_label", None)]
    dpi = m.plot_widget.logicalDpiY()
    return [(i.textItem.toPlainText()[:30], font_px(i.textItem.font(), dpi)) for i in items
            if i is not None and i.isVisible() and i.textItem.toPlainText().strip()]


def the_steps_block(events) -> tuple[int, int] | None:
    """The block the step placed or released (address, size)."""
    for e in events:
        if isinstance(e, (ev.Placed, ev.Released)):
            return e.addr, e.size
    return None


# ------------------------------------------------------------ the test

def check_step(w, where) -> tuple[int, int]:
    """One step on one screen: (named items checked, texts checked)."""
    minimum = w.presentation.min_text_px - 0.01
    view = w.structure_panel.view
    events = [getattr(e, "event", e) for e in w.model.step().record.events]
    names = step_names(events)
    assert names["addrs"] or names["cells"], (where, events)
    gv = graphics_of(view)
    inside = frame(view)
    named = named_items(view, names)
    assert named, (where, type(view).__name__, "draws nothing the step names", names)
    # one thing may be drawn twice by items of one type (a page in the
    # directory and in its size list): one of them in the frame will do
    groups: dict = {}
    for item in named:
        groups.setdefault((type(item).__name__, name_of(item)), []).append(item)
    shown = 0
    grown = inside.adjusted(-SLACK, -SLACK, SLACK, SLACK)
    for (kind, name), items in groups.items():
        rects = [item_rect(view, item) for item in items]
        if any(grown.contains(r) for r in rects):
            shown += 1
        else:       # only where the line under the drawing says it left it out of the frame
            assert "the frame" in view.summary, (where, kind, name, rects, inside, view.summary)
    assert shown, (where, "no item the step names is inside the view", inside, view.summary)
    texts = drawn_texts(gv, scene_of(view).items())
    assert texts, where
    small = [(t, round(px, 1)) for t, px, _ in texts if px < minimum]
    assert not small, (where, "text under", round(minimum, 1), small[:6])
    # the heap map: the step's block in its view, its labels legible
    m = w.heap_map
    block = the_steps_block(events)
    if block is not None:
        x, y = block_top(m.layout_.row_bytes, *block)
        view_rect = m.vb.viewRect()
        assert view_rect.contains(QPointF(x, y + 0.5)), (where, "map", block, view_rect)
    small = [(t, px) for t, px in map_texts(m) if px < minimum]
    assert not small, (where, "map text under", round(minimum, 1), small)
    return len(named), len(texts)


@pytest.mark.parametrize("strategy", some_in_quick(strategy_names()))
def test_a_real_traces_late_steps_show_what_they_name_legibly(qtbot, window, prefix_path, strategy):
    window.set_strategy(strategy)
    wait_loaded(qtbot, window, lambda: window.open_trace(prefix_path), timeout=180_000)
    qtbot.waitUntil(lambda: not window.model.building(), timeout=180_000)
    assert window.model.n == max(STEPS)
    named = texts = 0
    screens = screens_of(strategy)
    for width, height, presenter in screens:
        at_size(qtbot, window, width, height, presenter=presenter)
        for t in STEPS:
            window.seek(t)
            QApplication.processEvents()
            qtbot.wait(20)
            assert window.model.position == t
            n, k = check_step(window, (strategy, width, height, presenter, t))
            named += n
            texts += k
    assert named >= len(screens) * len(STEPS) and texts > 10 * len(screens) * len(STEPS)
