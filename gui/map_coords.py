"""Where things are on the heap map: its coordinates are x, the byte offset
within a row (0 .. row_bytes), and y, the row, growing downwards, so address
``a`` sits at ``(a % row_bytes, a // row_bytes)``; pyqtgraph's ViewBox maps
them to the scene (pixels) and back."""

from __future__ import annotations

from PySide6.QtCore import QPointF


def pixels(vb) -> tuple[float, float]:
    """(bytes per pixel across, pixels per row down) in the view box ``vb`` now."""
    (x0, x1), (y0, y1) = vb.viewRange()
    r = vb.sceneBoundingRect()
    if r.width() <= 0 or r.height() <= 0 or x1 <= x0 or y1 <= y0:
        return float("inf"), 0.0
    return (x1 - x0) / r.width(), r.height() / (y1 - y0)


def view_aspect(vb) -> float:
    """Width / height of the view box ``vb`` in pixels (2 before it is shown)."""
    r = vb.sceneBoundingRect()
    if r.width() < 50 or r.height() < 50:
        return 2.0
    return r.width() / r.height()


def address_at(vb, layout, scene_pos) -> int:
    """The heap address drawn at a scene position, or -1 off the heap."""
    if layout is None or not vb.sceneBoundingRect().contains(scene_pos):
        return -1
    p = vb.mapSceneToView(scene_pos)
    x, y = p.x(), p.y()
    row_bytes = layout.row_bytes
    if not (0 <= x < row_bytes and y >= 0):
        return -1
    return int(y) * row_bytes + int(x)


def scene_pos_of(vb, layout, address: int) -> QPointF:
    """Scene position of the middle of the byte at ``address``."""
    x, y = layout.point_of(address)
    return vb.mapViewToScene(QPointF(x + 0.5, y + 0.5))


def block_top(row_bytes: int, addr: int, size: int) -> tuple[float, float]:
    """The middle of the top edge of a block's piece in its first row
    (view coordinates): a number stands on it."""
    x, y = addr % row_bytes, addr // row_bytes
    return x + min(size, row_bytes - x) / 2, float(y)
