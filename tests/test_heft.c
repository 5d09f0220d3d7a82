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
#include "check.h"
#include "core/core.h"
#include "import/import.h"
#include "core/machine.h"

int main(void)
{
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
