"""docs/gui.md's picture of the Find panel: the window, offscreen, at
1280 x 720 on the bundled gcc-cc1 trace through the buddy system in a
4 MiB pool (the README's debugging story), Find ``failed`` run and F3
pressed, a breakpoint ``merges >= 5`` beside it.  Run from the repository's
root (assets/screenshots.sh does): ``python assets/find_shot.py``."""

from __future__ import annotations

import os
import sys
import tempfile
import time

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# a settings folder of its own: no remembered theme, presenter mode or breakpoints
os.environ["XDG_CONFIG_HOME"] = tempfile.mkdtemp(prefix="heapscope-shots-")

from PySide6.QtWidgets import QApplication  # noqa: E402

from compare_shots import wait  # noqa: E402  (assets/, this script's folder)

PATH = "assets/find-panel.png"


def main() -> int:
    app = QApplication.instance() or QApplication(sys.argv[:1])
    from heapscope.gui.app import configure_app
    from heapscope.gui.main_window import MainWindow
    configure_app(app)
    window = MainWindow()
    window.set_window_size(1280, 720)
    window.params = {"pool_size": 4 << 20}
    window.strategy_name = "buddy"
    window.show()
    window.load_spec("gcc-cc1")
    wait(app, lambda: window.timeline is not None and not window.busy)
    finder = window.finder
    finder.show_find()
    finder.panel.edit.setText("merges >= 5")
    finder.add_breakpoint("merges >= 5")
    finder.panel.edit.setText("failed")
    finder.find("failed")
    wait(app, lambda: not finder.searcher.busy and finder.result is not None)
    finder.next_match()
    for _ in range(30):
        app.processEvents()
        time.sleep(0.01)
    window.grab().save(PATH)
    print(f"{PATH}: 1280x720, step {window.model.position}")
    window.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
