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
#include "schedbench/policy.h"

#include <stdlib.h>
#include <string.h>

static int minmem_run(void *state, const struct sb_graph_view *g, struct sb_schedule *out)
{
    (void)state;
    uint32_t n = g->n_nodes;
    uint32_t *cand = malloc(((size_t)n + 1) * sizeof *cand);
    uint64_t *mem = malloc(((size_t)n + 1) * sizeof *mem);
    int rc = -1;
    if (!cand || !mem)
        goto out;
    for (uint32_t v = 0; v < n; v++)
        out->order[v] = v; /* candidate 1: the file order */
    uint32_t pos;
    uint64_t best = g->host->mem_profile(g, out->order, n, mem, &pos);
    for (int c = 0; c < 2; c++) {
        if (sb_mem_greedy_order(g, c, cand)) /* the toolkit: forward, then reverse */
            goto out;
        uint64_t peak = g->host->mem_profile(g, cand, n, mem, &pos);
        if (peak < best) {
            best = peak;
            memcpy(out->order, cand, n * sizeof *cand);
        }
    }
    rc = 0;
out:
    free(cand), free(mem);
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
