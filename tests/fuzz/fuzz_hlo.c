/* The HLO text importer: parse, then build the graphs `run -w x.hlo` (a
 * training step: loops expanded by trip count, the user's for unknown ones,
 * replica groups, operation queues, costs from shapes) and the conformance
 * harness (one computation as written) would, and the module's
 * HloCostAnalysis totals. */
#include "fuzz.h"
#include "import/hlo.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
    struct sb_err e;
    struct sb_hlo_module *m = sb_hlo_parse("fuzz.hlo", (const char *)data, n, &e);
    if (!m)
        return 0;
    struct sb_hlo_graph hg = {0};
    if (!sb_hlo_build(m, NULL, &hg, &e))
        sb_hlo_graph_free(&hg);
    double tot[3];
    sb_hlo_cost_total(m, NULL, tot);
    struct sb_hlo_opts step = {.step = 1};
    /* a count for loops whose own is unknown, as --import trip_count=2 */
    struct sb_hlo_trips trips = {.has_all = 1, .all = 2};
    if (!sb_hlo_expand_with(m, &trips, &e) && !sb_hlo_build(m, &step, &hg, &e))
        sb_hlo_graph_free(&hg);
    sb_hlo_free(m);
    return 0;
}
