/* A CSV file read whole into rows of fields (libcsv does the parsing), for the
 * commands that read results files: compare, merge, plot, summary, report;
 * and what those commands read alike from a results row: whether it fits. */
#ifndef SB_TABLE_H
#define SB_TABLE_H

#include "core/util.h"

struct sb_table {
    uint32_t n_cols;       /* fields of the header row */
    uint32_t n_rows;       /* data rows, header excluded */
    char **cell;           /* [(n_rows + 1) * n_cols]; row 0 is the header */
    uint32_t *line;        /* [n_rows + 1] line each row starts on */
    char *path;
};

/* Reads path; every row must have the header's field count.  Lines that begin
 * with `#` above the header are skipped (a baseline's sweep identity). */
int sb_table_read(struct sb_table *t, const char *path, struct sb_err *e);
void sb_table_free(struct sb_table *t);
/* Column index of name, or -1. */
int sb_table_col(const struct sb_table *t, const char *name);
/* Field c of data row r (0-based, header excluded). */
const char *sb_table_get(const struct sb_table *t, uint32_t r, uint32_t c);

/* Field c of data row r as a number: decimal notation only (digits, then an
 * optional '.' and digits, then an optional exponent: no hex, inf or nan), at
 * least 0 and at most max, a whole number when integer is set.  -1 with
 * "path:line: column 'text' is ..." otherwise. */
int sb_table_decimal(const struct sb_table *t, uint32_t r, uint32_t c, double max,
                     int integer, double *out, struct sb_err *e);

/* The ranges of the results columns compare reads, from the loaders' limits:
 * every buffer of a graph sums to at most 2^62 bytes, so a peak cannot pass
 * it; a node lasts at most 10^12 us and a graph has under 2^32 nodes, so no
 * time passes 2^32 * 10^12 < 10^22 us. */
#define SB_RESULTS_MAX_BYTES 4611686018427387904.0 /* 2^62 */
#define SB_RESULTS_MAX_US 1e22

/* ---- does a row fit its devices' memory? -----------------------------------
 * Three results columns say, each read by header name and each absent from
 * older files: over_capacity (devices whose peak exceeds their capacity),
 * dev_cap_bytes (each device's capacity, "a;b;..." in device order, empty
 * when unknown) and mem_limit_bytes (the limit the policy itself was given,
 * empty when it had none). */

/* over_capacity of row r (column c, -1 when the file has none): 0 means the
 * schedule fits.  -1 when unknown: no column (a file from before placement),
 * an empty field (a row that did not run) or not a whole number.  compare
 * reads the same column strictly, refusing a malformed one. */
long sb_results_over(const struct sb_table *t, uint32_t r, int c);

/* The smallest known capacity among the devices of row r's dev_cap_bytes
 * (column c, -1 when the file has none), in bytes; 0 when no device has one
 * (no column, an empty field, every device unlimited).  *differ is set when
 * two devices with a capacity have different ones. */
double sb_results_min_cap(const struct sb_table *t, uint32_t r, int c, int *differ);

/* "does NOT fit (1 device over capacity)", for n_over > 0. */
void sb_fit_note(char *buf, size_t n, long n_over);

/* --schedulers LIST (plot, report; issue 38, item 9): keeps the rows whose
 * column c is one of LIST's comma-separated names, in their order; a name no
 * row has is refused, naming it. */
int sb_table_keep(struct sb_table *t, int c, const char *list, struct sb_err *e);
/* Writes t (header and rows) to path as CSV, quoting where a field needs it. */
int sb_table_write(const struct sb_table *t, const char *path, struct sb_err *e);

/* A figure for people to read: four significant digits in plain decimals,
 * thousands separated by commas, never an exponent ("24,650", "2.465",
 * "0.0001234"); issue 38, item 10. Returns buf. */
const char *sb_num_str(char *buf, size_t n, double v);

/* ---- grouping rows in linear time (issue 42) ---------------------------------
 * compare, summary and merge match and group rows by name: a linear search
 * per row made them quadratic (50,000 rows: 28 s in compare).  sb_strmap
 * numbers distinct strings in the order first seen (open addressing, FNV-1a;
 * the strings stay the caller's, usually the table's cells); sb_pairmap maps
 * a pair of such numbers to a row. */
struct sb_strmap {
    uint32_t n, cap;   /* strings held; slots, a power of two above 2n */
    const char **key;  /* [n] by number */
    uint32_t *slot;    /* [cap] number + 1, 0 = empty */
};
void sb_strmap_init(struct sb_strmap *m);
void sb_strmap_free(struct sb_strmap *m);
/* The number of s, adding it as number n when new. */
uint32_t sb_strmap_put(struct sb_strmap *m, const char *s);
/* The number of s, or UINT32_MAX when it is not in m. */
uint32_t sb_strmap_get(const struct sb_strmap *m, const char *s);

struct sb_pairmap {
    uint32_t n, cap;
    uint64_t *key;    /* [cap] a << 32 | b */
    uint32_t *val;    /* [cap] value + 1, 0 = empty */
};
void sb_pairmap_init(struct sb_pairmap *m);
void sb_pairmap_free(struct sb_pairmap *m);
/* The value of (a, b), setting it to v when new. */
uint32_t sb_pairmap_put(struct sb_pairmap *m, uint32_t a, uint32_t b, uint32_t v);
/* The value of (a, b), or UINT32_MAX. */
uint32_t sb_pairmap_get(const struct sb_pairmap *m, uint32_t a, uint32_t b);

/* The rule compare, summary and report share: a (workload, scheduler) pair
 * once per results file, since a second row would be counted twice (a run
 * never writes one: it refuses two workloads of one name).  0, or -1 and
 * "path:line: duplicate row for workload 'w', scheduler 's' (first on line
 * N)" for the first row that repeats an earlier one. */
int sb_results_check_unique(const struct sb_table *t, int c_workload, int c_scheduler,
                            struct sb_err *e);

#endif
