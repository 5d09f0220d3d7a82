/* Plugin loading: built-ins, dlopen of the same policy as a module, each
 * refusal with both values in its message, and parameter parsing. */
#include "check.h"
#include "core/builder.h"
#include "core/core.h"
#include "import/import.h"

static void test_builtins(void)
{
    sb_registry_add_builtins();
    CHECK(sb_plugin_find("original") != NULL);
    CHECK(sb_plugin_find("nonesuch") == NULL);
    /* a module of a built-in policy collides with it by name */
    struct sb_err e;
    CHECK(sb_registry_load(SB_PLUGIN_DIR "/sb_original.so", &e) != 0);
    CHECK_CONTAINS(e.msg, "duplicate scheduler name 'original', already registered by built-in");
    sb_registry_clear();
    CHECK_EQ_U(sb_registry_count(), 0);
}

static void test_module(void)
{
    struct sb_err e;
    CHECK(sb_registry_load(SB_PLUGIN_DIR "/sb_original.so", &e) == 0);
    const struct sb_plugin *p = sb_plugin_find("original");
    CHECK(p != NULL);
    /* the module's schedule is the file order, like the built-in's */
    struct sb_graph *g = sb_graph_load(SB_TEST_DATA "/chain.csv", &e);
    struct sb_sched sc;
    struct sb_schedule s;
    CHECK(g && sb_sched_parse(&sc, "original", &e) == 0);
    if (g && sc.p) {
        sb_schedule_init(&s, g, 1);
        CHECK(sb_sched_run(&sc, g, &s, &e) == 0);
        for (uint32_t i = 0; i < g->v.n_nodes; i++)
            CHECK_EQ_U(s.order[i], i);
        sb_schedule_free(&s);
        sb_sched_free(&sc);
    }
    sb_graph_free(g);
    sb_registry_clear();
}

static void test_refusals(void)
{
    struct sb_err e;
    CHECK(sb_registry_load(SB_TEST_PLUGIN_DIR "/bad_abi.so", &e) != 0);
    CHECK_CONTAINS(e.msg, "plugin ABI is 99, this host speaks ABI 1 to 2");
    CHECK(sb_registry_load(SB_TEST_PLUGIN_DIR "/small_size.so", &e) != 0);
    CHECK_CONTAINS(e.msg, "descriptor size is 16 bytes, ABI 2 needs at least");
    CHECK(sb_registry_load(SB_TEST_PLUGIN_DIR "/no_entry.so", &e) != 0);
    CHECK_CONTAINS(e.msg, "missing entry symbol sb_plugin_entry");
    CHECK(sb_registry_load(SB_TEST_PLUGIN_DIR "/nonexistent.so", &e) != 0);
    CHECK_CONTAINS(e.msg, "cannot load plugin");
    CHECK_EQ_U(sb_registry_count(), 0);
    /* the same module twice: the second is a duplicate of the first */
    CHECK(sb_registry_load(SB_TEST_PLUGIN_DIR "/misbehave.so", &e) == 0);
    CHECK(sb_registry_load(SB_TEST_PLUGIN_DIR "/misbehave.so", &e) != 0);
    CHECK_CONTAINS(e.msg, "duplicate scheduler name 'misbehave', already registered by");
    CHECK_EQ_U(sb_registry_count(), 1);
}

static void test_params(void)
{
    struct sb_err e;
    struct sb_sched s;
    /* defaults, in declaration order: mode reverse (0), scale 1.5, count 3, loud 0,
     * budget none (NAN: the plugin sees that it was not given) */
    CHECK(sb_sched_parse(&s, "misbehave", &e) == 0);
    CHECK_NEAR(s.param[0], 0);
    CHECK_NEAR(s.param[1], 1.5);
    CHECK_NEAR(s.param[2], 3);
    CHECK_NEAR(s.param[3], 0);
    CHECK(isnan(s.param[4]));
    sb_sched_free(&s);
    CHECK(sb_sched_parse(&s, "misbehave:mode=fail,scale=2.5,count=8,loud=on", &e) == 0);
    CHECK_NEAR(s.param[0], 1);
    CHECK_NEAR(s.param[1], 2.5);
    CHECK_NEAR(s.param[2], 8);
    CHECK_NEAR(s.param[3], 1);
    CHECK(strcmp(s.spec, "misbehave:mode=fail,scale=2.5,count=8,loud=on") == 0);
    sb_sched_free(&s);
    CHECK(sb_sched_parse(&s, "misbehave:speed=3", &e) != 0);
    CHECK_CONTAINS(e.msg, "unknown parameter 'speed' (known: mode, scale, count, loud, budget)");
    CHECK(sb_sched_parse(&s, "misbehave:count=9", &e) != 0);
    CHECK_CONTAINS(e.msg, "count='9' is not an integer in 1..8");
    CHECK(sb_sched_parse(&s, "misbehave:count=2.5", &e) != 0);
    CHECK(sb_sched_parse(&s, "misbehave:mode=sideways", &e) != 0);
    CHECK_CONTAINS(e.msg, "is not one of reverse|fail|initfail");
    CHECK(sb_sched_parse(&s, "misbehave:loud=maybe", &e) != 0);
    CHECK(sb_sched_parse(&s, "misbehave:scale", &e) != 0);
    CHECK_CONTAINS(e.msg, "is not key=value");
    CHECK(sb_sched_parse(&s, "nonesuch", &e) != 0);
    CHECK_CONTAINS(e.msg, "unknown scheduler 'nonesuch'");
}

/* A size parameter (SB_PARAM_BYTES) goes through core/size.c, whose own table
 * is test_size.c; here: the host passes whole bytes, and its refusals name the
 * scheduler, the key, the text, the range and the reason. */
static double budget_of(const char *spec)
{
    struct sb_err e;
    struct sb_sched s;
    if (sb_sched_parse(&s, spec, &e)) {
        fprintf(stderr, "%s: %s\n", spec, e.msg);
        return -1;
    }
    double v = s.param[4];
    sb_sched_free(&s);
    return v;
}

static void test_size_param(void)
{
    struct sb_err e;
    struct sb_sched s;
    /* 80GB = 80 * 10^9; 80GiB = 80 * 2^30 = 85899345920; 1PB = 10^15, the maximum */
    CHECK_NEAR(budget_of("misbehave:budget=80GB"), 8e10);
    CHECK_NEAR(budget_of("misbehave:budget=80GiB"), 85899345920.0);
    CHECK_NEAR(budget_of("misbehave:budget=1PB"), 1e15);
    CHECK(sb_sched_parse(&s, "misbehave:budget=80G", &e) != 0);
    CHECK_CONTAINS(e.msg, "scheduler 'misbehave': budget='80G' is not a size: a unit letter "
                          "alone is ambiguous");
    CHECK_CONTAINS(e.msg, "(write bytes, or a number with a unit: B, KB,");
    CHECK(sb_sched_parse(&s, "misbehave:budget=-5GB", &e) != 0);
    CHECK_CONTAINS(e.msg, "budget='-5GB' is not a size: negative");
    CHECK(sb_sched_parse(&s, "misbehave:budget=lots", &e) != 0);
    CHECK_CONTAINS(e.msg, "budget='lots' is not a size: not a number");
    CHECK(sb_sched_parse(&s, "misbehave:budget=0", &e) != 0); /* below min 1 */
    CHECK_CONTAINS(e.msg, "budget='0' is 0 bytes, outside 1..1000000000000000");
    /* 1PB + 1 byte, above max */
    CHECK(sb_sched_parse(&s, "misbehave:budget=1000000000000001", &e) != 0);
    CHECK_CONTAINS(e.msg, "is 1000000000000001 bytes, outside 1..1000000000000000");
    /* 1.5PiB = 1.5 * 2^50 = 1688849860263936 */
    CHECK(sb_sched_parse(&s, "misbehave:budget=1.5PiB", &e) != 0);
    CHECK_CONTAINS(e.msg, "budget='1.5PiB' is 1688849860263936 bytes, outside");
    CHECK(sb_sched_parse(&s, "misbehave:budget=99999999999999999999", &e) != 0);
    CHECK_CONTAINS(e.msg, "is not a size: above 18446744073709551615 bytes");
    /* a double parameter still refuses "nan", so NAN means "not given" only */
    CHECK(sb_sched_parse(&s, "misbehave:scale=nan", &e) != 0);
}

static void test_failures(void)
{
    struct sb_err e;
    struct sb_sched sc;
    struct sb_schedule s;
    struct sb_graph *g = sb_graph_load(SB_TEST_DATA "/chain.csv", &e);
    if (!g) {
        CHECK(0);
        return;
    }
    CHECK(sb_sched_parse(&sc, "misbehave:mode=fail", &e) == 0);
    sb_schedule_init(&s, g, 1);
    CHECK(sb_sched_run(&sc, g, &s, &e) != 0);
    CHECK_CONTAINS(e.msg, "no schedule for 4 nodes");
    sb_schedule_free(&s);
    sb_sched_free(&sc);
    CHECK(sb_sched_parse(&sc, "misbehave:mode=initfail", &e) == 0);
    sb_schedule_init(&s, g, 1);
    CHECK(sb_sched_run(&sc, g, &s, &e) != 0);
    CHECK_CONTAINS(e.msg, "init refused: count=3");
    sb_schedule_free(&s);
    sb_sched_free(&sc);
    /* a reversed order runs, and the validator catches it */
    CHECK(sb_sched_parse(&sc, "misbehave", &e) == 0);
    sb_schedule_init(&s, g, 1);
    CHECK(sb_sched_run(&sc, g, &s, &e) == 0);
    CHECK(sb_schedule_validate(&g->v, &s, &e) != 0);
    CHECK_CONTAINS(e.msg, "before its input");
    sb_schedule_free(&s);
    sb_sched_free(&sc);
    sb_graph_free(g);
}

/* ABI 2 moved the stride of `holds` from 11 collective types to 13.  Node 1
 * (a while) holds 2 all_gathers and 1 collective_broadcast: an ABI 2 plugin
 * finds them at 1 * 13 + type, an ABI 1 plugin the all_gather at
 * 1 * 11 + SB_COLL_ALL_GATHER and no broadcast it could not name.  Each
 * plugin fails its run when the layout it reads is not the one it was
 * built for. */
static int holds_check(const struct sb_graph_view *g, struct sb_schedule *out, uint32_t stride)
{
    const uint32_t *h = g->holds;
    if (!h || h[0 * stride + SB_COLL_ALL_GATHER] != 0 || h[1 * stride + SB_COLL_ALL_GATHER] != 2)
        return sb_plugin_fail(out->err, out->n_err, "holds not at stride %u", stride);
    if (stride == SB_COLL_COUNT && h[1 * stride + SB_COLL_COLLECTIVE_BROADCAST] != 1)
        return sb_plugin_fail(out->err, out->n_err, "no broadcast at stride %u", stride);
    for (uint32_t i = 0; i < g->n_nodes; i++)
        out->order[i] = i;
    return 0;
}
static int run_abi1(void *st, const struct sb_graph_view *g, struct sb_schedule *out)
{
    (void)st;
    return holds_check(g, out, 11); /* SB_COLL_COUNT in ABI 1's header */
}
static int run_abi2(void *st, const struct sb_graph_view *g, struct sb_schedule *out)
{
    (void)st;
    return holds_check(g, out, SB_COLL_COUNT);
}

static void test_holds_abi1(void)
{
    static const struct sb_plugin p1 = {.abi = 1, .size = sizeof p1, .name = "abi1", .run = run_abi1};
    static const struct sb_plugin p2 = {
        .abi = SB_PLUGIN_ABI, .size = sizeof p2, .name = "abi2", .run = run_abi2};
    struct sb_err e = {{0}};
    CHECK(sb_registry_add(&p1, "test", &e) == 0);
    CHECK(sb_registry_add(&p2, "test", &e) == 0);
    struct sb_builder *b = sb_builder_new("t.bin", SB_LOC_NODE_ID, &e);
    struct sb_node_in n = SB_NODE_IN_INIT;
    n.name = "in", n.kind = SB_KIND_INPUT, n.out_bytes = 8;
    sb_builder_node(b, &n);
    n = (struct sb_node_in)SB_NODE_IN_INIT;
    n.name = "loop", n.op = "while", n.loc = 1;
    n.holds[SB_COLL_ALL_GATHER] = 2, n.holds[SB_COLL_COLLECTIVE_BROADCAST] = 1;
    sb_builder_node(b, &n);
    CHECK(sb_builder_input(b, 0) == 0);
    struct sb_graph *g = sb_builder_finish(b);
    CHECK(g != NULL && g->v.holds != NULL);
    const char *names[] = {"abi1", "abi2"};
    for (int k = 0; g && k < 2; k++) {
        struct sb_sched sc;
        struct sb_schedule s;
        CHECK(sb_sched_parse(&sc, names[k], &e) == 0);
        sb_schedule_init(&s, g, 1);
        CHECK(sb_sched_run(&sc, g, &s, &e) == 0);
        if (e.msg[0])
            fprintf(stderr, "%s: %s\n", names[k], e.msg);
        sb_schedule_free(&s);
        sb_sched_free(&sc);
    }
    sb_graph_free(g);
    sb_registry_clear();
}

int main(void)
{
    test_builtins();
    test_module();
    test_refusals();
    test_params();
    test_size_param();
    test_failures();
    test_holds_abi1();
    sb_registry_clear();
    return check_report();
}
