/* --import K=V,...: the importers' options, one table so that every key is
 * documented, range-checked and refused when unknown in one place. */
#define _POSIX_C_SOURCE 200809L
#include "import.h"

#include <stddef.h>

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
};

void sb_import_defaults(struct sb_import_opts *o)
{
    /* H100 SXM: 989 dense bf16 TFLOP/s, 3.35 TB/s HBM3; ASTRA-sim's cycle is
     * 1 ns; 16 NPUs, the size of ASTRA-sim 1.0's example systems */
    o->peak_tflops = 989;
    o->mem_gbps = 3350;
    o->clock_ghz = 1;
    o->npus = 16;
}

int sb_import_parse(struct sb_import_opts *o, const char *spec, struct sb_err *e)
{
    char *dup = sb_xstrdup(spec), *save = NULL;
    int rc = 0;
    for (char *kv = strtok_r(dup, ",", &save); kv && !rc; kv = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(kv, '='), *end;
        size_t k = 0;
        if (eq)
            *eq = 0;
        while (k < sizeof keys / sizeof keys[0] && strcmp(keys[k].name, kv))
            k++;
        if (k == sizeof keys / sizeof keys[0]) {
            rc = sb_errf(e, "unknown import option '%s' (known: peak_tflops, mem_gbps, "
                            "clock_ghz, npus)", kv);
            break;
        }
        double v = eq ? strtod(eq + 1, &end) : NAN;
        if (!eq || end == eq + 1 || *end || !(v >= keys[k].lo && v <= keys[k].hi) ||
            (keys[k].integer && v != floor(v))) {
            rc = sb_errf(e, "import option %s: '%s' is not %s in %g..%g", kv, eq ? eq + 1 : "",
                         keys[k].integer ? "an integer" : "a number", keys[k].lo, keys[k].hi);
            break;
        }
        char *field = (char *)o + keys[k].off;
        if (keys[k].integer)
            *(uint32_t *)(void *)field = (uint32_t)v;
        else
            *(double *)(void *)field = v;
    }
    free(dup);
    return rc;
}
