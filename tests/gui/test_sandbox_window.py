"""The sandbox in the window, as a teacher uses it (issue 21): File > New,
operations asked for by hand, a block freed by a right click, undo, save,
the title's unsaved mark, closing with unsaved changes, a file changed on
disk reloaded on the same step."""

from __future__ import annotations

import subprocess
import sys

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import QApplication, QMessageBox, QSpinBox

from heapscope.inspection import inspect_step
from heapscope.traces import load_trace, read_rep
from heapscope.traces.trace import ALLOC, FREE

from .conftest import wait_loaded
from tests.depth import deep

STATES = {0: "used", 1: "free", 2: "meta"}


@pytest.fixture(autouse=True)
def short_typing_pause(monkeypatch):
    """The trace editor replays the text after a pause in the typing
    (gui/trace_editor.py's TYPING_PAUSE_MS, 350 ms, read when an editor is
    made): here 40 ms, so a test waiting for the replay waits that long.  A
    test's keystrokes come in one go (nothing runs between them), so the
    pause still falls after the last one, as a person's does."""
    from heapscope.gui import trace_editor
    monkeypatch.setattr(trace_editor, "TYPING_PAUSE_MS", 40)


ROWS = ["first-fit", "tlsf", "buddy"]


def settle(qtbot, ms: int = 30) -> None:
    """Let queued events and a step's animation run out."""
    qtbot.wait(ms)
    QApplication.processEvents()


def map_blocks(heap_map) -> list:
    """The blocks a heap map draws, read back from it: [addr, size, state]."""
    b = heap_map.blocks
    return [[int(a), int(s), STATES[int(st)]] for a, s, st in zip(b.addr, b.size, b.state)]


def answer_size(qtbot, w, size: int) -> None:
    """Type ``size`` into the size dialog open now and press Enter."""
    dialog = w.edits.size_dialog
    assert dialog is not None and dialog.isVisible()
    spin = dialog.findChild(QSpinBox)
    spin.selectAll()
    qtbot.keyClicks(spin, str(size))
    qtbot.keyClick(spin, Qt.Key_Return)
    settle(qtbot)


def malloc_by_key(qtbot, w, size: int) -> None:
    qtbot.keyClick(w, Qt.Key_M)
    answer_size(qtbot, w, size)
    w.animator.finish()


def right_click_block(qtbot, heap_map, address: int) -> None:
    view = heap_map.plot_widget
    pos = view.mapFromScene(heap_map.scene_pos_of(address))
    qtbot.mouseClick(view.viewport(), Qt.RightButton, pos=pos)
    settle(qtbot)


def choose(qtbot, menu, starts: str) -> None:
    """Click the menu's item whose text starts with ``starts``."""
    for act in menu.actions():
        if act.text().startswith(starts):
            qtbot.mouseClick(menu, Qt.LeftButton, pos=menu.actionGeometry(act).center())
            settle(qtbot)
            return
    raise AssertionError(f"no {starts!r} in {[a.text() for a in menu.actions()]}")


def payload_of(w, row: int, name: str) -> int:
    """The payload address of the block called ``name`` in row ``row``."""
    step = w.model.step(row)
    box = w.edits.sandbox
    for payload, ident in step.ids.items():
        if box.name_of_id(ident) == name:
            return payload
    raise AssertionError(f"{name} is not live in row {row}")


@pytest.fixture
def new_compare(qtbot, window):
    """The window in compare mode (three rows) on File > New's empty trace."""
    w = window
    w.compare.compare(ROWS)                   # no trace yet: the rows wait for one
    w.menus["file"].actions()[0].trigger()    # File > New
    settle(qtbot)
    assert w.compare.active and len(w.model.shown) == 3
    assert w.model.n == 0
    yield w
    w.edits.sandbox = None                    # nothing to ask about when the fixture closes it


def test_four_operations_by_hand_are_the_saved_file_at_every_step(qtbot, new_compare, tmp_path):
    w = new_compare
    malloc_by_key(qtbot, w, 240)              # a
    malloc_by_key(qtbot, w, 100)              # b
    assert w.model.position == 2 and w.model.n == 2
    # right-click a in the first row's map: Free this block (a)
    first = w.compare.view.rows[0].map
    right_click_block(qtbot, first, payload_of(w, 0, "a") + 8)
    menu = w.edits.block_menu
    assert menu is not None
    choose(qtbot, menu, "Free this block (a)")
    w.animator.finish()
    malloc_by_key(qtbot, w, 200)              # c: first fit puts it where a was
    assert w.model.n == 4 and w.model.position == 4
    assert list(w.model.trace) == [(ALLOC, 0, 240), (ALLOC, 1, 100), (FREE, 0, 0), (ALLOC, 2, 200)]
    assert "*" in w.windowTitle() or w.isWindowModified()
    path = tmp_path / "demo.rep"
    assert w.edits.save_to(str(path))
    assert not w.isWindowModified()
    saved = read_rep(path)
    for t in range(saved.__len__() + 1):
        w.seek(t)
        settle(qtbot, 0)
        for r, name in enumerate(ROWS):
            report = inspect_step(saved, name, t)
            assert map_blocks(w.compare.view.rows[r].map) == report["blocks"], (name, t)
    # and the command line says the same for the last step
    import json
    printed = command_line("inspect", str(path), "-s", "first-fit", "-n", "4", "-f", "json")
    assert json.loads(printed)["blocks"] == map_blocks(w.compare.view.rows[0].map)


def test_free_by_right_click_then_undo_gives_back_the_heap(qtbot, loaded):
    w = loaded
    w.seek(40)
    settle(qtbot)
    before = map_blocks(w.heap_map)
    n = w.model.n
    step = w.model.step(0)
    payload = next(iter(step.ids))            # a live block
    right_click_block(qtbot, w.heap_map, payload)
    name = w.edits.name_at(0, payload)
    choose(qtbot, w.edits.block_menu, f"Free this block ({name})")
    w.animator.finish()
    # one more operation, and the trace's own free of that block, later, is
    # now a free of a block not live: marked and skipped, so n stays
    assert w.model.position == 41 and w.model.n == n
    (skipped, why), = w.edits.sandbox.problems.items()
    assert why == f"free({name}): {name} is not live (freed before)"
    assert w.edits.sandbox.ops[skipped].kind == FREE and skipped > 41
    assert map_blocks(w.heap_map) != before
    assert w.isWindowModified()
    qtbot.keyClick(w, Qt.Key_Z, Qt.ControlModifier)
    settle(qtbot)
    assert w.model.position == 40 and w.model.n == n
    assert map_blocks(w.heap_map) == before
    assert not w.isWindowModified()
    qtbot.keyClick(w, Qt.Key_Z, Qt.ControlModifier | Qt.ShiftModifier)       # redo
    settle(qtbot)
    assert w.model.position == 41 and len(w.edits.sandbox.problems) == 1
    w.edits.sandbox = None


def test_cut_drops_what_follows_and_the_choice_is_remembered(qtbot, loaded):
    w = loaded
    w.seek(10)
    settle(qtbot)
    qtbot.keyClick(w, Qt.Key_X, Qt.ControlModifier | Qt.ShiftModifier)
    assert w.edits.act_cut.isChecked()
    malloc_by_key(qtbot, w, 64)
    assert w.model.n == 11 and w.model.position == 11
    assert str(w.settings.value("sandbox/cut_after_insert")).lower() == "true"
    w.edits.sandbox = None


def test_closing_with_unsaved_changes_asks(qtbot, new_compare):
    w = new_compare
    malloc_by_key(qtbot, w, 32)
    w.edits.sandbox = w.edits.current()      # (the fixture clears it; here it matters)
    assert w.isWindowModified()
    w.close()
    box = w.edits.close_box
    assert box is not None and w.isVisible()
    box.button(QMessageBox.Cancel).click()
    settle(qtbot)
    assert w.isVisible()
    w.close()
    w.edits.close_box.button(QMessageBox.Discard).click()
    settle(qtbot)
    assert not w.isVisible()


def test_a_file_changed_on_disk_is_read_again_on_the_same_step(qtbot, window, tmp_path):
    w = window
    path = tmp_path / "demo.rep"
    path.write_text("0 3 4 1\na 0 240\na 1 100\nf 0\na 2 200\n")
    wait_loaded(qtbot, w, lambda: w.open_trace(str(path)))
    w.seek(3)
    settle(qtbot)
    assert w.file_watch.path == str(path)
    # the teacher changes the last request in her editor and saves
    path.write_text("0 3 5 1\na 0 240\na 1 100\nf 0\na 2 300\nf 1\n")
    with qtbot.waitSignal(w.timeline_changed, timeout=10000):
        pass
    assert w.file_watch.reloads == 1
    assert w.model.position == 3 and w.model.n == 5
    assert list(w.model.trace)[3] == (ALLOC, 2, 300)
    # the window's own save is not read back
    w.edits.malloc(16)
    settle(qtbot)
    w.animator.finish()
    # the watcher sees the save and, SETTLE_MS later, looks at the file: not read back
    with qtbot.waitSignal(w.file_watch._timer.timeout, timeout=5000):
        assert w.edits.save_to(str(path))
    settle(qtbot)
    assert w.file_watch.reloads == 1 and not w.isWindowModified()
    assert len(read_rep(path)) == 6


def ten_mallocs(qtbot, w, sizes=(100, 64, 64, 100, 240, 64, 300, 500, 64, 40)):
    for size in sizes:
        w.edits.malloc(size)
        w.animator.finish()
    settle(qtbot)


def used_share(heap_map) -> float:
    """The share of the map's heap drawn as used blocks, read from the
    blocks the map draws."""
    b = heap_map.blocks
    used = 0
    for a, s, st in zip(b.addr.tolist(), b.size.tolist(), b.state.tolist()):
        if st == 0:
            used += s
    return used / b.brk


def test_changing_nalloc_in_the_panel_replays_with_it(qtbot, window):
    w = window
    qtbot.keyClick(w, Qt.Key_2, Qt.ControlModifier)       # first fit
    w.menus["file"].actions()[0].trigger()                # File > New
    ten_mallocs(qtbot, w)
    assert w.model.timeline().strategy_name == "first-fit"
    qtbot.keyClick(w, Qt.Key_K)
    assert w.panels.params_dock.isVisible()
    editor = w.panels.params_panel.editors[("first-fit", "nalloc")]
    assert editor.text() == "1024"
    editor.selectAll()
    qtbot.keyClicks(editor, "0")
    qtbot.keyClick(editor, Qt.Key_Return)
    settle(qtbot)
    # refused: nalloc takes 1..1048576; nothing replays
    assert "nalloc must be an integer in 1..1048576" in w.panels.params_panel.errors["first-fit"].text()
    assert w.model.timeline().params == {}
    editor = w.panels.params_panel.editors[("first-fit", "nalloc")]
    editor.selectAll()
    qtbot.keyClicks(editor, "1")
    qtbot.keyClick(editor, Qt.Key_Return)
    settle(qtbot)
    assert w.model.timeline().params == {"nalloc": 1}
    # the heap: K&R's morecore asks max(units, nalloc): with 1, what each malloc needs
    w.seek(10)
    report = inspect_step(w.model.trace, "first-fit", 10, {"nalloc": 1})
    assert map_blocks(w.heap_map) == report["blocks"]
    assert w.heap_map.blocks.brk < 16384
    qtbot.keyClick(w, Qt.Key_Z, Qt.ControlModifier)       # undo: back to NALLOC 1024
    settle(qtbot)
    assert w.model.timeline().params == {} and w.heap_map.blocks.brk == 16384
    w.edits.sandbox = None


def test_the_small_demo_constants_fill_the_map(qtbot, window):
    w = window
    qtbot.keyClick(w, Qt.Key_2, Qt.ControlModifier)        # first fit
    w.menus["file"].actions()[0].trigger()
    ten_mallocs(qtbot, w)
    panel = w.panels.params_panel
    assert panel.offer() and panel.offer_label.isVisibleTo(panel)
    assert used_share(w.heap_map) < 0.15                   # 1.7 KiB used of 16 KiB
    qtbot.keyClick(w, Qt.Key_D, Qt.ControlModifier)
    settle(qtbot)
    assert w.model.timeline().params == {"nalloc": 64}
    assert "first-fit: nalloc 1024 → 64" in panel.note.text()
    assert used_share(w.heap_map) > 0.8                    # 1744 B of 2048
    assert not panel.offer()
    w.edits.sandbox = None


def test_a_step_of_a_trace_written_by_hand_names_its_block(qtbot, window):
    w = window
    w.menus["file"].actions()[0].trigger()
    w.edits.malloc(240)
    w.edits.malloc(100)
    w.animator.finish()
    settle(qtbot)
    assert w.model.step(0).describe().startswith("step 2: malloc(100) for b (id 1) ->")


def test_a_long_replay_after_an_edit_shows_progress_and_can_be_cancelled(qtbot, window):
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QProgressDialog
    w = window
    trace = load_trace("vo1989:steps=12000")             # 24 000 operations
    wait_loaded(qtbot, w, lambda: w.load_trace(trace))
    w.seek(5)
    shown = w.model.trace
    seen = []

    def cancel_when_shown():
        for dialog in w.findChildren(QProgressDialog):
            if dialog.isVisible():
                seen.append(dialog.labelText())
                dialog.cancel()

    poll = QTimer()
    poll.timeout.connect(cancel_when_shown)
    poll.start(5)
    try:
        malloc_by_key(qtbot, w, 64)
    finally:
        poll.stop()
    assert seen == ["Replaying the edited trace…"]
    assert w.model.trace is shown and w.model.position == 5
    assert not w.edits.sandbox.can_undo and not w.isWindowModified()


def cancel_inside_report(monkeypatch, at):
    """Cancel the edit's replay from inside the progress dialog's own
    setValue(): before the replay's report number ``at`` (1-based; "last":
    the build's final report, made once every step is replayed), a call to
    the dialog's cancel() is queued, which the nested event processing of
    that report's setValue() runs (a window-modal QProgressDialog processes
    events there), as a click on Cancel at that moment would.  Returns the
    reports seen, (done, total)."""
    from PySide6.QtCore import QTimer
    from heapscope.gui.sandbox_edits import ReplayProgress
    original = ReplayProgress.report
    reports = []

    def report(progress, done, total):
        reports.append((done, total))
        if at == len(reports) or (at == "last" and done >= total):
            QTimer.singleShot(0, lambda: progress.dialog.cancel())
        original(progress, done, total)
    monkeypatch.setattr(ReplayProgress, "report", report)
    return reports


def malloc_answered_by_enter(qtbot, w, size: int) -> list:
    """M, then ``size`` and Enter in the size dialog; whether the dialog
    was alive after its answer had been handled (a slot connected after the
    window's runs then), as [alive] (empty: that slot never ran, the dialog
    had been deleted meanwhile)."""
    qtbot.keyClick(w, Qt.Key_M)
    dialog = w.edits.size_dialog
    gone, alive = [], []
    dialog.destroyed.connect(lambda *_: gone.append(True))
    dialog.intValueSelected.connect(lambda _v: alive.append(not gone))
    answer_size(qtbot, w, size)
    w.animator.finish()
    assert gone == [True]           # deleted once closed (WA_DeleteOnClose), not kept
    return alive


def free_chosen_in_menu(qtbot, w, payload: int) -> list:
    """Free this block chosen in the block menu of the used block at
    ``payload``; as :func:`malloc_answered_by_enter`, whether the menu was
    alive after the item's click had been handled: [alive]."""
    from PySide6.QtCore import QPoint
    name = w.edits.name_at(0, payload)
    menu = w.edits.open_block_menu(0, payload, w.mapToGlobal(QPoint(80, 80)))
    settle(qtbot)
    item = next(a for a in menu.actions() if a.text() == f"Free this block ({name})")
    gone, alive = [], []
    menu.destroyed.connect(lambda *_: gone.append(True))
    item.triggered.connect(lambda *_: alive.append(not gone))
    choose(qtbot, menu, f"Free this block ({name})")
    w.animator.finish()
    assert gone == [True]
    return alive


def test_cancel_at_any_report_of_a_long_replay_changes_nothing(qtbot, window, monkeypatch):
    """Cancel reaching the replay from inside its progress dialog's
    setValue() (its nested event processing) at the first report that
    processes events, at a later one, and at the final report (every step
    replayed already): each time the edit is taken back, the dialog is
    gone, the window is where it was, and the size dialog that asked was
    never deleted under its own answer (its replay used to run inside
    QInputDialog::done(), whose nested event processing carried out the
    dialog's deferred delete: done() went on in freed memory, a rare
    segfault in keyClick).  The same for Free this block in the block menu
    (deleted inside its own click before).  Then an edit replayed to its
    end is shown, and another edit asked meanwhile (from the replay's
    nested event processing: a timer) is refused, not replayed inside it."""
    from PySide6.QtWidgets import QProgressDialog
    w = window
    trace = load_trace("vo1989:steps=12000")             # 24 000 operations
    wait_loaded(qtbot, w, lambda: w.load_trace(trace))
    w.seek(5)
    shown, n = w.model.trace, w.model.n
    blocks = map_blocks(w.heap_map)
    for at in (2, 4, "last"):
        with monkeypatch.context() as m:
            reports = cancel_inside_report(m, at)
            alive = malloc_answered_by_enter(qtbot, w, 64)
        assert alive == [True], at
        if at == "last":            # every step was replayed, and Cancel still takes it back
            assert len(reports) > 4 and reports[-1][0] == reports[-1][1]
        else:                       # the replay stopped at once
            assert len(reports) == at
        assert w.model.trace is shown and w.model.n == n and w.model.position == 5, at
        assert map_blocks(w.heap_map) == blocks, at
        assert not w.edits.sandbox.can_undo and not w.isWindowModified(), at
        assert not [d for d in w.findChildren(QProgressDialog) if d.isVisible()], at
        assert "cancelled" in w.statusBar().currentMessage(), at
    with monkeypatch.context() as m:                     # Free this block, from its menu
        reports = cancel_inside_report(m, 2)
        alive = free_chosen_in_menu(qtbot, w, next(iter(w.model.step(0).ids)))
    assert alive == [True] and len(reports) == 2
    assert w.model.trace is shown and w.model.position == 5 and map_blocks(w.heap_map) == blocks
    assert not w.edits.sandbox.can_undo and not w.isWindowModified()
    nested, asked = [], []      # an edit asked from the replay's nested event processing
    with monkeypatch.context() as m:
        from PySide6.QtCore import QTimer
        from heapscope.gui.sandbox_edits import ReplayProgress
        original = ReplayProgress.report

        def report(progress, done, total):
            if not asked:
                asked.append(done)
                QTimer.singleShot(0, lambda: nested.append(w.edits.edit(
                    lambda box, step: box.malloc_after(step, 32, w.edits.follow))))
            original(progress, done, total)
        m.setattr(ReplayProgress, "report", report)
        alive = malloc_answered_by_enter(qtbot, w, 64)   # no Cancel: replayed to its end
    assert alive == [True]
    assert nested == [None] and "Wait until" in w.statusBar().currentMessage()   # refused
    assert w.model.n == n + 1 and w.model.position == 6 and w.edits.sandbox.can_undo
    assert list(w.model.trace)[5][0] == ALLOC and w.isWindowModified()
    assert not [d for d in w.findChildren(QProgressDialog) if d.isVisible()]


def test_a_cancelled_replays_progress_shows_no_more_and_stays_cancelled(qtbot):
    """Cancel clicked in the last report of one row's build (that build
    ends: it looks at cancel() after each report but the last): the next
    row's first report calls no setValue(), which on the cancelled (reset)
    dialog would show it again; and the replay stays cancelled once the
    dialog is reset (QProgressDialog.reset() forgets wasCanceled)."""
    from PySide6.QtWidgets import QProgressDialog
    from heapscope.gui.sandbox_edits import ReplayProgress
    dialog = QProgressDialog("Replaying the edited trace…", "Cancel", 0, 1000)
    qtbot.addWidget(dialog)
    dialog.setMinimumDuration(0)
    dialog.setAutoClose(False)
    dialog.setAutoReset(False)
    progress = ReplayProgress(lambda: dialog, 2)
    progress.report(4096, 8192)
    progress.report(8192, 8192)             # the first row built
    assert dialog.isVisible() and dialog.value() == 500 and not progress.cancelled()
    dialog.cancel()
    progress.report(4096, 8192)             # the second row's build began
    assert progress.cancelled() and not dialog.isVisible() and dialog.value() == -1
    assert progress.close() and progress.cancelled() and not dialog.isVisible()


def open_editor(qtbot, w):
    """View > Trace Editor, and the keys to its text."""
    view = w.menus["view"]
    next(a for a in view.actions() if a.text() == "&Trace Editor").trigger()
    editor = w.panels.editor
    assert editor.isVisible()
    editor.text.setFocus()
    return editor


def type_lines(qtbot, editor, lines) -> None:
    for line in lines:
        qtbot.keyClicks(editor.text, line)
        qtbot.keyClick(editor.text, Qt.Key_Return)


def command_line(*args) -> str:
    """What ``heapscope ARGS`` prints (exit status 0): in this process in the
    quick suite (heapscope.cli.main, the command's own code), in a new one
    (``python -m heapscope``) in the deep suite -- a process is most of a
    second of CPU."""
    if not deep():
        import contextlib
        import io
        from heapscope.cli import main
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            assert main(list(args)) == 0
        return printed.getvalue()
    out = subprocess.run([sys.executable, "-m", "heapscope", *args], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout


def compare_json(path) -> list:
    """`heapscope compare -f json` of a file, without its timings and name."""
    import json
    rows = json.loads(command_line("compare", str(path), "-f", "json",
                                   "-s", "first-fit", "-s", "tlsf", "-s", "buddy"))
    rows = rows["rows"] if isinstance(rows, dict) and "rows" in rows else rows
    return [{k: v for k, v in row.items() if not k.endswith("_s") and k not in ("trace", "cpu_s")}
            for row in rows]


DEMO = ["# a hole, and a request that fits in it", "a = malloc(240)", "b = calloc(4, 25)",
        "free(a)", "c = malloc(200)"]


def test_four_lines_typed_in_the_editor_are_the_saved_file_at_every_step(qtbot, new_compare, tmp_path):
    w = new_compare
    editor = open_editor(qtbot, w)
    type_lines(qtbot, editor, DEMO)
    qtbot.waitUntil(lambda: w.model.n == 4, timeout=5000)
    assert w.model.position == 0                  # the view stays on its step
    assert editor.problems == {}
    assert list(w.model.trace) == [(ALLOC, 0, 240), (ALLOC, 1, 100), (FREE, 0, 0), (ALLOC, 2, 200)]
    heap, rep = tmp_path / "demo.heap", tmp_path / "demo.rep"
    assert w.edits.save_to(str(heap)) and w.edits.save_to(str(rep))
    # the readable form as typed: the names, the comment, calloc
    assert heap.read_text().splitlines() == DEMO
    saved = load_trace(str(heap))
    for t in range(5):
        w.seek(t)
        settle(qtbot, 0)
        for r, name in enumerate(ROWS):
            report = inspect_step(saved, name, t)
            assert map_blocks(w.compare.view.rows[r].map) == report["blocks"], (name, t)
    # the readable form and the .rep it saves: the same compare
    rows = compare_json(heap)
    assert len(rows) == 3 and rows == compare_json(rep)


def test_a_bad_line_shows_its_message_and_keeps_the_last_good_heap(qtbot, window):
    w = window
    w.menus["file"].actions()[0].trigger()
    editor = open_editor(qtbot, w)
    type_lines(qtbot, editor, ["a = malloc(240)", "b = malloc(100)"])
    qtbot.waitUntil(lambda: w.model.n == 2, timeout=5000)
    w.seek(2)
    settle(qtbot)
    good = map_blocks(w.heap_map)
    # a free of a name never allocated, and a line that is no operation
    editor.text.moveCursor(QTextCursor.End)
    type_lines(qtbot, editor, ["free(z)", "c = mallok(30)"])
    qtbot.waitUntil(lambda: len(editor.problems) == 2, timeout=5000)
    settle(qtbot, 50)
    assert editor.problem_lines() == [2, 3]
    assert "free of z, which is not live" in editor.problems[2]
    assert w.model.n == 2 and map_blocks(w.heap_map) == good
    cursor = editor.text.textCursor()
    cursor.setPosition(editor.text.document().findBlockByNumber(2).position())
    editor.text.setTextCursor(cursor)
    assert editor.message.text().startswith("line 3: free of z, which is not live")
    # fixed, the line replays
    cursor.select(QTextCursor.LineUnderCursor)
    editor.text.setTextCursor(cursor)
    qtbot.keyClicks(editor.text, "free(a)")
    qtbot.waitUntil(lambda: len(editor.problems) == 1, timeout=5000)
    assert w.model.n == 3
    w.edits.sandbox = None


def test_an_edit_made_elsewhere_keeps_the_editors_comments(qtbot, window):
    w = window
    w.menus["file"].actions()[0].trigger()
    editor = open_editor(qtbot, w)
    type_lines(qtbot, editor, DEMO)
    qtbot.waitUntil(lambda: w.model.n == 4, timeout=5000)
    w.seek(2)
    w.edits.malloc(64)                        # Malloc… after step 2
    w.animator.finish()
    settle(qtbot)
    lines = editor.lines()
    assert lines[:4] == DEMO[:3] + ["d = malloc(64)"]
    assert lines[0].startswith("# a hole")   # the comment stays
    assert w.model.position == 3 and w.model.n == 5
    qtbot.keyClick(w, Qt.Key_Z, Qt.ControlModifier)
    settle(qtbot)
    assert editor.lines()[:len(DEMO)] == DEMO and w.model.position == 2
    w.edits.sandbox = None


def test_predict_mode_asks_on_a_trace_written_by_hand(qtbot, window):
    w = window
    w.menus["file"].actions()[0].trigger()
    for size in (240, 100):
        w.edits.malloc(size)
        w.animator.finish()
    w.seek(0)
    settle(qtbot)
    w.set_predict(True)
    qtbot.keyClick(w, Qt.Key_Right)
    settle(qtbot)
    # it stops before the first malloc, the one written here
    assert w.predict.session(0).pending == 1 and w.model.position == 0
    w.set_predict(False)
    w.edits.sandbox = None


def test_skipped_lines_survive_a_heap_save_and_a_rep_save_names_them(qtbot, window, tmp_path):
    """Issue 21: Save dropped the lines the replay skips.  In a .heap they
    stay (as '#! ' comments) and reopened they are underlined again; a .rep
    cannot hold them, and a message says which lines it left out."""
    w = window
    w.menus["file"].actions()[0].trigger()
    editor = open_editor(qtbot, w)
    typed = ["# a demo", "a = malloc(240)", "free(zz)", "b = mallo(30)", "b = malloc(100)"]
    type_lines(qtbot, editor, typed)
    qtbot.waitUntil(lambda: w.model.n == 2 and len(editor.problems) == 2, timeout=5000)
    heap = tmp_path / "demo.heap"
    assert w.edits.save_to(str(heap))
    assert heap.read_text().splitlines() == ["# a demo", "a = malloc(240)", "#! free(zz)",
                                             "#! b = mallo(30)", "b = malloc(100)"]
    assert "skips kept" in w.statusBar().currentMessage()
    rep = tmp_path / "demo.rep"
    assert w.edits.save_to(str(rep))
    note = w.edits.save_note
    assert note is not None and note.isVisible()
    assert "2 lines" in note.text()
    details = note.detailedText().splitlines()
    assert details[0].startswith("line 3: free(zz)") and details[1].startswith("line 4: b = mallo(30)")
    note.close()
    # reopened, the skipped lines are lines again, underlined
    w.edits.sandbox = None
    wait_loaded(qtbot, w, lambda: w.open_trace(str(heap)))
    settle(qtbot)
    assert editor.lines()[:5] == typed
    assert editor.problem_lines() == [2, 3]
    assert w.model.n == 2
