/* The workload CSV loader, then every built-in policy on the graphs it
 * accepts: validate the schedule and simulate it, as `run` does.  A crash or
 * a sanitizer report inside a policy counts as much as one in the loader.
 * Each accepted schedule is then bucketed from the input's own bytes (any
 * node, starts mostly, buckets 1..3; docs/plugins.md "Buckets") and goes
 * through the validator and, when accepted, the simulator again: a refusal
 * must say why.  Before that, the toolkit's two bucketers run on the
 * policy's order and must return a schedule the harness accepts. */
#include "fuzz.h"
#include "core/machine.h"
#include "import/import.h"
#include "schedbench/policy.h"

/* The toolkit's bucketers on the policy's order: what they return must be
 * a schedule the harness accepts. */
static void bucketers(const struct sb_graph *g, struct sb_schedule *out,
                      const struct sb_sim_config *sc)
{
    struct sb_bucket_params p;
    struct sb_err e;
    sb_bucket_defaults(&p);
    for (int k = 0; k < 2; k++) { /* keyed by out->device: a placer's too */
        int rc = sb_bucket_schedule(&g->v, k ? SB_BUCKET_OVERLAP : SB_BUCKET_GREEDY, &p, out);
        if (rc < 0 || sb_schedule_validate(&g->v, out, &e)) {
            fprintf(stderr, "bucketer %d: %s\n", k, rc < 0 ? "failed" : e.msg);
            abort(); /* a bucketer's schedule is always valid */
        }
        struct sb_sim_result r;
        sb_sim_run(g, out, sc, &r);
        sb_sim_result_free(&r);
    }
}

static void bucketed(const struct sb_graph *g, struct sb_schedule *out,
                     const struct sb_sim_config *sc, const uint8_t *data, size_t n)
{
    struct sb_err e;
    for (uint32_t v = 0; v < g->v.n_nodes; v++) {
        uint8_t b = data[(v * 7u) % n];
        int start = g->v.kind[v] == SB_KIND_START;
        out->bucket[v] = (start ? b % 4 : b % 61 == 0) ? 1 + b % 3 : 0;
    }
    if (sb_schedule_validate(&g->v, out, &e)) {
        if (!e.msg[0])
            abort(); /* a refusal names its reason */
        return;
    }
    struct sb_sim_result r;
    sb_sim_run(g, out, sc, &r);
    sb_sim_result_free(&r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
    static int init;
    if (!init)
        sb_registry_add_builtins(), init = 1;
    struct sb_err e;
    struct sb_graph *g = sb_csv_load_mem("fuzz.csv", (const char *)data, n, &e);
    if (!g)
        return 0;
    struct sb_cost_params c;
    struct sb_machine *m = NULL;
    sb_cost_defaults(&c);
    sb_cost_apply(&c, g);
    /* a '# machine=' line would read any file: keep to one device */
    if (sb_graph_meta(g, "machine") || g->v.n_nodes > 200 || sb_machine_of_graph(g, &m, &e)) {
        sb_graph_free(g);
        return 0;
    }
    struct sb_sim_config sc;
    sb_sim_defaults(&sc);
    for (uint32_t p = 0; p < sb_registry_count(); p++) {
        struct sb_sched s;
        struct sb_schedule out;
        if (sb_sched_parse(&s, sb_registry_at(p)->name, &e))
            continue;
        sb_schedule_init(&out, g, g->v.machine->n_devices);
        if (!sb_sched_run(&s, g, &out, &e) && !sb_schedule_validate(&g->v, &out, &e)) {
            struct sb_sim_result r;
            sb_sim_run(g, &out, &sc, &r);
            sb_sim_result_free(&r);
            bucketers(g, &out, &sc);
            bucketed(g, &out, &sc, data, n);
        }
        sb_schedule_free(&out);
        sb_sched_free(&s);
    }
    sb_machine_free(m);
    sb_graph_free(g);
    return 0;
}
