/* The HLO text importer: parse, then build the graph `run -w x.hlo` would. */
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
    sb_hlo_free(m);
    return 0;
}
