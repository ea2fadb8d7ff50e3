"""Conditions over what a step did (allocators/conditions.py) and finding
them over a whole replay (allocators/find.py, ``heapscope find``).

The expected steps come from elsewhere than the finder: the replay's own
records (every step applied with its events, counting what each did), or
the metric series read directly with numpy."""

import json
import time

import numpy as np
import pytest

from heapscope.allocators import conditions
from heapscope.allocators.conditions import ConditionError, StepColumns, decide, parse
from heapscope.allocators.find import find_steps, step_words
from heapscope.allocators.metrics import MetricSeries
from heapscope.allocators.registry import make_strategy, strategy_names
from heapscope.allocators.replay import Program, Timeline, apply_op
from heapscope.cli import main
from heapscope.traces import load_trace, make_workload

#: a real bundled trace, small enough to replay every strategy in a test
TRACE = "perl-words"
#: a fixed pool in which every strategy fails some requests on it
POOL = 65536


@pytest.fixture(scope="module")
def perl():
    return load_trace(TRACE)


def records(timeline):
    """Every step's record, from a replay of our own with events on."""
    strategy = make_strategy(timeline.strategy_name, **timeline.params)
    program = Program()
    strategy.record = True
    return [apply_op(strategy, program, *timeline.op(step)) for step in range(1, timeline.n + 1)]


@pytest.fixture(scope="module")
def pooled(perl):
    """Each strategy's timeline of the trace in the fixed pool, and its records."""
    out = {}
    for name in strategy_names():
        tl = Timeline(perl, name, {"pool_size": POOL}).build()
        out[name] = (tl, records(tl))
    return out


# ------------------------------------------------------------------ syntax
@pytest.mark.parametrize("text, column, says", [
    ("serch > 100", 1, "unknown name 'serch'"),
    ("failed and frob", 12, "unknown name 'frob'"),
    ('event == "Frob"', 10, "unknown event 'Frob'"),
    ('rotation == "zag"', 13, "unknown value of rotation 'zag'; known: zig, zig-zig, zig-zag"),
    ("search >", 9, "expected a value"),
    ("search 100", 8, "expected an operator"),
    ("(failed or grew", 16, "expected ')' to close the '(' of column 1"),
    ("failed grew", 8, "expected 'and', 'or' or the end"),
    ("failed == 1", 8, "failed is true or false on its own"),
    ("kind < \"free\"", 6, "compare it with == or !="),
    ("size > 4k", 8, "'4k' is not a number"),
    ("search @ 3", 8, "unexpected character '@'"),
    ("cell == 3", 9, "a TLSF cell is two numbers"),
    ("", 1, "the condition is empty"),
])
def test_a_mistake_names_its_column_and_what_was_expected(text, column, says):
    with pytest.raises(ConditionError) as caught:
        parse(text)
    err = caught.value
    assert err.column == column and says in str(err)
    assert str(err).startswith(f"column {column}: ")


def test_an_unknown_name_lists_the_known_ones_and_an_unknown_event_the_events():
    with pytest.raises(ConditionError) as caught:
        parse("frob")
    assert all(name in str(caught.value) for name in ("search", "failed", "merges", "rotation"))
    with pytest.raises(ConditionError) as caught:
        parse('event == "Frob"')
    assert all(name in str(caught.value) for name in ("Coalesce", "BuddyMerge", "Trim", "ClassProbe"))


def test_the_examples_of_the_docs_read():
    for text in ("failed", "search > 100", "merges >= 3", "id == 2782", "grew and frag > 0.5",
                 'rotation == "zig-zag"', "free and not merged", "(avail == 7 or split) and size >= 4096",
                 "cell == (3, 5)", "addr == 0x1a40", 'kind == "realloc"', "util < 0.25"):
        assert parse(text).text == text


def test_and_binds_tighter_than_or_and_not_tighter_than_both(perl):
    tl = Timeline(perl, "first-fit").build()
    s = tl.series
    merged, split, grew = s.merges > 0, s.splits > 0, s.grows > 0
    cases = {
        "merged or split and not grew": merged | (split & ~grew),
        "(merged or split) and not grew": (merged | split) & ~grew,
        "not merged and split": ~merged & split,
        "not (merged and split)": ~(merged & split),
    }
    for text, mask in cases.items():
        assert list(find_steps(tl, parse(text)).steps) == list(np.flatnonzero(mask) + 1), text


# ------------------------------------------------------------ the measures
def test_failed_counts_the_replays_failed_requests_for_every_strategy(pooled):
    for name, (tl, recs) in pooled.items():
        own = sum(1 for rec in recs if rec.failed)
        assert own > 0, name
        found = find_steps(tl, parse("failed"))
        assert found.count == own == tl.summary()["failed"], name
        assert list(found.steps) == [i + 1 for i, rec in enumerate(recs) if rec.failed], name


@pytest.mark.parametrize("name", ["next-fit", "splay-best-fit", "tlsf", "v7-malloc"])
def test_search_over_n_is_exactly_the_steps_whose_search_length_exceeds_n(pooled, name):
    tl, _ = pooled[name]
    search = tl.series.search
    for n in (0, 1, 3, int(np.percentile(search, 99))):
        expected = np.flatnonzero(search > n) + 1
        found = find_steps(tl, parse(f"search > {n}"))
        assert found.walked == 0            # decided from the columns, no replay
        assert np.array_equal(found.steps, expected), (name, n)


def test_operation_fields_read_the_trace(perl):
    tl = Timeline(perl, "tlsf").build()
    ident = int(perl.ids[100])
    expected = np.flatnonzero(perl.ids == ident) + 1
    assert np.array_equal(find_steps(tl, parse(f"id == {ident}")).steps, expected)
    # a free's size is the size its id was last asked for (what inspect says)
    asked, expected = {}, []
    for i, (kind, ident, size) in enumerate(zip(perl.kind.tolist(), perl.ids.tolist(), perl.sizes.tolist())):
        if kind == 1 and asked.get(ident, 0) >= 100:
            expected.append(i + 1)
        elif kind != 1:
            asked[ident] = size
    assert expected
    assert list(find_steps(tl, parse('kind == "free" and size >= 100')).steps) == expected
    line = int(perl.line_numbers[41])
    assert list(find_steps(tl, parse(f"line == {line}")).steps) == [42]


# --------------------------------------------------------------- the events
@pytest.mark.parametrize("name, text, holds", [
    ("splay-best-fit", 'rotation == "zig-zag"',
     lambda rec: any(type(e).__name__ == "Rotation" and e.kind == "zig-zag" for e in rec.events)),
    ("splay-best-fit", "not rotation and merged",
     lambda rec: rec.merges > 0 and not any(type(e).__name__ == "Rotation" for e in rec.events)),
    ("buddy", "avail == 9 and not free",
     lambda rec: rec.kind != "free" and any(type(e).__name__ == "AvailProbe" and e.order == 9
                                            for e in rec.events)),
    ("tlsf", "cell == (1, 0)",
     lambda rec: any((type(e).__name__ == "MappingSearch" and (e.fl, e.sl) == (1, 0))
                     or (type(e).__name__ == "BitmapProbe" and e.found == (1, 0))
                     or (type(e).__name__ in ("ListInsert", "ListRemove") and tuple(e.where) == (1, 0))
                     for e in rec.events)),
    ("bsd-buckets", "refill == 4",
     lambda rec: any(type(e).__name__ == "BucketRefill" and e.bucket == 4 for e in rec.events)),
    ("dlmalloc", 'event == "Trim" or event == "Coalesce"',
     lambda rec: any(type(e).__name__ in ("Trim", "Coalesce") for e in rec.events)),
])
def test_event_conditions_match_the_steps_whose_events_say_so(perl, name, text, holds):
    tl = Timeline(perl, name).build()
    expected = [i + 1 for i, rec in enumerate(records(tl)) if holds(rec)]
    assert expected, (name, text)
    found = find_steps(tl, parse(text))
    assert list(found.steps) == expected


def test_addr_names_every_step_that_involved_a_block(perl):
    tl = Timeline(perl, "first-fit").build()
    recs = records(tl)
    from heapscope.allocators.explain import event_addresses
    addr = next(e.addr for e in recs[300].events if hasattr(e, "addr"))
    expected = [i + 1 for i, rec in enumerate(recs)
                if addr in (rec.payload, rec.old_payload)
                or any(addr in event_addresses(e) for e in rec.events)]
    assert 301 in expected
    assert list(find_steps(tl, parse(f"addr == {addr:#x}")).steps) == expected


def test_the_event_bounds_hold_on_every_built_in_strategy(pooled):
    """Each event type of EVENT_BOUNDS comes only on steps its column allows,
    so that the finder may skip the others (a wrong bound loses matches)."""
    for name, (tl, recs) in pooled.items():
        s = tl.series
        for i, rec in enumerate(recs):
            for e in rec.events:
                column = conditions.EVENT_BOUNDS.get(type(e).__name__)
                if column is not None:
                    assert getattr(s, column)[i], (name, i + 1, e)


def test_a_user_strategys_events_bound_nothing(perl):
    """A strategy of your own may emit a Rotation without counting it: its
    event tests are decided from its events alone."""
    tl = Timeline(perl, "tlsf").build()
    cols = StepColumns(tl.series, perl, tl.built, counted=False)
    matched, undecided = decide(parse('rotation == "zig"'), cols)
    assert not matched.any() and undecided.all()


def test_the_matching_event_is_the_first_an_event_test_holds_for(perl):
    tl = Timeline(perl, "buddy").build()
    found = find_steps(tl, parse("avail == 9"))
    step = int(found.steps[0])
    tl.seek(step)
    index = parse("avail == 9 and not failed").matching_event(tl.last_record)
    event = tl.last_record.events[index]
    assert type(event).__name__ == "AvailProbe" and event.order == 9
    assert all(not (type(e).__name__ == "AvailProbe" and e.order == 9) for e in tl.last_record.events[:index])
    assert parse("search > 1").matching_event(tl.last_record) is None


def test_the_words_are_the_windows(perl):
    tl = Timeline(perl, "next-fit", {"pool_size": POOL}).build()
    steps = find_steps(tl, parse("failed or merges >= 2")).steps[:20]
    words = step_words(tl, steps)
    for step, text in zip(steps, words):
        tl.seek(int(step))
        assert text == tl.describe()


def test_a_million_steps_are_searched_in_a_few_seconds():
    """Measure conditions over 1,000,000 steps: numpy columns, no replay."""
    n = 1_000_000
    rng = np.random.default_rng(5)
    series = MetricSeries(n)
    series.search[:] = rng.integers(0, 200, n)
    series.merges[:] = rng.integers(0, 5, n)
    series.grows[:] = rng.integers(0, 2, n)
    series.free[:] = rng.integers(1, 1 << 20, n)
    series.largest_free[:] = series.free // rng.integers(1, 4, n)
    series.failed[:] = rng.random(n) < 0.01
    trace = make_workload("vo1989", steps=n // 2, seed=1)
    cols = StepColumns(series, trace, n)
    t0 = time.perf_counter()
    matched, undecided = decide(parse("(search > 100 and merges >= 3) or (grew and frag > 0.5) or failed"),
                                cols)
    spent = time.perf_counter() - t0
    expected = ((series.search > 100) & (series.merges >= 3)) | (
        (series.grows > 0) & (series.external(True) > 0.5)) | series.failed
    assert np.array_equal(matched, expected) and not undecided.any()
    assert spent < 3.0, spent


# ------------------------------------------------------------ heapscope find
def test_find_prints_the_matches_in_the_windows_words(capsys):
    assert main(["find", TRACE, "-s", "buddy", "--when", "merges >= 5", "--pool-size", str(POOL)]) == 0
    out = capsys.readouterr().out.splitlines()
    tl = Timeline(load_trace(TRACE), "buddy", {"pool_size": POOL}).build()
    expected = np.flatnonzero(tl.series.merges >= 5) + 1
    assert out[0] == f"# {TRACE}, buddy: {len(expected):,} of {tl.n:,} steps where merges >= 5"
    assert len(out) == 1 + len(expected)
    tl.seek(int(expected[0]))
    assert out[1] == tl.describe()


def test_find_count_and_json(capsys):
    assert main(["find", TRACE, "-s", "tlsf", "--when", "failed", "--pool-size", str(POOL), "--count"]) == 0
    count = int(capsys.readouterr().out)
    tl = Timeline(load_trace(TRACE), "tlsf", {"pool_size": POOL}).build()
    assert count == tl.summary()["failed"]
    assert main(["find", TRACE, "-s", "tlsf", "--when", "failed", "--pool-size", str(POOL),
                 "-f", "json", "--limit", "3"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["count"] == count and len(report["matches"]) == 3
    assert report["matches"][0]["step"] == int(np.flatnonzero(tl.series.failed)[0]) + 1


def test_find_exit_statuses(capsys):
    assert main(["find", TRACE, "-s", "tlsf", "--when", "search > 100000"]) == 1
    assert main(["find", TRACE, "-s", "tlsf", "--when", "search > 1 and frob"]) == 2
    err = capsys.readouterr().err
    assert "heapscope: error: bad condition: column 16: unknown name 'frob'" in err
    assert "search > 1 and frob\n                 ^" in err
    assert "Traceback" not in err


def test_find_on_a_strategy_of_your_own_that_fails_searches_the_steps_before(capsys):
    """examples/broken.py hands a block out twice at step 80 of perl-words:
    the 79 steps before are searched (in its worker), and a warning says why
    no more."""
    from pathlib import Path

    from heapscope.allocators import plugins
    broken = f"{Path(__file__).resolve().parents[1] / 'examples' / 'broken.py'}:Broken"
    try:
        assert main(["find", TRACE, "--allocator", broken, "-s", "broken", "--when", "malloc",
                     "--count"]) == 0
        captured = capsys.readouterr()
        expected = int((load_trace(TRACE).kind[:79] == 0).sum())      # ALLOC
        assert int(captured.out) == expected
        assert "warning: the replay stopped at step 80, malloc(2): your _malloc returned" in captured.err
        assert "the 79 steps before it were searched" in captured.err
    finally:
        plugins.forget("broken")


# ------------------------------------------- event types a strategy never makes
def test_every_built_in_strategy_declares_each_event_type_it_makes(pooled):
    """Strategy.makes_events lets the finder answer a test of another type
    at once, so it must hold every type a record can carry: checked on the
    real trace in a fixed pool (failures) and on a workload in a heap grown
    by sbrk (growth, trims, shrinks), from replays of our own."""
    grown = make_workload("vo1989", steps=1500, seed=3)
    for name in strategy_names():
        declared = make_strategy(name).makes_events
        assert declared, f"{name} declares no makes_events"
        seen = {type(e).__name__ for rec in pooled[name][1] for e in rec.events}
        strategy, program = make_strategy(name), Program()
        strategy.record = True
        for op in grown:
            seen.update(type(e).__name__ for e in apply_op(strategy, program, *op).events)
        assert seen <= declared, (name, sorted(seen - declared))
        assert declared <= set(conditions.event_types()), (name, sorted(declared - set(conditions.event_types())))


def test_a_test_of_an_event_the_strategy_never_makes_is_answered_without_a_replay(perl):
    """Issue 22: avail == 3 over a long TLSF replay walked every malloc (57 s
    for 1M steps), though TLSF never probes AVAIL."""
    tl = Timeline(perl, "tlsf", {"pool_size": POOL}).build()
    t0 = time.perf_counter()
    found = find_steps(tl, parse("avail == 3"))
    spent = time.perf_counter() - t0
    assert found.count == 0 and found.walked == 0 and spent < 0.05, spent
    assert found.never_text("tlsf") == "tlsf makes no AvailProbe event: avail holds at no step"
    # combined: the other part still decides (the failed steps, from the series)
    found = find_steps(tl, parse("avail == 3 or failed"))
    assert list(found.steps) == list(np.flatnonzero(tl.series.failed) + 1) and found.walked == 0
    assert find_steps(tl, parse("not refill")).count == tl.n
    assert find_steps(tl, parse('event == "Trim"')).walked == 0          # dlmalloc's, not TLSF's
    assert find_steps(tl, parse('rotation == "zig"')).walked == 0
    # an event TLSF makes is still searched for
    assert find_steps(tl, parse("cell == (0, 3)")).walked > 0
    # and buddy, which probes AVAIL, is walked as before
    buddy = Timeline(perl, "buddy", {"pool_size": POOL}).build()
    found = find_steps(buddy, parse("avail == 9"))
    assert found.walked > 0 and found.count > 0 and not found.never


def test_find_says_what_the_strategy_never_makes(capsys):
    assert main(["find", TRACE, "-s", "tlsf", "--when", "avail == 3"]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[1] == "# tlsf makes no AvailProbe event: avail holds at no step"
