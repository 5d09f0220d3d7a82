/* `schedbench compare BASE.csv NEW.csv`: the regression gate.
 *
 * Rows are matched by (workload, scheduler).  A matched pair of ok rows is
 * `regressed` when peak memory grew by more than --mem-tol percent, or makespan
 * or exposed communication grew by more than --time-tol percent of the base
 * makespan (exposed communication is measured against the makespan so that a
 * base of a few microseconds does not turn noise into a thousandfold change);
 * `improved` when something shrank past the same tolerances and nothing grew;
 * `ok` otherwise.  A row only in BASE is `missing`, only in NEW is `new`; a row
 * whose NEW status is not ok is `error`.
 *
 * Exit: 0 nothing regressed, went missing or turned into an error; 1 otherwise;
 * 2 unusable input (file:line: message). */
#define _POSIX_C_SOURCE 200809L
#include "commands.h"

#include "table.h"

#include <math.h>
#include <string.h>

enum verdict { V_OK, V_REGRESSED, V_IMPROVED, V_NEW, V_MISSING, V_ERROR };
static const char *const verdict_names[] = {"ok",  "regressed", "improved",
                                            "new", "missing",   "error"};

enum metric { M_MEM, M_MAKESPAN, M_EXPOSED, M_COUNT };
static const char *const metric_cols[M_COUNT] = {"peak_mem_bytes", "makespan_us",
                                                 "exposed_comm_us"};

struct side {
    struct sb_table t;
    int c_workload, c_scheduler, c_status, c_metric[M_COUNT];
    int c_over; /* over_capacity (placement); -1 in files from before it */
    int c_model; /* cost_model; -1 in files from before it */
};

struct row {
    const char *workload, *scheduler;
    enum verdict v;
    int have_old, have_new;
    double old_v[M_COUNT], new_v[M_COUNT];
    unsigned long old_over, new_over; /* devices over their memory capacity */
    const char *note; /* an error row's status, with its message */
};

struct opts {
    double mem_tol_pct, time_tol_pct;
    const char *format;
    const char *base, *next;
    int changes_only;        /* print only rows whose verdict is not ok */
    const char *schedulers;  /* comma list: judge only these policies, or NULL */
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

/* Devices over their memory capacity; empty in rows without a placement. */
static int read_over(const struct side *s, uint32_t r, unsigned long *out, struct sb_err *e)
{
    double v = 0;
    if (s->c_over >= 0 && *get(s, r, s->c_over) &&
        sb_table_decimal(&s->t, r, (uint32_t)s->c_over, 4294967295.0, 1, &v, e))
        return -1;
    *out = (unsigned long)v;
    return 0;
}

static int find_row(const struct side *s, const char *w, const char *sc, uint32_t from)
{
    for (uint32_t r = from; r < s->t.n_rows; r++)
        if (!strcmp(get(s, r, s->c_workload), w) && !strcmp(get(s, r, s->c_scheduler), sc))
            return (int)r;
    return -1;
}

static int check_unique(const struct side *s, struct sb_err *e)
{
    /* quadratic, but results files have one row per cell: thousands at most */
    for (uint32_t r = 0; r < s->t.n_rows; r++) {
        int d = find_row(s, get(s, r, s->c_workload), get(s, r, s->c_scheduler), r + 1);
        if (d >= 0)
            return sb_errf(e, "%s:%u: duplicate row for workload '%s', scheduler '%s' "
                              "(first on line %u)", s->t.path, s->t.line[d + 1],
                           get(s, r, s->c_workload), get(s, r, s->c_scheduler),
                           s->t.line[r + 1]);
    }
    return 0;
}

static enum verdict judge(const struct row *x, const struct opts *o)
{
    double mem_grow = x->new_v[M_MEM] - x->old_v[M_MEM];
    double span = x->old_v[M_MAKESPAN] > 0 ? x->old_v[M_MAKESPAN] : 1;
    double mem_tol = o->mem_tol_pct / 100 * x->old_v[M_MEM];
    double time_tol = o->time_tol_pct / 100 * span;
    double span_grow = x->new_v[M_MAKESPAN] - x->old_v[M_MAKESPAN];
    double exp_grow = x->new_v[M_EXPOSED] - x->old_v[M_EXPOSED];
    /* a placement that newly overflows a device cannot run, whatever its time */
    if (x->new_over > x->old_over)
        return V_REGRESSED;
    if (mem_grow > mem_tol || span_grow > time_tol || exp_grow > time_tol)
        return V_REGRESSED;
    if (-mem_grow > mem_tol || -span_grow > time_tol || -exp_grow > time_tol)
        return V_IMPROVED;
    return V_OK;
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

/* Units differ between cost models (us against XLA's abstract units). */
static int same_model(const struct side *b, uint32_t rb, const struct side *n, uint32_t rn,
                      struct sb_err *e)
{
    if (b->c_model < 0 || n->c_model < 0)
        return 0;
    const char *x = get(b, rb, b->c_model), *y = get(n, rn, n->c_model);
    if (!strcmp(x, y))
        return 0;
    return sb_errf(e, "%s:%u: cost model '%s', but %s:%u has '%s' for workload '%s', "
                      "scheduler '%s': results in different units cannot be compared "
                      "(rerun with the same --cost-model)", n->t.path, n->t.line[rn + 1], y,
                   b->t.path, b->t.line[rb + 1], x, get(b, rb, b->c_workload),
                   get(b, rb, b->c_scheduler));
}

static int match(const struct side *b, const struct side *n, const struct opts *o,
                 struct row *rows, uint32_t *n_rows, struct sb_err *e)
{
    uint32_t k = 0;
    for (uint32_t r = 0; r < b->t.n_rows; r++) {
        if (!selected(o, get(b, r, b->c_scheduler)))
            continue;
        struct row *x = &rows[k++];
        memset(x, 0, sizeof *x);
        x->workload = get(b, r, b->c_workload);
        x->scheduler = get(b, r, b->c_scheduler);
        int q = find_row(n, x->workload, x->scheduler, 0);
        x->have_old = row_ok(b, r);
        if (x->have_old && read_metrics(b, r, x->old_v, e))
            return -1;
        if (read_over(b, r, &x->old_over, e))
            return -1;
        if (q < 0) {
            x->v = V_MISSING;
            if (!x->have_old)
                x->note = get(b, r, b->c_status);
            continue;
        }
        if (same_model(b, r, n, (uint32_t)q, e))
            return -1;
        x->have_new = row_ok(n, (uint32_t)q);
        if (x->have_new && read_metrics(n, (uint32_t)q, x->new_v, e))
            return -1;
        if (!x->have_new)
            x->note = get(n, (uint32_t)q, n->c_status);
        if (read_over(n, (uint32_t)q, &x->new_over, e))
            return -1;
        x->v = !x->have_new ? V_ERROR : !x->have_old ? V_IMPROVED : judge(x, o);
    }
    for (uint32_t r = 0; r < n->t.n_rows; r++) {
        const char *w = get(n, r, n->c_workload), *sc = get(n, r, n->c_scheduler);
        if (find_row(b, w, sc, 0) >= 0 || !selected(o, sc))
            continue;
        struct row *x = &rows[k++];
        memset(x, 0, sizeof *x);
        x->workload = w;
        x->scheduler = sc;
        x->v = V_NEW;
        x->have_new = row_ok(n, r);
        if (!x->have_new)
            x->note = get(n, r, n->c_status);
        if (x->have_new && read_metrics(n, r, x->new_v, e))
            return -1;
    }
    *n_rows = k;
    return 0;
}

/* ---- output ------------------------------------------------------------- */

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

#define N_OUT_COLS 13
static const char *const out_cols[N_OUT_COLS] = {
    "workload", "scheduler", "verdict", "peak_mem_old", "peak_mem_new", "peak_mem_change",
    "makespan_old", "makespan_new", "makespan_change", "exposed_old", "exposed_new",
    "exposed_change", "note"};

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
    snprintf(f[12], 256, "%s", x->note ? x->note : "");
}

static void print_csv(const struct row *rows, uint32_t n, const struct opts *o)
{
    char f[N_OUT_COLS][256];
    for (int c = 0; c < N_OUT_COLS; c++)
        sb_csv_field(stdout, out_cols[c], c == 0);
    sb_csv_end(stdout);
    for (uint32_t i = 0; i < n; i++) {
        if (o->changes_only && rows[i].v == V_OK)
            continue;
        row_fields(&rows[i], f);
        for (int c = 0; c < N_OUT_COLS; c++)
            sb_csv_field(stdout, f[c], c == 0);
        sb_csv_end(stdout);
    }
}

static void print_markdown(const struct row *rows, uint32_t n, const struct opts *o)
{
    char f[N_OUT_COLS][256];
    for (int c = 0; c < N_OUT_COLS; c++)
        printf("| %s ", out_cols[c]);
    printf("|\n");
    for (int c = 0; c < N_OUT_COLS; c++)
        printf(c < 3 || c == N_OUT_COLS - 1 ? "|---" : "|---:");
    printf("|\n");
    for (uint32_t i = 0; i < n; i++) {
        if (o->changes_only && rows[i].v == V_OK)
            continue;
        row_fields(&rows[i], f);
        for (int c = 0; c < N_OUT_COLS; c++)
            printf("| %s ", f[c]);
        printf("|\n");
    }
}

static void print_text(const struct row *rows, uint32_t n, const struct opts *o)
{
    char f[N_OUT_COLS][256];
    int w[N_OUT_COLS];
    for (int c = 0; c < N_OUT_COLS; c++)
        w[c] = (int)strlen(out_cols[c]);
    for (uint32_t i = 0; i < n; i++) {
        if (o->changes_only && rows[i].v == V_OK)
            continue;
        row_fields(&rows[i], f);
        for (int c = 0; c < N_OUT_COLS; c++)
            if ((int)strlen(f[c]) > w[c])
                w[c] = (int)strlen(f[c]);
    }
    for (int c = 0; c < N_OUT_COLS; c++)
        printf(c < 3 || c == N_OUT_COLS - 1 ? "%-*s  " : "%*s  ", w[c], out_cols[c]);
    printf("\n");
    for (uint32_t i = 0; i < n; i++) {
        if (o->changes_only && rows[i].v == V_OK)
            continue;
        row_fields(&rows[i], f);
        for (int c = 0; c < N_OUT_COLS; c++)
            printf(c < 3 || c == N_OUT_COLS - 1 ? "%-*s  " : "%*s  ", w[c], f[c]);
        printf("\n");
    }
}

/* ---- command -------------------------------------------------------------- */

static int compare_help(void)
{
    printf("usage: schedbench compare BASE.csv NEW.csv [--mem-tol PCT] [--time-tol PCT]\n"
           "                          [--format text|csv|markdown] [--changes-only]\n"
           "                          [--schedulers NAME[,NAME...]]\n"
           "\n"
           "Matches rows by (workload, scheduler) and prints old, new and relative\n"
           "change of peak memory, makespan and exposed communication, each row marked\n"
           "ok, regressed, improved, new, missing or error.  A row regresses when peak\n"
           "memory grows by more than --mem-tol %% (default 1), or makespan or exposed\n"
           "communication grows by more than --time-tol %% (default 2) of the base\n"
           "makespan, or when more devices exceed their memory capacity (column\n"
           "over_capacity, --machine runs).  Exit status: 0 nothing regressed, went missing or turned into an\n"
           "error; 1 otherwise; 2 unusable input, or rows priced by different cost\n"
           "models (column cost_model: the units differ).\n"
           "\n"
           "  --changes-only   print only rows whose verdict is not ok\n"
           "  --schedulers L   judge only these policies (names before any ':'); the\n"
           "                   others are neither printed nor counted\n"
           "An error row's status (error:/invalid: and the message) is in column note.\n");
    return 0;
}

static int parse_tol(const char *flag, const char *v, double *out, struct sb_err *e)
{
    char *end;
    *out = v ? strtod(v, &end) : 0;
    if (!v || end == v || *end || !isfinite(*out) || *out < 0)
        return sb_errf(e, "schedbench compare: %s needs a non-negative percentage", flag);
    return 0;
}

static int parse_compare_args(struct opts *o, int argc, char **argv, struct sb_err *e)
{
    o->mem_tol_pct = 1;
    o->time_tol_pct = 2;
    o->format = "text";
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--mem-tol") || !strcmp(a, "--time-tol")) {
            if (parse_tol(a, v, a[2] == 'm' ? &o->mem_tol_pct : &o->time_tol_pct, e))
                return -1;
            i++;
        } else if (!strcmp(a, "--format")) {
            if (!v || (strcmp(v, "text") && strcmp(v, "csv") && strcmp(v, "markdown")))
                return sb_errf(e, "schedbench compare: --format is text, csv or markdown");
            o->format = v;
            i++;
        } else if (!strcmp(a, "--changes-only")) {
            o->changes_only = 1;
        } else if (!strcmp(a, "--schedulers")) {
            if (!v || !*v)
                return sb_errf(e, "schedbench compare: --schedulers needs a comma list");
            o->schedulers = v;
            i++;
        } else if (a[0] == '-' && a[1]) {
            return sb_errf(e, "schedbench compare: unknown option '%s'", a);
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

static int summarize(const struct row *rows, uint32_t n)
{
    uint32_t count[6] = {0};
    for (uint32_t i = 0; i < n; i++)
        count[rows[i].v]++;
    fprintf(stderr, "compare: %u rows: %u ok, %u regressed, %u improved, %u new, "
                    "%u missing, %u error\n", n, count[V_OK], count[V_REGRESSED],
            count[V_IMPROVED], count[V_NEW], count[V_MISSING], count[V_ERROR]);
    return count[V_REGRESSED] || count[V_MISSING] || count[V_ERROR] ? 1 : 0;
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
        else if (!strcmp(o.format, "markdown"))
            print_markdown(rows, n_rows, &o);
        else
            print_text(rows, n_rows, &o);
        rc = summarize(rows, n_rows);
    }
    free(rows);
    sb_table_free(&b.t);
    sb_table_free(&n.t);
    return rc;
}
