"""How the explain lines write sizes, addresses and counts: shared by the
events' own words (:mod:`heapscope.allocators.events`), the strategies'
explain texts and :mod:`heapscope.allocators.explain`, which names them too,
and the command line's counts (:func:`count`, ``grouped``);
and :func:`human_bytes`, the window's short size, which the structure kinds'
list labels use too (``StructureKind.labelled_lists``)."""

from __future__ import annotations


def nbytes(n: int) -> str:
    """'512 B': how every line says a size."""
    return f"{n} B"


def human_bytes(n: int) -> str:
    """'512 B', '1.5 KiB', '2.0 MiB': a size as the window writes it."""
    for unit, size in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n} B"


def at(addr: int | None, none: str = "NULL") -> str:
    """An address as the lines write it (0x1a40), ``none`` for None."""
    return none if addr is None else f"{addr:#x}"


def count(n: int, unit: tuple[str, str] | str, grouped: bool = False) -> str:
    """'1 free block', '3 free blocks'; ``unit`` is (singular, plural) or a
    noun made plural with an s.  ``grouped``: thousands grouped, as the
    command line writes counts ('12,345 calls')."""
    one, many = unit if isinstance(unit, tuple) else (unit, unit + "s")
    return f"{n:,} {one if n == 1 else many}" if grouped else f"{n} {one if n == 1 else many}"


def times(n: int) -> str:
    """'once', 'twice', '3 times'."""
    return {1: "once", 2: "twice"}.get(n, f"{n} times")


def list_name(where: tuple) -> str:
    """A free list's ``where`` as the lines write it: '(3, 7)', '5', '()'."""
    return "(" + ", ".join(str(w) for w in where) + ")" if len(where) != 1 else f"{where[0]}"
