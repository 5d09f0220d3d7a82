/* PyTorch Inductor's scheduler-IR communication passes (torch/_inductor/
 * comms.py), on a schedbench graph: the scored list scheduler behind
 * sink_waits, raise_comms and reorder_compute_for_overlap, and the two
 * memory-bounded iterative passes, reorder_communication_preserving_peak_memory
 * and sink_waits_iterative.  Which version each follows is in
 * docs/inductor.md; the policies that configure them are
 * schedulers/reorder_compute_and_comm_for_overlap.c,
 * schedulers/reorder_communication_preserving_peak_memory.c and
 * schedulers/sink_waits_iterative.c.
 *
 * Inductor's scheduler nodes map onto the graph as the overlap toolkit maps
 * FX nodes: a collective is a start, its wait the done, every edge (data or
 * `after`) a dependency, and "gemm-like" (an extern kernel) is a compute node
 * of the flop registry (sb_ovl_compute_nodes).  Graph inputs are not
 * scheduler nodes: they lead every order, in id order. */
#include <stdlib.h>
#include <string.h>

#include "schedbench/policy.h"

/* ---- a min-heap of (a, b, c) keys, id = the node -------------------------- */

struct ind_key {
    uint64_t a, b, c;
    uint32_t id;
};

struct ind_heap {
    struct ind_key *k;
    uint32_t n;
};

static int ind_lt(const struct ind_key *x, const struct ind_key *y)
{
    if (x->a != y->a)
        return x->a < y->a;
    if (x->b != y->b)
        return x->b < y->b;
    return x->c < y->c;
}

/* The heap holds at most n_nodes keys: its array is allocated once. */
static void ind_push(struct ind_heap *h, struct ind_key key)
{
    uint32_t i = h->n++;
    while (i > 0 && ind_lt(&key, &h->k[(i - 1) / 2])) {
        h->k[i] = h->k[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h->k[i] = key;
}

static struct ind_key ind_pop(struct ind_heap *h)
{
    struct ind_key top = h->k[0], last = h->k[--h->n];
    uint32_t i = 0;
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= h->n)
            break;
        if (c + 1 < h->n && ind_lt(&h->k[c + 1], &h->k[c]))
            c++;
        if (!ind_lt(&h->k[c], &last))
            break;
        h->k[i] = h->k[c];
        i = c;
    }
    if (h->n)
        h->k[i] = last;
    return top;
}

/* Graph inputs first, in id order; returns how many. */
uint32_t sb_ind_inputs_first(const struct sb_graph_view *g, const uint32_t *in, uint32_t *out)
{
    uint32_t k = 0;
    for (uint32_t v = 0; v < g->n_nodes; v++)
        if (g->kind[v] == SB_KIND_INPUT)
            out[k++] = v;
    uint32_t n_in = k;
    for (uint32_t i = 0; i < g->n_nodes; i++)
        if (g->kind[in[i]] != SB_KIND_INPUT)
            out[k++] = in[i];
    return n_in;
}

/* ---- _schedule_for_comm ---------------------------------------------------- */

/* score_0 of every node: the lowest index (in `in` order) of a collective the
 * node is or precedes, UINT64_MAX for none (snode.ancestors, comms.py). */
static int comm_index(const struct sb_graph_view *g, const uint32_t *in, uint64_t *s0)
{
    uint32_t n = g->n_nodes;
    uint64_t k = 0;
    uint64_t *own = malloc((size_t)n * sizeof *own + 1);
    if (!own)
        return -1;
    for (uint32_t v = 0; v < n; v++)
        own[v] = UINT64_MAX;
    for (uint32_t i = 0; i < n; i++)
        if (g->kind[in[i]] == SB_KIND_START)
            own[in[i]] = k++;
    /* ids are topological: a reverse walk sees consumers first */
    for (uint32_t v = n; v-- > 0;) {
        uint64_t m = own[v];
        for (uint32_t e = g->succ_off[v]; e < g->succ_off[v + 1]; e++)
            if (s0[g->succ[e]] < m)
                m = s0[g->succ[e]];
        s0[v] = m;
    }
    free(own);
    return 0;
}

static int is_comm(const struct sb_graph_view *g, uint32_t v)
{
    return g->kind[v] == SB_KIND_START || g->kind[v] == SB_KIND_DONE;
}

int sb_ind_schedule_for_comm(const struct sb_graph_view *g, const uint32_t *in, uint32_t *out,
                             int raise_comms, int sink_waits, int reorder_for_overlap)
{
    uint32_t n = g->n_nodes;
    uint64_t *s0 = malloc((size_t)n * sizeof *s0 + 1), *idx = malloc((size_t)n * sizeof *idx + 1);
    uint32_t *indeg = calloc((size_t)n + 1, sizeof *indeg);
    struct ind_heap h = {malloc((size_t)n * sizeof *h.k + 1), 0};
    struct ind_key *side = malloc((size_t)n * sizeof *side + 1); /* skipped comms */
    if (!s0 || !idx || !indeg || !h.k || !side) {
        free(s0); free(idx); free(indeg); free(h.k); free(side);
        return -1;
    }
    if (comm_index(g, in, s0)) {
        free(s0); free(idx); free(indeg); free(h.k); free(side);
        return -1;
    }
    for (uint32_t i = 0; i < n; i++)
        idx[in[i]] = i;
    uint32_t k = sb_ind_inputs_first(g, in, out);
    for (uint32_t v = 0; v < n; v++)
        for (uint32_t e = g->pred_off[v]; e < g->pred_off[v + 1]; e++)
            indeg[v] += g->kind[g->pred[e]] != SB_KIND_INPUT;
#define IND_KEY(v)                                                                          \
    ((struct ind_key){raise_comms ? s0[v] : 0, sink_waits && g->kind[v] == SB_KIND_DONE,     \
                      idx[v], v})
    for (uint32_t i = 0; i < n; i++)
        if (g->kind[in[i]] != SB_KIND_INPUT && indeg[in[i]] == 0)
            ind_push(&h, IND_KEY(in[i]));
    while (h.n) {
        uint32_t v = ind_pop(&h).id;
        double left = g->dur_us[v];
        int overlap = reorder_for_overlap && g->kind[v] == SB_KIND_START;
        for (;;) {
            out[k++] = v;
            for (uint32_t e = g->succ_off[v]; e < g->succ_off[v + 1]; e++)
                if (--indeg[g->succ[e]] == 0)
                    ind_push(&h, IND_KEY(g->succ[e]));
            if (!overlap || left <= 0)
                break;
            /* the best ready node that is neither a collective nor a wait
             * runs under the collective and spends its time */
            uint32_t n_side = 0;
            v = SB_NONE;
            while (h.n) {
                struct ind_key top = ind_pop(&h);
                if (!is_comm(g, top.id)) {
                    v = top.id;
                    break;
                }
                side[n_side++] = top;
            }
            for (uint32_t i = 0; i < n_side; i++)
                ind_push(&h, side[i]);
            if (v == SB_NONE)
                break;
            left -= g->dur_us[v];
        }
    }
#undef IND_KEY
    free(s0); free(idx); free(indeg); free(h.k); free(side);
    return k == n ? 0 : -1;
}

/* ---- memory of a window of an order (the iterative passes) --------------- */

/* Per-buffer and per-position bookkeeping of an order under the harness's
 * memory model (docs/cost-model.md): a buffer is allocated at its owner's
 * position (inputs before the start), freed after its last use unless a
 * weight or output; a node uses its own buffer, its inputs' and, for a done,
 * its start's inputs' (what sb_mem_profile counts; `after` edges use
 * nothing).  A swap inside a window [p, q] changes neither the level before
 * p nor after q, so a move is priced on the window alone. */
struct ind_mem {
    uint32_t n;
    uint32_t *root, *pos, *last, *stamp, *nl;
    uint32_t epoch;
    uint8_t *pinned;
    int64_t *lvl;  /* [n] live bytes after position i's frees */
    uint32_t *use_off, *use; /* CSR: the buffers (roots) each node uses, distinct */
};

static void ind_mem_free(struct ind_mem *m)
{
    free(m->root); free(m->pos); free(m->last); free(m->stamp); free(m->nl);
    free(m->pinned); free(m->lvl); free(m->use_off); free(m->use);
    memset(m, 0, sizeof *m);
}

static int64_t ind_alloc(const struct sb_graph_view *g, const struct ind_mem *m, uint32_t v)
{
    return m->root[v] == v && g->kind[v] != SB_KIND_INPUT ? (int64_t)g->out_bytes[v] : 0;
}

static void ind_add_use(struct ind_mem *m, uint32_t v, uint32_t pe, uint32_t *k)
{
    uint32_t r = m->root[pe];
    for (uint32_t i = m->use_off[v]; i < *k; i++)
        if (m->use[i] == r)
            return;
    m->use[(*k)++] = r;
}

static int ind_mem_init(struct ind_mem *m, const struct sb_graph_view *g)
{
    uint32_t n = g->n_nodes;
    memset(m, 0, sizeof *m);
    m->n = n;
    m->root = malloc((size_t)n * sizeof *m->root + 1);
    m->pos = malloc((size_t)n * sizeof *m->pos + 1);
    m->last = malloc((size_t)n * sizeof *m->last + 1);
    m->stamp = calloc((size_t)n + 1, sizeof *m->stamp);
    m->nl = malloc((size_t)n * sizeof *m->nl + 1);
    m->pinned = calloc((size_t)n + 1, 1);
    m->lvl = malloc((size_t)n * sizeof *m->lvl + 1);
    m->use_off = malloc(((size_t)n + 1) * sizeof *m->use_off);
    m->use = malloc(((size_t)g->n_edges * 2 + n + 1) * sizeof *m->use);
    if (!m->root || !m->pos || !m->last || !m->stamp || !m->nl || !m->pinned || !m->lvl ||
        !m->use_off || !m->use) {
        ind_mem_free(m);
        return -1;
    }
    sb_dp_view_roots(g, m->root);
    uint32_t k = 0;
    for (uint32_t v = 0; v < n; v++) {
        m->use_off[v] = k;
        ind_add_use(m, v, v, &k);
        for (uint32_t e = g->pred_off[v]; e < g->pred_off[v + 1]; e++)
            if (!g->pred_after || !g->pred_after[e])
                ind_add_use(m, v, g->pred[e], &k);
        if (g->kind[v] == SB_KIND_DONE) {
            uint32_t s = g->partner[v];
            for (uint32_t e = g->pred_off[s]; e < g->pred_off[s + 1]; e++)
                if (!g->pred_after || !g->pred_after[e])
                    ind_add_use(m, v, g->pred[e], &k);
        }
        if (g->flags[v] & (SB_FLAG_WEIGHT | SB_FLAG_OUTPUT))
            m->pinned[m->root[v]] = 1;
    }
    m->use_off[n] = k;
    return 0;
}

/* Positions, last uses and levels of `order` from scratch. */
static void ind_mem_load(struct ind_mem *m, const struct sb_graph_view *g, const uint32_t *order)
{
    uint32_t n = m->n;
    int64_t cur = 0;
    for (uint32_t i = 0; i < n; i++) {
        m->pos[order[i]] = i;
        if (g->kind[order[i]] == SB_KIND_INPUT)
            cur += (int64_t)g->out_bytes[order[i]];
    }
    for (uint32_t i = 0; i < n; i++) {
        uint32_t v = order[i];
        for (uint32_t e = m->use_off[v]; e < m->use_off[v + 1]; e++)
            m->last[m->use[e]] = i; /* increasing i: the last write is the last use */
    }
    for (uint32_t i = 0; i < n; i++) {
        uint32_t v = order[i];
        cur += ind_alloc(g, m, v);
        for (uint32_t e = m->use_off[v]; e < m->use_off[v + 1]; e++) {
            uint32_t b = m->use[e];
            if (m->last[b] == i && !m->pinned[b])
                cur -= (int64_t)g->out_bytes[b];
        }
        m->lvl[i] = cur;
    }
}

/* The peak while the window [p, p + k) runs its nodes w[0..k) in that order
 * (a rearrangement of what is there).  With commit, the bookkeeping takes
 * the new arrangement (the caller writes it into the order). */
static int64_t ind_mem_window(struct ind_mem *m, const struct sb_graph_view *g, uint32_t p,
                              const uint32_t *w, uint32_t k, int commit)
{
    uint32_t q = p + k - 1;
    m->epoch++;
    for (uint32_t i = 0; i < k; i++)
        for (uint32_t e = m->use_off[w[i]]; e < m->use_off[w[i] + 1]; e++) {
            uint32_t b = m->use[e];
            if (m->last[b] >= p && m->last[b] <= q) {
                m->stamp[b] = m->epoch;
                m->nl[b] = p + i;
            }
        }
    int64_t cur = p ? m->lvl[p - 1] : 0, peak = INT64_MIN;
    if (!p)
        for (uint32_t v = 0; v < m->n; v++)
            if (g->kind[v] == SB_KIND_INPUT)
                cur += (int64_t)g->out_bytes[v];
    for (uint32_t i = 0; i < k; i++) {
        uint32_t v = w[i];
        cur += ind_alloc(g, m, v);
        if (cur > peak)
            peak = cur;
        for (uint32_t e = m->use_off[v]; e < m->use_off[v + 1]; e++) {
            uint32_t b = m->use[e];
            if (m->stamp[b] == m->epoch && m->nl[b] == p + i && !m->pinned[b])
                cur -= (int64_t)g->out_bytes[b];
        }
        if (commit) {
            m->lvl[p + i] = cur;
            m->pos[v] = p + i;
        }
    }
    if (commit)
        for (uint32_t i = 0; i < k; i++)
            for (uint32_t e = m->use_off[w[i]]; e < m->use_off[w[i] + 1]; e++)
                if (m->stamp[m->use[e]] == m->epoch)
                    m->last[m->use[e]] = m->nl[m->use[e]];
    return peak;
}

/* The peak of the whole order as loaded. */
static int64_t ind_mem_peak(const struct ind_mem *m, const struct sb_graph_view *g,
                            const uint32_t *order)
{
    int64_t cur = 0, peak = 0;
    for (uint32_t v = 0; v < m->n; v++)
        if (g->kind[v] == SB_KIND_INPUT)
            cur += (int64_t)g->out_bytes[v];
    peak = cur;
    for (uint32_t i = 0; i < m->n; i++) {
        int64_t run = (i ? m->lvl[i - 1] : cur) + ind_alloc(g, m, order[i]);
        if (run > peak)
            peak = run;
    }
    return peak;
}

/* ---- the iterative passes ---------------------------------------------------- */

/* Whether some node of order[a..b] reads u (any edge). */
static int group_reads(const struct sb_graph_view *g, const uint32_t *order, uint32_t a,
                       uint32_t b, uint32_t u)
{
    for (uint32_t i = a; i <= b; i++) {
        uint32_t v = order[i];
        for (uint32_t e = g->pred_off[v]; e < g->pred_off[v + 1]; e++)
            if (g->pred[e] == u)
                return 1;
    }
    return 0;
}

/* Whether u reads some node of order[a..b]. */
static int reads_group(const struct sb_graph_view *g, uint32_t a, uint32_t b, uint32_t u,
                       const uint32_t *pos)
{
    for (uint32_t e = g->pred_off[u]; e < g->pred_off[u + 1]; e++) {
        uint32_t p = pos[g->pred[e]];
        if (p >= a && p <= b)
            return 1;
    }
    return 0;
}

static int group_has_start(const struct sb_graph_view *g, const uint32_t *order, uint32_t a,
                           uint32_t b)
{
    for (uint32_t i = a; i <= b; i++)
        if (g->kind[order[i]] == SB_KIND_START)
            return 1;
    return 0;
}

/* Moves order[c] (just before the group order[a..b], c = a - 1, or just
 * after it, c = b + 1) to the other side of the group, when the window's
 * peak stays within limit; returns 1 when moved. */
static int try_swap(struct ind_mem *m, const struct sb_graph_view *g, uint32_t *order,
                    uint32_t a, uint32_t b, int up, int64_t limit, uint32_t *w)
{
    uint32_t k = b - a + 2, p = up ? a - 1 : a;
    if (up) {
        memcpy(w, order + a, (b - a + 1) * sizeof *w);
        w[k - 1] = order[a - 1];
    } else {
        w[0] = order[b + 1];
        memcpy(w + 1, order + a, (b - a + 1) * sizeof *w);
    }
    if (ind_mem_window(m, g, p, w, k, 0) > limit)
        return 0;
    ind_mem_window(m, g, p, w, k, 1);
    memcpy(order + p, w, k * sizeof *w);
    return 1;
}

int sb_ind_reorder_iterative(const struct sb_graph_view *g, uint32_t *order,
                             const struct sb_ind_iter_params *P, uint32_t *n_moves)
{
    uint32_t n = g->n_nodes;
    struct ind_mem m;
    uint32_t *tmp = malloc((size_t)n * sizeof *tmp + 1), *w = malloc((size_t)n * sizeof *w + 1),
             *todo = malloc((size_t)n * sizeof *todo + 1);
    uint8_t *gemm = malloc((size_t)n + 1);
    if (!tmp || !w || !todo || !gemm || ind_mem_init(&m, g)) {
        free(tmp); free(w); free(todo); free(gemm);
        return -1;
    }
    sb_ovl_compute_nodes(g, SB_OVL_COMPUTE_FLOPS, gemm);
    if (P->no_gemm_stop)
        memset(gemm, 0, n);
    uint32_t n_in = sb_ind_inputs_first(g, order, tmp);
    memcpy(order, tmp, (size_t)n * sizeof *order);
    ind_mem_load(&m, g, order);
    int64_t peak0 = ind_mem_peak(&m, g, order);
    int64_t limit = peak0 + (int64_t)((double)peak0 * P->peak_memory_budget);
    uint32_t n_todo = 0, moves = 0;
    uint8_t want = P->sink ? SB_KIND_DONE : SB_KIND_START;
    /* each node once, in list order (head to tail, or tail to head) */
    for (uint32_t i = 0; i < n; i++) {
        uint32_t v = order[P->sink ? n - 1 - i : i];
        if (g->kind[v] == want)
            todo[n_todo++] = v;
    }
    for (uint32_t t = 0; t < n_todo && (!P->limit || t < P->limit); t++) {
        uint32_t a = m.pos[todo[t]], b = a;
        for (;;) {
            uint32_t c;
            if (P->sink ? b + 1 >= n : a <= n_in)
                break;
            c = P->sink ? b + 1 : a - 1;
            uint32_t u = order[c];
            int coll = g->kind[u] == SB_KIND_START;
            if (coll && !(P->sink ? P->swap_with_collectives : P->unsafe_collectives_reorder))
                break;
            int dep = P->sink ? reads_group(g, a, b, u, m.pos)
                              : group_reads(g, order, a, b, u);
            int both = P->sink && coll && group_has_start(g, order, a, b);
            if (dep || both) {
                int groupable = P->sink ? !coll && g->kind[u] != SB_KIND_DONE && !gemm[u]
                                        : !(coll && !P->group_with_collectives) && !gemm[u];
                if (groupable) {
                    if (P->sink)
                        b++;
                    else
                        a--;
                    continue;
                }
                if (dep || !P->unsafe_collectives_reorder)
                    break;
            }
            if (!try_swap(&m, g, order, a, b, !P->sink, limit, w))
                break;
            moves++;
            if (P->sink) {
                a++;
                b++;
            } else {
                a--;
                b--;
            }
        }
    }
    if (n_moves)
        *n_moves = moves;
    free(tmp); free(w); free(todo); free(gemm);
    ind_mem_free(&m);
    return 0;
}
