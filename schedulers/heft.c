/* heft: Heterogeneous Earliest Finish Time (Topcuoglu, Hariri and Wu, "Performance-
 * effective and low-complexity task scheduling for heterogeneous computing", IEEE
 * TPDS 13(3), 2002), the list-scheduling reference placement papers report
 * against.
 *
 * 1. Upward rank from mean costs: rank(v) = mean_a t(v, a) + max over successors
 *    s of (mean transfer time of v's output + rank(s)).
 * 2. Nodes in decreasing rank (ties by id, which keeps the order topological
 *    because ids are), each onto the device with the earliest finish time, where
 *    a node may be inserted into an idle gap between nodes already placed there
 *    (the paper's insertion-based policy).
 *
 * Adaptations to the graph model (docs/heft.md): inputs cost nothing and move
 * to the device of their first-placed consumer instead of being placed like
 * tasks (a weight lives where its layer runs); a collective's start and done stay
 * on one device and the done is ready when the collective's duration has passed;
 * pre-assigned devices are kept.  The returned order lists nodes by planned
 * start time, so each device runs them in the planned order. */
#include "schedbench/plugin.h"
#include "schedbench/policy.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const struct sb_param heft_params[] = {
    {"capacity", SB_PARAM_BOOL, 1, 0, 1, NULL,
     "keep each device within its mem_bytes (the machine file's); 0 ignores memory"},
};

static int heft_init(const double *p, void **state, char *err, size_t n_err)
{
    int *c = malloc(sizeof *c);
    if (!c)
        return sb_plugin_fail(err, n_err, "heft: out of memory");
    *c = p[0] != 0;
    *state = c;
    return 0;
}

static void heft_free(void *state) { free(state); }

static int heft_run(void *state, const struct sb_graph_view *g, struct sb_schedule *out)
{
    return sb_heft_plan(g, out, NULL, state ? *(const int *)state : 1);
}

static const struct sb_plugin heft = {
    .abi = SB_PLUGIN_ABI,
    .size = sizeof(struct sb_plugin),
    .name = "heft",
    .summary = "HEFT (Topcuoglu et al. 2002): upward rank, insertion-based earliest "
               "finish time placement",
    .params = heft_params,
    .n_params = 1,
    .init = heft_init,
    .run = heft_run,
    .free = heft_free,
    .flags = SB_PLUGIN_PLACER, /* a job of ranks comes whole: docs/heft.md */
};

const struct sb_plugin *sb_plugin_heft(void) { return &heft; }

SB_PLUGIN_EXPORT(sb_plugin_heft)
