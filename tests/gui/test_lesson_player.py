"""Playing a lesson in the window (gui/lesson_part.py, gui/lesson_player.py,
gui/lesson_panel.py; docs/lessons.md, "Playing a lesson"): every bundled
lesson played from its first stop to its last with Page Down, each stop
read back from the window (the step, the event, the block outlined on each
row's heap map, the panels, the strategies) against what the lesson file
says; questions answered through the panel's buttons and clicks on the map,
and scored; Back and Backspace restore a stop exactly; the steps between two
stops play; a broken lesson is a dialog naming its file and line."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from heapscope.allocators.block_list import STATE_FREE
from heapscope.lessons import LessonError, load_lesson, load_lesson_text
from heapscope.gui.lesson_stop import shown_state

from .conftest import wait_loaded
from .test_predict_mode import click_block
from tests.depth import some_in_quick

LESSONS = sorted((Path(__file__).resolve().parents[2] / "heapscope" / "lessons").glob("*.md"))


def settle(qtbot, ms: int = 10) -> None:
    QApplication.processEvents()
    qtbot.wait(ms)


def arrive(qtbot, w) -> None:
    """Wait until the lesson's travel to its stop is over."""
    qtbot.waitUntil(lambda: not w.lessons.player.traveling, timeout=10000)
    settle(qtbot)


def panels_shown(w) -> tuple:
    """The panels the View menu says are shown (the map and gauges always are)."""
    on = {"map", "gauges"} | {p for p, act in (("structure", w.act_structure), ("explain", w.act_explain),
                                                ("plots", w.act_plots)) if act.isChecked()}
    return tuple(p for p in ("map", "structure", "explain", "plots", "gauges") if p in on)


def expected_panels(lesson, index: int, at_open: tuple) -> tuple:
    """The lesson's rule, worked here: a stop's show:, else the last one
    before it, else what showed when the lesson opened; map and gauges always."""
    for state in reversed(lesson.stops[:index + 1]):
        if state.show:
            on = set(state.show) | {"map", "gauges"}
            return tuple(p for p in ("map", "structure", "explain", "plots", "gauges") if p in on)
    return at_open


def asked_at(lesson, index: int) -> tuple:
    """Where docs/lessons.md says stop ``index``'s question is asked: on the
    heap before its step, or at the stop before when that comes later (and not
    after this one); a click question always before its malloc."""
    state = lesson.stops[index]
    before = (max(0, state.step - 1), None)

    def when(step, event):
        return step, event if event is not None else 10 ** 9     # the whole step after its events

    if index == 0 or state.question.kind == "click":
        return before
    prev = lesson.stops[index - 1]
    if when(*before) < when(prev.step, prev.event) <= when(state.step, state.event):
        return prev.step, prev.event
    return before


def opened(qtbot, w, lesson_file) -> None:
    """Open the lesson file as File > Lessons does, and wait for its loader thread."""
    w.lessons.open_file(str(lesson_file))
    qtbot.waitUntil(lambda: not w.lessons.loading, timeout=60000)


def start(qtbot, w, lesson_file) -> None:
    opened(qtbot, w, lesson_file)
    assert w.lessons.player.active
    assert w.player.speed == 2        # a lesson brings the player to a speed whose steps play
    w.player.set_speed(1000)          # the steps between stops jump: a fast test
    arrive(qtbot, w)


def ids_by_name(lesson) -> dict:
    return {name: ident for ident, name in lesson.names.items()}


def answer_through_the_panel(qtbot, w, question, right: bool = True) -> None:
    """Answer the open question as a student would: a choice's button, a
    click on the map, or Show the Answer."""
    panel = w.lessons.panel
    if question.kind == "choice":
        want = [c for c in question.choices if question.is_right(c) == right][0]
        button = next(b for b in panel.choice_buttons if b.choice == want)
        assert button.isVisible() and button.isEnabled()
        qtbot.mouseClick(button, Qt.LeftButton)
    elif question.kind == "click":
        right_block, wrong_block = first_fit_holes(w)
        click_block(qtbot, w, *(right_block if right else wrong_block))
    else:
        qtbot.mouseClick(panel.reveal_button, Qt.LeftButton)
    settle(qtbot)
    arrive(qtbot, w)


def first_fit_holes(w):
    """(address, size) of the free block a first-fit malloc takes (the
    lowest that holds the request: the rule of first fit) and of another
    free block, read from the heap map before the step."""
    blocks = w.model.step(0).blocks
    step = w.lessons.player.state.step
    request = w.timeline.op(step)[2]
    free = [(int(a), int(s)) for a, s, k in zip(blocks.addr, blocks.size, blocks.state)
            if k == STATE_FREE and int(s) >= request]
    free.sort()
    assert len(free) >= 2, free
    return free[0], free[1]


#: the lessons the quick suite plays to their ends: one strategy (buddy), two
#: with parameters of their own (the rotating list beside first fit, whose
#: stops select blocks), two on one trace (the roving pointer); --deep plays
#: every one -- vo1989-table among them, whose three rows each build a
#: 20 000-step workload (3.3 of the file's 12 CPU-s; its trace by a
#: workload's name is read by tests/test_lessons.py) (issue 20)
QUICK_LESSONS = ("buddy-splits-and-merges", "free-list-rotation", "roving-pointer")


@pytest.mark.parametrize("lesson_file", some_in_quick(LESSONS, keep={p for p in LESSONS if p.stem in QUICK_LESSONS}),
                         ids=[p.stem for p in LESSONS])
def test_a_bundled_lesson_plays_to_its_last_stop_with_page_down(qtbot, window, lesson_file):
    w = window
    lesson = load_lesson(lesson_file)
    ids = ids_by_name(lesson)
    at_open = panels_shown(w)
    start(qtbot, w, lesson_file)
    player, panel = w.lessons.player, w.lessons.panel
    assert w.lessons.dock.isVisible()
    for index, state in enumerate(lesson.stops):
        assert player.index == index
        assert f"Stop {index + 1} / {len(lesson.stops)}" in panel.where.text()
        assert state.stop.title in panel.heading.text()
        if state.question is not None:
            assert player.question_open
            assert (shown_state(w).step, shown_state(w).event) == asked_at(lesson, index)
            qtbot.keyClick(w, Qt.Key_PageDown)                          # waits for the answer
            settle(qtbot)
            assert player.index == index and player.question_open
            answer_through_the_panel(qtbot, w, state.question)
            assert panel.verdict.isVisible()
        shown = shown_state(w)
        assert shown.step == state.step, state.stop.title
        assert shown.event == state.event
        assert shown.strategies == tuple(lesson.strategies)
        want = ids[state.select] if state.select is not None else None
        assert shown.selected == (want,) * len(lesson.strategies), state.stop.title
        assert shown.panels == expected_panels(lesson, index, at_open) == panels_shown(w)
        assert player.at_stop and not panel.message.isVisible()
        qtbot.keyClick(w, Qt.Key_PageDown)
        settle(qtbot)
        arrive(qtbot, w)
    assert player.index == len(lesson.stops) - 1          # Page Down past the last stop stays
    asked = sum(1 for s in lesson.stops if s.question is not None and s.question.kind != "words")
    if asked:
        assert player.score_text().startswith(f"{asked} of {asked} right")


QUESTIONS = '''+++
title = "Three questions"
strategy = "first-fit"
trace = """
a = malloc(100)
x = malloc(16)
b = malloc(100)
y = malloc(16)
free(a)
free(b)
c = malloc(100)
d = malloc(40)
"""
[params]
nalloc = 1
+++

## Two holes

step: 6

## Where does c go?

step: 7
ask: Which hole does first fit give c?
answer: click
explain: the lowest hole that fits.
select: c

## The next request

step: 8
ask: Does d fit in b's hole?
choices: yes | no
answer: yes
explain: b's hole holds 100 bytes and more.

Cut from the front of b's hole, d leaves a splinter behind.

## Grows?

step: 8
ask: Did the heap grow for d?
choices: yes | no
answer: no
'''


def written(tmp_path, text: str, name: str = "lesson.md") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def at_second_stop(qtbot, w, tmp_path, text: str):
    """The lesson ``text`` written to a file, played, at its second stop:
    (lesson, player, panel)."""
    path = written(tmp_path, text)
    lesson = load_lesson(path)
    start(qtbot, w, path)
    qtbot.keyClick(w, Qt.Key_PageDown)
    arrive(qtbot, w)
    return lesson, w.lessons.player, w.lessons.panel


def test_questions_wait_for_an_answer_and_count_right_and_wrong(qtbot, window, tmp_path):
    w = window
    lesson, player, panel = at_second_stop(qtbot, w, tmp_path, QUESTIONS)
    # a click question: the heap before c's malloc, the grow button offered
    assert player.question_open and w.model.position == 6
    assert panel.grow_button.isVisible() and not panel.choice_buttons
    qtbot.keyClick(w, Qt.Key_PageDown)
    settle(qtbot)
    assert player.index == 1 and "Answer the question first" in panel.message.text()
    right_block, _ = first_fit_holes(w)
    answer_through_the_panel(qtbot, w, lesson.stops[1].question, right=False)
    assert w.model.position == 7 and not player.question_open
    assert "✗ Wrong" in panel.verdict.text() and "you said the block at" in panel.verdict.text()
    assert panel.explanation.isVisible() and "lowest hole" in panel.explanation.text()
    assert shown_state(w).selected == (ids_by_name(lesson)["c"],)
    # the block c was given is the one first fit's rule names
    blocks = w.model.step(0).blocks
    assert blocks.state[list(blocks.addr).index(right_block[0])] != STATE_FREE
    assert player.score_text() == "0 of 1 right"
    qtbot.keyClick(w, Qt.Key_PageDown)
    arrive(qtbot, w)
    # the narration after the question discusses its answer: shown once answered
    assert "splinter" not in panel.narration.text()
    answer_through_the_panel(qtbot, w, lesson.stops[2].question, right=True)
    assert "✓ Right" in panel.verdict.text()
    assert "splinter" in panel.narration.text()
    assert player.score_text() == "1 of 2 right"
    qtbot.keyClick(w, Qt.Key_PageDown)
    arrive(qtbot, w)
    answer_through_the_panel(qtbot, w, lesson.stops[3].question, right=True)
    assert player.score_text() == "2 of 3 right"
    assert "2 of 3 right" in panel.score.text()
    # back to an answered stop: shown answered, its step, nothing asked again
    qtbot.keyClick(w, Qt.Key_PageUp)
    settle(qtbot)
    assert player.index == 2 and not player.question_open and w.model.position == 8
    assert "✓ Right" in panel.verdict.text() and not any(b.isEnabled() for b in panel.choice_buttons)


def test_a_click_question_answered_right_and_shown_without_an_answer(qtbot, window, tmp_path):
    w = window
    lesson, player, panel = at_second_stop(qtbot, w, tmp_path, QUESTIONS)
    answer_through_the_panel(qtbot, w, lesson.stops[1].question, right=True)
    assert "✓ Right" in panel.verdict.text()
    assert player.score_text() == "1 of 1 right"
    qtbot.keyClick(w, Qt.Key_PageDown)
    arrive(qtbot, w)
    qtbot.mouseClick(panel.reveal_button, Qt.LeftButton)        # Show the Answer: not scored
    arrive(qtbot, w)
    assert "The answer" in panel.verdict.text() and w.model.position == 8
    assert player.score_text() == "1 of 1 right, 1 shown without an answer"


TWO_STOPS = '''+++
title = "Two stops"
strategy = "first-fit"
trace = """
a = malloc(100)
b = malloc(20)
c = malloc(60)
free(a)
d = malloc(40)
"""
+++

## a and b

step: 2
select: a
show: map, explain

## d inside the step

step: 5
event: 1
select: d
show: map, structure, plots
'''


def test_back_restores_the_previous_stop_exactly(qtbot, window, tmp_path):
    w = window
    path = written(tmp_path, TWO_STOPS)
    ids = ids_by_name(load_lesson(path))
    start(qtbot, w, path)
    first = shown_state(w)
    assert (first.step, first.event, first.selected) == (2, None, (ids["a"],))
    assert first.panels == ("map", "explain", "gauges")
    assert not w.structure_panel.isVisible() and w.explain_panel.isVisible()
    qtbot.keyClick(w, Qt.Key_PageDown)
    arrive(qtbot, w)
    second = shown_state(w)
    assert (second.step, second.event, second.selected) == (5, 1, (ids["d"],))
    assert second.panels == ("map", "structure", "plots", "gauges")
    assert w.structure_panel.isVisible() and not w.explain_panel.isVisible()
    qtbot.keyClick(w, Qt.Key_PageUp)
    settle(qtbot)
    assert shown_state(w) == first
    assert not w.structure_panel.isVisible() and w.explain_panel.isVisible()
    assert w.lessons.player.index == 0 and "Stop 1 / 2" in w.lessons.panel.where.text()


def test_wander_then_backspace_returns_to_the_stop(qtbot, window, tmp_path):
    w = window
    path = written(tmp_path, TWO_STOPS)
    start(qtbot, w, path)
    qtbot.keyClick(w, Qt.Key_PageDown)
    arrive(qtbot, w)
    stop = shown_state(w)
    panel = w.lessons.panel
    # the free controls still work: Home, a step forward, another panel
    qtbot.keyClick(w, Qt.Key_Home)
    qtbot.keyClick(w, Qt.Key_Right)
    qtbot.keyClick(w, Qt.Key_E)
    settle(qtbot)
    assert w.model.position == 1 and w.explain_panel.isVisible()
    assert not w.lessons.player.at_stop
    assert panel.message.isVisible() and "Backspace" in panel.message.text()
    # ... and another strategy (built for the lesson's trace in the background)
    wait_loaded(qtbot, w, lambda: w.set_strategy("next-fit"))
    assert shown_state(w).strategies == ("next-fit",)
    qtbot.keyClick(w, Qt.Key_Backspace)
    settle(qtbot)
    assert shown_state(w) == stop and not w.explain_panel.isVisible()
    assert shown_state(w).strategies == ("first-fit",)
    assert not panel.message.isVisible()


def test_the_steps_between_two_stops_play_one_by_one(qtbot, window, tmp_path):
    w = window
    path = written(tmp_path, TWO_STOPS)
    start(qtbot, w, path)
    seen = []
    w.model.step_changed.connect(seen.append)
    qtbot.keyClick(w, Qt.Key_PageDown)
    assert w.lessons.player.traveling or w.model.position == 5
    arrive(qtbot, w)
    assert seen == [3, 4, 5]


def test_at_an_animated_speed_the_last_step_plays_its_events(qtbot, window, tmp_path):
    w = window
    path = written(tmp_path, TWO_STOPS)
    start(qtbot, w, path)
    w.lessons.player.back_to_stop()
    w.seek(4)
    w.player.set_speed(4)
    events = []
    w.model.event_changed.connect(events.append)
    qtbot.keyClick(w, Qt.Key_PageDown)
    arrive(qtbot, w)
    assert w.model.position == 5 and w.model.event_index == 0          # the stop's event 1
    played = [e for e in events if e is not None]
    n = w.model.step(0).event_count
    assert n >= 2 and played[:n] == list(range(n))     # every event of the step, in order


def test_a_broken_lesson_is_a_dialog_with_its_file_and_line(qtbot, loaded, tmp_path):
    w = loaded
    text = TWO_STOPS.replace("select: d", "select: e")
    path = written(tmp_path, text, "broken.md")
    line = text.splitlines().index("select: e") + 1
    before = (w.trace, w.model.position)
    opened(qtbot, w, path)
    box = w.message_box
    assert box is not None and re.search(rf"broken\.md:{line}: select: .*'e'", box.informativeText())
    box.close()
    settle(qtbot)
    assert (w.trace, w.model.position) == before and not w.lessons.player.active
    assert not w.lessons.dock.isVisible() and not w.lessons.act_next.isEnabled()
    qtbot.keyClick(w, Qt.Key_Right)         # the window goes on working
    settle(qtbot)
    assert w.model.position == before[1] + 1


def test_file_lessons_lists_the_bundled_lessons_and_plays_one(qtbot, window):
    w = window
    menu = w.lessons.menu
    assert menu.menuAction() in w.menus["file"].actions()
    names = [a.text() for a in menu.actions() if not a.isSeparator()]
    assert [p.stem for p in LESSONS] == names[:len(LESSONS)]
    assert "Open Lesson File…" in [a.text().replace("&", "") for a in menu.actions()]
    next(a for a in menu.actions() if a.text() == LESSONS[0].stem).trigger()
    qtbot.waitUntil(lambda: not w.lessons.loading, timeout=60000)
    arrive(qtbot, w)
    lesson = load_lesson(LESSONS[0])
    assert w.lessons.player.active and shown_state(w).strategies == tuple(lesson.strategies)
    assert w.model.label == f"lesson: {lesson.title}"
    # the panel closed by its title bar's button comes back from the menu
    w.lessons.dock.close()
    settle(qtbot)
    assert not w.lessons.dock.isVisible()
    w.lessons.act_panel.trigger()
    settle(qtbot)
    assert w.lessons.dock.isVisible()


def test_another_trace_opened_ends_the_lesson(qtbot, window, small_trace_path):
    w = window
    start(qtbot, w, LESSONS[0])
    wait_loaded(qtbot, w, lambda: w.open_trace(small_trace_path))
    assert not w.lessons.player.active and not w.lessons.dock.isVisible()
    assert not w.lessons.act_next.isEnabled()


def test_heapscope_lesson_name_opens_the_window_on_it(qtbot, monkeypatch):
    from .conftest import window_from_command_line
    w = window_from_command_line(qtbot, monkeypatch, ["lesson", LESSONS[0].stem, "--presenter"])
    try:
        assert w.lessons.player.active and w.lessons.player.index == 0
        assert w.presentation.presenter
        assert shown_state(w).strategies == tuple(load_lesson(LESSONS[0]).strategies)
    finally:
        w.close()


def test_a_broken_lesson_on_the_command_line_exits_2_with_its_line(tmp_path, capsys):
    from heapscope.cli import main
    path = written(tmp_path, TWO_STOPS.replace("step: 5", "step: 50"), "broken.md")
    for argv in (["lesson", str(path)], ["open", "--lesson", str(path)]):
        assert main(argv) == 2
        assert f"broken.md:{TWO_STOPS.splitlines().index('step: 5') + 1}: step: 50" in capsys.readouterr().err
    assert main(["open", "--lesson", str(path), "-s", "tlsf"]) == 2
    assert "drop --strategy" in capsys.readouterr().err


def test_answer_click_needs_a_malloc_step():
    """A click question asks which block the step's malloc takes: on a free(), a mistake at its line."""
    text = QUESTIONS.replace("step: 7\nask: Which", "step: 6\nask: Which").replace("select: c\n", "")
    with pytest.raises(LessonError) as raised:
        load_lesson_text(text, "q.md")
    line = QUESTIONS.splitlines().index("answer: click") + 1
    assert str(raised.value).startswith(f"q.md:{line}: answer: click")


def test_the_narration_after_a_question_goes_with_its_answer_in_the_export():
    from heapscope.lesson_export import lesson_markdown
    page = lesson_markdown(load_lesson_text(QUESTIONS, "q.md"))
    question = page.index("Does d fit in b's hole?")
    details = page.index("<details>", question)
    assert page.index("splinter behind") > details
    assert page.index("splinter behind") < page.index("</details>", details)


def test_presenter_mode_at_1280x720_keeps_the_window_and_the_panel_readable(qtbot, window):
    """Presenter mode (F5) while a lesson plays: the panel gives the views the
    room they need, so the window stays 1280 pixels wide, and no text of the
    panel is wider than it (its page never scrolls sideways)."""
    w = window
    w.set_window_size(1280, 720)
    start(qtbot, w, next(p for p in LESSONS if p.stem == "tlsf-bins"))
    qtbot.keyClick(w, Qt.Key_F5)
    settle(qtbot, 50)
    assert w.presentation.presenter and w.width() == 1280
    panel = w.lessons.panel
    for _ in range(3):                       # to the stop with the question
        qtbot.keyClick(w, Qt.Key_PageDown)
        arrive(qtbot, w)
    settle(qtbot, 60)
    assert w.lessons.player.question_open and w.width() == 1280
    assert panel.scroll.horizontalScrollBar().maximum() == 0
    assert panel.scroll.widget().width() <= panel.scroll.viewport().width()
    box = panel.question_box
    top = box.mapTo(panel.scroll.viewport(), box.rect().topLeft()).y()
    assert 0 <= top < panel.scroll.viewport().height()      # the question is in view


def test_compare_rows_label_the_request_by_the_lessons_names(qtbot, window):
    """roving-pointer (next-fit and first-fit side by side): at its stop on
    d's malloc every row's request label names d, as the lesson does."""
    w = window
    lesson = load_lesson(next(p for p in LESSONS if p.stem == "roving-pointer"))
    start(qtbot, w, lesson.text.path)
    stop = next(i for i, s in enumerate(lesson.stops) if s.select == "d")
    for _ in range(stop):
        qtbot.keyClick(w, Qt.Key_PageDown)
        arrive(qtbot, w)
    if w.lessons.player.question_open:
        answer_through_the_panel(qtbot, w, lesson.stops[stop].question)
    labels = [row.map.request_label.textItem.toPlainText() for row in w.compare.view.shown_rows()]
    assert len(labels) == 2 and all(re.fullmatch(r"[▼▲] d|d [▼▲]", t) for t in labels), labels


@pytest.mark.parametrize("name", ["splay-tree-rebalancing"])
def test_a_one_strategy_lesson_in_presenter_mode_at_1280x720_has_a_readable_panel(qtbot, window, name):
    """Issue 24: a one-strategy lesson in presenter mode at 1280 x 720 got a
    205-260 px narration column: the six gauges' strip held the views to
    1061 px.  The strip's gauges narrow (titles wrap, smaller numbers) so
    the panel is as wide as its 30 characters of presenter text, the window
    stays 1280 px, and the map still shows every row of the heap whole."""
    from heapscope.gui.lesson_panel import WIDTH_CHARS
    from .test_presenter import at_size, whole_in_window
    w = window
    at_size(qtbot, w, 1280, 720, presenter=True)     # text sized for a 720-line screen
    start(qtbot, w, next(p for p in LESSONS if p.stem == name))
    settle(qtbot, 80)
    assert w.presentation.presenter and not w.compare.active and w.width() == 1280
    panel = w.lessons.panel
    wanted = panel.fontMetrics().averageCharWidth() * WIDTH_CHARS
    assert panel.width() >= wanted, (panel.width(), wanted)
    for g in w.gauges.all:
        assert whole_in_window(g, w), g.title.text()
        assert g.value_label.font().pointSizeF() >= w.presentation.body_pt      # never below the body text
    hm = w.heap_map
    assert whole_in_window(hm.plot_widget, w)
    lay = hm.layout_
    x0, x1 = hm.vb.viewRange()[0]
    y0, y1 = hm.vb.viewRange()[1]
    assert x0 <= 0 and x1 >= lay.cols * 0.98, (x0, x1, lay.cols)     # every byte of a row
    assert min(y0, y1) <= 0 and max(y0, y1) >= lay.rows - 0.01, (y0, y1, lay.rows)   # every row
