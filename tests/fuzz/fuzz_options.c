/* The parsers of what users type (issue 42): --cost, --sim, a scheduler
 * spec, --import, and the strict readers every option and machine value goes
 * through (core/num.h, core/size.h).  The input is up to seven lines, one
 * for each; on success each result must be within the range the parser
 * promises, so an accepted value that breaks a ceiling is a crash here. */
#include "fuzz.h"
#include "core/num.h"
#include "core/size.h"
#include "import/import.h"

#include <math.h>

#define N_LINES 7

/* A cost model accepted by sb_cost_parse keeps every value within num.h's
 * ceilings: the times it derives are finite. */
static void check_cost(const struct sb_cost_params *c)
{
    if (!(c->step_lat_us >= 0 && c->step_lat_us <= SB_MAX_TIME_US) ||
        !(c->roof.launch_us >= 0 && c->roof.launch_us <= SB_MAX_TIME_US) ||
        !(c->roof.hbm_gbps >= SB_MIN_GBPS && c->roof.hbm_gbps <= SB_MAX_GBPS) ||
        c->default_ranks < 1)
        abort();
    for (int t = 1; t < SB_COLL_COUNT; t++)
        if (!(c->bus_gbps[t] >= SB_MIN_GBPS && c->bus_gbps[t] <= SB_MAX_GBPS))
            abort();
    for (int d = 0; d < SB_DTYPE_COUNT; d++)
        if (!(c->roof.peak_tflops[d] == 0 ||
              (c->roof.peak_tflops[d] >= SB_MIN_TFLOPS && c->roof.peak_tflops[d] <= SB_MAX_TFLOPS)))
            abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
    static int init;
    if (!init)
        sb_registry_add_builtins(), init = 1;
    char *s = malloc(n + 1), *line[N_LINES] = {"", "", "", "", "", "", ""};
    memcpy(s, data, n);
    s[n] = 0;
    char *p = s;
    for (int i = 0; i < N_LINES && p; i++) {
        line[i] = p;
        p = strchr(p, '\n');
        if (p)
            *p++ = 0;
    }
    struct sb_err e;
    struct sb_cost_params c;
    struct sb_sim_config sc;
    struct sb_sched sched;
    struct sb_import_opts imp;
    sb_cost_defaults(&c);
    if (sb_cost_parse(&c, line[0], &e) == 0)
        check_cost(&c);
    sb_sim_defaults(&sc);
    if (sb_sim_parse(&sc, line[1], &e) == 0)
        for (int t = 0; t < SB_COLL_COUNT; t++)
            if (sc.limit[t] < 1 || sc.limit[t] > SB_SIM_MAX_INFLIGHT)
                abort();
    if (!sb_sched_parse(&sched, line[2], &e))
        sb_sched_free(&sched);
    sb_import_defaults(&imp);
    sb_import_parse(&imp, line[3], &e);
    /* line 4: the strict readers, each with the range the line's first byte
     * picks (so the fuzzer reaches every bound) */
    const char *why;
    uint64_t u, hi = (uint64_t)1 << (line[4][0] & 63);
    double x, lo_r = (line[4][0] & 1) ? -1e6 : 0, hi_r = (line[4][0] & 2) ? 1e12 : 1e300;
    uint32_t k, m;
    const char *num = line[4][0] ? line[4] + 1 : line[4];
    if (sb_num_u64(num, 1, hi, &u, &why) == 0 && (u < 1 || u > hi))
        abort();
    if (sb_num_real(num, lo_r, hi_r, &x, &why) == 0 && !(x >= lo_r && x <= hi_r))
        abort();
    if (sb_num_shard(num, (uint32_t)hi | 1, &k, &m, &why) == 0 && (k < 1 || k > m))
        abort();
    /* line 5: a size and a capacity */
    if (sb_size_capacity(line[5], &u, &why) == 0 && (u < 1 || u > SB_MAX_CAPACITY_BYTES))
        abort();
    sb_size_parse(line[5], &u, &why);
    /* line 6: --max-input-bytes' reader */
    if (sb_parse_bytes(line[6], &u, &why) == 0 && (u < 1 || u > ((uint64_t)1 << 62)))
        abort();
    free(s);
    return 0;
}
