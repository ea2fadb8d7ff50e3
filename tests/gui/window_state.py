"""What a window test can see of a MainWindow, as plain values: two windows
with equal states look and behave alike to a test.

The shared window of tests/gui/conftest.py (tests/gui/shared_window.py)
is handed to a test only when its state after the reset equals a fresh
window's; this module is that comparison.  It reads, generically, so that
state nobody thought of still counts:

* every heapscope object reachable from the window's attributes (the
  model, the parts, the views and their helpers, a few levels deep), each
  as its plain attributes: numbers, strings, containers of them, the class
  of anything else, the name of a function -- so a method a test wrapped
  on the instance (``Counter``) or a counter left at 3 makes it differ;
* every widget under the window: shown or hidden, enabled, its size, and
  what a person reads or sets in it (texts, ticks, values, choices, a
  splitter's sizes, a stack's page, a dock's place); every action's text,
  tick, enabled and shortcut (the menus, Open Recent among them);
* every pyqtgraph view's range and auto-range, and the plots' curves;
* how many slots each signal of those heapscope objects is connected to
  (a test's own function left connected to the model);
* the top-level windows shown besides it (dialogs, message boxes, menus),
  the application's font and palette, the settings the window writes to.
"""

from __future__ import annotations

import math
import re

import numpy as np
from PySide6.QtCore import QObject
from PySide6.QtWidgets import (QAbstractButton, QAbstractSlider, QAbstractSpinBox, QApplication,
                               QComboBox, QDockWidget, QGraphicsItem, QLabel, QLineEdit, QPlainTextEdit,
                               QScrollBar, QSplitter, QStackedWidget, QTabWidget, QTextEdit, QWidget)

#: how deep the walk goes from the window through heapscope objects
DEPTH = 4

#: attributes that differ between any two windows and say nothing a test
#: sees (checked: two fresh windows differ in these only)
IGNORED = frozenset({
    "_screen_hooked",         # MainWindow: the screen hook connected once, at the first show
    "cpu_seconds", "wall_seconds",      # Timeline: how long its replay took
    "checkpoints", "checkpoint_steps",  # Timeline: kept every so much replay time, not steps
    "alive",                  # UserCodeWatch: the clock at its last heartbeat
    "_scratch", "scratch",    # HeapMapWidget, HeapCells: reused buffers, rewritten before each read
    "serial", "_image_of",    # a shown heap's serial number and the image cached under it
    "_styled",                # MapLabels: the labels styled so far (restyled on a change)
    "textWidth",              # pyqtgraph AxisItem: its last text's width (the axis' width counts)
    "__METAOBJECT__",         # PySide's own, made on first use of a dynamic signal
    "_hooked",                # SandboxEdits: the ids of the maps it hooked (each window's own)
    "_steps",                 # ShowModel: the shown steps and what views asked of them, cached
})

#: a replay's time in the status bar, which differs from run to run
_TIMING = re.compile(r"replayed in [0-9.,]+ s")


#: {text: placeholder}: a test's own folder, replaced in every string read
_placeholders: dict[str, str] = {}


def plain(value, depth: int = 2):
    """``value`` as something == compares by content."""
    if isinstance(value, str):
        for text, placeholder in _placeholders.items():
            value = value.replace(text, placeholder)
        return _TIMING.sub("replayed in … s", value)
    if value is None or isinstance(value, (bool, int, bytes)):
        return value
    if isinstance(value, float):
        return "nan" if math.isnan(value) else value
    if isinstance(value, np.ndarray):
        return ("array", value.dtype.str, value.shape,
                float(np.nansum(value.astype(np.float64))) if value.size and value.dtype.kind in "biuf" else None)
    if isinstance(value, np.generic):
        return value.item()
    if depth <= 0:
        return type(value).__qualname__
    if isinstance(value, list) and all(isinstance(v, QGraphicsItem) for v in value):
        # a pool of labels kept for reuse: what shows is the ones visible
        return ("graphics items shown", sum(v.isVisible() for v in value))
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, [plain(v, depth - 1) for v in value[:50]], len(value))
    if isinstance(value, (set, frozenset)):
        return ("set", sorted(repr(plain(v, depth - 1)) for v in value))
    if isinstance(value, dict):
        return ("dict", sorted((repr(plain(k, 1)), repr(plain(v, depth - 1))) for k, v in
                               list(value.items())[:50]), len(value))
    if callable(value) and not isinstance(value, QObject):
        owner = getattr(value, "__self__", None)
        return ("callable", getattr(value, "__qualname__", type(value).__qualname__),
                type(owner).__qualname__ if owner is not None else None)
    return type(value).__qualname__


def _ignored(name: str) -> bool:
    # and what tests/gui/shared_window.py notes on a window when it is made
    return name in IGNORED or name.startswith("_fresh_")


def _ours(value) -> bool:
    return type(value).__module__.startswith("heapscope.")


def _links(obj):
    """(name, value) of the heapscope objects ``obj`` holds: attributes, and
    the items of lists and dicts of them."""
    for name, value in sorted(vars(obj).items()):
        if _ignored(name):
            continue
        if _ours(value) and (not callable(value) or isinstance(value, QObject)):
            yield name, value
        elif isinstance(value, (list, tuple)) and value and all(_ours(v) for v in value[:20]):
            for i, v in enumerate(value[:20]):
                yield f"{name}[{i}]", v
        elif isinstance(value, dict) and value and all(_ours(v) for v in list(value.values())[:20]):
            for k, v in list(value.items())[:20]:
                yield f"{name}[{k!r}]", v


def reachable(window):
    """(path, object) of every heapscope object reachable from ``window`` in
    :data:`DEPTH` steps, the window first."""
    seen: set[int] = set()
    todo = [("w", window, 0)]
    while todo:
        path, obj, depth = todo.pop(0)
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        try:
            vars(obj)
        except TypeError:
            continue
        yield path, obj
        if depth < DEPTH:
            todo.extend((f"{path}.{name}", value, depth + 1) for name, value in _links(obj))


def objects_state(window) -> dict:
    """{path: {attribute: plain value}} of every heapscope object reachable
    from ``window`` in :data:`DEPTH` steps."""
    out: dict[str, dict] = {}
    for path, obj in reachable(window):
        state = {}
        for name, value in sorted(vars(obj).items()):
            if _ignored(name):
                continue
            if _ours(value) and (not callable(value) or isinstance(value, QObject)):
                state[name] = "->" + type(value).__qualname__
            else:
                state[name] = plain(value)
        out[path] = state
    return out


def _widget_facts(widget: QWidget) -> tuple:
    return tuple(plain(x) for x in _facts(widget))


#: a scroll area's boxes for its scroll bars, shown when its content overflows
SCROLL_BAR_BOXES = ("qt_scrollarea_vcontainer", "qt_scrollarea_hcontainer")


def _facts(widget: QWidget) -> list:
    facts = [type(widget).__qualname__, widget.objectName(), widget.isHidden(), widget.isEnabled()]
    if widget.objectName() in SCROLL_BAR_BOXES and not widget.isVisible():
        facts[2] = None         # shown or not by the layout of a hidden page (below)
    if isinstance(widget, QLabel):
        facts.append(widget.text())
    elif isinstance(widget, QAbstractButton):
        facts += [widget.text(), widget.isChecked()]
    elif isinstance(widget, QLineEdit):
        facts.append(widget.text())
    elif isinstance(widget, (QPlainTextEdit, QTextEdit)):
        facts.append(widget.toPlainText())
    elif isinstance(widget, QAbstractSpinBox):
        facts.append(widget.text())
    elif isinstance(widget, QScrollBar) and not widget.isVisible():
        # a hidden page's scroll bar: its range is the layout's (a picture
        # export lays out the hidden compare page, grab() does), and made
        # again from the sizes when the page shows; what it scrolled to is state
        facts.append(widget.value())
    elif isinstance(widget, QAbstractSlider):
        facts += [widget.minimum(), widget.maximum(), widget.value()]
    elif isinstance(widget, QComboBox):
        facts += [widget.currentIndex(), widget.count()]
    elif isinstance(widget, QSplitter):
        facts.append(tuple(widget.sizes()))
    elif isinstance(widget, (QStackedWidget, QTabWidget)):
        facts.append(widget.currentIndex())
    elif isinstance(widget, QDockWidget):
        area = getattr(widget.window(), "dockWidgetArea", None)
        facts += [widget.isFloating(), area(widget).name if area is not None else None]
    return facts


def widgets_state(window) -> dict:
    """Every widget, action and pyqtgraph view under ``window``."""
    import pyqtgraph as pg
    from PySide6.QtGui import QAction
    # sorted: a widget or action re-parented moves in the list of children
    widgets = sorted((_widget_facts(w) for w in window.findChildren(QWidget)), key=repr)
    actions = sorted(((plain(a.text()), a.isCheckable() and a.isChecked(), a.isEnabled(), a.isVisible(),
                       a.shortcut().toString()) for a in window.findChildren(QAction)), key=repr)
    views = []
    for plot in window.findChildren(pg.GraphicsView):
        for item in plot.items():
            if isinstance(item, pg.ViewBox):
                views.append((tuple(tuple(round(x, 6) for x in r) for r in item.viewRange()),
                              tuple(item.state["autoRange"])))
            elif isinstance(item, pg.AxisItem):
                # (not its size in pixels: that follows the layout, which the
                # splitters' sizes above say, a paint or two late)
                views.append(("axis", item.orientation, item.isVisible()))
            elif isinstance(item, pg.PlotDataItem):
                x, y = item.getData()
                views.append(("curve", plain(x), plain(y)))
    return {"widgets": widgets, "actions": actions, "views": views,
            "size": (window.width(), window.height()),
            "window": (plain(window.windowTitle()), window.isMaximized(), window.isFullScreen(),
                       plain(window.statusBar().currentMessage()))}


def application_state(window) -> dict:
    app = QApplication.instance()
    others = sorted(type(w).__qualname__ for w in app.topLevelWidgets()
                    if w is not window and w.isVisible())
    settings = window.settings
    focus = app.focusWidget()
    return {"others": others, "active": app.activeWindow() is window,
            "focus": (type(focus).__qualname__, focus.objectName()) if focus is not None else None, "font": app.font().toString(),
            "palette": app.palette().window().color().name(),
            "settings": (plain(settings.fileName()),
                         {k: plain(repr(settings.value(k))) for k in settings.allKeys()}),
            "style_sheet": app.styleSheet()}


def receivers(window) -> dict:
    """{path.signal: how many slots it is connected to} of the window and
    the heapscope QObjects it holds (the model, the player, the parts): a
    test that connected a function of its own to the model's
    ``step_changed`` leaves it connected (a later test's steps would call
    it), and only this shows it.  (Not deeper: the views' own parts connect
    as they are made.)"""
    from PySide6.QtCore import QMetaMethod
    out = {}
    for path, obj in reachable(window):
        if not isinstance(obj, QObject) or path.count(".") > 1:
            continue
        meta = obj.metaObject()
        for i in range(meta.methodCount()):
            method = meta.method(i)
            if method.methodType() == QMetaMethod.Signal:
                signature = bytes(method.methodSignature()).decode()
                out[f"{path}.{signature}"] = obj.receivers("2" + signature)
    return out


def window_state(window, placeholders: dict | None = None) -> dict:
    """The window's state as plain values (see the module's docstring);
    ``placeholders``: {text: placeholder} replaced in every string (a
    test's own folder, which differs from test to test)."""
    _placeholders.clear()
    _placeholders.update(placeholders or {})
    try:
        return {"objects": objects_state(window), "receivers": receivers(window),
                **widgets_state(window), **application_state(window)}
    finally:
        _placeholders.clear()


def differences(a: dict, b: dict, limit: int = 20) -> list[str]:
    """Where two states differ, in a few lines (for messages)."""
    out = []

    def walk(x, y, path):
        if len(out) >= limit:
            return
        if isinstance(x, dict) and isinstance(y, dict):
            for k in sorted(set(x) | set(y), key=repr):
                if k not in x or k not in y:
                    out.append(f"{path}/{k}: only in {'the first' if k in x else 'the second'}")
                else:
                    walk(x[k], y[k], f"{path}/{k}")
        elif isinstance(x, list) and isinstance(y, list) and len(x) == len(y):
            for i, (p, q) in enumerate(zip(x, y)):
                walk(p, q, f"{path}[{i}]")
        elif x != y:
            out.append(f"{path}: {str(x)[:200]} != {str(y)[:200]}")

    walk(a, b, "")
    return out
