/* dp (schedulers/dp.c, docs/dp.md): a graph solved by hand, then random
 * graphs of up to 9 nodes where
 *   1. exhaustive dp equals a brute force over every sequence of groups, made
 *      here by recursion with the same placer (exact when copies are free;
 *      otherwise dp keeps one state per finished set and may only be worse);
 *   2. the simulator reproduces the makespan the placer planned for the groups
 *      dp chose (replayed from the returned barriers);
 *   3. nothing beats an exhaustive optimum over every placement and every
 *      topological order without barriers, computed here with the simulator;
 *      the gap of the group-and-synchronise model to it is printed. */
#include <stdlib.h>

#include "schedbench/policy.h"
#include "check.h"
#include "core/core.h"
#include "import/import.h"
#include "core/machine.h"

struct rng {
    uint64_t s;
};

static uint32_t rnd(struct rng *r, uint32_t n)
{
    r->s = r->s * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(r->s >> 33) % n;
}

static struct sb_graph *load(const char *name, const char *csv, size_t n,
                             const struct sb_machine *m)
{
    struct sb_err e;
    struct sb_cost_params c;
    struct sb_graph *g = csv ? sb_csv_load_mem(name, csv, n, &e) : sb_graph_load(name, &e);
    if (!g) {
        fprintf(stderr, "%s\n", e.msg);
        return NULL;
    }
    sb_cost_defaults(&c);
    sb_cost_apply(&c, g);
    if (sb_machine_apply(m, g, &e)) {
        fprintf(stderr, "%s\n", e.msg);
        sb_graph_free(g);
        return NULL;
    }
    return g;
}

/* Simulated makespan of a policy's schedule; -1 when it fails or is invalid. */
static double run(const struct sb_graph *g, const char *spec, struct sb_schedule *s)
{
    struct sb_err e;
    struct sb_sched sched;
    struct sb_sim_config sc;
    struct sb_sim_result r;
    if (sb_sched_parse(&sched, spec, &e))
        return fprintf(stderr, "%s\n", e.msg), -1;
    sb_schedule_init(s, g, g->v.machine->n_devices);
    int rc = sb_sched_run(&sched, g, s, &e);
    sb_sched_free(&sched);
    if (rc || sb_schedule_validate(&g->v, s, &e))
        return fprintf(stderr, "%s: %s\n", spec, e.msg), -1;
    sb_sim_defaults(&sc);
    sb_sim_run(g, s, &sc, &r);
    double t = r.makespan_us;
    sb_sim_result_free(&r);
    return t;
}

/* a(10) -> b(10) and c(20) on two identical devices, free copies.  Upward
 * ranks a = c = 20, b = 10: a group places a, c, b.
 *   one group {a,b,c}: a g0 0..10, c g1 0..20 (g0 would end at 30), b g0
 *     10..20: 20, which the default (order prefixes) finds too;
 *   at most two per group: {a,c} then {b}: 20 + 10 = 30; {a} then {c,b}: 10,
 *     then c g0 10..30, b g1 10..20: 30; {a,b} then {c}: 20 + 20 = 40;
 *     singletons 40; so 30. */
static void hand(void)
{
    struct sb_err e;
    struct sb_schedule s;
    struct sb_machine *m = sb_machine_load(SB_TEST_DATA "/dp-hand.yaml", &e);
    struct sb_graph *g = m ? load(SB_TEST_DATA "/dp-hand.csv", NULL, 0, m) : NULL;
    CHECK(g != NULL);
    if (!g) {
        sb_machine_free(m);
        return;
    }
    CHECK_NEAR(run(g, "dp:sync=1", &s), 20);
    CHECK_EQ_U((uint32_t)s.device[3], 1); /* c on g1 */
    sb_schedule_free(&s);
    CHECK_NEAR(run(g, "dp:sync=1,exhaustive=1,beam=0,max_group=2", &s), 30);
    uint32_t barriers = 0;
    for (uint32_t i = 0; i < g->v.n_nodes; i++)
        barriers += s.barrier[i];
    CHECK_EQ_U(barriers, 1);
    sb_schedule_free(&s);
    CHECK_NEAR(run(g, "dp:sync=1,exhaustive=1,beam=0", &s), 20);
    sb_schedule_free(&s);
    /* the default takes HEFT's schedule when it is shorter: ranks a = c = 20,
     * b = 10, so a g0 0..10, c g1 0..20 (g0 would end at 30), b g0 10..20:
     * 20 against the two-per-group model's 30, with no barrier */
    CHECK_NEAR(run(g, "dp:exhaustive=1,beam=0,max_group=2", &s), 20);
    barriers = 0;
    for (uint32_t i = 0; i < g->v.n_nodes; i++)
        barriers += s.barrier[i];
    CHECK_EQ_U(barriers, 0);
    sb_schedule_free(&s);
    sb_graph_free(g);
    sb_machine_free(m);
}

/* A random DAG of `tasks` tasks after one input, sometimes with a collective
 * (start, done) in the middle; outputs of `bytes` when bytes is set. */
static size_t random_graph(struct rng *r, uint32_t tasks, int bytes, char *buf, size_t cap)
{
    size_t n = (size_t)snprintf(buf, cap,
                                "id,name,kind,inputs,op,cost_us,out_bytes,coll,comm_us\n"
                                "0,x,input,,,,%d,,\n", bytes ? 2000 : 0);
    uint32_t coll_at = rnd(r, 2) && tasks >= 4 ? 1 + rnd(r, tasks - 2) : 0;
    for (uint32_t v = 1; v <= tasks; v++) {
        char in[128] = "";
        size_t k = 0;
        uint64_t out = bytes ? 1000 * (1 + rnd(r, 5)) : 0;
        if (coll_at && v == coll_at + 1) { /* the done of the start at coll_at */
            n += (size_t)snprintf(buf + n, cap - n, "%u,n%u,done,%u,,,0,all_gather,\n", v, v,
                                  v - 1);
            continue;
        }
        for (uint32_t p = 1; p < v; p++)
            if (rnd(r, 100) < 35 && !(coll_at && p == coll_at))
                k += (size_t)snprintf(in + k, sizeof in - k, "%s%u", k ? " " : "", p);
        if (!k)
            snprintf(in, sizeof in, "0");
        if (coll_at && v == coll_at)
            n += (size_t)snprintf(buf + n, cap - n, "%u,n%u,start,%s,,,%llu,all_gather,%u\n",
                                  v, v, in, (unsigned long long)out, 1 + rnd(r, 8));
        else
            n += (size_t)snprintf(buf + n, cap - n, "%u,n%u,compute,%s,mm,%u,%llu,,\n", v, v,
                                  in, 1 + rnd(r, 10), (unsigned long long)out);
    }
    return n;
}

/* ---- brute force over every sequence of closed groups ---------------------- */

static double brute(struct sb_dp_ctx *c, const struct sb_dp_state *s, uint32_t max_group)
{
    const struct sb_graph_view *g = c->g;
    if (s->n_done == c->n_tasks)
        return s->t;
    uint32_t rem[16], r = 0, grp[16];
    for (uint32_t v = 0; v < g->n_nodes; v++)
        if (g->kind[v] != SB_KIND_INPUT && !(s->done[v / 64] >> (v % 64) & 1))
            rem[r++] = v;
    double best = INFINITY;
    for (uint32_t mask = 1; mask < (1u << r); mask++) {
        uint32_t k = 0, closed = 1;
        for (uint32_t i = 0; i < r; i++) {
            if (!(mask >> i & 1))
                continue;
            grp[k++] = rem[i];
            for (uint32_t e = g->pred_off[rem[i]]; e < g->pred_off[rem[i] + 1]; e++)
                for (uint32_t j = 0; j < r; j++)
                    if (rem[j] == g->pred[e] && !(mask >> j & 1))
                        closed = 0;
        }
        if (!closed || k > max_group)
            continue;
        struct sb_dp_state *next = NULL;
        if (sb_dp_plan(c, s, grp, k, &next, 4) < 0)
            return -1;
        double t = brute(c, next, max_group);
        sb_dp_state_free(next);
        if (t < best)
            best = t;
    }
    return best;
}

/* The placer's makespan for the groups a schedule's barriers delimit. */
static double replay(struct sb_dp_ctx *c, const struct sb_schedule *s)
{
    const struct sb_graph_view *g = c->g;
    struct sb_dp_state *st = sb_dp_initial(c, 4);
    uint32_t grp[64], k = 0;
    double t = 0;
    for (uint32_t i = 0; i < s->n_nodes && st; i++) {
        uint32_t v = s->order[i];
        if (g->kind[v] != SB_KIND_INPUT)
            grp[k++] = v;
        if ((s->barrier[i] || i + 1 == s->n_nodes) && k) {
            struct sb_dp_state *next = NULL;
            t = sb_dp_plan(c, st, grp, k, &next, 4);
            sb_dp_state_free(st);
            st = next;
            k = 0;
        }
    }
    sb_dp_state_free(st);
    return t;
}

/* ---- exhaustive optimum over placements and orders ------------------------- */

struct opt {
    const struct sb_graph *g;
    struct sb_schedule s;
    uint32_t *indeg;
    uint8_t *used;
    double best;
    uint32_t best_order[16];
    int32_t best_dev[16];
};

/* The makespan by docs/machines.md's rules under the default --sim, for the
 * tiny graphs of this file (at most 16 nodes, 2 devices) and without the
 * simulator's allocations, so that the optimum can replay every schedule:
 * a device runs its nodes in order (one stream); a consumer that cannot read
 * its producer's device needs a copy, made once per (producer, device) when
 * the first consumer there is reached and queued FIFO on its link (latency +
 * bytes / bandwidth, bytes of the buffer the producer owns or views); every
 * edge but a done's own adds the edge latency; one collective at a time per
 * device; a done waits for its collective.  optimum() replays the best
 * schedule with sb_sim_run and checks that it agrees. */
static double plain_makespan(const struct sb_graph_view *g, const uint32_t *order,
                             const int32_t *dev)
{
    const struct sb_machine_view *m = g->machine;
    uint32_t nd = m->n_devices, root[16];
    double fin[16], cend[16], copy[16][2], link[2][2] = {{0, 0}, {0, 0}};
    double stream[2] = {0, 0}, coll[2] = {0, 0}, mk = 0;
    for (uint32_t v = 0; v < g->n_nodes; v++) {
        int view = (g->flags[v] & SB_FLAG_ALIAS) || g->kind[v] == SB_KIND_DONE;
        root[v] = view ? root[g->pred[g->pred_off[v]]] : v;
        copy[v][0] = copy[v][1] = -1;
    }
    for (uint32_t i = 0; i < g->n_nodes; i++) {
        uint32_t v = order[i], d = (uint32_t)dev[v];
        if (g->kind[v] == SB_KIND_INPUT) {
            fin[v] = 0;
            continue;
        }
        double t = 0;
        for (uint32_t e = g->pred_off[v] + (g->kind[v] == SB_KIND_DONE); e < g->pred_off[v + 1];
             e++) {
            uint32_t p = g->pred[e], a = (uint32_t)dev[p];
            double r = fin[p];
            if (a != d && !m->can_read[d * nd + a]) {
                if (copy[p][d] < 0) {
                    double begin = fin[p] > link[a][d] ? fin[p] : link[a][d];
                    copy[p][d] = link[a][d] = begin + m->link_lat_us[a * nd + d] +
                                              (double)g->out_bytes[root[p]] /
                                                  (m->link_gbps[a * nd + d] * 1e3);
                }
                r = copy[p][d];
            }
            if (r + g->edge_lat_us > t)
                t = r + g->edge_lat_us;
        }
        if (stream[d] > t)
            t = stream[d];
        if (g->kind[v] == SB_KIND_COMPUTE)
            t += g->dev_dur_us[v * nd + d];
        else if (g->kind[v] == SB_KIND_START)
            cend[v] = coll[d] = (t > coll[d] ? t : coll[d]) + g->dur_us[v];
        else if (g->kind[v] == SB_KIND_DONE && cend[g->partner[v]] > t)
            t = cend[g->partner[v]];
        fin[v] = stream[d] = t;
        if (t > mk)
            mk = t;
    }
    return mk;
}

static void orders(struct opt *o, uint32_t pos)
{
    const struct sb_graph_view *g = &o->g->v;
    if (pos == g->n_nodes) {
        double t = plain_makespan(g, o->s.order, o->s.device);
        if (t < o->best) {
            o->best = t;
            memcpy(o->best_order, o->s.order, g->n_nodes * sizeof *o->best_order);
            memcpy(o->best_dev, o->s.device, g->n_nodes * sizeof *o->best_dev);
        }
        return;
    }
    for (uint32_t v = 0; v < g->n_nodes; v++) {
        if (o->used[v] || o->indeg[v])
            continue;
        o->used[v] = 1;
        o->s.order[pos] = v;
        for (uint32_t e = g->succ_off[v]; e < g->succ_off[v + 1]; e++)
            o->indeg[g->succ[e]]--;
        orders(o, pos + 1);
        for (uint32_t e = g->succ_off[v]; e < g->succ_off[v + 1]; e++)
            o->indeg[g->succ[e]]++;
        o->used[v] = 0;
    }
}

static double optimum(const struct sb_graph *g)
{
    const struct sb_graph_view *v = &g->v;
    struct opt o = {.g = g, .best = INFINITY};
    sb_schedule_init(&o.s, g, 2);
    o.indeg = calloc(v->n_nodes, sizeof *o.indeg);
    o.used = calloc(v->n_nodes, 1);
    /* inputs come first: an input's position changes memory, never time (it
     * exists at 0 and holds no stream: sim.c's run_order) */
    uint32_t n_in = 0;
    for (uint32_t i = 0; i < v->n_nodes; i++)
        if (v->kind[i] == SB_KIND_INPUT)
            o.s.order[n_in++] = i;
    for (uint32_t p = 0; p < (1u << v->n_nodes); p++) {
        int ok = 1;
        /* every placement, a done's too: the simulator lets a done wait for
         * its collective on another device than its start (docs/machines.md),
         * and the default dp places dones that way when it is shorter */
        for (uint32_t i = 0; i < v->n_nodes; i++)
            o.s.device[i] = (int32_t)(p >> i & 1);
        if (!ok)
            continue;
        for (uint32_t i = 0; i < v->n_nodes; i++)
            o.indeg[i] = v->pred_off[i + 1] - v->pred_off[i];
        for (uint32_t i = 0; i < n_in; i++) {
            uint32_t x = o.s.order[i];
            o.used[x] = 1;
            for (uint32_t e = v->succ_off[x]; e < v->succ_off[x + 1]; e++)
                o.indeg[v->succ[e]]--;
        }
        orders(&o, n_in);
        for (uint32_t i = 0; i < n_in; i++)
            o.used[o.s.order[i]] = 0;
    }
    /* the simulator agrees on the best schedule */
    struct sb_sim_config sc;
    struct sb_sim_result r;
    memcpy(o.s.order, o.best_order, v->n_nodes * sizeof *o.s.order);
    memcpy(o.s.device, o.best_dev, v->n_nodes * sizeof *o.s.device);
    sb_sim_defaults(&sc);
    sb_sim_run(g, &o.s, &sc, &r);
    CHECK_NEAR(r.makespan_us, o.best);
    sb_sim_result_free(&r);
    free(o.indeg), free(o.used);
    sb_schedule_free(&o.s);
    return o.best;
}

static void random_graphs(const struct sb_machine *m)
{
    struct rng r = {42};
    char buf[4096];
    uint32_t equal_free = 0, n_free = 0, equal_bytes = 0, n_bytes = 0, n_opt = 0;
    double gap_sum = 0, gap_max = 0, def_sum = 0, def_max = 0;
    for (uint32_t i = 0; i < 60; i++) {
        int bytes = i % 2;
        uint32_t tasks = 4 + rnd(&r, 4); /* 4..7 tasks, 5..8 nodes */
        size_t n = random_graph(&r, tasks, bytes, buf, sizeof buf);
        struct sb_graph *g = load("random.csv", buf, n, m);
        CHECK(g != NULL);
        if (!g)
            continue;
        struct sb_schedule s;
        double got = run(g, "dp:sync=1,exhaustive=1,beam=0,max_plans=0", &s);
        struct sb_dp_ctx c;
        CHECK(sb_dp_ctx_init(&c, &g->v) == 0);
        struct sb_dp_state *st = sb_dp_initial(&c, 4);
        double want = brute(&c, st, 64);
        sb_dp_state_free(st);
        CHECK_NEAR(replay(&c, &s), got); /* the placer mirrors the simulator */
        if (bytes) {
            CHECK(want <= got + 1e-9);
            equal_bytes += fabs(want - got) < 1e-9, n_bytes++;
        } else {
            CHECK_NEAR(got, want);
            equal_free += fabs(want - got) < 1e-9, n_free++;
        }
        /* and the default search, prefixes of four orders, within its model */
        struct sb_schedule d;
        double def = run(g, "dp:sync=1", &d);
        CHECK(def >= want - 1e-9);
        CHECK_NEAR(replay(&c, &d), def);
        sb_schedule_free(&d);
        /* the greedy completion: the budget is spent after one plan and groups
         * hold at most two tasks, so the whole graph is placed by the greedy
         * chain (which plans on the scratch left by the previous group and
         * undoes its trial plans); its groups, placed again from scratch by
         * the placer (a cut reloaded per group), give its simulated makespan */
        struct sb_schedule q;
        double greedy = run(g, "dp:sync=1,max_plans=1,max_group=2", &q);
        CHECK(greedy >= want - 1e-9);
        CHECK_NEAR(replay(&c, &q), greedy);
        sb_schedule_free(&q);
        /* the default (HEFT's schedule as the incumbent) is never worse than
         * heft nor than the design note's model */
        struct sb_schedule h0, d0;
        double heft = run(g, "heft", &h0), d_def = run(g, "dp", &d0);
        CHECK(d_def <= heft + 1e-9);
        CHECK(d_def <= def + 1e-9);
        sb_schedule_free(&h0), sb_schedule_free(&d0);
        if (g->v.n_nodes <= 8) {
            double opt = optimum(g);
            CHECK(opt <= got + 1e-9);
            CHECK(opt <= d_def + 1e-9);
            double gd = (d_def - opt) / opt * 100;
            def_sum += gd;
            if (gd > def_max)
                def_max = gd;
            double gap = (got - opt) / opt * 100;
            gap_sum += gap, n_opt++;
            if (gap > gap_max)
                gap_max = gap;
        }
        sb_dp_ctx_free(&c);
        sb_schedule_free(&s);
        sb_graph_free(g);
    }
    printf("exhaustive dp = brute force: %u of %u graphs with free copies, %u of %u with "
           "copies\n", equal_free, n_free, equal_bytes, n_bytes);
    printf("group-and-synchronise vs exhaustive optimum over placements and orders "
           "(%u graphs of <= 8 nodes, 2 devices): mean gap %.1f%%, max %.1f%%\n",
           n_opt, n_opt ? gap_sum / n_opt : 0, gap_max);
    printf("dp (default: the better of the grouped search and HEFT, then the search "
           "without barriers) vs the same optimum: mean gap "
           "%.1f%%, max %.1f%%\n", n_opt ? def_sum / n_opt : 0, def_max);
}

/* The default dp's local search scores a schedule with its own pass
 * (sb_dp_simulate); that pass must give the simulator's makespan, or what dp
 * keeps would not be what the harness reports.  Random graphs of the
 * generator above (inputs, computes, a collective, copies), random devices
 * (a done with its start) and random topological orders, on each machine. */
static void simulate_matches(const struct sb_machine *m, uint32_t n_cases, uint64_t seed)
{
    struct rng r = {seed};
    char buf[4096];
    uint32_t same = 0;
    for (uint32_t i = 0; i < n_cases; i++) {
        size_t n = random_graph(&r, 3 + rnd(&r, 10), (int)(i % 4 != 0), buf, sizeof buf);
        struct sb_graph *g = load("random.csv", buf, n, m);
        CHECK(g != NULL);
        if (!g)
            continue;
        const struct sb_graph_view *v = &g->v;
        struct sb_schedule s;
        sb_schedule_init(&s, g, v->machine->n_devices);
        uint32_t *indeg = calloc(v->n_nodes, sizeof *indeg), k = 0;
        for (uint32_t x = 0; x < v->n_nodes; x++) {
            indeg[x] = v->pred_off[x + 1] - v->pred_off[x];
            s.device[x] = (int32_t)rnd(&r, v->machine->n_devices);
        }
        for (uint32_t x = 0; x < v->n_nodes; x++)
            if (v->kind[x] == SB_KIND_DONE && rnd(&r, 2))
                s.device[x] = s.device[v->partner[x]];
        /* a random topological order: any ready node next */
        while (k < v->n_nodes) {
            uint32_t pick = rnd(&r, v->n_nodes), x = pick;
            while (indeg[x] != 0 || s.barrier[x]) /* barrier[] marks "placed" here */
                x = (x + 1) % v->n_nodes;
            s.barrier[x] = 1;
            s.order[k++] = x;
            for (uint32_t e = v->succ_off[x]; e < v->succ_off[x + 1]; e++)
                indeg[v->succ[e]]--;
        }
        memset(s.barrier, 0, v->n_nodes);
        struct sb_sim_config sc;
        struct sb_sim_result res;
        sb_sim_defaults(&sc);
        sb_sim_run(g, &s, &sc, &res);
        double mine = sb_dp_simulate(v, s.order, s.device);
        CHECK_NEAR(mine, res.makespan_us);
        same += fabs(mine - res.makespan_us) <= 1e-9 * (1 + res.makespan_us);
        sb_sim_result_free(&res);
        free(indeg);
        sb_schedule_free(&s);
        sb_graph_free(g);
    }
    printf("sb_dp_simulate = simulator on %u of %u random schedules\n", same, n_cases);
}

/* The figure: the default dp against the exhaustive optimum over
 * every placement and every topological order,
 * simulated, on 300 random graphs of 5 to 8 nodes per two-device machine.
 * dp can never beat it (the optimum is over every schedule dp could return
 * without barriers, and a barrier never shortens one), is never worse than
 * heft (its first incumbent), and is on average within 3% of it (the
 * target of issue 23; the figures are printed for docs/dp.md). */
static void against_optimum(const char *yaml, double *sum_all, double *max_all, uint32_t *n_all)
{
    struct sb_err e;
    char path[512], buf[4096];
    snprintf(path, sizeof path, "%s/%s", SB_TEST_DATA, yaml);
    struct sb_machine *m = sb_machine_load(path, &e);
    CHECK(m != NULL);
    if (!m)
        return;
    struct rng r = {7};
    double sum = 0, max = 0, hsum = 0, hmax = 0, log_opt = 0, log_dp = 0;
    uint32_t n_opt = 0, at_opt = 0;
    for (uint32_t i = 0; i < 300; i++) {
        uint32_t tasks = 4 + rnd(&r, 4); /* 4..7 tasks after one input: 5..8 nodes */
        size_t n = random_graph(&r, tasks, (int)(i % 2), buf, sizeof buf);
        struct sb_graph *g = load("random.csv", buf, n, m);
        CHECK(g != NULL);
        if (!g)
            continue;
        struct sb_schedule h, d;
        double heft = run(g, "heft", &h), dp = run(g, "dp", &d), opt = optimum(g);
        CHECK(dp >= opt - 1e-9);
        CHECK(dp <= heft + 1e-9);
        double gap = (dp - opt) / opt * 100, hgap = (heft - opt) / opt * 100;
        sum += gap, hsum += hgap, n_opt++;
        /* issue 23 asks a geometric mean dp/heft <= 0.90; the optimum's own
         * ratio to heft says how far any placer can get */
        log_opt += log(opt / heft), log_dp += log(dp / heft);
        at_opt += gap < 1e-7;
        if (gap > max)
            max = gap;
        if (hgap > hmax)
            hmax = hgap;
        sb_schedule_free(&h), sb_schedule_free(&d);
        sb_graph_free(g);
    }
    printf("%s: dp vs exhaustive optimum on %u graphs: mean %.2f%%, max %.1f%%, optimal on "
           "%u; heft mean %.2f%%, max %.1f%%; geometric mean dp/heft %.4f, optimum/heft "
           "%.4f\n", yaml, n_opt, sum / n_opt, max, at_opt, hsum / n_opt, hmax,
           exp(log_dp / n_opt), exp(log_opt / n_opt));
    *sum_all += sum, *n_all += n_opt;
    if (max > *max_all)
        *max_all = max;
    sb_machine_free(m);
}

/* capacity (tests/data/heft-mem.csv on heft-mem.yaml, derived in
 * tests/test_heft.c): a (100 bytes) feeds b and c (600 bytes each, outputs)
 * on two devices of 1000 bytes, a copy of a taking 100 us.  dp keeps the
 * three on g0 (each step's earliest finish: 10 us on g0 against 100 us of
 * copy first on g1), so g0 holds 100 + 600 + 600 = 1300 bytes:
 * dp:capacity=0 returns it (over_capacity 1), dp:sync=1 refuses it with a
 * message, and the default returns HEFT's plan that fits. */
static void capacity(void)
{
    struct sb_err e;
    struct sb_cost_params c;
    struct sb_machine *m = sb_machine_load(SB_TEST_DATA "/heft-mem.yaml", &e);
    struct sb_graph *g = m ? sb_graph_load(SB_TEST_DATA "/heft-mem.csv", &e) : NULL;
    CHECK(g != NULL);
    if (g) {
        struct sb_sched sched;
        struct sb_schedule s;
        struct sb_sim_config sc;
        struct sb_sim_result r;
        sb_cost_defaults(&c);
        sb_cost_apply(&c, g);
        CHECK(sb_machine_apply(m, g, &e) == 0);
        CHECK(sb_sched_parse(&sched, "dp:capacity=0", &e) == 0);
        sb_schedule_init(&s, g, 2);
        CHECK(sb_sched_run(&sched, g, &s, &e) == 0);
        sb_sim_defaults(&sc);
        sb_sim_run(g, &s, &sc, &r);
        CHECK_EQ_U(r.dev_peak_bytes[0], 1300);
        CHECK_EQ_U(r.over_capacity, 1);
        sb_sim_result_free(&r);
        sb_schedule_free(&s);
        sb_sched_free(&sched);
        CHECK(sb_sched_parse(&sched, "dp:sync=1", &e) == 0);
        sb_schedule_init(&s, g, 2);
        CHECK(sb_sched_run(&sched, g, &s, &e) != 0);
        CHECK(strstr(e.msg, "needs 1300 bytes on g0, capacity 1000") != NULL);
        sb_schedule_free(&s);
        sb_sched_free(&sched);
        /* the default falls back on HEFT's plan within memory (test_heft.c):
         * c on g1, 120 us, 700 bytes on each device */
        CHECK(sb_sched_parse(&sched, "dp", &e) == 0);
        sb_schedule_init(&s, g, 2);
        CHECK(sb_sched_run(&sched, g, &s, &e) == 0);
        sb_sim_run(g, &s, &sc, &r);
        CHECK_NEAR(r.makespan_us, 120);
        CHECK_EQ_U(r.dev_peak_bytes[0], 700);
        CHECK_EQ_U(r.dev_peak_bytes[1], 700);
        CHECK_EQ_U(r.over_capacity, 0);
        sb_sim_result_free(&r);
        sb_schedule_free(&s);
        sb_sched_free(&sched);
    }
    sb_graph_free(g);
    sb_machine_free(m);
}

/* A workload that fits only when spread for memory: llama-h8192-... (30 B
 * parameters, 4-byte sharded weights) on gpu4-nvlink.yaml, four 40 GB GPUs.
 * HEFT's order overlaps layers and holds 136 GB on one device, and its
 * steered plans keep that order, so heft reports that it found nothing;
 * dp's grouped search does not fit either.  The file's order cut into four
 * stretches of equal bytes is a pipeline in which each device holds its own
 * layers' weights and activations, a quarter of the one-device profile
 * (about 98 GB) plus the copies at the cuts, so dp must return a placement
 * within 40 GB on every device, and no shorter than the lower bound. */
static void capacity_split(void)
{
    struct sb_err e;
    struct sb_cost_params c;
    struct sb_machine *m = sb_machine_load(SB_MACHINES "/gpu4-nvlink.yaml", &e);
    struct sb_graph *g =
        m ? sb_graph_load(SB_CORPUS "/llama-h8192-32l-b2-bwd-r64-extloss-sac-fp32.csv", &e)
          : NULL;
    CHECK(g != NULL);
    if (g) {
        static const char *const spec[] = {"heft", "dp"};
        sb_cost_defaults(&c);
        sb_cost_apply(&c, g);
        CHECK(sb_machine_apply(m, g, &e) == 0);
        for (int k = 0; k < 2; k++) {
            struct sb_sched sched;
            struct sb_schedule s;
            struct sb_sim_config sc;
            struct sb_sim_result r;
            CHECK(sb_sched_parse(&sched, spec[k], &e) == 0);
            sb_schedule_init(&s, g, 4);
            int rc = sb_sched_run(&sched, g, &s, &e);
            if (k == 0) {
                CHECK(rc != 0 && strstr(e.msg, "no placement within device memory") != NULL);
            } else {
                CHECK(rc == 0);
                sb_sim_defaults(&sc);
                sb_sim_run(g, &s, &sc, &r);
                CHECK_EQ_U(r.over_capacity, 0);
                for (uint32_t a = 0; a < 4; a++)
                    CHECK(r.dev_peak_bytes[a] > 0 && r.dev_peak_bytes[a] <= 40000000000ull);
                CHECK(r.makespan_us >= r.makespan_lb_us);
                sb_sim_result_free(&r);
            }
            sb_schedule_free(&s);
            sb_sched_free(&sched);
        }
    }
    sb_graph_free(g);
    sb_machine_free(m);
}

/* Random graphs on two devices of 10,000 bytes each, with a slow link (a copy
 * of B bytes takes B us), so that keeping everything on one device is
 * tempting and often too big.  Properties, no figure: whenever heft finds a
 * placement within memory, so does dp (dp falls back on heft's); every
 * placement dp returns fits both devices by the simulator's own count; and
 * where neither the grouped search nor heft fits, the cut of the file order
 * (split_fallback) is tried: the count of graphs where dp fits and heft does
 * not is printed (7 of 400; 2 with the cut switched off, while 231 fit no
 * placement either finds: many nodes read inputs of up to 5,000 bytes each). */
static void capacity_random(void)
{
    struct sb_err e;
    char path[600], buf[4096];
    snprintf(path, sizeof path, "%s/dp_tight.yaml", SB_TEST_TMP);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (!f)
        return;
    fputs("devices:\n  - {name: g0, mem_bytes: 10000B}\n  - {name: g1, mem_bytes: 10000B}\n"
          "links:\n  default: {gbps: 0.001, latency_us: 0}\n", f);
    fclose(f);
    struct sb_machine *m = sb_machine_load(path, &e);
    CHECK(m != NULL);
    struct rng r = {23};
    uint32_t both = 0, dp_only = 0, neither = 0;
    for (uint32_t i = 0; i < 400 && m; i++) {
        uint32_t tasks = 4 + rnd(&r, 8);
        size_t n = random_graph(&r, tasks, 1, buf, sizeof buf);
        struct sb_graph *g = load("tight.csv", buf, n, m);
        CHECK(g != NULL);
        if (!g)
            continue;
        struct sb_sched sched;
        struct sb_schedule s;
        int ok[2];
        static const char *const spec[] = {"heft", "dp"};
        for (int k = 0; k < 2; k++) {
            CHECK(sb_sched_parse(&sched, spec[k], &e) == 0);
            sb_schedule_init(&s, g, 2);
            ok[k] = sb_sched_run(&sched, g, &s, &e) == 0;
            if (ok[k]) {
                struct sb_sim_config sc;
                struct sb_sim_result res;
                CHECK(sb_schedule_validate(&g->v, &s, &e) == 0);
                sb_sim_defaults(&sc);
                sb_sim_run(g, &s, &sc, &res);
                CHECK_EQ_U(res.over_capacity, 0);
                CHECK(res.dev_peak_bytes[0] <= 10000 && res.dev_peak_bytes[1] <= 10000);
                sb_sim_result_free(&res);
            } else {
                CHECK(strstr(e.msg, "within device memory") != NULL);
            }
            sb_schedule_free(&s);
            sb_sched_free(&sched);
        }
        CHECK(ok[1] || !ok[0]);
        both += ok[0] && ok[1], dp_only += ok[1] && !ok[0], neither += !ok[1];
        sb_graph_free(g);
    }
    printf("dp within memory on random graphs (two 10,000-byte devices): both %u, dp only %u, "
           "neither %u\n", both, dp_only, neither);
    sb_machine_free(m);
    remove(path);
}

int main(void)
{
    struct sb_err e;
    sb_registry_add_builtins();
    hand();
    capacity();
    capacity_split();
    capacity_random();
    struct sb_machine *m = sb_machine_load(SB_TEST_DATA "/dp2.yaml", &e);
    CHECK(m != NULL);
    if (m) {
        random_graphs(m);
        simulate_matches(m, 400, 11);
    }
    sb_machine_free(m);
    static const char *const two[] = {"dp2.yaml", "dp2-lat.yaml", "dp2-het.yaml"};
    double sum = 0, max = 0;
    uint32_t n_opt = 0;
    for (int i = 0; i < 3; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s", SB_TEST_DATA, two[i]);
        struct sb_machine *mm = sb_machine_load(path, &e);
        CHECK(mm != NULL);
        if (mm)
            simulate_matches(mm, 300, 100 + (uint64_t)i);
        sb_machine_free(mm);
        against_optimum(two[i], &sum, &max, &n_opt);
    }
    printf("dp vs exhaustive optimum, all %u graphs: mean %.2f%%, max %.1f%%\n", n_opt,
           n_opt ? sum / n_opt : 0, max);
    CHECK(n_opt == 900);
    CHECK(n_opt && sum / n_opt <= 3.0);
    sb_registry_clear();
    return check_report();
}
