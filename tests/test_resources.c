/* Resources on a device (issue 28; docs/machines.md, "Resources"): cases small
 * enough to time by hand, then a brute-force optimum (every placement x every
 * topological order, each replayed by the simulator) on random 5-8-node
 * graphs with resources, against which heft's and dp's makespans are reported
 * (mean and max ratio) and which no schedule, heft's and dp's included, may
 * beat, nor go below the lower bound. */
#include <stdlib.h>

#include "schedbench/policy.h"
#include "schedbench/policy.h"
#include "check.h"
#include "core/core.h"
#include "core/machine.h"
#include "import/import.h"

static char machine_path[600];

static struct sb_machine *machine(const char *yaml)
{
    struct sb_err e;
    FILE *f = fopen(machine_path, "w");
    if (!f)
        return NULL;
    fputs(yaml, f);
    fclose(f);
    struct sb_machine *m = sb_machine_load(machine_path, &e);
    if (!m)
        fprintf(stderr, "%s\n", e.msg);
    return m;
}

/* csv on m; NULL with the message in e when the machine refuses it. */
static struct sb_graph *graph_on(struct sb_machine *m, const char *csv, struct sb_err *e)
{
    struct sb_graph *G = sb_csv_load_mem("res.csv", csv, strlen(csv), e);
    struct sb_cost_params c;
    if (!G)
        return NULL;
    sb_cost_defaults(&c);
    sb_cost_apply(&c, G);
    if (sb_machine_apply(m, G, e)) {
        sb_graph_free(G);
        return NULL;
    }
    return G;
}

/* Simulated makespan of a policy's schedule (s is left initialised; the
 * caller frees it); -1 when it fails or is invalid. */
static double run_spec(const struct sb_graph *G, const char *spec, struct sb_schedule *s)
{
    struct sb_err e;
    struct sb_sched sched;
    struct sb_sim_config sc;
    struct sb_sim_result r;
    sb_schedule_init(s, G, G->v.machine->n_devices);
    if (sb_sched_parse(&sched, spec, &e))
        return fprintf(stderr, "%s\n", e.msg), -1;
    int rc = sb_sched_run(&sched, G, s, &e);
    sb_sched_free(&sched);
    if (rc || sb_schedule_validate(&G->v, s, &e))
        return fprintf(stderr, "%s: %s\n", spec, e.msg), -1;
    sb_sim_defaults(&sc);
    sb_sim_run(G, s, &sc, &r);
    double t = r.makespan_us;
    sb_sim_result_free(&r);
    return t;
}

/* dp's placer on a device with resources (docs/dp.md, "Packing"): g0 of 4
 * sms, g1 of 4 sms at speed 0.8; a and b independent, 10 us, 2 sms each,
 * streams 0 and 1.  On g0, 2 + 2 <= 4 and the streams differ, so both run
 * 0..10: makespan 10, under the default (skyline), the note's placer and the
 * grouped search alone (sync=1).  A placer that treated g0 as serial would
 * see b finish at 20 there and at 10 / 0.8 = 12.5 on g1, put it on g1 and
 * end at 12.5 (the simulator cannot undo a placement), so sync=1 checks the
 * packing itself; the default also has heft's plan, which packs too. */
static void dp_packs(void)
{
    struct sb_err e;
    struct sb_machine *m = machine("devices:\n  - {name: g0, resources: {sms: 4}}\n"
                                   "  - {name: g1, speed: 0.8, resources: {sms: 4}}\n"
                                   "links:\n  default: {gbps: 100, latency_us: 1}\n");
    CHECK(m != NULL);
    if (!m)
        return;
    struct sb_graph *G = graph_on(m,
                                  "id,name,kind,inputs,op,cost_us,stream,res.sms\n"
                                  "0,a,compute,,mm,10,0,2\n"
                                  "1,b,compute,,mm,10,1,2\n",
                                  &e);
    CHECK(G != NULL);
    static const char *const spec[] = {"dp", "dp:placer=note", "dp:sync=1",
                                       "dp:sync=1,placer=note"};
    for (uint32_t i = 0; G && i < 4; i++) {
        struct sb_schedule s;
        CHECK_NEAR(run_spec(G, spec[i], &s), 10);
        sb_schedule_free(&s);
    }
    sb_graph_free(G);
    sb_machine_free(m);
}

/* The original order on device 0; begin/end of each node recorded. */
static void run_original(const struct sb_graph *G, struct sb_sim_result *r)
{
    struct sb_schedule s;
    struct sb_sim_config c;
    sb_schedule_init(&s, G, G->v.machine->n_devices);
    for (uint32_t v = 0; v < G->v.n_nodes; v++)
        s.order[v] = v, s.device[v] = 0;
    sb_sim_defaults(&c);
    c.record = 1;
    sb_sim_run(G, &s, &c, r);
    sb_schedule_free(&s);
}

/* One GPU with 4 sms.  Each node 10 us on its own stream.
 *   halves: a and b hold 2 sms each: both fit at once, 0..10 and 0..10:
 *     they finish together, makespan 10.  Bound: the sms' work 2*10 + 2*10
 *     = 40 sm-us over 4 sms = 10.
 *   three halves: a and b 0..10; c would make 6 > 4 at any time in
 *     [0, 10), so it starts when they end: 10..20, makespan 20.  Bound:
 *     3 * 2 * 10 / 4 = 15 (a stream alone or the critical path: 10).
 *   too big: res.sms 5 on a device of 4 is refused when the machine is
 *     applied, naming the file and line, the node, the resource and the
 *     limit. */
static void by_hand(void)
{
    struct sb_err e;
    struct sb_sim_result r;
    struct sb_machine *m = machine("devices:\n  - {name: g0, resources: {sms: 4}}\n");
    CHECK(m != NULL);
    if (!m)
        return;
    struct sb_graph *G = graph_on(m,
                                  "id,name,kind,inputs,op,cost_us,stream,res.sms\n"
                                  "0,a,compute,,mm,10,0,2\n"
                                  "1,b,compute,,mm,10,1,2\n", &e);
    CHECK(G != NULL);
    if (G) {
        run_original(G, &r);
        CHECK_NEAR(r.begin_us[0], 0);
        CHECK_NEAR(r.begin_us[1], 0);
        CHECK_NEAR(r.end_us[0], 10);
        CHECK_NEAR(r.end_us[1], 10);
        CHECK_NEAR(r.makespan_us, 10);
        CHECK_NEAR(r.makespan_lb_us, 10);
        sb_sim_result_free(&r);
        sb_graph_free(G);
    }
    G = graph_on(m,
                 "id,name,kind,inputs,op,cost_us,stream,res.sms\n"
                 "0,a,compute,,mm,10,0,2\n"
                 "1,b,compute,,mm,10,1,2\n"
                 "2,c,compute,,mm,10,2,2\n", &e);
    CHECK(G != NULL);
    if (G) {
        run_original(G, &r);
        CHECK_NEAR(r.end_us[0], 10);
        CHECK_NEAR(r.end_us[1], 10);
        CHECK_NEAR(r.begin_us[2], 10);
        CHECK_NEAR(r.makespan_us, 20);
        CHECK_NEAR(r.makespan_lb_us, 15);
        sb_sim_result_free(&r);
        sb_graph_free(G);
    }
    G = graph_on(m,
                 "id,name,kind,inputs,op,cost_us,res.sms\n"
                 "0,a,compute,,mm,10,5\n", &e);
    CHECK(G == NULL);
    /* the row is line 2 (after the header) */
    CHECK(strstr(e.msg, "res.csv:2: node 0 (a) uses 5 of resource 'sms' on device g0 (limit 4)") !=
          NULL);
    sb_graph_free(G);
    /* The order is the priority (docs/machines.md): x (2 sms, 10 us), then y
     * (4 sms, 10 us), then z (2 sms), each on its own stream.  x 0..10; y
     * needs all 4, so 10..20.  z, later in the order, fits beside x at 0
     * when it is short (5 us: 0..5, before y), and does not when it would
     * still run at 10, where y holds every sm (15 us: it waits for y, 20..35):
     * a later node never delays an earlier one.  Makespans 20 and 35. */
    for (int len = 5; len <= 15; len += 10) {
        char csv[300];
        snprintf(csv, sizeof csv,
                 "id,name,kind,inputs,op,cost_us,stream,res.sms\n"
                 "0,x,compute,,mm,10,0,2\n"
                 "1,y,compute,,mm,10,1,\n"
                 "2,z,compute,,mm,%d,2,2\n", len);
        G = graph_on(m, csv, &e);
        CHECK(G != NULL);
        if (!G)
            continue;
        run_original(G, &r);
        CHECK_NEAR(r.begin_us[1], 10);
        CHECK_NEAR(r.begin_us[2], len == 5 ? 0 : 20);
        CHECK_NEAR(r.makespan_us, len == 5 ? 20 : 35);
        sb_sim_result_free(&r);
        sb_graph_free(G);
    }
    sb_machine_free(m);
    /* Whole device by default, and the same graph on a device declaring no
     * resources: the halves graph without res.sms on {sms: 4} runs a then b
     * (each holds all 4): 20.  On a device without resources the streams
     * alone limit it: both at 0, makespan 10. */
    static const char *const whole[] = {"devices:\n  - {name: g0, resources: {sms: 4}}\n",
                                        "devices:\n  - {name: g0}\n"};
    for (int k = 0; k < 2; k++) {
        m = machine(whole[k]);
        G = m ? graph_on(m, "id,name,kind,inputs,op,cost_us,stream\n"
                            "0,a,compute,,mm,10,0\n1,b,compute,,mm,10,1\n", &e) : NULL;
        CHECK(G != NULL);
        if (G) {
            run_original(G, &r);
            CHECK_NEAR(r.makespan_us, k == 0 ? 20 : 10);
            sb_sim_result_free(&r);
        }
        sb_graph_free(G);
        sb_machine_free(m);
    }
    /* A res.<name> no device declares, and a limit that is not a count: on
     * line 2, "  - {name: g0, resources: {sms: " is 32 characters, so the
     * value begins at column 33. */
    m = machine("devices:\n  - {name: g0, resources: {sms: 4}}\n");
    G = m ? graph_on(m, "id,name,kind,inputs,op,cost_us,res.cores\n0,a,compute,,mm,1,1\n", &e)
          : NULL;
    CHECK(G == NULL);
    CHECK(strstr(e.msg, "column res.cores: no device of the machine") != NULL);
    sb_machine_free(m);
    FILE *f = fopen(machine_path, "w");
    if (f) {
        fputs("devices:\n  - {name: g0, resources: {sms: 1.5}}\n", f);
        fclose(f);
        CHECK(sb_machine_load(machine_path, &e) == NULL);
        CHECK(strstr(e.msg, ":2:33: resource 'sms' must be an integer in 1..10^6") != NULL);
    }
}

/* convert writes res.<name> back: a use, a 0 (holds none) and an empty
 * field (the whole device) survive a write and a reload; a bad use is
 * refused at its field: row 3 is line 3, res.sms the 5th column. */
static void round_trip(void)
{
    static const char csv[] = "id,name,kind,inputs,res.sms,op,cost_us\n"
                              "0,a,compute,,2,mm,1\n"
                              "1,b,compute,0,0,mm,1\n"
                              "2,c,compute,1,,mm,1\n";
    char path[700];
    struct sb_err e;
    snprintf(path, sizeof path, "%s/res_round_trip.csv", SB_TEST_TMP);
    struct sb_graph *G = sb_csv_load_mem("rt.csv", csv, strlen(csv), &e);
    CHECK(G != NULL);
    if (!G)
        return;
    CHECK(sb_graph_write(G, path, &e) == 0);
    struct sb_graph *H = sb_graph_load(path, &e);
    CHECK(H != NULL);
    if (H) {
        CHECK_EQ_U(H->n_res_col, 1);
        CHECK(H->n_res_col == 1 && !strcmp(H->res_col_name[0], "sms"));
        for (uint32_t v = 0; H->n_res_col == 1 && v < 3; v++)
            CHECK_EQ_U(H->res_col_use[v], v == 0 ? 2 : v == 1 ? 0 : SB_RES_ALL);
        sb_graph_free(H);
    }
    sb_graph_free(G);
    remove(path);
    static const char bad[] = "id,name,kind,inputs,res.sms\n0,a,compute,,1\n1,b,compute,,x\n";
    CHECK(sb_csv_load_mem("bad.csv", bad, strlen(bad), &e) == NULL);
    CHECK(strstr(e.msg, "bad.csv:3:5: res.sms 'x' is not an integer in 0..10^6") != NULL);
}

/* ---- brute force --------------------------------------------------------- */

static uint64_t rng = 0x28beef;

static uint32_t rnd(uint32_t n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng % n);
}

#define MAX_ORDERS 6000

static uint32_t orders[MAX_ORDERS][8], n_orders;

/* Every topological order of g (ids 0..n-1), up to MAX_ORDERS. */
static void all_orders(const struct sb_graph_view *g, uint32_t *cur, uint32_t depth,
                       uint8_t *done)
{
    uint32_t n = g->n_nodes;
    if (n_orders >= MAX_ORDERS)
        return;
    if (depth == n) {
        memcpy(orders[n_orders++], cur, n * sizeof *cur);
        return;
    }
    for (uint32_t v = 0; v < n; v++) {
        int ready = !done[v];
        for (uint32_t e = g->pred_off[v]; ready && e < g->pred_off[v + 1]; e++)
            ready = done[g->pred[e]];
        if (!ready)
            continue;
        done[v] = 1;
        cur[depth] = v;
        all_orders(g, cur, depth + 1, done);
        done[v] = 0;
    }
}

/* Random graphs of 5..8 compute nodes (1..10 us, streams 0..2, res.sms 1..4
 * or empty) on one GPU of 4 sms or on that GPU and a second of 2 sms at half
 * speed.  The optimum is the least simulated makespan over every placement
 * and topological order; heft's makespan must not be below it, nor the
 * optimum below the bound. */
static void brute_force(uint32_t n_graphs)
{
    double sum = 0, worst = 0;
    uint32_t counted = 0, n_eq = 0;
    /* dp's specs: the default, the note's placer, and the grouped search alone
     * with each placer (where the packing shows: the default keeps the better
     * of the grouped schedule and heft's) */
    static const char *const dspec[] = {"dp", "dp:placer=note", "dp:sync=1",
                                        "dp:sync=1,placer=note"};
    enum { N_DP = 4 };
    double dsum[N_DP] = {0}, dworst[N_DP] = {0};
    uint32_t d_le_heft[N_DP] = {0};
    struct sb_machine *m1 = machine("devices:\n  - {name: g0, resources: {sms: 4}}\n");
    struct sb_machine *m2 = machine("devices:\n  - {name: g0, resources: {sms: 4}}\n"
                                    "  - {name: g1, speed: 0.5, resources: {sms: 2}}\n"
                                    "links:\n  default: {gbps: 100, latency_us: 1}\n");
    CHECK(m1 && m2);
    for (uint32_t k = 0; k < n_graphs && m1 && m2; k++) {
        char csv[2048];
        size_t len = (size_t)snprintf(csv, sizeof csv,
                                      "id,name,kind,inputs,op,cost_us,stream,res.sms\n");
        uint32_t n = 5 + rnd(4);
        for (uint32_t v = 0; v < n; v++) {
            char ins[32] = "", use[8] = "";
            uint32_t a = v ? rnd(v + 2) : v + 2, b = v ? rnd(v + 3) : v + 2; /* >= v: none */
            if (a < v)
                snprintf(ins, sizeof ins, "%u", a);
            if (b < v && b != a)
                snprintf(ins + strlen(ins), sizeof ins - strlen(ins), "%s%u", *ins ? " " : "", b);
            if (rnd(5))
                snprintf(use, sizeof use, "%u", 1 + rnd(2 + (k % 2 ? 0 : 2)));
            len += (size_t)snprintf(csv + len, sizeof csv - len, "%u,n%u,compute,%s,mm,%u,%u,%s\n",
                                    v, v, ins, 1 + rnd(10), rnd(3), use);
        }
        struct sb_machine *m = k % 2 ? m2 : m1;
        struct sb_err e;
        struct sb_graph *G = graph_on(m, csv, &e);
        CHECK(G != NULL);
        if (!G) {
            fprintf(stderr, "%s\n%s", e.msg, csv);
            continue;
        }
        const struct sb_graph_view *g = &G->v;
        uint32_t nd = g->machine->n_devices, cur[8];
        uint8_t done[8] = {0};
        n_orders = 0;
        all_orders(g, cur, 0, done);
        uint32_t n_place = 1;
        for (uint32_t v = 0; v < n; v++)
            n_place *= nd;
        if (n_orders >= MAX_ORDERS || (uint64_t)n_orders * n_place > 400000) {
            sb_graph_free(G); /* too many to try in a unit test */
            continue;
        }
        struct sb_schedule s;
        struct sb_sim_config c;
        struct sb_sim_result r;
        sb_sim_defaults(&c);
        sb_schedule_init(&s, G, nd);
        double best = INFINITY, lb = 0;
        for (uint32_t p = 0; p < n_place; p++) {
            uint32_t x = p;
            int ok = 1;
            for (uint32_t v = 0; v < n; v++, x /= nd) {
                s.device[v] = (int32_t)(x % nd);
                ok &= isfinite(g->dev_dur_us[v * nd + x % nd]);
            }
            for (uint32_t o = 0; ok && o < n_orders; o++) {
                memcpy(s.order, orders[o], n * sizeof *s.order);
                sb_sim_run(G, &s, &c, &r);
                if (r.makespan_us < best)
                    best = r.makespan_us;
                lb = r.makespan_lb_us;
                sb_sim_result_free(&r);
            }
        }
        double planned;
        CHECK(sb_heft_plan(g, &s, &planned, 1) == 0);
        sb_sim_run(G, &s, &c, &r);
        double ratio = r.makespan_us / best;
        CHECK(r.makespan_us >= best - 1e-9 * best);
        CHECK(lb <= best + 1e-9 * best);
        CHECK_NEAR(r.makespan_us, planned);
        for (uint32_t i = 0; i < N_DP; i++) {
            struct sb_schedule ds;
            double t = run_spec(G, dspec[i], &ds);
            sb_schedule_free(&ds);
            CHECK(t >= best - 1e-9 * best); /* nothing beats the optimum */
            dsum[i] += t / best;
            if (t / best > dworst[i])
                dworst[i] = t / best;
            d_le_heft[i] += t <= r.makespan_us + 1e-9 * r.makespan_us;
        }
        /* dp's placer, the whole graph as one group (closed: every node is a
         * task): the end it predicts is what the simulator makes of the order
         * and devices it emits, with either placer. */
        for (int pl = 0; pl < 2; pl++) {
            struct sb_dp_ctx dc;
            CHECK(sb_dp_ctx_init(&dc, g) == 0);
            dc.placer = pl;
            struct sb_dp_state *s0 = sb_dp_initial(&dc, 1), *s1 = NULL;
            uint32_t grp[8];
            for (uint32_t v = 0; v < n; v++)
                grp[v] = v;
            double pred = s0 ? sb_dp_plan(&dc, s0, grp, n, &s1, 1) : -1;
            CHECK(pred > 0 && s1 != NULL);
            if (s1) {
                struct sb_schedule ps;
                sb_schedule_init(&ps, G, nd);
                for (uint32_t i = 0; i < n; i++)
                    ps.order[i] = s1->group[i], ps.device[s1->group[i]] = s1->gdev[i];
                struct sb_sim_result pr;
                sb_sim_run(G, &ps, &c, &pr);
                CHECK_NEAR(pr.makespan_us, pred);
                CHECK(pred >= best - 1e-9 * best);
                sb_sim_result_free(&pr);
                sb_schedule_free(&ps);
            }
            sb_dp_state_free(s1);
            sb_dp_state_free(s0);
            sb_dp_ctx_free(&dc);
        }
        sum += ratio, counted++;
        n_eq += ratio < 1 + 1e-9;
        if (ratio > worst)
            worst = ratio;
        sb_sim_result_free(&r);
        sb_schedule_free(&s);
        sb_graph_free(G);
    }
    printf("resources: brute force on %u random graphs of 5-8 nodes (1 or 2 devices): heft / "
           "optimum mean %.4f, max %.4f; heft optimal on %u\n", counted,
           counted ? sum / counted : 0, worst, n_eq);
    CHECK(d_le_heft[0] == counted); /* dp keeps the better of its own and heft's */
    CHECK(d_le_heft[1] == counted);
    for (uint32_t i = 0; i < N_DP; i++)
        printf("resources: %s / optimum mean %.4f, max %.4f; <= heft on %u of %u\n", dspec[i],
               counted ? dsum[i] / counted : 0, dworst[i], d_le_heft[i], counted);
    CHECK(counted >= n_graphs / 2);
    sb_machine_free(m1);
    sb_machine_free(m2);
}

/* A device's `streams` (docs/machines.md): three 10 us kernels on streams
 * 0, 1 and 2 run at once on a device that does not say (30 us of work in
 * 10); on one with `streams: 2` stream 2 folds onto stream 0 (2 mod 2), so c
 * waits for a: a and b 0..10, c 10..20, makespan 20.  With `streams: 1`
 * all three share one stream: 0..10, 10..20, 20..30.  (test_heft's random
 * machines give odd devices 2 streams: heft plans the folding too.) */
static void device_streams(void)
{
    static const char *const csv = "id,name,kind,inputs,op,cost_us,stream\n"
                                   "0,a,compute,,mm,10,0\n"
                                   "1,b,compute,,mm,10,1\n"
                                   "2,c,compute,,mm,10,2\n";
    static const char *const yaml[] = {"devices:\n  - {name: g0}\n",
                                       "devices:\n  - {name: g0, streams: 2}\n",
                                       "devices:\n  - {name: g0, streams: 1}\n"};
    static const double c_begin[] = {0, 10, 20}, span[] = {10, 20, 30};
    for (int k = 0; k < 3; k++) {
        struct sb_err e;
        struct sb_sim_result r;
        struct sb_machine *m = machine(yaml[k]);
        CHECK(m != NULL);
        if (!m)
            continue;
        struct sb_graph *G = graph_on(m, csv, &e);
        CHECK(G != NULL);
        if (G) {
            run_original(G, &r);
            CHECK_NEAR(r.begin_us[2], c_begin[k]);
            CHECK_NEAR(r.makespan_us, span[k]);
            sb_sim_result_free(&r);
            sb_graph_free(G);
        }
        sb_machine_free(m);
    }
    CHECK(machine("devices:\n  - {name: g0, streams: 0}\n") == NULL);
    CHECK(machine("devices:\n  - {name: g0, streams: 1.5}\n") == NULL);
}

int main(void)
{
    snprintf(machine_path, sizeof machine_path, "%s/res_machine.yaml", SB_TEST_TMP);
    sb_registry_add_builtins();
    by_hand();
    dp_packs();
    device_streams();
    round_trip();
    const char *env = getenv("SB_RES_N");
    brute_force(env && atoi(env) > 0 ? (uint32_t)atoi(env) : 40);
    remove(machine_path);
    sb_registry_clear();
    return check_report();
}
