"""Issue 24, "no label over data": the heap map's labels (the search's
numbers, "+N not numbered", the pointers' names, compare mode's "▼ id N")
never cover one another nor a pointer's symbol, nor the blocks the numbers
point at and the step's other marks; every structure view's drawn words never cover one
another.  All read back from the drawn items, in scene coordinates, at
1280 x 720."""

import pytest
from PySide6.QtCore import QPointF, QRectF
from PySide6.QtWidgets import QApplication, QGraphicsSimpleTextItem, QGraphicsTextItem


from .one_window import _one_window, case_window  # noqa: F401
from .test_compare_mode import compare
from .test_presenter import at_size
from tests.depth import deep, pick, some_in_quick

#: steps of the small trace (500 operations) with searches of every length
#: (the quick suite looks at every third of them: tests/depth.py)
STEPS = pick(range(240, 330, 9), range(240, 330, 3))
# (the labels counted at least scale with the steps looked at: 50 on one map
# over 15 steps, 150 on three, as in the deep suite)


def scene_rect(item) -> QRectF:
    item.updateTransform()          # as its next paint would
    return item.mapRectToScene(item.boundingRect())


def map_labels(m) -> list[tuple[str, QRectF]]:
    """(text, scene rectangle) of every label shown on the map ``m``, and
    each pointer's symbol as ("symbol", its square)."""
    labels = m.labels
    items = labels.numbers + [labels.skip] + labels.pointer_names + [getattr(m, "request_label", None)]
    out = [(i.textItem.toPlainText(), scene_rect(i)) for i in items if i is not None and i.isVisible()]
    for x0, y0, x1, y1 in m.pointers.symbol_squares(m.vb):
        out.append(("symbol", QRectF(QPointF(x0, y0), QPointF(x1, y1))))
    return out


def covering(rects) -> list:
    """Pairs of rectangles that overlap by more than a pixel each way
    (two symbols may: a pointer's at its block, another's at the next)."""
    bad = []
    for a in range(len(rects)):
        for b in range(a + 1, len(rects)):
            if rects[a][0] == rects[b][0] == "symbol":
                continue
            common = rects[a][1].intersected(rects[b][1])
            if common.width() > 1 and common.height() > 1:
                bad.append((rects[a][0], rects[b][0]))
    return bad


def pieces(m, addr: int, size: int) -> list[QRectF]:
    """Scene rectangles of a block as the map draws it: x is the byte in
    its row, y the row (one unit tall), so a block is its piece in its first
    row, the whole rows it fills and its piece in its last row."""
    rb = m.layout_.row_bytes
    out = []
    for a in range(addr // rb, (addr + size - 1) // rb + 1):
        lo, hi = max(addr, a * rb) - a * rb, min(addr + size, (a + 1) * rb) - a * rb
        p, q = m.vb.mapViewToScene(QPointF(lo, a)), m.vb.mapViewToScene(QPointF(hi, a + 1))
        out.append(QRectF(p, q).normalized())
    return out


def pointed_at(m) -> list[tuple[int, int]]:
    """The blocks the shown numbers point at, from their texts ("3·9":
    visits 3 and 9) and the step's visits; and the step's other marks (the
    block placed, the blocks freed and joined)."""
    visits = m.marks.visits
    blocks = {visits[int(k) - 1] for n in m.labels.numbers if n.isVisible()
              for k in n.textItem.toPlainText().split("·")}
    return sorted(blocks | set(m.marks.placed) | set(m.marks.released))


def labels_over_blocks(m, labels) -> list:
    """(label, block) where a shown label covers more than a pixel each way
    of a block a number points at or a mark.  A block with room for eight
    labels in view may be covered by at most an eighth (a heap-wide free
    block would otherwise leave no room for any number)."""
    view = m.vb.sceneBoundingRect()
    bad = []
    for addr, size in pointed_at(m):
        for piece in pieces(m, addr, size):
            seen = piece.intersected(view)
            for text, r in labels:
                if text == "symbol":
                    continue
                common = r.intersected(seen)
                if common.width() <= 1 or common.height() <= 1:
                    continue
                area = seen.width() * seen.height()
                if area >= 8 * r.width() * r.height() and common.width() * common.height() <= area / 8:
                    continue
                bad.append((text, (addr, size)))
    return bad


def requests(pair) -> bool:
    """Compare mode's "▼ id N" keeps off the numbered blocks only where one
    of its four places (above or under its block, text left or right) is
    in view: at step 240, three rows at 1280 x 720, next fit's block is in
    the last row and the place above it is on the block searched."""
    return "id " in pair[0]


def check_maps(qtbot, maps_of, w, steps=STEPS) -> int:
    checked = 0
    for t in steps:
        w.seek(t)
        QApplication.processEvents()
        qtbot.wait(5)
        for m in maps_of():
            labels = map_labels(m)
            assert not covering(labels), (t, covering(labels))
            over = [p for p in labels_over_blocks(m, labels) if not requests(p)]
            assert not over, (t, over)
            checked += len(labels)
    return checked


def test_the_maps_labels_cover_neither_each_other_nor_their_blocks(qtbot, loaded):
    """At 1280 x 720, then in presenter mode (bigger labels, fewer steps)."""
    at_size(qtbot, loaded, 1280, 720)
    steps = STEPS[::2]
    assert check_maps(qtbot, lambda: [loaded.heap_map], loaded, steps) > 50 / 15 * len(steps)
    at_size(qtbot, loaded, 1280, 720, presenter=True)
    steps = STEPS[1::4]
    assert check_maps(qtbot, lambda: [loaded.heap_map], loaded, steps) > 20 / 8 * len(steps)


def test_seven_short_rows_leave_numbers_out_rather_than_stack_them(qtbot, loaded):
    """Seven rows at 1280 x 720 (maps about 20 px high): a number with no
    free spot is left out and counted, never drawn over another label or
    the request's; a row whose view box changes size alone (its address axis
    hidden) places its labels again.  (A pointer's name is never left out:
    with no free spot it may cover another label or a symbol.)"""
    at_size(qtbot, loaded, 1280, 720)
    compare(qtbot, loaded, ["next-fit", "rotating-list", "splay-best-fit", "buddy", "tlsf", "bsd-buckets",
                            "dlmalloc"])
    left_out = 0
    for t in range(240, 330, 9):
        loaded.seek(t)
        QApplication.processEvents()
        qtbot.wait(5)
        for row in loaded.compare.view.shown_rows():
            m = row.map
            names = {n.textItem.toPlainText() for n in m.labels.pointer_names if n.isVisible()}
            labels = map_labels(m)
            bad = [p for p in covering(labels) if not set(p) & names]
            assert not bad, (row.name.text(), t, bad)
            over = [p for p in labels_over_blocks(m, labels) if p[0] not in names and not requests(p)]
            assert not over, (row.name.text(), t, over)
            left_out += m.labels.crowded
            if m.labels.crowded:
                assert "left out for room" in m.search_note, (row.name.text(), t)
    assert left_out           # short rows do leave numbers out


def test_compare_rows_labels_and_the_request_id_cover_nothing(qtbot, loaded):
    """Three rows at 1280 x 720: next fit's "id N ▼" was drawn over its
    rover's symbol (step 2004 of the default trace; here the small one)."""
    at_size(qtbot, loaded, 1280, 720)
    compare(qtbot, loaded, ["next-fit", "first-fit", "splay-best-fit"])
    rows = loaded.compare.view.shown_rows
    steps = STEPS[::2]
    assert check_maps(qtbot, lambda: [r.map for r in rows()], loaded, steps) > 150 / 15 * len(steps)


# ------------------------------------------------------------ structure views

def drawn_words(view) -> list[tuple[str, QRectF]]:
    """(text, scene rectangle) of every word item a structure view shows:
    the scene views' text items; the canvas views' cards, notes and folds
    (each paints its own words inside its rectangle)."""
    from heapscope.gui.structure_views.canvas import Card, Fold, Note
    scene = view.graphics.scene() if hasattr(view, "graphics") else view.canvas.scene()
    out = []
    for item in scene.items():
        if not item.isVisible() or item.opacity() == 0:
            continue
        if isinstance(item, QGraphicsSimpleTextItem):
            text = item.text()
        elif isinstance(item, QGraphicsTextItem):
            text = item.toPlainText()
        elif isinstance(item, (Card, Note, Fold)):
            text = f"{type(item).__name__} {getattr(item, 'key', '')}"
        else:
            continue
        if text.strip():
            # a card's bounding rectangle has room round it for a selection ring
            box = QRectF(0, 0, item.w, item.h) if isinstance(item, Card) else item.boundingRect()
            out.append((text[:30], item.mapRectToScene(box)))
    return out


@pytest.mark.parametrize("strategy", some_in_quick(
    ["next-fit", "rotating-list", "bsd-buckets", "splay-best-fit", "buddy",
     "tlsf", "dlmalloc", "phkmalloc", "gnu-malloc", "v7-malloc"], every=2))
def test_no_structure_view_draws_words_over_words(qtbot, case_window, small_trace_path, strategy):
    """The TLSF view's no-overlap check, for every view: ring, buckets,
    tree, buddy, dlmalloc's bins, the page directory, the block table and
    the arena."""
    from .conftest import wait_loaded
    window, made = case_window         # (tests/gui/one_window.py)
    if made:
        window.set_strategy(strategy)
        wait_loaded(qtbot, window, lambda: window.open_trace(small_trace_path))
        at_size(qtbot, window, 1280, 720)
    else:           # the window at 1280 x 720 with the small trace: this case's strategy in it
        wait_loaded(qtbot, window, lambda: window.set_strategy(strategy))
        assert window.timeline.strategy_name == strategy and (window.width(), window.height()) == (1280, 720)
    checked = 0
    for t in (60, 250, 490):
        window.seek(t)
        QApplication.processEvents()
        qtbot.wait(5)
        words = drawn_words(window.structure_panel.view)
        assert not covering(words), (strategy, t, covering(words)[:5])
        checked += len(words)
    assert checked > 3


# ------------------------------------------------------------ the failure banner

def banner_and_hatch(hm):
    """The banner and the part in view of the hatched bytes a failed
    request needed, in the plot widget's pixels."""
    from PySide6.QtCore import QRect
    banner = QRect(hm.banner.pos(), hm.banner.size())
    hatch = hm.plot_widget.mapFromScene(hm.failed_item.mapRectToScene(
        hm.failed_item.path().boundingRect())).boundingRect()
    view = hm.plot_widget.mapFromScene(hm.vb.sceneBoundingRect()).boundingRect()
    return banner, hatch.intersected(view), view


def heap_bytes(hm):
    """The heap's bytes below the break on the map, in the plot widget's
    pixels: rows 0 .. brk // row bytes whole, then the rest of the last."""
    from PySide6.QtCore import QRect
    rb, brk = hm.layout_.row_bytes, hm.blocks.brk
    view = hm.plot_widget.mapFromScene(hm.vb.sceneBoundingRect()).boundingRect()
    out = []
    for x0, y0, x1, y1 in ((0, 0, rb, brk // rb), (0, brk // rb, brk % rb, brk // rb + 1)):
        if x1 > x0 and y1 > y0:
            r = QRectF(hm.vb.mapViewToScene(QPointF(x0, y0)), hm.vb.mapViewToScene(QPointF(x1, y1))).normalized()
            out.append(hm.plot_widget.mapFromScene(r).boundingRect().intersected(view))
    return [r for r in out if not r.isEmpty()]


def banner_clear(hm, t) -> None:
    """Where the hatch and the banner fit one above the other in the map,
    the banner covers none of it; else it covers at most half of it."""
    banner, hatch, view = banner_and_hatch(hm)
    assert not hatch.isEmpty(), t
    if hatch.height() + banner.height() + 12 <= view.height():
        assert not banner.intersects(hatch), (t, banner, hatch, view)
    else:
        covered = banner.intersected(hatch)
        assert covered.width() * covered.height() <= hatch.width() * hatch.height() / 2, (t, banner, hatch)


@pytest.mark.parametrize("presenter", [False, True])
def test_the_failure_banner_leaves_the_failed_bytes_in_view(qtbot, window, small_trace_path, presenter):
    """Issue 24: the banner ("✗ malloc(...) failed") floated over the top
    of the map whatever was there.  At every failing step (at most ten, five
    in the quick suite) of
    a heap limited to 48 KiB, alone and in compare mode (one scale for all
    rows: a smaller heap's break is in the rows at the top), the banner
    leaves the hatched bytes the request needed in view; in a compare row
    it covers none of the heap's bytes either, or it folds into the line
    under the map, which says the failure (bsd-buckets at step 45 in
    presenter mode: the banner, wider than the map, lay over its first rows).
    The quick suite's compare rows only in presenter mode (its case)."""
    from PySide6.QtCore import QRect
    from .conftest import wait_loaded
    window.params = {"heap_limit": 48 * 1024}
    wait_loaded(qtbot, window, lambda: window.open_trace(small_trace_path))
    at_size(qtbot, window, 1280, 720, presenter=presenter)
    s = window.timeline.series
    # the quick suite: the first five failing steps, every 21st step in compare mode
    failed = [i + 1 for i in range(s.n) if s.failed[i]][:pick(5, 10)]
    assert failed
    folded = 0
    for t in failed:
        window.seek(t)
        QApplication.processEvents()
        qtbot.wait(5)
        hm = window.heap_map
        if hm.banner.isVisible():
            banner_clear(hm, t)
            # nor any of the heap's bytes (issue 24: the banner covered the
            # top rows of a tall map)
            over = [r for r in heap_bytes(hm) if QRect(hm.banner.pos(), hm.banner.size()).intersects(r)]
            assert not over, (t, over)
        else:
            # folded into the line under the map, which says it in the banner's words
            assert f"malloc({window.timeline.trace.sizes[t - 1]}) failed" in hm.info.text(), (t, hm.info.text())
            assert "cannot grow by" in hm.info.text()
            folded += 1
    assert folded           # the 48 KiB heap fills its map: every place covers its bytes
    if not presenter and not deep():
        return      # the quick suite's compare rows: in presenter mode, bsd-buckets' case (issue 20)
    compare(qtbot, window, ["next-fit", "buddy", "bsd-buckets"])
    checked = 0
    # every 7th step in the deep suite, every 21st in the quick one (issue
    # 20); bsd-buckets fails at 45 (the case of the banner over its map)
    for t in sorted({*range(1, s.n + 1, pick(21, 7)), 45}):
        window.seek(t)
        QApplication.processEvents()
        for row in window.compare.view.shown_rows():
            m = row.map
            if m.banner.isVisible():
                banner_clear(m, (row.name.text(), t))
                over = [r for r in heap_bytes(m) if QRect(m.banner.pos(), m.banner.size()).intersects(r)]
                assert not over, (row.name.text(), t, over)
                checked += 1
            elif m.marks.failed:
                # folded into the line under the map, which says it
                assert "NULL" in m.outcome and "out of memory" in m.outcome, (row.name.text(), t, m.outcome)
                checked += 1
    assert checked


def test_in_presenter_mode_the_request_id_stays_inside_its_map(qtbot, loaded):
    """Issue 24: in presenter mode at 1280 x 720 next fit's "▼ id N" was cut
    at the top of its map (the room kept above the first row was for the
    label's size outside presenter mode).  Read back: at every step looked
    at, each row's request label lies inside its map's view."""
    at_size(qtbot, loaded, 1280, 720, presenter=True)
    compare(qtbot, loaded, ["next-fit", "first-fit", "splay-best-fit"])
    seen = 0
    # next fit's rover under the request at 199 (the quick suite: every 6th step)
    steps = pick(range(151, 251, 6), range(151, 251, 2))
    for t in steps:
        loaded.seek(t)
        QApplication.processEvents()
        qtbot.wait(5)
        for row in loaded.compare.view.shown_rows():
            m = row.map
            if m.request_label.isVisible():
                r, view = scene_rect(m.request_label), m.vb.sceneBoundingRect()
                assert view.contains(r), (row.name.text(), t, r, view)
                seen += 1
    assert seen > 100 * len(steps) / 50      # the deep suite's 100 of 150 labels, in share


def test_with_seven_rows_at_720_the_request_id_stays_inside_its_map_and_off_the_pointers(qtbot, window):
    """Issue 24: with seven rows at 1280 x 720 (maps about 50 px tall) V7's
    "id 1270 ▼" at step 2004 of the default trace was lifted off allocp's
    symbol, under it, and out through the top of its map: half its text was
    cut.  Read back at steps around that one, in every row: the label is
    inside its map's view and covers no pointer's symbol."""
    from heapscope import traces
    from .conftest import wait_loaded
    wait_loaded(qtbot, window, lambda: window.open_trace(str(traces.default_trace_path())), timeout=60000)
    at_size(qtbot, window, 1280, 720)
    compare(qtbot, window, ["next-fit", "first-fit", "splay-best-fit", "tlsf", "buddy", "dlmalloc", "v7-malloc"])
    seen = 0
    for t in pick((2004, 5003), (1998, 2001, 2004, 2007, 5003)):
        window.seek(t)
        QApplication.processEvents()
        qtbot.wait(5)
        for row in window.compare.view.shown_rows():
            m = row.map
            assert m.request_label.isVisible(), (row.name.text(), t)
            r, view = scene_rect(m.request_label), m.vb.sceneBoundingRect()
            assert view.contains(r), (row.name.text(), t, r, view)
            symbols = [q for text, q in map_labels(m) if text == "symbol"]
            over = [q for q in symbols if r.intersected(q).width() > 1 and r.intersected(q).height() > 1]
            assert not over, (row.name.text(), t, "covers a pointer's symbol", r, over)
            seen += 1
    assert seen >= 14


def test_a_note_on_a_pointer_at_no_block_covers_no_data(qtbot, window):
    """Issue 24: dlmalloc's "last_remainder: at no block" floated in the
    map's bottom-right corner over the heap's last rows.  At steps of the
    default trace where last_remainder is at no block, at 1280 x 720, in
    presenter mode and at 1920 x 1080, read back: the note is either shown
    covering none of the heap's bytes below the break, no label and no
    pointer's symbol, or hidden with its words in the line under the map."""
    from PySide6.QtCore import QRect
    from heapscope import traces
    from .conftest import wait_loaded
    window.set_strategy("dlmalloc")
    wait_loaded(qtbot, window, lambda: window.open_trace(str(traces.default_trace_path())), timeout=60000)
    seen = 0
    for width, height, presenter in ((1280, 720, False), (1280, 720, True), (1920, 1080, False)):
        at_size(qtbot, window, width, height, presenter=presenter)
        for t in (120, 500, 510):
            window.seek(t)
            QApplication.processEvents()
            qtbot.wait(5)
            hm = window.heap_map
            note = hm.pointers.note
            if not hm.pointers.note_words:
                continue
            assert "last_remainder: at no block" in hm.pointers.note_words, t
            seen += 1
            if note.isVisible():
                r = QRect(note.pos(), note.size())
                assert not any(r.intersects(q) for q in heap_bytes(hm)), (width, presenter, t)
                shown = [hm.plot_widget.mapFromScene(rect).boundingRect() for _, rect in map_labels(hm)]
                assert not any(r.intersects(q) for q in shown), (width, presenter, t)
            else:
                assert "last_remainder: at no block" in hm.info.text(), (width, presenter, t, hm.info.text())
    assert seen >= 3


def test_a_picture_of_a_failed_step_shows_its_hatch_even_mid_flash(qtbot, window, small_trace_path):
    """Issue 24, one picture per state: a failure's hatch flashes on a
    160 ms timer when it appears, and ``render --steps 95:99`` (48 KiB heap,
    next fit) caught its first frame between two flashes: no hatch, unlike
    the still picture of step 95.  Here the flash is stopped half-way (the
    hatch hidden, as between two flashes): the export's settle() before
    every frame shows the hatch again and ends the flash."""
    from heapscope.gui import export
    from .conftest import wait_loaded
    window.params = {"heap_limit": 48 * 1024}
    wait_loaded(qtbot, window, lambda: window.open_trace(small_trace_path))
    s = window.timeline.series
    t = next(i + 1 for i in range(s.n) if s.failed[i])
    window.seek(t)
    QApplication.processEvents()
    layer = window.heap_map.marks_layer
    assert not layer.failed.path().isEmpty()
    layer._flash.start()
    layer._flash_left = 6
    layer._flash_tick()                 # the first flash: the hatch off
    assert not layer.failed.isVisible()
    export.settle()
    assert layer.failed.isVisible() and not layer._flash.isActive()


def test_no_label_lies_on_a_failed_requests_hatch(qtbot, window, small_trace_path):
    """Issue 24, no label over a mark: at step 95 of a 48 KiB heap next
    fit's "rover" found its first free spot on the hatch past the break
    (the bytes the failed request needed), far from its symbol.  Read back
    at the first failing steps, at 1280 x 720 and in presenter mode: no
    number and no pointer's name overlaps the hatch by more than a pixel."""
    from .conftest import wait_loaded
    window.params = {"heap_limit": 48 * 1024}
    wait_loaded(qtbot, window, lambda: window.open_trace(small_trace_path))
    s = window.timeline.series
    failed = [i + 1 for i in range(s.n) if s.failed[i]][:pick(4, 12)]
    checked = 0
    for presenter in (False, True):
        at_size(qtbot, window, 1280, 720, presenter=presenter)
        for t in failed:
            window.seek(t)
            QApplication.processEvents()
            qtbot.wait(5)
            m = window.heap_map
            hatch = m.marks_layer.failed.mapRectToScene(m.marks_layer.failed.path().boundingRect())
            assert hatch.height() > 1, t
            for text, r in map_labels(m):
                if text == "symbol":
                    continue
                common = r.intersected(hatch)
                assert not (common.width() > 1 and common.height() > 1), (presenter, t, text, r, hatch)
                checked += 1
    assert checked


def test_a_compare_rows_address_axis_keeps_no_room_for_the_title_it_hides(qtbot, loaded):
    """Issue 24, presenter mode never leaves a map too narrow: a compare row
    hides its address axis's title ("row address"), but the axis kept two
    text heights of room for it, and at 1280 x 720 in presenter mode each
    map lost 165 of its row's 380 pixels to blank.  Read back in presenter
    mode and at 720: a row's axis is no wider than a 32-bit address in its
    tick font plus less than one text height; the lone map, whose title
    shows, keeps its room."""
    from PySide6.QtGui import QFontMetrics
    for presenter in (True, False):
        at_size(qtbot, loaded, 1280, 720, presenter=presenter)
        lone = loaded.heap_map.plot.getAxis("left")
        fm = QFontMetrics(lone.style["tickFont"] or lone.font())
        assert lone.label.isVisible()
        assert lone.width() >= fm.horizontalAdvance("0x00000000") + 2 * fm.height()
        rows = compare(qtbot, loaded, ["next-fit", "splay-best-fit", "tlsf"])
        for row in rows:
            axis = row.map.plot.getAxis("left")
            fm = QFontMetrics(axis.style["tickFont"] or axis.font())
            assert not axis.label.isVisible()
            assert axis.width() < fm.horizontalAdvance("0x00000000") + fm.height(), (presenter, axis.width())
        loaded.compare.leave()
