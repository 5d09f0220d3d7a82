// The issue-5 policies (overlap, overlap without prefetch, memfallback and its
// peak rule, membound) on the default Llama 3 8B FSDP backward.  Target: each
// under 50 ms on the ~8,000-node graph.  A synthetic FSDP-shaped backward of
// 10^4 and 10^5 nodes shows how the time grows (compare items_per_second).
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

const char *const kSpecs[] = {"overlap", "overlap:prefetch=0", "memfallback",
                              "memfallback:rule=peak", "membound"};

std::string llama_path()
{
    const char *dir = std::getenv("TMPDIR");
    return std::string(dir ? dir : "/tmp") + "/sb_bench_overlap_llama.csv";
}

// `schedbench gen llama-bwd` with its defaults; false when the generator is not
// built into this tree.
bool generate_llama()
{
#ifdef SB_HAVE_GEN
    std::vector<std::string> args = {"gen", "llama-bwd", "-o", llama_path()};
    std::vector<char *> argv;
    for (auto &a : args)
        argv.push_back(a.data());
    return sb_gen_main((int)argv.size(), argv.data()) == 0;
#else
    return false;
#endif
}

// An FSDP-shaped backward of `layers` layers: per layer an all_gather of the
// weights, four weight-gradient and four input-gradient matmuls reading saved
// activations, a flat gradient and its reduce_scatter.  19 nodes a layer.
std::string synth_fsdp(uint32_t layers)
{
    const unsigned long long mib = 1ull << 20, w = 436 * mib, act = 64 * mib;
    std::string s = "# name=synth-fsdp\n# ranks=64\n"
                    "id,name,kind,inputs,op,cost_us,out_bytes,coll,comm_bytes,flags\n";
    char row[256];
    uint32_t id = 0, grad = id;
    snprintf(row, sizeof row, "%u,g,input,,,,%llu,,,\n", id++, act);
    s += row;
    for (uint32_t l = 0; l < layers; l++) {
        uint32_t wt = id, ag = id + 1, done = id + 2, a0 = id + 3;
        snprintf(row, sizeof row, "%u,w%u,input,,,,%llu,,,weight\n", id++, l, w / 64);
        s += row;
        snprintf(row, sizeof row, "%u,ag%u,start,%u,all_gather,,%llu,all_gather,%llu,\n",
                 id++, l, wt, w, w);
        s += row;
        snprintf(row, sizeof row, "%u,ag%u.done,done,%u,,,,,,\n", id++, l, ag);
        s += row;
        for (uint32_t k = 0; k < 4; k++) {
            snprintf(row, sizeof row, "%u,act%u.%u,input,,,,%llu,,,\n", id++, l, k, act);
            s += row;
        }
        std::string wgs;
        for (uint32_t k = 0; k < 4; k++) {
            snprintf(row, sizeof row, "%u,wg%u.%u,compute,%u %u,mm,4000,%llu,,,\n", id, l, k,
                     grad, a0 + k, w / 4);
            s += row;
            wgs += (wgs.empty() ? "" : " ") + std::to_string(id++);
            snprintf(row, sizeof row, "%u,dg%u.%u,compute,%u %u %u,mm,4000,%llu,,,\n", id, l,
                     k, grad, done, a0 + k, act);
            s += row;
            grad = id++;
        }
        uint32_t flat = id;
        snprintf(row, sizeof row, "%u,flat%u,nop,%s,cat,,%llu,,,\n", id++, l, wgs.c_str(), w);
        s += row;
        snprintf(row, sizeof row,
                 "%u,rs%u,start,%u,reduce_scatter,,%llu,reduce_scatter,%llu,\n", id++, l,
                 flat, w / 64, w);
        s += row;
        snprintf(row, sizeof row, "%u,rs%u.done,done,%u,,,,,,\n", id, l, id - 1);
        id++;
        s += row;
    }
    return s;
}

struct sb_graph *costed(struct sb_graph *g)
{
    if (g) {
        struct sb_cost_params c;
        sb_cost_defaults(&c);
        sb_cost_apply(&c, g);
    }
    return g;
}

void BM_Policy(benchmark::State &st, struct sb_graph *g, std::string spec)
{
    struct sb_sched sc;
    struct sb_err e;
    if (!g || sb_sched_parse(&sc, spec.c_str(), &e)) {
        st.SkipWithError("workload or scheduler unavailable");
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
}

void register_all(const std::string &label, struct sb_graph *g)
{
    for (const char *spec : kSpecs)
        benchmark::RegisterBenchmark((label + "/" + spec).c_str(), BM_Policy, g,
                                     std::string(spec))
            ->Unit(benchmark::kMillisecond);
}

} // namespace

int main(int argc, char **argv)
{
    benchmark::Initialize(&argc, argv);
    sb_registry_add_builtins();
    std::vector<struct sb_graph *> graphs;
    struct sb_err e;
    if (generate_llama()) {
        graphs.push_back(costed(sb_graph_load(llama_path().c_str(), &e)));
        register_all("llama-bwd", graphs.back());
    } else {
        std::fprintf(stderr, "bench_overlap: llama-bwd generator unavailable\n");
    }
    for (uint32_t layers : {526u, 5263u}) { // ~10^4 and ~10^5 nodes
        std::string csv = synth_fsdp(layers);
        graphs.push_back(costed(sb_csv_load_mem("synth.csv", csv.data(), csv.size(), &e)));
        register_all("synth-fsdp/" + std::to_string(graphs.back() ? graphs.back()->v.n_nodes : 0),
                     graphs.back());
    }
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    for (struct sb_graph *g : graphs)
        sb_graph_free(g);
    std::remove(llama_path().c_str());
    sb_registry_clear();
    return 0;
}
