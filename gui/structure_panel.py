"""The structure view in the window: the shown strategy's free structure.

A :class:`StructurePanel` subscribes to the :class:`~heapscope.gui.show_model.ShowModel`
and holds the structure view for the shown strategy's ``structure()["kind"]``
(:func:`heapscope.gui.structure_views.view_for`; the generic lists view for a kind whose
own view is not there).  On every shown step it feeds the view the structure
and the step's explained events (both computed once per step by the model);
clicks and hovers in the view select and hover in the model, so the heap map
follows, and the model's selection is marked in the view.  Each view has its
own title and says what it summarised; under it, the panel shows the hovered
block's facts in the heap map's words (the selected block's with none hovered).

At a micro-step the view draws the structure as it is after that event
(``ShownStep.structure_at``), moving to it over the model's
``transition_ms`` while a step plays its events (gui/step_animator.py).

While the player runs fast, the view redraws at most every
:attr:`~heapscope.gui.subscriber.Subscriber.PLAY_INTERVAL_MS`, and not at all while the
panel is hidden or collapsed.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QLabel, QSizePolicy, QVBoxLayout, QWidget

from .structure_views import view_for
from .subscriber import Subscriber


class StructurePanel(Subscriber, QWidget):
    """The structure view of one shown strategy (row), with its title and hover line."""

    #: the user clicked a block in the view (its address): predict mode takes it as an answer
    block_clicked = Signal(int)
    #: a right click on a block in the view: the panel's row, the block's
    #: address and the screen point (the sandbox opens the block's menu there)
    block_menu_asked = Signal(int, int, object)

    SUBSCRIBES = {"shown_changed": "redraw_soon", "step_changed": "redraw_soon",
                  "selection_changed": "_model_selection", "event_changed": "_model_event",
                  "hover_changed": "_model_hover"}

    #: the facts line when no block is hovered or selected
    HINT = "Hover or click a block (here or on the map) for its facts."

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.view = None
        self.kind: str | None = None
        #: text size and zoom (presenter mode), given to every view made
        self.presentation = None
        #: brings a new view's own fonts to the window's text size (set by the window)
        self.font_scaler = None
        #: the structure only, no step marks (predict mode's open question)
        self.quiet = False
        #: a crowded screen: views with a canvas let it shrink further
        self.compact = False
        self.facts = QLabel(" ")
        self.facts.setWordWrap(True)
        self.facts.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Preferred)
        self.facts.setMinimumHeight(self.facts.fontMetrics().height() * 2 + 4)
        self.facts.setAlignment(Qt.AlignLeft | Qt.AlignTop)
        self.facts.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self._box = QVBoxLayout(self)
        self._box.setContentsMargins(4, 2, 4, 2)
        self._box.setSpacing(2)
        self._placeholder = QLabel("")
        self._box.addWidget(self._placeholder, 1)
        self._box.addWidget(self.facts)
        self.setMinimumWidth(220)

    def model_bound(self) -> None:
        self.redraw_soon()

    def set_compact(self, compact: bool) -> None:
        """A crowded screen (presenter mode at 720 lines): passed on to every view made."""
        self.compact = bool(compact)
        if self.view is not None and hasattr(self.view, "set_compact"):
            self.view.set_compact(self.compact)

    def set_quiet(self, quiet: bool) -> None:
        """Draw the structure only, none of the shown step's marks (predict
        mode's open question: see HeapMapWidget.set_quiet)."""
        if bool(quiet) != self.quiet:
            self.quiet = bool(quiet)
            self.redraw_soon()

    def apply_presentation(self, pres) -> None:
        """Zoom the drawing with the text (presenter mode, a big screen)."""
        self.presentation = pres
        if self.view is not None:
            self.view.set_zoom_factor(pres.drawing_scale)

    # ------------------------------------------------------------- drawing
    def redraw(self) -> None:
        model = self.model
        step = model.step(self.row) if model is not None else None
        if step is None:
            if self.view is not None:
                self.view.show_step(None, [], None)
            self.facts.setText(" ")
            return
        structure = step.structure
        kind = structure["kind"]
        view = self._view_for(kind)
        # the structure after each event, for micro-steps and animated steps
        # (rebuilt from the step before only when an event is asked for)
        view.set_states(step.structure_at)
        if self.quiet:
            view.show_step(structure, [], None)        # the structure only, no step drawn on it
        else:
            view.show_step(structure, step.explained, step.record)    # the whole step
        index = model.event_in_row(self.row)
        if index is not None and not self.quiet:
            view.set_current_event(index)
        view.set_selection(model.selection)
        self._model_hover(model.hover)

    def _view_for(self, kind: str):
        if self.view is not None and kind == self.kind:
            return self.view
        cls = view_for(kind)
        if self.view is None or type(self.view) is not cls:
            old = self.view
            self.view = cls()
            if self.font_scaler is not None:
                self.font_scaler.adopt(self.view)
            if self.presentation is not None:
                self.view.set_zoom_factor(self.presentation.drawing_scale)
            if hasattr(self.view, "set_compact"):
                self.view.set_compact(self.compact)
            self.view.block_clicked.connect(self._view_clicked)
            self.view.block_hovered.connect(self._view_hovered)
            self.view.block_menu_asked.connect(self._view_menu_asked)
            self._box.replaceWidget(old if old is not None else self._placeholder, self.view)
            self._box.setStretchFactor(self.view, 1)
            if old is not None:
                old.hide()
                old.deleteLater()
            else:
                self._placeholder.hide()
                self._placeholder.deleteLater()
            self.view.show()
        self.kind = kind
        return self.view

    # ------------------------------------------------------------ the model
    def _model_selection(self, addr) -> None:
        if self.view is not None and not self.__dict__.get("_redraw_pending"):
            self.view.set_selection(addr)
        self._model_hover(self.model.hover if self.model is not None else None)

    def _model_event(self, index) -> None:
        if self.view is not None and not self.__dict__.get("_redraw_pending"):
            if self.model is not None:
                # compare mode: this row's own event (its step may have fewer than the longest)
                index = None if index is None else self.model.event_in_row(self.row)
            self.view.set_current_event(index, self.model.transition_ms if self.model is not None else 0)

    def _model_hover(self, addr) -> None:
        """The hovered block's facts; with none hovered, the selected block's."""
        model = self.model
        step = model.step(self.row) if model is not None else None
        if step is None:
            self.facts.setText(" ")
        elif addr is not None:
            self.facts.setText(step.describe_address(addr))
        elif model.selection is not None:
            self.facts.setText("selected: " + step.describe_address(model.selection))
        else:
            self.facts.setText(self.HINT)

    # ------------------------------------------------------------- the view
    def _view_clicked(self, addr: int) -> None:
        if self.model is not None:
            self.model.select(addr)
        self.block_clicked.emit(addr)

    def _view_menu_asked(self, addr: int, where) -> None:
        self.block_menu_asked.emit(self.row, addr, where)

    def _view_hovered(self, addr: int) -> None:
        if self.model is not None:
            self.model.set_hover(addr)
