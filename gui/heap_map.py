"""The heap map: the whole heap in address order, wrapped into rows.

One ``pg.ImageItem`` shows the cell image of :mod:`heapscope.gui.heap_cells` through the
palette's LUT (an 8-bit indexed QImage: no per-pixel conversion), so a frame
costs the same for 100 blocks or 100 000.  Over it, each a handful of items
whatever the heap's size, :class:`HeapMapWidget` composes its parts:

- :mod:`heapscope.gui.map_grid`: lines between blocks and gaps between rows, only where
  they hide at most a sixteenth of what they separate (so no state is drawn
  white at real sizes);
- :mod:`heapscope.gui.map_marks`: what the current step did (:mod:`heapscope.gui.step_marks`):
  the free blocks its search examined, where a block was cut, the block
  placed or freed and what it joined, the bytes the heap grew by, a request
  that failed (with its banner);
- :mod:`heapscope.gui.map_labels`: the search's numbers, in search order (a long search
  at both ends, with the count it left unnumbered), the pointers' names, and
  where each goes on screen;
- :mod:`heapscope.gui.map_pointers`: the policy's pointers where the step left them: a
  search pointer (K&R's rover, Kruse's head: where the next search starts) as
  an orange triangle under its block, a marker (Vmbest's wilderness) as a
  green diamond, a pointer at a sentinel in words;
- :mod:`heapscope.gui.map_transition`: a micro-step's new marks fading in and its cut
  sliding down its row over the model's ``transition_ms``;
- :mod:`heapscope.gui.map_legend` above the map and, under it, a line naming the block
  under the mouse; the axes styled as the plots' (:mod:`heapscope.gui.axis_style`).

Micro-steps: :meth:`HeapMapWidget.set_current_event` shows the step up to
one of its events -- the heap before the step with the events so far applied
(:func:`heapscope.allocators.heap_tracker.apply_events`), and the marks so far.  The event
itself is ringed.

The picture is a function of the step (and of the view's size and zoom)
alone: the layout has no memory (:func:`heapscope.gui.heap_cells.choose_layout`), the
left axis has a fixed width, so a step looks the same whichever way it was
reached.

Hovering names the block under the mouse; a click selects it (outlined, and
marked in the structure view too); the wheel zooms and a drag pans
(pyqtgraph's ViewBox); View > Fit heap brings the whole heap back.

Bound to the window's :class:`~heapscope.gui.show_model.ShowModel` (:meth:`bind`), the
map draws the model's shown step and event, its selection and its hover, and
reports clicks and hovers to it.

Coordinates: x is the byte offset within a row (0 .. row_bytes), y the row
number growing downwards, so address ``a`` sits at ``(a % row_bytes, a //
row_bytes)``.
"""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import QPointF, Qt, QTimer, Signal
from PySide6.QtGui import QFont, QPainterPath
from PySide6.QtWidgets import QHBoxLayout, QSizePolicy, QToolTip, QVBoxLayout, QWidget

from . import block_facts, heap_cells
from heapscope.allocators.heap_edits import Pointer, TrackedHeap
from .line_label import LineLabel
from .map_axes import AddressAxis, MapAxes, scale_texts
from .map_cells import CellImage
from .map_coords import address_at, block_top, scene_pos_of, view_aspect
from .map_grid import BlockSeparators
from .map_labels import MapLabels, label_budget, search_words
from .map_legend import Legend    # (compare mode imports it from here)
from .map_marks import StepMarksLayer, folded_notes, heap_rects, label_rects
from .map_pointers import MARKER, PointerLayer
from .map_selection import SelectionLayer, block_range
from .map_step import DrawnStep
from .map_transition import MapTransition
from .step_marks import StepMarks, step_marks
from .subscriber import Subscriber
from .theme import Presentation

#: the map's least height in pixels, axes included
PLOT_MIN_HEIGHT = 100


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


def fit_moved_view(view) -> bool:
    """Fit the map ``view`` to its heap if it follows it (:meth:`HeapMapWidget.fit`);
    True if that moved its view: the view's labels and separators were then
    placed for it already (by ``sigRangeChanged``), and placing them again
    drew the same things twice."""
    if not view.follow:
        return False
    moved = []

    def note(*_) -> None:
        moved.append(True)
    view.vb.sigRangeChanged.connect(note)
    try:
        view.fit()
    finally:
        view.vb.sigRangeChanged.disconnect(note)
    return bool(moved)


def _forward(part: str, name: str, doc: str, settable: bool = False) -> property:
    """A property reading (and, if ``settable``, writing) ``self.<part>.<name>``."""
    def get(self):
        return getattr(getattr(self, part), name)

    def set_(self, value):
        setattr(getattr(self, part), name, value)
    return property(get, set_ if settable else None, doc=doc)


def new_map_plot() -> pg.PlotWidget:
    """A heap map's plot, not yet any map's: a third of making a map.  Compare
    mode makes a row's widgets in parts, a turn each, and hands this to
    ``HeapMapWidget(plot_widget=...)``; a map made without one makes its own."""
    return pg.PlotWidget(axisItems={"left": AddressAxis()}, background="w", enableMenu=False)


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

    def __init__(self, parent=None, max_cells: int = heap_cells.MAX_CELLS,
                 plot_widget: pg.PlotWidget | None = None) -> None:
        super().__init__(parent)
        self._relayout_timer = QTimer(self, singleShot=True, timeout=self._relayout_if_needed)
        self.max_cells = max_cells
        #: the shown step, and the heap drawn (the heap after it, or a micro-step of it)
        self.drawn_step = DrawnStep()
        self.shown_heap = self.heap
        self.blocks = self.heap.blocks
        self.layout_: heap_cells.HeapLayout | None = None
        self.marks = StepMarks()
        #: the event shown (None: the whole step)
        self.event_index: int | None = None
        #: transition length (ms) of a change of event when no model says it
        self.transition_ms = 0
        #: bytes of a typical block (rows are cut for it); None: the heap's mean
        self.block_bytes: float | None = None
        self.follow = True            # keep the whole heap in view until the user zooms
        self.selected: int | None = None       # the selected block's address
        self.hover_block: int | None = None    # the block hovered here or in another view
        self._own_hover: int | None = None     # ... when the mouse is over this map
        #: the heap and the pointers only, none of the step's marks (set_quiet)
        self.quiet = False
        self.presentation = Presentation()

        self.legend = Legend()
        # no pyqtgraph context menu (it used to be built, then disabled at once)
        self.plot_widget = plot_widget if plot_widget is not None else new_map_plot()
        self.plot_widget.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Expanding)
        # (a legend wrapped onto four or five lines, this and the line under
        # it fill the map's share of a 1280 x 720 window, 262 px: a taller
        # minimum squeezed that line onto the address axis; the layout gives
        # the map all the height left, 134-155 px there)
        self.plot_widget.setMinimumHeight(PLOT_MIN_HEIGHT)
        plot = self.plot = self.plot_widget.getPlotItem()
        plot.hideButtons()
        self.axes = MapAxes(plot)
        self.vb = plot.getViewBox()
        self.vb.invertY(True)
        self.vb.setMouseEnabled(x=True, y=True)
        self.vb.sigRangeChangedManually.connect(self._user_moved_view)
        self.vb.sigRangeChanged.connect(self._view_range_changed)
        # The box also changes size inside an unchanged widget (the line
        # under the map wraps to one line more or less): the labels are
        # placed again for it, else a step played to its end and the same
        # step reached by a seek put its numbers in different places.
        self.vb.sigResized.connect(self._view_range_changed)

        # The cells and the parts drawn over them (each module's docstring says what it draws).
        self.cells = CellImage(plot, self.font().family())
        self.grid = BlockSeparators(plot)
        self.marks_layer = StepMarksLayer(plot, self.plot_widget)
        self.labels = MapLabels(plot, self.font().family())
        self.pointers = PointerLayer(plot, self.plot_widget, self.labels)
        self.selection = SelectionLayer(plot)
        self.transition = MapTransition(self, self._slide_cut)
        self._name_parts()
        #: what the numbers do not say (a long search's unnumbered middle, the
        #: numbers left out for want of room): the line under the map says it
        #: when the mouse is not over a block
        self.search_note = ""

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

    def _name_parts(self) -> None:
        """The parts' items under the map's own names (tests, compare mode
        and the exporter read them)."""
        m, labels, pointers = self.marks_layer, self.labels, self.pointers
        self.image_item, self._scratch = self.cells.item, self.cells.scratch
        self.current_item, self.searched_item, self.grown_item = m.current, m.searched, m.grown
        self.released_item, self.placed_item, self.cut_item = m.released, m.placed, m.cut
        self.failed_item, self.banner = m.failed, m.banner
        self.separator_item, self.row_gap_item = self.grid.blocks, self.grid.rows
        self.leader_item, self.skip_label = labels.leader, labels.skip
        # (lists the parts only ever extend: the names stay bound to them)
        self._order_labels, self._pointer_labels = labels.numbers, labels.pointer_names
        self.pointer_item, self.marker_item, self.pointer_note = pointers.search, pointers.markers, pointers.note
        sel = self.selection
        self.selected_outer, self.selected_item, self.hover_item = sel.outer, sel.core, sel.hover
        self._fresh, self._anim = self.transition.fresh, self.transition.anim

    # what the parts hold, under the map's own names
    heap = _forward("drawn_step", "heap", "The heap after the shown step.")
    record = _forward("drawn_step", "record", "The shown step's record (None: none).")
    image = _forward("cells", "image", "The cell image drawn (one byte a cell: heap_cells' codes).")
    partial_paints = _forward("cells", "partial_paints", "Frames painted only where the step changed the heap.")
    full_paints = _forward("cells", "full_paints", "Frames whose whole heap was painted.")
    crowded = _forward("labels", "crowded", "Numbers that overlap others at this zoom for want of room.")
    _number_places = _forward("labels", "number_places", "The number labels to place.", settable=True)
    _extra_rows = _forward("marks_layer", "extra_rows", "Rows the failure marker needs past the heap.")
    manual_transitions = _forward("transition", "manual", "An exporter steps transitions itself "
                                  "(seek_transition) instead of the clock.", settable=True)

    # ------------------------------------------------------------ presentation
    def apply_presentation(self, pres: Presentation) -> None:
        """Theme colours, text sizes and outline widths (presenter mode): the
        axes, the legend, the outlines, the pointers, the search numbers and
        the notes all scale together."""
        self.presentation = pres
        self.legend.apply_presentation(pres)
        self.plot_widget.setBackground(pres.theme.background)
        self.axes.apply_presentation(pres, self.font())
        for part in (self.cells, self.grid, self.marks_layer, self.labels, self.pointers, self.selection):
            part.apply_presentation(pres)
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
        return view_aspect(self.vb)

    def show_heap(self, strategy, record=None, ids_source=None, blocks=None, before=None) -> None:
        """Draw ``strategy``'s heap (None: nothing loaded) and light up what
        ``record`` (the shown step's OpRecord) touched.  ``ids_source()``
        gives {payload: trace id} for the hover text; ``blocks`` may pass a
        walk() already made; ``before`` is the heap before the step (a
        :class:`~heapscope.allocators.heap_tracker.TrackedHeap`), for micro-steps."""
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
        (:class:`~heapscope.allocators.heap_tracker.Pointer` or ``structure()`` dicts).
        ``places_source()`` gives {free block: where the structure keeps it}
        for the hover text.  ``before`` (a TrackedHeap, or a function giving
        one) is the heap before the step, asked only for a micro-step;
        ``event_index`` shows the step up to that event.  ``heap`` (the
        model's :class:`~heapscope.allocators.heap_tracker.TrackedHeap` of ``arrays`` and
        ``pointers``) says what changed since the heap drawn before, so only
        those cells are painted again."""
        if heap is None or heap.blocks is not arrays:
            pointers = tuple(p if isinstance(p, Pointer) else Pointer(p["name"], p["addr"], p["role"])
                             for p in pointers)
            heap = TrackedHeap(arrays, pointers)
        self.drawn_step = DrawnStep(heap, record, before, ids_source, places_source)
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
        if index is not None and ms > 0 and self.transition.has_work():
            self.transition.start(ms)

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
        return self.transition.running()

    def finish_transition(self) -> None:
        """Jump to the end of a transition under way (nothing runs after it)."""
        self._stop_transition()

    def seek_transition(self, ms: float) -> None:
        """Set a transition under way to ``ms`` after its start, without the
        clock (an exporter steps frames at a fixed rate); past its length it
        ends."""
        self.transition.seek(ms)

    def _transition_ms(self) -> int:
        model = self.model
        return int(getattr(model, "transition_ms", 0) or 0) if model is not None else int(self.transition_ms)

    def _stop_transition(self) -> None:
        self.transition.stop()

    def _slide_cut(self, progress: float) -> None:
        if self.layout_ is not None:
            self.marks_layer.draw_cuts(self.layout_.row_bytes, progress)

    # ------------------------------------------------------------ the picture
    def layout_for(self, heap_end: int) -> heap_cells.HeapLayout:
        """How to lay out a heap of ``heap_end`` bytes in this map (compare
        mode's rows override it to share one address scale)."""
        return heap_cells.choose_layout(heap_end, self.view_aspect(), self.max_cells,
                                        self.block_bytes or self.heap.blocks.mean_size())

    def _render(self) -> None:
        """Draw the shown step (up to its shown event)."""
        step, index = self.drawn_step, self.event_index
        micro = step.is_micro(index)
        shown = self.shown_heap = step.heap_at(index)
        self.blocks = shown.blocks
        heap_end = step.heap_end(index)
        layout = self.layout_ = self.layout_for(heap_end)
        self.cells.paint(shown, layout, micro, empty=heap_end == 0)
        self.axes.left.set_row_bytes(layout.row_bytes)
        self.marks = StepMarks() if self.quiet else step_marks(step.record, index if micro else None)
        self._draw_marks_of_step()
        self.pointers.show(shown.pointers, layout, shown.blocks)
        self._place_notes()
        self.legend.set_policy(self.heap.blocks.top >= 0,
                               [p.name for p in self.heap.pointers if p.role != MARKER],
                               [p.name for p in self.heap.pointers if p.role == MARKER])
        self._draw_marks()
        self._show_scale()
        if not fit_moved_view(self):
            self._view_range_changed()
        # The hover line described the old heap: describe the same spot in the new one.
        self._show_info()

    def _draw_marks_of_step(self) -> None:
        """Outline what the shown step (so far) did, number its search, and
        say what a micro-step's transition brings in."""
        marks, row_bytes = self.marks, self.layout_.row_bytes
        self.marks_layer.show(marks, row_bytes, self._block_range)
        self._number_visits()
        fresh, cut = self.marks_layer.fresh_items()
        fresh += self.labels.newest_numbers(marks)
        self.transition.prepare(fresh, cut)
        if self.marks_layer.show_failure(self.record, self.blocks.brk, row_bytes, self.layout_.rows):
            self._place_notes()

    def _number_visits(self) -> None:
        """Write 1, 2, 3... on the examined blocks, as many as the map has room for."""
        self.labels.number(self.marks, self._label_budget(), self._block_top)

    def _label_budget(self) -> int:
        r = self.vb.sceneBoundingRect()
        return label_budget(r.width(), r.height(), self.presentation)

    def _block_range(self, addr: int) -> tuple[int, int] | None:
        """(addr, size) of the shown block holding ``addr``."""
        return block_range(self.blocks, addr)

    def _block_top(self, addr: int, size: int) -> tuple[float, float]:
        return block_top(self.layout_.row_bytes, addr, size)

    def _show_scale(self) -> None:
        """The scale under the bottom axis: the longest of its forms that fits."""
        # the label is centred under the map's cells, not under the whole
        # widget (the address axis takes the left of it)
        self.axes.show_scale(scale_texts(self.layout_, self.blocks), max(self.vb.sceneBoundingRect().width() - 8, 100))

    def _show_row_label(self) -> None:
        """The left axis's "row address" only where the map is tall enough to hold it whole."""
        self.axes.show_row_label(self.vb.sceneBoundingRect().height())

    def _draw_separators(self) -> None:
        """The lines between blocks and rows at the current view's scale."""
        self.grid.draw(self.blocks, self.layout_, self.vb)

    def _say_search(self) -> None:
        """The search in words under the map when its numbers do not say it all."""
        self.search_note = search_words(self.marks, self.crowded, self.labels.left_out)
        self._show_info()

    def _show_info(self) -> None:
        """The line under the map: the block under the mouse, else the notes folded there and what the numbers do not say."""
        text = self.describe_address(self.address_at(self._hover_pos)) if self._hover_pos is not None else " "
        self.info.setText("; ".join(t for t in (*folded_notes(self.marks_layer, self.pointers), self.search_note) if t) or " " if text == " " else text)

    def _place_notes(self) -> None:
        """The banner and a pointer's note off heap bytes and labels, else folded under the map."""
        folded, widget = folded_notes(self.marks_layer, self.pointers), self.plot_widget
        self.marks_layer.place_banner(widget, self.vb)
        data = [] if self.layout_ is None else heap_rects(widget, self.vb, self.blocks.brk, self.layout_.row_bytes) \
            + label_rects(widget, self.labels, getattr(self, "request_label", None))
        self.pointers.place_note(widget.mapFromScene(self.vb.sceneBoundingRect()).boundingRect(), widget, self.vb, data)
        if folded_notes(self.marks_layer, self.pointers) != folded:
            self._show_info()

    def _pointer_rects(self) -> list:
        """The pointers' symbols and names, in the plot widget's pixels."""
        return self.pointers.rects(self.plot_widget, self.vb)

    def _view_range_changed(self, *_) -> None:
        """The view moved or resized: separators and label places depend on its scale."""
        if self.layout_ is None:
            return
        if self.marks.visits and self._label_budget() != self.labels.numbered_for:
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
        """Put the numbers and the pointers' names on screen (:meth:`heapscope.gui.map_labels.
        MapLabels.place`), off the pointers' symbols, what the map keeps clear and the step's marks."""
        occupied = [*self._reserved_rects(), *self.pointers.symbol_squares(self.vb), *self.marks_layer.hatch_rects()]
        self.labels.place(self.vb, occupied, self.pointers.half, self.layout_.row_bytes, self.marks)
        self._say_search()

    def _reserved_rects(self) -> list[tuple[float, float, float, float]]:
        """Scene rectangles (x0, y0, x1, y1) the labels keep off (compare
        mode's rows keep the request's label clear)."""
        return []

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._place_notes()
        self._show_scale()
        # (the map's timer, restarted: one relayout after a burst of resizes, not one each)
        self._relayout_timer.start(0)

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
        return address_at(self.vb, self.layout_, scene_pos)

    def scene_pos_of(self, address: int) -> QPointF:
        """Scene position of the middle of the byte at ``address`` (tests hover with it)."""
        return scene_pos_of(self.vb, self.layout_, address)

    def describe_address(self, address: int) -> str:
        """What is at ``address``, in words, for the hover line."""
        return self.drawn_step.describe(self.blocks, address)

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
        if self.layout_ is None:
            return
        foreign = self.hover_block if self.hover_block != self._own_hover else None
        self.selection.draw(self.blocks, self.layout_.row_bytes, self.selected, foreign)

    def selected_range(self) -> tuple[int, int] | None:
        """(address, size) of the block the selection outline is drawn around,
        read back from the outline's path (None when nothing is outlined)."""
        return self.block_outlined_by(self.selected_item.path())

    def block_outlined_by(self, path: QPainterPath) -> tuple[int, int] | None:
        """(address, size) of the block an outline's ``path`` is drawn
        around (None for an empty path): what tests read back."""
        return self.selection.outlined(path, self.blocks, self.layout_.row_bytes)

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
        return self.cells.colour_at(self.layout_, address)
