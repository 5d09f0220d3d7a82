/* The toolkit's bucketers (schedulers/lib/bucket.c, sb_bucket_*).
 *
 * sb_bucket_overlap: PyTorch's own unit tests of the OverlapPreservingBucketer,
 * transcribed from test/distributed/test_overlap_bucketing_unit.py
 * (TestOverlapPreservingBucketing; pytorch/pytorch@0196bc40, the research's
 * §2.4 #24-#31): each graph in the test's trace order, its hiding
 * annotations, and the bucket count its FileCheck or assertEqual expects.
 * Every collective there is 4x4 fp32 (64 bytes) and hidden exactly when
 * annotated (build_collective_info).
 *
 * sb_bucket_greedy: greedy_bucket_collective_by_mb's rules
 * (fx_passes/bucketing.py @e9f19e84), each case worked out by hand from
 * the rule it names.
 *
 * Every result must also be a schedule the harness accepts. */
#include <stdlib.h>

#include "check.h"
#include "core/core.h"
#include "core/machine.h"
#include "import/import.h"
#include "schedbench/policy.h"

#define HDR "id,name,kind,inputs,op,cost_us,out_bytes,coll,comm_bytes,group\n"
#define MAXN 32

struct run {
    int k;               /* buckets, or -1 */
    uint32_t bucket[MAXN];
    uint32_t pos[MAXN];  /* position of each node in the result */
};

/* hiding: pairs (start, hiding node), ended by a start of UINT32_MAX */
static struct run bucket_csv(const char *csv, const uint32_t *hiding, int overlap,
                             const struct sb_bucket_params *override)
{
    struct run r = {.k = -1};
    struct sb_err e;
    struct sb_graph *G = sb_csv_load_mem("bucketer.csv", csv, strlen(csv), &e);
    CHECK(G != NULL);
    if (!G) {
        fprintf(stderr, "%s\n", e.msg);
        return r;
    }
    struct sb_cost_params c;
    sb_cost_defaults(&c);
    sb_cost_apply(&c, G);
    const struct sb_graph_view *g = &G->v;
    uint32_t n = g->n_nodes, off[MAXN + 1] = {0}, hid[2 * MAXN], n_h = 0;
    for (uint32_t v = 0; v < n; v++) {
        off[v] = n_h;
        for (uint32_t i = 0; hiding && hiding[i] != UINT32_MAX; i += 2)
            if (hiding[i] == v)
                hid[n_h++] = hiding[i + 1];
    }
    off[n] = n_h;
    struct sb_bucket_params p;
    sb_bucket_defaults(&p);
    if (override)
        p = *override;
    if (hiding)
        p.hiding_off = off, p.hiding = hid;
    struct sb_schedule s;
    sb_schedule_init(&s, G, 1);
    for (uint32_t i = 0; i < n; i++)
        s.order[i] = i;
    r.k = overlap ? sb_bucket_overlap(g, s.order, &p, s.bucket)
                  : sb_bucket_greedy(g, s.order, &p, s.bucket);
    if (sb_schedule_validate(g, &s, &e)) {
        fprintf(stderr, "bucketed schedule refused: %s\n", e.msg);
        CHECK(0);
    }
    for (uint32_t i = 0; i < n; i++) {
        r.bucket[i] = s.bucket[i];
        r.pos[s.order[i]] = i;
    }
    sb_schedule_free(&s);
    sb_graph_free(G);
    return r;
}

/* ---- OverlapPreservingBucketer: PyTorch's expectations ---------------------- */

/* test_can_bucket_independent_collectives: ag1, ag2, mm1 (hides ag1), mm2
 * (hides ag2), waits: "should have 1 bucketed collective". */
static void test_independent(void)
{
    const char *csv = HDR "0,a,input,,,,64,,,\n"
                          "1,b,input,,,,64,,,\n"
                          "2,ag1,start,0,,,64,all_gather,64,1\n"
                          "3,ag2,start,1,,,64,all_gather,64,1\n"
                          "4,mm1,compute,0,mm,1,64,,,\n"
                          "5,mm2,compute,1,mm,1,64,,,\n"
                          "6,w1,done,2,,,,all_gather,,\n"
                          "7,w2,done,3,,,,all_gather,,\n"
                          "8,out,compute,6 7 4 5,add,0,4,,,\n";
    static const uint32_t hid[] = {2, 4, 3, 5, UINT32_MAX};
    struct run r = bucket_csv(csv, hid, 1, NULL);
    CHECK(r.k == 1);
    CHECK(r.bucket[2] && r.bucket[2] == r.bucket[3]);
}

/* test_cant_bucket_nested_hiding_intervals: ag2's interval inside ag1's,
 * mm1 reads ag2's wait: "should have 2 separate all_gathers". */
static void test_nested(void)
{
    const char *csv = HDR "0,a,input,,,,64,,,\n"
                          "1,b,input,,,,64,,,\n"
                          "2,ag1,start,0,,,64,all_gather,64,1\n"
                          "3,ag2,start,1,,,64,all_gather,64,1\n"
                          "4,mm2,compute,1,mm,1,64,,,\n"
                          "5,w2,done,3,,,,all_gather,,\n"
                          "6,add,compute,0 5,add,0,64,,,\n"
                          "7,mm1,compute,6 0,mm,1,64,,,\n"
                          "8,w1,done,2,,,,all_gather,,\n"
                          "9,out,compute,8 5 7 4,add,0,4,,,\n";
    static const uint32_t hid[] = {2, 7, 3, 4, UINT32_MAX};
    struct run r = bucket_csv(csv, hid, 1, NULL);
    CHECK(r.k == 0);
}

/* test_cant_bucket_ag_with_rs_hiding_interval_between[final_mm_hidden]:
 * ag1/mm1/w1, rs/mm2/w_rs, ag2/mm3/w2; rs hidden by mm2 only when True.
 * True: "Should NOT bucket - 2 separate all_gathers"; False: "Should
 * bucket - 1 bucketed all_gather".  Either way mm, mm_1, mm_2 keep their
 * order. */
static void test_rs_between(int final_mm_hidden)
{
    const char *csv = HDR "0,a,input,,,,64,,,\n"
                          "1,b,input,,,,128,,,\n"
                          "2,c,input,,,,64,,,\n"
                          "3,ag1,start,0,,,64,all_gather,64,1\n"
                          "4,mm1,compute,0,mm,1,64,,,\n"
                          "5,w1,done,3,,,,all_gather,,\n"
                          "6,rs,start,1,,,128,reduce_scatter,128,1\n"
                          "7,mm2,compute,1,mm,1,64,,,\n"
                          "8,wrs,done,6,,,,reduce_scatter,,\n"
                          "9,ag2,start,2,,,64,all_gather,64,1\n"
                          "10,mm3,compute,2,mm,1,64,,,\n"
                          "11,w2,done,9,,,,all_gather,,\n"
                          "12,out,compute,5 8 11 4 7 10,add,0,4,,,\n";
    static const uint32_t hidden[] = {3, 4, 9, 10, 6, 7, UINT32_MAX};
    static const uint32_t open[] = {3, 4, 9, 10, UINT32_MAX};
    struct run r = bucket_csv(csv, final_mm_hidden ? hidden : open, 1, NULL);
    CHECK(r.k == (final_mm_hidden ? 0 : 1));
    CHECK(final_mm_hidden || (r.bucket[3] && r.bucket[3] == r.bucket[9]));
    CHECK(r.pos[4] < r.pos[7] && r.pos[7] < r.pos[10]);
}

/* test_can_bucket_all_reduce: as the independent case, with all_reduces:
 * "should have 1 bucketed all_reduce", 2 mm. */
static void test_all_reduce(void)
{
    const char *csv = HDR "0,a,input,,,,64,,,\n"
                          "1,b,input,,,,64,,,\n"
                          "2,ar1,start,0,,,64,all_reduce,64,1\n"
                          "3,ar2,start,1,,,64,all_reduce,64,1\n"
                          "4,mm1,compute,0,mm,1,64,,,\n"
                          "5,mm2,compute,1,mm,1,64,,,\n"
                          "6,w1,done,2,,,,all_reduce,,\n"
                          "7,w2,done,3,,,,all_reduce,,\n"
                          "8,out,compute,6 7 4 5,add,0,4,,,\n";
    static const uint32_t hid[] = {2, 4, 3, 5, UINT32_MAX};
    struct run r = bucket_csv(csv, hid, 1, NULL);
    CHECK(r.k == 1);
    CHECK(r.bucket[2] && r.bucket[2] == r.bucket[3]);
}

/* test_no_cross_type_bucketing_ar_and_rs: ar1, ar2, rs1, rs2 on one group,
 * waits after, all exposed: one all_reduce and one reduce_scatter remain. */
static void test_no_cross_type(void)
{
    const char *csv = HDR "0,a,input,,,,64,,,\n"
                          "1,b,input,,,,64,,,\n"
                          "2,ar1,start,0,,,64,all_reduce,64,2\n"
                          "3,ar2,start,1,,,64,all_reduce,64,2\n"
                          "4,rs1,start,0,,,32,reduce_scatter,64,2\n"
                          "5,rs2,start,1,,,32,reduce_scatter,64,2\n"
                          "6,war1,done,2,,,,all_reduce,,\n"
                          "7,war2,done,3,,,,all_reduce,,\n"
                          "8,wrs1,done,4,,,,reduce_scatter,,\n"
                          "9,wrs2,done,5,,,,reduce_scatter,,\n"
                          "10,out,compute,6 7 8 9,add,0,4,,,\n";
    static const uint32_t none[] = {UINT32_MAX}; /* no annotation: every one exposed */
    struct run r = bucket_csv(csv, none, 1, NULL);
    CHECK(r.k == 2);
    CHECK(r.bucket[2] && r.bucket[2] == r.bucket[3]);
    CHECK(r.bucket[4] && r.bucket[4] == r.bucket[5] && r.bucket[4] != r.bucket[2]);
}

/* test_can_bucket_with_multiple_hiding_nodes: ag1 hidden by mm1 and mm2,
 * ag2 by mm2 and mm3: one bucketed all_gather, exactly 3 mm. */
static void test_multiple_hiding(void)
{
    const char *csv = HDR "0,a,input,,,,64,,,\n"
                          "1,b,input,,,,64,,,\n"
                          "2,ag1,start,0,,,64,all_gather,64,1\n"
                          "3,ag2,start,1,,,64,all_gather,64,1\n"
                          "4,mm1,compute,0,mm,1,64,,,\n"
                          "5,mm2,compute,1,mm,1,64,,,\n"
                          "6,add,compute,0 1,add,0,64,,,\n"
                          "7,mm3,compute,6,mm,1,64,,,\n"
                          "8,w1,done,2,,,,all_gather,,\n"
                          "9,w2,done,3,,,,all_gather,,\n"
                          "10,out,compute,8 9 4 5 7,add,0,4,,,\n";
    static const uint32_t hid[] = {2, 4, 2, 5, 3, 5, 3, 7, UINT32_MAX};
    struct run r = bucket_csv(csv, hid, 1, NULL);
    CHECK(r.k == 1);
    CHECK(r.bucket[2] && r.bucket[2] == r.bucket[3]);
}

/* test_can_bucket_with_convert_dtype_as_hiding_nodes: ag1 hidden by the
 * cast that feeds ag2; ag2 and ag3 hidden by mm (which reads ag1's wait).
 * FileCheck: all_gather_into_tensor (ag1 alone), wait, then one bucketed
 * all_gather (ag2 with ag3). */
static void test_convert_hiding(void)
{
    const char *csv = HDR "0,a,input,,,,64,,,\n"
                          "1,b,input,,,,64,,,\n"
                          "2,c,input,,,,64,,,\n"
                          "3,ag1,start,0,,,64,all_gather,64,1\n"
                          "4,convert1,compute,1,convert_element_type,1,32,,,\n"
                          "5,w1,done,3,,,,all_gather,,\n"
                          "6,ag2,start,4,,,32,all_gather,32,1\n"
                          "7,ag3,start,2,,,64,all_gather,64,1\n"
                          "8,mm,compute,5,mm,1,64,,,\n"
                          "9,w2,done,6,,,,all_gather,,\n"
                          "10,w3,done,7,,,,all_gather,,\n";
    static const uint32_t hid[] = {3, 4, 6, 8, 7, 8, UINT32_MAX};
    struct run r = bucket_csv(csv, hid, 1, NULL);
    CHECK(r.k == 1);
    CHECK(r.bucket[3] == 0);
    CHECK(r.bucket[6] && r.bucket[6] == r.bucket[7]);
}

/* ---- greedy_bucket_collective_by_mb: its rules, by hand ------------------- */

/* Three all_gathers whose waits are consecutive, one key, under the 2000 MB
 * cap: one bucket of three. */
static void test_greedy_run(void)
{
    const char *csv = HDR "0,a,input,,,,64,,,\n"
                          "1,ag1,start,0,,,1024,all_gather,1024,8\n"
                          "2,ag2,start,0,,,1024,all_gather,1024,8\n"
                          "3,ag3,start,0,,,1024,all_gather,1024,8\n"
                          "4,w1,done,1,,,,all_gather,,\n"
                          "5,w2,done,2,,,,all_gather,,\n"
                          "6,w3,done,3,,,,all_gather,,\n"
                          "7,out,compute,4 5 6,add,1,4,,,\n";
    struct run r = bucket_csv(csv, NULL, 0, NULL);
    CHECK(r.k == 1);
    CHECK(r.bucket[1] && r.bucket[1] == r.bucket[2] && r.bucket[2] == r.bucket[3]);
    /* a cap of 2.5 tensors closes the bucket after two (1024 + 1024 + 1024 >
     * 2560): {ag1, ag2}, then ag3 alone, which is no bucket */
    struct sb_bucket_params p;
    sb_bucket_defaults(&p);
    p.cap_bytes = 2560;
    r = bucket_csv(csv, NULL, 0, &p);
    CHECK(r.k == 1);
    CHECK(r.bucket[1] && r.bucket[1] == r.bucket[2] && r.bucket[3] == 0);
    /* all_gathers not in `kinds`: nothing */
    p.cap_bytes = 1e12;
    p.kinds = 1u << SB_COLL_REDUCE_SCATTER;
    r = bucket_csv(csv, NULL, 0, &p);
    CHECK(r.k == 0);
}

/* A wait of another key (group of 4) between them breaks the run; a
 * reduce_scatter's wait does not (the all_gather pass looks at all_gather
 * waits only). */
static void test_greedy_keys(void)
{
    const char *broken = HDR "0,a,input,,,,64,,,\n"
                             "1,ag1,start,0,,,1024,all_gather,1024,8\n"
                             "2,ag2,start,0,,,1024,all_gather,1024,4\n"
                             "3,ag3,start,0,,,1024,all_gather,1024,8\n"
                             "4,w1,done,1,,,,all_gather,,\n"
                             "5,w2,done,2,,,,all_gather,,\n"
                             "6,w3,done,3,,,,all_gather,,\n";
    CHECK(bucket_csv(broken, NULL, 0, NULL).k == 0);
    const char *rs = HDR "0,a,input,,,,64,,,\n"
                         "1,ag1,start,0,,,1024,all_gather,1024,8\n"
                         "2,rs,start,0,,,128,reduce_scatter,1024,8\n"
                         "3,ag3,start,0,,,1024,all_gather,1024,8\n"
                         "4,w1,done,1,,,,all_gather,,\n"
                         "5,w2,done,2,,,,reduce_scatter,,\n"
                         "6,w3,done,3,,,,all_gather,,\n";
    struct run r = bucket_csv(rs, NULL, 0, NULL);
    CHECK(r.k == 1);
    CHECK(r.bucket[1] && r.bucket[1] == r.bucket[3] && r.bucket[2] == 0);
}

/* A collective that descends from the bucket (ag2 reads x, which reads
 * ag1's wait) is skipped; ag3 still joins ag1.  The result is reordered so
 * the bucket can go out: ag1 and ag3 start before w1. */
static void test_greedy_descendant(void)
{
    const char *csv = HDR "0,a,input,,,,64,,,\n"
                          "1,ag1,start,0,,,1024,all_gather,1024,8\n"
                          "2,w1,done,1,,,,all_gather,,\n"
                          "3,x,compute,2,add,1,1024,,,\n"
                          "4,ag2,start,3,,,1024,all_gather,1024,8\n"
                          "5,ag3,start,0,,,1024,all_gather,1024,8\n"
                          "6,w2,done,4,,,,all_gather,,\n"
                          "7,w3,done,5,,,,all_gather,,\n";
    struct run r = bucket_csv(csv, NULL, 0, NULL);
    CHECK(r.k == 1);
    CHECK(r.bucket[1] && r.bucket[1] == r.bucket[5] && r.bucket[4] == 0);
    CHECK(r.pos[5] < r.pos[2]);
}

/* A member start whose input comes after the bucket's anchor in the order
 * (b is placed just before ag2, as the OverlapScheduler places inputs): ag1
 * and ag2 are independent and exposed, so they bucket (test_basic_all_gather_
 * bucketing's shape), and b must move up with ag2 for the bucket to go out
 * before w1.  Before the reorder pulled ancestors along, the bucket was
 * dropped (2 launches). */
static void test_input_after_anchor(int overlap)
{
    const char *csv = HDR "0,a,input,,,,64,,,\n"
                          "1,ag1,start,0,,,128,all_gather,128,2\n"
                          "2,w1,done,1,,,,all_gather,,\n"
                          "3,add1,compute,2,add,0,128,,,\n"
                          "4,b,input,,,,64,,,\n"
                          "5,ag2,start,4,,,128,all_gather,128,2\n"
                          "6,w2,done,5,,,,all_gather,,\n"
                          "7,sum,compute,3 6,add,0,128,,,\n";
    struct run r = bucket_csv(csv, NULL, overlap, NULL);
    CHECK(r.k == 1);
    CHECK(r.bucket[1] && r.bucket[1] == r.bucket[5]);
    CHECK(r.pos[4] < r.pos[5] && r.pos[5] < r.pos[2]);
}

/* A wait that feeds the other collective's hiding node, with hiding
 * derived from the order as overlap_scheduling's bucketing derives it: mm
 * reads ag1's wait.  In the graph's order (mm, then ag2's start) neither
 * collective has a hiding node and they are independent: 1 bucket, as in
 * test_input_after_anchor.  In the order an OverlapScheduler gives when it
 * prefetches ag2 to overlap mm (ag2's start before mm), mm is ag2's hiding
 * node and reads ag1's wait, so the fused wait would have to come both
 * before mm and after it: no bucket.  PyTorch refuses it twice over
 * (overlap_preserving_bucketer.py @b0b4639f): _has_ancestor_conflicts
 * ("Check if candidate hiding node conflicts with existing wait"), and
 * without that shortcut every placement in _try_timeline_position (a wait
 * placed before mm leaves ag2's hiding node outside the bucket; one placed
 * after it has the path w1 -> mm -> w2: "path exists between waits").  The
 * STG ranks' four pairs meet this rule under overlap_scheduling
 * (docs/inductor.md). */
static void test_wait_feeds_hiding(void)
{
    const char *graph_order = HDR "0,a,input,,,,64,,,\n"
                                  "1,ag1,start,0,,,128,all_gather,128,2\n"
                                  "2,w1,done,1,,,,all_gather,,\n"
                                  "3,mm,compute,2,mm,1,128,,,\n"
                                  "4,b,input,,,,64,,,\n"
                                  "5,ag2,start,4,,,128,all_gather,128,2\n"
                                  "6,w2,done,5,,,,all_gather,,\n"
                                  "7,sum,compute,3 6,add,0,128,,,\n";
    struct run r = bucket_csv(graph_order, NULL, 1, NULL);
    CHECK(r.k == 1);
    CHECK(r.bucket[1] && r.bucket[1] == r.bucket[5]);
    const char *prefetched = HDR "0,a,input,,,,64,,,\n"
                                 "1,ag1,start,0,,,128,all_gather,128,2\n"
                                 "2,w1,done,1,,,,all_gather,,\n"
                                 "3,b,input,,,,64,,,\n"
                                 "4,ag2,start,3,,,128,all_gather,128,2\n"
                                 "5,mm,compute,2,mm,1,128,,,\n"
                                 "6,w2,done,4,,,,all_gather,,\n"
                                 "7,sum,compute,5 6,add,0,128,,,\n";
    r = bucket_csv(prefetched, NULL, 1, NULL);
    CHECK(r.k == 0);
}

/* Two all-gathers of one group size with no device of their own, on a
 * machine of two: where the schedule puts them decides whether they can be
 * one bucket (a bucket cannot span devices).  Placed on devices 0 and 1,
 * both bucketers keyed by the schedule's devices make no bucket and the
 * validator accepts the schedule; placed both on 0, one bucket of the two.
 * Keyed by the pre-assigned device (-1 for both) the first placement would
 * get a bucket the validator refuses. */
static void test_placement_keys(void)
{
    const char *csv = "# devices=2\n" HDR "0,a,input,,,,64,,,\n"
                      "1,ag1,start,0,,,64,all_gather,64,2\n"
                      "2,ag2,start,0,,,64,all_gather,64,2\n"
                      "3,w1,done,1,,,,all_gather,,\n"
                      "4,w2,done,2,,,,all_gather,,\n";
    struct sb_err e;
    struct sb_graph *G = sb_csv_load_mem("placed.csv", csv, strlen(csv), &e);
    CHECK(G != NULL);
    if (!G)
        return;
    struct sb_machine *m = NULL;
    CHECK(sb_machine_of_graph(G, &m, &e) == 0);
    for (int overlap = 0; overlap < 2; overlap++)
        for (int apart = 0; apart < 2; apart++) {
            struct sb_schedule s;
            sb_schedule_init(&s, G, 2);
            for (uint32_t i = 0; i < 5; i++)
                s.order[i] = i;
            s.device[2] = s.device[4] = apart; /* ag2 and its wait */
            struct sb_bucket_params p;
            sb_bucket_defaults(&p);
            p.device = s.device;
            int k = overlap ? sb_bucket_overlap(&G->v, s.order, &p, s.bucket)
                            : sb_bucket_greedy(&G->v, s.order, &p, s.bucket);
            CHECK(k == (apart ? 0 : 1));
            CHECK(apart ? !s.bucket[1] && !s.bucket[2] : s.bucket[1] && s.bucket[1] == s.bucket[2]);
            if (sb_schedule_validate(&G->v, &s, &e)) {
                fprintf(stderr, "placed.csv: %s\n", e.msg);
                CHECK(0);
            }
            sb_schedule_free(&s);
        }
    sb_machine_free(m);
    sb_graph_free(G);
}

int main(void)
{
    test_placement_keys();
    test_input_after_anchor(1);
    test_wait_feeds_hiding();
    test_input_after_anchor(0);
    test_independent();
    test_nested();
    test_rs_between(1);
    test_rs_between(0);
    test_all_reduce();
    test_no_cross_type();
    test_multiple_hiding();
    test_convert_hiding();
    test_greedy_run();
    test_greedy_keys();
    test_greedy_descendant();
    return check_report();
}
