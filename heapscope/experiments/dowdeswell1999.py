"""Seed 003: Roland Dowdeswell's mallocs on NetBSD (tech-userlevel, 5 February
1999), rerun.

He timed dlmalloc ("dl"), FreeBSD's phkmalloc, GNU malloc and NetBSD's own
libc malloc ("NetBSD" on the alpha, "standard" elsewhere) on growing
"number[s] of malloc(3)'ed regions of various sizes", on three machines.  On
the AlphaStation (64 MB) NetBSD's took 205.94 s at 4096 regions and failed
with ENOMEM at 8192; the others ran to 16384, paging from 12288 on.  His
program was an attachment the list did not keep: the workload is our
re-creation (``dowdeswell1999``: a phase per size class, 16 B to 8 KiB,
each malloc'ing the regions and freeing them), and the heap limit is stated
here, not taken from the seed (which does not give the data size limit).

Strategies: ``dlmalloc``; ``phkmalloc`` (FreeBSD); ``gnu-malloc`` (GNU);
NetBSD's malloc of 1999 is 4.4BSD's, Kingsley's power-of-two buckets:
``bsd-buckets``.  The alpha is LP64 with 8 KiB pages; the i386 and the
shark (StrongARM) 32-bit with 4 KiB pages.  Times are ours: the seed's are
mostly paging, which a simulation does not do; the heap beside the
machine's memory says where paging would start.
"""

from __future__ import annotations

from ..allocators.params import SIZE, Param
from .base import NAMES, Experiment, ExperimentError, ListParam, Run, SeedAllocator, base_row, \
    combine, strategy_columns
from .model import SEED, Chart, Column, Panel, Result, Series, Table
from .runner import Job, workload_ref

MIB = 1 << 20
BUCKETS = "bsd-buckets"
ENOMEM = "ENOMEM"


class Machine:
    def __init__(self, title: str, word: int, page: int, ram: int, limit: int | None,
                 counts: tuple[int, ...]) -> None:
        self.title, self.word, self.page, self.ram, self.limit, self.counts = \
            title, word, page, ram, limit, counts

    def params(self, strategy: str) -> dict:
        out = {"word": self.word}
        if strategy in ("bsd-buckets", "dlmalloc", "phkmalloc"):
            out["pagesize"] = self.page
        return out


MACHINES = {
    "alpha": Machine("AlphaStation 200 4/233, 64 MB, NetBSD-current: LP64, 8 KiB pages",
                     8, 8192, 64 * MIB, 128 * MIB, (4096, 8192, 12288, 14336, 16384)),
    "i386": Machine("i386 (K6 233 MHz), 64 MB, NetBSD 1.3.1: 32-bit, 4 KiB pages",
                    4, 4096, 64 * MIB, None, (512, 1024, 2048, 4096, 8192, 16384)),
    "shark": Machine("shark (StrongARM 233 MHz), 32 MB, NetBSD 1.3H: 32-bit, 4 KiB pages",
                     4, 4096, 32 * MIB, 64 * MIB, (512, 1024, 2048, 4096)),
}

N_A = "N/A"


def _real(machine: str, counts: tuple, values: tuple) -> dict:
    """The seed's real times of one malloc on one machine, by count."""
    return {f"{machine}_heap": {f"seed_{c}": v for c, v in zip(counts, values)}}


A, I, S = MACHINES["alpha"].counts, MACHINES["i386"].counts, MACHINES["shark"].counts


class Dowdeswell1999(Experiment):
    name = "dowdeswell1999"
    title = "Dowdeswell 1999: growing numbers of regions, and which malloc runs out of memory"
    source = ("seed 003: Roland C. Dowdeswell, 'Re: Has importing the FreeBSD malloc(3) been "
              "considered?', tech-userlevel@netbsd.org, 5 February 1999")
    workload = "dowdeswell1999"
    workload_fixed = ("regions",)
    left_out = {"v7-malloc": "its search is quadratic here (after each sbrk it passes over every "
                             "block again): some 20 s at 4096 regions, many minutes at 16384"}
    settings = (
        ListParam("machines", NAMES, ("alpha",), "the seed's machines to rerun: alpha (where "
                  "NetBSD's malloc hit ENOMEM), i386, shark", item_kind=NAMES),
        ListParam("counts", "int", None, "region counts (the columns)", low=1, high=1 << 20,
                  none_ok=True, none_means="the seed's, per machine"),
        Param("heap_limit", SIZE, None, "the data size limit: a malloc past it fails (ENOMEM)",
              low=0, high=1 << 40, none_ok=True,
              none_means="the machine's: 128 MiB on the alpha, 64 MiB on the shark, none on the i386"),
    )
    seed_allocators = (
        SeedAllocator("dl", "Doug Lea's malloc (2.6.x)", ("dlmalloc",), {
            **_real("alpha", A, (3.78, 10.84, 39.19, 200.20, 249.51)),
            **_real("shark", S, (0.00, 1.00, 2.00, 7.00))}),
        SeedAllocator("FreeBSD", "Poul-Henning Kamp's phkmalloc", ("phkmalloc",), {
            **_real("alpha", A, (2.63, 5.72, 19.10, 70.10, 90.30)),
            **_real("i386", I, (0.31, 0.98, 3.27, 11.80, 48.39, 383.06)),
            **_real("shark", S, (0.41, 0.96, 2.41, 8.12))}),
        SeedAllocator("GNU", "Mike Haertel's GNU malloc", ("gnu-malloc",), {
            **_real("alpha", A, (0.96, 3.62, 12.25, 45.38, 174.29)),
            **_real("i386", I, (0.17, 0.20, 0.62, 2.08, 7.79, 496.51)),
            **_real("shark", S, (0.25, 0.36, 0.99, 4.24))}),
        SeedAllocator("NetBSD (standard)", "NetBSD's libc malloc of 1999: 4.4BSD's, Kingsley's "
                      "power-of-two buckets", (BUCKETS,), {
                          **_real("alpha", A, (205.94, ENOMEM, N_A, N_A, N_A)),
                          **_real("i386", I, (0.17, 0.49, 1.58, 5.85, 529.93, N_A)),
                          **_real("shark", S, (0.25, 0.77, 3.69, ENOMEM))}),
    )

    def _machines(self, run: Run) -> list[str]:
        unknown = [m for m in run.settings["machines"] if m not in MACHINES]
        if unknown:
            raise ExperimentError(f"experiment dowdeswell1999: unknown machine {unknown[0]!r} "
                                  f"(known: {', '.join(MACHINES)})")
        return list(dict.fromkeys(run.settings["machines"]))

    def _counts(self, run: Run, machine: str) -> list[int]:
        return list(dict.fromkeys(run.settings["counts"] or MACHINES[machine].counts))

    def _limit(self, run: Run, machine: str) -> int | None:
        given = run.settings["heap_limit"]
        return given if given is not None else MACHINES[machine].limit

    def jobs(self, run: Run) -> list[Job]:
        out = []
        for machine in self._machines(run):
            m = MACHINES[machine]
            limit = self._limit(run, machine)
            # the largest counts first: the long replays start while the short ones fill in
            for count in sorted(self._counts(run, machine), reverse=True):
                trace = workload_ref("dowdeswell1999", dict(run.workload, regions=count))
                for name in run.strategies:
                    params = m.params(name)
                    if limit is not None:
                        params["heap_limit"] = limit
                    out.append(Job.of((machine, count, name), trace, name, params,
                                      label=f"{name}, {count} regions, {machine}"))
        return out

    def result(self, run: Run, rows: dict) -> Result:
        tables = []
        for machine in self._machines(run):
            m = MACHINES[machine]
            counts = self._counts(run, machine)
            limit = self._limit(run, machine)
            ram_mib = m.ram / MIB
            heap_cols, time_cols = [], []
            for c in counts:
                if c in m.counts:          # the seed ran it on this machine
                    heap_cols.append(Column(f"seed_{c}", f"seed {c} s", "{:.2f}", SEED))
            for c in counts:
                heap_cols.append(Column(f"heap_{c}", f"{c}", "{:.1f}", flag_above=ram_mib))
                time_cols += [Column(f"work_{c}", f"{c} work/op", "{:.2f}"),
                              Column(f"wall_{c}", f"{c} wall s", "{:.2f}")]
            limit_text = f"a {limit / MIB:g} MiB heap limit" if limit is not None else "no heap limit"
            heap = Table(f"{machine}_heap", f"{m.title}. Seed: real time (s); ours: largest heap "
                         f"(MiB) under {limit_text}, * beyond the {ram_mib:g} MiB of RAM",
                         strategy_columns() + heap_cols)
            time = Table(f"{machine}_time", f"{machine}: our work units per operation and wall "
                         "time (s) of the replay", strategy_columns() + time_cols)
            for entry in run.lineup:
                hrow, trow = base_row(entry), base_row(entry)
                if entry.seed:
                    hrow.update(entry.seed.figures.get(f"{machine}_heap", {}))
                if entry.available:
                    for c in counts:
                        got = combine([rows[(machine, c, entry.strategy)]])
                        if "error" in got:
                            hrow["error"] = trow["error"] = got["error"]
                            break
                        hrow[f"heap_{c}"] = ENOMEM if got["failed"] else got["max_heap"] / MIB
                        trow[f"work_{c}"] = got["work_per_op"]
                        trow[f"wall_{c}"] = got["wall_s"]
                heap.rows.append(hrow)
                time.rows.append(trow)
            heap.notes.append(
                "seed: real seconds of his runs (ENOMEM: malloc failed; N/A: not run). Ours: the "
                "largest heap in MiB, or ENOMEM when a malloc failed under the limit. The seed's "
                "times grow with paging, which starts where the heap passes the machine's memory.")
            tables += [heap, time]
        w = run.workload
        setup = [f"workload: dowdeswell1999 (our re-creation): per count, one phase per size class "
                 f"{w.get('min_size', 16)}..{w.get('max_size', 8192)} bytes, each mallocs the regions "
                 f"(sizes in (s/2, s]) then frees them; seed {w.get('seed', 1999)}"]
        result = Result(self.name, self.title, self.source, setup, tables,
                        params={"settings": run.settings, "workload": run.workload})
        result.findings = findings(result, self, run)
        result.chart = chart(result, self, run)
        return result


def _first(row: dict, counts: list[int], test) -> int | None:
    for c in counts:
        if test(row.get(f"heap_{c}")):
            return c
    return None


def findings(result: Result, exp: Dowdeswell1999, run: Run) -> list[str]:
    out = []
    for machine in exp._machines(run):
        m = MACHINES[machine]
        counts = exp._counts(run, machine)
        table = result.table(f"{machine}_heap")
        for row in table.rows:
            if row.get("available") is False or row.get("error"):
                continue
            enomem = _first(row, counts, lambda v: v == ENOMEM)
            paging = _first(row, counts, lambda v: isinstance(v, float) and v > m.ram / MIB)
            figures = next((sa.figures.get(f"{machine}_heap", {}) for sa in exp.seed_allocators
                            if sa.label == row.get("seed_name")), {})
            seed = [c for c in m.counts if figures.get(f"seed_{c}") == ENOMEM]
            if enomem or row.get("seed_name"):
                what = (f"ENOMEM from {enomem} regions" if enomem
                        else f"no ENOMEM up to {counts[-1]} regions")
                beyond = f", beyond RAM from {paging}" if paging and paging != enomem else ""
                seed_text = ""
                if figures:
                    seed_text = (f" (seed {row['seed_name']}: ENOMEM at {seed[0]})" if seed
                                 else f" (seed {row['seed_name']}: no ENOMEM up to {m.counts[-1]})")
                out.append(f"{machine}: {row['strategy']} {what}{beyond}{seed_text}")
    return out


def chart(result: Result, exp: Dowdeswell1999, run: Run) -> Chart:
    panels = []
    for machine in exp._machines(run):
        m = MACHINES[machine]
        counts = exp._counts(run, machine)
        table = result.table(f"{machine}_heap")
        series = []
        drawn = [r for r in table.rows if not (r.get("available") is False or r.get("error"))]
        # the seed's allocators, when any ran: eleven lines would hide each other
        # (ours are in the table)
        seeds = [r for r in drawn if r.get("seed_name")]
        for row in seeds or drawn:
            values = [row.get(f"heap_{c}") for c in counts]
            marks = tuple(i for i, v in enumerate(values) if v == ENOMEM)
            series.append(Series(row["strategy"], [v if isinstance(v, float) else None for v in values],
                                 kind="line", marks=marks))
        lines = [(m.ram / MIB, f"RAM {m.ram / MIB:g} MiB")]
        limit = exp._limit(run, machine)
        if limit is not None:
            lines.append((limit / MIB, f"limit {limit / MIB:g} MiB"))
        who = "the seed's allocators" if seeds else "largest heap"
        panels.append(Panel(f"{machine}: {who}, largest heap (MiB); x: ENOMEM", [str(c) for c in counts],
                            series, "MiB", hlines=tuple(lines), x_title="regions",
                            mark_at=limit / MIB if limit is not None else None))
    return Chart("Dowdeswell 1999: regions of various sizes", panels)
