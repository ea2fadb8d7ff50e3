"""The README's and docs/gui.md's pictures of compare mode: the window,
offscreen, on the bundled default trace at step 5003, with three rows at
1600 x 1000 and seven at 1280 x 720 (a projector).  Run from the repository's
root (assets/screenshots.sh does): ``python assets/compare_shots.py``."""

from __future__ import annotations

import os
import sys
import tempfile
import time

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# a settings folder of its own: no remembered theme or presenter mode
os.environ["XDG_CONFIG_HOME"] = tempfile.mkdtemp(prefix="heapscope-shots-")

from PySide6.QtCore import QEventLoop  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

SHOTS = [("assets/compare-3.png", (1600, 1000), ["next-fit", "tlsf", "buddy"]),
         ("assets/compare-7.png", (1280, 720), ["next-fit", "rotating-list", "splay-best-fit", "buddy",
                                                "tlsf", "bsd-buckets", "dlmalloc"])]
STEP = 5003


def wait(app, condition, timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    while not condition() and time.monotonic() < deadline:
        app.processEvents(QEventLoop.AllEvents, 50)
        time.sleep(0.01)
    if not condition():
        raise SystemExit("compare_shots: the window did not get there in time")


def main() -> int:
    app = QApplication.instance() or QApplication(sys.argv[:1])
    from heapscope import traces
    from heapscope.gui.app import configure_app
    from heapscope.gui.main_window import MainWindow
    configure_app(app)
    for path, (width, height), names in SHOTS:
        window = MainWindow()
        window.set_window_size(width, height)
        window.show()
        window.load_spec(str(traces.default_trace_path()))
        wait(app, lambda: window.timeline is not None and not window.busy)
        window.compare.compare(names)
        wait(app, lambda: window.compare.active and not window.busy)
        window.seek(STEP)
        for _ in range(20):
            app.processEvents()
            time.sleep(0.01)
        window.grab().save(path)
        print(f"{path}: {width}x{height}, {len(names)} rows, step {STEP}")
        window.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
