/* Refused: claims a descriptor smaller than ABI 1's. */
#include "schedbench/plugin.h"
static int run(void *s, const struct sb_graph_view *g, struct sb_schedule *o)
{
    (void)s, (void)g, (void)o;
    return 0;
}
static const struct sb_plugin p = {.abi = SB_PLUGIN_ABI, .size = 16, .name = "small", .run = run};
__attribute__((visibility("default"))) const struct sb_plugin *sb_plugin_entry(void) { return &p; }
