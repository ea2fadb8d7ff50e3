"""Lines between blocks and gaps between rows on the heap map.

They make the map read like lines of words, but they paint over cells, so
:class:`BlockSeparators` draws them only where they hide at most a sixteenth
of what they separate: a line between two blocks only where both are at
least :data:`SEPARATOR_MIN_PX` wide on screen, gaps between rows only where
rows are at least :data:`ROW_GAP_MIN_PX` tall.  At real sizes the map shows
its cells, and no state is drawn white.  Each is one path item built from
numpy arrays (``pg.arrayToQPath``), whatever the number of blocks.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtGui import QPainterPath

from .map_coords import pixels
from .map_outlines import OutlineItem
from .theme import LIGHT

#: separators between blocks are considered up to this many blocks in view
#: (past it no block is wide enough on screen anyway)
MAX_SEPARATED_BLOCKS = 20000
#: a line between two blocks only where both are at least this wide on screen
SEPARATOR_MIN_PX = 16
#: gaps between rows only when rows are at least this tall on screen; a gap
#: is a sixteenth of a row, at most 2 px
ROW_GAP_MIN_PX = 16


def _separator_colour(theme):
    return theme.separator


class BlockSeparators:
    """The lines between blocks and the gaps between rows, on ``plot``."""

    def __init__(self, plot) -> None:
        # thin: thick lines would eat small blocks in presenter mode
        self.blocks = OutlineItem(LIGHT.separator, 1, z=5, theme_colour=_separator_colour, thin=True)
        self.rows = OutlineItem(LIGHT.separator, 1, z=6, theme_colour=_separator_colour, thin=True)
        plot.addItem(self.blocks)
        plot.addItem(self.rows)

    def apply_presentation(self, pres) -> None:
        self.blocks.apply_presentation(pres)
        self.rows.apply_presentation(pres)

    def draw(self, b, lay, vb) -> None:
        """Draw them for the blocks ``b`` laid out by ``lay``, at the scale
        of the view box ``vb`` now."""
        bytes_per_px, row_px = pixels(vb)
        min_bytes = SEPARATOR_MIN_PX * bytes_per_px
        path = QPainterPath()
        if len(b) > 1 and row_px >= 6 and min_bytes < lay.row_bytes:
            # the blocks in view only: zoomed in on a 100 000-block heap, its
            # blocks get their lines too
            (_, _), (y0, y1) = vb.viewRange()
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
        self.blocks.setPath(path)
        if lay.rows > 1 and row_px >= ROW_GAP_MIN_PX:
            self.rows.set_width(min(2.0, float(int(row_px // ROW_GAP_MIN_PX))))
            ys = np.repeat(np.arange(1, lay.rows, dtype=np.float64), 2)
            xs = np.tile(np.array([0.0, float(lay.row_bytes)]), lay.rows - 1)
            self.rows.setPath(pg.arrayToQPath(xs, ys, connect="pairs"))
        else:
            self.rows.clear()
