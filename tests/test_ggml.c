/* The ggml splitter (sb_ggml_*, schedulers/lib/ggml_split.c) on graphs worked out by hand with
 * ggml's rules (docs/ggml.md); ggml's own cases are the conformance test. */
#include "schedbench/policy.h"
#include "check.h"
#include "core/core.h"
#include "import/import.h"
#include "core/machine.h"

/* x (input) -> h1 = w1(GPU) x -> h2 = w2(CPU) h1 -> h3 = w3(GPU) h2, on
 * [GPU, CPU], neither reading the other's memory.
 * pass 1: leafs w1, w3 on GPU (their buffer), w2 on CPU, x (input) on CPU;
 *   h1 follows w1 (GPU), h2 w2 (CPU), h3 w3 (GPU).
 * pass 5: split 0 GPU [0,1) copies x; split 1 CPU [1,2) copies h1; split 2
 *   GPU [2,3) copies h2: 3 splits, one input each. */
static void chain(void)
{
    static const uint8_t yes[2] = {1, 1}, no[2] = {0, 0};
    static const int32_t s_h1[2] = {0, 3}, s_h2[2] = {1, 4}, s_h3[2] = {2, 5};
    struct sb_ggml_tensor t[6] = {
        {.buft = 0, .usage = SB_GGML_USAGE_WEIGHTS, .view_src = -1, .pin = -1, .supports = yes, .offload = no}, /* w1 */
        {.buft = 1, .usage = SB_GGML_USAGE_WEIGHTS, .view_src = -1, .pin = -1, .supports = yes, .offload = no}, /* w2 */
        {.buft = 0, .usage = SB_GGML_USAGE_WEIGHTS, .view_src = -1, .pin = -1, .supports = yes, .offload = no}, /* w3 */
        {.input = 1, .buft = -1, .view_src = -1, .pin = -1, .supports = yes, .offload = no},                /* x */
        {.buft = -1, .view_src = -1, .pin = -1, .supports = yes, .offload = no, .n_src = 2, .src = s_h1},
        {.buft = -1, .view_src = -1, .pin = -1, .supports = yes, .offload = no, .n_src = 2, .src = s_h2},
    };
    struct sb_ggml_tensor all[7];
    memcpy(all, t, sizeof t);
    all[6] = (struct sb_ggml_tensor){.buft = -1, .view_src = -1, .pin = -1, .supports = yes,
                             .offload = no, .n_src = 2, .src = s_h3};
    static const int32_t bb[2] = {0, 1};
    static const uint8_t reads[4] = {1, 0, 0, 1};
    struct sb_ggml_problem p = {2, 2, bb, reads, 1, 30, 4, 3, all};
    struct sb_ggml_result r;
    CHECK(sb_ggml_split_graph(&p, &r) == 0);
    static const int32_t want[7] = {0, 1, 0, 1, 0, 1, 0};
    for (int i = 0; i < 7; i++)
        CHECK_EQ_U((uint32_t)r.backend[i], (uint32_t)want[i]);
    CHECK_EQ_U(r.n_splits, 3);
    if (r.n_splits == 3) {
        CHECK(r.splits[0].backend == 0 && r.splits[0].n_inputs == 1 && r.splits[0].inputs[0] == 3);
        CHECK(r.splits[1].backend == 1 && r.splits[1].n_inputs == 1 && r.splits[1].inputs[0] == 4);
        CHECK(r.splits[2].backend == 0 && r.splits[2].n_inputs == 1 && r.splits[2].inputs[0] == 5);
    }
    sb_ggml_result_free(&r);
}

/* workloads/ggml/ggml-wide-40.csv: 40 GPU mul_mats, then 39 adds pinned to
 * the CPU, the first reading two products and each later one one more.  The
 * CPU split collects a copy per product: 2, 3, ... 30 after the 29th add;
 * the 30th add finds the split exactly full and a product needing a copy, so
 * a new CPU split takes the last 10.  Three splits: two barriers with
 * barrier=1 (the old model), none by default (ggml's events: each node waits
 * for its own inputs' copies only). */
static void wide(const char *spec, uint32_t want_barriers)
{
    struct sb_err e;
    struct sb_graph *g = sb_graph_load(SB_SOURCE_DIR "/workloads/ggml/ggml-wide-40.csv", &e);
    struct sb_machine *m = NULL;
    CHECK(g != NULL);
    if (!g)
        return;
    struct sb_cost_params c;
    sb_cost_defaults(&c);
    sb_cost_apply(&c, g);
    CHECK(sb_machine_of_graph(g, &m, &e) == 0);
    struct sb_sched s;
    struct sb_schedule out;
    CHECK(sb_sched_parse(&s, spec, &e) == 0);
    sb_schedule_init(&out, g, g->v.machine->n_devices);
    CHECK(sb_sched_run(&s, g, &out, &e) == 0);
    CHECK(sb_schedule_validate(&g->v, &out, &e) == 0);
    uint32_t barriers = 0, gpu = 0;
    for (uint32_t v = 0; v < g->v.n_nodes; v++) {
        barriers += out.barrier[v];
        gpu += g->kind[v] == SB_KIND_COMPUTE && out.device[v] == 0;
    }
    CHECK_EQ_U(barriers, want_barriers);
    CHECK_EQ_U(gpu, 40);
    sb_schedule_free(&out);
    sb_sched_free(&s);
    sb_graph_free(g);
    sb_machine_free(m);
}

int main(void)
{
    sb_registry_add_builtins();
    chain();
    wide("ggml:barrier=1", 2);
    wide("ggml", 0);
    sb_registry_clear();
    return check_report();
}
