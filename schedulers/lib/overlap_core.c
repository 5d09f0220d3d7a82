/* A model of PyTorch Inductor's overlap scheduler
 * (torch/_inductor/fx_passes/overlap_scheduling.py, class OverlapScheduler),
 * shared by the `overlap` and `memfallback` policies; `membound` borrows the
 * memory tracker, the compute-node rule and the domination pass.  The public
 * pieces are declared in schedbench/policy.h; the rest stays static here.
 *
 * How Inductor's notions map onto a schedbench graph:
 *   - "compute node" (is_compute_node: an op in torch.utils.flop_counter's
 *     registry) = a compute node whose op is a matmul, convolution or attention
 *     kernel (ovl_flop_op); when a graph names no such op, every compute node.
 *     Inductor never reorders these; neither do we.  Every other node (casts,
 *     pointwise, reductions, views) is one of its "other" nodes;
 *   - a collective is a start/done pair, its wait the done;
 *   - a process group is identified by the start's group size (the view carries
 *     no group identity; one FSDP job has one group per size);
 *   - collective times are g->dur_us of the start, compute times g->dur_us;
 *   - MemoryTracker is sb_ovl_mem below, which follows the harness's memory model
 *     (docs/cost-model.md) so that the policy sees what the harness measures.
 *
 * Where this deviates from Inductor, the comment at the place says so. */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "schedbench/policy.h"

/* ---- memory tracker: the harness's memory model, one node at a time ------ */

/* The buffers node v uses, with multiplicity, into m->uses; returns how many.
 * A node uses its own buffer (or the one it views), each input's buffer, and a
 * done also uses the buffers of its start's inputs, which the communication
 * reads until it finishes. */
uint32_t sb_ovl_mem_uses(struct sb_ovl_mem *m, const struct sb_graph_view *g,
                         uint32_t v)
{
    uint32_t k = 0;
    m->uses[k++] = m->root[v];
    for (uint32_t e = g->pred_off[v]; e < g->pred_off[v + 1]; e++)
        m->uses[k++] = m->root[g->pred[e]];
    if (g->kind[v] == SB_KIND_DONE) {
        uint32_t s = g->partner[v];
        for (uint32_t e = g->pred_off[s]; e < g->pred_off[s + 1]; e++)
            m->uses[k++] = m->root[g->pred[e]];
    }
    return k;
}

void sb_ovl_mem_free(struct sb_ovl_mem *m)
{
    free(m->root);
    free(m->uses_left);
    free(m->pinned);
    free(m->uses);
    memset(m, 0, sizeof *m);
}

int sb_ovl_mem_init(struct sb_ovl_mem *m, const struct sb_graph_view *g)
{
    uint32_t n = g->n_nodes;
    memset(m, 0, sizeof *m);
    m->n = n;
    m->root = malloc((size_t)n * sizeof *m->root + 1);
    m->uses_left = calloc((size_t)n + 1, sizeof *m->uses_left);
    m->pinned = calloc((size_t)n + 1, 1);
    m->uses = malloc(((size_t)g->n_edges * 2 + 1) * sizeof *m->uses);
    if (!m->root || !m->uses_left || !m->pinned || !m->uses) {
        sb_ovl_mem_free(m);
        return -1;
    }
    for (uint32_t v = 0; v < n; v++) {
        int views = (g->flags[v] & SB_FLAG_ALIAS) || g->kind[v] == SB_KIND_DONE;
        m->root[v] = views ? m->root[g->pred[g->pred_off[v]]] : v;
    }
    for (uint32_t v = 0; v < n; v++) {
        uint32_t k = sb_ovl_mem_uses(m, g, v);
        for (uint32_t i = 0; i < k; i++)
            m->uses_left[m->uses[i]]++;
        if (g->flags[v] & (SB_FLAG_WEIGHT | SB_FLAG_OUTPUT))
            m->pinned[m->root[v]] = 1;
        if (g->kind[v] == SB_KIND_INPUT) /* exists before the program starts */
            m->cur_bytes += (int64_t)g->out_bytes[v];
    }
    m->peak_bytes = m->cur_bytes;
    return 0;
}

/* Bytes v allocates at its own position (inputs were allocated up front). */
int64_t sb_ovl_mem_alloc(const struct sb_graph_view *g, const struct sb_ovl_mem *m,
                         uint32_t v)
{
    if (m->root[v] != v || g->kind[v] == SB_KIND_INPUT)
        return 0;
    return (int64_t)g->out_bytes[v];
}

void sb_ovl_mem_schedule(struct sb_ovl_mem *m, const struct sb_graph_view *g,
                         uint32_t v)
{
    m->cur_bytes += sb_ovl_mem_alloc(g, m, v);
    if (m->cur_bytes > m->peak_bytes)
        m->peak_bytes = m->cur_bytes;
    uint32_t k = sb_ovl_mem_uses(m, g, v);
    for (uint32_t i = 0; i < k; i++) {
        uint32_t r = m->uses[i];
        if (--m->uses_left[r] == 0 && !m->pinned[r])
            m->cur_bytes -= (int64_t)g->out_bytes[r];
    }
}

/* ---- a binary min-heap of (a, b, id) keys; id is the original index -------- */

struct ovl_key {
    uint32_t a; /* domination index, or 0/1 on the off-path heap */
    int32_t b;  /* local priority: -1 leads to a collective, 1 an exposed wait */
    uint32_t id;
};

struct ovl_heap {
    struct ovl_key *k;
    uint32_t n, cap;
};

static int ovl_key_lt(struct ovl_key x, struct ovl_key y)
{
    if (x.a != y.a)
        return x.a < y.a;
    if (x.b != y.b)
        return x.b < y.b;
    return x.id < y.id;
}

static int ovl_heap_push(struct ovl_heap *h, struct ovl_key key)
{
    if (h->n == h->cap) {
        uint32_t cap = h->cap ? 2 * h->cap : 64;
        struct ovl_key *k = realloc(h->k, (size_t)cap * sizeof *k);
        if (!k)
            return -1;
        h->k = k;
        h->cap = cap;
    }
    uint32_t i = h->n++;
    while (i > 0 && ovl_key_lt(key, h->k[(i - 1) / 2])) {
        h->k[i] = h->k[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h->k[i] = key;
    return 0;
}

static struct ovl_key ovl_heap_pop(struct ovl_heap *h)
{
    struct ovl_key top = h->k[0], last = h->k[--h->n];
    uint32_t i = 0;
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= h->n)
            break;
        if (c + 1 < h->n && ovl_key_lt(h->k[c + 1], h->k[c]))
            c++;
        if (!ovl_key_lt(h->k[c], last))
            break;
        h->k[i] = h->k[c];
        i = c;
    }
    if (h->n)
        h->k[i] = last;
    return top;
}

/* ---- graph facts every policy here needs --------------------------------- */

/* Whether an op name is one torch.utils.flop_counter registers a formula for
 * (mm, addmm, bmm, baddbmm, _scaled_mm, _grouped_mm, the convolutions, the
 * attention kernels), spelled as our importers and generators spell them. */
static int ovl_flop_op(const char *op)
{
    static const char *const exact[] = {
        "mm", "addmm", "bmm", "baddbmm", "matmul", "_scaled_mm", "scaled_mm",
        "_grouped_mm", "grouped_mm", "dot", "convolution", "_convolution",
        "cudnn_convolution", "convolution_backward", "conv2d", "conv1d", "conv3d",
    };
    for (size_t i = 0; i < sizeof exact / sizeof exact[0]; i++)
        if (strcmp(op, exact[i]) == 0)
            return 1;
    return strstr(op, "attention") != NULL || strstr(op, "attn") != NULL;
}

/* is_compute[v]: v is a "compute node" in Inductor's sense (see the top of the
 * file).  With SB_OVL_COMPUTE_FLOPS and no op of the graph in the registry (a
 * graph without op names, or with names of its own), the graph says nothing
 * about flops and every compute node counts. */
void sb_ovl_compute_nodes(const struct sb_graph_view *g, int rule,
                          uint8_t *is_compute)
{
    uint32_t n_flop = 0;
    for (uint32_t v = 0; v < g->n_nodes; v++) {
        is_compute[v] = g->kind[v] == SB_KIND_COMPUTE &&
                        (rule == SB_OVL_COMPUTE_ALL || ovl_flop_op(g->op_names[g->op[v]]));
        n_flop += is_compute[v];
    }
    if (n_flop == 0)
        for (uint32_t v = 0; v < g->n_nodes; v++)
            is_compute[v] = g->kind[v] == SB_KIND_COMPUTE;
}

/* dom[v]: index (in file order) of the first compute node v feeds, itself for a
 * compute node, SB_OVL_OFF when it feeds none: Inductor's
 * _calculate_domination_index over compute nodes.  rs[v]: v is or feeds a
 * reduce_scatter start, the same pass over reduce_scatter nodes.  Returns the
 * number of compute nodes. */
uint32_t sb_ovl_domination(const struct sb_graph_view *g,
                           const uint8_t *is_compute, uint32_t *dom, uint8_t *rs)
{
    uint32_t n_compute = 0;
    for (uint32_t v = 0; v < g->n_nodes; v++)
        dom[v] = is_compute[v] ? n_compute++ : SB_OVL_OFF;
    for (uint32_t v = g->n_nodes; v-- > 0;) {
        rs[v] = g->kind[v] == SB_KIND_START && g->coll[v] == SB_COLL_REDUCE_SCATTER;
        for (uint32_t e = g->succ_off[v]; e < g->succ_off[v + 1]; e++) {
            uint32_t u = g->succ[e];
            if (!is_compute[v] && dom[u] < dom[v])
                dom[v] = dom[u];
            rs[v] |= rs[u];
        }
    }
    return n_compute;
}

/* Memory a collective needs while in flight: its inputs plus its output,
 * halved for all_reduce, which works in place (Inductor's
 * estimate_fx_collective_memory_footprint). */
static uint64_t ovl_footprint(const struct sb_graph_view *g, const struct sb_ovl_mem *m,
                              uint32_t s)
{
    uint64_t b = g->out_bytes[s];
    for (uint32_t e = g->pred_off[s]; e < g->pred_off[s + 1]; e++)
        b += g->out_bytes[m->root[g->pred[e]]];
    return g->coll[s] == SB_COLL_ALL_REDUCE ? b / 2 : b;
}

/* ---- the overlap scheduler ----------------------------------------------- */

struct ovl_cand {
    uint64_t rank; /* priority << 32 | domination */
    double hide;   /* with hide_key: -min(budget of its group, exposed), else 0 */
    uint32_t id;
};

struct ovl {
    const struct sb_graph_view *g;
    const struct sb_ovl_params *P;
    uint32_t n, n_compute, cur_compute; /* cur_compute: compute nodes scheduled */
    uint32_t *dom, *pg, *indeg, *hider, *mark, *stack, *path;
    struct ovl_cand *cand;  /* [cand_cap] prefetch candidates, a stack of frames */
    uint32_t cand_cap, cand_top;
    uint8_t *rs, *sched, *is_compute;
    double *exposed;  /* [n] starts: collective time not hidden yet, us */
    uint64_t *size;   /* [n] starts: footprint, bytes */
    uint32_t n_pg;
    uint32_t *pg_size; /* [n_pg] group size of each process group */
    /* unscheduled collectives (starts) in file order, and those in flight in
     * issue order: doubly linked lists through next/prev arrays */
    uint32_t *un_next, *un_prev, un_head;
    uint32_t *fl_next, *fl_prev, fl_head, fl_tail;
    uint64_t fl_bytes;
    struct ovl_heap on, off, byidx;
    struct sb_ovl_mem mem;
    double *ref_bytes; /* [n_compute + 1] original memory up to each compute node */
    double limit_bytes;
    int64_t last_on;   /* largest index of an on-path node taken from the queues */
    uint32_t mark_gen;
    uint32_t *order, n_order;
    uint32_t n_fallback; /* nodes chosen by original order (memfallback) */
    int oom;             /* an allocation failed where no status could be returned */
    uint32_t twice;      /* a node the model tried to schedule twice, or SB_NONE */
};

static void ovl_free(struct ovl *S)
{
    free(S->dom); free(S->pg); free(S->indeg); free(S->hider); free(S->mark);
    free(S->stack); free(S->path); free(S->cand); free(S->rs); free(S->sched); free(S->is_compute);
    free(S->exposed); free(S->size); free(S->pg_size);
    free(S->un_next); free(S->un_prev); free(S->fl_next); free(S->fl_prev);
    free(S->on.k); free(S->off.k); free(S->byidx.k); free(S->ref_bytes);
    sb_ovl_mem_free(&S->mem);
}

static int ovl_is_off(const struct ovl *S, uint32_t v) { return S->dom[v] == SB_OVL_OFF; }

/* Inductor's in_overlappable_collective_unary_chain: v leads, through a chain
 * of single-use cheap ops, to a collective not yet started.  Inductor's cheap
 * ops are views and pointwise ops; here nop nodes and compute nodes that are
 * not compute nodes in its sense (casts, pointwise, and also reductions, which
 * the graph does not tell apart). */
static int ovl_unary_chain(const struct ovl *S, uint32_t v)
{
    const struct sb_graph_view *g = S->g;
    for (;;) {
        if (g->succ_off[v + 1] - g->succ_off[v] != 1)
            return 0;
        uint32_t u = g->succ[g->succ_off[v]];
        if (g->pred_off[u + 1] - g->pred_off[u] != 1)
            return 0;
        if (g->kind[u] == SB_KIND_START && !S->sched[u])
            return 1;
        if (g->kind[u] != SB_KIND_NOP && (g->kind[u] != SB_KIND_COMPUTE || S->is_compute[u]))
            return 0;
        v = u;
    }
}

/* _compute_on_path_score: (domination, local priority, original index); an
 * exposed wait is deferred (1), a node leading to a collective hurried (-1). */
static struct ovl_key ovl_on_score(const struct ovl *S, uint32_t v)
{
    struct ovl_key k = {S->dom[v], 0, v};
    if (S->g->kind[v] == SB_KIND_DONE)
        k.b = S->exposed[S->g->partner[v]] != 0;
    else if (ovl_unary_chain(S, v))
        k.b = -1;
    return k;
}

/* _compute_off_path_score: nodes feeding a reduce_scatter first, then file order. */
static struct ovl_key ovl_off_score(const struct ovl *S, uint32_t v)
{
    struct ovl_key k = {S->rs[v] ? 0u : 1u, 0, v};
    return k;
}

static int ovl_ready(struct ovl *S, uint32_t v)
{
    if (S->P->fallback != SB_OVL_FALLBACK_NONE) {
        struct ovl_key k = {0, 0, v};
        if (ovl_heap_push(&S->byidx, k))
            return -1;
    }
    /* Before pytorch/pytorch#169838 and #169840 ("Separate queue for off-path
     * scheduling") every node shared one queue scored by domination, where an
     * off-path node's index is the largest: it drifted to the end (the memory
     * regression investigation ran that revision). */
    if (ovl_is_off(S, v) && !S->P->single_queue)
        return ovl_heap_push(&S->off, ovl_off_score(S, v));
    return ovl_heap_push(&S->on, ovl_on_score(S, v));
}

/* _schedule: append v, track memory, release its consumers. */
static int ovl_schedule(struct ovl *S, uint32_t v)
{
    const struct sb_graph_view *g = S->g;
    if (S->sched[v]) { /* a bug in this model, not bad input: stop before overrunning */
        S->twice = v;
        return -1;
    }
    S->sched[v] = 1;
    S->order[S->n_order++] = v;
    sb_ovl_mem_schedule(&S->mem, g, v);
    for (uint32_t e = g->succ_off[v]; e < g->succ_off[v + 1]; e++)
        if (--S->indeg[g->succ[e]] == 0 && ovl_ready(S, g->succ[e]))
            return -1;
    return 0;
}

/* A start's exposed time fell to zero: with fresh scores its ready wait is
 * queued again at its new, earlier priority (the stale entry is skipped once
 * the wait is scheduled).  Inductor keeps the stale score. */
static int ovl_hidden(struct ovl *S, uint32_t s)
{
    uint32_t d = S->g->partner[s];
    if (!S->P->fresh_scores || S->sched[d] || S->indeg[d] || ovl_is_off(S, d))
        return 0;
    return ovl_heap_push(&S->on, ovl_on_score(S, d));
}

static int ovl_hide(struct ovl *S, uint32_t s, double *budget, uint32_t by)
{
    double amount = S->exposed[s] < *budget ? S->exposed[s] : *budget;
    S->exposed[s] -= amount;
    *budget -= amount;
    S->hider[s] = by;
    return S->exposed[s] == 0 ? ovl_hidden(S, s) : 0;
}

/* Overlap time left per process group, us: one array per overlap node, as
 * Inductor's remaining_time_per_pg is local to each call (a wait forced while
 * another node's budget is being spent has its own). */
#define OVL_PG_LOCAL 8

static double *ovl_budget_new(const struct ovl *S, double *local)
{
    return S->n_pg <= OVL_PG_LOCAL ? local : malloc(S->n_pg * sizeof(double));
}

static void ovl_budget_free(double *budget, double *local)
{
    if (budget != local)
        free(budget);
}

/* _reduce_exposed_time_of_in_flight_collectives: each process group but
 * `exclude` gets the whole budget; in-flight collectives, oldest first, use it. */
static int ovl_hide_in_flight(struct ovl *S, uint32_t by, double avail,
                              uint32_t exclude, double *budget)
{
    for (uint32_t p = 0; p < S->n_pg; p++)
        budget[p] = p == exclude ? 0 : avail;
    for (uint32_t s = S->fl_head; s != SB_NONE; s = S->fl_next[s]) {
        uint32_t p = S->pg[s];
        if (S->exposed[s] == 0 || p == exclude || budget[p] <= 0)
            continue;
        if (ovl_hide(S, s, &budget[p], by))
            return -1;
    }
    return 0;
}

void sb_ovl_list_unlink(uint32_t *next, uint32_t *prev, uint32_t *head,
                        uint32_t *tail, uint32_t v)
{
    if (prev[v] != SB_NONE)
        next[prev[v]] = next[v];
    else
        *head = next[v];
    if (next[v] != SB_NONE)
        prev[next[v]] = prev[v];
    else if (tail)
        *tail = prev[v];
}

/* _handle_collective_start */
static int ovl_start(struct ovl *S, uint32_t s)
{
    sb_ovl_list_unlink(S->un_next, S->un_prev, &S->un_head, NULL, s);
    S->fl_prev[s] = S->fl_tail;
    S->fl_next[s] = SB_NONE;
    if (S->fl_tail != SB_NONE)
        S->fl_next[S->fl_tail] = s;
    else
        S->fl_head = s;
    S->fl_tail = s;
    S->fl_bytes += S->size[s];
    return ovl_schedule(S, s);
}

static int ovl_prefetch(struct ovl *S, uint32_t by, uint32_t exclude,
                        double *budget);

/* One wait: if still exposed, its waiting time hides collectives of other
 * process groups (Inductor's _handle_wait), then it leaves the in-flight set. */
static int ovl_wait_one(struct ovl *S, uint32_t s)
{
    uint32_t d = S->g->partner[s];
    if (S->exposed[s] > 0) {
        double local[OVL_PG_LOCAL], *budget = ovl_budget_new(S, local);
        int rc = !budget || ovl_hide_in_flight(S, d, S->exposed[s], S->pg[s], budget) ||
                 (S->P->prefetch && ovl_prefetch(S, d, S->pg[s], budget));
        ovl_budget_free(budget, local);
        if (rc)
            return -1;
        if (S->sched[d]) /* a nested wait forced this one already */
            return 0;
    }
    sb_ovl_list_unlink(S->fl_next, S->fl_prev, &S->fl_head, &S->fl_tail, s);
    S->fl_bytes -= S->size[s];
    return ovl_schedule(S, d);
}

/* First collective issued before s on s's process group whose wait can be
 * scheduled now, or SB_NONE. */
static uint32_t ovl_earlier_same_group(const struct ovl *S, uint32_t s)
{
    for (uint32_t c = S->fl_head; c != s && c != SB_NONE; c = S->fl_next[c])
        if (S->pg[c] == S->pg[s] && S->indeg[S->g->partner[c]] == 0)
            return c;
    return SB_NONE;
}

/* _handle_wait: waiting on a collective also waits on every collective issued
 * before it on the same process group (NCCL runs them in order).  The list is
 * scanned again after each wait because a wait may start or force others.
 * Deviation: a done with inputs besides its start is forced only once those are
 * scheduled; Inductor's waits have no other inputs. */
static int ovl_wait(struct ovl *S, uint32_t d)
{
    uint32_t s = S->g->partner[d], c;
    while (!S->sched[d] && (c = ovl_earlier_same_group(S, s)) != SB_NONE)
        if (ovl_wait_one(S, c))
            return -1;
    return S->sched[d] ? 0 : ovl_wait_one(S, s);
}

/* Oldest in-flight collective whose wait can be scheduled now, or SB_NONE. */
static uint32_t ovl_oldest_ready(const struct ovl *S)
{
    for (uint32_t s = S->fl_head; s != SB_NONE; s = S->fl_next[s])
        if (S->indeg[S->g->partner[s]] == 0)
            return s;
    return SB_NONE;
}

/* Inductor's _wait_is_hidden: fully hidden, and not by the node now overlapping. */
static int ovl_wait_hidden(const struct ovl *S, uint32_t s, uint32_t by)
{
    return S->exposed[s] == 0 && S->hider[s] != by;
}

/* Unscheduled ancestors of collective c into S->path, in file order; -1 when
 * the path is refused.  Inductor's _find_schedulable_path refuses a path
 * through compute, through a collective not started, or through a wait that is
 * not already hidden by another node; its dependency-conflict test (`by` is an
 * ancestor of c) is the same walk, since `by` is compute or an exposed wait.
 * The walk stops at the first refusal, so it stays local. */
static int64_t ovl_find_path(struct ovl *S, uint32_t c, uint32_t by)
{
    const struct sb_graph_view *g = S->g;
    uint32_t n_stack = 0, n_path = 0, gen = ++S->mark_gen;
    S->stack[n_stack++] = c;
    S->mark[c] = gen;
    while (n_stack) {
        uint32_t v = S->stack[--n_stack];
        for (uint32_t e = g->pred_off[v]; e < g->pred_off[v + 1]; e++) {
            uint32_t u = g->pred[e];
            if (S->sched[u] || S->mark[u] == gen)
                continue;
            S->mark[u] = gen;
            uint8_t k = g->kind[u];
            if (u == by || S->is_compute[u] || k == SB_KIND_START)
                return -1;
            if (k == SB_KIND_DONE && !ovl_wait_hidden(S, g->partner[u], by))
                return -1;
            S->path[n_path++] = u;
            S->stack[n_stack++] = u;
        }
    }
    /* insertion sort into file order: paths are a handful of nodes */
    for (uint32_t i = 1; i < n_path; i++) {
        uint32_t x = S->path[i], j = i;
        for (; j > 0 && S->path[j - 1] > x; j--)
            S->path[j] = S->path[j - 1];
        S->path[j] = x;
    }
    return n_path;
}

/* Candidate order of _schedule_collectives_for_overlap: feeds the next compute
 * node (0), off the compute path but feeding a reduce_scatter (1), other
 * on-path (2), the rest (3); then domination, then (with hide_key, as
 * @0196bc40 sorts) the most of it the group's budget can hide, then file
 * order. */
static uint64_t ovl_cand_rank(const struct ovl *S, uint32_t c)
{
    uint64_t pri;
    if (S->dom[c] == S->cur_compute + 1)
        pri = 0;
    else if (ovl_is_off(S, c))
        pri = S->rs[c] ? 1 : 3;
    else
        pri = 2;
    return pri << 32 | S->dom[c];
}

static int ovl_cmp_cand(const void *a, const void *b)
{
    const struct ovl_cand *x = a, *y = b;
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    if (x->hide != y->hide)
        return x->hide < y->hide ? -1 : 1;
    return (x->id > y->id) - (x->id < y->id);
}

/* The collectives among the next max_coll_distance unscheduled ones that may be
 * started now, in candidate order, appended to S->cand from `base`; returns how
 * many.  (Nested calls, from a forced wait, append after the caller's.) */
static int64_t ovl_candidates(struct ovl *S, uint32_t base, uint32_t exclude,
                              const double *budget)
{
    uint32_t n_cand = 0, i = 0;
    for (uint32_t c = S->un_head; c != SB_NONE; c = S->un_next[c], i++) {
        if (i > S->P->max_coll_distance)
            break;
        if (S->pg[c] == exclude)
            continue;
        if (!ovl_is_off(S, c) && S->dom[c] - S->cur_compute > S->P->max_compute_pre_fetch)
            continue;
        if (base + n_cand == S->cand_cap) {
            uint32_t cap = S->cand_cap ? 2 * S->cand_cap : 256;
            struct ovl_cand *p = realloc(S->cand, (size_t)cap * sizeof *p);
            if (!p)
                return -1;
            S->cand = p;
            S->cand_cap = cap;
        }
        S->cand[base + n_cand].rank = ovl_cand_rank(S, c);
        S->cand[base + n_cand].id = c;
        double b = budget[S->pg[c]], x = S->exposed[c];
        S->cand[base + n_cand].hide = S->P->hide_key ? -(b < x ? b : x) : 0;
        n_cand++;
    }
    if (n_cand > 1)
        qsort(S->cand + base, n_cand, sizeof *S->cand, ovl_cmp_cand);
    return n_cand;
}

/* Starts candidate c at overlap node `by` if it can be: refuse a blocked path,
 * free in-flight room by forcing hidden waits, then schedule the path and the
 * start.  Returns 1 when started, 0 when not, -1 on allocation failure.
 * Deviation: Inductor forces the hidden waits before it finds out the path is
 * blocked; we refuse first (forcing a hidden wait changes no exposure). */
static int ovl_try_start(struct ovl *S, uint32_t c, uint32_t by)
{
    const struct sb_graph_view *g = S->g;
    if (ovl_find_path(S, c, by) < 0)
        return 0;
    while (S->fl_head != SB_NONE &&
           S->P->max_in_flight_bytes - (double)S->fl_bytes < (double)S->size[c] &&
           ovl_wait_hidden(S, S->fl_head, by) && S->indeg[g->partner[S->fl_head]] == 0)
        if (ovl_wait(S, g->partner[S->fl_head]))
            return -1;
    if (S->P->max_in_flight_bytes - (double)S->fl_bytes < (double)S->size[c])
        return 0;
    int64_t n_path = ovl_find_path(S, c, by); /* forced waits may have shortened it */
    if (n_path < 0)
        return 0;
    for (int64_t i = 0; i < n_path; i++) {
        uint32_t u = S->path[i];
        if (S->sched[u]) /* forced by an earlier wait of the path */
            continue;
        if (g->kind[u] == SB_KIND_DONE ? ovl_wait(S, u) : ovl_schedule(S, u))
            return -1;
    }
    return ovl_start(S, c) ? -1 : 1;
}

/* The memory fallback: is the current memory over the reference at this point? */
static int ovl_over_limit(const struct ovl *S)
{
    double ref;
    switch (S->P->fallback) {
    case SB_OVL_FALLBACK_PROFILE:
        ref = S->ref_bytes[S->cur_compute] + S->P->headroom_bytes;
        break;
    case SB_OVL_FALLBACK_PEAK:
        ref = S->limit_bytes;
        break;
    default:
        return 0;
    }
    return (double)S->mem.cur_bytes > ref;
}

/* _schedule_collectives_for_overlap: spend the per-group budgets left on
 * collectives not started yet. */
static int ovl_prefetch(struct ovl *S, uint32_t by, uint32_t exclude,
                        double *budget)
{
    /* memfallback: while over the limit every node comes in original order, so
     * no collective is started ahead of it either */
    if (ovl_over_limit(S))
        return 0;
    double left = 0;
    for (uint32_t p = 0; p < S->n_pg; p++)
        left += budget[p] > 0 ? budget[p] : 0;
    if (left <= 0)
        return 0;
    uint32_t base = S->cand_top;
    int64_t n_cand = ovl_candidates(S, base, exclude, budget);
    if (n_cand < 0)
        return -1;
    S->cand_top = base + (uint32_t)n_cand;
    int rc = 0;
    for (uint32_t i = 0; i < n_cand && rc == 0; i++) {
        uint32_t c = S->cand[base + i].id, p = S->pg[c];
        if (S->sched[c] || budget[p] <= 0)
            continue;
        int started = ovl_try_start(S, c, by);
        if (started < 0 || (started && ovl_hide(S, c, &budget[p], by)))
            rc = -1;
        double sum = 0;
        for (uint32_t q = 0; q < S->n_pg; q++)
            sum += budget[q];
        if (sum == 0)
            break;
    }
    S->cand_top = base;
    return rc;
}

/* _handle_compute_or_other: the time of any node that takes time (Inductor
 * benchmarks compute nodes and estimates the others as memory bound) hides
 * in-flight collectives first, then newly started ones; only compute nodes in
 * Inductor's sense advance the compute index. */
static int ovl_compute(struct ovl *S, uint32_t v)
{
    const struct sb_graph_view *g = S->g;
    if (g->kind[v] == SB_KIND_COMPUTE) {
        double local[OVL_PG_LOCAL], *budget = ovl_budget_new(S, local);
        int rc = !budget ||
                 ovl_hide_in_flight(S, v, g->dur_us[v] * S->P->overlap_mult, SB_NONE,
                                    budget) ||
                                    (S->P->prefetch && ovl_prefetch(S, v, SB_NONE, budget));
        ovl_budget_free(budget, local);
        if (rc)
            return -1;
    }
    if (ovl_schedule(S, v))
        return -1;
    if (S->is_compute[v])
        S->cur_compute++;
    return 0;
}

/* Pops the next node, SB_NONE when the popped entry is to be skipped.
 * Inductor's _get_next_node: an off-path node goes first when nothing is on
 * path, when it is an already hidden wait, or when it feeds a reduce_scatter
 * and the on-path nodes have passed its original position; otherwise the best
 * on-path node. */
static uint32_t ovl_next(struct ovl *S)
{
    const struct sb_graph_view *g = S->g;
    if (S->P->fallback != SB_OVL_FALLBACK_NONE && ovl_over_limit(S)) {
        while (S->byidx.n) {
            uint32_t v = ovl_heap_pop(&S->byidx).id;
            if (!S->sched[v]) {
                S->n_fallback++;
                return v;
            }
        }
    }
    if (S->off.n) {
        uint32_t v = S->off.k[0].id;
        int take;
        if (!S->on.n || S->sched[v])
            take = 1;
        else if (g->kind[v] == SB_KIND_DONE)
            take = S->exposed[g->partner[v]] == 0;
        else if (S->rs[v])
            take = (int64_t)v <= S->last_on;
        else
            take = 0;
        if (take) {
            ovl_heap_pop(&S->off);
            return v;
        }
    }
    struct ovl_key k = ovl_heap_pop(&S->on);
    if (S->P->fresh_scores && !S->sched[k.id]) {
        struct ovl_key now = ovl_on_score(S, k.id);
        if (now.b != k.b) { /* stale: queue again at its present priority */
            S->oom |= ovl_heap_push(&S->on, now) != 0;
            return SB_NONE;
        }
    }
    return k.id;
}

static int ovl_dispatch(struct ovl *S, uint32_t v)
{
    switch ((enum sb_kind)S->g->kind[v]) {
    case SB_KIND_START:
        return ovl_start(S, v);
    case SB_KIND_DONE:
        return ovl_wait(S, v);
    case SB_KIND_INPUT:
        return ovl_schedule(S, v);
    default:
        return ovl_compute(S, v);
    }
}

/* The original order's memory between consecutive compute nodes: ref[k] is the
 * most memory live from compute node k-1 through compute node k, ref[n_compute]
 * after the last one (Inductor's original_mem_before_compute_index). */
static int ovl_reference(struct ovl *S)
{
    const struct sb_graph_view *g = S->g;
    uint32_t n = S->n, peak_pos, k = 0;
    uint32_t *identity = malloc((size_t)n * sizeof *identity + 1);
    uint64_t *mem = malloc((size_t)n * sizeof *mem + 1);
    S->ref_bytes = calloc((size_t)S->n_compute + 1, sizeof *S->ref_bytes);
    if (!identity || !mem || !S->ref_bytes) {
        free(identity);
        free(mem);
        return -1;
    }
    for (uint32_t i = 0; i < n; i++)
        identity[i] = i;
    uint64_t peak = g->host->mem_profile(g, identity, n, mem, &peak_pos);
    double window = 0;
    for (uint32_t i = 0; i < n; i++) {
        if ((double)mem[i] > window)
            window = (double)mem[i];
        if (S->is_compute[i]) {
            S->ref_bytes[k++] = window;
            window = (double)mem[i];
        }
    }
    S->ref_bytes[k] = window;
    double extra = S->P->peak_ratio * (double)peak;
    S->limit_bytes = (double)peak + (extra > S->P->headroom_bytes ? extra : S->P->headroom_bytes);
    free(identity);
    free(mem);
    return 0;
}

static int ovl_alloc(struct ovl *S)
{
    uint32_t n = S->n;
    size_t z = (size_t)n + 1;
    S->dom = malloc(z * sizeof *S->dom);
    S->pg = calloc(z, sizeof *S->pg);
    S->indeg = malloc(z * sizeof *S->indeg);
    S->hider = malloc(z * sizeof *S->hider);
    S->mark = calloc(z, sizeof *S->mark);
    S->stack = malloc(z * sizeof *S->stack);
    S->path = malloc(z * sizeof *S->path);
    S->rs = malloc(z);
    S->sched = calloc(z, 1);
    S->is_compute = malloc(z);
    S->exposed = calloc(z, sizeof *S->exposed);
    S->size = calloc(z, sizeof *S->size);
    S->pg_size = malloc(z * sizeof *S->pg_size);
    S->un_next = malloc(z * sizeof *S->un_next);
    S->un_prev = malloc(z * sizeof *S->un_prev);
    S->fl_next = malloc(z * sizeof *S->fl_next);
    S->fl_prev = malloc(z * sizeof *S->fl_prev);
    if (!S->dom || !S->pg || !S->indeg || !S->hider || !S->mark || !S->stack ||
        !S->path || !S->rs || !S->sched || !S->is_compute || !S->exposed || !S->size ||
        !S->pg_size || !S->un_next || !S->un_prev || !S->fl_next ||
        !S->fl_prev)
        return -1;
    return sb_ovl_mem_init(&S->mem, S->g);
}

/* Collectives: footprint, time, process group, and the unscheduled list in
 * file order (Inductor's unscheduled_collectives). */
static void ovl_collectives(struct ovl *S)
{
    const struct sb_graph_view *g = S->g;
    uint32_t tail = SB_NONE;
    S->un_head = S->fl_head = S->fl_tail = SB_NONE;
    for (uint32_t v = 0; v < S->n; v++) {
        S->indeg[v] = g->pred_off[v + 1] - g->pred_off[v];
        S->hider[v] = SB_NONE;
        if (g->kind[v] != SB_KIND_START)
            continue;
        S->size[v] = ovl_footprint(g, &S->mem, v);
        S->exposed[v] = g->dur_us[v];
        uint32_t p = 0;
        while (p < S->n_pg && S->pg_size[p] != g->group_size[v])
            p++;
        if (p == S->n_pg)
            S->pg_size[S->n_pg++] = g->group_size[v];
        S->pg[v] = p;
        S->un_prev[v] = tail;
        S->un_next[v] = SB_NONE;
        if (tail != SB_NONE)
            S->un_next[tail] = v;
        else
            S->un_head = v;
        tail = v;
    }
    if (S->n_pg == 0)
        S->n_pg = 1; /* budgets exist even with no collective */
}

/* OverlapScheduler.run: the main loop.  Before each choice, a full in-flight
 * set forces the oldest wait (_should_force_wait_for_memory). */
static int ovl_loop(struct ovl *S)
{
    for (uint32_t v = 0; v < S->n; v++)
        if (S->indeg[v] == 0 && ovl_ready(S, v))
            return -1;
    while (S->on.n || S->off.n) {
        if (S->fl_head != SB_NONE && (double)S->fl_bytes >= S->P->max_in_flight_bytes) {
            uint32_t s = ovl_oldest_ready(S);
            if (s != SB_NONE) {
                if (ovl_wait(S, S->g->partner[s]))
                    return -1;
                continue;
            }
        }
        uint32_t v = ovl_next(S);
        if (S->oom)
            return -1;
        if (v == SB_NONE || S->sched[v])
            continue;
        if (ovl_dispatch(S, v))
            return -1;
        if (!ovl_is_off(S, v) && (int64_t)v > S->last_on)
            S->last_on = v;
    }
    return 0;
}

/* Runs the model on g; writes the order.  Returns 0, or -1 with a message. */
int sb_ovl_run(const struct sb_graph_view *g, const struct sb_ovl_params *P,
               struct sb_schedule *out, uint32_t *n_fallback)
{
    struct ovl S;
    int rc = -1;
    memset(&S, 0, sizeof S);
    S.g = g;
    S.P = P;
    S.n = g->n_nodes;
    S.order = out->order;
    S.last_on = -1;
    S.twice = SB_NONE;
    if (ovl_alloc(&S) == 0) {
        sb_ovl_compute_nodes(g, P->compute_rule, S.is_compute);
        S.n_compute = sb_ovl_domination(g, S.is_compute, S.dom, S.rs);
        ovl_collectives(&S);
        if (P->fallback == SB_OVL_FALLBACK_NONE || ovl_reference(&S) == 0)
            rc = ovl_loop(&S);
    }
    if (rc && S.twice != SB_NONE)
        sb_plugin_fail(out->err, out->n_err, "internal error: node %u scheduled twice",
                       S.twice);
    else if (rc)
        sb_plugin_fail(out->err, out->n_err, "out of memory");
    else if (S.n_order != S.n)
        rc = sb_plugin_fail(out->err, out->n_err,
                            "internal error: scheduled %u of %u nodes", S.n_order, S.n);
    if (n_fallback)
        *n_fallback = S.n_fallback;
    ovl_free(&S);
    return rc;
}

