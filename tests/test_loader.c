/* Loader: one block per case, jq-style: a graph and either the error it must be
 * refused with (file:line[:field]: message) or NULL when it must load. */
#define _POSIX_C_SOURCE 200809L
#include "check.h"
#include "core/core.h"
#include "import/import.h"

#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#define HDR "id,name,kind,inputs\n"
#define HDR_ALL "id,name,kind,inputs,op,cost_us,out_bytes,coll,comm_bytes,group,comm_us,device,flags\n"

struct reject_case {
    const char *csv;
    const char *error; /* substring of the message, NULL = must load */
};

static const struct reject_case cases[] = {
    /* missing required column: header is line 1 */
    {"id,name,kind\n0,a,compute\n", "t.csv:1: missing required column 'inputs'"},
    {"id,name,kind,inputs,colour\n0,a,compute,,red\n",
     "t.csv:1:5: unknown column 'colour' (extra columns must start with x_)"},
    {"id,name,kind,inputs,x_colour\n0,a,compute,,red\n", NULL},
    {"id,name,kind,inputs,id\n", "t.csv:1:5: duplicate column 'id'"},
    /* ids: duplicate (line 3 repeats 0), gap, not a number */
    {HDR "0,a,compute,\n0,b,compute,\n", "t.csv:3:1: duplicate id 0 (first on line 2)"},
    {HDR "0,a,compute,\n2,b,compute,\n", "t.csv:3:1: id 2 is not dense: expected 1"},
    {HDR "x,a,compute,\n", "t.csv:2:1: id 'x' is not a non-negative integer"},
    {HDR "0,a,compute,\n1,a,compute,\n", "t.csv:3:2: duplicate name 'a' (first on line 2)"},
    {HDR "0,,compute,\n", "t.csv:2:2: empty name"},
    /* the 10^12 us ceiling, in plain decimals and otherwise */
    {"id,name,kind,inputs,cost_us\n0,a,compute,,1000000000000\n", NULL},
    {"id,name,kind,inputs,cost_us\n0,a,compute,,1000000000000.5\n",
     "t.csv:2:5: cost_us '1000000000000.5' is above 10^12 (us)"},
    {"id,name,kind,inputs,cost_us\n0,a,compute,,1.0000000000001e12\n",
     "t.csv:2:5: cost_us '1.0000000000001e12' is above 10^12 (us)"},
    {"id,name,kind,inputs,cost_us\n0,a,compute,,1.5.2\n",
     "t.csv:2:5: cost_us '1.5.2' is not a number"},
    {"id,name,kind,inputs,cost_us\n0,a,compute,,.\n", "t.csv:2:5: cost_us '.' is not a number"},
    /* inputs must be earlier rows: a self-loop and a forward reference */
    {HDR "0,a,compute,0\n", "t.csv:2:4: input 0 is not an earlier row"},
    {HDR "0,a,compute,\n1,b,compute,9000\n", "t.csv:3:4: input 9000 is not an earlier row"},
    {HDR "0,a,compute,\n1,b,compute,0 z\n", "t.csv:3:4: input 'z' is not a node id"},
    {HDR "0,a,kernel,\n", "t.csv:2:3: unknown kind 'kernel'"},
    {"id,name,kind,inputs,coll\n0,a,start,,broadcast\n", "t.csv:2:5: unknown coll 'broadcast'"},
    {"id,name,kind,inputs,coll\n0,a,start,,\n1,a.d,done,0,\n", "t.csv:2:3: start node 'a' has no coll"},
    {"id,name,kind,inputs,coll\n0,a,compute,,all_gather\n", "t.csv:2:5: coll 'all_gather' on a compute node"},
    /* start/done pairing */
    {"id,name,kind,inputs,coll\n0,s,start,,all_gather\n", "t.csv:2: start 's' has no done"},
    {"id,name,kind,inputs,coll\n0,s,start,,all_gather\n1,d,done,0,\n2,d2,done,0,\n",
     "t.csv:4:4: start 0 already has a done (line 3)"},
    {HDR "0,a,compute,\n1,d,done,0\n", "t.csv:3:4: first input 0 of a done is a compute node, not a start"},
    {HDR "0,d,done,\n", "t.csv:2:4: done has no inputs"},
    {"id,name,kind,inputs,out_bytes\n0,a,input,,8\n1,b,input,0,8\n", "t.csv:3:4: an input node has no inputs"},
    /* numbers: negative, non-finite, overflowing, not numbers */
    {"id,name,kind,inputs,cost_us\n0,a,compute,,-1\n", "t.csv:2:5: cost_us '-1' is negative"},
    {"id,name,kind,inputs,cost_us\n0,a,compute,,inf\n", "t.csv:2:5: cost_us 'inf' is not finite"},
    {"id,name,kind,inputs,cost_us\n0,a,compute,,nan\n", "t.csv:2:5: cost_us 'nan' is not finite"},
    {"id,name,kind,inputs,cost_us\n0,a,compute,,1e999\n", "t.csv:2:5: cost_us '1e999' overflows"},
    {"id,name,kind,inputs,cost_us\n0,a,compute,,12us\n", "t.csv:2:5: cost_us '12us' is not a number"},
    {"id,name,kind,inputs,out_bytes\n0,a,compute,,18446744073709551616\n",
     "t.csv:2:5: out_bytes '18446744073709551616' is not an integer in 0..2^50 (1 PiB)"},
    /* issue 14: bounds that keep sums finite and exact */
    {"id,name,kind,inputs,out_bytes\n0,a,compute,,1125899906842625\n",
     "t.csv:2:5: out_bytes '1125899906842625' is not an integer in 0..2^50 (1 PiB)"},
    {"id,name,kind,inputs,out_bytes\n0,a,compute,,1125899906842624\n1,b,compute,,1125899906842624\n"
     "2,c,compute,,1125899906842624\n3,d,compute,,1125899906842624\n4,e,compute,,1125899906842624\n", NULL},
    {"id,name,kind,inputs,cost_us\n0,a,compute,,1e308\n",
     "t.csv:2:5: cost_us '1e308' is above 10^12 (us)"},
    {"id,name,kind,inputs,cost_us\n0,a,compute,,inf\n", "t.csv:2:5: cost_us 'inf' is not finite"},
    {"id,name,kind,inputs,out_bytes\n0,a,compute,,-8\n", "t.csv:2:5: out_bytes '-8' is negative"},
    {"id,name,kind,inputs,flags\n0,a,compute,,weight|shiny\n", "t.csv:2:5: unknown flag 'shiny'"},
    {"id,name,kind,inputs,device\n0,a,compute,,-1\n", "t.csv:2:5: device '-1' is not an index"},
    {"id,name,kind,inputs,group\n0,a,compute,,eight\n", "t.csv:2:5: group 'eight' is not a rank count"},
    {HDR "0,a,compute\n", "t.csv:2: row has 3 fields, the header has 4"},
    /* empty inputs */
    {"", "t.csv:1: empty file: no header row"},
    {"# name=x\n# ranks=8\n", "t.csv:3: empty file: no header row"},
    {HDR, "no nodes after the header"},
    /* accepted forms: metadata, CRLF, quoted fields with commas and newlines */
    {"# name=tiny\r\n" HDR "0,a,compute,\r\n1,\"b,c\",compute,0\r\n", NULL},
    {HDR "0,\"multi\nline\",compute,\n1,b,compute,\"0\"\n", NULL},
    {HDR "0,a,compute,\n\n1,b,compute,0\n", NULL},
};

/* NUL bytes (a field would end early) and the total of all buffers (the
 * memory model's signed sums), which the table above cannot express. */
static void test_bounds(void)
{
    struct sb_err e = {{0}};
    static const char nul[] = "id,name,kind,inputs\n0,a,com\0pute,\n";
    struct sb_graph *g = sb_csv_load_mem("t.csv", nul, sizeof nul - 1, &e);
    CHECK(g == NULL);
    CHECK_CONTAINS(e.msg, "t.csv:2:8: NUL byte");
    /* 4097 buffers of 2^50 bytes: 2^62 + 2^50 in all */
    size_t cap = 4200 * 40, n = 0;
    char *buf = malloc(cap);
    n += (size_t)snprintf(buf, cap, "id,name,kind,inputs,out_bytes\n");
    for (int i = 0; i < 4097; i++)
        n += (size_t)snprintf(buf + n, cap - n, "%d,n%d,compute,,1125899906842624\n", i, i);
    g = sb_csv_load_mem("big.csv", buf, n, &e);
    CHECK(g == NULL);
    CHECK_CONTAINS(e.msg, "big.csv: the buffers' out_bytes sum to more than 2^62 bytes (at node 4096)");
    free(buf);
}

static void test_cases(void)
{
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct sb_err e = {{0}};
        const char *csv = cases[i].csv;
        struct sb_graph *g = sb_csv_load_mem("t.csv", csv, strlen(csv), &e);
        if (cases[i].error) {
            CHECK(g == NULL);
            CHECK_CONTAINS(e.msg, cases[i].error);
        } else {
            CHECK(g != NULL);
            if (!g)
                fprintf(stderr, "case %zu: %s\n", i, e.msg);
        }
        sb_graph_free(g);
    }
}

/* A four-node graph with every column; checks what lands in the arrays. */
static void test_fields(void)
{
    const char *csv = "# name=four\n# ranks=8\n" HDR_ALL
                      "0,w,input,,,,1024,,,,,,weight\n"
                      "1,ag,start,0,all_gather,,8192,all_gather,8192,0 1 2 3 4 5 6 7,,,\n"
                      "2,ag.done,done,1,,,,,,,,,\n"
                      "3,mm,compute,2 0,mm,12.5,4096,,,,,2,output|weight\n";
    struct sb_err e;
    struct sb_graph *g = sb_csv_load_mem("f.csv", csv, strlen(csv), &e);
    CHECK(g != NULL);
    if (!g)
        return;
    CHECK(strcmp(g->name, "four") == 0);
    CHECK(strcmp(sb_graph_meta(g, "ranks"), "8") == 0);
    CHECK_EQ_U(g->v.n_nodes, 4);
    CHECK_EQ_U(g->v.n_edges, 4);
    CHECK_EQ_U(g->kind[1], SB_KIND_START);
    CHECK_EQ_U(g->coll[2], SB_COLL_ALL_GATHER); /* done inherits its start's */
    CHECK_EQ_U(g->partner[1], 2);
    CHECK_EQ_U(g->partner[2], 1);
    CHECK_EQ_U(g->partner[3], SB_NONE);
    CHECK_EQ_U(g->group_size[1], 8);
    CHECK_EQ_U(g->comm_bytes[1], 8192);
    CHECK(g->comm_us[1] < 0);
    CHECK_NEAR(g->cost_us[3], 12.5);
    CHECK_EQ_U(g->device[3], 2);
    CHECK(g->device[0] == -1);
    CHECK_EQ_U(g->flags[3], SB_FLAG_OUTPUT | SB_FLAG_WEIGHT);
    CHECK(strcmp(g->op_names[g->op[3]], "mm") == 0);
    CHECK(g->op[1] == g->op[1] && strcmp(g->op_names[g->op[1]], "all_gather") == 0);
    CHECK_EQ_U(g->op[2], 0);
    /* successors of 0 are 1 and 3, in id order */
    CHECK_EQ_U(g->succ_off[1] - g->succ_off[0], 2);
    CHECK_EQ_U(g->succ[g->succ_off[0]], 1);
    CHECK_EQ_U(g->succ[g->succ_off[0] + 1], 3);
    CHECK(strcmp(g->names + g->name_off[2], "ag.done") == 0);
    CHECK_EQ_U(sb_graph_n_collectives(g), 1);
    sb_graph_free(g);
}

/* Scheduling annotations (docs/workload-format.md): the view carries them,
 * rows without them get the defaults, and a write and a reload keep them. */
static void test_sched(void)
{
    const char *csv = "id,name,kind,inputs,sched_group,sched_hint,sched_priority,holds\n"
                      "0,a,compute,,,,,\n"
                      "1,b,compute,0,3,force_delay_async|keep_order,-2,\n"
                      "2,c,compute,1,0:1,,,all_gather:2|collective_permute:1\n"
                      "3,d,compute,2,,force_early,,\n";
    struct sb_err e;
    struct sb_graph *g = sb_csv_load_mem("s.csv", csv, strlen(csv), &e);
    CHECK(g != NULL);
    if (!g)
        return;
    for (int round = 0; round < 2 && g; round++) {
        CHECK(g->v.sched_group && g->v.sched_iter && g->v.sched_hint && g->v.sched_priority);
        if (!g->v.sched_group)
            break;
        CHECK(g->v.sched_group[0] == -1 && g->v.sched_iter[0] == SB_NO_ITER);
        CHECK_EQ_U(g->v.sched_hint[0], 0);
        CHECK(g->v.sched_group[1] == 3 && g->v.sched_iter[1] == SB_NO_ITER);
        CHECK_EQ_U(g->v.sched_hint[1], SB_HINT_FORCE_DELAY_ASYNC | SB_HINT_KEEP_ORDER);
        CHECK(g->v.sched_priority[1] == -2);
        CHECK(g->v.sched_group[2] == 0 && g->v.sched_iter[2] == 1);
        CHECK_EQ_U(g->v.sched_hint[3], SB_HINT_FORCE_EARLY);
        CHECK(g->v.sched_group[3] == -1 && g->v.sched_priority[3] == 0);
        CHECK(g->v.holds != NULL);
        if (g->v.holds) {
            CHECK_EQ_U(g->v.holds[2 * SB_COLL_COUNT + SB_COLL_ALL_GATHER], 2);
            CHECK_EQ_U(g->v.holds[2 * SB_COLL_COUNT + SB_COLL_COLLECTIVE_PERMUTE], 1);
            CHECK_EQ_U(g->v.holds[1 * SB_COLL_COUNT + SB_COLL_ALL_GATHER], 0);
        }
        if (round == 0) { /* the `convert` round trip */
            char path[64]; /* .csv: the loader goes by extension */
            snprintf(path, sizeof path, "/tmp/sb_test_sched_%ld.csv", (long)getpid());
            CHECK(sb_graph_write(g, path, &e) == 0);
            sb_graph_free(g);
            g = sb_graph_load(path, &e);
            CHECK(g != NULL);
            remove(path);
        }
    }
    sb_graph_free(g);
    /* a graph without the columns has no annotation arrays */
    const char *plain = HDR "0,a,compute,\n";
    g = sb_csv_load_mem("p.csv", plain, strlen(plain), &e);
    CHECK(g && !g->v.sched_group && !g->v.sched_hint && !g->v.holds);
    sb_graph_free(g);
}

/* Durations as written: every one must load as the double strtod gives for
 * its text, bit for bit (the loader takes a shortcut for plain decimals).
 * Deterministic pseudo-random texts: integers and decimals of 1-17 digits,
 * leading zeros, ".5" and "5." forms, exponents, near the 10^12 ceiling. */
static uint64_t lcg(uint64_t *x)
{
    *x = *x * 6364136223846793005ull + 1442695040888963407ull;
    return *x >> 33;
}

static void random_decimal(uint64_t *x, char *out, size_t cap)
{
    int digits = 1 + (int)(lcg(x) % 17), point = (int)(lcg(x) % (unsigned)(digits + 2)) - 1;
    size_t k = 0;
    for (int d = 0; d < digits && k + 8 < cap; d++) {
        if (d == point)
            out[k++] = '.';
        out[k++] = (char)('0' + lcg(x) % 10);
    }
    if (point == digits)
        out[k++] = '.';
    if (lcg(x) % 16 == 0) /* now and then an exponent: strtod's alone */
        k += (size_t)snprintf(out + k, cap - k, "e%d", (int)(lcg(x) % 7) - 3);
    out[k] = 0;
}

static void test_decimals(void)
{
    enum { N = 20000 };
    static char text[N][40];
    size_t cap = (size_t)N * 64, n = 0;
    char *buf = malloc(cap);
    uint64_t x = 12345;
    n += (size_t)snprintf(buf, cap, "id,name,kind,inputs,cost_us\n");
    for (int i = 0; i < N; i++) {
        char *t = text[i];
        double v;
        do { /* only values the loader accepts: finite, at most 10^12 */
            random_decimal(&x, t, sizeof text[i]);
            v = strtod(t, NULL);
        } while (!(v <= 1e12));
        n += (size_t)snprintf(buf + n, cap - n, "%d,n%d,compute,,%s\n", i, i, t);
    }
    struct sb_err e;
    struct sb_graph *g = sb_csv_load_mem("d.csv", buf, n, &e);
    CHECK(g != NULL);
    int differ = 0;
    for (int i = 0; g && i < N; i++) {
        double want = strtod(text[i], NULL);
        if (memcmp(&want, &g->cost_us[i], sizeof want) != 0 && differ++ < 5)
            fprintf(stderr, "cost_us '%s': loaded %.17g, strtod %.17g\n", text[i],
                    g->cost_us[i], want);
    }
    CHECK(differ == 0);
    sb_graph_free(g);
    free(buf);
}

/* Without "# name=" the workload is named after its file. */
static void test_file(void)
{
    struct sb_err e;
    struct sb_graph *g = sb_graph_load(SB_TEST_DATA "/chain.csv", &e);
    CHECK(g != NULL);
    if (g)
        CHECK(strcmp(g->name, "chain") == 0);
    sb_graph_free(g);
    g = sb_graph_load(SB_TEST_DATA "/does-not-exist.csv", &e);
    CHECK(g == NULL);
    CHECK_CONTAINS(e.msg, "does-not-exist.csv: cannot open");
}

int main(void)
{
    test_cases();
    test_bounds();
    test_decimals();
    test_fields();
    test_sched();
    test_file();
    return check_report();
}
