/* minmem: a memory floor for every workload.  It ignores time and looks for
 * the order with the lowest peak memory, the way compilers' memory schedulers
 * do: XLA's ListMemoryScheduler (a forward greedy list by bytes freed minus
 * bytes allocated) and Inductor's reorder_for_peak_memory (several orders, the
 * lowest simulated peak wins).  Candidates:
 *
 *   1. the file order;
 *   2. forward greedy: among ready nodes, the one freeing the most bytes net
 *      of what it allocates (ties: file order);
 *   3. reverse greedy: the order built from the end, among nodes whose
 *      consumers are all placed the one whose placement leaves the least live
 *      at that point (ties: the later in file order goes later);
 *
 * each measured with the host's memory model (g->host->mem_profile), the
 * lowest peak kept (ties: the earlier candidate).  Inputs exist from the
 * start whatever their position, so they lead every order.  Devices stay as
 * pre-assigned: this is a single-device ordering policy. */
#include "minmem-impl.h"
#include "schedbench/plugin.h"

#include <stdlib.h>
#include <string.h>

/* Both greedy passes keep their candidates in a binary heap (as XLA's
 * ListMemoryScheduler keeps its ready list by priority) instead of rescanning
 * every ready node per step.  A candidate's score depends only on the use
 * counts of the buffers it reads, so it is recomputed, and pushed again with a
 * new version, exactly when one of those counts crosses a value that matters;
 * stale entries are dropped when they surface.  The picks are therefore the
 * ones a full rescan would make (the same score, the same tie-break), in
 * O((n + E) log n) for graphs whose nodes read each buffer a bounded number of
 * times. */

struct entry {
    double s;     /* score: larger first */
    uint32_t v;   /* node; ties by id (forward: smaller first, reverse: larger) */
    uint32_t ver; /* == ver[v] while current */
};

struct heap {
    struct entry *e;
    size_t n, cap;
    int later_first; /* ties: larger id first (the reverse pass) */
};

struct mm {
    const struct sb_graph_view *g;
    uint32_t n;
    uint32_t *root;   /* buffer a node's output lives in (views share their source's) */
    uint32_t *uses;   /* [n] forward: remaining uses of each buffer; reverse: placed uses */
    uint32_t *cnt;    /* [n] forward: unplaced preds; reverse: unplaced succs */
    uint32_t *mult;   /* [n] scratch, zero between calls: occurrences of a buffer */
    uint32_t *rd_off; /* [n + 1] CSR by buffer: the nodes whose uses include it */
    uint32_t *rd;     /* [n_uses] each reader once per buffer */
    uint32_t *maxmine; /* [n] most uses of the buffer any one reader holds */
    uint32_t *ver;    /* [n] version of a node's current heap entry */
    uint32_t *seen;   /* [n] == epoch: buffer already listed for this node */
    uint32_t epoch;
    uint32_t *fresh;  /* [max uses] buffers whose count changed */
    uint8_t *state;   /* [n] 0 waiting, 1 candidate, 2 placed */
    uint32_t *buf, cap; /* [cap] scratch: one node's uses (cap = the most any has) */
    struct heap h;
};

static int owns(const struct sb_graph_view *g, uint32_t v)
{
    return !(g->flags[v] & SB_FLAG_ALIAS) && g->kind[v] != SB_KIND_DONE;
}

static int never_freed(const struct sb_graph_view *g, uint32_t b)
{
    return (g->flags[b] & (SB_FLAG_WEIGHT | SB_FLAG_OUTPUT)) != 0;
}

/* The uses of buffers made by node c: each input's buffer, and for a done the
 * buffers its start reads (they stay live until the done, docs/cost-model.md). */
static uint32_t uses_of(const struct mm *M, uint32_t c, uint32_t *out, uint32_t cap)
{
    const struct sb_graph_view *g = M->g;
    uint32_t k = 0;
    for (uint32_t e = g->pred_off[c]; e < g->pred_off[c + 1] && k < cap; e++)
        out[k++] = M->root[g->pred[e]];
    if (g->kind[c] == SB_KIND_DONE && g->partner[c] != SB_NONE) {
        uint32_t s = g->partner[c];
        for (uint32_t e = g->pred_off[s]; e < g->pred_off[s + 1] && k < cap; e++)
            out[k++] = M->root[g->pred[e]];
    }
    return k;
}

static uint32_t max_uses(const struct sb_graph_view *g)
{
    uint32_t m = 1;
    for (uint32_t v = 0; v < g->n_nodes; v++) {
        uint32_t d = g->pred_off[v + 1] - g->pred_off[v];
        if (g->kind[v] == SB_KIND_DONE && g->partner[v] != SB_NONE)
            d += g->pred_off[g->partner[v] + 1] - g->pred_off[g->partner[v]];
        if (d > m)
            m = d;
    }
    return m;
}

/* Readers of each buffer (CSR) and, per buffer, the most uses one reader holds. */
static int build_readers(struct mm *M, uint32_t *buf, uint32_t cap)
{
    uint32_t n = M->n;
    memset(M->rd_off, 0, ((size_t)n + 1) * sizeof *M->rd_off);
    memset(M->maxmine, 0, (size_t)n * sizeof *M->maxmine);
    /* pass 1: count distinct (buffer, reader) pairs */
    for (int fill = 0; fill < 2; fill++) {
        for (uint32_t c = 0; c < n; c++) {
            uint32_t k = uses_of(M, c, buf, cap);
            for (uint32_t i = 0; i < k; i++)
                M->mult[buf[i]]++;
            for (uint32_t i = 0; i < k; i++) {
                uint32_t b = buf[i];
                if (!M->mult[b])
                    continue;
                if (fill)
                    M->rd[M->rd_off[b]++] = c;
                else
                    M->rd_off[b + 1]++;
                if (M->mult[b] > M->maxmine[b])
                    M->maxmine[b] = M->mult[b];
                M->mult[b] = 0;
            }
        }
        if (!fill) {
            /* pass 2: prefix sums, then fill (rd_off[b] runs as a cursor) */
            for (uint32_t b = 0; b < n; b++)
                M->rd_off[b + 1] += M->rd_off[b];
            M->rd = malloc(((size_t)M->rd_off[n] + 1) * sizeof *M->rd);
            if (!M->rd)
                return -1;
        }
    }
    /* the fill advanced each rd_off[b] to the start of b + 1's readers */
    for (uint32_t b = n; b > 0; b--)
        M->rd_off[b] = M->rd_off[b - 1];
    M->rd_off[0] = 0;
    return 0;
}

/* ---- the heap ------------------------------------------------------------- */

static int before(const struct heap *h, const struct entry *a, const struct entry *b)
{
    if (a->s != b->s)
        return a->s > b->s;
    return h->later_first ? a->v > b->v : a->v < b->v;
}

static int heap_push(struct heap *h, double s, uint32_t v, uint32_t ver)
{
    if (h->n == h->cap) {
        size_t cap = h->cap ? 2 * h->cap : 1024;
        struct entry *e = realloc(h->e, cap * sizeof *e);
        if (!e)
            return -1;
        h->e = e, h->cap = cap;
    }
    size_t i = h->n++;
    struct entry x = {s, v, ver};
    while (i > 0 && before(h, &x, &h->e[(i - 1) / 2])) {
        h->e[i] = h->e[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h->e[i] = x;
    return 0;
}

static struct entry heap_pop(struct heap *h)
{
    struct entry top = h->e[0], x = h->e[--h->n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= h->n)
            break;
        if (c + 1 < h->n && before(h, &h->e[c + 1], &h->e[c]))
            c++;
        if (!before(h, &h->e[c], &x))
            break;
        h->e[i] = h->e[c];
        i = c;
    }
    if (h->n)
        h->e[i] = x;
    return top;
}

/* The candidate with the best current score, or SB_NONE when none is left. */
static uint32_t take_best(struct mm *M)
{
    while (M->h.n) {
        struct entry t = heap_pop(&M->h);
        if (M->state[t.v] == 1 && t.ver == M->ver[t.v])
            return t.v;
    }
    return SB_NONE;
}

/* ---- forward greedy -------------------------------------------------------- */

/* Bytes v frees (buffers it is the last use of) minus bytes it allocates.
 * Buffers are summed in the order of their first use in v's list. */
static double net_free(const struct mm *M, uint32_t v, uint32_t *buf, uint32_t cap)
{
    const struct sb_graph_view *g = M->g;
    uint32_t k = uses_of(M, v, buf, cap);
    double freed = 0;
    for (uint32_t i = 0; i < k; i++)
        M->mult[buf[i]]++;
    for (uint32_t i = 0; i < k; i++) {
        uint32_t b = buf[i], mine = M->mult[b];
        if (!mine) /* not the first occurrence */
            continue;
        M->mult[b] = 0;
        if (mine == M->uses[b] && !never_freed(g, b))
            freed += (double)g->out_bytes[b];
    }
    return freed - (owns(g, v) ? (double)g->out_bytes[v] : 0);
}

typedef double (*score_fn)(const struct mm *, uint32_t, uint32_t *, uint32_t);

static int push(struct mm *M, score_fn f, uint32_t v, uint32_t *buf, uint32_t cap)
{
    M->state[v] = 1;
    return heap_push(&M->h, f(M, v, buf, cap), v, ++M->ver[v]);
}

/* Rescore the candidates reading buffer b. */
static int rescore_readers(struct mm *M, score_fn f, uint32_t b, uint32_t *buf, uint32_t cap)
{
    for (uint32_t i = M->rd_off[b]; i < M->rd_off[b + 1]; i++)
        if (M->state[M->rd[i]] == 1 && push(M, f, M->rd[i], buf, cap))
            return -1;
    return 0;
}

static int forward(struct mm *M, uint32_t *order, uint32_t *buf, uint32_t cap)
{
    const struct sb_graph_view *g = M->g;
    uint32_t pos = 0;
    memset(M->uses, 0, M->n * sizeof *M->uses);
    memset(M->state, 0, M->n);
    M->h.n = 0, M->h.later_first = 0;
    for (uint32_t v = 0; v < M->n; v++) {
        uint32_t k = uses_of(M, v, buf, cap);
        for (uint32_t i = 0; i < k; i++)
            M->uses[buf[i]]++;
        M->cnt[v] = g->pred_off[v + 1] - g->pred_off[v];
        if (g->kind[v] == SB_KIND_INPUT) {
            order[pos++] = v;
            M->state[v] = 2;
        }
    }
    for (uint32_t v = 0; v < M->n; v++)
        if (g->kind[v] == SB_KIND_INPUT)
            for (uint32_t e = g->succ_off[v]; e < g->succ_off[v + 1]; e++)
                M->cnt[g->succ[e]]--;
    for (uint32_t v = 0; v < M->n; v++)
        if (g->kind[v] != SB_KIND_INPUT && M->cnt[v] == 0 && push(M, net_free, v, buf, cap))
            return -1;
    for (uint32_t v; (v = take_best(M)) != SB_NONE;) {
        M->state[v] = 2;
        order[pos++] = v;
        uint32_t k = uses_of(M, v, buf, cap), n_fresh = 0;
        M->epoch++;
        for (uint32_t i = 0; i < k; i++) {
            M->uses[buf[i]]--;
            if (M->seen[buf[i]] != M->epoch) {
                M->seen[buf[i]] = M->epoch;
                M->fresh[n_fresh++] = buf[i];
            }
        }
        /* A reader's score counts buffer b's bytes when it holds all of b's
         * remaining uses; it holds at most maxmine[b] of them, so only a count
         * that has come down to maxmine[b] or below can change a score. */
        for (uint32_t i = 0; i < n_fresh; i++) {
            uint32_t b = M->fresh[i];
            if (!never_freed(g, b) && M->uses[b] <= M->maxmine[b] &&
                rescore_readers(M, net_free, b, buf, cap))
                return -1;
        }
        for (uint32_t e = g->succ_off[v]; e < g->succ_off[v + 1]; e++)
            if (--M->cnt[g->succ[e]] == 0 && push(M, net_free, g->succ[e], buf, cap))
                return -1;
    }
    return 0;
}

/* ---- reverse greedy -------------------------------------------------------- */

/* Placing v (going backwards) ends its own buffer's life there and starts the
 * lives of the buffers it reads that nothing placed later reads.  Returns
 * bytes that stop being live minus bytes that start. */
static double reverse_gain(const struct mm *M, uint32_t v, uint32_t *buf, uint32_t cap)
{
    const struct sb_graph_view *g = M->g;
    double gain = owns(g, v) && M->uses[v] > 0 ? (double)g->out_bytes[v] : 0;
    if (owns(g, v) && (g->flags[v] & SB_FLAG_OUTPUT))
        gain = (double)g->out_bytes[v]; /* live to the end until its producer */
    uint32_t k = uses_of(M, v, buf, cap);
    for (uint32_t i = 0; i < k; i++) {
        uint32_t b = buf[i];
        if (M->mult[b]) /* seen */
            continue;
        M->mult[b] = 1;
        /* uses[] counts placed uses here: a buffer with none is not live yet */
        if (M->uses[b] == 0 && b != v && !(g->flags[b] & SB_FLAG_WEIGHT))
            gain -= (double)g->out_bytes[b];
    }
    for (uint32_t i = 0; i < k; i++)
        M->mult[buf[i]] = 0;
    return gain;
}

static int reverse(struct mm *M, uint32_t *order, uint32_t *buf, uint32_t cap)
{
    const struct sb_graph_view *g = M->g;
    uint32_t n_in = 0, pos = M->n;
    memset(M->uses, 0, M->n * sizeof *M->uses);
    memset(M->state, 0, M->n);
    M->h.n = 0, M->h.later_first = 1;
    for (uint32_t v = 0; v < M->n; v++) {
        M->cnt[v] = g->succ_off[v + 1] - g->succ_off[v];
        if (g->kind[v] == SB_KIND_INPUT)
            order[n_in++] = v;
    }
    for (uint32_t v = 0; v < M->n; v++)
        if (g->kind[v] != SB_KIND_INPUT && M->cnt[v] == 0 &&
            push(M, reverse_gain, v, buf, cap))
            return -1;
    for (uint32_t v; (v = take_best(M)) != SB_NONE;) {
        M->state[v] = 2;
        order[--pos] = v;
        uint32_t k = uses_of(M, v, buf, cap), n_fresh = 0;
        for (uint32_t i = 0; i < k; i++)
            if (M->uses[buf[i]]++ == 0)
                M->fresh[n_fresh++] = buf[i];
        /* Scores read only whether a buffer has a placed use (its readers'
         * and its producer's): rescore when a count leaves 0. */
        for (uint32_t i = 0; i < n_fresh; i++) {
            uint32_t b = M->fresh[i];
            if (M->state[b] == 1 && push(M, reverse_gain, b, buf, cap))
                return -1;
            if (rescore_readers(M, reverse_gain, b, buf, cap))
                return -1;
        }
        for (uint32_t e = g->pred_off[v]; e < g->pred_off[v + 1]; e++) {
            uint32_t p = g->pred[e];
            if (--M->cnt[p] == 0 && g->kind[p] != SB_KIND_INPUT &&
                push(M, reverse_gain, p, buf, cap))
                return -1;
        }
    }
    return 0;
}

/* ---- the policy ------------------------------------------------------------ */

static void mm_free(struct mm *M)
{
    free(M->root), free(M->uses), free(M->cnt), free(M->mult), free(M->rd_off);
    free(M->rd), free(M->maxmine), free(M->ver), free(M->seen), free(M->fresh);
    free(M->state), free(M->h.e), free(M->buf);
}

static int mm_init(struct mm *M, const struct sb_graph_view *g)
{
    uint32_t n = g->n_nodes;
    size_t n1 = (size_t)n + 1;
    memset(M, 0, sizeof *M);
    M->g = g, M->n = n, M->cap = max_uses(g);
    M->root = malloc(n1 * sizeof *M->root);
    M->uses = malloc(n1 * sizeof *M->uses);
    M->cnt = malloc(n1 * sizeof *M->cnt);
    M->mult = calloc(n1, sizeof *M->mult);
    M->rd_off = malloc((n1 + 1) * sizeof *M->rd_off);
    M->maxmine = malloc(n1 * sizeof *M->maxmine);
    M->ver = calloc(n1, sizeof *M->ver);
    M->seen = calloc(n1, sizeof *M->seen);
    M->fresh = malloc(((size_t)M->cap + 1) * sizeof *M->fresh);
    M->state = malloc(n1);
    M->buf = malloc(((size_t)M->cap + 1) * sizeof *M->buf);
    if (!M->root || !M->uses || !M->cnt || !M->mult || !M->rd_off || !M->maxmine ||
        !M->ver || !M->seen || !M->fresh || !M->state || !M->buf)
        return -1;
    for (uint32_t v = 0; v < n; v++)
        M->root[v] = owns(g, v) || g->pred_off[v] == g->pred_off[v + 1]
                         ? v : M->root[g->pred[g->pred_off[v]]];
    return build_readers(M, M->buf, M->cap);
}

static int sb_minmem_pass(struct mm *M, int reverse_pass, uint32_t *order)
{
    return reverse_pass ? reverse(M, order, M->buf, M->cap) : forward(M, order, M->buf, M->cap);
}

int sb_minmem_candidate(const struct sb_graph_view *g, int reverse_pass, uint32_t *order)
{
    struct mm M;
    int rc = mm_init(&M, g);
    if (!rc)
        rc = sb_minmem_pass(&M, reverse_pass, order);
    mm_free(&M);
    return rc;
}

static int minmem_run(void *state, const struct sb_graph_view *g, struct sb_schedule *out)
{
    (void)state;
    uint32_t n = g->n_nodes;
    struct mm M;
    uint32_t *cand = malloc(((size_t)n + 1) * sizeof *cand);
    uint64_t *mem = malloc(((size_t)n + 1) * sizeof *mem);
    int rc = -1;
    if (mm_init(&M, g) || !cand || !mem)
        goto out;
    for (uint32_t v = 0; v < n; v++)
        out->order[v] = v; /* candidate 1: the file order */
    uint32_t pos;
    uint64_t best = g->host->mem_profile(g, out->order, n, mem, &pos);
    for (int c = 0; c < 2; c++) {
        if (sb_minmem_pass(&M, c, cand))
            goto out;
        uint64_t peak = g->host->mem_profile(g, cand, n, mem, &pos);
        if (peak < best) {
            best = peak;
            memcpy(out->order, cand, n * sizeof *cand);
        }
    }
    rc = 0;
out:
    mm_free(&M), free(cand), free(mem);
    return rc ? sb_plugin_fail(out->err, out->n_err, "minmem: out of memory") : 0;
}

static const struct sb_plugin minmem = {
    .abi = SB_PLUGIN_ABI,
    .size = sizeof(struct sb_plugin),
    .name = "minmem",
    .summary = "memory floor: the lowest-peak of the file order, a forward and a reverse "
               "greedy memory list schedule (XLA/Inductor memory schedulers); ignores time",
    .run = minmem_run,
};

const struct sb_plugin *sb_plugin_minmem(void) { return &minmem; }

SB_PLUGIN_EXPORT(sb_plugin_minmem)
