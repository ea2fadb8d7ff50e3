"""Reading trace files in the window: a huge or endless input shows how much
is read and can be cancelled; a bad line or a limit is shown in a dialog
naming the file and the line; the trace shown before stays."""

from __future__ import annotations

import os

import pytest
from PySide6.QtWidgets import QMessageBox, QPushButton

from heapscope.gui.loader import reading_progress
from tests.test_trace_stream import FifoWriter


def shown_text(box: QMessageBox) -> str:
    return box.text() + "\n" + box.informativeText()


def test_an_endless_fifo_shows_progress_and_can_be_cancelled(qtbot, loaded, tmp_path):
    before = loaded.timeline
    loaded.seek(20)
    fifo = tmp_path / "endless.rep"
    # valid ops, a little at a time, forever: only Cancel ends this read
    with FifoWriter(fifo, b"0\n1\n10000000\n1\n", b"a 0 8\nf 0\n" * 2000, pause=0.02) as writer:
        with qtbot.waitSignal(loaded.loader.cancelled, timeout=20000):
            loaded.open_trace(str(fifo))
            qtbot.waitUntil(lambda: loaded.loader.dialog is not None
                            and loaded.loader.dialog.isVisible(), timeout=5000)
            dialog = loaded.loader.dialog
            # the label counts the megabytes read, and it grows
            qtbot.waitUntil(lambda: " MB" in dialog.labelText(), timeout=5000)
            first = writer.written
            qtbot.waitUntil(lambda: writer.written > first + 200_000, timeout=5000)
            assert dialog.labelText().startswith("Reading endless.rep: ")
            assert dialog.maximum() == 0          # a FIFO has no size: a busy bar
            dialog.grab().save(str(tmp_path / "reading-fifo.png"))
            dialog.findChild(QPushButton).click()
        qtbot.waitUntil(lambda: not loaded.busy, timeout=5000)
        # the read really stopped: the writer's next write finds no reader
        qtbot.waitUntil(lambda: writer.reader_left, timeout=5000)
    assert loaded.timeline is before and loaded.timeline.position == 20
    assert loaded.message_box is None


def test_a_large_file_shows_how_much_is_read(qtbot, loaded, tmp_path, monkeypatch):
    from heapscope.gui import loader as loader_module
    monkeypatch.setattr(loader_module, "READ_REPORT_EVERY", 0.0)
    path = tmp_path / "large.rep"
    n = 2000                     # few ops to replay, in 4 MB of text
    body = "".join(f"a {i} 8\nf {i}\n" for i in range(n))
    path.write_text(f"0\n{n}\n{2 * n}\n1\n" + "# padding\n" * 400_000 + body)
    reports = []
    original = loaded.loader._read_progress

    def spy(request, done, total):
        reports.append((done, total))
        original(request, done, total)
    monkeypatch.setattr(loaded.loader, "_read_progress", spy)
    with qtbot.waitSignal(loaded.timeline_changed, timeout=30000):
        loaded.open_trace(str(path))
    size = os.path.getsize(path)
    # every read reported, with the file's size; the last at its end
    assert len(reports) >= size // (1 << 20) and all(total == size for _, total in reports)
    assert [d for d, _ in reports] == sorted(d for d, _ in reports) and reports[-1][0] == size
    # what the dialog shows for them (the dialog itself is looked at live in
    # the FIFO test: here the replay's own progress may follow at once)
    assert reading_progress("large.rep", *reports[-1]) == (
        f"Reading large.rep: {size / 1e6:.1f} MB of {size / 1e6:.1f} MB", 1000, 1000)
    assert reading_progress("large.rep", size // 4 + 1, size)[1:] == (250, 1000)
    assert reading_progress("fifo", 2_500_000, 0) == ("Reading fifo: 2.5 MB", 0, 0)


@pytest.mark.parametrize("what", ["bad line", "dev zero", "too many ops"])
def test_a_read_error_is_shown_with_file_and_line(qtbot, loaded, tmp_path, what):
    before = loaded.timeline
    if what == "bad line":
        path = str(tmp_path / "deep.rep")
        n = 200_000
        ops = [f"a {i} 8\nf {i}" for i in range(n)]
        ops[150_000] = "a 150000 8\nf 150000 oops"      # line 4 + 300 002
        with open(path, "w") as f:
            f.write(f"0\n{n}\n{2 * n}\n1\n" + "\n".join(ops) + "\n")
        where, message = f"{path}:300006:", "wrong number of fields: 'f' takes 1 (f id), found 2"
    elif what == "dev zero":
        path = "/dev/zero"
        where, message = "/dev/zero:1:", "line longer than 1 MiB"
    else:
        path = str(tmp_path / "many.rep")
        with open(path, "w") as f:
            f.write("0\n10\n20000000\n1\n")
        where, message = f"{path}:3:", "more than 10,000,000 operations"
    with qtbot.waitSignal(loaded.load_failed, timeout=20000) as failed:
        loaded.open_trace(path)
    box = loaded.message_box
    assert isinstance(box, QMessageBox) and box.isVisible()
    assert where in shown_text(box) and message in shown_text(box)
    assert failed.args[0].startswith(where)
    box.grab().save(str(tmp_path / f"error-{what.replace(' ', '-')}.png"))
    assert loaded.timeline is before
    box.close()
