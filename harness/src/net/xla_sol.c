/* XLA GPU's speed-of-light (SoL) collective model, `--comm xla-sol`
 * (docs/cost-model.md).  Read at ROCm/xla 183fa00cb5d82384463a1a7aed1ab06bc9026974:
 * xla/service/gpu/model/sol_gpu_cost_model.cc (RingLatency, AllToAllLatency),
 * sol_latency_estimator.cc (DCNCollectiveDuration, DispatchEstimation,
 * ComputeCollectiveTime, IsSupportedForModule) and
 * xla/backends/gpu/transforms/collectives/collective_ops_utils.cc
 * (CommunicationType).  XLA keeps its constants and parameters in floats in
 * places; where that decides a microsecond the same float steps are taken
 * here, and said so. */
#define _POSIX_C_SOURCE 200809L
#include "xla_sol.h"
#include "core/num.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* sol_gpu_cost_model.cc kHeaderOverhead: 2.5% of every transfer */
#define SOL_HEADER_OVERHEAD 0.025
/* collective_utils.h kDefaultNcclCostModelCoeff (a float) and
 * kDefaultNcclCostModelChunkSizeBytes */
#define SOL_COEFF 0.45f
#define SOL_CHUNK_BYTES 4194304u
/* gpu_performance_model_base.h kNcclKernelLaunchOverhead: what XLA charges a
 * collective DCNCollectiveDuration has no formula for */
#define SOL_NCCL_LAUNCH_US 5.0
/* gpu_hlo_cost_analysis.cc kDefaultFlopsPerElement: an element-wise op
 * without a measured profile (bf16 add has none in hlo_op_profiles_data.h) */
#define SOL_FLOPS_PER_ELEMENT 3.0

enum { K_LAUNCH, K_NIC, K_PREP, K_RTT, K_GPN, K_CHUNK, K_PART, K_PRESET, K_COUNT };
static const char *const key_name[K_COUNT] = {
    "nccl_op_launch_us", "nic_speed_gbps", "chunk_prep_us", "rtt_us",
    "gpus_per_node", "chunk_size_bytes", "partition_size", "preset",
};

/* device_to_cfg: each figure a float product with the 0.45f coefficient, as
 * XLA computes it (100.0f * 0.45f is 45 exactly; 111.12f * 0.45f is not
 * 50.004). */
int sb_sol_preset(struct sb_sol_config *c, const char *name)
{
    float nic, prep, rtt;
    double barrier_us = 1.5;
    if (!strcmp(name, "h100")) {
        nic = 55.56f, prep = 13.34f, rtt = 68.89f;
    } else if (!strcmp(name, "b200")) {
        nic = 111.12f, prep = 4.45f, rtt = 46.67f, barrier_us = 1;
    } else if (!strcmp(name, "unknown")) {
        nic = 111.12f, prep = 13.34f, rtt = 68.89f;
    } else {
        return -1;
    }
    uint32_t given = c->given;
    *c = (struct sb_sol_config){
        .nccl_op_launch_us = (double)(100.0f * SOL_COEFF),
        .nic_speed_gbps = (double)(nic * SOL_COEFF),
        .chunk_prep_us = (double)(prep * SOL_COEFF),
        .rtt_us = (double)(rtt * SOL_COEFF),
        .gpus_per_node = 8,
        .chunk_size_bytes = SOL_CHUNK_BYTES,
        .partition_size = 0,
        .nvlink_barrier_us = barrier_us,
        .given = given,
    };
    return 0;
}

uint32_t sb_sol_partition(const struct sb_sol_config *c)
{
    return c->partition_size ? c->partition_size : c->gpus_per_node;
}

/* TransferDuration, in us: bytes over the NIC plus the header overhead. */
static double transfer_us(const struct sb_sol_config *c, uint64_t bytes)
{
    long double us = (1e6L * (long double)bytes) / (1e9L * c->nic_speed_gbps);
    return (double)(us * (1 + SOL_HEADER_OVERHEAD));
}

static double chunk_prep_us(const struct sb_sol_config *c, uint64_t bytes)
{
    return ceil((double)bytes / (double)c->chunk_size_bytes) * c->chunk_prep_us;
}

enum ring_type { RING_AG, RING_AR, RING_RS, RING_SENDRECV };

/* NumGpusPerComm: 2 for a send/recv; else the nodes' GPUs split among the
 * communicators, which must divide gpus_per_node. */
static int gpus_per_comm(const struct sb_sol_config *c, uint32_t nodes, int sendrecv,
                         uint32_t n_comm, uint64_t *out, char *why, size_t n_why)
{
    if (sendrecv) {
        *out = 2;
        return 0;
    }
    if (!n_comm || c->gpus_per_node % n_comm) {
        snprintf(why, n_why, "%u communicators do not divide gpus_per_node %u", n_comm,
                 c->gpus_per_node);
        return -1;
    }
    *out = (uint64_t)nodes * c->gpus_per_node / n_comm;
    return 0;
}

/* RingLatency: every piece crosses a NIC with its chunk preparation and a
 * round trip; num_gpus - 1 pieces shared by the node's NICs; all-reduce is
 * two rounds (a reduce-scatter then an all-gather). */
static int ring_us(const struct sb_sol_config *c, uint64_t bytes, uint32_t nodes,
                   enum ring_type t, uint32_t n_comm, double *us, char *why, size_t n_why)
{
    uint64_t n_gpus;
    if (gpus_per_comm(c, nodes, t == RING_SENDRECV, n_comm, &n_gpus, why, n_why))
        return -1;
    uint64_t per_gpu = t == RING_SENDRECV ? bytes : bytes / n_gpus;
    uint64_t per_node = n_gpus / nodes;
    if (!per_node) {
        snprintf(why, n_why, "%llu GPUs over %u nodes", (unsigned long long)n_gpus, nodes);
        return -1;
    }
    double piece = transfer_us(c, per_gpu) + chunk_prep_us(c, per_gpu) + c->rtt_us;
    double t_us = piece * ((double)n_gpus - 1.0) / (double)per_node;
    *us = t_us * (t == RING_AR ? 2 : 1) + c->nccl_op_launch_us;
    return 0;
}

/* AllToAllLatency: each GPU sends bytes / (num_gpus - 1) to every peer off
 * its node, one after the other. */
static int all_to_all_us(const struct sb_sol_config *c, uint64_t bytes, uint32_t nodes,
                         uint32_t n_comm, double *us, char *why, size_t n_why)
{
    uint64_t n_gpus;
    if (gpus_per_comm(c, nodes, 0, n_comm, &n_gpus, why, n_why))
        return -1;
    if (n_gpus < 2 || !nodes) {
        snprintf(why, n_why, "an all-to-all of %llu GPUs", (unsigned long long)n_gpus);
        return -1;
    }
    uint64_t per_node = n_gpus / nodes;
    uint64_t peers = per_node * (nodes - 1);
    uint64_t per_peer = bytes / (n_gpus - 1);
    double piece = transfer_us(c, per_peer) + chunk_prep_us(c, per_peer) + c->rtt_us;
    *us = (double)peers * piece + c->nccl_op_launch_us;
    return 0;
}

/* DCNCollectiveDuration: HBM time for the bytes the collective touches
 * (float arithmetic, as XLA's 1.0f * bytes / bandwidth), the reduction's
 * compute time for all-reduce and reduce-scatter (ComputeTime: float flops
 * over the device's flop/ns), then the network formula. */
static enum sb_sol_verdict dcn_us(const struct sb_sol_config *c, const struct sb_sol_device *d,
                                  const struct sb_sol_coll *x, uint32_t hosts, uint32_t n_comm,
                                  double *us, char *why, size_t n_why)
{
    float hbm_s = (float)x->bytes_accessed / (float)d->memory_bytes_per_s;
    double t = (double)hbm_s * 1e6, net = 0;
    float compute_ns = (float)x->reduce_flops / (float)(int64_t)d->flop_per_ns;
    int rc = 0;
    switch (x->op) {
    case SB_SOL_ALL_GATHER:
        if (x->async_wrapped)
            break; /* kAsyncStart wraps only RS and A2A in the switch */
        rc = ring_us(c, x->bytes_transferred, hosts, RING_AG, n_comm, &net, why, n_why);
        break;
    case SB_SOL_ALL_TO_ALL:
        rc = all_to_all_us(c, x->bytes_transferred, hosts, n_comm, &net, why, n_why);
        break;
    case SB_SOL_ALL_REDUCE:
        if (x->async_wrapped)
            break;
        t += (double)compute_ns / 1000;
        rc = ring_us(c, x->bytes_transferred, hosts, RING_AR, n_comm, &net, why, n_why);
        break;
    case SB_SOL_REDUCE_SCATTER:
        t += (double)compute_ns / 1000;
        rc = ring_us(c, x->bytes_transferred, hosts, RING_RS, n_comm, &net, why, n_why);
        break;
    case SB_SOL_COLLECTIVE_PERMUTE:
        if (x->async_wrapped)
            break;
        rc = ring_us(c, x->bytes_transferred, hosts, RING_SENDRECV, n_comm, &net, why, n_why);
        break;
    default:
        net = x->async_wrapped ? 0 : SOL_NCCL_LAUNCH_US;
        break;
    }
    if (rc)
        return SB_SOL_ERROR;
    *us = t + net;
    return SB_SOL_PRICED;
}

/* all_reduce.cc kMaxOneShotAllReduceSizeBytes: larger buffers take two shots */
#define SOL_MAX_ONE_SHOT_BYTES (256u * 1024u)
/* gpu_performance_model_base.h kKernelLaunchOverhead */
#define SOL_KERNEL_LAUNCH_US 1.0

/* IntraNodeAllReduceLatency, plus the HBM time DispatchEstimation adds: a
 * one-shot kernel reads the other n - 1 buffers whole over the GPU's NVLink
 * lanes, then one barrier; a two-shot kernel reads (n - 1)/n of the buffer
 * twice (reduce-scatter, all-gather), a barrier after each. */
static enum sb_sol_verdict intra_all_reduce_us(const struct sb_sol_config *c,
                                               const struct sb_sol_device *d,
                                               const struct sb_sol_coll *x, double *us,
                                               char *why, size_t n_why)
{
    if (!x->active_links || !(c->nvlink_bw_per_lane_gbps > 0)) {
        snprintf(why, n_why, "an intra-node Triton all-reduce needs active NVLink links and "
                             "nvlink_bw_per_lane_gbps");
        return SB_SOL_ERROR;
    }
    double bw_bytes_per_us = x->active_links * c->nvlink_bw_per_lane_gbps * 1e3;
    double n = x->group_size, size = (double)x->bytes_transferred, t;
    if (x->bytes_transferred <= SOL_MAX_ONE_SHOT_BYTES)
        t = SOL_KERNEL_LAUNCH_US + (n - 1) * size / bw_bytes_per_us + c->nvlink_barrier_us;
    else
        t = SOL_KERNEL_LAUNCH_US +
            2 * ((n - 1) * size / n / bw_bytes_per_us + c->nvlink_barrier_us);
    float hbm_s = (float)x->bytes_accessed / (float)d->memory_bytes_per_s;
    *us = (double)hbm_s * 1e6 + t;
    return SB_SOL_PRICED;
}

enum sb_sol_verdict sb_sol_collective_us(const struct sb_sol_config *c,
                                         const struct sb_sol_device *d,
                                         const struct sb_sol_coll *x, double *us, char *why,
                                         size_t n_why)
{
    uint32_t part = sb_sol_partition(c);
    *us = 0;
    if (x->op == SB_SOL_NOT_COLLECTIVE) {
        snprintf(why, n_why, "not a collective instruction: XLA uses the wrapped estimator");
        return SB_SOL_UNSUPPORTED;
    }
    if (x->op == SB_SOL_COLLECTIVE_PERMUTE) {
        /* inter-partition pairs: priced as one send/recv between 2 hosts */
        if (x->comm == SB_SOL_SINGLE_PARTITION) {
            snprintf(why, n_why, "intra-partition collective-permute: XLA prices it with "
                                 "CollectiveInterpolator's measured NCCL table");
            return SB_SOL_INTERPOLATOR;
        }
        return dcn_us(c, d, x, 2, 1, us, why, n_why);
    }
    switch (x->comm) {
    case SB_SOL_WORLD:
        return dcn_us(c, d, x, x->group_size / part, x->n_groups, us, why, n_why);
    case SB_SOL_NON_WORLD:
        return dcn_us(c, d, x, x->group_size, x->n_groups, us, why, n_why);
    default:
        if (x->triton_kernel) /* XLA's own NVLink kernels, not NCCL */
            return intra_all_reduce_us(c, d, x, us, why, n_why);
        snprintf(why, n_why, "single-partition collective: XLA prices it with "
                             "CollectiveInterpolator's measured NCCL table");
        return SB_SOL_INTERPOLATOR;
    }
}

/* CommunicationContext and IsSingleHost / IsWorldLevelCommunication: the
 * first group's count of members per partition decides, once every group
 * has the same counts (as a multiset). */
static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* Sorted counts of members per partition of one group into cnt[size]; the
 * number of partitions touched. */
static uint32_t partition_counts(uint32_t part, const uint32_t *ids, uint32_t size,
                                 uint32_t *key, uint32_t *cnt)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < size; i++) {
        uint32_t p = ids[i] / part, k = 0;
        while (k < n && key[k] != p)
            k++;
        if (k == n) {
            key[n] = p;
            cnt[n++] = 0;
        }
        cnt[k]++;
    }
    qsort(cnt, n, sizeof *cnt, cmp_u32);
    return n;
}

int sb_sol_classify(uint32_t part, const uint32_t *ids, uint32_t n_groups, uint32_t size,
                    enum sb_sol_comm *out, char *why, size_t n_why)
{
    if (!part || !n_groups || !size) {
        snprintf(why, n_why, "no groups");
        return -1;
    }
    uint32_t *buf = sb_xmalloc(4 * (size_t)size * sizeof *buf);
    uint32_t *key = buf, *cnt = buf + size, *first = buf + 2 * (size_t)size;
    uint32_t n_first = partition_counts(part, ids, size, key, first);
    int rc = 0;
    for (uint32_t g = 1; g < n_groups && !rc; g++) {
        uint32_t n = partition_counts(part, ids + (size_t)g * size, size, key, cnt);
        if (n != n_first || memcmp(cnt, first, n * sizeof *cnt)) {
            snprintf(why, n_why, "non homogenous replica groups: group %u", g);
            rc = -1;
        }
    }
    if (!rc) {
        int world = 1;
        for (uint32_t k = 0; k < n_first; k++)
            world &= first[k] == part;
        *out = n_first == 1 ? SB_SOL_SINGLE_PARTITION : world ? SB_SOL_WORLD : SB_SOL_NON_WORLD;
    }
    free(buf);
    return rc;
}

/* IsSupportedCollectiveOp and hlo_query::IsCollectiveCommunicationOp */
static int supported_op(const char *op)
{
    static const char *const ok[] = {"all-reduce-start", "all-reduce", "reduce-scatter",
                                     "all-gather-start", "all-to-all", "collective-permute-start",
                                     "collective-permute", "all-gather"};
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++)
        if (!strcmp(op, ok[i]))
            return 1;
    return 0;
}

static int collective_op(const char *op)
{
    static const char *const coll[] = {"all-reduce", "all-reduce-start", "all-gather",
                                       "all-gather-start", "all-to-all", "ragged-all-to-all",
                                       "reduce-scatter", "collective-broadcast",
                                       "collective-permute", "collective-permute-start"};
    for (size_t i = 0; i < sizeof coll / sizeof *coll; i++)
        if (!strcmp(op, coll[i]))
            return 1;
    return 0;
}

int sb_sol_enabled(int flag, int device_supported, int host_offloaded,
                   const char *const *opcodes, uint32_t n_opcodes)
{
    if (!flag || !device_supported || host_offloaded)
        return 0;
    for (uint32_t i = 0; i < n_opcodes; i++)
        if (collective_op(opcodes[i]) && !supported_op(opcodes[i]))
            return 0;
    return 1;
}

/* One sol_<key>=value of --cost. */
static int set_key(struct sb_sol_config *c, int k, const char *val, struct sb_err *e)
{
    const char *why = NULL;
    double v = 0;
    uint64_t u = 0;
    c->given |= 1u << k;
    switch (k) {
    case K_PRESET:
        if (sb_sol_preset(c, val))
            return sb_errf(e, "cost parameter sol_preset: '%s' is h100, b200 or unknown "
                              "(XLA's device_to_cfg)", val);
        return 0;
    case K_LAUNCH: case K_PREP: case K_RTT:
        if (sb_num_real(val, 0, SB_MAX_TIME_US, &v, &why))
            return sb_errf(e, "cost parameter sol_%s: '%s' is not a time in 0..10^12 us (%s)",
                           key_name[k], val, why);
        *(k == K_LAUNCH ? &c->nccl_op_launch_us : k == K_PREP ? &c->chunk_prep_us
                                                              : &c->rtt_us) = v;
        return 0;
    case K_NIC:
        if (sb_num_real(val, 0.001, 100000, &v, &why))
            return sb_errf(e, "cost parameter sol_nic_speed_gbps: '%s' is not GB/s in "
                              "0.001..100000 (%s)", val, why);
        c->nic_speed_gbps = v;
        return 0;
    case K_CHUNK:
        if (sb_num_u64(val, 1, UINT64_C(1) << 40, &u, &why))
            return sb_errf(e, "cost parameter sol_chunk_size_bytes: '%s' is not an integer "
                              "in 1..2^40 (%s)", val, why);
        c->chunk_size_bytes = u;
        return 0;
    default: /* gpus_per_node, partition_size */
        if (sb_num_u64(val, k == K_PART ? 0 : 1, 1u << 20, &u, &why))
            return sb_errf(e, "cost parameter sol_%s: '%s' is not an integer in %s..2^20 (%s)",
                           key_name[k], val, k == K_PART ? "0" : "1", why);
        *(k == K_GPN ? &c->gpus_per_node : &c->partition_size) = (uint32_t)u;
        return 0;
    }
}

/* The index of sol_<name> in key_name, K_COUNT when unknown. */
static int key_index(const char *kv)
{
    int k = 0;
    while (k < K_COUNT && strcmp(kv + 4, key_name[k]))
        k++;
    return k;
}

char *sb_sol_take_cost_keys(struct sb_sol_config *c, const char *spec, struct sb_err *e)
{
    char *dup = sb_xstrdup(spec), *rest = sb_xmalloc(strlen(spec) + 1), *save = NULL;
    const char *val[K_COUNT] = {0};
    size_t n_rest = 0;
    int rc = 0;
    rest[0] = 0;
    for (char *kv = strtok_r(dup, ",", &save); kv && !rc; kv = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(kv, '=');
        if (strncmp(kv, "sol_", 4) || !eq) { /* sb_cost_parse's, or its error */
            n_rest += (size_t)sprintf(rest + n_rest, "%s%s", n_rest ? "," : "", kv);
            continue;
        }
        *eq = 0;
        int k = key_index(kv);
        if (k == K_COUNT)
            rc = sb_errf(e, "unknown cost parameter '%s' (sol_nccl_op_launch_us, "
                            "sol_nic_speed_gbps, sol_chunk_prep_us, sol_rtt_us, "
                            "sol_gpus_per_node, sol_chunk_size_bytes, sol_partition_size, "
                            "sol_preset)", kv);
        else if (val[k])
            rc = sb_errf(e, "cost parameter %s given twice", kv);
        else
            val[k] = eq + 1;
    }
    /* the preset first, so that the keys beside it override it in any order */
    if (!rc && val[K_PRESET])
        rc = set_key(c, K_PRESET, val[K_PRESET], e);
    for (int k = 0; k < K_PRESET && !rc; k++)
        if (val[k])
            rc = set_key(c, k, val[k], e);
    free(dup);
    if (rc) {
        free(rest);
        return NULL;
    }
    return rest;
}

void sb_sol_describe(const struct sb_sol_config *c, char *buf, size_t n)
{
    snprintf(buf, n,
             "sol_nccl_op_launch_us=%.9g;sol_nic_speed_gbps=%.9g;sol_chunk_prep_us=%.9g;"
             "sol_rtt_us=%.9g;sol_gpus_per_node=%u;sol_chunk_size_bytes=%llu;"
             "sol_partition_size=%u",
             c->nccl_op_launch_us, c->nic_speed_gbps, c->chunk_prep_us, c->rtt_us,
             c->gpus_per_node, (unsigned long long)c->chunk_size_bytes, c->partition_size);
}

/* A graph start as XLA's cost analysis would see its instruction.  A graph
 * keeps a group's size, not its members: groups are taken as contiguous
 * blocks of ranks, one communicator (docs/cost-model.md). */
static int graph_coll(const struct sb_sol_config *c, const struct sb_graph *g, uint32_t v,
                      uint32_t p, struct sb_sol_coll *x)
{
    uint32_t part = sb_sol_partition(c);
    double n = (double)g->comm_bytes[v], rank = floor(n / p);
    *x = (struct sb_sol_coll){.group_size = p, .n_groups = 1,
                              .bytes_transferred = g->comm_bytes[v]};
    x->comm = p <= part ? SB_SOL_SINGLE_PARTITION : p % part == 0 ? SB_SOL_WORLD
                                                                  : SB_SOL_NON_WORLD;
    switch (g->coll[v]) {
    case SB_COLL_ALL_GATHER: /* HandleAllGatherStart */
        x->op = SB_SOL_ALL_GATHER;
        x->bytes_accessed = rank * (2.0 * p - 1) + rank * p;
        return 0;
    case SB_COLL_REDUCE_SCATTER: /* HandleReduceScatter; bf16 elements assumed */
        x->op = SB_SOL_REDUCE_SCATTER;
        x->async_wrapped = 1;
        x->bytes_accessed = rank * p + rank * (2.0 * p - 1);
        x->reduce_flops = SOL_FLOPS_PER_ELEMENT * floor(rank / 2);
        return 0;
    case SB_COLL_ALL_REDUCE: /* HandleAllReduceStart */
        x->op = SB_SOL_ALL_REDUCE;
        x->bytes_accessed = n;
        x->reduce_flops = SOL_FLOPS_PER_ELEMENT * floor(n / 2);
        return 0;
    case SB_COLL_ALL_TO_ALL: /* async-start: its operand and output tuple */
        x->op = SB_SOL_ALL_TO_ALL;
        x->async_wrapped = 1;
        x->bytes_accessed = 3 * n;
        return 0;
    case SB_COLL_COLLECTIVE_PERMUTE: /* operand plus the start's (in, out) */
        x->op = SB_SOL_COLLECTIVE_PERMUTE;
        x->bytes_accessed = 3 * n;
        return 0;
    default: /* send, recv, host transfers and copies: not SoL's */
        return -1;
    }
}

void sb_sol_apply(const struct sb_sol_config *c, double hbm_gbps, double fp32_tflops,
                  const struct sb_cost_params *cost, struct sb_graph *g)
{
    struct sb_sol_device d = {hbm_gbps * 1e9, floor(fp32_tflops * 1000)};
    uint32_t ranks = sb_cost_ranks(cost, g); /* the file's, else the default */
    for (uint32_t v = 0; v < g->v.n_nodes; v++) {
        if (g->kind[v] != SB_KIND_START || g->comm_us[v] >= 0)
            continue;
        uint32_t p = g->group_size[v] ? g->group_size[v] : ranks;
        struct sb_sol_coll x;
        double us;
        char why[160];
        if (p < 2 || graph_coll(c, g, v, p, &x))
            continue;
        if (sb_sol_collective_us(c, &d, &x, &us, why, sizeof why) == SB_SOL_PRICED)
            g->dur_us[v] = us;
    }
}
