"""Seed 000: Phong Vo's simulation of 10 May 1989, rerun.

"This simulation runs 10000 steps. At each step, a malloc request of a size
varying uniformly between 1 to 1000 bytes is performed ... Each malloced
block is given a life time ranging uniformly between 100 to 1000 steps ...
Salloc is the maximum total size in bytes of 'in-use' allocated data at any
time slice.  Sarena is the total sbrk space.  Waste is (Sarena-Salloc)/Salloc
... Time is the total user+sys time spent in doing mallocs and frees alone."

Vo ran three mallocs on a VAX 8650 under 4.3BSD: ``bsi`` (libc's, Kingsley's
power-of-two buckets: our ``bsd-buckets``), ``fsi`` (the old libc malloc,
first fit with a roving pointer: the V7 malloc, ``v7-malloc``, whose policy
K&R's ``next-fit`` shares) and ``vsi`` (his best fit on a splay tree:
``splay-best-fit``).  We run his workload over several seeds (his random
numbers are not known) on the VAX's settings (4-byte words, 4.3BSD's 1 KiB
VAX pages for the buckets) and on LP64, and print his columns beside ours.
"""

from __future__ import annotations

from ..allocators.params import INT, Param
from .base import NAMES, Experiment, ExperimentError, ListParam, Run, SeedAllocator, base_row, \
    mean_sd, seed_figures, strategy_columns
from .model import SEED, Chart, Column, Panel, Result, Series, Table
from .runner import Job, workload_ref

#: machine -> (title, common parameters, each strategy's own)
MACHINES = {
    "vax": ("VAX, the seed's machine: 4-byte words, 4.3BSD's 1 KiB VAX pages for the buckets",
            {"word": 4}, {"bsd-buckets": {"pagesize": 1024}}),
    "lp64": ("LP64: 8-byte words, 4 KiB pages", {"word": 8}, {}),
}

VO = {"salloc": 304921}


def _vo(sarena: int, waste: float, time: float) -> dict:
    figures = {"seed_salloc": VO["salloc"], "seed_sarena": sarena, "seed_waste": waste,
               "seed_time": time}
    return {m: figures for m in MACHINES}


class Vo1989(Experiment):
    name = "vo1989"
    title = "Vo 1989: space (Salloc, Sarena, waste) and time of three mallocs on one simulation"
    source = ("seed 000: Phong Vo (AT&T Bell Labs), Usenet, 10 May 1989, replying to Niels J. "
              "Kruse; a VAX 8650 running 4.3BSD")
    workload = "vo1989"
    workload_defaults = {"seed": 1}
    settings = (
        Param("runs", INT, 10, "runs with seeds seed, seed+1, ...: the table shows means, "
              "waste with its standard deviation", low=1, high=100),
        ListParam("machines", NAMES, ("vax", "lp64"), "word sizes and pages to run: vax "
                  "(the seed's), lp64", item_kind=NAMES),
    )
    seed_allocators = (
        SeedAllocator("bsi", "4.3BSD libc malloc: Kingsley's power-of-two buckets (Vo: "
                      "'buddy-system')", ("bsd-buckets",), _vo(785804, 1.58, 0.48)),
        SeedAllocator("fsi", "the old libc malloc: first fit with a roving pointer (V7, 4.1BSD)",
                      ("v7-malloc", "next-fit"), _vo(392192, 0.29, 2.23)),
        SeedAllocator("vsi", "Vo's best fit on a splay tree", ("splay-best-fit",),
                      _vo(358400, 0.18, 0.93)),
    )

    def _machines(self, run: Run) -> list[str]:
        unknown = [m for m in run.settings["machines"] if m not in MACHINES]
        if unknown:
            raise ExperimentError(f"experiment vo1989: unknown machine {unknown[0]!r} "
                                  f"(known: {', '.join(MACHINES)})")
        return list(dict.fromkeys(run.settings["machines"]))

    def _seeds(self, run: Run) -> list[int]:
        first = run.workload.get("seed", 1)
        return list(range(first, first + run.settings["runs"]))

    def jobs(self, run: Run) -> list[Job]:
        out = []
        for machine in self._machines(run):
            _, common, own = MACHINES[machine]
            for seed in self._seeds(run):
                trace = workload_ref("vo1989", dict(run.workload, seed=seed))
                for name in run.strategies:
                    out.append(Job.of((machine, name, seed), trace, name,
                                      dict(common, **own.get(name, {})),
                                      label=f"{name}, {machine}, seed {seed}"))
        return out

    def result(self, run: Run, rows: dict) -> Result:
        seeds = self._seeds(run)
        tables = []
        columns = strategy_columns() + [
            Column("seed_salloc", "Vo Salloc", "{:,}", SEED),
            Column("seed_sarena", "Vo Sarena", "{:,}", SEED),
            Column("seed_waste", "Vo Waste", "{:.2f}", SEED),
            Column("seed_time", "Vo Time s", "{:.2f}", SEED),
            Column("salloc", "Salloc", "{:,.0f}"), Column("sarena", "Sarena", "{:,.0f}"),
            Column("waste", "Waste", "{:.2f}"), Column("waste_sd", "± sd", "{:.2f}"),
            Column("search_mean", "search mean", "{:.1f}"), Column("work_per_op", "work/op", "{:.2f}"),
            Column("wall_ms", "wall ms", "{:.0f}"),
        ]
        for machine in self._machines(run):
            title, _, _ = MACHINES[machine]
            table = Table(machine, title, columns)
            for entry in run.lineup:
                row = base_row(entry)
                row.update(seed_figures(entry, machine))
                if entry.available:
                    measured = [rows[(machine, entry.strategy, s)] for s in seeds]
                    errors = [m["error"] for m in measured if "error" in m]
                    if errors:
                        row["error"] = errors[0]
                    else:
                        row["salloc"] = mean_sd([m["max_live"] for m in measured])[0]
                        row["sarena"] = mean_sd([m["max_heap"] for m in measured])[0]
                        row["waste"], row["waste_sd"] = mean_sd([m["waste"] for m in measured])
                        row["search_mean"] = mean_sd([m["search_mean"] for m in measured])[0]
                        row["work_per_op"] = mean_sd([m["work_per_op"] for m in measured])[0]
                        row["wall_ms"] = 1000 * mean_sd([m["wall_s"] for m in measured])[0]
                table.rows.append(row)
            table.notes.append(f"Vo's figures (seed) are his one run on the VAX 8650; ours are "
                               f"means over {len(seeds)} seed{'s' if len(seeds) > 1 else ''} "
                               f"({seeds[0]}..{seeds[-1]}); times are ours (work units, wall "
                               f"time of the replay on this machine), never his.")
            tables.append(table)
        given = ", ".join(f"{k}={v}" for k, v in run.workload.items() if k != "seed")
        setup = [f"workload: vo1989 ({given or 'his parameters: 10 000 steps, sizes U[1,1000], lifetimes U[100,1000]'}), "
                 f"seeds {seeds[0]}..{seeds[-1]}"]
        return self._result(run, setup, tables, findings, chart)


def _order_text(pairs: list[tuple[str, float]], fmt: str, sign: str) -> str:
    return f" {sign} ".join(f"{name} {fmt.format(v)}" for name, v in pairs)


def findings(result: Result) -> list[str]:
    """Whether Vo's order holds: waste bsi > fsi > vsi; time bsi < vsi < fsi."""
    out = []
    for table in result.tables:
        measured = [r for r in table.rows if r.get("waste") is not None and r.get("seed_name")]
        by_label: dict[str, list[dict]] = {}
        for r in measured:
            by_label.setdefault(r["seed_name"], []).append(r)
        if not all(k in by_label for k in ("bsi", "fsi", "vsi")):
            out.append(f"{table.key}: Vo's order cannot be checked: bsi, fsi and vsi are not all run")
            continue
        bsi, vsi = by_label["bsi"][0], by_label["vsi"][0]
        for fsi in by_label["fsi"]:
            trio = [bsi, fsi, vsi]
            space = bsi["waste"] > fsi["waste"] > vsi["waste"]
            work = bsi["work_per_op"] < vsi["work_per_op"] < fsi["work_per_op"]
            wall = bsi["wall_ms"] < vsi["wall_ms"] < fsi["wall_ms"]
            names = [r["strategy"] for r in trio]
            out.append(
                f"{table.key}, fsi = {fsi['strategy']}: Vo's order of waste "
                f"{'holds' if space else 'does NOT hold'}: "
                + _order_text([(n, r["waste"]) for n, r in zip(names, trio)], "{:.2f}", ">")
                + " (Vo: 1.58 > 0.29 > 0.18)")
            slow = [bsi, vsi, fsi]
            out.append(
                f"{table.key}, fsi = {fsi['strategy']}: Vo's order of time "
                f"{'holds' if work else 'does NOT hold'} in work units "
                + "(" + _order_text([(r["strategy"], r["work_per_op"]) for r in slow], "{:.1f}", "<")
                + f" per op) and {'holds' if wall else 'does not hold'} in wall time "
                "(Vo: 0.48 s < 0.93 s < 2.23 s)")
    salloc = [r["salloc"] for t in result.tables for r in t.rows if r.get("salloc")]
    if salloc and set(result.params["workload"]) <= {"seed"}:     # his parameters
        ours = sum(salloc) / len(salloc)
        out.append(f"Salloc: ours {ours:,.0f} on average, Vo's {VO['salloc']:,} "
                   f"({100 * (ours / VO['salloc'] - 1):+.1f}%): the same workload, other random numbers")
    return out


def chart(result: Result) -> Chart:
    first = result.tables[0]
    names = [r["strategy"] for r in first.rows if r.get("waste") is not None]
    series = []
    seed_values = [first.row(n).get("seed_waste") for n in names]
    series.append(Series("Vo 1989 (VAX 8650)", seed_values, source=SEED))
    for table in result.tables:
        series.append(Series(f"ours, {table.key}", [table.row(n).get("waste") for n in names]))
    work = [Series(f"ours, {t.key}", [t.row(n).get("work_per_op") for n in names])
            for t in result.tables]
    return Chart("Vo 1989: waste = (Sarena - Salloc) / Salloc, and work per operation", [
        Panel("waste", names, series, "waste"),
        Panel("time: work units per operation (ours)", names, work, "work / op", log_y=True),
    ])
