"""The explain panel and the structure view in the window, and the selection
and hover they share with the heap map, driven with the mouse."""

import pytest
from PySide6.QtCore import QEvent, QPointF, Qt
from PySide6.QtGui import QMouseEvent
from PySide6.QtWidgets import QApplication, QGraphicsView

from heapscope.allocators.events import Split, Visit
from heapscope.allocators.explain import explain_step
from heapscope.allocators.replay import Timeline
from heapscope.allocators.structure import where
from heapscope.gui import structure_views
from heapscope.gui.structure_views.base import StructureView

from .conftest import Counter, wait_loaded


def replayed(window, t: int) -> Timeline:
    """The window's trace replayed afresh through its strategy, at step t."""
    tl = Timeline(window.trace, window.strategy_name, window.params).build()
    tl.seek(t - 1)
    tl.seek(t)
    return tl


def free_blocks(strategy) -> dict:
    return {b.addr: b.size for b in strategy.walk() if b.state == "free"}


def click_line(qtbot, panel, row: int) -> None:
    index = panel.lines.index(row)
    panel.list.scrollTo(index)
    qtbot.mouseClick(panel.list.viewport(), Qt.LeftButton, pos=panel.list.visualRect(index).center())


def line_visible(panel, row: int) -> bool:
    rect = panel.list.visualRect(panel.lines.index(row))
    return panel.list.viewport().rect().intersects(rect) and not rect.isEmpty()


def click_map(qtbot, heap_map, address: int) -> None:
    view = heap_map.plot_widget
    pos = view.mapFromScene(heap_map.scene_pos_of(address))
    qtbot.mouseClick(view.viewport(), Qt.LeftButton, pos=pos)


def block_points(view) -> dict:
    """{block address: (viewport widget, point)} of the blocks a structure
    view has drawn, whatever the view: every view on a QGraphicsScene gives
    the item that stands for a block an ``addr`` (docs/gui.md)."""
    out = {}
    for canvas in view.findChildren(QGraphicsView):
        for item in canvas.items():
            addr = getattr(item, "addr", None)
            if isinstance(addr, int) and item.isVisible() and addr not in out:
                out[addr] = (canvas, item)
    return out


def point_of_block(view, addr: int):
    """The viewport and the point in it at the middle of ``addr``'s item,
    scrolled into sight."""
    canvas, item = block_points(view)[addr]
    canvas.ensureVisible(item, 4, 4)
    QApplication.processEvents()
    return canvas.viewport(), canvas.mapFromScene(item.sceneBoundingRect().center())


def drawn_free_blocks(window) -> list[int]:
    """The free blocks of the shown structure that its view has drawn, in address order."""
    sizes = window.timeline.strategy.structure()["sizes"]
    return sorted(a for a in block_points(window.structure_panel.view) if a in sizes)


def move_mouse(widget, pos) -> None:
    local = QPointF(pos)
    QApplication.sendEvent(widget, QMouseEvent(QEvent.MouseMove, local, QPointF(widget.mapToGlobal(pos)),
                                               Qt.NoButton, Qt.NoButton, Qt.NoModifier))


def a_step_with_a_missed_block(window) -> int:
    """A malloc whose search passed over a free block that stays free, then split one."""
    s = window.timeline.series
    for t in (i + 1 for i in range(200, s.n) if s.is_malloc[i] and 3 <= s.search[i] <= 12):
        window.seek(t)
        rec = window.timeline.last_record
        if (rec.grows == 0 and rec.splits and
                any(isinstance(e, Visit) and not e.fits for e in rec.events)):
            return t
    raise AssertionError("no such step")


# ----------------------------------------------------------- explain panel
@pytest.mark.parametrize("strategy", ["next-fit", "tlsf", "buddy", "splay-best-fit"])
def test_the_explain_panel_lists_the_steps_events_in_order(qtbot, loaded, strategy):
    if strategy != "next-fit":
        wait_loaded(qtbot, loaded, lambda: loaded.set_strategy(strategy))
    s = loaded.timeline.series
    for t in (1, 2, 371, int(s.search.argmax()) + 1, loaded.timeline.n):
        loaded.seek(t)
        fresh = replayed(loaded, t)
        expected = explain_step(fresh.strategy, fresh.last_record)
        assert expected, f"step {t} of {strategy} has no events"
        assert loaded.explain_panel.texts() == [f"{e.index + 1}. {e.text}" for e in expected]
        assert loaded.explain_panel.title.text() == f"Step {t}: {len(expected)} event" + ("" if len(expected) == 1 else "s")
    loaded.seek(0)
    assert loaded.explain_panel.texts() == []


def test_clicking_an_event_selects_its_block_on_the_map_and_in_the_structure_view(qtbot, loaded):
    w = loaded
    t = a_step_with_a_missed_block(w)
    panel = w.explain_panel
    explained = w.model.step().explained
    row = next(i for i, e in enumerate(explained) if isinstance(e.event, Visit) and not e.event.fits)
    addr = explained[row].addrs[0]
    size = free_blocks(w.timeline.strategy)[addr]
    click_line(qtbot, panel, row)
    assert w.model.selection == addr
    assert w.heap_map.selected_range() == (addr, size)
    assert w.structure_panel.view.drawn()["selected"] == addr
    # the clicked line stays selected and in sight
    assert panel.list.currentIndex().row() == row and line_visible(panel, row)
    # a line naming two blocks selects the one it is about: a split's part
    # for the request, which is used now, so on the map only
    row = next(i for i, e in enumerate(explained) if isinstance(e.event, Split))
    click_line(qtbot, panel, row)
    used = explained[row].event.taken_addr
    assert w.model.selection == used
    assert w.heap_map.selected_range()[0] == used
    assert w.structure_panel.view.drawn()["selected"] is None
    assert panel.list.currentIndex().row() == row
    assert t == w.timeline.position


def test_clicking_the_map_selects_in_the_structure_view_and_the_explain_panel(qtbot, loaded):
    w = loaded
    a_step_with_a_missed_block(w)
    explained = w.model.step().explained
    missed = next(e for e in explained if isinstance(e.event, Visit) and not e.event.fits)
    addr = missed.addrs[0]
    size = free_blocks(w.timeline.strategy)[addr]
    click_map(qtbot, w.heap_map, addr + size // 2)      # anywhere in the block
    assert w.model.selection == addr
    assert w.heap_map.selected_range() == (addr, size)
    assert w.structure_panel.view.drawn()["selected"] == addr
    # the explain panel shows the line that names it
    panel = w.explain_panel
    row = panel.list.currentIndex().row()
    assert row == missed.index and line_visible(panel, row)
    # a click past the heap clears the selection everywhere
    click_map(qtbot, w.heap_map, w.timeline.strategy.arena.brk + 1)
    assert w.model.selection is None and w.heap_map.selected_range() is None
    assert w.structure_panel.view.drawn()["selected"] is None


def test_clicking_the_structure_view_selects_on_the_map(qtbot, loaded):
    w = loaded
    w.seek(420)
    free = free_blocks(w.timeline.strategy)
    view = w.structure_panel.view
    drawn = drawn_free_blocks(w)
    addr = drawn[len(drawn) // 2]
    viewport, point = point_of_block(view, addr)
    qtbot.mouseClick(viewport, Qt.LeftButton, pos=point)
    assert w.model.selection == addr
    assert w.heap_map.selected_range() == (addr, free[addr])
    assert view.drawn()["selected"] == addr
    # with nothing hovered, the facts line names the selected block
    w.model.set_hover(None)
    assert w.structure_panel.facts.text().startswith(f"selected: block 0x{addr:x}, {free[addr]:,} B: free")
    # the selection ring is drawn around that block's cells on the map
    x, y = w.heap_map.layout_.point_of(addr)
    assert w.heap_map.selected_item.path().contains(QPointF(x + 0.5, y + 0.5))
    # stepping keeps the selection while the block lives
    w.step_forward()
    if addr in free_blocks(w.timeline.strategy):
        assert view.drawn()["selected"] == addr


def test_hover_shows_the_same_facts_in_the_map_and_the_structure_view(qtbot, loaded):
    w = loaded
    w.seek(420)
    strategy = w.timeline.strategy
    free = free_blocks(strategy)
    places = where(strategy.structure())
    view = w.structure_panel.view
    addr = drawn_free_blocks(w)[3]
    move_mouse(*point_of_block(view, addr))
    assert w.model.hover == addr
    facts = w.structure_panel.facts.text()
    assert facts.startswith(f"block 0x{addr:x}, {free[addr]:,} B: free")
    assert f"in {places[addr]}" in facts
    assert w.heap_map.info.text() == facts
    # the map outlines the block hovered in the other view
    x, y = w.heap_map.layout_.point_of(addr)
    assert w.heap_map.hover_item.path().contains(QPointF(x + 0.5, y + 0.5))
    # and the other way: hovering the map tells the structure view the same facts
    b = next(b for b in strategy.walk() if b.state == "used" and b.request > 32)
    w.heap_map._mouse_moved(w.heap_map.scene_pos_of(b.payload + 4))
    assert w.model.hover == b.addr
    panel_facts = w.structure_panel.facts.text()
    assert panel_facts.startswith(f"block 0x{b.addr:x}, {b.size:,} B: used")
    ident = w.timeline.program.id_of_payload()[b.payload]
    assert f"trace id {ident}" in panel_facts
    assert w.heap_map.info.text().endswith(panel_facts)      # the map names the hovered byte first


def test_a_new_strategy_clears_the_selection(qtbot, loaded):
    loaded.seek(100)
    loaded.model.select(next(iter(free_blocks(loaded.timeline.strategy))))
    wait_loaded(qtbot, loaded, lambda: loaded.set_strategy("rotating-list"))
    assert loaded.model.selection is None and loaded.heap_map.selected_range() is None


# ---------------------------------------------------------- structure view
def test_a_structure_with_no_view_of_its_own_is_drawn_as_lists(qtbot, loaded, monkeypatch):
    """A strategy that keeps the default structure() (a user strategy's
    labelled lists) is drawn by the generic lists view, fed every step."""
    from heapscope.allocators.strategy import Strategy
    from heapscope.gui.structure_views.lists_view import ListsView
    w = loaded
    monkeypatch.setattr(type(w.timeline.strategy), "structure", Strategy.structure)
    t = a_step_with_a_missed_block(w)
    view = w.structure_panel.view
    assert isinstance(view, ListsView)
    structure = w.timeline.strategy.structure()
    assert structure["kind"] == "lists"
    drawn = view.drawn()
    assert [lst["label"] for lst in drawn["lists"]] == list(structure["lists"])
    assert [a for lst in drawn["lists"] for a in lst["blocks"]] == structure["lists"]["free blocks"]
    visits = [e.addr for e in w.timeline.last_record.events if isinstance(e, Visit)]
    assert drawn["visited"] == [a for a in visits if a in structure["sizes"]]
    assert view.title.text() == "Free structure: the strategy's lists"
    assert t == w.timeline.position


def test_a_view_registered_for_a_kind_plugs_in_with_no_change(qtbot, window, small_trace_path,
                                                               monkeypatch):
    """A structure view from another module: registered for its kind, the
    window shows it and feeds it every step."""
    fed = []

    class RingProbe(StructureView):
        kinds = ("address-ring",)

        def show_step(self, structure, explained, record=None):
            fed.append((structure, explained, record))

        def set_selection(self, addr):
            fed.append(("selection", addr))

        def drawn(self):
            return {}

    structure_views.view_for("lists")           # the views of the package are registered
    monkeypatch.setattr(structure_views, "_VIEWS", dict(structure_views._VIEWS))
    structure_views.register_view("address-ring")(RingProbe)
    wait_loaded(qtbot, window, lambda: window.open_trace(small_trace_path))
    loaded = window
    loaded.step_forward()
    assert isinstance(loaded.structure_panel.view, RingProbe)
    step = loaded.model.step()
    assert fed[-2] == (step.structure, step.explained, step.record)
    loaded.model.select(16)
    assert fed[-1] == ("selection", 16)
    # its clicks select through the window's model
    loaded.structure_panel.view.block_clicked.emit(32)
    assert loaded.model.selection == 32 and loaded.heap_map.selected == 32


def test_an_event_within_the_step_reaches_the_panels(qtbot, loaded):
    """Micro-steps (next): the model's event index marks that line of the
    explain panel, greys the later ones, and lights the structure view only up
    to it."""
    w = loaded
    a_step_with_a_missed_block(w)
    explained = w.model.step().explained
    first_visit = next(e.index for e in explained if isinstance(e.event, Visit))
    events = Counter(w.structure_panel.view, "set_current_event")
    w.model.set_event(first_visit)
    texts = w.explain_panel.texts()
    assert texts[first_visit].startswith(f"▶ {first_visit + 1}. ")
    assert sum(t.startswith("▶") for t in texts) == 1
    later = w.explain_panel.lines.data(w.explain_panel.lines.index(first_visit + 1), Qt.ForegroundRole)
    assert later is not None and later.color().name() == "#9a9a9a"
    assert events.calls[-1][0] == first_visit
    w.model.set_event(None)
    assert not any(t.startswith("▶") for t in w.explain_panel.texts())
    assert events.calls[-1][0] is None
