/* The graph: names of its enums, its metadata, the view plugins see, and
 * freeing it.  Graphs are made by the builder (builder.c) and nowhere else. */
#define _POSIX_C_SOURCE 200809L
#include "core.h"
#include "core/num.h"
#include "core/scope.h"

#include <string.h>

/* ---- names of enums ---------------------------------------------------- */

static const char *const kind_names[SB_KIND_COUNT] = {
    "compute", "nop", "input", "start", "done"};

static const char *const coll_names[SB_COLL_COUNT] = {
    "", "all_gather", "reduce_scatter", "all_reduce", "all_to_all",
    "collective_permute", "send", "recv", "send_host", "recv_host", "copy",
    "ragged_all_to_all", "collective_broadcast"};

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

/* ---- metadata and the view ------------------------------------------------ */

const char *sb_graph_meta(const struct sb_graph *g, const char *key)
{
    for (uint32_t i = 0; i < g->n_meta; i++)
        if (strcmp(g->meta_key[i], key) == 0)
            return g->meta_val[i];
    return NULL;
}

/* The machine of a run without --machine: the built-in roofline device, one
 * H100 SXM5 with its 80 GB (workloads/machines/h100-sxm.yaml; test_machine
 * checks that the two agree), so that every row has a capacity. */
static const char *const one_name[] = {"gpu0"};
static const uint8_t one_kind[] = {SB_DEV_GPU};
static const uint64_t one_cap[] = {SB_H100_MEM_BYTES};
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

/* The input nodes' buffers and the output buffers that are no view of an
 * input (an output updated in place of a parameter is counted once, as XLA
 * counts an aliased output once), each buffer once, saturating at 2^62. */
uint64_t sb_view_io_bytes(const struct sb_graph_view *v)
{
    uint64_t sum = 0;
    uint32_t *root = sb_xmalloc(((size_t)v->n_nodes + 1) * sizeof *root);
    uint8_t *seen = sb_xcalloc((size_t)v->n_nodes + 1, 1);
    sb_mem_buffer_roots(v, root);
    for (uint32_t i = 0; i < v->n_nodes; i++) {
        uint32_t r = root[i];
        int io = v->kind[i] == SB_KIND_INPUT || (v->flags[i] & SB_FLAG_OUTPUT);
        if (io && !seen[r]) {
            seen[r] = 1;
            sum += v->out_bytes[r];
            if (sum > (1ull << 62))
                sum = 1ull << 62;
        }
    }
    free(root);
    free(seen);
    return sum;
}

/* The view's io_bytes: '# io_bytes=' when the importer wrote it, else
 * sb_view_io_bytes. */
static uint64_t io_bytes(const struct sb_graph *g)
{
    const char *meta = sb_graph_meta(g, "io_bytes"), *why;
    uint64_t sum = 0;
    if (meta && !sb_num_u64(meta, 0, 1ull << 62, &sum, &why))
        return sum;
    return sb_view_io_bytes(&g->v);
}

void sb_graph_fill_view(struct sb_graph *g)
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
    if (!g->stream)
        g->stream = sb_xcalloc((size_t)v->n_nodes + 1, sizeof *g->stream);
    v->stream = g->stream;
    v->n_streams = g->n_streams ? g->n_streams : 1;
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
    v->sched_group = g->sched_group;
    v->sched_iter = g->sched_iter;
    v->sched_hint = g->sched_hint;
    v->sched_priority = g->sched_priority;
    v->holds = g->holds;
    v->scope = g->scope;
    v->n_scopes = g->scopes ? g->scopes->n : 1;
    v->n_loops = g->scopes ? g->scopes->loops.n : 0;
    v->scope_parent = g->scopes ? g->scopes->parent : NULL;
    v->scope_loop = g->scopes ? g->scopes->loop : NULL;
    v->scope_iter = g->scopes ? g->scopes->iter : NULL;
    v->io_bytes = io_bytes(g);
    v->pred_after = g->pred_after;
    v->join = g->join;
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
    free(g->stream);
    free(g->sched_group);
    free(g->sched_iter);
    free(g->sched_hint);
    free(g->sched_priority);
    free(g->holds);
    if (g->scopes)
        sb_scopes_free(g->scopes);
    free(g->scopes);
    free(g->scope);
    free(g->dev_dur_us);
    for (uint32_t k = 0; k < g->n_dev_cost; k++)
        free(g->dev_cost_name[k]);
    free(g->dev_cost_name);
    free(g->dev_cost_us);
    for (uint32_t k = 0; k < g->n_res_col; k++)
        free(g->res_col_name[k]);
    free(g->res_col_name);
    free(g->res_col_use);
    free(g->res_use);
    free(g->res_line);
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
    free(g->flops);
    free(g->bytes_accessed);
    free(g->dtype);
    free(g->pred_after);
    free(g->join);
    free(g);
}

uint32_t sb_graph_n_collectives(const struct sb_graph *g)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < g->v.n_nodes; i++)
        n += g->kind[i] == SB_KIND_START;
    return n;
}

static const char *const dtype_names[SB_DTYPE_COUNT] = {"", "fp32", "tf32", "bf16",
                                                        "fp16", "fp8", "int8", "fp64"};

const char *sb_dtype_name(enum sb_dtype d)
{
    return (unsigned)d < SB_DTYPE_COUNT ? dtype_names[d] : "?";
}

int sb_dtype_parse(const char *s, enum sb_dtype *out)
{
    for (int d = 1; d < SB_DTYPE_COUNT; d++)
        if (!strcmp(s, dtype_names[d])) {
            *out = (enum sb_dtype)d;
            return 0;
        }
    return -1;
}

/* ---- topological order ------------------------------------------------------ */

static void heap_up(uint32_t *heap, uint32_t c, uint32_t x)
{
    for (; c && heap[(c - 1) / 2] > x; c = (c - 1) / 2)
        heap[c] = heap[(c - 1) / 2];
    heap[c] = x;
}

static uint32_t heap_pop(uint32_t *heap, uint32_t *h)
{
    uint32_t top = heap[0], last = heap[--*h], c = 0;
    for (;;) { /* sift last down from the root */
        uint32_t l = 2 * c + 1, m = c;
        if (l < *h && heap[l] < last)
            m = l;
        if (l + 1 < *h && heap[l + 1] < (m == c ? last : heap[m]))
            m = l + 1;
        if (m == c)
            break;
        heap[c] = heap[m];
        c = m;
    }
    if (*h)
        heap[c] = last;
    return top;
}

uint32_t sb_topo_order(uint32_t n, const uint32_t *off, const uint32_t *in, uint32_t *order)
{
    uint32_t *left = sb_xcalloc((size_t)n + 1, sizeof *left);
    uint32_t *soff = sb_xcalloc((size_t)n + 2, sizeof *soff);
    uint32_t *succ = sb_xmalloc(((size_t)off[n] + 1) * sizeof *succ);
    uint32_t *heap = sb_xmalloc(((size_t)n + 1) * sizeof *heap), h = 0, done = 0;
    for (uint32_t v = 0; v < n; v++)
        for (uint32_t e = off[v]; e < off[v + 1]; e++)
            left[v]++, soff[in[e] + 2]++;
    for (uint32_t v = 0; v < n; v++)
        soff[v + 2] += soff[v + 1];
    for (uint32_t v = 0; v < n; v++)
        for (uint32_t e = off[v]; e < off[v + 1]; e++)
            succ[soff[in[e] + 1]++] = v;
    for (uint32_t v = 0; v < n; v++)
        if (!left[v])
            heap_up(heap, h++, v);
    while (h) {
        uint32_t v = heap_pop(heap, &h);
        order[done++] = v;
        for (uint32_t q = soff[v]; q < soff[v + 1]; q++)
            if (--left[succ[q]] == 0)
                heap_up(heap, h++, succ[q]);
    }
    free(left), free(soff), free(succ), free(heap);
    return done;
}
