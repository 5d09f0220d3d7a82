/* A plugin in two builds for the gate's example workflow (tests/gate_test.sh,
 * ci/examples/github-actions.yml): a CI maintainer's policy whose next build
 * moves one workload's peak.  GATETOY_ORDER picks the default order:
 *   0 (file)   the file's order (a topological order in every workload);
 *   1 (depth)  depth first: after a node, the consumers it made ready, most
 *              recent first (a stack), so that a buffer is read soon after it
 *              is made.
 * On tests/data/gate/two.csv the file order peaks at 1011 B and depth first
 * at 1001 B (worked out there): a build that switches order moves that peak
 * by 1%. */
#include <stdlib.h>

#include "schedbench/plugin.h"

#ifndef GATETOY_ORDER
#define GATETOY_ORDER 0
#endif

struct state {
    int depth_first;
};

static const struct sb_param params[] = {
    {"order", SB_PARAM_ENUM, GATETOY_ORDER, 0, 0, "file|depth", "file order or depth first"},
};

static int init(const double *param, void **state, char *err, size_t n_err)
{
    struct state *s = malloc(sizeof *s);
    if (!s)
        return sb_plugin_fail(err, n_err, "out of memory");
    s->depth_first = param[0] == 1;
    *state = s;
    return 0;
}

static int run(void *state, const struct sb_graph_view *g, struct sb_schedule *out)
{
    const struct state *s = state;
    uint32_t n = g->n_nodes;
    if (!s->depth_first) {
        for (uint32_t i = 0; i < n; i++)
            out->order[i] = i;
        return 0;
    }
    uint32_t *missing = malloc(((size_t)n + 1) * sizeof *missing); /* preds not yet run */
    uint32_t *stack = malloc(((size_t)n + 1) * sizeof *stack);
    if (!missing || !stack) {
        free(missing);
        free(stack);
        return sb_plugin_fail(out->err, out->n_err, "out of memory");
    }
    uint32_t top = 0, k = 0;
    for (uint32_t i = n; i-- > 0;) { /* sources, the lowest id on top */
        missing[i] = g->pred_off[i + 1] - g->pred_off[i];
        if (!missing[i])
            stack[top++] = i;
    }
    while (top) {
        uint32_t v = stack[--top];
        out->order[k++] = v;
        for (uint32_t e = g->succ_off[v + 1]; e-- > g->succ_off[v];)
            if (--missing[g->succ[e]] == 0)
                stack[top++] = g->succ[e];
    }
    free(missing);
    free(stack);
    return k == n ? 0 : sb_plugin_fail(out->err, out->n_err, "a cycle");
}

static void release(void *state) { free(state); }

static const struct sb_plugin p = {
    .abi = SB_PLUGIN_ABI,
    .size = sizeof p,
    .name = "gatetoy",
    .summary = "test policy in two builds: file order or depth first",
    .params = params,
    .n_params = sizeof params / sizeof params[0],
    .init = init,
    .run = run,
    .free = release,
};

__attribute__((visibility("default"))) const struct sb_plugin *sb_plugin_entry(void) { return &p; }
