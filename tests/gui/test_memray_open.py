"""The window opens a memray capture as it opens any trace, and refuses an
aggregated one with a dialog naming it."""

import subprocess
import sys

import pytest

from heapscope.traces import ALLOC
from .conftest import wait_loaded

memray = pytest.importorskip("memray", reason="memray is not installed (pip install heapscope[memray])")

PROGRAM = "blocks = [bytearray(40_000 + i) for i in range(6)]\ndel blocks[::2]\n"


@pytest.fixture(scope="module")
def capture(tmp_path_factory):
    folder = tmp_path_factory.mktemp("memray-gui")
    (folder / "prog.py").write_text(PROGRAM)
    paths = {}
    for name, options in (("plain.bin", []), ("aggregated.bin", ["--aggregate"])):
        paths[name.removesuffix(".bin")] = folder / name
        subprocess.run([sys.executable, "-m", "memray", "run", "-q", *options, "-o",
                        str(folder / name), "prog.py"], check=True, cwd=folder,
                       capture_output=True, timeout=120)
    return paths


def test_the_window_opens_a_capture(qtbot, window, capture):
    wait_loaded(qtbot, window, lambda: window.open_trace(str(capture["plain"])))
    trace = window.trace
    sizes = set(int(s) for s in trace.sizes[trace.kind == ALLOC])
    assert set(range(40_001, 40_007)) <= sizes     # the six blocks (bytearray(n) takes n + 1: its NUL)


def test_an_aggregated_capture_gets_a_dialog(qtbot, window, capture):
    with qtbot.waitSignal(window.load_failed, timeout=20000) as failed:
        window.open_trace(str(capture["aggregated"]))
    assert "aggregated memray capture" in failed.args[0]
    box = window.message_box
    assert "aggregated.bin" in box.text() + box.informativeText()
