"""The registry of structure kinds: one module per kind of free structure.

A *kind* is the shape of one family of ``Strategy.structure()`` answers
(docs/structure.md, "Per kind").  Everything heapscope knows of a kind lives
in its module here, found by the kind's name instead of by ``if kind == ...``
switches:

* its data shape (the module's docstring, citing docs/structure.md and the
  allocator it comes from);
* :meth:`StructureKind.members` and :meth:`StructureKind.where`, which
  :func:`heapscope.allocators.structure.members` and ``where`` answer with;
* :meth:`StructureKind.check`, its own rules, which
  :func:`~heapscope.allocators.structure.check_against_heap` runs after the
  rules every kind shares;
* how it follows a step's events (:mod:`heapscope.allocators.structure_replay`):
  its ``follower``;
* its mid-step states (:mod:`heapscope.allocators.step_states`): which
  pointers and kept-apart blocks follow the replay, and how a replayed state is
  completed into a whole structure;
* its predict wording (:mod:`heapscope.allocators.predict`): a
  ``predict.Generic`` subclass, or None for the generic account of the search;
* how it reads: :meth:`StructureKind.inspect_lines`, its lines in
  ``heapscope inspect``, and :meth:`StructureKind.labelled_lists`, its blocks
  as the labelled lists the window's generic lists view draws (both have a
  generic answer for a kind that says neither);
* its registration: ``@register`` on the class.

The built-in kinds are the modules of this package; they are imported the
first time a kind is looked up, so this registry imports nothing at load time
(the kind modules import ``structure``, ``structure_replay`` and ``predict``,
and ``structure`` imports this package).  A kind defined elsewhere (a test,
a strategy of your own) registers the same way and is found the same way.
docs/architecture.md has the recipe.
Qt-free, like all of ``heapscope.allocators``.
"""

from __future__ import annotations

import importlib
import pkgutil

from ..inspect_text import labelled_lines, lines_by_place

_KINDS: dict[str, "StructureKind"] = {}
_loaded = False


class StructureKind:
    """One kind of free structure.  Subclass it in the kind's module, set
    :attr:`name` and override what the kind does differently."""

    #: the ``kind`` key of the structures of this kind
    name: str = ""
    #: the search pointer may rest on a busy block (V7's ``allocp``)
    busy_pointer = False
    #: how the kind's structure follows a step's events: a
    #: ``structure_replay.Follower`` subclass (None: not replayable, and so no
    #: mid-step states; views light the events on the structure after the step)
    follower = None
    #: predict's words for this kind's policy: a ``predict.Generic`` subclass
    #: (None: the generic account of the search)
    speaker = None
    #: mid-step: ``{pointer name: replayed key}`` of the pointers that follow
    #: the replay (K&R's rover, Kruse's head)
    pointer_keys: dict[str, str] = {}
    #: mid-step: ``((replayed key, why), ...)`` of the blocks kept ``outside``
    #: under a replayed pointer (the splay wilderness, dlmalloc's top)
    apart: tuple[tuple[str, str], ...] = ()
    #: the generic lists view: the sentinel a search pointer of None rests
    #: on, before the first list (K&R's and Kruse's ``base``), or None
    list_sentinel: str | None = None

    # ------------------------------------------------------------ the shape
    def members(self, structure: dict) -> list[int]:
        """Every free block the structure proper holds, in its own order
        (``outside`` is added by ``structure.members``)."""
        raise NotImplementedError(f"the {self.name!r} kind does not say its members")

    def where(self, structure: dict) -> dict[int, str]:
        """``{addr: the place the structure keeps it}`` of the structure proper."""
        raise NotImplementedError(f"the {self.name!r} kind does not say where its blocks are")

    def check(self, structure: dict) -> None:
        """The kind's own rules, after the shared ones of ``check_against_heap``:
        raise ``structure.StructureMismatch`` on a broken rule."""

    # ----------------------------------------------------------- how it reads
    def inspect_lines(self, structure: dict, all_items: bool, named: set) -> list[str]:
        """The lines ``heapscope inspect`` writes under ``Structure (kind):``
        (heapscope/inspection.py adds the blocks kept ``outside``), each
        indented two spaces, cut for a person unless ``all_items`` (the
        pieces and cuts of :mod:`heapscope.allocators.inspect_text`); the
        lists holding a block of ``named`` (the addresses the step's events
        name) are the ones kept when lists are cut.  Without lines of its
        own a kind reads as its ``lists`` when it gives them, else as its
        blocks grouped by the places :meth:`where` names."""
        s = structure
        if "lists" in s:
            return labelled_lines(s["lists"], s["sizes"], all_items)
        from ..structure import where       # structure imports this package
        kept = {o["addr"] for o in s["outside"]}
        return lines_by_place(where(s), kept, s["sizes"], all_items)

    def labelled_lists(self, structure: dict, named=()) -> list[tuple[tuple | None, str, list[int]]]:
        """The structure proper as ``[(key, label, [addrs])]`` in its own
        order, as the window's generic lists view draws it
        (gui/structure_views/lists_view.py adds the blocks kept outside).
        ``key`` is how the policy's events name the list
        (``ListInsert.where``), or None; ``named`` holds the keys the step's
        events name, for a kind that lists a named empty list too.  Without
        lists of its own a kind reads as its ``lists`` when it gives them,
        else as one list of its free blocks in address order."""
        if "lists" in structure:
            return [((str(label),), str(label), list(addrs)) for label, addrs in structure["lists"].items()]
        kept = {o["addr"] for o in structure.get("outside", ())}
        return [(None, "free blocks", sorted(a for a in structure.get("sizes", {}) if a not in kept))]

    # ------------------------------------------------------- mid-step states
    def start_step(self, before: dict):
        """What the kind follows beside the replay through one step (the
        buddy system's orders and chunks), or None."""
        return None

    def follow(self, state, event) -> bool:
        """Follow ``event`` in ``state`` (from :meth:`start_step`); True when
        it carves memory not carved before (a new buddy chunk)."""
        return False

    def complete(self, states, out: dict, replayed: dict) -> None:
        """Finish ``out``, a mid-step state of this kind: the structure after
        the step overlaid with ``replayed`` (StructureReplay's answer), keys
        the kind shows whole (every list, empty or not).  ``states`` is the
        ``StepStates`` (its ``before``, ``after``, ``events``, ``kind_state``)."""


def register(cls: type[StructureKind]) -> type[StructureKind]:
    """Class decorator: make ``cls`` the kind named ``cls.name`` (a later
    registration of the same name replaces the earlier one)."""
    if not cls.name:
        raise ValueError(f"{cls.__name__} has no kind name")
    _KINDS[cls.name] = cls()
    return cls


def unregister(name: str) -> None:
    """Forget the kind ``name`` (a test that registered one cleans up)."""
    _KINDS.pop(name, None)


def get(name: str) -> StructureKind | None:
    """The kind called ``name``, or None when none is registered."""
    _load_builtin()
    return _KINDS.get(name)


def names() -> tuple[str, ...]:
    """The names of every registered kind."""
    _load_builtin()
    return tuple(_KINDS)


def _load_builtin() -> None:
    """Import every module of this package once: each registers its kind."""
    global _loaded
    if _loaded:
        return
    _loaded = True
    for module in pkgutil.iter_modules(__path__):
        if not module.name.startswith("_"):
            importlib.import_module(f"{__name__}.{module.name}")
