/* Small host utilities shared by the core, the CLI and the generators. */
#ifndef SB_UTIL_H
#define SB_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* A broken invariant is a bug: fail loudly with file and line (ggml's GGML_ASSERT). */
#define SB_ASSERT(x)                                                           \
    do {                                                                       \
        if (!(x)) {                                                            \
            fprintf(stderr, "%s:%d: assertion failed: %s\n", __FILE__,         \
                    __LINE__, #x);                                             \
            abort();                                                           \
        }                                                                      \
    } while (0)

/* Error channel for bad input: a status plus a message the user can act on
 * (SQLite's rc + pzErrMsg).  Library code never exits. */
struct sb_err {
    char msg[512];
};
int sb_errf(struct sb_err *e, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Allocation that aborts on exhaustion: running out of memory is not a
 * recoverable input error for a benchmark harness. */
void *sb_xmalloc(size_t n);
void *sb_xcalloc(size_t n, size_t size);
void *sb_xrealloc(void *p, size_t n);
char *sb_xstrdup(const char *s);

/* Atomic output: write to "<path>.tmp.<pid>", then rename over path, so a
 * reader never sees a half-written result file. */
struct sb_atomic {
    FILE *f;
    char *path;
    char *tmp;
};
/* The whole file, NUL-terminated (n excludes the NUL); NULL if unreadable. */
char *sb_read_file(const char *path, size_t *n);
/* mkdir -p: every missing folder of path. */
int sb_mkdirs(const char *path, struct sb_err *e);
int sb_atomic_open(struct sb_atomic *a, const char *path, struct sb_err *e);
int sb_atomic_commit(struct sb_atomic *a, struct sb_err *e); /* closes, renames */
void sb_atomic_abort(struct sb_atomic *a);                    /* closes, unlinks */

/* CSV output through libcsv: a field is quoted (by csv_fwrite) only when it
 * needs to be, so plain values stay readable. */
void sb_csv_field(FILE *f, const char *s, int first);
void sb_csv_fieldf(FILE *f, int first, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void sb_csv_end(FILE *f);

/* A formatted string in a new allocation (file paths built from user input,
 * where a fixed buffer would truncate). */
char *sb_strf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* src reduced to [A-Za-z0-9._-] (others become '_'), for file names built
 * from workload and scheduler names. */
void sb_safe_name(char *dst, size_t n, const char *src);

/* Monotonic wall clock in milliseconds, for the sched_ms timing column only. */
double sb_now_ms(void);

#endif
