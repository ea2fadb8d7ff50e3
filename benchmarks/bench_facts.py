"""Benchmark: predict mode's ``make_facts`` (allocators/predict.py), the facts
of one malloc step that ``judge`` and ``reveal`` read, on every malloc of the
trace tests/test_predict.py replays (vo1989, 300 steps, seed 5), for every
strategy, from sbrk and in a 1 MiB pool: CPU time of 5 rounds in one process,
and a digest of every ``reveal`` verdict (the same before and after a change).

    python benchmarks/bench_facts.py
"""

from __future__ import annotations

import hashlib
import time

from heapscope.allocators import strategy_names
from heapscope.allocators.predict import make_facts, reveal
from heapscope.allocators.replay import Timeline
from heapscope.traces import make_workload
from heapscope.traces.trace import ALLOC


def malloc_steps(tl):
    for t in range(1, tl.n + 1):
        kind, _, size = tl.op(t)
        if kind != ALLOC:
            continue
        before = tl.state_at(t - 1)
        tl.seek(t)
        hb = int(tl.series.heap[t - 2]) if t > 1 else 0
        yield t, before, tl.last_record, size, hb, int(tl.series.heap[t - 1])


def main() -> None:
    trace = make_workload("vo1989", steps=300, seed=5)
    cases = []
    for name in strategy_names():
        for params in ({}, {"pool_size": 1 << 20}):
            tl = Timeline(trace, name, params).build()
            cases += [(name, *c) for c in malloc_steps(tl)]
    t0 = time.process_time()
    for _ in range(5):
        for name, t, before, rec, size, hb, ha in cases:
            make_facts(t, size, before, rec, name, hb, ha)
    cpu = time.process_time() - t0
    verdicts = "".join(repr(reveal(t, size, before, rec, name, hb, ha))
                       for name, t, before, rec, size, hb, ha in cases)
    print(f"{len(cases)} malloc steps, 5 rounds: {cpu:.3f} CPU-s; "
          f"verdicts {hashlib.sha1(verdicts.encode()).hexdigest()[:12]}")


if __name__ == "__main__":
    main()
