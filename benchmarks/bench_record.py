"""Benchmark: what recording costs, and how fast recordings and ltrace output convert.

1. Overhead: a C program doing N malloc/free pairs (compiled here), run bare
   and under the recorder (``run_recorded``); the ratio of wall times, best of
   R runs.  The recorder takes a lock and makes one write() per call, so a
   program that does nothing but allocate is slowed the most: real programs
   see less.
2. Conversion: ``read_recordings`` on that recording, in records per second.
3. ltrace import: ``read_ltrace`` on N synthetic ``-f`` lines, in lines per second.

No budget in DESIGN.md covers these; they are here so a change that makes
recording much slower shows.

    python benchmarks/bench_record.py [--pairs N] [--repeat R]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from heapscope.traces.ltrace import read_ltrace  # noqa: E402
from heapscope.traces.preload import find_compiler, preload_library  # noqa: E402
from heapscope.traces.record import read_recordings, run_recorded  # noqa: E402

PROGRAM = r"""
#include <stdlib.h>
int main(int argc, char **argv) {
    long n = atol(argv[1]);
    void *keep[64] = {0};
    for (long i = 0; i < n; i++) {
        int j = (int)(i * 2654435761u % 64);
        free(keep[j]);
        keep[j] = malloc(16 + (size_t)(i % 200));
    }
    for (int j = 0; j < 64; j++) free(keep[j]);
    return 0;
}
"""


def best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    cc = find_compiler()
    if cc is None:
        sys.exit("no C compiler: nothing to measure")
    library = preload_library()
    with tempfile.TemporaryDirectory() as tmp:
        src, exe = Path(tmp, "loop.c"), Path(tmp, "loop")
        src.write_text(PROGRAM)
        subprocess.run(cc + ["-O2", "-o", str(exe), str(src)], check=True)
        cmd = [str(exe), str(args.pairs)]
        bare = best(lambda: subprocess.run(cmd, check=True), args.repeat)

        raw = Path(tmp, "raw")

        def recorded():
            if raw.exists():
                for f in raw.iterdir():
                    f.unlink()
            else:
                raw.mkdir()
            run_recorded(cmd, str(raw), library)

        under = best(recorded, args.repeat)
        records = sum(f.stat().st_size for f in raw.iterdir()) // 32
        convert = best(lambda: read_recordings(raw, None), args.repeat)

        lines = []
        for i in range(args.pairs):
            pid = 100 + i % 2
            lines.append(f"[pid {pid}] prog->malloc({16 + i % 200}) = {0x1000 + 16 * i:#x}\n")
            lines.append(f"[pid {pid}] prog->free({0x1000 + 16 * i:#x}) = <void>\n")
        text = Path(tmp, "calls.txt")
        text.write_text("".join(lines))
        imported = best(lambda: read_ltrace(text), args.repeat)

    print(f"program doing {args.pairs:,} malloc/free pairs ({2 * args.pairs:,} calls):")
    print(f"  bare {bare * 1e3:.1f} ms, recorded {under * 1e3:.1f} ms: "
          f"{under / bare:.1f}x, {1e9 * (under - bare) / (2 * args.pairs):.0f} ns per call")
    print(f"  conversion: {records:,} records in {convert:.2f} s = {records / convert:,.0f} records/s")
    print(f"ltrace import: {2 * args.pairs:,} lines in {imported:.2f} s = "
          f"{2 * args.pairs / imported:,.0f} lines/s")


if __name__ == "__main__":
    main()
