"""The heap map's transition from one event of a step to the next.

When a micro-step reaches an event, the marks it adds (the ring on the
event's block, the block placed, the block freed, the search number just
written) fade in and a cut slides down its row, over the model's
``transition_ms``.  :class:`MapTransition` runs that: by the clock (a
``QVariantAnimation``), or, for an exporter stepping frames at a fixed rate,
by :meth:`MapTransition.seek`.  It knows nothing of what the items are: it
sets their opacity and tells ``on_cut(progress)`` how far the newest cut is.
"""

from __future__ import annotations

from PySide6.QtCore import QVariantAnimation


class MapTransition:
    """The fading in of ``fresh`` items (anything with ``setOpacity``) and
    the sliding in of a cut (``on_cut(progress)``), owned by ``parent``."""

    def __init__(self, parent, on_cut) -> None:
        self.anim = QVariantAnimation(parent)
        self.anim.setStartValue(0.0)
        self.anim.setEndValue(1.0)
        self.anim.valueChanged.connect(self.show_at)
        self._on_cut = on_cut
        #: the items fading in (the same list object throughout)
        self.fresh: list = []
        #: the newest cut slides in
        self.cut_fresh = False
        #: an exporter moves transitions on with seek() instead of the clock
        self.manual = False
        self._manual_ms: float | None = None

    def prepare(self, fresh, cut_fresh: bool) -> None:
        """What the next transition shows: ``fresh`` items fade in, the
        newest cut slides in if ``cut_fresh``."""
        self.fresh[:] = fresh
        self.cut_fresh = bool(cut_fresh)

    def has_work(self) -> bool:
        return bool(self.fresh) or self.cut_fresh

    def start(self, ms: int) -> None:
        """Start from nothing shown, over ``ms`` milliseconds."""
        self.show_at(0.0)
        self.anim.setDuration(ms)
        if self.manual:
            self._manual_ms = 0.0          # an exporter moves it on with seek()
        else:
            self.anim.start()

    def running(self) -> bool:
        return self.anim.state() == QVariantAnimation.Running or self._manual_ms is not None

    def stop(self) -> None:
        """Jump to the end: everything shown whole."""
        if self.anim.state() == QVariantAnimation.Running:
            self.anim.stop()
        self._manual_ms = None
        self.show_at(1.0)

    def seek(self, ms: float) -> None:
        """Show the transition under way ``ms`` after its start, without the
        clock; past its length it ends."""
        if not self.running():
            return
        self.anim.stop()
        duration = max(1, self.anim.duration())
        if ms >= duration:
            self.stop()
        else:
            self._manual_ms = float(ms)
            self.show_at(ms / duration)

    def show_at(self, progress) -> None:
        """The fresh items at ``progress`` (0..1) of their fade, and the cut."""
        progress = float(progress)
        for item in self.fresh:
            item.setOpacity(progress)
        if self.cut_fresh:
            self._on_cut(progress)
