"""How the window looks: its theme (light or dark), its text size, and
presenter mode.

A :class:`Presentation` says everything that changes together when a teacher
puts heapscope on a projector:

* **text size** follows the screen: the body text is :data:`BASE_PT` points on
  a screen :data:`REFERENCE_HEIGHT` logical pixels high (the 1400 x 900 window
  heapscope was first laid out for) and grows in proportion on taller screens
  (13.2 pt on 1920 x 1080), never below :data:`MIN_SCREEN_FACTOR` of it;
* **presenter mode** multiplies every text by :data:`PRESENTER_TEXT` and every
  outline by :data:`PRESENTER_LINES`, swaps the greys of secondary text for full
  black (white on dark), and zooms the structure drawings by the same factor as
  the text, so labels, boxes and outlines keep their proportions;
* the **theme**: light (black on white) or dark (white on near-black).  Both
  keep Okabe & Ito's eight colours ("Color Universal Design", 2008) for what
  they mean, since those stay apart for the common colour blindnesses on
  either background; only black and white (a freed block's outline, the
  selection ring, the heap curve) and the greys swap.

:class:`FontScaler` applies a text scale to a tree of widgets: a widget that
inherits its font follows the application font; one with a font of its own
(a gauge's big number, 2.3 x the body) keeps its ratio to the body, and a
pixel-sized one (the structure views' legends) is multiplied by the scale.
pyqtgraph items are not widgets: each view scales those itself
(``apply_presentation``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QFont, QPalette
from PySide6.QtWidgets import QLabel, QWidget

from . import palette

#: body text in points on a screen REFERENCE_HEIGHT logical pixels high
BASE_PT = 11.0
REFERENCE_HEIGHT = 900
#: the text never gets smaller than this share of BASE_PT (a 720-line projector)
MIN_SCREEN_FACTOR = 0.9
#: nor larger than this (a 4K screen without scaling)
MAX_SCREEN_FACTOR = 2.4
#: presenter mode: text and structure drawings grow by this much ...
PRESENTER_TEXT = 1.4
#: the smallest text on screen per unit of drawing zoom (Presentation.min_text_px)
MIN_TEXT_PER_SCALE = 12.7
#: ... and outlines and curves by this much
PRESENTER_LINES = 1.7


@dataclass(frozen=True)
class Theme:
    """The colours that are not Okabe & Ito's hues, for one background."""
    name: str
    background: str        # the map's, the plots' and the gauges' background
    window: str            # the widgets' background
    base: str              # text fields and lists
    ink: str               # text
    muted: str             # secondary text (detail lines, units)
    faint_muted: str       # muted text outside presenter mode
    axis: str              # axis lines, bar outlines
    bar_empty: str         # the unfilled part of a gauge's bar
    separator: str         # the thin lines between blocks and rows on the map
    beyond: str            # past the break
    meta: str              # the allocator's own bytes
    contrast: str          # black on light, white on dark: freed outline, heap curve, selection ring
    contrast_core: str     # the selection ring's core (the other one)
    highlight: str         # a selected list line
    highlight_text: str
    tint: str              # lines naming the selected block
    grown: str             # the dotted outline of the bytes the heap grew by
    best: str              # the background of a table's best value (compare mode's ranking)


LIGHT = Theme("light", background="#FFFFFF", window="#EFEFEF", base="#FFFFFF", ink="#000000",
              muted="#1A1A1A", faint_muted="#444444", axis="#777777", bar_empty="#EEEEEE",
              separator="#FFFFFF", beyond=palette.BEYOND_HEAP, meta=palette.META_GREY,
              contrast="#000000", contrast_core="#FFFFFF", highlight=palette.BLUE,
              highlight_text="#FFFFFF", tint="#CFE8F7",
              grown=palette.GROWN, best="#DFF0E4")
DARK = Theme("dark", background="#121212", window="#1E1E1E", base="#181818", ink="#FFFFFF",
             muted="#E6E6E6", faint_muted="#BDBDBD", axis="#9A9A9A", bar_empty="#2E2E2E",
             separator="#121212", beyond="#2B2B2B", meta="#8C8C8C",
             contrast="#FFFFFF", contrast_core="#000000", highlight=palette.SKY_BLUE,
             highlight_text="#000000", tint="#1F4A63",
             grown="#BBBBBB", best="#1E4A2C")
THEMES = {t.name: t for t in (LIGHT, DARK)}


def screen_factor(screen_height: int | float) -> float:
    """How much bigger than BASE_PT the text is on a screen this many logical
    pixels high."""
    return min(max(float(screen_height) / REFERENCE_HEIGHT, MIN_SCREEN_FACTOR), MAX_SCREEN_FACTOR)


@dataclass(frozen=True)
class Presentation:
    """Presenter mode, the theme and the screen the window is on."""
    presenter: bool = False
    theme_name: str = "light"
    screen_height: int = REFERENCE_HEIGHT

    @property
    def theme(self) -> Theme:
        return THEMES[self.theme_name]

    @property
    def text_scale(self) -> float:
        """Every text's size relative to the one it was designed at."""
        return screen_factor(self.screen_height) * (PRESENTER_TEXT if self.presenter else 1.0)

    @property
    def body_pt(self) -> float:
        """The application font's size in points."""
        return round(BASE_PT * self.text_scale, 1)

    @property
    def line_scale(self) -> float:
        """Outline and curve widths relative to their design."""
        return PRESENTER_LINES if self.presenter else 1.0

    @property
    def drawing_scale(self) -> float:
        """The zoom of drawings laid out in design pixels (the structure views)."""
        return self.text_scale

    @property
    def min_text_px(self) -> float:
        """The smallest text any view draws by itself, in screen pixels:
        11.4 at 1280 x 720, 16 in presenter mode there, more on a bigger
        screen (MIN_TEXT_PER_SCALE times the drawings' zoom).  A view that
        cannot keep it at the zoom it chooses summarises instead of shrinking."""
        return MIN_TEXT_PER_SCALE * self.drawing_scale

    @property
    def muted(self) -> str:
        """Secondary text: a dark grey, full ink in presenter mode (contrast first)."""
        return self.theme.muted if self.presenter else self.theme.faint_muted

    def pt(self, factor: float = 1.0) -> float:
        """A font size ``factor`` times the body's."""
        return self.body_pt * factor

    def with_(self, **changes) -> "Presentation":
        return replace(self, **changes)


# ------------------------------------------------------------------- colours
def lut(theme: Theme) -> np.ndarray:
    """The heap map's colour table for ``theme``: Okabe & Ito's hues for
    what holds data, the theme's greys for what does not."""
    table = palette.LUT.copy()
    table[palette.BEYOND] = palette.rgba(theme.beyond)
    table[palette.META] = palette.rgba(theme.meta)
    return table


def cell_colours(theme: Theme) -> dict[int, str]:
    """Cell code -> colour (hex) as the map draws it in ``theme``."""
    colours = dict(palette.COLOURS)
    colours[palette.BEYOND] = theme.beyond
    colours[palette.META] = theme.meta
    return colours


def qt_palette(theme: Theme) -> QPalette:
    """A QPalette for the widgets of ``theme`` (Fusion draws with it)."""
    p = QPalette()
    ink, window, base = QColor(theme.ink), QColor(theme.window), QColor(theme.base)
    for group in (QPalette.Active, QPalette.Inactive):
        p.setColor(group, QPalette.Window, window)
        p.setColor(group, QPalette.WindowText, ink)
        p.setColor(group, QPalette.Base, base)
        p.setColor(group, QPalette.AlternateBase, window)
        p.setColor(group, QPalette.Text, ink)
        p.setColor(group, QPalette.Button, window)
        p.setColor(group, QPalette.ButtonText, ink)
        p.setColor(group, QPalette.ToolTipBase, base)
        p.setColor(group, QPalette.ToolTipText, ink)
        p.setColor(group, QPalette.PlaceholderText, QColor(theme.faint_muted))
        p.setColor(group, QPalette.Highlight, QColor(theme.highlight))
        p.setColor(group, QPalette.HighlightedText, QColor(theme.highlight_text))
        p.setColor(group, QPalette.BrightText, QColor(palette.VERMILLION))
        p.setColor(group, QPalette.Link, QColor(theme.highlight))
        p.setColor(group, QPalette.Light, window.lighter(130))
        p.setColor(group, QPalette.Midlight, window.lighter(115))
        p.setColor(group, QPalette.Mid, window.darker(130) if theme.name == "light" else window.lighter(160))
        p.setColor(group, QPalette.Dark, window.darker(160) if theme.name == "light" else window.lighter(200))
        p.setColor(group, QPalette.Shadow, QColor("#000000"))
    faded = QColor(theme.axis)
    for role in (QPalette.WindowText, QPalette.Text, QPalette.ButtonText):
        p.setColor(QPalette.Disabled, role, faded)
    p.setColor(QPalette.Disabled, QPalette.Window, window)
    p.setColor(QPalette.Disabled, QPalette.Base, window)
    p.setColor(QPalette.Disabled, QPalette.Button, window)
    return p


def tinted_icon(icon, colour: str, size: int = 64):
    """``icon`` with every opaque pixel painted ``colour`` (the standard
    transport icons are dark grey, invisible on the dark theme)."""
    from PySide6.QtGui import QIcon, QPainter, QPixmap
    out = QIcon()
    for mode in (QIcon.Normal, QIcon.Disabled):
        pm = QPixmap(icon.pixmap(size, size, mode))
        if pm.isNull():
            continue
        painter = QPainter(pm)
        painter.setCompositionMode(QPainter.CompositionMode_SourceIn)
        c = QColor(colour)
        if mode == QIcon.Disabled:
            c.setAlphaF(0.4)
        painter.fillRect(pm.rect(), c)
        painter.end()
        out.addPixmap(pm, mode)
    return out


# --------------------------------------------------------------------- fonts
_POINT = "hs_base_pt"     # a widget's own font at text scale 1, in points
_PIXEL = "hs_base_px"     # ... or in pixels
_HEIGHT = "hs_base_h"     # a label's fixed height (room for so many lines) at text scale 1


class FontScaler:
    """Scales the fonts that widgets set for themselves (see the module's
    docstring).  ``scale`` is the text scale the widgets' fonts were made
    under when first seen (so a widget made while presenter mode is on is
    read back to its design size)."""

    def __init__(self, scale: float | None = None) -> None:
        #: the scale the widgets' own fonts are at now: by default the
        #: application font's, which the widgets derived theirs from
        self.scale = scale if scale is not None else app_text_scale()

    def apply(self, root: QWidget, scale: float) -> None:
        """Set every widget under ``root`` (``root`` included) to ``scale``."""
        self._record(root)
        for w in root.findChildren(QWidget):
            self._record(w)
        self.scale = scale
        self._set(root, scale)
        for w in root.findChildren(QWidget):
            self._set(w, scale)

    def adopt(self, root: QWidget) -> None:
        """A widget tree made after :meth:`apply` (a new structure view): bring
        its own fonts to the current scale."""
        self.apply(root, self.scale)

    def _record(self, w: QWidget) -> None:
        if not w.testAttribute(Qt.WA_SetFont) or w.property(_POINT) is not None \
                or w.property(_PIXEL) is not None:
            return
        f = w.font()
        if f.pixelSize() > 0:
            w.setProperty(_PIXEL, float(f.pixelSize()))    # pixel fonts are absolute
            unit = 1.0
        else:
            w.setProperty(_POINT, f.pointSizeF() / self.scale)
            unit = self.scale
        if isinstance(w, QLabel) and 0 < w.minimumHeight() == w.maximumHeight():
            # a label kept so many lines high: it grows with its text
            w.setProperty(_HEIGHT, w.minimumHeight() / unit)

    @staticmethod
    def _set(w: QWidget, scale: float) -> None:
        pt, px = w.property(_POINT), w.property(_PIXEL)
        if pt is None and px is None:
            return
        f = QFont(w.font())
        if px is not None:
            f.setPixelSize(max(1, round(px * scale)))
        else:
            f.setPointSizeF(pt * scale)
        w.setFont(f)
        h = w.property(_HEIGHT)
        if h is not None:
            w.setFixedHeight(round(float(h) * scale))


def app_text_scale() -> float:
    """The text scale the application font is at now (its size over BASE_PT)."""
    from PySide6.QtWidgets import QApplication
    app = QApplication.instance()
    size = app.font().pointSizeF() if app is not None else BASE_PT
    return (size if size > 0 else BASE_PT) / BASE_PT


def base_point_size(widget: QWidget) -> float | None:
    """A widget's own font size at text scale 1 (None: it follows its parent)."""
    pt = widget.property(_POINT)
    return None if pt is None else float(pt)
