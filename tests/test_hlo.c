#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <time.h>
#include <math.h>
#include <stdlib.h>
/* The HLO text importer (files in tests/data/hlo_cases/, out of the way of
 * `run -w tests/data`): a module with the constructs XLA's scheduler tests
 * use, its graph worked out by hand from workloads/importers/hlo.md, and files
 * that must be refused with the HLO file and line. */
#include "check.h"
#include "core/core.h"
#include "import/import.h"
#include "import/hlo.h"
#include "core/machine.h"

static const char *name_of(const struct sb_graph *g, uint32_t v)
{
    return g->v.names + g->v.name_off[v];
}

static const char *op_of(const struct sb_graph *g, uint32_t v)
{
    return g->v.op_names[g->v.op[v]];
}

/* Space-separated inputs of v, for comparing with the expected list. */
static void inputs(const struct sb_graph *g, uint32_t v, char *buf, size_t n)
{
    buf[0] = 0;
    for (uint32_t e = g->v.pred_off[v]; e < g->v.pred_off[v + 1]; e++)
        snprintf(buf + strlen(buf), n - strlen(buf), "%s%u", e > g->v.pred_off[v] ? " " : "",
                 g->v.pred[e]);
}

/* tests/data/hlo_basic.hlo, row by row:
 *  0 param   input   f32[8] = 32 bytes
 *  1 c       nop     constant bf16[] = 2
 *  2 bc      nop     broadcast bf16[4,2] = 16, reads c
 *  3 start(ag) start all_gather split by AsyncCollectiveCreator: its start is
 *            (f32[8], f32[16]) and defines {} (32+64) and {1} (64) = 160;
 *            payload 64, group {{0,1}} = 2
 *  4 done(ag)  done   reads 3
 *  5 f       loop_fusion 32, reads param twice
 *  6 t       tuple: `run` imports the module as a training step, where a
 *            tuple holds pointers to its elements' buffers and runs no
 *            kernel: a nop of 0 bytes (the conformance build, which keeps
 *            the scheduler tests' sizes, gives it its {} buffer, 64+32 = 96);
 *            reads done(ag), f and, as control predecessor, bc: "4 5 2"
 *  7 g       get-tuple-element: a nop viewing t (alias, no bytes)
 *  8 cps     (f32[8], f32[8], u32[], u32[]): {} 72 plus {1} 32, {2} 4, {3} 4
 *            = 112 ({0} views f); payload 32
 *  9 cpd     done of 8
 * 10 out     ROOT add, reads 9 and 5, flagged output */
static void test_basic(void)
{
    struct sb_err e;
    char buf[64];
    struct sb_graph *g = sb_graph_load(SB_TEST_DATA "/hlo_cases/hlo_basic.hlo", &e);
    if (!g) {
        fprintf(stderr, "%s\n", e.msg);
        CHECK(0);
        return;
    }
    static const char *const names[] = {"param", "c", "bc", "start(ag)", "done(ag)", "f", "t",
                                        "g", "cps", "cpd", "out"};
    static const uint8_t kinds[] = {SB_KIND_INPUT, SB_KIND_NOP, SB_KIND_NOP, SB_KIND_START,
                                    SB_KIND_DONE, SB_KIND_COMPUTE, SB_KIND_NOP,
                                    SB_KIND_NOP, SB_KIND_START, SB_KIND_DONE,
                                    SB_KIND_COMPUTE};
    static const uint64_t bytes[] = {32, 2, 16, 160, 0, 32, 0, 0, 112, 0, 32};
    static const char *const ins[] = {"", "", "1", "0", "3", "0 0", "4 5 2", "6", "5", "8",
                                      "9 5"};
    CHECK_EQ_U(g->v.n_nodes, 11);
    CHECK_EQ_U(g->v.n_edges, 13);
    for (uint32_t v = 0; v < 11 && v < g->v.n_nodes; v++) {
        CHECK(!strcmp(name_of(g, v), names[v]));
        CHECK_EQ_U(g->v.kind[v], kinds[v]);
        CHECK_EQ_U(g->v.out_bytes[v], bytes[v]);
        inputs(g, v, buf, sizeof buf);
        CHECK(!strcmp(buf, ins[v]));
    }
    CHECK_EQ_U(g->v.coll[3], SB_COLL_ALL_GATHER);
    CHECK_EQ_U(g->v.comm_bytes[3], 64);
    CHECK_EQ_U(g->v.group_size[3], 2);
    CHECK_EQ_U(g->v.coll[8], SB_COLL_COLLECTIVE_PERMUTE);
    CHECK_EQ_U(g->v.comm_bytes[8], 32);
    CHECK_EQ_U(g->v.partner[3], 4);
    CHECK(!strcmp(op_of(g, 5), "loop_fusion"));
    CHECK(!strcmp(op_of(g, 3), "all-gather-start"));
    CHECK_EQ_U(g->v.flags[7], SB_FLAG_ALIAS);
    CHECK_EQ_U(g->v.flags[10], SB_FLAG_OUTPUT);
    CHECK(!strcmp(sb_graph_meta(g, "hlo_module"), "basic_module"));
    CHECK(!strcmp(g->name, "hlo_basic")); /* the file stem, as for CSV */
    sb_graph_free(g);
}

/* hlo_while.hlo as a training step: the loop runs 4 times (counter z = 0,
 * compare LT with n = 4, body adds one = 1: ceil((4 - 0) / 1) = 4), each
 * iteration emitted under "w/iterK/".  get-tuple-element of a tuple is the
 * element itself, so the body's x and i are no nodes: x is x0 in iteration 0
 * and the previous iteration's all-reduce after, i is z then the previous j.
 * Rows: 0 x0 input, 1 z nop, 2 init nop (tuple); iteration k from 3 + 5k:
 * start(ar) reads x, done(ar) reads the start, one (nop), j = add(i, one),
 * r = tuple(ar, j) (nop).  y = get-tuple-element(w) is iteration 3's ar: its
 * done (row 19) is the output.  23 rows, 4 all-reduces. */
static void test_while(void)
{
    struct sb_err e;
    char buf[64];
    struct sb_graph *g = sb_graph_load(SB_TEST_DATA "/hlo_cases/hlo_while.hlo", &e);
    if (!g) {
        fprintf(stderr, "%s\n", e.msg);
        CHECK(0);
        return;
    }
    CHECK_EQ_U(g->v.n_nodes, 23);
    CHECK_EQ_U(sb_graph_n_collectives(g), 4);
    for (uint32_t k = 0; k < 4 && g->v.n_nodes == 23; k++) {
        uint32_t b = 3 + 5 * k;
        char want[64];
        snprintf(want, sizeof want, "start(w/iter%u/ar)", k);
        CHECK(!strcmp(name_of(g, b), want));
        snprintf(want, sizeof want, "w/iter%u/j", k);
        CHECK(!strcmp(name_of(g, b + 3), want));
        CHECK_EQ_U(g->v.kind[b], SB_KIND_START);
        CHECK_EQ_U(g->v.comm_bytes[b], 16); /* f32[4] */
        CHECK_EQ_U(g->v.group_size[b], 4);  /* {{0,1,2,3}} */
        inputs(g, b, buf, sizeof buf);
        snprintf(want, sizeof want, "%u", k ? b - 4 : 0); /* x0, then done(ar) */
        CHECK(!strcmp(buf, want));
        inputs(g, b + 3, buf, sizeof buf);
        snprintf(want, sizeof want, "%u %u", k ? b - 2 : 1, b + 2); /* i, one */
        CHECK(!strcmp(buf, want));
        CHECK_EQ_U(g->v.kind[b + 4], SB_KIND_NOP); /* the tuple */
    }
    CHECK_EQ_U(g->v.flags[19], SB_FLAG_OUTPUT);
    /* j adds two s32 scalars: 1 FLOP, 4 + 4 read + 4 written = 12 bytes */
    CHECK(g->flops && g->flops[6] == 1 && g->bytes_accessed[6] == 12);
    sb_graph_free(g);
}

/* The body of the same while, built on its own as the conformance harness
 * does for `computation NAME`: the all-reduce is split in place. */
static void test_computation(void)
{
    struct sb_err e;
    struct sb_hlo_graph hg;
    FILE *f = fopen(SB_TEST_DATA "/hlo_cases/hlo_while.hlo", "rb");
    char buf[4096];
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f)
        fclose(f);
    buf[n] = 0;
    struct sb_hlo_module *m = sb_hlo_parse("hlo_while.hlo", buf, n, &e);
    struct sb_hlo_opts o = {.computation = "body"};
    CHECK(m != NULL);
    if (!m)
        return;
    CHECK(sb_hlo_build(m, &o, &hg, &e) == 0);
    if (hg.g) {
        /* p x i start(ar) done(ar) one j r */
        CHECK_EQ_U(hg.g->v.n_nodes, 8);
        CHECK(!strcmp(name_of(hg.g, 3), "start(ar)"));
        CHECK_EQ_U(hg.node[3].half, 1);
        CHECK_EQ_U(hg.node[4].half, 2);
        CHECK_EQ_U(hg.node[4].instr, 3); /* the all-reduce is instruction 3 */
        CHECK_EQ_U(hg.g->v.out_bytes[3], 16); /* all-reduce-start: its own shape */
        sb_hlo_graph_free(&hg);
    }
    o.computation = "nonesuch";
    CHECK(sb_hlo_build(m, &o, &hg, &e) != 0);
    CHECK_CONTAINS(e.msg, "no computation named 'nonesuch'");
    sb_hlo_free(m);
}

/* Files that must be refused, with the construct and the HLO line. */
static void test_errors(void)
{
    static const struct {
        const char *file, *msg;
    } bad[] = {
        {"hlo_bad_operand.hlo", "hlo_bad_operand.hlo:5: add 'b': unknown operand 'missing'"},
        {"hlo_bad_order.hlo", "hlo_bad_order.hlo:5: add 'b': operand 'c' is defined after "
                              "its use (line 6)"},
        {"hlo_bad_type.hlo", "hlo_bad_type.hlo:4: unknown element type 'f33'"},
        /* the '}' that should close the computation closes the metadata */
        {"hlo_bad_brace.hlo", "hlo_bad_brace.hlo:7: computation 'e' (line 3) is not "
                              "closed by '}' before the end of the file"},
        {"hlo_bad_done.hlo", "hlo_bad_done.hlo:5: all-gather-done 'd': operand 0 must be an "
                             "earlier async start"},
        {"hlo_bad_nodone.hlo", "hlo_bad_nodone.hlo:5: all-gather-start 's' has no done"},
        {"hlo_bad_header.hlo", "hlo_bad_header.hlo:1: expected 'HloModule NAME'"},
        /* issue 39: the attributes group sizes are read from */
        {"hlo_bad_channel.hlo", "hlo_bad_channel.hlo:5: 'b': channel_id 'x1' is not a "
                                "non-negative integer"},
        {"hlo_bad_partitions.hlo", "hlo_bad_partitions.hlo:2: HloModule num_partitions '0' is "
                                   "not an integer in 1..2^31-1"},
        /* the header goes on to line 3, where the second alias lacks its ':' */
        {"hlo_bad_alias.hlo", "hlo_bad_alias.hlo:3: expected ':' after an output index in "
                              "input_output_alias, found '(1, {}) }'"},
        {"no_such_file.hlo", "no_such_file.hlo: cannot open"},
        /* the body never moves the counter: refused with the while's line */
        {"hlo_bad_trip.hlo", "hlo_bad_trip.hlo:18: while 'w': cannot find its trip count "
                             "(no known_trip_count in backend_config, and its body does not "
                             "add a constant to the counter)"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char path[512];
        struct sb_err e;
        snprintf(path, sizeof path, "%s/hlo_cases/%s", SB_TEST_DATA, bad[i].file);
        struct sb_graph *g = sb_graph_load(path, &e);
        CHECK(g == NULL);
        if (g)
            sb_graph_free(g);
        else
            CHECK_CONTAINS(e.msg, bad[i].msg);
    }
}

/* Truncated and empty text is refused, never read past its end. */
static void test_truncated(void)
{
    static const char *const texts[] = {
        "", "HloModule", "HloModule m\nENTRY e {", "HloModule m\nENTRY e {\n a = f32[4",
        "HloModule m\nENTRY e {\n a = f32[4] parameter(0", "HloModule m\nENTRY e { }",
        "HloModule m\nENTRY e {\n a = (f32[4], s32[] parameter(0)\n}",
        "HloModule m\nENTRY e {\n a = f32[4] parameter(0), x=\"unterminated\n}",
    };
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        struct sb_err e;
        struct sb_hlo_module *m = sb_hlo_parse("t.hlo", texts[i], strlen(texts[i]), &e);
        CHECK(m == NULL);
        if (m)
            sb_hlo_free(m);
        else
            CHECK_CONTAINS(e.msg, "t.hlo:");
    }
}

/* Found by fuzz_hlo (issue 14): an error message quoted up to 20 bytes after
 * the parse position, past the end of a buffer that is not NUL-terminated.
 * The buffer here has exactly the text's bytes, so the ASan build catches a
 * read past it. */
static void test_unterminated(void)
{
    static const char text[] = "HloModule m\n\nENTRY main {\n  p = f32[4] parameter(0)\n"
                               "  ROOT r = f32[4] add(p, \n";
    size_t n = sizeof text - 1;
    char *buf = malloc(n);
    memcpy(buf, text, n);
    struct sb_err e;
    struct sb_hlo_module *m = sb_hlo_parse("u.hlo", buf, n, &e);
    CHECK(m == NULL);
    CHECK_CONTAINS(e.msg, "u.hlo:6: expected an operand name in 'add', found ''");
    sb_hlo_free(m);
    free(buf);
}

/* hlo_memory.hlo: XLA's buffer rules in a step build.
 *   0 w  input f32[256] 1024 B: not donated, lives for the step (weight); an
 *        element of the ROOT tuple, so an output too
 *   1 x  input 1024 B: donated to output {0} (input_output_alias (1, {})),
 *        freed after its last reader
 *   2 u  input 64 B, 3 i input 4 B: kept (weights)
 *   4 a  add: 1024 B
 *   5 d  dynamic-update-slice of a: in place, 0 B, views a; a ROOT element
 *   6 r  the ROOT tuple: 0 B, no kernel (nop)
 * Memory in text order: inputs 1024+1024+64+4 = 2116 from the start, a adds
 * 1024 while it runs (x is still live: it is a's input) = 3140, the peak; x
 * is freed after a, a stays (d views it and is an output). */
static void test_memory(void)
{
    struct sb_err e;
    struct sb_import_opts io;
    sb_import_defaults(&io);
    io.no_fuse = 1; /* every instruction its own node (a would fuse into d) */
    struct sb_graph *g = sb_graph_load_with(SB_TEST_DATA "/hlo_cases/hlo_memory.hlo", &io, &e);
    if (!g) {
        fprintf(stderr, "%s\n", e.msg);
        CHECK(0);
        return;
    }
    CHECK_EQ_U(g->v.n_nodes, 7);
    CHECK_EQ_U(g->v.flags[0], SB_FLAG_WEIGHT | SB_FLAG_OUTPUT);
    CHECK_EQ_U(g->v.flags[1], 0);
    CHECK_EQ_U(g->v.flags[2], SB_FLAG_WEIGHT);
    CHECK_EQ_U(g->v.flags[5], SB_FLAG_ALIAS | SB_FLAG_OUTPUT);
    CHECK_EQ_U(g->v.out_bytes[5], 0);
    CHECK_EQ_U(g->v.out_bytes[6], 0);
    CHECK_EQ_U(g->v.kind[6], SB_KIND_NOP);
    /* not is_scheduled: every result row's workload name says so */
    CHECK(!strcmp(g->name, "hlo_memory@text-order"));
    CHECK(sb_graph_meta(g, "hlo_order") != NULL);
    uint32_t order[7] = {0, 1, 2, 3, 4, 5, 6}, pos = 0;
    uint64_t mem[7];
    if (g->v.n_nodes == 7) {
        CHECK_EQ_U(sb_mem_profile(&g->v, order, 7, mem, &pos), 3140);
        CHECK_EQ_U(mem[6], 3140 - 1024); /* x freed after a */
    }
    sb_graph_free(g);
}

/* hlo_roofline.hlo on the built-in H100 SXM (dense BF16 989.4 TFLOP/s, FP32
 * 67, HBM 3,350 GB/s, 2 us per kernel):
 *   c = dot of two bf16[1024,1024]: 2 * 1024^3 = 2,147,483,648 FLOPs, bytes
 *     3 * 2 MiB = 6,291,456; 2147483648 / 989.4e6 FLOP/us = 2.17049 us >
 *     6291456 / 3.35e6 B/us = 1.87805 us, so 2.17049 + 2 = 4.17049 us
 *   y = exp of 2^20 f32: 2^20 transcendentals at the FP32 rate,
 *     1048576 / 67e6 = 0.01565 us < bytes 8 MiB / 3.35e6 B/us = 2.50406 us, so
 *     2.50406 + 2 = 4.50406 us
 * The shipped workloads/machines/h100-sxm.yaml gives the same times. */
static void test_roofline(void)
{
    struct sb_err e;
    struct sb_graph *g = sb_graph_load(SB_TEST_DATA "/hlo_cases/hlo_roofline.hlo", &e);
    if (!g) {
        fprintf(stderr, "%s\n", e.msg);
        CHECK(0);
        return;
    }
    struct sb_cost_params c;
    sb_cost_defaults(&c);
    sb_cost_apply(&c, g);
    CHECK(g->v.n_nodes == 5 && g->dtype[2] == SB_DTYPE_BF16 && g->dtype[4] == SB_DTYPE_FP32);
    CHECK(fabs(g->dur_us[2] - (2147483648.0 / 989.4e6 + 2)) < 1e-9);
    CHECK(fabs(g->dur_us[4] - (8388608.0 / 3.35e6 + 2)) < 1e-9);
    CHECK(fabs(g->dur_us[2] - 4.17049) < 1e-5 && fabs(g->dur_us[4] - 4.50406) < 1e-5);
    CHECK(!strcmp(g->name, "hlo_roofline")); /* is_scheduled: the name is the stem */
    struct sb_machine *m = sb_machine_load(SB_TEST_DATA "/../../workloads/machines/h100-sxm.yaml",
                                           &e);
    CHECK(m != NULL);
    if (m && sb_machine_apply(m, g, &e) == 0) {
        CHECK(fabs(g->v.dev_dur_us[2] - (2147483648.0 / 989.4e6 + 2)) < 1e-9);
        CHECK(fabs(g->v.dev_dur_us[4] - (8388608.0 / 3.35e6 + 2)) < 1e-9);
    }
    /* --cost overrides: half the HBM bandwidth doubles y's memory time */
    CHECK(sb_cost_parse(&c, "hbm_gbps=1675,launch_us=0", &e) == 0);
    sb_cost_apply(&c, g);
    CHECK(fabs(g->dur_us[4] - 8388608.0 / 1.675e6) < 1e-9);
    CHECK(sb_cost_parse(&c, "peak_bf17=3", &e) != 0);
    sb_graph_free(g);
    sb_machine_free(m);
}

/* hlo_groups.hlo: group sizes from {{0,1,2},{3,4,5}} (3), [2,64]<=[128]
 * (2 groups of 64), [64,2]<=[2,64]T(1,0) (64 groups of 2) and [2,4]<=[8]
 * (4); the reduce-scatter is split too and moves its input, f32[8] = 32 B.
 * The while runs known_trip_count = 3 times: 3 negates, w/iter0/r .. iter2/r,
 * each reading the previous one (iteration 0 reads c's done). */
static void test_groups(void)
{
    struct sb_err e;
    struct sb_graph *g = sb_graph_load(SB_TEST_DATA "/hlo_cases/hlo_groups.hlo", &e);
    if (!g) {
        fprintf(stderr, "%s\n", e.msg);
        CHECK(0);
        return;
    }
    static const uint32_t want[4] = {3, 64, 2, 4};
    uint32_t k = 0, negs = 0;
    for (uint32_t v = 0; v < g->v.n_nodes; v++) {
        if (g->v.kind[v] == SB_KIND_START && k < 4) {
            CHECK_EQ_U(g->v.group_size[v], want[k]);
            if (k == 3) {
                CHECK_EQ_U(g->v.coll[v], SB_COLL_REDUCE_SCATTER);
                CHECK_EQ_U(g->v.comm_bytes[v], 32);
            }
            k++;
        }
        if (!strcmp(op_of(g, v), "negate")) {
            char want_name[32];
            snprintf(want_name, sizeof want_name, "w/iter%u/r", negs);
            CHECK(!strcmp(name_of(g, v), want_name));
            negs++;
        }
    }
    CHECK_EQ_U(k, 4);
    CHECK_EQ_U(negs, 3);
    sb_graph_free(g);
}

static uint32_t node_named(const struct sb_graph *g, const char *name)
{
    for (uint32_t v = 0; v < g->v.n_nodes; v++)
        if (!strcmp(name_of(g, v), name))
            return v;
    return SB_NONE;
}

/* Whether node v has an order-only edge from node u. */
static int has_after(const struct sb_graph *g, uint32_t v, uint32_t u)
{
    for (uint32_t e = g->v.pred_off[v]; g->v.pred_after && e < g->v.pred_off[v + 1]; e++)
        if (g->v.pred[e] == u && g->v.pred_after[e])
            return 1;
    return 0;
}

/* hlo_colls.hlo (replica_count=2, num_partitions=4), every collective XLA
 * emits, worked out from XLA's group modes (GetCollectiveOpGroupMode,
 * GetSubgroupSize) and the shapes:
 *   r1  sync ragged-all-to-all, no channel, {}: all replicas = 2; moves its
 *       output bf16[32,64] = 4096 B
 *   rs  async-start of ragged (channel 7: partitions), {{0,1,2,3}}: 4; its
 *       result element bf16[32,64] = 4096 B
 *   b1  sync collective-broadcast, {{0,1}}: 2; f32[256] = 1024 B
 *   bs  async-start of collective-broadcast, channel 8, {{0,1}}: 2, 1024 B
 *   a1  all-reduce, no channel, {}: replicas = 2
 *   a2  channel 1, no use_global_device_ids, {}: replicas x partitions = 8
 *   a3  [2,4]<=[8], use_global_device_ids: 2 groups of 4 = 4
 *   a4  [4,2]<=[2,4]T(1,0), use_global_device_ids: 4 groups of 2 = 2
 *   t1  all-to-all, channel 4, {}: partitions = 4
 *   gs  async-start of all-gather [2,4]<=[8] global ids: 4; f32[256] = 1024 B
 *   as  async-start of all-reduce, channel 12, {}: 2 x 4 = 8
 *   rv/sd  a send/recv pair of channel 9: the recv carries the f32[256] =
 *       1024 B, the send none; rvd waits for sd, sdd for rv (after edges)
 *   s2  a send of channel 10, which no recv has: its own 1024 B */
static void test_collectives(void)
{
    struct sb_err e;
    struct sb_graph *g = sb_graph_load(SB_TEST_DATA "/hlo_cases/hlo_colls.hlo", &e);
    if (!g) {
        fprintf(stderr, "%s\n", e.msg);
        CHECK(0);
        return;
    }
    static const struct {
        const char *name;
        enum sb_coll coll;
        uint32_t group;
        uint64_t bytes;
    } want[] = {
        {"start(r1)", SB_COLL_RAGGED_ALL_TO_ALL, 2, 4096},
        {"rs", SB_COLL_RAGGED_ALL_TO_ALL, 4, 4096},
        {"start(b1)", SB_COLL_COLLECTIVE_BROADCAST, 2, 1024},
        {"bs", SB_COLL_COLLECTIVE_BROADCAST, 2, 1024},
        {"start(a1)", SB_COLL_ALL_REDUCE, 2, 1024},
        {"start(a2)", SB_COLL_ALL_REDUCE, 8, 1024},
        {"start(a3)", SB_COLL_ALL_REDUCE, 4, 1024},
        {"start(a4)", SB_COLL_ALL_REDUCE, 2, 1024},
        {"start(t1)", SB_COLL_ALL_TO_ALL, 4, 1024},
        {"gs", SB_COLL_ALL_GATHER, 4, 1024},
        {"as", SB_COLL_ALL_REDUCE, 8, 1024},
        {"rv", SB_COLL_RECV, 0, 1024},
        {"sd", SB_COLL_SEND, 0, 0},
        {"s2", SB_COLL_SEND, 0, 1024},
    };
    for (size_t k = 0; k < sizeof want / sizeof want[0]; k++) {
        uint32_t v = node_named(g, want[k].name);
        CHECK(v != SB_NONE);
        if (v == SB_NONE)
            continue;
        CHECK_EQ_U(g->v.kind[v], SB_KIND_START);
        CHECK_EQ_U(g->v.coll[v], want[k].coll);
        CHECK_EQ_U(g->v.group_size[v], want[k].group);
        CHECK_EQ_U(g->v.comm_bytes[v], want[k].bytes);
    }
    uint32_t rv = node_named(g, "rv"), sd = node_named(g, "sd");
    uint32_t rvd = node_named(g, "rvd"), sdd = node_named(g, "sdd");
    uint32_t s2 = node_named(g, "s2"), s2d = node_named(g, "s2d");
    CHECK(rvd != SB_NONE && sdd != SB_NONE && s2d != SB_NONE);
    if (rvd != SB_NONE && sdd != SB_NONE && s2d != SB_NONE) {
        CHECK(has_after(g, rvd, sd));
        CHECK(has_after(g, sdd, rv));
        CHECK(!has_after(g, s2d, rv)); /* channel 10 has no recv */
        CHECK(!has_after(g, rvd, s2));
    }
    const char *j = sb_graph_meta(g, "hlo_p2p_joined");
    CHECK(j && !strcmp(j, "1 send/recv pair, 2 rendezvous edges"));
    sb_graph_free(g);
    /* the split broadcast: start reads a, the done stands for b */
    g = sb_graph_load(SB_TEST_DATA "/hlo_cases/hlo_coll_broadcast.hlo", &e);
    CHECK(g != NULL);
    if (g) {
        uint32_t s = node_named(g, "start(b)");
        CHECK(s != SB_NONE && g->v.coll[s] == SB_COLL_COLLECTIVE_BROADCAST &&
              g->v.comm_bytes[s] == 16 && g->v.group_size[s] == 2);
        sb_graph_free(g);
    }
}

/* hlo_queues.hlo, scheduled (is_scheduled=true), fuse=none so each op is a
 * node: streams are the queues (a, e2: 1; b: 2; c, d and the tuple: 0) and
 * d waits for a and b (the last work on queues 1 and 2 before it), e2 for d
 * (queue 0's last) -- 3 order-only edges; queues=none leaves one stream and
 * no edge.  The malformed configs are refused with their line. */
static void test_queues(void)
{
    struct sb_err e;
    struct sb_import_opts io;
    sb_import_defaults(&io);
    CHECK(sb_import_parse(&io, "fuse=none", &e) == 0);
    struct sb_graph *g = sb_graph_load_with(SB_TEST_DATA "/hlo_cases/hlo_queues.hlo", &io, &e);
    if (!g) {
        fprintf(stderr, "%s\n", e.msg);
        CHECK(0);
        return;
    }
    static const struct {
        const char *name;
        uint32_t stream;
    } want[] = {{"a", 1}, {"b", 2}, {"c", 0}, {"d", 0}, {"e2", 1}, {"t", 0}};
    for (size_t k = 0; k < sizeof want / sizeof want[0]; k++) {
        uint32_t v = node_named(g, want[k].name);
        CHECK(v != SB_NONE && g->v.stream[v] == want[k].stream);
    }
    CHECK_EQ_U(g->v.n_streams, 3);
    uint32_t a = node_named(g, "a"), b = node_named(g, "b"), d = node_named(g, "d");
    uint32_t e2 = node_named(g, "e2");
    CHECK(has_after(g, d, a) && has_after(g, d, b) && has_after(g, e2, d));
    uint32_t n_after = 0;
    for (uint32_t k = 0; g->v.pred_after && k < g->v.n_edges; k++)
        n_after += g->v.pred_after[k];
    CHECK_EQ_U(n_after, 3);
    const char *q = sb_graph_meta(g, "hlo_queues");
    CHECK(q && !strcmp(q, "3 queues (streams), 3 wait_on_operation_queues edges"));
    sb_graph_free(g);
    CHECK(sb_import_parse(&io, "queues=none", &e) == 0 && io.no_queues == 1);
    g = sb_graph_load_with(SB_TEST_DATA "/hlo_cases/hlo_queues.hlo", &io, &e);
    CHECK(g != NULL);
    if (g) {
        CHECK(g->v.n_streams <= 1 && g->v.pred_after == NULL);
        sb_graph_free(g);
    }
    static const struct {
        const char *file, *msg;
    } bad[] = {
        {"hlo_bad_queue.hlo", "hlo_bad_queue.hlo:6: 'b': operation_queue_id is not a queue in "
                              "0..1023"},
        {"hlo_bad_wait.hlo", "hlo_bad_wait.hlo:8: 'd': wait_on_operation_queues is not a list "
                             "of queues in 0..1023"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        char path[512];
        snprintf(path, sizeof path, "%s/hlo_cases/%s", SB_TEST_DATA, bad[k].file);
        g = sb_graph_load(path, &e);
        CHECK(g == NULL);
        if (g)
            sb_graph_free(g);
        else
            CHECK_CONTAINS(e.msg, bad[k].msg);
    }
    CHECK(sb_import_parse(&io, "queues=some", &e) != 0);
    CHECK_CONTAINS(e.msg, "import option queues: 'some' is not none or xla");
}

static uint32_t count_op(const struct sb_graph *g, const char *op)
{
    uint32_t n = 0;
    for (uint32_t v = 0; v < g->v.n_nodes; v++)
        n += !strcmp(op_of(g, v), op);
    return n;
}

/* hlo_trip_user.hlo: w's counter doubles, a pattern not recognised, and it
 * has no known_trip_count, so it is refused unless the user gives a count;
 * w2 has known_trip_count 2.  Each iteration of w is one negate, of w2 one
 * sqrt (fuse=none: every op a node):
 *   none given            refused, naming both options
 *   trip_count=7          w 7 (the unknown one), w2 2 (its own count)
 *   trip_count.w=3,trip_count.w2=5   w 3, w2 5 (a named count overrides)
 *   trip_count.nope=3     refused: no such loop */
static void test_user_trips(void)
{
    static const char *path = SB_TEST_DATA "/hlo_cases/hlo_trip_user.hlo";
    static const struct {
        const char *spec;
        uint32_t negs, sqrts;
        const char *err;
    } cases[] = {
        {"fuse=none", 0, 0, "hlo_trip_user.hlo:42: while 'w': cannot find its trip count (no "
                            "known_trip_count in backend_config, and its body does not add a "
                            "constant to the counter); give it with --import trip_count.w=N "
                            "(this loop) or trip_count=N (every such loop)"},
        {"fuse=none,trip_count=7", 7, 2, NULL},
        {"fuse=none,trip_count.w=3,trip_count.w2=5", 3, 5, NULL},
        {"fuse=none,trip_count=0", 0, 2, NULL},
        {"trip_count.nope=3", 0, 0, "hlo_trip_user.hlo: import option trip_count.nope: the "
                                    "module has no while loop of that name"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        struct sb_err e;
        struct sb_import_opts io;
        sb_import_defaults(&io);
        CHECK(sb_import_parse(&io, cases[k].spec, &e) == 0);
        struct sb_graph *g = sb_graph_load_with(path, &io, &e);
        if (cases[k].err) {
            CHECK(g == NULL);
            if (g)
                sb_graph_free(g);
            else
                CHECK_CONTAINS(e.msg, cases[k].err);
            continue;
        }
        CHECK(g != NULL);
        if (!g) {
            fprintf(stderr, "%s: %s\n", cases[k].spec, e.msg);
            continue;
        }
        CHECK_EQ_U(count_op(g, "negate"), cases[k].negs);
        CHECK_EQ_U(count_op(g, "sqrt"), cases[k].sqrts);
        sb_graph_free(g);
    }
    static const struct {
        const char *spec, *err;
    } bad[] = {
        {"trip_count=x", "import option trip_count: 'x' is not a trip count in 0..1000000"},
        {"trip_count=1000001", "import option trip_count: '1000001' is not a trip count"},
        {"trip_count.w=-1", "import option trip_count.w: '-1' is not a trip count"},
        {"trip_count.=3", "import option trip_count.: the loop's name must be 1..255 bytes"},
        {"trip_count.w=1,trip_count.w=2", "import option trip_count.w given twice"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        struct sb_err e;
        struct sb_import_opts io;
        sb_import_defaults(&io);
        CHECK(sb_import_parse(&io, bad[k].spec, &e) != 0);
        CHECK_CONTAINS(e.msg, bad[k].err);
    }
}

/* hlo_async_compute.hlo: the negate fusion XLA put on queue 1, wrapped in
 * async-start, is inlined at the start (node "s/f") on stream 1; the
 * exponential fusion g stays on stream 0; the add reads both (the done is
 * the inlined value).  Built as the conformance harness builds one
 * computation (not a step), an async-start of work that is not a
 * collective is refused: hlo_bad_wrap.hlo. */
static void test_async_compute(void)
{
    struct sb_err e;
    struct sb_graph *g = sb_graph_load(SB_TEST_DATA "/hlo_cases/hlo_async_compute.hlo", &e);
    if (!g) {
        fprintf(stderr, "%s\n", e.msg);
        CHECK(0);
        return;
    }
    uint32_t f = node_named(g, "s/f"), x = node_named(g, "g"), a = node_named(g, "a");
    CHECK(f != SB_NONE && x != SB_NONE && a != SB_NONE);
    if (f != SB_NONE && x != SB_NONE && a != SB_NONE) {
        CHECK_EQ_U(g->v.kind[f], SB_KIND_COMPUTE);
        CHECK_EQ_U(g->v.stream[f], 1);
        CHECK_EQ_U(g->v.stream[x], 0);
        CHECK_EQ_U(g->v.stream[a], 0);
        CHECK_EQ_U(g->v.pred_off[a + 1] - g->v.pred_off[a], 2);
        CHECK(g->v.pred[g->v.pred_off[a]] == x && g->v.pred[g->v.pred_off[a] + 1] == f);
    }
    CHECK_EQ_U(g->v.n_nodes, 4); /* x, s/f, g, a */
    sb_graph_free(g);

    FILE *fp = fopen(SB_TEST_DATA "/hlo_cases/hlo_bad_wrap.hlo", "rb");
    char buf[1024];
    size_t n = fp ? fread(buf, 1, sizeof buf - 1, fp) : 0;
    if (fp)
        fclose(fp);
    buf[n] = 0;
    struct sb_hlo_module *m = sb_hlo_parse("hlo_bad_wrap.hlo", buf, n, &e);
    CHECK(m != NULL);
    if (!m)
        return;
    struct sb_hlo_opts o = {0};
    struct sb_hlo_graph hg;
    CHECK(sb_hlo_build(m, &o, &hg, &e) != 0);
    CHECK_CONTAINS(e.msg, "hlo_bad_wrap.hlo:10: async-start 's' wraps 'add', which is not a "
                          "collective");
    sb_hlo_free(m);
}

/* hlo_dup.hlo: producers with several users (priority fusion duplicates a
 * producer into all its users when each can take it and it pays):
 *   bz = broadcast(z) feeds m1 and m2: inlined into both, each reads z's
 *     4 bytes instead of bz's 4096
 *   cx = convert(x) feeds m1 and m2: k = 2 users, inputs I = x's 2048 B,
 *     output O = 4096 B; k*I = 4096 <= I + O + k*O = 14336, so it is
 *     computed again in both: m1 = {m1, cx, bz}: 1024 (convert) + 1024
 *     (multiply) = 2048 FLOPs, reads x 2048 + z 4, writes 4096: 6148 B,
 *     inputs x and z; m2 the same with add
 *   n1 = negate(d1) feeds a dot (d3) and r5: a dot takes no producer, so n1
 *     keeps its node (no duplication unless every user can take it)
 *   q = add(d1, d2) feeds r1..r4: k = 4, I = 8192, O = 4096; k*I = 32768 >
 *     8192 + 4096 + 16384 = 28672: recomputing it would read more than
 *     writing it once, so q keeps its node and r1..r4 read it
 * Rows: x w z m1 m2 d1 d2 n1 d3 q r1 r2 r3 r4 r5 t = 16 (18 with fuse=none:
 * bz and cx back).  FLOPs: fused 2048 + 2048 + 3 dots of 2,097,152 + n1,
 * q, r1..r5 at 1024 each = 6,302,720; fuse=none has cx once: 1024 less. */
static void test_duplication(void)
{
    struct sb_err e;
    char buf[64];
    struct sb_graph *g = sb_graph_load(SB_TEST_DATA "/hlo_cases/hlo_dup.hlo", &e);
    if (!g) {
        fprintf(stderr, "%s\n", e.msg);
        CHECK(0);
        return;
    }
    static const char *const names[] = {"x", "w", "z", "m1", "m2", "d1", "d2", "n1",
                                        "d3", "q", "r1", "r2", "r3", "r4", "r5", "t"};
    CHECK_EQ_U(g->v.n_nodes, 16);
    double total = 0;
    for (uint32_t v = 0; v < g->v.n_nodes; v++)
        total += g->flops[v];
    CHECK(total == 6302720);
    for (uint32_t v = 0; v < 16 && g->v.n_nodes == 16; v++)
        CHECK(!strcmp(name_of(g, v), names[v]));
    if (g->v.n_nodes == 16) {
        for (uint32_t v = 3; v <= 4; v++) {
            CHECK(!strcmp(op_of(g, v), "loop_fusion"));
            CHECK(g->flops[v] == 2048 && g->bytes_accessed[v] == 6148);
            inputs(g, v, buf, sizeof buf);
            CHECK(!strcmp(buf, "0 2"));
        }
        CHECK(!strcmp(op_of(g, 7), "negate") && !strcmp(op_of(g, 9), "add"));
        inputs(g, 10, buf, sizeof buf);
        CHECK(!strcmp(buf, "9"));
        CHECK(!strcmp(sb_graph_meta(g, "hlo_fusion"), "2 groups (--import fuse=none: every "
                                                      "op alone)"));
    }
    sb_graph_free(g);
    struct sb_import_opts io;
    sb_import_defaults(&io);
    CHECK(sb_import_parse(&io, "fuse=none", &e) == 0);
    g = sb_graph_load_with(SB_TEST_DATA "/hlo_cases/hlo_dup.hlo", &io, &e);
    CHECK(g != NULL);
    if (g) {
        total = 0;
        for (uint32_t v = 0; v < g->v.n_nodes; v++)
            total += g->flops[v];
        CHECK_EQ_U(g->v.n_nodes, 18);
        CHECK(total == 6302720 - 1024);
        sb_graph_free(g);
    }
}

/* hlo_fusion.hlo, fused as XLA's instruction fusion would:
 *   a = x*x, b = exp(a), c = b + x: a's and b's only users are the next op,
 *     so {a, b, c} is one loop fusion named c: 1024 + 1024 (exp) + 1024 =
 *     3072 FLOPs; reads x once (4096 B, though a reads it twice and c once),
 *     writes c (4096 B): 8192 B; it allocates c's 4096 B only
 *   d = dot(w, c) stays alone: 2 * 1024 * 1024 = 2,097,152 FLOPs
 *   e1 = -d, e2 = sqrt(d), f = e1 + e2: {e1, e2, f} named f, 3072 FLOPs,
 *     reads d once, writes f: 8192 B
 * Rows: x, w, c, d, f (5; 9 with fuse=none, where a alone reads x twice and
 * writes itself, 12288 B, as HloCostAnalysis counts an instruction).
 * Total FLOPs are the same either way: 3072 + 2097152 + 3072. */
static void test_fusion(void)
{
    struct sb_err e;
    struct sb_graph *g = sb_graph_load(SB_TEST_DATA "/hlo_cases/hlo_fusion.hlo", &e);
    if (!g) {
        fprintf(stderr, "%s\n", e.msg);
        CHECK(0);
        return;
    }
    char buf[64];
    CHECK_EQ_U(g->v.n_nodes, 5);
    if (g->v.n_nodes == 5) {
        CHECK(!strcmp(name_of(g, 2), "c") && !strcmp(op_of(g, 2), "loop_fusion"));
        CHECK(g->flops[2] == 3072 && g->bytes_accessed[2] == 8192);
        CHECK_EQ_U(g->v.out_bytes[2], 4096);
        inputs(g, 2, buf, sizeof buf);
        CHECK(!strcmp(buf, "0"));
        CHECK(!strcmp(op_of(g, 3), "dot") && g->flops[3] == 2097152);
        CHECK(!strcmp(name_of(g, 4), "f") && g->flops[4] == 3072 &&
              g->bytes_accessed[4] == 8192);
        inputs(g, 4, buf, sizeof buf);
        CHECK(!strcmp(buf, "3"));
        CHECK(!strcmp(sb_graph_meta(g, "hlo_fusion"), "2 groups (--import fuse=none: every "
                                                      "op alone)"));
    }
    sb_graph_free(g);
    struct sb_import_opts io;
    sb_import_defaults(&io);
    CHECK(sb_import_parse(&io, "fuse=none", &e) == 0 && io.no_fuse == 1);
    CHECK(sb_import_parse(&io, "fuse=maybe", &e) != 0);
    g = sb_graph_load_with(SB_TEST_DATA "/hlo_cases/hlo_fusion.hlo", &io, &e);
    CHECK(g != NULL);
    if (g) {
        double total = 0;
        for (uint32_t v = 0; v < g->v.n_nodes; v++)
            total += g->flops[v];
        CHECK_EQ_U(g->v.n_nodes, 9); /* x w a b c d e1 e2 f */
        CHECK(total == 3072 + 2097152 + 3072);
        CHECK(g->bytes_accessed[2] == 12288); /* a = x * x alone: x twice + a */
        sb_graph_free(g);
    }
}

/* tests/data/hlo_cost/: each file is one test of XLA's
 * hlo_cost_analysis_test.cc at 183fa00, its module written as HLO text by hand
 * (the builder calls of the test, or its own text), with the figures the test
 * expects in "// expect: flops=N transcendentals=N bytes=N" (any of them),
 * "// instr: NAME" when the test asks one instruction rather than the whole
 * computation, and "// skip: why" for the tests schedbench does not model. */
static int read_case(const char *path, char **text, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    *text = malloc((size_t)len + 1);
    *n = fread(*text, 1, (size_t)len, f);
    (*text)[*n] = 0;
    fclose(f);
    return 0;
}

static int run_cost_case(const char *dir, const char *file, int *skipped)
{
    char path[1024], instr[256] = "", *text = NULL;
    size_t n = 0;
    snprintf(path, sizeof path, "%s/%s", dir, file);
    *skipped = 0;
    if (read_case(path, &text, &n))
        return 0;
    const char *skip = strstr(text, "// skip: ");
    if (skip) {
        const char *end = strchr(skip, '\n');
        printf("  skip %s: %.*s\n", file, (int)(end ? end - skip - 9 : 60), skip + 9);
        *skipped = 1;
        free(text);
        return 1;
    }
    const char *ins = strstr(text, "// instr: ");
    if (ins)
        sscanf(ins + 10, "%255s", instr);
    double want[3] = {-1, -1, -1}, got[3];
    static const char *const keys[3] = {"flops=", "transcendentals=", "bytes="};
    const char *exp = strstr(text, "// expect: ");
    const char *eol = exp ? strchr(exp, '\n') : NULL;
    for (int k = 0; k < 3 && exp; k++) {
        const char *p = strstr(exp, keys[k]);
        if (p && (!eol || p < eol))
            want[k] = strtod(p + strlen(keys[k]), NULL);
    }
    struct sb_err e;
    struct sb_hlo_module *m = sb_hlo_parse(file, text, n, &e);
    int ok = m != NULL && exp != NULL;
    if (!m)
        printf("  FAIL %s: %s\n", file, e.msg);
    if (m && sb_hlo_cost_total(m, instr[0] ? instr : NULL, got)) {
        printf("  FAIL %s: no instruction '%s'\n", file, instr);
        ok = 0;
    }
    for (int k = 0; k < 3 && ok; k++)
        if (want[k] >= 0 && fabs(got[k] - want[k]) > 1e-9 * (want[k] > 1 ? want[k] : 1)) {
            printf("  FAIL %s: %s%.17g, XLA's test expects %.17g\n", file, keys[k], got[k],
                   want[k]);
            ok = 0;
        }
    sb_hlo_free(m);
    free(text);
    return ok;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void test_cost_conformance(void)
{
    const char *dir = SB_TEST_DATA "/hlo_cost";
    DIR *d = opendir(dir);
    CHECK(d != NULL);
    if (!d)
        return;
    char **files = NULL;
    size_t nf = 0;
    for (struct dirent *de; (de = readdir(d));) {
        size_t l = strlen(de->d_name);
        if (l > 4 && !strcmp(de->d_name + l - 4, ".hlo")) {
            files = realloc(files, (nf + 1) * sizeof *files);
            files[nf++] = strdup(de->d_name);
        }
    }
    closedir(d);
    qsort(files, nf, sizeof *files, by_name);
    unsigned passed = 0, failed = 0, skipped = 0;
    for (size_t i = 0; i < nf; i++) {
        int sk;
        int ok = run_cost_case(dir, files[i], &sk);
        skipped += sk;
        passed += ok && !sk;
        failed += !ok;
        free(files[i]);
    }
    free(files);
    printf("hlo_cost: %u passed, %u failed, %u skipped\n", passed, failed, skipped);
    CHECK_EQ_U(failed, 0);
    CHECK_EQ_U(passed + failed + skipped, 51); /* the 51 TESTs of the file */
}

/* input_output_alias and io_bytes, XLA's total_io_size (GetSchedulerMemoryLimit):
 * every subshape of every ENTRY parameter and of the result, where a tuple's
 * own size is its index table of 8 bytes per element, less the own size of
 * each result subshape an alias names.
 *   hlo_io.hlo: parameters f32[4,8] = 32 * 4 = 128 and bf16[16] = 16 * 2 = 32;
 *     result (f32[4,8], s32[]): table 2 * 8 = 16, then 128 and 4, = 148;
 *     128 + 32 + 148 = 308
 *   hlo_io_alias.hlo: the same with {0}: (0, {}): less f32[4,8]'s 128, = 180;
 *     parameter 0 is donated, no longer a weight; parameter 1 still is
 *   hlo_io_nested.hlo: p = (f32[2], (s32[], bf16[4])): outer table 2 * 8 = 16,
 *     f32[2] 8, inner table 2 * 8 = 16, s32[] 4, bf16[4] 8, = 52; the result
 *     has the same shape, 52; {1, 1} is the result's bf16[4]: 52 + 52 - 8 = 96 */
static void test_io(void)
{
    static const struct {
        const char *file, *io_bytes;
    } cases[] = {
        {"hlo_io.hlo", "308"},
        {"hlo_io_alias.hlo", "180"},
        {"hlo_io_nested.hlo", "96"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char path[512];
        struct sb_err e;
        snprintf(path, sizeof path, "%s/hlo_cases/%s", SB_TEST_DATA, cases[i].file);
        struct sb_graph *g = sb_graph_load(path, &e);
        if (!g) {
            fprintf(stderr, "%s\n", e.msg);
            CHECK(0);
            continue;
        }
        const char *io = sb_graph_meta(g, "io_bytes");
        CHECK(io && !strcmp(io, cases[i].io_bytes));
        if (i < 2) { /* x and y are rows 0 and 1 */
            CHECK_EQ_U(g->v.flags[0] & SB_FLAG_WEIGHT, i == 0 ? SB_FLAG_WEIGHT : 0);
            CHECK_EQ_U(g->v.flags[1] & SB_FLAG_WEIGHT, SB_FLAG_WEIGHT);
        }
        if (i == 0) { /* convert keeps it: format v1 writes it back as "# io_bytes=308" */
            char csv[512];
            snprintf(csv, sizeof csv, "%s/hlo_io.csv", SB_TEST_TMP);
            CHECK(sb_graph_write(g, csv, &e) == 0);
            struct sb_graph *back = sb_graph_load(csv, &e);
            CHECK(back && sb_graph_meta(back, "io_bytes") &&
                  !strcmp(sb_graph_meta(back, "io_bytes"), "308"));
            sb_graph_free(back);
        }
        sb_graph_free(g);
    }
}

/* Element sizes as XLA's ShapeUtil::ByteSizeOf has them, on a module of
 * parameters whose ROOT is a tuple of them all:
 *   s4[10]{0:E(4)}: packed to 4 bits, ceil(10 * 4 / 8) = 5
 *   s4[10]{0}: no element size in the layout, a byte each: 10
 *   pred[3]: a byte each: 3
 *   f32[<=8,2]: dynamic, 8 * 2 * 4 = 64 plus an s32 per dimension, 2 * 4 = 8: 72
 *   token[]: 0;  opaque[]: a pointer, 8
 * parameters 5 + 10 + 3 + 72 + 0 + 8 = 98; the result is their 6-tuple: table
 * 6 * 8 = 48 plus the same 98 = 146; 98 + 146 = 244.
 * The sum stops at 2^62: s8[2^61] in and the same out is 2^61 + 2^61 = 2^62
 * exactly, taken; one element more each way is 2^62 + 2, refused. */
static void test_io_sizes(void)
{
    static const char types[] =
        "HloModule types\n\nENTRY e {\n"
        "  a = s4[10]{0:E(4)} parameter(0)\n  b = s4[10]{0} parameter(1)\n"
        "  c = pred[3]{0} parameter(2)\n  d = f32[<=8,2]{1,0} parameter(3)\n"
        "  k = token[] parameter(4)\n  o = opaque[] parameter(5)\n"
        "  ROOT t = (s4[10]{0:E(4)}, s4[10]{0}, pred[3]{0}, f32[<=8,2]{1,0}, token[], "
        "opaque[]) tuple(a, b, c, d, k, o)\n}\n";
    static const char limit[] =
        "HloModule big\nENTRY e {\n  p = s8[2305843009213693952] parameter(0)\n"
        "  ROOT n = s8[2305843009213693952] negate(p)\n}\n";
    static const char over[] =
        "HloModule big\nENTRY e {\n  p = s8[2305843009213693953] parameter(0)\n"
        "  ROOT n = s8[2305843009213693953] negate(p)\n}\n";
    struct sb_err e;
    struct sb_hlo_module *m = sb_hlo_parse("types.hlo", types, strlen(types), &e);
    CHECK(m != NULL);
    if (m)
        CHECK_EQ_U(sb_hlo_io_bytes(m), 244);
    sb_hlo_free(m);
    m = sb_hlo_parse("limit.hlo", limit, strlen(limit), &e);
    CHECK(m != NULL);
    if (m)
        CHECK_EQ_U(sb_hlo_io_bytes(m), 4611686018427387904ull);
    sb_hlo_free(m);
    m = sb_hlo_parse("over.hlo", over, strlen(over), &e);
    CHECK(m == NULL);
    if (!m)
        CHECK_CONTAINS(e.msg, "over.hlo:2: ENTRY 'e': its parameters and result take more "
                              "than 2^62 bytes");
    sb_hlo_free(m);
}

/* input_output_alias as XLA's parser reads it, then checked against the
 * ENTRY: two parameters f32[4] and ROOT r = (f32[4], f32[4]) on line 6.  A
 * trailing comma is allowed in the list and in an index, as in XLA; {1,}
 * is the result's second f32[4]: 16 + 16 in, table 16 + 16 + 16 out, less 16:
 * 64.  Each bad text is refused with the file and the header's line. */
static void test_alias_errors(void)
{
    static const char fmt[] = "HloModule m, input_output_alias=%s\n\nENTRY e {\n"
                              "  x = f32[4] parameter(0)\n  y = f32[4] parameter(1)\n"
                              "  ROOT r = (f32[4], f32[4]) tuple(x, y)\n}\n";
    static const struct {
        const char *alias, *msg;
    } cases[] = {
        {"{ {1,}: (1, {}), }", NULL},
        {"{ {0} (0, {}) }",
         "t.hlo:1: expected ':' after an output index in input_output_alias, found '(0, {}) }'"},
        {"{ {0}: 0 }", "t.hlo:1: expected '(' before a parameter number in input_output_alias"},
        {"{ [0]: (0, {}) }",
         "t.hlo:1: expected '{' opening an output index in input_output_alias"},
        {"{ {0}: (x, {}) }", "t.hlo:1: input_output_alias: expected a parameter number, "
                             "found 'x, {}) }'"},
        {"{ {0}: (0, {}, maybe-alias) }", "t.hlo:1: input_output_alias: unknown alias kind "
                                          "'maybe-alias' (may-alias or must-alias)"},
        {"{ {0}: (0, {})}x", "t.hlo:1: input_output_alias: unexpected 'x' after its "
                             "closing '}'"},
        {"{ {4294967296}: (0, {}) }", "t.hlo:1: input_output_alias: a tuple index is too "
                                      "large"},
        {"{ {2}: (0, {}) }", "t.hlo:1: input_output_alias: output {2} is not in the result "
                             "shape (ROOT 'r', line 6)"},
        {"{ {0, 0}: (0, {}) }", "t.hlo:1: input_output_alias: output {0, 0} is not in the "
                                "result shape (ROOT 'r', line 6)"},
        {"{ {0}: (2, {}) }", "t.hlo:1: input_output_alias: output {0} names parameter 2, "
                             "but ENTRY 'e' has 2 parameters"},
        {"{ {1}: (0, {}), {1}: (1, {}) }", "t.hlo:1: input_output_alias: output {1} is "
                                           "aliased twice (parameters 0 and 1)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[512];
        struct sb_err e;
        snprintf(text, sizeof text, fmt, cases[i].alias);
        struct sb_hlo_module *m = sb_hlo_parse("t.hlo", text, strlen(text), &e);
        if (i == 0) {
            CHECK(m != NULL);
            if (m)
                CHECK_EQ_U(sb_hlo_io_bytes(m), 64);
        } else {
            CHECK(m == NULL);
            if (!m)
                CHECK_CONTAINS(e.msg, cases[i].msg);
        }
        sb_hlo_free(m);
    }
}

/* ---- issue 42: bounded imports --------------------------------------------- */

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Two nested while loops, n1 iterations of `outer`, each n2 of `inner`, whose
 * body is its parameter: it emits nothing.  Lines: inner's ROOT 4, the
 * inner while 14, the outer while 20. */
static char *nested_loops(unsigned long n1, unsigned long n2)
{
    return sb_strf("HloModule nest\n"
                   "\n"
                   "inner {\n"
                   "  ROOT p = (f32[4]) parameter(0)\n"
                   "}\n"
                   "\n"
                   "cond {\n"
                   "  p = (f32[4]) parameter(0)\n"
                   "  ROOT c = pred[] constant(true)\n"
                   "}\n"
                   "\n"
                   "outer {\n"
                   "  p = (f32[4]) parameter(0)\n"
                   "  ROOT w2 = (f32[4]) while(p), condition=cond, body=inner, "
                   "backend_config={\"known_trip_count\":{\"n\":\"%lu\"}}\n"
                   "}\n"
                   "\n"
                   "ENTRY main {\n"
                   "  a = f32[4] parameter(0)\n"
                   "  t = (f32[4]) tuple(a)\n"
                   "  ROOT w = (f32[4]) while(t), condition=cond, body=outer, "
                   "backend_config={\"known_trip_count\":{\"n\":\"%lu\"}}\n"
                   "}\n", n2, n1);
}

/* The expansion's work ceiling (hlo_flat.c, FLAT_MAX_WORK = 2^22 =
 * 4,194,304 steps; a step is an instruction visited or an iteration begun).
 * nested_loops(n1, n2) takes 3 steps in ENTRY (a, t, w) and per outer
 * iteration 1 + 2 (p, w2) + n2 * (1 + 1 (p)): 3 + n1 * (3 + 2 * n2).
 * n1 = 8: 27 + 16 * n2 <= 4,194,304 while n2 <= 262,142 (4,194,299 steps),
 * so that expands (to a and t: 2 nodes) and n2 = 262,143 (4,194,315) is
 * refused at the inner while, naming the outer.  Two loops of 10^6 empty
 * iterations (10^12 steps; they ran for hours) are refused as soon as the
 * ceiling is reached: half a second in Release, 20 s here at most. */
static void test_expansion_work(void)
{
    struct sb_err e;
    char *t = nested_loops(8, 262142);
    struct sb_graph *g = sb_hlo_load_mem("nest.hlo", t, strlen(t), &e);
    CHECK(g != NULL);
    if (g)
        CHECK_EQ_U(g->v.n_nodes, 2);
    else
        fprintf(stderr, "%s\n", e.msg);
    sb_graph_free(g);
    free(t);
    t = nested_loops(8, 262143);
    g = sb_hlo_load_mem("nest.hlo", t, strlen(t), &e);
    CHECK(g == NULL);
    if (!g)
        CHECK_CONTAINS(e.msg, "nest.hlo:14: while 'w2' (inside while 'w' of line 20): "
                              "expanding the loops takes more than 4194304 steps");
    sb_graph_free(g);
    free(t);
    t = nested_loops(1000000, 1000000);
    double t0 = now_s();
    g = sb_hlo_load_mem("nest.hlo", t, strlen(t), &e);
    double took = now_s() - t0;
    fprintf(stderr, "test_hlo: 10^6 x 10^6 empty iterations refused in %.2f s\n", took);
    CHECK(g == NULL && took < 20);
    if (!g)
        CHECK_CONTAINS(e.msg, "nest.hlo:14: while 'w2' (inside while 'w' of line 20)");
    sb_graph_free(g);
    free(t);
}

/* One all-reduce of f32[8] over replica_groups=groups. */
static struct sb_graph *one_all_reduce(const char *groups, struct sb_err *e)
{
    char *t = sb_strf("HloModule g, is_scheduled=true\n"
                      "sum {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
                      "  ROOT s = f32[] add(a, b)\n}\n"
                      "ENTRY e {\n  p = f32[8] parameter(0)\n"
                      "  ROOT r = f32[8] all-reduce(p), replica_groups=%s, to_apply=sum\n}\n",
                      groups);
    struct sb_graph *g = sb_hlo_load_mem("g.hlo", t, strlen(t), e);
    free(t);
    return g;
}

/* Values read whole (issue 42; refusals are in tests/bad/catalogue.tsv).
 * replica_groups: the group size of every form XLA prints, node 1 being the
 * all-reduce's start: {} says nothing (0); {{0, 1}, {2, 3}} with spaces, 2;
 * [4,2]<=[2,4]T(1,0), 4 groups of 2; [1,8]<=[2,2,2]T(2,0,1), one of 8; the
 * largest size, 2^31 - 1 = 2147483647, one group over as many devices; 2^31
 * is refused at the all-reduce's line, 9 (HloModule, sum's 5 lines, ENTRY, p);
 * the largest replica id, 2^31 - 1, in a group of 2; 2^31 refused.
 * known_trip_count in the escaped form older XLA printed
 * ("{\"known_trip_count\":{\"n\":\"3\"}}") and with leading zeros ("003"):
 * 3 iterations each, 3 negates. */
static void test_strict_values(void)
{
    static const struct {
        const char *groups;
        uint32_t size;
    } ok[] = {{"{}", 0}, {"{{0, 1}, {2, 3}}", 2}, {"[4,2]<=[2,4]T(1,0)", 2},
              {"[1,8]<=[2,2,2]T(2,0,1)", 8}, {"[1,2147483647]<=[2147483647]", 2147483647},
              {"{{0,2147483647}}", 2}};
    struct sb_err e;
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        struct sb_graph *g = one_all_reduce(ok[i].groups, &e);
        CHECK(g != NULL && g->v.n_nodes == 3 && g->v.kind[1] == SB_KIND_START);
        if (g && g->v.n_nodes == 3)
            CHECK_EQ_U(g->v.group_size[1], ok[i].size);
        else if (!g)
            fprintf(stderr, "%s: %s\n", ok[i].groups, e.msg);
        sb_graph_free(g);
    }
    struct sb_graph *g = one_all_reduce("[1,2147483648]<=[2147483648]", &e);
    CHECK(g == NULL);
    if (!g)
        CHECK_CONTAINS(e.msg, "g.hlo:9: 'r': replica_groups [1,2147483648]<=[2147483648]: its "
                              "[GROUPS,SIZE] are not two integers in 1..2^31-1");
    sb_graph_free(g);
    g = one_all_reduce("{{0,2147483648}}", &e);
    CHECK(g == NULL);
    if (!g)
        CHECK_CONTAINS(e.msg, "g.hlo:9: 'r': replica_groups {{0,2147483648}}: '2147483648' is "
                              "not a replica id (a decimal below 2^31)");
    sb_graph_free(g);
    static const char *const trips[] = {"\"{\\\"known_trip_count\\\":{\\\"n\\\":\\\"3\\\"}}\"",
                                        "{\"known_trip_count\":{\"n\":\"003\"}}"};
    for (size_t i = 0; i < 2; i++) {
        char *t = sb_strf("HloModule w, is_scheduled=true\n"
                          "body {\n  p = (f32[4]) parameter(0)\n"
                          "  x = f32[4] get-tuple-element(p), index=0\n"
                          "  n = f32[4] negate(x)\n  ROOT t = (f32[4]) tuple(n)\n}\n"
                          "cond {\n  p = (f32[4]) parameter(0)\n"
                          "  ROOT c = pred[] constant(true)\n}\n"
                          "ENTRY e {\n  a = f32[4] parameter(0)\n  t = (f32[4]) tuple(a)\n"
                          "  ROOT w = (f32[4]) while(t), condition=cond, body=body, "
                          "backend_config=%s\n}\n", trips[i]);
        g = sb_hlo_load_mem("w.hlo", t, strlen(t), &e);
        CHECK(g != NULL);
        uint32_t negs = 0;
        for (uint32_t v = 0; g && v < g->v.n_nodes; v++)
            negs += !strcmp(op_of(g, v), "negate");
        if (g)
            CHECK_EQ_U(negs, 3);
        else
            fprintf(stderr, "%s\n", e.msg);
        sb_graph_free(g);
        free(t);
    }
}

/* tests/gen_hlo_chain.py's module in C: x0 a parameter, x_i = negate(x_i-1)
 * and y_i = exponential(x_i) for i = 1..n, ROOT r = negate(x_n), all
 * f32[1024]. */
static char *chain_module(uint32_t n)
{
    size_t cap = 128 + (size_t)n * 96, k = 0;
    char *t = sb_xmalloc(cap);
    k += (size_t)snprintf(t + k, cap - k, "HloModule chain, is_scheduled=true\nENTRY e {\n"
                                          "  x0 = f32[1024] parameter(0)\n");
    for (uint32_t i = 1; i <= n; i++)
        k += (size_t)snprintf(t + k, cap - k, "  x%u = f32[1024] negate(x%u)\n"
                                              "  y%u = f32[1024] exponential(x%u)\n",
                              i, i - 1, i, i);
    snprintf(t + k, cap - k, "  ROOT r = f32[1024] negate(x%u)\n}\n", n);
    return t;
}

/* Duplication's budget (hlo.c, HLO_DUP_MAX_INSTRS = 64).  In the chain every
 * x_i has two fusible users (x_i+1, y_i), k = 2, I = O = 4096 B, and
 * 2 * 4096 <= 4096 + 4096 + 2 * 4096: each is duplicated into its users, and
 * without a budget y_i recomputed x_1..x_i, i instructions (quadratic).  With
 * it, x_i duplicated computes x_i and the duplicated x_i-1: size(x_1) = 1,
 * size(x_i) = size(x_i-1) + 1 up to x_64 = 64; x_65 would be 65, keeps its
 * node, and x_66 starts again at 1.  n = 200: x_65, x_130, x_195 keep nodes,
 * so 1 (x0) + 3 + 200 (y) + 1 (r) = 205 nodes (202 when every x was
 * duplicated).  FLOPs: 1024 per instruction computed (an exponential's
 * transcendental counts one).  A node computes its instruction and the
 * duplicated x's back to the last x with a node: y_i (i mod 65) of them,
 * x_65, x_130 and x_195 64 each, r 5 (x_196..x_200).  The y's: 200 +
 * 3 * (1 + ... + 64) + (1 + ... + 5) = 200 + 6240 + 15 = 6455; the x nodes
 * 3 * 65 = 195; r 6: 6656 instructions, 6,815,744 FLOPs.  Before the
 * budget: 202 nodes, y_i computing 1 + i and r 201, 200 + (1 + ... + 200) +
 * 201 = 20,501 instructions.  A chain of 20,000 links (1.5 MB) imports in
 * 0.2 s in Release; it took 60 s quadratically. */
static void test_duplication_budget(void)
{
    struct sb_err e;
    char *t = chain_module(200);
    struct sb_graph *g = sb_hlo_load_mem("chain.hlo", t, strlen(t), &e);
    free(t);
    CHECK(g != NULL);
    if (!g)
        return fprintf(stderr, "%s\n", e.msg), (void)0;
    CHECK_EQ_U(g->v.n_nodes, 205);
    double flops = 0;
    uint32_t x_nodes = 0;
    for (uint32_t v = 0; v < g->v.n_nodes; v++) {
        flops += g->flops[v];
        x_nodes += name_of(g, v)[0] == 'x' && strcmp(name_of(g, v), "x0");
    }
    CHECK_EQ_U(x_nodes, 3);
    CHECK_NEAR(flops, 6815744);
    sb_graph_free(g);
    t = chain_module(20000);
    double t0 = now_s();
    g = sb_hlo_load_mem("chain.hlo", t, strlen(t), &e);
    double took = now_s() - t0;
    fprintf(stderr, "test_hlo: a duplicated chain of 20,000 links imported in %.2f s\n", took);
    CHECK(g != NULL && took < 10);
    sb_graph_free(g);
    free(t);
}

/* What a call holds, on 40 computations each calling the next twice: 2^40
 * paths, one walk each. The innermost has one all-gather in flight; each
 * level's two calls run one after the other, so every level (and the top
 * call) holds one, as XLA's per-instruction maximum over callees gives. */
static void test_holds_shared_callees(void)
{
    enum { LEVELS = 40 };
    size_t cap = 1 << 16, len = 0;
    char *t = malloc(cap);
    CHECK(t != NULL);
    if (!t)
        return;
    len += (size_t)snprintf(t + len, cap - len,
                            "HloModule dag\n\nc%d {\n  p = f32[4] parameter(0)\n"
                            "  s = (f32[4], f32[8]) all-gather-start(p), replica_groups={{0,1}}, "
                            "dimensions={0}\n"
                            "  d = f32[8] all-gather-done(s)\n"
                            "  ROOT r = f32[4] copy(p)\n}\n\n",
                            LEVELS);
    for (int i = LEVELS - 1; i >= 0; i--)
        len += (size_t)snprintf(t + len, cap - len,
                                "c%d {\n  p = f32[4] parameter(0)\n"
                                "  a = f32[4] call(p), to_apply=c%d\n"
                                "  ROOT b = f32[4] call(a), to_apply=c%d\n}\n\n",
                                i, i + 1, i + 1);
    len += (size_t)snprintf(t + len, cap - len,
                            "ENTRY top {\n  p = f32[4] parameter(0)\n"
                            "  ROOT c = f32[4] call(p), to_apply=c0\n}\n");
    CHECK(len < cap);
    struct sb_err e;
    struct sb_hlo_module *m = sb_hlo_parse("dag.hlo", t, len, &e);
    CHECK(m != NULL);
    struct sb_hlo_opts o = {.computation = "top"};
    struct sb_hlo_graph hg = {0};
    if (m && sb_hlo_build(m, &o, &hg, &e) == 0) {
        uint32_t c = SB_NONE;
        for (uint32_t v = 0; v < hg.g->v.n_nodes; v++)
            if (!strcmp(name_of(hg.g, v), "c"))
                c = v;
        CHECK(c != SB_NONE && hg.g->v.holds != NULL);
        if (c != SB_NONE && hg.g->v.holds)
            CHECK_EQ_U(hg.g->v.holds[(size_t)c * SB_COLL_COUNT + SB_COLL_ALL_GATHER], 1);
        sb_hlo_graph_free(&hg);
    } else if (m) {
        fprintf(stderr, "dag.hlo: %s\n", e.msg);
        CHECK(0);
    }
    sb_hlo_free(m);
    free(t);
}

int main(void)
{
    test_holds_shared_callees();
    test_duplication_budget();
    test_strict_values();
    test_expansion_work();
    test_cost_conformance();
    test_memory();
    test_roofline();
    test_groups();
    test_collectives();
    test_queues();
    test_user_trips();
    test_async_compute();
    test_fusion();
    test_duplication();
    test_unterminated();
    test_basic();
    test_while();
    test_computation();
    test_errors();
    test_truncated();
    test_io();
    test_io_sizes();
    test_alias_errors();
    return check_report();
}
