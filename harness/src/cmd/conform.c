/* schedbench conform DIR: runs the `aggressive` policy on the HLO modules of
 * XLA's latency-hiding-scheduler tests and checks what each test asserts.
 *
 * Each test is NAME.hlo plus NAME.expect (format: DIR/README.md).  For a test:
 * pass 1 reads the .expect (config, estimator, size function, fixtures,
 *        directives by computation) and decides whether we can run it at all;
 * pass 2 imports the module and, per computation named by the directives,
 *        builds its graph, applies XLA's fixture (estimator, config) and runs
 *        `aggressive` exactly as `schedbench run` would;
 * pass 3 checks every directive against the resulting order and prints one
 *        line: PASS, FAIL with the first failed directive and its positions, or
 *        SKIP with the reason.
 * The last line is "N passed, M failed[, K skipped]". */
#define _POSIX_C_SOURCE 200809L
#include "conform.h"
#include "commands.h"
#include "core/core.h"
#include "core/num.h"
#include "import/hlo.h"
#include "run.h"

#include <dirent.h>
#include <errno.h>
#include <string.h>

#define MAX_KV 64
#define MAX_DIRECTIVES 256

/* ---- the .expect file --------------------------------------------------------- */

enum dkind { D_BEFORE, D_IMMEDIATELY, D_SIZE, D_PEAK, D_MAX_IN_FLIGHT };

struct directive {
    enum dkind kind;
    uint32_t line;
    int comp;          /* index into expect.comp_name; 0 = ENTRY */
    char a[160], b[160];
    uint64_t n;
};

struct expect {
    int tier;
    uint32_t n_cfg;
    char cfg_key[MAX_KV][160], cfg_val[MAX_KV][160];
    char latency[160], sizes[160];
    uint32_t n_fix;
    char fixture[MAX_KV][160];
    uint32_t n_dir;
    struct directive dir[MAX_DIRECTIVES];
    uint32_t n_comp;
    char comp_name[16][160]; /* [0] = "" for ENTRY */
    char unknown[256];       /* first directive we do not know */
};

static char *trim(char *s)
{
    char *hash = strchr(s, '#');
    if (hash)
        *hash = 0;
    while (*s == ' ' || *s == '\t')
        s++;
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\n' || s[n - 1] == '\r'))
        s[--n] = 0;
    return s;
}

static int add_directive(struct expect *x, enum dkind k, uint32_t line, const char *a,
                         const char *b, uint64_t n)
{
    if (x->n_dir == MAX_DIRECTIVES)
        return -1;
    struct directive *d = &x->dir[x->n_dir++];
    d->kind = k;
    d->line = line;
    d->comp = (int)x->n_comp - 1;
    snprintf(d->a, sizeof d->a, "%s", a);
    snprintf(d->b, sizeof d->b, "%s", b);
    d->n = n;
    return 0;
}

/* A number of a directive, read strictly (core/num.h); a malformed one is
 * the .expect's first problem, as an unknown directive is. */
static uint64_t expect_num(struct expect *x, uint32_t line, const char *what, const char *s,
                           uint64_t hi)
{
    uint64_t v = 0;
    const char *why;
    if (sb_num_u64(s, 0, hi, &v, &why) && !x->unknown[0])
        snprintf(x->unknown, sizeof x->unknown, "line %u: %s '%.80s' is not an integer in "
                                                "0..%llu (%s)", line, what, s,
                 (unsigned long long)hi, why);
    return v;
}

/* One line of the .expect. */
static void read_line(struct expect *x, char *s, uint32_t line)
{
    char w[4][160] = {{0}};
    int k = sscanf(s, "%159s %159s %159s %159s", w[0], w[1], w[2], w[3]);
    if (k <= 0)
        return;
    if (!strcmp(w[0], "tier") && k == 2) {
        x->tier = (int)expect_num(x, line, "tier", w[1], 9);
    } else if (!strcmp(w[0], "config") && k == 2 && strchr(w[1], '=') && x->n_cfg < MAX_KV) {
        char *eq = strchr(w[1], '=');
        *eq = 0;
        snprintf(x->cfg_key[x->n_cfg], sizeof x->cfg_key[0], "%s", w[1]);
        snprintf(x->cfg_val[x->n_cfg++], sizeof x->cfg_val[0], "%s", eq + 1);
    } else if (!strcmp(w[0], "latency") && k == 2) {
        snprintf(x->latency, sizeof x->latency, "%s", w[1]);
    } else if (!strcmp(w[0], "sizes") && k == 2) {
        snprintf(x->sizes, sizeof x->sizes, "%s", w[1]);
    } else if (!strcmp(w[0], "fixture") && x->n_fix < MAX_KV) {
        /* the text after the word, which a bare "fixture" line does not have:
         * s + 8 would read past its end */
        const char *rest = strstr(s, "fixture") + 7;
        rest += strspn(rest, " \t");
        snprintf(x->fixture[x->n_fix++], sizeof x->fixture[0], "%.159s", rest);
    } else if (!strcmp(w[0], "computation") && k == 2 && x->n_comp < 16) {
        snprintf(x->comp_name[x->n_comp++], sizeof x->comp_name[0], "%s", w[1]);
    } else if (!strcmp(w[0], "before") && k == 3) {
        add_directive(x, D_BEFORE, line, w[1], w[2], 0);
    } else if (!strcmp(w[0], "immediately_before") && k == 3) {
        add_directive(x, D_IMMEDIATELY, line, w[1], w[2], 0);
    } else if (!strcmp(w[0], "size") && k == 2) {
        add_directive(x, D_SIZE, line, "", "", expect_num(x, line, "size", w[1], UINT64_MAX));
    } else if (!strcmp(w[0], "peak") && k == 2) {
        add_directive(x, D_PEAK, line, "", "", expect_num(x, line, "peak", w[1], UINT64_MAX));
    } else if (!strcmp(w[0], "max_in_flight") && k == 3) {
        add_directive(x, D_MAX_IN_FLIGHT, line, w[1], "",
                      expect_num(x, line, "max_in_flight", w[2], UINT32_MAX));
    } else if (!x->unknown[0]) {
        snprintf(x->unknown, sizeof x->unknown, "line %u: unknown directive '%s'", line, w[0]);
    }
}

/* The longest .expect line, with its newline: XLA's tests name instructions
 * of a few dozen characters; a longer line is refused, not read in pieces. */
#define MAX_EXPECT_LINE 4096

static int read_expect(const char *path, struct expect *x, struct sb_err *e)
{
    size_t n, at = 0;
    char *text = sb_read_file_limited(path, sb_max_input_bytes(), &n, e);
    if (!text)
        return -1;
    char buf[MAX_EXPECT_LINE];
    uint32_t line = 0;
    memset(x, 0, sizeof *x);
    x->n_comp = 1; /* ENTRY */
    while (at < n) {
        const char *nl = memchr(text + at, '\n', n - at);
        size_t len = nl ? (size_t)(nl - (text + at)) + 1 : n - at;
        line++;
        const char *nul = memchr(text + at, 0, len);
        if (nul || len >= sizeof buf) {
            if (nul)
                sb_errf(e, "%s:%u:%zu: NUL byte: not a text file", path, line,
                        (size_t)(nul - (text + at)) + 1);
            else
                sb_errf(e, "%s:%u: a line of %zu bytes; an .expect line has at most %d", path,
                        line, len - (nl != NULL), MAX_EXPECT_LINE - 2);
            free(text);
            return -1;
        }
        memcpy(buf, text + at, len);
        buf[len] = 0;
        at += len;
        read_line(x, trim(buf), line);
    }
    free(text);
    return 0;
}

/* ---- pass 1: what we can run ------------------------------------------------------ */

/* SchedulerConfig fields and the `aggressive` parameter each maps to; NULL =
 * a field with no effect under XLA's default AsyncTracker (accepted), "" = a
 * field we cannot model when set (the test is skipped). */
static const struct {
    const char *field, *param;
} config_map[] = {
    {"collective_permute_overlap_limit", "collective_permute_overlap_limit"},
    {"all_gather_overlap_limit", "all_gather_overlap_limit"},
    {"all_reduce_overlap_limit", "all_reduce_overlap_limit"},
    {"reduce_scatter_overlap_limit", "reduce_scatter_overlap_limit"},
    {"all_to_all_overlap_limit", "all_to_all_overlap_limit"},
    {"send_recv_overlap_limit", "send_recv_overlap_limit"},
    {"send_recv_host_overlap_limit", "send_recv_host_overlap_limit"},
    {"copy_overlap_limit", "copy_overlap_limit"},
    {"memory_limit", "memory_limit"},
    {"rerun", "rerun"},
    {"aggressive_scheduling_policies", "aggressive_scheduling_policies"},
    {"prioritize_async_depth_over_stall", "prioritize_async_depth_over_stall"},
    {"enable_release_start_policy", "enable_release_start_policy"},
    {"schedule_send_recvs", "schedule_send_recvs"},
    {"force_send_recv_to_use_same_resource", "force_send_recv_to_use_same_resource"},
    {"depth_based_memory_pressure_reduction", "depth_based_memory_pressure_reduction"},
    {"top_down_scheduling", "top_down_scheduling"},
    {"enable_schedule_by_structure", "enable_schedule_by_structure"},
    {"track_sync_op_resource_usage", "track_sync_op_resource_usage"},
    {"flexible_scheduling_annotation_scheduling", "flexible_scheduling_annotation_scheduling"},
    {"aggressive_flexible_annotation_scheduling", "aggressive_flexible_annotation_scheduling"},
    /* only in XLA's GPU tracker, or without effect on the default tracker */
    {"collective_broadcast_overlap_limit", NULL},
    {"ragged_all_to_all_overlap_limit", NULL},
    {"parallel_collective_overlap_limit", NULL},
    {"parallel_scale_up_collective_overlap_limit", NULL},
    {"parallel_async_compute_limit", NULL},
    {"max_hops_to_closest_selective_overlap", NULL},
    {"use_real_cost_model", NULL},
    {"resource_sharing", NULL},     /* the default tracker has no shareable resource */
    {"resource_serializing", NULL}, /* ... no serial resource */
    {"enable_selective_resources", NULL}, /* ... no selective resource */
    {"force_delay_over_memory_pressure", NULL}, /* no target rules */
    {"log_computation_re", NULL},
    /* annotations and heuristics the view cannot carry */
    {"deannotate_group_if_blocked", ""},

    {"estimate_fragmentation_size", ""},

};

/* XLA's struct defaults for the fields the fixture does not set. */
static const char *const config_defaults =
    "resources=per_type,memory_model=xla,aggressive_scheduling_policies=false,"
    "schedule_send_recvs=false,prioritize_async_depth_over_stall=false,"
    "enable_release_start_policy=false,top_down_scheduling=false,rerun=0,"
    /* SchedulerConfig's memory_limit is UINT64_MAX, not GPU's formula, and
     * XLA has no memory_guard */
    "memory_limit=none,memory_guard=false";

static int is_true(const char *v) { return !strcmp(v, "true") || !strcmp(v, "1"); }

/* Appends ",param=value" for each config line; a reason when one cannot run. */
static int map_config(const struct expect *x, char *spec, size_t n, char *why, size_t n_why)
{
    for (uint32_t i = 0; i < x->n_cfg; i++) {
        size_t k = 0, nk = sizeof config_map / sizeof config_map[0];
        while (k < nk && strcmp(config_map[k].field, x->cfg_key[i]) != 0)
            k++;
        if (k == nk) {
            snprintf(why, n_why, "config %s is not a SchedulerConfig field we know",
                     x->cfg_key[i]);
            return -1;
        }
        const char *p = config_map[k].param;
        if (p && !*p && is_true(x->cfg_val[i])) {
            snprintf(why, n_why, "config %s=true needs scheduling annotations or "
                                 "synchronous collectives, which the graph view cannot carry",
                     x->cfg_key[i]);
            return -1;
        }
        if (p && *p) {
            size_t len = strlen(spec);
            snprintf(spec + len, n - len, ",%s=%s", p, x->cfg_val[i]);
        }
    }
    return 0;
}

/* Whether the fixture lines are ones we can reproduce.  entry_point only
 * changes whether a computation without collectives is scheduled;
 * async_collective_creator=off keeps synchronous collectives whole (the
 * importer's keep_sync). */
static int check_fixtures(const struct expect *x, int *always, int *keep_sync, char *prior,
                          char *why, size_t n_why)
{
    *always = 0;
    *keep_sync = 0;
    prior[0] = 0;
    for (uint32_t i = 0; i < x->n_fix; i++) {
        const char *f = x->fixture[i];
        while (*f == ' ')
            f++;
        if (!strncmp(f, "entry_point=schedule_computation", 32)) {
            *always = 1;
            continue;
        }
        if (!strcmp(f, "async_collective_creator=off")) {
            *keep_sync = 1;
            continue;
        }
        if (!strncmp(f, "prior_run ", 10) && strchr(f + 10, '=')) {
            snprintf(prior, 160, "%s", f + 10); /* KEY=VALUE of the first run */
            continue;
        }
        snprintf(why, n_why, "fixture '%s' is not reproduced (it needs hooks into XLA's "
                             "scheduler)", f);
        return -1;
    }
    return 0;
}

/* ---- pass 2: scheduling one computation ------------------------------------------------ */

/* XLA TestLatencyEstimator (latency_hiding_scheduler_test.cc): node costs and
 * collective-permute latencies from shapes; every other edge 1. */
static void test_estimator(const struct sb_hlo_module *m, int comp, struct sb_hlo_graph *hg)
{
    struct sb_graph *g = hg->g;
    for (uint32_t v = 0; v < g->v.n_nodes; v++) {
        struct sb_hlo_instr_info in;
        sb_hlo_instr(m, (uint32_t)comp, hg->node[v].instr, &in);
        double cost = 1;
        const char *kind = in.fusion_kind ? in.fusion_kind : "";
        int fusion = hg->node[v].half == 0 && !strcmp(in.opcode, "fusion");
        if (fusion && !strcmp(kind, "kLoop"))
            cost = in.is_tuple ? 1000 : (double)in.elems;
        else if (hg->node[v].half == 0 && ((fusion && !strcmp(kind, "kOutput")) ||
                                          !strcmp(in.opcode, "convolution")))
            cost = in.is_tuple ? 5000 : 1000.0 * (double)in.elems;
        g->cost_us[v] = cost;
        g->dur_us[v] = g->kind[v] == SB_KIND_COMPUTE ? cost : 0;
        if (g->kind[v] == SB_KIND_START) {
            int cp = hg->node[v].half ? !strcmp(in.opcode, "collective-permute")
                                      : !strcmp(in.opcode, "collective-permute-start");
            g->dur_us[v] = cp ? (double)in.op0_elems : 1;
        }
    }
    g->v.edge_lat_us = 1;
}

/* The opcode XLA's final sequence shows for a node. */
static void final_opcode(const struct sb_hlo_module *m, int comp, const struct sb_hlo_node *n,
                         char *buf, size_t len)
{
    struct sb_hlo_instr_info in;
    sb_hlo_instr(m, (uint32_t)comp, n->instr, &in);
    snprintf(buf, len, "%s%s", in.opcode, n->half == 1 ? "-start" : n->half == 2 ? "-done" : "");
}

struct run {
    struct sb_hlo_graph hg;
    int comp;
    uint32_t *pos; /* [n] position of each node in the final sequence */
    uint32_t *order;
};

static void run_free(struct run *r)
{
    sb_hlo_graph_free(&r->hg);
    free(r->pos);
    free(r->order);
}

static int schedule(const struct sb_hlo_module *m, const char *comp, const char *spec,
                    int test_est, int keep_sync, struct run *r, char *why, size_t n_why)
{
    struct sb_hlo_opts o = {.computation = comp, .keep_sync = keep_sync};
    struct sb_err e;
    struct sb_sched sched;
    struct sb_schedule s;
    memset(r, 0, sizeof *r);
    r->comp = sb_hlo_find_computation(m, comp);
    if (r->comp < 0 || sb_hlo_build(m, &o, &r->hg, &e)) {
        snprintf(why, n_why, "%s", r->comp < 0 ? "no such computation" : e.msg);
        return -1;
    }
    if (test_est)
        test_estimator(m, r->comp, &r->hg);
    if (sb_sched_parse(&sched, spec, &e)) {
        snprintf(why, n_why, "%s", e.msg);
        return -1;
    }
    sb_schedule_init(&s, r->hg.g, 1);
    int rc = sb_sched_run(&sched, r->hg.g, &s, &e);
    if (!rc && sb_schedule_validate(&r->hg.g->v, &s, &e))
        rc = -1;
    if (rc)
        snprintf(why, n_why, "aggressive: %s", e.msg);
    uint32_t n = r->hg.g->v.n_nodes;
    r->pos = sb_xmalloc((size_t)n * sizeof *r->pos);
    r->order = sb_xmalloc((size_t)n * sizeof *r->order);
    for (uint32_t i = 0; i < n; i++) {
        r->order[i] = s.order[i];
        r->pos[s.order[i]] = i;
    }
    sb_schedule_free(&s);
    sb_sched_free(&sched);
    return rc;
}

/* ---- XLA's GetMemoryPeak, replayed on the final order ------------------------------------ */

/* Called computations count too: before a node's buffers are made live,
 * XLA's MemoryPressureTracker::UpdateBuffers raises the peak to the live
 * bytes plus the largest peak among the node's called non-fusion
 * computations (latency_hiding_scheduler.cc at 183fa00).  A callee's peak
 * comes from ModulePressureState::ResetPressureStates: the same bottom-up
 * walk over the callee's own sequence (its text order), starting from 0 live
 * bytes, where
 * - an operand's buffer is made live unless it is an entry parameter's; the
 *   parameters of a control-flow callee (async wrapper, call, while,
 *   conditional) hold their caller's operands (HloDataflowAnalysis), already
 *   counted by the caller, so they are not counted here, while those of an
 *   embedded reducer (to_apply of all-reduce, reduce, ...) define their own
 *   buffers and are;
 * - parameters are never released (ShouldSkipBufferReleases);
 * - get-tuple-element and bitcast own no buffer (they view operand 0's).
 * The model keeps one buffer per instruction (tuple_sum bytes), which is
 * what the corpus's callees need: reducers and single-collective wrappers. */
#define MAX_CALL_DEPTH 64

static int64_t calls_peak(const struct sb_hlo_module *m, const struct sb_hlo_instr_info *in,
                          int depth);

static int instr_index(const struct sb_hlo_module *m, uint32_t c, const char *name)
{
    struct sb_hlo_instr_info in;
    for (uint32_t i = 0; i < sb_hlo_n_instrs(m, c); i++) {
        sb_hlo_instr(m, c, i, &in);
        if (!strcmp(in.name, name))
            return (int)i;
    }
    return -1;
}

static int64_t callee_peak(const struct sb_hlo_module *m, int c, int embedded, int depth)
{
    if (c < 0 || depth > MAX_CALL_DEPTH)
        return 0;
    uint32_t n = sb_hlo_n_instrs(m, (uint32_t)c);
    uint8_t *live = sb_xcalloc(n ? n : 1, 1);
    int64_t mem = 0, peak = 0;
    for (uint32_t i = n; i-- > 0;) {
        struct sb_hlo_instr_info in, op;
        sb_hlo_instr(m, (uint32_t)c, i, &in);
        int64_t cp = calls_peak(m, &in, depth + 1);
        if (mem + cp > peak)
            peak = mem + cp;
        for (uint32_t k = 0; k < in.n_ops; k++) {
            int j = instr_index(m, (uint32_t)c, in.ops[k]);
            for (int hops = 0; j >= 0 && hops < (int)n; hops++) { /* views: to the owner */
                sb_hlo_instr(m, (uint32_t)c, (uint32_t)j, &op);
                if ((strcmp(op.opcode, "get-tuple-element") && strcmp(op.opcode, "bitcast")) ||
                    !op.n_ops)
                    break;
                j = instr_index(m, (uint32_t)c, op.ops[0]);
            }
            if (j < 0 || live[j] || (!embedded && !strcmp(op.opcode, "parameter")))
                continue;
            live[j] = 1;
            mem += (int64_t)op.bytes;
        }
        if (mem > peak)
            peak = mem;
        if (live[i] && strcmp(in.opcode, "parameter") != 0) {
            live[i] = 0;
            mem -= (int64_t)in.bytes;
        }
    }
    free(live);
    return peak;
}

/* The largest peak among the computations an instruction calls (fusion
 * bodies excepted); to_apply is embedded except under `call`. */
static int64_t calls_peak(const struct sb_hlo_module *m, const struct sb_hlo_instr_info *in,
                          int depth)
{
    int64_t best = 0, p;
    if (!strcmp(in->opcode, "fusion"))
        return 0;
    for (uint32_t k = 0; k < in->n_calls; k++)
        if ((p = callee_peak(m, sb_hlo_find_computation(m, in->calls[k]), 0, depth)) > best)
            best = p;
    if (in->apply && (p = callee_peak(m, sb_hlo_find_computation(m, in->apply),
                                      strcmp(in->opcode, "call") != 0, depth)) > best)
        best = p;
    return best;
}

/* The bottom-up MemoryPressureTracker on the final sequence: scheduling a node
 * first raises the peak to the live bytes plus its callees' peak (above), then
 * makes the buffers it reads live (graph inputs excepted, as XLA skips entry
 * parameters), then frees the buffer it defines; the peak is taken in between.
 *
 * MemoryPressureTrackingWithAsyncCollective (peak 20,496, final order p0, c0,
 * c1, all-reduce.start, all-reduce.done, root) derived by hand, bottom-up with
 * f32[1024] = 4,096 bytes:
 *   root  reads c1 and the done's buffer (the all-reduce `ar` in the wrapper,
 *         aliased by start{1} and the done)                    live  8,192
 *   done  calls async_computation (peak 8, see below): 8,192 + 8 = 8,200;
 *         reads the start's buffers: the tuple {} (4,096 + 4,096 + 4 =
 *         8,196), {0} (4,096) and the u32 context {2} (4); {0,0} is p0,
 *         an entry parameter, not counted                      live 20,488
 *   start calls async_computation: 20,488 + 8 = 20,496 = the peak; then
 *         releases its own buffers.
 * async_computation's peak: `ar` calls `sum`, whose `add` reads the two f32[]
 * parameters a and b (4 bytes each; a reducer's parameters are its own
 * buffers, never released): 8.  `ar` reads p, which holds p0 (not counted).
 * Without the callee term the peak is 20,488: those 8 bytes of `sum`'s
 * parameters are what the test's comment calls "tuple pointer overhead". */
static uint64_t xla_peak(const struct sb_hlo_module *m, int comp, const struct sb_hlo_node *hn,
                         const struct sb_graph *G, const uint32_t *order)
{
    const struct sb_graph_view *g = &G->v;
    uint32_t n = g->n_nodes;
    uint32_t *root = sb_xmalloc((size_t)n * sizeof *root);
    uint8_t *live = sb_xcalloc(n, 1);
    int64_t mem = 0, peak = 0;
    for (uint32_t v = 0; v < n; v++) {
        int views = (g->flags[v] & SB_FLAG_ALIAS) || g->kind[v] == SB_KIND_DONE;
        root[v] = views ? root[g->pred[g->pred_off[v]]] : v;
    }
    for (uint32_t i = n; i-- > 0;) {
        uint32_t v = order[i];
        if (hn[v].half != 2) { /* a split collective's done calls nothing */
            struct sb_hlo_instr_info in;
            sb_hlo_instr(m, (uint32_t)comp, hn[v].instr, &in);
            int64_t cp = calls_peak(m, &in, 0);
            if (mem + cp > peak)
                peak = mem + cp;
        }
        for (int pass = 0; pass < 2; pass++) {
            uint32_t u = pass ? g->partner[v] : v; /* a done reads its start's inputs */
            if (pass && g->kind[v] != SB_KIND_DONE)
                break;
            for (uint32_t e = g->pred_off[u]; e < g->pred_off[u + 1]; e++) {
                uint32_t b = root[g->pred[e]];
                if (!live[b] && g->kind[b] != SB_KIND_INPUT) {
                    live[b] = 1;
                    mem += (int64_t)g->out_bytes[b];
                }
            }
        }
        if (mem > peak)
            peak = mem;
        if (root[v] == v && live[v]) {
            live[v] = 0;
            mem -= (int64_t)g->out_bytes[v];
        }
    }
    free(root);
    free(live);
    return (uint64_t)peak;
}

/* ---- pass 3: directives -------------------------------------------------------------------- */

static int node_named(const struct sb_graph *g, const char *name)
{
    for (uint32_t v = 0; v < g->v.n_nodes; v++)
        if (!strcmp(g->v.names + g->v.name_off[v], name))
            return (int)v;
    return -1;
}

static int check_order(const struct run *r, const struct directive *d, char *why, size_t n)
{
    const struct sb_graph *g = r->hg.g;
    int a = node_named(g, d->a), b = node_named(g, d->b);
    if (a < 0 || b < 0) {
        snprintf(why, n, "line %u: no instruction named '%s'", d->line, a < 0 ? d->a : d->b);
        return -1;
    }
    uint32_t pa = r->pos[a], pb = r->pos[b];
    int ok = d->kind == D_BEFORE ? pa < pb : pb == pa + 1;
    if (!ok)
        snprintf(why, n, "line %u: %s %s %s: pos(%s)=%u, pos(%s)=%u", d->line,
                 d->kind == D_BEFORE ? "before" : "immediately_before", d->a, d->b, d->a, pa,
                 d->b, pb);
    return ok ? 0 : -1;
}

static int check_in_flight(const struct sb_hlo_module *m, const struct run *r,
                           const struct directive *d, char *why, size_t n)
{
    /* d->a is an opcode name, far shorter than these buffers; sized so that
     * the suffix always fits (gcc checks it at -O0 with sanitizers) */
    char start[sizeof d->a + 8], done[sizeof d->a + 8], op[192];
    int64_t open = 0, worst = 0;
    uint32_t at = 0;
    snprintf(start, sizeof start, "%s-start", d->a);
    snprintf(done, sizeof done, "%s-done", d->a);
    for (uint32_t i = 0; i < r->hg.g->v.n_nodes; i++) {
        final_opcode(m, r->comp, &r->hg.node[r->order[i]], op, sizeof op);
        open += !strcmp(op, start) - !strcmp(op, done);
        if (open > worst) {
            worst = open;
            at = i;
        }
    }
    if ((uint64_t)worst <= d->n)
        return 0;
    snprintf(why, n, "line %u: max_in_flight %s %llu: %lld in flight at position %u", d->line,
             d->a, (unsigned long long)d->n, (long long)worst, at);
    return -1;
}

static int check(const struct sb_hlo_module *m, const struct run *r, const struct directive *d,
                 char *why, size_t n)
{
    switch (d->kind) {
    case D_BEFORE:
    case D_IMMEDIATELY:
        return check_order(r, d, why, n);
    case D_SIZE:
        if (r->hg.g->v.n_nodes == d->n)
            return 0;
        snprintf(why, n, "line %u: size %llu: the sequence has %u instructions", d->line,
                 (unsigned long long)d->n, r->hg.g->v.n_nodes);
        return -1;
    case D_PEAK: {
        uint64_t p = xla_peak(m, r->comp, r->hg.node, r->hg.g, r->order);
        if (p == d->n)
            return 0;
        snprintf(why, n, "line %u: peak %llu: the tracker's peak is %llu", d->line,
                 (unsigned long long)d->n, (unsigned long long)p);
        return -1;
    }
    default:
        return check_in_flight(m, r, d, why, n);
    }
}

/* ---- one test -------------------------------------------------------------------------------- */

enum verdict { V_PASS, V_FAIL, V_SKIP };

/* XLA schedules each computation on its own (callees first); only those the
 * directives look at are run. */
static int has_directives(const struct expect *x, uint32_t c)
{
    for (uint32_t k = 0; k < x->n_dir; k++)
        if (x->dir[k].comp == (int)c)
            return 1;
    return 0;
}

/* `--scheduler NAME` runs another policy (without the test's config) on the
 * same checks: a control showing the directives can fail. */
static const char *other_scheduler;

/* fixture prior_run: XLA ran the whole pipeline once before the checked run,
 * which starts from the schedule it wrote.  Each computation is scheduled
 * with the first run's spec, callees first (text order, the ENTRY last), and
 * the module's instruction order becomes that schedule, so the checked run
 * starts from it and a while's `holds` are counted on its body's new order.
 * Needs one node per instruction (no split collective, no fusion group). */
static int prior_run(struct sb_hlo_module *m, const char *spec, int test_est, int keep_sync,
                     char *why, size_t n_why)
{
    int entry = sb_hlo_find_computation(m, NULL);
    uint32_t n_comp = sb_hlo_n_computations(m);
    for (uint32_t k = 0; k <= n_comp; k++) {
        uint32_t c = k < n_comp ? k : (uint32_t)entry;
        if (k < n_comp && (int)k == entry)
            continue;
        struct run r;
        char err[512];
        const char *name = sb_hlo_computation_name(m, c);
        if (schedule(m, (int)c == entry ? NULL : name, spec, test_est, keep_sync, &r, err,
                     sizeof err)) {
            run_free(&r);
            if ((int)c == entry) {
                snprintf(why, n_why, "fixture prior_run: the first run failed: %s", err);
                return -1;
            }
            continue; /* a computation conform cannot build keeps its order */
        }
        uint32_t n = r.hg.g->v.n_nodes, ok = n == sb_hlo_n_instrs(m, c);
        uint32_t *order = sb_xmalloc((n ? n : 1) * sizeof *order);
        for (uint32_t i = 0; i < n && ok; i++) {
            ok = r.hg.node[r.order[i]].half == 0;
            order[i] = r.hg.node[r.order[i]].instr;
        }
        if (!ok || sb_hlo_reorder(m, c, order)) {
            snprintf(why, n_why, "fixture prior_run: computation '%s' does not map one node "
                                 "per instruction, so its first schedule cannot be written back",
                     name);
            free(order);
            run_free(&r);
            return -1;
        }
        free(order);
        run_free(&r);
    }
    return 0;
}

static enum verdict check_support(const struct expect *x, int *always, int *keep_sync,
                                  char *spec, size_t n_spec, char *prior_spec, char *why,
                                  size_t n_why)
{
    char prior[160];
    if (x->unknown[0]) {
        snprintf(why, n_why, "%s", x->unknown);
        return V_SKIP;
    }
    if (strcmp(x->sizes, "tuple_sum") != 0 ||
        (strcmp(x->latency, "approximate") != 0 && strcmp(x->latency, "test") != 0)) {
        snprintf(why, n_why, "unknown size function '%s' or estimator '%s'", x->sizes,
                 x->latency);
        return V_SKIP;
    }
    snprintf(spec, n_spec, "aggressive:estimator=%s,%s%s",
             !strcmp(x->latency, "test") ? "workload" : "approximate", config_defaults,
             "");
    if (check_fixtures(x, always, keep_sync, prior, why, n_why))
        return V_SKIP;
    prior_spec[0] = 0;
    if (prior[0]) { /* the first run's spec: the file's config with KEY=VALUE */
        struct expect *px = sb_xmalloc(sizeof *px);
        char *eq = strchr(prior, '=');
        uint32_t k = 0;
        memcpy(px, x, sizeof *px);
        *eq = 0;
        while (k < px->n_cfg && strcmp(px->cfg_key[k], prior) != 0)
            k++;
        if (k == px->n_cfg && k < MAX_KV)
            snprintf(px->cfg_key[px->n_cfg++], sizeof px->cfg_key[0], "%s", prior);
        if (k < MAX_KV)
            snprintf(px->cfg_val[k], sizeof px->cfg_val[0], "%s", eq + 1);
        snprintf(prior_spec, n_spec, "%s", spec);
        int rc = map_config(px, prior_spec, n_spec, why, n_why);
        free(px);
        if (rc)
            return V_SKIP;
    }
    if (map_config(x, spec, n_spec, why, n_why))
        return V_SKIP;
    if (*always) {
        size_t len = strlen(spec);
        snprintf(spec + len, n_spec - len, ",schedule_without_collectives=true");
    }
    if (other_scheduler)
        snprintf(spec, n_spec, "%s", other_scheduler);
    return V_PASS;
}

static enum verdict run_test(const char *dir, const char *name, int *tier, char *why,
                             size_t n_why)
{
    char path[4096], spec[2048];
    struct expect *x = sb_xcalloc(1, sizeof *x);
    struct sb_err e;
    enum verdict v = V_FAIL;
    struct sb_hlo_module *m = NULL;
    snprintf(path, sizeof path, "%s/%s.expect", dir, name);
    if (read_expect(path, x, &e)) {
        snprintf(why, n_why, "%s", e.msg);
        goto out;
    }
    *tier = x->tier;
    snprintf(path, sizeof path, "%s/%s.hlo", dir, name);
    size_t len = 0;
    char *buf = sb_read_file_limited(path, sb_max_input_bytes(), &len, &e);
    m = buf ? sb_hlo_parse(path, buf, len, &e) : NULL;
    free(buf);
    if (!m) {
        snprintf(why, n_why, "%s", e.msg);
        goto out;
    }
    int always;
    int keep_sync;
    char prior_spec[sizeof spec];
    v = check_support(x, &always, &keep_sync, spec, sizeof spec, prior_spec, why, n_why);
    if (v == V_PASS && prior_spec[0] && !other_scheduler &&
        prior_run(m, prior_spec, !strcmp(x->latency, "test"), keep_sync, why, n_why))
        v = V_SKIP;
    if (v != V_PASS)
        goto out;
    for (uint32_t c = 0; c < x->n_comp && v == V_PASS; c++) {
        struct run r;
        if (!has_directives(x, c))
            continue;
        int test_est = !strcmp(x->latency, "test");
        if (schedule(m, c ? x->comp_name[c] : NULL, spec, test_est, keep_sync, &r, why,
                     n_why)) {
            v = V_FAIL;
        } else {
            for (uint32_t k = 0; k < x->n_dir && v == V_PASS; k++)
                if (x->dir[k].comp == (int)c && check(m, &r, &x->dir[k], why, n_why))
                    v = V_FAIL;
        }
        run_free(&r);
    }
out:
    sb_hlo_free(m);
    free(x);
    return v;
}

/* ---- the command ------------------------------------------------------------------------------ */

/* Test names (NAME of NAME.expect) in DIR, sorted. */
static char **list_tests(const char *dir, uint32_t *n, struct sb_err *e)
{
    struct sb_paths w = {0};
    *n = 0;
    if (sb_paths_suffix(&w, dir, ".expect", 1)) {
        sb_errf(e, "%s: cannot open: %s", dir, strerror(errno));
        return NULL;
    }
    if (!w.n)
        sb_errf(e, "%s: no .expect files", dir);
    *n = w.n;
    return w.path;
}

/* --tier N: whether the test's .expect says `tier N` (any test without N). */
static int in_tier(const char *dir, const char *name, int tier)
{
    char path[4096];
    struct sb_err e;
    if (!tier)
        return 1;
    struct expect *x = sb_xcalloc(1, sizeof *x);
    snprintf(path, sizeof path, "%s/%s.expect", dir, name);
    int in = read_expect(path, x, &e) == 0 && x->tier == tier;
    free(x);
    return in;
}

static int usage(FILE *f)
{
    fprintf(f, "usage: schedbench conform DIR [--only NAME] [--tier N] [--scheduler SPEC]\n"
               "Runs `aggressive` on each NAME.hlo of DIR under the configuration in\n"
               "NAME.expect (XLA's latency-hiding-scheduler tests, see DIR/README.md) and\n"
               "checks the test's assertions: one PASS/FAIL/SKIP line per test, then\n"
               "\"N passed, M failed[, K skipped]\".  Exit status 1 if any test failed.\n"
               "--tier N keeps the tests of one tier (README: 1 = single computation,\n"
               "no annotations or fixtures).\n"
               "--scheduler runs another scheduler spec instead, without the tests'\n"
               "configuration (a control: `--scheduler original` should fail tests).\n"
               "A DIR of *.case files is ggml's scheduler cases; of *.solcase, XLA GPU's\n"
               "SoL collective model tests (tests/data/xla-sol); of *.perfcase, XLA's GPU\n"
               "performance model tests (tests/data/xla-perf); a DIR of NAME.icase +\n"
               "NAME.csv is PyTorch Inductor's pass tests (workloads/conform/inductor);\n"
               "there --param POLICY:KEY=VALUE adds KEY=VALUE to every case run by POLICY\n"
               "(switching one rule off to see which cases need it).\n");
    return f == stderr ? 2 : 0;
}

int sb_cmd_conform(int argc, char **argv)
{
    const char *dir = NULL, *only = NULL, *param = NULL;
    int tier_only = 0;
    struct sb_opt_seen once = {0};
    for (int i = 1; i < argc; i++) {
        struct sb_err oe;
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
            return usage(stdout);
        if (i + 1 < argc &&
            (!strcmp(argv[i], "--only") || !strcmp(argv[i], "--scheduler") ||
             !strcmp(argv[i], "--tier") || !strcmp(argv[i], "--param")) &&
            sb_opt_once(&once, "conform", argv[i], argv[i + 1], &oe)) {
            fprintf(stderr, "%s\n", oe.msg);
            return 2;
        }
        if (!strcmp(argv[i], "--only") && i + 1 < argc)
            only = argv[++i];
        else if (!strcmp(argv[i], "--param") && i + 1 < argc)
            param = argv[++i];
        else if (!strcmp(argv[i], "--scheduler") && i + 1 < argc)
            other_scheduler = argv[++i];
        else if (!strcmp(argv[i], "--tier") && i + 1 < argc) {
            uint64_t t;
            const char *why;
            if (sb_num_u64(argv[++i], 1, 9, &t, &why)) {
                fprintf(stderr, "schedbench conform: --tier '%s' is not an integer in 1..9 "
                                "(%s)\n", argv[i], why);
                return 2;
            }
            tier_only = (int)t;
        }
        else if (!dir && argv[i][0] != '-')
            dir = argv[i];
        else
            return usage(stderr);
    }
    if (!dir)
        return usage(stderr);
    if (sb_conform_has_ggml_cases(dir)) /* ggml's scheduler cases, not XLA's */
        return sb_conform_ggml(dir);
    if (param && !strchr(param, ':')) {
        fprintf(stderr, "schedbench conform: --param '%s' is not POLICY:KEY=VALUE\n", param);
        return 2;
    }
    if (sb_conform_has_inductor_cases(dir)) /* PyTorch Inductor's pass tests */
        return sb_conform_inductor(dir, only, other_scheduler, param);
    if (param) {
        fprintf(stderr, "schedbench conform: --param applies to Inductor cases (NAME.icase) "
                        "only; %s has none\n", dir);
        return 2;
    }
    if (sb_conform_has_sol_cases(dir)) /* XLA's SoL cost model, not its scheduler */
        return sb_conform_sol(dir);
    if (sb_conform_has_perf_cases(dir)) /* XLA's GPU performance model */
        return sb_conform_perf(dir);
    struct sb_err e;
    uint32_t n, counts[3] = {0};
    char **names = list_tests(dir, &n, &e);
    if (!names) {
        fprintf(stderr, "schedbench conform: %s\n", e.msg);
        return 2;
    }
    static const char *const label[] = {"PASS", "FAIL", "SKIP"};
    uint32_t by_tier[3][3] = {{0}};
    for (uint32_t i = 0; i < n; i++) {
        char why[1024] = "";
        int tier = 0;
        if ((!only || !strcmp(only, names[i])) && in_tier(dir, names[i], tier_only)) {
            enum verdict v = run_test(dir, names[i], &tier, why, sizeof why);
            counts[v]++;
            by_tier[tier == 1 ? 1 : tier == 2 ? 2 : 0][v]++;
            printf("%s %s (tier %d)%s%s\n", label[v], names[i], tier, why[0] ? ": " : "",
                   why);
        }
        free(names[i]);
    }
    free(names);
    for (int t = 1; t <= 2; t++)
        printf("tier %d: %u passed, %u failed, %u skipped\n", t, by_tier[t][V_PASS],
               by_tier[t][V_FAIL], by_tier[t][V_SKIP]);
    printf("%u passed, %u failed", counts[V_PASS], counts[V_FAIL]);
    if (counts[V_SKIP])
        printf(", %u skipped", counts[V_SKIP]);
    printf("\n");
    return counts[V_FAIL] ? 1 : 0;
}
