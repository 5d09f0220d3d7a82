// Every registered scheduler, and the simulator, on the Llama backward at 1x,
// 10x and 100x its default layer count (issue 6), plus loading the same files.
// Compare the per-node rate (items_per_second) across sizes in one run to read
// the growth; absolute times on the shared 2-core machines are noisy.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

extern "C" {
#include "core/core.h"
#include "import/import.h"
#ifdef SB_HAVE_GEN
#include "../workloads/gen/gen.h"
#endif
}

namespace {

const int kDefaultLayers = 32; // Llama 3 8B
const int kScales[] = {1, 10, 100};

std::string graph_path(int scale)
{
    const char *dir = std::getenv("TMPDIR");
    return std::string(dir ? dir : "/tmp") + "/sb_bench_llama_x" + std::to_string(scale) +
           ".csv";
}

// Generates the workload once per process; a failure skips the benchmarks.
bool generate(int scale)
{
#ifdef SB_HAVE_GEN
    std::string layers = std::to_string(kDefaultLayers * scale), out = graph_path(scale);
    std::vector<std::string> args = {"gen", "llama-bwd", "--layers", layers, "-o", out};
    std::vector<char *> argv;
    for (auto &a : args)
        argv.push_back(a.data());
    return sb_gen_main((int)argv.size(), argv.data()) == 0;
#else
    (void)scale;
    return false;
#endif
}

struct sb_graph *load_costed(int scale)
{
    struct sb_err e;
    struct sb_graph *g = sb_graph_load(graph_path(scale).c_str(), &e);
    if (!g)
        return nullptr;
    struct sb_cost_params c;
    sb_cost_defaults(&c);
    sb_cost_apply(&c, g);
    return g;
}

void BM_LoadLlama(benchmark::State &st, int scale)
{
    uint32_t n = 0;
    for (auto _ : st) {
        struct sb_err e;
        struct sb_graph *g = sb_graph_load(graph_path(scale).c_str(), &e);
        if (!g) {
            st.SkipWithError(e.msg);
            return;
        }
        n = g->v.n_nodes;
        sb_graph_free(g);
    }
    st.SetItemsProcessed(st.iterations() * (int64_t)n);
    st.counters["nodes"] = n;
}

void BM_Schedule(benchmark::State &st, int scale, std::string spec)
{
    struct sb_graph *g = load_costed(scale);
    struct sb_sched sc;
    struct sb_err e;
    if (!g || sb_sched_parse(&sc, spec.c_str(), &e)) {
        st.SkipWithError("workload or scheduler unavailable");
        sb_graph_free(g);
        return;
    }
    struct sb_schedule s;
    sb_schedule_init(&s, g, 1);
    for (auto _ : st)
        if (sb_sched_run(&sc, g, &s, &e)) {
            st.SkipWithError(e.msg);
            break;
        }
    if (sb_schedule_validate(&g->v, &s, &e))
        st.SkipWithError(e.msg);
    st.SetItemsProcessed(st.iterations() * (int64_t)g->v.n_nodes);
    st.counters["nodes"] = g->v.n_nodes;
    sb_schedule_free(&s);
    sb_sched_free(&sc);
    sb_graph_free(g);
}

void BM_SimulateLlama(benchmark::State &st, int scale)
{
    struct sb_graph *g = load_costed(scale);
    if (!g) {
        st.SkipWithError("workload unavailable");
        return;
    }
    struct sb_schedule s;
    struct sb_sim_config c;
    sb_sim_defaults(&c);
    sb_schedule_init(&s, g, 1);
    for (uint32_t i = 0; i < g->v.n_nodes; i++)
        s.order[i] = i;
    for (auto _ : st) {
        struct sb_sim_result r;
        sb_sim_run(g, &s, &c, &r);
        benchmark::DoNotOptimize(r.makespan_us);
        sb_sim_result_free(&r);
    }
    st.SetItemsProcessed(st.iterations() * (int64_t)g->v.n_nodes);
    st.counters["nodes"] = g->v.n_nodes;
    sb_schedule_free(&s);
    sb_graph_free(g);
}

} // namespace

int main(int argc, char **argv)
{
    benchmark::Initialize(&argc, argv);
    sb_registry_add_builtins();
    for (int scale : kScales) {
        if (!generate(scale)) {
            std::fprintf(stderr, "bench_sweep: cannot generate llama-bwd x%d\n", scale);
            continue;
        }
        std::string x = "/x" + std::to_string(scale);
        benchmark::RegisterBenchmark(("load" + x).c_str(), BM_LoadLlama, scale)
            ->Unit(benchmark::kMillisecond);
        benchmark::RegisterBenchmark(("simulate" + x).c_str(), BM_SimulateLlama, scale)
            ->Unit(benchmark::kMillisecond);
        for (uint32_t i = 0; i < sb_registry_count(); i++) {
            std::string name = sb_registry_at(i)->name;
            benchmark::RegisterBenchmark(("schedule/" + name + x).c_str(), BM_Schedule,
                                         scale, name)
                ->Unit(benchmark::kMillisecond);
        }
    }
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    for (int scale : kScales)
        std::remove(graph_path(scale).c_str());
    sb_registry_clear();
    return 0;
}
