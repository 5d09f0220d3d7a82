// Importing through each importer and the graph builder (issue 12: a
// 100,000-node trace under a second; issue 20: the builder no slower than the
// CSV text the importers used to write).  From memory: a Chakra ET made here
// (a chain of compute nodes, every tenth a collective, each node reading the
// previous two) and an ASTRA-sim text workload of 20,000 layers (~100,000
// nodes).  From files, with sb_graph_load, so the same cases run against an
// older tree: the same Chakra ET at 100,000 nodes, ASTRA-sim text at 120,000
// nodes, XLA's Llama 3.1 8B module (../shared/corpus/xla-bench, skipped
// without it) and CSV v1 of `gen llama-bwd --layers 2560` (632,395 nodes).
#include <benchmark/benchmark.h>

#include <cstdio>
#include <string>
#include <vector>

#include <unistd.h>

extern "C" {
#include "core/core.h"
#include "et_def.pb-c.h"
#include "import/import.h"
#include "../workloads/gen/gen.h"
}

namespace {

void put(std::vector<uint8_t> &out, const ProtobufCMessage *m)
{
    size_t len = protobuf_c_message_get_packed_size(m);
    for (size_t v = len;; v >>= 7) {
        out.push_back(static_cast<uint8_t>((v & 0x7f) | (v > 0x7f ? 0x80 : 0)));
        if (v <= 0x7f)
            break;
    }
    size_t at = out.size();
    out.resize(at + len);
    protobuf_c_message_pack(m, out.data() + at);
}

std::vector<uint8_t> make_et(uint64_t n)
{
    std::vector<uint8_t> out;
    ChakraProtoMsg__GlobalMetadata meta = CHAKRA_PROTO_MSG__GLOBAL_METADATA__INIT;
    put(out, &meta.base);
    ChakraProtoMsg__AttributeProto type = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__INIT;
    ChakraProtoMsg__AttributeProto size = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__INIT;
    type.name = const_cast<char *>("comm_type");
    type.value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT64_VAL;
    type.int64_val = CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__ALL_REDUCE;
    size.name = const_cast<char *>("comm_size");
    size.value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT64_VAL;
    size.int64_val = 1 << 20;
    ChakraProtoMsg__AttributeProto *attrs[2] = {&type, &size};
    std::string name;
    for (uint64_t i = 0; i < n; i++) {
        ChakraProtoMsg__Node x = CHAKRA_PROTO_MSG__NODE__INIT;
        uint64_t deps[2] = {i - 1, i - 2};
        name = "n" + std::to_string(i);
        x.id = i;
        x.name = const_cast<char *>(name.c_str());
        x.duration_micros = 3;
        x.data_deps = deps;
        x.n_data_deps = i >= 2 ? 2 : i;
        if (i % 10 == 9) {
            x.type = CHAKRA_PROTO_MSG__NODE_TYPE__COMM_COLL_NODE;
            x.attr = attrs;
            x.n_attr = 2;
        } else {
            x.type = CHAKRA_PROTO_MSG__NODE_TYPE__COMP_NODE;
        }
        put(out, &x.base);
    }
    return out;
}

std::string astra_text(int64_t layers)
{
    std::string t = "DATA\r\n" + std::to_string(layers) + "\r\n";
    for (int64_t i = 0; i < layers; i++)
        t += "l" + std::to_string(i) + "\t-1\t100\tNONE\t0\t200\tNONE\t0\t300\tALLREDUCE\t4096\t10\r\n";
    return t;
}

// One node depending on all the others (issue 27: 200,000 of them took 7.2 s
// when duplicate dependencies were searched for linearly per edge).
std::vector<uint8_t> make_fanin_et(uint64_t n)
{
    std::vector<uint8_t> out;
    ChakraProtoMsg__GlobalMetadata meta = CHAKRA_PROTO_MSG__GLOBAL_METADATA__INIT;
    put(out, &meta.base);
    std::vector<uint64_t> deps(n);
    std::string name;
    for (uint64_t i = 0; i <= n; i++) {
        ChakraProtoMsg__Node x = CHAKRA_PROTO_MSG__NODE__INIT;
        name = "n" + std::to_string(i);
        x.id = i;
        x.name = const_cast<char *>(name.c_str());
        x.duration_micros = 1;
        x.type = CHAKRA_PROTO_MSG__NODE_TYPE__COMP_NODE;
        if (i == n) {
            for (uint64_t k = 0; k < n; k++)
                deps[k] = k;
            x.data_deps = deps.data();
            x.n_data_deps = n;
        }
        put(out, &x.base);
    }
    return out;
}

void BM_ChakraFanIn(benchmark::State &st)
{
    std::vector<uint8_t> et = make_fanin_et(static_cast<uint64_t>(st.range(0)));
    struct sb_import_opts o;
    sb_import_defaults(&o);
    for (auto _ : st) {
        struct sb_err e;
        struct sb_graph *g = sb_chakra_load_mem("fanin.et", et.data(), et.size(), &o, &e);
        if (!g) {
            st.SkipWithError(e.msg);
            break;
        }
        st.counters["edges"] = g->v.n_edges;
        sb_graph_free(g);
    }
}

void BM_Chakra(benchmark::State &st)
{
    std::vector<uint8_t> et = make_et(static_cast<uint64_t>(st.range(0)));
    struct sb_import_opts o;
    sb_import_defaults(&o);
    for (auto _ : st) {
        struct sb_err e;
        struct sb_graph *g = sb_chakra_load_mem("bench.et", et.data(), et.size(), &o, &e);
        if (!g) {
            st.SkipWithError(e.msg);
            break;
        }
        st.counters["nodes"] = g->v.n_nodes;
        sb_graph_free(g);
    }
}

void BM_AstraText(benchmark::State &st)
{
    std::string t = astra_text(st.range(0));
    struct sb_import_opts o;
    sb_import_defaults(&o);
    for (auto _ : st) {
        struct sb_err e;
        struct sb_graph *g = sb_astra_text_load_mem("bench.txt", t.data(), t.size(), &o, &e);
        if (!g) {
            st.SkipWithError(e.msg);
            break;
        }
        st.counters["nodes"] = g->v.n_nodes;
        sb_graph_free(g);
    }
}

// The files of the BM_File cases, written once into a folder of their own.
struct files {
    std::string dir, et, txt, csv, hlo, hlo70;
    files()
    {
        char tmpl[] = "/tmp/sb_bench_import_XXXXXX";
        dir = mkdtemp(tmpl) ? tmpl : "/tmp";
        et = dir + "/chakra100k.et";
        txt = dir + "/astra120k.txt";
        csv = dir + "/llama-bwd-2560.csv";
        std::vector<uint8_t> b = make_et(100000);
        write(et, b.data(), b.size());
        std::string t = astra_text(24000); // 5 nodes a layer: 120,000 nodes
        write(txt, t.data(), t.size());
        std::string layers = "--layers", n = "2560", o = "-o";
        char *argv[] = {const_cast<char *>("gen"), const_cast<char *>("llama-bwd"),
                        &layers[0], &n[0], &o[0], &csv[0], nullptr};
        if (sb_gen_main(6, argv) != 0)
            csv.clear();
        hlo = SB_SOURCE_DIR "/../shared/corpus/xla-bench/hlo_llama31_8b_bf16_1x8.hlo";
        // issue 21: its two while loops run 80 times each (52,118 nodes)
        hlo70 = SB_SOURCE_DIR "/../shared/corpus/xla-bench/hlo_llama31_70b_bf16_16x8.hlo";
    }
    ~files()
    {
        unlink(et.c_str());
        unlink(txt.c_str());
        if (!csv.empty())
            unlink(csv.c_str());
        rmdir(dir.c_str());
    }
    static void write(const std::string &path, const void *p, size_t n)
    {
        FILE *f = fopen(path.c_str(), "wb");
        if (f) {
            fwrite(p, 1, n, f);
            fclose(f);
        }
    }
};

const files &the_files()
{
    static files f;
    return f;
}

void load_file(benchmark::State &st, const std::string &path)
{
    if (path.empty() || access(path.c_str(), R_OK) != 0) {
        st.SkipWithError("input not available (../shared/corpus absent?)");
        return;
    }
    for (auto _ : st) {
        struct sb_err e;
        struct sb_graph *g = sb_graph_load(path.c_str(), &e);
        if (!g) {
            st.SkipWithError(e.msg);
            break;
        }
        st.counters["nodes"] = g->v.n_nodes;
        st.counters["nodes_per_s"] =
            benchmark::Counter(g->v.n_nodes, benchmark::Counter::kIsIterationInvariantRate);
        sb_graph_free(g);
    }
}

void BM_FileChakra100k(benchmark::State &st) { load_file(st, the_files().et); }
void BM_FileAstraText120k(benchmark::State &st) { load_file(st, the_files().txt); }
void BM_FileHlo8B(benchmark::State &st) { load_file(st, the_files().hlo); }
void BM_FileHlo70B(benchmark::State &st) { load_file(st, the_files().hlo70); }
void BM_FileCsv632k(benchmark::State &st) { load_file(st, the_files().csv); }

} // namespace

BENCHMARK(BM_FileChakra100k)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_FileAstraText120k)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_FileHlo8B)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_FileHlo70B)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_FileCsv632k)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ChakraFanIn)->Arg(200000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Chakra)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_AstraText)->Arg(2000)->Arg(20000)->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
