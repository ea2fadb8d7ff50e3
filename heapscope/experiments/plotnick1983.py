"""Seed 002: Mark Plotnick's "In Search Of... fast malloc" (net.unix, 1983), rerun.

"The benchmark program was very simple; it just allocated n blocks of m
bytes each, and then printed out the virtual memory statistics ... It will
optionally allocate, and immediately free, n*m bytes upon startup; this
greatly reduces the number of sbrk() system calls."  On a VAX 11/750 under
4.1BSD, 20000 blocks of 20 bytes: "normal 4bsd" 101.5 s of user time
(33.0 s with the giant free(malloc()) first), "4.1c" 3.8 s, "caltech" 2.3 s;
csh's ``time`` gave each run's average data size (kdata) and maximum
resident set (kmax).

"normal 4bsd" is the V7 malloc (``v7-malloc``): its search walks every
block, busy or free, and starts again from the bottom after each sbrk, which
made it quadratic.  "caltech" is Kingsley's power-of-two buckets
(``bsd-buckets``: "chunks of m+4, rounded up to the nearest power of 2").
"4.1c" (``malloc.c.new``) is only described as chunks of "m+4 bytes (more or
less)": no strategy follows it.  VAX settings: 4-byte words, 1 KiB pages.
"""

from __future__ import annotations

from .base import Experiment, ListParam, Run, SeedAllocator, base_row, combine, ratio, \
    seed_figures, strategy_columns
from .model import SEED, Chart, Column, Panel, Result, Series, Table
from .runner import Job, workload_ref

COMMON = {"word": 4}
OWN = {"bsd-buckets": {"pagesize": 1024}}
KIB = 1024
#: the 750's pages as 4.1BSD used them (two 512-byte hardware pages a cluster)
PAGE = 1024
V7 = "v7-malloc"
BUCKETS = "bsd-buckets"


def _key(m: int, giant: bool) -> str:
    return f"m{m}{'_giant' if giant else ''}"


def _runs(user: tuple, kdata: tuple, kmax: tuple, m: int) -> dict:
    """The seed's two runs of one malloc at one m: without, then with the giant block."""
    return {_key(m, g): {"seed_user": u, "seed_kdata": d, "seed_kmax": x}
            for g, u, d, x in zip((False, True), user, kdata, kmax)}


class Plotnick1983(Experiment):
    name = "plotnick1983"
    title = "Plotnick 1983: n blocks of m bytes, with and without a giant free(malloc()) first"
    source = ("seed 002: Mark Plotnick, 'In Search Of... fast malloc', net.unix, 1983; a VAX "
              "11/750 with 2 MB of memory running 4.1BSD")
    workload = "plotnick1983"
    workload_fixed = ("m", "giant_first")
    settings = (
        ListParam("sizes", "int", (20, 100), "the block sizes m of the runs (the seed's: 20 and 100)",
                  low=0, high=1 << 20),
    )
    seed_allocators = (
        SeedAllocator("normal 4bsd", "the 4.1BSD libc malloc: V7's ring of all blocks, first fit "
                      "from a rover", (V7,),
                      {**_runs((101.5, 33.0), (312, 412), (476, 476), 20),
                       **_runs((727.5, 77.6), (1416, 1299), (1713, 1706), 100)}),
        SeedAllocator("4.1c", "malloc.c.new of 4.1cBSD", (),
                      {**_runs((3.8, 3.8), (239, 240), (475, 474), 20),
                       **_runs((4.1, 3.8), (978, 957), (1595, 1489), 100)},
                      why_missing="not available: 4.1c's malloc.c.new is described only as "
                                  "'chunks of m+4 bytes (more or less)'; no strategy follows it"),
        SeedAllocator("caltech", "Chris Kingsley's power-of-two buckets (Caltech, 1982)", (BUCKETS,),
                      {**_runs((2.3, 2.2), (320, 319), (631, 632), 20),
                       **_runs((3.3, 3.2), (1043, 1071), (1509, 1529), 100)}),
    )

    def _cases(self, run: Run) -> list[tuple[int, bool]]:
        return [(m, g) for m in dict.fromkeys(run.settings["sizes"]) for g in (False, True)]

    def jobs(self, run: Run) -> list[Job]:
        out = []
        for m, giant in self._cases(run):
            trace = workload_ref("plotnick1983", dict(run.workload, m=m, giant_first=giant))
            for name in run.strategies:
                out.append(Job.of((_key(m, giant), name), trace, name,
                                  dict(COMMON, **OWN.get(name, {})), resident_page=PAGE,
                                  label=f"{name}, m={m}{', giant first' if giant else ''}"))
        return out

    def result(self, run: Run, rows: dict) -> Result:
        n = run.workload.get("n", 20000)
        columns = strategy_columns() + [
            Column("seed_user", "seed user s", "{:.1f}", SEED),
            Column("seed_kdata", "seed kdata", "{:,}", SEED),
            Column("seed_kmax", "seed kmax", "{:,}", SEED),
            Column("search_mean", "search/malloc", "{:.1f}"),
            Column("work_per_op", "work/op", "{:.1f}"),
            Column("work_x", "work x caltech", "{:.1f}"),
            Column("wall_ms", "wall ms", "{:,.0f}"),
            Column("kdata", "heap KiB (time avg)", "{:,.0f}"),
            Column("kmax", "max heap KiB", "{:,.0f}"),
            Column("resident", "resident KiB", "{:,.0f}"),
            Column("sbrks", "heap grown", "{:,.0f}"),
        ]
        tables = []
        for m, giant in self._cases(run):
            key = _key(m, giant)
            title = f"{n} blocks of {m} bytes" + (", giant free(malloc()) first" if giant else "")
            table = Table(key, title, columns)
            base = combine([rows[(key, BUCKETS)]]) if (key, BUCKETS) in rows else {}
            for entry in run.lineup:
                row = base_row(entry)
                row.update(seed_figures(entry, key))
                if entry.available:
                    got = combine([rows[(key, entry.strategy)]])
                    if "error" in got:
                        row["error"] = got["error"]
                    else:
                        row["search_mean"] = got["search_mean"]
                        row["work_per_op"] = got["work_per_op"]
                        row["work_x"] = ratio(got["work_per_op"], base.get("work_per_op"))
                        row["wall_ms"] = 1000 * got["wall_s"]
                        row["kdata"] = got["heap_by_work"] / KIB
                        row["kmax"] = got["max_heap"] / KIB
                        row["resident"] = got["resident"] / KIB
                        row["sbrks"] = got["grows"]
                table.rows.append(row)
            tables.append(table)
        tables[0].notes.append(
            "seed: user seconds, kdata (average data size, KiB) and kmax (largest resident set, KiB, "
            "the program's text and stack included) from csh's time on the 750. Ours: the search "
            "length per malloc, work units, the wall time of the replay; the heap averaged over "
            "the run's time in work units (like kdata), its peak, and the peak of the 1 KiB pages "
            "written (the program writes nothing in its blocks; the allocator writes headers), "
            "which is what a resident set such as kmax counts.")
        if 100 in run.settings["sizes"]:
            tables[-1].notes.append(
                "m = 100 needs about 2 MB, all the 750 had: the seed's kmax there is what fitted in "
                "memory (the 4bsd run swapped 144 times), not the heap.")
        setup = [f"workload: plotnick1983, n = {n}, m = "
                 f"{' and '.join(map(str, dict.fromkeys(run.settings['sizes'])))}, each without and "
                 "with the giant free(malloc(n*m)) first",
                 "strategies: VAX settings (4-byte words; 1 KiB pages for the buckets)"]
        return self._result(run, setup, tables, findings, chart)


def findings(result: Result) -> list[str]:
    out = []
    for table in result.tables:
        v7, buckets = table.value(V7, "work_per_op"), table.value(BUCKETS, "work_per_op")
        seed_v7, seed_b = table.value(V7, "seed_user"), table.value(BUCKETS, "seed_user")
        if v7 is not None and buckets is not None:
            seed = f" (seed: {seed_v7 / seed_b:.0f}x in user time)" if seed_v7 and seed_b else ""
            out.append(f"{table.title}: v7-malloc does {v7 / buckets:.0f}x the work of bsd-buckets"
                       f"{seed}")
        kmax_v7, kmax_b = table.value(V7, "kmax"), table.value(BUCKETS, "kmax")
        if kmax_v7 and kmax_b and "m20" in table.key:
            out.append(f"{table.title}: max heap {kmax_v7:,.0f} KiB for v7-malloc, {kmax_b:,.0f} "
                       f"KiB for bsd-buckets (seed kmax: 476 and 631, with the program's own pages)")
    keys = {t.key: t for t in result.tables}
    for m in ("m20", "m100"):
        plain, giant = keys.get(m), keys.get(f"{m}_giant")
        if plain is None or giant is None:
            continue
        a, b = plain.value(V7, "work_per_op"), giant.value(V7, "work_per_op")
        sa, sb = plain.value(V7, "seed_user"), giant.value(V7, "seed_user")
        if a and b:
            seed = f": {sa} s -> {sb} s" if sa and sb else ""
            out.append(f"{plain.title}: the giant free(malloc()) first cuts v7-malloc's work "
                       f"{a / b:.1f}x ({'as' if a > b else 'NOT as'} in the seed{seed})")
    return out


def chart(result: Result) -> Chart:
    """The seed's allocators that ran (all of ours when none did: twelve
    strategies' bars hide each other; the table has them all): the seed's
    user seconds, our work per operation, and the seed's kmax beside the
    resident KiB we count (the pages written)."""
    tables = result.tables
    drawn = [r for r in tables[0].rows if r.get("work_per_op") is not None]
    names = [r["strategy"] for r in drawn if r.get("seed_name")] or [r["strategy"] for r in drawn]
    labels = [t.key.replace("_giant", " +giant") for t in tables]
    seed_rows = [(n, tables[0].value(n, "seed_name")) for n in names if tables[0].value(n, "seed_name")]
    user = [Series(f"{label} (seed)", [t.value(n, "seed_user") for t in tables], source=SEED)
            for n, label in seed_rows]
    work = [Series(n, [t.value(n, "work_per_op") for t in tables]) for n in names]
    kmax = [Series(f"kmax, {label} (seed)", [t.value(n, "seed_kmax") for t in tables], source=SEED)
            for n, label in seed_rows]
    resident = [Series(f"{n}, resident", [t.value(n, "resident") for t in tables]) for n in names]
    panels = []
    if user:
        panels.append(Panel("the seed's user seconds (VAX 11/750)", labels, user, "seconds", log_y=True))
    panels += [Panel("our work units per operation", labels, work, "work / op", log_y=True),
               Panel("the seed's kmax and our resident KiB (pages written)", labels, kmax + resident, "KiB")]
    return Chart("Plotnick 1983: n blocks of m bytes on VAX settings", panels)
