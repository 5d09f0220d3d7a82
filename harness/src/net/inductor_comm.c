/* PyTorch Inductor's analytical NCCL estimators, written from
 * torch/_inductor/comm_analysis.py (docs/cost-model.md, "Inductor's
 * collective estimators", cites the versions and lines):
 *
 * classic  estimate_nccl_collective_runtime_impl as of
 *          pytorch/pytorch@b5ee4d7a: ring algorithm, LL protocol, two
 *          channels, bandwidths from torch._inductor.config (intra_node_bw =
 *          300, inter_node_bw = 25 GB/s); the llMaxBws rows of the later
 *          copies (Hopper 141/45/35, Blackwell 282/90/70; at b5ee4d7a the
 *          Hopper row repeated Ampere's, which gpu=ampere reproduces).
 * multi    the newest: the best of {tree (all_reduce only), ring} x {LL,
 *          LL128, Simple}, NCCL's tuning.cc tables, per-generation channels
 *          and bandwidths unless the config overrides them, and the IB
 *          corrections for more than one node.
 *
 * Both keep PyTorch's units: bytes over GiB against bandwidths in 1e9 B/s in
 * the classic, bytes over 1e3 * GB/s in the newest.  Nothing is tuned. */
#define _POSIX_C_SOURCE 200809L
#include "net/inductor_comm.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- NCCL's tuning tables as comm_analysis.py carries them ---------------- */

static const double base_lat_us[2][3] = {{6.8, 14.0, 8.4}, {6.6, 14.0, 8.4}}; /* [algo][proto] */
enum { HW_NVLINK, HW_PCI, HW_NET };
static const double hw_lat_us[3][2][3] = {
    {{0.6, 1.25, 4.0}, {0.6, 1.9, 3.4}}, /* NVLink */
    {{1.0, 1.9, 4.0}, {1.0, 2.5, 5.7}},  /* PCI */
    {{5.0, 8.5, 14.0}, {2.7, 4.0, 14.0}}, /* NET */
};
/* [gpu][nodes: 1, 2, more] */
static const double ll_max_bw[4][3] = {
    {39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {141.0, 45.0, 35.0}, {282.0, 90.0, 70.0}};
static const double per_ch_ring_ll128[4][3] = {
    {20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 36.7}, {40.0, 40.0, 40.0}};
static const double per_ch_tree_ll128[4][3] = {
    {20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 29.0}, {55.6, 31.67, 20.0}};
static const double per_ch_tree[4][3] = {
    {26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}, {70.0, 42.8, 24.0}};
/* [proto][log2(bytes >> 6)], 64 B .. 256 MiB */
static const double tree_correction[3][24] = {
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5,
     .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6,
     .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5,
     .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9, .9},
};
/* the newest model's per-generation defaults */
static const uint32_t gen_channels[4] = {2, 8, 16, 32};
static const double gen_nvlink_gbps[4] = {120.0, 240.0, 370.0, 720.0};
static const double gen_inter_gbps[4] = {12.0, 25.0, 50.0, 50.0};
#define PCIE_INTRA_GBPS 24.0
#define CLASSIC_INTRA_GBPS 300.0 /* torch._inductor.config.intra_node_bw */
#define CLASSIC_INTER_GBPS 25.0  /* torch._inductor.config.inter_node_bw */
#define CLASSIC_CHANNELS 2

static const char *const gpu_names[4] = {"volta", "ampere", "hopper", "blackwell"};

/* NCCL's log2i: floor(log2 n), 0 for n <= 0 */
static int log2i(uint64_t n)
{
    int r = 0;
    while (n > 1) {
        n >>= 1;
        r++;
    }
    return r;
}

static uint32_t gpu_of(const struct sb_nccl_params *p)
{
    return p->gpu < 4 ? p->gpu : SB_GPU_AMPERE; /* PyTorch's "assume Ampere" */
}

static uint32_t nodes_of(const struct sb_nccl_params *p, uint32_t group)
{
    uint32_t per = p->gpus_per_node ? p->gpus_per_node : 8;
    return (group + per - 1) / per;
}

static double nsteps_of(enum sb_nccl_coll coll, uint32_t n)
{
    switch (coll) {
    case SB_NCCL_ALL_REDUCE:
    case SB_NCCL_ALL_TO_ALL:
        return 2.0 * (n - 1);
    case SB_NCCL_ALL_GATHER:
    case SB_NCCL_REDUCE_SCATTER:
        return n - 1.0;
    case SB_NCCL_P2P:
        return 1;
    default:
        return -1;
    }
}

/* ---- classic: ring, LL -------------------------------------------------- */

static double classic_ms(const struct sb_nccl_params *p, enum sb_nccl_coll coll, uint64_t bytes,
                         uint32_t n)
{
    if (coll > SB_NCCL_ALL_TO_ALL)
        return 0; /* the classic raises for the rest; Inductor prices that 0 */
    uint32_t nodes = nodes_of(p, n), gpu = gpu_of(p);
    int index2 = nodes <= 2 ? (int)nodes - 1 : 2;
    /* LL: one node looks at the GPU, more at the CPU (row 0) */
    double ll_max = ll_max_bw[nodes == 1 ? gpu : 0][index2];
    double intra = isnan(p->intra_node_gbps) ? CLASSIC_INTRA_GBPS : p->intra_node_gbps;
    double inter = isnan(p->inter_node_gbps) ? CLASSIC_INTER_GBPS : p->inter_node_gbps;
    /* a synchronised ring runs at its slowest link: the network once it
     * leaves the node (PyTorch corrects tuning.cc's nNodes <= 2 here) */
    double bw = nodes == 1 ? intra : inter;
    double bus = (p->channels ? p->channels : CLASSIC_CHANNELS) * bw;
    bus *= (nodes > 1 || coll == SB_NCCL_ALL_REDUCE) ? 1.0 / 4.0 : 1.0 / 3.0;
    if (ll_max < bus)
        bus = ll_max;
    double nsteps = nsteps_of(coll, n);
    double alg_gb_per_ns = bus * n / nsteps / 1e9;
    double n_inter = coll == SB_NCCL_ALL_REDUCE ? (nodes > 1 ? 2.0 * nodes : 0) : nodes - 1.0;
    double intra_lat = hw_lat_us[HW_NVLINK][SB_NCCL_RING][SB_NCCL_LL];
    if (nodes > 1 && intra_lat < 1.0)
        intra_lat = 1.0; /* the net overhead of an inter-node ring */
    double lat_us = base_lat_us[SB_NCCL_RING][SB_NCCL_LL] + (nsteps - n_inter) * intra_lat +
                    n_inter * hw_lat_us[HW_NET][SB_NCCL_RING][SB_NCCL_LL];
    double gib = (double)bytes / 1024 / 1024 / 1024;
    return (gib / alg_gb_per_ns + lat_us * 1e3) / 1e6;
}

/* ---- newest: one (algo, proto) pair, in us; -1 when disabled ------------- */

struct topo {
    uint32_t n, nodes, gpu, channels;
    int index2, pcie;
    double intra_gbps, inter_gbps;
};

static struct topo topo_of(const struct sb_nccl_params *p, uint32_t n)
{
    struct topo t = {.n = n, .nodes = nodes_of(p, n), .gpu = gpu_of(p)};
    t.index2 = t.nodes <= 2 ? (int)t.nodes - 1 : 2;
    t.channels = p->channels ? p->channels : gen_channels[t.gpu];
    /* detect_interconnect: one node is NVLink (or PCIe without it), more
     * are InfiniBand for every generation (so "InfiniBand" below is nodes > 1) */
    t.pcie = t.nodes == 1 && !p->nvlink;
    t.intra_gbps = !isnan(p->intra_node_gbps) ? p->intra_node_gbps
                   : p->nvlink                ? gen_nvlink_gbps[t.gpu]
                                              : PCIE_INTRA_GBPS;
    t.inter_gbps = !isnan(p->inter_node_gbps) ? p->inter_node_gbps : gen_inter_gbps[t.gpu];
    return t;
}

static double bus_bw(const struct topo *t, enum sb_nccl_coll coll, int algo, int proto,
                     uint64_t bytes)
{
    double bw = t->nodes == 1 ? t->intra_gbps : t->inter_gbps;
    if (t->nodes > 1) { /* InfiniBand */
        double nodes_m1 = t->nodes - 1.0;
        bw *= 0.77 + 0.23 * (nodes_m1 / 7 < 1 ? nodes_m1 / 7 : 1); /* NIC efficiency */
        if (t->nodes > 2) /* multi-rail: a power law in the size */
            bw *= pow((bytes > 50000000 ? (double)bytes : 5e7) / 5e7, 0.17);
    }
    double ll_max = ll_max_bw[t->nodes == 1 ? t->gpu : 0][t->index2], cap;
    if (algo == SB_NCCL_RING && proto == SB_NCCL_LL)
        return fmin(ll_max, bw * 0.5);
    if (algo == SB_NCCL_RING && proto == SB_NCCL_LL128)
        return fmin(bw * 120.0 / 128.0, t->channels * per_ch_ring_ll128[t->gpu][t->index2]);
    if (algo == SB_NCCL_TREE && proto == SB_NCCL_LL)
        return fmin(bw / 3.8, ll_max);
    if (algo == SB_NCCL_TREE && proto == SB_NCCL_LL128) {
        cap = t->channels * per_ch_tree_ll128[t->gpu][t->index2];
        return fmin(bw * (t->nodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0), cap);
    }
    if (algo == SB_NCCL_TREE && coll == SB_NCCL_ALL_REDUCE)
        return fmin(bw * 0.92, t->channels * per_ch_tree[t->gpu][t->index2]);
    return bw; /* ring, Simple: no cap */
}

static double algo_time_us(const struct topo *t, enum sb_nccl_coll coll, int algo, int proto,
                           uint64_t bytes)
{
    /* LL128's tables are for NVLink: off across IB and beyond two nodes */
    if (proto == SB_NCCL_LL128 && t->nodes > 1)
        return -1;
    double bus = bus_bw(t, coll, algo, proto, bytes), nsteps = nsteps_of(coll, t->n);
    if (!(bus > 0) || nsteps < 0)
        return -1;
    double alg = algo == SB_NCCL_RING ? bus * t->n / nsteps : bus * 0.5;
    if (!(alg > 0))
        return -1;
    int hw = t->pcie ? HW_PCI : HW_NVLINK;
    double lat = base_lat_us[algo][proto], intra = hw_lat_us[hw][algo][proto];
    double inter = hw_lat_us[HW_NET][algo][proto];
    double net_overhead = t->nodes > 1 ? (proto == SB_NCCL_SIMPLE ? 3.0 : 1.0) : 0;
    if (intra < net_overhead)
        intra = net_overhead;
    if (algo == SB_NCCL_RING) {
        double n_inter = t->nodes == 1                  ? 0
                         : coll == SB_NCCL_ALL_REDUCE ? 2.0 * (t->nodes - 1)
                                                      : t->nodes - 1.0;
        lat += (nsteps - n_inter) * intra + n_inter * inter;
    } else if (coll == SB_NCCL_ALL_REDUCE) {
        lat += 2 * ((double)(t->n / t->nodes - 1) * intra + log2i(t->nodes) * inter);
        int log_size = bytes >= 64 ? log2i(bytes >> 6) : 0;
        if (log_size < 24)
            alg *= tree_correction[proto][log_size];
    }
    return lat + (double)bytes / (1000.0 * alg);
}

static double multi_ms(const struct sb_nccl_params *p, enum sb_nccl_coll coll, uint64_t bytes,
                       uint32_t n, struct sb_nccl_choice *ch)
{
    if (coll == SB_NCCL_UNSUPPORTED)
        return 0;
    struct topo t = topo_of(p, n);
    double best = INFINITY;
    /* tree first, as PyTorch iterates: a tie keeps the earlier pair */
    for (int algo = SB_NCCL_TREE; algo <= SB_NCCL_RING; algo++) {
        if (algo == SB_NCCL_TREE && coll != SB_NCCL_ALL_REDUCE)
            continue;
        for (int proto = SB_NCCL_LL; proto <= SB_NCCL_SIMPLE; proto++) {
            double us = algo_time_us(&t, coll, algo, proto, bytes);
            if (us >= 0 && us < best) {
                best = us;
                ch->algo = algo;
                ch->proto = proto;
            }
        }
    }
    return isinf(best) ? 0 : best / 1000.0;
}

double sb_inductor_coll_ms(enum sb_inductor_model m, const struct sb_nccl_params *p,
                           enum sb_nccl_coll coll, uint64_t bytes, uint32_t group,
                           struct sb_nccl_choice *ch)
{
    struct sb_nccl_choice local = {SB_NCCL_RING, SB_NCCL_LL};
    if (!ch)
        ch = &local;
    *ch = local;
    if (group <= 1)
        return 0;
    return m == SB_INDUCTOR_CLASSIC ? classic_ms(p, coll, bytes, group)
                                    : multi_ms(p, coll, bytes, group, ch);
}

enum sb_nccl_coll sb_inductor_coll_of(enum sb_inductor_model m, enum sb_coll t)
{
    switch (t) {
    case SB_COLL_ALL_REDUCE:
        return SB_NCCL_ALL_REDUCE;
    case SB_COLL_ALL_GATHER:
        return SB_NCCL_ALL_GATHER;
    case SB_COLL_REDUCE_SCATTER:
        return SB_NCCL_REDUCE_SCATTER;
    case SB_COLL_ALL_TO_ALL:
        return SB_NCCL_ALL_TO_ALL;
    case SB_COLL_SEND:
    case SB_COLL_RECV:
    case SB_COLL_COLLECTIVE_PERMUTE: /* isend/irecv/batch_p2p in the newest */
        return m == SB_INDUCTOR_MULTI ? SB_NCCL_P2P : SB_NCCL_UNSUPPORTED;
    default:
        return SB_NCCL_UNSUPPORTED;
    }
}

/* comm_bytes is the full tensor (docs/workload-format.md); Inductor's
 * scheduler IR passes its inputs (an all_gather's shard is 1/p of it), the
 * ATen-FX passes inputs plus outputs (estimate_fx_collective_size). */
static uint64_t estimator_bytes(uint32_t mode, enum sb_nccl_coll coll, uint64_t full,
                                uint32_t p)
{
    uint64_t shard = full / p;
    if (mode == SB_NCCL_BYTES_TENSOR)
        return full;
    if (mode == SB_NCCL_BYTES_INPUT)
        return coll == SB_NCCL_ALL_GATHER ? shard : full;
    switch (coll) {
    case SB_NCCL_ALL_GATHER:
    case SB_NCCL_REDUCE_SCATTER:
        return full + shard;
    case SB_NCCL_P2P:
        return full;
    default:
        return 2 * full;
    }
}

void sb_inductor_apply(enum sb_inductor_model m, const struct sb_cost_params *c,
                       struct sb_graph *g)
{
    uint32_t ranks = sb_cost_ranks(c, g);
    for (uint32_t i = 0; i < g->v.n_nodes; i++) {
        if (g->kind[i] != SB_KIND_START || g->comm_us[i] >= 0)
            continue;
        enum sb_nccl_coll coll = sb_inductor_coll_of(m, (enum sb_coll)g->coll[i]);
        if (coll == SB_NCCL_UNSUPPORTED)
            continue; /* not NCCL's: keeps the analytical price */
        uint32_t p = g->group_size[i] ? g->group_size[i] : ranks;
        uint64_t bytes = estimator_bytes(c->nccl.bytes_mode, coll, g->comm_bytes[i], p);
        g->dur_us[i] = 1e3 * sb_inductor_coll_ms(m, &c->nccl, coll, bytes, p, NULL);
    }
}

double sb_inductor_bucket_us(const void *ctx, const struct sb_graph_view *g, uint32_t ranks,
                             const uint32_t *members, uint32_t n)
{
    const struct sb_inductor_ctx *x = ctx;
    uint32_t v = members[0], p = g->group_size[v] ? g->group_size[v] : ranks;
    enum sb_nccl_coll coll = sb_inductor_coll_of(x->model, (enum sb_coll)g->coll[v]);
    struct sb_cost_params local = *x->cost;
    local.default_ranks = ranks;
    if (coll == SB_NCCL_UNSUPPORTED) /* not NCCL's: the analytical model's bucket */
        return sb_cost_bucket_us(&local, g, members, n);
    uint64_t bytes = 0;
    double given_us = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (g->comm_us[members[i]] >= 0)
            given_us += g->comm_us[members[i]];
        else
            bytes += estimator_bytes(x->cost->nccl.bytes_mode, coll, g->comm_bytes[members[i]], p);
    }
    if (bytes == 0 && given_us > 0)
        return given_us;
    return given_us + 1e3 * sb_inductor_coll_ms(x->model, &x->cost->nccl, coll, bytes, p, NULL);
}

void sb_inductor_describe(enum sb_inductor_model m, const struct sb_nccl_params *p, char *buf,
                          size_t n)
{
    static const char *const modes[] = {"input", "tensor", "fx"};
    struct topo t = topo_of(p, 1);
    double intra = m == SB_INDUCTOR_CLASSIC && isnan(p->intra_node_gbps) ? CLASSIC_INTRA_GBPS
                                                                         : t.intra_gbps;
    double inter = m == SB_INDUCTOR_CLASSIC && isnan(p->inter_node_gbps) ? CLASSIC_INTER_GBPS
                                                                         : t.inter_gbps;
    uint32_t ch = p->channels                ? p->channels
                  : m == SB_INDUCTOR_CLASSIC ? CLASSIC_CHANNELS
                                             : t.channels;
    size_t len = strlen(buf);
    if (len < n)
        snprintf(buf + len, n - len,
                 ";gpu=%s;intra_node_bw=%.17g;inter_node_bw=%.17g;gpus_per_node=%u;nvlink=%u;"
                 "nccl_channels=%u;nccl_bytes=%s",
                 gpu_names[gpu_of(p)], intra, inter, p->gpus_per_node, p->nvlink, ch,
                 modes[p->bytes_mode < 3 ? p->bytes_mode : 0]);
}
