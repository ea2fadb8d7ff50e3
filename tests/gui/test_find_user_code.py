"""Find over a strategy of your own runs in a worker process (issue 22):
a plugin that loops while a step is explained is stopped by Cancel at once
and by the time limit, and the window stays responsive meanwhile; a plugin
that behaves finds what a walk of its own finds."""

from __future__ import annotations

import time

import pytest
from PySide6.QtCore import Qt, QTimer

from heapscope.allocators.conditions import known_events, parse
from heapscope.allocators.find import find_steps

from .conftest import misbehaving_plugin, wait_loaded

@pytest.fixture
def loopy():
    """tests/data/misbehaving.py's LoopsWhenExplained: it loops once a malloc
    of step 50 or more is replayed with its events (a Find walk), but not in
    its build (events off; the workload's last step, replayed with them, is
    a free)."""
    yield from misbehaving_plugin("LoopsWhenExplained")


@pytest.fixture
def tame():
    yield from misbehaving_plugin("Misbehaving")      # it never misbehaves


@pytest.fixture
def loopy_window(qtbot, loopy, window, small_trace_path):
    w = window
    w.set_strategy(loopy.name)
    wait_loaded(qtbot, w, lambda: w.open_trace(small_trace_path))
    assert w.timeline.strategy_name == loopy.name and w.timeline.fault is None
    yield w
    w.finder.searcher.stop()


def start_find(qtbot, w, text: str) -> None:
    qtbot.keyClick(w, Qt.Key_F, Qt.ControlModifier)
    panel = w.finder.panel
    panel.edit.setText(text)
    qtbot.keyClick(panel.edit, Qt.Key_Return)
    assert w.finder.searcher.busy


def test_cancel_ends_a_find_whose_plugin_loops_and_the_window_stays_responsive(qtbot, loopy_window):
    w = loopy_window
    ticks = []
    timer = QTimer()
    timer.timeout.connect(lambda: ticks.append(time.monotonic()))
    timer.start(20)
    start_find(qtbot, w, 'event == "Placed"')        # every step walked with its events
    panel = w.finder.panel
    qtbot.wait(800)                                   # the worker's plugin loops by now
    assert w.finder.searcher.busy
    gaps = [b - a for a, b in zip(ticks, ticks[1:])]
    assert len(ticks) > 20 and max(gaps) < 0.3      # the event loop ran all along
    w.step_forward()                                  # and the window steps meanwhile
    assert w.model.position == 1
    t0 = time.monotonic()
    qtbot.mouseClick(panel.cancel_button, Qt.LeftButton)
    qtbot.waitUntil(lambda: not w.finder.searcher.busy, timeout=3000)
    assert time.monotonic() - t0 < 2.0
    assert panel.status.text() == "Cancelled." and w.finder.result is None
    timer.stop()


def test_a_looping_plugin_is_stopped_by_the_time_limit(qtbot, loopy_window):
    w = loopy_window
    w.time_limit = 1.0
    start_find(qtbot, w, 'event == "Placed"')
    qtbot.waitUntil(lambda: not w.finder.searcher.busy, timeout=10000)
    said = w.finder.panel.status.text()
    assert said.startswith("The search stopped: no answer in 1 s at step 50, in LoopsWhenExplained.misbehave (")
    w.grab().save("/tmp/heapscope-find-stopped.png")


def test_a_plugin_that_behaves_finds_what_a_walk_of_its_own_finds(qtbot, tame, window,
                                                                   small_trace_path):
    w = window
    w.set_strategy(tame.name)
    wait_loaded(qtbot, w, lambda: w.open_trace(small_trace_path))
    start_find(qtbot, w, "free and merged or grew")
    qtbot.waitUntil(lambda: not w.finder.searcher.busy, timeout=20000)
    expected = find_steps(w.timeline, parse("free and merged or grew", known_events([tame.name])))
    assert list(w.finder.matches) == list(expected.steps) and len(expected.steps)
    assert w.finder.panel.texts()[0].startswith(f"step {expected.steps[0]}: ")
