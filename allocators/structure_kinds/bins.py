"""``bins``: Doug Lea's malloc 2.6 bins (dlmalloc), top and the last remainder apart.

From Doug Lea's malloc 2.6 (1996-1999): 128 doubly linked bins of free chunks
(small bins of one size, large bins of a range kept largest first by
``frontlink``), ``binblocks`` marking which groups of four may hold chunks;
the top chunk and the last remainder of a split are in no bin; big requests
are mmap'd apart from the heap.

Shape (docs/structure.md, "Per kind"): ``bins``, ``{i: [addrs]}`` of the
non-empty bins, front first; ``binblocks``; ``bin_floor``, the smallest chunk
size of each bin (None for bin 127); ``last_remainder`` and ``top`` (also in
``outside``); ``mapped``, ``[{"addr", "size", "payload"}]``.
"""

from __future__ import annotations

from .. import events as ev
from ..inspect_text import cut_lists
from ..phrases import at, human_bytes
from ..dlmalloc_events import BinmapChange, Mapped, Trim, Unmapped
from ..structure import StructureMismatch
from ..structure_replay import KeyedLists, ReplayError, hex_or_none
from . import StructureKind, register


class BinsFollower(KeyedLists):
    """Replayed: ``bins`` (non-empty, front first), ``binblocks``,
    ``last_remainder``, ``top``, ``mapped`` and the ``sizes`` of the chunks in
    bins, the last remainder and top.  ListInsert files a chunk as
    ``frontlink`` does (the front of a small bin; in a large bin before the
    first chunk not larger), ListRemove unlinks it, BinmapChange sets or
    clears a bit, PointerMove 'last_remainder' and 'top' move those, Trim
    shrinks top, Mapped and Unmapped add and remove regions."""

    lists_key = "bins"

    def __init__(self, before: dict) -> None:
        super().__init__(before)
        self.binblocks = before["binblocks"]
        self.last_remainder = before["last_remainder"]
        self.top = before["top"]
        self.mapped = {m["addr"]: dict(m) for m in before["mapped"]}

    @staticmethod
    def replayable(s: dict, out: dict) -> list[int]:
        out["bins"] = {int(k): list(v) for k, v in s["bins"].items() if v}
        out["binblocks"] = s["binblocks"]
        out["last_remainder"] = s["last_remainder"]
        out["top"] = s["top"]
        out["mapped"] = [dict(m) for m in s["mapped"]]
        held = [a for v in out["bins"].values() for a in v]
        return held + [a for a in (s["last_remainder"], s["top"]) if a is not None]

    def apply(self, e) -> None:
        lists = self.lists
        if isinstance(e, ev.ListInsert):
            i = self.key(e.where)
            chunks = lists.setdefault(i, [])
            if e.addr in chunks:
                raise ReplayError(f"{e.addr:#x} is linked into bin {i} twice")
            at = 0
            if e.size >= 512:     # frontlink: past the larger chunks of a large bin
                while at < len(chunks) and e.size < self.size(chunks[at], True):
                    at += 1
            chunks.insert(at, e.addr)
        elif isinstance(e, ev.ListRemove):
            super().apply(e)
        elif isinstance(e, BinmapChange):
            bit = 1 << e.block
            if bool(self.binblocks & bit) == e.marked:
                raise ReplayError(f"binblocks bit {e.block} is {'set' if e.marked else 'cleared'} twice")
            self.binblocks ^= bit
        elif isinstance(e, ev.PointerMove) and e.name in ("last_remainder", "top"):
            now = getattr(self, e.name)
            if e.old != now:
                raise ReplayError(f"{e.name} moves from {hex_or_none(e.old)} but is {hex_or_none(now)}")
            setattr(self, e.name, e.new)
        elif isinstance(e, Trim):
            if self.top is None:
                raise ReplayError("a trim with no top")
            self.known[self.top] = self.size(self.top, True) - e.extra
        elif isinstance(e, Mapped):
            self.mapped[e.addr] = {"addr": e.addr, "size": e.size, "payload": e.payload}
        elif isinstance(e, Unmapped):
            if self.mapped.pop(e.addr, None) is None:
                raise ReplayError(f"region {e.addr:#x} is unmapped but was not mapped")

    def result(self, strict: bool) -> dict:
        bins = {k: list(v) for k, v in sorted(self.lists.items())}
        out = {"bins": bins, "binblocks": self.binblocks, "last_remainder": self.last_remainder,
               "top": self.top, "mapped": [self.mapped[a] for a in sorted(self.mapped)]}
        held = [a for v in bins.values() for a in v]
        held += [a for a in (self.last_remainder, self.top) if a is not None]
        return self.sized(out, held, strict)


@register
class BinsKind(StructureKind):
    name = "bins"
    follower = BinsFollower
    pointer_keys = {"last_remainder": "last_remainder", "top": "top"}
    apart = (("last_remainder", "the last remainder"), ("top", "top"))

    def members(self, s: dict) -> list[int]:
        return [a for addrs in s["bins"].values() for a in addrs]

    def where(self, s: dict) -> dict[int, str]:
        return {a: f"bin {i}" for i, addrs in s["bins"].items() for a in addrs}

    def check(self, s: dict) -> None:
        sizes = s["sizes"]
        floors = s["bin_floor"]
        for key, addrs in s["bins"].items():
            i = int(key)
            if not addrs:
                raise StructureMismatch(f"bin {i} is listed but empty")
            if not s["binblocks"] >> (i // 4) & 1:
                raise StructureMismatch(f"bin {i} holds chunks but binblocks bit {i // 4} is clear")
            lo = floors[i]
            hi = next((f for f in floors[i + 1:] if f is not None), None)
            for a in addrs:
                if lo is None or sizes[a] < lo or (hi is not None and sizes[a] >= hi):
                    raise StructureMismatch(f"bin {i} holds {a:#x} of {sizes[a]} bytes, outside its sizes")
            run = [sizes[a] for a in addrs]
            if any(x < y for x, y in zip(run, run[1:])):
                raise StructureMismatch(f"bin {i} is not largest first: {run[:8]}")
        kept = {o["addr"]: o["why"] for o in s["outside"]}
        for name in ("last_remainder", "top"):
            a = s[name]
            if a is not None and a not in kept:
                raise StructureMismatch(f"{name} {a:#x} is not kept apart in 'outside'")

    # how it reads: malloc.c 2.6's binblocks, the non-empty bins, what the
    # bins alone do not say (last_remainder, top) and the mmapped chunks
    def inspect_lines(self, s: dict, all_items: bool, named: set) -> list[str]:
        out = [f"  binblocks = {s['binblocks']:032b}  (bit b: bins 4b..4b+3, right to left)"]
        out += cut_lists(s["bins"], named, all_items, s["sizes"],
                         lambda i: f"bin {i} (from {s['bin_floor'][int(i)]} B)", "bins")
        if not s["bins"]:
            out.append("  every bin is empty")
        out.append("  last_remainder -> " + at(s["last_remainder"], "none"))
        out.append("  top -> " + at(s["top"], "none (nothing sbrk'd yet)"))
        for m in s["mapped"]:
            out.append(f"  mmap region {m['addr']:#x} ({m['size']} B), payload {m['payload']:#x}")
        return out

    def labelled_lists(self, s: dict, named=()) -> list:
        # bins are listed only when non-empty: a bin the step names (the one
        # it took its last block from) is listed empty too
        floors = s.get("bin_floor") or []
        bins = dict(s["bins"])
        for key in named:
            if key is not None and len(key) == 1 and str(key[0]) not in bins and key[0] not in bins:
                bins[key[0]] = []
        out = []
        for i in sorted(bins, key=int):
            label = f"bin {i}"
            if int(i) < len(floors) and floors[int(i)] is not None:
                label += f" (from {human_bytes(floors[int(i)])})"
            out.append(((int(i),), label, list(bins[i])))
        return out
