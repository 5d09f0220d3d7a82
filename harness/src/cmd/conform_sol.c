/* `schedbench conform DIR` on cases of XLA GPU's SoL collective model (DIR of
 * *.solcase files, tests/data/xla-sol/README.md): each case is one
 * collective of sol_latency_estimator_test.cc, written as the instruction's
 * opcode, shapes and groups, the SolGPUCostModel::Config and the test
 * device.  The bytes the cost analysis would count are derived here from the
 * shapes (GpuHloCostAnalysis's rules), the groups are classified as XLA's
 * CommunicationType does, and net/xla_sol.c prices the collective; the
 * figure, truncated to whole us as the test does, must equal the test's.
 * A case XLA prices with its measured NCCL table is skipped with that
 * reason; dispatch cases (`expect interpolator`, `expect enabled`, ...)
 * check which path XLA takes. */
#define _POSIX_C_SOURCE 200809L
#include "conform.h"
#include "conform_cases.h"
#include "core/core.h"
#include "core/num.h"
#include "net/xla_sol.h"
#include "run.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SOL_MAX_IDS 4096
#define SOL_MAX_OPS 16

struct shape {
    uint64_t bytes, elems;
};

struct scase {
    char name[128], op[64], wraps[64], expect[32], device[32], skip[400];
    int has_source, enabled_case, flag, host_offloaded, triton;
    uint32_t active_links;
    uint64_t expect_us;
    struct sb_sol_config cfg;
    struct sb_sol_device dev;
    double core_count, fpus_per_core, clock_ghz, flops_per_element;
    struct shape operand, output;
    uint32_t n_groups, group_size, n_ids, ids[SOL_MAX_IDS];
    uint32_t n_pairs, pairs[SOL_MAX_IDS]; /* source, target, ... */
    uint32_t n_ops;
    char ops[SOL_MAX_OPS][48];
};

/* HLO element types and their sizes (primitive_util::ByteWidth). */
static int elem_bytes(const char *s, size_t n)
{
    static const struct { const char *name; int bytes; } t[] = {
        {"pred", 1}, {"s8", 1}, {"u8", 1}, {"f8e4m3fn", 1}, {"f8e5m2", 1}, {"bf16", 2},
        {"f16", 2}, {"s16", 2}, {"u16", 2}, {"f32", 4}, {"s32", 4}, {"u32", 4}, {"f64", 8},
        {"s64", 8}, {"u64", 8}, {"c64", 8}, {"c128", 16}};
    for (size_t i = 0; i < sizeof t / sizeof *t; i++)
        if (strlen(t[i].name) == n && !strncmp(s, t[i].name, n))
            return t[i].bytes;
    return 0;
}

/* "bf16[16000,1000]" */
static int parse_shape(const char *s, struct shape *out)
{
    const char *lb = strchr(s, '[');
    int eb = lb ? elem_bytes(s, (size_t)(lb - s)) : 0;
    if (!eb)
        return -1;
    uint64_t elems = 1;
    const char *p = lb + 1;
    while (*p != ']') {
        char *end;
        unsigned long long d = strtoull(p, &end, 10);
        if (end == p || d > (1ull << 32) || elems > (1ull << 40))
            return -1;
        elems *= d;
        p = end;
        if (*p == ',')
            p++;
        else if (*p != ']')
            return -1;
    }
    if (p[1])
        return -1;
    out->elems = elems;
    out->bytes = elems * (uint64_t)eb;
    return 0;
}

/* {{0,1,2},{3,4,5}}: ids in order, every group one size; or [G,S]<=[N],
 * XLA's iota list without a transpose (G groups of S consecutive ids). */
static int parse_groups(const char *s, struct scase *c)
{
    unsigned g, sz, n;
    char tail;
    if (sscanf(s, "[%u,%u]<=[%u]%c", &g, &sz, &n, &tail) == 3) {
        if (!g || !sz || (uint64_t)g * sz != n || n > SOL_MAX_IDS)
            return -1;
        c->n_groups = g, c->group_size = sz, c->n_ids = n;
        for (uint32_t i = 0; i < n; i++)
            c->ids[i] = i;
        return 0;
    }
    if (strncmp(s, "{{", 2))
        return -1;
    const char *p = s + 1;
    c->n_groups = c->n_ids = 0;
    while (*p == '{') {
        uint32_t members = 0;
        p++;
        while (*p != '}') {
            char *end;
            unsigned long v = strtoul(p, &end, 10);
            if (end == p || c->n_ids == SOL_MAX_IDS)
                return -1;
            c->ids[c->n_ids++] = (uint32_t)v;
            members++;
            p = *end == ',' ? end + 1 : end;
        }
        if (!members || (c->n_groups && members != c->group_size))
            return -1;
        c->group_size = members;
        c->n_groups++;
        p++;
        if (*p == ',')
            p++;
    }
    return strcmp(p, "}") ? -1 : 0;
}

/* {{0,3},{1,0}} */
static int parse_pairs(const char *s, struct scase *c)
{
    const char *p = s;
    if (*p++ != '{')
        return -1;
    while (*p == '{') {
        unsigned a, b;
        int used = 0;
        if (sscanf(p, "{%u,%u}%n", &a, &b, &used) != 2 || !used || c->n_pairs + 2 > SOL_MAX_IDS)
            return -1;
        c->pairs[c->n_pairs++] = a;
        c->pairs[c->n_pairs++] = b;
        p += used;
        if (*p == ',')
            p++;
    }
    return strcmp(p, "}") ? -1 : 0;
}

static int num(const char *v, double lo, double hi, double *out)
{
    const char *why;
    return sb_num_real(v, lo, hi, out, &why);
}

/* One "key value" line of a case; -1 with why on a bad one. */
static int read_key(struct scase *c, const char *k, char *v, const char **why)
{
    double x = 0;
    *why = "bad value";
    if (!strcmp(k, "name"))
        return snprintf(c->name, sizeof c->name, "%s", v) >= (int)sizeof c->name ? -1 : 0;
    if (!strcmp(k, "source"))
        return (c->has_source = 1) - 1;
    if (!strcmp(k, "skip")) /* a case outside this model: its reason */
        return snprintf(c->skip, sizeof c->skip, "%s", v) >= (int)sizeof c->skip ? -1 : 0;
    if (!strcmp(k, "op"))
        return snprintf(c->op, sizeof c->op, "%s", v) >= (int)sizeof c->op ? -1 : 0;
    if (!strcmp(k, "wraps"))
        return snprintf(c->wraps, sizeof c->wraps, "%s", v) >= (int)sizeof c->wraps ? -1 : 0;
    *why = "not an array shape such as bf16[16000,1000]";
    if (!strcmp(k, "operand"))
        return parse_shape(v, &c->operand);
    if (!strcmp(k, "output"))
        return parse_shape(v, &c->output);
    *why = "not {{0,1},{2,3}} (groups of one size, at most 4096 ids) or [G,S]<=[N]";
    if (!strcmp(k, "replica_groups"))
        return parse_groups(v, c);
    *why = "not pairs such as {{0,1},{1,0}}";
    if (!strcmp(k, "source_target_pairs"))
        return parse_pairs(v, c);
    *why = "not h100, b200 or unknown";
    if (!strcmp(k, "preset"))
        return sb_sol_preset(&c->cfg, v);
    *why = "bad value";
    if (!strcmp(k, "expect")) {
        if (!num(v, 0, 1e12, &x)) {
            c->expect_us = (uint64_t)x;
            return snprintf(c->expect, sizeof c->expect, "us") < 0;
        }
        return snprintf(c->expect, sizeof c->expect, "%s", v) >= (int)sizeof c->expect ? -1 : 0;
    }
    if (!strcmp(k, "device"))
        return snprintf(c->device, sizeof c->device, "%s", v) >= (int)sizeof c->device ? -1 : 0;
    if (!strcmp(k, "ops")) {
        for (char *t = strtok(v, ","); t; t = strtok(NULL, ","))
            if (c->n_ops == SOL_MAX_OPS ||
                snprintf(c->ops[c->n_ops++], sizeof c->ops[0], "%s", t) >= (int)sizeof c->ops[0])
                return -1;
        return 0;
    }
    struct { const char *key; double *to; double lo, hi; } reals[] = {
        {"nccl_op_launch_us", &c->cfg.nccl_op_launch_us, 0, 1e9},
        {"nic_speed_gbps", &c->cfg.nic_speed_gbps, 1e-3, 1e5},
        {"chunk_prep_us", &c->cfg.chunk_prep_us, 0, 1e9},
        {"rtt_us", &c->cfg.rtt_us, 0, 1e9},
        {"memory_bandwidth", &c->dev.memory_bytes_per_s, 1, 1e16},
        {"core_count", &c->core_count, 1, 1e6},
        {"fpus_per_core", &c->fpus_per_core, 1, 1e6},
        {"clock_rate_ghz", &c->clock_ghz, 1e-3, 100},
        {"flops_per_element", &c->flops_per_element, 0, 1e6},
        {"nvlink_bw_per_lane_gbps", &c->cfg.nvlink_bw_per_lane_gbps, 0, 1e5},
        {"nvlink_barrier_us", &c->cfg.nvlink_barrier_us, 0, 1e9},
    };
    for (size_t i = 0; i < sizeof reals / sizeof *reals; i++)
        if (!strcmp(k, reals[i].key))
            return num(v, reals[i].lo, reals[i].hi, reals[i].to);
    struct { const char *key; int *to; } flags[] = {
        {"flag", &c->flag}, {"host_offloaded", &c->host_offloaded}};
    for (size_t i = 0; i < 2; i++)
        if (!strcmp(k, flags[i].key)) {
            c->enabled_case = 1;
            *flags[i].to = !strcmp(v, "true");
            return strcmp(v, "true") && strcmp(v, "false") ? -1 : 0;
        }
    uint64_t u;
    const char *nwhy;
    if (!strcmp(k, "gpus_per_node") || !strcmp(k, "partition_size") ||
        !strcmp(k, "chunk_size_bytes")) {
        if (sb_num_u64(v, k[0] == 'p' ? 0 : 1, 1ull << 40, &u, &nwhy))
            return -1;
        if (k[0] == 'g')
            c->cfg.gpus_per_node = (uint32_t)u;
        else if (k[0] == 'p')
            c->cfg.partition_size = (uint32_t)u;
        else
            c->cfg.chunk_size_bytes = u;
        return 0;
    }
    if (!strcmp(k, "kernel_strategy")) { /* CollectiveBackendConfig's */
        c->triton = !strcmp(v, "TRITON_ONE_SHOT") || !strcmp(v, "TRITON_TWO_SHOT");
        return c->triton || !strcmp(v, "DEFAULT") ? 0 : -1;
    }
    if (!strcmp(k, "active_links")) {
        if (sb_num_u64(v, 0, 1024, &u, &nwhy))
            return -1;
        c->active_links = (uint32_t)u;
        return 0;
    }
    if (!strcmp(k, "num_partitions"))
        return sb_num_u64(v, 1, SOL_MAX_IDS, &u, &nwhy);
    *why = "unknown key";
    return -1;
}

static int read_case(const char *path, struct scase *c, struct sb_err *e)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return sb_errf(e, "%s: cannot open", path);
    memset(c, 0, sizeof *c);
    sb_sol_preset(&c->cfg, "unknown");
    c->flops_per_element = 3;
    char line[8192];
    uint32_t ln = 0;
    int rc = 0;
    while (!rc && fgets(line, sizeof line, f)) {
        ln++;
        size_t n = strlen(line);
        if (n == sizeof line - 1 && line[n - 1] != '\n') {
            rc = sb_errf(e, "%s:%u: line longer than %zu bytes", path, ln, sizeof line - 2);
            break;
        }
        char *h = strchr(line, '#');
        if (h)
            *h = 0;
        char *k = strtok(line, " \t\r\n"), *v = k ? strtok(NULL, "\r\n") : NULL;
        if (!k)
            continue;
        while (v && (*v == ' ' || *v == '\t'))
            v++;
        const char *why;
        if (!v || !*v)
            rc = sb_errf(e, "%s:%u: '%s' has no value", path, ln, k);
        else if (read_key(c, k, v, &why))
            rc = sb_errf(e, "%s:%u: %s '%s': %s", path, ln, k, v, why);
    }
    fclose(f);
    if (!rc && (!c->name[0] || !c->has_source || !c->expect[0]))
        rc = sb_errf(e, "%s: a case needs name, source and expect", path);
    if (!rc && !c->enabled_case && !c->skip[0] && (!c->op[0] || !c->dev.memory_bytes_per_s))
        rc = sb_errf(e, "%s: a collective case needs op and memory_bandwidth", path);
    /* CalculateEffectiveFlopsPerNs on the whole device, an int64 as in XLA */
    c->dev.flop_per_ns = floor(c->clock_ghz * 2 * c->core_count * c->fpus_per_core);
    return rc;
}

static enum sb_sol_op op_of(const char *op)
{
    static const struct { const char *name; enum sb_sol_op op; } t[] = {
        {"all-gather", SB_SOL_ALL_GATHER}, {"all-gather-start", SB_SOL_ALL_GATHER},
        {"all-reduce", SB_SOL_ALL_REDUCE}, {"all-reduce-start", SB_SOL_ALL_REDUCE},
        {"reduce-scatter", SB_SOL_REDUCE_SCATTER}, {"all-to-all", SB_SOL_ALL_TO_ALL},
        {"collective-permute", SB_SOL_COLLECTIVE_PERMUTE},
        {"collective-permute-start", SB_SOL_COLLECTIVE_PERMUTE},
        {"collective-broadcast", SB_SOL_OTHER}, {"ragged-all-to-all", SB_SOL_OTHER}};
    for (size_t i = 0; i < sizeof t / sizeof *t; i++)
        if (!strcmp(op, t[i].name))
            return t[i].op;
    return SB_SOL_NOT_COLLECTIVE;
}

/* The bytes GpuHloCostAnalysis (and HloCostAnalysis::Preprocess, which
 * counts every operand and every leaf of the output) gives instruction c. */
static void cost_analysis(const struct scase *c, struct sb_sol_coll *x)
{
    const char *op = c->wraps[0] ? c->wraps : c->op;
    double in = (double)c->operand.bytes, out = (double)c->output.bytes;
    double r = c->group_size ? c->group_size : 1;
    int async = !!c->wraps[0], start = strstr(c->op, "-start") != NULL;
    x->op = op_of(op);
    x->async_wrapped = async;
    x->group_size = c->group_size;
    x->n_groups = c->n_groups ? c->n_groups : 1;
    x->triton_kernel = c->triton;
    x->active_links = c->active_links;
    switch (x->op) {
    case SB_SOL_ALL_GATHER: { /* HandleAllGather(Start): the gathered result */
        double rank = floor(out / r);
        x->bytes_transferred = (uint64_t)out;
        x->bytes_accessed = rank * (2 * r - 1) + rank * r;
        break;
    }
    case SB_SOL_REDUCE_SCATTER: { /* HandleReduceScatter: the operand */
        double rank = floor(in / r);
        x->bytes_transferred = (uint64_t)in;
        x->bytes_accessed = rank * r + rank * (2 * r - 1);
        x->reduce_flops = c->flops_per_element * (double)c->output.elems;
        break;
    }
    case SB_SOL_ALL_REDUCE: /* HandleAllReduce(Start) */
        x->bytes_transferred = (uint64_t)out;
        x->bytes_accessed = start ? out : out + in;
        x->reduce_flops = c->flops_per_element * (double)c->output.elems;
        break;
    case SB_SOL_COLLECTIVE_PERMUTE: /* HandleCollectivePermute(Start): operand 0 */
        x->bytes_transferred = (uint64_t)in;
        x->bytes_accessed = in + (start || async ? in + out : out);
        break;
    default: /* all-to-all and the rest: Preprocess's count */
        x->bytes_transferred = (uint64_t)out;
        x->bytes_accessed = in + out + (async ? in : 0);
        break;
    }
}

/* GetCollectivePermuteProperty: any pair across partitions makes it inter. */
static enum sb_sol_comm permute_comm(const struct scase *c, uint32_t part)
{
    for (uint32_t i = 0; i + 1 < c->n_pairs; i += 2)
        if (c->pairs[i] / part != c->pairs[i + 1] / part)
            return SB_SOL_NON_WORLD;
    return SB_SOL_SINGLE_PARTITION;
}

/* IsSupportedForModule's device test: Hopper, Blackwell, or gfx950. */
static int device_supported(const char *d)
{
    return !strcmp(d, "hopper") || !strcmp(d, "blackwell") || !strcmp(d, "gfx950");
}


static int run_case(const struct scase *c, char *why, size_t n_why)
{
    if (c->skip[0]) {
        snprintf(why, n_why, "%s", c->skip);
        return SB_CASE_SKIP;
    }
    if (c->enabled_case) {
        const char *ops[SOL_MAX_OPS];
        for (uint32_t i = 0; i < c->n_ops; i++)
            ops[i] = c->ops[i];
        int on = sb_sol_enabled(c->flag, device_supported(c->device), c->host_offloaded, ops,
                                c->n_ops);
        snprintf(why, n_why, "SoL estimator %s", on ? "enabled" : "disabled");
        return strcmp(c->expect, on ? "enabled" : "disabled") ? SB_CASE_FAIL : SB_CASE_PASS;
    }
    struct sb_sol_coll x = {0};
    cost_analysis(c, &x);
    uint32_t part = sb_sol_partition(&c->cfg);
    if (x.op == SB_SOL_COLLECTIVE_PERMUTE) {
        if (!c->n_pairs) {
            snprintf(why, n_why, "empty source_target_pairs (XLA: kUnknown, an error)");
            return strcmp(c->expect, "error") ? SB_CASE_FAIL : SB_CASE_PASS;
        }
        x.comm = permute_comm(c, part);
    } else if (x.op != SB_SOL_NOT_COLLECTIVE &&
               sb_sol_classify(part, c->ids, c->n_groups, c->group_size, &x.comm, why, n_why)) {
        return strcmp(c->expect, "error") ? SB_CASE_FAIL : SB_CASE_PASS;
    }
    double us = 0;
    enum sb_sol_verdict v = sb_sol_collective_us(&c->cfg, &c->dev, &x, &us, why, n_why);
    static const char *const path[] = {"priced", "interpolator", "unsupported", "error"};
    if (strcmp(c->expect, "us")) { /* a dispatch case */
        int ok = !strcmp(c->expect, path[v]);
        if (!ok || !why[0])
            snprintf(why, n_why, "XLA's path: %s, expected %s", path[v], c->expect);
        return ok ? SB_CASE_PASS : SB_CASE_FAIL;
    }
    if (v == SB_SOL_INTERPOLATOR)
        return SB_CASE_SKIP; /* why says it is XLA's measured table, not the SoL formula */
    if (v != SB_SOL_PRICED)
        return SB_CASE_FAIL;
    uint64_t got = (uint64_t)floor(us); /* absl::Trunc to whole microseconds */
    snprintf(why, n_why, "%llu us (%.3f), XLA's test expects %llu us", (unsigned long long)got,
             us, (unsigned long long)c->expect_us);
    return got == c->expect_us ? SB_CASE_PASS : SB_CASE_FAIL;
}

int sb_conform_has_sol_cases(const char *dir)
{
    return sb_paths_has_suffix(dir, ".solcase");
}

static int suite_read(const char *path, const char *dir, void *c, struct sb_err *e)
{
    (void)dir;
    return read_case(path, c, e);
}

static int suite_run(const void *c, char *why, size_t n_why)
{
    return run_case(c, why, n_why);
}

static const char *suite_name(const void *c)
{
    return ((const struct scase *)c)->name;
}

int sb_conform_sol(const char *dir)
{
    static const struct sb_case_suite suite = {".solcase", "xla-sol", sizeof(struct scase), suite_read,
                                               suite_run, suite_name};
    return sb_case_suite_run(&suite, dir);
}
