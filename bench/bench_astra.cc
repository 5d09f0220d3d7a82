// Issue 11: simulating the 8k-node Llama backward (workloads/corpus/
// llama3-8b-bwd-r64.csv) under --comm astra against the simple model, in one
// run; target: astra at most 20x simple.  Schedules: the file order and
// `overlap` (which keeps more collectives ahead of their waits); astra with
// one collective admitted at a time and with four sharing ASTRA-sim's queues,
// on the 8 x 8 NVSwitch network of workloads/astra (hgx64.yml, system-2d.json).
#include <benchmark/benchmark.h>

#include <string>

extern "C" {
#include "net/astra.h"
#include "core/core.h"
#include "import/import.h"
}

namespace {

const std::string kRoot = SB_SOURCE_DIR;

struct Fixture {
    struct sb_graph *g = nullptr;
    struct sb_astra_config astra;
    struct sb_schedule order, overlap;
    bool ok = false;

    Fixture()
    {
        struct sb_err e;
        struct sb_cost_params c;
        struct sb_sched sc;
        g = sb_graph_load((kRoot + "/workloads/corpus/llama3-8b-bwd-r64.csv").c_str(), &e);
        if (!g)
            return;
        sb_cost_defaults(&c);
        sb_cost_apply(&c, g);
        sb_astra_defaults(&astra);
        if (sb_astra_load_system((kRoot + "/workloads/astra/system-2d.json").c_str(), &astra, &e) ||
            sb_astra_load_network((kRoot + "/workloads/astra/hgx64.yml").c_str(), &astra, &e))
            return;
        sb_schedule_init(&order, g, 1);
        sb_schedule_init(&overlap, g, 1);
        for (uint32_t i = 0; i < g->v.n_nodes; i++)
            order.order[i] = i;
        if (sb_sched_parse(&sc, "overlap", &e))
            return;
        ok = sb_sched_run(&sc, g, &overlap, &e) == 0 && !sb_schedule_validate(&g->v, &overlap, &e);
        sb_sched_free(&sc);
    }
    ~Fixture()
    {
        if (!g)
            return;
        sb_schedule_free(&order);
        sb_schedule_free(&overlap);
        sb_graph_free(g);
    }
};

Fixture *fx;

// model: 0 simple, else astra with `model` collectives admitted at once
void BM_Sim(benchmark::State &st, bool use_overlap, int model)
{
    if (!fx->ok) {
        st.SkipWithError("workload, network or overlap unavailable");
        return;
    }
    struct sb_graph *g = fx->g;
    struct sb_err e;
    if (model && sb_astra_apply(&fx->astra, 0, g, &e)) { // collective durations, as run does
        st.SkipWithError(e.msg);
        return;
    }
    struct sb_sim_config c;
    struct sb_comm_queue q;
    sb_sim_defaults(&c);
    sb_astra_comm_queue(&fx->astra, &q);
    if (model) {
        c.limit[0] = (uint32_t)model;
        c.queue = &q;
    }
    double makespan = 0;
    for (auto _ : st) {
        struct sb_sim_result r;
        sb_sim_run(g, use_overlap ? &fx->overlap : &fx->order, &c, &r);
        makespan = r.makespan_us;
        sb_sim_result_free(&r);
    }
    st.counters["makespan_ms"] = makespan / 1000;
    st.counters["nodes"] = g->v.n_nodes;
    st.SetItemsProcessed(st.iterations() * (int64_t)g->v.n_nodes);
    if (model) { // back to the simple model's durations for the next benchmark
        struct sb_cost_params cp;
        sb_cost_defaults(&cp);
        sb_cost_apply(&cp, g);
    }
}

// Pricing every collective alone (sb_astra_apply), once per workload in a run.
void BM_Apply(benchmark::State &st)
{
    if (!fx->ok) {
        st.SkipWithError("workload or network unavailable");
        return;
    }
    struct sb_err e;
    for (auto _ : st)
        if (sb_astra_apply(&fx->astra, 0, fx->g, &e)) {
            st.SkipWithError(e.msg);
            break;
        }
    struct sb_cost_params cp;
    sb_cost_defaults(&cp);
    sb_cost_apply(&cp, fx->g);
}

} // namespace

int main(int argc, char **argv)
{
    benchmark::Initialize(&argc, argv);
    sb_registry_add_builtins();
    Fixture f;
    fx = &f;
    benchmark::RegisterBenchmark("astra_apply", BM_Apply)->Unit(benchmark::kMillisecond);
    for (int ov = 0; ov < 2; ov++) {
        std::string s = ov ? "/overlap" : "/original";
        benchmark::RegisterBenchmark(("sim_simple" + s).c_str(), BM_Sim, ov, 0)
            ->Unit(benchmark::kMillisecond);
        benchmark::RegisterBenchmark(("sim_astra_inflight1" + s).c_str(), BM_Sim, ov, 1)
            ->Unit(benchmark::kMillisecond);
        benchmark::RegisterBenchmark(("sim_astra_inflight4" + s).c_str(), BM_Sim, ov, 4)
            ->Unit(benchmark::kMillisecond);
    }
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    sb_registry_clear();
    return 0;
}
