/* The Chakra .et importer: length-delimited protobuf, ordering, streams,
 * process groups and their group file, and the builder.  The input's length
 * picks the options (the bytes stay a valid trace, so the seeds keep
 * working), so that ctrl_deps=1 (and its refusals), one stream and an
 * explicit npus are fuzzed too.  With bit 3 of the length set, the input is a
 * job of 2 or 3 ranks (chakra.md, "Several ranks"): rank 0 the whole input,
 * rank r the input without its last r records when bit 4 is set (so the
 * ranks' collectives differ and the matching's refusals run), else the same
 * bytes again (so the joins are built and checked).
 *
 * Group files (issue 42): the traces are read as <dir>/fuzz.0.et (one rank)
 * or <dir>/fuzz.%d.et (a job) in a folder of this process, where the
 * importer looks for the group file <dir>/fuzz.json.  When the input holds
 * GROUPS_MARK, the bytes after it are written there as that file and the
 * bytes before it are the trace; without it the folder has no group file.
 * The seeds in tests/fuzz/seeds/chakra carry a trace, the mark and a group
 * file (tests/gen_chakra_job.py's rank, then JSON). */
#define _GNU_SOURCE /* memmem, which libFuzzer watches for the mark */
#include "fuzz.h"
#include "import/import.h"

#include <sys/stat.h>

#define GROUPS_MARK "\n#groups\n"

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

/* This process's folder, made once: /tmp/sbfuzz.<pid>.d/ (ci/fuzz.sh
 * removes /tmp/sbfuzz.* after the run). */
static const char *fuzz_dir(void)
{
    static char dir[128];
    if (!dir[0]) {
        snprintf(dir, sizeof dir, "/tmp/sbfuzz.%ld.d", (long)getpid());
        if (mkdir(dir, 0700) != 0 && access(dir, W_OK) != 0)
            abort();
    }
    return dir;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
    struct sb_err e;
    struct sb_import_opts o;
    char path[192], groups[192];
    snprintf(groups, sizeof groups, "%s/fuzz.json", fuzz_dir());
    /* the trace, and after the mark the group file */
    const uint8_t *mark = memmem(data, n, GROUPS_MARK, sizeof GROUPS_MARK - 1);
    size_t n_trace = mark ? (size_t)(mark - data) : n;
    remove(groups);
    if (mark) {
        FILE *f = fopen(groups, "wb");
        if (!f)
            abort();
        size_t at = n_trace + sizeof GROUPS_MARK - 1;
        fwrite(data + at, 1, n - at, f);
        fclose(f);
    }
    sb_import_defaults(&o);
    o.ctrl_deps = n & 1;
    o.streams = !(n & 2);
    if (n & 4) {
        o.npus = 1 + (uint32_t)(n >> 3) % 64;
        o.npus_set = 1;
    }
    if (!(n & 8)) {
        snprintf(path, sizeof path, "%s/fuzz.0.et", fuzz_dir());
        sb_graph_free(sb_chakra_load_mem(path, data, n_trace, &o, &e));
        return 0;
    }
    uint32_t ranks = 2 + (uint32_t)(n >> 5) % 2;
    const uint8_t *buf[3];
    size_t len[3];
    for (uint32_t r = 0; r < ranks; r++) {
        buf[r] = data;
        len[r] = r && (n & 16) ? drop_records(data, n_trace, r) : n_trace;
    }
    snprintf(path, sizeof path, "%s/fuzz.%%d.et", fuzz_dir());
    sb_graph_free(sb_chakra_load_ranks_mem(path, ranks, buf, len, &o, &e));
    return 0;
}
