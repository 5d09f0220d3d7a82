/* Buckets (sb_schedule.bucket; docs/cost-model.md "Buckets", docs/plugins.md
 * "Buckets"): the validator's rules with the nodes they name, and the
 * simulator's price, memory and comm_us of a bucket, worked out by hand from
 * the documented formulas (defaults: 2 us per ring step, 40 GB/s network
 * bus bandwidth, 1500 GB/s copies). */
#include <stdlib.h>

#include "check.h"
#include "core/core.h"
#include "core/machine.h"
#include "import/import.h"
#include "net/inductor_comm.h"

/* Two all_gathers of 1 MiB tensors over 8 ranks, each start allocating its
 * 1 MiB output, and a compute of 5 us reading both. */
static const char *two_ag = "id,name,kind,inputs,cost_us,out_bytes,coll,comm_bytes,group\n"
                            "0,x,input,,,64,,,\n"
                            "1,ag0,start,0,,1048576,all_gather,1048576,8\n"
                            "2,ag1,start,0,,1048576,all_gather,1048576,8\n"
                            "3,w0,done,1,,,all_gather,,\n"
                            "4,w1,done,2,,,all_gather,,\n"
                            "5,use,compute,3 4,5,0,,,\n";

static struct sb_graph *load(const char *csv)
{
    struct sb_err e;
    struct sb_graph *g = sb_csv_load_mem("bucket.csv", csv, strlen(csv), &e);
    if (!g) {
        fprintf(stderr, "%s\n", e.msg);
        return NULL;
    }
    struct sb_cost_params c;
    sb_cost_defaults(&c);
    sb_cost_apply(&c, g);
    return g;
}

static void set_order(struct sb_schedule *s, const uint32_t *order)
{
    for (uint32_t i = 0; i < s->n_nodes; i++)
        s->order[i] = order[i];
}

/* One all_gather alone: 7 steps * 2 us + 7/8 * 1048576 B / 40e3 B/us =
 * 14 + 22.9376 = 36.9376 us; two on the one NCCL stream: 73.8752, then the
 * compute: 78.8752.  Bucketed: 7 * 2 + 7/8 * 2097152 / 40e3 = 14 + 45.8752
 * = 59.8752 us, plus the copies: in, the shards 2 * 1048576 / 8 = 262144 B,
 * out, the outputs 2097152 B: 2359296 / 1.5e6 = 1.572864 us; 61.448064 us,
 * then the compute: 66.448064. */
static void test_price(void)
{
    struct sb_graph *g = load(two_ag);
    CHECK(g != NULL);
    if (!g)
        return;
    static const uint32_t order[] = {0, 1, 2, 3, 4, 5};
    struct sb_schedule s;
    struct sb_sim_config c;
    struct sb_sim_result r;
    struct sb_err e;
    sb_sim_defaults(&c);
    sb_schedule_init(&s, g, 1);
    set_order(&s, order);
    CHECK(sb_schedule_validate(&g->v, &s, &e) == 0);
    sb_sim_run(g, &s, &c, &r);
    CHECK_NEAR(r.makespan_us, 78.8752);
    CHECK_EQ_U(r.peak_mem_bytes, 64 + 2 * 1048576); /* both outputs live */
    CHECK_EQ_U(r.buckets, 0);
    sb_sim_result_free(&r);

    s.bucket[1] = s.bucket[2] = 7;
    CHECK(sb_schedule_validate(&g->v, &s, &e) == 0);
    sb_sim_run(g, &s, &c, &r);
    CHECK_NEAR(r.makespan_us, 61.448064 + 5);
    CHECK_NEAR(r.comm_us, 61.448064);
    CHECK_EQ_U(r.buckets, 1);
    /* the merged 2 MiB output is live from ag1 (position 2) through w1 (4),
     * on top of the two members' own outputs */
    CHECK_EQ_U(r.peak_mem_bytes, 64 + 2 * 1048576 + 2097152);
    CHECK_EQ_U(r.peak_pos, 2);
    /* the bound is over schedules with these buckets: not above the makespan */
    CHECK(r.makespan_lb_us <= r.makespan_us + 1e-9);
    sb_sim_result_free(&r);

    /* a bucket of one is the collective alone */
    s.bucket[2] = 3;
    sb_sim_run(g, &s, &c, &r);
    CHECK_NEAR(r.makespan_us, 78.8752);
    CHECK_EQ_U(r.buckets, 0);
    sb_sim_result_free(&r);
    sb_schedule_free(&s);
    sb_graph_free(g);
}

/* Under Inductor's classic estimator (H100, one node of 8), the bucket is
 * one all_gather of the members' input bytes, 2 * 1048576 / 8 = 262144 =
 * 2^18 B: busBw 141, algBw 141 * 8 / 7; transport 2^18 / 2^30 GiB / algBw
 * = 7e9 / (4096 * 1128) ns; latency 6.6 + 7 * 0.6 = 10.8 us; plus the same
 * copies, 1.572864 us. */
static void test_inductor_price(void)
{
    struct sb_graph *g = load(two_ag);
    CHECK(g != NULL);
    if (!g)
        return;
    static const uint32_t order[] = {0, 1, 2, 3, 4, 5};
    struct sb_cost_params cost;
    sb_cost_defaults(&cost);
    struct sb_inductor_ctx ctx = {SB_INDUCTOR_CLASSIC, &cost};
    struct sb_schedule s;
    struct sb_sim_config c;
    struct sb_sim_result r;
    sb_sim_defaults(&c);
    c.cost = &cost;
    c.bucket_us = sb_inductor_bucket_us;
    c.bucket_ctx = &ctx;
    sb_schedule_init(&s, g, 1);
    set_order(&s, order);
    s.bucket[1] = s.bucket[2] = 1;
    sb_sim_run(g, &s, &c, &r);
    CHECK_NEAR(r.comm_us, 7e9 / (4096.0 * 1128.0) / 1e3 + 10.8 + 1.572864);
    sb_sim_result_free(&r);
    sb_schedule_free(&s);
    sb_graph_free(g);
}

static void expect_refused(const char *csv, const uint32_t *order, const uint32_t *bucket,
                           const char *needle)
{
    struct sb_graph *g = load(csv);
    CHECK(g != NULL);
    if (!g)
        return;
    struct sb_schedule s;
    struct sb_err e;
    sb_schedule_init(&s, g, 1);
    set_order(&s, order);
    memcpy(s.bucket, bucket, g->v.n_nodes * sizeof *bucket);
    CHECK(sb_schedule_validate(&g->v, &s, &e) != 0);
    CHECK_CONTAINS(e.msg, needle);
    sb_schedule_free(&s);
    sb_graph_free(g);
}

static void test_refusals(void)
{
    static const uint32_t order[] = {0, 1, 2, 3, 4, 5};
    /* not a start */
    static const uint32_t on_done[] = {0, 1, 1, 1, 0, 0};
    expect_refused(two_ag, order, on_done, "node 3 (w0) is in bucket 1 but is not a "
                                           "collective start");
    /* a done between the starts */
    static const uint32_t early[] = {0, 1, 3, 2, 4, 5};
    static const uint32_t both[] = {0, 9, 9, 0, 0, 0};
    expect_refused(two_ag, early, both, "bucket 9: done 3 (w0) at 2 comes before start 2 "
                                        "(ag1) at 3");
    /* a cycle: ag1 reads w0 */
    const char *chain = "id,name,kind,inputs,cost_us,out_bytes,coll,comm_bytes,group\n"
                        "0,x,input,,,64,,,\n"
                        "1,ag0,start,0,,1048576,all_gather,1048576,8\n"
                        "2,w0,done,1,,,all_gather,,\n"
                        "3,ag1,start,2,,1048576,all_gather,1048576,8\n"
                        "4,w1,done,3,,,all_gather,,\n";
    static const uint32_t chain_order[] = {0, 1, 2, 3, 4};
    static const uint32_t chain_b[] = {0, 2, 0, 2, 0};
    expect_refused(chain, chain_order, chain_b, "bucket 2 would be a cycle: start 3 (ag1) "
                                                "depends on done 2 (w0) of 1 (ag0)");
    /* mixed types and groups */
    const char *mixed = "id,name,kind,inputs,cost_us,out_bytes,coll,comm_bytes,group\n"
                        "0,x,input,,,64,,,\n"
                        "1,ag,start,0,,1024,all_gather,1024,8\n"
                        "2,rs,start,0,,1024,reduce_scatter,1024,8\n"
                        "3,ag4,start,0,,1024,all_gather,1024,4\n"
                        "4,w0,done,1,,,all_gather,,\n"
                        "5,w1,done,2,,,reduce_scatter,,\n"
                        "6,w2,done,3,,,all_gather,,\n";
    static const uint32_t mixed_order[] = {0, 1, 2, 3, 4, 5, 6};
    static const uint32_t types[] = {0, 5, 5, 0, 0, 0, 0};
    expect_refused(mixed, mixed_order, types, "bucket 5 mixes all_gather 1 (ag) and "
                                              "reduce_scatter 2 (rs)");
    static const uint32_t groups[] = {0, 6, 0, 6, 0, 0, 0};
    expect_refused(mixed, mixed_order, groups, "bucket 6 mixes groups of 8 (1 ag) and 4 "
                                               "(3 ag4) ranks");
}

/* A job of two ranks, each with four all-gathers a..d joined pairwise
 * (a0/a1, ...) and a fifth on rank 0 alone (e0); every start's done
 * follows the starts on its rank.  The buckets of joined collectives must
 * match: one per rank, each holding the partners of the other's members.
 * Returns the validator's verdict; *msg its message. */
static const char *job4 =
    "# devices=2\n"
    "id,name,kind,inputs,coll,comm_us,device,join\n"
    "0,a0,start,,all_gather,10,0,\n"
    "1,b0,start,,all_gather,10,0,\n"
    "2,c0,start,,all_gather,10,0,\n"
    "3,d0,start,,all_gather,10,0,\n"
    "4,e0,start,,all_gather,10,0,\n"
    "5,da0,done,0,,,0,\n"
    "6,db0,done,1,,,0,\n"
    "7,dc0,done,2,,,0,\n"
    "8,dd0,done,3,,,0,\n"
    "9,de0,done,4,,,0,\n"
    "10,a1,start,,all_gather,10,1,0\n"
    "11,b1,start,,all_gather,10,1,1\n"
    "12,c1,start,,all_gather,10,1,2\n"
    "13,d1,start,,all_gather,10,1,3\n"
    "14,da1,done,10,,,1,\n"
    "15,db1,done,11,,,1,\n"
    "16,dc1,done,12,,,1,\n"
    "17,dd1,done,13,,,1,\n";

static int job_validate(const char *csv, const uint32_t *order, const uint32_t *bucket,
                        char *msg, size_t n_msg)
{
    struct sb_err e = {0};
    struct sb_graph *g = load(csv);
    struct sb_machine *m = NULL;
    CHECK(g != NULL);
    if (!g)
        return -1;
    CHECK(sb_machine_of_graph(g, &m, &e) == 0);
    struct sb_schedule s;
    sb_schedule_init(&s, g, 2);
    for (uint32_t i = 0; i < g->v.n_nodes; i++)
        s.order[i] = order ? order[i] : i;
    memcpy(s.bucket, bucket, g->v.n_nodes * sizeof *bucket);
    int rc = sb_schedule_validate(&g->v, &s, &e);
    snprintf(msg, n_msg, "%s", rc ? e.msg : "");
    sb_schedule_free(&s);
    sb_machine_free(m);
    sb_graph_free(g);
    return rc;
}

static void expect_job(const uint32_t *order, const uint32_t *bucket, const char *csv,
                       const char *needle)
{
    char msg[600];
    int rc = job_validate(csv, order, bucket, msg, sizeof msg);
    if (!needle) {
        CHECK(rc == 0);
        if (rc)
            fprintf(stderr, "refused: %s\n", msg);
        return;
    }
    CHECK(rc != 0);
    CHECK_CONTAINS(msg, needle);
}

static void test_joined(void)
{
    /*                    a0 b0 c0 d0 e0 (dones)      a1 b1 c1 d1 (dones) */
    static const uint32_t match[] = {1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 0, 0};
    expect_job(NULL, match, job4, NULL);
    /* the same two buckets and c, d in another pair: still one to one */
    static const uint32_t two[] = {1, 1, 3, 3, 0, 0, 0, 0, 0, 0, 2, 2, 4, 4, 0, 0, 0, 0};
    expect_job(NULL, two, job4, NULL);
    /* rank 1 launches a and b alone: NCCL would wait for a fusion there */
    static const uint32_t alone[] = {1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    expect_job(NULL, alone, job4, "node 0 (a0) is in bucket 1 but the member 10 (a1) of its "
                                  "collective on device 1 is not bucketed");
    /* a bucket of one is the collective alone: the same refusal */
    static const uint32_t one[] = {1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 2, 3, 0, 0, 0, 0, 0, 0};
    expect_job(NULL, one, job4, "node 0 (a0) is in bucket 1 but the member 10 (a1) of its "
                                "collective on device 1 is not bucketed");
    /* a's and b's partners spread over two buckets on rank 1 */
    static const uint32_t spread[] = {1, 1, 3, 3, 0, 0, 0, 0, 0, 0, 2, 4, 2, 4, 0, 0, 0, 0};
    expect_job(NULL, spread, job4, "bucket 1 holds 0 (a0) and 1 (b0), whose members on device 1 "
                                   "are in buckets 2 (10 a1) and 4 (11 b1)");
    /* rank 1's bucket holds c1 as well */
    static const uint32_t more[] = {1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 2, 2, 2, 0, 0, 0, 0, 0};
    expect_job(NULL, more, job4, "bucket 1 holds 2 collectives joined across ranks (0 a0, ...) "
                                 "but bucket 2 on device 1, holding their members there, "
                                 "holds 3");
    /* a joined collective and one of rank 0 alone in one bucket */
    static const uint32_t mixed[] = {0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    expect_job(NULL, mixed, job4, "bucket 1 mixes 3 (d0), joined across ranks, and 4 (e0), "
                                  "which is not");
    /* e0, which no other rank runs, in a bucket of its own beside the
     * matched ones: a bucket of one, as without a job */
    static const uint32_t own[] = {1, 1, 0, 0, 5, 0, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 0, 0};
    expect_job(NULL, own, job4, NULL);
}

/* A bucket of rank 0's own collectives a0 and b0 (not joined) that cannot go
 * out: b0 reads dx0, the done of X (joined with rank 1), and da0 holds
 * stream 1 until the bucket goes out, which needs b0; rank 0 starts K only
 * after da0, while rank 1 starts X only after dk1, which waits for K.  In
 * the order every done follows both starts (the single-device rule holds);
 * unbucketed it runs (da0 needs only a0); bucketed the ranks wait on each
 * other: refused. */
static void test_lone_deadlock(void)
{
    static const char *csv =
        "# devices=2\n"
        "id,name,kind,inputs,coll,comm_us,device,stream,join\n"
        "0,a0,start,,all_gather,10,0,1,\n"
        "1,x0,start,,all_reduce,10,0,0,\n"
        "2,dx0,done,1,,,0,0,\n"
        "3,b0,start,2,all_gather,10,0,0,\n"
        "4,da0,done,0,,,0,1,\n"
        "5,k0,start,,all_reduce,10,0,1,\n"
        "6,dk0,done,5,,,0,1,\n"
        "7,db0,done,3,,,0,0,\n"
        "8,k1,start,,all_reduce,10,1,0,5\n"
        "9,dk1,done,8,,,1,0,\n"
        "10,x1,start,,all_reduce,10,1,0,1\n"
        "11,dx1,done,10,,,1,0,\n";
    static const uint32_t b[] = {1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0};
    expect_job(NULL, b, csv, "node 2 (dx0) at 2 never runs: the devices wait for each other's "
                             "joined collectives in a cycle");
    static const uint32_t none[12] = {0};
    expect_job(NULL, none, csv, NULL);
    /* with X begun before the bucket is needed (dk1 after x1 on rank 1's
     * stream) the same bucket runs */
    static const uint32_t swap[] = {0, 1, 2, 3, 4, 5, 6, 7, 10, 11, 8, 9};
    expect_job(swap, b, csv, NULL);
}

/* Matched buckets {a0, b0} and {a1, b1} that cannot go out: rank 0 starts
 * a0 and X (joined with rank 1's X, unbucketed) and waits at X's done
 * before it starts b0; rank 1 starts a1, b1 and waits at da1 for the fused
 * collective, which needs b0, before it starts X.  Collective by collective
 * it would run (a's members have both started, so rank 1 passes da1, starts
 * X, and rank 0 goes on): the group is what deadlocks, refused. */
static void test_joined_deadlock(void)
{
    static const char *csv =
        "# devices=2\n"
        "id,name,kind,inputs,coll,comm_us,device,join\n"
        "0,a0,start,,all_gather,10,0,\n"
        "1,x0,start,,all_reduce,10,0,\n"
        "2,dx0,done,1,,,0,\n"
        "3,b0,start,,all_gather,10,0,\n"
        "4,da0,done,0,,,0,\n"
        "5,db0,done,3,,,0,\n"
        "6,a1,start,,all_gather,10,1,0\n"
        "7,b1,start,,all_gather,10,1,3\n"
        "8,da1,done,6,,,1,\n"
        "9,x1,start,,all_reduce,10,1,1\n"
        "10,dx1,done,9,,,1,\n"
        "11,db1,done,7,,,1,\n";
    static const uint32_t b[] = {1, 0, 0, 1, 0, 0, 2, 2, 0, 0, 0, 0};
    expect_job(NULL, b, csv, "node 2 (dx0) at 2 never runs: the devices wait for each other's "
                             "joined collectives in a cycle");
    /* unbucketed, the same order runs */
    static const uint32_t none[12] = {0};
    expect_job(NULL, none, csv, NULL);
}

int main(void)
{
    test_price();
    test_inductor_price();
    test_refusals();
    test_joined();
    test_joined_deadlock();
    test_lone_deadlock();
    return check_report();
}
