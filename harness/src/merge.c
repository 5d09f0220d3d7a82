/* `schedbench merge A.csv B.csv ... -o ALL.csv`: joins the results of
 * `run --shard K/N` runs.  Rows are put back in sweep order by their `cell`
 * column, so merging every shard of a sweep gives the file one unsharded run
 * would have written (timing columns aside). */
#define _POSIX_C_SOURCE 200809L
#include "commands.h"
#include "table.h"

#include <stdlib.h>
#include <string.h>

struct mrow {
    uint64_t cell;
    uint32_t file, row;
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

static int collect(struct sb_table *t, uint32_t n, struct mrow **out, uint64_t *n_out,
                   struct sb_err *e)
{
    int cc = sb_table_col(&t[0], "cell");
    if (cc < 0)
        return sb_errf(e, "%s:1: no 'cell' column: not a schedbench run results file",
                       t[0].path);
    uint64_t total = 0, k = 0;
    for (uint32_t f = 0; f < n; f++)
        total += t[f].n_rows;
    struct mrow *m = sb_xmalloc((total + 1) * sizeof *m);
    for (uint32_t f = 0; f < n; f++)
        for (uint32_t r = 0; r < t[f].n_rows; r++) {
            const char *s = sb_table_get(&t[f], r, (uint32_t)cc);
            char *end;
            m[k] = (struct mrow){strtoull(s, &end, 10), f, r};
            if (end == s || *end) {
                free(m);
                return sb_errf(e, "%s:%u: cell '%s' is not an integer", t[f].path,
                               t[f].line[r + 1], s);
            }
            k++;
        }
    qsort(m, k, sizeof *m, cmp_mrow);
    for (uint64_t i = 1; i < k; i++)
        if (m[i].cell == m[i - 1].cell) {
            sb_errf(e, "%s:%u: cell %llu also in %s:%u (the same shard twice?)",
                    t[m[i].file].path, t[m[i].file].line[m[i].row + 1],
                    (unsigned long long)m[i].cell, t[m[i - 1].file].path,
                    t[m[i - 1].file].line[m[i - 1].row + 1]);
            free(m);
            return -1;
        }
    *out = m;
    *n_out = k;
    return 0;
}

static int write_merged(const char *path, struct sb_table *t, const struct mrow *m,
                        uint64_t n, struct sb_err *e)
{
    struct sb_atomic out;
    if (sb_atomic_open(&out, path, e))
        return -1;
    for (uint32_t c = 0; c < t[0].n_cols; c++)
        sb_csv_field(out.f, t[0].cell[c], c == 0);
    sb_csv_end(out.f);
    for (uint64_t i = 0; i < n; i++) {
        for (uint32_t c = 0; c < t[0].n_cols; c++)
            sb_csv_field(out.f, sb_table_get(&t[m[i].file], m[i].row, c), c == 0);
        sb_csv_end(out.f);
    }
    return sb_atomic_commit(&out, e);
}

int sb_cmd_merge(int argc, char **argv)
{
    const char *out = NULL;
    uint32_t n = 0;
    char **in = sb_xcalloc((size_t)argc, sizeof *in);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            printf("usage: schedbench merge A.csv B.csv ... -o ALL.csv\n"
                   "Joins the results of `schedbench run --shard K/N` runs in sweep order.\n");
            free(in);
            return 0;
        }
        if (!strcmp(argv[i], "-o") && i + 1 < argc)
            out = argv[++i];
        else
            in[n++] = argv[i];
    }
    if (!out || !n) {
        fprintf(stderr, "usage: schedbench merge A.csv B.csv ... -o ALL.csv\n");
        free(in);
        return 2;
    }
    struct sb_table *t = sb_xcalloc(n, sizeof *t);
    struct sb_err e;
    struct mrow *m = NULL;
    uint64_t n_rows = 0;
    int rc = 0;
    for (uint32_t f = 0; f < n && !rc; f++)
        rc = sb_table_read(&t[f], in[f], &e) || (f && same_header(&t[0], &t[f], &e));
    if (!rc)
        rc = collect(t, n, &m, &n_rows, &e) || write_merged(out, t, m, n_rows, &e);
    if (rc)
        fprintf(stderr, "%s\n", e.msg);
    for (uint32_t f = 0; f < n; f++)
        sb_table_free(&t[f]); /* unread or failed tables are zeroed: a no-op */
    free(m);
    free(t);
    free(in);
    return rc ? 2 : 0;
}
