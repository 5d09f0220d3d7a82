/* The overlap, memfallback and membound policies (issue 5) on hand-made graphs
 * whose right decision can be worked out on paper, then a differential check:
 * every policy's schedule of every test graph and of random graphs passes the
 * harness validator, is deterministic, and membound stays under its cap.
 *
 * Sizes are in GiB (G = 2^30 bytes).  Times follow the simulator's rules
 * (docs/cost-model.md): a start returns at once, its collective runs on the one
 * shared slot, a done blocks the stream until the collective has finished.
 * Memory follows the memory model: a buffer lives from its producer through its
 * last use, a collective's inputs until its done, weight/output buffers forever. */
#include <stdlib.h>

#include "check.h"
#include "core/core.h"
#include "core/machine.h"
#include "import/import.h"
/* the model itself, for the count of fallback choices the plugin does not report */
#include "schedbench/policy.h"

#define G 1073741824ull

static struct sb_graph *load(const char *file)
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
    sb_cost_apply(&c, g);
    return g;
}

/* Runs scheduler `spec` on g into s (initialised here); 0 when it ran and its
 * schedule is valid. */
static int schedule(const struct sb_graph *g, const char *spec, struct sb_schedule *s)
{
    struct sb_sched sc;
    struct sb_err e;
    sb_schedule_init(s, g, 1);
    if (sb_sched_parse(&sc, spec, &e)) {
        fprintf(stderr, "%s: %s\n", spec, e.msg);
        return -1;
    }
    int rc = sb_sched_run(&sc, g, s, &e);
    sb_sched_free(&sc);
    if (rc) {
        fprintf(stderr, "%s: %s\n", spec, e.msg);
        return -1;
    }
    if (sb_schedule_validate(&g->v, s, &e)) {
        fprintf(stderr, "%s: invalid: %s\n", spec, e.msg);
        return -1;
    }
    return 0;
}

struct outcome {
    uint32_t order[16];
    double makespan_us, exposed_us;
    uint64_t peak_bytes;
    uint32_t peak_pos;
};

/* Schedules and simulates a graph of at most 16 nodes. */
static int measure(const struct sb_graph *g, const char *spec, struct outcome *o)
{
    struct sb_schedule s;
    struct sb_sim_config c;
    struct sb_sim_result r;
    memset(o, 0, sizeof *o);
    if (g->v.n_nodes > 16 || schedule(g, spec, &s)) {
        if (g->v.n_nodes <= 16)
            sb_schedule_free(&s);
        return -1;
    }
    sb_sim_defaults(&c);
    sb_sim_run(g, &s, &c, &r);
    memcpy(o->order, s.order, g->v.n_nodes * sizeof *s.order);
    o->makespan_us = r.makespan_us;
    o->exposed_us = r.exposed_comm_us;
    o->peak_bytes = r.peak_mem_bytes;
    o->peak_pos = r.peak_pos;
    sb_sim_result_free(&r);
    sb_schedule_free(&s);
    return 0;
}

static int same_order(const struct outcome *o, const uint32_t *want, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        if (o->order[i] != want[i]) {
            fprintf(stderr, "  position %u holds %u, expected %u\n", i, o->order[i], want[i]);
            return 0;
        }
    return 1;
}

/* ovl_deferred_wait.csv: 0 a (compute 10us, 4G), 1 rs (reduce_scatter of a,
 * 30us, 0.5G), 2 rs.done, 3 o (output view of rs.done), 4 b (compute 10us, 1G),
 * 5 c (compute 10us reading b, 1G, output).
 *
 * Original order: a 0..10, rs 10..40, the done waits 30, b 40..50, c 50..60.
 * Memory by position: a 4, rs 4.5, done 4.5 (a dies), o 0.5, b 1.5, c 2.5:
 * peak 4.5G at 1.
 *
 * overlap: a first (domination 0); at a the reduce_scatter cannot start (a is
 * its input); rs waits in the off-path queue until an on-path node past its
 * index runs.  At b (budget 10us) rs is prefetched and 10 of its 30us hidden;
 * its wait is exposed, so it stays in the off-path queue; c hides 10 more; the
 * wait, still exposed, goes last, then o.  Order a rs b c rs.done o.  Memory:
 * a 4, rs 4.5, b 5.5, c 6.5 (b dies), done 5.5 (a dies), o 1.5: peak 6.5G at 3,
 * the deferred wait keeping a's 4G under b and c.  Time: rs 10..40, b 10..20,
 * c 20..30, done waits 30..40: makespan 40, exposed 10.
 *
 * overlap:prefetch=0: rs only from the off-path queue, once b (index 4 > 1) has
 * run: a b rs c rs.done o.  Memory a 4, b 5, rs 5.5, c 6.5: peak 6.5G at 3.
 * Time: rs 20..50, c 20..30, the done waits 30..50: makespan 50, exposed 20. */
static void test_deferred_wait(void)
{
    struct sb_graph *g = load("ovl_deferred_wait.csv");
    struct outcome o;
    if (!g) {
        CHECK(0);
        return;
    }
    static const uint32_t orig[] = {0, 1, 2, 3, 4, 5};
    CHECK(measure(g, "original", &o) == 0 && same_order(&o, orig, 6));
    CHECK_EQ_U(o.peak_bytes, 9 * G / 2);
    CHECK_EQ_U(o.peak_pos, 1);
    CHECK_NEAR(o.exposed_us, 30);

    static const uint32_t ovl[] = {0, 1, 4, 5, 2, 3};
    CHECK(measure(g, "overlap", &o) == 0 && same_order(&o, ovl, 6));
    CHECK_EQ_U(o.peak_bytes, 13 * G / 2);
    CHECK_EQ_U(o.peak_pos, 3);
    CHECK_NEAR(o.makespan_us, 40);
    CHECK_NEAR(o.exposed_us, 10);

    static const uint32_t nopf[] = {0, 4, 1, 5, 2, 3};
    CHECK(measure(g, "overlap:prefetch=0", &o) == 0 && same_order(&o, nopf, 6));
    CHECK_EQ_U(o.peak_bytes, 13 * G / 2);
    CHECK_NEAR(o.makespan_us, 50);
    CHECK_NEAR(o.exposed_us, 20);
    sb_graph_free(g);
}

/* memfallback on ovl_deferred_wait.csv.  The original profile between compute
 * nodes: up to a 4G, from a through b max(4, 4.5, 4.5, 0.5, 1.5) = 4.5G, from b
 * through c max(1.5, 2.5) = 2.5G, after c 2.5G.
 *
 * It runs as overlap through b (memory 4G after a, under 4.5G + headroom).
 * After b, with two compute nodes done, memory is 5.5G against 2.5G + headroom:
 * the fallback engages iff headroom < 3G, and takes the ready node first in
 * the original order, rs.done (2): a b... order a rs b rs.done c o, memory a 4,
 * rs 4.5, b 5.5, done 5.5 (a dies), c 2.5: peak 5.5G at 2.  Time: the done waits
 * 20..40, c 40..50: makespan 50, exposed 20.  With headroom = 3G exactly it is
 * not over (5.5 > 5.5 is false), after c neither (5.5 against 2.5 + 3): overlap.
 *
 * rule=peak: the limit is the original peak 4.5G + max(headroom, 5% of 4.5G).
 * Headroom 1G: limit 5.5G, never exceeded (5.5 is not > 5.5): overlap's order.
 * Headroom 0.99G: limit 5.49G, exceeded after b: the fallback order above. */
static void test_fallback_threshold(void)
{
    struct sb_graph *g = load("ovl_deferred_wait.csv");
    struct outcome o;
    if (!g) {
        CHECK(0);
        return;
    }
    static const uint32_t fb[] = {0, 1, 4, 2, 5, 3};
    static const uint32_t ovl[] = {0, 1, 4, 5, 2, 3};
    CHECK(measure(g, "memfallback", &o) == 0 && same_order(&o, fb, 6));
    CHECK_EQ_U(o.peak_bytes, 11 * G / 2);
    CHECK_EQ_U(o.peak_pos, 2);
    CHECK_NEAR(o.makespan_us, 50);
    CHECK_NEAR(o.exposed_us, 20);
    CHECK(measure(g, "memfallback:headroom_gb=2.999", &o) == 0 && same_order(&o, fb, 6));
    CHECK(measure(g, "memfallback:headroom_gb=3", &o) == 0 && same_order(&o, ovl, 6));
    CHECK_EQ_U(o.peak_bytes, 13 * G / 2);
    CHECK(measure(g, "memfallback:rule=peak", &o) == 0 && same_order(&o, ovl, 6));
    CHECK(measure(g, "memfallback:rule=peak,headroom_gb=0.99", &o) == 0 &&
          same_order(&o, fb, 6));
    CHECK_EQ_U(o.peak_bytes, 11 * G / 2);

    /* The fallback chooses exactly one node, rs.done after b: once it is
     * scheduled a dies and memory (1.5G) is under 2.5G + 1G for the rest.  With
     * headroom 3G it chooses none. */
    struct sb_ovl_params P = {.prefetch = 1, .max_in_flight_bytes = 5 * SB_OVL_GIB,
                           .max_compute_pre_fetch = 200, .max_coll_distance = 200,
                           .overlap_mult = 1, .fallback = SB_OVL_FALLBACK_PROFILE,
                           .headroom_bytes = SB_OVL_GIB, .peak_ratio = 0.05,
                           .fresh_scores = 1, .compute_rule = SB_OVL_COMPUTE_FLOPS};
    struct sb_schedule s;
    uint32_t n_fallback = 99;
    sb_schedule_init(&s, g, 1);
    CHECK(sb_ovl_run(&g->v, &P, &s, &n_fallback) == 0);
    CHECK_EQ_U(n_fallback, 1);
    P.headroom_bytes = 3 * SB_OVL_GIB;
    CHECK(sb_ovl_run(&g->v, &P, &s, &n_fallback) == 0);
    CHECK_EQ_U(n_fallback, 0);
    sb_schedule_free(&s);
    sb_graph_free(g);
}

/* ovl_rs_prefetch.csv: 0 g (compute 10us, 4G), 1 x (compute 40us, 1G), 2 rs
 * (reduce_scatter of g, 30us, 0.5G), 3 rs.done, 4 o (output view), 5 y (reads
 * x, 10us, 1G), 6 z (reads y, 10us, 1G, output).
 *
 * overlap: g, then at x (budget 40us) rs is prefetched (off path, feeds a
 * reduce_scatter: candidate class 1) and hidden whole; its wait is not exposed,
 * so the off-path queue hands it out next; y, z, then o (off path, feeds no
 * reduce_scatter: only once the on-path queue is empty).  Order g rs x rs.done y
 * z o.  Memory g 4, rs 4.5, x 5.5, done 5.5 (g dies), y 2.5, z 2.5: peak 5.5G at
 * 2.  Time: rs 10..40 under x 10..50: exposed 0, makespan 70.
 *
 * overlap:prefetch=0: rs leaves the off-path queue only when an on-path node
 * with a larger index (y, 5) has run: g x y rs z rs.done o.  Memory g 4, x 5, y
 * 6 (x dies), rs 5.5, z 6.5 (y dies), done 5.5 (g dies): peak 6.5G at 4.  Time:
 * rs 60..90, z 60..70, the done waits 20: makespan 90, exposed 20.  Prefetching
 * the reduce_scatter lowers the peak by 1G. */
static void test_rs_prefetch(void)
{
    struct sb_graph *g = load("ovl_rs_prefetch.csv");
    struct outcome o;
    if (!g) {
        CHECK(0);
        return;
    }
    static const uint32_t pf[] = {0, 2, 1, 3, 5, 6, 4};
    CHECK(measure(g, "overlap", &o) == 0 && same_order(&o, pf, 7));
    CHECK_EQ_U(o.peak_bytes, 11 * G / 2);
    CHECK_EQ_U(o.peak_pos, 2);
    CHECK_NEAR(o.makespan_us, 70);
    CHECK_NEAR(o.exposed_us, 0);
    static const uint32_t nopf[] = {0, 1, 5, 2, 6, 3, 4};
    CHECK(measure(g, "overlap:prefetch=0", &o) == 0 && same_order(&o, nopf, 7));
    CHECK_EQ_U(o.peak_bytes, 13 * G / 2);
    CHECK_EQ_U(o.peak_pos, 4);
    CHECK_NEAR(o.makespan_us, 90);
    CHECK_NEAR(o.exposed_us, 20);
    /* membound:max_increase=0.02 (cap 5.5G * 1.02 = 5.61G; given explicitly,
     * so the figures hold whatever device the graph runs on): at x the slot is
     * idle, rs can start (g is done) and its 0.5G from position 1 on gives 5 +
     * 0.5 <= 5.61; the done is reached after x with rs finished (40 <= 50): g
     * rs x rs.done o y z, peak 5.5G, exposed 0 */
    static const uint32_t mb[] = {0, 2, 1, 3, 4, 5, 6};
    CHECK(measure(g, "membound:max_increase=0.02", &o) == 0 && same_order(&o, mb, 7));
    CHECK_EQ_U(o.peak_bytes, 11 * G / 2);
    CHECK_NEAR(o.exposed_us, 0);
    sb_graph_free(g);
}

/* queues=one (Inductor before "Separate queue for off-path scheduling",
 * pytorch/pytorch#169838): on ovl_rs_prefetch.csv without prefetch, the
 * reduce_scatter start feeds no compute node, so it is off-path; in one queue
 * its domination index is the largest and it waits behind z: g x y z rs
 * rs.done o.  Times: g 0..10, x 10..50, y 50..60, z 60..70, rs 70..100, the
 * done waits 70..100 (30 exposed).  Memory: g 4G until rs.done, x 1G at 1..2,
 * y 1G at 2..3, z 1G from 3, rs 0.5G from 4: 4, 5, 6, 6, 5.5, ... peak 6G at
 * position 2 (two queues: 6.5G, above). */
static void test_single_queue(void)
{
    struct sb_graph *g = load("ovl_rs_prefetch.csv");
    struct outcome o;
    if (!g) {
        CHECK(0);
        return;
    }
    static const uint32_t one[] = {0, 1, 5, 6, 2, 3, 4};
    CHECK(measure(g, "overlap:prefetch=0,queues=one", &o) == 0 && same_order(&o, one, 7));
    CHECK_NEAR(o.makespan_us, 100);
    CHECK_NEAR(o.exposed_us, 30);
    CHECK_EQ_U(o.peak_bytes, 6 * G);
    CHECK_EQ_U(o.peak_pos, 2);
    /* memfallback inherits it: with headroom enough that its fallback never
     * engages, the same order */
    CHECK(measure(g, "memfallback:prefetch=0,queues=one,headroom_gb=100", &o) == 0 &&
          same_order(&o, one, 7));
    sb_graph_free(g);
}

/* ovl_stale_score.csv: 0 w (weight), 1 ag (all_gather of w, 10us, 1G), 2 c0
 * (compute 20us), 3 ag.done, 4 n (nop reading c0, 1G), 5 c1 (reads ag.done and
 * n).  c0 runs first (domination 0 against 1); at c0 the all_gather is
 * prefetched with w as its path; its wait is queued when ag starts, still
 * exposed: (1, 1, 3).  Then c0's budget hides all 10us.  n is queued after c0
 * at (1, 0, 4).  Inductor's queue-time score puts n before the wait: w ag c0 n
 * ag.done c1.  memfallback re-scores the wait (1, 0, 3), before n: w ag c0
 * ag.done n c1.  Memory never passes the original profile + 1G, so its fallback
 * stays off. */
static void test_stale_score(void)
{
    struct sb_graph *g = load("ovl_stale_score.csv");
    struct outcome o;
    if (!g) {
        CHECK(0);
        return;
    }
    static const uint32_t stale[] = {0, 1, 2, 4, 3, 5};
    static const uint32_t fresh[] = {0, 1, 2, 3, 4, 5};
    CHECK(measure(g, "overlap", &o) == 0 && same_order(&o, stale, 6));
    CHECK(measure(g, "memfallback:fresh_scores=0", &o) == 0 && same_order(&o, stale, 6));
    CHECK(measure(g, "memfallback", &o) == 0 && same_order(&o, fresh, 6));
    sb_graph_free(g);
}

/* membound on ovl_deferred_wait.csv: the reduce_scatter starts at its original
 * place (10..40) and its done, reached at t = 10, is deferred; keeping it
 * deferred holds a's 4G at every later position.  At b (original memory 1.5G)
 * that is 5.5G, at c (2.5G) 6.5G.  (max_increase is given even where it is
 * 0.02, the cap without a device memory, so that the figures hold whatever
 * device the graph runs on.)
 *   max_increase 0.02 (cap 4.59G): forced before b: the original order.
 *   max_increase 0.25 (cap 5.625G): kept through b, forced before c (waits
 *     20..40): a rs b rs.done o c, peak 5.5G, exposed 20.
 *   max_increase 0.5 (cap 6.75G): kept to the end: a rs b c rs.done o, peak
 *     6.5G, exposed 10 (overlap's schedule, now within budget). */
static void test_membound_cap(void)
{
    struct sb_graph *g = load("ovl_deferred_wait.csv");
    struct outcome o;
    if (!g) {
        CHECK(0);
        return;
    }
    static const uint32_t orig[] = {0, 1, 2, 3, 4, 5};
    static const uint32_t mid[] = {0, 1, 4, 2, 3, 5};
    static const uint32_t late[] = {0, 1, 4, 5, 2, 3};
    CHECK(measure(g, "membound:max_increase=0.02", &o) == 0 && same_order(&o, orig, 6));
    CHECK_EQ_U(o.peak_bytes, 9 * G / 2);
    CHECK_NEAR(o.exposed_us, 30);
    CHECK(measure(g, "membound:max_increase=0.25", &o) == 0 && same_order(&o, mid, 6));
    CHECK_EQ_U(o.peak_bytes, 11 * G / 2);
    CHECK_NEAR(o.exposed_us, 20);
    CHECK(measure(g, "membound:max_increase=0.5", &o) == 0 && same_order(&o, late, 6));
    CHECK_EQ_U(o.peak_bytes, 13 * G / 2);
    CHECK_NEAR(o.exposed_us, 10);
    sb_graph_free(g);
}

/* ovl_ag_hoist.csv: 0 w (weight, 0 bytes), 1 c0 (compute 30us, 3G, no reader),
 * 2 ag (all_gather of w, 20us, 2G), 3 ag.done, 4 c1 (reads ag.done, 10us).
 * Original: c0 0..30, ag 30..50, the done waits 20, c1 50..60; memory 0, 3, 2,
 * 2, 2: peak 3G at c0.  Starting ag before c0 hides it (0..20 under 0..30) but
 * puts its 2G under c0's 3G: 5G.
 *   overlap ignores memory: w ag c0 ag.done c1, peak 5G, exposed 0, makespan 40;
 *   membound:max_increase=0.02 (cap 3.06G): 3 + 2 > 3.06, ag stays: the
 *     original order;
 *   membound:max_increase=0.7 (cap 5.1G): hoisted, as overlap;
 *   membound:max_increase=0.6 (cap 4.8G): not. */
static void test_ag_hoist(void)
{
    struct sb_graph *g = load("ovl_ag_hoist.csv");
    struct outcome o;
    if (!g) {
        CHECK(0);
        return;
    }
    static const uint32_t orig[] = {0, 1, 2, 3, 4};
    static const uint32_t hoisted[] = {0, 2, 1, 3, 4};
    CHECK(measure(g, "overlap", &o) == 0 && same_order(&o, hoisted, 5));
    CHECK_EQ_U(o.peak_bytes, 5 * G);
    CHECK_NEAR(o.exposed_us, 0);
    CHECK_NEAR(o.makespan_us, 40);
    CHECK(measure(g, "membound:max_increase=0.02", &o) == 0 && same_order(&o, orig, 5));
    CHECK_EQ_U(o.peak_bytes, 3 * G);
    CHECK_NEAR(o.exposed_us, 20);
    CHECK(measure(g, "membound:max_increase=0.7", &o) == 0 && same_order(&o, hoisted, 5));
    CHECK_EQ_U(o.peak_bytes, 5 * G);
    CHECK_NEAR(o.makespan_us, 40);
    CHECK(measure(g, "membound:max_increase=0.6", &o) == 0 && same_order(&o, orig, 5));
    sb_graph_free(g);
}

/* ---- membound's absolute cap (issue 35, item 5) ------------------------------ */

/* ovl_ag_hoist.csv again (figures above): the hoist puts 2G under c0's 3G,
 * so it needs a cap of 5G = 5 * 2^30 = 5368709120 bytes; the cap is inclusive
 * (a move is refused only when the projection would be above it).
 *   cap=5368709119 (5G less a byte): 5G > cap, ag stays: the original order,
 *     peak 3G, exposed 20;
 *   cap=5GiB: 5G <= 5G: hoisted, peak 5G, makespan 40, exposed 0;
 *   cap=5.36870912e9 and cap=5.36870912GB are 5368709120 bytes too: hoisted.
 * Both cap and max_increase: the tighter applies.
 *   cap=5GiB,max_increase=0.6: 3G * 1.6 = 4.8G < 5G: not hoisted;
 *   cap=5GiB,max_increase=0.7: 3G * 1.7 = 5.1G > 5G, the cap 5G: hoisted;
 *   cap=5368709119,max_increase=0.7: the cap is the tighter: not hoisted. */
static void test_membound_abs_cap(void)
{
    struct sb_graph *g = load("ovl_ag_hoist.csv");
    struct outcome o;
    if (!g) {
        CHECK(0);
        return;
    }
    static const uint32_t orig[] = {0, 1, 2, 3, 4};
    static const uint32_t hoisted[] = {0, 2, 1, 3, 4};
    CHECK(measure(g, "membound:cap=5368709119", &o) == 0 && same_order(&o, orig, 5));
    CHECK_EQ_U(o.peak_bytes, 3 * G);
    CHECK_NEAR(o.exposed_us, 20);
    CHECK(measure(g, "membound:cap=5GiB", &o) == 0 && same_order(&o, hoisted, 5));
    CHECK_EQ_U(o.peak_bytes, 5 * G);
    CHECK_NEAR(o.makespan_us, 40);
    CHECK_NEAR(o.exposed_us, 0);
    CHECK(measure(g, "membound:cap=5.36870912e9", &o) == 0 && same_order(&o, hoisted, 5));
    CHECK(measure(g, "membound:cap=5.36870912GB", &o) == 0 && same_order(&o, hoisted, 5));
    CHECK(measure(g, "membound:cap=5GiB,max_increase=0.6", &o) == 0 &&
          same_order(&o, orig, 5));
    CHECK(measure(g, "membound:cap=5GiB,max_increase=0.7", &o) == 0 &&
          same_order(&o, hoisted, 5));
    CHECK(measure(g, "membound:cap=5368709119,max_increase=0.7", &o) == 0 &&
          same_order(&o, orig, 5));
    sb_graph_free(g);
}

/* file under tests/data with machine file applied (after the cost model, as
 * run does); *m must be freed after g. */
static struct sb_graph *load_on(const char *file, const char *machine, struct sb_machine **m)
{
    char path[512];
    struct sb_err e;
    struct sb_graph *g = load(file);
    snprintf(path, sizeof path, "%s/%s", SB_TEST_DATA, machine);
    *m = g ? sb_machine_load(path, &e) : NULL;
    if (g && (!*m || sb_machine_apply(*m, g, &e))) {
        fprintf(stderr, "%s: %s\n", machine, e.msg);
        sb_graph_free(g);
        return NULL;
    }
    return g;
}

/* The same graph with no cap parameter: the device's memory is the cap.
 *   device of 5GiB: hoisted (5G <= 5G); of 5GiB less a byte: not.
 * The parameters override the device:
 *   5GiB less a byte, cap=5GiB: hoisted (the explicit cap wins, above too);
 *   5GiB, cap=5368709119: not;
 *   5GiB, max_increase=0.6 (4.8G): not, the relative cap alone applies;
 *   5GiB less a byte, max_increase=0.7 (5.1G): hoisted, the device ignored.
 * A device without mem_bytes: the original peak + 2%, 3.06G: not hoisted
 * (with no cap at all it would be).
 * Two devices, 5GiB and 1GiB: no node is assigned, so all run on device 0 and
 * its 5GiB is the cap: hoisted (the smaller device's 1GiB would forbid it). */
static void test_membound_device_cap(void)
{
    static const uint32_t orig[] = {0, 1, 2, 3, 4};
    static const uint32_t hoisted[] = {0, 2, 1, 3, 4};
    struct sb_machine *m;
    struct outcome o;
    struct sb_graph *g = load_on("ovl_ag_hoist.csv", "mb-5gib.yaml", &m);
    CHECK(g != NULL);
    if (g) {
        CHECK(measure(g, "membound", &o) == 0 && same_order(&o, hoisted, 5));
        CHECK_EQ_U(o.peak_bytes, 5 * G);
        CHECK(measure(g, "membound:cap=5368709119", &o) == 0 && same_order(&o, orig, 5));
        CHECK(measure(g, "membound:max_increase=0.6", &o) == 0 && same_order(&o, orig, 5));
        sb_graph_free(g);
        sb_machine_free(m);
    }
    g = load_on("ovl_ag_hoist.csv", "mb-5gib-less.yaml", &m);
    CHECK(g != NULL);
    if (g) {
        CHECK(measure(g, "membound", &o) == 0 && same_order(&o, orig, 5));
        CHECK_EQ_U(o.peak_bytes, 3 * G);
        CHECK(measure(g, "membound:cap=5GiB", &o) == 0 && same_order(&o, hoisted, 5));
        CHECK(measure(g, "membound:max_increase=0.7", &o) == 0 && same_order(&o, hoisted, 5));
        sb_graph_free(g);
        sb_machine_free(m);
    }
    g = load_on("ovl_ag_hoist.csv", "mb-nomem.yaml", &m);
    CHECK(g != NULL);
    if (g) {
        CHECK(measure(g, "membound", &o) == 0 && same_order(&o, orig, 5));
        sb_graph_free(g);
        sb_machine_free(m);
    }
    g = load_on("ovl_ag_hoist.csv", "mb-two.yaml", &m);
    CHECK(g != NULL);
    if (g) {
        CHECK(measure(g, "membound", &o) == 0 && same_order(&o, hoisted, 5));
        sb_graph_free(g);
        sb_machine_free(m);
    }
}

/* ovl_over_cap.csv: 0 w (weight), 1 big (compute 10us, 4G, no reader), 2 c0
 * (compute 30us, 1G, no reader), 3 ag (all_gather of w, 20us, 2G), 4 ag.done,
 * 5 c1 (reads ag.done, 10us, output).
 * Original: big 0..10, c0 10..40, ag 40..60, the done waits 20, c1 60..70;
 * memory 0, 4, 1, 2, 2, 2: peak 4G at big.
 * cap=3GiB is below that peak, so no schedule meets it; membound still
 * returns one.  Before big, hoisting ag would put its 2G under big (4 + 2 =
 * 6G > 3G) and under c0: refused, and ag is on c1's path, so the search stops.
 * Before c0 it costs 2G under c0 only: 1 + 2 = 3G <= 3G, hoisted: w big ag c0
 * ag.done c1, ag 10..30 under c0 10..40, c1 40..50: makespan 50, exposed 0;
 * memory 0, 4, 2, 3, 2, 2: peak 4G, the original's, not more.
 *   cap=3GiB less a byte (3221225471): 3G > cap under c0 too: the original
 *     order, makespan 70, exposed 20;
 *   cap=1B: every move that adds bytes is refused: the original order. */
static void test_membound_over_cap(void)
{
    struct sb_graph *g = load("ovl_over_cap.csv");
    struct outcome o;
    if (!g) {
        CHECK(0);
        return;
    }
    static const uint32_t orig[] = {0, 1, 2, 3, 4, 5};
    static const uint32_t hoisted[] = {0, 1, 3, 2, 4, 5};
    CHECK(measure(g, "original", &o) == 0);
    CHECK_EQ_U(o.peak_bytes, 4 * G);
    CHECK_EQ_U(o.peak_pos, 1);
    CHECK_NEAR(o.makespan_us, 70);
    CHECK(measure(g, "membound:cap=3GiB", &o) == 0 && same_order(&o, hoisted, 6));
    CHECK_EQ_U(o.peak_bytes, 4 * G);
    CHECK_EQ_U(o.peak_pos, 1);
    CHECK_NEAR(o.makespan_us, 50);
    CHECK_NEAR(o.exposed_us, 0);
    CHECK(measure(g, "membound:cap=3221225471", &o) == 0 && same_order(&o, orig, 6));
    CHECK_NEAR(o.makespan_us, 70);
    CHECK_NEAR(o.exposed_us, 20);
    CHECK(measure(g, "membound:cap=1B", &o) == 0 && same_order(&o, orig, 6));
    CHECK_EQ_U(o.peak_bytes, 4 * G);
    sb_graph_free(g);
}

/* ---- differential: every policy, every graph -------------------------------- */

/* Each spec, and for membound the peak it promises as a factor of the
 * original peak (0: no promise; plain membound's cap is the device's memory
 * where the device has one, so it promises nothing relative). */
static const struct {
    const char *spec;
    double max_peak;
} specs[] = {
    {"original", 1},
    {"overlap", 0},
    {"overlap:prefetch=0", 0},
    {"overlap:max_in_flight_gb=0.000001", 0},
    {"overlap:max_compute_pre_fetch=0,max_coll_distance=1", 0},
    {"memfallback", 0},
    {"memfallback:headroom_gb=0", 0},
    {"memfallback:rule=peak,headroom_gb=0,peak_ratio=0", 0},
    {"memfallback:fresh_scores=0", 0},
    {"membound", 0},
    {"membound:max_increase=0.02", 1.02},
    {"membound:max_increase=0", 1},
    {"membound:max_increase=1,lookahead=1,max_ahead=0", 2},
};
#define N_SPECS (sizeof specs / sizeof specs[0])

/* Peak memory of s under the harness's memory model. */
static uint64_t peak_of(const struct sb_graph *g, const uint32_t *order)
{
    uint32_t pos;
    uint64_t *mem = malloc((g->v.n_nodes + 1) * sizeof *mem);
    uint64_t peak = sb_mem_profile(&g->v, order, g->v.n_nodes, mem, &pos);
    free(mem);
    return peak;
}

/* The policies' memory tracker, replayed over `order`, ends with the peak the
 * harness's memory model gives the same order. */
static int tracker_agrees(const struct sb_graph *g, const uint32_t *order)
{
    struct sb_ovl_mem m;
    if (sb_ovl_mem_init(&m, &g->v))
        return 0;
    for (uint32_t i = 0; i < g->v.n_nodes; i++)
        sb_ovl_mem_schedule(&m, &g->v, order[i]);
    int ok = (uint64_t)m.peak_bytes == peak_of(g, order) && m.cur_bytes >= 0;
    sb_ovl_mem_free(&m);
    return ok;
}

/* membound:cap=<cap_bytes> on g: valid, the same twice, and its peak at most
 * the cap, or the original peak when that is above the cap already (nothing
 * meets the cap then, and membound must not add to it).  1 on failure. */
static int membound_abs(const struct sb_graph *g, const char *what, uint64_t cap_bytes,
                        uint64_t peak0)
{
    char spec[64];
    struct sb_schedule a = {0}, b = {0}; /* b is not initialised when a fails */
    snprintf(spec, sizeof spec, "membound:cap=%llu", (unsigned long long)cap_bytes);
    int ok = schedule(g, spec, &a) == 0 && schedule(g, spec, &b) == 0 &&
             memcmp(a.order, b.order, g->v.n_nodes * sizeof *a.order) == 0 &&
             peak_of(g, a.order) <= (cap_bytes > peak0 ? cap_bytes : peak0);
    if (!ok)
        fprintf(stderr, "%s: %s (original peak %llu) failed the differential check\n", what,
                spec, (unsigned long long)peak0);
    sb_schedule_free(&a);
    sb_schedule_free(&b);
    return !ok;
}

/* Every spec's schedule of g is valid, the same twice, and measured alike by
 * the policies' tracker and the harness; membound's peak is within its cap of
 * the original peak, and with an absolute cap of 1 byte, half, all and 5/4 of
 * the original peak within max(cap, original peak).  Returns the number of
 * failures. */
static int differential(const struct sb_graph *g, const char *what)
{
    int bad = 0;
    uint32_t n = g->v.n_nodes;
    uint32_t *identity = malloc((n + 1) * sizeof *identity);
    for (uint32_t i = 0; i < n; i++)
        identity[i] = i;
    uint64_t peak0 = peak_of(g, identity);
    free(identity);
    for (uint32_t k = 0; k < N_SPECS; k++) {
        struct sb_schedule a = {0}, b = {0}; /* b is not initialised when a fails */
        int ok = schedule(g, specs[k].spec, &a) == 0 && schedule(g, specs[k].spec, &b) == 0 &&
                 memcmp(a.order, b.order, n * sizeof *a.order) == 0;
        ok = ok && tracker_agrees(g, a.order);
        if (ok && specs[k].max_peak > 0)
            ok = (double)peak_of(g, a.order) <= (double)peak0 * specs[k].max_peak;
        if (!ok) {
            fprintf(stderr, "%s: %s failed the differential check\n", what, specs[k].spec);
            bad++;
        }
        sb_schedule_free(&a);
        sb_schedule_free(&b);
    }
    bad += membound_abs(g, what, 1, peak0);
    bad += membound_abs(g, what, peak0 / 2 ? peak0 / 2 : 1, peak0);
    bad += membound_abs(g, what, peak0 ? peak0 : 1, peak0);
    bad += membound_abs(g, what, peak0 + peak0 / 4 + 1, peak0);
    return bad;
}

static void test_differential_files(void)
{
    static const char *const files[] = {
        "ovl_deferred_wait.csv", "ovl_rs_prefetch.csv", "ovl_ag_hoist.csv",
        "ovl_stale_score.csv", "overlap.csv", "alias.csv", "twocoll.csv", "chain.csv",
        "approx.csv",
    };
    for (uint32_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        struct sb_graph *g = load(files[i]);
        CHECK(g != NULL);
        if (g)
            CHECK_EQ_U(differential(g, files[i]), 0);
        sb_graph_free(g);
    }
}

/* A small deterministic generator (64-bit LCG, Knuth's MMIX constants). */
static uint64_t rng_state;
static uint32_t rng(uint32_t n)
{
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(rng_state >> 33) % n;
}

/* Appends one random row; open[] holds starts still without a done. */
static void random_row(char *buf, size_t cap, size_t *len, uint32_t i, uint32_t n,
                       uint8_t *is_start, uint32_t *open, uint32_t *n_open)
{
    static const char *const colls[] = {"all_gather", "reduce_scatter", "all_reduce"};
    char inputs[64] = "";
    uint32_t left = n - i, roll = rng(100);
    int done = *n_open && (roll < 20 || left <= *n_open);
    if (done) { /* a done for a random open start, sometimes with another input */
        uint32_t k = rng(*n_open), s = open[k];
        open[k] = open[--*n_open];
        uint32_t extra = rng(i);
        if (rng(4) == 0 && !is_start[extra] && extra != s)
            snprintf(inputs, sizeof inputs, "%u %u", s, extra);
        else
            snprintf(inputs, sizeof inputs, "%u", s);
        *len += snprintf(buf + *len, cap - *len, "%u,n%u,done,%s,,,,,,,\n", i, i, inputs);
        return;
    }
    if (i == 0 || roll < 30) {
        *len += snprintf(buf + *len, cap - *len, "%u,n%u,input,,,,%u,,,,%s\n", i, i,
                         rng(5) * 1000, rng(3) == 0 ? "weight" : "");
        return;
    }
    uint32_t a = rng(i), b = rng(i);
    if (is_start[a] || is_start[b]) {
        *len += snprintf(buf + *len, cap - *len, "%u,n%u,input,,,,%u,,,,\n", i, i,
                         rng(5) * 1000);
        return;
    }
    snprintf(inputs, sizeof inputs, a == b ? "%u" : "%u %u", a, b);
    if (roll < 45 && left > *n_open + 1) {
        is_start[i] = 1;
        open[(*n_open)++] = i;
        /* groups of 2, 4 or 8 ranks: up to three process groups */
        *len += snprintf(buf + *len, cap - *len, "%u,n%u,start,%s,,,%u,%s,%u,%u,\n", i, i,
                         inputs, rng(5) * 1000, colls[rng(3)], 1 + rng(50), 2u << rng(3));
    } else if (roll < 55) {
        *len += snprintf(buf + *len, cap - *len, "%u,n%u,nop,%u,,,,,,,alias\n", i, i, a);
    } else {
        *len += snprintf(buf + *len, cap - *len, "%u,n%u,compute,%s,,%u,%u,,,,%s\n", i, i,
                         inputs, rng(40), rng(5) * 1000, rng(6) == 0 ? "output" : "");
    }
}

static void test_differential_random(void)
{
    enum { N_GRAPHS = 300, MAX_NODES = 120 };
    static char buf[MAX_NODES * 96 + 256];
    uint8_t is_start[MAX_NODES];
    uint32_t open[MAX_NODES];
    int bad = 0;
    rng_state = 5;
    for (uint32_t k = 0; k < N_GRAPHS; k++) {
        uint32_t n = 2 + rng(MAX_NODES - 1), n_open = 0;
        size_t len = (size_t)snprintf(
            buf, sizeof buf, "id,name,kind,inputs,op,cost_us,out_bytes,coll,comm_us,group,flags\n");
        memset(is_start, 0, sizeof is_start);
        for (uint32_t i = 0; i < n; i++)
            random_row(buf, sizeof buf, &len, i, n, is_start, open, &n_open);
        struct sb_err e;
        struct sb_graph *g = sb_csv_load_mem("random.csv", buf, len, &e);
        if (!g) {
            fprintf(stderr, "random graph %u: %s\n", k, e.msg);
            bad++;
            continue;
        }
        struct sb_cost_params c;
        sb_cost_defaults(&c);
        sb_cost_apply(&c, g);
        char what[32];
        snprintf(what, sizeof what, "random graph %u", k);
        bad += differential(g, what);
        sb_graph_free(g);
    }
    CHECK_EQ_U(bad, 0);
}

int main(void)
{
    sb_registry_add_builtins();
    test_deferred_wait();
    test_fallback_threshold();
    test_rs_prefetch();
    test_single_queue();
    test_stale_score();
    test_membound_cap();
    test_ag_hoist();
    test_membound_abs_cap();
    test_membound_device_cap();
    test_membound_over_cap();
    test_differential_files();
    test_differential_random();
    sb_registry_clear();
    return check_report();
}
