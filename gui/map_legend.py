"""The heap map's legend: a swatch and a few words for each colour of the
cells (payload, headers, padding, free, the wilderness, the allocator's
bytes) and each mark drawn over them (the search's numbers, a cut, the
block placed or freed, the heap's growth, a failed request, the policy's
pointers, the selection), wrapped to the map's width like words."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHBoxLayout, QLabel, QSizePolicy, QWidget

from . import palette
from .flow_layout import FlowLayout
from .theme import Presentation, cell_colours as theme_cell_colours

#: the colour of a marker pointer (Vmbest's wilderness)
MARKER_COLOUR = palette.BLUISH_GREEN

#: the legend's words on a short screen
SHORT_LEGEND = {"header / footer": "header", "alignment padding": "padding", "top (wilderness)": "top",
                "allocator meta": "meta", "searched (in order)": "searched", "failed request": "failed",
                "cut (split)": "cut", "freed, joined": "freed", "heap grew (sbrk)": "grew",
                "past the break": "beyond", "selected (click)": "selected"}


class Legend(QWidget):
    """Colour swatches for the heap kinds and the step highlights, wrapped to
    the map's width like words.  Entries a policy has no use for (the top
    block, a marker pointer) are hidden: :meth:`set_policy`.  The swatches
    take the theme's colours and grow with the text
    (:meth:`apply_presentation`); on a short screen the words are cut short
    (:meth:`set_compact`)."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        flow = FlowLayout(self, h_spacing=14, v_spacing=3)
        flow.setContentsMargins(4, 2, 4, 2)
        self.entries: dict[str, QWidget] = {}
        self.labels: dict[str, QLabel] = {}
        #: key -> (long words, short words)
        self._words: dict[str, tuple[str, str]] = {}
        self.compact = False
        kinds = {palette.TOP: "top", palette.FREE: "free"}
        # (key, words, cell code or None, style)
        fill = [(kinds.get(code, label), label, code, False) for code, label, colour in palette.CELL_KINDS]
        outline = [("searched", "searched (in order)", None, "number"),
                   ("cut", "cut (split)", None, "cut"),
                   ("placed", "placed", None, True),
                   ("freed", "freed, joined", None, "dash"),
                   ("grew", "heap grew (sbrk)", None, "dot"),
                   ("failed", "failed request", None, "hatch"),
                   ("search pointer", "search pointer", None, "pointer"),
                   ("marker", "marker", None, "marker"),
                   ("selected", "selected (click)", None, "selected")]
        self._swatches: list[tuple[QLabel, str, int | None, object]] = []
        for key, label, code, style in fill + outline:
            entry = QWidget()
            row = QHBoxLayout(entry)
            row.setContentsMargins(0, 0, 0, 0)
            row.setSpacing(5)
            swatch = QLabel()
            swatch.setAlignment(Qt.AlignCenter)
            swatch.setText({"number": "1", "cut": "|", "pointer": "▲", "marker": "◆"}.get(style, ""))
            self._swatches.append((swatch, key, code, style))
            text = QLabel(label)
            row.addWidget(swatch)
            row.addWidget(text)
            flow.addWidget(entry)
            self.entries[key] = entry
            self.labels[key] = text
            self._words[key] = (label, SHORT_LEGEND.get(label, label))
        policy = QSizePolicy(QSizePolicy.Preferred, QSizePolicy.Preferred)
        policy.setHeightForWidth(True)
        self.setSizePolicy(policy)
        self.set_policy(False, (), ())
        self.apply_presentation(Presentation())

    def set_policy(self, has_top: bool, search_names, marker_names) -> None:
        """Show the top-block swatch only for a policy with a wilderness, and
        name the policy's pointers."""
        search_names, marker_names = tuple(search_names), tuple(marker_names)
        if getattr(self, "_policy", None) == (has_top, search_names, marker_names):
            return
        self._policy = (has_top, search_names, marker_names)
        self.entries["top"].setVisible(has_top)
        # short: the pointers' own names ("rover"), which say what they are
        self._words["search pointer"] = (
            "search pointer" + (f" ({', '.join(search_names)})" if search_names else ""),
            ", ".join(search_names) or "pointer")
        self.entries["search pointer"].setVisible(bool(search_names))
        self._words["marker"] = (f"marker ({', '.join(marker_names)})" if marker_names else "marker",
                                 ", ".join(marker_names) or "marker")
        self.entries["marker"].setVisible(bool(marker_names))
        self._show_words()

    def set_compact(self, compact: bool) -> None:
        """Short words (a short screen): the legend wraps to fewer lines."""
        self.compact = bool(compact)
        self._show_words()

    def _show_words(self) -> None:
        for key, (long, short) in self._words.items():
            self.labels[key].setText(short if self.compact else long)
        self.layout().invalidate()
        self.updateGeometry()

    def apply_presentation(self, pres: Presentation) -> None:
        """Swatches as big as the text, outlines as thick as the map's, in the
        theme's colours."""
        theme, k, lines = pres.theme, pres.text_scale, pres.line_scale
        colours = theme_cell_colours(theme)
        outline = {"searched": palette.SEARCHED, "cut": theme.contrast, "placed": palette.PLACED,
                   "freed": theme.contrast, "grew": theme.grown, "failed": palette.FAILED,
                   "search pointer": palette.SEARCHED, "marker": MARKER_COLOUR, "selected": theme.contrast}
        bg = theme.background
        symbol_px = round(16 * k)
        for swatch, key, code, style in self._swatches:
            swatch.setFixedSize(round(22 * k), round(16 * k))
            colour = colours[code] if code is not None else outline[key]
            border = round(3 * lines)
            if style is True:
                css = f"background: {bg}; border: {border}px solid {colour};"
            elif style == "dash":
                css = f"background: {bg}; border: {border}px dashed {colour};"
            elif style == "dot":
                css = f"background: {bg}; border: {border}px dotted {colour};"
            elif style == "number":
                css = (f"background: {colour}; color: black; border: 1px solid black; font-weight: bold;"
                       f"font-size: {round(12 * k)}px;")
            elif style == "cut":
                css = f"color: {colour}; font-size: {symbol_px}px; font-weight: bold;"
            elif style in ("pointer", "marker"):
                css = f"color: {colour}; font-size: {symbol_px}px;"
            elif style == "selected":
                css = f"background: {theme.contrast_core}; border: {round(4 * lines)}px double {colour};"
            elif style == "hatch":
                css = f"background: {colour}; border: 2px dashed {bg};"
            else:
                css = f"background: {colour}; border: 1px solid {theme.axis};"
            swatch.setStyleSheet(css)
        self.layout().invalidate()     # the words grew: wrap again
        self.updateGeometry()

