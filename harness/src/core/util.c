#define _POSIX_C_SOURCE 200809L
#include "util.h"

#include <csv.h>
#include <errno.h>
#include <string.h>
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

char *sb_xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;
    return memcpy(sb_xmalloc(n), s, n);
}

char *sb_read_file(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, len = 0, got;
    char *buf = sb_xmalloc(cap + 1);
    while ((got = fread(buf + len, 1, cap - len, f)) > 0) {
        len += got;
        if (len == cap)
            buf = sb_xrealloc(buf, (cap *= 2) + 1);
    }
    fclose(f);
    buf[len] = 0;
    *n = len;
    return buf;
}

int sb_mkdirs(const char *path, struct sb_err *e)
{
    char buf[4096];
    struct stat st;
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = buf + 1;; p++) {
        int end = *p == 0;
        if (*p == '/' || end) {
            *p = 0;
            if (mkdir(buf, 0777) != 0 && errno != EEXIST)
                return sb_errf(e, "%s: cannot create folder: %s", buf, strerror(errno));
            if (stat(buf, &st) != 0 || !S_ISDIR(st.st_mode))
                return sb_errf(e, "%s: exists and is not a folder", buf);
            if (end)
                return 0;
            *p = '/';
        }
    }
}

int sb_atomic_open(struct sb_atomic *a, const char *path, struct sb_err *e)
{
    size_t n = strlen(path) + 32;
    a->path = sb_xstrdup(path);
    a->tmp = sb_xmalloc(n);
    snprintf(a->tmp, n, "%s.tmp.%ld", path, (long)getpid());
    a->f = fopen(a->tmp, "wb");
    if (!a->f) {
        /* name the file the user asked for, and its folder when that is what
         * is missing, not the temporary file */
        int err = errno;
        const char *slash = strrchr(path, '/');
        struct stat st;
        char dir[4096];
        snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path) : 1, slash ? path : ".");
        if (err == ENOENT && slash && stat(dir, &st) != 0)
            sb_errf(e, "%s: cannot create: folder '%s' does not exist", path, dir);
        else
            sb_errf(e, "%s: cannot create: %s", path, strerror(err));
        free(a->path);
        free(a->tmp);
        a->path = a->tmp = NULL;
        return -1;
    }
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
    int bad = ferror(a->f);
    if (fclose(a->f) != 0 || bad) {
        sb_errf(e, "%s: write failed: %s", a->tmp, strerror(errno));
        unlink(a->tmp);
        atomic_release(a);
        return -1;
    }
    if (rename(a->tmp, a->path) != 0) {
        sb_errf(e, "%s: cannot rename to %s: %s", a->tmp, a->path,
                strerror(errno));
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
    fclose(a->f);
    unlink(a->tmp);
    atomic_release(a);
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
