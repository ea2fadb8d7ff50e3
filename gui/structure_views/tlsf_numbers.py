"""Where a TLSF scan band's numbered disc goes (gui/structure_views/tlsf_view.py).

A scan along a row of the matrix of free lists (Masmano et al. 2004's
sl_bitmap search) is drawn as a band with a numbered disc, its place in the
step's order.  The disc must cover neither a cell's number (a list's
length), nor a label, nor a disc placed before it (issue 24: in presenter
mode, dark theme, step 5003 of the default trace, the "1" at list (0, 30)
covered the folded column's 53).
"""

from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF

#: a disc's radius, in the notes' coordinates
NUMBER_R = 14.0


def place_scan_numbers(scans, taken: list[QRectF], matrix_right: float) -> None:
    """Each band along a row gets its disc at the first place of these clear
    of ``taken`` and of the discs placed before it: its first cell's top left
    corner, its bottom left, the band's end's top right, bottom right, then
    right of the matrix (``matrix_right``) at the band's row's top edge, with
    a leader line along that edge (between the cells' numbers, over none) to
    the band's end.  A vertical scan (down the fl_bitmap column) keeps its
    place and is taken."""
    taken = list(taken)
    for scan in scans:
        if scan.vertical:
            taken.append(scan.mapRectToParent(scan.number_rect()))
            continue
        b = scan.band
        places = [(QPointF(b.left(), b.top()), False), (QPointF(b.left(), b.bottom()), False),
                  (QPointF(b.right(), b.top()), False), (QPointF(b.right(), b.bottom()), False),
                  (QPointF(matrix_right + NUMBER_R + 8, b.top() - 1), True)]
        for centre, leader in places:
            scan.move_number(centre, leader)
            disc = scan.mapRectToParent(scan.number_rect())
            if not any(disc.intersects(t) for t in taken):
                break
        taken.append(scan.mapRectToParent(scan.number_rect()))
