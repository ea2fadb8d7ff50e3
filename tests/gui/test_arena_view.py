"""The V7 arena view (gui/structure_views/arena_view.py): the ring of every
block, read back from its graphics items and compared with the structure and
the step's events."""

import pytest

from heapscope import traces
from heapscope.allocators import make_strategy
from heapscope.allocators.events import Visit
from heapscope.allocators.explain import explain_step
from heapscope.allocators.replay import Timeline
from heapscope.gui.structure_views import view_for
from heapscope.gui.structure_views.arena_view import VISIT_ENDS, ArenaRingView
from heapscope.gui.structure_views.summarise import FULL_LIMIT

STATE_WORD = {"busy": "busy", "free": "idle", "top": "top"}


def make_view(qtbot, width=620, height=800):
    view = view_for("arena-ring")()
    qtbot.addWidget(view)
    view.resize(width, height)
    view.show()
    return view


def show(view, s, rec=None):
    rec = rec or s.rec
    structure = s.structure()
    explained = explain_step(s, rec)
    view.show_step(structure, explained, rec)
    return structure, explained


def check_drawing(view, structure, explained):
    """What every step must satisfy, whatever was folded."""
    d = view.drawn()
    ring = [a for a, _, _ in structure["ring"]]
    seq = d["sequence"]
    assert seq[0] == "allocs"
    nodes = [e[1] for e in seq[1:] if e[0] == "node"]
    # the ring's blocks in address order, the folded ones counted
    assert nodes == [a for a in ring if a in set(nodes)]
    folded = sum(e[1] for e in seq if e[0] == "fold")
    assert len(nodes) + folded == len(ring)     # ghosts (absorbed blocks) are apart
    # each drawn card says its state as the structure does
    states = {a: STATE_WORD[st] for a, _, st in structure["ring"]}
    for a in nodes:
        assert d["states"][a] == states[a], a
    # allocp is where the structure says, 'allocs' at the static words
    assert d["pointer"] == (structure["rover"] if structure["rover"] is not None else "allocs")
    # visit numbers: the first and last VISIT_ENDS of the search, each at its block
    visits = [e.event.addr for e in explained if isinstance(e.event, Visit)]
    keep = list(range(len(visits))) if len(visits) <= 2 * VISIT_ENDS else \
        list(range(VISIT_ENDS)) + list(range(len(visits) - VISIT_ENDS, len(visits)))
    assert d["numbers"] == sorted((i + 1, visits[i]) for i in keep)
    assert ("Summarised" in view.summary) == (folded > 0)
    return d


def test_it_is_the_view_of_the_arena_ring():
    assert view_for("arena-ring") is ArenaRingView


def test_a_growth_step_numbers_busy_blocks_and_shows_the_absorbed_top_word(qtbot):
    view = make_view(qtbot)
    s = make_strategy("v7-malloc")
    for _ in range(31):
        s.malloc(20)
    s.malloc(20)                # 67 blocks stood on: see tests/test_v7_malloc.py
    structure, explained = show(view, s)
    d = check_drawing(view, structure, explained)
    assert d["pointer"] == 1024 and d["pointer_before"] == 992
    assert d["roles"][992] == "placed" and d["roles"][1024] == "rest"
    assert ("ghost", 1016) in d["sequence"] and d["roles"][1016] == "absorbed"
    assert d["notes"][1016] == "absorbed into 0x3e0"
    assert (1, 992) in d["numbers"] and (67, 992) in d["numbers"] and (2, 1016) in d["numbers"]
    assert d["states"][2040] == "top"
    assert "stood on 67, 64 of them busy" in view.info.text()


def test_a_free_marks_the_block_idle_and_moves_allocp(qtbot):
    view = make_view(qtbot, height=500)
    s = make_strategy("v7-malloc")
    a, b, c = s.malloc(20), s.malloc(20), s.malloc(20)
    s.free(b)
    structure, explained = show(view, s)
    d = check_drawing(view, structure, explained)
    assert d["roles"] == {32: "freed"} and d["states"][32] == "idle"
    assert d["pointer"] == 32 and d["pointer_before"] == 96
    assert d["numbers"] == []


def test_before_the_first_sbrk_only_the_static_words(qtbot):
    view = make_view(qtbot)
    s = make_strategy("v7-malloc")
    structure, explained = show(view, s)
    d = view.drawn()
    assert d["sequence"] == ["allocs"] and d["pointer"] == "allocs"


def test_a_long_arena_is_folded_and_a_selected_block_drawn_out(qtbot):
    view = make_view(qtbot)
    tl = Timeline(traces.make_workload("vo1989", steps=400, seed=11), "v7-malloc").build()
    tl.seek(200)
    s = tl.strategy
    structure, explained = show(view, s, tl.last_record)
    assert len(structure["ring"]) > FULL_LIMIT
    d = check_drawing(view, structure, explained)
    assert any(e[0] == "fold" for e in d["sequence"])
    assert "Summarised" in view.summary
    middle = structure["ring"][len(structure["ring"]) // 2][0]
    assert ("node", middle) not in d["sequence"]
    view.set_selection(middle)
    d = view.drawn()
    assert ("node", middle) in d["sequence"] and d["selected"] == middle


@pytest.mark.parametrize("step", [1, 2, 37, 150, 401, 600, 799, 800])
def test_every_step_of_a_replay_draws_what_the_structure_says(qtbot, step):
    view = make_view(qtbot)
    tl = Timeline(traces.make_workload("vo1989", steps=400, seed=3), "v7-malloc").build()
    tl.seek(step)
    structure, explained = show(view, tl.strategy, tl.last_record)
    check_drawing(view, structure, explained)


def test_micro_steps_draw_the_arena_after_each_event(qtbot):
    """Event by event (allocators/step_states.py), the drawing is the arena
    after that event with the events up to it lit."""
    from heapscope.allocators.step_states import StepStates
    view = make_view(qtbot)
    s = make_strategy("v7-malloc")
    for _ in range(31):
        s.malloc(20)
    before = s.structure()
    s.malloc(20)
    after = s.structure()
    explained = explain_step(s, s.rec)
    states = StepStates(before, after, s.rec.events)
    assert states.available
    view.show_step(after, explained, s.rec)
    view.set_states(states.at)
    grown = next(i for i, e in enumerate(s.rec.events) if type(e).__name__ == "ArenaExtended")
    for i in range(len(explained)):
        view.set_current_event(i)
        d = check_drawing(view, states.at(i), explained[:i + 1])
        if i == grown:
            assert d["states"][1016] == "idle" and d["pointer"] == 992    # allocp not moved yet
    assert view.drawn()["pointer"] == 1024
