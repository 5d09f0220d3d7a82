/* PyTorch Inductor's peak-memory reordering (torch/_inductor/memory.py,
 * reorder_for_peak_memory): its three topological sorts, lpmf, bfs and dfs,
 * on a schedbench graph; the policy schedulers/reorder_for_peak_memory.c
 * picks the best (docs/inductor.md).
 *
 * Inductor's memory planning info maps onto the graph as follows:
 *   - a scheduler node is a non-input node; graph inputs lead every order;
 *   - a node's buffer is its own output (size_alloc = size_free = out_bytes);
 *     an alias or a done owns none, as a mutation alias is (0, 0), and its
 *     readers keep the buffer it views alive (succ forwarded to the real one);
 *   - a buffer's successors are the nodes that use it under the harness's
 *     memory model (readers of it or of a view of it, and a done for its
 *     start's inputs), so the sorts see the lifetimes the harness measures;
 *   - a weight or output buffer counts one extra use (a graph output,
 *     never freed); an input that is not a weight is a freeable input;
 *   - predecessors of a node are all its edges (data or `after`, which is
 *     Inductor's ordering-only WeakDep). */
#include <stdlib.h>
#include <string.h>

#include "schedbench/policy.h"

struct pm {
    const struct sb_graph_view *g;
    uint32_t n;
    uint32_t *root;
    uint64_t *size;             /* [n] bytes a node allocates */
    uint32_t *use_off, *use;    /* CSR: distinct buffers a node uses (not its own) */
    uint32_t *succ_off, *succ;  /* CSR: distinct users of each buffer */
    uint32_t *npred_off, *npred; /* CSR: distinct predecessor nodes (non-input) */
    uint32_t *nsucc_off, *nsucc; /* CSR: distinct successor nodes */
    uint8_t *pinned;
};

static void pm_free(struct pm *p)
{
    free(p->root); free(p->size); free(p->use_off); free(p->use); free(p->succ_off);
    free(p->succ); free(p->npred_off); free(p->npred); free(p->nsucc_off); free(p->nsucc);
    free(p->pinned);
    memset(p, 0, sizeof *p);
}

static int pm_has(const uint32_t *a, uint32_t lo, uint32_t hi, uint32_t x)
{
    for (uint32_t i = lo; i < hi; i++)
        if (a[i] == x)
            return 1;
    return 0;
}

/* Buffers v uses besides its own output (distinct), appended at use[*k]. */
static void pm_uses(struct pm *p, uint32_t v, uint32_t *k)
{
    const struct sb_graph_view *g = p->g;
    uint32_t lo = *k, s = g->kind[v] == SB_KIND_DONE ? g->partner[v] : SB_NONE;
    if (p->root[v] != v) /* a view or a done keeps the buffer it views alive */
        p->use[(*k)++] = p->root[v];
    for (int pass = 0; pass < 2; pass++) {
        uint32_t x = pass ? s : v;
        if (x == SB_NONE)
            continue;
        for (uint32_t e = g->pred_off[x]; e < g->pred_off[x + 1]; e++) {
            if (g->pred_after && g->pred_after[e])
                continue;
            uint32_t b = p->root[g->pred[e]];
            if (b != v && !pm_has(p->use, lo, *k, b))
                p->use[(*k)++] = b;
        }
    }
}

static int pm_init(struct pm *p, const struct sb_graph_view *g)
{
    uint32_t n = g->n_nodes;
    size_t ne = (size_t)g->n_edges * 2 + n + 1; /* a node's own root, preds, its start's */
    memset(p, 0, sizeof *p);
    p->g = g;
    p->n = n;
    p->root = malloc((size_t)n * sizeof *p->root + 1);
    p->size = calloc((size_t)n + 1, sizeof *p->size);
    p->use_off = calloc((size_t)n + 1, sizeof *p->use_off);
    p->use = malloc(ne * sizeof *p->use);
    p->succ_off = calloc((size_t)n + 2, sizeof *p->succ_off);
    p->succ = malloc(ne * sizeof *p->succ);
    p->npred_off = calloc((size_t)n + 1, sizeof *p->npred_off);
    p->npred = malloc(ne * sizeof *p->npred);
    p->nsucc_off = calloc((size_t)n + 2, sizeof *p->nsucc_off);
    p->nsucc = malloc(ne * sizeof *p->nsucc);
    p->pinned = calloc((size_t)n + 1, 1);
    if (!p->root || !p->size || !p->use_off || !p->use || !p->succ_off || !p->succ ||
        !p->npred_off || !p->npred || !p->nsucc_off || !p->nsucc || !p->pinned) {
        pm_free(p);
        return -1;
    }
    sb_dp_view_roots(g, p->root);
    uint32_t k = 0, kp = 0;
    for (uint32_t v = 0; v < n; v++) {
        p->use_off[v] = k;
        pm_uses(p, v, &k);
        p->npred_off[v] = kp;
        for (uint32_t e = g->pred_off[v]; e < g->pred_off[v + 1]; e++) {
            uint32_t u = g->pred[e];
            if (g->kind[u] != SB_KIND_INPUT && !pm_has(p->npred, p->npred_off[v], kp, u))
                p->npred[kp++] = u;
        }
        if (p->root[v] == v && g->kind[v] != SB_KIND_INPUT)
            p->size[v] = g->out_bytes[v];
        if (g->flags[v] & (SB_FLAG_WEIGHT | SB_FLAG_OUTPUT))
            p->pinned[p->root[v]] = 1;
    }
    p->use_off[n] = k;
    p->npred_off[n] = kp;
    /* transpose: users of each buffer, successors of each node (v ascending) */
    for (uint32_t i = 0; i < k; i++)
        p->succ_off[p->use[i] + 2]++;
    for (uint32_t i = 0; i < kp; i++)
        p->nsucc_off[p->npred[i] + 2]++;
    for (uint32_t b = 0; b < n; b++) {
        p->succ_off[b + 2] += p->succ_off[b + 1];
        p->nsucc_off[b + 2] += p->nsucc_off[b + 1];
    }
    for (uint32_t v = 0; v < n; v++) {
        for (uint32_t i = p->use_off[v]; i < p->use_off[v + 1]; i++)
            p->succ[p->succ_off[p->use[i] + 1]++] = v;
        for (uint32_t i = p->npred_off[v]; i < p->npred_off[v + 1]; i++)
            p->nsucc[p->nsucc_off[p->npred[i] + 1]++] = v;
    }
    return 0;
}

/* ---- lpmf: least peak memory first ------------------------------------------ */

/* topological_sort_lpmf: among ready nodes, one that fits under the largest
 * memory seen so far (size <= memory_gap) and frees the most net of what it
 * allocates; when none fits, the smallest; ties by original index. */
static int pm_lpmf(const struct pm *p, uint32_t *out)
{
    const struct sb_graph_view *g = p->g;
    uint32_t n = p->n, k = 0, n_ready = 0;
    uint32_t *indeg = calloc((size_t)n + 1, sizeof *indeg), *ready = malloc((size_t)n * 4 + 4);
    uint32_t *outdeg = calloc((size_t)n + 1, sizeof *outdeg);
    int64_t *mtf = calloc((size_t)n + 1, sizeof *mtf);
    if (!indeg || !ready || !outdeg || !mtf) {
        free(indeg); free(ready); free(outdeg); free(mtf);
        return -1;
    }
    int64_t live = 0, out_mem = 0;
    for (uint32_t b = 0; b < n; b++) {
        outdeg[b] = p->succ_off[b + 1] - p->succ_off[b] + p->pinned[b];
        if (g->kind[b] == SB_KIND_INPUT && !(g->flags[b] & SB_FLAG_WEIGHT))
            live += (int64_t)g->out_bytes[b]; /* a freeable input */
        if (p->root[b] == b && (g->flags[b] & SB_FLAG_OUTPUT))
            out_mem += (int64_t)g->out_bytes[b];
    }
    for (uint32_t v = 0; v < n; v++) {
        if (g->kind[v] == SB_KIND_INPUT) {
            out[k++] = v;
            continue;
        }
        indeg[v] = p->npred_off[v + 1] - p->npred_off[v];
        for (uint32_t i = p->use_off[v]; i < p->use_off[v + 1]; i++)
            if (outdeg[p->use[i]] == 1)
                mtf[v] += (int64_t)g->out_bytes[p->use[i]];
        if (p->root[v] == v && outdeg[v] == 0)
            mtf[v] += (int64_t)p->size[v];
        if (!indeg[v])
            ready[n_ready++] = v;
    }
    int64_t max_mem = live > out_mem ? live : out_mem;
    while (n_ready) {
        int64_t gap = max_mem - live;
        uint32_t best = 0;
        for (uint32_t i = 1; i < n_ready; i++) {
            uint32_t a = ready[i], b = ready[best];
            int64_t ka = (int64_t)p->size[a] > gap ? (int64_t)p->size[a] : 0;
            int64_t kb = (int64_t)p->size[b] > gap ? (int64_t)p->size[b] : 0;
            int64_t na = (int64_t)p->size[a] - mtf[a], nb = (int64_t)p->size[b] - mtf[b];
            if (ka < kb || (ka == kb && (na < nb || (na == nb && a < b))))
                best = i;
        }
        uint32_t v = ready[best];
        ready[best] = ready[--n_ready];
        out[k++] = v;
        live += (int64_t)p->size[v];
        if (live > max_mem)
            max_mem = live;
        live -= mtf[v];
        for (uint32_t i = p->nsucc_off[v]; i < p->nsucc_off[v + 1]; i++)
            if (--indeg[p->nsucc[i]] == 0)
                ready[n_ready++] = p->nsucc[i];
        for (uint32_t i = p->use_off[v]; i < p->use_off[v + 1]; i++) {
            uint32_t b = p->use[i];
            if (--outdeg[b] == 1)
                for (uint32_t j = p->succ_off[b]; j < p->succ_off[b + 1]; j++)
                    mtf[p->succ[j]] += (int64_t)g->out_bytes[b];
        }
    }
    free(indeg); free(ready); free(outdeg); free(mtf);
    return k == n ? 0 : -1;
}

/* ---- bfs: the node whose producers ran earliest ----------------------------- */

struct bfs_item {
    uint32_t v, n_pri;
    uint32_t *pri; /* sorted positions of its predecessors in the order */
};

/* Python's list order, then the original index. */
static int bfs_lt(const struct bfs_item *x, const struct bfs_item *y)
{
    for (uint32_t i = 0; i < x->n_pri && i < y->n_pri; i++)
        if (x->pri[i] != y->pri[i])
            return x->pri[i] < y->pri[i];
    if (x->n_pri != y->n_pri)
        return x->n_pri < y->n_pri;
    return x->v < y->v;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* topological_sort_bfs; the ready set is scanned (it is a heap in Inductor,
 * with the same total order). */
static int pm_bfs(const struct pm *p, uint32_t *out)
{
    const struct sb_graph_view *g = p->g;
    uint32_t n = p->n, k = 0, n_ready = 0;
    uint32_t *indeg = calloc((size_t)n + 1, sizeof *indeg);
    uint32_t *at = calloc((size_t)n + 1, sizeof *at);
    uint32_t *pri = malloc(((size_t)p->npred_off[n] + 1) * sizeof *pri);
    struct bfs_item *ready = malloc(((size_t)n + 1) * sizeof *ready);
    if (!indeg || !at || !pri || !ready) {
        free(indeg); free(at); free(pri); free(ready);
        return -1;
    }
    for (uint32_t v = 0; v < n; v++) {
        if (g->kind[v] == SB_KIND_INPUT) {
            out[k++] = v;
            continue;
        }
        indeg[v] = p->npred_off[v + 1] - p->npred_off[v];
        if (!indeg[v])
            ready[n_ready++] = (struct bfs_item){v, 0, pri + p->npred_off[v]};
    }
    uint32_t base = k;
    while (n_ready) {
        uint32_t best = 0;
        for (uint32_t i = 1; i < n_ready; i++)
            if (bfs_lt(&ready[i], &ready[best]))
                best = i;
        uint32_t v = ready[best].v;
        ready[best] = ready[--n_ready];
        at[v] = k - base;
        out[k++] = v;
        for (uint32_t i = p->nsucc_off[v]; i < p->nsucc_off[v + 1]; i++) {
            uint32_t s = p->nsucc[i];
            if (--indeg[s])
                continue;
            uint32_t m = 0, *sp = pri + p->npred_off[s];
            for (uint32_t j = p->npred_off[s]; j < p->npred_off[s + 1]; j++)
                sp[m++] = at[p->npred[j]];
            qsort(sp, m, sizeof *sp, cmp_u32);
            ready[n_ready++] = (struct bfs_item){s, m, sp};
        }
    }
    free(indeg); free(at); free(pri); free(ready);
    return k == n ? 0 : -1;
}

/* ---- dfs: post-order, smallest size-with-reads first ---------------------- */

struct dfs_key {
    uint64_t swr;
    uint32_t v;
};

static int dfs_cmp(const void *a, const void *b)
{
    const struct dfs_key *x = a, *y = b;
    if (x->swr != y->swr)
        return x->swr < y->swr ? -1 : 1;
    return (x->v > y->v) - (x->v < y->v);
}

/* topological_sort_dfs: nodes by (size + bytes read from freeable buffers,
 * index); each visits its producers in that order, then comes itself.  An
 * explicit stack replaces Python's recursion. */
static int pm_dfs(const struct pm *p, uint32_t *out)
{
    const struct sb_graph_view *g = p->g;
    uint32_t n = p->n, k = 0;
    struct dfs_key *all = malloc(((size_t)n + 1) * sizeof *all);
    struct dfs_key *kids = malloc(((size_t)p->npred_off[n] + 1) * sizeof *kids);
    uint64_t *swr = malloc(((size_t)n + 1) * sizeof *swr);
    uint32_t *stack = malloc(((size_t)n + 1) * sizeof *stack);
    uint32_t *next = calloc((size_t)n + 1, sizeof *next);
    uint8_t *seen = calloc((size_t)n + 1, 1);
    if (!all || !kids || !swr || !stack || !next || !seen) {
        free(all); free(kids); free(swr); free(stack); free(next); free(seen);
        return -1;
    }
    for (uint32_t v = 0; v < n; v++) {
        swr[v] = p->size[v];
        for (uint32_t i = p->use_off[v]; i < p->use_off[v + 1]; i++) {
            uint32_t b = p->use[i];
            if (!(g->kind[b] == SB_KIND_INPUT && (g->flags[b] & SB_FLAG_WEIGHT)))
                swr[v] += g->out_bytes[b];
        }
        all[v] = (struct dfs_key){swr[v], v};
        if (g->kind[v] == SB_KIND_INPUT)
            out[k++] = v;
    }
    qsort(all, n, sizeof *all, dfs_cmp);
    for (uint32_t v = 0; v < n; v++) { /* each node's producers, sorted */
        uint32_t lo = p->npred_off[v], m = p->npred_off[v + 1] - lo;
        for (uint32_t j = 0; j < m; j++)
            kids[lo + j] = (struct dfs_key){swr[p->npred[lo + j]], p->npred[lo + j]};
        qsort(kids + lo, m, sizeof *kids, dfs_cmp);
    }
    for (uint32_t r = 0; r < n; r++) {
        uint32_t v0 = all[r].v;
        if (seen[v0] || g->kind[v0] == SB_KIND_INPUT)
            continue;
        uint32_t sp = 0;
        seen[v0] = 1;
        stack[sp++] = v0;
        while (sp) {
            uint32_t v = stack[sp - 1];
            uint32_t lo = p->npred_off[v], hi = p->npred_off[v + 1];
            while (lo + next[v] < hi && seen[kids[lo + next[v]].v])
                next[v]++;
            if (lo + next[v] < hi) {
                uint32_t u = kids[lo + next[v]++].v;
                seen[u] = 1;
                stack[sp++] = u;
            } else {
                out[k++] = v;
                sp--;
            }
        }
    }
    free(all); free(kids); free(swr); free(stack); free(next); free(seen);
    return k == n ? 0 : -1;
}

int sb_ind_peak_memory_sort(const struct sb_graph_view *g, int method, uint32_t *order)
{
    struct pm p;
    if (pm_init(&p, g))
        return -1;
    int rc = method == SB_IND_LPMF ? pm_lpmf(&p, order)
             : method == SB_IND_BFS ? pm_bfs(&p, order)
                                    : pm_dfs(&p, order);
    pm_free(&p);
    return rc;
}
