"""Tests for traces.workloads, traces.load and the bundled default trace."""

from __future__ import annotations

import inspect
import os

import numpy as np
import pytest

from heapscope.traces import (ALLOC, FREE, REALLOC, WORKLOADS, Trace, TraceError, default_trace_path,
                    load_trace, make_workload, read_rep, write_rep)
from heapscope.traces.load import parse_spec
from heapscope.traces.workloads import (declared_workload, djgpp1997, dowdeswell1999, korn_vo1985,
                                        plotnick1983, vo1989)
from heapscope.values import parse_scalar


def same_ops(a: Trace, b: Trace) -> bool:
    return (a.num_ids == b.num_ids and np.array_equal(a.kind, b.kind)
            and np.array_equal(a.ids, b.ids) and np.array_equal(a.sizes, b.sizes))


def lifetimes(t: Trace) -> tuple[dict, dict, int]:
    """Replay a one-malloc-per-step trace: (alloc step of each id, step at
    whose start each id was freed -- the number of mallocs before the free --,
    number of steps)."""
    born, died, step = {}, {}, 0
    for kind, ident, _ in t:
        if kind == ALLOC:
            born[ident] = step
            step += 1
        else:
            died[ident] = step
    return born, died, step


def assert_all_freed_once(t: Trace) -> None:
    s = t.stats()
    assert s["allocs"] == s["frees"] == t.num_ids
    assert s["reallocs"] == 0
    live = set()
    for kind, ident, _ in t:
        if kind == ALLOC:
            live.add(ident)
        else:
            live.remove(ident)
    assert not live


# --- determinism ----------------------------------------------------------------

SMALL = {
    "vo1989": dict(steps=800),
    "korn-vo1985": dict(steps=800),
    "djgpp1997": dict(actions=800, slots=64),
    "dowdeswell1999": dict(regions=60, min_size=64, max_size=1024),
}


@pytest.mark.parametrize("name", sorted(SMALL))
def test_workloads_are_deterministic_per_seed(name):
    params = SMALL[name]
    a = make_workload(name, seed=7, **params)
    b = make_workload(name, seed=7, **params)
    c = make_workload(name, seed=8, **params)
    assert same_ops(a, b)
    assert not np.array_equal(a.sizes, c.sizes) or not np.array_equal(a.ids, c.ids)


def test_plotnick1983_takes_a_seed_but_has_no_randomness():
    assert same_ops(plotnick1983(n=50, seed=1), plotnick1983(n=50, seed=2))


def test_registry_names():
    assert set(WORKLOADS) == {"vo1989", "korn-vo1985", "plotnick1983", "djgpp1997", "dowdeswell1999"}
    for name, func in WORKLOADS.items():
        doc = func.__doc__
        assert name[-4:] in doc  # the year of the source it cites
        for param in inspect.signature(func).parameters:
            assert f"``{param}``" in doc, (name, param)


# --- declared parameters ----------------------------------------------------------

@pytest.mark.parametrize("name", sorted(WORKLOADS))
def test_every_parameter_is_declared_with_its_default(name):
    func = WORKLOADS[name]
    signature = inspect.signature(func).parameters
    declared = declared_workload(name)
    assert list(declared) == list(signature)
    for key, p in declared.items():
        assert p.default == signature[key].default, key
        assert p.help, key
        p.check(p.default, name)     # the default is accepted


@pytest.mark.parametrize("name", sorted(WORKLOADS))
def test_values_out_of_range_are_refused_naming_the_parameter(name):
    for key, p in declared_workload(name).items():
        if p.kind == "bool":
            bad = [3, "yes"]
        elif p.choices:
            bad = [max(p.choices) + 1]
        else:
            bad = [p.low - 1, p.high + 1, 1.5]
        for value in bad:
            with pytest.raises(TraceError, match=f"workload '{name}': {key} must be"):
                make_workload(name, **{key: value})


@pytest.mark.parametrize("name", sorted(WORKLOADS))
def test_presets_are_accepted_parameters(name):
    func = WORKLOADS[name]
    assert func.presets, "each workload names at least the seed's own run"
    for label, params in func.presets.items():
        declared = declared_workload(name)
        for key, value in params.items():
            declared[key].check(value, name)


def test_spec_values_are_read_by_their_declaration():
    t = load_trace("djgpp1997:max_size=8K,actions=300")
    assert same_ops(t, djgpp1997(actions=300, max_size=8192))
    with pytest.raises(TraceError, match="max_size must be a size in bytes"):
        load_trace("djgpp1997:max_size=lots")


@pytest.mark.parametrize("name", sorted(WORKLOADS))
def test_every_workload_is_valid_and_named_by_its_spec(name, tmp_path):
    t = make_workload(name)
    t.validate()
    assert t.name == name  # defaults: the bare name
    assert same_ops(load_trace(t.name), t)
    path = tmp_path / "w.rep"
    write_rep(t, path)
    assert same_ops(read_rep(path), t)


# --- vo1989 -----------------------------------------------------------------------

def test_vo1989_sizes_lifetimes_and_end():
    t = vo1989(steps=3000, min_size=5, max_size=60, min_life=20, max_life=50, seed=3)
    assert t.num_ids == 3000 and len(t) == 6000
    sizes = t.sizes[t.kind == ALLOC]
    assert sizes.min() >= 5 and sizes.max() <= 60
    assert sizes.min() == 5 and sizes.max() == 60  # the bounds are reachable
    born, died, steps = lifetimes(t)
    assert steps == 3000
    for ident, b in born.items():
        life = died[ident] - b
        if died[ident] < steps:   # freed during the run: its lifetime is exact
            assert 20 <= life <= 50
        else:                     # freed at the end: its time was not up yet
            assert steps - b <= 50
    assert {died[i] - born[i] for i in born if died[i] < steps} == set(range(20, 51))
    assert_all_freed_once(t)


def test_vo1989_frees_come_before_the_malloc_in_allocation_order():
    t = vo1989(steps=2000, min_life=1, max_life=30, seed=11)
    ops = list(t)
    assert ops[0][0] == ALLOC
    group: list[int] = []
    for kind, ident, _ in ops:
        if kind == FREE:
            group.append(ident)
        else:
            assert group == sorted(group)
            group = []
    assert group == sorted(group)   # the final frees too
    # with lifetime 1, a block dies right before the next malloc
    born, died, _ = lifetimes(t)
    assert min(died[i] - born[i] for i in born) == 1


def test_vo1989_default_matches_vo_figures():
    s = vo1989().stats()
    assert s["allocs"] == 10000 and s["min_size"] >= 1 and s["max_size"] <= 1000
    # Vo's run: Salloc = 304921 (max live bytes); a fair generator lands close.
    assert abs(s["max_live_bytes"] - 304921) / 304921 < 0.1


def test_vo1989_rejects_bad_parameters():
    with pytest.raises(ValueError):
        vo1989(min_life=0)
    with pytest.raises(ValueError):
        vo1989(min_size=10, max_size=5)


# --- the others ----------------------------------------------------------------

def test_korn_vo1985_sizes_in_words_and_lifetimes():
    t = korn_vo1985(steps=5000, seed=2, word=4)
    sizes = t.sizes[t.kind == ALLOC]
    assert (sizes % 4 == 0).all()
    assert sizes.min() >= 2 * 4 and sizes.max() <= 501 * 4
    born, died, steps = lifetimes(t)
    assert steps == 5000
    lives = [died[i] - born[i] for i in born if died[i] < steps]
    assert min(lives) >= 1 and max(lives) <= 1000
    assert_all_freed_once(t)


@pytest.mark.parametrize("m", [20, 100])
def test_plotnick1983(m):
    t = plotnick1983(n=500, m=m)
    assert len(t) == 1000 and t.num_ids == 500
    assert (t.kind[:500] == ALLOC).all() and (t.sizes[:500] == m).all()
    assert (t.kind[500:] == FREE).all()
    assert t.stats()["max_live_bytes"] == 500 * m
    g = plotnick1983(n=500, m=m, giant_first=True)
    assert list(g)[:2] == [(ALLOC, 0, 500 * m), (FREE, 0, 0)]
    assert len(g) == 1002 and g.num_ids == 501
    assert g.stats()["max_live_bytes"] == 500 * m
    assert "giant_first=True" in g.name and same_ops(load_trace(g.name), g)
    assert_all_freed_once(g)


def test_djgpp1997_slots_and_sizes():
    t = djgpp1997(actions=4000, slots=32, max_size=1000, seed=4)
    sizes = t.sizes[t.kind == ALLOC]
    assert sizes.min() >= 0 and sizes.max() <= 1000
    s = t.stats()
    assert s["max_live_blocks"] <= 32
    assert_all_freed_once(t)
    # every action is one op; the final frees empty the still-full slots
    assert len(t) - 4000 == s["allocs"] - (4000 - s["allocs"])
    assert s["reallocs"] == 0 and REALLOC not in set(t.kind.tolist())


def test_djgpp1997_one_op_per_action_each_slot_alternating():
    t = djgpp1997(actions=3000, slots=16, max_size=50, seed=9)
    sizes = t.sizes[t.kind == ALLOC]
    assert sizes.min() == 0 and sizes.max() == 50          # 0..max_size, both reachable
    # ids are handed out in order; each id is freed exactly once
    assert list(t.ids[t.kind == ALLOC]) == list(range(t.num_ids))
    assert_all_freed_once(t)
    # the first 3000 ops are the actions; what follows frees the slots still full
    tail = t.kind[3000:]
    assert (tail == FREE).all() and len(tail) == t.stats()["allocs"] - (3000 - t.stats()["allocs"])
    live, peak = set(), 0
    for kind, ident, _ in list(t)[:3000]:
        live.symmetric_difference_update({ident})
        peak = max(peak, len(live))
    assert 12 <= peak <= 16     # never more blocks live than slots, and most of them used


def test_korn_vo1985_bounds_are_reached():
    t = korn_vo1985(steps=20000, seed=5, word=8)
    sizes = t.sizes[t.kind == ALLOC]
    assert sizes.min() == 2 * 8 and sizes.max() == 501 * 8
    born, died, steps = lifetimes(t)
    lives = {died[i] - born[i] for i in born if died[i] < steps}
    assert min(lives) == 1 and max(lives) == 1000


def test_dowdeswell1999_phases_counts_and_sizes():
    t = dowdeswell1999(regions=200, min_size=16, max_size=1000, seed=2)
    classes = [16, 32, 64, 128, 256, 512]          # 1024 > max_size
    n = 200
    assert t.num_ids == n * len(classes) and len(t) == 2 * n * len(classes)
    assert t.stats()["max_live_blocks"] == n
    assert_all_freed_once(t)
    for k, s in enumerate(classes):
        phase = slice(2 * n * k, 2 * n * (k + 1))
        kind, ids, sizes = t.kind[phase], t.ids[phase], t.sizes[phase]
        assert (kind[:n] == ALLOC).all() and (kind[n:] == FREE).all()
        assert list(ids[:n]) == list(range(k * n, (k + 1) * n))
        assert list(ids[n:]) == list(ids[:n])        # freed in allocation order
        assert sizes[:n].min() == s // 2 + 1 and sizes[:n].max() == s    # (s/2, s], both ends reached


def test_dowdeswell1999_refuses_what_it_cannot_make():
    with pytest.raises(ValueError, match="min_size <= max_size"):
        dowdeswell1999(min_size=64, max_size=32)
    with pytest.raises(TraceError, match="more than 10,000,000 operations"):
        make_workload("dowdeswell1999", regions=1 << 20, min_size=1, max_size=1 << 20)
    one = dowdeswell1999(regions=3, min_size=1, max_size=1)
    assert list(one.sizes[:3]) == [1, 1, 1]


# --- registry and specs ------------------------------------------------------------

def test_make_workload_errors():
    with pytest.raises(TraceError, match="unknown workload 'nope'"):
        make_workload("nope")
    with pytest.raises(TraceError, match="has no parameter 'stepz'"):
        make_workload("vo1989", stepz=3)
    with pytest.raises(TraceError, match="min_life"):
        make_workload("vo1989", min_life=0)


def test_parse_values_and_specs():
    assert parse_scalar("12") == 12 and type(parse_scalar("12")) is int
    assert parse_scalar("1.5") == 1.5
    assert parse_scalar("true") is True and parse_scalar("No") is False
    assert parse_scalar("abc") == "abc"
    assert parse_spec("vo1989:seed=3, steps=500") == ("vo1989", {"seed": 3, "steps": 500})
    assert parse_spec("vo1989") == ("vo1989", {})
    with pytest.raises(TraceError, match="expected key=value"):
        parse_spec("vo1989:seed")


def test_load_trace_specs(tmp_path):
    t = load_trace("vo1989:seed=3,steps=500")
    assert same_ops(t, vo1989(seed=3, steps=500))
    assert t.name == "vo1989:steps=500,seed=3"
    g = load_trace("plotnick1983:n=10,giant_first=true")
    assert g.op(0) == (ALLOC, 0, 200)
    with pytest.raises(TraceError, match="neither a trace file nor a known workload"):
        load_trace("no-such-workload")
    with pytest.raises(TraceError, match="cannot read"):
        load_trace(str(tmp_path / "missing.rep"))
    path = tmp_path / "w.rep.gz"
    write_rep(t, path)
    assert same_ops(load_trace(str(path)), t)
    assert same_ops(load_trace(path), t)   # a Path object


# --- bundled -------------------------------------------------------------------------

def test_bundled_default_trace():
    path = default_trace_path()
    assert path.name == "default.rep" and path.is_file()
    assert os.path.getsize(path) <= 400 * 1024
    t = read_rep(path)
    t.validate()
    assert len(t) == 20000 and t.num_ids == 10000
    # it is what make_bundled writes: vo1989() with default parameters
    assert same_ops(t, vo1989())
    assert same_ops(load_trace(str(path)), t)


@pytest.mark.parametrize("spec, words", [
    ("vo1989:steps=abc", "steps must be an integer in 0..5000000, got 'abc'"),
    ("plotnick1983:giant_first=3", "giant_first must be true or false, got '3'"),
    ("vo1989:seed=1.5", "seed must be an integer in 0..2147483647, got '1.5'"),
])
def test_a_parameter_of_the_wrong_type_is_named(spec, words):
    with pytest.raises(TraceError) as info:
        load_trace(spec)
    assert words in str(info.value)
