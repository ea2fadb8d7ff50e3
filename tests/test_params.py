"""Strategy parameters: declared once, checked when a strategy is built, and the
same declaration behind -P, the common options, ``heapscope strategies`` and the
docs pages.  Every parameter of every strategy is taken from the declarations,
so a new parameter is tested here without anyone writing a test for it."""

from __future__ import annotations

import pathlib
import re
import tracemalloc

import pytest

from heapscope.allocators import STRATEGIES, make_strategy, strategy_names
from heapscope.allocators.params import BOOL, SIZE, ParamError, declared
from heapscope.allocators.replay import Timeline
from heapscope.allocators.strategy import Strategy
from heapscope.cli import main
from heapscope.traces import make_workload
from tests.depth import pick

ROOT = pathlib.Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs" / "strategies"

EVERY_PARAM = [(name, p) for name in strategy_names() for p in declared(STRATEGIES[name]).values()]
IDS = [f"{name}.{p.name}" for name, p in EVERY_PARAM]


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def wrong_type_texts(p) -> list[str]:
    return ["maybe", "2"] if p.kind == BOOL else ["abc", "1.5", "12x"]


def out_of_range_values(p) -> list[int]:
    """Integers the declaration itself puts outside what ``p`` accepts: past
    each end, and inside the range but not accepted (between two choices, or
    not a power of two where only powers of two are)."""
    if p.kind == BOOL:
        return []
    if p.choices:
        between = [v for v in range(min(p.choices), max(p.choices)) if v not in p.choices][:1]
        return [min(p.choices) - 1, max(p.choices) + 1] + between
    inside = []
    if p.power_of_two:
        inside = [next(v for v in range(max(p.low, 3), p.high) if v & (v - 1))]
    return [p.low - 1, p.high * 2] + inside


def test_the_values_outside_a_declaration_are_refused_by_it():
    # the helper above finds a value inside each kind of range that is refused
    align = declared(STRATEGIES["buddy"])["align"]
    assert align.power_of_two and out_of_range_values(align) == [3, 8192, 5]
    word = declared(STRATEGIES["buddy"])["word"]
    assert out_of_range_values(word) == [3, 9, 5]
    for _, p in EVERY_PARAM:
        for v in out_of_range_values(p):
            with pytest.raises(ParamError):
                p.check(v, "x")


# ------------------------------------------------------------ declarations
def test_every_strategy_declares_the_common_parameters_first():
    common = [p.name for p in Strategy.params]
    assert common == ["word", "align", "heap_limit", "pool_size"]
    for name in strategy_names():
        assert list(declared(STRATEGIES[name]))[:4] == common, name


@pytest.mark.parametrize("name,p", EVERY_PARAM, ids=IDS)
def test_a_declaration_accepts_its_own_default_and_has_help(name, p):
    assert p.help and "\n" not in p.help
    assert p.check(p.default, name) == p.default
    if p.default is not None:
        # what the help and the docs print parses back to the default
        assert p.parse(p.default_text(), name) == p.default


# ------------------------------------------------------------- building
def test_an_unknown_name_says_which_names_the_strategy_takes():
    with pytest.raises(ParamError) as info:
        make_strategy("tlsf", no_such=1)
    message = str(info.value)
    assert "no_such" in message
    for p in declared(STRATEGIES["tlsf"]):
        assert p in message


@pytest.mark.parametrize("name,p", EVERY_PARAM, ids=IDS)
def test_building_checks_every_value_by_make_strategy_and_by_the_class(name, p):
    cls = STRATEGIES[name]
    bad = ["1.5", 1.5, [4]] + ([2, "yes", None] if p.kind == BOOL else [True, "8"])
    bad += out_of_range_values(p)
    if not p.none_ok and p.kind != BOOL:
        bad.append(None)
    for value in bad:
        for build in (lambda **kw: make_strategy(name, **kw), cls):
            with pytest.raises(ParamError) as info:
                build(**{p.name: value})
            assert p.name in str(info.value) and p.accepts() in str(info.value), str(info.value)


def test_issue_7_values_are_refused():
    for name, params in [("next-fit", {"nalloc": 1.5}), ("next-fit", {"nalloc": 0}),
                         ("next-fit", {"nalloc": -1}), ("buddy", {"max_order": 63}),
                         ("tlsf", {"zero_returns_null": "maybe"}), ("bsd-buckets", {"pagesize": 67108864})]:
        with pytest.raises(ParamError):
            make_strategy(name, **params)


# The accepted extremes of every parameter, each with the others at their
# defaults, replay a trace within bounded memory: no accepted value may take
# unbounded memory (bsd-buckets.pagesize=64M took 3.5 GB; buddy.max_order=63
# overflowed the int64 measures mid-replay).
#: The quick suite replays 100 steps (200 operations) under a bound of 4 MiB,
#: the deep one 400 steps under 16 MiB: about 20 KB an operation either way
#: (a heap that keeps something per operation shows as clearly), and an
#: accepted value that makes one huge page or chunk past both.  The largest
#: peak of the right code is 1.2 MiB at 100 steps, 1.9 MiB at 400.
MEMORY_BOUND = pick(4 << 20, 16 << 20)
#: strategies this process has replayed once (their modules imported)
_REPLAYED_HERE: set[str] = set()


def _extremes(p):
    if p.kind == BOOL:
        return [True, False]
    if p.choices:
        return list(p.choices)
    return [p.low, p.high]


@pytest.fixture(scope="module")
def small_trace():
    return make_workload("vo1989", steps=pick(100, 400))


@pytest.mark.parametrize("name,p", EVERY_PARAM, ids=IDS)
def test_every_accepted_extreme_replays_in_bounded_memory(name, p, small_trace):
    for value in _extremes(p):
        try:
            make_strategy(name, **{p.name: value})
        except ParamError as exc:
            # refused for another parameter's sake, saying which (e.g. buddy's
            # min_order=40 needs max_order >= 40, and says so)
            assert re.search(r"accepts", str(exc)), str(exc)
            continue
        if name not in _REPLAYED_HERE:
            # a process's first replay of a strategy imports its fast path
            # and measures (and numpy.ma): 1.9 MiB that is not the replay's
            Timeline(small_trace, name, {p.name: value}).build().summary()
            _REPLAYED_HERE.add(name)
        tracemalloc.start()
        try:
            summary = Timeline(small_trace, name, {p.name: value}).build().summary()
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert peak < MEMORY_BOUND, f"{name} with {p.name}={value} took {peak >> 20} MiB"
        assert summary["ops"] == len(small_trace)


# ------------------------------------------------------------ command line
def command_line_cases():
    """EVERY_PARAM for the command-line test: all in the deep suite.  The
    quick one keeps the first parameter of each shape (kind, choices or a
    range, powers of two, ``none`` accepted: each spells its bad values and
    its range differently) and each strategy's last parameter (every
    strategy's ``-s NAME -P NAME.PARAM`` once); the others are ``deep``.
    The -P path is one for all: the value's check per parameter is
    test_building_checks_every_value_by_make_strategy_and_by_the_class's,
    every parameter in both suites.  (Each case runs heapscope's main() up
    to eight times, 58 ms a case: 4.3 of this file's 6.9 CPU-s.)"""
    shapes, kept, last = set(), set(), {}
    for i, (name, p) in enumerate(EVERY_PARAM):
        shape = (p.kind, bool(p.choices), bool(p.power_of_two), bool(p.none_ok))
        if shape not in shapes:
            shapes.add(shape)
            kept.add(i)
        last[name] = i
    kept |= set(last.values())
    return [case if i in kept else pytest.param(*case, marks=pytest.mark.deep)
            for i, case in enumerate(EVERY_PARAM)]


@pytest.mark.parametrize("name,p", command_line_cases(), ids=IDS)
def test_every_parameter_on_the_command_line_refuses_bad_values_naming_its_range(capsys, name, p):
    texts = wrong_type_texts(p) + [str(v) for v in out_of_range_values(p)]
    for text in texts:
        code, _, err = run(capsys, "compare", "vo1989:steps=20", "-s", name, "-P", f"{name}.{p.name}={text}")
        assert code == 2, (text, err)
        assert "Traceback" not in err
        assert f"{p.name} must be {p.accepts()}" in err, err
        assert repr(text) in err, err


@pytest.mark.parametrize("p", Strategy.params, ids=[p.name for p in Strategy.params])
def test_the_common_options_refuse_bad_values_naming_their_range(capsys, p):
    option = "--" + p.name.replace("_", "-")
    for text in wrong_type_texts(p) + [str(v) for v in out_of_range_values(p)]:
        with pytest.raises(SystemExit) as exit_info:
            main(["compare", "vo1989:steps=20", option, text])
        assert exit_info.value.code == 2
        err = capsys.readouterr().err
        assert f"{p.name} must be {p.accepts()}" in err and "Traceback" not in err, err


def test_a_good_value_reaches_the_strategy(capsys):
    import json
    code, out, _ = run(capsys, "compare", "vo1989:steps=200", "-s", "buddy", "-P", "buddy.max_order=16",
                       "--format", "json")
    assert code == 0
    row, = json.loads(out)
    assert row["max_heap"] % (1 << 16) == 0 and row["max_heap"] >= 1 << 16
    code, out, _ = run(capsys, "compare", "vo1989:steps=200", "-s", "next-fit", "-P", "next-fit.nalloc=4096",
                       "-P", "next-fit.pool_size=none", "--heap-limit", "1M", "--format", "json")
    assert code == 0
    assert json.loads(out)[0]["max_heap"] % (4096 * 16) == 0   # morecore in steps of 4096 units


def test_strategies_lists_every_parameter_with_what_it_accepts(capsys):
    code, out, _ = run(capsys, "strategies")
    assert code == 0
    sections = out.split("\n\n")
    for name in strategy_names():
        section = next(s for s in sections if s.startswith(f"{name}: "))
        for p in declared(STRATEGIES[name]).values():
            assert re.search(rf"^  {re.escape(p.name)} +{re.escape(p.accepts())}; default "
                             rf"{re.escape(p.default_text())}$", section, re.M), (name, p.name)
            assert p.help in section


def test_a_size_parameter_takes_suffixes_on_the_command_line(capsys):
    import json
    sizes = [p for _, p in EVERY_PARAM if p.kind == SIZE]
    assert sizes
    code, out, _ = run(capsys, "compare", "vo1989:steps=200", "-s", "tlsf", "-P", "tlsf.chunk=64K",
                       "--format", "json")
    assert code == 0 and json.loads(out)[0]["max_heap"] % (64 << 10) == 0


# ------------------------------------------------------------------- docs
def _docs_table(name: str) -> list[list[str]]:
    text = (DOCS / f"{name}.md").read_text()
    match = re.search(r"^## Parameters\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    assert match, f"docs/strategies/{name}.md has no '## Parameters' section"
    rows = [line for line in match.group(1).splitlines() if line.startswith("|")]
    cells = [[c.strip() for c in line.strip("|").split("|")] for line in rows]
    assert cells[0] == ["parameter", "accepts", "default", "what it sets"]
    return cells[2:]


@pytest.mark.parametrize("name", strategy_names())
def test_each_docs_page_lists_the_declared_parameters(name):
    rows = _docs_table(name)
    want = [[f"`{p.name}`", p.accepts(), p.default_text(), p.help] for p in declared(STRATEGIES[name]).values()]
    assert rows == want
