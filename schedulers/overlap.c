/* overlap: a model of PyTorch Inductor's overlap scheduler
 * (torch/_inductor/fx_passes/overlap_scheduling.py, OverlapScheduler), without
 * any memory limit.  Compute nodes keep their order; every other node is placed
 * by two ready queues (on the compute path by domination, off it near its
 * original position), exposed waits are deferred, and at each compute node the
 * collectives among the next max_coll_distance are started early when their
 * ancestors allow it.  The model itself is in the policy toolkit
 * (schedbench/policy.h, schedulers/lib/overlap_core.c); docs/overlap.md
 * describes it and what it does to memory. */
#include <stdlib.h>

#include "schedbench/policy.h"

/* Defaults are schedule_overlap_bucketing's keyword defaults in the version
 * with separate on-path and off-path queues and per-group overlap budgets. */
static const struct sb_param overlap_params[] = {
    {"prefetch", SB_PARAM_BOOL, 1, 0, 1, NULL,
     "start collectives early at compute nodes (_schedule_collectives_for_overlap); "
     "0 = only from the ready queues (the investigation's 'without prefetching')"},
    {"max_in_flight_gb", SB_PARAM_DOUBLE, 5, 0, 1e6, NULL,
     "GiB of collective footprint (inputs + output) in flight before the oldest wait "
     "is forced; Inductor max_in_flight_gb = 5"},
    {"max_compute_pre_fetch", SB_PARAM_INT, 200, 0, 4e9, NULL,
     "compute nodes ahead of the current one an on-path collective may be started; "
     "Inductor max_compute_pre_fetch = 200"},
    {"max_coll_distance", SB_PARAM_INT, 200, 0, 4e9, NULL,
     "unscheduled collectives examined as prefetch candidates per compute node; "
     "Inductor max_coll_distance = 200"},
    {"compute_overlap_multiplier", SB_PARAM_DOUBLE, 1, 0, 1e6, NULL,
     "factor on a compute node's time when it becomes overlap budget; "
     "Inductor compute_overlap_multipler = 1.0"},
    {"compute_nodes", SB_PARAM_ENUM, 0, 0, 0, "flops|all",
     "what keeps its order and blocks prefetch paths: flops = matmul, convolution "
     "and attention ops (Inductor's is_compute_node, flop registry); all = every "
     "compute node"},
    {"queues", SB_PARAM_ENUM, 0, 0, 0, "two|one",
     "two = separate on-path and off-path ready queues (pytorch/pytorch#169838, "
     "#169840); one = the earlier single queue where off-path nodes drift to the end "
     "(the memory regression investigation's revision)"},
    {"bucket", SB_PARAM_ENUM, 0, 0, 0, "none|greedy|overlap",
     "collectives sent as one after scheduling (docs/plugins.md, \"Buckets\"): "
     "overlap = OverlapPreservingBucketer, as collective_bucketing=True runs it "
     "(max_bucket_memory_gb = 2.0); greedy = bucket_all_gather / bucket_reduce_scatter "
     "by 2000 MB; none = Inductor's default collective_bucketing = False"},
};
#define OVERLAP_N_PARAMS (sizeof overlap_params / sizeof overlap_params[0])

struct overlap_state {
    struct sb_ovl_params P; /* first: sb_ovl_run reads the state as its params */
    int bucket;             /* 0 none, 1 greedy, 2 overlap */
};

static int overlap_init(const double *param, void **state, char *err, size_t n_err)
{
    struct overlap_state *S = calloc(1, sizeof *S);
    struct sb_ovl_params *P = S ? &S->P : NULL;
    if (!P)
        return sb_plugin_fail(err, n_err, "out of memory");
    P->prefetch = param[0] != 0;
    P->max_in_flight_bytes = param[1] * SB_OVL_GIB;
    P->max_compute_pre_fetch = (uint32_t)param[2];
    P->max_coll_distance = (uint32_t)param[3];
    P->overlap_mult = param[4];
    P->fallback = SB_OVL_FALLBACK_NONE;
    P->compute_rule = (int)param[5];
    P->single_queue = param[6] == 1;
    S->bucket = (int)param[7];
    *state = S;
    return 0;
}

static int overlap_run(void *state, const struct sb_graph_view *g, struct sb_schedule *out)
{
    const struct overlap_state *S = state;
    if (sb_ovl_run(g, &S->P, out, NULL))
        return -1;
    if (!S->bucket)
        return 0;
    struct sb_bucket_params p;
    sb_bucket_defaults(&p);
    p.max_bucket_bytes = 2.0 * SB_OVL_GIB; /* finalize_overlap_scheduling's 2.0 GB */
    return sb_bucket_schedule(g, S->bucket == 1 ? SB_BUCKET_GREEDY : SB_BUCKET_OVERLAP, &p, out);
}

static void overlap_free(void *state) { free(state); }

static const struct sb_plugin overlap = {
    .abi = SB_PLUGIN_ABI,
    .size = sizeof(struct sb_plugin),
    .name = "overlap",
    .summary = "model of Inductor's overlap scheduler: fixed compute order, deferred "
               "exposed waits, prefetch by compute budget (no memory limit)",
    .params = overlap_params,
    .n_params = OVERLAP_N_PARAMS,
    .init = overlap_init,
    .run = overlap_run,
    .free = overlap_free,
};

const struct sb_plugin *sb_plugin_overlap(void) { return &overlap; }

SB_PLUGIN_EXPORT(sb_plugin_overlap)
