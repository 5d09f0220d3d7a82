// Importing a 100,000-node trace (issue 12: under a second): a Chakra ET made
// here (a chain of compute nodes, every tenth a collective, each node reading
// the previous two) and an ASTRA-sim text workload of 20,000 layers (~100,000
// nodes), each parsed, ordered, written as CSV v1 and loaded.
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

extern "C" {
#include "core/core.h"
#include "et_def.pb-c.h"
#include "import/import.h"
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
    std::string t = "DATA\r\n" + std::to_string(st.range(0)) + "\r\n";
    for (int64_t i = 0; i < st.range(0); i++)
        t += "l" + std::to_string(i) + "\t-1\t100\tNONE\t0\t200\tNONE\t0\t300\tALLREDUCE\t4096\t10\r\n";
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

} // namespace

BENCHMARK(BM_Chakra)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_AstraText)->Arg(2000)->Arg(20000)->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
