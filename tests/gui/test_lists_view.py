"""The generic lists view: what it draws, read back from its items, equals the
structure it was given, for every kind, and it summarises long lists and many
lists and says so."""

import pytest
from PySide6.QtCore import Qt

from heapscope import traces
from heapscope.allocators.events import ListRemove, Visit
from heapscope.allocators.explain import ExplainedEvent, explain_step
from heapscope.allocators.registry import strategy_names
from heapscope.allocators.replay import Timeline
from heapscope.allocators.structure import make, members
from heapscope.gui.structure_views import view_for
from heapscope.gui.structure_views.lists_view import (BLOCK_BUDGET, list_marks, MAX_LISTS, PER_LIST_MAX,
                                                      ListsView, labelled_lists)


def shown_view(qtbot, cls):
    v = cls()
    v.resize(520, 600)
    qtbot.addWidget(v)
    v.show()
    qtbot.waitExposed(v)
    return v


@pytest.fixture
def view(qtbot):
    return shown_view(qtbot, ListsView)


@pytest.fixture
def bins_view(qtbot):
    """dlmalloc's bins: the lists view with the bin map and mmapped chunks (bins_view.py)."""
    from heapscope.gui.structure_views.bins_view import BinsView
    return shown_view(qtbot, BinsView)


def drawn_blocks(drawn) -> list[int]:
    return [a for lst in drawn["lists"] for a in lst["blocks"]]


def visit(i, addr, fits=False):
    return ExplainedEvent(i, Visit(addr, 32, fits), "", (addr,))


def test_it_is_the_view_of_the_lists_kind_and_of_kinds_without_one():
    assert view_for("lists") is ListsView
    assert view_for("a-kind-nobody-draws") is ListsView


@pytest.fixture(scope="module")
def replays():
    trace = traces.make_workload("vo1989", steps=600, seed=8)
    out = {}
    for name in strategy_names():
        tl = Timeline(trace, name).build()
        tl.seek(700)
        out[name] = (tl.strategy.structure(), explain_step(tl.strategy, tl.last_record))
    return out


@pytest.mark.parametrize("name", strategy_names())
def test_every_kind_reads_as_lists_with_every_free_block_drawn_once(view, replays, name):
    structure, explained = replays[name]
    view.show_step(structure, explained)
    drawn = view.drawn()
    # the lists, and the empty bins the step names (the bin it took the last block of)
    rows = labelled_lists(structure, named=set(list_marks(explained, None)))
    assert [lst["label"] for lst in drawn["lists"]] == [label for _, label, _ in rows]
    for lst, (_, _, addrs) in zip(drawn["lists"], rows):
        # each list's blocks in the list's order; what is left out is counted
        position = {a: i for i, a in enumerate(addrs)}
        assert [position[a] for a in lst["blocks"]] == sorted(position[a] for a in lst["blocks"])
        assert len(lst["blocks"]) + lst["skipped"] == len(addrs)
        if lst["skipped"] == 0:
            assert lst["blocks"] == addrs
    assert len(set(drawn_blocks(drawn))) == len(drawn_blocks(drawn))
    assert set(drawn_blocks(drawn)) <= set(members(structure))
    left_out = sum(lst["skipped"] for lst in drawn["lists"])
    assert len(drawn_blocks(drawn)) + left_out == len(members(structure))
    assert (view.summary == "") == (left_out == 0)
    search = {p["name"]: p["addr"] for p in structure["pointers"] if p["addr"] is not None}
    assert drawn["pointers"] == search


def test_the_search_path_is_numbered_in_order_and_named_blocks_are_lit(view):
    s = make("lists", {a: 32 for a in (0, 64, 128, 192)}, lists={"free": [0, 64, 128, 192]})
    events = [visit(0, 128), visit(1, 0), visit(2, 192, True),
              ExplainedEvent(3, ListRemove(999, 32, ("free",)), "", (999, 64))]
    view.show_step(s, events)
    drawn = view.drawn()
    assert drawn["visited"] == [128, 0, 192]
    assert drawn["changed"] == [64]
    assert drawn["marked_lists"] == {"free": "took 0x3e7"}
    # micro-steps: up to event 1, only the first two visits are lit
    view.set_current_event(1)
    drawn = view.drawn()
    assert drawn["visited"] == [128, 0] and drawn["changed"] == [] and drawn["marked_lists"] == {}


def test_a_long_list_keeps_its_ends_the_lit_blocks_and_the_selection(view):
    n = 5000
    addrs = [16 * i for i in range(n)]
    s = make("lists", {a: 16 for a in addrs}, lists={"one long list": addrs})
    view.show_step(s, [visit(0, addrs[2500]), visit(1, addrs[4000])])
    drawn = view.drawn()
    [lst] = drawn["lists"]
    assert len(lst["blocks"]) <= PER_LIST_MAX
    assert len(lst["blocks"]) + lst["skipped"] == n
    assert lst["blocks"][0] == addrs[0] and lst["blocks"][-1] == addrs[-1]
    assert lst["blocks"] == sorted(lst["blocks"])          # still in the list's order
    assert drawn["visited"] == [addrs[2500], addrs[4000]]
    assert f"of {n:,} blocks drawn" in view.summary
    # selecting a block that was left out draws it, with its ring
    view.set_selection(addrs[3333])
    drawn = view.drawn()
    assert addrs[3333] in drawn["lists"][0]["blocks"] and drawn["selected"] == addrs[3333]


def test_many_lists_fold_and_say_so(view):
    lists = {f"class {i}": [1000 * i + 16 * j for j in range(i % 7)] for i in range(500)}
    sizes = {a: 16 for addrs in lists.values() for a in addrs}
    s = make("lists", sizes, lists=lists)
    deep = lists["class 250"][1]
    view.show_step(s, [visit(0, deep)])
    drawn = view.drawn()
    assert len(drawn["lists"]) <= MAX_LISTS + 1
    assert len(drawn["lists"]) + drawn["folded_lists"] == 500
    assert "class 250" in [lst["label"] for lst in drawn["lists"]]
    assert drawn["visited"] == [deep]
    assert len(drawn_blocks(drawn)) <= BLOCK_BUDGET + 2 * PER_LIST_MAX
    total = sum(len(a) for a in lists.values())
    assert len(drawn_blocks(drawn)) + sum(l["skipped"] for l in drawn["lists"]) + drawn["folded_blocks"] == total
    assert "lists folded" in view.summary


def test_clicking_and_hovering_a_box_report_its_block(qtbot, view):
    s = make("lists", {0: 32, 64: 48}, lists={"free": [0, 64]})
    view.show_step(s, [])
    with qtbot.waitSignal(view.block_clicked) as clicked:
        qtbot.mouseClick(view.canvas.viewport(), Qt.LeftButton, pos=view.box_centre(64))
    assert clicked.args == [64] and view.drawn()["selected"] == 64
    with qtbot.waitSignal(view.block_clicked) as clicked:
        qtbot.mouseClick(view.canvas.viewport(), Qt.LeftButton,
                         pos=view.canvas.viewport().rect().bottomRight() - view.canvas.viewport().rect().center() / 4)
    assert clicked.args == [-1] and view.drawn()["selected"] is None


def test_nothing_to_show(view):
    view.show_step(None, [])
    assert view.drawn()["lists"] == [] and view.summary == ""


def test_it_scrolls_to_what_the_step_did(view):
    lists = {f"class {i}": [1000 * i + 16 * j for j in range(3)] for i in range(40)}
    s = make("lists", {a: 16 for addrs in lists.values() for a in addrs}, lists=lists)
    canvas = view.canvas

    def in_sight(y: float) -> bool:
        top = canvas.mapToScene(0, 0).y()
        return top <= y <= top + canvas.viewport().height()

    # a block the search examined, far down
    view.show_step(s, [visit(0, lists["class 35"][1])])
    assert in_sight(view._boxes[lists["class 35"][1]].y())
    # a list the step took a block from (the block is gone): its heading
    view.show_step(s, [ExplainedEvent(0, ListRemove(99, 16, ("class 30",)), "", (99,))])
    assert view.drawn()["marked_lists"] == {"class 30": "took 0x63"}
    [heading] = [i for i in canvas.scene().items()
                 if getattr(getattr(i, "mark", None), "label", None) == "class 30"]
    assert in_sight(heading.y() + 4)
    assert not in_sight(0)


# ------------------------------------------------ dlmalloc: bin map, last remainder, top, mmap
def dl_trace(tmp_path):
    """Chunks of a dozen sizes, every other one freed (guards keep them
    apart), one request past the mmap threshold, then malloc(1500), which
    misses its bin, scans the bin map and leaves a last remainder."""
    ops, n = [], 0
    for s in (24, 40, 56, 100, 200, 300, 520, 700, 1100, 3000, 5000, 9000):
        for j in range(3):
            ops += [f"a {n} {s + 8 * j}", f"a {n + 1} 16"]
            n += 2
    ops.append(f"a {n} 200000")
    mmap_step = len(ops)
    n += 1
    ops += [f"f {i}" for i in range(0, n - 1, 4)]
    ops += [f"a {n} 60", f"a {n + 1} 1500"]
    n += 2
    path = tmp_path / "dl.rep"
    path.write_text(f"0\n{n}\n{len(ops)}\n1\n" + "\n".join(ops) + "\n")
    return traces.load_trace(str(path)), mmap_step, len(ops)


def dl_step(trace, step):
    tl = Timeline(trace, "dlmalloc").build()
    tl.seek(step)
    return tl.strategy.structure(), explain_step(tl.strategy, tl.last_record), tl.last_record


def test_dlmalloc_bins_come_with_the_bin_map_the_last_remainder_top_and_mmapped_chunks(bins_view, tmp_path):
    from heapscope.allocators.dlmalloc import BinmapProbe
    view = bins_view
    assert view_for("bins") is type(view)
    trace, mmap_step, last = dl_trace(tmp_path)
    structure, explained, record = dl_step(trace, last)
    view.show_step(structure, explained, record)
    drawn = view.drawn()
    scanned = [e.block for e in record.events if isinstance(e, BinmapProbe)]
    assert len(scanned) >= 2                                   # the scan passed clear bits
    assert drawn["binmap"] == {"bits": structure["binblocks"], "probed": scanned, "changed": []}
    assert structure["last_remainder"] is not None
    assert drawn["kept"] == {"last_remainder": structure["last_remainder"], "top": structure["top"]}
    [region] = structure["mapped"]
    assert region["size"] > 200000
    assert drawn["mapped"] == [(region["addr"], region["size"], False)]
    # every non-empty bin's bit is drawn set
    for i in structure["bins"]:
        assert drawn["binmap"]["bits"] >> (int(i) // 4) & 1
    # a narrow view wraps the bits and the line naming the last remainder and top
    view.resize(300, 500)
    view.show_step(structure, explained, record)
    width = view.canvas.viewport().width()
    extras = [i for i in view.canvas.scene().items()
              if getattr(getattr(i, "mark", None), "role", None) in ("binbit", "kept")]
    assert len(extras) == 33 and all(i.sceneBoundingRect().right() <= width for i in extras)
    view.resize(520, 600)
    # the step that mapped the chunk lights it
    structure, explained, record = dl_step(trace, mmap_step)
    view.show_step(structure, explained, record)
    assert view.drawn()["mapped"] == [(region["addr"], region["size"], True)]
    assert view.drawn()["binmap"]["probed"] == []


def test_dlmalloc_with_nothing_kept_apart_says_so(bins_view):
    view = bins_view
    s = Timeline(traces.make_workload("vo1989", steps=5, seed=1), "dlmalloc").build()
    s.seek(0)
    structure = s.strategy.structure()
    view.show_step(structure, [])
    drawn = view.drawn()
    assert drawn["kept"] == {"last_remainder": None, "top": structure["top"]}
    assert "mapped" not in drawn and drawn["binmap"]["bits"] == structure["binblocks"]
    texts = [i.text() for i in view.canvas.scene().items() if hasattr(i, "text") and callable(i.text)]
    assert any(t.startswith("last remainder: none") for t in texts)


def test_the_summary_line_stays_inside_the_view(qtbot, view):
    """Issue 24: dlmalloc's "summarised: ..." line ran off the right edge
    ("... and wh").  In a view 300 px wide the words shown fit its width and
    its two lines (read back with the label's own metrics), cut at a word
    with "…" when longer, the whole in the tooltip."""
    from PySide6.QtWidgets import QLabel
    lists = {f"class {i}": [1000 * i + 16 * j for j in range(i % 7)] for i in range(500)}
    s = make("lists", {a: 16 for addrs in lists.values() for a in addrs}, lists=lists)
    view.resize(300, 600)
    view.show_step(s, [visit(0, lists["class 250"][1])])
    qtbot.wait(10)
    info = view.info
    shown, width = QLabel.text(info), info.contentsRect().width()
    wrap = Qt.TextWordWrap if info.wordWrap() else 0
    room = info.fontMetrics().boundingRect(0, 0, width, 1 << 20, wrap, shown)
    assert room.width() <= width and room.height() <= info.contentsRect().height(), (shown, room, info.size())
    full = f"summarised: {view.summary}"
    assert shown == full or (shown.endswith("…") and info.toolTip() == full)
