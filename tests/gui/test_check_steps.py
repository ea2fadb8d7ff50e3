"""Playback > Check Your Strategy After Every Step (issue 22): a strategy of
your own whose check() fails at a known step stops the replay there, in its
worker, and the window shows it as a replay that failed."""

from __future__ import annotations

import numpy as np
import pytest

from heapscope.traces.trace import FREE

from .conftest import misbehaving_plugin, wait_loaded


@pytest.fixture
def strict():
    """tests/data/misbehaving.py's RefusesThree: its check refuses a third live block."""
    yield from misbehaving_plugin("RefusesThree")


def first_step_with_three_live(trace) -> int:
    """The first step after which three ids are live, counted from the trace alone."""
    live = np.cumsum(np.where(trace.kind == FREE, -1, np.where(trace.kind == 0, 1, 0)))
    return int(np.flatnonzero(live >= 3)[0]) + 1


def test_the_toggle_stops_the_replay_where_check_first_fails(qtbot, strict, window, small_trace_path,
                                                              small_trace):
    w = window
    act = w.check_steps.act
    assert act in w.menus["playback"].actions() and not act.isChecked()
    w.set_strategy("refuses-three")
    wait_loaded(qtbot, w, lambda: w.open_trace(small_trace_path))
    assert w.timeline.fault is None and w.timeline.n == len(small_trace)
    w.seek(100)
    k = first_step_with_three_live(small_trace)
    if w.message_box is not None:
        w.message_box.close()
    # on: the trace is replayed again, in the worker, with check() after every step
    wait_loaded(qtbot, w, act.trigger)
    assert act.isChecked() and str(w.settings.value("debug/check_steps")).lower() == "true"
    fault = w.timeline.fault
    assert fault is not None and fault.step == k
    assert "three blocks live" in fault.message
    assert w.timeline.n == k - 1 and w.model.position == k - 1   # shown where it stopped
    texts = w.explain_panel.texts()
    assert f"✖ step {k} (" in texts[-1]
    assert "your _check_structure found a problem: three blocks live; the first is 0x0" in texts[-1]
    assert w.model.selection == 0                                  # the block it names, outlined
    box = w.message_box
    assert box is not None and box.windowTitle() == f"refuses-three stopped at step {k}"
    w.grab().save("/tmp/heapscope-check-steps.png")
    box.close()
    # off again: the whole trace
    wait_loaded(qtbot, w, act.trigger)
    assert w.timeline.fault is None and w.timeline.n == len(small_trace)
    assert str(w.settings.value("debug/check_steps")).lower() == "false"


def test_an_edit_in_the_sandbox_keeps_the_checks(qtbot, strict, window):
    """With the toggle on, a trace made by hand is replayed with the checks
    after each edit too: the third malloc's check fails."""
    w = window
    w.set_strategy("refuses-three")
    w.check_steps.act.trigger()
    w.menus["file"].actions()[0].trigger()          # File > New
    for size in (100, 200):
        w.edits.malloc(size)
        w.animator.finish()
    assert w.timeline.fault is None and w.model.n == 2
    w.edits.malloc(300)
    w.animator.finish()
    fault = w.timeline.fault
    assert fault is not None and fault.step == 3 and "three blocks live" in fault.message
    assert "three blocks live" in w.explain_panel.texts()[-1]
    w.edits.sandbox = None
