"""``page-directory``: phkmalloc's page directory, chunk pages and free page runs.

From Poul-Henning Kamp's malloc of FreeBSD ("Malloc(3) revisited", USENIX
1998): every page of the heap has an entry in ``page_dir``; small requests
are chunks of 2**j bytes cut from one page, found by a bitmap in the page's
``pginfo``, pages with a free chunk listed per size; large requests take runs
of whole pages from the free-page list.

Shape (docs/structure.md, "Per kind"): ``pagesize``; ``pages``,
``[[addr, npages, state]]`` over the heap, state ``"free"``, ``"run"`` or
``"chunks"``; ``chunk_pages``, ``{page: {"shift", "size", "total", "free",
"bitmap", "free_chunks", "info", "stolen"}}``; ``chunk_lists``,
``{j: [pages]}`` for every chunk size, head first; ``free_runs``, the
free-page list; ``lists``, the same free blocks as labelled lists.
"""

from __future__ import annotations

from .. import events as ev
from ..structure import StructureMismatch
from ..structure_replay import Follower, ReplayError, Runs, hex_or_none
from . import StructureKind, register
from ._runs import check_runs


class PageDirectoryFollower(Follower):
    """Replayed: ``free_runs``, ``chunk_lists`` (non-empty, head first),
    ``chunk_free`` (each chunk page's free chunks, in address order) and
    ``sizes`` (of the runs and of the listed pages' chunks: a page taken off
    its list to be dissolved names none).  The free-page list follows
    :class:`~heapscope.allocators.structure_replay.Runs`; the chunk pages
    follow ChunkPageMade, ChunkTaken, ChunkFreed, ChunkPageLinked,
    ChunkPageUnlinked and ChunkPageDissolved.  Not replayed: ``pages`` and
    the pginfo counts (the heap walk says those)."""

    def __init__(self, before: dict) -> None:
        super().__init__(before)
        sizes = before["sizes"]
        self.runs = Runs({a: sizes[a] for a in before["free_runs"]})
        self.lists = {int(j): list(v) for j, v in before["chunk_lists"].items() if v}
        self.chunk_size = {int(p): info["size"] for p, info in before["chunk_pages"].items()}
        self.chunk_free = {int(p): set(info["free_chunks"]) for p, info in before["chunk_pages"].items()}

    @staticmethod
    def replayable(s: dict, out: dict) -> list[int]:
        out["free_runs"] = list(s["free_runs"])
        out["chunk_lists"] = {int(j): list(v) for j, v in s["chunk_lists"].items() if v}
        out["chunk_free"] = {int(p): list(info["free_chunks"]) for p, info in s["chunk_pages"].items()}
        listed = {p for v in out["chunk_lists"].values() for p in v}
        return out["free_runs"] + [a for p, v in out["chunk_free"].items() if p in listed for a in v]

    def apply(self, e) -> None:
        if not self.runs.apply(e):
            self._chunk_pages(e)

    def _chunk_pages(self, e) -> None:
        lists, free = self.lists, self.chunk_free
        if isinstance(e, ev.ChunkPageMade):
            if e.page in free:
                raise ReplayError(f"page {e.page:#x} is cut into chunks twice")
            free[e.page] = {e.page + (e.stolen + i) * e.size for i in range(e.total)}
            self.chunk_size[e.page] = e.size
            lists.setdefault(e.shift, []).insert(0, e.page)
        elif isinstance(e, (ev.ChunkTaken, ev.ChunkFreed)):
            chunks = free.get(e.page)
            if chunks is None or (e.addr in chunks) != isinstance(e, ev.ChunkTaken):
                raise ReplayError(f"chunk {e.addr:#x} of page {e.page:#x} is "
                                  f"{'taken' if isinstance(e, ev.ChunkTaken) else 'freed'} twice")
            if isinstance(e, ev.ChunkTaken):
                chunks.remove(e.addr)
            else:
                chunks.add(e.addr)
        elif isinstance(e, ev.ChunkPageLinked):
            lst = lists.setdefault(e.shift, [])
            if e.page in lst or (e.after is not None and e.after not in lst):
                raise ReplayError(f"page {e.page:#x} goes on page_dir[{e.shift}] after {hex_or_none(e.after)}")
            lst.insert(0 if e.after is None else lst.index(e.after) + 1, e.page)
        elif isinstance(e, ev.ChunkPageUnlinked):
            lst = lists.get(e.shift, [])
            if e.page not in lst:
                raise ReplayError(f"page {e.page:#x} leaves page_dir[{e.shift}] but is not on it")
            lst.remove(e.page)
            if not lst:
                del lists[e.shift]
        elif isinstance(e, ev.ChunkPageDissolved):
            if free.pop(e.page, None) is None:
                raise ReplayError(f"page {e.page:#x} is no chunk page")
            del self.chunk_size[e.page]

    def result(self, strict: bool) -> dict:
        runs = self.runs.runs
        out: dict = {"free_runs": sorted(runs)}
        out["chunk_lists"] = {j: list(v) for j, v in sorted(self.lists.items()) if v}
        out["chunk_free"] = {p: sorted(v) for p, v in sorted(self.chunk_free.items())}
        sizes = {a: runs[a] for a in out["free_runs"]}
        # the free blocks are the free chunks of the listed pages (a page
        # off its list mid-step, about to be dissolved, names none)
        listed = {p for v in out["chunk_lists"].values() for p in v}
        for p, chunks in out["chunk_free"].items():
            if p in listed:
                for a in chunks:
                    sizes[a] = self.chunk_size[p]
        out["sizes"] = sizes
        return out


@register
class PageDirectoryKind(StructureKind):
    name = "page-directory"
    follower = PageDirectoryFollower

    def members(self, s: dict) -> list[int]:
        return [a for _, _, chunks in self._listed(s) for a in chunks] + list(s["free_runs"])

    @staticmethod
    def _listed(s: dict):
        """(list index, the page's free chunks) of every listed page; a listed
        page with no pginfo names no chunks (the check then says so, not a KeyError)."""
        pages = s["chunk_pages"]
        for j, listed in s["chunk_lists"].items():
            for page in listed:
                yield j, page, pages[page]["free_chunks"] if page in pages else ()

    def where(self, s: dict) -> dict[int, str]:
        out = {}
        for j, page, chunks in self._listed(s):
            for a in chunks:
                out[a] = f"page_dir[{j}], page {page:#x}"
        for a in s["free_runs"]:
            out[a] = "the free-page list"
        return out

    def check(self, s: dict) -> None:
        sizes = s["sizes"]
        pages = s["chunk_pages"]
        check_runs(s["free_runs"], sizes, "free page runs")
        for a in s["free_runs"]:
            if sizes[a] % s["pagesize"] or a % s["pagesize"]:
                raise StructureMismatch(f"free run {a:#x} of {sizes[a]} B is not whole pages")
        listed: dict = {}
        for j, on in s["chunk_lists"].items():
            for page in on:
                info = pages.get(page)
                if info is None or info["shift"] != int(j) or page in listed:
                    raise StructureMismatch(f"page_dir[{j}] holds {page:#x}, not a page of {1 << int(j)} B "
                                            "chunks, or holds it twice")
                listed[page] = j
        for page, info in pages.items():
            free = info["free_chunks"]
            if bin(info["bitmap"]).count("1") != info["free"] or len(free) != info["free"]:
                raise StructureMismatch(f"page {page:#x}: bitmap, free count and free chunks disagree")
            if (info["free"] > 0) != (page in listed):
                raise StructureMismatch(f"page {page:#x} has {info['free']} free chunks and is "
                                        f"{'' if page in listed else 'not '}on its list")
            for a in free:
                if sizes[a] != info["size"] or (a - page) % info["size"]:
                    raise StructureMismatch(f"chunk {a:#x} is not a {info['size']} B chunk of page {page:#x}")

    def complete(self, states, out: dict, replayed: dict) -> None:
        """The chunk pages mid-step: each page's free chunks (and so its bitmap
        and count) as replayed, the rest of its pginfo as before or after the
        step; the lists for every chunk size."""
        after, before = states.after, states.before
        out["chunk_lists"] = {j: list(replayed["chunk_lists"].get(int(j), ())) for j in after["chunk_lists"]}
        infos = {**before["chunk_pages"], **after["chunk_pages"]}
        pages = {}
        for page, free in replayed["chunk_free"].items():
            info = dict(infos.get(page) or _made_page(states.events, page))
            info["free_chunks"] = list(free)
            info["free"] = len(free)
            info["bitmap"] = sum(1 << ((a - page) // info["size"]) for a in free)
            pages[page] = info
        out["chunk_pages"] = pages
        del out["chunk_free"]


def _made_page(events, page: int) -> dict:
    """The pginfo of a page cut into chunks and dissolved within the step,
    from its ChunkPageMade event."""
    made = next(e for e in events if isinstance(e, ev.ChunkPageMade) and e.page == page)
    return {"shift": made.shift, "size": made.size, "total": made.total, "free": made.total,
            "bitmap": 0, "free_chunks": [], "info": made.info, "stolen": made.stolen}
