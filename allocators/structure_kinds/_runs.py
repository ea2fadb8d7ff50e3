"""A rule two kinds share: runs of free pages (phkmalloc) or blocks (GNU
malloc) are listed in address order and never touch, because free joins them."""

from __future__ import annotations

from ..structure import StructureMismatch


def check_runs(runs: list[int], sizes: dict, what: str) -> None:
    """Free runs in address order, none touching the next (they are joined)."""
    for a, b in zip(runs, runs[1:]):
        if a + sizes[a] >= b:
            raise StructureMismatch(f"{what} {a:#x} and {b:#x} are out of order or touch")
