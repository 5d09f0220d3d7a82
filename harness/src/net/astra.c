/* ASTRA-sim's system-layer collective model over its congestion-unaware
 * analytical network (docs/astra.md).  Written from the behaviour of
 * astra-sim/system (collective chunking, phases per dimension, queues of
 * active chunks) and astra-network-analytical, as GOLDEN.md in
 * ../shared/corpus/astra-golden documents it; checked against ASTRA-sim's own
 * outputs by `schedbench collective --golden`. */
#define _POSIX_C_SOURCE 200809L
#include "astra.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- one message, one phase -------------------------------------------------- */

struct dim {
    uint8_t topo, algo;
    uint32_t n;
    double B, L; /* bytes per ns, ns */
    double gbps; /* B as configured */
    /* a communicator group: the physical ranks of the logical ring, in order
     * (NULL: the whole dimension, rank i at position i) */
    const uint32_t *ranks;
    uint32_t n_phys; /* the physical dimension's size, for ring distances */
};

/* c(m, h) = floor(h L + m / B): ASTRA-sim truncates the double */
static double msg(const struct dim *D, double m, uint32_t h)
{
    return floor((double)h * D->L + m / D->B);
}

/* hops between physical ranks a and b of a dimension of n */
static uint32_t dist(uint8_t topo, uint32_t n, uint32_t a, uint32_t b)
{
    uint32_t k = a > b ? a - b : b - a;
    switch (topo) {
    case SB_TOPO_SWITCH: return 2;
    case SB_TOPO_FULLY_CONNECTED: return 1;
    default: return k < n - k ? k : n - k;
    }
}

/* hops between the ranks at logical positions i and i + k of the dimension */
static uint32_t hops_from(const struct dim *D, uint32_t i, uint32_t k)
{
    if (!D->ranks)
        return dist(D->topo, D->n, 0, k % D->n);
    return dist(D->topo, D->n_phys, D->ranks[i], D->ranks[(i + k) % D->n]);
}

static uint32_t hops(const struct dim *D, uint32_t k)
{
    return hops_from(D, 0, k);
}

/* Is every logical ring link (or every peer at distance k, for all k) as
 * long?  Then the closed forms hold with that hop count. */
static int uniform(const struct dim *D, int all_peers)
{
    for (uint32_t k = 1; k < (all_peers ? D->n : 2); k++)
        for (uint32_t i = 0; i < D->n; i++)
            if (hops_from(D, i, k) != hops_from(D, 0, all_peers ? 1 : k))
                return 0;
    return 1;
}

static double reduce(const struct sb_astra_config *c, double m)
{
    return 3 * floor(m / c->local_mem_bw); /* a write and two reads of local memory */
}

/* A ring whose links differ in length (a communicator group spread over a
 * physical ring).  ASTRA-sim runs the ring on each rank on its own: a rank
 * forwards step k's message once step k - 1's has arrived (and been reduced
 * on reducing steps), and starts its next chunk (after the phase's endpoint
 * delay) as soon as it received its last message of this one.  Nothing else
 * holds a rank back, so the last rank ends after the slowest chain of
 * rounds * K consecutive links leading to it.  The queues charge each chunk
 * an equal share of that, which is exact when the group's chunks run back to
 * back (`rounds` of them) and ranks are otherwise alone.  This reproduces
 * ASTRA-sim on Ring 8 with the groups {0..3},{4..7} (GOLDEN.md cases M),
 * where a closed form with any one hop count does not. */
static double ring_async(const struct sb_astra_config *c, const struct dim *D,
                         enum sb_astra_op op, double s, uint64_t rounds)
{
    double d = c->endpoint_delay;
    uint32_t n = D->n, K, reducing;
    double m = (double)((uint64_t)s / n);
    switch (op) {
    case SB_OP_ALL_REDUCE: K = 2 * (n - 1), reducing = n - 1; break;
    case SB_OP_REDUCE_SCATTER: K = n - 1, reducing = n - 1; break;
    case SB_OP_ALL_GATHER: K = n - 1, reducing = 0, m = s; break;
    default: K = n * (n - 1) / 2, reducing = 0; break;
    }
    if ((double)n * (double)rounds * K > 1e8)
        return -1; /* phase() says why */
    double worst = 0;
    for (uint32_t end = 0; end < n; end++) {
        /* walking back from `end`: step k of a chunk is sent over the link
         * that starts K - k links (plus whole chunks) before it */
        double t = 0;
        uint64_t back = 0;
        for (uint64_t r = 0; r < rounds; r++) {
            t += d;
            for (uint32_t k = K; k-- > 0;) {
                uint32_t from = (uint32_t)((end + n - (++back % n)) % n);
                t += msg(D, m, hops_from(D, from, 1)) + d + (k < reducing ? reduce(c, m) : 0);
            }
        }
        if (t > worst)
            worst = t;
    }
    return worst / (double)rounds;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* A direct all-reduce whose peers sit at different distances (a Ring of more
 * than 3).  From ASTRA-sim's AllToAll::run and process_max_count: a rank sends
 * its first round to every peer at once, peers in turn from the next one on;
 * its second-round messages are queued in the same turn of peers as the
 * first-round messages arrive; and once every first-round message has arrived,
 * each one's reduction that finishes releases the next second-round send.  So
 * the i-th second-round message (to the peer i + 1 along) leaves after the
 * i-th earliest first-round arrival and its reduction, and the chunk ends when
 * the last second-round message is in:
 *   d + 2 d + r + max_i (c(first round, i-th earliest) + c(peer i + 1)).
 * With every peer as far this is the closed form d + 2 (c + d) + r.  It gives
 * ASTRA-sim's 24,860 ns on the Ring of 8 (golden case
 * I_ring8topo_direct_all_reduce_1MiB). */
static double direct_all_reduce(const struct sb_astra_config *c, const struct dim *D, double m)
{
    uint32_t n = D->n;
    double d = c->endpoint_delay, worst = 0;
    double *first = sb_xmalloc((size_t)n * sizeof *first);
    for (uint32_t k = 1; k < n; k++)
        first[k - 1] = msg(D, m, hops(D, k));
    qsort(first, n - 1, sizeof *first, cmp_double);
    for (uint32_t i = 0; i + 1 < n; i++)
        if (first[i] + msg(D, m, hops(D, i + 1)) > worst)
            worst = first[i] + msg(D, m, hops(D, i + 1));
    free(first);
    return d + 2 * d + reduce(c, m) + worst;
}

/* How many chunks one after the other on each slot of a dimension. */
static uint64_t rounds(const struct sb_astra_config *c, uint64_t chunks)
{
    return (chunks + c->active_chunks - 1) / c->active_chunks;
}

/* doubleBinaryTree has no closed form: ranks end at different times, and the
 * chunks take the two trees in turn.  The rank-by-rank model of astra_ranks.c
 * runs the phase's chunks on this dimension alone, and each chunk is charged
 * an equal share of the last rank's end, which is exact when they run alone
 * (ASTRA-sim's 438,292 ns on a Switch of 8, golden case
 * C_sw8_doubleBinaryTree_all_reduce_1MiB). */
static double tree_phase(const struct sb_astra_config *c, const struct dim *D,
                         enum sb_astra_op op, double s, uint64_t chunks, const char **why)
{
    struct sb_astra_config x = *c;
    struct sb_err e;
    if (D->ranks)
        return *why = "doubleBinaryTree over a communicator group is not modelled", -1;
    if (op != SB_OP_ALL_REDUCE)
        return *why = "doubleBinaryTree is an all-reduce only", -1;
    if (D->n & (D->n - 1))
        return *why = "doubleBinaryTree needs a power-of-two dimension", -1;
    x.n_dims = 1;
    x.topo[0] = D->topo;
    x.npus[0] = D->n;
    x.bw_gbps[0] = D->gbps;
    x.latency_ns[0] = D->L;
    x.algo[op][0] = SB_ALGO_DBT;
    double t = sb_astra_ranks_unaware(&x, op, (uint64_t)s, chunks, &e);
    if (t < 0)
        return *why = "doubleBinaryTree: more than the rank-by-rank model simulates", -1;
    return t / (double)rounds(c, chunks);
}

/* One chunk's time in one phase with input s; -1 when not modelled. */
static double phase(const struct sb_astra_config *c, const struct dim *D, enum sb_astra_op op,
                    double s, uint64_t chunks, const char **why)
{
    double d = c->endpoint_delay, n = D->n;
    uint64_t si = (uint64_t)s;
    if (D->n == 1)
        return 0;
    switch (D->algo) {
    case SB_ALGO_RING: {
        double m = (double)(si / D->n), h = hops(D, 1);
        if (!uniform(D, 0))
        {
            double t = ring_async(c, D, op, s, rounds(c, chunks));
            if (t < 0)
                *why = "a group this large on links of different lengths: more than this "
                       "model walks (ranks x chunks x steps above 10^8)";
            return t;
        }
        switch (op) {
        case SB_OP_ALL_REDUCE: return d + 2 * (n - 1) * (msg(D, m, (uint32_t)h) + d) + (n - 1) * reduce(c, m);
        case SB_OP_REDUCE_SCATTER: return d + (n - 1) * (msg(D, m, (uint32_t)h) + d) + (n - 1) * reduce(c, m);
        case SB_OP_ALL_GATHER: return d + (n - 1) * (msg(D, s, (uint32_t)h) + d);
        default: return d + n * (n - 1) / 2 * (msg(D, m, (uint32_t)h) + d);
        }
    }
    case SB_ALGO_DIRECT:
    direct: {
        /* every peer at once, the step as long as the farthest peer's message;
         * an all-reduce's two rounds only have that closed form when every
         * peer is as far (GOLDEN.md section 1) */
        uint32_t near = hops(D, 1), h = hops(D, D->n / 2);
        if (D->ranks && !uniform(D, 1)) {
            *why = "direct over a communicator group whose peers sit at different distances "
                   "is not modelled";
            return -1;
        }
        double m = (double)(si / D->n);
        if (op == SB_OP_ALL_REDUCE && near != h)
            return direct_all_reduce(c, D, m);
        switch (op) {
        case SB_OP_ALL_REDUCE: return d + 2 * (msg(D, m, h) + d) + reduce(c, m);
        case SB_OP_REDUCE_SCATTER: return d + (msg(D, m, h) + d) + reduce(c, m);
        case SB_OP_ALL_GATHER: return d + (msg(D, s, h) + d);
        default: return d + (msg(D, m, h) + d);
        }
    }
    case SB_ALGO_HALVING_DOUBLING: {
        uint32_t k = 0;
        while ((1u << k) < D->n)
            k++;
        if (op == SB_OP_ALL_TO_ALL) /* ASTRA-sim has no halving-doubling all-to-all */
            goto direct;
        if (D->ranks && !uniform(D, 1)) {
            *why = "halvingDoubling over a communicator group whose peers sit at different "
                   "distances is not modelled";
            return -1;
        }
        if ((1u << k) != D->n) {
            *why = "halvingDoubling needs a power-of-two dimension";
            return -1;
        }
        double t = d;
        if (op == SB_OP_ALL_GATHER) {
            for (uint32_t j = 1; j <= k; j++)
                t += msg(D, s * (double)(1u << (j - 1)), hops(D, D->n >> j)) + d;
            return t;
        }
        /* reduce-scatter steps: halve the message, double the distance; the
         * first step does not pay the reduction */
        for (uint32_t j = 1; j <= k; j++) {
            double m = (double)(si >> j);
            t += msg(D, m, hops(D, 1u << (j - 1))) + d + (j >= 2 ? reduce(c, m) : 0);
        }
        if (op == SB_OP_ALL_REDUCE) /* all-gather back, in reverse */
            for (uint32_t j = k; j >= 1; j--)
                t += msg(D, (double)(si >> j), hops(D, 1u << (j - 1))) + d;
        return t;
    }
    default:
        return tree_phase(c, D, op, s, chunks, why);
    }
}

/* ---- the collective ------------------------------------------------------ */

struct ph {
    uint32_t dim;
    enum sb_astra_op op;
    double t; /* per chunk */
};

/* The phases of op over the dimensions, each chunk's input size threaded
 * through (RS divides it by n, AG multiplies). */
static int phases(const struct sb_astra_config *c, const struct dim *D, enum sb_astra_op op,
                  double chunk, uint64_t chunks, struct ph *P, uint32_t *n_ph, const char **why)
{
    uint32_t k = c->n_dims, n = 0;
    uint32_t order[2 * SB_ASTRA_MAX_DIMS];
    enum sb_astra_op ops[2 * SB_ASTRA_MAX_DIMS];
    if (op == SB_OP_ALL_REDUCE && c->local_bw_aware && k > 1) {
        for (uint32_t i = 0; i + 1 < k; i++)
            order[n] = i, ops[n++] = SB_OP_REDUCE_SCATTER;
        order[n] = k - 1, ops[n++] = SB_OP_ALL_REDUCE;
        for (uint32_t i = k - 1; i-- > 0;)
            order[n] = i, ops[n++] = SB_OP_ALL_GATHER;
    } else if (op == SB_OP_ALL_GATHER) {
        for (uint32_t i = k; i-- > 0;)
            order[n] = i, ops[n++] = op;
    } else {
        for (uint32_t i = 0; i < k; i++)
            order[n] = i, ops[n++] = op;
    }
    double s = chunk;
    *n_ph = 0;
    for (uint32_t i = 0; i < n; i++) {
        const struct dim *d = &D[order[i]];
        double t = phase(c, d, ops[i], s, chunks, why);
        if (t < 0)
            return -1;
        if (d->n > 1)
            P[(*n_ph)++] = (struct ph){order[i], ops[i], t};
        if (ops[i] == SB_OP_REDUCE_SCATTER)
            s = (double)((uint64_t)s / d->n);
        else if (ops[i] == SB_OP_ALL_GATHER)
            s *= d->n;
    }
    return 0;
}

int sb_astra_plan(const struct sb_astra_config *c, enum sb_astra_op op, uint64_t bytes,
                  struct sb_astra_plan *p, struct sb_err *e)
{
    return sb_astra_plan_group(c, op, bytes, NULL, 0, p, e);
}

int sb_astra_plan_group(const struct sb_astra_config *c, enum sb_astra_op op, uint64_t bytes,
                        const uint32_t *ranks, uint32_t n_ranks, struct sb_astra_plan *p,
                        struct sb_err *e)
{
    struct dim D[SB_ASTRA_MAX_DIMS];
    for (uint32_t i = 0; i < c->n_dims; i++)
        D[i] = (struct dim){c->topo[i], c->algo[op][i], c->npus[i],
                            c->bw_gbps[i] * 1073741824.0 / 1e9, c->latency_ns[i],
                            c->bw_gbps[i], NULL, c->npus[i]};
    if (ranks) {
        if (c->n_dims != 1)
            return sb_errf(e, "communicator groups on a network of several dimensions are "
                              "not modelled");
        for (uint32_t i = 0; i < n_ranks; i++)
            if (ranks[i] >= c->npus[0])
                return sb_errf(e, "group rank %u: the network has %u NPUs", ranks[i],
                               c->npus[0]);
        D[0].n = n_ranks;
        D[0].ranks = ranks;
    }
    uint64_t chunk;
    if (sb_astra_chunking(c, op, bytes, &chunk, &p->chunks, e))
        return -1;
    struct ph P[2 * SB_ASTRA_MAX_DIMS];
    const char *why = NULL;
    if (phases(c, D, op, (double)chunk, p->chunks, P, &p->n_ph, &why))
        return sb_errf(e, "%s", why);
    for (uint32_t i = 0; i < p->n_ph; i++)
        p->dim[i] = P[i].dim, p->t_ns[i] = P[i].t;
    return 0;
}

double sb_astra_plan_floor_ns(const struct sb_astra_plan *p, uint32_t active)
{
    double path = 0, per_dim[SB_ASTRA_MAX_DIMS] = {0}, best;
    for (uint32_t i = 0; i < p->n_ph; i++) {
        path += p->t_ns[i];
        per_dim[p->dim[i]] += p->t_ns[i];
    }
    best = path;
    for (uint32_t d = 0; d < SB_ASTRA_MAX_DIMS; d++)
        if ((double)p->chunks * per_dim[d] / active > best)
            best = (double)p->chunks * per_dim[d] / active;
    return best;
}

double sb_astra_collective(const struct sb_astra_config *c, enum sb_astra_op op, uint64_t bytes,
                           struct sb_err *e)
{
    struct sb_astra_plan p;
    if (sb_astra_plan(c, op, bytes, &p, e))
        return -1;
    struct sb_astra_sys *s = sb_astra_sys_new(c);
    double t = sb_astra_sys_wait(s, sb_astra_sys_issue(s, &p, 0));
    sb_astra_sys_free(s);
    return t;
}

/* ---- --comm astra ------------------------------------------------------------ */

static int op_of(uint8_t coll, enum sb_astra_op *op)
{
    switch (coll) {
    case SB_COLL_ALL_REDUCE: return *op = SB_OP_ALL_REDUCE, 0;
    case SB_COLL_ALL_GATHER: return *op = SB_OP_ALL_GATHER, 0;
    case SB_COLL_REDUCE_SCATTER: return *op = SB_OP_REDUCE_SCATTER, 0;
    case SB_COLL_ALL_TO_ALL: return *op = SB_OP_ALL_TO_ALL, 0;
    /* its output buffer, the most it can receive, as an all-to-all */
    case SB_COLL_RAGGED_ALL_TO_ALL: return *op = SB_OP_ALL_TO_ALL, 0;
    default: return -1; /* point-to-point, copies and collective_broadcast (ASTRA-sim
                           has no broadcast) keep the alpha-beta model */
    }
}

/* The configuration, op and ASTRA-sim size of start v; -1 when ASTRA-sim
 * does not price it (point-to-point, copies, a comm_us from the file, a
 * group of one). */
static int node_config(const struct sb_astra_config *c, const struct sb_graph *g, uint32_t v,
                       struct sb_astra_config *x, enum sb_astra_op *op, uint64_t *bytes)
{
    if (g->kind[v] != SB_KIND_START || g->comm_us[v] >= 0 || op_of(g->coll[v], op))
        return -1;
    const char *ranks = sb_graph_meta(g, "ranks");
    uint32_t p = g->group_size[v]                      ? g->group_size[v]
                 : ranks                               ? (uint32_t)strtoul(ranks, NULL, 10)
                 : c->default_ranks ? c->default_ranks : 1;
    if (p <= 1)
        return -1;
    uint64_t N = 1;
    for (uint32_t d = 0; d < c->n_dims; d++)
        N *= c->npus[d];
    /* the network as described when it has the group's size; otherwise one
     * ring of the group over the first dimension's links */
    *x = *c;
    if (N != p) {
        x->n_dims = 1;
        x->topo[0] = SB_TOPO_RING;
        x->npus[0] = p;
    }
    /* ASTRA-sim's all-gather size is each rank's input; ours is the result */
    *bytes = *op == SB_OP_ALL_GATHER ? g->comm_bytes[v] / p : g->comm_bytes[v];
    return 0;
}

int sb_astra_node_plan(const struct sb_astra_config *c, const struct sb_graph *g, uint32_t v,
                       struct sb_astra_plan *p)
{
    struct sb_astra_config x;
    enum sb_astra_op op;
    uint64_t bytes;
    struct sb_err e;
    if (node_config(c, g, v, &x, &op, &bytes))
        return 0;
    /* sb_astra_apply priced every such node before the simulator runs */
    SB_ASSERT(sb_astra_plan(&x, op, bytes, p, &e) == 0);
    return 1;
}

/* The congestion-aware backend simulates every message, so the same
 * collective (op, bytes, network) is priced once per graph. */
struct priced {
    enum sb_astra_op op;
    uint64_t bytes;
    uint32_t npus, n_dims;
    double ns;
};

static double price(const struct sb_astra_config *x, int aware, enum sb_astra_op op,
                    uint64_t bytes, struct priced *memo, uint32_t *n_memo, struct sb_err *e)
{
    if (!aware)
        return sb_astra_collective(x, op, bytes, e);
    for (uint32_t i = 0; i < *n_memo; i++)
        if (memo[i].op == op && memo[i].bytes == bytes && memo[i].npus == x->npus[0] &&
            memo[i].n_dims == x->n_dims)
            return memo[i].ns;
    double ns = sb_astra_aware(x, op, bytes, NULL, NULL, 0, e);
    if (ns >= 0 && *n_memo < SB_ASTRA_MEMO)
        memo[(*n_memo)++] = (struct priced){op, bytes, x->npus[0], x->n_dims, ns};
    return ns;
}

/* The first member (lowest id) of v's joined collective whose price v
 * shares: same type, size and group, neither with a recorded time (the
 * importer checks the first three); v itself when there is none. */
static uint32_t joined_lead(const struct sb_graph *g, uint32_t v)
{
    uint32_t lead = v;
    if (!g->join || g->join[v] == v || g->comm_us[v] >= 0)
        return v;
    for (uint32_t m = g->join[v]; m != v; m = g->join[m])
        if (m < lead && g->coll[m] == g->coll[v] && g->comm_us[m] < 0 &&
            g->comm_bytes[m] == g->comm_bytes[v] && g->group_size[m] == g->group_size[v])
            lead = m;
    return lead;
}

int sb_astra_apply(const struct sb_astra_config *c, int aware, struct sb_graph *g,
                   struct sb_err *e)
{
    struct priced *memo = aware ? sb_xmalloc(SB_ASTRA_MEMO * sizeof *memo) : NULL;
    uint32_t n_memo = 0;
    int rc = 0;
    for (uint32_t v = 0; v < g->v.n_nodes && !rc; v++) {
        struct sb_astra_config x;
        enum sb_astra_op op;
        uint64_t bytes;
        uint32_t lead = joined_lead(g, v);
        if (lead != v) { /* a joined collective is priced once, for its group */
            g->dur_us[v] = g->dur_us[lead];
            continue;
        }
        if (node_config(c, g, v, &x, &op, &bytes)) {
            if (g->kind[v] == SB_KIND_START && g->comm_us[v] < 0 && !op_of(g->coll[v], &op))
                g->dur_us[v] = 0; /* a group of one */
            continue;
        }
        double ns = price(&x, aware, op, bytes, memo, &n_memo, e);
        if (ns < 0) {
            char msg[sizeof e->msg];
            snprintf(msg, sizeof msg, "%s", e->msg);
            rc = sb_errf(e, "%s: node %u (%s): --comm %s: %s", g->path, v,
                         g->names + g->name_off[v], aware ? "astra-aware" : "astra", msg);
        }
        g->dur_us[v] = ns / 1000;
    }
    free(memo);
    return rc;
}
