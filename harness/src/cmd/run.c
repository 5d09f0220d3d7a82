/* `schedbench run`: every workload x every scheduler -> one results row each.
 *
 * Workloads are loaded one at a time (a 10^7-node graph is gigabytes), every
 * scheduler runs on it, and each returned schedule is validated before it is
 * simulated.  The results file is written atomically and rows come in the order
 * workloads x schedulers were given, so two runs are byte-identical apart from
 * the sched_ms column. */
#define _POSIX_C_SOURCE 200809L
#include "run.h"
#include "core/machine.h"
#include "core/num.h"
#include "trace.h"
#include "isolate.h"
#include "import/import.h"
#include "net/astra.h"
#include "net/xla_sol.h"
#include "net/inductor_comm.h"
#include "table.h"
#include "commands.h"

#include <csv.h>
#include <dirent.h>
#include <signal.h>
#include <time.h>
#include <pthread.h>
#include <unistd.h>
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

/* `cell` is the row's index in the whole sweep (workload-major), which lets
 * `schedbench merge` put the rows of --shard runs back in sweep order. */
const char *const sb_result_columns[] = {
    "workload", "scheduler", "status", "nodes", "collectives", "makespan_us",
    "peak_mem_bytes", "exposed_comm_us", "compute_us", "comm_us", "makespan_lb_us",
    "sched_ms", "peak_pos", "edges", "cost_model", "cell", "lb_gap_pct",
    /* placement (docs/machines.md) */
    "devices_used", "transfer_bytes", "barriers", "dev_peak_bytes", "over_capacity",
    /* each device's memory (empty: unlimited), and the limit the policy was
     * given (empty: none), so that a row says whether it fits and whether it
     * kept to its own limit (issue 35) */
    "dev_cap_bytes", "mem_limit_bytes",
    /* the scheduler's build ("built-in", or a module's file name and the hash
     * of its bytes) and every parameter's effective value, defaults included
     * (issue 38): two builds of a plugin, or one with other defaults, differ */
    "scheduler_id",
    /* the collective model's effective values (sb_cost_describe), since the
     * cost_model name alone does not say which bandwidth gave the figures */
    "cost_params",
    /* which sweep the row belongs to, so merge can refuse gaps and mixtures:
     * the run's --shard K/N, a hash of everything that decides the cells and
     * their results (workloads, schedulers, cost model, --cost, --sim,
     * --machine), and the number of cells in the whole sweep */
    "shard", "sweep_id", "sweep_cells",
    /* appended (issue 37): ASTRA-sim's exposed communication, each rank's
     * end less its GPU compute time, the largest over the ranks (docs/ready.md) */
    "astra_exposed_us",
    /* a job of ranks (issue 36): exposed_comm_us, compute_us and comm_us are
     * then per rank, the most over the ranks, and these their mean over the
     * ranks; empty for a graph that is one program */
    "exposed_comm_mean_us", "compute_mean_us", "comm_mean_us",
    NULL};

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

/* Whether name is <stem>.<r>.et with r in plain decimal (a leading zero
 * names no rank: the importer refuses such a file beside a job); *stem_len
 * and *rank when so. */
static int rank_file(const char *name, size_t *stem_len, unsigned long *rank)
{
    uint32_t r;
    if (sb_chakra_rank_name(name, stem_len, &r) != 1)
        return 0;
    *rank = r;
    return 1;
}

/* A folder of one job's rank files, <stem>.0.et .. <stem>.<N-1>.et with N >= 2
 * and no other workload (a group file beside them is no workload): the
 * job, <dir>/<stem>.%d.et (chakra.md, "Several ranks").  first is where the
 * folder's sorted files begin in w. */
static void paths_fold_ranks(struct sb_paths *w, const char *dir, uint32_t first)
{
    uint32_t n = w->n - first;
    size_t stem = 0, s;
    unsigned long r;
    if (n < 2)
        return;
    for (uint32_t i = 0; i < n; i++) {
        const char *name = strrchr(w->path[first + i], '/') + 1;
        const char *name0 = strrchr(w->path[first], '/') + 1;
        if (!rank_file(name, &s, &r) || (i && (s != stem || strncmp(name, name0, s))))
            return;
        stem = s;
    }
    /* ranks 0..n-1, each once: sorted as strings, so mark them */
    uint8_t *seen = sb_xcalloc(n, 1);
    int ok = 1;
    for (uint32_t i = 0; i < n && ok; i++) {
        rank_file(strrchr(w->path[first + i], '/') + 1, &s, &r);
        ok = r < n && !seen[r];
        if (ok)
            seen[r] = 1;
    }
    free(seen);
    if (!ok)
        return;
    const char *name0 = strrchr(w->path[first], '/') + 1;
    char *job = sb_strf("%s%s%.*s.%%d.et", dir, dir[strlen(dir) - 1] == '/' ? "" : "/",
                        (int)stem, name0);
    for (uint32_t i = first; i < w->n; i++)
        free(w->path[i]);
    w->n = first;
    paths_push(w, job);
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
    paths_fold_ranks(w, dir, first);
    return 0;
}

int sb_paths_add(struct sb_paths *w, const char *path, struct sb_err *e)
{
    struct stat st;
    if (strstr(path, "%d") && sb_graph_is_workload(path)) { /* rank files, trace.%d.et */
        paths_push(w, sb_xstrdup(path));
        return 0;
    }
    if (stat(path, &st) != 0)
        return sb_errf(e, "%s: %s", path, strerror(errno));
    if (S_ISDIR(st.st_mode))
        return paths_add_dir(w, path, e);
    paths_push(w, sb_xstrdup(path));
    return 0;
}

/* <prefix>/share/schedbench/corpus beside <prefix>/bin/schedbench: where
 * `cmake --install --prefix P` put it, whatever prefix CMake was configured
 * with (SB_INSTALL_CORPUS is only the configured one). */
static const char *installed_corpus(void)
{
    static char buf[4200];
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return NULL;
    exe[n] = 0;
    char *slash = strrchr(exe, '/');
    if (!slash)
        return NULL;
    *slash = 0; /* <prefix>/bin */
    slash = strrchr(exe, '/');
    if (!slash)
        return NULL;
    *slash = 0; /* <prefix> */
    snprintf(buf, sizeof buf, "%s/share/schedbench/corpus", exe);
    return buf;
}

const char *sb_default_corpus(void)
{
    const char *env = getenv("SCHEDBENCH_CORPUS");
    const char *where[] = {env && *env ? env : NULL, SB_DEFAULT_CORPUS, installed_corpus(),
                           SB_SOURCE_CORPUS, SB_INSTALL_CORPUS};
    struct stat st;
    for (size_t i = 0; i < sizeof where / sizeof where[0]; i++)
        if (where[i] && stat(where[i], &st) == 0 && S_ISDIR(st.st_mode))
            return where[i];
    return NULL;
}

/* --machine takes a path, or the name of a machine under workloads/machines/
 * (as `gen --machine` does): "gpu8-nvswitch" is <corpus>/../machines/gpu8-nvswitch.yaml. */
const char *sb_machine_path(const char *v, char *buf, size_t n)
{
    struct stat st;
    if (stat(v, &st) == 0 || strchr(v, '/'))
        return v;
    const char *corpus = sb_default_corpus();
    if (!corpus)
        return v;
    size_t len = strlen(v);
    int has_ext = len > 5 && !strcmp(v + len - 5, ".yaml");
    snprintf(buf, n, "%s/../machines/%s%s", corpus, v, has_ext ? "" : ".yaml");
    return stat(buf, &st) == 0 ? buf : v;
}

void sb_machine_hint(const char *v, struct sb_err *e)
{
    const char *corpus = sb_default_corpus();
    if (strchr(v, '/') || !corpus)
        return;
    char *dir = sb_strf("%s/../machines", corpus);
    DIR *d = opendir(dir);
    size_t len = strlen(e->msg);
    int n = 0;
    len += (size_t)snprintf(e->msg + len, sizeof e->msg - len, " (nor a machine name in %s:",
                            dir);
    struct dirent *de;
    while (d && (de = readdir(d)) && len < sizeof e->msg - 2) {
        size_t k = strlen(de->d_name);
        if (k > 5 && !strcmp(de->d_name + k - 5, ".yaml"))
            len += (size_t)snprintf(e->msg + len, sizeof e->msg - len, "%s %.*s",
                                    n++ ? "," : "", (int)(k - 5), de->d_name);
    }
    if (len < sizeof e->msg - 2)
        snprintf(e->msg + len, sizeof e->msg - len, ")");
    if (d)
        closedir(d);
    free(dir);
}

void sb_paths_free(struct sb_paths *w)
{
    for (uint32_t i = 0; i < w->n; i++)
        free(w->path[i]);
    free(w->path);
    w->path = NULL;
    w->n = 0;
}

static int paths_by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int sb_paths_suffix(struct sb_paths *w, const char *dir, const char *suffix, int stem)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    size_t n_suf = strlen(suffix);
    struct dirent *de;
    while ((de = readdir(d))) {
        size_t len = strlen(de->d_name);
        if (len <= n_suf || strcmp(de->d_name + len - n_suf, suffix) != 0)
            continue;
        w->path = sb_xrealloc(w->path, (w->n + 1) * sizeof *w->path);
        if (stem) {
            w->path[w->n] = sb_xstrdup(de->d_name);
            w->path[w->n++][len - n_suf] = 0;
        } else
            w->path[w->n++] = sb_strf("%s/%s", dir, de->d_name);
    }
    closedir(d);
    if (w->n) /* qsort's array must not be NULL, even when empty */
        qsort(w->path, w->n, sizeof *w->path, paths_by_name);
    return 0;
}

int sb_paths_has_suffix(const char *dir, const char *suffix)
{
    struct sb_paths w = {0};
    int has = !sb_paths_suffix(&w, dir, suffix, 0) && w.n > 0;
    sb_paths_free(&w);
    return has;
}

/* ---- options ---------------------------------------------------------------- */

struct run_opts {
    struct sb_paths w;
    uint32_t n_sched;
    struct sb_sched *sched;
    const char *out;
    const char *mem_dir;
    const char *trace_dir;
    struct sb_cost_params cost;
    struct sb_sim_config sim;
    int all;
    int quiet;
    int keep_going;            /* a workload that fails to load gets error rows */
    int isolate;               /* each cell in a child process (isolate.c) */
    double cell_timeout_s;     /* --cell-timeout, with --isolate */
    int resume;                /* reuse the rows of OUT.partial from a killed run */
    uint32_t jobs;
    uint32_t shard_k, shard_n; /* this run is slice shard_k (1-based) of shard_n */
    uint32_t n_lists;
    const char **lists;        /* -s values, parsed once every --plugin is loaded */
    struct sb_machine *machine; /* --machine, or NULL: one device */
    struct sb_import_opts imp;  /* --import: what traces from other tools leave out */
    int comm_astra;             /* --comm astra 1, astra-aware 2: priced by astra*.c */
    int comm_inductor;          /* --comm inductor-*: enum sb_inductor_model, or 0 */
    struct sb_inductor_ctx inductor; /* its bucket pricer's context */
    struct sb_astra_config astra; /* with --system / --network */
    struct sb_comm_queue astra_queue; /* its queues, for the simulator */
    int comm_sol;                 /* --comm xla-sol: XLA's SoL model (net/xla_sol.c) */
    struct sb_sol_config sol;     /* XLA's preset, the machine's xla_sol, --cost sol_* */
    char *sol_cost;               /* --cost as given, its sol_* keys applied last */
    char *ident;                /* the options that define the sweep, as given */
    char *out_named;            /* without -o: results/<sweep_id>.csv */
    uint64_t sweep_id;          /* FNV-1a of ident, the workloads and schedulers */
    uint64_t inputs_digest;     /* of the files the options read (--machine, --system,
                                   --network): each workload's digest starts from it */
};

static int run_help(void)
{
    printf("usage: schedbench run [-w FILE|DIR ...] [-s SPEC[,SPEC...]|all] [-o OUT.csv]\n"
           "                      [--cost-model analytical|approx] [--cost K=V,...]\n"
           "                      [--sim K=V,...] [--plugin X.so ...] [--mem-dir DIR]\n"
           "                      [--trace-dir DIR] [--jobs N] [--shard K/N] [--quiet]\n"
           "                      [--machine FILE.yaml] [--keep-going] [--isolate]\n"
           "                      [--cell-timeout S] [--resume] [--import K=V,...]\n"
           "                      [--comm simple|astra|astra-aware|xla-sol|inductor-classic|\n"
           "                       inductor-multi] [--system F.json --network F.yml]\n"
           "\n"
           "Simulates every workload with every scheduler and writes one CSV row each.\n"
           "With no -w, runs the default corpus (%s, else $SCHEDBENCH_CORPUS, the\n"
           "source tree's or the installed one); with no -s, every\n"
           "scheduler; with no -o, writes results/<sweep_id>.csv (a new file per\n"
           "sweep, never another run's) and prints its path.  Unless --quiet, ends\n"
           "with the summary of schedbench summary: per workload, the best policy by\n"
           "makespan and by peak, each one's ratio to original and gap to the bound.\n"
           "\n"
           "  -w FILE|DIR ...   workloads (.csv; .hlo, Chakra .et and ASTRA-sim .txt via\n"
           "                    the importers, workloads/importers/), or a\n"
           "                    directory: every such file in it, in name order;\n"
           "                    several after one -w, or -w repeated\n"
           "  -s SPEC           name[:key=value,...]; several separated by commas, e.g.\n"
           "                    -s original,lhs:all_gather_overlap_limit=2; 'all' = every one\n"
           "  -o OUT.csv        results file (written to a temporary file, then renamed;\n"
           "                    only a regular file is replaced); - writes the results\n"
           "                    to standard output (no summary, no journal)\n"
           "  --cost-model M    analytical (default): cost_us and a ring alpha-beta model;\n"
           "                    approx: XLA's approximate latency estimator (abstract units)\n"
           "  --cost K=V,...    analytical constants: lat_us (per ring step), bw_gbps (GB/s,\n"
           "                    or 400Gbps, 1.6TB/s; 0.001 to 100000 GB/s) (the\n"
           "                    network types: every type but send_host, recv_host and\n"
           "                    copy), bw_<coll> (one type, any type; wins over bw_gbps\n"
           "                    in any order), ranks (default group size)\n"
           "  --sim K=V,...     collectives in flight: inflight=N (one shared resource,\n"
           "                    default 1) or <coll>=N,... (one resource per type)\n"
           "  --plugin X.so[=NAME]  load an external scheduler (repeatable); =NAME\n"
           "                    registers it under another name (a .so copy of a built-in)\n"
           "  --machine FILE    place onto the devices of a machine description\n"
           "                    (docs/machines.md), a file or the name of one in\n"
           "                    workloads/machines (gpu8-nvswitch); default: one device\n"
           "  --mem-dir DIR     also write each cell's memory timeline as\n"
           "                    DIR/<workload>__<scheduler>.csv (on several devices\n"
           "                    with every device's memory, and its copies over\n"
           "                    links in DIR/<workload>__<scheduler>.copies.csv)\n"
           "  --trace-dir DIR   also write each cell's Chrome trace (Perfetto) as\n"
           "                    DIR/<workload>__<scheduler>.json\n"
           "  --jobs N          run cells on N threads; output identical to --jobs 1\n"
           "  --shard K/N       run only the K-th of N deterministic slices of the cells\n"
           "                    (join the parts with schedbench merge)\n"
           "  --quiet           no progress bar (shown on a terminal after one second)\n"
           "  --isolate         run each cell in a child process: a policy that crashes\n"
           "                    or hangs gets status crash:<SIGNAL> or timeout and the\n"
           "                    sweep goes on (make run and CI use it)\n"
           "  --cell-timeout S  with --isolate, stop a cell, or the load of a workload\n"
           "                    (its cells are then timeout), after S seconds (default 600)\n"
           "  --resume          reuse the rows a killed run of the same sweep left in\n"
           "                    OUT.partial (the results file itself is only ever\n"
           "                    replaced whole); a journal of other columns is refused,\n"
           "                    and a row that does not check out (another sweep, a\n"
           "                    garbled field, a workload or machine edited since) runs\n"
           "                    again, with a word on why\n"
           "  --import K=V,...  importer options (every key; see workloads/importers/):\n"
           "                      peak_tflops, mem_gbps  Chakra roofline (default 989\n"
           "                                  TFLOP/s, 3350 GB/s)\n"
           "                      clock_ghz   ASTRA-sim text cycles (default 1)\n"
           "                      npus        ranks: ASTRA-sim text (default 16), Chakra\n"
           "                                  (default: the rank files beside the trace)\n"
           "                      ctrl_deps=1 Chakra ctrl_deps are edges too (default 0)\n"
           "                      streams=0   Chakra: every node on one stream (default 1)\n"
           "                      toposort=1  CSV rows in any order (default 0)\n"
           "                      astra=1     Chakra read as ASTRA-sim reads it: data_deps\n"
           "                                  only, collectives in their own slot, priced\n"
           "                                  by the network (default 0; docs/ready.md)\n"
           "                      fuse=none   HLO: price every instruction alone\n"
           "                                  (default fuse=xla)\n"
           "                      queues=none HLO: one stream for a scheduled module, its\n"
           "                                  operation_queue_id unread (default queues=xla)\n"
           "                      trip_count=N, trip_count.NAME=N  HLO: iterations of\n"
           "                                  every loop of unknown count, of loop NAME\n"
           "  --comm M          collectives priced by simple (the alpha-beta cost model,\n"
           "                    default), astra (ASTRA-sim's system layer and\n"
           "                    congestion-unaware network; --sim inflight=N collectives\n"
           "                    share its queues) or astra-aware (its congestion-aware\n"
           "                    network, each collective alone, one at a time; a network\n"
           "                    of one dimension), configured by --system FILE.json and\n"
           "                    --network FILE.yml in ASTRA-sim's formats (docs/astra.md);\n"
           "                    xla-sol (XLA GPU's speed-of-light collective model,\n"
           "                    --cost sol_<key>=V, docs/cost-model.md); or\n"
           "                    inductor-classic / inductor-multi (PyTorch Inductor's\n"
           "                    NCCL estimators; --cost gpu=, intra_node_bw=,\n"
           "                    inter_node_bw=, ...: docs/cost-model.md)\n"
           "  --keep-going, -k  a workload that fails to load gets a row per scheduler\n"
           "                    with status error:<message>; the rest of the sweep runs\n"
           "                    and the file is written (exit status still 2)\n"
           "\n"
           "Exit status: 0 all cells ok, 1 some cell invalid or failed, 2 bad input or\n"
           "an output that could not be written (the finished cells then stay in\n"
           "OUT.partial for --resume), 130 interrupted (SIGINT, SIGTERM or SIGHUP, to\n"
           "this process or to an isolated cell: the finished cells stay in OUT.partial).\n",
           SB_DEFAULT_CORPUS);
    return 0;
}

/* "unknown scheduler 'overlapp'" gains "(did you mean 'overlap'?)". */
static void suggest_sched(const char *spec, struct sb_err *e)
{
    if (strncmp(e->msg, "unknown scheduler", 17))
        return;
    uint32_t n = sb_registry_count();
    const char **names = sb_xcalloc(n + 3, sizeof *names);
    for (uint32_t i = 0; i < n; i++)
        names[i] = sb_registry_at(i)->name;
    names[n++] = "lhs"; /* the alias the registry accepts for aggressive */
    names[n++] = "all";
    char name[256];
    snprintf(name, sizeof name, "%.*s", (int)strcspn(spec, ":"), spec);
    const char *near = sb_did_you_mean(name, names, n);
    char *tail = strstr(e->msg, " (see schedbench list)");
    if (near && tail)
        snprintf(tail, sizeof e->msg - (size_t)(tail - e->msg),
                 " (did you mean '%s'? schedbench list shows them all)", near);
    free(names);
}

static int add_sched(struct run_opts *o, const char *spec_in, struct sb_err *e)
{
    /* -s 'original, aggressive': the space after a comma is a slip, not a name */
    char spec[1024];
    while (*spec_in == ' ' || *spec_in == '\t')
        spec_in++;
    snprintf(spec, sizeof spec, "%s", spec_in);
    for (size_t n = strlen(spec); n && (spec[n - 1] == ' ' || spec[n - 1] == '\t'); n--)
        spec[n - 1] = 0;
    if (!strcmp(spec, "all")) {
        o->all = 1;
        return 0;
    }
    for (uint32_t i = 0; i < o->n_sched; i++)
        if (!strcmp(o->sched[i].spec, spec))
            return sb_errf(e, "schedbench run: scheduler '%s' given twice", spec);
    o->sched = sb_xrealloc(o->sched, (o->n_sched + 1) * sizeof *o->sched);
    if (sb_sched_parse(&o->sched[o->n_sched], spec, e)) {
        suggest_sched(spec, e);
        return -1;
    }
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

static int parse_jobs(struct run_opts *o, const char *v, struct sb_err *e)
{
    uint64_t n;
    const char *why;
    if (sb_num_u64(v, 1, 256, &n, &why))
        return sb_errf(e, "schedbench run: --jobs '%s' is not an integer in 1..256 (%s)", v,
                       why);
    o->jobs = (uint32_t)n;
    return 0;
}

/* --shard K/N: N up to 2^32 - 1 (a cell index is 64 bits, a shard's 32) */
static int parse_shard(struct run_opts *o, const char *v, struct sb_err *e)
{
    const char *why;
    if (sb_num_shard(v, UINT32_MAX, &o->shard_k, &o->shard_n, &why))
        return sb_errf(e, "schedbench run: --shard '%s' is not K/N with 1 <= K <= N <= "
                          "4294967295 (%s)", v, why);
    return 0;
}

static void ident_add(struct run_opts *o, const char *a, const char *v)
{
    size_t n = o->ident ? strlen(o->ident) : 0, k = strlen(a) + strlen(v) + 3;
    o->ident = sb_xrealloc(o->ident, n + k);
    snprintf(o->ident + n, k, "%s=%s;", a, v);
}

static uint64_t fnv(uint64_t h, const char *s)
{
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return (h ^ 0xff) * 1099511628211ull; /* a separator, so "ab","c" != "a","bc" */
}

static void sweep_identity(struct run_opts *o)
{
    uint64_t h = fnv(14695981039346656037ull, o->ident ? o->ident : "");
    for (uint32_t i = 0; i < o->w.n; i++)
        h = fnv(h, o->w.path[i]);
    for (uint32_t i = 0; i < o->n_sched; i++)
        h = fnv(fnv(h, o->sched[i].spec), o->sched[i].ident);
    o->sweep_id = h;
}

static int parse_run_args(struct run_opts *o, int argc, char **argv, struct sb_err *e)
{
    struct sb_opt_seen once = {0};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--quiet") || !strcmp(a, "-q")) {
            o->quiet = 1;
            continue;
        }
        if (!strcmp(a, "--keep-going") || !strcmp(a, "-k")) {
            o->keep_going = 1;
            continue;
        }
        if (!strcmp(a, "--isolate")) {
            o->isolate = 1;
            continue;
        }
        if (!strcmp(a, "--resume")) {
            o->resume = 1;
            continue;
        }
        int takes = !strcmp(a, "-w") || !strcmp(a, "-s") || !strcmp(a, "-o") ||
                    !strcmp(a, "--cost-model") || !strcmp(a, "--cost") ||
                    !strcmp(a, "--sim") || !strcmp(a, "--plugin") ||
                    !strcmp(a, "--mem-dir") || !strcmp(a, "--trace-dir") ||
                    !strcmp(a, "--jobs") || !strcmp(a, "-j") || !strcmp(a, "--shard") ||
                    !strcmp(a, "--machine") || !strcmp(a, "--cell-timeout") ||
                    !strcmp(a, "--import") || !strcmp(a, "--comm") || !strcmp(a, "--system") ||
                    !strcmp(a, "--network");
        if (!takes) {
            static const char *const flags[] = {
                "--quiet", "--keep-going", "--isolate", "--resume", "--cost-model", "--cost",
                "--sim", "--plugin", "--mem-dir", "--trace-dir", "--jobs", "--shard",
                "--machine", "--cell-timeout", "--import", "--comm", "--system", "--network",
                "--help"};
            const char *near = a[0] == '-' ? sb_did_you_mean(a, flags, 19) : NULL;
            return sb_errf(e, "schedbench run: unknown argument '%s' (%s%s%s)", a,
                           near ? "did you mean '" : "see --help", near ? near : "",
                           near ? "'?" : "");
        }
        if (!v)
            return sb_errf(e, "schedbench run: %s needs a value", a);
        /* an option of one value given twice is refused, not settled by
         * whichever came last (-w, -s and --plugin add up) */
        const char *flag = !strcmp(a, "-j") ? "--jobs" : a;
        if (strcmp(flag, "-w") && strcmp(flag, "-s") && strcmp(flag, "--plugin") &&
            sb_opt_once(&once, "run", flag, v, e)) {
            if (!strcmp(flag, "--cost") || !strcmp(flag, "--sim"))
                snprintf(e->msg + strlen(e->msg), sizeof e->msg - strlen(e->msg),
                         ", with every key in one comma list");
            return -1;
        }
        i++;
        int rc = 0;
        if (!strcmp(a, "--cost-model") || !strcmp(a, "--cost") || !strcmp(a, "--sim") ||
            !strcmp(a, "--machine") || !strcmp(a, "--import") || !strcmp(a, "--comm") ||
            !strcmp(a, "--system") || !strcmp(a, "--network"))
            ident_add(o, a, v);
        if (!strcmp(a, "-w")) {
            /* -w a.csv b.csv ... (a shell glob): every argument up to the next option */
            rc = sb_paths_add(&o->w, v, e);
            while (!rc && i + 1 < argc && argv[i + 1][0] != '-')
                rc = sb_paths_add(&o->w, argv[++i], e);
        }
        else if (!strcmp(a, "-s")) {
            o->lists = sb_xrealloc(o->lists, (o->n_lists + 1) * sizeof *o->lists);
            o->lists[o->n_lists++] = v;
        }
        else if (!strcmp(a, "-o"))
            o->out = v;
        else if (!strcmp(a, "--mem-dir"))
            o->mem_dir = v;
        else if (!strcmp(a, "--trace-dir"))
            o->trace_dir = v;
        else if (!strcmp(a, "--jobs") || !strcmp(a, "-j"))
            rc = parse_jobs(o, v, e);
        else if (!strcmp(a, "--shard"))
            rc = parse_shard(o, v, e);
        else if (!strcmp(a, "--import"))
            rc = sb_import_parse(&o->imp, v, e);
        else if (!strcmp(a, "--comm")) {
            o->comm_sol = !strcmp(v, "xla-sol");
            o->comm_inductor = !strcmp(v, "inductor-classic") ? SB_INDUCTOR_CLASSIC
                               : !strcmp(v, "inductor-multi") ? SB_INDUCTOR_MULTI
                                                              : 0;
            o->comm_astra = 0;
            if (!strcmp(v, "astra") || !strcmp(v, "simple") || !strcmp(v, "astra-aware"))
                o->comm_astra = !strcmp(v, "astra") ? 1 : !strcmp(v, "astra-aware") ? 2 : 0;
            else if (!o->comm_sol && !o->comm_inductor)
                rc = sb_errf(e, "schedbench run: --comm '%s' is simple, astra, astra-aware, "
                                "xla-sol, inductor-classic or inductor-multi", v);
        } else if (!strcmp(a, "--system"))
            rc = sb_astra_load_system(v, &o->astra, e);
        else if (!strcmp(a, "--network"))
            rc = sb_astra_load_network(v, &o->astra, e);
        else if (!strcmp(a, "--cell-timeout")) {
            const char *why = NULL;
            double t = 0;
            if (sb_num_real(v, 0, 1e6, &t, &why) || !(t > 0))
                rc = sb_errf(e, "schedbench run: --cell-timeout '%s' is not a number of "
                                "seconds in (0, 10^6] (%s)", v, why ? why : "not above 0");
            o->cell_timeout_s = t;
        }
        else if (!strcmp(a, "--cost") || !strcmp(a, "--sim")) {
            /* the message names the option; the parser's names the key */
            struct sb_err inner;
            struct sb_sol_config scratch = o->sol; /* checked now, applied after --machine */
            char *rest = a[2] == 'c' ? sb_sol_take_cost_keys(&scratch, v, &inner) : NULL;
            if (rest && scratch.given) {
                free(o->sol_cost);
                o->sol_cost = sb_xstrdup(v);
            }
            if (a[2] == 'c' ? !rest || sb_cost_parse(&o->cost, rest, &inner)
                            : sb_sim_parse(&o->sim, v, &inner))
                rc = sb_errf(e, "schedbench run: %s: %s", a, inner.msg);
            free(rest);
        }
        else if (!strcmp(a, "--plugin"))
            rc = sb_registry_load(v, e);
        else if (!strcmp(a, "--machine")) {
            char buf[4200];
            sb_machine_free(o->machine);
            rc = (o->machine = sb_machine_load(sb_machine_path(v, buf, sizeof buf), e)) == NULL;
            if (rc)
                sb_machine_hint(v, e);
        }
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

/* XLA's SoL config: its H100 row (the built-in device), then the machine's
 * xla_sol map, then --cost's sol_* keys, each over the one before. */
static int sol_config(struct run_opts *o, struct sb_err *e)
{
    struct sb_err inner;
    char *rest = NULL;
    if (o->machine && o->machine->xla_sol &&
        !(rest = sb_sol_take_cost_keys(&o->sol, o->machine->xla_sol, &inner)))
        return sb_errf(e, "schedbench run: %s: xla_sol: %s", o->machine->path, inner.msg);
    free(rest);
    rest = NULL;
    if (o->sol_cost && !(rest = sb_sol_take_cost_keys(&o->sol, o->sol_cost, &inner)))
        return sb_errf(e, "schedbench run: --cost: %s", inner.msg);
    free(rest);
    return 0;
}

static int finish_opts(struct run_opts *o, struct sb_err *e)
{
    for (uint32_t i = 0; i < o->n_lists; i++)
        if (add_sched_list(o, o->lists[i], e))
            return -1;
    if (!o->w.n) {
        const char *corpus = sb_default_corpus();
        if (!corpus)
            return sb_errf(e, "schedbench run: no -w given and no default corpus found (looked "
                              "in $SCHEDBENCH_CORPUS, ./%s, <prefix>/share/schedbench/corpus "
                              "beside this binary, %s, %s): pass -w FILE|DIR or set "
                              "SCHEDBENCH_CORPUS", SB_DEFAULT_CORPUS, SB_SOURCE_CORPUS,
                           SB_INSTALL_CORPUS);
        if (sb_paths_add(&o->w, corpus, e))
            return -1;
    }
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
    if (!o->jobs)
        o->jobs = 1;
    if (!o->comm_astra && o->ident && (strstr(o->ident, "--system=") || strstr(o->ident, "--network=")))
        return sb_errf(e, "schedbench run: --system and --network configure --comm astra");
    if (o->sol_cost && !o->comm_sol)
        return sb_errf(e, "schedbench run: the --cost sol_* keys configure --comm xla-sol");
    if (sol_config(o, e))
        return -1;
    if (o->comm_sol && o->cost.model == SB_COST_APPROX)
        return sb_errf(e, "schedbench run: --comm xla-sol prices collectives in us; XLA's "
                          "approximate estimator (--cost-model approx) counts abstract units");
    if (o->comm_inductor && o->cost.model == SB_COST_APPROX)
        return sb_errf(e, "schedbench run: --comm inductor-* prices collectives in time; "
                          "XLA's approximate estimator (--cost-model approx) counts abstract "
                          "units");
    if (o->comm_astra && o->cost.model == SB_COST_APPROX)
        return sb_errf(e, "schedbench run: --comm astra prices collectives in time; XLA's "
                          "approximate estimator (--cost-model approx) counts abstract units");
    /* ASTRA-sim's dimension queues serve every collective type together */
    if (o->comm_astra && !o->sim.shared)
        return sb_errf(e, "schedbench run: --comm astra takes --sim inflight=N, not a limit per "
                          "collective type (ASTRA-sim's queues serve every type)");
    /* the aware backend prices each collective alone: links shared by
     * collectives in flight together are not modelled */
    if (o->comm_astra == 2 && o->sim.limit[0] > 1)
        return sb_errf(e, "schedbench run: --comm astra-aware prices each collective alone; "
                          "it takes --sim inflight=1 (links shared between collectives in "
                          "flight are not modelled)");
    o->astra.default_ranks = o->cost.default_ranks;
    sb_astra_comm_queue(&o->astra, &o->astra_queue);
    o->sim.queue = o->comm_astra == 1 ? &o->astra_queue : NULL;
    if (o->cell_timeout_s > 0 && !o->isolate)
        return sb_errf(e, "schedbench run: --cell-timeout needs --isolate (a cell can only be "
                          "stopped in a process of its own)");
    if (!o->cell_timeout_s)
        o->cell_timeout_s = 600;
    if (!o->shard_n)
        o->shard_k = o->shard_n = 1;
    o->sim.edge_lat_us = sb_cost_edge_lat(&o->cost);
    o->sim.cost = &o->cost; /* buckets are priced by the same model */
    if (o->comm_inductor) {
        o->inductor = (struct sb_inductor_ctx){(enum sb_inductor_model)o->comm_inductor, &o->cost};
        o->sim.bucket_us = sb_inductor_bucket_us;
        o->sim.bucket_ctx = &o->inductor;
    }
    o->sim.record = o->trace_dir != NULL || o->mem_dir != NULL;
    /* the extra outputs' folders are made, as `plot -o` makes its own */
    if ((o->mem_dir && sb_mkdirs(o->mem_dir, e)) || (o->trace_dir && sb_mkdirs(o->trace_dir, e)))
        return -1;
    sweep_identity(o);
    /* without -o, a file of this sweep's own: running a few cells must not
     * overwrite the full sweep of results/latest.csv (make run names that) */
    if (!o->out) {
        if (sb_mkdirs("results", e))
            return -1;
        o->out_named = sb_strf("results/%016llx.csv", (unsigned long long)o->sweep_id);
        o->out = o->out_named;
    }
    return 0;
}

static void free_opts(struct run_opts *o)
{
    sb_paths_free(&o->w);
    for (uint32_t i = 0; i < o->n_sched; i++)
        sb_sched_free(&o->sched[i]);
    free(o->sched);
    free(o->lists);
    free(o->ident);
    free(o->sol_cost);
    free(o->out_named);
    sb_machine_free(o->machine);
}

/* ---- one cell ------------------------------------------------------------------ */

static void write_header(FILE *f)
{
    for (int i = 0; sb_result_columns[i]; i++)
        sb_csv_field(f, sb_result_columns[i], i == 0);
    sb_csv_end(f);
}

/* A list of per-device byte counts, ';'-separated; `none` is written as an
 * empty entry.  Sized to the devices, so a machine of 256 lists them all. */
static void write_dev_list(FILE *f, const uint64_t *v, uint32_t n, uint64_t none)
{
    char *buf = sb_xmalloc((size_t)n * 22 + 1), *p = buf;
    *p = 0;
    for (uint32_t d = 0; d < n; d++) {
        if (d)
            *p++ = ';';
        if (v[d] != none)
            p += sprintf(p, "%llu", (unsigned long long)v[d]);
        *p = 0;
    }
    sb_csv_field(f, buf, 0);
    free(buf);
}

static void write_placement(FILE *f, const struct sb_graph *g, const struct sb_sim_result *r,
                            const struct sb_schedule *s, int no_mem)
{
    const struct sb_machine_view *m = g->v.machine;
    if (!r) {
        for (int k = 0; k < 5; k++)
            sb_csv_field(f, "", 0);
    } else {
        sb_csv_fieldf(f, 0, "%u", r->devices_used);
        sb_csv_fieldf(f, 0, "%llu", (unsigned long long)r->transfer_bytes);
        sb_csv_fieldf(f, 0, "%u", r->barriers);
        if (no_mem) { /* per-device peaks and capacity need tensor sizes */
            sb_csv_field(f, "", 0);
            sb_csv_field(f, "", 0);
        } else {
            write_dev_list(f, r->dev_peak_bytes, r->n_dev, UINT64_MAX);
            sb_csv_fieldf(f, 0, "%u", r->over_capacity);
        }
    }
    write_dev_list(f, m->mem_cap_bytes, m->n_devices, SB_MEM_UNLIMITED);
    if (s && s->mem_limit_bytes)
        sb_csv_fieldf(f, 0, "%llu", (unsigned long long)s->mem_limit_bytes);
    else
        sb_csv_field(f, "", 0);
}

static void write_sweep(FILE *f, const struct run_opts *o)
{
    sb_csv_fieldf(f, 0, "%u/%u", o->shard_k, o->shard_n);
    sb_csv_fieldf(f, 0, "%016llx", (unsigned long long)o->sweep_id);
    sb_csv_fieldf(f, 0, "%llu", (unsigned long long)o->w.n * o->n_sched);
}

/* The cost_model column: results of different models do not compare (compare
 * and the gate refuse them), and ASTRA-sim's collectives are another model. */
static const char *model_name(const struct run_opts *o)
{
    return o->cost.model == SB_COST_APPROX ? "approx"
           : o->comm_inductor == SB_INDUCTOR_CLASSIC ? "analytical+inductor-classic"
           : o->comm_inductor == SB_INDUCTOR_MULTI   ? "analytical+inductor-multi"
           : o->comm_astra == 2            ? "analytical+astra-aware"
           : o->comm_astra                 ? "analytical+astra"
           : o->comm_sol                   ? "analytical+xla-sol"
                                           : "analytical";
}

/* A job of ranks reports exposed communication, compute and communication
 * per rank (each device one rank's program): the most over the ranks and
 * their mean, in the order exposed, compute, comm. */
struct rank_figures {
    int job;
    double max[3], mean[3];
};

static struct rank_figures rank_figures(const struct sb_graph *g, const struct sb_sim_result *r)
{
    struct rank_figures rf = {0};
    if (!r || !sb_graph_is_job(&g->v))
        return rf;
    rf.job = 1;
    for (uint32_t d = 0; d < r->n_dev; d++) {
        const double x[3] = {r->dev_exposed_us[d], r->dev_compute_us[d], r->dev_comm_us[d]};
        for (int k = 0; k < 3; k++) {
            rf.max[k] = x[k] > rf.max[k] ? x[k] : rf.max[k];
            rf.mean[k] += x[k] / r->n_dev;
        }
    }
    return rf;
}

static void write_row(FILE *f, const struct sb_graph *g, const struct sb_sched *sc,
                      const char *status, const struct sb_sim_result *r,
                      const struct sb_schedule *s, double sched_ms, const struct run_opts *o,
                      uint64_t cell)
{
    sb_csv_field(f, g->name, 1);
    sb_csv_field(f, sc->spec, 0);
    sb_csv_field(f, status, 0);
    sb_csv_fieldf(f, 0, "%u", g->v.n_nodes);
    sb_csv_fieldf(f, 0, "%u", sb_graph_n_collectives(g));
    /* a trace without tensor sizes has no memory to report: empty, not 0 */
    int no_mem = sb_graph_meta(g, "tensor_sizes") && !strcmp(sb_graph_meta(g, "tensor_sizes"), "none");
    struct rank_figures rf = rank_figures(g, r);
    if (r) {
        sb_csv_fieldf(f, 0, "%.3f", r->makespan_us);
        if (no_mem)
            sb_csv_field(f, "", 0);
        else
            sb_csv_fieldf(f, 0, "%llu", (unsigned long long)r->peak_mem_bytes);
        sb_csv_fieldf(f, 0, "%.3f", rf.job ? rf.max[0] : r->exposed_comm_us);
        sb_csv_fieldf(f, 0, "%.3f", rf.job ? rf.max[1] : r->compute_us);
        sb_csv_fieldf(f, 0, "%.3f", rf.job ? rf.max[2] : r->comm_us);
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
    sb_csv_field(f, model_name(o), 0);
    sb_csv_fieldf(f, 0, "%llu", (unsigned long long)cell);
    /* how far above the floor: 0 means provably optimal */
    if (r && r->makespan_lb_us > 0) {
        double gap = 100.0 * (r->makespan_us - r->makespan_lb_us) / r->makespan_lb_us;
        /* the bound sums in another order than the simulator: at equality the
         * last bits may differ, which must not print as -0.000 */
        sb_csv_fieldf(f, 0, "%.3f", gap < 0 && gap > -1e-9 ? 0.0 : gap);
    } else
        sb_csv_field(f, "", 0);
    write_placement(f, g, r, s, no_mem);
    sb_csv_field(f, sc->ident, 0);
    char cost[768];
    sb_cost_describe(&o->cost, cost, sizeof cost);
    if (o->comm_sol) {
        size_t n = strlen(cost);
        cost[n++] = ';';
        sb_sol_describe(&o->sol, cost + n, sizeof cost - n);
    }
    if (o->comm_inductor)
        sb_inductor_describe((enum sb_inductor_model)o->comm_inductor, &o->cost.nccl, cost,
                             sizeof cost);
    sb_csv_field(f, cost, 0);
    write_sweep(f, o);
    if (r)
        sb_csv_fieldf(f, 0, "%.3f", r->astra_exposed_us);
    else
        sb_csv_field(f, "", 0);
    for (int k = 0; k < 3; k++)
        if (rf.job)
            sb_csv_fieldf(f, 0, "%.3f", rf.mean[k]);
        else
            sb_csv_field(f, "", 0);
    sb_csv_end(f);
}

/* The row of a cell whose workload did not load (--keep-going; or, with
 * --isolate, a load that timed out or crashed): the file path stands for the
 * workload name, and only the identity columns are filled. */
static void write_load_error(FILE *f, const char *path, const char *sched, const char *status,
                             const struct run_opts *o, uint64_t cell)
{
    for (int i = 0; sb_result_columns[i]; i++) {
        const char *c = sb_result_columns[i];
        if (!strcmp(c, "workload"))
            sb_csv_field(f, path, i == 0);
        else if (!strcmp(c, "scheduler"))
            sb_csv_field(f, sched, 0);
        else if (!strcmp(c, "status"))
            sb_csv_field(f, status, 0);
        else if (!strcmp(c, "cost_model"))
            sb_csv_field(f, model_name(o), 0);
        else if (!strcmp(c, "cell"))
            sb_csv_fieldf(f, 0, "%llu", (unsigned long long)cell);
        else if (!strcmp(c, "shard")) {
            write_sweep(f, o);
            i += 2; /* sweep_id, sweep_cells */
        } else
            sb_csv_field(f, "", i == 0);
    }
    sb_csv_end(f);
}

/* DIR/<workload>__<scheduler>.<ext>, with both names reduced to [A-Za-z0-9._-] */
static void cell_path(char *path, size_t n, const char *dir, const struct sb_graph *g,
                      const char *sched, const char *ext)
{
    char a[256], b[256];
    sb_safe_name(a, sizeof a, g->name);
    sb_safe_name(b, sizeof b, sched);
    snprintf(path, n, "%s/%s__%s.%s", dir, a, b, ext);
}

static int write_timeline(const char *dir, const struct sb_graph *g, const char *sched,
                          const struct sb_schedule *s, const struct sb_sim_result *r,
                          uint64_t sweep_id, struct sb_err *e)
{
    char path[4096];
    cell_path(path, sizeof path, dir, g, sched, "csv");
    struct sb_atomic out;
    if (sb_atomic_open(&out, path, e))
        return -1;
    /* begin/end in the run's time unit, so plot can draw memory over time;
     * sweep_id ties the file to the results of its run (a --mem-dir folder
     * is shared by every run that names it, and plot refuses another's) */
    fprintf(out.f, "position,node,name,mem_bytes,begin_us,end_us,sweep_id,kind,device,"
                   "coll_begin_us,coll_end_us,coll_lane");
    /* several devices: every device's memory, a column each, named after it
     * (as cost_us.<device> in a workload); mem_bytes is the peak device's */
    const struct sb_machine_view *m = g->v.machine;
    uint32_t nd = r->dev_mem_bytes && m->n_devices > 1 ? m->n_devices : 0;
    for (uint32_t d = 0; d < nd; d++) {
        char col[300];
        snprintf(col, sizeof col, "mem_bytes.%s", m->dev_name[d]);
        sb_csv_field(out.f, col, 0);
    }
    /* appended: the stream the node ran on, on its device (sb_lane), for
     * plot --gantt's lane per stream */
    fprintf(out.f, ",stream\n");
    for (uint32_t i = 0; i < r->n_pos; i++) {
        uint32_t v = s->order[i];
        sb_csv_fieldf(out.f, 1, "%u", i);
        sb_csv_fieldf(out.f, 0, "%u", v);
        sb_csv_field(out.f, g->names + g->name_off[v], 0);
        sb_csv_fieldf(out.f, 0, "%llu", (unsigned long long)r->mem_bytes[i]);
        sb_csv_fieldf(out.f, 0, "%.3f", r->begin_us ? r->begin_us[v] : 0);
        sb_csv_fieldf(out.f, 0, "%.3f", r->end_us ? r->end_us[v] : 0);
        sb_csv_fieldf(out.f, 0, "%016llx", (unsigned long long)sweep_id);
        /* for plot --gantt: what runs where, and when a collective ran */
        sb_csv_field(out.f, sb_kind_name((enum sb_kind)g->kind[v]), 0);
        sb_csv_fieldf(out.f, 0, "%d", s->device ? s->device[v] : 0);
        if (g->kind[v] == SB_KIND_START && r->coll_begin_us && r->coll_end_us &&
            r->coll_lane) {
            sb_csv_fieldf(out.f, 0, "%.3f", r->coll_begin_us[v]);
            sb_csv_fieldf(out.f, 0, "%.3f", r->coll_end_us[v]);
            sb_csv_fieldf(out.f, 0, "%u", r->coll_lane[v]);
        } else {
            sb_csv_field(out.f, "", 0);
            sb_csv_field(out.f, "", 0);
            sb_csv_field(out.f, "", 0);
        }
        for (uint32_t d = 0; d < nd; d++)
            sb_csv_fieldf(out.f, 0, "%llu",
                          (unsigned long long)r->dev_mem_bytes[(size_t)i * nd + d]);
        sb_csv_fieldf(out.f, 0, "%u", sb_lane(&g->v, v, s->device ? (uint32_t)s->device[v] : 0));
        sb_csv_end(out.f);
    }
    return sb_atomic_commit(&out, e);
}

/* Several devices: <cell>.copies.csv beside the timeline, each copy over a
 * link in the order the simulator made them (plot --gantt draws a lane per
 * link); a header alone when nothing was copied. */
static int write_copies(const char *dir, const struct sb_graph *g, const char *sched,
                        const struct sb_sim_result *r, uint64_t sweep_id, struct sb_err *e)
{
    const struct sb_machine_view *m = g->v.machine;
    char path[4096];
    if (m->n_devices < 2 || !r->dev_mem_bytes)
        return 0;
    cell_path(path, sizeof path, dir, g, sched, "copies.csv");
    struct sb_atomic out;
    if (sb_atomic_open(&out, path, e))
        return -1;
    fprintf(out.f, "producer,name,from,to,begin_us,end_us,bytes,sweep_id\n");
    for (uint32_t k = 0; k < r->n_copies; k++) {
        const struct sb_sim_copy *c = &r->copies[k];
        sb_csv_fieldf(out.f, 1, "%u", c->producer);
        sb_csv_field(out.f, g->names + g->name_off[c->producer], 0);
        sb_csv_field(out.f, m->dev_name[c->from_dev], 0);
        sb_csv_field(out.f, m->dev_name[c->to_dev], 0);
        sb_csv_fieldf(out.f, 0, "%.3f", c->begin_us);
        sb_csv_fieldf(out.f, 0, "%.3f", c->end_us);
        sb_csv_fieldf(out.f, 0, "%llu", (unsigned long long)c->bytes);
        sb_csv_fieldf(out.f, 0, "%016llx", (unsigned long long)sweep_id);
        sb_csv_end(out.f);
    }
    return sb_atomic_commit(&out, e);
}

static int write_extras(const struct run_opts *o, const struct sb_graph *g,
                        const char *sched, const struct sb_schedule *s,
                        const struct sb_sim_result *r, struct sb_err *e)
{
    char path[4096];
    if (o->mem_dir && (write_timeline(o->mem_dir, g, sched, s, r, o->sweep_id, e) ||
                       write_copies(o->mem_dir, g, sched, r, o->sweep_id, e)))
        return -1;
    if (o->trace_dir) {
        cell_path(path, sizeof path, o->trace_dir, g, sched, "json");
        if (sb_trace_write(path, g, sched, s, r, o->sim.shared, e))
            return -1;
    }
    return 0;
}

/* The first figure of r that a results file cannot hold, as a message; NULL
 * when every one fits.  A row is only written with numbers its readers take
 * back (cmd/table.h: compare refuses a time above SB_RESULTS_MAX_US, and a
 * number past 10^250 would not even fit the writer's field).  The machine
 * and cost ceilings (core/num.h) keep every single time finite; a sum over a
 * whole graph can still pass the limit, and the cell then says so. */
static const char *figures_beyond(const struct sb_sim_result *r, char *buf, size_t n)
{
    static const char *const name[] = {"makespan_us", "exposed_comm_us", "compute_us",
                                       "comm_us", "makespan_lb_us", "lb_gap_pct"};
    double gap = r->makespan_lb_us > 0
                     ? 100.0 * (r->makespan_us - r->makespan_lb_us) / r->makespan_lb_us : 0;
    const double v[] = {r->makespan_us, r->exposed_comm_us, r->compute_us, r->comm_us,
                        r->makespan_lb_us, gap};
    for (int k = 0; k < 6; k++)
        if (!(v[k] <= SB_RESULTS_MAX_US)) { /* NaN and infinity too */
            snprintf(buf, n, "%s %.6g is above 10^22, the most a results file holds: the "
                             "graph's times, its machine's or --cost's add up to more (the "
                             "ranges are in docs/machines.md, \"Ranges\")", name[k], v[k]);
            return buf;
        }
    if ((double)r->peak_mem_bytes > SB_RESULTS_MAX_BYTES) {
        snprintf(buf, n, "peak_mem_bytes %llu is above 2^62, the most a results file holds",
                 (unsigned long long)r->peak_mem_bytes);
        return buf;
    }
    return NULL;
}

/* Writes the cell's row to f.  Returns 0 when the cell is ok, 1 when it is
 * invalid or failed, -1 (message in io) when an extra output failed. */
static int run_cell(FILE *f, const struct sb_graph *g, const struct sb_sched *sc,
                    const struct run_opts *o, uint64_t cell, struct sb_err *io)
{
    struct sb_schedule s;
    struct sb_err e;
    char status[600];
    int bad = 1, io_fail = 0;
    sb_schedule_init(&s, g, g->v.machine->n_devices);
    double t0 = sb_now_ms();
    int failed = sb_sched_run(sc, g, &s, &e);
    double ms = sb_now_ms() - t0;
    if (failed) {
        snprintf(status, sizeof status, "error:%s", e.msg);
        write_row(f, g, sc, status, NULL, &s, ms, o, cell);
    } else if (sb_schedule_validate(&g->v, &s, &e)) {
        snprintf(status, sizeof status, "invalid:%s", e.msg);
        write_row(f, g, sc, status, NULL, &s, ms, o, cell);
    } else if (o->comm_astra && sb_schedule_buckets(&s)) {
        /* ASTRA-sim's queues take each collective as the graph gives it */
        snprintf(status, sizeof status, "error:the schedule buckets collectives, which --comm "
                                        "%s does not price", o->comm_astra == 2 ? "astra-aware"
                                                                                : "astra");
        write_row(f, g, sc, status, NULL, &s, ms, o, cell);
    } else {
        struct sb_sim_result r;
        char beyond[400];
        sb_sim_run(g, &s, &o->sim, &r);
        if (figures_beyond(&r, beyond, sizeof beyond)) {
            snprintf(status, sizeof status, "error:%s", beyond);
            write_row(f, g, sc, status, NULL, &s, ms, o, cell);
        } else {
            write_row(f, g, sc, "ok", &r, &s, ms, o, cell);
            bad = 0;
            io_fail = write_extras(o, g, sc->spec, &s, &r, io) != 0;
        }
        sb_sim_result_free(&r);
    }
    sb_schedule_free(&s);
    return io_fail ? -1 : bad;
}

/* ---- the sweep -------------------------------------------------------------------
 *
 * Cells are workload-major: cell c = workload * n_sched + scheduler.  A shard
 * K/N owns the cells with c % N == K - 1, so every shard gets a share of every
 * workload's schedulers.  Workers take the shard's cells in order; a worker
 * that would wait for another to finish loading a workload loads the next one
 * instead (next_work), and a workload is freed by the last of its cells, so at
 * most `jobs` graphs are in memory at once.  Each row is
 * kept in memory and the file is written in cell order at the end, which makes
 * the output independent of --jobs. */

struct workload {
    pthread_mutex_t mu;
    struct sb_graph *g;
    int state;            /* 0 not loaded, 1 loaded, -1 failed, -2 a model refused it,
                             -3 its load timed out or crashed (--isolate; why in err) */
    uint32_t cells_left;  /* this shard's cells still to run */
    /* scheduling of the workers, under sweep.mu: */
    uint64_t cursor;      /* its first unclaimed cell is at or after cells[cursor] */
    uint64_t unclaimed;   /* its cells no worker has taken yet */
    int opened;           /* a worker has started loading it */
    int ready;            /* its load has ended (acquire() returns at once) */
    char *name;           /* the graph's name, kept after it is freed */
    struct sb_machine *machine; /* from its '# machine=' line, without --machine */
    struct sb_err err;
    uint64_t digest;      /* of every file its load read, from o->inputs_digest */
    int have_digest;      /* the load ran here (not only in a child that died) */
    uint64_t n_stale;     /* journalled rows not reused: it changed since */
};

/* A row of the journal a --resume found for a cell, reused once the cell's
 * workload has loaded here with the same digest. */
struct candidate {
    char *row;            /* the results row, as the file gets it */
    char *workload;       /* its workload field */
    uint64_t digest;      /* its inputs field */
    int status;           /* 0 ok, 1 not */
};

struct sweep {
    struct run_opts *o;
    uint64_t *cells;      /* this shard's cell indices, ascending */
    uint64_t n_cells;
    char **row;           /* [n_cells] each row's CSV text */
    int *status;          /* [n_cells] run_cell's result; 2 = not run */
    struct workload *wl;  /* [o->w.n] */
    pthread_mutex_t mu;   /* next, claimed, n_open, done, io_err, progress */
    pthread_cond_t cv;    /* a load ended or a workload was freed */
    uint8_t *claimed;     /* [n_cells] taken by a worker (or resumed) */
    uint32_t n_open;      /* workloads opened and not yet freed */
    uint64_t next, done;
    int io_failed;
    struct sb_err io_err;
    double t0_ms, last_draw_ms;
    int progress;
    FILE *journal;        /* OUT.partial: rows as they finish (--resume); NULL for -o - */
    char *journal_path;
    uint64_t n_journal;   /* rows the journal holds: read back, and written since */
    struct candidate *cand; /* [n_cells] with --resume: rows found in the journal */
    uint64_t n_cand;
    uint64_t n_reused;    /* rows taken from the journal of a killed run */
};

/* The machine a workload runs on: --machine, else the one its '# machine='
 * line names (a path relative to the workload file), else one device. */
static int place(const struct run_opts *o, struct workload *W, struct sb_err *e)
{
    if (o->machine)
        return sb_machine_apply(o->machine, W->g, e);
    return sb_machine_of_graph(W->g, &W->machine, e);
}

/* An imported graph (HLO) may carry no compute costs: under the analytical
 * model every compute_us would then be 0 and the comparison meaningless. */
static void warn_no_cost(const struct run_opts *o, const struct sb_graph *g)
{
    if (o->cost.model != SB_COST_ANALYTICAL || g->dtype) /* a roofline prices it */
        return;
    uint32_t compute = 0;
    for (uint32_t v = 0; v < g->v.n_nodes; v++)
        if (g->kind[v] == SB_KIND_COMPUTE) {
            if (g->cost_us[v] > 0)
                return;
            compute++;
        }
    if (compute)
        fprintf(stderr, "schedbench run: warning: %s: none of its %u compute nodes has a "
                        "cost_us, so under the analytical cost model they all take 0 us; "
                        "use --cost-model approx (XLA's estimator) for HLO\n", g->path,
                compute);
}

/* The roofline XLA's SoL model takes its device from (its HBM term). */
static const struct sb_roofline *sol_roof(const struct run_opts *o)
{
    if (o->machine && o->machine->has_roof[0])
        return &o->machine->roof[0];
    return &o->cost.roof;
}

/* The steps of a workload's load: read and build the graph, price it, give
 * ASTRA-sim its collectives, place it on its machine.  The same in this
 * process and in a child that tries them first (--isolate). */
static void load_workload(const struct run_opts *o, uint32_t w, struct workload *W)
{
    W->g = sb_graph_load_with(o->w.path[w], &o->imp, &W->err);
    W->state = W->g ? 1 : -1;
    if (W->g)
        sb_cost_apply(&o->cost, W->g);
    if (W->g && o->comm_sol) /* the device's HBM and fp32 rate: the machine's first, or --cost */
        sb_sol_apply(&o->sol, sol_roof(o)->hbm_gbps, sol_roof(o)->peak_tflops[SB_DTYPE_FP32],
                     &o->cost, W->g);
    if (W->g && o->comm_inductor)
        sb_inductor_apply((enum sb_inductor_model)o->comm_inductor, &o->cost, W->g);
    /* a collective ASTRA-sim's model refuses is not bad input: the
     * workload's rows say so and the sweep goes on */
    if (W->g && o->comm_astra && sb_astra_apply(&o->astra, o->comm_astra == 2, W->g, &W->err)) {
        sb_graph_free(W->g);
        W->g = NULL;
        W->state = -2;
    }
    if (W->g && place(o, W, &W->err)) {
        sb_graph_free(W->g);
        W->g = NULL;
        sb_machine_free(W->machine);
        W->machine = NULL;
        W->state = -1;
    }
}

static void interrupted(int sig);

struct probe_ctx {
    const struct run_opts *o;
    uint32_t w;
};

/* The child's side of a load tried first (--isolate): its outcome, good or
 * bad, is found again by the load that follows here; only whether it ended,
 * in time and alive, is wanted.  Its messages would come twice: not shown. */
static int probe_child(FILE *f, void *arg)
{
    const struct probe_ctx *x = arg;
    struct workload W;
    (void)f;
    memset(&W, 0, sizeof W);
    if (!freopen("/dev/null", "w", stderr))
        return 0;
    load_workload(x->o, x->w, &W);
    return 0;
}

/* --cell-timeout covers loading too: under --isolate a workload is loaded in
 * a child first, and only one whose load ends in time, without crashing, is
 * loaded here (an importer that loops for ever would otherwise stop the
 * sweep with no row).  Loading twice is the price, only with --isolate.  0
 * when the load may go ahead; else the workload is state -3 and its cells get
 * the reason as their status. */
static int probe_load(struct sweep *S, uint32_t w)
{
    struct probe_ctx x = {S->o, w};
    char *row, why_buf[64];
    const char *why;
    int sig;
    int st = sb_isolate(probe_child, &x, S->o->cell_timeout_s, &row, &why, why_buf,
                        sizeof why_buf, &sig);
    free(row);
    if (st == SB_ISOLATE_INTERRUPTED)
        interrupted(sig);
    if (st != 1 || !why)
        return 0;
    struct workload *W = &S->wl[w];
    W->state = -3;
    snprintf(W->err.msg, sizeof W->err.msg, "%s", why);
    fprintf(stderr, "schedbench run: %s: loading it %s (--cell-timeout %g s): its cells are "
                    "recorded as '%s'\n", S->o->w.path[w],
            strcmp(why, "timeout") ? "crashed" : "took too long", S->o->cell_timeout_s, why);
    return -1;
}

static struct sb_graph *acquire(struct sweep *S, uint32_t w)
{
    struct workload *W = &S->wl[w];
    pthread_mutex_lock(&W->mu);
    if (W->state == 0 && (!S->o->isolate || probe_load(S, w) == 0)) {
        /* the digest of what the load reads: the workload, its rank and
         * group files, its machine (journal(), --resume) */
        uint64_t h = S->o->inputs_digest;
        sb_digest_start(&h);
        load_workload(S->o, w, W);
        sb_digest_start(NULL);
        W->digest = h;
        W->have_digest = 1;
        if (W->g) {
            warn_no_cost(S->o, W->g);
            W->name = sb_xstrdup(W->g->name);
        }
    }
    struct sb_graph *g = W->g;
    pthread_mutex_unlock(&W->mu);
    return g;
}

static void release(struct sweep *S, uint32_t w)
{
    struct workload *W = &S->wl[w];
    pthread_mutex_lock(&W->mu);
    int freed = --W->cells_left == 0;
    if (freed) {
        sb_graph_free(W->g);
        W->g = NULL;
        sb_machine_free(W->machine);
        W->machine = NULL;
    }
    pthread_mutex_unlock(&W->mu);
    if (freed) {
        pthread_mutex_lock(&S->mu);
        S->n_open--;
        pthread_cond_broadcast(&S->cv);
        pthread_mutex_unlock(&S->mu);
    }
}

/* The bar, cells done, elapsed time and an estimate of what is left (the
 * mean time per finished cell times the cells left, over the threads). */
static void draw_progress(struct sweep *S)
{
    double now = sb_now_ms(), el = (now - S->t0_ms) / 1e3;
    if (!S->progress || el < 1.0 || (now - S->last_draw_ms < 100 && S->done < S->n_cells))
        return;
    S->last_draw_ms = now;
    int width = 30, fill = (int)(width * S->done / (S->n_cells ? S->n_cells : 1));
    char eta[48] = "";
    uint64_t ran = S->done > S->n_reused ? S->done - S->n_reused : 0;
    if (ran && S->done < S->n_cells) {
        double left = el / (double)ran * (double)(S->n_cells - S->done);
        if (left >= 60)
            snprintf(eta, sizeof eta, "  ~%.0f min left", left / 60);
        else
            snprintf(eta, sizeof eta, "  ~%.0f s left", left);
    }
    fprintf(stderr, "\r[%.*s%*s] %llu/%llu cells  %.1f s%s ", fill,
            "##############################", width - fill, "",
            (unsigned long long)S->done, (unsigned long long)S->n_cells, el, eta);
    fflush(stderr);
}

/* Redraws the bar while long cells run, so the elapsed time moves. */
static void *ticker(void *arg)
{
    struct sweep *S = arg;
    struct timespec ts = {0, 250 * 1000 * 1000};
    for (;;) {
        pthread_mutex_lock(&S->mu);
        int over = S->done >= S->n_cells;
        if (!over && sb_now_ms() - S->last_draw_ms >= 500)
            S->last_draw_ms = 0, draw_progress(S);
        pthread_mutex_unlock(&S->mu);
        if (over)
            return NULL;
        nanosleep(&ts, NULL);
    }
}

/* ---- Ctrl-C -------------------------------------------------------------------
 *
 * SIGINT, SIGTERM or SIGHUP ends the run at once: the results file is left as
 * it was (its temporary is removed), the isolated cells still running are
 * killed, the journal keeps every finished row, and the message says how to
 * continue.  Everything the handler touches is prepared before the sweep, as
 * only write, unlink, kill and _exit are safe there.  An isolated cell that
 * dies of one of these signals (Ctrl-C reaches the whole process group, and
 * the child may die first) ends the run the same way: its row is not written,
 * so --resume runs it again. */
static char *sig_msg, *sig_tmp;
static size_t sig_msg_len;
static pid_t sig_pid; /* the run's own process */
static struct sigaction sig_hup_was;

static void on_signal(int sig)
{
    /* an isolated cell's child inherits the handler: it dies of the signal,
     * which its parent takes for an interruption (interrupted()) */
    if (getpid() != sig_pid) {
        signal(sig, SIG_DFL);
        raise(sig);
        return;
    }
    sb_isolate_kill_all();
    if (sig_tmp)
        unlink(sig_tmp);
    if (sig_msg && write(2, sig_msg, sig_msg_len) < 0)
        sig_msg = NULL; /* nothing more to do about a closed stderr */
    _exit(130);
}

/* An isolated child was stopped by sig: the run stops as if it got it. */
static void interrupted(int sig)
{
    on_signal(sig);
}

static void catch_signals(const char *out, const char *tmp, const char *journal)
{
    if (journal)
        sig_msg = sb_strf("\nschedbench run: interrupted; the results file %s was not "
                          "written. The finished cells are in %s: run the same command "
                          "with --resume to continue from them.\n", out, journal);
    else
        sig_msg = sb_strf("\nschedbench run: interrupted; no results were written (-o - "
                          "keeps no journal to resume from).\n");
    sig_msg_len = strlen(sig_msg);
    sig_tmp = tmp ? sb_xstrdup(tmp) : NULL;
    sig_pid = getpid();
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    /* a hangup ends the run only where it would have: not under nohup */
    sigaction(SIGHUP, NULL, &sig_hup_was);
    if (sig_hup_was.sa_handler != SIG_IGN)
        sigaction(SIGHUP, &sa, NULL);
}

static void release_signals(void)
{
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    sigaction(SIGHUP, &sig_hup_was, NULL);
    free(sig_msg);
    free(sig_tmp);
    sig_msg = sig_tmp = NULL;
}

/* Temporaries OUT.tmp.<pid> of runs that were killed (SIGKILL leaves them):
 * removed once their process is gone. */
static void remove_stale_tmp(const char *out)
{
    const char *slash = strrchr(out, '/');
    char *dir = slash ? sb_strf("%.*s", (int)(slash - out), out) : sb_xstrdup(".");
    const char *base = slash ? slash + 1 : out;
    size_t n = strlen(base);
    DIR *d = opendir(*dir ? dir : "/");
    struct dirent *de;
    while (d && (de = readdir(d))) {
        const char *p = de->d_name;
        if (strncmp(p, base, n) || strncmp(p + n, ".tmp.", 5))
            continue;
        char *end;
        long pid = strtol(p + n + 5, &end, 10);
        if (end == p + n + 5 || *end || pid <= 0)
            continue;
        if (kill((pid_t)pid, 0) != 0 && errno == ESRCH) {
            char *path = sb_strf("%s/%s", dir, p);
            unlink(path);
            free(path);
        }
    }
    if (d)
        closedir(d);
    free(dir);
}

/* ---- the journal ------------------------------------------------------------------
 *
 * OUT.partial holds every finished row, appended and flushed as it completes,
 * so that a sweep killed with SIGINT or SIGKILL, or one whose results file
 * could not be written at the end, can continue (--resume).  Its columns are
 * the results columns and one more, `inputs`: the digest of every file the
 * row's workload's load read (sb_digest_start), so that a row computed from a
 * workload or machine edited since is not reused.  The results file is only
 * ever replaced whole; the journal goes once it is in place. */
#define JOURNAL_INPUTS "inputs"

static void journal(struct sweep *S, const char *row, uint32_t w)
{
    if (!S->journal || !row)
        return;
    const struct workload *W = &S->wl[w];
    size_t n = strlen(row);
    pthread_mutex_lock(&S->mu);
    fwrite(row, 1, n && row[n - 1] == '\n' ? n - 1 : n, S->journal);
    if (W->have_digest)
        fprintf(S->journal, ",%016llx\n", (unsigned long long)W->digest);
    else /* its load ran only in a child that died: never reused */
        fputs(",\n", S->journal);
    fflush(S->journal);
    S->n_journal++;
    pthread_mutex_unlock(&S->mu);
}

static void write_journal_header(FILE *f)
{
    for (int i = 0; sb_result_columns[i]; i++)
        sb_csv_field(f, sb_result_columns[i], i == 0);
    sb_csv_field(f, JOURNAL_INPUTS, 0);
    sb_csv_end(f);
}

static int find_cell(const struct sweep *S, uint64_t c, uint64_t *at)
{
    uint64_t lo = 0, hi = S->n_cells;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (S->cells[mid] < c)
            lo = mid + 1;
        else
            hi = mid;
    }
    *at = lo;
    return lo < S->n_cells && S->cells[lo] == c;
}

/* ---- --resume: reading the journal back ---------------------------------------------
 *
 * The header must be this schedbench's, column for column (a journal of other
 * columns or another order is refused: its rows would land in the wrong
 * columns).  Each row is checked field by field against what run writes, and
 * against this sweep (its id, shard and cell count, the scheduler and cost
 * model of its cell); a row that fails is not reused, and said so, and its
 * cell runs again.  A row that passes is a candidate: it is reused once its
 * workload has loaded with the same digest (do_cell).  Of several rows of one
 * cell, the last wins (a re-run appends). */

/* Column kinds of the results row as run writes it: u an unsigned integer, d a
 * decimal (%.3f), s a signed one, l a ';' list of integers or blanks; each may
 * be empty (a row that did not run), except what every row has. */
static const struct {
    const char *col;
    char kind;
    int required;
} field_kinds[] = {
    {"nodes", 'u', 1},          {"collectives", 'u', 1},     {"edges", 'u', 0},
    {"makespan_us", 'd', 0},    {"peak_mem_bytes", 'u', 0},  {"exposed_comm_us", 'd', 0},
    {"compute_us", 'd', 0},     {"comm_us", 'd', 0},         {"makespan_lb_us", 'd', 0},
    {"sched_ms", 'd', 0},       {"peak_pos", 'u', 0},        {"lb_gap_pct", 's', 0},
    {"devices_used", 'u', 0},   {"transfer_bytes", 'u', 0},  {"barriers", 'u', 0},
    {"dev_peak_bytes", 'l', 0}, {"over_capacity", 'u', 0},   {"dev_cap_bytes", 'l', 0},
    {"mem_limit_bytes", 'u', 0}, {"astra_exposed_us", 'd', 0},
    {"exposed_comm_mean_us", 'd', 0}, {"compute_mean_us", 'd', 0}, {"comm_mean_us", 'd', 0},
};

static int all_digits(const char *s, size_t n)
{
    if (!n || n > 20)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (s[i] < '0' || s[i] > '9')
            return 0;
    return 1;
}

static int field_ok(char kind, const char *v)
{
    if (!*v)
        return 1;
    if (kind == 'u')
        return all_digits(v, strlen(v));
    if (kind == 'l') {
        for (const char *p = v;;) {
            size_t k = strcspn(p, ";");
            if (k && !all_digits(p, k))
                return 0;
            if (!p[k])
                return 1;
            p += k + 1;
        }
    }
    const char *p = v + (kind == 's' && *v == '-');
    size_t k = strspn(p, "0123456789");
    if (!k)
        return 0;
    if (p[k] == '.' && strspn(p + k + 1, "0123456789") > 0)
        k += 1 + strspn(p + k + 1, "0123456789");
    return p[k] == 0;
}

/* A status run writes for a row it keeps: ok, error:, invalid:, crash: (but
 * not a cell stopped by Ctrl-C, which older versions recorded as a crash),
 * timeout. */
static int status_ok(const char *st)
{
    static const char *const stopped[] = {"crash:SIGINT", "crash:SIGTERM", "crash:SIGHUP",
                                          "crash:signal 1", "crash:signal 2", "crash:signal 15"};
    for (size_t i = 0; i < sizeof stopped / sizeof stopped[0]; i++)
        if (!strcmp(st, stopped[i]))
            return 0;
    return !strcmp(st, "ok") || !strcmp(st, "timeout") || !strncmp(st, "error:", 6) ||
           !strncmp(st, "invalid:", 8) || !strncmp(st, "crash:", 6);
}

/* Checks one journal row (fields f[0..n), n = the header's count): the index
 * of its cell in this shard, or -1 with why. */
static int64_t check_journal_row(const struct sweep *S, char **f, char *why, size_t n_why)
{
    const struct run_opts *o = S->o;
    char want[64];
    int ok_row = 0;
    uint64_t at = 0, cell = 0;
    for (uint32_t c = 0; sb_result_columns[c]; c++) {
        const char *col = sb_result_columns[c], *v = f[c];
        if (!strcmp(col, "cell")) {
            if (!all_digits(v, strlen(v)) || strlen(v) > 19)
                return snprintf(why, n_why, "cell '%.40s' is not a cell number", v), -1;
            cell = strtoull(v, NULL, 10);
            if (!find_cell(S, cell, &at))
                return snprintf(why, n_why, "cell %llu is not one of this run's",
                                (unsigned long long)cell), -1;
        }
    }
    for (uint32_t c = 0; sb_result_columns[c]; c++) {
        const char *col = sb_result_columns[c], *v = f[c];
        if (!strcmp(col, "workload")) {
            if (!*v)
                return snprintf(why, n_why, "no workload name"), -1;
        } else if (!strcmp(col, "scheduler")) {
            const char *spec = o->sched[cell % o->n_sched].spec;
            if (strcmp(v, spec))
                return snprintf(why, n_why, "scheduler '%.60s', but cell %llu is '%.60s' in "
                                "this run", v, (unsigned long long)cell, spec), -1;
        } else if (!strcmp(col, "status")) {
            if (!status_ok(v))
                return snprintf(why, n_why, "status '%.60s' is not a finished cell's", v), -1;
            ok_row = !strcmp(v, "ok");
        } else if (!strcmp(col, "cost_model")) {
            if (strcmp(v, model_name(o)))
                return snprintf(why, n_why, "cost model '%.40s', this run's is '%s'", v,
                                model_name(o)), -1;
        } else if (!strcmp(col, "shard")) {
            snprintf(want, sizeof want, "%u/%u", o->shard_k, o->shard_n);
            if (strcmp(v, want))
                return snprintf(why, n_why, "shard '%.40s', this run is %s", v, want), -1;
        } else if (!strcmp(col, "sweep_id")) {
            snprintf(want, sizeof want, "%016llx", (unsigned long long)o->sweep_id);
            if (strcmp(v, want))
                return snprintf(why, n_why, "sweep_id '%.40s' is another sweep's (this one "
                                "is %s: other workloads, schedulers or options)", v, want), -1;
        } else if (!strcmp(col, "sweep_cells")) {
            snprintf(want, sizeof want, "%llu", (unsigned long long)o->w.n * o->n_sched);
            if (strcmp(v, want))
                return snprintf(why, n_why, "sweep_cells '%.40s', this sweep has %s", v,
                                want), -1;
        } else {
            for (size_t k = 0; k < sizeof field_kinds / sizeof field_kinds[0]; k++)
                if (!strcmp(col, field_kinds[k].col) &&
                    (!field_ok(field_kinds[k].kind, v) || (field_kinds[k].required && !*v)))
                    return snprintf(why, n_why, "%s '%.40s' is not what run writes there",
                                    col, v), -1;
        }
    }
    int c_span = -1;
    for (int c = 0; sb_result_columns[c]; c++)
        if (!strcmp(sb_result_columns[c], "makespan_us"))
            c_span = c;
    if (ok_row && c_span >= 0 && !*f[c_span])
        return snprintf(why, n_why, "an ok row without a makespan"), -1;
    return (int64_t)at;
}

struct jreader {
    struct sweep *S;
    const char *path;
    struct sb_err *e;
    uint32_t n_cols;          /* results columns + inputs */
    char **f;                 /* fields of the record being read */
    uint32_t n_f, cap_f;
    uint32_t line, rec_line;  /* the line being fed, the record's first */
    uint64_t n_rec, n_bad;
    int refused;              /* the header is not this schedbench's */
};

static void j_field(void *s, size_t len, void *data)
{
    struct jreader *J = data;
    if (J->n_f == 0)
        J->rec_line = J->line;
    if (J->n_f == J->cap_f) {
        J->cap_f = J->cap_f ? J->cap_f * 2 : 64;
        J->f = sb_xrealloc(J->f, J->cap_f * sizeof *J->f);
    }
    char *v = sb_xmalloc(len + 1);
    if (len)
        memcpy(v, s, len);
    v[len] = 0;
    J->f[J->n_f++] = v;
}

/* Told for the first few rows not reused; then only counted. */
#define JOURNAL_MAX_TOLD 5

static void j_reject(struct jreader *J, const char *why)
{
    if (J->n_bad++ < JOURNAL_MAX_TOLD)
        fprintf(stderr, "schedbench run: --resume: %s:%u: %s: this row is not reused (its "
                        "cell runs again)\n", J->path, J->rec_line, why);
}

static void j_header(struct jreader *J)
{
    uint32_t n = J->n_f > J->n_cols ? J->n_f : J->n_cols;
    for (uint32_t c = 0; c < n; c++) {
        const char *want = c + 1 < J->n_cols ? sb_result_columns[c]
                           : c + 1 == J->n_cols ? JOURNAL_INPUTS : NULL;
        const char *got = c < J->n_f ? J->f[c] : NULL;
        if (want && got && !strcmp(want, got))
            continue;
        J->refused = 1;
        if (want && got)
            sb_errf(J->e, "schedbench run: --resume: %s:1: column %u is '%.60s' where this "
                          "schedbench writes '%s': a journal of other columns (another "
                          "version, or edited) cannot be resumed; remove it, or run without "
                          "--resume", J->path, c + 1, got, want);
        else
            sb_errf(J->e, "schedbench run: --resume: %s:1: %u columns where this schedbench "
                          "writes %u: a journal of other columns (another version, or "
                          "edited) cannot be resumed; remove it, or run without --resume",
                    J->path, J->n_f, J->n_cols);
        return;
    }
}

static void j_record(int c, void *data)
{
    struct jreader *J = data;
    struct sweep *S = J->S;
    char why[300];
    (void)c;
    if (J->refused) {
    } else if (J->n_rec++ == 0) {
        j_header(J);
    } else if (J->n_f != J->n_cols) {
        snprintf(why, sizeof why, "%u fields, the header has %u", J->n_f, J->n_cols);
        j_reject(J, why);
    } else {
        int64_t at = check_journal_row(S, J->f, why, sizeof why);
        const char *in = J->f[J->n_cols - 1];
        if (at >= 0 && !(strlen(in) == 16 && strspn(in, "0123456789abcdef") == 16)) {
            snprintf(why, sizeof why, "inputs '%.40s' is not a digest (its workload did "
                                      "not load)", in);
            at = -1;
        }
        if (at < 0) {
            j_reject(J, why);
        } else {
            struct candidate *x = &S->cand[at];
            if (x->row) /* a later row of the same cell wins */
                free(x->row), free(x->workload);
            else
                S->n_cand++;
            char *buf = NULL;
            size_t len = 0;
            FILE *m = open_memstream(&buf, &len);
            SB_ASSERT(m);
            for (uint32_t k = 0; k + 1 < J->n_cols; k++)
                sb_csv_field(m, J->f[k], k == 0);
            sb_csv_end(m);
            fclose(m);
            x->row = buf;
            x->workload = sb_xstrdup(J->f[0]);
            x->digest = strtoull(in, NULL, 16);
            int cs = 0;
            while (strcmp(sb_result_columns[cs], "status"))
                cs++;
            x->status = strcmp(J->f[cs], "ok") != 0;
        }
    }
    for (uint32_t k = 0; k < J->n_f; k++)
        free(J->f[k]);
    J->n_f = 0;
}

/* Reads the journal of a killed run into S->cand; -1 with a message when it
 * cannot be resumed at all.  A last line cut short by the kill is dropped. */
static int resume_from(struct sweep *S, const char *path, struct sb_err *e)
{
    struct stat st;
    if (lstat(path, &st) != 0 && errno == ENOENT) {
        if (!S->o->quiet)
            fprintf(stderr, "schedbench run: --resume: no journal %s: every cell runs\n", path);
        return 0;
    }
    size_t n = 0;
    char *buf = sb_read_file_limited(path, sb_max_input_bytes(), &n, e);
    if (!buf) {
        char msg[sizeof e->msg];
        snprintf(msg, sizeof msg, "%s", e->msg);
        return sb_errf(e, "schedbench run: --resume: %s", msg);
    }
    while (n && buf[n - 1] != '\n')
        n--;
    if (memchr(buf, 0, n)) {
        free(buf);
        return sb_errf(e, "schedbench run: --resume: %s: a NUL byte: not a journal run "
                          "wrote; remove it, or run without --resume", path);
    }
    struct jreader J = {.S = S, .path = path, .e = e, .line = 1};
    while (sb_result_columns[J.n_cols])
        J.n_cols++;
    J.n_cols++; /* inputs */
    S->cand = sb_xcalloc(S->n_cells + 1, sizeof *S->cand);
    struct csv_parser p;
    SB_ASSERT(csv_init(&p, 0) == 0);
    csv_set_blk_size(&p, 1 << 20);
    for (size_t pos = 0; pos < n && !J.refused;) {
        const char *nl = memchr(buf + pos, '\n', n - pos);
        size_t len = nl ? (size_t)(nl - (buf + pos)) + 1 : n - pos;
        if (csv_parse(&p, buf + pos, len, j_field, j_record, &J) != len) {
            fprintf(stderr, "schedbench run: --resume: %s:%u: CSV error (%s): the rows from "
                            "here on are not reused\n", path, J.line,
                    csv_strerror(csv_error(&p)));
            break;
        }
        pos += len;
        J.line++;
    }
    if (!J.refused)
        csv_fini(&p, j_field, j_record, &J);
    csv_free(&p);
    for (uint32_t k = 0; k < J.n_f; k++)
        free(J.f[k]);
    free(J.f);
    free(buf);
    if (!J.refused && J.n_rec == 0)
        return sb_errf(e, "schedbench run: --resume: %s: empty: not a journal run wrote; "
                          "remove it, or run without --resume", path);
    if (J.n_bad > JOURNAL_MAX_TOLD)
        fprintf(stderr, "schedbench run: --resume: %s: %llu more rows not reused\n", path,
                (unsigned long long)(J.n_bad - JOURNAL_MAX_TOLD));
    if (!J.refused)
        S->n_journal = J.n_rec - 1;
    return J.refused ? -1 : 0;
}

/* The journal, before the sweep: read back (--resume), then opened to append
 * to (it held rows to reuse) or started afresh.  -1 with a message when it
 * cannot be resumed or written; nothing runs then. */
static int open_journal(struct sweep *S, struct sb_err *e)
{
    if (!strcmp(S->o->out, "-")) {
        if (S->o->resume)
            return sb_errf(e, "schedbench run: --resume needs -o FILE: its journal is "
                              "FILE.partial (-o - keeps none)");
        return 0;
    }
    S->journal_path = sb_strf("%s.partial", S->o->out);
    if (S->o->resume && resume_from(S, S->journal_path, e))
        return -1;
    int append = S->n_cand > 0;
    if (!append)
        S->n_journal = 0;
    S->journal = sb_open_regular(S->journal_path, append, e);
    if (!S->journal) {
        char msg[sizeof e->msg];
        snprintf(msg, sizeof msg, "%s", e->msg);
        return sb_errf(e, "schedbench run: the journal: %s", msg);
    }
    if (!append) {
        write_journal_header(S->journal);
        fflush(S->journal);
    }
    return 0;
}

/* A candidate row of cell i is reused when the workload loaded here read the
 * same bytes as when it was journalled, and has the same name. */
static int reuse(struct sweep *S, uint64_t i, uint32_t w, const struct sb_graph *g)
{
    struct candidate *x = &S->cand[i];
    struct workload *W = &S->wl[w];
    const char *name = g ? g->name : S->o->w.path[w];
    int same = W->have_digest && x->digest == W->digest && !strcmp(x->workload, name);
    pthread_mutex_lock(&S->mu);
    if (same) {
        S->row[i] = x->row;
        S->status[i] = x->status;
        S->n_reused++;
    } else {
        W->n_stale++;
        free(x->row);
    }
    pthread_mutex_unlock(&S->mu);
    free(x->workload);
    x->row = x->workload = NULL;
    return same;
}

struct cell_ctx {
    const struct sb_graph *g;
    const struct sb_sched *sc;
    const struct run_opts *o;
    uint64_t cell;
};

/* The child's side of an isolated cell; an output error is told on stderr,
 * which parent and child share. */
static int isolated_cell(FILE *f, void *arg)
{
    const struct cell_ctx *x = arg;
    struct sb_err io;
    int st = run_cell(f, x->g, x->sc, x->o, x->cell, &io);
    if (st < 0)
        fprintf(stderr, "%s\n", io.msg);
    return st;
}

static int run_isolated(FILE *f, const struct sb_graph *g, const struct sb_sched *sc,
                        const struct run_opts *o, uint64_t c, struct sb_err *io)
{
    struct cell_ctx x = {g, sc, o, c};
    char *row, why_buf[64];
    const char *why;
    double t0 = sb_now_ms();
    int sig;
    int st = sb_isolate(isolated_cell, &x, o->cell_timeout_s, &row, &why, why_buf,
                        sizeof why_buf, &sig);
    if (st == SB_ISOLATE_INTERRUPTED) /* no row: the run stops, --resume runs it */
        interrupted(sig);
    if (row) {
        fputs(row, f);
        free(row);
    } else {
        write_row(f, g, sc, why, NULL, NULL, sb_now_ms() - t0, o, c);
    }
    if (st < 0)
        sb_errf(io, "schedbench run: an isolated cell could not write its extra output "
                    "(message above)");
    return st;
}

static void do_cell(struct sweep *S, uint64_t i)
{
    if (S->row[i]) /* resumed */
        return;
    uint64_t c = S->cells[i];
    uint32_t w = (uint32_t)(c / S->o->n_sched), k = (uint32_t)(c % S->o->n_sched);
    struct sb_graph *g = acquire(S, w);
    const struct workload *W = &S->wl[w];
    if (S->cand && S->cand[i].row && reuse(S, i, w, g)) {
        release(S, w);
        return;
    }
    if (g) {
        char *buf = NULL;
        size_t len = 0;
        struct sb_err io;
        FILE *f = open_memstream(&buf, &len);
        SB_ASSERT(f);
        S->status[i] = S->o->isolate ? run_isolated(f, g, &S->o->sched[k], S->o, c, &io)
                                     : run_cell(f, g, &S->o->sched[k], S->o, c, &io);
        fclose(f);
        S->row[i] = buf;
        journal(S, buf, w);
        if (S->status[i] < 0) {
            pthread_mutex_lock(&S->mu);
            if (!S->io_failed)
                S->io_err = io;
            S->io_failed = 1;
            pthread_mutex_unlock(&S->mu);
        }
    } else if (S->o->keep_going || W->state == -2 || W->state == -3) {
        char *buf = NULL, *status;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        SB_ASSERT(f);
        /* -3: the load timed out or crashed, and W->err is "timeout" or
         * "crash:..." as a cell's would be */
        status = W->state == -3 ? sb_xstrdup(W->err.msg) : sb_strf("error:%s", W->err.msg);
        write_load_error(f, S->o->w.path[w], S->o->sched[k].spec, status, S->o, c);
        free(status);
        fclose(f);
        S->row[i] = buf;
        S->status[i] = 1;
        journal(S, buf, w);
    }
    release(S, w);
}

/* What a worker does next (called under S->mu): 1 run cell *i (claimed),
 * 2 load workload *w (opened), 3 wait, 0 nothing is left.  A cell of a loaded
 * workload comes first, earliest first; else the earliest workload nobody has
 * opened is loaded, while fewer than `jobs` are open.  Workloads are opened in
 * order, so the open ones come first among those with cells left and the walk
 * stops at the first unopened one.  A worker never waits for another's load
 * while there is work: each open workload keeps a worker busy (loading it or
 * running a cell of it), so with `jobs` open at least one has cells to take. */
static int next_work(struct sweep *S, uint64_t *i, uint32_t *w)
{
    while (S->next < S->n_cells && S->claimed[S->next])
        S->next++;
    if (S->next >= S->n_cells)
        return 0;
    uint32_t n_sched = S->o->n_sched;
    for (uint32_t x = (uint32_t)(S->cells[S->next] / n_sched); x < S->o->w.n; x++) {
        struct workload *W = &S->wl[x];
        if (!W->unclaimed)
            continue;
        if (!W->opened) {
            if (S->n_open >= S->o->jobs)
                return 3;
            W->opened = 1;
            S->n_open++;
            *w = x;
            return 2;
        }
        if (!W->ready)
            continue; /* another worker is loading it */
        while (S->claimed[W->cursor])
            W->cursor++;
        S->claimed[W->cursor] = 1;
        W->unclaimed--;
        *i = W->cursor;
        return 1;
    }
    return 3; /* every cell left belongs to a workload being loaded */
}

static void *worker(void *arg)
{
    struct sweep *S = arg;
    uint64_t i = 0;
    uint32_t w = 0;
    pthread_mutex_lock(&S->mu);
    for (;;) {
        switch (next_work(S, &i, &w)) {
        case 0:
            pthread_mutex_unlock(&S->mu);
            return NULL;
        case 1:
            pthread_mutex_unlock(&S->mu);
            do_cell(S, i);
            pthread_mutex_lock(&S->mu);
            S->done++;
            draw_progress(S);
            break;
        case 2:
            pthread_mutex_unlock(&S->mu);
            acquire(S, w);
            pthread_mutex_lock(&S->mu);
            S->wl[w].ready = 1;
            pthread_cond_broadcast(&S->cv);
            break;
        default:
            pthread_cond_wait(&S->cv, &S->mu);
        }
    }
}

static int plan(struct sweep *S, struct run_opts *o, struct sb_err *e)
{
    uint64_t total = (uint64_t)o->w.n * o->n_sched;
    S->o = o;
    S->cells = sb_xmalloc((total / o->shard_n + 1) * sizeof *S->cells);
    S->wl = sb_xcalloc(o->w.n, sizeof *S->wl);
    for (uint32_t w = 0; w < o->w.n; w++)
        pthread_mutex_init(&S->wl[w].mu, NULL);
    for (uint64_t c = o->shard_k - 1; c < total; c += o->shard_n) {
        S->cells[S->n_cells++] = c;
        S->wl[c / o->n_sched].cells_left++;
    }
    S->row = sb_xcalloc(S->n_cells + 1, sizeof *S->row);
    S->status = sb_xmalloc((S->n_cells + 1) * sizeof *S->status);
    for (uint64_t i = 0; i < S->n_cells; i++)
        S->status[i] = 2;
    pthread_mutex_init(&S->mu, NULL);
    pthread_cond_init(&S->cv, NULL);
    S->t0_ms = sb_now_ms();
    S->progress = !o->quiet && isatty(2);
    S->claimed = sb_xcalloc(S->n_cells + 1, 1);
    if (open_journal(S, e))
        return -1;
    for (uint64_t i = S->n_cells; i-- > 0;) {
        struct workload *W = &S->wl[S->cells[i] / o->n_sched];
        W->cursor = i; /* ends at its first cell */
        S->claimed[i] = S->row[i] != NULL; /* resumed */
        W->unclaimed += !S->claimed[i];
    }
    return 0;
}

static void execute(struct sweep *S)
{
    pthread_t tick;
    int ticking = S->progress && pthread_create(&tick, NULL, ticker, S) == 0;
    uint32_t n = S->o->jobs;
    if (n > S->n_cells)
        n = S->n_cells ? (uint32_t)S->n_cells : 1;
    if (n == 1) {
        worker(S);
    } else {
        pthread_t *t = sb_xmalloc(n * sizeof *t);
        for (uint32_t i = 0; i < n; i++)
            SB_ASSERT(pthread_create(&t[i], NULL, worker, S) == 0);
        for (uint32_t i = 0; i < n; i++)
            pthread_join(t[i], NULL);
        free(t);
    }
    if (ticking)
        pthread_join(tick, NULL);
    if (S->progress && sb_now_ms() - S->t0_ms >= 1000)
        fprintf(stderr, "\n");
}

/* Bad input wins over everything: the first workload (in order) that failed
 * to load, then the first name used by two loaded workloads. */
static int input_error(const struct sweep *S, struct sb_err *e)
{
    const struct run_opts *o = S->o;
    for (uint32_t w = 0; w < o->w.n; w++)
        if (S->wl[w].state == -1) {
            *e = S->wl[w].err;
            return -1;
        }
    for (uint32_t w = 0; w < o->w.n; w++)
        for (uint32_t v = 0; S->wl[w].name && v < w; v++)
            if (S->wl[v].name && !strcmp(S->wl[w].name, S->wl[v].name))
                return sb_errf(e, "%s: workload name '%s' is already used by %s "
                                  "(set '# name=' to tell them apart)",
                               o->w.path[w], S->wl[w].name, o->w.path[v]);
    return 0;
}

static void sweep_free(struct sweep *S)
{
    for (uint64_t i = 0; i < S->n_cells; i++)
        free(S->row[i]);
    for (uint32_t w = 0; w < S->o->w.n; w++) {
        sb_graph_free(S->wl[w].g);
        free(S->wl[w].name);
        pthread_mutex_destroy(&S->wl[w].mu);
    }
    pthread_mutex_destroy(&S->mu);
    pthread_cond_destroy(&S->cv);
    free(S->claimed);
    if (S->journal)
        fclose(S->journal);
    free(S->journal_path);
    for (uint64_t i = 0; S->cand && i < S->n_cells; i++)
        free(S->cand[i].row), free(S->cand[i].workload);
    free(S->cand);
    free(S->row);
    free(S->status);
    free(S->cells);
    free(S->wl);
}

/* What --resume took, and what it could not: a workload edited since its rows
 * were journalled runs again, and says so. */
static void tell_resumed(const struct sweep *S)
{
    const struct run_opts *o = S->o;
    for (uint32_t w = 0; w < o->w.n; w++)
        if (S->wl[w].n_stale)
            fprintf(stderr, "schedbench run: --resume: %s: %llu journalled row%s not reused: "
                            "its files (or its machine's) have changed since they were "
                            "written\n", o->w.path[w], (unsigned long long)S->wl[w].n_stale,
                    S->wl[w].n_stale == 1 ? "" : "s");
    if (!o->quiet && S->journal_path)
        fprintf(stderr, "schedbench run: --resume: %llu of %llu cells taken from %s\n",
                (unsigned long long)S->n_reused, (unsigned long long)S->n_cells,
                S->journal_path);
}

/* Returns 0 all ok, 1 some cell invalid or failed, 2 bad input (message in e),
 * 3 bad input with --keep-going: the rows are written all the same.
 * *n_journal: the rows the journal holds at the end; UINT64_MAX when the
 * sweep did not start (a journal refused is left as it was). */
static int sweep(FILE *f, struct run_opts *o, uint64_t *n_journal, struct sb_err *e)
{
    struct sweep S = {0};
    *n_journal = UINT64_MAX;
    if (plan(&S, o, e)) {
        sweep_free(&S);
        return 2;
    }
    execute(&S);
    if (o->resume)
        tell_resumed(&S);
    int rc = 0, bad_input = input_error(&S, e) != 0;
    if (bad_input && !o->keep_going)
        rc = 2;
    else if (S.io_failed) {
        *e = S.io_err;
        rc = 2;
    }
    for (uint64_t i = 0; i < S.n_cells && !rc; i++)
        fputs(S.row[i], f);
    for (uint64_t i = 0; i < S.n_cells && !rc; i++)
        if (S.status[i] == 1)
            rc = 1;
    if (bad_input && rc != 2)
        rc = 3;
    /* refused input leaves nothing behind, as before the sweep started; an
     * output that failed keeps the rows */
    *n_journal = bad_input && !o->keep_going ? 0 : S.n_journal;
    sweep_free(&S);
    return rc;
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
    sb_import_defaults(&o.imp);
    sb_astra_defaults(&o.astra);
    sb_sol_preset(&o.sol, "h100"); /* the built-in device */
    /* the files the options read (--machine, --system, --network) start the
     * digest of every workload's inputs */
    sb_digest_start(&o.inputs_digest);
    int bad = parse_run_args(&o, argc, argv, &e) || finish_opts(&o, &e);
    sb_digest_start(NULL);
    if (bad) {
        fprintf(stderr, "%s\n", e.msg);
        free_opts(&o);
        return 2;
    }
    /* the results file, its folder and the journal are checked before the
     * sweep: a sweep of hours must not end in "cannot create" */
    if (sb_atomic_open(&out, o.out, &e)) {
        fprintf(stderr, "schedbench run: %s\n", e.msg);
        free_opts(&o);
        return 2;
    }
    int to_stdout = out.tmp == NULL;
    char *partial = to_stdout ? NULL : sb_strf("%s.partial", o.out);
    if (!to_stdout)
        remove_stale_tmp(o.out);
    catch_signals(o.out, out.tmp, partial);
    write_header(out.f);
    uint64_t n_journal;
    int rc = sweep(out.f, &o, &n_journal, &e), written = 0;
    release_signals();
    if (rc == 3) { /* --keep-going: the file holds every row, the exit says bad input */
        fprintf(stderr, "%s\n", e.msg);
        if (sb_atomic_commit(&out, &e))
            fprintf(stderr, "schedbench run: %s\n", e.msg);
        else if ((written = 1) && !o.quiet)
            fprintf(stderr, "schedbench: %u workload%s x %u scheduler%s -> %s (some workloads "
                            "did not load: see status)\n", o.w.n, o.w.n == 1 ? "" : "s",
                    o.n_sched, o.n_sched == 1 ? "" : "s",
                    to_stdout ? "standard output" : o.out);
        rc = 2;
    } else if (rc == 2) {
        fprintf(stderr, "%s\n", e.msg);
        sb_atomic_abort(&out);
    } else if (sb_atomic_commit(&out, &e)) {
        fprintf(stderr, "schedbench run: %s\n", e.msg);
        rc = 2;
    } else {
        written = 1;
        if (!o.quiet && !to_stdout) {
            /* the answer at a glance, then where the figures are */
            struct sb_err se;
            fflush(stderr);
            if (sb_summary_print(o.out, stdout, &se))
                fprintf(stderr, "schedbench run: summary: %s\n", se.msg);
            printf("\n");
            fflush(stdout);
        }
        if (!o.quiet || o.out_named)
            fprintf(stderr, "schedbench: %u workload%s x %u scheduler%s%s -> %s%s\n", o.w.n,
                    o.w.n == 1 ? "" : "s", o.n_sched, o.n_sched == 1 ? "" : "s", o.shard_n > 1 ? " (one shard)" : "",
                    to_stdout ? "standard output" : o.out,
                    rc ? " (some cells invalid or failed: see status)" : "");
    }
    /* the journal goes once the results file is in place; until then it is
     * the only copy of the finished rows */
    if (partial && n_journal != UINT64_MAX && (written || !n_journal))
        unlink(partial);
    else if (partial && n_journal != UINT64_MAX)
        fprintf(stderr, "schedbench run: the %llu finished rows are kept in %s: once the "
                        "cause above is fixed, the same command with --resume writes %s "
                        "without running them again\n", (unsigned long long)n_journal,
                partial, o.out);
    free(partial);
    free_opts(&o);
    return rc;
}
