"""Compare mode: several strategies side by side at one step, in lockstep;
one address scale; the current request highlighted in every row; a live
ranking equal to the core's measures; timelines built once, in parallel,
cancellable with no process left behind; user strategies included."""

import math
import pathlib
import random

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialogButtonBox

from heapscope import traces
from heapscope.allocators import plugins
from heapscope.allocators.metrics import summarize
from heapscope.allocators.registry import make_strategy
from heapscope.allocators.replay import Program, Timeline, replay_ops
from heapscope.gui import heap_cells
from heapscope.gui.compare_dialog import CompareDialog
from heapscope.gui.compare_mode import CompareError, check_names
from heapscope.allocators.heap_edits import TrackedHeap
from heapscope.gui.step_animator import MAX_ANIMATED_SPEED, plan
from heapscope.gui.step_marks import step_marks
from heapscope.gui.structure_views import view_for
from heapscope.gui.ranking import MEASURES, RunningSummary, ranked
from heapscope.traces.trace import ALLOC, FREE

from tests.depth import pick

from .conftest import wait_loaded
from .shared_compare import SharedCompare

ROOT = pathlib.Path(__file__).resolve().parents[2]
THREE = ["next-fit", "tlsf", "buddy"]


def compare(qtbot, window, names, timeout=60000):
    """Enter compare mode with ``names`` and wait until the rows show."""
    with qtbot.waitSignal(window.compare.changed, timeout=timeout):
        window.compare.compare(names)
    assert window.compare.active and not window.busy
    return window.compare.view.shown_rows()


def strategy_at(trace, name: str, t: int, params=None):
    """Strategy ``name`` after the first ``t`` operations of ``trace``,
    replayed here from scratch (not through any timeline)."""
    strategy = make_strategy(name, **(params or {}))
    replay_ops(strategy, Program(), trace.kind[:t].tolist(), trace.ids[:t].tolist(),
               trace.sizes[:t].tolist())
    return strategy


def walk_at(trace, name: str, t: int, params=None) -> list:
    """Strategy ``name``'s blocks after the first ``t`` operations of ``trace``."""
    return [(b[0], b[1]) for b in strategy_at(trace, name, t, params).walk_tuples()]


def _sized_like(view, row) -> None:
    """A fresh structure view at the size and zoom of ``row``'s (what a view
    folds or leaves out for room depends on both)."""
    view.set_zoom_factor(row.structure.view.zoom_factor)
    view.resize(row.structure.view.size())


def drawn_blocks(row) -> list:
    b = row.map.blocks
    return list(zip(b.addr.tolist(), b.size.tolist()))


@pytest.fixture(scope="module")
def _shared_compare(qapp):
    shared = SharedCompare(THREE)
    yield shared
    shared.drop()


@pytest.fixture
def compared(request, qtbot, _shared_compare, tmp_path_factory):
    """The window showing the small trace through next fit, TLSF and buddy:
    one window a module, reset before each test and checked equal to a new
    one (tests/gui/shared_compare.py)."""
    shared = _shared_compare
    if shared.window is None:
        folder = tmp_path_factory.mktemp("compared")
        path = folder / "small.rep"
        traces.write_rep(request.getfixturevalue("small_trace"), path)
        shared.trace_path, shared.folder = str(path), folder
    w = shared.take(qtbot, shared.trace_path, shared.folder, compare, request.node.name)
    yield w
    report = getattr(request.node, "report_call", None)
    shared.give_back(failed=report is None or report.failed)


# -------------------------------------------------------------- the rows
def test_each_row_shows_its_own_strategy_at_the_same_step(qtbot, compared):
    w = compared
    rows = w.compare.view.shown_rows()
    assert [r.name.text() for r in rows] == THREE
    assert len(w.compare.view.rows_split.sizes()) >= 3
    w.seek(250)
    for _ in range(3):
        qtbot.keyClick(w, Qt.Key_Right)
    qtbot.keyClick(w, Qt.Key_Left)
    for t in (w.model.position, 400, 17, 499):
        if t != w.model.position:
            w.seek(t)
        assert w.model.position == t == int(w.bar.step_box.value())
        for row, name in zip(rows, THREE):
            assert row.map.model.step(row.row).strategy_name == name
            assert drawn_blocks(row) == walk_at(w.trace, name, t), (name, t)
            # the line under its map says what its strategy did with the request
            if t:
                assert row.map.outcome and row.map.info.text().startswith(row.map.outcome)
            # its gauges are its own strategy's measures at that step
            m = row.gauges.model.step(row.row).measures_row
            assert row.gauges.texts()["search"].startswith(f"{m['search']} · mean ")
    # the heaps differ: the rows really show different strategies
    assert drawn_blocks(rows[0]) != drawn_blocks(rows[1]) != drawn_blocks(rows[2])
    # the bar says the request, the same for every row
    kind, ident, size = w.trace.kind[498], w.trace.ids[498], w.trace.sizes[498]
    assert w.bar.description.text().startswith(f"step 499: ")
    assert f"id {ident}" in w.bar.description.text()


def test_the_shared_compare_window_is_reset_or_replaced(qtbot, compared, _shared_compare):
    """tests/gui/shared_compare.py: a compare window moved to another step,
    zoomed, with a block selected, the table ranked by another measure and
    the player's speed changed is reset to a state equal to the one it had
    when new; what the reset does not undo (the find panel's status line) makes
    the next test get a new window.  (On the module's shared compare window:
    a SharedCompare of the test's own made two more windows, issue 20; it
    comes second in the module, so that the window it takes is one the
    first test left as the reset can take it back.)"""
    from heapscope.gui.ranking import MEASURES
    shared, w = _shared_compare, compared
    made, replaced = shared.made, len(shared.replaced)
    assert made >= 1 and w.compare.active and w is shared.window
    w.seek(321)
    rows = w.compare.view.shown_rows()
    rows[1].select(drawn_blocks(rows[1])[0][0])
    w.compare.view.table.rank_by = MEASURES[-1].key
    w.player.set_speed(200)
    rows[0].map.vb.setRange(xRange=(0, 100), yRange=(0, 2), padding=0)
    shared.give_back(failed=False)
    again = shared.take(qtbot, shared.trace_path, shared.folder, compare)
    assert again is w                                                      # reset, not replaced
    assert shared.made == made and len(shared.replaced) == replaced and w.model.position == shared.position
    w.finder.panel.say("A status line left behind")     # (the widgets are listed sorted by their text)
    shared.give_back(failed=False)
    assert shared.take(qtbot, shared.trace_path, shared.folder, compare) is not w
    assert shared.made == made + 1 and len(shared.replaced) == replaced + 1
    assert "A status line left behind" in shared.replaced[-1]


def test_playing_moves_every_row_in_lockstep(qtbot, compared):
    w = compared
    w.seek(100)
    w.player.set_speed(200)
    w.toggle_play()
    qtbot.waitUntil(lambda: w.model.position >= 160, timeout=10000)
    w.toggle_play()
    t = w.model.position
    qtbot.wait(200)     # throttled views catch up with the last step
    for row in w.compare.view.shown_rows():
        name = row.name.text()
        assert drawn_blocks(row) == walk_at(w.trace, name, t)
        assert row.map.model.step(row.row).position == t


def test_every_row_is_drawn_at_one_address_scale(qtbot, compared):
    w = compared
    w.seek(300)
    qtbot.wait(50)
    rows = w.compare.view.shown_rows()
    layouts = {r.map.layout_ for r in rows}
    assert len(layouts) == 1
    lay = layouts.pop()
    heaps = [r.map.blocks.brk for r in rows]
    # the scale covers the biggest heap, and a bigger heap paints more cells
    assert lay.rows == -(-max(heaps) // lay.row_bytes)
    painted = [int(np.count_nonzero(r.map.image != heap_cells.palette.BEYOND)) for r in rows]
    cells = [-(-h // lay.bytes_per_cell) for h in heaps]
    for p, c in zip(painted, cells):
        assert abs(p - c) <= 1
    order = np.argsort(heaps)
    assert list(np.argsort(painted, kind="stable")) == list(order) or len(set(heaps)) < 3
    # zooming one map zooms them all
    rows[1].map.vb.setRange(xRange=(0, lay.row_bytes / 4), yRange=(0, 2), padding=0)
    rows[1].map.vb.sigRangeChangedManually.emit(rows[1].map.vb.state["mouseEnabled"])
    ranges = [r.map.vb.viewRange() for r in rows]
    assert all(np.allclose(r, ranges[1]) for r in ranges)
    w.step_forward()
    assert all(np.allclose(r.map.vb.viewRange(), ranges[1]) for r in rows)  # zoom kept while stepping
    w.heap_map_fit()
    assert rows[0].map.vb.viewRange()[0][1] == pytest.approx(lay.row_bytes, rel=0.02)


def test_the_current_request_is_highlighted_in_every_row(qtbot, compared):
    w = compared
    trace = w.trace
    kinds = trace.kind.tolist()
    malloc_step = next(t for t in range(200, 500) if kinds[t - 1] == ALLOC)
    free_step = next(t for t in range(200, 500) if kinds[t - 1] == FREE)
    for t in (malloc_step, free_step):
        w.seek(t)
        ident = int(trace.ids[t - 1])
        for row in w.compare.view.shown_rows():
            step = row.map.model.step(row.row)
            tl = step.timeline
            payload = int(tl.series.payload[t - 1])
            walk = walk_at(trace, row.name.text(), t)
            # the block drawn round is the one holding the request's bytes in this heap
            addr, size = row.map.request_range()
            assert (addr, size) in walk and addr <= payload < addr + size
            assert row.map.request_id == ident
            assert row.map.request_label.isVisible()
            if kinds[t - 1] == ALLOC:
                # the same trace id lives in that block in this strategy's heap
                assert tl.program.id_of_payload()[payload] == ident
                assert row.map.request_item.pen().color().name().lower() == "#d55e00"
            else:
                assert row.map.request_item.pen().color().name().lower() == "#000000"
    # a request that is not there (step 0) is not outlined
    w.seek(0)
    assert all(r.map.request_range() is None for r in w.compare.view.shown_rows())


def test_a_failed_request_outlines_nothing(qtbot, window, small_trace):
    w = window
    w.params = {"heap_limit": 20000}
    wait_loaded(qtbot, w, lambda: w.load_trace(small_trace))
    compare(qtbot, w, ["next-fit", "bsd-buckets"])
    failed = np.flatnonzero(w.model.timeline(1).series.failed)
    assert len(failed)
    t = int(failed[0]) + 1
    w.seek(t)
    row = w.compare.view.shown_rows()[1]
    assert row.map.request_range() is None and not row.map.request_label.isVisible()
    assert "NULL" in row.map.outcome


# ------------------------------------------------------------- the table
def test_running_summary_equals_summarize_of_every_prefix(small_trace):
    for name in ("next-fit", "buddy", "tlsf"):
        tl = Timeline(small_trace, name, {"heap_limit": 30000}).build()
        running = RunningSummary(tl.series)
        assert running.at(0) == summarize(tl.series.prefix(0)) == {"ops": 0}
        for t in list(range(1, 60)) + list(range(60, tl.n + 1, 37)) + [tl.n]:
            expected = summarize(tl.series.prefix(t))
            got = running.at(t)
            for key, value in got.items():
                e = expected[key]
                assert value == e or (math.isnan(value) and math.isnan(e)), (name, t, key)


def test_the_ranking_table_equals_the_core_measures(qtbot, compared):
    w = compared
    table = w.compare.view.table
    for t in (1, 120, 333, 500):
        w.seek(t)
        expected = {name: summarize(w.model.timeline(r).series.prefix(t))
                    for r, name in enumerate(THREE)}
        for key in ("waste", "utilisation", "search_mean", "work_per_op"):
            table.set_rank_by(key)
            shown = table.shown_rows()
            order = [r["strategy"] for r in shown]
            measure = next(m for m in MEASURES if m.key == key)
            values = [expected[n][key] for n in order]
            # best first, as the core's numbers say
            assert values == sorted(values, reverse=not measure.smaller_is_better), (t, key)
            assert order == ranked(expected, key)
            for r in shown:
                for m in MEASURES:
                    assert r[m.key] == m.text(expected[r["strategy"]].get(m.key, 0)), (t, m.key)
            assert [r["rank"] for r in shown] == ["1", "2", "3"]
            # each row's badge says its rank
            badges = {row.name.text(): row.rank.text() for row in w.compare.view.shown_rows()}
            assert badges == {r["strategy"]: r["rank"] for r in shown}
    assert table.title.text().endswith("up to step 500")


def test_a_heading_click_ranks_by_that_measure(qtbot, compared):
    w = compared
    w.seek(400)
    table = w.compare.view.table
    header = table.table.horizontalHeader()
    col = 2 + [m.key for m in MEASURES].index("search_mean")
    header.sectionClicked.emit(col)
    assert table.rank_by == "search_mean"
    means = [float(r["search_mean"]) for r in table.shown_rows()]
    assert means == sorted(means)
    assert table.title.text().startswith("Ranked by search (lower is better)")


def test_jumps_back_and_forth_resize_nothing(qtbot, compared):
    """The table's columns only grow while the same rows show: once each
    step was seen, jumping among them resizes neither the table nor any
    row's map (a table a few pixels narrower resized all the maps, which
    then laid out and drew again); no value is ever cut."""
    w = compared
    view = w.compare.view
    table = view.table.table
    steps = [1, 499, 37, 250, 120, 480, 3, 333]
    for t in steps:
        w.seek(t)
        qtbot.wait(1)
    widths = [table.columnWidth(c) for c in range(table.columnCount())]
    maps = [row.map.size() for row in view.shown_rows()]
    for t in reversed(steps + steps[::2]):
        w.seek(t)
        qtbot.wait(1)
        assert [table.columnWidth(c) for c in range(table.columnCount())] == widths, t
        assert [row.map.size() for row in view.shown_rows()] == maps, t
        for c in range(table.columnCount()):
            if not table.isColumnHidden(c):
                assert table.columnWidth(c) >= table.sizeHintForColumn(c), (t, c)


# ---------------------------------------------------- built once, in parallel
def test_switching_strategies_after_a_build_replays_nothing(qtbot, loaded, monkeypatch):
    w = loaded
    builds = []
    original = Timeline.build

    def counted(self, *args, **kwargs):
        builds.append(self.strategy_name)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(Timeline, "build", counted)
    w.seek(321)
    compare(qtbot, w, THREE)
    # next fit was built already; the other two were built in worker processes
    assert w.compare.loader.builds_started == 2
    assert builds == []
    parallel_builds = w.compare.loader.builds_started
    for act in (lambda: w.compare.toggle(),                  # leave compare mode
                lambda: w.set_strategy("tlsf"),
                lambda: w.set_strategy("buddy"),
                lambda: w.set_strategy("next-fit"),
                lambda: w.compare.toggle(),                  # compare again
                lambda: w.compare.compare(["tlsf", "buddy"]),
                lambda: w.set_strategy("tlsf"),
                lambda: w.compare.compare(THREE)):
        act()
        assert not w.busy                                    # shown at once, nothing loading
        assert w.model.position == 321                       # the step is kept
    assert builds == [] and w.compare.loader.builds_started == parallel_builds
    assert w.compare.active and [r.name.text() for r in w.compare.view.shown_rows()] == THREE
    # and a strategy not built yet is built alone
    compare(qtbot, w, THREE + ["bsd-buckets"])
    assert w.compare.loader.builds_started == parallel_builds + 1


def test_toggling_compare_mode_keeps_the_position_and_the_views(qtbot, compared):
    w = compared
    w.seek(222)
    qtbot.keyClick(w, Qt.Key_C)                  # back to one strategy
    assert not w.compare.active and w.pages.currentIndex() == 0
    assert w.model.shown == [w.model.shown[0]] and w.timeline.position == 222
    assert w.heap_map.model is w.model and w.compare.view.model is None
    assert drawn_blocks_map(w.heap_map) == walk_at(w.trace, w.strategy_name, 222)
    qtbot.keyClick(w, Qt.Key_Right)
    qtbot.keyClick(w, Qt.Key_C)                  # and compare again
    assert w.compare.active and w.pages.currentWidget() is w.compare.view
    assert w.heap_map.model is None              # the hidden page costs nothing
    assert w.model.position == 223
    assert [drawn_blocks(r) for r in w.compare.view.shown_rows()] == \
        [walk_at(w.trace, n, 223) for n in THREE]
    # picking one strategy leaves compare mode for it, at the same step
    w.set_strategy("buddy")
    assert not w.compare.active and w.timeline.strategy_name == "buddy" and w.timeline.position == 223


def drawn_blocks_map(heap_map) -> list:
    return list(zip(heap_map.blocks.addr.tolist(), heap_map.blocks.size.tolist()))


def test_structure_views_open_and_close_per_row(qtbot, compared):
    w = compared
    rows = w.compare.view.shown_rows()
    assert not any(r.structure_visible() for r in rows)     # three rows: maps first
    rows[1].structure_button.click()
    assert [r.structure_visible() for r in rows] == [False, True, False]
    qtbot.wait(50)
    sizes = w.compare.view.rows_split.sizes()[:3]
    assert sizes[1] > sizes[0] and sizes[1] > sizes[2]       # the open row is taller
    w.seek(300)
    qtbot.wait(50)
    view = rows[1].structure.view
    assert view is not None and rows[0].structure.view is None   # closed rows draw nothing
    structure = w.model.step(1).structure
    assert structure["kind"] == "tlsf" and view.drawn()
    # the open row's map is narrower and taller, yet drawn at the others' scale
    shapes = {(round(r.map.vb.sceneBoundingRect().width()), round(r.map.vb.sceneBoundingRect().height()))
              for r in rows}
    assert len(shapes) > 1
    assert len({r.map.layout_ for r in rows}) == 1
    qtbot.keyClick(w, Qt.Key_S)                              # S: every row's structure
    assert not any(r.structure_visible() for r in rows)
    qtbot.keyClick(w, Qt.Key_S)
    # every row's, unless the rows are too short for all (then the one chosen last)
    from heapscope.gui.compare_view import STRUCTURE_ROW_PX
    alone = w.compare.view.rows_scroll.viewport().height() < STRUCTURE_ROW_PX * 3
    assert [r.structure_visible() for r in rows] == ([False, True, False] if alone else [True] * 3)


def test_seven_rows_at_720_open_one_structure_view_at_a_time(qtbot, loaded):
    """Issue 24: with seven rows at 1280 x 720 every row's structure view
    showed its caption and no drawing (about 75 px each), and the first S
    did nothing (the toggle was still on from the single view).  The first S
    opens the first row's view alone, with room for its drawing (the rows
    scroll to it); a row's ▸ opens its own and closes the other; S closes it."""
    from PySide6.QtCore import QPoint, QRect
    from heapscope.gui.compare_view import RowStructurePanel
    from .test_presenter import at_size
    w = loaded
    at_size(qtbot, w, 1280, 720)
    rows = compare(qtbot, w, SEVEN_NEWER)
    w.seek(300)
    assert not any(r.structure_visible() for r in rows)
    qtbot.keyClick(w, Qt.Key_S)
    qtbot.wait(30)
    assert [r.structure_visible() for r in rows] == [True] + [False] * 6
    rows[4].structure_button.click()
    qtbot.wait(30)
    assert [r.structure_visible() for r in rows] == [False] * 4 + [True, False, False]
    view = rows[4].structure.view
    drawing = getattr(view, "graphics", None) or view.canvas
    assert drawing.height() >= RowStructurePanel.MIN_DRAWING_PX
    # the drawing is on screen: inside the rows' scrolled viewport
    port = w.compare.view.rows_scroll.viewport()
    shown = QRect(drawing.mapTo(port, QPoint(0, 0)), drawing.size()).intersected(port.rect())
    assert shown.height() >= RowStructurePanel.MIN_DRAWING_PX * 0.9, shown
    qtbot.keyClick(w, Qt.Key_S)
    assert not any(r.structure_visible() for r in rows)


def test_a_click_selects_in_its_own_row_only(qtbot, compared):
    w = compared
    w.seek(200)
    rows = w.compare.view.shown_rows()
    b = rows[0].map.blocks
    addr = int(b.addr[len(b) // 2])
    rows[0].map.block_clicked.emit(addr)
    assert rows[0].map.selected == addr
    assert rows[1].map.selected is None and rows[2].map.selected is None
    assert w.model.selection is None


def test_a_cancelled_parallel_build_leaves_no_process_behind(qtbot, window, monkeypatch):
    # behind the build dialog (a trace this long otherwise shows its rows as
    # each is built: tests/gui/test_background_build.py)
    from heapscope.gui import background_build
    monkeypatch.setattr(background_build, "BACKGROUND_FROM_OPS", 10 ** 12)
    w = window
    trace = traces.make_workload("vo1989", steps=60000, seed=5)
    quick = Timeline(trace, "bsd-buckets").build()
    w.model.set_trace(trace, None, "long")
    key = w.model.add_timeline(quick)
    w.strategy_name = "bsd-buckets"
    w._show("bsd-buckets", key, 1000)
    loader = w.compare.loader
    w.compare.compare(["bsd-buckets", "next-fit", "first-fit", "rotating-list"])
    assert loader.busy and not w.compare.active
    qtbot.waitUntil(lambda: loader.build is not None and any(
        done > 0 for done, _ in loader.build.progress.values()), timeout=30000)
    qtbot.waitUntil(lambda: loader.dialog is not None and loader.dialog.isVisible(), timeout=5000)
    pids = list(loader.started_pids)
    assert len(pids) == 3 and all(_alive(pid) for pid in pids)
    # the dialog shows a bar per strategy; its Cancel stops them all
    assert sorted(loader.dialog.bars) == ["first-fit", "next-fit", "rotating-list"]
    loader.dialog.findChild(QDialogButtonBox).button(QDialogButtonBox.Cancel).click()
    assert not loader.busy and not w.busy
    assert not any(_alive(pid) for pid in pids)
    import multiprocessing
    assert multiprocessing.active_children() == []
    # the window still shows what it showed
    assert not w.compare.active and w.model.shown == [key] and w.model.position == 1000
    assert w.model.timeline_for("next-fit") is None


def _alive(pid: int) -> bool:
    """The process exists and is not a zombie waiting to be reaped."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_a_new_trace_in_compare_mode_is_built_for_every_row(qtbot, compared, small_trace_path, tmp_path):
    w = compared
    other = traces.make_workload("vo1989", steps=300, seed=4)
    path = tmp_path / "other.rep"
    traces.write_rep(other, path)
    before = w.compare.loader.builds_started
    with qtbot.waitSignal(w.compare.changed, timeout=60000):
        w.open_trace(str(path), position=100)
    assert w.compare.loader.builds_started == before + 3
    assert w.trace_source == str(path) and w.model.position == 100
    for row, name in zip(w.compare.view.shown_rows(), THREE):
        assert drawn_blocks(row) == walk_at(other, name, 100)


def test_a_user_strategy_in_compare_mode(qtbot, small_trace_path):
    cls = plugins.load_file(f"{ROOT / 'examples' / 'segfit.py'}:SegFit")
    try:
        from heapscope.gui.main_window import MainWindow
        w = MainWindow()
        qtbot.addWidget(w)
        w.show()
        assert "segfit" in [w.strategy_box.itemData(i) for i in range(w.strategy_box.count())]
        dialog = CompareDialog(["segfit", "tlsf"], parent=w)
        assert dialog.chosen() == ["tlsf", "segfit"]            # in the Strategy menu's order
        wait_loaded(qtbot, w, lambda: w.open_trace(small_trace_path))
        compare(qtbot, w, dialog.chosen())
        rows = w.compare.view.shown_rows()
        w.seek(333)
        assert rows[1].name.text() == "segfit"
        assert drawn_blocks(rows[1]) == walk_at(w.trace, "segfit", 333)
        assert drawn_blocks(rows[0]) == walk_at(w.trace, "tlsf", 333)
        assert "segfit" in [r["strategy"] for r in w.compare.view.table.shown_rows()]
        w.compare.loader.cancel()
        w.close()
    finally:
        plugins.forget(cls.name)


# ------------------------------------------------------ choosing strategies
def test_the_dialog_accepts_two_to_seven(qtbot, window):
    dialog = CompareDialog(["next-fit"], parent=window)
    ok = dialog.buttons.button(QDialogButtonBox.Ok)
    assert not ok.isEnabled() and "tick 2 to 7" in dialog.hint.text()
    dialog.set_chosen(["next-fit", "tlsf"])
    assert ok.isEnabled()
    names = [dialog.list.item(i).data(Qt.UserRole) for i in range(dialog.list.count())]
    dialog.set_chosen(names[:8])
    assert not ok.isEnabled()
    dialog.set_chosen(names[:7])
    assert ok.isEnabled() and dialog.chosen() == names[:7]


def test_names_are_checked():
    assert check_names(["tlsf", "buddy", "tlsf"]) == ["tlsf", "buddy"]
    with pytest.raises(CompareError, match="2 to 7 strategies, not 1"):
        check_names(["tlsf"])
    with pytest.raises(CompareError, match="unknown strategy 'nope'"):
        check_names(["tlsf", "nope"])


def test_open_compare_on_the_command_line(qtbot, small_trace_path):
    from heapscope.cli import parse_window_request
    req = parse_window_request(["open", small_trace_path, "--compare", "tlsf,buddy", "--step", "40"])
    assert req.compare == ["tlsf", "buddy"] and req.step == 40
    req = parse_window_request(["open", small_trace_path, "-s", "tlsf", "-s", "next-fit"])
    assert req.compare == ["tlsf", "next-fit"] and req.strategy == "tlsf"
    req = parse_window_request(["open", small_trace_path, "-s", "tlsf"])
    assert req.compare is None and req.strategy == "tlsf"
    from heapscope.gui.app import make_window
    w = make_window(small_trace_path, params={}, compare=["tlsf", "buddy"], step=40)
    qtbot.addWidget(w)
    w.show()
    qtbot.waitUntil(lambda: w.compare.active and bool(w.compare.view.shown_rows())
                    and not w.compare.view.joining(), timeout=60000)
    assert w.model.position == 40
    assert [r.name.text() for r in w.compare.view.shown_rows()] == ["tlsf", "buddy"]
    w.compare.loader.cancel()
    w.loader.cancel()
    w.loader.wait()
    w.close()


# ------------------------------------------------ the rows' maps and views
def test_each_rows_map_paints_its_own_strategys_heap(qtbot, compared):
    """The image a row paints (edited cell by cell as it steps, laid out at
    the shared scale) is its own strategy's heap at the step, as a picture
    rebuilt from a fresh walk would be."""
    w = compared
    rows = w.compare.view.shown_rows()
    w.seek(150)
    rng = random.Random(3)
    for _ in range(pick(20, 40)):        # the quick suite: the first 20 of the 40 steps
        r = rng.random()
        p = w.model.position
        w.seek(p + 1 if r < 0.6 else p - 1 if r < 0.8 else rng.randrange(0, w.model.n + 1))
        for row in rows:
            walked = TrackedHeap.walk(strategy_at(w.trace, row.name.text(), w.model.position))
            image, _ = heap_cells.heap_image(walked.blocks, layout=row.map.layout_)
            assert np.array_equal(row.map.image, image), (row.name.text(), w.model.position)
            assert [(p.name, p.addr) for p in row.map.heap.pointers] == \
                [(p.name, p.addr) for p in walked.pointers]
    # the rows were edited, not rebuilt, on most steps
    assert all(row.map.partial_paints > 0 for row in rows)


def test_each_rows_structure_view_draws_its_own_strategy(qtbot, compared):
    w = compared
    w.compare.view.set_structures_visible(True)
    w.seek(310)
    qtbot.wait(50)
    kinds = set()
    for row in w.compare.view.shown_rows():
        step = row.structure.model.step(row.row)
        assert step.strategy_name == row.name.text()
        fresh = strategy_at(w.trace, row.name.text(), 310).structure()
        assert row.structure.kind == fresh["kind"]
        kinds.add(fresh["kind"])
        # the same drawing a structure view of that step alone makes
        view = view_for(fresh["kind"])()
        qtbot.addWidget(view)
        _sized_like(view, row)
        view.show()
        view.set_states(step.structure_at)
        view.show_step(step.structure, step.explained, step.record)
        assert row.structure.view.drawn() == view.drawn(), row.name.text()
        view.close()
    assert len(kinds) == 3


def _uneven_step(w, lo=100):
    """A step from ``lo`` whose rows have different numbers of events, the
    fewest at least 2; the rows' counts."""
    for t in range(lo, w.model.n):
        w.seek(t)
        counts = [w.model.step(r).event_count for r in range(len(w.model.shown))]
        if min(counts) >= 2 and len(set(counts)) == len(counts):
            return t, counts
    raise AssertionError("no step with uneven events")


def test_micro_steps_move_every_row_one_event_of_its_own_step(qtbot, compared):
    """Shift+Right moves every row one event at once; a row whose step has
    fewer events than the longest holds its last; the request's outline
    shows in a row once its step is complete; past the longest the next
    step begins in every row."""
    w = compared
    rows = w.compare.view.shown_rows()
    t, counts = _uneven_step(w)
    longest = max(counts)
    w.compare.view.set_structures_visible(True)
    w.seek(t - 1)
    for k in range(longest):
        qtbot.keyClick(w, Qt.Key_Right, Qt.ShiftModifier)
        w.animator.finish()
        assert (w.model.position, w.model.event_index) == (t, k)
        assert w.bar.event_text() == f"event {k + 1} of {longest}"
        for row, n in zip(rows, counts):
            own = min(k, n - 1)
            step = row.map.model.step(row.row)
            assert row.map.event_index == own, (row.name.text(), k)
            # the marks of its own events so far, and the structure after its own event
            expected = step_marks(step.record, own)
            assert row.map.marks.visits == expected.visits and row.map.marks.cuts == expected.cuts
            assert row.structure.view.drawn() == _drawn_at(qtbot, row, step, own)
            whole = own == n - 1
            assert (row.map.request_range() is not None) == (whole and step.record.payload is not None)
            # what the step did is said once the row shows all of it
            assert row.map.info.text().startswith(row.map.outcome) == whole
    qtbot.keyClick(w, Qt.Key_Right, Qt.ShiftModifier)
    w.animator.finish()
    assert (w.model.position, w.model.event_index) == (t + 1, 0)
    # and back: Shift+Left from the next step's first event lands on each row's last
    qtbot.keyClick(w, Qt.Key_Left, Qt.ShiftModifier)
    assert (w.model.position, w.model.event_index) == (t, longest - 1)
    assert [row.map.event_index for row in rows] == [n - 1 for n in counts]


def _drawn_at(qtbot, row, step, index):
    view = view_for(row.structure.kind)()
    qtbot.addWidget(view)
    _sized_like(view, row)
    view.show()
    view.set_states(step.structure_at)
    view.show_step(step.structure, step.explained, step.record)
    view.set_current_event(index)
    drawn = view.drawn()
    view.close()
    return drawn


def test_an_animated_step_plays_every_row_in_lockstep(qtbot, compared):
    """At a slow speed a step forward plays the longest row's script; at each
    event every row shows its own event of that index (or its last), and
    all end on the whole step."""
    w = compared
    rows = w.compare.view.shown_rows()
    t, counts = _uneven_step(w, 140)
    w.seek(t)
    longest_events = max((w.model.step(r).record.events for r in range(3)), key=len)
    w.seek(t - 1)
    w.player.set_speed(MAX_ANIMATED_SPEED)
    seen = []

    def note(i):
        seen.append((i, [row.map.event_index for row in rows]))
    w.model.event_changed.connect(note)
    qtbot.keyClick(w, Qt.Key_Right)
    assert w.animator.running and w.model.position == t
    qtbot.waitUntil(lambda: not w.animator.running, timeout=20000)
    # (no slot of the test's left behind: the shared window is kept for
    # the next test)
    w.model.event_changed.disconnect(note)
    script = [i for i, _ in plan(longest_events, MAX_ANIMATED_SPEED)]
    assert [i for i, _ in seen] == script + [None]
    for i, shown in seen[:-1]:
        assert shown == [min(i, n - 1) for n in counts]
    assert seen[-1][1] == [None, None, None]
    for row in rows:
        assert drawn_blocks(row) == walk_at(w.trace, row.name.text(), t)
        assert row.map.request_range() is not None


SEVEN_NEWER = ["dlmalloc", "segregated-first-fit", "v7-malloc", "gnu-malloc", "phkmalloc",
               "first-fit", "splay-best-fit"]


def test_seven_rows_each_show_their_strategy(qtbot, loaded):
    w = loaded
    w.seek(260)
    rows = compare(qtbot, w, SEVEN_NEWER)
    assert [r.name.text() for r in rows] == SEVEN_NEWER
    for t in (261, 262, 400, 120):
        if t == w.model.position + 1:
            w.step_forward()
            w.animator.finish()
        else:
            w.seek(t)
        for row in rows:
            assert drawn_blocks(row) == walk_at(w.trace, row.name.text(), t), (row.name.text(), t)
            if w.trace.kind[t - 1] == ALLOC:
                assert row.map.request_id == int(w.trace.ids[t - 1])
    assert len({r.map.layout_ for r in rows}) == 1


def test_bump_from_the_command_line_in_compare_mode(qtbot, small_trace_path):
    """Issue 12's ``--allocator examples/bump.py`` beside a built-in: built in
    a worker process from its file, drawn at the shared scale."""
    from heapscope.cli import parse_window_request
    from heapscope.gui.app import make_window
    bump = f"{ROOT / 'examples' / 'bump.py'}:Bump"
    req = parse_window_request(["open", small_trace_path, "--allocator", bump,
                                "--compare", "bump,tlsf", "--step", "300"])
    try:
        assert req.compare == ["bump", "tlsf"]
        w = make_window(req.trace, req.strategy, req.params, req.strategy_params, req.step, req.compare)
        qtbot.addWidget(w)
        w.show()
        qtbot.waitUntil(lambda: w.compare.active and bool(w.compare.view.shown_rows())
                        and not w.compare.view.joining(), timeout=60000)
        rows = w.compare.view.shown_rows()
        assert [r.name.text() for r in rows] == ["bump", "tlsf"] and w.model.position == 300
        for t in (301, 77, 500):
            w.seek(t)
            for row in rows:
                assert drawn_blocks(row) == walk_at(w.trace, row.name.text(), t)
        lay = rows[0].map.layout_
        biggest = max(r.map.blocks.brk for r in rows)
        assert lay == rows[1].map.layout_ and lay.rows == -(-biggest // lay.row_bytes)
        # bump never reuses a block: at the end its heap is the bigger one
        assert rows[0].map.blocks.brk > rows[1].map.blocks.brk
        assert "bump" in [r["strategy"] for r in w.compare.view.table.shown_rows()]
        w.compare.loader.cancel()
        w.loader.cancel()
        w.loader.wait()
        w.close()
    finally:
        plugins.forget("bump")


def test_the_search_numbers_keep_clear_of_the_request_label(qtbot, compared):
    """The request's label and a number on the same block (the block a
    search took is numbered too) do not cover each other: the number moves."""
    w = compared
    checked = 0
    # every malloc step from 300 to 420 (the quick suite: every other one)
    steps = [t for t in range(300, 420) if w.trace.kind[t - 1] == ALLOC][::pick(2, 1)]
    for t in steps:
        w.seek(t)
        for row in w.compare.view.shown_rows():
            m = row.map
            if not m.request_label.isVisible():
                continue
            label = _scene_rect(m.request_label)
            for number in m._order_labels:
                if number.isVisible():
                    checked += 1
                    rect = _scene_rect(number)
                    assert not rect.intersects(label), (row.name.text(), t, number.textItem.toPlainText())
    assert checked > pick(25, 50)


def _scene_rect(text_item):
    text_item.updateTransform()       # as its next paint would
    return text_item.mapRectToScene(text_item.boundingRect())


def test_open_compare_with_a_bad_list_says_so_and_exits_2(capsys, small_trace_path):
    from heapscope.cli import main
    eight = "next-fit,first-fit,rotating-list,splay-best-fit,buddy,tlsf,bsd-buckets,dlmalloc"
    # argparse refuses each list before any window opens (usage error, status 2)
    for given, said in (("tlsf", "'tlsf' names 1"), (eight, "names 8"), ("tlsf,nope", "nope")):
        with pytest.raises(SystemExit) as stop:
            main(["open", small_trace_path, "--compare", given])
        err = capsys.readouterr().err
        assert stop.value.code == 2 and said in err, (given, err)
        assert "compare mode shows 2 to 7 strategies" in err or given == "tlsf,nope"


def test_a_broken_trace_in_compare_mode_is_reported_and_the_rows_stay(qtbot, compared, tmp_path):
    w = compared
    w.seek(140)
    before = [drawn_blocks(r) for r in w.compare.view.shown_rows()]
    title = w.strategy_title.text()
    bad = tmp_path / "broken.rep"
    bad.write_text("0\n2\n3\n1\na 0 16\nf 0\nf 0\n")        # line 7 frees id 0 again
    with qtbot.waitSignal(w.load_failed, timeout=10000):
        w.open_trace(str(bad))
    box = w.message_box
    assert box.isVisible() and f"{bad}:7:" in box.text() + "\n" + box.informativeText()
    assert w.compare.active and not w.busy and w.model.position == 140
    assert [r.name.text() for r in w.compare.view.shown_rows()] == THREE
    assert [drawn_blocks(r) for r in w.compare.view.shown_rows()] == before
    assert w.strategy_title.text() == title          # still says what is compared
    box.close()


# ------------------------------------------------------------- predict mode
def test_predict_mode_asks_every_row_and_each_answers_on_its_own_map(qtbot, compared):
    """Issue 11's predict-the-block in compare mode: every row asks (its own
    band: "Which block will tlsf take?"), the rows show the heap before the
    malloc without the last step's marks or request, a click on a row's map
    answers for that row only, and the step plays once every row has
    answered, each marked in its own policy's words."""
    from heapscope.allocators.predict import GROW
    w = compared
    rows = w.compare.view.shown_rows()
    w.seek(150)
    w.set_predict(True)
    assert [s.row for s in w.predict.active_sessions()] == [0, 1, 2]
    w.step_forward()
    t = w.predict.pending
    assert t is not None and w.model.position == t - 1
    for row in rows:
        bar = row.predict_bar
        assert bar is not None and bar.isVisible()
        assert f"Which block will {row.name.text()} take?" in bar.question.full
        assert row.map.quiet and row.structure.quiet
        assert row.map.request_range() is None and not row.map.request_label.isVisible()
    assert not w.predict_bar.isVisible()              # the one-strategy band is not the rows'
    # each row answers with a free block of its own heap (or that its heap grows)
    for row in rows[:2]:
        s = w.predict.session(row.row)
        free = [b[0] for b in s.before.blocks if b[2] == "free" and b[1] > 8]
        if free:
            row.map.block_clicked.emit(free[0])
        else:
            row.predict_bar.grow_button.click()
        assert s.guess is not None
        assert w.model.position == t - 1                  # still waiting for the last row
    rows[2].predict_bar.grow_button.click()          # the last answer plays the step
    w.animator.finish()
    assert w.predict.session(2).last.guess == GROW
    assert w.model.position == t and w.predict.pending is None
    for row in rows:
        s = w.predict.session(row.row)
        assert s.last is not None and s.answered == 1
        assert not row.map.quiet and row.map.request_range() is not None
        assert row.predict_bar.verdict.full.startswith(("✓", "✗"))
        assert drawn_blocks(row) == walk_at(w.trace, row.name.text(), t)
    w.set_predict(False)
    assert not any(row.predict_bar.isVisible() for row in rows)


def test_every_change_of_the_row_set_rebinds_every_row(qtbot, loaded):
    """Issue 24: going from seven rows to next-fit, splay-best-fit, tlsf left
    row 1 named first-fit while its map and structure view drew splay.  After
    every change each row's name label, its map (the heap that strategy,
    replayed here from scratch, has), its structure view (the drawing a fresh
    view makes of that strategy's step) and its rank badge (the table's rank
    of that name) name one strategy."""
    w = loaded
    w.seek(300)
    # the quick suite: seven rows, the three, then another first row,
    # a row moved up and one new (issue 20)
    for names in pick([SEVEN_NEWER, ["next-fit", "splay-best-fit", "tlsf"],
                       ["buddy", "tlsf", "first-fit"]],
                      [SEVEN_NEWER, ["next-fit", "splay-best-fit", "tlsf"],
                       ["next-fit", "tlsf"], ["buddy", "next-fit", "first-fit"],
                       ["buddy", "tlsf", "first-fit"]]):
        rows = compare(qtbot, w, names)
        w.compare.view.set_structures_visible(True)
        qtbot.wait(20)
        assert [r.name.text() for r in rows] == names
        ranks = {r["strategy"]: r["rank"] for r in w.compare.view.table.shown_rows()}
        keys = [k[0] for k in w.model.shown]
        for row in rows:
            name = row.name.text()
            assert drawn_blocks(row) == walk_at(w.trace, name, 300), (names, name)
            assert row.rank.text() == ranks[name], (names, name)
            step = w.model.step(keys.index(name))
            view = view_for(step.structure["kind"])()
            qtbot.addWidget(view)
            _sized_like(view, row)
            view.show()
            view.show_step(step.structure, step.explained, step.record)
            # the same structure drawn; the words a view leaves out for room aside
            words = ("search_text", "list_lines")
            assert ({k: v for k, v in row.structure.view.drawn().items() if k not in words}
                    == {k: v for k, v in view.drawn().items() if k not in words}), (names, name)
            view.close()
