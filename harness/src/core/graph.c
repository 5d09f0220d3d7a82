/* Graph storage and the format v1 loader (docs/workload-format.md).
 *
 * The file is read whole, "# key=value" metadata lines before the header are
 * taken off by hand (they are not CSV), and the rest is fed to libcsv one line at
 * a time so that every row knows the line it started on.  Rows arrive in file
 * order, which is the topological order, so the predecessor CSR is built as rows
 * are read and the successor CSR by one counting pass at the end. */
#define _POSIX_C_SOURCE 200809L
#include "core.h"
#include "import/import.h"

#include <csv.h>
#include <errno.h>
#include <math.h>
#include <string.h>

/* ---- names of enums ---------------------------------------------------- */

static const char *const kind_names[SB_KIND_COUNT] = {
    "compute", "nop", "input", "start", "done"};

static const char *const coll_names[SB_COLL_COUNT] = {
    "", "all_gather", "reduce_scatter", "all_reduce", "all_to_all",
    "collective_permute", "send", "recv", "send_host", "recv_host", "copy"};

const char *sb_kind_name(enum sb_kind k)
{
    return (unsigned)k < SB_KIND_COUNT ? kind_names[k] : "?";
}

const char *sb_coll_name(enum sb_coll c)
{
    return (unsigned)c < SB_COLL_COUNT ? coll_names[c] : "?";
}

int sb_kind_parse(const char *s, enum sb_kind *out)
{
    for (int k = 0; k < SB_KIND_COUNT; k++)
        if (strcmp(s, kind_names[k]) == 0) {
            *out = (enum sb_kind)k;
            return 0;
        }
    return -1;
}

int sb_coll_parse(const char *s, enum sb_coll *out)
{
    for (int c = 1; c < SB_COLL_COUNT; c++)
        if (strcmp(s, coll_names[c]) == 0) {
            *out = (enum sb_coll)c;
            return 0;
        }
    return -1;
}

/* ---- columns ----------------------------------------------------------- */

enum col {
    COL_ID, COL_NAME, COL_KIND, COL_INPUTS, COL_OP, COL_COST_US, COL_OUT_BYTES,
    COL_COLL, COL_COMM_BYTES, COL_GROUP, COL_COMM_US, COL_DEVICE, COL_FLAGS, COL_UNITS,
    COL_COUNT,
    COL_EXTRA = COL_COUNT,       /* an x_ column: read and ignored */
    COL_DEV_COST = COL_COUNT + 1 /* cost_us.<device> (docs/machines.md) */
};

static const char *const col_names[COL_COUNT] = {
    "id", "name", "kind", "inputs", "op", "cost_us", "out_bytes", "coll",
    "comm_bytes", "group", "comm_us", "device", "flags", "units"};

#define N_REQUIRED_COLS 4 /* id, name, kind, inputs */
#define MAX_COLS 256      /* a header wider than this is surely not a graph */

/* ---- loader state ------------------------------------------------------ */

struct loader {
    const char *path;
    struct sb_err *e;
    int failed;
    uint32_t line;     /* line being fed to libcsv, 1-based */
    uint32_t row_line; /* line the current row started on */
    int have_header;
    uint32_t n_cols;
    uint8_t col_of[MAX_COLS];   /* field index -> enum col */
    int field_of[COL_COUNT];    /* enum col -> field index, -1 if absent */
    uint32_t dev_cost_field[SB_MAX_DEVICES]; /* field of each cost_us.<device> */
    /* the current row: fields NUL-terminated in rowbuf */
    char *rowbuf;
    size_t row_len, row_cap;
    size_t fld_off[MAX_COLS];
    uint32_t n_fld;
    int row_overflow;
    /* the graph being built */
    struct sb_graph *g;
    uint32_t cap;      /* node capacity of every per-node array */
    uint32_t n_edges, edge_cap;
    uint32_t *line_of; /* [cap] for messages about earlier rows */
    size_t names_len, names_cap;
    uint64_t *name_tab; /* open addressing, see name_slot */
    uint32_t name_tab_cap;
    uint32_t *op_tab;   /* open addressing, op index + 1 */
    uint32_t op_tab_cap, ops_cap;
};

static int fail(struct loader *L, uint32_t field, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail(struct loader *L, uint32_t field, const char *fmt, ...)
{
    if (L->failed)
        return -1;
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (field)
        sb_errf(L->e, "%s:%u:%u: %s", L->path, L->row_line, field, msg);
    else
        sb_errf(L->e, "%s:%u: %s", L->path, L->row_line, msg);
    L->failed = 1;
    return -1;
}

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

/* ---- growth ------------------------------------------------------------ */

static void grow_nodes(struct loader *L, uint32_t want)
{
    struct sb_graph *g = L->g;
    uint32_t cap = want > L->cap ? want : L->cap ? L->cap * 2 : 1024;
    SB_ASSERT(cap > L->cap);
    g->kind = sb_xrealloc(g->kind, cap);
    g->coll = sb_xrealloc(g->coll, cap);
    g->flags = sb_xrealloc(g->flags, cap * sizeof *g->flags);
    g->group_size = sb_xrealloc(g->group_size, cap * sizeof *g->group_size);
    g->pred_off = sb_xrealloc(g->pred_off, ((size_t)cap + 1) * sizeof *g->pred_off);
    g->partner = sb_xrealloc(g->partner, cap * sizeof *g->partner);
    g->op = sb_xrealloc(g->op, cap * sizeof *g->op);
    g->cost_us = sb_xrealloc(g->cost_us, cap * sizeof *g->cost_us);
    g->comm_us = sb_xrealloc(g->comm_us, cap * sizeof *g->comm_us);
    g->out_bytes = sb_xrealloc(g->out_bytes, cap * sizeof *g->out_bytes);
    g->comm_bytes = sb_xrealloc(g->comm_bytes, cap * sizeof *g->comm_bytes);
    g->name_off = sb_xrealloc(g->name_off, cap * sizeof *g->name_off);
    g->device = sb_xrealloc(g->device, cap * sizeof *g->device);
    g->units_used = sb_xrealloc(g->units_used, cap * sizeof *g->units_used);
    if (g->n_dev_cost)
        g->dev_cost_us = sb_xrealloc(g->dev_cost_us,
                                     (size_t)cap * g->n_dev_cost * sizeof *g->dev_cost_us);
    L->line_of = sb_xrealloc(L->line_of, cap * sizeof *L->line_of);
    L->cap = cap;
}

static void push_edge(struct loader *L, uint32_t src)
{
    if (L->n_edges == L->edge_cap) {
        L->edge_cap = L->edge_cap ? L->edge_cap * 2 : 4096;
        L->g->pred = sb_xrealloc(L->g->pred, (size_t)L->edge_cap * sizeof(uint32_t));
    }
    L->g->pred[L->n_edges++] = src;
}

/* Name table slots hold (high 32 bits of the hash << 32) | (id + 1), 0 = empty,
 * so that a probe compares hashes before it touches the names arena: at 10^6
 * nodes the arena is far out of cache and each strcmp would be a miss. */
static uint64_t name_slot(uint64_t h, uint32_t id)
{
    return (h & 0xffffffff00000000ull) | ((uint64_t)id + 1);
}

static void name_tab_insert(uint64_t *tab, uint32_t cap, uint64_t h, uint32_t id)
{
    uint32_t i = (uint32_t)h & (cap - 1);
    while (tab[i])
        i = (i + 1) & (cap - 1);
    tab[i] = name_slot(h, id);
}

static void grow_name_tab(struct loader *L)
{
    uint32_t cap = L->name_tab_cap ? L->name_tab_cap * 2 : 2048;
    uint64_t *tab = sb_xcalloc(cap, sizeof *tab);
    for (uint32_t i = 0; i < L->name_tab_cap; i++) {
        uint64_t slot = L->name_tab[i];
        if (!slot)
            continue;
        uint32_t id = (uint32_t)slot - 1;
        name_tab_insert(tab, cap, hash_str(L->g->names + L->g->name_off[id]), id);
    }
    free(L->name_tab);
    L->name_tab = tab;
    L->name_tab_cap = cap;
}

/* Returns the node that already has this name, or SB_NONE. */
static uint32_t name_find(const struct loader *L, const char *s, uint64_t h)
{
    uint32_t i = (uint32_t)h & (L->name_tab_cap - 1);
    uint64_t hi = h & 0xffffffff00000000ull;
    for (; L->name_tab[i]; i = (i + 1) & (L->name_tab_cap - 1)) {
        uint64_t slot = L->name_tab[i];
        uint32_t id = (uint32_t)slot - 1;
        if ((slot & 0xffffffff00000000ull) == hi &&
            strcmp(L->g->names + L->g->name_off[id], s) == 0)
            return id;
    }
    return SB_NONE;
}

static void name_add(struct loader *L, uint32_t id, const char *s, uint64_t h)
{
    size_t n = strlen(s) + 1;
    if (L->names_len + n > L->names_cap) {
        L->names_cap = (L->names_len + n) * 2;
        L->g->names = sb_xrealloc(L->g->names, L->names_cap);
    }
    memcpy(L->g->names + L->names_len, s, n);
    L->g->name_off[id] = L->names_len;
    L->names_len += n;
    if ((uint64_t)(id + 1) * 2 > L->name_tab_cap)
        grow_name_tab(L);
    name_tab_insert(L->name_tab, L->name_tab_cap, h, id);
}

static uint32_t op_intern(struct loader *L, const char *s)
{
    struct sb_graph *g = L->g;
    if (!*s)
        return 0;
    if ((uint64_t)(g->n_ops + 1) * 2 > L->op_tab_cap) {
        uint32_t cap = L->op_tab_cap ? L->op_tab_cap * 2 : 64;
        uint32_t *tab = sb_xcalloc(cap, sizeof *tab);
        for (uint32_t k = 1; k < g->n_ops; k++) {
            uint32_t i = (uint32_t)hash_str(g->op_names[k]) & (cap - 1);
            while (tab[i])
                i = (i + 1) & (cap - 1);
            tab[i] = k + 1;
        }
        free(L->op_tab);
        L->op_tab = tab;
        L->op_tab_cap = cap;
    }
    uint32_t i = (uint32_t)hash_str(s) & (L->op_tab_cap - 1);
    for (; L->op_tab[i]; i = (i + 1) & (L->op_tab_cap - 1))
        if (strcmp(g->op_names[L->op_tab[i] - 1], s) == 0)
            return L->op_tab[i] - 1;
    if (g->n_ops == L->ops_cap) {
        L->ops_cap *= 2;
        g->op_names = sb_xrealloc(g->op_names, L->ops_cap * sizeof *g->op_names);
    }
    g->op_names[g->n_ops] = sb_xstrdup(s);
    L->op_tab[i] = g->n_ops + 1;
    return g->n_ops++;
}

/* ---- field parsers ------------------------------------------------------ */

#define SB_MAX_BYTES (1ull << 50)
#define SB_MAX_TOTAL_BYTES (1ull << 62)

/* Non-negative decimal integer, no sign, no trailing text. */
static int parse_u64(const char *s, uint64_t max, uint64_t *out)
{
    if (*s < '0' || *s > '9')
        return -1;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (*end || errno == ERANGE || v > max)
        return -1;
    *out = v;
    return 0;
}

/* Finite, non-negative, no trailing text.  Says which rule broke. */
static const char *parse_nonneg(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
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
    if (v > 1e12)
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
    return (uint32_t)L->field_of[c] + 1;
}

static int read_double(struct loader *L, enum col c, double def, double *out)
{
    const char *s = field(L, c);
    if (!*s) {
        *out = def;
        return 0;
    }
    const char *why = parse_nonneg(s, out);
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
    /* 2^50 bytes (1 PiB) per buffer; the loader also bounds the sum of all
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

static int read_inputs(struct loader *L, uint32_t id)
{
    const char *s = field(L, COL_INPUTS);
    char tok[32];
    while (*s) {
        while (*s == ' ')
            s++;
        size_t len = strcspn(s, " ");
        if (!len)
            break;
        uint64_t v;
        if (len >= sizeof tok)
            return fail(L, fnum(L, COL_INPUTS), "input id too long");
        memcpy(tok, s, len);
        tok[len] = 0;
        if (parse_u64(tok, UINT32_MAX, &v) != 0)
            return fail(L, fnum(L, COL_INPUTS), "input '%s' is not a node id", tok);
        if (v >= id)
            return fail(L, fnum(L, COL_INPUTS),
                        "input %s is not an earlier row (inputs must refer to "
                        "ids below %u)", tok, id);
        push_edge(L, (uint32_t)v);
        s += len;
    }
    return 0;
}

/* ---- rows --------------------------------------------------------------- */

/* cost_us.<device>: t(v, device) given per node, matched to the machine's
 * device names when a machine is applied (docs/machines.md). */
static int read_dev_cost_header(struct loader *L, uint32_t f, const char *dev)
{
    struct sb_graph *g = L->g;
    for (uint32_t k = 0; k < g->n_dev_cost; k++)
        if (!strcmp(g->dev_cost_name[k], dev))
            return fail(L, f + 1, "duplicate column 'cost_us.%s'", dev);
    if (g->n_dev_cost == SB_MAX_DEVICES)
        return fail(L, f + 1, "more than %d cost_us.<device> columns", SB_MAX_DEVICES);
    g->dev_cost_name = sb_xrealloc(g->dev_cost_name,
                                   (g->n_dev_cost + 1) * sizeof *g->dev_cost_name);
    g->dev_cost_name[g->n_dev_cost] = sb_xstrdup(dev);
    L->dev_cost_field[g->n_dev_cost++] = f;
    L->col_of[f] = COL_DEV_COST;
    g->dev_cost_us = sb_xrealloc(g->dev_cost_us, ((size_t)L->cap * g->n_dev_cost + 1) *
                                                     sizeof *g->dev_cost_us);
    return 0;
}

/* units (r(v), default 1) and the cost_us.<device> fields (-1 when empty). */
static int read_placement(struct loader *L, uint32_t id)
{
    struct sb_graph *g = L->g;
    const char *s = field(L, COL_UNITS);
    uint64_t u = 1;
    if (*s && (parse_u64(s, 1000000, &u) != 0 || u < 1))
        return fail(L, fnum(L, COL_UNITS), "units '%s' is not an integer in 1..10^6", s);
    g->units_used[id] = (uint32_t)u;
    for (uint32_t k = 0; k < g->n_dev_cost; k++) {
        const char *c = L->rowbuf + L->fld_off[L->dev_cost_field[k]];
        double *out = &g->dev_cost_us[(size_t)id * g->n_dev_cost + k];
        const char *why = *c ? parse_nonneg(c, out) : NULL;
        if (!*c)
            *out = -1;
        if (why)
            return fail(L, L->dev_cost_field[k] + 1, "cost_us.%s '%s' %s",
                        g->dev_cost_name[k], c, why);
    }
    return 0;
}

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
            if (read_dev_cost_header(L, f, s + 8))
                return -1;
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
    L->n_cols = L->n_fld;
    L->have_header = 1;
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
        return fail(L, fnum(L, COL_ID), "duplicate id %s (first on line %u)", s,
                    L->line_of[v]);
    if (v > id)
        return fail(L, fnum(L, COL_ID),
                    "id %s is not dense: expected %u (ids are 0..N-1 in file order)",
                    s, id);
    return 0;
}

static int read_name(struct loader *L, uint32_t id)
{
    const char *s = field(L, COL_NAME);
    if (!*s)
        return fail(L, fnum(L, COL_NAME), "empty name");
    uint64_t h = hash_str(s);
    uint32_t prev = L->name_tab_cap ? name_find(L, s, h) : SB_NONE;
    if (prev != SB_NONE)
        return fail(L, fnum(L, COL_NAME), "duplicate name '%s' (first on line %u)",
                    s, L->line_of[prev]);
    name_add(L, id, s, h);
    return 0;
}

static int read_kind_coll(struct loader *L, uint32_t id)
{
    struct sb_graph *g = L->g;
    enum sb_kind k;
    enum sb_coll c = SB_COLL_NONE;
    const char *ks = field(L, COL_KIND);
    const char *cs = field(L, COL_COLL);
    if (sb_kind_parse(ks, &k) != 0)
        return fail(L, fnum(L, COL_KIND),
                    "unknown kind '%s' (known: compute, nop, input, start, done)", ks);
    if (*cs && sb_coll_parse(cs, &c) != 0)
        return fail(L, fnum(L, COL_COLL), "unknown coll '%s'", cs);
    if (k == SB_KIND_START && c == SB_COLL_NONE)
        return fail(L, fnum(L, COL_KIND), "start node '%s' has no coll",
                    field(L, COL_NAME));
    if (c != SB_COLL_NONE && k != SB_KIND_START && k != SB_KIND_DONE)
        return fail(L, fnum(L, COL_COLL), "coll '%s' on a %s node", cs, ks);
    g->kind[id] = (uint8_t)k;
    g->coll[id] = (uint8_t)c;
    return 0;
}

/* A done's first input is its start, and each start has exactly one done. */
static int link_done(struct loader *L, uint32_t id)
{
    struct sb_graph *g = L->g;
    uint32_t p0 = g->pred_off[id];
    if (L->n_edges == p0)
        return fail(L, fnum(L, COL_INPUTS), "done has no inputs: its first input "
                                            "must be its start");
    uint32_t s = g->pred[p0];
    if (g->kind[s] != SB_KIND_START)
        return fail(L, fnum(L, COL_INPUTS),
                    "first input %u of a done is a %s node, not a start", s,
                    sb_kind_name(g->kind[s]));
    if (g->partner[s] != SB_NONE)
        return fail(L, fnum(L, COL_INPUTS),
                    "start %u already has a done (line %u)", s,
                    L->line_of[g->partner[s]]);
    if (g->coll[id] != SB_COLL_NONE && g->coll[id] != g->coll[s])
        return fail(L, fnum(L, COL_COLL), "done's coll '%s' differs from its start's '%s'",
                    sb_coll_name(g->coll[id]), sb_coll_name(g->coll[s]));
    if (g->out_bytes[id])
        return fail(L, fnum(L, COL_OUT_BYTES),
                    "a done owns no buffer (it aliases its start): put out_bytes on the start");
    g->coll[id] = g->coll[s];
    g->partner[s] = id;
    g->partner[id] = s;
    return 0;
}

static int check_kind_rules(struct loader *L, uint32_t id)
{
    struct sb_graph *g = L->g;
    uint32_t n_in = L->n_edges - g->pred_off[id];
    if (g->kind[id] == SB_KIND_INPUT && n_in)
        return fail(L, fnum(L, COL_INPUTS), "an input node has no inputs");
    if ((g->flags[id] & SB_FLAG_ALIAS) && !n_in)
        return fail(L, fnum(L, COL_FLAGS), "an alias node needs an input to view");
    if ((g->flags[id] & SB_FLAG_ALIAS) && g->out_bytes[id])
        return fail(L, fnum(L, COL_OUT_BYTES), "an alias node owns no buffer");
    if (g->kind[id] == SB_KIND_DONE)
        return link_done(L, id);
    return 0;
}

static int read_device(struct loader *L, uint32_t id)
{
    const char *s = field(L, COL_DEVICE);
    uint64_t v;
    L->g->device[id] = -1;
    if (!*s)
        return 0;
    if (parse_u64(s, INT32_MAX, &v) != 0)
        return fail(L, fnum(L, COL_DEVICE), "device '%s' is not an index in 0..2^31-1", s);
    L->g->device[id] = (int32_t)v;
    return 0;
}

static int read_row(struct loader *L)
{
    struct sb_graph *g = L->g;
    if (L->n_fld != L->n_cols)
        return fail(L, 0, "row has %u fields, the header has %u", L->n_fld, L->n_cols);
    uint32_t id = g->v.n_nodes;
    if (id == UINT32_MAX - 1)
        return fail(L, 0, "too many nodes");
    if (id == L->cap)
        grow_nodes(L, 0);
    L->line_of[id] = L->row_line;
    g->pred_off[id] = L->n_edges;
    g->partner[id] = SB_NONE;
    if (read_id(L, id) || read_name(L, id) || read_kind_coll(L, id) ||
        read_inputs(L, id) || read_double(L, COL_COST_US, 0, &g->cost_us[id]) ||
        read_u64(L, COL_OUT_BYTES, &g->out_bytes[id]) ||
        read_u64(L, COL_COMM_BYTES, &g->comm_bytes[id]) ||
        read_group(L, &g->group_size[id]) ||
        read_double(L, COL_COMM_US, -1, &g->comm_us[id]) || read_device(L, id) ||
        read_flags(L, &g->flags[id]) || read_placement(L, id))
        return -1;
    g->op[id] = op_intern(L, field(L, COL_OP));
    g->v.n_nodes = id + 1;
    g->pred_off[id + 1] = L->n_edges;
    return check_kind_rules(L, id);
}

/* ---- libcsv callbacks ---------------------------------------------------- */

static void on_field(void *s, size_t len, void *data)
{
    struct loader *L = data;
    if (L->failed)
        return;
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
    L->fld_off[L->n_fld++] = L->row_len;
    if (len)
        memcpy(L->rowbuf + L->row_len, s, len);
    L->row_len += len;
    L->rowbuf[L->row_len++] = 0;
}

static void on_row(int c, void *data)
{
    struct loader *L = data;
    (void)c;
    if (!L->failed) {
        if (L->row_overflow)
            fail(L, 0, "row has more than %d fields", MAX_COLS);
        else if (!L->have_header)
            read_header(L);
        else
            read_row(L);
    }
    L->n_fld = 0;
    L->row_len = 0;
    L->row_overflow = 0;
}

/* ---- metadata and driver ------------------------------------------------- */

static void meta_add(struct sb_graph *g, const char *line, size_t len)
{
    while (len && (*line == '#' || *line == ' ' || *line == '\t'))
        line++, len--;
    while (len && (line[len - 1] == '\r' || line[len - 1] == ' '))
        len--;
    const char *eq = memchr(line, '=', len);
    if (!eq)
        return; /* a plain comment */
    g->meta_key = sb_xrealloc(g->meta_key, (g->n_meta + 1) * sizeof *g->meta_key);
    g->meta_val = sb_xrealloc(g->meta_val, (g->n_meta + 1) * sizeof *g->meta_val);
    size_t kl = (size_t)(eq - line);
    g->meta_key[g->n_meta] = memcpy(sb_xcalloc(kl + 1, 1), line, kl);
    size_t vl = len - kl - 1;
    g->meta_val[g->n_meta] = memcpy(sb_xcalloc(vl + 1, 1), eq + 1, vl);
    g->n_meta++;
}

const char *sb_graph_meta(const struct sb_graph *g, const char *key)
{
    for (uint32_t i = 0; i < g->n_meta; i++)
        if (strcmp(g->meta_key[i], key) == 0)
            return g->meta_val[i];
    return NULL;
}

static void build_succ(struct sb_graph *g)
{
    uint32_t n = g->v.n_nodes, m = g->v.n_edges;
    g->succ_off = sb_xcalloc((size_t)n + 1, sizeof *g->succ_off);
    g->succ = sb_xmalloc((size_t)m * sizeof *g->succ + 1);
    for (uint32_t e = 0; e < m; e++)
        g->succ_off[g->pred[e] + 1]++;
    for (uint32_t i = 0; i < n; i++)
        g->succ_off[i + 1] += g->succ_off[i];
    uint32_t *fill = sb_xmalloc(((size_t)n + 1) * sizeof *fill);
    memcpy(fill, g->succ_off, ((size_t)n + 1) * sizeof *fill);
    for (uint32_t v = 0; v < n; v++)
        for (uint32_t e = g->pred_off[v]; e < g->pred_off[v + 1]; e++)
            g->succ[fill[g->pred[e]]++] = v;
    free(fill);
}

/* The machine of a run without --machine: one GPU, no memory limit. */
static const char *const one_name[] = {"dev0"};
static const uint8_t one_kind[] = {SB_DEV_GPU};
static const uint64_t one_cap[] = {SB_MEM_UNLIMITED};
static const uint32_t one_units[] = {1};
static const double one_zero[] = {0};
static const uint8_t one_read[] = {1};
const struct sb_machine_view sb_machine_one = {
    .size = sizeof(struct sb_machine_view),
    .n_devices = 1,
    .dev_name = one_name,
    .dev_kind = one_kind,
    .mem_cap_bytes = one_cap,
    .units = one_units,
    .link_gbps = one_zero,
    .link_lat_us = one_zero,
    .can_read = one_read,
};

static void fill_view(struct sb_graph *g)
{
    struct sb_graph_view *v = &g->v;
    if (!g->units_used) {
        g->units_used = sb_xmalloc(((size_t)v->n_nodes + 1) * sizeof *g->units_used);
        for (uint32_t i = 0; i < v->n_nodes; i++)
            g->units_used[i] = 1;
    }
    /* one device: t(v, 0) is dur_us itself */
    v->machine = &sb_machine_one;
    v->dev_dur_us = g->dur_us;
    v->units_used = g->units_used;
    v->kind = g->kind;
    v->coll = g->coll;
    v->flags = g->flags;
    v->cost_us = g->cost_us;
    v->out_bytes = g->out_bytes;
    v->comm_bytes = g->comm_bytes;
    v->group_size = g->group_size;
    v->comm_us = g->comm_us;
    v->device = g->device;
    v->pred_off = g->pred_off;
    v->pred = g->pred;
    v->succ_off = g->succ_off;
    v->succ = g->succ;
    v->partner = g->partner;
    v->op = g->op;
    v->n_ops = g->n_ops;
    v->op_names = (const char *const *)g->op_names;
    v->names = g->names;
    v->name_off = g->name_off;
    v->dur_us = g->dur_us;
    v->host = &sb_host_services;
}

static int finish(struct loader *L)
{
    struct sb_graph *g = L->g;
    if (!L->have_header) {
        L->row_line = L->line;
        return fail(L, 0, "empty file: no header row");
    }
    if (g->v.n_nodes == 0) {
        L->row_line = L->line;
        return fail(L, 0, "no nodes after the header");
    }
    for (uint32_t i = 0; i < g->v.n_nodes; i++)
        if (g->kind[i] == SB_KIND_START && g->partner[i] == SB_NONE) {
            L->row_line = L->line_of[i];
            return fail(L, 0, "start '%s' has no done", g->names + g->name_off[i]);
        }
    g->v.n_edges = L->n_edges;
    if (!g->pred)
        g->pred = sb_xmalloc(sizeof *g->pred); /* plugins may take &pred[0] */
    build_succ(g);
    g->dur_us = sb_xcalloc(g->v.n_nodes, sizeof *g->dur_us);
    fill_view(g);
    return 0;
}

static void feed(struct loader *L, struct csv_parser *p, const char *buf, size_t n)
{
    size_t pos = 0;
    while (pos < n && !L->failed) {
        const char *nl = memchr(buf + pos, '\n', n - pos);
        size_t len = nl ? (size_t)(nl - (buf + pos)) + 1 : n - pos;
        if (csv_parse(p, buf + pos, len, on_field, on_row, L) != len) {
            fail(L, 0, "CSV error: %s", csv_strerror(csv_error(p)));
            return;
        }
        pos += len;
        L->line++;
    }
    if (!L->failed)
        csv_fini(p, on_field, on_row, L);
}

/* "# ranks=" sets every collective's default group size (docs/cost-model.md):
 * a value the cost model cannot read would silently make every ring
 * collective free, so it is refused like a bad group field.  Checks the
 * metadata line just added. */
static int check_ranks_meta(struct loader *L)
{
    struct sb_graph *g = L->g;
    uint64_t v;
    if (!g->n_meta)
        return 0;
    const char *k = g->meta_key[g->n_meta - 1], *val = g->meta_val[g->n_meta - 1];
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
        if (t < eol)
            meta_add(L->g, t, (size_t)(eol - t));
        if (t < eol && check_ranks_meta(L))
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
    uint32_t want = lines < UINT32_MAX / 4 ? (uint32_t)lines : UINT32_MAX / 4;
    grow_nodes(L, want > 1024 ? want : 1024);
    while ((uint64_t)L->cap * 2 > L->name_tab_cap)
        grow_name_tab(L);
    L->edge_cap = L->cap * 2; /* graphs average one to two inputs per node */
    L->g->pred = sb_xmalloc((size_t)L->edge_cap * sizeof *L->g->pred);
}

static char *file_stem(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t n = strlen(base);
    const char *dot = strrchr(base, '.');
    if (dot && dot != base)
        n = (size_t)(dot - base);
    return memcpy(sb_xcalloc(n + 1, 1), base, n);
}

/* The memory model sums buffers in signed 64-bit: every importer's graph must
 * keep the sum of all of them within 2^62. */
static int check_total(const struct sb_graph *g, const char *path, struct sb_err *e)
{
    uint64_t total = 0;
    for (uint32_t v = 0; v < g->v.n_nodes; v++) {
        if (g->out_bytes[v] > SB_MAX_TOTAL_BYTES - total)
            return sb_errf(e, "%s: the buffers' out_bytes sum to more than 2^62 bytes (at node "
                              "%u): memory totals would overflow", path, v);
        total += g->out_bytes[v];
    }
    return 0;
}

struct sb_graph *sb_graph_load_mem(const char *path, const char *buf, size_t n,
                                   struct sb_err *e)
{
    /* a UTF-8 byte-order mark (spreadsheet exports write one) is not data */
    if (n >= 3 && !memcmp(buf, "\xef\xbb\xbf", 3))
        buf += 3, n -= 3;
    /* a NUL would silently end a field early in every C string after libcsv */
    const char *nul = memchr(buf, 0, n);
    if (nul) {
        unsigned line = 1, col = 1;
        for (const char *c = buf; c < nul; c++)
            line += *c == '\n', col = *c == '\n' ? 1 : col + 1;
        sb_errf(e, "%s:%u:%u: NUL byte: not a text file", path, line, col);
        return NULL;
    }
    struct loader L = {0};
    struct csv_parser p;
    L.path = path;
    L.e = e;
    L.line = 1;
    L.g = sb_xcalloc(1, sizeof *L.g);
    L.ops_cap = 16;
    L.g->op_names = sb_xmalloc(L.ops_cap * sizeof *L.g->op_names);
    L.g->op_names[0] = sb_xstrdup("");
    L.g->n_ops = 1;
    const char *body = skip_metadata(&L, buf, buf + n);
    if (!body) {
        free(L.op_tab);
        sb_graph_free(L.g);
        return NULL;
    }
    presize(&L, body, (size_t)(buf + n - body));
    SB_ASSERT(csv_init(&p, CSV_APPEND_NULL) == 0);
    /* libcsv grows a field's buffer by blk_size at a time (128 bytes by
     * default): a 10 MB field would be copied ~80,000 times */
    csv_set_blk_size(&p, 1 << 20);
    feed(&L, &p, body, (size_t)(buf + n - body));
    csv_free(&p);
    if (!L.failed)
        finish(&L);
    free(L.rowbuf);
    free(L.line_of);
    free(L.name_tab);
    free(L.op_tab);
    if (L.failed) {
        sb_graph_free(L.g);
        return NULL;
    }
    if (check_total(L.g, path, e)) {
        sb_graph_free(L.g);
        return NULL;
    }
    const char *meta_name = sb_graph_meta(L.g, "name");
    L.g->name = meta_name && *meta_name ? sb_xstrdup(meta_name) : file_stem(path);
    L.g->path = sb_xstrdup(path);
    return L.g;
}

/* Other tools' formats, by file extension.  An importer returns a graph in
 * the same form as the CSV loader, with errors naming its own file and line. */
struct importer {
    const char *ext;
    struct sb_graph *(*load)(const char *path, const struct sb_import_opts *o, struct sb_err *e);
};

static struct sb_graph *load_hlo(const char *path, const struct sb_import_opts *o,
                                 struct sb_err *e)
{
    (void)o;
    return sb_hlo_load(path, e);
}

static struct sb_graph *load_chakra(const char *path, const struct sb_import_opts *o,
                                    struct sb_err *e)
{
    size_t n;
    char *buf = sb_read_file(path, &n);
    if (!buf) {
        sb_errf(e, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    struct sb_graph *g = sb_chakra_load_mem(path, (const uint8_t *)buf, n, o, e);
    free(buf);
    return g;
}

static struct sb_graph *load_astra_text(const char *path, const struct sb_import_opts *o,
                                        struct sb_err *e)
{
    size_t n;
    char *buf = sb_read_file(path, &n);
    if (!buf) {
        sb_errf(e, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    struct sb_graph *g = sb_astra_text_load_mem(path, buf, n, o, e);
    free(buf);
    return g;
}

static const struct importer importers[] = {
    {".csv", NULL}, /* format v1: sb_graph_load itself */
    {".hlo", load_hlo},
    {".et", load_chakra},       /* Chakra execution trace (workloads/importers/chakra.md) */
    {".txt", load_astra_text},  /* ASTRA-sim 1.0 text workload (astra-text.md) */
};

static const struct importer *importer_for(const char *path)
{
    size_t n = strlen(path);
    for (size_t i = 0; i < sizeof importers / sizeof importers[0]; i++) {
        size_t k = strlen(importers[i].ext);
        if (n > k && strcmp(path + n - k, importers[i].ext) == 0)
            return &importers[i];
    }
    return NULL;
}

int sb_graph_is_workload(const char *path) { return importer_for(path) != NULL; }

/* "csv, hlo": the extensions importers[] reads, for messages. */
static void list_formats(char *out, size_t n)
{
    size_t k = 0;
    out[0] = 0;
    for (size_t i = 0; i < sizeof importers / sizeof importers[0] && k < n; i++)
        k += (size_t)snprintf(out + k, n - k, "%s%s", i ? ", " : "", importers[i].ext);
}

struct sb_graph *sb_graph_load(const char *path, struct sb_err *e)
{
    return sb_graph_load_with(path, NULL, e);
}

struct sb_graph *sb_graph_load_with(const char *path, const struct sb_import_opts *opts,
                                    struct sb_err *e)
{
    struct sb_import_opts defaults;
    if (!opts) {
        sb_import_defaults(&defaults);
        opts = &defaults;
    }
    const struct importer *imp = importer_for(path);
    if (!imp) {
        char fmts[256];
        const char *dot = strrchr(path, '.'), *slash = strrchr(path, '/');
        list_formats(fmts, sizeof fmts);
        sb_errf(e, "%s: unsupported format '%s' (schedbench reads %s)", path,
                dot && (!slash || dot > slash) ? dot : "no extension", fmts);
        return NULL;
    }
    if (imp->load) {
        struct sb_graph *g = imp->load(path, opts, e);
        if (g && check_total(g, path, e)) {
            sb_graph_free(g);
            return NULL;
        }
        return g;
    }
    FILE *f = fopen(path, "rb");
    if (!f) {
        sb_errf(e, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    char *buf = NULL;
    size_t n = 0, cap = 0, got;
    do {
        if (cap - n < 65536) {
            cap = cap ? cap * 2 : 1 << 20;
            buf = sb_xrealloc(buf, cap + 1);
        }
        got = fread(buf + n, 1, cap - n, f);
        n += got;
    } while (got);
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        sb_errf(e, "%s: read error", path);
        return NULL;
    }
    buf[n] = 0;
    struct sb_graph *g = sb_graph_load_mem(path, buf, n, e);
    free(buf);
    return g;
}

void sb_graph_free(struct sb_graph *g)
{
    if (!g)
        return;
    free(g->kind);
    free(g->coll);
    free(g->flags);
    free(g->group_size);
    free(g->pred_off);
    free(g->pred);
    free(g->succ_off);
    free(g->succ);
    free(g->partner);
    free(g->op);
    free(g->cost_us);
    free(g->comm_us);
    free(g->dur_us);
    free(g->out_bytes);
    free(g->comm_bytes);
    free(g->name_off);
    free(g->device);
    free(g->units_used);
    free(g->dev_dur_us);
    for (uint32_t k = 0; k < g->n_dev_cost; k++)
        free(g->dev_cost_name[k]);
    free(g->dev_cost_name);
    free(g->dev_cost_us);
    free(g->names);
    for (uint32_t i = 0; i < g->n_ops; i++)
        free(g->op_names[i]);
    free(g->op_names);
    for (uint32_t i = 0; i < g->n_meta; i++) {
        free(g->meta_key[i]);
        free(g->meta_val[i]);
    }
    free(g->meta_key);
    free(g->meta_val);
    free(g->name);
    free(g->path);
    free(g);
}

uint32_t sb_graph_n_collectives(const struct sb_graph *g)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < g->v.n_nodes; i++)
        n += g->kind[i] == SB_KIND_START;
    return n;
}
