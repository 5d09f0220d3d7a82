/* overlap_preserving_bucketer: PyTorch Inductor's OverlapPreservingBucketer
 * (torch/_inductor/fx_passes/overlap_preserving_bucketer.py,
 * pytorch/pytorch@0196bc40; the bucketer of schedulers/lib/bucket.c) on the
 * graph's own order, as test_overlap_bucketing_unit.py calls
 * bucket_collectives() on a hand-built schedule: the order is kept (up to
 * the moves a bucket needs), collectives of one process group and type that
 * can go out as one without breaking any hiding interval are bucketed.
 * Hiding nodes are derived from the order and the nodes' times (the unit
 * tests annotate them by hand; the transcribed cases cost their hiding mms
 * to cover their collective). */
#include <stdlib.h>

#include "schedbench/policy.h"

static const struct sb_param params[] = {
    {"max_bucket_memory_gb", SB_PARAM_DOUBLE, 1, 0, 1e6, NULL,
     "GiB of collective footprint one bucket may hold (1.0, the constructor's default)"},
    {"max_coll_distance", SB_PARAM_INT, 1000, 0, 4e9, NULL,
     "later collectives tried per bucket (1000)"},
    {"interval_check", SB_PARAM_BOOL, 1, 0, 1, NULL,
     "test-only: 0 drops the hiding-interval checks (_preserves_hiding_intervals)"},
    {"type_key", SB_PARAM_BOOL, 1, 0, 1, NULL,
     "test-only: 0 buckets collectives of different types together"},
};
#define N_PARAMS (sizeof params / sizeof params[0])

static int opb_init(const double *param, void **state, char *err, size_t n_err)
{
    struct sb_bucket_params *B = calloc(1, sizeof *B);
    if (!B)
        return sb_plugin_fail(err, n_err, "out of memory");
    sb_bucket_defaults(B);
    B->max_bucket_bytes = param[0] * SB_OVL_GIB;
    B->max_coll_distance = (uint32_t)param[1];
    B->no_interval_check = param[2] == 0;
    B->no_type_key = param[3] == 0;
    *state = B;
    return 0;
}

static int opb_run(void *state, const struct sb_graph_view *g, struct sb_schedule *out)
{
    for (uint32_t i = 0; i < g->n_nodes; i++)
        out->order[i] = i;
    return sb_bucket_schedule(g, SB_BUCKET_OVERLAP, state, out);
}

static void opb_free(void *state) { free(state); }

static const struct sb_plugin plugin = {
    .abi = SB_PLUGIN_ABI,
    .size = sizeof(struct sb_plugin),
    .name = "overlap_preserving_bucketer",
    .summary = "Inductor's OverlapPreservingBucketer on the graph's order (buckets "
               "collectives without breaking their overlap)",
    .params = params,
    .n_params = N_PARAMS,
    .init = opb_init,
    .run = opb_run,
    .free = opb_free,
};

const struct sb_plugin *sb_plugin_overlap_preserving_bucketer(void) { return &plugin; }

SB_PLUGIN_EXPORT(sb_plugin_overlap_preserving_bucketer)
