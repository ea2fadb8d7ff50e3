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
