"""The GIFs of docs/steps/: one animated step of each strategy, drawn by
``heapscope render --animate`` from the bundled default trace (Vo's 1989
workload).  Run from the repository's root after a change to what the window
shows:

    python docs/steps/make_step_gifs.py [STRATEGY ...]

The step shown is chosen, not hand-picked: the first one after step 500 whose
events change the heap's shape (a split, a join, a buddy split or merge, a
rotation, a page or block cut into pieces, a bucket refilled, the heap grown) and that has between 5 and 30
events, so that a reader sees a search, a decision and its effect in a few
seconds.  The chosen steps are kept in docs/steps/steps.txt.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from heapscope.allocators import events as ev
from heapscope.allocators.registry import make_strategy, strategy_names
from heapscope.allocators.replay import Program, apply_op
from heapscope.traces import default_trace_path, load_trace

#: events that change the heap's shape: what a step GIF is for
SHAPING = (ev.Split, ev.Coalesce, ev.BuddySplit, ev.BuddyMerge, ev.Rotation,
           ev.BlockFragmented, ev.FragBlockEmptied, ev.ChunkPageMade, ev.ChunkPageDissolved, ev.BucketRefill, ev.Grow)
FIRST_STEP, MIN_EVENTS, MAX_EVENTS = 500, 5, 30
HERE = Path(__file__).resolve().parent


def chosen_step(name: str, trace) -> int:
    """The first step after FIRST_STEP that shapes the heap in a few events."""
    strategy, program = make_strategy(name), Program()
    kinds, ids, sizes = trace.kind.tolist(), trace.ids.tolist(), trace.sizes.tolist()
    for t in range(len(kinds)):
        strategy.record = t + 1 >= FIRST_STEP
        rec = apply_op(strategy, program, kinds[t], ids[t], sizes[t])
        events = rec.events or ()
        if strategy.record and MIN_EVENTS <= len(events) <= MAX_EVENTS \
                and any(isinstance(e, SHAPING) for e in events):
            return t + 1
    raise SystemExit(f"{name}: no step after {FIRST_STEP} shapes the heap in "
                     f"{MIN_EVENTS} to {MAX_EVENTS} events")


def main(names: list[str]) -> None:
    trace = load_trace(str(default_trace_path()))
    listed = HERE / "steps.txt"
    steps = dict(line.split("\t") for line in listed.read_text().splitlines()) if listed.exists() else {}
    for name in names or strategy_names():
        step = chosen_step(name, trace)
        out = HERE / f"{name}.gif"
        subprocess.run(["heapscope", "render", "-s", name, "--steps", f"{step}:{step}", "--animate",
                        "--fps", "6", "--size", "1280x720", "-o", str(out)], check=True)
        steps[name] = str(step)
        print(f"{out.name}: step {step}", flush=True)
        listed.write_text("".join(f"{n}\t{s}\n" for n, s in steps.items()))


if __name__ == "__main__":
    main(sys.argv[1:])
