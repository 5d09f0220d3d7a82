/* One program per rank (docs/plugins.md, "Jobs of ranks").
 *
 * A job of ranks is one graph, each rank's nodes pre-assigned to its device
 * and its collectives joined with the other members' (graph.h, `join`).  A
 * policy that schedules one device's program (anything not declaring
 * SB_PLUGIN_PLACER) is what a compiler or a process does for its own rank:
 * it sees that rank's program alone.  The host cuts the job's view into one
 * view per rank, as a one-device graph with that device's machine row, runs
 * the policy on each, and merges the ranks' orders into one order of the
 * job; the simulator then meets them at the joined collectives.  Identical
 * ranks are identical views, so they get identical orders. */
#define _POSIX_C_SOURCE 200809L
#include "core.h"

#include <string.h>

/* One rank's view and the arrays it owns; id[k] is the job's node of the
 * rank's node k (in job id order, so the rank's ids stay topological). */
struct rank_view {
    struct sb_graph_view v;
    struct sb_machine_view m;
    uint32_t n, *id;
    uint8_t *kind, *coll, *sched_hint, *pred_after, *dev_offload;
    uint32_t *flags, *group_size, *pred_off, *pred, *succ_off, *succ, *partner, *op;
    uint32_t *units_used, *stream, *holds, *res_use, *scope;
    int32_t *device, *sched_group, *sched_iter, *sched_priority;
    double *cost_us, *comm_us, *dur_us, *dev_dur_us;
    uint64_t *out_bytes, *comm_bytes, *name_off;
};

/* A job to split: joined collectives, every node pre-assigned, more than
 * one device, and each rank's program whole: a start and its done, and a
 * view and the buffer it views, on one device (a cut between them would
 * hand a policy a done without its start). */
int sb_graph_is_job(const struct sb_graph_view *g)
{
    if (!g->join || g->machine->n_devices < 2)
        return 0;
    for (uint32_t v = 0; v < g->n_nodes; v++) {
        if (g->device[v] < 0 || (uint32_t)g->device[v] >= g->machine->n_devices)
            return 0;
        if (g->partner[v] != SB_NONE && g->device[g->partner[v]] != g->device[v])
            return 0;
        if ((g->flags[v] & SB_FLAG_ALIAS) && g->pred_off[v + 1] > g->pred_off[v] &&
            g->device[g->pred[g->pred_off[v]]] != g->device[v])
            return 0;
    }
    return 1;
}

#define GATHER(dst, src, w)                                                    \
    do {                                                                       \
        (dst) = sb_xmalloc((size_t)R->n * (w) * sizeof *(dst) + 1);            \
        for (uint32_t k_ = 0; k_ < R->n; k_++)                                 \
            memcpy(&(dst)[(size_t)k_ * (w)], &(src)[(size_t)R->id[k_] * (w)],  \
                   (w) * sizeof *(dst));                                       \
    } while (0)

/* pass 1: the rank's nodes; pass 2: its edges (an edge from another rank
 * is left out: a rank's program reads only its own); pass 3: consumers. */
static void rank_edges(struct rank_view *R, const struct sb_graph_view *g, const uint32_t *at)
{
    uint32_t n = R->n, m = 0;
    R->pred_off = sb_xmalloc(((size_t)n + 1) * sizeof *R->pred_off);
    for (int pass = 0; pass < 2; pass++) {
        m = 0;
        for (uint32_t k = 0; k < n; k++) {
            uint32_t v = R->id[k];
            if (pass)
                R->pred_off[k] = m;
            for (uint32_t e = g->pred_off[v]; e < g->pred_off[v + 1]; e++) {
                if (at[g->pred[e]] == SB_NONE)
                    continue;
                if (pass) {
                    R->pred[m] = at[g->pred[e]];
                    if (R->pred_after)
                        R->pred_after[m] = (uint8_t)sb_edge_after(g, e);
                }
                m++;
            }
        }
        if (!pass) {
            R->pred = sb_xmalloc((size_t)m * sizeof *R->pred + 1);
            R->pred_after = g->pred_after ? sb_xcalloc((size_t)m + 1, 1) : NULL;
        }
    }
    R->pred_off[n] = m;
    R->succ_off = sb_xcalloc((size_t)n + 1, sizeof *R->succ_off);
    R->succ = sb_xmalloc((size_t)m * sizeof *R->succ + 1);
    for (uint32_t e = 0; e < m; e++)
        R->succ_off[R->pred[e] + 1]++;
    for (uint32_t k = 0; k < n; k++)
        R->succ_off[k + 1] += R->succ_off[k];
    uint32_t *fill = sb_xmalloc(((size_t)n + 1) * sizeof *fill);
    memcpy(fill, R->succ_off, ((size_t)n + 1) * sizeof *fill);
    for (uint32_t k = 0; k < n; k++)
        for (uint32_t e = R->pred_off[k]; e < R->pred_off[k + 1]; e++)
            R->succ[fill[R->pred[e]]++] = k;
    free(fill);
    R->v.n_edges = m;
}

/* Device d's row of the job's machine, as a machine of one device. */
static void rank_machine(struct rank_view *R, const struct sb_machine_view *M, uint32_t d)
{
    uint32_t nd = M->n_devices;
    R->m = (struct sb_machine_view){
        .size = sizeof R->m, .n_devices = 1, .dev_name = &M->dev_name[d],
        .dev_kind = &M->dev_kind[d], .mem_cap_bytes = &M->mem_cap_bytes[d],
        .units = &M->units[d], .link_gbps = &M->link_gbps[(size_t)d * nd + d],
        .link_lat_us = &M->link_lat_us[(size_t)d * nd + d],
        .can_read = &M->can_read[(size_t)d * nd + d], .n_res = M->n_res,
        .res_name = M->res_name,
        .res_limit = M->n_res ? &M->res_limit[(size_t)d * M->n_res] : M->res_limit,
        .dev_streams = M->dev_streams ? &M->dev_streams[d] : NULL};
}

/* ids: the rank's n nodes in increasing id; at[] is SB_NONE on entry for
 * every node, set here for the rank's own (rank_view_free's caller resets
 * them: a job of 1,024 ranks must not walk every node for each rank). */
static void rank_view_init(struct rank_view *R, const struct sb_graph_view *g, uint32_t d,
                           const uint32_t *ids, uint32_t n, uint32_t *at)
{
    uint32_t nd = g->machine->n_devices;
    memset(R, 0, sizeof *R);
    R->id = sb_xmalloc(((size_t)n + 1) * sizeof *R->id);
    memcpy(R->id, ids, (size_t)n * sizeof *ids);
    R->n = n;
    for (uint32_t k = 0; k < n; k++)
        at[ids[k]] = k;
    GATHER(R->kind, g->kind, 1);
    GATHER(R->coll, g->coll, 1);
    GATHER(R->flags, g->flags, 1);
    GATHER(R->cost_us, g->cost_us, 1);
    GATHER(R->out_bytes, g->out_bytes, 1);
    GATHER(R->comm_bytes, g->comm_bytes, 1);
    GATHER(R->group_size, g->group_size, 1);
    GATHER(R->comm_us, g->comm_us, 1);
    GATHER(R->op, g->op, 1);
    GATHER(R->name_off, g->name_off, 1);
    GATHER(R->units_used, g->units_used, 1);
    GATHER(R->stream, g->stream, 1);
    R->device = sb_xcalloc((size_t)R->n + 1, sizeof *R->device); /* device 0: its own */
    R->partner = sb_xmalloc(((size_t)R->n + 1) * sizeof *R->partner);
    R->dur_us = sb_xmalloc(((size_t)R->n + 1) * sizeof *R->dur_us);
    R->dev_dur_us = sb_xmalloc(((size_t)R->n + 1) * sizeof *R->dev_dur_us);
    for (uint32_t k = 0; k < R->n; k++) {
        uint32_t v = R->id[k];
        R->partner[k] = g->partner[v] == SB_NONE ? SB_NONE : at[g->partner[v]];
        /* t(v, d) is the rank's time; a collective's stays dur_us */
        R->dev_dur_us[k] = sb_dur_on(g, v, d);
        R->dur_us[k] = g->kind[v] == SB_KIND_COMPUTE ? R->dev_dur_us[k] : g->dur_us[v];
    }
    if (g->dev_offload) {
        R->dev_offload = sb_xmalloc((size_t)R->n + 1);
        for (uint32_t k = 0; k < R->n; k++)
            R->dev_offload[k] = g->dev_offload[(size_t)R->id[k] * nd + d];
    }
    if (g->sched_group) {
        GATHER(R->sched_group, g->sched_group, 1);
        GATHER(R->sched_iter, g->sched_iter, 1);
        GATHER(R->sched_hint, g->sched_hint, 1);
        GATHER(R->sched_priority, g->sched_priority, 1);
    }
    if (g->holds)
        GATHER(R->holds, g->holds, SB_COLL_COUNT);
    if (g->res_use)
        GATHER(R->res_use, g->res_use, g->machine->n_res);
    if (g->scope)
        GATHER(R->scope, g->scope, 1);
    rank_edges(R, g, at);
    rank_machine(R, g->machine, d);
    struct sb_graph_view *v = &R->v;
    *v = *g; /* the op and name tables, scopes, host and latency are the job's */
    v->n_nodes = R->n;
    v->kind = R->kind, v->coll = R->coll, v->flags = R->flags, v->cost_us = R->cost_us;
    v->out_bytes = R->out_bytes, v->comm_bytes = R->comm_bytes;
    v->group_size = R->group_size, v->comm_us = R->comm_us, v->device = R->device;
    v->pred_off = R->pred_off, v->pred = R->pred, v->succ_off = R->succ_off;
    v->succ = R->succ, v->partner = R->partner, v->op = R->op, v->name_off = R->name_off;
    v->dur_us = R->dur_us, v->machine = &R->m, v->dev_dur_us = R->dev_dur_us;
    v->units_used = R->units_used, v->dev_offload = R->dev_offload, v->stream = R->stream;
    v->sched_group = R->sched_group, v->sched_iter = R->sched_iter;
    v->sched_hint = R->sched_hint, v->sched_priority = R->sched_priority;
    v->holds = R->holds, v->res_use = R->res_use, v->pred_after = R->pred_after;
    v->scope = R->scope;
    v->dev_dur_cols = 1; /* one device: the full table */
    v->join = NULL; /* a rank joins no collective of its own */
    v->io_bytes = sb_view_io_bytes(v);
}
#undef GATHER

static void rank_view_free(struct rank_view *R)
{
    free(R->id), free(R->kind), free(R->coll), free(R->sched_hint), free(R->pred_after);
    free(R->dev_offload), free(R->flags), free(R->group_size), free(R->pred_off);
    free(R->pred), free(R->succ_off), free(R->succ), free(R->partner), free(R->op);
    free(R->units_used), free(R->stream), free(R->holds), free(R->res_use), free(R->scope);
    free(R->device), free(R->sched_group), free(R->sched_iter), free(R->sched_priority);
    free(R->cost_us), free(R->comm_us), free(R->dur_us), free(R->dev_dur_us);
    free(R->out_bytes), free(R->comm_bytes), free(R->name_off);
}

/* The ranks' orders (seq[v]: v's place in its rank's order) as one order of
 * the job: repeatedly the lowest rank whose next node has every input
 * placed.  Returns 0; -1 when the ranks' orders and the edges between
 * ranks wait on each other in a cycle. */
static int merge_orders(const struct sb_graph_view *g, uint32_t n_ranks,
                        uint32_t *const *order, const uint32_t *n_of, struct sb_schedule *out)
{
    uint32_t n = g->n_nodes, placed = 0;
    uint8_t *done = sb_xcalloc((size_t)n + 1, 1);
    uint32_t *next = sb_xcalloc((size_t)n_ranks + 1, sizeof *next);
    for (int progress = 1; progress && placed < n;) {
        progress = 0;
        for (uint32_t r = 0; r < n_ranks; r++)
            for (; next[r] < n_of[r]; next[r]++) {
                uint32_t v = order[r][next[r]], e = g->pred_off[v];
                while (e < g->pred_off[v + 1] && done[g->pred[e]])
                    e++;
                if (e < g->pred_off[v + 1])
                    break;
                done[v] = 1;
                out->order[placed++] = v;
                progress = 1;
            }
    }
    free(done), free(next);
    return placed == n ? 0 : -1;
}

/* A rank's buckets go into the job's schedule under ids of their own
 * (*bucket_base + the rank's id): the validator matches the ranks' buckets
 * of joined collectives (one fused collective every rank launches) and
 * refuses by name those that do not match, rather than the job silently
 * running them unbucketed. */
static void rank_buckets(const struct rank_view *R, const uint32_t *bucket,
                         struct sb_schedule *out, uint32_t *bucket_base)
{
    uint32_t top = 0;
    for (uint32_t k = 0; out->bucket && k < R->n; k++)
        if (bucket[k]) {
            out->bucket[R->id[k]] = *bucket_base + bucket[k];
            top = bucket[k] > top ? bucket[k] : top;
        }
    *bucket_base += top;
}

/* Runs the policy on rank d's view; its order (job ids) goes to order. */
static int run_rank(const struct sb_sched *sc, const struct sb_graph_view *g, uint32_t d,
                    const uint32_t *ids, uint32_t n, uint32_t *at, uint32_t **order,
                    uint32_t *n_of, uint32_t *bucket_base, struct sb_schedule *out,
                    struct sb_err *e)
{
    struct rank_view R;
    rank_view_init(&R, g, d, ids, n, at);
    struct sb_schedule s;
    sb_schedule_init_view(&s, &R.v, 1); /* the rank's view: every node on its device 0 */
    int rc = 0;
    struct sb_err ve;
    if (sb_sched_run_view(sc, &R.v, &s, &ve))
        rc = sb_errf(e, "rank %u: %s", d, ve.msg);
    if (!rc && sb_schedule_validate(&R.v, &s, &ve))
        rc = sb_errf(e, "rank %u: the policy's order of the rank's program is invalid: %s",
                     d, ve.msg);
    if (!rc) {
        order[d] = sb_xmalloc(((size_t)R.n + 1) * sizeof **order);
        n_of[d] = R.n;
        for (uint32_t k = 0; k < R.n; k++)
            order[d][k] = R.id[s.order[k]];
        for (uint32_t k = 0; k < R.n; k++) /* a rank's barrier stays at its node */
            if (s.barrier[k])
                out->barrier[order[d][k]] = 1; /* node-indexed until merged */
        if (s.mem_limit_bytes > out->mem_limit_bytes)
            out->mem_limit_bytes = s.mem_limit_bytes;
        rank_buckets(&R, s.bucket, out, bucket_base);
    }
    sb_schedule_free(&s);
    for (uint32_t k = 0; k < n; k++)
        at[ids[k]] = SB_NONE;
    rank_view_free(&R);
    return rc;
}

int sb_sched_run_ranks(const struct sb_sched *sc, const struct sb_graph *G,
                       struct sb_schedule *out, struct sb_err *e)
{
    const struct sb_graph_view *g = &G->v;
    uint32_t nd = g->machine->n_devices, n = g->n_nodes;
    uint32_t **order = sb_xcalloc(nd, sizeof *order), *n_of = sb_xcalloc(nd, sizeof *n_of);
    uint32_t *at = sb_xmalloc(((size_t)n + 1) * sizeof *at);
    uint8_t *mark = sb_xcalloc((size_t)n + 1, 1);
    /* each device's nodes in increasing id: by_dev[first[d] .. first[d+1]) */
    uint32_t *first = sb_xcalloc((size_t)nd + 1, sizeof *first);
    uint32_t *by_dev = sb_xmalloc(((size_t)n + 1) * sizeof *by_dev);
    for (uint32_t v = 0; v < n; v++)
        first[g->device[v] + 1]++;
    for (uint32_t d = 0; d < nd; d++)
        first[d + 1] += first[d];
    uint32_t *fill = sb_xmalloc(((size_t)nd + 1) * sizeof *fill);
    memcpy(fill, first, ((size_t)nd + 1) * sizeof *fill);
    for (uint32_t v = 0; v < n; v++)
        by_dev[fill[g->device[v]]++] = v;
    free(fill);
    memset(at, 0xff, ((size_t)n + 1) * sizeof *at); /* SB_NONE */
    int rc = 0;
    uint32_t bucket_base = 0;
    for (uint32_t d = 0; d < nd && !rc; d++)
        rc = run_rank(sc, g, d, by_dev + first[d], first[d + 1] - first[d], at, order, n_of,
                      &bucket_base, out, e);
    free(first), free(by_dev);
    if (!rc) {
        memcpy(mark, out->barrier, n); /* node-indexed, from run_rank */
        memset(out->barrier, 0, n);
        if (merge_orders(g, nd, order, n_of, out))
            rc = sb_errf(e, "the ranks' orders wait on each other in a cycle through the "
                            "edges between ranks");
        for (uint32_t i = 0; !rc && i < n; i++)
            out->barrier[i] = mark[out->order[i]];
        for (uint32_t v = 0; !rc && v < n; v++)
            out->device[v] = g->device[v];
    }
    for (uint32_t d = 0; d < nd; d++)
        free(order[d]);
    free(order), free(n_of), free(at), free(mark);
    return rc ? -1 : 0;
}

int sb_sched_per_rank(const struct sb_sched *sc, const struct sb_graph *G)
{
    int placer = sc->p->size >= SB_PLUGIN_SIZE_V1 + sizeof sc->p->flags && (sc->p->flags & SB_PLUGIN_PLACER);
    return !placer && sb_graph_is_job(&G->v);
}
