"""Settings for the whole suite."""

import gc
import os
import sys

import pytest

from tests import depth

# Some machines set PYTHONDONTWRITEBYTECODE, so that every process (each
# xdist worker, each `heapscope` a CLI test starts) compiled heapscope and
# pytest re-wrote every test module's asserts from scratch: about half a
# second of CPU a process.  The suite keeps its bytecode.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
sys.dont_write_bytecode = False

# As heapscope/cli.py does for the command: one OpenBLAS thread, set before
# any test module imports numpy, and inherited by the xdist workers and every
# process a test starts (a `heapscope`, a worker of compare or of the
# window's builds).  The pool of threads numpy's import starts otherwise
# costs about 0.1 s of CPU a process; heapscope does no linear algebra.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def pytest_addoption(parser):
    parser.addoption("--deep", action="store_true",
                     help="run the deep suite: every hypothesis example, the bundled "
                          "traces walked at full depth (tests/depth.py; CI runs it)")


def pytest_configure(config):
    # before any test module is imported: modules size their cases at import
    if config.getoption("--deep"):
        os.environ[depth.ENV] = "1"
    else:
        os.environ.pop(depth.ENV, None)
    config.addinivalue_line("markers", "deep: only in the deep suite (`pytest --deep`): "
                            "a case whose quick form runs in the quick suite")


def pytest_report_header(config):
    return ("deep suite (--deep): hypothesis at full example counts, bundled traces at full depth"
            if depth.deep() else
            "quick suite: hypothesis at 1/%d of its examples, bundled-trace walks thinned "
            "(--deep runs everything; tests/depth.py)" % depth.HYPOTHESIS_SHARE)


def pytest_collection_modifyitems(config, items):
    """The quick suite: each hypothesis test draws fewer examples (its own
    settings, with ``max_examples`` cut by tests/depth.py), and tests marked
    ``deep`` are skipped."""
    if depth.deep():
        return
    from hypothesis import settings
    skip = pytest.mark.skip(reason="deep suite only (pytest --deep)")
    thinned = set()
    for item in items:
        if item.get_closest_marker("deep") is not None:
            item.add_marker(skip)
            continue
        test = getattr(getattr(item, "obj", None), "__func__", getattr(item, "obj", None))
        if not getattr(test, "is_hypothesis_test", False) or id(test) in thinned:
            continue
        thinned.add(id(test))
        # read by hypothesis when the test runs (hypothesis/core.py, wrapped_test)
        own = test._hypothesis_internal_use_settings
        test._hypothesis_internal_use_settings = settings(
            own, max_examples=depth.quick_examples(own.max_examples))


def pytest_collection_finish(session):
    """Once every test module is imported, move what exists now (modules,
    classes, functions, the collected items: alive the whole session) out of
    the collector's sight.  Every window test ends with a full ``gc.collect()``
    (tests/gui/conftest.py) and the replay's collector runs more; each one
    walked all of these again, about a quarter of a window test's CPU.
    Objects made later, by the tests, are collected as before."""
    gc.collect()
    gc.freeze()


@pytest.fixture
def qtbot(qtbot):
    """pytest-qt's ``qtbot``, keeping every widget given to ``addWidget`` alive
    until the test is torn down.

    pytest-qt holds those widgets by weak reference only, and after the test
    function returns it processes the pending events (the first paints among
    them) before it closes them.  A pyqtgraph widget sits in reference cycles,
    so once the test's locals are gone the garbage collector may free it, and
    deleting a top-level widget in the middle of its own paint freed the
    painter's engine under ``ImageItem.paint``: the process died with a
    segmentation fault some tests later (tests/gui/test_heap_map_steps.py run
    in one process).  Here the widgets live until pytest-qt has closed them
    and their deferred deletes have run, which frees them in a known order."""
    kept = []
    add_widget = qtbot.addWidget

    def add_and_keep(widget, *args, **kwargs):
        kept.append(widget)
        return add_widget(widget, *args, **kwargs)

    qtbot.addWidget = add_and_keep
    yield qtbot
    # pytest-qt's teardown hook has closed the widgets and called deleteLater
    # on them before fixtures are torn down; run those deletes now.
    from PySide6.QtCore import QEvent
    from PySide6.QtWidgets import QApplication
    QApplication.sendPostedEvents(None, QEvent.DeferredDelete)
    kept.clear()
