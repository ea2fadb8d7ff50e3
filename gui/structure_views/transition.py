"""A structure view's move from the drawing it had to the one it has now.

A view animates between two states it can both draw (DESIGN.md, "Views and
animation"): it draws the new state as it would without animation -- so the
end of a transition *is* the static drawing -- then puts the items that moved
back where they were and lets a :class:`Transition` carry them there.  A
:class:`Morph` lists what changes with the progress ``t`` (0 -> 1): items
gliding from one position to another, items fading in or out, and calls for
whatever else a view interpolates (a rectangle growing, a scan walking cell by
cell, edges following their nodes).  Each track may run over part of the
transition only (``window``), which is how a refill fills its column one
block after another.

One ``QVariantAnimation`` per transition drives the morph (Qt's animation
framework: no blocking loop, no timer of our own), with an ease-in-out curve.
:meth:`Transition.seek` sets the progress from a time instead, without the
clock: an exporter steps frames at a fixed rate and gets the same frames on
every run (gui.step_animator.step_frames).  :meth:`Transition.finish` jumps to
the end at once; a finished transition has removed the items that were
leaving, and nothing of it runs any more.
"""

from __future__ import annotations

from PySide6.QtCore import QEasingCurve, QObject, QPointF, QRectF, QVariantAnimation


#: what leaves fades out in the first half, what replaces it in the second, so
#: a frame never shows two texts over each other at half strength
FIRST_HALF, SECOND_HALF = (0.0, 0.45), (0.45, 1.0)


def lerp(a: float, b: float, t: float) -> float:
    return a + (b - a) * t


def lerp_point(a: QPointF, b: QPointF, t: float) -> QPointF:
    return QPointF(lerp(a.x(), b.x(), t), lerp(a.y(), b.y(), t))


def lerp_rect(a: QRectF, b: QRectF, t: float) -> QRectF:
    return QRectF(lerp(a.x(), b.x(), t), lerp(a.y(), b.y(), t), lerp(a.width(), b.width(), t),
                  lerp(a.height(), b.height(), t))


def _local(t: float, window: tuple[float, float]) -> float:
    t0, t1 = window
    if t <= t0:
        return 0.0
    if t >= t1:
        return 1.0
    return (t - t0) / (t1 - t0)


class Morph:
    """What a transition changes, as tracks over its progress ``t`` in [0, 1]."""

    def __init__(self) -> None:
        self.moves: list = []        # (item, from, to, window)
        self.fades: list = []        # (item, from, to, window)
        self.calls: list = []        # (fn(t), window)
        self.leaving: list = []      # items removed from their scene at the end
        self.hidden_at_end: list = []  # items hidden at the end (pooled ones)

    def __bool__(self) -> bool:
        return bool(self.moves or self.fades or self.calls or self.leaving or self.hidden_at_end)

    def move(self, item, start: QPointF, end: QPointF, window=(0.0, 1.0)) -> None:
        """Glide ``item`` from ``start`` to ``end`` (its parent's coordinates)."""
        if start != end:
            self.moves.append((item, QPointF(start), QPointF(end), window))

    def fade(self, item, start: float, end: float, window=(0.0, 1.0)) -> None:
        self.fades.append((item, start, end, window))

    def call(self, fn, window=(0.0, 1.0)) -> None:
        """``fn(t)`` at every frame, ``t`` local to ``window``."""
        self.calls.append((fn, window))

    def leave(self, item, window=FIRST_HALF) -> None:
        """Fade ``item`` out and take it off the scene at the end."""
        self.fade(item, item.opacity(), 0.0, window)
        self.leaving.append(item)

    def hide_at_end(self, item, window=FIRST_HALF) -> None:
        """Fade ``item`` out and hide it at the end (an item the view reuses)."""
        self.fade(item, 1.0, 0.0, window)
        self.hidden_at_end.append(item)

    def enter(self, item, window=SECOND_HALF) -> None:
        """Fade ``item`` in (it is drawn at its end state already)."""
        item.setOpacity(0.0)
        self.fade(item, 0.0, 1.0, window)

    def apply(self, t: float) -> None:
        for item, a, b, w in self.moves:
            item.setPos(lerp_point(a, b, _local(t, w)))
        for item, a, b, w in self.fades:
            item.setOpacity(lerp(a, b, _local(t, w)))
        for fn, w in self.calls:
            fn(_local(t, w))

    def end(self) -> None:
        """The end state: every track at 1, leaving items gone, full opacity."""
        self.apply(1.0)
        for item, _, b, _ in self.fades:
            if item not in self.leaving and item not in self.hidden_at_end:
                item.setOpacity(1.0)
        for item in self.hidden_at_end:
            item.hide()
            item.setOpacity(1.0)
        for item in self.leaving:
            scene = item.scene()
            if scene is not None:
                scene.removeItem(item)
        self.leaving = []
        self.hidden_at_end = []


class Transition(QObject):
    """One morph played over ``duration_ms``; see the module docstring."""

    EASING = QEasingCurve.InOutCubic

    def __init__(self, morph: Morph, duration_ms: int, parent=None, on_end=None) -> None:
        super().__init__(parent)
        self.morph = morph
        self.duration_ms = max(1, int(duration_ms))
        self.on_end = on_end
        self._curve = QEasingCurve(self.EASING)
        self._anim = QVariantAnimation(self)
        self._anim.setStartValue(0.0)
        self._anim.setEndValue(1.0)
        self._anim.setDuration(self.duration_ms)
        self._anim.setEasingCurve(self._curve)
        self._anim.valueChanged.connect(self._value)
        self._anim.finished.connect(self.finish)
        self.done = False
        self.progress = 0.0

    @property
    def running(self) -> bool:
        """Not finished yet (playing, or waiting for :meth:`seek`)."""
        return not self.done

    @property
    def animation(self) -> QVariantAnimation:
        return self._anim

    def start(self, clock: bool = True) -> None:
        """Show the first frame; with ``clock``, play on Qt's animation timer."""
        self._set(0.0)
        if clock:
            self._anim.start()

    def seek(self, ms: float) -> None:
        """The frame ``ms`` after the start (the clock stopped): for exporters."""
        self._anim.stop()
        if ms >= self.duration_ms:
            self.finish()
        else:
            self._set(self._curve.valueForProgress(max(0.0, ms) / self.duration_ms))

    def finish(self) -> None:
        """Jump to the end; nothing of the transition runs afterwards."""
        if self.done:
            return
        self.done = True
        self._anim.stop()
        self.progress = 1.0
        self.morph.end()
        if self.on_end is not None:
            self.on_end()

    def _value(self, value) -> None:
        if not self.done:
            self._set(float(value))

    def _set(self, t: float) -> None:
        self.progress = t
        self.morph.apply(t)


def signature(item) -> tuple:
    """What a per-drawing item shows, and where: two drawings' items with the
    same signature look the same (a view cross-fades only the others)."""
    pos = item.scenePos()
    points = getattr(item, "points", None)
    if points is not None:
        what = tuple((round(p.x()), round(p.y())) for p in points)
    elif hasattr(item, "steps"):
        what = repr(item.steps)
    else:
        what = getattr(item, "text", None)
        what = what() if callable(what) else what
    return (type(item).__name__, round(pos.x()), round(pos.y()), str(what), getattr(item, "name", None),
            repr(getattr(item, "key", None)))


def cross_fade(morph: Morph, old: list, new: list, scene_of=None) -> None:
    """Items drawn the same in ``old`` and ``new`` stay (the old one goes at
    once); the other old ones fade out, the other new ones fade in."""
    by_sig: dict = {}
    for item in old:
        by_sig.setdefault(signature(item), []).append(item)
    for item in new:
        same = by_sig.get(signature(item))
        if same:
            gone = same.pop()
            if gone.scene() is not None:
                gone.scene().removeItem(gone)
        else:
            morph.enter(item)
    for items in by_sig.values():
        for item in items:
            morph.leave(item)
