/* The Chakra .et importer: length-delimited protobuf, ordering, CSV. */
#include "fuzz.h"
#include "import/import.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
    struct sb_err e;
    struct sb_import_opts o;
    sb_import_defaults(&o);
    sb_graph_free(sb_chakra_load_mem("fuzz.et", data, n, &o, &e));
    return 0;
}
