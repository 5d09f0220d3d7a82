/* Names in every output language (issue 42, item 7).  The input is up to four
 * names separated by NUL bytes: a workload, two nodes and a scheduler; they
 * may hold control bytes, newlines, '|', '=' and bytes that are not UTF-8.
 *
 * 1. A graph with those names (the workload's is the file name's stem) is
 *    scheduled, simulated and written as a Chrome trace: jansson must parse
 *    the trace back, with the workload's name, mended to UTF-8, in its title.
 * 2. A results file with those names goes through summary (text, json, csv,
 *    --devices csv and json, the report's HTML), compare (text, json, csv,
 *    markdown) and plot (scripts only: gnuplot is kept off PATH).  Every JSON
 *    must parse; each Markdown line must have its 16 cell separators; the
 *    HTML must be UTF-8; no gnuplot script line may start a command.
 * A failed check aborts, and libFuzzer keeps the input. */
#include "fuzz.h"
#include "cmd/commands.h"
#include "cmd/trace.h"
#include "core/escape.h"
#include "core/machine.h"
#include "import/import.h"

#include <dirent.h>
#include <fcntl.h>
#include <jansson.h>
#include <sys/stat.h>

#define MAX_NAME 200

static char tmp[128];

static const char *scratch(const char *what)
{
    snprintf(tmp, sizeof tmp, "/tmp/sbfuzz.%ld.%s", (long)getpid(), what);
    return tmp;
}

/* Runs a command with its standard output in path. */
static int captured(const char *path, int (*cmd)(int, char **), int argc, char **argv)
{
    fflush(stdout);
    int saved = dup(1), fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (saved < 0 || fd < 0)
        abort();
    dup2(fd, 1);
    close(fd);
    int rc = cmd(argc, argv);
    fflush(stdout);
    dup2(saved, 1);
    close(saved);
    return rc;
}

static void must_parse(const char *path)
{
    json_error_t err;
    json_t *j = json_load_file(path, 0, &err);
    if (!j) {
        fprintf(stderr, "fuzz_names: %s is not JSON: %s (line %d)\n", path, err.text, err.line);
        abort();
    }
    json_decref(j);
}

static char *slurp(const char *path)
{
    size_t n;
    char *s = sb_read_file(path, &n);
    if (!s)
        abort();
    return s;
}

static void must_be_utf8(const char *path)
{
    char *s = slurp(path), *v = sb_utf8_valid(s);
    if (strcmp(s, v)) {
        fprintf(stderr, "fuzz_names: %s is not UTF-8\n", path);
        abort();
    }
    free(s);
    free(v);
}

/* Every table line of compare's Markdown (one that begins with '|'): 16 '|'
 * that a backslash does not escape; every other line (the heading with the
 * file names, the counts): none, so that no name opens a table. */
static void markdown_rows(const char *path)
{
    char *s = slurp(path);
    for (char *line = s; *line;) {
        char *nl = strchr(line, '\n');
        if (!nl)
            abort(); /* every line ends */
        int bars = 0;
        for (char *c = line; c < nl; c++) {
            if (*c == '\\' && c + 1 < nl)
                c++;
            else if (*c == '|')
                bars++;
        }
        if (bars != (*line == '|' ? 16 : 0)) {
            fprintf(stderr, "fuzz_names: a Markdown line with %d separators\n", bars);
            abort();
        }
        line = nl + 1;
    }
    free(s);
}

/* compare's JUnit XML: no control byte but newline (XML 1.0 allows none
 * other than tab, newline, carriage return; compare writes only newlines of
 * its own, and a name's as references), every '&' starts one of the five
 * entities or the three references, and every '<' a tag of its own (so a
 * name opened none). */
static void xml_text(const char *path)
{
    static const char *const ent[] = {"&amp;", "&lt;", "&gt;", "&quot;", "&apos;",
                                      "&#9;", "&#10;", "&#13;"};
    static const char *const tag[] = {"<?xml ", "<testsuites ", "</testsuites>", "<testsuite ",
                                      "</testsuite>", "<testcase ", "</testcase>", "<failure ",
                                      "</failure>"};
    char *s = slurp(path);
    for (const char *c = s; *c; c++) {
        int ok = 1;
        if ((unsigned char)*c < 0x20 && *c != '\n')
            ok = 0;
        else if (*c == '&') {
            ok = 0;
            for (int i = 0; i < 8; i++)
                ok |= !strncmp(c, ent[i], strlen(ent[i]));
        } else if (*c == '<') {
            ok = 0;
            for (int i = 0; i < 9; i++)
                ok |= !strncmp(c, tag[i], strlen(tag[i]));
        }
        if (!ok) {
            fprintf(stderr, "fuzz_names: JUnit XML: byte %ld is not escaped\n", (long)(c - s));
            abort();
        }
    }
    free(s);
}

/* No line of a gnuplot script may begin a command that a name brought. */
static void scripts_clean(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    while (d && (de = readdir(d))) {
        size_t k = strlen(de->d_name);
        char *p = sb_strf("%s/%s", dir, de->d_name);
        if (k > 3 && !strcmp(de->d_name + k - 3, ".gp")) {
            char *s = slurp(p);
            for (char *line = s; line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
                while (*line == ' ' || *line == '\t')
                    line++;
                if (!strncmp(line, "system", 6) || *line == '!')
                    abort();
            }
            free(s);
        }
        if (de->d_name[0] != '.' || k > 2)
            unlink(p);
        free(p);
    }
    if (d)
        closedir(d);
}

/* 1. the trace of a graph with these names */
static void trace(const char *wname, const char *n1, const char *n2)
{
    char *csv = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&csv, &len);
    fputs("id,name,kind,inputs,cost_us,out_bytes\n0,", f);
    sb_csv_field(f, n1, 1);
    fputs(",compute,,3,100\n1,", f);
    sb_csv_field(f, n2, 1);
    fputs(",compute,0,4,10\n", f);
    fclose(f);
    char *label = sb_strf("%s.csv", wname);
    struct sb_err e;
    struct sb_graph *g = sb_csv_load_mem(label, csv, len, &e);
    free(label);
    free(csv);
    struct sb_machine *m = NULL;
    if (!g)
        return;
    struct sb_cost_params c;
    sb_cost_defaults(&c);
    sb_cost_apply(&c, g);
    struct sb_sched s;
    struct sb_schedule out;
    if (sb_machine_of_graph(g, &m, &e) || sb_sched_parse(&s, "original", &e)) {
        sb_graph_free(g);
        sb_machine_free(m);
        return;
    }
    sb_schedule_init(&out, g, g->v.machine->n_devices);
    if (!sb_sched_run(&s, g, &out, &e) && !sb_schedule_validate(&g->v, &out, &e)) {
        struct sb_sim_config sc;
        struct sb_sim_result r;
        sb_sim_defaults(&sc);
        sc.record = 1;
        sb_sim_run(g, &out, &sc, &r);
        char *path = sb_xstrdup(scratch("trace.json"));
        if (sb_trace_write(path, g, "original", &out, &r, sc.shared, &e))
            abort();
        json_t *j = json_load_file(path, 0, NULL);
        if (!j)
            abort(); /* the trace is not JSON */
        /* the title of the first process: the name, mended, and the policy */
        json_t *title = json_object_get(json_object_get(json_array_get(
                                            json_object_get(j, "traceEvents"), 0), "args"), "name");
        char *want = sb_utf8_valid(g->name), *full = sb_strf("%s / original", want);
        if (!json_is_string(title) || strcmp(json_string_value(title), full))
            abort();
        free(want), free(full), free(path);
        json_decref(j);
        sb_sim_result_free(&r);
    }
    sb_schedule_free(&out);
    sb_sched_free(&s);
    sb_graph_free(g);
    sb_machine_free(m);
}

/* 2. a results file with these names, through summary, compare and plot */
static void results(const char *wname, const char *sched, const char *msg)
{
    char *res = sb_xstrdup(scratch("names.csv"));
    FILE *f = fopen(res, "wb");
    if (!f)
        abort();
    fputs("workload,scheduler,status,nodes,collectives,makespan_us,peak_mem_bytes,"
          "exposed_comm_us,lb_gap_pct,dev_peak_bytes,over_capacity,dev_cap_bytes,cost_model\n", f);
    const char *sc[3] = {"original", sched, "bad"};
    for (int k = 0; k < 3; k++) {
        sb_csv_field(f, wname, 1);
        sb_csv_field(f, sc[k], 0);
        if (k < 2)
            fprintf(f, ",ok,2,0,%d.000,%d,0.000,0.000,%d,0,1000000,analytical\n", 7 + k,
                    110 - k, 110 - k);
        else {
            char *st = sb_strf("error:%s", msg);
            sb_csv_field(f, st, 0);
            free(st);
            fputs(",2,0,,,,,,,,analytical\n", f);
        }
    }
    fclose(f);
    char *out = sb_xstrdup(scratch("out"));
    static const char *const sum_fmt[][4] = {{"--format", "text"}, {"--format", "json"},
                                             {"--format", "csv"}, {"--devices", "--format"}};
    for (int k = 0; k < 5; k++) {
        char *av[6] = {"summary", res, NULL, NULL, NULL, NULL};
        int ac = 2;
        if (k < 4) {
            av[ac++] = (char *)sum_fmt[k][0];
            av[ac++] = (char *)sum_fmt[k][1];
            if (k == 3)
                av[ac++] = "json";
        } else
            av[ac++] = "--devices";
        if (captured(out, sb_cmd_summary, ac, av) == 0 && (k == 1 || k == 3))
            must_parse(out);
    }
    f = fopen(out, "wb");
    struct sb_err e;
    if (!f)
        abort();
    int html = sb_summary_html(res, NULL, NULL, 0, f, &e);
    fclose(f);
    if (!html)
        must_be_utf8(out);
    static const char *const cmp_fmt[] = {"text", "json", "csv", "markdown", "junit"};
    for (int k = 0; k < 5; k++) {
        char *av[] = {"compare", res, res, "--format", (char *)cmp_fmt[k], NULL};
        if (captured(out, sb_cmd_compare, 5, av) < 2) {
            if (k == 1)
                must_parse(out);
            if (k == 3) {
                markdown_rows(out);
                must_be_utf8(out);
            }
            if (k == 4) {
                xml_text(out);
                must_be_utf8(out);
            }
        }
    }
    char *dir = sb_xstrdup(scratch("plots"));
    char *pv[] = {"plot", res, "-o", dir, NULL};
    captured(out, sb_cmd_plot, 4, pv);
    scripts_clean(dir);
    rmdir(dir);
    free(dir), free(out), free(res);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
    static int init;
    if (!init) {
        fuzz_quiet();
        sb_registry_add_builtins();
        setenv("PATH", "", 1); /* plot writes its scripts, draws nothing */
        init = 1;
    }
    /* up to four names, NUL-separated, each at most MAX_NAME bytes */
    char name[4][MAX_NAME + 1];
    static const char *const fallback[4] = {"w", "a", "b", "heft"};
    size_t at = 0;
    for (int k = 0; k < 4; k++) {
        size_t len = 0;
        while (at < n && data[at] && len < MAX_NAME)
            name[k][len++] = (char)data[at++];
        while (at < n && data[at])
            at++;
        at += at < n;
        name[k][len] = 0;
        if (!len)
            strcpy(name[k], fallback[k]);
    }
    /* a file name's stem: no '/' (the rest stays) */
    for (char *c = name[0]; *c; c++)
        if (*c == '/')
            *c = '_';
    if (strcmp(name[1], name[2]))
        trace(name[0], name[1], name[2]);
    if (strcmp(name[3], "original") && strcmp(name[3], "bad"))
        results(name[0], name[3], name[1]);
    return 0;
}
