"""The heap map is a composition of parts, each usable on its own through
its public interface (gui/map_*.py), and no class of it is over 500 lines.
Expected values are worked out by hand from the layouts and rules the
modules' docstrings state."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pyqtgraph as pg
import pytest
from PySide6.QtCore import QObject, QPointF, Qt
from PySide6.QtWidgets import QWidget

from heapscope.gui import heap_cells
from heapscope.gui.heap_map import HeapMapWidget
from heapscope.allocators.heap_edits import Pointer
from heapscope.gui.map_labels import MapLabels, search_words
from heapscope.gui.map_marks import MANY_VISITS, StepMarksLayer
from heapscope.gui.map_pointers import PointerLayer
from heapscope.gui.map_transition import MapTransition
from heapscope.gui.step_marks import StepMarks

GUI = Path(__file__).resolve().parents[2] / "gui"


def class_lengths(path: Path) -> dict[str, int]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {n.name: n.end_lineno - n.lineno + 1 for n in ast.walk(tree) if isinstance(n, ast.ClassDef)}


def test_no_class_of_the_map_or_the_plots_is_over_500_lines():
    files = [GUI / "heap_map.py", GUI / "plots.py", GUI / "axis_style.py", *sorted(GUI.glob("map_*.py"))]
    assert len(files) >= 10
    lengths = {f"{f.name}:{name}": n for f in files for name, n in class_lengths(f).items()}
    assert "heap_map.py:HeapMapWidget" in lengths
    assert {k: n for k, n in lengths.items() if n > 500} == {}


def test_the_map_is_made_of_its_parts(qtbot):
    hm = HeapMapWidget()
    qtbot.addWidget(hm)
    # the names other code reads are the parts' own items
    assert hm.placed_item is hm.marks_layer.placed and hm.cut_item is hm.marks_layer.cut
    assert hm.pointer_item is hm.pointers.search and hm.skip_label is hm.labels.skip
    assert hm._order_labels is hm.labels.numbers and hm.image_item is hm.cells.item
    hm.manual_transitions = True
    assert hm.transition.manual


class Fading:
    """Anything that fades: records its opacity."""
    def __init__(self) -> None:
        self.opacity = None

    def setOpacity(self, p: float) -> None:
        self.opacity = p


def test_transition_fades_in_by_hand_and_slides_the_cut(qtbot):
    owner = QObject()
    cut = []
    t = MapTransition(owner, cut.append)
    a, b = Fading(), Fading()
    t.manual = True
    t.prepare([a, b], True)
    t.start(200)
    assert t.running() and a.opacity == b.opacity == 0.0 and cut[-1] == 0.0
    t.seek(50)                                    # a quarter of 200 ms
    assert a.opacity == pytest.approx(0.25) and cut[-1] == pytest.approx(0.25)
    t.seek(250)                                   # past its length: it ends
    assert not t.running() and a.opacity == b.opacity == 1.0 and cut[-1] == 1.0
    t.prepare([], False)
    cut.clear()
    t.stop()
    assert cut == [] and a.opacity == 1.0         # nothing fresh: nothing touched


def test_marks_layer_outlines_a_step(qtbot):
    plot = pg.PlotItem()
    layer = StepMarksLayer(plot, QWidget())
    # rows of 64 bytes: blocks 0..16 and 32..48 in row 0, a cut at 48
    marks = StepMarks(visits=[(0, 16), (32, 16)], placed=[(32, 16)], cuts=[48])
    layer.show(marks, 64, lambda addr: None)
    assert layer.searched.path().contains(QPointF(8, 0.5)) and layer.searched.path().contains(QPointF(40, 0.5))
    assert layer.placed.path().contains(QPointF(40, 0.5)) and not layer.placed.path().contains(QPointF(8, 0.5))
    line = layer.cut.path().toSubpathPolygons()[0]
    assert (line.first().x(), line.first().y()) == pytest.approx((48, -0.1))
    assert (line.last().x(), line.last().y()) == pytest.approx((48, 1.1))
    assert layer.searched.brush().style() == Qt.NoBrush                   # outlined, not filled
    many = StepMarks(visits=[(16 * i, 8) for i in range(MANY_VISITS + 1)])
    layer.show(many, 64, lambda addr: None)
    assert layer.searched.brush().style() != Qt.NoBrush                   # filled
    layer.draw_cuts(64, newest=0.5)                                 # the cut half slid in
    assert layer.cut.path().isEmpty()                               # (these marks cut nothing)


def test_labels_number_a_long_search_at_both_ends(qtbot):
    plot = pg.PlotItem()
    labels = MapLabels(plot, "Sans")
    marks = StepMarks(visits=[(64 * i, 32) for i in range(50)])
    labels.number(marks, 10, lambda addr, size: (addr % 1024 + size / 2, addr // 1024))
    shown = [lab.textItem.toPlainText() for lab in labels.numbers if lab.isVisible()]
    # room for 10: the first (10 + 1) // 2 = 5 and the last 5
    assert shown == ["1", "2", "3", "4", "5", "46", "47", "48", "49", "50"]
    assert labels.skip.isVisible() and labels.skip.textItem.toPlainText() == "+40 not numbered"
    assert search_words(marks, 0) == "50 blocks searched: 1–5 and 46–50 numbered, 40 in between not"
    assert search_words(StepMarks(visits=[(0, 8)], numbered=[0]), 2) == \
        "2 numbers left out for room: zoom in (wheel) to read them"
    # the numbers left out named in search order (a block visited twice: "3·9"), six at most
    assert search_words(marks, 2, ["9", "3·9"]).endswith("; 2 numbers (3·9, 9) left out for room: zoom in (wheel) to read them")
    assert "numbers (2, 3, 4, 5, 6, 7, …) left out" in search_words(marks, 8, [str(k) for k in range(9, 1, -1)])


def test_pointer_layer_draws_symbols_names_and_a_note(qtbot):
    plot = pg.PlotItem()
    labels = MapLabels(plot, "Sans")
    note_parent = QWidget()
    qtbot.addWidget(note_parent)
    layer = PointerLayer(plot, note_parent, labels)
    layout = heap_cells.HeapLayout(heap=1024, bytes_per_cell=8, cols=32, rows=4)     # rows of 256 bytes
    blocks = heap_cells.block_arrays([], 1024)
    layer.show([Pointer("rover", 300, "search"), Pointer("wilderness", 600, "marker"),
                Pointer("last_remainder", None, "search")], layout, blocks)
    xs, ys = layer.search.getData()
    assert list(zip(xs, ys)) == [(300 % 256, 300 // 256 + 1)]       # under its block's first byte
    xs, ys = layer.markers.getData()
    assert list(zip(xs, ys)) == [(600 % 256, 600 // 256 + 1)]
    assert [lab.textItem.toPlainText() for lab in labels.pointer_names if lab.isVisible()] == \
        ["rover", "wilderness"]
    assert not layer.note.isHidden() and layer.note.text().startswith("last_remainder: at no block")
    assert layer.symbol_points() == [(44.0, 2.0), (88.0, 3.0)]
    assert np.all(blocks.state != heap_cells.STATE_FREE)            # so the note says the list is empty
    assert "(the free list is empty)" in layer.note.text()


@pytest.mark.parametrize("screen_height", [720, 900, 1080])
def test_the_line_under_the_map_shows_its_two_lines_whole_in_presenter_mode(qtbot, screen_height):
    """Issue 24: the line under the map kept two lines' height but drew a
    text of three lines in it, its third line cut in half at the bottom edge
    (presenter mode at 1080: 90 px of text in 62).  Now it ends at a word in
    "…".  Read back: the text as the label lays it out, wrapped in its
    contents rectangle, fits that rectangle, and still takes two lines."""
    from PySide6.QtGui import QFontMetrics

    from heapscope.gui.theme import Presentation
    hm = HeapMapWidget()
    qtbot.addWidget(hm)
    hm.resize(600, 400)
    hm.apply_presentation(Presentation(presenter=True, screen_height=screen_height))
    hm.show()
    qtbot.waitExposed(hm)
    label = hm.info
    label.setText("block at 0x1a2b3c, 4096 B, free; the search went past it "
                  "because it was too small for the request of 8192 B")
    rect = label.contentsRect()
    laid = QFontMetrics(label.font()).boundingRect(rect, int(Qt.AlignLeft | Qt.AlignTop | Qt.TextWordWrap),
                                                   label.text())
    assert laid.height() > QFontMetrics(label.font()).lineSpacing() * 1.5, "the text should take two lines"
    assert rect.contains(laid), (laid, rect)
    assert label.full_text().startswith(label.text().rstrip(" …"))
