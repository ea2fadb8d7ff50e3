"""``heapscope experiment`` runs a strategy of your own where it can be
stopped (heapscope/experiments/runner.py through allocators/parallel.py, as
grade does): a plugin that loops, exits, dies, raises a BaseException, lies
about its blocks or gives another heap on its second replay has a row saying
why, naming it and the trace, exit status 1, within the time limit and
without a traceback.  The plugins are tests/data/misbehaving.py's (they
misbehave at their 5th operation) and nondeterministic.py's."""

import pathlib
import re
import subprocess
import sys
import time

import pytest

from heapscope.allocators import plugins
from heapscope.allocators.parallel import BuildSpec, ParallelBuild
from heapscope.experiments.runner import Job, load, run_jobs, trace_text, workload_ref
from heapscope.traces import load_trace

ROOT = pathlib.Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"
MISBEHAVING = DATA / "misbehaving.py"
#: one small run: a bump allocator replays it in well under a second
SMALL = ["-X", "runs=1", "-X", "machines=vax", "-W", "steps=300", "-f", "csv"]
#: the limit the looping plugin is given: its worker burns a core until then.
#: (It was 3 while the import probe counted its own interpreter's start
#: against the limit; the probe now times the file's top level alone: the
#: last test of this file.  tests/test_isolation.py gives the CLI's runs 1 too.)
LIMIT = 1
#: the most any run here may take (the limit, worker starts; the machine is shared)
WITHIN = 20


def experiment(*argv):
    """The real command line: (exit status, stdout, stderr, seconds)."""
    t0 = time.monotonic()
    result = subprocess.run([sys.executable, "-m", "heapscope", "experiment", *map(str, argv)],
                            capture_output=True, text=True, timeout=3 * WITHIN, cwd=ROOT)
    return result.returncode, result.stdout, result.stderr, time.monotonic() - t0


def test_a_looping_plugin_is_stopped_at_its_time_limit_and_named_with_its_trace():
    # -j 1 ran it in heapscope's own process, with no limit: a hang
    status, out, err, seconds = experiment(
        "vo1989", "--allocator", f"{MISBEHAVING}:Loops", "-s", "loops", "-s", "tlsf",
        "--time-limit", LIMIT, "-j", "1", *SMALL)
    assert status == 1 and seconds < WITHIN
    said = (f"loops ({MISBEHAVING}:Loops) on vo1989:seed=1,steps=300 (loops, vax, seed 1): "
            f"no answer in {LIMIT} s at step 5, in Loops.misbehave (")
    assert f"heapscope: loops failed: {said}" in err
    rows = {line.split(",")[1]: line for line in out.splitlines()[1:]}
    assert said in rows["loops"]
    assert rows["tlsf"].split(",")[7] == "144917.0"    # the others' rows are measured
    assert "Traceback" not in err + out


#: plugin class, its name, what its row says
FAULTS = [
    ("SysExits", "sys-exits",
     "step 5, malloc(35): your _malloc raised SystemExit: 0, in SysExits._malloc ("),
    ("HardExits", "hard-exits", "the worker process running it ended with exit status 0 "
     "(os._exit in your code?) without a result, at step 5 in HardExits.misbehave ("),
    ("RaisesGeneratorExit", "raises-generator-exit",
     "step 5, malloc(35): your _malloc raised GeneratorExit: from _malloc"),
    ("KillsItself", "kills-itself",
     "the worker process running it was killed by signal SIGKILL without a result, at step 5"),
]


def test_plugins_that_exit_or_die_have_failed_rows_and_no_traceback():
    """All four in one experiment (two before the fix gave a traceback of
    the process pool, BrokenProcessPool, and no table)."""
    argv = ["vo1989", "-j", "2", *SMALL]
    for cls, name, _ in FAULTS:
        argv += ["--allocator", f"{MISBEHAVING}:{cls}", "-s", name]
    status, out, err, _ = experiment(*argv)     # (four import probes: slow on a busy machine)
    assert status == 1
    rows = {line.split(",")[1]: line for line in out.splitlines()[1:]}
    for cls, name, said in FAULTS:
        whole = f"{name} ({MISBEHAVING}:{cls}) on vo1989:seed=1,steps=300 ({name}, vax, seed 1): {said}"
        assert f"heapscope: {name} failed: {whole}" in err
        assert whole in rows[name]
    assert "Traceback" not in err + out


# ------------------------------------------------------------- in this process
@pytest.fixture
def loaded():
    """Load plugins by spec for one test; forgotten afterwards."""
    names = []

    def load_plugin(spec: str) -> str:
        cls = plugins.load_file(spec)
        names.append(cls.name)
        return cls.name
    yield load_plugin
    for name in names:
        plugins.forget(name)


def _jobs(strategy: str, seeds, steps: int = 300) -> list[Job]:
    return [Job.of((strategy, seed), workload_ref("vo1989", {"steps": steps, "seed": seed}), strategy,
                   {"word": 4}, label=f"{strategy}, seed {seed}") for seed in seeds]


def test_a_plugin_timed_out_once_is_not_run_again_and_the_built_ins_go_on(loaded):
    loops = loaded(f"{MISBEHAVING}:Loops")
    jobs = _jobs(loops, range(1, 7)) + _jobs("tlsf", range(1, 3))
    t0 = time.monotonic()
    rows = run_jobs(jobs, workers=2, time_limit=1)
    assert time.monotonic() - t0 < WITHIN
    # the first failure heard withdraws the runs not yet started: at most the
    # two running then and the two started as they ended run to the limit
    errors = [rows[j.key]["error"] for j in jobs[:6]]
    timed_out = [e for e in errors if "no answer in 1 s at step 5" in e and "not run" not in e]
    withdrawn = [e for e in errors if ": not run: loops, seed " in e and "failed first (no answer" in e]
    assert len(timed_out) <= 4 and len(withdrawn) >= 2 and len(timed_out) + len(withdrawn) == 6
    assert all(e.startswith("loops (") and ") on vo1989:seed=" in e for e in errors)
    for job in jobs[6:]:
        assert rows[job.key]["max_heap"] > 0 and "error" not in rows[job.key]


def test_a_plugin_whose_second_replay_gives_another_heap_is_not_deterministic(loaded):
    gaps = loaded(f"{DATA / 'nondeterministic.py'}:RandomGaps")
    row = run_jobs(_jobs(gaps, [1]), workers=1)[(gaps, 1)]
    assert set(row) == {"error"}
    # vo1989 frees every block at the end: the breaks are what differ
    assert re.search(r"on vo1989:seed=1,steps=300 \(random-gaps, seed 1\): not deterministic: two "
                     r"replays of the trace ended with different heaps \(the break ends at 0x[0-9a-f]+ "
                     r"in one replay and at 0x[0-9a-f]+ in the next\): the same trace must give the "
                     r"same heap every time \(seed any random numbers you use, and do not depend on "
                     r"the time, id\(\) or the order of a set of objects\), in RandomGaps._malloc$",
                     row["error"]), row["error"]


def test_a_deterministic_plugin_is_measured_as_in_a_timeline(loaded):
    from heapscope.allocators.replay import Timeline
    segfit = loaded(f"{ROOT / 'examples' / 'segfit.py'}:SegFit")
    row = run_jobs(_jobs(segfit, [2]), workers=1)[(segfit, 2)]
    summary = Timeline(load_trace("vo1989:steps=300,seed=2"), segfit, {"word": 4}).build().summary()
    assert row["max_heap"] == summary["max_heap"] and row["waste"] == summary["waste"]
    assert row["wall_s"] > 0


def test_a_plugin_handing_out_a_live_block_twice_is_named_with_its_step(loaded):
    broken = loaded(f"{ROOT / 'examples' / 'broken.py'}:Broken")
    error = run_jobs(_jobs(broken, [1]), workers=2)[(broken, 1)]["error"]
    assert error.startswith(f"broken ({ROOT / 'examples' / 'broken.py'}:Broken) on vo1989:seed=1,steps=300")
    assert "the same block was handed out twice, in Broken._malloc (" in error


def test_a_jobs_trace_is_named_as_the_command_line_reads_it():
    ref = workload_ref("vo1989", {"steps": 120, "seed": 4})
    job = Job.of(("k",), ref, "tlsf")
    assert trace_text(job.trace) == "vo1989:seed=4,steps=120"
    again, made = load_trace(trace_text(job.trace)), load(job.trace)
    assert again.sizes.tolist() == made.sizes.tolist() and again.ids.tolist() == made.ids.tolist()
    assert trace_text("gcc-cc1") == "gcc-cc1"


def _slow(trace, spec, note, seconds=0.05):
    """A job that takes a moment (0.3 s once: the withdrawal does not race it,
    as start() launches the first job and only poll() launches the next)."""
    time.sleep(seconds)
    return spec.key


def test_builds_withdrawn_before_they_start_never_run():
    specs = [BuildSpec("tlsf", key=str(i), job=_slow) for i in range(5)]
    build = ParallelBuild(None, specs, workers=1).start()
    assert build.withdraw(["0", "3", "4", "nine"]) == ["3", "4"]     # 0 runs already
    build.wait()
    assert build.results == {"0": "0", "1": "1", "2": "2"}


def test_a_build_without_a_trace_runs_jobs_only():
    with pytest.raises(ValueError, match="jobs only"):
        ParallelBuild(None, [BuildSpec("tlsf")])


# ----------------------------------------------------------- the import probe
def test_the_import_probes_limit_counts_the_files_own_top_level_not_the_interpreters_start(tmp_path):
    """--time-limit 3 made `experiment --allocator` exit 2 ("importing it
    gave no answer in 3 s") on a busy machine, for a file that imports in a
    moment: the probe's child counted its own start and heapscope's imports
    (numpy's...).  Here the file's top level takes 0.3 s of a 0.5 s limit."""
    path = tmp_path / "slowish.py"
    path.write_text("from heapscope import UserStrategy\nimport time\ntime.sleep(0.3)\n")
    plugins.probe_import(f"{path}:Slowish", 0.5)          # no PluginError
    looping = tmp_path / "looping.py"
    looping.write_text("import time\nwhile True:\n    time.sleep(0.01)\n")
    t0 = time.monotonic()
    with pytest.raises(plugins.PluginError, match=r"looping.py: importing it gave no answer in 0.5 s"):
        plugins.probe_import(f"{looping}:Never", 0.5)
    assert time.monotonic() - t0 < WITHIN
