/* `schedbench summary RESULTS.csv`: the answer at a glance.
 *
 * Per workload, one line per policy: makespan and peak memory with their
 * ratios to a reference policy (`original`, or --vs POLICY), the distance of
 * the makespan above its lower bound, exposed communication, whether it fits
 * its devices' memory; then the best policy by makespan (marked when it does
 * not fit), the fastest that fits, and the best by peak.  Across workloads,
 * per policy: the geometric mean of both ratios and how often it was best,
 * counting only the rows that fit unless --include-over-capacity: a schedule
 * that cannot run on its machine is no answer, however fast.  `run` prints
 * the same at the end of a sweep unless --quiet.
 *
 * --format json and csv give the same figures to programs; --devices gives
 * each row's per-device peaks (dev_peak_bytes, "a;b;...") in long format, one
 * row per device, which pandas reads without splitting strings. */
#define _POSIX_C_SOURCE 200809L
#include "commands.h"
#include "table.h"
#include "core/escape.h"

#include <jansson.h>
#include <math.h>
#include <string.h>

struct sum_opts {
    const char *results, *vs, *workload, *format;
    int devices;
    int all_rows; /* --include-over-capacity: rank rows that do not fit too */
};

struct cols {
    int w, s, status, span, mem, exp, gap, dev_peak;
    int over, limit; /* over_capacity, mem_limit_bytes; -1 in older files */
    int lb, compute, comm, model; /* makespan_lb_us, compute_us, comm_us, cost_model */
    int cost;                     /* cost_params (-1 in files from before it) */
    int exp_mean; /* exposed_comm_mean_us: set on a job of ranks (-1 before it) */
};

/* Policies whose order replays a runtime's issue rule rather than one a
 * compiler could emit: `ready` is ASTRA-sim's workload layer (docs/ready.md).
 * Marked apart in summary and the report (issue 38, item 11). */
static const char *const replay_policies[] = {"ready"};

static int is_replay(const char *sched)
{
    size_t n = strcspn(sched, ":");
    for (size_t i = 0; i < sizeof replay_policies / sizeof replay_policies[0]; i++)
        if (strlen(replay_policies[i]) == n && !strncmp(sched, replay_policies[i], n))
            return 1;
    return 0;
}

/* A bound within this fraction of a total is said to be that total's: the
 * rest is the few microseconds of critical path before or after it. */
#define SB_BOUND_NEAR 0.01


/* A figure in plain decimals with thousands separators (table.h's
 * sb_num_str); four buffers in turn, so one printf can hold four of them.
 * Commands are single-threaded. */
static const char *num(double v)
{
    static char buf[4][64];
    static unsigned k;
    k = (k + 1) % 4;
    return sb_num_str(buf[k], sizeof buf[k], v);
}

/* One ok or failed row of a workload, with its ratios to the reference. */
struct entry {
    uint32_t row;
    int ok, mem_known;
    double span, mem, exp, gap; /* gap NaN when no bound */
    double r_span, r_mem;       /* NaN when there is nothing to divide by */
    long n_over;                /* devices over capacity; -1 unknown (table.h) */
    int fits;                   /* 1 fits, 0 does not, -1 unknown or not ok */
    double limit;               /* mem_limit_bytes, NaN when the policy had none */
    int over_limit;             /* peak above limit: 1, 0, -1 no limit or peak unknown */
};

struct wl {
    const char *name;
    uint32_t n;
    struct entry *e;
    int ref;                 /* index into e of the reference, -1 */
    double best_span, best_mem;  /* over every ok row */
    double fit_span;         /* the fastest row that fits; INFINITY when none does */
    int fit_known;           /* some ok row's fit is known */
    double rank_span, rank_mem;  /* best over the rows the ranking counts */
};

struct summary {
    struct sb_table t;
    struct cols c;
    uint32_t n_wl;
    struct wl *wl;
    struct entry *entries;   /* [rows] every workload's entries, wl[k].e a slice */
    const char *vs;
    int all_rows;
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
    struct sb_strmap names; /* the distinct values, in a hash: linear in the rows */
    sb_strmap_init(&names);
    for (uint32_t r = 0; r < S->t.n_rows; r++)
        sb_strmap_put(&names, G(S, r, c));
    const char *near = sb_did_you_mean(want, names.key, names.n);
    sb_strmap_free(&names);
    return near;
}

/* Whether row x fits its devices' memory (over_capacity), and whether its
 * peak passed the limit its policy was given (mem_limit_bytes): a policy
 * that overshoots its own limit is not doing what it was asked. */
static void fit_of(const struct summary *S, struct entry *x)
{
    x->n_over = x->ok ? sb_results_over(&S->t, x->row, S->c.over) : -1;
    x->fits = x->n_over < 0 ? -1 : x->n_over == 0;
    x->limit = field_num(G(S, x->row, S->c.limit));
    x->over_limit = x->mem_known && !isnan(x->limit) ? x->mem > x->limit : -1;
}

/* Whether the ranking across workloads counts row x: every ok row with
 * --include-over-capacity, else only those not known to overflow a device
 * (a file from before placement has no capacity to hold them to). */
static int ranked(const struct summary *S, const struct entry *x)
{
    return x->ok && (S->all_rows || x->fits != 0);
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
    c->over = sb_table_col(&S->t, "over_capacity");
    c->limit = sb_table_col(&S->t, "mem_limit_bytes");
    c->lb = sb_table_col(&S->t, "makespan_lb_us");
    c->compute = sb_table_col(&S->t, "compute_us");
    c->comm = sb_table_col(&S->t, "comm_us");
    c->model = sb_table_col(&S->t, "cost_model");
    c->cost = sb_table_col(&S->t, "cost_params");
    c->exp_mean = sb_table_col(&S->t, "exposed_comm_mean_us");
    S->all_rows = o->all_rows;
    if (c->w < 0 || c->s < 0 || c->status < 0 || c->span < 0 || c->mem < 0 || c->exp < 0) {
        sb_table_free(&S->t);
        return sb_errf(e, "%s:1: not a schedbench results file (missing columns)", o->results);
    }
    /* a (workload, scheduler) row twice would count twice: refused, as
     * compare refuses it */
    if (sb_results_check_unique(&S->t, c->w, c->s, e)) {
        sb_table_free(&S->t);
        return -1;
    }
    /* pass 1: the workloads in the order first seen, and each one's rows;
     * pass 2: each row's entry in its workload's slice of one array (the
     * memory is rows, not rows x workloads, and no name is searched for) */
    struct sb_strmap names;
    uint32_t *wl_of = sb_xmalloc(((size_t)S->t.n_rows + 1) * sizeof *wl_of);
    sb_strmap_init(&names);
    for (uint32_t r = 0; r < S->t.n_rows; r++) {
        const char *w = G(S, r, c->w);
        wl_of[r] = o->workload && strcmp(o->workload, w) ? UINT32_MAX : sb_strmap_put(&names, w);
    }
    S->n_wl = names.n;
    S->wl = sb_xcalloc((size_t)S->n_wl + 1, sizeof *S->wl);
    S->entries = sb_xcalloc((size_t)S->t.n_rows + 1, sizeof *S->entries);
    for (uint32_t r = 0; r < S->t.n_rows; r++)
        if (wl_of[r] != UINT32_MAX)
            S->wl[wl_of[r]].n++;
    for (uint32_t k = 0, at = 0; k < S->n_wl; k++) {
        S->wl[k].name = names.key[k];
        S->wl[k].e = S->entries + at;
        S->wl[k].ref = -1;
        at += S->wl[k].n;
        S->wl[k].n = 0; /* counted again as the entries are filled */
    }
    sb_strmap_free(&names);
    for (uint32_t r = 0; r < S->t.n_rows; r++) {
        if (wl_of[r] == UINT32_MAX)
            continue;
        struct wl *W = &S->wl[wl_of[r]];
        struct entry *x = &W->e[W->n++];
        x->row = r;
        x->ok = !strcmp(G(S, r, c->status), "ok");
        x->span = field_num(G(S, r, c->span));
        x->mem = field_num(G(S, r, c->mem));
        x->mem_known = x->ok && !isnan(x->mem);
        x->exp = field_num(G(S, r, c->exp));
        x->gap = field_num(G(S, r, c->gap));
        x->ok = x->ok && !isnan(x->span);
        fit_of(S, x);
    }
    free(wl_of);
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
        W->best_span = W->best_mem = W->fit_span = W->rank_span = W->rank_mem = INFINITY;
        for (uint32_t i = 0; i < W->n; i++) {
            struct entry *x = &W->e[i];
            x->r_span = x->r_mem = NAN;
            if (!x->ok)
                continue;
            W->best_span = fmin(W->best_span, x->span);
            if (x->mem_known)
                W->best_mem = fmin(W->best_mem, x->mem);
            W->fit_known |= x->fits >= 0;
            if (x->fits == 1)
                W->fit_span = fmin(W->fit_span, x->span);
            if (ranked(S, x)) {
                W->rank_span = fmin(W->rank_span, x->span);
                if (x->mem_known)
                    W->rank_mem = fmin(W->rank_mem, x->mem);
            }
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
    free(S->entries);
    free(S->wl);
    sb_table_free(&S->t);
}

/* The bests of a workload: makespan and peak over every ok row, and the
 * makespan over the rows that fit. */
enum best { BEST_SPAN, BEST_MEM, BEST_FIT };

static int is_best(const struct wl *W, const struct entry *x, enum best b)
{
    if (!x->ok)
        return 0;
    if (b == BEST_MEM)
        return x->mem_known && x->mem == W->best_mem;
    if (b == BEST_FIT)
        return x->fits == 1 && x->span == W->fit_span;
    return x->span == W->best_span;
}

/* The schedulers that reach the best value of a workload, comma separated;
 * returns how many. */
static uint32_t best_list(const struct summary *S, const struct wl *W, enum best b, char *buf,
                          size_t n)
{
    size_t len = 0;
    uint32_t k = 0;
    buf[0] = 0;
    for (uint32_t i = 0; i < W->n; i++) {
        const struct entry *x = &W->e[i];
        if (!is_best(W, x, b))
            continue;
        k++;
        if (len + 4 < n)
            len += (size_t)snprintf(buf + len, n - len, "%s%s", len ? ", " : "",
                                    G(S, x->row, S->c.s));
    }
    return k;
}

/* ---- across workloads: per policy ------------------------------------------- */

struct policy {
    const char *name;
    uint32_t n_span, n_mem;     /* workloads with a ratio */
    double log_span, log_mem;   /* sums of log ratios */
    uint32_t best_span, best_mem;
    uint32_t n_unfit;           /* ok rows that do not fit, counted or not */
};

static uint32_t policies(const struct summary *S, struct policy *P)
{
    struct sb_strmap names; /* policy p is the p-th name seen: no search per row */
    sb_strmap_init(&names);
    for (uint32_t k = 0; k < S->n_wl; k++) {
        const struct wl *W = &S->wl[k];
        for (uint32_t i = 0; i < W->n; i++) {
            const struct entry *x = &W->e[i];
            const char *s = G(S, x->row, S->c.s);
            uint32_t n = names.n, p = sb_strmap_put(&names, s);
            if (p == n)
                memset(&P[p], 0, sizeof *P), P[p].name = s;
            P[p].n_unfit += x->ok && x->fits == 0;
            if (!ranked(S, x))
                continue;
            if (x->r_span > 0)
                P[p].n_span++, P[p].log_span += log(x->r_span);
            if (x->r_mem > 0)
                P[p].n_mem++, P[p].log_mem += log(x->r_mem);
            P[p].best_span += x->span == W->rank_span;
            P[p].best_mem += x->mem_known && x->mem == W->rank_mem;
        }
    }
    uint32_t n = names.n;
    sb_strmap_free(&names);
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

/* A row's fits cell: yes, NO (n devices over), or - when unknown; then
 * whether its peak passed the limit its own policy was given. */
static void fits_str(const struct entry *x, struct scale ms, char *buf, size_t n)
{
    int k = snprintf(buf, n, "%s", x->fits < 0 ? "-" : x->fits ? "yes" : "NO");
    if (x->fits == 0)
        k += snprintf(buf + k, n - (size_t)k, " (%ld device%s over)", x->n_over,
                      x->n_over == 1 ? "" : "s");
    if (x->over_limit == 1)
        snprintf(buf + k, n - (size_t)k, ", above its own limit (%s %s)", num(x->limit / ms.div),
                 ms.name);
}

/* What follows the best makespan's "(time": its peak when it is one row whose
 * fit is known, then ")" and whether it fits; nothing more when no capacity is
 * known.  Of tied rows, each one that does not fit is named.  Returns whether
 * they all fit, when the fastest that fit are the same rows. */
static int best_fit_note(const struct summary *S, const struct wl *W, struct scale ms,
                          char *buf, size_t n)
{
    uint32_t n_tied = 0, n_fit = 0, n_unfit = 0;
    const struct entry *one = NULL;
    for (uint32_t i = 0; i < W->n; i++) {
        const struct entry *x = &W->e[i];
        if (!is_best(W, x, BEST_SPAN))
            continue;
        n_tied++, n_fit += x->fits == 1, n_unfit += x->fits == 0;
        one = x;
    }
    size_t k = 0;
    buf[0] = 0;
    if (n_tied == 1 && one->fits >= 0 && one->mem_known)
        k += (size_t)snprintf(buf, n, ", %s %s", num(one->mem / ms.div), ms.name);
    k += (size_t)snprintf(buf + k, n - k, ")%s", n_fit == n_tied ? ": fits" : "");
    int first = 1;
    for (uint32_t i = 0; i < W->n && n_unfit && k + 300 < n; i++) {
        const struct entry *x = &W->e[i];
        if (!is_best(W, x, BEST_SPAN) || x->fits != 0)
            continue;
        char note[80];
        sb_fit_note(note, sizeof note, x->n_over);
        k += (size_t)snprintf(buf + k, n - k, "%s%.200s%s%s", first ? ": " : "; ",
                              n_tied > 1 ? G(S, x->row, S->c.s) : "", n_tied > 1 ? " " : "",
                              note);
        first = 0;
    }
    return n_fit == n_tied;
}

/* The fastest rows that fit: their names, and " (time[, peak])" in figures;
 * or "none" and why.  Both empty when no row's fit is known. */
static void fit_line(const struct summary *S, const struct wl *W, struct scale ts,
                     struct scale ms, char *names, size_t n_names, char *figures,
                     size_t n_figures)
{
    names[0] = figures[0] = 0;
    if (!W->fit_known)
        return;
    if (!isfinite(W->fit_span)) {
        snprintf(names, n_names, "none");
        snprintf(figures, n_figures, " (no schedule fits its devices' memory)");
        return;
    }
    const struct entry *one = NULL;
    if (best_list(S, W, BEST_FIT, names, n_names) == 1)
        for (uint32_t i = 0; i < W->n; i++)
            if (is_best(W, &W->e[i], BEST_FIT))
                one = &W->e[i];
    if (one && one->mem_known)
        snprintf(figures, n_figures, " (%s %s, %s %s)", num(W->fit_span / ts.div), ts.name,
                 num(one->mem / ms.div), ms.name);
    else
        snprintf(figures, n_figures, " (%s %s)", num(W->fit_span / ts.div), ts.name);
}

/* What produced a workload's figures and what limits them: the cost model of
 * its rows, and the lower bound with the term it is within SB_BOUND_NEAR of
 * (the collectives' total time on one resource, the compute total on one
 * device), else the critical path or a window of a resource. The results
 * file records the model's name, not its bandwidth and latency: those are
 * the run's cost_params column (files from before it: "the run's --cost"). */
static void bound_str(const struct summary *S, const struct wl *W, struct scale ts, char *buf,
                      size_t n)
{
    const struct entry *x = NULL;
    for (uint32_t i = 0; i < W->n && !x; i++)
        if (W->e[i].ok)
            x = &W->e[i];
    if (!x || S->c.lb < 0) {
        snprintf(buf, n, "%s", "");
        return;
    }
    double lb = field_num(G(S, x->row, S->c.lb)), comm = field_num(G(S, x->row, S->c.comm)),
           comp = field_num(G(S, x->row, S->c.compute));
    const char *model = S->c.model >= 0 ? G(S, x->row, S->c.model) : "";
    const char *term = !(lb > 0) ? "no bound"
                       : comm >= lb * (1 - SB_BOUND_NEAR) && comm <= lb * (1 + SB_BOUND_NEAR)
                           ? "communication binds: the "
                                                             "collectives' total time"
                       : comp >= lb * (1 - SB_BOUND_NEAR) && comp <= lb * (1 + SB_BOUND_NEAR)
                           ? "compute binds: the compute total"
                           : "the critical path or a resource's busiest window binds";
    const char *cost = S->c.cost >= 0 ? G(S, x->row, S->c.cost) : NULL;
    /* a job of ranks reports its times per rank (run.c, rank_figures) */
    int per_rank = S->c.exp_mean >= 0 && *G(S, x->row, S->c.exp_mean);
    snprintf(buf, n, "lower bound %s %s (%s); cost model %s (%s%s)", num(lb / ts.div), ts.name,
             term, *model ? model : "?", cost ? (*cost ? cost : "no collective parameters")
                                              : "bandwidth and latency: the run's --cost",
             per_rank ? "); a job of ranks: exposed communication, compute and "
                        "communication are per rank (the most over its ranks; the mean in "
                        "the *_mean_us columns" : "");
}

static void print_text(const struct summary *S, FILE *f)
{
    char a[64], b[64], c[64], d[64], g[64], h[64], fit[128], best[1024], note[1024], xvs[80];
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
        bound_str(S, W, ts, note, sizeof note);
        if (*note)
            fprintf(f, "  %s\n", note);
        if (W->ref < 0)
            fprintf(f, "  (no ok '%s' row: no ratios)\n", S->vs);
        /* two spaces between columns: a wide figure still stands apart */
        fprintf(f, "  %-*s  %12s  %*s  %11s  %12s  %*s  %12s  %s\n", sw, "policy", "makespan",
                rw, xvs, "above bound", "peak", rw, xvs, "exposed", "fits");
        for (uint32_t i = 0; i < W->n; i++) {
            const struct entry *x = &W->e[i];
            const char *s = G(S, x->row, S->c.s);
            if (!x->ok) {
                fprintf(f, "  %-*s %s\n", sw, s, G(S, x->row, S->c.status));
                continue;
            }
            snprintf(a, sizeof a, "%s %s", num(x->span / ts.div), ts.name);
            ratio_str(b, sizeof b, x->r_span);
            if (isnan(x->gap))
                snprintf(c, sizeof c, "-");
            else
                snprintf(c, sizeof c, "+%.1f%%", x->gap);
            if (x->mem_known)
                snprintf(d, sizeof d, "%s %s", num(x->mem / ms.div), ms.name);
            else
                snprintf(d, sizeof d, "unknown");
            ratio_str(g, sizeof g, x->r_mem);
            snprintf(h, sizeof h, "%s %s", num(x->exp / ts.div), ts.name);
            fits_str(x, ms, fit, sizeof fit);
            fprintf(f, "  %-*s  %12s  %*s  %11s  %12s  %*s  %12s  %s%s\n", sw, s, a, rw, b, c,
                    d, rw, g, h, fit, is_replay(s) ? "  (replay, not a compiler's order)" : "");
        }
        if (isfinite(W->best_span)) {
            best_list(S, W, BEST_SPAN, best, sizeof best);
            int all_fit = best_fit_note(S, W, ms, note, sizeof note);
            fprintf(f, "  best makespan:     %s (%s %s%s\n", best, num(W->best_span / ts.div),
                    ts.name, note);
            fit_line(S, W, ts, ms, best, sizeof best, note, sizeof note);
            if (*best && !all_fit) /* else the line above has said it */
                fprintf(f, "  fastest that fits: %s%s\n", best, note);
        }
        if (isfinite(W->best_mem)) {
            best_list(S, W, BEST_MEM, best, sizeof best);
            fprintf(f, "  best peak:         %s (%s %s)\n", best, num(W->best_mem / ms.div),
                    ms.name);
        } else if (isfinite(W->best_span))
            fprintf(f, "  best peak:         unknown (peak memory not measured: no tensor "
                       "sizes)\n");
    }
    if (S->n_wl < 2)
        return;
    struct policy *P = sb_xcalloc(S->t.n_rows + 1, sizeof *P);
    uint32_t np = policies(S, P);
    fprintf(f, "\nacross %u workloads: geometric mean of the ratios to %s (over how many\n"
               "workloads), and how many times each policy was best%s\n", S->n_wl, S->vs,
            S->c.over < 0 ? "" /* a file from before placement: nothing to say */
            : S->all_rows ? ";\nevery row counts, those that do not fit their devices' memory too"
                          : ";\nonly rows that fit their devices' memory count "
                            "(--include-over-capacity counts all)");
    fprintf(f, "  %-*s %16s %5s %16s %5s %13s\n", sw, "policy", "makespan ratio", "best",
            "peak ratio", "best", "over capacity");
    for (uint32_t p = 0; p < np; p++) {
        if (P[p].n_span)
            snprintf(a, sizeof a, "%.3f (%u)", exp(P[p].log_span / P[p].n_span), P[p].n_span);
        else
            snprintf(a, sizeof a, "-");
        if (P[p].n_mem)
            snprintf(b, sizeof b, "%.3f (%u)", exp(P[p].log_mem / P[p].n_mem), P[p].n_mem);
        else
            snprintf(b, sizeof b, "-");
        fprintf(f, "  %-*s %16s %5u %16s %5u %13u\n", sw, P[p].name, a, P[p].best_span, b,
                P[p].best_mem, P[p].n_unfit);
    }
    free(P);
}

/* ---- json and csv --------------------------------------------------------------- */

static json_t *jnum(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

/* true, false, or null when unknown */
static json_t *jbool(int v)
{
    return v < 0 ? json_null() : json_boolean(v);
}

static json_t *best_array(const struct summary *S, const struct wl *W, enum best b)
{
    json_t *a = json_array();
    for (uint32_t i = 0; i < W->n; i++)
        if (is_best(W, &W->e[i], b))
            json_array_append_new(a, sb_json_string(G(S, W->e[i].row, S->c.s)));
    return a;
}

static void print_json(const struct summary *S, const struct sum_opts *o, FILE *f)
{
    json_t *root = json_object(), *wls = json_array();
    json_object_set_new(root, "results", sb_json_string(o->results));
    json_object_set_new(root, "vs", sb_json_string(S->vs));
    json_object_set_new(root, "include_over_capacity", json_boolean(S->all_rows));
    for (uint32_t k = 0; k < S->n_wl; k++) {
        const struct wl *W = &S->wl[k];
        json_t *w = json_object(), *rows = json_array();
        json_object_set_new(w, "workload", sb_json_string(W->name));
        json_object_set_new(w, "best_makespan", best_array(S, W, BEST_SPAN));
        /* [] when none fits, null when no row's fit is known */
        json_object_set_new(w, "fastest_that_fits",
                            W->fit_known ? best_array(S, W, BEST_FIT) : json_null());
        json_object_set_new(w, "best_peak", best_array(S, W, BEST_MEM));
        for (uint32_t i = 0; i < W->n; i++) {
            const struct entry *x = &W->e[i];
            json_t *r = json_object();
            json_object_set_new(r, "scheduler", sb_json_string(G(S, x->row, S->c.s)));
            json_object_set_new(r, "status", sb_json_string(G(S, x->row, S->c.status)));
            json_object_set_new(r, "makespan_us", jnum(x->ok ? x->span : NAN));
            json_object_set_new(r, "peak_mem_bytes", jnum(x->mem_known ? x->mem : NAN));
            json_object_set_new(r, "exposed_comm_us", jnum(x->ok ? x->exp : NAN));
            json_object_set_new(r, "lb_gap_pct", jnum(x->ok ? x->gap : NAN));
            json_object_set_new(r, "makespan_ratio", jnum(x->r_span));
            json_object_set_new(r, "peak_ratio", jnum(x->r_mem));
            json_object_set_new(r, "fits", jbool(x->fits));
            json_object_set_new(r, "devices_over_capacity",
                                x->n_over < 0 ? json_null() : json_integer(x->n_over));
            json_object_set_new(r, "mem_limit_bytes", jnum(x->limit));
            json_object_set_new(r, "over_limit", jbool(x->over_limit));
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
        json_object_set_new(x, "scheduler", sb_json_string(P[p].name));
        json_object_set_new(x, "geomean_makespan_ratio",
                            jnum(P[p].n_span ? exp(P[p].log_span / P[p].n_span) : NAN));
        json_object_set_new(x, "workloads_with_makespan_ratio", json_integer(P[p].n_span));
        json_object_set_new(x, "geomean_peak_ratio",
                            jnum(P[p].n_mem ? exp(P[p].log_mem / P[p].n_mem) : NAN));
        json_object_set_new(x, "workloads_with_peak_ratio", json_integer(P[p].n_mem));
        json_object_set_new(x, "best_makespan", json_integer(P[p].best_span));
        json_object_set_new(x, "best_peak", json_integer(P[p].best_mem));
        json_object_set_new(x, "workloads_over_capacity", json_integer(P[p].n_unfit));
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
                                       "best_peak", "fits", "over_limit",
                                       "fastest_that_fits", NULL};
    for (int i = 0; head[i]; i++)
        sb_csv_field(f, head[i], i == 0);
    sb_csv_end(f);
    for (uint32_t k = 0; k < S->n_wl; k++) {
        const struct wl *W = &S->wl[k];
        for (uint32_t i = 0; i < W->n; i++) {
            const struct entry *x = &W->e[i];
            /* names and statuses: for a spreadsheet (escape.h) */
            sb_csv_sheet_field(f, W->name, 1);
            sb_csv_sheet_field(f, G(S, x->row, S->c.s), 0);
            sb_csv_sheet_field(f, G(S, x->row, S->c.status), 0);
            csv_num(f, x->ok ? x->span : NAN, "%.3f");
            csv_num(f, x->mem_known ? x->mem : NAN, "%.0f");
            csv_num(f, x->ok ? x->exp : NAN, "%.3f");
            csv_num(f, x->ok ? x->gap : NAN, "%.3f");
            csv_num(f, x->r_span, "%.6f");
            csv_num(f, x->r_mem, "%.6f");
            sb_csv_fieldf(f, 0, "%d", is_best(W, x, BEST_SPAN));
            sb_csv_fieldf(f, 0, "%d", is_best(W, x, BEST_MEM));
            /* 1, 0, or empty when unknown */
            sb_csv_field(f, x->fits < 0 ? "" : x->fits ? "1" : "0", 0);
            sb_csv_field(f, x->over_limit < 0 ? "" : x->over_limit ? "1" : "0", 0);
            sb_csv_fieldf(f, 0, "%d", is_best(W, x, BEST_FIT));
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
                    json_object_set_new(r, "workload", sb_json_string(S->wl[k].name));
                    json_object_set_new(r, "scheduler", sb_json_string(G(S, x->row, S->c.s)));
                    json_object_set_new(r, "device", json_integer(d));
                    json_object_set_new(r, "peak_mem_bytes", json_integer((json_int_t)v));
                    json_array_append_new(arr, r);
                } else {
                    sb_csv_sheet_field(f, S->wl[k].name, 1);
                    sb_csv_sheet_field(f, G(S, x->row, S->c.s), 0);
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

static void print_html(const struct summary *S, FILE *f)
{
    char a[64], b[64], c[64], d[64], g[64], h[64], fit[128], best[1024], note[1024];
    /* across workloads first: the answer at a glance, then the detail */
    if (S->n_wl >= 2) {
        struct policy *P = sb_xcalloc(S->t.n_rows + 1, sizeof *P);
        uint32_t np = policies(S, P);
        fprintf(f, "<h3>across %u workloads</h3>\n<p>Geometric mean of the ratios to ",
                S->n_wl);
        sb_html_text(f, S->vs);
        fprintf(f, " (over how many workloads), and how many times each policy was best%s.</p>\n"
                   "<table class=\"sum\"><tr><th>policy</th><th>makespan ratio</th><th>best</th>"
                   "<th>peak ratio</th><th>best</th><th>over capacity</th></tr>\n",
                S->c.over < 0 ? ""
                : S->all_rows ? "; every row counts, those that do not fit their devices' "
                                "memory too"
                              : "; only rows that fit their devices' memory count "
                                "(<code>--include-over-capacity</code> counts all)");
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
            sb_html_text(f, P[p].name);
            fprintf(f, "</td><td>%s</td><td>%u</td><td>%s</td><td>%u</td><td>%u</td></tr>\n",
                    a, P[p].best_span, b, P[p].best_mem, P[p].n_unfit);
        }
        fprintf(f, "</table>\n");
        free(P);
    }
    for (uint32_t k = 0; k < S->n_wl; k++) {
        const struct wl *W = &S->wl[k];
        struct scale ts = time_scale(W), ms = mem_scale(W);
        fprintf(f, "<h3 id=\"w-%u\">", k);
        sb_html_text(f, W->name);
        fprintf(f, "</h3>\n");
        bound_str(S, W, ts, note, sizeof note);
        if (*note) {
            fprintf(f, "<p class=\"bound\">");
            sb_html_text(f, note);
            fprintf(f, "</p>\n");
        }
        fprintf(f, "<table class=\"sum\"><tr><th>policy</th><th>makespan</th>"
                   "<th>&times; ");
        sb_html_text(f, S->vs);
        fprintf(f, "</th><th>above bound</th><th>peak</th><th>&times; ");
        sb_html_text(f, S->vs);
        fprintf(f, "</th><th>exposed</th><th>fits</th></tr>\n");
        for (uint32_t i = 0; i < W->n; i++) {
            const struct entry *x = &W->e[i];
            fprintf(f, "<tr><td>");
            sb_html_text(f, G(S, x->row, S->c.s));
            if (is_replay(G(S, x->row, S->c.s)))
                fprintf(f, " <span class=\"n\" title=\"replays a runtime's issue rule "
                           "(docs/ready.md), not an order a compiler could emit\">(replay)"
                           "</span>");
            if (!x->ok) {
                fprintf(f, "</td><td colspan=\"7\" class=\"bad\">");
                sb_html_text(f, G(S, x->row, S->c.status));
                fprintf(f, "</td></tr>\n");
                continue;
            }
            snprintf(a, sizeof a, "%s %s", num(x->span / ts.div), ts.name);
            ratio_str(b, sizeof b, x->r_span);
            if (isnan(x->gap))
                snprintf(c, sizeof c, "-");
            else
                snprintf(c, sizeof c, "+%.1f%%", x->gap);
            if (x->mem_known)
                snprintf(d, sizeof d, "%s %s", num(x->mem / ms.div), ms.name);
            else
                snprintf(d, sizeof d, "unknown");
            ratio_str(g, sizeof g, x->r_mem);
            snprintf(h, sizeof h, "%s %s", num(x->exp / ts.div), ts.name);
            fits_str(x, ms, fit, sizeof fit);
            int bs = is_best(W, x, BEST_SPAN), bm = is_best(W, x, BEST_MEM);
            /* not fitting, or above its own limit: the cell is marked bad */
            int warn = x->fits == 0 || x->over_limit == 1;
            fprintf(f, "</td><td%s>%s</td><td>%s</td><td>%s</td><td%s>%s</td><td>%s</td>"
                       "<td>%s</td><td%s>%s</td></tr>\n", bs ? " class=\"best\"" : "", a, b, c,
                    bm ? " class=\"best\"" : "", d, g, h, warn ? " class=\"bad\"" : "", fit);
        }
        fprintf(f, "</table>\n<p class=\"best\">");
        if (isfinite(W->best_span)) {
            best_list(S, W, BEST_SPAN, best, sizeof best);
            fprintf(f, "best makespan: <b>");
            sb_html_text(f, best);
            int all_fit = best_fit_note(S, W, ms, note, sizeof note);
            fprintf(f, "</b> (%s %s", num(W->best_span / ts.div), ts.name);
            sb_html_text(f, note);
            fit_line(S, W, ts, ms, best, sizeof best, note, sizeof note);
            if (*best && !all_fit) {
                fprintf(f, "; fastest that fits: <b>");
                sb_html_text(f, best);
                fprintf(f, "</b>");
                sb_html_text(f, note);
            }
        }
        if (isfinite(W->best_mem)) {
            best_list(S, W, BEST_MEM, best, sizeof best);
            fprintf(f, "; best peak: <b>");
            sb_html_text(f, best);
            fprintf(f, "</b> (%s %s)", num(W->best_mem / ms.div), ms.name);
        } else if (isfinite(W->best_span))
            fprintf(f, "; peak memory not measured (no tensor sizes)");
        fprintf(f, "</p>\n");
    }
}

int sb_summary_html(const char *results, const char *vs, const char *workload, int all_rows,
                    FILE *f, struct sb_err *e)
{
    struct sum_opts o = {.results = results, .vs = vs, .workload = workload, .format = "text",
                         .all_rows = all_rows};
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
           "                          [--include-over-capacity]\n"
           "\n"
           "Per workload, each policy's makespan and peak memory with their ratio to\n"
           "POLICY (default original; a name matches its parameterised runs too), how\n"
           "far the makespan is above its lower bound, exposed communication, and\n"
           "whether it fits: 'yes', 'NO (n devices over)' when its peak exceeds the\n"
           "memory of n devices (column over_capacity), '-' when the results file does\n"
           "not say; 'above its own limit' when the peak passed the limit the policy\n"
           "itself was given (column mem_limit_bytes).  Then the best policy by makespan,\n"
           "marked 'does NOT fit' when it does not, the fastest that fits (or none),\n"
           "and the best by peak (ties all named).  Across workloads, per policy: the\n"
           "geometric mean of each ratio (over the workloads that have one), how many\n"
           "times it was best and how many of its rows do not fit; rows that do not fit\n"
           "are left out of the means and the counts of best (a schedule that cannot\n"
           "run is no answer), rows whose fit is unknown are kept.  A peak that was not\n"
           "measured (a trace without tensor sizes) reads 'unknown', never 0.\n"
           "\n"
           "  --vs POLICY      ratios against POLICY instead of original\n"
           "  --workload W     only W\n"
           "  --format F       text (default), json, or csv (one row per results row);\n"
           "                   each row has fits and over_limit (true/false, null when\n"
           "                   unknown; 1/0/empty in csv), each workload\n"
           "                   fastest_that_fits (json: [] none fits, null unknown)\n"
           "  --include-over-capacity\n"
           "                   count every ok row in the ranking across workloads, as\n"
           "                   before capacity was read, those that do not fit too\n"
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
                                        "--include-over-capacity", "--help"};
    struct sb_opt_seen once = {0};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h"))
            return summary_help();
        if (v && (!strcmp(a, "--vs") || !strcmp(a, "--workload") || !strcmp(a, "--format")) &&
            sb_opt_once(&once, "summary", a, v, &e)) {
            fprintf(stderr, "%s\n", e.msg);
            return 2;
        }
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
        else if (!strcmp(a, "--include-over-capacity"))
            o.all_rows = 1;
        else if (a[0] != '-' && !o.results)
            o.results = a;
        else {
            const char *near = a[0] == '-' ? sb_did_you_mean(a, flags, 6) : NULL;
            fprintf(stderr, "schedbench summary: unexpected argument '%s'%s%s%s\n", a,
                    near ? " (did you mean '" : "", near ? near : "", near ? "'?)" : "");
            return 2;
        }
    }
    if (!o.results) {
        fprintf(stderr, "usage: schedbench summary RESULTS.csv [--vs POLICY] [--format "
                        "text|json|csv] [--devices] [--include-over-capacity]\n");
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
