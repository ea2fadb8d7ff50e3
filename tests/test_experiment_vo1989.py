"""heapscope/experiments/vo1989.py without a replay: its jobs for a small
run written out by hand, and its tables, findings and chart read off rows
made up by hand (the means, the standard deviation and Vo's order worked
out here), so that each is checked in milliseconds (docs/testing.md)."""

import statistics

import pytest

from heapscope.experiments import ExperimentError, get
from heapscope.experiments.model import SEED
from heapscope.experiments.runner import Job

VO = get("vo1989")
TRIO = ["bsd-buckets", "next-fit", "splay-best-fit"]


def test_its_jobs_are_each_machine_seed_and_strategy_with_the_machines_parameters():
    run = VO.prepare(["bsd-buckets", "tlsf"], {"runs": "2"}, {"steps": "50"})
    jobs = VO.jobs(run)
    expected = []
    for machine, word in (("vax", 4), ("lp64", 8)):
        for seed in (1, 2):
            trace = ("vo1989", (("seed", seed), ("steps", 50)))
            for name in ("bsd-buckets", "tlsf"):
                own = {"pagesize": 1024} if (machine, name) == ("vax", "bsd-buckets") else {}
                expected.append(Job.of((machine, name, seed), ("vo1989", {"seed": seed, "steps": 50}), name,
                                       {"word": word, **own}, label=f"{name}, {machine}, seed {seed}"))
                assert expected[-1].trace == trace
    assert jobs == expected


def test_the_first_seed_and_the_machines_are_settings():
    run = VO.prepare(["tlsf"], {"runs": "3", "machines": "lp64,lp64"}, {"seed": "7"})
    assert [j.key for j in VO.jobs(run)] == [("lp64", "tlsf", 7), ("lp64", "tlsf", 8), ("lp64", "tlsf", 9)]
    with pytest.raises(ExperimentError, match=r"^experiment vo1989: unknown machine 'pdp11' "
                                              r"\(known: vax, lp64\)$"):
        VO.jobs(VO.prepare(["tlsf"], {"machines": "vax,pdp11"}, {}))


def _row(live, heap, waste, search, work, wall):
    return {"max_live": live, "max_heap": heap, "waste": waste, "search_mean": search,
            "work_per_op": work, "wall_s": wall}


#: (machine, strategy) -> the rows of seeds 1 and 2, made up
ROWS = {
    ("vax", "bsd-buckets"): [_row(310000, 300, 2.0, 1, 0.5, 0.001), _row(330000, 500, 1.5, 3, 1.5, 0.003)],
    ("vax", "next-fit"): [_row(310000, 150, 0.5, 10, 5, 0.010), _row(330000, 260, 0.3, 20, 7, 0.012)],
    ("vax", "splay-best-fit"): [_row(310000, 110, 0.1, 4, 2, 0.004), _row(330000, 220, 0.1, 4, 4, 0.006)],
    # on lp64 the buckets waste less than next fit, and are slowest in wall time
    ("lp64", "bsd-buckets"): [_row(310000, 120, 0.2, 1, 1, 0.020), _row(330000, 240, 0.2, 1, 1, 0.020)],
    ("lp64", "next-fit"): [_row(310000, 150, 0.5, 10, 5, 0.010), _row(330000, 260, 0.3, 20, 7, 0.012)],
    ("lp64", "splay-best-fit"): [_row(310000, 110, 0.1, 4, 2, 0.004), _row(330000, 220, 0.1, 4, 4, 0.006)],
}


def _result(workload=None, rows=ROWS, only=TRIO):
    run = VO.prepare(only, {"runs": "2"}, workload or {})
    measured = {(m, s, seed): rows[(m, s)][seed - 1] for (m, s) in rows for seed in (1, 2)}
    return VO.result(run, measured)


def test_a_row_is_the_seeds_figures_beside_the_means_of_the_runs():
    result = _result()
    assert [t.key for t in result.tables] == ["vax", "lp64"]
    row = result.table("vax").row("bsd-buckets")
    assert row == {"strategy": "bsd-buckets", "seed_name": "bsi", "role": SEED,
                   "seed_salloc": 304921, "seed_sarena": 785804, "seed_waste": 1.58, "seed_time": 0.48,
                   "salloc": 320000, "sarena": 400, "waste": 1.75,
                   "waste_sd": pytest.approx(statistics.stdev([2.0, 1.5])),       # 0.354
                   "search_mean": 2, "work_per_op": 1.0, "wall_ms": pytest.approx(2.0)}
    fsi = result.table("lp64").row("next-fit")
    assert (fsi["seed_name"], fsi["seed_sarena"], fsi["seed_waste"], fsi["seed_time"]) == ("fsi", 392192, 0.29, 2.23)
    assert result.table("vax").row("splay-best-fit")["waste_sd"] == 0
    vsi = result.table("vax").row("splay-best-fit")
    assert (vsi["seed_sarena"], vsi["seed_waste"], vsi["seed_time"]) == (358400, 0.18, 0.93)
    assert [c.key for c in result.table("vax").columns] == [
        "strategy", "seed_name", "seed_salloc", "seed_sarena", "seed_waste", "seed_time", "salloc",
        "sarena", "waste", "waste_sd", "search_mean", "work_per_op", "wall_ms"]
    shown = {c.key: c.show(row[c.key]) for c in result.table("vax").columns}
    assert shown == {"strategy": "bsd-buckets", "seed_name": "bsi", "seed_salloc": "304,921",
                     "seed_sarena": "785,804", "seed_waste": "1.58", "seed_time": "0.48",
                     "salloc": "320,000", "sarena": "400", "waste": "1.75", "waste_sd": "0.35",
                     "search_mean": "2.0", "work_per_op": "1.00", "wall_ms": "2"}
    assert [c.source for c in result.table("vax").columns][2:6] == [SEED] * 4


def test_the_tables_say_what_was_run():
    result = _result()
    assert result.table("vax").title.startswith("VAX, the seed's machine: 4-byte words")
    assert result.table("lp64").title == "LP64: 8-byte words, 4 KiB pages"
    assert result.table("vax").notes == [
        "Vo's figures (seed) are his one run on the VAX 8650; ours are means over 2 seeds (1..2); "
        "times are ours (work units, wall time of the replay on this machine), never his."]
    assert result.setup == ["workload: vo1989 (his parameters: 10 000 steps, sizes U[1,1000], "
                            "lifetimes U[100,1000]), seeds 1..2"]
    assert _result({"steps": "500"}).setup == ["workload: vo1989 (steps=500), seeds 1..2"]
    one = VO.result(VO.prepare(["tlsf"], {"runs": "1", "machines": "vax"}, {}),
                    {("vax", "tlsf", 1): _row(1, 2, 1.0, 1, 1, 0.001)})
    assert "ours are means over 1 seed (1..1);" in one.table("vax").notes[0]
    assert one.table("vax").row("tlsf")["waste_sd"] is None


def test_a_run_that_failed_gives_its_row_the_error():
    rows = dict(ROWS)
    rows[("vax", "next-fit")] = [rows[("vax", "next-fit")][0], {"error": "boom"}]
    row = _result(rows=rows).table("vax").row("next-fit")
    assert row["error"] == "boom" and "waste" not in row and row["seed_name"] == "fsi"


def test_the_findings_check_vos_order_table_by_table():
    result = _result()
    assert result.findings == [
        "vax, fsi = next-fit: Vo's order of waste holds: bsd-buckets 1.75 > next-fit 0.40 > "
        "splay-best-fit 0.10 (Vo: 1.58 > 0.29 > 0.18)",
        "vax, fsi = next-fit: Vo's order of time holds in work units (bsd-buckets 1.0 < "
        "splay-best-fit 3.0 < next-fit 6.0 per op) and holds in wall time (Vo: 0.48 s < 0.93 s < 2.23 s)",
        "lp64, fsi = next-fit: Vo's order of waste does NOT hold: bsd-buckets 0.20 > next-fit 0.40 > "
        "splay-best-fit 0.10 (Vo: 1.58 > 0.29 > 0.18)",
        "lp64, fsi = next-fit: Vo's order of time holds in work units (bsd-buckets 1.0 < "
        "splay-best-fit 3.0 < next-fit 6.0 per op) and does not hold in wall time "
        "(Vo: 0.48 s < 0.93 s < 2.23 s)",
        # 320 000 / 304 921 = 1.0495
        "Salloc: ours 320,000 on average, Vo's 304,921 (+4.9%): the same workload, other random numbers",
    ]
    # another workload than his: no Salloc against his
    assert not any(f.startswith("Salloc") for f in _result({"steps": "500"}).findings)


def test_each_order_is_strict_and_read_for_every_fsi():
    rows = dict(ROWS)
    # work: the buckets as slow as the splay tree (not <); waste: next fit as the tree (not >)
    rows[("vax", "bsd-buckets")] = [_row(1, 1, 2.0, 1, 3, 0.001), _row(1, 1, 2.0, 1, 3, 0.001)]
    rows[("vax", "next-fit")] = [_row(1, 1, 0.1, 1, 6, 0.010), _row(1, 1, 0.1, 1, 6, 0.010)]
    vax = [f for f in _result(rows=rows).findings if f.startswith("vax")]
    assert "waste does NOT hold" in vax[0] and "time does NOT hold in work units" in vax[1]
    assert "and holds in wall time" in vax[1]
    rows[("vax", "next-fit")] = [_row(1, 1, 0.5, 1, 2.5, 0.010), _row(1, 1, 0.5, 1, 2.5, 0.010)]
    assert "time does NOT hold" in [f for f in _result(rows=rows).findings if f.startswith("vax")][1]


def test_without_bsi_fsi_and_vsi_the_order_is_not_checked():
    rows = {k: v for k, v in ROWS.items() if k[1] != "next-fit"}
    result = _result(rows=rows, only=["bsd-buckets", "splay-best-fit"])
    assert result.findings[:2] == [
        "vax: Vo's order cannot be checked: bsi, fsi and vsi are not all run",
        "lp64: Vo's order cannot be checked: bsi, fsi and vsi are not all run"]


def test_the_chart_puts_vos_waste_beside_ours_and_the_work_on_a_log_scale():
    chart = _result().chart
    assert chart.title == "Vo 1989: waste = (Sarena - Salloc) / Salloc, and work per operation"
    waste, work = chart.panels
    assert (waste.title, waste.x_labels, waste.y_label, waste.log_y) == ("waste", TRIO, "waste", False)
    assert [(s.label, s.values, s.source) for s in waste.series] == [
        ("Vo 1989 (VAX 8650)", [1.58, 0.29, 0.18], SEED),
        ("ours, vax", [1.75, pytest.approx(0.4), pytest.approx(0.1)], "ours"),
        ("ours, lp64", [pytest.approx(0.2), pytest.approx(0.4), pytest.approx(0.1)], "ours")]
    assert (work.title, work.y_label, work.log_y) == ("time: work units per operation (ours)", "work / op", True)
    assert [(s.label, s.values) for s in work.series] == [("ours, vax", [1.0, 6, 3]), ("ours, lp64", [1, 6, 3])]


def test_the_result_names_the_seed_it_reruns():
    result = _result()
    assert (result.experiment, result.title) == (
        "vo1989", "Vo 1989: space (Salloc, Sarena, waste) and time of three mallocs on one simulation")
    assert result.source == ("seed 000: Phong Vo (AT&T Bell Labs), Usenet, 10 May 1989, replying to "
                             "Niels J. Kruse; a VAX 8650 running 4.3BSD")
    assert result.params == {"settings": {"runs": 2, "machines": ("vax", "lp64")}, "workload": {"seed": 1}}
    assert VO.workload == "vo1989" and VO.prepare(["tlsf"], {}, {}).settings["runs"] == 10
