/* heapscope's allocation recorder: a library loaded with LD_PRELOAD.
 *
 * It interposes malloc, calloc, realloc, reallocarray, free, memalign,
 * posix_memalign, aligned_alloc, valloc and pvalloc, finds the C library's own
 * functions with dlsym(RTLD_NEXT, ...) -- the run-time library interpositioning
 * that seed 004 (Coppa & Demetrescu, "Adaptive allocators", MallocLabTools)
 * used to record the traces of real programs -- and appends one fixed-size
 * binary record per call to $HEAPSCOPE_RECORD_DIR/<pid>.hsr.  The Python side
 * (heapscope.traces.record) turns those files into .rep traces.
 *
 * The pitfalls and what is done about each:
 *  - dlsym itself may call calloc (for its error buffer) before we know where
 *    the real calloc is: the loop seed 004 warns about.  While the symbols are
 *    being looked up, allocations come from a static bump buffer; frees of its
 *    blocks are ignored and never reach the real free.
 *  - Threads: each call and its record happen under one mutex, so the order of
 *    the records is the order in which the allocator handed out and took back
 *    addresses (a free in one thread and the malloc that reuses the address in
 *    another cannot be recorded the other way round), and each record is one
 *    write() of 32 bytes to a file opened with O_APPEND: none is torn.
 *  - Re-entry in one thread (a signal handler calling malloc while we hold the
 *    mutex) would deadlock; a thread-local flag passes such calls straight to
 *    the C library, unrecorded.  The flag uses the initial-exec TLS model,
 *    because the general model may call malloc on first access.
 *  - fork: pthread_atfork handlers hold the mutex across fork(), and the child
 *    opens its own file and writes a FORK record naming its parent and the
 *    number of records the parent had written: the child's heap is the
 *    parent's heap at that point.
 *  - exec: the file descriptor is close-on-exec; the new program loads this
 *    library again (LD_PRELOAD is inherited) and appends a START record to the
 *    same pid's file: a new program, a new heap.
 *  - errno is kept as the C library left it: our write() must not change what
 *    a caller of malloc sees.
 *  - The program may close our descriptor (closefrom, close_fds): it is moved
 *    to a high number, where open() rarely lands, and reopened on EBADF.
 *  - A recording past heapscope's limits (HEAPSCOPE_RECORD_MAX_OPS operations
 *    in one program's trace, counting the blocks still live that the trace
 *    will free at the end; HEAPSCOPE_RECORD_MAX_BYTES bytes in one file) stops
 *    there, while the program goes on: an 'L' record ends the file, and a
 *    file <pid>-<records>.limit holding "<reason> <program name>" tells
 *    heapscope at once, which says so while the program still runs.
 *
 * Record layout (native byte order, 32 bytes):
 *   kind (u32), extra (u32), a, b, c (u64)
 *   'S' start of a program in this process: a = pid, b = parent pid, extra = version
 *   'N' the program's short name, 24 bytes in a, b, c
 *   'K' first record of a forked child: a = pid, b = parent pid,
 *       c = records the parent had written at the fork
 *   'M' malloc: a = pointer, c = size          'C' calloc: a = pointer, b = nmemb, c = bytes
 *   'R' realloc: a = new pointer, b = old pointer (not 0), c = size
 *   'A' aligned (memalign and kin): a = pointer, b = alignment, c = size
 *   'F' free: a = pointer (not 0)
 *   'L' the recording stops here, at a limit: extra = 1 (operations) or 2 (bytes),
 *       a = operations of the program, b = blocks it holds, c = records written
 * realloc(NULL, n) is recorded as 'M'; realloc(p, 0) returning NULL as 'F';
 * calls that fail (NULL) are not recorded.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#define FORMAT_VERSION 1u
#define HIGH_FD 900

struct record {
    uint32_t kind;
    uint32_t extra;
    union {
        uint64_t v[3];
        char name[24];
    } u;
};

_Static_assert(sizeof(struct record) == 32, "a record is 32 bytes");

extern char *program_invocation_short_name;

static void *(*real_malloc)(size_t);
static void *(*real_calloc)(size_t, size_t);
static void *(*real_realloc)(void *, size_t);
static void (*real_free)(void *);
static void *(*real_memalign)(size_t, size_t);
static int (*real_posix_memalign)(void **, size_t, size_t);
static void *(*real_aligned_alloc)(size_t, size_t);
static void *(*real_valloc)(size_t);
static void *(*real_pvalloc)(size_t);

/* 0: symbols not looked up yet, 1: looking them up, 2: ready */
static int state;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static __thread int in_hook __attribute__((tls_model("initial-exec")));

static int fd = -1;            /* our file, -1 when not recording */
static uint64_t records;       /* records in our file so far */
static char path[4096];
static size_t dir_len;         /* path[:dir_len] is the folder */

/* The limits (0: none), and what counts against them.  A forked child keeps
 * its parent's counts (its trace starts with the parent's); exec starts a new
 * program at zero (a new process image). */
static uint64_t max_ops, max_bytes;
static uint64_t ops;           /* operation records of this program */
static uint64_t live;          /* blocks it holds (about: frees of unseen blocks count too) */

/* ---- the bootstrap buffer, used while dlsym runs ---------------------- */

static char boot_buf[64 * 1024] __attribute__((aligned(64)));
static size_t boot_used;

static int is_boot(const void *p) {
    return (const char *)p >= boot_buf && (const char *)p < boot_buf + sizeof boot_buf;
}

static void *boot_alloc(size_t size, size_t align) {
    /* a 16-byte header in front of each block holds its size, for realloc */
    if (align < 16) align = 16;
    if (size > sizeof boot_buf || align > 4096) return NULL;
    size_t start = __atomic_load_n(&boot_used, __ATOMIC_RELAXED), payload, end;
    do {
        payload = (start + 16 + align - 1) & ~(align - 1);
        end = payload + ((size + 15) & ~(size_t)15);
        if (end > sizeof boot_buf) { errno = ENOMEM; return NULL; }
    } while (!__atomic_compare_exchange_n(&boot_used, &start, end, 0,
                                          __ATOMIC_RELAXED, __ATOMIC_RELAXED));
    memcpy(boot_buf + payload - sizeof(size_t), &size, sizeof(size_t));
    return boot_buf + payload;       /* static memory: already zero */
}

static size_t boot_size(const void *p) {
    size_t size;
    memcpy(&size, (const char *)p - sizeof(size_t), sizeof(size_t));
    return size;
}

/* ---- the trace file ----------------------------------------------------- */

static char *put_uint(char *out, unsigned long v) {
    char digits[24];
    int n = 0;
    do { digits[n++] = (char)('0' + v % 10); v /= 10; } while (v);
    while (n) *out++ = digits[--n];
    return out;
}

static void emit(uint32_t kind, uint32_t extra, uint64_t a, uint64_t b, uint64_t c);

/* Open <dir>/<pid>.hsr for appending; call with the mutex held or before
 * any other thread can run. */
static void open_file(void) {
    const char *dir = getenv("HEAPSCOPE_RECORD_DIR");
    fd = -1;
    if (!dir || !*dir || strlen(dir) > sizeof path - 32) return;
    char *p = stpcpy(path, dir);
    *p++ = '/';
    dir_len = (size_t)(p - path);
    p = put_uint(p, (unsigned long)getpid());
    strcpy(p, ".hsr");
    int f = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (f < 0) return;
    struct rlimit rl;
    int high = HIGH_FD;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY
        && rl.rlim_cur <= (rlim_t)high)
        high = (int)rl.rlim_cur / 2;
    if (f < high) {
        int moved = fcntl(f, F_DUPFD_CLOEXEC, high);
        if (moved >= 0) { close(f); f = moved; }
    }
    struct stat st;
    records = fstat(f, &st) == 0 ? (uint64_t)st.st_size / sizeof(struct record) : 0;
    fd = f;
}

static void emit(uint32_t kind, uint32_t extra, uint64_t a, uint64_t b, uint64_t c) {
    struct record r;
    r.kind = kind;
    r.extra = extra;
    r.u.v[0] = a;
    r.u.v[1] = b;
    r.u.v[2] = c;
    for (int attempt = 0; fd >= 0 && attempt < 3; attempt++) {
        ssize_t n = write(fd, &r, sizeof r);
        if (n == (ssize_t)sizeof r) { records++; return; }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && errno == EBADF) {      /* the program closed it: reopen */
            int f = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
            if (f < 0) break;
            fd = f;
            continue;
        }
        break;                              /* disk full, or a short write */
    }
    fd = -1;                                /* stop: the reader sees where */
}

static uint64_t env_number(const char *name) {
    const char *v = getenv(name);
    uint64_t n = 0;
    if (!v) return 0;
    for (; *v >= '0' && *v <= '9'; v++) n = n * 10 + (uint64_t)(*v - '0');
    return n;
}

/* At a limit: say where the recording stops, tell heapscope, stop. */
static void stop_recording(uint32_t reason) {
    emit('L', reason, ops, live, records);
    char marker[sizeof path + 48];
    memcpy(marker, path, dir_len);
    char *p = put_uint(marker + dir_len, (unsigned long)getpid());
    *p++ = '-';
    p = put_uint(p, (unsigned long)records);
    strcpy(p, ".limit");
    int m = open(marker, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (m >= 0) {
        /* "<reason> <name>": which limit, and the program's short name */
        char text[64];
        const char *name = program_invocation_short_name ? program_invocation_short_name : "";
        text[0] = (char)('0' + reason);
        text[1] = ' ';
        size_t n = strnlen(name, sizeof text - 3);
        memcpy(text + 2, name, n);
        if (write(m, text, n + 2) < 0) { /* heapscope still sees the file */ }
        close(m);
    }
    if (fd >= 0) close(fd);
    fd = -1;
}

/* One operation of the program: its record, then the limits. */
static void emit_op(uint32_t kind, uint64_t a, uint64_t b, uint64_t c) {
    emit(kind, 0, a, b, c);
    ops++;
    if (kind == 'M' || kind == 'C' || kind == 'A') live++;
    else if (kind == 'F' && live) live--;
    if (fd < 0) return;
    if (max_ops && ops + live >= max_ops)
        stop_recording(1);
    else if (max_bytes && (records + 2) * sizeof(struct record) > max_bytes)
        stop_recording(2);
}

static void emit_name(void) {
    struct record r;
    memset(&r, 0, sizeof r);
    if (program_invocation_short_name)
        memcpy(r.u.name, program_invocation_short_name,
               strnlen(program_invocation_short_name, sizeof r.u.name));
    emit('N', 0, r.u.v[0], r.u.v[1], r.u.v[2]);
}

/* ---- fork --------------------------------------------------------------- */

static void before_fork(void) { pthread_mutex_lock(&lock); }
static void after_fork_parent(void) { pthread_mutex_unlock(&lock); }

static void after_fork_child(void) {
    uint64_t parent_records = records;
    int parent_fd = fd;
    pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
    lock = fresh;
    if (parent_fd < 0) return;          /* the parent was not recording */
    close(parent_fd);
    open_file();
    emit('K', FORMAT_VERSION, (uint64_t)getpid(), (uint64_t)getppid(), parent_records);
}

/* ---- start -------------------------------------------------------------- */

#ifdef HEAPSCOPE_TEST_BOOTSTRAP
/* For the tests: allocate in the middle of the symbol lookup, as dlsym does on
 * some C libraries, and hand the block back to the recorder at exit. */
static void *test_boot_block, *test_boot_block2;
__attribute__((destructor)) static void test_boot_end(void)
{
    void *p = realloc(test_boot_block, 7777);  /* to the real heap: a new block */
    free(p);
    free(test_boot_block2);                     /* the C library must not see it */
}
#endif

static void resolve(void) {
    int expected = 0;
    if (!__atomic_compare_exchange_n(&state, &expected, 1, 0, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE))
        return;
    real_malloc = dlsym(RTLD_NEXT, "malloc");
    real_calloc = dlsym(RTLD_NEXT, "calloc");
    real_realloc = dlsym(RTLD_NEXT, "realloc");
    real_free = dlsym(RTLD_NEXT, "free");
    real_memalign = dlsym(RTLD_NEXT, "memalign");
    real_posix_memalign = dlsym(RTLD_NEXT, "posix_memalign");
    real_aligned_alloc = dlsym(RTLD_NEXT, "aligned_alloc");
    real_valloc = dlsym(RTLD_NEXT, "valloc");
    real_pvalloc = dlsym(RTLD_NEXT, "pvalloc");
#ifdef HEAPSCOPE_TEST_BOOTSTRAP
    test_boot_block = calloc(3, 1000);
    test_boot_block2 = malloc(24);
    free(malloc(10));                           /* a bootstrap block freed at once */
#endif
    if (!real_malloc || !real_calloc || !real_realloc || !real_free) {
        static const char msg[] = "heapscope recorder: dlsym cannot find malloc; not recording\n";
        if (write(2, msg, sizeof msg - 1) < 0) { /* nothing more to say */ }
        _exit(127);
    }
    max_ops = env_number("HEAPSCOPE_RECORD_MAX_OPS");
    max_bytes = env_number("HEAPSCOPE_RECORD_MAX_BYTES");
    open_file();
    if (fd >= 0) {
        emit('S', FORMAT_VERSION, (uint64_t)getpid(), (uint64_t)getppid(), 0);
        emit_name();
    }
    __atomic_store_n(&state, 2, __ATOMIC_RELEASE);
    pthread_atfork(before_fork, after_fork_parent, after_fork_child);
}

/* Every program that loads the library leaves a file, even one that never
 * allocates: then "no file" means the library was not loaded at all. */
__attribute__((constructor)) static void start_recording(void)
{
    if (__atomic_load_n(&state, __ATOMIC_ACQUIRE) == 0)
        resolve();
}

/* Returns 1 if the caller should record (the mutex is then held), 0 if it
 * should call the C library directly, -1 if the symbols are being looked up
 * (use the bootstrap buffer). */
static int enter(void) {
    int s = __atomic_load_n(&state, __ATOMIC_ACQUIRE);
    if (s != 2) {
        if (s == 0) resolve();
        if (__atomic_load_n(&state, __ATOMIC_ACQUIRE) != 2) return -1;
    }
    if (in_hook || fd < 0) return 0;
    in_hook = 1;
    pthread_mutex_lock(&lock);
    return 1;
}

static void leave(int saved_errno) {
    pthread_mutex_unlock(&lock);
    in_hook = 0;
    errno = saved_errno;
}

#define U(x) ((uint64_t)(uintptr_t)(x))

/* ---- the interposed functions ------------------------------------------ */

void *malloc(size_t size) {
    int how = enter();
    if (how < 0) return boot_alloc(size, 16);
    if (how == 0) return real_malloc(size);
    void *p = real_malloc(size);
    int e = errno;
    if (p) emit_op('M', U(p), 0, size);
    leave(e);
    return p;
}

void *calloc(size_t nmemb, size_t size) {
    int how = enter();
    if (how < 0) {
        if (size && nmemb > (size_t)-1 / size) return NULL;
        return boot_alloc(nmemb * size, 16);
    }
    if (how == 0) return real_calloc(nmemb, size);
    void *p = real_calloc(nmemb, size);
    int e = errno;
    if (p) emit_op('C', U(p), nmemb, (uint64_t)nmemb * size);
    leave(e);
    return p;
}

void free(void *ptr) {
    if (!ptr || is_boot(ptr)) return;
    int how = enter();
    if (how <= 0) {
        if (how == 0) real_free(ptr);
        return;
    }
    int e = errno;
    emit_op('F', U(ptr), 0, 0);
    real_free(ptr);
    leave(e);
}

void *realloc(void *ptr, size_t size) {
    if (ptr && is_boot(ptr)) {
        /* a bootstrap block moves to the real heap: a new block there */
        void *p = malloc(size);
        if (p) {
            size_t old = boot_size(ptr);
            memcpy(p, ptr, old < size ? old : size);
        }
        return p;
    }
    int how = enter();
    if (how < 0) return boot_alloc(size, 16);
    if (how == 0) return real_realloc(ptr, size);
    void *p = real_realloc(ptr, size);
    int e = errno;
    if (!ptr) {
        if (p) emit_op('M', U(p), 0, size);
    } else if (p) {
        emit_op('R', U(p), U(ptr), size);
    } else if (size == 0) {
        emit_op('F', U(ptr), 0, 0);        /* glibc: realloc(p, 0) frees p */
    }
    leave(e);
    return p;
}

void *reallocarray(void *ptr, size_t nmemb, size_t size) {
    /* glibc's own reallocarray calls its realloc without the PLT: we would
     * not see the block move, so it goes through our realloc */
    if (size && nmemb > (size_t)-1 / size) {
        errno = ENOMEM;
        return NULL;
    }
    return realloc(ptr, nmemb * size);
}

static void *aligned(void *(*fn)(size_t, size_t), size_t align, size_t size) {
    int how = enter();
    if (how < 0) return boot_alloc(size, align);
    if (how == 0) return fn ? fn(align, size) : NULL;
    void *p = fn ? fn(align, size) : NULL;
    int e = errno;
    if (p) emit_op('A', U(p), align, size);
    leave(e);
    return p;
}

void *memalign(size_t align, size_t size) {
    return aligned(real_memalign, align, size);
}

void *aligned_alloc(size_t align, size_t size) {
    return aligned(real_aligned_alloc, align, size);
}

int posix_memalign(void **out, size_t align, size_t size) {
    int how = enter();
    if (how < 0) {
        void *p = boot_alloc(size, align);
        if (!p) return ENOMEM;
        *out = p;
        return 0;
    }
    if (how == 0) return real_posix_memalign(out, align, size);
    int e = errno;
    int rc = real_posix_memalign(out, align, size);
    if (rc == 0) emit_op('A', U(*out), align, size);
    leave(e);
    return rc;
}

void *valloc(size_t size) {
    int how = enter();
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    if (how < 0) return boot_alloc(size, page);
    if (how == 0) return real_valloc(size);
    void *p = real_valloc(size);
    int e = errno;
    if (p) emit_op('A', U(p), page, size);
    leave(e);
    return p;
}

void *pvalloc(size_t size) {
    int how = enter();
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    if (how < 0) return boot_alloc(size, page);
    if (how == 0) return real_pvalloc(size);
    void *p = real_pvalloc(size);
    int e = errno;
    if (p) emit_op('A', U(p), page, size);
    leave(e);
    return p;
}
