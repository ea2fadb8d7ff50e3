"""Structure views: one drawing per kind of free structure (docs/structure.md).

Every view is a :class:`~.base.StructureView`: it draws the plain data of
``Strategy.structure()`` together with the shown step's explained events, and
reports clicks and hovers as block addresses.  :func:`view_for` picks the view
class for a structure ``kind``; kinds register themselves with
:func:`register_view`.
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


def _load_views() -> None:
    # Each module registers its view on import; importing here (not at the top)
    # keeps this package importable while a module is being written.
    from importlib import import_module
    for module in ("lists_view", "ring_view", "tree_view", "buddy_view", "tlsf_view", "buckets_view",
                   "arena_view", "pages_view"):
        try:
            import_module(f"{__name__}.{module}")
        except ModuleNotFoundError as exc:
            if exc.name != f"{__name__}.{module}":
                raise
