"""A structure view drawn as items in a zoomable pyqtgraph ViewBox.

The tree, buddy and TLSF views share this frame: a caption over the drawing
(what the structure holds, what the step did, a colour key), the drawing
itself -- QGraphicsItems in a ``pg.ViewBox`` with y growing downwards and the
aspect ratio locked, so pyqtgraph's exporters can save it and an animation can
move its items -- and a status line under it (the block under the mouse, or
what the view summarised).

Scene units are *design pixels*: at zoom 1 one unit is one screen pixel, and
every label is sized for a projector at that zoom.  When a step is shown and
"Follow step" is on, the camera moves to what the step touched, at zoom 1 when
it fits and never below :data:`MIN_FOLLOW_SCALE` (beyond that the labels would
be unreadable at the back of a room: the camera keeps the step's main item in
view instead and the rest is a drag away).  The wheel scrolls, Ctrl+wheel
zooms, a drag pans; any of them turns following off, and "Follow step" turns
it back on.

Every item that stands for blocks is a :class:`Glyph`: it knows the block
address under a point of it, so clicks and hovers are found by asking the
items under the mouse (pyqtgraph's scene signals), never by keeping a second
geometry.
"""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import QEvent, QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QPen
from PySide6.QtWidgets import (QGraphicsObject, QHBoxLayout, QLabel, QPushButton,
                               QSizePolicy, QVBoxLayout, QWidget)

from .. import palette
from ..line_label import cut_to_lines, lines_height
from .base import StructureView

#: the camera never zooms out below this to follow a step (times the view's
#: zoom factor): with every label at least :data:`MIN_DESIGN_PX` design pixels
#: high, no text is smaller than the stated minimum (gui/theme.py,
#: ``Presentation.min_text_px``: 11 px at 1280 x 720, 16 px in presenter mode)
MIN_FOLLOW_SCALE = 0.8
#: the smallest text a scene view draws, in design pixels
MIN_DESIGN_PX = 16
#: the camera's margin round what it shows, in design pixels
FOCUS_MARGIN = 12.0
#: nor zooms in beyond this
MAX_FOLLOW_SCALE = 1.0

#: colours of the structure views, shared with the heap map where they mean the same
FREE_FILL = palette.YELLOW
USED_FILL = palette.BLUE
WILD_FILL = palette.BLUISH_GREEN
SPLIT_FILL = "#D9D9D9"
VISITED = palette.SEARCHED           # examined by the search, numbered in order
TAKEN = palette.PLACED               # handed out by malloc / taken off a list
INSERTED = palette.RELEASED          # pushed on a list, put in the tree (dashed)
SELECTED = "#0072B2"
INK = "#1A1A1A"
FAINT = "#8C8C8C"
EMPTY_FILL = "#FFFFFF"
#: the scene views draw on white in both themes (pg.GraphicsView(background="w"))
DRAWING_BACKGROUND = "#FFFFFF"


def short_bytes(n: int) -> str:
    """A size in B, KiB or MiB in at most seven characters: ``1008 B``,
    ``4.5 KiB``, ``120 KiB``, ``1.2 MiB``."""
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            v = n / size
            if v == int(v):
                return f"{int(v)} {unit}"
            return f"{v:.1f} {unit}" if v < 10 else f"{v:.0f} {unit}"
    return f"{n} B"


def size_of(structure: dict, addr: int) -> int:
    """``structure["sizes"][addr]``, also when the structure went through JSON
    (``heapscope inspect --format json``), which turns int keys into strings."""
    sizes = structure.get("sizes", {})
    return sizes.get(addr, sizes.get(str(addr), 0))


def font(px: int, bold: bool = False) -> QFont:
    f = QFont()
    f.setPixelSize(px)
    f.setBold(bold)
    return f


_FITTED: dict = {}


def fitted_font(text: str, max_width: float, px: int, bold: bool = False) -> QFont:
    """The font of ``px`` pixels, made smaller (down to 60 %, never below
    :data:`MIN_DESIGN_PX`) until ``text`` fits in ``max_width``."""
    key = (text, round(max_width), px, bold)
    f = _FITTED.get(key)
    if f is None:
        size = px
        f = font(size, bold)
        floor = max(px * 0.6, min(px, MIN_DESIGN_PX))
        while size > floor and QFontMetricsF(f).horizontalAdvance(text) > max_width:
            size -= 1
            f = font(size, bold)
        if len(_FITTED) > 4096:
            _FITTED.clear()
        _FITTED[key] = f
    return f


def pen(colour: str, width: float = 1.0, style=Qt.SolidLine) -> QPen:
    p = QPen(QColor(colour))
    p.setWidthF(width)
    p.setStyle(style)
    p.setCosmetic(False)
    return p


def swatch(colour: str, text: str, outline: bool = False) -> str:
    """HTML for one entry of a caption's colour key."""
    if outline:
        # on the drawing's own white: a black outline ("pushed", "inserted")
        # vanished from a caption in the dark theme
        box = (f'<span style="color:{colour}; background-color:{DRAWING_BACKGROUND}; '
               f'font-weight:bold">&#9634;</span>')
    else:
        box = f'<span style="color:{colour}">&#9632;</span>'
    return f"{box}&nbsp;{text}"


class Glyph(QGraphicsObject):
    """One drawn thing, keyed by what it stands for (a block address, a tree
    node, a matrix cell): its own painting, and the block under a point."""

    def __init__(self, key=None, parent=None) -> None:
        super().__init__(parent)
        self.key = key
        self._rect = QRectF()

    def boundingRect(self) -> QRectF:
        return self._rect

    def set_rect(self, rect: QRectF) -> None:
        if rect != self._rect:
            self.prepareGeometryChange()
            self._rect = rect
        self.update()

    def block_at(self, local: QPointF) -> int | None:
        """The block address drawn at ``local`` (item coordinates), or None."""
        return None

    def describe_at(self, local: QPointF) -> str:
        """One line for the status bar about the point ``local``."""
        return ""

    def paint(self, painter, option, widget=None) -> None:   # pragma: no cover - overridden
        pass


class Layer(QGraphicsObject):
    """An invisible parent for a group of items: one ``addItem`` to the view
    box, then children are made cheaply with ``setParentItem``."""

    def boundingRect(self) -> QRectF:
        return QRectF()

    def paint(self, painter, option, widget=None) -> None:
        pass


class ScrollZoomBox(pg.ViewBox):
    """A ViewBox where the wheel scrolls (Shift+wheel sideways) and
    Ctrl+wheel zooms, as in the ring and bucket views."""

    def wheelEvent(self, ev, axis=None):
        if ev.modifiers() & Qt.ControlModifier:
            super().wheelEvent(ev, axis)
            return
        view = self.viewRect()
        step = -ev.delta() / 120 * 0.15
        sideways = bool(ev.modifiers() & Qt.ShiftModifier) or ev.orientation() == Qt.Horizontal
        dx, dy = (step * view.width(), 0.0) if sideways else (0.0, step * view.height())
        self.setRange(view.translated(dx, dy), padding=0)
        ev.accept()
        self.sigRangeChangedManually.emit([True, True])


#: lines kept for the status line under a drawing, whatever it says
STATUS_LINES = 3


class LinesLabel(QLabel):
    """A word-wrapped label ``lines`` lines high in its current font,
    whatever its text: the drawing above it keeps one height, so what a
    view fits into it does not depend on how long its summary of the last
    fit was (two summaries of one step gave two pictures of it)."""

    def __init__(self, lines: int, parent=None) -> None:
        super().__init__(parent)
        self.lines = lines
        self._full = ""
        self.setSizePolicy(QSizePolicy.Preferred, QSizePolicy.Fixed)

    # A text longer than the lines kept is cut at a word and ends in "…" (the
    # whole of it in the tooltip): before, a fourth line was drawn over the
    # bottom of the drawing above.
    def setText(self, text: str) -> None:    # noqa: N802 (Qt's name)
        self._full = text
        self._fit()

    def text(self) -> str:
        """The whole text, as given (what shows may be cut)."""
        return self._full

    def resizeEvent(self, event) -> None:    # noqa: N802 (Qt's name)
        super().resizeEvent(event)
        self._fit()

    def _fit(self) -> None:
        full = self._full
        shown = cut_to_lines(self.fontMetrics(), self.contentsRect().width(), self._lines_height(), full)
        self.setToolTip(full if shown != full else "")
        QLabel.setText(self, shown)

    def _lines_height(self) -> int:
        # three lines of lineSpacing() held two and a "…"
        return lines_height(self.fontMetrics(), self.lines)

    def _height(self) -> int:
        return self._lines_height() + 4

    def hasHeightForWidth(self) -> bool:     # noqa: N802 (Qt's name)
        return False

    def sizeHint(self):                      # noqa: N802 (Qt's name)
        hint = super().sizeHint()
        hint.setHeight(self._height())
        return hint

    def minimumSizeHint(self):               # noqa: N802 (Qt's name)
        hint = super().minimumSizeHint()
        hint.setHeight(self._height())
        return hint


class ButtonStrip(QWidget):
    """The Follow step / Fit all buttons' strip over the top of a drawing:
    opaque, in the drawing's white, with a hairline under it, so the drawing
    scrolls under it as under an edge."""

    def paintEvent(self, event) -> None:     # noqa: N802 (Qt's name)
        from PySide6.QtGui import QPainter
        p = QPainter(self)
        p.fillRect(self.rect(), QColor(DRAWING_BACKGROUND))
        p.setPen(QPen(QColor(FAINT), 1))
        p.drawLine(0, self.height() - 1, self.width(), self.height() - 1)
        p.end()


class SceneStructureView(StructureView):
    """A :class:`StructureView` whose drawing lives in a pyqtgraph ViewBox."""

    #: first line of the caption
    title = ""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(2, 2, 2, 2)
        outer.setSpacing(2)
        self.caption = QLabel()
        self.caption.setTextFormat(Qt.RichText)
        self.caption.setWordWrap(True)
        caption_font = self.caption.font()
        caption_font.setPointSizeF(max(caption_font.pointSizeF(), 10) * 1.15)
        self.caption.setFont(caption_font)
        self.caption.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Preferred)
        outer.addWidget(self.caption)
        self.follow_button = QPushButton("Follow step")
        self.follow_button.setCheckable(True)
        self.follow_button.setChecked(True)
        self.follow_button.setToolTip("Move the drawing to what each step touched")
        self.follow_button.toggled.connect(self._follow_toggled)
        self.fit_button = QPushButton("Fit all")
        self.fit_button.setToolTip("Zoom out to the whole drawing (labels may get small)")
        self.fit_button.clicked.connect(self.fit_all)
        self.graphics = pg.GraphicsView(background="w")
        self.box = ScrollZoomBox(invertY=True, lockAspect=True, enableMenu=False)
        self.graphics.setCentralItem(self.box)
        outer.addWidget(self.graphics, 1)
        # The two buttons float at the drawing's top right corner, so the
        # caption has the panel's whole width: beside it they squeezed it
        # into a column, and the drawing to 68 px at 1280 x 720.  They sit on
        # a strip as wide as the drawing, in the drawing's own white, that
        # the camera keeps free (``_apply_focus``'s reserve): nothing is
        # drawn under them (issue 24: the buddy view's AVAIL rows above the
        # step's showed through between and under the buttons).
        self.buttons = ButtonStrip(self.graphics)
        row = QHBoxLayout(self.buttons)
        row.setContentsMargins(0, 4, 4, 2)
        row.setSpacing(4)
        row.addStretch(1)
        for b in (self.follow_button, self.fit_button):
            b.setFocusPolicy(Qt.NoFocus)
            row.addWidget(b)
        self.buttons.adjustSize()
        self.graphics.installEventFilter(self)
        self.status = LinesLabel(STATUS_LINES)
        self.status.setTextFormat(Qt.PlainText)
        self.status.setFont(caption_font)
        self.status.setWordWrap(True)
        outer.addWidget(self.status)
        scene = self.graphics.scene()
        scene.sigMouseClicked.connect(self._scene_clicked)
        scene.sigMouseMoved.connect(self._scene_moved)
        self.box.sigRangeChangedManually.connect(self._user_moved)
        # The box changes size without the view doing so (a caption that
        # wraps to another number of lines): the camera is cut for the new
        # size, else a locked aspect widens the range and the step drawn
        # after a seek is smaller than the same step played to its end.
        self.box.sigResized.connect(self._box_resized)
        self._hovered = -1
        self._focus: tuple | None = None
        self.selected: int | None = None
        self._structure: dict | None = None     # the structure drawn
        self._after: dict | None = None         # the structure after the whole step
        self._explained: list = []              # the step's explained events
        self._upto: int | None = None           # drawn up to this event (None: the whole step)
        self._collect: list | None = None       # notes leaving while a transition is made

    # ------------------------------------------------------- steps
    # A subclass draws in _rebuild(follow) the structure _structure with the
    # step's events up to _upto lit, and moves from one drawing to the next
    # in _morph_from; showing a step and its micro-steps is the same for all.
    def show_step(self, structure: dict | None, explained: list, record=None) -> None:
        self.finish_transition()
        self._structure = self._after = structure
        self._explained = list(explained or [])
        self._upto = None
        self._new_structure()
        self._rebuild(follow=True)

    def set_current_event(self, index: int | None, duration_ms: int = 0) -> None:
        self.finish_transition()
        structure = self.structure_for(index, self._after)
        if index == self._upto and structure is self._structure:
            return
        moving = duration_ms > 0 and self._structure is not None and structure is not None
        before = self._snapshot() if moving else None
        self._upto = index
        if structure is not self._structure:
            self._structure = structure
            self._new_structure()
        if not moving:
            self._rebuild(follow=True)
            return
        leaving = self.redraw_collecting_leavers(lambda: self._rebuild(follow=True))
        self.play_transition(self._morph_from(before, leaving), duration_ms)

    def _rebuild(self, follow: bool) -> None:
        """Draw :attr:`_structure` and the events up to :attr:`_upto`; with
        ``follow``, frame what they touched."""
        raise NotImplementedError

    def _new_structure(self) -> None:
        """Forget what was worked out from the structure drawn before (a
        subclass's lookups by address)."""

    def _snapshot(self):
        """What :meth:`_morph_from` moves from, taken before a redraw: here
        the camera (``{"camera": rect}``)."""
        return {"camera": QRectF(self.box.viewRect())}

    def _morph_from(self, before, leaving: list):
        """The :class:`~.transition.Morph` from the drawing ``before`` (a
        :meth:`_snapshot`; its items not drawn any more are ``leaving``) to
        the one just drawn."""
        raise NotImplementedError

    def export_item(self):
        """What to hand pyqtgraph's exporters (``ImageExporter(view.export_item())``):
        the view box, so the export is what is in view; Fit all first for
        the whole drawing."""
        return self.box

    # ------------------------------------------------------------ layers
    def new_layer(self, z: float) -> Layer:
        layer = Layer()
        layer.setZValue(z)
        self.box.addItem(layer, ignoreBounds=True)
        return layer

    def view_rect_of(self, item, rect: QRectF | None = None) -> QRectF:
        """``rect`` of ``item`` (default: its bounding rectangle) in the view
        box's coordinates, the ones :meth:`focus_on` and :meth:`scroll_to` take."""
        return item.mapRectToItem(self.box.childGroup, item.boundingRect() if rect is None else rect)

    def view_point_of(self, item, point: QPointF | None = None) -> QPointF:
        return item.mapToItem(self.box.childGroup, QPointF(0, 0) if point is None else point)

    def drawing_rect(self) -> QRectF:
        """The bounds of everything drawn (subclasses may narrow it)."""
        return self.box.childGroup.childrenBoundingRect()

    # ------------------------------------------------------------ camera
    @property
    def following(self) -> bool:
        return self.follow_button.isChecked()

    def focus_on(self, rect: QRectF, anchor: QPointF | None = None, force: bool = False,
                 align_top: bool = False) -> None:
        """Show ``rect`` (view units) at a readable zoom, its top at the top of
        the view if ``align_top``; if it does not fit at
        :data:`MIN_FOLLOW_SCALE`, keep ``anchor`` in view."""
        if rect is None or rect.isEmpty() and rect.width() == 0 and rect.height() == 0 and anchor is None:
            return
        self._focus = (QRectF(rect), anchor, align_top)
        if self.following or force:
            self._apply_focus()

    def _apply_focus(self) -> None:
        if self._focus is None:
            return
        rect, anchor, align_top = self._focus
        vw, vh = self._view_size()
        # the Follow step / Fit all buttons float over the top of the
        # drawing: what the step did is shown below them, never under them
        reserve = self.strip_height()
        vh = max(vh - reserve, 40.0)
        margin = FOCUS_MARGIN
        need_w, need_h = rect.width() + 2 * margin, rect.height() + 2 * margin
        k = self.zoom_factor
        scale = max(k * MIN_FOLLOW_SCALE, min(k * MAX_FOLLOW_SCALE, vw / max(need_w, 1.0),
                                              vh / max(need_h, 1.0)))
        w, h = vw / scale, vh / scale
        cx, cy = rect.center().x(), rect.center().y()
        # how far inside the edges the anchor must stay
        keep_x, keep_y = min(8 * margin, 0.2 * w), min(8 * margin, 0.12 * h)
        # a focus that fits only without its margins is shown whole, centred:
        # kept 8 margins inside the edge, the wilderness (the anchor) pushed
        # the root the splay search started at out by 7 px in presenter mode
        if rect.width() > w:
            if anchor is not None:
                cx = min(max(cx, anchor.x() - w / 2 + keep_x), anchor.x() + w / 2 - keep_x)
            else:
                cx = rect.left() - margin + w / 2
        if need_h > h or align_top:
            cy = rect.top() - margin + h / 2          # the top of the focus (the root) first
            if anchor is not None and anchor.y() > cy + h / 2 - keep_y:
                cy = anchor.y() - h / 2 + keep_y
        top = reserve / scale
        self.box.setRange(QRectF(cx - w / 2, cy - h / 2 - top, w, h + top), padding=0)
        self.framed()

    def framed(self) -> None:
        """Called each time the camera has moved to what the step touched
        (a view may say under the drawing what the frame left out)."""

    def legible_room(self) -> tuple[float, float]:
        """How much of the drawing fits the view at the lowest zoom the
        camera takes (:data:`MIN_FOLLOW_SCALE`), below the buttons and inside
        the margins, in design pixels: (width, height)."""
        vw, vh = self._view_size()
        k = self.zoom_factor * MIN_FOLLOW_SCALE
        return (vw / k - 2 * FOCUS_MARGIN,
                max(vh - self.strip_height(), 40.0) / k - 2 * FOCUS_MARGIN)

    def strip_height(self) -> float:
        """How much of the drawing's top the buttons' strip covers, in screen
        pixels (its height as made: the same view gives the same drawing
        whatever font changes came later, as a compare row's and a lone
        view's must)."""
        return float(self.buttons.height())

    def _view_size(self) -> tuple[float, float]:
        size = self.box.size()
        w, h = size.width(), size.height()
        if w < 50 or h < 50:         # not laid out yet: the widget's size will do
            w, h = max(self.width() - 8, 320), max(self.height() - 90, 240)
        return float(w), float(h)

    def set_zoom_factor(self, factor: float) -> None:
        if factor != self.zoom_factor:
            super().set_zoom_factor(factor)
            self._apply_focus()

    def scroll_to(self, rect: QRectF) -> None:
        """Pan (keeping the zoom) until ``rect`` is in view."""
        view = self.box.viewRect()
        if view.contains(rect):
            return
        dx = dy = 0.0
        if rect.width() > view.width() or rect.left() < view.left():
            dx = rect.left() - view.left() - 20
        elif rect.right() > view.right():
            dx = rect.right() - view.right() + 20
        if rect.height() > view.height() or rect.top() < view.top():
            dy = rect.top() - view.top() - 20
        elif rect.bottom() > view.bottom():
            dy = rect.bottom() - view.bottom() + 20
        self.box.setRange(view.translated(dx, dy), padding=0)

    def fit_all(self) -> None:
        rect = self.drawing_rect()
        if not rect.isEmpty():
            self.follow_button.setChecked(False)
            rect = rect.adjusted(-20, -20, 20, 20)
            # the whole drawing below the buttons' strip: the box shows the
            # range at the scale that fits it, the strip covers its top
            vw, vh = self._view_size()
            reserve = self.strip_height()
            scale = min(vw / rect.width(), max(vh - reserve, 40.0) / rect.height())
            top = reserve / scale
            self.box.setRange(QRectF(rect.left(), rect.top() - top, vw / scale, vh / scale), padding=0)

    def _follow_toggled(self, on: bool) -> None:
        if on:
            self._apply_focus()

    def _user_moved(self, *_) -> None:
        self.follow_button.setChecked(False)

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        if self.following:
            self._apply_focus()

    def _box_resized(self, *_) -> None:
        if self.following:
            self._apply_focus()

    def eventFilter(self, obj, event) -> bool:
        if obj is self.graphics and event.type() == QEvent.Resize:
            self.buttons.setGeometry(0, 0, self.graphics.width(), self.buttons.height())
        return super().eventFilter(obj, event)

    def showEvent(self, event) -> None:
        super().showEvent(event)
        if self.following:
            self._apply_focus()

    # ------------------------------------------------------- mouse
    def glyph_at(self, scene_pos: QPointF) -> tuple[Glyph, QPointF] | None:
        for item in self.graphics.scene().items(scene_pos):
            if isinstance(item, Glyph) and item.isVisible():
                local = item.mapFromScene(scene_pos)
                if item.block_at(local) is not None or item.describe_at(local):
                    return item, local
        return None

    def block_at_scene(self, scene_pos: QPointF) -> int | None:
        hit = self.glyph_at(scene_pos)
        return None if hit is None else hit[0].block_at(hit[1])

    def _scene_clicked(self, ev) -> None:
        if ev.button() == Qt.RightButton:
            addr = self.block_at_scene(ev.scenePos())
            if addr is not None:
                ev.accept()
                self.block_menu_asked.emit(addr, ev.screenPos().toPoint())
            return
        if ev.button() != Qt.LeftButton:
            return
        hit = self.glyph_at(ev.scenePos())
        if hit is None:
            return
        item, local = hit
        self.glyph_clicked(item, local)

    def glyph_clicked(self, item: Glyph, local: QPointF) -> None:
        """A click on ``item``: by default, select its block and say so."""
        addr = item.block_at(local)
        if addr is not None:
            self.set_selection(addr, scroll=False)
            self.block_clicked.emit(addr)

    def _scene_moved(self, scene_pos) -> None:
        hit = self.glyph_at(scene_pos)
        addr = -1
        if hit is not None:
            item, local = hit
            a = item.block_at(local)
            addr = -1 if a is None else a
            self.status.setText(item.describe_at(local))
        else:
            self.status.setText(self.summary)
        if addr != self._hovered:
            self._hovered = addr
            self.block_hovered.emit(addr)

    def leaveEvent(self, event) -> None:
        super().leaveEvent(event)
        if self._hovered != -1:
            self._hovered = -1
            self.block_hovered.emit(-1)
        self.status.setText(self.summary)

    # ------------------------------------------------------- selection
    def set_selection(self, addr: int | None, scroll: bool = True) -> None:
        self.selected = addr
        rect = self.mark_selection(addr)
        if scroll and rect is not None:
            self.scroll_to(rect)

    def mark_selection(self, addr: int | None) -> QRectF | None:
        """Mark ``addr`` as selected in the items (None clears); return the
        scene rectangle to scroll to, or None when it is not drawn."""
        raise NotImplementedError

    def set_summary(self, text: str) -> None:
        self.summary = text
        self.status.setText(text)

    # ------------------------------------------------------- transitions
    def follow_camera(self, morph, before: QRectF) -> None:
        """Glide the camera from ``before`` to where the drawing just put it."""
        from .transition import lerp_rect
        after = self.box.viewRect()
        if before != after:
            def frame(t: float) -> None:
                if self.following:      # a pan or zoom of the user's wins
                    # exactly where a seek puts it at the end (a lerp is a
                    # rounding off, and the box keeps a range that close)
                    self.box.setRange(after if t >= 1 else lerp_rect(before, after, t), padding=0)
            morph.call(frame)
