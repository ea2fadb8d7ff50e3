"""``buddy``: Knuth's binary buddy system, lists AVAIL[k] of free blocks of 2**k bytes.

From Knuth, *The Art of Computer Programming* vol. 1, 2.5, algorithms R
(reservation: take the smallest non-empty AVAIL[j], j >= k, halve it down to
2**k) and S (liberation: join a block with its free buddy while it can).

Shape (docs/structure.md, "Per kind"): ``avail``, ``{k: [addrs]}`` for every
order from ``min_order`` to ``max_order``, front first; ``chunks``,
``[{"addr", "order"}]``; ``blocks``, ``[[addr, order, "free"|"used"]]`` of
every carved block in address order.
"""

from __future__ import annotations

from .. import events as ev
from ..inspect_text import addr_list
from ..phrases import human_bytes
from ..explain import times
from ..predict import Generic, hx
from ..structure import StructureMismatch
from ..structure_replay import KeyedLists
from . import StructureKind, register


class Buddy(Generic):
    """Knuth's binary buddy system, algorithm R."""

    policy = "the buddy system"

    def __init__(self, facts) -> None:
        super().__init__(facts)
        self.probes = [e for e in facts.search if isinstance(e, ev.AvailProbe)]
        self.k = self.probes[0].order if self.probes else None
        hit = next((p for p in self.probes if p.first is not None), None)
        self.j = hit.order if hit is not None else None
        self.order_of: dict[int, int] = {}
        self.front: dict[int, int] = {}
        for k, addrs in facts.structure.get("avail", {}).items():
            for a in addrs:
                self.order_of[a] = int(k)
            if addrs:
                self.front[int(k)] = addrs[0]

    def _needs(self) -> str:
        k = self.k
        return (f"the request needs a block of order {k}, 2^{k} = {1 << k:,} B with its header"
                if k is not None else "the request needs a block")

    def why_chosen(self) -> str:
        f, k, j = self.f, self.k, self.j
        if k is None or j is None:
            return super().why_chosen()
        if j == k:
            return f"{self._needs()}; AVAIL[{k}] is not empty, so R2 takes its first block, {hx(f.chosen)}."
        empty = f"AVAIL[{k}]" if j == k + 1 else f"AVAIL[{k}] to AVAIL[{j - 1}]"
        return (f"{self._needs()}; {empty} {'is' if j == k + 1 else 'are'} empty, so R1 goes up to "
                f"AVAIL[{j}] and takes its first block, {hx(f.chosen)} (2^{j} B), which R3 halves "
                f"{times(j - k)} down to 2^{k}.")

    def why_grow(self) -> str:
        f, k = self.f, self.k
        top = self.probes[-1].order if self.probes else None
        g = f.grow
        lists = (f"AVAIL[{k}] to AVAIL[{top}] are all empty" if k is not None and top is not None and top > k
                 else f"AVAIL[{k}] is empty" if k is not None else "no AVAIL list can serve it")
        return (f"{self._needs()}; {lists}" +
                (f", so a new chunk of {g.increment:,} B comes from sbrk." if g else "."))

    def why_not(self, guess: int) -> str:
        f, k, j = self.f, self.k, self.j
        o = self.order_of.get(guess)
        if o is None or k is None:
            return super().why_not(guess)
        if o < k:
            return f"{hx(guess)} is in AVAIL[{o}]: a block of 2^{o} = {1 << o:,} B is too small."
        if j is not None and o > j:
            return (f"{hx(guess)} is in AVAIL[{o}]: R1 takes the smallest non-empty AVAIL[j] with j ≥ {k}, "
                    f"here AVAIL[{j}], and splits it rather than a bigger block.")
        if j is not None and o == j:
            return f"{hx(guess)} is in AVAIL[{j}] but not at its front: R2 takes the first block of the list."
        return super().why_not(guess)


class _Carving:
    """Knuth's kval (each carved block's order), the used blocks and the chunks
    through one step: the heap walk has them, the replay does not."""

    def __init__(self, before: dict) -> None:
        self.orders = {int(a): int(k) for a, k, _ in before.get("blocks", ())}
        self.used = {int(a) for a, _, st in before.get("blocks", ()) if st == "used"}
        self.chunks = [dict(c) for c in before.get("chunks", ())]


class BuddyFollower(KeyedLists):
    """Replayed: ``avail`` (non-empty lists, front first) and their ``sizes``:
    ListInsert pushes at the front, ListRemove unlinks.  Not replayed: the
    ``chunks`` and ``blocks`` (the heap walk says those; mid-step they follow
    :meth:`BuddyKind.follow`), and the uncarved tail of a fixed pool in
    ``outside`` (it shrinks under a Note, not a structure event)."""

    lists_key = "avail"


@register
class BuddyKind(StructureKind):
    name = "buddy"
    follower = BuddyFollower
    speaker = Buddy

    def members(self, s: dict) -> list[int]:
        return [a for addrs in s["avail"].values() for a in addrs]

    def where(self, s: dict) -> dict[int, str]:
        return {a: f"AVAIL[{k}]" for k, addrs in s["avail"].items() for a in addrs}

    def check(self, s: dict) -> None:
        sizes = s["sizes"]
        for k, addrs in s["avail"].items():
            for a in addrs:
                if sizes[a] != 1 << int(k):
                    raise StructureMismatch(f"AVAIL[{k}] holds {a:#x} of {sizes[a]} bytes, not {1 << int(k)}")

    # mid-step: a BuddySplit halves a block (R3), a BuddyMerge joins two (S2),
    # a ListInsert of a block no chunk holds is a new chunk; a block is used
    # from its Placed to its Released
    def start_step(self, before: dict) -> _Carving:
        return _Carving(before)

    def follow(self, state: _Carving, e) -> bool:
        orders = state.orders
        if isinstance(e, ev.Released):
            state.used.discard(e.addr)
        elif isinstance(e, ev.Placed):
            state.used.add(e.addr)
        elif isinstance(e, ev.BuddySplit):
            orders[e.addr] = e.order - 1
            orders[e.buddy] = e.order - 1
        elif isinstance(e, ev.BuddyMerge):
            low, high = sorted((e.addr, e.buddy))
            orders.pop(high, None)
            orders[low] = e.order + 1
        elif isinstance(e, ev.ListInsert) and e.addr not in orders:
            k = int(e.where[0])
            orders[e.addr] = k
            state.chunks.append({"addr": e.addr, "order": k})
            return True
        return False

    def complete(self, states, out: dict, replayed: dict) -> None:
        carving = states.kind_state
        out["avail"] = {k: list(replayed["avail"].get(int(k), ())) for k in states.after["avail"]}
        out["blocks"] = [[a, k, "used" if a in carving.used else "free"]
                         for a, k in sorted(carving.orders.items())]
        out["chunks"] = [dict(c) for c in carving.chunks]

    # how it reads: each AVAIL[k] list, and the chunks as runs of one order
    def inspect_lines(self, s: dict, all_items: bool, named: set) -> list[str]:
        out = []
        for k, addrs in s["avail"].items():
            if addrs or all_items:
                out.append(f"  AVAIL[{k}] ({1 << int(k)} B): " + addr_list(addrs, {}, all_items))
        if not any(s["avail"].values()):
            out.append("  every AVAIL list is empty")
        out.append(f"  chunks: {_chunk_runs(s['chunks'])}" if s["chunks"] else "  no chunk yet")
        return out

    def labelled_lists(self, s: dict, named=()) -> list:
        return [((int(k),), f"AVAIL[{k}] ({human_bytes(1 << int(k))})", list(s["avail"][k]))
                for k in sorted(s["avail"], key=int)]


def _chunk_runs(chunks: list) -> str:
    """'99 of order 12 from 0x0 to 0x62000, 1 of order 13 at 0x63000'."""
    runs: list[list] = []
    for c in chunks:
        if runs and runs[-1][0] == c["order"]:
            runs[-1][2] = c["addr"]
            runs[-1][3] += 1
        else:
            runs.append([c["order"], c["addr"], c["addr"], 1])
    return ", ".join(f"{n} of order {k} from {a:#x} to {b:#x}" if n > 1 else f"1 of order {k} at {a:#x}"
                     for k, a, b, n in runs)
