"""The map's and the plots' axes go through one public styling helper
(gui/axis_style.py), and nothing in gui/ reaches into pyqtgraph's private API:
no ``_updateLabel()``, no ``axis.picture = None``, no ``resizeEvent()``
called by hand, no other underscore name pyqtgraph's items have."""

from __future__ import annotations

import ast
from pathlib import Path

import pyqtgraph as pg
import pytest
from PySide6.QtGui import QColor

from heapscope.gui import axis_style
from heapscope.gui.heap_map import HeapMapWidget
from heapscope.gui.plots import PlotPanel
from heapscope.gui.theme import DARK, Presentation

GUI = Path(__file__).resolve().parents[2] / "gui"


def pyqtgraph_private_names() -> set[str]:
    """Every single-underscore name of the pyqtgraph items gui/ uses, their
    instance attributes included (asked of live objects, not listed by hand)."""
    items = [pg.AxisItem("left"), pg.PlotItem(), pg.ViewBox(), pg.ImageItem(), pg.ScatterPlotItem(),
             pg.TextItem(""), pg.InfiniteLine(), pg.PlotDataItem(), pg.PlotCurveItem(), pg.LegendItem(),
             pg.LabelItem(""), pg.GraphicsLayout(), pg.PlotWidget(), pg.GraphicsLayoutWidget()]
    return {n for item in items for n in dir(item) if n.startswith("_") and not n.startswith("__")}


def _derives_from_pyqtgraph(cls: ast.ClassDef) -> bool:
    return any(ast.unparse(base).startswith(("pg.", "pyqtgraph.")) for base in cls.bases)


def private_uses(folder: Path, private: set[str]) -> list[str]:
    """``file:line: code`` of each use of pyqtgraph's private API in the
    Python files under ``folder``: a private pyqtgraph name on any object
    (on ``self`` only inside a subclass of a pyqtgraph class: elsewhere it
    is the class's own attribute), a ``.picture = None`` (an AxisItem's
    cached drawing), and a ``resizeEvent()`` not passed on to ``super()``."""
    found = []
    for path in sorted(folder.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        where = {}
        for cls in (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)):
            for node in ast.walk(cls):
                where.setdefault(id(node), cls)
        for node in ast.walk(tree):
            bad = False
            if isinstance(node, ast.Attribute) and node.attr in private:
                on_self = isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")
                cls = where.get(id(node))
                bad = not on_self or (cls is not None and _derives_from_pyqtgraph(cls))
            elif isinstance(node, ast.Assign):
                bad = any(isinstance(t, ast.Attribute) and t.attr == "picture" for t in node.targets)
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and node.func.attr == "resizeEvent":
                value = node.func.value
                bad = not (isinstance(value, ast.Call) and ast.unparse(value.func) == "super")
            if bad:
                found.append((str(path.relative_to(folder)), node.lineno, ast.unparse(node)))
    return [f"{file}:{line}: {code}" for file, line, code in sorted(found)]


def test_gui_uses_no_pyqtgraph_private_api(qapp):
    private = pyqtgraph_private_names()
    assert {"_updateLabel", "_adjustSize", "_tickLevels"} <= private      # the scan sees what it must
    assert private_uses(GUI, private) == []


def test_the_scan_finds_each_private_use(qapp, tmp_path):
    # what gui/heap_map.py and gui/plots.py did before the axis helper
    (tmp_path / "old.py").write_text(
        "import pyqtgraph as pg\n"
        "def restyle(axis):\n"
        "    axis._updateLabel()\n"
        "    axis.resizeEvent()\n"
        "    axis.picture = None\n"
        "class Axis(pg.AxisItem):\n"
        "    def relabel(self):\n"
        "        self._updateLabel()\n"
        "    def resizeEvent(self, ev=None):\n"
        "        super().resizeEvent(ev)\n"
        "class Own:\n"
        "    def _style(self):\n"
        "        self._style()\n", encoding="utf-8")
    found = private_uses(tmp_path, pyqtgraph_private_names())
    assert [f.split(":")[1] for f in found] == ["3", "4", "5", "8"]


def test_map_and_plots_axes_styled_alike(qtbot):
    pres = Presentation(theme_name="dark", presenter=True)
    hm, plots = HeapMapWidget(), PlotPanel()
    qtbot.addWidget(hm)
    qtbot.addWidget(plots)
    hm.apply_presentation(pres)
    plots.apply_presentation(pres)
    axes = [hm.plot.getAxis("left"), hm.plot.getAxis("bottom")] + \
        [p.getAxis(name) for p in plots.plots for name in ("left", "bottom")]
    for axis in axes:
        assert axis.textPen().color() == QColor(DARK.ink)
        assert axis.pen().color() == QColor(DARK.axis)
        assert axis.pen().widthF() == pytest.approx(pres.line_scale)
        assert axis.style["tickFont"].pointSizeF() == pytest.approx(pres.pt(0.95))
        assert axis.labelStyle == {"color": pres.muted, "font-size": f"{pres.pt(0.95):.1f}pt"}


def test_style_keeps_a_hidden_title_hidden(qtbot):
    plots = PlotPanel()
    qtbot.addWidget(plots)
    plots.set_compact(True)           # no "step" under the x axes
    plots.apply_presentation(Presentation(presenter=True))
    assert all(not p.getAxis("bottom").label.isVisible() for p in plots.plots)
    assert all(p.getAxis("bottom").labelText == "step" for p in plots.plots)


def test_a_longer_title_is_centred_without_a_resize(qtbot):
    plot = pg.PlotWidget()
    qtbot.addWidget(plot)
    plot.resize(600, 300)
    plot.show()
    qtbot.waitExposed(plot)
    axis = plot.getPlotItem().getAxis("bottom")
    axis.setLabel("x")
    size = axis.size()
    axis.setLabel("a title much longer than the first one, set later")
    assert axis.size() == size            # no resize: pyqtgraph alone leaves it where "x" was

    def off_centre() -> float:
        return abs(axis.label.mapRectToParent(axis.label.boundingRect()).center().x() - size.width() / 2)
    assert off_centre() > 50
    axis_style.centre_label(axis)
    assert off_centre() <= 1
