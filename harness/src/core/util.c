#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE /* madvise */
#include "util.h"
#include "size.h"

#include <csv.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int sb_errf(struct sb_err *e, const char *fmt, ...)
{
    if (e) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(e->msg, sizeof e->msg, fmt, ap);
        va_end(ap);
    }
    return -1;
}

static void *oom(size_t n)
{
    fprintf(stderr, "schedbench: out of memory allocating %zu bytes\n", n);
    abort();
}

void *sb_xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    return p ? p : oom(n);
}

void *sb_xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    return p ? p : oom(n * size);
}

void *sb_xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    return q ? q : oom(n);
}

/* Fresh memory on these VMs is slow to touch a page at a time: a cold load of
 * 10^6 nodes took 51,700 faults and 1.27 s, against 0.47 s with its memory
 * already touched.  One madvise that faults a whole block in
 * (MADV_POPULATE_WRITE, Linux 5.14) costs about a quarter as much per page.
 * Huge pages (MADV_HUGEPAGE) cost less still, but most policies then ran
 * 5-20% slower on memory held in them (bench_scale and `schedbench run`
 * alike), and the advice stays with the heap's pages for whatever reuses
 * them; populating leaves nothing behind.  It is a hint: on a kernel without
 * it, only the time changes. */
void sb_prefault(void *p, size_t n)
{
#ifdef MADV_POPULATE_WRITE
    if (p && n >= ((size_t)1 << 18)) { /* below, a call costs more than it saves */
        uintptr_t lo = (uintptr_t)p & ~(uintptr_t)4095;
        uintptr_t hi = ((uintptr_t)p + n + 4095) & ~(uintptr_t)4095;
        (void)madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE);
    }
#else
    (void)p, (void)n;
#endif
}

char *sb_xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;
    return memcpy(sb_xmalloc(n), s, n);
}

/* ---- reading input files ------------------------------------------------ */

static uint64_t max_input_bytes = SB_MAX_INPUT_BYTES_DEFAULT;

/* the digest of what this thread reads, while one is started (util.h) */
static _Thread_local uint64_t *digest_at;

void sb_digest_start(uint64_t *h) { digest_at = h; }

void sb_digest_add(const void *p, size_t n)
{
    if (digest_at)
        *digest_at = sb_hash_bytes(*digest_at, p, n);
}

/* Eight bytes at a time (a multiply and a shift each), then the tail and the
 * length: an edit anywhere changes the result; ~8x faster than FNV-1a's byte
 * at a time, which would add a tenth of a second to a 100 MB load. */
uint64_t sb_hash_bytes(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    const uint64_t k = 0x9e3779b97f4a7c15ull; /* 2^64 / golden ratio */
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, b + i, 8);
        h = (h ^ w) * k;
        h ^= h >> 32;
    }
    for (; i < n; i++)
        h = (h ^ b[i]) * 0x100000001b3ull;
    h = (h ^ (uint64_t)n) * k;
    return h ^ (h >> 29);
}

uint64_t sb_max_input_bytes(void) { return max_input_bytes; }

int sb_parse_bytes(const char *s, uint64_t *out, const char **why)
{
    uint64_t v;
    if (sb_size_parse(s, &v, why))
        return -1;
    if (v < 1 || v > ((uint64_t)1 << 62))
        return *why = v ? "above 2^62 bytes" : "zero bytes", -1;
    *out = v;
    return 0;
}

int sb_input_limit_init(int *argc, char **argv, struct sb_err *e)
{
    const char *env = getenv("SCHEDBENCH_MAX_INPUT_BYTES"), *why;
    if (env && *env && sb_parse_bytes(env, &max_input_bytes, &why))
        return sb_errf(e, "SCHEDBENCH_MAX_INPUT_BYTES='%s' is not a size in 1 B .. 2^62 "
                          "bytes (bytes, or with a unit: 512MiB, 2GB): %s", env, why);
    static const char flag[] = "--max-input-bytes";
    int out = 0;
    for (int i = 0; i < *argc; i++) {
        const char *a = argv[i], *v = NULL;
        if (!strcmp(a, flag)) {
            if (i + 1 >= *argc)
                return sb_errf(e, "%s needs a size in bytes", flag);
            v = argv[++i];
        } else if (!strncmp(a, flag, sizeof flag - 1) && a[sizeof flag - 1] == '=') {
            v = a + sizeof flag;
        } else {
            argv[out++] = argv[i];
            continue;
        }
        if (sb_parse_bytes(v, &max_input_bytes, &why))
            return sb_errf(e, "%s '%s' is not a size in 1 B .. 2^62 bytes (bytes, or with a "
                              "unit: 512MiB, 2GB): %s", flag, v, why);
    }
    argv[out] = NULL;
    *argc = out;
    return 0;
}

static const char *file_type(mode_t m)
{
    return S_ISDIR(m) ? "a folder" : S_ISFIFO(m) ? "a FIFO" : S_ISCHR(m) ? "a character device"
         : S_ISBLK(m) ? "a block device" : S_ISSOCK(m) ? "a socket" : "not a regular file";
}

/* An fd of path opened without blocking, once fstat shows a regular file no
 * larger than max_bytes; -1 with errno and a message otherwise.  Checking
 * after open (not stat before it) leaves no window to swap the file. */
static int open_input(const char *path, uint64_t max_bytes, struct stat *st, struct sb_err *e)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        int err = errno;
        sb_errf(e, "%s: cannot open: %s", path, strerror(err));
        errno = err;
        return -1;
    }
    if (fstat(fd, st) != 0) {
        int err = errno;
        sb_errf(e, "%s: cannot stat: %s", path, strerror(err));
        close(fd);
        errno = err;
        return -1;
    }
    if (!S_ISREG(st->st_mode)) {
        sb_errf(e, "%s: is %s, not a regular file", path, file_type(st->st_mode));
        close(fd);
        errno = S_ISDIR(st->st_mode) ? EISDIR : EINVAL;
        return -1;
    }
    if ((uint64_t)st->st_size > max_bytes) {
        sb_errf(e, "%s: %llu bytes, above the input limit of %llu bytes "
                   "(--max-input-bytes or SCHEDBENCH_MAX_INPUT_BYTES raise it)",
                path, (unsigned long long)st->st_size, (unsigned long long)max_bytes);
        close(fd);
        errno = EFBIG;
        return -1;
    }
    /* a regular file never blocks; clear the flag so reads behave plainly */
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0)
        fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    return fd;
}

int sb_input_check(const char *path, struct sb_err *e)
{
    struct stat st;
    int fd = open_input(path, max_input_bytes, &st, e);
    if (fd < 0)
        return -1;
    close(fd);
    if (digest_at) { /* the library reads it: so must the digest */
        size_t n;
        free(sb_read_file_limited(path, max_input_bytes, &n, NULL));
    }
    return 0;
}

char *sb_read_file_limited(const char *path, uint64_t max_bytes, size_t *n, struct sb_err *e)
{
    struct stat st;
    memset(&st, 0, sizeof st);
    int fd, is_stdin = !strcmp(path, "-");
    if (max_bytes > SIZE_MAX - 2)
        max_bytes = SIZE_MAX - 2;
    if (is_stdin)
        fd = STDIN_FILENO;
    else if ((fd = open_input(path, max_bytes, &st, e)) < 0)
        return NULL;
    /* the size fstat gave, plus one byte to see a file that grew since */
    size_t cap = is_stdin ? 1 << 16 : (size_t)st.st_size + 1, len = 0;
    if (cap > max_bytes + 1) /* never read more than one byte past the limit */
        cap = (size_t)max_bytes + 1;
    char *buf = sb_xmalloc(cap + 1);
    sb_prefault(buf, cap + 1);
    for (;;) {
        if (len == cap) {
            if (cap > max_bytes) { /* read max_bytes + 1: too much */
                sb_errf(e, "%s: more than the input limit of %llu bytes "
                           "(--max-input-bytes or SCHEDBENCH_MAX_INPUT_BYTES raise it)",
                        path, (unsigned long long)max_bytes);
                free(buf);
                if (!is_stdin)
                    close(fd);
                errno = EFBIG;
                return NULL;
            }
            cap = cap > max_bytes / 2 ? (size_t)max_bytes + 1 : cap * 2;
            buf = sb_xrealloc(buf, cap + 1);
        }
        ssize_t got = read(fd, buf + len, cap - len);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            int err = errno;
            sb_errf(e, "%s: read error: %s", path, strerror(err));
            free(buf);
            if (!is_stdin)
                close(fd);
            errno = err;
            return NULL;
        }
        if (got == 0)
            break;
        len += (size_t)got;
    }
    if (!is_stdin)
        close(fd);
    buf[len] = 0;
    *n = len;
    if (digest_at)
        *digest_at = sb_hash_bytes(*digest_at, buf, len);
    return buf;
}

char *sb_read_file(const char *path, size_t *n)
{
    return sb_read_file_limited(path, max_input_bytes, n, NULL);
}

int sb_check_nesting(const char *path, const char *buf, size_t n, int json,
                     unsigned max_depth, struct sb_err *e)
{
    unsigned depth = 0;
    size_t line = 1, col = 1;
    for (size_t i = 0; i < n; i++, col++) {
        char c = buf[i];
        if (c == '\n') {
            line++;
            col = 0;
        } else if (json && c == '"') { /* a JSON string: skip to its closing quote */
            for (i++, col++; i < n && buf[i] != '"' && buf[i] != '\n'; i++, col++)
                if (buf[i] == '\\' && i + 1 < n && buf[i + 1] != '\n')
                    i++, col++;
            if (i < n && buf[i] == '\n')
                i--, col--; /* an unterminated string: the parser names it */
        } else if (c == '[' || c == '{') {
            if (++depth > max_depth)
                return sb_errf(e, "%s:%zu:%zu: '%c' nests deeper than %u levels of [ and {",
                               path, line, col, c, max_depth);
        } else if ((c == ']' || c == '}') && depth) {
            depth--;
        }
    }
    return 0;
}

int sb_mkdirs(const char *path, struct sb_err *e)
{
    struct stat st;
    if (!*path) /* there is no folder to make: "" is no name */
        return sb_errf(e, "'': an empty folder name");
    char *buf = sb_xstrdup(path);
    int rc = 0;
    for (char *p = buf + 1;; p++) {
        int end = *p == 0;
        if (*p == '/' || end) {
            *p = 0;
            if (mkdir(buf, 0777) != 0 && errno != EEXIST) {
                rc = sb_errf(e, "%s: cannot create folder: %s", buf, strerror(errno));
                break;
            }
            if (stat(buf, &st) != 0 || !S_ISDIR(st.st_mode)) {
                rc = sb_errf(e, "%s: exists and is not a folder", buf);
                break;
            }
            if (end)
                break;
            *p = '/';
        }
    }
    free(buf);
    return rc;
}

/* ---- writing output files ------------------------------------------------ */

/* The folder of path ("." for a bare name), in a new allocation. */
static char *folder_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return sb_xstrdup(".");
    if (slash == path)
        return sb_xstrdup("/");
    return sb_strf("%.*s", (int)(slash - path), path);
}

/* What lstat found at path, for a refusal; NULL for a regular file. */
static const char *not_regular(const struct stat *st)
{
    if (S_ISREG(st->st_mode))
        return NULL;
    return S_ISLNK(st->st_mode) ? "a symbolic link" : file_type(st->st_mode);
}

int sb_out_check(const char *path, struct sb_err *e)
{
    struct stat st;
    if (!strcmp(path, "-"))
        return 0;
    if (!*path)
        return sb_errf(e, "'': an empty file name");
    if (lstat(path, &st) == 0) {
        const char *what = not_regular(&st);
        if (what)
            return sb_errf(e, "%s: is %s: only a regular file is replaced (name the file "
                              "itself, or '-' for standard output)", path, what);
        return 0;
    }
    if (errno != ENOENT)
        return sb_errf(e, "%s: cannot check: %s", path, strerror(errno));
    char *dir = folder_of(path);
    int rc = 0;
    if (stat(dir, &st) != 0)
        rc = sb_errf(e, "%s: cannot create: folder '%s' %s", path, dir,
                     errno == ENOENT ? "does not exist" : strerror(errno));
    else if (!S_ISDIR(st.st_mode))
        rc = sb_errf(e, "%s: cannot create: '%s' is not a folder", path, dir);
    else if (access(dir, W_OK | X_OK) != 0) /* a read-only folder or file system */
        rc = sb_errf(e, "%s: cannot create: folder '%s': %s", path, dir, strerror(errno));
    free(dir);
    return rc;
}

int sb_atomic_open(struct sb_atomic *a, const char *path, struct sb_err *e)
{
    memset(a, 0, sizeof *a);
    if (sb_out_check(path, e))
        return -1;
    if (!strcmp(path, "-")) {
        a->f = stdout;
        a->path = sb_xstrdup(path);
        return 0;
    }
    a->tmp = sb_strf("%s.tmp.%ld", path, (long)getpid());
    /* the temporary is ours by name: whatever a dead process of the same pid
     * left there goes, and a new file is made (never written through a
     * symlink or into a FIFO planted at that name) */
    unlink(a->tmp);
    int fd = open(a->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    a->f = fd >= 0 ? fdopen(fd, "wb") : NULL;
    if (!a->f) {
        sb_errf(e, "%s: cannot create: %s", path, strerror(errno));
        if (fd >= 0) {
            close(fd);
            unlink(a->tmp);
        }
        free(a->tmp);
        a->tmp = NULL;
        return -1;
    }
    a->path = sb_xstrdup(path);
    return 0;
}

static void atomic_release(struct sb_atomic *a)
{
    free(a->path);
    free(a->tmp);
    a->f = NULL;
    a->path = a->tmp = NULL;
}

int sb_atomic_commit(struct sb_atomic *a, struct sb_err *e)
{
    if (!a->tmp) { /* standard output */
        int rc = sb_stdout_check(e);
        atomic_release(a);
        return rc;
    }
    /* a write that failed earlier left only the error flag: no reason */
    int bad = ferror(a->f), err = 0;
    if (fflush(a->f) != 0)
        bad = 1, err = errno;
    if (fclose(a->f) != 0 && !err)
        bad = 1, err = errno;
    if (bad) {
        sb_errf(e, "%s: write failed%s%s", a->path, err ? ": " : "", err ? strerror(err) : "");
        unlink(a->tmp);
        atomic_release(a);
        return -1;
    }
    /* again: the path may have changed while the file was being filled */
    struct stat st;
    const char *what = lstat(a->path, &st) == 0 ? not_regular(&st) : NULL;
    if (what || rename(a->tmp, a->path) != 0) {
        if (what)
            sb_errf(e, "%s: is %s now: only a regular file is replaced", a->path, what);
        else
            sb_errf(e, "%s: cannot rename %s over it: %s", a->path, a->tmp, strerror(errno));
        unlink(a->tmp);
        atomic_release(a);
        return -1;
    }
    atomic_release(a);
    return 0;
}

void sb_atomic_abort(struct sb_atomic *a)
{
    if (!a->f)
        return;
    if (a->tmp) {
        fclose(a->f);
        unlink(a->tmp);
    } else {
        fflush(a->f); /* standard output stays open */
    }
    atomic_release(a);
}

FILE *sb_open_regular(const char *path, int append, struct sb_err *e)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC |
                            (append ? O_APPEND : 0), 0666);
    struct stat st;
    if (fd < 0) {
        int err = errno;
        if (err == ELOOP) /* O_NOFOLLOW met a symlink */
            sb_errf(e, "%s: is a symbolic link: only a regular file is written", path);
        else
            sb_errf(e, "%s: cannot create: %s", path, strerror(err));
        return NULL;
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        sb_errf(e, "%s: is %s: only a regular file is written", path,
                file_type(st.st_mode));
        close(fd);
        return NULL;
    }
    if (!append && ftruncate(fd, 0) != 0) {
        sb_errf(e, "%s: cannot truncate: %s", path, strerror(errno));
        close(fd);
        return NULL;
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0)
        fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    FILE *f = fdopen(fd, append ? "ab" : "wb");
    if (!f) {
        sb_errf(e, "%s: %s", path, strerror(errno));
        close(fd);
    }
    return f;
}

int sb_stdout_check(struct sb_err *e)
{
    int bad = ferror(stdout), err = 0;
    if (fflush(stdout) != 0)
        bad = 1, err = errno;
    if (bad)
        return sb_errf(e, "standard output: write error%s%s", err ? ": " : "",
                       err ? strerror(err) : "");
    return 0;
}

static int needs_quotes(const char *s)
{
    if (!*s)
        return 0;
    /* libcsv trims unquoted leading and trailing blanks when it reads */
    size_t n = strlen(s);
    if (s[0] == ' ' || s[0] == '\t' || s[0] == '#' || s[n - 1] == ' ' || s[n - 1] == '\t')
        return 1;
    return strpbrk(s, ",\"\r\n") != NULL;
}

void sb_csv_field(FILE *f, const char *s, int first)
{
    if (!first)
        fputc(',', f);
    if (needs_quotes(s))
        csv_fwrite(f, s, strlen(s));
    else
        fputs(s, f);
}

void sb_csv_fieldf(FILE *f, int first, const char *fmt, ...)
{
    char buf[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    sb_csv_field(f, buf, first);
}

void sb_csv_end(FILE *f) { fputc('\n', f); }

char *sb_strf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    SB_ASSERT(n >= 0);
    char *s = sb_xmalloc((size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return s;
}

void sb_safe_name(char *dst, size_t n, const char *src)
{
    size_t i = 0;
    for (; src[i] && i + 1 < n; i++) {
        char c = src[i];
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                 (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';
        dst[i] = ok ? c : '_';
    }
    dst[i] = 0;
}

double sb_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}
