/* The makespan lower bound (harness/src/core/bound.c, docs/cost-model.md "Lower
 * bound"): small graphs whose bound is worked out by hand below, then the
 * property that makes it a bound: no schedule beats it, neither any built-in
 * policy's nor random topological orders, on every corpus workload under
 * several resource configurations. */
#include <stdlib.h>

#include "check.h"
#include "core/core.h"
#include "import/import.h"
#include "core/machine.h"
#include "cmd/run.h"

#define HDR "id,name,kind,inputs,op,cost_us,out_bytes,coll,comm_us\n"

static struct sb_graph *graph(const char *csv)
{
    struct sb_err e;
    struct sb_cost_params c;
    struct sb_graph *g = sb_csv_load_mem("bound.csv", csv, strlen(csv), &e);
    if (!g) {
        fprintf(stderr, "%s\n", e.msg);
        return NULL;
    }
    sb_cost_defaults(&c);
    sb_cost_apply(&c, g);
    return g;
}

static double bound(const struct sb_graph *g, const char *sim)
{
    struct sb_sim_config c;
    struct sb_err e;
    sb_sim_defaults(&c);
    if (sim && sb_sim_parse(&c, sim, &e)) {
        fprintf(stderr, "%s\n", e.msg);
        return -1;
    }
    return sb_sim_lower_bound(&g->v, &c);
}

/* a (5) feeds two 10 us collectives whose dones feed b (3). */
static void test_head_work_tail(void)
{
    struct sb_graph *g = graph(HDR "0,a,compute,,mm,5,1,,\n"
                                   "1,s1,start,0,ag,,1,all_gather,10\n"
                                   "2,s2,start,0,rs,,1,reduce_scatter,10\n"
                                   "3,d1,done,1,,,,,\n"
                                   "4,d2,done,2,,,,,\n"
                                   "5,b,compute,3 4,mm,3,1,,\n");
    if (!g)
        { CHECK(0); return; }
    /* critical path a 5 + one collective 10 + b 3 = 18; the one shared slot
     * cannot start before a ends (head 5), carries 10 + 10, and b must follow
     * the last (tail 3): 5 + 20 + 3 = 28 */
    CHECK_NEAR(bound(g, NULL), 28);
    /* two slots: 5 + 20 / 2 + 3 = 18, the critical path again */
    CHECK_NEAR(bound(g, "inflight=2"), 18);
    /* one resource per type, one slot each: 5 + 10 + 3 = 18 */
    CHECK_NEAR(bound(g, "all_gather=1"), 18);
    sb_graph_free(g);
}

/* A 10 us collective from an input gates x (5) and y (5); w (1) is free. */
static void test_compute_head(void)
{
    struct sb_graph *g = graph(HDR "0,i,input,,,,1,,\n"
                                   "1,s,start,0,ag,,1,all_gather,10\n"
                                   "2,d,done,1,,,,,\n"
                                   "3,x,compute,2,mm,5,1,,\n"
                                   "4,y,compute,2,mm,5,1,,\n"
                                   "5,w,compute,,mm,1,1,,\n");
    if (!g)
        { CHECK(0); return; }
    /* critical path 10 + 5 = 15, total compute 11; but x and y cannot begin
     * before 10 and share one stream: 10 + 5 + 5 = 20 */
    CHECK_NEAR(bound(g, NULL), 20);
    sb_graph_free(g);
}

/* x (5) and y (5) both feed one 10 us collective; w (1) is free. */
static void test_compute_tail(void)
{
    struct sb_graph *g = graph(HDR "0,x,compute,,mm,5,1,,\n"
                                   "1,y,compute,,mm,5,1,,\n"
                                   "2,w,compute,,mm,1,1,,\n"
                                   "3,s,start,0 1,ag,,1,all_gather,10\n"
                                   "4,d,done,3,,,,,\n");
    if (!g)
        { CHECK(0); return; }
    /* critical path 5 + 10 = 15; x and y share the stream (10) and 10 us of
     * collective must follow both: 0 + 10 + 10 = 20 */
    CHECK_NEAR(bound(g, NULL), 20);
    sb_graph_free(g);
}

/* Edge latency (the approx model's 1 per edge) enters head and tail too. */
static void test_latency(void)
{
    struct sb_graph *g = graph(HDR "0,a,compute,,mm,5,1,,\n"
                                   "1,s1,start,0,ag,,1,all_gather,10\n"
                                   "2,s2,start,0,rs,,1,reduce_scatter,10\n"
                                   "3,d1,done,1,,,,,\n"
                                   "4,d2,done,2,,,,,\n"
                                   "5,b,compute,3 4,mm,3,1,,\n");
    struct sb_sim_config c;
    if (!g)
        { CHECK(0); return; }
    sb_sim_defaults(&c);
    c.edge_lat_us = 1;
    /* head: a 5 + edge 1 = 6; tail: edge d->b 1 + b 3 = 4: 6 + 20 + 4 = 30 */
    CHECK_NEAR(sb_sim_lower_bound(&g->v, &c), 30);
    sb_graph_free(g);
}

/* Issue 42: the tail over after edges (bound.c's backward pass, linear in the
 * edges).  Two 10 us collectives from an input; b (3) reads d2 and is
 * ordered after d1 by three repeated after edges; every other edge costs 1.
 * Head: the starts issue at 0 + 1 = 1.  Tail of d2: 1 + 3 = 4; of d1: its
 * edges to b are all after edges, so no latency: 0 + 3 = 3.  One shared
 * slot: 1 + 20 + min(3, 4) = 24 (critical path 1 + 10 + 1 + 3 = 15).  With
 * one input edge d1 -> b among the after edges, d1 -> b carries the latency:
 * 1 + 20 + 4 = 25. */
static void test_after_edges(void)
{
    static const char *const csv[2] = {
        "id,name,kind,inputs,op,cost_us,coll,comm_us,after\n"
        "0,i,input,,,,,,\n1,s1,start,0,ag,,all_gather,10,\n2,s2,start,0,rs,,reduce_scatter,10,\n"
        "3,d1,done,1,,,,,\n4,d2,done,2,,,,,\n5,b,compute,4,mm,3,,,3 3 3\n",
        "id,name,kind,inputs,op,cost_us,coll,comm_us,after\n"
        "0,i,input,,,,,,\n1,s1,start,0,ag,,all_gather,10,\n2,s2,start,0,rs,,reduce_scatter,10,\n"
        "3,d1,done,1,,,,,\n4,d2,done,2,,,,,\n5,b,compute,4 3,mm,3,,,3 3\n"};
    static const double want[2] = {24, 25};
    for (int k = 0; k < 2; k++) {
        struct sb_graph *g = graph(csv[k]);
        struct sb_sim_config c;
        if (!g) {
            CHECK(0);
            continue;
        }
        sb_sim_defaults(&c);
        c.edge_lat_us = 1;
        CHECK_NEAR(sb_sim_lower_bound(&g->v, &c), want[k]);
        sb_graph_free(g);
    }
}

/* Issue 23, 3: on a one-device machine whose speed is not 1, or with a
 * cost_us.<device> column, the bound uses the device's time t(v, 0) like the
 * simulator, not the file's cost_us. */
static void test_one_fast_device(void)
{
    static const char *const csv[] = {
        "id,name,kind,inputs,op,cost_us,out_bytes,coll,comm_us\n"
        "0,a,compute,,mm,5,1,,\n"
        "1,s1,start,0,ag,,1,all_gather,10\n"
        "2,s2,start,0,rs,,1,reduce_scatter,10\n"
        "3,d1,done,1,,,,,\n"
        "4,d2,done,2,,,,,\n"
        "5,b,compute,3 4,mm,3,1,,\n",
        "id,name,kind,inputs,op,cost_us,out_bytes,coll,comm_us,cost_us.gpu0\n"
        "0,a,compute,,mm,5,1,,,0.5\n"
        "1,s1,start,0,ag,,1,all_gather,10,\n"
        "2,s2,start,0,rs,,1,reduce_scatter,10,\n"
        "3,d1,done,1,,,,,,\n"
        "4,d2,done,2,,,,,,\n"
        "5,b,compute,3 4,mm,3,1,,,\n"};
    /* speed 4: a 5 / 4 = 1.25, b 3 / 4 = 0.75; collectives do not scale.
     * Bound: head 1.25 + 20 on the one slot + tail 0.75 = 22.  File order:
     * a 0..1.25, s1 1.25..11.25, s2 11.25..21.25, b 21.25..22: 22, optimal.
     * With the file's cost_us the bound was 28, above the makespan.
     * The column gives a 0.5 (b keeps 0.75): 0.5 + 20 + 0.75 = 21.25, and
     * the file order runs a 0..0.5, s1 0.5..10.5, s2 10.5..20.5, b to 21.25. */
    static const double want[] = {22, 21.25};
    struct sb_err e;
    struct sb_machine *m = sb_machine_load(SB_TEST_DATA "/one_fast.yaml", &e);
    CHECK(m != NULL);
    for (int k = 0; k < 2 && m; k++) {
        struct sb_graph *g = graph(csv[k]);
        CHECK(g && sb_machine_apply(m, g, &e) == 0);
        if (!g)
            continue;
        struct sb_schedule s;
        struct sb_sim_config c;
        struct sb_sim_result r;
        sb_sim_defaults(&c);
        sb_schedule_init(&s, g, 1);
        for (uint32_t i = 0; i < g->v.n_nodes; i++)
            s.order[i] = i;
        CHECK(sb_schedule_validate(&g->v, &s, &e) == 0);
        sb_sim_run(g, &s, &c, &r);
        CHECK_NEAR(r.makespan_us, want[k]);
        CHECK_NEAR(r.makespan_lb_us, want[k]);
        CHECK_NEAR(bound(g, NULL), want[k]);
        sb_sim_result_free(&r);
        sb_schedule_free(&s);
        sb_graph_free(g);
    }
    sb_machine_free(m);
}

/* Several devices: the head + work / slots + tail term over every device's
 * slots.  two_dev.yaml: gpu1 twice as fast, so a takes 10 / 2 = 5 at best;
 * three all_gathers of 20 us wait for it, one collective at a time per device
 * (the default), so two slots.  Head 5, work 60 over 2 slots, tail 0: 35.
 * Without the term: critical path 5 + 20 = 25, compute 5 / 2, collectives
 * 60 / 2 = 30.  Any placement runs the three after 5 on two lanes, one lane
 * twice: at least 5 + 40 = 45 (copies only add), above 35. */
static void test_spread_head(void)
{
    struct sb_err e;
    struct sb_machine *m = sb_machine_load(SB_TEST_DATA "/two_dev.yaml", &e);
    struct sb_graph *g = graph(HDR "0,a,compute,,mm,10,1,,\n"
                                   "1,s1,start,0,ag,,1,all_gather,20\n"
                                   "2,s2,start,0,ag,,1,all_gather,20\n"
                                   "3,s3,start,0,ag,,1,all_gather,20\n"
                                   "4,d1,done,1,,,,,\n"
                                   "5,d2,done,2,,,,,\n"
                                   "6,d3,done,3,,,,,\n");
    CHECK(m && g && sb_machine_apply(m, g, &e) == 0);
    if (m && g) {
        struct sb_sim_config c;
        sb_sim_defaults(&c);
        CHECK_NEAR(sb_sim_lower_bound(&g->v, &c), 35);
        for (uint32_t mask = 0; mask < 16; mask++) { /* every placement of a, s1..s3 */
            struct sb_schedule s;
            struct sb_sim_result r;
            sb_schedule_init(&s, g, 2);
            for (uint32_t i = 0; i < g->v.n_nodes; i++)
                s.order[i] = i;
            for (uint32_t i = 0; i < 4; i++)
                s.device[i] = (int32_t)((mask >> i) & 1);
            for (uint32_t i = 4; i < 7; i++)
                s.device[i] = s.device[i - 3];
            CHECK(sb_schedule_validate(&g->v, &s, &e) == 0);
            sb_sim_run(g, &s, &c, &r);
            CHECK(r.makespan_us >= 45 - 1e-9);
            sb_sim_result_free(&r);
            sb_schedule_free(&s);
        }
    }
    sb_graph_free(g);
    sb_machine_free(m);
}

/* ---- no schedule beats the bound ------------------------------------------ */

static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* A random topological order (Kahn's algorithm, random pick among ready). */
static void random_order(const struct sb_graph_view *g, uint64_t *seed, uint32_t *order)
{
    uint32_t n = g->n_nodes, n_ready = 0;
    uint32_t *indeg = calloc(n, sizeof *indeg), *ready = malloc(n * sizeof *ready);
    for (uint32_t v = 0; v < n; v++) {
        indeg[v] = g->pred_off[v + 1] - g->pred_off[v];
        if (!indeg[v])
            ready[n_ready++] = v;
    }
    for (uint32_t i = 0; i < n; i++) {
        uint32_t k = (uint32_t)(rng_next(seed) % n_ready), v = ready[k];
        ready[k] = ready[--n_ready];
        order[i] = v;
        for (uint32_t e = g->succ_off[v]; e < g->succ_off[v + 1]; e++)
            if (--indeg[g->succ[e]] == 0)
                ready[n_ready++] = g->succ[e];
    }
    free(indeg);
    free(ready);
}

static const char *const sims[] = {"inflight=1", "inflight=2", "all_gather=1,reduce_scatter=2"};

/* 0 when the schedule is valid and no faster than the bound under every sim. */
static int holds(const struct sb_graph *g, const struct sb_schedule *s, const char *what)
{
    struct sb_err e;
    int bad = 0;
    if (sb_schedule_validate(&g->v, s, &e)) {
        fprintf(stderr, "%s %s: invalid: %s\n", g->name, what, e.msg);
        return 1;
    }
    for (size_t k = 0; k < sizeof sims / sizeof *sims; k++) {
        struct sb_sim_config c;
        struct sb_sim_result r;
        sb_sim_defaults(&c);
        sb_sim_parse(&c, sims[k], &e);
        sb_sim_run(g, s, &c, &r);
        if (r.makespan_us < r.makespan_lb_us * (1 - 1e-12)) {
            fprintf(stderr, "%s %s %s: makespan %.3f < bound %.3f\n", g->name, what,
                    sims[k], r.makespan_us, r.makespan_lb_us);
            bad++;
        }
        sb_sim_result_free(&r);
    }
    return bad;
}

/* Two devices (tests/data/heft.yaml): heft's placement and a random order
 * with random devices must not beat the bound either. */
static int two_devices(struct sb_graph *g)
{
    struct sb_err e;
    struct sb_machine *m = sb_machine_load(SB_TEST_DATA "/heft.yaml", &e);
    uint64_t seed = 0x2545f4914f6cdd1dull;
    int bad = 0;
    if (!m || sb_machine_apply(m, g, &e)) {
        fprintf(stderr, "%s: %s\n", g->name, e.msg);
        sb_machine_free(m);
        return 1;
    }
    for (int k = 0; k < 2; k++) {
        struct sb_schedule s;
        struct sb_sched sc;
        sb_schedule_init(&s, g, 2);
        if (k == 0) {
            if (sb_sched_parse(&sc, "heft", &e) || sb_sched_run(&sc, g, &s, &e)) {
                fprintf(stderr, "%s heft: %s\n", g->name, e.msg);
                bad++;
            } else {
                bad += holds(g, &s, "heft");
            }
            sb_sched_free(&sc);
        } else {
            random_order(&g->v, &seed, s.order);
            for (uint32_t v = 0; v < g->v.n_nodes; v++)
                s.device[v] = (int32_t)(rng_next(&seed) % 2);
            bad += holds(g, &s, "random order on two devices");
        }
        sb_schedule_free(&s);
    }
    sb_machine_free(m);
    return bad;
}

static int corpus_graph(const char *path)
{
    struct sb_err e;
    struct sb_cost_params cp;
    struct sb_graph *g = sb_graph_load(path, &e);
    uint64_t seed = 0x9e3779b97f4a7c15ull;
    int bad = 0;
    if (!g) {
        fprintf(stderr, "%s\n", e.msg);
        return 1;
    }
    sb_cost_defaults(&cp);
    sb_cost_apply(&cp, g);
    /* placement workloads run on the machine they name (docs/machines.md) */
    struct sb_machine *m = NULL;
    if (sb_machine_of_graph(g, &m, &e)) {
        fprintf(stderr, "%s\n", e.msg);
        sb_graph_free(g);
        return 1;
    }
    uint32_t nd = g->v.machine->n_devices;
    for (uint32_t p = 0; p < sb_registry_count(); p++) {
        struct sb_sched sc;
        struct sb_schedule s;
        sb_schedule_init(&s, g, nd);
        if (sb_sched_parse(&sc, sb_registry_at(p)->name, &e) ||
            sb_sched_run(&sc, g, &s, &e)) {
            fprintf(stderr, "%s %s: %s\n", g->name, sb_registry_at(p)->name, e.msg);
            bad++;
        } else {
            bad += holds(g, &s, sb_registry_at(p)->name);
        }
        sb_sched_free(&sc);
        sb_schedule_free(&s);
    }
    for (int k = 0; k < 3; k++) {
        struct sb_schedule s;
        sb_schedule_init(&s, g, nd);
        random_order(&g->v, &seed, s.order);
        bad += holds(g, &s, "random order");
        sb_schedule_free(&s);
    }
    if (!m) /* a placement workload was just checked on its own machine */
        bad += two_devices(g);
    sb_graph_free(g);
    sb_machine_free(m);
    return bad;
}

static void test_corpus(void)
{
    struct sb_paths w = {0};
    struct sb_err e;
    const char *dir = SB_CORPUS;
    int bad = 0;
    if (sb_paths_add(&w, dir, &e)) {
        fprintf(stderr, "%s\n", e.msg);
        CHECK(0);
        return;
    }
    CHECK(w.n >= 5);
    for (uint32_t i = 0; i < w.n; i++)
        bad += corpus_graph(w.path[i]);
    sb_paths_free(&w);
    CHECK_EQ_U(bad, 0);
}

int main(void)
{
    sb_registry_add_builtins();
    test_head_work_tail();
    test_compute_head();
    test_compute_tail();
    test_latency();
    test_after_edges();
    test_one_fast_device();
    test_spread_head();
    test_corpus();
    sb_registry_clear();
    return check_report();
}
