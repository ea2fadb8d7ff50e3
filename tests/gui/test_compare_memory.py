"""Compare mode says before it builds its rows what they will need, and
offers fewer when they would need more than it may take (gui/compare_memory.py).
The limit is lowered so that a small trace goes past it."""

import pytest
from PySide6.QtCore import Qt

from heapscope.allocators.denser_checkpoints import DENSER_BYTES
from heapscope.gui import compare_memory
from heapscope.gui.compare_memory import RowsEstimate, rows_to_offer

SEVEN = ["next-fit", "first-fit", "rotating-list", "splay-best-fit", "buddy", "tlsf", "bsd-buckets"]
#: docs/timeline.md, "Memory, per operation": a row's measures and checkpoints, the trace
ROW_BYTES_PER_OP = 62 + 212
TRACE_BYTES_PER_OP = 17


def limit_for(ops: int, rows: float) -> int:
    """A limit with room for ``rows`` rows of an ``ops``-step trace, worked
    out from the documented figures."""
    return int(ops * TRACE_BYTES_PER_OP + DENSER_BYTES + rows * ops * ROW_BYTES_PER_OP)


def test_the_estimate_is_the_documented_figures_times_the_steps():
    e = RowsEstimate(ops=1000, rows=7)
    assert e.per_row == 274_000
    assert e.total == 17_000 + DENSER_BYTES + 7 * 274_000
    assert e.rows_within(limit_for(1000, 3.5)) == 3
    assert e.rows_within(limit_for(1000, 7)) == 7
    assert e.rows_within(DENSER_BYTES) == 0


def test_the_rows_offered_keep_those_built_then_the_users_order():
    names = ["a", "b", "c", "d", "e"]
    assert rows_to_offer(names, {"d"}, 3) == ["a", "b", "d"]
    assert rows_to_offer(names, {"d", "e"}, 2) == ["d", "e"]
    assert rows_to_offer(names, set(), 0) == []


@pytest.fixture
def over(monkeypatch, loaded):
    """The window with the small trace; room for three and a half rows of it."""
    monkeypatch.setattr(compare_memory, "LIMIT_BYTES", limit_for(len(loaded.trace), 3.5))
    return loaded


def test_seven_rows_past_the_limit_ask_first_and_three_rows_show(qtbot, over):
    w = over
    w.compare.compare(SEVEN)
    dialog = w.compare.memory_dialog
    assert dialog is not None and dialog.isVisible()
    assert not w.compare.active and not w.busy          # nothing built before the answer
    text = dialog.label.text()
    assert "7 strategies" in text and "3 rows fit" in text, text
    assert "next-fit, first-fit, rotating-list" in text, text
    dialog.grab().save("/tmp/compare_memory_dialog.png")
    with qtbot.waitSignal(w.compare.changed, timeout=60000):
        qtbot.mouseClick(dialog.fewer_button, Qt.LeftButton)
    assert w.compare.active
    assert w.compare.names == ["next-fit", "first-fit", "rotating-list"]
    assert len(w.compare.view.shown_rows()) == 3


def test_cancel_builds_nothing_and_all_anyway_builds_all(qtbot, over):
    w = over
    w.compare.compare(SEVEN)
    w.compare.memory_dialog.reject()
    assert not w.compare.active and not w.busy and w.compare.memory_dialog is None
    w.compare.compare(SEVEN)
    with qtbot.waitSignal(w.compare.changed, timeout=60000):
        qtbot.mouseClick(w.compare.memory_dialog.all_button, Qt.LeftButton)
    assert w.compare.active and w.compare.names == SEVEN


def test_within_the_limit_there_is_nothing_to_ask(qtbot, monkeypatch, loaded):
    monkeypatch.setattr(compare_memory, "LIMIT_BYTES", limit_for(len(loaded.trace), 7))
    with qtbot.waitSignal(loaded.compare.changed, timeout=60000):
        loaded.compare.compare(SEVEN)
    assert loaded.compare.memory_dialog is None and loaded.compare.active


def test_not_even_two_rows_offers_only_all_or_nothing(monkeypatch, loaded):
    monkeypatch.setattr(compare_memory, "LIMIT_BYTES", limit_for(len(loaded.trace), 1.5))
    loaded.compare.compare(SEVEN)
    dialog = loaded.compare.memory_dialog
    assert dialog.fewer_button is None and "Not even 2 rows fit" in dialog.label.text()
    dialog.reject()
