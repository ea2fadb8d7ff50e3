"""The ``heapscope`` command.

    heapscope                      open the window on the bundled default trace
    heapscope open [TRACE] [--strategy NAME] ...   the same, on a trace file or workload
    heapscope compare TRACE ...    one row of measures per strategy, no window
    heapscope check TRACE          validate a trace and print its statistics
    heapscope inspect TRACE -s S --step N   one step: its events, blocks and structure

TRACE is a ``.rep`` / ``.rep.gz`` file or a workload name with optional
parameters (``vo1989``, ``vo1989:seed=3,steps=500``).  Bad input is reported as
``heapscope: error: FILE:LINE: message`` with exit status 2, never as a
traceback.  This module imports Qt only when a window is asked for, so
``compare`` and ``check`` run on machines without a display.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import math
import sys
import time

from .allocators.registry import STRATEGIES, make_strategy, strategy_names
from .allocators.replay import ReplayCancelled, Timeline, replay_bare
from .traces import TraceError, default_trace_path, load_trace

#: (key in the summary, column title, format) in table order
COLUMNS = [
    ("strategy", "strategy", "{}"),
    ("ops", "ops", "{:d}"),
    ("failed", "failed", "{:d}"),
    ("max_live", "max live (Salloc)", "{:d}"),
    ("max_heap", "max heap (Sarena)", "{:d}"),
    ("waste", "waste", "{:.3f}"),
    ("utilisation", "util", "{:.3f}"),
    ("jw1", "JW#1", "{:.3f}"),
    ("jw2", "JW#2", "{:.3f}"),
    ("jw3", "JW#3", "{:.3f}"),
    ("jw4", "JW#4", "{:.3f}"),
    ("ext_frag", "ext frag", "{:.3f}"),
    ("ext_frag_no_top", "ext frag -top", "{:.3f}"),
    ("search_mean", "search mean", "{:.2f}"),
    ("search_p99", "search p99", "{:.0f}"),
    ("search_max", "search max", "{:d}"),
    ("work_per_op", "work/op", "{:.2f}"),
    ("wall_s", "wall s", "{:.3f}"),
]


class CliError(Exception):
    """A user mistake reported in one line (exit status 2)."""


def byte_count(text: str) -> int:
    """'65536', '64K', '2M', '1G' (powers of 1024) -> bytes, for argparse."""
    t = text.strip().upper().removesuffix("B")
    mult = 1
    for suffix, m in (("K", 1 << 10), ("M", 1 << 20), ("G", 1 << 30)):
        if t.endswith(suffix):
            t, mult = t[:-1], m
            break
    try:
        value = int(t) * mult
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a size: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"size must be >= 0: {text!r}")
    return value


def _strategy_params(args) -> dict:
    params = {"word": args.word}
    if args.heap_limit is not None:
        params["heap_limit"] = args.heap_limit
    if args.pool_size is not None:
        params["pool_size"] = args.pool_size
    return params


def _policy_param(text: str) -> tuple[str, str, object]:
    """``STRATEGY.NAME=VALUE`` -> (strategy, name, value); VALUE an int, float,
    true/false, or left a string."""
    key, sep, raw = text.partition("=")
    strategy, dot, name = key.partition(".")
    if not (sep and dot and strategy and name):
        raise argparse.ArgumentTypeError(f"expected STRATEGY.NAME=VALUE, got {text!r}")
    value: object = raw
    low = raw.lower()
    if low in ("true", "false"):
        value = low == "true"
    else:
        for conv in (int, float):
            try:
                value = conv(raw)
                break
            except ValueError:
                pass
    return strategy, name, value


def _policy_params(args) -> dict[str, dict]:
    out: dict[str, dict] = {}
    for strategy, name, value in args.param or []:
        if strategy not in STRATEGIES:
            raise CliError(f"--param names unknown strategy {strategy!r}")
        out.setdefault(strategy, {})[name] = value
    return out


def compare_rows(trace, names: list[str], params: dict, progress=None,
                 policy: dict[str, dict] | None = None) -> list[dict]:
    """Replay ``trace`` through each strategy; one summary dict per strategy.
    ``policy`` adds a strategy's own parameters (e.g. bsd-buckets' pagesize)."""
    rows = []
    for name in names:
        own = dict(params, **(policy or {}).get(name, {}))
        try:
            make_strategy(name, **own)
        except TypeError as exc:
            raise CliError(f"{name}: {exc}") from None
        timeline = Timeline(trace, name, own)
        timeline.build(progress=(lambda d, n, name=name: progress(name, d, n)) if progress else None)
        row = {"strategy": name}
        row.update(timeline.summary())
        # wall time of the allocator alone, without the measures' bookkeeping
        row["wall_s"] = replay_bare(trace, make_strategy(name, **own))
        rows.append(row)
    return rows


def format_rows(rows: list[dict], fmt: str) -> str:
    keys = [k for k, _, _ in COLUMNS]
    if fmt == "json":
        return json.dumps([{k: _json_value(r.get(k)) for k in keys} for r in rows], indent=2)
    if fmt == "csv":
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(keys)
        for r in rows:
            writer.writerow([_json_value(r.get(k)) for k in keys])
        return out.getvalue().rstrip("\n")
    cells = [[title for _, title, _ in COLUMNS]]
    for r in rows:
        cells.append([_fmt(r.get(k), f) for k, _, f in COLUMNS])
    widths = [max(len(row[i]) for row in cells) for i in range(len(COLUMNS))]
    lines = []
    for j, row in enumerate(cells):
        lines.append("  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths))))
        if j == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _fmt(value, f: str) -> str:
    if value is None:
        return "-"
    if isinstance(value, float) and math.isnan(value):
        return "n/a"
    return f.format(value)


def _json_value(value):
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def _progress_printer(stream):
    last = [0.0]

    def show(name, done, total):
        now = time.monotonic()
        if now - last[0] > 0.5 or done == total:
            last[0] = now
            stream.write(f"\r{name}: {done}/{total} steps ({100 * done // max(total, 1)}%)   ")
            if done == total:
                stream.write("\r" + " " * 60 + "\r")
            stream.flush()
    return show


def cmd_compare(args) -> int:
    names = args.strategy or strategy_names()
    for n in names:
        if n not in STRATEGIES:
            raise CliError(f"unknown strategy {n!r}; known: {', '.join(strategy_names())}")
    trace = load_trace(args.trace)
    progress = _progress_printer(sys.stderr) if sys.stderr.isatty() else None
    rows = compare_rows(trace, names, _strategy_params(args), progress, _policy_params(args))
    print(f"# {trace.name}: {len(trace)} ops", file=sys.stderr if args.format != "table" else sys.stdout)
    print(format_rows(rows, args.format))
    return 0


def cmd_check(args) -> int:
    trace = load_trace(args.trace)
    stats = trace.stats()
    print(f"{args.trace}: OK, a valid trace")
    width = max(len(k) for k in stats)
    for key, value in stats.items():
        shown = f"{value:.1f}" if isinstance(value, float) else str(value)
        print(f"  {key.ljust(width)}  {shown}")
    return 0


def cmd_inspect(args) -> int:
    """One step of a replay without a window (heapscope/inspection.py)."""
    from .inspection import InspectError, format_text, inspect_step, to_json
    if args.strategy not in STRATEGIES:
        raise CliError(f"unknown strategy {args.strategy!r}; known: {', '.join(strategy_names())}")
    trace = load_trace(args.trace or str(default_trace_path()))
    params = dict(_strategy_params(args), **_policy_params(args).get(args.strategy, {}))
    try:
        report = inspect_step(trace, args.strategy, args.step, params)
    except InspectError as exc:
        raise CliError(str(exc)) from None
    print(to_json(report) if args.format == "json" else format_text(report, all_blocks=args.all))
    return 0


def cmd_open(argv: list[str]) -> int:
    """The window, with the window's own options (``heapscope open --help``)."""
    try:
        from .gui.app import main as gui_main
    except ImportError as exc:   # no Qt on this machine: say so and fall back to the table
        print(f"heapscope: the window needs PySide6 and pyqtgraph ({exc}); "
              "showing the comparison table instead", file=sys.stderr)
        trace = next((a for a in argv if not a.startswith("-")), None)
        return main(["compare"] + ([trace] if trace else []))
    return gui_main(argv)


def add_strategy_options(p: argparse.ArgumentParser, word_default: int | None = 8) -> None:
    """--word, --heap-limit and --pool-size: the parameters every strategy takes."""
    p.add_argument("--word", type=int, choices=(4, 8), default=word_default,
                   help="word size in bytes (default 8, LP64)")
    p.add_argument("--heap-limit", type=byte_count, metavar="BYTES",
                   help="cap the heap (K, M, G allowed): requests past it fail (ENOMEM) and replay goes on")
    p.add_argument("--pool-size", type=byte_count, metavar="BYTES",
                   help="one fixed pool of this size instead of a heap grown by sbrk")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="heapscope",
        description="Replay malloc/free traces through classic allocator strategies.")
    sub = parser.add_subparsers(dest="command")

    p = sub.add_parser("compare", help="one row of measures per strategy")
    p.add_argument("trace", nargs="?", default=None,
                   help="a .rep/.rep.gz file or a workload such as vo1989:seed=3 (default: the bundled trace)")
    p.add_argument("--strategy", "-s", action="append", metavar="NAME",
                   help=f"repeatable; default all of: {', '.join(strategy_names())}")
    p.add_argument("--format", "-f", choices=("table", "csv", "json"), default="table")
    p.add_argument("--param", "-P", action="append", type=_policy_param, metavar="STRATEGY.NAME=VALUE",
                   help="a strategy's own parameter, e.g. bsd-buckets.pagesize=1024 (repeatable)")
    add_strategy_options(p)
    p.set_defaults(func=cmd_compare)

    p = sub.add_parser("inspect", help="one step of a replay: its events, the blocks and the structure")
    p.add_argument("trace", nargs="?", default=None,
                   help="a .rep/.rep.gz file or a workload (default: the bundled trace)")
    p.add_argument("--strategy", "-s", required=True, metavar="NAME",
                   help=f"one of: {', '.join(strategy_names())}")
    p.add_argument("--step", "-n", type=int, required=True, metavar="N",
                   help="0 is the heap before any operation; N the heap after the N-th, whose events are shown")
    p.add_argument("--format", "-f", choices=("text", "json"), default="text")
    p.add_argument("--all", action="store_true",
                   help="text: list every block and every list member (JSON always has them all)")
    p.add_argument("--param", "-P", action="append", type=_policy_param, metavar="STRATEGY.NAME=VALUE",
                   help="a strategy's own parameter, e.g. bsd-buckets.pagesize=1024 (repeatable)")
    add_strategy_options(p)
    p.set_defaults(func=cmd_inspect)

    p = sub.add_parser("check", help="validate a trace and print its statistics")
    p.add_argument("trace")
    p.set_defaults(func=cmd_check)

    sub.add_parser("open", help="open the window (the default; heapscope open --help for its options)",
                   add_help=False)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv or argv[0] == "open":
        return cmd_open(argv[1:])
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "trace", None) is None and args.command == "compare":
        args.trace = str(default_trace_path())
    try:
        return args.func(args)
    except (TraceError, CliError) as exc:
        print(f"heapscope: error: {exc}", file=sys.stderr)
        return 2
    except ReplayCancelled as exc:
        print(f"heapscope: {exc}", file=sys.stderr)
        return 130
    except KeyboardInterrupt:
        print("\nheapscope: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # Output piped into `head` and closed early: not an error of ours.
        import os
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except ValueError as exc:   # a strategy parameter out of range, e.g. a bad pool size
        print(f"heapscope: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
