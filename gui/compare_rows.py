"""Compare mode's rows on a big trace: built in the background, each shown
once it is built as far as the step shown.

On a trace of :data:`~heapscope.gui.background_build.BACKGROUND_FROM_OPS`
operations or more, entering compare mode does not wait behind a dialog for
every strategy's timeline (seven of them took minutes at a million
operations): the timelines not built yet are made here, unbuilt, kept by the
model as being built, and built in worker processes by the window's
:class:`~heapscope.gui.background_build.BackgroundBuild` (beside the shown
strategy's, if that is still building).  As the chunks come in, every row
built as far as the step shown is shown (two at least: compare mode shows
two to seven), the others join as they get there, and the scrubber, Cancel
and a seek past the built part behave as for one strategy.  The denser
checkpoints of compare mode (gui/background_densifier.py) wait until a
row's build has ended: they are put between the checkpoints a build ships.
"""

from __future__ import annotations

from PySide6.QtCore import QObject

from heapscope.allocators.params import ParamError
from heapscope.allocators.replay import Timeline

from . import background_build
from .compare_view import MIN_ROWS
from .show_model import timeline_key
from .turns import turns


class RowsAsBuilt(QObject):
    """Builds compare mode's missing rows in the background and shows each when ready."""

    def __init__(self, compare) -> None:
        super().__init__(compare)
        self.compare = compare
        self.window = compare.window
        #: (the names to compare, the position to show them at) while rows are missing
        self.pending: tuple[list[str], int] | None = None
        background = self.window.loading.background
        # in a turn of its own (gui/turns.py): a poll's chunks come in for
        # several rows at once, and each showing more rows is work of its own
        background.progress.connect(lambda done, total: turns().call_soon(self.look, self))
        background.ended.connect(self._ended)

    @staticmethod
    def wanted(trace) -> bool:
        """A trace this long has its rows built in the background."""
        return trace is not None and len(trace) >= background_build.BACKGROUND_FROM_OPS

    def build(self, names: list[str], missing: list[str], position: int) -> None:
        """Build ``missing`` (of ``names``) in the background; show the rows
        of ``names`` as each is built to ``position``."""
        w = self.window
        model = w.model
        ops = next((tl.operations[:3] for tl in model.timelines().values()), None)
        timelines = {}
        try:
            for name in missing:
                timeline = Timeline(model.trace, name, w.params_for(name), ops=ops)
                ops = timeline.operations[:3]       # the trace's lists, made once for every row
                timelines[name] = timeline
        except ParamError as exc:
            w.show_error("Cannot compare these strategies", str(exc))
            return
        keys = {model.add_timeline(tl, building=True): tl for tl in timelines.values()}
        w.loading.background.start(model.trace, keys, w.time_limit, add=True)
        self.pending = (list(names), position)
        self.compare.view.prepare_rows(len(names))      # their widgets while they build
        self.compare.view.expect_rows(len(names))       # and their room, from the first show
        w.statusBar().showMessage(f"Building {', '.join(missing)} for compare mode: each row "
                                  f"shows once built to step {position:,}")
        self.look()

    def cancel(self) -> None:
        """No more rows join (compare mode left, or other rows asked for)."""
        self.pending = None
        self.compare.view.expect_rows(0)

    def look(self) -> None:
        """Show the rows built as far as the position asked for, if more are now."""
        if self.pending is None or not self.compare.active:
            return
        names, position = self.pending
        w = self.window
        model = w.model
        shown = [key[0] for key in model.shown]
        # rows already show: a row joins them at the step they show
        at = model.position if len(shown) >= MIN_ROWS else position
        ready = []
        for name in names:
            key = timeline_key(name, w.params_for(name))
            timeline = model.timelines().get(key)
            if timeline is not None and (not model.building(key) or model.built_steps(key) >= at):
                ready.append(name)
        if len(ready) == len(names):
            self.pending = None
        if len(ready) >= MIN_ROWS and shown != ready:
            self.compare.show_rows(ready, at)

    def _ended(self, whole: bool) -> None:
        self.look()
        if self.compare.active:
            self.compare.densify_shown()       # the builds have ended: checkpoints may go between
