"""The one place where heapscope turns text into values.

Everything a user types as a value goes through here: the command line's
sizes (``--pool-size 64K``), a strategy's parameters (``-P buddy.max_order=10``),
the window's options, and the ``key=value`` lists of workload specs
(``vo1989:seed=3,steps=500``).  Each parser raises :class:`BadValue` (a
ValueError) with a message saying what it expected; callers add where the text
came from (the option, the parameter, the spec).

No Qt and no heapscope imports: the core (``heapscope.allocators``,
``heapscope.traces``) uses it too.
"""

from __future__ import annotations

#: size suffixes, powers of 1024, as ``ls -h`` and ``dd`` read them
SIZE_SUFFIXES = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}

TRUE_WORDS = ("true", "yes", "on", "1")
FALSE_WORDS = ("false", "no", "off", "0")


class BadValue(ValueError):
    """A text that does not spell a value of the kind asked for."""


def parse_int(text: str) -> int:
    """A whole number written in decimal: ``'12'``, ``'-3'``; not ``'1.5'``, ``'1e3'``."""
    t = text.strip()
    digits = t[1:] if t[:1] in "+-" else t
    if not digits.isdigit() or not digits.isascii():
        raise BadValue(f"not an integer: {text!r}")
    return int(t)


def parse_size(text: str) -> int:
    """A byte count: ``'65536'``, ``'64K'``, ``'2M'``, ``'1G'``, ``'1T'`` (powers of
    1024; a trailing ``B`` or ``iB`` is allowed, case does not matter)."""
    t = text.strip().upper()
    if t.endswith("IB"):          # 64KiB
        t = t[:-2]
    elif t.endswith("B"):         # 64KB, 100B
        t = t[:-1]
    multiplier = 1
    if t[-1:] in SIZE_SUFFIXES:
        multiplier = SIZE_SUFFIXES[t[-1]]
        t = t[:-1]
    try:
        return parse_int(t) * multiplier
    except BadValue:
        raise BadValue(f"not a size in bytes: {text!r} (e.g. 65536, 64K, 2M, 1G)") from None


def format_size(n: int) -> str:
    """The shortest exact spelling parse_size reads back: 1099511627776 -> '1T',
    65536 -> '64K', 1000 -> '1000'."""
    for suffix in ("T", "G", "M", "K"):
        m = SIZE_SUFFIXES[suffix]
        if n and n % m == 0:
            return f"{n // m}{suffix}"
    return str(n)


def parse_bool(text: str) -> bool:
    """``true/false``, ``yes/no``, ``on/off``, ``1/0`` (any case)."""
    low = text.strip().lower()
    if low in TRUE_WORDS:
        return True
    if low in FALSE_WORDS:
        return False
    raise BadValue(f"not true or false: {text!r}")


def parse_scalar(text: str) -> int | float | bool | str:
    """A value of no declared type (a workload generator's parameter): a bool
    word, else an int, else a float, else the text itself."""
    low = text.strip().lower()
    if low in ("true", "yes", "on"):
        return True
    if low in ("false", "no", "off"):
        return False
    for convert in (parse_int, float):
        try:
            return convert(text)
        except ValueError:
            pass
    return text


def parse_assignments(text: str) -> dict[str, str]:
    """``'k=v, k2=v2'`` -> ``{'k': 'v', 'k2': 'v2'}`` (values left as text; empty
    items are skipped).  BadValue for an item without ``=`` or without a key."""
    out: dict[str, str] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        key, eq, value = item.partition("=")
        if not eq or not key.strip():
            raise BadValue(f"bad parameter {item!r} (expected key=value)")
        out[key.strip()] = value.strip()
    return out


def parse_qualified(text: str) -> tuple[str, str, str]:
    """``'OWNER.NAME=VALUE'`` -> ``(owner, name, value)`` with the value left as
    text, as ``-P bsd-buckets.pagesize=1024`` is written."""
    key, eq, value = text.partition("=")
    owner, dot, name = key.strip().partition(".")
    if not (eq and dot and owner and name):
        raise BadValue(f"expected STRATEGY.NAME=VALUE, got {text!r}")
    return owner, name, value.strip()
