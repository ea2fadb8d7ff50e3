"""Drawing pieces shared by the list-like structure views: a scrollable,
zoomable canvas and the graphics items the views place on it.

Coordinates are pixels at zoom 1, so labels keep the size they were given
(large enough for a projector) and the drawing scrolls rather than shrinks.
All items hang under one :class:`DrawingRoot`, a pyqtgraph ``GraphicsObject``
whose bounding rectangle is the whole drawing: pyqtgraph's ``ImageExporter``
and ``SVGExporter`` save it, scrolled-out parts included.  The scene is a
pyqtgraph ``GraphicsScene`` for the same reason.

Items are ``QGraphicsObject``\\ s, so a later animation can move them with a
``QPropertyAnimation`` on ``pos``.  An item that stands for a block carries
its address in ``addr``; the canvas turns clicks and hovers into addresses.
"""

from __future__ import annotations

import math
import re

import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRect, QRectF, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QFont, QFontDatabase, QFontMetrics, QPainter, QPainterPath, QPen
from PySide6.QtWidgets import (QGraphicsObject, QGraphicsPathItem, QGraphicsSimpleTextItem, QGraphicsView,
                               QHBoxLayout, QLabel, QSizePolicy, QWidget)

from .. import palette

#: text sizes in pixels, chosen for the back of a lecture room
ADDR_PX = 17
TEXT_PX = 16
SMALL_PX = 15
#: selection outline (a colour no step highlight uses)
SELECTED = palette.BLUE
#: text and lines that only explain
MUTED = "#555555"
#: a block that left the structure this step
GHOST_FILL = "#FFFFFF"


def size_text(n: int) -> str:
    """Bytes as a lecture room reads them: '96 B', '1.5 KiB', '16 KiB', '2.3 MiB'."""
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            value = n / size
            text = f"{value:.1f}" if value < 100 else f"{value:.0f}"
            return (text[:-2] if text.endswith(".0") else text) + f" {unit}"
    return f"{n} B"


def count_text(n: int) -> str:
    """An integer with narrow no-break spaces between thousands: '10 000'
    (a line never breaks inside the number)."""
    return f"{n:,}".replace(",", "\u202f")


def hex_addr(a: int) -> str:
    return f"{a:#x}"


def ordinal(n: int) -> str:
    if 10 <= n % 100 <= 20:
        suffix = "th"
    else:
        suffix = {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def mono_font(px: int = ADDR_PX, bold: bool = True) -> QFont:
    f = QFontDatabase.systemFont(QFontDatabase.FixedFont)
    f.setPixelSize(px)
    f.setBold(bold)
    return f


def text_font(px: int = TEXT_PX, bold: bool = False, italic: bool = False) -> QFont:
    f = QFont()
    f.setPixelSize(px)
    f.setBold(bold)
    f.setItalic(italic)
    return f


def pen(colour: str, width: float = 1.0, dash: bool = False) -> QPen:
    p = QPen(QColor(colour))
    p.setWidthF(width)
    if dash:
        p.setStyle(Qt.DashLine)
    p.setJoinStyle(Qt.RoundJoin)
    p.setCapStyle(Qt.RoundCap)
    return p


class DrawingRoot(pg.GraphicsObject):
    """Parent of every item of a view; its bounding rectangle is the drawing,
    so ``pg.exporters.ImageExporter(root)`` saves all of it."""

    def __init__(self) -> None:
        super().__init__()
        self._rect = QRectF()

    def fit(self, margin: float = 12) -> QRectF:
        self.prepareGeometryChange()
        self._rect = self.childrenBoundingRect().adjusted(-margin, -margin, margin, margin)
        return self._rect

    def boundingRect(self) -> QRectF:
        return self._rect

    def paint(self, painter, option, widget=None) -> None:
        pass


class Card(QGraphicsObject):
    """A block or a list head drawn as a rounded box with its text.

    Either one row (``left`` flush left, ``right`` flush right: an address
    and a size) or several centred ``lines`` (a bucket's header).  The text
    painted is kept in :attr:`left`, :attr:`right` and :attr:`lines`, so a
    test reads what is on the screen.
    """

    def __init__(self, width: float, height: float, addr: int | None = None, parent=None) -> None:
        super().__init__(parent)
        self.addr = addr
        self.w, self.h = width, height
        self.left = ""
        self.right = ""
        self.lines: list[str] = []
        self.role = ""                 # what the step did to it, for drawn() and the style
        self.fill = QColor(palette.YELLOW)
        self.text_colour = QColor("#000000")
        self.outline = pen("#6b6b6b", 1.2)
        self.selected = False
        self.left_font = mono_font()
        self.right_font = text_font(TEXT_PX)
        self.line_fonts: list[QFont] = []

    def set_row(self, left: str, right: str = "") -> None:
        self.left, self.right, self.lines = left, right, []
        self.update()

    def set_lines(self, lines: list[str], fonts: list[QFont]) -> None:
        self.left = self.right = ""
        self.lines, self.line_fonts = list(lines), list(fonts)
        self.update()

    def set_style(self, fill: str, outline: QPen, text_colour: str = "#000000", role: str = "") -> None:
        self.fill = QColor(fill)
        self.outline = outline
        self.text_colour = QColor(text_colour)
        self.role = role
        self.update()

    def set_selected(self, on: bool) -> None:
        if on != self.selected:
            self.selected = on
            self.update()

    def rect(self) -> QRectF:
        return QRectF(0, 0, self.w, self.h)

    def boundingRect(self) -> QRectF:
        return QRectF(-7, -7, self.w + 14, self.h + 14)

    def paint(self, painter: QPainter, option, widget=None) -> None:
        r = self.rect()
        painter.setRenderHint(QPainter.Antialiasing)
        if self.selected:
            painter.setPen(pen(SELECTED, 5))
            painter.setBrush(Qt.NoBrush)
            painter.drawRoundedRect(r.adjusted(-4.5, -4.5, 4.5, 4.5), 8, 8)
        painter.setPen(self.outline)
        painter.setBrush(QBrush(self.fill))
        painter.drawRoundedRect(r, 6, 6)
        painter.setPen(QPen(self.text_colour))
        inner = r.adjusted(9, 0, -9, 0)
        if self.lines:
            heights = [f.pixelSize() * 1.3 for f in self.line_fonts]
            y = (self.h - sum(heights)) / 2
            for text, font, h in zip(self.lines, self.line_fonts, heights):
                painter.setFont(font)
                painter.drawText(QRectF(inner.left(), y, inner.width(), h), Qt.AlignCenter, text)
                y += h
            return
        painter.setFont(self.left_font)
        painter.drawText(inner, Qt.AlignLeft | Qt.AlignVCenter, self.left)
        if self.right:
            painter.setFont(self.right_font)
            painter.drawText(inner, Qt.AlignRight | Qt.AlignVCenter, self.right)


class Badge(QGraphicsObject):
    """The visit number of an examined node: a filled circle (a rounded
    lozenge for a long number) with the number in it.  A node examined
    twice (a search that went round the ring again) carries both numbers,
    one above the other; :attr:`text` is them all, comma separated."""

    def __init__(self, text: str, addr: int | None = None, colour: str = palette.SEARCHED,
                 parent=None) -> None:
        super().__init__(parent)
        self.addr = addr
        self.text = text
        self.colour = QColor(colour)
        numbers = text.split(", ")
        if len(numbers) > 2:
            numbers = [numbers[0], f"+{len(numbers) - 1}"]
        self.lines = numbers
        self.font = text_font(SMALL_PX if len(numbers) == 1 else SMALL_PX - 2, bold=True)
        self.h = 30.0 if len(numbers) == 1 else 34.0
        widest = max(QFontMetrics(self.font).horizontalAdvance(n) for n in numbers)
        self.w = max(self.h if len(numbers) == 1 else 30.0, widest + 14.0)

    def boundingRect(self) -> QRectF:
        return QRectF(-1, -1, self.w + 2, self.h + 2)

    def paint(self, painter: QPainter, option, widget=None) -> None:
        painter.setRenderHint(QPainter.Antialiasing)
        painter.setPen(pen("#000000", 1.2))
        painter.setBrush(QBrush(self.colour))
        radius = min(self.w, self.h) / 2
        painter.drawRoundedRect(QRectF(0, 0, self.w, self.h), radius, radius)
        painter.setPen(QPen(QColor("#000000")))
        painter.setFont(self.font)
        painter.drawText(QRectF(0, 0, self.w, self.h), Qt.AlignCenter, "\n".join(self.lines))


class Arrow(QGraphicsPathItem):
    """A polyline with an arrowhead at its last point, :attr:`tip`."""

    def __init__(self, points: list[QPointF], colour: str, width: float = 2.0, dash: bool = False,
                 head: float = 10.0, parent=None) -> None:
        super().__init__(parent)
        self.points = [QPointF(p) for p in points]
        self.tip = self.points[-1]
        path = QPainterPath(self.points[0])
        for p in self.points[1:]:
            path.lineTo(p)
        a, b = self.points[-2], self.points[-1]
        angle = math.atan2(b.y() - a.y(), b.x() - a.x())
        for side in (+1, -1):
            path.moveTo(b)
            path.lineTo(b.x() - head * math.cos(angle + side * 0.45),
                        b.y() - head * math.sin(angle + side * 0.45))
        self.setPath(path)
        self.setPen(pen(colour, width, dash))


class Pointer(QGraphicsObject):
    """A named search pointer (K&R's rover ``freep``, Kruse's ``head``): a
    fat arrow with its name above it, pointing right at the card it names.
    :attr:`tip` is the arrow's point in scene coordinates; tests find the
    card under it."""

    def __init__(self, name: str, colour: str = palette.SEARCHED, length: float = 80,
                 faint: bool = False, parent=None) -> None:
        super().__init__(parent)
        self.name = name
        self.colour = QColor(colour)
        self.length = length
        self.faint = faint
        self.font = text_font(SMALL_PX if faint else TEXT_PX, bold=not faint, italic=faint)

    @property
    def tip(self) -> QPointF:
        return self.mapToScene(QPointF(self.length, 0))

    def boundingRect(self) -> QRectF:
        return QRectF(-2, -28, self.length + 4, 42)

    def paint(self, painter: QPainter, option, widget=None) -> None:
        painter.setRenderHint(QPainter.Antialiasing)
        L = self.length
        if self.faint:
            painter.setPen(pen(MUTED, 2, dash=True))
            painter.drawLine(QPointF(0, 0), QPointF(L - 12, 0))
            painter.setBrush(Qt.NoBrush)
        else:
            painter.setPen(pen("#000000", 1.3))
            painter.setBrush(QBrush(self.colour))
            shaft = QPainterPath()
            shaft.addRect(QRectF(0, -4, L - 16, 8))
            painter.drawPath(shaft)
        head = QPainterPath(QPointF(L, 0))
        head.lineTo(L - 18, -11)
        head.lineTo(L - 18, 11)
        head.closeSubpath()
        if self.faint:
            painter.drawPath(head)
        else:
            painter.drawPath(head)
        painter.setPen(QPen(QColor(MUTED if self.faint else "#000000")))
        painter.setFont(self.font)
        painter.drawText(QRectF(0, -28, L, 22), Qt.AlignLeft | Qt.AlignBottom, self.name)


def label(text: str, font: QFont, colour: str = "#000000", parent=None) -> QGraphicsSimpleTextItem:
    item = QGraphicsSimpleTextItem(text, parent)
    item.setFont(font)
    item.setBrush(QBrush(QColor(colour)))
    return item


class Fold(QGraphicsObject):
    """A folded run of a list: '… 4 213 more …' in a dashed pill."""

    def __init__(self, count: int, examined: int = 0, width: float = 200, height: float = 36,
                 px: int = TEXT_PX, compact: bool = False, parent=None) -> None:
        super().__init__(parent)
        self.text = f"… {count_text(count)} more"
        if examined:
            self.text += ", all examined" if examined == count else f", {count_text(examined)} examined"
        if not compact:
            self.text += " …"
        self.font = text_font(px, italic=True)
        # as wide as asked, or as the text needs
        self.w = max(width, QFontMetrics(self.font).horizontalAdvance(self.text) + 2 * px)
        self.h = height

    def count_shown(self) -> int:
        """The number of folded entries, read from the text painted."""
        return int(_COUNT.search(self.text).group(1).replace("\u202f", ""))

    def boundingRect(self) -> QRectF:
        return QRectF(-1, -1, self.w + 2, self.h + 2)

    def paint(self, painter: QPainter, option, widget=None) -> None:
        painter.setRenderHint(QPainter.Antialiasing)
        painter.setPen(pen(MUTED, 1.3, dash=True))
        painter.setBrush(QBrush(QColor("#F4F4F4")))
        painter.drawRoundedRect(QRectF(0, 0, self.w, self.h), self.h / 2, self.h / 2)
        painter.setPen(QColor("#333333"))
        painter.setFont(self.font)
        painter.drawText(QRectF(0, 0, self.w, self.h), Qt.AlignCenter, self.text)


_COUNT = re.compile(r"([\d\u202f]+) more")


class Note(QGraphicsObject):
    """A short explanation beside a card, wrapped at word breaks to
    ``width`` pixels in at most ``max_lines`` lines (a smaller font first,
    then the last line cut with '…'; the card's tooltip has it all).  It
    names the block in ``addr``: hovering or clicking it means the block.
    Painted with ``drawText`` rather than a QGraphicsTextItem, whose text
    document costs a millisecond a note."""

    FLAGS = Qt.AlignLeft | Qt.AlignTop | Qt.TextWordWrap

    def __init__(self, text: str, font: QFont, colour: str, width: float, addr: int | None = None,
                 max_lines: int = 2, parent=None) -> None:
        super().__init__(parent)
        self.addr = addr
        self._text = text
        self.colour = QColor(colour)
        box = QRect(0, 0, int(width), 10_000)
        for px in (font.pixelSize(), font.pixelSize() - 2):
            f = QFont(font)
            f.setPixelSize(px)
            metrics = QFontMetrics(f)
            rect = metrics.boundingRect(box, self.FLAGS, text)
            if rect.height() <= max_lines * metrics.lineSpacing() + 1:
                break
        self.font = f
        self._shown = text
        if rect.height() > max_lines * metrics.lineSpacing() + 1:
            # keep whole lines up to the last, then cut it
            words, lines, line = text.split(), [], ""
            for w in words:
                trial = f"{line} {w}".strip()
                if metrics.horizontalAdvance(trial) <= width or not line:
                    line = trial
                else:
                    lines.append(line)
                    line = w
            lines.append(line)
            head = lines[:max_lines - 1]
            tail = " ".join(lines[max_lines - 1:])
            head.append(metrics.elidedText(tail, Qt.ElideRight, int(width)))
            self._shown = "\n".join(head)
            rect = metrics.boundingRect(box, self.FLAGS, self._shown)
        self._rect = QRectF(rect)
        self._rect.moveTo(0, 0)

    def text(self) -> str:
        """The whole text (what is painted may be cut; see :attr:`shown`)."""
        return self._text

    @property
    def shown(self) -> str:
        return self._shown

    def boundingRect(self) -> QRectF:
        return self._rect

    def paint(self, painter: QPainter, option, widget=None) -> None:
        painter.setFont(self.font)
        painter.setPen(QPen(self.colour))
        painter.drawText(self._rect, self.FLAGS, self._shown)


class Legend(QWidget):
    """Swatches for what a view's outlines mean, each with its words, laid
    out like words in a line and wrapped to the view's width (a
    :class:`~heapscope.gui.flow_layout.FlowLayout`).  ``entries`` are (label,
    css for the swatch).  A grid ``per_row`` entries wide clipped the words
    in a narrow view ("examin", "freed, j" in a compare row at 1280 x 720,
    issue 24); ``per_row`` is kept for callers and no longer matters."""

    def __init__(self, entries: list[tuple[str, str]], per_row: int = 3, parent=None) -> None:
        super().__init__(parent)
        from ..flow_layout import FlowLayout
        flow = FlowLayout(self, h_spacing=10, v_spacing=2)
        flow.setContentsMargins(2, 0, 2, 0)
        self.entries: list[QWidget] = []
        for text, css in entries:
            entry = QWidget()
            row = QHBoxLayout(entry)
            row.setContentsMargins(0, 0, 0, 0)
            row.setSpacing(6)
            swatch = QLabel()
            swatch.setFixedSize(26, 18)
            if css.startswith("badge:"):
                swatch.setText(css.split(":", 1)[1])
                swatch.setAlignment(Qt.AlignCenter)
                swatch.setStyleSheet(f"background: {palette.SEARCHED}; color: black; font-weight: bold;"
                                     "border: 1px solid black; border-radius: 9px;")
            else:
                swatch.setStyleSheet(css)
            words = QLabel(text)
            f = words.font()
            f.setPixelSize(14)
            words.setFont(f)
            row.addWidget(swatch)
            row.addWidget(words)
            flow.addWidget(entry)
            self.entries.append(entry)
        policy = QSizePolicy(QSizePolicy.Preferred, QSizePolicy.Preferred)
        policy.setHeightForWidth(True)
        self.setSizePolicy(policy)

    def hasHeightForWidth(self) -> bool:     # noqa: N802 (Qt's name)
        return True

    def heightForWidth(self, width: int) -> int:     # noqa: N802 (Qt's name)
        return self.layout().heightForWidth(width)


def swatch_css(border: str, fill: str = palette.YELLOW, dashed: bool = False, width: int = 3) -> str:
    return f"background: {fill}; border: {width}px {'dashed' if dashed else 'solid'} {border}; border-radius: 4px;"


class StructureCanvas(QGraphicsView):
    """A QGraphicsView at pixel scale: the wheel scrolls, Ctrl+wheel zooms,
    a drag pans; a click on an item with an ``addr`` emits :attr:`clicked`,
    moving over one emits :attr:`hovered` (-1 when leaving it)."""

    clicked = Signal(int)
    hovered = Signal(int)
    #: a right click on an item with an ``addr``: it and the screen point
    menu_asked = Signal(int, object)
    #: the viewport changed width (notes wrap to it)
    width_changed = Signal()
    # pyqtgraph items ask the view they live in for these two signals
    sigDeviceRangeChanged = Signal(object)
    sigDeviceTransformChanged = Signal(object)

    def __init__(self, parent=None) -> None:
        self._scene = pg.GraphicsScene()
        super().__init__(self._scene, parent)
        self.setRenderHints(QPainter.Antialiasing | QPainter.TextAntialiasing)
        self.setAlignment(Qt.AlignLeft | Qt.AlignTop)
        self.setBackgroundBrush(QBrush(QColor("#ffffff")))
        self.setDragMode(QGraphicsView.ScrollHandDrag)
        # Always there, so the width a drawing may use does not change with
        # its height (a scroll bar coming and going would reflow every note).
        self.setVerticalScrollBarPolicy(Qt.ScrollBarAlwaysOn)
        self.setTransformationAnchor(QGraphicsView.AnchorUnderMouse)
        self.viewport().setMouseTracking(True)
        self.viewport().setCursor(Qt.ArrowCursor)
        self.root = DrawingRoot()
        self._scene.addItem(self.root)
        self._press = None
        self._hovered = -1
        self.zoom = 1.0
        #: the scroll :meth:`reveal` or :meth:`keep_scrolled` made last, made
        #: again when the viewport changes size, until the user scrolls
        self._revealed = None
        for bar in (self.horizontalScrollBar(), self.verticalScrollBar()):
            bar.actionTriggered.connect(self._user_scrolled)

    def finish(self) -> None:
        """Fit the scene to the drawing after the items moved."""
        self._scene.setSceneRect(self.root.fit())

    def reveal(self, rect, xmargin: int = 10, ymargin: int = 10, then=None) -> None:
        """Scroll until ``rect`` (scene units; or a function of no arguments
        giving it, asked again whenever the viewport changes size) is in view,
        from the drawing's top left: where the view ends depends on the state
        drawn and the view's size only, not on where the last step left it
        (one picture per state: a step reached by a seek and the same step
        played to its end look the same).  ``then(rect)``, if given, runs
        after each such scroll (a view adjusting it to its rows, saying what
        the frame left out)."""
        def scroll() -> None:
            shown = rect() if callable(rect) else rect
            self.horizontalScrollBar().setValue(self.horizontalScrollBar().minimum())
            self.verticalScrollBar().setValue(self.verticalScrollBar().minimum())
            self.ensureVisible(shown, xmargin, ymargin)
            if then is not None:
                then(shown)
        self.keep_scrolled(scroll)

    def keep_scrolled(self, scroll) -> None:
        """Run ``scroll()`` (a function of no arguments that scrolls the view
        for the viewport's size now) at once and again whenever the viewport
        changes size, until the user scrolls: the view's scroll is then a
        function of the state drawn and the view's size, never of the scroll
        an earlier step or an earlier size left (a height the layout settles
        on after the drawing is scrolled for the state, not the old one)."""
        self._revealed = scroll
        scroll()

    def _user_scrolled(self, *_) -> None:
        self._revealed = None        # a resize keeps the user's scroll

    def addr_at(self, view_pos) -> int | None:
        for item in self.items(view_pos):
            while item is not None:
                addr = getattr(item, "addr", None)
                if addr is not None:
                    return addr
                item = item.parentItem()
        return None

    def set_zoom(self, zoom: float) -> None:
        zoom = min(3.0, max(0.3, zoom))
        self.scale(zoom / self.zoom, zoom / self.zoom)
        self.zoom = zoom
        self.sigDeviceTransformChanged.emit(self)

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        if event.oldSize().width() != event.size().width():
            self.width_changed.emit()
        if self._revealed is not None:
            self._revealed()

    def wheelEvent(self, event) -> None:
        self._revealed = None
        if event.modifiers() & Qt.ControlModifier:
            self.set_zoom(self.zoom * (1.15 if event.angleDelta().y() > 0 else 1 / 1.15))
            event.accept()
            return
        super().wheelEvent(event)

    def mousePressEvent(self, event) -> None:
        if event.button() == Qt.RightButton:
            addr = self.addr_at(event.position().toPoint())
            if addr is not None:
                self.menu_asked.emit(addr, event.globalPosition().toPoint())
                event.accept()
                return
        self._revealed = None           # a drag pans
        self._press = event.position().toPoint() if event.button() == Qt.LeftButton else None
        super().mousePressEvent(event)

    def mouseReleaseEvent(self, event) -> None:
        super().mouseReleaseEvent(event)
        self.viewport().setCursor(Qt.ArrowCursor)
        pos = event.position().toPoint()
        if self._press is not None and (pos - self._press).manhattanLength() <= 4:
            addr = self.addr_at(pos)
            if addr is not None:
                self.clicked.emit(addr)
        self._press = None

    def mouseMoveEvent(self, event) -> None:
        super().mouseMoveEvent(event)
        addr = self.addr_at(event.position().toPoint())
        addr = -1 if addr is None else addr
        if addr != self._hovered:
            self._hovered = addr
            self.hovered.emit(addr)

    def leaveEvent(self, event) -> None:
        super().leaveEvent(event)
        if self._hovered != -1:
            self._hovered = -1
            self.hovered.emit(-1)
