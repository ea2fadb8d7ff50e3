"""How a free structure reads in ``heapscope inspect``: the pieces a kind
writes its lines with.

Each structure kind says its own lines
(:meth:`heapscope.allocators.structure_kinds.StructureKind.inspect_lines`,
in the kind's module); :func:`heapscope.inspection.format_text` puts them
under the ``Structure (kind):`` heading and adds the blocks kept apart.  The
lines are cut for a person unless ``--all`` (``all_items``) asks for every
item; the cuts are these constants, shared by every kind so that each reads
the same.  Qt-free, like all of ``heapscope.allocators``.
"""

from __future__ import annotations

#: addresses shown per list before "... N more"
LIST_ITEMS = 12
#: a tree of at most this many nodes is drawn sideways
TREE_DRAWN_NODES = 40
#: lists shown (those the step's events name come first)
LISTS_SHOWN = 16


def addr_list(addrs: list, sizes: dict, all_items: bool) -> str:
    """'0x40 (32 B), 0x90 (48 B), ... 3 more', or 'empty'; a block whose size
    ``sizes`` does not give is its address alone."""
    shown = addrs if all_items else addrs[:LIST_ITEMS]
    text = ", ".join(f"{a:#x} ({sizes[a]} B)" if a in sizes else f"{a:#x}" for a in shown)
    if len(shown) < len(addrs):
        text += f", ... {len(addrs) - len(shown)} more"
    return text or "empty"


def some_lists(lists: dict, named: set, all_items: bool):
    """The (key, addrs) of the non-empty lists to show: every one with
    ``all_items``, else those holding a block the step names, then the
    first others, up to LISTS_SHOWN; and how many were left out."""
    full = [(k, v) for k, v in lists.items() if v]
    if all_items or len(full) <= LISTS_SHOWN:
        return full, 0
    touched = [kv for kv in full if named.intersection(kv[1])]
    rest = [kv for kv in full if not named.intersection(kv[1])]
    shown = touched + rest[:max(0, LISTS_SHOWN - len(touched))]
    order = {k: i for i, (k, _) in enumerate(full)}
    return sorted(shown, key=lambda kv: order[kv[0]]), len(full) - len(shown)


def cut_lists(lists: dict, named: set, all_items: bool, sizes: dict, label, noun: str) -> list[str]:
    """The non-empty lists :func:`some_lists` shows, one line each named by
    ``label(key)``, then '... 3 more non-empty ``noun`` (--all shows them)'
    when some were left out."""
    shown, left_out = some_lists(lists, named, all_items)
    out = [f"  {label(key)}: " + addr_list(addrs, sizes, all_items) for key, addrs in shown]
    if left_out:
        out.append(f"  ... {left_out} more non-empty {noun} (--all shows them)")
    return out


def labelled_lines(lists: dict, sizes: dict, all_items: bool) -> list[str]:
    """``{label: [addrs]}`` as one line per list (the generic ``lists``
    shape, and any kind that also gives its blocks as labelled lists)."""
    return [f"  {label}: " + addr_list(addrs, sizes, all_items) for label, addrs in lists.items()]


def lines_by_place(places: dict, kept: set, sizes: dict, all_items: bool) -> list[str]:
    """The blocks of ``places`` (``{addr: place}``, a kind's ``where``)
    grouped by place, one line each, leaving out the ``kept`` apart ones:
    how a kind with no lines of its own reads."""
    grouped: dict[str, list] = {}
    for a, place in places.items():
        if a not in kept:
            grouped.setdefault(place, []).append(a)
    return [f"  {place}: " + addr_list(addrs, sizes, all_items) for place, addrs in grouped.items()]
