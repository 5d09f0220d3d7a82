/* Simulator, memory model and cost models on graphs small enough to work out on
 * paper; each expected value is derived in the comment above it. */
#include "check.h"
#include "core/core.h"
#include "core/machine.h"
#include "import/import.h"

static struct sb_graph *load(const char *file, enum sb_cost_model m)
{
    char path[512];
    struct sb_err e;
    struct sb_cost_params c;
    snprintf(path, sizeof path, "%s/%s", SB_TEST_DATA, file);
    struct sb_graph *g = sb_graph_load(path, &e);
    if (!g) {
        fprintf(stderr, "%s\n", e.msg);
        return NULL;
    }
    sb_cost_defaults(&c);
    c.model = m;
    sb_cost_apply(&c, g);
    return g;
}

/* Simulates `order` (NULL: file order) under `sim` (NULL: defaults). */
static void simulate(const struct sb_graph *g, const uint32_t *order,
                     const struct sb_sim_config *sim, struct sb_sim_result *r)
{
    struct sb_schedule s;
    struct sb_sim_config c;
    struct sb_err e;
    sb_sim_defaults(&c);
    if (sim)
        c = *sim;
    sb_schedule_init(&s, g, 1);
    for (uint32_t i = 0; i < g->v.n_nodes; i++)
        s.order[i] = order ? order[i] : i;
    CHECK(sb_schedule_validate(&g->v, &s, &e) == 0);
    sb_sim_run(g, &s, &c, r);
    sb_schedule_free(&s);
}

static void test_chain(void)
{
    struct sb_graph *g = load("chain.csv", SB_COST_ANALYTICAL);
    struct sb_sim_result r;
    if (!g)
        { CHECK(0); return; }
    simulate(g, NULL, NULL, &r);
    /* a 0..10, b 10..15, c 15..22 on one stream */
    CHECK_NEAR(r.makespan_us, 22);
    CHECK_NEAR(r.compute_us, 22);
    CHECK_NEAR(r.makespan_lb_us, 22);
    CHECK_NEAR(r.exposed_comm_us, 0);
    /* x (100) lives 0..1 (last read by a); a (200) 1..3; b (50) 2..3; c (10)
     * from 3, never freed: 100, 300, 250, 260 */
    CHECK_EQ_U(r.mem_bytes[0], 100);
    CHECK_EQ_U(r.mem_bytes[1], 300);
    CHECK_EQ_U(r.mem_bytes[2], 250);
    CHECK_EQ_U(r.mem_bytes[3], 260);
    CHECK_EQ_U(r.peak_mem_bytes, 300);
    CHECK_EQ_U(r.peak_pos, 1);
    sb_sim_result_free(&r);
    sb_graph_free(g);
}

static void test_overlap(void)
{
    struct sb_graph *g = load("overlap.csv", SB_COST_ANALYTICAL);
    struct sb_sim_result r;
    if (!g)
        { CHECK(0); return; }
    /* file order: ag issued at 0 and runs 0..30; x 0..20; the done waits
     * 20..30 (10 exposed); y 30..40 */
    simulate(g, NULL, NULL, &r);
    CHECK_NEAR(r.makespan_us, 40);
    CHECK_NEAR(r.exposed_comm_us, 10);
    CHECK_NEAR(r.compute_us, 30);
    CHECK_NEAR(r.comm_us, 30);
    /* critical path ag 0..30 then y 30..40 = 40 > compute 30 */
    CHECK_NEAR(r.makespan_lb_us, 40);
    /* w (1000, weight) always; ag buffer (4000) 1..4 via its done read by y;
     * x (10) 2..4; y (10) at 4: 1000, 5000, 5010, 5010, 5020 */
    CHECK_EQ_U(r.mem_bytes[0], 1000);
    CHECK_EQ_U(r.mem_bytes[1], 5000);
    CHECK_EQ_U(r.mem_bytes[2], 5010);
    CHECK_EQ_U(r.mem_bytes[3], 5010);
    CHECK_EQ_U(r.peak_mem_bytes, 5020);
    CHECK_EQ_U(r.peak_pos, 4);
    sb_sim_result_free(&r);

    /* x first: ag issued at 20, runs 20..50, done waits 20..50 (30 exposed),
     * y 50..60; memory: w; x from 1; ag from 2: 1000, 1010, 5010, 5010, 5020 */
    static const uint32_t late[] = {0, 2, 1, 3, 4};
    simulate(g, late, NULL, &r);
    CHECK_NEAR(r.makespan_us, 60);
    CHECK_NEAR(r.exposed_comm_us, 30);
    CHECK_EQ_U(r.mem_bytes[1], 1010);
    CHECK_EQ_U(r.peak_mem_bytes, 5020);
    sb_sim_result_free(&r);
    sb_graph_free(g);
}

static void test_inflight(void)
{
    struct sb_graph *g = load("twocoll.csv", SB_COST_ANALYTICAL);
    struct sb_sim_config c;
    struct sb_sim_result r;
    struct sb_err e;
    if (!g)
        { CHECK(0); return; }
    /* one shared slot: s1 0..10, s2 queued 10..20; d1 waits 10, d2 10 more */
    simulate(g, NULL, NULL, &r);
    CHECK_NEAR(r.makespan_us, 20);
    CHECK_NEAR(r.exposed_comm_us, 20);
    /* the critical path is 10, but one shared slot must carry 10 + 10 */
    CHECK_NEAR(r.makespan_lb_us, 20);
    sb_sim_result_free(&r);
    /* two shared slots: both 0..10; d1 waits 10, d2 none */
    sb_sim_defaults(&c);
    CHECK(sb_sim_parse(&c, "inflight=2", &e) == 0);
    simulate(g, NULL, &c, &r);
    CHECK_NEAR(r.makespan_us, 10);
    CHECK_NEAR(r.exposed_comm_us, 10);
    sb_sim_result_free(&r);
    /* per-type resources, one slot each: all_gather and reduce_scatter overlap */
    sb_sim_defaults(&c);
    CHECK(sb_sim_parse(&c, "all_gather=1", &e) == 0);
    CHECK(c.shared == 0);
    simulate(g, NULL, &c, &r);
    CHECK_NEAR(r.makespan_us, 10);
    sb_sim_result_free(&r);
    CHECK(sb_sim_parse(&c, "inflight=0", &e) != 0);
    CHECK_CONTAINS(e.msg, "inflight");
    CHECK(sb_sim_parse(&c, "bogus=1", &e) != 0);
    CHECK_CONTAINS(e.msg, "unknown sim parameter 'bogus'");
    sb_graph_free(g);
}

static void test_alias(void)
{
    struct sb_graph *g = load("alias.csv", SB_COST_ANALYTICAL);
    struct sb_sim_result r;
    if (!g)
        { CHECK(0); return; }
    simulate(g, NULL, NULL, &r);
    /* a 0..1; s issued at 1, runs 1..6; z 1..2; d waits 2..6 (4 exposed); o
     * costs nothing: makespan 6 */
    CHECK_NEAR(r.makespan_us, 6);
    CHECK_NEAR(r.exposed_comm_us, 4);
    /* a (100) is viewed by v, which s reads, so it lives until d at 4; s's
     * buffer (10) 2..5 (d aliases it, o reads d); z (1000) only at 3; o (1)
     * at 5: 100, 100, 110, 1110, 110, 11 */
    static const uint64_t want[] = {100, 100, 110, 1110, 110, 11};
    for (int i = 0; i < 6; i++)
        CHECK_EQ_U(r.mem_bytes[i], want[i]);
    CHECK_EQ_U(r.peak_mem_bytes, 1110);
    CHECK_EQ_U(r.peak_pos, 3);
    sb_sim_result_free(&r);
    sb_graph_free(g);
}

static void test_approx(void)
{
    struct sb_graph *g = load("approx.csv", SB_COST_APPROX);
    struct sb_sim_config c;
    struct sb_cost_params cp;
    struct sb_sim_result r;
    if (!g)
        { CHECK(0); return; }
    sb_cost_defaults(&cp);
    cp.model = SB_COST_APPROX;
    sb_sim_defaults(&c);
    c.edge_lat_us = sb_cost_edge_lat(&cp);
    /* loop fusion 0..1000; edge latency 1; convolution 1001..6001 */
    simulate(g, NULL, &c, &r);
    CHECK_NEAR(r.makespan_us, 6001);
    CHECK_NEAR(r.makespan_lb_us, 6001);
    sb_sim_result_free(&r);
    sb_graph_free(g);

    /* under approx every collective takes kHighLatency = 5000 */
    g = load("overlap.csv", SB_COST_APPROX);
    if (!g)
        { CHECK(0); return; }
    CHECK_NEAR(g->dur_us[1], 5000);
    CHECK_NEAR(g->dur_us[2], 1); /* op mm: kLowCost */
    sb_graph_free(g);
}

/* Ring alpha-beta with the documented defaults: 2 us per step, 40 GB/s busbw
 * (= 40e3 bytes/us). */
static void test_ring(void)
{
    const char *csv = "id,name,kind,inputs,coll,comm_bytes,group\n"
                      "0,ag,start,,all_gather,64000000,64\n1,agd,done,0,,,\n"
                      "2,ar,start,,all_reduce,64000000,64\n3,ard,done,2,,,\n"
                      "4,sd,start,,send,1000000,2\n5,sdd,done,4,,,\n"
                      "6,one,start,,all_gather,1000,1\n7,oned,done,6,,,\n"
                      "8,dflt,start,,reduce_scatter,8000,\n9,dfltd,done,8,,,\n";
    struct sb_err e;
    struct sb_cost_params c;
    struct sb_graph *g = sb_csv_load_mem("ring.csv", csv, strlen(csv), &e);
    if (!g)
        { CHECK(0); return; }
    sb_cost_defaults(&c);
    /* all_gather, p = 64: 63 steps * 2 = 126; 64e6 * 63/64 = 63e6 bytes / 40e3 =
     * 1575; total 1701 */
    CHECK_NEAR(sb_cost_coll_us(&c, &g->v, 0), 1701);
    /* all_reduce: 126 steps = 252; 2 * 63e6 / 40e3 = 3150; total 3402 */
    CHECK_NEAR(sb_cost_coll_us(&c, &g->v, 2), 3402);
    /* send: one step 2 + 1e6 / 40e3 = 25; total 27 */
    CHECK_NEAR(sb_cost_coll_us(&c, &g->v, 4), 27);
    /* a group of one moves nothing */
    CHECK_NEAR(sb_cost_coll_us(&c, &g->v, 6), 0);
    /* no group: default ranks 1, so 0; with ranks=4: 3 * 2 + 8000 * 3/4 / 40e3 =
     * 6.15 */
    CHECK_NEAR(sb_cost_coll_us(&c, &g->v, 8), 0);
    CHECK(sb_cost_parse(&c, "ranks=4,lat_us=2", &e) == 0);
    CHECK_NEAR(sb_cost_coll_us(&c, &g->v, 8), 6.15);
    /* bw override for one type: all_gather at 80 GB/s: 126 + 787.5 */
    CHECK(sb_cost_parse(&c, "bw_all_gather=80", &e) == 0);
    CHECK_NEAR(sb_cost_coll_us(&c, &g->v, 0), 913.5);
    CHECK(sb_cost_parse(&c, "bw_gbps=0", &e) != 0);
    CHECK(sb_cost_parse(&c, "warp=9", &e) != 0);
    CHECK_CONTAINS(e.msg, "unknown cost parameter 'warp'");
    sb_graph_free(g);
}

/* Streams (docs/workload-format.md): a on stream 0 and b on stream 1, 10 us
 * each, run at once; c (stream 0, 5 us) reads both: 10 + 5 = 15 us.  The same
 * graph on one stream is 10 + 10 + 5 = 25 us.  The lower bound is the largest
 * stream's work with its path, 15 (a then c), so the gap is 0.  A collective
 * issued and waited on stream 1 (s/d, comm_us 30) does not hold stream 0:
 * x (stream 0, 4 us) ends at 4 while d waits until 30. */
static void test_streams(void)
{
    static const char *csv[2] = {
        "id,name,kind,inputs,cost_us,stream\n0,a,compute,,10,0\n1,b,compute,,10,1\n"
        "2,c,compute,0 1,5,0\n",
        "id,name,kind,inputs,cost_us,stream\n0,a,compute,,10,0\n1,b,compute,,10,0\n"
        "2,c,compute,0 1,5,0\n"};
    static const double want[2] = {15, 25};
    for (int k = 0; k < 2; k++) {
        struct sb_err e;
        struct sb_graph *g = sb_csv_load_mem("streams.csv", csv[k], strlen(csv[k]), &e);
        if (!g)
            { CHECK(0); return; }
        CHECK_EQ_U(g->v.n_streams, k == 0 ? 2 : 1);
        struct sb_cost_params c;
        sb_cost_defaults(&c);
        sb_cost_apply(&c, g);
        struct sb_schedule s;
        sb_schedule_init(&s, g, 1);
        for (uint32_t i = 0; i < g->v.n_nodes; i++)
            s.order[i] = i;
        struct sb_sim_config sc;
        struct sb_sim_result r;
        sb_sim_defaults(&sc);
        sb_sim_run(g, &s, &sc, &r);
        CHECK_NEAR(r.makespan_us, want[k]);
        CHECK_NEAR(r.makespan_lb_us, k == 0 ? 15 : 25);
        sb_sim_result_free(&r);
        sb_schedule_free(&s);
        sb_graph_free(g);
    }
    static const char *coll = "id,name,kind,inputs,cost_us,coll,comm_us,stream\n"
                              "0,s,start,,,all_reduce,30,1\n1,d,done,0,,,,1\n"
                              "2,x,compute,,4,,,0\n";
    struct sb_err e;
    struct sb_graph *g = sb_csv_load_mem("streams2.csv", coll, strlen(coll), &e);
    if (!g)
        { CHECK(0); return; }
    struct sb_cost_params c;
    sb_cost_defaults(&c);
    sb_cost_apply(&c, g);
    struct sb_schedule s;
    sb_schedule_init(&s, g, 1);
    for (uint32_t i = 0; i < 3; i++)
        s.order[i] = i;
    struct sb_sim_config sc;
    struct sb_sim_result r;
    sb_sim_defaults(&sc);
    sc.record = 1;
    sb_sim_run(g, &s, &sc, &r);
    CHECK_NEAR(r.end_us[2], 4);
    CHECK_NEAR(r.makespan_us, 30);
    sb_sim_result_free(&r);
    sb_schedule_free(&s);
    sb_graph_free(g);
    /* a stream beyond the limit is refused with its field */
    static const char *bad = "id,name,kind,inputs,stream\n0,a,compute,,5000\n";
    CHECK(sb_csv_load_mem("bad.csv", bad, strlen(bad), &e) == NULL);
    CHECK_CONTAINS(e.msg, "bad.csv:2:5: stream '5000' is not an integer in 0..1023");
}

/* Joined collectives (docs/machines.md, "Joined collectives"): two ranks
 * on devices 0 and 1, one all-reduce of 20 us both join.  Rank 0 issues
 * its start at 0 and then runs y (30 us) on its stream; rank 1 runs c1
 * (50 us) first, so its start, which reads nothing, is issued at 50.  The
 * collective begins on both when the last start is issued, 50, and ends on
 * both at 50 + 20 = 70.  Rank 0's y is not held back (0..30); its done
 * waits 30..70 (40 us exposed), rank 1's none (its done follows the start
 * at 50 and waits 50..70: 20 us); makespan 70.  Were the members met when
 * their inputs are ready (0 on both), the collective would run 0..20. */
/* Simulates a job in file order with bucket[] (0: none); 0 when the
 * schedule is valid and r holds the recorded run. */
static int run_job(const char *name, const char *csv, const uint32_t *bucket,
                   struct sb_sim_result *r)
{
    struct sb_err e;
    struct sb_graph *g = sb_csv_load_mem(name, csv, strlen(csv), &e);
    if (!g) {
        fprintf(stderr, "%s\n", e.msg);
        return -1;
    }
    struct sb_cost_params cp;
    sb_cost_defaults(&cp);
    sb_cost_apply(&cp, g);
    struct sb_machine *m = NULL;
    int rc = sb_machine_of_graph(g, &m, &e);
    struct sb_schedule s;
    sb_schedule_init(&s, g, g->v.machine ? g->v.machine->n_devices : 1);
    for (uint32_t i = 0; i < g->v.n_nodes; i++)
        s.order[i] = i, s.bucket[i] = bucket[i];
    if (!rc && (rc = sb_schedule_validate(&g->v, &s, &e)) != 0)
        fprintf(stderr, "%s: %s\n", name, e.msg);
    if (!rc) {
        struct sb_sim_config sc;
        sb_sim_defaults(&sc);
        sc.record = 1;
        sb_sim_run(g, &s, &sc, r);
    }
    sb_schedule_free(&s);
    sb_machine_free(m);
    sb_graph_free(g);
    return rc;
}

/* Four ranks, each issuing at 0 an all-reduce S (40 us, ranks {0,1} and
 * {2,3}) and then an all-gather D (20 us, ranks {0,2} and {1,3}), then
 * waiting for both (the STG dp2 x tp2 jobs in ../shared/corpus/stg-et have
 * this shape).  Every member of all four collectives has issued at 0 and
 * every slot is free, so the collectives whose first start comes first in
 * the schedule begin first: S{0,1} (position 0) at 0..40; then S{2,3} (its
 * slots are free at 0, while D{0,2} and D{1,3} now wait for 40) at 0..40;
 * then both D at 40..60.  Each rank: 60, as alone.  Begun in the order the
 * replay completes them (S{0,1} at rank 1's start, D{0,2} at rank 2's,
 * S{2,3} and D{1,3} at rank 3's) D{0,2} took 40..60 on rank 2 before
 * S{2,3}, which then ran 60..100, and D{1,3} 100..120 while rank 1 and
 * rank 3 had been idle from 40: makespan 120. */
static void test_join_begin_order(void)
{
    static const char *csv =
        "# devices=4\n"
        "id,name,kind,inputs,cost_us,coll,comm_us,device,join\n"
        "0,S0,start,,,all_reduce,40,0,\n"
        "1,D0,start,,,all_gather,20,0,\n"
        "2,dS0,done,0,,,,0,\n"
        "3,dD0,done,1,,,,0,\n"
        "4,S1,start,,,all_reduce,40,1,0\n"
        "5,D1,start,,,all_gather,20,1,\n"
        "6,dS1,done,4,,,,1,\n"
        "7,dD1,done,5,,,,1,\n"
        "8,S2,start,,,all_reduce,40,2,\n"
        "9,D2,start,,,all_gather,20,2,1\n"
        "10,dS2,done,8,,,,2,\n"
        "11,dD2,done,9,,,,2,\n"
        "12,S3,start,,,all_reduce,40,3,8\n"
        "13,D3,start,,,all_gather,20,3,5\n"
        "14,dS3,done,12,,,,3,\n"
        "15,dD3,done,13,,,,3,\n";
    static const uint32_t none[16];
    struct sb_sim_result r;
    if (run_job("order.csv", csv, none, &r)) {
        CHECK(0);
        return;
    }
    for (uint32_t rank = 0; rank < 4; rank++) {
        uint32_t S = 4 * rank, D = S + 1;
        CHECK_NEAR(r.coll_begin_us[S], 0);
        CHECK_NEAR(r.coll_end_us[S], 40);
        CHECK_NEAR(r.coll_begin_us[D], 40);
        CHECK_NEAR(r.coll_end_us[D], 60);
        CHECK_NEAR(r.end_us[S + 2], 40);
        CHECK_NEAR(r.end_us[S + 3], 60);
        CHECK_NEAR(r.dev_exposed_us[rank], 40 + 20);
    }
    CHECK_NEAR(r.makespan_us, 60);
    sb_sim_result_free(&r);
}

/* A bucket of joined collectives (docs/machines.md, "Joined collectives";
 * docs/plugins.md, "Buckets"): each of two ranks buckets its two
 * all-gathers a (0/6) and b (1/7), joined pairwise.  Their durations are
 * given (comm_us, no bytes), so a bucket's price is the sum of its members'
 * (sb_cost_bucket_us) and it has no copies: rank 0's bucket 10 + 15 = 25
 * us, rank 1's (a trace may time ranks differently) 12 + 18 = 30 us.  Rank
 * 0 reaches both starts at 0: its bucket goes out at 0.  Rank 1's starts
 * read c1 (50 us): its bucket goes out at 50.  The group begins when it is
 * out on both ranks and both slots are free: 50; rank 0's bucket runs
 * 50..75, rank 1's 50..80.  Rank 0's stream runs y (30 us) 0..30, then
 * waits at da0 until 75 (45 us exposed), db0 at 75; rank 1 waits at da1
 * from 50 to 80 (30 us), db1 at 80.  Makespan 80; comm_us counts each
 * bucket once at its price: 25 + 30 = 55, per rank 25 and 30.  Each rank
 * alone would run its bucket from its own issue: rank 0 0..25. */
static void test_join_bucket(void)
{
    static const char *csv =
        "# devices=2\n"
        "id,name,kind,inputs,cost_us,coll,comm_us,device,join\n"
        "0,a0,start,,,all_gather,10,0,\n"
        "1,b0,start,,,all_gather,15,0,\n"
        "2,y,compute,,30,,,0,\n"
        "3,da0,done,0,,,,0,\n"
        "4,db0,done,1,,,,0,\n"
        "5,c1,compute,,50,,,1,\n"
        "6,a1,start,5,,all_gather,12,1,0\n"
        "7,b1,start,5,,all_gather,18,1,1\n"
        "8,da1,done,6,,,,1,\n"
        "9,db1,done,7,,,,1,\n";
    static const uint32_t bucket[10] = {1, 1, 0, 0, 0, 0, 2, 2, 0, 0};
    struct sb_sim_result r;
    if (run_job("jbucket.csv", csv, bucket, &r)) {
        CHECK(0);
        return;
    }
    for (uint32_t v = 0; v < 2; v++) {
        CHECK_NEAR(r.coll_begin_us[v], 50);
        CHECK_NEAR(r.coll_end_us[v], 75);
        CHECK_NEAR(r.coll_begin_us[6 + v], 50);
        CHECK_NEAR(r.coll_end_us[6 + v], 80);
    }
    CHECK_NEAR(r.end_us[2], 30);
    CHECK_NEAR(r.begin_us[3], 30);
    CHECK_NEAR(r.end_us[3], 75);
    CHECK_NEAR(r.end_us[4], 75);
    CHECK_NEAR(r.end_us[8], 80);
    CHECK_NEAR(r.end_us[9], 80);
    CHECK_NEAR(r.dev_exposed_us[0], 45);
    CHECK_NEAR(r.dev_exposed_us[1], 30);
    CHECK_NEAR(r.dev_comm_us[0], 25);
    CHECK_NEAR(r.dev_comm_us[1], 30);
    CHECK_NEAR(r.comm_us, 55);
    CHECK_NEAR(r.makespan_us, 80);
    CHECK(r.buckets == 2);
    sb_sim_result_free(&r);
}

/* A bucket of collectives that are not joined, inside a job (docs/plugins.md,
 * "Buckets"; docs/machines.md, "Joined collectives"): rank 0 buckets its
 * own all-gathers a0 (10 us) and b0 (15 us); comm_us given, no bytes, so
 * the bucket's price is 10 + 15 = 25 us.  One member reads the done of x,
 * an all-reduce of 20 us joined with rank 1, whose start x1 reads c1 (50
 * us): x0 is issued at 0, x1 at 50, x runs 50..70 on both ranks, so dx0
 * waits 0..70 (70 us exposed) and dx1 50..70 (20 us).  The member that
 * reads dx0 is reached at 70, the other at 0: the bucket goes out at 70
 * and runs 70..95 whichever member the replay reaches first, and both
 * dones wait for 95.  A compute z0 (30 us) after the done on the other
 * stream then runs 95..125: makespan 125.
 *
 * First job: b0 (stream 0, the bucket's last start in the order) reads
 * dx0, a0 is on stream 1.  da0 (stream 1, after a0 at 0) waits 0..95, z0
 * 95..125; db0 (stream 0, after b0) waits 70..95.  Exposed on rank 0: 70
 * + 95 + 25 = 190.  A done let go at its own start would pass da0 at 0
 * (the bucket not out yet) and end z0 at 30.
 *
 * Second job: a0 (stream 0, the first start in the order) reads dx0, b0
 * (stream 1) reads nothing, so the replay reaches b0 before a0.  da0
 * (stream 0, after a0 at 70) waits 70..95; db0 (stream 1, after b0 at 0)
 * waits 0..95, then z0 95..125.  Exposed on rank 0: 70 + 25 + 95 = 190.
 * A bucket sent out when the replay reaches its last start in the order
 * would go out at 0, before a0 is reached. */
static void test_job_lone_bucket(void)
{
    static const char *first =
        "# devices=2\n"
        "id,name,kind,inputs,cost_us,coll,comm_us,device,stream,join\n"
        "0,a0,start,,,all_gather,10,0,1,\n"
        "1,x0,start,,,all_reduce,20,0,0,\n"
        "2,dx0,done,1,,,,0,0,\n"
        "3,b0,start,2,,all_gather,15,0,0,\n"
        "4,da0,done,0,,,,0,1,\n"
        "5,z0,compute,4,30,,,0,1,\n"
        "6,db0,done,3,,,,0,0,\n"
        "7,c1,compute,,50,,,1,0,\n"
        "8,x1,start,7,,all_reduce,20,1,0,1\n"
        "9,dx1,done,8,,,,1,0,\n";
    static const char *second =
        "# devices=2\n"
        "id,name,kind,inputs,cost_us,coll,comm_us,device,stream,join\n"
        "0,x0,start,,,all_reduce,20,0,0,\n"
        "1,dx0,done,0,,,,0,0,\n"
        "2,a0,start,1,,all_gather,10,0,0,\n"
        "3,b0,start,,,all_gather,15,0,1,\n"
        "4,da0,done,2,,,,0,0,\n"
        "5,db0,done,3,,,,0,1,\n"
        "6,z0,compute,5,30,,,0,1,\n"
        "7,c1,compute,,50,,,1,0,\n"
        "8,x1,start,7,,all_reduce,20,1,0,0\n"
        "9,dx1,done,8,,,,1,0,\n";
    /* a0, b0, x0, dx0, da0, db0, z0 and x1, dx1 in each job */
    static const uint32_t at[2][9] = {{0, 3, 1, 2, 4, 6, 5, 8, 9}, {2, 3, 0, 1, 4, 5, 6, 8, 9}};
    static const double da0_begin[2] = {0, 70}, db0_begin[2] = {70, 0};
    for (int k = 0; k < 2; k++) {
        const uint32_t *w = at[k];
        uint32_t bucket[10] = {0};
        bucket[w[0]] = bucket[w[1]] = 1;
        struct sb_sim_result r;
        int rc = run_job(k ? "second.csv" : "first.csv", k ? second : first, bucket, &r);
        CHECK(rc == 0);
        if (rc)
            continue;
        CHECK_NEAR(r.coll_begin_us[w[2]], 50);
        CHECK_NEAR(r.coll_end_us[w[7]], 70);
        CHECK_NEAR(r.end_us[w[3]], 70);
        CHECK_NEAR(r.end_us[w[8]], 70);
        for (int j = 0; j < 2; j++) {
            CHECK_NEAR(r.coll_begin_us[w[j]], 70);
            CHECK_NEAR(r.coll_end_us[w[j]], 95);
        }
        CHECK_NEAR(r.begin_us[w[4]], da0_begin[k]);
        CHECK_NEAR(r.end_us[w[4]], 95);
        CHECK_NEAR(r.begin_us[w[5]], db0_begin[k]);
        CHECK_NEAR(r.end_us[w[5]], 95);
        CHECK_NEAR(r.begin_us[w[6]], 95);
        CHECK_NEAR(r.end_us[w[6]], 125);
        CHECK_NEAR(r.dev_exposed_us[0], 190);
        CHECK_NEAR(r.dev_exposed_us[1], 20);
        CHECK_NEAR(r.dev_comm_us[0], 20 + 25);
        CHECK_NEAR(r.makespan_us, 125);
        CHECK(r.buckets == 1);
        sb_sim_result_free(&r);
    }
}

static void test_join(void)
{
    static const char *csv =
        "# devices=2\n"
        "id,name,kind,inputs,cost_us,coll,comm_us,device,join\n"
        "0,s0,start,,,all_reduce,20,0,\n"
        "1,y,compute,,30,,,0,\n"
        "2,d0,done,0,,,,0,\n"
        "3,c1,compute,,50,,,1,\n"
        "4,s1,start,,,all_reduce,20,1,0\n"
        "5,d1,done,4,,,,1,\n";
    struct sb_err e;
    struct sb_graph *g = sb_csv_load_mem("join.csv", csv, strlen(csv), &e);
    if (!g) {
        fprintf(stderr, "%s\n", e.msg);
        CHECK(0);
        return;
    }
    struct sb_cost_params cp;
    sb_cost_defaults(&cp);
    sb_cost_apply(&cp, g);
    struct sb_machine *m = NULL;
    CHECK(sb_machine_of_graph(g, &m, &e) == 0 && g->v.machine->n_devices == 2);
    CHECK(g->v.join && g->v.join[0] == 4 && g->v.join[4] == 0 && g->v.join[1] == 1);
    struct sb_schedule s;
    sb_schedule_init(&s, g, 2);
    for (uint32_t i = 0; i < 6; i++)
        s.order[i] = i;
    CHECK(sb_schedule_validate(&g->v, &s, &e) == 0);
    struct sb_sim_config sc;
    struct sb_sim_result r;
    sb_sim_defaults(&sc);
    sc.record = 1;
    sb_sim_run(g, &s, &sc, &r);
    CHECK_NEAR(r.coll_begin_us[0], 50);
    CHECK_NEAR(r.coll_begin_us[4], 50);
    CHECK_NEAR(r.coll_end_us[0], 70);
    CHECK_NEAR(r.coll_end_us[4], 70);
    CHECK_NEAR(r.end_us[1], 30);
    CHECK_NEAR(r.end_us[2], 70);
    CHECK_NEAR(r.end_us[5], 70);
    CHECK_NEAR(r.exposed_comm_us, 40 + 20);
    CHECK_NEAR(r.makespan_us, 70);
    sb_sim_result_free(&r);
    sb_schedule_free(&s);
    sb_machine_free(m);
    sb_graph_free(g);

    /* Two joined collectives X (0/3) and Y (4/7) issued in opposite orders:
     * rank 0 holds its stream at X's done until rank 1 starts X, rank 1 at
     * Y's done until rank 0 starts Y: the devices wait forever, refused. */
    static const char *dead =
        "# devices=2\n"
        "id,name,kind,inputs,cost_us,coll,comm_us,device,join\n"
        "0,x0,start,,,all_reduce,5,0,\n"
        "1,dx0,done,0,,,,0,\n"
        "2,y1,start,,,all_gather,5,1,\n"
        "3,dy1,done,2,,,,1,\n"
        "4,y0,start,,,all_gather,5,0,2\n"
        "5,dy0,done,4,,,,0,\n"
        "6,x1,start,,,all_reduce,5,1,0\n"
        "7,dx1,done,6,,,,1,\n";
    g = sb_csv_load_mem("dead.csv", dead, strlen(dead), &e);
    CHECK(g != NULL);
    if (!g)
        return;
    sb_cost_apply(&cp, g);
    CHECK(sb_machine_of_graph(g, &m, &e) == 0);
    sb_schedule_init(&s, g, 2);
    for (uint32_t i = 0; i < 8; i++)
        s.order[i] = i;
    CHECK(sb_schedule_validate(&g->v, &s, &e) != 0);
    CHECK_CONTAINS(e.msg, "node 1 (dx0) at 1 never runs: the devices wait for each other's "
                          "joined collectives in a cycle");
    sb_schedule_free(&s);
    sb_machine_free(m);
    sb_graph_free(g);

    /* what a join column refuses */
    static const char *bad[] = {
        "id,name,kind,inputs,coll,device,join\n0,a,start,,all_reduce,0,\n1,b,done,0,,0,\n"
        "2,c,start,,all_reduce,0,0\n3,d,done,2,,0,\n",
        "id,name,kind,inputs,coll,device,join\n0,a,start,,all_reduce,0,\n1,b,done,0,,0,\n"
        "2,c,start,,all_gather,1,0\n3,d,done,2,,1,\n",
        "id,name,kind,inputs,coll,device,join\n0,a,compute,,,0,\n1,c,start,,all_reduce,1,0\n"
        "2,d,done,1,,1,\n",
        "id,name,kind,inputs,coll,device,join\n0,a,start,,all_reduce,0,3\n1,b,done,0,,0,\n"};
    static const char *want[] = {
        "x.csv:4:7: join 0: its collective already has a member on device 0 (line 2)",
        "x.csv:4:7: join 0 (line 2) is not a start of all_gather with a device",
        "x.csv:3:7: join 0 (line 2) is not a start of all_reduce with a device",
        "x.csv:2:7: join 3 is not an earlier row"};
    for (int k = 0; k < 4; k++) {
        CHECK(sb_csv_load_mem("x.csv", bad[k], strlen(bad[k]), &e) == NULL);
        CHECK_CONTAINS(e.msg, want[k]);
    }
}

int main(void)
{
    test_join();
    test_join_bucket();
    test_job_lone_bucket();
    test_join_begin_order();
    test_streams();
    test_chain();
    test_overlap();
    test_inflight();
    test_alias();
    test_approx();
    test_ring();
    return check_report();
}
