"""heapscope's window: PySide6 + pyqtgraph views of the simulation core.

``python -m heapscope`` (or ``heapscope``) opens it; see :func:`heapscope.gui.app.main`.
The core (``allocators/``, ``traces/``) never imports this package.
"""
