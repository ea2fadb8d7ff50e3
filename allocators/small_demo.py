"""The "small demo" constants: each strategy's policy, with its growth
constants scaled to a trace of a few requests.

The strategies keep their originals' constants, which are sized for real
programs: K&R's ``morecore`` asks ``sbrk`` for at least NALLOC = 1024 header
units (16 KiB on LP64), so ten requests of a few hundred bytes show as one
free block with a sliver used (issue 21: waste 4581 %); TLSF, Kruse and Vo's
allocators grow by 4 KiB chunks, the BSD buckets carve 4 KiB pages into
equal blocks, dlmalloc and phkmalloc work in 4 KiB pages.  The
preset keeps every rule of the policy and changes only those sizes, to
about the trace's largest request (:func:`growth_for`), so that each growth
of the heap holds a block or two and a trace of ten requests fills the map.

:func:`small_demo` gives, for one strategy, the parameters to use and what
changed, in words; the window offers it for a small trace
(``gui/params_panel.py``).
"""

from __future__ import annotations

from dataclasses import dataclass

from heapscope.values import format_size

from .params import SIZE, declared
from .registry import STRATEGIES

#: the preset is offered for traces of at most this many operations
SMALL_TRACE_OPS = 60


@dataclass(frozen=True)
class Preset:
    """A strategy's small-demo parameters (its own, to merge into what it is
    built with) and one phrase per change."""
    strategy: str
    params: dict
    changes: tuple

    def text(self) -> str:
        return (f"{self.strategy}: " + "; ".join(self.changes)) if self.changes else \
            f"{self.strategy}: nothing to change (no constant of its policy shrinks this heap)"


def growth_for(trace) -> int:
    """The heap growth a small demo wants: the smallest power of two that
    holds the trace's largest request with a header (at least 64 bytes)."""
    largest = int(trace.sizes.max()) if len(trace) else 0
    need = max(64, largest + 16)
    return 1 << (need - 1).bit_length()


def _power_in(p, want: int) -> int:
    """``want`` clamped to what parameter ``p`` accepts (a power of two if it must be)."""
    value = min(max(want, p.low), p.high)
    if p.power_of_two and value & (value - 1):
        value = 1 << value.bit_length()
        value = min(value, p.high)
    return value


def small_demo(strategy: str, trace, word: int = 8) -> Preset:
    """The small-demo parameters of ``strategy`` for ``trace`` (see the module
    docstring).  Only parameters the strategy declares are set, each within
    its range; those at the wanted value already are left out."""
    cls = STRATEGIES[strategy]
    params = declared(cls)
    g = growth_for(trace)
    want: dict = {}
    if "nalloc" in params:                    # K&R: morecore's least request, in header units
        want["nalloc"] = max(1, g // (2 * word))
    for name in ("chunk", "block"):           # a chunk grown at a time (TLSF, Kruse, Vo, V7 ...)
        if name in params:
            want[name] = g
    # GNU malloc's blocksize stays: its info table spans HEAP / blocksize
    # entries, so smaller blocks give a bigger table, not a smaller heap
    for name in ("pagesize",):                # pages (BSD buckets, dlmalloc, phkmalloc)
        if name in params:
            want[name] = g
    if "max_order" in params:                 # buddy: one chunk of 2**max_order holds the demo
        total = int(trace.sizes.sum()) + 16 * len(trace)
        want["max_order"] = max(4, (max(total, g) - 1).bit_length())
    out, changes = {}, []
    for name, value in want.items():
        p = params[name]
        value = _power_in(p, value) if p.low is not None else value
        current = p.default if p.default is not None else None
        if value == current:
            continue
        out[name] = value
        shown = format_size(value) if p.kind == SIZE else str(value)
        changes.append(f"{name} {p.default_text()} → {shown}")
    return Preset(strategy, out, tuple(changes))
