/* `schedbench compare BASE.csv NEW.csv`: the regression gate.
 *
 * Rows are matched by (workload, scheduler).  A matched pair of ok rows is
 * `regressed` when peak memory grew by more than --mem-tol percent, or makespan
 * or exposed communication grew by more than --time-tol percent of the base
 * makespan (exposed communication is measured against the makespan so that a
 * base of a few microseconds does not turn noise into a thousandfold change),
 * or when it no longer fits its devices' memory (over_capacity grew: a
 * schedule that cannot run is no improvement, however fast); `improved` when
 * something shrank past the same tolerances, or it fits again, and nothing
 * grew; `ok` otherwise.  A row only in BASE is `missing`, only in NEW is `new`; a row
 * whose NEW status is not ok is `error`.
 *
 * Exit: 0 nothing regressed, went missing or turned into an error; 1 otherwise;
 * 2 unusable input (file:line: message). */
#define _POSIX_C_SOURCE 200809L
#include "commands.h"

#include "table.h"
#include "core/escape.h"
#include "core/num.h"

#include <jansson.h>
#include <math.h>
#include <string.h>

enum verdict { V_OK, V_REGRESSED, V_IMPROVED, V_NEW, V_MISSING, V_ERROR, V_TRADEOFF, V_COUNT };
static const char *const verdict_names[V_COUNT] = {"ok",  "regressed", "improved", "new",
                                                   "missing", "error", "trade-off"};

enum metric { M_MEM, M_MAKESPAN, M_EXPOSED, M_COUNT };
static const char *const metric_cols[M_COUNT] = {"peak_mem_bytes", "makespan_us",
                                                 "exposed_comm_us"};
/* the names --metrics takes, and the gate's closing line uses */
static const char *const metric_keys[M_COUNT] = {"peak", "makespan", "exposed"};

struct side {
    struct sb_table t;
    int c_workload, c_scheduler, c_status, c_metric[M_COUNT];
    int c_over; /* over_capacity (placement); -1 in files from before it */
    int c_model; /* cost_model; -1 in files from before it */
    int c_id;    /* scheduler_id (build, effective parameters); -1 before it */
};

struct row {
    const char *workload, *scheduler;
    enum verdict v;
    int have_old, have_new;
    double old_v[M_COUNT], new_v[M_COUNT];
    long old_over, new_over; /* devices over their memory capacity; -1 unknown */
    const char *note; /* an error row's status, with its message */
    const char *fit_note; /* why the fit changed the verdict, or NULL */
    char params[240]; /* matched by policy name: how the parameters differ */
    int fails;        /* counts against the gate (exit 1) */
    int grew[M_COUNT]; /* gated metric grew past its tolerance */
    char ident[400];  /* how the build or effective parameters differ, or "" */
};

struct opts {
    double mem_tol_pct, time_tol_pct;
    const char *format;
    const char *base, *next;
    int changes_only;        /* print only rows whose verdict is not ok */
    int cross_model;         /* --cross-model: rows of two time models compare */
    const char *model_note;  /* what changed meaning, once models differ */
    const char *schedulers;  /* comma list: judge only these policies, or NULL */
    unsigned gated;          /* --metrics: bit m set when metric m is judged */
};

static int open_side(struct side *s, const char *path, struct sb_err *e)
{
    if (sb_table_read(&s->t, path, e))
        return -1;
    s->c_workload = sb_table_col(&s->t, "workload");
    s->c_scheduler = sb_table_col(&s->t, "scheduler");
    s->c_status = sb_table_col(&s->t, "status");
    s->c_over = sb_table_col(&s->t, "over_capacity");
    s->c_model = sb_table_col(&s->t, "cost_model");
    s->c_id = sb_table_col(&s->t, "scheduler_id");
    const char *missing = s->c_workload < 0    ? "workload"
                          : s->c_scheduler < 0 ? "scheduler"
                          : s->c_status < 0    ? "status"
                                               : NULL;
    for (int m = 0; m < M_COUNT; m++)
        if ((s->c_metric[m] = sb_table_col(&s->t, metric_cols[m])) < 0 && !missing)
            missing = metric_cols[m];
    if (missing) {
        sb_errf(e, "%s:1: missing column '%s'", path, missing);
        sb_table_free(&s->t);
        return -1;
    }
    return 0;
}

static const char *get(const struct side *s, uint32_t r, int c)
{
    return sb_table_get(&s->t, r, (uint32_t)c);
}

static int row_ok(const struct side *s, uint32_t r)
{
    return strcmp(get(s, r, s->c_status), "ok") == 0;
}

/* Reads the metrics of an ok row: decimal numbers within each column's range
 * (table.h), so no difference or percentage of two of them overflows. */
static int read_metrics(const struct side *s, uint32_t r, double *out, struct sb_err *e)
{
    for (int m = 0; m < M_COUNT; m++) {
        if (m == M_MEM && !*get(s, r, s->c_metric[m])) { /* a trace without tensor sizes: memory not measured */
            out[m] = 0;
            continue;
        }
        if (sb_table_decimal(&s->t, r, (uint32_t)s->c_metric[m],
                             m == M_MEM ? SB_RESULTS_MAX_BYTES : SB_RESULTS_MAX_US, m == M_MEM,
                             &out[m], e))
            return -1;
    }
    return 0;
}

/* Devices over their memory capacity; -1 when unknown: a file from before
 * placement has no column, a row that did not run an empty field.  Read
 * strictly, as the metrics: a malformed count is bad input, not a fit. */
static int read_over(const struct side *s, uint32_t r, long *out, struct sb_err *e)
{
    double v = 0;
    *out = -1;
    if (s->c_over < 0 || !*get(s, r, s->c_over))
        return 0;
    if (sb_table_decimal(&s->t, r, (uint32_t)s->c_over, 4294967295.0, 1, &v, e))
        return -1;
    *out = (long)v;
    return 0;
}

static int check_unique(const struct side *s, struct sb_err *e)
{
    return sb_results_check_unique(&s->t, s->c_workload, s->c_scheduler, e);
}

/* Pass 1 the fit, pass 2 each gated metric against its tolerance: peak
 * memory against --mem-tol % of the base peak, makespan and exposed
 * communication against --time-tol % of the base makespan.  A row whose
 * gated metrics moved both ways (one grew at all while another shrank past
 * its tolerance) is a trade-off: it fails when the growth is past its
 * tolerance, as a regression would (the gate cannot tell whether the trade
 * is wanted: a person refreshes the baseline), and passes within it. */
static enum verdict judge(struct row *x, const struct opts *o)
{
    double span = x->old_v[M_MAKESPAN] > 0 ? x->old_v[M_MAKESPAN] : 1;
    double tol[M_COUNT] = {o->mem_tol_pct / 100 * x->old_v[M_MEM], o->time_tol_pct / 100 * span,
                           o->time_tol_pct / 100 * span};
    /* pass 1: a placement that newly overflows a device cannot run, whatever
     * its time; a base that does not say (an older file) is held to fitting,
     * so that the gate stops at the first run that does not */
    long was = x->old_over > 0 ? x->old_over : 0, now = x->new_over > 0 ? x->new_over : 0;
    if (now > was) {
        x->fit_note = !was ? "no longer fits its devices' memory"
                           : "more devices over their memory capacity";
        x->fails = 1;
        return V_REGRESSED;
    }
    /* pass 2: the gated metrics */
    int grew = 0, grew_past = 0, shrank_past = now < was;
    for (int m = 0; m < M_COUNT; m++) {
        if (!(o->gated >> m & 1))
            continue;
        double d = x->new_v[m] - x->old_v[m];
        grew |= d > 0;
        x->grew[m] = d > tol[m];
        grew_past |= x->grew[m];
        shrank_past |= -d > tol[m];
    }
    if (now < was)
        x->fit_note = !now ? "fits its devices' memory now" : "fewer devices over capacity";
    if (grew && shrank_past) {
        x->fails = grew_past;
        return V_TRADEOFF;
    }
    if (grew_past) {
        x->fails = 1;
        return V_REGRESSED;
    }
    return shrank_past ? V_IMPROVED : V_OK;
}

/* Is the policy of a scheduler column ("name" or "name:k=v,...") in the
 * comma list? */
static int selected(const struct opts *o, const char *sched)
{
    if (!o->schedulers)
        return 1;
    size_t n = strcspn(sched, ":");
    for (const char *c = o->schedulers; *c;) {
        size_t len = strcspn(c, ",");
        if (len == n && !strncmp(c, sched, n))
            return 1;
        c += len + (c[len] == ',');
    }
    return 0;
}

/* A model in abstract units (XLA's approximate estimator) never compares with
 * a time model; two time models (the analytical model with simple or
 * ASTRA-sim collectives) compare when asked (--cross-model): that is how one
 * asks what a network model changes. */
static int is_time_model(const char *m)
{
    return strcmp(m, "approx") != 0;
}

static int same_model(const struct side *b, uint32_t rb, const struct side *n, uint32_t rn,
                      struct opts *o, struct sb_err *e)
{
    if (b->c_model < 0 || n->c_model < 0)
        return 0;
    const char *x = get(b, rb, b->c_model), *y = get(n, rn, n->c_model);
    if (!strcmp(x, y))
        return 0;
    if (o->cross_model && is_time_model(x) && is_time_model(y)) {
        if (!o->model_note)
            fprintf(stderr, "compare: --cross-model: %s is priced by '%s', %s by '%s': "
                            "makespan_us, exposed_comm_us and comm_us change meaning (the "
                            "collectives are priced by another model); peak_mem_bytes does "
                            "not (the memory model is the same)\n",
                    b->t.path, x, n->t.path, y);
        o->model_note = "cross-model";
        return 0;
    }
    if (is_time_model(x) && is_time_model(y))
        return sb_errf(e, "%s:%u: cost model '%s', but %s:%u has '%s' for workload '%s', "
                          "scheduler '%s': the collectives are priced by different models "
                          "(rerun with the same --cost-model and --comm, or pass "
                          "--cross-model to compare the two)", n->t.path, n->t.line[rn + 1],
                       y, b->t.path, b->t.line[rb + 1], x, get(b, rb, b->c_workload),
                       get(b, rb, b->c_scheduler));
    return sb_errf(e, "%s:%u: cost model '%s', but %s:%u has '%s' for workload '%s', "
                      "scheduler '%s': results in different units cannot be compared "
                      "(rerun with the same --cost-model)", n->t.path, n->t.line[rn + 1], y,
                   b->t.path, b->t.line[rb + 1], x, get(b, rb, b->c_workload),
                   get(b, rb, b->c_scheduler));
}

/* scheduler_id is "BUILD PARAMS" (PARAMS has no space): the note names
 * whichever differs, so that two builds of a plugin, or one with other
 * defaults, never pass as one */
static void ident_note(struct row *x, const char *a, const char *b)
{
    if (!strcmp(a, b))
        return;
    const char *pa = strrchr(a, ' '), *pb = strrchr(b, ' ');
    int la = pa ? (int)(pa - a) : (int)strlen(a), lb = pb ? (int)(pb - b) : (int)strlen(b);
    pa = pa ? pa + 1 : "", pb = pb ? pb + 1 : "";
    size_t len = 0;
    if (la != lb || strncmp(a, b, (size_t)la))
        len = (size_t)snprintf(x->ident, sizeof x->ident, "build %.*s -> %.*s", la > 120 ? 120 : la,
                               a, lb > 120 ? 120 : lb, b);
    if (strcmp(pa, pb) && len < sizeof x->ident)
        snprintf(x->ident + len, sizeof x->ident - len, "%seffective parameters %.120s -> %.120s",
                 len ? "; " : "", pa, pb);
}

static void param_note(struct row *x, const char *old_s, const char *new_s)
{
    const char *a = strchr(old_s, ':'), *b = strchr(new_s, ':');
    snprintf(x->params, sizeof x->params, "parameters %.100s -> %.100s", a ? a + 1 : "default",
             b ? b + 1 : "default");
}

/* The rows of both sides by name, for matching in linear time (table.h):
 * each workload, scheduler and policy name (a scheduler before any ':') has
 * one number across both files. */
struct names {
    struct sb_strmap str;
    char **policy;       /* policy names cut from scheduler columns, owned */
    uint32_t n_policy;
};

static uint32_t policy_of(struct names *N, const char *sched)
{
    size_t n = strcspn(sched, ":");
    if (!sched[n])
        return sb_strmap_put(&N->str, sched);
    char *p = sb_strf("%.*s", (int)n, sched);
    uint32_t k = sb_strmap_get(&N->str, p);
    if (k != UINT32_MAX) {
        free(p);
        return k;
    }
    N->policy = sb_xrealloc(N->policy, (N->n_policy + 1) * sizeof *N->policy);
    N->policy[N->n_policy++] = p;
    return sb_strmap_put(&N->str, p);
}

/* Rows of one side grouped by (workload, policy name): group g holds
 * row[first[g] .. first[g + 1]), in row order. */
struct groups {
    struct sb_pairmap of;  /* (workload, policy) -> group */
    uint32_t n;
    uint32_t *first;       /* [n + 1] */
    uint32_t *row;         /* [n_rows] */
    uint32_t *group;       /* [n_rows] each row's group */
};

static void group_rows(const struct side *s, struct names *N, struct groups *G)
{
    uint32_t n = s->t.n_rows;
    sb_pairmap_init(&G->of);
    G->n = 0;
    G->group = sb_xmalloc(((size_t)n + 1) * sizeof *G->group);
    G->row = sb_xmalloc(((size_t)n + 1) * sizeof *G->row);
    uint32_t *count = sb_xcalloc((size_t)n + 1, sizeof *count);
    for (uint32_t r = 0; r < n; r++) {
        uint32_t w = sb_strmap_put(&N->str, get(s, r, s->c_workload));
        uint32_t g = sb_pairmap_put(&G->of, w, policy_of(N, get(s, r, s->c_scheduler)), G->n);
        G->n += g == G->n;
        G->group[r] = g;
        count[g]++;
    }
    G->first = sb_xcalloc((size_t)G->n + 1, sizeof *G->first);
    for (uint32_t g = 0; g < G->n; g++)
        G->first[g + 1] = G->first[g] + count[g];
    memset(count, 0, ((size_t)n + 1) * sizeof *count);
    for (uint32_t r = 0; r < n; r++)
        G->row[G->first[G->group[r]] + count[G->group[r]]++] = r;
    free(count);
}

static void groups_free(struct groups *G)
{
    sb_pairmap_free(&G->of);
    free(G->first);
    free(G->row);
    free(G->group);
}

/* Rows pair by (workload, scheduler); a row left over on both sides pairs
 * with the one row of the same workload and policy name whose parameters
 * differ (-s aggressive:limit=4 against the baseline's aggressive), and the
 * note says how the parameters differ: when the base's workload has one row
 * of that policy left and the new file one not taken.  Each count is kept as
 * rows pair, so every row is looked up once (it was a scan of the other file
 * per row: quadratic). */
static int match(const struct side *b, const struct side *n, struct opts *o,
                 struct row *rows, uint32_t *n_rows, struct sb_err *e)
{
    uint32_t k = 0;
    unsigned char *taken = sb_xcalloc(n->t.n_rows + 1, 1);
    int *pair = sb_xcalloc(b->t.n_rows + 1, sizeof *pair);
    int rc = 0;
    struct names N = {0};
    struct groups gb, gn;
    struct sb_pairmap exact; /* (workload, scheduler) -> row of n */
    sb_strmap_init(&N.str);
    sb_pairmap_init(&exact);
    for (uint32_t r = 0; r < n->t.n_rows; r++)
        sb_pairmap_put(&exact, sb_strmap_put(&N.str, get(n, r, n->c_workload)),
                       sb_strmap_put(&N.str, get(n, r, n->c_scheduler)), r);
    group_rows(b, &N, &gb);
    group_rows(n, &N, &gn);
    /* pass 1: exact pairs */
    for (uint32_t r = 0; r < b->t.n_rows; r++) {
        uint32_t w = sb_strmap_get(&N.str, get(b, r, b->c_workload));
        uint32_t sc = sb_strmap_get(&N.str, get(b, r, b->c_scheduler));
        uint32_t q = w == UINT32_MAX || sc == UINT32_MAX ? UINT32_MAX
                                                         : sb_pairmap_get(&exact, w, sc);
        pair[r] = q == UINT32_MAX ? -1 : (int)q;
        if (pair[r] >= 0)
            taken[pair[r]] = 1;
    }
    /* pass 2: by policy name, where both sides have one row left.  left_b:
     * the base rows of a group still unpaired; left_n and cursor: the new
     * file's rows of a group not taken, and where the first may be (taken
     * only grows, so the cursor only moves on) */
    uint32_t *left_b = sb_xcalloc((size_t)gb.n + 1, sizeof *left_b);
    uint32_t *left_n = sb_xcalloc((size_t)gn.n + 1, sizeof *left_n);
    uint32_t *cursor = sb_xcalloc((size_t)gn.n + 1, sizeof *cursor);
    for (uint32_t r = 0; r < b->t.n_rows; r++)
        left_b[gb.group[r]] += pair[r] < 0;
    for (uint32_t r = 0; r < n->t.n_rows; r++)
        left_n[gn.group[r]] += !taken[r];
    for (uint32_t g = 0; g < gn.n; g++)
        cursor[g] = gn.first[g];
    for (uint32_t r = 0; r < b->t.n_rows; r++) {
        if (pair[r] >= 0)
            continue;
        uint32_t g = sb_pairmap_get(&gn.of, sb_strmap_get(&N.str, get(b, r, b->c_workload)),
                                    policy_of(&N, get(b, r, b->c_scheduler)));
        if (g == UINT32_MAX || left_n[g] != 1 || left_b[gb.group[r]] != 1)
            continue;
        while (taken[gn.row[cursor[g]]])
            cursor[g]++;
        uint32_t q = gn.row[cursor[g]];
        pair[r] = (int)q;
        taken[q] = 1;
        left_n[g]--;
        left_b[gb.group[r]]--;
    }
    free(left_b);
    free(left_n);
    free(cursor);
    groups_free(&gb);
    groups_free(&gn);
    sb_pairmap_free(&exact);
    sb_strmap_free(&N.str);
    for (uint32_t i = 0; i < N.n_policy; i++)
        free(N.policy[i]);
    free(N.policy);
    for (uint32_t r = 0; r < b->t.n_rows && !rc; r++) {
        if (!selected(o, get(b, r, b->c_scheduler)))
            continue;
        struct row *x = &rows[k++];
        memset(x, 0, sizeof *x);
        x->workload = get(b, r, b->c_workload);
        x->scheduler = get(b, r, b->c_scheduler);
        x->new_over = -1; /* until a new row is read */
        int q = pair[r];
        x->have_old = row_ok(b, r);
        if (x->have_old && (rc = read_metrics(b, r, x->old_v, e)))
            break;
        if ((rc = read_over(b, r, &x->old_over, e)))
            break;
        if (q < 0) {
            x->v = V_MISSING;
            x->fails = 1;
            if (!x->have_old)
                x->note = get(b, r, b->c_status);
            continue;
        }
        if (strcmp(x->scheduler, get(n, (uint32_t)q, n->c_scheduler)))
            param_note(x, x->scheduler, get(n, (uint32_t)q, n->c_scheduler));
        if ((rc = same_model(b, r, n, (uint32_t)q, o, e)))
            break;
        if (b->c_id >= 0 && n->c_id >= 0)
            ident_note(x, get(b, r, b->c_id), get(n, (uint32_t)q, n->c_id));
        x->have_new = row_ok(n, (uint32_t)q);
        if (x->have_new && (rc = read_metrics(n, (uint32_t)q, x->new_v, e)))
            break;
        if (!x->have_new)
            x->note = get(n, (uint32_t)q, n->c_status);
        if ((rc = read_over(n, (uint32_t)q, &x->new_over, e)))
            break;
        x->v = !x->have_new ? V_ERROR : !x->have_old ? V_IMPROVED : judge(x, o);
        x->fails |= x->v == V_ERROR;
    }
    for (uint32_t r = 0; r < n->t.n_rows && !rc; r++) {
        const char *w = get(n, r, n->c_workload), *sc = get(n, r, n->c_scheduler);
        if (taken[r] || !selected(o, sc))
            continue;
        struct row *x = &rows[k++];
        memset(x, 0, sizeof *x);
        x->workload = w;
        x->scheduler = sc;
        x->v = V_NEW;
        x->have_new = row_ok(n, r);
        if (!x->have_new)
            x->note = get(n, r, n->c_status);
        if (x->have_new && (rc = read_metrics(n, r, x->new_v, e)))
            break;
        x->old_over = -1;
        if ((rc = read_over(n, r, &x->new_over, e)))
            break;
    }
    free(taken);
    free(pair);
    *n_rows = k;
    return rc;
}

/* ---- output ------------------------------------------------------------- */

/* what --changes-only leaves out: ok rows of the same build and parameters */
static int unchanged(const struct row *x)
{
    return x->v == V_OK && !x->ident[0];
}

static void fmt_num(char *buf, size_t n, int have, double v, enum metric m)
{
    if (!have)
        snprintf(buf, n, "-");
    else if (m == M_MEM)
        snprintf(buf, n, "%.0f", v);
    else
        snprintf(buf, n, "%.3f", v);
}

static void fmt_delta(char *buf, size_t n, const struct row *x, enum metric m)
{
    if (!x->have_old || !x->have_new)
        snprintf(buf, n, "-");
    else if (x->old_v[m] == 0)
        snprintf(buf, n, x->new_v[m] == 0 ? "+0.00%%" : "n/a");
    else
        snprintf(buf, n, "%+.2f%%", 100 * (x->new_v[m] - x->old_v[m]) / x->old_v[m]);
}

/* Whether a row fits its devices' memory: 1, 0, or -1 when unknown (the row
 * did not run, or its file does not say). */
static int fits(int have, long over)
{
    return !have || over < 0 ? -1 : over == 0;
}

/* fits as a field: yes, no, or - when unknown */
static const char *fits_field(int have, long over)
{
    int f = fits(have, over);
    return f < 0 ? "-" : f ? "yes" : "no";
}

/* fits_old and fits_new stand before note, which stays last: the one column of
 * free text in the text output */
#define N_OUT_COLS 15
static const char *const out_cols[N_OUT_COLS] = {
    "workload", "scheduler", "verdict", "peak_mem_old", "peak_mem_new", "peak_mem_change",
    "makespan_old", "makespan_new", "makespan_change", "exposed_old", "exposed_new",
    "exposed_change", "fits_old", "fits_new", "note"};

static void row_fields(const struct row *x, char f[N_OUT_COLS][256])
{
    snprintf(f[0], 256, "%s", x->workload);
    snprintf(f[1], 256, "%s", x->scheduler);
    snprintf(f[2], 256, "%s", verdict_names[x->v]);
    for (int m = 0; m < M_COUNT; m++) {
        fmt_num(f[3 + 3 * m], 256, x->have_old, x->old_v[m], (enum metric)m);
        fmt_num(f[4 + 3 * m], 256, x->have_new, x->new_v[m], (enum metric)m);
        fmt_delta(f[5 + 3 * m], 256, x, (enum metric)m);
    }
    snprintf(f[12], 256, "%s", fits_field(x->have_old, x->old_over));
    snprintf(f[13], 256, "%s", fits_field(x->have_new, x->new_over));
    /* the note: the error, how the parameters differ, why the fit decided */
    const char *part[4] = {x->note, x->params[0] ? x->params : NULL, x->fit_note,
                           x->ident[0] ? x->ident : NULL};
    size_t len = 0;
    f[14][0] = 0;
    for (int i = 0; i < 4; i++)
        if (part[i] && len + 3 < 256)
            len += (size_t)snprintf(f[14] + len, 256 - len, "%s%s", len ? "; " : "", part[i]);
}

static void print_csv(const struct row *rows, uint32_t n, const struct opts *o)
{
    char f[N_OUT_COLS][256];
    for (int c = 0; c < N_OUT_COLS; c++)
        sb_csv_field(stdout, out_cols[c], c == 0);
    sb_csv_end(stdout);
    for (uint32_t i = 0; i < n; i++) {
        if (o->changes_only && unchanged(&rows[i]))
            continue;
        row_fields(&rows[i], f);
        /* workload, scheduler and note carry names and messages: for a
         * spreadsheet (escape.h); the rest are this command's own words */
        for (int c = 0; c < N_OUT_COLS; c++)
            if (c < 2 || c == N_OUT_COLS - 1)
                sb_csv_sheet_field(stdout, f[c], c == 0);
            else
                sb_csv_field(stdout, f[c], c == 0);
        sb_csv_end(stdout);
    }
}

static void print_json(const struct row *rows, uint32_t n, const struct opts *o)
{
    json_t *root = json_object(), *arr = json_array();
    uint32_t count[V_COUNT] = {0};
    json_object_set_new(root, "base", sb_json_string(o->base));
    json_object_set_new(root, "new", sb_json_string(o->next));
    json_object_set_new(root, "mem_tol_pct", json_real(o->mem_tol_pct));
    json_object_set_new(root, "time_tol_pct", json_real(o->time_tol_pct));
    json_object_set_new(root, "cross_model", json_boolean(o->model_note != NULL));
    for (uint32_t i = 0; i < n; i++) {
        const struct row *x = &rows[i];
        count[x->v]++;
        if (o->changes_only && unchanged(x))
            continue;
        json_t *r = json_object();
        json_object_set_new(r, "workload", sb_json_string(x->workload));
        json_object_set_new(r, "scheduler", sb_json_string(x->scheduler));
        json_object_set_new(r, "verdict", json_string(verdict_names[x->v]));
        for (int m = 0; m < M_COUNT; m++) {
            static const char *const key[M_COUNT] = {"peak_mem", "makespan", "exposed"};
            char name[64];
            snprintf(name, sizeof name, "%s_old", key[m]);
            json_object_set_new(r, name, x->have_old ? json_real(x->old_v[m]) : json_null());
            snprintf(name, sizeof name, "%s_new", key[m]);
            json_object_set_new(r, name, x->have_new ? json_real(x->new_v[m]) : json_null());
            snprintf(name, sizeof name, "%s_change_pct", key[m]);
            int have = x->have_old && x->have_new && x->old_v[m] != 0;
            json_object_set_new(r, name, have ? json_real(100 * (x->new_v[m] - x->old_v[m]) /
                                                          x->old_v[m])
                                              : json_null());
        }
        int fo = fits(x->have_old, x->old_over), fn = fits(x->have_new, x->new_over);
        json_object_set_new(r, "fits_old", fo < 0 ? json_null() : json_boolean(fo));
        json_object_set_new(r, "fits_new", fn < 0 ? json_null() : json_boolean(fn));
        json_object_set_new(r, "note", sb_json_string(x->note ? x->note : ""));
        json_object_set_new(r, "parameters", sb_json_string(x->params));
        json_object_set_new(r, "fit_note", sb_json_string(x->fit_note ? x->fit_note : ""));
        json_array_append_new(arr, r);
    }
    json_object_set_new(root, "rows", arr);
    json_t *c = json_object();
    for (int v = 0; v < V_COUNT; v++)
        json_object_set_new(c, verdict_names[v], json_integer(count[v]));
    json_object_set_new(root, "counts", c);
    json_dumpf(root, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(12));
    printf("\n");
    json_decref(root);
}

/* A size for a person: B, kB, MB, GB, TB (SI, as summary's tables), three
 * significant decimals past the unit. */
static void fmt_bytes_h(char *buf, size_t n, double v)
{
    static const char *const unit[] = {"B", "kB", "MB", "GB", "TB", "PB"};
    int u = 0;
    while (fabs(v) >= 1000 && u < 5) {
        v /= 1000;
        u++;
    }
    snprintf(buf, n, u ? "%.3f %s" : "%.0f %s", v, unit[u]);
}

/* A time for a person, from microseconds: us, ms or s */
static void fmt_us_h(char *buf, size_t n, double us)
{
    if (fabs(us) < 1000)
        snprintf(buf, n, "%.3f us", us);
    else if (fabs(us) < 1e6)
        snprintf(buf, n, "%.3f ms", us / 1e3);
    else
        snprintf(buf, n, "%.3f s", us / 1e6);
}

static void count_rows(const struct row *rows, uint32_t n, uint32_t count[V_COUNT],
                       uint32_t *n_fail)
{
    *n_fail = 0;
    for (int v = 0; v < V_COUNT; v++)
        count[v] = 0;
    for (uint32_t i = 0; i < n; i++) {
        count[rows[i].v]++;
        *n_fail += rows[i].fails != 0;
    }
}

/* The counts in one sentence: "264 rows: 262 ok, 1 regressed, ...; 263
 * passed, 1 failed" */
static void counts_line(FILE *f, const struct row *rows, uint32_t n)
{
    uint32_t count[V_COUNT], n_fail;
    count_rows(rows, n, count, &n_fail);
    fprintf(f, "%u rows: ", n);
    for (int v = 0; v < V_COUNT; v++)
        fprintf(f, "%s%u %s", v ? ", " : "", count[v], verdict_names[v]);
    fprintf(f, "; %u passed, %u failed", n - n_fail, n_fail);
}

/* Markdown for a person (a pull request, $GITHUB_STEP_SUMMARY): sizes and
 * times with units, the counts on stdout below the table, and a sentence
 * instead of a table that would be empty. */
static void print_markdown(const struct row *rows, uint32_t n, const struct opts *o)
{
    char f[N_OUT_COLS][256];
    uint32_t shown = 0;
    for (uint32_t i = 0; i < n; i++)
        shown += !(o->changes_only && unchanged(&rows[i]));
    printf("### schedbench compare: ");
    sb_md_cell(stdout, o->base); /* file names are data too */
    printf(" vs ");
    sb_md_cell(stdout, o->next);
    printf("\n\n");
    if (!shown) {
        printf("No changes: %s.\n\n", n ? "every row is as in the base" : "no rows to compare");
    } else {
        for (int c = 0; c < N_OUT_COLS; c++)
            printf("| %s ", out_cols[c]);
        printf("|\n");
        for (int c = 0; c < N_OUT_COLS; c++)
            printf(c < 3 || c >= N_OUT_COLS - 3 ? "|---" : "|---:");
        printf("|\n");
    }
    for (uint32_t i = 0; i < n && shown; i++) {
        const struct row *x = &rows[i];
        if (o->changes_only && unchanged(x))
            continue;
        row_fields(x, f);
        for (int m = 0; m < M_COUNT; m++) {
            void (*h)(char *, size_t, double) = m == M_MEM ? fmt_bytes_h : fmt_us_h;
            if (x->have_old)
                h(f[3 + 3 * m], 256, x->old_v[m]);
            if (x->have_new)
                h(f[4 + 3 * m], 256, x->new_v[m]);
        }
        if (x->fails)
            snprintf(f[2], 256, "%s (fails)", verdict_names[x->v]);
        for (int c = 0; c < N_OUT_COLS; c++) {
            fputs("| ", stdout);
            sb_md_cell(stdout, f[c]);
            fputc(' ', stdout);
        }
        printf("|\n");
    }
    if (shown)
        printf("\n");
    printf("**");
    counts_line(stdout, rows, n);
    printf("**\n");
}

/* JUnit XML (the form GitHub, GitLab and Jenkins show per test): one
 * testcase per judged row, whatever --changes-only says, class = workload,
 * name = scheduler; a row that fails the gate carries a <failure> whose
 * message says why and whose text has the numbers and the note. */
static void print_junit(const struct row *rows, uint32_t n, const struct opts *o)
{
    char f[N_OUT_COLS][256];
    uint32_t count[V_COUNT], n_fail;
    count_rows(rows, n, count, &n_fail);
    printf("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    printf("<testsuites tests=\"%u\" failures=\"%u\">\n", n, n_fail);
    printf("  <testsuite name=\"schedbench compare ");
    sb_xml_text(stdout, o->base);
    printf(" vs ");
    sb_xml_text(stdout, o->next);
    printf("\" tests=\"%u\" failures=\"%u\" errors=\"0\" skipped=\"0\">\n", n, n_fail);
    for (uint32_t i = 0; i < n; i++) {
        const struct row *x = &rows[i];
        row_fields(x, f);
        printf("    <testcase classname=\"");
        sb_xml_text(stdout, x->workload);
        printf("\" name=\"");
        sb_xml_text(stdout, x->scheduler);
        printf("\" time=\"0\"");
        if (!x->fails) {
            printf("/>\n");
            continue;
        }
        printf(">\n      <failure type=\"%s\" message=\"", verdict_names[x->v]);
        char why[512];
        size_t len = (size_t)snprintf(why, sizeof why, "%s", verdict_names[x->v]);
        for (int m = 0; m < M_COUNT && len < sizeof why; m++)
            if (x->grew[m])
                len += (size_t)snprintf(why + len, sizeof why - len, "; %s %s -> %s (%s)",
                                        metric_keys[m], f[3 + 3 * m], f[4 + 3 * m],
                                        f[5 + 3 * m]);
        if (f[14][0] && len < sizeof why)
            snprintf(why + len, sizeof why - len, "; %s", f[14]);
        sb_xml_text(stdout, why);
        printf("\">");
        for (int c = 2; c < N_OUT_COLS; c++) {
            printf("%s%s=", c > 2 ? "\n" : "", out_cols[c]);
            sb_xml_text(stdout, f[c]);
        }
        printf("</failure>\n    </testcase>\n");
    }
    printf("  </testsuite>\n</testsuites>\n");
}

static void print_text(const struct row *rows, uint32_t n, const struct opts *o)
{
    char f[N_OUT_COLS][256];
    int w[N_OUT_COLS];
    for (int c = 0; c < N_OUT_COLS; c++)
        w[c] = (int)strlen(out_cols[c]);
    for (uint32_t i = 0; i < n; i++) {
        if (o->changes_only && unchanged(&rows[i]))
            continue;
        row_fields(&rows[i], f);
        for (int c = 0; c < N_OUT_COLS; c++)
            if ((int)strlen(f[c]) > w[c])
                w[c] = (int)strlen(f[c]);
    }
    for (int c = 0; c < N_OUT_COLS; c++)
        printf(c < 3 || c >= N_OUT_COLS - 3 ? "%-*s  " : "%*s  ", w[c], out_cols[c]);
    printf("\n");
    for (uint32_t i = 0; i < n; i++) {
        if (o->changes_only && unchanged(&rows[i]))
            continue;
        row_fields(&rows[i], f);
        for (int c = 0; c < N_OUT_COLS; c++)
            printf(c < 3 || c >= N_OUT_COLS - 3 ? "%-*s  " : "%*s  ", w[c], f[c]);
        printf("\n");
    }
}

/* ---- command -------------------------------------------------------------- */

static int compare_help(void)
{
    printf("usage: schedbench compare BASE.csv NEW.csv [--mem-tol PCT] [--time-tol PCT]\n"
           "                          [--format text|csv|markdown|md|json|junit]\n"
           "                          [--changes-only] [--metrics peak,makespan,exposed]\n"
           "                          [--schedulers NAME[,NAME...]] [--cross-model]\n"
           "\n"
           "Matches rows by (workload, scheduler), else a row left on both sides by\n"
           "(workload, policy name) when parameters differ (note: parameters a -> b),\n"
           "and prints old, new and relative\n"
           "change of peak memory, makespan and exposed communication, each row marked\n"
           "ok, regressed, improved, new, missing or error.  A row regresses when peak\n"
           "memory grows by more than --mem-tol %% (default 1), or makespan or exposed\n"
           "communication grows by more than --time-tol %% (default 2) of the base\n"
           "makespan, or when it no longer fits its devices' memory: more devices\n"
           "exceed their capacity (column over_capacity, --machine runs; a base without\n"
           "the column counts as fitting).  A row that fits again, or overflows fewer\n"
           "devices, with nothing grown, is improved.  Columns fits_old and fits_new say\n"
           "yes, no or - (unknown), and note says when the fit decided the verdict.\n"
           "A row is a trade-off when its gated metrics moved both ways: one grew (by\n"
           "any amount) while another shrank by more than its tolerance (peak +0.10%%,\n"
           "makespan -4.46%%).  A trade-off fails the gate when the growth is past its\n"
           "tolerance (the gate cannot know whether the trade is wanted; a person\n"
           "refreshes the baseline), and passes when it is within.\n"
           "Exit status: 0 nothing regressed, went missing, turned into an error or\n"
           "traded past a tolerance; 1 otherwise; 2 unusable input, rows priced by different cost models\n"
           "(column cost_model: the units differ), or output that could not be written.\n"
           "\n"
           "  --changes-only   print only rows whose verdict is not ok, or whose\n"
           "                   scheduler_id differs\n"           "  --metrics L      judge only these of peak, makespan, exposed (all three\n"
           "                   by default); the others are printed, not judged\n"
           "  --format md      Markdown for $GITHUB_STEP_SUMMARY: sizes and times with\n"
           "                   units, the counts below the table, a 'No changes' line\n"
           "                   instead of an empty table\n"
           "  --format junit   JUnit XML: one testcase per row (class = workload, name =\n"
           "                   scheduler, all rows whatever --changes-only says); a row\n"
           "                   that fails carries the numbers and the note\n"
           "The counts, then each failing row by name (metric old -> new), close the\n"
           "output on stderr.\n"
           "  --cross-model    compare rows of two time models (--comm simple against\n"
           "                   astra): says which columns change meaning; XLA's approx\n"
           "                   units still never compare with time\n"
           "  --schedulers L   judge only these policies (names before any ':'); the\n"
           "                   others are neither printed nor counted\n"
           "An error row's status (error:/invalid: and the message) is in column note.\n"
           "Column scheduler_id (run writes it: the plugin's build, a hash of its\n"
           "file, and every parameter's effective value) is compared when both files\n"
           "have it: the note says 'build a -> b' or 'effective parameters a -> b'.\n");
    return 0;
}

/* a percentage read strictly (core/num.h): no hex, inf or nan */
static int parse_tol(const char *flag, const char *v, double *out, struct sb_err *e)
{
    const char *why = "missing";
    if (!v || sb_num_real(v, 0, 1e6, out, &why))
        return sb_errf(e, "schedbench compare: %s needs a non-negative percentage, at most "
                          "10^6 (%s%s%s%s)", flag, v ? "'" : "", v ? v : "", v ? "': " : "",
                       why);
    return 0;
}

/* --metrics peak,makespan,exposed: the metrics that decide a verdict (the
 * others are still printed) */
static int parse_metrics(const char *v, unsigned *out, struct sb_err *e)
{
    *out = 0;
    for (const char *c = v ? v : ""; *c;) {
        size_t len = strcspn(c, ",");
        int m = 0;
        while (m < M_COUNT && (strlen(metric_keys[m]) != len || strncmp(c, metric_keys[m], len)))
            m++;
        if (m == M_COUNT)
            return sb_errf(e, "schedbench compare: --metrics: unknown metric '%.*s' (peak, "
                              "makespan or exposed)", (int)len, c);
        *out |= 1u << m;
        c += len + (c[len] == ',');
    }
    if (!*out)
        return sb_errf(e, "schedbench compare: --metrics needs a comma list of peak, makespan, "
                          "exposed");
    return 0;
}

static int parse_compare_args(struct opts *o, int argc, char **argv, struct sb_err *e)
{
    o->mem_tol_pct = 1;
    o->time_tol_pct = 2;
    o->format = "text";
    o->gated = (1u << M_COUNT) - 1;
    struct sb_opt_seen once = {0};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (v && (!strcmp(a, "--mem-tol") || !strcmp(a, "--time-tol") ||
                  !strcmp(a, "--format") || !strcmp(a, "--schedulers") ||
                  !strcmp(a, "--metrics")) &&
            sb_opt_once(&once, "compare", a, v, e))
            return -1;
        if (!strcmp(a, "--mem-tol") || !strcmp(a, "--time-tol")) {
            if (parse_tol(a, v, a[2] == 'm' ? &o->mem_tol_pct : &o->time_tol_pct, e))
                return -1;
            i++;
        } else if (!strcmp(a, "--format")) {
            if (!v || (strcmp(v, "text") && strcmp(v, "csv") && strcmp(v, "markdown") &&
                       strcmp(v, "md") && strcmp(v, "json") && strcmp(v, "junit")))
                return sb_errf(e, "schedbench compare: --format is text, csv, markdown (md), "
                                  "json or junit");
            o->format = v;
            i++;
        } else if (!strcmp(a, "--metrics")) {
            if (parse_metrics(v, &o->gated, e))
                return -1;
            i++;
        } else if (!strcmp(a, "--changes-only")) {
            o->changes_only = 1;
        } else if (!strcmp(a, "--cross-model")) {
            o->cross_model = 1;
        } else if (!strcmp(a, "--schedulers")) {
            if (!v || !*v)
                return sb_errf(e, "schedbench compare: --schedulers needs a comma list");
            o->schedulers = v;
            i++;
        } else if (a[0] == '-' && a[1]) {
            static const char *const flags[] = {"--mem-tol", "--time-tol", "--format",
                                                "--changes-only", "--schedulers",
                                                "--cross-model", "--metrics", "--help"};
            const char *near = sb_did_you_mean(a, flags, 8);
            return sb_errf(e, "schedbench compare: unknown option '%s'%s%s%s", a,
                           near ? " (did you mean '" : "", near ? near : "", near ? "'?)" : "");
        } else if (!o->base) {
            o->base = a;
        } else if (!o->next) {
            o->next = a;
        } else {
            return sb_errf(e, "schedbench compare: unexpected argument '%s'", a);
        }
    }
    if (!o->next)
        return sb_errf(e, "usage: schedbench compare BASE.csv NEW.csv [options]");
    return 0;
}

/* The closing lines, on stderr: the counts, then each row that fails the
 * gate by name, with the metric that grew (old -> new), so that a CI log's
 * last line says what failed. */
static int summarize(const struct row *rows, uint32_t n)
{
    uint32_t count[V_COUNT], n_fail;
    count_rows(rows, n, count, &n_fail);
    fprintf(stderr, "compare: ");
    counts_line(stderr, rows, n);
    fprintf(stderr, "\n");
    if (!n_fail)
        return 0;
    char f[N_OUT_COLS][256];
    fprintf(stderr, "compare: failed:");
    for (uint32_t i = 0, k = 0; i < n; i++) {
        const struct row *x = &rows[i];
        if (!x->fails)
            continue;
        row_fields(x, f);
        fprintf(stderr, "%s %s / %s %s", k++ ? ";" : "", x->workload, x->scheduler,
                verdict_names[x->v]);
        for (int m = 0; m < M_COUNT; m++)
            if (x->grew[m])
                fprintf(stderr, " %s %s -> %s (%s)", metric_keys[m], f[3 + 3 * m], f[4 + 3 * m],
                        f[5 + 3 * m]);
        if (x->fit_note || x->note)
            fprintf(stderr, " (%s)", x->fit_note ? x->fit_note : x->note);
    }
    fprintf(stderr, "\n");
    return 1;
}

int sb_cmd_compare(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
            return compare_help();
    struct opts o = {0};
    struct side b, n;
    struct sb_err e;
    if (parse_compare_args(&o, argc, argv, &e)) {
        fprintf(stderr, "%s\n", e.msg);
        return 2;
    }
    if (open_side(&b, o.base, &e)) {
        fprintf(stderr, "%s\n", e.msg);
        return 2;
    }
    if (open_side(&n, o.next, &e)) {
        fprintf(stderr, "%s\n", e.msg);
        sb_table_free(&b.t);
        return 2;
    }
    struct row *rows = sb_xcalloc((size_t)b.t.n_rows + n.t.n_rows, sizeof *rows);
    uint32_t n_rows = 0;
    int rc = check_unique(&b, &e) || check_unique(&n, &e) ||
             match(&b, &n, &o, rows, &n_rows, &e);
    if (rc) {
        fprintf(stderr, "%s\n", e.msg);
        rc = 2;
    } else {
        if (!strcmp(o.format, "csv"))
            print_csv(rows, n_rows, &o);
        else if (!strcmp(o.format, "markdown") || !strcmp(o.format, "md"))
            print_markdown(rows, n_rows, &o);
        else if (!strcmp(o.format, "junit"))
            print_junit(rows, n_rows, &o);
        else if (!strcmp(o.format, "json"))
            print_json(rows, n_rows, &o);
        else
            print_text(rows, n_rows, &o);
        rc = summarize(rows, n_rows);
    }
    free(rows);
    sb_table_free(&b.t);
    sb_table_free(&n.t);
    return rc;
}
