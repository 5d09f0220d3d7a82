/* `schedbench conform DIR` on cases of XLA's GPU performance model (DIR of
 * *.perfcase files, tests/data/xla-perf/README.md): each case is one kernel
 * of gpu_performance_model_test.cc or gpu_performance_model_base_test.cc,
 * written as the work a graph node carries (flops, bytes_accessed, dtype,
 * derived by hand from the test's HLO the way GpuHloCostAnalysis counts it)
 * and priced by the roofline (core/cost.c) of a machine file's first device,
 * the test's device description.  Each `check` is one EXPECT_NEAR of the
 * test: |ours - expected| <= tolerance.  What a graph-level model cannot
 * see (launch dimensions, cache re-reads, fusion decisions) is a `skip`
 * with its reason. */
#define _POSIX_C_SOURCE 200809L
#include "conform.h"
#include "conform_cases.h"
#include "core/core.h"
#include "core/machine.h"
#include "core/num.h"
#include "run.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PERF_MAX_CHECKS 8

struct check {
    char what[48];
    double expect, tol;
};

struct pcase {
    char name[128], machine[512], skip[400];
    int has_source;
    double flops, bytes, clock_ghz;
    uint8_t dtype;
    uint32_t n_checks;
    struct check checks[PERF_MAX_CHECKS];
};

static int copy(char *to, size_t n, const char *v)
{
    return snprintf(to, n, "%s", v) >= (int)n ? -1 : 0;
}

static int read_key(struct pcase *c, const char *dir, const char *k, char *v)
{
    const char *why;
    if (!strcmp(k, "name"))
        return copy(c->name, sizeof c->name, v);
    if (!strcmp(k, "source"))
        return (c->has_source = 1) - 1;
    if (!strcmp(k, "skip"))
        return copy(c->skip, sizeof c->skip, v);
    if (!strcmp(k, "machine"))
        return snprintf(c->machine, sizeof c->machine, "%s/%s", dir, v) >=
                       (int)sizeof c->machine ? -1 : 0;
    if (!strcmp(k, "flops"))
        return sb_num_real(v, 0, 1e21, &c->flops, &why);
    if (!strcmp(k, "bytes_accessed"))
        return sb_num_real(v, 0, 1e21, &c->bytes, &why);
    if (!strcmp(k, "clock_rate_ghz"))
        return sb_num_real(v, 1e-3, 100, &c->clock_ghz, &why);
    if (!strcmp(k, "dtype")) {
        enum sb_dtype d;
        if (sb_dtype_parse(v, &d))
            return -1;
        c->dtype = (uint8_t)d;
        return 0;
    }
    if (!strcmp(k, "check")) {
        struct check *x = &c->checks[c->n_checks];
        char what[48];
        int used = 0;
        if (c->n_checks == PERF_MAX_CHECKS ||
            sscanf(v, "%47s %lf %lf %n", what, &x->expect, &x->tol, &used) != 3 || v[used])
            return -1;
        c->n_checks++;
        return copy(x->what, sizeof x->what, what);
    }
    return -1;
}

static int read_case(const char *path, const char *dir, struct pcase *c, struct sb_err *e)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return sb_errf(e, "%s: cannot open", path);
    memset(c, 0, sizeof *c);
    c->dtype = SB_DTYPE_FP32;
    char line[2048];
    uint32_t ln = 0;
    int rc = 0;
    while (!rc && fgets(line, sizeof line, f)) {
        ln++;
        char *h = strchr(line, '#');
        if (h)
            *h = 0;
        char *k = strtok(line, " \t\r\n"), *v = k ? strtok(NULL, "\r\n") : NULL;
        if (!k)
            continue;
        while (v && (*v == ' ' || *v == '\t'))
            v++;
        if (!v || !*v || read_key(c, dir, k, v))
            rc = sb_errf(e, "%s:%u: bad line '%s%s%s'", path, ln, k, v ? " " : "", v ? v : "");
    }
    fclose(f);
    if (!rc && (!c->name[0] || !c->has_source))
        rc = sb_errf(e, "%s: a case needs name and source", path);
    if (!rc && !c->skip[0] && (!c->machine[0] || !c->n_checks))
        rc = sb_errf(e, "%s: a case needs a machine and a check, or a skip", path);
    return rc;
}

/* The quantity a check names, from the node's roofline on device r. */
static int quantity(const struct pcase *c, const struct sb_roofline *r, const char *what,
                    double *out)
{
    double flops = c->flops, bytes = c->bytes, comp, mem;
    uint8_t dt = c->dtype;
    struct sb_graph g;
    memset(&g, 0, sizeof g);
    g.flops = &flops;
    g.bytes_accessed = &bytes;
    g.dtype = &dt;
    double t = sb_roofline_us(r, &g, 0);
    if (sb_roofline_parts(r, &g, 0, &comp, &mem) || t < 0)
        return -1;
    if (!strcmp(what, "time_unfused_us")) /* ToInt64Microseconds: truncated */
        *out = floor(t);
    else if (!strcmp(what, "exec_us"))
        *out = t - r->launch_us;
    else if (!strcmp(what, "cycles")) /* end_to_end_cycles: exec ns x clock */
        *out = (t - r->launch_us) * 1000 * c->clock_ghz;
    else if (!strcmp(what, "compute_us"))
        *out = comp;
    else if (!strcmp(what, "memory_us"))
        *out = mem;
    else if (!strncmp(what, "flop_per_ns.", 12)) { /* a peak: TFLOP/s x 1000 */
        enum sb_dtype d;
        if (sb_dtype_parse(what + 12, &d))
            return -1;
        *out = r->peak_tflops[d] * 1000;
    } else
        return -1;
    return 0;
}


static int run_case(const struct pcase *c, char *why, size_t n_why)
{
    if (c->skip[0]) {
        snprintf(why, n_why, "%s", c->skip);
        return SB_CASE_SKIP;
    }
    struct sb_err e;
    struct sb_machine *m = sb_machine_load(c->machine, &e);
    if (!m) {
        snprintf(why, n_why, "%s", e.msg);
        return SB_CASE_FAIL;
    }
    int v = SB_CASE_PASS;
    size_t len = 0;
    for (uint32_t i = 0; i < c->n_checks && len < n_why; i++) {
        const struct check *x = &c->checks[i];
        double got = NAN;
        int ok = !quantity(c, &m->roof[0], x->what, &got) && fabs(got - x->expect) <= x->tol;
        if (!ok)
            v = SB_CASE_FAIL;
        len += (size_t)snprintf(why + len, n_why - len, "%s%s %.6g (XLA: %g +- %g)%s",
                                i ? "; " : "", x->what, got, x->expect, x->tol,
                                ok ? "" : " OUT");
    }
    sb_machine_free(m);
    return v;
}

int sb_conform_has_perf_cases(const char *dir)
{
    return sb_paths_has_suffix(dir, ".perfcase");
}

static int suite_read(const char *path, const char *dir, void *c, struct sb_err *e)
{
    return read_case(path, dir, c, e);
}

static int suite_run(const void *c, char *why, size_t n_why)
{
    return run_case(c, why, n_why);
}

static const char *suite_name(const void *c)
{
    return ((const struct pcase *)c)->name;
}

int sb_conform_perf(const char *dir)
{
    static const struct sb_case_suite suite = {".perfcase", "xla-perf", sizeof(struct pcase), suite_read,
                                               suite_run, suite_name};
    return sb_case_suite_run(&suite, dir);
}
