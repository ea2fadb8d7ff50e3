"""A lesson is loaded on a thread of its own, with progress and Cancel (issue 25):
the window goes on drawing while the lesson's strategies are replayed."""

from heapscope.lessons import load_lesson

from .test_lesson_player import TWO_STOPS, written

#: TWO_STOPS replayed through two strategies
TWO_STRATEGIES = TWO_STOPS.replace('strategy = "first-fit"', 'strategies = ["first-fit", "next-fit"]')


def test_open_file_returns_before_the_lesson_is_replayed_then_plays_it(qtbot, loaded, tmp_path,
                                                                      monkeypatch):
    from heapscope.gui.loader import ReplayJob
    w = loaded
    path = written(tmp_path, TWO_STRATEGIES)
    steps = []
    report = ReplayJob._report
    monkeypatch.setattr(ReplayJob, "_report", lambda job, done, total: (steps.append((done, total)),
                                                                        report(job, done, total)))
    w.lessons.open_file(str(path))
    # the file is read and replayed on the loader's thread: nothing changed yet
    assert w.lessons.loading and not w.lessons.player.active
    assert w.model.label != "lesson: Two stops"
    qtbot.waitUntil(lambda: not w.lessons.loading, timeout=60000)
    assert w.lessons.player.active and w.model.label == "lesson: Two stops"
    assert w.compare.active and len(w.model.shown) == 2
    # the last report: every step of both strategies (5 operations each)
    assert steps and steps[-1] == (10, 10)


def test_cancel_keeps_what_the_window_showed(qtbot, loaded, tmp_path):
    w = loaded
    before = (w.trace, w.model.position, w.model.label)
    w.lessons.open_file(str(written(tmp_path, TWO_STOPS)))
    w.lessons.loader.cancel()           # the progress dialog's Cancel
    qtbot.waitUntil(lambda: not w.lessons.loading, timeout=60000)
    assert (w.trace, w.model.position, w.model.label) == before
    assert not w.lessons.player.active and not w.lessons.dock.isVisible()
    assert "Cancelled" in w.statusBar().currentMessage()
    assert w.message_box is None


def test_the_progress_counts_every_strategys_steps(tmp_path):
    seen = []
    lesson = load_lesson(written(tmp_path, TWO_STRATEGIES), progress=lambda done, total: seen.append((done, total)))
    n = len(lesson.trace)
    assert n == 5 and seen[-1] == (2 * n, 2 * n)
    assert all(total == 2 * n for _, total in seen)
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)


def test_cancel_pressed_after_the_job_ended_but_before_its_result_arrived_keeps_the_window(
        qtbot, loaded, tmp_path):
    # A five-operation lesson is replayed before the user's Cancel is heard:
    # its result then waits in the event queue, and Cancel must still win.
    w = loaded
    before = (w.trace, w.model.position, w.model.label)
    w.lessons.open_file(str(written(tmp_path, TWO_STOPS)))
    w.lessons.loader.thread.join(60)    # the job has ended; nothing delivered yet
    w.lessons.loader.cancel()
    qtbot.waitUntil(lambda: not w.lessons.loading, timeout=60000)
    assert (w.trace, w.model.position, w.model.label) == before
    assert not w.lessons.player.active


def test_a_lessons_rows_join_a_turn_each_and_its_first_stop_waits_for_them(qtbot, loaded, tmp_path):
    # three rows made and shown in the turn the lesson arrived held the event
    # loop 120-185 ms (issue 25's stall probe): they join one per turn, and
    # the lesson's first stop shows once the last has joined
    from PySide6.QtCore import QTimer
    w = loaded
    assert w.isVisible()
    three = TWO_STOPS.replace('strategy = "first-fit"', 'strategies = ["first-fit", "next-fit", "tlsf"]')
    turn = [0]
    ticker = QTimer()
    ticker.timeout.connect(lambda: turn.__setitem__(0, turn[0] + 1))
    ticker.start(0)
    joined = []
    view = w.compare.view
    view.row_joined.connect(lambda: joined.append((turn[0], len(view.rows), w.lessons.player.active)))
    try:
        w.lessons.open_file(str(written(tmp_path, three)))
        qtbot.waitUntil(lambda: w.lessons.player.active or w.message_box is not None, timeout=60000)
    finally:
        ticker.stop()
        view.row_joined.disconnect()
    assert w.message_box is None, w.message_box.text()
    assert [n for _, n, _ in joined] == [1, 2, 3]
    assert not any(active for _, _, active in joined)          # the stop came after the rows
    turns_of = [t for t, _, _ in joined]
    assert len(set(turns_of)) == 3, turns_of
    assert len(w.model.shown) == 3 and not view.joining()
    assert [r.key[0] for r in view.shown_rows()] == ["first-fit", "next-fit", "tlsf"]
    # the lesson's keys are said last, not compare mode's words as its rows joined
    assert "Page Down for the next stop" in w.statusBar().currentMessage()
