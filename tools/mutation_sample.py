"""Mutation score of one module from a seeded random sample of its mutants.

mutmut 2 (``pip install 'mutmut<3'``, not a project dependency) enumerates
the mutants of a file and applies one at a time in place.  Running every
mutant of the large modules through their tests takes hours on a busy
machine, so this script runs a sample: it copies the worktree to a scratch
folder (your files are never mutated), lists the mutants there in mutmut's
cache as ``mutmut run`` would before running them (the same ids; ``mutmut
run --runner true``, which also ran every mutant through a runner that tests
nothing, gives the same list far slower), shuffles their ids with a fixed seed, and for
the first N applies the mutant (``mutmut apply``), runs the test command and
puts the file back.  A larger N with the same seed extends the same sample.

The copy imports ``heapscope`` from itself, not from the editable install:
``heapscope/allocators``, ``traces`` and ``gui`` are symlinked into the copy's
package, and a ``sitecustomize`` on PYTHONPATH drops the editable finder
(also in the subprocesses the tests start).

    python tools/mutation_sample.py allocators/explain.py 40 \\
        tests/test_explain.py tests/test_inspect.py

``--skip 20`` leaves out the first 20 of the same seed's order (an earlier
sample) and takes the next N: a fresh sample of mutants nobody has looked at,
as long as the module's listing is the one the earlier sample had (the same
number of mutants in the same order; the script prints the count).

prints one line per mutant (id, killed/survived/timeout, seconds), then the
score, and writes the results to ``mutation-results/<module>.json`` in the
worktree (ignored by git); ``mutmut show ID`` in the scratch folder shows a
mutant.  docs/testing.md has the commands for every module and the scores.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SKIP = (".venv", ".git", "__pycache__", ".hypothesis", ".mutmut-cache", "mutation-results", "html")
SITECUSTOMIZE = ('import sys\n'
                 'sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in repr(f).lower()]\n')


#: what ``mutmut run`` does before it runs any mutant: the module's mutants
#: listed in the cache, numbered in the same order (so the same ids); the run
#: itself, with a runner that tests nothing, took 15 minutes for 800 mutants
REGISTER = ("import sys\n"
            "from mutmut import add_mutations_by_file\n"
            "from mutmut.cache import update_line_numbers\n"
            "update_line_numbers(sys.argv[1])\n"
            "add_mutations_by_file({}, sys.argv[1], [], None)\n")


def make_copy(scratch: Path) -> dict:
    """The worktree copied to ``scratch/src``; the environment that imports it."""
    src = scratch / "src"
    shutil.copytree(ROOT, src, ignore=shutil.ignore_patterns(*SKIP, "*.egg-info"))
    for folder in ("allocators", "traces", "gui"):
        (src / "heapscope" / folder).symlink_to(Path("..") / folder)
    site = scratch / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(SITECUSTOMIZE)
    return dict(os.environ, PYTHONPATH=f"{site}{os.pathsep}{src}", QT_QPA_PLATFORM="offscreen")


def mutant_ids(src: Path, module: str) -> list[int]:
    with sqlite3.connect(src / ".mutmut-cache") as db:
        return [r[0] for r in db.execute(
            "select m.id from Mutant m join Line l on m.line = l.id join SourceFile f "
            "on l.sourcefile = f.id where f.filename = ? order by m.id", (module,))]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("module", help="the file to mutate, e.g. allocators/explain.py")
    ap.add_argument("sample", help="how many mutants (or 'all')")
    ap.add_argument("tests", nargs="+", help="the test files (or node ids) that cover the module")
    ap.add_argument("--seed", type=int, default=19)
    ap.add_argument("--skip", type=int, default=0,
                    help="leave out the first SKIP of the shuffled order (an earlier sample's) and "
                         "take the next ones: a fresh sample of mutants nobody has looked at")
    ap.add_argument("--timeout", type=float, default=150, help="seconds before a mutant counts as killed")
    ap.add_argument("--keep", action="store_true", help="keep the scratch folder (to `mutmut show`)")
    args = ap.parse_args()
    mutmut = Path(sys.executable).with_name("mutmut")
    scratch = Path(tempfile.mkdtemp(prefix="heapscope-mutants-"))
    env = make_copy(scratch)
    src = scratch / "src"
    subprocess.run([sys.executable, "-c", REGISTER, args.module], cwd=src, env=env, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    ids = mutant_ids(src, args.module)
    total = len(ids)
    if args.sample != "all":
        random.Random(args.seed).shuffle(ids)
        # in shuffled order: any slice is a random sample, disjoint from the slices before it
        ids = ids[args.skip:args.skip + int(args.sample)]
    print(f"{args.module}: {total} mutants; seed {args.seed}, positions "
          f"{args.skip + 1}-{args.skip + len(ids)} of its order", flush=True)
    target = src / args.module
    pristine = target.read_bytes()
    cmd = [sys.executable, "-m", "pytest", "-n", "0", "-x", "-q", "-p", "no:cacheprovider", *args.tests]
    results: dict[str, str] = {}
    try:
        for i in ids:
            subprocess.run([mutmut, "apply", "--no-backup", str(i)], cwd=src, env=env, check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            start = time.time()
            try:
                rc = subprocess.run(cmd, cwd=src, env=env, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL, timeout=args.timeout).returncode
                results[str(i)] = "survived" if rc == 0 else "killed"
            except subprocess.TimeoutExpired:
                results[str(i)] = "timeout"
            target.write_bytes(pristine)
            print(i, results[str(i)], f"{time.time() - start:.1f}", flush=True)
    finally:
        target.write_bytes(pristine)
        out = ROOT / "mutation-results"
        out.mkdir(exist_ok=True)
        (out / (args.module.replace("/", ".") + ".json")).write_text(json.dumps(
            {"module": args.module, "mutants": total, "seed": args.seed, "skip": args.skip,
             "tests": args.tests,
             "results": results}, indent=1))
        if not args.keep:
            shutil.rmtree(scratch, ignore_errors=True)
        else:
            print("scratch folder:", src)
    killed = sum(s != "survived" for s in results.values())
    print(f"{args.module}: {killed} killed of {len(results)} sampled ({total} mutants);",
          "survivors:", " ".join(i for i, s in results.items() if s == "survived") or "none")
    return 0


if __name__ == "__main__":
    sys.exit(main())
