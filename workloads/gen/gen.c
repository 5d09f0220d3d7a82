/* schedbench gen: the kinds, their options, dispatch and help.  The graph
 * the generators build is gen_graph.c's. */
#include "gen.h"
#include "gen-impl.h"

#include <errno.h>
#include <stdarg.h>
#include <string.h>

static const struct sb_gen_kind *const kinds[] = {
    &sb_gen_llama_bwd, &sb_gen_llama_fwd, &sb_gen_llama_tp,
    &sb_gen_moe,       &sb_gen_pipeline,  &sb_gen_ddp,
    &sb_gen_dag,       &sb_gen_llama_step, &sb_gen_towers,
    &sb_gen_ggml_llama, &sb_gen_conc,
};
#define N_KINDS (sizeof kinds / sizeof kinds[0])

static const struct sb_gen_kind *kind_find(const char *name)
{
    for (size_t i = 0; i < N_KINDS; i++)
        if (!strcmp(kinds[i]->name, name))
            return kinds[i];
    return NULL;
}

/* Prints text word-wrapped to 78 columns, each line indented. */
static void print_wrapped(FILE *f, int indent, const char *text)
{
    int col = 0;
    const char *p = text;
    while (*p) {
        const char *w = p;
        while (*p && *p != ' ')
            p++;
        int len = (int)(p - w);
        if (col && col + 1 + len > 78) {
            fputc('\n', f);
            col = 0;
        }
        if (!col)
            col = fprintf(f, "%*s%.*s", indent, "", len, w);
        else
            col += fprintf(f, " %.*s", len, w);
        while (*p == ' ')
            p++;
    }
    if (col)
        fputc('\n', f);
}

static void help_general(FILE *f)
{
    fputs("usage: schedbench gen KIND [options] -o FILE.csv\n"
          "\n"
          "Writes a workload graph in format v1 (docs/workload-format.md).  The same\n"
          "options always give a byte-identical file; the file's '# generator=' line\n"
          "records every option, so running it again reproduces the file.\n"
          "\n"
          "kinds and their options:\n", f);
    for (size_t i = 0; i < N_KINDS; i++) {
        char opts[1024];
        size_t len = 0;
        fprintf(f, "  %-10s %s\n", kinds[i]->name, kinds[i]->summary);
        for (uint32_t o = 0; o < kinds[i]->n_opts; o++)
            len += (size_t)snprintf(opts + len, sizeof opts - len, "%s--%s",
                                    o ? " " : "", kinds[i]->opts[o].name);
        print_wrapped(f, 13, opts);
    }
    fputs("\n"
          "every kind also takes:\n"
          "  -o FILE      output file (a temporary file, renamed when complete)\n"
          "  --name NAME  workload name in results (default: from the options)\n"
          "\n"
          "  schedbench gen KIND --help   what each option means, and defaults\n"
          "\n"
          "Costs come from an H100 SXM5 device model; workloads/README.md documents\n"
          "every generator.  Exit status: 0 written, 2 bad usage or input (then\n"
          "nothing is written).\n", f);
}

static void help_kind(const struct sb_gen_kind *k, FILE *f)
{
    fprintf(f, "usage: schedbench gen %s [options] -o FILE.csv\n\n", k->name);
    print_wrapped(f, 0, k->about);
    fputs("\noptions [default]:\n", f);
    for (uint32_t i = 0; i < k->n_opts; i++) {
        const struct sb_gen_opt *o = &k->opts[i];
        char arg[96], text[1024];
        if (o->type == SB_OPT_CHOICE) {
            size_t len = 0;
            arg[0] = 0;
            for (const char *const *c = o->choices; *c; c++)
                len += (size_t)snprintf(arg + len, sizeof arg - len, "%s%s",
                                        c == o->choices ? "" : "|", *c);
            fprintf(f, "  --%s %s\n", o->name, arg);
            snprintf(text, sizeof text, "%s [%s]", o->help, o->choices[o->def]);
        } else {
            fprintf(f, "  --%s N\n", o->name);
            snprintf(text, sizeof text, "%s [%lld] (%lld..%lld)", o->help,
                     (long long)o->def, (long long)o->min, (long long)o->max);
        }
        print_wrapped(f, 6, text);
    }
    fputs("  --name NAME\n"
          "      workload name in results, [A-Za-z0-9._+-] [from the options]\n"
          "  -o FILE\n"
          "      output file, written to a temporary file and then renamed\n", f);
}

static int parse_int(const char *s, int64_t *out)
{
    if (!*s || strlen(s) > 18)
        return -1;
    int64_t x = 0;
    for (const char *p = s; *p; p++) {
        if (*p < '0' || *p > '9')
            return -1;
        x = x * 10 + (*p - '0');
    }
    *out = x;
    return 0;
}

static int name_ok(const char *s)
{
    if (!*s || strlen(s) >= SB_GEN_NAME_MAX)
        return 0;
    for (const char *p = s; *p; p++) {
        int ok = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
                 (*p >= '0' && *p <= '9') || *p == '.' || *p == '_' ||
                 *p == '-' || *p == '+';
        if (!ok)
            return 0;
    }
    return 1;
}

/* Sets option `o` (index i) from the string `val`. */
static int opt_set(const struct sb_gen_kind *k, uint32_t i, const char *val,
                   struct sb_gen_args *a, struct sb_err *e)
{
    const struct sb_gen_opt *o = &k->opts[i];
    if (a->set[i])
        return sb_errf(e, "gen %s: option --%s given twice", k->name, o->name);
    if (o->type == SB_OPT_CHOICE) {
        for (int64_t c = 0; o->choices[c]; c++)
            if (!strcmp(o->choices[c], val)) {
                a->v[i] = c;
                a->set[i] = 1;
                return 0;
            }
        char list[96];
        size_t len = 0;
        list[0] = 0;
        for (const char *const *c = o->choices; *c; c++)
            len += (size_t)snprintf(list + len, sizeof list - len, "%s%s",
                                    c == o->choices ? "" : ", ", *c);
        return sb_errf(e, "gen %s: --%s '%s' is not one of: %s", k->name,
                       o->name, val, list);
    }
    int64_t x;
    if (parse_int(val, &x))
        return sb_errf(e, "gen %s: --%s '%s' is not a non-negative integer",
                       k->name, o->name, val);
    if (x < o->min || x > o->max)
        return sb_errf(e, "gen %s: --%s %lld is out of range %lld..%lld",
                       k->name, o->name, (long long)x, (long long)o->min,
                       (long long)o->max);
    a->v[i] = x;
    a->set[i] = 1;
    return 0;
}

static int opt_find(const struct sb_gen_kind *k, const char *name, size_t len)
{
    for (uint32_t i = 0; i < k->n_opts; i++)
        if (strlen(k->opts[i].name) == len && !strncmp(k->opts[i].name, name, len))
            return (int)i;
    return -1;
}

/* Parses argv[2..] (argv[0] = "gen", argv[1] = KIND). */
static int args_parse(const struct sb_gen_kind *k, int argc, char **argv,
                      struct sb_gen_args *a, const char **out, struct sb_err *e)
{
    SB_ASSERT(k->n_opts <= SB_GEN_MAX_OPTS);
    memset(a, 0, sizeof *a);
    *out = NULL;
    for (int i = 2; i < argc; i++) {
        const char *arg = argv[i], *val = NULL;
        if (!strcmp(arg, "-o") || !strcmp(arg, "--output")) {
            if (i + 1 >= argc)
                return sb_errf(e, "gen %s: %s needs a file name", k->name, arg);
            if (*out)
                return sb_errf(e, "gen %s: -o given twice", k->name);
            *out = argv[++i];
            continue;
        }
        if (strncmp(arg, "--", 2) || !arg[2])
            return sb_errf(e, "gen %s: unexpected argument '%s' (options are "
                           "--name value; gen %s --help lists them)",
                           k->name, arg, k->name);
        const char *name = arg + 2, *eq = strchr(name, '=');
        size_t len = eq ? (size_t)(eq - name) : strlen(name);
        if (eq)
            val = eq + 1;
        else if (i + 1 < argc && argv[i + 1][0] != '-')
            val = argv[++i]; /* no value starts with '-': none is negative */
        else
            return sb_errf(e, "gen %s: --%.*s needs a value", k->name, (int)len, name);
        if (len == 4 && !strncmp(name, "name", 4)) {
            if (a->name[0])
                return sb_errf(e, "gen %s: option --name given twice", k->name);
            if (!name_ok(val))
                return sb_errf(e, "gen %s: --name '%s' must be 1..%d characters "
                               "of [A-Za-z0-9._+-]", k->name, val,
                               SB_GEN_NAME_MAX - 1);
            strcpy(a->name, val);
            continue;
        }
        int o = opt_find(k, name, len);
        if (o < 0)
            return sb_errf(e, "gen %s: unknown option --%.*s (gen %s --help "
                           "lists them)", k->name, (int)len, name, k->name);
        if (opt_set(k, (uint32_t)o, val, a, e))
            return -1;
    }
    for (uint32_t i = 0; i < k->n_opts; i++)
        if (!a->set[i])
            a->v[i] = k->opts[i].def;
    if (k->preset)
        k->preset(a);
    if (k->check && k->check(a, e))
        return -1;
    if (!*out)
        return sb_errf(e, "gen %s: no output file (-o FILE.csv)", k->name);
    if (!a->name[0])
        k->default_name(a, a->name, sizeof a->name);
    return 0;
}

/* The command that reproduces the file: every option, resolved. */
static void command_line(const struct sb_gen_kind *k, const struct sb_gen_args *a,
                         char *buf, size_t n)
{
    size_t len = (size_t)snprintf(buf, n, "schedbench gen %s", k->name);
    for (uint32_t i = 0; i < k->n_opts && len < n; i++) {
        const struct sb_gen_opt *o = &k->opts[i];
        if (o->type == SB_OPT_CHOICE)
            len += (size_t)snprintf(buf + len, n - len, " --%s %s", o->name,
                                    o->choices[a->v[i]]);
        else
            len += (size_t)snprintf(buf + len, n - len, " --%s %lld", o->name,
                                    (long long)a->v[i]);
    }
    if (len < n)
        len += (size_t)snprintf(buf + len, n - len, " --name %s", a->name);
    SB_ASSERT(len < n);
}

int sb_gen_run(int argc, char **argv, struct sb_err *e)
{
    if (argc < 2) {
        sb_errf(e, "gen: missing KIND (schedbench gen --help lists them)");
        return 2;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        help_general(stdout);
        return 0;
    }
    const struct sb_gen_kind *k = kind_find(argv[1]);
    if (!k) {
        char list[128];
        size_t len = 0;
        for (size_t i = 0; i < N_KINDS; i++)
            len += (size_t)snprintf(list + len, sizeof list - len, "%s%s",
                                    i ? ", " : "", kinds[i]->name);
        sb_errf(e, "gen: unknown kind '%s' (known: %s)", argv[1], list);
        return 2;
    }
    for (int i = 2; i < argc; i++)
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            help_kind(k, stdout);
            return 0;
        }

    struct sb_gen_args a;
    const char *out;
    if (args_parse(k, argc, argv, &a, &out, e))
        return 2;

    /* pass 1: build the whole graph in memory, so that nothing is written
     * unless it is complete */
    struct sb_gen g;
    char cmd[2048];
    sb_gen_init(&g);
    command_line(k, &a, cmd, sizeof cmd);
    sb_gen_meta(&g, "name", "%s", a.name);
    sb_gen_meta(&g, "generator", "%s", cmd);
    k->build(&a, &g);

    /* pass 2: write it to a temporary file and rename it into place */
    struct sb_atomic at;
    struct sb_err io;
    int rc = 0;
    if (sb_atomic_open(&at, out, &io))
        rc = 2;
    else {
        sb_gen_write(&g, at.f);
        if (sb_atomic_commit(&at, &io))
            rc = 2;
    }
    if (rc)
        sb_errf(e, "gen %s: %s", k->name, io.msg);
    sb_gen_free(&g);
    return rc;
}

int sb_gen_main(int argc, char **argv)
{
    struct sb_err e;
    int rc = sb_gen_run(argc, argv, &e);
    if (rc)
        fprintf(stderr, "schedbench %s\n", e.msg);
    return rc;
}
