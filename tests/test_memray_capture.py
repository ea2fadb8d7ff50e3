"""memray captures read as traces (traces/memray_capture.py).

A small Python program is captured here with ``memray run``; what the trace
holds is checked against memray's own records, walked in the test (an
address -> size map of the system allocator's live blocks), not against the
importer.  A small C library loaded with ctypes makes one call of every
system allocator kind (memray patches a dlopened library's calls), so each
kind is exercised; its sizes are known by hand.
"""

import shutil
import subprocess
import sys
import textwrap

import pytest

from heapscope.cli import main
from heapscope.traces import ALLOC, TraceError, load_trace, sniff_file

try:
    import memray
except ImportError:             # the optional extra is not installed
    memray = None

needs_memray = pytest.mark.skipif(memray is None,
                                  reason="memray is not installed (pip install heapscope[memray])")

SYSTEM_ALLOCS = {"MALLOC", "CALLOC", "REALLOC", "POSIX_MEMALIGN", "ALIGNED_ALLOC", "MEMALIGN",
                 "VALLOC"}

#: one call of each system allocator kind, sizes chosen to be recognised
KINDS_C = r"""
#include <stdlib.h>
#include <malloc.h>
void every_kind(void) {
    void *a = malloc(1001);
    void *b = calloc(3, 1002);                   /* 3006 bytes */
    a = realloc(a, 20003);
    void *c = NULL;
    if (posix_memalign(&c, 64, 1004) != 0) c = NULL;
    void *d = aligned_alloc(64, 5120);
    void *e = memalign(128, 1006);
    void *f = valloc(1007);
    free(b); free(c); free(d); free(e); free(f); free(a);
}
"""
KINDS_SIZES = {1001, 3006, 20003, 1004, 5120, 1006, 1007}

PROGRAM = textwrap.dedent("""
    import ctypes, mmap, sys, threading
    def worker():
        blocks = [bytearray(30_000 + i) for i in range(8)]
        del blocks[:4]
    thread = threading.Thread(target=worker)
    thread.start()
    keep = [bytearray(50_000 + i) for i in range(6)]     # system malloc: past pymalloc's 512
    del keep[::2]
    grown = bytearray()
    for i in range(50):
        grown += bytes(997)                              # reallocs
    small = [str(i) * 3 for i in range(200)]             # pymalloc
    m = mmap.mmap(-1, 1 << 20)
    m.close()
    if len(sys.argv) > 1:
        ctypes.CDLL(sys.argv[1]).every_kind()
    thread.join()
""")


def capture(folder, name, *options, lib=None):
    prog = folder / "prog.py"
    prog.write_text(PROGRAM)
    out = folder / name
    command = [sys.executable, "-m", "memray", "run", "-q", *options, "-o", str(out), str(prog)]
    subprocess.run(command + ([str(lib)] if lib else []), check=True, cwd=folder,
                   capture_output=True, timeout=120)
    return out


@pytest.fixture(scope="module")
def captures(tmp_path_factory):
    if memray is None:
        pytest.skip("memray is not installed (pip install heapscope[memray])")
    folder = tmp_path_factory.mktemp("memray")
    lib = None
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc:
        (folder / "kinds.c").write_text(KINDS_C)
        lib = folder / "kinds.so"
        subprocess.run([cc, "-shared", "-fPIC", "-O0", "-o", str(lib), str(folder / "kinds.c")],
                       check=True, timeout=60)
    return {"plain": capture(folder, "plain.bin", lib=lib),
            # Python's own allocations recorded as pymalloc's, even those it passes to malloc
            "pymalloc": capture(folder, "pymalloc.bin", "--trace-python-allocators"),
            "aggregated": capture(folder, "aggregated.bin", "--aggregate"),
            "has_kinds": lib is not None}


def records_walk(path, kinds, thread=None):
    """memray's records of ``kinds`` (of one thread, if given) walked by hand:
    (allocation sizes, peak live bytes, frees of blocks never seen allocated,
    names seen)."""
    names = {int(k): k.name for k in memray.AllocatorType}
    frees = {"FREE", "PYMALLOC_FREE", "MUNMAP"}
    live, total, peak, sizes, unknown, seen = {}, 0, 0, [], 0, set()
    for record in memray.FileReader(str(path)).get_allocation_records():
        name = names[record.allocator]
        if name not in kinds or not record.address or thread not in (None, record.tid):
            continue
        seen.add(name)
        if name in frees:
            size = live.pop(record.address, None)
            if size is None:
                unknown += 1
            else:
                total -= size
        else:
            total -= live.get(record.address, 0)   # handed out again: its free was missed
            live[record.address] = record.size
            total += record.size
            sizes.append(record.size)
            peak = max(peak, total)
    return sizes, peak, unknown, seen


def trace_allocations(trace):
    return sorted(int(s) for s in trace.sizes[trace.kind == ALLOC])


@needs_memray
def test_a_capture_is_told_by_its_content(captures, tmp_path):
    renamed = tmp_path / "no-extension"
    renamed.write_bytes(captures["plain"].read_bytes())
    assert sniff_file(captures["plain"]) == "memray"          # lz4-compressed, memray's default
    assert sniff_file(renamed) == "memray"


@needs_memray
def test_system_allocator_calls_are_the_trace(captures):
    sizes, peak, _, seen = records_walk(captures["plain"], SYSTEM_ALLOCS | {"FREE"})
    trace = load_trace(str(captures["plain"]))
    assert trace_allocations(trace) == sorted(sizes)
    assert len(sizes) == int((trace.kind == ALLOC).sum())
    assert trace.stats()["max_live_bytes"] == peak
    if captures["has_kinds"]:
        assert SYSTEM_ALLOCS <= seen                       # the capture holds every kind ...
        assert KINDS_SIZES <= set(trace_allocations(trace))   # ... and the trace their blocks


@needs_memray
def test_pymalloc_and_mmap_are_left_out_and_counted_unless_kept(captures):
    from heapscope.traces.memray_capture import import_memray
    names = {int(k): k.name for k in memray.AllocatorType}
    by_kind = {}
    for record in memray.FileReader(str(captures["pymalloc"])).get_allocation_records():
        by_kind[names[record.allocator]] = by_kind.get(names[record.allocator], 0) + 1
    assert by_kind.get("PYMALLOC_MALLOC") and by_kind.get("MMAP")    # the capture has both
    _, counts, pointer_counts = import_memray(captures["pymalloc"])
    assert counts.left_out == {name.lower(): n for name, n in by_kind.items()
                               if name.startswith(("PYMALLOC", "MMAP", "MUNMAP"))}
    _, _, unknown, _ = records_walk(captures["pymalloc"], SYSTEM_ALLOCS | {"FREE"})
    assert pointer_counts.unknown_frees == unknown

    kept = SYSTEM_ALLOCS | {"FREE", "PYMALLOC_MALLOC", "PYMALLOC_CALLOC", "PYMALLOC_REALLOC",
                            "PYMALLOC_FREE", "MMAP", "MUNMAP"}
    sizes, peak, _, _ = records_walk(captures["pymalloc"], kept)
    trace, counts, _ = import_memray(captures["pymalloc"], keep=("pymalloc", "mmap"))
    assert counts.left_out == {}
    assert trace_allocations(trace) == sorted(sizes)
    assert trace.stats()["max_live_bytes"] == peak


@needs_memray
def test_convert_writes_the_trace_and_says_what_it_left_out(captures, tmp_path, capsys):
    out = tmp_path / "capture.rep"
    assert main(["convert", str(captures["pymalloc"]), "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert "pymalloc_malloc records left out (--keep pymalloc keeps them)" in err
    sizes, _, _, _ = records_walk(captures["pymalloc"], SYSTEM_ALLOCS | {"FREE"})
    assert trace_allocations(load_trace(str(out))) == sorted(sizes)
    assert main(["convert", str(captures["pymalloc"]), "-o", str(out), "--keep", "pymalloc"]) == 0
    assert "pymalloc_malloc" not in capsys.readouterr().err


@needs_memray
def test_an_aggregated_capture_is_refused_by_name(captures, capsys):
    with pytest.raises(TraceError, match=r"aggregated memray capture \(memray run --aggregate\)"):
        load_trace(str(captures["aggregated"]))
    assert main(["check", str(captures["aggregated"])]) == 2
    err = capsys.readouterr().err
    assert "aggregated.bin" in err and "--aggregate" in err and "Traceback" not in err


def test_without_memray_the_message_says_how_to_get_it(tmp_path, monkeypatch, capsys):
    fake = tmp_path / "capture.bin"
    fake.write_bytes(b"memray\x00" + bytes(64))       # memray's magic, as a capture starts
    monkeypatch.setitem(sys.modules, "memray", None)   # import memray fails
    assert main(["compare", str(fake)]) == 2
    err = capsys.readouterr().err
    assert "pip install heapscope[memray]" in err and "capture.bin" in err


def test_convert_keep_is_for_memray_captures_only(tmp_path, capsys):
    rep = tmp_path / "t.rep"
    rep.write_text("0\n1\n2\n1\na 0 8\nf 0\n")
    assert main(["convert", str(rep), "-o", str(tmp_path / "u.rep"), "--keep", "mmap"]) == 2
    assert "--keep and --thread apply to memray captures only" in capsys.readouterr().err


@needs_memray
def test_threads_are_merged_in_record_order_or_one_is_kept(captures, tmp_path, capsys):
    from heapscope.traces.memray_capture import import_memray
    records = list(memray.FileReader(str(captures["plain"])).get_allocation_records())
    tids = {r.tid for r in records}
    trace, counts, _ = import_memray(captures["plain"])
    assert counts.threads == tids
    worker, = {r.tid for r in records if "worker" in (r.thread_name or "")}
    sizes, peak, _, _ = records_walk(captures["plain"], SYSTEM_ALLOCS | {"FREE"}, thread=worker)
    # the worker's eight blocks, by hand (bytearray(n) mallocs n + 1 bytes: its
    # trailing NUL), and none of the main thread's
    assert set(range(30_001, 30_009)) <= set(sizes)
    assert not set(range(50_001, 50_007)) & set(sizes)
    merged, _, _, _ = records_walk(captures["plain"], SYSTEM_ALLOCS | {"FREE"})
    assert set(range(30_001, 30_009)) | set(range(50_001, 50_007)) <= set(merged)
    trace, _, _ = import_memray(captures["plain"], thread=worker)
    assert trace_allocations(trace) == sorted(sizes)
    assert trace.stats()["max_live_bytes"] == peak
    out = tmp_path / "worker.rep"
    assert main(["convert", str(captures["plain"]), "-o", str(out), "--thread", str(worker)]) == 0
    assert "records of other threads left out" in capsys.readouterr().err
    assert main(["convert", str(captures["plain"]), "-o", str(out), "--thread", "999"]) == 2
    assert "no thread 999 in this memray capture" in capsys.readouterr().err


@needs_memray
def test_a_long_read_reports_progress_and_can_be_cancelled(captures, monkeypatch):
    from heapscope.traces import ReadCancelled, read_trace_file
    from heapscope.traces import memray_capture
    monkeypatch.setattr(memray_capture, "_CHECK_EVERY", 50)
    size = captures["plain"].stat().st_size
    reports = []
    read_trace_file(captures["plain"], progress=lambda done, total: reports.append((done, total)))
    shares = [done for done, total in reports if total == size]
    records = sum(1 for _ in memray.FileReader(str(captures["plain"])).get_allocation_records())
    assert len(shares) >= records // 50                # one report per 50 records, at least
    assert shares == sorted(shares) and 0 < shares[-1] <= size
    with pytest.raises(ReadCancelled):
        read_trace_file(captures["plain"], cancel=lambda: True)


@needs_memray
@pytest.mark.parametrize("keep", [64, 3000])
def test_a_damaged_capture_exits_2_naming_it(captures, tmp_path, capsys, keep):
    damaged = tmp_path / "damaged.bin"
    damaged.write_bytes(captures["plain"].read_bytes()[:keep])     # memray's magic, then cut
    assert main(["check", str(damaged)]) == 2
    err = capsys.readouterr().err
    assert "damaged.bin" in err and "memray cannot read this capture" in err
    assert "Traceback" not in err
