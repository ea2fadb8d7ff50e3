"""Starting the window: ``heapscope`` / ``python -m heapscope [open] [TRACE] [options]``.

TRACE is a ``.rep`` / ``.rep.gz`` file or a workload spec (``vo1989``,
``vo1989:steps=500,seed=3``); without it the bundled default trace opens.
Options: ``--strategy NAME`` (default next-fit), ``--word 4|8``,
``--heap-limit BYTES`` and ``--pool-size BYTES`` (K, M, G suffixes).
"""

from __future__ import annotations

import argparse
import sys

from PySide6.QtCore import QCoreApplication
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QApplication

#: base font size in points: big enough for a projector
BASE_FONT_PT = 11


def configure_pyqtgraph() -> None:
    import pyqtgraph as pg
    pg.setConfigOptions(antialias=True, background="w", foreground="k")


def configure_app(app: QApplication) -> QApplication:
    """Names (for QSettings), the font size and pyqtgraph's colours."""
    from .main_window import APPLICATION, ORGANIZATION
    QCoreApplication.setOrganizationName(ORGANIZATION)
    QCoreApplication.setApplicationName(APPLICATION)
    app.setApplicationDisplayName("heapscope")
    font = QFont(app.font())
    if font.pointSizeF() < BASE_FONT_PT:
        font.setPointSizeF(BASE_FONT_PT)
        app.setFont(font)
    configure_pyqtgraph()
    return app


def make_window(spec: str | None = None, strategy: str | None = None, params: dict | None = None):
    """A configured MainWindow loading ``spec`` (None: the bundled default
    trace) through ``strategy`` with the strategy ``params`` (word,
    heap_limit, pool_size)."""
    from .. import traces
    from .main_window import DEFAULT_STRATEGY, MainWindow
    app = QApplication.instance()
    configure_app(app)
    window = MainWindow()
    window.params = dict(params or {})
    window.set_strategy(strategy or DEFAULT_STRATEGY)
    window.load_spec(spec if spec else str(traces.default_trace_path()))
    return window


def parse_args(argv: list[str]) -> argparse.Namespace:
    from ..allocators.registry import strategy_names
    from ..cli import add_strategy_options
    p = argparse.ArgumentParser(prog="heapscope", description="heapscope's window")
    p.add_argument("trace", nargs="?", default=None,
                   help="a .rep/.rep.gz file or a workload such as vo1989:steps=500 "
                        "(default: the bundled trace)")
    p.add_argument("--strategy", "-s", default=None, choices=strategy_names(),
                   help="the strategy to start with (default next-fit)")
    add_strategy_options(p, word_default=None)
    return p.parse_args(argv)


def strategy_params(args: argparse.Namespace) -> dict:
    params = {}
    for key in ("word", "heap_limit", "pool_size"):
        value = getattr(args, key, None)
        if value is not None:
            params[key] = value
    return params


def missing_display() -> str | None:
    """Why no window can open here, or None.  Qt aborts the process when it
    finds no display; a one-line reason with what to do instead is kinder."""
    import os
    if os.environ.get("QT_QPA_PLATFORM") or not sys.platform.startswith("linux"):
        return None
    if os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"):
        return None
    return ("no display found (DISPLAY and WAYLAND_DISPLAY are unset). "
            "'heapscope compare' prints the comparison table without a window; "
            "QT_QPA_PLATFORM=offscreen runs the window without a screen.")


def main(argv: list[str] | None = None) -> int:
    """Open the window and run the event loop; the exit status."""
    args = parse_args(sys.argv[1:] if argv is None else list(argv))
    reason = missing_display()
    if reason:
        print(f"heapscope: {reason}", file=sys.stderr)
        return 2
    app = QApplication.instance() or QApplication(sys.argv[:1])
    window = make_window(args.trace, args.strategy, strategy_params(args))
    window.show()
    return app.exec()
