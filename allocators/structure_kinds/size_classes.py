"""``size-classes``: segregated free lists, one per size class (segregated first fit).

From Bryant & O'Hallaron, *Computer Systems: A Programmer's Perspective*,
9.9.14, and Wilson, Johnstone, Neely and Boles, "Dynamic Storage Allocation:
A Survey and Critical Review" (1995): a free list per class of sizes, searched
first fit from the request's class upwards; each list is kept LIFO or in
address order.

Shape (docs/structure.md, "Per kind"): ``lists``, ``{k: [addrs]}`` for every
class, head first (empty ones too); ``class_low`` and ``class_high``, the
smallest and largest block of each class (``class_high`` None for the last);
``order``, ``"lifo"`` or ``"address"``.
"""

from __future__ import annotations

from ..structure import StructureMismatch
from ..inspect_text import cut_lists
from ..phrases import human_bytes
from ..structure_replay import KeyedLists
from . import StructureKind, register


class SizeClassesFollower(KeyedLists):
    """Replayed: ``lists`` (non-empty, head first) and their ``sizes``:
    ListInsert pushes at the head, or at the block's address place when
    ``order`` is ``"address"``; ListRemove unlinks."""

    def __init__(self, before: dict) -> None:
        super().__init__(before)
        self.address_ordered = before["order"] == "address"


@register
class SizeClassesKind(StructureKind):
    name = "size-classes"
    follower = SizeClassesFollower

    def members(self, s: dict) -> list[int]:
        return [a for addrs in s["lists"].values() for a in addrs]

    def where(self, s: dict) -> dict[int, str]:
        return {a: f"the list of class {k}" for k, addrs in s["lists"].items() for a in addrs}

    def check(self, s: dict) -> None:
        sizes = s["sizes"]
        for k, addrs in s["lists"].items():
            low, high = s["class_low"][k], s["class_high"][k]
            for a in addrs:
                if sizes[a] < low or (high is not None and sizes[a] > high):
                    raise StructureMismatch(f"the list of class {k} holds {a:#x} of {sizes[a]} bytes, "
                                            f"outside {low}..{high}")
            if s["order"] == "address" and addrs != sorted(addrs):
                raise StructureMismatch(f"the list of class {k} is not in address order: {addrs[:8]}")

    def complete(self, states, out: dict, replayed: dict) -> None:
        # every class, empty or not, as structure() gives them
        out["lists"] = {k: list(replayed["lists"].get(int(k), ())) for k in states.after["lists"]}

    # how it reads: each non-empty class list with its span of sizes
    def inspect_lines(self, s: dict, all_items: bool, named: set) -> list[str]:
        def label(k) -> str:
            low, high = s["class_low"][k], s["class_high"][k]
            return f"class {k} ({low} B and up)" if high is None else f"class {k} ({low}-{high} B)"

        out = cut_lists(s["lists"], named, all_items, s["sizes"], label, "classes")
        if not any(s["lists"].values()):
            out.append("  every class list is empty")
        return out

    def labelled_lists(self, s: dict, named=()) -> list:
        out = []
        for k in sorted(s["lists"], key=int):
            low, high = s["class_low"][k], s["class_high"][k]
            span = f"{human_bytes(low)} and up" if high is None else f"{human_bytes(low)}-{human_bytes(high)}"
            out.append(((int(k),), f"class {k} ({span})", list(s["lists"][k])))
        return out
