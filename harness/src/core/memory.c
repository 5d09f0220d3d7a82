/* The memory model of one device (docs/cost-model.md, "Memory model"): what
 * the simulator charges, and what the host lends plugins through the view so
 * that policies measure memory exactly as the harness will. */
#define _POSIX_C_SOURCE 200809L
#include "core.h"

/* Buffer that node v's output lives in: alias nodes and dones own none. */
void sb_mem_buffer_roots(const struct sb_graph_view *g, uint32_t *root)
{
    for (uint32_t v = 0; v < g->n_nodes; v++) {
        int views = (g->flags[v] & SB_FLAG_ALIAS) || g->kind[v] == SB_KIND_DONE;
        root[v] = views ? root[g->pred[g->pred_off[v]]] : v;
    }
}

static inline void extend(uint32_t *last, uint32_t r, uint32_t p)
{
    if (last[r] < p)
        last[r] = p;
}

uint64_t sb_mem_profile(const struct sb_graph_view *g, const uint32_t *order,
                        uint32_t n, uint64_t *mem, uint32_t *peak_pos)
{
    uint32_t N = g->n_nodes;
    uint32_t *pos = sb_xmalloc((size_t)N * sizeof *pos);
    uint32_t *root = sb_xmalloc((size_t)N * sizeof *root);
    uint32_t *last = sb_xmalloc((size_t)N * sizeof *last);
    uint8_t *pinned = sb_xcalloc(N, 1);
    int64_t *delta = sb_xcalloc((size_t)n + 1, sizeof *delta);
    SB_ASSERT(n == N); /* one device: every node has a position */

    for (uint32_t i = 0; i < n; i++)
        pos[order[i]] = i;
    sb_mem_buffer_roots(g, root);
    /* pass 1: each buffer lives through its last reader, and through the
     * position of every node that views it */
    for (uint32_t v = 0; v < N; v++)
        last[v] = pos[v];
    for (uint32_t v = 0; v < N; v++) {
        extend(last, root[v], pos[v]);
        for (uint32_t e = g->pred_off[v]; e < g->pred_off[v + 1]; e++)
            if (!sb_edge_after(g, e)) /* an after edge reads nothing */
                extend(last, root[g->pred[e]], pos[v]);
        if (g->flags[v] & (SB_FLAG_WEIGHT | SB_FLAG_OUTPUT))
            pinned[root[v]] = 1;
    }
    /* pass 2: a collective reads its inputs until its done */
    for (uint32_t s = 0; s < N; s++) {
        if (g->kind[s] != SB_KIND_START)
            continue;
        uint32_t pd = pos[g->partner[s]];
        for (uint32_t e = g->pred_off[s]; e < g->pred_off[s + 1]; e++)
            if (!sb_edge_after(g, e))
                extend(last, root[g->pred[e]], pd);
    }
    /* pass 3: allocate at the producer (inputs before the program starts), free
     * after the last use, and sum the deltas in position order */
    for (uint32_t v = 0; v < N; v++) {
        if (root[v] != v || !g->out_bytes[v])
            continue;
        uint32_t a = g->kind[v] == SB_KIND_INPUT ? 0 : pos[v];
        delta[a] += (int64_t)g->out_bytes[v];
        if (!pinned[v])
            delta[last[v] + 1] -= (int64_t)g->out_bytes[v];
    }
    int64_t cur = 0;
    uint64_t peak = 0;
    *peak_pos = 0;
    for (uint32_t i = 0; i < n; i++) {
        cur += delta[i];
        SB_ASSERT(cur >= 0);
        mem[i] = (uint64_t)cur;
        if ((uint64_t)cur > peak) {
            peak = (uint64_t)cur;
            *peak_pos = i;
        }
    }
    free(pos);
    free(root);
    free(last);
    free(pinned);
    free(delta);
    return peak;
}

const struct sb_host sb_host_services = {
    .size = sizeof(struct sb_host),
    .mem_profile = sb_mem_profile,
};

