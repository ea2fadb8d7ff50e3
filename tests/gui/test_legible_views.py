"""Issue 24: every structure view readable from the back of the room.  On
the bundled default trace, at an early, a middle and a late step, at 1280 x
720, 1920 x 1080 and in presenter mode, read back from the drawn items: every
label lies inside the view's visible rectangle and clear of the Follow step /
Fit all buttons, and none is smaller on screen than the stated minimum
(``Presentation.min_text_px``: 11 px at 1280 x 720, 16 px in presenter mode)."""

import pytest
from PySide6.QtCore import QPointF, QRectF
from PySide6.QtGui import QFontMetricsF
from PySide6.QtWidgets import QApplication, QGraphicsSimpleTextItem, QLabel

from heapscope import traces
from heapscope.gui.structure_views import buddy_view as bv
from heapscope.gui.structure_views.buddy_view import step_orders
from heapscope.gui.structure_views.scene_view import font
from heapscope.gui.structure_views.scene_view import Glyph
from heapscope.gui.structure_views.tlsf_view import CellItem, FlBitItem, RowFold, ScanItem

from .conftest import wait_loaded
from .test_presenter import at_size
from tests.depth import pick

#: early, middle and late steps of the default trace (20 000 operations)
STEPS = (120, 10_000, 19_500)
SCREENS = [(1280, 720, False), (1920, 1080, False), (1280, 720, True)]
#: the screens the tests that walk the screens in turn walk: the quick suite
#: leaves out 1920 x 1080, the roomiest (what is cut or crowded is cut at
#: 720 lines, in presenter mode most; each screen is a resize whose repaint
#: of the whole window is most of a screen's cost); --deep walks all three,
#: and the buddy view's avail-list case draws 1920 x 1080 in both (issue 20)
WALKED_SCREENS = pick([s for s in SCREENS if s[:2] != (1920, 1080)], SCREENS)


def on_default_trace(qtbot, w, strategy: str) -> None:
    """The window ``w`` showing the bundled default trace through ``strategy``."""
    wait_loaded(qtbot, w, lambda: w.set_strategy(strategy))
    wait_loaded(qtbot, w, lambda: w.open_trace(str(traces.default_trace_path())), timeout=60000)


#: the TLSF view's steps: step 250 names five rows, more than presenter
#: mode at 1280 x 720 holds at a legible zoom
TLSF_STEPS = (120, 250, 10_000, 19_500)


@pytest.fixture
def tlsf_window(qtbot, loaded):
    """The shared window, TLSF on the default trace."""
    wait_loaded(qtbot, loaded, lambda: loaded.set_strategy("tlsf"))      # on the small trace: quick
    wait_loaded(qtbot, loaded, lambda: loaded.open_trace(str(traces.default_trace_path())), timeout=60000)
    return loaded


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


def test_the_tlsf_view_shows_every_label_whole_and_legible(qtbot, tlsf_window):
    """Issue 24: the fl row names, the fl_bitmap column and the start of the
    mapping_search and scan lines were cut off at the left, at every size;
    in presenter mode on a 720-line screen (about 190 design pixels of
    height at a legible zoom) the lower rows of the matrix scrolled off, and
    at step 250 (five rows named by the step, in 135 px) they still did.
    Every label, cell, fl_bitmap bit and fold drawn is inside the visible
    rectangle with no scrolling: what does not fit is folded, not cut.  One
    load of the default trace for the three screens."""
    w = tlsf_window
    for width, height, presenter in WALKED_SCREENS:
        at_size(qtbot, w, width, height, presenter=presenter)
        check_tlsf_labels(qtbot, w, (width, presenter))
    check_scan_numbers(qtbot, w)


def check_tlsf_labels(qtbot, w, screen) -> None:
    minimum = w.presentation.min_text_px
    for t in TLSF_STEPS:
        w.seek(t)
        QApplication.processEvents()
        view = w.structure_panel.view
        assert view.following, (screen, t)        # the view chose its own range
        visible = view.box.viewRect()
        buttons = buttons_rect(view)
        labels = scene_labels(view)
        assert any(i.text().startswith("fl ") for i in labels)
        for item in labels:
            rect = view.view_rect_of(item)
            assert visible.contains(rect), (screen, t, item.text()[:40], rect, visible)
            assert not rect.intersects(buttons), (screen, t, item.text()[:40])
            assert on_screen_height(view, item) >= minimum - 0.01, (screen, t, item.text()[:40])
        glyphs = [i for i in view.graphics.scene().items() if isinstance(i, Glyph) and i.isVisible()
                  and not isinstance(i, ScanItem)]
        assert any(isinstance(i, CellItem) for i in glyphs), t
        assert any(isinstance(i, FlBitItem) for i in glyphs), t
        for item in glyphs:
            rect = view.view_rect_of(item)
            assert visible.contains(rect), (screen, t, type(item).__name__, item.key, rect, visible)
            if isinstance(item, RowFold):
                continue            # a folded run of rows: its name and range are written on it
            # no label over a cell or a bit (a row's size range touched its first cell)
            for label in labels:
                gap = view.view_rect_of(label).adjusted(-4, 0, 4, 0)
                assert not gap.intersects(rect), (screen, t, label.text()[:30], item.key)
        # no label over another (their text's own rectangles, read back)
        rects = [(i.text()[:30], view.view_rect_of(i)) for i in labels]
        for a in range(len(rects)):
            for b in range(a + 1, len(rects)):
                assert not rects[a][1].intersects(rects[b][1]), (screen, t, rects[a], rects[b])


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


def test_the_dlmalloc_view_shows_the_bin_its_step_took_from(qtbot, window):
    """Issue 24: at step 5003 of the default trace dlmalloc takes the last
    chunk of bin 32 while the view sat on bins 95 and 97 and top.  At that
    step and at an early, a middle and a late one, the heading of every bin
    the step's events take from or push on (read from the events) is on
    screen."""
    from PySide6.QtWidgets import QGraphicsTextItem
    from heapscope.allocators import events as ev
    window.set_strategy("dlmalloc")
    wait_loaded(qtbot, window, lambda: window.open_trace(str(traces.default_trace_path())), timeout=60000)
    at_size(qtbot, window, 1280, 720)
    checked = 0
    for t in (5003,) + STEPS:
        window.seek(t)
        QApplication.processEvents()
        view = window.structure_panel.view
        canvas = view.canvas
        shown = canvas.mapToScene(canvas.viewport().rect()).boundingRect()
        bins = {f"bin {e.where[0]}" for e in window.model.step().record.events
                if isinstance(e, (ev.ListRemove, ev.ListInsert)) and e.where}
        headings = {i.mark.label: i for i in canvas.scene().items()
                    if isinstance(i, QGraphicsTextItem) and getattr(i, "mark", None) is not None
                    and getattr(i.mark, "label", "").split(" (")[0] in bins}
        for label, item in headings.items():
            top_line = item.mapRectToScene(QRectF(0, 0, 200, 20))
            assert shown.contains(top_line), (t, label, top_line, shown)
            checked += 1
        assert {label.split(" (")[0] for label in headings} == bins, t
    assert checked >= 1


def test_outline_swatches_show_on_a_dark_caption():
    """Issue 24: TLSF's "pushed" swatch (a black outline) vanished from the
    caption in the dark theme.  Every outline swatch is drawn on the
    drawing's own white, so it reads as in the drawing on either theme."""
    import re
    from heapscope.gui.structure_views.scene_view import INSERTED, swatch
    html = swatch(INSERTED, "pushed", True)
    background = re.search(r"background-color:\s*(#[0-9A-Fa-f]{6})", html)
    assert background is not None and background.group(1).upper() == "#FFFFFF"
    assert INSERTED.upper() in html.upper()


def test_a_status_line_longer_than_its_lines_is_cut_not_drawn_over_the_drawing(qtbot):
    """The status line under a drawing keeps three lines: a longer summary
    (TLSF's on a real trace wraps to four at 1280x720) is cut at a word with
    '…', the whole of it in the tooltip; text() still gives all of it."""
    from PySide6.QtCore import QRect, Qt
    from heapscope.gui.structure_views.scene_view import LinesLabel
    label = LinesLabel(3)
    qtbot.addWidget(label)
    label.resize(300, label.sizeHint().height())
    label.show()
    words = " ".join(f"word{i}" for i in range(200))
    label.setText(words)
    shown = QLabel.text(label)
    metrics = label.fontMetrics()
    height = metrics.boundingRect(QRect(0, 0, label.contentsRect().width(), 1 << 20),
                                  Qt.TextWordWrap, shown).height()
    three = metrics.boundingRect(QRect(0, 0, 1000, 1000), Qt.TextWordWrap, "a\nb\nc").height()
    assert height <= three
    assert shown.endswith(" …") and words.startswith(shown[:-2]) and len(shown) < len(words)
    assert label.text() == words and label.toolTip() == words
    label.setText("short")                      # fits: shown whole, no tooltip
    assert QLabel.text(label) == "short" and label.toolTip() == ""


def test_a_status_line_keeps_its_three_lines_when_a_line_is_taller_than_its_spacing(qtbot):
    """At presenter mode's 16 pt a line is laid out a pixel taller than
    lineSpacing() (25 px against 24): the status line's three lines of room
    held two and a "…" (the buddy view's summary of what its frame left
    out was cut after one sentence).  The text shown fills three lines."""
    from PySide6.QtCore import QRect, Qt
    from heapscope.gui.structure_views.scene_view import LinesLabel
    label = LinesLabel(3)
    qtbot.addWidget(label)
    f = label.font()
    f.setPointSizeF(15.985)
    label.setFont(f)
    label.resize(528, label.sizeHint().height())
    label.show()
    label.setText(" ".join(f"word{i}" for i in range(200)))
    metrics = label.fontMetrics()
    one = metrics.boundingRect(QRect(0, 0, 1000, 1000), Qt.TextWordWrap, "X").height()
    shown = metrics.boundingRect(QRect(0, 0, label.contentsRect().width(), 1 << 20), Qt.TextWordWrap,
                                 QLabel.text(label)).height()
    assert shown == 3 * one, (shown, one)
    assert shown <= label.contentsRect().height()


def chips_rect(view, row) -> QRectF:
    """An AVAIL row's chips and its "+N", in view coordinates (computed from
    the row's chips and the table's columns, as the row paints them)."""
    from heapscope.gui.structure_views import buddy_view as bv
    right = bv.CHIPS_X + len(row.chips) * (bv.CHIP_W + bv.CHIP_GAP)
    hidden = row.count - len([a for a in row.chips if a != row.taken])
    if hidden > 0:
        right += QFontMetricsF(font(15, True)).horizontalAdvance(f"+{hidden}")
    return view.view_rect_of(row, QRectF(0, 0, right, row.boundingRect().height()))


def below_strip(view) -> QRectF:
    """The visible rectangle less the buttons' strip over its top."""
    visible = view.box.viewRect()
    cut = view.strip_height() * visible.height() / view.box.height()
    return visible.adjusted(0, cut, 0, 0)


def test_the_buddy_view_at_late_steps_of_a_real_trace_shows_the_step_whole(qtbot, window):
    """Issue 24, at the end of gcc-cc1's trace (63 678 operations, 157
    chunks): AVAIL rows the step did not name showed under and between the
    Follow step / Fit all buttons; in presenter mode the second and third
    chips ran off the right edge; the step's words began under the split
    tree and ran off the edge; and nothing said that the split tree was off
    the frame.  Now at 1280 x 720, 1920 x 1080 and in presenter mode: the
    buttons sit on an opaque strip as wide as the drawing, and the rows the
    step names, with their chips and "+N", lie whole below it; every line
    of words is inside the frame's width; when the split tree is right of
    the frame the summary says so, and so it does of a named row that a
    tall cascade leaves above or below the frame."""
    from heapscope.traces.bundled import bundled_path
    window.set_strategy("buddy")
    wait_loaded(qtbot, window, lambda: window.open_trace(str(bundled_path("gcc-cc1.rep.gz"))), timeout=60000)
    qtbot.waitUntil(lambda: not window.model.building(), timeout=60000)
    n = window.model.n
    assert n == 63_678
    for width, height, presenter in WALKED_SCREENS:
        at_size(qtbot, window, width, height, presenter=presenter)
        for t in (60_000, 63_000, n - 1):
            window.seek(t)
            QApplication.processEvents()
            view = window.structure_panel.view
            strip = view.buttons
            assert strip.width() == view.graphics.width() and strip.y() == 0
            assert strip.grab().toImage().pixelColor(2, 2).name() == "#ffffff"   # opaque, not see-through
            frame = below_strip(view)
            named = step_orders(view.step)
            assert named, t
            inside = 0
            for k in named:
                rect = chips_rect(view, view._rows[k])
                assert frame.left() <= rect.left() and rect.right() <= frame.right(), (width, presenter, t, k)
                if frame.contains(rect):
                    inside += 1
                else:       # taller than the frame: the summary names what it left out
                    assert f"AVAIL[{k}]" in view.summary and "the frame" in view.summary, (t, k, view.summary)
            assert inside, (width, presenter, t, named)
            for item in scene_labels(view):
                if "\u2295" in item.text() or item.text().startswith("S1"):
                    rect = view.view_rect_of(item)
                    assert frame.left() <= rect.left() and rect.right() <= frame.right(), \
                        (width, presenter, t, item.text()[:40], rect, frame)
            tree_x = view.view_point_of(view.tree_layer, QPointF(bv.TREE_X, 0)).x()
            if tree_x > frame.right() - 40:
                assert "split tree" in view.summary and "right of the frame" in view.summary, view.summary


@pytest.mark.parametrize("kind", ["address-ring", "ring"])
def test_a_narrow_card_views_legend_wraps_its_words_whole(qtbot, kind):
    """Issue 24: in a compare row's structure view at 1280 x 720 (about 260
    px wide) the ring views' legend was a grid three entries wide, clipped
    at the view's edge: "examin", "freed, j", "selecte".  Every entry's
    words are now shown whole inside the view, on as many lines as they need."""
    from PySide6.QtCore import QPoint, QRect
    from heapscope.gui.structure_views import view_for
    view = view_for(kind)()
    qtbot.addWidget(view)
    view.resize(260, 420)
    view.show()
    qtbot.waitExposed(view)
    QApplication.processEvents()
    inside = view.rect()
    words = [w for w in view.legend.findChildren(QLabel) if w.text()
             and not w.text().isdigit()]
    assert len(words) >= 4
    for label in words:
        assert label.isVisible()
        assert label.width() >= label.sizeHint().width(), (label.text(), label.width(), label.sizeHint().width())
        rect = QRect(label.mapTo(view, QPoint(0, 0)), label.size())
        assert inside.contains(rect), (label.text(), rect, inside)


def check_scan_numbers(qtbot, w) -> None:
    """Issue 24 (assets/presenter-dark.png): at step 5003 the scan's disc "1"
    at list (0, 30)'s corner covered the folded column's count "53", and
    the "3" covered list (1, 0)'s "2".  Read back at 1280 x 720 in presenter
    mode, dark theme: no two text items overlap, and no scan disc (nor its
    leader line) meets a cell's number -- the middle of a cell with a count,
    6 px in from its sides and 4 from its top and bottom, or a fold's count
    box -- nor a label."""
    from heapscope.gui.structure_views.tlsf_layout import ColumnFold
    at_size(qtbot, w, 1280, 720, presenter=True, theme_name="dark")
    for t in (5003, 250):
        w.seek(t)
        QApplication.processEvents()
        view = w.structure_panel.view
        items = [i for i in view.graphics.scene().items() if i.isVisible()]
        numbers = [view.view_rect_of(c, QRectF(6, 4, c.boundingRect().width() - 12, c.boundingRect().height() - 8))
                   for c in items if isinstance(c, CellItem) and c.count]
        for fold in (i for i in items if isinstance(i, (RowFold, ColumnFold))):
            numbers += [view.view_rect_of(fold, r) for r in fold.count_rects()]
        assert len(numbers) >= 3, t
        labels = [view.view_rect_of(i) for i in scene_labels(view)]
        for a in range(len(labels)):
            for b in range(a + 1, len(labels)):
                assert not labels[a].intersects(labels[b]), (t, labels[a], labels[b])
        scans = [i for i in items if isinstance(i, ScanItem) and not i.vertical]
        assert scans, t
        discs = []
        for scan in scans:
            disc = view.view_rect_of(scan, scan.number_rect())
            lines = [disc]
            if scan.leader:
                y = scan.centre.y()
                lines.append(view.view_rect_of(scan, QRectF(scan.band.right(), y - 1,
                                                            scan.centre.x() - scan.band.right(), 2)))
            for r in lines:
                hit = [n for n in numbers + labels if r.intersects(n)]
                assert not hit, (t, scan.number, r, hit)
            assert not any(disc.intersects(d) for d in discs), (t, scan.number)
            discs.append(disc)


def test_the_buddy_view_says_when_its_split_tree_is_cut_at_the_right(qtbot, loaded):
    """Issue 24 (assets/structure-buddy.png, step 5678 of the default trace
    at 1920 x 1080): the split tree ran off the right edge while the line
    under the drawing spoke of the AVAIL lists only.  Read back: when a drawn
    block of the tree reaches past the visible rectangle's right edge the
    summary says the tree is cut; when every block is inside, it says
    nothing of the tree."""
    w = loaded
    wait_loaded(qtbot, w, lambda: w.set_strategy("buddy"))          # on the small trace: quick
    wait_loaded(qtbot, w, lambda: w.open_trace(str(traces.default_trace_path())), timeout=60000)
    cut_seen = whole_seen = 0
    for width, height in ((1920, 1080), (1280, 720)):
        at_size(qtbot, w, width, height)
        for t in (5678, 120):
            w.seek(t)
            QApplication.processEvents()
            view = w.structure_panel.view
            frame = view.box.viewRect()
            blocks = [view.view_rect_of(b) for b in view.graphics.scene().items()
                      if isinstance(b, bv.BlockItem) and b.isVisible()]
            assert blocks, (width, t)
            if min(r.left() for r in blocks) > frame.right() - 40:
                continue                        # the whole tree right of the frame: said otherwise
            cut = max(r.right() for r in blocks) > frame.right() + 1
            said = "split tree" in view.summary and "cut" in view.summary
            assert said == cut, (width, t, cut, view.summary)
            cut_seen += cut
            whole_seen += not cut
    assert cut_seen        # the picture's case is among them


#: steps of the default trace whose splays climb two or three levels
SPLAY_STEPS = (187, 211, 275, 282)


def splay_tags(view) -> list[tuple[str, QRectF, float]]:
    """(splay step, rectangle in view coordinates, font height in design
    pixels) of every tag the tree view draws: those along a climb (vertical,
    their words painted along the rectangle's height) and those written
    across ("zig-zag, zig")."""
    from heapscope.gui.structure_views.scene_view import MIN_DESIGN_PX
    from heapscope.gui.structure_views.tree_items import LadderItem
    out = []
    for note in view._notes:
        if not isinstance(note, LadderItem) or not note.isVisible():
            continue
        for kind, r in note.labels():
            out.append((kind, view.view_rect_of(note, r), MIN_DESIGN_PX))
        if note.across_rect is not None:
            for kind in note.across_text().split(", "):
                out.append((kind, view.view_rect_of(note, note.across_rect), MIN_DESIGN_PX))
    return out


def test_the_splay_tags_are_inside_the_frame_and_legible(qtbot, loaded):
    """Issue 24: in presenter mode at 1280 x 720 the tree view frames the
    root and the node taken, and the zig / zig-zig tags drawn on the climb
    below them were cut at the frame's bottom edge, or wholly below it.  At
    steps whose splays climb two or three levels, on every screen, read
    back: every splay step of the step's events (Rotation, read from the
    events here) has its tag drawn, inside the visible rectangle below the
    buttons' strip, at least the stated minimum high on screen, and over no
    node's box (or else the line under the drawing names it)."""
    from heapscope.gui.structure_views.tree_items import NodeItem
    w = loaded
    on_default_trace(qtbot, w, "splay-best-fit")
    from heapscope.allocators import events as ev
    for width, height, presenter in WALKED_SCREENS:
        at_size(qtbot, w, width, height, presenter=presenter)
        for t in SPLAY_STEPS:
            w.seek(t)
            QApplication.processEvents()
            view = w.structure_panel.view
            assert view.following
            kinds = sorted(getattr(e, "event", e).kind for e in w.model.step().record.events
                           if isinstance(getattr(e, "event", e), ev.Rotation))
            assert len(kinds) >= 2, t
            frame = below_strip(view)
            tags = splay_tags(view)
            drawn = sorted(k for k, _, _ in tags)
            missing = list(kinds)
            for k in drawn:
                missing.remove(k)
            for k in missing:
                assert k in view.summary and "off the frame" in view.summary, (width, presenter, t, k)
            assert drawn, (width, presenter, t)
            boxes = [view.view_rect_of(i, i.box()) for i in view.graphics.scene().items()
                     if isinstance(i, NodeItem) and i.isVisible()]
            for kind, r, px in tags:
                assert frame.contains(r), ((width, presenter), t, kind, r, frame)
                assert px / view.box.viewPixelSize()[1] >= w.presentation.min_text_px - 0.01, (t, kind)
                if r.width() > r.height():          # written across: beside the climb, off the nodes
                    assert not any(r.intersects(b) for b in boxes), ((width, presenter), t, kind, r)


def paint_into(item, painter_class):
    """``item.paint`` into a small image through a ``painter_class`` (a
    recording QPainter); returns the painter, ended."""
    from PySide6.QtGui import QImage
    from PySide6.QtWidgets import QStyleOptionGraphicsItem
    image = QImage(8, 8, QImage.Format_ARGB32)      # kept: the painter draws on it
    painter = painter_class(image)
    try:
        item.paint(painter, QStyleOptionGraphicsItem(), None)
    finally:
        painter.end()
    return painter


class EllipsesPainted:
    """What an item's ``paint`` draws as ellipses (centre, rx, ry), and the
    width of the pen each is drawn with, recorded from a real painter."""

    def __init__(self, item) -> None:
        from PySide6.QtGui import QPainter
        self.discs = []
        outer = self

        class Recording(QPainter):
            def drawEllipse(self, *args):            # noqa: N802 (Qt's name)
                centre, rx, ry = args if len(args) == 3 else (args[0].center(), args[0].width() / 2,
                                                               args[0].height() / 2)
                outer.discs.append((QPointF(centre), rx, ry, self.pen().widthF()))
                return super().drawEllipse(*args)

        paint_into(item, Recording)


def test_a_visited_nodes_number_is_not_cut_at_the_frames_edge(qtbot, loaded):
    """Issue 24 (docs/steps/splay-best-fit.gif, step 500: the wilderness's
    "2,3" disc cut at the left edge; the camera framed the boxes, not the
    discs on their top-left corners).  At steps of the default trace, on
    every screen, read back from what each visited node paints: a visited
    node whose box is in the frame has its number's disc (with its ring)
    whole in the frame too; on every screen every visited node of step 500
    is in it."""
    from heapscope.gui.structure_views.tree_items import NodeItem
    w = loaded
    on_default_trace(qtbot, w, "splay-best-fit")
    checked = 0
    for width, height, presenter in WALKED_SCREENS:
        at_size(qtbot, w, width, height, presenter=presenter)
        for t in (500, 187, 282):
            w.seek(t)
            QApplication.processEvents()
            view = w.structure_panel.view
            visible = view.box.viewRect()
            for item in view.graphics.scene().items():
                if not (isinstance(item, NodeItem) and item.isVisible() and item.visit):
                    continue
                box = view.view_rect_of(item, item.box())
                if not visible.contains(box):
                    # step 500's root and wilderness fit at the legible zoom
                    # on every screen (presenter 720: the root was cut by 7 px)
                    assert t != 500, ((width, presenter), t, item.addr, box, visible)
                    continue
                discs = EllipsesPainted(item).discs
                assert discs, (t, item.addr)
                for centre, rx, ry, pen_w in discs:
                    r = QRectF(centre.x() - rx - pen_w / 2, centre.y() - ry - pen_w / 2, 2 * rx + pen_w,
                               2 * ry + pen_w)
                    rect = view.view_rect_of(item, r)
                    assert visible.contains(rect), ((width, presenter), t, item.addr, rect, visible)
                    checked += 1
    assert checked >= 9


@pytest.mark.parametrize("visit", [(1,), (2, 3), (10, 11, 12)])
def test_a_visited_nodes_numbers_are_drawn_legibly_inside_their_disc(qtbot, visit):
    """Issue 24: the wilderness's "2,3" (examined twice when the heap grows)
    was drawn at 13 px, under the 16 design px every view keeps.  Read back
    from what the node paints: its numbers at MIN_DESIGN_PX or more, and
    their width (measured with the painted font) inside the disc drawn."""
    from PySide6.QtGui import QFontMetricsF
    from heapscope.gui.structure_views.scene_view import MIN_DESIGN_PX
    from heapscope.gui.structure_views.tree_items import NodeItem
    from .test_real_trace_views import FontsPainted
    node = NodeItem(0x1000, "wild")
    node.set_content(4096, [0x1000], 1, 0)
    node.visit = visit
    text = ",".join(map(str, visit))
    painter = paint_into(node, FontsPainted)
    fonts = [f for f, t in painter.fonts if t == text]
    assert fonts, painter.fonts
    assert fonts[0].pixelSize() >= MIN_DESIGN_PX or fonts[0].pointSizeF() * 96 / 72 >= MIN_DESIGN_PX
    (centre, rx, ry, _), = [d for d in EllipsesPainted(node).discs]
    assert QFontMetricsF(fonts[0]).horizontalAdvance(text) <= 2 * rx - 4, (text, rx)
    assert node.badge_rect().width() >= 2 * rx and node.badge_rect().height() >= 2 * ry


def painted_words(item) -> list[tuple[str, QRectF]]:
    """(text, rectangle in the item's coordinates) of each text ``item``
    paints, the rectangle as wide as the text (measured with the font it is
    painted in) from where the painter put it."""
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QPainter
    words = []

    class Recording(QPainter):
        def drawText(self, *args):            # noqa: N802 (Qt's name)
            rect, flags, text = (args + (None,))[:3]
            if isinstance(rect, QRectF) and isinstance(text, str) and text.strip():
                width = QFontMetricsF(self.font()).horizontalAdvance(text)
                left = rect.left() if not flags & Qt.AlignRight else rect.right() - width
                words.append((text, QRectF(left, rect.top(), width, rect.height())))
            return super().drawText(*args)

    paint_into(item, Recording)
    return words


def test_a_list_r1_found_empty_says_so_inside_the_frame_or_under_the_drawing(qtbot, loaded):
    """Issue 24: at step 5003 of the default trace R1 probes AVAIL[8], finds
    it empty, and the split pushes 0x5cd00 on it; in presenter mode at
    1280 x 720 the row's "was empty" after that chip ran past the right
    edge ("was em").  Read back on every screen: each row R1 found empty
    either paints "was empty" wholly inside the frame, or paints no such
    word and the line under the drawing names the list as empty when
    probed; on the 1920 x 1080 screen there is room in the row."""
    w = loaded
    on_default_trace(qtbot, w, "buddy")
    said_below = 0
    for width, height, presenter in WALKED_SCREENS:
        at_size(qtbot, w, width, height, presenter=presenter)
        w.seek(5003)
        QApplication.processEvents()
        view = w.structure_panel.view
        visible = view.box.viewRect()
        rows = [i for i in view.graphics.scene().items() if isinstance(i, bv.AvailRowItem) and i.isVisible()
                and i.empty_probe]
        assert [r.k for r in rows] == [8], (width, presenter)
        for row in rows:
            notes = [r for text, r in painted_words(row) if "empty" in text]
            if notes:
                rect = view.view_rect_of(row, notes[0])
                assert visible.contains(rect), ((width, presenter), rect, visible)
            else:
                assert f"AVAIL[{row.k}] was empty when R1 probed it" in view.summary, ((width, presenter),
                                                                                   view.summary)
                assert (width, height) != (1920, 1080)
                said_below += 1
    assert said_below, "presenter mode at 720 has no room for the word in the row"
