"""Compare mode on a long trace: what its rows will need, said before they are built.

Every row of compare mode is a whole timeline: its per-step measures and
its checkpoints, both growing with the trace (docs/timeline.md, "Memory,
per operation").  Seven rows of a ten-million-operation trace need far more
than a laptop has.  So before compare mode builds its rows, the window
works out what they will need from those per-operation figures, and when
it is more than :data:`LIMIT_BYTES` (issue 25: compare mode within 6 GB,
or less when the machine has less), it says so and offers as many rows as
fit, the ones already built first, or all of them anyway, or nothing.

The estimate is the documented figures times the trace's length, not a
measurement of this heap: checkpoints are spaced by their cost, so what
they take depends on the strategy and the trace, and the figure is the
one measured on a real recording (gcc's cc1) at ten million operations.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QPushButton, QVBoxLayout

from heapscope.allocators.denser_checkpoints import DENSER_BYTES

from .compare_view import MIN_ROWS

#: bytes an operation, from docs/timeline.md: the trace (shared by every row) ...
TRACE_BYTES_PER_OP = 17
#: ... and each row's timeline: its measures and its checkpoints
SERIES_BYTES_PER_OP = 62
CHECKPOINT_BYTES_PER_OP = 212
#: what compare mode may take: issue 25's 6 GB, or three quarters of a smaller machine
LIMIT_BYTES = 6 * 10**9


def gigabytes(n: int) -> str:
    """'19.8 GB', '850 MB', '274 kB': memory as the dialog says it (decimal, as
    the limit is set)."""
    if n >= 10**9:
        return f"{n / 1e9:.1f} GB"
    return f"{n / 1e6:.0f} MB" if n >= 10**6 else f"{n / 1e3:.0f} kB"


def limit_bytes() -> int:
    """The memory compare mode may need: :data:`LIMIT_BYTES`, or three
    quarters of this machine's memory if that is less."""
    try:
        physical = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return LIMIT_BYTES
    return min(LIMIT_BYTES, physical * 3 // 4)


@dataclass(frozen=True)
class RowsEstimate:
    """What compare mode with ``rows`` rows of an ``ops``-step trace needs."""
    ops: int
    rows: int

    @property
    def per_row(self) -> int:
        return self.ops * (SERIES_BYTES_PER_OP + CHECKPOINT_BYTES_PER_OP)

    @property
    def fixed(self) -> int:
        """The trace, and the denser checkpoints compare mode adds for its seeks."""
        return self.ops * TRACE_BYTES_PER_OP + DENSER_BYTES

    @property
    def total(self) -> int:
        return self.fixed + self.rows * self.per_row

    def rows_within(self, limit: int) -> int:
        """How many rows fit in ``limit`` bytes (maybe fewer than compare mode shows)."""
        return max(0, (limit - self.fixed) // self.per_row) if self.per_row else self.rows


def rows_to_offer(names: list[str], built: set[str], fit: int) -> list[str]:
    """The ``fit`` rows of ``names`` to show instead: those already built
    first (they cost nothing more), then the others as the user ordered
    them; in the user's order."""
    keep = [n for n in names if n in built][:fit]
    keep += [n for n in names if n not in built][:fit - len(keep)]
    return [n for n in names if n in keep]


class CompareMemoryDialog(QDialog):
    """Says what compare mode with these rows will need, and offers fewer.

    ``chosen`` is emitted through :attr:`accepted`: :attr:`names` holds the
    rows picked (the fewer offered, or all of them)."""

    def __init__(self, names: list[str], fewer: list[str], estimate: RowsEstimate, limit: int,
                 parent=None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Compare mode needs more memory than it may take")
        self.names = list(names)
        fewer_total = RowsEstimate(estimate.ops, len(fewer)).total
        text = (f"Compare mode with {len(names)} strategies on this trace ({estimate.ops:,} steps) "
                f"would need about {gigabytes(estimate.total)}: each row keeps its measures and "
                f"checkpoints, about {gigabytes(estimate.per_row)} a row here "
                f"({SERIES_BYTES_PER_OP + CHECKPOINT_BYTES_PER_OP} bytes a step), "
                f"more than the {gigabytes(limit)} it may take.")
        if len(fewer) >= MIN_ROWS:
            text += (f"\n\n{len(fewer)} rows fit ({gigabytes(fewer_total)}): "
                     f"{', '.join(fewer)}.")
        else:
            text += f"\n\nNot even {MIN_ROWS} rows fit: a shorter trace (or part of this one) would."
        self.label = QLabel(text)
        self.label.setWordWrap(True)
        self.buttons = QDialogButtonBox()
        self.fewer_button: QPushButton | None = None
        if len(fewer) >= MIN_ROWS:
            self.fewer_button = self.buttons.addButton(f"Show {len(fewer)} rows",
                                                       QDialogButtonBox.AcceptRole)
            self.fewer_button.setDefault(True)
            self.fewer_button.clicked.connect(lambda: self._pick(fewer))
        self.all_button = self.buttons.addButton(f"Show all {len(names)} anyway",
                                                 QDialogButtonBox.AcceptRole)
        self.all_button.clicked.connect(lambda: self._pick(names))
        self.buttons.addButton(QDialogButtonBox.Cancel)
        self.buttons.rejected.connect(self.reject)
        box = QVBoxLayout(self)
        box.addWidget(self.label)
        box.addWidget(self.buttons)
        self.setMinimumWidth(520)

    def _pick(self, names: list[str]) -> None:
        self.names = list(names)
        self.accept()


def ask_before_building(compare, names: list[str], go) -> bool:
    """Before compare mode builds the rows ``names`` not built yet: if all of
    them would need more than :func:`limit_bytes`, open the dialog (not
    modal: the window goes on) and return True; its choice calls
    ``go(names picked)``.  False when there is nothing to ask."""
    w = compare.window
    trace = w.trace
    if trace is None:
        return False
    built = {n for n in names if w.model.timeline_for(n, w.params_for(n)) is not None}
    if len(built) == len(names):
        return False
    estimate = RowsEstimate(len(trace), len(names))
    limit = limit_bytes()
    if estimate.total <= limit:
        return False
    fewer = rows_to_offer(names, built, estimate.rows_within(limit))
    dialog = compare.memory_dialog = CompareMemoryDialog(names, fewer, estimate, limit, w)
    dialog.accepted.connect(lambda: go(dialog.names))
    dialog.finished.connect(lambda _=0: setattr(compare, "memory_dialog", None))
    dialog.open()
    return True
