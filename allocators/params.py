"""Strategy parameters, declared once and checked when a strategy is built.

Each strategy class lists the parameters it takes as :class:`Param` values in
its ``params`` attribute; the ones every strategy takes (word, align,
heap_limit, pool_size) are declared on :class:`~heapscope.allocators.strategy.Strategy`
itself, and a subclass may declare one of them again to narrow it (TLSF
aligns to the word only).  The declarations are the single source for:

* the check made whenever a strategy is built, by ``make_strategy`` or by
  calling the class (``Strategy.__new__`` runs :func:`check_params`): an
  unknown name says which names the strategy takes, a value of the wrong type
  or out of range names the parameter and what it accepts;
* the command line: ``--word``, ``--align``, ``--heap-limit`` and
  ``--pool-size``, ``-P STRATEGY.NAME=VALUE`` (parsed with :meth:`Param.parse`),
  ``heapscope strategies`` and the ``--help`` texts;
* the parameters table of each page under ``docs/strategies/`` (a test compares
  them with :func:`markdown_table`).

Ranges are chosen so that no accepted value can take unbounded memory or
time: sizes stop at 1 TiB (the largest request a trace may hold), so every
address and heap size fits the int64 columns of the measures; per-page Python
structures (BSD buckets carve a page into equal blocks) stop at 64 KiB pages.
"""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Integral

from heapscope.values import BadValue, format_size, parse_bool, parse_int, parse_size

#: kinds of value
INT = "int"
SIZE = "size"      # an int read with K, M, G, T suffixes
BOOL = "bool"

#: the largest size any size parameter accepts: 1 TiB, as traces' MAX_SIZE
MAX_BYTES = 1 << 40
#: the largest growth increment a strategy may be given
MAX_CHUNK = 1 << 30

#: keyword arguments a strategy takes that are not parameters of the policy
NOT_PARAMETERS = frozenset({"record"})


class ParamError(ValueError):
    """A strategy parameter that is unknown, of the wrong type or out of range;
    the message names the strategy, the parameter and what it accepts."""


@dataclass(frozen=True)
class Param:
    """One parameter: its name, kind, accepted values, default and one line of help."""
    name: str
    kind: str
    default: object
    help: str
    low: int | None = None
    high: int | None = None
    choices: tuple = ()
    power_of_two: bool = False
    #: None is a value of its own ("no limit", "no pool", "the strategy decides")
    none_ok: bool = False
    #: what None means, for the help and the docs (``"the word"``, ``"none"``)
    none_means: str = "none"

    # -------------------------------------------------------------- texts
    def _number(self, n: int) -> str:
        return format_size(n) if self.kind == SIZE else str(n)

    def accepts(self) -> str:
        """What the parameter accepts, in words: ``an integer in 1..1048576``."""
        if self.kind == BOOL:
            return "true or false"
        if self.choices:
            text = " or ".join(", ".join(self._number(c) for c in self.choices).rsplit(", ", 1))
        else:
            noun = {INT: "an integer", SIZE: "a size in bytes"}[self.kind]
            if self.power_of_two:
                noun = "a power of two"
            text = f"{noun} in {self._number(self.low)}..{self._number(self.high)}"
        if self.kind == SIZE:
            text += " (K, M, G, T suffixes)"
        if self.none_ok:
            text += ", or none"
        return text

    def default_text(self) -> str:
        if self.default is None:
            return self.none_means
        if self.kind == BOOL:
            return "true" if self.default else "false"
        return self._number(self.default)

    def _error(self, owner: str | None, value) -> ParamError:
        where = f"{owner}: " if owner else ""
        return ParamError(f"{where}{self.name} must be {self.accepts()}, got {value!r}")

    # ------------------------------------------------------------- values
    def check(self, value, owner: str | None):
        """``value`` if this parameter accepts it, else :class:`ParamError`."""
        if value is None:
            if self.none_ok:
                return None
            raise self._error(owner, value)
        if self.kind == BOOL:
            if isinstance(value, bool):
                return value
            raise self._error(owner, value)
        if isinstance(value, bool) or not isinstance(value, Integral):
            raise self._error(owner, value)
        value = int(value)
        if self.choices:
            ok = value in self.choices
        else:
            ok = self.low <= value <= self.high and not (self.power_of_two and value & (value - 1))
        if not ok:
            raise self._error(owner, value)
        return value

    def parse(self, text: str, owner: str | None):
        """The value spelt by ``text`` (a command-line or spec value), checked."""
        if self.none_ok and text.strip().lower() == "none":
            return None
        try:
            value = {INT: parse_int, SIZE: parse_size, BOOL: parse_bool}[self.kind](text)
            return self.check(value, owner)
        except (BadValue, ParamError):
            raise self._error(owner, text) from None   # as the user wrote it: '2T', not 2199023255552


def declared(cls) -> dict[str, Param]:
    """Every parameter ``cls`` takes, by name: the base class's first, then each
    subclass's own; a subclass declaring a name again replaces it in place."""
    out: dict[str, Param] = {}
    for klass in reversed(cls.__mro__):
        for p in vars(klass).get("params", ()):
            out[p.name] = p
    return out


def check_params(cls, given: dict) -> None:
    """Raise :class:`ParamError` unless ``cls`` takes every name in ``given``
    with its value."""
    if not given:
        return
    params = declared(cls)
    owner = getattr(cls, "name", cls.__name__)
    for name, value in given.items():
        p = params.get(name)
        if p is None:
            if name in NOT_PARAMETERS:
                continue
            raise ParamError(f"{owner} has no parameter {name!r}; it takes: {', '.join(params)}")
        p.check(value, owner)


def parse_param(cls, name: str, text: str):
    """The value of parameter ``name`` of ``cls`` spelt by ``text``, checked."""
    params = declared(cls)
    owner = getattr(cls, "name", cls.__name__)
    p = params.get(name)
    if p is None:
        raise ParamError(f"{owner} has no parameter {name!r}; it takes: {', '.join(params)}")
    return p.parse(text, owner)


def markdown_table(cls) -> str:
    """The parameters table of a strategy's docs page."""
    lines = ["| parameter | accepts | default | what it sets |", "|---|---|---|---|"]
    for p in declared(cls).values():
        lines.append(f"| `{p.name}` | {p.accepts()} | {p.default_text()} | {p.help} |")
    return "\n".join(lines)
