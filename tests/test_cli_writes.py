"""What the command line writes, and what its exit status says (issue 19):
outputs checked before any work and written atomically, an output never one
of the inputs, ``compare``'s exit 1 when a row failed, and options that were
silently ignored (a heap limit beside a pool, an empty --compare list)
refused with a message naming them."""

import errno
import gzip
import hashlib
import json
import os

import pytest

import heapscope.experiments
import heapscope.traces.rep
from heapscope.cli import main
from heapscope.traces import read_rep

LTRACE = "malloc(10) = 0x1000\nmalloc(20) = 0x2000\nfree(0x1000) = <void>\n"
LTRACE_OPS = [("a", 0, 10), ("a", 1, 20), ("f", 0), ("f", 1)]   # live blocks freed at the end


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def digest(path) -> str:
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


def ops(trace):
    return [("a", i, s) if k == 0 else ("f", i) if k == 1 else ("r", i, s) for k, i, s in trace]


def leftovers(folder, *keep):
    return sorted(set(os.listdir(folder)) - set(keep))


# -------------------------------------------------------------------- convert
@pytest.mark.parametrize("text, name", [(LTRACE, "calls.txt"),
                                        ("0\n1\n2\n1\na 0 10\nf 0\n", "t.rep")])
def test_convert_onto_its_input_is_refused_and_the_input_kept(tmp_path, capsys, text, name):
    src = tmp_path / name
    src.write_text(text)
    before = digest(src)
    code, _, err = run(capsys, "convert", src, "-o", src)
    assert code == 2
    assert f"{src}: the converted trace would overwrite its input {src}" in err
    assert "Traceback" not in err
    assert digest(src) == before


def test_convert_onto_its_input_through_a_link_is_refused(tmp_path, capsys):
    src = tmp_path / "calls.txt"
    src.write_text(LTRACE)
    link = tmp_path / "calls.rep"
    link.symlink_to(src)
    before = digest(src)
    code, _, err = run(capsys, "convert", src, "-o", link)
    assert code == 2 and f"would overwrite its input {src}" in err
    assert digest(src) == before and link.is_symlink()


def test_convert_into_a_missing_folder_says_so_before_reading(tmp_path, capsys):
    # the input is bad too: the output is looked at first, before any reading
    src = tmp_path / "bad.txt"
    src.write_text("malloc(1) = 0x1\nfree(0x1, 2) = <void>\n")
    code, _, err = run(capsys, "convert", src, "-o", tmp_path / "nowhere" / "o.rep")
    assert code == 2
    assert f"the folder {tmp_path / 'nowhere'} does not exist" in err and "free takes" not in err


class FailingGzip(gzip.GzipFile):
    """A gzip stream whose disk fills after a few bytes."""

    def write(self, data):
        super().write(bytes(data)[:5])
        raise OSError(errno.ENOSPC, "No space left on device")


def test_convert_failing_mid_write_leaves_the_previous_output(tmp_path, capsys, monkeypatch):
    src = tmp_path / "calls.txt"
    src.write_text(LTRACE)
    out = tmp_path / "calls.rep.gz"
    assert main(["convert", str(src), "-o", str(out)]) == 0
    assert ops(read_rep(out)) == LTRACE_OPS
    before = digest(out)
    capsys.readouterr()
    src.write_text(LTRACE + "malloc(30) = 0x3000\n")
    monkeypatch.setattr(heapscope.traces.rep.gzip, "GzipFile", FailingGzip)
    code, _, err = run(capsys, "convert", src, "-o", out)
    assert code == 2
    assert f"{out}: cannot write the file: No space left on device" in err
    assert digest(out) == before                         # the old output, whole
    assert leftovers(tmp_path, "calls.txt", "calls.rep.gz") == []


# ----------------------------------------------------------------- experiment
SMALL = ["vo1989", "-s", "bsd-buckets", "-X", "runs=1", "-W", "steps=300", "-j", "1"]


def test_experiment_outputs_are_checked_before_it_runs(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(heapscope.experiments, "run_experiment",
                        lambda *a, **k: pytest.fail("the experiment ran"))
    missing = tmp_path / "missing"
    for option, what in (("--plot", "chart"), ("--output", "table")):
        code, out, err = run(capsys, "experiment", *SMALL, option, missing / "x.png")
        assert code == 2 and out == ""
        assert f"{missing / 'x.png'}: cannot write the {what}: the folder {missing} does not exist" in err
    code, _, err = run(capsys, "experiment", *SMALL, "--plot", tmp_path)
    assert code == 2 and "it is a folder" in err
    same = tmp_path / "both.png"
    code, _, err = run(capsys, "experiment", *SMALL, "--plot", same, "-o", same)
    assert code == 2 and "--output and --plot name the same file" in err


def test_a_chart_that_cannot_be_saved_does_not_lose_the_table(tmp_path, capsys, monkeypatch):
    import heapscope.gui.experiment_chart as chart

    def full_disk(data, path):
        with open(path, "wb") as f:       # half a PNG, then the disk is full
            f.write(b"\x89PNG")
        raise OSError(errno.ENOSPC, "No space left on device")
    monkeypatch.setattr(chart, "save_chart", full_disk)
    plot = tmp_path / "vo.png"
    code, out, err = run(capsys, "experiment", *SMALL, "--format", "csv", "--plot", plot)
    assert code == 2 and f"{plot}: cannot write the chart: No space left on device" in err
    rows = out.splitlines()
    assert rows[0].startswith("table,strategy") and any(",bsd-buckets," in r for r in rows[1:])
    assert leftovers(tmp_path) == []                     # no half PNG, no temporary


def test_experiment_writes_its_table_to_a_file(tmp_path, capsys):
    printed = run(capsys, "experiment", *SMALL, "--format", "json")
    assert printed[0] == 0
    target = tmp_path / "vo.json"
    target.write_text("old")
    target.chmod(0o640)
    code, out, err = run(capsys, "experiment", *SMALL, "--format", "json", "-o", target)
    assert code == 0 and out == "" and str(target) in err
    written = json.loads(target.read_text())
    shown = json.loads(printed[1])
    for ours, theirs in zip(written["tables"], shown["tables"]):      # the same table ...
        assert [c["key"] for c in ours["columns"]] == [c["key"] for c in theirs["columns"]]
        assert [(r["strategy"], r["salloc"], r["sarena"]) for r in ours["rows"]] == \
            [(r["strategy"], r["salloc"], r["sarena"]) for r in theirs["rows"]]   # ... times aside
    assert written["tables"][0]["rows"][0]["strategy"] == "bsd-buckets"
    assert oct(os.stat(target).st_mode & 0o777) == oct(0o640)
    assert leftovers(tmp_path, "vo.json") == []


# -------------------------------------------------------------------- compare
def test_compare_exits_1_when_a_row_failed_and_prints_the_others(capsys):
    code, out, err = run(capsys, "compare", "vo1989:steps=100", "-s", "tlsf", "-s", "next-fit",
                         "--pool-size", "5G", "--format", "json")
    assert code == 1
    rows = {r["strategy"]: r for r in json.loads(out)}
    assert "too large" in rows["tlsf"]["error"]
    assert rows["next-fit"]["error"] is None and rows["next-fit"]["ops"] == 200
    assert "heapscope: tlsf not run" in err
    code, out, _ = run(capsys, "compare", "vo1989:steps=100", "-s", "tlsf", "-s", "next-fit")
    assert code == 0 and "next-fit" in out


def test_compare_help_and_the_readme_give_the_exit_statuses(capsys):
    from heapscope.cli import COMPARE_EXIT_STATUSES
    with pytest.raises(SystemExit):
        main(["compare", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert " ".join(COMPARE_EXIT_STATUSES.split()) in text
    for status in ("0 every strategy ran", "1 some strategy did not run", "2 bad input"):
        assert status in text
    readme = open(os.path.join(os.path.dirname(__file__), "..", "README.md")).read()
    command_line = " ".join(readme.split("## Command line")[1].split("\n## ")[0].split())
    assert "exit status is 0 when every strategy ran, 1 when some did not" in command_line
    assert "write atomically" in command_line


# ------------------------------------------------------- pool and heap limit
@pytest.mark.parametrize("argv, named", [
    (["--pool-size", "64K", "--heap-limit", "1K"], ["--heap-limit", "--pool-size"]),
    (["--pool-size", "64K", "-P", "tlsf.heap_limit=1K"], ["-P tlsf.heap_limit=1K", "--pool-size"]),
    (["-P", "tlsf.pool_size=64K", "-P", "tlsf.heap_limit=1K"],
     ["-P tlsf.heap_limit=1K", "-P tlsf.pool_size=64K"]),
])
def test_a_heap_limit_beside_a_pool_is_an_error_naming_both(capsys, argv, named):
    code, out, err = run(capsys, "compare", "vo1989:steps=50", "-s", "tlsf", "-s", "next-fit", *argv)
    assert code == 2 and out == ""
    assert f"{named[0]} and {named[1]} cannot be given together" in err
    assert "Traceback" not in err


def test_a_heap_limit_beside_a_pool_of_another_strategy_is_fine(capsys):
    code, _, err = run(capsys, "compare", "vo1989:steps=50", "-s", "tlsf", "-s", "next-fit",
                       "-P", "tlsf.pool_size=64K", "-P", "next-fit.heap_limit=8K", "-f", "csv")
    assert code == 0, err
    # -P S.pool_size=none takes the common pool back for that one strategy
    code, _, err = run(capsys, "compare", "vo1989:steps=50", "-s", "tlsf", "-s", "next-fit",
                       "--pool-size", "64K", "-P", "next-fit.pool_size=none",
                       "-P", "next-fit.heap_limit=8K", "-f", "csv")
    assert code == 0, err


def test_the_window_refuses_a_heap_limit_beside_a_pool(capsys, monkeypatch):
    from heapscope import gui
    import heapscope.gui.app  # noqa: F401  (gui.app below)
    monkeypatch.setattr(gui.app, "main", lambda request: pytest.fail("the window opened"))
    code, _, err = run(capsys, "open", "--pool-size", "1M", "--heap-limit", "64K")
    assert code == 2 and "--heap-limit and --pool-size" in err


# ---------------------------------------------------------------- open --compare
@pytest.mark.parametrize("given, message", [
    (",", "no strategy named in ','"),
    ("", "no strategy named in ''"),
    ("tlsf,,buddy", "an empty name in 'tlsf,,buddy'"),
    ("tlsf,", "an empty name in 'tlsf,'"),
    ("tlsf,nope", "unknown strategy 'nope'"),
    ("tlsf", "compare mode shows 2 to 7 strategies, 'tlsf' names 1"),
    ("tlsf,buddy,tlsf", "tlsf named twice"),
    (",".join(["next-fit", "first-fit", "rotating-list", "splay-best-fit", "buddy", "tlsf",
               "bsd-buckets", "dlmalloc"]), "names 8"),
])
def test_a_bad_compare_list_is_refused_before_any_window(capsys, monkeypatch, given, message):
    from heapscope import gui
    import heapscope.gui.app  # noqa: F401  (gui.app below)
    monkeypatch.setattr(gui.app, "main", lambda request: pytest.fail("the window opened"))
    with pytest.raises(SystemExit) as info:
        main(["open", "--compare", given])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "argument --compare/-c" in err and message in err


def test_a_good_compare_list_reaches_the_window(monkeypatch):
    from heapscope import gui
    import heapscope.gui.app  # noqa: F401  (gui.app below)
    calls = []
    monkeypatch.setattr(gui.app, "main", lambda request: calls.append(request) or 0)
    assert main(["open", "--compare", " tlsf , buddy"]) == 0
    assert calls[0].compare == ["tlsf", "buddy"] and calls[0].strategy == "tlsf"


def test_convert_to_the_standard_output_writes_into_the_pipe(tmp_path):
    # /dev/fd/1, not /dev/stdout: a broken version run as root fails in /proc
    # instead of replacing /dev/stdout with a file.
    import subprocess
    import sys
    src = tmp_path / "calls.txt"
    src.write_text(LTRACE)
    result = subprocess.run([sys.executable, "-m", "heapscope", "convert", str(src), "-o", "/dev/fd/1"],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["0", "2", "4", "1", "a 0 10", "a 1 20", "f 0", "f 1"]


def test_experiment_output_may_not_overwrite_a_strategy_file(tmp_path, capsys, monkeypatch):
    import shutil
    from heapscope.allocators import plugins
    mine = tmp_path / "segfit.py"
    shutil.copy(os.path.join(os.path.dirname(__file__), "..", "examples", "segfit.py"), mine)
    before = digest(mine)
    monkeypatch.setattr(heapscope.experiments, "run_experiment",
                        lambda *a, **k: pytest.fail("the experiment ran"))
    # an earlier test in this worker may have loaded examples/segfit.py's SegFit
    # under the same name (which test runs where is xdist's choice)
    plugins.forget("segfit")
    try:
        code, _, err = run(capsys, "experiment", *SMALL, "--allocator", f"{mine}:SegFit", "-o", mine)
    finally:
        plugins.forget("segfit")
    assert code == 2 and f"would overwrite its input {mine}" in err
    assert digest(mine) == before


def test_experiment_exits_1_when_a_strategy_failed_and_its_row_says_why(capsys):
    from heapscope.allocators import plugins
    broken = os.path.join(os.path.dirname(__file__), "..", "examples", "broken.py")
    try:
        code, out, err = run(capsys, "experiment", "vo1989", "-X", "runs=1", "-W", "steps=2000",
                             "-X", "machines=lp64", "-j", "1", "--allocator", f"{broken}:Broken",
                             "-s", "broken", "-s", "tlsf")
    finally:
        plugins.forget("broken")
    assert code == 1, err
    row = next(line for line in out.splitlines() if line.startswith("broken "))
    assert "your _malloc returned" in row and "the same block was handed out twice" in row
    assert any(line.startswith("tlsf ") for line in out.splitlines())


def test_experiment_errors_point_to_a_command_that_exists(capsys):
    code, _, err = run(capsys, "experiment", "coppa2010", "-W", "steps=5")
    assert code == 2 and "-W does not apply" in err
    assert "--list" not in err        # there is no such option: the bare command lists them
    assert "heapscope experiment, with no name, lists them" in err
    assert main(["experiment"]) == 0 and "coppa2010:" in capsys.readouterr().out


def test_a_strategy_parameter_for_a_strategy_not_run_is_named_not_ignored(capsys):
    code, _, err = run(capsys, "compare", "vo1989:steps=50", "-s", "tlsf", "-P", "buddy.max_order=16",
                       "-f", "csv")
    assert code == 0
    assert "warning: -P buddy.max_order: buddy is not run here (only tlsf); ignored" in err
    code, _, err = run(capsys, "inspect", "vo1989:steps=50", "-s", "tlsf", "--step", "3",
                       "-P", "buddy.max_order=16", "-P", "tlsf.zero_returns_null=yes")
    assert code == 0 and "-P buddy.max_order: buddy is not run here" in err and "tlsf.zero" not in err
    code, _, err = run(capsys, "compare", "vo1989:steps=50", "-P", "buddy.max_order=16", "-f", "csv")
    assert code == 0 and "warning" not in err        # every strategy runs, buddy among them
