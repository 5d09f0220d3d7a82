/* Inductor's NCCL estimators (net/inductor_comm.c) against values worked out
 * by hand from the formulas of torch/_inductor/comm_analysis.py
 * (docs/cost-model.md); each expected value is written as the arithmetic
 * that produced it, and cross-checked with the hand-computed table of
 * ../shared/research/inductor-passes.md §3.3 (quoted in the comments).
 * Bytes are the estimator's own argument (tensor_storage_size_bytes). */
#include <math.h>
#include <stdlib.h>

#include "check.h"
#include "core/core.h"
#include "import/import.h"
#include "net/inductor_comm.h"

#define MIB 1048576ull

static struct sb_nccl_params params(uint32_t gpu)
{
    struct sb_cost_params c;
    sb_cost_defaults(&c);
    c.nccl.gpu = gpu;
    return c.nccl;
}

static double classic(uint32_t gpu, enum sb_nccl_coll k, uint64_t bytes, uint32_t n)
{
    struct sb_nccl_params p = params(gpu);
    return sb_inductor_coll_ms(SB_INDUCTOR_CLASSIC, &p, k, bytes, n, NULL);
}

/* classic: busBw = min(llMaxBw, 2 * bw * (1/4 for AR or multi-node, else
 * 1/3)); algBw = busBw * n / nsteps; time = GiB / algBw + latency */
static void test_classic(void)
{
    /* H100, AR, 1 MiB, 8 ranks (one node): busBw = min(141, 600/4 = 150) =
     * 141; nsteps 14; algBw = 141 * 8 / 14; transport = (1/1024 GiB) /
     * algBw = 14e9 / (1024 * 1128) ns = 12120.499 ns; latency 6.6 + 14 * 0.6
     * = 15.0 us.  §3.3: 0.0271205 ms. */
    double want = (14e9 / (1024.0 * 1128.0) + 15000.0) / 1e6;
    CHECK_NEAR(classic(SB_GPU_HOPPER, SB_NCCL_ALL_REDUCE, MIB, 8), want);
    CHECK(fabs(want - 0.0271205) < 5e-8);
    /* A100, same: busBw = min(87.7, 150) = 87.7; transport = 14e9 / (1024 *
     * 701.6) ns.  §3.3: 0.034487 ms. */
    want = (14e9 / (1024.0 * 701.6) + 15000.0) / 1e6;
    CHECK_NEAR(classic(SB_GPU_AMPERE, SB_NCCL_ALL_REDUCE, MIB, 8), want);
    CHECK(fabs(want - 0.034487) < 5e-7);
    /* H100, AG, 1 MiB, 8 ranks: busBw = min(141, 600/3 = 200) = 141; nsteps
     * 7; transport = 7e9 / (1024 * 1128) ns; latency 6.6 + 7 * 0.6 = 10.8
     * us.  §3.3: 0.016860 ms (RS the same). */
    want = (7e9 / (1024.0 * 1128.0) + 10800.0) / 1e6;
    CHECK_NEAR(classic(SB_GPU_HOPPER, SB_NCCL_ALL_GATHER, MIB, 8), want);
    CHECK_NEAR(classic(SB_GPU_HOPPER, SB_NCCL_REDUCE_SCATTER, MIB, 8), want);
    CHECK(fabs(want - 0.016860) < 5e-7);
    /* AR, 64 MiB, 16 ranks (two nodes): llMaxBw = row 0 (the CPU's), column
     * 1 = 39; bw = inter 25; busBw = min(39, 50/4 = 12.5) = 12.5; algBw =
     * 12.5 * 16 / 30; transport = (1/16 GiB) / algBw = 9.375e6 ns; nInter =
     * 2 * 2 = 4; intra latency max(0.6, 1.0) = 1.0; latency = 6.6 + 26 * 1.0
     * + 4 * 2.7 = 43.4 us.  §3.3: 9.4184 ms, for any GPU. */
    want = (0.0625 / (12.5 * 16 / 30 / 1e9) + 43400.0) / 1e6;
    CHECK_NEAR(classic(SB_GPU_HOPPER, SB_NCCL_ALL_REDUCE, 64 * MIB, 16), want);
    CHECK_NEAR(classic(SB_GPU_AMPERE, SB_NCCL_ALL_REDUCE, 64 * MIB, 16), want);
    CHECK(fabs(want - 9.4184) < 1e-9);
    /* AG, 64 MiB, 64 ranks (8 nodes): llMaxBw row 0 column 2 = 20.4; busBw =
     * min(20.4, 12.5) = 12.5; algBw = 12.5 * 64 / 63; nInter = 7; latency =
     * 6.6 + 56 * 1.0 + 7 * 2.7 = 81.5 us.  §3.3: 5.003375 ms. */
    want = (0.0625 / (12.5 * 64 / 63 / 1e9) + 81500.0) / 1e6;
    CHECK_NEAR(classic(SB_GPU_HOPPER, SB_NCCL_ALL_GATHER, 64 * MIB, 64), want);
    CHECK(fabs(want - 5.003375) < 1e-9);
    /* a group of one, and point-to-point (which the classic does not know),
     * are 0, as PyTorch returns */
    CHECK(classic(SB_GPU_HOPPER, SB_NCCL_ALL_REDUCE, MIB, 1) == 0);
    CHECK(classic(SB_GPU_HOPPER, SB_NCCL_P2P, MIB, 2) == 0);
}

/* The config's intra_node_bw and the channel count are parameters: H100 AR
 * 1 MiB over 8 with intra_node_bw = 100: busBw = min(141, 2 * 100 / 4 = 50)
 * = 50; transport = (1/1024) / (50 * 8 / 14) s*1e9 = 14e9 / (1024 * 400) ns;
 * with nccl_channels = 1 as well, busBw = 25 and the transport doubles. */
static void test_classic_params(void)
{
    struct sb_cost_params c;
    struct sb_err e;
    sb_cost_defaults(&c);
    CHECK(sb_cost_parse(&c, "intra_node_bw=100", &e) == 0);
    double ms = sb_inductor_coll_ms(SB_INDUCTOR_CLASSIC, &c.nccl, SB_NCCL_ALL_REDUCE, MIB, 8,
                                    NULL);
    CHECK_NEAR(ms, (14e9 / (1024.0 * 400.0) + 15000.0) / 1e6);
    CHECK(sb_cost_parse(&c, "nccl_channels=1", &e) == 0);
    ms = sb_inductor_coll_ms(SB_INDUCTOR_CLASSIC, &c.nccl, SB_NCCL_ALL_REDUCE, MIB, 8, NULL);
    CHECK_NEAR(ms, (14e9 / (1024.0 * 200.0) + 15000.0) / 1e6);
    /* gpus_per_node = 4 makes 8 ranks two nodes: inter 25, busBw = min(39,
     * 1 * 25 / 4 = 6.25) = 6.25; nInter = 4; latency 6.6 + 10 * 1.0 + 4 *
     * 2.7 = 27.4 us */
    CHECK(sb_cost_parse(&c, "gpus_per_node=4", &e) == 0);
    ms = sb_inductor_coll_ms(SB_INDUCTOR_CLASSIC, &c.nccl, SB_NCCL_ALL_REDUCE, MIB, 8, NULL);
    CHECK_NEAR(ms, ((1.0 / 1024) / (6.25 * 8 / 14 / 1e9) + 27400.0) / 1e6);
}

static double multi(uint32_t gpu, enum sb_nccl_coll k, uint64_t bytes, uint32_t n,
                    struct sb_nccl_choice *ch)
{
    struct sb_nccl_params p = params(gpu);
    return sb_inductor_coll_ms(SB_INDUCTOR_MULTI, &p, k, bytes, n, ch);
}

/* newest: time_us = latency + bytes / (1000 * algBw), the minimum over the
 * enabled (algo, proto) pairs */
static void test_multi(void)
{
    struct sb_nccl_choice ch;
    /* H100, AR, 1 MiB, 8 ranks: bw = NVLink 370.  Ring/LL: busBw = min(141,
     * 185) = 141, algBw = 141 * 8 / 14, latency 6.6 + 14 * 0.6 = 15.0, time
     * 15.0 + 1048576 * 14 / 1128000 = 28.014 us.  The others are slower:
     * ring/LL128 40.6 + 1048576 / (1000 * 346.875 * 8 / 14) = 45.9; ring/
     * Simple 56.0 + 4.96 = 61.0; tree/LL (correction 0.5 at log2(16384) =
     * 14) 15.2 + 43.1 = 58.3; tree/LL128 31.5 + 12.1 = 43.6; tree/Simple
     * 64.4 + 12.3 = 76.7.  §3.3: 0.028014 RING LL. */
    double want = (15.0 + 1048576.0 * 14 / 1128000.0) / 1000;
    CHECK_NEAR(multi(SB_GPU_HOPPER, SB_NCCL_ALL_REDUCE, MIB, 8, &ch), want);
    CHECK(ch.algo == SB_NCCL_RING && ch.proto == SB_NCCL_LL);
    CHECK(fabs(want - 0.028014) < 5e-7);
    /* H100, AG, 64 MiB, 8 ranks: ring/Simple algBw = 370 * 8 / 7, latency 8.4
     * + 7 * 3.4 = 32.2 us, time 32.2 + 67108864 * 7 / 2960000 = 190.903 us;
     * ring/LL128 27.3 + 67108864 / (1000 * 346.875 * 8 / 7) = 196.6 and ring/
     * LL 10.8 + 416.5 lose.  §3.3: 0.190903 RING SIMPLE. */
    want = (32.2 + 67108864.0 * 7 / 2960000.0) / 1000;
    CHECK_NEAR(multi(SB_GPU_HOPPER, SB_NCCL_ALL_GATHER, 64 * MIB, 8, &ch), want);
    CHECK(ch.algo == SB_NCCL_RING && ch.proto == SB_NCCL_SIMPLE);
    CHECK(fabs(want - 0.190903) < 5e-7);
    /* H100, AR, 64 B, 16 ranks (two nodes over IB): bw = 50 * (0.77 + 0.23 *
     * 1/7).  Tree/LL: busBw = min(bw / 3.8, 39), algBw = busBw / 2,
     * correction 1.0 at log2(1) = 0; latency 6.8 + 2 * ((16/2 - 1) * max(0.6,
     * 1.0) + log2(2) * 5.0) = 30.8 us.  Ring/LL is 6.6 + 28 * 1.0 + 2 * 2.7 =
     * 40.0 us plus transport; LL128 is off across IB.  §3.3: 0.030812 TREE
     * LL. */
    double bw = 50 * (0.77 + 0.23 / 7);
    want = (30.8 + 64 / (1000 * (bw / 3.8) * 0.5)) / 1000;
    CHECK_NEAR(multi(SB_GPU_HOPPER, SB_NCCL_ALL_REDUCE, 64, 16, &ch), want);
    CHECK(ch.algo == SB_NCCL_TREE && ch.proto == SB_NCCL_LL);
    CHECK(fabs(want - 0.030812) < 5e-7);
    /* H100, AG, 64 MiB, 64 ranks (8 nodes): bw = 50 * (0.77 + 0.23) *
     * (67108864 / 5e7)^0.17 (multi-rail); ring/Simple algBw = bw * 64 / 63;
     * latency 8.4 + 56 * max(3.4, 3.0) + 7 * 14.0 = 296.8 us.  §3.3:
     * 1.553532 RING SIMPLE. */
    bw = 50 * pow(67108864 / 5e7, 0.17);
    want = (296.8 + 67108864 / (1000 * bw * 64 / 63)) / 1000;
    CHECK_NEAR(multi(SB_GPU_HOPPER, SB_NCCL_ALL_GATHER, 64 * MIB, 64, &ch), want);
    CHECK(ch.algo == SB_NCCL_RING && ch.proto == SB_NCCL_SIMPLE);
    CHECK(fabs(want - 1.553532) < 5e-7);
    /* point-to-point, 1 MiB between 2 ranks: nsteps 1; ring/LL algBw =
     * min(141, 185) * 2 = 282, latency 6.6 + 0.6 = 7.2 us; ring/Simple 11.8
     * + 1048576 / 740000 = 13.2 loses */
    want = (7.2 + 1048576 / 282000.0) / 1000;
    CHECK_NEAR(multi(SB_GPU_HOPPER, SB_NCCL_P2P, MIB, 2, &ch), want);
    CHECK(multi(SB_GPU_HOPPER, SB_NCCL_UNSUPPORTED, MIB, 8, &ch) == 0);
}

/* The newest with the classic's config values, intra_node_bw = 300: AR 8 x
 * 64 MiB ring/Simple algBw = 300 * 8 / 14, latency 8.4 + 14 * 3.4 = 56.0
 * us.  §3.3 gives 0.447468 ms for this override. */
static void test_multi_override(void)
{
    struct sb_cost_params c;
    struct sb_err e;
    sb_cost_defaults(&c);
    CHECK(sb_cost_parse(&c, "intra_node_bw=300,inter_node_bw=25", &e) == 0);
    struct sb_nccl_choice ch;
    double ms = sb_inductor_coll_ms(SB_INDUCTOR_MULTI, &c.nccl, SB_NCCL_ALL_REDUCE, 64 * MIB,
                                    8, &ch);
    double want = (56.0 + 67108864.0 * 14 / (1000 * 300.0 * 8)) / 1000;
    CHECK_NEAR(ms, want);
    CHECK(fabs(want - 0.447468) < 5e-7);
    CHECK(ch.proto == SB_NCCL_SIMPLE);
}

/* The --cost keys: values, and messages for bad ones. */
static void test_keys(void)
{
    struct sb_cost_params c;
    struct sb_err e;
    sb_cost_defaults(&c);
    CHECK(c.nccl.gpu == SB_GPU_HOPPER && c.nccl.gpus_per_node == 8 && c.nccl.nvlink == 1);
    CHECK(isnan(c.nccl.intra_node_gbps));
    CHECK(sb_cost_parse(&c, "gpu=blackwell,nvlink=0,nccl_bytes=fx,inter_node_bw=400Gbps",
                        &e) == 0);
    CHECK(c.nccl.gpu == SB_GPU_BLACKWELL && c.nccl.nvlink == 0);
    CHECK(c.nccl.bytes_mode == SB_NCCL_BYTES_FX);
    CHECK_NEAR(c.nccl.inter_node_gbps, 50);
    CHECK(sb_cost_parse(&c, "gpu=h100", &e) != 0);
    CHECK_CONTAINS(e.msg, "volta|ampere|hopper|blackwell");
    CHECK(sb_cost_parse(&c, "gpus_per_node=0", &e) != 0);
    CHECK_CONTAINS(e.msg, "gpus_per_node");
    CHECK(sb_cost_parse(&c, "intra_node_bw=fast", &e) != 0);
    CHECK_CONTAINS(e.msg, "intra_node_bw");
    /* a single node without NVLink is PCIe: 24 GB/s, PCI latencies.  AR 8
     * x 1 MiB: ring/LL128 busBw = min(24 * 120 / 128 = 22.5, 16 * 36.7),
     * algBw 22.5 * 8 / 14, latency 14.0 + 14 * 2.5 = 49.0 us: 130.5 us.  It
     * beats ring/LL (busBw min(141, 12): 20.6 + 152.9), ring/Simple (88.2 +
     * 76.5) and the trees (LL 20.8 + 664, LL128 40.6 + 187, Simple 64.4 +
     * 190). */
    struct sb_nccl_params p = params(SB_GPU_HOPPER);
    p.nvlink = 0;
    struct sb_nccl_choice ch;
    double ms = sb_inductor_coll_ms(SB_INDUCTOR_MULTI, &p, SB_NCCL_ALL_REDUCE, MIB, 8, &ch);
    CHECK_NEAR(ms, (49.0 + 1048576.0 / (1000 * 22.5 * 8 / 14)) / 1000);
    CHECK(ch.algo == SB_NCCL_RING && ch.proto == SB_NCCL_LL128);
}

/* sb_inductor_apply on a graph: an all_reduce of 1 MiB over 8 and an
 * all_gather of a 8 MiB tensor (1 MiB shards: the scheduler IR's input
 * bytes) take the classic H100 values above, in us; a copy keeps the
 * analytical price (2 us step + 1 MiB / (1500 * 1e3) us). */
static void test_apply(void)
{
    struct sb_err e;
    const char *csv = "id,name,kind,inputs,coll,comm_bytes,group\n"
                      "0,ar,start,,all_reduce,1048576,8\n"
                      "1,ard,done,0,all_reduce,,\n"
                      "2,ag,start,,all_gather,8388608,8\n"
                      "3,agd,done,2,all_gather,,\n"
                      "4,cp,start,,copy,1048576,\n"
                      "5,cpd,done,4,copy,,\n";
    struct sb_graph *g = sb_csv_load_mem("ind.csv", csv, strlen(csv), &e);
    CHECK(g != NULL);
    if (!g)
        return;
    struct sb_cost_params c;
    sb_cost_defaults(&c);
    sb_cost_apply(&c, g);
    double copy_us = g->dur_us[4];
    sb_inductor_apply(SB_INDUCTOR_CLASSIC, &c, g);
    CHECK_NEAR(g->dur_us[0], 14e9 / (1024.0 * 1128.0) / 1e3 + 15.0);
    CHECK_NEAR(g->dur_us[2], 7e9 / (1024.0 * 1128.0) / 1e3 + 10.8);
    CHECK_NEAR(g->dur_us[4], copy_us);
    CHECK_NEAR(copy_us, 2.0 + 1048576 / 1.5e6);
    /* nccl_bytes=tensor hands the all_gather its whole 8 MiB: transport
     * 8 * 7e9 / (1024 * 1128) ns */
    CHECK(sb_cost_parse(&c, "nccl_bytes=tensor", &e) == 0);
    sb_inductor_apply(SB_INDUCTOR_CLASSIC, &c, g);
    CHECK_NEAR(g->dur_us[2], 56e9 / (1024.0 * 1128.0) / 1e3 + 10.8);
    sb_graph_free(g);
}

int main(void)
{
    test_classic();
    test_classic_params();
    test_multi();
    test_multi_override();
    test_keys();
    test_apply();
    return check_report();
}
