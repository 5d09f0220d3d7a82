/* The Chakra .et importer: length-delimited protobuf, ordering, streams,
 * process groups, and the builder.  The input's length picks the options
 * (the bytes stay a valid trace, so the seeds keep working), so that
 * ctrl_deps=1 (and its refusals), one stream and an explicit npus are
 * fuzzed too. */
#include "fuzz.h"
#include "import/import.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
    struct sb_err e;
    struct sb_import_opts o;
    sb_import_defaults(&o);
    o.ctrl_deps = n & 1;
    o.streams = !(n & 2);
    if (n & 4) {
        o.npus = 1 + (uint32_t)(n >> 3) % 64;
        o.npus_set = 1;
    }
    sb_graph_free(sb_chakra_load_mem("fuzz.et", data, n, &o, &e));
    return 0;
}
