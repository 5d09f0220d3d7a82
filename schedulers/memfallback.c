/* memfallback: `overlap` plus the memory fallback found by the investigation of
 * Inductor's overlap scheduler on a Llama backward (issue 5).  The original
 * order's memory profile is computed first; while the memory of the schedule
 * being built is above that profile at the same point (the stretch of the
 * original order leading to the next compute node) plus a headroom, the next
 * node is simply the ready node that comes first in the original order.  On-path
 * scores are also checked when a node is popped, so a wait that became hidden
 * after it was queued is no longer deferred as exposed.  rule=peak swaps the
 * reference for Inductor's later budget: original peak + max(headroom, 5%). */
#include <stdlib.h>

#include "schedbench/policy.h"

static const struct sb_param memfallback_params[] = {
    {"prefetch", SB_PARAM_BOOL, 1, 0, 1, NULL,
     "start collectives early at compute nodes (as `overlap`)"},
    {"max_in_flight_gb", SB_PARAM_DOUBLE, 5, 0, 1e6, NULL,
     "GiB of collective footprint in flight before the oldest wait is forced; "
     "Inductor max_in_flight_gb = 5"},
    {"max_compute_pre_fetch", SB_PARAM_INT, 200, 0, 4e9, NULL,
     "compute nodes ahead an on-path collective may be started; Inductor default 200"},
    {"max_coll_distance", SB_PARAM_INT, 200, 0, 4e9, NULL,
     "unscheduled collectives examined per compute node; Inductor default 200"},
    {"compute_overlap_multiplier", SB_PARAM_DOUBLE, 1, 0, 1e6, NULL,
     "factor on compute time as overlap budget; Inductor default 1.0"},
    {"headroom_gb", SB_PARAM_DOUBLE, 1, 0, 1e6, NULL,
     "GiB allowed above the reference before the fallback engages; 1 GiB as in the "
     "investigation and Inductor's max_memory_increase_gb = 1.0"},
    {"rule", SB_PARAM_ENUM, 0, 0, 0, "profile|peak",
     "reference: profile = original memory at this point + headroom (investigation); "
     "peak = original peak + max(headroom, peak_ratio * peak) (Inductor's later rule)"},
    {"peak_ratio", SB_PARAM_DOUBLE, 0.05, 0, 100, NULL,
     "rule=peak: fraction of the original peak allowed above it; Inductor "
     "max_memory_increase_ratio = 0.05"},
    {"fresh_scores", SB_PARAM_BOOL, 1, 0, 1, NULL,
     "re-score on-path nodes when popped, not only when queued (the investigation's "
     "stale-score finding); 0 = Inductor's queue-time scores"},
    {"compute_nodes", SB_PARAM_ENUM, 0, 0, 0, "flops|all",
     "what keeps its order and blocks prefetch paths (as `overlap`)"},
    {"queues", SB_PARAM_ENUM, 0, 0, 0, "two|one",
     "ready queues (as `overlap`): one = the earlier single queue, off-path nodes last"},
};
#define MEMFALLBACK_N_PARAMS (sizeof memfallback_params / sizeof memfallback_params[0])

static int memfallback_init(const double *param, void **state, char *err, size_t n_err)
{
    struct sb_ovl_params *P = calloc(1, sizeof *P);
    if (!P)
        return sb_plugin_fail(err, n_err, "out of memory");
    P->prefetch = param[0] != 0;
    P->max_in_flight_bytes = param[1] * SB_OVL_GIB;
    P->max_compute_pre_fetch = (uint32_t)param[2];
    P->max_coll_distance = (uint32_t)param[3];
    P->overlap_mult = param[4];
    P->headroom_bytes = param[5] * SB_OVL_GIB;
    P->fallback = param[6] == 0 ? SB_OVL_FALLBACK_PROFILE : SB_OVL_FALLBACK_PEAK;
    P->peak_ratio = param[7];
    P->fresh_scores = param[8] != 0;
    P->compute_rule = (int)param[9];
    P->single_queue = param[10] == 1;
    *state = P;
    return 0;
}

static int memfallback_run(void *state, const struct sb_graph_view *g,
                           struct sb_schedule *out)
{
    return sb_ovl_run(g, state, out, NULL);
}

static void memfallback_free(void *state) { free(state); }

static const struct sb_plugin memfallback = {
    .abi = SB_PLUGIN_ABI,
    .size = sizeof(struct sb_plugin),
    .name = "memfallback",
    .summary = "overlap + memory fallback: original order while memory exceeds the "
               "original profile + headroom; scores re-checked when popped",
    .params = memfallback_params,
    .n_params = MEMFALLBACK_N_PARAMS,
    .init = memfallback_init,
    .run = memfallback_run,
    .free = memfallback_free,
};

const struct sb_plugin *sb_plugin_memfallback(void) { return &memfallback; }

SB_PLUGIN_EXPORT(sb_plugin_memfallback)
