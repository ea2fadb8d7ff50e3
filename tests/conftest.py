"""Settings for the whole suite."""

import gc
import os
import sys

# Some machines set PYTHONDONTWRITEBYTECODE, so that every process (each
# xdist worker, each `heapscope` a CLI test starts) compiled heapscope and
# pytest re-wrote every test module's asserts from scratch: about half a
# second of CPU a process.  The suite keeps its bytecode.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
sys.dont_write_bytecode = False


def pytest_collection_finish(session):
    """Once every test module is imported, move what exists now (modules,
    classes, functions, the collected items: alive the whole session) out of
    the collector's sight.  Every window test ends with a full ``gc.collect()``
    (tests/gui/conftest.py) and the replay's collector runs more; each one
    walked all of these again, about a quarter of a window test's CPU.
    Objects made later, by the tests, are collected as before."""
    gc.collect()
    gc.freeze()
