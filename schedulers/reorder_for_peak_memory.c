/* reorder_for_peak_memory: PyTorch Inductor's peak-memory reordering
 * (torch/_inductor/memory.py, newest copy cyyever/pytorch@0011014f;
 * ../shared/research/inductor-memory.md §3-4): the lpmf, bfs and dfs
 * topological sorts (schedulers/lib/inductor_memory.c), and the order of
 * lowest peak among the original and each method's, the first minimum in
 * that order (Python's min: ties keep the original, then lpmf, bfs, dfs).
 * Peaks are the harness's memory model (the host's mem_profile), which
 * counts what memory.py's fixed estimate counts plus the inputs Inductor
 * leaves out, the same for every order.  docs/inductor.md. */
#include <stdlib.h>
#include <string.h>

#include "schedbench/policy.h"

static const struct sb_param params[] = {
    {"methods", SB_PARAM_ENUM, 0, 0, 0, "all|lpmf|bfs|dfs",
     "the methods argument: all = [lpmf, bfs, dfs] (Inductor's default), or one, which "
     "still competes with the original order"},
};

static int pm_init(const double *param, void **state, char *err, size_t n_err)
{
    int *m = malloc(sizeof *m);
    if (!m)
        return sb_plugin_fail(err, n_err, "out of memory");
    *m = (int)param[0];
    *state = m;
    return 0;
}

static int pm_run(void *state, const struct sb_graph_view *g, struct sb_schedule *out)
{
    int methods = *(const int *)state;
    uint32_t n = g->n_nodes;
    uint32_t *cand = malloc((size_t)n * sizeof *cand + 1), pos;
    uint64_t *mem = malloc((size_t)n * sizeof *mem + 1);
    if (!cand || !mem) {
        free(cand);
        free(mem);
        return sb_plugin_fail(out->err, out->n_err, "out of memory");
    }
    for (uint32_t v = 0; v < n; v++)
        out->order[v] = v;
    uint64_t best = g->host->mem_profile(g, out->order, n, mem, &pos);
    for (int m = SB_IND_LPMF; m <= SB_IND_DFS; m++) {
        if (methods && methods - 1 != m)
            continue;
        if (sb_ind_peak_memory_sort(g, m, cand)) {
            free(cand);
            free(mem);
            return sb_plugin_fail(out->err, out->n_err, "out of memory");
        }
        uint64_t peak = g->host->mem_profile(g, cand, n, mem, &pos);
        if (peak < best) {
            best = peak;
            memcpy(out->order, cand, (size_t)n * sizeof *cand);
        }
    }
    free(cand);
    free(mem);
    return 0;
}

static void pm_free(void *state) { free(state); }

static const struct sb_plugin plugin = {
    .abi = SB_PLUGIN_ABI,
    .size = sizeof(struct sb_plugin),
    .name = "reorder_for_peak_memory",
    .summary = "Inductor's peak-memory reordering (memory.py): best of the original "
               "order and the lpmf, bfs and dfs topological sorts",
    .params = params,
    .n_params = 1,
    .init = pm_init,
    .run = pm_run,
    .free = pm_free,
};

const struct sb_plugin *sb_plugin_reorder_for_peak_memory(void) { return &plugin; }

SB_PLUGIN_EXPORT(sb_plugin_reorder_for_peak_memory)
