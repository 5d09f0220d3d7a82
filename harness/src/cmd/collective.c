/* `schedbench collective`: the end time of one collective under ASTRA-sim's
 * model, and `--golden FILE`: every case of ASTRA-sim's own outputs
 * (../shared/corpus/astra-golden/golden_cases.json) against it. */
#define _POSIX_C_SOURCE 200809L
#include "commands.h"
#include "net/astra.h"
#include "net/inductor_comm.h"
#include "import/import.h"
#include "core/num.h"
#include "core/size.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --size: the one size parser (core/size.h), as every size in the tool */
static int parse_size(const char *s, uint64_t *out)
{
    const char *why;
    return sb_size_parse(s, out, &why);
}

/* "0,2,4,6": a communicator group's physical ranks in ring order */
static int parse_group(const char *v, uint32_t *ranks, uint32_t *n)
{
    *n = 0;
    for (const char *p = v;;) {
        size_t len = strcspn(p, ",");
        char *one = sb_strf("%.*s", (int)len, p);
        uint64_t r;
        const char *why;
        int bad = sb_num_u64(one, 0, 1u << 20, &r, &why);
        free(one);
        if (bad || *n == 1024)
            return -1;
        for (uint32_t i = 0; i < *n; i++)
            if (ranks[i] == r)
                return -1; /* a rank twice */
        ranks[(*n)++] = (uint32_t)r;
        if (!p[len])
            return 0;
        p += len + 1;
    }
}

/* ---- golden cases ----------------------------------------------------------- */

static int dims_from(json_t *net, struct sb_astra_config *c, const char **why)
{
    json_t *topo = json_object_get(net, "topology"), *npus = json_object_get(net, "npus_count");
    json_t *bw = json_object_get(net, "bandwidth_GBps"), *lat = json_object_get(net, "latency_ns");
    size_t n = json_array_size(topo);
    if (!n || n > SB_ASTRA_MAX_DIMS || json_array_size(npus) != n || json_array_size(bw) != n ||
        json_array_size(lat) != n)
        return *why = "network arrays of different lengths", -1;
    c->n_dims = (uint32_t)n;
    for (size_t i = 0; i < n; i++) {
        const char *t = json_string_value(json_array_get(topo, i));
        if (!t || sb_astra_parse_topo(t, &c->topo[i]))
            return *why = "unknown topology", -1;
        c->npus[i] = (uint32_t)json_integer_value(json_array_get(npus, i));
        c->bw_gbps[i] = json_number_value(json_array_get(bw, i));
        c->latency_ns[i] = json_number_value(json_array_get(lat, i));
    }
    return 0;
}

static int system_from(json_t *sys, struct sb_astra_config *c, const char **why)
{
    static const char *const impl[4] = {"all-reduce-implementation", "all-gather-implementation",
                                        "reduce-scatter-implementation",
                                        "all-to-all-implementation"};
    const char *pol = json_string_value(json_object_get(sys, "scheduling-policy"));
    c->lifo = !pol || strcmp(pol, "FIFO") != 0;
    c->endpoint_delay = json_number_value(json_object_get(sys, "endpoint-delay"));
    c->active_chunks = (uint32_t)json_integer_value(json_object_get(sys, "active-chunks-per-dimension"));
    c->splits = (uint32_t)json_integer_value(json_object_get(sys, "preferred-dataset-splits"));
    c->local_mem_bw = json_number_value(json_object_get(sys, "local-mem-bw"));
    const char *opt = json_string_value(json_object_get(sys, "collective-optimization"));
    c->local_bw_aware = opt && !strcmp(opt, "localBWAware");
    if (!c->active_chunks || !c->splits || !(c->local_mem_bw > 0))
        return *why = "system values out of range", -1;
    for (int op = 0; op < 4; op++) {
        json_t *a = json_object_get(sys, impl[op]);
        for (uint32_t d = 0; d < c->n_dims; d++) {
            const char *s = json_string_value(json_array_get(a, d < json_array_size(a) ? d : 0));
            if (!s || sb_astra_parse_algo(s, &c->algo[op][d]))
                return *why = "unknown collective implementation", -1;
        }
    }
    return 0;
}

/* Every group of a --comm-group-configuration runs its collective at once, on
 * its own (the analytical network is congestion-unaware): the slowest ends
 * last. */
static double groups_end(const struct sb_astra_config *c, json_t *groups, enum sb_astra_op op,
                         uint64_t bytes, struct sb_err *e)
{
    const char *key;
    json_t *members;
    double end = 0;
    json_object_foreach(groups, key, members) {
        uint32_t ranks[1024], n = 0;
        size_t i;
        json_t *r;
        if (json_array_size(members) > 1024)
            return sb_errf(e, "group %s: more than 1024 ranks", key), -1;
        json_array_foreach(members, i, r) ranks[n++] = (uint32_t)json_integer_value(r);
        struct sb_astra_plan p;
        if (sb_astra_plan_group(c, op, bytes, ranks, n, &p, e))
            return -1;
        struct sb_astra_sys *s = sb_astra_sys_new(c);
        double t = sb_astra_sys_wait(s, sb_astra_sys_issue(s, &p, 0));
        sb_astra_sys_free(s);
        if (t > end)
            end = t;
    }
    return end;
}

/* A DAG case (ASTRA-sim's workload layer): our workload DIR/<id>.csv run in
 * file order, one collective in flight (ASTRA-sim's workload layer issues
 * one per NPU at a time); the makespan and the exposed communication in ns. */
static int dag_case(const struct sb_astra_config *c, int aware, const char *dir,
                    const char *id, double got[2], struct sb_err *e)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.csv", dir, id);
    struct sb_graph *g = sb_graph_load(path, e);
    if (!g)
        return -1;
    struct sb_cost_params cp;
    sb_cost_defaults(&cp);
    sb_cost_apply(&cp, g);
    struct sb_schedule s;
    int rc = sb_astra_apply(c, aware, g, e);
    sb_schedule_init(&s, g, 1);
    for (uint32_t i = 0; i < g->v.n_nodes; i++)
        s.order[i] = i;
    if (!rc)
        rc = sb_schedule_validate(&g->v, &s, e);
    if (!rc) {
        struct sb_sim_config sc;
        struct sb_sim_result r;
        struct sb_comm_queue q;
        sb_sim_defaults(&sc);
        sb_astra_comm_queue(c, &q);
        sc.queue = aware ? NULL : &q; /* aware: each collective alone, one at a time */
        sb_sim_run(g, &s, &sc, &r);
        got[0] = round(r.makespan_us * 1000);
        got[1] = round(r.exposed_comm_us * 1000);
        sb_sim_result_free(&r);
    }
    sb_schedule_free(&s);
    sb_graph_free(g);
    return rc;
}

static int cmp_ns(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Where ASTRA-sim's ranks end at different times (per_rank_distinct_end_ns),
 * ours must end at the same distinct times: 0 yes, 1 no, 2 not applicable. */
static int rank_ends_match(json_t *cs, json_t *exp, int aware)
{
    json_t *want = json_object_get(exp, "per_rank_distinct_end_ns");
    json_t *w = json_object_get(cs, "workload");
    struct sb_astra_config c;
    enum sb_astra_op op;
    const char *why, *type = json_string_value(json_object_get(w, "comm_type"));
    struct sb_err e;
    double end[1024];
    if (!want || !type || sb_astra_parse_op(type, &op) || json_object_get(cs, "comm_group"))
        return 2;
    sb_astra_defaults(&c);
    if (dims_from(json_object_get(cs, "network"), &c, &why) ||
        system_from(json_object_get(cs, "system"), &c, &why) || c.npus[0] > 1024 ||
        sb_astra_rank_ends(&c, aware, op,
                           (uint64_t)json_integer_value(json_object_get(w, "comm_size_bytes")),
                           end, &e))
        return 1;
    qsort(end, c.npus[0], sizeof *end, cmp_ns);
    size_t k = 0;
    for (uint32_t i = 0; i < c.npus[0]; i++)
        if (!i || end[i] != end[i - 1]) {
            if (k >= json_array_size(want) || end[i] != json_number_value(json_array_get(want, k)))
                return 1;
            k++;
        }
    return k == json_array_size(want) ? 0 : 1;
}

/* The congestion-aware backend on a single-collective case: 0 pass, 1 fail,
 * 2 skip (why set), 3 refused as ASTRA-sim refuses (why: its error), 4 not an
 * aware case. */
static int aware_case(json_t *cs, const char *dags, double *got, double *want, const char **why,
                      struct sb_err *e)
{
    json_t *w = json_object_get(cs, "workload");
    json_t *aw = json_object_get(json_object_get(cs, "expected"), "congestion_aware");
    struct sb_astra_config c;
    enum sb_astra_op op;
    sb_astra_defaults(&c);
    const char *upstream_error = json_string_value(json_object_get(aw, "error"));
    if (!aw)
        return 4; /* not run on the aware backend */
    if (!upstream_error && !json_object_get(aw, "end_ns"))
        return *why = "ASTRA-sim's congestion-aware backend gives no end time", 2;
    const char *type = json_string_value(json_object_get(w, "comm_type"));
    if (dims_from(json_object_get(cs, "network"), &c, why) ||
        system_from(json_object_get(cs, "system"), &c, why))
        return 2;
    *want = upstream_error ? -1 : json_number_value(json_object_get(aw, "end_ns"));
    if (!type || sb_astra_parse_op(type, &op)) { /* a DAG, under run --comm astra-aware */
        double t[2];
        if (!dags)
            return *why = "a DAG of compute and collectives (give --dags DIR)", 2;
        if (dag_case(&c, 1, dags, json_string_value(json_object_get(cs, "id")), t, e))
            return *why = e->msg, 2;
        *got = t[0];
        return *got == *want &&
                       t[1] == json_number_value(json_object_get(aw, "exposed_comm_ns"))
                   ? 0
                   : 1;
    }
    uint64_t bytes = (uint64_t)json_integer_value(json_object_get(w, "comm_size_bytes"));
    json_t *groups = json_object_get(cs, "comm_group"), *members;
    uint32_t ranks[1024], len[64], n = 0, n_g = 0;
    const char *key;
    json_object_foreach(groups, key, members) {
        size_t i;
        json_t *r;
        if (n_g == 64 || n + json_array_size(members) > 1024)
            return *why = "more than 64 groups or 1024 ranks", 2;
        len[n_g++] = (uint32_t)json_array_size(members);
        json_array_foreach(members, i, r) ranks[n++] = (uint32_t)json_integer_value(r);
    }
    *got = sb_astra_aware(&c, op, bytes, n_g ? ranks : NULL, n_g ? len : NULL, n_g, e);
    if (upstream_error) { /* ASTRA-sim refuses, crashes or never ends: so must we refuse */
        *why = upstream_error;
        return *got < 0 ? 3 : 1;
    }
    if (*got < 0)
        return *why = e->msg, 2;
    return *got == *want && rank_ends_match(cs, aw, 1) != 1 ? 0 : 1;
}

/* 0 pass, 1 fail, 2 skip (why set), 3 refused as ASTRA-sim refuses (why: its
 * error); got/want: end and exposed ns */
static int one_case(json_t *cs, const char *dags, double got[2], double want[2],
                    const char **why, struct sb_err *e)
{
    json_t *w = json_object_get(cs, "workload");
    json_t *exp = json_object_get(json_object_get(cs, "expected"), "congestion_unaware");
    const char *id = json_string_value(json_object_get(cs, "id"));
    struct sb_astra_config c;
    enum sb_astra_op op;
    sb_astra_defaults(&c);
    const char *type = json_string_value(json_object_get(w, "comm_type"));
    const char *upstream_error = json_string_value(json_object_get(exp, "error"));
    if (!exp || (!upstream_error && !json_object_get(exp, "end_ns")))
        return *why = "ASTRA-sim itself gives no end time", 2;
    if (dims_from(json_object_get(cs, "network"), &c, why) ||
        system_from(json_object_get(cs, "system"), &c, why))
        return 2;
    if (upstream_error) {
        /* ASTRA-sim crashes or never ends: refusing is right; a time is
         * reported as a skip, since nothing can check it */
        if (!type || sb_astra_parse_op(type, &op))
            return *why = upstream_error, 2;
        got[0] = sb_astra_collective(&c, op,
                                     (uint64_t)json_integer_value(
                                         json_object_get(w, "comm_size_bytes")), e);
        *why = upstream_error;
        return got[0] < 0 ? 3 : 2;
    }
    want[0] = json_number_value(json_object_get(exp, "end_ns"));
    want[1] = json_number_value(json_object_get(exp, "exposed_comm_ns"));
    if (!type || sb_astra_parse_op(type, &op)) {
        if (!dags)
            return *why = "a DAG of compute and collectives (give --dags DIR)", 2;
        if (dag_case(&c, 0, dags, id, got, e))
            return *why = e->msg, 2;
        return got[0] == want[0] && got[1] == want[1] ? 0 : 1;
    }
    uint64_t bytes = (uint64_t)json_integer_value(json_object_get(w, "comm_size_bytes"));
    json_t *groups = json_object_get(cs, "comm_group");
    got[0] = groups ? groups_end(&c, groups, op, bytes, e) : sb_astra_collective(&c, op, bytes, e);
    if (got[0] < 0)
        return *why = e->msg, 2;
    got[1] = got[0]; /* nothing to overlap it with: all exposed */
    return got[0] == want[0] && got[1] == want[1] && rank_ends_match(cs, exp, 0) != 1 ? 0 : 1;
}

static int golden(const char *path, const char *dags)
{
    json_error_t je;
    struct sb_err re;
    size_t n;
    char *text = sb_read_file_limited(path, sb_max_input_bytes(), &n, &re);
    if (!text || sb_check_nesting(path, text, n, 1, SB_MAX_NESTING, &re)) {
        fprintf(stderr, "%s\n", re.msg);
        free(text);
        return 2;
    }
    json_t *root = json_loadb(text, n, 0, &je);
    free(text);
    if (!root) {
        fprintf(stderr, "%s:%d:%d: %s\n", path, je.line, je.column, je.text);
        return 2;
    }
    json_t *cases = json_object_get(root, "cases");
    uint32_t pass = 0, fail = 0, skip = 0, refused = 0;
    uint32_t apass = 0, afail = 0, askip = 0, arefused = 0;
    for (size_t i = 0; i < json_array_size(cases); i++) {
        json_t *cs = json_array_get(cases, i);
        const char *id = json_string_value(json_object_get(cs, "id"));
        double got[2] = {0, 0}, want[2] = {0, 0};
        const char *why = NULL;
        struct sb_err e;
        int r = one_case(cs, dags, got, want, &why, &e);
        if (r == 3) {
            refused++;
            printf("PASS %s: refused (%s); ASTRA-sim: %s\n", id, e.msg, why);
        } else if (r == 0) {
            pass++;
            printf("PASS %s: %.0f ns, exposed %.0f ns\n", id, got[0], got[1]);
        } else if (r == 1) {
            fail++;
            printf("FAIL %s: %.0f ns, exposed %.0f ns; ASTRA-sim %.0f ns, exposed %.0f ns%s\n",
                   id, got[0], got[1], want[0], want[1],
                   got[0] == want[0] && got[1] == want[1] ? " (the ranks' end times differ)" : "");
        } else {
            skip++;
            printf("SKIP %s: %s\n", id, why);
        }
        double ag = 0, aw = 0;
        r = aware_case(cs, dags, &ag, &aw, &why, &e);
        if (r == 3) {
            arefused++;
            printf("PASS %s (aware): refused (%s); ASTRA-sim: %s\n", id, e.msg, why);
        } else if (r == 0) {
            apass++;
            printf("PASS %s (aware): %.0f ns\n", id, ag);
        } else if (r == 1) {
            afail++;
            printf("FAIL %s (aware): %.0f ns, ASTRA-sim %.0f ns%s\n", id, ag, aw,
                   ag == aw ? " (the ranks' end times differ)" : "");
        } else if (r == 2) {
            askip++;
            printf("SKIP %s (aware): %s\n", id, why);
        }
    }
    printf("congestion-aware: %u passed, %u failed, %u skipped; %u refused where ASTRA-sim "
           "refuses, crashes or never ends\n", apass, afail, askip, arefused);
    printf("congestion-unaware: %u passed, %u failed, %u skipped; %u refused where ASTRA-sim "
           "refuses, crashes or never ends\n", pass, fail, skip, refused);
    json_decref(root);
    return fail || afail ? 1 : 0;
}

/* ---- one collective --------------------------------------------------------------- */

/* --backend inductor-*: the estimate in ns and what it chose */
static int inductor_one(enum sb_inductor_model m, const struct sb_nccl_params *p,
                        enum sb_astra_op op, uint64_t bytes, uint32_t npus)
{
    static const enum sb_nccl_coll of[] = {SB_NCCL_ALL_REDUCE, SB_NCCL_ALL_GATHER,
                                           SB_NCCL_REDUCE_SCATTER, SB_NCCL_ALL_TO_ALL};
    static const char *const algo[] = {"tree", "ring"}, *const proto[] = {"LL", "LL128",
                                                                          "Simple"};
    struct sb_nccl_choice ch;
    double ms = sb_inductor_coll_ms(m, p, of[op], bytes, npus, &ch);
    printf("%.1f %s %s\n", ms * 1e6, algo[ch.algo], proto[ch.proto]);
    return 0;
}

static int usage(FILE *f)
{
    fprintf(f, "usage: schedbench collective --op OP [--algo ALGO] [--npus N] [--size BYTES]\n"
               "                             [--bw GBPS] [--latency NS] [--topology T]\n"
               "                             [--splits S] [--active A] [--endpoint-delay NS]\n"
               "                             [--local-mem-bw GBPS] [--system F.json]\n"
               "                             [--network F.yml] [--group R,R,...]\n"
               "                             [--backend unaware|aware]\n"
               "       schedbench collective --backend inductor-classic|inductor-multi --op OP\n"
               "                             [--npus N] [--size BYTES] [--cost K=V,...]\n"
               "       schedbench collective --golden golden_cases.json [--dags DIR]\n"
               "\n"
               "Prints the end time in ns of one collective on one dimension under\n"
               "ASTRA-sim's system layer and congestion-unaware analytical network\n"
               "(docs/astra.md).  Defaults are ASTRA-sim's tests/rt_template: ring, 8 NPUs,\n"
               "50 GB/s (GiB), 500 ns, Ring topology, 4 splits, 1 active chunk, endpoint\n"
               "delay 10 ns, local memory 50 GB/s.  OP: all_reduce, all_gather (size is\n"
               "each rank's input), reduce_scatter, all_to_all.  ALGO: ring, direct,\n"
               "halvingDoubling.  T: Ring, FullyConnected, Switch.  BYTES: 1MiB, 64KiB,\n"
               "1048576, ...  --group: a communicator group's physical NPUs in ring order,\n"
               "on a network of one dimension.  --backend aware: ASTRA-sim's congestion-aware\n"
               "backend (FIFO links, a network of one dimension), simulated message by\n"
               "message.  --dags DIR: the golden cases that are DAGs\n"
               "of compute and collectives run as DIR/<case id>.csv.\n"
               "--backend inductor-classic|inductor-multi: PyTorch Inductor's NCCL estimator\n"
               "instead (docs/cost-model.md): prints its time in ns, then the algorithm and\n"
               "protocol it chose; --size is the estimator's bytes argument, --npus the\n"
               "group size, --cost the run command's keys (gpu=, intra_node_bw=, ...).\n");
    return f == stdout ? 0 : 2;
}

int sb_cmd_collective(int argc, char **argv)
{
    struct sb_astra_config c;
    enum sb_astra_op op = SB_OP_ALL_REDUCE;
    uint64_t size = 1048576;
    int have_op = 0, files = 0, have_algo = 0;
    const char *golden_path = NULL, *dags = NULL;
    uint32_t group[1024], n_group = 0;
    int aware = 0, inductor = 0;
    uint8_t algo = 0;
    struct sb_cost_params cost;
    sb_cost_defaults(&cost);
    sb_astra_defaults(&c);
    /* pass 1: the whole line, each option once; the files first, so that an
     * option overrides a file's value wherever it stands on the line */
    struct sb_opt_seen once = {0};
    const char *file[2] = {NULL, NULL}; /* --system, --network */
    for (int i = 1; i < argc; i += 2) { /* every option takes a value */
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        struct sb_err e;
        if (!strcmp(a, "--help") || !strcmp(a, "-h"))
            return usage(stdout);
        if (!v) {
            fprintf(stderr, "schedbench collective: %s needs a value\n", a);
            return 2;
        }
        if (sb_opt_once(&once, "collective", a, v, &e)) {
            fprintf(stderr, "%s\n", e.msg);
            return 2;
        }
        if (!strcmp(a, "--system") || !strcmp(a, "--network"))
            file[a[2] == 'n'] = v;
    }
    for (int k = 0; k < 2; k++) {
        struct sb_err e;
        if (file[k] && (k ? sb_astra_load_network(file[k], &c, &e)
                          : sb_astra_load_system(file[k], &c, &e))) {
            fprintf(stderr, "%s\n", e.msg);
            return 2;
        }
        files |= file[k] != NULL;
    }
    /* pass 2: the options */
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = argv[i + 1];
        i++;
        /* numbers read strictly (core/num.h): a time or a bandwidth within
         * the machines' ceilings, a count a whole number */
        double x = 0;
        const char *why;
        int num_ok = !sb_num_real(v, 0, 1e15, &x, &why);
        uint64_t u = 0;
        int int_ok = !sb_num_u64(v, 1, 1u << 20, &u, &why);
        int bad = 0;
        if (!strcmp(a, "--golden"))
            golden_path = v;
        else if (!strcmp(a, "--dags"))
            dags = v;
        else if (!strcmp(a, "--group"))
            bad = parse_group(v, group, &n_group);
        else if (!strcmp(a, "--backend")) {
            inductor = !strcmp(v, "inductor-classic") ? SB_INDUCTOR_CLASSIC
                       : !strcmp(v, "inductor-multi") ? SB_INDUCTOR_MULTI
                                                      : 0;
            bad = !inductor && strcmp(v, "aware") && strcmp(v, "unaware");
            aware = !strcmp(v, "aware");
        } else if (!strcmp(a, "--cost")) {
            struct sb_err ce;
            if (sb_cost_parse(&cost, v, &ce)) {
                fprintf(stderr, "schedbench collective: --cost: %s\n", ce.msg);
                return 2;
            }
        }
        else if (!strcmp(a, "--system") || !strcmp(a, "--network"))
            continue; /* read in pass 1 */
        else if (!strcmp(a, "--op"))
            bad = sb_astra_parse_op(v, &op), have_op = 1;
        else if (!strcmp(a, "--algo"))
            bad = sb_astra_parse_algo(v, &algo), have_algo = 1;
        else if (!strcmp(a, "--topology"))
            bad = sb_astra_parse_topo(v, &c.topo[0]);
        else if (!strcmp(a, "--size"))
            bad = parse_size(v, &size);
        else if (!strcmp(a, "--npus"))
            bad = !int_ok, c.npus[0] = (uint32_t)u;
        else if (!strcmp(a, "--bw"))
            bad = !num_ok || x < SB_MIN_GBPS || x > SB_MAX_GBPS, c.bw_gbps[0] = x;
        else if (!strcmp(a, "--latency"))
            bad = !num_ok, c.latency_ns[0] = x;
        else if (!strcmp(a, "--splits"))
            bad = !int_ok, c.splits = (uint32_t)u;
        else if (!strcmp(a, "--active"))
            bad = !int_ok, c.active_chunks = (uint32_t)u;
        else if (!strcmp(a, "--endpoint-delay"))
            bad = !num_ok, c.endpoint_delay = x;
        else if (!strcmp(a, "--local-mem-bw"))
            bad = !num_ok || x < SB_MIN_GBPS || x > SB_MAX_GBPS, c.local_mem_bw = x;
        else {
            fprintf(stderr, "schedbench collective: unknown option '%s'\n", a);
            return usage(stderr);
        }
        if (bad) {
            fprintf(stderr, "schedbench collective: %s '%s' is not valid (see --help)\n", a, v);
            return 2;
        }
    }
    if (golden_path)
        return golden(golden_path, dags);
    if (!have_op)
        return usage(stderr);
    if (inductor)
        return inductor_one((enum sb_inductor_model)inductor, &cost.nccl, op, size, c.npus[0]);
    if (!files || have_algo) /* options over the files' algorithms only when given */
        for (int o = 0; o < 4; o++)
            for (uint32_t d = 0; d < SB_ASTRA_MAX_DIMS; d++)
                c.algo[o][d] = algo;
    struct sb_err e;
    double t;
    if (aware) {
        t = sb_astra_aware(&c, op, size, n_group ? group : NULL, n_group ? &n_group : NULL,
                           n_group ? 1 : 0, &e);
    } else if (n_group) {
        struct sb_astra_plan p;
        t = -1;
        if (!sb_astra_plan_group(&c, op, size, group, n_group, &p, &e)) {
            struct sb_astra_sys *s = sb_astra_sys_new(&c);
            t = sb_astra_sys_wait(s, sb_astra_sys_issue(s, &p, 0));
            sb_astra_sys_free(s);
        }
    } else {
        t = sb_astra_collective(&c, op, size, &e);
    }
    if (t < 0) {
        fprintf(stderr, "schedbench collective: %s\n", e.msg);
        return 2;
    }
    printf("%.0f\n", t);
    return 0;
}
