"""Presenter mode, themes, text that follows the screen, the 1280 x 720
layout, the legibility fixes and the keys (gui/theme.py, gui/main_window.py)."""

import re

import pytest
from PySide6.QtCore import QPoint, QPointF, QRect, Qt
from PySide6.QtGui import QColor, QKeySequence
from PySide6.QtWidgets import QApplication, QLabel

from heapscope.allocators.replay import Timeline
from heapscope.gui import palette
from heapscope.gui.step_marks import step_marks
from heapscope.gui.theme import BASE_PT, DARK, LIGHT, PRESENTER_TEXT, Presentation, screen_factor
from heapscope.gui.timeline_bar import unbreakable_tail

from .conftest import window_from_command_line
from tests.depth import some_in_quick


def settle(qtbot, ms=30):
    QApplication.processEvents()
    qtbot.wait(ms)


def at_size(qtbot, w, width, height, screen_height=None, **presentation):
    """The window as on a screen of that size (or ``screen_height`` lines),
    presenter mode or theme as asked."""
    w.apply_presentation(w.presentation.with_(screen_height=screen_height or height, **presentation))
    w.set_window_size(width, height)
    settle(qtbot)
    assert (w.width(), w.height()) == (width, height)


def whole_in_window(widget, window) -> bool:
    """The widget is shown, inside the window, and nothing of it is cut off
    by the widgets it sits in (a scroll area's viewport, a splitter, the
    window's edge): its rectangle, clipped by every ancestor's, stays whole."""
    if not widget.isVisible() or widget.width() < 10 or widget.height() < 5:
        return False
    rect = QRect(widget.mapTo(window, QPoint(0, 0)), widget.size())
    clipped = QRect(rect)
    parent = widget.parentWidget()
    while parent is not None:
        clipped = clipped.intersected(QRect(parent.mapTo(window, QPoint(0, 0)), parent.size())
                                      if parent is not window else window.rect())
        if parent is window:
            break
        parent = parent.parentWidget()
    return clipped == rect


# ------------------------------------------------------------------ 1280 x 720
OPEN_ON_A_PROJECTOR = '''
import json
from PySide6.QtWidgets import QApplication
app = QApplication([])
from heapscope.gui.app import configure_app, show_on_screen
from heapscope.gui.main_window import MainWindow
configure_app(app)
w = MainWindow()
show_on_screen(w)
app.processEvents()
f, a = w.frameGeometry(), w.screen().availableGeometry()
print(json.dumps({"frame": [f.x(), f.y(), f.width(), f.height()],
                  "screen": [a.x(), a.y(), a.width(), a.height()]}))
'''


def test_the_window_opens_no_larger_than_its_screen(tmp_path):
    """Issue 24: on a 1280 x 720 projector the window opened 1400 x 900.
    Qt's offscreen platform is given a screen of that size (its configfile)."""
    import json
    import os
    import subprocess
    import sys
    config = tmp_path / "screen.json"
    config.write_text(json.dumps({"screens": [{"name": "projector", "x": 0, "y": 0, "width": 1280,
                                               "height": 720, "logicalDpi": 96, "dpr": 1}]}))
    env = dict(os.environ, QT_QPA_PLATFORM=f"offscreen:configfile={config}")
    out = subprocess.run([sys.executable, "-c", OPEN_ON_A_PROJECTOR], env=env, capture_output=True,
                         text=True, timeout=60)
    got = json.loads(out.stdout.strip().splitlines()[-1])
    x, y, width, height = got["frame"]
    assert got["screen"] == [0, 0, 1280, 720]
    assert x >= 0 and y >= 0 and x + width <= 1280 and y + height <= 720, got
    assert width >= 1200 and height >= 680        # cut to the screen, not shrunk to nothing


#: (theme, presenter mode): the quick suite runs the light theme as it opens
#: and the dark one in presenter mode, the deep suite all four
GAUGE_LOOKS = [("light", False), ("light", True), ("dark", False), ("dark", True)]


@pytest.mark.parametrize("theme, presenter", some_in_quick(GAUGE_LOOKS, keep=(("light", False), ("dark", True))),
                         ids=[f"{t}-{'presenter' if p else 'normal'}" for t, p in GAUGE_LOOKS])
def test_at_1280x720_every_gauge_is_whole_in_the_window(qtbot, loaded, presenter, theme):
    w = loaded
    at_size(qtbot, w, 1280, 720, presenter=presenter, theme_name=theme)
    w.seek(300)         # a step shown after the resize (as heapscope render does)
    settle(qtbot)
    assert w.minimumSizeHint().width() <= 1280 and w.minimumSizeHint().height() <= 720
    assert w.gauges.arrangement == w.gauges.STRIP
    for g in w.gauges.all:
        assert whole_in_window(g, w), g.title.text()
        for part in (g.title, g.value_label, g.bar):
            assert whole_in_window(part, w), (g.title.text(), part)
        # the number is drawn whole: its text fits its label
        assert g.value_label.fontMetrics().horizontalAdvance(g.value_label.text()) <= g.value_label.width()
    for part in (w.heap_map.plot_widget, w.bar.slider, w.bar.description):
        assert whole_in_window(part, w)
    # the map's scale line is whole under the map's cells, where it is drawn
    hm = w.heap_map
    axis = hm.plot.getAxis("bottom")
    assert "1 row = " in axis.labelText
    left, width = axis.label.pos().x(), axis.label.boundingRect().width()
    assert 0 <= left and left + width <= axis.width() <= hm.vb.sceneBoundingRect().width() + 1
    assert stacked_without_overlap(w.structure_panel.view)
    left = hm.plot.getAxis("left")
    assert not left.label.isVisible() or left.label.boundingRect().width() <= left.height()
    # the legend is whole, every entry the policy uses shown
    for key, entry in hm.legend.entries.items():
        if entry.isVisibleTo(hm.legend):
            assert whole_in_window(entry, w), key


def test_a_tall_window_has_the_gauges_in_a_column_and_a_short_one_in_a_strip(qtbot, loaded):
    w = loaded
    at_size(qtbot, w, 1400, 1000, screen_height=900)        # a tall window on a 900-line screen
    assert w.gauges.arrangement == w.gauges.COLUMN and w.gauge_scroll.isVisible()
    for g in w.gauges.all:
        assert whole_in_window(g, w) and g.detail.isVisible()
    at_size(qtbot, w, 1280, 720)
    assert w.gauges.arrangement == w.gauges.STRIP and not w.gauge_scroll.isVisible()
    assert not any(g.detail.isVisible() for g in w.gauges.all)
    assert all(g.detail.text() in g.toolTip() for g in w.gauges.all)   # the detail is a hover away
    at_size(qtbot, w, 1400, 1000, screen_height=900)
    assert w.gauges.arrangement == w.gauges.COLUMN


# --------------------------------------------------------------------- fonts
def font_sizes(w) -> dict:
    """Point sizes (or pixel sizes, for the structure view's own fonts) of
    everything presenter mode must enlarge, read back from the widgets and
    the pyqtgraph items."""
    hm, plots = w.heap_map, w.plots
    sizes = {
        "application": QApplication.font().pointSizeF(),
        "menu": w.menuBar().font().pointSizeF(),
        "map hover line": hm.info.font().pointSizeF(),
        "map legend": hm.legend.labels["payload"].font().pointSizeF(),
        "map legend pointer name": hm.legend.labels["search pointer"].font().pointSizeF(),
        "map legend swatch": hm.legend._swatches[0][0].width(),
        "map axis ticks": hm.plot.getAxis("left").style["tickFont"].pointSizeF(),
        "map axis width": hm.plot.getAxis("left").width(),
        "map axis label": float(re.search(r"font-size: ([\d.]+)pt", hm.plot.getAxis("bottom").labelString())[1]),
        "map search numbers": min(number_points(hm)),
        "map pointer names": min(lab.textItem.font().pointSizeF() for lab in hm._pointer_labels
                                 if lab.isVisible()),
        "map note": hm.skip_label.textItem.font().pointSizeF(),
        "map pointer symbol": hm.pointer_item.opts["size"],
        "map marker symbol": hm.marker_item.opts["size"],
        "map pointer note": float(re.search(r"font-size: ([\d.]+)pt", hm.pointer_note.styleSheet())[1]),
        "explain lines": w.explain_panel.list.font().pointSizeF(),
        "explain title": w.explain_panel.title.font().pointSizeF(),
        "step line": w.bar.description.font().pointSizeF(),
        "plot ticks": plots.heap_plot.getAxis("bottom").style["tickFont"].pointSizeF(),
        "plot titles": float(plots.heap_plot.titleLabel.opts["size"].rstrip("pt")),
        "structure drawing zoom": w.structure_panel.view.zoom_factor,
    }
    for g in w.gauges.all:
        sizes[f"gauge {g.long_title} number"] = g.value_label.font().pointSizeF()
        sizes[f"gauge {g.long_title} title"] = g.title.font().pointSizeF()
    view = w.structure_panel.view
    own = [x for x in view.findChildren(QLabel) if x.testAttribute(Qt.WA_SetFont)]
    assert own
    for i, label in enumerate(own):
        f = label.font()
        sizes[f"structure label {i}"] = f.pixelSize() if f.pixelSize() > 0 else f.pointSizeF()
    return sizes


def number_points(hm) -> list[float]:
    """The point sizes of the search numbers on the map (there must be some)."""
    sizes = [lab.textItem.font().pointSizeF() for lab in hm._order_labels if lab.isVisible()]
    assert sizes, "no search numbers on the map"
    return sizes


def seek_to_a_search(w, start=300) -> int:
    """Show the first step from ``start`` on whose search the map numbers."""
    for t in range(start, w.timeline.n + 1):
        w.seek(t)
        if any(lab.isVisible() for lab in w.heap_map._order_labels):
            return t
    raise AssertionError("no step with a search")


def test_presenter_mode_raises_every_font_and_turning_it_off_restores_them(qtbot, loaded):
    w = loaded
    seek_to_a_search(w)
    settle(qtbot)
    before = font_sizes(w)
    w.act_presenter.trigger()
    settle(qtbot)
    assert w.presentation.presenter and w.act_presenter.isChecked()
    during = font_sizes(w)
    for key, size in before.items():
        assert during[key] > size * 1.1, (key, size, during[key])
    assert during["application"] == pytest.approx(before["application"] * PRESENTER_TEXT, rel=0.02)
    # outlines thicken too
    assert w.heap_map.placed_item.pen().widthF() > 4 * 1.5
    assert w.heap_map.searched_item.pen().widthF() > 2.5 * 1.5
    assert w.heap_map.cut_item.pen().widthF() > 4 * 1.5
    w.act_presenter.trigger()
    settle(qtbot)
    assert font_sizes(w) == pytest.approx(before, rel=0.02)


def test_text_follows_the_screen(qtbot, loaded):
    assert Presentation(screen_height=900).body_pt == BASE_PT
    assert Presentation(screen_height=1080).body_pt == pytest.approx(13.2)
    assert screen_factor(720) < screen_factor(1080) < screen_factor(1440)
    w = loaded
    seek_to_a_search(w)
    w.apply_presentation(w.presentation.with_(screen_height=1080))
    settle(qtbot)
    assert QApplication.font().pointSizeF() == pytest.approx(13.2)
    assert min(number_points(w.heap_map)) >= 13      # the search numbers were 9 pt
    big = w.gauges.frag.value_label.font().pointSizeF()
    w.apply_presentation(w.presentation.with_(screen_height=900))
    settle(qtbot)
    assert QApplication.font().pointSizeF() == pytest.approx(11)
    assert w.gauges.frag.value_label.font().pointSizeF() < big


# -------------------------------------------------------------------- themes
def test_the_dark_theme_swaps_black_and_white_and_keeps_the_heap_colours(qtbot, loaded):
    w = loaded
    w.seek(120)
    hm = w.heap_map
    light_payload = hm.cell_colour(int(hm.blocks.addr[0]))
    w.act_dark.trigger()
    settle(qtbot)
    assert w.presentation.theme_name == "dark"
    assert QApplication.palette().window().color().name() == DARK.window.lower()
    assert hm.plot_widget.backgroundBrush().color().name() == DARK.background.lower()
    assert hm.released_item.pen().color().name() == "#ffffff"      # a freed block: white outline
    assert hm.selected_outer.pen().color().name() == "#ffffff"
    # what holds data keeps Okabe & Ito's colour; past the break is the theme's grey
    assert hm.cell_colour(int(hm.blocks.addr[0])) == light_payload
    lut = hm.image_item.lut
    assert tuple(lut[palette.BEYOND][:3]) == QColor(DARK.beyond).getRgb()[:3]
    assert tuple(lut[palette.PAYLOAD][:3]) == QColor(palette.BLUE).getRgb()[:3]
    assert w.plots.heap_curve.opts["pen"].color().name() == "#ffffff"
    # the transport icons are redrawn white
    icon = w.act_play.icon().pixmap(32, 32).toImage()
    colours = {icon.pixelColor(x, y).name() for x in range(32) for y in range(32) if icon.pixelColor(x, y).alpha() > 200}
    assert colours == {"#ffffff"}
    w.act_dark.trigger()
    settle(qtbot)
    assert QApplication.palette().window().color().name() == LIGHT.window.lower()
    assert hm.released_item.pen().color().name() == "#000000"


def test_presenter_mode_and_theme_are_remembered(qtbot, loaded):
    loaded.set_presenter(True)
    loaded.set_theme("dark")
    from heapscope.gui.main_window import MainWindow
    other = MainWindow()
    qtbot.addWidget(other)
    assert other.presentation.presenter and other.presentation.theme_name == "dark"
    loaded.set_presenter(False)
    loaded.set_theme("light")
    other.close()


# ---------------------------------------------------------------- legibility
def test_the_hover_line_has_the_maps_width_and_wraps_between_words(qtbot, loaded):
    w = loaded
    w.seek(300)
    at_size(qtbot, w, 1280, 720)
    hm = w.heap_map
    assert hm.info.wordWrap()
    # nothing beside it: it is as wide as the map
    assert hm.info.width() >= hm.plot_widget.width() - 10
    # the scale is under the map's axis, no longer beside the hover line
    label = hm.plot.getAxis("bottom").labelText
    assert "1 cell = " in label and "1 row = " in label
    # a used block's long line fits in the two lines kept for it
    used = next(int(a) for a, p in zip(hm.blocks.addr, hm.blocks.payload) if p >= 0)
    text = hm.describe_address(used)
    hm.info.setText(text)
    lines = hm.info.fontMetrics().boundingRect(QRect(0, 0, hm.info.width(), 1000),
                                              Qt.TextWordWrap, text).height()
    assert lines <= hm.info.height()


def test_the_top_rows_address_is_drawn_whole(qtbot, loaded):
    w = loaded
    w.seek(300)
    settle(qtbot)
    hm = w.heap_map
    axis = hm.plot.getAxis("left")
    top, bottom = hm.vb.viewRange()[1]
    (_, values), *_ = [lv for lv in axis.tickValues(min(top, bottom), max(top, bottom), axis.height())
                       if lv[1]]
    first = min(values)
    assert first == pytest.approx(0.5)      # level with the middle of row 0, not its top edge
    assert axis.tickStrings([first], 1, 1) == ["0x0"]
    # the label's middle is inside the map, so no half of it is cut off
    y = hm.vb.mapViewToScene(QPointF(0, first)).y()
    half = axis.style["tickFont"].pointSizeF() / 2
    assert hm.vb.sceneBoundingRect().top() + half < y


def test_the_step_line_never_splits_file_from_line_number():
    text = "step 2056: malloc(943) for id 1298 -> 0x43b90 after examining 7 free blocks   [default.rep line 143126]"
    kept = unbreakable_tail(text)
    assert kept.endswith("[default.rep\u00a0line\u00a0143126]")
    assert kept.replace("\u00a0", " ") == text
    assert unbreakable_tail("step 0 of 10: empty heap") == "step 0 of 10: empty heap"


def test_a_wrapped_step_line_keeps_its_bracket_on_one_line(qtbot, loaded):
    w = loaded
    w.seek(5)
    bar = w.bar
    text = bar.description.text()
    assert "[small.rep\u00a0line\u00a0" in text
    metrics = bar.description.fontMetrics()
    width = metrics.horizontalAdvance(text) * 2 // 3        # narrow enough to wrap
    tail = text[text.index("["):]
    lines = metrics.boundingRect(QRect(0, 0, width, 1000), Qt.TextWordWrap, text).height() // metrics.lineSpacing()
    assert lines >= 2
    assert metrics.horizontalAdvance(tail) < width        # the bracket fits a line, so it moves whole


# ---------------------------------------------------------------------- keys
def f1_table(html_text: str) -> dict[str, list[str]]:
    """The F1 list read back: command -> its keys."""
    import html as html_lib
    rows = re.findall(r"<tr><td><b>(.*?)</b></td><td>&nbsp;&nbsp;(.*?)</td></tr>", html_text)
    return {html_lib.unescape(text).replace("\xa0", " "): html_lib.unescape(keys).replace("\xa0", " ").split(", ")
            for keys, text in rows}


def test_every_action_has_a_key_shown_in_the_menus_and_in_the_f1_list(qtbot, loaded):
    w = loaded
    listed = f1_table(w.keys_html())
    missing = []
    for act in w.actions():
        keys = [k.toString(QKeySequence.NativeText) for k in act.shortcuts()]
        if not keys:
            missing.append(act.text())
            continue
        text = re.sub(r"&(.)", r"\1", act.text()).rstrip("…").split(" — ")[0]
        assert listed.get(text) == keys, (text, keys, listed.get(text))
    assert not missing, f"actions without a key: {missing}"
    # every item of the menus, but the lists of files, is one of those actions
    for name, menu in w.menus.items():
        for act in menu.actions():
            if act.isSeparator() or act.menu() is not None:
                continue
            assert act.shortcuts(), (name, act.text())
            assert act in w.actions()
    # a strategy is listed by its name; in its menu, a title with '&' shows it, not a mnemonic
    assert "next-fit" in listed and "splay-best-fit" in listed
    assert w.strategy_actions["next-fit"].text().endswith("(K&&R 8.7)")
    # the keys the old list forgot, and the new commands
    keys = {k for ks in listed.values() for k in ks}
    for key in ("Ctrl+1", "Ctrl+7", "Ctrl+S", "Ctrl+Q", "F5", "D", "Ctrl+E", "P", "G", "A", "L", "=", "+"):
        assert key in keys, key


def test_f1_shows_the_list_built_from_the_actions(qtbot, loaded):
    w = loaded
    qtbot.keyClick(w, Qt.Key_F1)
    box = w.message_box
    assert box.isVisible()
    assert box.text() == w.keys_html()
    # all of it is on the screen: no column squeezed, the window big enough or scrolling
    label = box.findChild(QLabel)
    assert label.width() >= label.sizeHint().width() and not label.wordWrap()
    assert "Presenter Mode" in box.text() and "Export" in box.text()
    box.close()


def test_open_starts_in_presenter_mode_and_a_theme(qtbot, monkeypatch):
    w = window_from_command_line(qtbot, monkeypatch,
                                 ["open", "vo1989:steps=50,seed=4", "--presenter", "--theme", "dark"])
    assert w.presentation.presenter and w.presentation.theme_name == "dark"
    assert w.act_presenter.isChecked() and w.act_dark.isChecked()
    qtbot.waitUntil(lambda: w.timeline is not None, timeout=10000)
    w.set_presenter(False)
    w.set_theme("light")
    w.close()


def stacked_without_overlap(widget) -> bool:
    """The widgets of ``widget``'s layout each get their own room: none is
    squeezed over its neighbour (a layout given less than it needs overlaps them)."""
    lay = widget.layout()
    rects = [lay.itemAt(i).widget().geometry() for i in range(lay.count())
             if lay.itemAt(i).widget() is not None and lay.itemAt(i).widget().isVisible()]
    for i, a in enumerate(rects):
        for b in rects[i + 1:]:
            if a.intersects(b):
                return False
    return all(widget.rect().contains(r) for r in rects)


# (the quick suite: the dark theme here, the light one for the seven rows below)
@pytest.mark.parametrize("theme", some_in_quick(["light", "dark"], keep=("dark",)))
def test_at_1280x720_in_presenter_mode_a_predict_question_fits(qtbot, loaded, theme):
    from heapscope.traces.trace import ALLOC
    w = loaded
    at_size(qtbot, w, 1280, 720, presenter=True, theme_name=theme)
    w.seek(299)
    w.set_predict(True)
    while w.predict.pending is None:
        w.step_forward()
    settle(qtbot)
    assert w.timeline.op(w.predict.pending)[0] == ALLOC
    assert (w.width(), w.height()) == (1280, 720) and w.minimumSizeHint().height() <= 720
    for part in (w.predict_bar, w.predict_bar.question, w.predict_bar.verdict, w.heap_map.plot_widget,
                 w.structure_panel.view, *w.gauges.all, w.bar.slider):
        assert whole_in_window(part, w), part
    view = w.structure_panel.view
    assert stacked_without_overlap(view)
    # the map is short here: its "row address" is left out rather than cut
    left = w.heap_map.plot.getAxis("left")
    assert not left.label.isVisible() or left.label.boundingRect().width() <= left.height()
    assert view.canvas.height() >= 100          # room to click a block in
    # a verdict's reason keeps two lines here, the whole of it in the tooltip
    free = [b[0] for b in w.predict.session(0).before.blocks if b[2] == "free"]
    w.predict_click(0, free[0])
    w.animator.finish()
    settle(qtbot)
    verdict = w.predict_bar.verdict
    assert verdict.text().count("\n") <= 1 and verdict.toolTip() == verdict.full
    assert (w.width(), w.height()) == (1280, 720)
    w.set_predict(False)


# ------------------------------------------------------ compare mode on a projector
SEVEN_ROWS = ["next-fit", "rotating-list", "splay-best-fit", "buddy", "tlsf", "bsd-buckets", "dlmalloc"]


def compare_rows(qtbot, w, names):
    with qtbot.waitSignal(w.compare.changed, timeout=60000):
        w.compare.compare(names)
    settle(qtbot)
    return w.compare.view.shown_rows()


@pytest.mark.parametrize("theme", some_in_quick(["light", "dark"], keep=("light",)))
def test_at_1280x720_seven_rows_fit_the_screen_with_the_timeline(qtbot, loaded, theme):
    # Seven rows of two-line maps made the window 803 pixels high: on a
    # 720-line projector the timeline and the step line fell off the screen.
    w = loaded
    at_size(qtbot, w, 1280, 720, theme_name=theme)
    rows = compare_rows(qtbot, w, SEVEN_ROWS)
    w.seek(300)
    settle(qtbot)
    assert w.minimumSizeHint().height() <= 720 and w.height() == 720
    assert whole_in_window(w.bar.slider, w) and whole_in_window(w.bar.step_box, w)
    scroll = w.compare.view.rows_scroll
    assert not scroll.verticalScrollBar().isVisible()           # all seven rows are whole
    for row in rows:
        assert whole_in_window(row.map.plot_widget, w) and row.map.plot_widget.height() >= 30
        info = row.map.info
        assert info.lines == 1 and info.height() < 2 * info.fontMetrics().lineSpacing()
        if info.text() != info.full_text():                      # cut short: said in full on hover
            assert info.text().endswith("…") and info.toolTip() == info.full_text()
    assert whole_in_window(w.compare.view.table.table, w)


def test_in_presenter_mode_seven_rows_scroll_and_the_table_stays_whole(qtbot, loaded):
    w = loaded
    at_size(qtbot, w, 1280, 720, presenter=True)
    rows = compare_rows(qtbot, w, SEVEN_ROWS)
    assert w.height() == 720 and whole_in_window(w.bar.slider, w)
    assert w.compare.view.rows_scroll.verticalScrollBar().isVisible()
    assert whole_in_window(rows[0].map.plot_widget, w)
    # every row's name is whole in its header, at presenter size
    for row in rows:
        assert row.name.fontMetrics().horizontalAdvance(row.name.text()) <= row.name.width()
    table = w.compare.view.table
    assert whole_in_window(table.table, w)
    # the note under the table starts below it (they overlapped on a short screen)
    assert table.note.mapTo(w, QPoint(0, 0)).y() >= table.table.mapTo(w, QPoint(0, 0)).y() + table.table.height()


def test_three_rows_keep_two_lines_under_each_map(qtbot, loaded):
    w = loaded
    at_size(qtbot, w, 1280, 720)
    for row in compare_rows(qtbot, w, ["next-fit", "tlsf", "buddy"]):
        assert row.map.info.lines == 2 and row.map.info.wordWrap()


def test_compare_rows_take_the_dark_theme(qtbot, loaded):
    # The rows' maps, gauges and the ranking kept the light theme's colours:
    # the heap size in black on the dark window, white maps, white text on
    # the pale green of the best values.
    w = loaded
    rows = compare_rows(qtbot, w, ["next-fit", "tlsf", "buddy"])
    w.seek(400)
    w.set_theme("dark")
    settle(qtbot)
    view = w.compare.view
    for row in rows:
        assert row.map.presentation.theme is DARK
        assert QColor(row.map.plot_widget.backgroundBrush().color()) == QColor(DARK.background)
        assert DARK.contrast.lower() in row.gauges.values["heap"].styleSheet().lower()
    table = view.table.table

    def best():
        return [table.item(r, c).background().color() for r in range(3) for c in range(2, table.columnCount())
                if table.item(r, c) is not None and table.item(r, c).background().style() != Qt.NoBrush]

    # the table redraws at most every 125 ms: waited for, up to a second
    qtbot.waitUntil(lambda: best() and all(c == QColor(DARK.best) for c in best()), timeout=1000)
    rows += compare_rows(qtbot, w, ["next-fit", "tlsf", "buddy", "bsd-buckets"])[3:]
    assert rows[3].map.presentation.theme is DARK          # a row made after the switch too


def test_rows_made_in_presenter_mode_come_back_to_normal_sizes(qtbot, loaded):
    # Rows made while presenter mode was on kept presenter-sized labels and
    # table after it was turned off (it is remembered, so a window can start
    # in it).
    w = loaded
    rows = compare_rows(qtbot, w, ["next-fit", "tlsf"])
    normal = {id(r): (r.name.font().pointSizeF(), r.gauges.values["heap"].font().pointSizeF()) for r in rows}
    normal_name = rows[0].name.font().pointSizeF()
    w.compare.leave()
    w.set_presenter(True)
    settle(qtbot)
    made = compare_rows(qtbot, w, ["splay-best-fit", "buddy", "bsd-buckets"])
    assert made[0].name.font().pointSizeF() > normal_name
    w.set_presenter(False)
    settle(qtbot)
    for row in made:
        assert row.name.font().pointSizeF() == pytest.approx(normal_name, abs=0.15)
        assert row.gauges.values["heap"].font().pointSizeF() == pytest.approx(
            next(iter(normal.values()))[1], abs=0.15)
        assert row.header.width() == rows[0].header.width()


def test_a_short_row_says_the_numbers_it_left_out_in_words_not_over_its_map(qtbot, loaded, monkeypatch):
    # "+N not numbered", placed under the first block left without a number,
    # covered much of a 30-pixel map; the line under the map says it.
    w = loaded
    at_size(qtbot, w, 1280, 720)
    rows = compare_rows(qtbot, w, SEVEN_ROWS)
    row = rows[SEVEN_ROWS.index("next-fit")]
    own = Timeline(w.trace, "next-fit").build()     # the window's stays where it is

    def visits(t: int) -> int:
        own.seek(t)
        return len(step_marks(own.last_record).visits)

    t = next(t for t in range(201, w.model.n) if w.trace.kind[t - 1] == 0 and visits(t) >= 6)
    w.seek(t)
    settle(qtbot)
    monkeypatch.setattr(row.map, "_label_budget", lambda: 2)      # room for two numbers only
    row.map._draw_marks_of_step()
    row.map._place_labels()
    assert row.map.marks.skipped > 0 and not row.map._tall()
    assert not row.map.skip_label.isVisible()
    assert "in between not" in row.map.info.full_text()
    # a tall map (one strategy's window) still shows it
    w.compare.leave()
    settle(qtbot)
    w.seek(t)
    settle(qtbot)
    monkeypatch.setattr(w.heap_map, "_label_budget", lambda: 2)
    w.heap_map._draw_marks_of_step()
    assert w.heap_map.skip_label.isVisible()


def test_presenter_modes_font_and_palette_are_put_back_after_a_test(qtbot, loaded, _fresh_look):
    """The autouse fixture's step (tests/gui/conftest.py): presenter mode in
    the dark theme changes the application's font and palette; put back,
    they are a fresh window's again (the tests no longer restore them
    themselves)."""
    from .conftest import put_back_look
    font, palette = _fresh_look
    assert QApplication.font() == font and QApplication.palette() == palette     # as this test began
    loaded.apply_presentation(loaded.presentation.with_(presenter=True, theme_name="dark"))
    assert QApplication.font().pointSizeF() > font.pointSizeF()
    assert QApplication.palette().window().color() != palette.window().color()
    put_back_look(QApplication.instance(), font, palette)
    assert QApplication.font() == font and QApplication.palette() == palette
