/* `schedbench summary RESULTS.csv`: the answer at a glance.
 *
 * Per workload, one line per policy: makespan and peak memory with their
 * ratios to a reference policy (`original`, or --vs POLICY), the distance of
 * the makespan above its lower bound, exposed communication; then the best
 * policy by makespan and by peak.  Across workloads, per policy: the geometric
 * mean of both ratios and how often it was best.  `run` prints the same at the
 * end of a sweep unless --quiet.
 *
 * --format json and csv give the same figures to programs; --devices gives
 * each row's per-device peaks (dev_peak_bytes, "a;b;...") in long format, one
 * row per device, which pandas reads without splitting strings. */
#define _POSIX_C_SOURCE 200809L
#include "commands.h"
#include "table.h"

#include <jansson.h>
#include <math.h>
#include <string.h>

struct sum_opts {
    const char *results, *vs, *workload, *format;
    int devices;
};

struct cols {
    int w, s, status, span, mem, exp, gap, dev_peak;
};

/* One ok or failed row of a workload, with its ratios to the reference. */
struct entry {
    uint32_t row;
    int ok, mem_known;
    double span, mem, exp, gap; /* gap NaN when no bound */
    double r_span, r_mem;       /* NaN when there is nothing to divide by */
};

struct wl {
    const char *name;
    uint32_t n;
    struct entry *e;
    int ref;                 /* index into e of the reference, -1 */
    double best_span, best_mem;
};

struct summary {
    struct sb_table t;
    struct cols c;
    uint32_t n_wl;
    struct wl *wl;
    const char *vs;
};

static const char *G(const struct summary *S, uint32_t r, int c)
{
    return c < 0 ? "" : sb_table_get(&S->t, r, (uint32_t)c);
}

/* The policy name of a scheduler column: "aggressive:x=4" is "aggressive". */
static int same_policy(const char *sched, const char *vs)
{
    if (!strcmp(sched, vs))
        return 2;
    size_t n = strcspn(sched, ":");
    return !strchr(vs, ':') && strlen(vs) == n && !strncmp(sched, vs, n);
}

static double field_num(const char *f)
{
    char *end;
    double v = strtod(f, &end);
    return *f && !*end && isfinite(v) ? v : NAN;
}

/* The value of column c nearest to what the user typed (a workload or a
 * policy that has no rows), for a "did you mean"; NULL when none is near.
 * The name points into the table. */
static const char *nearest_in_column(const struct summary *S, int c, const char *want)
{
    const char **names = sb_xcalloc(S->t.n_rows + 1, sizeof *names);
    uint32_t n = 0;
    for (uint32_t r = 0; r < S->t.n_rows; r++) {
        uint32_t k = 0;
        while (k < n && strcmp(names[k], G(S, r, c)))
            k++;
        if (k == n)
            names[n++] = G(S, r, c);
    }
    const char *near = sb_did_you_mean(want, names, n);
    free(names);
    return near;
}

static void summary_free(struct summary *S);

static int summary_load(struct summary *S, const struct sum_opts *o, struct sb_err *e)
{
    memset(S, 0, sizeof *S);
    S->vs = o->vs ? o->vs : "original";
    if (sb_table_read(&S->t, o->results, e))
        return -1;
    struct cols *c = &S->c;
    c->w = sb_table_col(&S->t, "workload");
    c->s = sb_table_col(&S->t, "scheduler");
    c->status = sb_table_col(&S->t, "status");
    c->span = sb_table_col(&S->t, "makespan_us");
    c->mem = sb_table_col(&S->t, "peak_mem_bytes");
    c->exp = sb_table_col(&S->t, "exposed_comm_us");
    c->gap = sb_table_col(&S->t, "lb_gap_pct");
    c->dev_peak = sb_table_col(&S->t, "dev_peak_bytes");
    if (c->w < 0 || c->s < 0 || c->status < 0 || c->span < 0 || c->mem < 0 || c->exp < 0) {
        sb_table_free(&S->t);
        return sb_errf(e, "%s:1: not a schedbench results file (missing columns)", o->results);
    }
    S->wl = sb_xcalloc(S->t.n_rows + 1, sizeof *S->wl);
    for (uint32_t r = 0; r < S->t.n_rows; r++) {
        const char *w = G(S, r, c->w);
        if (o->workload && strcmp(o->workload, w))
            continue;
        uint32_t k = 0;
        while (k < S->n_wl && strcmp(S->wl[k].name, w))
            k++;
        struct wl *W = &S->wl[k];
        if (k == S->n_wl) {
            S->n_wl++;
            W->name = w;
            W->e = sb_xcalloc(S->t.n_rows + 1, sizeof *W->e);
            W->ref = -1;
        }
        struct entry *x = &W->e[W->n++];
        x->row = r;
        x->ok = !strcmp(G(S, r, c->status), "ok");
        x->span = field_num(G(S, r, c->span));
        x->mem = field_num(G(S, r, c->mem));
        x->mem_known = x->ok && !isnan(x->mem);
        x->exp = field_num(G(S, r, c->exp));
        x->gap = field_num(G(S, r, c->gap));
        x->ok = x->ok && !isnan(x->span);
    }
    if (o->workload && !S->n_wl) {
        const char *near = nearest_in_column(S, c->w, o->workload);
        sb_errf(e, "%s: no rows for workload '%s'%s%s%s", o->results, o->workload,
                near ? " (did you mean '" : "", near ? near : "", near ? "'?)" : "");
        summary_free(S);
        return -1;
    }
    /* the reference: an exact scheduler match first, else the policy's name */
    int any_ref = 0;
    for (uint32_t k = 0; k < S->n_wl; k++) {
        struct wl *W = &S->wl[k];
        for (int pass = 2; pass >= 1 && W->ref < 0; pass--)
            for (uint32_t i = 0; i < W->n; i++)
                if (W->e[i].ok && same_policy(G(S, W->e[i].row, c->s), S->vs) == pass) {
                    W->ref = (int)i;
                    break;
                }
        any_ref |= W->ref >= 0;
        W->best_span = W->best_mem = INFINITY;
        for (uint32_t i = 0; i < W->n; i++) {
            struct entry *x = &W->e[i];
            x->r_span = x->r_mem = NAN;
            if (!x->ok)
                continue;
            if (x->span < W->best_span)
                W->best_span = x->span;
            if (x->mem_known && x->mem < W->best_mem)
                W->best_mem = x->mem;
            if (W->ref < 0)
                continue;
            const struct entry *f = &W->e[W->ref];
            if (f->span > 0)
                x->r_span = x->span / f->span;
            if (x->mem_known && f->mem_known && f->mem > 0)
                x->r_mem = x->mem / f->mem;
        }
    }
    if (o->vs && !any_ref) {
        const char *near = nearest_in_column(S, c->s, o->vs);
        sb_errf(e, "%s: --vs '%s': no ok row of that policy%s%s%s", o->results, o->vs,
                near ? " (did you mean '" : "", near ? near : "", near ? "'?)" : "");
        summary_free(S);
        return -1;
    }
    return 0;
}

static void summary_free(struct summary *S)
{
    for (uint32_t k = 0; k < S->n_wl; k++)
        free(S->wl[k].e);
    free(S->wl);
    sb_table_free(&S->t);
}

/* The schedulers that reach the best value of a workload, comma separated. */
static void best_list(const struct summary *S, const struct wl *W, int by_mem, char *buf,
                      size_t n)
{
    size_t len = 0;
    buf[0] = 0;
    for (uint32_t i = 0; i < W->n; i++) {
        const struct entry *x = &W->e[i];
        int hit = x->ok && (by_mem ? x->mem_known && x->mem == W->best_mem
                                   : x->span == W->best_span);
        if (hit && len + 4 < n)
            len += (size_t)snprintf(buf + len, n - len, "%s%s", len ? ", " : "",
                                    G(S, x->row, S->c.s));
    }
}

/* ---- across workloads: per policy ------------------------------------------- */

struct policy {
    const char *name;
    uint32_t n_span, n_mem;     /* workloads with a ratio */
    double log_span, log_mem;   /* sums of log ratios */
    uint32_t best_span, best_mem;
};

static uint32_t policies(const struct summary *S, struct policy *P)
{
    uint32_t n = 0;
    for (uint32_t k = 0; k < S->n_wl; k++) {
        const struct wl *W = &S->wl[k];
        for (uint32_t i = 0; i < W->n; i++) {
            const struct entry *x = &W->e[i];
            const char *s = G(S, x->row, S->c.s);
            uint32_t p = 0;
            while (p < n && strcmp(P[p].name, s))
                p++;
            if (p == n)
                memset(&P[n++], 0, sizeof *P), P[p].name = s;
            if (!x->ok)
                continue;
            if (x->r_span > 0)
                P[p].n_span++, P[p].log_span += log(x->r_span);
            if (x->r_mem > 0)
                P[p].n_mem++, P[p].log_mem += log(x->r_mem);
            P[p].best_span += x->span == W->best_span;
            P[p].best_mem += x->mem_known && x->mem == W->best_mem;
        }
    }
    return n;
}

/* ---- text --------------------------------------------------------------------- */

struct scale {
    double div;
    const char *name;
};

static struct scale time_scale(const struct wl *W)
{
    double hi = 0;
    for (uint32_t i = 0; i < W->n; i++)
        if (W->e[i].ok && W->e[i].span > hi)
            hi = W->e[i].span;
    return hi >= 1e3 ? (struct scale){1e3, "ms"} : (struct scale){1, "us"};
}

static struct scale mem_scale(const struct wl *W)
{
    double hi = 0;
    for (uint32_t i = 0; i < W->n; i++)
        if (W->e[i].mem_known && W->e[i].mem > hi)
            hi = W->e[i].mem;
    return hi >= 1e9 ? (struct scale){1e9, "GB"}
           : hi >= 1e6 ? (struct scale){1e6, "MB"}
           : hi >= 1e3 ? (struct scale){1e3, "KB"}
                       : (struct scale){1, "B"};
}

static void ratio_str(char *buf, size_t n, double r)
{
    if (isnan(r))
        snprintf(buf, n, "-");
    else
        snprintf(buf, n, "%.3f", r);
}

static void print_text(const struct summary *S, FILE *f)
{
    char a[64], b[64], c[64], d[64], g[64], h[64], best[1024], xvs[80];
    int sw = 6;
    snprintf(xvs, sizeof xvs, "x %.60s", S->vs); /* "x original": the ratio's column */
    int rw = (int)strlen(xvs) > 9 ? (int)strlen(xvs) : 9;
    for (uint32_t k = 0; k < S->n_wl; k++)
        for (uint32_t i = 0; i < S->wl[k].n; i++) {
            int l = (int)strlen(G(S, S->wl[k].e[i].row, S->c.s));
            if (l > sw)
                sw = l;
        }
    for (uint32_t k = 0; k < S->n_wl; k++) {
        const struct wl *W = &S->wl[k];
        struct scale ts = time_scale(W), ms = mem_scale(W);
        fprintf(f, "%s%s\n", k ? "\n" : "", W->name);
        if (W->ref < 0)
            fprintf(f, "  (no ok '%s' row: no ratios)\n", S->vs);
        fprintf(f, "  %-*s %12s %*s %11s %12s %*s %12s\n", sw, "policy", "makespan", rw, xvs,
                "above bound", "peak", rw, xvs, "exposed");
        for (uint32_t i = 0; i < W->n; i++) {
            const struct entry *x = &W->e[i];
            const char *s = G(S, x->row, S->c.s);
            if (!x->ok) {
                fprintf(f, "  %-*s %s\n", sw, s, G(S, x->row, S->c.status));
                continue;
            }
            snprintf(a, sizeof a, "%.4g %s", x->span / ts.div, ts.name);
            ratio_str(b, sizeof b, x->r_span);
            if (isnan(x->gap))
                snprintf(c, sizeof c, "-");
            else
                snprintf(c, sizeof c, "+%.1f%%", x->gap);
            if (x->mem_known)
                snprintf(d, sizeof d, "%.4g %s", x->mem / ms.div, ms.name);
            else
                snprintf(d, sizeof d, "unknown");
            ratio_str(g, sizeof g, x->r_mem);
            snprintf(h, sizeof h, "%.4g %s", x->exp / ts.div, ts.name);
            fprintf(f, "  %-*s %12s %*s %11s %12s %*s %12s\n", sw, s, a, rw, b, c, d, rw, g, h);
        }
        if (isfinite(W->best_span)) {
            best_list(S, W, 0, best, sizeof best);
            fprintf(f, "  best makespan: %s (%.4g %s)\n", best, W->best_span / ts.div, ts.name);
        }
        if (isfinite(W->best_mem)) {
            best_list(S, W, 1, best, sizeof best);
            fprintf(f, "  best peak:     %s (%.4g %s)\n", best, W->best_mem / ms.div, ms.name);
        } else if (isfinite(W->best_span))
            fprintf(f, "  best peak:     unknown (peak memory not measured: no tensor sizes)\n");
    }
    if (S->n_wl < 2)
        return;
    struct policy *P = sb_xcalloc(S->t.n_rows + 1, sizeof *P);
    uint32_t np = policies(S, P);
    fprintf(f, "\nacross %u workloads: geometric mean of the ratios to %s (over how many\n"
               "workloads), and how many times each policy was best\n", S->n_wl, S->vs);
    fprintf(f, "  %-*s %16s %5s %16s %5s\n", sw, "policy", "makespan ratio", "best",
            "peak ratio", "best");
    for (uint32_t p = 0; p < np; p++) {
        if (P[p].n_span)
            snprintf(a, sizeof a, "%.3f (%u)", exp(P[p].log_span / P[p].n_span), P[p].n_span);
        else
            snprintf(a, sizeof a, "-");
        if (P[p].n_mem)
            snprintf(b, sizeof b, "%.3f (%u)", exp(P[p].log_mem / P[p].n_mem), P[p].n_mem);
        else
            snprintf(b, sizeof b, "-");
        fprintf(f, "  %-*s %16s %5u %16s %5u\n", sw, P[p].name, a, P[p].best_span, b,
                P[p].best_mem);
    }
    free(P);
}

/* ---- json and csv --------------------------------------------------------------- */

static json_t *jnum(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

static json_t *best_array(const struct summary *S, const struct wl *W, int by_mem)
{
    json_t *a = json_array();
    for (uint32_t i = 0; i < W->n; i++) {
        const struct entry *x = &W->e[i];
        if (x->ok && (by_mem ? x->mem_known && x->mem == W->best_mem : x->span == W->best_span))
            json_array_append_new(a, json_string(G(S, x->row, S->c.s)));
    }
    return a;
}

static void print_json(const struct summary *S, const struct sum_opts *o, FILE *f)
{
    json_t *root = json_object(), *wls = json_array();
    json_object_set_new(root, "results", json_string(o->results));
    json_object_set_new(root, "vs", json_string(S->vs));
    for (uint32_t k = 0; k < S->n_wl; k++) {
        const struct wl *W = &S->wl[k];
        json_t *w = json_object(), *rows = json_array();
        json_object_set_new(w, "workload", json_string(W->name));
        json_object_set_new(w, "best_makespan", best_array(S, W, 0));
        json_object_set_new(w, "best_peak", best_array(S, W, 1));
        for (uint32_t i = 0; i < W->n; i++) {
            const struct entry *x = &W->e[i];
            json_t *r = json_object();
            json_object_set_new(r, "scheduler", json_string(G(S, x->row, S->c.s)));
            json_object_set_new(r, "status", json_string(G(S, x->row, S->c.status)));
            json_object_set_new(r, "makespan_us", jnum(x->ok ? x->span : NAN));
            json_object_set_new(r, "peak_mem_bytes", jnum(x->mem_known ? x->mem : NAN));
            json_object_set_new(r, "exposed_comm_us", jnum(x->ok ? x->exp : NAN));
            json_object_set_new(r, "lb_gap_pct", jnum(x->ok ? x->gap : NAN));
            json_object_set_new(r, "makespan_ratio", jnum(x->r_span));
            json_object_set_new(r, "peak_ratio", jnum(x->r_mem));
            json_array_append_new(rows, r);
        }
        json_object_set_new(w, "rows", rows);
        json_array_append_new(wls, w);
    }
    json_object_set_new(root, "workloads", wls);
    struct policy *P = sb_xcalloc(S->t.n_rows + 1, sizeof *P);
    uint32_t np = policies(S, P);
    json_t *pol = json_array();
    for (uint32_t p = 0; p < np; p++) {
        json_t *x = json_object();
        json_object_set_new(x, "scheduler", json_string(P[p].name));
        json_object_set_new(x, "geomean_makespan_ratio",
                            jnum(P[p].n_span ? exp(P[p].log_span / P[p].n_span) : NAN));
        json_object_set_new(x, "workloads_with_makespan_ratio", json_integer(P[p].n_span));
        json_object_set_new(x, "geomean_peak_ratio",
                            jnum(P[p].n_mem ? exp(P[p].log_mem / P[p].n_mem) : NAN));
        json_object_set_new(x, "workloads_with_peak_ratio", json_integer(P[p].n_mem));
        json_object_set_new(x, "best_makespan", json_integer(P[p].best_span));
        json_object_set_new(x, "best_peak", json_integer(P[p].best_mem));
        json_array_append_new(pol, x);
    }
    free(P);
    json_object_set_new(root, "policies", pol);
    json_dumpf(root, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
    fputc('\n', f);
    json_decref(root);
}

static void csv_num(FILE *f, double v, const char *fmt)
{
    if (isfinite(v))
        sb_csv_fieldf(f, 0, fmt, v);
    else
        sb_csv_field(f, "", 0);
}

static void print_csv(const struct summary *S, FILE *f)
{
    static const char *const head[] = {"workload", "scheduler", "status", "makespan_us",
                                       "peak_mem_bytes", "exposed_comm_us", "lb_gap_pct",
                                       "makespan_ratio", "peak_ratio", "best_makespan",
                                       "best_peak", NULL};
    for (int i = 0; head[i]; i++)
        sb_csv_field(f, head[i], i == 0);
    sb_csv_end(f);
    for (uint32_t k = 0; k < S->n_wl; k++) {
        const struct wl *W = &S->wl[k];
        for (uint32_t i = 0; i < W->n; i++) {
            const struct entry *x = &W->e[i];
            sb_csv_field(f, W->name, 1);
            sb_csv_field(f, G(S, x->row, S->c.s), 0);
            sb_csv_field(f, G(S, x->row, S->c.status), 0);
            csv_num(f, x->ok ? x->span : NAN, "%.3f");
            csv_num(f, x->mem_known ? x->mem : NAN, "%.0f");
            csv_num(f, x->ok ? x->exp : NAN, "%.3f");
            csv_num(f, x->ok ? x->gap : NAN, "%.3f");
            csv_num(f, x->r_span, "%.6f");
            csv_num(f, x->r_mem, "%.6f");
            sb_csv_fieldf(f, 0, "%d", x->ok && x->span == W->best_span);
            sb_csv_fieldf(f, 0, "%d", x->mem_known && x->mem == W->best_mem);
            sb_csv_end(f);
        }
    }
}

/* Per-device peaks, long format: one row (or object) per device. */
static int print_devices(const struct summary *S, const struct sum_opts *o, FILE *f,
                         struct sb_err *e)
{
    if (S->c.dev_peak < 0)
        return sb_errf(e, "%s:1: no dev_peak_bytes column (a results file from before "
                          "placement)", o->results);
    int json = !strcmp(o->format, "json");
    json_t *arr = json ? json_array() : NULL;
    if (!json) {
        sb_csv_field(f, "workload", 1);
        sb_csv_field(f, "scheduler", 0);
        sb_csv_field(f, "device", 0);
        sb_csv_field(f, "peak_mem_bytes", 0);
        sb_csv_end(f);
    }
    for (uint32_t k = 0; k < S->n_wl; k++)
        for (uint32_t i = 0; i < S->wl[k].n; i++) {
            const struct entry *x = &S->wl[k].e[i];
            const char *p = G(S, x->row, S->c.dev_peak);
            for (uint32_t d = 0; x->ok && *p; d++) {
                char *end;
                unsigned long long v = strtoull(p, &end, 10);
                if (end == p)
                    break;
                if (json) {
                    json_t *r = json_object();
                    json_object_set_new(r, "workload", json_string(S->wl[k].name));
                    json_object_set_new(r, "scheduler", json_string(G(S, x->row, S->c.s)));
                    json_object_set_new(r, "device", json_integer(d));
                    json_object_set_new(r, "peak_mem_bytes", json_integer((json_int_t)v));
                    json_array_append_new(arr, r);
                } else {
                    sb_csv_field(f, S->wl[k].name, 1);
                    sb_csv_field(f, G(S, x->row, S->c.s), 0);
                    sb_csv_fieldf(f, 0, "%u", d);
                    sb_csv_fieldf(f, 0, "%llu", v);
                    sb_csv_end(f);
                }
                p = *end == ';' ? end + 1 : end;
            }
        }
    if (json) {
        json_dumpf(arr, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        fputc('\n', f);
        json_decref(arr);
    }
    return 0;
}

/* ---- html (schedbench report) --------------------------------------------------- */

static void html_text(FILE *f, const char *s)
{
    for (; *s; s++)
        switch (*s) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        default: fputc(*s, f);
        }
}

static void print_html(const struct summary *S, FILE *f)
{
    char a[64], b[64], c[64], d[64], g[64], h[64], best[1024];
    /* across workloads first: the answer at a glance, then the detail */
    if (S->n_wl >= 2) {
        struct policy *P = sb_xcalloc(S->t.n_rows + 1, sizeof *P);
        uint32_t np = policies(S, P);
        fprintf(f, "<h3>across %u workloads</h3>\n<p>Geometric mean of the ratios to ",
                S->n_wl);
        html_text(f, S->vs);
        fprintf(f, " (over how many workloads), and how many times each policy was best.</p>\n"
                   "<table class=\"sum\"><tr><th>policy</th><th>makespan ratio</th><th>best</th>"
                   "<th>peak ratio</th><th>best</th></tr>\n");
        for (uint32_t p = 0; p < np; p++) {
            if (P[p].n_span)
                snprintf(a, sizeof a, "%.3f (%u)", exp(P[p].log_span / P[p].n_span),
                         P[p].n_span);
            else
                snprintf(a, sizeof a, "-");
            if (P[p].n_mem)
                snprintf(b, sizeof b, "%.3f (%u)", exp(P[p].log_mem / P[p].n_mem),
                         P[p].n_mem);
            else
                snprintf(b, sizeof b, "-");
            fprintf(f, "<tr><td>");
            html_text(f, P[p].name);
            fprintf(f, "</td><td>%s</td><td>%u</td><td>%s</td><td>%u</td></tr>\n", a,
                    P[p].best_span, b, P[p].best_mem);
        }
        fprintf(f, "</table>\n");
        free(P);
    }
    for (uint32_t k = 0; k < S->n_wl; k++) {
        const struct wl *W = &S->wl[k];
        struct scale ts = time_scale(W), ms = mem_scale(W);
        fprintf(f, "<h3 id=\"w-%u\">", k);
        html_text(f, W->name);
        fprintf(f, "</h3>\n<table class=\"sum\"><tr><th>policy</th><th>makespan</th>"
                   "<th>&times; ");
        html_text(f, S->vs);
        fprintf(f, "</th><th>above bound</th><th>peak</th><th>&times; ");
        html_text(f, S->vs);
        fprintf(f, "</th><th>exposed</th></tr>\n");
        for (uint32_t i = 0; i < W->n; i++) {
            const struct entry *x = &W->e[i];
            fprintf(f, "<tr><td>");
            html_text(f, G(S, x->row, S->c.s));
            if (!x->ok) {
                fprintf(f, "</td><td colspan=\"6\" class=\"bad\">");
                html_text(f, G(S, x->row, S->c.status));
                fprintf(f, "</td></tr>\n");
                continue;
            }
            snprintf(a, sizeof a, "%.4g %s", x->span / ts.div, ts.name);
            ratio_str(b, sizeof b, x->r_span);
            if (isnan(x->gap))
                snprintf(c, sizeof c, "-");
            else
                snprintf(c, sizeof c, "+%.1f%%", x->gap);
            if (x->mem_known)
                snprintf(d, sizeof d, "%.4g %s", x->mem / ms.div, ms.name);
            else
                snprintf(d, sizeof d, "unknown");
            ratio_str(g, sizeof g, x->r_mem);
            snprintf(h, sizeof h, "%.4g %s", x->exp / ts.div, ts.name);
            int bs = x->span == W->best_span, bm = x->mem_known && x->mem == W->best_mem;
            fprintf(f, "</td><td%s>%s</td><td>%s</td><td>%s</td><td%s>%s</td><td>%s</td>"
                       "<td>%s</td></tr>\n", bs ? " class=\"best\"" : "", a, b, c,
                    bm ? " class=\"best\"" : "", d, g, h);
        }
        fprintf(f, "</table>\n<p class=\"best\">");
        if (isfinite(W->best_span)) {
            best_list(S, W, 0, best, sizeof best);
            fprintf(f, "best makespan: <b>");
            html_text(f, best);
            fprintf(f, "</b> (%.4g %s)", W->best_span / ts.div, ts.name);
        }
        if (isfinite(W->best_mem)) {
            best_list(S, W, 1, best, sizeof best);
            fprintf(f, "; best peak: <b>");
            html_text(f, best);
            fprintf(f, "</b> (%.4g %s)", W->best_mem / ms.div, ms.name);
        } else if (isfinite(W->best_span))
            fprintf(f, "; peak memory not measured (no tensor sizes)");
        fprintf(f, "</p>\n");
    }
}

int sb_summary_html(const char *results, const char *vs, const char *workload, FILE *f,
                    struct sb_err *e)
{
    struct sum_opts o = {.results = results, .vs = vs, .workload = workload, .format = "text"};
    struct summary S;
    if (summary_load(&S, &o, e))
        return -1;
    print_html(&S, f);
    summary_free(&S);
    return 0;
}

/* ---- command --------------------------------------------------------------------- */

int sb_summary_print(const char *results, FILE *f, struct sb_err *e)
{
    struct sum_opts o = {.results = results, .format = "text"};
    struct summary S;
    if (summary_load(&S, &o, e))
        return -1;
    print_text(&S, f);
    summary_free(&S);
    return 0;
}

static int summary_help(void)
{
    printf("usage: schedbench summary RESULTS.csv [--vs POLICY] [--workload W]\n"
           "                          [--format text|json|csv] [--devices]\n"
           "\n"
           "Per workload, each policy's makespan and peak memory with their ratio to\n"
           "POLICY (default original; a name matches its parameterised runs too), how\n"
           "far the makespan is above its lower bound, exposed communication, and the\n"
           "best policy by makespan and by peak (ties all named).  Across workloads, per\n"
           "policy: the geometric mean of each ratio (over the workloads that have one)\n"
           "and how many times it was best.  A peak that was not measured (a trace\n"
           "without tensor sizes) reads 'unknown', never 0.\n"
           "\n"
           "  --vs POLICY      ratios against POLICY instead of original\n"
           "  --workload W     only W\n"
           "  --format F       text (default), json, or csv (one row per results row)\n"
           "  --devices        each row's per-device peaks (dev_peak_bytes), one row per\n"
           "                   device: workload,scheduler,device,peak_mem_bytes (csv, the\n"
           "                   default here, or json)\n");
    return 0;
}

int sb_cmd_summary(int argc, char **argv)
{
    struct sum_opts o = {.format = NULL};
    struct sb_err e;
    static const char *const flags[] = {"--vs", "--workload", "--format", "--devices",
                                        "--help"};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h"))
            return summary_help();
        if (!strcmp(a, "--vs") && v)
            o.vs = argv[++i];
        else if (!strcmp(a, "--workload") && v)
            o.workload = argv[++i];
        else if (!strcmp(a, "--format") && v) {
            o.format = argv[++i];
            if (strcmp(o.format, "text") && strcmp(o.format, "json") && strcmp(o.format, "csv")) {
                fprintf(stderr, "schedbench summary: --format is text, json or csv\n");
                return 2;
            }
        } else if (!strcmp(a, "--devices"))
            o.devices = 1;
        else if (a[0] != '-' && !o.results)
            o.results = a;
        else {
            const char *near = a[0] == '-' ? sb_did_you_mean(a, flags, 5) : NULL;
            fprintf(stderr, "schedbench summary: unexpected argument '%s'%s%s%s\n", a,
                    near ? " (did you mean '" : "", near ? near : "", near ? "'?)" : "");
            return 2;
        }
    }
    if (!o.results) {
        fprintf(stderr, "usage: schedbench summary RESULTS.csv [--vs POLICY] [--format "
                        "text|json|csv] [--devices]\n");
        return 2;
    }
    if (!o.format)
        o.format = o.devices ? "csv" : "text";
    if (o.devices && !strcmp(o.format, "text")) {
        fprintf(stderr, "schedbench summary: --devices prints csv or json\n");
        return 2;
    }
    struct summary S;
    if (summary_load(&S, &o, &e)) {
        fprintf(stderr, "schedbench summary: %s\n", e.msg);
        return 2;
    }
    int rc = 0;
    if (o.devices)
        rc = print_devices(&S, &o, stdout, &e);
    else if (!strcmp(o.format, "json"))
        print_json(&S, &o, stdout);
    else if (!strcmp(o.format, "csv"))
        print_csv(&S, stdout);
    else
        print_text(&S, stdout);
    if (rc)
        fprintf(stderr, "schedbench summary: %s\n", e.msg);
    summary_free(&S);
    return rc ? 2 : 0;
}
