"""Colours of the heap map, the highlights and the plots.

The heap colours come from the Okabe & Ito palette ("Color Universal Design",
2008), chosen so that the eight hues stay apart for the common forms of colour
blindness (protanopia, deuteranopia, tritanopia) and on a washed-out projector.
Each kind of byte in the heap gets one *cell code*; the heap map is an image of
these codes shown through :data:`LUT`, so the colour of a cell is
``LUT[code]``.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtGui import QColor

# Okabe-Ito
BLACK = "#000000"
ORANGE = "#E69F00"
SKY_BLUE = "#56B4E9"
BLUISH_GREEN = "#009E73"
YELLOW = "#F0E442"
BLUE = "#0072B2"
VERMILLION = "#D55E00"
REDDISH_PURPLE = "#CC79A7"
# neutral greys for what is not heap
BEYOND_HEAP = "#E4E4E4"
META_GREY = "#4D4D4D"

# Cell codes: the values stored in the heap map image.
BEYOND = 0      # past the break (the unused end of the last row)
PAYLOAD = 1     # bytes the program asked for
HEADER = 2      # header, footer, boundary tags of a used block
PADDING = 3     # alignment and rounding inside a used block
FREE = 4        # a free block below the top
TOP = 5         # the top (wilderness) block: free and touching the break
META = 6        # bytes the allocator keeps for itself (sentinels, page headers)

#: (code, label for the legend, colour), in legend order
CELL_KINDS = [
    (PAYLOAD, "payload", BLUE),
    (HEADER, "header / footer", SKY_BLUE),
    (PADDING, "alignment padding", REDDISH_PURPLE),
    (FREE, "free", YELLOW),
    (TOP, "top (wilderness)", BLUISH_GREEN),
    (META, "allocator meta", META_GREY),
    (BEYOND, "past the break", BEYOND_HEAP),
]

#: What the heap map lights for the step being shown.
SEARCHED = ORANGE        # a free block the search examined
PLACED = VERMILLION      # the block malloc/realloc handed out
RELEASED = BLACK         # the block free gave back (and what it coalesced into)
FAILED = VERMILLION      # a request that could not be met
GROWN = "#555555"        # the bytes the heap grew by (a dotted outline)
#: The block the user selected (on the map or in the structure view): a black
#: ring with a white core, which stands out on every fill colour.
SELECTED = BLACK
SELECTED_CORE = "#FFFFFF"

#: Plot curves.
CURVE_HEAP = BLACK
CURVE_LIVE = BLUE
CURVE_FRAG = VERMILLION
CURVE_FRAG_NO_TOP = ORANGE
CURVE_SEARCH = BLUISH_GREEN
CURVE_SEARCH_MEAN = REDDISH_PURPLE
CURSOR = VERMILLION


def rgba(hex_colour: str, alpha: int = 255) -> tuple[int, int, int, int]:
    c = QColor(hex_colour)
    return c.red(), c.green(), c.blue(), alpha


def _build_lut() -> np.ndarray:
    lut = np.zeros((256, 4), dtype=np.uint8)
    lut[:, 3] = 255
    for code, _, colour in CELL_KINDS:
        lut[code] = rgba(colour)
    return lut


#: code -> RGBA, uint8 (256, 4); unused codes are black
LUT = _build_lut()

LABELS = {code: label for code, label, _ in CELL_KINDS}
COLOURS = {code: colour for code, _, colour in CELL_KINDS}
