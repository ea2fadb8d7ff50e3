"""The names a person gives blocks travel on the Trace (issue 21): a
readable trace's `a = malloc(240)` is "a (id 0)" in the step's words, in
`heapscope inspect` and `heapscope find`, where a .rep says "id 0"."""

from __future__ import annotations

import json

from heapscope.allocators.grading import describe_op
from heapscope.allocators.replay import Timeline
from heapscope.cli import main
from heapscope.sandbox import Sandbox
from heapscope.traces import load_trace, write_rep
from heapscope.traces.named_ops import NamedOp
from heapscope.traces.readable import parse_readable, write_readable
from heapscope.traces.trace import ALLOC, FREE, Trace, block_words

DEMO = "\n".join(["a = malloc(240)", "buf = malloc(16)", "free(a)", "a 7 24", "malloc(8)", ""])


def test_a_readable_trace_carries_the_names_written_and_no_others():
    trace = parse_readable(DEMO)
    # a -> 0, buf -> 1, the .rep line keeps id 7, the unnamed malloc takes id 2
    assert list(trace.ids) == [0, 1, 0, 7, 2]
    assert trace.names == {0: "a", 1: "buf"}          # a .rep id and no name are no names
    assert Trace.from_ops([(ALLOC, 0, 8)]).names is None
    assert block_words(0, trace.names) == "a (id 0)" and block_words(7, trace.names) == "id 7"
    assert describe_op(trace, 3) == "free of a (id 0)"
    # written back, the names are the trace's own
    assert write_readable(trace, title="").splitlines()[:2] == ["a = malloc(240)", "buf = malloc(16)"]


def test_the_step_words_say_the_name():
    tl = Timeline(parse_readable(DEMO), "first-fit").build()
    tl.seek(1)
    assert tl.describe().startswith("step 1: malloc(240) for a (id 0) -> 0x")
    tl.seek(3)
    assert tl.describe().startswith("step 3: free(0x") and " for a (id 0)" in tl.describe()
    tl.seek(4)
    assert "for id 7 ->" in tl.describe()


def test_a_sandbox_trace_carries_its_names():
    box = Sandbox([NamedOp(ALLOC, "x", 10), NamedOp(ALLOC, "y", 20), NamedOp(FREE, "x")])
    assert box.trace.names == {0: "x", 1: "y"}
    tl = Timeline(box.trace, "tlsf").build()
    tl.seek(2)
    assert "malloc(20) for y (id 1)" in tl.describe()


def test_inspect_and_find_say_the_name_and_a_rep_keeps_its_ids(tmp_path, capsys):
    heap = tmp_path / "demo.heap"
    heap.write_text(DEMO)
    rep = tmp_path / "demo.rep"
    write_rep(load_trace(str(heap)), rep)
    assert main(["inspect", str(heap), "-s", "first-fit", "-n", "3"]) == 0
    out = capsys.readouterr().out
    assert "Operation: free of a (id 0)" in out
    assert main(["inspect", str(heap), "-s", "first-fit", "-n", "2"]) == 0
    out = capsys.readouterr().out
    assert "  a (id 0)" in out and "  buf (id 1)" in out           # the heap's used blocks
    assert main(["inspect", str(heap), "-s", "first-fit", "-n", "1", "-f", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["operation"]["name"] == "a"
    assert main(["find", str(heap), "-s", "first-fit", "--when", "free"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2 and " for a (id 0)" in lines[1]
    # the .rep of the same trace: ids, as before
    assert main(["find", str(rep), "-s", "first-fit", "--when", "free"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert " for id 0" in lines[1] and "a (id" not in lines[1]
    assert main(["inspect", str(rep), "-s", "first-fit", "-n", "3"]) == 0
    assert "Operation: free of id 0" in capsys.readouterr().out
