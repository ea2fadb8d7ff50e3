"""``heapscope experiment coppa2010 --traces FOLDER`` (issue 26): a user's
corpus of recorded traces through the experiment's machinery.  Each row is
checked against ``heapscope compare`` run on that trace alone (another
command, another code path: allocators/parallel.py's summary), not against
the experiment's own code."""

import json

import pytest

from heapscope.cli import main
from heapscope.traces import make_workload, write_rep

BSA = "segregated-first-fit"
#: what compare reports -> the experiment's column for it
SAME = {"utilisation": "util", "max_heap": "max_heap", "search_mean": "search_mean",
        "work_per_op": "work_per_op"}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    folder = tmp_path_factory.mktemp("corpus")
    for seed, steps in ((1, 120), (2, 160), (3, 90)):
        write_rep(make_workload("vo1989", seed=seed, steps=steps), folder / f"prog{seed}.rep")
    (folder / ".hidden.rep").write_text("not a trace\n")     # hidden: not part of the corpus
    return folder


def _json(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)


def test_each_traces_rows_are_what_compare_gives_on_it(corpus, capsys):
    result = _json(capsys, "experiment", "coppa2010", "--traces", str(corpus), "-s", "tlsf",
                   "-s", BSA, "-f", "json", "-j", "1")
    files = sorted(str(p) for p in corpus.glob("prog*.rep"))
    tables = {t["key"]: t for t in result["tables"]}
    assert [t["key"] for t in result["tables"]] == files + ["all"]
    for path in files:
        compared = {r["strategy"]: r for r in _json(capsys, "compare", path, "-s", "tlsf", "-s", BSA,
                                                    "--word", "8", "-f", "json")}
        rows = {r["strategy"]: r for r in tables[path]["rows"]}
        assert set(rows) == {"tlsf", BSA}
        for name in ("tlsf", BSA):
            for ours, theirs in SAME.items():
                assert rows[name][theirs] == pytest.approx(compared[name][ours], rel=1e-12), \
                    (path, name, ours)
        # the ratio column divides by the segregated first fit's figure on this trace
        assert rows["tlsf"]["util_x"] == pytest.approx(
            compared["tlsf"]["utilisation"] / compared[BSA]["utilisation"])


def test_a_broken_trace_is_named_at_its_line_before_any_replay(corpus, tmp_path, capsys):
    folder = tmp_path / "mixed"
    folder.mkdir()
    (folder / "good.rep").write_bytes((corpus / "prog1.rep").read_bytes())
    lines = (corpus / "prog3.rep").read_text().splitlines()
    lines[6] = "a 0 lots"           # line 7: a size that is no number
    (folder / "broken.rep").write_text("\n".join(lines) + "\n")
    code = main(["experiment", "coppa2010", "--traces", str(folder), "-s", "tlsf"])
    out, err = capsys.readouterr()
    assert code == 2
    assert err.startswith(f"heapscope: error: {folder / 'broken.rep'}:7: ")
    assert "Traceback" not in err and out == ""


@pytest.mark.parametrize("argv, words", [
    (["experiment", "vo1989", "--traces", "."], "experiment vo1989 replays workloads it generates: "
                                                "--traces does not apply (experiments over recorded "
                                                "traces: coppa2010)"),
    (["experiment", "coppa2010", "--traces", ".", "-X", "traces=gcc-cc1"],
     "--traces and -X traces=... both name the traces: give one"),
])
def test_traces_where_they_do_not_apply_are_refused(capsys, argv, words):
    assert main(argv) == 2
    assert capsys.readouterr().err == f"heapscope: error: {words}\n"


def test_an_empty_folder_is_refused(tmp_path, capsys):
    assert main(["experiment", "coppa2010", "--traces", str(tmp_path)]) == 2
    assert capsys.readouterr().err == f"heapscope: error: {tmp_path}: the folder holds no trace files\n"
