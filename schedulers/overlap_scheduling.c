/* overlap_scheduling: PyTorch Inductor's ATen-FX OverlapScheduler
 * (torch/_inductor/fx_passes/overlap_scheduling.py, schedule_overlap_bucketing
 * with its keyword defaults, pytorch/pytorch@0196bc40), bucketing only
 * with collective_bucketing=1 (the OverlapPreservingBucketer afterwards):
 * the overlap toolkit's model (schedulers/lib/overlap_core.c, the same one
 * `overlap` runs) under Inductor's limits: bytes in flight, how far ahead a
 * collective may be prefetched, how many collectives a prefetch looks at,
 * and the memory increase allowed over the original order's peak, the larger
 * of max_memory_increase_gb and max_memory_increase_ratio x that peak.  The
 * memory limit is applied as memfallback's `peak` rule does it (nodes in
 * original order while above it), a simplification of Inductor's, which
 * skips prefetches that would cross it and schedules waits first
 * (docs/inductor.md says where this differs). */
#include <stdlib.h>

#include "schedbench/policy.h"

static const struct sb_param params[] = {
    {"max_in_flight_gb", SB_PARAM_DOUBLE, 5, 0, 1e6, NULL,
     "GiB of collective footprint in flight before the oldest wait is forced (5)"},
    {"max_compute_pre_fetch", SB_PARAM_INT, 200, 0, 4e9, NULL,
     "compute nodes ahead an on-path collective may be prefetched (200)"},
    {"max_coll_distance", SB_PARAM_INT, 200, 0, 4e9, NULL,
     "unscheduled collectives examined per overlap node (200)"},
    {"compute_overlap_multipler", SB_PARAM_DOUBLE, 1, 0, 1e6, NULL,
     "factor on a node's time when it becomes overlap budget (1.0; Inductor's spelling)"},
    {"max_memory_increase_gb", SB_PARAM_DOUBLE, 1, 0, 1e6, NULL,
     "GiB the peak may grow above the original order's (1.0)"},
    {"max_memory_increase_ratio", SB_PARAM_DOUBLE, 0.05, 0, 1e6, NULL,
     "fraction of the original peak it may grow (0.05); the larger limit applies"},
    {"prefetch", SB_PARAM_BOOL, 1, 0, 1, NULL,
     "test-only: 0 switches _schedule_collectives_for_overlap off (no prefetch)"},
    {"queues", SB_PARAM_ENUM, 0, 0, 0, "two|one",
     "test-only: one = a single ready queue (the first version, @0da5431d)"},
    {"hide_key", SB_PARAM_BOOL, 1, 0, 1, NULL,
     "test-only: 0 drops -min(budget, exposed) from the prefetch candidates' order"},
    {"collective_bucketing", SB_PARAM_BOOL, 0, 0, 1, NULL,
     "aten_distributed_optimizations.collective_bucketing (None = off): the "
     "OverlapPreservingBucketer after scheduling, max_bucket_memory_gb 2.0 as "
     "finalize_overlap_scheduling passes it (sb_bucket_overlap)"},
};
#define N_PARAMS (sizeof params / sizeof params[0])

struct os_state {
    struct sb_ovl_params P; /* first: sb_ovl_run reads the state as its params */
    int bucketing;          /* collective_bucketing */
    struct sb_bucket_params B;
};

static int os_init(const double *param, void **state, char *err, size_t n_err)
{
    struct os_state *S = calloc(1, sizeof *S);
    struct sb_ovl_params *P = S ? &S->P : NULL;
    if (!P)
        return sb_plugin_fail(err, n_err, "out of memory");
    P->max_in_flight_bytes = param[0] * SB_OVL_GIB;
    P->max_compute_pre_fetch = (uint32_t)param[1];
    P->max_coll_distance = (uint32_t)param[2];
    P->overlap_mult = param[3];
    P->fallback = SB_OVL_FALLBACK_PEAK;
    P->headroom_bytes = param[4] * SB_OVL_GIB;
    P->peak_ratio = param[5];
    P->prefetch = param[6] != 0;
    P->single_queue = param[7] == 1;
    P->compute_rule = SB_OVL_COMPUTE_FLOPS;
    P->hide_key = param[8] != 0;
    S->bucketing = param[9] != 0;
    sb_bucket_defaults(&S->B);
    S->B.max_bucket_bytes = 2.0 * SB_OVL_GIB;
    *state = S;
    return 0;
}

static int os_run(void *state, const struct sb_graph_view *g, struct sb_schedule *out)
{
    const struct os_state *S = state;
    if (sb_ovl_run(g, &S->P, out, NULL))
        return -1;
    /* hiding nodes derived from the returned order: the scheduler's own
     * hiding decisions are not kept (docs/inductor.md) */
    return S->bucketing ? sb_bucket_schedule(g, SB_BUCKET_OVERLAP, &S->B, out) : 0;
}

static void os_free(void *state) { free(state); }

static const struct sb_plugin plugin = {
    .abi = SB_PLUGIN_ABI,
    .size = sizeof(struct sb_plugin),
    .name = "overlap_scheduling",
    .summary = "Inductor's ATen-FX OverlapScheduler with its in-flight, prefetch and "
               "memory-increase limits (bucketing off unless collective_bucketing=1)",
    .params = params,
    .n_params = N_PARAMS,
    .init = os_init,
    .run = os_run,
    .free = os_free,
};

const struct sb_plugin *sb_plugin_overlap_scheduling(void) { return &plugin; }

SB_PLUGIN_EXPORT(sb_plugin_overlap_scheduling)
