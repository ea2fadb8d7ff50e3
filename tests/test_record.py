"""heapscope record: a C program written for the test, recorded through the
LD_PRELOAD library, gives exactly the trace its source says; exit statuses
pass through; no compiler is reported in one clear line.

The recorded program also calls malloc inside the C library (stdio buffers,
thread stacks), and those calls depend on the libc version.  So the program
gives its own blocks sizes in ranges nothing else uses (away from the powers
of two the C library asks for) -- 5000s for the main thread, 6000s for the
second thread, 7000s for the forked child, 9000s for the program the child
execs -- and each expected sequence is compared with the
trace cut down to the blocks born in that range: every op, size and order
within the thread, exactly.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess

import numpy as np
import pytest

from heapscope.cli import main
from heapscope.traces import read_rep
from heapscope.traces.preload import NO_COMPILER, find_compiler, preload_library
from heapscope.traces.record import record
from heapscope.traces.trace import ALLOC, FREE, REALLOC

LOOP = 3000

PROGRAM = r"""
#define _GNU_SOURCE
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define LOOP %(loop)d

static void *worker(void *arg)
{
    (void)arg;
    void *q1 = malloc(6001);
    void *q2 = calloc(2, 3001);                 /* 6002 bytes */
    q1 = realloc(q1, 6003);
    for (int i = 0; i < LOOP; i++) {
        void *p = malloc(6100 + i %% 100);
        free(p);
    }
    free(q2);
    return q1;                                  /* main frees it */
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "exec-child") == 0) {
        void *e = malloc(9001);
        e = realloc(e, 9002);
        free(e);
        void *k = malloc(9003);                 /* live at exit */
        (void)k;
        return 0;
    }
    if (argc > 1 && strcmp(argv[1], "abort") == 0)
        abort();
    void *p1 = malloc(5001);
    void *p2 = calloc(10, 501);                 /* 5010 bytes */
    p1 = realloc(p1, 5002);
    void *p3 = memalign(64, 5003);
    void *p4 = NULL;
    if (posix_memalign(&p4, 128, 5004) != 0)
        return 90;
    void *p5 = aligned_alloc(256, 5120);
    void *p6 = valloc(5005);                    /* live at exit */
    free(p3);
    free(NULL);
    pthread_t t;
    pthread_create(&t, NULL, worker, NULL);
    for (int i = 0; i < LOOP; i++) {
        void *p = malloc(5100 + i %% 100);
        free(p);
    }
    void *q1;
    pthread_join(t, &q1);
    free(q1);
    fflush(stdout);
    pid_t child = fork();
    if (child == 0) {
        void *c1 = malloc(7001);
        free(p2);                               /* inherited from the parent */
        c1 = realloc(c1, 7002);
        free(c1);
        execl("/proc/self/exe", argv[0], "exec-child", (char *)NULL);
        _exit(99);
    }
    int status;
    waitpid(child, &status, 0);
    free(p1);
    free(p2);
    free(p4);
    free(p5);
    printf("parent done, child status %%d\n", WEXITSTATUS(status));
    (void)p6;
    return argc > 1 ? atoi(argv[1]) : 0;
}
""" % {"loop": LOOP}

needs_cc = pytest.mark.skipif(find_compiler() is None,
                              reason="no C compiler on this machine (cc, gcc or clang): "
                                     "the recorder and the test program are C")


@pytest.fixture(scope="session")
def recorder_cache(tmp_path_factory):
    """One build of the recorder library for the whole session."""
    cache = tmp_path_factory.mktemp("xdg-cache")
    old = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(cache)
    try:
        preload_library()
    finally:
        if old is None:
            del os.environ["XDG_CACHE_HOME"]
        else:
            os.environ["XDG_CACHE_HOME"] = old
    return cache


@pytest.fixture
def recorder(recorder_cache, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(recorder_cache))


@pytest.fixture(scope="session")
def program(tmp_path_factory):
    if find_compiler() is None:
        pytest.skip("no C compiler on this machine (cc, gcc or clang)")
    d = tmp_path_factory.mktemp("prog")
    (d / "allocs.c").write_text(PROGRAM)
    exe = d / "allocs"
    subprocess.run(find_compiler() + ["-O0", "-pthread", "-o", str(exe), str(d / "allocs.c")],
                   check=True)
    return str(exe)


# --- projecting a trace on one thread's blocks --------------------------------

MAIN, THREAD, CHILD, EXEC = (5000, 5300), (6000, 6300), (7000, 7100), (9000, 9100)
LETTER = {ALLOC: "a", FREE: "f", REALLOC: "r"}


def project(trace, lo: int, hi: int) -> list[tuple]:
    """The ops on ids whose first op had a size in [lo, hi), ids renamed
    0, 1, 2... in order of first appearance."""
    born: dict[int, int] = {}
    names: dict[int, int] = {}
    out = []
    for kind, ident, size in trace:
        if ident not in born:
            born[ident] = size
        if lo <= born[ident] < hi:
            name = names.setdefault(ident, len(names))
            out.append((LETTER[kind], name) if kind == FREE else (LETTER[kind], name, size))
    return out


def canonical(ops: list[tuple]) -> list[tuple]:
    """Symbolic names (p1, q2...) -> 0, 1, 2 in order of first appearance."""
    names: dict = {}
    return [(op[0], names.setdefault(op[1], len(names))) + tuple(op[2:]) for op in ops]


def loop(base: int) -> list[tuple]:
    ops = []
    for i in range(LOOP):
        ops += [("a", ("loop", base, i), base + i % 100), ("f", ("loop", base, i))]
    return ops


MAIN_BEFORE_FORK = ([("a", "p1", 5001), ("a", "p2", 5010), ("r", "p1", 5002), ("a", "p3", 5003),
                     ("a", "p4", 5004), ("a", "p5", 5120), ("a", "p6", 5005), ("f", "p3")]
                    + loop(5100))
MAIN_AFTER_FORK = [("f", "p1"), ("f", "p2"), ("f", "p4"), ("f", "p5")]
WORKER = ([("a", "q1", 6001), ("a", "q2", 6002), ("r", "q1", 6003)] + loop(6100)
          + [("f", "q2"), ("f", "q1")])
CHILD_OWN = [("a", "c1", 7001), ("r", "c1", 7002), ("f", "c1")]
EXEC_CHILD = [("a", "e", 9001), ("r", "e", 9002), ("f", "e"), ("a", "k", 9003)]


@needs_cc
@pytest.mark.parametrize("keep_live", [False, True])
def test_the_recorded_trace_is_exactly_what_the_program_did(recorder, program, tmp_path,
                                                            keep_live):
    out = tmp_path / "out.rep"
    rec = record([program], out, keep_live=keep_live)
    assert rec.status == 0
    by_role = {}
    for prog in rec.programs:
        role = ("main" if prog.main else "fork" if prog.forked_from is not None
                else "exec" if prog.exec_index else "other")
        assert role not in by_role, f"two programs look like the {role}: {rec.programs}"
        by_role[role] = prog
    assert set(by_role) == {"main", "fork", "exec"}
    main_prog, fork, exe = by_role["main"], by_role["fork"], by_role["exec"]
    assert fork.forked_from == main_prog.pid == fork.parent
    assert exe.pid == fork.pid and exe.exec_index == 1

    # the parent: its own thread and the worker, each in its own order
    end_main = [] if keep_live else [("f", "p6")]
    assert project(main_prog.trace, *MAIN) == canonical(MAIN_BEFORE_FORK + MAIN_AFTER_FORK
                                                             + end_main)
    assert project(main_prog.trace, *THREAD) == canonical(WORKER)
    assert project(main_prog.trace, *CHILD) == project(main_prog.trace, *EXEC) == []

    # the child starts with the parent's heap: the parent's ops up to the fork
    n = fork.inherited
    assert n > 2 * 2 * LOOP
    for a, b in ((fork.trace.kind, main_prog.trace.kind), (fork.trace.ids, main_prog.trace.ids),
                 (fork.trace.sizes, main_prog.trace.sizes)):
        assert np.array_equal(a[:n], b[:n])
    # ... then frees one inherited block, and at exec everything left is freed
    at_exec = [] if keep_live else [("f", "p1"), ("f", "p4"), ("f", "p5"), ("f", "p6")]
    assert project(fork.trace, *MAIN) == canonical(MAIN_BEFORE_FORK + [("f", "p2")] + at_exec)
    assert project(fork.trace, *CHILD) == canonical(CHILD_OWN)
    assert project(fork.trace, *THREAD) == canonical(WORKER)

    # the program exec'd in the child: a new heap, its own trace
    end_exec = [] if keep_live else [("f", "k")]
    assert project(exe.trace, *EXEC) == canonical(EXEC_CHILD + end_exec)
    assert all(project(exe.trace, *r) == [] for r in (MAIN, THREAD, CHILD))

    # what was written: the main trace at OUT, the others beside it, named by pid
    assert read_rep(out).ids.tolist() == main_prog.trace.ids.tolist()
    assert fork.path == tmp_path / f"out.{fork.pid}.allocs.rep"
    assert exe.path == tmp_path / f"out.{exe.pid}.allocs.2.rep"
    assert len(read_rep(exe.path)) == len(exe.trace)


@needs_cc
def test_allocations_made_while_dlsym_runs_come_from_the_bootstrap_buffer(program, tmp_path):
    """The calloc loop of seed 004: dlsym may allocate before the real calloc
    is known.  A build of the recorder that allocates mid-lookup (as such a
    dlsym does), frees one of those blocks and reallocs the other at exit:
    the program runs, nothing of the bootstrap reaches the C library's free
    (which would abort), and the realloc'd block appears as a new one."""
    from heapscope.traces.preload import CFLAGS, LIBS, recorder_source
    from heapscope.traces.record import exit_status, read_recordings, run_recorded
    src = tmp_path / "recorder.c"
    src.write_bytes(recorder_source())
    lib = tmp_path / "recorder-boot.so"
    subprocess.run(find_compiler() + CFLAGS + ["-DHEAPSCOPE_TEST_BOOTSTRAP", "-o", str(lib),
                                               str(src)] + LIBS, check=True)
    raw = tmp_path / "raw"
    raw.mkdir()
    code, pid = run_recorded([program], str(raw), lib, stdin=subprocess.DEVNULL)
    assert exit_status(code) == 0
    main_prog = read_recordings(raw, pid).main
    assert project(main_prog.trace, 7777, 7778) == [("a", 0, 7777), ("f", 0)]
    assert project(main_prog.trace, 3000, 3001) == []      # calloc(3, 1000): never recorded
    assert project(main_prog.trace, *MAIN) == canonical(MAIN_BEFORE_FORK + MAIN_AFTER_FORK
                                                        + [("f", "p6")])


@needs_cc
def test_record_passes_the_output_and_exit_status_through(recorder, program, tmp_path, capfd):
    out = tmp_path / "t.rep"
    code = main(["record", "-o", str(out), "--", program, "5"])
    captured = capfd.readouterr()
    assert code == 5
    assert "parent done, child status 0" in captured.out
    assert "exit status 5" in captured.err
    assert "main pid" in captured.err and str(out) in captured.err
    assert "ops, peak live" in captured.err
    assert "2 processes" in captured.err
    assert out.exists()


@needs_cc
def test_a_program_killed_by_a_signal_gives_128_plus_the_signal(recorder, program, tmp_path, capfd):
    code = main(["record", "-o", str(tmp_path / "t.rep"), "--", program, "abort"])
    capfd.readouterr()
    assert code == 128 + signal.SIGABRT


@needs_cc
def test_a_command_that_does_not_exist_is_an_error(recorder, tmp_path, capsys):
    code = main(["record", "-o", str(tmp_path / "t.rep"), "--", str(tmp_path / "no-such-program")])
    err = capsys.readouterr().err
    assert code == 2
    assert "cannot run" in err and "no-such-program" in err


def test_record_without_a_command_is_an_error(tmp_path, capsys):
    assert main(["record", "-o", str(tmp_path / "t.rep"), "--"]) == 2
    assert "say which program to run" in capsys.readouterr().err


def test_without_a_c_compiler_record_says_what_to_install(tmp_path, monkeypatch, capsys):
    empty = tmp_path / "bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    monkeypatch.delenv("CC", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))   # nothing built yet
    code = main(["record", "-o", str(tmp_path / "t.rep"), "--", "true"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.strip() == f"heapscope: error: {NO_COMPILER}"
    assert "\n" not in err.strip()
    assert "apt install gcc" in err
    assert not (tmp_path / "t.rep").exists()


@needs_cc
def test_the_library_is_built_once_into_the_cache(recorder_cache, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(recorder_cache))
    lib = preload_library()
    assert lib.parent == recorder_cache / "heapscope"
    before = lib.stat().st_mtime_ns
    monkeypatch.setenv("PATH", "/nonexistent")       # no compiler needed any more
    assert preload_library() == lib
    assert lib.stat().st_mtime_ns == before


@needs_cc
def test_a_shell_pipeline_records_every_process(recorder, tmp_path, capfd):
    sh = shutil.which("sh")
    out = tmp_path / "sh.rep"
    code = main(["record", "-o", str(out), "--", sh, "-c", "ls / | sort > /dev/null; exit 3"])
    err = capfd.readouterr().err
    assert code == 3
    assert "main pid" in err
    written = sorted(p.name for p in tmp_path.iterdir())
    assert "sh.rep" in written
    assert any(".ls." in name for name in written), written
    assert any(".sort." in name for name in written), written
