/* ASTRA-sim 1.0 text workloads (workloads/importers/astra-text.md).
 *
 *   PARALLELISM [options]        DATA, MODEL, HYBRID_*, MICRO, ...
 *   N                            layers
 *   name reserved fwd_time fwd_type fwd_size ig_time ig_type ig_size
 *        wg_time wg_type wg_size update_time [policy]      (one line per layer)
 *
 * Times are cycles (--import clock_ghz, default 1 GHz: 1 cycle = 1 ns), sizes
 * bytes.  Each layer expands into forward, input-gradient and weight-gradient
 * compute nodes, each followed by its collective, in the order ASTRA-sim's
 * workload layer runs one training step: the forward pass layer by layer,
 * then the backward pass from the last layer, weight gradient before input
 * gradient.  A forward or input-gradient collective blocks the next compute
 * (the activations it carries are needed); a weight-gradient collective only
 * blocks its layer's update, so it overlaps the rest of the backward pass.
 * The real files have CRLF, tabs, runs of separators, trailing blanks, empty
 * tab fields and no final newline: tokens are runs of non-blanks. */
#define _POSIX_C_SOURCE 200809L
#include "import.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_TOK 16

struct layer {
    char name[128];
    double t[3];       /* fwd, ig, wg compute in cycles */
    char coll[3][24];  /* ALLREDUCE, ALLGATHER, REDUCESCATTER, ALLTOALL, NONE */
    uint64_t size[3];
    double update;
    char policy[40];   /* HYBRID_CUSTOMIZED: the layer's own parallelism */
};

struct text {
    const char *path;
    const struct sb_import_opts *o;
    char kind[64];
    uint32_t model_group; /* model_parallel_NPU_group: N, else 0 */
    uint32_t n;
    struct layer *l;
};

/* Splits the next line into blank-separated tokens; returns the count, or -1
 * at the end of the buffer. */
static int next_line(const char **p, const char *end, char tok[MAX_TOK][128], uint32_t *line)
{
    if (*p >= end)
        return -1;
    const char *eol = memchr(*p, '\n', (size_t)(end - *p));
    const char *stop = eol ? eol : end;
    int n = 0;
    for (const char *c = *p; c < stop;) {
        while (c < stop && isspace((unsigned char)*c))
            c++;
        const char *w = c;
        while (c < stop && !isspace((unsigned char)*c))
            c++;
        if (c > w && n < MAX_TOK) {
            size_t k = (size_t)(c - w) < 127 ? (size_t)(c - w) : 127;
            memcpy(tok[n], w, k);
            tok[n++][k] = 0;
        }
    }
    *p = eol ? eol + 1 : end;
    (*line)++;
    return n;
}

static int number(const char *s, double *out)
{
    char *end;
    *out = strtod(s, &end);
    return end == s || *end || !(*out >= 0) || *out > 1e15 ? -1 : 0;
}

static int coll_name(const char *s)
{
    return !strcmp(s, "NONE") || !strcmp(s, "ALLREDUCE") || !strcmp(s, "ALLGATHER") ||
           !strcmp(s, "REDUCESCATTER") || !strcmp(s, "ALLTOALL");
}

static int read_layer(struct text *X, char tok[MAX_TOK][128], int n, uint32_t line,
                      struct layer *L, struct sb_err *e)
{
    if (n != 12 && n != 13)
        return sb_errf(e, "%s:%u: a layer has 12 fields (13 with a per-layer policy), this "
                          "line has %d", X->path, line, n);
    snprintf(L->name, sizeof L->name, "%.100s", tok[0]);
    for (int k = 0; k < 3; k++) {
        double size;
        const char *t = tok[2 + 3 * k], *c = tok[3 + 3 * k], *s = tok[4 + 3 * k];
        if (number(t, &L->t[k]))
            return sb_errf(e, "%s:%u: field %d '%s' is not a compute time in cycles",
                           X->path, line, 3 + 3 * k, t);
        if (!coll_name(c))
            return sb_errf(e, "%s:%u: field %d '%s' is not a collective (ALLREDUCE, "
                              "ALLGATHER, REDUCESCATTER, ALLTOALL, NONE)", X->path, line,
                           4 + 3 * k, c);
        if (number(s, &size) || size > 1125899906842624.0)
            return sb_errf(e, "%s:%u: field %d '%s' is not a size in bytes", X->path, line,
                           5 + 3 * k, s);
        snprintf(L->coll[k], sizeof L->coll[k], "%.20s", c);
        L->size[k] = (uint64_t)size;
    }
    if (number(tok[11], &L->update))
        return sb_errf(e, "%s:%u: field 12 '%s' is not an update time in cycles", X->path,
                       line, tok[11]);
    snprintf(L->policy, sizeof L->policy, "%.36s", n == 13 ? tok[12] : X->kind);
    return 0;
}

static int parse(struct text *X, const char *buf, size_t n, struct sb_err *e)
{
    char tok[MAX_TOK][128];
    const char *p = buf, *end = buf + n;
    uint32_t line = 0;
    int k;
    while ((k = next_line(&p, end, tok, &line)) == 0)
        ;
    if (k < 0)
        return sb_errf(e, "%s:1: empty file: expected a parallelism line (DATA, MODEL, ...)",
                       X->path);
    snprintf(X->kind, sizeof X->kind, "%.60s", tok[0]);
    for (int i = 1; i + 1 < k; i++)
        if (!strcmp(tok[i], "model_parallel_NPU_group:"))
            X->model_group = (uint32_t)strtoul(tok[i + 1], NULL, 10);
    while ((k = next_line(&p, end, tok, &line)) == 0)
        ;
    double layers;
    if (k < 1 || number(tok[0], &layers) || layers < 1 || layers > 1e6 ||
        layers != (double)(uint32_t)layers)
        return sb_errf(e, "%s:%u: expected the number of layers", X->path, line);
    X->n = (uint32_t)layers;
    X->l = sb_xcalloc(X->n, sizeof *X->l);
    for (uint32_t i = 0; i < X->n; i++) {
        while ((k = next_line(&p, end, tok, &line)) == 0)
            ;
        if (k < 0)
            return sb_errf(e, "%s:%u: %u layers announced, %u given", X->path, line + 1, X->n,
                           i);
        if (read_layer(X, tok, k, line, &X->l[i], e))
            return -1;
    }
    return 0;
}

/* ---- the training step as a graph ----------------------------------------- */

static const char *our_coll(const char *c)
{
    return !strcmp(c, "ALLREDUCE") ? "all_reduce" : !strcmp(c, "ALLGATHER") ? "all_gather"
           : !strcmp(c, "REDUCESCATTER") ? "reduce_scatter" : "all_to_all";
}

/* Ranks a layer's collective runs over: data-parallel collectives over the
 * data group, model-parallel ones over the model group. */
static uint32_t group_of(const struct text *X, const struct layer *L, int pass)
{
    uint32_t npus = X->o->npus, model = X->model_group ? X->model_group : npus;
    const char *pol = L->policy;
    int data_wg = pass == 2; /* weight gradients are reduced across data replicas */
    if (!strcmp(pol, "DATA") || !strcmp(pol, "MICRO"))
        return npus;
    if (!strcmp(pol, "MODEL"))
        return npus;
    /* hybrids: HYBRID_DATA_MODEL puts data parallelism inside, MODEL_DATA the
     * other way round; ASTRA-sim's transformer/DLRM hybrids use the model group */
    if (model > npus)
        model = npus;
    return data_wg ? (npus / model ? npus / model : 1) : model;
}

struct out {
    FILE *f;
    uint32_t row;
};

static uint32_t compute(struct out *O, const char *name, double us, const uint32_t *in, int n_in)
{
    fprintf(O->f, "%u", O->row);
    sb_csv_field(O->f, name, 0);
    fputs(",compute,", O->f);
    for (int i = 0; i < n_in; i++)
        fprintf(O->f, "%s%u", i ? " " : "", in[i]);
    fprintf(O->f, ",comp,%.6f,0,,,\n", us);
    return O->row++;
}

/* start + done; returns the done's row */
static uint32_t collective(struct out *O, const char *name, const char *coll, uint64_t bytes,
                           uint32_t group, uint32_t in)
{
    fprintf(O->f, "%u", O->row);
    sb_csv_field(O->f, name, 0);
    fprintf(O->f, ",start,%u,,,0,%s,%" PRIu64 ",%u\n", in, coll, bytes, group);
    fprintf(O->f, "%u", O->row + 1);
    char done[160];
    snprintf(done, sizeof done, "%s.done", name);
    sb_csv_field(O->f, done, 0);
    fprintf(O->f, ",done,%u,,,,%s,,\n", O->row, coll);
    O->row += 2;
    return O->row - 1;
}

static int write_csv(const struct text *X, char **buf, size_t *len)
{
    struct out O = {open_memstream(buf, len), 0};
    SB_ASSERT(O.f);
    double us = 1e-3 / X->o->clock_ghz; /* per cycle */
    char name[200];
    fprintf(O.f, "# source=astra-sim-text\n# parallelism=%s\n# tensor_sizes=none\n# ranks=%u\n",
            X->kind, X->o->npus);
    fprintf(O.f, "id,name,kind,inputs,op,cost_us,out_bytes,coll,comm_bytes,group\n");
    uint32_t prev = UINT32_MAX;
    static const char *const pass_name[3] = {"fwd", "ig", "wg"};
    /* names are prefixed by the layer's index: real files repeat layer names */
    /* forward: layer by layer; a forward collective blocks the next layer */
    for (uint32_t i = 0; i < X->n; i++) {
        const struct layer *L = &X->l[i];
        snprintf(name, sizeof name, "L%u.%s.fwd", i, L->name);
        prev = compute(&O, name, L->t[0] * us, &prev, prev != UINT32_MAX);
        if (strcmp(L->coll[0], "NONE")) {
            snprintf(name, sizeof name, "L%u.%s.fwd.%s", i, L->name, L->coll[0]);
            prev = collective(&O, name, our_coll(L->coll[0]), L->size[0], group_of(X, L, 0), prev);
        }
    }
    /* backward: last layer first; weight gradient and its collective, then the
     * input gradient and its blocking collective.  The updates wait only for
     * their weight-gradient collectives: ASTRA-sim applies them as those
     * finish while the backward pass goes on, so on one compute stream they
     * come after it, in the order their layers finished. */
    uint32_t *upd_in = sb_xmalloc((X->n + 1) * sizeof *upd_in);
    for (uint32_t j = X->n; j-- > 0;) {
        const struct layer *L = &X->l[j];
        snprintf(name, sizeof name, "L%u.%s.wg", j, L->name);
        uint32_t wg = compute(&O, name, L->t[2] * us, &prev, 1);
        upd_in[j] = wg;
        if (strcmp(L->coll[2], "NONE")) {
            snprintf(name, sizeof name, "L%u.%s.wg.%s", j, L->name, L->coll[2]);
            upd_in[j] = collective(&O, name, our_coll(L->coll[2]), L->size[2], group_of(X, L, 2), wg);
        }
        if (j == 0)
            break; /* the first layer has no input gradient to pass back */
        snprintf(name, sizeof name, "L%u.%s.%s", j, L->name, pass_name[1]);
        prev = compute(&O, name, L->t[1] * us, &wg, 1);
        if (strcmp(L->coll[1], "NONE")) {
            snprintf(name, sizeof name, "L%u.%s.ig.%s", j, L->name, L->coll[1]);
            prev = collective(&O, name, our_coll(L->coll[1]), L->size[1], group_of(X, L, 1), prev);
        }
    }
    for (uint32_t j = X->n; j-- > 0;) {
        snprintf(name, sizeof name, "L%u.%s.update", j, X->l[j].name);
        compute(&O, name, X->l[j].update * us, &upd_in[j], 1);
    }
    free(upd_in);
    (void)pass_name;
    fclose(O.f);
    return 0;
}

struct sb_graph *sb_astra_text_load_mem(const char *path, const char *buf, size_t n,
                                        const struct sb_import_opts *o, struct sb_err *e)
{
    struct text X = {.path = path, .o = o};
    char *csv = NULL;
    size_t len = 0;
    struct sb_graph *g = NULL;
    if (memchr(buf, 0, n))
        sb_errf(e, "%s: NUL byte: not a text workload", path);
    else if (!parse(&X, buf, n, e) && !write_csv(&X, &csv, &len))
        g = sb_graph_load_mem(path, csv, len, e);
    free(csv);
    free(X.l);
    return g;
}
