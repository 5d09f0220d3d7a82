/* sink_waits_iterative: PyTorch Inductor's memory-bounded wait sinking
 * (torch/_inductor/comms.py, _sink_waits_iterative_internal, copy id
 * 71492789; knobs of config_comms.py @282eca21;
 * ../shared/research/inductor-passes.md §1.4), the mirror of
 * reorder_communication_preserving_peak_memory: each wait, tail to head,
 * sinks one position at a time past what does not read it; a reader joins
 * its group unless it is a wait, a collective or gemm-like; it stops there,
 * at the list tail, or when the swap would lift the peak above the starting
 * peak times (1 + budget).  Runtime estimations are off, as by default.  The
 * pass is in the policy toolkit (schedulers/lib/inductor_comms.c);
 * docs/inductor.md. */
#include <stdlib.h>

#include "schedbench/policy.h"

static const struct sb_param params[] = {
    {"sink_iterative_peak_memory_budget", SB_PARAM_DOUBLE, 0.2, 0, 1e9, NULL,
     "config_comms: the peak may grow to (1 + budget) x the peak before the pass (0.2)"},
    {"sink_waits_iterative_unsafe_collectives_reorder", SB_PARAM_BOOL, 1, 0, 1, NULL,
     "config_comms: a sinking group holding a collective may pass another (True)"},
    {"sink_waits_iterative_swap_with_collectives", SB_PARAM_BOOL, 0, 0, 1, NULL,
     "config_comms: a sinking wait may pass a collective start (False)"},
    {"sink_waits_iterative_debug_limit_to_sink", SB_PARAM_INT, 0, 0, 4e9, NULL,
     "config_comms (env PYTORCH_SINK_WAITS_LIMIT): waits moved, 0 = all"},
    {"gemm_stop", SB_PARAM_BOOL, 1, 0, 1, NULL,
     "test-only: 0 lets a gemm-like reader join the group like any other node"},
};
#define N_PARAMS (sizeof params / sizeof params[0])

static int sw_init(const double *param, void **out, char *err, size_t n_err)
{
    struct sb_ind_iter_params *P = calloc(1, sizeof *P);
    if (!P)
        return sb_plugin_fail(err, n_err, "out of memory");
    P->sink = 1;
    P->peak_memory_budget = param[0];
    P->unsafe_collectives_reorder = param[1] != 0;
    P->swap_with_collectives = param[2] != 0;
    P->limit = (uint32_t)param[3];
    P->no_gemm_stop = param[4] == 0;
    *out = P;
    return 0;
}

static int sw_run(void *state, const struct sb_graph_view *g, struct sb_schedule *out)
{
    for (uint32_t v = 0; v < g->n_nodes; v++)
        out->order[v] = v;
    if (sb_ind_reorder_iterative(g, out->order, state, NULL))
        return sb_plugin_fail(out->err, out->n_err, "out of memory");
    return 0;
}

static void sw_free(void *state) { free(state); }

static const struct sb_plugin plugin = {
    .abi = SB_PLUGIN_ABI,
    .size = sizeof(struct sb_plugin),
    .name = "sink_waits_iterative",
    .summary = "Inductor's iterative wait sinking within a peak-memory budget (comms.py, "
               "default knobs)",
    .params = params,
    .n_params = N_PARAMS,
    .init = sw_init,
    .run = sw_run,
    .free = sw_free,
};

const struct sb_plugin *sb_plugin_sink_waits_iterative(void) { return &plugin; }

SB_PLUGIN_EXPORT(sb_plugin_sink_waits_iterative)
