/* `schedbench run`: every workload x every scheduler -> one results row each.
 *
 * Workloads are loaded one at a time (a 10^7-node graph is gigabytes), every
 * scheduler runs on it, and each returned schedule is validated before it is
 * simulated.  The results file is written atomically and rows come in the order
 * workloads x schedulers were given, so two runs are byte-identical apart from
 * the sched_ms column. */
#define _POSIX_C_SOURCE 200809L
#include "run.h"

#include <dirent.h>
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

const char *const sb_result_columns[] = {
    "workload", "scheduler", "status", "nodes", "collectives", "makespan_us",
    "peak_mem_bytes", "exposed_comm_us", "compute_us", "comm_us", "makespan_lb_us",
    "sched_ms", "peak_pos", "edges", "cost_model", NULL};

/* ---- workload paths --------------------------------------------------------- */

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int is_workload_file(const char *name)
{
    return name[0] != '.' && sb_graph_is_workload(name);
}

static void paths_push(struct sb_paths *w, char *p)
{
    w->path = sb_xrealloc(w->path, (w->n + 1) * sizeof *w->path);
    w->path[w->n++] = p;
}

static int paths_add_dir(struct sb_paths *w, const char *dir, struct sb_err *e)
{
    DIR *d = opendir(dir);
    if (!d)
        return sb_errf(e, "%s: cannot open directory: %s", dir, strerror(errno));
    uint32_t first = w->n;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (!is_workload_file(de->d_name))
            continue;
        size_t n = strlen(dir) + strlen(de->d_name) + 2;
        char *p = sb_xmalloc(n);
        snprintf(p, n, "%s%s%s", dir, dir[strlen(dir) - 1] == '/' ? "" : "/", de->d_name);
        paths_push(w, p);
    }
    closedir(d);
    if (w->n == first)
        return sb_errf(e, "%s: no workload files", dir);
    qsort(w->path + first, w->n - first, sizeof *w->path, cmp_str);
    return 0;
}

int sb_paths_add(struct sb_paths *w, const char *path, struct sb_err *e)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return sb_errf(e, "%s: %s", path, strerror(errno));
    if (S_ISDIR(st.st_mode))
        return paths_add_dir(w, path, e);
    paths_push(w, sb_xstrdup(path));
    return 0;
}

void sb_paths_free(struct sb_paths *w)
{
    for (uint32_t i = 0; i < w->n; i++)
        free(w->path[i]);
    free(w->path);
    w->path = NULL;
    w->n = 0;
}

/* ---- options ---------------------------------------------------------------- */

struct run_opts {
    struct sb_paths w;
    uint32_t n_sched;
    struct sb_sched *sched;
    const char *out;
    const char *mem_dir;
    struct sb_cost_params cost;
    struct sb_sim_config sim;
    int all;
};

static int run_help(void)
{
    printf("usage: schedbench run [-w FILE|DIR ...] [-s SPEC[,SPEC...]|all] [-o OUT.csv]\n"
           "                      [--cost-model analytical|approx] [--cost K=V,...]\n"
           "                      [--sim K=V,...] [--plugin X.so ...] [--mem-dir DIR]\n"
           "\n"
           "Simulates every workload with every scheduler and writes one CSV row each.\n"
           "With no -w, runs the default corpus (%s); with no -s, every\n"
           "scheduler; with no -o, writes %s.\n"
           "\n"
           "  -w FILE|DIR       a workload graph, or a directory of *.csv graphs\n"
           "  -s SPEC           name[:key=value,...]; several separated by commas, e.g.\n"
           "                    -s original,lhs:all_gather_overlap_limit=2; 'all' = every one\n"
           "  -o OUT.csv        results file (written to a temporary file, then renamed)\n"
           "  --cost-model M    analytical (default): cost_us and a ring alpha-beta model;\n"
           "                    approx: XLA's approximate latency estimator (abstract units)\n"
           "  --cost K=V,...    analytical constants: lat_us (per ring step), bw_gbps (all\n"
           "                    types), bw_<coll> (one type), ranks (default group size)\n"
           "  --sim K=V,...     collectives in flight: inflight=N (one shared resource,\n"
           "                    default 1) or <coll>=N,... (one resource per type)\n"
           "  --plugin X.so     load an external scheduler (repeatable)\n"
           "  --mem-dir DIR     also write each cell's memory timeline as\n"
           "                    DIR/<workload>__<scheduler>.csv\n"
           "\n"
           "Exit status: 0 all cells ok, 1 some cell invalid or failed, 2 bad input.\n",
           SB_DEFAULT_CORPUS, SB_DEFAULT_RESULTS);
    return 0;
}

static int add_sched(struct run_opts *o, const char *spec, struct sb_err *e)
{
    if (!strcmp(spec, "all")) {
        o->all = 1;
        return 0;
    }
    for (uint32_t i = 0; i < o->n_sched; i++)
        if (!strcmp(o->sched[i].spec, spec))
            return sb_errf(e, "schedbench run: scheduler '%s' given twice", spec);
    o->sched = sb_xrealloc(o->sched, (o->n_sched + 1) * sizeof *o->sched);
    if (sb_sched_parse(&o->sched[o->n_sched], spec, e))
        return -1;
    o->n_sched++;
    return 0;
}

/* A comma starts a new scheduler unless the piece after it is a key=value of the
 * current one: "a:x=1,y=2,b" is a(x=1, y=2) and b. */
static int add_sched_list(struct run_opts *o, const char *list, struct sb_err *e)
{
    char *dup = sb_xstrdup(list);
    char *cur = dup;
    int rc = 0;
    for (char *p = dup;; p++) {
        if (*p && *p != ',')
            continue;
        char *next = *p ? p + 1 : NULL;
        if (next) {
            char *eq = strchr(next, '='), *colon = strchr(next, ':');
            char *comma = strchr(next, ',');
            int is_param = eq && (!comma || eq < comma) && (!colon || eq < colon);
            if (is_param && strchr(cur, ':'))
                continue;
        }
        int last = !*p;
        *p = 0;
        if (*cur && (rc = add_sched(o, cur, e)))
            break;
        if (last)
            break;
        cur = p + 1;
    }
    free(dup);
    return rc;
}

static int parse_run_args(struct run_opts *o, int argc, char **argv, struct sb_err *e)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        int takes = !strcmp(a, "-w") || !strcmp(a, "-s") || !strcmp(a, "-o") ||
                    !strcmp(a, "--cost-model") || !strcmp(a, "--cost") ||
                    !strcmp(a, "--sim") || !strcmp(a, "--plugin") ||
                    !strcmp(a, "--mem-dir");
        if (!takes)
            return sb_errf(e, "schedbench run: unknown argument '%s' (see --help)", a);
        if (!v)
            return sb_errf(e, "schedbench run: %s needs a value", a);
        i++;
        int rc = 0;
        if (!strcmp(a, "-w"))
            rc = sb_paths_add(&o->w, v, e);
        else if (!strcmp(a, "-s"))
            rc = add_sched_list(o, v, e);
        else if (!strcmp(a, "-o"))
            o->out = v;
        else if (!strcmp(a, "--mem-dir"))
            o->mem_dir = v;
        else if (!strcmp(a, "--cost"))
            rc = sb_cost_parse(&o->cost, v, e);
        else if (!strcmp(a, "--sim"))
            rc = sb_sim_parse(&o->sim, v, e);
        else if (!strcmp(a, "--plugin"))
            rc = sb_registry_load(v, e);
        else if (!strcmp(v, "analytical"))
            o->cost.model = SB_COST_ANALYTICAL;
        else if (!strcmp(v, "approx"))
            o->cost.model = SB_COST_APPROX;
        else
            rc = sb_errf(e, "schedbench run: unknown cost model '%s' (analytical, approx)", v);
        if (rc)
            return -1;
    }
    return 0;
}

static int finish_opts(struct run_opts *o, struct sb_err *e)
{
    if (!o->w.n && sb_paths_add(&o->w, SB_DEFAULT_CORPUS, e))
        return -1;
    if (o->all || !o->n_sched) {
        /* 'all' is every registered scheduler with defaults, after any named
         * ones that it does not repeat */
        for (uint32_t i = 0; i < sb_registry_count(); i++) {
            const char *name = sb_registry_at(i)->name;
            uint32_t k = 0;
            while (k < o->n_sched && strcmp(o->sched[k].spec, name))
                k++;
            if (k == o->n_sched && add_sched(o, name, e))
                return -1;
        }
    }
    if (!o->out)
        o->out = SB_DEFAULT_RESULTS;
    o->sim.edge_lat_us = sb_cost_edge_lat(&o->cost);
    return 0;
}

static void free_opts(struct run_opts *o)
{
    sb_paths_free(&o->w);
    for (uint32_t i = 0; i < o->n_sched; i++)
        sb_sched_free(&o->sched[i]);
    free(o->sched);
}

/* ---- one cell ----------------------------------------------------------------- */

static void write_header(FILE *f)
{
    for (int i = 0; sb_result_columns[i]; i++)
        sb_csv_field(f, sb_result_columns[i], i == 0);
    sb_csv_end(f);
}

static void write_row(FILE *f, const struct sb_graph *g, const char *sched,
                      const char *status, const struct sb_sim_result *r,
                      double sched_ms, const struct run_opts *o)
{
    sb_csv_field(f, g->name, 1);
    sb_csv_field(f, sched, 0);
    sb_csv_field(f, status, 0);
    sb_csv_fieldf(f, 0, "%u", g->v.n_nodes);
    sb_csv_fieldf(f, 0, "%u", sb_graph_n_collectives(g));
    if (r) {
        sb_csv_fieldf(f, 0, "%.3f", r->makespan_us);
        sb_csv_fieldf(f, 0, "%llu", (unsigned long long)r->peak_mem_bytes);
        sb_csv_fieldf(f, 0, "%.3f", r->exposed_comm_us);
        sb_csv_fieldf(f, 0, "%.3f", r->compute_us);
        sb_csv_fieldf(f, 0, "%.3f", r->comm_us);
        sb_csv_fieldf(f, 0, "%.3f", r->makespan_lb_us);
    } else {
        for (int k = 0; k < 6; k++)
            sb_csv_field(f, "", 0);
    }
    sb_csv_fieldf(f, 0, "%.3f", sched_ms);
    if (r)
        sb_csv_fieldf(f, 0, "%u", r->peak_pos);
    else
        sb_csv_field(f, "", 0);
    sb_csv_fieldf(f, 0, "%u", g->v.n_edges);
    sb_csv_field(f, o->cost.model == SB_COST_APPROX ? "approx" : "analytical", 0);
    sb_csv_end(f);
}

static void safe_name(char *dst, size_t n, const char *src)
{
    size_t i = 0;
    for (; src[i] && i + 1 < n; i++) {
        char c = src[i];
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                 (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';
        dst[i] = ok ? c : '_';
    }
    dst[i] = 0;
}

static int write_timeline(const char *dir, const struct sb_graph *g, const char *sched,
                          const struct sb_schedule *s, const struct sb_sim_result *r,
                          struct sb_err *e)
{
    char a[256], b[256], path[4096];
    safe_name(a, sizeof a, g->name);
    safe_name(b, sizeof b, sched);
    snprintf(path, sizeof path, "%s/%s__%s.csv", dir, a, b);
    struct sb_atomic out;
    if (sb_atomic_open(&out, path, e))
        return -1;
    fprintf(out.f, "position,node,name,mem_bytes\n");
    for (uint32_t i = 0; i < r->n_pos; i++) {
        uint32_t v = s->order[i];
        sb_csv_fieldf(out.f, 1, "%u", i);
        sb_csv_fieldf(out.f, 0, "%u", v);
        sb_csv_field(out.f, g->names + g->name_off[v], 0);
        sb_csv_fieldf(out.f, 0, "%llu", (unsigned long long)r->mem_bytes[i]);
        sb_csv_end(out.f);
    }
    return sb_atomic_commit(&out, e);
}

/* Returns 0 when the cell is ok, 1 when it is invalid or failed, -1 when an
 * output file could not be written. */
static int run_cell(FILE *f, const struct sb_graph *g, const struct sb_sched *sc,
                    const struct run_opts *o, struct sb_err *io)
{
    struct sb_schedule s;
    struct sb_err e;
    char status[600];
    int bad = 1, io_fail = 0;
    sb_schedule_init(&s, g, o->sim.n_devices);
    double t0 = sb_now_ms();
    int failed = sb_sched_run(sc, g, &s, &e);
    double ms = sb_now_ms() - t0;
    if (failed) {
        snprintf(status, sizeof status, "error:%s", e.msg);
        write_row(f, g, sc->spec, status, NULL, ms, o);
    } else if (sb_schedule_validate(&g->v, &s, &e)) {
        snprintf(status, sizeof status, "invalid:%s", e.msg);
        write_row(f, g, sc->spec, status, NULL, ms, o);
    } else {
        struct sb_sim_result r;
        sb_sim_run(g, &s, &o->sim, &r);
        write_row(f, g, sc->spec, "ok", &r, ms, o);
        bad = 0;
        if (o->mem_dir && write_timeline(o->mem_dir, g, sc->spec, &s, &r, io))
            io_fail = 1;
        sb_sim_result_free(&r);
    }
    sb_schedule_free(&s);
    return io_fail ? -1 : bad;
}

/* ---- the sweep ------------------------------------------------------------------ */

static int names_unique(char **names, uint32_t n, const char *path,
                        struct sb_err *e)
{
    for (uint32_t i = 0; i + 1 < n; i++)
        if (!strcmp(names[i], names[n - 1]))
            return sb_errf(e, "%s: workload name '%s' is already used by another file "
                              "in this run (set '# name=' to tell them apart)",
                           path, names[n - 1]);
    return 0;
}

static int sweep(FILE *f, struct run_opts *o, struct sb_err *e)
{
    int failed = 0;
    char **names = sb_xcalloc(o->w.n, sizeof *names);
    int rc = 0;
    for (uint32_t i = 0; i < o->w.n && !rc; i++) {
        struct sb_graph *g = sb_graph_load(o->w.path[i], e);
        if (!g) {
            rc = 2;
            break;
        }
        names[i] = sb_xstrdup(g->name);
        if (names_unique(names, i + 1, o->w.path[i], e)) {
            sb_graph_free(g);
            rc = 2;
            break;
        }
        sb_cost_apply(&o->cost, g);
        for (uint32_t k = 0; k < o->n_sched && !rc; k++) {
            int c = run_cell(f, g, &o->sched[k], o, e);
            if (c < 0)
                rc = 2;
            failed |= c > 0;
        }
        sb_graph_free(g);
    }
    for (uint32_t i = 0; i < o->w.n; i++)
        free(names[i]);
    free(names);
    return rc ? rc : failed;
}

int sb_cmd_run(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
            return run_help();
    struct run_opts o = {0};
    struct sb_err e;
    struct sb_atomic out;
    sb_cost_defaults(&o.cost);
    sb_sim_defaults(&o.sim);
    if (parse_run_args(&o, argc, argv, &e) || finish_opts(&o, &e)) {
        fprintf(stderr, "%s\n", e.msg);
        free_opts(&o);
        return 2;
    }
    if (sb_atomic_open(&out, o.out, &e)) {
        fprintf(stderr, "schedbench run: %s\n", e.msg);
        free_opts(&o);
        return 2;
    }
    write_header(out.f);
    int rc = sweep(out.f, &o, &e);
    if (rc == 2) {
        fprintf(stderr, "%s\n", e.msg);
        sb_atomic_abort(&out);
    } else if (sb_atomic_commit(&out, &e)) {
        fprintf(stderr, "schedbench run: %s\n", e.msg);
        rc = 2;
    } else {
        fprintf(stderr, "schedbench: %u workloads x %u schedulers -> %s%s\n", o.w.n,
                o.n_sched, o.out, rc ? " (some cells invalid or failed: see status)" : "");
    }
    free_opts(&o);
    return rc;
}
