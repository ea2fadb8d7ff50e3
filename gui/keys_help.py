"""Help > Keyboard Shortcuts (F1): every command with its keys, read from
the window's menus and actions so that the list cannot fall out of date,
then what the mouse does; shown in :class:`KeysDialog`."""

from __future__ import annotations

import html
import re

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QFrame, QLabel, QScrollArea, QStyle, QVBoxLayout

#: what the mouse does, for the F1 list
MOUSE_ROWS = (("wheel / drag", "zoom / pan the heap map"),
              ("click a plot", "go to that step"),
              ("click a block", "select it (map and structure view)"),
              ("right-click a block", "free it, realloc it, or malloc after the step"),
              ("… in predict mode", "your answer"),
              ("click an event", "select the block it names"))


def key_rows(menus, actions) -> list[tuple[str, str, list[str]]]:
    """(menu, command, keys) for every command with a key, read from the
    ``menus``' actions (their shortcuts as shown in the menus), then the
    ``actions`` (the window's) that are in no menu."""
    rows, seen = [], set()

    def walk(menu, title):
        for act in menu.actions():
            if act.menu() is not None:
                walk(act.menu(), title)
            elif act.shortcuts() and id(act) not in seen:
                seen.add(id(act))
                # a strategy by its name alone: its original is in the menu
                rows.append((title, plain(act.text()).rstrip("…").split(" — ")[0], _key_texts(act)))

    for menu in menus:
        walk(menu, plain(menu.title()))
    for act in actions:
        if act.shortcuts() and id(act) not in seen:
            seen.add(id(act))
            rows.append(("", plain(act.text()), _key_texts(act)))
    return rows


def keys_html(rows, columns: int = 3) -> str:
    """The F1 list from :func:`key_rows`'s ``rows``: by menu, then the mouse,
    the menus in ``columns`` columns (a single long column would not fit a
    projector's screen)."""
    sections, last = [], None
    for menu, text, keys in rows:
        if menu != last:
            sections.append((menu or "Other", []))
            last = menu
        sections[-1][1].append((", ".join(keys), text))
    sections.append(("Mouse", list(MOUSE_ROWS)))

    def table(title, rows):
        cells = "".join(f"<tr><td><b>{html.escape(k)}</b></td>"
                        f"<td>&nbsp;&nbsp;{html.escape(t)}</td></tr>" for k, t in rows)
        return (f"<p><b><u>{html.escape(title)}</u></b></p>"
                f"<table cellspacing=0 cellpadding=1>{cells}</table>")

    # fill the columns in order, each about as long as the others
    total = sum(len(rows) + 2 for _, rows in sections)
    cols, height = [[]], 0
    for title, rows in sections:
        if height and height + len(rows) / 2 > total / columns and len(cols) < columns:
            cols.append([])
            height = 0
        cols[-1].append(table(title, rows))
        height += len(rows) + 2
    tds = "".join(f"<td valign=top style='padding-right: 24px'>{''.join(c)}</td>" for c in cols)
    return f"<table><tr>{tds}</tr></table>"


class KeysDialog(QDialog):
    """The F1 list: the keys' table (rich text, never wrapped) in a scroll
    area, and a Close button.  ``text()`` is the table, as a message box's."""

    def __init__(self, table_html: str, parent=None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Keyboard shortcuts")
        self.setAttribute(Qt.WA_DeleteOnClose)
        self._html = table_html
        label = QLabel(table_html)
        label.setTextFormat(Qt.RichText)
        label.setWordWrap(False)
        label.setContentsMargins(12, 8, 12, 8)
        scroll = QScrollArea()
        scroll.setWidget(label)
        scroll.setFrameShape(QFrame.NoFrame)
        buttons = QDialogButtonBox(QDialogButtonBox.Close)
        buttons.rejected.connect(self.reject)
        box = QVBoxLayout(self)
        box.addWidget(scroll, 1)
        box.addWidget(buttons)
        bar = self.style().pixelMetric(QStyle.PM_ScrollBarExtent)
        want = label.sizeHint() + QSize(40 + bar, 80 + bar)
        room = parent.size() * 0.92 if parent is not None else want
        self.resize(min(want.width(), room.width()), min(want.height(), room.height()))

    def text(self) -> str:
        return self._html


def plain(text: str) -> str:
    """A menu text without its mnemonic: 'Fas&ter' -> 'Faster', 'K&&R' -> 'K&R'."""
    return re.sub(r"&(.)", r"\1", text)


def _key_texts(act: QAction) -> list[str]:
    return [k.toString(QKeySequence.NativeText) for k in act.shortcuts()]
