"""The structure protocol: every strategy's free structure as plain data.

One method, :meth:`Strategy.structure() <allocators.strategy.Strategy.structure>`,
answers for every strategy in one shape, so the structure views, the explain
panel, ``heapscope inspect`` and the tests all read the same thing.  The answer
is a plain ``dict`` of ints, strings, lists and dicts: picklable, free of Qt,
and ``json.dumps`` writes it as it is (int dict keys become strings; the
splay tree is a flat list of nodes, because a degenerate tree is deeper than a
JSON reader's nesting limit).  ``docs/structure.md`` documents every key.

Keys every structure has:

``kind``
    which shape follows (one of ``KINDS``); views pick their drawing by it.
``sizes``
    ``{addr: size}`` of every free block the structure names (``outside``
    included), so a view needs nothing else to draw it.
``pointers``
    ``[{"name", "addr", "role"}]``: the policy's named pointers into the heap.
    ``role`` is ``"search"`` for a pointer where the next search starts (K&R's
    rover, Kruse's head) and ``"marker"`` for one that only names a block (the
    splay wilderness); ``addr`` is a block address or None (at a sentinel).
``outside``
    ``[{"addr", "why"}]``: free blocks the policy keeps outside its free
    structure (the splay wilderness; the uncarved tail of a fixed pool).

Every free block of ``walk()`` is named exactly once by :func:`members` (the
structure proper plus ``outside``); :func:`check_against_heap` verifies it.

Kinds and their own keys: each kind is one module of
:mod:`heapscope.allocators.structure_kinds` (``address_ring.py``, ``tree.py``,
``buddy.py``, ``tlsf.py``, ...), whose docstring gives its shape and whose
class says its members, where it keeps each block, its own rules for
:func:`check_against_heap`, its mid-step states and its predict wording.
:func:`members`, :func:`where` and :func:`check_against_heap` find the kind
by name in that registry; ``KINDS`` is the names registered.
docs/architecture.md says how to add a kind.
"""

from __future__ import annotations

from typing import Iterable

from . import structure_kinds

SEARCH = "search"
MARKER = "marker"


def __getattr__(name: str):
    # KINDS is read from the registry each time, so that a kind registered
    # after this module was imported (a test's, a user's) is one of them
    if name == "KINDS":
        return structure_kinds.names()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def kind_of(structure: dict) -> structure_kinds.StructureKind:
    """The registered kind of a structure answer (allocators/structure_kinds/)."""
    kind = structure_kinds.get(structure["kind"])
    if kind is None:
        raise ValueError(f"unknown structure kind {structure['kind']!r}")
    return kind


def pointer(name: str, addr: int | None, role: str = SEARCH) -> dict:
    """One entry of ``pointers``."""
    return {"name": name, "addr": addr, "role": role}


def outside(addr: int, why: str) -> dict:
    """One entry of ``outside``: a free block kept apart from the structure."""
    return {"addr": addr, "why": why}


def make(kind: str, sizes: dict[int, int], *, pointers: Iterable[dict] = (),
         outside_blocks: Iterable[dict] = (), **fields) -> dict:
    """A structure answer with the common keys in place."""
    if structure_kinds.get(kind) is None:
        raise ValueError(f"unknown structure kind {kind!r}; known: {', '.join(structure_kinds.names())}")
    out = {"kind": kind, "sizes": sizes, "pointers": list(pointers),
           "outside": list(outside_blocks)}
    out.update(fields)
    return out


def tlsf_key(fl: int, sl: int) -> str:
    """The ``lists`` key of TLSF cell (fl, sl)."""
    return f"{fl},{sl}"


def parse_tlsf_key(key: str) -> tuple[int, int]:
    fl, _, sl = key.partition(",")
    return int(fl), int(sl)


def members(structure: dict) -> list[int]:
    """Every free block address the structure holds, in the structure's own
    order (a block named twice appears twice), ``outside`` blocks last."""
    out = list(kind_of(structure).members(structure))
    out.extend(o["addr"] for o in structure["outside"])
    return out


def where(structure: dict) -> dict[int, str]:
    """For each free block, the place the structure keeps it, in the words a
    view or the explain panel uses: ``"AVAIL[7]"``, ``"list (1, 30)"``,
    ``"nextf[5]"``, ``"the free list"``, ``"node 1024"``, ``"wilderness"``."""
    out = dict(kind_of(structure).where(structure))
    for o in structure["outside"]:
        out[o["addr"]] = o["why"]
    return out


class StructureMismatch(AssertionError):
    """A structure answer disagrees with the heap walk."""


def check_against_heap(structure: dict, blocks) -> None:
    """Raise :class:`StructureMismatch` unless every free block of ``blocks``
    (``walk()`` output) is named exactly once by the structure, with its size,
    and the structure names nothing else; then the kind's own rules."""
    free = {b[0]: b[1] for b in blocks if b[2] == "free"}
    named = members(structure)
    seen: set[int] = set()
    for a in named:
        if a in seen:
            raise StructureMismatch(f"free block {a:#x} is named twice by the {structure['kind']} structure")
        seen.add(a)
    missing = sorted(set(free) - seen)
    if missing:
        raise StructureMismatch(f"free blocks {[hex(a) for a in missing[:5]]} are in the heap "
                                f"but not in the {structure['kind']} structure")
    extra = sorted(seen - set(free))
    if extra:
        raise StructureMismatch(f"the {structure['kind']} structure names {[hex(a) for a in extra[:5]]}, "
                                "which are not free blocks of the heap")
    sizes = structure["sizes"]
    for a, size in free.items():
        if sizes.get(a) != size:
            raise StructureMismatch(f"free block {a:#x} has {size} bytes but the structure says {sizes.get(a)}")
    if set(sizes) != seen:
        raise StructureMismatch("'sizes' names other blocks than the structure holds")
    kind = kind_of(structure)
    for p in structure["pointers"]:
        if p["addr"] is not None and p["role"] == SEARCH and p["addr"] not in free \
                and not kind.busy_pointer:
            raise StructureMismatch(f"pointer {p['name']} points at {p['addr']:#x}, which is not a free block")
    kind.check(structure)

