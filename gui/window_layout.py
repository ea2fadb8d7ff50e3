"""The window's layout: which panels show, where the gauges go, and how big
things are drawn for the presentation (presenter mode, theme, screen height).

:class:`WindowLayout` builds the window's central widget from the views it
is given and keeps it fitting the window:

* the heap map over the explain panel, the structure view beside both, the
  plots under them (splitters; the structure view and the explain panel
  collapse, View > Structure View ``S`` / Explain Panel ``E``);
* the gauges in a column beside them where the window is tall enough for all
  six, else in a strip above the timeline bar (a 1280 x 720 projector), and
  on such a short window the quieter parts give way (:meth:`adapt`);
* two pages, one strategy and compare mode, above the timeline bar;
* :meth:`apply_presentation`: the application's font and palette, every
  view's text sizes and colours, the icons in the theme's ink.

It reads the window only through its public attributes (its actions, tool
bar, status bar and ``presentation``) and talks to the views through their
public methods.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, QSize, Qt
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (QFrame, QHBoxLayout, QScrollArea, QSplitter, QStackedWidget, QStyle,
                               QVBoxLayout, QWidget)

from .theme import Presentation, qt_palette, tinted_icon

#: the gauge column's width and the plots' least height at text scale 1
GAUGE_COLUMN_WIDTH = 316
PLOTS_MIN_HEIGHT = 64
MAP_MIN_HEIGHT = 120


class WindowLayout(QObject):
    """The central widget of ``window`` and the rules that keep it fitting."""

    #: the pages of the window's stack
    SINGLE_PAGE, COMPARE_PAGE = 0, 1

    def __init__(self, window) -> None:
        super().__init__(window)
        self.window = window
        #: presenter mode on a short screen: the plots made way for the map
        self.crowded = False
        self._build()

    def _build(self) -> None:
        w = self.window
        # The explain panel under the map (its lines are long: it gets the
        # map's width), the structure view beside both, full height (a drawing
        # wants room).  Both collapse: drag a handle, or View > Structure View
        # / Explain Panel.
        self.left_split = left = QSplitter(Qt.Vertical)
        left.addWidget(w.heap_map)
        left.addWidget(w.explain_panel)
        left.setCollapsible(0, False)
        left.setStretchFactor(0, 3)
        left.setStretchFactor(1, 1)
        left.setSizes([420, 170])
        self.map_split = top = QSplitter(Qt.Horizontal)
        top.addWidget(left)
        top.addWidget(w.structure_panel)
        top.setCollapsible(0, False)
        top.setStretchFactor(0, 3)
        top.setStretchFactor(1, 2)
        top.setSizes([620, 460])
        top.splitterMoved.connect(self.sync_panel_actions)
        left.splitterMoved.connect(self.sync_panel_actions)
        split = QSplitter(Qt.Vertical)
        split.addWidget(top)
        split.addWidget(w.plots)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 1)
        split.setSizes([600, 180])
        split.setChildrenCollapsible(False)
        w.plots.setMinimumHeight(PLOTS_MIN_HEIGHT)
        self.main_split = split
        # The gauges: a column beside the map where the screen is tall
        # enough for all six, else a compact strip across the window above
        # the timeline (adapt); the column scrolls only while a resize is
        # under way.
        self.gauge_scroll = gauge_scroll = QScrollArea()
        gauge_scroll.setWidget(w.gauges)
        gauge_scroll.setWidgetResizable(True)
        gauge_scroll.setFrameShape(QFrame.NoFrame)
        gauge_scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        gauge_scroll.setFixedWidth(GAUGE_COLUMN_WIDTH)
        self.gauge_strip = QWidget()
        strip_box = QHBoxLayout(self.gauge_strip)
        strip_box.setContentsMargins(4, 2, 4, 0)
        self.gauge_strip.hide()
        middle = QHBoxLayout()
        middle.setContentsMargins(4, 4, 4, 0)
        middle.addWidget(split, 1)
        middle.addWidget(gauge_scroll)
        # one page for one strategy (its predict band and gauge strip too),
        # one for compare mode (a band per row); the timeline bar serves both
        single = QWidget()
        single_box = QVBoxLayout(single)
        single_box.setContentsMargins(0, 0, 0, 0)
        single_box.setSpacing(0)
        single_box.addWidget(w.predict_bar)
        single_box.addLayout(middle, 1)
        single_box.addWidget(self.gauge_strip)
        self.pages = QStackedWidget()
        self.pages.insertWidget(self.SINGLE_PAGE, single)
        self.pages.insertWidget(self.COMPARE_PAGE, w.compare.view)
        central = QWidget()
        box = QVBoxLayout(central)
        box.setContentsMargins(0, 0, 0, 0)
        box.setSpacing(0)
        box.addWidget(self.pages, 1)
        box.addWidget(w.bar)
        w.setCentralWidget(central)
        # Keys go to the window's actions: keep focus off the spin boxes.
        w.heap_map.plot_widget.setFocusPolicy(Qt.StrongFocus)
        w.heap_map.plot_widget.setFocus()

    # ========================================================= presentation
    def apply_presentation(self, pres: Presentation) -> None:
        """Show the window as ``pres`` says: the application's font and
        palette, every view's text sizes, outlines and colours, and the
        layout that fits (gauges in a column or a strip)."""
        from PySide6.QtWidgets import QApplication
        w = self.window
        w.presentation = pres
        app = QApplication.instance()
        font = QFont(app.font())
        font.setPointSizeF(pres.body_pt)
        app.setFont(font)
        app.setPalette(qt_palette(pres.theme))
        w.font_scaler.apply(w, pres.text_scale)
        if getattr(w, "lessons", None) is not None:     # None while the window is being built
            w.lessons.presentation_changed()
        for view in (w.heap_map, w.plots, w.gauges, w.bar, w.explain_panel,
                     w.structure_panel, w.compare.view):
            view.apply_presentation(pres)
        w.predict_bar.apply_presentation(pres)
        w.compare.apply_presentation(pres)
        k = pres.text_scale
        self.gauge_scroll.setFixedWidth(round(GAUGE_COLUMN_WIDTH * k))
        w.toolbar.setIconSize(QSize(round(22 * k), round(22 * k)))
        w.strategy_title.setStyleSheet(f"color: {pres.muted}; padding-left: 8px;")
        for act, on in ((w.act_presenter, pres.presenter), (w.act_dark, pres.theme_name == "dark")):
            act.setChecked(on)
        self.theme_icons()
        self.adapt()

    def theme_icons(self) -> None:
        """The standard icons, in white on the dark theme."""
        w = self.window
        for act in w.actions():
            which = act.property("standard_icon")
            if which is None:
                continue
            icon = w.style().standardIcon(QStyle.StandardPixmap(which))
            if w.presentation.theme_name == "dark":
                icon = tinted_icon(icon, w.presentation.theme.ink)
            act.setIcon(icon)

    # =============================================================== sizing
    def set_window_size(self, width: int, height: int) -> None:
        """Resize the window to ``width`` x ``height``, arranging the gauges
        for that height first (a resize cannot go below the minimum of the
        arrangement shown)."""
        w = self.window
        chrome = w.height() - w.centralWidget().height()
        self.adapt(height - chrome)
        w.resize(width, height)
        self.adapt()

    def adapt(self, central_height: int | None = None) -> None:
        """Gauges in a column when the window is tall enough for all six,
        else in a strip above the timeline (a 1280 x 720 projector)."""
        w = self.window
        central = w.centralWidget()
        if central is None:
            return
        if central_height is None:
            central_height = central.height()
        available = central_height - w.bar.sizeHint().height() - 8
        gauges = w.gauges
        strip = gauges.column_height() > available
        self.compact(strip)
        if strip == (gauges.arrangement == gauges.STRIP):
            return
        # the map and the structure view first: the plots and the explain
        # panel get what is left (a splitter drag gives them more)
        total = sum(self.main_split.sizes())
        self.main_split.setSizes([round(total * (0.8 if strip else 0.75)), round(total * (0.2 if strip else 0.25))])
        if strip:
            self.gauge_scroll.takeWidget()
            gauges.set_arrangement(gauges.STRIP)
            self.gauge_strip.layout().addWidget(gauges)
            self.gauge_scroll.hide()
            self.gauge_strip.show()
        else:
            self.gauge_strip.layout().removeWidget(gauges)
            gauges.set_arrangement(gauges.COLUMN)
            self.gauge_scroll.setWidget(gauges)
            self.gauge_strip.hide()
            self.gauge_scroll.show()
        gauges.show()

    def compact(self, compact: bool) -> None:
        """On a short screen (gauges in a strip) the structure view's hover
        line goes (the map's hover line says the same) and, in presenter
        mode, the status bar.  The plots and the map keep small minimums in
        every arrangement, so that a window dragged shorter reaches the
        height where the gauges become a strip."""
        w = self.window
        w.plots.setMinimumHeight(PLOTS_MIN_HEIGHT)
        w.heap_map.plot_widget.setMinimumHeight(MAP_MIN_HEIGHT)
        w.structure_panel.facts.setVisible(not compact)
        w.plots.set_compact(compact)
        w.heap_map.legend.set_compact(compact)
        # Presenter mode on a short screen has no room for readable plots:
        # they give way to the map (L shows them again).
        crowded = compact and w.presentation.presenter
        w.predict_bar.set_compact(crowded)
        w.structure_panel.set_compact(crowded)
        if crowded != self.crowded:
            self.crowded = crowded
            self.set_plots_visible(not crowded)
        w.statusBar().setVisible(not (compact and w.presentation.presenter))

    # =============================================================== panels
    def show_page(self, compare: bool) -> None:
        """The compare-mode page, or the one-strategy page."""
        self.pages.setCurrentIndex(self.COMPARE_PAGE if compare else self.SINGLE_PAGE)

    def set_plots_visible(self, visible: bool) -> None:
        """Show or hide the plots over time (L)."""
        self.window.plots.setVisible(visible)
        self.window.act_plots.setChecked(visible)

    def show_panel(self, panel, visible: bool) -> None:
        """Show or hide the structure view or the explain panel; shown again
        after a drag shut it, it gets its share of the splitter back."""
        panel.setVisible(visible)
        if visible:
            split = self.map_split if panel is self.window.structure_panel else self.left_split
            sizes = split.sizes()
            if sizes[1] < 100:        # it had been dragged shut: open it again
                total = sum(sizes)
                split.setSizes([total * 3 // 5, total - total * 3 // 5])

    def sync_panel_actions(self, *_) -> None:
        """A splitter dragged shut unticks its panel's menu item."""
        w = self.window
        for act, panel, size in ((w.act_structure, w.structure_panel, self.map_split.sizes()[1]),
                                 (w.act_explain, w.explain_panel, self.left_split.sizes()[1])):
            act.setChecked(panel.isVisibleTo(w) and size > 0)
