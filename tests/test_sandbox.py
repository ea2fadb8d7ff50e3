"""The sandbox without a window (heapscope/sandbox.py, traces/named_ops.py):
edits, what an insertion does to what follows, undo and redo, the dirty
flag, the replay after an edit and the .rep it saves."""

from __future__ import annotations

import numpy as np
import pytest

from heapscope.allocators.replay import Timeline
from heapscope.sandbox import CUT, KEEP, Sandbox
from heapscope.traces import read_rep
from heapscope.traces.named_ops import NamedOp, check_named, fresh_name
from heapscope.traces.trace import ALLOC, FREE, REALLOC

A, B, C = NamedOp(ALLOC, "a", 100), NamedOp(ALLOC, "b", 200), NamedOp(ALLOC, "c", 50)
FREE_A = NamedOp(FREE, "a")


def demo() -> Sandbox:
    """a = malloc(100); b = malloc(200); free(a); c = malloc(50)"""
    return Sandbox([A, B, FREE_A, C])


def test_names_become_ids_in_order_of_first_use():
    box = demo()
    assert list(box.trace) == [(ALLOC, 0, 100), (ALLOC, 1, 200), (FREE, 0, 0), (ALLOC, 2, 50)]
    assert box.checked.names == {0: "a", 1: "b", 2: "c"}
    assert box.problems == {}


def test_an_insertion_that_keeps_what_follows_marks_what_it_made_meaningless():
    box = demo()
    edit = box.free_after(1, "a", KEEP)      # after step 1 (a = malloc(100))
    assert box.ops == [A, FREE_A, B, FREE_A, C]
    assert box.problems == {3: "free(a): a is not live (freed before)"}
    # the skipped op is not replayed: 4 steps, the new free is step 2
    assert list(box.trace) == [(ALLOC, 0, 100), (FREE, 0, 0), (ALLOC, 1, 200), (ALLOC, 2, 50)]
    assert edit.step_after == 2
    assert box.checked.step_of_op == [1, 2, 3, 3, 4]


def test_an_insertion_that_cuts_drops_what_follows():
    box = demo()
    box.free_after(1, "a", CUT)
    assert box.ops == [A, FREE_A]
    assert box.problems == {}
    box.undo()
    assert box.ops == [A, B, FREE_A, C]


def test_undo_and_redo_restore_the_ops_and_the_step():
    box = demo()
    assert not box.dirty and not box.can_undo
    e1 = box.malloc_after(4, 300)
    assert e1.inserted == (NamedOp(ALLOC, "d", 300),) and e1.step_after == 5
    e2 = box.delete(0, step=5)          # deleting a's malloc: free(a) becomes meaningless
    assert box.problems == {1: "free(a): no block is called a"}
    assert box.dirty
    undone = box.undo()
    assert undone.step_after == e2.step_before == 5
    assert box.ops == [A, B, FREE_A, C, NamedOp(ALLOC, "d", 300)]
    undone = box.undo()
    assert undone.step_after == 4 and box.ops == [A, B, FREE_A, C]
    assert not box.dirty                # back where it was opened
    assert box.redo().step_after == 5
    assert box.dirty
    assert box.undo() is not None and box.undo() is None     # the second undo has nothing left


def test_dirty_follows_the_save(tmp_path):
    box = demo()
    box.malloc_after(0, 8)
    box.save(str(tmp_path / "t.rep"))
    assert not box.dirty
    box.undo()
    assert box.dirty
    box.redo()
    assert not box.dirty
    box.undo()
    box.malloc_after(0, 16)             # a new branch: the saved state is gone
    box.undo()
    assert box.dirty


def test_the_saved_rep_reads_back_as_the_trace(tmp_path):
    box = Sandbox()
    for size in (240, 100, 60):
        box.malloc_after(len(box.trace), size)
    box.free_after(3, "b")
    box.realloc_after(4, "a", 500)
    path = tmp_path / "demo.rep"
    box.save(str(path))
    # the header is computed: 3 ids, 5 operations
    assert path.read_text().splitlines()[:4] == ["0", "3", "5", "1"]
    back = read_rep(path)
    assert list(back) == list(box.trace)


def test_realloc_and_malloc_rules():
    ops = [NamedOp(REALLOC, "x", 10), NamedOp(ALLOC, "x", 5), NamedOp(FREE, "x"),
           NamedOp(REALLOC, "x", 7), NamedOp(ALLOC, "y", -1)]
    checked = check_named(ops)
    assert checked.problems == {1: "x is already live: free it first, or use another name",
                                3: "realloc(x): x was freed before",
                                4: "malloc(-1): the size must be 0 to 2**40 bytes"}
    assert fresh_name([NamedOp(ALLOC, n) for n in "abc"]) == "d"
    assert fresh_name([NamedOp(ALLOC, chr(97 + i)) for i in range(26)]) == "a1"


@pytest.mark.parametrize("strategy", ["first-fit", "tlsf", "buddy"])
def test_replayed_timelines_equal_a_fresh_build_of_the_edited_trace(strategy):
    box = Sandbox([NamedOp(ALLOC, f"n{i}", 16 + 24 * i) for i in range(30)]
                  + [NamedOp(FREE, f"n{i}") for i in range(0, 30, 2)])
    tl = Timeline(box.trace, strategy, checkpoint_every=8).build()
    tl.seek(20)
    old = box.trace
    box.free_after(20, "n5")
    box.malloc_after(21, 1000)
    (new,) = box.replayed([tl], old)
    full = Timeline(box.trace, strategy).build()
    assert np.array_equal(new.series.heap, full.series.heap)
    assert np.array_equal(new.series.payload, full.series.payload)
    for t in range(full.n + 1):
        assert new.state_at(t).blocks == full.state_at(t).blocks


def test_a_parameter_change_replays_from_the_start_and_is_undone():
    box = demo()
    tl = Timeline(box.trace, "first-fit", {"word": 8}).build()
    box.set_params("first-fit", {"nalloc": 1}, step=2)
    (new,) = box.replayed([tl], box.trace, {"word": 8})
    assert new.params == {"word": 8, "nalloc": 1}
    # K&R's morecore asks for max(units, NALLOC): with 1 the heap holds just the requests
    assert new.series.heap[0] < tl.series.heap[0]
    edit = box.undo()
    assert edit.step_after == 2 and box.params_for("first-fit") == {}
    (back,) = box.replayed([new], box.trace, {"word": 8})
    assert back.params == {"word": 8}
    with pytest.raises(ValueError, match="nalloc"):
        box.set_params("first-fit", {"nalloc": 0}, step=0)


def test_a_trace_read_from_a_file_keeps_its_ids():
    from heapscope.traces.trace import Trace
    trace = Trace.from_ops([(ALLOC, 5, 10), (ALLOC, 2, 20), (FREE, 5)])
    box = Sandbox.of_trace(trace)
    assert list(box.trace) == list(trace)
    assert box.name_of_id(5) == "a" and box.name_of_id(2) == "b"    # as write_readable names them
    box.malloc_after(3, 30)
    assert list(box.trace)[-1] == (ALLOC, 6, 30)     # a new name takes the next id


def test_a_skipped_operation_survives_a_heap_save_as_a_marked_comment(tmp_path):
    """Issue 21: a line the replay skips was dropped by Save; in a .heap it
    stays, as a '#! ' comment, so the file reads as the trace replayed and a
    sandbox made of it skips the line again."""
    from heapscope.traces import load_trace
    from heapscope.traces.readable import read_lines, unmark_skipped
    box = demo()
    box.free_after(1, "a", KEEP)            # the old free(a), op 3, is skipped now
    path = tmp_path / "demo.heap"
    skipped = box.save(str(path))
    why = "free(a): a is not live (freed before)"
    assert skipped == [(4, "free(a)", why)]
    lines = path.read_text().splitlines()
    assert lines == ["a = malloc(100)", "free(a)", "b = malloc(200)", "#! free(a)", "c = malloc(50)"]
    back = load_trace(str(path))            # the command line's strict reader
    assert list(back) == list(box.trace)
    again = read_lines(unmark_skipped(lines))
    assert list(again.problems) == [3]     # the same line, skipped again
    reopened = Sandbox.of_trace(back, again.names, lines=unmark_skipped(lines), path=str(path))
    assert reopened.text_lines() == unmark_skipped(lines)
    assert reopened.save(str(tmp_path / "again.heap")) == [(4, "free(a)", again.problems[3])]


def test_the_editors_lines_are_saved_as_typed_and_a_rep_says_what_it_left_out(tmp_path):
    from heapscope.traces import read_rep
    box = Sandbox([A, NamedOp(ALLOC, "b", 100)])
    typed = ["# two blocks", "a = malloc(100)", "x = mallo(3)", "b = calloc(4, 25)  # 100 bytes",
             "free(zz)"]
    heap = tmp_path / "t.heap"
    skipped = box.save(str(heap), typed)
    assert [(line, text) for line, text, _ in skipped] == [(3, "x = mallo(3)"), (5, "free(zz)")]
    assert heap.read_text().splitlines() == ["# two blocks", "a = malloc(100)", "#! x = mallo(3)",
                                             "b = calloc(4, 25)  # 100 bytes", "#! free(zz)"]
    rep = tmp_path / "t.rep"
    skipped = box.save(str(rep), typed)
    assert [line for line, _, _ in skipped] == [3, 5]
    assert "no block" in skipped[1][2] or "not live" in skipped[1][2]
    assert list(read_rep(rep)) == [(ALLOC, 0, 100), (ALLOC, 1, 100)]
    # lines that are not the trace (another one typed since) are not saved
    box = Sandbox([A, NamedOp(ALLOC, "b", 100)])
    other = box.save(str(tmp_path / "u.heap"), ["a = malloc(7)"])
    assert other == [] and (tmp_path / "u.heap").read_text().splitlines() == ["a = malloc(100)",
                                                                              "b = malloc(100)"]
