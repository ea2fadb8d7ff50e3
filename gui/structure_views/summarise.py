"""Which entries of a long list a structure view draws, and which it folds.

A free list of 10 000 blocks cannot be drawn node by node and stay legible
(DESIGN.md, "Big heaps: a view summarises ... and says so").  A view names
the entries that matter this step -- the search pointer, the nodes examined,
the nodes changed, the selection -- each with a radius of neighbours to keep
around it; everything else is folded into runs drawn as "… 4 213 more …".

Pure Python, no Qt: the views and their tests share it.
"""

from __future__ import annotations

from typing import Iterable

#: lists up to this long are drawn whole
FULL_LIMIT = 40
#: a run shorter than this is drawn rather than folded ("… 1 more …" saves nothing)
MIN_FOLD = 3


def fold(n: int, keep: Iterable[tuple[int, int]], full_limit: int = FULL_LIMIT,
         min_fold: int = MIN_FOLD) -> list[tuple[str, int, int]]:
    """Runs over the indices ``0 .. n-1``: ``("show", start, stop)`` for
    entries drawn one by one and ``("fold", start, stop)`` for a folded run,
    in order, covering every index exactly once.

    ``keep`` holds ``(index, radius)`` pairs: the entry at ``index`` and
    ``radius`` neighbours on each side are drawn.  Lists of at most
    ``full_limit`` entries are drawn whole; a run of fewer than ``min_fold``
    entries between two kept ones is drawn too.
    """
    if n <= 0:
        return []
    if n <= full_limit:
        return [("show", 0, n)]
    shown = bytearray(n)
    for index, radius in keep:
        if 0 <= index < n:
            lo, hi = max(0, index - radius), min(n, index + radius + 1)
            shown[lo:hi] = b"\x01" * (hi - lo)
    runs: list[tuple[str, int, int]] = []
    i = 0
    while i < n:
        j = i
        flag = shown[i]
        while j < n and shown[j] == flag:
            j += 1
        if flag or j - i < min_fold:
            if runs and runs[-1][0] == "show":
                runs[-1] = ("show", runs[-1][1], j)
            else:
                runs.append(("show", i, j))
        else:
            runs.append(("fold", i, j))
        i = j
    return runs


def spread(indices: list[int], ends: int) -> list[int]:
    """The first ``ends`` and the last ``ends`` of ``indices`` (all of them
    when there are at most ``2 * ends``): which nodes of a long search keep
    their number, as the heap map does for its first and last visits."""
    if len(indices) <= 2 * ends:
        return list(indices)
    return list(indices[:ends]) + list(indices[-ends:])
