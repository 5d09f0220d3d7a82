/* `schedbench plot RESULTS.csv -o DIR`: the plots a report needs, drawn by
 * gnuplot from data files this command writes next to each image:
 *
 *   <workload>.memory.{png,svg}  memory over schedule position per scheduler,
 *                                each peak marked (needs `run --mem-dir`);
 *   <workload>.bars.{png,svg}    peak memory and exposed communication per
 *                                scheduler;
 *   pareto.{png,svg}             makespan against peak memory, both relative
 *                                to `original`, one point per (workload,
 *                                scheduler), with the Pareto front.
 *
 * Without gnuplot the .dat and .gp files are still written and the command
 * says how to draw them. */
#define _POSIX_C_SOURCE 200809L
#include "commands.h"
#include "table.h"

#include <errno.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

struct plot_opts {
    const char *results, *out_dir, *workload, *mem_dir;
};

struct res {
    struct sb_table t;
    int c_w, c_s, c_status, c_mem, c_span, c_exp, c_peak_pos;
};

/* ---- helpers --------------------------------------------------------------- */

/* gnuplot string literal in single quotes: '' is a quote; enhanced text mode is
 * off in every script, so _ and ^ print as themselves. */
static void gp_str(FILE *f, const char *s)
{
    fputc('\'', f);
    for (; *s; s++) {
        if (*s == '\'')
            fputc('\'', f);
        fputc(*s, f);
    }
    fputc('\'', f);
}

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
    gp_str(f, base);
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

static int finish(struct sb_atomic *gp, const char *dir, const char *base, int draw,
                  struct sb_err *e)
{
    if (sb_atomic_commit(gp, e))
        return -1;
    char *script = sb_strf("%s.gp", base);
    int rc = draw ? run_gnuplot(dir, script, e) : 0;
    free(script);
    return rc;
}

static int open_results(struct res *r, const char *path, struct sb_err *e)
{
    if (sb_table_read(&r->t, path, e))
        return -1;
    r->c_w = sb_table_col(&r->t, "workload");
    r->c_s = sb_table_col(&r->t, "scheduler");
    r->c_status = sb_table_col(&r->t, "status");
    r->c_mem = sb_table_col(&r->t, "peak_mem_bytes");
    r->c_span = sb_table_col(&r->t, "makespan_us");
    r->c_exp = sb_table_col(&r->t, "exposed_comm_us");
    r->c_peak_pos = sb_table_col(&r->t, "peak_pos");
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

/* ---- memory over position -------------------------------------------------- */

struct series {
    uint32_t n;
    char **title;     /* legend: scheduler and its peak */
    double scale;     /* bytes per plotted unit */
    const char *unit;
};

/* The largest decimal unit below the largest peak, so that tiny test graphs
 * and 100 GB training graphs both get readable axes. */
static void pick_unit(const struct res *r, const char *w, struct series *S)
{
    static const double scale[] = {1e9, 1e6, 1e3, 1};
    static const char *const unit[] = {"GB", "MB", "KB", "bytes"};
    double hi = 0;
    for (uint32_t i = 0; i < r->t.n_rows; i++)
        if (!strcmp(F(r, i, r->c_w), w) && ok_row(r, i) && num(r, i, r->c_mem) > hi)
            hi = num(r, i, r->c_mem);
    int k = 0;
    while (k < 3 && hi < scale[k])
        k++;
    S->scale = scale[k];
    S->unit = unit[k];
}

static void series_free(struct series *S)
{
    for (uint32_t i = 0; i < S->n; i++)
        free(S->title[i]);
    free(S->title);
}

/* One block per scheduler in <base>.dat (position, GB), its peak as the same
 * block index in <base>.peaks.dat. */
static int memory_data(const struct res *r, const char *w, const struct plot_opts *o,
                       const char *base, struct series *S, struct sb_err *e)
{
    char sw[256], ss[256], title[600];
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
    pick_unit(r, w, S);
    for (uint32_t i = 0; i < r->t.n_rows; i++) {
        if (strcmp(F(r, i, r->c_w), w) || !ok_row(r, i))
            continue;
        sb_safe_name(ss, sizeof ss, F(r, i, r->c_s));
        char *path = sb_strf("%s/%s__%s.csv", o->mem_dir, sw, ss);
        struct sb_table tl;
        struct sb_err ignored;
        int missing = sb_table_read(&tl, path, &ignored) != 0;
        free(path);
        if (missing)
            continue; /* this cell was run without --mem-dir */
        int cm = sb_table_col(&tl, "mem_bytes");
        const char *sep = S->n ? "\n\n" : "";
        fprintf(dat.f, "%s# %s\n", sep, F(r, i, r->c_s));
        for (uint32_t k = 0; cm >= 0 && k < tl.n_rows; k++)
            fprintf(dat.f, "%u %.6f\n", k,
                    strtod(sb_table_get(&tl, k, (uint32_t)cm), NULL) / S->scale);
        fprintf(pk.f, "%s%s %.6f\n", sep, F(r, i, r->c_peak_pos),
                num(r, i, r->c_mem) / S->scale);
        snprintf(title, sizeof title, "%s (peak %.2f %s)", F(r, i, r->c_s),
                 num(r, i, r->c_mem) / S->scale, S->unit);
        S->title[S->n++] = sb_xstrdup(title);
        sb_table_free(&tl);
    }
    int rc = sb_atomic_commit(&dat, e);
    struct sb_err e2;
    if (sb_atomic_commit(&pk, rc ? &e2 : e))
        rc = -1;
    return rc;
}

static void remove_file(const char *dir, const char *base, const char *ext)
{
    char *path = sb_strf("%s/%s.%s", dir, base, ext);
    unlink(path);
    free(path);
}

static int memory_plot(const struct res *r, const char *w, const struct plot_opts *o,
                       int draw, struct sb_err *e)
{
    char base[300], sw[256];
    struct series S = {0};
    struct sb_atomic gp;
    sb_safe_name(sw, sizeof sw, w);
    snprintf(base, sizeof base, "%s.memory", sw);
    if (memory_data(r, w, o, base, &S, e)) {
        series_free(&S);
        return -1;
    }
    if (!S.n || open_out(&gp, o->out_dir, base, "gp", e)) {
        int failed = S.n != 0; /* no timelines is not an error: nothing to draw */
        remove_file(o->out_dir, base, "dat");
        remove_file(o->out_dir, base, "peaks.dat");
        series_free(&S);
        return failed ? -1 : 0;
    }
    fprintf(gp.f, "# memory over schedule position, one line per scheduler, peaks marked\n");
    gp_terminals(gp.f, base, 1100, 600);
    fprintf(gp.f, "  set title ");
    gp_str(gp.f, w);
    fprintf(gp.f, "\n  set xlabel 'schedule position (nodes run so far)'\n"
                  "  set ylabel 'live memory (%s)'\n"
                  "  set key outside right top\n  set grid\n  set yrange [0:*]\n"
                  "  plot \\\n", S.unit);
    for (uint32_t k = 0; k < S.n; k++) {
        fprintf(gp.f, "    '%s.dat' index %u using 1:2 with steps lw 1.5 lc %u title ",
                base, k, k + 1);
        gp_str(gp.f, S.title[k]);
        fprintf(gp.f, ", \\\n    '%s.peaks.dat' index %u using 1:2 with points pt 7 "
                      "ps 1.2 lc %u notitle%s\n", base, k, k + 1, k + 1 < S.n ? ", \\" : "");
    }
    fprintf(gp.f, "  unset output\n}\n");
    series_free(&S);
    return finish(&gp, o->out_dir, base, draw, e);
}

/* ---- bars ------------------------------------------------------------------- */

static int bars_plot(const struct res *r, const char *w, const struct plot_opts *o,
                     int draw, struct sb_err *e)
{
    char base[300], sw[256];
    struct sb_atomic dat, gp;
    sb_safe_name(sw, sizeof sw, w);
    snprintf(base, sizeof base, "%s.bars", sw);
    if (open_out(&dat, o->out_dir, base, "dat", e))
        return -1;
    uint32_t n = 0;
    double lo = INFINITY, hi = 0, hi_span = 0;
    struct series U = {0};
    pick_unit(r, w, &U);
    for (uint32_t i = 0; i < r->t.n_rows; i++)
        if (!strcmp(F(r, i, r->c_w), w) && ok_row(r, i) && num(r, i, r->c_exp) > hi_span)
            hi_span = num(r, i, r->c_exp);
    /* milliseconds for training graphs, microseconds for toy ones */
    double t_scale = hi_span >= 1e3 ? 1e3 : 1;
    fprintf(dat.f, "# scheduler peak_mem_%s exposed_comm_%s\n", U.unit,
            t_scale > 1 ? "ms" : "us");
    for (uint32_t i = 0; i < r->t.n_rows; i++) {
        if (strcmp(F(r, i, r->c_w), w) || !ok_row(r, i))
            continue;
        double x = num(r, i, r->c_exp) / t_scale;
        fputc('"', dat.f);
        for (const char *c = F(r, i, r->c_s); *c; c++)
            fputc(*c == '"' ? '\'' : *c, dat.f);
        fprintf(dat.f, "\" %.6f %.6f\n", num(r, i, r->c_mem) / U.scale, x);
        if (x > 0 && x < lo)
            lo = x;
        if (x > hi)
            hi = x;
        n++;
    }
    if (sb_atomic_commit(&dat, e))
        return -1;
    if (!n || open_out(&gp, o->out_dir, base, "gp", e)) {
        remove_file(o->out_dir, base, "dat");
        return n ? -1 : 0;
    }
    /* exposed communication spans decades between policies: log scale then */
    int logy = hi > 0 && lo < INFINITY && hi / lo > 100;
    fprintf(gp.f, "# peak memory and exposed communication per scheduler\n");
    gp_terminals(gp.f, base, 1100, 500);
    fprintf(gp.f, "  set multiplot layout 1,2 title ");
    gp_str(gp.f, w);
    fprintf(gp.f, "\n  set style data histograms\n  set style fill solid 0.8 border -1\n"
                  "  set boxwidth 0.8\n  set grid ytics\n  set xtics rotate by -35\n"
                  "  set offsets 0, 0, graph 0.08, 0\n"
                  "  unset key\n"
                  "  set title 'peak memory'\n  set ylabel '%s'\n"
                  "  set yrange [0:*]\n"
                  "  plot '%s.dat' using 2:xtic(1) lc 1\n"
                  "  set title 'exposed communication'\n  set ylabel '%s'\n"
                  "  %s\n"
                  "  plot '%s.dat' using 3:xtic(1) lc 2\n"
                  "  unset multiplot\n  unset logscale y\n  unset output\n}\n",
            U.unit, base, t_scale > 1 ? "ms" : "us",
            logy ? "set logscale y\n  set yrange [*:*]" : "set yrange [0:*]", base);
    return finish(&gp, o->out_dir, base, draw, e);
}

/* ---- Pareto ----------------------------------------------------------------- */

struct pt {
    double x, y; /* peak memory and makespan, each relative to original */
};

static int cmp_pt(const void *a, const void *b)
{
    const struct pt *p = a, *q = b;
    if (p->x != q->x)
        return p->x < q->x ? -1 : 1;
    return (p->y > q->y) - (p->y < q->y);
}

/* Row of `original` on workload w, or -1. */
static int original_row(const struct res *r, const char *w)
{
    for (uint32_t i = 0; i < r->t.n_rows; i++)
        if (!strcmp(F(r, i, r->c_w), w) && !strcmp(F(r, i, r->c_s), "original") &&
            ok_row(r, i) && num(r, i, r->c_mem) > 0 && num(r, i, r->c_span) > 0)
            return (int)i;
    return -1;
}

static int rel_point(const struct res *r, uint32_t i, struct pt *p)
{
    int o = original_row(r, F(r, i, r->c_w));
    if (o < 0 || !ok_row(r, i))
        return -1;
    p->x = num(r, i, r->c_mem) / num(r, (uint32_t)o, r->c_mem);
    p->y = num(r, i, r->c_span) / num(r, (uint32_t)o, r->c_span);
    return 0;
}

/* Writes workload w's Pareto front to f: its points that no other point of
 * the same workload beats on both axes, in x order, then a blank line so that
 * gnuplot does not join one workload's front to the next.  A front across
 * workloads would compare schedules of different programs. */
static void workload_front(const struct res *r, const char *w, struct pt *buf, FILE *f)
{
    uint32_t n = 0;
    struct pt p;
    for (uint32_t i = 0; i < r->t.n_rows; i++)
        if (!strcmp(F(r, i, r->c_w), w) && !rel_point(r, i, &p))
            buf[n++] = p;
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

/* <base>.dat: one block per scheduler (all its workloads); <base>.front.dat:
 * each workload's front. */
static uint32_t pareto_data(const struct res *r, struct sb_atomic *dat,
                            struct sb_atomic *front, char ***names)
{
    uint32_t n_names = 0;
    struct pt *buf = sb_xmalloc((r->t.n_rows + 1) * sizeof *buf), p;
    *names = sb_xcalloc(r->t.n_rows + 1, sizeof **names);
    for (uint32_t i = 0; i < r->t.n_rows; i++) {
        const char *s = F(r, i, r->c_s);
        uint32_t k = 0;
        while (k < n_names && strcmp((*names)[k], s))
            k++;
        if (k < n_names || rel_point(r, i, &p))
            continue;
        (*names)[n_names++] = sb_xstrdup(s);
        fprintf(dat->f, "%s# %s\n", k ? "\n\n" : "", s);
        for (uint32_t j = i; j < r->t.n_rows; j++)
            if (!strcmp(F(r, j, r->c_s), s) && !rel_point(r, j, &p))
                fprintf(dat->f, "%.6f %.6f\n", p.x, p.y);
    }
    for (uint32_t i = 0; i < r->t.n_rows; i++) {
        const char *w = F(r, i, r->c_w);
        uint32_t j = 0;
        while (j < i && strcmp(F(r, j, r->c_w), w))
            j++;
        if (j == i)
            workload_front(r, w, buf, front->f);
    }
    free(buf);
    return n_names;
}

static int pareto_plot(const struct res *r, const struct plot_opts *o, int draw,
                       struct sb_err *e)
{
    struct sb_atomic dat, front, gp;
    char **names;
    if (open_out(&dat, o->out_dir, "pareto", "dat", e))
        return -1;
    if (open_out(&front, o->out_dir, "pareto.front", "dat", e)) {
        sb_atomic_abort(&dat);
        return -1;
    }
    uint32_t n = pareto_data(r, &dat, &front, &names);
    int rc = sb_atomic_commit(&dat, e) | sb_atomic_commit(&front, e);
    if (!rc && n && !open_out(&gp, o->out_dir, "pareto", "gp", e)) {
        fprintf(gp.f, "# makespan against peak memory, both relative to original\n");
        gp_terminals(gp.f, "pareto", 900, 650);
        fprintf(gp.f, "  set title 'makespan vs peak memory, relative to original "
                      "(one point per workload)'\n"
                      "  set xlabel 'peak memory / original peak memory'\n"
                      "  set ylabel 'makespan / original makespan'\n"
                      "  set key outside right top\n  set grid\n"
                      "  set arrow 1 from graph 0, first 1 to graph 1, first 1 nohead dt 2\n"
                      "  set arrow 2 from first 1, graph 0 to first 1, graph 1 nohead dt 2\n"
                      "  plot 'pareto.front.dat' using 1:2 with lines lw 1.5 lc rgb '#999999' "
                      "title 'Pareto front of each workload', \\\n");
        for (uint32_t k = 0; k < n; k++) {
            fprintf(gp.f, "    'pareto.dat' index %u using 1:2 with points pt %u ps 1.4 "
                          "lc %u title ", k, 5 + k % 8, k + 1);
            gp_str(gp.f, names[k]);
            fprintf(gp.f, "%s\n", k + 1 < n ? ", \\" : "");
        }
        fprintf(gp.f, "  unset output\n}\n");
        rc = finish(&gp, o->out_dir, "pareto", draw, e);
    } else if (!rc && n) {
        rc = -1;
    }
    for (uint32_t k = 0; k < n; k++)
        free(names[k]);
    free(names);
    return rc;
}

/* ---- command ------------------------------------------------------------------ */

static int plot_help(void)
{
    printf("usage: schedbench plot RESULTS.csv [-o DIR] [--workload W] [--mem-dir DIR]\n"
           "\n"
           "Writes PNG and SVG plots, with the .dat and .gp files gnuplot draws them\n"
           "from, into DIR (default plots/):\n"
           "  <workload>.memory   memory over schedule position per scheduler, peaks\n"
           "                      marked (timelines from `run --mem-dir`; default\n"
           "                      <dir of RESULTS>/mem)\n"
           "  <workload>.bars     peak memory and exposed communication per scheduler\n"
           "  pareto              makespan against peak memory relative to original\n"
           "Without gnuplot on PATH the data and scripts are written and the command\n"
           "says so.\n");
    return 0;
}

static int parse_plot_args(struct plot_opts *o, int argc, char **argv, char *mem_buf,
                           size_t n_mem, struct sb_err *e)
{
    o->out_dir = "plots";
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-o") && v)
            o->out_dir = argv[++i];
        else if (!strcmp(a, "--workload") && v)
            o->workload = argv[++i];
        else if (!strcmp(a, "--mem-dir") && v)
            o->mem_dir = argv[++i];
        else if (a[0] != '-' && !o->results)
            o->results = a;
        else
            return sb_errf(e, "schedbench plot: unexpected argument '%s'", a);
    }
    if (!o->results)
        return sb_errf(e, "usage: schedbench plot RESULTS.csv [-o DIR] [--workload W]");
    if (!o->mem_dir) {
        const char *slash = strrchr(o->results, '/');
        int n = slash ? (int)(slash - o->results) : 1;
        snprintf(mem_buf, n_mem, "%.*s/mem", n, slash ? o->results : ".");
        o->mem_dir = mem_buf;
    }
    return 0;
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
        if (j < i || (o->workload && strcmp(o->workload, w)))
            continue; /* each workload once, in results order */
        if (memory_plot(r, w, o, draw, e) || bars_plot(r, w, o, draw, e))
            return -1;
        n_done++;
    }
    if (o->workload && !n_done)
        return sb_errf(e, "%s: no rows for workload '%s'", o->results, o->workload);
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
    if (parse_plot_args(&o, argc, argv, mem_buf, sizeof mem_buf, &e) ||
        open_results(&r, o.results, &e)) {
        fprintf(stderr, "%s\n", e.msg);
        return 2;
    }
    if (mkdir(o.out_dir, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "schedbench plot: cannot create %s: %s\n", o.out_dir, strerror(errno));
        sb_table_free(&r.t);
        return 2;
    }
    int draw = have_gnuplot();
    int rc = plot_workloads(&r, &o, draw, &e) || pareto_plot(&r, &o, draw, &e);
    if (rc)
        fprintf(stderr, "schedbench plot: %s\n", e.msg);
    else if (!draw)
        fprintf(stderr, "schedbench plot: gnuplot not found: wrote the data and .gp "
                        "scripts to %s; install gnuplot-nox and run `gnuplot X.gp` "
                        "there\n", o.out_dir);
    sb_table_free(&r.t);
    return rc ? 2 : 0;
}
