/* The plugin registry, the only global mutable state of the host, and the
 * configured scheduler ("name:key=value,...") that the CLI runs. */
#define _POSIX_C_SOURCE 200809L
#include "core.h"
#include "num.h"
#include "size.h"

#include <dlfcn.h>
#include <math.h>
#include <string.h>

#define SB_MAX_PLUGINS 256

static struct {
    uint32_t n;
    const struct sb_plugin *p[SB_MAX_PLUGINS];
    char *origin[SB_MAX_PLUGINS]; /* "built-in" or the .so path */
    void *dl[SB_MAX_PLUGINS];     /* dlopen handle, NULL for built-ins */
    /* a renamed copy of a module's descriptor (--plugin X.so=NAME), else NULL */
    struct sb_plugin *renamed[SB_MAX_PLUGINS];
    char *name[SB_MAX_PLUGINS];
    /* "built-in", or the module's file name and a hash of its bytes
     * ("mine.so@89ab..."): two builds of one plugin are told apart */
    char *build[SB_MAX_PLUGINS];
} reg;

static int valid_name(const char *s, const char *extra)
{
    if (!s || !*s)
        return 0;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || strchr(extra, *s)))
            return 0;
    return 1;
}

static int check_params(const struct sb_plugin *p, const char *origin, struct sb_err *e)
{
    if (p->n_params && !p->params)
        return sb_errf(e, "%s: scheduler '%s' declares %u parameters but no table",
                       origin, p->name, p->n_params);
    for (uint32_t i = 0; i < p->n_params; i++) {
        const struct sb_param *q = &p->params[i];
        if (!valid_name(q->key, "_"))
            return sb_errf(e, "%s: scheduler '%s' parameter %u has an invalid key",
                           origin, p->name, i);
        if (q->type > SB_PARAM_BYTES || (q->type == SB_PARAM_ENUM && !q->choices))
            return sb_errf(e, "%s: scheduler '%s' parameter '%s' has a bad type",
                           origin, p->name, q->key);
    }
    return 0;
}

int sb_registry_add(const struct sb_plugin *p, const char *origin, struct sb_err *e)
{
    if (!p)
        return sb_errf(e, "%s: entry point returned no descriptor", origin);
    if (p->abi < SB_PLUGIN_ABI_MIN || p->abi > SB_PLUGIN_ABI)
        return sb_errf(e, "%s: plugin ABI is %u, this host speaks ABI %u to %u", origin,
                       p->abi, SB_PLUGIN_ABI_MIN, SB_PLUGIN_ABI);
    if (p->size < SB_PLUGIN_SIZE_V1)
        return sb_errf(e, "%s: descriptor size is %u bytes, ABI %u needs at least %zu",
                       origin, p->size, SB_PLUGIN_ABI, (size_t)SB_PLUGIN_SIZE_V1);
    if (!valid_name(p->name, "_-"))
        return sb_errf(e, "%s: scheduler name '%s' is not [a-z0-9_-]+", origin,
                       p->name ? p->name : "(null)");
    if (!p->run)
        return sb_errf(e, "%s: scheduler '%s' has no run function", origin, p->name);
    if (check_params(p, origin, e))
        return -1;
    for (uint32_t i = 0; i < reg.n; i++)
        if (strcmp(reg.p[i]->name, p->name) == 0)
            return sb_errf(e, "%s: duplicate scheduler name '%s', already registered by %s "
                              "(load it under another name: --plugin %s=NAME)",
                           origin, p->name, reg.origin[i], origin);
    if (reg.n == SB_MAX_PLUGINS)
        return sb_errf(e, "%s: more than %d schedulers", origin, SB_MAX_PLUGINS);
    reg.p[reg.n] = p;
    reg.origin[reg.n] = sb_xstrdup(origin);
    reg.build[reg.n] = NULL;
    reg.dl[reg.n] = NULL;
    reg.n++;
    return 0;
}

/* "X.so=NAME": registers the module under NAME, so that the .so copy of a
 * built-in (build/plugins/sb_dp.so) loads beside it as, say, dp_so. */
/* "name.so@<FNV-1a 64 of the file's bytes>": the build, whatever the path
 * it was loaded from; "name.so@unreadable" when it cannot be read again */
static char *file_build(const char *path)
{
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    FILE *f = fopen(path, "rb");
    if (!f)
        return sb_strf("%s@unreadable", base);
    uint64_t h = 14695981039346656037ull;
    unsigned char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0)
        for (size_t i = 0; i < n; i++)
            h = (h ^ buf[i]) * 1099511628211ull;
    int bad = ferror(f);
    fclose(f);
    return bad ? sb_strf("%s@unreadable", base)
               : sb_strf("%s@%016llx", base, (unsigned long long)h);
}

const char *sb_registry_build(const struct sb_plugin *p)
{
    for (uint32_t i = 0; i < reg.n; i++)
        if (reg.p[i] == p)
            return reg.build[i] ? reg.build[i] : "built-in";
    return "built-in";
}

int sb_registry_load(const char *arg, struct sb_err *e)
{
    char spec[4096];
    snprintf(spec, sizeof spec, "%s", arg);
    char *rename = strrchr(spec, '=');
    if (rename) {
        *rename++ = 0;
        if (!valid_name(rename, "_-"))
            return sb_errf(e, "%s: the name after '=' must be [a-z0-9_-]+", arg);
    }
    const char *so_path = spec;
    /* dlopen searches the library path for a bare name; a plugin is a file */
    char buf[sizeof spec + 2];
    const char *path = so_path;
    if (!strchr(so_path, '/')) {
        snprintf(buf, sizeof buf, "./%s", so_path);
        path = buf;
    }
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return sb_errf(e, "%s: cannot load plugin: %s", so_path, dlerror());
    void *sym = dlsym(h, SB_PLUGIN_ENTRY);
    if (!sym) {
        dlclose(h);
        return sb_errf(e, "%s: missing entry symbol %s", so_path, SB_PLUGIN_ENTRY);
    }
    sb_plugin_entry_fn entry;
    /* POSIX guarantees a data pointer from dlsym converts to a function pointer */
    memcpy(&entry, &sym, sizeof entry);
    const struct sb_plugin *p = entry();
    struct sb_plugin *copy = NULL;
    char *name = NULL;
    if (rename && p && p->abi >= SB_PLUGIN_ABI_MIN && p->abi <= SB_PLUGIN_ABI &&
        p->size >= SB_PLUGIN_SIZE_V1) {
        copy = sb_xcalloc(1, sizeof *copy);
        /* the fields this host knows and the plugin has; it reads no others */
        memcpy(copy, p, p->size < sizeof *copy ? p->size : sizeof *copy);
        copy->size = sizeof *copy;
        copy->name = name = sb_xstrdup(rename);
        p = copy;
    }
    if (sb_registry_add(p, so_path, e)) {
        free(copy), free(name);
        dlclose(h);
        return -1;
    }
    reg.dl[reg.n - 1] = h;
    reg.build[reg.n - 1] = file_build(path);
    reg.renamed[reg.n - 1] = copy;
    reg.name[reg.n - 1] = name;
    return 0;
}

uint32_t sb_registry_count(void) { return reg.n; }

const struct sb_plugin *sb_registry_at(uint32_t i)
{
    return i < reg.n ? reg.p[i] : NULL;
}

/* Other names users know a policy by. */
static const char *const aliases[][2] = {
    {"lhs", "aggressive"}, /* XLA's LatencyHidingScheduler */
};

const struct sb_plugin *sb_plugin_find(const char *name)
{
    for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
        if (strcmp(name, aliases[i][0]) == 0)
            name = aliases[i][1];
    for (uint32_t i = 0; i < reg.n; i++)
        if (strcmp(reg.p[i]->name, name) == 0)
            return reg.p[i];
    return NULL;
}

void sb_registry_clear(void)
{
    for (uint32_t i = 0; i < reg.n; i++) {
        free(reg.origin[i]);
        free(reg.build[i]);
        reg.build[i] = NULL;
        free(reg.renamed[i]);
        free(reg.name[i]);
        reg.renamed[i] = NULL, reg.name[i] = NULL;
        if (reg.dl[i])
            dlclose(reg.dl[i]);
    }
    reg.n = 0;
}

/* ---- configured schedulers ------------------------------------------------ */

static int enum_index(const char *choices, const char *val, double *out)
{
    size_t n = strlen(val);
    double k = 0;
    for (const char *c = choices; *c; k++) {
        size_t len = strcspn(c, "|");
        if (len == n && strncmp(c, val, n) == 0) {
            *out = k;
            return 0;
        }
        c += len + (c[len] == '|');
    }
    return -1;
}

static int parse_value(const struct sb_param *q, const char *val, double *out)
{
    switch (q->type) {
    case SB_PARAM_BOOL:
        if (!strcmp(val, "1") || !strcmp(val, "true") || !strcmp(val, "on"))
            return *out = 1, 0;
        if (!strcmp(val, "0") || !strcmp(val, "false") || !strcmp(val, "off"))
            return *out = 0, 0;
        return -1;
    case SB_PARAM_ENUM:
        return enum_index(q->choices, val, out);
    default: {
        /* read strictly (core/num.h): decimal notation, no hex, inf or nan;
         * an integer is written as one ("1e3" and "4.0" are not) */
        const char *why;
        if (q->type == SB_PARAM_INT && strpbrk(val, ".eE"))
            return -1;
        return sb_num_real(val, q->min, q->max, out, &why);
    }
    }
}

static const char *type_hint(const struct sb_param *q, char *buf, size_t n)
{
    switch (q->type) {
    case SB_PARAM_BOOL:
        return "true or false";
    case SB_PARAM_ENUM:
        snprintf(buf, n, "one of %s", q->choices);
        return buf;
    case SB_PARAM_INT:
        snprintf(buf, n, "an integer in %g..%g", q->min, q->max);
        return buf;
    default:
        snprintf(buf, n, "a number in %g..%g", q->min, q->max);
        return buf;
    }
}

/* A size parameter has messages of its own: a size can be wrong in more ways
 * than a number (a unit letter alone, 2^64 bytes), and the user needs to know
 * which.  Bytes are printed whole (%.0f: 9007199254740992, not 9.0072e+15). */
static int set_bytes(const struct sb_plugin *p, const struct sb_param *q, const char *val,
                     double *out, struct sb_err *e)
{
    uint64_t bytes;
    const char *why;
    if (isinf(q->max) && !strcmp(val, "none")) { /* a limit that can be switched off */
        *out = INFINITY;
        return 0;
    }
    if (sb_size_parse(val, &bytes, &why))
        return sb_errf(e, "scheduler '%s': %s='%s' is not a size: %s (write bytes, or a "
                          "number with a unit: %s)", p->name, q->key, val, why, SB_SIZE_UNITS);
    if ((double)bytes < q->min || (double)bytes > q->max)
        return sb_errf(e, "scheduler '%s': %s='%s' is %llu bytes, outside %.0f..%.0f",
                       p->name, q->key, val, (unsigned long long)bytes, q->min, q->max);
    *out = (double)bytes;
    return 0;
}

static int set_param(struct sb_sched *s, const char *key, const char *val,
                     struct sb_err *e)
{
    const struct sb_plugin *p = s->p;
    char hint[256];
    for (uint32_t i = 0; i < p->n_params; i++) {
        if (strcmp(p->params[i].key, key) != 0)
            continue;
        if (p->params[i].type == SB_PARAM_BYTES)
            return set_bytes(p, &p->params[i], val, &s->param[i], e);
        if (parse_value(&p->params[i], val, &s->param[i]) != 0)
            return sb_errf(e, "scheduler '%s': %s='%s' is not %s", p->name, key, val,
                           type_hint(&p->params[i], hint, sizeof hint));
        return 0;
    }
    size_t off = 0;
    hint[0] = 0;
    for (uint32_t i = 0; i < p->n_params && off < sizeof hint; i++)
        off += (size_t)snprintf(hint + off, sizeof hint - off, "%s%s", i ? ", " : "",
                                p->params[i].key);
    return sb_errf(e, "scheduler '%s': unknown parameter '%s' (known: %s)", p->name,
                   key, p->n_params ? hint : "none");
}

/* The build and every parameter's effective value, defaults included
 * ("built-in order=file;count=3", ";" as in the results' device lists, so
 * that the field needs no CSV quotes; "-" without parameters): what decides a
 * row besides the workload, so that builds with other defaults differ. */
static char *sched_ident(const struct sb_sched *s)
{
    char *out = sb_strf("%s ", sb_registry_build(s->p));
    for (uint32_t i = 0; i < s->p->n_params; i++) {
        const struct sb_param *q = &s->p->params[i];
        double v = s->param[i];
        char val[128];
        if (isnan(v))
            snprintf(val, sizeof val, "unset");
        else if (q->type == SB_PARAM_BOOL)
            snprintf(val, sizeof val, "%s", v ? "true" : "false");
        else if (q->type == SB_PARAM_ENUM && q->choices) {
            const char *c = q->choices;
            for (int k = 0; k < (int)v && strchr(c, '|'); k++)
                c = strchr(c, '|') + 1;
            snprintf(val, sizeof val, "%.*s", (int)strcspn(c, "|"), c);
        } else if (isinf(v))
            snprintf(val, sizeof val, "none");
        else
            snprintf(val, sizeof val, "%.17g", v);
        char *next = sb_strf("%s%s%s=%s", out, i ? ";" : "", q->key, val);
        free(out);
        out = next;
    }
    if (!s->p->n_params) {
        char *next = sb_strf("%s-", out);
        free(out);
        out = next;
    }
    return out;
}

int sb_sched_parse(struct sb_sched *s, const char *spec, struct sb_err *e)
{
    memset(s, 0, sizeof *s);
    char *dup = sb_xstrdup(spec);
    char *colon = strchr(dup, ':');
    if (colon)
        *colon = 0;
    s->p = sb_plugin_find(dup);
    if (!s->p) {
        sb_errf(e, "unknown scheduler '%s' (see schedbench list)", dup);
        free(dup);
        return -1;
    }
    /* the canonical name, so an alias (lhs) and its policy (aggressive) give
     * the same results rows and compare matches them */
    const char *rest = strchr(spec, ':');
    size_t len = strlen(s->p->name) + (rest ? strlen(rest) : 0) + 1;
    s->spec = sb_xmalloc(len);
    snprintf(s->spec, len, "%s%s", s->p->name, rest ? rest : "");
    s->param = sb_xcalloc(s->p->n_params + 1, sizeof *s->param);
    for (uint32_t i = 0; i < s->p->n_params; i++)
        s->param[i] = s->p->params[i].def;
    int rc = 0;
    char *save = NULL;
    for (char *kv = colon ? strtok_r(colon + 1, ",", &save) : NULL; kv && !rc;
         kv = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(kv, '=');
        if (!eq) {
            rc = sb_errf(e, "scheduler '%s': parameter '%s' is not key=value",
                         s->p->name, kv);
            break;
        }
        *eq = 0;
        rc = set_param(s, kv, eq + 1, e);
    }
    free(dup);
    if (rc)
        sb_sched_free(s);
    else
        s->ident = sched_ident(s);
    return rc;
}

void sb_sched_free(struct sb_sched *s)
{
    free(s->spec);
    free(s->param);
    free(s->ident);
    memset(s, 0, sizeof *s);
}


/* The full [nodes x devices] table of t(v, a) for a plugin handed the whole
 * graph, when the host keeps one column for identical devices (graph.h,
 * dev_dur_cols); NULL when the host's table is already full.  Refused above
 * SB_DUR_TABLE_MAX_BYTES (docs/machines.md, "Duration tables"). */
static int full_durations(const struct sb_sched *s, const struct sb_graph_view *g,
                          double **out, struct sb_err *e)
{
    uint32_t nd = g->machine->n_devices;
    *out = NULL;
    if (g->dev_dur_cols != 1 || nd == 1)
        return 0;
    double bytes = (double)g->n_nodes * nd * sizeof **out;
    if (bytes > SB_DUR_TABLE_MAX_BYTES)
        return sb_errf(e, "policy %s is handed the whole graph (%s): its table of %u nodes' "
                          "times on %u devices would take %.2f GB, above the ceiling of %.0f "
                          "GB (docs/machines.md, \"Duration tables\")", s->spec,
                       sb_graph_is_job(g) ? "it places nodes" : "not a job of ranks to cut",
                       g->n_nodes, nd, bytes / 1e9, SB_DUR_TABLE_MAX_BYTES / 1e9);
    double *t = sb_xmalloc((size_t)g->n_nodes * nd * sizeof *t + 1);
    for (uint32_t v = 0; v < g->n_nodes; v++)
        for (uint32_t a = 0; a < nd; a++)
            t[(size_t)v * nd + a] = g->dev_dur_us[v];
    *out = t;
    return 0;
}

int sb_sched_run(const struct sb_sched *s, const struct sb_graph *g,
                 struct sb_schedule *out, struct sb_err *e)
{
    if (sb_sched_per_rank(s, g))
        return sb_sched_run_ranks(s, g, out, e);
    double *full = NULL;
    if (full_durations(s, &g->v, &full, e))
        return -1;
    struct sb_graph_view v = g->v;
    if (full)
        v.dev_dur_us = full, v.dev_dur_cols = v.machine->n_devices;
    int rc = sb_sched_run_view(s, &v, out, e);
    free(full);
    return rc;
}
