"""Seed 001: dlmalloc against DJGPP's BSD malloc, October 1997, rerun.

Salvador E. Tropea's program: "10000 pseudo-aleatory numbers, the numbers
indicates if we will delete or allocate a block, the index in a 1024
elements array and the size of the block (0-128Kb)"; "BSD malloc (DJGPP) used
67305472 bytes for the heap.  dlmalloc used 51052544 bytes, that's 24% less",
and took "1.54 seconds 7 times more" than BSD's 0.22.  John Machin answered
that the time was a failing malloc doing "nothing rapidly", suggested
touching the memory with memset() and smaller maximum block sizes, and
reported dlmalloc "SLIGHTLY slower ... (like e.g. 7.58 secs & 7.47 secs when
max blocksize is 8192)", its overhead 5% to 20% against the BSD's over 50%,
and the BSD version swapping and failing sooner.

DJGPP was a 32-bit DOS extender without mmap: everything runs with 4-byte
words, and dlmalloc with ``mmap_max=0`` (its large requests come from the
heap, as on DJGPP).  DJGPP's BSD malloc is Kingsley's power-of-two buckets:
``bsd-buckets`` with 4 KiB pages.  Four tables: Tropea's program; the same
with the memory touched (resident memory, what swapping follows); Machin's
smaller maximum block; and a heap limit, to see which malloc fails first.
"""

from __future__ import annotations

from ..allocators.params import INT, SIZE, Param
from .base import Experiment, Run, SeedAllocator, base_row, combine, percent_less, ratio, \
    seed_figures, strategy_columns
from .model import SEED, Chart, Column, Panel, Result, Series, Table
from .runner import Job, workload_ref

COMMON = {"word": 4}
OWN = {"dlmalloc": {"mmap_max": 0}}
BSD = "bsd-buckets"
MIB = 1 << 20
KIB = 1 << 10

#: variant -> what changes in the workload and in the strategies' parameters
VARIANTS = ("tropea", "small", "limit")


class Djgpp1997(Experiment):
    name = "djgpp1997"
    title = "DJGPP 1997: heap bytes and time of dlmalloc and the BSD malloc on Tropea's program"
    source = ("seed 001: Salvador E. Tropea and John Machin on the djgpp list, 29-31 October "
              "1997; DJGPP (32-bit DOS, no mmap) on a PC")
    workload = "djgpp1997"
    settings = (
        Param("runs", INT, 1, "runs with seeds seed, seed+1, ...: the table shows means",
              low=1, high=100),
        Param("small_max", SIZE, 8192, "the largest block of Machin's smaller-blocks table",
              low=0, high=1 << 30),
        Param("limit", SIZE, 32 * MIB, "the heap limit of the last table (ENOMEM past it)",
              low=0, high=1 << 40),
        Param("page", SIZE, 4096, "page size of the resident-memory measure", low=512,
              high=1 << 16, power_of_two=True),
    )
    seed_allocators = (
        SeedAllocator("BSD malloc (DJGPP)", "DJGPP 2.01's libc malloc: Kingsley's 4.2BSD "
                      "power-of-two buckets", (BSD,), {
                          "tropea": {"seed_heap": 67305472, "seed_time": 0.22},
                          "touch": {"seed_claim": "runs out of real memory & swaps sooner"},
                          "small": {"seed_time": 7.47, "seed_overhead": "over 50%"},
                          "limit": {"seed_claim": "runs out of swap & fails sooner"},
                      }),
        SeedAllocator("dlmalloc", "Doug Lea's malloc (2.6.x)", ("dlmalloc",), {
            "tropea": {"seed_heap": 51052544, "seed_less": "24%", "seed_time": 1.54},
            "touch": {"seed_claim": "(fits in real memory longer)"},
            "small": {"seed_time": 7.58, "seed_overhead": "5% to 20%"},
        }),
    )

    def _seeds(self, run: Run) -> list[int]:
        first = run.workload.get("seed", 1997)
        return list(range(first, first + run.settings["runs"]))

    def _variant(self, run: Run, variant: str, seed: int) -> tuple[tuple, dict, int]:
        """(trace, common parameters, resident page) of one variant's run."""
        workload = dict(run.workload, seed=seed)
        common = dict(COMMON)
        page = 0
        if variant == "tropea":
            page = run.settings["page"]
        elif variant == "small":
            workload["max_size"] = run.settings["small_max"]
            page = run.settings["page"]
        else:
            common["heap_limit"] = run.settings["limit"]
        return workload_ref("djgpp1997", workload), common, page

    def jobs(self, run: Run) -> list[Job]:
        out = []
        for variant in VARIANTS:
            for seed in self._seeds(run):
                trace, common, page = self._variant(run, variant, seed)
                for name in run.strategies:
                    out.append(Job.of((variant, name, seed), trace, name,
                                      dict(common, **OWN.get(name, {})), resident_page=page,
                                      label=f"{name}, {variant}, seed {seed}"))
        return out

    def result(self, run: Run, rows: dict) -> Result:
        seeds = self._seeds(run)
        measured = {}
        for variant in VARIANTS:
            for name in run.strategies:
                measured[(variant, name)] = combine([rows[(variant, name, s)] for s in seeds])

        def bsd(variant: str, key: str):
            return measured.get((variant, BSD), {}).get(key)

        def table(key: str, title: str, columns: list[Column], fill) -> Table:
            t = Table(key, title, strategy_columns() + columns)
            for entry in run.lineup:
                row = base_row(entry)
                row.update(seed_figures(entry, key))
                if entry.available:
                    variant = "tropea" if key == "touch" else key
                    m = measured[(variant, entry.strategy)]
                    if "error" in m:
                        row["error"] = m["error"]
                    else:
                        fill(row, m, variant)
                t.rows.append(row)
            return t

        def space_and_time(row, m, variant):
            row["heap"] = m["max_heap"]
            row["less"] = percent_less(m["max_heap"], bsd(variant, "max_heap"))
            row["waste"] = m["waste"]
            row["work_per_op"] = m["work_per_op"]
            row["work_x"] = ratio(m["work_per_op"], bsd(variant, "work_per_op"))
            row["wall_ms"] = 1000 * m["wall_s"]
            row["wall_x"] = ratio(m["wall_s"], bsd(variant, "wall_s"))
            row["failed"] = m["failed"]

        def touch(row, m, variant):
            row["heap"] = m["max_heap"]
            row["resident"] = m["resident"] / KIB
            row["resident_touched"] = m["resident_touched"] / KIB
            row["touched_share"] = ratio(m["resident_touched"], m["max_heap"])
            row["touched_x"] = ratio(m["resident_touched"], bsd(variant, "resident_touched"))

        def small(row, m, variant):
            space_and_time(row, m, variant)
            row["resident_touched"] = m["resident_touched"] / KIB

        def limit(row, m, variant):
            row["heap"] = m["max_heap"]
            row["failed"] = m["failed"]
            row["first_failure"] = m["first_failure"]

        heap_cols = [Column("heap", "heap bytes", "{:,.0f}"), Column("less", "less than BSD", "{:.1f}%")]
        time_cols = [Column("waste", "waste", "{:.2f}"), Column("work_per_op", "work/op", "{:.2f}"),
                     Column("work_x", "work x BSD", "{:.2f}"), Column("wall_ms", "wall ms", "{:.0f}"),
                     Column("wall_x", "wall x BSD", "{:.2f}")]
        w = run.workload
        program = (f"{w.get('actions', 10000):,} actions on {w.get('slots', 1024)} slots, sizes "
                   f"0-{w.get('max_size', 128 * KIB):,} bytes")
        page = run.settings["page"]
        tables = [
            table("tropea", f"Tropea's program ({program}): heap bytes and time",
                  [Column("seed_heap", "seed heap bytes", "{:,}", SEED),
                   Column("seed_less", "seed less", "{}", SEED),
                   Column("seed_time", "seed time s", "{:.2f}", SEED)]
                  + heap_cols + time_cols + [Column("failed", "failed", "{:.0f}")], space_and_time),
            table("touch", f"Touching the memory (Machin): resident KiB, {page // KIB} KiB pages",
                  [Column("seed_claim", "seed says", "{}", SEED),
                   Column("heap", "heap bytes", "{:,.0f}"),
                   Column("resident", "resident untouched", "{:,.0f}"),
                   Column("resident_touched", "resident touched", "{:,.0f}"),
                   Column("touched_share", "touched/heap", "{:.2f}"),
                   Column("touched_x", "touched x BSD", "{:.2f}")], touch),
            table("small", f"Smaller blocks (Machin): sizes 0-{run.settings['small_max']:,} bytes",
                  [Column("seed_time", "seed time s", "{:.2f}", SEED),
                   Column("seed_overhead", "seed overhead", "{}", SEED)]
                  + heap_cols + time_cols
                  + [Column("resident_touched", "resident touched KiB", "{:,.0f}")], small),
            table("limit", f"Under a {run.settings['limit'] / MIB:g} MiB heap limit: which fails first",
                  [Column("seed_claim", "seed says", "{}", SEED),
                   Column("heap", "heap bytes", "{:,.0f}"), Column("failed", "mallocs failed", "{:.0f}"),
                   Column("first_failure", "first failure (action)", "{:,.0f}")], limit),
        ]
        tables[0].notes.append(
            "Seed times are Tropea's (DJGPP on his PC, 1997); ours are work units and the wall time "
            "of the replay alone on this machine. 'x BSD' divides by bsd-buckets' figure.")
        tables[1].notes.append(
            "Touching changes neither the trace nor any allocator's choice: heap and work are those "
            "of the first table. Resident = pages written at the peak: untouched, the allocator's "
            "headers and links only; touched, also every byte the program asked for (memset).")
        tables[3].notes.append(
            "first failure: the action whose malloc first returned NULL (Machin's 'malloc failed "
            "after %d iterations'); blank: none failed.")
        setup = [f"workload: djgpp1997 ({program}), seed{'s' if len(seeds) > 1 else ''} "
                 f"{', '.join(map(str, seeds))}",
                 "strategies: 4-byte words (DJGPP was 32-bit); dlmalloc with mmap_max=0 (DJGPP had no mmap)"]
        return self._result(run, setup, tables, findings, chart)


def findings(result: Result) -> list[str]:
    out = []
    t = result.table("tropea")
    dl, bsd = t.value("dlmalloc", "heap"), t.value(BSD, "heap")
    if dl is not None and bsd is not None:
        less = percent_less(dl, bsd)
        out.append(f"dlmalloc's heap is {dl:,.0f} bytes, bsd-buckets' {bsd:,.0f}: {less:.1f}% less "
                   f"({'as' if dl < bsd else 'NOT as'} Tropea found: 24% less)")
        work = t.value("dlmalloc", "work_x")
        wall = t.value("dlmalloc", "wall_x")
        if work is not None:
            out.append(f"time: dlmalloc does {work:.1f}x bsd-buckets' work per operation "
                       f"({wall:.1f}x its wall time here); Tropea measured 7x, Machin 'SLIGHTLY slower' "
                       "once the program did its own work")
    touch = result.table("touch")
    dl, bsd = touch.value("dlmalloc", "resident_touched"), touch.value(BSD, "resident_touched")
    if dl is not None and bsd is not None:
        out.append(f"touched, bsd-buckets needs {bsd:,.0f} KiB of real memory against dlmalloc's "
                   f"{dl:,.0f} KiB ({bsd / dl:.2f}x): it {'swaps' if bsd > dl else 'does NOT swap'} "
                   "sooner (Machin's (c))")
    small = result.table("small")
    dl, bsd = small.value("dlmalloc", "waste"), small.value(BSD, "waste")
    if dl is not None and bsd is not None:
        out.append(f"smaller blocks: waste {100 * dl:.0f}% for dlmalloc, {100 * bsd:.0f}% for "
                   "bsd-buckets (Machin: 5% to 20%, over 50%)")
    lim = result.table("limit")
    dl, bsd = lim.value("dlmalloc", "first_failure"), lim.value(BSD, "first_failure")
    if lim.value(BSD, "heap") is not None and lim.value("dlmalloc", "heap") is not None:
        def when(v):
            return "never fails" if v is None else f"first fails at action {v:,.0f}"
        sooner = bsd is not None and (dl is None or bsd < dl)
        out.append(f"under the limit bsd-buckets {when(bsd)}, dlmalloc {when(dl)}: the BSD "
                   f"malloc {'fails sooner' if sooner else 'does NOT fail sooner'} (Machin's (d))")
    return out


def chart(result: Result) -> Chart:
    t = result.table("tropea")
    names = [r["strategy"] for r in t.rows if r.get("heap") is not None]
    seed_heap = [(t.row(n).get("seed_heap") or 0) / MIB or None for n in names]
    heap = [t.row(n)["heap"] / MIB for n in names]
    touch = result.table("touch")
    untouched = [touch.row(n).get("resident", 0) / KIB for n in names]
    touched = [touch.row(n).get("resident_touched", 0) / KIB for n in names]
    work = [t.row(n).get("work_per_op") for n in names]
    return Chart("DJGPP 1997: Tropea's program, 32-bit, no mmap", [
        Panel("heap (MiB)", names, [Series("seed 1997", seed_heap, source=SEED),
                                    Series("ours", heap)], "MiB"),
        Panel("resident memory at the peak (MiB)", names,
              [Series("untouched", untouched), Series("touched (memset)", touched)], "MiB"),
        Panel("work units per operation (ours)", names, [Series("ours", work)], "work / op",
              log_y=True),
    ])
