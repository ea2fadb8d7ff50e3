"""A right click on a used block of a structure view opens the same block
menu as the heap map (issue 21): Free this block, then Undo, in K&R's
address ring (next fit) and in Knuth's buddy split tree."""

from __future__ import annotations

from PySide6.QtCore import Qt

from heapscope.inspection import inspect_step
from heapscope.traces.trace import ALLOC, FREE, Trace

from .test_sandbox_window import choose, malloc_by_key, map_blocks, settle


def new_trace_by_hand(qtbot, w, strategy: str) -> None:
    """File > New through ``strategy``; a, b, c = malloc(100), free(b),
    d = malloc(100): K&R's next fit searches from the rover, which free(b)
    left before b, so b's block is an exact fit, unlinked whole: the ring
    draws it as the block just taken (used now)."""
    w.set_strategy(strategy)
    w.menus["file"].actions()[0].trigger()        # File > New
    settle(qtbot)
    for _ in range(3):
        malloc_by_key(qtbot, w, 100)
    w.edits.free_block("b")
    w.animator.finish()
    malloc_by_key(qtbot, w, 100)
    settle(qtbot)
    assert list(w.model.trace) == [(ALLOC, 0, 100), (ALLOC, 1, 100), (ALLOC, 2, 100), (FREE, 1, 0),
                                   (ALLOC, 3, 100)]


def used_address(w, address: int) -> bool:
    step = w.model.step(0)
    i = step.blocks.index_at(address)
    return i >= 0 and int(step.blocks.state[i]) == 0


def trace_id_at(w, address: int) -> int:
    """The trace id of the used block holding ``address``, from the step's
    own books (payload -> id)."""
    step = w.model.step(0)
    i = step.blocks.index_at(address)
    return step.ids[int(step.blocks.payload[i])]


def free_by_structure_menu(qtbot, w, graphics, item) -> None:
    """Right-click ``item`` (a used block's, in the QGraphicsView
    ``graphics`` of the structure view), pick Free this block: the trace
    gains a free of its id and the heap is the one that free gives; Undo
    gives back exactly the heap before."""
    n = w.model.n
    ident = trace_id_at(w, item.addr)
    before = map_blocks(w.heap_map)
    pos = graphics.mapFromScene(item.mapToScene(item.boundingRect().center()))
    qtbot.mouseClick(graphics.viewport(), Qt.RightButton, pos=pos)
    settle(qtbot)
    menu = w.edits.block_menu
    assert menu is not None, "no menu opened by the right click"
    name = "abcdefgh"[ident]                      # the sandbox names blocks a, b, ... in order
    choose(qtbot, menu, f"Free this block ({name})")
    w.animator.finish()
    settle(qtbot)
    assert w.model.n == n + 1 and w.model.position == n + 1
    expected = Trace.from_ops(list(w.model.trace)[:n] + [(FREE, ident, 0)])
    assert list(w.model.trace)[n] == (FREE, ident, 0)
    assert map_blocks(w.heap_map) == inspect_step(expected, w.strategy_name, n + 1)["blocks"]
    assert map_blocks(w.heap_map) != before
    qtbot.keyClick(w, Qt.Key_Z, Qt.ControlModifier)
    settle(qtbot)
    assert w.model.n == n and w.model.position == n
    assert map_blocks(w.heap_map) == before


def test_free_a_used_block_from_the_ring_view(qtbot, window):
    w = window
    new_trace_by_hand(qtbot, w, "next-fit")
    view = w.structure_panel.view
    cards = [c for c in view.canvas.root.childItems() if getattr(c, "addr", None) is not None
             and c.isVisible() and used_address(w, c.addr)]
    assert cards, "the ring draws no used block (the block just taken)"
    free_by_structure_menu(qtbot, w, view.canvas, cards[0])
    w.edits.sandbox = None


def test_free_a_used_block_from_the_buddy_view(qtbot, window):
    w = window
    new_trace_by_hand(qtbot, w, "buddy")
    view = w.structure_panel.view
    qtbot.mouseClick(view.fit_button, Qt.LeftButton)   # the split tree is above the AVAIL rows
    settle(qtbot)
    from heapscope.gui.structure_views.buddy_view import BlockItem
    items = [i for i in view.graphics.scene().items() if isinstance(i, BlockItem) and i.isVisible()
             and i.state == "used"
             and view.block_at_scene(i.mapToScene(i.boundingRect().center())) == i.addr]
    assert items, "the split tree draws no used block"
    assert used_address(w, items[0].addr)
    free_by_structure_menu(qtbot, w, view.graphics, items[0])
    w.edits.sandbox = None
