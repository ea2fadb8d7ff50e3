"""``tlsf``: two-level segregated fit, a matrix of free lists found by bitmaps.

From Masmano, Ripoll, Crespo and Real, "TLSF: a New Dynamic Memory Allocator
for Real-Time Systems" (ECRTS 2004), as in mattconte/tlsf: ``mapping_search``
rounds a request up to a class (fl, sl), and a find-first-set on ``fl_bitmap``
and ``sl_bitmap[fl]`` finds the first non-empty list at or above it, in
constant time.

Shape (docs/structure.md, "Per kind"): ``fl_bitmap``; ``sl_bitmap``, one int per
first level; ``lists``, ``{"fl,sl": [addrs]}`` for the non-empty lists, head
first (keys made by ``structure.tlsf_key``); ``fl_count``, ``sl_count``;
``row_floor``; ``small_block_size``.
"""

from __future__ import annotations

from .. import events as ev
from ..inspect_text import cut_lists
from ..predict import Generic, hx
from ..structure import StructureMismatch, parse_tlsf_key, tlsf_key
from ..structure_replay import KeyedLists
from . import StructureKind, register


class Tlsf(Generic):
    """TLSF: mapping_search's class, the bitmaps' find-first-set, the list's head."""

    policy = "TLSF"

    def __init__(self, facts) -> None:
        super().__init__(facts)
        self.mapping = next((e for e in facts.search if isinstance(e, ev.MappingSearch)), None)
        probes = [e for e in facts.search if isinstance(e, ev.BitmapProbe)]
        self.found = probes[-1].found if probes else None
        self.class_of: dict[int, tuple[int, int]] = {}
        self.heads: dict[tuple[int, int], int] = {}
        for key, addrs in facts.structure.get("lists", {}).items():
            cls = parse_tlsf_key(key)
            for a in addrs:
                self.class_of[a] = cls
            if addrs:
                self.heads[cls] = addrs[0]

    def _searched(self) -> tuple[int, int] | None:
        m = self.mapping
        return (m.fl, m.sl) if m is not None else None

    def _mapping_words(self) -> str:
        m = self.mapping
        if m is None:
            return "TLSF"
        return (f"TLSF's mapping_search rounds {m.request if m.request is not None else m.size:,} B up "
                f"to {m.rounded:,} B, class ({m.fl}, {m.sl}), so that every block of that class and "
                f"above fits")

    def why_chosen(self) -> str:
        f = self.f
        searched, found = self._searched(), self.found
        size = f.size_of(f.chosen)
        if found is None or searched is None:
            return f"TLSF took {hx(f.chosen)} ({size:,} B), the head of its list."
        if found == searched:
            where = f"list ({found[0]}, {found[1]}) is not empty"
        elif found[0] == searched[0]:
            where = (f"list ({searched[0]}, {searched[1]}) is empty, and sl_bitmap[{searched[0]}] gives "
                     f"the next non-empty list of that first level, list ({found[0]}, {found[1]})")
        else:
            where = (f"sl_bitmap[{searched[0]}] has no list at or above ({searched[0]}, {searched[1]}), "
                     f"so fl_bitmap gives the next first level with a block: list ({found[0]}, {found[1]})")
        return (f"{self._mapping_words()}; {where}, and TLSF takes its head, {hx(f.chosen)} "
                f"({size:,} B).")

    def why_grow(self) -> str:
        f = self.f
        searched = self._searched()
        g = f.grow
        text = self._mapping_words()
        if searched is not None:
            text += f"; the bitmaps have no list at or above ({searched[0]}, {searched[1]})"
        lower = [(a, s) for a, s in f.free_blocks() if s >= f.need and a in self.class_of]
        if lower:
            a, s = max(lower, key=lambda x: x[1])
            cls = self.class_of[a]
            text += (f" ({hx(a)}, {s:,} B, would fit, but it is filed in ({cls[0]}, {cls[1]}), below the "
                     f"class searched)")
        return text + (f", so the pool grows by {g.increment:,} B." if g else ".")

    def why_not(self, guess: int) -> str:
        f = self.f
        size = f.size_of(guess)
        cls = self.class_of.get(guess)
        searched, found = self._searched(), self.found
        if cls is None or searched is None:
            return super().why_not(guess)
        if cls < searched:
            would = " (this one would have fit: that is the price of a search in constant time)" \
                if size >= f.need else ""
            return (f"{hx(guess)} ({size:,} B) is in list ({cls[0]}, {cls[1]}), below the class searched, "
                    f"({searched[0]}, {searched[1]}): TLSF never looks below the rounded class{would}.")
        if found is not None and cls > found:
            return (f"{hx(guess)} ({size:,} B) is in list ({cls[0]}, {cls[1]}), above ({found[0]}, "
                    f"{found[1]}): TLSF takes the first non-empty list at or above ({searched[0]}, "
                    f"{searched[1]}) -- a find-first-set on the bitmaps -- not the closest fit.")
        if found is not None and cls == found:
            return (f"{hx(guess)} is in the right list, ({cls[0]}, {cls[1]}), but not at its head: TLSF "
                    f"takes the head (each list is LIFO: the block freed last).")
        return super().why_not(guess)


class TlsfFollower(KeyedLists):
    """Replayed: ``lists`` (head first), ``fl_bitmap`` and ``sl_bitmap`` (as
    the lists imply them) and ``sizes``."""

    def __init__(self, before: dict) -> None:
        super().__init__(before)
        self.fl_count = len(before["sl_bitmap"])

    @staticmethod
    def replayable(s: dict, out: dict) -> list[int]:
        out["lists"] = {k: list(v) for k, v in s["lists"].items()}
        out["fl_bitmap"] = s["fl_bitmap"]
        out["sl_bitmap"] = list(s["sl_bitmap"])
        return [a for v in out["lists"].values() for a in v]

    def key(self, where):
        return where if isinstance(where, str) else tlsf_key(*where)

    def result(self, strict: bool) -> dict:
        lists = {k: list(v) for k, v in sorted(self.lists.items(), key=lambda kv: parse_tlsf_key(kv[0]))}
        fl_bitmap, sl_bitmap = 0, [0] * self.fl_count
        for key in lists:
            fl, sl = parse_tlsf_key(key)
            fl_bitmap |= 1 << fl
            sl_bitmap[fl] |= 1 << sl
        out = {"lists": lists, "fl_bitmap": fl_bitmap, "sl_bitmap": sl_bitmap}
        return self.sized(out, [a for v in lists.values() for a in v], strict)


@register
class TlsfKind(StructureKind):
    name = "tlsf"
    follower = TlsfFollower
    speaker = Tlsf

    def members(self, s: dict) -> list[int]:
        return [a for addrs in s["lists"].values() for a in addrs]

    def where(self, s: dict) -> dict[int, str]:
        out = {}
        for key, addrs in s["lists"].items():
            fl, sl = parse_tlsf_key(key)
            for a in addrs:
                out[a] = f"list ({fl}, {sl})"
        return out

    def check(self, s: dict) -> None:
        lists = {parse_tlsf_key(k): v for k, v in s["lists"].items()}
        for fl in range(s["fl_count"]):
            row = s["sl_bitmap"][fl]
            if bool(s["fl_bitmap"] >> fl & 1) != bool(row):
                raise StructureMismatch(f"fl_bitmap bit {fl} disagrees with sl_bitmap[{fl}] = {row:#x}")
            for sl in range(s["sl_count"]):
                if bool(row >> sl & 1) != bool(lists.get((fl, sl))):
                    raise StructureMismatch(f"sl_bitmap[{fl}] bit {sl} disagrees with list ({fl}, {sl})")

    # how it reads: both bitmaps, then the non-empty lists (fl, sl)
    def inspect_lines(self, s: dict, all_items: bool, named: set) -> list[str]:
        out = [f"  fl_bitmap    = {s['fl_bitmap']:0{s['fl_count']}b}  (bit fl, right to left)"]
        for fl, row in enumerate(s["sl_bitmap"]):
            if row:
                out.append(f"  sl_bitmap[{fl}] = {row:0{s['sl_count']}b}  (sizes from {s['row_floor'][fl]} B)")
        out += cut_lists(s["lists"], named, all_items, s["sizes"],
                         lambda key: f"list ({key.replace(',', ', ')})", "lists")
        if not s["lists"]:
            out.append("  every list is empty")
        return out

    def labelled_lists(self, s: dict, named=()) -> list:
        out = []
        for key in sorted(s["lists"], key=parse_tlsf_key):
            fl, sl = parse_tlsf_key(key)
            out.append(((fl, sl), f"list ({fl}, {sl})", list(s["lists"][key])))
        return out
