"""Seed 004: Emilio Coppa's comparison of TLSF and his BSA (Sapienza, 2010), rerun.

Coppa replayed traces of real programs (CFRAC, Espresso, GhostScript, Perl,
ls, Inkscape, ...) collected with dlsym() interposition, in the CS:APP
MallocLab format, through TLSF and through BSA ("Bad segregated
allocator", which "uses a first-fit policy" on segregated lists), with
MallocLab's measures: utilisation and throughput.  His charts are not in the
seed; its lessons are: "TLSF is faster than BSA, but sometimes this boost is
paid in terms of space; probably we can explain this with the good-fit
policy of TLSF (BSA uses a first-fit policy)".

We replay the real programs bundled with heapscope (recorded the same way:
``heapscope record``, an LD_PRELOAD library using dlsym) through ``tlsf``
and ``segregated-first-fit`` -- the policy the seed says BSA uses, not BSA,
which the seed does not describe enough to copy -- and the other strategies,
with MallocLab's utilisation (peak live payload over the heap) and our
throughput, work units and search lengths.  The traces come from 64-bit
programs, so the strategies run with 8-byte words (Coppa's Gentoo was
32-bit).
"""

from __future__ import annotations

from ..allocators.params import INT, Param
from ..traces import names_a_file
from ..traces.bundled import examples
from .base import NAMES, Experiment, ExperimentError, ListParam, Run, SeedAllocator, base_row, \
    combine, ratio, strategy_columns
from .model import SEED, Chart, Column, Panel, Result, Series, Table
from .runner import Job

TLSF = "tlsf"
BSA = "segregated-first-fit"
REAL = ("python3-json", "gcc-cc1", "sqlite3-sql", "perl-words")
LESSON_TLSF = "faster than BSA; sometimes more space"
LESSON_BSA = "slower; first fit, sometimes less space"


def _lesson(text: str) -> dict:
    return {key: {"seed_says": text} for key in REAL + ("all",)}


class Coppa2010(Experiment):
    name = "coppa2010"
    title = "Coppa 2010: TLSF against a segregated first fit on traces of real programs"
    source = ("seed 004: Emilio Coppa (supervisor Camil Demetrescu), 'Adaptive allocators', "
              "Sapienza University of Rome, 2010; MallocLab on a MacBook 5.1, Gentoo i686")
    settings = (
        ListParam("traces", NAMES, REAL, "traces to replay: bundled real programs (any bundled "
                  "trace, file or workload spec works)", item_kind=NAMES),
        Param("word", INT, 8, "word size of the strategies (the bundled traces come from 64-bit "
              "programs)", choices=(4, 8)),
    )
    corpus = "traces"     # --traces FOLDER: the user's recorded programs instead of ours
    seed_allocators = (
        SeedAllocator("TLSF", "Masmano et al.'s two-level segregated fit", (TLSF,), _lesson(LESSON_TLSF)),
        SeedAllocator("BSA", "Coppa's 'Bad segregated allocator': segregated lists, first fit "
                      "(we run the policy, not BSA)", (BSA,), _lesson(LESSON_BSA)),
    )

    def _traces(self, run: Run) -> list[str]:
        names = list(dict.fromkeys(run.settings["traces"]))
        bundled = {ex.name for ex in examples()}
        for name in names:
            if name not in bundled and "/" not in name and ":" not in name and not name.endswith(".gz") \
                    and not name.endswith(".rep"):
                from ..traces.workloads import WORKLOADS
                if name not in WORKLOADS:
                    raise ExperimentError(f"experiment coppa2010: {name!r} is no bundled trace "
                                          f"(bundled: {', '.join(sorted(bundled))})")
        return names

    def jobs(self, run: Run) -> list[Job]:
        word = run.settings["word"]
        return [Job.of((trace, name), trace, name, {"word": word}, label=f"{name}, {trace}")
                for trace in self._traces(run) for name in run.strategies]

    def result(self, run: Run, rows: dict) -> Result:
        traces = self._traces(run)
        columns = strategy_columns() + [
            Column("seed_says", "seed says", "{}", SEED),
            Column("util", "util", "{:.3f}"), Column("util_x", "util x BSA", "{:.3f}"),
            Column("max_heap", "heap bytes", "{:,.0f}"),
            Column("search_mean", "search mean", "{:.2f}"), Column("work_per_op", "work/op", "{:.2f}"),
            Column("work_x", "work x BSA", "{:.2f}"), Column("kops", "Kops/s", "{:,.0f}"),
            Column("speed_x", "speed x BSA", "{:.2f}"),
        ]
        tables = []
        totals: dict[str, dict] = {}
        for trace in traces:
            table = Table(trace, f"{trace}: MallocLab's utilisation and throughput, ours", columns)
            bsa = rows.get((trace, BSA), {})
            for entry in run.lineup:
                row = base_row(entry)
                if entry.seed:
                    row["seed_says"] = entry.seed.figures.get("all", {}).get("seed_says")
                if entry.available:
                    got = combine([rows[(trace, entry.strategy)]])
                    if "error" in got:
                        row["error"] = got["error"]
                    else:
                        _fill(row, got["utilisation"], got["max_heap"], got["search_mean"],
                              got["work_per_op"], got["ops"], got["wall_s"], bsa)
                        t = totals.setdefault(entry.strategy, {"util": [], "ops": 0, "wall": 0.0,
                                                               "work": 0.0, "search": []})
                        t["util"].append(got["utilisation"])
                        t["ops"] += got["ops"]
                        t["wall"] += got["wall_s"]
                        t["work"] += got["work_per_op"] * got["ops"]
                        t["search"].append(got["search_mean"])
                table.rows.append(row)
            tables.append(table)
        summary = Table("all", f"All {len(traces)} traces, as MallocLab sums them up: mean "
                        "utilisation, total operations over total seconds", columns)
        base = totals.get(BSA)
        base_row_values = _summary(base) if base else {}
        for entry in run.lineup:
            row = base_row(entry)
            if entry.seed:
                row["seed_says"] = entry.seed.figures.get("all", {}).get("seed_says")
            if entry.available and entry.strategy in totals and len(totals[entry.strategy]["util"]) == len(traces):
                s = _summary(totals[entry.strategy])
                _fill(row, s["utilisation"], None, s["search_mean"], s["work_per_op"], s["ops"],
                      s["wall_s"], base_row_values)
            elif entry.available:
                row["error"] = next((r["error"] for r in (rows[(t, entry.strategy)] for t in traces)
                                     if "error" in r), "no result")
            summary.rows.append(row)
        summary.notes.append("The seed gives no figures in its text (its charts are lost): its "
                             "column is its lessons. 'x BSA' divides by segregated-first-fit's "
                             "figure; speed = throughput.")
        tables.append(summary)
        told = ("the files are yours; traces/bundled/README.md says how the bundled ones were "
                "recorded" if any(names_a_file(t) for t in traces)
                else "traces/bundled/README.md says how each was recorded")
        setup = [f"traces: {', '.join(traces)} ({told})",
                 f"strategies: {run.settings['word']}-byte words"]
        result = Result(self.name, self.title, self.source, setup, tables,
                        params={"settings": run.settings})
        result.findings = findings(result, traces)
        result.chart = chart(result, traces)
        return result


def _summary(t: dict) -> dict:
    return {"utilisation": sum(t["util"]) / len(t["util"]), "ops": t["ops"], "wall_s": t["wall"],
            "work_per_op": t["work"] / t["ops"] if t["ops"] else 0.0,
            "search_mean": sum(t["search"]) / len(t["search"])}


def _fill(row, util, heap, search, work, ops, wall, bsa: dict) -> None:
    row["util"] = util
    row["util_x"] = ratio(util, bsa.get("utilisation"))
    row["max_heap"] = heap
    row["search_mean"] = search
    row["work_per_op"] = work
    row["work_x"] = ratio(work, bsa.get("work_per_op"))
    row["kops"] = ops / wall / 1000 if wall else None
    bsa_kops = bsa["ops"] / bsa["wall_s"] / 1000 if bsa.get("wall_s") else None
    row["speed_x"] = ratio(row["kops"], bsa_kops)


def findings(result: Result, traces: list[str]) -> list[str]:
    pairs = [(t, result.table(t)) for t in traces]
    pairs = [(t, table) for t, table in pairs
             if table.value(TLSF, "util") is not None and table.value(BSA, "util") is not None]
    if not pairs:
        return ["TLSF against segregated-first-fit cannot be compared: both must run"]
    n = len(pairs)
    less_work = [t for t, table in pairs if table.value(TLSF, "work_per_op") < table.value(BSA, "work_per_op")]
    faster = [t for t, table in pairs if (table.value(TLSF, "kops") or 0) > (table.value(BSA, "kops") or 0)]
    more_space = [t for t, table in pairs if table.value(TLSF, "util") < table.value(BSA, "util")]
    out = [f"TLSF does less work per operation than segregated-first-fit on {len(less_work)} of {n} "
           f"traces ({', '.join(less_work) or 'none'}) and has the higher throughput here on "
           f"{len(faster)} of {n} (seed: 'TLSF is faster than BSA')",
           f"TLSF needs more space (lower utilisation) on {len(more_space)} of {n} traces "
           f"({', '.join(more_space) or 'none'}) (seed: 'sometimes this boost is paid in terms of space')"]
    return out


def chart(result: Result, traces: list[str]) -> Chart:
    tables = [result.table(t) for t in traces]
    pair = [n for n in (TLSF, BSA) if any(t.value(n, "util") is not None for t in tables)]
    util = [Series(n, [t.value(n, "util") for t in tables]) for n in pair]
    work = [Series(n, [t.value(n, "work_per_op") for t in tables]) for n in pair]
    return Chart("Coppa 2010: TLSF against a segregated first fit, real programs", [
        Panel("utilisation (peak live / heap)", traces, util, "utilisation"),
        Panel("work units per operation", traces, work, "work / op"),
    ])
