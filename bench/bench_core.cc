// Load, simulate and schedule with `original` on synthetic graphs of 10^4, 10^5
// and 10^6 nodes.  Target (issue 2): load + simulate of 10^6 nodes under 2 s on
// the 2-core machine, time linear in size: compare the per-node rates
// (items_per_second) across sizes in one run.
#include <benchmark/benchmark.h>

#include <string>

extern "C" {
#include "core/core.h"
#include "import/import.h"
}

namespace {

// A transformer-like stream: every node reads its predecessor and one a few rows
// back; every 16th pair of rows is an all_gather start/done whose result the
// next compute node reads.  Sizes and costs vary deterministically.
std::string synth_csv(uint32_t n)
{
    std::string s = "# name=synth\n# ranks=8\n"
                    "id,name,kind,inputs,op,cost_us,out_bytes,coll,comm_bytes,group\n";
    char row[256];
    uint32_t open_start = SB_NONE;
    for (uint32_t i = 0; i < n; i++) {
        if (open_start != SB_NONE) {
            snprintf(row, sizeof row, "%u,n%u,done,%u,,,,,,\n", i, i, open_start);
            open_start = SB_NONE;
        } else if (i % 16 == 1 && i + 1 < n) {
            snprintf(row, sizeof row, "%u,n%u,start,%u,all_gather,,%u,all_gather,%u,8\n",
                     i, i, i - 1, 4096 + (i % 7) * 1024, 32768 + (i % 5) * 4096);
            open_start = i;
        } else if (i == 0) {
            snprintf(row, sizeof row, "0,n0,input,,,,65536,,,\n");
        } else {
            uint32_t back = i > 5 ? i - 5 : 0;
            snprintf(row, sizeof row, "%u,n%u,compute,%u %u,mm,%u.5,%u,,,\n", i, i, i - 1,
                     back, 3 + i % 11, 1024 + (i % 13) * 512);
        }
        s += row;
    }
    return s;
}

struct sb_graph *load(const std::string &csv)
{
    struct sb_err e;
    struct sb_graph *g = sb_csv_load_mem("synth.csv", csv.data(), csv.size(), &e);
    if (!g)
        fprintf(stderr, "%s\n", e.msg);
    return g;
}

void BM_Load(benchmark::State &st)
{
    std::string csv = synth_csv((uint32_t)st.range(0));
    for (auto _ : st) {
        struct sb_graph *g = load(csv);
        benchmark::DoNotOptimize(g);
        sb_graph_free(g);
    }
    st.SetItemsProcessed(st.iterations() * st.range(0));
    st.SetBytesProcessed(st.iterations() * (int64_t)csv.size());
}

void BM_Simulate(benchmark::State &st)
{
    struct sb_graph *g = load(synth_csv((uint32_t)st.range(0)));
    struct sb_cost_params c;
    struct sb_sim_config sim;
    struct sb_schedule s;
    sb_cost_defaults(&c);
    sb_cost_apply(&c, g);
    sb_sim_defaults(&sim);
    sb_schedule_init(&s, g, 1);
    for (uint32_t i = 0; i < g->v.n_nodes; i++)
        s.order[i] = i;
    for (auto _ : st) {
        struct sb_sim_result r;
        sb_sim_run(g, &s, &sim, &r);
        benchmark::DoNotOptimize(r.makespan_us);
        sb_sim_result_free(&r);
    }
    st.SetItemsProcessed(st.iterations() * st.range(0));
    sb_schedule_free(&s);
    sb_graph_free(g);
}

// The whole cell as `schedbench run` does it: load, cost, schedule, validate,
// simulate.
void BM_LoadSimulate(benchmark::State &st)
{
    std::string csv = synth_csv((uint32_t)st.range(0));
    sb_registry_add_builtins();
    struct sb_sched sc;
    struct sb_err e;
    sb_sched_parse(&sc, "original", &e);
    struct sb_cost_params c;
    struct sb_sim_config sim;
    sb_cost_defaults(&c);
    sb_sim_defaults(&sim);
    for (auto _ : st) {
        struct sb_graph *g = load(csv);
        struct sb_schedule s;
        struct sb_sim_result r;
        sb_cost_apply(&c, g);
        sb_schedule_init(&s, g, 1);
        sb_sched_run(&sc, g, &s, &e);
        if (sb_schedule_validate(&g->v, &s, &e))
            st.SkipWithError(e.msg);
        sb_sim_run(g, &s, &sim, &r);
        benchmark::DoNotOptimize(r.peak_mem_bytes);
        sb_sim_result_free(&r);
        sb_schedule_free(&s);
        sb_graph_free(g);
    }
    st.SetItemsProcessed(st.iterations() * st.range(0));
    sb_sched_free(&sc);
    sb_registry_clear();
}

void BM_Original(benchmark::State &st)
{
    struct sb_graph *g = load(synth_csv((uint32_t)st.range(0)));
    sb_registry_add_builtins();
    struct sb_sched sc;
    struct sb_err e;
    struct sb_schedule s;
    sb_sched_parse(&sc, "original", &e);
    sb_schedule_init(&s, g, 1);
    for (auto _ : st)
        sb_sched_run(&sc, g, &s, &e);
    st.SetItemsProcessed(st.iterations() * st.range(0));
    sb_schedule_free(&s);
    sb_sched_free(&sc);
    sb_registry_clear();
    sb_graph_free(g);
}

}  // namespace

BENCHMARK(BM_Load)->RangeMultiplier(10)->Range(10000, 1000000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Simulate)->RangeMultiplier(10)->Range(10000, 1000000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_LoadSimulate)->RangeMultiplier(10)->Range(10000, 1000000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Original)->RangeMultiplier(10)->Range(10000, 1000000)->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
