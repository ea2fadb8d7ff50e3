"""Big-number gauges beside the heap map, readable from the back of a room.

Each gauge is a title, one large number, a bar and a line of detail.  The
numbers come from :class:`heapscope.gui.step_measures.StepMeasures` at the shown
position; see that module for the definitions.  Bound to the window's
:class:`~heapscope.gui.show_model.ShowModel`, the panel follows its shown step.
"""

from __future__ import annotations

import math

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor, QFont, QFontMetrics, QPainter
from PySide6.QtWidgets import QBoxLayout, QFrame, QHBoxLayout, QLabel, QSizePolicy, QVBoxLayout, QWidget

from heapscope.allocators.phrases import human_bytes  # noqa: F401 (the window's size words; named here too)
from . import palette
from .subscriber import Subscriber
from .theme import Presentation

NO_VALUE = "–"


def percent(x: float) -> str:
    """0.1234 -> '12.3 %' (the form every percentage gauge shows)."""
    return NO_VALUE if x is None or math.isnan(x) else f"{100 * x:.1f} %"


class Bar(QWidget):
    """A horizontal bar filled to ``fraction`` (0..1) in one colour."""

    def __init__(self, colour: str, parent=None) -> None:
        super().__init__(parent)
        self.colour = QColor(colour)
        self.fraction = 0.0
        self.outline = QColor("#999")
        self.empty = QColor("#eeeeee")
        self.setFixedHeight(14)
        self.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Fixed)

    def set_colours(self, fill: str, outline: str, empty: str) -> None:
        self.colour, self.outline, self.empty = QColor(fill), QColor(outline), QColor(empty)
        self.update()

    def set_fraction(self, f: float) -> None:
        f = 0.0 if f is None or math.isnan(f) else min(max(f, 0.0), 1.0)
        if f != self.fraction:
            self.fraction = f
            self.update()

    def paintEvent(self, event) -> None:
        p = QPainter(self)
        r = QRectF(self.rect()).adjusted(0.5, 0.5, -0.5, -0.5)
        p.setPen(self.outline)
        p.setBrush(self.empty)
        p.drawRect(r)
        if self.fraction > 0:
            p.setPen(Qt.NoPen)
            p.setBrush(self.colour)
            p.drawRect(QRectF(r.x() + 1, r.y() + 1, (r.width() - 2) * self.fraction, r.height() - 2))
        p.end()


class Gauge(QFrame):
    """Title, a big number (and optionally a second, smaller one), a bar, a
    detail line.  Compact (the strip of gauges on a short screen): a short
    title, a smaller number, and the detail line in the tooltip."""

    #: the big number's size relative to the body text, full and compact
    VALUE_SCALE, COMPACT_VALUE_SCALE = 2.3, 1.9
    #: ... and in a narrow strip (a lesson's narration beside it): still
    #: 20 pt in presenter mode, far above the smallest text a view draws
    NARROW_VALUE_SCALE = 1.3

    def __init__(self, title: str, colour: str, tooltip: str = "", short_title: str = "",
                 parent=None) -> None:
        super().__init__(parent)
        self.setFrameShape(QFrame.StyledPanel)
        self.setObjectName("gauge")
        self.value = float("nan")
        self.colour = colour
        self.long_title, self.short_title = title, short_title or title
        self.tip = tooltip
        self.compact = False
        self.narrow = False
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
        self.value_label.setTextFormat(Qt.PlainText)
        self.second_label = QLabel("")
        mid = QFont(self.font())
        mid.setPointSizeF(self.font().pointSizeF() * 1.35)
        self.second_label.setFont(mid)
        self.second_label.setAlignment(Qt.AlignRight | Qt.AlignBottom)
        self.bar = Bar(colour)
        self.detail = QLabel(" ")
        self.detail.setWordWrap(True)
        self.detail.setStyleSheet("color: #333;")
        self.presentation = Presentation()
        numbers = QHBoxLayout()
        numbers.addWidget(self.value_label)
        numbers.addStretch(1)
        numbers.addWidget(self.second_label)
        self.box = box = QVBoxLayout(self)
        box.setContentsMargins(8, 4, 8, 6)
        box.setSpacing(1)
        box.addWidget(self.title)
        box.addLayout(numbers)
        box.addWidget(self.bar)
        box.addWidget(self.detail)
        self._tooltip()

    def show_value(self, value: float, text: str, fraction: float, detail: str = " ",
                   second: str = "") -> None:
        self.value = value
        self.value_label.setText(text)
        self.second_label.setText(second)
        self.bar.set_fraction(fraction)
        if detail != self.detail.text():
            self.detail.setText(detail)
            if self.compact:
                self._tooltip()

    def _tooltip(self) -> None:
        parts = [self.long_title] if self.compact else []
        if self.compact and self.detail.text().strip():
            parts.append(self.detail.text())
        if self.tip:
            parts.append(self.tip)
        self.setToolTip("\n".join(parts))

    def full_height(self) -> int:
        """The height of this gauge in its full (column) form: title, number,
        bar, two lines of detail, margins and frame."""
        pres = self.presentation
        big = QFont(self.value_label.font())
        big.setPointSizeF(pres.pt(self.VALUE_SCALE))
        mid = QFont(self.second_label.font())
        mid.setPointSizeF(pres.pt(1.35))
        number = max(QFontMetrics(big).height(), QFontMetrics(mid).height())
        detail = 2 * QFontMetrics(self.detail.font()).lineSpacing()
        m = round(4 * pres.text_scale)
        frame = 2 * self.frameWidth()
        return (QFontMetrics(self.title.font()).height() + number + round(14 * pres.text_scale)
                + detail + 3 * self.box.spacing() + 2 * m + 2 + frame)

    def set_compact(self, compact: bool) -> None:
        """The strip's form (short title, smaller number, detail as tooltip)
        or the column's."""
        if compact == self.compact:
            return
        self.compact = compact
        self.title.setText(self.short_title if compact else self.long_title)
        self.detail.setVisible(not compact)
        self._tooltip()
        self.apply_presentation(self.presentation)

    def set_narrow(self, narrow: bool) -> None:
        """A compact gauge narrower still: its title may wrap at a word and
        its number is smaller (:data:`NARROW_VALUE_SCALE`)."""
        if narrow != self.narrow:
            self.narrow = narrow
            self.title.setWordWrap(narrow)
            self.apply_presentation(self.presentation)

    def apply_presentation(self, pres: Presentation) -> None:
        """Number sizes, bar height and colours for ``pres``."""
        self.presentation = pres
        theme = pres.theme
        colour = theme.contrast if self.colour == palette.BLACK else self.colour
        narrow = self.compact and self.narrow
        big = QFont(self.value_label.font())
        big.setPointSizeF(pres.pt(self.NARROW_VALUE_SCALE if narrow else
                                  self.COMPACT_VALUE_SCALE if self.compact else self.VALUE_SCALE))
        self.value_label.setFont(big)
        self.value_label.setStyleSheet(f"color: {colour};")
        mid = QFont(self.second_label.font())
        mid.setPointSizeF(pres.pt(1.0 if narrow else 1.1 if self.compact else 1.35))
        self.second_label.setFont(mid)
        self.second_label.setStyleSheet(f"color: {theme.ink};")
        self.detail.setStyleSheet(f"color: {pres.muted};")
        self.bar.set_colours(colour, theme.axis, theme.bar_empty)
        self.bar.setFixedHeight(max(6, round((9 if self.compact else 14) * pres.text_scale)))
        m = round(4 * pres.text_scale)
        self.box.setContentsMargins(2 * m, m, 2 * m, m + 2)


class GaugePanel(Subscriber, QWidget):
    """The gauges: external and internal fragmentation, search length,
    utilisation, waste, heap.  In a column beside the map, or, where the
    screen is too short for the column (a 1280 x 720 projector), as a compact
    strip across the window (:meth:`set_arrangement`)."""

    COLUMN, STRIP = "column", "strip"

    SUBSCRIBES = {"shown_changed": "_model_shown", "step_changed": "_model_step",
                  "built_changed": "_model_shown"}

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.frag = Gauge("External fragmentation", palette.VERMILLION,
                          "1 − largest free block / free bytes (0 when nothing is free)",
                          "External frag.")
        self.search = Gauge("Search length", palette.BLUISH_GREEN,
                            "blocks (nodes) examined by this step, the one taken included;\n"
                            "mean over the mallocs so far", "Search")
        self.internal = Gauge("Internal fragmentation", palette.SKY_BLUE,
                              "(bytes in used blocks − bytes requested) / bytes in used blocks:\n"
                              "headers, footers and padding", "Internal frag.")
        self.util = Gauge("Utilisation", palette.BLUE, "max live bytes so far / heap size now")
        self.waste = Gauge("Waste", palette.REDDISH_PURPLE,
                           "(max heap so far − max live so far) / max live so far (Vo 1989)")
        self.heap = Gauge("Heap", palette.BLACK, "heap size H (break − base; in a fixed pool, the part\n"
                          "of the pool touched so far) and live bytes L")
        self.box = box = QBoxLayout(QBoxLayout.TopToBottom, self)
        box.setContentsMargins(0, 0, 0, 0)
        box.setSpacing(6)
        self.all = (self.frag, self.internal, self.search, self.util, self.waste, self.heap)
        for g in self.all:
            box.addWidget(g)
        box.addStretch(1)
        self.arrangement = self.COLUMN
        self.narrow = False
        self.search_scale = 1

    def set_arrangement(self, arrangement: str) -> None:
        """:attr:`COLUMN` (full gauges, one under the other) or :attr:`STRIP`
        (compact gauges side by side, sharing the width)."""
        if arrangement == self.arrangement:
            return
        self.arrangement = arrangement
        strip = arrangement == self.STRIP
        self.box.setDirection(QBoxLayout.LeftToRight if strip else QBoxLayout.TopToBottom)
        for g in self.all:
            g.set_compact(strip)
            self.box.setStretchFactor(g, 1 if strip else 0)
        self.box.setStretch(len(self.all), 0 if strip else 1)    # the trailing stretch

    def set_narrow(self, narrow: bool) -> None:
        """The strip's gauges narrower (their titles wrap, their numbers
        smaller): six compact gauges held a 1280 x 720 window in presenter
        mode to 1061 px, and a lesson's narration beside them to 205.  The
        column's gauges do not change."""
        self.narrow = narrow
        for g in self.all:
            g.set_narrow(narrow)

    def apply_presentation(self, pres) -> None:
        for g in self.all:
            g.apply_presentation(pres)
        self.box.setSpacing(round(6 * pres.text_scale))

    def column_height(self) -> int:
        """The height the six gauges need in a column (whole, without
        scrolling) at the current text size, whichever arrangement is shown:
        worked out from their fonts, so that asking never changes the layout."""
        return sum(g.full_height() for g in self.all) + self.box.spacing() * (len(self.all) - 1)

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
