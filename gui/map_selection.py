"""The selected block and the block hovered in another view, outlined on
the heap map: the selection a black ring with a white core (white with a
black core on dark), visible on every fill colour; the hover dashed."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QPainterPath

from . import palette
from .map_outlines import OutlineItem, outline_path


def block_range(blocks, addr: int | None) -> tuple[int, int] | None:
    """(addr, size) of the block of ``blocks`` holding ``addr``, or None."""
    i = -1 if addr is None else blocks.index_at(addr)
    if i < 0:
        return None
    return int(blocks.addr[i]), int(blocks.size[i])


class SelectionLayer:
    """The selection ring and the hover outline on ``plot``."""

    def __init__(self, plot) -> None:
        self.outer = OutlineItem(palette.SELECTED, 7, z=16, theme_colour=lambda t: t.contrast)
        self.core = OutlineItem(palette.SELECTED_CORE, 2.5, z=17, theme_colour=lambda t: t.contrast_core)
        self.hover = OutlineItem(palette.SELECTED, 2, Qt.DashLine, z=15, theme_colour=lambda t: t.contrast)
        for item in (self.outer, self.core, self.hover):
            plot.addItem(item)

    def apply_presentation(self, pres) -> None:
        for item in (self.outer, self.core, self.hover):
            item.apply_presentation(pres)

    def draw(self, blocks, row_bytes: int, selected: int | None, hovered: int | None) -> None:
        """Outline the blocks holding ``selected`` and ``hovered`` (None: none)."""
        path = self._path(blocks, row_bytes, selected)
        self.outer.setPath(path)
        self.core.setPath(path)
        self.hover.setPath(self._path(blocks, row_bytes, hovered))

    @staticmethod
    def _path(blocks, row_bytes: int, addr: int | None) -> QPainterPath:
        r = block_range(blocks, addr)
        return QPainterPath() if r is None else outline_path([r], row_bytes)

    @staticmethod
    def outlined(path: QPainterPath, blocks, row_bytes: int) -> tuple[int, int] | None:
        """(address, size) of the block an outline's ``path`` is drawn
        around (None for an empty path)."""
        if path.isEmpty():
            return None
        # the path's first rectangle starts at the block's first byte
        first = path.toSubpathPolygons()[0].boundingRect()
        start = int(round(first.top())) * row_bytes + int(round(first.left()))
        i = blocks.index_at(start)
        return int(blocks.addr[i]), int(blocks.size[i])
