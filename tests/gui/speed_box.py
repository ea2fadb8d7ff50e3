"""The speed box's items as a fresh window has them, after a test that set
a speed off its list.

``MAX_ANIMATED_SPEED`` (4 steps/s, the fastest that plays a step's events)
is not one of gui/player.py's SPEEDS: ``TimelineBar.show_speed`` adds an
item for it, which no reset of a shared window (tests/gui/shared_window.py,
tests/gui/shared_compare.py) takes away, so the next test's window state
differed from a fresh one's and the window was made again (about half a
second a test, issue 20).  A test that set such a speed calls
:func:`forget_off_list_speeds` once it is done with it.
"""

from __future__ import annotations


def forget_off_list_speeds(w) -> None:
    """Back to the default speed, and the speed box's items only SPEEDS' ones."""
    from heapscope.gui.player import DEFAULT_SPEED, SPEEDS
    w.player.set_speed(DEFAULT_SPEED)
    box = w.bar.speed_box
    for i in reversed(range(box.count())):
        if box.itemData(i) not in SPEEDS:
            box.removeItem(i)
    assert [box.itemData(i) for i in range(box.count())] == SPEEDS
