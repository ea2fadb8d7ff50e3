"""``heapscope sweep``: a grid of cells, each the row ``compare`` prints, resumable."""

import csv
import io
import json

import pytest

from heapscope.cli import main
from heapscope.sweep import Cell, ResultsFile, run_sweep
from heapscope.traces import make_workload, write_rep

#: three strategies and a two-value grid for each: 2 x 3 cells a trace
STRATEGIES = "tlsf,next-fit,buddy"
GRID = ["-P", "tlsf.chunk=4K,64K", "-P", "next-fit.nalloc=512,1024", "-P", "buddy.max_order=12,14"]
#: what each strategy's grid option reads, and its values as compare's -P takes them
POINTS = {"tlsf": ("chunk", ["4096", "65536"]), "next-fit": ("nalloc", ["512", "1024"]),
          "buddy": ("max_order", ["12", "14"])}
#: the measures that are timings, which no two runs share
TIMINGS = {"cpu_s"}


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def read_rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """A folder of two trace files (converted from workloads) and a workload spec: three traces."""
    folder = tmp_path_factory.mktemp("corpus")
    for seed in (2, 3):
        write_rep(make_workload("vo1989", steps=300, seed=seed), str(folder / f"seed{seed}.rep"))
    return folder


@pytest.fixture(scope="module")
def full_sweep(corpus, tmp_path_factory):
    """The whole sweep, run once: (its results file, its arguments)."""
    out = tmp_path_factory.mktemp("full") / "results.csv"
    argv = ["sweep", str(corpus), "vo1989:steps=300", "-s", STRATEGIES, *GRID, "-j", "2"]
    assert main(argv + ["-o", str(out)]) == 0
    return out, argv


def test_every_cell_equals_compare_on_it(full_sweep, corpus, capsys):
    out, _ = full_sweep
    capsys.readouterr()
    rows = read_rows(out)
    traces = [str(corpus / "seed2.rep"), str(corpus / "seed3.rep"), "vo1989:steps=300"]
    expected_cells = {(t, s, f"{name}={v}") for t in traces for s, (name, values) in POINTS.items()
                      for v in values}
    assert {(r["trace"], r["strategy"], r["params"]) for r in rows} == expected_cells
    assert len(rows) == 3 * 3 * 2
    for r in rows:
        name, value = r["params"].split("=")
        code, text, err = run(capsys, "compare", r["trace"], "-s", r["strategy"],
                              "-P", f"{r['strategy']}.{name}={value}", "-f", "json")
        assert code == 0, err
        (want,) = json.loads(text)
        assert r["error"] == "" and want["error"] is None
        for key, number in want.items():
            if key in ("strategy", "error") or key in TIMINGS:
                continue
            got = r[key]
            if number is None:
                assert got == "", (r, key)
            else:   # the CSV holds the number's repr: read back, the very same number
                assert type(number)(got) == number, (r["trace"], r["strategy"], r["params"], key)
        assert float(r["cpu_s"]) > 0


def test_a_stopped_sweep_measures_only_the_missing_cells(full_sweep, tmp_path, capsys):
    out, argv = full_sweep
    capsys.readouterr()
    lines = out.read_text().splitlines(keepends=True)
    header, rows = lines[0], lines[1:]
    half = header + "".join(rows[:len(rows) // 2])
    # the stop cut the next row half way: that one is not a cell the file holds
    partial = tmp_path / "partial.csv"
    partial.write_text(half + rows[len(rows) // 2][:40])
    code, _, err = run(capsys, *argv, "-o", str(partial))
    assert code == 0, err
    missing = len(rows) - len(rows) // 2
    assert f"{len(rows) // 2} already in {partial}, {missing} to measure" in err
    measured = [line for line in err.splitlines() if line.startswith("sweep: ") and "cells measured" in line]
    assert len(measured) == missing
    assert measured[-1].startswith(f"sweep: {missing}/{missing} cells measured")
    text = partial.read_text()
    assert text.startswith(half)                      # the rows there, byte for byte
    resumed = read_rows(partial)
    assert len(resumed) == len(rows)
    full = {(r["trace"], r["strategy"], r["params"]): r for r in read_rows(out)}
    assert {(r["trace"], r["strategy"], r["params"]) for r in resumed} == set(full)
    for r in resumed:
        want = full[(r["trace"], r["strategy"], r["params"])]
        assert {k: v for k, v in r.items() if k not in TIMINGS} == \
               {k: v for k, v in want.items() if k not in TIMINGS}
    # run again: nothing left to measure, the file unchanged
    code, _, err = run(capsys, *argv, "-o", str(partial))
    assert code == 0 and f"{len(rows)} already in {partial}, 0 to measure" in err
    assert partial.read_text() == text


def test_each_row_is_in_the_file_when_its_cell_ends(tmp_path):
    """Written as they finish, not at the end: a stop loses only the running cells."""
    path = str(tmp_path / "r.csv")
    results = ResultsFile(path, ["ops", "max_heap"]).open()
    todo = [Cell(f"vo1989:steps=200,seed={seed}", s) for seed in (1, 2) for s in ("tlsf", "first-fit")]
    seen = []

    def progress(done, total, eta):
        seen.append((done, len(read_rows(path))))

    try:
        assert run_sweep(todo, results, 1, None, progress) == 0
    finally:
        results.close()
    assert seen == [(1, 1), (2, 2), (3, 3), (4, 4)]
    rows = read_rows(path)
    assert all(r["ops"] == "400" for r in rows)


@pytest.mark.parametrize("option, named", [
    (["-P", "tlsf.chunk=4K,,64K"], "-P tlsf.chunk=4K,,64K"),
    (["-P", "tlsf.chunk=4K,huge"], "'huge'"),
    (["-P", "tlsf.chunk=4K,2T"], "chunk must be"),
    (["-P", "tlsf.nosuch=1,2"], "tlsf has no parameter 'nosuch'"),
    (["-P", "nosuch.chunk=1,2"], "unknown strategy 'nosuch'"),
    (["-P", "tlsf.chunk=4K,4K"], "listed twice"),
])
def test_a_bad_grid_is_exit_2_naming_it(option, named, tmp_path, capsys):
    out = tmp_path / "r.csv"
    code, _, err = run(capsys, "sweep", "vo1989:steps=100", "-s", "tlsf", *option, "-o", str(out))
    assert code == 2
    assert named in err and "Traceback" not in err
    assert not out.exists()            # said before any work


def test_an_unknown_strategy_is_exit_2_naming_it(tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["sweep", "vo1989:steps=100", "-s", "tlsf,nosuch", "-o", str(tmp_path / "r.csv")])
    assert exc.value.code == 2
    assert "unknown strategy 'nosuch'" in capsys.readouterr().err


def test_an_unreadable_trace_is_exit_2_naming_it(tmp_path, capsys):
    bad = tmp_path / "bad.heap"
    bad.write_text("a = malloc(16)\nthis is not a trace\n")
    out = tmp_path / "r.csv"
    for spec in (str(bad), str(tmp_path / "missing.rep")):
        code, _, err = run(capsys, "sweep", "vo1989:steps=100", spec, "-s", "tlsf", "-o", str(out))
        assert code == 2, err
        assert spec in err and "Traceback" not in err
        assert not out.exists()


def test_a_results_file_of_other_columns_is_refused(tmp_path, capsys):
    out = tmp_path / "r.csv"
    out.write_text("name,value\nx,1\n")
    code, _, err = run(capsys, "sweep", "vo1989:steps=100", "-s", "tlsf", "-o", str(out))
    assert code == 2 and f"{out}: not the results of this sweep" in err
    assert out.read_text() == "name,value\nx,1\n"     # left as it was


def test_the_parquet_copy_holds_the_results_rows_typed(tmp_path, capsys):
    pq = pytest.importorskip("pyarrow.parquet")
    out, table = tmp_path / "r.csv", tmp_path / "r.parquet"
    code, _, err = run(capsys, "sweep", "vo1989:steps=200", "-s", "tlsf,buddy",
                       "-P", "buddy.max_order=12,14", "-o", str(out), "--parquet", str(table))
    assert code == 0, err
    rows = read_rows(out)
    got = pq.read_table(table).to_pylist()
    assert len(got) == len(rows) == 3
    for csv_row, row in zip(rows, got):
        assert (row["trace"], row["strategy"], row["params"]) == \
               (csv_row["trace"], csv_row["strategy"], csv_row["params"])
        assert isinstance(row["ops"], int) and row["ops"] == int(csv_row["ops"]) == 400
        assert row["waste"] == float(csv_row["waste"]) and row["error"] == ""
    # --parquet naming the results file itself is refused before any work
    code, _, err = run(capsys, "sweep", "vo1989:steps=200", "-s", "tlsf", "-o", str(out),
                       "--parquet", str(out))
    assert code == 2 and "same file" in err


def test_on_a_local_dask_cluster_the_cells_are_the_same(full_sweep, tmp_path, capsys):
    """The same tasks on a 2-worker LocalCluster: every row equals the local
    pool's (each checked against compare above), timings aside."""
    pytest.importorskip("distributed")
    out, argv = full_sweep
    dask_out = tmp_path / "dask.csv"
    code, _, err = run(capsys, *[a for a in argv if a not in ("-j", "2")], "-o", str(dask_out),
                       "--scheduler", "local:2")
    assert code == 0, err
    assert "0 already in" in err and "18/18 cells measured" in err

    def cells_of(path):
        return {(r["trace"], r["strategy"], r["params"]): {k: v for k, v in r.items() if k not in TIMINGS}
                for r in read_rows(path)}
    assert cells_of(dask_out) == cells_of(out)


@pytest.mark.parametrize("given", ["local:0", "local:x", "cluster", "tcp://host"])
def test_a_bad_scheduler_is_exit_2_naming_it(given, tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["sweep", "vo1989:steps=100", "-s", "tlsf", "-o", str(tmp_path / "r.csv"),
              "--scheduler", given])
    assert exc.value.code == 2
    assert repr(given) in capsys.readouterr().err


def test_a_cell_the_strategy_refuses_has_its_error_row_and_exit_1(tmp_path, capsys):
    out = tmp_path / "r.csv"
    code, _, err = run(capsys, "sweep", "vo1989:steps=100", "-s", "buddy",
                       "-P", "buddy.min_order=4,16", "-P", "buddy.max_order=12", "-o", str(out))
    assert code == 1 and "1 of 2 cells failed" in err
    rows = {r["params"]: r for r in read_rows(out)}
    # Knuth's pool of 2**max_order bytes cannot hold a block of 2**min_order: refused when built
    assert "max_order=12 is below min_order=16" in rows["max_order=12 min_order=16"]["error"]
    assert rows["max_order=12 min_order=16"]["ops"] == ""
    assert rows["max_order=12 min_order=4"]["error"] == "" and rows["max_order=12 min_order=4"]["ops"] == "200"
