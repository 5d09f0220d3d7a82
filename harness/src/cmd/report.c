/* `schedbench report RESULTS.csv -o report.html`: one self-contained page.
 *
 * The page holds what the sweep was (its workloads, policies, cost model,
 * sweep id, status counts), the summary tables of `schedbench summary`, every
 * figure of `schedbench plot` inline as SVG (drawn into a temporary folder,
 * then read back), and the notes on the plots that were skipped and why.  No
 * script, no stylesheet or font from the network: the file opens anywhere,
 * offline, and can be mailed or attached to a CI run as it is.
 *
 * Each SVG's ids are prefixed with its figure's number, since gnuplot gives
 * every file the same ids (gpPt0, gnuplot_canvas) and one page must not
 * repeat an id. */
#define _POSIX_C_SOURCE 200809L
#include "commands.h"
#include "table.h"
#include "core/escape.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

struct report_opts {
    const char *results, *out, *mem_dir, *vs, *workload, *gantt;
    const char *shown;      /* the results file as the user named it: results may be
                             * the --schedulers copy in the temporary folder */
    const char *schedulers; /* --schedulers LIST, or NULL */
    int all_rows; /* --include-over-capacity, as summary's */
};

/* ---- the figures: plot into a temporary folder ---------------------------------- */

/* Runs `schedbench plot` into dir with its stdout (the wrote/skipped lines) in
 * dir/.plot.log; returns its exit status. */
static int draw(const struct report_opts *o, const char *dir)
{
    const char *av[12];
    int ac = 0;
    av[ac++] = "plot";
    av[ac++] = o->results;
    av[ac++] = "-o";
    av[ac++] = dir;
    if (o->mem_dir)
        av[ac++] = "--mem-dir", av[ac++] = o->mem_dir;
    if (o->workload)
        av[ac++] = "--workload", av[ac++] = o->workload;
    if (o->gantt)
        av[ac++] = "--gantt", av[ac++] = o->gantt;
    av[ac] = NULL;
    char *log = sb_strf("%s/.plot.log", dir);
    fflush(stdout);
    int saved = dup(1), fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    free(log);
    if (saved < 0 || fd < 0) {
        if (saved >= 0)
            close(saved);
        if (fd >= 0)
            close(fd);
        return 2;
    }
    dup2(fd, 1);
    close(fd);
    int rc = sb_cmd_plot(ac, (char **)av);
    fflush(stdout);
    dup2(saved, 1);
    close(saved);
    return rc;
}

/* Copies an SVG into the page: without its XML prolog, every id and reference
 * to one given the prefix. */
static int inline_svg(FILE *f, const char *path, unsigned fig)
{
    size_t n;
    char *s = sb_read_file(path, &n);
    if (!s)
        return -1;
    char *p = strstr(s, "<svg");
    if (!p) {
        free(s);
        return -1;
    }
    static const char *const marks[] = {"id='", "id=\"", "href='#", "href=\"#", "url(#"};
    while (*p) {
        size_t k = 0, len = 0;
        for (; k < sizeof marks / sizeof marks[0]; k++)
            if (!strncmp(p, marks[k], len = strlen(marks[k])))
                break;
        if (k < sizeof marks / sizeof marks[0]) {
            fwrite(p, 1, len, f);
            fprintf(f, "f%u-", fig);
            p += len;
        } else
            fputc(*p++, f);
    }
    free(s);
    return 0;
}

static void remove_dir(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    while (d && (de = readdir(d))) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
            continue;
        char *p = sb_strf("%s/%s", dir, de->d_name);
        unlink(p);
        free(p);
    }
    if (d)
        closedir(d);
    rmdir(dir);
}

/* ---- the sweep's identity -------------------------------------------------------- */

/* Distinct values of column c, comma separated, in first-seen order. */
static void distinct_list(FILE *f, const struct sb_table *t, const char *col, uint32_t *count)
{
    int c = sb_table_col(t, col);
    uint32_t n = 0;
    if (c < 0) {
        fputs("<i>not recorded</i>", f);
        *count = 0;
        return;
    }
    for (uint32_t r = 0; r < t->n_rows; r++) {
        const char *v = sb_table_get(t, r, (uint32_t)c);
        uint32_t q = 0;
        while (q < r && strcmp(sb_table_get(t, q, (uint32_t)c), v))
            q++;
        if (q < r)
            continue;
        if (n++)
            fputs(", ", f);
        sb_html_text(f, *v ? v : "(empty)");
    }
    *count = n;
}

/* The commit of the source tree this binary was built from, at report time
 * (results files do not record one): empty when git or the tree is absent. */
static void source_commit(char *buf, size_t n)
{
    buf[0] = 0;
#ifdef SB_SOURCE_CORPUS
    char *cmd = sb_strf("git -C '%s/../..' rev-parse --short=12 HEAD 2>/dev/null",
                        SB_SOURCE_CORPUS);
    FILE *p = popen(cmd, "r");
    free(cmd);
    if (!p)
        return;
    if (!fgets(buf, (int)n, p))
        buf[0] = 0;
    buf[strcspn(buf, "\n")] = 0;
    pclose(p);
#else
    (void)n;
#endif
}

static void identity(FILE *f, const struct sb_table *t, const struct report_opts *o)
{
    uint32_t nw, ns, nm, nid;
    char commit[64];
    fprintf(f, "<table class=\"id\">\n<tr><th>results file</th><td>");
    sb_html_text(f, o->shown);
    if (o->schedulers) {
        fprintf(f, ", only --schedulers ");
        sb_html_text(f, o->schedulers);
    }
    fprintf(f, " (%u rows)</td></tr>\n<tr><th>workloads</th><td>", t->n_rows);
    distinct_list(f, t, "workload", &nw);
    fprintf(f, " <span class=\"n\">(%u)</span></td></tr>\n<tr><th>policies</th><td>", nw);
    distinct_list(f, t, "scheduler", &ns);
    fprintf(f, " <span class=\"n\">(%u)</span></td></tr>\n<tr><th>cost model</th><td>", ns);
    distinct_list(f, t, "cost_model", &nm);
    if (sb_table_col(t, "cost_params") >= 0) { /* which bandwidth and latency */
        uint32_t n_cost;
        fprintf(f, "</td></tr>\n<tr><th>cost parameters</th><td>");
        distinct_list(f, t, "cost_params", &n_cost);
    }
    fprintf(f, "</td></tr>\n<tr><th>sweep id</th><td>");
    distinct_list(f, t, "sweep_id", &nid);
    fprintf(f, "%s</td></tr>\n<tr><th>status</th><td>",
            nid > 1 ? " <b>(rows of several sweeps)</b>" : "");
    int cs = sb_table_col(t, "status");
    uint32_t n_ok = 0;
    for (uint32_t r = 0; cs >= 0 && r < t->n_rows; r++)
        n_ok += !strcmp(sb_table_get(t, r, (uint32_t)cs), "ok");
    fprintf(f, "%u ok, %u not ok</td></tr>\n", n_ok, t->n_rows - n_ok);
    int cd = sb_table_col(t, "devices_used");
    uint32_t dmax = 0;
    for (uint32_t r = 0; cd >= 0 && r < t->n_rows; r++) {
        uint32_t d = (uint32_t)strtoul(sb_table_get(t, r, (uint32_t)cd), NULL, 10);
        dmax = d > dmax ? d : dmax;
    }
    if (cd >= 0)
        fprintf(f, "<tr><th>machine</th><td>%s (at most %u device%s used by a cell; each "
                   "workload's machine is its <code># machine=</code> line or "
                   "<code>run --machine</code>)</td></tr>\n",
                dmax > 1 ? "several devices" : "one device", dmax, dmax == 1 ? "" : "s");
    source_commit(commit, sizeof commit);
    fprintf(f, "<tr><th>schedbench</th><td>%s", SB_VERSION);
    if (*commit)
        fprintf(f, ", source tree at commit <code>%s</code> when this page was made (the "
                   "results file does not record the commit it ran at)", commit);
    fprintf(f, "</td></tr>\n</table>\n");
}

/* ---- the page ------------------------------------------------------------------ */

static const char style[] =
    "body{font-family:'DejaVu Sans',Arial,sans-serif;margin:2em;color:#222;max-width:1700px}"
    "h1{font-size:1.5em}h2{border-bottom:1px solid #ccc;margin-top:2em}"
    "table{border-collapse:collapse;margin:.5em 0}"
    "td,th{padding:.2em .7em;border-bottom:1px solid #e4e4e4;text-align:right}"
    "th:first-child,td:first-child{text-align:left}"
    "table.id th{text-align:left;vertical-align:top}table.id td{text-align:left}"
    "td.best{font-weight:bold;background:#e8f3e8}td.bad{color:#a00;text-align:left}"
    "figure{margin:1em 0}figcaption{font-weight:bold;margin:.3em 0}"
    "svg{max-width:100%;height:auto;border:1px solid #eee}"
    "figure.wide{overflow-x:auto}figure.wide svg{max-width:none}"
    ".n{color:#777}ul.notes li{margin:.2em 0}nav a{margin-right:.8em}";

/* The page's width for figures, px: wider SVGs scroll instead of shrinking. */
#define SB_REPORT_WIDE_PX 1600

static void figure(FILE *f, const char *dir, const char *base, const char *caption,
                   unsigned *fig)
{
    char *path = sb_strf("%s/%s.svg", dir, base);
    struct stat st;
    if (stat(path, &st) == 0) {
        /* a figure far wider than the page (the heatmap of many policies) is
         * shown at its own size in a box that scrolls sideways: shrunk to the
         * page width its labels could not be read (issue 38, item 10) */
        size_t n;
        char *svg = sb_read_file(path, &n), *at = svg ? strstr(svg, "<svg") : NULL;
        char *wd = at ? strstr(at, "width=\"") : NULL;
        int wide = wd && atoi(wd + 7) > SB_REPORT_WIDE_PX;
        free(svg);
        fprintf(f, "<figure%s><figcaption>", wide ? " class=\"wide\"" : "");
        sb_html_text(f, caption);
        fprintf(f, "</figcaption>\n");
        if (inline_svg(f, path, ++*fig))
            fprintf(f, "<p>(could not read %s)</p>", base);
        fprintf(f, "\n</figure>\n");
    }
    free(path);
}

static int write_page(FILE *f, const struct report_opts *o, const struct sb_table *t,
                      const char *dir, int plot_rc, struct sb_err *e)
{
    fprintf(f, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
               "<title>schedbench report: ");
    sb_html_text(f, o->shown);
    fprintf(f, "</title>\n<style>%s</style>\n</head><body>\n<h1>schedbench report: ", style);
    sb_html_text(f, o->shown);
    fprintf(f, "</h1>\n<nav><a href=\"#sweep\">the sweep</a><a href=\"#glance\">at a "
               "glance</a><a href=\"#all\">all workloads</a><a href=\"#per\">per "
               "workload</a><a href=\"#notes\">notes</a></nav>\n"
               "<h2 id=\"sweep\">The sweep</h2>\n");
    identity(f, t, o);
    fprintf(f, "<h2 id=\"glance\">At a glance</h2>\n<p>Across workloads, then per workload: "
               "each policy's makespan and peak memory, their ratios to ");
    sb_html_text(f, o->vs ? o->vs : "original");
    fprintf(f, ", how far the makespan is above its lower bound (0%%: provably optimal) and "
               "whether the schedule fits its devices' memory (NO: its peak exceeds the "
               "capacity of that many devices; -: the results file does not say); the best "
               "values are in bold.</p>\n");
    if (sb_summary_html(o->results, o->vs, o->workload, o->all_rows, f, e))
        return -1;
    unsigned fig = 0;
    fprintf(f, "<h2 id=\"all\">All workloads</h2>\n");
    figure(f, dir, "pareto", "makespan against peak memory, relative to original", &fig);
    figure(f, dir, "heatmap", "makespan and peak memory relative to original", &fig);
    fprintf(f, "<h2 id=\"per\">Per workload</h2>\n");
    int cw = sb_table_col(t, "workload");
    for (uint32_t r = 0; r < t->n_rows; r++) {
        const char *w = sb_table_get(t, r, (uint32_t)cw);
        uint32_t q = 0;
        while (q < r && strcmp(sb_table_get(t, q, (uint32_t)cw), w))
            q++;
        if (q < r || (o->workload && strcmp(o->workload, w)))
            continue;
        char sw[256], base[600];
        sb_safe_name(sw, sizeof sw, w);
        fprintf(f, "<h3>");
        sb_html_text(f, w);
        fprintf(f, "</h3>\n");
        static const char *const kinds[][2] = {
            {"bars", "makespan with its lower bound, peak memory, exposed communication"},
            {"memory", "live memory over simulated time"},
            {"scatter", "makespan against peak memory"}};
        for (int k = 0; k < 3; k++) {
            snprintf(base, sizeof base, "%s.%s", sw, kinds[k][0]);
            figure(f, dir, base, kinds[k][1], &fig);
        }
        if (o->gantt) {
            /* <workload>.<scheduler>.gantt.svg, the scheduler as plot named it */
            for (uint32_t q2 = 0; q2 < t->n_rows; q2++) {
                const char *sched = sb_table_get(t, q2, (uint32_t)sb_table_col(t, "scheduler"));
                if (strcmp(sb_table_get(t, q2, (uint32_t)cw), w))
                    continue;
                char ss[256];
                sb_safe_name(ss, sizeof ss, sched);
                snprintf(base, sizeof base, "%s.%s.gantt", sw, ss);
                figure(f, dir, base,
                       "what runs where and when: compute, collectives and copies per device",
                       &fig);
            }
        }
    }
    fprintf(f, "<h2 id=\"notes\">Notes</h2>\n<ul class=\"notes\">\n");
    if (plot_rc)
        fprintf(f, "<li>schedbench plot failed (exit %d): the figures may be incomplete</li>\n",
                plot_rc);
    if (!fig && !plot_rc) /* a failing plot is named on the line above */
        fprintf(f, "<li>no figures: gnuplot was not found, or nothing could be drawn</li>\n");
    char *log = sb_strf("%s/.plot.log", dir);
    size_t n;
    char *text = sb_read_file(log, &n);
    free(log);
    for (char *line = text; line && *line;) {
        char *nl = strchr(line, '\n');
        if (nl)
            *nl = 0;
        if (!strncmp(line, "plot: skipped ", 14) || !strncmp(line, "plot: ", 6)) {
            if (strncmp(line, "plot: wrote ", 12)) {
                fprintf(f, "<li>");
                sb_html_text(f, line + 6);
                fprintf(f, "</li>\n");
            }
        }
        line = nl ? nl + 1 : line + strlen(line);
    }
    free(text);
    fprintf(f, "</ul>\n<p class=\"n\">%u figures, drawn by gnuplot from the results file; "
               "schedbench plot writes the same figures as PNG and SVG with their data.</p>\n"
               "</body></html>\n", fig);
    return 0;
}

/* ---- drawing in a child: nothing left behind when interrupted ------------------
 *
 * The figures are drawn and the page is written by a child process; this one
 * waits.  On SIGINT, SIGTERM or SIGHUP its handler passes the signal on to the
 * child and notes it (kill() is all it calls: async-signal-safe); once the
 * child is gone, the temporary folder and the page's temporary file are
 * removed here, outside the handler, and the process dies of the signal it
 * got, as it would have without the handler.  A report killed with SIGKILL
 * still leaves its folder, schedbench-report.* under $TMPDIR. */

static volatile sig_atomic_t drawer_pid, drawer_sig;

static void pass_on(int sig)
{
    drawer_sig = sig;
    if (drawer_pid > 0)
        kill((pid_t)drawer_pid, sig);
}

static int draw_and_write(const struct report_opts *o, const struct sb_table *t,
                          const char *dir, struct sb_atomic *out)
{
    struct sb_err e;
    int plot_rc = draw(o, dir);
    if (write_page(out->f, o, t, dir, plot_rc, &e)) {
        fprintf(stderr, "schedbench report: %s\n", e.msg);
        sb_atomic_abort(out);
        return 2;
    }
    int to_stdout = !strcmp(o->out, "-");
    if (sb_atomic_commit(out, &e)) {
        fprintf(stderr, "schedbench report: %s\n", e.msg);
        return 2;
    }
    if (!to_stdout)
        printf("report: wrote %s\n", o->out);
    return 0;
}

static int make_page(const struct report_opts *o, const struct sb_table *t, const char *dir,
                     struct sb_atomic *out)
{
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
    struct sigaction sa, old[3];
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = pass_on;
    sigemptyset(&sa.sa_mask);
    drawer_sig = 0;
    drawer_pid = 0;
    for (int i = 0; i < 3; i++)
        sigaction(sigs[i], &sa, &old[i]);
    fflush(NULL); /* nothing buffered may be written twice */
    pid_t pid = fork();
    if (pid == 0) {
        for (int i = 0; i < 3; i++)
            signal(sigs[i], SIG_DFL);
        int rc = drawer_sig ? 128 + drawer_sig : draw_and_write(o, t, dir, out);
        fflush(NULL);
        _exit(rc);
    }
    int rc = 2, st = 0;
    if (pid < 0) {
        fprintf(stderr, "schedbench report: cannot fork: %s\n", strerror(errno));
    } else {
        drawer_pid = pid;
        if (drawer_sig) /* a signal came before the child's pid was known */
            kill(pid, drawer_sig);
        while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
            ;
        drawer_pid = 0;
        rc = WIFEXITED(st) ? WEXITSTATUS(st) : 2;
        if (WIFSIGNALED(st) && !drawer_sig)
            fprintf(stderr, "schedbench report: the process drawing the page died of signal "
                            "%d: no page written\n", WTERMSIG(st));
    }
    /* the child committed the page or removed its temporary; when it died
     * before either, the temporary is still there: this removes it */
    sb_atomic_abort(out);
    remove_dir(dir);
    for (int i = 0; i < 3; i++)
        sigaction(sigs[i], &old[i], NULL);
    if (drawer_sig) {
        signal(drawer_sig, SIG_DFL);
        raise(drawer_sig);
    }
    return rc;
}

static int report_help(void)
{
    printf("usage: schedbench report RESULTS.csv [-o REPORT.html] [--mem-dir DIR]\n"
           "                         [--vs POLICY] [--workload W] [--gantt SCHEDULER]\n"
           "                         [--include-over-capacity] [--schedulers A,B,...]\n"
           "\n"
           "Writes one self-contained HTML page (default report.html; - for standard\n"
           "output, checked before any figure is drawn): the sweep's\n"
           "identity (results file, workloads, policies, cost model, sweep id, status\n"
           "counts, schedbench version and source commit), the summary tables of\n"
           "`schedbench summary` (ratios to original, or to --vs POLICY; whether each\n"
           "schedule fits, the fastest that fits; the ranking across workloads counts\n"
           "only rows that fit unless --include-over-capacity), every figure of\n"
           "`schedbench plot` inline as SVG (memory timelines from --mem-dir, default\n"
           "<dir of RESULTS>/mem, with the devices' capacity as a line when the results\n"
           "record it; --gantt SCHEDULER adds that policy's Gantt charts),\n"
           "and the notes on plots that were skipped and why.\n"
           "No script and nothing from the network: it opens offline.  Needs gnuplot for\n"
           "the figures; without it the page has the tables and says so.\n");
    return 0;
}

int sb_cmd_report(int argc, char **argv)
{
    struct report_opts o = {0};
    static const char *const flags[] = {"-o", "--mem-dir", "--vs", "--workload", "--gantt",
                                        "--include-over-capacity", "--help", "--schedulers"};
    struct sb_opt_seen once = {0};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        struct sb_err oe;
        if (!strcmp(a, "--help") || !strcmp(a, "-h"))
            return report_help();
        if (v && (!strcmp(a, "-o") || !strcmp(a, "--mem-dir") || !strcmp(a, "--vs") ||
                  !strcmp(a, "--workload") || !strcmp(a, "--gantt") ||
                  !strcmp(a, "--schedulers")) &&
            sb_opt_once(&once, "report", a, v, &oe)) {
            fprintf(stderr, "%s\n", oe.msg);
            return 2;
        }
        if (!strcmp(a, "-o") && v)
            o.out = argv[++i];
        else if (!strcmp(a, "--mem-dir") && v)
            o.mem_dir = argv[++i];
        else if (!strcmp(a, "--vs") && v)
            o.vs = argv[++i];
        else if (!strcmp(a, "--workload") && v)
            o.workload = argv[++i];
        else if (!strcmp(a, "--gantt") && v)
            o.gantt = argv[++i];
        else if (!strcmp(a, "--schedulers") && v)
            o.schedulers = argv[++i];
        else if (!strcmp(a, "--include-over-capacity"))
            o.all_rows = 1;
        else if (a[0] != '-' && !o.results)
            o.results = a;
        else {
            const char *near = a[0] == '-' ? sb_did_you_mean(a, flags, 8) : NULL;
            fprintf(stderr, "schedbench report: unexpected argument '%s'%s%s%s\n", a,
                    near ? " (did you mean '" : "", near ? near : "", near ? "'?)" : "");
            return 2;
        }
    }
    if (!o.results) {
        fprintf(stderr, "usage: schedbench report RESULTS.csv [-o REPORT.html]\n");
        return 2;
    }
    if (!o.out)
        o.out = "report.html";
    /* a --mem-dir that is not a folder is the user's mistake, refused with its
     * reason as plot refuses it, not a page whose figures went missing */
    struct stat mst;
    if (o.mem_dir) {
        int st_rc = stat(o.mem_dir, &mst);
        const char *why = st_rc && errno == ENOENT ? "no such folder"
                          : st_rc                  ? strerror(errno)
                          : !S_ISDIR(mst.st_mode)  ? "not a folder"
                                                   : NULL;
        if (why) {
            fprintf(stderr, "schedbench report: --mem-dir %s: %s\n", o.mem_dir, why);
            return 2;
        }
    }
    struct sb_table t;
    struct sb_err e;
    if (sb_table_read(&t, o.results, &e)) {
        fprintf(stderr, "schedbench report: %s\n", e.msg);
        return 2;
    }
    if (sb_table_col(&t, "workload") < 0 || sb_table_col(&t, "scheduler") < 0) {
        fprintf(stderr, "schedbench report: %s:1: not a schedbench results file (missing "
                        "columns)\n", o.results);
        sb_table_free(&t);
        return 2;
    }
    /* a (workload, scheduler) twice would count twice: refused before any
     * plot, as summary and compare refuse it */
    if (sb_results_check_unique(&t, sb_table_col(&t, "workload"),
                                sb_table_col(&t, "scheduler"), &e)) {
        fprintf(stderr, "schedbench report: %s\n", e.msg);
        sb_table_free(&t);
        return 2;
    }
    /* the page's file first: a folder, a symlink or a missing folder is
     * refused before any figure is drawn */
    struct sb_atomic out;
    if (sb_atomic_open(&out, o.out, &e)) {
        fprintf(stderr, "schedbench report: %s\n", e.msg);
        sb_table_free(&t);
        return 2;
    }
    const char *tmp = getenv("TMPDIR");
    char *dir = sb_strf("%s/schedbench-report.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        fprintf(stderr, "schedbench report: cannot make a temporary folder %s: %s\n", dir,
                strerror(errno));
        sb_atomic_abort(&out);
        free(dir);
        sb_table_free(&t);
        return 2;
    }
    o.shown = o.results;
    char *sub = NULL, mem_buf[4200];
    if (o.schedulers) {
        /* the page and its figures from the kept rows only: a copy of them in
         * the temporary folder; the timelines stay where the results' are */
        sub = sb_strf("%s/results.csv", dir);
        if (sb_table_keep(&t, sb_table_col(&t, "scheduler"), o.schedulers, &e) ||
            sb_table_write(&t, sub, &e)) {
            fprintf(stderr, "schedbench report: %s\n", e.msg);
            remove_dir(dir);
            free(dir), free(sub);
            sb_atomic_abort(&out);
            sb_table_free(&t);
            return 2;
        }
        if (!o.mem_dir) {
            const char *slash = strrchr(o.results, '/');
            snprintf(mem_buf, sizeof mem_buf, "%.*s/mem", slash ? (int)(slash - o.results) : 1,
                     slash ? o.results : ".");
            struct stat mst2;
            if (!stat(mem_buf, &mst2) && S_ISDIR(mst2.st_mode))
                o.mem_dir = mem_buf;
        }
        o.results = sub;
    }
    int rc = make_page(&o, &t, dir, &out); /* removes dir */
    free(sub);
    free(dir);
    sb_table_free(&t);
    return rc;
}
