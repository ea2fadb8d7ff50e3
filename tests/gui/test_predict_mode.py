"""Predict mode in the window (gui/predict_mode.py, gui/predict_bar.py):
playback stops before each malloc, a click on the map answers, the step
plays and the answer is marked right or wrong with the policy's reason, and
the score counts -- for next fit and for TLSF."""

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from heapscope.allocators.predict import GROW, reveal
from heapscope.gui.step_animator import MAX_ANIMATED_SPEED
from heapscope.traces.trace import ALLOC

from .conftest import SMALL_STEPS, wait_loaded


def settle(qtbot):
    QApplication.processEvents()
    qtbot.wait(10)


def answer_of(w, t):
    """The policy's choice at malloc step t, worked out apart from the window."""
    tl = w.timeline
    before = tl.state_at(t - 1)
    pos = tl.position
    tl.seek(t)
    record = tl.last_record
    series = tl.series
    verdict = reveal(t, tl.op(t)[2], before, record, tl.strategy_name,
                     int(series.heap[t - 2]) if t > 1 else 0, int(series.heap[t - 1]))
    tl.seek(pos)
    return verdict, before


def next_malloc(w, position):
    t = position + 1
    while w.timeline.op(t)[0] != ALLOC:
        t += 1
    return t


def click_block(qtbot, w, addr, size):
    """A real mouse click in the middle of a block of the map."""
    hm = w.heap_map
    middle = addr + size // 2
    where = hm.plot_widget.mapFromScene(hm.scene_pos_of(middle))
    qtbot.mouseClick(hm.plot_widget.viewport(), Qt.LeftButton, pos=where)
    settle(qtbot)


def ask_next(qtbot, w):
    """Step forward until predict mode stops before a malloc; its step."""
    qtbot.keyClick(w, Qt.Key_Right)
    settle(qtbot)
    s = w.predict.session(0)
    while s.pending is None:
        qtbot.keyClick(w, Qt.Key_Right)
        settle(qtbot)
    assert w.model.position == s.pending - 1
    return s.pending


@pytest.fixture(params=["next-fit", "tlsf"])
def predicting(request, qtbot, loaded):
    w = loaded
    if request.param != "next-fit":
        wait_loaded(qtbot, w, lambda: w.set_strategy(request.param))
    w.seek(260)
    qtbot.keyClick(w, Qt.Key_P)
    settle(qtbot)
    assert w.predict.active and w.act_predict.isChecked() and w.predict_bar.isVisible()
    return w


def question_with_a_block_and_another(qtbot, w):
    """Ask until a malloc takes an existing block and another free block is on the map."""
    while True:
        t = ask_next(qtbot, w)
        verdict, before = answer_of(w, t)
        if verdict.answer != GROW:
            free = {b[0]: b[1] for b in before.blocks if b[2] == "free"}
            others = [a for a in free if a not in verdict.answers and free[a] > 8]
            if others:
                return t, verdict, free, others
        qtbot.keyClick(w, Qt.Key_A)           # show the answer, unscored, and go on
        settle(qtbot)


def test_a_right_click_scores_right_and_a_wrong_one_wrong(qtbot, predicting):
    w = predicting
    s = w.predict.session(0)
    name = w.strategy_name
    t, verdict, free, others = question_with_a_block_and_another(qtbot, w)
    assert f"malloc({w.timeline.op(t)[2]:,})" in w.predict_bar.question.full
    assert name in w.predict_bar.question.full
    skipped = s.skipped
    click_block(qtbot, w, verdict.answer, free[verdict.answer])
    assert w.model.position == t                    # the step played
    assert s.pending is None and s.last.correct and s.last.guess == verdict.answer
    assert (s.right, s.answered) == (1, 1)
    assert "✓ Right" in w.predict_bar.verdict.full
    assert f"1 of 1 right" in w.predict_bar.score.text()
    assert w.model.selection == verdict.answer      # the answer stays marked on the map

    t2, verdict2, free2, others2 = question_with_a_block_and_another(qtbot, w)
    wrong = others2[0]
    click_block(qtbot, w, wrong, free2[wrong])
    assert w.model.position == t2
    assert not s.last.correct and s.last.guess == wrong and s.last.answer == verdict2.answer
    assert (s.right, s.answered) == (1, 2)
    text = w.predict_bar.verdict.full
    assert "✗ Wrong" in text and f"0x{wrong:x}" in text
    # the reason is the policy's: next fit speaks of the rover or the search, TLSF of its classes
    word = {"next-fit": "next fit", "tlsf": "class ("}[name]
    assert word in text.lower()
    assert "1 of 2 right" in w.predict_bar.score.text()
    assert s.skipped >= skipped


def marked(hm) -> bool:
    """The map draws some mark of its step."""
    m = hm.marks
    return bool(m.visits or m.placed or m.released or m.cuts or m.grown or m.failed)


def test_an_open_question_shows_the_heap_without_the_last_steps_marks(qtbot, predicting):
    from heapscope.gui.step_marks import step_marks
    w = predicting
    hm, panel = w.heap_map, w.structure_panel
    while True:
        t = ask_next(qtbot, w)
        if w.timeline.op(t - 1)[0] == ALLOC and step_marks(w.model.step().record).visits:
            break                      # the step shown (t - 1) searched: it has numbers to hide
        qtbot.keyClick(w, Qt.Key_A)
        settle(qtbot)
    settle(qtbot)
    # the heap before the malloc, with none of step t - 1's search, outlines or numbers
    assert hm.quiet and panel.quiet and not marked(hm)
    assert not any(lab.isVisible() for lab in hm._order_labels) and not hm.skip_label.isVisible()
    assert hm.placed_item.path().isEmpty() and hm.searched_item.path().isEmpty()
    # ... but with the policy's pointers (next fit's rover: where its search will start)
    search = [p for p in hm.heap.pointers if p.addr is not None and p.addr >= 0 and p.role != "marker"]
    assert len(hm.pointer_item.getData()[0]) == len(search)
    if w.strategy_name == "next-fit":
        assert search and panel.view.drawn()["numbers"] == []
    qtbot.keyClick(w, Qt.Key_A)              # the answer: the step plays, with its marks
    settle(qtbot)
    assert w.model.position == t and not hm.quiet and not panel.quiet
    assert marked(hm) and hm.marks.placed
    if w.strategy_name == "next-fit":
        assert panel.view.drawn()["numbers"]


def test_space_plays_to_the_next_malloc_and_stops_there(qtbot, predicting):
    w = predicting
    start = w.model.position
    t = next_malloc(w, start)
    w.player.set_speed(1000)
    qtbot.keyClick(w, Qt.Key_Space)
    qtbot.waitUntil(lambda: w.predict.pending is not None, timeout=3000)
    assert not w.player.playing
    assert w.predict.pending == t and w.model.position == t - 1


def test_grow_answer_and_clicks_that_are_no_answer(qtbot, predicting):
    w = predicting
    s = w.predict.session(0)
    t = ask_next(qtbot, w)
    verdict, before = answer_of(w, t)
    used = next(b for b in before.blocks if b[2] == "used" and b[1] > 8)
    click_block(qtbot, w, used[0], used[1])
    assert s.pending == t and w.model.position == t - 1       # still asking
    assert "in use" in w.predict_bar.verdict.full
    qtbot.keyClick(w, Qt.Key_G)
    settle(qtbot)
    assert s.pending is None and s.last.guess == GROW
    assert s.last.correct == (GROW in verdict.answers)
    assert s.answered == 1


def test_show_the_answer_is_not_scored_and_a_jump_closes_the_question(qtbot, predicting):
    w = predicting
    s = w.predict.session(0)
    t = ask_next(qtbot, w)
    qtbot.keyClick(w, Qt.Key_A)
    settle(qtbot)
    assert w.model.position == t and s.last.skipped and s.answered == 0 and s.skipped == 1
    assert "took" in w.predict_bar.verdict.full
    t2 = ask_next(qtbot, w)
    qtbot.keyClick(w, Qt.Key_Home)
    settle(qtbot)
    assert s.pending is None and w.model.position == 0 and s.skipped == 1
    qtbot.keyClick(w, Qt.Key_P)
    settle(qtbot)
    assert not w.predict.active and not w.predict_bar.isVisible()
    qtbot.keyClick(w, Qt.Key_Right)
    assert w.model.position == 1                    # no more questions


def test_predict_mode_is_per_row():
    """A row of the window can be in predict mode on its own (compare mode
    shows several rows)."""
    from heapscope.gui.predict_mode import PredictMode
    from heapscope.gui.show_model import ShowModel
    model = ShowModel()
    mode = PredictMode(model)
    mode.set_active(True, rows=[0])
    assert mode.session(0).active and not mode.session(1).active
    mode.set_active(False, rows=[0])
    assert not mode.active


def test_in_compare_mode_each_row_answers_for_its_own_policy(qtbot):
    """Compare mode shows several rows at one step (issue 10): predict mode on
    for all of them stops before a malloc, waits until every row has answered,
    then plays the step once and marks each row's answer in its own policy's
    words, with a score per row.  This drives the API compare mode calls:
    PredictMode on the shared ShowModel, answer(row, address or GROW)."""
    from heapscope import traces
    from heapscope.allocators.replay import Timeline
    from heapscope.gui.predict_bar import PredictBar
    from heapscope.gui.predict_mode import PredictMode
    from heapscope.gui.show_model import ShowModel
    from PySide6.QtGui import QAction

    trace = traces.make_workload("vo1989", steps=SMALL_STEPS, seed=11)
    names = ("next-fit", "tlsf")
    model = ShowModel()
    model.set_trace(trace)
    model.show([model.add_timeline(Timeline(trace, n, {}).build()) for n in names], 0)
    judges = [Timeline(trace, n, {}).build() for n in names]        # worked out apart from the model
    mode = PredictMode(model)
    mode.set_active(True)                                            # every shown row
    assert [s.row for s in mode.active_sessions()] == [0, 1]
    bars = [PredictBar(mode.session(r), QAction(), QAction(), grow=lambda r=r: mode.answer(r, GROW))
            for r in range(2)]
    for bar in bars:
        qtbot.addWidget(bar)

    def answers(t):
        out = []
        for tl in judges:
            before = tl.state_at(t - 1)
            tl.seek(t)
            series = tl.series
            out.append((reveal(t, tl.op(t)[2], before, tl.last_record, tl.strategy_name,
                               int(series.heap[t - 2]) if t > 1 else 0, int(series.heap[t - 1])), before))
        return out

    position = 150
    while True:
        assert mode.stop_before(position, position + 40) == mode.pending - 1
        t = mode.pending
        assert model.position == t - 1 and all(s.pending == t for s in mode.active_sessions())
        (v0, _), (v1, before1) = answers(t)
        free1 = [b[0] for b in before1.blocks if b[2] == "free" and b[0] not in v1.answers and b[1] > 8]
        if v0.answer != GROW and v1.answer != GROW and free1:
            break
        mode.reveal()
        position = t
    # row 0 answers right: nothing plays until row 1 has answered too
    assert mode.answer(0, v0.answer)
    assert model.position == t - 1 and mode.pending == t
    assert "Which block will next-fit take?" in bars[0].question.full
    assert "Which block will tlsf take?" in bars[1].question.full
    assert mode.answer(1, free1[0])                   # row 1 answers wrong
    assert model.position == t and mode.pending is None
    s0, s1 = mode.session(0), mode.session(1)
    assert s0.last.correct and not s1.last.correct
    assert s1.last.answer == v1.answer and s1.last.guess == free1[0]
    assert "next fit" in s0.last.reason.lower() and "class (" in s1.last.reason.lower()
    assert (s0.right, s0.answered, s1.right, s1.answered) == (1, 1, 0, 1)
    assert "✓ Right" in bars[0].verdict.full and "✗ Wrong" in bars[1].verdict.full
    # a row's own "the heap will grow" answers for that row only
    position = t
    while True:
        mode.stop_before(position, position + 40)
        t = mode.pending
        if all(s.pending == t for s in mode.active_sessions()):
            break
        mode.reveal()
        position = t
    bars[1].grow_button.click()
    assert s1.guess == GROW and s0.guess is None and model.position == t - 1
    mode.reveal()                                     # row 0 shown the answer, unscored
    assert model.position == t and s0.last.skipped and not s1.last.skipped


def test_at_a_slow_speed_the_answered_step_plays_its_events(qtbot, predicting):
    w = predicting
    w.player.set_speed(MAX_ANIMATED_SPEED)     # the fastest that plays events: the script ends soonest
    s = w.predict.session(0)
    t, verdict, free, others = question_with_a_block_and_another(qtbot, w)
    click_block(qtbot, w, verdict.answer, free[verdict.answer])
    assert w.model.position == t and s.last.correct
    assert w.animator.running and w.model.event_index is not None      # the events, one after another
    qtbot.waitUntil(lambda: not w.animator.running, timeout=15000)
    assert w.model.event_index is None                                 # ... ending on the whole step


def test_predict_off_with_a_question_open_gives_the_map_its_marks_back(qtbot, predicting):
    """P pressed again while a question is open: predict mode ends, and the
    map and the structure view show the step's marks again (they stayed
    quiet: the question closed without saying so), here and at the next step."""
    w = predicting
    hm, panel = w.heap_map, w.structure_panel
    ask_next(qtbot, w)
    assert hm.quiet and panel.quiet
    qtbot.keyClick(w, Qt.Key_P)
    settle(qtbot)
    assert not w.predict.active and w.predict.pending is None
    assert not hm.quiet and not panel.quiet
    # a malloc that searched: its numbers and the block it placed are drawn
    t = w.model.position + 1
    while not (w.timeline.op(t)[0] == ALLOC and w.timeline.op(t)[2] > 0):
        t += 1
    w.seek(t)
    settle(qtbot)
    assert marked(hm) and hm.marks.placed
