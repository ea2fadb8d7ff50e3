"""Strategies by name, for the CLI, the GUI picker and tests.

Every strategy class is imported and registered here, by name;
``make_strategy("tlsf", word=4)`` builds one.  Names are short, lower case
and stable: they appear in saved sessions, CSV exports and command lines.
"""

from __future__ import annotations

# Every strategy module is imported here by name: a module that is missing or
# fails to import is an ImportError, never a strategy silently left out of the
# menus, the compare table and the tests that take their list from here.
from .bsd_buckets import BSDBuckets
from .buddy import BinaryBuddy
from .dlmalloc import Dlmalloc
from .first_fit import FirstFit
from .gnu_malloc import GNUMalloc
from .next_fit import NextFit
from .phkmalloc import PhkMalloc
from .rotating_list import RotatingList
from .segregated_fit import SegregatedFirstFit
from .splay_best_fit import SplayBestFit
from .strategy import Strategy
from .tlsf import TLSF
from .v7_malloc import V7Malloc

STRATEGIES: dict[str, type[Strategy]] = {}


def register(cls: type[Strategy]) -> type[Strategy]:
    if cls.name in STRATEGIES and STRATEGIES[cls.name] is not cls:
        raise ValueError(f"two strategies are named {cls.name!r}")
    STRATEGIES[cls.name] = cls
    return cls


# The order is the menus' (Ctrl+1 is next fit) and the compare table's.
for _cls in (NextFit, FirstFit, RotatingList, SplayBestFit, BinaryBuddy, TLSF, BSDBuckets,
             Dlmalloc, SegregatedFirstFit, V7Malloc, GNUMalloc, PhkMalloc):
    register(_cls)


def strategy_names() -> list[str]:
    return list(STRATEGIES)


def make_strategy(name: str, **params) -> Strategy:
    try:
        cls = STRATEGIES[name]
    except KeyError:
        known = ", ".join(STRATEGIES)
        raise ValueError(f"unknown strategy {name!r}; known: {known}") from None
    return cls(**params)
