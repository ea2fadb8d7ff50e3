"""heapscope/experiments/plotnick1983.py without a replay: its jobs written
out by hand, its tables, findings and chart read off rows made up by hand
(the ratios to the buckets and the seed's worked out here)."""

import pytest

from heapscope.experiments import get
from heapscope.experiments.model import SEED
from heapscope.experiments.runner import Job

PLOTNICK = get("plotnick1983")
V7, BUCKETS = "v7-malloc", "bsd-buckets"
KEYS = ["m20", "m20_giant", "m100", "m100_giant"]


def test_its_jobs_are_each_size_without_and_with_the_giant_block_on_vax_settings():
    run = PLOTNICK.prepare([BUCKETS, "tlsf"], {"sizes": "20,100,20"}, {"n": "500"})
    expected = []
    for m in (20, 100):
        for giant in (False, True):
            key = f"m{m}" + ("_giant" if giant else "")
            for name in (BUCKETS, "tlsf"):
                expected.append(Job.of(
                    (key, name), ("plotnick1983", {"n": 500, "m": m, "giant_first": giant}), name,
                    {"word": 4, **({"pagesize": 1024} if name == BUCKETS else {})}, resident_page=1024,
                    label=f"{name}, m={m}" + (", giant first" if giant else "")))
    assert PLOTNICK.jobs(run) == expected


def _row(work, heap_by_work=20480, max_heap=40960, resident=10240, grows=10, search=1.0, wall=0.5):
    return {"search_mean": search, "work_per_op": work, "wall_s": wall, "heap_by_work": heap_by_work,
            "max_heap": max_heap, "resident": resident, "grows": grows}


#: key -> strategy -> row, made up: v7-malloc's work 200, 50, 300, 100 per op
ROWS = {
    "m20": {V7: _row(200, search=100), BUCKETS: _row(2, 30720, 61440, 20480, 3, wall=0.01),
            "tlsf": _row(4)},
    "m20_giant": {V7: _row(50), BUCKETS: _row(2, 30720, 61440, 20480, 3), "tlsf": _row(4)},
    "m100": {V7: _row(300), BUCKETS: _row(3), "tlsf": _row(4)},
    "m100_giant": {V7: _row(100), BUCKETS: _row(3), "tlsf": _row(4)},
}


def _result(rows=ROWS, only=(V7, BUCKETS, "tlsf"), sizes="20,100", workload=None):
    run = PLOTNICK.prepare(list(only), {"sizes": sizes}, {"n": "500"} if workload is None else workload)
    return PLOTNICK.result(run, {(k, s): r for k, by in rows.items() for s, r in by.items() if s in only})


def test_a_row_is_the_seeds_run_beside_ours_in_kib_and_against_the_buckets():
    result = _result()
    assert [t.key for t in result.tables] == KEYS
    assert [t.title for t in result.tables] == [
        "500 blocks of 20 bytes", "500 blocks of 20 bytes, giant free(malloc()) first",
        "500 blocks of 100 bytes", "500 blocks of 100 bytes, giant free(malloc()) first"]
    v7 = result.table("m20").row(V7)
    assert v7 == {"strategy": V7, "seed_name": "normal 4bsd", "role": SEED,
                  "seed_user": 101.5, "seed_kdata": 312, "seed_kmax": 476,
                  "search_mean": 100, "work_per_op": 200, "work_x": 100.0, "wall_ms": 500.0,
                  "kdata": 20.0, "kmax": 40.0, "resident": 10.0, "sbrks": 10}
    caltech = result.table("m100_giant").row(BUCKETS)
    assert (caltech["seed_name"], caltech["seed_user"], caltech["seed_kdata"], caltech["seed_kmax"]) == \
        ("caltech", 3.2, 1071, 1529)
    assert caltech["work_x"] == 1.0
    assert result.table("m100").row(V7)["seed_kmax"] == 1713
    assert result.table("m20_giant").row(BUCKETS)["seed_user"] == 2.2
    # the seed's 4.1c keeps its row and figures, not run
    c = result.table("m100").row("(none)")
    assert c["available"] is False and c["seed_name"] == "4.1c" and c["note"].startswith(
        "not available: 4.1c's malloc.c.new is described only as 'chunks of m+4 bytes")
    assert (c["seed_user"], c["seed_kdata"], c["seed_kmax"]) == (4.1, 978, 1595)
    assert "work_per_op" not in c
    assert result.table("m20").row("tlsf")["work_x"] == 2.0


def test_without_the_buckets_nothing_is_divided_and_an_error_is_its_rows():
    rows = {k: dict(v) for k, v in ROWS.items()}
    rows["m20"]["tlsf"] = {"error": "boom"}
    result = _result(rows, (V7, "tlsf"))
    assert result.table("m20").row(V7)["work_x"] is None
    assert result.table("m20").row("tlsf")["error"] == "boom"


def test_the_notes_and_the_setup():
    result = _result()
    assert result.tables[0].notes[0].startswith("seed: user seconds, kdata (average data size, KiB)")
    assert result.tables[0].notes[0].endswith("which is what a resident set such as kmax counts.")
    assert result.tables[-1].notes == [
        "m = 100 needs about 2 MB, all the 750 had: the seed's kmax there is what fitted in memory "
        "(the 4bsd run swapped 144 times), not the heap."]
    assert result.setup == [
        "workload: plotnick1983, n = 500, m = 20 and 100, each without and with the giant "
        "free(malloc(n*m)) first", "strategies: VAX settings (4-byte words; 1 KiB pages for the buckets)"]
    only20 = _result(sizes="20", workload={})
    assert [len(t.notes) for t in only20.tables] == [1, 0]
    assert only20.tables[0].title == "20000 blocks of 20 bytes"          # the seed's n


def test_the_findings_give_the_work_against_the_buckets_and_what_the_giant_block_cuts():
    assert _result().findings == [
        "500 blocks of 20 bytes: v7-malloc does 100x the work of bsd-buckets (seed: 44x in user time)",
        "500 blocks of 20 bytes: max heap 40 KiB for v7-malloc, 60 KiB for bsd-buckets (seed kmax: "
        "476 and 631, with the program's own pages)",
        "500 blocks of 20 bytes, giant free(malloc()) first: v7-malloc does 25x the work of "
        "bsd-buckets (seed: 15x in user time)",
        "500 blocks of 20 bytes, giant free(malloc()) first: max heap 40 KiB for v7-malloc, 60 KiB "
        "for bsd-buckets (seed kmax: 476 and 631, with the program's own pages)",
        "500 blocks of 100 bytes: v7-malloc does 100x the work of bsd-buckets (seed: 220x in user time)",
        "500 blocks of 100 bytes, giant free(malloc()) first: v7-malloc does 33x the work of "
        "bsd-buckets (seed: 24x in user time)",
        "500 blocks of 20 bytes: the giant free(malloc()) first cuts v7-malloc's work 4.0x "
        "(as in the seed: 101.5 s -> 33.0 s)",
        "500 blocks of 100 bytes: the giant free(malloc()) first cuts v7-malloc's work 3.0x "
        "(as in the seed: 727.5 s -> 77.6 s)"]


def test_a_giant_block_that_cuts_nothing_is_not_as_in_the_seed():
    rows = {k: dict(v) for k, v in ROWS.items()}
    rows["m20_giant"][V7] = _row(200)
    found = _result(rows, sizes="20").findings
    assert found[-1] == ("500 blocks of 20 bytes: the giant free(malloc()) first cuts v7-malloc's "
                         "work 1.0x (NOT as in the seed: 101.5 s -> 33.0 s)")


def test_the_chart_draws_the_seeds_allocators_that_ran():
    chart = _result().chart
    assert chart.title == "Plotnick 1983: n blocks of m bytes on VAX settings"
    user, work, kib = chart.panels
    labels = ["m20", "m20 +giant", "m100", "m100 +giant"]
    assert (user.title, user.x_labels, user.y_label, user.log_y) == (
        "the seed's user seconds (VAX 11/750)", labels, "seconds", True)
    assert [(s.label, s.values, s.source) for s in user.series] == [
        ("normal 4bsd (seed)", [101.5, 33.0, 727.5, 77.6], SEED), ("caltech (seed)", [2.3, 2.2, 3.3, 3.2], SEED)]
    assert (work.title, work.y_label, work.log_y) == ("our work units per operation", "work / op", True)
    assert [(s.label, s.values) for s in work.series] == [(V7, [200, 50, 300, 100]), (BUCKETS, [2, 2, 3, 3])]
    assert (kib.title, kib.y_label, kib.log_y) == (
        "the seed's kmax and our resident KiB (pages written)", "KiB", False)
    assert [(s.label, s.values) for s in kib.series] == [
        ("kmax, normal 4bsd (seed)", [476, 476, 1713, 1706]), ("kmax, caltech (seed)", [631, 632, 1509, 1529]),
        (f"{V7}, resident", [10.0] * 4), (f"{BUCKETS}, resident", [20.0, 20.0, 10.0, 10.0])]


def test_with_none_of_the_seeds_allocators_the_chart_draws_ours_and_no_seed_seconds():
    chart = _result(only=("tlsf",)).chart
    assert [p.title for p in chart.panels] == ["our work units per operation",
                                               "the seed's kmax and our resident KiB (pages written)"]
    assert [s.label for s in chart.panels[0].series] == ["tlsf"]


def test_the_result_names_the_seed_it_reruns_and_the_experiment_sets_m_itself():
    from heapscope.experiments import ExperimentError
    result = _result()
    assert (result.experiment, result.title) == (
        "plotnick1983", "Plotnick 1983: n blocks of m bytes, with and without a giant free(malloc()) first")
    assert result.source == ("seed 002: Mark Plotnick, 'In Search Of... fast malloc', net.unix, 1983; "
                             "a VAX 11/750 with 2 MB of memory running 4.1BSD")
    for fixed in ("m", "giant_first"):
        with pytest.raises(ExperimentError, match=f"experiment plotnick1983 sets {fixed} itself"):
            PLOTNICK.prepare(["tlsf"], {}, {fixed: "1"})
    assert PLOTNICK.prepare(["tlsf"], {}, {}).settings["sizes"] == (20, 100)
