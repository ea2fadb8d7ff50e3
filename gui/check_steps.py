"""Playback > Check Your Strategy After Every Step (Ctrl+Shift+K): a
debugger's toggle for a strategy of your own (issue 22).

On, every strategy of your own shown (alone, or a row of compare mode) is
replayed with its ``check_steps`` parameter (``allocators/user.py``): its
``check()`` runs after every operation, so the replay stops at the first
step that breaks an invariant, as a replay stops at any mistake of the
user's code.  The replay is the build of any user timeline: in a worker
process, with the time limit and Cancel (``allocators/isolation.py``,
``gui/loader.py``), never in the window's thread.  The window then shows
that step as it shows a replay that failed (``TraceLoading``: the check's
message as the last line of the explain panel, the block it names
outlined) and goes to it: the last step the replay kept, the one before
the operation whose check failed.

The choice is kept in the settings (:data:`SETTING`).  Built-in strategies
are not affected: their checks are the test suite's.
"""

from __future__ import annotations

from PySide6.QtCore import QObject

from heapscope.allocators.isolation import needs_worker

from .window_menus import action

#: the settings key of the toggle
SETTING = "debug/check_steps"


def _on(value) -> bool:
    return value is True or str(value).lower() in ("true", "1", "yes")


class CheckSteps(QObject):
    """The toggle, the parameter it adds, and the step it goes to."""

    def __init__(self, window) -> None:
        super().__init__(window)
        self.window = window
        self.act = action(window, "&Check Your Strategy After Every Step", self._toggled,
                          ["Ctrl+Shift+K"], tip="A strategy of your own: run its check() after every operation, "
                              "and stop the replay at the first step it fails")
        self.act.setCheckable(True)
        self.act.setChecked(_on(window.settings.value(SETTING, False)))
        window.loading.shown.connect(self._go_to_failure)

    @property
    def on(self) -> bool:
        return self.act.isChecked()

    def params(self, name: str) -> dict:
        """What the toggle adds to strategy ``name``'s parameters."""
        return {"check_steps": True} if self.on and needs_worker(name) else {}

    def _toggled(self) -> None:
        """Remembered; a strategy of your own shown now is replayed again,
        with the checks or without (its timeline is another one)."""
        w = self.window
        w.settings.setValue(SETTING, self.on)
        if w.trace is None or w.busy:
            return
        if w.compare.active:
            names = list(w.compare.names)
            if any(needs_worker(n) for n in names):
                w.compare.compare(names)
        elif needs_worker(w.strategy_name):
            w.set_strategy(w.strategy_name)

    def _go_to_failure(self) -> None:
        """With the checks on, a replay that stopped at a mistake shows the
        step where it stopped (the explain panel ends with the mistake there)."""
        model = self.window.model
        timeline = model.timeline()
        if not self.on or timeline is None or getattr(timeline, "fault", None) is None:
            return
        if model.position != timeline.n:
            self.window.seek(timeline.n)
