/* schedbench command line: run, list, validate, gen.
 *
 * Exit status: 0 success, 1 a sweep ran but some cell was invalid or failed
 * (see the status column), 2 bad usage or bad input (file:line: message). */
#define _POSIX_C_SOURCE 200809L
#include "core/core.h"
#include "import/hlo.h"
#include "import/import.h"
#include "run.h"
#include "commands.h"
#include "conform.h"
#include "core/machine.h"
#include "net/astra.h"

#include <math.h>
#include <string.h>

#ifdef SB_HAVE_GEN
#include "../../../workloads/gen/gen.h"
#endif

#ifndef SB_VERSION
#define SB_VERSION "0.1.0"
#endif

static int usage(FILE *f)
{
    fprintf(f,
            "usage: schedbench COMMAND [options]\n"
            "\n"
            "commands:\n"
            "  run       simulate workloads x schedulers, write a results CSV\n"
            "  list      schedulers with their parameters, and the default corpus\n"
            "  validate  load graphs and print their counts\n"
            "  convert   read a graph in any supported format, write it as CSV v1\n"
            "  conform   check policies and cost models against upstream tests (XLA, ggml, Inductor)\n"
            "  collective  one collective's time under ASTRA-sim's model (--golden: its outputs)\n"
            "  compare   compare two results files: the regression gate\n"
            "  merge     join the results of run --shard slices\n"
            "  plot      draw memory, bar and Pareto plots of a results file\n"
            "  summary   best policy per workload, ratios to original: the answer at a glance\n"
            "  report    one self-contained HTML page: summary, every plot, the sweep\n"
            "  gen       generate a workload graph (schedbench gen --help)\n"
            "\n"
            "  schedbench COMMAND --help   options of one command\n"
            "  schedbench --version\n"
            "\n"
            "Any command: --max-input-bytes SIZE raises the input limit (default 1GiB,\n"
            "also $SCHEDBENCH_MAX_INPUT_BYTES); inputs must be regular files.  A size is\n"
            "bytes, or with a unit: 512MiB, 2GB (KB MB GB TB PB, KiB MiB GiB TiB PiB).\n");
    return f == stderr ? 2 : 0;
}

/* ---- list ----------------------------------------------------------------- */

static const char *param_type_name(uint32_t t)
{
    static const char *const names[] = {"number", "integer", "bool", "enum", "size"};
    return t <= SB_PARAM_BYTES ? names[t] : "?";
}

static void print_param(const struct sb_param *q, int key_w)
{
    char def[64];
    if (q->type == SB_PARAM_ENUM) {
        const char *c = q->choices;
        for (int k = 0; k < (int)q->def && *c; k++)
            c += strcspn(c, "|") + (c[strcspn(c, "|")] == '|');
        snprintf(def, sizeof def, "%.*s", (int)strcspn(c, "|"), c);
    } else if (q->type == SB_PARAM_BOOL) {
        snprintf(def, sizeof def, "%s", q->def ? "true" : "false");
    } else if (isnan(q->def)) { /* no default: the doc says what unset means */
        snprintf(def, sizeof def, "unset");
    } else if (q->def >= 1.8e19) { /* UINT64_MAX: no limit */
        snprintf(def, sizeof def, "none");
    } else {
        snprintf(def, sizeof def, "%.15g", q->def);
    }
    printf("      %-*s %-7s default %-10s %s", key_w, q->key, param_type_name(q->type), def,
           q->doc ? q->doc : "");
    if (q->type == SB_PARAM_ENUM)
        printf(" [%s]", q->choices);
    printf("\n");
}

static int cmd_list(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            printf("usage: schedbench list [--plugin X.so ...]\n"
                   "Prints every scheduler with its summary and parameters, then the\n"
                   "workloads of the default corpus (%s).\n", SB_DEFAULT_CORPUS);
            return 0;
        }
        if (!strcmp(argv[i], "--plugin") && i + 1 < argc) {
            struct sb_err e;
            if (sb_registry_load(argv[++i], &e)) {
                fprintf(stderr, "schedbench: %s\n", e.msg);
                return 2;
            }
            continue;
        }
        fprintf(stderr, "schedbench list: unknown argument '%s'\n", argv[i]);
        return 2;
    }
    /* columns as wide as the longest name and key, so long ones stay aligned */
    int name_w = 12, key_w = 24;
    for (uint32_t i = 0; i < sb_registry_count(); i++) {
        const struct sb_plugin *p = sb_registry_at(i);
        if ((int)strlen(p->name) > name_w)
            name_w = (int)strlen(p->name);
        for (uint32_t k = 0; k < p->n_params; k++)
            if ((int)strlen(p->params[k].key) > key_w)
                key_w = (int)strlen(p->params[k].key);
    }
    printf("schedulers:\n");
    for (uint32_t i = 0; i < sb_registry_count(); i++) {
        const struct sb_plugin *p = sb_registry_at(i);
        printf("  %-*s %s\n", name_w, p->name, p->summary ? p->summary : "");
        for (uint32_t k = 0; k < p->n_params; k++)
            print_param(&p->params[k], key_w);
    }
    struct sb_paths w = {0};
    struct sb_err e;
    const char *corpus = sb_default_corpus();
    printf("\nworkloads (%s):\n", corpus ? corpus : "no default corpus found");
    if (corpus && sb_paths_add(&w, corpus, &e) == 0)
        for (uint32_t i = 0; i < w.n; i++)
            printf("  %s\n", w.path[i]);
    else if (corpus)
        printf("  (%s)\n", e.msg);
    else
        printf("  (looked in $SCHEDBENCH_CORPUS, ./%s, <prefix>/share/schedbench/corpus "
               "beside this binary, %s, %s: pass -w to run)\n", SB_DEFAULT_CORPUS,
               SB_SOURCE_CORPUS, SB_INSTALL_CORPUS);
    sb_paths_free(&w);
    return 0;
}

/* ---- validate ------------------------------------------------------------- */

static void print_counts(const struct sb_graph *g)
{
    uint32_t per[SB_COLL_COUNT] = {0};
    for (uint32_t i = 0; i < g->v.n_nodes; i++)
        if (g->kind[i] == SB_KIND_START)
            per[g->coll[i]]++;
    printf("%s: %s: %u nodes, %u edges, %u collectives", g->path, g->name,
           g->v.n_nodes, g->v.n_edges, sb_graph_n_collectives(g));
    for (int c = 1; c < SB_COLL_COUNT; c++)
        if (per[c])
            printf(", %s %u", sb_coll_name((enum sb_coll)c), per[c]);
    printf("\n");
}

/* Loads one graph on m (or the machine its '# machine=' line names). */
static int validate_one(const char *path, const struct sb_machine *m,
                        const struct sb_import_opts *imp)
{
    struct sb_err e;
    struct sb_graph *g = sb_graph_load_with(path, imp, &e);
    struct sb_machine *own = NULL;
    if (g && (m ? sb_machine_apply(m, g, &e) : sb_machine_of_graph(g, &own, &e))) {
        sb_graph_free(g);
        g = NULL;
    }
    sb_machine_free(own);
    if (!g) {
        fprintf(stderr, "%s\n", e.msg);
        return -1;
    }
    print_counts(g);
    /* graphs with work per node (HLO steps, CSV with a flops column): FLOPs
     * and bytes by op class, collectives by type with their bytes */
    sb_hlo_print_summary(g, stdout);
    const char *unk = sb_graph_meta(g, "hlo_unknown_custom_calls");
    if (unk)
        printf("  unknown custom-calls (cost 0): %s\n", unk);
    const char *order = sb_graph_meta(g, "hlo_order");
    if (order)
        printf("  order: %s\n", order);
    sb_graph_free(g);
    return 0;
}

/* The whole line is read before anything is loaded (issue 42): --machine and
 * --import apply to every file wherever they stand ("validate FILE --machine
 * M" checks FILE on M, as `run -w FILE --machine M` runs it there), and a bad
 * option refuses the command before any file is read. */
static int cmd_validate(int argc, char **argv)
{
    int rc = 0;
    uint32_t n_files = 0;
    const char *machine = NULL, *import = NULL;
    const char **files = sb_xcalloc((size_t)argc + 1, sizeof *files);
    struct sb_opt_seen once = {0};
    struct sb_machine *m = NULL;
    struct sb_err e;
    struct sb_import_opts imp;
    sb_import_defaults(&imp);
    /* pass 1: the line */
    for (int i = 1; i < argc && !rc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            printf("usage: schedbench validate [--machine FILE.yaml] [--import K=V,...] FILE|DIR...\n"
                   "Loads each graph (every workload file of a DIR, as run -w does), checks it, prints node, edge and collective\n"
                   "counts.  With --machine (or a workload's '# machine=' line), checks\n"
                   "the machine description and the graph's pre-assigned devices against\n"
                   "it (docs/machines.md).  --import takes the importers' options, as run\n"
                   "does (workloads/importers/).  Options apply to every file, wherever\n"
                   "they stand on the line.\n"
                   "Exit status 2 if any file is rejected.\n");
            free(files);
            return 0;
        }
        if (!strcmp(a, "--machine") || !strcmp(a, "--import")) {
            if (i + 1 >= argc)
                rc = sb_errf(&e, "schedbench validate: %s needs a value", a);
            else if (!sb_opt_once(&once, "validate", a, argv[i + 1], &e))
                *(a[2] == 'm' ? &machine : &import) = argv[++i];
            else
                rc = -1;
        } else if (a[0] == '-' && a[1]) {
            static const char *const opts[] = {"--machine", "--import", "--help"};
            const char *near = sb_did_you_mean(a, opts, 3);
            rc = sb_errf(&e, "schedbench validate: unknown option '%s'%s%s%s", a,
                         near ? " (did you mean '" : "", near ? near : "", near ? "'?)" : "");
        } else {
            files[n_files++] = a;
        }
    }
    if (!rc && !n_files && !machine)
        rc = sb_errf(&e, "schedbench validate: no files given");
    /* pass 2: the options */
    if (!rc && import && sb_import_parse(&imp, import, &e)) {
        char msg[sizeof e.msg];
        snprintf(msg, sizeof msg, "%s", e.msg);
        rc = sb_errf(&e, "schedbench validate: %s", msg);
    }
    if (!rc && machine) {
        char buf[4200];
        if (!(m = sb_machine_load(sb_machine_path(machine, buf, sizeof buf), &e))) {
            sb_machine_hint(machine, &e);
            rc = -1;
        } else {
            printf("%s: %u devices\n", machine, m->v.n_devices);
        }
    }
    if (rc) {
        fprintf(stderr, "%s\n", e.msg);
        free(files);
        return 2;
    }
    /* pass 3: the files, each on the machine */
    for (uint32_t f = 0; f < n_files; f++) {
        struct sb_paths w = {0};
        if (sb_paths_add(&w, files[f], &e)) { /* a folder gives every workload in it */
            fprintf(stderr, "%s\n", e.msg);
            rc = 2;
        }
        for (uint32_t k = 0; k < w.n; k++)
            if (validate_one(w.path[k], m, &imp))
                rc = 2;
        sb_paths_free(&w);
    }
    sb_machine_free(m);
    free(files);
    return rc;
}

/* ---- convert -------------------------------------------------------------- */

static int cmd_convert(int argc, char **argv)
{
    const char *in = NULL, *out = NULL;
    struct sb_import_opts imp;
    struct sb_opt_seen once = {0};
    sb_import_defaults(&imp);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            printf("usage: schedbench convert IN -o OUT.csv [--toposort]\n"
                   "Reads IN (workload CSV, or another tool's format by extension)\n"
                   "and writes it as workload format v1 (docs/workload-format.md);\n"
                   "-o - to standard output.  A name or '# key=value' metadata holding a\n"
                   "control byte is refused: a '# key=value' line cannot hold it.\n"
                   "--toposort: a CSV whose rows read later rows is put in topological\n"
                   "order (smallest id first, renumbered); a cycle is named.\n");
            return 0;
        }
        struct sb_err oe;
        if (!strcmp(argv[i], "--toposort"))
            imp.toposort = 1;
        else if (!strcmp(argv[i], "-o") && i + 1 < argc) {
            if (sb_opt_once(&once, "convert", "-o", argv[i + 1], &oe)) {
                fprintf(stderr, "%s\n", oe.msg);
                return 2;
            }
            out = argv[++i];
        }
        else if (!in && argv[i][0] != '-')
            in = argv[i];
        else {
            fprintf(stderr, "schedbench convert: unexpected argument '%s'\n", argv[i]);
            return 2;
        }
    }
    if (!in || !out) {
        fprintf(stderr, "usage: schedbench convert IN -o OUT.csv\n");
        return 2;
    }
    struct sb_err e;
    if (sb_out_check(out, &e)) { /* before a load that may take minutes */
        fprintf(stderr, "schedbench convert: %s\n", e.msg);
        return 2;
    }
    struct sb_graph *g = sb_graph_load_with(in, &imp, &e);
    if (!g) {
        fprintf(stderr, "%s\n", e.msg);
        return 2;
    }
    int rc = sb_graph_write(g, out, &e);
    if (rc)
        fprintf(stderr, "schedbench convert: %s\n", e.msg);
    sb_graph_free(g);
    return rc ? 2 : 0;
}

/* ---- main ----------------------------------------------------------------- */

/* Every command's output that went nowhere (a full disk, `>/dev/full`, a
 * closed stdout) is an error, whatever the command found: exit 2 with a
 * message, not the command's 0 or 1. */
static int stdout_status(const char *cmd, int rc)
{
    struct sb_err e;
    if (rc >= 2) /* failed already, and said why (run -o - says so itself) */
        return rc;
    if (sb_stdout_check(&e) == 0)
        return rc;
    fprintf(stderr, "schedbench %s: %s\n", cmd, e.msg);
    return rc >= 2 ? rc : 2;
}

int main(int argc, char **argv)
{
    struct sb_err limit_err;
    if (sb_input_limit_init(&argc, argv, &limit_err)) { /* --max-input-bytes, any command */
        fprintf(stderr, "schedbench: %s\n", limit_err.msg);
        return 2;
    }
    if (argc < 2)
        return usage(stderr);
    const char *cmd = argv[1];
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help"))
        return stdout_status("--help", usage(stdout));
    if (!strcmp(cmd, "--version")) {
        printf("schedbench %s (plugin ABI %d)\n", SB_VERSION, SB_PLUGIN_ABI);
        return stdout_status(cmd, 0);
    }
    int rc;
    if (!strcmp(cmd, "compare"))
        rc = sb_cmd_compare(argc - 1, argv + 1);
    else if (!strcmp(cmd, "merge"))
        rc = sb_cmd_merge(argc - 1, argv + 1);
    else if (!strcmp(cmd, "plot")) {
        rc = sb_cmd_plot(argc - 1, argv + 1);
        sb_registry_clear(); /* plot's styles look policies up in the registry */
    }
    else if (!strcmp(cmd, "summary"))
        rc = sb_cmd_summary(argc - 1, argv + 1);
    else if (!strcmp(cmd, "report")) {
        rc = sb_cmd_report(argc - 1, argv + 1);
        sb_registry_clear();
    }
#ifdef SB_HAVE_GEN
    else if (!strcmp(cmd, "gen"))
        rc = sb_gen_main(argc - 1, argv + 1);
#endif
    else {
        sb_registry_add_builtins();
        if (!strcmp(cmd, "run"))
            rc = sb_cmd_run(argc - 1, argv + 1);
        else if (!strcmp(cmd, "list"))
            rc = cmd_list(argc - 1, argv + 1);
        else if (!strcmp(cmd, "validate"))
            rc = cmd_validate(argc - 1, argv + 1);
        else if (!strcmp(cmd, "convert"))
            rc = cmd_convert(argc - 1, argv + 1);
        else if (!strcmp(cmd, "conform"))
            rc = sb_cmd_conform(argc - 1, argv + 1);
        else if (!strcmp(cmd, "collective"))
            rc = sb_cmd_collective(argc - 1, argv + 1);
        else {
            static const char *const cmds[] = {"run", "list", "validate", "convert", "conform",
                                               "collective", "compare", "merge", "plot",
                                               "summary", "report", "gen"};
            const char *near = sb_did_you_mean(cmd, cmds, sizeof cmds / sizeof cmds[0]);
            fprintf(stderr, "schedbench: unknown command '%s'%s%s%s\n", cmd,
                    near ? " (did you mean '" : "", near ? near : "", near ? "'?)" : "");
            rc = usage(stderr);
        }
        sb_registry_clear();
    }
    return stdout_status(cmd, rc);
}
