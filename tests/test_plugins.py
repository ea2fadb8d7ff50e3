"""Loading strategies of your own: by path (--allocator FILE.py:Class) and by
entry point (an installed package's heapscope.allocators group); what a
broken file says; the loaded strategy everywhere strategies are listed."""

import hashlib
import os
import pathlib
import pickle
import re
import shutil
import subprocess
import sys
import textwrap

import pytest

from heapscope.allocators import plugins, structure
from heapscope.allocators.explain import explain_step
from heapscope.allocators.grading import grade
from heapscope.allocators.registry import STRATEGIES, make_strategy, strategy_names
from heapscope.allocators.replay import Timeline
from heapscope.cli import allocator_specs, main
from heapscope.traces import load_trace

ROOT = pathlib.Path(__file__).resolve().parent.parent
SEGFIT = ROOT / "examples" / "segfit.py"


@pytest.fixture
def segfit():
    cls = plugins.load_file(f"{SEGFIT}:SegFit")
    yield cls
    plugins.forget("segfit")


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def test_the_example_loads_by_path_and_joins_the_strategies(segfit):
    assert segfit.name == "segfit" and "segfit" in strategy_names()
    assert plugins.ORIGINS["segfit"].endswith("examples/segfit.py:SegFit")
    assert plugins.load_file(f"{SEGFIT}:SegFit") is segfit           # loading again: the same class
    s = make_strategy("segfit", word=4, classes=6)
    assert (s.word, s.classes) == (4, 6)
    with pytest.raises(ValueError, match="segfit: classes must be an integer in 1..40, got 0"):
        make_strategy("segfit", classes=0)


def test_the_example_replays_seeks_and_explains_like_a_built_in(segfit):
    trace = load_trace("vo1989:steps=600,seed=5")
    timeline = Timeline(trace, "segfit", {"pool_size": 1 << 20}, checkpoint_every=64).build()
    assert timeline.fault is None and timeline.n == len(trace)
    for t in (700, 64, 1199, 3, 1200, 640):
        strategy = timeline.seek(t)
        blocks = strategy.check()
        structure.check_against_heap(strategy.structure(), blocks)
        fresh = Timeline(trace, "segfit", {"pool_size": 1 << 20})
        assert fresh.seek(t).state_signature() == strategy.state_signature()
    # the explain panel's lines come from the events segfit records
    timeline.seek(701)
    lines = [e.text for e in explain_step(timeline.strategy, timeline.last_record)]
    assert lines and all(isinstance(text, str) for text in lines)
    assert any(text.startswith(("took", "pushed", "examined", "placed", "split", "joined",
                                "released")) for text in lines)
    # the checkpoints hold the user's class by its module, which pickle finds again
    again = pickle.loads(pickle.dumps(timeline.strategy))
    assert type(again) is segfit


def test_the_examples_grade_valid_with_an_index_above_zero(segfit):
    traces = [(name, load_trace(name)) for name in ("vo1989:steps=600", "perl-words")]
    result = grade(segfit, traces)
    assert result.valid, [str(t.error) for t in result.traces]
    assert 0 < result.perf_index <= 100
    assert all(0.5 < t.utilisation <= 1 for t in result.traces)
    assert result.throughput > 0 and result.reference_throughput > 0
    for path, cls in (("examples/bump.py", "Bump"), ("examples/tutorial/segfit_step1.py", "SegFit1"),
                      ("examples/tutorial/segfit_step2.py", "SegFit2"),
                      ("examples/tutorial/segfit_step3.py", "SegFit3"), ("examples/implicit.py", "Implicit")):
        klass = plugins.load_file(f"{ROOT / path}:{cls}")
        try:
            for params in ({}, {"pool_size": 1 << 21, "align": 16}, {"word": 4, "heap_limit": 100_000}):
                result = grade(klass, traces[:1], params, timing=False)
                assert result.valid, (path, params, str(result.traces[0].error))
        finally:
            plugins.forget(klass.name)


def test_the_implicit_list_searches_every_block_first_fit():
    klass = plugins.load_file(f"{ROOT / 'examples/implicit.py'}:Implicit")
    try:
        s = klass()
        # 16 B asks for 8 + 16 + 8 = 32; the first grows the heap by a 4096-byte chunk:
        # [prologue 16][32 used][4064 free][epilogue 8] from address 0
        a = s.malloc(16)
        assert (a, s.rec.visits, s.arena.brk) == (16 + 8, 0, 16 + 4096 + 8)
        b = s.malloc(16)                  # visits the used block, then the free one: fits
        assert (b, s.rec.visits) == (16 + 32 + 8, 2)
        s.free(a)                         # [32 free][32 used][4032 free]
        c = s.malloc(100)                 # needs 120: the 32-byte hole, the used block, the rest
        assert (c, s.rec.visits) == (16 + 64 + 8, 3)
        s.free(b)                         # joined with the hole before it: [64 free][120 used]...
        assert [(blk.addr, blk.size, blk.state) for blk in s.walk()][:3] == \
            [(0, 16, "meta"), (16, 64, "free"), (80, 120, "used")]
        t = grade(klass, [("vo", load_trace("vo1989:steps=300"))], check_every=1, timing=False)
        assert t.valid, str(t.traces[0].error)
    finally:
        plugins.forget(klass.name)


# ------------------------------------------------------------- broken files
@pytest.mark.parametrize("text, message", [
    ("class A(\n", r"bad\.py:1: syntax error"),
    ("x = 1\n\nimport no_such_module_here\n", r"bad\.py:3: importing it raised ModuleNotFoundError"),
    ("class Other:\n    pass\n", r"bad\.py: no class Mine; it defines no subclass of heapscope.UserStrategy"),
    ("from heapscope import UserStrategy\nclass Near(UserStrategy):\n"
     "    def _malloc(self, n): pass\n    def _free(self, p): pass\n    def _blocks(self): pass\n",
     r"bad\.py: no class Mine; it defines Near"),
    ("class Mine:\n    pass\n", r"Mine derives from object, not from heapscope.UserStrategy"),
    ("from heapscope.allocators.strategy import Strategy\nclass Mine(Strategy):\n    name = 'x'\n",
     r"Mine derives from Strategy \(heapscope's internal base\), not from heapscope.UserStrategy"),
    ("from heapscope import UserStrategy\nclass Mine(UserStrategy):\n    def _malloc(self, n): pass\n",
     r"Mine does not write _free, _blocks"),
    ("from heapscope import UserStrategy\nclass Mine(UserStrategy):\n    name = 'My Alloc'\n"
     "    def _malloc(self, n): pass\n    def _free(self, p): pass\n    def _blocks(self): pass\n",
     r"Mine.name is 'My Alloc': a strategy name is lower case"),
    ("from heapscope import UserStrategy\nclass Mine(UserStrategy):\n    name = 'tlsf'\n"
     "    def _malloc(self, n): pass\n    def _free(self, p): pass\n    def _blocks(self): pass\n",
     r"Mine is named 'tlsf', the name of a built-in strategy"),
])
def test_a_broken_file_is_one_message_naming_it_and_exit_status_2(tmp_path, capsys, text, message):
    path = write(tmp_path, "bad.py", text)
    with pytest.raises(plugins.PluginError, match=message):
        plugins.load_file(f"{path}:Mine")
    assert main(["compare", "vo1989:steps=50", "--allocator", f"{path}:Mine"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"heapscope: error: {path}")
    assert "Traceback" not in err
    assert "bad" not in STRATEGIES and "mine" not in STRATEGIES


def test_missing_files_and_malformed_specs(tmp_path, capsys):
    for spec, message in ((f"{tmp_path}/none.py:X", "none.py: no such file"),
                          (f"{tmp_path}:X", "not a file"),
                          ("examples/segfit.py", "expected FILE.py:ClassName"),
                          (f"{write(tmp_path, 'a.txt', 'x')}:X", "a strategy file is Python source")):
        assert main(["strategies", "--allocator", spec]) == 2
        assert message in capsys.readouterr().err


def test_two_files_may_not_give_one_name(tmp_path, segfit):
    copy = tmp_path / "segfit_copy.py"
    shutil.copy(SEGFIT, copy)
    with pytest.raises(plugins.PluginError, match=r"is named 'segfit', like the strategy loaded from "
                                                  r".*examples/segfit.py:SegFit"):
        plugins.load_file(f"{copy}:SegFit")


def test_a_helper_module_next_to_the_file_can_be_imported(tmp_path):
    write(tmp_path, "helpers_for_mine.py", "GRAIN = 16\n")
    path = write(tmp_path, "mine.py", """
        from helpers_for_mine import GRAIN
        from heapscope import USED, UserStrategy, align_up

        class Mine(UserStrategy):
            def __init__(self, **common):
                super().__init__(**common)
                self.blocks = []
            def _malloc(self, size):
                need = align_up(max(size, 1), GRAIN)
                addr = self._take_core(need)
                if addr is not None:
                    self._note_alloc(addr, addr, need, size, 0)
                    self.blocks.append((addr, need))
                return addr
            def _free(self, payload):
                self._note_free(payload)
            def _blocks(self):
                for addr, size in self.blocks:
                    yield addr, size, (USED if addr in self.live else "free"), \\
                        (addr if addr in self.live else None)
        """)
    cls = plugins.load_file(f"{path}:Mine")
    try:
        assert cls.name == "mine" and cls.title == "Mine"
        assert grade(cls, [("t", load_trace("vo1989:steps=100"))], timing=False).valid
    finally:
        plugins.forget("mine")


# ---------------------------------------------------------- the command line
def test_allocator_options_are_found_as_argparse_reads_them():
    from heapscope.cli import _allocator_commands
    commands = _allocator_commands()
    assert {"open", "compare", "inspect", "strategies", "grade"} <= set(commands)
    assert "record" not in commands and "check" not in commands
    argv = ["compare", "x.rep", "--allocator", "a.py:A", "--allocator=b.py:B", "--allo", "c.py:C",
            "--all=d.py:D", "--align", "16", "--", "--allocator", "e.py:E"]
    assert allocator_specs(argv, commands["compare"]) == ["a.py:A", "b.py:B", "c.py:C", "d.py:D"]
    # inspect has an option --all of its own
    argv = ["inspect", "-s", "tlsf", "--step", "3", "--all", "--allocator", "a.py:A"]
    assert allocator_specs(argv, commands["inspect"]) == ["a.py:A"]


def test_inspect_takes_the_user_strategy(capsys):
    try:
        assert main(["inspect", "vo1989:steps=200", "--allocator", f"{SEGFIT}:SegFit", "-s", "segfit",
                     "--step", "150", "--all", "--format", "json"]) == 0
        import json
        report = json.loads(capsys.readouterr().out)
        assert report["strategy"] == "segfit" and report["structure"]["kind"] == "lists"
        assert all(label.startswith("class ") for label in report["structure"]["lists"])
        assert report["events"] and report["operation"]["result"] is not None
        # a broken one is its own one-line error at the step it breaks
        broken = ROOT / "examples" / "broken.py"
        assert main(["inspect", "default", "--allocator", f"{broken}:Broken", "-s", "broken",
                     "--step", "200"]) == 2
        assert "step 124, malloc(65): your _malloc returned 0x10c0" in capsys.readouterr().err
    finally:
        plugins.forget("segfit")
        plugins.forget("broken")


def test_compare_strategies_and_open_take_the_user_strategy(capsys):
    spec = f"{SEGFIT}:SegFit"
    try:
        assert main(["compare", "vo1989:steps=300", "--allocator", spec, "-s", "segfit", "-s", "tlsf",
                     "-P", "segfit.classes=5", "--format", "csv"]) == 0
        out = capsys.readouterr().out.splitlines()
        assert [line.split(",")[0] for line in out[1:]] == ["segfit", "tlsf"]
        assert main(["strategies", "segfit", "--allocator", spec]) == 0
        out = capsys.readouterr().out
        assert "segfit: Segregated fit: size-class lists, first fit, boundary tags" in out
        assert "(yours: " in out and "examples/segfit.py:SegFit)" in out
        assert re.search(r"\n  classes +an integer in 1\.\.40; default 12\n", out)
        with pytest.raises(SystemExit):
            main(["open", "--allocator", spec, "--help"])
        assert "segfit" in capsys.readouterr().out.split("--strategy", 1)[1]
        # a parameter out of range, before anything runs
        assert main(["compare", "--allocator", spec, "-P", "segfit.classes=99"]) == 2
        assert "segfit: classes must be an integer in 1..40, got '99'" in capsys.readouterr().err
    finally:
        plugins.forget("segfit")


def test_compare_reports_a_broken_strategy_in_its_row_and_runs_the_others(capsys):
    broken = ROOT / "examples" / "broken.py"
    try:
        assert main(["compare", "default", "--allocator", f"{broken}:Broken", "-s", "broken",
                     "-s", "next-fit", "--format", "json"]) == 1   # a row failed
        import json
        rows = json.loads(capsys.readouterr().out)
        assert rows[0]["strategy"] == "broken" and rows[0]["ops"] is None
        assert rows[0]["error"].startswith("step 124, malloc(65): your _malloc returned 0x10c0, which is "
                                           "already the payload of the live block at 0x10b8")
        assert rows[1]["strategy"] == "next-fit" and rows[1]["ops"] == 20000
    finally:
        plugins.forget("broken")


def test_grade_takes_an_installed_name_but_not_a_built_in(capsys):
    assert main(["grade", "tlsf", "vo1989:steps=10"]) == 2
    assert "tlsf is a built-in strategy; grade takes a strategy of your own" in capsys.readouterr().err


# --------------------------------------------------------------- entry points
def make_distribution(site: pathlib.Path, entries: dict[str, str], package_files: dict[str, str]) -> None:
    """An installed distribution as importlib.metadata finds it: a package and
    a .dist-info folder with METADATA and entry_points.txt."""
    for name, text in package_files.items():
        path = site / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    info = site / "heapscope_test_plugin-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: heapscope-test-plugin\nVersion: 1.0\n")
    lines = ["[heapscope.allocators]"] + [f"{k} = {v}" for k, v in entries.items()]
    (info / "entry_points.txt").write_text("\n".join(lines) + "\n")


@pytest.fixture
def installed(tmp_path, monkeypatch):
    """The example segfit installed as package heapscope_test_plugin, plus a
    broken entry point; on sys.path for this process and its children."""
    site = tmp_path / "site"
    make_distribution(site, {"segfit": "heapscope_test_plugin.segfit:SegFit",
                             "gone": "heapscope_test_plugin.nothing:Gone"},
                      {"heapscope_test_plugin/__init__.py": "",
                       "heapscope_test_plugin/segfit.py": SEGFIT.read_text()})
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setenv("PYTHONPATH", str(site) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    plugins.reset_installed()
    yield site
    plugins.forget("segfit")
    plugins.reset_installed()
    for name in [m for m in sys.modules if m.startswith("heapscope_test_plugin")]:
        del sys.modules[name]


def test_the_example_loads_by_entry_point(installed):
    warnings = []
    assert plugins.load_installed(warn=warnings.append) == ["segfit"]
    cls = STRATEGIES["segfit"]
    assert cls.__module__ == "heapscope_test_plugin.segfit"
    assert "entry point segfit = heapscope_test_plugin.segfit:SegFit (heapscope-test-plugin 1.0)" \
        == plugins.ORIGINS["segfit"]
    # the broken entry point is left out with a warning naming it
    assert len(warnings) == 1 and warnings[0].startswith("entry point gone = heapscope_test_plugin."
                                                         "nothing:Gone (heapscope-test-plugin 1.0): "
                                                         "loading it raised ModuleNotFoundError")
    assert grade(cls, [("t", load_trace("vo1989:steps=300"))], timing=False).valid
    assert plugins.load_installed() == []          # once per process


def test_the_installed_strategy_is_in_every_command(installed):
    run = [sys.executable, "-m", "heapscope"]
    result = subprocess.run(run + ["strategies"], capture_output=True, text=True, cwd=installed)
    assert result.returncode == 0, result.stderr
    assert "segfit: Segregated fit" in result.stdout and "(yours: entry point segfit" in result.stdout
    assert "heapscope: warning: entry point gone = " in result.stderr and "; left out" in result.stderr
    result = subprocess.run(run + ["compare", "vo1989:steps=200", "-s", "segfit", "--format", "csv"],
                            capture_output=True, text=True, cwd=installed)
    assert result.returncode == 0 and result.stdout.splitlines()[1].startswith("segfit,400,0,")
    result = subprocess.run(run + ["grade", "segfit", "vo1989:steps=200", "--format", "json"],
                            capture_output=True, text=True, cwd=installed)
    assert result.returncode == 0, result.stdout + result.stderr
    # a file giving the same name as the installed one is refused
    result = subprocess.run(run + ["compare", "--allocator", f"{SEGFIT}:SegFit"],
                            capture_output=True, text=True, cwd=installed)
    assert result.returncode == 2 and "is named 'segfit', like the strategy loaded from entry point" \
        in result.stderr


# ------------------------------------------- messages whole, names, the order of entry points
def test_a_malformed_spec_and_a_missing_method_say_the_whole_rule():
    with pytest.raises(plugins.PluginError) as caught:
        plugins.parse_spec("examples/segfit.py")
    assert str(caught.value) == ("--allocator 'examples/segfit.py': expected FILE.py:ClassName, "
                                 "e.g. examples/segfit.py:SegFit")

    from heapscope import UserStrategy

    class OnlyMalloc(UserStrategy):
        def _malloc(self, size):
            return None
    with pytest.raises(plugins.PluginError) as caught:
        plugins.check_class(OnlyMalloc, "mine.py")
    assert str(caught.value) == ("mine.py: OnlyMalloc does not write _free, _blocks: a strategy "
                                 "needs _malloc(self, size), _free(self, payload) and _blocks(self)")


MINIMAL = """
    from heapscope import USED, UserStrategy, align_up

    class {cls}(UserStrategy):
        name = {name!r}
        def __init__(self, **common):
            super().__init__(**common)
            self.blocks = []
        def _malloc(self, size):
            need = align_up(max(size, 1), 16)
            addr = self._take_core(need)
            if addr is not None:
                self._note_alloc(addr, addr, need, size, 0)
                self.blocks.append((addr, need))
            return addr
        def _free(self, payload):
            self._note_free(payload)
        def _blocks(self):
            for addr, size in self.blocks:
                yield addr, size, (USED if addr in self.live else "free"), \\
                    (addr if addr in self.live else None)
    """


def test_a_file_is_imported_under_its_documented_module_name(tmp_path):
    # the module docstring's rule: _heapscope_user_<stem>_<first 8 hex digits of the sha1 of
    # the resolved path>, the stem's characters other than letters and digits made '_'
    path = write(tmp_path, "my-alloc.v2.py", MINIMAL.format(cls="Mine", name="mine-v2"))
    cls = plugins.load_file(f"{path}:Mine")
    try:
        digest = hashlib.sha1(os.path.realpath(path).encode()).hexdigest()
        assert len(digest) == 40
        assert cls.__module__ == f"_heapscope_user_my_alloc_v2_{digest[:8]}"
        assert sys.modules[cls.__module__].Mine is cls
    finally:
        plugins.forget("mine-v2")


def test_a_broken_entry_point_does_not_hide_the_ones_after_it(tmp_path, monkeypatch):
    """Entry points that fail (an import error; a class that is no UserStrategy) come
    first; the good one after them is still registered, and each failure is one
    warning, whole.  EntryPoints made by hand belong to no distribution."""
    from importlib import metadata
    write(tmp_path, "heapscope_ep_order_test.py", MINIMAL.format(cls="Handmade", name="handmade"))
    monkeypatch.syspath_prepend(str(tmp_path))
    group = plugins.ENTRY_POINT_GROUP
    points = [metadata.EntryPoint("gone", "heapscope_no_such_module_19:Gone", group),
              metadata.EntryPoint("notmine", "collections:OrderedDict", group),
              metadata.EntryPoint("handmade", "heapscope_ep_order_test:Handmade", group)]
    monkeypatch.setattr(metadata, "entry_points", lambda group: points if group == plugins.ENTRY_POINT_GROUP else [])
    plugins.reset_installed()
    warnings = []
    try:
        assert plugins.load_installed(warn=warnings.append) == ["handmade"]
        assert plugins.ORIGINS["handmade"] == ("entry point handmade = heapscope_ep_order_test:Handmade "
                                               "(an installed package)")
    finally:
        plugins.forget("handmade")
        plugins.reset_installed()
        sys.modules.pop("heapscope_ep_order_test", None)
    assert warnings == [
        "entry point gone = heapscope_no_such_module_19:Gone (an installed package): loading it "
        "raised ModuleNotFoundError: No module named 'heapscope_no_such_module_19'",
        "entry point notmine = collections:OrderedDict (an installed package): OrderedDict derives "
        "from dict, not from heapscope.UserStrategy: write class OrderedDict(UserStrategy) after "
        "'from heapscope import UserStrategy'"]
