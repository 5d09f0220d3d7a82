/* heft on a graph small enough to schedule by hand (tests/data/heft.csv on
 * tests/data/heft.yaml: two identical devices, a copy of B bytes takes B/1000 us
 * on a link that carries one copy at a time, no edge latency).
 *
 * Upward ranks (mean cost + max over successors of mean copy time + rank):
 *   d = 1, e = 2, b = c = 10 + 0 + 1 = 11 (their outputs are empty),
 *   a = 10 + 1000/1000 + 11 = 22, x = 0 + 22 (inputs cost nothing).
 * Order by rank: x a b c e d (x is not placed as a task).
 *   a: EFT 10 on both, g0 (first): 0..10; x goes with it to g0.
 *   b: g0 ready 10 -> 20; g1 waits for a's copy 10..11 -> 21: g0 10..20.
 *   c: g0 free only from 20 -> 30; g1 11..21: g1 (a's copy g0->g1 10..11).
 *   e: g0 busy 0..20 -> 22; g1: x's copy (0 bytes) queues on g0->g1 behind
 *      a's, ready at 11, and c holds g1 11..21 -> 23: g0 20..22 (the old
 *      plan put e on g1 at 0..2, before a copy queued ahead of x's).
 *   d: g0 ready max(20, c's empty copy at 21) = 21, busy to 22 -> 23;
 *      g1 ready max(b's empty copy at 20, 21) = 21 -> 22: g1 21..22.
 * Order by planned start (ties in rank order): x a b c e d.  Predicted and
 * simulated: makespan 22, 1000 bytes moved (b's and x's buffers are empty). */
#include "schedbench/policy.h"
#include "check.h"
#include "core/core.h"
#include "import/import.h"
#include "core/machine.h"

/* The idle-gap search of a lane done the plain way: scan every slot after the
 * first one ending past `ready` (what heft.c did before the index). */
static double scan_gap(const struct sb_heft_slot *s, uint32_t n, double ready, double w, uint32_t *at)
{
    double t = ready;
    for (uint32_t i = 0; i < n; i++) {
        if (s[i].end <= ready)
            continue;
        if (t + w <= s[i].begin) {
            *at = i;
            return t;
        }
        if (s[i].end > t)
            t = s[i].end;
    }
    *at = n;
    return t;
}

/* Slots [0,10) [20,30) [30,35) [50,60), by hand:
 *   ready 5,  w 5:  first slot ending after 5 is [0,10): 5+5 > 0, t = 10;
 *                   [20,30): 10+5 <= 20, start 10, before slot 1;
 *   ready 5,  w 12: 10+12 > 20, t = 30; 30+12 > 30, t = 35; 35+12 <= 50: 35, slot 3;
 *   ready 5,  w 20: no gap of 20 before 60: 60, at the end (4);
 *   ready 25, w 3:  first slot ending after 25 is [20,30): 25+3 > 20, t = 30;
 *                   30+3 > 30, t = 35; 35+3 <= 50: 35, slot 3;
 *   ready 40, w 10: first is [50,60): 40+10 <= 50: 40 itself, slot 3;
 *   ready 70, w 1:  past every slot: 70, at the end. */
static void lane_by_hand(void)
{
    static const struct sb_heft_slot s[] = {{0, 10, 0}, {20, 30, 0}, {30, 35, 0}, {50, 60, 0}};
    static const double q[][4] = {/* ready, w, start, index */
                                  {5, 5, 10, 1},  {5, 12, 35, 3}, {5, 20, 60, 4},
                                  {25, 3, 35, 3}, {40, 10, 40, 3}, {70, 1, 70, 4},
                                  /* instants (w = 0): ready 20 is [20,30)'s
                                     begin: 20 + 0 <= 20, before it; ready 5
                                     is inside [0,10): from its end, 10 */
                                  {20, 0, 20, 1}, {5, 0, 10, 1}, {15, 0, 15, 1}};
    struct sb_heft_lane L = {0};
    for (uint32_t i = 0; i < 4; i++) {
        struct sb_heft_lane_pos at;
        sb_heft_lane_earliest_gap(&L, s[i].begin, s[i].end - s[i].begin, &at);
        CHECK(sb_heft_lane_insert(&L, at, s[i].begin, s[i].end, 0) == 0);
    }
    for (uint32_t k = 0; k < sizeof q / sizeof *q; k++) {
        struct sb_heft_lane_pos at;
        CHECK_NEAR(sb_heft_lane_earliest_gap(&L, q[k][0], q[k][1], &at), q[k][2]);
        CHECK_EQ_U(at.i, (uint32_t)q[k][3]); /* one block: the index is the slot's */
    }
    sb_heft_lane_free(&L);
}

/* The index against the scan on lanes of 20,000 slots (78 blocks and more,
 * splits in the middle, the tree rebuilt many times): random (ready, w)
 * queries, each answer inserted, so the lanes grow as heft's do.  Durations
 * and ready times are drawn on a coarse grid and on a fine one, so gaps that
 * fit exactly (end + w == begin) and rounding both occur. */
static void lane_against_scan(void)
{
    for (int trial = 0; trial < 2; trial++) {
        struct sb_heft_lane L = {0};
        uint32_t n = 0, cap = 20000, bad = 0;
        struct sb_heft_slot *ref = malloc(cap * sizeof *ref);
        uint64_t x = 88172645463325252ull + (uint64_t)trial;
        for (uint32_t k = 0; k < cap; k++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17; /* xorshift64 */
            double span = 50.0 * (k + 1);
            double ready = trial ? (double)(x % 1000) * span / 1000 : (double)(x % (k + 1)) * 50;
            double w = trial ? 0.1 + (double)(x >> 40 & 1023) / 97.0 : (double)(1 + (x >> 40) % 60);
            struct sb_heft_lane_pos at;
            uint32_t ref_at;
            double t = sb_heft_lane_earliest_gap(&L, ready, w, &at);
            double r = scan_gap(ref, n, ready, w, &ref_at);
            /* the index's position, counted across blocks */
            uint32_t flat = at.i;
            for (uint32_t j = 0; j < at.blk; j++)
                flat += L.b[j]->n;
            if (t != r || flat != ref_at)
                bad++;
            memmove(&ref[ref_at + 1], &ref[ref_at], (n - ref_at) * sizeof *ref);
            ref[ref_at] = (struct sb_heft_slot){r, r + w, 0};
            n++;
            CHECK(sb_heft_lane_insert(&L, at, t, t + w, 0) == 0);
        }
        CHECK_EQ_U(bad, 0);
        CHECK(L.n_blocks > 20000 / SB_HEFT_LANE_BLOCK); /* several blocks were exercised */
        uint32_t flat = 0, sorted = 1;
        for (uint32_t j = 0; j < L.n_blocks; j++)
            for (uint32_t i = 0; i < L.b[j]->n; i++, flat++)
                sorted &= L.b[j]->s[i].begin == ref[flat].begin;
        CHECK_EQ_U(flat, n);
        CHECK(sorted);
        sb_heft_lane_free(&L);
        free(ref);
    }
}


/* ---- heft's plan against the simulator ------------------------------------
 *
 * heft plans with the simulator's rules (docs/heft.md), so the makespan its
 * plan predicts must be the simulated one, exactly (up to rounding), on the
 * placement workloads of the corpus and on random graphs.  ratio_sum/max
 * collect simulated / predicted for the report. */

static uint64_t rng = 0x23c0ffee;

static uint32_t rnd(uint32_t n)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (uint32_t)(rng % n);
}

static uint32_t n_plans, n_mismatch, n_peak_mismatch, n_nofit, n_over, n_over_one;
static double ratio_sum, ratio_max;

static void plan_vs_sim(struct sb_graph *G, const char *what)
{
    struct sb_schedule s;
    struct sb_sim_config sc;
    struct sb_sim_result r;
    struct sb_err e;
    double predicted = -1;
    sb_schedule_init(&s, G, G->v.machine->n_devices);
    if (sb_heft_plan(&G->v, &s, &predicted, 1)) { /* nothing within capacity */
        CHECK(strstr(s.err, "no placement within device memory") != NULL);
        n_nofit++;
        CHECK(sb_heft_plan(&G->v, &s, &predicted, 0) == 0);
    }
    CHECK(sb_schedule_validate(&G->v, &s, &e) == 0);
    sb_sim_defaults(&sc);
    sc.edge_lat_us = G->v.edge_lat_us;
    sc.record = getenv("SB_HEFT_DEBUG") != NULL;
    sb_sim_run(G, &s, &sc, &r);
    if (sc.record)
        for (uint32_t i = 0; i < G->v.n_nodes; i++)
            fprintf(stderr, "sim %u: v%u %.3f..%.3f\n", i, s.order[i], r.begin_us[s.order[i]],
                    r.end_us[s.order[i]]);
    /* heft's copy of the memory rules against the simulator's */
    uint32_t nd = G->v.machine->n_devices, *root = malloc(G->v.n_nodes * sizeof *root);
    uint64_t *peak = malloc(nd * sizeof *peak);
    sb_mem_buffer_roots(&G->v, root);
    CHECK(sb_mem_dev_peaks(&G->v, s.order, s.device, root, peak) == 0);
    /* one device: no placement to search, heft returns its order and the
     * row says over_capacity (docs/heft.md); the invariant is for several */
    if (nd == 1)
        n_over_one += r.over_capacity != 0;
    else
        n_over += r.over_capacity != 0;
    for (uint32_t d = 0; d < nd; d++)
        if (peak[d] != r.dev_peak_bytes[d] && n_peak_mismatch++ < 5)
            fprintf(stderr, "%s: device %u peak %llu, simulated %llu\n", what, d,
                    (unsigned long long)peak[d], (unsigned long long)r.dev_peak_bytes[d]);
    free(root), free(peak);
    double ratio = predicted > 0 ? r.makespan_us / predicted : 1;
    n_plans++;
    ratio_sum += ratio;
    if (ratio > ratio_max)
        ratio_max = ratio;
    if (fabs(r.makespan_us - predicted) > 1e-6 * (1 + r.makespan_us)) {
        if (n_mismatch++ < 5)
            fprintf(stderr, "%s: heft predicted %.6f us, simulated %.6f\n", what, predicted,
                    r.makespan_us);
    }
    sb_sim_result_free(&r);
    sb_schedule_free(&s);
}

/* Memory as a constraint (tests/data/heft-mem.csv on heft-mem.yaml: two
 * devices of 1000 bytes, a copy of B bytes takes B us, no edge latency).
 * a (10 us, 100 bytes) feeds b and c (10 us, 600 bytes each, outputs).
 * Ranks: b = c = 10, a = 10 + 100 + 10 = 120; order a b c.
 *   capacity=0: a g0 0..10; b g0 10..20 (g1 waits for a's copy: 120);
 *     c g0 20..30 (g1: 130).  g0 holds a, b and c at c: 1300 > 1000, one
 *     device over capacity, makespan 30, nothing copied.
 *   capacity on: a and b as before (g0 holds 700); c would make g0 1300, so
 *     g1: a's copy 10..110, c 110..120.  Peaks: g0 a + b = 700, g1 a's copy
 *     + c = 700; makespan 120, 100 bytes copied.
 *   On devices of 500 bytes, b alone (600) fits nowhere: heft fails and
 *   says so, and capacity=0 still gives the 30 us schedule. */
static void capacity_by_hand(void)
{
    static const char *const spec[] = {"heft:capacity=0", "heft"};
    static const double want_ms[] = {30, 120};
    static const uint64_t want_peak[][2] = {{1300, 0}, {700, 700}};
    struct sb_err e;
    struct sb_cost_params c;
    struct sb_machine *m = sb_machine_load(SB_TEST_DATA "/heft-mem.yaml", &e);
    struct sb_graph *g = m ? sb_graph_load(SB_TEST_DATA "/heft-mem.csv", &e) : NULL;
    CHECK(g != NULL);
    if (!g) {
        sb_machine_free(m);
        return;
    }
    sb_cost_defaults(&c);
    sb_cost_apply(&c, g);
    CHECK(sb_machine_apply(m, g, &e) == 0);
    for (uint32_t k = 0; k < 2; k++) {
        struct sb_sched sched;
        struct sb_schedule s;
        struct sb_sim_config sc;
        struct sb_sim_result r;
        CHECK(sb_sched_parse(&sched, spec[k], &e) == 0);
        sb_schedule_init(&s, g, 2);
        CHECK(sb_sched_run(&sched, g, &s, &e) == 0);
        sb_sim_defaults(&sc);
        sb_sim_run(g, &s, &sc, &r);
        CHECK_NEAR(r.makespan_us, want_ms[k]);
        CHECK_EQ_U(r.dev_peak_bytes[0], want_peak[k][0]);
        CHECK_EQ_U(r.dev_peak_bytes[1], want_peak[k][1]);
        CHECK_EQ_U(r.over_capacity, k == 0);
        CHECK_EQ_U(r.transfer_bytes, k == 0 ? 0 : 100);
        sb_sim_result_free(&r);
        sb_schedule_free(&s);
        sb_sched_free(&sched);
    }
    sb_graph_free(g);
    sb_machine_free(m);
    /* devices of 500 bytes */
    char path[600];
    snprintf(path, sizeof path, "%s/heft_small_machine.yaml", SB_TEST_TMP);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (!f)
        return;
    fputs("devices:\n  - {name: g0, mem_bytes: 500B}\n  - {name: g1, mem_bytes: 500B}\n"
          "links:\n  default: {gbps: 0.001, latency_us: 0}\n", f);
    fclose(f);
    m = sb_machine_load(path, &e);
    g = m ? sb_graph_load(SB_TEST_DATA "/heft-mem.csv", &e) : NULL;
    CHECK(g != NULL);
    if (g) {
        struct sb_sched sched;
        struct sb_schedule s;
        sb_cost_defaults(&c);
        sb_cost_apply(&c, g);
        CHECK(sb_machine_apply(m, g, &e) == 0);
        CHECK(sb_sched_parse(&sched, "heft", &e) == 0);
        sb_schedule_init(&s, g, 2);
        CHECK(sb_sched_run(&sched, g, &s, &e) != 0);
        CHECK(strstr(e.msg, "no placement within device memory") != NULL);
        /* the message gives HEFT's own plan: the links are those of
         * heft-mem.yaml, so it is capacity=0's above, all on g0: 1300 bytes */
        CHECK(strstr(e.msg, "g0 needs 1300 bytes, capacity 500") != NULL);
        sb_schedule_free(&s);
        sb_sched_free(&sched);
        CHECK(sb_sched_parse(&sched, "heft:capacity=0", &e) == 0);
        sb_schedule_init(&s, g, 2);
        CHECK(sb_sched_run(&sched, g, &s, &e) == 0);
        sb_schedule_free(&s);
        sb_sched_free(&sched);
    }
    sb_graph_free(g);
    sb_machine_free(m);
    remove(path);
}

/* The placement workloads of the corpus on the machines they name. */
static void plan_corpus(void)
{
    static const char *const w[][2] = {
        {"dag-n50-l5-s1-gpu2-pcie", "gpu2-pcie"},
        {"dag-n200-l10-s1-gpu4-nvlink", "gpu4-nvlink"},
        {"dag-n1000-l20-s1-gpu8-nvswitch", "gpu8-nvswitch"},
        {"llama-step-32l-m4-gpu4-nvlink", "gpu4-nvlink"},
        {"llama-step-32l-m4-gpu4-nvlink-even", "gpu4-nvlink"},
        {"towers-t4-d4-e8-gpu2-pcie", "gpu2-pcie"},
        {"towers-t8-d4-e8-cpu-gpu", "cpu-gpu"},
        {"towers-t8-d4-e8-gpu8-nvswitch", "gpu8-nvswitch"},
        {"tiny-two-coll", "gpu2-pcie"},
        {"tiny-fsdp", "gpu4-nvlink"},
        {"moe-4l-e8-k2-r8", "gpu8-nvswitch"},
        {"pipeline-s1of4-m8-8l", "gpu4-nvlink"},
        {"ddp-resnet50-b32-r8", "gpu8-nvswitch"},
    };
    for (size_t k = 0; k < sizeof w / sizeof *w; k++) {
        char wp[512], mp[512];
        struct sb_err e;
        struct sb_cost_params c;
        snprintf(wp, sizeof wp, "%s/../../workloads/corpus/%s.csv", SB_TEST_DATA, w[k][0]);
        snprintf(mp, sizeof mp, "%s/../../workloads/machines/%s.yaml", SB_TEST_DATA, w[k][1]);
        struct sb_machine *m = sb_machine_load(mp, &e);
        struct sb_graph *G = m ? sb_graph_load(wp, &e) : NULL;
        CHECK(G != NULL);
        if (G) {
            sb_cost_defaults(&c);
            sb_cost_apply(&c, G);
            CHECK(sb_machine_apply(m, G, &e) == 0);
            plan_vs_sim(G, w[k][0]);
        } else {
            fprintf(stderr, "%s\n", e.msg);
        }
        sb_graph_free(G);
        sb_machine_free(m);
    }
}

/* A random workload: inputs (some weights), computes (some zero-length,
 * some on a second stream), nops, aliases and collectives. */
/* with_res: three streams and a res.sms column (1..4 of a device's sms, or
 * empty: the whole device) on machines that declare sms (random_machine). */
static size_t random_csv(char *buf, size_t cap, int with_res)
{
    size_t len = 0;
    uint32_t n_in = 1 + rnd(4), n_body = 4 + rnd(40), id = 0, n_open = 0, open[8];
    uint8_t is_start[64] = {0};
    int streams = with_res || rnd(3) == 0;
    const char *res = with_res ? "," : "";
#define ROW(...) (len += (size_t)snprintf(buf + len, cap - len, __VA_ARGS__))
    ROW("id,name,kind,inputs,op,cost_us,out_bytes,coll,comm_us,flags,stream%s\n",
        with_res ? ",res.sms" : "");
    for (; id < n_in; id++)
        ROW("%u,n%u,input,,,,%u,,,%s,0%s\n", id, id, 1000 * rnd(8), rnd(3) ? "" : "weight", res);
    for (uint32_t b = 0; b < n_body || n_open; b++) {
        char ins[80] = "";
        size_t il = 0;
        if (n_open && (b >= n_body || rnd(4) == 0)) {
            uint32_t k = rnd(n_open), st = open[k];
            open[k] = open[--n_open];
            ROW("%u,n%u,done,%u,,,,,,,0%s\n", id, id, st, res);
            id++;
            continue;
        }
        if (b >= n_body)
            continue;
        uint32_t want = 1 + rnd(3), got = 0;
        for (uint32_t k = 0; k < want; k++) {
            uint32_t p = rnd(id);
            if (is_start[p] || strstr(ins, "x") != NULL)
                continue;
            char tok[16];
            snprintf(tok, sizeof tok, " %u ", p);
            char pad[90];
            snprintf(pad, sizeof pad, " %s ", ins);
            if (strstr(pad, tok))
                continue;
            il += (size_t)snprintf(ins + il, sizeof ins - il, "%s%u", got ? " " : "", p);
            got++;
        }
        uint32_t kind = rnd(12);
        if (kind < 2 && n_open < 8) {
            ROW("%u,n%u,start,%s,,,%u,all_reduce,%u,,0%s\n", id, id, ins, 1000 * rnd(4),
                1 + rnd(30), res);
            is_start[id] = 1;
            open[n_open++] = id++;
        } else if (kind < 3 && got) {
            ROW("%u,n%u,nop,%s,,,,,,alias,0%s\n", id, id, ins, res);
            id++;
        } else if (kind < 4) {
            ROW("%u,n%u,nop,%s,,,%u,,,,0%s\n", id, id, ins, 1000 * rnd(3), res);
            id++;
        } else {
            char use[8] = "";
            if (with_res)
                snprintf(use, sizeof use, rnd(4) ? ",%u" : ",", 1 + rnd(4));
            ROW("%u,n%u,compute,%s,mm,%u,%u,,,%s,%u%s\n", id, id, ins, rnd(6) ? 1 + rnd(40) : 0,
                1000 * rnd(20), rnd(6) ? "" : "output", streams ? rnd(with_res ? 3 : 2) : 0,
                use);
            id++;
        }
    }
#undef ROW
    return len;
}

static struct sb_machine *random_machine(uint32_t nd, const char *path, int with_res)
{
    static const char *const speed[] = {"0.5", "1", "2", "4"};
    FILE *f = fopen(path, "w");
    if (!f)
        return NULL;
    fprintf(f, "devices:\n");
    for (uint32_t d = 0; d < nd; d++)
        fprintf(f, "  - {name: d%u, speed: %s, mem_bytes: %uB%s%s}\n", d, speed[rnd(4)],
                rnd(2) ? 1000000 : 10000 + 1000 * rnd(60), /* often tight */
                !with_res ? "" : rnd(2) ? ", resources: {sms: 4}" : ", resources: {sms: 6}",
                with_res && d % 2 ? ", streams: 2" : ""); /* odd devices fold stream 2 */
    if (nd > 1)
        fprintf(f, "links:\n  default: {gbps: %u, latency_us: %u}\n  pairs:\n"
                   "    - {from: d1, to: d0, gbps: %u, latency_us: %u}\n",
                1 + rnd(5), rnd(4), 1 + rnd(5), rnd(3));
    fclose(f);
    struct sb_err e;
    struct sb_machine *m = sb_machine_load(path, &e);
    if (!m)
        fprintf(stderr, "%s\n", e.msg);
    return m;
}

static void plan_random(uint32_t n_graphs)
{
    static char csv[32768];
    char path[600];
    snprintf(path, sizeof path, "%s/heft_random_machine.yaml", SB_TEST_TMP);
    for (uint32_t k = 0; k < n_graphs; k++) {
        int with_res = k % 2; /* every other graph: streams and resources */
        struct sb_machine *m = random_machine(1 + rnd(4), path, with_res);
        size_t len = random_csv(csv, sizeof csv, with_res);
        struct sb_err e;
        struct sb_cost_params c;
        struct sb_graph *G = m ? sb_csv_load_mem("random.csv", csv, len, &e) : NULL;
        CHECK(G != NULL);
        if (!G) {
            fprintf(stderr, "%s\n%s", m ? e.msg : "", csv);
            sb_machine_free(m);
            break;
        }
        sb_cost_defaults(&c);
        sb_cost_apply(&c, G);
        CHECK(sb_machine_apply(m, G, &e) == 0);
        char what[32];
        snprintf(what, sizeof what, "random graph %u", k);
        plan_vs_sim(G, what);
        if (n_mismatch == 1 && getenv("SB_HEFT_DUMP"))
            fprintf(stderr, "%s", csv);
        sb_graph_free(G);
        sb_machine_free(m);
    }
    remove(path);
}

int main(void)
{
    lane_by_hand();
    lane_against_scan();
    struct sb_err e;
    struct sb_cost_params c;
    struct sb_sim_config sc;
    struct sb_sched sched;
    struct sb_schedule s;
    struct sb_sim_result r;
    struct sb_machine *m = sb_machine_load(SB_TEST_DATA "/heft.yaml", &e);
    struct sb_graph *g = m ? sb_graph_load(SB_TEST_DATA "/heft.csv", &e) : NULL;
    if (!g) {
        fprintf(stderr, "%s\n", e.msg);
        sb_machine_free(m);
        return 1;
    }
    sb_cost_defaults(&c);
    sb_cost_apply(&c, g);
    CHECK(sb_machine_apply(m, g, &e) == 0);
    sb_registry_add_builtins();
    CHECK(sb_sched_parse(&sched, "heft", &e) == 0);
    sb_schedule_init(&s, g, 2);
    CHECK(sb_sched_run(&sched, g, &s, &e) == 0);
    CHECK(sb_schedule_validate(&g->v, &s, &e) == 0);
    static const uint32_t want_order[] = {0, 1, 2, 3, 5, 4};
    static const int32_t want_dev[] = {0, 0, 0, 1, 1, 0};
    for (uint32_t i = 0; i < 6; i++) {
        CHECK_EQ_U(s.order[i], want_order[i]);
        CHECK_EQ_U((uint32_t)s.device[i], (uint32_t)want_dev[i]);
    }
    sb_sim_defaults(&sc);
    sb_sim_run(g, &s, &sc, &r);
    CHECK_NEAR(r.makespan_us, 22);
    sb_schedule_free(&s);
    sb_schedule_init(&s, g, 2);
    double predicted = 0;
    CHECK(sb_heft_plan(&g->v, &s, &predicted, 1) == 0);
    CHECK_NEAR(predicted, 22);
    CHECK_EQ_U(r.transfer_bytes, 1000);
    CHECK_EQ_U(r.devices_used, 2);
    sb_sim_result_free(&r);
    sb_schedule_free(&s);
    sb_sched_free(&sched);
    sb_graph_free(g);
    sb_machine_free(m);
    capacity_by_hand();
    plan_corpus();
    uint32_t n_corpus = n_plans;
    printf("heft: %u corpus plans: simulated/predicted makespan mean %.4f, max %.4f\n",
           n_corpus, ratio_sum / n_corpus, ratio_max);
    const char *env = getenv("SB_HEFT_N");
    plan_random(env && atoi(env) > 0 ? (uint32_t)atoi(env) : 500);
    printf("heft: %u plans (%u corpus, %u random): simulated/predicted makespan mean %.4f, "
           "max %.4f; %u differ\n", n_plans, n_corpus, n_plans - n_corpus, ratio_sum / n_plans,
           ratio_max, n_mismatch);
    printf("heft: capacity on: %u plans found nothing within capacity (then planned with "
           "capacity=0), %u plans over capacity; %u one-device plans over capacity\n",
           n_nofit, n_over, n_over_one);
    CHECK_EQ_U(n_mismatch, 0);
    CHECK(n_over == n_nofit); /* over capacity only where heft said nothing fits */
    CHECK_EQ_U(n_peak_mismatch, 0);
    sb_registry_clear();
    return check_report();
}
