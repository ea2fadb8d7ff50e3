"""Find over a strategy of your own runs in a worker process (issue 22):
a plugin that loops while a step is explained is stopped by Cancel at once
and by the time limit, and the window stays responsive meanwhile; a plugin
that behaves finds what a walk of its own finds."""

from __future__ import annotations

import textwrap
import time

import pytest
from PySide6.QtCore import Qt, QTimer

from heapscope.allocators import plugins
from heapscope.allocators.conditions import known_events, parse
from heapscope.allocators.find import find_steps

from .conftest import wait_loaded

#: a bump allocator that loops once a malloc of step 50 or more is replayed
#: with its events (a Find walk, a step shown), but not in its build (events
#: off; the workload's last step, replayed with them, is a free)
LOOPY = textwrap.dedent('''
    from heapscope import FREE, USED, UserStrategy, align_up


    class Loopy(UserStrategy):
        """Bump allocator that loops when a step past 50 is explained"""

        def __init__(self, **common):
            super().__init__(**common)
            self.blocks = []
            self.entry = {}

        def _malloc(self, size):
            while self.record and 50 <= self._step:
                pass
            need = align_up(max(size, 1), self.align)
            addr = self._take_core(need)
            if addr is None:
                return None
            self._note_alloc(addr, addr, need, size, 0)
            self.entry[addr] = [addr, need, addr]
            self.blocks.append(self.entry[addr])
            return addr

        def _free(self, payload):
            self._note_free(payload)
            self.entry.pop(payload)[2] = None

        def _blocks(self):
            for addr, size, payload in self.blocks:
                yield addr, size, (FREE if payload is None else USED), payload
''')


def plugin(tmp_path, source: str, name: str):
    path = tmp_path / f"{name.lower()}.py"
    path.write_text(source)
    return plugins.load_file(f"{path}:{name}")


@pytest.fixture
def loopy(tmp_path):
    """Registered before the window is made (its picker lists the strategies then)."""
    cls = plugin(tmp_path, LOOPY, "Loopy")
    yield cls
    plugins.forget(cls.name)


@pytest.fixture
def tame(tmp_path):
    cls = plugin(tmp_path, LOOPY.replace("50 <= self._step", "False"), "Loopy")
    yield cls
    plugins.forget(cls.name)


@pytest.fixture
def loopy_window(qtbot, loopy, window, small_trace_path):
    w = window
    w.set_strategy("loopy")
    wait_loaded(qtbot, w, lambda: w.open_trace(small_trace_path))
    assert w.timeline.strategy_name == "loopy" and w.timeline.fault is None
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
    assert said.startswith("The search stopped: no answer in 1 s at step 50, in Loopy._malloc (")
    w.grab().save("/tmp/heapscope-find-stopped.png")


def test_a_plugin_that_behaves_finds_what_a_walk_of_its_own_finds(qtbot, tame, window,
                                                                   small_trace_path):
    w = window
    w.set_strategy("loopy")
    wait_loaded(qtbot, w, lambda: w.open_trace(small_trace_path))
    start_find(qtbot, w, "free and merged or grew")
    qtbot.waitUntil(lambda: not w.finder.searcher.busy, timeout=20000)
    expected = find_steps(w.timeline, parse("free and merged or grew", known_events(["loopy"])))
    assert list(w.finder.matches) == list(expected.steps) and len(expected.steps)
    assert w.finder.panel.texts()[0].startswith(f"step {expected.steps[0]}: ")
