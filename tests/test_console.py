"""heapscope/console.py: the command line's tables and progress bars, drawn
by rich.  Off a terminal a table is the plain layout scripts read (written
out here by hand); on a forced terminal the bars show each task's rate and
time left, worked out here from a clock the test drives."""

import io
import re

import pytest
from rich.console import Console

from heapscope.cli import main
from heapscope.console import Bars, RunOn, bars_for, is_terminal, table_text

ESCAPE = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def test_a_plain_table_aligns_names_left_numbers_right_and_runs_notes_on():
    text = table_text(["strategy", "ops", "util"],
                      [["tlsf", "1000", "0.970"], RunOn(["a-long-name"], 1, "error: refused"),
                       ["buddy", "12", "0.5"]])
    # widths by hand: 11 (a-long-name), 4 (ops, 1000), 5 (util, 0.970)
    assert text == ("strategy      ops   util\n"
                    "-----------  ----  -----\n"
                    "tlsf         1000  0.970\n"
                    "a-long-name  error: refused\n"
                    "buddy          12    0.5")


def test_without_its_rule_and_on_a_terminal_the_same_cells_stay_in_place():
    header, rows = ["trace", "ops"], [["gcc-cc1", "63678"], ["a", "5"]]
    assert table_text(header, rows, rule=False) == "trace      ops\ngcc-cc1  63678\na            5"
    styled = table_text(header, rows, terminal=True)
    assert "\x1b[" in styled                          # bold header, dim rule
    assert ESCAPE.sub("", styled) == table_text(header, rows)


def test_a_pipe_is_no_terminal_and_gets_no_bars(monkeypatch):
    for name in ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE"):
        monkeypatch.delenv(name, raising=False)
    assert not is_terminal(io.StringIO()) and bars_for(io.StringIO(), "steps") is None


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def test_a_bar_per_task_with_its_rate_and_time_left():
    stream, clock = io.StringIO(), Clock()
    console = Console(file=stream, force_terminal=True, width=120, color_system=None)
    bars = Bars(stream, "steps", console=console, clock=clock, transient=False)
    bars.update("tlsf", 0, 10_000)
    bars.update("buddy", 0, 4_000)
    for second in range(1, 5):              # tlsf 1000 steps a second, buddy 500
        clock.now = 100.0 + second
        bars.update("tlsf", 1000 * second, 10_000)
        bars.update("buddy", 500 * second, 4_000)
    bars.close()
    last = {}
    for line in ESCAPE.sub("\n", stream.getvalue()).replace("\r", "\n").splitlines():
        if line.strip():
            last[line.split()[0]] = line
    # tlsf: 4000 of 10000 at 1000/s: 40%, 6 s left; buddy: 2000 of 4000 at 500/s: 4 s left
    assert re.search(r"━.* 40% +4000/10000 +1,000 steps/s +0:00:04 ETA 0:00:06$", last["tlsf"]), last["tlsf"]
    assert re.search(r"━.* 50% +2000/4000 +500 steps/s +0:00:04 ETA 0:00:04$", last["buddy"]), last["buddy"]


def test_compare_on_a_forced_terminal_draws_bars_and_the_same_table(monkeypatch, capsys):
    argv = ["compare", "vo1989:steps=400", "-s", "tlsf", "-s", "first-fit"]
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    assert main(argv) == 0
    plain, plain_err = capsys.readouterr()
    assert "\x1b[" not in plain + plain_err and "━" not in plain_err   # a pipe: no bars
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert main(argv) == 0
    styled, err = capsys.readouterr()
    assert "━" in err and "ETA" in err and "steps/s" in err and "tlsf" in err
    # the same rows, once the styles are taken off (cpu s differs run to run)
    def cells(text):
        return [line.split()[:-1] for line in ESCAPE.sub("", text).splitlines()]
    assert cells(styled) == cells(plain)


@pytest.mark.parametrize("force", ["1", ""])
def test_render_on_a_terminal_or_not_draws_its_picture(monkeypatch, capsys, tmp_path, force):
    # on a terminal render used to call the progress printer without its
    # strategy names and died with a TypeError
    monkeypatch.setenv("QT_QPA_PLATFORM", "offscreen")
    monkeypatch.setenv("FORCE_COLOR", force) if force else monkeypatch.delenv("FORCE_COLOR", raising=False)
    out = tmp_path / "x.png"
    assert main(["render", "vo1989:steps=100", "-s", "first-fit", "--step", "50",
                 "-o", str(out)]) == 0
    assert out.stat().st_size > 1000
    assert capsys.readouterr().out.strip().endswith("x.png")
