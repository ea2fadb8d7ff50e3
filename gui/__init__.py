"""heapscope's window: PySide6 + pyqtgraph views of the simulation core.

``python -m gui`` (or ``heapscope``) opens it; see :func:`gui.app.main`.
The core (``allocators/``, ``traces/``) never imports this package.
"""
