"""``heapscope open`` and File > Open read the readable trace form (issue 21)
by its content, whatever the file is called; a bad line is a dialog naming
the file and line, and the trace shown stays."""

from heapscope.traces import parse_rep

from .conftest import wait_loaded

LESSON = "# a hole\na = malloc(240)\nb = calloc(4, 60)\nfree(a)\nc = malloc(200)\n"
# the same, worked by hand as a .rep: a = 0, b = 1, c = 2
LESSON_REP = "0\n3\n4\n1\na 0 240\na 1 240\nf 0\na 2 200\n"


def test_the_window_opens_a_readable_trace_by_its_content(qtbot, window, tmp_path):
    path = tmp_path / "lesson.txt"
    path.write_text(LESSON)
    wait_loaded(qtbot, window, lambda: window.open_trace(str(path)))
    assert window.timeline.n == 4
    assert list(window.timeline.trace) == list(parse_rep(LESSON_REP))
    assert "lesson.txt" in window.windowTitle()
    window.seek(3)
    said = window.bar.description.text()
    # step 3 is free(a), on the file's line 4 (line 1 is a comment)
    assert said.startswith("step 3: free(") and "for a (id 0)" in said
    assert "lesson.txt\xa0line\xa04" in said
    # the hover line names a used block by the name the file gave it (issue 21)
    window.seek(1)
    step = window.model.step(0)
    payload = next(p for p, ident in step.ids.items() if ident == 0)
    assert "a (trace id 0)" in step.describe_address(payload)


def test_a_bad_readable_line_is_a_dialog_naming_it_and_the_trace_stays(qtbot, window, tmp_path):
    good = tmp_path / "good.heap"
    good.write_text(LESSON)
    wait_loaded(qtbot, window, lambda: window.open_trace(str(good)))
    shown = window.timeline
    bad = tmp_path / "bad.heap"
    bad.write_text(LESSON + "free(a)\n")
    with qtbot.waitSignal(window.load_failed, timeout=10000):
        window.open_trace(str(bad))
    box = window.message_box
    said = box.text() + "\n" + box.informativeText()
    assert f"{bad}:6:" in said and "free of a, which is not live (it was freed at line 4)" in said
    assert window.timeline is shown
    box.close()


def test_file_open_lists_heap_files(qtbot, window, tmp_path, monkeypatch):
    from PySide6.QtWidgets import QFileDialog
    path = tmp_path / "lesson.heap"
    path.write_text(LESSON)
    asked = []

    def fake_dialog(parent, caption, folder, filters):
        asked.append(filters)
        return str(path), filters.split(";;")[0]

    monkeypatch.setattr(QFileDialog, "getOpenFileName", staticmethod(fake_dialog))
    wait_loaded(qtbot, window, window.act_open.trigger)
    assert "*.heap" in asked[0].split(";;")[0]       # the first filter, the one shown
    assert window.timeline.n == 4
