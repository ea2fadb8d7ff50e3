"""The heapscope command without a window: compare, check, and its errors."""

import csv
import io
import json
import os
import re
import subprocess
import sys

import pytest

from heapscope.allocators.registry import strategy_names
from heapscope.cli import main


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_compare_table_has_one_row_per_strategy(capsys):
    code, out, err = run(capsys, "compare", "vo1989:steps=600")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].startswith("# vo1989")
    header = lines[1]
    for title in ("max live (Salloc)", "max heap (Sarena)", "waste", "JW#1", "JW#4", "search p99", "work/op"):
        assert title in header
    names = [line.split()[0] for line in lines[3:]]
    assert names == strategy_names()


def test_compare_csv_and_json_agree(capsys):
    code, out, _ = run(capsys, "compare", "vo1989:steps=300", "-s", "next-fit", "-s", "first-fit",
                       "--format", "csv")
    assert code == 0
    rows = list(csv.DictReader(io.StringIO(out)))
    assert [r["strategy"] for r in rows] == ["next-fit", "first-fit"]
    code, out, _ = run(capsys, "compare", "vo1989:steps=300", "-s", "next-fit", "-s", "first-fit",
                       "--format", "json")
    data = json.loads(out)
    assert [d["max_heap"] for d in data] == [int(r["max_heap"]) for r in rows]
    assert data[0]["max_live"] == data[1]["max_live"] > 0   # same trace, same live bytes
    assert data[0]["waste"] == pytest.approx((data[0]["max_heap"] - data[0]["max_live"]) / data[0]["max_live"])


def test_compare_under_a_heap_limit_reports_failures(capsys):
    code, out, _ = run(capsys, "compare", "vo1989:steps=400", "-s", "next-fit", "--heap-limit", "32K",
                       "--format", "json")
    assert code == 0
    row = json.loads(out)[0]
    assert row["failed"] > 0 and row["max_heap"] <= 32 * 1024


def test_check_prints_statistics(capsys, tmp_path):
    path = tmp_path / "t.rep"
    path.write_text("0\n2\n3\n1\na 0 10\na 1 20\nf 0\n")
    code, out, _ = run(capsys, "check", str(path))
    assert code == 0
    assert "OK" in out
    assert any(line.split()[:2] == ["max_live_bytes", "30"] for line in out.splitlines())


def test_counts_of_one_are_said_in_the_singular(capsys, tmp_path):
    # "1 ids ... in 1 blocks", "# t: 1 ops", "1 requests": one shared rule
    # (allocators/phrases.py count) wherever the command line prints a count
    src = tmp_path / "one.txt"
    src.write_text("malloc(8) = 0x10\nfree(0x10) = <void>\n")
    code, _, err = run(capsys, "convert", str(src), "-o", str(tmp_path / "one.rep"))
    assert code == 0, err
    assert err.splitlines()[0].endswith(": 2 ops, 1 id, peak live 8 bytes in 1 block")
    one = tmp_path / "single.rep"
    one.write_text("0\n1\n1\n1\na 0 2000000000\n")
    code, out, err = run(capsys, "compare", str(one), "-s", "first-fit")
    assert code == 0, err
    assert out.splitlines()[0] == "# single: 1 op"
    code, out, err = run(capsys, "check", str(one))
    assert code == 0
    assert "1 request past " in err and "1 requests" not in err


def test_the_plural_rule_worked_by_hand():
    from heapscope.allocators.phrases import count
    assert [count(n, "call", grouped=True) for n in (0, 1, 2, 12345)] == \
        ["0 calls", "1 call", "2 calls", "12,345 calls"]
    assert count(1, ("process", "processes")) == "1 process"
    assert count(1234, ("process", "processes")) == "1234 processes"


def test_bad_trace_gives_file_and_line_not_a_traceback(capsys, tmp_path):
    path = tmp_path / "broken.rep"
    path.write_text("0\n2\n3\n1\na 0 10\nf 0\nf 0\n")
    code, out, err = run(capsys, "compare", str(path))
    assert code == 2
    assert f"{path}:7:" in err and "double free" in err
    assert "Traceback" not in err


def test_unknown_strategy_and_workload_are_one_line_errors(capsys):
    code, _, err = run(capsys, "compare", "vo1989:steps=50", "-s", "nope")
    assert code == 2 and "unknown strategy 'nope'" in err
    code, _, err = run(capsys, "compare", "no-such-workload")
    assert code == 2 and "no-such-workload" in err


def test_installed_command_runs_compare_on_the_default_trace():
    result = subprocess.run([sys.executable, "-m", "heapscope", "compare", "-s", "next-fit"],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert "next-fit" in result.stdout


def test_strategy_parameters_reach_the_strategy(capsys):
    # 4.3BSD on a VAX: 4-byte words, 1 KiB pages (seed 000's setting).
    code, out, _ = run(capsys, "compare", "vo1989:steps=400", "-s", "bsd-buckets", "--word", "4",
                       "-P", "bsd-buckets.pagesize=1024", "--format", "json")
    assert code == 0
    vax = json.loads(out)[0]
    code, out, _ = run(capsys, "compare", "vo1989:steps=400", "-s", "bsd-buckets", "--format", "json")
    lp64 = json.loads(out)[0]
    assert vax["max_heap"] != lp64["max_heap"]
    code, _, err = run(capsys, "compare", "vo1989:steps=50", "-s", "tlsf", "-P", "tlsf.no_such=1")
    assert code == 2 and "no_such" in err
    with pytest.raises(SystemExit) as exit_info:     # argparse's own usage error
        main(["compare", "vo1989:steps=50", "-P", "pagesize=1"])
    assert exit_info.value.code == 2
    assert "STRATEGY.NAME=VALUE" in capsys.readouterr().err


def test_no_arguments_and_open_hand_their_parsed_options_to_the_window(monkeypatch):
    from heapscope import gui
    from heapscope.cli import WindowRequest
    import heapscope.gui.app  # noqa: F401  (gui.app below)
    calls = []
    monkeypatch.setattr(gui.app, "main", lambda request: calls.append(request) or 0)
    assert main([]) == 0
    assert main(["open", "vo1989:steps=50", "--strategy", "tlsf", "--align", "4",
                 "--pool-size", "2M", "--word", "4", "-P", "tlsf.zero_returns_null=yes"]) == 0
    assert main(["open", "--heap-limit", "1M"]) == 0
    assert calls == [WindowRequest(None, None, {}, {}),
                     WindowRequest("vo1989:steps=50", "tlsf",
                                   {"word": 4, "align": 4, "pool_size": 2 << 20},
                                   {"tlsf": {"zero_returns_null": True}}),
                     WindowRequest(None, None, {"heap_limit": 1 << 20}, {})]


def test_the_window_refuses_bad_options_before_opening(monkeypatch, capsys):
    from heapscope import gui
    import heapscope.gui.app  # noqa: F401  (gui.app below)
    monkeypatch.setattr(gui.app, "main", lambda request: pytest.fail("the window opened"))
    # the first strategy cannot take the pool: exit 2 with its reason, no window
    code, _, err = run(capsys, "open", "--strategy", "tlsf", "--pool-size", "5G")
    assert code == 2 and "pool_size" in err and "too large" in err
    code, _, err = run(capsys, "open", "-P", "next-fit.nalloc=0")
    assert code == 2 and "nalloc must be an integer in 1..1048576" in err
    with pytest.raises(SystemExit) as exit_info:
        main(["open", "--pool-size", "lots"])
    assert exit_info.value.code == 2
    assert "pool_size must be a size in bytes in 0..1T" in capsys.readouterr().err


def test_open_help_needs_no_display_and_no_qt():
    # The window's options live in the one parser: --help never imports Qt.
    code = ("import sys\n"
            "from heapscope.cli import main\n"
            "try:\n    main(['open', '--help'])\nexcept SystemExit as e:\n    code = e.code\n"
            "bad = [m for m in sys.modules if m.startswith(('PySide6', 'pyqtgraph', 'heapscope.gui'))]\n"
            "print(bad, file=sys.stderr); sys.exit(code or (1 if bad else 0))\n")
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert result.returncode == 0, result.stderr
    for option in ("--strategy", "--word", "--align", "--heap-limit", "--pool-size", "-P"):
        assert option in result.stdout


def test_without_a_display_the_window_says_why_instead_of_aborting(monkeypatch, capsys):
    from heapscope import gui
    import heapscope.gui.app  # noqa: F401  (gui.app below)
    monkeypatch.delenv("QT_QPA_PLATFORM", raising=False)
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.setattr(sys, "platform", "linux")
    assert gui.app.main([]) == 2
    err = capsys.readouterr().err
    assert "no display found" in err and "heapscope compare" in err
    monkeypatch.setenv("DISPLAY", ":0")
    assert gui.app.missing_display() is None


def test_compare_shows_progress_on_a_terminal_only(capsys, monkeypatch):
    class Terminal(io.StringIO):
        def isatty(self):
            return True

    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    assert main(["compare", "vo1989:steps=5000", "-s", "tlsf", "-s", "buddy", "-f", "csv"]) == 0
    shown = terminal.getvalue()
    # a bar per strategy (heapscope/console.py), each with its rate and time left
    moves = r"\x1b\[[0-9]*[AK]|\x1b\[\?25[lh]|\r"        # cursor up, erase line, cursor shown
    text = re.sub(r"\x1b\[[0-9;]*m", "", re.sub(moves, "\n", shown))     # and no colours
    bars = [line for line in text.splitlines() if "━" in line]
    assert {line.split()[0] for line in bars} == {"tlsf", "buddy"}
    assert all("ETA" in line for line in bars) and any("steps/s" in line for line in bars)
    # wiped at the end (the cursor goes up, each line erased), then the csv's header line
    assert shown.rsplit("\x1b[2K", 1)[-1].startswith("# vo1989")
    monkeypatch.undo()
    assert main(["compare", "vo1989:steps=5000", "-s", "tlsf", "-f", "csv"]) == 0
    assert "━" not in capsys.readouterr().err


def test_compare_keeps_no_checkpoints(capsys, monkeypatch):
    # A table never seeks: its replays pickle no checkpoint.  Forked workers
    # inherit the patched Timeline, and a checkpoint would fail its build.
    from heapscope import cli
    from heapscope.allocators.replay import Timeline

    def no_checkpoint(*args):
        raise AssertionError("compare kept a checkpoint")

    monkeypatch.setattr(Timeline, "_keep_checkpoint", no_checkpoint)
    monkeypatch.setattr(cli, "default_start_method", lambda: "fork")
    code, out, err = run(capsys, "compare", "vo1989:steps=300", "-s", "tlsf", "-s", "next-fit", "-f", "json")
    assert code == 0 and "not run" not in err
    assert [r["strategy"] for r in json.loads(out)] == ["tlsf", "next-fit"]


# ------------------------------------------------- the readable form (issue 21)
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def hs(capsys, *argv):
    """run() with paths as strings."""
    return run(capsys, *map(str, argv))


def docs_block(lang: str) -> str:
    """The ```lang block of docs/traces.md: the demonstration a teacher copies."""
    import re
    text = open(os.path.join(ROOT, "docs", "traces.md")).read()
    return re.search(rf"```{lang}\n(.+?)```", text, re.S).group(1)


def test_the_docs_demo_is_ten_operations_and_its_rep_as_the_docs_show(tmp_path, capsys):
    demo = tmp_path / "holes.heap"
    demo.write_text(docs_block("heap"))
    out = tmp_path / "holes.rep"
    code, _, err = hs(capsys, "convert", demo, "-o", out)
    assert code == 0, err
    assert out.read_text() == docs_block("rep")      # written out by hand in the docs
    code, text, _ = hs(capsys, "check", demo)
    assert code == 0 and "num_ops          10" in text


def test_the_readable_form_and_the_rep_it_saves_compare_identically(tmp_path, capsys):
    demo = tmp_path / "holes.heap"
    demo.write_text(docs_block("heap"))
    saved = tmp_path / "holes.rep"
    assert main(["convert", str(demo), "-o", str(saved)]) == 0
    tables = []
    for path in (demo, saved):
        code, out, err = hs(capsys, "compare", path, "-f", "json")
        assert code == 0 and "not run" not in err, err
        rows = json.loads(out)
        for row in rows:
            row.pop("cpu_s")                          # the one measure that is a clock
        tables.append(rows)
    assert [r["strategy"] for r in tables[0]] == strategy_names()
    assert tables[0] == tables[1]
    assert all(r["ops"] == 10 for r in tables[0])


def test_convert_a_rep_to_the_readable_form_and_back(tmp_path, capsys):
    rep = tmp_path / "t.rep"
    rep.write_text("0\n2\n4\n1\na 0 24\na 1 8\nr 0 48\nf 1\n")
    assert main(["convert", str(rep), "-o", str(tmp_path / "t.heap")]) == 0
    text = (tmp_path / "t.heap").read_text()
    assert text.splitlines()[1:] == ["a = malloc(24)", "b = malloc(8)", "a = realloc(a, 48)", "free(b)"]
    assert main(["convert", str(tmp_path / "t.heap"), "-o", str(tmp_path / "back.rep")]) == 0
    assert (tmp_path / "back.rep").read_text() == rep.read_text()
    # --to names the form whatever OUT is called; another name gets a .rep
    assert main(["convert", str(rep), "-o", str(tmp_path / "x.txt"), "--to", "heap"]) == 0
    assert (tmp_path / "x.txt").read_text() == text
    assert main(["convert", str(tmp_path / "t.heap"), "-o", str(tmp_path / "y.out")]) == 0
    assert (tmp_path / "y.out").read_text() == rep.read_text()
    capsys.readouterr()


def test_convert_of_a_bad_readable_trace_exits_2_naming_the_line(tmp_path, capsys):
    bad = tmp_path / "bad.heap"
    bad.write_text("a = malloc(8)\nfree(a)\n# again:\nfree(a)\n")
    out = tmp_path / "out.rep"
    out.write_text("before")
    code, _, err = hs(capsys, "convert", bad, "-o", out)
    assert code == 2
    assert f"heapscope: error: {bad}:4: free of a, which is not live (it was freed at line 2)" in err
    assert "Traceback" not in err and out.read_text() == "before"


READABLE = "a = malloc(40)\nb = malloc(24)\nfree(a)\nc = malloc(16)\n"


@pytest.mark.parametrize("argv", [
    ["check", "{t}"],
    ["compare", "{t}", "-s", "tlsf"],
    ["inspect", "{t}", "-s", "first-fit", "--step", "3"],
    ["grade", os.path.join(ROOT, "examples", "bump.py") + ":Bump", "{t}"],
])
def test_every_command_reads_the_readable_form_whatever_the_name(tmp_path, capsys, argv):
    from heapscope.allocators import plugins
    trace = tmp_path / "lesson.txt"            # not called .heap: recognised by content
    trace.write_text(READABLE)
    code, out, err = hs(capsys, *[a.format(t=trace) for a in argv])
    plugins.forget("bump")
    assert code == 0, err
    assert "lesson.txt" in out or "lesson.txt" in err
    bad = tmp_path / "lesson2.txt"
    bad.write_text(READABLE + "free(d)\n")
    code, out, err = hs(capsys, *[a.format(t=bad) for a in argv])
    plugins.forget("bump")
    assert code == 2, out + err
    assert f"{bad}:5: free of d, which is not live (it was never allocated)" in err
    assert "Traceback" not in err


def test_inspect_of_a_readable_trace_shows_the_step_the_lines_say(tmp_path, capsys):
    # step 3 is free(a): the first of two 40- and 24-byte blocks, with ids 0 and 1
    trace = tmp_path / "lesson.heap"
    trace.write_text("# two blocks\n" + READABLE)
    code, out, err = hs(capsys, "inspect", trace, "-s", "first-fit", "--step", "3")
    assert code == 0, err
    assert "free of a (id 0), 40 B" in out and "trace line 4" in out


@pytest.mark.parametrize("given, expected", [(None, "1"), ("3", "3")])
def test_the_command_runs_numpy_with_one_blas_thread_unless_told(given, expected):
    """heapscope/cli.py: importing the command sets OPENBLAS_NUM_THREADS=1
    before numpy loads (its thread pool costs a tenth of a second of CPU a
    process, and heapscope does no linear algebra), unless the user set it.
    Read back from a fresh interpreter.  OpenBLAS reads the variable when it
    loads, so a setting made after numpy's import would leave its worker
    thread running: with ours, the process has its main thread alone (Linux,
    where /proc lists the threads; OpenBLAS starts one a core past the first)."""
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    if given is not None:
        env["OPENBLAS_NUM_THREADS"] = given
    probe = ("import sys, os, heapscope.cli; "
             "print(os.environ['OPENBLAS_NUM_THREADS'], 'numpy' in sys.modules, "
             "len(os.listdir('/proc/self/task')) if os.path.isdir('/proc/self/task') else 1)")
    setting, numpy_loaded, threads = subprocess.run(
        [sys.executable, "-c", probe], env=env, capture_output=True, text=True,
        check=True).stdout.split()
    assert (setting, numpy_loaded) == (expected, "True")
    if given is None:
        assert threads == "1"
