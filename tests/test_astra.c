/* ASTRA-sim's system-layer queues (harness/src/net/astra_queue.c) and the
 * simulator under --comm astra, on cases worked out by hand in the comments.
 *
 * Common numbers, ASTRA-sim's tests/rt_template: Ring of 8, 50 GB/s
 * (B = 50 * 2^30 / 1e9 = 53.6870912 bytes/ns), 500 ns, endpoint delay d = 10,
 * 4 splits, 1 active chunk, local memory 50 bytes/ns; a ring all-reduce chunk
 * of s bytes takes d + 14 (c + d) + 7 r with m = s / 8, c = floor(500 + m / B),
 * r = 3 floor(m / 50).
 *   A, 1 MiB:  s = 262,144, m = 32,768, c = 1,110, r = 1,965:
 *              10 + 14 * 1,120 + 7 * 1,965 = 29,445 ns per chunk, 4 chunks.
 *   B, 64 KiB: s = 16,384, m = 2,048, c = 538, r = 120:
 *              10 + 14 * 548 + 7 * 120 = 8,522 ns per chunk, 4 chunks. */
#include "check.h"
#include "net/astra.h"
#include "import/import.h"

static void plan(const struct sb_astra_config *c, uint64_t bytes, struct sb_astra_plan *p)
{
    struct sb_err e;
    CHECK(sb_astra_plan(c, SB_OP_ALL_REDUCE, bytes, p, &e) == 0);
}

/* Alone: 4 chunks one after the other, 4 * 29,445 = 117,780 (upstream's
 * tests/rt_template/refs/stdout.txt). */
static void test_alone(void)
{
    struct sb_astra_config c;
    struct sb_astra_plan p;
    sb_astra_defaults(&c);
    plan(&c, 1048576, &p);
    CHECK_EQ_U(p.chunks, 4);
    CHECK_EQ_U(p.n_ph, 1);
    CHECK_NEAR(p.t_ns[0], 29445);
    struct sb_astra_sys *s = sb_astra_sys_new(&c);
    uint32_t h = sb_astra_sys_issue(s, &p, 0);
    CHECK(sb_astra_sys_end(s, h) < 0);
    CHECK_NEAR(sb_astra_sys_wait(s, h), 117780);
    sb_astra_sys_free(s);
}

/* A then B, both issued at 0.
 * LIFO: B has the higher priority.  A's chunk 0 already runs [0, 29,445] and
 * is not pre-empted; B's four chunks go ahead of A's three waiting ones:
 * B ends 29,445 + 4 * 8,522 = 63,533, A ends 63,533 + 3 * 29,445 = 151,868.
 * FIFO: A's chunks first, A ends 117,780, B ends 117,780 + 34,088 = 151,868. */
static void test_two_collectives(void)
{
    struct sb_astra_config c;
    struct sb_astra_plan a, b;
    sb_astra_defaults(&c);
    plan(&c, 1048576, &a);
    plan(&c, 65536, &b);
    CHECK_NEAR(b.t_ns[0], 8522);
    for (int lifo = 1; lifo >= 0; lifo--) {
        c.lifo = lifo;
        struct sb_astra_sys *s = sb_astra_sys_new(&c);
        uint32_t ha = sb_astra_sys_issue(s, &a, 0), hb = sb_astra_sys_issue(s, &b, 0);
        CHECK_NEAR(sb_astra_sys_wait(s, hb), lifo ? 63533 : 151868);
        CHECK_NEAR(sb_astra_sys_wait(s, ha), lifo ? 151868 : 117780);
        sb_astra_sys_free(s);
    }
}

/* B issued at 40,000 while A runs: chunk 1 of A runs [29,445, 58,890];
 * under LIFO B's chunks go next: B ends 58,890 + 34,088 = 92,978, and A's
 * chunks 2 and 3 follow: A ends 92,978 + 2 * 29,445 = 151,868. */
static void test_issue_later(void)
{
    struct sb_astra_config c;
    struct sb_astra_plan a, b;
    sb_astra_defaults(&c);
    plan(&c, 1048576, &a);
    plan(&c, 65536, &b);
    struct sb_astra_sys *s = sb_astra_sys_new(&c);
    uint32_t ha = sb_astra_sys_issue(s, &a, 0), hb = sb_astra_sys_issue(s, &b, 40000);
    CHECK_NEAR(sb_astra_sys_wait(s, hb), 92978);
    CHECK_NEAR(sb_astra_sys_wait(s, ha), 151868);
    sb_astra_sys_free(s);
}

/* Two dimensions, Ring 4 x Ring 8, 80 GB/s (B = 85.89934592), 1,000 ns,
 * all-reduce 1 MiB, localBWAware: per chunk (s = 262,144) RS on dim 0, AR on
 * dim 1, AG on dim 0, one queue per dimension, one active chunk.
 *   RS0: m = 65,536, c = floor(1,000 + 762.94) = 1,762, r = 3 * 1,310:
 *        10 + 3 * 1,772 + 3 * 3,930 = 17,116
 *   AR1: s = 65,536, m = 8,192, c = 1,095, r = 3 * 163 = 489:
 *        10 + 14 * 1,105 + 7 * 489 = 18,903
 *   AG0: s = 65,536, c = 1,762: 10 + 3 * 1,772 = 5,326
 * Dim 0 runs RS of chunks 0..3 back to back, [0, 68,464]; dim 1 runs AR_i
 * from 17,116 back to back (18,903 > 17,116), ending 36,019, 54,922, 73,825,
 * 92,728.  AG_0 (ready at 36,019) queues behind RS_3 (equal priority, came
 * first): AG_0 [68,464, 73,790], AG_1 [73,790, 79,116], AG_2 [79,116,
 * 84,442], AG_3 [92,728, 98,054].  ASTRA-sim gives 98,054 too (golden case
 * F_RR4x8_tpu_all_reduce_1MiB_localBWAware). */
static void test_two_dimensions(void)
{
    struct sb_astra_config c;
    struct sb_astra_plan p;
    sb_astra_defaults(&c);
    c.n_dims = 2;
    c.topo[1] = SB_TOPO_RING;
    c.npus[0] = 4, c.npus[1] = 8;
    c.bw_gbps[0] = c.bw_gbps[1] = 80;
    c.latency_ns[0] = c.latency_ns[1] = 1000;
    plan(&c, 1048576, &p);
    CHECK_EQ_U(p.n_ph, 3);
    CHECK_NEAR(p.t_ns[0], 17116);
    CHECK_NEAR(p.t_ns[1], 18903);
    CHECK_NEAR(p.t_ns[2], 5326);
    struct sb_astra_sys *s = sb_astra_sys_new(&c);
    CHECK_NEAR(sb_astra_sys_wait(s, sb_astra_sys_issue(s, &p, 0)), 98054);
    sb_astra_sys_free(s);
}

/* A communicator group {0,1,2,3} on the Ring of 8: links 0-1, 1-2, 2-3 are
 * one hop, the ring's wrap 3-0 is three.  m = 262,144 / 4 = 65,536:
 * c1 = floor(500 + 1,220.70) = 1,720, c3 = floor(1,500 + 1,220.70) = 2,720,
 * r = 3 * 1,310 = 3,930.  Each rank forwards as soon as it received, and
 * starts its next chunk (after d) as soon as it has its last message, so the
 * last rank ends after 4 chunks * K consecutive links walked back around the
 * ring, plus d per chunk.
 *   reduce-scatter, K = 3, every step reduces: 12 links = 3 turns of the
 *   ring, 3 of them long: 4 * 10 + 9 * (1,720 + 10 + 3,930)
 *   + 3 * (2,720 + 10 + 3,930) = 40 + 50,940 + 19,980 = 70,960.
 *   all-reduce, K = 6, the first 3 steps of a chunk reduce: 24 links = 6
 *   turns, 6 long: 4 * 10 + 24 * 1,730 + 6 * 1,000 + 12 * 3,930 = 94,720.
 * ASTRA-sim gives both (golden cases M_ring8_commgroup_contig4_*). */
static void test_group(void)
{
    static const uint32_t g[] = {0, 1, 2, 3};
    struct sb_astra_config c;
    struct sb_astra_plan p;
    struct sb_err e;
    sb_astra_defaults(&c);
    for (int op = 0; op < 2; op++) {
        enum sb_astra_op o = op ? SB_OP_ALL_REDUCE : SB_OP_REDUCE_SCATTER;
        CHECK(sb_astra_plan_group(&c, o, 1048576, g, 4, &p, &e) == 0);
        struct sb_astra_sys *s = sb_astra_sys_new(&c);
        CHECK_NEAR(sb_astra_sys_wait(s, sb_astra_sys_issue(s, &p, 0)), op ? 94720 : 70960);
        sb_astra_sys_free(s);
    }
    /* every link two hops ({0,2,4,6}): the closed form with h = 2,
     * c = floor(1,000 + 1,220.70) = 2,220; 4 * (10 + 3 * 2,230 + 3 * 3,930) = 73,960 */
    static const uint32_t even[] = {0, 2, 4, 6};
    CHECK(sb_astra_plan_group(&c, SB_OP_REDUCE_SCATTER, 1048576, even, 4, &p, &e) == 0);
    CHECK_NEAR(p.t_ns[0], 18490);
    /* groups need a network of one dimension, and ranks that exist */
    static const uint32_t far[] = {0, 9};
    CHECK(sb_astra_plan_group(&c, SB_OP_REDUCE_SCATTER, 1048576, far, 2, &p, &e) != 0);
    c.n_dims = 2, c.npus[1] = 2, c.topo[1] = SB_TOPO_RING;
    c.bw_gbps[1] = 50, c.latency_ns[1] = 500;
    CHECK(sb_astra_plan_group(&c, SB_OP_REDUCE_SCATTER, 1048576, g, 4, &p, &e) != 0);
}

/* A direct all-reduce on the Ring of 8: peers 1, 2, 3, 4, 3, 2, 1 hops along,
 * m = 32,768, c(h) = floor(500 h + 610.35) = 1,110, 1,610, 2,110, 2,610.
 * The i-th second-round message (to the peer i + 1 along) leaves after the
 * i-th earliest first-round arrival:
 *   first round, earliest first: 1,110 1,110 1,610 1,610 2,110 2,110 2,610
 *   second round, peer i + 1:    1,110 1,610 2,110 2,610 2,110 1,610 1,110
 *   sums: 2,220 2,720 3,720 4,220 4,220 3,720 3,720, the largest 4,220;
 * a chunk 10 + 2 * 10 + 1,965 + 4,220 = 6,215, four of them 24,860, which is
 * ASTRA-sim's I_ring8topo_direct_all_reduce_1MiB.  With every peer one hop
 * (FullyConnected) it is the closed form 10 + 2 * 1,120 + 1,965 = 4,215. */
static void test_direct_ring(void)
{
    struct sb_astra_config c;
    sb_astra_defaults(&c);
    for (uint32_t d = 0; d < SB_ASTRA_MAX_DIMS; d++)
        c.algo[SB_OP_ALL_REDUCE][d] = SB_ALGO_DIRECT;
    struct sb_astra_plan p;
    plan(&c, 1048576, &p);
    CHECK_NEAR(p.t_ns[0], 6215);
    c.topo[0] = SB_TOPO_FULLY_CONNECTED;
    plan(&c, 1048576, &p);
    CHECK_NEAR(p.t_ns[0], 4215);
}

/* ASTRA-sim's congestion-aware backend, message by message (astra_aware.c).
 *   Ring all-reduce on a Switch of 8 (tests/rt_template otherwise): a message
 *   goes up to the switch and down, each link floor(500 + 610.35) = 1,110,
 *   and ring neighbours never share a link: per chunk
 *   10 + 14 * (2 * 1,110 + 10) + 7 * 1,965 = 44,985, four chunks 179,940
 *   (the unaware backend: one 2-hop message, 145,780).
 *   Direct all-to-all on the Switch of 8, m = 32,768: a rank's 7 messages
 *   share its uplink, each holding it floor(610.35) = 610, so the last starts
 *   at 10 + 6 * 610 = 3,670, reaches the switch at 4,780 and its receiver at
 *   5,890 (the downlinks are free by then); taken in after d: 5,900 per
 *   chunk, 23,600 (GOLDEN.md section 3 derives the same).
 *   On a Ring of 8 neighbours have a link each: both backends agree, 117,780.
 *   Refused as ASTRA-sim refuses: two dimensions, and a Ring of 2. */
static void test_aware(void)
{
    struct sb_astra_config c;
    struct sb_err e;
    sb_astra_defaults(&c);
    CHECK_NEAR(sb_astra_aware(&c, SB_OP_ALL_REDUCE, 1048576, NULL, NULL, 0, &e), 117780);
    c.topo[0] = SB_TOPO_SWITCH;
    CHECK_NEAR(sb_astra_aware(&c, SB_OP_ALL_REDUCE, 1048576, NULL, NULL, 0, &e), 179940);
    CHECK_NEAR(sb_astra_collective(&c, SB_OP_ALL_REDUCE, 1048576, &e), 145780);
    for (uint32_t d = 0; d < SB_ASTRA_MAX_DIMS; d++)
        c.algo[SB_OP_ALL_TO_ALL][d] = SB_ALGO_DIRECT;
    CHECK_NEAR(sb_astra_aware(&c, SB_OP_ALL_TO_ALL, 1048576, NULL, NULL, 0, &e), 23600);
    c.topo[0] = SB_TOPO_RING;
    c.npus[0] = 2;
    CHECK(sb_astra_aware(&c, SB_OP_ALL_REDUCE, 1048576, NULL, NULL, 0, &e) < 0);
    c.npus[0] = 4, c.n_dims = 2, c.npus[1] = 2, c.topo[1] = SB_TOPO_RING;
    c.bw_gbps[1] = 50, c.latency_ns[1] = 500;
    CHECK(sb_astra_aware(&c, SB_OP_ALL_REDUCE, 1048576, NULL, NULL, 0, &e) < 0);
}

/* Two models of the unaware backend against each other: astra.c's closed forms
 * through the queues, and astra_ranks.c's rank-by-rank messages with
 * floor(h L + m / B) each.  They share no code beyond the chunking, and must
 * agree wherever both apply: every topology, algorithm and op, two sizes
 * (one that does not split evenly) and one or two active chunks. */
static void test_two_models(void)
{
    static const uint32_t npus[] = {4, 8};
    static const uint64_t sizes[] = {1048576, 1000003};
    uint32_t compared = 0, agreed = 0;
    for (uint8_t topo = 0; topo < 3; topo++)
        for (size_t ni = 0; ni < 2; ni++)
            for (uint8_t algo = 0; algo < 3; algo++)
                for (int op = 0; op < 4; op++)
                    for (size_t si = 0; si < 2; si++)
                        for (uint32_t active = 1; active <= 2; active++) {
                            struct sb_astra_config c;
                            struct sb_err e;
                            uint64_t chunk, chunks;
                            sb_astra_defaults(&c);
                            c.topo[0] = topo, c.npus[0] = npus[ni], c.active_chunks = active;
                            c.algo[op][0] = algo;
                            double closed = sb_astra_collective(&c, (enum sb_astra_op)op,
                                                                sizes[si], &e);
                            if (closed < 0 || sb_astra_chunking(&c, (enum sb_astra_op)op,
                                                                sizes[si], &chunk, &chunks, &e))
                                continue;
                            double ranks = sb_astra_ranks_unaware(&c, (enum sb_astra_op)op,
                                                                  chunk, chunks, &e);
                            compared++;
                            if (fabs(closed - ranks) < 1e-6)
                                agreed++;
                            else
                                fprintf(stderr, "topo %u n %u algo %u op %d size %llu A %u: "
                                        "closed form %.0f, ranks %.0f\n", topo, npus[ni], algo,
                                        op, (unsigned long long)sizes[si], active, closed,
                                        ranks);
                        }
    printf("two models: %u of %u configurations agree\n", agreed, compared);
    CHECK(compared >= 250);
    CHECK_EQ_U(agreed, compared);
}

/* The simulator: astra_two.csv issues A and B, waits for B, computes 50 us,
 * waits for A.
 *   inflight=2, LIFO: B ends 63.533 (wait 63.533), work to 113.533, A ends
 *     151.868 (wait 38.335): makespan 151.868, exposed 101.868.
 *   inflight=2, FIFO: B ends 151.868 (wait 151.868), work to 201.868, A
 *     ended at 117.780: makespan 201.868, exposed 151.868.
 *   inflight=1 (either): B is admitted when A ends at 117.780 and runs alone
 *     to 151.868: as FIFO. */
static void test_sim(void)
{
    char path[512];
    struct sb_err e;
    struct sb_cost_params cp;
    snprintf(path, sizeof path, "%s/astra_two.csv", SB_TEST_DATA);
    struct sb_graph *g = sb_graph_load(path, &e);
    if (!g) {
        fprintf(stderr, "%s\n", e.msg);
        CHECK(0);
        return;
    }
    sb_cost_defaults(&cp);
    sb_cost_apply(&cp, g);
    struct sb_astra_config c;
    sb_astra_defaults(&c);
    CHECK(sb_astra_apply(&c, 0, g, &e) == 0);
    CHECK_NEAR(g->v.dur_us[1], 117.780); /* each alone */
    CHECK_NEAR(g->v.dur_us[2], 34.088);
    struct sb_schedule s;
    sb_schedule_init(&s, g, 1);
    for (uint32_t i = 0; i < g->v.n_nodes; i++)
        s.order[i] = i;
    CHECK(sb_schedule_validate(&g->v, &s, &e) == 0);
    static const struct { int lifo; uint32_t inflight; double makespan, exposed; } want[] = {
        {1, 2, 151.868, 101.868},
        {0, 2, 201.868, 151.868},
        {1, 1, 201.868, 151.868},
        {0, 1, 201.868, 151.868},
    };
    for (size_t k = 0; k < sizeof want / sizeof want[0]; k++) {
        struct sb_sim_config sc;
        struct sb_sim_result r;
        sb_sim_defaults(&sc);
        sc.limit[0] = want[k].inflight;
        c.lifo = want[k].lifo;
        struct sb_comm_queue q;
        sb_astra_comm_queue(&c, &q);
        sc.queue = &q;
        sc.record = 1;
        sb_sim_run(g, &s, &sc, &r);
        CHECK_NEAR(r.makespan_us, want[k].makespan);
        CHECK_NEAR(r.exposed_comm_us, want[k].exposed);
        CHECK(r.makespan_us >= r.makespan_lb_us - 1e-9);
        /* the trace sees when each collective really ended */
        CHECK_NEAR(r.coll_end_us[2], want[k].lifo && want[k].inflight == 2 ? 63.533 : 151.868);
        sb_sim_result_free(&r);
    }
    sb_schedule_free(&s);
    sb_graph_free(g);
}

int main(void)
{
    test_alone();
    test_two_collectives();
    test_issue_later();
    test_two_dimensions();
    test_group();
    test_direct_ring();
    test_aware();
    test_two_models();
    test_sim();
    return check_report();
}
