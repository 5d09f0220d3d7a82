/* The graph builder (harness/src/core/builder.h): the checks every importer
 * gets, messages in the importer's own coordinates, and names of any length
 * through every importer that carries names (the Chakra one is in
 * test_traces.c, next to its trace writer). */
#define _POSIX_C_SOURCE 200809L
#include "check.h"
#include "core/builder.h"
#include "import/import.h"

#include <stdlib.h>
#include <unistd.h>

static struct sb_node_in node(const char *name, enum sb_kind k, uint64_t loc)
{
    struct sb_node_in n = SB_NODE_IN_INIT;
    n.name = name;
    n.kind = k;
    n.loc = loc;
    return n;
}

/* in(0) -> c(1) -> s(2) all_gather -> d(3) -> out(4): five nodes, four
 * edges; succ of 0 is {1}, the done partners the start. */
static void test_build(void)
{
    struct sb_err e = {{0}};
    struct sb_builder *b = sb_builder_new("t.bin", SB_LOC_NODE_ID, &e);
    struct sb_node_in n = node("in", SB_KIND_INPUT, 10);
    n.out_bytes = 100;
    CHECK_EQ_U(sb_builder_node(b, &n), 0);
    n = node("c", SB_KIND_COMPUTE, 11);
    n.cost_us = 2.5;
    n.op = "dot";
    CHECK_EQ_U(sb_builder_node(b, &n), 1);
    CHECK(sb_builder_input(b, 0) == 0);
    n = node("s", SB_KIND_START, 12);
    n.coll = SB_COLL_ALL_GATHER;
    n.comm_bytes = 64;
    CHECK_EQ_U(sb_builder_node(b, &n), 2);
    CHECK(sb_builder_input(b, 1) == 0);
    n = node("d", SB_KIND_DONE, 13);
    CHECK_EQ_U(sb_builder_node(b, &n), 3);
    CHECK(sb_builder_input(b, 2) == 0);
    n = node("out", SB_KIND_COMPUTE, 14);
    n.op = "dot";
    CHECK_EQ_U(sb_builder_node(b, &n), 4);
    CHECK(sb_builder_input(b, 3) == 0);
    sb_builder_meta(b, "name", "five");
    struct sb_graph *g = sb_builder_finish(b);
    CHECK(g != NULL);
    if (!g)
        return;
    CHECK_EQ_U(g->v.n_nodes, 5);
    CHECK_EQ_U(g->v.n_edges, 4);
    CHECK_EQ_U(g->v.partner[2], 3);
    CHECK_EQ_U(g->v.partner[3], 2);
    CHECK_EQ_U(g->v.coll[3], SB_COLL_ALL_GATHER); /* a done takes its start's type */
    CHECK_EQ_U(g->v.succ_off[1] - g->v.succ_off[0], 1);
    CHECK_EQ_U(g->v.succ[g->v.succ_off[0]], 1);
    CHECK_EQ_U(g->v.op[1], g->v.op[4]); /* one opcode, interned once */
    CHECK(!strcmp(g->v.op_names[g->v.op[1]], "dot"));
    CHECK(!strcmp(g->name, "five"));
    CHECK(g->v.comm_us[2] < 0);
    sb_graph_free(g);
}

/* Each rule once, with the message in the importer's coordinates. */
static void test_refusals(void)
{
    struct {
        enum sb_loc loc;
        int step; /* which broken graph */
        const char *want;
    } cases[] = {
        {SB_LOC_NODE_ID, 0, "t.bin: node id 21: duplicate name 'a' (first on node id 20)"},
        {SB_LOC_LINE, 0, "t.bin:21: duplicate name 'a' (first on line 20)"},
        {SB_LOC_BYTE, 1, "t.bin: byte 20: input 0 is not an earlier row: node 0 depends on "
                         "itself (a cycle)"},
        {SB_LOC_LINE, 2, "t.bin:21: first input 0 of a done is a compute node, not a start"},
        {SB_LOC_LINE, 3, "t.bin:20: start 's' has no done"},
        {SB_LOC_LINE, 4, "t.bin:21: an input node has no inputs"},
        {SB_LOC_LINE, 5, "t.bin:20: start node 's' has no coll"},
        {SB_LOC_LINE, 6, "t.bin:20: cost_us nan is not in 0..10^12"},
        {SB_LOC_LINE, 7, "t.bin: no nodes"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct sb_err e = {{0}};
        struct sb_builder *b = sb_builder_new("t.bin", cases[i].loc, &e);
        struct sb_node_in a = node("a", SB_KIND_COMPUTE, 20);
        struct sb_node_in s = node("s", SB_KIND_START, 20);
        s.coll = SB_COLL_ALL_REDUCE;
        switch (cases[i].step) {
        case 0:
            sb_builder_node(b, &a);
            a.loc = 21;
            CHECK(sb_builder_node(b, &a) == SB_NONE);
            break;
        case 1:
            sb_builder_node(b, &a);
            CHECK(sb_builder_input(b, 0) != 0);
            break;
        case 2: {
            struct sb_node_in d = node("d", SB_KIND_DONE, 21);
            sb_builder_node(b, &a);
            sb_builder_node(b, &d);
            sb_builder_input(b, 0);
            break;
        }
        case 3:
            sb_builder_node(b, &s);
            break;
        case 4: {
            struct sb_node_in in = node("i", SB_KIND_INPUT, 21);
            sb_builder_node(b, &a);
            sb_builder_node(b, &in);
            sb_builder_input(b, 0);
            break;
        }
        case 5:
            s.coll = SB_COLL_NONE;
            CHECK(sb_builder_node(b, &s) == SB_NONE);
            break;
        case 6:
            a.cost_us = NAN;
            CHECK(sb_builder_node(b, &a) == SB_NONE);
            break;
        default:
            break;
        }
        struct sb_graph *g = sb_builder_finish(b);
        CHECK(g == NULL);
        CHECK_CONTAINS(e.msg, cases[i].want);
        sb_graph_free(g);
    }
}

/* A name of `n` bytes: "n" then letters, so no format's separator is in it. */
static char *long_name(size_t n)
{
    char *s = malloc(n + 1);
    for (size_t i = 0; i < n; i++)
        s[i] = (char)('a' + i % 26);
    s[n] = 0;
    return s;
}

/* g written as format v1 and read back keeps node v's name whole. */
static void check_round_trip(const struct sb_graph *g, uint32_t v, const char *want)
{
    char dir[] = "/tmp/sb_builder_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char *path = sb_strf("%s/g.csv", dir);
    struct sb_err e = {{0}};
    CHECK(!strcmp(g->v.names + g->v.name_off[v], want));
    CHECK(sb_graph_write(g, path, &e) == 0);
    struct sb_graph *h = sb_graph_load(path, &e);
    CHECK(h != NULL);
    if (h) {
        CHECK_EQ_U(h->v.n_nodes, g->v.n_nodes);
        CHECK(!strcmp(h->v.names + h->v.name_off[v], want));
    }
    sb_graph_free(h);
    unlink(path);
    rmdir(dir);
    free(path);
}

static void test_long_names(void)
{
    char *nm = long_name(10000);
    struct sb_err e = {{0}};
    /* CSV v1 */
    char *csv = sb_strf("id,name,kind,inputs\n0,%s,compute,\n", nm);
    struct sb_graph *g = sb_csv_load_mem("long.csv", csv, strlen(csv), &e);
    CHECK(g != NULL);
    if (g)
        check_round_trip(g, 0, nm);
    sb_graph_free(g);
    free(csv);
    /* HLO: an instruction name of 10,000 bytes */
    char *hlo = sb_strf("HloModule m\n\nENTRY e {\n  p = f32[4]{0} parameter(0)\n"
                        "  ROOT %s = f32[4]{0} add(p, p)\n}\n", nm);
    g = sb_hlo_load_mem("long.hlo", hlo, strlen(hlo), &e);
    CHECK(g != NULL);
    if (g)
        check_round_trip(g, 1, nm);
    else
        fprintf(stderr, "%s\n", e.msg);
    sb_graph_free(g);
    free(hlo);
    /* ASTRA-sim text: a layer name of 10,000 bytes becomes "L0.<name>.fwd" */
    char *txt = sb_strf("DATA\n1\n%s -1 5 NONE 0 5 NONE 0 5 ALLREDUCE 64 5\n", nm);
    struct sb_import_opts o;
    sb_import_defaults(&o);
    g = sb_astra_text_load_mem("long.txt", txt, strlen(txt), &o, &e);
    CHECK(g != NULL);
    char *want = sb_strf("L0.%s.fwd", nm);
    if (g)
        check_round_trip(g, 0, want);
    else
        fprintf(stderr, "%s\n", e.msg);
    sb_graph_free(g);
    free(want);
    free(txt);
    free(nm);
}

/* --toposort: rows c(0) reads b(2), a(1), b(2) reads a(1) become a, b, c;
 * a cycle 0 -> 2 -> 1 -> 0 is named with its lines (rows 0, 1, 2 are lines
 * 2, 3, 4). */
static void test_toposort(void)
{
    struct sb_err e = {{0}};
    static const char *in = "id,name,kind,inputs\n0,c,compute,2\n1,a,compute,\n2,b,compute,1\n";
    struct sb_graph *g = sb_csv_load_mem_sorted("t.csv", in, strlen(in), 1, &e);
    CHECK(g != NULL);
    if (g) {
        CHECK(!strcmp(g->v.names + g->v.name_off[0], "a"));
        CHECK(!strcmp(g->v.names + g->v.name_off[1], "b"));
        CHECK(!strcmp(g->v.names + g->v.name_off[2], "c"));
        CHECK_EQ_U(g->v.pred[g->v.pred_off[2]], 1);
        sb_graph_free(g);
    }
    CHECK(sb_csv_load_mem("t.csv", in, strlen(in), &e) == NULL);
    CHECK_CONTAINS(e.msg, "t.csv:2:4: input 2 is not an earlier row");
    CHECK_CONTAINS(e.msg, "convert --toposort");
    static const char *cyc = "id,name,kind,inputs\n0,c,compute,2\n1,a,compute,0\n2,b,compute,1\n";
    CHECK(sb_csv_load_mem_sorted("c.csv", cyc, strlen(cyc), 1, &e) == NULL);
    CHECK_CONTAINS(e.msg, "the inputs form a cycle: 0 (line 2) reads 2 (line 4) reads 1 (line 3) "
                          "reads 0");
}

/* A row with 20,000 inputs is read whole (it was refused as "input id too
 * long"): 20,001 nodes, 20,000 edges into the last. */
static void test_wide_row(void)
{
    size_t cap = 1 << 20, k = 0; /* 20,000 rows of ~20 bytes and a row of ~110 KB */
    char *csv = malloc(cap);
    k += (size_t)snprintf(csv + k, cap - k, "id,name,kind,inputs\n");
    for (int i = 0; i < 20000; i++)
        k += (size_t)snprintf(csv + k, cap - k, "%d,n%d,compute,\n", i, i);
    k += (size_t)snprintf(csv + k, cap - k, "20000,last,compute,");
    for (int i = 0; i < 20000; i++)
        k += (size_t)snprintf(csv + k, cap - k, "%s%d", i ? " " : "", i);
    k += (size_t)snprintf(csv + k, cap - k, "\n");
    struct sb_err e = {{0}};
    struct sb_graph *g = sb_csv_load_mem("wide.csv", csv, k, &e);
    CHECK(g != NULL);
    if (g) {
        CHECK_EQ_U(g->v.n_nodes, 20001);
        CHECK_EQ_U(g->v.pred_off[20001] - g->v.pred_off[20000], 20000);
    }
    sb_graph_free(g);
    free(csv);
}

int main(void)
{
    test_wide_row();
    test_toposort();
    test_build();
    test_refusals();
    test_long_names();
    printf("%d passed, %d failed\n", check_passed, check_failed);
    return check_failed != 0;
}
