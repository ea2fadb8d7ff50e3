"""``buckets``: Kingsley's power-of-two buckets (4.2BSD / 4.3BSD malloc).

From Chris Kingsley's malloc of 4.2BSD (kept in 4.3BSD): a request plus its
header is rounded up to a power of two and served from the head of
``nextf[k]``; an empty bucket is refilled by carving a page of new memory
into blocks of its size; buckets are never split nor joined.

Shape (docs/structure.md, "Per kind"): ``buckets``, ``{k: [addrs]}`` for every
bucket, head first; ``block_sizes``, ``{k: bytes}``.
"""

from __future__ import annotations

from .. import events as ev
from ..inspect_text import addr_list, some_lists
from ..phrases import human_bytes
from ..predict import Generic, hx, plural
from ..structure_replay import KeyedLists
from . import StructureKind, register


class Buckets(Generic):
    """Kingsley's power-of-two buckets (4.2/4.3BSD malloc)."""

    policy = "4.3BSD malloc"

    def __init__(self, facts) -> None:
        super().__init__(facts)
        self.bucket_of: dict[int, int] = {}
        for k, addrs in facts.structure.get("buckets", {}).items():
            for a in addrs:
                self.bucket_of[a] = int(k)
        self.sizes = {int(k): v for k, v in facts.structure.get("block_sizes", {}).items()}
        self.k = None
        for e in facts.events:
            if isinstance(e, (ev.ListRemove, ev.BucketRefill)):
                self.k = e.where[0] if isinstance(e, ev.ListRemove) else e.bucket
                break

    def _bucket(self) -> str:
        k = self.k
        if k is None:
            return "its bucket"
        return f"nextf[{k}] (blocks of {self.sizes.get(k, 0):,} B)"

    def why_chosen(self) -> str:
        f = self.f
        return (f"4.3BSD malloc rounds {f.request:,} B plus its header up to a power of two: "
                f"{self._bucket()}; it takes the head of that list, {hx(f.chosen)}, and never looks at "
                f"another bucket.")

    def why_grow(self) -> str:
        f = self.f
        refill = next((e for e in f.events if isinstance(e, ev.BucketRefill)), None)
        g = f.grow
        text = (f"4.3BSD malloc rounds {f.request:,} B plus its header up to {self._bucket()}, and that "
                f"list is empty")
        if g is not None:
            text += f", so morecore gets {g.increment:,} B from sbrk"
            if refill is not None:
                text += f" and carves it into {plural(refill.count, 'block')} of {refill.block_size:,} B"
        return text + "."

    def why_not(self, guess: int) -> str:
        o = self.bucket_of.get(guess)
        if o is None or self.k is None:
            return super().why_not(guess)
        if o != self.k:
            return (f"{hx(guess)} is in nextf[{o}] (blocks of {self.sizes.get(o, 0):,} B): malloc takes "
                    f"only from {self._bucket()}; buckets are never split nor joined.")
        return (f"{hx(guess)} is in the right bucket but not at its head: nextf[{o}] is LIFO, the head "
                f"goes first.")


class BucketsFollower(KeyedLists):
    """Replayed: ``buckets`` (non-empty, head first) and their ``sizes``:
    ListInsert, ListRemove and BucketRefill (the carved blocks become the
    whole list).  Not replayed: the uncarved tail of a fixed pool in
    ``outside`` (it shrinks under a Note)."""

    lists_key = "buckets"


@register
class BucketsKind(StructureKind):
    name = "buckets"
    follower = BucketsFollower
    speaker = Buckets

    def members(self, s: dict) -> list[int]:
        return [a for addrs in s["buckets"].values() for a in addrs]

    def where(self, s: dict) -> dict[int, str]:
        return {a: f"nextf[{k}]" for k, addrs in s["buckets"].items() for a in addrs}

    def complete(self, states, out: dict, replayed: dict) -> None:
        # every bucket, empty or not, as structure() gives them
        out["buckets"] = {k: list(replayed["buckets"].get(int(k), ())) for k in states.after["buckets"]}

    # how it reads: each non-empty nextf[k] with its block size
    def inspect_lines(self, s: dict, all_items: bool, named: set) -> list[str]:
        out = [f"  nextf[{k}] ({s['block_sizes'][k]} B blocks, {len(addrs)} free): " + addr_list(addrs, {}, all_items)
               for k, addrs in some_lists(s["buckets"], named, all_items)[0]]
        if not any(s["buckets"].values()):
            out.append("  every bucket is empty")
        return out

    def labelled_lists(self, s: dict, named=()) -> list:
        sizes = s.get("block_sizes", {})
        out = []
        for k in sorted(s["buckets"], key=int):
            size = sizes.get(k)
            label = f"nextf[{k}]" + (f" ({human_bytes(size)} blocks)" if size else "")
            out.append(((int(k),), label, list(s["buckets"][k])))
        return out
