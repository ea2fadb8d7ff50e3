"""heapscope: replay malloc/free traces through classic allocator strategies
and watch what each one does to the heap.

One installed package, four parts kept in their own top-level folders of the
source tree and mapped into this package by ``pyproject.toml``:

* :mod:`heapscope.allocators` -- the simulation core (never imports Qt);
* :mod:`heapscope.traces` -- trace formats and workloads (never imports Qt);
* :mod:`heapscope.gui` -- the PySide6 + pyqtgraph window;
* :mod:`heapscope.cli` -- the ``heapscope`` command (``python -m heapscope``).
"""

__version__ = "0.2.0"
