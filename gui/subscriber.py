"""A view that subscribes to the :class:`~heapscope.gui.show_model.ShowModel`.

A widget mixes in :class:`Subscriber` and names, in :attr:`~Subscriber.SUBSCRIBES`,
which of its methods each model signal calls, and in
:attr:`~Subscriber.REQUESTS`, which model method each of its own signals calls
(a click that selects a block, a scrubber that seeks).  :meth:`~Subscriber.bind`
connects both and draws the model's current state; :meth:`~Subscriber.unbind`
disconnects them, and closing the widget unbinds it, so a closed view gets no
more updates (napari's Qt layer views disconnect from their layer's events in
``close()`` the same way).

A view whose drawing costs more than a heap-map frame can ask for a
:meth:`~Subscriber.redraw_soon` instead of drawing at once: it draws at once
when the model is not playing, at most :attr:`~Subscriber.PLAY_INTERVAL_MS`
apart while it plays (the last step always gets drawn), and not at all while
it is hidden or collapsed to nothing (it draws when it shows again).
"""

from __future__ import annotations

from PySide6.QtCore import QElapsedTimer, QTimer


class Subscriber:
    """Mixin for a QWidget showing a :class:`~heapscope.gui.show_model.ShowModel` (put it
    first among the bases)."""

    #: model signal name -> name of the method of this view it calls
    SUBSCRIBES: dict[str, str] = {}
    #: signal name of this view -> name of the model method it calls
    REQUESTS: dict[str, str] = {}
    #: while the model plays, costly views redraw at most this often (ms)
    PLAY_INTERVAL_MS = 125

    model = None
    #: which shown strategy this view draws (compare mode has one row per strategy)
    row = 0

    def bind(self, model, row: int = 0) -> None:
        """Subscribe to ``model`` (showing its row ``row``) and draw what it shows."""
        self.unbind()
        self.model, self.row = model, row
        for signal, method in self.SUBSCRIBES.items():
            getattr(model, signal).connect(getattr(self, method))
        for signal, method in self.REQUESTS.items():
            getattr(self, signal).connect(getattr(model, method))
        self.model_bound()

    def unbind(self) -> None:
        """Stop following the model (nothing happens if not bound)."""
        model = self.model
        if model is None:
            return
        self.model = None
        for signal, method in self.SUBSCRIBES.items():
            _disconnect(getattr(model, signal), getattr(self, method))
        for signal, method in self.REQUESTS.items():
            _disconnect(getattr(self, signal), getattr(model, method))
        timer = self.__dict__.get("_redraw_timer")
        if timer is not None:
            timer.stop()

    def model_bound(self) -> None:
        """Draw the model's current state (called by :meth:`bind`)."""

    def closeEvent(self, event) -> None:
        self.unbind()
        super().closeEvent(event)

    # ------------------------------------------------------- deferred drawing
    def redraw_soon(self) -> None:
        """Call :meth:`redraw` now, or later (see the module's docstring)."""
        self._redraw_pending = True
        if not self._can_draw():
            return           # showEvent / resizeEvent draw it
        clock = self.__dict__.get("_redraw_clock")
        model = self.model
        if model is not None and model.playing and clock is not None and clock.isValid():
            left = self.PLAY_INTERVAL_MS - clock.elapsed()
            if left > 0:
                timer = self._timer()
                if not timer.isActive():
                    timer.start(int(left))
                return
        self._redraw_now()

    def redraw(self) -> None:
        """Draw the model's shown step (views that use :meth:`redraw_soon`)."""

    def _can_draw(self) -> bool:
        return self.isVisible() and self.width() > 1 and self.height() > 1

    def _timer(self) -> QTimer:
        timer = self.__dict__.get("_redraw_timer")
        if timer is None:
            timer = self._redraw_timer = QTimer(self)
            timer.setSingleShot(True)
            timer.timeout.connect(self._redraw_if_pending)
        return timer

    def _redraw_if_pending(self) -> None:
        if self.__dict__.get("_redraw_pending") and self.model is not None and self._can_draw():
            self._redraw_now()

    def _redraw_now(self) -> None:
        self._redraw_pending = False
        clock = self.__dict__.get("_redraw_clock")
        if clock is None:
            clock = self._redraw_clock = QElapsedTimer()
        clock.start()
        self.redraw()

    def showEvent(self, event) -> None:
        super().showEvent(event)
        if self.__dict__.get("_redraw_pending"):
            self._timer().start(0)

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        if self.__dict__.get("_redraw_pending") and self._can_draw():
            self._timer().start(0)


def _disconnect(signal, slot) -> None:
    try:
        signal.disconnect(slot)
    except (RuntimeError, TypeError):
        pass        # already gone with its C++ object
