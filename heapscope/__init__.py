"""heapscope: replay malloc/free traces through classic allocator strategies
and watch what each one does to the heap.

One installed package, four parts kept in their own top-level folders of the
source tree and mapped into this package by ``pyproject.toml``:

* :mod:`heapscope.allocators` -- the simulation core (never imports Qt);
* :mod:`heapscope.traces` -- trace formats and workloads (never imports Qt);
* :mod:`heapscope.gui` -- the PySide6 + pyqtgraph window;
* :mod:`heapscope.cli` -- the ``heapscope`` command (``python -m heapscope``).
"""

#: what a strategy of your own imports (docs/tutorial.md):
#: ``from heapscope import UserStrategy, USED, FREE, META, align_up``
_USER_API = {
    "UserStrategy": "allocators.user", "UserStrategyError": "allocators.user",
    "USED": "allocators.user", "FREE": "allocators.user", "META": "allocators.user",
    "align_up": "allocators.user", "HeapInvariantError": "allocators.user",
    "Param": "allocators.params", "INT": "allocators.params", "SIZE": "allocators.params",
    "BOOL": "allocators.params",
}


def __getattr__(name: str):
    # Lazy, so that ``import heapscope`` stays cheap for the command line.
    if name == "__version__":       # one number, pyproject's (heapscope/version.py)
        from .version import package_version
        return package_version()
    module = _USER_API.get(name)
    if module is None:
        raise AttributeError(f"module 'heapscope' has no attribute {name!r}")
    import importlib
    return getattr(importlib.import_module(f".{module}", __name__), name)
