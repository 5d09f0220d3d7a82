#define _POSIX_C_SOURCE 200809L
#include "table.h"

#include <csv.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct reader {
    struct sb_table *t;
    struct sb_err *e;
    int failed;
    uint32_t line, row_line, n_fld;
    char **row;     /* fields of the row being read */
    uint32_t row_cap;
    uint32_t cap;   /* rows allocated */
};

static void on_field(void *s, size_t len, void *data)
{
    struct reader *R = data;
    if (R->failed)
        return;
    if (R->n_fld == 0)
        R->row_line = R->line;
    if (R->n_fld == R->row_cap) {
        R->row_cap = R->row_cap ? R->row_cap * 2 : 16;
        R->row = sb_xrealloc(R->row, R->row_cap * sizeof *R->row);
    }
    char *f = sb_xmalloc(len + 1);
    if (len)
        memcpy(f, s, len);
    f[len] = 0;
    R->row[R->n_fld++] = f;
}

static void drop_row(struct reader *R)
{
    for (uint32_t i = 0; i < R->n_fld; i++)
        free(R->row[i]);
    R->n_fld = 0;
}

static void on_row(int c, void *data)
{
    struct reader *R = data;
    struct sb_table *t = R->t;
    (void)c;
    if (R->failed) {
        drop_row(R);
        return;
    }
    uint32_t r = t->n_cols ? t->n_rows + 1 : 0;
    if (r == 0)
        t->n_cols = R->n_fld;
    else if (R->n_fld != t->n_cols) {
        sb_errf(R->e, "%s:%u: row has %u fields, the header has %u", t->path,
                R->row_line, R->n_fld, t->n_cols);
        R->failed = 1;
        drop_row(R);
        return;
    }
    if (r + 1 > R->cap) {
        R->cap = R->cap ? R->cap * 2 : 64;
        t->cell = sb_xrealloc(t->cell, (size_t)R->cap * t->n_cols * sizeof *t->cell);
        t->line = sb_xrealloc(t->line, R->cap * sizeof *t->line);
    }
    memcpy(t->cell + (size_t)r * t->n_cols, R->row, t->n_cols * sizeof *R->row);
    t->line[r] = R->row_line;
    if (r)
        t->n_rows++;
    R->n_fld = 0;
}

static int parse_buf(struct reader *R, const char *buf, size_t n)
{
    /* a NUL would end a field early once it is a C string */
    const char *nul = memchr(buf, 0, n);
    if (nul) {
        unsigned line = 1;
        for (const char *c = buf; c < nul; c++)
            line += *c == '\n';
        sb_errf(R->e, "%s:%u: NUL byte: not a text file", R->t->path, line);
        free(R->row);
        return -1;
    }
    struct csv_parser p;
    SB_ASSERT(csv_init(&p, 0) == 0);
    /* libcsv grows a field's buffer by blk_size at a time (128 bytes by
     * default): a 10 MB field would be copied ~80,000 times */
    csv_set_blk_size(&p, 1 << 20);
    size_t pos = 0;
    while (pos < n && !R->failed) {
        const char *nl = memchr(buf + pos, '\n', n - pos);
        size_t len = nl ? (size_t)(nl - (buf + pos)) + 1 : n - pos;
        if (csv_parse(&p, buf + pos, len, on_field, on_row, R) != len) {
            sb_errf(R->e, "%s:%u: CSV error: %s", R->t->path, R->line,
                    csv_strerror(csv_error(&p)));
            R->failed = 1;
        }
        pos += len;
        R->line++;
    }
    if (!R->failed)
        csv_fini(&p, on_field, on_row, R);
    csv_free(&p);
    drop_row(R);
    free(R->row);
    return R->failed ? -1 : 0;
}

int sb_table_read(struct sb_table *t, const char *path, struct sb_err *e)
{
    memset(t, 0, sizeof *t);
    t->path = sb_xstrdup(path);
    size_t n;
    char *buf = sb_read_file_limited(path, sb_max_input_bytes(), &n, e);
    if (!buf) {
        sb_table_free(t);
        return -1;
    }
    /* a UTF-8 byte-order mark is not part of the first column's name */
    size_t bom = n >= 3 && !memcmp(buf, "\xef\xbb\xbf", 3) ? 3 : 0;
    struct reader R = {.t = t, .e = e, .line = 1};
    int rc = parse_buf(&R, buf + bom, n - bom);
    free(buf);
    if (!rc && !t->n_cols)
        rc = sb_errf(e, "%s:1: empty file: no header row", path);
    if (rc)
        sb_table_free(t);
    return rc;
}

void sb_table_free(struct sb_table *t)
{
    size_t n = t->n_cols ? (size_t)(t->n_rows + 1) * t->n_cols : 0;
    for (size_t i = 0; i < n; i++)
        free(t->cell[i]);
    free(t->cell);
    free(t->line);
    free(t->path);
    memset(t, 0, sizeof *t);
}

int sb_table_col(const struct sb_table *t, const char *name)
{
    for (uint32_t c = 0; c < t->n_cols; c++)
        if (strcmp(t->cell[c], name) == 0)
            return (int)c;
    return -1;
}

const char *sb_table_get(const struct sb_table *t, uint32_t r, uint32_t c)
{
    return t->cell[(size_t)(r + 1) * t->n_cols + c];
}

/* digits [. digits] [e|E [+|-] digits]: the notation the results writer uses,
 * and what other tools write for the same columns */
static int is_decimal(const char *s)
{
    const char *c = s;
    if (*c == '-')
        c++;
    if (*c < '0' || *c > '9')
        return 0;
    while (*c >= '0' && *c <= '9')
        c++;
    if (*c == '.')
        for (c++; *c >= '0' && *c <= '9'; c++)
            ;
    if (*c == 'e' || *c == 'E') {
        c++;
        if (*c == '+' || *c == '-')
            c++;
        if (*c < '0' || *c > '9')
            return 0;
        while (*c >= '0' && *c <= '9')
            c++;
    }
    return *c == 0;
}

int sb_table_decimal(const struct sb_table *t, uint32_t r, uint32_t c, double max,
                     int integer, double *out, struct sb_err *e)
{
    const char *s = sb_table_get(t, r, c), *col = t->cell[c];
    unsigned line = t->line[r + 1];
    if (!is_decimal(s))
        return sb_errf(e, "%s:%u: %s '%.40s%s' is not a number in decimal notation", t->path,
                       line, col, s, strlen(s) > 40 ? "..." : "");
    double v = strtod(s, NULL) + 0.0; /* + 0.0: "-0" is 0 */
    if (v < 0)
        return sb_errf(e, "%s:%u: %s '%.40s' is negative", t->path, line, col, s);
    if (!isfinite(v) || v > max)
        return sb_errf(e, integer ? "%s:%u: %s '%.40s%s' is above the column's limit of %.0f"
                                  : "%s:%u: %s '%.40s%s' is above the column's limit of %g",
                       t->path, line, col, s, strlen(s) > 40 ? "..." : "", max);
    if (integer && v != floor(v))
        return sb_errf(e, "%s:%u: %s '%.40s' is not a whole number", t->path, line, col, s);
    *out = v;
    return 0;
}

/* ---- does a row fit? ---------------------------------------------------------- */

long sb_results_over(const struct sb_table *t, uint32_t r, int c)
{
    if (c < 0)
        return -1;
    const char *s = sb_table_get(t, r, (uint32_t)c);
    char *end;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    /* strtoul takes a sign and blanks; a count has neither */
    if (*s < '0' || *s > '9' || *end || errno || v > 4294967295ul)
        return -1;
    return (long)v;
}

/* A capacity past 2^62 bytes is no capacity: the simulator writes an
 * unlimited device (SB_MEM_UNLIMITED, 2^64 - 1) as a number that large. */
double sb_results_min_cap(const struct sb_table *t, uint32_t r, int c, int *differ)
{
    double lo = 0;
    *differ = 0;
    if (c < 0)
        return 0;
    for (const char *p = sb_table_get(t, r, (uint32_t)c); *p;) {
        size_t len = strcspn(p, ";");
        char *end;
        double v = strtod(p, &end);
        int known = end == p + len && len && *p >= '0' && *p <= '9' && isfinite(v) &&
                    v > 0 && v <= SB_RESULTS_MAX_BYTES;
        if (known && lo > 0 && v != lo)
            *differ = 1;
        if (known && (lo == 0 || v < lo))
            lo = v;
        p += len + (p[len] == ';');
    }
    return lo;
}

void sb_fit_note(char *buf, size_t n, long n_over)
{
    snprintf(buf, n, "does NOT fit (%ld device%s over capacity)", n_over,
             n_over == 1 ? "" : "s");
}
