"""``lists``: the generic shape, labelled lists of free blocks (a strategy of your own).

Not from one allocator: ``UserStrategy.lists_structure({label: [addrs]})``
(docs/user-strategies.md) answers with it, so that a strategy written by a
student is checked against the heap and drawn by the generic lists view with
no code of heapscope's own.  It promises no events, so it has no mid-step
states, and predict gives it the generic account of the search.

Shape (docs/structure.md, "Per kind"): ``lists``, ``{label: [addrs]}``, in the
order the strategy gives them.
"""

from __future__ import annotations

from . import StructureKind, register


@register
class ListsKind(StructureKind):
    name = "lists"

    def members(self, s: dict) -> list[int]:
        return [a for addrs in s["lists"].values() for a in addrs]

    def where(self, s: dict) -> dict[int, str]:
        return {a: str(label) for label, addrs in s["lists"].items() for a in addrs}
