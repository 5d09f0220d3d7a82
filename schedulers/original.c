/* original: the file order, i.e. the schedule the producing compiler or tracer
 * emitted.  Every other policy is compared against it. */
#include "schedbench/plugin.h"

static int original_run(void *state, const struct sb_graph_view *g,
                        struct sb_schedule *out)
{
    (void)state;
    for (uint32_t i = 0; i < g->n_nodes; i++)
        out->order[i] = i;
    return 0;
}

static const struct sb_plugin original = {
    .abi = SB_PLUGIN_ABI,
    .size = sizeof(struct sb_plugin),
    .name = "original",
    .summary = "the graph's file order, unchanged (the baseline)",
    .run = original_run,
};

const struct sb_plugin *sb_plugin_original(void) { return &original; }

SB_PLUGIN_EXPORT(sb_plugin_original)
