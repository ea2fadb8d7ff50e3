"""Strategies by name, for the CLI, the GUI picker and tests.

A strategy module registers its class here; ``make_strategy("tlsf", word=4)``
builds one.  Names are short, lower case and stable: they appear in saved
sessions, CSV exports and command lines.
"""

from __future__ import annotations

from .first_fit import FirstFit
from .next_fit import NextFit
from .strategy import Strategy

STRATEGIES: dict[str, type[Strategy]] = {}


def register(cls: type[Strategy]) -> type[Strategy]:
    if cls.name in STRATEGIES and STRATEGIES[cls.name] is not cls:
        raise ValueError(f"two strategies are named {cls.name!r}")
    STRATEGIES[cls.name] = cls
    return cls


for _cls in (NextFit, FirstFit):
    register(_cls)


def _register_optional() -> None:
    """Strategies added later register themselves on import; a missing module is
    not an error here so that the core stays usable while one is written."""
    import importlib
    for module in ("rotating_list", "splay_best_fit", "buddy", "tlsf", "bsd_buckets", "dlmalloc",
                   "segregated_fit", "v7_malloc", "gnu_malloc", "phkmalloc"):
        try:
            mod = importlib.import_module(f"{__package__}.{module}")
        except ModuleNotFoundError as exc:
            if exc.name != f"{__package__}.{module}":
                raise
            continue
        for obj in vars(mod).values():
            if isinstance(obj, type) and issubclass(obj, Strategy) and obj.__module__ == mod.__name__ \
                    and obj.name != "abstract" and getattr(obj, "registered", True):
                register(obj)


_register_optional()


def strategy_names() -> list[str]:
    return list(STRATEGIES)


def make_strategy(name: str, **params) -> Strategy:
    try:
        cls = STRATEGIES[name]
    except KeyError:
        known = ", ".join(STRATEGIES)
        raise ValueError(f"unknown strategy {name!r}; known: {known}") from None
    return cls(**params)
