/* Cost models (docs/cost-model.md).
 *
 * analytical: compute from cost_us; a collective from comm_us when given, else a
 * ring alpha-beta model: steps * step_lat_us + moved_bytes / bus bandwidth, where
 * a ring all_reduce takes 2(p-1) steps moving 2(p-1)/p of the buffer per rank,
 * all_gather / reduce_scatter / all_to_all take p-1 steps moving (p-1)/p, and
 * point-to-point ops take one step moving the whole payload.  Bandwidths are "bus
 * bandwidth" in NCCL's sense, so they compare with nccl-tests' busbw column.
 *
 * approx: XLA's ApproximateLatencyEstimator in its abstract units: a start to its
 * done takes kHighLatency = 5000; nodes cost kMediumCost = 1000 for loop fusions,
 * kHighCost = 5000 for output fusions and convolutions, kLowCost = 1 otherwise.
 * Its "every other edge 1" is applied by the simulator (sb_cost_edge_lat). */
#define _POSIX_C_SOURCE 200809L
#include "core.h"
#include "num.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

/* Defaults: one H100 rank of a 64-GPU job spread over 8 nodes, where every ring
 * crosses InfiniBand NDR (400 Gb/s = 50 GB/s per GPU); nccl-tests reports about
 * 40 GB/s busbw for large messages on such systems.  The per-step latency is the
 * order of one inter-node hop of NCCL's Simple protocol. */
#define SB_DEFAULT_STEP_LAT_US 2.0
#define SB_DEFAULT_NET_GBPS 40.0
/* send_host / recv_host cross PCIe Gen5 x16: about 25 GB/s achieved per way. */
#define SB_DEFAULT_HOST_GBPS 25.0
/* copy is device-local: a read and a write of HBM3 (3.35 TB/s peak). */
#define SB_DEFAULT_COPY_GBPS 1500.0
/* Group size when neither the start nor "# ranks=" gives one. */
#define SB_DEFAULT_RANKS 1

/* The built-in roofline device, NVIDIA H100 SXM5 (H100 Tensor Core GPU
 * datasheet, dense figures, i.e. half the "with sparsity" ones): FP32 67
 * TFLOP/s, TF32 494.7, BF16 / FP16 989.4, FP8 / INT8 1978.9, FP64 tensor 67;
 * HBM3 3.35 TB/s.  The launch overhead is an assumption: the order of one CUDA
 * kernel launch seen from the GPU's side (a few microseconds). */
#define H100_PEAK_FP32 67.0
#define H100_PEAK_TF32 494.7
#define H100_PEAK_BF16 989.4
#define H100_PEAK_FP8 1978.9
#define H100_PEAK_FP64 67.0
#define H100_HBM_GBPS 3350.0
#define ROOFLINE_LAUNCH_US 2.0
/* gpu_performance_model_base.h (ROCm/xla 183fa00cb5d8): the share of the
 * shorter of compute and memory time hidden by the longer, and the launch
 * overhead it charges each kernel */
#define XLA_MEM_COMPUTE_PARALLELISM 0.95
#define XLA_KERNEL_LAUNCH_US 1.0

#define APPROX_HIGH_LATENCY 5000.0 /* XLA kHighLatency */
#define APPROX_LOW_COST 1.0        /* XLA kLowCost */
#define APPROX_MEDIUM_COST 1000.0  /* XLA kMediumCost */
#define APPROX_HIGH_COST 5000.0    /* XLA kHighCost */

void sb_cost_defaults(struct sb_cost_params *c)
{
    memset(c, 0, sizeof *c);
    c->model = SB_COST_ANALYTICAL;
    c->step_lat_us = SB_DEFAULT_STEP_LAT_US;
    for (int t = 0; t < SB_COLL_COUNT; t++)
        c->bus_gbps[t] = SB_DEFAULT_NET_GBPS;
    c->bus_gbps[SB_COLL_SEND_HOST] = SB_DEFAULT_HOST_GBPS;
    c->bus_gbps[SB_COLL_RECV_HOST] = SB_DEFAULT_HOST_GBPS;
    c->bus_gbps[SB_COLL_COPY] = SB_DEFAULT_COPY_GBPS;
    c->default_ranks = SB_DEFAULT_RANKS;
    sb_roofline_h100(&c->roof);
    c->nccl.gpu = SB_GPU_HOPPER;
    c->nccl.intra_node_gbps = NAN;
    c->nccl.inter_node_gbps = NAN;
    c->nccl.gpus_per_node = 8;
    c->nccl.nvlink = 1;
}

void sb_roofline_h100(struct sb_roofline *r)
{
    memset(r, 0, sizeof *r);
    r->peak_tflops[SB_DTYPE_FP32] = H100_PEAK_FP32;
    r->peak_tflops[SB_DTYPE_TF32] = H100_PEAK_TF32;
    r->peak_tflops[SB_DTYPE_BF16] = H100_PEAK_BF16;
    r->peak_tflops[SB_DTYPE_FP16] = H100_PEAK_BF16;
    r->peak_tflops[SB_DTYPE_FP8] = H100_PEAK_FP8;
    r->peak_tflops[SB_DTYPE_INT8] = H100_PEAK_FP8;
    r->peak_tflops[SB_DTYPE_FP64] = H100_PEAK_FP64;
    r->hbm_gbps = H100_HBM_GBPS;
    r->launch_us = ROOFLINE_LAUNCH_US;
}

int sb_roofline_parts(const struct sb_roofline *r, const struct sb_graph *g, uint32_t v,
                      double *compute_us, double *memory_us)
{
    if (!g->dtype || !g->dtype[v])
        return -1;
    double f = g->flops[v], b = g->bytes_accessed[v];
    double peak = r->peak_tflops[g->dtype[v]];
    if (!(peak > 0)) /* a unit the device lacks runs at its FP32 rate */
        peak = r->peak_tflops[SB_DTYPE_FP32];
    /* TFLOP/s = 1e6 FLOP per microsecond; GB/s = 1e3 bytes per microsecond */
    *compute_us = peak > 0 && f > 0 ? f / (peak * 1e6) : 0;
    *memory_us = r->hbm_gbps > 0 && b > 0 ? b / (r->hbm_gbps * 1e3) : 0;
    return 0;
}

double sb_roofline_us(const struct sb_roofline *r, const struct sb_graph *g, uint32_t v)
{
    double t_f, t_b;
    if (sb_roofline_parts(r, g, v, &t_f, &t_b))
        return -1;
    if (g->flops[v] <= 0 && g->bytes_accessed[v] <= 0)
        return 0; /* no work (an unknown custom-call): no launch either */
    double lo = t_f < t_b ? t_f : t_b;
    double t = (t_f > t_b ? t_f : t_b) + r->serial_frac * lo + r->launch_us;
    return t < 1e12 ? t : 1e12; /* SB_MAX_COST_US (builder.h) */
}

/* ---- --cost key=value,... ------------------------------------------------
 * Every value is read whole and strictly (num.h) and within its ceiling, so
 * that no collective or roofline time the model derives is infinite
 * (docs/cost-model.md, "Ranges"). */

/* A bandwidth as a person writes it: GB/s, or with a unit (400Gbps, 50GB/s,
 * 1.6TB/s); in SB_MIN_GBPS .. SB_MAX_GBPS (40e9 is bytes/s given where GB/s
 * are expected, and refused with the range). */
static int parse_bandwidth(const char *key, const char *val, double *out, struct sb_err *e)
{
    static const struct {
        const char *suffix;
        double gb_per_s;
    } units[] = {{"GB/s", 1},   {"GBps", 1},       {"Gbps", 0.125}, {"Gb/s", 0.125},
                 {"TB/s", 1000}, {"MB/s", 0.001},  {"Tbps", 125},   {"Mbps", 0.000125}};
    size_t n = strlen(val), k = 0, len = n;
    for (; k < sizeof units / sizeof units[0]; k++) {
        size_t u = strlen(units[k].suffix);
        if (n > u && !strcmp(val + n - u, units[k].suffix)) {
            len = n - u;
            break;
        }
    }
    double per = k < sizeof units / sizeof units[0] ? units[k].gb_per_s : 1, x;
    char *num = sb_xstrdup(val);
    num[len] = 0;
    const char *why;
    int rc = sb_num_real(num, 0, HUGE_VAL, &x, &why);
    free(num);
    if (rc)
        return sb_errf(e, "cost parameter %s: '%s' is not a bandwidth: GB/s, or with a unit: "
                          "400Gbps, 50GB/s, 1.6TB/s (%s)", key, val, why);
    double gbs = x * per;
    if (!(gbs >= SB_MIN_GBPS && gbs <= SB_MAX_GBPS))
        return sb_errf(e, "cost parameter %s=%s is %.3g GB/s, outside 0.001 .. 100000 GB/s%s",
                       key, val, gbs,
                       per == 1 && len == n ? " (a bare number is GB/s: 40e9 bytes/s is 40, "
                                              "or 320Gbps)" : "");
    *out = gbs;
    return 0;
}

/* bw_gbps is the network's bus bandwidth: host transfers cross PCIe and a
 * copy stays in HBM, each with its own default and its own bw_<coll> key. */
static int is_network(int t)
{
    return t != SB_COLL_SEND_HOST && t != SB_COLL_RECV_HOST && t != SB_COLL_COPY;
}

/* One of the words of `choices` ("a|b|c"): its index, or -1. */
static int word_index(const char *choices, const char *val)
{
    int k = 0;
    for (const char *p = choices;; k++) {
        size_t len = strcspn(p, "|");
        if (strlen(val) == len && !strncmp(p, val, len))
            return k;
        if (!p[len])
            return -1;
        p += len + 1;
    }
}

/* The keys of Inductor's estimators (struct sb_nccl_params); 1 when key is
 * not one of them. */
static int nccl_set(struct sb_nccl_params *n, const char *key, const char *val,
                    struct sb_err *e)
{
    static const struct {
        const char *key, *choices;
        size_t off;
    } words[] = {{"gpu", "volta|ampere|hopper|blackwell", offsetof(struct sb_nccl_params, gpu)},
                 {"nccl_bytes", "input|tensor|fx", offsetof(struct sb_nccl_params, bytes_mode)},
                 {"nvlink", "0|1", offsetof(struct sb_nccl_params, nvlink)}};
    for (size_t k = 0; k < sizeof words / sizeof words[0]; k++) {
        if (strcmp(key, words[k].key))
            continue;
        int i = word_index(words[k].choices, val);
        if (i < 0)
            return sb_errf(e, "cost parameter %s: '%s' is not one of %s", key, val,
                           words[k].choices);
        *(uint32_t *)((char *)n + words[k].off) = (uint32_t)i;
        return 0;
    }
    if (!strcmp(key, "intra_node_bw"))
        return parse_bandwidth(key, val, &n->intra_node_gbps, e);
    if (!strcmp(key, "inter_node_bw"))
        return parse_bandwidth(key, val, &n->inter_node_gbps, e);
    int per_node = !strcmp(key, "gpus_per_node");
    if (per_node || !strcmp(key, "nccl_channels")) {
        uint64_t v;
        const char *why;
        if (sb_num_u64(val, 1, 1024, &v, &why))
            return sb_errf(e, "cost parameter %s: '%s' is not an integer in 1..1024 (%s)", key,
                           val, why);
        *(per_node ? &n->gpus_per_node : &n->channels) = (uint32_t)v;
        return 0;
    }
    return 1;
}

static int cost_set(struct sb_cost_params *c, const char *key, const char *val,
                    struct sb_err *e)
{
    int rc = nccl_set(&c->nccl, key, val, e);
    if (rc <= 0)
        return rc;
    double v = 0;
    const char *why;
    enum sb_coll t;
    if (strcmp(key, "lat_us") == 0 || strcmp(key, "launch_us") == 0) {
        if (sb_num_real(val, 0, SB_MAX_TIME_US, &v, &why))
            return sb_errf(e, "cost parameter %s: '%s' is not a time in 0..10^12 us (%s)", key,
                           val, why);
        *(strcmp(key, "lat_us") == 0 ? &c->step_lat_us : &c->roof.launch_us) = v;
        return 0;
    }
    if (strcmp(key, "hbm_gbps") == 0)
        return parse_bandwidth(key, val, &c->roof.hbm_gbps, e);
    if (strcmp(key, "mem_compute_overlap") == 0) {
        if (sb_num_real(val, 0, 1, &v, &why))
            return sb_errf(e, "cost parameter mem_compute_overlap: '%s' is not a fraction in "
                              "0..1 (%s)", val, why);
        c->roof.serial_frac = 1 - v;
        return 0;
    }
    if (strcmp(key, "roofline") == 0) { /* XLA's GpuPerformanceModel, or the plain one */
        if (strcmp(val, "xla") && strcmp(val, "max"))
            return sb_errf(e, "cost parameter roofline: '%s' is max or xla", val);
        c->roof.serial_frac = strcmp(val, "xla") ? 0 : 1 - XLA_MEM_COMPUTE_PARALLELISM;
        c->roof.launch_us = strcmp(val, "xla") ? ROOFLINE_LAUNCH_US : XLA_KERNEL_LAUNCH_US;
        return 0;
    }
    if (strncmp(key, "peak_", 5) == 0) { /* peak_<dtype>: TFLOP/s; 0: the device lacks it */
        enum sb_dtype d;
        if (sb_dtype_parse(key + 5, &d))
            return sb_errf(e, "cost parameter %s: unknown dtype (fp32, tf32, bf16, fp16, "
                              "fp8, int8, fp64)", key);
        if (sb_num_real(val, 0, SB_MAX_TFLOPS, &v, &why) || (v > 0 && v < SB_MIN_TFLOPS))
            return sb_errf(e, "cost parameter %s: '%s' is not 0 or a rate in 1e-06..1e+06 "
                              "TFLOP/s (%s)", key, val, v > 0 ? "below the minimum" : why);
        c->roof.peak_tflops[d] = v;
        return 0;
    }
    if (strcmp(key, "ranks") == 0) {
        uint64_t r;
        if (sb_num_u64(val, 1, UINT32_MAX, &r, &why))
            return sb_errf(e, "cost parameter ranks: '%s' is not an integer in 1..4294967295 "
                              "(%s)", val, why);
        c->default_ranks = (uint32_t)r;
        return 0;
    }
    if (strcmp(key, "bw_gbps") == 0) {
        if (parse_bandwidth(key, val, &v, e))
            return -1;
        for (int k = 1; k < SB_COLL_COUNT; k++)
            if (is_network(k) && !(c->bw_typed & (1u << k)))
                c->bus_gbps[k] = v;
        return 0;
    }
    if (strncmp(key, "bw_", 3) == 0 && sb_coll_parse(key + 3, &t) == 0) {
        if (parse_bandwidth(key, val, &c->bus_gbps[t], e))
            return -1;
        c->bw_typed |= 1u << t;
        return 0;
    }
    return sb_errf(e, "unknown cost parameter '%s' (known: lat_us, bw_gbps, "
                      "bw_<coll>, ranks, peak_<dtype>, hbm_gbps, launch_us, "
                      "mem_compute_overlap, roofline; with --comm inductor-*: gpu, "
                      "intra_node_bw, inter_node_bw, gpus_per_node, nvlink, nccl_channels, "
                      "nccl_bytes)", key);
}

/* "key=value,key=value": every piece whole, however long (the pieces are
 * cut from a copy of the spec, never into a fixed buffer), and each key once:
 * "lat_us=1,lat_us=2" is refused, not read as whichever came last. */
int sb_cost_parse(struct sb_cost_params *c, const char *spec, struct sb_err *e)
{
    char *dup = sb_xstrdup(spec), *save = NULL;
    const char **seen = sb_xcalloc(strlen(spec) / 2 + 2, sizeof *seen);
    uint32_t n_seen = 0;
    int rc = 0;
    for (char *kv = strtok_r(dup, ",", &save); kv && !rc;
         kv = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(kv, '=');
        if (!eq) {
            rc = sb_errf(e, "cost parameter '%s' is not key=value", kv);
            break;
        }
        *eq = 0;
        for (uint32_t i = 0; i < n_seen && !rc; i++)
            if (!strcmp(seen[i], kv))
                rc = sb_errf(e, "cost parameter %s given twice", kv);
        seen[n_seen++] = kv;
        if (!rc && strcmp(kv, "roofline")) /* after the loop: see below */
            rc = cost_set(c, kv, eq + 1, e);
    }
    /* roofline=xla sets the combination and XLA's 1 us launch; a launch_us or
     * mem_compute_overlap beside it wins, in either order */
    for (uint32_t i = 0; i < n_seen && !rc; i++)
        if (!strcmp(seen[i], "roofline")) {
            struct sb_roofline keep = c->roof;
            rc = cost_set(c, seen[i], seen[i] + strlen(seen[i]) + 1, e);
            for (uint32_t j = 0; j < n_seen && !rc; j++) {
                if (!strcmp(seen[j], "launch_us"))
                    c->roof.launch_us = keep.launch_us;
                if (!strcmp(seen[j], "mem_compute_overlap"))
                    c->roof.serial_frac = keep.serial_frac;
            }
        }
    free(seen);
    free(dup);
    return rc;
}

static double ring_us(const struct sb_cost_params *c, enum sb_coll t, uint64_t bytes,
                      uint32_t p)
{
    double steps, moved = (double)bytes;
    switch (t) {
    case SB_COLL_ALL_REDUCE:
        if (p <= 1)
            return 0;
        steps = 2.0 * (p - 1);
        moved *= 2.0 * (p - 1) / p;
        break;
    case SB_COLL_ALL_GATHER:
    case SB_COLL_REDUCE_SCATTER:
    case SB_COLL_ALL_TO_ALL:
    case SB_COLL_RAGGED_ALL_TO_ALL: /* comm_bytes is its output buffer: an upper bound */
        if (p <= 1)
            return 0;
        steps = p - 1.0;
        moved *= (p - 1.0) / p;
        break;
    case SB_COLL_COLLECTIVE_BROADCAST:
        /* a pipelined ring from the root: every rank but the root receives
         * the whole buffer once (NCCL's bus bandwidth of a broadcast is its
         * algorithm bandwidth), through p - 1 hops */
        if (p <= 1)
            return 0;
        steps = p - 1.0;
        break;
    default: /* permute, send, recv, host transfers, copy: one hop */
        steps = 1;
        break;
    }
    /* GB/s = 1e3 bytes per microsecond */
    return steps * c->step_lat_us + moved / (c->bus_gbps[t] * 1e3);
}

/* A start's group: its own size, else the run's default. */
static uint32_t group_of(const struct sb_cost_params *c, const struct sb_graph_view *g,
                         uint32_t v)
{
    return g->group_size[v] ? g->group_size[v] : c->default_ranks;
}

double sb_cost_coll_us(const struct sb_cost_params *c, const struct sb_graph_view *g,
                       uint32_t i)
{
    if (c->model == SB_COST_APPROX)
        return APPROX_HIGH_LATENCY;
    if (g->comm_us[i] >= 0)
        return g->comm_us[i];
    return ring_us(c, (enum sb_coll)g->coll[i], g->comm_bytes[i], group_of(c, g, i));
}

/* ---- buckets ------------------------------------------------------------- */


double sb_cost_bucket_us(const struct sb_cost_params *c, const struct sb_graph_view *g,
                         const uint32_t *members, uint32_t n)
{
    if (c->model == SB_COST_APPROX)
        return APPROX_HIGH_LATENCY; /* one collective, one kHighLatency */
    uint64_t bytes = 0;
    double given_us = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (g->comm_us[members[i]] >= 0)
            given_us += g->comm_us[members[i]];
        else
            bytes += g->comm_bytes[members[i]];
    }
    if (bytes == 0 && given_us > 0)
        return given_us;
    uint32_t p = group_of(c, g, members[0]);
    return given_us + ring_us(c, (enum sb_coll)g->coll[members[0]], bytes, p);
}

void sb_bucket_copy_bytes(const struct sb_graph_view *g, uint32_t ranks, const uint32_t *members,
                          uint32_t n, uint64_t *in_bytes, uint64_t *out_bytes)
{
    *in_bytes = *out_bytes = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t v = members[i], p = g->group_size[v] ? g->group_size[v] : ranks;
        uint64_t full = g->comm_bytes[v];
        if (g->coll[v] == SB_COLL_ALL_GATHER) {
            *in_bytes += full / p;
            *out_bytes += full;
        } else {
            *in_bytes += full;
        }
    }
}

double sb_cost_bucket_copy_us(const struct sb_cost_params *c, const struct sb_graph_view *g,
                              const uint32_t *members, uint32_t n)
{
    if (c->model == SB_COST_APPROX)
        return 0; /* XLA's estimator has no copies */
    uint64_t in, out;
    sb_bucket_copy_bytes(g, c->default_ranks, members, n, &in, &out);
    /* GB/s = 1e3 bytes per microsecond */
    return (double)(in + out) / (c->bus_gbps[SB_COLL_COPY] * 1e3);
}

uint64_t sb_bucket_staging_bytes(const struct sb_graph_view *g, uint32_t ranks,
                                 const uint32_t *members, uint32_t n)
{
    uint64_t bytes = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t v = members[i], p = g->group_size[v] ? g->group_size[v] : ranks;
        bytes += g->comm_bytes[v];
        if (g->coll[v] == SB_COLL_REDUCE_SCATTER)
            bytes += g->comm_bytes[v] / p;
    }
    return bytes;
}

static double approx_node_cost(const struct sb_graph_view *g, uint32_t i)
{
    const char *op = g->op_names[g->op[i]];
    if (strcmp(op, "loop_fusion") == 0)
        return APPROX_MEDIUM_COST;
    if (strcmp(op, "output_fusion") == 0 || strcmp(op, "convolution") == 0)
        return APPROX_HIGH_COST;
    return APPROX_LOW_COST;
}

uint32_t sb_cost_ranks(const struct sb_cost_params *c, const struct sb_graph *g)
{
    const char *ranks = sb_graph_meta(g, "ranks");
    uint64_t r;
    char *end;
    /* a graph's own "# ranks=" beats the global default group size */
    if (ranks && (r = strtoull(ranks, &end, 10)) >= 1 && !*end && r <= UINT32_MAX)
        return (uint32_t)r;
    return c->default_ranks;
}

void sb_cost_apply(const struct sb_cost_params *c, struct sb_graph *g)
{
    struct sb_cost_params local = *c;
    local.default_ranks = sb_cost_ranks(c, g);
    g->v.edge_lat_us = sb_cost_edge_lat(c);
    for (uint32_t i = 0; i < g->v.n_nodes; i++) {
        switch (g->kind[i]) {
        case SB_KIND_COMPUTE:
            if (c->model == SB_COST_APPROX)
                g->dur_us[i] = approx_node_cost(&g->v, i);
            else if (g->cost_us[i] == 0 && g->dtype && g->dtype[i])
                g->dur_us[i] = sb_roofline_us(&c->roof, g, i); /* roofline */
            else
                g->dur_us[i] = g->cost_us[i];
            break;
        case SB_KIND_START:
            g->dur_us[i] = sb_cost_coll_us(&local, &g->v, i);
            break;
        default:
            g->dur_us[i] = 0;
        }
    }
}

double sb_cost_edge_lat(const struct sb_cost_params *c)
{
    return c->model == SB_COST_APPROX ? 1.0 : 0.0; /* XLA kLowLatency */
}

void sb_cost_describe(const struct sb_cost_params *c, char *buf, size_t n)
{
    size_t len = 0;
    buf[0] = 0;
    if (c->model == SB_COST_APPROX || n == 0)
        return;
    double net = c->bus_gbps[SB_COLL_ALL_REDUCE]; /* bw_gbps sets every network type */
    len += (size_t)snprintf(buf + len, n - len, "lat_us=%.17g;bw_gbps=%.17g", c->step_lat_us,
                            net);
    for (int t = 1; t < SB_COLL_COUNT && len < n; t++)
        if (c->bus_gbps[t] != net)
            len += (size_t)snprintf(buf + len, n - len, ";bw_%s=%.17g",
                                    sb_coll_name((enum sb_coll)t), c->bus_gbps[t]);
    if (len < n)
        len += (size_t)snprintf(buf + len, n - len, ";ranks=%u", c->default_ranks);
    if (len < n && c->roof.serial_frac != 0) /* only off the default: old rows stay */
        snprintf(buf + len, n - len, ";mem_compute_overlap=%.17g", 1 - c->roof.serial_frac);
}
