/* heft on a graph small enough to schedule by hand (tests/data/heft.csv on
 * tests/data/heft.yaml: two identical devices, a copy of B bytes takes B/1000 us).
 *
 * Upward ranks (mean cost + max over successors of mean copy time + rank):
 *   d = 1, e = 2, b = c = 10 + 0 + 1 = 11 (their outputs are empty),
 *   a = 10 + 1000/1000 + 11 = 22, x = 0 + 22 (inputs cost nothing).
 * Order by rank: x a b c e d (x is not placed as a task).
 *   a: EFT 10 on both, g0 (first): 0..10.
 *   b: g0 ready 10 -> 20; g1 ready 10 + 1 -> 21: g0 10..20.
 *   c: g0 free only from 20 -> 30; g1 11..21: g1.
 *   e: g0 busy 0..20 -> 22; g1 has the gap 0..11 before c: g1 0..2 (insertion).
 *   d: g0 ready max(20, 21 + 0) = 21 -> 22; g1 the same 22: g0 21..22.
 *   x goes to a's device, g0.
 * Order by planned start (ties in rank order): x a e b c d.  Simulated: a copy
 * of a's 1000 bytes to g1 10..11, c 11..21, d 21..22: makespan 22, 1000 bytes
 * moved (c's empty output costs nothing). */
#include "../schedulers/heft-impl.h"
#include "check.h"
#include "core/core.h"
#include "import/import.h"
#include "core/machine.h"

/* The idle-gap search of a lane done the plain way: scan every slot after the
 * first one ending past `ready` (what heft.c did before the index). */
static double scan_gap(const struct slot *s, uint32_t n, double ready, double w, uint32_t *at)
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
    static const struct slot s[] = {{0, 10}, {20, 30}, {30, 35}, {50, 60}};
    static const double q[][4] = {/* ready, w, start, index */
                                  {5, 5, 10, 1},  {5, 12, 35, 3}, {5, 20, 60, 4},
                                  {25, 3, 35, 3}, {40, 10, 40, 3}, {70, 1, 70, 4}};
    struct lane L = {0};
    for (uint32_t i = 0; i < 4; i++) {
        struct lane_pos at;
        lane_earliest_gap(&L, s[i].begin, s[i].end - s[i].begin, &at);
        CHECK(lane_insert(&L, at, s[i].begin, s[i].end) == 0);
    }
    for (uint32_t k = 0; k < sizeof q / sizeof *q; k++) {
        struct lane_pos at;
        CHECK_NEAR(lane_earliest_gap(&L, q[k][0], q[k][1], &at), q[k][2]);
        CHECK_EQ_U(at.i, (uint32_t)q[k][3]); /* one block: the index is the slot's */
    }
    lane_free(&L);
}

/* The index against the scan on lanes of 20,000 slots (78 blocks and more,
 * splits in the middle, the tree rebuilt many times): random (ready, w)
 * queries, each answer inserted, so the lanes grow as heft's do.  Durations
 * and ready times are drawn on a coarse grid and on a fine one, so gaps that
 * fit exactly (end + w == begin) and rounding both occur. */
static void lane_against_scan(void)
{
    for (int trial = 0; trial < 2; trial++) {
        struct lane L = {0};
        uint32_t n = 0, cap = 20000, bad = 0;
        struct slot *ref = malloc(cap * sizeof *ref);
        uint64_t x = 88172645463325252ull + (uint64_t)trial;
        for (uint32_t k = 0; k < cap; k++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17; /* xorshift64 */
            double span = 50.0 * (k + 1);
            double ready = trial ? (double)(x % 1000) * span / 1000 : (double)(x % (k + 1)) * 50;
            double w = trial ? 0.1 + (double)(x >> 40 & 1023) / 97.0 : (double)(1 + (x >> 40) % 60);
            struct lane_pos at;
            uint32_t ref_at;
            double t = lane_earliest_gap(&L, ready, w, &at);
            double r = scan_gap(ref, n, ready, w, &ref_at);
            /* the index's position, counted across blocks */
            uint32_t flat = at.i;
            for (uint32_t j = 0; j < at.blk; j++)
                flat += L.b[j]->n;
            if (t != r || flat != ref_at)
                bad++;
            memmove(&ref[ref_at + 1], &ref[ref_at], (n - ref_at) * sizeof *ref);
            ref[ref_at] = (struct slot){r, r + w};
            n++;
            CHECK(lane_insert(&L, at, t, t + w) == 0);
        }
        CHECK_EQ_U(bad, 0);
        CHECK(L.n_blocks > 20000 / SB_LANE_BLOCK); /* several blocks were exercised */
        uint32_t flat = 0, sorted = 1;
        for (uint32_t j = 0; j < L.n_blocks; j++)
            for (uint32_t i = 0; i < L.b[j]->n; i++, flat++)
                sorted &= L.b[j]->s[i].begin == ref[flat].begin;
        CHECK_EQ_U(flat, n);
        CHECK(sorted);
        lane_free(&L);
        free(ref);
    }
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
    static const uint32_t want_order[] = {0, 1, 5, 2, 3, 4};
    static const int32_t want_dev[] = {0, 0, 0, 1, 0, 1};
    for (uint32_t i = 0; i < 6; i++) {
        CHECK_EQ_U(s.order[i], want_order[i]);
        CHECK_EQ_U((uint32_t)s.device[i], (uint32_t)want_dev[i]);
    }
    sb_sim_defaults(&sc);
    sb_sim_run(g, &s, &sc, &r);
    CHECK_NEAR(r.makespan_us, 22);
    CHECK_EQ_U(r.transfer_bytes, 1000);
    CHECK_EQ_U(r.devices_used, 2);
    sb_sim_result_free(&r);
    sb_schedule_free(&s);
    sb_sched_free(&sched);
    sb_registry_clear();
    sb_graph_free(g);
    sb_machine_free(m);
    return check_report();
}
