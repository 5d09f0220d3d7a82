/* Format v1, the CSV workload (docs/workload-format.md): one importer among
 * the others.  It parses text into typed fields and hands each row to the
 * graph builder, which checks the graph.
 *
 * The file is read whole, "# key=value" metadata lines before the header are
 * taken off by hand (they are not CSV), and the rest is fed to libcsv one line
 * at a time so that every row knows the line it started on. */
#define _POSIX_C_SOURCE 200809L
#include "import.h"

#include "core/builder.h"

#include <csv.h>
#include <errno.h>
#include <math.h>
#include <string.h>

/* ---- columns ----------------------------------------------------------- */

enum col {
    COL_ID, COL_NAME, COL_KIND, COL_INPUTS, COL_OP, COL_COST_US, COL_OUT_BYTES,
    COL_COLL, COL_COMM_BYTES, COL_GROUP, COL_COMM_US, COL_DEVICE, COL_FLAGS, COL_UNITS,
    COL_STREAM, COL_FLOPS, COL_BYTES_ACCESSED, COL_DTYPE, /* optional: the roofline's work */
    COL_SCHED_GROUP, COL_SCHED_HINT, COL_SCHED_PRIORITY, /* optional: XLA annotations */
    COL_HOLDS,
    COL_AFTER, /* optional: order-only edges */
    COL_SCOPE, /* optional: computation instance (core/scope.h) */
    COL_JOIN,  /* optional: the collective a start joins (graph.h, `join`) */
    COL_COUNT,
    COL_EXTRA = COL_COUNT,       /* an x_ column: read and ignored */
    COL_DEV_COST = COL_COUNT + 1, /* cost_us.<device> (docs/machines.md) */
    COL_RES = COL_COUNT + 2       /* res.<name> (docs/machines.md, "Resources") */
};

static const char *const col_names[COL_COUNT] = {
    "id", "name", "kind", "inputs", "op", "cost_us", "out_bytes", "coll",
    "comm_bytes", "group", "comm_us", "device", "flags", "units", "stream",
    "flops", "bytes_accessed", "dtype", "sched_group", "sched_hint", "sched_priority", "holds",
    "after", "scope", "join"};

#define N_REQUIRED_COLS 4 /* id, name, kind, inputs */
#define MAX_COLS 256      /* a header wider than this is surely not a graph */

struct loader {
    const char *path;
    struct sb_builder *b;
    uint32_t line;     /* line being fed to libcsv, 1-based */
    uint32_t row_line; /* line the current row started on */
    int have_header;
    uint32_t name_field; /* the name's field once rows are built as they come,
                          * else UINT32_MAX (see on_field) */
    uint32_t n_cols;
    uint8_t col_of[MAX_COLS];   /* field index -> enum col */
    int field_of[COL_COUNT];    /* enum col -> field index, -1 if absent */
    uint32_t dev_cost_field[SB_MAX_DEVICES]; /* field of each cost_us.<device> */
    uint32_t res_field[SB_MAX_RES];          /* field of each res.<name> */
    /* the current row: fields NUL-terminated in rowbuf */
    char *rowbuf;
    size_t row_len, row_cap;
    size_t fld_off[MAX_COLS];
    uint32_t n_fld;
    int row_overflow;
    /* --toposort: rows kept whole, built in topological order at the end */
    int toposort;
    struct saved *saved;
    uint32_t n_saved, saved_cap;
    uint32_t *pos_of; /* [n_saved] file id -> position in the built graph */
};

/* A row kept for --toposort: its fields as parsed, and its line. */
struct saved {
    char *buf;
    size_t *off;
    uint32_t n_fld, line;
};

static int fail(struct loader *L, uint32_t field, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail(struct loader *L, uint32_t field, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return sb_builder_fail(L->b, L->row_line, field, "%s", msg);
}

/* ---- field parsers ------------------------------------------------------ */

/* Non-negative decimal integer, no sign, no trailing text.  By hand rather
 * than strtoull: ids and inputs are most of a file's numbers, and glibc's
 * locale-aware conversion cost a tenth of a load (callgrind, 63k nodes). */
static int parse_u64(const char *s, uint64_t max, uint64_t *out)
{
    uint64_t v = 0;
    if (*s < '0' || *s > '9')
        return -1;
    for (; *s >= '0' && *s <= '9'; s++) {
        uint64_t d = (uint64_t)(*s - '0');
        if (v > (UINT64_MAX - d) / 10)
            return -1; /* past 2^64 */
        v = v * 10 + d;
    }
    if (*s || v > max)
        return -1;
    *out = v;
    return 0;
}

/* "123", "12.5", ".25": at most 15 digits, so the digits as an integer m and
 * 10^k (k digits after the point) are both exact doubles, and m / 10^k, one
 * correctly rounded division, is the double strtod returns (Clinger's fast
 * path).  Anything else (signs, exponents, more digits) is strtod's, which
 * was 5% of a load's instructions (callgrind). */
static int parse_plain_decimal(const char *s, double *out)
{
    static const double pow10[] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7,
                                   1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15};
    uint64_t m = 0;
    int digits = 0, frac = -1;
    for (;; s++) {
        if (*s >= '0' && *s <= '9') {
            if (++digits > 15)
                return -1;
            m = m * 10 + (uint64_t)(*s - '0');
            frac += frac >= 0;
        } else if (*s == '.' && frac < 0) {
            frac = 0;
        } else {
            break;
        }
    }
    if (*s || !digits)
        return -1;
    *out = (double)m / pow10[frac < 0 ? 0 : frac];
    return 0;
}

/* Finite, non-negative, no trailing text.  Says which rule broke. */
static const char *parse_nonneg(const char *s, double *out)
{
    char *end;
    double v;
    if (parse_plain_decimal(s, &v) == 0) {
        if (v > SB_MAX_COST_US)
            return "is above 10^12 (us)";
        *out = v;
        return NULL;
    }
    errno = 0;
    v = strtod(s, &end);
    if (end == s || *end)
        return "is not a number";
    if (errno == ERANGE && fabs(v) > 1.0)
        return "overflows";
    if (!isfinite(v))
        return "is not finite";
    if (v < 0 || (v == 0 && s[0] == '-'))
        return "is negative";
    /* a duration of 1e308 us is finite, but two of them sum to inf, which
     * would reach the results; 10^12 us (11.6 days) is beyond any kernel */
    if (v > SB_MAX_COST_US)
        return "is above 10^12 (us)";
    *out = v;
    return NULL;
}

static const char *field(const struct loader *L, enum col c)
{
    int f = L->field_of[c];
    return f < 0 ? "" : L->rowbuf + L->fld_off[f];
}

static uint32_t fnum(const struct loader *L, enum col c)
{
    return L->field_of[c] < 0 ? 0 : (uint32_t)L->field_of[c] + 1;
}

static int read_double(struct loader *L, enum col c, double def, double *out)
{
    const char *s = field(L, c);
    if (!*s) {
        *out = def;
        return 0;
    }
    const char *why = parse_nonneg(s, out);
    /* work counts (FLOPs, bytes) are not durations: the builder's 10^30 */
    if (why && (c == COL_FLOPS || c == COL_BYTES_ACCESSED) &&
        !strcmp(why, "is above 10^12 (us)")) {
        *out = strtod(s, NULL); /* parse_nonneg checked it is a finite number */
        why = *out <= 1e30 ? NULL : "is above 10^30";
    }
    if (why)
        return fail(L, fnum(L, c), "%s '%s' %s", col_names[c], s, why);
    return 0;
}

static int read_u64(struct loader *L, enum col c, uint64_t *out)
{
    const char *s = field(L, c);
    *out = 0;
    if (!*s)
        return 0;
    if (s[0] == '-')
        return fail(L, fnum(L, c), "%s '%s' is negative", col_names[c], s);
    /* 2^50 bytes (1 PiB) per buffer; the builder also bounds the sum of all
     * of them, so the memory model's running totals cannot overflow */
    if (parse_u64(s, SB_MAX_BYTES, out) != 0)
        return fail(L, fnum(L, c), "%s '%s' is not an integer in 0..2^50 (1 PiB)",
                    col_names[c], s);
    return 0;
}

/* "8" is a group of 8 ranks; "0 1 2 3" lists 4 ranks. */
static int read_group(struct loader *L, uint32_t *out)
{
    const char *s = field(L, COL_GROUP);
    uint32_t n = 0;
    uint64_t v = 0;
    char tok[32];
    *out = 0;
    while (*s) {
        while (*s == ' ')
            s++;
        size_t len = strcspn(s, " ");
        if (!len)
            break;
        if (len >= sizeof tok)
            return fail(L, fnum(L, COL_GROUP), "group entry too long");
        memcpy(tok, s, len);
        tok[len] = 0;
        if (parse_u64(tok, UINT32_MAX - 1, &v) != 0)
            return fail(L, fnum(L, COL_GROUP),
                        "group '%s' is not a rank count or a list of ranks", tok);
        n++;
        s += len;
    }
    *out = n == 1 ? (uint32_t)v : n;
    return 0;
}

static int read_flags(struct loader *L, uint32_t *out)
{
    const char *s = field(L, COL_FLAGS);
    char tok[64];
    *out = 0;
    while (*s) {
        size_t len = strcspn(s, "|");
        if (len >= sizeof tok)
            return fail(L, fnum(L, COL_FLAGS), "flag too long");
        memcpy(tok, s, len);
        tok[len] = 0;
        if (strcmp(tok, "weight") == 0)
            *out |= SB_FLAG_WEIGHT;
        else if (strcmp(tok, "output") == 0)
            *out |= SB_FLAG_OUTPUT;
        else if (strcmp(tok, "alias") == 0)
            *out |= SB_FLAG_ALIAS;
        else if (len)
            return fail(L, fnum(L, COL_FLAGS),
                        "unknown flag '%s' (known: weight, output, alias)", tok);
        s += len + (s[len] == '|');
    }
    return 0;
}

/* The ids of an inputs (c = COL_INPUTS) or after (COL_AFTER) field, each
 * an earlier row, as the last node's edges of that kind. */
static int read_edges(struct loader *L, enum col c)
{
    const char *s = field(L, c), *what = c == COL_AFTER ? "after" : "input";
    char tok[32];
    while (*s) {
        while (*s == ' ')
            s++;
        size_t len = strcspn(s, " ");
        if (!len)
            break;
        uint64_t v;
        if (len >= sizeof tok)
            return fail(L, fnum(L, c), "%s id '%.20s...' is too long", what, s);
        memcpy(tok, s, len);
        tok[len] = 0;
        if (parse_u64(tok, UINT32_MAX, &v) != 0)
            return fail(L, fnum(L, c), "%s '%s' is not a node id", what, tok);
        if (L->pos_of)
            v = v < L->n_saved ? L->pos_of[v] : UINT32_MAX;
        if ((c == COL_AFTER ? sb_builder_after : sb_builder_input)(L->b, (uint32_t)v))
            return -1;
        s += len;
    }
    return 0;
}

static int read_inputs(struct loader *L)
{
    return read_edges(L, COL_INPUTS) ||
           (L->field_of[COL_AFTER] >= 0 && read_edges(L, COL_AFTER));
}

static int read_device(struct loader *L, int32_t *out)
{
    const char *s = field(L, COL_DEVICE);
    uint64_t v;
    *out = -1;
    if (!*s)
        return 0;
    if (parse_u64(s, INT32_MAX, &v) != 0)
        return fail(L, fnum(L, COL_DEVICE), "device '%s' is not an index in 0..2^31-1", s);
    *out = (int32_t)v;
    return 0;
}

static int read_units(struct loader *L, uint32_t *out)
{
    const char *s = field(L, COL_UNITS);
    uint64_t u = 1;
    if (*s && (parse_u64(s, 1000000, &u) != 0 || u < 1))
        return fail(L, fnum(L, COL_UNITS), "units '%s' is not an integer in 1..10^6", s);
    *out = (uint32_t)u;
    return 0;
}

static int read_stream(struct loader *L, uint32_t *out)
{
    const char *s = field(L, COL_STREAM);
    uint64_t v = 0;
    if (*s && parse_u64(s, SB_MAX_STREAMS - 1, &v) != 0)
        return fail(L, fnum(L, COL_STREAM), "stream '%s' is not an integer in 0..%d", s,
                    SB_MAX_STREAMS - 1);
    *out = (uint32_t)v;
    return 0;
}

/* cost_us.<device> fields of the row just added (-1 when empty). */
static int read_dev_costs(struct loader *L)
{
    uint32_t n = sb_builder_n_dev_cost(L->b);
    for (uint32_t k = 0; k < n; k++) {
        uint32_t f = L->dev_cost_field[k];
        const char *c = L->rowbuf + L->fld_off[f];
        double us = -1;
        const char *why = *c ? parse_nonneg(c, &us) : NULL;
        if (why)
            return fail(L, f + 1, "cost_us.%s '%s' %s", sb_builder_dev_cost_name(L->b, k), c,
                        why);
        sb_builder_dev_cost(L->b, k, us);
    }
    return 0;
}

/* res.<name> fields of the row just added: r_k(v) in the resource's unit,
 * 0..10^6; empty: the device's whole limit. */
static int read_res(struct loader *L)
{
    uint32_t n = sb_builder_n_res(L->b);
    for (uint32_t k = 0; k < n; k++) {
        uint32_t f = L->res_field[k];
        const char *c = L->rowbuf + L->fld_off[f];
        uint64_t u = SB_RES_ALL;
        if (*c && parse_u64(c, 1000000, &u) != 0)
            return fail(L, f + 1, "res.%s '%s' is not an integer in 0..10^6",
                        sb_builder_res_name(L->b, k), c);
        sb_builder_res(L->b, k, (uint32_t)u);
    }
    return 0;
}

/* ---- header and rows ----------------------------------------------------- */

static int read_header(struct loader *L)
{
    if (L->n_fld > MAX_COLS)
        return fail(L, 0, "header has more than %d columns", MAX_COLS);
    for (int c = 0; c < COL_COUNT; c++)
        L->field_of[c] = -1;
    for (uint32_t f = 0; f < L->n_fld; f++) {
        const char *s = L->rowbuf + L->fld_off[f];
        int c = 0;
        while (c < COL_COUNT && strcmp(s, col_names[c]) != 0)
            c++;
        if (c == COL_COUNT && !strncmp(s, "cost_us.", 8) && s[8]) {
            int k = sb_builder_dev_cost_column(L->b, s + 8, L->row_line, f + 1);
            if (k < 0)
                return -1;
            L->dev_cost_field[k] = f;
            L->col_of[f] = COL_DEV_COST;
            continue;
        }
        if (c == COL_COUNT && !strncmp(s, "res.", 4) && s[4]) {
            int k = sb_builder_res_column(L->b, s + 4, L->row_line, f + 1);
            if (k < 0)
                return -1;
            L->res_field[k] = f;
            L->col_of[f] = COL_RES;
            continue;
        }
        if (c == COL_COUNT) {
            if (strncmp(s, "x_", 2) != 0)
                return fail(L, f + 1,
                            "unknown column '%s' (extra columns must start with x_)", s);
            L->col_of[f] = COL_EXTRA;
            continue;
        }
        if (L->field_of[c] >= 0)
            return fail(L, f + 1, "duplicate column '%s'", s);
        L->field_of[c] = (int)f;
        L->col_of[f] = (uint8_t)c;
    }
    for (int c = 0; c < N_REQUIRED_COLS; c++)
        if (L->field_of[c] < 0)
            return fail(L, 0, "missing required column '%s'", col_names[c]);
    uint32_t bcol[SB_BF_COUNT] = {0};
    bcol[SB_BF_NAME] = fnum(L, COL_NAME);
    bcol[SB_BF_KIND] = fnum(L, COL_KIND);
    bcol[SB_BF_INPUTS] = fnum(L, COL_INPUTS);
    bcol[SB_BF_COLL] = fnum(L, COL_COLL);
    bcol[SB_BF_OUT_BYTES] = fnum(L, COL_OUT_BYTES);
    bcol[SB_BF_FLAGS] = fnum(L, COL_FLAGS);
    bcol[SB_BF_AFTER] = fnum(L, COL_AFTER);
    bcol[SB_BF_SCOPE] = fnum(L, COL_SCOPE);
    bcol[SB_BF_JOIN] = fnum(L, COL_JOIN);
    sb_builder_columns(L->b, bcol);
    L->n_cols = L->n_fld;
    L->have_header = 1;
    L->name_field = L->toposort ? UINT32_MAX : (uint32_t)L->field_of[COL_NAME];
    return 0;
}

static int read_id(struct loader *L, uint32_t id)
{
    const char *s = field(L, COL_ID);
    uint64_t v;
    if (!*s)
        return fail(L, fnum(L, COL_ID), "empty id");
    if (parse_u64(s, UINT32_MAX - 1, &v) != 0)
        return fail(L, fnum(L, COL_ID), "id '%s' is not a non-negative integer", s);
    if (v < id)
        return fail(L, fnum(L, COL_ID), "duplicate id %s (first on line %llu)", s,
                    (unsigned long long)sb_builder_loc(L->b, (uint32_t)v));
    if (v > id)
        return fail(L, fnum(L, COL_ID),
                    "id %s is not dense: expected %u (ids are 0..N-1 in file order)", s, id);
    return 0;
}

static int read_kind_coll(struct loader *L, struct sb_node_in *n)
{
    const char *ks = field(L, COL_KIND), *cs = field(L, COL_COLL);
    n->coll = SB_COLL_NONE;
    if (sb_kind_parse(ks, &n->kind) != 0)
        return fail(L, fnum(L, COL_KIND),
                    "unknown kind '%s' (known: compute, nop, input, start, done)", ks);
    if (*cs && sb_coll_parse(cs, &n->coll) != 0)
        return fail(L, fnum(L, COL_COLL), "unknown coll '%s'", cs);
    return 0;
}

/* flops, bytes_accessed, dtype (docs/workload-format.md): a row carries work
 * for the roofline when its dtype names the unit it runs on. */
static int read_work(struct loader *L, struct sb_node_in *n)
{
    const char *s = field(L, COL_DTYPE);
    enum sb_dtype d = SB_DTYPE_NONE;
    if (*s && sb_dtype_parse(s, &d))
        return fail(L, fnum(L, COL_DTYPE), "dtype '%s' is not one of fp32, tf32, bf16, "
                                           "fp16, fp8, int8, fp64", s);
    n->dtype = (uint8_t)d;
    return read_double(L, COL_FLOPS, 0, &n->flops) ||
           read_double(L, COL_BYTES_ACCESSED, 0, &n->bytes_accessed);
}

/* A signed decimal int32 ("-3", "12"), no trailing text. */
static int parse_i32(const char *s, int32_t *out)
{
    uint64_t v;
    int neg = *s == '-';
    if (parse_u64(s + neg, (uint64_t)INT32_MAX + (uint64_t)neg, &v) != 0)
        return -1;
    *out = neg ? (int32_t)(-(int64_t)v) : (int32_t)v;
    return 0;
}

/* sched_group ("G" or "G:I"), sched_hint ("force_delay|keep_order", ...) and
 * sched_priority (docs/workload-format.md, "Scheduling annotations"). */
static int read_sched(struct loader *L, struct sb_node_in *n)
{
    const char *g = field(L, COL_SCHED_GROUP), *h = field(L, COL_SCHED_HINT);
    const char *p = field(L, COL_SCHED_PRIORITY);
    static const char *const hint_names[] = {"force_delay", "force_delay_async",
                                             "force_early", "keep_order"};
    char tok[64];
    uint64_t v;
    n->sched = 1;
    n->sched_group = -1;
    n->sched_iter = SB_NO_ITER;
    if (*g) {
        size_t len = strcspn(g, ":");
        if (len >= sizeof tok)
            return fail(L, fnum(L, COL_SCHED_GROUP), "sched_group '%.20s...' is too long", g);
        memcpy(tok, g, len);
        tok[len] = 0;
        if (parse_u64(tok, INT32_MAX, &v) != 0 ||
            (g[len] == ':' && parse_i32(g + len + 1, &n->sched_iter) != 0) ||
            (g[len] == ':' && n->sched_iter == SB_NO_ITER))
            return fail(L, fnum(L, COL_SCHED_GROUP),
                        "sched_group '%s' is not GROUP or GROUP:ITERATION (GROUP an integer "
                        "in 0..2^31-1, ITERATION a signed 32-bit integer)", g);
        n->sched_group = (int32_t)v;
    }
    while (*h) {
        size_t len = strcspn(h, "|");
        uint32_t k = 0;
        if (len >= sizeof tok)
            return fail(L, fnum(L, COL_SCHED_HINT), "sched_hint '%.20s...' is too long", h);
        memcpy(tok, h, len);
        tok[len] = 0;
        while (k < 4 && strcmp(tok, hint_names[k]) != 0)
            k++;
        if (k == 4 && len)
            return fail(L, fnum(L, COL_SCHED_HINT), "unknown sched_hint '%s' (known: "
                        "force_delay, force_delay_async, force_early, keep_order)", tok);
        if (len)
            n->sched_hint |= (uint8_t)(1u << k);
        h += len + (h[len] == '|');
    }
    if (*p && parse_i32(p, &n->sched_priority) != 0)
        return fail(L, fnum(L, COL_SCHED_PRIORITY),
                    "sched_priority '%s' is not a signed 32-bit integer", p);
    return 0;
}

/* holds: "all_gather:2|collective_permute:1" (docs/workload-format.md). */
static int read_holds(struct loader *L, struct sb_node_in *n)
{
    const char *s = field(L, COL_HOLDS);
    char tok[64];
    while (*s) {
        size_t len = strcspn(s, "|");
        char *colon;
        enum sb_coll c;
        uint64_t v;
        if (len >= sizeof tok)
            return fail(L, fnum(L, COL_HOLDS), "holds entry '%.20s...' is too long", s);
        memcpy(tok, s, len);
        tok[len] = 0;
        if (len && (!(colon = strchr(tok, ':')) || (*colon = 0, sb_coll_parse(tok, &c)) ||
                    c == SB_COLL_NONE || parse_u64(colon + 1, 1000000, &v)))
            return fail(L, fnum(L, COL_HOLDS), "holds entry '%.*s' is not COLL:COUNT (a "
                        "collective type and a count in 0..10^6)", (int)len, s);
        if (len)
            n->holds[c] = (uint32_t)v;
        s += len + (s[len] == '|');
    }
    return 0;
}

/* A start's `join`: the id of an earlier start whose collective it joins;
 * empty joins none. */
static int read_join(struct loader *L)
{
    const char *s = field(L, COL_JOIN);
    uint64_t v;
    if (!*s)
        return 0;
    if (parse_u64(s, UINT32_MAX - 1, &v) != 0)
        return fail(L, fnum(L, COL_JOIN), "join '%.20s' is not a node id", s);
    if (L->pos_of)
        v = v < L->n_saved ? L->pos_of[v] : UINT32_MAX - 1;
    return sb_builder_join(L->b, (uint32_t)v);
}

static int read_row(struct loader *L)
{
    if (L->n_fld != L->n_cols)
        return fail(L, 0, "row has %u fields, the header has %u", L->n_fld, L->n_cols);
    struct sb_node_in n = SB_NODE_IN_INIT;
    n.loc = L->row_line;
    n.name = field(L, COL_NAME);
    n.op = field(L, COL_OP);
    n.scope = field(L, COL_SCOPE); /* checked by the builder */
    if ((!L->pos_of && read_id(L, sb_builder_n_nodes(L->b))) || read_kind_coll(L, &n) ||
        read_double(L, COL_COST_US, 0, &n.cost_us) ||
        read_u64(L, COL_OUT_BYTES, &n.out_bytes) ||
        read_u64(L, COL_COMM_BYTES, &n.comm_bytes) || read_group(L, &n.group_size) ||
        read_double(L, COL_COMM_US, -1, &n.comm_us) || read_device(L, &n.device) ||
        read_flags(L, &n.flags) || read_units(L, &n.units) || read_stream(L, &n.stream) ||
        read_work(L, &n) || read_sched(L, &n) || read_holds(L, &n))
        return -1;
    if (sb_builder_node(L->b, &n) == SB_NONE)
        return -1;
    return read_inputs(L) || read_dev_costs(L) || read_res(L) ||
           (L->field_of[COL_JOIN] >= 0 && read_join(L));
}

/* ---- libcsv callbacks ---------------------------------------------------- */

/* Called for every field, 13 per row of a generated graph: nothing here that
 * on_row or feed already does (they stop at the builder's first error). */
static void on_field(void *s, size_t len, void *data)
{
    struct loader *L = data;
    if (L->n_fld == 0)
        L->row_line = L->line;
    if (L->n_fld >= MAX_COLS) {
        L->row_overflow = 1;
        return;
    }
    if (L->row_len + len + 1 > L->row_cap) {
        L->row_cap = (L->row_len + len + 1) * 2;
        L->rowbuf = sb_xrealloc(L->rowbuf, L->row_cap);
    }
    char *dst = L->rowbuf + L->row_len;
    L->fld_off[L->n_fld] = L->row_len;
    memcpy(dst, s, len + 1); /* with its NUL: csv_init's CSV_APPEND_NULL */
    L->row_len += len + 1;
    /* the name comes early in a row: the builder's table slot for it, a
     * cache miss at 10^6 nodes, loads while libcsv parses the rest */
    if (L->n_fld++ == L->name_field)
        sb_builder_prefetch_name(L->b, dst);
}

/* --toposort, pass 1: the row is kept; only its id is checked now. */
static void save_row(struct loader *L)
{
    if (L->n_fld != L->n_cols) {
        fail(L, 0, "row has %u fields, the header has %u", L->n_fld, L->n_cols);
        return;
    }
    if (read_id(L, L->n_saved))
        return;
    if (L->n_saved == L->saved_cap) {
        L->saved_cap = L->saved_cap ? 2 * L->saved_cap : 1024;
        L->saved = sb_xrealloc(L->saved, L->saved_cap * sizeof *L->saved);
    }
    struct saved *r = &L->saved[L->n_saved++];
    r->buf = memcpy(sb_xmalloc(L->row_len + 1), L->rowbuf, L->row_len);
    r->off = memcpy(sb_xmalloc(L->n_fld * sizeof *r->off + 1), L->fld_off,
                    L->n_fld * sizeof *r->off);
    r->n_fld = L->n_fld;
    r->line = L->row_line;
}

static void on_row(int c, void *data)
{
    struct loader *L = data;
    (void)c;
    if (!sb_builder_failed(L->b)) {
        if (L->row_overflow)
            fail(L, 0, "row has more than %d fields", MAX_COLS);
        else if (!L->have_header)
            read_header(L);
        else if (L->toposort)
            save_row(L);
        else
            read_row(L);
    }
    L->n_fld = 0;
    L->row_len = 0;
    L->row_overflow = 0;
}

static void feed(struct loader *L, struct csv_parser *p, const char *buf, size_t n)
{
    size_t pos = 0;
    while (pos < n && !sb_builder_failed(L->b)) {
        const char *nl = memchr(buf + pos, '\n', n - pos);
        size_t len = nl ? (size_t)(nl - (buf + pos)) + 1 : n - pos;
        if (csv_parse(p, buf + pos, len, on_field, on_row, L) != len) {
            fail(L, 0, "CSV error: %s", csv_strerror(csv_error(p)));
            return;
        }
        pos += len;
        L->line++;
    }
    if (!sb_builder_failed(L->b))
        csv_fini(p, on_field, on_row, L);
}

/* --toposort, pass 2: the saved rows' inputs as a graph (CSR by consumer),
 * ordered by Kahn's algorithm taking the smallest file id first (a file
 * already in order keeps it), then built in that order.  A cycle is refused
 * with its rows. */
static void restore(struct loader *L, const struct saved *r)
{
    size_t len = r->n_fld ? r->off[r->n_fld - 1] + strlen(r->buf + r->off[r->n_fld - 1]) + 1 : 0;
    if (len > L->row_cap) {
        L->row_cap = len;
        L->rowbuf = sb_xrealloc(L->rowbuf, L->row_cap);
    }
    memcpy(L->rowbuf, r->buf, len);
    memcpy(L->fld_off, r->off, r->n_fld * sizeof *r->off);
    L->n_fld = r->n_fld;
    L->row_line = r->line;
}

/* The ids of field c of the restored row, appended to in[]. */
static int saved_ids(struct loader *L, enum col c, uint32_t n, uint32_t **in, uint32_t *k,
                     uint32_t *cap)
{
    for (const char *s = field(L, c); *s;) {
        while (*s == ' ')
            s++;
        size_t len = strcspn(s, " ");
        char tok[32];
        uint64_t x;
        if (!len)
            break;
        if (len >= sizeof tok || (memcpy(tok, s, len), tok[len] = 0, parse_u64(tok, UINT32_MAX, &x)))
            return fail(L, fnum(L, c), "input '%.20s' is not a node id", s);
        if (x >= n)
            return fail(L, fnum(L, c), "input %s is not a row of the file (ids "
                                       "are 0..%u)", tok, n - 1);
        if (*k == *cap)
            *in = sb_xrealloc(*in, (*cap *= 2) * sizeof **in);
        (*in)[(*k)++] = (uint32_t)x;
        s += len;
    }
    return 0;
}

/* Inputs and after edges both order the rows. */
static int saved_inputs(struct loader *L, uint32_t **off, uint32_t **in)
{
    uint32_t n = L->n_saved, cap = n + 16, k = 0;
    *off = sb_xmalloc(((size_t)n + 1) * sizeof **off);
    *in = sb_xmalloc(cap * sizeof **in);
    for (uint32_t v = 0; v < n; v++) {
        restore(L, &L->saved[v]);
        (*off)[v] = k;
        if (saved_ids(L, COL_INPUTS, n, in, &k, &cap) ||
            (L->field_of[COL_AFTER] >= 0 && saved_ids(L, COL_AFTER, n, in, &k, &cap)))
            return -1;
    }
    (*off)[n] = k;
    return 0;
}

/* Rows left unplaced hold a cycle: walk inputs among them until one repeats. */
static int report_cycle(struct loader *L, const uint32_t *off, const uint32_t *in,
                        const uint32_t *left)
{
    uint32_t n = L->n_saved, v = 0;
    while (v < n && !left[v])
        v++;
    uint32_t *seen = sb_xcalloc((size_t)n + 1, sizeof *seen), step = 1;
    while (!seen[v]) {
        seen[v] = step++;
        uint32_t next = v;
        for (uint32_t e = off[v]; e < off[v + 1] && next == v; e++)
            if (left[in[e]])
                next = in[e];
        if (next == v) /* unreachable: an unplaced row has an unplaced input */
            break;
        v = next;
    }
    char msg[300];
    size_t k = 0;
    uint32_t start = v;
    do {
        k += (size_t)snprintf(msg + k, sizeof msg - k, "%s%u (line %u)", k ? " reads " : "", v,
                              L->saved[v].line);
        uint32_t next = v;
        for (uint32_t e = off[v]; e < off[v + 1] && next == v; e++)
            if (left[in[e]] && seen[in[e]])
                next = in[e];
        v = next;
    } while (v != start && k < sizeof msg - 40);
    snprintf(msg + k, sizeof msg - k, " reads %u", start);
    free(seen);
    L->row_line = L->saved[start].line;
    return fail(L, fnum(L, COL_INPUTS), "the inputs form a cycle: %s", msg);
}

static void toposort_build(struct loader *L)
{
    uint32_t n = L->n_saved, *off, *in;
    if (saved_inputs(L, &off, &in)) {
        free(off), free(in);
        return;
    }
    uint32_t *order = sb_xmalloc(((size_t)n + 1) * sizeof *order);
    uint32_t placed = sb_topo_order(n, off, in, order);
    L->pos_of = sb_xmalloc(((size_t)n + 1) * sizeof *L->pos_of);
    for (uint32_t v = 0; v < n; v++)
        L->pos_of[v] = UINT32_MAX;
    for (uint32_t k = 0; k < placed; k++)
        L->pos_of[order[k]] = k;
    if (placed < n) {
        uint32_t *left = sb_xmalloc(((size_t)n + 1) * sizeof *left);
        for (uint32_t v = 0; v < n; v++)
            left[v] = L->pos_of[v] == UINT32_MAX;
        report_cycle(L, off, in, left);
        free(left);
    }
    for (uint32_t k = 0; k < placed && placed == n && !sb_builder_failed(L->b); k++) {
        restore(L, &L->saved[order[k]]);
        read_row(L);
    }
    free(off), free(in), free(order);
}

/* ---- metadata ------------------------------------------------------------- */

/* "# ranks=" sets every collective's default group size (docs/cost-model.md):
 * a value the cost model cannot read would silently make every ring
 * collective free, so it is refused like a bad group field. */
static int check_ranks_meta(struct loader *L, const char *k, const char *val)
{
    uint64_t v;
    size_t kl = strlen(k);
    while (kl && (k[kl - 1] == ' ' || k[kl - 1] == '\t'))
        kl--;
    if (kl != 5 || strncmp(k, "ranks", 5) != 0)
        return 0;
    L->row_line = L->line;
    if (k[5])
        return fail(L, 0, "metadata 'ranks': no space before '=' ('# ranks=N')");
    if (parse_u64(val, UINT32_MAX - 1, &v) != 0 || v < 1)
        return fail(L, 0, "metadata ranks '%s' is not a rank count in 1..2^32-2", val);
    return 0;
}

/* One "# key=value" line (a plain comment has no '='). */
static int meta_line(struct loader *L, const char *line, size_t len)
{
    while (len && (*line == '#' || *line == ' ' || *line == '\t'))
        line++, len--;
    while (len && (line[len - 1] == '\r' || line[len - 1] == ' '))
        len--;
    const char *eq = memchr(line, '=', len);
    if (!eq)
        return 0;
    size_t kl = (size_t)(eq - line), vl = len - kl - 1;
    char *key = memcpy(sb_xcalloc(kl + 1, 1), line, kl);
    char *val = memcpy(sb_xcalloc(vl + 1, 1), eq + 1, vl);
    sb_builder_meta(L->b, key, val);
    int rc = check_ranks_meta(L, key, val);
    free(key);
    free(val);
    return rc;
}

static const char *skip_metadata(struct loader *L, const char *buf, const char *end)
{
    while (buf < end) {
        const char *nl = memchr(buf, '\n', (size_t)(end - buf));
        const char *eol = nl ? nl : end;
        const char *t = buf;
        while (t < eol && (*t == ' ' || *t == '\t' || *t == '\r'))
            t++;
        if (t < eol && *t != '#')
            break;
        if (t < eol && meta_line(L, t, (size_t)(eol - t)))
            return NULL;
        buf = nl ? nl + 1 : end;
        L->line++;
    }
    return buf;
}

/* One row per line is the common case: sizing every array for that once saves
 * the copies of repeated doubling and the rehashes of the name table, which
 * made loading 10^6 nodes 2.6x slower per node than 10^4 before. */
static void presize(struct loader *L, const char *buf, size_t n)
{
    uint64_t lines = 1;
    for (size_t i = 0; i < n; i++)
        lines += buf[i] == '\n';
    /* a row is at least 8 bytes ("0,a,nop,"): blank lines are not nodes */
    if (lines > n / 8 + 1)
        lines = n / 8 + 1;
    uint32_t want = lines < UINT32_MAX / 4 ? (uint32_t)lines : UINT32_MAX / 4;
    if (want < 1024)
        want = 1024;
    /* graphs average one to two inputs per node; the names are part of the
     * text (the arena's pages past them are never touched) */
    sb_builder_reserve(L->b, want, (uint64_t)want * 2, n + 1);
    sb_builder_prefault(L->b);
}

/* ---- driver ---------------------------------------------------------------- */

static int nul_byte(const char *path, const char *buf, size_t n, struct sb_err *e)
{
    /* a NUL would silently end a field early in every C string after libcsv */
    const char *nul = memchr(buf, 0, n);
    if (!nul)
        return 0;
    unsigned line = 1, col = 1;
    for (const char *c = buf; c < nul; c++)
        line += *c == '\n', col = *c == '\n' ? 1 : col + 1;
    return sb_errf(e, "%s:%u:%u: NUL byte: not a text file", path, line, col);
}

struct sb_graph *sb_csv_load_mem(const char *path, const char *buf, size_t n,
                                 struct sb_err *e)
{
    return sb_csv_load_mem_sorted(path, buf, n, 0, e);
}

struct sb_graph *sb_csv_load_mem_sorted(const char *path, const char *buf, size_t n,
                                        int toposort, struct sb_err *e)
{
    /* a UTF-8 byte-order mark (spreadsheet exports write one) is not data */
    if (n >= 3 && !memcmp(buf, "\xef\xbb\xbf", 3))
        buf += 3, n -= 3;
    if (nul_byte(path, buf, n, e))
        return NULL;
    struct loader L = {.path = path, .line = 1, .toposort = toposort, .name_field = UINT32_MAX};
    L.b = sb_builder_new(path, SB_LOC_LINE, e);
    const char *body = skip_metadata(&L, buf, buf + n);
    if (body) {
        struct csv_parser p;
        presize(&L, body, (size_t)(buf + n - body));
        SB_ASSERT(csv_init(&p, CSV_APPEND_NULL) == 0);
        /* libcsv grows a field's buffer by blk_size at a time (128 bytes by
         * default): a 10 MB field would be copied ~80,000 times */
        csv_set_blk_size(&p, 1 << 20);
        feed(&L, &p, body, (size_t)(buf + n - body));
        csv_free(&p);
    }
    if (L.toposort && !sb_builder_failed(L.b) && L.n_saved)
        toposort_build(&L);
    for (uint32_t i = 0; i < L.n_saved; i++)
        free(L.saved[i].buf), free(L.saved[i].off);
    free(L.saved);
    free(L.pos_of);
    free(L.rowbuf);
    if (!sb_builder_failed(L.b) && !L.have_header) {
        L.row_line = L.line;
        fail(&L, 0, "empty file: no header row");
    } else if (!sb_builder_failed(L.b) && !sb_builder_n_nodes(L.b)) {
        L.row_line = L.line;
        fail(&L, 0, "no nodes after the header");
    }
    if (sb_builder_failed(L.b)) {
        sb_builder_free(L.b);
        return NULL;
    }
    return sb_builder_finish(L.b);
}
