"""heapscope/experiments/djgpp1997.py without a replay: its jobs written out
by hand, its four tables, findings and chart read off rows made up by hand
(the percentages and ratios to the BSD malloc worked out here)."""

import pytest

from heapscope.experiments import get
from heapscope.experiments.model import SEED
from heapscope.experiments.runner import Job

DJGPP = get("djgpp1997")
DL, BSD = "dlmalloc", "bsd-buckets"
MIB, KIB = 1 << 20, 1 << 10


def test_its_jobs_are_each_variant_seed_and_strategy_with_djgpps_parameters():
    run = DJGPP.prepare([DL, BSD], {"runs": "2", "small_max": "1K", "limit": "2M", "page": "1K"},
                        {"actions": "50"})
    expected = []
    for variant in ("tropea", "small", "limit"):
        for seed in (1997, 1998):
            workload = {"actions": 50, "seed": seed, **({"max_size": 1024} if variant == "small" else {})}
            for name in (BSD, DL):
                params = {"word": 4, **({"heap_limit": 2 * MIB} if variant == "limit" else {}),
                          **({"mmap_max": 0} if name == DL else {})}
                expected.append(Job.of((variant, name, seed), ("djgpp1997", workload), name, params,
                                       resident_page=0 if variant == "limit" else 1024,
                                       label=f"{name}, {variant}, seed {seed}"))
    assert DJGPP.jobs(run) == expected


def _row(heap, waste, work, wall, resident=0, touched=0, failed=0, first=None):
    return {"max_heap": heap, "waste": waste, "work_per_op": work, "wall_s": wall, "failed": failed,
            "resident": resident, "resident_touched": touched, "first_failure": first}


#: (variant, strategy) -> row, made up (one run)
ROWS = {
    ("tropea", BSD): _row(1000, 1.0, 1.0, 0.010, 4096, 8192),
    ("tropea", DL): _row(750, 0.5, 4.0, 0.030, 2048, 4096),
    ("tropea", "tlsf"): _row(800, 0.6, 2.0, 0.020, 1024, 5120),
    ("small", BSD): _row(500, 0.8, 1.0, 0.002, 1024, 2048),
    ("small", DL): _row(400, 0.1, 1.5, 0.003, 1024, 1024),
    ("small", "tlsf"): _row(400, 0.1, 1.5, 0.003, 1024, 1024),
    ("limit", BSD): _row(300, 0.0, 1.0, 0.001, failed=5, first=10),
    ("limit", DL): _row(300, 0.0, 1.0, 0.001, failed=2, first=40),
    ("limit", "tlsf"): _row(300, 0.0, 1.0, 0.001),
}


def _result(rows=ROWS, only=(DL, BSD, "tlsf"), workload=None):
    run = DJGPP.prepare(list(only), {}, workload or {})
    return DJGPP.result(run, {(v, s, 1997): r for (v, s), r in rows.items() if s in only})


def test_tropeas_table_is_heap_and_time_against_the_bsd_malloc():
    t = _result().table("tropea")
    assert t.title == "Tropea's program (10,000 actions on 1024 slots, sizes 0-131,072 bytes): heap bytes and time"
    assert t.row(DL) == {"strategy": DL, "seed_name": "dlmalloc", "role": SEED,
                         "seed_heap": 51052544, "seed_less": "24%", "seed_time": 1.54,
                         "heap": 750, "less": 25.0, "waste": 0.5, "work_per_op": 4.0, "work_x": 4.0,
                         "wall_ms": pytest.approx(30.0), "wall_x": pytest.approx(3.0), "failed": 0}
    bsd = t.row(BSD)
    assert (bsd["seed_name"], bsd["seed_heap"], bsd["seed_time"]) == ("BSD malloc (DJGPP)", 67305472, 0.22)
    assert bsd["less"] == 0.0 and bsd["work_x"] == 1.0
    assert t.row("tlsf")["less"] == pytest.approx(20.0) and "seed_heap" not in t.row("tlsf")


def test_the_touch_table_is_the_resident_pages_of_tropeas_runs():
    t = _result().table("touch")
    assert t.title == "Touching the memory (Machin): resident KiB, 4 KiB pages"
    assert t.row(DL) == {"strategy": DL, "seed_name": "dlmalloc", "role": SEED,
                         "seed_claim": "(fits in real memory longer)", "heap": 750, "resident": 2.0,
                         "resident_touched": 4.0, "touched_share": pytest.approx(4096 / 750),
                         "touched_x": 0.5}
    assert t.row(BSD)["seed_claim"] == "runs out of real memory & swaps sooner"
    assert t.row(BSD)["touched_x"] == 1.0


def test_the_small_and_limit_tables():
    result = _result({**ROWS}, workload={"actions": "400"})
    small = result.table("small")
    assert small.title == "Smaller blocks (Machin): sizes 0-8,192 bytes"
    dl = small.row(DL)
    assert (dl["seed_time"], dl["seed_overhead"]) == (7.58, "5% to 20%")
    assert (dl["heap"], dl["less"], dl["waste"], dl["work_x"], dl["resident_touched"]) == \
        (400, pytest.approx(20.0), 0.1, 1.5, 1.0)
    assert dl["wall_x"] == pytest.approx(1.5) and small.row(BSD)["seed_overhead"] == "over 50%"
    limit = result.table("limit")
    assert limit.title == "Under a 32 MiB heap limit: which fails first"
    assert limit.row(DL) == {"strategy": DL, "seed_name": "dlmalloc", "role": SEED, "heap": 300,
                             "failed": 2, "first_failure": 40}
    assert limit.row(BSD)["seed_claim"] == "runs out of swap & fails sooner"
    assert result.table("tropea").title.startswith("Tropea's program (400 actions on 1024 slots")
    assert [len(t.notes) for t in result.tables] == [1, 1, 0, 1]
    assert result.tables[3].notes[0].startswith("first failure: the action whose malloc first returned NULL")
    assert result.setup == ["workload: djgpp1997 (400 actions on 1024 slots, sizes 0-131,072 bytes), seed 1997",
                            "strategies: 4-byte words (DJGPP was 32-bit); dlmalloc with mmap_max=0 "
                            "(DJGPP had no mmap)"]


def test_an_error_fills_the_row_of_every_table_of_its_variant():
    rows = dict(ROWS)
    rows[("tropea", "tlsf")] = {"error": "boom"}
    result = _result(rows)
    assert result.table("tropea").row("tlsf")["error"] == "boom"
    assert result.table("touch").row("tlsf")["error"] == "boom"
    assert "error" not in result.table("small").row("tlsf")


def test_without_the_bsd_malloc_nothing_is_divided():
    t = _result(only=(DL, "tlsf")).table("tropea")
    assert (t.row(DL)["less"], t.row(DL)["work_x"], t.row(DL)["wall_x"]) == (None, None, None)


def test_the_findings_read_machins_four_claims():
    assert _result().findings == [
        "dlmalloc's heap is 750 bytes, bsd-buckets' 1,000: 25.0% less (as Tropea found: 24% less)",
        "time: dlmalloc does 4.0x bsd-buckets' work per operation (3.0x its wall time here); Tropea "
        "measured 7x, Machin 'SLIGHTLY slower' once the program did its own work",
        "touched, bsd-buckets needs 8 KiB of real memory against dlmalloc's 4 KiB (2.00x): it swaps "
        "sooner (Machin's (c))",
        "smaller blocks: waste 10% for dlmalloc, 80% for bsd-buckets (Machin: 5% to 20%, over 50%)",
        "under the limit bsd-buckets first fails at action 10, dlmalloc first fails at action 40: the "
        "BSD malloc fails sooner (Machin's (d))"]


def test_the_findings_say_when_the_seed_is_not_borne_out():
    rows = dict(ROWS)
    rows[("tropea", DL)] = _row(1200, 0.5, 4.0, 0.030, 2048, 9000)
    rows[("limit", BSD)] = _row(300, 0.0, 1.0, 0.001)                     # never fails
    found = _result(rows).findings
    assert found[0] == ("dlmalloc's heap is 1,200 bytes, bsd-buckets' 1,000: -20.0% less "
                        "(NOT as Tropea found: 24% less)")
    assert found[2].endswith("it does NOT swap sooner (Machin's (c))")
    assert found[-1] == ("under the limit bsd-buckets never fails, dlmalloc first fails at action 40: "
                         "the BSD malloc does NOT fail sooner (Machin's (d))")
    rows[("limit", BSD)], rows[("limit", DL)] = _row(300, 0, 1, 0.001, first=10), _row(300, 0, 1, 0.001)
    assert _result(rows).findings[-1] == ("under the limit bsd-buckets first fails at action 10, dlmalloc "
                                          "never fails: the BSD malloc fails sooner (Machin's (d))")
    assert _result(only=("tlsf",)).findings == []


def test_the_chart_draws_heap_resident_memory_and_work():
    chart = _result().chart
    assert chart.title == "DJGPP 1997: Tropea's program, 32-bit, no mmap"
    heap, resident, work = chart.panels
    names = [BSD, DL, "tlsf"]
    assert (heap.title, heap.x_labels, heap.y_label) == ("heap (MiB)", names, "MiB")
    assert [(s.label, s.values, s.source) for s in heap.series] == [
        ("seed 1997", [67305472 / MIB, 51052544 / MIB, None], SEED),
        ("ours", [1000 / MIB, 750 / MIB, 800 / MIB], "ours")]
    assert (resident.title, resident.y_label) == ("resident memory at the peak (MiB)", "MiB")
    assert [(s.label, s.values) for s in resident.series] == [
        ("untouched", [4 / KIB, 2 / KIB, 1 / KIB]), ("touched (memset)", [8 / KIB, 4 / KIB, 5 / KIB])]
    assert (work.title, work.y_label, work.log_y) == ("work units per operation (ours)", "work / op", True)
    assert [(s.label, s.values) for s in work.series] == [("ours", [1.0, 4.0, 2.0])]


def test_the_result_names_the_seed_it_reruns_and_its_defaults():
    result = _result()
    assert (result.experiment, result.title) == (
        "djgpp1997", "DJGPP 1997: heap bytes and time of dlmalloc and the BSD malloc on Tropea's program")
    assert result.source == ("seed 001: Salvador E. Tropea and John Machin on the djgpp list, 29-31 "
                             "October 1997; DJGPP (32-bit DOS, no mmap) on a PC")
    assert DJGPP.prepare([DL], {}, {}).settings == {"runs": 1, "small_max": 8192, "limit": 32 * MIB,
                                                     "page": 4096}
    assert [j.key[2] for j in DJGPP.jobs(DJGPP.prepare([DL], {}, {"seed": "5"}))] == [5, 5, 5]


def test_tropeas_table_shows_its_columns_as_written():
    t = _result().table("tropea")
    row = t.row(DL)
    shown = {c.key: c.show(row.get(c.key)) for c in t.columns}
    assert shown == {"strategy": DL, "seed_name": "dlmalloc", "seed_heap": "51,052,544", "seed_less": "24%",
                     "seed_time": "1.54", "heap": "750", "less": "25.0%", "waste": "0.50",
                     "work_per_op": "4.00", "work_x": "4.00", "wall_ms": "30", "wall_x": "3.00",
                     "failed": "0"}
    assert [c.title for c in t.columns] == [
        "strategy", "seed's name", "seed heap bytes", "seed less", "seed time s", "heap bytes",
        "less than BSD", "waste", "work/op", "work x BSD", "wall ms", "wall x BSD", "failed"]
