// `aggressive` (XLA's latency-hiding scheduler) on the Llama 3 8B FSDP backward
// at 32 layers (~8,000 nodes, target < 50 ms) and at 320, 1280 and 4000 layers
// (~10^6 nodes), with the indexed ready set (selection=fast, the default) and
// with XLA's own linear rescan (selection=scan) for comparison.  Both make the
// same decisions (tests/test_aggressive.c checks it); read the growth from the
// per-node rate (items_per_second) across sizes.  The timed region is the
// plugin's run: building its graph, the list scheduling, the output order.
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

std::string graph_path(int layers)
{
    const char *dir = std::getenv("TMPDIR");
    return std::string(dir ? dir : "/tmp") + "/sb_bench_lhs_llama_" +
           std::to_string(layers) + "l.csv";
}

// Generates the workload once per process; without the generator the
// benchmarks are skipped.
bool generate(int layers)
{
#ifdef SB_HAVE_GEN
    std::vector<std::string> args = {"gen", "llama-bwd", "--layers", std::to_string(layers),
                                     "-o", graph_path(layers)};
    std::vector<char *> argv;
    for (auto &a : args)
        argv.push_back(a.data());
    return sb_gen_main((int)argv.size(), argv.data()) == 0;
#else
    (void)layers;
    return false;
#endif
}

void BM_Aggressive(benchmark::State &st, int layers, const char *spec)
{
    struct sb_err e;
    struct sb_graph *g = sb_graph_load(graph_path(layers).c_str(), &e);
    if (!g) {
        st.SkipWithError(e.msg);
        return;
    }
    struct sb_cost_params c;
    sb_cost_defaults(&c);
    sb_cost_apply(&c, g);
    struct sb_sched sc;
    if (sb_sched_parse(&sc, spec, &e)) {
        st.SkipWithError(e.msg);
        sb_graph_free(g);
        return;
    }
    struct sb_schedule s;
    sb_schedule_init(&s, g, 1);
    for (auto _ : st) {
        if (sb_sched_run(&sc, g, &s, &e)) {
            st.SkipWithError(e.msg);
            break;
        }
        benchmark::DoNotOptimize(s.order[0]);
    }
    st.SetItemsProcessed(st.iterations() * (int64_t)g->v.n_nodes);
    st.counters["nodes"] = g->v.n_nodes;
    sb_schedule_free(&s);
    sb_sched_free(&sc);
    sb_graph_free(g);
}

} // namespace

int main(int argc, char **argv)
{
    benchmark::Initialize(&argc, argv);
    sb_registry_add_builtins();
    static const int sizes[] = {32, 320, 1280, 4000};
    for (int layers : sizes) {
        if (!generate(layers))
            continue;
        std::string name = "aggressive/llama_" + std::to_string(layers) + "l";
        benchmark::RegisterBenchmark(name.c_str(), BM_Aggressive, layers, "aggressive")
            ->Unit(benchmark::kMillisecond);
        if (layers <= 320) { // the rescan is quadratic: larger sizes take minutes
            name = "aggressive_scan/llama_" + std::to_string(layers) + "l";
            benchmark::RegisterBenchmark(name.c_str(), BM_Aggressive, layers,
                                         "aggressive:selection=scan")
                ->Unit(benchmark::kMillisecond);
        }
    }
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    sb_registry_clear();
    for (int layers : sizes)
        std::remove(graph_path(layers).c_str());
    return 0;
}
