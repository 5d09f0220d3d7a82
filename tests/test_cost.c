/* The analytical cost model's edge cases (issue 13, docs/cost-model.md): key
 * order, which types bw_gbps reaches, what a group of one makes free, and the
 * refusal of a malformed "# ranks=".  Expected durations are worked out from
 * the documented formula: steps * lat_us + moved bytes / (GB/s * 1e3). */
#include <stdlib.h>

#include "check.h"
#include "core/core.h"
#include "import/import.h"

static struct sb_graph *graph(const char *csv, struct sb_err *e)
{
    return sb_csv_load_mem("cost.csv", csv, strlen(csv), e);
}

static void test_key_order(void)
{
    struct sb_cost_params a, b;
    struct sb_err e;
    sb_cost_defaults(&a);
    sb_cost_defaults(&b);
    CHECK(sb_cost_parse(&a, "bw_all_reduce=10,bw_gbps=100", &e) == 0);
    CHECK(sb_cost_parse(&b, "bw_gbps=100,bw_all_reduce=10", &e) == 0);
    CHECK_NEAR(a.bus_gbps[SB_COLL_ALL_REDUCE], 10);
    CHECK_NEAR(b.bus_gbps[SB_COLL_ALL_REDUCE], 10);
    CHECK_NEAR(a.bus_gbps[SB_COLL_ALL_GATHER], 100);
    CHECK_NEAR(b.bus_gbps[SB_COLL_ALL_GATHER], 100);
    /* a later --cost flag's bw_gbps must not undo an earlier per-type key */
    CHECK(sb_cost_parse(&a, "bw_gbps=7", &e) == 0);
    CHECK_NEAR(a.bus_gbps[SB_COLL_ALL_REDUCE], 10);
    CHECK_NEAR(a.bus_gbps[SB_COLL_REDUCE_SCATTER], 7);
}

static void test_network_only(void)
{
    struct sb_cost_params c;
    struct sb_err e;
    sb_cost_defaults(&c);
    CHECK(sb_cost_parse(&c, "bw_gbps=100", &e) == 0);
    for (int t = 1; t < SB_COLL_COUNT; t++) {
        if (t == SB_COLL_SEND_HOST || t == SB_COLL_RECV_HOST)
            CHECK_NEAR(c.bus_gbps[t], 25); /* PCIe default, docs */
        else if (t == SB_COLL_COPY)
            CHECK_NEAR(c.bus_gbps[t], 1500); /* HBM default, docs */
        else
            CHECK_NEAR(c.bus_gbps[t], 100);
    }
    /* a host or copy bandwidth is still settable by its own key */
    CHECK(sb_cost_parse(&c, "bw_copy=900,bw_send_host=12", &e) == 0);
    CHECK_NEAR(c.bus_gbps[SB_COLL_COPY], 900);
    CHECK_NEAR(c.bus_gbps[SB_COLL_SEND_HOST], 12);
}

/* 1 MB per start, group 1 or none, default constants (lat 2 us, 40 GB/s
 * network, 1500 GB/s copy). */
static void test_group_of_one(void)
{
    struct sb_err e;
    struct sb_cost_params c;
    struct sb_graph *g = graph("id,name,kind,inputs,coll,comm_bytes,group\n"
                               "0,ar,start,,all_reduce,1000000,1\n"
                               "1,ag,start,,all_gather,1000000,\n"
                               "2,sd,start,,send,1000000,1\n"
                               "3,cp,start,,copy,1000000,\n"
                               "4,ar4,start,,all_reduce,1000000,4\n"
                               "5,d0,done,0,,,\n6,d1,done,1,,,\n7,d2,done,2,,,\n"
                               "8,d3,done,3,,,\n9,d4,done,4,,,\n",
                               &e);
    if (!g) {
        fprintf(stderr, "%s\n", e.msg);
        CHECK(0);
        return;
    }
    sb_cost_defaults(&c);
    sb_cost_apply(&c, g);
    /* ring types with one rank move nothing */
    CHECK_NEAR(g->v.dur_us[0], 0);
    CHECK_NEAR(g->v.dur_us[1], 0);
    /* a send is one hop whatever the group: 2 + 1e6 / 40e3 = 27 */
    CHECK_NEAR(g->v.dur_us[2], 27);
    /* a copy without ranks: 2 + 1e6 / 1.5e6 */
    CHECK_NEAR(g->v.dur_us[3], 2 + 1e6 / 1.5e6);
    /* all_reduce over 4: 2*3 steps * 2 + (2*3/4 * 1e6) / 40e3 = 12 + 37.5 */
    CHECK_NEAR(g->v.dur_us[4], 49.5);
    sb_graph_free(g);
}

/* The types appended in issue 39, read from CSV as every consumer reads
 * them, under the defaults (2 us a step, 40 GB/s):
 *   ragged_all_to_all over 4 ranks, n = 1e6: as all_to_all, 3 steps and
 *     3/4 * 1e6 bytes: 6 + 750000 / 40e3 = 6 + 18.75 = 24.75
 *   collective_broadcast over 4 ranks, n = 1e6: 3 steps, the whole buffer
 *     once: 6 + 1e6 / 40e3 = 31
 *   either over one rank: 0 */
static void test_new_types(void)
{
    struct sb_err e;
    struct sb_cost_params c;
    struct sb_graph *g = graph("id,name,kind,inputs,coll,comm_bytes,group\n"
                               "0,ra,start,,ragged_all_to_all,1000000,4\n"
                               "1,cb,start,,collective_broadcast,1000000,4\n"
                               "2,cb1,start,,collective_broadcast,1000000,1\n"
                               "3,d0,done,0,,,\n4,d1,done,1,,,\n5,d2,done,2,,,\n",
                               &e);
    if (!g) {
        fprintf(stderr, "%s\n", e.msg);
        CHECK(0);
        return;
    }
    CHECK_EQ_U(g->v.coll[0], SB_COLL_RAGGED_ALL_TO_ALL);
    CHECK_EQ_U(g->v.coll[4], SB_COLL_COLLECTIVE_BROADCAST);
    sb_cost_defaults(&c);
    sb_cost_apply(&c, g);
    CHECK_NEAR(g->v.dur_us[0], 24.75);
    CHECK_NEAR(g->v.dur_us[1], 31);
    CHECK_NEAR(g->v.dur_us[2], 0);
    sb_graph_free(g);
    /* and bw_<type> reaches each */
    sb_cost_defaults(&c);
    CHECK(sb_cost_parse(&c, "bw_ragged_all_to_all=10,bw_collective_broadcast=20", &e) == 0);
    CHECK_NEAR(c.bus_gbps[SB_COLL_RAGGED_ALL_TO_ALL], 10);
    CHECK_NEAR(c.bus_gbps[SB_COLL_COLLECTIVE_BROADCAST], 20);
}

static void test_ranks_meta(void)
{
    static const char *const bad[] = {"# ranks =4", "# ranks=4.0", "# ranks=4x",
                                      "# ranks=abc", "# ranks=0", "# ranks=-4",
                                      "# ranks=", "# ranks=4294967296"};
    char buf[256];
    struct sb_err e;
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        snprintf(buf, sizeof buf,
                 "# name=x\n%s\nid,name,kind,inputs,coll,comm_bytes\n"
                 "0,ag,start,,all_gather,4000000\n1,d,done,0,,\n",
                 bad[i]);
        struct sb_graph *g = graph(buf, &e);
        CHECK(g == NULL);
        if (g) {
            fprintf(stderr, "accepted '%s'\n", bad[i]);
            sb_graph_free(g);
        } else {
            CHECK_CONTAINS(e.msg, "cost.csv:2:");
            CHECK_CONTAINS(e.msg, "ranks");
        }
    }
    /* a good one sets the group: 3 steps * 2 + (3/4 * 4e6) / 40e3 = 6 + 75 */
    struct sb_graph *g = graph("# ranks=4\nid,name,kind,inputs,coll,comm_bytes\n"
                               "0,ag,start,,all_gather,4000000\n1,d,done,0,,\n",
                               &e);
    CHECK(g != NULL);
    if (g) {
        struct sb_cost_params c;
        sb_cost_defaults(&c);
        sb_cost_apply(&c, g);
        CHECK_NEAR(g->v.dur_us[0], 81);
        sb_graph_free(g);
    }
}

int main(void)
{
    test_key_order();
    test_network_only();
    test_group_of_one();
    test_new_types();
    test_ranks_meta();
    return check_report();
}
