"""The axes of the heap map and of the plots, styled the same way through
pyqtgraph's public API.

:func:`style_axes` gives a :class:`pg.AxisItem` the presentation's colours,
tick font and label style (presenter mode, the dark theme); both the map
(gui/heap_map.py) and the plots (gui/plots.py) call it, so their axes look
alike.  :func:`centre_label` puts an axis's title where pyqtgraph puts it
when the axis is resized: pyqtgraph centres the title only on a resize, so
a title that grew (a longer text, a bigger font) in an axis that kept its
size would run off its end.  Only public calls are used: ``setLabel``,
``setStyle``, ``setTextPen``, ``setPen``, ``showLabel``,
``enableAutoSIPrefix`` (:func:`without_si_prefix`) and the title's own
``QGraphicsTextItem`` (``axis.label``); tests/gui/test_axis_style.py
checks gui/ for the private ones (``_updateLabel()``, ``axis.picture =
None``, ``resizeEvent()`` called by hand).
"""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import QPointF
from PySide6.QtGui import QFont

#: pixels between an axis's edge and its title (pyqtgraph's AxisItem.resizeEvent)
LABEL_NUDGE = 5


def tick_font(base: QFont, pres) -> QFont:
    """The tick numbers' and axis titles' font: ``base`` at 0.95 of the
    presentation's body size."""
    font = QFont(base)
    font.setPointSizeF(pres.pt(0.95))
    return font


def style_axes(axes, pres, font: QFont) -> None:
    """Give each of ``axes`` the theme's ink and axis colour, lines as thick
    as the presentation's, and ``font`` for its ticks and its title (the
    title's colour is the presentation's muted ink)."""
    theme = pres.theme
    style = {"color": pres.muted, "font-size": f"{pres.pt(0.95):.1f}pt"}
    for axis in axes:
        axis.setTextPen(theme.ink)
        axis.setPen(pg.mkPen(theme.axis, width=pres.line_scale))
        axis.setStyle(tickFont=font)
        axis.label.setFont(font)
        set_label_style(axis, style)


def without_si_prefix(axes) -> None:
    """No automatic SI prefix on ``axes``, each an axis whose title is never
    shown (a hidden axis, or one whose title is hidden for good): pyqtgraph
    works the prefix out only for a shown title, so it is 1 on these
    whatever the range, yet with the prefix on, every change of the view's
    range wrote the (hidden) title's HTML again and resized the axis for
    it.  Off, a range change only redraws the axis's ticks."""
    for axis in axes:
        assert not axis.label.isVisible(), f"the {axis.orientation} axis shows its title"
        axis.enableAutoSIPrefix(False)


def set_label_style(axis: pg.AxisItem, style: dict) -> None:
    """Set the CSS ``style`` of an axis's title, keeping its text and whether
    it is shown (``setLabel`` would show a hidden title)."""
    shown = axis.label.isVisible()
    axis.setLabel(axis.labelText, units=axis.labelUnits, unitPrefix=axis.labelUnitPrefix, **style)
    if axis.label.isVisible() != shown:
        axis.showLabel(shown)


def centre_label(axis: pg.AxisItem) -> None:
    """Put the axis's title in the middle of the axis, as pyqtgraph does when
    the axis is resized: along a left or right axis (the title turned on
    its side), across a top or bottom one."""
    label = axis.label
    br, size = label.boundingRect(), axis.size()
    w, h = size.width(), size.height()
    side = axis.orientation
    if side in ("left", "right"):
        y = int(h / 2 + br.width() / 2)
        x = -LABEL_NUDGE if side == "left" else int(w - br.height() + LABEL_NUDGE)
    else:
        x = int(w / 2. - br.width() / 2.)
        y = -LABEL_NUDGE if side == "top" else int(h - br.height() + LABEL_NUDGE)
    label.setPos(QPointF(x, y))


def redraw_ticks(axis: pg.AxisItem) -> None:
    """Draw the tick labels again (their strings changed without the view
    moving): any style change makes pyqtgraph forget the axis's picture."""
    axis.setStyle()
