"""heapscope/experiments/coppa2010.py without a replay: its jobs written out
by hand, its tables, summary, findings and chart read off rows made up by
hand (MallocLab's sums worked out here: mean utilisation, total operations
over total seconds), so that each is checked in milliseconds."""

import pytest

from heapscope.experiments import ExperimentError, get
from heapscope.experiments.model import SEED
from heapscope.experiments.runner import Job

COPPA = get("coppa2010")
A, B = "vo1989:seed=1", "vo1989:seed=2"
BSA = "segregated-first-fit"


def test_its_jobs_are_each_trace_through_each_strategy_at_the_word_size():
    run = COPPA.prepare(["tlsf", BSA], {"traces": f"{A},{B},{A}", "word": "4"})
    assert COPPA.jobs(run) == [Job.of((t, n), t, n, {"word": 4}, label=f"{n}, {t}")
                               for t in (A, B) for n in ("tlsf", BSA)]
    default = COPPA.prepare(["tlsf"], {})
    assert [j.trace for j in COPPA.jobs(default)] == ["python3-json", "gcc-cc1", "sqlite3-sql", "perl-words"]
    assert COPPA.jobs(default)[0].params == (("word", 8),)


@pytest.mark.parametrize("name", ["vo1989", "x/y.rep", "t.rep", "t.rep.gz", "perl-words", "w:steps=5"])
def test_a_trace_is_a_bundled_one_a_workload_or_a_file(name):
    run = COPPA.prepare(["tlsf"], {"traces": name})
    assert [j.trace for j in COPPA.jobs(run)] == [name]


def test_any_other_name_is_refused_with_the_bundled_ones():
    with pytest.raises(ExperimentError, match=r"^experiment coppa2010: 'nonesuch' is no bundled trace "
                                              r"\(bundled: [a-z0-9-]+(, [a-z0-9-]+)+\)$"):
        COPPA.jobs(COPPA.prepare(["tlsf"], {"traces": "nonesuch"}))


def _row(util, heap, search, work, ops, wall):
    return {"utilisation": util, "max_heap": heap, "search_mean": search, "work_per_op": work,
            "ops": ops, "wall_s": wall}


#: made up; Kops/s = ops / wall / 1000: A: tlsf 10, BSA 5, buddy 2.5; B: tlsf 10, BSA 30
ROWS = {
    (A, "tlsf"): _row(0.5, 1000, 1.0, 2.0, 100, 0.01),
    (A, BSA): _row(0.8, 900, 4.0, 5.0, 100, 0.02),
    (A, "buddy"): _row(0.25, 4000, 2.0, 1.0, 100, 0.04),
    (B, "tlsf"): _row(0.9, 500, 1.0, 6.0, 300, 0.03),
    (B, BSA): _row(0.6, 700, 2.0, 3.0, 300, 0.01),
    (B, "buddy"): {"error": "boom"},
}


def _result(rows=ROWS, only=("tlsf", BSA, "buddy")):
    return COPPA.result(COPPA.prepare(list(only), {"traces": f"{A},{B}"}), rows)


def test_a_traces_rows_divide_by_the_segregated_first_fits():
    table = _result().table(A)
    assert table.title == f"{A}: MallocLab's utilisation and throughput, ours"
    tlsf = table.row("tlsf")
    assert tlsf == {"strategy": "tlsf", "seed_name": "TLSF", "role": SEED,
                    "seed_says": "faster than BSA; sometimes more space",
                    "util": 0.5, "util_x": 0.625, "max_heap": 1000, "search_mean": 1.0,
                    "work_per_op": 2.0, "work_x": 0.4, "kops": pytest.approx(10),
                    "speed_x": pytest.approx(2.0)}
    assert table.row(BSA)["seed_says"] == "slower; first fit, sometimes less space"
    assert table.row(BSA)["util_x"] == 1.0 and table.row(BSA)["speed_x"] == 1.0
    buddy = table.row("buddy")
    assert "seed_says" not in buddy and buddy["role"] == "ours"
    assert (buddy["util_x"], buddy["work_x"], buddy["speed_x"]) == (0.3125, 0.2, pytest.approx(0.5))
    assert _result().table(B).row("buddy")["error"] == "boom"


def test_the_summary_is_the_mean_utilisation_and_total_operations_over_total_seconds():
    result = _result()
    assert [t.key for t in result.tables] == [A, B, "all"]
    summary = result.table("all")
    assert summary.title == ("All 2 traces, as MallocLab sums them up: mean utilisation, total "
                             "operations over total seconds")
    tlsf, bsa = summary.row("tlsf"), summary.row(BSA)
    assert tlsf["util"] == pytest.approx(0.7) and tlsf["max_heap"] is None
    assert tlsf["kops"] == pytest.approx(400 / 0.04 / 1000)                     # 10
    assert tlsf["work_per_op"] == pytest.approx((2.0 * 100 + 6.0 * 300) / 400)  # 5
    assert tlsf["search_mean"] == 1.0
    assert bsa["util"] == pytest.approx(0.7) and bsa["work_per_op"] == pytest.approx(3.5)
    assert bsa["kops"] == pytest.approx(400 / 0.03 / 1000) and bsa["search_mean"] == 3.0
    assert tlsf["util_x"] == pytest.approx(1.0) and tlsf["work_x"] == pytest.approx(5 / 3.5)
    assert tlsf["speed_x"] == pytest.approx(0.75)
    assert summary.row("buddy")["error"] == "boom"     # it has no row of trace B
    assert summary.row("tlsf")["seed_says"] == "faster than BSA; sometimes more space"
    assert summary.notes == ["The seed gives no figures in its text (its charts are lost): its "
                             "column is its lessons. 'x BSA' divides by segregated-first-fit's "
                             "figure; speed = throughput."]
    assert result.setup == [f"traces: {A}, {B} (traces/bundled/README.md says how each was recorded)",
                            "strategies: 8-byte words"]
    assert result.params == {"settings": {"traces": [A, B], "word": 8}}


def test_without_the_segregated_first_fit_nothing_is_divided():
    rows = {k: v for k, v in ROWS.items() if k[1] != BSA}
    result = _result(rows, ("tlsf", "buddy"))
    tlsf = result.table(A).row("tlsf")
    assert (tlsf["util_x"], tlsf["work_x"], tlsf["speed_x"]) == (None, None, None)
    assert result.table("all").row("tlsf")["util_x"] is None
    assert result.findings == ["TLSF against segregated-first-fit cannot be compared: both must run"]
    assert [s.label for s in result.chart.panels[0].series] == ["tlsf"]


def test_a_run_of_no_time_has_no_throughput():
    rows = dict(ROWS)
    rows[(A, "buddy")] = _row(0.25, 4000, 2.0, 1.0, 100, 0.0)
    rows[(A, BSA)] = _row(0.8, 900, 4.0, 5.0, 100, 0.0)
    table = _result(rows).table(A)
    assert table.row("buddy")["kops"] is None and table.row("buddy")["speed_x"] is None
    assert table.row("tlsf")["speed_x"] is None        # BSA's throughput unknown


def test_the_findings_count_the_traces_where_tlsf_wins_and_where_it_pays_in_space():
    assert _result().findings == [
        f"TLSF does less work per operation than segregated-first-fit on 1 of 2 traces ({A}) and "
        "has the higher throughput here on 1 of 2 (seed: 'TLSF is faster than BSA')",
        f"TLSF needs more space (lower utilisation) on 1 of 2 traces ({A}) (seed: 'sometimes this "
        "boost is paid in terms of space')"]
    rows = dict(ROWS)
    rows[(A, "tlsf")] = _row(0.8, 1000, 1.0, 5.0, 100, 0.02)     # ties: neither less nor faster
    assert _result(rows).findings == [
        "TLSF does less work per operation than segregated-first-fit on 0 of 2 traces (none) and "
        "has the higher throughput here on 0 of 2 (seed: 'TLSF is faster than BSA')",
        "TLSF needs more space (lower utilisation) on 0 of 2 traces (none) (seed: 'sometimes this "
        "boost is paid in terms of space')"]


def test_the_chart_shows_both_utilisations_and_works_per_trace():
    chart = _result().chart
    assert chart.title == "Coppa 2010: TLSF against a segregated first fit, real programs"
    util, work = chart.panels
    assert (util.title, util.x_labels, util.y_label) == ("utilisation (peak live / heap)", [A, B], "utilisation")
    assert [(s.label, s.values) for s in util.series] == [("tlsf", [0.5, 0.9]), (BSA, [0.8, 0.6])]
    assert (work.title, work.y_label) == ("work units per operation", "work / op")
    assert [(s.label, s.values) for s in work.series] == [("tlsf", [2.0, 6.0]), (BSA, [5.0, 3.0])]


def test_the_result_names_the_seed_it_reruns_and_w_does_not_apply():
    result = _result()
    assert (result.experiment, result.title) == (
        "coppa2010", "Coppa 2010: TLSF against a segregated first fit on traces of real programs")
    assert result.source == ("seed 004: Emilio Coppa (supervisor Camil Demetrescu), 'Adaptive "
                             "allocators', Sapienza University of Rome, 2010; MallocLab on a MacBook "
                             "5.1, Gentoo i686")
    with pytest.raises(ExperimentError, match="experiment coppa2010 replays recorded traces: -W does not apply"):
        COPPA.prepare(["tlsf"], {}, {"steps": "5"})
    with pytest.raises(ExperimentError):
        COPPA.prepare(["tlsf"], {"word": "16"})          # 4 or 8


def test_a_traces_table_shows_its_columns_as_written():
    table = _result().table(A)
    assert [(c.key, c.title) for c in table.columns] == [
        ("strategy", "strategy"), ("seed_name", "seed's name"), ("seed_says", "seed says"),
        ("util", "util"), ("util_x", "util x BSA"), ("max_heap", "heap bytes"),
        ("search_mean", "search mean"), ("work_per_op", "work/op"), ("work_x", "work x BSA"),
        ("kops", "Kops/s"), ("speed_x", "speed x BSA")]
    row = table.row("tlsf")
    assert [c.show(row.get(c.key)) for c in table.columns] == [
        "tlsf", "TLSF", "faster than BSA; sometimes more space", "0.500", "0.625", "1,000", "1.00",
        "2.00", "0.40", "10", "2.00"]
    assert [c.source for c in table.columns][1:3] == [SEED, SEED]
    assert [c.key for c in _result().table("all").columns] == [c.key for c in table.columns]


def test_the_settings_say_what_they_take():
    params = COPPA.declared_settings()
    assert params["traces"].help == ("traces to replay: bundled real programs (any bundled trace, file "
                                     "or workload spec works)")
    assert params["word"].help == "word size of the strategies (the bundled traces come from 64-bit programs)"
    for word in ("4", "8"):
        assert COPPA.prepare(["tlsf"], {"word": word}).settings["word"] == int(word)
    with pytest.raises(ExperimentError):
        COPPA.prepare(["tlsf"], {"word": "9"})
