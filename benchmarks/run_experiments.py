"""Run every seed's experiment at its full size and write what
docs/experiments.md shows: each experiment's tables as Markdown
(docs/experiments/NAME.md) and its chart (docs/experiments/NAME.png).

    QT_QPA_PLATFORM=offscreen python benchmarks/run_experiments.py [NAME ...]

Each is ``heapscope experiment NAME --format markdown --plot NAME.png`` with
the experiment's defaults; the wall-time columns depend on the machine and
its load, the rest is deterministic.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from heapscope.experiments import EXPERIMENTS, run_experiment  # noqa: E402
from heapscope.experiments.output import format_markdown  # noqa: E402
from heapscope.gui.experiment_chart import save_chart  # noqa: E402

OUT = ROOT / "docs" / "experiments"


def main(names: list[str]) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for name in names or list(EXPERIMENTS):
        t0 = time.perf_counter()
        result = run_experiment(name)
        seconds = time.perf_counter() - t0
        save_chart(result.chart, str(OUT / f"{name}.png"))
        text = "\n".join([f"<!-- heapscope experiment {name} --format markdown; "
                          f"{seconds:.0f} s on this machine -->", "",
                          *[f"{line}  " for line in [result.source, *result.setup]], "",
                          format_markdown(result, heading="####")])
        (OUT / f"{name}.md").write_text(text)
        print(f"{name}: {seconds:.0f} s -> {OUT / name}.md, .png", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
