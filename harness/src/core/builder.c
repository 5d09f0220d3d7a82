/* The graph builder (builder.h): struct-of-arrays grown as nodes arrive, the
 * predecessor CSR filled in node order (a node's inputs follow it), the
 * successor CSR by one counting pass at the end.  Every rule a graph obeys
 * is checked here, once, for every format. */
#define _POSIX_C_SOURCE 200809L
#include "builder.h"
#include "core/scope.h"

#include <math.h>
#include <stdarg.h>
#include <string.h>

struct sb_builder {
    const char *path;
    struct sb_err *e;
    enum sb_loc loc_kind;
    int failed;
    uint32_t col[SB_BF_COUNT];
    struct sb_graph *g;
    uint32_t cap;       /* node capacity of every per-node array */
    uint32_t n_edges, edge_cap;
    uint64_t *loc_of;   /* [cap] each node's place in the input, for messages */
    size_t names_len, names_cap;
    uint64_t *name_tab; /* open addressing, see name_slot */
    uint32_t name_tab_cap;
    uint32_t *op_tab;   /* open addressing, op index + 1 */
    uint32_t op_tab_cap, ops_cap;
    uint32_t open;      /* the node whose inputs are being added, SB_NONE */
    int prefault;       /* sb_builder_prefault was called */
    uint32_t faulted;   /* then nodes below this are faulted in */
    /* joined collectives: each start's ring by its first member, and the
     * (ring, device) pairs taken, so that a join checks the ring for a
     * member on its device in O(1), not by walking it (1,024 ranks would
     * walk 10^6 members a collective) */
    uint32_t *join_ring;   /* [cap] */
    uint64_t *join_taken;  /* open addressing, ring << 32 | device + 1, 0 empty */
    uint32_t join_taken_cap, n_join_taken;
};

static void grow_after(struct sb_builder *b, uint32_t old_cap);

/* ---- messages ------------------------------------------------------------ */

static int vfail(struct sb_builder *b, uint64_t loc, uint32_t col, const char *fmt, va_list ap)
{
    if (b->failed)
        return -1;
    char msg[400];
    vsnprintf(msg, sizeof msg, fmt, ap);
    unsigned long long l = (unsigned long long)loc;
    switch (b->loc_kind) {
    case SB_LOC_NODE_ID:
        sb_errf(b->e, "%s: node id %llu: %s", b->path, l, msg);
        break;
    case SB_LOC_BYTE:
        sb_errf(b->e, "%s: byte %llu: %s", b->path, l, msg);
        break;
    default:
        if (col)
            sb_errf(b->e, "%s:%llu:%u: %s", b->path, l, col, msg);
        else
            sb_errf(b->e, "%s:%llu: %s", b->path, l, msg);
    }
    b->failed = 1;
    return -1;
}

int sb_builder_fail(struct sb_builder *b, uint64_t loc, uint32_t col, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfail(b, loc, col, fmt, ap);
    va_end(ap);
    return -1;
}

int sb_builder_failed(const struct sb_builder *b) { return b->failed; }

/* A builder check about node v's field f. */
static int nfail(struct sb_builder *b, uint32_t v, enum sb_bfield f, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int nfail(struct sb_builder *b, uint32_t v, enum sb_bfield f, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfail(b, b->loc_of[v], b->col[f], fmt, ap);
    va_end(ap);
    return -1;
}

/* "line 12", "node id 3317": where an earlier node is, for messages. */
static const char *where(const struct sb_builder *b, uint32_t v, char *buf, size_t n)
{
    static const char *const word[] = {"line", "node id", "byte"};
    snprintf(buf, n, "%s %llu", word[b->loc_kind], (unsigned long long)b->loc_of[v]);
    return buf;
}

/* ---- growth -------------------------------------------------------------- */

static void grow_nodes(struct sb_builder *b, uint32_t want)
{
    struct sb_graph *g = b->g;
    uint32_t cap = want > b->cap ? want : b->cap ? b->cap * 2 : 1024;
    SB_ASSERT(cap > b->cap);
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
    g->stream = sb_xrealloc(g->stream, cap * sizeof *g->stream);
    if (g->n_dev_cost)
        g->dev_cost_us = sb_xrealloc(g->dev_cost_us,
                                     (size_t)cap * g->n_dev_cost * sizeof *g->dev_cost_us);
    if (g->n_res_col)
        g->res_col_use = sb_xrealloc(g->res_col_use,
                                     (size_t)cap * g->n_res_col * sizeof *g->res_col_use);
    if (g->dtype) {
        g->flops = sb_xrealloc(g->flops, cap * sizeof *g->flops);
        g->bytes_accessed = sb_xrealloc(g->bytes_accessed, cap * sizeof *g->bytes_accessed);
        g->dtype = sb_xrealloc(g->dtype, cap);
    }
    if (g->sched_group) {
        g->sched_group = sb_xrealloc(g->sched_group, cap * sizeof *g->sched_group);
        g->sched_iter = sb_xrealloc(g->sched_iter, cap * sizeof *g->sched_iter);
        g->sched_priority = sb_xrealloc(g->sched_priority, cap * sizeof *g->sched_priority);
        g->sched_hint = sb_xrealloc(g->sched_hint, cap);
    }
    if (g->holds)
        g->holds = sb_xrealloc(g->holds, (size_t)cap * SB_COLL_COUNT * sizeof *g->holds);
    if (g->scope)
        g->scope = sb_xrealloc(g->scope, cap * sizeof *g->scope);
    if (g->join) {
        g->join = sb_xrealloc(g->join, cap * sizeof *g->join);
        b->join_ring = sb_xrealloc(b->join_ring, cap * sizeof *b->join_ring);
        for (uint32_t v = b->cap; v < cap; v++)
            g->join[v] = b->join_ring[v] = v;
    }
    b->loc_of = sb_xrealloc(b->loc_of, cap * sizeof *b->loc_of);
    b->cap = cap;
}

/* Eight bytes a step, then a final mix (so the low bits that index the
 * table and the high bits kept in its slots both depend on every byte).  A
 * byte at a time (FNV-1a) was a fifth of sb_builder_node at 10^6 nodes:
 * names run to 20-40 bytes, and each byte waited on a multiply. */
static uint64_t hash_str(const char *s)
{
    size_t n = strlen(s);
    uint64_t h = n * 0x9e3779b97f4a7c15ull, w;
    for (; n >= 8; n -= 8, s += 8) {
        memcpy(&w, s, 8);
        h = (h ^ w) * 0xff51afd7ed558ccdull;
        h ^= h >> 32;
    }
    w = 0;
    memcpy(&w, s, n); /* the last 0-7 bytes, zero-padded; n is in the seed */
    h = (h ^ w) * 0xc4ceb9fe1a85ec53ull;
    h ^= h >> 29;
    h *= 0xff51afd7ed558ccdull;
    return h ^ (h >> 32);
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

static void grow_name_tab(struct sb_builder *b)
{
    uint32_t cap = b->name_tab_cap ? b->name_tab_cap * 2 : 2048;
    uint64_t *tab = sb_xcalloc(cap, sizeof *tab);
    for (uint32_t i = 0; i < b->name_tab_cap; i++) {
        uint64_t slot = b->name_tab[i];
        if (!slot)
            continue;
        uint32_t id = (uint32_t)slot - 1;
        name_tab_insert(tab, cap, hash_str(b->g->names + b->g->name_off[id]), id);
    }
    free(b->name_tab);
    b->name_tab = tab;
    b->name_tab_cap = cap;
}

/* The node that already has this name, or SB_NONE. */
static uint32_t name_find(const struct sb_builder *b, const char *s, uint64_t h)
{
    if (!b->name_tab_cap)
        return SB_NONE;
    uint32_t i = (uint32_t)h & (b->name_tab_cap - 1);
    uint64_t hi = h & 0xffffffff00000000ull;
    for (; b->name_tab[i]; i = (i + 1) & (b->name_tab_cap - 1)) {
        uint64_t slot = b->name_tab[i];
        uint32_t id = (uint32_t)slot - 1;
        if ((slot & 0xffffffff00000000ull) == hi &&
            strcmp(b->g->names + b->g->name_off[id], s) == 0)
            return id;
    }
    return SB_NONE;
}

void sb_builder_prefetch_name(const struct sb_builder *b, const char *name)
{
    if (b->name_tab_cap)
        __builtin_prefetch(&b->name_tab[(uint32_t)hash_str(name) & (b->name_tab_cap - 1)], 1);
}

static void name_add(struct sb_builder *b, uint32_t id, const char *s, uint64_t h)
{
    size_t n = strlen(s) + 1;
    if (b->names_len + n > b->names_cap) {
        b->names_cap = (b->names_len + n) * 2;
        b->g->names = sb_xrealloc(b->g->names, b->names_cap);
    }
    memcpy(b->g->names + b->names_len, s, n);
    b->g->name_off[id] = b->names_len;
    b->names_len += n;
    if ((uint64_t)(id + 1) * 2 > b->name_tab_cap)
        grow_name_tab(b);
    name_tab_insert(b->name_tab, b->name_tab_cap, h, id);
}

static uint32_t op_intern(struct sb_builder *b, const char *s)
{
    struct sb_graph *g = b->g;
    if (!s || !*s)
        return 0;
    if ((uint64_t)(g->n_ops + 1) * 2 > b->op_tab_cap) {
        uint32_t cap = b->op_tab_cap ? b->op_tab_cap * 2 : 64;
        uint32_t *tab = sb_xcalloc(cap, sizeof *tab);
        for (uint32_t k = 1; k < g->n_ops; k++) {
            uint32_t i = (uint32_t)hash_str(g->op_names[k]) & (cap - 1);
            while (tab[i])
                i = (i + 1) & (cap - 1);
            tab[i] = k + 1;
        }
        free(b->op_tab);
        b->op_tab = tab;
        b->op_tab_cap = cap;
    }
    uint32_t i = (uint32_t)hash_str(s) & (b->op_tab_cap - 1);
    for (; b->op_tab[i]; i = (i + 1) & (b->op_tab_cap - 1))
        if (strcmp(g->op_names[b->op_tab[i] - 1], s) == 0)
            return b->op_tab[i] - 1;
    if (g->n_ops == b->ops_cap) {
        b->ops_cap *= 2;
        g->op_names = sb_xrealloc(g->op_names, b->ops_cap * sizeof *g->op_names);
    }
    g->op_names[g->n_ops] = sb_xstrdup(s);
    b->op_tab[i] = g->n_ops + 1;
    return g->n_ops++;
}

/* ---- setup ---------------------------------------------------------------- */

struct sb_builder *sb_builder_new(const char *path, enum sb_loc loc, struct sb_err *e)
{
    struct sb_builder *b = sb_xcalloc(1, sizeof *b);
    b->path = path;
    b->e = e;
    b->loc_kind = loc;
    b->open = SB_NONE;
    b->g = sb_xcalloc(1, sizeof *b->g);
    b->ops_cap = 16;
    b->g->op_names = sb_xmalloc(b->ops_cap * sizeof *b->g->op_names);
    b->g->op_names[0] = sb_xstrdup("");
    b->g->n_ops = 1;
    return b;
}

/* Nodes [from, from + PREFAULT_NODES) of the arrays every node writes, faulted
 * in ahead of the nodes (sb_builder_prefault).  A stretch at a time, not the
 * whole reserve: a reserve is an estimate, and pages past the last node must
 * not become resident. */
#define PREFAULT_NODES ((uint32_t)1 << 18)

static void prefault_nodes(struct sb_builder *b, uint32_t from)
{
    struct sb_graph *g = b->g;
    uint32_t to = b->cap - from > PREFAULT_NODES ? from + PREFAULT_NODES : b->cap;
    size_t n = to - from;
#define PF(a) sb_prefault((a) + from, n * sizeof *(a))
    PF(g->kind), PF(g->coll), PF(g->flags), PF(g->group_size), PF(g->pred_off);
    PF(g->partner), PF(g->op), PF(g->cost_us), PF(g->comm_us), PF(g->out_bytes);
    PF(g->comm_bytes), PF(g->name_off), PF(g->device), PF(g->units_used);
    PF(g->stream), PF(b->loc_of);
#undef PF
    b->faulted = to;
}

void sb_builder_prefault(struct sb_builder *b) { b->prefault = 1; }

void sb_builder_reserve(struct sb_builder *b, uint32_t n_nodes, uint64_t n_edges,
                        size_t name_bytes)
{
    if (name_bytes > b->names_cap) {
        b->names_cap = name_bytes;
        b->g->names = sb_xrealloc(b->g->names, b->names_cap);
    }
    if (n_nodes > b->cap)
        grow_nodes(b, n_nodes);
    while ((uint64_t)b->cap * 2 > b->name_tab_cap)
        grow_name_tab(b);
    if (n_edges > UINT32_MAX - 1)
        n_edges = UINT32_MAX - 1;
    if (n_edges > b->edge_cap) {
        uint32_t old = b->edge_cap;
        b->edge_cap = (uint32_t)n_edges;
        b->g->pred = sb_xrealloc(b->g->pred, (size_t)b->edge_cap * sizeof *b->g->pred);
        if (b->g->pred_after)
            grow_after(b, old + 1);
    }
}

void sb_builder_columns(struct sb_builder *b, const uint32_t col[SB_BF_COUNT])
{
    memcpy(b->col, col, sizeof b->col);
}

void sb_builder_meta(struct sb_builder *b, const char *key, const char *val)
{
    struct sb_graph *g = b->g;
    g->meta_key = sb_xrealloc(g->meta_key, (g->n_meta + 1) * sizeof *g->meta_key);
    g->meta_val = sb_xrealloc(g->meta_val, (g->n_meta + 1) * sizeof *g->meta_val);
    g->meta_key[g->n_meta] = sb_xstrdup(key);
    g->meta_val[g->n_meta] = sb_xstrdup(val);
    g->n_meta++;
}

int sb_builder_dev_cost_column(struct sb_builder *b, const char *dev, uint64_t loc, uint32_t col)
{
    struct sb_graph *g = b->g;
    SB_ASSERT(g->v.n_nodes == 0); /* columns come before the nodes */
    for (uint32_t k = 0; k < g->n_dev_cost; k++)
        if (!strcmp(g->dev_cost_name[k], dev))
            return sb_builder_fail(b, loc, col, "duplicate column 'cost_us.%s'", dev);
    if (g->n_dev_cost == SB_MAX_DEVICES)
        return sb_builder_fail(b, loc, col, "more than %d cost_us.<device> columns",
                               SB_MAX_DEVICES);
    g->dev_cost_name = sb_xrealloc(g->dev_cost_name,
                                   (g->n_dev_cost + 1) * sizeof *g->dev_cost_name);
    g->dev_cost_name[g->n_dev_cost] = sb_xstrdup(dev);
    g->n_dev_cost++;
    g->dev_cost_us = sb_xrealloc(g->dev_cost_us, ((size_t)b->cap * g->n_dev_cost + 1) *
                                                     sizeof *g->dev_cost_us);
    return (int)g->n_dev_cost - 1;
}

uint32_t sb_builder_n_dev_cost(const struct sb_builder *b) { return b->g->n_dev_cost; }

int sb_builder_res_column(struct sb_builder *b, const char *res, uint64_t loc, uint32_t col)
{
    struct sb_graph *g = b->g;
    SB_ASSERT(g->v.n_nodes == 0); /* columns come before the nodes */
    if (!strcmp(res, "units")) /* the one-resource case has its own column */
        return sb_builder_fail(b, loc, col, "column 'res.units': write the units column");
    for (uint32_t k = 0; k < g->n_res_col; k++)
        if (!strcmp(g->res_col_name[k], res))
            return sb_builder_fail(b, loc, col, "duplicate column 'res.%s'", res);
    if (g->n_res_col == SB_MAX_RES)
        return sb_builder_fail(b, loc, col, "more than %d res.<name> columns", SB_MAX_RES);
    g->res_col_name = sb_xrealloc(g->res_col_name,
                                  (g->n_res_col + 1) * sizeof *g->res_col_name);
    g->res_col_name[g->n_res_col] = sb_xstrdup(res);
    g->n_res_col++;
    g->res_col_use = sb_xrealloc(g->res_col_use, ((size_t)b->cap * g->n_res_col + 1) *
                                                     sizeof *g->res_col_use);
    return (int)g->n_res_col - 1;
}

uint32_t sb_builder_n_res(const struct sb_builder *b) { return b->g->n_res_col; }

const char *sb_builder_res_name(const struct sb_builder *b, uint32_t k)
{
    SB_ASSERT(k < b->g->n_res_col);
    return b->g->res_col_name[k];
}

void sb_builder_res(struct sb_builder *b, uint32_t k, uint32_t use)
{
    struct sb_graph *g = b->g;
    SB_ASSERT(b->open != SB_NONE && k < g->n_res_col);
    g->res_col_use[(size_t)b->open * g->n_res_col + k] = use;
}
uint32_t sb_builder_n_nodes(const struct sb_builder *b) { return b->g->v.n_nodes; }

const char *sb_builder_dev_cost_name(const struct sb_builder *b, uint32_t k)
{
    SB_ASSERT(k < b->g->n_dev_cost);
    return b->g->dev_cost_name[k];
}

uint64_t sb_builder_loc(const struct sb_builder *b, uint32_t id)
{
    SB_ASSERT(id < b->g->v.n_nodes);
    return b->loc_of[id];
}

const char *sb_builder_name(const struct sb_builder *b, uint32_t id)
{
    SB_ASSERT(id < b->g->v.n_nodes);
    return b->g->names + b->g->name_off[id];
}

/* ---- nodes ---------------------------------------------------------------- */

/* A done's first input is its start, and each start has exactly one done. */
static int link_done(struct sb_builder *b, uint32_t id)
{
    struct sb_graph *g = b->g;
    char at[64];
    uint32_t p0 = g->pred_off[id];
    if (b->n_edges == p0)
        return nfail(b, id, SB_BF_INPUTS, "done has no inputs: its first input must be its "
                                          "start");
    uint32_t s = g->pred[p0];
    if (g->pred_after && g->pred_after[p0])
        return nfail(b, id, SB_BF_INPUTS, "a done's first edge is an after edge: it must be an "
                                          "input, its start");
    if (g->kind[s] != SB_KIND_START)
        return nfail(b, id, SB_BF_INPUTS, "first input %u of a done is a %s node, not a start",
                     s, sb_kind_name(g->kind[s]));
    if (g->partner[s] != SB_NONE)
        return nfail(b, id, SB_BF_INPUTS, "start %u already has a done (%s)", s,
                     where(b, g->partner[s], at, sizeof at));
    if (g->coll[id] != SB_COLL_NONE && g->coll[id] != g->coll[s])
        return nfail(b, id, SB_BF_COLL, "done's coll '%s' differs from its start's '%s'",
                     sb_coll_name(g->coll[id]), sb_coll_name(g->coll[s]));
    if (g->out_bytes[id])
        return nfail(b, id, SB_BF_OUT_BYTES,
                     "a done owns no buffer (it aliases its start): put out_bytes on the start");
    if (g->scope && g->scope[id] != g->scope[s]) /* a collective is one computation's */
        return nfail(b, id, SB_BF_SCOPE, "done in scope '%s', its start in '%s': a start and "
                     "its done are in one computation", g->scopes->paths.key[g->scope[id]],
                     g->scopes->paths.key[g->scope[s]]);
    g->coll[id] = g->coll[s];
    g->partner[s] = id;
    g->partner[id] = s;
    return 0;
}

/* The rules that need a node's inputs: checked when the next node arrives. */
static int close_node(struct sb_builder *b)
{
    struct sb_graph *g = b->g;
    uint32_t id = b->open;
    if (id == SB_NONE)
        return b->failed ? -1 : 0;
    b->open = SB_NONE;
    g->pred_off[id + 1] = b->n_edges;
    if (b->failed)
        return -1;
    uint32_t n_in = b->n_edges - g->pred_off[id];
    if (g->kind[id] == SB_KIND_INPUT && n_in)
        return nfail(b, id, SB_BF_INPUTS, "an input node has no inputs");
    if ((g->flags[id] & SB_FLAG_ALIAS) && !n_in)
        return nfail(b, id, SB_BF_FLAGS, "an alias node needs an input to view");
    if ((g->flags[id] & SB_FLAG_ALIAS) && g->pred_after && g->pred_after[g->pred_off[id]])
        return nfail(b, id, SB_BF_FLAGS, "an alias node's first edge must be the input it "
                                         "views, not an after edge");
    if ((g->flags[id] & SB_FLAG_ALIAS) && g->out_bytes[id])
        return nfail(b, id, SB_BF_OUT_BYTES, "an alias node owns no buffer");
    if (g->kind[id] == SB_KIND_DONE)
        return link_done(b, id);
    return 0;
}

/* Ranges every importer must respect; a text format's parser refuses bad
 * text first, with its own words. */
static int check_values(struct sb_builder *b, uint32_t id, const struct sb_node_in *n)
{
    if ((unsigned)n->kind >= SB_KIND_COUNT)
        return nfail(b, id, SB_BF_KIND, "kind %d is not a node kind", (int)n->kind);
    if ((unsigned)n->coll >= SB_COLL_COUNT)
        return nfail(b, id, SB_BF_COLL, "coll %d is not a collective type", (int)n->coll);
    if (n->kind == SB_KIND_START && n->coll == SB_COLL_NONE)
        return nfail(b, id, SB_BF_KIND, "start node '%s' has no coll", n->name);
    if (n->coll != SB_COLL_NONE && n->kind != SB_KIND_START && n->kind != SB_KIND_DONE)
        return nfail(b, id, SB_BF_COLL, "coll '%s' on a %s node", sb_coll_name(n->coll),
                     sb_kind_name(n->kind));
    if (!(n->cost_us >= 0 && n->cost_us <= SB_MAX_COST_US))
        return nfail(b, id, SB_BF_NONE, "cost_us %g is not in 0..10^12", n->cost_us);
    if (!(n->comm_us < 0 || n->comm_us <= SB_MAX_COST_US) || isnan(n->comm_us))
        return nfail(b, id, SB_BF_NONE, "comm_us %g is above 10^12", n->comm_us);
    if (n->out_bytes > SB_MAX_BYTES || n->comm_bytes > SB_MAX_BYTES)
        return nfail(b, id, SB_BF_OUT_BYTES, "%s %llu is above 2^50 (1 PiB)",
                     n->out_bytes > SB_MAX_BYTES ? "out_bytes" : "comm_bytes",
                     (unsigned long long)(n->out_bytes > SB_MAX_BYTES ? n->out_bytes
                                                                       : n->comm_bytes));
    if (n->units < 1 || n->units > 1000000)
        return nfail(b, id, SB_BF_NONE, "units %u is not in 1..10^6", n->units);
    if (n->stream >= SB_MAX_STREAMS)
        return nfail(b, id, SB_BF_NONE, "stream %u is not in 0..%d", n->stream,
                     SB_MAX_STREAMS - 1);
    if (n->dtype && (!(n->flops >= 0 && n->flops <= 1e30) ||
                     !(n->bytes_accessed >= 0 && n->bytes_accessed <= 1e30)))
        return nfail(b, id, SB_BF_NONE, "flops %g / bytes_accessed %g not in 0..10^30",
                     n->flops, n->bytes_accessed);
    if (n->sched && (n->sched_group < -1 ||
                     n->sched_hint & ~(uint32_t)(SB_HINT_FORCE_DELAY | SB_HINT_FORCE_DELAY_ASYNC |
                                                 SB_HINT_FORCE_EARLY | SB_HINT_KEEP_ORDER)))
        return nfail(b, id, SB_BF_NONE, "scheduling group %d / hint bits 0x%x out of range",
                     n->sched_group, n->sched_hint);
    if (n->flags & ~(uint32_t)(SB_FLAG_WEIGHT | SB_FLAG_OUTPUT | SB_FLAG_ALIAS))
        return nfail(b, id, SB_BF_FLAGS, "unknown flag bits 0x%x", n->flags);
    if (!n->name || !*n->name)
        return nfail(b, id, SB_BF_NAME, "empty name");
    return 0;
}

/* The node's computation instance; the table and the array are made at the
 * first node outside the top scope (0 before it). */
static int set_scope(struct sb_builder *b, uint32_t id, const char *path)
{
    struct sb_graph *g = b->g;
    uint32_t s = 0;
    char why[160];
    if (path && *path && !g->scopes) {
        g->scopes = sb_xmalloc(sizeof *g->scopes);
        sb_scopes_init(g->scopes);
        g->scope = sb_xcalloc(b->cap, sizeof *g->scope);
    }
    if (path && *path && sb_scopes_intern(g->scopes, path, &s, why, sizeof why))
        return nfail(b, id, SB_BF_SCOPE, "scope '%.80s%s': %s", path,
                     strlen(path) > 80 ? "..." : "", why);
    if (g->scope)
        g->scope[id] = s;
    return 0;
}

uint32_t sb_builder_node(struct sb_builder *b, const struct sb_node_in *n)
{
    struct sb_graph *g = b->g;
    if (close_node(b))
        return SB_NONE;
    uint32_t id = g->v.n_nodes;
    if (id == UINT32_MAX - 1) {
        sb_builder_fail(b, n->loc, 0, "too many nodes");
        return SB_NONE;
    }
    if (id == b->cap)
        grow_nodes(b, 0);
    if (b->prefault && id >= b->faulted)
        prefault_nodes(b, id);
    b->loc_of[id] = n->loc;
    if (check_values(b, id, n))
        return SB_NONE;
    uint64_t h = hash_str(n->name);
    uint32_t prev = name_find(b, n->name, h);
    char at[64];
    if (prev != SB_NONE) {
        nfail(b, id, SB_BF_NAME, "duplicate name '%s' (first on %s)", n->name,
              where(b, prev, at, sizeof at));
        return SB_NONE;
    }
    name_add(b, id, n->name, h);
    g->kind[id] = (uint8_t)n->kind;
    g->coll[id] = (uint8_t)n->coll;
    g->flags[id] = n->flags;
    g->group_size[id] = n->group_size;
    g->pred_off[id] = b->n_edges;
    g->partner[id] = SB_NONE;
    g->op[id] = op_intern(b, n->op);
    g->cost_us[id] = n->cost_us;
    g->comm_us[id] = n->comm_us < 0 ? -1 : n->comm_us;
    g->out_bytes[id] = n->out_bytes;
    g->comm_bytes[id] = n->comm_bytes;
    g->device[id] = n->device;
    g->units_used[id] = n->units;
    g->stream[id] = n->stream;
    if (n->stream >= g->n_streams)
        g->n_streams = n->stream + 1;
    for (uint32_t k = 0; k < g->n_dev_cost; k++)
        g->dev_cost_us[(size_t)id * g->n_dev_cost + k] = -1;
    for (uint32_t k = 0; k < g->n_res_col; k++)
        g->res_col_use[(size_t)id * g->n_res_col + k] = SB_RES_ALL;
    if (n->dtype && !g->dtype) { /* the first node with figures: 0 before it */
        g->flops = sb_xcalloc(b->cap, sizeof *g->flops);
        g->bytes_accessed = sb_xcalloc(b->cap, sizeof *g->bytes_accessed);
        g->dtype = sb_xcalloc(b->cap, 1);
    }
    if (g->dtype) {
        g->flops[id] = n->dtype ? n->flops : 0;
        g->bytes_accessed[id] = n->dtype ? n->bytes_accessed : 0;
        g->dtype[id] = n->dtype < SB_DTYPE_COUNT ? n->dtype : SB_DTYPE_NONE;
    }
    int annotated = n->sched && (n->sched_group >= 0 || n->sched_iter != SB_NO_ITER ||
                                 n->sched_hint || n->sched_priority);
    if (annotated && !g->sched_group) { /* the first annotated node: defaults before it */
        g->sched_group = sb_xmalloc(b->cap * sizeof *g->sched_group);
        g->sched_iter = sb_xmalloc(b->cap * sizeof *g->sched_iter);
        g->sched_priority = sb_xcalloc(b->cap, sizeof *g->sched_priority);
        g->sched_hint = sb_xcalloc(b->cap, 1);
        for (uint32_t k = 0; k < id; k++) {
            g->sched_group[k] = -1;
            g->sched_iter[k] = SB_NO_ITER;
        }
    }
    if (g->sched_group) {
        g->sched_group[id] = annotated ? n->sched_group : -1;
        g->sched_iter[id] = annotated ? n->sched_iter : SB_NO_ITER;
        g->sched_hint[id] = annotated ? n->sched_hint : 0;
        g->sched_priority[id] = annotated ? n->sched_priority : 0;
    }
    int holds = 0;
    for (int k = 0; k < SB_COLL_COUNT; k++)
        holds |= n->holds[k] != 0;
    if (holds && !g->holds) /* the first node that holds any: 0 before it */
        g->holds = sb_xcalloc((size_t)b->cap * SB_COLL_COUNT, sizeof *g->holds);
    if (g->holds)
        memcpy(g->holds + (size_t)id * SB_COLL_COUNT, n->holds, sizeof n->holds);
    if (set_scope(b, id, n->scope))
        return SB_NONE;
    g->v.n_nodes = id + 1;
    b->open = id;
    return id;
}

static int add_edge(struct sb_builder *b, uint32_t src, uint8_t after);

int sb_builder_input(struct sb_builder *b, uint32_t src) { return add_edge(b, src, 0); }
int sb_builder_after(struct sb_builder *b, uint32_t src) { return add_edge(b, src, 1); }

/* pred_after is allocated at the first after edge and grows with pred. */
static void grow_after(struct sb_builder *b, uint32_t old_cap)
{
    struct sb_graph *g = b->g;
    g->pred_after = sb_xrealloc(g->pred_after, (size_t)b->edge_cap + 1);
    memset(g->pred_after + old_cap, 0, (size_t)b->edge_cap + 1 - old_cap);
}

static int add_edge(struct sb_builder *b, uint32_t src, uint8_t after)
{
    struct sb_graph *g = b->g;
    uint32_t id = b->open;
    if (b->failed)
        return -1;
    SB_ASSERT(id != SB_NONE);
    enum sb_bfield f = after ? SB_BF_AFTER : SB_BF_INPUTS;
    const char *what = after ? "after" : "input";
    if (src == id)
        return nfail(b, id, f, "%s %u is not an earlier row: node %u depends on itself (a cycle)",
                     what, src, id);
    if (src > id)
        return nfail(b, id, f,
                     "%s %u is not an earlier row (%s must refer to ids below %u; "
                     "`schedbench convert --toposort` puts rows in order, or names a cycle)",
                     what, src, after ? "after edges" : "inputs", id);
    if (b->n_edges == UINT32_MAX - 1)
        return nfail(b, id, SB_BF_INPUTS, "too many edges");
    if (b->n_edges == b->edge_cap) {
        uint32_t old = b->edge_cap;
        b->edge_cap = b->edge_cap ? (b->edge_cap > UINT32_MAX / 2 ? UINT32_MAX - 1
                                                                  : b->edge_cap * 2)
                                  : 4096;
        g->pred = sb_xrealloc(g->pred, (size_t)b->edge_cap * sizeof *g->pred);
        if (g->pred_after)
            grow_after(b, old + 1);
    }
    if (after && g->kind[id] == SB_KIND_INPUT)
        return nfail(b, id, SB_BF_AFTER, "an input node has no after edges");
    if (after && !g->pred_after)
        g->pred_after = sb_xcalloc((size_t)b->edge_cap + 1, 1);
    if (g->pred_after)
        g->pred_after[b->n_edges] = after;
    g->pred[b->n_edges++] = src;
    return 0;
}

static uint64_t join_key(uint32_t ring, int32_t device)
{
    return (uint64_t)ring << 32 | ((uint32_t)device + 1);
}

static uint32_t join_slot(const uint64_t *tab, uint32_t cap, uint64_t key)
{
    uint64_t h = key * 0x9e3779b97f4a7c15ull;
    uint32_t i = (uint32_t)(h >> 32) & (cap - 1);
    while (tab[i] && tab[i] != key)
        i = (i + 1) & (cap - 1);
    return i;
}

/* Takes device's place in ring; 0 when it was free. */
static int join_take(struct sb_builder *b, uint32_t ring, int32_t device)
{
    if ((uint64_t)(b->n_join_taken + 1) * 2 > b->join_taken_cap) {
        uint32_t cap = b->join_taken_cap ? b->join_taken_cap * 2 : 1024;
        uint64_t *tab = sb_xcalloc(cap, sizeof *tab);
        for (uint32_t i = 0; i < b->join_taken_cap; i++)
            if (b->join_taken[i])
                tab[join_slot(tab, cap, b->join_taken[i])] = b->join_taken[i];
        free(b->join_taken);
        b->join_taken = tab;
        b->join_taken_cap = cap;
    }
    uint64_t key = join_key(ring, device);
    uint32_t i = join_slot(b->join_taken, b->join_taken_cap, key);
    if (b->join_taken[i])
        return -1;
    b->join_taken[i] = key;
    b->n_join_taken++;
    return 0;
}

int sb_builder_join(struct sb_builder *b, uint32_t with)
{
    struct sb_graph *g = b->g;
    uint32_t id = b->open;
    char at[64];
    if (b->failed)
        return -1;
    SB_ASSERT(id != SB_NONE);
    if (g->kind[id] != SB_KIND_START || g->device[id] < 0)
        return nfail(b, id, SB_BF_JOIN, "only a start with a device joins a collective");
    if (with >= id)
        return nfail(b, id, SB_BF_JOIN, "join %u is not an earlier row", with);
    /* a send joins its recv: one transfer the two ranks meet at */
    int pair = (g->coll[id] == SB_COLL_SEND && g->coll[with] == SB_COLL_RECV) ||
               (g->coll[id] == SB_COLL_RECV && g->coll[with] == SB_COLL_SEND);
    if (g->kind[with] != SB_KIND_START || (g->coll[with] != g->coll[id] && !pair) ||
        g->device[with] < 0)
        return nfail(b, id, SB_BF_JOIN, "join %u (%s) is not a start of %s with a device", with,
                     where(b, with, at, sizeof at), sb_coll_name(g->coll[id]));
    if (!g->join) {
        g->join = sb_xmalloc((size_t)b->cap * sizeof *g->join);
        b->join_ring = sb_xmalloc((size_t)b->cap * sizeof *b->join_ring);
        for (uint32_t v = 0; v < b->cap; v++)
            g->join[v] = b->join_ring[v] = v;
    }
    if (g->join[id] != id)
        return nfail(b, id, SB_BF_JOIN, "the start already joins a collective");
    uint32_t ring = b->join_ring[with];
    if (g->join[with] == with) /* with was alone: its own place */
        join_take(b, ring, g->device[with]);
    if (join_take(b, ring, g->device[id])) {
        uint32_t m = with; /* the member there, for the message (once) */
        while (g->device[m] != g->device[id])
            m = g->join[m];
        return nfail(b, id, SB_BF_JOIN, "join %u: its collective already has a member on "
                     "device %d (%s)", with, g->device[id], where(b, m, at, sizeof at));
    }
    b->join_ring[id] = ring;
    g->join[id] = g->join[with]; /* splice id into with's cycle */
    g->join[with] = id;
    return 0;
}

void sb_builder_dev_cost(struct sb_builder *b, uint32_t k, double us)
{
    struct sb_graph *g = b->g;
    SB_ASSERT(b->open != SB_NONE && k < g->n_dev_cost);
    g->dev_cost_us[(size_t)b->open * g->n_dev_cost + k] = us < 0 ? -1 : us;
}

/* ---- finish ---------------------------------------------------------------- */

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

/* The memory model sums buffers in signed 64-bit: every graph keeps the sum
 * of all of them within 2^62. */
static int check_total(struct sb_builder *b)
{
    const struct sb_graph *g = b->g;
    uint64_t total = 0;
    for (uint32_t v = 0; v < g->v.n_nodes; v++) {
        if (g->out_bytes[v] > SB_MAX_TOTAL_BYTES - total)
            return sb_errf(b->e, "%s: the buffers' out_bytes sum to more than 2^62 bytes (at "
                                 "node %u): memory totals would overflow", b->path, v);
        total += g->out_bytes[v];
    }
    return 0;
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

static void release(struct sb_builder *b)
{
    free(b->join_ring);
    free(b->join_taken);
    free(b->loc_of);
    free(b->name_tab);
    free(b->op_tab);
    free(b);
}

void sb_builder_free(struct sb_builder *b)
{
    if (!b)
        return;
    sb_graph_free(b->g);
    release(b);
}

struct sb_graph *sb_builder_finish(struct sb_builder *b)
{
    struct sb_graph *g = b->g;
    int rc = close_node(b);
    for (uint32_t i = 0; !rc && i < g->v.n_nodes; i++)
        if (g->kind[i] == SB_KIND_START && g->partner[i] == SB_NONE)
            rc = nfail(b, i, SB_BF_NONE, "start '%s' has no done", g->names + g->name_off[i]);
    if (!rc && !g->v.n_nodes)
        rc = sb_errf(b->e, "%s: no nodes", b->path);
    if (!rc)
        rc = check_total(b);
    if (rc) {
        sb_builder_free(b);
        return NULL;
    }
    g->v.n_edges = b->n_edges;
    if (!g->pred)
        g->pred = sb_xmalloc(sizeof *g->pred); /* plugins may take &pred[0] */
    build_succ(g);
    g->dur_us = sb_xcalloc(g->v.n_nodes, sizeof *g->dur_us);
    if (!g->names)
        g->names = sb_xcalloc(1, 1);
    const char *meta_name = sb_graph_meta(g, "name");
    g->name = meta_name && *meta_name ? sb_xstrdup(meta_name) : file_stem(b->path);
    g->path = sb_xstrdup(b->path);
    if (g->n_res_col && b->loc_kind == SB_LOC_LINE) { /* for the machine's resource checks */
        g->res_line = b->loc_of;
        b->loc_of = NULL;
    }
    sb_graph_fill_view(g);
    release(b);
    return g;
}
