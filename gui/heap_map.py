"""The heap map: the whole heap in address order, wrapped into rows.

One ``pg.ImageItem`` shows the cell image of :mod:`gui.heap_cells` through the
palette's LUT (an 8-bit indexed QImage: no per-pixel conversion), so a frame
costs the same for 100 blocks or 100 000.  The few blocks the current step
touched -- the free blocks its search examined, in order, the block it placed
or released, a request that failed -- are drawn over it as outlines, a handful
of path items whatever their number.  Hovering names the block under the
mouse; a click selects it (outlined, and marked in the structure view too);
the wheel zooms and a drag pans (pyqtgraph's ViewBox); View > Fit heap brings
the whole heap back.

Bound to the window's :class:`~gui.show_model.ShowModel` (:meth:`bind`), the
map draws the model's shown step, its selection and its hover, and reports
clicks and hovers to it.

Coordinates: x is the byte offset within a row (0 .. row_bytes), y the row
number growing downwards, so address ``a`` sits at ``(a % row_bytes, a //
row_bytes)``.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, Qt, QTimer, Signal
from PySide6.QtGui import QBrush, QColor, QFont, QPainterPath, QPen
from PySide6.QtWidgets import (QGraphicsPathItem, QHBoxLayout, QLabel,
                               QSizePolicy, QToolTip, QVBoxLayout, QWidget)

from ..allocators.events import Coalesce, GrowFailed, Placed, PointerMove, Released, Visit

from . import block_facts, heap_cells, palette
from .flow_layout import FlowLayout
from .gauges import human_bytes
from .subscriber import Subscriber

#: visit-order numbers are written on the searched blocks up to this many visits
MAX_NUMBERED_VISITS = 40
#: white lines between blocks are drawn up to this many blocks (beyond, they
#: would grey the whole map out and cost more than the image itself)
MAX_SEPARATED_BLOCKS = 20000
#: white gaps between rows are drawn up to this many rows
MAX_ROW_GAPS = 160


class AddressAxis(pg.AxisItem):
    """Left axis: the hex address where each row starts."""

    def __init__(self) -> None:
        super().__init__("left")
        self.row_bytes = 1

    def tickSpacing(self, minVal, maxVal, size):
        # Only whole rows have an address to show.
        return [(max(1.0, spacing), offset) for spacing, offset in super().tickSpacing(minVal, maxVal, size)]

    def tickStrings(self, values, scale, spacing):
        out = []
        for v in values:
            r = round(v)
            out.append(f"0x{r * self.row_bytes:x}" if r >= 0 and abs(v - r) < 1e-6 else "")
        return out


class Legend(QWidget):
    """Colour swatches for the heap kinds and the step highlights, wrapped to
    the map's width like words."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        flow = FlowLayout(self, h_spacing=14, v_spacing=3)
        flow.setContentsMargins(4, 2, 4, 2)
        fill = [(label, colour, False) for code, label, colour in palette.CELL_KINDS]
        outline = [("searched (in order)", palette.SEARCHED, True),
                   ("placed", palette.PLACED, True),
                   ("freed", palette.RELEASED, True),
                   ("failed request", palette.FAILED, "hatch"),
                   ("search pointer (rover, head)", palette.SEARCHED, "pointer"),
                   ("selected (click)", palette.SELECTED, "selected")]
        for label, colour, style in fill + outline:
            entry = QWidget()
            row = QHBoxLayout(entry)
            row.setContentsMargins(0, 0, 0, 0)
            row.setSpacing(5)
            swatch = QLabel()
            swatch.setFixedSize(22, 16)
            if style is True:
                swatch.setStyleSheet(f"background: white; border: 3px solid {colour};")
            elif style == "pointer":
                swatch.setText("▲")
                swatch.setAlignment(Qt.AlignCenter)
                swatch.setStyleSheet(f"color: {colour}; font-size: 16px;")
            elif style == "selected":
                swatch.setStyleSheet(f"background: white; border: 4px double {colour};")
            elif style == "hatch":
                swatch.setStyleSheet(f"background: {colour}; border: 2px dashed white;")
            else:
                swatch.setStyleSheet(f"background: {colour}; border: 1px solid #777;")
            row.addWidget(swatch)
            row.addWidget(QLabel(label))
            flow.addWidget(entry)
        policy = QSizePolicy(QSizePolicy.Preferred, QSizePolicy.Preferred)
        policy.setHeightForWidth(True)
        self.setSizePolicy(policy)


def _path_of(ranges, row_bytes: int) -> QPainterPath:
    path = QPainterPath()
    for addr, size in ranges:
        for x, y, w, h in heap_cells.range_rects(addr, size, row_bytes):
            path.addRect(QRectF(x, y, w, h))
    return path


class HeapMapWidget(Subscriber, QWidget):
    """The heap map with its legend and a line naming the block under the mouse."""

    #: the address under the mouse, or -1 when it leaves the heap
    hovered = Signal(int)
    #: the user clicked a block (its address), or off the heap (-1)
    block_clicked = Signal(object)
    #: the block under the mouse (its address), or -1
    block_hovered = Signal(object)

    SUBSCRIBES = {"shown_changed": "_model_shown", "step_changed": "_model_step",
                  "selection_changed": "set_selection", "hover_changed": "_model_hover"}
    REQUESTS = {"block_clicked": "select", "block_hovered": "set_hover"}

    def __init__(self, parent=None, max_cells: int = heap_cells.MAX_CELLS) -> None:
        super().__init__(parent)
        self.max_cells = max_cells
        self.blocks = heap_cells.block_arrays([], 0)
        self.layout_: heap_cells.HeapLayout | None = None
        self.image = np.zeros((0, 0), np.uint8)
        self.record = None
        self.follow = True            # keep the whole heap in view until the user zooms
        self._ids_source = None       # callable -> {payload: trace id}, asked lazily on hover
        self._ids: dict | None = None
        self._places_source = None    # callable -> {free block: where the structure keeps it}
        self.selected: int | None = None       # the selected block's address
        self.hover_block: int | None = None    # the block hovered here or in another view
        self._own_hover: int | None = None     # ... when the mouse is over this map
        self._extra_rows = 0          # rows the failure marker needs past the heap
        self._scratch = heap_cells.Scratch()

        self.legend = Legend()
        self.plot_widget = pg.PlotWidget(axisItems={"left": AddressAxis()}, background="w")
        self.plot_widget.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Expanding)
        self.plot_widget.setMinimumHeight(200)
        plot = self.plot = self.plot_widget.getPlotItem()
        plot.hideButtons()
        plot.setMenuEnabled(False)
        plot.getAxis("bottom").setLabel("byte offset within the row")
        plot.getAxis("left").setLabel("row address")
        for name in ("left", "bottom"):
            plot.getAxis(name).setTextPen("k")
            plot.getAxis(name).setPen("#888")
        self.vb = plot.getViewBox()
        self.vb.invertY(True)
        self.vb.setMouseEnabled(x=True, y=True)
        self.vb.sigRangeChangedManually.connect(self._user_moved_view)

        self.image_item = pg.ImageItem(axisOrder="row-major")
        self.image_item.setLookupTable(palette.LUT)   # all 256 entries: pyqtgraph stretches a shorter LUT over 0..255
        self.image_item.setZValue(0)
        plot.addItem(self.image_item)

        def path_item(colour, width, dash=False, brush=None, z=10):
            item = QGraphicsPathItem()
            pen = QPen(QColor(colour))
            pen.setWidthF(width)
            pen.setCosmetic(True)          # width in pixels whatever the zoom
            pen.setJoinStyle(Qt.MiterJoin)
            if dash:
                pen.setStyle(Qt.DashLine)
            item.setPen(pen)
            item.setBrush(brush or QBrush(Qt.NoBrush))
            item.setZValue(z)
            plot.addItem(item)
            return item

        # Lines between blocks and gaps between rows: the map reads as lines of
        # text, each block a word, even where two used blocks touch.
        self.separator_item = path_item("#ffffff", 1.2, z=5)
        self.row_gap_item = path_item("#ffffff", 2.5, z=6)
        self.searched_item = path_item(palette.SEARCHED, 2.5, z=10)
        self.released_item = path_item(palette.RELEASED, 3, dash=True, z=11)
        placed_fill = QColor(palette.PLACED)
        placed_fill.setAlpha(40)
        self.placed_item = path_item(palette.PLACED, 4, brush=QBrush(placed_fill), z=12)
        self.failed_item = path_item(palette.FAILED, 3,
                                     brush=QBrush(QColor(palette.FAILED), Qt.BDiagPattern), z=13)
        # the search pointer: a triangle under its block, pointing up at it
        self.pointer_item = pg.ScatterPlotItem(size=18, symbol="t1", pen=pg.mkPen("k", width=1.5),
                                               brush=pg.mkBrush(palette.SEARCHED))
        self.pointer_item.setZValue(14)
        plot.addItem(self.pointer_item)
        # The selection: a black ring with a white core, visible on every fill colour.
        self.selected_outer = path_item(palette.SELECTED, 7, z=16)
        self.selected_item = path_item(palette.SELECTED_CORE, 2.5, z=17)
        self.hover_item = path_item(palette.SELECTED, 2, dash=True, z=15)
        self._order_labels: list[pg.TextItem] = []

        self.empty_text = pg.TextItem("empty heap: press Space to play, → to step", color="#555",
                                      anchor=(0.5, 0.5))
        self.empty_text.setFont(QFont(self.font().family(), 16))
        plot.addItem(self.empty_text)

        # The failure banner floats over the map (a child widget, not in a layout,
        # so showing it never moves the map).
        self.banner = QLabel(self.plot_widget)
        self.banner.setStyleSheet(f"background: {palette.FAILED}; color: white; padding: 6px 12px;"
                                  "border-radius: 4px; font-weight: bold;")
        self.banner.hide()
        self._flash = QTimer(self)
        self._flash.setInterval(160)
        self._flash.timeout.connect(self._flash_tick)
        self._flash_left = 0

        self.info = QLabel(" ")
        # A long hover line must not widen the window past the screen: it may be cut.
        self.info.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Preferred)
        self._hover_pos = None     # scene position of the last hover, if any
        self.info.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.info.setMinimumHeight(self.info.sizeHint().height())
        self.scale_label = QLabel("")
        self.scale_label.setAlignment(Qt.AlignRight | Qt.AlignVCenter)
        footer = QHBoxLayout()
        footer.setContentsMargins(4, 0, 4, 0)
        footer.addWidget(self.info, 1)
        footer.addWidget(self.scale_label)

        box = QVBoxLayout(self)
        box.setContentsMargins(0, 0, 0, 0)
        box.setSpacing(2)
        box.addWidget(self.legend)
        box.addWidget(self.plot_widget, 1)
        box.addLayout(footer)

        self.plot_widget.scene().sigMouseMoved.connect(self._mouse_moved)
        self.plot_widget.scene().sigMouseClicked.connect(self._mouse_clicked)
        self.show_heap(None)

    # ----------------------------------------------------------------- drawing
    def view_aspect(self) -> float:
        """Width / height of the map area in pixels (2 before it is shown)."""
        r = self.vb.sceneBoundingRect()
        if r.width() < 50 or r.height() < 50:
            return 2.0
        return r.width() / r.height()

    def layout_for(self, arrays: heap_cells.BlockArrays) -> heap_cells.HeapLayout:
        """How to lay out the heap ``arrays`` in this map (compare mode's rows
        override it to share one address scale)."""
        return heap_cells.choose_layout(arrays.brk, self.view_aspect(), self.max_cells,
                                        arrays.mean_size(), self.layout_)

    def show_heap(self, strategy, record=None, ids_source=None, blocks=None) -> None:
        """Draw ``strategy``'s heap (None: nothing loaded) and light up what
        ``record`` (the shown step's OpRecord) touched.  ``ids_source()``
        gives {payload: trace id} for the hover text; ``blocks`` may pass a
        walk() already made."""
        if strategy is None:
            arrays = heap_cells.block_arrays([], 0)
        else:
            arrays = heap_cells.block_arrays(strategy.walk_tuples() if blocks is None else blocks,
                                             strategy.arena.brk)
        self.show_blocks(arrays, record, ids_source)

    def show_blocks(self, arrays: heap_cells.BlockArrays, record=None, ids_source=None,
                    places_source=None) -> None:
        """Draw a heap given as block columns (the fast path the benchmark times).
        ``places_source()`` gives {free block: where the structure keeps it}
        for the hover text."""
        self.blocks = arrays
        self.record = record
        self._ids_source = ids_source
        self._ids = None
        self._places_source = places_source
        layout = self.layout_for(arrays)
        self.image, self.layout_ = heap_cells.heap_image(arrays, layout=layout, scratch=self._scratch)
        self.image_item.setImage(self.image, autoLevels=False)
        self.image_item.setRect(QRectF(0, 0, layout.row_bytes, layout.rows))
        axis = self.plot.getAxis("left")
        if axis.row_bytes != layout.row_bytes:
            axis.row_bytes = layout.row_bytes
            axis.picture = None            # redraw the tick labels
            axis.update()
        self.empty_text.setVisible(arrays.brk == 0)
        self.empty_text.setPos(layout.row_bytes / 2, 0.5)
        self._draw_separators()
        self._draw_step(record)
        self._draw_marks()
        self.scale_label.setText(self._scale_text())
        if self.follow:
            self.fit()
        # The hover line described the old heap: describe the same spot in the new one.
        if self._hover_pos is not None:
            self.info.setText(self.describe_address(self.address_at(self._hover_pos)))

    def _scale_text(self) -> str:
        lay = self.layout_
        if lay is None or self.blocks.brk == 0:
            return ""
        return (f"heap {human_bytes(self.blocks.brk)} in {len(self.blocks):,} blocks · "
                f"1 cell = {lay.bytes_per_cell} B · 1 row = {human_bytes(lay.row_bytes)}")

    def _draw_separators(self) -> None:
        """A white tick at the start of every block and a white gap between rows."""
        b, lay = self.blocks, self.layout_
        if 0 < len(b) <= MAX_SEPARATED_BLOCKS:
            rows, x = np.divmod(b.addr[1:], lay.row_bytes)
            inside = x > 0                      # a block starting a row needs no tick
            rows, x = rows[inside].astype(np.float64), x[inside].astype(np.float64)
            xs = np.repeat(x, 2)
            ys = np.empty(2 * len(rows))
            ys[0::2] = rows + 0.12
            ys[1::2] = rows + 0.88
            self.separator_item.setPath(pg.arrayToQPath(xs, ys, connect="pairs"))
        else:
            self.separator_item.setPath(QPainterPath())
        if 1 < lay.rows <= MAX_ROW_GAPS:
            ys = np.repeat(np.arange(1, lay.rows, dtype=np.float64), 2)
            xs = np.tile(np.array([0.0, float(lay.row_bytes)]), lay.rows - 1)
            self.row_gap_item.setPath(pg.arrayToQPath(xs, ys, connect="pairs"))
        else:
            self.row_gap_item.setPath(QPainterPath())

    def _draw_step(self, record) -> None:
        """Outline what the shown step did."""
        row_bytes = self.layout_.row_bytes
        searched, placed, released, pointers = [], [], [], []
        failed = None
        if record is not None and record.events:
            for ev in record.events:
                if isinstance(ev, Visit):
                    searched.append((ev.addr, ev.size))
                elif isinstance(ev, Placed):
                    placed.append((ev.addr, ev.size))
                elif isinstance(ev, Released):
                    released.append((ev.addr, ev.size))
                elif isinstance(ev, Coalesce):
                    released.append((ev.low_addr, ev.low_size + ev.high_size))
                elif isinstance(ev, PointerMove) and ev.new is not None and ev.new >= 0:
                    pointers.append(ev.new)
                elif isinstance(ev, GrowFailed):
                    failed = ev.increment
        if record is not None and record.failed:
            failed = failed or max(record.request, 1)
        self.searched_item.setPath(_path_of(searched, row_bytes))
        self.placed_item.setPath(_path_of(placed, row_bytes))
        self.released_item.setPath(_path_of(released, row_bytes))
        self._number_visits(searched, row_bytes)
        if pointers:
            pts = [self.layout_.point_of(a) for a in pointers[-1:]]
            self.pointer_item.setData(pos=[(x, y + 1) for x, y in pts])
        else:
            self.pointer_item.setData(pos=[])
        brk = self.blocks.brk
        self._extra_rows = 0
        if failed:
            # Where the heap would have had to grow: right after the break.
            self.failed_item.setPath(_path_of([(brk, failed)], row_bytes))
            self._extra_rows = max(0, -(-(brk + failed) // row_bytes) - self.layout_.rows)
            kind = getattr(record, "kind", "malloc")
            self.banner.setText(f"✗ {kind}({record.request}) failed: no block fits "
                                f"and the heap cannot grow by {failed:,} bytes")
            self.banner.adjustSize()
            self._place_banner()
            self.banner.show()
            self._flash_left = 6
            self._flash.start()
        else:
            self.failed_item.setPath(QPainterPath())
            self.banner.hide()
            self._flash.stop()

    def _number_visits(self, searched, row_bytes: int) -> None:
        """Write 1, 2, 3... on the examined blocks, in search order."""
        shown = searched if len(searched) <= MAX_NUMBERED_VISITS else []
        while len(self._order_labels) < len(shown):
            # above the block's first byte, so the number never hides the block
            label = pg.TextItem("", color="k", fill=pg.mkBrush(255, 255, 255, 220), anchor=(0.5, 1))
            label.setFont(QFont(self.font().family(), 9, QFont.Bold))
            label.setZValue(20)
            self.plot.addItem(label)
            self._order_labels.append(label)
        for i, label in enumerate(self._order_labels):
            if i < len(shown):
                addr, size = shown[i]
                x, y = self.layout_.point_of(addr)
                label.setText(str(i + 1))
                label.setPos(x + min(size, row_bytes - x) / 2, y)
                label.show()
            else:
                label.hide()

    def _flash_tick(self) -> None:
        self._flash_left -= 1
        self.failed_item.setVisible(self._flash_left % 2 == 0)
        if self._flash_left <= 0:
            self.failed_item.setVisible(True)
            self._flash.stop()

    def _place_banner(self) -> None:
        w = self.plot_widget.width()
        self.banner.move(max(0, (w - self.banner.width()) // 2), 8)

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._place_banner()
        QTimer.singleShot(0, self._relayout_if_needed)

    def _relayout_if_needed(self) -> None:
        if self.layout_ is None:
            return
        wanted = self.layout_for(self.blocks)
        if wanted != self.layout_:
            self.show_blocks(self.blocks, self.record, self._ids_source, self._places_source)

    # ------------------------------------------------------------- zoom / pan
    def fit(self) -> None:
        """Show the whole heap (and a failure marker past it)."""
        self.follow = True
        lay = self.layout_
        rows = max(lay.rows + self._extra_rows, 1)
        self.vb.setRange(xRange=(0, lay.row_bytes), yRange=(0, rows), padding=0.01)

    def _user_moved_view(self, *_):
        self.follow = False

    # ------------------------------------------------------------------ hover
    def address_at(self, scene_pos) -> int:
        """The heap address drawn at a scene position, or -1 off the heap."""
        if self.layout_ is None or not self.vb.sceneBoundingRect().contains(scene_pos):
            return -1
        p = self.vb.mapSceneToView(scene_pos)
        x, y = p.x(), p.y()
        row_bytes = self.layout_.row_bytes
        if not (0 <= x < row_bytes and y >= 0):
            return -1
        return int(y) * row_bytes + int(x)

    def scene_pos_of(self, address: int) -> QPointF:
        """Scene position of the middle of the byte at ``address`` (tests hover with it)."""
        x, y = self.layout_.point_of(address)
        return self.vb.mapViewToScene(QPointF(x + 0.5, y + 0.5))

    def describe_address(self, address: int) -> str:
        """What is at ``address``, in words, for the hover line (the same
        words as the structure view's, :mod:`gui.block_facts`)."""
        if address is None or address < 0:
            return " "
        return block_facts.describe_address(self.blocks, address, self._trace_ids(), self._places_source)

    def _trace_ids(self) -> dict:
        if self._ids is None:
            self._ids = self._ids_source() if self._ids_source else {}
        return self._ids

    def _mouse_moved(self, scene_pos) -> None:
        self._hover_pos = scene_pos
        address = self.address_at(scene_pos)
        block = block_facts.block_start(self.blocks, address)
        self._own_hover = block
        text = self.describe_address(address)
        self.info.setText(text)
        self.hovered.emit(address)
        self.block_hovered.emit(-1 if block is None else block)
        if address >= 0 and self.plot_widget.underMouse():
            QToolTip.showText(self.plot_widget.mapToGlobal(
                self.plot_widget.mapFromScene(scene_pos)), text.replace(" · ", "\n"), self.plot_widget)

    def _mouse_clicked(self, event) -> None:
        if event.button() != Qt.LeftButton or event.double():
            return
        address = self.address_at(event.scenePos())
        block = block_facts.block_start(self.blocks, address)
        self.set_selection(block)
        self.block_clicked.emit(-1 if block is None else block)

    # -------------------------------------------------------- selection, hover
    def set_selection(self, addr: int | None) -> None:
        """Outline the block holding ``addr`` (None clears)."""
        self.selected = addr
        self._draw_marks()

    def _draw_marks(self) -> None:
        """Outline the selected block and the block hovered in another view."""
        lay = self.layout_
        if lay is None:
            return
        path = self._block_path(self.selected)
        self.selected_outer.setPath(path)
        self.selected_item.setPath(path)
        foreign = self.hover_block if self.hover_block != self._own_hover else None
        self.hover_item.setPath(self._block_path(foreign))

    def _block_path(self, addr: int | None) -> QPainterPath:
        i = -1 if addr is None else self.blocks.index_at(addr)
        if i < 0:
            return QPainterPath()
        return _path_of([(int(self.blocks.addr[i]), int(self.blocks.size[i]))], self.layout_.row_bytes)

    def selected_range(self) -> tuple[int, int] | None:
        """(address, size) of the block the selection outline is drawn around,
        read back from the outline's path (None when nothing is outlined)."""
        path = self.selected_item.path()
        if path.isEmpty():
            return None
        lay = self.layout_
        # the path's first rectangle starts at the block's first byte
        first = path.toSubpathPolygons()[0].boundingRect()
        start = int(round(first.top())) * lay.row_bytes + int(round(first.left()))
        i = self.blocks.index_at(start)
        return int(self.blocks.addr[i]), int(self.blocks.size[i])

    # ---------------------------------------------------------- the model
    def model_bound(self) -> None:
        self._model_shown()
        self._model_step()
        self.set_selection(self.model.selection)
        self._model_hover(self.model.hover)

    def _model_shown(self) -> None:
        self.follow = True      # a new timeline: show its whole heap

    def _model_step(self, position: int | None = None) -> None:
        step = self.model.step(self.row)
        if step is None:
            self.show_heap(None)
            return
        self.show_blocks(step.blocks, step.record, step.ids_source, lambda: step.places)

    def _model_hover(self, addr) -> None:
        self.hover_block = addr
        self._draw_marks()
        if addr is not None and addr != self._own_hover:
            # hovered in another view: say the same facts here
            self.info.setText(self.describe_address(addr))

    def leaveEvent(self, event) -> None:
        super().leaveEvent(event)
        if self._own_hover is not None:
            self._own_hover = None
            self.block_hovered.emit(-1)

    def cell_colour(self, address: int) -> tuple[int, int, int, int]:
        """RGBA drawn for the cell holding ``address``, read from the rendered QImage."""
        self.image_item.render()
        row, col = self.layout_.cell_of(address)
        c = self.image_item.qimage.pixelColor(col, row)
        return c.red(), c.green(), c.blue(), c.alpha()


