"""Compare mode's view: one row per strategy at one step, and a live ranking.

The model (:class:`~heapscope.gui.show_model.ShowModel`) shows several timelines of one
trace at one position, one *row* each (``model.show([key, ...])``); this view
draws them one above the other so that a class can see, at the same moment
of the program, what each policy has made of the heap:

* each :class:`CompareRow` has the strategy's name and its rank, compact
  gauges (heap size, external fragmentation, search length of this step and
  the mean so far), its heap map and its structure view (collapsible per
  row), all bound to the model's row (:meth:`Subscriber.bind` with ``row=i``);
* every row's map is drawn at **one address scale** (:class:`SharedScale`):
  the same bytes per cell and per map row, and as many map rows as the
  biggest heap needs, so a heap twice as big is drawn twice as long; zooming
  or panning one map moves them all;
* the block of the **current request** (the shown step's trace id) is
  outlined in every row, with its id on a label over it that the search's
  numbers keep clear of, vermillion for a malloc or realloc (where it
  went), black for a free (what it went back into); under the map, what the
  strategy did with it;
* the :class:`RankingTable` ranks the strategies by what
  :func:`heapscope.allocators.metrics.summarize` says of the replay up to the shown
  step (:mod:`heapscope.gui.ranking`): waste, utilisation, search length, work per
  operation, failed requests; click a heading to rank by it.

One timeline drives all rows: the window's timeline bar, player, step
animator and keys move the model, and every row follows the model's
position.  Animated steps and micro-steps move the rows in lockstep, each
through its own step's events (``ShowModel.event_in_row``); a row outlines
the request and says its outcome once it shows its whole step, so a
micro-step never gives away where a search will end.  Clicking a block
selects it in its own row (map and structure view): addresses mean nothing
across strategies.
"""

from __future__ import annotations

import math

import pyqtgraph as pg
from PySide6.QtCore import QEvent, QPointF, QRectF, QSize, Qt, QTimer, Signal
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetrics, QPainterPath, QPen
from PySide6.QtWidgets import (QAbstractItemView, QFrame, QGraphicsPathItem, QGridLayout,
                               QHBoxLayout, QHeaderView, QLabel, QScrollArea, QSplitter,
                               QTableWidget, QTableWidgetItem, QToolButton, QVBoxLayout, QWidget)

from heapscope.allocators.registry import STRATEGIES
from heapscope.traces.trace import FREE

from . import axis_style, heap_cells, palette
from .gauges import NO_VALUE, human_bytes, percent
from .heap_map import HeapMapWidget, Legend, new_map_plot, typical_block_bytes
from .map_marks import folded_notes
from .ranking import MEASURE_BY_KEY, MEASURES, RunningSummary, ranked
from .step_words import outcome
from .structure_panel import StructurePanel
from .subscriber import Subscriber
from .theme import LIGHT, Presentation
from .turns import turns

#: compare mode shows this many strategies at least and at most
MIN_ROWS, MAX_ROWS = 2, 7
#: up to this many rows, the line under each row's map has two lines; with
#: more, one (elided, the whole text in its tooltip), so that seven rows fit a
#: 1280 x 720 projector (a map row is then 44 px of map and one line)
TWO_INFO_LINES_UP_TO = 4
#: up to this many rows, each row's structure view starts open
OPEN_STRUCTURES_UP_TO = 2
#: a row with its structure view open gets this many times the height of one without
OPEN_ROW_WEIGHT = 3
#: the height a row needs for a usable structure view (caption, a drawing of
#: 150 px, the status lines): rows shorter than this open theirs one at a time
STRUCTURE_ROW_PX = 330
#: a timeline of this many steps or more has its ranking summed up in a turn of its own
SUMMARY_LATER_FROM = 50_000
#: rows a long running summary grows by in one turn of the event loop (RankingTable._summarize_next)
SUMMARY_ROWS_PER_TURN = 1 << 16
#: the width of a row's name and gauges (px)
HEADER_WIDTH = 250
#: a map row is at least this tall on screen (px)
MIN_ROW_PX = 4
#: the colour of the current request's block: where a malloc put it, what a free gave it back to
REQUEST_PLACED = palette.VERMILLION
REQUEST_FREED = palette.BLACK


def request_block(step, blocks: heap_cells.BlockArrays) -> tuple[int, int] | None:
    """(address, size) of the block holding the shown step's request in
    ``blocks`` (the heap after the step): the block a malloc or realloc
    handed out, the free block a free gave its bytes back to.  None at step
    0 and for a request that failed."""
    t = step.position
    if t == 0:
        return None
    payload = int(step.timeline.series.payload[t - 1])
    if payload < 0:
        return None
    i = blocks.index_at(payload)
    if i < 0:
        return None
    return int(blocks.addr[i]), int(blocks.size[i])


def short_bytes(n: int) -> str:
    """A size in at most four digits: '352 KiB', '1.4 MiB', '96 B'."""
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            v = n / size
            return f"{v:.1f} {unit}" if v < 10 else f"{v:,.0f} {unit}"
    return f"{n} B"


# ------------------------------------------------------------ one scale
class SharedScale:
    """One address scale for every row: the layout of the biggest heap shown
    (bytes per cell, bytes per map row, map rows), the same for every row
    whatever its own map's shape (a row with its structure view open has a
    narrower, taller map than one without)."""

    def __init__(self) -> None:
        self.model = None
        #: () -> (aspect, height in px) of the maps the layout is made for
        #: (the view gives the smallest width and height of its rows' maps)
        self.geometry = None
        self._key = None
        self._layout: heap_cells.HeapLayout | None = None
        self._typical: tuple | None = None

    def layout(self, max_cells: int, at_least: int = 0) -> heap_cells.HeapLayout:
        """The layout of the biggest heap shown (and of ``at_least`` bytes)
        in maps of :attr:`geometry`: rows at least :data:`MIN_ROW_PX` tall,
        so that a short row still shows its blocks.  Rows are cut for the
        trace's typical block (:func:`heapscope.gui.heap_map.typical_block_bytes`), as
        the one map does, so the row length changes only when the biggest
        heap crosses a power of four.  At a micro-step the heaps before the
        step count too (a heap trimmed by the step is drawn whole until the
        trim)."""
        model = self.model
        steps = [model.step(r) for r in range(len(model.shown))]
        heap = max([s.blocks.brk for s in steps] + [int(at_least)])
        if model.event_index is not None:
            befores = [s.heap_before for s in steps]
            heap = max([heap] + [b.blocks.brk for b in befores if b is not None])
        aspect, height_px = self.geometry() if self.geometry is not None else (2.0, 0.0)
        typical = self._typical_bytes(steps)
        key = (heap, round(aspect, 1), int(height_px), max_cells, typical)
        if key != self._key:
            layout = heap_cells.choose_layout(heap, aspect, max_cells, typical)
            most_rows = max(1, int(height_px // MIN_ROW_PX)) if height_px else layout.rows
            for _ in range(16):
                if layout.rows <= most_rows:
                    break
                aspect *= 4           # half as many rows, twice as long
                layout = heap_cells.choose_layout(heap, aspect, max_cells, typical)
            self._layout = layout
            self._key = key
        return self._layout

    def _typical_bytes(self, steps) -> float | None:
        trace = self.model.trace
        if self._typical is None or self._typical[0] is not trace:
            self._typical = (trace, typical_block_bytes(trace))
        typical = self._typical[1]
        if typical is None:       # a trace without statistics: the heaps' mean block
            count = sum(len(s.blocks) for s in steps)
            typical = sum(s.blocks.brk for s in steps) / count if count else None
        return typical

    def heap(self) -> int:
        """The bytes the scale covers (the biggest heap shown)."""
        return self._layout.heap if self._layout is not None else 0


def _range_path(addr: int, size: int, row_bytes: int) -> QPainterPath:
    path = QPainterPath()
    for x, y, w, h in heap_cells.range_rects(addr, size, row_bytes):
        path.addRect(QRectF(x, y, w, h))
    return path


# ------------------------------------------------------------------ a row
class CompareHeapMap(HeapMapWidget):
    """A row's heap map: the shared address scale, no legend of its own, the
    current request outlined and labelled with its trace id, and the
    strategy's outcome on its footer line.  Selection and hover stay in the
    row (an address names different bytes in each strategy's heap)."""

    SUBSCRIBES = {signal: method for signal, method in HeapMapWidget.SUBSCRIBES.items()
                  if signal not in ("selection_changed", "hover_changed")}
    REQUESTS: dict = {}
    #: the map was laid out again for a new size
    relaid = Signal()
    #: what this row's strategy did with the shown step's request, in words
    outcome = ""
    #: a map at least this tall shows its row addresses and a big request label
    ID_LABEL_MIN_PX = 110
    #: the request label's font (points) in a tall map and in a short one
    LABEL_POINTS, SHORT_LABEL_POINTS = 11, 9

    def __init__(self, scale: SharedScale, parent=None, plot_widget=None) -> None:
        super().__init__(parent, plot_widget=plot_widget)
        self.scale = scale
        self.marks_layer.banner_may_fold = True
        self.legend.hide()
        self.plot_widget.setMinimumHeight(44)
        self.plot.hideAxis("bottom")
        axis = self.plot.getAxis("left")
        axis.showLabel(False)
        # a row's axes show no title: no SI prefix to work out when its view moves
        axis_style.without_si_prefix([axis, self.plot.getAxis("bottom")])
        # no axis title in a row: room for a 32-bit address only
        axis.setWidth(QFontMetrics(self.font()).horizontalAdvance("0x00000000") + 10)
        #: (address, size) of the current request's block, or None
        self.request: tuple[int, int] | None = None
        self.request_id: int | None = None
        self.request_item = QGraphicsPathItem()
        pen = QPen(QColor(REQUEST_PLACED))
        pen.setWidthF(3.5)
        pen.setCosmetic(True)
        pen.setJoinStyle(Qt.MiterJoin)
        self.request_item.setPen(pen)
        self.request_item.setBrush(QBrush(Qt.NoBrush))
        self.request_item.setZValue(18)
        self.plot.addItem(self.request_item)
        self.request_label = pg.TextItem("", color="w", fill=pg.mkBrush(REQUEST_PLACED), anchor=(0, 1))
        self.request_label.setFont(QFont(self.font().family(), self.LABEL_POINTS, QFont.Bold))
        self.request_label.setZValue(22)
        self.request_label.hide()
        self.plot.addItem(self.request_label)
        self.outcome = ""
        # The row's view box changes size without the row doing so (its
        # address axis shown or hidden with the row's height): the labels,
        # fixed in pixels at points of the view, are placed again (a number
        # stayed under "id 2782 ▼" in a row of seven).
        self.vb.sigResized.connect(self._view_resized)

    def render_if_rescaled(self) -> None:
        """Draw the step again if the shared scale now lays it out otherwise."""
        if self.layout_ is not None and self.layout_for(max(self.heap.blocks.brk, self.layout_.heap)) != self.layout_:
            self._render()

    def _view_resized(self, *_) -> None:
        if self.layout_ is not None:
            self._place_labels()

    def layout_for(self, heap_end: int) -> heap_cells.HeapLayout:
        scale = getattr(self, "scale", None)     # None while the base class builds the map
        if scale is None or scale.model is None:
            return super().layout_for(heap_end)
        return scale.layout(self.max_cells, heap_end)

    def _model_step(self, position: int | None = None) -> None:
        step = self.model.step(self.row) if self.model is not None else None
        self.outcome = outcome(step) if step is not None else ""
        if self._drawn_already(step):
            # Rows joining the shown ones (a big trace's rows, as each is
            # built) move no row already there: drawn again only if the
            # shared scale changed (each redraw was 6-10 ms a row a join).
            self.render_if_rescaled()
            return
        super()._model_step(position)

    def _drawn_already(self, step) -> bool:
        """The map shows ``step`` as it is: the same heap (the tracker's, not
        moved), the same record and event."""
        drawn = self.drawn_step
        return (step is not None and drawn is not None and self.layout_ is not None
                and drawn.heap is step.heap and drawn.record is step.record
                and self.event_index == self.model.event_in_row(self.row))

    def set_quiet(self, quiet: bool) -> None:
        super().set_quiet(quiet)
        self._show_info()

    def _show_row_label(self) -> None:
        # a row's axis has room for the addresses only (the side panel gives the scale)
        axis = self.plot.getAxis("left")
        if axis.label.isVisible():
            axis.showLabel(False)

    def _show_info(self) -> None:
        """The line under the map: the block under the mouse, or else what
        this strategy did with the request (once the row shows its whole
        step) and what the search's numbers do not say."""
        text = " "
        if self._hover_pos is not None:
            text = self.describe_address(self.address_at(self._hover_pos))
        if text == " " and not self.quiet:
            whole = self.shown_heap is self.heap
            # (a folded banner: the outcome says the failure; a folded note says its own words)
            notes = [n for n in folded_notes(self.marks_layer, self.pointers) if n != self.marks_layer._banner_words[0]]
            text = "; ".join(t for t in (self.outcome if whole else "", *notes, self.search_note) if t) or " "
        self.info.setText(text)

    def _draw_marks_of_step(self) -> None:
        super()._draw_marks_of_step()
        if hasattr(self, "request_item"):     # not while the base class builds the map
            # before the labels are placed (the render places them next)
            self._draw_request(place=False)

    def _draw_request(self, place: bool = True) -> None:
        """Outline the request's block, once the row shows its whole step (a
        micro-step before the end would give away where the search ends);
        ``place``: put the search's numbers out of its label's way now."""
        step = self.model.step(self.row) if self.model is not None else None
        # (quiet: predict mode asks about the next malloc; the last one's block is no help)
        whole = self.shown_heap is self.heap and not self.quiet
        self.request = request_block(step, self.blocks) if step is not None and whole else None
        lay = self.layout_
        if self.request is None or lay is None:
            self.request_id = None
            self.request_item.setPath(QPainterPath())
            self.request_label.hide()
            return
        kind, ident, _ = step.timeline.op(step.position)
        self.request_id = ident
        colour = QColor(REQUEST_FREED if kind == FREE else REQUEST_PLACED)
        pen = self.request_item.pen()
        pen.setColor(colour)
        self.request_item.setPen(pen)
        addr, size = self.request
        self.request_item.setPath(_range_path(addr, size, lay.row_bytes))
        x, y = lay.point_of(addr)
        middle = x + min(size, lay.row_bytes - x) / 2
        label = self.request_label
        # The id in white on the request's colour in every row, smaller in a
        # short map: the one mark that links the rows must be seen in each.
        # The pointer of the label stands over the block, the text away from the edge.
        points = self.LABEL_POINTS if self._tall() else self.SHORT_LABEL_POINTS
        if label.textItem.font().pointSize() != points:
            label.setFont(QFont(self.font().family(), points, QFont.Bold))
        # the block by its name where the trace gives one (a lesson's, the sandbox's)
        name = step.names.get(ident) if step.names else None
        said = name if name is not None else f"id {ident}"
        label.fill = pg.mkBrush(colour)
        label.setColor("w")
        label.show()
        self._request_at = (said, middle, y, middle < lay.row_bytes / 2)
        self._put_request_label(*self._request_at)
        if place:
            self._place_labels()      # the search's numbers make way for it

    def _place_labels(self) -> None:
        # the view moved (a new scale, a resize): the request's label chooses
        # its place again, off the pointers' symbols where they are now
        if getattr(self, "request_label", None) is not None and self.request_label.isVisible():
            self._put_request_label(*self._request_at)
        super()._place_labels()

    def _put_request_label(self, said: str, x: float, y: float, left: bool) -> None:
        """The request's label (``said``: the block's name, or ``id N``) at ``x`` of the block's row ``y``: above the
        block, its text towards the middle; else with its text the other way,
        else under the block -- the first that covers no pointer's symbol,
        no block the search's numbers point at nor the step's marks, and
        stays in the view (it hid next fit's rover at step 2004).  Each place
        may be lifted off the symbols under a short row, or nudged sideways
        off one by up to half a symbol (its arrow still on the block).  Where
        none is clean: in a tall row, the place in view covering the least of
        them (lifted off next fit's rover above the first row, it was cut at
        the map's top edge in presenter mode); in a short row, the place in
        view off every symbol covering the fewest blocks; only where no
        place is in view, the first (issue 24)."""
        label = self.request_label
        symbols = [QRectF(QPointF(a, b), QPointF(c, d)) for a, b, c, d in self.pointers.symbol_squares(self.vb)]
        # the blocks the search's numbers point at and the step's marks, as
        # the numbers keep off them (a piece with room for eight labels does not count)
        label.updateTransform()
        room = 8 * label.boundingRect().width() * label.boundingRect().height()
        blocks = [QRectF(QPointF(a, b), QPointF(c, d)) for a, b, c, d, area in
                  self.labels.kept_clear(self.vb, self.layout_.row_bytes, self.marks.placed + self.marks.released)
                  if area < room]
        view = self.vb.sceneBoundingRect()
        first = None
        in_view = []            # (area of symbols covered, of blocks, order, text, anchor, at)
        places = []
        for arrow, at, v in (("▼", y, 1), ("▲", y + 1, 0)):
            sides = [(f"{arrow} {said}", (0, v)), (f"{said} {arrow}", (1, v))]
            places += [(text, anchor, at) for text, anchor in (sides if left else sides[::-1])]

        def covered(r: QRectF, hits: list) -> float:
            return sum(r.intersected(q).width() * r.intersected(q).height() for q in hits)

        def weigh(r: QRectF, text, anchor, at, at_x=x) -> bool:
            """Note the place if it is in the view; True if it covers nothing."""
            hits = [q for q in symbols if r.intersects(q)]
            over = [q for q in blocks if r.intersects(q)]
            if view.contains(r):
                in_view.append((covered(r, hits), covered(r, over), len(in_view), text, anchor, at, at_x))
                return not hits and not over
            return False

        for text, anchor, at in places:
            label.setText(text)
            label.setAnchor(anchor)
            label.setPos(x, at)
            label.updateTransform()
            r = label.mapRectToScene(label.boundingRect())
            hits = [q for q in symbols if r.intersects(q)]
            if weigh(r, text, anchor, at):
                return
            if hits and anchor[1] == 1:
                # above a short row: lift it clear of the symbols under the row
                lift = max(r.bottom() - q.top() for q in hits) + 1
                r = r.translated(0, -lift)
                at -= lift * self.vb.viewPixelSize()[1]
                label.setPos(x, at)
                if weigh(r, text, anchor, at):
                    return
                r, at = r.translated(0, lift), at + lift * self.vb.viewPixelSize()[1]
            if hits and abs(dx := self._sidestep(r, hits, anchor)) <= self.pointers.half + 1:
                # a nudge sideways off the symbol, the arrow still on its block
                # (the symbol is drawn at the block): V7's allocp in the top row
                nudged = x + dx * self.vb.viewPixelSize()[0]
                if weigh(r.translated(dx, 0), text, anchor, at, nudged):
                    label.setPos(nudged, at)
                    return
            first = first or (text, anchor, at, x)
        # No place covers nothing.  A tall row's label may cover a little of a
        # symbol rather than be cut; a short row's (seven rows) takes the place
        # in view off every symbol, covering the fewest blocks; lifted off V7's
        # allocp in the top row, the first place was cut at the map's top.
        if in_view and self._tall():
            best = min(in_view, key=lambda c: (c[0] + c[1], c[2]))[3:]
        elif in_view:
            best = min(in_view)[3:]
        else:
            best = first
        if best is not None:
            label.setText(best[0])
            label.setAnchor(best[1])
            label.setPos(best[3], best[2])

    @staticmethod
    def _sidestep(r: QRectF, hits: list, anchor) -> float:
        """How far (scene pixels) to move ``r`` along its text's direction, away
        from its arrow, to clear the symbols ``hits``."""
        if anchor[0] == 1:          # the text to the left of its arrow
            return -(r.right() - min(q.left() for q in hits) + 1)
        return max(q.right() for q in hits) - r.left() + 1

    def _tall(self) -> bool:
        return self.vb.sceneBoundingRect().height() >= self.ID_LABEL_MIN_PX

    def _number_visits(self) -> None:
        super()._number_visits()
        if self.skip_label.isVisible() and not self._tall():
            # "+N not numbered" covered much of a short row's map; the line
            # under it says the same ("1–4 and 6–8 numbered, 3 in between not")
            self.skip_label.hide()
            self._number_places = [p for p in self._number_places if p[0] is not self.skip_label]

    def _reserved_rects(self) -> list:
        label = getattr(self, "request_label", None)     # None while the base class builds the map
        if label is None or not label.isVisible():
            return []
        # its transform follows the view lazily (at its next paint): bring it up to date
        label.updateTransform()
        r = label.mapRectToScene(label.boundingRect())
        return [(r.left() - 2, r.top() - 2, r.right() + 2, r.bottom() + 2)]

    def request_range(self) -> tuple[int, int] | None:
        """(address, size) of the block the request outline is drawn round,
        read back from the outline (None when nothing is outlined)."""
        return self.block_outlined_by(self.request_item.path())

    def _scale_text(self) -> str:
        # The scale is the same in every row (the side panel says it) and the
        # heap's size is in the row's gauges: the line under the map is left
        # whole to the outcome, which a narrow map (structure open) cut.
        return ""

    def fit(self) -> None:
        """The whole shared scale, with room above the first row for the request's label."""
        self.follow = True
        lay = self.layout_
        if lay is None:
            return
        rows = max(lay.rows + self._extra_rows, 1)
        height = max(self.vb.sceneBoundingRect().height(), 20.0)
        points = self.LABEL_POINTS if self._tall() else self.SHORT_LABEL_POINTS
        room_px = min(2.2 * points + 4, 0.4 * height)
        room = rows * room_px / (height - room_px)
        self.vb.setRange(xRange=(0, lay.row_bytes), yRange=(-room, rows), padding=0.0)

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        timer = self.__dict__.get("_resize_timer")
        if timer is None:      # owned by the map: it dies with it
            timer = self._resize_timer = QTimer(self)
            timer.setSingleShot(True)
            timer.timeout.connect(self._resized)
        timer.start(0)

    def _resized(self) -> None:
        # the label room and the label's form depend on the map's height
        if self.layout_ is None:
            return
        # row addresses where there is room for them (the side panel gives the scale)
        self.plot.showAxis("left", self.plot_widget.height() >= self.ID_LABEL_MIN_PX)
        if self.follow:
            self.fit()
        if self.model is not None:
            self._draw_request()
        self.relaid.emit()


class CompactGauges(Subscriber, QWidget):
    """A row's gauges in two lines: heap size and external fragmentation now,
    search length of this step and the mean so far."""

    SUBSCRIBES = {"step_changed": "_model_step", "shown_changed": "_model_step"}

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        grid = QGridLayout(self)
        grid.setContentsMargins(0, 0, 0, 0)
        grid.setHorizontalSpacing(5)
        grid.setVerticalSpacing(0)
        big = QFont(self.font())
        big.setPointSizeF(self.font().pointSizeF() * 1.08)
        big.setBold(True)
        self.values: dict[str, QLabel] = {}
        gauges = (("heap", "heap", palette.BLACK, 0, 0, 1,
                   "heap size H now (break − base; in a pool, the part touched so far)"),
                  ("frag", "frag.", palette.VERMILLION, 0, 2, 1,
                   "external fragmentation now: 1 − largest free block / free bytes"),
                  ("search", "search", palette.BLUISH_GREEN, 1, 0, 3,
                   "blocks (nodes) this step examined, and the mean over the mallocs so far"))
        #: key -> (its name's label, its value's colour)
        self._names: dict[str, tuple[QLabel, str]] = {}
        for key, title, colour, line, col, span, tip in gauges:
            name = QLabel(title)
            value = QLabel(NO_VALUE)
            value.setFont(big)
            value.setToolTip(tip)
            name.setToolTip(tip)
            grid.addWidget(name, line, col)
            grid.addWidget(value, line, col + 1, 1, span)
            self.values[key] = value
            self._names[key] = (name, colour)
        grid.setColumnStretch(1, 1)
        grid.setColumnStretch(3, 1)
        self.apply_presentation(Presentation())

    def apply_presentation(self, pres: Presentation) -> None:
        """The theme's colours: names in its muted ink, the heap's value in
        its contrast colour (black on light, white on dark), the others in
        their hue.  Setting a style sheet again also gives the labels the
        application's font as it is now (presenter mode)."""
        for key, (name, colour) in self._names.items():
            name.setStyleSheet(f"color: {pres.muted};")
            shown = pres.theme.contrast if colour == palette.BLACK else colour
            self.values[key].setStyleSheet(f"color: {shown};")

    def model_bound(self) -> None:
        self._model_step()

    def _model_step(self, position: int | None = None) -> None:
        step = self.model.step(self.row) if self.model is not None else None
        m = step.measures_row if step is not None else None
        if m is None:
            for v in self.values.values():
                v.setText(NO_VALUE)
            return
        self.values["heap"].setText(short_bytes(m["heap"]))
        self.values["frag"].setText(percent(m["external"]))
        mean = m["search_mean"]
        self.values["search"].setText(f"{m['search']}" + ("" if math.isnan(mean) else f" · mean {mean:.2f}"))

    def texts(self) -> dict[str, str]:
        return {k: v.text() for k, v in self.values.items()}


class RowStructurePanel(StructurePanel):
    """A row's structure view: the model's row, but its selection and hover
    stay in the row (see :class:`CompareRow`)."""

    SUBSCRIBES = {signal: method for signal, method in StructurePanel.SUBSCRIBES.items()
                  if signal not in ("selection_changed", "hover_changed")}
    block_selected = Signal(object)

    #: a row's drawing is at least this tall: a shorter row scrolls it
    MIN_DRAWING_PX = 150

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.selected: int | None = None
        self.facts.hide()

    def _view_for(self, kind: str):
        view = super()._view_for(kind)
        # In a row the caption gets the whole width (the buttons beside it
        # squeezed it into a tall column that hid the drawing); the drawing
        # follows the step, as it does by default.
        for button in (getattr(view, "follow_button", None), getattr(view, "fit_button", None)):
            if button is not None:
                button.hide()
        # the scene views' drawing, or the card views' canvas
        drawing = getattr(view, "graphics", None) or getattr(view, "canvas", None)
        if drawing is not None:
            drawing.setMinimumHeight(self.MIN_DRAWING_PX)
        return view

    def redraw(self) -> None:
        super().redraw()
        if self.view is not None:
            self.view.set_selection(self.selected)

    def select(self, addr) -> None:
        self.selected = addr
        if self.view is not None and not self.__dict__.get("_redraw_pending"):
            self.view.set_selection(addr)

    def _view_clicked(self, addr: int) -> None:
        self.block_selected.emit(None if addr is None or addr < 0 else addr)

    def _view_hovered(self, addr: int) -> None:
        pass

    def _model_hover(self, addr) -> None:
        pass


class CompareRow(QFrame):
    """One strategy in compare mode: name, rank and gauges; heap map; structure view."""

    #: the row's structure view was opened or closed (argument: open)
    structure_toggled = Signal(bool)

    def __init__(self, scale: SharedScale, parent=None, heap_map: "CompareHeapMap | None" = None) -> None:
        """``heap_map``: the row's map, made ahead (CompareView._row_parts)."""
        super().__init__(parent)
        self.setFrameShape(QFrame.StyledPanel)
        self.setObjectName("compareRow")
        self.row = -1
        #: the timeline key (strategy, parameters) the row was bound to
        self.key = None
        self.name = QLabel("")
        title_font = QFont(self.font())
        title_font.setPointSizeF(self.font().pointSizeF() * 1.3)
        title_font.setBold(True)
        self.name.setFont(title_font)
        self.rank = QLabel("")
        self.rank.setStyleSheet(f"color: white; background: {palette.BLUE}; border-radius: 3px;"
                                "padding: 0px 5px; font-weight: bold;")
        self.rank.setToolTip("rank in the table (by its ranking measure)")
        self.structure_button = QToolButton()
        self.structure_button.setCheckable(True)
        self.structure_button.setFocusPolicy(Qt.NoFocus)
        self.structure_button.setAutoRaise(True)
        self.structure_button.toggled.connect(self.set_structure_visible)
        self.gauges = CompactGauges()
        head_line = QHBoxLayout()
        head_line.setContentsMargins(0, 0, 0, 0)
        head_line.setSpacing(4)
        head_line.addWidget(self.rank)
        head_line.addWidget(self.name, 1)
        head_line.addWidget(self.structure_button)
        header = self.header = QWidget()
        header.setFixedWidth(HEADER_WIDTH)
        head = QVBoxLayout(header)
        head.setContentsMargins(6, 1, 2, 1)
        head.setSpacing(0)
        head.addLayout(head_line)
        head.addWidget(self.gauges)
        head.addStretch(1)
        self.map = heap_map if heap_map is not None else CompareHeapMap(scale)
        self.structure = RowStructurePanel()
        # A short row scrolls its structure view rather than squeeze its
        # title, drawing and notes on top of each other.
        self.structure_scroll = QScrollArea()
        self.structure_scroll.setWidget(self.structure)
        self.structure_scroll.setWidgetResizable(True)
        self.structure_scroll.setFrameShape(QFrame.NoFrame)
        self.structure_scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        self.structure_scroll.setMinimumWidth(self.structure.minimumWidth() + 20)
        self.split = QSplitter(Qt.Horizontal)
        self.split.addWidget(self.map)
        self.split.addWidget(self.structure_scroll)
        self.split.setCollapsible(0, False)
        self.split.setStretchFactor(0, 3)
        self.split.setStretchFactor(1, 2)
        self.split.splitterMoved.connect(self._split_moved)
        #: the row's predict band (gui/predict_bar.py), given by compare mode
        self.predict_bar = None
        self.right = QVBoxLayout()
        self.right.setContentsMargins(0, 0, 0, 0)
        self.right.setSpacing(2)
        self.right.addWidget(self.split, 1)
        box = QHBoxLayout(self)
        box.setContentsMargins(0, 0, 2, 0)
        box.setSpacing(2)
        box.addWidget(header)
        box.addLayout(self.right, 1)
        self.map.block_clicked.connect(self._select)
        self.structure.block_selected.connect(self._select)
        self.set_structure_visible(False)

    def apply_presentation(self, pres: Presentation) -> None:
        """The row's map, structure view and gauges in ``pres``'s theme and
        sizes; the header as much wider as its text is bigger."""
        self.header.setFixedWidth(round(HEADER_WIDTH * pres.text_scale))
        self.map.apply_presentation(pres)
        self.structure.apply_presentation(pres)
        self.gauges.apply_presentation(pres)

    def bind(self, model, row: int) -> None:
        self.row = row
        self.key = model.shown[row]
        self.map.bind(model, row)
        self.gauges.bind(model, row)
        self.structure.bind(model, row)
        step = model.step(row)
        name = step.strategy_name if step is not None else ""
        self.name.setText(name)
        cls = STRATEGIES.get(name)
        self.name.setToolTip(cls.title if cls is not None else name)
        self._select(None)

    def unbind(self) -> None:
        for view in (self.map, self.gauges, self.structure):
            view.unbind()
        self.row = -1
        self.key = None

    @property
    def bound(self) -> bool:
        return self.row >= 0

    def set_predict_bar(self, bar) -> None:
        """Show ``bar`` (this row's predict band) above the row's map."""
        if self.predict_bar is not None:
            self.right.removeWidget(self.predict_bar)
            self.predict_bar.deleteLater()
        self.predict_bar = bar
        self.right.insertWidget(0, bar)

    def set_quiet(self, quiet: bool) -> None:
        """Predict mode's open question: the heaps and pointers only."""
        self.map.set_quiet(quiet)
        self.structure.set_quiet(quiet)

    def set_rank(self, rank: int | None) -> None:
        self.rank.setText("" if rank is None else str(rank))
        self.rank.setVisible(rank is not None)

    def structure_visible(self) -> bool:
        return self.structure_scroll.isVisibleTo(self)

    def set_structure_visible(self, visible: bool) -> None:
        was = self.structure_visible()
        self.structure_scroll.setVisible(visible)
        if visible:
            sizes = self.split.sizes()
            if sizes[1] < 100:
                # half the row: a structure drawing needs the width more than the map
                total = max(sum(sizes), 500)
                self.split.setSizes([total // 2, total - total // 2])
        self._sync_button()
        if visible != was:
            self.structure_toggled.emit(visible)

    def _split_moved(self, *_) -> None:
        if self.split.sizes()[1] == 0:
            self.structure_scroll.hide()
            self.structure_toggled.emit(False)
        self._sync_button()

    def _sync_button(self) -> None:
        shown = self.structure_visible()
        with _blocked(self.structure_button):
            self.structure_button.setChecked(shown)
        self.structure_button.setText("◂" if shown else "▸")
        self.structure_button.setToolTip(("Hide" if shown else "Show") + " this strategy's free structure")

    def select(self, addr) -> None:
        """Select and outline the block at ``addr`` in this row's map and
        structure view (None clears), as a click on it does (a lesson's stop
        selects a block by its name in each row: gui/lesson_stop.py)."""
        self._select(addr)

    def _select(self, addr) -> None:
        addr = None if addr is None or addr < 0 else addr
        self.map.set_selection(addr)
        self.structure.select(addr)


class _blocked:
    def __init__(self, widget) -> None:
        self.widget = widget

    def __enter__(self):
        self.was = self.widget.blockSignals(True)

    def __exit__(self, *exc):
        self.widget.blockSignals(self.was)


# ---------------------------------------------------------------- ranking
class RankingTable(Subscriber, QWidget):
    """The strategies ranked by the replay up to the shown step, a row each,
    best first; the best value of each measure in bold.  Click a measure's
    heading to rank by it."""

    SUBSCRIBES = {"shown_changed": "_model_shown", "step_changed": "_model_step"}
    #: the table ranked again (argument: {strategy: rank, 1 = best})
    ranks_changed = Signal(object)

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.rank_by = MEASURES[0].key
        self.summaries: dict[str, RunningSummary] = {}
        #: (timeline, key, summary so far) of the rows whose summaries are
        #: still to make (_summarize_next), and whether it is due
        self._later: list = []
        self._summarizing = False
        self.rows: dict[str, dict] = {}
        self.order: list[str] = []
        #: the widest each column has been for these rows and this font
        #: (_fit_size): columns only grow while the same rows are shown
        self._widest: dict[int, int] = {}
        self._widest_for = None
        self.title = QLabel("")
        self.title.setWordWrap(True)
        f = QFont(self.font())
        f.setBold(True)
        self.title.setFont(f)
        self.table = QTableWidget(0, 2 + len(MEASURES))
        self.table.setHorizontalHeaderLabels(["#", "strategy"] + [m.heading for m in MEASURES])
        for i, m in enumerate(MEASURES):
            self.table.horizontalHeaderItem(2 + i).setToolTip(m.tip + "\nclick to rank by it")
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QAbstractItemView.NoEditTriggers)
        self.table.setSelectionMode(QAbstractItemView.NoSelection)
        self.table.setFocusPolicy(Qt.NoFocus)
        self.table.setHorizontalScrollBarPolicy(Qt.ScrollBarAsNeeded)
        self.table.setVerticalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        tf = QFont(self.font())
        tf.setPointSizeF(self.font().pointSizeF() * 1.1)
        self.table.setFont(tf)
        header = self.table.horizontalHeader()
        # sized once per redraw by _fit_size: ResizeToContents measured every
        # column again at each cell's setText (12 ms a step at 7 rows)
        header.setSectionResizeMode(QHeaderView.Fixed)
        header.setSectionsClickable(True)
        header.sectionClicked.connect(self._heading_clicked)
        self.table.verticalHeader().setSectionResizeMode(QHeaderView.Fixed)
        self.note = QLabel("Measured up to the shown step, as heapscope compare measures a "
                           "whole trace. Click a heading to rank by it.")
        self.note.setWordWrap(True)
        #: the background of each measure's best value (the theme's)
        self.best_background = LIGHT.best
        box = QVBoxLayout(self)
        box.setContentsMargins(0, 0, 0, 0)
        box.setSpacing(4)
        box.addWidget(self.title)
        box.addWidget(self.table)
        box.addWidget(self.note)

    def apply_presentation(self, pres: Presentation) -> None:
        """The theme's colours for the best values and the note; the columns
        sized again for the font (presenter mode)."""
        self.best_background = pres.theme.best
        self.note.setStyleSheet(f"color: {pres.muted};")
        self._widest = {}
        if self.model is not None and self.order:
            self.redraw()

    def model_bound(self) -> None:
        self._model_shown()

    def _model_shown(self) -> None:
        model = self.model
        kept = {id(tl): s for tl, s in getattr(self, "_kept", {}).values()}
        self._kept, self.summaries = {}, {}
        self._later = []
        for r, key in enumerate(model.shown):
            tl = model.timeline(r)
            summary = kept.get(id(tl))
            want = self._rows_of(tl, key)
            if summary is None or summary.source is not tl.series or summary.n > want:
                summary = RunningSummary()
            if want - summary.n >= SUMMARY_LATER_FROM:
                # a long series: summed up over turns of its own (_summarize_next)
                self._later.append((tl, key, summary))
                continue
            summary.extend(tl.series, want)
            self._keep(tl, summary)
        self._ranked_again()

    def _keep(self, tl, summary: RunningSummary) -> None:
        self._kept[tl.strategy_name] = (tl, summary)
        self.summaries[tl.strategy_name] = summary

    def _ranked_again(self) -> None:
        """The table with the summaries made so far; the rest later."""
        self.table.setRowCount(len(self.summaries))
        self.redraw()
        self._summarize_soon()

    def _summarize_soon(self) -> None:
        if self._later and not self._summarizing:
            self._summarizing = True
            turns().call_soon(self._summarize_next, self)

    def _summarize_next(self) -> None:
        """:data:`SUMMARY_ROWS_PER_TURN` more rows of the first summary still
        to make; when it has them all its row joins the table, ranked again.
        Seven rows of a million steps took 7-8 s in one go under load, one
        row of them 0.4-4.5 s (issue 25's stall probe), and the rows wait
        for none of it."""
        self._summarizing = False
        if self.model is None or not self._later:
            return
        tl, key, summary = self._later[0]
        if key not in self.model.shown or self.model.timelines().get(key) is not tl:
            self._later.pop(0)
            self._ranked_again()
            return
        want = self._rows_of(tl, key)
        summary.extend(tl.series, min(want, summary.n + SUMMARY_ROWS_PER_TURN))
        if summary.n < want:
            self._summarize_soon()
            return
        self._later.pop(0)
        self._keep(tl, summary)
        self._ranked_again()

    def _rows_of(self, tl, key) -> int:
        """The steps ``tl``'s summary covers: all of them, or those built so
        far of a timeline still building in the background (issue 25)."""
        return tl.built if self.model.building(key) else tl.series.n

    def _covering(self, t: int) -> None:
        """Summaries that end before step ``t`` (rows built in the background
        since they were made) grown by the rows built since; by many rows
        (a seek far past them once their timeline is built), its row leaves
        the table while they are summed up a turn at a time."""
        for r, key in enumerate(self.model.shown):
            tl = self.model.timeline(r)
            summary = self.summaries.get(tl.strategy_name)
            if summary is not None and summary.n < t:
                if summary.source is not tl.series:
                    summary = RunningSummary()
                want = self._rows_of(tl, key)
                if want - summary.n > SUMMARY_ROWS_PER_TURN:
                    del self.summaries[tl.strategy_name]
                    self._later.append((tl, key, summary))
                    continue
                summary.extend(tl.series, want)
                self._keep(tl, summary)
        if self.table.rowCount() != len(self.summaries):
            self.table.setRowCount(len(self.summaries))
        self._summarize_soon()

    def _model_step(self, position: int | None = None) -> None:
        # while playing, at most every PLAY_INTERVAL_MS (a table of 7 x 8
        # cells set and measured again cost 2 ms a frame)
        self.redraw_soon()

    def redraw(self) -> None:
        model = self.model
        if model is None:
            return
        t = model.position
        self._covering(t)
        self.rows = {name: s.at(t) for name, s in self.summaries.items()}
        self.order = ranked(self.rows, self.rank_by)
        measure = MEASURE_BY_KEY[self.rank_by]
        better = "lower" if measure.smaller_is_better else "higher"
        self.title.setText(f"Ranked by {measure.heading} ({better} is better), up to step {t:,}")
        best = {m.key: self._best(m) for m in MEASURES}
        bold = QFont(self.table.font())
        bold.setBold(True)
        plain = QFont(self.table.font())
        for i, name in enumerate(self.order):
            row = self.rows[name]
            self._set(i, 0, str(i + 1), plain, Qt.AlignCenter)
            self._set(i, 1, name, bold if i == 0 else plain, Qt.AlignLeft | Qt.AlignVCenter)
            for j, m in enumerate(MEASURES):
                v = row.get(m.key)
                is_best = v is not None and best[m.key] is not None and v == best[m.key]
                self._set(i, 2 + j, m.text(v), bold if is_best else plain, Qt.AlignRight | Qt.AlignVCenter,
                          self.best_background if is_best else None)
        for j, m in enumerate(MEASURES):
            item = self.table.horizontalHeaderItem(2 + j)
            item.setText(m.heading + (" ▲" if m.key == self.rank_by and m.smaller_is_better else
                                      " ▼" if m.key == self.rank_by else ""))
        self._fit_size()
        self.ranks_changed.emit({name: i + 1 for i, name in enumerate(self.order)})

    def _best(self, measure):
        """The best value of ``measure`` in the table; None when all are equal
        (nothing stands out) or there is none."""
        values = [r.get(measure.key) for r in self.rows.values()]
        values = [v for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))]
        if len(set(values)) < 2:
            return None
        return min(values) if measure.smaller_is_better else max(values)

    def _set(self, row: int, col: int, text: str, font, align, background=None) -> None:
        item = self.table.item(row, col)
        if item is None:
            item = QTableWidgetItem()
            self.table.setItem(row, col, item)
        if item.text() != text:
            item.setText(text)
        item.setFont(font)
        item.setTextAlignment(align)
        item.setBackground(QBrush(QColor(background)) if background else QBrush())

    def _fit_size(self) -> None:
        """The table as big as its cells: no scroll bar, nothing cut."""
        t = self.table
        failed = MEASURES.index(MEASURE_BY_KEY["failed"]) + 2
        # the failed column only when a request failed somewhere
        t.setColumnHidden(failed, not any(r.get("failed") for r in self.rows.values()))
        t.resizeColumnsToContents()
        # Never narrower than before for these rows: a jump changes the
        # values' widths ("9.8%", "12.3%"), and a table a few pixels narrower
        # or wider resized the side column and so every row's map, which
        # then laid itself out and drew again (a third of a jump at 7 rows).
        key = (tuple(self.summaries), t.font().key())
        if key != self._widest_for:
            self._widest, self._widest_for = {}, key
        for c in range(t.columnCount()):
            widest = self._widest[c] = max(self._widest.get(c, 0), t.columnWidth(c))
            if t.columnWidth(c) != widest:
                t.setColumnWidth(c, widest)
        t.resizeRowsToContents()
        w = 2 * t.frameWidth() + sum(t.columnWidth(c) for c in range(t.columnCount())
                                     if not t.isColumnHidden(c))
        h = t.horizontalHeader().height() + 2 * t.frameWidth()
        h += sum(t.rowHeight(r) for r in range(t.rowCount()))
        t.setFixedSize(w, h)

    def _heading_clicked(self, section: int) -> None:
        if section >= 2:
            self.set_rank_by(MEASURES[section - 2].key)

    def set_rank_by(self, key: str) -> None:
        if key not in MEASURE_BY_KEY:
            raise ValueError(f"unknown measure {key!r}")
        self.rank_by = key
        if self.model is not None:
            self.redraw()

    def shown_rows(self) -> list[dict]:
        """What the table shows, top to bottom: {'rank', 'strategy', measure key: text}."""
        out = []
        for i in range(self.table.rowCount()):
            cells = {"rank": self.table.item(i, 0).text(), "strategy": self.table.item(i, 1).text()}
            for j, m in enumerate(MEASURES):
                cells[m.key] = self.table.item(i, 2 + j).text()
            out.append(cells)
        return out


# ------------------------------------------------------------ the view
class VerticalScroll(QScrollArea):
    """A scroll area that scrolls up and down only, as wide as what it holds
    (and its scroll bar): the side column keeps the ranking table's width,
    and scrolls its notes and legend when the screen is short."""

    def __init__(self, widget: QWidget, parent=None) -> None:
        super().__init__(parent)
        self.setWidget(widget)
        self.setWidgetResizable(True)
        self.setFrameShape(QFrame.NoFrame)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        widget.installEventFilter(self)

    def _width(self, inner: int) -> int:
        return inner + self.verticalScrollBar().sizeHint().width()

    def minimumSizeHint(self) -> QSize:     # noqa: N802 (Qt's name)
        return QSize(self._width(self.widget().minimumSizeHint().width()), 0)

    def sizeHint(self) -> QSize:            # noqa: N802 (Qt's name)
        hint = self.widget().sizeHint()
        return QSize(self._width(hint.width()), hint.height())

    def eventFilter(self, obj, event) -> bool:     # noqa: N802 (Qt's name)
        if obj is self.widget() and event.type() == QEvent.LayoutRequest:
            self.updateGeometry()           # the table grew: so does the column
        return False


class CompareView(Subscriber, QWidget):
    """The rows, one per shown strategy, beside the ranking table and the legend."""

    SUBSCRIBES = {"shown_changed": "_model_shown", "step_changed": "_note_scale_soon"}
    #: a row's structure view opened or closed (argument: is any open now)
    structures_changed = Signal(bool)
    #: a block was clicked in a row's map or structure view: (row, address)
    #: (predict mode takes it as that row's answer)
    row_clicked = Signal(int, object)
    #: a row joined the view (it is in :attr:`rows` now)
    row_joined = Signal()
    #: every row shown has joined the view (after rows joined one per turn)
    rows_joined = Signal()

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.scale = SharedScale()
        #: rows missing when the model shows more join one per turn of the
        #: event loop (a view shown on screen only; compare mode sets it)
        self.join_in_turns = False
        self._joining = False
        #: rows made ahead (prepare_rows), not in the view yet; their hidden parent
        self._stock: list[CompareRow] = []
        self._stock_holder = QWidget(self)
        self._stock_holder.hide()
        self._prepare_to = 0
        #: the parts of the row in making, one a turn (_row_parts), or None
        self._making = None
        #: the splitter's empty slots for the rows still to join
        self._slots: list[QFrame] = []
        #: rows to show in the end, more than shown now while they build (expect_rows)
        self._expected = 0
        #: a row joined since the last arrangement asks for the structure views to open
        self._open_later = False
        self.scale.geometry = self._map_geometry
        self._note_timer = QTimer(self)
        self._note_timer.setSingleShot(True)
        self._note_timer.timeout.connect(self._note_scale)
        self.rows: list[CompareRow] = []
        self._structures_open: bool | None = None
        #: the row whose structure view was opened last (one at a time: the one open)
        self._focused: CompareRow | None = None
        self._all_at_once = False
        self.rows_split = QSplitter(Qt.Vertical)
        self.rows_split.setChildrenCollapsible(False)
        self.rows_split.setHandleWidth(4)
        self.table = RankingTable()
        self.table.ranks_changed.connect(self._show_ranks)
        self.legend = Legend()
        self.request_key = QLabel("▼ id: the block of the shown step's request in each heap "
                                  "(vermillion: where malloc put it; black: what free gave it back to)")
        self.request_key.setWordWrap(True)
        self.scale_note = QLabel("")
        self.scale_note.setWordWrap(True)
        #: the window's presentation (theme, presenter mode), given to new rows too
        self.presentation = Presentation()
        side = QWidget()
        side_box = QVBoxLayout(side)
        side_box.setContentsMargins(4, 0, 0, 0)
        side_box.addWidget(self.table)
        side_box.addSpacing(8)
        side_box.addWidget(self.scale_note)
        side_box.addWidget(self.request_key)
        side_box.addWidget(self.legend)
        side_box.addStretch(1)
        self.side = side
        # Seven rows fit a 1280 x 720 screen (one line under each map); with
        # bigger text (presenter mode) they scroll rather than push the
        # window, and its timeline, past the bottom of the screen.
        self.rows_scroll = QScrollArea()
        self.rows_scroll.setWidget(self.rows_split)
        self.rows_scroll.setWidgetResizable(True)
        self.rows_scroll.setFrameShape(QFrame.NoFrame)
        box = QHBoxLayout(self)
        box.setContentsMargins(4, 4, 4, 0)
        box.setSpacing(4)
        box.addWidget(self.rows_scroll, 1)
        self.side_scroll = VerticalScroll(side)
        box.addWidget(self.side_scroll)

    def apply_presentation(self, pres: Presentation) -> None:
        """Every row, the ranking table, the legend and the notes in ``pres``'s
        theme and text sizes (the window calls this; rows made later get it)."""
        self.presentation = pres
        for row in self.rows:
            row.apply_presentation(pres)
        self.table.apply_presentation(pres)
        self.legend.apply_presentation(pres)
        self.scale_note.setStyleSheet(f"color: {pres.muted};")
        self.request_key.setStyleSheet(f"color: {pres.theme.ink};")

    def set_side_visible(self, visible: bool) -> None:
        """Show or hide the column of the ranking table, the notes and the
        legend (a lesson's narration takes its room on a narrow screen)."""
        self.side_scroll.setVisible(visible)

    # --------------------------------------------------------- binding
    def bind(self, model, row: int = 0) -> None:
        self.unbind()
        self.scale.model = model
        self.table.bind(model)
        super().bind(model, row)

    def unbind(self) -> None:
        if self.model is None:
            return
        super().unbind()
        self.table.unbind()
        for r in self.rows:
            r.unbind()
        self._expected = 0
        self.scale.model = None

    def model_bound(self) -> None:
        self._model_shown()

    def _model_shown(self) -> None:
        model = self.model
        n = len(model.shown)
        if len(self.rows) < n and self.join_in_turns and self.isVisible():
            # rows join one per turn of the event loop (_join_next), each
            # painted before the next is made, into slots sized once
            self._hold_slots(max(n, self._expected))
            self._arrange(final=False)
            self._joining = True
            turns().call_soon(self._join_next, self)
            return
        was_joining, self._joining = self._joining, False
        while len(self.rows) < n:
            self._join(self._take_row())
        self._arrange()
        if was_joining:
            self.rows_joined.emit()

    def _arrange(self, final: bool = True) -> None:
        """Bind the rows made so far to the model's shown rows, hide the
        others; ``final`` (every shown row has joined): open the structure
        views that have room, share the height, rank and say the scale."""
        model = self.model
        n = len(model.shown)
        coming = max(n, self._expected)        # with the rows still building
        # before a row joins the layout: seven rows of two-line maps would
        # grow the window past a 720-pixel screen, and it would not shrink back
        info_lines = 2 if coming <= TWO_INFO_LINES_UP_TO else 1
        for row in self.rows:
            row.map.info.set_lines(info_lines)
        # as for the rows there will be (the first two of seven shown opened
        # theirs, one then stayed open among the seven)
        open_structures = (coming <= OPEN_STRUCTURES_UP_TO if self._structures_open is None
                           else self._structures_open)
        shown = model.shown
        opened = self._open_later
        for i, row in self._placed(shown):
            if i is None:
                row.unbind()
                row.hide()
            # Rebind a row whose strategy changed even where its index
            # did not: its name, map, structure view and rank badge must
            # all name the strategy now shown at that index (issue 24).
            elif row.row != i or row.map.model is not model or row.key != shown[i]:
                new = not row.bound or row.map.model is not model
                row.unbind()
                row.show()
                if new:
                    row.set_structure_visible(False)    # opened below, as many as have room
                    opened |= open_structures
                row.bind(model, i)
            else:
                row.show()
        if not final:
            self._open_later = opened
            self._share_height()
            return
        self._open_later = False
        self._hold_slots(max(n, self._expected))     # (none but for rows still building)
        if opened:
            self.open_structures()
        self._share_height()
        self._show_ranks({name: i + 1 for i, name in enumerate(self.table.order)})
        self._note_scale_soon()

    def _placed(self, shown) -> list:
        """[(index in ``shown`` or None, row)] top to bottom, the rows and the
        splitter put in that order: a row showing a timeline still shown
        keeps it (a big trace's row joining those shown before it moved
        each below it to the next strategy: each drawn anew, 6-20 ms a
        row); the others take the timelines left, in order; the rest are
        None (hidden, below)."""
        model = self.model
        index_of = {key: i for i, key in enumerate(shown)}
        at: dict[int, CompareRow] = {}
        others = []
        for row in self.rows:
            i = index_of.get(row.key) if row.bound and row.map.model is model else None
            if i is not None and i not in at:
                at[i] = row
            else:
                others.append(row)
        left = iter(i for i in range(len(shown)) if i not in at)
        rest = []
        for row in others:
            i = next(left, None)
            if i is None:
                rest.append(row)
            else:
                at[i] = row
        placed = [(i, at[i]) for i in sorted(at)] + [(None, row) for row in rest]
        order = [row for _, row in placed]
        if order != self.rows:
            for k, row in enumerate(order):
                if self.rows_split.indexOf(row) != k:
                    self.rows_split.insertWidget(k, row)      # moved, not made again
            self.rows = order
        return placed

    def _join_next(self) -> None:
        """One more row joins the view (made now, or taken from those made
        ahead), bound and shown in the slot kept for it; the next joins at
        the next turn, after this one is painted.  Seven rows made and shown
        at once held the event loop 1.6-3.4 s (issue 25's stall probe)."""
        if not self._joining:
            return
        model = self.model
        if model is None:
            self._joining = False
            self._drop_slots()
            self.rows_joined.emit()
            return
        n = len(model.shown)
        if len(self.rows) < n and not self._stock:
            # made in parts, a turn each (_row_parts), bound and shown in the
            # turn after (a row made in one turn was 50-70 ms of CPU on
            # gcc-cc1 under load, made and joined together over 100 ms)
            self._make_part()
            turns().call_soon(self._join_next, self)
            return
        if len(self.rows) < n:
            self._join(self._take_row())
        if len(self.rows) < n:
            self._arrange(final=False)
            turns().call_soon(self._join_next, self)
            return
        self._joining = False
        self._arrange()
        self.rows_joined.emit()

    def joining(self) -> bool:
        """Rows are still joining the view (one per turn: _join_next)."""
        return self._joining

    def expect_rows(self, n: int) -> None:
        """``n`` rows are to show (a big trace's, shown as each is built:
        gui/compare_rows.py): those not shown yet keep a slot from the first
        show on, so that the rows there are not resized as each one joins
        (a slot added at each show laid every row's map out again: 15-25 ms
        a show on gcc-cc1); 0: no more are coming (their slots go)."""
        self._expected = n
        if not n and self._slots and not self._joining and self.model is not None:
            self._hold_slots(len(self.model.shown))
            self._share_height()

    def _hold_slots(self, n: int) -> None:
        """Empty slots in the splitter for the rows still to join, so that
        the splitter's sizes are set once: a row joining takes its slot's
        place and size (QSplitter.replaceWidget), and the rows already
        there are not resized and laid out again as each one joins."""
        while self._slots and len(self.rows) + len(self._slots) > n:
            self._drop_slot(self._slots.pop())
        while len(self.rows) + len(self._slots) < n:
            slot = QFrame()
            slot.setFrameShape(QFrame.StyledPanel)
            words = QLabel("building…", slot)
            words.setAlignment(Qt.AlignCenter)
            words.setStyleSheet(f"color: {self.presentation.muted};")
            QVBoxLayout(slot).addWidget(words)
            self.rows_split.addWidget(slot)
            self._slots.append(slot)

    def _drop_slots(self) -> None:
        for slot in self._slots:
            self._drop_slot(slot)
        self._slots = []

    @staticmethod
    def _drop_slot(slot: QFrame) -> None:
        slot.hide()
        slot.setParent(None)          # out of the splitter now, deleted later
        slot.deleteLater()

    def _take_row(self) -> "CompareRow":
        if not self._stock:
            while not self._make_part():        # the rest of a row in making, at once
                pass
        return self._stock.pop(0)

    def _make_part(self) -> bool:
        """Make the next part of the row in making (a new row's first part
        if none is); True when that finished the row (it is in the stock)."""
        if self._making is None:
            self._making = self._row_parts()
        row = next(self._making)
        if row is None:
            return False
        self._making = None
        self._stock.append(row)
        return True

    def _join(self, row: "CompareRow") -> None:
        """``row`` joins the splitter after the rows there (in the first slot held for it)."""
        index = len(self.rows)
        if self._slots:
            slot = self._slots.pop(0)
            self.rows_split.replaceWidget(index, row)
            slot.deleteLater()
        else:
            self.rows_split.insertWidget(index, row)
        self.rows.append(row)
        self.row_joined.emit()

    def _row_parts(self):
        """One more row's widgets (not bound, not in the view: :meth:`_join`
        puts it there), made in three parts, a turn each when rows join or
        are made ahead: the map's plot, the rest of the map, the row around
        it.  Yields None after each part but the last, then the row.  (CPU on
        an idle machine: 4-5, 7-9 and 4-8 ms; made in one turn, 16-31 ms.)"""
        plot_widget = new_map_plot()
        yield None
        heap_map = CompareHeapMap(self.scale, plot_widget=plot_widget)
        yield None
        yield self._new_row(heap_map)

    def _new_row(self, heap_map: "CompareHeapMap | None" = None) -> "CompareRow":
        """One more row's widgets (not bound, not in the view: :meth:`_join` puts it
        there) around ``heap_map`` if given (:meth:`_row_parts`)."""
        row = CompareRow(self.scale, self._stock_holder, heap_map=heap_map)
        row.apply_presentation(self.presentation)
        row.map.vb.sigRangeChangedManually.connect(lambda *_, r=row: self._zoom_from(r))
        row.structure_toggled.connect(lambda visible, r=row: self._row_toggled(r, visible))
        row.map.relaid.connect(lambda r=row: self._relayout_rows(r.map))
        row.map.block_clicked.connect(lambda addr, r=row: self.row_clicked.emit(r.row, addr))
        row.structure.block_selected.connect(lambda addr, r=row: self.row_clicked.emit(r.row, addr))
        return row

    def prepare_rows(self, n: int) -> None:
        """Make the widgets of ``n`` rows ahead, hidden, one per turn of the
        event loop (compare mode's rows being built in the background,
        gui/compare_rows.py): made when the rows show, seven rows' maps
        held the loop 1.5-1.9 s in one go (issue 25's stall probe)."""
        self._prepare_to = max(self._prepare_to, n)
        turns().call_soon(self._prepare_next, self)

    def _prepare_next(self) -> None:
        if self._joining or len(self.rows) + len(self._stock) >= self._prepare_to:
            return                  # (rows joining make their own, a part a turn)
        self._make_part()           # a part of a row a turn (_row_parts)
        turns().call_soon(self._prepare_next, self)

    def _share_height(self) -> None:
        """Rows with their structure view open get :data:`OPEN_ROW_WEIGHT`
        times the height of the others; one open at a time gets at least
        :data:`STRUCTURE_ROW_PX` (at most 60 % of the rows' height)."""
        weights = [(OPEN_ROW_WEIGHT if r.structure_visible() else 1) if r.bound else 0
                   for r in self.rows]
        weights += [1] * len(self._slots)       # a row still to join, as one with its structure closed
        total = max(self.rows_split.height(), 100 * len(weights))
        unit = total / max(sum(weights), 1)
        sizes = [int(w * unit) for w in weights]
        opened = [i for i, r in enumerate(self.rows) if r.bound and r.structure_visible()]
        least = 0
        if len(opened) == 1 and sum(1 for w in weights if w) > 1:
            # the open row gets its room, the others what is left down to
            # their least height; past that the rows scroll (to the open one)
            i = opened[0]
            tall = max(sizes[i], STRUCTURE_ROW_PX)
            others = [w.minimumSizeHint().height() for k, w in enumerate(self.rows + self._slots)
                      if weights[k] and k != i]
            least = tall + sum(others) + self.rows_split.handleWidth() * len(others)
            total = max(total, least)
            rest = (total - tall) / len(others)
            sizes = [tall if k == i else (int(rest) if w else 0) for k, w in enumerate(weights)]
            QTimer.singleShot(0, self, lambda row=self.rows[i]: self.rows_scroll.ensureWidgetVisible(row, 0, 0))
        self.rows_split.setMinimumHeight(least if least > self.rows_scroll.viewport().height() else 0)
        self.rows_split.setSizes(sizes)

    # ------------------------------------------------ one structure at a time
    def one_at_a_time(self) -> bool:
        """Too short for every row's structure view: they open one at a
        time, the row chosen by its ▸ button (issue 24: seven rows at 1280 x
        720 each showed a caption and no drawing)."""
        rows = self.shown_rows()
        return len(rows) > 1 and self.rows_scroll.viewport().height() < STRUCTURE_ROW_PX * len(rows)

    def _row_toggled(self, row: "CompareRow", visible: bool) -> None:
        if visible:
            self._focused = row
            if self.one_at_a_time() and not self._all_at_once:
                for other in self.shown_rows():
                    if other is not row and other.structure_visible():
                        other.set_structure_visible(False)
        self._share_height()
        self.structures_changed.emit(self.any_structure_open())

    def any_structure_open(self) -> bool:
        return any(r.structure_visible() for r in self.shown_rows())

    def show_structures(self, visible: bool) -> bool:
        """The View menu's Structure View in compare mode: open the rows'
        structure views (one at a time on a short screen) or close them all;
        True when any is open now."""
        if visible:
            self.open_structures()
        else:
            self.set_structures_visible(False)
        return self.any_structure_open()

    def shown_rows(self) -> list[CompareRow]:
        """The rows showing a strategy, top to bottom."""
        return [r for r in self.rows if r.bound]

    def _show_ranks(self, ranks: dict) -> None:
        for row in self.shown_rows():
            row.set_rank(ranks.get(row.name.text()))
        # the side column is as wide as the table; its notes wrap to it
        width = max(self.table.table.width() + 8, 300)
        if self.side.width() != width:
            self.side.setFixedWidth(width)

    def _map_geometry(self) -> tuple[float, float]:
        """(aspect, height) the shared scale is cut for: the narrowest and the
        shortest of the rows' maps, so that every row shows all of it."""
        rects = [r.map.vb.sceneBoundingRect() for r in self.shown_rows()]
        rects = [r for r in rects if r.width() >= 50 and r.height() >= 20]
        if not rects:
            return 2.0, 0.0
        width, height = min(r.width() for r in rects), min(r.height() for r in rects)
        return width / height, height

    def _relayout_rows(self, moved: "CompareHeapMap | None" = None) -> None:
        """A row's map (``moved``) changed shape: the scale may change, for
        every row.  A row the scale leaves as it was does not place its
        labels again: it placed them at its own last change (seven rows
        resized once each placed them 7 x 7 times)."""
        for row in self.shown_rows():
            if moved is None or row.map is moved:
                row.map._relayout_if_needed()
            else:
                row.map.render_if_rescaled()
        self._note_scale_soon()

    def _note_scale_soon(self, position: int | None = None) -> None:
        # after the rows have drawn the step (they hear of it after this view)
        self._note_timer.start(0)

    def _note_scale(self) -> None:
        rows = self.shown_rows()
        lay = rows[0].map.layout_ if rows and self.model is not None else None
        if lay is None:
            self.scale_note.setText("")
            return
        self.scale_note.setText(
            f"Every map is drawn at one scale: 1 map row = {human_bytes(lay.row_bytes)}, "
            f"{lay.rows} row{'s' if lay.rows != 1 else ''} = the biggest heap "
            f"({human_bytes(lay.heap)}), so a bigger heap looks bigger.")

    # ------------------------------------------------------------ zoom
    def _zoom_from(self, source: CompareRow) -> None:
        """A user's zoom or pan in one map moves every map the same way."""
        x_range, y_range = source.map.vb.viewRange()
        for row in self.shown_rows():
            row.map.follow = False
            if row is not source:
                row.map.vb.setRange(xRange=x_range, yRange=y_range, padding=0.0)

    def fit_all(self) -> None:
        for row in self.shown_rows():
            row.map.fit()

    # ------------------------------------------------------- structures
    def set_structures_visible(self, visible: bool) -> None:
        """Open or close every row's structure view."""
        self._structures_open = visible
        self._all_at_once = True            # a row opened here leaves the others open
        try:
            for row in self.shown_rows():
                row.set_structure_visible(visible)
        finally:
            self._all_at_once = False

    def open_structures(self) -> None:
        """Open the rows' structure views, one at a time (the row chosen
        last, else the first) when the rows are too short for all of them."""
        self._structures_open = True
        rows = self.shown_rows()
        focus = self._focused if self._focused in rows else (rows[0] if rows else None)
        alone = self.one_at_a_time()
        for row in rows:
            row.set_structure_visible(row is focus or not alone)
