"""The explain panel: what the shown step did, one line per event, in the
policy's own words.

The lines are :func:`heapscope.allocators.explain.explain_step` of the shown step (the
model computes them once per step), numbered in order.  Clicking a line
selects the block it names first (``ExplainedEvent.addrs[0]``) in the model,
so the heap map outlines it and the structure view marks it; the clicked
line stays highlighted.  When the selection changes elsewhere, the lines that
name the selected block are tinted and the first of them is scrolled into
view.  With an event chosen within the step (micro-steps), that line is
marked and the later ones are greyed.

A step with more than :data:`MAX_LINES` events (a free walking a long list)
keeps its first and last lines and folds the middle into one line that says
how many it left out.
"""

from __future__ import annotations

from PySide6.QtCore import QAbstractListModel, QModelIndex, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QFont
from PySide6.QtWidgets import QAbstractItemView, QLabel, QListView, QSizePolicy, QVBoxLayout, QWidget

from .subscriber import Subscriber

#: lines listed at most; beyond, the middle of the step folds into one line
MAX_LINES = 300
#: lines kept before and after the fold
HEAD_LINES, TAIL_LINES = 200, 60

#: the tint of the lines naming the selected block (Okabe-Ito sky blue, light)
SELECTED_TINT = "#cfe8f7"
LATER_INK = "#9a9a9a"
_TINT, _LATER, _FOLD_INK = (QBrush(QColor(c)) for c in (SELECTED_TINT, LATER_INK, "#666666"))


_DISPLAY, _TOOLTIP, _BACKGROUND, _FOREGROUND, _FONT = (
    int(r) for r in (Qt.DisplayRole, Qt.ToolTipRole, Qt.BackgroundRole, Qt.ForegroundRole, Qt.FontRole))
_ROLES = frozenset((_DISPLAY, _TOOLTIP, _BACKGROUND, _FOREGROUND, _FONT))


class EventLines(QAbstractListModel):
    """The step's explained events as list rows (a fold is a row of its own)."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.rows: list = []          # ExplainedEvent, or an int: the events folded there
        self.selected: int | None = None
        self.current: int | None = None
        self.bold = QFont()
        self.bold.setBold(True)
        self.tint, self.later = _TINT, _LATER


    def set_events(self, explained: list) -> None:
        self.beginResetModel()
        if len(explained) > MAX_LINES:
            folded = len(explained) - HEAD_LINES - TAIL_LINES
            self.rows = list(explained[:HEAD_LINES]) + [folded] + list(explained[-TAIL_LINES:])
        else:
            self.rows = list(explained)
        self.endResetModel()

    def rowCount(self, parent=QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self.rows)

    def data(self, index, role=Qt.DisplayRole):
        # The view asks for a dozen roles per row at every layout and paint (a
        # few hundred calls a step): answer from plain ints, and for the roles
        # it does not use, at once.
        role = int(role)
        if role not in _ROLES or not index.isValid():
            return None
        e = self.rows[index.row()]
        if isinstance(e, int):
            if role == _DISPLAY:
                return f"… {e:,} more events, left out here …"
            return _FOLD_INK if role == _FOREGROUND else None
        if role == _DISPLAY:
            mark = "▶ " if self.current == e.index else ""
            return f"{mark}{e.index + 1}. {e.text}"
        if role == _TOOLTIP:
            return e.text
        if role == _BACKGROUND:
            return self.tint if self.selected is not None and self.selected in e.addrs else None
        if role == _FOREGROUND:
            return self.later if self.current is not None and e.index > self.current else None
        return self.bold if self.current == e.index else None     # the font

    def event_at(self, row: int):
        e = self.rows[row] if 0 <= row < len(self.rows) else None
        return None if isinstance(e, int) else e

    def first_naming(self, addr: int) -> int:
        for i, e in enumerate(self.rows):
            if not isinstance(e, int) and addr in e.addrs:
                return i
        return -1

    def row_of_event(self, index: int) -> int:
        for i, e in enumerate(self.rows):
            if not isinstance(e, int) and e.index == index:
                return i
        return -1

    def refresh(self) -> None:
        if self.rows:
            self.dataChanged.emit(self.index(0), self.index(len(self.rows) - 1))


class ExplainPanel(Subscriber, QWidget):
    """The shown step's events, a line each; click a line to select its block."""

    #: a line naming a block was clicked: that block's address
    block_clicked = Signal(object)

    SUBSCRIBES = {"shown_changed": "redraw_soon", "step_changed": "redraw_soon",
                  "selection_changed": "_model_selection", "event_changed": "_model_event"}
    REQUESTS = {"block_clicked": "select"}

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.title = QLabel("What the step did")
        big = QFont(self.font())
        big.setPointSizeF(self.font().pointSizeF() * 1.15)
        big.setBold(True)
        self.title.setFont(big)
        self.title.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Preferred)
        self.lines = EventLines(self)
        self.list = QListView()
        self.list.setModel(self.lines)
        self.list.setWordWrap(True)
        self.list.setUniformItemSizes(False)
        self.list.setResizeMode(QListView.Adjust)
        self.list.setSelectionMode(QAbstractItemView.SingleSelection)
        self.list.setEditTriggers(QAbstractItemView.NoEditTriggers)
        self.list.setVerticalScrollMode(QAbstractItemView.ScrollPerPixel)
        self.list.setSpacing(2)
        self.list.setFocusPolicy(Qt.NoFocus)     # the window's keys step the trace
        font = QFont(self.font())
        font.setPointSizeF(self.font().pointSizeF() * 1.1)
        self.list.setFont(font)
        # The clicked line keeps a strong highlight even without focus.
        self.list.setStyleSheet("QListView::item:selected { background: #0072B2; color: white; }")
        self.list.clicked.connect(self._line_clicked)
        box = QVBoxLayout(self)
        box.setContentsMargins(4, 2, 4, 2)
        box.setSpacing(2)
        box.addWidget(self.title)
        box.addWidget(self.list, 1)
        self.setMinimumWidth(220)

    def model_bound(self) -> None:
        self.redraw_soon()

    def apply_presentation(self, pres) -> None:
        """Theme colours of the highlighted and tinted lines."""
        theme = pres.theme
        self.lines.tint = QBrush(QColor(theme.tint))
        self.lines.later = _LATER      # grey on either background
        bold = QFont(self.list.font())
        bold.setBold(True)
        self.lines.bold = bold
        self.list.setStyleSheet(f"QListView::item:selected {{ background: {theme.highlight}; "
                                f"color: {theme.highlight_text}; }}")
        self.lines.refresh()

    # ------------------------------------------------------------- drawing
    def redraw(self) -> None:
        model = self.model
        step = model.step(self.row) if model is not None else None
        fault = step.fault_line if step is not None else None
        tail = f"; step {fault.event.step} failed" if fault is not None else ""
        if step is None or step.position == 0:
            self.title.setText("What the step did" if step is None else
                               "Step 0: the empty heap (→ steps)" + tail)
            self.show_events([fault] if fault is not None else [])
            return
        explained = step.explained
        n = len(explained)
        self.title.setText(f"Step {step.position}: {n} event" + ("" if n == 1 else "s") + tail)
        self.title.setToolTip(f"what step {step.position} did, in {step.strategy_name}'s words"
                              + (" (the last line: the mistake that stopped the replay after it)"
                                 if fault is not None else ""))
        # a strategy of your own stopped at the next step: its mistake ends the list
        self.show_events(explained + [fault] if fault is not None else explained)

    def show_events(self, explained: list) -> None:
        """List ``explained`` (ExplainedEvent, in order)."""
        lines = self.lines
        lines.selected = self.model.selection if self.model is not None else None
        lines.current = self.model.event_in_row(self.row) if self.model is not None else None
        lines.set_events(explained)
        self.list.scrollToTop()
        self._show_selected_line()

    def texts(self) -> list[str]:
        """The lines as listed (tests compare them with explain_step)."""
        return [self.lines.data(self.lines.index(i)) for i in range(self.lines.rowCount())]

    # ------------------------------------------------------------ the model
    def _model_selection(self, addr) -> None:
        self.lines.selected = addr
        self.lines.refresh()
        self._show_selected_line()

    def _show_selected_line(self) -> None:
        addr = self.lines.selected
        current = self.list.currentIndex()
        e = self.lines.event_at(current.row()) if current.isValid() else None
        if addr is not None and e is not None and addr in e.addrs:
            self.list.scrollTo(current)
            return                 # the clicked line names it: keep that one
        row = self.lines.first_naming(addr) if addr is not None else -1
        if row < 0:
            self.list.clearSelection()
            self.list.setCurrentIndex(QModelIndex())
            return
        index = self.lines.index(row)
        self.list.setCurrentIndex(index)
        self.list.scrollTo(index)

    def _model_event(self, index) -> None:
        if index is not None and self.model is not None:
            index = self.model.event_in_row(self.row)
        self.lines.current = index
        self.lines.refresh()
        if index is not None:
            row = self.lines.row_of_event(index)
            if row >= 0:
                self.list.scrollTo(self.lines.index(row))
        else:
            # the whole step, listed from its start as when it is reached by
            # a seek: one picture per state, however the step was played
            self.list.scrollToTop()
            self._show_selected_line()

    # ---------------------------------------------------------------- mouse
    def _line_clicked(self, index) -> None:
        e = self.lines.event_at(index.row())
        if e is not None and e.addrs:
            self.block_clicked.emit(e.addrs[0])

