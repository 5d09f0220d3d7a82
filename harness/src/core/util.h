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
/* Faults in a block about to be filled whole, in one call (util.c says why);
 * a hint, for blocks of 256 KiB and more. */
void sb_prefault(void *p, size_t n);
char *sb_xstrdup(const char *s);

/* ---- writing output files ---------------------------------------------------
 * Every file schedbench writes goes through sb_atomic_*: written to
 * "<path>.tmp.<pid>" beside path, then renamed over it, so that a reader never
 * sees half a file.  Only a regular file, or nothing, is ever replaced: a
 * symlink, a folder, a FIFO, a device or a socket at path is refused when the
 * output is opened (before any work) and again just before the rename, so
 * that `-o /dev/null` run as root cannot replace /dev/null.  The path "-" is
 * standard output, written through: nothing temporary, nothing renamed. */
struct sb_atomic {
    FILE *f;
    char *path;
    char *tmp;  /* NULL when writing to standard output */
};
/* ---- reading input files ----------------------------------------------------
 * Every input is read whole, and only when it is a regular file (or "-",
 * standard input) no larger than the input limit: a FIFO, a device, a socket
 * or a folder is refused without blocking (opened O_NONBLOCK, checked with
 * fstat), and /dev/zero behind a symlink cannot grow memory without bound.
 * README "The command line" documents the limit. */

/* Default input limit: 1 GiB, about ten times the largest workload the
 * generators write (a million nodes of CSV is ~100 MB). */
#define SB_MAX_INPUT_BYTES_DEFAULT ((uint64_t)1 << 30)
/* Nesting of '[' and '{' a YAML or JSON document may reach before libyaml or
 * jansson sees it: the deepest real config (a machine's links) nests 4 levels;
 * libyaml's parser slows down quadratically with flow depth (100,000 '[' take
 * 15 s before it refuses them). */
#define SB_MAX_NESTING 64

/* The input limit in bytes: sb_input_limit_init's value, else the default. */
uint64_t sb_max_input_bytes(void);
/* Sets the limit from $SCHEDBENCH_MAX_INPUT_BYTES, then from a
 * "--max-input-bytes N" (or "--max-input-bytes=N") anywhere in argv, which is
 * removed from argv.  N is a size as every size in the tool is written
 * (size.h: bytes, or 512MiB, 2GB, ...).  -1 with a message when a value is
 * malformed. */
int sb_input_limit_init(int *argc, char **argv, struct sb_err *e);
/* A size (size.h) of at least 1 byte and at most 2^62; -1 and *why when not. */
int sb_parse_bytes(const char *s, uint64_t *out, const char **why);

/* The whole file, NUL-terminated (n excludes the NUL), or NULL and a message
 * "path: why" (it does not exist, is a FIFO, is above max_bytes, ...).
 * path "-" reads standard input, cut off at the same limit. */
char *sb_read_file_limited(const char *path, uint64_t max_bytes, size_t *n,
                           struct sb_err *e);
/* sb_read_file_limited at sb_max_input_bytes() without a message: NULL with
 * errno set (ENOENT and the like from open, EISDIR for a folder, EINVAL for
 * another file that is not regular, EFBIG above the limit). */
char *sb_read_file(const char *path, size_t *n);
/* Folds n bytes into the running digest (sb_digest_start) as a read of them
 * would: for a reader that reuses the bytes of a file it has read already. */
void sb_digest_add(const void *p, size_t n);
/* 0 when path is a regular file within the input limit, else -1 and a message
 * (e may be NULL): for readers that hand a path to a library, as the Chakra
 * importer gives its group JSON to jansson. */
int sb_input_check(const char *path, struct sb_err *e);
/* Refuses a YAML or JSON text whose '[' and '{' nest deeper than max_depth,
 * naming the line and column of the first bracket too deep.  JSON strings are
 * skipped (json != 0); in YAML every bracket counts, quoted or not, which can
 * only refuse more. */
int sb_check_nesting(const char *path, const char *buf, size_t n, int json,
                     unsigned max_depth, struct sb_err *e);
/* mkdir -p: every missing folder of path ("" is refused). */
int sb_mkdirs(const char *path, struct sb_err *e);

/* 0 when path may be written by sb_atomic_*: "-", or a path that names a
 * regular file or nothing, in a folder that exists; else -1 and a message
 * naming path and what it is ("is a symbolic link", "is a FIFO", "folder 'x'
 * does not exist"). */
int sb_out_check(const char *path, struct sb_err *e);
/* sb_out_check, then creates the temporary (which proves the folder
 * writable): the checks come before the work that fills the file. */
int sb_atomic_open(struct sb_atomic *a, const char *path, struct sb_err *e);
/* Closes and renames; on failure (a write error, a disk full, path turned
 * into a folder meanwhile) removes the temporary and says why.  For "-",
 * flushes standard output and reports a write error. */
int sb_atomic_commit(struct sb_atomic *a, struct sb_err *e);
void sb_atomic_abort(struct sb_atomic *a); /* closes, unlinks */
/* A regular file opened for writing (appended to, or truncated), never
 * through a symlink and never blocking on a FIFO: NULL and a message when
 * path is anything else.  For files that are not written atomically (run's
 * journal). */
FILE *sb_open_regular(const char *path, int append, struct sb_err *e);
/* Flushes standard output: -1 and a message ("standard output: write
 * error: No space left on device") when anything written to it was lost,
 * so that a command whose output went nowhere does not exit 0. */
int sb_stdout_check(struct sb_err *e);

/* ---- what a computation read ------------------------------------------------
 * A digest of the contents of every input read on this thread while one is
 * started: sb_read_file*, and sb_input_check (which reads the file to add it)
 * fold the bytes of each file into *h.  run keeps the digest of what each
 * workload's load read (its file or rank files, a Chakra group file, the
 * machine its '# machine=' line names) beside every row of its journal, so
 * that --resume never reuses a row computed from an input edited since.
 * NULL stops it. */
void sb_digest_start(uint64_t *h);
/* The digest's hash, usable alone: folds n bytes into h (64 bits, not
 * cryptographic: it tells an edited file from the one before). */
uint64_t sb_hash_bytes(uint64_t h, const void *p, size_t n);

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
