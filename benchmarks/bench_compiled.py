"""A compiled core for TLSF, buddy and BSD buckets: measured against the pure modules in one run.

    python benchmarks/bench_compiled.py [--compiler cython|mypyc] [--runs N] [--reuse DIR]
                                        [--strategies ...] [--trace FILE ...] [--quick]

Issue 25's moonshot asks TLSF, buddy and the BSD buckets to replay at 1/100
of the C library's malloc, measured as ``heapscope compare`` runs them
(measures, no checkpoints), and allows a compiled core only if it is built
from the same readable source.  This benchmark answers whether compiling that
source buys enough:

1. copies ``allocators/`` into a scratch folder as a second package,
   ``hs_compiled`` (every module the same file), and compiles its
   ``tlsf.py``, ``tlsf_fast.py``, ``buddy.py`` and ``bsd_buckets.py``
   *unchanged* into extension modules, with Cython 3 (``cythonize -3 -i``:
   plain Python semantics, no annotations needed) or mypyc (``pip install
   "cython>=3"`` or ``mypy`` first: neither is a dependency of heapscope);
2. checks that the compiled modules are the ones imported, that a compiled
   strategy pickles (checkpoints pickle strategy state), and that every
   measure column of a build is equal between the two packages;
3. on each trace (Vo 1989's and DJGPP's workloads, every bundled real trace,
   any ``--trace``), interleaved in this one process: the C library's
   replay (bench_replay.py's replayer, the mean of 50 passes), then for each
   strategy the bare replay (``replay_bare``) and the build with measures
   and no checkpoints (``Timeline(..., checkpoints=False).build()``, what
   ``compare`` runs in each worker) of the pure and the compiled package,
   each the best of ``--runs`` runs in CPU seconds.

Both packages run their own ``replay.py`` (the same pure-Python source), so
the loop, the books in ``strategy.py`` and the measure rows' packing stay
interpreted on both sides: what the compiled side gains is what compiling
the policies' own modules gains.  The machine is shared: read the ratios,
each taken inside one run, not the absolute times across runs.
"""

from __future__ import annotations

import argparse
import importlib
import os
import pickle
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT))

from bench_replay import build_c_replayer, c_malloc_seconds  # noqa: E402
from heapscope.traces import load_trace, make_workload  # noqa: E402

#: the policies of the 1/100 budget, and the modules that hold them
STRATEGIES = ["tlsf", "buddy", "bsd-buckets"]
COMPILED_MODULES = ["tlsf.py", "tlsf_fast.py", "buddy.py", "bsd_buckets.py"]
PACKAGE = "hs_compiled"
BUNDLED = ROOT / "traces" / "bundled"


def compile_copy(workdir: Path, compiler: str, infer_types: bool = False) -> Path:
    """Copy allocators/ to ``workdir/hs_compiled`` and compile the policy
    modules there in place, unchanged; return the folder to put on sys.path."""
    pkg = workdir / PACKAGE
    if pkg.exists():
        shutil.rmtree(pkg)
    shutil.copytree(ROOT / "allocators", pkg, ignore=shutil.ignore_patterns("__pycache__"))
    bindir = Path(sys.executable).parent
    files = [f"{PACKAGE}/{m}" for m in COMPILED_MODULES]
    if compiler == "cython":
        # infer_types=True lets Cython give locals C types where it can
        # infer them: faster, but C integers overflow where Python's do not
        directives = ["-X", "infer_types=True"] if infer_types else []
        argv = [str(bindir / "cythonize"), "-3", "-i", *directives, *files]
    else:
        argv = [str(bindir / "mypyc"), *files]
    if not Path(argv[0]).exists():
        need = "'cython>=3'" if compiler == "cython" else "mypy"
        sys.exit(f"{argv[0]} not found: this benchmark needs {compiler}, which heapscope does not "
                 f"depend on (`.venv/bin/pip install {need}`)")
    t0 = time.perf_counter()
    done = subprocess.run(argv, cwd=workdir, capture_output=True, text=True)
    if done.returncode:
        sys.exit(f"{compiler} failed on the unchanged source:\n{done.stdout[-4000:]}{done.stderr[-4000:]}")
    print(f"# {compiler}: {', '.join(COMPILED_MODULES)} compiled unchanged in "
          f"{time.perf_counter() - t0:.0f} s (wall, on this loaded machine)")
    return workdir


def load_packages(workdir: Path):
    """(pure, compiled): the installed heapscope.allocators and the compiled copy."""
    sys.path.insert(0, str(workdir))
    pure = importlib.import_module("heapscope.allocators")
    compiled = importlib.import_module(PACKAGE)
    for mod in COMPILED_MODULES:
        name = mod.removesuffix(".py")
        path = importlib.import_module(f"{PACKAGE}.{name}").__file__
        if not path.endswith(".so"):
            sys.exit(f"{PACKAGE}.{name} was imported from {path}, not a compiled module")
    return pure, compiled


class Side:
    """One package's replay entry points."""

    def __init__(self, pkg) -> None:
        self.replay = importlib.import_module(f"{pkg.__name__}.replay")
        self.registry = importlib.import_module(f"{pkg.__name__}.registry")

    def bare(self, trace, name: str) -> float:
        s = self.registry.make_strategy(name)
        t0 = time.process_time()
        self.replay.replay_bare(trace, s)
        return time.process_time() - t0

    def measured(self, trace, name: str):
        tl = self.replay.Timeline(trace, name, checkpoints=False)
        t0 = time.process_time()
        tl.build()
        return time.process_time() - t0, tl


def columns(series) -> dict:
    return {k: v for k, v in vars(series).items() if isinstance(v, np.ndarray)}


def check_same(trace, name: str, pure: Side, compiled: Side) -> None:
    """Every measure column equal, the end state pickles and unpickles, and
    a checkpointed build of the compiled side seeks to the pure one's heap."""
    _, a = pure.measured(trace, name)
    _, b = compiled.measured(trace, name)
    ca, cb = columns(a.series), columns(b.series)
    bad = [k for k in ca if not np.array_equal(ca[k], cb.get(k))]
    if bad:
        sys.exit(f"{name}: compiled and pure measures differ in {bad}")
    s = compiled.registry.make_strategy(name)
    compiled.replay.replay_bare(trace, s)
    twin = pickle.loads(pickle.dumps(s))
    if type(twin) is not type(s) or vars(twin).keys() != vars(s).keys():
        sys.exit(f"{name}: a compiled strategy does not survive pickling")
    tl = compiled.replay.Timeline(trace, name).build()
    ref = pure.replay.Timeline(trace, name).build()
    t = len(trace) // 2
    if tl.seek(t).live != ref.seek(t).live:
        sys.exit(f"{name}: a compiled timeline seeks to another heap at step {t}")


def bench_trace(trace, label: str, exe, workdir: Path, runs: int, names: list[str],
                pure: Side, compiled: Side) -> list[tuple]:
    n = len(trace)
    c_s = c_malloc_seconds(trace, exe, workdir)
    c_text = f"C library {c_s / n * 1e9:.1f} ns an op" if c_s else "no C compiler: no ratio to C"
    print(f"\n## {label}: {n} ops; {c_text}")
    print(f"  {'strategy':12} {'bare us/op pure':>16} {'compiled':>9} {'gain':>6} {'to C':>13} |"
          f" {'measured us/op pure':>20} {'compiled':>9} {'gain':>6} {'to C':>13}")
    rows = []
    for name in names:
        check_same(trace, name, pure, compiled)
        best = {k: float("inf") for k in ("bp", "bc", "mp", "mc")}
        for _ in range(runs):       # interleaved: the load falls on both sides alike
            best["bp"] = min(best["bp"], pure.bare(trace, name))
            best["bc"] = min(best["bc"], compiled.bare(trace, name))
            best["mp"] = min(best["mp"], pure.measured(trace, name)[0])
            best["mc"] = min(best["mc"], compiled.measured(trace, name)[0])

        def to_c(sec: float) -> float:
            return c_s / sec if c_s else float("nan")
        us = {k: v / n * 1e6 for k, v in best.items()}
        print(f"  {name:12} {us['bp']:16.2f} {us['bc']:9.2f} {best['bp'] / best['bc']:5.2f}x "
              f"{to_c(best['bp']):6.4f}/{to_c(best['bc']):6.4f} | {us['mp']:20.2f} {us['mc']:9.2f} "
              f"{best['mp'] / best['mc']:5.2f}x {to_c(best['mp']):6.4f}/{to_c(best['mc']):6.4f}")
        rows.append((label, name, best["bp"] / best["bc"], best["mp"] / best["mc"],
                     to_c(best["mc"]), to_c(best["mp"])))
    return rows


def traces(extra: list[str], quick: bool) -> list[tuple[str, object]]:
    """bench_replay.py's set without the recording: the workloads and every bundled real trace."""
    scale = 5 if quick else 1
    out = [(f"vo1989, {20_000 // scale} steps", make_workload("vo1989", steps=20_000 // scale, seed=1989)),
           (f"djgpp1997, {100_000 // scale} actions, sizes to 4 KiB",
            make_workload("djgpp1997", actions=100_000 // scale, max_size=4096, seed=7))]
    for path in sorted(BUNDLED.glob("*.rep.gz")) + [Path(p) for p in extra]:
        out.append((path.name, load_trace(str(path))))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--compiler", choices=["cython", "mypyc"], default="cython")
    ap.add_argument("--infer-types", action="store_true",
                    help="Cython's infer_types=True directive (C-typed locals; not Python's integers)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--reuse", help="a folder where an earlier run compiled hs_compiled (skips compiling)")
    ap.add_argument("--keep", help="compile into this folder and keep it (for --reuse)")
    ap.add_argument("--strategies", nargs="*", default=STRATEGIES)
    ap.add_argument("--trace", action="append", default=[], help="another trace file to measure")
    ap.add_argument("--quick", action="store_true", help="workloads at 1/5 size, one run each")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(args.reuse or args.keep or tmp)
        if not args.reuse:
            workdir.mkdir(parents=True, exist_ok=True)
            compile_copy(workdir, args.compiler, args.infer_types)
        pure_pkg, compiled_pkg = load_packages(workdir)
        pure, compiled = Side(pure_pkg), Side(compiled_pkg)
        exe = build_c_replayer(Path(tmp))
        rows = []
        for label, trace in traces(args.trace, args.quick):
            rows += bench_trace(trace, label, exe, Path(tmp), 1 if args.quick else args.runs,
                                args.strategies, pure, compiled)
    gains_bare = [r[2] for r in rows]
    gains_measured = [r[3] for r in rows]
    print(f"\n# compiled / pure speed: bare {min(gains_bare):.2f}-{max(gains_bare):.2f}x, "
          f"with measures {min(gains_measured):.2f}-{max(gains_measured):.2f}x")
    miss = [f"{r[1]} on {r[0]} ({r[4]:.4f})" for r in rows if r[4] < 0.01]
    print(f"# with measures, compiled, below 1/100 of the C library: {', '.join(miss) or 'none'}")


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main()
