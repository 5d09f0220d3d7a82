/* `schedbench merge A.csv B.csv ... -o ALL.csv`: joins the results of
 * `run --shard K/N` runs.  Rows are put back in sweep order by their `cell`
 * column, so merging every shard of a sweep gives the file one unsharded run
 * would have written (timing columns aside).  Every row carries its shard,
 * its sweep's identity and cell count, so a missing shard, a shard of another
 * sweep (other cost model, schedulers, workloads) or a gap is refused instead
 * of merged. */
#define _POSIX_C_SOURCE 200809L
#include "commands.h"
#include "table.h"
#include "core/num.h"

#include <stdlib.h>
#include <string.h>

struct mrow {
    uint64_t cell;
    uint32_t file, row;
    uint32_t shard; /* K of the row's K/N */
};

static int cmp_mrow(const void *a, const void *b)
{
    const struct mrow *x = a, *y = b;
    return x->cell < y->cell ? -1 : x->cell > y->cell;
}

static int same_header(const struct sb_table *a, const struct sb_table *b, struct sb_err *e)
{
    if (a->n_cols != b->n_cols)
        return sb_errf(e, "%s:1: %u columns, %s has %u", b->path, b->n_cols, a->path,
                       a->n_cols);
    for (uint32_t c = 0; c < a->n_cols; c++)
        if (strcmp(a->cell[c], b->cell[c]))
            return sb_errf(e, "%s:1: column %u is '%s', in %s it is '%s'", b->path, c + 1,
                           b->cell[c], a->path, a->cell[c]);
    return 0;
}

/* A cell index: decimal digits only (strtoull would take "-1" as 2^64 - 1). */
static int parse_u64(const char *s, uint64_t *out)
{
    if (!*s || strspn(s, "0123456789") != strlen(s) || strlen(s) > 19)
        return -1;
    *out = strtoull(s, NULL, 10);
    return 0;
}

struct ident {
    int c_cell, c_shard, c_id, c_cells;
    const char *id;      /* of the first row: every row must agree */
    uint64_t cells;      /* cells in the whole sweep */
    uint32_t shards;     /* N of --shard K/N; nothing is sized by it (a file
                            saying 1/4294967295 made merge allocate 4 GiB) */
};

static int columns(const struct sb_table *t, struct ident *I, struct sb_err *e)
{
    I->c_cell = sb_table_col(t, "cell");
    I->c_shard = sb_table_col(t, "shard");
    I->c_id = sb_table_col(t, "sweep_id");
    I->c_cells = sb_table_col(t, "sweep_cells");
    if (I->c_cell < 0)
        return sb_errf(e, "%s:1: no 'cell' column: not a schedbench run results file",
                       t->path);
    if (I->c_shard < 0 || I->c_id < 0 || I->c_cells < 0)
        return sb_errf(e, "%s:1: no shard/sweep_id/sweep_cells columns: written by an "
                          "older schedbench; rerun the shards", t->path);
    return 0;
}

/* One row against the sweep of the first: same identity, a shard of the same
 * N, a cell inside the sweep. */
static int check_row(const struct sb_table *t, uint32_t r, struct ident *I, struct mrow *m,
                     struct sb_err *e)
{
    uint64_t *cell = &m->cell;
    unsigned line = t->line[r + 1];
    const char *id = sb_table_get(t, r, (uint32_t)I->c_id);
    const char *cs = sb_table_get(t, r, (uint32_t)I->c_cells);
    const char *sh = sb_table_get(t, r, (uint32_t)I->c_shard);
    const char *c = sb_table_get(t, r, (uint32_t)I->c_cell);
    uint64_t cells;
    uint32_t k, n;
    const char *why;
    if (parse_u64(c, cell))
        return sb_errf(e, "%s:%u: cell '%s' is not a non-negative integer", t->path, line, c);
    if (parse_u64(cs, &cells))
        return sb_errf(e, "%s:%u: sweep_cells '%s' is not a non-negative integer", t->path,
                       line, cs);
    /* run's own rule (core/num.h): sscanf's %u took 1/4294967297 as 1/1 */
    if (sb_num_shard(sh, UINT32_MAX, &k, &n, &why))
        return sb_errf(e, "%s:%u: shard '%s' is not K/N with 1 <= K <= N <= 4294967295 (%s)",
                       t->path, line, sh, why);
    if (!I->id)
        I->id = id, I->cells = cells, I->shards = n;
    if (strcmp(id, I->id) || cells != I->cells)
        return sb_errf(e, "%s:%u: this row is from another sweep (sweep_id %s, %llu cells; "
                          "the first file's is %s, %llu cells): shards of runs with other "
                          "workloads, schedulers, cost model, --cost, --sim or --machine "
                          "cannot be merged", t->path, line, id, (unsigned long long)cells,
                       I->id, (unsigned long long)I->cells);
    if (n != I->shards)
        return sb_errf(e, "%s:%u: shard %s, but the first file's rows are of %u shards",
                       t->path, line, sh, I->shards);
    if (*cell >= cells)
        return sb_errf(e, "%s:%u: cell %llu is outside the sweep's %llu cells", t->path, line,
                       (unsigned long long)*cell, (unsigned long long)cells);
    m->shard = k;
    return 0;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* After sorting: every cell of the sweep exactly once. */
static int complete(struct sb_table *t, const struct mrow *m, uint64_t k, const struct ident *I,
                    struct sb_err *e)
{
    for (uint64_t i = 1; i < k; i++)
        if (m[i].cell == m[i - 1].cell)
            return sb_errf(e, "%s:%u: cell %llu also in %s:%u (the same shard twice?)",
                           t[m[i].file].path, t[m[i].file].line[m[i].row + 1],
                           (unsigned long long)m[i].cell, t[m[i - 1].file].path,
                           t[m[i - 1].file].line[m[i - 1].row + 1]);
    if (k == I->cells)
        return 0;
    /* the shards given, sorted and distinct: at most one per row */
    uint32_t *have = sb_xmalloc((k + 1) * sizeof *have), n_have = 0;
    for (uint64_t i = 0; i < k; i++)
        have[i] = m[i].shard;
    qsort(have, k, sizeof *have, cmp_u32);
    for (uint64_t i = 0; i < k; i++)
        if (!n_have || have[n_have - 1] != have[i])
            have[n_have++] = have[i];
    /* the shards not given among those that own a cell (shard s owns cells
     * s - 1, s - 1 + N, ...: the first min(N, cells)), walked beside the
     * sorted list, so the walk ends after n_have + the shards named */
    char missing[256] = "";
    size_t off = 0;
    uint64_t owners = I->cells < I->shards ? I->cells : I->shards;
    uint32_t j = 0;
    for (uint64_t s = 1; s <= owners && off < sizeof missing - 16; s++) {
        while (j < n_have && have[j] < s)
            j++;
        if (j < n_have && have[j] == s)
            continue;
        off += (size_t)snprintf(missing + off, sizeof missing - off, "%s%llu/%u",
                                off ? ", " : "", (unsigned long long)s, I->shards);
    }
    free(have);
    if (off)
        return sb_errf(e, "merge: %llu of %llu cells: shard %s not given",
                       (unsigned long long)k, (unsigned long long)I->cells, missing);
    uint64_t gap = 0;
    while (gap < k && m[gap].cell == gap)
        gap++;
    return sb_errf(e, "merge: %llu of %llu cells: cell %llu is missing (a shard's file is "
                      "incomplete)", (unsigned long long)k, (unsigned long long)I->cells,
                   (unsigned long long)gap);
}

static int collect(struct sb_table *t, uint32_t n, struct mrow **out, uint64_t *n_out,
                   struct sb_err *e)
{
    struct ident I = {0};
    if (columns(&t[0], &I, e))
        return -1;
    uint64_t total = 0, k = 0;
    for (uint32_t f = 0; f < n; f++)
        total += t[f].n_rows;
    struct mrow *m = sb_xmalloc((total + 1) * sizeof *m);
    int rc = 0;
    for (uint32_t f = 0; f < n && !rc; f++)
        for (uint32_t r = 0; r < t[f].n_rows && !rc; r++) {
            rc = check_row(&t[f], r, &I, &m[k], e);
            m[k].file = f, m[k].row = r;
            k++;
        }
    if (!rc) {
        qsort(m, k, sizeof *m, cmp_mrow);
        rc = complete(t, m, k, &I, e);
    }
    if (rc) {
        free(m);
        return -1;
    }
    *out = m;
    *n_out = k;
    return 0;
}

static int write_merged(struct sb_atomic *out, struct sb_table *t, const struct mrow *m,
                        uint64_t n, struct sb_err *e)
{
    for (uint32_t c = 0; c < t[0].n_cols; c++)
        sb_csv_field(out->f, t[0].cell[c], c == 0);
    sb_csv_end(out->f);
    for (uint64_t i = 0; i < n; i++) {
        for (uint32_t c = 0; c < t[0].n_cols; c++)
            sb_csv_field(out->f, sb_table_get(&t[m[i].file], m[i].row, c), c == 0);
        sb_csv_end(out->f);
    }
    return sb_atomic_commit(out, e);
}

int sb_cmd_merge(int argc, char **argv)
{
    const char *out = NULL;
    uint32_t n = 0;
    char **in = sb_xcalloc((size_t)argc, sizeof *in);
    struct sb_opt_seen once = {0};
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            printf("usage: schedbench merge A.csv B.csv ... -o ALL.csv\n"
                   "Joins the results of `schedbench run --shard K/N` runs in sweep order.\n"
                   "-o - writes them to standard output.\n");
            free(in);
            return 0;
        }
        struct sb_err oe;
        if (!strcmp(argv[i], "-o") && i + 1 < argc) {
            if (sb_opt_once(&once, "merge", "-o", argv[i + 1], &oe)) {
                fprintf(stderr, "%s\n", oe.msg);
                free(in);
                return 2;
            }
            out = argv[++i];
        } else if (argv[i][0] == '-' && argv[i][1]) {
            fprintf(stderr, "schedbench merge: unknown option '%s' (see --help)\n", argv[i]);
            free(in);
            return 2;
        } else
            in[n++] = argv[i];
    }
    if (!out || !n) {
        fprintf(stderr, "usage: schedbench merge A.csv B.csv ... -o ALL.csv\n");
        free(in);
        return 2;
    }
    struct sb_err e;
    struct sb_atomic dst;
    /* the output first: refused before the shards are read (util.h) */
    if (sb_atomic_open(&dst, out, &e)) {
        fprintf(stderr, "schedbench merge: %s\n", e.msg);
        free(in);
        return 2;
    }
    struct sb_table *t = sb_xcalloc(n, sizeof *t);
    struct mrow *m = NULL;
    uint64_t n_rows = 0;
    int rc = 0;
    for (uint32_t f = 0; f < n && !rc; f++)
        rc = sb_table_read(&t[f], in[f], &e) || (f && same_header(&t[0], &t[f], &e));
    if (!rc)
        rc = collect(t, n, &m, &n_rows, &e);
    if (!rc)
        rc = write_merged(&dst, t, m, n_rows, &e); /* commits */
    else
        sb_atomic_abort(&dst);
    if (rc)
        fprintf(stderr, "%s\n", e.msg);
    for (uint32_t f = 0; f < n; f++)
        sb_table_free(&t[f]); /* unread or failed tables are zeroed: a no-op */
    free(m);
    free(t);
    free(in);
    return rc ? 2 : 0;
}
