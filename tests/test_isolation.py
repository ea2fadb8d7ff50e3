"""A strategy of your own runs where it can be stopped (allocators/isolation.py):
the real command line with a plugin that loops forever, calls sys.exit(0) or
os._exit(0), raises GeneratorExit or is killed, at its 5th operation
(tests/data/misbehaving.py).  Each ends within its time limit with a message
naming the strategy and the step, a non-zero exit status and no traceback."""

import os
import pathlib
import pickle
import subprocess
import sys
import time

import pytest

from heapscope.allocators import isolation, plugins
from heapscope.allocators.parallel import BuildFailed, BuildSpec, build_timelines
from heapscope.allocators.user import UserStrategyError
from heapscope.traces import make_workload
from tests.depth import deep

ROOT = pathlib.Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data" / "misbehaving.py"
#: a short trace: a bump allocator replays it in well under a second
TRACE = "vo1989:steps=300"
#: the limit the looping runs are given, and how long any run may take at most
#: (the limit, the worker's start, the interpreter's; the machine is shared)
LIMIT = 1
WITHIN = 20


def heapscope(*argv, cwd=None):
    """Run the real command line; (exit status, stdout, stderr, seconds)."""
    t0 = time.monotonic()
    result = subprocess.run([sys.executable, "-m", "heapscope", *map(str, argv)], capture_output=True,
                            text=True, timeout=3 * WITHIN, cwd=cwd)
    return result.returncode, result.stdout, result.stderr, time.monotonic() - t0


def plugin(cls: str) -> str:
    return f"{DATA}:{cls}"


# ------------------------------------------------------------------ looping
def test_grade_stops_a_looping_plugin_at_its_time_limit(tmp_path, monkeypatch, capsys):
    """The deep suite runs the real command line, and its --format json in
    the test below.  The quick one grades once, in this process, with
    --format json, and reads the text report of the same result beside it
    (cli.grade_text, what the command prints without --format): one looping
    run to the limit, not two.  (compare, inspect and render below run the
    real command line on a looping plugin in both suites.)"""
    if deep():
        status, out, err, seconds = heapscope("grade", plugin("Loops"), TRACE, "--time-limit", LIMIT,
                                              cwd=tmp_path)
    else:
        from heapscope import cli
        texts, real_json = [], cli.grade_json

        def text_and_json(result, spec, reopen):
            texts.append(cli.grade_text(result, spec, reopen))
            return real_json(result, spec, reopen)
        monkeypatch.setattr(cli, "grade_json", text_and_json)
        monkeypatch.chdir(tmp_path)
        t0 = time.monotonic()
        try:
            status = cli.main(["grade", plugin("Loops"), TRACE, "--time-limit", str(LIMIT),
                               "--format", "json"])
        finally:
            plugins.forget("loops")
        seconds = time.monotonic() - t0
        captured = capsys.readouterr()
        assert_names_the_step_in_json(captured.out)
        (out,), err = texts, captured.err
    assert status == 1
    assert seconds < WITHIN
    assert f"no answer in {LIMIT} s at step 5" in out
    assert "error at step 5" in out and "in Loops.misbehave (" in out
    assert "perf index 0 / 100" in out
    assert "Traceback" not in err + out


def assert_names_the_step_in_json(out: str) -> None:
    import json
    report = json.loads(out)
    error = report["traces"][0]["error"]
    assert report["valid"] is False and report["perf_index"] == 0
    assert error["step"] == 5 and error["class"] == "Loops" and error["method"] == "misbehave"
    assert error["message"].startswith(f"no answer in {LIMIT} s at step 5")


@pytest.mark.deep
def test_grade_json_names_the_step_of_a_looping_plugin(tmp_path):
    """(The quick suite reads this JSON in the test above.)"""
    status, out, err, seconds = heapscope("grade", plugin("Loops"), TRACE, "--time-limit", LIMIT,
                                          "--format", "json", cwd=tmp_path)
    assert status == 1 and seconds < WITHIN
    assert_names_the_step_in_json(out)


def test_compare_reports_the_looping_row_and_goes_on_with_the_others(tmp_path):
    status, out, err, seconds = heapscope("compare", TRACE, "--allocator", plugin("Loops"),
                                          "-s", "loops", "-s", "tlsf", "-s", "buddy",
                                          "--time-limit", LIMIT, cwd=tmp_path)
    assert seconds < WITHIN
    assert f"loops not run: no answer in {LIMIT} s at step 5, in Loops.misbehave (" in err
    rows = {line.split()[0]: line for line in out.splitlines() if line.strip()}
    assert "error: no answer" in rows["loops"]
    assert "error" not in rows["tlsf"] and "error" not in rows["buddy"]
    assert "Traceback" not in err


def test_compare_reports_a_plugin_raising_generator_exit_without_a_traceback(tmp_path):
    status, out, err, _ = heapscope("compare", TRACE, "--allocator", plugin("RaisesGeneratorExit"),
                                    "-s", "raises-generator-exit", "-s", "tlsf", cwd=tmp_path)
    assert "raises-generator-exit not run: step 5, malloc(" in err
    assert "your _malloc raised GeneratorExit: from _malloc, in RaisesGeneratorExit._malloc (" in err
    assert "tlsf" in out and "Traceback" not in err


def test_a_plugin_exiting_as_it_is_imported_is_an_error_naming_its_file(tmp_path):
    path = tmp_path / "quits.py"
    path.write_text("import sys\nsys.exit(0)\n")
    status, out, err, _ = heapscope("grade", f"{path}:Quits", TRACE, cwd=tmp_path)
    assert status == 2
    assert f"{path}:2: importing it raised SystemExit: 0" in err and "Traceback" not in err


def test_inspect_stops_a_looping_plugin_at_its_time_limit(tmp_path):
    status, out, err, seconds = heapscope("inspect", TRACE, "--allocator", plugin("Loops"), "-s", "loops",
                                          "-n", 10, "--time-limit", LIMIT, cwd=tmp_path)
    assert status == 2 and seconds < WITHIN
    assert f"loops: no answer in {LIMIT} s at step 5" in err
    assert out == "" and "Traceback" not in err


def test_inspect_of_a_step_before_the_loop_still_answers(tmp_path):
    status, out, err, _ = heapscope("inspect", TRACE, "--allocator", plugin("Loops"), "-s", "loops",
                                    "-n", 3, "--time-limit", LIMIT, cwd=tmp_path)
    assert status == 0, err
    assert out.startswith("loops (Loops forever at its 5th operation) on ")


# ------------------------------------------------------- exits and BaseException
FAULTS = [
    ("SysExits", "your _malloc raised SystemExit: 0"),
    ("HardExits", "ended with exit status 0 (os._exit in your code?)"),
    ("RaisesGeneratorExit", "your _malloc raised GeneratorExit: from _malloc"),
    ("KillsItself", "was killed by signal SIGKILL"),
]


def fault_cases(command: int):
    """FAULTS as parameters of the ``command``-th test (grade 0, render 1):
    every one in the deep suite.  The quick one gives each command one
    exception that escaped the user's code and one death of the worker
    (grade: SystemExit, SIGKILL; render: os._exit, GeneratorExit): the
    worker's code that tells each fault is the same for both commands
    (allocators/parallel.py, isolation.py), what each command makes of a
    failed build is its own."""
    kept = {0: ("SysExits", "KillsItself"), 1: ("HardExits", "RaisesGeneratorExit")}[command]
    return [pytest.param(cls, said, id=cls, marks=() if cls in kept else pytest.mark.deep)
            for cls, said in FAULTS]


@pytest.mark.parametrize("cls, said", fault_cases(0))
def test_grade_gives_an_exiting_plugin_a_graded_error(tmp_path, cls, said):
    status, out, err, _ = heapscope("grade", plugin(cls), TRACE, cwd=tmp_path)
    assert status == 1
    assert "error at step 5" in out and said in out
    assert "valid" in out and " NO " in out
    assert "Traceback" not in err + out


@pytest.mark.parametrize("cls, said", fault_cases(1))
def test_render_of_an_exiting_plugin_fails_and_writes_nothing(tmp_path, cls, said):
    target = tmp_path / "out.png"
    status, out, err, _ = heapscope("render", TRACE, "--allocator", plugin(cls), "-n", 10,
                                    "-o", target, cwd=tmp_path)
    assert status != 0
    assert said in err and "step 5" in err
    assert not target.exists()
    assert "Traceback" not in err


def test_render_stops_a_plugin_whose_drawing_loops(tmp_path):
    """Its replay (in a worker) is fine; its structure(), which the views
    draw in the render's own process, loops: the main-thread guard stops it."""
    target = tmp_path / "out.png"
    status, out, err, seconds = heapscope("render", TRACE, "--allocator", plugin("LoopsInStructure"),
                                          "-n", 3, "-o", target, "--time-limit", LIMIT, cwd=tmp_path)
    assert status == 2 and seconds < WITHIN
    assert f"no answer in {LIMIT} s while drawing loops-in-structure" in err
    assert not target.exists() and "Traceback" not in err


def test_a_time_limit_must_be_a_number_of_seconds(tmp_path):
    status, out, err, _ = heapscope("compare", TRACE, "--time-limit", "0", cwd=tmp_path)
    assert status == 2
    assert "a time limit is a number of seconds >= 0.5, got '0'" in err


# ------------------------------------------------------------------ the parts
@pytest.fixture
def loops():
    cls = plugins.load_file(plugin("Loops"))
    yield cls
    plugins.forget(cls.name)


def test_a_build_without_answers_is_killed_and_the_others_finish(loops):
    trace = make_workload("vo1989", steps=300, seed=1)
    t0 = time.monotonic()
    results = build_timelines(trace, [BuildSpec("loops"), BuildSpec("tlsf")], keep="summary",
                              checkpoints=False, time_limit=0.6)
    assert time.monotonic() - t0 < WITHIN
    failed = results["loops"]
    assert isinstance(failed, BuildFailed) and failed.step == 5
    assert failed.where.startswith("Loops.misbehave (") and failed.where.endswith("misbehaving.py:50)")
    assert failed.error.startswith("no answer in 0.6 s at step 5, in Loops.misbehave (")
    assert results["tlsf"]["ops"] == len(trace)


def test_an_answer_from_inside_the_users_code_at_the_same_step_does_not_count():
    hearing = isolation.Hearing(last=100.0)
    hearing.heard(5, "Loops._malloc (loops.py:9)", 101.0)     # a new step: counts
    hearing.heard(5, "Loops._malloc (loops.py:9)", 103.0)     # the same step, in user code: no
    assert hearing.last == 101.0 and hearing.silent(103.5, 2) and not hearing.silent(102.5, 2)
    hearing.heard(5, None, 104.0)                             # heapscope's own work: counts
    assert hearing.last == 104.0
    hearing.heard(6, "Loops._malloc (loops.py:9)", 105.0)
    assert hearing.last == 105.0 and hearing.step == 6


def test_the_main_thread_guard_stops_a_python_loop_and_refuses_os_exit():
    t0 = time.monotonic()
    with pytest.raises(isolation.UserCodeTimedOut, match=r"no answer in 0.5 s while testing"):
        with isolation.MainThreadGuard(0.5, "while testing"):
            while True:
                try:
                    pass
                except BaseException:      # a user's bare except does not keep it running
                    pass
    assert time.monotonic() - t0 < 5
    with pytest.raises(isolation.UserCodeTimedOut, match=r"called os._exit\(3\)"):
        with isolation.MainThreadGuard(5, "while testing"):
            os._exit(3)
    assert os._exit.__name__ == "_exit"        # put back after the block
    with isolation.MainThreadGuard(5):         # quick code is not disturbed
        time.sleep(0.05)


def test_a_user_strategy_error_crosses_a_process_boundary():
    error = UserStrategyError("your _malloc returned 0x3", method="_malloc", cls_name="Mine", step=7,
                              operation="malloc(24)", location="mine.py:12")
    copy = pickle.loads(pickle.dumps(error))
    assert (copy.message, copy.method, copy.cls_name, copy.step, copy.operation, copy.location) == \
        ("your _malloc returned 0x3", "_malloc", "Mine", 7, "malloc(24)", "mine.py:12")
    assert str(copy) == "step 7, malloc(24): your _malloc returned 0x3, in Mine._malloc (mine.py:12)"


# ------------------------------------------------------- at the file's top level
AT_IMPORT = [
    ("while True:\n    pass\n", "importing it gave no answer in 1 s"),
    ("import os\nos._exit(0)\n", "importing it ended the process with exit status 0"),
    ("import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n", "importing it killed the process (signal SIGKILL)"),
]


def at_import_cases():
    """(command, body, said): every pair in the deep suite.  The quick one
    runs the loop under both commands (each passes its own --time-limit to
    the probe) and each exit under one of them in turn (the probe that
    reports it is the same code for both); the others marked ``deep``."""
    return [pytest.param(command, body, said, id=f"{command}-{k}",
                         marks=() if k == 0 or (k + c) % 2 == 0 else pytest.mark.deep)
            for c, command in enumerate(["grade", "compare"])
            for k, (body, said) in enumerate(AT_IMPORT)]


@pytest.mark.parametrize("command, body, said", at_import_cases())
def test_a_file_that_loops_or_exits_while_imported_is_named_and_stopped(tmp_path, body, said, command):
    bad = tmp_path / "atimport.py"
    bad.write_text("from heapscope import UserStrategy\n" + body)
    argv = ([command, f"{bad}:Never", "perl-words"] if command == "grade" else
            [command, "perl-words", "--allocator", f"{bad}:Never", "-s", "tlsf"])
    status, _, err, seconds = heapscope(*argv, "--time-limit", "1")
    assert status == 2 and f"{bad}: {said}" in err and "Traceback" not in err, err
    assert seconds < WITHIN


def test_a_file_that_imports_cleanly_is_loaded_after_its_probe(tmp_path):
    status, out, err, _ = heapscope("compare", "perl-words", "--allocator",
                                    "examples/segfit.py:SegFit", "-s", "segfit", cwd=ROOT)
    assert status == 0 and "segfit" in out, err


def test_a_seek_that_replays_another_heap_than_the_build_says_not_deterministic():
    from heapscope.allocators.replay import Timeline
    from heapscope.allocators.user import UserStrategyError
    from heapscope.traces.load import load_trace
    cls = plugins.load_file(f"{ROOT / 'tests' / 'data' / 'nondeterministic.py'}:RandomGaps")
    try:
        from heapscope.traces.trace import ALLOC, Trace
        trace = load_trace("perl-words")
        # its first 200 operations: the first malloc shown after step 39 is
        # early, and the random gaps' heap grows with every block (the whole
        # trace took 4.5 s of CPU to build for this one step)
        start = Trace.from_ops(list(trace)[:200], name="perl-words")
        tl = Timeline(start, "random-gaps").build()
        step = 1 + next(i for i in range(39, len(start)) if int(start.kind[i]) == ALLOC)
        with pytest.raises(UserStrategyError, match=rf"^step {step}: not deterministic: step {step} "
                           r"returned 0x[0-9a-f]+ when the timeline was built and 0x[0-9a-f]+ when "
                           r"replayed to show it"):
            tl.seek(step)
        # a deterministic strategy of your own seeks anywhere as built
        seg = plugins.load_file(f"{ROOT / 'examples' / 'segfit.py'}:SegFit")
        tl = Timeline(trace, seg.name).build()
        for t in (3000, 17, 2999, 1):
            tl.seek(t)
    finally:
        plugins.forget(cls.name)
