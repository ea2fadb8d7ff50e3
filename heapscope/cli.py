"""The ``heapscope`` command.

    heapscope                      open the window on the bundled default trace
    heapscope open [TRACE] [--strategy NAME] ...   the same, on a trace file or workload
    heapscope compare TRACE ...    one row of measures per strategy, no window
    heapscope check TRACE          validate a trace and print its statistics
    heapscope inspect TRACE -s S --step N   one step: its events, blocks and structure
    heapscope find TRACE -s S --when COND   the steps where a condition holds
    heapscope render TRACE -s S --step N -o OUT.png   what the window shows, as PNG, SVG, GIF or MP4
    heapscope strategies [NAME]    the strategies and the parameters each takes
    heapscope sweep TRACES... -s S1,S2 [-P S.NAME=V1,V2] -o OUT.csv   a resumable grid of compare rows
    heapscope grade FILE.py:Class [TRACE...]   check and score a strategy of your own
    heapscope record -o OUT.rep -- COMMAND ARGS...   record a real program's mallocs and frees
    heapscope convert IN -o OUT.rep|OUT.heap         any trace to a .rep or the readable form
    heapscope lesson NAME|FILE     play a lesson in the window (also: open --lesson NAME|FILE)
    heapscope lesson check FILE    validate a lesson (docs/lessons.md) and print each stop
    heapscope lesson list          the bundled lessons
    heapscope lesson export FILE -o DIR   each stop as a PNG, the narration as Markdown

TRACE is a ``.rep`` / ``.rep.gz`` file, a trace in the readable form
(``a = malloc(240)``, ``free(a)``: a ``.heap`` file, recognised by its
content), ltrace output, or a workload name with optional
parameters (``vo1989``, ``vo1989:seed=3,steps=500``).  Bad input is reported as
``heapscope: error: FILE:LINE: message`` with exit status 2, never as a
traceback; so is a strategy parameter out of range.

``--allocator FILE.py:ClassName`` (repeatable), on every command that takes
strategy options, loads a strategy of your own (:mod:`heapscope.allocators.user`)
and registers it beside the built-ins; so do installed packages declaring the
entry point group ``heapscope.allocators``.  Both are loaded before the
parser is built, so help texts and ``--strategy`` know the new names.

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
import os
import sys
import time
from dataclasses import dataclass
from typing import Callable

# Before numpy's import (heapscope.allocators makes it): heapscope does no
# linear algebra, and the OpenBLAS thread pool numpy starts when imported
# costs about 0.1 s of CPU at every process start -- the command's, and each
# worker of `compare`, `sweep` and the window's builds, which inherit this.
# A user's own setting wins.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from .allocators import plugins  # noqa: E402 (after the setting above)
from .allocators.params import Param, ParamError, declared, parse_param
from .allocators.phrases import count
from .allocators.registry import STRATEGIES, make_strategy, strategy_names
from .allocators.isolation import DEFAULT_TIME_LIMIT, time_limit_text
from .allocators.replay import ReplayCancelled
from .allocators.strategy import Strategy
from .allocators.user import UserStrategyError
from .traces import TraceError, default_trace_path, load_trace, names_a_file
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
    ("cpu_s", "cpu s", "{:.3f}"),
]


class CliError(Exception):
    """A user mistake reported in one line (exit status 2)."""


def _check_output(path: str, inputs=(), what: str = "output") -> None:
    """CliError (exit 2) unless ``path`` can be written and is none of
    ``inputs``: called before any work, so that a bad output costs nothing
    (heapscope/outputs.py)."""
    from .outputs import OutputError, check_output
    try:
        check_output(path, inputs, what)
    except OutputError as exc:
        raise CliError(str(exc)) from None


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


ALLOCATOR_OPTION = "--allocator"


def add_allocator_option(p: argparse.ArgumentParser) -> None:
    """``--allocator FILE.py:ClassName``: a strategy of your own.  The files are
    loaded by :func:`load_allocators` before the parser is built; here the
    option is only declared, for --help and so that the parser accepts it."""
    p.add_argument(ALLOCATOR_OPTION, action="append", metavar="FILE.py:CLASS",
                   help="load a strategy of your own (a subclass of heapscope.UserStrategy) and "
                        "add it to the strategies under its name (repeatable; docs/tutorial.md)")


def add_strategy_options(p: argparse.ArgumentParser) -> None:
    """The parameters every strategy takes (``Strategy.params``: --word, --align,
    --heap-limit, --pool-size), ``-P STRATEGY.NAME=VALUE`` for a strategy's own
    and ``--allocator`` for a strategy of your own."""
    add_allocator_option(p)
    add_common_options(p)
    p.add_argument("--param", "-P", action="append", type=_qualified, metavar="STRATEGY.NAME=VALUE",
                   help="one of a strategy's own parameters, e.g. bsd-buckets.pagesize=1K "
                        "(repeatable; 'heapscope strategies' lists them all)")
    add_time_limit_option(p)


def add_common_options(p: argparse.ArgumentParser) -> None:
    """``--word``, ``--align``, ``--heap-limit``, ``--pool-size``: the
    parameters every strategy takes (``Strategy.params``)."""
    for param in Strategy.params:
        p.add_argument(_option_name(param), dest=param.name, type=_option_type(param), default=None,
                       metavar=("{" + ",".join(map(str, param.choices)) + "}" if param.choices
                                else "BYTES" if param.kind == "size" else "N"),
                       help=f"{param.help}; {param.accepts()} (default: {param.default_text()})")


def add_time_limit_option(p: argparse.ArgumentParser) -> None:
    """``--time-limit SECONDS``: how long a strategy of your own may go without
    an answer before heapscope stops it (allocators/isolation.py)."""
    p.add_argument("--time-limit", type=_arg_type(time_limit_text, "time limit"),
                   default=DEFAULT_TIME_LIMIT, metavar="SECONDS",
                   help="a strategy of your own runs in a worker process that answers while it "
                        "works; one silent at the same step this long is stopped with an error "
                        f"(default {DEFAULT_TIME_LIMIT:g})")


def _qualified(text: str) -> tuple[str, str, str]:
    try:
        return parse_qualified(text)
    except BadValue as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def common_params(args) -> dict:
    """The common parameters given on the command line (those left out are
    the strategies' defaults); CliError when they contradict each other."""
    params = {param.name: getattr(args, param.name) for param in Strategy.params
              if getattr(args, param.name, None) is not None}
    _refuse_pool_with_limit({p.name: _option_name(p) for p in Strategy.params if p.name in params})
    return params


#: the two common parameters that cannot be given together
POOL_AND_LIMIT = ("pool_size", "heap_limit")


def _refuse_pool_with_limit(spelt: dict[str, str]) -> None:
    """CliError naming both options when ``spelt`` (parameter -> how the
    command line gave it; None for ``-P S.NAME=none``, which takes a common
    option back for one strategy) sets a fixed pool and a heap limit.  A
    fixed pool is its own limit (allocators/arena.py): the heap never grows,
    so a heap limit beside it would be silently ignored, and no other
    meaning (a cap below the pool's size?) is clearly the one meant."""
    if all(spelt.get(name) for name in POOL_AND_LIMIT):
        pool, limit = (spelt[name] for name in POOL_AND_LIMIT)
        raise CliError(f"{limit} and {pool} cannot be given together: a fixed pool is its own "
                       "limit (its size), and a heap limit caps a heap grown by sbrk; give one")


def policy_params(args) -> dict[str, dict]:
    """``-P`` values by strategy, each parsed and checked against the strategy's
    declaration; CliError (exit 2) names the parameter and what it accepts,
    or the two options when a strategy would get both a pool and a limit."""
    out: dict[str, dict] = {}
    spelt: dict[str, dict[str, str | None]] = {}
    for strategy, name, text in getattr(args, "param", None) or []:
        cls = STRATEGIES.get(strategy)
        if cls is None:
            raise CliError(f"-P {strategy}.{name}: unknown strategy {strategy!r}; "
                           f"known: {', '.join(strategy_names())}")
        try:
            out.setdefault(strategy, {})[name] = parse_param(cls, name, text)
        except ParamError as exc:   # it names the strategy, the parameter and its range
            raise CliError(str(exc)) from None
        given = out[strategy][name] is not None
        spelt.setdefault(strategy, {})[name] = f"-P {strategy}.{name}={text}" if given else None
    common = {p.name: _option_name(p) for p in Strategy.params
              if getattr(args, p.name, None) is not None}
    for strategy, own in spelt.items():
        _refuse_pool_with_limit(dict(common, **own))
    return out


def _warn_unused_policy(policy: dict[str, dict], names: list[str]) -> None:
    """A warning on stderr for each ``-P S.NAME=VALUE`` whose strategy S is
    not run: it would otherwise be ignored without a word (a typo in -s, or
    -P copied from another command)."""
    for strategy in policy:
        if strategy not in names:
            given = ", ".join(f"-P {strategy}.{k}" for k in policy[strategy])
            print(f"heapscope: warning: {given}: {strategy} is not run here "
                  f"(only {', '.join(dict.fromkeys(names))}); ignored", file=sys.stderr)


def default_start_method() -> str:
    """allocators.parallel's start method for the workers, imported when a
    command starts workers: the module and multiprocessing's are about 28 ms
    of every other command's start (``--help``, ``--version``, ``replay``)."""
    from .allocators.parallel import default_start_method as start_method
    return start_method()


def compare_rows(trace, names: list[str], params: dict, progress=None,
                 policy: dict[str, dict] | None = None,
                 time_limit: float | None = DEFAULT_TIME_LIMIT) -> list[dict]:
    """Replay ``trace`` through each strategy; one summary dict per strategy.
    ``policy`` adds a strategy's own parameters (e.g. bsd-buckets' pagesize).
    A strategy that refuses its parameters (a pool too large for TLSF, an
    alignment it cannot give), a user strategy that makes a mistake, or one
    that fails on the way gets a row with only ``error``: the others run.  The strategies run at once, each in a worker
    process (allocators/parallel.py), measures only: no checkpoints, which a
    table never seeks.  ``cpu_s`` is the CPU time of each replay in its
    worker (wall time means little while the workers share the cores).
    A user strategy silent for ``time_limit`` seconds is stopped: its row
    says "no answer in N s at step S"."""
    from .allocators.parallel import BuildFailed, BuildSpec, build_timelines
    refused: dict[str, str] = {}
    specs = []
    for name in dict.fromkeys(names):
        own = dict(params, **(policy or {}).get(name, {}))
        try:
            make_strategy(name, **own)
        except (ValueError, UserStrategyError) as exc:
            refused[name] = str(exc)
            continue
        specs.append(BuildSpec(name, own))
    results = build_timelines(trace, specs, progress=progress, keep="summary", checkpoints=False,
                              start_method=default_start_method(), time_limit=time_limit)
    rows = []
    for name in dict.fromkeys(names):
        result = results.get(name)
        if name in refused or isinstance(result, BuildFailed):
            rows.append({"strategy": name, "error": refused.get(name) or result.error})
        else:
            rows.append({"strategy": name, **result})
    return rows


def format_rows(rows: list[dict], fmt: str, terminal: bool = False) -> str:
    """``compare``'s rows as JSON, CSV or an aligned table (``terminal``:
    styled for one, heapscope/console.py)."""
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
    from .console import RunOn, table_text
    # a strategy that did not run: its error after its name
    body = [RunOn([r["strategy"]], 1, f"error: {r['error']}", "red") if "error" in r
            else [_fmt(r.get(k), f) for k, _, f in COLUMNS] for r in rows]
    return table_text([title for _, title, _ in COLUMNS], body, terminal=terminal)


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


def _replay_bars(bars):
    """``progress(name, done, total)`` of a replay (compare's strategies at
    once, render's replays and frames) as one bar per name, with its rate
    and time left (heapscope/console.py); None off a terminal."""
    if bars is None:
        return None

    def show(name, done, total):
        bars.update(str(name), done, total)
    return show


def _trace_argument(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument("trace", nargs="?", default=None,
                   help=f"a trace file (.rep, .rep.gz, readable .heap, ltrace output), a bundled trace such as "
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


class _StrategiesAction(argparse.Action):
    """``--strategy`` of ``open``: the first one given is the strategy to
    start with (``args.strategy``); all of them, in order, go to
    ``args.strategies`` (given twice or more, compare mode shows them)."""

    def __call__(self, parser, namespace, value, option_string=None):
        if getattr(namespace, "strategies", None) is None:
            namespace.strategies = []
            namespace.strategy = value
        namespace.strategies.append(value)


#: compare mode shows this many strategies at least and at most (gui/compare_view.py)
COMPARE_ROWS = (2, 7)


def _strategy_list(text: str) -> list[str]:
    """``--compare S1,S2,...``: the names, each known, none empty or given
    twice, as many as compare mode shows (an ArgumentTypeError names what is
    wrong, so a list that cannot be shown is refused before any window)."""
    names = [n.strip() for n in text.split(",")]
    if not any(names):
        raise argparse.ArgumentTypeError(f"no strategy named in {text!r}; give 2 to 7, "
                                         "e.g. --compare next-fit,tlsf")
    if "" in names:
        raise argparse.ArgumentTypeError(f"an empty name in {text!r} (two commas, or one at an end)")
    for name in names:
        _known_strategy(name)
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise argparse.ArgumentTypeError(f"{', '.join(twice)} named twice in {text!r}")
    low, high = COMPARE_ROWS
    if not low <= len(names) <= high:
        raise argparse.ArgumentTypeError(f"compare mode shows {low} to {high} strategies, "
                                         f"{text!r} names {len(names)}")
    return names


def _open_options(p: argparse.ArgumentParser) -> None:
    _trace_argument(p, "default: the bundled trace")
    p.add_argument("--strategy", "-s", type=_known_strategy, default=None, metavar="NAME",
                   action=_StrategiesAction,
                   help=f"the strategy to start with (default next-fit, or the one --allocator "
                   f"loaded); given twice or more, compare mode shows them: {', '.join(strategy_names())}")
    p.add_argument("--compare", "-c", type=_strategy_list, default=None, metavar="S1,S2,...",
                   help="start in compare mode with these 2 to 7 strategies side by side")
    p.add_argument("--step", "-n", type=_step_number, default=None, metavar="N",
                   help="show the heap after the first N operations (default 0; past the end: the end)")
    p.add_argument("--presenter", action="store_true", default=None,
                   help="start in presenter mode: large text, thick outlines (F5 in the window)")
    p.add_argument("--theme", choices=("light", "dark"), default=None,
                   help="the colour theme (default: the one used last; D in the window)")
    p.add_argument("--lesson", default=None, metavar="NAME|FILE",
                   help="play a lesson (a bundled lesson's name or a lesson file, docs/lessons.md): "
                        "it names its own trace and strategies")
    add_strategy_options(p)


def _step_number(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"a step is a whole number >= 0, got {text!r}")
    return value


@dataclass
class WindowRequest:
    """What ``heapscope open`` asks the window for, parsed and checked."""
    trace: str | None
    strategy: str | None
    params: dict                      # the common parameters given
    strategy_params: dict[str, dict]  # -P, by strategy
    step: int | None = None           # the step to show first
    compare: list[str] | None = None  # compare mode's strategies (--compare, or -s given twice)
    presenter: bool | None = None     # presenter mode (None: as last time)
    theme: str | None = None          # "light" or "dark" (None: as last time)
    time_limit: float | None = DEFAULT_TIME_LIMIT   # --time-limit
    lesson: object | None = None      # the lesson to play (--lesson), loaded and checked


def window_request(args) -> WindowRequest:
    """``heapscope open``'s arguments as a checked :class:`WindowRequest`."""
    if getattr(args, "lesson", None) is not None:
        return _lesson_request(args)
    strategy = args.strategy
    loaded = _loaded_names(args)
    if strategy is None and len(loaded) == 1:
        strategy = loaded[0]          # --allocator mine.py:Mine opens on it
    strategies = getattr(args, "strategies", None) or []
    compare = getattr(args, "compare", None) or (strategies if len(strategies) > 1 else None)
    if compare is not None:
        compare = list(dict.fromkeys(compare))
        low, high = COMPARE_ROWS
        if not low <= len(compare) <= high:
            raise CliError(f"compare mode shows {low} to {high} strategies, not {len(compare)}")
        strategy = strategy if strategy in compare else compare[0]
    request = WindowRequest(args.trace, strategy, common_params(args), policy_params(args),
                            getattr(args, "step", None), compare=compare,
                            presenter=getattr(args, "presenter", None),
                            theme=getattr(args, "theme", None),
                            time_limit=getattr(args, "time_limit", None))
    for name in compare or [request.strategy or "next-fit"]:
        try:   # the strategies shown first must take their parameters: say so here, not in a dialog
            make_strategy(name, **request.params, **request.strategy_params.get(name, {}))
        except ValueError as exc:
            raise CliError(str(exc)) from None
    return request


def _lesson_request(args) -> WindowRequest:
    """``open --lesson``: the lesson loaded and every claim checked here, so
    that a broken one is one line ``FILE:LINE: message`` (exit 2) before any
    window; it names its own trace, strategies and parameters."""
    from .lessons import LessonError, load_lesson
    given = [option for option, value in (("a trace", args.trace), ("--strategy", args.strategy),
                                          ("--compare", getattr(args, "compare", None)),
                                          ("--step", getattr(args, "step", None))) if value is not None]
    if given:
        raise CliError(f"a lesson names its own trace and strategies: drop {', '.join(given)}")
    try:
        lesson = load_lesson(_lesson_file(args.lesson))
    except LessonError as exc:
        raise CliError(str(exc)) from None
    return WindowRequest(None, lesson.strategies[0], {}, dict(lesson.params),
                         presenter=getattr(args, "presenter", None), theme=getattr(args, "theme", None),
                         time_limit=getattr(args, "time_limit", None), lesson=lesson)


def parse_window_request(argv: list[str]) -> WindowRequest:
    """The window request of a ``heapscope open ...`` command line, without
    opening the window (tests)."""
    load_allocators(argv)
    return window_request(build_parser().parse_args(argv))


@command("open", "open the window (the default)", _open_options)
def cmd_open(args) -> int:
    request = window_request(args)
    try:
        from .gui.app import main as gui_main
    except ImportError as exc:   # no Qt on this machine: say so and fall back to the table
        print(f"heapscope: the window needs PySide6 and pyqtgraph ({exc}); "
              "showing the comparison table instead", file=sys.stderr)
        args.strategy = request.compare
        args.format = "table"
        return cmd_compare(args)
    return gui_main(request)


#: what ``heapscope compare``'s exit status says (its --help and the README)
COMPARE_EXIT_STATUSES = """\
exit status:
  0  every strategy ran
  1  some strategy did not run (it refused a setting, or a strategy of your own
     failed): the others' rows are printed, each failed one named on stderr
  2  bad input or usage, or no strategy could run"""


def _compare_options(p: argparse.ArgumentParser) -> None:
    _trace_argument(p, "default: the bundled trace")
    p.add_argument("--strategy", "-s", action="append", metavar="NAME",
                   help=f"repeatable; default all of: {', '.join(strategy_names())}")
    p.add_argument("--format", "-f", choices=("table", "csv", "json"), default="table")
    add_strategy_options(p)
    p.epilog = COMPARE_EXIT_STATUSES + "\n\n" + examples_help()   # the bundled traces too
    p.formatter_class = argparse.RawDescriptionHelpFormatter


@command("compare", "one row of measures per strategy", _compare_options)
def cmd_compare(args) -> int:
    names = args.strategy or strategy_names()
    for name in names:
        if name not in STRATEGIES:
            raise CliError(f"unknown strategy {name!r}; known: {', '.join(strategy_names())}")
    params, policy = common_params(args), policy_params(args)
    _warn_unused_policy(policy, names)
    trace = load_trace(args.trace or str(default_trace_path()))
    from .console import bars_for
    bars = bars_for(sys.stderr, "steps")
    try:
        rows = compare_rows(trace, names, params, _replay_bars(bars), policy, args.time_limit)
    finally:
        if bars:
            bars.close()
    failed = [r for r in rows if "error" in r]
    if len(failed) == len(rows):
        raise CliError("; ".join(r["error"] for r in failed))
    for r in failed:
        print(f"heapscope: {r['strategy']} not run: {r['error']}", file=sys.stderr)
    print(f"# {trace.name}: {count(len(trace), 'op')}", file=sys.stderr if args.format != "table" else sys.stdout)
    from .console import is_terminal
    print(format_rows(rows, args.format, terminal=is_terminal(sys.stdout)))
    return 1 if failed else 0


def _check_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("trace", help="a .rep/.rep.gz or readable .heap file, or a workload such as vo1989:seed=3")


@command("check", "validate a trace and print its statistics", _check_options)
def cmd_check(args) -> int:
    from .traces.load import load_trace_noting
    trace, notes = load_trace_noting(args.trace)
    stats = trace.stats()
    print(f"{args.trace}: OK, a valid trace")
    width = max(len(k) for k in stats)
    for key, value in stats.items():
        shown = f"{value:.1f}" if isinstance(value, float) else str(value)
        print(f"  {key.ljust(width)}  {shown}")
    if notes:       # what an import (ltrace, memray) left out or merged
        print("  import notes:")
        for note in notes:
            print(f"    {note}")
    _warn_of_large_requests(args.trace, trace)
    return 0


def _warn_of_large_requests(name: str, trace) -> None:
    """A warning (not an error: the trace is valid) for requests past
    LARGE_REQUEST, naming how many and the first."""
    import numpy as np
    from .traces.limits import LARGE_REQUEST
    from .traces.trace import FREE
    from .values import format_size
    large = np.flatnonzero((trace.kind != FREE) & (trace.sizes > LARGE_REQUEST))
    if not len(large):
        return
    first = int(large[0])
    print(f"heapscope: warning: {name}: {count(len(large), 'request')} "
          f"past {format_size(LARGE_REQUEST)} (the first at op {first + 1}: "
          f"{int(trace.sizes[first])} bytes); a request no heap of a strategy can hold "
          f"fails at once", file=sys.stderr)


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
    policy = policy_params(args)
    _warn_unused_policy(policy, [args.strategy])
    params = dict(common_params(args), **policy.get(args.strategy, {}))
    trace = load_trace(args.trace or str(default_trace_path()))
    try:
        report = inspect_step(trace, args.strategy, args.step, params, time_limit=args.time_limit)
    except InspectError as exc:
        raise CliError(str(exc)) from None
    print(to_json(report) if args.format == "json" else format_text(report, all_blocks=args.all))
    return 0


#: what ``heapscope find``'s exit status says (its --help and the README)
FIND_EXIT_STATUSES = """\
exit status (as grep's):
  0  some step matched
  1  no step matched
  2  bad input or usage: a condition that cannot be read names its column"""


def _find_options(p: argparse.ArgumentParser) -> None:
    from .allocators.conditions import reference
    _trace_argument(p, "default: the bundled trace")
    p.add_argument("--strategy", "-s", type=_known_strategy, required=True, metavar="NAME",
                   help=f"one of: {', '.join(strategy_names())}")
    p.add_argument("--when", "-w", required=True, metavar="CONDITION",
                   help='the condition, e.g. failed, "search > 100", "grew and frag > 0.5", '
                        "'rotation == \"zig-zag\"' (docs/gui.md, Conditions)")
    which = p.add_mutually_exclusive_group()
    which.add_argument("--count", action="store_true", help="print only how many steps match")
    which.add_argument("--format", "-f", choices=("text", "json"), default="text",
                       help="text: one line per matching step, in the window's words; json: the same as data")
    p.add_argument("--limit", type=_positive, default=None, metavar="N",
                   help="show only the first N matches (the count is of them all)")
    add_strategy_options(p)
    p.epilog = (FIND_EXIT_STATUSES + "\n\nopen the window at a match with: heapscope open TRACE "
                "--strategy S --step N\n\n" + reference())
    p.formatter_class = argparse.RawDescriptionHelpFormatter


@command("find", "the steps of a replay where a condition holds", _find_options)
def cmd_find(args) -> int:
    """Steps matching ``--when`` (heapscope/finding.py)."""
    from .finding import FindError, find_report, format_text, read_condition, to_json
    try:
        read_condition(args.when, args.strategy)     # a bad condition costs no replay
    except FindError as exc:
        raise CliError(str(exc)) from None
    policy = policy_params(args)
    _warn_unused_policy(policy, [args.strategy])
    params = dict(common_params(args), **policy.get(args.strategy, {}))
    trace = load_trace(args.trace or str(default_trace_path()))
    words = 0 if args.count else args.limit
    try:
        report = find_report(trace, args.strategy, args.when, params, words, time_limit=args.time_limit)
    except FindError as exc:
        raise CliError(str(exc)) from None
    if report["stopped"]:
        steps = report["steps"]
        print(f"heapscope: warning: the replay stopped at {report['stopped']}; the "
              f"{count(steps, 'step', grouped=True)} before it {'was' if steps == 1 else 'were'} "
              "searched", file=sys.stderr)
    if args.count:
        print(report["count"])
    else:
        print(to_json(report) if args.format == "json" else format_text(report))
    return 0 if report["count"] else 1


#: what ``heapscope lesson`` does besides playing a lesson
LESSON_ACTIONS = ("play", "check", "list", "export")


def lesson_shorthand(argv: list[str]) -> list[str]:
    """``heapscope lesson NAME|FILE ...`` is ``heapscope lesson play NAME|FILE ...``."""
    if len(argv) >= 2 and argv[0] == "lesson" and argv[1] not in LESSON_ACTIONS and not argv[1].startswith("-"):
        return ["lesson", "play", *argv[1:]]
    return argv


def _lesson_options(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="lesson_command", metavar="ACTION", required=True)
    play = sub.add_parser("play", help="play a lesson in the window (the default: heapscope lesson NAME|FILE)",
                          description="Open the window on a lesson: its narration beside the views, Page "
                          "Down for the next stop, Page Up for the one before, Backspace back to the stop "
                          "(docs/lessons.md, 'Playing a lesson'). The same as heapscope open --lesson.")
    play.add_argument("lesson", metavar="NAME|FILE", help="a bundled lesson's name, or a lesson file (.md)")
    play.add_argument("--presenter", action="store_true", default=None,
                      help="presenter mode: large text, thick outlines (F5 in the window)")
    play.add_argument("--theme", choices=("light", "dark"), default=None,
                      help="the colour theme (default: the one used last; D in the window)")
    check = sub.add_parser("check", help="validate a lesson (syntax, directives, claims) and print each stop",
                           description="Validate a lesson: its front matter, every directive and every "
                           "claim, checked against the replay; then each stop's state in words. "
                           "docs/lessons.md gives the format.")
    check.add_argument("lesson", metavar="FILE", help="a lesson file (.md), or a bundled lesson's name")
    sub.add_parser("list", help="the bundled lessons", description="The lessons shipped with heapscope.")
    from .render import DEFAULT_SIZE, parse_size
    export = sub.add_parser("export", help="write each stop as a PNG and the narration as Markdown",
                            description="Write a lesson as slides: DIR/stop-01.png ... (the window at each "
                            "stop, as heapscope render draws it) and DIR/lesson.md (the narration, "
                            "questions and answers, linking the pictures). The lesson is checked first; "
                            "a broken one writes nothing.")
    export.add_argument("lesson", metavar="FILE", help="a lesson file (.md), or a bundled lesson's name")
    export.add_argument("--output", "-o", required=True, metavar="DIR",
                        help="the folder to write into (made if missing; its parent must exist)")
    export.add_argument("--size", type=_arg_type(parse_size, "size"), default=DEFAULT_SIZE, metavar="WxH",
                        help="each strategy's window, in pixels (default %dx%d)" % DEFAULT_SIZE)
    export.add_argument("--presenter", action="store_true", help="presenter mode: large text, thick outlines")
    export.add_argument("--theme", choices=("light", "dark"), default="light")


def _lesson_file(spec: str) -> str:
    """A bundled lesson's name means it unless a file of that name exists;
    CliError for a name that is neither (with the bundled lessons' names)."""
    from .lessons import bundled_lessons, lesson_path
    bundled = lesson_path(spec)
    if bundled is not None and not os.path.exists(spec):
        return str(bundled)
    if not os.path.exists(spec) and os.sep not in spec and not spec.endswith(".md"):
        raise CliError(f"{spec}: no lesson file and no bundled lesson of that name; bundled: "
                       f"{', '.join(p.stem for p in bundled_lessons())}")
    return spec


@command("lesson", "play, check or export a lesson file, or list the bundled lessons", _lesson_options)
def cmd_lesson(args) -> int:
    """``lesson play FILE`` (the window: ``open --lesson``), ``lesson check
    FILE``, ``lesson list``, ``lesson export`` (heapscope/lessons/, docs/lessons.md)."""
    from .lessons import LessonError, bundled_lessons, load_lesson, read_lesson_text
    if args.lesson_command == "play":
        argv = ["open", "--lesson", args.lesson] + (["--presenter"] if args.presenter else []) + (
            ["--theme", args.theme] if args.theme else [])
        opened = build_parser().parse_args(argv)
        return opened.func(opened)
    if args.lesson_command == "list":
        # the front matter is enough: no replay (vo1989-table's takes seconds)
        for path in bundled_lessons():
            text = read_lesson_text(path.read_text(encoding="utf-8"), str(path))
            named = text.front.get("strategies") or [text.front.get("strategy", "?")]
            length = f"{text.minutes} min" if text.minutes else "length not given"
            print(f"{path.stem}: {text.title} ({', '.join(map(str, named))}; {length})")
        return 0
    if args.lesson_command == "export":
        from .lesson_export import check_folder
        from .outputs import OutputError
        try:
            check_folder(args.output)     # before the replays
        except OutputError as exc:
            raise CliError(str(exc)) from None
    try:
        lesson = load_lesson(_lesson_file(args.lesson))
    except LessonError as exc:
        raise CliError(str(exc)) from None
    if args.lesson_command == "export":
        return _export_lesson(args, lesson)
    length = f", about {lesson.minutes} minutes" if lesson.minutes else ""
    print(f"{args.lesson}: OK, {len(lesson.stops)} stops, {lesson.claim_count()} claims hold{length}")
    for index in range(len(lesson.stops)):
        print()
        print("\n".join(lesson.describe(index)))
    return 0


def _export_lesson(args, lesson) -> int:
    """``lesson export``: heapscope/lesson_export.py draws, with render's windows."""
    from .lesson_export import ExportRequest, export_lesson
    from .outputs import OutputError
    from .render import RenderError
    request = ExportRequest(args.output, size=args.size, presenter=args.presenter, theme=args.theme)

    from .console import bars_for
    bars = bars_for(sys.stderr, "stops")

    def progress(done: int, total: int) -> None:
        if bars:
            bars.update("stops", done, total, description="lesson: stops drawn")
        else:
            print(f"heapscope: stop {done}/{total} drawn", file=sys.stderr)

    try:
        written = export_lesson(lesson, request, lesson.text.path, progress)
    except (OutputError, RenderError) as exc:
        raise CliError(str(exc)) from None
    finally:
        if bars:
            bars.close()
    for path in written:
        print(path)
    return 0


def _arg_type(parse: Callable[[str], object], name: str):
    """An argparse ``type=`` from a parser that raises ValueError with the message."""
    def convert(text: str):
        try:
            return parse(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
    convert.__name__ = name
    return convert


def _render_options(p: argparse.ArgumentParser) -> None:
    from .render import DEFAULT_SIZE, parse_size, parse_steps
    _trace_argument(p, "default: the bundled trace")
    p.add_argument("--strategy", "-s", action="append", type=_known_strategy, metavar="NAME",
                   help="repeatable: several are drawn side by side, in this order (default next-fit, "
                        f"or the one --allocator loaded): {', '.join(strategy_names())}")
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--step", "-n", type=_step_number, metavar="N",
                       help="draw the heap after the first N operations (past the end: the end)")
    which.add_argument("--steps", type=_arg_type(parse_steps, "steps"), metavar="A:B",
                       help="draw steps A to B: one frame each in a GIF or MP4, one file each in PNG or SVG")
    p.add_argument("--output", "-o", required=True, metavar="OUT",
                   help="the file to write; its suffix picks the format: .png, .svg, .gif or .mp4 "
                        "(MP4 needs pip install 'heapscope[video]')")
    p.add_argument("--size", type=_arg_type(parse_size, "size"), default=DEFAULT_SIZE, metavar="WxH",
                   help="each strategy's window, in pixels (default %dx%d); the text is sized for a "
                        "screen that high, as in the window" % DEFAULT_SIZE)
    p.add_argument("--presenter", action="store_true", help="presenter mode: large text, thick outlines")
    p.add_argument("--theme", choices=("light", "dark"), default="light")
    p.add_argument("--fps", type=_arg_type(_frame_rate, "fps"), default=None, metavar="N",
                   help="frames a second of a GIF or MP4 (default 4; 12 with --animate)")
    p.add_argument("--animate", action="store_true",
                   help="GIF or MP4: each step plays its events, as the window does at 1 step/s "
                        "(several frames a step; the default for a GIF or MP4 of one step)")
    p.add_argument("--part", choices=("window", "map", "structure", "gauges", "plots"), default="window",
                   help="draw only this part of the window (default: the whole window)")
    add_strategy_options(p)


def _frame_rate(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0.1 <= value <= 60:
        raise ValueError(f"a frame rate is a number of frames a second from 0.1 to 60, got {text!r}")
    return value


@command("render", "draw what the window shows (PNG, SVG, GIF, MP4) without a window on screen",
         _render_options)
def cmd_render(args) -> int:
    """heapscope/render.py does the drawing; here the arguments are checked."""
    import os
    from .render import RenderError, RenderRequest, output_format, render
    strategies = args.strategy
    if not strategies:
        loaded = _loaded_names(args)
        strategies = [loaded[0]] if len(loaded) == 1 else ["next-fit"]
    try:
        output_format(args.output)
    except RenderError as exc:
        raise CliError(str(exc)) from None
    if args.output.lower().endswith(".mp4"):
        from .video import video_unavailable
        reason = video_unavailable()
        if reason:
            raise CliError(reason)
    spec = args.trace or str(default_trace_path())
    from .outputs import OutputError, check_output
    try:
        check_output(args.output, [spec] if os.path.exists(spec) else [])
    except OutputError as exc:
        raise CliError(str(exc)) from None
    # A GIF or MP4 of one step would be one still frame: it shows its events.
    one_step = args.step is not None or (args.steps is not None and args.steps[0] == args.steps[1])
    animate = args.animate or (one_step and output_format(args.output) in ("gif", "mp4"))
    request = RenderRequest(args.trace, strategies, args.output, step=args.step, steps=args.steps,
                            size=args.size, presenter=args.presenter, theme=args.theme,
                            fps=args.fps or (12.0 if animate else 4.0), part=args.part,
                            animate=animate, params=common_params(args),
                            strategy_params=policy_params(args), time_limit=args.time_limit)
    trace = load_trace(spec)
    source = spec if names_a_file(spec) else None
    from .console import bars_for
    bars = bars_for(sys.stderr, "steps")

    def warn(message: str) -> None:
        if bars:
            bars.say(f"heapscope: {message}")      # kept above the bars
        else:
            print(f"heapscope: {message}", file=sys.stderr)
    try:
        written = render(request, trace, source, _replay_bars(bars), warn)
    except RenderError as exc:
        raise CliError(str(exc)) from None
    finally:
        if bars:
            bars.close()
    for path in written:
        print(path)
    return 0


def _strategies_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("name", nargs="*", type=_known_strategy, help="only these strategies")
    add_allocator_option(p)


@command("strategies", "list the strategies and the parameters each takes", _strategies_options)
def cmd_strategies(args) -> int:
    for name in args.name or strategy_names():
        cls = STRATEGIES[name]
        print(f"{name}: {cls.title}")
        if plugins.is_user(name):
            print(f"  (yours: {plugins.ORIGINS[name]})")
        params = list(declared(cls).values())
        width = max(len(p.name) for p in params)
        for p in params:
            print(f"  {p.name.ljust(width)}  {p.accepts()}; default {p.default_text()}")
            print(f"  {' ' * width}  {p.help}")
        print()
    print("Set one with -P STRATEGY.NAME=VALUE; word, align, heap_limit and pool_size also "
          "with --word, --align, --heap-limit, --pool-size for every strategy.")
    return 0


# -------------------------------------------------------------------- sweep
def _strategy_names(text: str) -> list[str]:
    """``-s S1,S2,...``: strategy names, each known."""
    names = [w.strip() for w in text.split(",")]
    if not all(names):
        raise argparse.ArgumentTypeError(f"expected strategy names separated by commas, got {text!r}")
    return [_known_strategy(name) for name in names]


def _sweep_options(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Measure every trace x strategy x parameter grid as 'heapscope compare' does, one CSV "
        "row per cell (trace, strategy, params, then compare's measures), each row written as "
        "its cell ends. Run again with the same --output, a sweep skips the cells the file "
        "holds: a stopped sweep resumes. Exit status 0, 1 when a cell failed (its row says "
        "why), 2 for bad input or usage.")
    p.add_argument("traces", nargs="+", metavar="TRACE",
                   help="trace files, folders of them, bundled traces or workloads "
                        "(e.g. vo1989:steps=300)")
    p.add_argument("--strategy", "-s", action="append", type=_strategy_names, metavar="S1,S2,...",
                   help=f"the strategies (repeatable; default all of: {', '.join(strategy_names())})")
    p.add_argument("--param", "-P", action="append", type=_qualified,
                   metavar="STRATEGY.NAME=V1,V2,...",
                   help="a strategy's own parameter and the values to sweep, e.g. "
                        "buddy.max_order=12,14,16 (repeatable: two of one strategy sweep their product)")
    p.add_argument("--output", "-o", required=True, metavar="RESULTS.csv",
                   help="the results file: created, or appended to (its cells are not measured again)")
    p.add_argument("--parquet", metavar="FILE.parquet",
                   help="also write every row of the results file as a typed Parquet table when "
                        "the sweep ends (needs pyarrow: pip install 'heapscope[parquet]')")
    p.add_argument("--jobs", "-j", type=_workers, default=None, metavar="N",
                   help="cells measured at once, each in a worker process (default: one per core)")
    p.add_argument("--scheduler", type=_arg_type(_scheduler, "scheduler"), default=None,
                   metavar="local:N|tcp://HOST:PORT",
                   help="run the cells on a Dask cluster instead of the local pool: local:N starts "
                        "one of N workers, tcp://HOST:PORT is a running one's scheduler "
                        "(needs pip install 'heapscope[dask]')")
    add_allocator_option(p)
    add_common_options(p)
    add_time_limit_option(p)


def _scheduler(text: str):
    from .sweep_dask import parse_scheduler
    return parse_scheduler(text)


def _sweep_progress(stream, bars):
    """Cells done / total and the time left: a bar on a terminal (``bars``,
    heapscope/console.py), a line per cell otherwise (a log shows how far it
    came)."""
    def show(done: int, total: int, eta: float | None) -> None:
        if bars:
            bars.update("cells", done, total, description="sweep: cells")
            return
        left = "" if eta is None else f", about {_duration(eta)} left"
        stream.write(f"sweep: {done}/{total} cells measured{left}\n")
        stream.flush()
    return show


def _duration(seconds: float) -> str:
    seconds = int(round(seconds))
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


@command("sweep", "every trace x strategy x parameter grid, one CSV row per cell; resumable",
         _sweep_options)
def cmd_sweep(args) -> int:
    from .experiments.runner import load
    from .sweep import (ResultsFile, SweepError, cells, check_traces, parse_grid, run_sweep,
                        trace_specs)
    _loaded_names(args)
    names = list(dict.fromkeys(n for group in args.strategy or [[]] for n in group)) or strategy_names()
    common = common_params(args)
    try:
        specs = trace_specs(args.traces)
        grid = parse_grid(args.param or [])
    except SweepError as exc:
        raise CliError(str(exc)) from None
    spelt = {p.name: _option_name(p) for p in Strategy.params if p.name in common}
    for strategy, axes in grid.items():
        _refuse_pool_with_limit(dict(spelt, **{name: f"-P {strategy}.{name}" for name, values
                                               in axes.items() if any(v is not None for v in values)}))
    _warn_unused_policy(grid, names)
    if args.scheduler:
        from .sweep_dask import dask_missing
        if dask_missing():
            raise CliError(dask_missing())
        if args.jobs:
            raise CliError("--jobs sets the local pool; with --scheduler, local:N sets the workers")
        if args.allocator:
            # their time limit and isolation are the local pool's (allocators/isolation.py)
            raise CliError("--allocator: a strategy of your own runs on the local pool only, "
                           "not with --scheduler")
    sources = [plugins.parse_spec(spec).path for spec in args.allocator or []]
    _check_output(args.output, [s for s in specs if os.path.exists(s)] + sources, what="results")
    if args.parquet:
        from .sweep import parquet_missing
        if parquet_missing():
            raise CliError(parquet_missing())
        if os.path.realpath(args.parquet) == os.path.realpath(args.output):
            raise CliError(f"{args.parquet}: --output and --parquet name the same file")
        _check_output(args.parquet, [s for s in specs if os.path.exists(s)] + sources,
                      what="Parquet table")
    try:
        check_traces(specs, load)
        every = cells(specs, names, grid, common)
        results = ResultsFile(args.output, [k for k, _, _ in COLUMNS if k != "strategy"]).open()
    except SweepError as exc:
        raise CliError(str(exc)) from None
    except OSError as exc:
        raise CliError(f"{args.output}: cannot write the results: {exc.strerror or exc}") from None
    todo = [c for c in every if c.key not in results.held]
    print(f"sweep: {count(len(every), 'cell')} ({count(len(specs), 'trace')} x "
          f"{count(len(names), ('strategy', 'strategies'))} and their grids); {len(every) - len(todo)} already in {args.output}, {len(todo)} to measure",
          file=sys.stderr)
    from .console import bars_for
    bars = bars_for(sys.stderr, "cells")
    progress = _sweep_progress(sys.stderr, bars)
    try:
        if args.scheduler:
            from .sweep_dask import run_on_dask
            errors = run_on_dask(todo, results, args.scheduler, progress)
        else:
            errors = run_sweep(todo, results, args.jobs, args.time_limit, progress)
    except SweepError as exc:
        raise CliError(str(exc)) from None
    finally:
        if bars:
            bars.close()
        results.close()
    if args.parquet:
        from .sweep import write_parquet
        whole = {k for k, _, f in COLUMNS if f == "{:d}"}
        try:
            n = write_parquet(args.output, args.parquet, whole)
        except OSError as exc:
            raise CliError(f"{args.parquet}: cannot write the Parquet table: "
                           f"{exc.strerror or exc}") from None
        print(f"{args.parquet}: {count(n, 'row')} (Parquet)", file=sys.stderr)
    if errors:
        print(f"heapscope: {errors} of {count(len(todo), 'cell')} failed (their rows say why)",
              file=sys.stderr)
    return 1 if errors else 0


# --------------------------------------------------------------- experiment
def _assignment(text: str) -> tuple[str, str]:
    key, eq, value = text.partition("=")
    if not eq or not key.strip():
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE, got {text!r}")
    return key.strip(), value.strip()


def _workers(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if not 1 <= value <= 64:
        raise argparse.ArgumentTypeError(f"expected a number of processes in 1..64, got {text!r}")
    return value


#: in an option's help, replaced by the experiments' names when help is printed
EXPERIMENT_NAMES = "<experiment names>"


class _ExperimentHelp(argparse.HelpFormatter):
    """``experiment --help``'s formatter: it names the experiments only when
    the help is printed.  The parser is built at every start of every
    command, and the registry of experiments imports each seed's module and
    the runner (about 30 ms of CPU) that no other command uses."""

    def _get_help_string(self, action):
        text = super()._get_help_string(action)
        if text and EXPERIMENT_NAMES in text:
            from .experiments import EXPERIMENTS
            text = text.replace(EXPERIMENT_NAMES, ", ".join(EXPERIMENTS))
        return text


def _experiment_options(p: argparse.ArgumentParser) -> None:
    from .experiments.output import FORMATS
    p.formatter_class = _ExperimentHelp
    p.description = ("Rerun a seed's experiment: its workload with its parameters, over the "
                     "seed's allocators and ours, printed in the seed's own columns with its "
                     "published figures beside ours (docs/experiments.md). Times are ours: "
                     "work units and wall time on this machine. Exit status 0, or 1 when a "
                     "strategy failed (its row says why), 2 for bad input or usage.")
    p.add_argument("name", nargs="?", metavar="NAME",
                   help=f"one of: {EXPERIMENT_NAMES} (none: list them with their settings)")
    p.add_argument("--strategy", "-s", action="append", metavar="NAME",
                   help="only this strategy (repeatable; default: the seed's and all of ours)")
    p.add_argument("--workload", "-W", action="append", type=_assignment, metavar="KEY=VALUE",
                   help="a parameter of the experiment's workload, e.g. -W steps=2000 (repeatable)")
    p.add_argument("--set", "-X", action="append", type=_assignment, metavar="NAME=VALUE",
                   dest="settings", help="one of the experiment's settings, e.g. -X runs=3 "
                   "(repeatable; 'heapscope experiment' lists them)")
    p.add_argument("--traces", "-t", action="append", metavar="FOLDER|FILE",
                   help="replay your own recorded traces instead of the experiment's (a folder "
                        "stands for the files in it; repeatable), for experiments over recorded "
                        "traces (coppa2010)")
    p.add_argument("--format", "-f", choices=FORMATS, default="table")
    p.add_argument("--output", "-o", metavar="FILE",
                   help="write the table (in --format) to FILE instead of printing it")
    p.add_argument("--plot", metavar="FILE.png", help="save the experiment's chart as a PNG image")
    p.add_argument("--jobs", "-j", type=_workers, default=None, metavar="N",
                   help="replays at once, each in its own process (default: one per core)")
    add_allocator_option(p)
    add_time_limit_option(p)


def experiments_text() -> str:
    """Every experiment with its seed, its settings and its workload."""
    from .experiments import EXPERIMENTS
    lines = []
    for exp in EXPERIMENTS.values():
        lines += [f"{exp.name}: {exp.title}", f"  {exp.source}"]
        if exp.workload:
            lines.append(f"  workload {exp.workload} (-W KEY=VALUE sets its parameters"
                         + (f"; the experiment sets {', '.join(exp.workload_fixed)} itself)"
                            if exp.workload_fixed else ")"))
        if exp.settings:
            lines.append("  settings (-X NAME=VALUE):")
        for param in exp.settings:
            lines.append(f"    {param.name}: {param.accepts()}; default {param.default_text()}")
            lines.append(f"      {param.help}")
        lines.append("")
    lines.append("Run one: heapscope experiment NAME [--format table|csv|json|markdown] [--plot FILE.png]")
    return "\n".join(lines)


@command("experiment", "rerun a seed's experiment and print its table beside the seed's figures",
         _experiment_options)
def cmd_experiment(args) -> int:
    from .experiments import ExperimentError, run_experiment
    from .experiments.output import render
    from .console import bars_for
    if not args.name:
        print(experiments_text())
        return 0
    _loaded_names(args)
    _check_experiment_outputs(args)     # before the replays: a bad path costs nothing
    bars = bars_for(sys.stderr, "runs")
    runs = [0]

    def progress(done: int, total: int, job) -> None:
        runs[0] = total
        if bars:
            bars.update("runs", done, total, description=f"experiment {args.name}")

    clock = RunClock()
    try:
        result = run_experiment(args.name, args.strategy, dict(args.settings or []),
                                dict(args.workload or []), args.jobs, progress,
                                args.time_limit, args.traces)
    except ExperimentError as exc:
        raise CliError(str(exc)) from None
    finally:
        if bars:
            bars.close()
    # its time, on stderr: the table stays what it was
    print(f"experiment {args.name}: {count(runs[0], 'run')} in {clock.text()}", file=sys.stderr)
    from .console import is_terminal
    text = render(result, args.format, terminal=not args.output and is_terminal(sys.stdout))
    # The table first: a chart that fails to save must not lose the run.
    if args.output:
        _write_text(args.output, text if text.endswith("\n") else text + "\n")
        print(f"{args.output}: the {args.name} table ({args.format})", file=sys.stderr)
    else:
        print(text)
        sys.stdout.flush()
    if args.plot:
        _save_chart(result, args.plot)
    # as compare: a strategy that failed says so in its row, and once on stderr
    failed = dict.fromkeys((row["strategy"], row["error"]) for table in result.tables
                           for row in table.rows if row.get("error"))
    for strategy, error in failed:
        print(f"heapscope: {strategy} failed: {error}", file=sys.stderr)
    return 1 if failed else 0


class RunClock:
    """Wall time and CPU time (this process and the workers it waited for)
    since it was made, for a command's closing line."""

    def __init__(self) -> None:
        self.wall0 = time.perf_counter()
        self.cpu0 = self._cpu()

    @staticmethod
    def _cpu() -> float:
        import resource
        own, children = (resource.getrusage(who) for who in (resource.RUSAGE_SELF,
                                                             resource.RUSAGE_CHILDREN))
        return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime

    def text(self) -> str:
        """'50.1 s (97.0 s of CPU)'."""
        return (f"{time.perf_counter() - self.wall0:.1f} s "
                f"({self._cpu() - self.cpu0:.1f} s of CPU)")


def _check_experiment_outputs(args) -> None:
    """CliError (exit 2) before any work when ``--output`` or ``--plot``
    cannot be written, name one file, or the chart cannot be drawn here."""
    outputs = [(path, what) for path, what in ((args.output, "table"), (args.plot, "chart"))
               if path]
    sources = [plugins.parse_spec(spec).path for spec in args.allocator or []]   # your .py files
    for path, what in outputs:
        _check_output(path, sources, what=what)
    if len(outputs) == 2 and os.path.realpath(args.output) == os.path.realpath(args.plot):
        raise CliError(f"{args.plot}: --output and --plot name the same file")
    if args.plot:
        import importlib.util
        missing = [m for m in ("PySide6", "pyqtgraph") if importlib.util.find_spec(m) is None]
        if missing:     # said now, not after the experiment ran
            raise CliError(f"--plot needs PySide6 and pyqtgraph ({', '.join(missing)} not installed)")


def _write_text(path: str, text: str) -> None:
    """``text`` to ``path`` through a temporary file renamed over it
    (heapscope/outputs.py): a failure leaves what ``path`` held."""
    from .outputs import atomic_output
    try:
        with atomic_output(path, "w") as f:
            f.write(text)
    except OSError as exc:
        raise CliError(f"{path}: cannot write the file: {exc.strerror or exc}") from None


def _save_chart(result, path: str) -> None:
    """The experiment's chart as a PNG at ``path``, written beside it and
    renamed over it when complete."""
    from .outputs import atomic_path
    try:
        from .gui.experiment_chart import save_chart
    except ImportError as exc:
        raise CliError(f"--plot needs PySide6 and pyqtgraph ({exc})") from None
    try:
        with atomic_path(path) as partial:
            save_chart(result.chart, partial)
    except OSError as exc:      # Qt gives no reason, and would name the temporary file
        reason = f": {exc.strerror}" if exc.strerror else ""
        raise CliError(f"{path}: cannot write the chart{reason}") from None


# -------------------------------------------------------------------- grade
def default_grade_traces() -> list[str]:
    """What ``heapscope grade`` replays when given no trace: the bundled default
    trace (Vo's 1989 workload), the other generated workloads with their
    default parameters, and the bundled real programs."""
    from .traces.bundled import examples
    from .traces.workloads import WORKLOADS
    out = ["default"]
    out += [name for name in WORKLOADS if name != "vo1989"]      # vo1989() is default.rep
    out += [ex.name for ex in examples() if ex.name != "default"]
    return out


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {text!r}")
    return value


def _grade_options(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Replay traces through a strategy of your own, check it at every operation as the "
        "CS:APP malloc lab driver does (payloads aligned, inside the heap, never overlapping "
        "a live one; realloc keeps the program's bytes) and more (no exception, the heap walk "
        "covers the heap, your _check_structure and structure() hold), and score it: "
        "utilisation and throughput per trace, and a performance index of "
        "100 x (0.6 x mean utilisation + 0.4 x min(throughput / TLSF's, 1)), zero when any "
        "trace has an error. Utilisation is the trace's peak live payload / (final heap + the "
        "bytes of every request that failed); a NULL is an error unless the heap was refused "
        "growth (--heap-limit, --pool-size). Exit status 0 when every trace is valid, 1 when "
        "one is not.")
    p.add_argument("target", metavar="FILE.py:CLASS",
                   help="your strategy (or the name of one an installed package provides)")
    p.add_argument("traces", nargs="*", metavar="TRACE",
                   help="trace files, bundled traces or workloads (default: "
                        + ", ".join(default_grade_traces()) + "); a bundled name always "
                        "means the bundled trace: a file of the current folder needs a path, "
                        "e.g. ./default")
    p.add_argument("--format", "-f", choices=("text", "json"), default="text")
    p.add_argument("--check-every", type=_positive, default=None, metavar="N",
                   help="run the heap walk checks after every N operations (1: after each one; "
                        "default: as often as they cost no more than your strategy's own time)")
    p.add_argument("--baseline", metavar="NAME", default=None,
                   help="also score a built-in strategy (e.g. tlsf, next-fit, segregated-fit) "
                        "on the same traces, beside yours, to see where you stand")
    add_strategy_options(p)


def _grade_target(text: str, time_limit: float = DEFAULT_TIME_LIMIT):
    """The class ``heapscope grade`` was given: FILE.py:Class or a user strategy's name."""
    from .allocators.user import UserStrategy
    if text in STRATEGIES and ".py:" not in text:
        cls = STRATEGIES[text]
        if not issubclass(cls, UserStrategy):
            raise CliError(f"{text} is a built-in strategy; grade takes a strategy of your own: "
                           "FILE.py:ClassName")
        return cls, None
    plugins.probe_import(text, time_limit)     # a loop or an exit at import time stops there
    return plugins.load_file(text), text


@command("grade", "check and score a strategy of your own on traces (like the CS:APP malloc lab)",
         _grade_options)
def cmd_grade(args) -> int:
    from .allocators.isolated_grade import grade_in_workers
    _loaded_names(args)
    cls, spec = _grade_target(args.target, args.time_limit)
    params = common_params(args)
    policy = policy_params(args)
    own = dict(params, **policy.get(cls.name, {}))
    baseline = _grade_baseline(args.baseline)
    names = args.traces or default_grade_traces()
    traces = [(name, load_trace(name)) for name in names]
    from .console import bars_for
    bars = bars_for(sys.stderr, "%")
    # each trace graded in a worker process: a plugin that loops, exits or
    # dies is stopped and graded invalid (allocators/isolated_grade.py)
    try:
        result = grade_in_workers(cls, traces, own, check_every=args.check_every,
                                  reference_params=params,
                                  progress=_grade_progress(bars) if bars else None,
                                  baseline=baseline, time_limit=args.time_limit)
    finally:
        if bars:
            bars.close()
    reopen = _reopen_command(args, cls.name, spec, params, policy)
    if args.format == "json":
        print(json.dumps(grade_json(result, spec, reopen), indent=2))
    else:
        from .console import is_terminal
        print(grade_text(result, spec, reopen, terminal=is_terminal(sys.stdout)))
    return 0 if result.valid else 1


def _grade_baseline(name: str | None) -> str | None:
    """``--baseline NAME``: a built-in strategy, checked before any work."""
    from .allocators.user import UserStrategy
    if name is None:
        return None
    cls = STRATEGIES.get(name)
    if cls is None or issubclass(cls, UserStrategy):
        builtin = [n for n in strategy_names() if not issubclass(STRATEGIES[n], UserStrategy)]
        raise CliError(f"--baseline {name}: not a built-in strategy (one of: {', '.join(builtin)})")
    return name


def _grade_progress(bars):
    """grade's ``progress(trace, what)`` on a terminal (heapscope/console.py):
    a bar per trace, moved by ``checking 40%`` and named by what runs
    (``timing``, ``baseline first-fit``), then the trace's summary line kept
    above the bars (stderr, with --format json too: stdout stays the report)."""
    percent: dict[str, int] = {}

    def show(trace: str, what: str) -> None:
        if what.startswith("done: "):
            bars.remove(trace)
            bars.say(f"trace {trace}: {what[6:]}")
            return
        word, _, rest = what.partition(" ")
        if word == "checking" and rest.endswith("%") and rest[:-1].isdigit():
            percent[trace] = int(rest[:-1])
            what = word
        bars.update(trace, percent.get(trace, 0), 100, description=f"{trace}: {what}")
    return show


def _reopen_command(args, name: str, spec: str | None, params: dict, policy: dict):
    """``step, trace -> the command that opens the window there``."""
    import shlex
    options = []
    for param in Strategy.params:
        if param.name in params:
            options += [_option_name(param), str(params[param.name])]
    for strategy, values in policy.items():
        for key, value in values.items():
            options += ["-P", f"{strategy}.{key}={value}"]
    allocators = ["--allocator", spec] if spec else []

    def command(trace_spec: str, step: int) -> str:
        words = ["heapscope", "open", trace_spec, *allocators, "--strategy", name, "--step", str(step),
                 *options]
        return " ".join(shlex.quote(w) for w in words)
    return command


def _kops(ops_per_s) -> str:
    return "-" if not ops_per_s else f"{ops_per_s / 1000:.1f}"


def grade_text(result, spec: str | None, reopen, terminal: bool = False) -> str:
    """The report of ``heapscope grade`` for people (``terminal``: its table
    styled for one, heapscope/console.py)."""
    from .allocators.grading import REFERENCE
    from .console import table_text
    n = len(result.traces)
    who = f"{result.strategy} ({spec})" if spec else result.strategy
    lines = [f"grading {who} on {count(n, 'trace')}",
             "checks: each result aligned, inside the heap, overlapping no live payload; realloc "
             "keeping the bytes;",
             "  no NULL unless the heap was refused growth; the heap grown only by _take_core; the "
             "same addresses every replay;",
             "  your books right; no exception; your walk, _check_structure and structure() as "
             "often as they cost no more than your own code",
             ""]
    base = result.baseline
    head = ["trace", "ops", "valid", "util", "Kops/s", f"{REFERENCE} Kops/s"]
    if base:
        head += [f"baseline {base} util", f"baseline {base} Kops/s"]
    rows = []
    for t in result.traces:
        row = [t.name, str(t.ops), "yes" if t.valid else "NO", _util(t.utilisation),
               _kops(t.throughput), _kops(t.reference_throughput)]
        if base:
            b = t.baseline
            row += [_util(b.utilisation), _kops(b.throughput(t.ops))] if b else ["-", "-"]
        rows.append(row)
    lines.append(table_text(head, rows, terminal=terminal, rule=False))
    refused = [t for t in result.traces if t.valid and t.failed]
    if refused:
        lines.append("")
        for t in refused:
            lines.append(f"{t.name}: {count(t.failed, 'request')} refused for "
                         f"the heap limit or the pool ({t.failed_bytes:,} B, counted in its "
                         "utilisation as if the heap had grown by them)")
    if base:
        broken = [t for t in result.traces if t.baseline and t.baseline.error]
        for t in broken:
            lines.append(f"{t.name}: the baseline {base} could not replay it ({t.baseline.error})")
    for t in result.traces:
        if t.valid:
            continue
        e = t.error
        where = f"step {e.step}" if e.step else "before the first operation"
        if t.path and t.line:
            where += f" ({_shown_trace_path(t.path)} line {t.line})"
        what = t.operation
        if e.operation and not e.operation.startswith("malloc"):
            what += f", {e.operation}"     # the address the program passed
        lines += ["", f"{t.name}: error at {where}" + (f": {what}" if what else "")]
        lines.append(f"  in {e.where()}")
        lines.append(f"  {e.message}")
        if e.step:
            lines.append(f"  see it: {reopen(t.spec, e.step)}")
    lines.append("")
    bad = sum(1 for t in result.traces if not t.valid)
    if bad:
        lines.append(f"perf index 0 / 100: {bad} of {count(n, 'trace')} "
                     f"{'has' if bad == 1 else 'have'} an error")
        return "\n".join(lines)
    util = result.mean_utilisation or 0.0
    ratio = result.throughput_ratio or 0.0
    lines.append(f"mean utilisation {util:.3f} (per trace: the trace's peak live payload / "
                 "(final heap + failed requests' bytes))")
    lines.append(f"throughput {_kops(result.throughput)} Kops/s; the reference, the built-in "
                 f"{REFERENCE} on the same traces in this run: {_kops(result.reference_throughput)} "
                 f"Kops/s (ratio {ratio:.2f})")
    if result.reference_note:
        lines.append(f"  ({result.reference_note})")
    lines.append(f"perf index = 60 x {util:.3f} + 40 x min({ratio:.2f}, 1) = "
                 f"{result.perf_index:.1f} / 100")
    if base:
        butil = result.baseline_mean_utilisation
        lines.append(f"baseline {base} (built in, for comparison): mean utilisation "
                     f"{_util(butil)}, throughput {_kops(result.baseline_throughput)} Kops/s")
    return "\n".join(lines)


def _util(value) -> str:
    return "-" if value is None else f"{value:.3f}"


def _shown_trace_path(path: str) -> str:
    import os
    rel = os.path.relpath(path)
    return os.path.basename(path) if rel.startswith("..") else rel


def grade_json(result, spec: str | None, reopen) -> dict:
    """The report of ``heapscope grade --format json``, for autograders."""
    from .allocators.grading import REFERENCE, UTILISATION_RULE, WEIGHT_THROUGHPUT, WEIGHT_UTIL
    traces = []
    for t in result.traces:
        error = None
        if t.error is not None:
            e = t.error
            error = {"step": e.step, "operation": t.operation or None, "call": e.operation,
                     "trace_file": t.path, "line": t.line, "method": e.method,
                     "class": e.cls_name, "location": e.location, "message": e.message,
                     "open": reopen(t.spec, e.step) if e.step else None}
        row = {"trace": t.spec, "name": t.name, "file": t.path, "ops": t.ops,
               "valid": t.valid, "error": error, "max_live": t.max_live, "heap": t.heap,
               "failed_requests": t.failed, "failed_bytes": t.failed_bytes,
               "utilisation": t.utilisation, "seconds": t.seconds,
               "throughput": t.throughput, "reference_seconds": t.reference_seconds,
               "reference_throughput": t.reference_throughput}
        if result.baseline:
            b = t.baseline
            row["baseline"] = None if b is None else {
                "heap": b.heap, "failed_bytes": b.failed_bytes, "utilisation": b.utilisation,
                "seconds": b.seconds, "throughput": b.throughput(t.ops), "error": b.error}
        traces.append(row)
    baseline = None
    if result.baseline:
        baseline = {"strategy": result.baseline, "mean_utilisation": result.baseline_mean_utilisation,
                    "throughput": result.baseline_throughput,
                    "what": "a built-in strategy scored by the same rule on the same traces, "
                            "for comparison (not part of the perf index)"}
    return {"strategy": result.strategy, "allocator": spec, "params": result.params,
            "baseline": baseline,
            "valid": result.valid, "traces": traces,
            "mean_utilisation": result.mean_utilisation if result.valid else None,
            "throughput": result.throughput if result.valid else None,
            "reference": {"strategy": REFERENCE, "throughput": result.reference_throughput,
                          "what": f"the built-in {REFERENCE} on the same traces, timed in the same run",
                          "note": result.reference_note or None},
            "throughput_ratio": result.throughput_ratio if result.valid else None,
            "weights": {"utilisation": WEIGHT_UTIL, "throughput": WEIGHT_THROUGHPUT},
            "utilisation_rule": UTILISATION_RULE,
            "perf_index": result.perf_index}


def _record_options(p: argparse.ArgumentParser) -> None:
    p.usage = "heapscope record [-h] -o OUT.rep [--keep-live] -- COMMAND [ARGS...]"
    p.description = ("Run COMMAND with heapscope's recorder loaded (LD_PRELOAD; Linux, "
                     "dynamically linked programs) and write its malloc/free trace. The "
                     "program's output and exit status pass through; SIGTERM, SIGINT and "
                     "SIGHUP sent to heapscope go to the program, and what it recorded is "
                     "still written (marked partial). OUT may not be the program or one of "
                     "its input files.")
    p.add_argument("-o", "--output", required=True, metavar="OUT.rep",
                   help="the main program's trace (.rep or .rep.gz); other processes it starts "
                   "get OUT.PID.PROGRAM.rep beside it")
    p.add_argument("--keep-live", action="store_true",
                   help="leave blocks still live at exit unfreed (default: free them at the end)")
    p.add_argument("program", nargs=argparse.REMAINDER, metavar="-- COMMAND ARGS...")


@command("record", "run a program and record its mallocs and frees as a .rep trace",
         _record_options)
def cmd_record(args) -> int:
    """Run a program under the recorder; its exit status is ours (issue 13),
    also when a signal sent to heapscope stopped it (issue 19)."""
    from .outputs import OutputError
    from .traces.preload import RecorderUnavailable
    from .traces.record import record, summary_lines
    command = args.program[1:] if args.program[:1] == ["--"] else args.program
    if not command:
        raise CliError("record: say which program to run: heapscope record -o OUT.rep -- COMMAND ARGS...")
    try:
        rec = record(command, args.output, keep_live=args.keep_live)
    except (RecorderUnavailable, OutputError) as exc:
        raise CliError(str(exc)) from None
    except OSError as exc:
        raise CliError(f"cannot run {command[0]!r}: {exc.strerror or exc}") from None
    print("\n".join(summary_lines(rec)), file=sys.stderr)
    return rec.status


#: what ``convert --to`` writes, and the extensions that choose it without --to
CONVERT_TARGETS = {"rep": (".rep", ".rep.gz"), "heap": (".heap", ".heap.gz")}


def _convert_options(p: argparse.ArgumentParser) -> None:
    p.description = ("Read IN -- a .rep/.rep.gz trace, the readable form (a = malloc(240), "
                     "free(a): a .heap file), or the output of ltrace -e "
                     "malloc+free+calloc+realloc (with or without -f), or villoc's input, "
                     "or a memray capture (memray run -o X.bin; needs heapscope[memray]) -- "
                     "chosen by its content, and write it as a .rep trace (header counted) or "
                     "in the readable form: by OUT's extension (.rep, .heap, either + .gz), "
                     "or --to; any other name gets a .rep.")
    p.add_argument("input", metavar="IN")
    p.add_argument("-o", "--output", required=True, metavar="OUT")
    p.add_argument("--to", choices=tuple(CONVERT_TARGETS),
                   help="the form to write: rep (CS:APP malloc lab) or heap (the readable form, "
                   "names a, b, ... in order of first use); default: by OUT's extension")
    p.add_argument("--pid", type=int, action="append",
                   help="ltrace -f output: keep only this pid's calls (repeatable; ltrace cannot "
                   "tell threads, which share a heap, from processes, which do not)")
    p.add_argument("--keep-live", action="store_true",
                   help="leave blocks still live at the end of the input unfreed")
    p.add_argument("--keep", action="append", choices=("pymalloc", "mmap"),
                   help="a memray capture: keep pymalloc's or mmap's records too (left out by "
                   "default: only the system allocator's calls are the trace; repeatable)")
    p.add_argument("--thread", type=int, metavar="N",
                   help="a memray capture: keep only thread N's calls (memray's numbering, 1 for "
                   "the main thread; by default all threads are merged in record order)")


def convert_target(output: str, to: str | None) -> str:
    """``"rep"`` or ``"heap"``: ``to`` if given, else by the output's extension
    (a .rep for any other name, as ``convert`` wrote before the readable form)."""
    if to is not None:
        return to
    low = output.lower()
    return next((form for form, exts in CONVERT_TARGETS.items() if low.endswith(exts)), "rep")


@command("convert", "convert a trace (.rep, readable .heap, ltrace or villoc output) to a .rep "
         "or a .heap file", _convert_options)
def cmd_convert(args) -> int:
    """Any trace heapscope reads to a .rep file or the readable form."""
    from .traces import open_source, write_rep
    from .traces.formats import READERS, sniff_source
    from .traces.ltrace import import_ltrace_source, skipped_lines
    from .traces.readable import write_readable_file
    target = convert_target(args.output, args.to)
    _check_output(args.output, [args.input], "converted trace")   # before a byte is read
    notes: list[str] = []
    with open_source(args.input) as source:      # opened once: a pipe can be converted too
        form = sniff_source(source)
        if (args.keep or args.thread is not None) and form != "memray":
            raise CliError("--keep and --thread apply to memray captures only")
        if form == "ltrace":
            trace, counts, pointer_counts = import_ltrace_source(source, pids=args.pid,
                                                                 keep_live=args.keep_live)
            notes = skipped_lines(counts, pointer_counts)
        elif form == "memray" and not args.pid:
            from .traces.memray_capture import import_memray
            from .traces.memray_capture import skipped_lines as memray_skipped
            trace, counts, pointer_counts = import_memray(source.path, tuple(args.keep or ()),
                                                          keep_live=args.keep_live,
                                                          thread=args.thread)
            notes = memray_skipped(counts, pointer_counts)
        elif args.pid or args.keep_live:
            raise CliError("--pid applies to ltrace/villoc input only, --keep-live to ltrace "
                           "and memray input")
        else:
            trace = READERS[form](source)
    # a temporary file renamed over OUT when complete (heapscope/outputs.py)
    if target == "heap":
        write_readable_file(trace, args.output)
    else:
        write_rep(trace, args.output)
    stats = trace.stats()
    print(f"{args.output}: {count(len(trace), 'op', grouped=True)}, "
          f"{count(trace.num_ids, 'id', grouped=True)}, peak live "
          f"{count(stats['max_live_bytes'], 'byte', grouped=True)} in "
          f"{count(stats['max_live_blocks'], 'block', grouped=True)}",
          file=sys.stderr)
    for note in notes:
        print(f"  {note}", file=sys.stderr)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="heapscope",
        description="Replay malloc/free traces through classic allocator strategies. "
                    "Without a command, the window opens on the bundled trace.")
    from .version import package_version
    parser.add_argument("--version", action="version",
                        version=f"heapscope {package_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for cmd in COMMANDS:
        p = sub.add_parser(cmd.name, help=cmd.help, description=cmd.help)
        cmd.options(p)   # may set its own description, epilog and formatter
        p.set_defaults(func=cmd.run)
    return parser


# ------------------------------------------------------------ user strategies
def _allocator_commands() -> dict[str, set[str]]:
    """The subcommands whose options include --allocator, with all their option strings."""
    out = {}
    for cmd in COMMANDS:
        p = argparse.ArgumentParser(add_help=False)
        cmd.options(p)
        options = {o for action in p._actions for o in action.option_strings}
        if ALLOCATOR_OPTION in options:
            out[cmd.name] = options
    return out


def allocator_specs(argv: list[str], options: set[str] = frozenset({ALLOCATOR_OPTION})) -> list[str]:
    """The values of --allocator in ``argv`` (up to ``--``), as argparse reads
    them given the command's ``options``: ``--allocator X``, ``--allocator=X``
    and abbreviations that name no other option (``--allo``; ``--al`` could be
    ``--align``, and ``inspect --all`` is an option of its own)."""
    out = []
    i = 0
    while i < len(argv):
        word = argv[i]
        if word == "--":
            break
        key, eq, value = word.partition("=")
        if key.startswith("--") and ALLOCATOR_OPTION.startswith(key) and (
                key == ALLOCATOR_OPTION or (key not in options and
                                            [o for o in options if o.startswith(key)] == [ALLOCATOR_OPTION])):
            if eq:
                out.append(value)
            elif i + 1 < len(argv):
                out.append(argv[i + 1])
                i += 1
        i += 1
    return out


def load_allocators(argv: list[str]) -> list[str]:
    """Register the installed user strategies and those --allocator names, when
    the command takes strategies; before the parser is built, so that its help
    and ``--strategy`` know them.  PluginError names a file that cannot be loaded."""
    command_name = next((w for w in argv if not w.startswith("-")), "open")
    options = _allocator_commands().get(command_name)
    if options is None:
        return []
    plugins.load_installed(
        warn=lambda message: print(f"heapscope: warning: {message}; left out", file=sys.stderr))
    specs = allocator_specs(argv, options)
    limit = _time_limit_in(argv)
    for spec in specs:
        plugins.probe_import(spec, limit)     # a loop or an exit at import time stops there
    return [plugins.load_file(spec).name for spec in specs]


def _time_limit_in(argv: list[str]) -> float:
    """``--time-limit``'s value in ``argv`` before the parser exists (the
    default when absent or not a number: the parser reports a bad one)."""
    for i, word in enumerate(argv):
        if word == "--":
            break
        key, eq, value = word.partition("=")
        if key == "--time-limit":
            value = value if eq else (argv[i + 1] if i + 1 < len(argv) else "")
            try:
                return time_limit_text(value)
            except ValueError:
                break
    return DEFAULT_TIME_LIMIT


def _loaded_names(args) -> list[str]:
    """The names of the strategies --allocator loaded (loading any the scan missed)."""
    return [plugins.load_file(spec).name for spec in getattr(args, "allocator", None) or []]


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    argv = lesson_shorthand(argv or ["open"])
    try:
        load_allocators(argv)
    except plugins.PluginError as exc:
        print(f"heapscope: error: {exc}", file=sys.stderr)
        return 2
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except (TraceError, CliError, plugins.PluginError, UserStrategyError) as exc:
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
