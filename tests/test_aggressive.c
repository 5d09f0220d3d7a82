/* The `aggressive` policy (XLA's latency-hiding scheduler) on graphs small
 * enough to follow XLA's list scheduler by hand, each expected order derived
 * step by step in the comment above it; then the fast selection against XLA's
 * own linear rescan on random graphs, which must agree node for node. */
#include "check.h"
#include "core/core.h"
#include "import/import.h"
#include "core/machine.h"

#include <stdlib.h>

/* Loads CSV text, applies the analytical cost model (edge latency 0). */
static struct sb_graph *graph(const char *csv)
{
    struct sb_err e;
    struct sb_cost_params c;
    struct sb_graph *g = sb_csv_load_mem("test.csv", csv, strlen(csv), &e);
    if (!g) {
        fprintf(stderr, "%s\n", e.msg);
        return NULL;
    }
    sb_cost_defaults(&c);
    sb_cost_apply(&c, g);
    return g;
}

/* Runs `spec` on g into order[]; 0 when the schedule ran and is valid. */
static int schedule(const struct sb_graph *g, const char *spec, uint32_t *order)
{
    struct sb_err e;
    struct sb_sched sc;
    struct sb_schedule s;
    if (sb_sched_parse(&sc, spec, &e)) {
        fprintf(stderr, "%s\n", e.msg);
        return -1;
    }
    sb_schedule_init(&s, g, 1);
    int rc = sb_sched_run(&sc, g, &s, &e);
    if (!rc)
        rc = sb_schedule_validate(&g->v, &s, &e);
    if (rc)
        fprintf(stderr, "%s: %s\n", spec, e.msg);
    for (uint32_t i = 0; i < g->v.n_nodes; i++)
        order[i] = s.order[i];
    sb_schedule_free(&s);
    sb_sched_free(&sc);
    return rc;
}

static void check_order(const struct sb_graph *g, const char *spec, const uint32_t *want)
{
    uint32_t got[64];
    CHECK(g && g->v.n_nodes <= 64);
    if (!g || schedule(g, spec, got)) {
        CHECK(0);
        return;
    }
    for (uint32_t i = 0; i < g->v.n_nodes; i++)
        CHECK_EQ_U(got[i], want[i]);
}

/* One all_gather whose weight mm2 reads, and mm1 independent of it.
 * Bottom-up (workload estimator, analytical model: edge latency 0):
 *  1. only sink mm2: t=0, now=10; releases ag.done and mm1 (ready 10).
 *  2. kScheduleDone: ag.done (occupies); its start becomes ready at 10+8=18.
 *  3. mm1 (ready 10, due) vs ag (18): kLessStall picks mm1; now=20.
 *  4. x (nop, released by mm1); 5. ag (t = max(20, 18)); 6. w.
 * Reversed: w ag x mm1 ag.done mm2 -- mm1 runs inside the all_gather. */
static const char overlap_csv[] =
    "id,name,kind,inputs,op,cost_us,out_bytes,coll,comm_us\n"
    "0,w,input,,,,100,,\n"
    "1,ag,start,0,,,400,all_gather,8\n"
    "2,ag.done,done,1,,,,,\n"
    "3,x,input,,,,100,,\n"
    "4,mm1,compute,3,mm,10,100,,\n"
    "5,mm2,compute,2 4,mm,10,100,,\n";

static void test_overlap(void)
{
    struct sb_graph *g = graph(overlap_csv);
    static const uint32_t want[] = {0, 1, 3, 4, 2, 5};
    check_order(g, "aggressive", want);
    check_order(g, "lhs", want); /* the alias */
    check_order(g, "aggressive:selection=scan", want);
    sb_graph_free(g);
}

/* The same graph top-down: roots w and x are nops, popped last-in first (x,
 * then w); ag occupies its resource top-down and kScheduleAsyncStart takes it
 * before mm1; ag.done is ready at 0+8, mm1 at 0, so kLessStall runs mm1
 * (now=10), then ag.done, then mm2. */
static void test_top_down(void)
{
    struct sb_graph *g = graph(overlap_csv);
    static const uint32_t want[] = {3, 0, 1, 4, 2, 5};
    check_order(g, "aggressive:top_down_scheduling=true", want);
    sb_graph_free(g);
}

/* The first graph with ag and ag.done annotated as one group (XLA's
 * _scheduling_group_id): the group's only user outside it is mm2.
 *  1. mm2 (t=0, now=10); it is the group's whole frontier: the group is ready.
 *     ag.done and mm1 become ready at 10.
 *  2. the group fits (one all_gather slot) and is scheduled as a unit:
 *     ag.done (ready, a done: kAnnotatedAsyncDone), now 10; ag becomes ready
 *     at 18 and joins the group's ready list; ag at 18.
 *  3. w (a nop released by ag).  4. mm1.  5. x.
 * Reversed: x mm1 w ag ag.done mm2 -- mm1 is no longer inside the window, the
 * group overlapping exactly its members.  Without the annotation mm1 runs
 * inside it (test_overlap). */
static const char grouped_csv[] =
    "id,name,kind,inputs,op,cost_us,out_bytes,coll,comm_us,sched_group\n"
    "0,w,input,,,,100,,,\n"
    "1,ag,start,0,,,400,all_gather,8,0\n"
    "2,ag.done,done,1,,,,,,0\n"
    "3,x,input,,,,100,,,\n"
    "4,mm1,compute,3,mm,10,100,,,\n"
    "5,mm2,compute,2 4,mm,10,100,,,\n";

static void test_group(void)
{
    struct sb_graph *g = graph(grouped_csv);
    static const uint32_t want[] = {3, 4, 0, 1, 2, 5};
    check_order(g, "aggressive", want);
    check_order(g, "aggressive:selection=scan", want);
    sb_graph_free(g);
}

/* Two all_gathers; m2 reads d1, m3 reads d2 and m2, m1 is independent.
 * Limit 1 (bottom-up):
 *  1. m3 (now 10) releases d2, m2.   2. d2 (kScheduleDone); ag2 ready 18.
 *  3. m2 (due) beats ag2 (kLessStall); now 20; releases d1 and m1.
 *  4. d1 is skipped (resource full); ag2 (18) and m1 (20) are both due;
 *     kFreeBackedupResource: ag2 releases the resource d1 waits for -> ag2.
 *  5. w2 (nop).  6. d1.  7. m1 beats ag1 (ready 28): kLessStall.  8. x.
 *  9. ag1.  10. w1.
 * Reversed: w1 ag1 x m1 d1 w2 ag2 m2 d2 m3: the windows do not overlap.
 * Limit 2: at step 4 d1 fits and kScheduleDone takes it (ag1 ready 28); then
 * m1 beats ag2 (kStartAtZeroDepth: ag2 has async depth 0 and nothing waits for
 * its resource); x; ag2 and ag1 tie to kOriginalOrder, the later (ag2) first.
 * Reversed: w1 ag1 w2 ag2 x m1 d1 m2 d2 m3. */
static const char two_ag_csv[] =
    "id,name,kind,inputs,op,cost_us,out_bytes,coll,comm_us\n"
    "0,w1,input,,,,100,,\n"
    "1,ag1,start,0,,,400,all_gather,8\n"
    "2,d1,done,1,,,,,\n"
    "3,w2,input,,,,100,,\n"
    "4,ag2,start,3,,,400,all_gather,8\n"
    "5,d2,done,4,,,,,\n"
    "6,x,input,,,,100,,\n"
    "7,m1,compute,6,mm,10,100,,\n"
    "8,m2,compute,2 7,mm,10,100,,\n"
    "9,m3,compute,5 8,mm,10,100,,\n";

static void test_overlap_limit(void)
{
    struct sb_graph *g = graph(two_ag_csv);
    static const uint32_t limit1[] = {0, 1, 6, 7, 2, 3, 4, 8, 5, 9};
    static const uint32_t limit2[] = {0, 1, 3, 4, 6, 7, 2, 8, 5, 9};
    check_order(g, "aggressive", limit1);
    check_order(g, "aggressive:resources=per_type", limit1);
    check_order(g, "aggressive:parallel_collective_overlap_limit=2", limit2);
    check_order(g, "aggressive:resources=per_type,all_gather_overlap_limit=2", limit2);
    /* a different type's limit does not apply */
    check_order(g, "aggressive:resources=per_type,all_reduce_overlap_limit=2", limit1);
    sb_graph_free(g);
}

/* XLA's memory model (graph inputs not counted) with memory_limit 20:
 *  1. r reads done (start's buffer, 10) and s (1): 11 live.  2. d (kScheduleDone).
 *  3. s and the start are ready; 11 > 20/2 turns the memory rules on; s would
 *     make big (100) live: 111 > 20, the start would not (it frees its 10):
 *     kMemoryPeakOverLimit picks the start; then s, big, a.
 * Reversed: a big s start d r -- the file order.  Without a limit step 3 is
 * kLessStall (s due at 1, the start at 1+5): s, big, then the start: it moves
 * above big and s, reversed a start big s d r. */
static const char memory_csv[] =
    "id,name,kind,inputs,op,cost_us,out_bytes,coll,comm_us,flags\n"
    "0,a,input,,,,50,,,\n"
    "1,big,compute,0,op,1,100,,,\n"
    "2,s,compute,1,op,1,1,,,\n"
    "3,ag,start,0,,,10,all_gather,5,\n"
    "4,d,done,3,,,,,,\n"
    "5,r,compute,4 2,op,1,1,,,output\n";

/* The rules switch on when live memory exceeds half the limit (integer
 * halves).  XLA's model at step 3 has 11 bytes live: limit 21 -> 11 > 10, on;
 * 22 -> 11 > 11, off.  The harness model also counts the input a (50 bytes,
 * made live at step 2 by d, which reads its start's input) and the output r,
 * which lives from the bottom until r is scheduled: 1 at the bottom, r reads
 * 10 + 1 (12), r's own byte is freed (11), d adds a (61).  So limit 121 ->
 * 61 > 60, on, and kMemoryPeakOverLimit picks the start (61 + 0 <= 121, while s
 * would add big: 161); 122 -> off. */
static void test_memory_limit(void)
{
    struct sb_graph *g = graph(memory_csv);
    static const uint32_t unlimited[] = {0, 3, 1, 2, 4, 5};
    static const uint32_t limited[] = {0, 1, 2, 3, 4, 5};
    check_order(g, "aggressive", unlimited);
    check_order(g, "aggressive:memory_model=xla,memory_limit=20", limited);
    check_order(g, "aggressive:memory_model=xla,memory_limit=20,selection=scan", limited);
    check_order(g, "aggressive:memory_model=xla,memory_limit=21", limited);
    check_order(g, "aggressive:memory_model=xla,memory_limit=22", unlimited);
    check_order(g, "aggressive:memory_limit=121", limited);
    check_order(g, "aggressive:memory_limit=122", unlimited);
    sb_graph_free(g);
}

/* Without collectives XLA leaves the sequence alone. */
static void test_no_collectives(void)
{
    struct sb_graph *g = graph("id,name,kind,inputs,op,cost_us\n"
                               "0,a,input,,,\n1,b,compute,0,mm,5\n2,c,compute,0,mm,1\n"
                               "3,d,compute,1 2,mm,1\n");
    static const uint32_t same[] = {0, 1, 2, 3};
    check_order(g, "aggressive", same);
    sb_graph_free(g);
}

static void test_bad_params(void)
{
    struct sb_err e;
    struct sb_sched sc;
    CHECK(sb_sched_parse(&sc, "aggressive:all_gather_overlap_limit=0", &e) != 0);
    CHECK_CONTAINS(e.msg, "all_gather_overlap_limit='0' is not an integer in 1..");
    CHECK(sb_sched_parse(&sc, "aggressive:estimator=exact", &e) != 0);
    CHECK_CONTAINS(e.msg, "one of workload|approximate");
}

/* ---- fast selection == XLA's scan ------------------------------------------------ */

static uint64_t rng_state = 88172645463325252ull;

static uint32_t rnd(uint32_t n)
{
    rng_state ^= rng_state << 13; /* xorshift64: the same graphs every run */
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state % n);
}

/* A random DAG with collectives.  Small integer costs and few distinct sizes
 * make ties, so the later rules and the ready set's order are exercised. */
/* The scope of position i of n in a scoped random graph: a top block, a
 * loop of three iterations whose middle third holds a nested loop of two,
 * then the top again. */
static void scope_at(uint32_t i, uint32_t n, char *out, size_t cap)
{
    uint32_t a = n / 6, b = n - n / 6, it_len = (b - a) / 3 + 1;
    out[0] = 0;
    if (i < a || i >= b)
        return;
    uint32_t it = (i - a) / it_len, at = (i - a) % it_len;
    if (at >= it_len / 3 && at < 2 * it_len / 3 && it_len >= 6)
        snprintf(out, cap, "L#%u/M#%u", it, at < it_len / 2 ? 0u : 1u);
    else
        snprintf(out, cap, "L#%u", it);
}

/* A random workload; with `scoped`, a scope column as scope_at lays it out,
 * some alias nodes (viewing any earlier buffer, in their scope or not), and
 * every collective closed in the scope it opened in. */
static char *random_csv_scoped(uint32_t n, int scoped)
{
    static const char *const colls[] = {"all_gather", "reduce_scatter", "all_reduce",
                                        "collective_permute", "send", "copy"};
    size_t cap = (size_t)n * 128 + 256, len = 0;
    char *s = malloc(cap), sc[32], open_sc[32] = "";
    uint32_t open = SB_NONE, *ok = calloc(n, sizeof *ok), n_ok = 0;
    len += (size_t)snprintf(s, cap, "id,name,kind,inputs,op,cost_us,out_bytes,coll,comm_us,flags%s\n",
                            scoped ? ",scope" : "");
#define ROW_END(x) (scoped ? (snprintf(s + len, cap - len, ",%s\n", x), len += strlen(s + len)) \
                           : (snprintf(s + len, cap - len, "\n"), len += 1))
    for (uint32_t i = 0; i < n; i++) {
        char in[64] = "";
        scope_at(i, n, sc, sizeof sc);
        if (open != SB_NONE && (rnd(3) == 0 || i + 1 == n || (scoped && strcmp(sc, open_sc)))) {
            len += (size_t)snprintf(s + len, cap - len, "%u,n%u,done,%u,,,,,,", i, i, open);
            ROW_END(open_sc);
            ok[n_ok++] = i;
            open = SB_NONE;
            continue;
        }
        if (n_ok == 0 || rnd(8) == 0) {
            len += (size_t)snprintf(s + len, cap - len, "%u,n%u,input,,,,%u,,,", i, i,
                                    100 * (1 + rnd(3)));
            ROW_END(sc);
            ok[n_ok++] = i;
            continue;
        }
        uint32_t k = 1 + rnd(3);
        for (uint32_t j = 0; j < k; j++)
            snprintf(in + strlen(in), sizeof in - strlen(in), "%s%u", j ? " " : "",
                     ok[n_ok - 1 - rnd(n_ok < 6 ? n_ok : 6)]);
        if (open == SB_NONE && i + 2 < n && rnd(4) == 0) {
            len += (size_t)snprintf(s + len, cap - len, "%u,n%u,start,%s,,,%u,%s,%u,", i, i,
                                    in, 50 * (1 + rnd(4)), colls[rnd(6)], 2 + rnd(4) * 3);
            ROW_END(sc);
            open = i;
            snprintf(open_sc, sizeof open_sc, "%s", sc);
            continue;
        }
        static const char *const ops[] = {"mm", "loop_fusion", "output_fusion", "add"};
        int alias = scoped && rnd(8) == 0;
        len += (size_t)snprintf(s + len, cap - len, "%u,n%u,%s,%s,%s,%u,%u,,,%s", i, i,
                                !alias && rnd(6) == 0 ? "nop" : "compute", in, ops[rnd(4)],
                                rnd(4), alias ? 0 : 100 * (1 + rnd(3)),
                                alias ? "alias" : rnd(10) == 0 ? "output" : "");
        ROW_END(sc);
        ok[n_ok++] = i;
    }
#undef ROW_END
    free(ok);
    return s;
}

static char *random_csv(uint32_t n) { return random_csv_scoped(n, 0); }

static const char *const configs[] = {
    "aggressive",
    "aggressive:estimator=approximate",
    "aggressive:resources=per_type",
    "aggressive:resources=per_type,estimator=approximate,collective_permute_overlap_limit=2",
    "aggressive:aggressive_scheduling_policies=false",
    "aggressive:aggressive_scheduling_policies=false,estimator=approximate",
    "aggressive:parallel_collective_overlap_limit=3",
    "aggressive:prioritize_async_depth_over_stall=true",
    "aggressive:top_down_scheduling=true",
    "aggressive:top_down_scheduling=true,estimator=approximate,resources=per_type",
    "aggressive:top_down_scheduling=true,aggressive_scheduling_policies=false",
    "aggressive:schedule_send_recvs=false,resources=per_type",
    "aggressive:memory_limit=2000,rerun=2",
    "aggressive:memory_model=xla,memory_limit=1500,depth_based_memory_pressure_reduction=true",
};

static void test_fast_equals_scan(void)
{
    uint32_t a[400], b[400];
    int mismatches = 0, runs = 0;
    for (int round = 0; round < 60; round++) {
        uint32_t n = 20 + rnd(300);
        char *csv = random_csv(n);
        struct sb_graph *g = graph(csv);
        CHECK(g != NULL);
        for (size_t c = 0; g && c < sizeof configs / sizeof configs[0]; c++) {
            char spec[256];
            snprintf(spec, sizeof spec, "%s%sselection=scan", configs[c],
                     strchr(configs[c], ':') ? "," : ":");
            int ra = schedule(g, configs[c], a), rb = schedule(g, spec, b);
            CHECK(ra == 0 && rb == 0);
            int same = !ra && !rb && !memcmp(a, b, g->v.n_nodes * sizeof *a);
            if (!same && mismatches++ < 3)
                fprintf(stderr, "round %d, %s: fast and scan orders differ\n", round,
                        configs[c]);
            runs++;
        }
        sb_graph_free(g);
        free(csv);
    }
    CHECK_EQ_U(mismatches, 0);
    CHECK(runs == 60 * (int)(sizeof configs / sizeof configs[0]));
}

/* Issue 35: XLA schedules each computation apart, a loop one instruction
 * of its caller.  Two iterations of a loop (scopes loop#0, loop#1), each a
 * compute feeding an all_reduce (10 us each), y reading both results:
 *  - separate (the default): each iteration is a chain c -> s -> d, so its
 *    order is forced, and the top scope is x, the loop, y: x c0 s0 d0 c1 s1
 *    d1 y.  Times: c0 0-10, all_reduce 0 10-20, c1 20-30, all_reduce 1
 *    30-40, y 40-41: makespan 41.  Memory at s0 (position 2): x 100 + c0's
 *    buffer 100 (read by the collective until d0) + s0's 100 = 300; at s1
 *    the same three kinds (x is freed after c1): 300.
 *  - flat (the graph as one computation): bottom-up y, then d1 (kOriginalOrder
 *    between the two dones), s1 (d0 cannot take the one slot d1 holds), then
 *    d0 by kScheduleDone before c1, then c1, s0, c0, x.  Reversed: x c0 s0 c1
 *    d0 s1 d1 y -- all_reduce 0 runs behind iteration 1's compute, which XLA
 *    cannot do.  Times: c0 0-10, all_reduce 0 10-20 beside c1 10-20,
 *    all_reduce 1 20-30, y 30-31: makespan 31.  At c1 (position 3) x, c0's,
 *    s0's and c1's buffers are live: 400. */
static const char two_iter_csv[] =
    "id,name,kind,inputs,cost_us,out_bytes,coll,comm_us,scope\n"
    "0,x,input,,,100,,,\n"
    "1,c0,compute,0,10,100,,,loop#0\n"
    "2,s0,start,1,,100,all_reduce,10,loop#0\n"
    "3,d0,done,2,,,,,loop#0\n"
    "4,c1,compute,0,10,100,,,loop#1\n"
    "5,s1,start,4,,100,all_reduce,10,loop#1\n"
    "6,d1,done,5,,,,,loop#1\n"
    "7,y,compute,3 6,1,10,,,\n";

static void sim_of(const struct sb_graph *g, const char *spec, double *span, uint64_t *peak)
{
    struct sb_schedule s;
    struct sb_sim_config sc;
    struct sb_sim_result r;
    sb_schedule_init(&s, g, 1);
    CHECK(schedule(g, spec, s.order) == 0);
    sb_sim_defaults(&sc);
    sb_sim_run(g, &s, &sc, &r);
    *span = r.makespan_us;
    *peak = r.peak_mem_bytes;
    sb_sim_result_free(&r);
    sb_schedule_free(&s);
}

static void test_computations(void)
{
    struct sb_graph *g = graph(two_iter_csv);
    static const uint32_t separate[] = {0, 1, 2, 3, 4, 5, 6, 7};
    static const uint32_t flat[] = {0, 1, 2, 4, 3, 5, 6, 7};
    check_order(g, "aggressive", separate);
    check_order(g, "aggressive:computations=separate,selection=scan", separate);
    check_order(g, "aggressive:top_down_scheduling=true", separate);
    check_order(g, "aggressive:computations=flat", flat);
    check_order(g, "aggressive:computations=flat,selection=scan", flat);
    double span;
    uint64_t peak;
    sim_of(g, "aggressive", &span, &peak);
    CHECK_NEAR(span, 41);
    CHECK_EQ_U(peak, 300);
    sim_of(g, "aggressive:computations=flat", &span, &peak);
    CHECK_NEAR(span, 31);
    CHECK_EQ_U(peak, 400);
    sb_graph_free(g);
}

/* Each scope's nodes (its nested loops' included) are one block of the
 * schedule, so no node leaves its computation and a loop's iterations run one
 * after another: positions of scope s's subtree span exactly as many places
 * as it has nodes, and iteration k's block ends before iteration k+1's. */
static int blocks_hold(const struct sb_graph *g, const uint32_t *order)
{
    const struct sb_graph_view *v = &g->v;
    uint32_t n = v->n_nodes, ns = v->n_scopes, bad = 0;
    uint32_t *lo = malloc(ns * 4), *hi = malloc(ns * 4), *cnt = calloc(ns, 4);
    for (uint32_t s = 0; s < ns; s++)
        lo[s] = UINT32_MAX, hi[s] = 0;
    for (uint32_t p = 0; p < n; p++)
        for (uint32_t s = v->scope[order[p]];; s = v->scope_parent[s]) {
            lo[s] = p < lo[s] ? p : lo[s];
            hi[s] = p > hi[s] ? p : hi[s];
            cnt[s]++;
            if (!s)
                break;
        }
    for (uint32_t s = 1; s < ns; s++) {
        if (cnt[s] && hi[s] - lo[s] + 1 != cnt[s])
            bad++;
        for (uint32_t t = 1; t < ns; t++) /* later iterations of the same loop after */
            if (cnt[s] && cnt[t] && v->scope_loop[s] == v->scope_loop[t] &&
                v->scope_iter[s] < v->scope_iter[t] && hi[s] > lo[t])
                bad++;
    }
    free(lo), free(hi), free(cnt);
    return bad == 0;
}

static void test_scoped_random(void)
{
    uint32_t a[400], b[400];
    int bad = 0, runs = 0, mismatches = 0;
    static const char *const extra[] = {"", "memory_limit=2000", "memory_limit=2000,rerun=2",
                                        "memory_model=xla,memory_limit=1500"};
    for (int round = 0; round < 40; round++) {
        uint32_t n = 30 + rnd(300);
        char *csv = random_csv_scoped(n, 1);
        struct sb_graph *g = graph(csv);
        CHECK(g != NULL && g->v.n_scopes > 3);
        for (size_t c = 0; g && c < sizeof configs / sizeof configs[0]; c++) {
            char spec[256], scan[300];
            const char *x = extra[(size_t)round % 4];
            snprintf(spec, sizeof spec, "%s%s%s", configs[c],
                     *x ? (strchr(configs[c], ':') ? "," : ":") : "", x);
            snprintf(scan, sizeof scan, "%s%sselection=scan", spec, strchr(spec, ':') ? "," : ":");
            int ra = schedule(g, spec, a), rb = schedule(g, scan, b);
            CHECK(ra == 0 && rb == 0);
            bad += !ra && !blocks_hold(g, a);
            if (!ra && !rb && memcmp(a, b, g->v.n_nodes * sizeof *a) && mismatches++ < 3)
                fprintf(stderr, "scoped round %d, %s: fast and scan differ\n", round, spec);
            runs++;
        }
        sb_graph_free(g);
        free(csv);
    }
    CHECK_EQ_U(bad, 0);
    CHECK_EQ_U(mismatches, 0);
    CHECK(runs == 40 * (int)(sizeof configs / sizeof configs[0]));
}

/* Issue 35, item 2: the default memory_limit is XLA GPU's
 * GetSchedulerMemoryLimit (gpu_hlo_schedule.cc, openxla/xla 025352635a15):
 * (device * 80 / 100 - io) * 95 / 100, io being the module's inputs and
 * outputs as XLA counts them.  hlo_io_alias.hlo's io is 180 bytes
 * (tests/test_hlo.c: parameters 128 + 32, result table 16 + 128 + 4, minus
 * output {0} aliased to parameter 0, 128).  On a device of 10,000 bytes:
 * base 8,000; (8,000 - 180) * 95 / 100 = 7,429, the bytes XLA's tracker may
 * hold.  memory_model=harness counts the inputs and outputs XLA took away,
 * so the row's limit is 7,429 + 180 = 7,609; memory_model=xla skips the
 * graph's inputs (x 128 + y 32 = 160): the row says 7,429 + 160 = 7,589.
 * On the built-in 80e9-byte device: base 64e9, (64e9 - 180) * 95 / 100 =
 * 60,799,999,829 (integer arithmetic, as XLA's), + 180 = 60,800,000,009.
 * On 200 bytes the base (160) is below io: XLA's int64 goes negative and
 * wraps in its uint64 return, a limit nothing reaches: none, row empty (0). */
static uint64_t limit_of(const char *machine_yaml, const char *spec)
{
    struct sb_err e;
    struct sb_cost_params c;
    struct sb_graph *g = sb_graph_load(SB_TEST_DATA "/hlo_cases/hlo_io_alias.hlo", &e);
    struct sb_machine *m = NULL;
    uint64_t got = UINT64_MAX;
    if (!g) {
        fprintf(stderr, "%s\n", e.msg);
        CHECK(0);
        return got;
    }
    sb_cost_defaults(&c);
    sb_cost_apply(&c, g);
    if (machine_yaml) {
        char path[600];
        snprintf(path, sizeof path, "%s/limit.yaml", SB_TEST_TMP);
        FILE *f = fopen(path, "w");
        CHECK(f != NULL);
        if (f) {
            fputs(machine_yaml, f);
            fclose(f);
        }
        m = sb_machine_load(path, &e);
        CHECK(m != NULL && sb_machine_apply(m, g, &e) == 0);
    }
    struct sb_sched sc;
    struct sb_schedule s;
    CHECK(sb_sched_parse(&sc, spec, &e) == 0);
    sb_schedule_init(&s, g, 1);
    if (sb_sched_run(&sc, g, &s, &e) == 0)
        got = s.mem_limit_bytes;
    else
        fprintf(stderr, "%s: %s\n", spec, e.msg);
    CHECK_EQ_U(g->v.io_bytes, 180);
    sb_schedule_free(&s);
    sb_sched_free(&sc);
    sb_graph_free(g);
    sb_machine_free(m);
    return got;
}

static void test_default_limit(void)
{
    static const char dev10k[] = "devices:\n  - {name: g, kind: gpu, mem_bytes: 10000B}\n";
    static const char dev200[] = "devices:\n  - {name: g, kind: gpu, mem_bytes: 200B}\n";
    CHECK_EQ_U(limit_of(dev10k, "aggressive"), 7609);
    CHECK_EQ_U(limit_of(dev10k, "aggressive:memory_model=xla"), 7589);
    CHECK_EQ_U(limit_of(NULL, "aggressive"), 60800000009ull);
    CHECK_EQ_U(limit_of(dev200, "aggressive"), 0);
    CHECK_EQ_U(limit_of(dev10k, "aggressive:memory_limit=none"), 0);
    CHECK_EQ_U(limit_of(dev10k, "aggressive:memory_limit=5KB"), 5000);
}

/* Issue 35, item 3: XLA's over-limit rules are one-step greedy.  Inputs n0
 * (10 B) and n1 (100 B); n2 = f(n1), 1 B; n3 = f(n0, n1), 100 B; an
 * all-gather starts from n2 and n3.  Any order peaks at n3 with n0, n1 and
 * n3 live: 210 B at least.  With memory_limit=1 every step is over the
 * limit; bottom-up after the collective, n3 would free its 100 and make n0
 * and n1 live (+10), n2 free its 1 and make n1 live (+99):
 * kDecreaseMemoryOverLimit takes n3 first, so n2 runs before n3 in time and
 * n0 (the nop n0 follows at once), then n2, then n1: reversed, n1 n2 n0 n3
 * n4 n5, and n2's byte is live at n3: 211 B.  memory_guard (default)
 * compares with the rules' schedule without a limit, which reaches the 210 B
 * floor, and keeps that. */
static const char greedy_csv[] =
    "id,name,kind,inputs,cost_us,out_bytes,coll,comm_us\n"
    "0,n0,input,,,10,,\n"
    "1,n1,input,,,100,,\n"
    "2,n2,compute,1,1,1,,\n"
    "3,n3,compute,0 1,10,100,,\n"
    "4,n4,start,2 3,,100,all_gather,20\n"
    "5,n5,done,4,,,,\n";

static void test_memory_guard(void)
{
    struct sb_graph *g = graph(greedy_csv);
    static const uint32_t greedy[] = {1, 2, 0, 3, 4, 5};
    check_order(g, "aggressive:memory_limit=1,memory_guard=false", greedy);
    check_order(g, "aggressive:memory_limit=1,memory_guard=false,selection=scan", greedy);
    double span;
    uint64_t peak;
    sim_of(g, "aggressive:memory_limit=1,memory_guard=false", &span, &peak);
    CHECK_EQ_U(peak, 211);
    sim_of(g, "aggressive:memory_limit=1", &span, &peak);
    CHECK_EQ_U(peak, 210);
    sim_of(g, "aggressive:memory_limit=none", &span, &peak);
    CHECK_EQ_U(peak, 210);
    sb_graph_free(g);
}

int main(void)
{
    sb_registry_add_builtins();
    test_computations();
    test_default_limit();
    test_memory_guard();
    test_scoped_random();
    test_overlap();
    test_top_down();
    test_group();
    test_overlap_limit();
    test_memory_limit();
    test_no_collectives();
    test_bad_params();
    test_fast_equals_scan();
    sb_registry_clear();
    return check_report();
}
