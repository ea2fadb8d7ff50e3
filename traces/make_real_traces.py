"""Record the bundled real-program traces: ``python -m heapscope.traces.make_real_traces``.

Each example runs a free program that Debian ships (an interpreter, a
compiler, a database) on a small input kept here, under ``heapscope record``,
and keeps one program's trace as ``traces/bundled/NAME.rep.gz``.  The script
also writes ``manifest.json`` (read by :func:`heapscope.traces.bundled.examples`) and
``README.md``: the exact command, the environment it set, the program's
version, the machine and the date of each, so that anyone can record the same
trace again.  The traces are our own recordings: no third-party trace file
is copied.

A program's trace differs a little from one run to the next (environment
size, locale, hash seeds); the environment below pins what it can.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shlex
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from .bundled import MANIFEST_NAME, bundled_path
from .preload import preload_library
from .record import read_recordings, run_recorded
from .rep import write_rep

#: a bundled file must stay well under this
MAX_FILE_BYTES = 600 * 1024

PYTHON_SCRIPT = """\
import collections, json, re
text = " ".join(f"word{i % 97} item{i % 13} value{i}" for i in range(3000))
counts = collections.Counter(re.findall(r"\\w+", text))
doc = {k: [v, k.upper(), list(range(v % 7))] for k, v in counts.items()}
s = json.dumps(doc, sort_keys=True)
print(len(s), len(json.loads(s)))
"""

C_PROGRAM = """\
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct node { char *key; int count; struct node *next; };
static struct node *table[1024];

static unsigned hash(const char *s)
{
    unsigned h = 5381;
    while (*s)
        h = h * 33 + (unsigned char)*s++;
    return h % 1024;
}

static void add(const char *key)
{
    unsigned h = hash(key);
    for (struct node *n = table[h]; n; n = n->next)
        if (strcmp(n->key, key) == 0) {
            n->count++;
            return;
        }
    struct node *n = malloc(sizeof *n);
    n->key = strdup(key);
    n->count = 1;
    n->next = table[h];
    table[h] = n;
}

static int by_count(const void *a, const void *b)
{
    const struct node *x = *(struct node *const *)a, *y = *(struct node *const *)b;
    return y->count != x->count ? y->count - x->count : strcmp(x->key, y->key);
}

int main(void)
{
    char word[256];
    size_t n = 0, cap = 16;
    while (scanf("%255s", word) == 1)
        add(word);
    struct node **all = malloc(cap * sizeof *all);
    for (int i = 0; i < 1024; i++)
        for (struct node *p = table[i]; p; p = p->next) {
            if (n == cap)
                all = realloc(all, (cap *= 2) * sizeof *all);
            all[n++] = p;
        }
    qsort(all, n, sizeof *all, by_count);
    for (size_t i = 0; i < n && i < 10; i++)
        printf("%7d %s\\n", all[i]->count, all[i]->key);
    return 0;
}
"""

SQL_WORKLOAD = """\
CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT, score REAL);
WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 3000)
INSERT INTO t SELECT x, 'name' || (x * 7919 % 1000), (x * 31 % 977) / 7.0 FROM c;
CREATE INDEX t_name ON t(name);
SELECT name, count(*), avg(score) FROM t GROUP BY name ORDER BY 3 DESC LIMIT 3;
UPDATE t SET score = score * 2 WHERE id % 3 = 0;
DELETE FROM t WHERE id % 5 = 0;
SELECT count(*), sum(score) FROM t;
"""

#: the same workload on 40 000 rows: a real trace of more than 150 000
#: operations (issue 24's views are checked at its steps 89 000 and 150 000)
SQL_WORKLOAD_40K = SQL_WORKLOAD.replace("x < 3000", "x < 40000")

PERL_SCRIPT = """\
my %count;
for my $i (1 .. 8000) {
    $count{"w" . ($i * 7919 % 613)}++;
    push @{ $count{list} }, $i if $i % 50 == 0;
}
my @top = (sort { $count{$b} <=> $count{$a} || $a cmp $b } grep { $_ ne 'list' } keys %count)[0 .. 4];
my $text = join ",", map { "$_=$count{$_}" } @top;
$text =~ s/w(\\d+)/W$1/g;
print "$text\\n";
"""


@dataclass
class Recipe:
    name: str
    title: str
    command: list[str]
    version_command: list[str]
    inputs: dict[str, str]
    #: the program whose trace is kept (None: the main one)
    program: str | None = None
    env: dict[str, str] = field(default_factory=dict)
    stdin: str | None = None
    notes: str = ""


RECIPES = [
    Recipe("python3-json", "Python 3 running a small JSON script",
           ["python3", "work.py"], ["python3", "--version"], {"work.py": PYTHON_SCRIPT},
           env={"PYTHONHASHSEED": "0", "PYTHONDONTWRITEBYTECODE": "1"},
           notes="Python's own pymalloc serves objects of up to 512 bytes from its "
                 "arenas; this is what reaches malloc: larger objects and buffers, the "
                 "interpreter's tables, pymalloc's 256 KiB arenas. (PYTHONMALLOC=malloc "
                 "would send every object to malloc: about 100,000 ops for this script.)"),
    Recipe("gcc-cc1", "GCC's compiler proper (cc1) compiling a small C file",
           ["gcc", "-O2", "-c", "words.c", "-o", "words.o"], ["gcc", "--version"],
           {"words.c": C_PROGRAM}, program="cc1",
           notes="gcc runs cc1 and then as; the trace kept is cc1's."),
    Recipe("sqlite3-sql", "SQLite's shell running an insert/index/update workload",
           ["sqlite3", ":memory:"], ["sqlite3", "--version"], {"work.sql": SQL_WORKLOAD},
           stdin="work.sql", notes="The SQL is read from standard input (< work.sql)."),
    Recipe("perl-words", "Perl counting words in a hash",
           ["perl", "work.pl"], ["perl", "-e", "print qq($^V\\n)"], {"work.pl": PERL_SCRIPT},
           env={"PERL_HASH_SEED": "0", "PERL_PERTURB_KEYS": "0"}),
    Recipe("sqlite3-sql-40k", "SQLite's shell running the same workload on 40 000 rows",
           ["sqlite3", ":memory:"], ["sqlite3", "--version"], {"work.sql": SQL_WORKLOAD_40K},
           stdin="work.sql",
           notes="sqlite3-sql's work.sql with 40000 rows instead of 3000: a real trace "
                 "long enough to look at step 150 000."),
]

#: what every recipe runs with, so that the traces repeat as far as they can
BASE_ENV = {"PATH": "/usr/bin:/bin", "LC_ALL": "C", "LANG": "C", "HOME": "/nonexistent", "TERM": "dumb"}


def _version(cmd: list[str]) -> str:
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=30, env=BASE_ENV)
    except OSError:
        return "unknown"
    return (out.stdout.strip() or out.stderr.strip()).splitlines()[0] if (out.stdout or out.stderr) else "unknown"


def _machine() -> str:
    libc = " ".join(platform.libc_ver())
    distro = ""
    try:
        distro = "Debian " + Path("/etc/debian_version").read_text().strip()
    except OSError:
        pass
    return ", ".join(filter(None, [platform.machine(), distro, libc]))


def record_recipe(recipe: Recipe, library, out_dir: Path, max_bytes: int | None = MAX_FILE_BYTES) -> dict:
    """Run one recipe under the recorder; write NAME.rep.gz; its manifest
    entry.  ``max_bytes``: the most the file may weigh (None: no limit, for a
    trace that is not bundled, such as the benchmark's)."""
    with tempfile.TemporaryDirectory(prefix="heapscope-example-") as work:
        for name, text in recipe.inputs.items():
            Path(work, name).write_text(text)
        raw = Path(work, "raw")
        raw.mkdir()
        env = {**BASE_ENV, **recipe.env}
        with open(Path(work, recipe.stdin) if recipe.stdin else os.devnull) as stdin:
            run = run_recorded(recipe.command, str(raw), library, env=env, cwd=work,
                               stdin=stdin)
        if run.returncode != 0:
            raise SystemExit(f"{recipe.name}: {shlex.join(recipe.command)} exited with "
                             f"{run.returncode}")
        rec = read_recordings(raw, run.pid)
    if recipe.program:
        chosen = [p for p in rec.programs if p.program == recipe.program]
    else:
        chosen = [rec.main] if rec.main else []
    if len(chosen) != 1:
        raise SystemExit(f"{recipe.name}: expected one {recipe.program or 'main'} program, "
                         f"found {len(chosen)}")
    prog = chosen[0]
    trace = prog.trace
    trace.name = recipe.name
    file = f"{recipe.name}.rep.gz"
    write_rep(trace, out_dir / file)
    size = (out_dir / file).stat().st_size
    if max_bytes is not None and size > max_bytes:
        raise SystemExit(f"{recipe.name}: {size} bytes, more than {max_bytes}: "
                         "make its input smaller")
    stats = trace.stats()
    env = " ".join(f"{k}={shlex.quote(v)}" for k, v in {**BASE_ENV, **recipe.env}.items())
    shown = shlex.join(recipe.command) + (f" < {recipe.stdin}" if recipe.stdin else "")
    return {
        "name": recipe.name, "file": file, "title": recipe.title,
        "command": f"heapscope record -o {recipe.name}.rep -- {shown}",
        "environment": env, "program": prog.program,
        "version": _version(recipe.version_command),
        "inputs": sorted(recipe.inputs), "notes": recipe.notes,
        "recorded": datetime.date.today().isoformat(), "machine": _machine(),
        "ops": len(trace), "ids": trace.num_ids, "max_live_bytes": stats["max_live_bytes"],
        "max_live_blocks": stats["max_live_blocks"], "bytes": size,
    }


def write_readme(entries: list[dict], out_dir: Path) -> None:
    lines = [
        "# Bundled traces",
        "",
        "`default.rep` is generated: Phong Vo's 1989 workload, `vo1989()` with its default",
        "seed, written by `python -m heapscope.traces.make_bundled`.",
        "",
        "The `*.rep.gz` files are real programs, recorded on this project's machine with",
        "`heapscope record` by `python -m heapscope.traces.make_real_traces`, which holds",
        "each input file and wrote this page and `manifest.json`. Open one with",
        "File > Open Example in the window, or by name: `heapscope compare gcc-cc1`.",
        "",
        "| name | program | ops | peak live | recorded |",
        "|---|---|---:|---:|---|",
    ]
    for e in entries:
        lines.append(f"| `{e['name']}` | {e['title']} | {e['ops']:,} | "
                     f"{e['max_live_bytes']:,} B in {e['max_live_blocks']:,} blocks | {e['recorded']} |")
    for e in entries:
        lines += ["", f"## {e['name']}", "", e["title"] + ".", "",
                  f"- command: `{e['command']}`",
                  f"- environment: exactly `{e['environment']}`",
                  f"- program kept: `{e['program']}`; version: {e['version']}",
                  f"- input files (in `traces/make_real_traces.py`): "
                  f"{', '.join('`' + i + '`' for i in e['inputs'])}",
                  f"- machine: {e['machine']}; date: {e['recorded']}",
                  f"- {e['ops']:,} operations on {e['ids']:,} ids; blocks live at exit "
                  f"freed at the end"]
        if e["notes"]:
            lines.append(f"- {e['notes']}")
    (out_dir / "README.md").write_text("\n".join(lines) + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="only these examples (default: all)")
    args = parser.parse_args(argv)
    out_dir = bundled_path(MANIFEST_NAME).parent
    library = preload_library()
    old = {}
    manifest_path = out_dir / MANIFEST_NAME
    if manifest_path.is_file():
        old = {e["name"]: e for e in json.loads(manifest_path.read_text())["traces"]}
    entries = []
    for recipe in RECIPES:
        if args.names and recipe.name not in args.names:
            if recipe.name in old:
                entries.append(old[recipe.name])
            continue
        entry = record_recipe(recipe, library, out_dir)
        print(f"{entry['file']}: {entry['ops']:,} ops, {entry['bytes']:,} bytes", file=sys.stderr)
        entries.append(entry)
    manifest_path.write_text(json.dumps({"traces": entries}, indent=2) + "\n")
    write_readme(entries, out_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
