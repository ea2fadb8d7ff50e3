"""The window opens ltrace output (chosen by content) and the bundled real
programs from File > Open Example."""

import os

from PySide6.QtWidgets import QFileDialog, QMessageBox

from heapscope.traces.bundled import examples

from .conftest import wait_loaded

LTRACE = """\
[pid 4100] prog->malloc(16)                = 0x5000
[pid 4100] prog->calloc(4, 8)              = 0x5020
[pid 4101] prog->malloc(100 <unfinished ...>
[pid 4100] prog->free(0x5000 <unfinished ...>
[pid 4101] <... malloc resumed> )          = 0x5000
[pid 4100] <... free resumed> )            = <void>
[pid 4100] +++ exited (status 0) +++
"""


def file_action(window, text):
    for act in window.menus["file"].actions():
        if act.text().replace("&", "").startswith(text):
            return act
    raise AssertionError(f"no {text!r} in the File menu")


def test_file_open_reads_ltrace_output(qtbot, window, tmp_path, monkeypatch):
    path = tmp_path / "calls.txt"
    path.write_text(LTRACE)
    asked = []

    def fake_dialog(parent, caption, folder, filters):
        asked.append(filters)
        return str(path), filters.split(";;")[0]

    monkeypatch.setattr(QFileDialog, "getOpenFileName", staticmethod(fake_dialog))
    wait_loaded(qtbot, window, file_action(window, "Open Trace").trigger)
    assert "*.txt" in asked[0]
    # malloc, calloc, free, malloc, then the two blocks still live freed at the end
    assert window.timeline.n == 6
    assert window.trace_source == str(path)
    window.seek(3)
    assert "line 4" in window.bar.description.text().replace("\xa0", " ")     # the free, where it was called


def test_a_bad_ltrace_line_is_reported_with_file_and_line(qtbot, window, tmp_path):
    path = tmp_path / "bad.txt"
    path.write_text(LTRACE + "[pid 4100] prog->free(0x5020, 3) = <void>\n")
    with qtbot.waitSignal(window.load_failed, timeout=10000) as failed:
        window.open_trace(str(path))
    assert failed.args[0].startswith(f"{path}:8: free takes 1 argument")
    box = window.message_box
    assert isinstance(box, QMessageBox) and f"{path}:8:" in box.text() + box.informativeText()
    box.close()


def test_open_example_lists_the_bundled_traces_and_opens_one(qtbot, window):
    menu = window.examples_menu
    labels = [a.text() for a in menu.actions()]
    assert labels == [ex.label for ex in examples()]
    assert len(labels) >= 4
    perl = next(ex for ex in examples() if ex.name == "perl-words")
    act = next(a for a in menu.actions() if a.text() == perl.label)
    assert "heapscope record" in act.toolTip()
    wait_loaded(qtbot, window, act.trigger)
    assert window.timeline.n == perl.ops
    assert os.path.basename(window.trace_source) == "perl-words.rep.gz"
    window.seek(window.timeline.n // 2)
    window.grab().save("/tmp/heapscope-perl-example.png")
