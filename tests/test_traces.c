#define _POSIX_C_SOURCE 200809L
/* The Chakra and ASTRA-sim text importers on inputs written here, with the
 * graph each must give worked out by hand (workloads/importers/). */
#include <stdlib.h>
#include <unistd.h>

#include "check.h"
#include "core/core.h"
#include "et_def.pb-c.h"
#include "core/machine.h"
#include "import/import.h"

static uint32_t node_named(const struct sb_graph *g, const char *name)
{
    for (uint32_t v = 0; v < g->v.n_nodes; v++)
        if (!strcmp(g->names + g->name_off[v], name))
            return v;
    return UINT32_MAX;
}

static int reads(const struct sb_graph *g, uint32_t v, uint32_t p)
{
    for (uint32_t e = g->v.pred_off[v]; e < g->v.pred_off[v + 1]; e++)
        if (g->v.pred[e] == p)
            return 1;
    return 0;
}

/* ---- ASTRA-sim text ---------------------------------------------------------- */

/* One layer, CRLF, a double space, no final newline (as microAllReduce.txt).
 * At 1 GHz a cycle is 0.001 us.  Layer 0 has no input gradient, so: fwd,
 * wg, the all-reduce's start and done, update: 5 nodes. */
static void text_micro(void)
{
    static const char t[] = "MICRO\r\n1\r\nconv1 -1 5 NONE 0 5 NONE 0 7  ALLREDUCE 1048576 9";
    struct sb_import_opts o;
    struct sb_err e;
    sb_import_defaults(&o);
    struct sb_graph *g = sb_astra_text_load_mem("m.txt", t, sizeof t - 1, &o, &e);
    CHECK(g != NULL);
    if (!g)
        return fprintf(stderr, "%s\n", e.msg), (void)0;
    CHECK_EQ_U(g->v.n_nodes, 5);
    uint32_t f = node_named(g, "L0.conv1.fwd"), w = node_named(g, "L0.conv1.wg");
    uint32_t s = node_named(g, "L0.conv1.wg.ALLREDUCE"), u = node_named(g, "L0.conv1.update");
    CHECK(f == 0 && w == 1 && s == 2 && u == 4);
    CHECK_NEAR(g->v.cost_us[f], 0.005);
    CHECK_NEAR(g->v.cost_us[w], 0.007);
    CHECK_NEAR(g->v.cost_us[u], 0.009);
    CHECK_EQ_U(g->v.coll[s], SB_COLL_ALL_REDUCE);
    CHECK_EQ_U(g->v.comm_bytes[s], 1048576);
    CHECK_EQ_U(g->v.group_size[s], 16); /* npus default */
    CHECK(reads(g, u, 3));               /* the update waits for the all-reduce */
    CHECK(!strcmp(sb_graph_meta(g, "tensor_sizes"), "none"));
    sb_graph_free(g);
}

/* Two DATA layers, tabs and runs of them, a trailing blank, at 2 GHz:
 *   forward  L0.fwd, L1.fwd (reads L0.fwd);
 *   backward L1.wg (reads L1.fwd), its all-reduce, L1.update (reads the done),
 *            L1.ig (reads L1.wg, not the all-reduce: weight gradients overlap),
 *            L0.wg (reads L1.ig), its all-reduce, L0.update.
 * 4 computes + 2 x 2 collective nodes + 2 updates = 11 nodes. */
static void text_data(void)
{
    static const char t[] =
        "DATA\t\t\n2\t\t\n"
        "a\t-1\t10\tNONE\t0\t20\tNONE\t0\t30\tALLREDUCE\t100\t2 \n"
        "b\t\t-1\t40\tNONE\t0\t50\tNONE\t0\t60\tALLREDUCE\t200\t4\n";
    struct sb_import_opts o;
    struct sb_err e;
    sb_import_defaults(&o);
    CHECK(sb_import_parse(&o, "clock_ghz=2,npus=8", &e) == 0);
    struct sb_graph *g = sb_astra_text_load_mem("d.txt", t, sizeof t - 1, &o, &e);
    CHECK(g != NULL);
    if (!g)
        return fprintf(stderr, "%s\n", e.msg), (void)0;
    CHECK_EQ_U(g->v.n_nodes, 11);
    uint32_t a_f = node_named(g, "L0.a.fwd"), b_f = node_named(g, "L1.b.fwd");
    uint32_t b_w = node_named(g, "L1.b.wg"), b_i = node_named(g, "L1.b.ig");
    uint32_t a_w = node_named(g, "L0.a.wg"), b_u = node_named(g, "L1.b.update");
    uint32_t b_ar = node_named(g, "L1.b.wg.ALLREDUCE");
    CHECK(reads(g, b_f, a_f) && reads(g, b_w, b_f) && reads(g, b_i, b_w) && reads(g, a_w, b_i));
    CHECK(reads(g, b_u, b_ar + 1) && !reads(g, b_i, b_ar + 1));
    CHECK(node_named(g, "L0.a.ig") == UINT32_MAX);
    CHECK_NEAR(g->v.cost_us[b_f], 0.020); /* 40 cycles at 2 GHz */
    CHECK_EQ_U(g->v.group_size[b_ar], 8);
    sb_graph_free(g);
}

static void text_errors(void)
{
    static const struct {
        const char *t, *want;
    } bad[] = {
        {"", "e.txt:1: empty file"},
        {"DATA\n2\na -1 1 NONE 0 1 NONE 0 1 NONE 0 1\n", "e.txt:4: 2 layers announced, 1 given"},
        {"DATA\n1\na -1 1 NONE 0 1 NONE 0 1 NONE 0\n", "e.txt:3: a layer has 12 fields"},
        {"DATA\n1\na -1 1 BROADCAST 0 1 NONE 0 1 NONE 0 1\n", "e.txt:3: field 4 'BROADCAST'"},
        {"DATA\nmany\n", "e.txt:2: expected the number of layers"},
        {"DATA\n1\na -1 -5 NONE 0 1 NONE 0 1 NONE 0 1\n", "e.txt:3: field 3 '-5'"},
    };
    struct sb_import_opts o;
    sb_import_defaults(&o);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct sb_err e = {{0}};
        struct sb_graph *g = sb_astra_text_load_mem("e.txt", bad[i].t, strlen(bad[i].t), &o, &e);
        CHECK(g == NULL);
        CHECK_CONTAINS(e.msg, bad[i].want);
        sb_graph_free(g);
    }
    struct sb_err e;
    CHECK(sb_import_parse(&o, "clock=1", &e) != 0);
    CHECK_CONTAINS(e.msg, "unknown import option 'clock'");
    CHECK(sb_import_parse(&o, "npus=0", &e) != 0);
}

/* ---- Chakra ----------------------------------------------------------------- */

struct et {
    uint8_t *b;
    size_t n, cap;
};

static void put(struct et *t, const ProtobufCMessage *m)
{
    size_t len = protobuf_c_message_get_packed_size(m);
    if (t->n + len + 10 > t->cap)
        t->b = realloc(t->b, t->cap = (t->n + len + 10) * 2);
    size_t v = len;
    do { /* the varint length prefix */
        t->b[t->n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
        v >>= 7;
    } while (v);
    t->n += protobuf_c_message_pack(m, t->b + t->n);
}

static void put_node(struct et *t, uint64_t id, const char *name, int type, const uint64_t *deps,
                     size_t n_deps, uint64_t dur, int64_t ops, int64_t bytes, int64_t comm_type)
{
    ChakraProtoMsg__Node x = CHAKRA_PROTO_MSG__NODE__INIT;
    ChakraProtoMsg__AttributeProto a[4], *ap[4];
    size_t k = 0;
    x.id = id, x.name = (char *)name, x.type = type, x.duration_micros = dur;
    x.data_deps = (uint64_t *)deps, x.n_data_deps = n_deps;
    const char *names[4] = {"num_ops", "tensor_size", "comm_type", "comm_size"};
    int64_t vals[4] = {ops, bytes, comm_type, bytes};
    for (int i = 0; i < 4; i++)
        if (vals[i] >= 0 && (i < 2 || comm_type >= 0)) {
            chakra_proto_msg__attribute_proto__init(&a[k]);
            a[k].name = (char *)names[i];
            a[k].value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT64_VAL;
            a[k].int64_val = vals[i];
            ap[k] = &a[k], k++;
        }
    x.attr = ap, x.n_attr = k;
    put(t, &x.base);
}

/* Ids out of order, a dependency on a later id and one on an absent node:
 *   meta; 7 "c" COMP reads 5 and 99 (absent: dropped); 5 "b" COLL all_gather
 *   of 4096 bytes reads 3; 3 "a" COMP, 989e6 ops and 3350 bytes.
 * Order: a, then b (start, done), then c, which reads b's done.
 * a's roofline: 989e6 ops at 989 TFLOP/s = 1 us; 3350 bytes at 3350 GB/s =
 * 0.001 us; the larger, 1 us.  c has a recorded 12 us. */
static void chakra_order(void)
{
    struct et t = {0};
    ChakraProtoMsg__GlobalMetadata meta = CHAKRA_PROTO_MSG__GLOBAL_METADATA__INIT;
    meta.version = "0.0.4";
    put(&t, &meta.base);
    uint64_t dc[2] = {5, 99}, db[1] = {3};
    put_node(&t, 7, "c", CHAKRA_PROTO_MSG__NODE_TYPE__COMP_NODE, dc, 2, 12, -1, -1, -1);
    put_node(&t, 5, "b", CHAKRA_PROTO_MSG__NODE_TYPE__COMM_COLL_NODE, db, 1, 0, -1, 4096,
             CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__ALL_GATHER);
    put_node(&t, 3, "a", CHAKRA_PROTO_MSG__NODE_TYPE__COMP_NODE, NULL, 0, 0, 989000000, 3350, -1);
    struct sb_import_opts o;
    struct sb_err e;
    sb_import_defaults(&o);
    struct sb_graph *g = sb_chakra_load_mem("t.et", t.b, t.n, &o, &e);
    CHECK(g != NULL);
    if (g) {
        CHECK_EQ_U(g->v.n_nodes, 4);
        uint32_t a = node_named(g, "a#3"), b = node_named(g, "b#5"), c = node_named(g, "c#7");
        CHECK(a == 0 && b == 1 && c == 3);
        CHECK_EQ_U(g->v.kind[2], SB_KIND_DONE);
        CHECK(reads(g, c, 2) && g->v.pred_off[c + 1] - g->v.pred_off[c] == 1);
        CHECK_NEAR(g->v.cost_us[a], 1.0);
        CHECK_NEAR(g->v.cost_us[c], 12.0);
        CHECK_EQ_U(g->v.coll[b], SB_COLL_ALL_GATHER);
        CHECK_EQ_U(g->v.comm_bytes[b], 4096);
        CHECK_EQ_U(g->v.out_bytes[a], 3350);
        CHECK(sb_graph_meta(g, "tensor_sizes") == NULL);
        sb_graph_free(g);
    } else {
        fprintf(stderr, "%s\n", e.msg);
    }
    /* a cycle: 3 reads 5, 5 reads 3 */
    struct et u = {0};
    put(&u, &meta.base);
    uint64_t d3[1] = {5}, d5[1] = {3};
    put_node(&u, 3, "x", CHAKRA_PROTO_MSG__NODE_TYPE__COMP_NODE, d3, 1, 1, -1, -1, -1);
    put_node(&u, 5, "y", CHAKRA_PROTO_MSG__NODE_TYPE__COMP_NODE, d5, 1, 1, -1, -1, -1);
    g = sb_chakra_load_mem("c.et", u.b, u.n, &o, &e);
    CHECK(g == NULL);
    CHECK_CONTAINS(e.msg, "c.et: the dependencies form a cycle");
    /* truncated: the last record's length runs past the end */
    g = sb_chakra_load_mem("c.et", u.b, u.n - 3, &o, &e);
    CHECK(g == NULL);
    CHECK_CONTAINS(e.msg, "c.et: message 2 at byte");
    /* an unterminated varint */
    static const uint8_t v[] = {0xff, 0xff};
    g = sb_chakra_load_mem("v.et", v, sizeof v, &o, &e);
    CHECK(g == NULL);
    CHECK_CONTAINS(e.msg, "v.et: message 0 at byte 0: truncated");
    /* an unknown node type */
    struct et w = {0};
    put(&w, &meta.base);
    put_node(&w, 1, "z", 42, NULL, 0, 1, -1, -1, -1);
    g = sb_chakra_load_mem("w.et", w.b, w.n, &o, &e);
    CHECK(g == NULL);
    CHECK_CONTAINS(e.msg, "w.et: node id 1 'z': unknown node type 42");
    free(t.b), free(u.b), free(w.b);
}

/* A node name of 10,000 bytes reaches the graph whole (the importer once cut
 * "name#id" at 299 bytes, merging PyTorch's long kernel names), and survives
 * format v1 written and read back.  Two nodes whose names differ only past
 * byte 300 stay two nodes. */
static void chakra_long_names(void)
{
    size_t n = 10000;
    char *a = malloc(n + 1), *b = malloc(n + 1);
    for (size_t i = 0; i < n; i++)
        a[i] = b[i] = (char)('a' + i % 26);
    a[n] = b[n] = 0;
    b[n - 1] = '!';
    struct et t = {0};
    ChakraProtoMsg__GlobalMetadata meta = CHAKRA_PROTO_MSG__GLOBAL_METADATA__INIT;
    meta.version = "0.0.4";
    put(&t, &meta.base);
    uint64_t d[1] = {1};
    put_node(&t, 1, a, CHAKRA_PROTO_MSG__NODE_TYPE__COMP_NODE, NULL, 0, 3, -1, -1, -1);
    put_node(&t, 2, b, CHAKRA_PROTO_MSG__NODE_TYPE__COMP_NODE, d, 1, 4, -1, -1, -1);
    struct sb_import_opts o;
    struct sb_err e;
    sb_import_defaults(&o);
    struct sb_graph *g = sb_chakra_load_mem("long.et", t.b, t.n, &o, &e);
    CHECK(g != NULL);
    char *want = sb_strf("%s#2", b);
    if (g) {
        CHECK_EQ_U(g->v.n_nodes, 2);
        CHECK(!strcmp(g->v.names + g->v.name_off[1], want));
        char dir[] = "/tmp/sb_traces_XXXXXX";
        CHECK(mkdtemp(dir) != NULL);
        char *path = sb_strf("%s/long.csv", dir);
        CHECK(sb_graph_write(g, path, &e) == 0);
        struct sb_graph *h = sb_graph_load(path, &e);
        CHECK(h != NULL && !strcmp(h->v.names + h->v.name_off[1], want));
        sb_graph_free(h);
        unlink(path);
        rmdir(dir);
        free(path);
    }
    sb_graph_free(g);
    free(want), free(a), free(b), free(t.b);
}

/* A node with control dependencies and integer attributes (name, value). */
static void put_ctl(struct et *t, uint64_t id, const char *name, int type, const uint64_t *data,
                    size_t n_data, const uint64_t *ctrl, size_t n_ctrl, uint64_t dur,
                    const char *const *an, const int64_t *av, size_t n_attr)
{
    ChakraProtoMsg__Node x = CHAKRA_PROTO_MSG__NODE__INIT;
    ChakraProtoMsg__AttributeProto a[8], *ap[8];
    x.id = id, x.name = (char *)name, x.type = type, x.duration_micros = dur;
    x.data_deps = (uint64_t *)data, x.n_data_deps = n_data;
    x.ctrl_deps = (uint64_t *)ctrl, x.n_ctrl_deps = n_ctrl;
    for (size_t i = 0; i < n_attr; i++) {
        chakra_proto_msg__attribute_proto__init(&a[i]);
        a[i].name = (char *)an[i];
        a[i].value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT64_VAL;
        a[i].int64_val = av[i];
        ap[i] = &a[i];
    }
    x.attr = ap, x.n_attr = n_attr;
    put(t, &x.base);
}

/* Issue 22.  Trace: 1 "a" COMP; 2 "b" COMP with data_deps {1} and ctrl_deps
 * {ctl}; 3 "h" COMM_COLL on the CPU (is_cpu_op, no comm_type, 7 us); 4 "g"
 * COMM_COLL all-gather of 100 bytes per rank, no process group. */
static struct sb_graph *ctl_trace(uint64_t ctl, const char *opts, struct sb_err *e)
{
    struct et t = {0};
    ChakraProtoMsg__GlobalMetadata meta = CHAKRA_PROTO_MSG__GLOBAL_METADATA__INIT;
    put(&t, &meta.base);
    uint64_t d1[1] = {1}, c[1] = {ctl}, d2[1] = {2};
    static const char *const cpu_n[] = {"is_cpu_op"}, *const ag_n[] = {"comm_type", "comm_size"};
    static const int64_t cpu_v[] = {1}, ag_v[] = {CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__ALL_GATHER, 100};
    put_ctl(&t, 1, "a", CHAKRA_PROTO_MSG__NODE_TYPE__COMP_NODE, NULL, 0, NULL, 0, 5, NULL, NULL, 0);
    put_ctl(&t, 2, "b", CHAKRA_PROTO_MSG__NODE_TYPE__COMP_NODE, d1, 1, c, 1, 5, NULL, NULL, 0);
    put_ctl(&t, 3, "h", CHAKRA_PROTO_MSG__NODE_TYPE__COMM_COLL_NODE, d2, 1, NULL, 0, 7, cpu_n,
            cpu_v, 1);
    put_ctl(&t, 4, "g", CHAKRA_PROTO_MSG__NODE_TYPE__COMM_COLL_NODE, d2, 1, NULL, 0, 0, ag_n,
            ag_v, 2);
    struct sb_import_opts o;
    sb_import_defaults(&o);
    if (opts)
        SB_ASSERT(sb_import_parse(&o, opts, e) == 0);
    struct sb_graph *g = sb_chakra_load_mem("ctl.et", t.b, t.n, &o, e);
    free(t.b);
    return g;
}

static void chakra_ctrl_and_host(void)
{
    struct sb_err e = {{0}};
    /* by default ctrl_deps are not edges, whatever they name: b reads a only */
    struct sb_graph *g = ctl_trace(99, NULL, &e);
    CHECK(g != NULL);
    if (g) {
        uint32_t b = node_named(g, "b#2"), h = node_named(g, "h#3"), ag = node_named(g, "g#4");
        CHECK_EQ_U(g->v.pred_off[b + 1] - g->v.pred_off[b], 1);
        /* the host side of a collective is compute for its duration */
        CHECK_EQ_U(g->v.kind[h], SB_KIND_COMPUTE);
        CHECK_NEAR(g->v.cost_us[h], 7.0);
        /* one collective: g; no group, one rank file: 100 bytes over 1 rank */
        CHECK_EQ_U(sb_graph_n_collectives(g), 1);
        CHECK_EQ_U(g->v.comm_bytes[ag], 100);
        sb_graph_free(g);
    }
    /* --import npus=4: the all-gather spans the 4 ranks, each giving 100 bytes */
    g = ctl_trace(99, "npus=4", &e);
    CHECK(g != NULL);
    if (g) {
        uint32_t ag = node_named(g, "g#4");
        CHECK_EQ_U(g->v.comm_bytes[ag], 400);
        CHECK_EQ_U(g->v.group_size[ag], 4);
        sb_graph_free(g);
    }
    /* ctrl_deps=1: an earlier node is an edge; itself, an absent id or a
     * later node is refused with the node id */
    g = ctl_trace(1, "ctrl_deps=1", &e);
    CHECK(g != NULL);
    sb_graph_free(g);
    CHECK(ctl_trace(2, "ctrl_deps=1", &e) == NULL);
    CHECK_CONTAINS(e.msg, "ctl.et: node id 2 'b' depends on itself (ctrl_deps): a cycle");
    CHECK(ctl_trace(77, "ctrl_deps=1", &e) == NULL);
    CHECK_CONTAINS(e.msg, "node id 2 'b': ctrl_deps names node id 77, which the trace does not");
    CHECK(ctl_trace(4, "ctrl_deps=1", &e) == NULL);
    CHECK_CONTAINS(e.msg, "node id 2 'b': ctrl_deps names node id 4, a later node");
    /* a node that depends on itself through data_deps is a cycle, not a
     * dropped edge */
    struct et t = {0};
    ChakraProtoMsg__GlobalMetadata meta = CHAKRA_PROTO_MSG__GLOBAL_METADATA__INIT;
    put(&t, &meta.base);
    uint64_t self[1] = {5};
    put_ctl(&t, 5, "s", CHAKRA_PROTO_MSG__NODE_TYPE__COMP_NODE, self, 1, NULL, 0, 1, NULL, NULL, 0);
    struct sb_import_opts o;
    sb_import_defaults(&o);
    CHECK(sb_chakra_load_mem("self.et", t.b, t.n, &o, &e) == NULL);
    CHECK_CONTAINS(e.msg, "self.et: node id 5 's' depends on itself (data_deps): a cycle");
    free(t.b);
}

/* Memory from the tensor lists ([tensor, storage, offset, num_elem,
 * elem_bytes, device]).  Node 1 reads storage 12 (1000 B on the GPU, read
 * before anything writes it: it existed before the step, pinned) and a CPU
 * tensor (not GPU memory), and writes storage 10 (100 x 4 = 400 B); node 2
 * reads 10 and writes 11 (50 x 4 = 200 B); node 3 reads 11.  Graph, in
 * order: storage#12 (input), a#1, storage#10 (nop after a), b#2,
 * storage#11, c#3.  Memory by position: 1000, 1000, 1400, 1400 (10's last
 * reader is b), 1200, 1200: peak 1400 at position 2. */
static void chakra_storages(void)
{
    struct et t = {0};
    ChakraProtoMsg__GlobalMetadata meta = CHAKRA_PROTO_MSG__GLOBAL_METADATA__INIT;
    put(&t, &meta.base);
    static const char *const in[3] = {"[[7, 12, 0, 250, 4, 'cuda:0'], [8, 13, 0, 9, 4, 'cpu']]",
                                      "[[1, 10, 0, 100, 4, 'cuda:0']]",
                                      "[[2, 11, 0, 50, 4, 'cuda:0']]"};
    static const char *const out[3] = {"[[1, 10, 0, 100, 4, 'cuda:0']]",
                                       "[[2, 11, 0, 50, 4, 'cuda:0']]", "[]"};
    static const char *const name[3] = {"a", "b", "c"};
    for (uint64_t i = 1; i <= 3; i++) {
        ChakraProtoMsg__Node x = CHAKRA_PROTO_MSG__NODE__INIT;
        ChakraProtoMsg__IOInfo io = CHAKRA_PROTO_MSG__IOINFO__INIT, oo = CHAKRA_PROTO_MSG__IOINFO__INIT;
        uint64_t dep = i - 1;
        x.id = i, x.name = (char *)name[i - 1], x.type = CHAKRA_PROTO_MSG__NODE_TYPE__COMP_NODE;
        x.duration_micros = 1;
        x.data_deps = &dep, x.n_data_deps = i > 1;
        io.values = (char *)in[i - 1], oo.values = (char *)out[i - 1];
        x.inputs = &io, x.outputs = &oo;
        put(&t, &x.base);
    }
    struct sb_import_opts o;
    struct sb_err e;
    sb_import_defaults(&o);
    struct sb_graph *g = sb_chakra_load_mem("st.et", t.b, t.n, &o, &e);
    CHECK(g != NULL);
    if (g) {
        static const char *const want[6] = {"storage#12", "a#1", "storage#10", "b#2",
                                            "storage#11", "c#3"};
        CHECK_EQ_U(g->v.n_nodes, 6);
        for (uint32_t v = 0; v < 6 && v < g->v.n_nodes; v++)
            CHECK(!strcmp(g->v.names + g->v.name_off[v], want[v]));
        CHECK(sb_graph_meta(g, "tensor_sizes") == NULL);
        uint32_t order[6] = {0, 1, 2, 3, 4, 5}, peak_pos;
        uint64_t mem[6];
        CHECK_EQ_U(sb_mem_profile(&g->v, order, 6, mem, &peak_pos), 1400);
        CHECK_EQ_U(peak_pos, 2);
        CHECK_EQ_U(mem[5], 1200);
        sb_graph_free(g);
    } else {
        fprintf(stderr, "%s\n", e.msg);
    }
    free(t.b);
}

/* ---- several ranks (chakra.md, "Several ranks") ------------------------------ */

/* Rank r of the two-rank job of tests/data/ranks2.{0,1}.et: node 1 "a"
 * computes, node 2 "ar" all-reduces 1000 bytes after it (no pg_name: every
 * rank), node 3 "b" computes after the all-reduce.
 *             a     ar (recorded)  b
 *   rank 0   10 us    5 us        20 us
 *   rank 1   30 us    8 us         2 us
 * bad = 1: rank 1's collective is an all-gather; bad = 2: rank 1 has a
 * second all-reduce (node 4, after b). */
static struct et rank_trace(int r, int bad)
{
    struct et t = {0};
    ChakraProtoMsg__GlobalMetadata meta = CHAKRA_PROTO_MSG__GLOBAL_METADATA__INIT;
    meta.version = "0.0.4";
    put(&t, &meta.base);
    uint64_t d1[1] = {1}, d2[1] = {2}, d3[1] = {3};
    int coll = r == 1 && bad == 1 ? CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__ALL_GATHER
                                  : CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__ALL_REDUCE;
    put_node(&t, 1, "a", CHAKRA_PROTO_MSG__NODE_TYPE__COMP_NODE, NULL, 0, r ? 30 : 10, -1, -1,
             -1);
    put_node(&t, 2, "ar", CHAKRA_PROTO_MSG__NODE_TYPE__COMM_COLL_NODE, d1, 1, r ? 8 : 5, -1,
             1000, coll);
    put_node(&t, 3, "b", CHAKRA_PROTO_MSG__NODE_TYPE__COMP_NODE, d2, 1, r ? 2 : 20, -1, -1, -1);
    if (r == 1 && bad == 2)
        put_node(&t, 4, "ar2", CHAKRA_PROTO_MSG__NODE_TYPE__COMM_COLL_NODE, d3, 1, 8, -1, 1000,
                 CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__ALL_REDUCE);
    return t;
}

static int write_bytes(const char *path, const struct et *t);

/* A collective of process group pg (pg_name) reading deps. */
static void put_pg_coll(struct et *t, uint64_t id, const char *name, const uint64_t *deps,
                        size_t n_deps, int comm_type, const char *pg)
{
    ChakraProtoMsg__Node x = CHAKRA_PROTO_MSG__NODE__INIT;
    ChakraProtoMsg__AttributeProto a[3], *ap[3];
    for (int i = 0; i < 3; i++)
        chakra_proto_msg__attribute_proto__init(&a[i]), ap[i] = &a[i];
    a[0].name = "comm_type", a[0].value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT64_VAL;
    a[0].int64_val = comm_type;
    a[1].name = "comm_size", a[1].value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT64_VAL;
    a[1].int64_val = 1000;
    a[2].name = "pg_name", a[2].value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_STRING_VAL;
    a[2].string_val = (char *)pg;
    x.id = id, x.name = (char *)name, x.type = CHAKRA_PROTO_MSG__NODE_TYPE__COMM_COLL_NODE;
    x.duration_micros = 4, x.data_deps = (uint64_t *)deps, x.n_data_deps = n_deps;
    x.attr = ap, x.n_attr = 3;
    put(t, &x.base);
}

/* Two ranks, two process groups "x" and "y" (no group file: every rank in
 * each), issued in opposite orders: rank 0 x then y, rank 1 y then x, each
 * after the other.  Rank 0 cannot pass x before rank 1 reaches x, which
 * rank 1 does only after y, which rank 0 reaches only after x: a deadlock. */
static int write_crossed(const char *prefix)
{
    int rc = 0;
    for (int r = 0; r < 2 && !rc; r++) {
        struct et t = {0};
        ChakraProtoMsg__GlobalMetadata meta = CHAKRA_PROTO_MSG__GLOBAL_METADATA__INIT;
        meta.version = "0.0.4";
        put(&t, &meta.base);
        uint64_t d1[1] = {1};
        put_pg_coll(&t, 1, "c1", NULL, 0, CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__ALL_REDUCE,
                    r ? "y" : "x");
        put_pg_coll(&t, 2, "c2", d1, 1, CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__ALL_REDUCE,
                    r ? "x" : "y");
        char *path = sb_strf("%s.%d.et", prefix, r);
        rc = write_bytes(path, &t);
        free(path);
        free(t.b);
    }
    return rc;
}

static int write_bytes(const char *path, const struct et *t)
{
    FILE *f = fopen(path, "wb");
    int ok = f && fwrite(t->b, 1, t->n, f) == t->n;
    return (f && fclose(f) != 0) || !ok ? -1 : 0;
}

/* Writes the rank files (prefix.0.et, prefix.1.et) of variant bad. */
static int write_ranks(const char *prefix, int bad)
{
    int rc = 0;
    for (int r = 0; r < 2 && !rc; r++) {
        struct et t = rank_trace(r, bad);
        char *path = sb_strf("%s.%d.et", prefix, r);
        rc = write_bytes(path, &t);
        free(path);
        free(t.b);
    }
    return rc;
}

static struct sb_graph *load_ranks(const char *pattern, struct sb_err *e)
{
    struct sb_import_opts o;
    sb_import_defaults(&o);
    return sb_graph_load_with(pattern, &o, e);
}

/* The joined all-reduce begins when the later rank issues its start
 * (docs/machines.md, "Joined collectives") and each rank's copy runs its
 * own recorded time:
 *   rank 0: a 0..10, issues its start at 10;  rank 1: a 0..30, at 30;
 *   the collective begins on both at max(10, 30) = 30; rank 0's copy runs
 *   30..35, rank 1's 30..38; each leave follows its own done: rank 0's b
 *   35..55, rank 1's b 38..40.  Makespan 55 (each rank alone: 10+5+20 = 35
 *   and 30+8+2 = 40).  Exposed: rank 0's done waits 10..35, rank 1's
 *   30..38: 25 + 8 = 33 us. */
static void chakra_ranks(void)
{
    /* the committed files are what rank_trace writes */
    for (int r = 0; r < 2; r++) {
        struct et t = rank_trace(r, 0);
        char *path = sb_strf("%s/ranks2.%d.et", SB_TEST_DATA, r);
        size_t n = 0;
        struct sb_err e;
        char *got = sb_read_file_limited(path, 1 << 20, &n, &e);
        CHECK(got && n == t.n && !memcmp(got, t.b, n));
        free(got), free(path), free(t.b);
    }
    struct sb_err e;
    struct sb_graph *g = load_ranks(SB_TEST_DATA "/ranks2.%d.et", &e);
    CHECK(g != NULL);
    if (!g)
        return fprintf(stderr, "%s\n", e.msg), (void)0;
    /* per rank a, arrive, start, done, leave, b */
    CHECK_EQ_U(g->v.n_nodes, 12);
    CHECK(!strcmp(g->name, "ranks2"));
    CHECK(!strcmp(sb_graph_meta(g, "devices"), "2"));
    uint32_t s0 = node_named(g, "r0/ar#2"), s1 = node_named(g, "r1/ar#2");
    uint32_t b0 = node_named(g, "r0/b#3"), b1 = node_named(g, "r1/b#3");
    uint32_t l0 = node_named(g, "r0/ar#2.leave"), a1 = node_named(g, "r1/ar#2.arrive");
    CHECK(s0 != UINT32_MAX && s1 != UINT32_MAX && b0 != UINT32_MAX && b1 != UINT32_MAX);
    CHECK(l0 != UINT32_MAX && a1 != UINT32_MAX);
    if (s0 == UINT32_MAX || s1 == UINT32_MAX || b0 == UINT32_MAX || b1 == UINT32_MAX) {
        sb_graph_free(g);
        return;
    }
    CHECK(g->v.device[s0] == 0 && g->v.device[s1] == 1 && g->v.device[b1] == 1);
    CHECK_EQ_U(g->v.group_size[s0], 2); /* no pg_name: every rank */
    CHECK(reads(g, b0, l0) && !reads(g, s0, a1)); /* b reads the leave; no edge between ranks */
    CHECK(g->v.join && g->v.join[s0] == s1 && g->v.join[s1] == s0);
    struct sb_cost_params cp;
    sb_cost_defaults(&cp);
    sb_cost_apply(&cp, g);
    struct sb_machine *m = NULL;
    CHECK(sb_machine_of_graph(g, &m, &e) == 0 && m != NULL);
    CHECK_EQ_U(g->v.machine->n_devices, 2);
    struct sb_schedule s;
    sb_schedule_init(&s, g, g->v.machine->n_devices);
    for (uint32_t v = 0; v < g->v.n_nodes; v++)
        s.order[v] = v;
    CHECK(sb_schedule_validate(&g->v, &s, &e) == 0);
    struct sb_sim_config c;
    struct sb_sim_result res;
    sb_sim_defaults(&c);
    c.record = 1;
    sb_sim_run(g, &s, &c, &res);
    CHECK_NEAR(res.makespan_us, 55);
    CHECK_NEAR(res.exposed_comm_us, 33);
    CHECK_NEAR(res.coll_begin_us[s0], 30);
    CHECK_NEAR(res.coll_begin_us[s1], 30);
    CHECK_NEAR(res.coll_end_us[s0], 35);
    CHECK_NEAR(res.coll_end_us[s1], 38);
    CHECK_NEAR(res.begin_us[b0], 35);
    CHECK_NEAR(res.end_us[b1], 40);
    CHECK_EQ_U(res.n_transfers, 0);
    sb_sim_result_free(&res);
    /* every node of rank 0 before any of rank 1: rank 0's done comes before
     * rank 1's start in the order, and the replay still meets them there */
    uint32_t k = 0;
    for (int32_t d = 0; d < 2; d++)
        for (uint32_t v = 0; v < g->v.n_nodes; v++)
            if (g->v.device[v] == d)
                s.order[k++] = v;
    CHECK(sb_schedule_validate(&g->v, &s, &e) == 0);
    sb_sim_run(g, &s, &c, &res);
    CHECK_NEAR(res.makespan_us, 55);
    CHECK_NEAR(res.coll_begin_us[s0], 30);
    CHECK_NEAR(res.begin_us[b0], 35);
    sb_sim_result_free(&res);
    sb_schedule_free(&s);
    sb_machine_free(m);
    sb_graph_free(g);

    /* refusals: a type that differs, a count that differs, no rank files */
    char prefix[600];
    snprintf(prefix, sizeof prefix, "%s/ranks_bad", SB_TEST_TMP);
    CHECK(write_ranks(prefix, 1) == 0);
    char pattern[700];
    snprintf(pattern, sizeof pattern, "%s.%%d.et", prefix);
    g = load_ranks(pattern, &e);
    CHECK(g == NULL);
    CHECK_CONTAINS(e.msg, "ranks_bad.1.et: node id 2 'ar': the 1st collective of process "
                          "group '(none: every rank)' is ALL_GATHER of 1000 bytes here, but "
                          "ALL_REDUCE of 1000 bytes in");
    sb_graph_free(g);
    CHECK(write_ranks(prefix, 2) == 0);
    g = load_ranks(pattern, &e);
    CHECK(g == NULL);
    CHECK_CONTAINS(e.msg, "ranks_bad.1.et: node id 4 'ar2': collective 2 of process group");
    CHECK_CONTAINS(e.msg, "ranks_bad.0.et has only 1");
    sb_graph_free(g);
    CHECK(write_crossed(prefix) == 0);
    g = load_ranks(pattern, &e);
    CHECK(g == NULL);
    CHECK_CONTAINS(e.msg, "ranks_bad.0.et: node id 1 'c1': the ranks deadlock here");
    sb_graph_free(g);
    for (int r = 0; r < 2; r++) {
        char *path = sb_strf("%s.%d.et", prefix, r);
        remove(path);
        free(path);
    }
    g = load_ranks(pattern, &e);
    CHECK(g == NULL);
    CHECK_CONTAINS(e.msg, "no rank files");
}

/* One rank of tests/gen_chakra_job.py's job: compute c0, then n_colls times
 * an all-reduce of 1000 bytes over every rank (no pg_name) and a compute
 * node, each node reading the one before. */
static struct et same_program(uint32_t n_colls)
{
    struct et t = {0};
    ChakraProtoMsg__GlobalMetadata meta = CHAKRA_PROTO_MSG__GLOBAL_METADATA__INIT;
    meta.version = "0.0.4";
    put(&t, &meta.base);
    put_node(&t, 1, "c0", CHAKRA_PROTO_MSG__NODE_TYPE__COMP_NODE, NULL, 0, 1, -1, -1, -1);
    for (uint64_t c = 1; c <= n_colls; c++) {
        uint64_t d1 = 2 * c - 1, d2 = 2 * c;
        put_node(&t, 2 * c, "ar", CHAKRA_PROTO_MSG__NODE_TYPE__COMM_COLL_NODE, &d1, 1, 2, -1,
                 1000, CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__ALL_REDUCE);
        put_node(&t, 2 * c + 1, "c", CHAKRA_PROTO_MSG__NODE_TYPE__COMP_NODE, &d2, 1, 1, -1, -1,
                 -1);
    }
    return t;
}

static struct sb_graph *same_job(uint32_t n_ranks, uint32_t n_colls, struct sb_err *e)
{
    struct et t = same_program(n_colls);
    const uint8_t *buf[256];
    size_t len[256];
    for (uint32_t r = 0; r < n_ranks; r++)
        buf[r] = t.b, len[r] = t.n;
    struct sb_import_opts o;
    sb_import_defaults(&o);
    struct sb_graph *g = sb_chakra_load_ranks_mem(SB_TEST_TMP "/same.%d.et", n_ranks, buf, len,
                                                  &o, e);
    free(t.b);
    return g;
}

/* The joins take no edges between ranks (graph.h, `join`: the simulator
 * meets the members' starts).  Per rank and collective: the arrive (an after
 * edge on the compute before it), the start (that compute's data, and its
 * rank's arrive), the done (the start), the leave (the done), the next
 * compute (the leave): 6 edges; nodes 1 + 5 per collective.  So R ranks and
 * C collectives: R (1 + 5C) nodes and 6RC edges, each start in a cycle of R
 * members.
 *   R = 2, C = 3: 32 nodes, 36 edges.
 *   R = 256, C = 200, which took 26 million after edges (840 MB) when every
 *   member's start waited for every member's arrive: 256 * 1001 = 256,256
 *   nodes, 307,200 edges. */
static uint32_t join_members(const struct sb_graph *g, uint32_t v)
{
    uint32_t n = 1;
    for (uint32_t m = g->v.join[v]; m != v; m = g->v.join[m])
        n++;
    return n;
}

static void chakra_join_edges(void)
{
    struct sb_err e;
    struct sb_graph *g = same_job(2, 3, &e);
    CHECK(g != NULL);
    if (g) {
        CHECK_EQ_U(g->v.n_nodes, 32);
        CHECK_EQ_U(g->v.pred_off[g->v.n_nodes], 36);
        CHECK(g->v.join != NULL);
        uint32_t starts = 0;
        for (uint32_t v = 0; g->v.join && v < g->v.n_nodes; v++)
            if (g->v.kind[v] == SB_KIND_START) {
                starts++;
                CHECK_EQ_U(join_members(g, v), 2);
                CHECK(g->v.device[g->v.join[v]] != g->v.device[v]);
            }
        CHECK_EQ_U(starts, 6);
    }
    sb_graph_free(g);
    g = same_job(256, 200, &e);
    CHECK(g != NULL);
    if (g) {
        CHECK_EQ_U(g->v.n_nodes, 256256);
        CHECK_EQ_U(g->v.pred_off[g->v.n_nodes], 307200);
        for (uint32_t v = 0; v < g->v.n_nodes; v++)
            if (g->v.kind[v] == SB_KIND_START) {
                CHECK_EQ_U(join_members(g, v), 256);
                break;
            }
    } else {
        fprintf(stderr, "%s\n", e.msg);
    }
    sb_graph_free(g);
}

/* A send (peer_key "comm_dst") or recv ("comm_src") of 1000 bytes with
 * comm_tag tag and a recorded duration. */
static void put_p2p(struct et *t, uint64_t id, const char *name, int type, const uint64_t *deps,
                    size_t n_deps, uint64_t dur, const char *peer_key, int64_t peer, int64_t tag)
{
    ChakraProtoMsg__Node x = CHAKRA_PROTO_MSG__NODE__INIT;
    ChakraProtoMsg__AttributeProto a[3], *ap[3];
    const char *names[3] = {peer_key, "comm_tag", "comm_size"};
    int64_t vals[3] = {peer, tag, 1000};
    for (int i = 0; i < 3; i++) {
        chakra_proto_msg__attribute_proto__init(&a[i]);
        a[i].name = (char *)names[i];
        a[i].value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT64_VAL;
        a[i].int64_val = vals[i];
        ap[i] = &a[i];
    }
    x.id = id, x.name = (char *)name, x.type = type, x.duration_micros = dur;
    x.data_deps = (uint64_t *)deps, x.n_data_deps = n_deps;
    x.attr = ap, x.n_attr = 3;
    put(t, &x.base);
}

/* Two pipeline stages (issue 36): send and recv matched by peer and tag.
 *   rank 0: f0 (10 us), then a send to rank 1 with tag 7 reading f0 (4 us
 *   recorded), then g0 (5 us) after it in the trace;
 *   rank 1: pre (20 us), a recv from rank 0 with tag 7 reading pre (4 us),
 *   f1 (6 us) reading the recv.
 * Each rank in its trace order: rank 0 issues the send at 10, rank 1 the
 * recv at 20; the transfer begins at 20 on both and ends at 24.  Rank 0's
 * done waits 10..24 (14 us exposed), then g0 24..29; rank 1's done waits
 * 20..24 (4 us), f1 24..30.  Makespan 30, exposed 18.
 * With rank 1's tag 8 the send has no recv: refused, naming the send. */
static struct sb_graph *p2p_job(int64_t tag1, struct sb_err *e)
{
    struct et t[2] = {{0}, {0}};
    ChakraProtoMsg__GlobalMetadata meta = CHAKRA_PROTO_MSG__GLOBAL_METADATA__INIT;
    meta.version = "0.0.4";
    uint64_t d1[1] = {1}, d2[1] = {2};
    put(&t[0], &meta.base);
    put_node(&t[0], 1, "f0", CHAKRA_PROTO_MSG__NODE_TYPE__COMP_NODE, NULL, 0, 10, -1, -1, -1);
    put_p2p(&t[0], 2, "send", CHAKRA_PROTO_MSG__NODE_TYPE__COMM_SEND_NODE, d1, 1, 4, "comm_dst",
            1, 7);
    put_node(&t[0], 3, "g0", CHAKRA_PROTO_MSG__NODE_TYPE__COMP_NODE, d1, 1, 5, -1, -1, -1);
    put(&t[1], &meta.base);
    put_node(&t[1], 1, "pre", CHAKRA_PROTO_MSG__NODE_TYPE__COMP_NODE, NULL, 0, 20, -1, -1, -1);
    put_p2p(&t[1], 2, "recv", CHAKRA_PROTO_MSG__NODE_TYPE__COMM_RECV_NODE, d1, 1, 4, "comm_src",
            0, tag1);
    put_node(&t[1], 3, "f1", CHAKRA_PROTO_MSG__NODE_TYPE__COMP_NODE, d2, 1, 6, -1, -1, -1);
    const uint8_t *buf[2] = {t[0].b, t[1].b};
    size_t len[2] = {t[0].n, t[1].n};
    struct sb_import_opts o;
    sb_import_defaults(&o);
    struct sb_graph *g = sb_chakra_load_ranks_mem(SB_TEST_TMP "/p2p.%d.et", 2, buf, len, &o, e);
    free(t[0].b), free(t[1].b);
    return g;
}

static void chakra_p2p(void)
{
    struct sb_err e;
    struct sb_graph *g = p2p_job(7, &e);
    CHECK(g != NULL);
    if (!g)
        return fprintf(stderr, "%s\n", e.msg), (void)0;
    uint32_t s0 = node_named(g, "r0/send#2"), s1 = node_named(g, "r1/recv#2");
    uint32_t g0 = node_named(g, "r0/g0#3"), f1 = node_named(g, "r1/f1#3");
    CHECK(s0 != UINT32_MAX && s1 != UINT32_MAX && g0 != UINT32_MAX && f1 != UINT32_MAX);
    if (s0 == UINT32_MAX || s1 == UINT32_MAX || g0 == UINT32_MAX || f1 == UINT32_MAX) {
        sb_graph_free(g);
        return;
    }
    CHECK(g->v.join && g->v.join[s0] == s1 && g->v.join[s1] == s0);
    struct sb_cost_params cp;
    sb_cost_defaults(&cp);
    sb_cost_apply(&cp, g);
    struct sb_machine *m = NULL;
    CHECK(sb_machine_of_graph(g, &m, &e) == 0);
    struct sb_schedule s;
    sb_schedule_init(&s, g, g->v.machine->n_devices);
    for (uint32_t v = 0; v < g->v.n_nodes; v++)
        s.order[v] = v;
    CHECK(sb_schedule_validate(&g->v, &s, &e) == 0);
    struct sb_sim_config c;
    struct sb_sim_result res;
    sb_sim_defaults(&c);
    c.record = 1;
    sb_sim_run(g, &s, &c, &res);
    CHECK_NEAR(res.coll_begin_us[s0], 20);
    CHECK_NEAR(res.coll_begin_us[s1], 20);
    CHECK_NEAR(res.coll_end_us[s0], 24);
    CHECK_NEAR(res.coll_end_us[s1], 24);
    CHECK_NEAR(res.begin_us[g0], 24);
    CHECK_NEAR(res.end_us[f1], 30);
    CHECK_NEAR(res.makespan_us, 30);
    CHECK_NEAR(res.exposed_comm_us, 18);
    sb_sim_result_free(&res);
    sb_schedule_free(&s);
    sb_machine_free(m);
    sb_graph_free(g);
    g = p2p_job(8, &e);
    CHECK(g == NULL);
    CHECK_CONTAINS(e.msg, "p2p.0.et: node id 2 'send': a send to rank 1 (tag 7, process group '') "
                          "that " SB_TEST_TMP "/p2p.1.et has no recv for");
    sb_graph_free(g);
}

/* --import astra=1 (docs/ready.md, "ASTRA-sim's reading").  Trace:
 *   1 "cpu" COMP on the CPU (is_cpu_op), 10 us
 *   2 "k1"  COMP on the GPU, 20 us, writes storage 10
 *   3 "ar"  ALL_REDUCE of 1000 bytes after k1, 5 us recorded
 *   4 "k2"  COMP on the GPU after k1, 30 us, reads storage 10
 *   5 "bc"  BROADCAST of 100 bytes after cpu, 7 us recorded
 *   6 "z"   COMP on the GPU after ar, no duration, no num_ops
 *   7 "h"   ALL_REDUCE on the CPU (is_cpu_op with a comm_type), 4 us
 *   8 "k3"  COMP on the GPU, no duration, 5 num_ops
 * ASTRA-sim (Workload.cc issue, issue_comm; HardwareResource.cc) reads it
 * as: no storage node and k2 reading k1 only (data_deps); cpu and h on
 * the CPU slot, k1, k2 and k3 on the GPU slot, ar and bc on the collective
 * slot: three streams; h compute for its 4 us; z done at once (a nop); k3
 * 1 ns; ar priced by the network (no comm_us), bc its recorded 7 us. */
static void put_astra_node(struct et *t, uint64_t id, const char *name, int type, uint64_t dep,
                           uint64_t dur, int cpu, int64_t comm_type, int64_t ops,
                           const char *in, const char *out)
{
    ChakraProtoMsg__Node x = CHAKRA_PROTO_MSG__NODE__INIT;
    ChakraProtoMsg__IOInfo io = CHAKRA_PROTO_MSG__IOINFO__INIT, oo = CHAKRA_PROTO_MSG__IOINFO__INIT;
    ChakraProtoMsg__AttributeProto a[4], *ap[4];
    size_t k = 0;
    const char *an[4] = {"is_cpu_op", "comm_type", "comm_size", "num_ops"};
    int64_t av[4] = {cpu, comm_type, comm_type >= 0 ? 1000 : -1, ops};
    for (int i = 0; i < 4; i++)
        if (av[i] > 0 || (i == 1 && av[i] == 0)) {
            chakra_proto_msg__attribute_proto__init(&a[k]);
            a[k].name = (char *)an[i];
            a[k].value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT64_VAL;
            a[k].int64_val = av[i];
            ap[k] = &a[k], k++;
        }
    x.id = id, x.name = (char *)name, x.type = type, x.duration_micros = dur;
    x.data_deps = &dep, x.n_data_deps = dep != 0;
    x.attr = ap, x.n_attr = k;
    io.values = (char *)in, oo.values = (char *)out;
    x.inputs = in ? &io : NULL, x.outputs = out ? &oo : NULL;
    put(t, &x.base);
}

static struct et astra_trace(int extra_type, int64_t extra_comm)
{
    struct et t = {0};
    ChakraProtoMsg__GlobalMetadata meta = CHAKRA_PROTO_MSG__GLOBAL_METADATA__INIT;
    put(&t, &meta.base);
    const int COMP = CHAKRA_PROTO_MSG__NODE_TYPE__COMP_NODE;
    const int COLL = CHAKRA_PROTO_MSG__NODE_TYPE__COMM_COLL_NODE;
    const int64_t AR = CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__ALL_REDUCE;
    put_astra_node(&t, 1, "cpu", COMP, 0, 10, 1, -1, -1, NULL, NULL);
    put_astra_node(&t, 2, "k1", COMP, 0, 20, 0, -1, -1, "[]", "[[1, 10, 0, 100, 4, 'cuda:0']]");
    put_astra_node(&t, 3, "ar", COLL, 2, 5, 0, AR, -1, NULL, NULL);
    put_astra_node(&t, 4, "k2", COMP, 2, 30, 0, -1, -1, "[[1, 10, 0, 100, 4, 'cuda:0']]", "[]");
    put_astra_node(&t, 5, "bc", COLL, 1, 7, 0, CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__BROADCAST,
                   -1, NULL, NULL);
    put_astra_node(&t, 6, "z", COMP, 3, 0, 0, -1, -1, NULL, NULL);
    put_astra_node(&t, 7, "h", COLL, 0, 4, 1, AR, -1, NULL, NULL);
    put_astra_node(&t, 8, "k3", COMP, 0, 0, 0, -1, 5, NULL, NULL);
    if (extra_type >= 0)
        put_astra_node(&t, 9, "x", extra_type, 0, 3, 0, extra_comm, -1, NULL, NULL);
    return t;
}

static struct sb_graph *astra_load(struct et *t, const char *opts, struct sb_err *e)
{
    struct sb_import_opts o;
    sb_import_defaults(&o);
    SB_ASSERT(sb_import_parse(&o, opts, e) == 0);
    struct sb_graph *g = sb_chakra_load_mem("astra.et", t->b, t->n, &o, e);
    free(t->b);
    return g;
}

static void chakra_astra(void)
{
    struct sb_err e = {{0}};
    struct et t = astra_trace(-1, -1);
    struct sb_graph *g = astra_load(&t, "astra=1", &e);
    CHECK(g != NULL);
    if (!g) {
        fprintf(stderr, "%s\n", e.msg);
        return;
    }
    uint32_t cpu = node_named(g, "cpu#1"), k1 = node_named(g, "k1#2"), ar = node_named(g, "ar#3");
    uint32_t k2 = node_named(g, "k2#4"), bc = node_named(g, "bc#5"), z = node_named(g, "z#6");
    uint32_t h = node_named(g, "h#7"), k3 = node_named(g, "k3#8");
    /* 8 trace nodes, two of them collectives (a start and a done each), no storages */
    CHECK_EQ_U(g->v.n_nodes, 10);
    CHECK(node_named(g, "storage#10") == UINT32_MAX);
    CHECK(!strcmp(sb_graph_meta(g, "tensor_sizes"), "none"));
    CHECK_EQ_U(g->v.pred_off[k2 + 1] - g->v.pred_off[k2], 1);
    CHECK(reads(g, k2, k1));
    CHECK_EQ_U(sb_graph_n_collectives(g), 2);
    CHECK(g->v.comm_us[ar] < 0);
    CHECK_NEAR(g->v.comm_us[bc], 7.0);
    CHECK_EQ_U(g->v.kind[z], SB_KIND_NOP);
    CHECK_EQ_U(g->v.kind[h], SB_KIND_COMPUTE);
    CHECK_NEAR(g->v.cost_us[h], 4.0);
    CHECK(!strcmp(g->v.op_names[g->v.op[h]], "host"));
    CHECK(!strcmp(g->v.op_names[g->v.op[cpu]], "host"));
    CHECK(!strcmp(g->v.op_names[g->v.op[k1]], "comp"));
    CHECK_NEAR(g->v.cost_us[k3], 0.001);
    CHECK_EQ_U(g->v.n_streams, 3);
    CHECK(g->v.stream[cpu] == 0 && g->v.stream[h] == 0);
    CHECK(g->v.stream[k1] == 1 && g->v.stream[k2] == 1 && g->v.stream[k3] == 1);
    CHECK(g->v.stream[ar] == 2 && g->v.stream[g->v.partner[ar]] == 2 && g->v.stream[bc] == 2);
    sb_graph_free(g);
    /* the default reading: a storage edge into k2, h a collective */
    t = astra_trace(-1, -1);
    g = astra_load(&t, "astra=0", &e);
    CHECK(g != NULL);
    if (g) {
        CHECK(node_named(g, "storage#10") != UINT32_MAX);
        uint32_t k2 = node_named(g, "k2#4");
        CHECK_EQ_U(g->v.pred_off[k2 + 1] - g->v.pred_off[k2], 2);
        CHECK_EQ_U(sb_graph_n_collectives(g), 3);
        sb_graph_free(g);
    }
    /* refused: a collective type ASTRA-sim never issues, a GPU metadata
     * node, a memory load, and ctrl_deps=1 with astra=1 */
    t = astra_trace(CHAKRA_PROTO_MSG__NODE_TYPE__COMM_COLL_NODE,
                    CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__REDUCE);
    CHECK(astra_load(&t, "astra=1", &e) == NULL);
    CHECK_CONTAINS(e.msg, "astra.et: node id 9 'x': under --import astra=1, a REDUCE collective");
    t = astra_trace(CHAKRA_PROTO_MSG__NODE_TYPE__METADATA_NODE, -1);
    CHECK(astra_load(&t, "astra=1", &e) == NULL);
    CHECK_CONTAINS(e.msg, "node id 9 'x': under --import astra=1, a node of type 1");
    t = astra_trace(CHAKRA_PROTO_MSG__NODE_TYPE__MEM_LOAD_NODE, -1);
    CHECK(astra_load(&t, "astra=1", &e) == NULL);
    CHECK_CONTAINS(e.msg, "remote-memory backend");
    t = astra_trace(-1, -1);
    CHECK(astra_load(&t, "astra=1,ctrl_deps=1", &e) == NULL);
    CHECK_CONTAINS(e.msg, "does not go with ctrl_deps=1");
}

int main(int argc, char **argv)
{
    /* test_traces --write-ranks PREFIX [BAD]: the rank files of chakra_ranks
     * (tests/data/ranks2, tests/bad/chakra-ranks-mismatch) */
    if (argc >= 3 && !strcmp(argv[1], "--write-ranks"))
        return write_ranks(argv[2], argc > 3 ? atoi(argv[3]) : 0) ? 1 : 0;
    chakra_ranks();
    chakra_astra();
    chakra_join_edges();
    chakra_p2p();
    chakra_storages();
    chakra_ctrl_and_host();
    chakra_long_names();
    text_micro();
    text_data();
    text_errors();
    chakra_order();
    return check_report();
}
