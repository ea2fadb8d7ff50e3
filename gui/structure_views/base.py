"""The contract every structure view keeps.

A structure view draws one strategy's free structure -- the plain data of
``Strategy.structure()`` (docs/structure.md) -- and lights what the shown step
did to it, from the step's explained events (:func:`heapscope.allocators.explain.explain_step`).
It never reads the strategy object: a view, a test and ``heapscope inspect``
see the same data.

Views are built on pyqtgraph / QGraphicsScene items, so that pyqtgraph's
exporters can write them as PNG and SVG, and so that an animation can move
the items of one state to the places of the next (items are kept per block
address, not redrawn blindly).  A view must stay legible at 10 000 free
blocks: it summarises (counts, collapsed runs, scrolling) and says so in
:attr:`summary`.
"""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QWidget


class StructureView(QWidget):
    """Base class: subclasses implement :meth:`show_step`, :meth:`set_selection`
    and :meth:`drawn`."""

    #: the user clicked a block or node: its block address
    block_clicked = Signal(int)
    #: the mouse is over a block (its address) or over nothing (-1)
    block_hovered = Signal(int)
    #: a right click on a block: its address and the screen point (a QPoint)
    #: where its menu opens (the sandbox's Free / Realloc, gui/sandbox_edits.py)
    block_menu_asked = Signal(int, object)

    #: the structure kinds this view draws (docs/structure.md)
    kinds: tuple[str, ...] = ()

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        #: one line saying what the view summarised, or "" when it drew everything
        self.summary = ""
        #: how much larger than designed the drawing is shown (presenter mode)
        self.zoom_factor = 1.0

    def show_step(self, structure: dict | None, explained: list, record=None) -> None:
        """Draw ``structure`` (None: nothing loaded) after the shown step, and
        light what the step's ``explained`` events (ExplainedEvent list, in
        order) did: the nodes examined in order, the pointer moves, the lists
        inserted into or taken from, the splits and merges."""
        raise NotImplementedError

    def set_selection(self, addr: int | None) -> None:
        """Mark the block at ``addr`` as selected (None clears), scrolling it into view."""
        raise NotImplementedError

    def set_current_event(self, index: int | None, duration_ms: int = 0) -> None:
        """Show the step up to its event ``index`` (micro-steps; None: the
        whole step): the structure as it is after that event (from
        :meth:`set_states`) with the events up to it lit.  With
        ``duration_ms`` > 0, move from what is drawn to it over that time
        (:attr:`transition`); any transition still running jumps to its end
        first, and ``duration_ms`` 0 always shows ``index`` at once, even the
        index already shown.  Views without micro-steps show the whole step."""

    # ------------------------------------------------------ micro-steps
    #: ``index -> structure`` after that event of the shown step (None: the
    #: views only light the events on the structure after the step)
    state_at = None
    #: the transition running, if any (:mod:`.transition`)
    transition = None
    #: transitions wait for :meth:`Transition.seek` instead of running on the
    #: clock (an exporter steps them frame by frame)
    manual_transitions = False

    def set_states(self, state_at) -> None:
        """Where :meth:`set_current_event` finds the structure after each event
        (``ShownStep.structure_at``); None: light events on the whole step."""
        self.state_at = state_at

    def structure_for(self, index: int | None, after: dict | None) -> dict | None:
        """The structure to draw at event ``index``: ``after`` for the whole step."""
        if index is None or after is None or self.state_at is None:
            return after
        return self.state_at(index)

    def finish_transition(self) -> None:
        """Jump to the end of the running transition, if any."""
        tr = self.transition
        self.transition = None
        if tr is not None:
            tr.finish()
            tr.deleteLater()

    def redraw_collecting_leavers(self, redraw) -> list:
        """Call ``redraw()`` while the items it takes off the drawing are
        collected in ``self._collect`` (a view's drawing code appends them
        there instead of deleting them), and return them: a transition fades
        them out rather than letting them vanish."""
        self._collect = []
        try:
            redraw()
            return self._collect
        finally:
            self._collect = None

    def play_transition(self, morph, duration_ms: int) -> None:
        """Run ``morph`` over ``duration_ms`` (or leave it for :meth:`Transition.seek`)."""
        from .transition import Transition
        self.finish_transition()
        if not morph or duration_ms <= 0:
            morph.end()
            return
        tr = Transition(morph, duration_ms, self)
        self.transition = tr
        tr.start(clock=not self.manual_transitions)

    def set_zoom_factor(self, factor: float) -> None:
        """Draw ``factor`` times larger than designed: labels, boxes and
        outlines together (presenter mode, a big screen).  The drawing keeps
        its layout; views that wrap to their width lay out again."""
        self.zoom_factor = factor

    def drawn(self) -> dict:
        """What the view has drawn, read back from its graphics items (not
        from the structure it was given), for tests: e.g. ``{"nodes": [...],
        "pointer": addr, "lit": [...]}``.  Each view documents its keys."""
        raise NotImplementedError
