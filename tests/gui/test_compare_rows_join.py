"""Compare rows join the view one per turn of the event loop (issue 25).

Seven rows made and shown at once held the window's event loop 1.6-3.4 s
entering compare mode on gcc-cc1 (benchmarks/bench_stall.py): rows that
compare mode shows as they are built (gui/compare_rows.py) now join one per
turn (``CompareView._join_next``), each painted before the next is made, in
slots the splitter sized once.  These tests pin that, and that the rows end
as the rows shown at once end."""

import pytest
from PySide6.QtCore import QEvent, QObject

from heapscope.allocators.replay import Timeline

from .shared_window import destroy, make_window

NAMES = ["next-fit", "first-fit", "tlsf", "buddy"]
POSITION = 260


class PaintCount(QObject):
    """Counts the paint events of the widgets it filters."""

    def __init__(self) -> None:
        super().__init__()
        self.paints: dict[int, int] = {}

    def eventFilter(self, obj, event) -> bool:     # noqa: N802 (Qt's name)
        if event.type() == QEvent.Paint:
            self.paints[id(obj)] = self.paints.get(id(obj), 0) + 1
        return False


def _built(trace, names):
    timelines = []
    for name in names:
        tl = Timeline(trace, name, {})
        tl.build()
        timelines.append(tl)
    return timelines


def _state(w) -> dict:
    """What the compare rows show, in terms two windows can share."""
    view = w.compare.view
    rows = view.shown_rows()
    return {"names": [r.name.text() for r in rows],
            "ranks": [r.rank.text() for r in rows],
            "blocks": [list(zip(r.map.blocks.addr.tolist(), r.map.blocks.size.tolist())) for r in rows],
            "request": [r.map.request_range() for r in rows],
            "layout": [r.map.layout_ for r in rows],
            "structures": [r.structure_visible() for r in rows],
            "row heights": [r.height() for r in rows],
            "map sizes": [(r.map.width(), r.map.height()) for r in rows],
            "splitter": view.rows_split.sizes(),
            "widgets in splitter": view.rows_split.count(),
            "predict bars": [r.predict_bar is not None for r in rows],
            "scale note": view.scale_note.text()}


def _log_parts(monkeypatch):
    """Which parts of a row (CompareView._row_parts) and joins each turn of
    ``CompareView._join_next`` made: a list of lists, one a turn."""
    from heapscope.gui import compare_view
    from heapscope.gui.compare_view import CompareHeapMap, CompareRow, CompareView
    turns = []

    def logged(name, f):
        def g(*args, **kwargs):
            if turns:
                turns[-1].append(name)
            return f(*args, **kwargs)
        return g
    monkeypatch.setattr(compare_view, "new_map_plot", logged("plot", compare_view.new_map_plot))
    monkeypatch.setattr(CompareHeapMap, "__init__", logged("map", CompareHeapMap.__init__))
    monkeypatch.setattr(CompareRow, "__init__", logged("row", CompareRow.__init__))
    monkeypatch.setattr(CompareView, "_join", logged("join", CompareView._join))
    join_next = CompareView._join_next

    def one_turn(self):
        turns.append([])
        join_next(self)
    monkeypatch.setattr(CompareView, "_join_next", one_turn)
    return turns


@pytest.mark.fresh_window
def test_rows_join_one_per_turn_each_painted_first_and_end_as_rows_shown_at_once(qtbot, loaded, small_trace,
                                                                                monkeypatch):
    w = loaded
    turns = _log_parts(monkeypatch)
    w.resize(1280, 720)
    view = w.compare.view
    assert view.rows == []
    for tl in _built(w.trace, NAMES[1:]):
        w.model.add_timeline(tl)
    counter = PaintCount()
    joined = []        # at each row joining: (rows in the view, rows bound, earlier rows' maps painted)

    def on_join():
        rows = view.rows
        row = rows[-1]
        row.map.plot_widget.viewport().installEventFilter(counter)
        joined.append((len(rows), len(view.shown_rows()),
                       all(counter.paints.get(id(r.map.plot_widget.viewport()), 0) > 0 for r in rows[:-1])))
    view.row_joined.connect(on_join)
    with qtbot.waitSignal(w.compare.changed, timeout=30000):
        w.compare.show_rows(NAMES, POSITION)
        # the call itself makes at most one row (the old code made all four here)
        assert len(view.shown_rows()) <= 1
        assert view.joining()
    assert not view.joining()
    # one row a turn, each joining once the rows before it are bound and painted
    assert [n for n, _, _ in joined] == [1, 2, 3, 4]
    assert [b for _, b, _ in joined] == [0, 1, 2, 3]
    assert all(painted for _, _, painted in joined)
    # a row's widgets are made in parts, one a turn, and it joins in a turn of its own
    parts = [p for turn in turns for p in turn]
    assert parts == ["plot", "map", "row", "join"] * len(NAMES)
    assert all(len(turn) <= 1 for turn in turns)
    turns.clear()
    qtbot.wait(50)              # the rows' resize timers, as the reference's
    got = _state(w)

    # the same rows shown at once (compare mode's path for rows already built)
    ref = make_window(qtbot)
    try:
        ref.resize(1280, 720)
        ref.compare.show_timelines(w.trace, _built(w.trace, NAMES), POSITION)
        qtbot.waitUntil(lambda: ref.compare.view.rows_split.height() > 100, timeout=10000)
        qtbot.wait(50)
        assert ref.compare.view.joining() is False
        want = _state(ref)
    finally:
        destroy(ref)
    assert got == want
    assert got["widgets in splitter"] == len(NAMES)        # no empty slot left behind


@pytest.mark.fresh_window
def test_leaving_compare_mode_while_rows_join_stops_them(qtbot, loaded):
    w = loaded
    view = w.compare.view
    for tl in _built(w.trace, NAMES[1:]):
        w.model.add_timeline(tl)
    w.compare.show_rows(NAMES, POSITION)
    assert view.joining()
    w.compare.leave()
    qtbot.waitUntil(lambda: not view.joining(), timeout=10000)
    assert view.shown_rows() == []
    assert view.rows_split.count() == len(view.rows)       # the empty slots went with them
    assert not w.compare.active and w.model.position == POSITION
