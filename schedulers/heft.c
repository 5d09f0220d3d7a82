/* heft: Heterogeneous Earliest Finish Time (Topcuoglu, Hariri and Wu, "Performance-
 * effective and low-complexity task scheduling for heterogeneous computing", IEEE
 * TPDS 13(3), 2002), the list-scheduling reference placement papers report
 * against.
 *
 * 1. Upward rank from mean costs: rank(v) = mean_a t(v, a) + max over successors
 *    s of (mean transfer time of v's output + rank(s)).
 * 2. Nodes in decreasing rank (ties by id, which keeps the order topological
 *    because ids are), each onto the device with the earliest finish time, where
 *    a node may be inserted into an idle gap between nodes already placed there
 *    (the paper's insertion-based policy).
 *
 * Adaptations to the graph model (docs/heft.md): inputs cost nothing and move
 * to the device of their first-placed consumer instead of being placed like
 * tasks (a weight lives where its layer runs); a collective's start and done stay
 * on one device and the done is ready when the collective's duration has passed;
 * pre-assigned devices are kept.  The returned order lists nodes by planned
 * start time, so each device runs them in the planned order. */
#include "heft-impl.h"
#include "schedbench/plugin.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct heft {
    const struct sb_graph_view *g;
    uint32_t nd;
    uint32_t *root;  /* buffer of each node's output (views share their source's) */
    double *rank;
    double mean_lat, mean_inv_bw; /* mean over ordered pairs of distinct devices */
    double *aft;     /* planned finish */
    double *ast;     /* planned start */
    int32_t *dev;
    struct lane *lane;
};

static int is_view(const struct sb_graph_view *g, uint32_t v)
{
    return (g->flags[v] & SB_FLAG_ALIAS) || g->kind[v] == SB_KIND_DONE;
}

static double t_on(const struct heft *H, uint32_t v, uint32_t a)
{
    return H->g->kind[v] == SB_KIND_COMPUTE ? H->g->dev_dur_us[(size_t)v * H->nd + a] : 0;
}

static double mean_cost(const struct heft *H, uint32_t v)
{
    double sum = 0;
    uint32_t k = 0;
    for (uint32_t a = 0; a < H->nd; a++)
        if (isfinite(t_on(H, v, a))) {
            sum += t_on(H, v, a);
            k++;
        }
    return k ? sum / k : 0;
}

/* Transfer time of v's output from device a to b (0 on one device). */
static double comm(const struct heft *H, uint32_t v, uint32_t a, uint32_t b)
{
    if (a == b)
        return 0;
    const struct sb_machine_view *m = H->g->machine;
    size_t L = (size_t)a * H->nd + b;
    if (m->can_read[(size_t)b * H->nd + a])
        return 0;
    return m->link_lat_us[L] + (double)H->g->out_bytes[H->root[v]] / (m->link_gbps[L] * 1e3);
}

static void mean_links(struct heft *H)
{
    const struct sb_machine_view *m = H->g->machine;
    double lat = 0, inv = 0;
    uint32_t k = 0;
    for (uint32_t a = 0; a < H->nd; a++)
        for (uint32_t b = 0; b < H->nd; b++)
            if (a != b) {
                lat += m->link_lat_us[(size_t)a * H->nd + b];
                inv += 1.0 / (m->link_gbps[(size_t)a * H->nd + b] * 1e3);
                k++;
            }
    H->mean_lat = k ? lat / k : 0;
    H->mean_inv_bw = k ? inv / k : 0;
}

/* Upward ranks; ids are topological, so one reverse pass suffices. */
static void upward_rank(struct heft *H)
{
    const struct sb_graph_view *g = H->g;
    for (uint32_t i = g->n_nodes; i-- > 0;) {
        double tail = 0, c = 0;
        if (H->nd > 1 && g->kind[i] != SB_KIND_INPUT)
            c = H->mean_lat + (double)g->out_bytes[H->root[i]] * H->mean_inv_bw;
        for (uint32_t e = g->succ_off[i]; e < g->succ_off[i + 1]; e++) {
            uint32_t s = g->succ[e];
            /* start -> done carries the collective's duration, on one device */
            double w = g->kind[i] == SB_KIND_START && g->partner[i] == s ? g->dur_us[i] : c;
            if (w + H->rank[s] > tail)
                tail = w + H->rank[s];
        }
        H->rank[i] = mean_cost(H, i) + tail;
    }
}

/* qsort has no context argument in C11: sort (rank, id) pairs instead. */
struct key {
    double k;
    uint32_t id, tie;
};

static int cmp_key_desc(const void *x, const void *y)
{
    const struct key *a = x, *b = y;
    if (a->k != b->k)
        return a->k > b->k ? -1 : 1;
    return a->id < b->id ? -1 : a->id > b->id;
}

static int cmp_key_asc(const void *x, const void *y)
{
    const struct key *a = x, *b = y;
    if (a->k != b->k)
        return a->k < b->k ? -1 : 1;
    return a->tie < b->tie ? -1 : a->tie > b->tie;
}

/* When v's inputs are on device a; inputs not yet placed are free. */
static double ready_on(const struct heft *H, uint32_t v, uint32_t a)
{
    const struct sb_graph_view *g = H->g;
    double t = 0;
    for (uint32_t e = g->pred_off[v]; e < g->pred_off[v + 1]; e++) {
        uint32_t p = g->pred[e];
        double r;
        if (g->kind[p] == SB_KIND_INPUT && H->dev[p] < 0)
            continue;
        if (g->kind[v] == SB_KIND_DONE && p == g->partner[v])
            r = H->aft[p] + g->dur_us[p];
        else
            r = H->aft[p] + comm(H, p, (uint32_t)H->dev[p], a);
        if (r > t)
            t = r;
    }
    return t;
}

static int place(struct heft *H, uint32_t v)
{
    const struct sb_graph_view *g = H->g;
    uint32_t lo = 0, hi = H->nd, best = 0;
    struct lane_pos best_at = {0, 0};
    double best_eft = INFINITY, best_est = 0;
    if (g->device[v] >= 0)
        lo = (uint32_t)g->device[v], hi = lo + 1;
    else if (g->kind[v] == SB_KIND_DONE)
        lo = (uint32_t)H->dev[g->partner[v]], hi = lo + 1;
    for (uint32_t a = lo; a < hi; a++) {
        double w = t_on(H, v, a), ready = ready_on(H, v, a);
        struct lane_pos at = {0, 0};
        if (!isfinite(w))
            continue;
        double est = w > 0 ? lane_earliest_gap(&H->lane[a], ready, w, &at) : ready;
        if (est + w < best_eft) {
            best_eft = est + w;
            best_est = est;
            best = a;
            best_at = at;
        }
    }
    if (!isfinite(best_eft)) /* no device can run v: leave it where validation reports it */
        best = lo, best_est = best_eft = ready_on(H, v, lo);
    else if (t_on(H, v, best) > 0 && lane_insert(&H->lane[best], best_at, best_est, best_eft))
        return -1;
    H->dev[v] = (int32_t)best;
    H->ast[v] = best_est;
    H->aft[v] = best_eft;
    /* an input not placed yet goes with its first-placed consumer; later
     * consumers elsewhere pay its copy */
    for (uint32_t e = g->pred_off[v]; e < g->pred_off[v + 1]; e++)
        if (g->kind[g->pred[e]] == SB_KIND_INPUT && H->dev[g->pred[e]] < 0)
            H->dev[g->pred[e]] = (int32_t)best;
    return 0;
}

/* Inputs nobody reads stay on device 0. */
static void place_inputs(struct heft *H)
{
    for (uint32_t v = 0; v < H->g->n_nodes; v++)
        if (H->dev[v] < 0)
            H->dev[v] = 0;
}

static int heft_run(void *state, const struct sb_graph_view *g, struct sb_schedule *out)
{
    (void)state;
    uint32_t n = g->n_nodes;
    struct heft H = {.g = g, .nd = g->machine->n_devices};
    for (uint32_t v = 0; v < n; v++)
        if (g->device[v] >= (int32_t)H.nd)
            return sb_plugin_fail(out->err, out->n_err,
                                  "heft: node %u is pre-assigned to device %d; the machine "
                                  "has %u (run it with its --machine)", v, g->device[v], H.nd);
    H.root = malloc(((size_t)n + 1) * sizeof *H.root);
    H.rank = malloc(((size_t)n + 1) * sizeof *H.rank);
    H.aft = calloc((size_t)n + 1, sizeof *H.aft);
    H.ast = calloc((size_t)n + 1, sizeof *H.ast);
    H.dev = malloc(((size_t)n + 1) * sizeof *H.dev);
    H.lane = calloc(H.nd, sizeof *H.lane);
    struct key *k = malloc(((size_t)n + 1) * sizeof *k);
    if (!H.root || !H.rank || !H.aft || !H.ast || !H.dev || !H.lane || !k) {
        free(H.root), free(H.rank), free(H.aft), free(H.ast), free(H.dev), free(H.lane), free(k);
        return sb_plugin_fail(out->err, out->n_err, "heft: out of memory");
    }
    for (uint32_t v = 0; v < n; v++) {
        H.root[v] = is_view(g, v) ? H.root[g->pred[g->pred_off[v]]] : v;
        H.dev[v] = g->device[v];
    }
    mean_links(&H);
    upward_rank(&H);
    for (uint32_t v = 0; v < n; v++)
        k[v] = (struct key){H.rank[v], v, 0};
    qsort(k, n, sizeof *k, cmp_key_desc);
    int rc = 0;
    for (uint32_t i = 0; i < n && !rc; i++)
        if (g->kind[k[i].id] != SB_KIND_INPUT)
            rc = place(&H, k[i].id);
    if (rc)
        goto out;
    place_inputs(&H);
    /* by planned start; ties in rank order, which puts producers first */
    for (uint32_t i = 0; i < n; i++)
        k[i] = (struct key){g->kind[k[i].id] == SB_KIND_INPUT ? -1 : H.ast[k[i].id], k[i].id, i};
    qsort(k, n, sizeof *k, cmp_key_asc);
    for (uint32_t i = 0; i < n; i++) {
        out->order[i] = k[i].id;
        out->device[k[i].id] = H.dev[k[i].id];
    }
out:
    for (uint32_t a = 0; a < H.nd; a++)
        lane_free(&H.lane[a]);
    free(H.lane), free(H.root), free(H.rank), free(H.aft), free(H.ast), free(H.dev), free(k);
    return rc ? sb_plugin_fail(out->err, out->n_err, "heft: out of memory") : 0;
}

static const struct sb_plugin heft = {
    .abi = SB_PLUGIN_ABI,
    .size = sizeof(struct sb_plugin),
    .name = "heft",
    .summary = "HEFT (Topcuoglu et al. 2002): upward rank, insertion-based earliest "
               "finish time placement",
    .run = heft_run,
};

const struct sb_plugin *sb_plugin_heft(void) { return &heft; }

SB_PLUGIN_EXPORT(sb_plugin_heft)
