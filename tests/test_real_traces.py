"""The bundled real-program traces: each loads, is described in the manifest
and the README, stays small, and every strategy replays it with check() on a
sample of steps."""

from __future__ import annotations

import json

import pytest

from heapscope.allocators.registry import make_strategy, strategy_names
from heapscope.traces import load_trace, read_trace_file
from heapscope.traces.bundled import MANIFEST_NAME, bundled_path, examples, examples_help

from .heap_harness import apply_program
from tests.depth import deep, walked_examples

REAL = [ex for ex in examples() if ex.name != "default"]
#: those the replays walk (the quick suite leaves out the longest: tests/depth.py)
WALKED = [ex for ex in walked_examples() if ex.name != "default"]
#: the most operations a bundled trace may have
MAX_OPS = 250_000
#: check() after this many evenly spread steps of each trace, and the last
SAMPLES = 25
#: how much of a long real trace the quick suite replays
QUICK_OPS = 20_000


def test_there_are_real_traces_and_each_is_documented():
    assert len(REAL) >= 3
    readme = bundled_path("README.md").read_text()
    entries = json.loads(bundled_path(MANIFEST_NAME).read_text())["traces"]
    for ex, entry in zip(REAL, entries):
        for key in ("command", "version", "recorded", "environment", "program", "machine"):
            assert entry[key], f"{ex.name}: no {key} in the manifest"
        assert entry["command"].startswith("heapscope record -o ")
        assert f"## {ex.name}" in readme and entry["command"] in readme
        assert ex.path.stat().st_size < 1024 * 1024
        assert ex.name in examples_help()


@pytest.mark.parametrize("ex", REAL, ids=lambda ex: ex.name)
def test_a_bundled_trace_loads_with_the_size_the_manifest_gives(ex):
    trace = read_trace_file(ex.path)
    assert len(trace) == ex.ops
    assert 1000 <= len(trace) <= MAX_OPS
    stats = trace.stats()
    assert stats["allocs"] + stats["reallocs"] > 0 and stats["frees"] > 0
    assert load_trace(ex.name).ids.tolist() == trace.ids.tolist()    # by name too


def trace_and_strategy_pairs():
    """(trace, strategy) for the replay test: every pair in the deep suite.
    The quick one keeps trace i with strategy j when i + j is even: every
    strategy meets half the real traces (two of the quick suite's four, of
    different programs), every trace half the strategies; the other pairs
    are ``deep``."""
    names = strategy_names()
    return [pytest.param(ex, name, id=f"{ex.name}-{name}",
                         marks=() if (i + j) % 2 == 0 else pytest.mark.deep)
            for i, ex in enumerate(WALKED) for j, name in enumerate(names)]


@pytest.mark.parametrize("ex, name", trace_and_strategy_pairs())
def test_every_strategy_replays_every_bundled_trace_with_check(ex, name):
    ops = list(read_trace_file(ex.path))
    # the quick suite (tests/depth.py) replays the first 20 000 operations
    whole = deep() or len(ops) <= QUICK_OPS
    ops = ops if whole else ops[:QUICK_OPS]
    every = max(1, len(ops) // SAMPLES)
    s = make_strategy(name, record=False)     # events off, as heap_harness.check_long_trace says why
    checked = []

    def check(step, where, asked):
        if step % every == 0 or step == len(ops) - 1:
            blocks = s.check()
            assert sum(b.size for b in blocks) == s.heap_size, f"step {step}"
            checked.append(step)

    where = apply_program(s, ops, check)
    if whole:
        assert where == {}                 # everything is freed at the end
    assert len(checked) >= SAMPLES and checked[-1] == len(ops) - 1


def test_the_package_data_ships_the_recorder_source_and_the_bundled_files():
    import tomllib
    from fnmatch import fnmatch
    from pathlib import Path
    root = Path(__file__).resolve().parent.parent
    data = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    shipped = {"traces/recorder.c": data["heapscope.traces"]}
    for f in (root / "traces" / "bundled").iterdir():
        if f.suffix != ".py" and f.is_file():
            shipped[f"traces/bundled/{f.name}"] = data["heapscope.traces.bundled"]
    for path, globs in shipped.items():
        assert any(fnmatch(Path(path).name, g) for g in globs), f"{path} is not package data"
