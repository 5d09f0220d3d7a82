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
#include "schedbench/plugin.h"

#include <stdlib.h>
#include <string.h>

struct mm {
    const struct sb_graph_view *g;
    uint32_t n;
    uint32_t *root;  /* buffer a node's output lives in (views share their source's) */
    uint32_t *uses;  /* [n] remaining uses of each buffer (forward) */
    uint8_t *done;   /* [n] placed */
    uint32_t *cnt;   /* [n] forward: unplaced preds; reverse: unplaced succs */
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

/* ---- forward greedy -------------------------------------------------------- */

/* Bytes v frees (buffers it is the last use of) minus bytes it allocates. */
static double net_free(const struct mm *M, uint32_t v, uint32_t *buf, uint32_t cap)
{
    const struct sb_graph_view *g = M->g;
    uint32_t k = uses_of(M, v, buf, cap);
    double freed = 0;
    for (uint32_t i = 0; i < k; i++) {
        uint32_t b = buf[i], mine = 0, seen = 0;
        for (uint32_t j = 0; j < k; j++)
            mine += buf[j] == b, seen |= j < i && buf[j] == b;
        if (!seen && mine == M->uses[b] && !never_freed(g, b))
            freed += (double)g->out_bytes[b];
    }
    return freed - (owns(g, v) ? (double)g->out_bytes[v] : 0);
}

static void forward(struct mm *M, uint32_t *order, uint32_t *buf, uint32_t cap)
{
    const struct sb_graph_view *g = M->g;
    uint32_t pos = 0, n_ready = 0;
    uint32_t *ready = malloc(((size_t)M->n + 1) * sizeof *ready);
    memset(M->uses, 0, M->n * sizeof *M->uses);
    for (uint32_t v = 0; v < M->n; v++) {
        uint32_t k = uses_of(M, v, buf, cap);
        for (uint32_t i = 0; i < k; i++)
            M->uses[buf[i]]++;
        M->cnt[v] = g->pred_off[v + 1] - g->pred_off[v];
        if (g->kind[v] == SB_KIND_INPUT)
            order[pos++] = v;
    }
    for (uint32_t v = 0; v < M->n; v++)
        if (g->kind[v] == SB_KIND_INPUT)
            for (uint32_t e = g->succ_off[v]; e < g->succ_off[v + 1]; e++)
                M->cnt[g->succ[e]]--;
    for (uint32_t v = 0; v < M->n; v++)
        if (g->kind[v] != SB_KIND_INPUT && M->cnt[v] == 0)
            ready[n_ready++] = v;
    while (n_ready) {
        uint32_t best = 0;
        double best_s = net_free(M, ready[0], buf, cap);
        for (uint32_t i = 1; i < n_ready; i++) {
            double s = net_free(M, ready[i], buf, cap);
            if (s > best_s || (s == best_s && ready[i] < ready[best]))
                best = i, best_s = s;
        }
        uint32_t v = ready[best];
        ready[best] = ready[--n_ready];
        order[pos++] = v;
        uint32_t k = uses_of(M, v, buf, cap);
        for (uint32_t i = 0; i < k; i++)
            M->uses[buf[i]]--;
        for (uint32_t e = g->succ_off[v]; e < g->succ_off[v + 1]; e++)
            if (--M->cnt[g->succ[e]] == 0)
                ready[n_ready++] = g->succ[e];
    }
    free(ready);
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
        uint32_t b = buf[i], seen = 0;
        for (uint32_t j = 0; j < i; j++)
            seen |= buf[j] == b;
        /* uses[] counts placed uses here: a buffer with none is not live yet */
        if (!seen && M->uses[b] == 0 && b != v && !(g->flags[b] & SB_FLAG_WEIGHT))
            gain -= (double)g->out_bytes[b];
    }
    return gain;
}

static void reverse(struct mm *M, uint32_t *order, uint32_t *buf, uint32_t cap)
{
    const struct sb_graph_view *g = M->g;
    uint32_t n_in = 0, n_ready = 0, pos = M->n;
    uint32_t *ready = malloc(((size_t)M->n + 1) * sizeof *ready);
    memset(M->uses, 0, M->n * sizeof *M->uses);
    for (uint32_t v = 0; v < M->n; v++) {
        M->cnt[v] = g->succ_off[v + 1] - g->succ_off[v];
        if (g->kind[v] == SB_KIND_INPUT)
            order[n_in++] = v;
    }
    for (uint32_t v = 0; v < M->n; v++)
        if (g->kind[v] != SB_KIND_INPUT && M->cnt[v] == 0)
            ready[n_ready++] = v;
    while (n_ready) {
        uint32_t best = 0;
        double best_s = reverse_gain(M, ready[0], buf, cap);
        for (uint32_t i = 1; i < n_ready; i++) {
            double s = reverse_gain(M, ready[i], buf, cap);
            if (s > best_s || (s == best_s && ready[i] > ready[best]))
                best = i, best_s = s;
        }
        uint32_t v = ready[best];
        ready[best] = ready[--n_ready];
        order[--pos] = v;
        uint32_t k = uses_of(M, v, buf, cap);
        for (uint32_t i = 0; i < k; i++)
            M->uses[buf[i]]++;
        for (uint32_t e = g->pred_off[v]; e < g->pred_off[v + 1]; e++) {
            uint32_t p = g->pred[e];
            if (--M->cnt[p] == 0 && g->kind[p] != SB_KIND_INPUT)
                ready[n_ready++] = p;
        }
    }
    free(ready);
}

/* ---- the policy ------------------------------------------------------------ */

static int minmem_run(void *state, const struct sb_graph_view *g, struct sb_schedule *out)
{
    (void)state;
    uint32_t n = g->n_nodes, cap = max_uses(g);
    struct mm M = {.g = g, .n = n};
    M.root = malloc(((size_t)n + 1) * sizeof *M.root);
    M.uses = malloc(((size_t)n + 1) * sizeof *M.uses);
    M.cnt = malloc(((size_t)n + 1) * sizeof *M.cnt);
    uint32_t *buf = malloc(((size_t)cap + 1) * sizeof *buf);
    uint32_t *cand = malloc(((size_t)n + 1) * sizeof *cand);
    uint64_t *mem = malloc(((size_t)n + 1) * sizeof *mem);
    if (!M.root || !M.uses || !M.cnt || !buf || !cand || !mem) {
        free(M.root), free(M.uses), free(M.cnt), free(buf), free(cand), free(mem);
        return sb_plugin_fail(out->err, out->n_err, "minmem: out of memory");
    }
    for (uint32_t v = 0; v < n; v++) {
        M.root[v] = owns(g, v) || g->pred_off[v] == g->pred_off[v + 1]
                        ? v : M.root[g->pred[g->pred_off[v]]];
        out->order[v] = v; /* candidate 1: the file order */
    }
    uint32_t pos;
    uint64_t best = g->host->mem_profile(g, out->order, n, mem, &pos);
    for (int c = 0; c < 2; c++) {
        if (c == 0)
            forward(&M, cand, buf, cap);
        else
            reverse(&M, cand, buf, cap);
        uint64_t peak = g->host->mem_profile(g, cand, n, mem, &pos);
        if (peak < best) {
            best = peak;
            memcpy(out->order, cand, n * sizeof *cand);
        }
    }
    free(M.root), free(M.uses), free(M.cnt), free(buf), free(cand), free(mem);
    return 0;
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
