"""Big-number gauges beside the heap map, readable from the back of a room.

Each gauge is a title, one large number, a bar and a line of detail.  The
numbers come from :class:`gui.step_measures.StepMeasures` at the shown
position; see that module for the definitions.  Bound to the window's
:class:`~gui.show_model.ShowModel`, the panel follows its shown step.
"""

from __future__ import annotations

import math

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor, QFont, QPainter
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QSizePolicy, QVBoxLayout, QWidget

from . import palette
from .subscriber import Subscriber

NO_VALUE = "–"


def percent(x: float) -> str:
    """0.1234 -> '12.3 %' (the form every percentage gauge shows)."""
    return NO_VALUE if x is None or math.isnan(x) else f"{100 * x:.1f} %"


def human_bytes(n: int) -> str:
    for unit, size in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n} B"


class Bar(QWidget):
    """A horizontal bar filled to ``fraction`` (0..1) in one colour."""

    def __init__(self, colour: str, parent=None) -> None:
        super().__init__(parent)
        self.colour = QColor(colour)
        self.fraction = 0.0
        self.setFixedHeight(14)
        self.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Fixed)

    def set_fraction(self, f: float) -> None:
        f = 0.0 if f is None or math.isnan(f) else min(max(f, 0.0), 1.0)
        if f != self.fraction:
            self.fraction = f
            self.update()

    def paintEvent(self, event) -> None:
        p = QPainter(self)
        r = QRectF(self.rect()).adjusted(0.5, 0.5, -0.5, -0.5)
        p.setPen(QColor("#999"))
        p.setBrush(QColor("#eeeeee"))
        p.drawRect(r)
        if self.fraction > 0:
            p.setPen(Qt.NoPen)
            p.setBrush(self.colour)
            p.drawRect(QRectF(r.x() + 1, r.y() + 1, (r.width() - 2) * self.fraction, r.height() - 2))
        p.end()


class Gauge(QFrame):
    """Title, a big number (and optionally a second, smaller one), a bar, a detail line."""

    def __init__(self, title: str, colour: str, tooltip: str = "", parent=None) -> None:
        super().__init__(parent)
        self.setFrameShape(QFrame.StyledPanel)
        self.setObjectName("gauge")
        self.value = float("nan")
        self.title = QLabel(title)
        f = self.title.font()
        f.setBold(True)
        self.title.setFont(f)
        self.value_label = QLabel(NO_VALUE)
        big = QFont(self.font())
        big.setPointSizeF(self.font().pointSizeF() * 2.3)
        big.setBold(True)
        self.value_label.setFont(big)
        self.value_label.setStyleSheet(f"color: {colour};")
        self.second_label = QLabel("")
        mid = QFont(self.font())
        mid.setPointSizeF(self.font().pointSizeF() * 1.35)
        self.second_label.setFont(mid)
        self.second_label.setAlignment(Qt.AlignRight | Qt.AlignBottom)
        self.bar = Bar(colour)
        self.detail = QLabel(" ")
        self.detail.setWordWrap(True)
        self.detail.setStyleSheet("color: #333;")
        numbers = QHBoxLayout()
        numbers.addWidget(self.value_label)
        numbers.addStretch(1)
        numbers.addWidget(self.second_label)
        box = QVBoxLayout(self)
        box.setContentsMargins(8, 4, 8, 6)
        box.setSpacing(1)
        box.addWidget(self.title)
        box.addLayout(numbers)
        box.addWidget(self.bar)
        box.addWidget(self.detail)
        if tooltip:
            self.setToolTip(tooltip)

    def show_value(self, value: float, text: str, fraction: float, detail: str = " ",
                   second: str = "") -> None:
        self.value = value
        self.value_label.setText(text)
        self.second_label.setText(second)
        self.bar.set_fraction(fraction)
        self.detail.setText(detail)


class GaugePanel(Subscriber, QWidget):
    """The column of gauges: external and internal fragmentation, search
    length, utilisation, waste, heap."""

    SUBSCRIBES = {"shown_changed": "_model_shown", "step_changed": "_model_step"}

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.frag = Gauge("External fragmentation", palette.VERMILLION,
                          "1 − largest free block / free bytes (0 when nothing is free)")
        self.search = Gauge("Search length", palette.BLUISH_GREEN,
                            "blocks (nodes) examined by this step, the one taken included;\n"
                            "mean over the mallocs so far")
        self.internal = Gauge("Internal fragmentation", palette.SKY_BLUE,
                              "(bytes in used blocks − bytes requested) / bytes in used blocks:\n"
                              "headers, footers and padding")
        self.util = Gauge("Utilisation", palette.BLUE, "max live bytes so far / heap size now")
        self.waste = Gauge("Waste", palette.REDDISH_PURPLE,
                           "(max heap so far − max live so far) / max live so far (Vo 1989)")
        self.heap = Gauge("Heap", palette.BLACK, "heap size H (break − base; in a fixed pool, the part\n"
                          "of the pool touched so far) and live bytes L")
        box = QVBoxLayout(self)
        box.setContentsMargins(0, 0, 0, 0)
        box.setSpacing(6)
        self.all = (self.frag, self.internal, self.search, self.util, self.waste, self.heap)
        for g in self.all:
            box.addWidget(g)
        box.addStretch(1)
        self.search_scale = 1

    def set_scale(self, search_max: int) -> None:
        """The search bar is full at the longest search of the whole replay."""
        self.search_scale = max(1, search_max)

    def model_bound(self) -> None:
        self._model_shown()
        self._model_step()

    def _model_shown(self) -> None:
        measures = self.model.measures(self.row)
        self.set_scale(measures.search_max if measures is not None else 1)

    def _model_step(self, position: int | None = None) -> None:
        step = self.model.step(self.row)
        self.show_measures(step.measures_row if step is not None else None)

    def show_measures(self, m: dict | None) -> None:
        """Fill the gauges from :meth:`StepMeasures.at` (None: before step 1)."""
        if m is None:
            for g in self.all:
                g.show_value(float("nan"), NO_VALUE, 0.0, "nothing replayed yet")
            return
        self.frag.show_value(m["external"], percent(m["external"]), m["external"],
                             f"without the top block {percent(m['external_no_top'])}; "
                             f"largest free {human_bytes(m['largest_free'])} "
                             f"of {human_bytes(m['free'])}")
        a = m["in_use"]
        internal = (a - m["live"]) / a if a else float("nan")
        self.internal.show_value(internal, percent(internal), internal,
                                 f"headers {human_bytes(m['headers'])}, "
                                 f"padding {human_bytes(m['padding'])}")
        what = ("malloc: blocks examined" if m["is_malloc"] else "free: blocks walked")
        if m["failed"]:
            what = "failed malloc: blocks examined"
        mean = m["search_mean"]
        self.search.show_value(m["search"], str(m["search"]), m["search"] / self.search_scale,
                               f"{what} this step; mean of {m['mallocs_so_far']:,} mallocs",
                               second=NO_VALUE if math.isnan(mean) else f"mean {mean:.2f}")
        self.util.show_value(m["utilisation"], percent(m["utilisation"]), m["utilisation"],
                             f"max live {human_bytes(m['max_live'])} / max heap {human_bytes(m['max_heap'])}")
        self.waste.show_value(m["waste"], percent(m["waste"]), m["waste"],
                              f"max heap {human_bytes(m['max_heap'])}, "
                              f"max live {human_bytes(m['max_live'])}")
        heap = m["heap"]
        self.heap.show_value(heap, human_bytes(heap), m["live"] / heap if heap else 0.0,
                             f"live {human_bytes(m['live'])} requested, "
                             f"{human_bytes(m['in_use'])} in used blocks")
