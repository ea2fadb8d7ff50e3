"""The heap map: the whole heap in address order, wrapped into rows.

One ``pg.ImageItem`` shows the cell image of :mod:`gui.heap_cells` through the
palette's LUT (an 8-bit indexed QImage: no per-pixel conversion), so a frame
costs the same for 100 blocks or 100 000.  What the current step did is drawn
over it (:mod:`gui.step_marks`), a handful of items whatever the heap's size:
the free blocks its search examined, numbered in search order (a long search
at both ends, with the count it left unnumbered); where a block was cut; the
block placed or freed and what it joined; the bytes the heap grew by; a
request that failed.  The policy's pointers are drawn on every step, where
the step left them: a search pointer (K&R's rover, Kruse's head: where the
next search starts) as an orange triangle under its block, a marker (Vmbest's
wilderness) as a green diamond, each with its name.

Micro-steps: :meth:`HeapMapWidget.set_current_event` shows the step up to
one of its events -- the heap before the step with the events so far applied
(:func:`gui.heap_tracker.apply_events`), and the marks so far: the search
lit block by block with its numbers appearing in order, then the cut, the
placement, the join, the growth.  The event itself is ringed.  When the
model's ``transition_ms`` is above 0, the new marks fade in and a cut line
slides down its row over that time.

Separators between blocks and gaps between rows make the map read like
lines of words, but they paint over cells: they are drawn only where they
hide at most a sixteenth of what they separate (both blocks at least
:data:`SEPARATOR_MIN_PX` wide on screen, rows at least
:data:`ROW_GAP_MIN_PX` tall), so at real sizes the map shows its cells, and
no state is drawn white.

The picture is a function of the step (and of the view's size and zoom)
alone: the layout has no memory (:func:`gui.heap_cells.choose_layout`), the
left axis has a fixed width, so a step looks the same whichever way it was
reached.

Hovering names the block under the mouse; a click selects it (outlined, and
marked in the structure view too); the wheel zooms and a drag pans
(pyqtgraph's ViewBox); View > Fit heap brings the whole heap back.

Bound to the window's :class:`~gui.show_model.ShowModel` (:meth:`bind`), the
map draws the model's shown step and event, its selection and its hover, and
reports clicks and hovers to it.

Coordinates: x is the byte offset within a row (0 .. row_bytes), y the row
number growing downwards, so address ``a`` sits at ``(a % row_bytes, a //
row_bytes)``.
"""

from __future__ import annotations

import functools

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRect, QRectF, Qt, QTimer, QVariantAnimation, Signal
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetrics, QPainterPath, QPen
from PySide6.QtWidgets import (QGraphicsPathItem, QHBoxLayout, QLabel,
                               QSizePolicy, QToolTip, QVBoxLayout, QWidget)

from . import block_facts, heap_cells, palette
from .flow_layout import FlowLayout
from .gauges import human_bytes
from ..allocators.heap_edits import Inconsistent, Pointer, TrackedHeap, apply_events
from .line_label import LineLabel
from .step_marks import StepMarks, step_marks
from .subscriber import Subscriber
from .theme import LIGHT, Presentation, lut as theme_lut, cell_colours as theme_cell_colours

#: separators between blocks are considered up to this many blocks in view
#: (past it no block is wide enough on screen anyway)
MAX_SEPARATED_BLOCKS = 20000
#: a line between two blocks only where both are at least this wide on screen
SEPARATOR_MIN_PX = 16
#: gaps between rows only when rows are at least this tall on screen; a gap
#: is a sixteenth of a row, at most 2 px
ROW_GAP_MIN_PX = 16
#: a search longer than this is lit by filling its blocks rather than outlining them
MANY_VISITS = 200
#: square pixels of map per search number at most (a label is about 30 x 22 px)
LABEL_ROOM = 5000
#: font sizes (points) of the search numbers and the pointer names: read
#: from the back of a lecture room
NUMBER_POINTS = 12
POINTER_POINTS = 11

#: the map's least height in pixels, axes included
PLOT_MIN_HEIGHT = 100

#: pointer roles (docs/structure.md)
SEARCH, MARKER = "search", "marker"
MARKER_COLOUR = palette.BLUISH_GREEN


class AddressAxis(pg.AxisItem):
    """Left axis: the hex address where each row starts."""

    def __init__(self) -> None:
        super().__init__("left")
        self.row_bytes = 1

    def tickSpacing(self, minVal, maxVal, size):
        # Only whole rows have an address to show.
        return [(max(1.0, spacing), offset) for spacing, offset in super().tickSpacing(minVal, maxVal, size)]

    def tickValues(self, minVal, maxVal, size):
        # A row's address is written level with the middle of the row: a
        # label on the row's top edge was cut in half at the top of the map.
        levels = super().tickValues(minVal - 0.5, maxVal - 0.5, size)
        return [(spacing, [v + 0.5 for v in values if abs(v - round(v)) < 1e-6])
                for spacing, values in levels]

    def tickStrings(self, values, scale, spacing):
        out = []
        for v in values:
            r = round(v - 0.5)
            out.append(f"0x{r * self.row_bytes:x}" if r >= 0 and abs(v - 0.5 - r) < 1e-6 else "")
        return out


#: the legend's words on a short screen
SHORT_LEGEND = {"header / footer": "header", "alignment padding": "padding", "top (wilderness)": "top",
                "allocator meta": "meta", "searched (in order)": "searched", "failed request": "failed",
                "cut (split)": "cut", "freed, joined": "freed", "heap grew (sbrk)": "grew",
                "past the break": "beyond", "selected (click)": "selected"}


class Legend(QWidget):
    """Colour swatches for the heap kinds and the step highlights, wrapped to
    the map's width like words.  Entries a policy has no use for (the top
    block, a marker pointer) are hidden: :meth:`set_policy`.  The swatches
    take the theme's colours and grow with the text
    (:meth:`apply_presentation`); on a short screen the words are cut short
    (:meth:`set_compact`)."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        flow = FlowLayout(self, h_spacing=14, v_spacing=3)
        flow.setContentsMargins(4, 2, 4, 2)
        self.entries: dict[str, QWidget] = {}
        self.labels: dict[str, QLabel] = {}
        #: key -> (long words, short words)
        self._words: dict[str, tuple[str, str]] = {}
        self.compact = False
        kinds = {palette.TOP: "top", palette.FREE: "free"}
        # (key, words, cell code or None, style)
        fill = [(kinds.get(code, label), label, code, False) for code, label, colour in palette.CELL_KINDS]
        outline = [("searched", "searched (in order)", None, "number"),
                   ("cut", "cut (split)", None, "cut"),
                   ("placed", "placed", None, True),
                   ("freed", "freed, joined", None, "dash"),
                   ("grew", "heap grew (sbrk)", None, "dot"),
                   ("failed", "failed request", None, "hatch"),
                   ("search pointer", "search pointer", None, "pointer"),
                   ("marker", "marker", None, "marker"),
                   ("selected", "selected (click)", None, "selected")]
        self._swatches: list[tuple[QLabel, str, int | None, object]] = []
        for key, label, code, style in fill + outline:
            entry = QWidget()
            row = QHBoxLayout(entry)
            row.setContentsMargins(0, 0, 0, 0)
            row.setSpacing(5)
            swatch = QLabel()
            swatch.setAlignment(Qt.AlignCenter)
            swatch.setText({"number": "1", "cut": "|", "pointer": "▲", "marker": "◆"}.get(style, ""))
            self._swatches.append((swatch, key, code, style))
            text = QLabel(label)
            row.addWidget(swatch)
            row.addWidget(text)
            flow.addWidget(entry)
            self.entries[key] = entry
            self.labels[key] = text
            self._words[key] = (label, SHORT_LEGEND.get(label, label))
        policy = QSizePolicy(QSizePolicy.Preferred, QSizePolicy.Preferred)
        policy.setHeightForWidth(True)
        self.setSizePolicy(policy)
        self.set_policy(False, (), ())
        self.apply_presentation(Presentation())

    def set_policy(self, has_top: bool, search_names, marker_names) -> None:
        """Show the top-block swatch only for a policy with a wilderness, and
        name the policy's pointers."""
        search_names, marker_names = tuple(search_names), tuple(marker_names)
        if getattr(self, "_policy", None) == (has_top, search_names, marker_names):
            return
        self._policy = (has_top, search_names, marker_names)
        self.entries["top"].setVisible(has_top)
        # short: the pointers' own names ("rover"), which say what they are
        self._words["search pointer"] = (
            "search pointer" + (f" ({', '.join(search_names)})" if search_names else ""),
            ", ".join(search_names) or "pointer")
        self.entries["search pointer"].setVisible(bool(search_names))
        self._words["marker"] = (f"marker ({', '.join(marker_names)})" if marker_names else "marker",
                                 ", ".join(marker_names) or "marker")
        self.entries["marker"].setVisible(bool(marker_names))
        self._show_words()

    def set_compact(self, compact: bool) -> None:
        """Short words (a short screen): the legend wraps to fewer lines."""
        self.compact = bool(compact)
        self._show_words()

    def _show_words(self) -> None:
        for key, (long, short) in self._words.items():
            self.labels[key].setText(short if self.compact else long)
        self.layout().invalidate()
        self.updateGeometry()

    def apply_presentation(self, pres: Presentation) -> None:
        """Swatches as big as the text, outlines as thick as the map's, in the
        theme's colours."""
        theme, k, lines = pres.theme, pres.text_scale, pres.line_scale
        colours = theme_cell_colours(theme)
        outline = {"searched": palette.SEARCHED, "cut": theme.contrast, "placed": palette.PLACED,
                   "freed": theme.contrast, "grew": theme.grown, "failed": palette.FAILED,
                   "search pointer": palette.SEARCHED, "marker": MARKER_COLOUR, "selected": theme.contrast}
        bg = theme.background
        symbol_px = round(16 * k)
        for swatch, key, code, style in self._swatches:
            swatch.setFixedSize(round(22 * k), round(16 * k))
            colour = colours[code] if code is not None else outline[key]
            border = round(3 * lines)
            if style is True:
                css = f"background: {bg}; border: {border}px solid {colour};"
            elif style == "dash":
                css = f"background: {bg}; border: {border}px dashed {colour};"
            elif style == "dot":
                css = f"background: {bg}; border: {border}px dotted {colour};"
            elif style == "number":
                css = (f"background: {colour}; color: black; border: 1px solid black; font-weight: bold;"
                       f"font-size: {round(12 * k)}px;")
            elif style == "cut":
                css = f"color: {colour}; font-size: {symbol_px}px; font-weight: bold;"
            elif style in ("pointer", "marker"):
                css = f"color: {colour}; font-size: {symbol_px}px;"
            elif style == "selected":
                css = f"background: {theme.contrast_core}; border: {round(4 * lines)}px double {colour};"
            elif style == "hatch":
                css = f"background: {colour}; border: 2px dashed {bg};"
            else:
                css = f"background: {colour}; border: 1px solid {theme.axis};"
            swatch.setStyleSheet(css)
        self.layout().invalidate()     # the words grew: wrap again
        self.updateGeometry()


def _current_colour(theme) -> QColor:
    """The ring of the event a micro-step stops at: the theme's contrast, see-through."""
    colour = QColor(theme.contrast)
    colour.setAlpha(90)
    return colour


def _path_of(ranges, row_bytes: int) -> QPainterPath:
    """The outline of byte ranges: at most three rectangles each (their piece
    of the first row, the full rows, the piece of the last row)."""
    if len(ranges) > 32:
        path = _many_rects(ranges, row_bytes)
    else:
        path = QPainterPath()
        for addr, size in ranges:
            for x, y, w, h in heap_cells.range_rects(addr, size, row_bytes):
                path.addRect(QRectF(x, y, w, h))
    path.setFillRule(Qt.WindingFill)      # a block outlined twice is still inside its outline
    return path


#: the corners of a rectangle, closed, as offsets in units of its width and height
_CORNERS_X = np.array([0.0, 1.0, 1.0, 0.0, 0.0])
_CORNERS_Y = np.array([0.0, 0.0, 1.0, 1.0, 0.0])
_CONNECT = np.array([1, 1, 1, 1, 0], dtype=np.int32)


def _many_rects(ranges, row_bytes: int) -> QPainterPath:
    """:func:`_path_of` for thousands of ranges (a K&R free walking the
    ring): the rectangles built in numpy and handed to Qt in one piece."""
    a = np.array(ranges, dtype=np.int64).reshape(-1, 2)
    addr, end = a[:, 0], a[:, 0] + a[:, 1]
    r0, x0 = np.divmod(addr, row_bytes)
    r1, x1 = np.divmod(end, row_bytes)
    one_row = (r0 == r1) & (end > addr)
    rects = [np.stack([x0[one_row], r0[one_row], (x1 - x0)[one_row], np.ones(one_row.sum(), np.int64)], 1)]
    for addr_i, size_i in a[~one_row].tolist():
        if size_i > 0:
            rects.append(np.array(heap_cells.range_rects(addr_i, size_i, row_bytes), np.int64).reshape(-1, 4))
    r = np.concatenate(rects).astype(np.float64)
    xs = (r[:, 0:1] + r[:, 2:3] * _CORNERS_X).ravel()
    ys = (r[:, 1:2] + r[:, 3:4] * _CORNERS_Y).ravel()
    return pg.arrayToQPath(xs, ys, connect=np.tile(_CONNECT, len(r)))


@functools.lru_cache(maxsize=512)
def _label_spots(w: float, h: float) -> tuple[tuple[float, float], ...]:
    # labels come in a few sizes: sorting 65 offsets for every label of every
    # frame cost compare mode's seven maps 3 ms a frame
    spots = [(i * w, j * h) for i in range(-2, 3) for j in range(-6, 7)]
    spots.sort(key=lambda d: (abs(d[0]) / w) * 2.5 + abs(d[1]) / h)
    return tuple(spots)


def typical_block_bytes(trace) -> float | None:
    """Bytes of a typical live block of ``trace`` (live bytes over live
    blocks at their peaks, plus a header word): the block size the map's
    rows are cut for, the same at every step of the trace."""
    if trace is None:
        return None
    try:
        stats = trace.stats()
    except Exception:       # a trace-like object without statistics
        return None
    blocks, live = stats.get("max_live_blocks", 0), stats.get("max_live_bytes", 0)
    if blocks and live:
        return live / blocks + 16
    mean = stats.get("mean_size", 0)
    return mean + 16 if mean else None


def _fit_width(label: QLabel, width: int) -> None:
    """Size ``label`` to its text on one line, or, when that is wider than
    ``width``, to ``width`` with the words wrapped."""
    if label.isHidden():
        return
    label.setWordWrap(False)
    label.adjustSize()
    if label.width() > width > 40:
        label.setWordWrap(True)
        label.resize(width, label.heightForWidth(width))


class HeapMapWidget(Subscriber, QWidget):
    """The heap map with its legend and a line naming the block under the mouse."""

    #: the address under the mouse, or -1 when it leaves the heap
    hovered = Signal(int)
    #: the user clicked a block (its address), or off the heap (-1)
    block_clicked = Signal(object)
    #: the block under the mouse (its address), or -1
    block_hovered = Signal(object)

    SUBSCRIBES = {"shown_changed": "_model_shown", "step_changed": "_model_step",
                  "event_changed": "_model_event",
                  "selection_changed": "set_selection", "hover_changed": "_model_hover"}
    REQUESTS = {"block_clicked": "select", "block_hovered": "set_hover"}

    def __init__(self, parent=None, max_cells: int = heap_cells.MAX_CELLS) -> None:
        super().__init__(parent)
        self.max_cells = max_cells
        #: the heap after the shown step, and the heap drawn (the same, or a micro-step of it)
        self.heap = TrackedHeap(heap_cells.block_arrays([], 0), ())
        self.shown_heap = self.heap
        self.blocks = self.heap.blocks
        self.layout_: heap_cells.HeapLayout | None = None
        self.image = np.zeros((0, 0), np.uint8)
        self.record = None
        self.marks = StepMarks()
        #: the event shown (None: the whole step)
        self.event_index: int | None = None
        #: transition length (ms) of a change of event when no model says it
        self.transition_ms = 0
        #: bytes of a typical block (rows are cut for it); None: the heap's mean
        self.block_bytes: float | None = None
        self.follow = True            # keep the whole heap in view until the user zooms
        self._before = None           # the heap before the step, or a function giving it
        self._micro: dict[int, TrackedHeap] = {}
        self._ids_source = None       # callable -> {payload: trace id}, asked lazily on hover
        self._ids: dict | None = None
        self._places_source = None    # callable -> {free block: where the structure keeps it}
        self.selected: int | None = None       # the selected block's address
        self.hover_block: int | None = None    # the block hovered here or in another view
        self._own_hover: int | None = None     # ... when the mouse is over this map
        self._extra_rows = 0          # rows the failure marker needs past the heap
        self._scratch = heap_cells.Scratch()
        # (serial of the heap the image shows, its row bytes, bytes per cell)
        self._image_of: tuple | None = None
        #: how the cell images were made (the benchmark and the tests read them)
        self.partial_paints = 0
        self.full_paints = 0

        self.legend = Legend()
        axis = AddressAxis()
        self.plot_widget = pg.PlotWidget(axisItems={"left": axis}, background="w")
        self.plot_widget.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Expanding)
        # (a legend wrapped onto four or five lines, this and the line under
        # it fill the map's share of a 1280 x 720 window, 262 px: a taller
        # minimum squeezed that line onto the address axis; the layout gives
        # the map all the height left, 134-155 px there)
        self.plot_widget.setMinimumHeight(PLOT_MIN_HEIGHT)
        plot = self.plot = self.plot_widget.getPlotItem()
        plot.hideButtons()
        plot.setMenuEnabled(False)
        plot.getAxis("bottom").setLabel("byte offset within the row")
        plot.getAxis("left").setLabel("row address")
        for name in ("left", "bottom"):
            plot.getAxis(name).setTextPen("k")
            plot.getAxis(name).setPen("#888")
        # A fixed width, room for a 32-bit address: an axis that widened for
        # long addresses and kept its width would make the same step look
        # different after another one.
        fm = QFontMetrics(self.font())
        axis.setWidth(fm.horizontalAdvance("0x00000000") + 2 * fm.height() + 8)
        self.vb = plot.getViewBox()
        self.vb.invertY(True)
        self.vb.setMouseEnabled(x=True, y=True)
        self.vb.sigRangeChangedManually.connect(self._user_moved_view)
        self.vb.sigRangeChanged.connect(self._view_range_changed)

        self.image_item = pg.ImageItem(axisOrder="row-major")
        self.image_item.setLookupTable(palette.LUT)   # all 256 entries: pyqtgraph stretches a shorter LUT over 0..255
        self.image_item.setZValue(0)
        plot.addItem(self.image_item)

        self.presentation = Presentation()
        #: (item, width at line scale 1): the outlines presenter mode thickens
        self._outlines: list[tuple[QGraphicsPathItem, float]] = []

        def path_item(colour, width, style=Qt.SolidLine, brush=None, z=10):
            item = QGraphicsPathItem()
            self._outlines.append((item, width))
            pen = QPen(QColor(colour))
            pen.setWidthF(width)
            pen.setCosmetic(True)          # width in pixels whatever the zoom
            pen.setJoinStyle(Qt.MiterJoin)
            pen.setStyle(style)
            item.setPen(pen)
            item.setBrush(brush or QBrush(Qt.NoBrush))
            item.setZValue(z)
            plot.addItem(item)
            return item

        # Lines between blocks and gaps between rows: the map reads as lines of
        # text, each block a word, where blocks and rows are big enough.
        self.separator_item = path_item(LIGHT.separator, 1, z=5)
        self.row_gap_item = path_item(LIGHT.separator, 1, z=6)
        self.current_item = path_item(_current_colour(LIGHT), 10, z=8)     # the event a micro-step stops at
        self.searched_item = path_item(palette.SEARCHED, 2.5, z=10)
        self.grown_item = path_item(palette.GROWN, 3, Qt.DotLine, z=10.5)
        self.released_item = path_item(palette.RELEASED, 3, Qt.DashLine, z=11)
        placed_fill = QColor(palette.PLACED)
        placed_fill.setAlpha(40)
        self.placed_item = path_item(palette.PLACED, 4, brush=QBrush(placed_fill), z=12)
        self.cut_item = path_item(palette.BLACK, 4, z=12.5)
        self.leader_item = path_item(palette.BLACK, 1, z=19.5)    # from a moved number to its block
        self.failed_item = path_item(palette.FAILED, 3,
                                     brush=QBrush(QColor(palette.FAILED), Qt.BDiagPattern), z=13)
        # the policy's pointers: a triangle (search) or a diamond (marker)
        # under the block's first byte, pointing up at it
        self.pointer_item = pg.ScatterPlotItem(size=18, symbol="t1", pen=pg.mkPen("k", width=1.5),
                                               brush=pg.mkBrush(palette.SEARCHED))
        self.pointer_item.setZValue(14)
        plot.addItem(self.pointer_item)
        self.marker_item = pg.ScatterPlotItem(size=16, symbol="d", pen=pg.mkPen("k", width=1.5),
                                              brush=pg.mkBrush(MARKER_COLOUR))
        self.marker_item.setZValue(14)
        plot.addItem(self.marker_item)
        # The selection: a black ring with a white core, visible on every fill colour.
        self.selected_outer = path_item(palette.SELECTED, 7, z=16)
        self.selected_item = path_item(palette.SELECTED_CORE, 2.5, z=17)
        self.hover_item = path_item(palette.SELECTED, 2, Qt.DashLine, z=15)
        self._order_labels: list[pg.TextItem] = []
        #: what each visible number label numbers: (first visit index, addr, size)
        self._label_blocks: list[tuple[int, int, int]] = []
        self._text_items: list[tuple[pg.TextItem, str, int]] = []     # (label, role, points)
        self.skip_label = self._text_item("note", NUMBER_POINTS - 1, z=21)
        self._pointer_labels: list[pg.TextItem] = []
        # (label, anchor point in view coordinates, pixel offset) of the
        # labels on screen (kept inside the view by _place_labels)
        self._number_places: list = []
        self._pointer_places: list = []

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

        # A pointer at a sentinel outside the heap (K&R's &base) has no block to
        # point at: it is said in words at the map's bottom left.
        self.pointer_note = QLabel(self.plot_widget)
        self.pointer_note.setStyleSheet(f"background: {palette.SEARCHED}; color: black; padding: 3px 8px;"
                                        "border: 1px solid black; border-radius: 3px; font-weight: bold;")
        self.pointer_note.hide()
        #: what the numbers do not say (a long search's unnumbered middle, the
        #: numbers left out for want of room): the line under the map says it
        #: when the mouse is not over a block
        self.search_note = ""

        # the transition of a micro-step (model.transition_ms > 0)
        self._anim = QVariantAnimation(self)
        self._anim.setStartValue(0.0)
        self._anim.setEndValue(1.0)
        self._anim.valueChanged.connect(self._transition)
        self._fresh: list = []        # items fading in
        #: an exporter steps transitions itself (seek_transition) instead of the clock
        self.manual_transitions = False
        self._manual_ms: float | None = None
        self._cut_fresh = False       # the newest cut slides in
        #: numbers that overlap others at this zoom for want of room
        self.crowded = 0
        self._numbered_for = -1       # the label budget the shown numbers were chosen for
        #: the heap and the pointers only, none of the step's marks (set_quiet)
        self.quiet = False

        # The hover line has the map's whole width and wraps between words
        # (two lines kept for it, so the map does not jump): the map's scale
        # is written under the bottom axis instead of beside it, where it cut
        # the hover line mid-word.
        self.info = LineLabel(" ", lines=2)
        self._hover_pos = None     # scene position of the last hover, if any
        self.info.setTextInteractionFlags(Qt.TextSelectableByMouse)
        footer = QHBoxLayout()
        footer.setContentsMargins(4, 0, 4, 0)
        footer.addWidget(self.info, 1)

        box = QVBoxLayout(self)
        box.setContentsMargins(0, 0, 0, 0)
        box.setSpacing(2)
        box.addWidget(self.legend)
        box.addWidget(self.plot_widget, 1)
        box.addLayout(footer)

        self.plot_widget.scene().sigMouseMoved.connect(self._mouse_moved)
        self.plot_widget.scene().sigMouseClicked.connect(self._mouse_clicked)
        self.apply_presentation(self.presentation)
        self.show_heap(None)

    def _text_item(self, role: str, points: int, z: float = 20) -> pg.TextItem:
        """A label on the map: a search number ("number", black on orange), a
        pointer's name ("pointer") or a note ("note"); styled by the
        presentation (:meth:`_style_text_item`)."""
        label = pg.TextItem("", anchor=(0, 0))
        label.setZValue(z)
        label.hide()
        self.plot.addItem(label)
        self._text_items.append((label, role, points))
        self._style_text_item(label, role, points)
        return label

    def _style_text_item(self, label: pg.TextItem, role: str, points: int) -> None:
        pres = self.presentation
        theme = pres.theme
        if role == "number":
            # black on orange in both themes: the search's own colour
            ink, fill, border = palette.BLACK, QColor(palette.SEARCHED), palette.BLACK
        else:
            ink, fill, border = theme.ink, QColor(theme.background), theme.contrast
            if role == "pointer":
                fill.setAlpha(0xDD)
        label.setColor(ink)
        label.fill = pg.mkBrush(fill)
        label.border = pg.mkPen(border, width=pres.line_scale)
        label.setFont(QFont(self.font().family(), round(points * pres.text_scale), QFont.Bold))
        label.update()

    # ------------------------------------------------------------ presentation
    def apply_presentation(self, pres: Presentation) -> None:
        """Theme colours, text sizes and outline widths (presenter mode): the
        axes, the legend, the outlines, the pointers, the search numbers and
        the notes all scale together."""
        self.presentation = pres
        theme, k = pres.theme, pres.text_scale
        self.legend.apply_presentation(pres)
        self.plot_widget.setBackground(theme.background)
        tick_font = QFont(self.font())
        tick_font.setPointSizeF(pres.pt(0.95))
        for name in ("left", "bottom"):
            axis = self.plot.getAxis(name)
            axis.setTextPen(theme.ink)
            axis.setPen(pg.mkPen(theme.axis, width=pres.line_scale))
            axis.setStyle(tickFont=tick_font)
            axis.label.setFont(tick_font)
            axis.labelStyle = {"color": pres.muted, "font-size": f"{pres.pt(0.95):.1f}pt"}
            axis._updateLabel()
            axis.resizeEvent()          # centred again at its new size
            axis.picture = None
        # A fixed width, room for a 32-bit address in the tick font: an axis
        # that widened for long addresses and kept its width would make the
        # same step look different after another one.
        fm = QFontMetrics(tick_font)
        self.plot.getAxis("left").setWidth(fm.horizontalAdvance("0x00000000") + 2 * fm.height() + 8)
        self.image_item.setLookupTable(theme_lut(theme))
        colours = {self.separator_item: theme.separator, self.row_gap_item: theme.separator,
                   self.released_item: theme.contrast, self.selected_outer: theme.contrast,
                   self.selected_item: theme.contrast_core, self.hover_item: theme.contrast,
                   self.cut_item: theme.contrast, self.leader_item: theme.contrast,
                   self.grown_item: theme.grown, self.current_item: _current_colour(theme)}
        for item, width in self._outlines:
            p = QPen(item.pen())
            if item in colours:
                p.setColor(QColor(colours[item]))
            # the lines between blocks stay thin: thick ones would eat small blocks
            thin = item in (self.separator_item, self.row_gap_item)
            p.setWidthF(width * (1.0 if thin else pres.line_scale))
            item.setPen(p)
        self._searched_filled = None        # the searched outline's width: again
        self._style_searched(len(self.marks.visits))
        symbol_pen = pg.mkPen(theme.contrast, width=1.5 * pres.line_scale)
        self.pointer_item.setSize(18 * k)
        self.pointer_item.setPen(symbol_pen)
        self.marker_item.setSize(16 * k)
        self.marker_item.setPen(symbol_pen)
        for label, role, points in self._text_items:
            self._style_text_item(label, role, points)
        self.empty_text.setColor(pres.muted)
        self.empty_text.setFont(QFont(self.font().family(), round(pres.pt(1.45))))
        self.banner.setStyleSheet(f"background: {palette.FAILED}; color: white; padding: 6px 12px;"
                                  f"border-radius: 4px; font-weight: bold; font-size: {pres.pt(1.1):.1f}pt;")
        self.pointer_note.setStyleSheet(
            f"background: {palette.SEARCHED}; color: black; padding: 3px 8px; border: 1px solid black;"
            f"border-radius: 3px; font-weight: bold; font-size: {pres.pt():.1f}pt;")
        self.pointer_note.adjustSize()
        info_font = QFont(self.info.font())
        info_font.setPointSizeF(pres.pt())
        self.info.setFont(info_font)
        self.info.set_lines(self.info.lines)        # its height follows the font
        self._show_scale()
        if self.layout_ is not None:
            self._render()         # numbers per square pixel and label places depend on their size

    # ----------------------------------------------------------------- drawing
    def view_aspect(self) -> float:
        """Width / height of the map area in pixels (2 before it is shown)."""
        r = self.vb.sceneBoundingRect()
        if r.width() < 50 or r.height() < 50:
            return 2.0
        return r.width() / r.height()

    def show_heap(self, strategy, record=None, ids_source=None, blocks=None, before=None) -> None:
        """Draw ``strategy``'s heap (None: nothing loaded) and light up what
        ``record`` (the shown step's OpRecord) touched.  ``ids_source()``
        gives {payload: trace id} for the hover text; ``blocks`` may pass a
        walk() already made; ``before`` is the heap before the step (a
        :class:`~gui.heap_tracker.TrackedHeap`), for micro-steps."""
        if strategy is None:
            arrays, pointers = heap_cells.block_arrays([], 0), ()
        else:
            heap = TrackedHeap.of(strategy.walk_tuples() if blocks is None else blocks,
                                  strategy.arena.brk, strategy.structure()["pointers"])
            arrays, pointers = heap.blocks, heap.pointers
        self.show_blocks(arrays, record, ids_source, pointers=pointers, before=before)

    def show_blocks(self, arrays: heap_cells.BlockArrays, record=None, ids_source=None,
                    places_source=None, pointers=(), before=None, event_index=None,
                    heap: TrackedHeap | None = None) -> None:
        """Draw a heap given as block columns (the fast path the benchmark
        times) after the step ``record``, and the policy's ``pointers``
        (:class:`~gui.heap_tracker.Pointer` or ``structure()`` dicts).
        ``places_source()`` gives {free block: where the structure keeps it}
        for the hover text.  ``before`` (a TrackedHeap, or a function giving
        one) is the heap before the step, asked only for a micro-step;
        ``event_index`` shows the step up to that event.  ``heap`` (the
        model's :class:`~gui.heap_tracker.TrackedHeap` of ``arrays`` and
        ``pointers``) says what changed since the heap drawn before, so only
        those cells are painted again."""
        if heap is None or heap.blocks is not arrays:
            pointers = tuple(p if isinstance(p, Pointer) else Pointer(p["name"], p["addr"], p["role"])
                             for p in pointers)
            heap = TrackedHeap(arrays, pointers)
        self.heap = heap
        self.record = record
        self._before = before
        self._micro = {}
        self._ids_source = ids_source
        self._ids = None
        self._places_source = places_source
        self.event_index = event_index
        self._stop_transition()
        self._render()

    def set_current_event(self, index: int | None, ms: int | None = None) -> None:
        """Show the step up to and including its event ``index`` (None: the
        whole step).  Over ``ms`` milliseconds (default: the model's
        ``transition_ms``; 0 jumps) the marks the event adds fade in and a
        cut slides down its row."""
        if index is not None:
            index = int(index)
        if index == self.event_index:
            # The same event again with no time to show it means "finish now"
            # (the animator's way to end a transition a key press cut short).
            if (self._transition_ms() if ms is None else int(ms)) <= 0:
                self._stop_transition()
            return
        self.event_index = index
        self._stop_transition()
        self._render()
        ms = self._transition_ms() if ms is None else int(ms)
        if index is not None and ms > 0 and (self._fresh or self._cut_fresh):
            self._transition(0.0)
            self._anim.setDuration(ms)
            if self.manual_transitions:
                self._manual_ms = 0.0          # an exporter moves it on with seek_transition()
            else:
                self._anim.start()

    def set_quiet(self, quiet: bool) -> None:
        """Draw the heap and the policy's pointers only, none of the shown
        step's marks: predict mode asks about the *next* malloc, and the last
        step's search numbers, outlines or banner would be noise on the map,
        or read as a hint."""
        quiet = bool(quiet)
        if quiet == self.quiet:
            return
        self.quiet = quiet
        if self.layout_ is not None:
            self._stop_transition()
            self._render()

    def animating(self) -> bool:
        """A micro-step transition is under way."""
        return self._anim.state() == QVariantAnimation.Running or self._manual_ms is not None

    def finish_transition(self) -> None:
        """Jump to the end of a transition under way (nothing runs after it)."""
        self._stop_transition()

    def seek_transition(self, ms: float) -> None:
        """Set a transition under way to ``ms`` after its start, without the
        clock (an exporter steps frames at a fixed rate); past its length it
        ends."""
        if not self.animating():
            return
        self._anim.stop()
        duration = max(1, self._anim.duration())
        if ms >= duration:
            self._stop_transition()
        else:
            self._manual_ms = float(ms)
            self._transition(ms / duration)

    def _transition_ms(self) -> int:
        model = self.model
        return int(getattr(model, "transition_ms", 0) or 0) if model is not None else int(self.transition_ms)

    def _stop_transition(self) -> None:
        if self._anim.state() == QVariantAnimation.Running:
            self._anim.stop()
        self._manual_ms = None
        self._transition(1.0)

    def _transition(self, p) -> None:
        p = float(p)
        for item in self._fresh:
            item.setOpacity(p)
        if self.layout_ is not None and self._cut_fresh:
            self._draw_cuts(p)

    # ------------------------------------------------------------ the picture
    def _before_heap(self) -> TrackedHeap | None:
        before = self._before
        if callable(before):
            before = self._before = before()
        return before

    def _micro_heap(self, index: int) -> TrackedHeap:
        """The heap after the step's events up to ``index`` (cached per step)."""
        heap = self._micro.get(index)
        if heap is None:
            before = self._before_heap()
            events = self.record.events or []
            if before is None or index >= len(events) - 1:
                heap = self.heap
            else:
                try:
                    heap = apply_events(before, events[:index + 1], after=self.heap)
                except Inconsistent:
                    heap = self.heap
            self._micro[index] = heap
        return heap

    def _block_bytes(self, arrays) -> float:
        return self.block_bytes or arrays.mean_size()

    def layout_for(self, heap_end: int) -> heap_cells.HeapLayout:
        """How to lay out a heap of ``heap_end`` bytes in this map (compare
        mode's rows override it to share one address scale)."""
        return heap_cells.choose_layout(heap_end, self.view_aspect(), self.max_cells,
                                        self._block_bytes(self.heap.blocks))

    def _render(self) -> None:
        """Draw the shown step (up to its shown event)."""
        record, index = self.record, self.event_index
        micro = index is not None and record is not None and record.events
        shown = self._micro_heap(index) if micro else self.heap
        self.shown_heap = shown
        self.blocks = shown.blocks
        heap_end = self.heap.blocks.brk
        if micro:
            before = self._before_heap()
            if before is not None:
                heap_end = max(heap_end, before.blocks.brk)
        layout = self.layout_for(heap_end)
        self.layout_ = layout
        self._paint_cells(shown, layout, micro)
        self.image_item.setImage(self.image, autoLevels=False)
        self.image_item.setRect(QRectF(0, 0, layout.row_bytes, layout.rows))
        axis = self.plot.getAxis("left")
        if axis.row_bytes != layout.row_bytes:
            axis.row_bytes = layout.row_bytes
            axis.picture = None            # redraw the tick labels
            axis.update()
        self.empty_text.setVisible(heap_end == 0)
        self.empty_text.setPos(layout.row_bytes / 2, 0.5)
        self.marks = StepMarks() if self.quiet else step_marks(record, index if micro else None)
        self._fresh = []
        self._cut_fresh = False
        self._draw_marks_of_step()
        self._draw_pointers(shown.pointers)
        self.legend.set_policy(self.heap.blocks.top >= 0,
                               [p.name for p in self.heap.pointers if p.role != MARKER],
                               [p.name for p in self.heap.pointers if p.role == MARKER])
        self._draw_marks()
        self._show_scale()
        if self.follow:
            self.fit()
        self._view_range_changed()
        # The hover line described the old heap: describe the same spot in the new one.
        self._show_info()

    def _paint_cells(self, shown: TrackedHeap, layout, micro: bool) -> None:
        """The cell image of ``shown``: only the bytes a step changed, when the
        image holds the heap it was edited from (the tracker says which,
        gui/heap_tracker.py); the whole heap otherwise."""
        drawn = self._image_of
        if (not micro and drawn is not None and shown.base == drawn[0] and drawn[1] == layout.row_bytes
                and drawn[2] == layout.bytes_per_cell and self.image.shape == (layout.rows, layout.cols)):
            for lo, hi in shown.spans:
                heap_cells.repaint(self.image, shown.blocks, layout, lo, hi)
            self.partial_paints += 1
        else:
            self.image, _ = heap_cells.heap_image(shown.blocks, layout=layout, scratch=self._scratch)
            self.full_paints += 1
        self._image_of = None if micro else (shown.serial, layout.row_bytes, layout.bytes_per_cell)

    def _show_scale(self) -> None:
        """The scale under the bottom axis: the longest of its forms that fits."""
        axis = self.plot.getAxis("bottom")
        # the label is centred under the map's cells, not under the whole
        # widget (the address axis takes the left of it)
        width = max(self.vb.sceneBoundingRect().width() - 8, 100)
        metrics = QFontMetrics(axis.label.font())
        label = ""
        for label in self._scale_texts():
            if metrics.horizontalAdvance(label) + 12 <= width:     # the text item's margins
                break
        if axis.labelText != label:
            axis.setLabel(label)
            # pyqtgraph centres the label only when the axis is resized: a
            # longer text set later ran off the right end
            axis.resizeEvent()

    def _show_row_label(self) -> None:
        """The left axis's "row address" only where the map is tall enough to
        hold it whole (a short map in presenter mode cut it to "row addres")."""
        axis = self.plot.getAxis("left")
        need = QFontMetrics(axis.label.font()).horizontalAdvance("row address") + 12
        show = self.vb.sceneBoundingRect().height() >= need
        if show != axis.label.isVisible():
            axis.showLabel(show)       # the axis keeps its fixed width: the map does not move

    def _scale_texts(self) -> list[str]:
        """The scale line, longest first."""
        lay = self.layout_
        if lay is None or self.blocks.brk == 0:
            return ["byte offset within the row"]
        heap = f"heap {human_bytes(self.blocks.brk)} in {len(self.blocks):,} blocks"
        cell = f"1 cell = {lay.bytes_per_cell} B"
        row = f"1 row = {human_bytes(lay.row_bytes)}"
        return [f"byte offset within the row  ·  {heap}  ·  {cell}  ·  {row}",
                f"offset in the row · {heap} · {cell} · {row}",
                f"offset in the row · {cell} · {row}",
                f"{cell} · {row}"]

    def _pixels(self) -> tuple[float, float]:
        """(bytes per pixel across, pixels per row down) at the current view."""
        (x0, x1), (y0, y1) = self.vb.viewRange()
        r = self.vb.sceneBoundingRect()
        if r.width() <= 0 or r.height() <= 0 or x1 <= x0 or y1 <= y0:
            return float("inf"), 0.0
        return (x1 - x0) / r.width(), r.height() / (y1 - y0)

    def _draw_separators(self) -> None:
        """A white line between two blocks where both are at least
        :data:`SEPARATOR_MIN_PX` wide on screen, and a white gap between
        rows at least :data:`ROW_GAP_MIN_PX` tall: neither hides more than
        a sixteenth of what it separates."""
        b, lay = self.blocks, self.layout_
        bytes_per_px, row_px = self._pixels()
        min_bytes = SEPARATOR_MIN_PX * bytes_per_px
        path = QPainterPath()
        if len(b) > 1 and row_px >= 6 and min_bytes < lay.row_bytes:
            # the blocks in view only: zoomed in on a 100 000-block heap, its
            # blocks get their lines too
            (_, _), (y0, y1) = self.vb.viewRange()
            lo = max(0, int(np.floor(y0))) * lay.row_bytes
            hi = max(0, int(np.ceil(y1))) * lay.row_bytes
            i0 = max(1, int(np.searchsorted(b.addr, lo, side="right")) - 1)
            i1 = int(np.searchsorted(b.addr, hi, side="left"))
            if 0 < i1 - i0 <= MAX_SEPARATED_BLOCKS:
                size = b.size[i0 - 1:i1]
                wide = np.minimum(size[1:], size[:-1]) >= min_bytes
                rows, x = np.divmod(b.addr[i0:i1], lay.row_bytes)
                keep = wide & (x > 0)               # a block starting a row needs no line
                rows, x = rows[keep].astype(np.float64), x[keep].astype(np.float64)
                if len(rows):
                    xs = np.repeat(x, 2)
                    ys = np.empty(2 * len(rows))
                    ys[0::2] = rows + 0.12
                    ys[1::2] = rows + 0.88
                    path = pg.arrayToQPath(xs, ys, connect="pairs")
        self.separator_item.setPath(path)
        if lay.rows > 1 and row_px >= ROW_GAP_MIN_PX:
            pen = self.row_gap_item.pen()
            pen.setWidthF(min(2.0, float(int(row_px // ROW_GAP_MIN_PX))))
            self.row_gap_item.setPen(pen)
            ys = np.repeat(np.arange(1, lay.rows, dtype=np.float64), 2)
            xs = np.tile(np.array([0.0, float(lay.row_bytes)]), lay.rows - 1)
            self.row_gap_item.setPath(pg.arrayToQPath(xs, ys, connect="pairs"))
        else:
            self.row_gap_item.setPath(QPainterPath())

    def _draw_marks_of_step(self) -> None:
        """Outline what the shown step (so far) did."""
        marks, row_bytes = self.marks, self.layout_.row_bytes
        self._style_searched(len(marks.visits))
        self.searched_item.setPath(_path_of(marks.visits, row_bytes))
        self.placed_item.setPath(_path_of(marks.placed, row_bytes))
        self.released_item.setPath(_path_of(marks.released, row_bytes))
        self.grown_item.setPath(_path_of(marks.grown, row_bytes))
        self._draw_cuts(1.0)
        self._number_visits()
        self._draw_current()
        self._draw_failure()

    def _style_searched(self, visits: int) -> None:
        """A search of many blocks (K&R's free walking a ring of thousands) is
        lit by filling its blocks: thick outlines of thousands of blocks, each
        a pixel or two wide, cost 17 ms a frame to paint and read no better."""
        many = visits > MANY_VISITS
        if many == getattr(self, "_searched_filled", False):
            return
        self._searched_filled = many
        pen = self.searched_item.pen()
        pen.setWidthF((1.0 if many else 2.5) * self.presentation.line_scale)
        self.searched_item.setPen(pen)
        fill = QColor(palette.SEARCHED)
        fill.setAlpha(150)
        self.searched_item.setBrush(QBrush(fill) if many else QBrush(Qt.NoBrush))

    def _draw_cuts(self, progress: float) -> None:
        """A thick line across the row at each cut; during a transition the
        newest one slides down from the top of its row."""
        row_bytes = self.layout_.row_bytes
        path = QPainterPath()
        cuts = self.marks.cuts
        for i, addr in enumerate(cuts):
            x, y = addr % row_bytes, addr // row_bytes
            grow = progress if (self._cut_fresh and i == len(cuts) - 1) else 1.0
            path.moveTo(QPointF(x, y - 0.1))
            path.lineTo(QPointF(x, y - 0.1 + 1.2 * grow))
        self.cut_item.setPath(path)

    def _block_range(self, addr: int) -> tuple[int, int] | None:
        """(addr, size) of the shown block holding ``addr``."""
        b = self.blocks
        i = b.index_at(addr)
        if i < 0:
            return None
        return int(b.addr[i]), int(b.size[i])

    def _draw_current(self) -> None:
        """Ring the blocks the current event names (micro-steps only)."""
        marks = self.marks
        ranges = []
        for a in marks.current:
            r = self._block_range(a)
            if r is not None and r not in ranges:
                ranges.append(r)
        self.current_item.setPath(_path_of(ranges, self.layout_.row_bytes))
        ev = marks.current_event
        if ev is None:
            return
        self._fresh.append(self.current_item)
        name = type(ev).__name__
        fresh = {"Placed": self.placed_item, "Released": self.released_item, "Coalesce": self.released_item,
                 "BuddyMerge": self.released_item, "Grow": self.grown_item}.get(name)
        if fresh is not None:
            self._fresh.append(fresh)
        if name in ("Split", "BuddySplit"):
            self._cut_fresh = True
        if name == "Visit" and self._order_labels:
            last = len(marks.visits) - 1
            for label, (first, _, _) in zip(self._order_labels, self._label_blocks):
                if label.isVisible() and str(last + 1) in label.textItem.toPlainText().split("·"):
                    self._fresh.append(label)

    def _number_visits(self) -> None:
        """Write 1, 2, 3... on the examined blocks, in search order: one label
        per block (a block examined twice reads "1·27"); a long search is
        numbered at both ends and says how many it left out."""
        marks = self.marks
        # a number per LABEL_ROOM square pixels of map at most: a small map
        # numbers fewer visits, not the whole map over
        self._numbered_for = self._label_budget()
        marks.renumber(self._numbered_for)
        by_block: dict[tuple[int, int], list[int]] = {}
        for i in marks.numbered:
            by_block.setdefault(marks.visits[i], []).append(i + 1)
        groups = sorted(by_block.items(), key=lambda kv: kv[1][0])
        while len(self._order_labels) < len(groups):
            label = self._text_item("number", NUMBER_POINTS)
            self._order_labels.append(label)
        self._label_blocks = []
        placed = []
        for i, label in enumerate(self._order_labels):
            if i < len(groups):
                (addr, size), numbers = groups[i]
                label.setText("·".join(map(str, numbers)))
                label.show()
                self._label_blocks.append((numbers[0] - 1, addr, size))
                placed.append((label, self._block_top(addr, size), "number"))
            else:
                label.hide()
        skipped = marks.skipped
        if skipped:
            self.skip_label.setText(f"+{skipped:,} not numbered")
            self.skip_label.show()
            # under the first block left without a number
            placed.append((self.skip_label, self._block_top(*marks.skipped_at()), "below"))
        else:
            self.skip_label.hide()
        # the block taken (the last visit) gets its number first, should room run out
        last = len(marks.visits)
        placed.sort(key=lambda q: str(last) not in q[0].textItem.toPlainText().split("·"))
        self._number_places = placed

    def _label_budget(self) -> int:
        """How many search numbers the map has room for at its size on screen
        (bigger numbers in presenter mode take more room each)."""
        r = self.vb.sceneBoundingRect()
        room = LABEL_ROOM * self.presentation.text_scale ** 2
        return int(r.width() * r.height() / room) if r.width() > 50 else 40

    def _say_search(self) -> None:
        """The search in words under the map when its numbers do not say it all."""
        marks = self.marks
        n, skipped = len(marks.visits), marks.skipped
        parts = []
        if skipped:
            last = len(marks.numbered) - marks.first
            parts.append(f"{n:,} blocks searched: 1–{marks.first} and {n - last + 1:,}–{n:,} "
                         f"numbered, {skipped:,} in between not")
        if self.crowded:
            parts.append(f"{self.crowded} number{'s' if self.crowded > 1 else ''} crowded: "
                         f"zoom in (wheel) to read them")
        self.search_note = "; ".join(parts)
        self._show_info()

    def _show_info(self) -> None:
        """The line under the map: the block under the mouse, or else what the
        search's numbers do not say."""
        text = " "
        if self._hover_pos is not None:
            text = self.describe_address(self.address_at(self._hover_pos))
        self.info.setText(self.search_note if text == " " and self.search_note else text)

    def _block_top(self, addr: int, size: int) -> tuple[float, float]:
        """The middle of the top edge of a block's piece in its first row
        (view coordinates): a number stands on it."""
        row_bytes = self.layout_.row_bytes
        x, y = addr % row_bytes, addr // row_bytes
        return x + min(size, row_bytes - x) / 2, float(y)

    def _draw_pointers(self, pointers) -> None:
        """Every pointer of the policy where the step left it: a search
        pointer as an orange triangle under its block's first byte, a marker
        as a green diamond, each named; a pointer at a sentinel outside the
        heap (K&R's ``&base``) in words."""
        lay = self.layout_
        search, markers, at_sentinel = [], [], []
        for p in pointers:
            if p.addr is None or p.addr < 0:
                if p.role != MARKER:           # a marker at nothing marks nothing
                    at_sentinel.append(p)
            elif p.role == MARKER:
                markers.append(p)
            else:
                search.append(p)
        self.pointer_item.setData(pos=[(x, y + 1) for x, y in (lay.point_of(p.addr) for p in search)])
        self.marker_item.setData(pos=[(x, y + 1) for x, y in (lay.point_of(p.addr) for p in markers)])
        named = search + markers
        while len(self._pointer_labels) < len(named):
            self._pointer_labels.append(self._text_item("pointer", POINTER_POINTS, z=19))
        placed = []
        for i, label in enumerate(self._pointer_labels):
            if i < len(named):
                p = named[i]
                x, y = lay.point_of(p.addr)
                label.setText(p.name)
                label.show()
                placed.append((label, (x, y + 1), "pointer"))
            else:
                label.hide()
        self._pointer_places = placed
        if at_sentinel:
            # (a pointer at nothing says the list is empty only when it is:
            # dlmalloc's last_remainder is at no block beside full bins)
            empty = not np.any(self.shown_heap.blocks.state == heap_cells.STATE_FREE)
            self.pointer_note.setText(" · ".join(
                f"{p.name} = &base (K&R's list sentinel, outside the heap): the next search "
                f"starts at the lowest free block" if p.name == "rover" else
                f"{p.name}: at no block" + (" (the free list is empty)" if empty else "")
                for p in at_sentinel))
            self.pointer_note.show()
        else:
            self.pointer_note.hide()
        self._place_notes()

    def _draw_failure(self) -> None:
        failed = self.marks.failed
        row_bytes = self.layout_.row_bytes
        brk = self.blocks.brk
        self._extra_rows = 0
        if failed:
            # Where the heap would have had to grow: right after the break.
            self.failed_item.setPath(_path_of([(brk, failed)], row_bytes))
            self._extra_rows = max(0, -(-(brk + failed) // row_bytes) - self.layout_.rows)
            record = self.record
            kind = getattr(record, "kind", "malloc")
            self.banner.setText(f"✗ {kind}({record.request}) failed: no block fits "
                                f"and the heap cannot grow by {failed:,} bytes")
            if not self.banner.isVisible():
                self.banner.show()
                self._flash_left = 6
                self._flash.start()
            self._place_notes()
        else:
            self.failed_item.setPath(QPainterPath())
            self.failed_item.setVisible(True)
            self.banner.hide()
            self._flash.stop()

    def _flash_tick(self) -> None:
        self._flash_left -= 1
        self.failed_item.setVisible(self._flash_left % 2 == 0)
        if self._flash_left <= 0:
            self.failed_item.setVisible(True)
            self._flash.stop()

    def _place_notes(self) -> None:
        """The failure banner at the top of the map, the note on a pointer at
        no block at its bottom left: each in the map's width, its words
        wrapped onto more lines rather than cut off at the map's edge."""
        w = self.plot_widget.width()
        r = self.plot_widget.mapFromScene(self.vb.sceneBoundingRect()).boundingRect()
        _fit_width(self.banner, w - 16)
        self.banner.move(max(0, (w - self.banner.width()) // 2), 8)
        note = self.pointer_note
        _fit_width(note, r.width() - 12)
        # bottom left, unless it would hide a pointer drawn there (dlmalloc's
        # top, the wilderness: the end of the heap, the bottom row); then the
        # other corners
        w_, h_ = note.width(), note.height()
        corners = [(r.left() + 6, r.bottom() - h_ - 6), (r.right() - w_ - 6, r.bottom() - h_ - 6),
                   (r.left() + 6, r.top() + 6), (r.right() - w_ - 6, r.top() + 6)]
        symbols = self._pointer_rects() if not note.isHidden() else []
        for x, y in corners:
            if not any(QRect(x, y, w_, h_).intersects(q) for q in symbols):
                break
        else:
            x, y = corners[0]
        note.move(x, y)

    def _pointer_rects(self) -> list:
        """The pointers' symbols and names, in the plot widget's pixels."""
        rects = []
        for item in (self.pointer_item, self.marker_item):
            xs, ys = item.getData()
            for x, y in zip(xs, ys):
                p = self.plot_widget.mapFromScene(self.vb.mapViewToScene(QPointF(x, y)))
                rects.append(QRect(p.x() - 10, p.y() - 10, 20, 20))
        for label in self._pointer_labels:
            if label.isVisible():
                rects.append(self.plot_widget.mapFromScene(label.sceneBoundingRect()).boundingRect())
        return rects

    def _view_range_changed(self, *_) -> None:
        """The view moved or resized: separators and label places depend on its scale."""
        if self.layout_ is None:
            return
        if self.marks.visits and self._label_budget() != self._numbered_for:
            # The map was resized: number as many visits as a map of this size
            # numbers when a step is drawn on it (one picture per step, whether
            # the window was resized before the step or after it).
            self._stop_transition()
            self._number_visits()
        self._draw_separators()
        self._place_labels()
        self._place_notes()
        self._show_scale()
        self._show_row_label()

    def _place_labels(self) -> None:
        """Put the labels on screen: each number standing on its block, the count of
        unnumbered visits under the first of them, each pointer's name under
        its symbol.  A label keeps inside the view (a number on the first
        row is not drawn above the map) and off the labels placed before it:
        moved to the nearest free spot around its block, with a leader line
        to it.  Where no spot is free the label overlaps others and counts
        in :attr:`crowded` (the line under the map says: zoom in)."""
        view = self.vb.sceneBoundingRect()
        vl, vt, vr, vb_ = view.left() + 1, view.top() + 1, view.right() - 1, view.bottom() - 1
        occupied: list[tuple[float, float, float, float]] = list(self._reserved_rects())
        half = 9 * self.presentation.text_scale        # half a pointer symbol
        for item in (self.pointer_item, self.marker_item):
            xs, ys = item.getData()
            for x, y in zip(xs, ys):
                p = self.vb.mapViewToScene(QPointF(x, y))
                occupied.append((p.x() - half, p.y() - half, p.x() + half, p.y() + half))

        def free(r) -> bool:
            x0, y0, x1, y1 = r
            for a0, b0, a1, b1 in occupied:
                if x0 < a1 and a0 < x1 and y0 < b1 and b0 < y1:
                    return False
            return True

        leaders = QPainterPath()
        self.crowded = 0
        for label, (x, y), kind in self._pointer_places + self._number_places:
            if not label.isVisible():
                continue
            size = label.boundingRect()
            w, h = size.width(), size.height()
            p = self.vb.mapViewToScene(QPointF(x, y))
            if kind == "number":                    # standing on the block's top edge
                left, top = p.x() - w / 2, p.y() - h - 1
            elif kind == "below":
                left, top = p.x() - w / 2, p.y() + 2 * h
            else:                                   # under a pointer's symbol
                left, top = p.x() - w / 2, p.y() + half + 1
            inside = view.contains(p)
            first = rect = None
            for dx, dy in self._spots(w + 2, h + 2):
                x0, y0 = left + dx, top + dy
                if inside:                          # keep it in the view
                    x0 = min(max(x0, vl), vr - w)
                    y0 = min(max(y0, vt), vb_ - h)
                r = (x0, y0, x0 + w, y0 + h)
                first = first or r
                if free(r):
                    rect = r
                    break
            if rect is None:
                rect = first
                self.crowded += kind == "number"
            occupied.append(rect)
            label.setPos(self.vb.mapSceneToView(QPointF(rect[0], rect[1])))
            if kind == "number" and not (rect[0] <= p.x() <= rect[2] and rect[1] - 2 <= p.y() <= rect[3] + 2):
                # moved off its block: a line leads from the block to it
                end = QPointF(min(max(p.x(), rect[0]), rect[2]), rect[3] if p.y() > rect[3] else rect[1])
                leaders.moveTo(self.vb.mapSceneToView(p))
                leaders.lineTo(self.vb.mapSceneToView(end))
        self.leader_item.setPath(leaders)
        self._say_search()

    def _reserved_rects(self) -> list[tuple[float, float, float, float]]:
        """Scene rectangles (x0, y0, x1, y1) the labels keep off (compare
        mode's rows keep the request's label clear)."""
        return []

    @staticmethod
    def _spots(w: float, h: float) -> tuple[tuple[float, float], ...]:
        """Offsets to try for a label, nearest first: up and down by rows of
        labels, then beside."""
        return _label_spots(float(w), float(h))

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._place_notes()
        self._show_scale()
        # With self as the context the call is dropped if the map is deleted first.
        QTimer.singleShot(0, self, self._relayout_if_needed)

    def _relayout_if_needed(self) -> None:
        if self.layout_ is None:
            return
        heap_end = max(self.heap.blocks.brk, self.layout_.heap)
        wanted = self.layout_for(heap_end)
        if wanted != self.layout_:
            self._render()
        else:
            self._view_range_changed()

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
        self._show_info()
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
        return self.block_outlined_by(self.selected_item.path())

    def block_outlined_by(self, path: QPainterPath) -> tuple[int, int] | None:
        """(address, size) of the block an outline's ``path`` is drawn
        around (None for an empty path): what tests read back."""
        if path.isEmpty():
            return None
        # the path's first rectangle starts at the block's first byte
        first = path.toSubpathPolygons()[0].boundingRect()
        start = int(round(first.top())) * self.layout_.row_bytes + int(round(first.left()))
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
            self.block_bytes = None
            self.show_heap(None)
            return
        self.block_bytes = typical_block_bytes(step.trace)
        heap = step.heap
        self.show_blocks(heap.blocks, step.record, step.ids_source, lambda: step.places,
                         pointers=heap.pointers, before=lambda: step.heap_before,
                         event_index=self.model.event_in_row(self.row), heap=heap)

    def _model_event(self, index) -> None:
        # compare mode: this row's own event (its step may have fewer than the longest)
        self.set_current_event(None if index is None else self.model.event_in_row(self.row))

    def _model_hover(self, addr) -> None:
        self.hover_block = addr
        self._draw_marks()
        if addr is not None and addr != self._own_hover:
            # hovered in another view: say the same facts here
            self.info.setText(self.describe_address(addr))

    def leaveEvent(self, event) -> None:
        super().leaveEvent(event)
        self._hover_pos = None
        self._show_info()
        if self._own_hover is not None:
            self._own_hover = None
            self.block_hovered.emit(-1)

    def cell_colour(self, address: int) -> tuple[int, int, int, int]:
        """RGBA drawn for the cell holding ``address``, read from the rendered QImage."""
        self.image_item.render()
        row, col = self.layout_.cell_of(address)
        c = self.image_item.qimage.pixelColor(col, row)
        return c.red(), c.green(), c.blue(), c.alpha()
