"""``block-table``: GNU malloc's block table, free clusters and fragment lists.

From Mike Haertel's GNU malloc (1989-1995): the heap is cut into blocks of
``BLOCKSIZE``, each with an entry in the ``_heapinfo`` table; large requests
take clusters of whole blocks from a free list searched from the roving
``_heapindex``; small ones are fragments of 2**log bytes of one block, listed
per size in ``_fraghead[log]``.

Shape (docs/structure.md, "Per kind"): ``blocksize``; ``blocks``,
``[[addr, nblocks, state]]`` over the heap, state ``"table"``, ``"free"``,
``"busy"`` or ``"frags"``; ``frag_blocks``, ``{addr: {"log", "nfree",
"first"}}``; ``free_clusters`` (address order); ``heapindex`` (None at the
anchor); ``fraglists``, ``{log: [addrs]}`` for every fragment size, head
first; ``lists``, the same free blocks as labelled lists.
"""

from __future__ import annotations

from .. import events as ev
from ..structure import StructureMismatch
from ..structure_replay import Follower, ReplayError, Runs
from . import StructureKind, register
from ._runs import check_runs


class BlockTableFollower(Follower):
    """Replayed: ``free_clusters``, ``heapindex``, ``fraglists`` (non-empty,
    head first) and ``sizes``: clusters as phkmalloc's runs
    (:class:`~heapscope.allocators.structure_replay.Runs`, TopExtended too);
    fragments follow ListInsert/ListRemove with ``where = (log,)``,
    FragLinked, BlockFragmented and FragBlockEmptied; PointerMove
    '_heapindex'.  Not replayed: ``blocks`` and the fragment counts (the heap
    walk says those)."""

    def __init__(self, before: dict) -> None:
        super().__init__(before)
        sizes = before["sizes"]
        self.runs = Runs({a: sizes[a] for a in before["free_clusters"]})
        self.lists = {int(k): list(v) for k, v in before["fraglists"].items() if v}
        self.pointer = before["heapindex"]

    @staticmethod
    def replayable(s: dict, out: dict) -> list[int]:
        out["free_clusters"] = list(s["free_clusters"])
        out["heapindex"] = s["heapindex"]
        out["fraglists"] = {int(k): list(v) for k, v in s["fraglists"].items() if v}
        return out["free_clusters"] + [a for v in out["fraglists"].values() for a in v]

    def apply(self, e) -> None:
        if not self.runs.apply(e):
            self._fragments(e)

    def _fragments(self, e) -> None:
        lists = self.lists
        if isinstance(e, ev.ListInsert):
            lists.setdefault(int(e.where[0]), []).insert(0, e.addr)
        elif isinstance(e, ev.ListRemove):
            lst = lists.get(int(e.where[0]), [])
            if e.addr not in lst:
                raise ReplayError(f"fragment {e.addr:#x} leaves _fraghead[{e.where[0]}] but is not on it")
            lst.remove(e.addr)
            if not lst:
                del lists[int(e.where[0])]
        elif isinstance(e, ev.FragLinked):
            lst = lists.get(e.log, [])
            if e.after not in lst or e.addr in lst:
                raise ReplayError(f"fragment {e.addr:#x} goes after {e.after:#x}, which is not on "
                                  f"_fraghead[{e.log}]")
            lst.insert(lst.index(e.after) + 1, e.addr)
        elif isinstance(e, ev.BlockFragmented):
            lst = lists.setdefault(e.log, [])
            for i in range(1, e.count):
                lst.insert(0, e.block + (i << e.log))
        elif isinstance(e, ev.FragBlockEmptied):
            lst = lists.get(e.log, [])
            end = e.block + (e.count << e.log)
            kept = [a for a in lst if not e.block <= a < end]
            if len(lst) - len(kept) != e.count - 1:
                raise ReplayError(f"block {e.block:#x} is emptied but {len(lst) - len(kept)} of its "
                                  f"fragments are on _fraghead[{e.log}], not {e.count - 1}")
            if kept:
                lists[e.log] = kept
            else:
                lists.pop(e.log, None)
        elif isinstance(e, ev.PointerMove) and e.name == "_heapindex":
            self.move(e, "_heapindex")

    def result(self, strict: bool) -> dict:
        runs = self.runs.runs
        out: dict = {"free_clusters": sorted(runs), "heapindex": self.pointer}
        out["fraglists"] = {k: list(v) for k, v in sorted(self.lists.items()) if v}
        sizes = {a: runs[a] for a in out["free_clusters"]}
        for log, addrs in out["fraglists"].items():
            for a in addrs:
                sizes[a] = 1 << log
        out["sizes"] = sizes
        return out


@register
class BlockTableKind(StructureKind):
    name = "block-table"
    follower = BlockTableFollower
    pointer_keys = {"_heapindex": "heapindex"}

    def members(self, s: dict) -> list[int]:
        return list(s["free_clusters"]) + [a for addrs in s["fraglists"].values() for a in addrs]

    def where(self, s: dict) -> dict[int, str]:
        out = {a: "the free cluster list" for a in s["free_clusters"]}
        for log, addrs in s["fraglists"].items():
            for a in addrs:
                out[a] = f"_fraghead[{log}]"
        return out

    def check(self, s: dict) -> None:
        sizes = s["sizes"]
        check_runs(s["free_clusters"], sizes, "free clusters")
        if s["heapindex"] is not None and s["heapindex"] not in s["free_clusters"]:
            raise StructureMismatch(f"_heapindex {s['heapindex']:#x} is not a free cluster")
        blocks = s["frag_blocks"]
        for log, addrs in s["fraglists"].items():
            size = 1 << int(log)
            seen: list = []
            for a in addrs:
                block = a - a % s["blocksize"]
                info = blocks.get(block)
                if info is None or info["log"] != int(log) or sizes[a] != size:
                    raise StructureMismatch(f"_fraghead[{log}] holds {a:#x}, not a fragment of {size} B")
                if block in seen and seen[-1] != block:
                    raise StructureMismatch(f"the free fragments of block {block:#x} are not together")
                seen.append(block)
            for block, info in blocks.items():
                if info["log"] == int(log) and seen.count(block) != info["nfree"]:
                    raise StructureMismatch(f"block {block:#x} says {info['nfree']} free fragments, "
                                            f"_fraghead[{log}] has {seen.count(block)}")

    def complete(self, states, out: dict, replayed: dict) -> None:
        # every fragment size, empty or not, as structure() gives them
        out["fraglists"] = {k: list(replayed["fraglists"].get(int(k), ())) for k in states.after["fraglists"]}
