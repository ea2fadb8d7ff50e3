"""``heapscope inspect``: one step without a window, as text for a student and
as JSON for a script (heapscope/inspection.py, docs/structure.md)."""

import json
import subprocess
import sys

import pytest

from heapscope.allocators import make_strategy, strategy_names
from heapscope.allocators.explain import explain_step
from heapscope.allocators.replay import Program, apply_op
from heapscope.allocators.structure import check_against_heap
from heapscope.cli import main
from heapscope.inspection import InspectError, format_text, inspect_step
from heapscope.traces import Trace, make_workload

ALL = strategy_names()
TRACE = make_workload("vo1989", steps=300, seed=11)

#: the keys docs/structure.md promises per strategy, besides kind, sizes, pointers, outside
KIND_KEYS = {
    "next-fit": {"free_list", "rover"}, "first-fit": {"free_list", "rover"},
    "rotating-list": {"free_list", "head"}, "splay-best-fit": {"root", "nodes", "wilderness"},
    "buddy": {"avail"}, "tlsf": {"fl_bitmap", "sl_bitmap", "lists"}, "bsd-buckets": {"buckets"},
    "dlmalloc": {"bins", "binblocks", "bin_floor", "last_remainder", "top", "mapped"},
    "segregated-first-fit": {"lists", "class_low", "class_high", "order"},
    "v7-malloc": {"ring", "rover", "top"},
    "gnu-malloc": {"blocks", "free_clusters", "heapindex", "fraglists", "frag_blocks"},
    "phkmalloc": {"pages", "chunk_pages", "chunk_lists", "free_runs"},
}


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def replayed(name, trace, step):
    s = make_strategy(name)
    program = Program()
    rec = None
    for i, (kind, ident, size) in enumerate(trace):
        if i == step:
            break
        s.record = i == step - 1
        rec = apply_op(s, program, kind, ident, size)
    return s, rec


@pytest.mark.parametrize("name", ALL)
def test_json_keys_and_shapes(name, capsys):
    for step in (0, 1, 157, len(TRACE)):
        code, out, err = run(capsys, "inspect", "vo1989:steps=300,seed=11", "-s", name, "--step", str(step),
                             "--format", "json")
        assert code == 0, err
        data = json.loads(out)
        assert {"step", "operation", "events", "blocks", "structure"} <= set(data)
        assert data["step"] == step
        if step == 0:
            assert data["operation"] is None and data["events"] == []
        else:
            op = data["operation"]
            kind, ident, size = TRACE.op(step - 1)
            assert op["kind"] == {0: "malloc", 1: "free", 2: "realloc"}[kind] and op["id"] == ident
            if kind != 1:
                assert op["size"] == size
            assert op["description"].startswith(f"step {step}: ")
            assert data["events"] and all(isinstance(e["type"], str) and isinstance(e["text"], str) and e["text"]
                                          for e in data["events"])
        for b in data["blocks"]:
            assert len(b) == 3 and isinstance(b[0], int) and isinstance(b[1], int) and b[1] > 0
            assert b[2] in ("used", "free", "meta")
        if data["blocks"]:
            assert [b[0] for b in data["blocks"]] == sorted(b[0] for b in data["blocks"])
        struct = data["structure"]
        assert KIND_KEYS[name] <= set(struct)
        # exactly Strategy.structure() of the same heap, as JSON writes it
        s, _ = replayed(name, TRACE, step)
        assert struct == json.loads(json.dumps(s.structure()))
        assert data["blocks"] == [[b[0], b[1], b[2]] for b in s.walk_tuples()]


@pytest.mark.parametrize("name", ALL)
def test_every_free_block_is_in_the_structure_once_and_events_are_explain_steps(name):
    for step in (1, 2, 60, 211, 299, 300):
        report = inspect_step(TRACE, name, step)
        check_against_heap(report["structure"], report["blocks"])
        s, rec = replayed(name, TRACE, step)
        assert [(e["type"], e["text"]) for e in report["events"]] == [
            (x.type, x.text) for x in explain_step(s, rec)]
        assert [e["addrs"] for e in report["events"]] == [list(x.addrs) for x in explain_step(s, rec)]


def test_fields_of_the_events_are_data():
    # buddy's first malloc, worked in tests/test_buddy.py: its R4 inserts are here as data
    report = inspect_step(Trace.from_ops([("a", 0, 40)]), "buddy", 1)
    inserts = [e["fields"] for e in report["events"] if e["type"] == "ListInsert"]
    assert inserts[0] == {"addr": 0, "size": 4096, "where": (12,)}
    assert [i["addr"] for i in inserts[1:]] == [2048, 1024, 512, 256, 128, 64]
    data = json.loads(json.dumps({k: v for k, v in report.items() if not k.startswith("_")}))
    assert data["events"][0] == {"type": "AvailProbe", "text": "R1: AVAIL[6] empty", "addrs": [],
                                 "fields": {"order": 6, "first": None}}


@pytest.mark.parametrize("name", ALL)
def test_text_names_the_operation_and_lists_the_events_in_order(name, capsys):
    step = 157
    code, out, err = run(capsys, "inspect", "vo1989:steps=300,seed=11", "-s", name, "--step", str(step))
    assert code == 0, err
    report = inspect_step(TRACE, name, step)
    kind, ident, size = TRACE.op(step - 1)
    assert f"of id {ident}" in out
    assert report["operation"]["description"] in out
    pos = 0
    for i, e in enumerate(report["events"], 1):
        line = f"{i}. {e['text']}"
        found = out.find(line, pos)
        assert found >= 0, line
        pos = found
    assert f"Structure ({report['structure']['kind']})" in out
    assert "Heap: " in out


def test_text_of_step_zero_and_of_a_pool():
    text = format_text(inspect_step(TRACE, "tlsf", 0))
    assert "Operation: none yet" in text and "nothing" in text
    text = format_text(inspect_step(TRACE, "tlsf", 0, {"pool_size": 4096}))
    assert "list (" in text                  # the pool is one free block on its list from the start


def test_text_summarises_a_big_heap_and_all_shows_every_block():
    trace = make_workload("vo1989", steps=2000, seed=2)
    report = inspect_step(trace, "next-fit", 1500)
    short, full = format_text(report), format_text(report, all_blocks=True)
    assert len(report["blocks"]) > 64
    assert "not shown" in short and "not shown" not in full
    assert sum(1 for line in full.splitlines() if line.strip().startswith("0x")) >= len(report["blocks"])


def test_the_tree_is_drawn_sideways_when_small():
    ops = [("a", i, 100 + 40 * i) for i in range(12)] + [("a", 100 + i, 10) for i in range(12)]
    ops = [op for pair in zip(ops[:12], ops[12:]) for op in pair] + [("f", i) for i in range(0, 12, 2)]
    trace = Trace.from_ops(ops)
    report = inspect_step(trace, "splay-best-fit", len(trace))
    text = format_text(report)
    nodes = report["structure"]["nodes"]
    assert len(nodes) == 6            # six sizes freed between used separators
    lines = [line.strip() for line in text.splitlines()]
    drawn = [line for line in lines if "@0x" in line]
    # largest size on top: the reverse in-order of the structure's nodes
    assert [int(line.split("@")[0]) for line in drawn] == [n["key"] for n in reversed(nodes)]


def test_bad_steps_and_options_exit_2(capsys):
    n = len(TRACE)
    for step in (-1, n + 1):
        code, out, err = run(capsys, "inspect", "vo1989:steps=300,seed=11", "-s", "tlsf", "--step", str(step))
        assert code == 2 and f"outside 0..{n}" in err and out == ""
    with pytest.raises(SystemExit) as info:                          # argparse says it
        main(["inspect", "vo1989:steps=300", "-s", "nope", "--step", "1"])
    assert info.value.code == 2 and "unknown strategy 'nope'" in capsys.readouterr().err
    code, _, err = run(capsys, "inspect", "vo1989:steps=300", "-s", "tlsf", "--step", "1", "-P", "tlsf.bogus=1")
    assert code == 2 and "tlsf" in err and "bogus" in err
    code, _, err = run(capsys, "inspect", "no-such-file.rep", "-s", "tlsf", "--step", "1")
    assert code == 2 and "no-such-file.rep" in err
    with pytest.raises(SystemExit) as info:
        main(["inspect", "vo1989:steps=300", "-s", "tlsf"])       # --step is required
    assert info.value.code == 2
    with pytest.raises(InspectError):
        inspect_step(TRACE, "tlsf", n + 5)


def test_strategy_options_reach_the_strategy(capsys):
    code, out, _ = run(capsys, "inspect", "vo1989:steps=300,seed=11", "-s", "bsd-buckets", "--step", "1",
                       "--word", "4", "-P", "bsd-buckets.pagesize=1024", "--format", "json")
    assert code == 0
    sizes = json.loads(out)["structure"]["block_sizes"]
    assert sizes["7"] == 1024 + 1024          # a page-sized bucket gets the extra (1 KiB) page
    code, out, _ = run(capsys, "inspect", "vo1989:steps=300,seed=11", "-s", "tlsf", "--step", "0",
                       "--pool-size", "4K", "--format", "json")
    assert code == 0 and sum(b[1] for b in json.loads(out)["blocks"]) == 4096


def test_python_m_heapscope_inspect_runs_without_a_display():
    proc = subprocess.run([sys.executable, "-m", "heapscope", "inspect", "vo1989:steps=50", "-s", "buddy",
                           "--step", "3", "--format", "json"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["structure"]["kind"] == "buddy"
