"""The frame shared by the structure views drawn as cards on a canvas (the
rings, the buckets): a title, a legend, the canvas, and a line of counts
with what was summarised.

:class:`CardView` keeps the contract of :class:`~.base.StructureView`: it
stores the shown structure and the step's explained events, redraws through
the subclass's :meth:`CardView._draw`, keeps one :class:`~.canvas.Card` per
block address across steps (so a later animation can move the same item from
one state to the next), and turns canvas clicks and hovers into
``block_clicked`` / ``block_hovered``.

At a micro-step it draws the structure after that event
(:meth:`~.base.StructureView.set_states`).  Moving there over a time, it
draws the new state as it would at once, then glides each block's card from
where it was, slides the search pointer from its old row to its new one, and
cross-fades what changed among the badges, notes, links and folds (what is
the same in both is left alone).  A subclass may give the cards that appear
their own entrance (:meth:`CardView._appear`: the buckets' refill fills its
column).
"""

from __future__ import annotations

from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QFontMetrics
from PySide6.QtWidgets import QLabel, QSizePolicy, QVBoxLayout

from .base import StructureView
from .canvas import Card, Legend, Pointer, StructureCanvas
from .scene_view import LinesLabel
from .transition import Morph, cross_fade


def int_keys(d: dict) -> dict:
    """``d`` with int keys (a structure read back from JSON has str keys)."""
    if all(type(k) is int for k in list(d)[:1]):
        return d
    return {int(k): v for k, v in d.items()}


#: the canvas's least height, and on a crowded screen (presenter mode at 720
#: lines with predict mode's band): Qt's minimum sizes leave out the wrapped
#: title's extra lines, so a canvas that cannot shrink is overlapped by them.
#: The plain window at 1280 x 720 leaves it 95-135 px under a title of three
#: or four lines and the legend (GNU malloc's block table: 98), so 160 was
#: overlapped there too: 80 for both.
CANVAS_MIN_HEIGHT, COMPACT_CANVAS_MIN_HEIGHT = 80, 80


class CardView(StructureView):
    """Base of the card-drawn views; subclasses implement :meth:`_draw`
    and :meth:`drawn`."""

    def __init__(self, legend: list[tuple[str, str]], parent=None) -> None:
        super().__init__(parent)
        self.title = QLabel()
        self.title.setWordWrap(True)
        f = self.title.font()
        f.setPixelSize(17)
        f.setBold(True)
        self.title.setFont(f)
        self.legend = Legend(legend)
        self.canvas = StructureCanvas()
        self.canvas.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Expanding)
        self.canvas.setMinimumSize(200, CANVAS_MIN_HEIGHT)
        # four lines, a longer text cut at a word with "…" and whole in the
        # tooltip (issue 24: next fit's summary on the SQLite trace in
        # presenter mode ran on under the label's bottom edge, cut mid-line)
        self.info = LinesLabel(4)
        self.info.setText(" ")
        self.info.setWordWrap(True)
        inf = self.info.font()
        inf.setPixelSize(15)
        self.info.setFont(inf)
        self.info.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Fixed)
        self.info.setAlignment(Qt.AlignLeft | Qt.AlignTop)
        # Room for four lines whatever the step says, so the canvas does not
        # change height (and lose its scroll position) from one step to the next.
        self.info.setFixedHeight(QFontMetrics(inf).lineSpacing() * 4 + 4)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.setSpacing(3)
        layout.addWidget(self.title)
        layout.addWidget(self.legend)
        layout.addWidget(self.canvas, 1)
        layout.addWidget(self.info)
        self.canvas.clicked.connect(self.block_clicked)
        self.canvas.menu_asked.connect(self.block_menu_asked)
        self.canvas.hovered.connect(self.block_hovered)
        self.canvas.width_changed.connect(self._width_changed)

        self._structure: dict | None = None
        self._explained: list = []
        self._event_index: int | None = None
        self._selection: int | None = None
        self._cards: dict[object, Card] = {}       # one card per block address, kept across steps
        self._transient: list = []                 # badges, arrows, notes: rebuilt on every drawing
        self._after: dict | None = None            # the structure after the whole step
        self._collect: list | None = None          # items leaving while a transition is made

    # ------------------------------------------------------------ contract

    def set_compact(self, compact: bool) -> None:
        """A crowded screen: the canvas may shrink further (it scrolls)."""
        self.canvas.setMinimumHeight(COMPACT_CANVAS_MIN_HEIGHT if compact else CANVAS_MIN_HEIGHT)

    def export_item(self):
        """The item pyqtgraph's exporters save: the whole drawing."""
        return self.canvas.root

    def show_step(self, structure: dict | None, explained: list, record=None) -> None:
        self.finish_transition()
        self._structure = self._after = structure
        self._explained = list(explained or [])
        self._event_index = None
        self._render(scroll=True)

    def set_current_event(self, index: int | None, duration_ms: int = 0) -> None:
        self.finish_transition()
        structure = self.structure_for(index, self._after)
        if index == self._event_index and structure is self._structure:
            return             # shown already (and any move just ended)
        moving = duration_ms > 0 and self._structure is not None and structure is not None
        before = self._snapshot() if moving else None
        self._event_index = index
        self._structure = structure
        # the whole step again: brought into view as a seek to it does
        scroll = index is None
        if not moving:
            self._render(scroll=scroll)
            return
        leaving = self.redraw_collecting_leavers(lambda: self._render(scroll=scroll))
        self.play_transition(self._morph_from(before, leaving), duration_ms)

    # ------------------------------------------------------------ moving
    def _snapshot(self) -> tuple:
        cards = {key: QPointF(card.pos()) for key, card in self._cards.items()}
        pointer = next((QPointF(i.pos()) for i in self._transient if isinstance(i, Pointer) and not i.faint), None)
        return cards, pointer

    def _morph_from(self, before: tuple, leaving: list) -> Morph:
        """The move from the drawing ``before`` (a :meth:`_snapshot`, whose
        items not drawn any more are ``leaving``) to the one just drawn."""
        cards_before, pointer_before = before
        scene = self.canvas.scene()
        m = Morph()
        for key, card in self._cards.items():
            if key in cards_before:
                m.move(card, cards_before[key], card.pos())
            else:
                self._appear(m, key, card)
        old = []
        for item in leaving:
            (m.leave(item) if isinstance(item, Card) else old.append(item))
        # the search pointer slides from its old row to its new one
        pointer = next((i for i in self._transient if isinstance(i, Pointer) and not i.faint), None)
        if pointer is not None and pointer_before is not None:
            m.move(pointer, pointer_before, pointer.pos())
            for item in [i for i in old if isinstance(i, Pointer) and not i.faint]:
                old.remove(item)
                scene.removeItem(item)
        # what is drawn the same stays; what changed cross-fades
        cross_fade(m, old, [i for i in self._transient if i is not pointer])
        return m

    def _appear(self, m: Morph, key, card: Card) -> None:
        """How a card that was not drawn comes in: it fades in."""
        m.enter(card, (0.0, 1.0))

    def set_selection(self, addr: int | None) -> None:
        self.finish_transition()
        self._selection = addr
        card = self._cards.get(addr) if addr is not None else None
        if addr is not None and card is None and self._structure is not None \
                and addr in int_keys(self._structure["sizes"]):
            self._render(scroll=False)       # the block is folded away: draw it out
            card = self._cards.get(addr)
        for key, c in self._cards.items():
            c.set_selected(addr is not None and key == addr)
        if card is not None:
            self.canvas.ensureVisible(card.sceneBoundingRect(), 40, 60)

    def set_zoom_factor(self, factor: float) -> None:
        if factor != self.zoom_factor:
            super().set_zoom_factor(factor)
            self.canvas.set_zoom(factor)
            self._width_changed()

    def _width_changed(self) -> None:
        # Notes wrap to the new width, and what the step did is brought back into view.
        self.finish_transition()
        if self._structure is not None:
            self._render(scroll=True)

    # ------------------------------------------------------------ helpers
    @staticmethod
    def _say(label: QLabel, text: str) -> None:
        """Set a label's text only when it changes: a word-wrapped QLabel
        lays itself out again on every setText, a few milliseconds."""
        if label.text() != text:
            label.setText(text)

    def _events(self) -> list:
        """The step's explained events up to the current micro-step."""
        if self._event_index is None:
            return self._explained
        return self._explained[:self._event_index + 1]

    def _render(self, scroll: bool) -> None:
        """Draw the structure shown (after the step, or after the micro-step's
        event), with ``scroll`` bringing what the step did into view."""
        self._clear_transient()
        if self._structure is None:
            self._draw_nothing()
            return
        self._draw(self._structure, scroll)

    def _draw(self, s: dict, scroll: bool) -> None:
        """Draw the structure ``s`` and the marks of the events up to the
        current one (:meth:`_events`); the last drawing's per-drawing items
        are off the canvas already."""
        raise NotImplementedError

    def _draw_nothing(self) -> None:
        """Nothing loaded: no cards, no step read, the line under the canvas
        says so."""
        self._keep_cards(set())
        self.step = None
        self.summary = ""
        self._say(self.info, "nothing loaded")
        self.canvas.finish()
        self.canvas.keep_scrolled(lambda: None)      # nothing drawn: no step's scroll to make again

    def _clear_transient(self) -> None:
        scene = self.canvas.scene()
        for item in self._transient:
            if self._collect is not None:
                self._collect.append(item)     # it fades out during the transition
            else:
                scene.removeItem(item)
        self._transient = []

    def _add(self, item):
        """Put a per-drawing item (not a block's card) on the canvas."""
        item.setParentItem(self.canvas.root)
        self._transient.append(item)
        return item

    def _card(self, key, addr: int | None, width: float, height: float) -> Card:
        """The card of ``key`` (a block address, or a name like 'base'),
        made on first use and kept while it is drawn."""
        card = self._cards.get(key)
        if card is None:
            card = Card(width, height, addr)
            card.setParentItem(self.canvas.root)
            self._cards[key] = card
        elif (card.w, card.h) != (width, height):
            card.prepareGeometryChange()
            card.w, card.h = width, height
        return card

    def _keep_cards(self, wanted: set) -> None:
        """Drop the cards of blocks no longer drawn."""
        scene = self.canvas.scene()
        for key in list(self._cards):
            if key not in wanted:
                card = self._cards.pop(key)
                if self._collect is not None:
                    self._collect.append(card)
                else:
                    scene.removeItem(card)

    def _visible_width(self) -> float:
        """The canvas width a drawing can use without a sideways scroll bar."""
        return self.canvas.viewport().width() / max(self.canvas.zoom, 1e-6)

