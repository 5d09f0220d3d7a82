/* reorder_compute_and_comm_for_overlap: PyTorch Inductor's scheduler-IR
 * communication passes as its dispatcher runs them
 * (torch/_inductor/comms.py, config.reorder_for_compute_comm_overlap_passes):
 * each pass of the list in turn, on the order the previous one left.  The
 * passes are the scored list scheduler behind sink_waits, raise_comms and
 * reorder_compute_for_overlap (comms.py `_schedule_for_comm`, the version of
 * copy id 71492789, ../shared/research/inductor-passes.md §1.2) and the two
 * memory-bounded iterative passes (§1.3-1.4); all are in the policy toolkit
 * (schedulers/lib/inductor_comms.c).  docs/inductor.md. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "schedbench/policy.h"

#define PASS_CHOICES                                                                        \
    "none|sink_waits|raise_comms|reorder_compute_for_overlap|"                              \
    "reorder_communication_preserving_peak_memory|sink_waits_iterative"
enum { P_NONE, P_SINK, P_RAISE, P_OVERLAP, P_REORDER_ITER, P_SINK_ITER };
#define N_PASSES 4

/* The default list is config.py's older default (copy id 18637324); the
 * current default is [] (the order unchanged: `original`). */
static const struct sb_param params[] = {
    {"pass1", SB_PARAM_ENUM, P_OVERLAP, 0, 0, PASS_CHOICES,
     "first pass of reorder_for_compute_comm_overlap_passes"},
    {"pass2", SB_PARAM_ENUM, P_SINK, 0, 0, PASS_CHOICES, "second pass"},
    {"pass3", SB_PARAM_ENUM, P_RAISE, 0, 0, PASS_CHOICES, "third pass"},
    {"pass4", SB_PARAM_ENUM, P_NONE, 0, 0, PASS_CHOICES, "fourth pass"},
    {"reorder_iterative_peak_memory_budget", SB_PARAM_DOUBLE, 0.2, 0, 1e9, NULL,
     "config_comms: a collective's climb may raise the peak by this fraction (0.2)"},
    {"sink_iterative_peak_memory_budget", SB_PARAM_DOUBLE, 0.2, 0, 1e9, NULL,
     "config_comms: a wait's sinking may raise the peak by this fraction (0.2)"},
    {"reorder_iterative_unsafe_collectives_reorder", SB_PARAM_BOOL, 1, 0, 1, NULL,
     "config_comms: a climbing collective may pass another collective (True)"},
    {"sink_waits_iterative_unsafe_collectives_reorder", SB_PARAM_BOOL, 1, 0, 1, NULL,
     "config_comms: a sinking wait may pass a collective of another group (True)"},
    {"reorder_iterative_group_with_collectives", SB_PARAM_BOOL, 0, 0, 1, NULL,
     "config_comms: a collective the climbing one reads moves with it (False)"},
    {"sink_waits_iterative_swap_with_collectives", SB_PARAM_BOOL, 0, 0, 1, NULL,
     "config_comms: a sinking wait may pass a collective start (False)"},
    {"ablate", SB_PARAM_ENUM, 0, 0, 0, "none|ancestor_score|wait_score|overlap_fill",
     "test-only: switch one rule of the list scheduler off in every pass "
     "(raise_comms' score_0, sink_waits' score_1, reorder_compute_for_overlap's fill)"},
};
#define N_PARAMS (sizeof params / sizeof params[0])

struct state {
    int pass[N_PASSES];
    struct sb_ind_iter_params reorder, sink;
    int ablate;
};

static int rc_init(const double *param, void **out, char *err, size_t n_err)
{
    struct state *S = calloc(1, sizeof *S);
    if (!S)
        return sb_plugin_fail(err, n_err, "out of memory");
    for (int i = 0; i < N_PASSES; i++)
        S->pass[i] = (int)param[i];
    S->reorder = (struct sb_ind_iter_params){.sink = 0, .peak_memory_budget = param[4],
                                             .unsafe_collectives_reorder = param[6] != 0,
                                             .group_with_collectives = param[8] != 0};
    S->sink = (struct sb_ind_iter_params){.sink = 1, .peak_memory_budget = param[5],
                                          .unsafe_collectives_reorder = param[7] != 0,
                                          .swap_with_collectives = param[9] != 0};
    S->ablate = (int)param[10];
    *out = S;
    return 0;
}

static int run_pass(const struct state *S, int pass, const struct sb_graph_view *g,
                    uint32_t *order, uint32_t *tmp)
{
    int raise = pass == P_RAISE || pass == P_OVERLAP, sink = pass == P_SINK || pass == P_OVERLAP;
    int fill = pass == P_OVERLAP;
    switch (pass) {
    case P_SINK:
    case P_RAISE:
    case P_OVERLAP:
        if (sb_ind_schedule_for_comm(g, order, tmp, raise && S->ablate != 1,
                                     sink && S->ablate != 2, fill && S->ablate != 3))
            return -1;
        memcpy(order, tmp, (size_t)g->n_nodes * sizeof *order);
        return 0;
    case P_REORDER_ITER:
        return sb_ind_reorder_iterative(g, order, &S->reorder, NULL);
    case P_SINK_ITER:
        return sb_ind_reorder_iterative(g, order, &S->sink, NULL);
    }
    return 0;
}

static int rc_run(void *state, const struct sb_graph_view *g, struct sb_schedule *out)
{
    const struct state *S = state;
    uint32_t n = g->n_nodes;
    uint32_t *tmp = malloc((size_t)n * sizeof *tmp + 1);
    if (!tmp)
        return sb_plugin_fail(out->err, out->n_err, "out of memory");
    for (uint32_t v = 0; v < n; v++)
        out->order[v] = v;
    for (int i = 0; i < N_PASSES; i++)
        if (S->pass[i] != P_NONE && run_pass(S, S->pass[i], g, out->order, tmp)) {
            free(tmp);
            return sb_plugin_fail(out->err, out->n_err, "out of memory");
        }
    free(tmp);
    return 0;
}

static void rc_free(void *state) { free(state); }

static const struct sb_plugin plugin = {
    .abi = SB_PLUGIN_ABI,
    .size = sizeof(struct sb_plugin),
    .name = "reorder_compute_and_comm_for_overlap",
    .summary = "Inductor's scheduler-IR comm passes (comms.py), a list of up to four: "
               "sink_waits, raise_comms, reorder_compute_for_overlap, iterative ones",
    .params = params,
    .n_params = N_PARAMS,
    .init = rc_init,
    .run = rc_run,
    .free = rc_free,
};

const struct sb_plugin *sb_plugin_reorder_compute_and_comm_for_overlap(void) { return &plugin; }

SB_PLUGIN_EXPORT(sb_plugin_reorder_compute_and_comm_for_overlap)
