/* `schedbench plot RESULTS.csv -o DIR`: the plots a report needs, drawn by
 * gnuplot from data files this command writes next to each image:
 *
 *   <workload>.memory.{png,svg}   memory over simulated time per scheduler,
 *                                 peaks marked, the devices' capacity as a
 *                                 line (dev_cap_bytes, or --mem-cap)
 *                                 (needs `run --mem-dir`); on several devices
 *                                 a panel per scheduler, a line per device;
 *   <workload>.bars.{png,svg}     makespan with its lower bound, peak memory
 *                                 and exposed communication, values on bars;
 *   <workload>.scatter.{png,svg}  makespan against peak memory, points
 *                                 labelled by scheduler, the front drawn;
 *   pareto.{png,svg}              both relative to `original`, all workloads;
 *   heatmap.{png,svg}             makespan and peak relative to `original`,
 *                                 workloads x schedulers;
 *   <workload>.<sched>.gantt.{png,svg}  with --gantt SCHED: that cell per
 *                                 device (compute, collective slots, copies
 *                                 on each link out of it).
 *
 * `schedbench plot A.csv B.csv ... -o DIR` compares runs of the same sweep
 * under different models or settings instead (--comm simple and astra, say):
 *   <workload>.runs.{png,svg}     makespan and exposed communication per
 *                                 scheduler, one bar per results file.
 *
 * Memory is in decimal units (GB = 10^9 bytes) and says so on the axis; time is
 * in us or ms, or in XLA's abstract units for `--cost-model approx` rows.  The
 * command prints every file it wrote and every plot it skipped, with why.
 * Without gnuplot the .dat and .gp files are still written. */
#define _POSIX_C_SOURCE 200809L
#include "commands.h"
#include "core/core.h"
#include "core/escape.h"
#include "core/size.h"
#include "table.h"

#include <errno.h>
#include <math.h>
#include <strings.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define SB_PLOT_MAX_RUNS 8

struct plot_opts {
    const char *results, *out_dir, *workload, *mem_dir;
    const char *gantt; /* --gantt SCHEDULER: its placement per device, or NULL */
    const char *schedulers; /* --schedulers LIST: only these rows, or NULL for all */
    const char *runs[SB_PLOT_MAX_RUNS]; /* every results file given; runs[0] = results */
    uint32_t n_runs;
    int have_mem;   /* the timelines folder exists */
    double cap;     /* --mem-cap in bytes, 0 = none: the devices' own capacity */
};

struct res {
    struct sb_table t;
    int c_w, c_s, c_status, c_mem, c_span, c_exp, c_peak_pos, c_lb, c_model;
    int c_sweep;    /* sweep_id, which ties a row to its memory timelines; -1 in old files */
    int c_dev_peak; /* dev_peak_bytes, "a;b;..." per device; -1 in old files */
    int c_over;     /* over_capacity; -1 in old files */
    int c_cap;      /* dev_cap_bytes, "a;b;..." per device; -1 in old files */
};

/* Ten colours told apart by most readers (Tableau 10), then ten lighter or
 * darker companions (Tableau 20's) for the built-in policies past ten, then
 * point shapes, so that no two schedulers share a (colour, shape) below
 * 20 x 13 of them; gnuplot's own `lc N` repeats after 8. */
static const char *const palette[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2",
                                      "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
                                      "#9c755f", "#17becf", "#a0cbe8", "#ffbe7d",
                                      "#8cd17d", "#b6992d", "#499894", "#86bcb6",
                                      "#d37295", "#79706e", "#d4a6c8", "#f1ce63"};
#define N_PALETTE (sizeof palette / sizeof palette[0])
static const int point_types[] = {7, 5, 9, 11, 13, 15, 4, 6, 8, 10, 12, 14, 1};
#define N_POINT_TYPES (sizeof point_types / sizeof point_types[0])

/* A policy's style, the same in every plot of every run whatever subset a
 * file or --schedulers holds (issue 38, item 9): a built-in policy's place in
 * the registry, which is fixed in the binary, else a hash of its name (FNV-1a)
 * past them. Colour palette[i % N_PALETTE], shape point_types[i % N_POINT_TYPES],
 * dash type i % 5 + 1. */
static uint32_t style_of(const char *policy)
{
    if (!sb_registry_count())
        sb_registry_add_builtins();
    uint32_t n = sb_registry_count();
    for (uint32_t i = 0; i < n; i++)
        if (!strcmp(sb_registry_at(i)->name, policy))
            return i;
    uint32_t h = 2166136261u;
    for (const unsigned char *p = (const unsigned char *)policy; *p; p++)
        h = (h ^ *p) * 16777619u;
    return n + h % (uint32_t)(N_PALETTE * N_POINT_TYPES);
}

/* ---- helpers --------------------------------------------------------------- */

static int have_gnuplot(void)
{
    const char *path = getenv("PATH");
    char buf[4096];
    if (!path)
        return 0;
    for (const char *p = path; *p;) {
        size_t n = strcspn(p, ":");
        snprintf(buf, sizeof buf, "%.*s/gnuplot", (int)n, p);
        if (access(buf, X_OK) == 0)
            return 1;
        p += n + (p[n] == ':');
    }
    return 0;
}

/* Runs gnuplot in dir, where the script finds its data files by bare name. */
static int run_gnuplot(const char *dir, const char *script, struct sb_err *e)
{
    pid_t pid = fork();
    if (pid < 0)
        return sb_errf(e, "cannot start gnuplot: %s", strerror(errno));
    if (pid == 0) {
        /* gnuplot warns about harmless things (a bar chart of zeros): keep its
         * chatter in a log that is shown only when it fails */
        if (chdir(dir) == 0 && freopen(".gnuplot.log", "w", stderr))
            execlp("gnuplot", "gnuplot", script, (char *)NULL);
        _exit(127);
    }
    int st;
    char *log = sb_strf("%s/.gnuplot.log", dir);
    int failed = waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0;
    if (failed) {
        FILE *f = fopen(log, "r");
        int c;
        while (f && (c = fgetc(f)) != EOF)
            fputc(c, stderr);
        if (f)
            fclose(f);
    }
    unlink(log);
    free(log);
    return failed ? sb_errf(e, "gnuplot failed on %s/%s", dir, script) : 0;
}

/* Both terminals from one script: the plot commands are a function of `out`. */
static void gp_terminals(FILE *f, const char *base, int w, int h)
{
    fprintf(f, "do for [fmt in 'png svg'] {\n"
               "  if (fmt eq 'png') { set terminal pngcairo size %d,%d font 'DejaVu Sans,10' noenhanced } "
               "else { set terminal svg size %d,%d font 'DejaVu Sans,10' noenhanced }\n"
               "  set output ", w, h, w, h);
    sb_gp_literal(f, base);
    fprintf(f, ".'.'.fmt\n");
}

static int open_out(struct sb_atomic *a, const char *dir, const char *base,
                    const char *ext, struct sb_err *e)
{
    char *path = sb_strf("%s/%s.%s", dir, base, ext);
    int rc = sb_atomic_open(a, path, e);
    free(path);
    return rc;
}

/* --brief: one line for every plot written, not one each (make run ends with
 * the summary, which a hundred "wrote" lines would push off the screen). */
static int plot_brief;
static unsigned plot_count;

static int finish(struct sb_atomic *gp, const char *dir, const char *base, int draw,
                  struct sb_err *e)
{
    if (sb_atomic_commit(gp, e))
        return -1;
    char *script = sb_strf("%s.gp", base);
    int rc = draw ? run_gnuplot(dir, script, e) : 0;
    free(script);
    if (!rc)
        plot_count++;
    if (!rc && draw && !plot_brief)
        printf("plot: wrote %s/%s.png and %s/%s.svg\n", dir, base, dir, base);
    else if (!rc && !plot_brief)
        printf("plot: wrote %s/%s.gp and its data (no gnuplot to draw it)\n", dir, base);
    return rc;
}

static void skipped(const char *what, const char *why)
{
    printf("plot: skipped %s: %s\n", what, why);
}

static int open_results(struct res *r, const char *path, const char *schedulers,
                        struct sb_err *e)
{
    if (sb_table_read(&r->t, path, e))
        return -1;
    if (schedulers && sb_table_col(&r->t, "scheduler") >= 0 &&
        sb_table_keep(&r->t, sb_table_col(&r->t, "scheduler"), schedulers, e)) {
        sb_table_free(&r->t);
        return -1;
    }
    r->c_w = sb_table_col(&r->t, "workload");
    r->c_s = sb_table_col(&r->t, "scheduler");
    r->c_status = sb_table_col(&r->t, "status");
    r->c_mem = sb_table_col(&r->t, "peak_mem_bytes");
    r->c_span = sb_table_col(&r->t, "makespan_us");
    r->c_exp = sb_table_col(&r->t, "exposed_comm_us");
    r->c_peak_pos = sb_table_col(&r->t, "peak_pos");
    r->c_lb = sb_table_col(&r->t, "makespan_lb_us");
    r->c_model = sb_table_col(&r->t, "cost_model");
    r->c_sweep = sb_table_col(&r->t, "sweep_id");
    r->c_dev_peak = sb_table_col(&r->t, "dev_peak_bytes");
    r->c_over = sb_table_col(&r->t, "over_capacity");
    r->c_cap = sb_table_col(&r->t, "dev_cap_bytes");
    if (r->c_w < 0 || r->c_s < 0 || r->c_status < 0 || r->c_mem < 0 || r->c_span < 0 ||
        r->c_exp < 0 || r->c_peak_pos < 0) {
        sb_table_free(&r->t);
        return sb_errf(e, "%s:1: not a schedbench results file (missing columns)", path);
    }
    return 0;
}

static const char *F(const struct res *r, uint32_t row, int c)
{
    return sb_table_get(&r->t, row, (uint32_t)c);
}

static int ok_row(const struct res *r, uint32_t row)
{
    return !strcmp(F(r, row, r->c_status), "ok");
}

static double num(const struct res *r, uint32_t row, int c)
{
    return strtod(F(r, row, c), NULL);
}

/* ---- units ------------------------------------------------------------------- */

struct unit {
    double scale;     /* raw units per plotted unit */
    const char *name; /* after a number: "GB", "ms" */
    const char *axis; /* in an axis label's parentheses: "GB = 10^9 bytes" */
};

static int in_scope(const struct plot_opts *o, const char *w)
{
    return !o->workload || !strcmp(o->workload, w);
}

/* Peak memory is unknown (empty) for traces without tensor sizes: such a row
 * is drawn nowhere memory is, never as 0. */
static int mem_known(const struct res *r, uint32_t row)
{
    return *F(r, row, r->c_mem) != 0;
}

static const struct unit mem_units[] = {{1e9, "GB", "GB = 10^9 bytes"},
                                        {1e6, "MB", "MB = 10^6 bytes"},
                                        {1e3, "KB", "KB = 10^3 bytes"},
                                        {1, "bytes", "bytes"}};

/* The largest decimal unit below the largest peak of w (all workloads when w
 * is NULL), so that toy graphs and 100 GB training graphs both read well. */
static struct unit mem_unit(const struct res *r, const char *w)
{
    const struct unit *u = mem_units;
    double hi = 0;
    for (uint32_t i = 0; i < r->t.n_rows; i++)
        if ((!w || !strcmp(F(r, i, r->c_w), w)) && ok_row(r, i) && num(r, i, r->c_mem) > hi)
            hi = num(r, i, r->c_mem);
    int k = 0;
    while (k < 3 && hi < u[k].scale)
        k++;
    return u[k];
}

/* Microseconds, or milliseconds for training graphs; XLA's approximate
 * estimator prices in abstract units that are not time at all. */
static struct unit time_unit(const struct res *r, const char *w)
{
    double hi = 0;
    for (uint32_t i = 0; i < r->t.n_rows; i++) {
        if (strcmp(F(r, i, r->c_w), w) || !ok_row(r, i))
            continue;
        if (r->c_model >= 0 && !strcmp(F(r, i, r->c_model), "approx"))
            return (struct unit){1, "units", "XLA approx cost units, not time"};
        if (num(r, i, r->c_span) > hi)
            hi = num(r, i, r->c_span);
    }
    return hi >= 1e3 ? (struct unit){1e3, "ms", "ms"} : (struct unit){1, "us", "us"};
}

/* The device holding the row's peak and the number of devices, from
 * dev_peak_bytes; 0 devices when the column is absent or empty. */
static void peak_device(const struct res *r, uint32_t row, uint32_t *dev, uint32_t *n_dev)
{
    *dev = *n_dev = 0;
    if (r->c_dev_peak < 0)
        return;
    const char *p = F(r, row, r->c_dev_peak);
    double best = -1;
    for (uint32_t d = 0; *p; d++) {
        char *end;
        double v = strtod(p, &end);
        if (end == p)
            break;
        if (v > best)
            best = v, *dev = d;
        *n_dev = d + 1;
        p = *end == ';' ? end + 1 : end;
    }
}

static void remove_file(const char *dir, const char *base, const char *ext)
{
    char *path = sb_strf("%s/%s.%s", dir, base, ext);
    unlink(path);
    free(path);
}

/* ---- memory over time ---------------------------------------------------------- */

#define SB_PLOT_MAX_DEV 256 /* a machine's limit (docs/machines.md) */

struct series {
    uint32_t n;
    char **title;   /* legend: scheduler, its peak, and what it coincides with */
    uint64_t *hash; /* of the timeline, to tell coinciding lines apart */
    int by_time;    /* x is simulated time (else schedule position) */
    int multi_dev;  /* some cell ran on several devices: the line is its peak device */
    uint32_t n_foreign;  /* timelines that belong to another run, left out */
    char why[700];       /* the first one's reason */
    /* Every device's memory (timelines with mem_bytes.<device> columns, from
     * run --mem-dir on a machine of several devices): a panel per scheduler,
     * a line per device.  n_dev = 0 when some timeline lacks them. */
    uint32_t n_dev;
    char *dev_name[SB_PLOT_MAX_DEV]; /* from the first timeline's header */
    const char **sched;              /* [n] the scheduler of each series */
    long *over;                      /* [n] its devices over capacity, -1 unknown */
    double *dev_peak, *dev_peak_x;   /* [n * n_dev] each device's peak and when */
    double *x_hi;                    /* [n] each series' last x, plotted units */
    double y_hi;                     /* the largest peak, plotted units */
    double *peak;                    /* [n] each series' peak, plotted units */
};

static void series_free(struct series *S)
{
    for (uint32_t i = 0; i < S->n; i++)
        free(S->title[i]);
    for (uint32_t d = 0; d < S->n_dev; d++)
        free(S->dev_name[d]);
    free(S->title);
    free(S->hash);
    free(S->sched);
    free(S->peak);
    free(S->over);
    free(S->dev_peak);
    free(S->dev_peak_x);
    free(S->x_hi);
}

/* The mem_bytes.<device> columns of timeline tl, in device order. */
static uint32_t dev_columns(const struct sb_table *tl, uint32_t *col)
{
    uint32_t n = 0;
    for (uint32_t c = 0; c < tl->n_cols && n < SB_PLOT_MAX_DEV; c++)
        if (!strncmp(tl->cell[c], "mem_bytes.", 10))
            col[n++] = c;
    return n;
}

/* The device whose column the timeline's mem_bytes is (the simulator writes
 * the device with the largest peak there), or nd when none is. */
static uint32_t peak_column(const struct sb_table *tl, int cm, const uint32_t *dcol,
                            uint32_t nd)
{
    for (uint32_t d = 0; d < nd; d++) {
        uint32_t k = 0;
        while (k < tl->n_rows &&
               !strcmp(sb_table_get(tl, k, (uint32_t)cm), sb_table_get(tl, k, dcol[d])))
            k++;
        if (k == tl->n_rows)
            return d;
    }
    return nd;
}

/* One timeline into dat: x and the memory of the peak device, then, when
 * nd > 0, each device's own x and memory; returns the hash of what was
 * written.  peak/peak_x [nd] get each device's peak and the x where it is
 * first reached.  Memory is accounted by schedule position; by time,
 * position k of a device is reached when the latest of the device's own
 * nodes up to k has begun (a running maximum keeps x monotone where a
 * collective's done began waiting earlier).  Each device has its own x and
 * is sampled at its own nodes' positions: in a job of ranks the order
 * interleaves the ranks, and another rank's node at position k says
 * nothing of when this device got there (a buffer freed after its last use
 * shows at the device's next node). */
static uint64_t one_timeline(const struct sb_table *tl, FILE *dat, struct unit mu,
                             struct unit tu, int by_time, const uint32_t *dcol, uint32_t nd,
                             double *peak, double *peak_x, double *x_hi)
{
    int cm = sb_table_col(tl, "mem_bytes"), cb = sb_table_col(tl, "begin_us");
    int cd = sb_table_col(tl, "device");
    uint64_t h = 14695981039346656037ull;
    double reached = 0, *at = sb_xcalloc(nd + 1, sizeof *at);
    double *shown = sb_xcalloc(nd + 1, sizeof *shown);
    int own = by_time && cd >= 0; /* each device its own x and samples */
    uint32_t top = own && cm >= 0 ? peak_column(tl, cm, dcol, nd) : nd;
    for (uint32_t d = 0; d < nd; d++) { /* before its first node: what position 0 holds */
        peak[d] = peak_x[d] = 0;
        shown[d] = tl->n_rows ? strtod(sb_table_get(tl, 0, dcol[d]), NULL) : 0;
    }
    for (uint32_t k = 0; cm >= 0 && k < tl->n_rows; k++) {
        double m = strtod(sb_table_get(tl, k, (uint32_t)cm), NULL);
        uint32_t dk = own ? (uint32_t)strtoul(sb_table_get(tl, k, (uint32_t)cd), NULL, 10) : nd;
        if (by_time) {
            double b = strtod(sb_table_get(tl, k, (uint32_t)cb), NULL) / tu.scale;
            reached = b > reached ? b : reached;
            if (dk < nd && b > at[dk])
                at[dk] = b;
        }
        if (dk < nd)
            shown[dk] = strtod(sb_table_get(tl, k, dcol[dk]), NULL);
        double x = !by_time ? k : top < nd ? at[top] : reached;
        if (top < nd)
            m = shown[top];
        fprintf(dat, "%.6f %.6f", x, m / mu.scale);
        uint64_t bits;
        memcpy(&bits, &m, sizeof bits);
        h = (h ^ bits) * 1099511628211ull;
        if (x > *x_hi)
            *x_hi = x;
        for (uint32_t d = 0; d < nd; d++) {
            double md = (own ? shown[d] : strtod(sb_table_get(tl, k, dcol[d]), NULL)) / mu.scale;
            double xd = own ? at[d] : x;
            fprintf(dat, " %.6f %.6f", xd, md);
            memcpy(&bits, &md, sizeof bits);
            h = (h ^ bits) * 1099511628211ull;
            memcpy(&bits, &xd, sizeof bits);
            h = (h ^ bits) * 1099511628211ull;
            if (md > peak[d])
                peak[d] = md, peak_x[d] = xd;
            if (xd > *x_hi)
                *x_hi = xd;
        }
        fputc('\n', dat);
    }
    free(at), free(shown);
    return h;
}

/* NULL when timeline tl belongs to the run of results row i, else why not:
 * a --mem-dir folder is shared by every run that names it, so a file there
 * may be another run's (other --cost, other workloads of the same name). */
static const char *foreign(const struct res *r, uint32_t i, const struct sb_table *tl,
                           char *buf, size_t n)
{
    int ct = sb_table_col(tl, "sweep_id");
    if (r->c_sweep < 0)
        return "the results file has no sweep_id column to tie timelines to its run";
    if (ct < 0)
        return "its timelines have no sweep_id (written by an older schedbench): run "
               "again with --mem-dir";
    if (tl->n_rows && strcmp(sb_table_get(tl, 0, (uint32_t)ct), F(r, i, r->c_sweep))) {
        snprintf(buf, n, "its timelines in the --mem-dir folder belong to another run "
                         "(sweep_id %.20s, the results' is %.20s): run again with --mem-dir, "
                         "or give that run's folder", sb_table_get(tl, 0, (uint32_t)ct),
                 F(r, i, r->c_sweep));
        return buf;
    }
    return NULL;
}

static int memory_data(const struct res *r, const char *w, const struct plot_opts *o,
                       const char *base, struct series *S, struct unit mu, struct unit tu,
                       struct sb_err *e)
{
    char sw[256], ss[256], title[700], dev[64];
    struct sb_atomic dat, pk;
    sb_safe_name(sw, sizeof sw, w);
    if (open_out(&dat, o->out_dir, base, "dat", e))
        return -1;
    char *peaks = sb_strf("%s.peaks", base);
    int bad = open_out(&pk, o->out_dir, peaks, "dat", e);
    free(peaks);
    if (bad) {
        sb_atomic_abort(&dat);
        return -1;
    }
    S->title = sb_xcalloc(r->t.n_rows + 1, sizeof *S->title);
    S->hash = sb_xcalloc(r->t.n_rows + 1, sizeof *S->hash);
    S->sched = sb_xcalloc(r->t.n_rows + 1, sizeof *S->sched);
    S->peak = sb_xcalloc(r->t.n_rows + 1, sizeof *S->peak);
    S->over = sb_xcalloc(r->t.n_rows + 1, sizeof *S->over);
    S->x_hi = sb_xcalloc(r->t.n_rows + 1, sizeof *S->x_hi);
    S->by_time = 1;
    for (uint32_t i = 0; i < r->t.n_rows; i++) {
        if (strcmp(F(r, i, r->c_w), w) || !ok_row(r, i) || !mem_known(r, i))
            continue;
        sb_safe_name(ss, sizeof ss, F(r, i, r->c_s));
        char *path = sb_strf("%s/%s__%s.csv", o->mem_dir, sw, ss);
        struct sb_table tl;
        struct sb_err ignored;
        int missing = sb_table_read(&tl, path, &ignored) != 0;
        free(path);
        if (missing)
            continue; /* this cell was run without --mem-dir */
        const char *why = foreign(r, i, &tl, title, sizeof title);
        if (why) {
            if (!S->n_foreign++)
                snprintf(S->why, sizeof S->why, "%s", why);
            sb_table_free(&tl);
            continue;
        }
        /* timelines from before begin_us existed are drawn by position */
        if (sb_table_col(&tl, "begin_us") < 0)
            S->by_time = 0;
        const char *sep = S->n ? "\n\n" : "";
        fprintf(dat.f, "%s# ", sep);
        sb_gp_comment(dat.f, F(r, i, r->c_s));
        fputc('\n', dat.f);
        uint32_t dcol[SB_PLOT_MAX_DEV], ndc = dev_columns(&tl, dcol);
        if (!S->n) { /* the first timeline names the devices */
            S->dev_peak = sb_xcalloc((size_t)(r->t.n_rows + 1) * (ndc + 1), sizeof(double));
            S->dev_peak_x = sb_xcalloc((size_t)(r->t.n_rows + 1) * (ndc + 1), sizeof(double));
            for (uint32_t d = 0; d < ndc; d++)
                S->dev_name[d] = sb_xstrdup(tl.cell[dcol[d]] + 10);
            S->n_dev = ndc;
        } else if (ndc != S->n_dev) { /* cannot happen within one run: draw the peak device */
            for (uint32_t d = 0; d < S->n_dev; d++)
                free(S->dev_name[d]);
            S->n_dev = 0;
        }
        S->sched[S->n] = F(r, i, r->c_s);
        S->peak[S->n] = num(r, i, r->c_mem) / mu.scale;
        S->over[S->n] = sb_results_over(&r->t, i, r->c_over);
        S->hash[S->n] = one_timeline(&tl, dat.f, mu, tu, S->by_time, dcol, S->n_dev,
                                     S->dev_peak + (size_t)S->n * S->n_dev,
                                     S->dev_peak_x + (size_t)S->n * S->n_dev,
                                     &S->x_hi[S->n]);
        if (num(r, i, r->c_mem) / mu.scale > S->y_hi)
            S->y_hi = num(r, i, r->c_mem) / mu.scale;
        uint32_t pp = (uint32_t)num(r, i, r->c_peak_pos);
        int cb = sb_table_col(&tl, "begin_us");
        double px = pp;
        if (S->by_time && cb >= 0) /* the running maximum of one_timeline */
            for (uint32_t k = 0, first = 1; k <= pp && k < tl.n_rows; k++, first = 0) {
                double b = strtod(sb_table_get(&tl, k, (uint32_t)cb), NULL) / tu.scale;
                if (first || b > px)
                    px = b;
            }
        fprintf(pk.f, "%s%.6f %.6f\n", sep, px, num(r, i, r->c_mem) / mu.scale);
        /* the simulator's timeline is the device with the peak (sim.c) */
        uint32_t d, nd;
        peak_device(r, i, &d, &nd);
        dev[0] = 0;
        if (nd > 1) {
            snprintf(dev, sizeof dev, " on device %u of 0-%u", d, nd - 1);
            S->multi_dev = 1;
        }
        int n = snprintf(title, sizeof title, "%s (peak %.3g %s%s%s)", F(r, i, r->c_s),
                         num(r, i, r->c_mem) / mu.scale, mu.name, dev,
                         S->over[S->n] > 0 ? ", does NOT fit" : "");
        for (uint32_t k = 0; k < S->n && n < (int)sizeof title - 40; k++)
            if (S->hash[k] == S->hash[S->n]) { /* drawn on top of an earlier line */
                n += snprintf(title + n, sizeof title - (size_t)n, ", same line as %.60s",
                              S->sched[k]);
                break;
            }
        S->title[S->n++] = sb_xstrdup(title);
        sb_table_free(&tl);
    }
    int rc = sb_atomic_commit(&dat, e);
    struct sb_err e2;
    if (sb_atomic_commit(&pk, rc ? &e2 : e))
        rc = -1;
    return rc;
}

/* The memory axis reaches up to a device's capacity when it is at most this
 * many times the largest peak; past that every line would be pressed into
 * the bottom quarter of the chart, so the capacity is named in the title
 * instead of drawn.  --mem-cap is drawn wherever it is: the user asked. */
#define SB_PLOT_CAP_STRETCH 4.0

/* bytes with three significant digits in the largest decimal unit below them
 * (mem_unit's), for a capacity that may be far from the chart's unit */
static void size_str(char *buf, size_t n, double bytes)
{
    int k = 0;
    while (k < 3 && bytes < mem_units[k].scale)
        k++;
    snprintf(buf, n, "%.3g %s", bytes / mem_units[k].scale, mem_units[k].name);
}

/* The capacity line of a memory plot. */
struct cap_line {
    double y;         /* plotted units; 0: no capacity known, no line */
    int in_title;     /* far above every peak: named in the title, not drawn */
    char label[160];  /* beside the line, or in the title */
};

/* --mem-cap, else the smallest capacity of w's devices (dev_cap_bytes of its
 * ok rows): with devices of different capacity, the one a schedule's memory
 * would cross first.  y_hi: the largest peak, plotted units. */
static void cap_line(const struct res *r, const char *w, const struct plot_opts *o,
                     struct unit mu, double y_hi, struct cap_line *c)
{
    char size[64];
    memset(c, 0, sizeof *c);
    if (o->cap > 0) {
        c->y = o->cap / mu.scale;
        size_str(size, sizeof size, o->cap);
        snprintf(c->label, sizeof c->label, "memory cap %s", size);
        return;
    }
    double bytes = 0;
    int differ = 0;
    for (uint32_t i = 0; i < r->t.n_rows; i++) {
        if (strcmp(F(r, i, r->c_w), w) || !ok_row(r, i))
            continue;
        int d;
        double b = sb_results_min_cap(&r->t, i, r->c_cap, &d);
        differ |= d || (b > 0 && bytes > 0 && b != bytes);
        if (b > 0 && (bytes == 0 || b < bytes))
            bytes = b;
    }
    if (bytes == 0)
        return;
    c->y = bytes / mu.scale;
    c->in_title = c->y > SB_PLOT_CAP_STRETCH * y_hi;
    size_str(size, sizeof size, bytes);
    snprintf(c->label, sizeof c->label, "%s %s%s",
             differ ? "smallest device capacity" : "device capacity", size,
             c->in_title ? ", far above every peak" : "");
}

/* The capacity as a dashed red line across the chart, labelled (arrow and
 * label 1; a panel's peaks are labels 2..). */
static void cap_gp(FILE *f, const struct cap_line *c)
{
    if (c->y <= 0 || c->in_title)
        return;
    /* in front: the bars of a bar chart would hide it */
    fprintf(f, "  set arrow 1 from graph 0, first %.6f to graph 1, first %.6f nohead "
               "front lw 2 dt 2 lc rgb '#cc0000'\n  set label 1 ", c->y, c->y);
    sb_gp_literal(f, c->label);
    fprintf(f, " at graph 0.99, first %.6f right offset 0,0.6 front tc rgb '#cc0000'\n",
            c->y);
}

/* The top of the memory axis: the largest peak, or the capacity line's
 * height when it is drawn and higher. */
static double mem_axis_top(const struct series *S, const struct cap_line *c)
{
    double y_hi = S->y_hi > 0 ? S->y_hi : 1;
    return c->y > y_hi && !c->in_title ? c->y : y_hi;
}

/* Several devices: a panel per scheduler on shared axes, a line per device
 * that holds memory (one colour per device in every panel, the legend naming
 * it with its peak), each device's peak marked. */
static void memory_devices_gp(FILE *f, const struct series *S, const char *w,
                              const char *base, struct unit mu, struct unit tu,
                              const struct cap_line *cap)
{
    uint32_t nd = S->n_dev, cols = S->n > 1 ? 2 : 1, rows = (S->n + cols - 1) / cols;
    double y_hi = mem_axis_top(S, cap);
    fprintf(f, "# live memory over simulated time: a panel per scheduler, a line per device\n");
    gp_terminals(f, base, cols == 2 ? 1500 : 950, 90 + 330 * (int)rows);
    char *t = sb_strf("%s: live memory of each device, a panel per scheduler (memory axes "
                      "shared, time axes each schedule's own%s%s)", w,
                      cap->in_title ? "; " : "", cap->in_title ? cap->label : "");
    fprintf(f, "  set multiplot layout %u,%u title ", rows, cols);
    sb_gp_literal(f, t);
    free(t);
    if (S->by_time)
        fprintf(f, "\n  set xlabel 'simulated time (%s)'\n", tu.axis);
    else
        fprintf(f, "\n  set xlabel 'schedule position (timelines without times)'\n");
    fprintf(f, "  set ylabel 'live memory (%s)'\n  set grid\n"
               "  set key outside right top vertical\n  set rmargin 30\n"
               "  set yrange [0:%.6f]\n",
            mu.axis, y_hi * 1.08);
    cap_gp(f, cap);
    for (uint32_t k = 0; k < S->n; k++) {
        const double *pk = S->dev_peak + (size_t)k * nd, *px = S->dev_peak_x + (size_t)k * nd;
        uint32_t top = 0, held = 0;
        for (uint32_t d = 0; d < nd; d++) {
            top = pk[d] > pk[top] ? d : top;
            held += pk[d] > 0;
        }
        char title[600];
        int n = snprintf(title, sizeof title, "%s: peak %.3g %s on %s, %u/%u devices hold "
                         "memory%s", S->sched[k], pk[top], mu.name, S->dev_name[top], held, nd,
                         S->over[k] > 0 ? ", does NOT fit" : "");
        for (uint32_t j = 0; j < k && n < (int)sizeof title - 40; j++)
            if (S->hash[j] == S->hash[k]) {
                snprintf(title + n, sizeof title - (size_t)n, " (same as %s)", S->sched[j]);
                break;
            }
        fprintf(f, "  set title ");
        sb_gp_literal(f, title);
        fprintf(f, "\n  set xrange [0:%.6f]\n", S->x_hi[k] > 0 ? S->x_hi[k] : 1);
        /* the peaks: a point per device, no text (labels 2..; 1 is the cap's) */
        for (uint32_t d = 0; d < nd; d++)
            if (pk[d] > 0)
                fprintf(f, "  set label %u '' at first %.6f, first %.6f point pt 7 ps 1.2 "
                           "lc rgb '%s'\n", 2 + d, px[d], pk[d], palette[d % N_PALETTE]);
        fprintf(f, "  plot ");
        int first = 1;
        uint32_t rank = 0;
        for (uint32_t d = 0; d < nd; d++) {
            if (!(pk[d] > 0) && !(d == nd - 1 && first))
                continue; /* holds nothing here; one line at least, so the panel draws */
            /* later lines drawn thinner on top: coinciding ones stay visible */
            double lw = held > 1 ? 2.4 - 1.2 * (double)rank++ / (held - 1) : 1.6;
            fprintf(f, "%s'%s.dat' index %u using %u:%u with steps lw %.1f dt %u lc rgb '%s' "
                       "title ", first ? "" : ", \\\n       ", base, k, 3 + 2 * d, 4 + 2 * d, lw,
                    (unsigned)(d / N_PALETTE % 5 + 1), palette[d % N_PALETTE]);
            char *key = sb_strf("%s (peak %.3g %s)", S->dev_name[d], pk[d], mu.name);
            sb_gp_literal(f, key);
            free(key);
            first = 0;
        }
        fputc('\n', f);
        for (uint32_t d = 0; d < nd; d++)
            if (pk[d] > 0)
                fprintf(f, "  unset label %u\n", 2 + d);
    }
    fprintf(f, "  unset multiplot\n  unset output\n}\n");
}

/* A peak this many times the median peak is an outlier (issue 38, item 9:
 * 730 GB lines pressed ten others into the bottom sixth of the chart). */
#define SB_PLOT_OUTLIER 3.0

/* The memory axis's top when some series are outliers: the largest other peak
 * plus 15%, with note naming what runs off the chart and its peak; 0 when
 * none is. Clipped rather than a log axis: memory over time is read as
 * differences in bytes, which a log axis distorts; the clipped lines' peaks
 * are still in the legend and the note. */
static double clip_top(const struct series *S, const char *unit, char *note, size_t n_note)
{
    if (S->n < 3)
        return 0;
    double *v = sb_xmalloc(S->n * sizeof *v);
    for (uint32_t k = 0; k < S->n; k++)
        v[k] = S->peak[k];
    for (uint32_t a = 1; a < S->n; a++) /* insertion sort: a handful of policies */
        for (uint32_t b = a; b > 0 && v[b - 1] > v[b]; b--) {
            double t = v[b];
            v[b] = v[b - 1], v[b - 1] = t;
        }
    double med = v[S->n / 2], lim = med * SB_PLOT_OUTLIER, top = 0;
    free(v);
    if (!(med > 0))
        return 0;
    uint32_t n_out = 0;
    for (uint32_t k = 0; k < S->n; k++)
        if (S->peak[k] > lim)
            n_out++;
        else if (S->peak[k] > top)
            top = S->peak[k];
    if (!n_out || !(top > 0))
        return 0;
    size_t k_note = (size_t)snprintf(note, n_note, "off the chart (clipped):");
    for (uint32_t k = 0, i = 0; k < S->n && k_note < n_note; k++)
        if (S->peak[k] > lim)
            k_note += (size_t)snprintf(note + k_note, n_note - k_note, "%s %.60s (peak %.4g %s)",
                                       i++ ? "," : "", S->sched[k], S->peak[k], unit);
    return top * 1.15;
}

static int memory_plot(const struct res *r, const char *w, const struct plot_opts *o,
                       int draw, struct sb_err *e)
{
    char base[300], sw[256], what[400];
    struct series S = {0};
    struct sb_atomic gp;
    struct unit mu = mem_unit(r, w), tu = time_unit(r, w);
    sb_safe_name(sw, sizeof sw, w);
    snprintf(base, sizeof base, "%s.memory", sw);
    snprintf(what, sizeof what, "%s's memory plot", w);
    if (!o->have_mem)
        return 0; /* said once for all workloads */
    if (memory_data(r, w, o, base, &S, mu, tu, e)) {
        series_free(&S);
        return -1;
    }
    if (S.n && S.n_foreign)
        printf("plot: %s leaves out %u timeline%s: %s\n", what, S.n_foreign,
               S.n_foreign > 1 ? "s" : "", S.why);
    if (!S.n || open_out(&gp, o->out_dir, base, "gp", e)) {
        int failed = S.n != 0;
        remove_file(o->out_dir, base, "dat");
        remove_file(o->out_dir, base, "peaks.dat");
        remove_file(o->out_dir, base, "png");
        remove_file(o->out_dir, base, "svg");
        if (!failed) {
            uint32_t unknown = 0;
            for (uint32_t i = 0; i < r->t.n_rows; i++)
                unknown += !strcmp(F(r, i, r->c_w), w) && ok_row(r, i) && !mem_known(r, i);
            skipped(what, S.n_foreign ? S.why
                          : unknown   ? "peak memory not measured (the workload has no "
                                        "tensor sizes)"
                                      : "no timelines of its cells in the --mem-dir folder");
        }
        series_free(&S);
        return failed ? -1 : 0;
    }
    struct cap_line cap;
    cap_line(r, w, o, mu, S.y_hi, &cap);
    if (S.n_dev > 1) {
        memory_devices_gp(gp.f, &S, w, base, mu, tu, &cap);
        series_free(&S);
        return finish(&gp, o->out_dir, base, draw, e);
    }
    fprintf(gp.f, "# live memory over simulated time, one line style per scheduler\n");
    gp_terminals(gp.f, base, 1100, 700);
    fprintf(gp.f, "  set title ");
    char *t = sb_strf("%s%s%s%s%s", w,
                      S.multi_dev ? ": memory of the device holding each schedule's peak" : "",
                      cap.in_title ? " (" : "", cap.in_title ? cap.label : "",
                      cap.in_title ? ")" : "");
    sb_gp_literal(gp.f, t);
    free(t);
    if (S.by_time)
        fprintf(gp.f, "\n  set xlabel 'simulated time (%s)'\n", tu.axis);
    else
        fprintf(gp.f, "\n  set xlabel 'schedule position (timelines without times)'\n");
    fprintf(gp.f, "  set ylabel 'live memory (%s)'\n"
                  "  set key above center horizontal maxcols 3\n"
                  "  set grid\n", mu.axis);
    /* a capacity above every line stays on the chart; outliers do not squash
     * the rest (clip_top) */
    char clip_note[600];
    double clip = clip_top(&S, mu.name, clip_note, sizeof clip_note);
    if (clip > 0) {
        if (cap.y > clip && !cap.in_title) /* its line is above the axis now */
            snprintf(clip_note + strlen(clip_note), sizeof clip_note - strlen(clip_note),
                     "; %s above", cap.label);
        fprintf(gp.f, "  set yrange [0:%.6f]\n  set label 9 ", clip);
        sb_gp_literal(gp.f, clip_note);
        fprintf(gp.f, " at graph 0.01, graph 0.97 left front textcolor rgb '#b00000'\n");
    } else if (cap.y > 0 && !cap.in_title)
        fprintf(gp.f, "  set yrange [0:%.6f]\n", mem_axis_top(&S, &cap) * 1.08);
    else
        fprintf(gp.f, "  set yrange [0:*]\n");
    cap_gp(gp.f, &cap);
    fprintf(gp.f, "  plot \\\n");
    for (uint32_t k = 0; k < S.n; k++) {
        /* a colour, dash type and width per line, so coinciding lines stay visible */
        fprintf(gp.f, "    '%s.dat' index %u using 1:2 with steps lw %.1f dt %u lc rgb '%s' "
                      "title ", base, k,
                1.2 + 0.8 * (double)(S.n - 1 - k) / (S.n > 1 ? S.n - 1 : 1),
                style_of(S.sched[k]) % 5 + 1, palette[style_of(S.sched[k]) % N_PALETTE]);
        sb_gp_literal(gp.f, S.title[k]);
        fprintf(gp.f, ", \\\n    '%s.peaks.dat' index %u using 1:2 with points pt %d "
                      "ps 1.3 lc rgb '%s' notitle%s\n", base, k,
                point_types[style_of(S.sched[k]) % N_POINT_TYPES],
                palette[style_of(S.sched[k]) % N_PALETTE], k + 1 < S.n ? ", \\" : "");
    }
    fprintf(gp.f, "  unset output\n}\n");
    series_free(&S);
    return finish(&gp, o->out_dir, base, draw, e);
}

/* ---- bars -------------------------------------------------------------------- */

/* Makespan with its lower bound, peak memory, exposed communication: a panel
 * is left out, and the title says so, when it would hold nothing (no tensor
 * sizes, no exposed communication in any schedule).  An unknown value is '?'
 * in the data, which gnuplot skips. */
/* Width of a bar and its label, px: "1,233,068" at the default font is about
 * 60 px (issue 38, item 10: labels of 10 bars in 600 px ran together). */
#define SB_BAR_PX 72

static int bars_plot(const struct res *r, const char *w, const struct plot_opts *o,
                     int draw, struct sb_err *e)
{
    char base[300], sw[256];
    struct sb_atomic dat, gp;
    struct unit mu = mem_unit(r, w), tu = time_unit(r, w);
    sb_safe_name(sw, sizeof sw, w);
    snprintf(base, sizeof base, "%s.bars", sw);
    if (open_out(&dat, o->out_dir, base, "dat", e))
        return -1;
    uint32_t n = 0, n_mem = 0, n_exp = 0, n_lb = 0;
    double peak_hi = 0; /* the largest peak, plotted units (cap_line) */
    fprintf(dat.f, "# scheduler makespan lower_bound above_bound_pct peak exposed "
                   "(? = unknown)\n");
    for (uint32_t i = 0; i < r->t.n_rows; i++) {
        if (strcmp(F(r, i, r->c_w), w) || !ok_row(r, i))
            continue;
        double span = num(r, i, r->c_span), lb = r->c_lb >= 0 ? num(r, i, r->c_lb) : 0;
        double ex = num(r, i, r->c_exp);
        sb_gp_datum(dat.f, F(r, i, r->c_s));
        fprintf(dat.f, " %.6f", span / tu.scale);
        if (lb > 0)
            fprintf(dat.f, " %.6f %.2f", lb / tu.scale, 100 * (span - lb) / lb), n_lb++;
        else
            fprintf(dat.f, " ? ?");
        if (mem_known(r, i)) {
            double y = num(r, i, r->c_mem) / mu.scale;
            fprintf(dat.f, " %.6f", y), n_mem++;
            peak_hi = y > peak_hi ? y : peak_hi;
        } else {
            fprintf(dat.f, " ?");
        }
        fprintf(dat.f, " %.6f\n", ex / tu.scale);
        n_exp += ex > 0;
        n++;
    }
    if (sb_atomic_commit(&dat, e))
        return -1;
    if (!n || open_out(&gp, o->out_dir, base, "gp", e)) {
        remove_file(o->out_dir, base, "dat");
        if (!n) {
            char what[400];
            snprintf(what, sizeof what, "%s's bars", w);
            skipped(what, "no ok rows");
        }
        return n ? -1 : 0;
    }
    int panels = 1 + (n_mem > 0) + (n_exp > 0);
    const char *note = n_mem && n_exp ? ""
                       : !n_mem && !n_exp
                           ? " (peak memory not measured: no tensor sizes; no exposed "
                             "communication in any schedule)"
                       : !n_mem ? " (peak memory not measured: no tensor sizes)"
                                : " (no exposed communication in any schedule)";
    char *title = sb_strf("%s%s", w, note);
    fprintf(gp.f, "# makespan (with the lower bound), peak memory, exposed communication\n");
    /* bar labels: whole numbers from 1000 up with thousands separators
     * (25,558, not 2.556e+04), as sb_num_str writes them */
    fprintf(gp.f, "commas(s) = strlen(s) <= 3 ? s : commas(s[1:strlen(s) - 3]) . ',' . "
                  "s[strlen(s) - 2:]\n"
                  "lbl(x) = x >= 1000 ? commas(sprintf('%%.0f', x)) : sprintf('%%.4g', x)\n");
    /* room for every bar's label: a panel is at least SB_BAR_PX per bar, so
     * adjacent labels ("2,566" beside "+83.4%%") do not run together */
    int panel_px = 600 > (int)n * SB_BAR_PX + 120 ? 600 : (int)n * SB_BAR_PX + 120;
    gp_terminals(gp.f, base, panel_px * panels, 540);
    fprintf(gp.f, "  set datafile missing '?'\n  set multiplot layout 1,%d title ", panels);
    sb_gp_literal(gp.f, title);
    free(title);
    fprintf(gp.f, "\n  set style fill solid 0.8 border -1\n  set boxwidth 0.7\n"
                  "  set grid ytics\n  set xtics rotate by -35\n  unset key\n"
                  "  set yrange [0:*]\n  set offsets 0.5, 0.5, graph 0.12, 0\n"
                  "  set xrange [-0.5:%u-0.5]\n", n);
    /* the value and the distance to the bound are one label of two lines, so
     * each is printed once per bar */
    if (n_lb)
        fprintf(gp.f, "  set title 'makespan (x marks the lower bound; %% above it)'\n"
                      "  set ylabel 'makespan (%s)'\n"
                      "  plot '%s.dat' using 0:2:xtic(1) with boxes lc rgb '%s', \\\n"
                      "       '' using 0:3 with points pt 2 ps 2 lw 2 lc rgb '#000000', \\\n"
                      "       '' using 0:2:(sprintf('%%s\\n+%%.1f%%%%', lbl($2), $4)) with labels "
                      "offset 0,1.6\n", tu.axis, base, palette[0]);
    else
        fprintf(gp.f, "  set title 'makespan (no lower bound recorded)'\n"
                      "  set ylabel 'makespan (%s)'\n"
                      "  plot '%s.dat' using 0:2:xtic(1) with boxes lc rgb '%s', \\\n"
                      "       '' using 0:2:(lbl($2)) with labels offset 0,0.7\n",
                tu.axis, base, palette[0]);
    if (n_mem) {
        /* the devices' capacity across the peaks, as on the memory plot */
        struct cap_line cap;
        cap_line(r, w, o, mu, peak_hi, &cap);
        fprintf(gp.f, "  set title ");
        if (cap.in_title) {
            char *t = sb_strf("peak memory (%s)", cap.label);
            sb_gp_literal(gp.f, t);
            free(t);
        } else {
            sb_gp_literal(gp.f, "peak memory");
        }
        fprintf(gp.f, "\n");
        cap_gp(gp.f, &cap);
        if (cap.y > peak_hi && !cap.in_title)
            fprintf(gp.f, "  set yrange [0:%.6f]\n", cap.y * 1.12);
        fprintf(gp.f, "  set ylabel 'peak memory (%s)'\n"
                      "  plot '%s.dat' using 0:5:xtic(1) with boxes lc rgb '%s', \\\n"
                      "       '' using 0:5:(lbl($5)) with labels offset 0,0.7\n"
                      "  unset arrow 1\n  unset label 1\n  set yrange [0:*]\n",
                mu.axis, base, palette[4]);
    }
    if (n_exp)
        fprintf(gp.f, "  set title 'exposed communication'\n"
                      "  set ylabel 'exposed communication (%s)'\n"
                      "  plot '%s.dat' using 0:6:xtic(1) with boxes lc rgb '%s', \\\n"
                      "       '' using 0:6:(lbl($6)) with labels offset 0,0.7\n",
                tu.axis, base, palette[1]);
    fprintf(gp.f, "  unset multiplot\n  unset output\n}\n");
    return finish(&gp, o->out_dir, base, draw, e);
}

/* ---- fronts ------------------------------------------------------------------- */

struct pt {
    double x, y;
};

static int cmp_pt(const void *a, const void *b)
{
    const struct pt *p = a, *q = b;
    if (p->x != q->x)
        return p->x < q->x ? -1 : 1;
    return (p->y > q->y) - (p->y < q->y);
}

/* The points no other beats on both axes, in x order, then a blank line. */
static void front(struct pt *buf, uint32_t n, FILE *f)
{
    qsort(buf, n, sizeof *buf, cmp_pt);
    double best = INFINITY;
    for (uint32_t i = 0; i < n; i++)
        if (buf[i].y < best) {
            best = buf[i].y;
            fprintf(f, "%.6f %.6f\n", buf[i].x, buf[i].y);
        }
    if (n)
        fprintf(f, "\n");
}

/* Row of `original` on workload w (ok, with a makespan), or -1. */
static int original_row(const struct res *r, const char *w)
{
    for (uint32_t i = 0; i < r->t.n_rows; i++)
        if (!strcmp(F(r, i, r->c_w), w) && !strcmp(F(r, i, r->c_s), "original") &&
            ok_row(r, i) && num(r, i, r->c_span) > 0)
            return (int)i;
    return -1;
}

/* Row i relative to original: y makespan, x peak memory, x NaN when either
 * peak is unknown or original's is 0. */
static int rel_point(const struct res *r, uint32_t i, struct pt *p)
{
    int o = original_row(r, F(r, i, r->c_w));
    if (o < 0 || !ok_row(r, i))
        return -1;
    double m0 = num(r, (uint32_t)o, r->c_mem);
    p->x = mem_known(r, i) && mem_known(r, (uint32_t)o) && m0 > 0 ? num(r, i, r->c_mem) / m0
                                                                   : NAN;
    p->y = num(r, i, r->c_span) / num(r, (uint32_t)o, r->c_span);
    return 0;
}

/* ---- per-workload scatter ------------------------------------------------------- */

/* The scatter's label boxes, in fractions of the plotted span: a character
 * is about 7 of the chart's 900 px wide (800 px of plot, offsets 0.1 + 0.1
 * of the span), a line 16 of its 650 px high (540 px of plot, offsets 0.3 +
 * 0.1); labels sit 0.8 character beside and above their point. */
#define SB_LABEL_CHAR_W (7.0 / 800 * 1.2)
#define SB_LABEL_LINE_H (16.0 / 540 * 1.4)

static void label_box(const struct pt *p, const char *label, int right, double lo_x,
                      double span_x, double lo_y, double span_y, double *x0, double *x1,
                      double *y0)
{
    double x = (p->x - lo_x) / span_x, w = (double)strlen(label) * SB_LABEL_CHAR_W;
    double pad = 0.8 * SB_LABEL_CHAR_W;
    *x0 = right ? x - pad - w : x + pad;
    *x1 = *x0 + w;
    *y0 = (p->y - lo_y) / span_y + 0.3 * SB_LABEL_LINE_H;
}

/* Labels that never overprint (issue 38, item 7). Pass 1: a label whose box
 * meets an earlier one's tries the point's other side. Pass 2: one that still
 * meets it joins that label, "a / b" (points this close read as one place on
 * the chart), and its own is left empty; repeated until no two boxes meet,
 * since a joined label is wider. */
static void place_labels(const struct pt *p, char **label, int *right, uint32_t n)
{
    double lo_x = INFINITY, hi_x = -INFINITY, lo_y = INFINITY, hi_y = -INFINITY;
    for (uint32_t k = 0; k < n; k++) {
        lo_x = fmin(lo_x, p[k].x), hi_x = fmax(hi_x, p[k].x);
        lo_y = fmin(lo_y, p[k].y), hi_y = fmax(hi_y, p[k].y);
    }
    double sx = hi_x > lo_x ? hi_x - lo_x : 1, sy = hi_y > lo_y ? hi_y - lo_y : 1;
    for (int changed = 1, rounds = 0; changed && rounds < (int)n + 1; rounds++) {
        changed = 0;
        for (uint32_t k = 1; k < n; k++) {
            if (!*label[k])
                continue;
            for (int tries = 0; tries < 2; tries++) {
                double a0, a1, ay, b0, b1, by;
                uint32_t j = 0;
                for (; j < k; j++) {
                    if (!*label[j])
                        continue;
                    label_box(&p[k], label[k], right[k], lo_x, sx, lo_y, sy, &a0, &a1, &ay);
                    label_box(&p[j], label[j], right[j], lo_x, sx, lo_y, sy, &b0, &b1, &by);
                    if (a0 < b1 && b0 < a1 && fabs(ay - by) < SB_LABEL_LINE_H)
                        break;
                }
                if (j == k)
                    break; /* a free place */
                if (tries == 0) {
                    right[k] = !right[k];
                    continue;
                }
                right[k] = !right[k]; /* back where it was; join label j */
                char *l = sb_strf("%s / %s", label[j], label[k]);
                free(label[j]);
                label[j] = l;
                label[k][0] = 0;
                changed = 1;
            }
        }
    }
}

/* One labelled point per distinct (peak, makespan): schedulers that land on
 * the same point share one label ("original, minmem") instead of printing
 * over each other. */
static int scatter_plot(const struct res *r, const char *w, const struct plot_opts *o,
                        int draw, struct sb_err *e)
{
    char base[300], sw[256];
    struct sb_atomic dat, fr, gp;
    struct unit mu = mem_unit(r, w), tu = time_unit(r, w);
    sb_safe_name(sw, sizeof sw, w);
    snprintf(base, sizeof base, "%s.scatter", sw);
    struct pt *buf = sb_xmalloc((r->t.n_rows + 1) * sizeof *buf);
    char **label = sb_xcalloc(r->t.n_rows + 1, sizeof *label);
    uint32_t n = 0, unknown = 0;
    for (uint32_t i = 0; i < r->t.n_rows; i++) {
        if (strcmp(F(r, i, r->c_w), w) || !ok_row(r, i))
            continue;
        if (!mem_known(r, i)) {
            unknown++;
            continue;
        }
        struct pt p = {num(r, i, r->c_mem) / mu.scale, num(r, i, r->c_span) / tu.scale};
        uint32_t k = 0;
        while (k < n && (buf[k].x != p.x || buf[k].y != p.y))
            k++;
        if (k == n) {
            buf[n] = p;
            label[n++] = sb_xstrdup(F(r, i, r->c_s));
        } else {
            char *l = sb_strf("%s, %s", label[k], F(r, i, r->c_s));
            free(label[k]);
            label[k] = l;
        }
    }
    int rc = 0;
    if (!n) {
        char what[400];
        snprintf(what, sizeof what, "%s's scatter", w);
        skipped(what, unknown ? "peak memory not measured (the workload has no tensor sizes)"
                              : "no ok rows");
        remove_file(o->out_dir, base, "png");
        remove_file(o->out_dir, base, "svg");
        goto out;
    }
    char *fbase = sb_strf("%s.front", base);
    rc = open_out(&dat, o->out_dir, base, "dat", e);
    if (!rc && (rc = open_out(&fr, o->out_dir, fbase, "dat", e)))
        sb_atomic_abort(&dat);
    free(fbase);
    if (rc)
        goto out;
    double lo = INFINITY, hi = -INFINITY;
    uint32_t n_right = 0;
    for (uint32_t k = 0; k < n; k++) {
        lo = buf[k].x < lo ? buf[k].x : lo;
        hi = buf[k].x > hi ? buf[k].x : hi;
    }
    int *right = sb_xcalloc(n + 1, sizeof *right);
    for (uint32_t k = 0; k < n; k++) /* 1: label to the left of the point, inside the chart */
        right[k] = hi > lo && buf[k].x > (lo + hi) / 2;
    place_labels(buf, label, right, n);
    for (uint32_t k = 0; k < n; k++) {
        fprintf(dat.f, "%.6f %.6f ", buf[k].x, buf[k].y);
        sb_gp_datum(dat.f, label[k]);
        fprintf(dat.f, " %d\n", right[k]);
        n_right += (uint32_t)right[k];
    }
    free(right);
    front(buf, n, fr.f);
    struct sb_err e2;
    rc = sb_atomic_commit(&dat, e);
    if (sb_atomic_commit(&fr, rc ? &e2 : e))
        rc = -1;
    if (rc || (rc = open_out(&gp, o->out_dir, base, "gp", e)))
        goto out;
    fprintf(gp.f, "# makespan against peak memory, one labelled point per distinct result\n");
    gp_terminals(gp.f, base, 900, 650);
    fprintf(gp.f, "  set title ");
    sb_gp_literal(gp.f, w);
    fprintf(gp.f, "\n  set xlabel 'peak memory (%s)'\n  set ylabel 'makespan (%s)'\n"
                  "  set grid\n  set key bottom right\n  set offsets graph 0.1, graph 0.3, "
                  "graph 0.1, graph 0.1\n"
                  "  plot '%s.front.dat' using 1:2 with steps lw 1.5 lc rgb '#999999' "
                  "title 'front (nothing beats it on both)', \\\n"
                  "       '%s.dat' using 1:2 with points pt 7 ps 1.4 lc rgb '%s' notitle",
            mu.axis, tu.axis, base, base, palette[0]);
    /* only a label set that has points: gnuplot 5.4 crashes on labels whose
     * every point is undefined */
    if (n_right < n)
        fprintf(gp.f, ", \\\n       '%s.dat' using 1:($4 > 0 ? NaN : $2):3 with labels "
                      "offset 0.8,0.8 left notitle", base);
    if (n_right)
        fprintf(gp.f, ", \\\n       '%s.dat' using 1:($4 > 0 ? $2 : NaN):3 with labels "
                      "offset -0.8,0.8 right notitle", base);
    fprintf(gp.f, "\n  unset output\n}\n");
    rc = finish(&gp, o->out_dir, base, draw, e);
out:
    for (uint32_t k = 0; k < n; k++)
        free(label[k]);
    free(label);
    free(buf);
    return rc;
}

/* ---- across workloads ------------------------------------------------------------ */

/* Distinct values of column c among the rows in scope with an original row
 * (and, with need_mem, a known peak relative to it), in first-seen order. */
static uint32_t distinct(const struct res *r, const struct plot_opts *o, int c, int need_mem,
                         const char **out)
{
    uint32_t n = 0;
    struct pt p;
    for (uint32_t i = 0; i < r->t.n_rows; i++) {
        const char *w = F(r, i, r->c_w), *v = F(r, i, c);
        if (!in_scope(o, w) || rel_point(r, i, &p) || (need_mem && !(p.x > 0)))
            continue;
        uint32_t k = 0;
        while (k < n && strcmp(out[k], v))
            k++;
        if (k == n)
            out[n++] = v;
    }
    return n;
}

static void say_no_original(const struct res *r, const struct plot_opts *o)
{
    for (uint32_t i = 0; i < r->t.n_rows; i++) {
        const char *w = F(r, i, r->c_w);
        uint32_t j = 0;
        while (j < i && strcmp(F(r, j, r->c_w), w))
            j++;
        if (j < i || !in_scope(o, w))
            continue;
        char what[400];
        int orow = original_row(r, w);
        if (orow < 0) {
            snprintf(what, sizeof what, "%s in pareto and heatmap", w);
            skipped(what, "no ok 'original' row to be relative to");
        } else if (!mem_known(r, (uint32_t)orow) || !(num(r, (uint32_t)orow, r->c_mem) > 0)) {
            snprintf(what, sizeof what, "%s in pareto", w);
            skipped(what, mem_known(r, (uint32_t)orow)
                              ? "original's peak memory is 0"
                              : "peak memory not measured (the workload has no tensor "
                                "sizes); the heatmap shows its makespans, peaks n/a");
        }
    }
}

/* Tick labels on a log axis from lo to hi: the round values 0.01 .. 100 where
 * the data spans a factor of 3 or more; else six values spread evenly over
 * the span in log space, three significant digits each, so a narrow axis
 * still has labels to read (issue 38, item 8: two labels were drawn). */
static void log_tics(FILE *f, const char *axis, double lo, double hi)
{
    if (!(lo > 0) || !(hi >= lo) || hi / lo >= 3) {
        fprintf(f, "  set %stics ('0.01' 0.01, '0.02' 0.02, '0.05' 0.05, '0.1' 0.1, "
                   "'0.2' 0.2, '0.5' 0.5, '0.7' 0.7, '1' 1, '1.5' 1.5, '2' 2, '5' 5, "
                   "'10' 10, '20' 20, '50' 50, '100' 100)\n", axis);
        return;
    }
    if (hi / lo < 1.02) /* one value, or nearly: a span of 2% around it */
        lo /= 1.01, hi *= 1.01;
    fprintf(f, "  set %stics (", axis);
    for (int i = 0; i < 6; i++) {
        double v = lo * pow(hi / lo, i / 5.0);
        fprintf(f, "%s'%.3g' %.6g", i ? ", " : "", v, v);
    }
    fprintf(f, ")\n");
}

/* Every workload's schedulers relative to its own original, on log axes: a
 * ratio of 50 and one of 0.9 both stay readable, and 2x better reads as far
 * from 1 as 2x worse. */
static int pareto_plot(const struct res *r, const struct plot_opts *o, int draw,
                       struct sb_err *e)
{
    struct sb_atomic dat, fr, gp;
    const char **sch = sb_xcalloc(r->t.n_rows + 1, sizeof *sch);
    const char **wl = sb_xcalloc(r->t.n_rows + 1, sizeof *wl);
    uint32_t ns = distinct(r, o, r->c_s, 1, sch), nw = distinct(r, o, r->c_w, 1, wl);
    struct pt *buf = sb_xmalloc((r->t.n_rows + 1) * sizeof *buf), p;
    double lo_x = INFINITY, hi_x = 0, lo_y = INFINITY, hi_y = 0;
    int rc = 0;
    if (!ns) {
        skipped("pareto", "no workload in scope has an ok 'original' row with a known peak");
        remove_file(o->out_dir, "pareto", "png");
        remove_file(o->out_dir, "pareto", "svg");
        goto out;
    }
    if ((rc = open_out(&dat, o->out_dir, "pareto", "dat", e)))
        goto out;
    if ((rc = open_out(&fr, o->out_dir, "pareto.front", "dat", e))) {
        sb_atomic_abort(&dat);
        goto out;
    }
    for (uint32_t k = 0; k < ns; k++) {
        fprintf(dat.f, "%s# ", k ? "\n\n" : "");
        sb_gp_comment(dat.f, sch[k]);
        fputc('\n', dat.f);
        for (uint32_t i = 0; i < r->t.n_rows; i++)
            if (in_scope(o, F(r, i, r->c_w)) && !strcmp(F(r, i, r->c_s), sch[k]) &&
                !rel_point(r, i, &p) && p.x > 0 && p.y > 0) {
                /* third column: the workload's shape, so an 8B point is told
                 * from a 70B one (issue 38, item 8) */
                uint32_t kw = 0;
                while (kw + 1 < nw && strcmp(wl[kw], F(r, i, r->c_w)))
                    kw++;
                fprintf(dat.f, "%.6f %.6f %d\n", p.x, p.y, point_types[kw % N_POINT_TYPES]);
                lo_x = fmin(lo_x, p.x), hi_x = fmax(hi_x, p.x);
                lo_y = fmin(lo_y, p.y), hi_y = fmax(hi_y, p.y);
            }
    }
    for (uint32_t k = 0; k < nw; k++) {
        uint32_t n = 0;
        for (uint32_t i = 0; i < r->t.n_rows; i++)
            if (!strcmp(F(r, i, r->c_w), wl[k]) && !rel_point(r, i, &p) && p.x > 0 && p.y > 0)
                buf[n++] = p;
        front(buf, n, fr.f); /* one front per workload: a front across programs is meaningless */
    }
    rc = sb_atomic_commit(&dat, e) | sb_atomic_commit(&fr, e);
    if (rc || (rc = open_out(&gp, o->out_dir, "pareto", "gp", e)))
        goto out;
    fprintf(gp.f, "# makespan against peak memory, both relative to original, log axes\n");
    gp_terminals(gp.f, "pareto", 1000, 700);
    fprintf(gp.f, "  set title 'makespan vs peak memory, relative to original (%u workload%s)'\n"
                  "  set logscale xy\n  set autoscale fix\n", nw, nw == 1 ? "" : "s");
    log_tics(gp.f, "x", lo_x, hi_x);
    log_tics(gp.f, "y", lo_y, hi_y);
    fprintf(gp.f, "  set offsets graph 0.06, graph 0.06, graph 0.06, graph 0.06\n"
                  "  set xlabel 'peak memory / original peak memory (log scale)'\n"
                  "  set ylabel 'makespan / original makespan (log scale)'\n"
                  "  set key outside right top\n  set grid xtics ytics\n"
                  "  set arrow 1 from graph 0, first 1 to graph 1, first 1 nohead dt 2\n"
                  "  set arrow 2 from first 1, graph 0 to first 1, graph 1 nohead dt 2\n"
                  "  plot 'pareto.front.dat' using 1:2 with steps lw 1.5 lc rgb '#bbbbbb' "
                  "title 'Pareto front of each workload', \\\n");
    /* colour per policy (style_of), shape per workload: the points carry no
     * title; the key lists the policies' colours, then the workloads' shapes */
    for (uint32_t k = 0; k < ns; k++)
        fprintf(gp.f, "    'pareto.dat' index %u using 1:2:3 with points pt variable ps 1.4 "
                      "lc rgb '%s' notitle, \\\n", k, palette[style_of(sch[k]) % N_PALETTE]);
    for (uint32_t k = 0; k < ns; k++) {
        fprintf(gp.f, "    NaN with points pt 7 ps 1.4 lc rgb '%s' title ",
                palette[style_of(sch[k]) % N_PALETTE]);
        sb_gp_literal(gp.f, sch[k]);
        fprintf(gp.f, ", \\\n");
    }
    for (uint32_t k = 0; k < nw; k++) {
        fprintf(gp.f, "    NaN with points pt %d ps 1.4 lc rgb '#555555' title ",
                point_types[k % N_POINT_TYPES]);
        sb_gp_literal(gp.f, wl[k]);
        fprintf(gp.f, "%s\n", k + 1 < nw ? ", \\" : "");
    }
    fprintf(gp.f, "  unset output\n}\n");
    rc = finish(&gp, o->out_dir, "pareto", draw, e);
out:
    free(sch), free(wl), free(buf);
    return rc;
}

/* Workloads x schedulers, coloured by log2 of the ratio to original (green
 * better, red worse, clipped at 1/2 and 2), each cell labelled with the
 * ratio; a peak that was not measured is a grey n/a. */
static int heatmap_plot(const struct res *r, const struct plot_opts *o, int draw,
                        struct sb_err *e)
{
    struct sb_atomic dat, gp;
    const char **sch = sb_xcalloc(r->t.n_rows + 1, sizeof *sch);
    const char **wl = sb_xcalloc(r->t.n_rows + 1, sizeof *wl);
    uint32_t ns = distinct(r, o, r->c_s, 0, sch), nw = distinct(r, o, r->c_w, 0, wl);
    struct pt p;
    int rc = 0;
    if (!ns) {
        skipped("heatmap", "no workload in scope has an ok 'original' row");
        remove_file(o->out_dir, "heatmap", "png");
        remove_file(o->out_dir, "heatmap", "svg");
        goto out;
    }
    if ((rc = open_out(&dat, o->out_dir, "heatmap", "dat", e)))
        goto out;
    fprintf(dat.f, "# scheduler_index workload_index makespan_ratio peak_ratio "
                   "makespan_label peak_label (? = peak not measured)\n");
    for (uint32_t i = 0; i < r->t.n_rows; i++) {
        if (!in_scope(o, F(r, i, r->c_w)) || rel_point(r, i, &p))
            continue;
        uint32_t x = 0, y = 0;
        while (x < ns && strcmp(sch[x], F(r, i, r->c_s)))
            x++;
        while (y < nw && strcmp(wl[y], F(r, i, r->c_w)))
            y++;
        if (p.x > 0)
            fprintf(dat.f, "%u %u %.6f %.6f %.2f %.2f\n", x, y, p.y, p.x, p.y, p.x);
        else
            fprintf(dat.f, "%u %u %.6f ? %.2f n/a\n", x, y, p.y, p.y);
    }
    if ((rc = sb_atomic_commit(&dat, e)) || (rc = open_out(&gp, o->out_dir, "heatmap", "gp", e)))
        goto out;
    fprintf(gp.f, "# makespan and peak memory relative to original, workloads x schedulers\n");
    gp_terminals(gp.f, "heatmap", 900 + 110 * (int)ns, 200 + 26 * (int)nw);
    fprintf(gp.f, "  set datafile missing '?'\n  set multiplot layout 1,2\n"
                  "  set palette defined (-1 '#1a9850', 0 '#ffffff', 1 '#d73027')\n"
                  "  set cbrange [-1:1]\n"
                  "  set cbtics ('1/2 or less' -1, '0.71' -0.5, '1' 0, '1.41' 0.5, "
                  "'2 or more' 1)\n"
                  "  set cblabel 'ratio to original (log scale)'\n  set rmargin 20\n"
                  "  set object 1 rectangle from graph 0, graph 0 to graph 1, graph 1 behind "
                  "fc rgb '#dddddd' fs solid noborder\n"
                  "  set xrange [-0.5:%u-0.5]\n  set yrange [-0.5:%u-0.5] reverse\n"
                  "  set xtics rotate by -35 (", ns, nw);
    for (uint32_t k = 0; k < ns; k++) {
        sb_gp_literal(gp.f, sch[k]);
        fprintf(gp.f, " %u%s", k, k + 1 < ns ? ", " : ")\n  set ytics (");
    }
    for (uint32_t k = 0; k < nw; k++) {
        sb_gp_literal(gp.f, wl[k]);
        fprintf(gp.f, " %u%s", k, k + 1 < nw ? ", " : ")\n");
    }
    for (int panel = 0; panel < 2; panel++)
        fprintf(gp.f, "  set title '%s / original%s'\n"
                      "  plot 'heatmap.dat' using 1:2:(0.5):(0.5):(log($%d)/log(2)) with "
                      "boxxyerror fs solid 1.0 noborder lc palette notitle, \\\n"
                      "       '' using 1:2:%d with labels notitle\n",
                panel ? "peak memory" : "makespan", panel ? " (grey: not measured)" : "",
                panel ? 4 : 3, panel ? 6 : 5);
    fprintf(gp.f, "  unset multiplot\n  unset output\n}\n");
    rc = finish(&gp, o->out_dir, "heatmap", draw, e);
out:
    free(sch), free(wl);
    return rc;
}

/* ---- command ------------------------------------------------------------------ */

/* ---- several runs side by side --------------------------------------------------- */

/* The row of scheduler `sched` on workload w in run r; -1 when absent or not ok. */
static int run_row(const struct res *r, const char *w, const char *sched)
{
    for (uint32_t i = 0; i < r->t.n_rows; i++)
        if (!strcmp(F(r, i, r->c_w), w) && !strcmp(F(r, i, r->c_s), sched) && ok_row(r, i))
            return (int)i;
    return -1;
}

/* A run's label: its file name without folder and .csv. */
static void run_label(char *buf, size_t n, const char *path)
{
    const char *slash = strrchr(path, '/');
    const char *b = slash ? slash + 1 : path;
    size_t len = strlen(b);
    if (len > 4 && !strcmp(b + len - 4, ".csv"))
        len -= 4;
    snprintf(buf, n, "%.*s", (int)len, b);
}

/* Makespan and exposed communication of w per scheduler (those ok in every
 * run, in the first run's order), one bar per run. */
static int runs_plot(const struct res *R, const struct plot_opts *o, const char *w, int draw,
                     struct sb_err *e)
{
    char base[300], sw[256], what[400];
    struct sb_atomic dat, gp;
    uint32_t k = o->n_runs, n = 0;
    double hi = 0;
    for (uint32_t i = 0; i < R[0].t.n_rows; i++)
        for (uint32_t j = 0; j < k; j++) {
            int row = run_row(&R[j], w, F(&R[0], i, R[0].c_s));
            if (row >= 0 && num(&R[j], (uint32_t)row, R[j].c_span) > hi)
                hi = num(&R[j], (uint32_t)row, R[j].c_span);
        }
    struct unit tu = hi >= 1e3 ? (struct unit){1e3, "ms", "ms"} : (struct unit){1, "us", "us"};
    sb_safe_name(sw, sizeof sw, w);
    snprintf(base, sizeof base, "%s.runs", sw);
    if (open_out(&dat, o->out_dir, base, "dat", e))
        return -1;
    fprintf(dat.f, "# scheduler, then makespan per run, then exposed communication per run (%s)\n",
            tu.name);
    for (uint32_t i = 0; i < R[0].t.n_rows; i++) {
        const char *sched = F(&R[0], i, R[0].c_s);
        int rows[SB_PLOT_MAX_RUNS], all = 1;
        if (strcmp(F(&R[0], i, R[0].c_w), w) || !ok_row(&R[0], i))
            continue;
        for (uint32_t j = 0; j < k; j++)
            all &= (rows[j] = run_row(&R[j], w, sched)) >= 0;
        if (!all)
            continue;
        sb_gp_datum(dat.f, sched);
        for (int col = 0; col < 2; col++)
            for (uint32_t j = 0; j < k; j++)
                fprintf(dat.f, " %.6f",
                        num(&R[j], (uint32_t)rows[j], col ? R[j].c_exp : R[j].c_span) / tu.scale);
        fputc('\n', dat.f);
        n++;
    }
    if (sb_atomic_commit(&dat, e))
        return -1;
    if (!n) {
        remove_file(o->out_dir, base, "dat");
        snprintf(what, sizeof what, "%s's runs", w);
        skipped(what, "no scheduler is ok in every results file");
        return 0;
    }
    if (open_out(&gp, o->out_dir, base, "gp", e))
        return -1;
    fprintf(gp.f, "# makespan and exposed communication, one bar per results file\n");
    gp_terminals(gp.f, base, 1500, 560);
    fprintf(gp.f, "  set multiplot layout 1,2 title ");
    sb_gp_literal(gp.f, w);
    fprintf(gp.f, "\n  set style data histogram\n  set style histogram clustered gap 1\n"
                  "  set style fill solid 0.8 border -1\n  set grid ytics\n"
                  "  set xtics rotate by -35\n  set yrange [0:*]\n  set key above horizontal\n"
                  "  set ylabel '%s'\n",
            tu.name);
    for (int col = 0; col < 2; col++) {
        fprintf(gp.f, "  set title '%s'\n  plot ", col ? "exposed communication" : "makespan");
        for (uint32_t j = 0; j < k; j++) {
            char label[256];
            run_label(label, sizeof label, o->runs[j]);
            fprintf(gp.f, "%s'%s.dat' using %u%s title ", j ? ", \\\n       " : "", base,
                    2 + col * k + j, j ? "" : ":xtic(1)");
            sb_gp_literal(gp.f, label);
        }
        fputc('\n', gp.f);
    }
    fprintf(gp.f, "  unset multiplot\n  unset output\n}\n");
    return finish(&gp, o->out_dir, base, draw, e);
}

/* Every workload of the first run, compared across the runs. */
static int plot_runs(const struct plot_opts *o, int draw, struct sb_err *e)
{
    struct res R[SB_PLOT_MAX_RUNS];
    uint32_t opened = 0, n_done = 0;
    int rc = 0;
    for (; opened < o->n_runs && !rc; opened++)
        rc = open_results(&R[opened], o->runs[opened], o->schedulers, e);
    if (rc)
        opened--; /* the failed one holds nothing */
    for (uint32_t j = 0; j < opened && !rc; j++)
        for (uint32_t i = 0; i < R[j].t.n_rows && !rc; i++)
            if (R[j].c_model >= 0 && !strcmp(F(&R[j], i, R[j].c_model), "approx"))
                rc = sb_errf(e, "%s: rows under --cost-model approx are not time and do not "
                                "compare with other runs", o->runs[j]);
    for (uint32_t i = 0; i < (rc ? 0 : R[0].t.n_rows) && !rc; i++) {
        const char *w = F(&R[0], i, R[0].c_w);
        uint32_t j = 0;
        while (j < i && strcmp(F(&R[0], j, R[0].c_w), w))
            j++;
        if (j < i || !in_scope(o, w))
            continue;
        rc = runs_plot(R, o, w, draw, e);
        n_done++;
    }
    if (!rc && o->workload && !n_done)
        rc = sb_errf(e, "%s: no rows for workload '%s'", o->results, o->workload);
    for (uint32_t j = 0; j < opened; j++)
        sb_table_free(&R[j].t);
    return rc;
}

static int plot_help(void)
{
    printf("usage: schedbench plot RESULTS.csv [-o DIR] [--workload W] [--mem-dir DIR]\n"
           "                       [--mem-cap SIZE] [--gantt SCHEDULER] [--brief]\n"
           "                       [--schedulers A,B,...]\n"
           "       schedbench plot RUN1.csv RUN2.csv... [-o DIR] [--workload W]\n"
           "\n"
           "--schedulers A,B,... plots only those policies' rows (ratios need original\n"
           "among them); a policy has the same colour and shape in every plot whatever\n"
           "the subset. A memory line whose peak is over 3x the median peak is clipped,\n"
           "and a note on the chart names it with its peak.\n"
           "\n"
           "Writes PNG and SVG plots, with the .dat and .gp files gnuplot draws them\n"
           "from, into DIR (default plots/), and prints each file it wrote and each\n"
           "plot it skipped with the reason:\n"
           "  <workload>.memory   live memory over simulated time per scheduler, peaks\n"
           "                      marked, a line per dash style (timelines from `run\n"
           "                      --mem-dir`; default <dir of RESULTS>/mem, only those of\n"
           "                      this run, by sweep_id); the devices' memory capacity\n"
           "                      as a dashed line (results column dev_cap_bytes; with\n"
           "                      devices of different capacity, the smallest; named in\n"
           "                      the title instead when above %gx every peak), a legend\n"
           "                      entry 'does NOT fit' when over_capacity > 0; --mem-cap\n"
           "                      draws that line instead (GB, or 80GiB, 512MiB, ...); on\n"
           "                      several devices a panel per scheduler with a line per\n"
           "                      device\n"
           "  <workload>.bars     makespan with its lower bound and %% above it, peak\n"
           "                      memory, exposed communication; values on the bars\n"
           "  <workload>.scatter  makespan against peak memory, labelled, with the front\n"
           "  pareto              makespan against peak, relative to original\n"
           "  heatmap             makespan and peak relative to original, workloads x\n"
           "                      schedulers\n"
           "  <workload>.<scheduler>.gantt  with --gantt SCHEDULER: that cell's schedule,\n"
           "                      per device a compute lane (waits at dones in grey), its\n"
           "                      collective lanes and a lane per link out of it that\n"
           "                      carried copies (from the --mem-dir timelines)\n"
           "With several results files (runs of one sweep under different models or\n"
           "settings, up to 8) it writes <workload>.runs instead: makespan and exposed\n"
           "communication per scheduler, one bar per file, labelled by file name.\n"
           "--brief prints one line for all the plots written (skipped ones are still\n"
           "each named).  --workload W restricts every plot to W.  Without gnuplot on PATH the data\n"
           "and scripts are written and the command says so.\n", SB_PLOT_CAP_STRETCH);
    return 0;
}

/* --mem-cap: a capacity as a machine's mem_bytes takes it (core/size.h:
 * sb_size_capacity): bytes, or a number with its unit (80GB, 80GiB, 512MiB,
 * any case), 1 B .. 1 PiB.  A bare number is bytes, as everywhere; a bare
 * number below 1 MiB is refused as a missing unit.  Before issue 42 a bare
 * number here was GB, and every such value (at most 10^5) is below 1 MiB:
 * an old command line is refused with the reason, never drawn at another
 * size. */
static int parse_cap(const char *v, double *cap, struct sb_err *e)
{
    uint64_t bytes;
    const char *why;
    if (sb_size_capacity(v, &bytes, &why))
        return sb_errf(e, "schedbench plot: --mem-cap '%s' is not a capacity (1 B .. 1 PiB: "
                          "bytes, or with a unit: 80GB, 80GiB, 512MiB): %s", v, why);
    *cap = (double)bytes;
    return 0;
}

static int parse_plot_args(struct plot_opts *o, int argc, char **argv, char *mem_buf,
                           size_t n_mem, struct sb_err *e)
{
    o->out_dir = "plots";
    int given = 0;
    struct sb_opt_seen once = {0};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (v && (!strcmp(a, "-o") || !strcmp(a, "--workload") || !strcmp(a, "--mem-dir") ||
                  !strcmp(a, "--gantt") || !strcmp(a, "--mem-cap") ||
                  !strcmp(a, "--schedulers")) &&
            sb_opt_once(&once, "plot", a, v, e))
            return -1;
        if (!strcmp(a, "-o") && v)
            o->out_dir = argv[++i];
        else if (!strcmp(a, "--workload") && v)
            o->workload = argv[++i];
        else if (!strcmp(a, "--mem-dir") && v)
            o->mem_dir = argv[++i], given = 1;
        else if (!strcmp(a, "--gantt") && v)
            o->gantt = argv[++i];
        else if (!strcmp(a, "--schedulers") && v)
            o->schedulers = argv[++i];
        else if (!strcmp(a, "--brief"))
            plot_brief = 1;
        else if (!strcmp(a, "--mem-cap") && v) {
            if (parse_cap(v, &o->cap, e))
                return -1;
            i++;
        } else if (a[0] != '-' && o->n_runs < SB_PLOT_MAX_RUNS) {
            o->runs[o->n_runs++] = a;
            if (!o->results)
                o->results = a;
        } else if (a[0] != '-')
            return sb_errf(e, "schedbench plot: at most %d results files", SB_PLOT_MAX_RUNS);
        else {
            static const char *const opts[] = {"-o", "--workload", "--mem-dir", "--mem-cap",
                                               "--gantt", "--brief", "--schedulers"};
            const char *near = sb_did_you_mean(a, opts, 7);
            return sb_errf(e, "schedbench plot: unexpected argument '%s'%s%s%s", a,
                           near ? " (did you mean '" : "", near ? near : "",
                           near ? "'?)" : " (see --help)");
        }
    }
    if (!o->results)
        return sb_errf(e, "usage: schedbench plot RESULTS.csv [-o DIR] [--workload W]");
    if (!o->mem_dir) {
        const char *slash = strrchr(o->results, '/');
        int n = slash ? (int)(slash - o->results) : 1;
        snprintf(mem_buf, n_mem, "%.*s/mem", n, slash ? o->results : ".");
        o->mem_dir = mem_buf;
    }
    struct stat st;
    o->have_mem = stat(o->mem_dir, &st) == 0 && S_ISDIR(st.st_mode);
    if (!o->have_mem && given)
        return sb_errf(e, "schedbench plot: --mem-dir %s: no such folder", o->mem_dir);
    if (!o->have_mem && o->n_runs == 1) {
        char why[4200];
        snprintf(why, sizeof why, "no timelines folder %s (run with --mem-dir to get them)",
                 o->mem_dir);
        skipped("every memory plot", why);
    }
    return 0;
}

/* ---- placement at a glance: a Gantt chart per device ------------------------------ */

#define SB_GANTT_MAX_LANES 512

struct bar {
    double b, e; /* begin and end, plotted units */
    uint32_t lane;
};

/* A lane is one of a device's streams (coll -1 for stream 0, LANE_STREAM +
 * s for stream s > 0), one of its collective slots (coll >= 0, the
 * simulator's lane), or the link from it to device `to` (coll -2 - to),
 * which carries its copies. */
#define LANE_STREAM (-((int64_t)1 << 42))
struct lanes {
    uint32_t n;
    int32_t dev[SB_GANTT_MAX_LANES];
    int64_t coll[SB_GANTT_MAX_LANES];
};

static uint32_t lane_of(struct lanes *L, int32_t dev, int64_t coll)
{
    for (uint32_t k = 0; k < L->n; k++)
        if (L->dev[k] == dev && L->coll[k] == coll)
            return k;
    if (L->n == SB_GANTT_MAX_LANES)
        return SB_GANTT_MAX_LANES - 1; /* more than a chart can show: the last takes the rest */
    L->dev[L->n] = dev, L->coll[L->n] = coll;
    return L->n++;
}

/* Per device: compute, then collective slots, then links out of it by target. */
static int64_t lane_rank(int64_t coll)
{
    return coll == -1 ? LANE_STREAM : coll < LANE_STREAM / 2 || coll >= 0 ? coll
                                                       : ((int64_t)1 << 40) + (-2 - coll);
}

/* The lane of stream s (timelines before the stream column: 0). */
static int64_t stream_lane(uint32_t s)
{
    return s ? LANE_STREAM + s : -1;
}

static int cmp_lane(const void *a, const void *b, const struct lanes *L)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    if (L->dev[x] != L->dev[y])
        return L->dev[x] < L->dev[y] ? -1 : 1;
    int64_t p = lane_rank(L->coll[x]), q = lane_rank(L->coll[y]);
    return (p > q) - (p < q);
}

/* The cell's row: the scheduler as given, else the run of a policy name
 * (`heft` finds `heft:seed=2`); -1 when absent. */
static int gantt_row(const struct res *r, const char *w, const char *sched)
{
    for (uint32_t i = 0; i < r->t.n_rows; i++)
        if (!strcmp(F(r, i, r->c_w), w) && !strcmp(F(r, i, r->c_s), sched))
            return (int)i;
    for (uint32_t i = 0; i < r->t.n_rows; i++)
        if (!strcmp(F(r, i, r->c_w), w) && strlen(sched) == strcspn(F(r, i, r->c_s), ":") &&
            !strncmp(F(r, i, r->c_s), sched, strlen(sched)))
            return (int)i;
    return -1;
}

enum { GANTT_COMPUTE, GANTT_WAIT, GANTT_COLL, GANTT_COPY, GANTT_KINDS };

/* The copies of the cell beside its timeline (<cell>.copies.csv, written by
 * `run --mem-dir` on a machine of several devices) as bars on link lanes;
 * the devices are named as in the timeline's mem_bytes.<device> columns.
 * Returns NULL when they are drawn, else what the title says instead. */
static const char *gantt_copies(const struct res *r, uint32_t row, const char *path,
                                char *const *dev_name, uint32_t nd, struct unit tu,
                                struct lanes *L, struct bar **bars, uint32_t *nb)
{
    struct sb_table cp;
    struct sb_err ignored;
    if (nd < 2)
        return NULL; /* one device copies nothing */
    if (sb_table_read(&cp, path, &ignored))
        return "copies over links not recorded: run again with --mem-dir";
    int cf = sb_table_col(&cp, "from"), ct = sb_table_col(&cp, "to");
    int cb = sb_table_col(&cp, "begin_us"), ce = sb_table_col(&cp, "end_us");
    int cs = sb_table_col(&cp, "sweep_id");
    const char *why = NULL;
    if (cf < 0 || ct < 0 || cb < 0 || ce < 0 || cs < 0)
        why = "copies left out: their file lacks columns";
    else if (cp.n_rows && (r->c_sweep < 0 ||
                           strcmp(sb_table_get(&cp, 0, (uint32_t)cs), F(r, row, r->c_sweep))))
        why = "copies left out: their file belongs to another run";
    if (why) {
        sb_table_free(&cp);
        return why;
    }
    *bars = sb_xmalloc((cp.n_rows + 1) * sizeof **bars);
    for (uint32_t k = 0; k < cp.n_rows; k++) {
        int32_t a = -1, b = -1;
        for (uint32_t d = 0; d < nd; d++) {
            if (!strcmp(dev_name[d], sb_table_get(&cp, k, (uint32_t)cf)))
                a = (int32_t)d;
            if (!strcmp(dev_name[d], sb_table_get(&cp, k, (uint32_t)ct)))
                b = (int32_t)d;
        }
        double t0 = strtod(sb_table_get(&cp, k, (uint32_t)cb), NULL) / tu.scale;
        double t1 = strtod(sb_table_get(&cp, k, (uint32_t)ce), NULL) / tu.scale;
        if (a >= 0 && b >= 0 && t1 > t0)
            (*bars)[(*nb)++] = (struct bar){t0, t1, lane_of(L, a, -2 - (int64_t)b)};
    }
    sb_table_free(&cp);
    return NULL;
}

/* One cell's schedule over simulated time, from its --mem-dir timeline: per
 * device a compute lane (its ops, and in grey the waits at collectives'
 * dones), a lane per collective slot it used, and a lane per link out of it
 * that carried copies (from <cell>.copies.csv). */
static int gantt_plot(const struct res *r, const char *w, const struct plot_opts *o, int draw,
                      struct sb_err *e)
{
    char sw[256], ss[256], base[600], what[700], why_buf[700];
    int row = gantt_row(r, w, o->gantt);
    snprintf(what, sizeof what, "%s's Gantt chart of %s", w, o->gantt);
    if (row < 0 || !ok_row(r, (uint32_t)row)) {
        skipped(what, row < 0 ? "no such scheduler in the results" : "its cell is not ok");
        return 0;
    }
    sb_safe_name(sw, sizeof sw, w);
    sb_safe_name(ss, sizeof ss, F(r, (uint32_t)row, r->c_s));
    char *path = sb_strf("%s/%s__%s.csv", o->mem_dir, sw, ss);
    struct sb_table tl;
    struct sb_err ignored;
    int missing = !o->have_mem || sb_table_read(&tl, path, &ignored) != 0;
    free(path);
    if (missing) {
        skipped(what, "no timeline of the cell (run with --mem-dir)");
        return 0;
    }
    const char *why = foreign(r, (uint32_t)row, &tl, why_buf, sizeof why_buf);
    int ck = sb_table_col(&tl, "kind"), cd = sb_table_col(&tl, "device");
    int cb = sb_table_col(&tl, "begin_us"), ce = sb_table_col(&tl, "end_us");
    int ccb = sb_table_col(&tl, "coll_begin_us"), cce = sb_table_col(&tl, "coll_end_us");
    int ccl = sb_table_col(&tl, "coll_lane"), cst = sb_table_col(&tl, "stream");
    if (!why && (ck < 0 || cd < 0 || cb < 0 || ce < 0 || ccb < 0 || cce < 0 || ccl < 0))
        why = "its timeline has no kind and device columns (written by an older schedbench): "
              "run again with --mem-dir";
    if (why) {
        skipped(what, why);
        sb_table_free(&tl);
        return 0;
    }
    struct unit tu = time_unit(r, w);
    struct lanes L = {0};
    struct bar *bars[GANTT_KINDS] = {0};
    uint32_t nb[GANTT_KINDS] = {0};
    for (int k = 0; k < GANTT_COPY; k++)
        bars[k] = sb_xmalloc((tl.n_rows + 1) * sizeof *bars[k]);
    uint32_t dcol[SB_PLOT_MAX_DEV], nd = dev_columns(&tl, dcol);
    char *dev_name[SB_PLOT_MAX_DEV];
    for (uint32_t d = 0; d < nd; d++)
        dev_name[d] = sb_xstrdup(tl.cell[dcol[d]] + 10);
    for (uint32_t k = 0; k < tl.n_rows; k++) {
        const char *kind = sb_table_get(&tl, k, (uint32_t)ck);
        int32_t dev = (int32_t)strtol(sb_table_get(&tl, k, (uint32_t)cd), NULL, 10);
        double b = strtod(sb_table_get(&tl, k, (uint32_t)cb), NULL) / tu.scale;
        double en = strtod(sb_table_get(&tl, k, (uint32_t)ce), NULL) / tu.scale;
        int64_t sl = stream_lane(cst >= 0 ? (uint32_t)strtoul(sb_table_get(&tl, k, (uint32_t)cst),
                                                              NULL, 10) : 0);
        if (!strcmp(kind, "compute") && en > b)
            bars[GANTT_COMPUTE][nb[GANTT_COMPUTE]++] = (struct bar){b, en, lane_of(&L, dev, sl)};
        else if (!strcmp(kind, "done") && en > b)
            bars[GANTT_WAIT][nb[GANTT_WAIT]++] = (struct bar){b, en, lane_of(&L, dev, sl)};
        else if (!strcmp(kind, "start") && *sb_table_get(&tl, k, (uint32_t)ccl)) {
            double cb2 = strtod(sb_table_get(&tl, k, (uint32_t)ccb), NULL) / tu.scale;
            double ce2 = strtod(sb_table_get(&tl, k, (uint32_t)cce), NULL) / tu.scale;
            int64_t lane = strtoll(sb_table_get(&tl, k, (uint32_t)ccl), NULL, 10);
            if (ce2 > cb2)
                bars[GANTT_COLL][nb[GANTT_COLL]++] = (struct bar){cb2, ce2, lane_of(&L, dev, lane)};
        }
    }
    sb_table_free(&tl);
    path = sb_strf("%s/%s__%s.copies.csv", o->mem_dir, sw, ss);
    const char *no_copies = gantt_copies(r, (uint32_t)row, path, dev_name, nd, tu, &L,
                                         &bars[GANTT_COPY], &nb[GANTT_COPY]);
    free(path);
    int rc = 0;
    struct sb_atomic dat, gp;
    snprintf(base, sizeof base, "%s.%s.gantt", sw, ss);
    if (!L.n) {
        skipped(what, "nothing in it takes time");
        goto out;
    }
    for (uint32_t d = 0; d < nd; d++) /* an idle device shows as an empty lane */
        lane_of(&L, (int32_t)d, -1);
    /* lanes in device order, compute first: pos[lane] is its row from the top */
    uint32_t order[SB_GANTT_MAX_LANES], pos[SB_GANTT_MAX_LANES];
    for (uint32_t k = 0; k < L.n; k++)
        order[k] = k;
    for (uint32_t a = 1; a < L.n; a++) /* insertion sort: a few lanes */
        for (uint32_t b = a; b > 0 && cmp_lane(&order[b - 1], &order[b], &L) > 0; b--) {
            uint32_t t = order[b];
            order[b] = order[b - 1], order[b - 1] = t;
        }
    for (uint32_t k = 0; k < L.n; k++)
        pos[order[k]] = k;
    if ((rc = open_out(&dat, o->out_dir, base, "dat", e)))
        goto out;
    static const char *const names[GANTT_KINDS] = {
        "compute", "waiting for a collective (at its done)", "collective in flight",
        "copy over a link (latency + bytes / bandwidth)"};
    static const char *const colours[GANTT_KINDS] = {"#4e79a7", "#bab0ac", "#f28e2b",
                                                      "#59a14f"};
    /* borders a shade darker than the fill: a run of short copies reads as
     * its colour, not as a black block of borders */
    static const char *const borders[GANTT_KINDS] = {"#2f4b66", "#7a726d", "#9c5a1c",
                                                      "#35602f"};
    /* bars under about 2 pixels wide go in a block of their own, drawn
     * without borders: 43 back-to-back copies of 0.3 ms in a 466 ms chart
     * would otherwise be a block of border colour */
    double span = num(r, (uint32_t)row, r->c_span) / tu.scale;
    double thin = (span > 0 ? span : 1) / 500;
    uint32_t block = 0;
    int64_t idx[GANTT_KINDS][2];
    for (int k = 0; k < GANTT_KINDS; k++)
        for (int t = 0; t < 2; t++) {
            uint32_t n = 0;
            idx[k][t] = -1;
            for (uint32_t i = 0; i < nb[k]; i++) {
                double wd = bars[k][i].e - bars[k][i].b;
                if ((wd < thin) != t)
                    continue;
                if (!n++) {
                    fprintf(dat.f, "%s# ", block ? "\n\n" : "");
                    sb_gp_comment(dat.f, names[k]);
                    fprintf(dat.f, "%s\n", t ? " (narrower than 1/500 of the makespan)" : "");
                }
                fprintf(dat.f, "%.6f %u %.6f\n", (bars[k][i].b + bars[k][i].e) / 2,
                        pos[bars[k][i].lane], wd / 2);
            }
            if (n)
                idx[k][t] = block++;
        }
    if ((rc = sb_atomic_commit(&dat, e)) || (rc = open_out(&gp, o->out_dir, base, "gp", e)))
        goto out;
    fprintf(gp.f, "# one cell's schedule: per device a compute lane, its collective lanes and "
                  "its outgoing links\n");
    int lane_px = L.n > 24 ? 20 : 34; /* many links: thinner rows */
    gp_terminals(gp.f, base, 1200, 170 + lane_px * (int)L.n);
    char span_s[64];
    char *title = sb_strf("%s / %s: what runs where and when, makespan %s %s%s%s%s", w,
                          F(r, (uint32_t)row, r->c_s), sb_num_str(span_s, sizeof span_s, span),
                          tu.name, no_copies ? " (" : "",
                          no_copies ? no_copies : "", no_copies ? ")" : "");
    fprintf(gp.f, "  set title ");
    sb_gp_literal(gp.f, title);
    free(title);
    /* the x axis ends at the makespan, not at the next tic */
    fprintf(gp.f, "\n  set xlabel 'simulated time (%s)'\n  set xrange [0:%.6f]\n"
                  "  set yrange [%u-0.5:-0.5]\n  set grid xtics\n"
                  "  set key outside bottom center horizontal\n  set bmargin 6\n"
                  "  set ytics (",
            tu.axis, span > 0 ? span : 1, L.n);
    for (uint32_t k = 0; k < L.n; k++) {
        uint32_t l = order[k];
        uint32_t nth = 0; /* the collective lane's number within its device */
        for (uint32_t q = 0; q < k; q++)
            nth += L.dev[order[q]] == L.dev[l] && L.coll[order[q]] >= 0;
        char dn[300], label[700];
        if (L.dev[l] >= 0 && (uint32_t)L.dev[l] < nd)
            snprintf(dn, sizeof dn, "%s", dev_name[L.dev[l]]);
        else
            snprintf(dn, sizeof dn, "device %d", L.dev[l]);
        int streams = 0; /* the device has a lane for a stream past the first */
        for (uint32_t q = 0; q < L.n; q++)
            streams |= L.dev[q] == L.dev[l] && L.coll[q] < LANE_STREAM / 2;
        if (L.coll[l] == -1)
            snprintf(label, sizeof label, streams ? "%s stream 0" : "%s compute", dn);
        else if (L.coll[l] < LANE_STREAM / 2)
            snprintf(label, sizeof label, "%s stream %lld", dn,
                     (long long)(L.coll[l] - LANE_STREAM));
        else if (L.coll[l] >= 0)
            snprintf(label, sizeof label, "%s collectives %u", dn, nth + 1);
        else
            snprintf(label, sizeof label, "copies %s -> %s", dn,
                     dev_name[-2 - L.coll[l]]);
        sb_gp_literal(gp.f, label);
        fprintf(gp.f, " %u%s", k, k + 1 < L.n ? ", " : ")\n");
    }
    /* a thin rule between devices */
    for (uint32_t k = 1; k < L.n; k++)
        if (L.dev[order[k]] != L.dev[order[k - 1]])
            fprintf(gp.f, "  set arrow from graph 0, first %u-0.5 to graph 1, first %u-0.5 "
                          "nohead lc rgb '#888888' lw 1\n", k, k);
    fprintf(gp.f, "  plot ");
    int first = 1;
    for (int k = 0; k < GANTT_KINDS; k++)
        for (int t = 0; t < 2; t++) {
            if (idx[k][t] < 0)
                continue;
            fprintf(gp.f, "%s'%s.dat' index %u using 1:2:3:(0.35) with boxxyerror fs solid "
                          "%s ", first ? "" : ", \\\n       ", base, (unsigned)idx[k][t],
                    t ? "1.0" : "0.85");
            if (t)
                fprintf(gp.f, "noborder fc rgb '%s' %s", colours[k],
                        idx[k][0] >= 0 ? "notitle" : "title ");
            else
                fprintf(gp.f, "border lc rgb '%s' fc rgb '%s' title ", borders[k], colours[k]);
            if (!t || idx[k][0] < 0)
                fprintf(gp.f, "'%s'", names[k]);
            first = 0;
        }
    fprintf(gp.f, "\n  unset output\n}\n");
    rc = finish(&gp, o->out_dir, base, draw, e);
out:
    for (int k = 0; k < GANTT_KINDS; k++)
        free(bars[k]);
    for (uint32_t d = 0; d < nd; d++)
        free(dev_name[d]);
    return rc;
}

/* --workload W matched nothing: say which names there are, nearest first. */
static int no_workload(const struct res *r, const struct plot_opts *o, struct sb_err *e)
{
    const char **names = sb_xcalloc(r->t.n_rows + 1, sizeof *names);
    uint32_t n = 0;
    for (uint32_t i = 0; i < r->t.n_rows; i++) {
        uint32_t k = 0;
        while (k < n && strcmp(names[k], F(r, i, r->c_w)))
            k++;
        if (k == n)
            names[n++] = F(r, i, r->c_w);
    }
    const char *near = sb_did_you_mean(o->workload, names, n);
    char list[320];
    size_t len = 0;
    list[0] = 0;
    for (uint32_t k = 0; k < n && len + 80 < sizeof list; k++)
        len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", k ? ", " : "", names[k]);
    if (len + 80 >= sizeof list)
        snprintf(list + len, sizeof list - len, ", ...");
    sb_errf(e, "%s: no rows for workload '%s'%s%s%s; its workloads: %s", o->results,
            o->workload, near ? " (did you mean '" : "", near ? near : "", near ? "'?)" : "",
            list);
    free(names);
    return -1;
}

static int plot_workloads(const struct res *r, const struct plot_opts *o, int draw,
                          struct sb_err *e)
{
    uint32_t n_done = 0;
    for (uint32_t i = 0; i < r->t.n_rows; i++) {
        const char *w = F(r, i, r->c_w);
        uint32_t j = 0;
        while (j < i && strcmp(F(r, j, r->c_w), w))
            j++;
        if (j < i || !in_scope(o, w))
            continue; /* each workload once, in results order */
        if (memory_plot(r, w, o, draw, e) || bars_plot(r, w, o, draw, e) ||
            scatter_plot(r, w, o, draw, e) || (o->gantt && gantt_plot(r, w, o, draw, e)))
            return -1;
        n_done++;
    }
    if (o->workload && !n_done)
        return no_workload(r, o, e);
    return 0;
}

int sb_cmd_plot(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
            return plot_help();
    struct plot_opts o = {0};
    struct res r;
    struct sb_err e;
    char mem_buf[4096];
    if (parse_plot_args(&o, argc, argv, mem_buf, sizeof mem_buf, &e)) {
        fprintf(stderr, "%s\n", e.msg);
        return 2;
    }
    if (o.n_runs > 1) {
        int draw = have_gnuplot();
        if (sb_mkdirs(o.out_dir, &e) || plot_runs(&o, draw, &e)) {
            fprintf(stderr, "schedbench plot: %s\n", e.msg);
            return 2;
        }
        return 0;
    }
    if (open_results(&r, o.results, o.schedulers, &e)) {
        fprintf(stderr, "%s\n", e.msg);
        return 2;
    }
    if (sb_mkdirs(o.out_dir, &e)) {
        fprintf(stderr, "schedbench plot: %s\n", e.msg);
        sb_table_free(&r.t);
        return 2;
    }
    int draw = have_gnuplot();
    say_no_original(&r, &o);
    int rc = plot_workloads(&r, &o, draw, &e) || pareto_plot(&r, &o, draw, &e) ||
             heatmap_plot(&r, &o, draw, &e);
    if (!rc && plot_brief)
        printf("plot: wrote %u plots to %s (PNG and SVG, with their .dat and .gp)\n",
               plot_count, o.out_dir);
    if (rc)
        fprintf(stderr, "schedbench plot: %s\n", e.msg);
    else if (!draw)
        fprintf(stderr, "schedbench plot: gnuplot not found: wrote the data and .gp "
                        "scripts to %s; install gnuplot-nox and run `gnuplot X.gp` "
                        "there\n", o.out_dir);
    sb_table_free(&r.t);
    return rc ? 2 : 0;
}
