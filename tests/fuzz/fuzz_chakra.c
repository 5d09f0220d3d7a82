/* The Chakra .et importer: length-delimited protobuf, ordering, streams,
 * process groups, and the builder.  The input's length picks the options
 * (the bytes stay a valid trace, so the seeds keep working), so that
 * ctrl_deps=1 (and its refusals), one stream and an explicit npus are
 * fuzzed too.  With bit 3 of the length set, the input is a job of 2 or 3
 * ranks (chakra.md, "Several ranks"): rank 0 the whole input, rank r the
 * input without its last r records when bit 4 is set (so the ranks' collectives
 * differ and the matching's refusals run), else the same bytes again (so
 * the joins are built and checked). */
#include "fuzz.h"
#include "import/import.h"

/* The end of the input without its last k length-delimited records. */
static size_t drop_records(const uint8_t *data, size_t n, uint32_t k)
{
    size_t ends[64], m = 0, at = 0;
    while (at < n && m < 64) {
        uint64_t len = 0;
        int shift = 0;
        while (at < n && shift < 64) {
            uint8_t c = data[at++];
            len |= (uint64_t)(c & 0x7f) << shift;
            shift += 7;
            if (!(c & 0x80))
                break;
        }
        if (len > n - at)
            break;
        at += (size_t)len;
        ends[m++] = at;
    }
    return m > k ? ends[m - 1 - k] : 0;
}

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
    if (!(n & 8)) {
        sb_graph_free(sb_chakra_load_mem("fuzz.et", data, n, &o, &e));
        return 0;
    }
    uint32_t ranks = 2 + (uint32_t)(n >> 5) % 2;
    const uint8_t *buf[3];
    size_t len[3];
    for (uint32_t r = 0; r < ranks; r++) {
        buf[r] = data;
        len[r] = r && (n & 16) ? drop_records(data, n, r) : n;
    }
    sb_graph_free(sb_chakra_load_ranks_mem("fuzz.%d.et", ranks, buf, len, &o, &e));
    return 0;
}
