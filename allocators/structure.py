"""The structure protocol: every strategy's free structure as plain data.

One method, :meth:`Strategy.structure() <allocators.strategy.Strategy.structure>`,
answers for every strategy in one shape, so the structure views, the explain
panel, ``heapscope inspect`` and the tests all read the same thing.  The answer
is a plain ``dict`` of ints, strings, lists and dicts: picklable, free of Qt,
and ``json.dumps`` writes it as it is (int dict keys become strings; the
splay tree is a flat list of nodes, because a degenerate tree is deeper than a
JSON reader's nesting limit).  ``docs/structure.md`` documents every key.

Keys every structure has:

``kind``
    which shape follows (one of :data:`KINDS`); views pick their drawing by it.
``sizes``
    ``{addr: size}`` of every free block the structure names (``outside``
    included), so a view needs nothing else to draw it.
``pointers``
    ``[{"name", "addr", "role"}]``: the policy's named pointers into the heap.
    ``role`` is ``"search"`` for a pointer where the next search starts (K&R's
    rover, Kruse's head) and ``"marker"`` for one that only names a block (the
    splay wilderness); ``addr`` is a block address or None (at a sentinel).
``outside``
    ``[{"addr", "why"}]``: free blocks the policy keeps outside its free
    structure (the splay wilderness; the uncarved tail of a fixed pool).

Every free block of ``walk()`` is named exactly once by :func:`members` (the
structure proper plus ``outside``); :func:`check_against_heap` verifies it.

Kinds and their own keys:

``address-ring`` (next fit, first fit: K&R 8.7)
    ``free_list``: free blocks in ring order after K&R's ``base`` sentinel,
    which is increasing address order; ``rover``: the block ``freep`` points
    at, None when it points at ``base``.
``ring`` (Kruse's rotating list)
    ``free_list``: the explicit list from ``head`` round the ring (LIFO order,
    not address order); ``head``.
``tree`` (Vo's splay best fit; also the generic tree of a user strategy)
    ``root``: address of the root node or None; ``nodes``: in-order list of
    ``{"addr", "key", "blocks", "left", "right"}``, where ``blocks`` is the
    node itself then its list of blocks of the same key, and children are
    named by address (None when absent); ``wilderness`` (splay only).
``buddy`` (Knuth's binary buddy system)
    ``avail``: ``{k: [addrs]}`` for every order k in ``min_order..max_order``
    (AVAIL[k], front first); ``chunks``: ``[{"addr", "order"}]``;
    ``blocks``: ``[[addr, order, state]]`` of every carved block in address
    order, from which each chunk's split tree follows.
``tlsf`` (Masmano et al.; mattconte/tlsf)
    ``fl_bitmap``: int; ``sl_bitmap``: list of ints, one per first level;
    ``lists``: ``{"fl,sl": [addrs]}`` for the non-empty lists, head first;
    ``fl_count``, ``sl_count``; ``row_floor``: the smallest block size of
    each first level; ``small_block_size``.
``buckets`` (Kingsley's 4.2BSD malloc)
    ``buckets``: ``{k: [addrs]}`` for every bucket (``nextf[k]``, head first);
    ``block_sizes``: ``{k: bytes}``.
``bins`` (Doug Lea's malloc 2.6)
    ``bins``: ``{i: [addrs]}`` for the non-empty bins, each front first (the
    order ``fd`` follows from the bin header: a large bin largest first);
    ``binblocks``: the int whose bit b says bins 4b..4b+3 may hold chunks;
    ``bin_floor``: the smallest chunk size of each of the 128 bins (None for
    bin 127, which no size reaches); ``last_remainder`` and ``top`` (also in
    ``outside``); ``mapped``: ``[{"addr", "size", "payload"}]`` of the mmap
    regions, used memory apart from the heap.
``size-classes`` (segregated free lists, one per size class: segregated first fit)
    ``lists``: ``{k: [addrs]}`` for every class k, head first (empty ones
    too); ``class_low`` and ``class_high``: ``{k: bytes}``, the smallest and
    largest block of each class (``class_high`` None for the last, which has
    no bound); ``order``: ``"lifo"`` or ``"address"``, how each list is kept.
``arena-ring`` (the V7/4BSD malloc)
    ``ring``: ``[[addr, size, state]]`` of *every* block of the heap in ring
    order (address order), state ``"free"``, ``"busy"`` or ``"top"`` (the
    one-word ``alloct``, last); ``rover``: the block ``allocp`` points at,
    busy or free, None at the static ``allocs`` words; ``top``: ``alloct``.
``page-directory`` (phkmalloc, FreeBSD)
    ``pagesize``; ``pages``: ``[[addr, npages, state]]`` covering the heap in
    address order, state ``"free"`` (a run on the free-page list), ``"run"``
    (pages handed out, MALLOC_FIRST and FOLLOW) or ``"chunks"`` (one page of
    chunks); ``chunk_pages``: ``{page: {"shift", "size", "total", "free",
    "bitmap", "free_chunks", "info", "stolen"}}`` (bit i of ``bitmap`` set:
    chunk i free); ``chunk_lists``: ``{j: [pages]}`` for every chunk size
    2**j (``page_dir[j]``, head first: the pages with a free chunk);
    ``free_runs``: the free-page list (address order); ``lists``: the same
    free blocks as labelled lists.
``block-table`` (GNU malloc, Haertel)
    ``blocksize``; ``blocks``: ``[[addr, nblocks, state]]`` covering the heap,
    state ``"table"`` (``_heapinfo`` itself), ``"free"`` (a free cluster),
    ``"busy"`` or ``"frags"`` (a block of fragments); ``frag_blocks``:
    ``{addr: {"log", "nfree", "first"}}``; ``free_clusters``: the free list
    from the anchor (address order); ``heapindex``: ``_heapindex`` (None at
    the anchor); ``fraglists``: ``{log: [addrs]}`` (``_fraghead[log]``, head
    first) for every fragment size; ``lists``: the same free blocks as
    labelled lists.
``lists`` (the generic shape for a user strategy)
    ``lists``: ``{label: [addrs]}``, in the order the strategy gives them.
"""

from __future__ import annotations

from typing import Iterable

KINDS = ("address-ring", "ring", "tree", "buddy", "tlsf", "buckets", "bins", "size-classes",
         "arena-ring", "page-directory", "block-table", "lists")

#: kinds whose search pointer may rest on a busy block (V7's allocp)
BUSY_POINTER_KINDS = ("arena-ring",)

SEARCH = "search"
MARKER = "marker"


def pointer(name: str, addr: int | None, role: str = SEARCH) -> dict:
    """One entry of ``pointers``."""
    return {"name": name, "addr": addr, "role": role}


def outside(addr: int, why: str) -> dict:
    """One entry of ``outside``: a free block kept apart from the structure."""
    return {"addr": addr, "why": why}


def make(kind: str, sizes: dict[int, int], *, pointers: Iterable[dict] = (),
         outside_blocks: Iterable[dict] = (), **fields) -> dict:
    """A structure answer with the common keys in place."""
    if kind not in KINDS:
        raise ValueError(f"unknown structure kind {kind!r}; known: {', '.join(KINDS)}")
    out = {"kind": kind, "sizes": sizes, "pointers": list(pointers),
           "outside": list(outside_blocks)}
    out.update(fields)
    return out


def tlsf_key(fl: int, sl: int) -> str:
    """The ``lists`` key of TLSF cell (fl, sl)."""
    return f"{fl},{sl}"


def parse_tlsf_key(key: str) -> tuple[int, int]:
    fl, _, sl = key.partition(",")
    return int(fl), int(sl)


def members(structure: dict) -> list[int]:
    """Every free block address the structure holds, in the structure's own
    order (a block named twice appears twice), ``outside`` blocks last."""
    kind = structure["kind"]
    out: list[int] = []
    if kind in ("address-ring", "ring"):
        out.extend(structure["free_list"])
    elif kind == "tree":
        for node in structure["nodes"]:
            out.extend(node["blocks"])
    elif kind == "buddy":
        for addrs in structure["avail"].values():
            out.extend(addrs)
    elif kind == "tlsf":
        for addrs in structure["lists"].values():
            out.extend(addrs)
    elif kind == "buckets":
        for addrs in structure["buckets"].values():
            out.extend(addrs)
    elif kind == "bins":
        for addrs in structure["bins"].values():
            out.extend(addrs)
    elif kind == "size-classes":
        for addrs in structure["lists"].values():
            out.extend(addrs)
    elif kind == "arena-ring":
        out.extend(a for a, _, state in structure["ring"] if state == "free")
    elif kind == "page-directory":
        pages = structure["chunk_pages"]
        for listed in structure["chunk_lists"].values():
            for page in listed:
                # a listed page with no pginfo names no chunks (the check says so, not a KeyError)
                out.extend(pages[page]["free_chunks"] if page in pages else ())
        out.extend(structure["free_runs"])
    elif kind == "block-table":
        out.extend(structure["free_clusters"])
        for addrs in structure["fraglists"].values():
            out.extend(addrs)
    elif kind == "lists":
        for addrs in structure["lists"].values():
            out.extend(addrs)
    else:
        raise ValueError(f"unknown structure kind {kind!r}")
    out.extend(o["addr"] for o in structure["outside"])
    return out


def where(structure: dict) -> dict[int, str]:
    """For each free block, the place the structure keeps it, in the words a
    view or the explain panel uses: ``"AVAIL[7]"``, ``"list (1, 30)"``,
    ``"nextf[5]"``, ``"the free list"``, ``"node 1024"``, ``"wilderness"``."""
    kind = structure["kind"]
    out: dict[int, str] = {}
    if kind in ("address-ring", "ring"):
        for a in structure["free_list"]:
            out[a] = "the free list"
    elif kind == "tree":
        for node in structure["nodes"]:
            for a in node["blocks"]:
                out[a] = f"the tree node of size {node['key']}"
    elif kind == "buddy":
        for k, addrs in structure["avail"].items():
            for a in addrs:
                out[a] = f"AVAIL[{k}]"
    elif kind == "tlsf":
        for key, addrs in structure["lists"].items():
            fl, sl = parse_tlsf_key(key)
            for a in addrs:
                out[a] = f"list ({fl}, {sl})"
    elif kind == "buckets":
        for k, addrs in structure["buckets"].items():
            for a in addrs:
                out[a] = f"nextf[{k}]"
    elif kind == "bins":
        for i, addrs in structure["bins"].items():
            for a in addrs:
                out[a] = f"bin {i}"
    elif kind == "size-classes":
        for k, addrs in structure["lists"].items():
            for a in addrs:
                out[a] = f"the list of class {k}"
    elif kind == "arena-ring":
        for a, _, state in structure["ring"]:
            if state == "free":
                out[a] = "the arena (idle)"
    elif kind == "page-directory":
        pages = structure["chunk_pages"]
        for j, listed in structure["chunk_lists"].items():
            for page in listed:
                for a in (pages[page]["free_chunks"] if page in pages else ()):
                    out[a] = f"page_dir[{j}], page {page:#x}"
        for a in structure["free_runs"]:
            out[a] = "the free-page list"
    elif kind == "block-table":
        for a in structure["free_clusters"]:
            out[a] = "the free cluster list"
        for log, addrs in structure["fraglists"].items():
            for a in addrs:
                out[a] = f"_fraghead[{log}]"
    elif kind == "lists":
        for label, addrs in structure["lists"].items():
            for a in addrs:
                out[a] = str(label)
    for o in structure["outside"]:
        out[o["addr"]] = o["why"]
    return out


class StructureMismatch(AssertionError):
    """A structure answer disagrees with the heap walk."""


def check_against_heap(structure: dict, blocks) -> None:
    """Raise :class:`StructureMismatch` unless every free block of ``blocks``
    (``walk()`` output) is named exactly once by the structure, with its size,
    and the structure names nothing else; then the kind's own rules."""
    free = {b[0]: b[1] for b in blocks if b[2] == "free"}
    named = members(structure)
    seen: set[int] = set()
    for a in named:
        if a in seen:
            raise StructureMismatch(f"free block {a:#x} is named twice by the {structure['kind']} structure")
        seen.add(a)
    missing = sorted(set(free) - seen)
    if missing:
        raise StructureMismatch(f"free blocks {[hex(a) for a in missing[:5]]} are in the heap "
                                f"but not in the {structure['kind']} structure")
    extra = sorted(seen - set(free))
    if extra:
        raise StructureMismatch(f"the {structure['kind']} structure names {[hex(a) for a in extra[:5]]}, "
                                "which are not free blocks of the heap")
    sizes = structure["sizes"]
    for a, size in free.items():
        if sizes.get(a) != size:
            raise StructureMismatch(f"free block {a:#x} has {size} bytes but the structure says {sizes.get(a)}")
    if set(sizes) != seen:
        raise StructureMismatch("'sizes' names other blocks than the structure holds")
    for p in structure["pointers"]:
        if p["addr"] is not None and p["role"] == SEARCH and p["addr"] not in free \
                and structure["kind"] not in BUSY_POINTER_KINDS:
            raise StructureMismatch(f"pointer {p['name']} points at {p['addr']:#x}, which is not a free block")
    _KIND_RULES.get(structure["kind"], lambda s: None)(structure)


def _ring_rules(s: dict) -> None:
    ring = s["free_list"]
    if any(a >= b for a, b in zip(ring, ring[1:])):
        raise StructureMismatch(f"the address-ordered ring is out of order: {ring[:8]}")
    if s["rover"] is not None and s["rover"] not in ring:
        raise StructureMismatch(f"the rover {s['rover']:#x} is not on the ring")


def _tree_rules(s: dict) -> None:
    nodes = s["nodes"]
    by_addr = {n["addr"]: n for n in nodes}
    keys = [n["key"] for n in nodes]
    if any(a >= b for a, b in zip(keys, keys[1:])):
        raise StructureMismatch(f"in-order keys are not strictly increasing: {keys[:8]}")
    sizes = s["sizes"]
    for n in nodes:
        if n["blocks"][:1] != [n["addr"]]:
            raise StructureMismatch(f"node {n['addr']:#x} does not head its own block list")
        for a in n["blocks"]:
            if sizes[a] != n["key"]:
                raise StructureMismatch(f"block {a:#x} of {sizes[a]} bytes hangs under key {n['key']}")
    # The nodes reachable from the root, visited in order, are the list given.
    order: list[int] = []
    stack: list[int] = []
    x = s["root"]
    while stack or x is not None:
        while x is not None:
            if len(stack) > len(nodes):
                raise StructureMismatch("the tree has a cycle")
            stack.append(x)
            x = by_addr[x]["left"] if x in by_addr else None
        x = stack.pop()
        order.append(x)
        x = by_addr[x]["right"] if x in by_addr else None
    if order != [n["addr"] for n in nodes]:
        raise StructureMismatch("the nodes list is not the in-order walk from the root")


def _buddy_rules(s: dict) -> None:
    sizes = s["sizes"]
    for k, addrs in s["avail"].items():
        for a in addrs:
            if sizes[a] != 1 << int(k):
                raise StructureMismatch(f"AVAIL[{k}] holds {a:#x} of {sizes[a]} bytes, not {1 << int(k)}")


def _tlsf_rules(s: dict) -> None:
    lists = {parse_tlsf_key(k): v for k, v in s["lists"].items()}
    for fl in range(s["fl_count"]):
        row = s["sl_bitmap"][fl]
        if bool(s["fl_bitmap"] >> fl & 1) != bool(row):
            raise StructureMismatch(f"fl_bitmap bit {fl} disagrees with sl_bitmap[{fl}] = {row:#x}")
        for sl in range(s["sl_count"]):
            if bool(row >> sl & 1) != bool(lists.get((fl, sl))):
                raise StructureMismatch(f"sl_bitmap[{fl}] bit {sl} disagrees with list ({fl}, {sl})")


def _bins_rules(s: dict) -> None:
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


def _size_classes_rules(s: dict) -> None:
    sizes = s["sizes"]
    for k, addrs in s["lists"].items():
        low, high = s["class_low"][k], s["class_high"][k]
        for a in addrs:
            if sizes[a] < low or (high is not None and sizes[a] > high):
                raise StructureMismatch(f"the list of class {k} holds {a:#x} of {sizes[a]} bytes, "
                                        f"outside {low}..{high}")
        if s["order"] == "address" and addrs != sorted(addrs):
            raise StructureMismatch(f"the list of class {k} is not in address order: {addrs[:8]}")


def _arena_ring_rules(s: dict) -> None:
    ring = s["ring"]
    for (a, size, _), (b, _, _) in zip(ring, ring[1:]):
        if a + size != b:
            raise StructureMismatch(f"the arena ring is not contiguous: {a:#x}+{size} is followed by {b:#x}")
    if ring and (ring[-1][2] != "top" or ring[-1][0] != s["top"]):
        raise StructureMismatch("the arena ring does not end with its top word")
    if any(state not in ("free", "busy", "top") for _, _, state in ring) or \
            sum(state == "top" for _, _, state in ring) > 1:
        raise StructureMismatch("an arena block has an unknown state, or there are two tops")
    if s["rover"] is not None and s["rover"] not in {a for a, _, _ in ring}:
        raise StructureMismatch(f"allocp {s['rover']:#x} is not a block of the arena")


def _runs_rules(runs: list[int], sizes: dict, what: str) -> None:
    """Free runs in address order, none touching the next (they are joined)."""
    for a, b in zip(runs, runs[1:]):
        if a + sizes[a] >= b:
            raise StructureMismatch(f"{what} {a:#x} and {b:#x} are out of order or touch")


def _page_directory_rules(s: dict) -> None:
    sizes = s["sizes"]
    pages = s["chunk_pages"]
    _runs_rules(s["free_runs"], sizes, "free page runs")
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


def _block_table_rules(s: dict) -> None:
    sizes = s["sizes"]
    _runs_rules(s["free_clusters"], sizes, "free clusters")
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


_KIND_RULES = {"address-ring": _ring_rules, "tree": _tree_rules, "buddy": _buddy_rules,
               "tlsf": _tlsf_rules, "bins": _bins_rules, "size-classes": _size_classes_rules,
               "arena-ring": _arena_ring_rules, "page-directory": _page_directory_rules,
               "block-table": _block_table_rules}
