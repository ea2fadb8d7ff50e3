"""Structure views: one drawing per kind of free structure (docs/structure.md).

Every view is a :class:`~.base.StructureView`: it draws the plain data of
``Strategy.structure()`` together with the shown step's explained events, and
reports clicks and hovers as block addresses.  :func:`view_for` picks the view
class for a structure ``kind``; each ``*_view`` module of this package is
found and imported by :func:`view_for`, and registers its view for its kinds
with :func:`register_view` (docs/architecture.md).  A kind with no view of
its own is drawn by the generic lists view.
"""

from __future__ import annotations

from .base import StructureView

_VIEWS: dict[str, type[StructureView]] = {}


def register_view(kind: str):
    """Class decorator: ``cls`` draws structures of ``kind``."""
    def deco(cls):
        _VIEWS[kind] = cls
        return cls
    return deco


def view_for(kind: str) -> type[StructureView]:
    """The view class for a structure kind (the generic lists view for any kind
    without one of its own)."""
    _load_views()
    return _VIEWS.get(kind) or _VIEWS["lists"]


_loaded = False


def load_all() -> None:
    """Import every view module now: the program does it before its window
    shows (imported when the first step is drawn, they held the event loop
    for a second on a busy machine: issue 25's stall probe)."""
    _load_views()


def _load_views() -> None:
    """Import every ``*_view`` module of this package once: each registers its
    view on import, so a new view is a new module here, listed nowhere.
    (Importing here, not at the top, keeps the package importable while the
    views import it.)"""
    global _loaded
    if _loaded:
        return
    _loaded = True
    import importlib
    import pkgutil
    for module in pkgutil.iter_modules(__path__):
        if module.name.endswith("_view"):
            importlib.import_module(f"{__name__}.{module.name}")
