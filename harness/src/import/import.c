/* --import K=V,...: the importers' options, one table so that every key is
 * documented, range-checked and refused when unknown in one place. */
#define _POSIX_C_SOURCE 200809L
#include "import.h"
#include "hlo.h"
#include "core/num.h"

#include <stddef.h>

#include <errno.h>
#include <stdio.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct key {
    const char *name;
    double lo, hi;
    size_t off;
    int integer;
};

static const struct key keys[] = {
    {"peak_tflops", 1e-6, 1e6, offsetof(struct sb_import_opts, peak_tflops), 0},
    {"mem_gbps", 1e-6, 1e7, offsetof(struct sb_import_opts, mem_gbps), 0},
    {"clock_ghz", 1e-6, 1e3, offsetof(struct sb_import_opts, clock_ghz), 0},
    {"npus", 1, 1 << 20, offsetof(struct sb_import_opts, npus), 1},
    {"ctrl_deps", 0, 1, offsetof(struct sb_import_opts, ctrl_deps), 1},
    {"streams", 0, 1, offsetof(struct sb_import_opts, streams), 1},
    {"toposort", 0, 1, offsetof(struct sb_import_opts, toposort), 1},
    {"astra", 0, 1, offsetof(struct sb_import_opts, astra), 1},
};

void sb_import_defaults(struct sb_import_opts *o)
{
    /* H100 SXM: 989 dense bf16 TFLOP/s, 3.35 TB/s HBM3; ASTRA-sim's cycle is
     * 1 ns; 16 NPUs, the size of ASTRA-sim 1.0's example systems */
    o->peak_tflops = 989;
    o->mem_gbps = 3350;
    o->clock_ghz = 1;
    o->npus = 16;
    o->npus_set = 0;
    o->ctrl_deps = 0;
    o->streams = 1;
    o->toposort = 0;
    o->astra = 0;
    o->no_fuse = 0;
    o->no_queues = 0;
    memset(&o->trips, 0, sizeof o->trips);
}

/* trip_count=N or trip_count.NAME=N (HLO, workloads/importers/hlo.md,
 * "Loops"): N in 0..10^6; each loop named once. */
static int trip_option(struct sb_hlo_trips *t, const char *key, const char *val,
                       struct sb_err *e)
{
    uint64_t v;
    const char *why;
    if (!val || sb_num_u64(val, 0, SB_HLO_MAX_TRIP, &v, &why))
        return sb_errf(e, "import option %s: '%s' is not a trip count in 0..%u", key,
                       val ? val : "", SB_HLO_MAX_TRIP);
    if (!key[10]) {
        t->has_all = 1;
        t->all = (uint32_t)v;
        return 0;
    }
    const char *name = key + 11;
    if (!*name || strlen(name) >= SB_HLO_MAX_TRIP_NAME)
        return sb_errf(e, "import option %s: the loop's name must be 1..%d bytes", key,
                       SB_HLO_MAX_TRIP_NAME - 1);
    for (uint32_t k = 0; k < t->n; k++)
        if (!strcmp(t->name[k], name))
            return sb_errf(e, "import option %s given twice", key);
    if (t->n == SB_HLO_MAX_TRIPS)
        return sb_errf(e, "import option %s: at most %d loops can be named", key,
                       SB_HLO_MAX_TRIPS);
    memcpy(t->name[t->n], name, strlen(name) + 1);
    t->count[t->n++] = (uint32_t)v;
    return 0;
}

int sb_import_parse(struct sb_import_opts *o, const char *spec, struct sb_err *e)
{
    char *dup = sb_xstrdup(spec), *save = NULL;
    int rc = 0;
    for (char *kv = strtok_r(dup, ",", &save); kv && !rc; kv = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(kv, '=');
        size_t k = 0;
        if (eq)
            *eq = 0;
        if (!strcmp(kv, "fuse")) { /* HLO (workloads/importers/hlo.md) */
            if (eq && (!strcmp(eq + 1, "none") || !strcmp(eq + 1, "xla"))) {
                o->no_fuse = eq[1] == 'n';
                continue;
            }
            rc = sb_errf(e, "import option fuse: '%s' is not none or xla", eq ? eq + 1 : "");
            break;
        }
        if (!strcmp(kv, "queues")) { /* HLO, scheduled modules */
            if (eq && (!strcmp(eq + 1, "none") || !strcmp(eq + 1, "xla"))) {
                o->no_queues = eq[1] == 'n';
                continue;
            }
            rc = sb_errf(e, "import option queues: '%s' is not none or xla", eq ? eq + 1 : "");
            break;
        }
        if (!strcmp(kv, "trip_count") || !strncmp(kv, "trip_count.", 11)) {
            rc = trip_option(&o->trips, kv, eq ? eq + 1 : NULL, e);
            continue;
        }
        while (k < sizeof keys / sizeof keys[0] && strcmp(keys[k].name, kv))
            k++;
        if (k == sizeof keys / sizeof keys[0]) {
            rc = sb_errf(e, "unknown import option '%s' (known: peak_tflops, mem_gbps, "
                            "clock_ghz, npus, ctrl_deps, streams, toposort, astra, fuse, "
                            "queues, trip_count, trip_count.NAME)", kv);
            break;
        }
        /* read strictly (core/num.h): decimal notation within the key's
         * range, an integer written as one */
        double v = NAN;
        const char *why;
        if (!eq || (keys[k].integer && strpbrk(eq + 1, ".eE")) ||
            sb_num_real(eq + 1, keys[k].lo, keys[k].hi, &v, &why)) {
            rc = sb_errf(e, "import option %s: '%s' is not %s in %g..%g", kv, eq ? eq + 1 : "",
                         keys[k].integer ? "an integer" : "a number", keys[k].lo, keys[k].hi);
            break;
        }
        char *field = (char *)o + keys[k].off;
        if (keys[k].integer)
            *(uint32_t *)(void *)field = (uint32_t)v;
        else
            *(double *)(void *)field = v;
        if (!strcmp(keys[k].name, "npus"))
            o->npus_set = 1;
    }
    free(dup);
    return rc;
}

/* ---- formats, by file extension -------------------------------------------- */

/* Each importer reads the whole file and builds its graph through the
 * builder, with errors in its own coordinates. */
typedef struct sb_graph *(*load_mem_fn)(const char *path, const char *buf, size_t n,
                                        const struct sb_import_opts *o, struct sb_err *e);

static struct sb_graph *csv_mem(const char *path, const char *buf, size_t n,
                                const struct sb_import_opts *o, struct sb_err *e)
{
    return sb_csv_load_mem_sorted(path, buf, n, (int)o->toposort, e);
}

static struct sb_graph *hlo_mem(const char *path, const char *buf, size_t n,
                                const struct sb_import_opts *o, struct sb_err *e)
{
    struct sb_hlo_opts ho = {.step = 1};
    ho.no_fuse = o && o->no_fuse;
    ho.no_queues = o && o->no_queues;
    return sb_hlo_load_mem_opts(path, buf, n, &ho, o ? &o->trips : NULL, e);
}

static struct sb_graph *chakra_mem(const char *path, const char *buf, size_t n,
                                   const struct sb_import_opts *o, struct sb_err *e)
{
    return sb_chakra_load_mem(path, (const uint8_t *)buf, n, o, e);
}

struct importer {
    const char *ext;
    load_mem_fn load;
};

static const struct importer importers[] = {
    {".csv", csv_mem},               /* format v1 (docs/workload-format.md) */
    {".hlo", hlo_mem},               /* XLA HLO text (workloads/importers/hlo.md) */
    {".et", chakra_mem},             /* Chakra execution trace (chakra.md) */
    {".txt", sb_astra_text_load_mem}, /* ASTRA-sim 1.0 text workload (astra-text.md) */
};

static const struct importer *importer_for(const char *path)
{
    size_t n = strlen(path);
    for (size_t i = 0; i < sizeof importers / sizeof importers[0]; i++) {
        size_t k = strlen(importers[i].ext);
        if (n > k && strcmp(path + n - k, importers[i].ext) == 0)
            return &importers[i];
    }
    return NULL;
}

int sb_graph_is_workload(const char *path) { return importer_for(path) != NULL; }

/* "csv, hlo": the extensions importers[] reads, for messages. */
static void list_formats(char *out, size_t n)
{
    size_t k = 0;
    out[0] = 0;
    for (size_t i = 0; i < sizeof importers / sizeof importers[0] && k < n; i++)
        k += (size_t)snprintf(out + k, n - k, "%s%s", i ? ", " : "", importers[i].ext);
}

struct sb_graph *sb_graph_load(const char *path, struct sb_err *e)
{
    return sb_graph_load_with(path, NULL, e);
}

struct sb_graph *sb_graph_load_with(const char *path, const struct sb_import_opts *opts,
                                    struct sb_err *e)
{
    struct sb_import_opts defaults;
    if (!opts) {
        sb_import_defaults(&defaults);
        opts = &defaults;
    }
    const struct importer *imp = importer_for(path);
    if (!imp) {
        char fmts[256];
        const char *dot = strrchr(path, '.'), *slash = strrchr(path, '/');
        list_formats(fmts, sizeof fmts);
        sb_errf(e, "%s: unsupported format '%s' (schedbench reads %s)", path,
                dot && (!slash || dot > slash) ? dot : "no extension", fmts);
        return NULL;
    }
    if (imp->load == chakra_mem && strstr(path, "%d")) /* trace.%d.et: several ranks */
        return sb_chakra_load_ranks(path, opts, e);
    size_t n;
    char *buf = sb_read_file_limited(path, sb_max_input_bytes(), &n, e);
    if (!buf)
        return NULL;
    struct sb_graph *g = imp->load(path, buf, n, opts, e);
    free(buf);
    return g;
}
