/* reorder_communication_preserving_peak_memory: PyTorch Inductor's
 * memory-bounded collective raising (torch/_inductor/comms.py,
 * _reorder_communication_preserving_peak_memory_internal, copy id 71492789;
 * knobs of config_comms.py @282eca21; ../shared/research/inductor-passes.md
 * §1.3).  Each collective, head to tail, climbs one position at a time past
 * what it does not depend on; a producer it depends on joins its group
 * unless gemm-like or a collective; the climb stops at the list head, at such
 * a producer, or when the swap would lift the peak above the starting peak
 * times (1 + budget).  Runtime estimations are off, as by default.  The pass
 * is in the policy toolkit (schedulers/lib/inductor_comms.c);
 * docs/inductor.md. */
#include <stdlib.h>

#include "schedbench/policy.h"

static const struct sb_param params[] = {
    {"reorder_iterative_peak_memory_budget", SB_PARAM_DOUBLE, 0.2, 0, 1e9, NULL,
     "config_comms: the peak may grow to (1 + budget) x the peak before the pass (0.2)"},
    {"reorder_iterative_unsafe_collectives_reorder", SB_PARAM_BOOL, 1, 0, 1, NULL,
     "config_comms: a climbing collective may pass another collective (True)"},
    {"reorder_iterative_group_with_collectives", SB_PARAM_BOOL, 0, 0, 1, NULL,
     "config_comms: a collective the climbing one reads moves with it (False)"},
    {"reorder_iterative_debug_limit_to_reorder", SB_PARAM_INT, 0, 0, 4e9, NULL,
     "config_comms (env PYTORCH_REORDER_COLLECTIVES_LIMIT): collectives moved, 0 = all"},
    {"gemm_stop", SB_PARAM_BOOL, 1, 0, 1, NULL,
     "test-only: 0 lets a gemm-like producer join the group like any other node"},
};
#define N_PARAMS (sizeof params / sizeof params[0])

static int rp_init(const double *param, void **out, char *err, size_t n_err)
{
    struct sb_ind_iter_params *P = calloc(1, sizeof *P);
    if (!P)
        return sb_plugin_fail(err, n_err, "out of memory");
    P->sink = 0;
    P->peak_memory_budget = param[0];
    P->unsafe_collectives_reorder = param[1] != 0;
    P->group_with_collectives = param[2] != 0;
    P->limit = (uint32_t)param[3];
    P->no_gemm_stop = param[4] == 0;
    *out = P;
    return 0;
}

static int rp_run(void *state, const struct sb_graph_view *g, struct sb_schedule *out)
{
    for (uint32_t v = 0; v < g->n_nodes; v++)
        out->order[v] = v;
    if (sb_ind_reorder_iterative(g, out->order, state, NULL))
        return sb_plugin_fail(out->err, out->n_err, "out of memory");
    return 0;
}

static void rp_free(void *state) { free(state); }

static const struct sb_plugin plugin = {
    .abi = SB_PLUGIN_ABI,
    .size = sizeof(struct sb_plugin),
    .name = "reorder_communication_preserving_peak_memory",
    .summary = "Inductor's iterative collective raising within a peak-memory budget "
               "(comms.py, default knobs)",
    .params = params,
    .n_params = N_PARAMS,
    .init = rp_init,
    .run = rp_run,
    .free = rp_free,
};

const struct sb_plugin *sb_plugin_reorder_communication_preserving_peak_memory(void)
{
    return &plugin;
}

SB_PLUGIN_EXPORT(sb_plugin_reorder_communication_preserving_peak_memory)
