"""The ``heapscope`` command.

    heapscope                      open the window on the bundled default trace
    heapscope open [TRACE] [--strategy NAME] ...   the same, on a trace file or workload
    heapscope compare TRACE ...    one row of measures per strategy, no window
    heapscope check TRACE          validate a trace and print its statistics
    heapscope inspect TRACE -s S --step N   one step: its events, blocks and structure
    heapscope strategies [NAME]    the strategies and the parameters each takes
    heapscope record -o OUT.rep -- COMMAND ARGS...   record a real program's mallocs and frees
    heapscope convert IN -o OUT.rep                  ltrace or villoc output to a .rep

TRACE is a ``.rep`` / ``.rep.gz`` file or a workload name with optional
parameters (``vo1989``, ``vo1989:seed=3,steps=500``).  Bad input is reported as
``heapscope: error: FILE:LINE: message`` with exit status 2, never as a
traceback; so is a strategy parameter out of range.

This module holds the one argument parser of the whole command, the window's
options included (the window only receives them parsed, as a
:class:`WindowRequest`).  A subcommand is a function declaring its options and
a run function registered with :func:`command`.  Values are parsed by
:mod:`heapscope.values` and strategy parameters checked against their
declarations (:mod:`heapscope.allocators.params`).  Qt is imported only when a
window is asked for, so every other command, and ``open --help``, runs on
machines without a display.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import math
import sys
import time
from dataclasses import dataclass
from typing import Callable

from .allocators.params import Param, ParamError, declared, parse_param
from .allocators.registry import STRATEGIES, make_strategy, strategy_names
from .allocators.replay import ReplayCancelled, Timeline, replay_bare
from .allocators.strategy import Strategy
from .traces import TraceError, default_trace_path, load_trace
from .traces.bundled import examples_help
from .values import BadValue, parse_qualified

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


# ------------------------------------------------------------ strategy options
def _option_name(param: Param) -> str:
    return "--" + param.name.replace("_", "-")


def _option_type(param: Param):
    """An argparse ``type=`` reading the option's value as the parameter does."""
    def convert(text: str):
        try:
            return param.parse(text, None)
        except ParamError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
    convert.__name__ = param.name      # argparse names the type in some messages
    return convert


def add_strategy_options(p: argparse.ArgumentParser) -> None:
    """The parameters every strategy takes (``Strategy.params``: --word, --align,
    --heap-limit, --pool-size) and ``-P STRATEGY.NAME=VALUE`` for a strategy's own."""
    for param in Strategy.params:
        p.add_argument(_option_name(param), dest=param.name, type=_option_type(param), default=None,
                       metavar=("{" + ",".join(map(str, param.choices)) + "}" if param.choices
                                else "BYTES" if param.kind == "size" else "N"),
                       help=f"{param.help}; {param.accepts()} (default: {param.default_text()})")
    p.add_argument("--param", "-P", action="append", type=_qualified, metavar="STRATEGY.NAME=VALUE",
                   help="one of a strategy's own parameters, e.g. bsd-buckets.pagesize=1K "
                        "(repeatable; 'heapscope strategies' lists them all)")


def _qualified(text: str) -> tuple[str, str, str]:
    try:
        return parse_qualified(text)
    except BadValue as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def common_params(args) -> dict:
    """The common parameters given on the command line (those left out are
    the strategies' defaults)."""
    return {param.name: getattr(args, param.name) for param in Strategy.params
            if getattr(args, param.name, None) is not None}


def policy_params(args) -> dict[str, dict]:
    """``-P`` values by strategy, each parsed and checked against the strategy's
    declaration; CliError (exit 2) names the parameter and what it accepts."""
    out: dict[str, dict] = {}
    for strategy, name, text in getattr(args, "param", None) or []:
        cls = STRATEGIES.get(strategy)
        if cls is None:
            raise CliError(f"-P {strategy}.{name}: unknown strategy {strategy!r}; "
                           f"known: {', '.join(strategy_names())}")
        try:
            out.setdefault(strategy, {})[name] = parse_param(cls, name, text)
        except ParamError as exc:   # it names the strategy, the parameter and its range
            raise CliError(str(exc)) from None
    return out


def compare_rows(trace, names: list[str], params: dict, progress=None,
                 policy: dict[str, dict] | None = None) -> list[dict]:
    """Replay ``trace`` through each strategy; one summary dict per strategy.
    ``policy`` adds a strategy's own parameters (e.g. bsd-buckets' pagesize).
    A strategy that refuses its parameters (a pool too large for TLSF, an
    alignment it cannot give) gets a row with only ``error``: the others run."""
    rows = []
    for name in names:
        own = dict(params, **(policy or {}).get(name, {}))
        try:
            make_strategy(name, **own)
        except ValueError as exc:
            rows.append({"strategy": name, "error": str(exc)})
            continue
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
        return json.dumps([{k: _json_value(r.get(k)) for k in keys + ["error"]} for r in rows], indent=2)
    if fmt == "csv":
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(keys + ["error"])
        for r in rows:
            writer.writerow([_json_value(r.get(k)) for k in keys] + [r.get("error", "")])
        return out.getvalue().rstrip("\n")
    cells = [[title for _, title, _ in COLUMNS]]
    for r in rows:
        if "error" not in r:
            cells.append([_fmt(r.get(k), f) for k, _, f in COLUMNS])
    widths = [max(len(row[i]) for row in cells) for i in range(len(COLUMNS))]
    widths[0] = max([widths[0]] + [len(r["strategy"]) for r in rows])
    lines = []
    body = iter(cells[1:])
    for j, r in enumerate([None] + rows):
        if r is not None and "error" in r:
            lines.append(f"{r['strategy'].ljust(widths[0])}  error: {r['error']}")
            continue
        row = cells[0] if r is None else next(body)
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


def _trace_argument(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument("trace", nargs="?", default=None,
                   help=f"a trace file (.rep, .rep.gz, ltrace output), a bundled trace such as "
                   f"gcc-cc1, or a workload such as vo1989:seed=3 ({what})")


def _known_strategy(name: str) -> str:
    if name not in STRATEGIES:
        raise argparse.ArgumentTypeError(f"unknown strategy {name!r}; known: {', '.join(strategy_names())}")
    return name


# ------------------------------------------------------------------ commands
@dataclass
class Command:
    """One subcommand: ``options(parser)`` declares its arguments, ``run(args)``
    does it and returns the exit status."""
    name: str
    help: str
    options: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]


#: the subcommands in the order ``--help`` lists them
COMMANDS: list[Command] = []


def command(name: str, help: str, options: Callable[[argparse.ArgumentParser], None]):
    """Register ``run`` as subcommand ``name``: a new subcommand is an options
    function and a run function under this decorator."""
    def register(run: Callable[[argparse.Namespace], int]):
        COMMANDS.append(Command(name, help, options, run))
        return run
    return register


def _open_options(p: argparse.ArgumentParser) -> None:
    _trace_argument(p, "default: the bundled trace")
    p.add_argument("--strategy", "-s", type=_known_strategy, default=None, metavar="NAME",
                   help=f"the strategy to start with (default next-fit): {', '.join(strategy_names())}")
    add_strategy_options(p)


@dataclass
class WindowRequest:
    """What ``heapscope open`` asks the window for, parsed and checked."""
    trace: str | None
    strategy: str | None
    params: dict                      # the common parameters given
    strategy_params: dict[str, dict]  # -P, by strategy


@command("open", "open the window (the default)", _open_options)
def cmd_open(args) -> int:
    request = WindowRequest(args.trace, args.strategy, common_params(args), policy_params(args))
    first = request.strategy or "next-fit"
    try:   # the strategy shown first must take its parameters: say so here, not in a dialog
        make_strategy(first, **request.params, **request.strategy_params.get(first, {}))
    except ValueError as exc:
        raise CliError(str(exc)) from None
    try:
        from .gui.app import main as gui_main
    except ImportError as exc:   # no Qt on this machine: say so and fall back to the table
        print(f"heapscope: the window needs PySide6 and pyqtgraph ({exc}); "
              "showing the comparison table instead", file=sys.stderr)
        args.strategy = None
        args.format = "table"
        return cmd_compare(args)
    return gui_main(request)


def _compare_options(p: argparse.ArgumentParser) -> None:
    _trace_argument(p, "default: the bundled trace")
    p.add_argument("--strategy", "-s", action="append", metavar="NAME",
                   help=f"repeatable; default all of: {', '.join(strategy_names())}")
    p.add_argument("--format", "-f", choices=("table", "csv", "json"), default="table")
    add_strategy_options(p)
    p.epilog = examples_help()      # the bundled traces, real programs among them
    p.formatter_class = argparse.RawDescriptionHelpFormatter


@command("compare", "one row of measures per strategy", _compare_options)
def cmd_compare(args) -> int:
    names = args.strategy or strategy_names()
    for name in names:
        if name not in STRATEGIES:
            raise CliError(f"unknown strategy {name!r}; known: {', '.join(strategy_names())}")
    params, policy = common_params(args), policy_params(args)
    trace = load_trace(args.trace or str(default_trace_path()))
    progress = _progress_printer(sys.stderr) if sys.stderr.isatty() else None
    rows = compare_rows(trace, names, params, progress, policy)
    failed = [r for r in rows if "error" in r]
    if len(failed) == len(rows):
        raise CliError("; ".join(r["error"] for r in failed))
    for r in failed:
        print(f"heapscope: {r['strategy']} not run: {r['error']}", file=sys.stderr)
    print(f"# {trace.name}: {len(trace)} ops", file=sys.stderr if args.format != "table" else sys.stdout)
    print(format_rows(rows, args.format))
    return 0


def _check_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("trace", help="a .rep/.rep.gz file or a workload such as vo1989:seed=3")


@command("check", "validate a trace and print its statistics", _check_options)
def cmd_check(args) -> int:
    trace = load_trace(args.trace)
    stats = trace.stats()
    print(f"{args.trace}: OK, a valid trace")
    width = max(len(k) for k in stats)
    for key, value in stats.items():
        shown = f"{value:.1f}" if isinstance(value, float) else str(value)
        print(f"  {key.ljust(width)}  {shown}")
    return 0


def _inspect_options(p: argparse.ArgumentParser) -> None:
    _trace_argument(p, "default: the bundled trace")
    p.add_argument("--strategy", "-s", type=_known_strategy, required=True, metavar="NAME",
                   help=f"one of: {', '.join(strategy_names())}")
    p.add_argument("--step", "-n", type=int, required=True, metavar="N",
                   help="0 is the heap before any operation; N the heap after the N-th, whose events are shown")
    p.add_argument("--format", "-f", choices=("text", "json"), default="text")
    p.add_argument("--all", action="store_true",
                   help="text: list every block and every list member (JSON always has them all)")
    add_strategy_options(p)


@command("inspect", "one step of a replay: its events, the blocks and the structure", _inspect_options)
def cmd_inspect(args) -> int:
    """One step of a replay without a window (heapscope/inspection.py)."""
    from .inspection import InspectError, format_text, inspect_step, to_json
    params = dict(common_params(args), **policy_params(args).get(args.strategy, {}))
    trace = load_trace(args.trace or str(default_trace_path()))
    try:
        report = inspect_step(trace, args.strategy, args.step, params)
    except InspectError as exc:
        raise CliError(str(exc)) from None
    print(to_json(report) if args.format == "json" else format_text(report, all_blocks=args.all))
    return 0


def _strategies_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("name", nargs="*", type=_known_strategy, help="only these strategies")


@command("strategies", "list the strategies and the parameters each takes", _strategies_options)
def cmd_strategies(args) -> int:
    for name in args.name or strategy_names():
        cls = STRATEGIES[name]
        print(f"{name}: {cls.title}")
        params = list(declared(cls).values())
        width = max(len(p.name) for p in params)
        for p in params:
            print(f"  {p.name.ljust(width)}  {p.accepts()}; default {p.default_text()}")
            print(f"  {' ' * width}  {p.help}")
        print()
    print("Set one with -P STRATEGY.NAME=VALUE; word, align, heap_limit and pool_size also "
          "with --word, --align, --heap-limit, --pool-size for every strategy.")
    return 0


def _record_options(p: argparse.ArgumentParser) -> None:
    p.usage = "heapscope record [-h] -o OUT.rep [--keep-live] -- COMMAND [ARGS...]"
    p.description = ("Run COMMAND with heapscope's recorder loaded (LD_PRELOAD; Linux, "
                     "dynamically linked programs) and write its malloc/free trace. The "
                     "program's output and exit status pass through.")
    p.add_argument("-o", "--output", required=True, metavar="OUT.rep",
                   help="the main program's trace (.rep or .rep.gz); other processes it starts "
                   "get OUT.PID.PROGRAM.rep beside it")
    p.add_argument("--keep-live", action="store_true",
                   help="leave blocks still live at exit unfreed (default: free them at the end)")
    p.add_argument("program", nargs=argparse.REMAINDER, metavar="-- COMMAND ARGS...")


@command("record", "run a program and record its mallocs and frees as a .rep trace",
         _record_options)
def cmd_record(args) -> int:
    """Run a program under the recorder; its exit status is ours (issue 13)."""
    from .traces.preload import RecorderUnavailable
    from .traces.record import record, summary_lines
    command = args.program[1:] if args.program[:1] == ["--"] else args.program
    if not command:
        raise CliError("record: say which program to run: heapscope record -o OUT.rep -- COMMAND ARGS...")
    try:
        rec = record(command, args.output, keep_live=args.keep_live)
    except RecorderUnavailable as exc:
        raise CliError(str(exc)) from None
    except OSError as exc:
        raise CliError(f"cannot run {command[0]!r}: {exc.strerror or exc}") from None
    print("\n".join(summary_lines(rec)), file=sys.stderr)
    return rec.status


def _convert_options(p: argparse.ArgumentParser) -> None:
    p.description = ("Read IN -- a .rep/.rep.gz trace, or the output of ltrace -e "
                     "malloc+free+calloc+realloc (with or without -f), or villoc's input -- "
                     "chosen by its content, and write it as a .rep trace.")
    p.add_argument("input", metavar="IN")
    p.add_argument("-o", "--output", required=True, metavar="OUT.rep")
    p.add_argument("--pid", type=int, action="append",
                   help="ltrace -f output: keep only this pid's calls (repeatable; ltrace cannot "
                   "tell threads, which share a heap, from processes, which do not)")
    p.add_argument("--keep-live", action="store_true",
                   help="leave blocks still live at the end of the input unfreed")


@command("convert", "convert ltrace or villoc output (or a .rep) to a .rep file", _convert_options)
def cmd_convert(args) -> int:
    """Any trace heapscope reads (.rep, ltrace or villoc output) to a .rep file."""
    from .traces import read_rep, write_rep
    from .traces.formats import sniff_file
    from .traces.ltrace import import_ltrace, skipped_lines
    notes: list[str] = []
    if sniff_file(args.input) == "ltrace":
        trace, counts, pointer_counts = import_ltrace(args.input, pids=args.pid,
                                                      keep_live=args.keep_live)
        notes = skipped_lines(counts, pointer_counts)
    elif args.pid or args.keep_live:
        raise CliError("--pid and --keep-live apply to ltrace/villoc input only")
    else:
        trace = read_rep(args.input)
    write_rep(trace, args.output)
    stats = trace.stats()
    print(f"{args.output}: {len(trace):,} ops, {trace.num_ids:,} ids, peak live "
          f"{stats['max_live_bytes']:,} bytes in {stats['max_live_blocks']:,} blocks",
          file=sys.stderr)
    for note in notes:
        print(f"  {note}", file=sys.stderr)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="heapscope",
        description="Replay malloc/free traces through classic allocator strategies. "
                    "Without a command, the window opens on the bundled trace.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for cmd in COMMANDS:
        p = sub.add_parser(cmd.name, help=cmd.help, description=cmd.help)
        cmd.options(p)   # may set its own description, epilog and formatter
        p.set_defaults(func=cmd.run)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    args = build_parser().parse_args(argv or ["open"])
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
    except ValueError as exc:   # a strategy refusing its parameters, e.g. a pool too large
        print(f"heapscope: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
