"""The tree, buddy and TLSF views draw any structure of their kind: one that
went through JSON (``heapscope inspect --format json``), a hand-made tree of
a user strategy, nothing at all."""

import json

import pytest

from heapscope.allocators import structure as sp
from heapscope.allocators.explain import explain_step
from heapscope.allocators.replay import Timeline
from heapscope.gui.structure_views import view_for


@pytest.mark.parametrize("strategy, kind, step", [("splay-best-fit", "tree", 333),
                                                  ("buddy", "buddy", 333), ("tlsf", "tlsf", 333)])
def test_a_structure_read_back_from_json_draws_the_same(qtbot, small_trace, strategy, kind, step):
    tl = Timeline(small_trace, strategy).build()
    s = tl.seek(step)
    st = s.structure()
    ex = explain_step(s, tl.last_record)
    view = view_for(kind)()
    qtbot.addWidget(view)
    view.resize(1000, 700)
    view.show_step(st, ex)
    direct, caption = view.drawn(), view.caption.text()
    view.show_step(json.loads(json.dumps(st)), ex)
    assert view.drawn() == direct
    assert view.caption.text() == caption


def test_a_hand_made_tree_of_a_user_strategy(qtbot):
    # sizes 16 < 32 < 48 < 64, root 48 with children 16 (right child 32) and 64
    nodes = [{"addr": 100, "key": 16, "blocks": [100], "left": None, "right": 300},
             {"addr": 300, "key": 32, "blocks": [300, 310, 320], "left": None, "right": None},
             {"addr": 200, "key": 48, "blocks": [200], "left": 100, "right": 400},
             {"addr": 400, "key": 64, "blocks": [400], "left": None, "right": None}]
    sizes = {100: 16, 300: 32, 310: 32, 320: 32, 200: 48, 400: 64}
    st = sp.make("tree", sizes, root=200, nodes=nodes)
    sp.check_against_heap(st, [(a, n, "free") for a, n in sizes.items()])
    view = view_for("tree")()
    qtbot.addWidget(view)
    view.show_step(st, [])
    d = view.drawn()
    assert d["keys"] == [16, 32, 48, 64]
    assert d["depth"] == {200: 0, 100: 1, 400: 1, 300: 2}
    assert d["edges"] == [(100, 300), (200, 100), (200, 400)]
    assert d["lists"][300] == [300, 310, 320] and d["wilderness"] is None
    assert "no wilderness" not in view.caption.text()     # a user tree has no such thing


@pytest.mark.parametrize("kind", ["tree", "buddy", "tlsf"])
def test_nothing_loaded_draws_nothing(qtbot, kind):
    view = view_for(kind)()
    qtbot.addWidget(view)
    view.show_step(None, [])
    assert "nothing loaded" in view.caption.text()
    view.set_selection(None)
