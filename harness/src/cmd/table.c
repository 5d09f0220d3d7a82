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
        /* `#` lines above the header: a committed baseline records its
         * sweep's identity there (ci/baseline-form.sh) */
        if (!R->t->n_cols && !R->n_fld && buf[pos] == '#') {
            pos += len;
            R->line++;
            continue;
        }
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

/* ---- grouping rows in linear time ------------------------------------------------ */

static uint64_t fnv1a(const char *s)
{
    uint64_t h = 14695981039346656037ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

void sb_strmap_init(struct sb_strmap *m)
{
    m->n = 0;
    m->cap = 16;
    m->key = sb_xmalloc(m->cap / 2 * sizeof *m->key);
    m->slot = sb_xcalloc(m->cap, sizeof *m->slot);
}

void sb_strmap_free(struct sb_strmap *m)
{
    free(m->key);
    free(m->slot);
    m->key = NULL;
    m->slot = NULL;
    m->n = m->cap = 0;
}

/* The slot of s: its own, or the empty one where it would go. */
static uint32_t str_slot(const struct sb_strmap *m, const char *s)
{
    uint32_t i = (uint32_t)fnv1a(s) & (m->cap - 1);
    while (m->slot[i] && strcmp(m->key[m->slot[i] - 1], s))
        i = (i + 1) & (m->cap - 1);
    return i;
}

uint32_t sb_strmap_get(const struct sb_strmap *m, const char *s)
{
    uint32_t i = str_slot(m, s);
    return m->slot[i] ? m->slot[i] - 1 : UINT32_MAX;
}

uint32_t sb_strmap_put(struct sb_strmap *m, const char *s)
{
    uint32_t i = str_slot(m, s);
    if (m->slot[i])
        return m->slot[i] - 1;
    if (2 * (m->n + 1) > m->cap) { /* keep it at most half full: rehash */
        SB_ASSERT(m->cap < (1u << 31));
        free(m->slot);
        m->cap *= 2;
        m->key = sb_xrealloc(m->key, m->cap / 2 * sizeof *m->key);
        m->slot = sb_xcalloc(m->cap, sizeof *m->slot);
        for (uint32_t k = 0; k < m->n; k++)
            m->slot[str_slot(m, m->key[k])] = k + 1;
        i = str_slot(m, s);
    }
    m->key[m->n] = s;
    m->slot[i] = ++m->n;
    return m->n - 1;
}

void sb_pairmap_init(struct sb_pairmap *m)
{
    m->n = 0;
    m->cap = 16;
    m->key = sb_xcalloc(m->cap, sizeof *m->key);
    m->val = sb_xcalloc(m->cap, sizeof *m->val);
}

void sb_pairmap_free(struct sb_pairmap *m)
{
    free(m->key);
    free(m->val);
    m->key = NULL;
    m->val = NULL;
    m->n = m->cap = 0;
}

static uint32_t pair_slot(const uint64_t *key, const uint32_t *val, uint32_t cap, uint64_t k)
{
    uint64_t h = (k ^ (k >> 29)) * 0x9e3779b97f4a7c15ull; /* spread both halves */
    uint32_t i = (uint32_t)(h >> 32) & (cap - 1);
    while (val[i] && key[i] != k)
        i = (i + 1) & (cap - 1);
    return i;
}

uint32_t sb_pairmap_get(const struct sb_pairmap *m, uint32_t a, uint32_t b)
{
    uint64_t k = (uint64_t)a << 32 | b;
    uint32_t i = pair_slot(m->key, m->val, m->cap, k);
    return m->val[i] ? m->val[i] - 1 : UINT32_MAX;
}

uint32_t sb_pairmap_put(struct sb_pairmap *m, uint32_t a, uint32_t b, uint32_t v)
{
    uint64_t k = (uint64_t)a << 32 | b;
    uint32_t i = pair_slot(m->key, m->val, m->cap, k);
    if (m->val[i])
        return m->val[i] - 1;
    if (2 * (m->n + 1) > m->cap) {
        SB_ASSERT(m->cap < (1u << 31));
        uint32_t cap = m->cap * 2;
        uint64_t *key = sb_xcalloc(cap, sizeof *key);
        uint32_t *val = sb_xcalloc(cap, sizeof *val);
        for (uint32_t j = 0; j < m->cap; j++)
            if (m->val[j]) {
                uint32_t t = pair_slot(key, val, cap, m->key[j]);
                key[t] = m->key[j];
                val[t] = m->val[j];
            }
        free(m->key);
        free(m->val);
        m->key = key, m->val = val, m->cap = cap;
        i = pair_slot(m->key, m->val, m->cap, k);
    }
    m->key[i] = k;
    m->val[i] = v + 1;
    m->n++;
    return v;
}

int sb_results_check_unique(const struct sb_table *t, int c_workload, int c_scheduler,
                            struct sb_err *e)
{
    struct sb_strmap names;
    struct sb_pairmap rows;
    int rc = 0;
    sb_strmap_init(&names);
    sb_pairmap_init(&rows);
    for (uint32_t r = 0; r < t->n_rows && !rc; r++) {
        const char *w = sb_table_get(t, r, (uint32_t)c_workload);
        const char *s = sb_table_get(t, r, (uint32_t)c_scheduler);
        uint32_t first = sb_pairmap_put(&rows, sb_strmap_put(&names, w),
                                        sb_strmap_put(&names, s), r);
        if (first != r)
            rc = sb_errf(e, "%s:%u: duplicate row for workload '%.200s', scheduler '%.200s' "
                            "(first on line %u)", t->path, t->line[r + 1], w, s,
                         t->line[first + 1]);
    }
    sb_strmap_free(&names);
    sb_pairmap_free(&rows);
    return rc;
}

const char *sb_num_str(char *buf, size_t n, double v)
{
    char raw[400];
    if (!isfinite(v)) {
        snprintf(buf, n, "%s", isnan(v) ? "-" : v < 0 ? "-inf" : "inf");
        return buf;
    }
    double a = fabs(v);
    if (a >= 999.95) /* %.4g would round it to 4 digits and an exponent at 10,000 */
        snprintf(raw, sizeof raw, "%.0f", v);
    else if (a >= 1e-4 || a == 0)
        snprintf(raw, sizeof raw, "%.4g", v); /* no exponent below 10,000 down to 1e-4 */
    else {
        /* below 1e-4: four significant digits written out */
        int dec = 3 - (int)floor(log10(a));
        snprintf(raw, sizeof raw, "%.*f", dec > 300 ? 300 : dec, v);
    }
    /* pass 2: commas into the integer part */
    const char *p = raw, *dot = strchr(raw, '.');
    size_t n_int = dot ? (size_t)(dot - raw) : strlen(raw), k = 0;
    if (*p == '-') {
        if (k + 1 < n)
            buf[k++] = '-';
        p++, n_int--;
    }
    for (size_t i = 0; i < n_int; i++) {
        if (i && (n_int - i) % 3 == 0 && k + 1 < n)
            buf[k++] = ',';
        if (k + 1 < n)
            buf[k++] = p[i];
    }
    for (const char *q = p + n_int; *q && k + 1 < n; q++)
        buf[k++] = *q;
    if (n)
        buf[k < n ? k : n - 1] = 0;
    return buf;
}

int sb_table_keep(struct sb_table *t, int c, const char *list, struct sb_err *e)
{
    SB_ASSERT(c >= 0 && (uint32_t)c < t->n_cols);
    /* pass 1: every listed name must name some row */
    char *dup = sb_xstrdup(list), *save = NULL;
    uint32_t n_names = 0;
    for (char *s = strtok_r(dup, ",", &save); s; s = strtok_r(NULL, ",", &save)) {
        uint32_t r = 0;
        while (r < t->n_rows && strcmp(sb_table_get(t, r, (uint32_t)c), s))
            r++;
        if (r == t->n_rows) {
            int rc = sb_errf(e, "--schedulers: no row of %s has scheduler '%s'", t->path, s);
            free(dup);
            return rc;
        }
        n_names++;
    }
    free(dup);
    if (!n_names)
        return sb_errf(e, "--schedulers: an empty list");
    /* pass 2: compact the kept rows in place; the dropped rows' cells are freed */
    uint32_t kept = 0, nc = t->n_cols;
    size_t n_list = strlen(list);
    for (uint32_t r = 0; r < t->n_rows; r++) {
        const char *v = sb_table_get(t, r, (uint32_t)c);
        size_t n_v = strlen(v);
        int keep = 0;
        for (const char *p = list; !keep && p; p = strchr(p, ','), p = p ? p + 1 : NULL)
            keep = !strncmp(p, v, n_v) && (p[n_v] == ',' || p + n_v == list + n_list);
        char **row = t->cell + (size_t)(r + 1) * nc;
        if (!keep) {
            for (uint32_t k = 0; k < nc; k++)
                free(row[k]);
            continue;
        }
        memmove(t->cell + (size_t)(kept + 1) * nc, row, nc * sizeof *row);
        t->line[kept + 1] = t->line[r + 1];
        kept++;
    }
    t->n_rows = kept;
    return 0;
}

static void csv_field(FILE *f, const char *s)
{
    if (!strpbrk(s, ",\"\r\n")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

int sb_table_write(const struct sb_table *t, const char *path, struct sb_err *e)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return sb_errf(e, "cannot write %s: %s", path, strerror(errno));
    for (uint32_t r = 0; r <= t->n_rows; r++)
        for (uint32_t k = 0; k < t->n_cols; k++) {
            csv_field(f, t->cell[(size_t)r * t->n_cols + k]);
            fputc(k + 1 < t->n_cols ? ',' : '\n', f);
        }
    if (fclose(f))
        return sb_errf(e, "cannot write %s: %s", path, strerror(errno));
    return 0;
}
