"""Screenshots of every structure view, to prove a refactor draws the same.

Issue 20 asks that the structure views' code be split and shared without
changing what a user sees: "screenshots of every view before and after are
the same".  This renders, for every built-in strategy (so every structure
kind, and every view), a fixed list of shots at 1280 x 720 offscreen and
writes them as PNGs; run it on the code before a change and after it, and
compare the two folders pixel for pixel::

    QT_QPA_PLATFORM=offscreen .venv/bin/python tools/view_shots.py /tmp/shots-before
    ... change the code ...
    QT_QPA_PLATFORM=offscreen .venv/bin/python tools/view_shots.py /tmp/shots-after
    .venv/bin/python tools/view_shots.py --compare /tmp/shots-before /tmp/shots-after

All of them take about three minutes on a busy 2-core machine (about 650
files); ``--only tlsf,buddy`` limits the strategies; ``--compare`` prints every file
that differs (with how many pixels and where) or is missing on one side, and
exits 1 if any does, 0 if all are the same to the pixel.

The shots, per strategy, in this order on one view (the window reuses its
view from step to step, and views keep items between steps, so reuse is part
of what is drawn):

* the bundled default trace at an early, a middle and a late step
  (:data:`DEFAULT_STEPS`): the whole step (``whole``); the structure after
  the step's middle event, micro-step style (``event``); a free block of the
  structure selected (``selected``); at the middle step also the halfway
  frame of a transition from the whole step to its middle event
  (``morph``), the drawing zoomed as in presenter mode (``zoom``, :data:`ZOOM`) and the card views'
  compact mode (``compact``);
* the bundled gcc-cc1 trace (63 678 operations) at a late step
  (:data:`BIG_STEPS`): ``whole``, ``event`` and ``selected``;
* two made-up heaps of :data:`SYNTHETIC_FREE` free blocks of random sizes
  (every other block of twice as many freed, so none coalesce, then a
  malloc and a free), at their last two steps: ``spread`` frees in address
  order, ``spine`` in increasing size (a deep splay tree: summarised levels,
  grey triangles, skipped-level bands); ``whole``, ``event``, ``selected``;
* nothing loaded (``none``).

File names are ``<strategy>-<trace>-<step>-<shot>.png``; beside each PNG,
``.drawn.txt`` holds what the view's :meth:`drawn` read back from its items
then (the tests' view of the drawing; not for the ``morph`` frame), compared
as text.  The views and the
timelines are deterministic, so the same code gives the same PNGs (run it
twice to see).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

#: the default trace (20 000 operations): early, middle and late steps
DEFAULT_STEPS = (120, 10_000, 19_500)
#: gcc-cc1 (63 678 operations): a late step
BIG_STEPS = (60_000,)
#: presenter mode's drawing scale on a 720-line screen, about
ZOOM = 1.6
#: free blocks of the made-up heaps
SYNTHETIC_FREE = 1500
SIZE = (1280, 720)


def _settle(app, view) -> None:
    """Let the view lay out for its size and its new contents."""
    for _ in range(3):
        app.processEvents()


def _save(app, view, folder: str, name: str, drawn: bool = True) -> None:
    _settle(app, view)
    view.grab().save(os.path.join(folder, name + ".png"))
    if not drawn:
        return
    with open(os.path.join(folder, name + ".drawn.txt"), "w", encoding="utf-8") as out:
        out.write(repr(view.drawn()) + "\n")


def _selectable(structure: dict):
    """A free block of the structure, the same one every run: the middle of
    its members in the kind's order."""
    from heapscope.allocators import structure as sp
    members = sp.members(structure)
    return members[len(members) // 2] if members else None


def synthetic_trace(ascending: bool, n_free: int = SYNTHETIC_FREE, seed: int = 7):
    """``2 n_free`` mallocs of 1..2000 bytes, every other one freed (in
    address order, or by increasing size with ``ascending``), then a malloc
    of 300 bytes and the free of a block still held."""
    import random

    from heapscope import traces
    rng = random.Random(seed)
    sizes = [rng.randint(1, 2000) for _ in range(2 * n_free)]
    ops = [("a", i, n) for i, n in enumerate(sizes)]
    victims = list(range(0, 2 * n_free, 2))
    if ascending:
        victims.sort(key=lambda i: sizes[i])
    ops += [("f", i) for i in victims]
    ops += [("a", 2 * n_free, 300), ("f", 1)]
    return traces.Trace.from_ops(ops)


def shoot_strategy(app, name: str, folder: str, traces_steps) -> int:
    """Every shot of one strategy; returns how many were written."""
    from heapscope.allocators.explain import explain_step
    from heapscope.allocators.replay import Timeline
    from heapscope.allocators.step_states import StepStates
    from heapscope.gui.structure_views import view_for

    view = None
    written = 0
    for trace_name, trace, steps in traces_steps:
        tl = Timeline(trace, name).build()
        for step in steps:
            strategy = tl.seek(step)
            record = tl.last_record
            after = strategy.structure()
            explained = explain_step(strategy, record)
            before = tl.before().structure
            states = StepStates(before, after, record.events or ())
            if view is None:
                view = view_for(after["kind"])()
                view.resize(*SIZE)
                view.show()
                _settle(app, view)
            stem = f"{name}-{trace_name}-{step}"
            view.set_states(lambda i, states=states, after=after: after if i is None else states.at(i))
            view.show_step(after, explained, record)
            _save(app, view, folder, f"{stem}-whole")
            written += 1
            if len(explained) > 1:
                view.set_current_event(len(explained) // 2)
                _save(app, view, folder, f"{stem}-event")
                view.set_current_event(None)
                written += 1
            sel = _selectable(after)
            if sel is not None:
                view.set_selection(sel)
                _save(app, view, folder, f"{stem}-selected")
                view.set_selection(None)
                written += 1
            if trace_name == "default" and step == DEFAULT_STEPS[1]:
                if explained:
                    view.manual_transitions = True
                    view.set_current_event(len(explained) // 2, 400)
                    if view.transition is not None:
                        view.transition.seek(200)
                    # (drawn() reads a finished drawing: mid-way, the badges
                    # fading out belong to no card's row)
                    _save(app, view, folder, f"{stem}-morph", drawn=False)
                    view.finish_transition()
                    view.manual_transitions = False
                    view.set_current_event(None)
                    written += 1
                view.set_zoom_factor(ZOOM)
                view.show_step(after, explained, record)
                _save(app, view, folder, f"{stem}-zoom")
                view.set_zoom_factor(1.0)
                written += 1
                if hasattr(view, "set_compact"):
                    view.set_compact(True)
                    view.show_step(after, explained, record)
                    _save(app, view, folder, f"{stem}-compact")
                    view.set_compact(False)
                    written += 1
                view.show_step(after, explained, record)
    if view is not None:
        view.set_states(None)
        view.show_step(None, [], None)
        _save(app, view, folder, f"{name}-none")
        written += 1
        view.close()
        view.deleteLater()
    return written


def shoot(folder: str, only: list[str] | None) -> None:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication

    from heapscope import traces
    from heapscope.allocators.registry import strategy_names
    from heapscope.gui.structure_views import load_all

    app = QApplication.instance() or QApplication(sys.argv[:1])
    load_all()
    os.makedirs(folder, exist_ok=True)
    default = traces.load_trace(str(traces.default_trace_path()))
    big_path = os.path.join(os.path.dirname(traces.default_trace_path()), "gcc-cc1.rep.gz")
    big = traces.load_trace(big_path)
    plan = [("default", default, DEFAULT_STEPS), ("gcc-cc1", big, BIG_STEPS)]
    for name, ascending in (("spread", False), ("spine", True)):
        t = synthetic_trace(ascending)
        plan.append((name, t, (len(t) - 1, len(t))))
    for name in strategy_names():
        if only and name not in only:
            continue
        t0 = time.perf_counter()
        n = shoot_strategy(app, name, folder, plan)
        print(f"{name}: {n} shots in {time.perf_counter() - t0:.1f} s", flush=True)


def compare(a: str, b: str) -> int:
    """Print what differs between two folders of shots; 1 if anything does."""
    import numpy as np
    from PIL import Image

    names = sorted(set(os.listdir(a)) | set(os.listdir(b)))
    bad = 0
    for n in names:
        pa, pb = os.path.join(a, n), os.path.join(b, n)
        if not (os.path.exists(pa) and os.path.exists(pb)):
            print(f"{n}: only in {a if os.path.exists(pa) else b}")
            bad += 1
            continue
        if not n.endswith(".png"):
            if open(pa, encoding="utf-8").read() != open(pb, encoding="utf-8").read():
                print(f"{n}: differs")
                bad += 1
            continue
        ia = np.asarray(Image.open(pa).convert("RGBA"))
        ib = np.asarray(Image.open(pb).convert("RGBA"))
        if ia.shape != ib.shape:
            print(f"{n}: sizes differ {ia.shape} / {ib.shape}")
            bad += 1
            continue
        diff = np.any(ia != ib, axis=2)
        if diff.any():
            ys, xs = np.nonzero(diff)
            print(f"{n}: {int(diff.sum())} pixels differ, in x {xs.min()}-{xs.max()}, y {ys.min()}-{ys.max()}")
            bad += 1
    print(f"{len(names)} shots compared, {bad} differ" if bad else f"{len(names)} shots, all the same")
    return 1 if bad else 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("folder", nargs="?", help="where to write the PNGs")
    p.add_argument("--only", help="comma-separated strategy names")
    p.add_argument("--compare", nargs=2, metavar=("BEFORE", "AFTER"), help="compare two folders of shots")
    args = p.parse_args(argv)
    if args.compare:
        missing = [d for d in args.compare if not os.path.isdir(d)]
        if missing:
            p.error(f"no folder of shots at {', '.join(missing)}")
        return compare(*args.compare)
    if not args.folder:
        p.error("give a folder to write the shots to, or --compare BEFORE AFTER")
    only = args.only.split(",") if args.only else None
    if only:
        from heapscope.allocators.registry import strategy_names
        unknown = sorted(set(only) - set(strategy_names()))
        if unknown:
            p.error(f"no strategy {', '.join(unknown)} (the built-ins: {', '.join(strategy_names())})")
    shoot(args.folder, only)
    return 0


if __name__ == "__main__":
    sys.exit(main())
