"""One window for a module's cases of one parametrized test, in the quick suite.

Cases that differ only in the strategy shown, each at a real window size
(1280 x 720 and the like), made a window each: the shared window
(tests/gui/shared_window.py) is thrown away after a resize, so every case
paid for a new window, the small trace's load and a resize, about 0.3 s
(issue 20).  With ``case_window`` the quick suite's first case makes the
window and opens the small trace in it; each next case picks its strategy
in that window, as a user would: the structure panel makes its view anew
when the kind of structure changes (the cases in a row here are of
different kinds), the heap map draws the new strategy's heap at the size
the case asks for.  A case that fails throws the window away.  The deep suite makes a new window for every case, as before.

A module uses it by importing both fixtures::

    from .one_window import _one_window, case_window  # noqa: F401
"""

from __future__ import annotations

import pytest
import shiboken6

from tests.depth import deep

from .shared_window import destroy, make_window, quiet


@pytest.fixture(scope="module")
def _one_window(qapp):
    held = {}
    yield held
    w = held.get("w")
    if w is not None and shiboken6.isValid(w):
        quiet(w)
        destroy(w)


@pytest.fixture
def case_window(request, qtbot, _one_window):
    """(window, made): ``made`` when the window is new, for this case (then
    the case opens its trace and sizes the window itself)."""
    if deep():
        w = make_window(qtbot)
        qtbot.addWidget(w)
        yield w, True
        quiet(w)
        destroy(w)
        return
    w = _one_window.get("w")
    made = w is None or not shiboken6.isValid(w)
    if made:
        w = _one_window["w"] = make_window(qtbot)
    else:
        w.show()
        qtbot.waitExposed(w)
        w.activateWindow()
    yield w, made
    quiet(w)
    report = getattr(request.node, "report_call", None)
    if report is None or report.failed:
        destroy(w)
        _one_window["w"] = None
    else:
        # hidden until the next case: the module's other tests (presenter
        # mode's font, the dark theme's palette, set for the application)
        # would have it lay out and paint again with theirs
        w.hide()
