"""The contract every structure view keeps.

A structure view draws one strategy's free structure -- the plain data of
``Strategy.structure()`` (docs/structure.md) -- and lights what the shown step
did to it, from the step's explained events (:func:`allocators.explain.explain_step`).
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

    #: the structure kinds this view draws (docs/structure.md)
    kinds: tuple[str, ...] = ()

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        #: one line saying what the view summarised, or "" when it drew everything
        self.summary = ""

    def show_step(self, structure: dict | None, explained: list, record=None) -> None:
        """Draw ``structure`` (None: nothing loaded) after the shown step, and
        light what the step's ``explained`` events (ExplainedEvent list, in
        order) did: the nodes examined in order, the pointer moves, the lists
        inserted into or taken from, the splits and merges."""
        raise NotImplementedError

    def set_selection(self, addr: int | None) -> None:
        """Mark the block at ``addr`` as selected (None clears), scrolling it into view."""
        raise NotImplementedError

    def set_current_event(self, index: int | None) -> None:
        """Light only the events up to ``index`` of the step (micro-steps); None
        shows the whole step.  Views without micro-steps show the whole step."""

    def drawn(self) -> dict:
        """What the view has drawn, read back from its graphics items (not
        from the structure it was given), for tests: e.g. ``{"nodes": [...],
        "pointer": addr, "lit": [...]}``.  Each view documents its keys."""
        raise NotImplementedError
