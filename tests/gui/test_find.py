"""Find (Ctrl+F), F3 / Shift+F3 and breakpoints in the window, driven by
keys as a person would; ``open --step N`` and grade's printed command
opening where it says."""

import re

import numpy as np
import pytest
from PySide6.QtCore import Qt

from heapscope.allocators import plugins
from heapscope.allocators.replay import Program, apply_op
from heapscope.allocators.registry import make_strategy
from heapscope.gui.breakpoints import Breakpoints

from .conftest import wait_loaded, window_from_command_line
from .test_user_strategy_window import EXAMPLES


def type_condition(qtbot, w, text: str) -> None:
    """Ctrl+F, the condition typed into the box, Enter; wait for the search."""
    qtbot.keyClick(w, Qt.Key_F, Qt.ControlModifier)
    panel = w.finder.panel
    assert w.finder.dock.isVisible() and panel.edit.hasFocus()
    panel.edit.clear()
    qtbot.keyClicks(panel.edit, text)
    qtbot.keyClick(panel.edit, Qt.Key_Return)
    qtbot.waitUntil(lambda: not w.finder.searcher.busy, timeout=20000)


def steps_with_event(timeline, type_name: str) -> list[int]:
    """The steps holding an event of ``type_name``, by a replay of our own
    with events on (not the finder's walk)."""
    strategy = make_strategy(timeline.strategy_name, **timeline.params)
    program, out = Program(), []
    strategy.record = True
    for step in range(1, timeline.n + 1):
        rec = apply_op(strategy, program, *timeline.op(step))
        if any(type(e).__name__ == type_name for e in rec.events):
            out.append(step)
    return out


def test_ctrl_f_marks_the_scrubber_and_f3_visits_the_matches_in_order(qtbot, loaded):
    w = loaded
    # derived from the metric series, not from the finder
    expected = list(np.flatnonzero(w.timeline.series.search > 3) + 1)
    assert 3 < len(expected) < w.timeline.n
    type_condition(qtbot, w, "search > 3")
    assert list(w.bar.marks.matches) == expected
    # and dotted on the plots: the search plot's dots are those steps' search lengths
    dots_x, dots_y = w.plots.match_dots[2].getData()
    assert list(dots_x) == expected
    assert list(dots_y) == [w.timeline.series.search[s - 1] for s in expected]
    assert w.finder.panel.status.text().startswith(f"{len(expected):,} steps of {w.timeline.n:,} "
                                                   "where search > 3")
    listed = w.finder.panel.texts()
    assert len(listed) == len(expected) and listed[0].startswith(f"step {expected[0]}: ")
    w.seek(0)
    visited = []
    for _ in expected[:6]:
        qtbot.keyClick(w, Qt.Key_F3)
        visited.append(w.model.position)
    assert visited == expected[:6]
    qtbot.keyClick(w, Qt.Key_F3, Qt.ShiftModifier)
    assert w.model.position == expected[4]
    # past the last match F3 goes round to the first
    w.seek(expected[-1])
    qtbot.keyClick(w, Qt.Key_F3)
    assert w.model.position == expected[0]
    w.resize(1280, 720)
    qtbot.wait(50)
    w.grab().save("/tmp/heapscope-find.png")


def test_find_by_event_chooses_the_matching_event(qtbot, loaded):
    w = loaded
    expected = steps_with_event(w.timeline, "Coalesce")
    assert expected
    type_condition(qtbot, w, 'event == "Coalesce"')
    assert list(w.finder.matches) == expected
    w.seek(0)
    qtbot.keyClick(w, Qt.Key_F3)
    assert w.model.position == expected[0]
    index = w.model.event_index
    shown = w.model.step(0).explained
    assert index is not None and shown[index].type == "Coalesce"
    assert w.model.selection == shown[index].addrs[0]


def test_a_bad_condition_is_said_with_its_column(qtbot, loaded):
    w = loaded
    type_condition(qtbot, w, "search > 3 and serch < 9")
    text = w.finder.panel.status.text()
    assert "column 16" in text and "unknown name 'serch'" in text
    assert w.finder.panel.edit.cursorPosition() == 15
    assert not len(w.bar.marks.matches)


def test_a_breakpoint_stops_playback_on_the_right_step(qtbot, loaded):
    w = loaded
    search = w.timeline.series.search
    expected = list(np.flatnonzero(search > 4) + 1)
    assert len(expected) >= 3
    qtbot.keyClick(w, Qt.Key_F, Qt.ControlModifier)
    w.finder.panel.edit.setText("search > 4")
    qtbot.mouseClick(w.finder.panel.add_break, Qt.LeftButton)
    assert [b.text for b in w.finder.breakpoints.items] == ["search > 4"]
    assert w.finder.panel.breaks.item(0).text().endswith(f"— {len(expected)} steps")
    w.seek(0)
    w.player.set_speed(2000)
    w.heap_map.plot_widget.setFocus()
    qtbot.keyClick(w, Qt.Key_Space)
    qtbot.waitUntil(lambda: not w.player.playing, timeout=10000)
    assert w.model.position == expected[0]
    assert "breakpoint search > 4" in w.statusBar().currentMessage()
    qtbot.keyClick(w, Qt.Key_Space)
    qtbot.waitUntil(lambda: not w.player.playing, timeout=10000)
    assert w.model.position == expected[1]
    # from the step just before a match, and from a match itself: the next one
    w.seek(expected[1] - 1)
    qtbot.keyClick(w, Qt.Key_Space)
    qtbot.waitUntil(lambda: not w.player.playing, timeout=10000)
    assert w.model.position == expected[1]
    assert w.finder.stop_before(expected[1], w.model.n) == (expected[2], w.finder.breakpoints.items[0])
    # unchecked, it stops nothing: playing runs to the end
    w.finder.panel.breaks.item(0).setCheckState(Qt.Unchecked)
    assert not w.finder.breakpoints.items[0].enabled
    qtbot.keyClick(w, Qt.Key_Space)
    qtbot.waitUntil(lambda: not w.player.playing, timeout=20000)
    assert w.model.position == w.model.n
    # saved with the window's settings
    again = Breakpoints(w.model, w.settings)
    assert [(b.text, b.enabled) for b in again.items] == [("search > 4", False)]


def test_an_event_breakpoint_is_searched_in_the_background(qtbot, loaded):
    w = loaded
    expected = steps_with_event(w.timeline, "Coalesce")
    w.finder.add_breakpoint('event == "Coalesce"')
    bp = w.finder.breakpoints
    qtbot.waitUntil(lambda: bp.state(bp.items[0]) != "searching", timeout=20000)
    assert list(bp.steps(bp.items[0])) == expected
    w.seek(0)
    w.player.set_speed(2000)
    w.toggle_play()
    qtbot.waitUntil(lambda: not w.player.playing, timeout=10000)
    assert w.model.position == expected[0]


def _open(qtbot, monkeypatch, argv):
    """``heapscope`` run with ``argv``: the window it opens, once loaded."""
    w = window_from_command_line(qtbot, monkeypatch, argv)
    qtbot.waitUntil(lambda: w.timeline is not None and not w.busy, timeout=30000)
    return w


def test_open_step_opens_at_that_step(qtbot, monkeypatch, small_trace_path):
    w = _open(qtbot, monkeypatch, ["open", small_trace_path, "-s", "tlsf", "--step", "321"])
    assert w.timeline.strategy_name == "tlsf" and w.model.position == 321
    assert w.bar.description.text().startswith("step 321: ")
    w.close()


def test_grades_command_opens_at_the_failing_step_with_its_message(qtbot, monkeypatch, capsys,
                                                                   small_trace_path):
    from heapscope.cli import main
    target = f"{EXAMPLES / 'broken.py'}:Broken"
    try:
        assert main(["grade", target, small_trace_path]) != 0
        out = capsys.readouterr().out
        command = re.search(r"see it: heapscope (open .*)", out).group(1)
        failing = int(re.search(r"error at step (\d+)", out).group(1))
        message = re.search(r"\n  (your _malloc returned .*)\n", out).group(1)
        argv = command.split()
        assert argv[argv.index("--step") + 1] == str(failing)
        w = _open(qtbot, monkeypatch, argv)
        # the heap the failing step started from, and the mistake said at its end
        assert w.timeline.n == failing - 1 and w.model.position == failing - 1
        lines = w.explain_panel.texts()
        assert f"step {failing} (malloc(" in lines[-1] and message in lines[-1]
        assert f"step {failing} failed" in w.explain_panel.title.text()
        # the block it names is selected (outlined on the map)
        block = int(re.search(r"live block at (0x[0-9a-f]+)", message).group(1), 16)
        assert w.model.selection == block
        w.resize(1280, 720)
        qtbot.wait(50)
        w.grab().save("/tmp/heapscope-grade-open.png")
        if w.message_box is not None:
            w.message_box.close()
        w.close()
        # closed, the window's watch on your code never arms again (its
        # SIGALRM handler would outlive the window)
        w.user_watch.refresh()
        assert not w.user_watch.armed
    finally:
        plugins.forget("broken")


def test_in_compare_mode_find_searches_every_row(qtbot, loaded):
    from .test_compare_mode import compare
    w = loaded
    compare(qtbot, w, ["next-fit", "buddy"])
    series = {key[0]: w.model.timeline(r).series for r, key in enumerate(w.model.shown)}
    # a step is a match where either row's search was long
    expected = np.flatnonzero((series["next-fit"].search > 4) | (series["buddy"].search > 4)) + 1
    type_condition(qtbot, w, "search > 4")
    assert np.array_equal(w.bar.marks.matches, expected)
    assert set(w.finder.result.steps) == set(w.model.shown)
    w.seek(0)
    qtbot.keyClick(w, Qt.Key_F3)
    assert w.model.position == expected[0]


def test_a_long_search_shows_progress_and_cancel_stops_it(qtbot, window):
    from heapscope import traces
    w = window
    wait_loaded(qtbot, w, lambda: w.load_trace(traces.make_workload("vo1989", steps=15000, seed=2)))
    qtbot.keyClick(w, Qt.Key_F, Qt.ControlModifier)
    panel = w.finder.panel
    panel.edit.setText("addr == 0x10")        # no column rules a step out: every step walked
    qtbot.keyClick(panel.edit, Qt.Key_Return)
    assert w.finder.searcher.busy
    assert panel.progress.isVisible() and panel.cancel_button.isVisible()
    qtbot.waitUntil(lambda: panel.progress.value() > 0, timeout=10000)
    # the window goes on stepping while it searches
    w.step_forward()
    qtbot.mouseClick(panel.cancel_button, Qt.LeftButton)
    qtbot.waitUntil(lambda: not w.finder.searcher.busy, timeout=10000)
    assert panel.status.text() == "Cancelled." and not panel.progress.isVisible()
    assert panel.find_button.isVisible() and w.finder.result is None


def test_a_condition_on_events_the_strategy_never_makes_is_answered_at_once(qtbot, loaded):
    """Issue 22: next fit never probes AVAIL: no walk, and the panel says why."""
    w = loaded
    type_condition(qtbot, w, "avail == 3")
    assert w.finder.result.walked == 0 and len(w.finder.matches) == 0
    assert "next-fit makes no AvailProbe event: avail holds at no step" in w.finder.panel.status.text()
    w.resize(1280, 720)
    qtbot.wait(50)
    w.grab().save("/tmp/heapscope-find-never.png")
