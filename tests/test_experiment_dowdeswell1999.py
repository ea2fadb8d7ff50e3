"""heapscope/experiments/dowdeswell1999.py without a replay: its jobs written
out by hand, its heap and time tables, findings and chart read off rows made
up by hand (ENOMEM, beyond RAM and the seed's own ENOMEM worked out here)."""

import pytest

from heapscope.experiments import ExperimentError, get
from heapscope.experiments.model import SEED
from heapscope.experiments.runner import Job

DOWDESWELL = get("dowdeswell1999")
DL, BSD = "dlmalloc", "bsd-buckets"
MIB = 1 << 20


def test_its_jobs_are_the_largest_counts_first_with_each_machines_parameters():
    run = DOWDESWELL.prepare([DL, "tlsf"], {"machines": "alpha,i386,alpha", "counts": "100,4096,100"},
                             {"max_size": "1024"})
    expected = []
    for machine, word, page, limit in (("alpha", 8, 8192, 128 * MIB), ("i386", 4, 4096, None)):
        for count in (4096, 100):
            for name in (DL, "tlsf"):
                params = {"word": word, **({"pagesize": page} if name == DL else {}),
                          **({"heap_limit": limit} if limit else {})}
                expected.append(Job.of((machine, count, name),
                                       ("dowdeswell1999", {"max_size": 1024, "regions": count}), name,
                                       params, label=f"{name}, {count} regions, {machine}"))
    assert DOWDESWELL.jobs(run) == expected


def test_the_seeds_counts_and_a_stated_limit():
    run = DOWDESWELL.prepare(["phkmalloc", BSD, "gnu-malloc"], {"machines": "shark", "heap_limit": "1M"}, {})
    jobs = DOWDESWELL.jobs(run)
    assert [j.key[1] for j in jobs[::3]] == [4096, 2048, 1024, 512]
    # in the seed's order: FreeBSD's, GNU's, NetBSD's (pages for phkmalloc and the buckets)
    assert [(j.strategy, dict(j.params)) for j in jobs[:3]] == [
        ("phkmalloc", {"word": 4, "pagesize": 4096, "heap_limit": MIB}),
        ("gnu-malloc", {"word": 4, "heap_limit": MIB}),
        (BSD, {"word": 4, "pagesize": 4096, "heap_limit": MIB})]
    with pytest.raises(ExperimentError, match=r"^experiment dowdeswell1999: unknown machine 'vax' "
                                              r"\(known: alpha, i386, shark\)$"):
        DOWDESWELL.jobs(DOWDESWELL.prepare([DL], {"machines": "vax"}, {}))


def _row(heap_mib=None, work=1.0, wall=0.1):
    """A run's row: its largest heap in MiB, or None for a malloc that failed."""
    return {"failed": 1 if heap_mib is None else 0, "max_heap": (heap_mib or 0) * MIB,
            "work_per_op": work, "wall_s": wall}


#: (machine, count, strategy) -> row, made up: on the alpha (64 MB of RAM,
#: 128 MiB limit) dlmalloc passes RAM at 4096 regions, the buckets fail there,
#: TLSF passes RAM at 100 and fails at 4096
ROWS = {
    ("alpha", 100, DL): _row(1.0, 1.0, 0.1), ("alpha", 4096, DL): _row(80.0, 2.0, 0.2),
    ("alpha", 100, BSD): _row(2.0, 0.5, 0.05), ("alpha", 4096, BSD): _row(None, 0.7, 0.3),
    ("alpha", 100, "tlsf"): _row(70.0, 3.0, 0.4), ("alpha", 4096, "tlsf"): _row(None, 4.0, 0.5),
}


def _result(rows=ROWS, only=(DL, BSD, "tlsf"), settings=None):
    run = DOWDESWELL.prepare(list(only), settings or {"counts": "100,4096"}, {})
    return DOWDESWELL.result(run, {k: v for k, v in rows.items() if k[2] in only})


def test_the_heap_table_puts_the_seeds_seconds_beside_our_largest_heaps():
    heap = _result().table("alpha_heap")
    assert heap.title == ("AlphaStation 200 4/233, 64 MB, NetBSD-current: LP64, 8 KiB pages. Seed: real "
                          "time (s); ours: largest heap (MiB) under a 128 MiB heap limit, * beyond the "
                          "64 MiB of RAM")
    # the seed ran 4096 regions on the alpha, never 100
    assert [c.key for c in heap.columns] == ["strategy", "seed_name", "seed_4096", "heap_100", "heap_4096"]
    assert [(c.title, c.source) for c in heap.columns[2:]] == [
        ("seed 4096 s", SEED), ("100", "ours"), ("4096", "ours")]
    dl = heap.row(DL)
    assert dl == {"strategy": DL, "seed_name": "dl", "role": SEED, "seed_4096": 3.78, "seed_8192": 10.84,
                  "seed_12288": 39.19, "seed_14336": 200.2, "seed_16384": 249.51,
                  "heap_100": 1.0, "heap_4096": 80.0}
    assert [c.show(dl.get(c.key)) for c in heap.columns[2:]] == ["3.78", "1.0", "80.0*"]
    bsd = heap.row(BSD)
    assert (bsd["seed_4096"], bsd["seed_8192"], bsd["seed_12288"]) == (205.94, "ENOMEM", "N/A")
    assert bsd["heap_4096"] == "ENOMEM" and bsd["heap_100"] == 2.0
    assert heap.notes[0].startswith("seed: real seconds of his runs (ENOMEM: malloc failed; N/A: not run).")


def test_the_time_table_is_our_work_and_wall_time_by_count():
    time = _result().table("alpha_time")
    assert time.title == "alpha: our work units per operation and wall time (s) of the replay"
    assert [c.key for c in time.columns] == ["strategy", "seed_name", "work_100", "wall_100", "work_4096",
                                             "wall_4096"]
    assert time.row(DL) == {"strategy": DL, "seed_name": "dl", "role": SEED, "work_100": 1.0,
                            "wall_100": 0.1, "work_4096": 2.0, "wall_4096": 0.2}
    assert time.row(BSD)["work_4096"] == 0.7        # a failed malloc still has its work


def test_an_error_is_the_row_of_both_tables():
    rows = dict(ROWS)
    rows[("alpha", 100, "tlsf")] = {"error": "boom"}
    result = _result(rows)
    assert result.table("alpha_heap").row("tlsf") == {"strategy": "tlsf", "seed_name": "", "role": "ours",
                                                      "error": "boom"}
    assert result.table("alpha_time").row("tlsf")["error"] == "boom"
    assert not any("tlsf" in f for f in result.findings)


def test_the_findings_name_where_each_malloc_runs_out_and_where_the_seeds_did():
    result = _result()
    assert result.findings == [
        "alpha: dlmalloc no ENOMEM up to 4096 regions, beyond RAM from 4096 (seed dl: no ENOMEM up to 16384)",
        "alpha: bsd-buckets ENOMEM from 4096 regions (seed NetBSD (standard): ENOMEM at 8192)",
        "alpha: tlsf ENOMEM from 4096 regions, beyond RAM from 100"]
    assert result.setup == ["workload: dowdeswell1999 (our re-creation): per count, one phase per size "
                            "class 16..8192 bytes, each mallocs the regions (sizes in (s/2, s]) then "
                            "frees them; seed 1999"]


def test_the_chart_draws_the_seeds_allocators_with_ram_and_the_limit():
    chart = _result().chart
    assert chart.title == "Dowdeswell 1999: regions of various sizes"
    (panel,) = chart.panels
    assert panel.title == "alpha: the seed's allocators, largest heap (MiB); x: ENOMEM"
    assert (panel.x_labels, panel.y_label, panel.x_title, panel.mark_at) == (["100", "4096"], "MiB", "regions", 128.0)
    assert panel.hlines == ((64.0, "RAM 64 MiB"), (128.0, "limit 128 MiB"))
    assert [(s.label, s.values, s.kind, s.marks) for s in panel.series] == [
        (DL, [1.0, 80.0], "line", ()), (BSD, [2.0, None], "line", (1,))]


def test_with_none_of_the_seeds_allocators_and_no_limit_the_chart_draws_ours():
    rows = {("i386", c, "tlsf"): _row(1.0) for c in (100, 200)}
    result = _result(rows, ("tlsf",), {"machines": "i386", "counts": "100,200"})
    (panel,) = result.chart.panels
    assert panel.title == "i386: largest heap, largest heap (MiB); x: ENOMEM"
    assert panel.hlines == ((64.0, "RAM 64 MiB"),) and panel.mark_at is None
    assert [s.label for s in panel.series] == ["tlsf"]
    assert result.table("i386_heap").title.endswith("largest heap (MiB) under no heap limit, * beyond the "
                                                    "64 MiB of RAM")
    assert result.findings == []          # ours, no ENOMEM: nothing to say


def test_the_result_names_the_seed_it_reruns_and_leaves_the_v7_malloc_out_unless_asked():
    result = _result()
    assert (result.experiment, result.title) == (
        "dowdeswell1999", "Dowdeswell 1999: growing numbers of regions, and which malloc runs out of memory")
    assert result.source == ("seed 003: Roland C. Dowdeswell, 'Re: Has importing the FreeBSD malloc(3) "
                             "been considered?', tech-userlevel@netbsd.org, 5 February 1999")
    left = next(e for e in DOWDESWELL.lineup() if e.strategy == "v7-malloc")
    assert not left.available and left.note == (
        "not run unless asked (-s v7-malloc): its search is quadratic here (after each sbrk it passes "
        "over every block again): some 20 s at 4096 regions, many minutes at 16384")
    assert next(e for e in DOWDESWELL.lineup(["v7-malloc"]) if e.strategy == "v7-malloc").available
    from heapscope.experiments import ExperimentError
    with pytest.raises(ExperimentError, match="experiment dowdeswell1999 sets regions itself"):
        DOWDESWELL.prepare([DL], {}, {"regions": "5"})
    assert DOWDESWELL.prepare([DL], {}, {}).settings == {"machines": ("alpha",), "counts": None,
                                                          "heap_limit": None}


#: the seed's real seconds, as his message gives them, by malloc and count
SEED_SECONDS = {
    "alpha": {DL: (3.78, 10.84, 39.19, 200.20, 249.51), "phkmalloc": (2.63, 5.72, 19.10, 70.10, 90.30),
              "gnu-malloc": (0.96, 3.62, 12.25, 45.38, 174.29), BSD: (205.94, "ENOMEM", "N/A", "N/A", "N/A")},
    "i386": {"phkmalloc": (0.31, 0.98, 3.27, 11.80, 48.39, 383.06),
             "gnu-malloc": (0.17, 0.20, 0.62, 2.08, 7.79, 496.51),
             BSD: (0.17, 0.49, 1.58, 5.85, 529.93, "N/A")},
    "shark": {DL: (0.00, 1.00, 2.00, 7.00), "phkmalloc": (0.41, 0.96, 2.41, 8.12),
              "gnu-malloc": (0.25, 0.36, 0.99, 4.24), BSD: (0.25, 0.77, 3.69, "ENOMEM")},
}
SEED_COUNTS = {"alpha": (4096, 8192, 12288, 14336, 16384), "i386": (512, 1024, 2048, 4096, 8192, 16384),
               "shark": (512, 1024, 2048, 4096)}


@pytest.mark.parametrize("machine", sorted(SEED_SECONDS))
def test_every_machines_table_has_the_seeds_counts_and_seconds(machine):
    names = [DL, "phkmalloc", "gnu-malloc", BSD]
    counts = SEED_COUNTS[machine]
    rows = {(machine, c, n): _row(1.0) for c in counts for n in names}
    result = _result(rows, names, {"machines": machine})
    heap = result.table(f"{machine}_heap")
    assert [c.key for c in heap.columns[2:2 + len(counts)]] == [f"seed_{c}" for c in counts]
    for name in names:
        row = heap.row(name)
        assert tuple(row.get(f"seed_{c}") for c in counts) == SEED_SECONDS[machine].get(name, (None,) * len(counts))
    seed_col = heap.columns[2]
    assert (seed_col.title, seed_col.show(3.14159), seed_col.source) == (f"seed {counts[0]} s", "3.14", SEED)
    time = result.table(f"{machine}_time")
    assert [c.title for c in time.columns[2:4]] == [f"{counts[0]} work/op", f"{counts[0]} wall s"]
    assert [c.show(0.123) for c in time.columns[2:4]] == ["0.12", "0.12"]
    assert heap.columns[len(counts) + 2].show(1.25) == "1.2"


@pytest.mark.parametrize("setting, text", [("counts", "1048577"), ("heap_limit", "1025G")])
def test_settings_past_their_bounds_are_refused(setting, text):
    with pytest.raises(ExperimentError):
        DOWDESWELL.prepare([DL], {setting: text}, {})
    ok = {"counts": "1048576", "heap_limit": "1T"}[setting]
    DOWDESWELL.prepare([DL], {setting: ok}, {})
