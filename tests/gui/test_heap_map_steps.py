"""The heap map step by step, read back from its drawn items and its image:
the policy's pointers on every step, every visit numbered (or counted as
left out) and inside the view, the map at real sizes (no white where cells
should be), the same picture whichever way a step is reached, micro-steps
event by event, and the edited image against a rebuild from the walk."""

import random

import numpy as np
import pytest
from PySide6.QtCore import QPointF, QRectF
from PySide6.QtGui import QImage

from heapscope import traces
from heapscope.allocators import make_strategy
from heapscope.allocators.events import (Coalesce, Grow, Placed, Released, Split,
                                         Visit)
from heapscope.allocators.replay import Program, Timeline, apply_op
from heapscope.gui import heap_cells, palette
from heapscope.gui.heap_map import HeapMapWidget
from heapscope.allocators.heap_edits import TrackedHeap
from heapscope.gui.show_model import ShowModel
from heapscope.gui.step_marks import FIRST_NUMBERED, LAST_NUMBERED
from tests.depth import pick, some_in_quick


# ------------------------------------------------------------------ helpers
class Shown:
    """A model showing one timeline and a heap map bound to it."""

    def __init__(self, qtbot, trace, strategy, params=None, size=(900, 560)):
        self.timeline = Timeline(trace, strategy, params).build()
        self.model = ShowModel()
        self.model.set_trace(trace)
        self.model.show([self.model.add_timeline(self.timeline)], 0)
        self.map = HeapMapWidget()
        qtbot.addWidget(self.map)
        self.map.resize(*size)
        self.map.show()
        qtbot.waitExposed(self.map)
        self.map.bind(self.model)

    @property
    def strategy(self):
        return self.timeline.strategy


def trace_of(ops):
    return traces.Trace.from_ops(ops)


def visible_numbers(hm) -> dict:
    """{visit number: its label} of the number labels drawn."""
    out = {}
    for label in hm._order_labels:
        if label.isVisible():
            for n in label.textItem.toPlainText().split("·"):
                out[int(n)] = label
    return out


def plot_image(hm) -> QImage:
    return hm.plot_widget.grab().toImage().convertToFormat(QImage.Format_RGB32)


def view_pixels(hm) -> np.ndarray:
    """The pixels of the map area (the ViewBox), as an (h, w, 3) array."""
    img = plot_image(hm)
    arr = np.frombuffer(img.constBits(), np.uint8).reshape(img.height(), img.bytesPerLine() // 4, 4)
    r = hm.plot_widget.mapFromScene(hm.vb.sceneBoundingRect()).boundingRect()
    return arr[r.top():r.bottom(), r.left():r.right(), 2::-1].copy()     # BGRA -> RGB


def white_fraction(hm) -> float:
    px = view_pixels(hm)
    return float(np.all(px >= 245, axis=2).mean())


def colour_fraction(pixels: np.ndarray, hex_colour: str, tolerance: int = 40) -> float:
    want = np.array(palette.rgba(hex_colour)[:3])
    return float((np.abs(pixels.astype(int) - want).sum(axis=2) <= tolerance).mean())


# ------------------------------------------------ pointers on every step
@pytest.fixture(scope="module")
def replay_trace():
    return traces.make_workload("vo1989", steps=200, seed=11)


@pytest.mark.parametrize("strategy", some_in_quick(["next-fit", "rotating-list", "splay-best-fit"], every=2))
def test_the_policys_pointers_are_drawn_on_every_step(qtbot, replay_trace, strategy):
    shown = Shown(qtbot, replay_trace, strategy)
    hm = shown.map
    drawn = 0
    for t in range(1, shown.timeline.n + 1):
        shown.model.seek(t)
        pointers = shown.strategy.structure()["pointers"]
        row_bytes = hm.layout_.row_bytes
        want_search = [(p["addr"] % row_bytes, p["addr"] // row_bytes + 1)
                       for p in pointers if p["role"] == "search" and p["addr"] is not None]
        want_marker = [(p["addr"] % row_bytes, p["addr"] // row_bytes + 1)
                       for p in pointers if p["role"] == "marker" and p["addr"] is not None]
        xs, ys = hm.pointer_item.getData()
        assert list(zip(xs, ys)) == want_search, f"step {t}"
        xs, ys = hm.marker_item.getData()
        assert list(zip(xs, ys)) == want_marker, f"step {t}"
        names = {lab.textItem.toPlainText() for lab in hm._pointer_labels if lab.isVisible()}
        assert names == {p["name"] for p in pointers if p["addr"] is not None}, f"step {t}"
        at_base = [p["name"] for p in pointers if p["role"] == "search" and p["addr"] is None]
        # the note is drawn on the map, or (issue 24: every place on the map
        # would cover heap bytes) its words are in the line under the map
        folded = hm.pointers.note_folded and hm.pointers.note_words in hm.info.text()
        assert (hm.pointer_note.isVisible() or folded) == bool(at_base), f"step {t}"
        if at_base:
            words = hm.pointers.note_words
            assert "&base" in words or "no block" in words, f"step {t}: {words}"
        drawn += bool(want_search or at_base)
    # a search pointer (the rover, the head) is shown on every step, on its
    # block or, at K&R's &base, in words
    if strategy != "splay-best-fit":
        assert drawn == shown.timeline.n


def test_the_wilderness_is_a_marker_and_only_it_is_coloured_top(qtbot, replay_trace):
    shown = Shown(qtbot, replay_trace, "splay-best-fit")
    hm = shown.map
    shown.model.seek(150)
    [wild] = shown.strategy.structure()["pointers"]
    assert wild["name"] == "wilderness" and wild["role"] == "marker" and wild["addr"] is not None
    size = dict(shown.strategy.structure()["sizes"])[wild["addr"]]
    assert hm.cell_colour(wild["addr"] + size // 2) == palette.rgba(palette.BLUISH_GREEN)
    assert hm.legend.entries["top"].isVisibleTo(hm.legend)
    assert hm.legend.labels["marker"].text() == "marker (wilderness)"
    assert not hm.legend.entries["search pointer"].isVisibleTo(hm.legend)
    assert len(hm.pointer_item.getData()[0]) == 0          # not drawn as a search pointer
    # no other free block is coloured top
    top_cells = np.flatnonzero(hm.image.ravel() == palette.TOP)
    lay = hm.layout_
    addresses = top_cells * lay.bytes_per_cell + lay.bytes_per_cell // 2
    assert np.all((addresses >= wild["addr"]) & (addresses < wild["addr"] + size))


def test_next_fit_has_no_top_block_and_names_its_rover(qtbot, replay_trace):
    shown = Shown(qtbot, replay_trace, "next-fit")
    shown.model.seek(shown.timeline.n)
    hm = shown.map
    assert palette.TOP not in np.unique(hm.image)
    assert not hm.legend.entries["top"].isVisibleTo(hm.legend)
    assert not hm.legend.entries["marker"].isVisibleTo(hm.legend)
    assert hm.legend.labels["search pointer"].text() == "search pointer (rover)"


# ------------------------------------------------------------ search numbers
def sixty_visit_search():
    """First fit (K&R's malloc from base, NALLOC 1): 118 mallocs of 24 bytes,
    every other one freed, then a malloc of 40 that fits none of the 59 free
    blocks: it examines them all, grows the heap and takes the new block:
    60 visits."""
    ops = [("a", i, 24) for i in range(118)] + [("f", i) for i in range(0, 118, 2)] + [("a", 200, 40)]
    return trace_of(ops)


def test_every_visit_of_a_60_visit_search_has_a_number_or_is_counted(qtbot):
    shown = Shown(qtbot, sixty_visit_search(), "first-fit", {"nalloc": 1})
    hm = shown.map
    shown.model.seek(shown.timeline.n)
    visits = [e for e in shown.timeline.last_record.events if isinstance(e, Visit)]
    assert len(visits) == 60
    numbers = visible_numbers(hm)
    skipped = 60 - FIRST_NUMBERED - LAST_NUMBERED
    assert sorted(numbers) == list(range(1, FIRST_NUMBERED + 1)) + list(range(61 - LAST_NUMBERED, 61))
    assert hm.skip_label.isVisible() and hm.skip_label.textItem.toPlainText() == f"+{skipped} not numbered"
    assert len(numbers) + skipped == 60
    assert f"{skipped} in between not" in hm.search_note
    view = hm.vb.sceneBoundingRect()
    row_bytes = hm.layout_.row_bytes
    for n, label in numbers.items():
        rect = label.sceneBoundingRect()
        assert view.contains(rect), f"number {n} is drawn outside the view"
        # touching its block, or joined to it by a leader line from a point
        # of the block's piece in its first row (view coordinates)
        v = visits[n - 1]
        x, y = v.addr % row_bytes, v.addr // row_bytes
        piece = QRectF(x, y, min(v.size, row_bytes - x), 1)
        on_block = rect.adjusted(-3, -3, 3, 3).intersects(
            QRectF(hm.vb.mapViewToScene(piece.topLeft()), hm.vb.mapViewToScene(piece.bottomRight())).normalized())
        led = any(piece.adjusted(-1e-6, -1e-6, 1e-6, 1e-6).contains(poly.first())
                  for poly in hm.leader_item.path().toSubpathPolygons())
        assert on_block or led, f"number {n} is neither on its block nor led to it"


def test_a_small_map_numbers_fewer_visits_and_counts_the_rest(qtbot):
    # (420 x 300: at 260 px tall the legend's six lines leave the map about
    # 70 px, room for 3 numbers; the map's old 200 px least height hid that
    # by drawing past the widget's bottom)
    shown = Shown(qtbot, sixty_visit_search(), "first-fit", {"nalloc": 1}, size=(420, 300))
    hm = shown.map
    shown.model.seek(shown.timeline.n)
    numbers = visible_numbers(hm)
    assert 4 <= len(numbers) < 40
    assert 1 in numbers and 60 in numbers                      # both ends of the search
    skipped = int(hm.skip_label.textItem.toPlainText().split()[0].lstrip("+"))
    assert len(numbers) + skipped == 60
    assert f"{skipped} in between not" in hm.search_note


def test_numbers_in_the_first_row_are_inside_the_view(qtbot):
    # first fit at step 5003 of the bundled trace: its 37 visits, 1-26 of
    # them on the first row, were once drawn above the map
    shown = Shown(qtbot, traces.load_trace("default"), "first-fit", size=(1000, 620))
    hm = shown.map
    shown.model.seek(5003)
    rec = shown.timeline.last_record
    visits = [e for e in rec.events if isinstance(e, Visit)]
    first_row = [i + 1 for i, v in enumerate(visits) if v.addr < hm.layout_.row_bytes]
    assert len(first_row) >= 10
    numbers = visible_numbers(hm)
    assert sorted(numbers) == list(range(1, len(visits) + 1))
    view = hm.vb.sceneBoundingRect()
    for n in first_row:
        assert view.contains(numbers[n].sceneBoundingRect()), f"number {n} of the first row"
    assert hm.crowded == 0


def test_a_long_search_numbers_both_ends_as_it_goes(qtbot):
    # micro-steps: the numbers appear in order; past 40 the newest 20 stay
    shown = Shown(qtbot, sixty_visit_search(), "first-fit", {"nalloc": 1})
    model, hm = shown.model, shown.map
    model.seek(shown.timeline.n)
    events = shown.timeline.last_record.events
    visit_at = [i for i, e in enumerate(events) if isinstance(e, Visit)]
    for k, i in enumerate(visit_at, start=1):
        model.set_event(i)
        numbers = visible_numbers(hm)
        assert max(numbers) == k
        want = list(range(1, k + 1)) if k <= 40 else \
            list(range(1, FIRST_NUMBERED + 1)) + list(range(k - LAST_NUMBERED + 1, k + 1))
        assert sorted(numbers) == want


# --------------------------------------------------------- at real sizes
def sqlite_like_trace(seed=5):
    """The shape of a real sqlite trace at its peak: 12 000 live blocks in
    about 18 MiB, most requests small, a few of tens of KiB, and 9 000 freed
    among them, mostly small ones: thousands of small free blocks."""
    rng = random.Random(seed)
    ops, live = [], []
    for i in range(21000):
        r = rng.random()
        size = rng.randint(16, 200) if r < 0.80 else rng.randint(200, 3000) if r < 0.98 else \
            rng.randint(8192, 40000)
        ops.append(("a", i, size))
        live.append((i, size))
    rng.shuffle(live)
    freed = 0
    for ident, size in live:
        if freed < 9000 and (size <= 200 or rng.random() < 0.2):
            ops.append(("f", ident))
            freed += 1
    return trace_of(ops)


def replayed(trace, strategy):
    s = make_strategy(strategy, record=False)
    program = Program()
    for kind, ident, size in zip(trace.kind.tolist(), trace.ids.tolist(), trace.sizes.tolist()):
        apply_op(s, program, kind, ident, size)
    return s


@pytest.mark.parametrize("strategy", ["next-fit", "tlsf"])
def test_the_map_at_a_sqlite_like_peak_is_not_white(qtbot, strategy):
    s = replayed(sqlite_like_trace(), strategy)
    blocks = s.walk()
    assert len(s.live) == 12000 and 17 << 20 < s.arena.brk < 19 << 20
    assert sum(b.state == "free" and b.size <= 256 for b in blocks) > 3000
    hm = HeapMapWidget()
    qtbot.addWidget(hm)
    hm.resize(1000, 650)
    hm.show()
    qtbot.waitExposed(hm)
    hm.show_heap(s, s.rec)
    assert white_fraction(hm) < 0.10
    # zoomed in on a few rows the separators come back, and still hide little
    lay = hm.layout_
    hm.vb.setRange(xRange=(0, lay.row_bytes / 16), yRange=(0, 3), padding=0)
    assert not hm.separator_item.path().isEmpty()
    assert white_fraction(hm) < 0.10


def test_a_page_of_256_free_16_byte_blocks_reads_as_free(qtbot):
    # 4.3BSD carves a page into 256 blocks of 16 bytes for malloc(8); the one
    # taken and freed again leaves 256 free blocks in a row
    s = make_strategy("bsd-buckets")
    s.free(s.malloc(8))
    page = [b for b in s.walk() if b.state == "free" and b.size == 16]
    assert len(page) == 256
    start = page[0].addr
    hm = HeapMapWidget()
    qtbot.addWidget(hm)
    hm.resize(900, 560)
    hm.show()
    qtbot.waitExposed(hm)
    hm.show_heap(s, s.rec)
    lay = hm.layout_

    def page_pixels():
        px = view_pixels(hm)
        origin = hm.plot_widget.mapFromScene(hm.vb.sceneBoundingRect()).boundingRect().topLeft()
        parts = []
        for x, y, w, h in heap_cells.range_rects(start, 256 * 16, lay.row_bytes):
            a = hm.plot_widget.mapFromScene(hm.vb.mapViewToScene(QPointF(x, y))) - origin
            b = hm.plot_widget.mapFromScene(hm.vb.mapViewToScene(QPointF(x + w, y + h))) - origin
            # inside the rectangle, off its edges (outlines and antialiasing)
            parts.append(px[max(0, a.y() + 3):b.y() - 3, max(0, a.x() + 3):b.x() - 3].reshape(-1, 3))
        return np.concatenate(parts)

    for zoom in (None, 16):
        if zoom:        # close enough to see the lines between the blocks
            hm.vb.setRange(xRange=(start % lay.row_bytes, start % lay.row_bytes + zoom * 16),
                           yRange=(start // lay.row_bytes, start // lay.row_bytes + 1), padding=0)
        pixels = page_pixels()
        assert len(pixels) > 100
        assert colour_fraction(pixels[:, None, :], palette.YELLOW) > 0.9
        assert float(np.all(pixels >= 245, axis=1).mean()) < 0.07


# ------------------------------------------- one step, one picture
def growing_trace():
    """A heap that grows fivefold: 600 mallocs of about 1 KiB, every fifth
    block freed a little later."""
    ops = []
    for i in range(600):
        ops.append(("a", i, 1000 + (i % 7) * 100))
        if i % 5 == 4:
            ops.append(("f", i - 2))
    return trace_of(ops)


@pytest.mark.parametrize("which", ["vo1989", "growing"])
def test_a_step_looks_the_same_whichever_way_it_was_reached(qtbot, replay_trace, which):
    trace = replay_trace if which == "vo1989" else growing_trace()
    shown = Shown(qtbot, trace, "next-fit")
    model, hm = shown.model, shown.map
    target = 120
    pictures = []
    model.seek(target)                       # a jump from 0
    pictures.append(plot_image(hm))
    target_layout = hm.layout_
    model.seek(target + 1)
    model.seek(target)                       # one step back (undone)
    pictures.append(plot_image(hm))
    model.seek(3)
    for t in range(4, target + 1):           # step by step from the start
        model.seek(t)
    pictures.append(plot_image(hm))
    model.seek(shown.timeline.n)             # from the end (a bigger heap before)
    if which == "growing":                   # drawn in rows twice as long there
        assert hm.layout_.row_bytes == 2 * target_layout.row_bytes
    model.seek(target)
    pictures.append(plot_image(hm))
    model.seek(target - 30)
    model.seek(target)                       # a short move forward, replayed step by step
    pictures.append(plot_image(hm))
    assert all(p == pictures[0] for p in pictures[1:])


# ------------------------------------------------------------ micro-steps
def kr_steps():
    """K&R next fit: three malloc(100) (8 units each, cut from the top of
    the first 1024-unit morecore), free of the middle one, malloc(40) (its
    search finds the freed block and cuts its upper part off), free of that
    part (it joins the rest below it)."""
    ops = [("a", 0, 100), ("a", 1, 100), ("a", 2, 100), ("f", 1), ("a", 3, 40), ("f", 3)]
    return trace_of(ops)


def codes_of(hm, addr, size):
    """The cell codes of the byte range, from the map's image."""
    lay = hm.layout_
    bpc = lay.bytes_per_cell
    cells = hm.image.ravel()
    return set(cells[(addr + bpc // 2) // bpc:(addr + size) // bpc].tolist())


def contains(path, addr, row_bytes):
    return path.contains(QPointF(addr % row_bytes + 0.5, addr // row_bytes + 0.5))


def test_micro_steps_show_each_event_kind(qtbot):
    shown = Shown(qtbot, kr_steps(), "next-fit")
    model, hm = shown.model, shown.map
    rb = lambda: hm.layout_.row_bytes  # noqa: E731

    # step 1: the first malloc grows the heap
    model.seek(1)
    events = shown.timeline.last_record.events
    grow = next(i for i, e in enumerate(events) if isinstance(e, Grow))
    g = events[grow]
    model.set_event(grow - 1) if grow else None
    if grow:
        assert codes_of(hm, g.old_brk, g.increment) == {palette.BEYOND}
    model.set_event(grow)
    assert palette.BEYOND not in codes_of(hm, g.old_brk, g.increment)
    assert contains(hm.grown_item.path(), g.old_brk, rb())
    layout = hm.layout_
    model.set_event(None)
    assert hm.layout_ == layout                      # the step's frames share one layout

    # step 5: malloc(40) finds the freed block, cuts it, places the tail
    model.seek(5)
    events = shown.timeline.last_record.events
    kinds = [type(e) for e in events]
    assert Visit in kinds and Split in kinds and Placed in kinds
    split_at, placed_at = kinds.index(Split), kinds.index(Placed)
    split, placed = events[split_at], events[placed_at]
    model.set_event(split_at - 1)
    assert hm.cut_item.path().isEmpty()
    assert codes_of(hm, split.addr, split.size) == {palette.FREE}
    model.set_event(split_at)
    cut = split.taken_addr                                # K&R hands out the upper part
    assert any(abs(poly.first().x() - cut % rb()) < 1e-6 for poly in hm.cut_item.path().toSubpathPolygons())
    assert hm.placed_item.path().isEmpty()               # before the Placed event: not placed yet
    assert codes_of(hm, split.taken_addr, split.taken_size) == {palette.FREE}
    model.set_event(placed_at)
    assert contains(hm.placed_item.path(), placed.addr, rb())
    assert palette.PAYLOAD in codes_of(hm, placed.addr, placed.size)
    assert codes_of(hm, split.rest_addr, split.rest_size) == {palette.FREE}
    # the current event is ringed
    assert contains(hm.current_item.path(), placed.addr, rb())

    # step 6: the free of block 3 joins the rest of block 1
    model.seek(6)
    events = shown.timeline.last_record.events
    kinds = [type(e) for e in events]
    released_at, join_at = kinds.index(Released), kinds.index(Coalesce)
    rel, join = events[released_at], events[join_at]
    model.set_event(released_at)
    assert contains(hm.released_item.path(), rel.addr, rb())
    assert codes_of(hm, rel.addr, rel.size) == {palette.FREE}
    model.set_event(join_at)
    rects = [p.boundingRect() for p in hm.released_item.path().toSubpathPolygons()]
    joined = QRectF(join.low_addr % rb(), join.low_addr // rb(), join.size, 1)
    if join.low_addr % rb() + join.size <= rb():
        assert joined in rects
    assert join.low_addr in {int(a) for a in hm.blocks.addr} and join.high_addr not in set(hm.blocks.addr.tolist())


@pytest.mark.parametrize("strategy", ["next-fit", "splay-best-fit", "buddy", "tlsf", "bsd-buckets"])
def test_the_last_event_looks_like_the_whole_step(qtbot, replay_trace, strategy):
    # every frame of a step can be drawn; the last one is the whole step with
    # its event ringed, and going back to the whole step is the same picture
    shown = Shown(qtbot, replay_trace, strategy)
    model, hm = shown.model, shown.map
    items = ("searched_item", "placed_item", "released_item", "cut_item", "grown_item")
    for t in (1, 40, 77, 150):
        model.seek(t)
        whole = plot_image(hm)
        cells = hm.image.copy()
        marks = {name: getattr(hm, name).path() for name in items}
        events = shown.timeline.last_record.events
        for i in range(len(events)):
            model.set_event(i)
        assert np.array_equal(hm.image, cells), f"step {t}"
        assert {name: getattr(hm, name).path() for name in items} == marks, f"step {t}"
        assert not hm.current_item.path().isEmpty() or not events[-1:] or \
            not any(hm.blocks.index_at(a) >= 0 for a in hm.marks.current)
        model.set_event(None)
        assert plot_image(hm) == whole, f"step {t}"


def test_a_transition_fades_the_event_in_and_stops(qtbot):
    shown = Shown(qtbot, kr_steps(), "next-fit")
    model, hm = shown.model, shown.map
    model.seek(5)
    events = shown.timeline.last_record.events
    placed_at = next(i for i, e in enumerate(events) if isinstance(e, Placed))
    model.transition_ms = 150
    model.set_event(placed_at)
    assert hm.animating() and hm.placed_item.opacity() < 1
    qtbot.waitUntil(lambda: not hm.animating(), timeout=3000)
    assert hm.placed_item.opacity() == 1 and hm.current_item.opacity() == 1
    # a new event while one runs: the old one ends at once
    model.set_event(placed_at - 1)
    model.set_event(None)
    assert not hm.animating() and hm.placed_item.opacity() == 1
    model.transition_ms = 0
    model.set_event(placed_at)
    assert not hm.animating()
    # an exporter steps a transition itself, the same frames every run
    model.set_event(None)
    hm.manual_transitions = True
    hm.set_current_event(placed_at, 200)
    assert hm.animating() and hm.placed_item.opacity() == 0
    hm.seek_transition(50)
    assert hm.placed_item.opacity() == pytest.approx(0.25)
    hm.seek_transition(200)
    assert not hm.animating() and hm.placed_item.opacity() == 1


# ----------------------------------------------- edited image == rebuilt one
@pytest.mark.parametrize("strategy", ["next-fit", "splay-best-fit", "tlsf", "bsd-buckets"])
def test_the_edited_image_equals_a_rebuild_over_a_random_walk(qtbot, strategy):
    trace = traces.make_workload("vo1989", steps=1500, seed=2)
    shown = Shown(qtbot, trace, strategy)
    model, hm = shown.model, shown.map
    rng = random.Random(4)
    for _ in range(pick(100, 250)):
        r = rng.random()
        target = (model.position + 1 if r < 0.6 else model.position - 1 if r < 0.8
                  else model.position + rng.randint(2, 60) if r < 0.9 else rng.randint(0, shown.timeline.n))
        model.seek(target)
        walked = TrackedHeap.walk(shown.strategy)
        image, _ = heap_cells.heap_image(walked.blocks, layout=hm.layout_)
        assert np.array_equal(hm.image, image), f"step {model.position}"
        # and the blocks it hovers, selects and separates are the walk's
        for column in ("addr", "size", "state", "payload", "request", "header"):
            assert np.array_equal(getattr(hm.blocks, column), getattr(walked.blocks, column))
    tracker = model._trackers[model.shown[0]]
    assert tracker.edits + tracker.undos > tracker.walks
    # most images were painted again only where the step changed the heap
    assert hm.partial_paints > hm.full_paints
