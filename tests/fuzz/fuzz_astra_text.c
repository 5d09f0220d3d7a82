/* The ASTRA-sim 1.0 text workload importer. */
#include "fuzz.h"
#include "import/import.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
    struct sb_err e;
    struct sb_import_opts o;
    sb_import_defaults(&o);
    sb_graph_free(sb_astra_text_load_mem("fuzz.txt", (const char *)data, n, &o, &e));
    return 0;
}
