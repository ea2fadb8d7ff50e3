"""A strategy of your own in the window: in the picker and the Strategy menu,
replayed like a built-in; a broken one stops the replay before its mistake and
says so; ``heapscope open ... --allocator F:C --step N`` opens there."""

import pathlib

import pytest
from PySide6.QtWidgets import QMessageBox

from heapscope.allocators import plugins

from .conftest import wait_loaded, window_from_command_line

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


@pytest.fixture
def user_strategies():
    loaded = [plugins.load_file(f"{EXAMPLES / 'segfit.py'}:SegFit"),
              plugins.load_file(f"{EXAMPLES / 'broken.py'}:Broken")]
    yield loaded
    for cls in loaded:
        plugins.forget(cls.name)


@pytest.fixture
def user_window(user_strategies, window):
    # the window fixture is built after the strategies are registered
    return window


def test_a_user_strategy_is_in_the_picker_and_the_menu(qtbot, user_window, small_trace_path):
    w = user_window
    names = [w.strategy_box.itemData(i) for i in range(w.strategy_box.count())]
    assert names[-2:] == ["segfit", "broken"]
    assert "segfit — Segregated fit: size-class lists, first fit, boundary tags" in \
        [a.text() for a in w.menus["strategy"].actions()]
    wait_loaded(qtbot, w, lambda: w.open_trace(small_trace_path))
    i = w.strategy_box.findData("segfit")
    wait_loaded(qtbot, w, lambda: w.strategy_box.activated.emit(i))
    assert w.timeline.strategy_name == "segfit" and w.strategy_box.currentData() == "segfit"
    assert w.timeline.fault is None and w.message_box is None
    w.seek(300)
    assert w.bar.description.text().startswith("step 300: ")
    # its own structure, in the generic lists view, and its own words in the explain panel
    structure = w.timeline.strategy.structure()
    drawn = w.structure_panel.view.drawn()
    labels = [entry["label"] for entry in drawn["lists"]]
    assert labels and all(label.startswith("class ") for label in labels)
    shown = {a for entry in drawn["lists"] for a in entry["blocks"]}
    assert shown and shown <= set(structure["sizes"])
    texts = w.explain_panel.texts()
    assert texts[0].startswith("1. released block 0x")
    assert any(" on class " in text for text in texts), texts
    # the map draws segfit's own walk
    walk = w.timeline.strategy.walk_tuples()
    assert list(w.heap_map.blocks.addr) == [b[0] for b in walk]
    assert list(w.heap_map.blocks.size) == [b[1] for b in walk]
    qtbot.wait(100)
    w.grab().save("/tmp/heapscope-user-strategy.png")


def test_a_broken_user_strategy_stops_the_replay_before_its_mistake(qtbot, user_window):
    w = user_window
    w.set_strategy("broken")
    wait_loaded(qtbot, w, lambda: w.load_spec("default", position=124))
    assert w.timeline.n == 123 and w.timeline.position == 123
    box = w.message_box
    assert box is not None and box.icon() == QMessageBox.Warning
    assert box.windowTitle() == "broken stopped at step 124"
    assert box.text().startswith("The replay stopped at step 124 (malloc(65)): in Broken._malloc (")
    assert box.text().endswith("examples/broken.py:26).")
    assert "which is already the payload of the live block at 0x10b8" in box.informativeText()
    assert "The heap shown is the one after step 123" in box.informativeText()
    box.grab().save("/tmp/heapscope-user-fault.png")
    box.close()
    # stepping and seeking within the steps kept still work
    w.seek(60)
    w.step_forward()
    assert w.timeline.position == 61


def test_open_with_allocator_strategy_and_step(qtbot, monkeypatch, small_trace_path):
    try:
        # one --allocator and no --strategy: the window opens on it
        w = window_from_command_line(qtbot, monkeypatch, [
            "open", small_trace_path, "--allocator", f"{EXAMPLES / 'segfit.py'}:SegFit",
            "--step", "250", "-P", "segfit.classes=4"])
        # built in a worker process now (a forkserver started first): slower on a busy machine
        qtbot.waitUntil(lambda: w.timeline is not None, timeout=30000)
        assert w.timeline.strategy_name == "segfit" and w.timeline.position == 250
        assert w.timeline.strategy.classes == 4
        w.close()
    finally:
        plugins.forget("segfit")
