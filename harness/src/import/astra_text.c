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

#include "core/builder.h"

#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_TOK 16

struct layer {
    char *name;        /* any length: names reach the graph whole */
    double t[3];       /* fwd, ig, wg compute in cycles */
    char coll[3][24];  /* ALLREDUCE, ALLGATHER, REDUCESCATTER, ALLTOALL, NONE */
    uint64_t size[3];
    double update;
    char policy[40];   /* HYBRID_CUSTOMIZED: the layer's own parallelism */
    uint32_t line;
};

struct text {
    const char *path;
    const struct sb_import_opts *o;
    char kind[64];
    uint32_t model_group; /* model_parallel_NPU_group: N, else 0 */
    uint32_t n;
    struct layer *l;
};

/* A token: copied whole when it is a name, cut at TOK_CHARS for the numbers
 * and keywords (no number or keyword of the format is that long, and the cut
 * token is still refused). */
#define TOK_CHARS 127
struct tok {
    const char *s; /* into the buffer */
    size_t n;
    char c[TOK_CHARS + 1]; /* s, NUL-terminated and cut */
};

/* Splits the next line into blank-separated tokens; returns the count, or -1
 * at the end of the buffer. */
static int next_line(const char **p, const char *end, struct tok tok[MAX_TOK], uint32_t *line)
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
            size_t k = (size_t)(c - w) < TOK_CHARS ? (size_t)(c - w) : TOK_CHARS;
            tok[n].s = w;
            tok[n].n = (size_t)(c - w);
            memcpy(tok[n].c, w, k);
            tok[n++].c[k] = 0;
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

static int read_layer(struct text *X, struct tok tok[MAX_TOK], int n, uint32_t line,
                      struct layer *L, struct sb_err *e)
{
    if (n != 12 && n != 13)
        return sb_errf(e, "%s:%u: a layer has 12 fields (13 with a per-layer policy), this "
                          "line has %d", X->path, line, n);
    L->name = memcpy(sb_xcalloc(tok[0].n + 1, 1), tok[0].s, tok[0].n);
    for (int k = 0; k < 3; k++) {
        double size;
        const char *t = tok[2 + 3 * k].c, *c = tok[3 + 3 * k].c, *s = tok[4 + 3 * k].c;
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
    if (number(tok[11].c, &L->update))
        return sb_errf(e, "%s:%u: field 12 '%s' is not an update time in cycles", X->path,
                       line, tok[11].c);
    snprintf(L->policy, sizeof L->policy, "%.36s", n == 13 ? tok[12].c : X->kind);
    return 0;
}

static int parse(struct text *X, const char *buf, size_t n, struct sb_err *e)
{
    struct tok tok[MAX_TOK];
    const char *p = buf, *end = buf + n;
    uint32_t line = 0;
    int k;
    while ((k = next_line(&p, end, tok, &line)) == 0)
        ;
    if (k < 0)
        return sb_errf(e, "%s:1: empty file: expected a parallelism line (DATA, MODEL, ...)",
                       X->path);
    snprintf(X->kind, sizeof X->kind, "%.60s", tok[0].c);
    for (int i = 1; i + 1 < k; i++)
        if (!strcmp(tok[i].c, "model_parallel_NPU_group:"))
            X->model_group = (uint32_t)strtoul(tok[i + 1].c, NULL, 10);
    while ((k = next_line(&p, end, tok, &line)) == 0)
        ;
    double layers;
    if (k < 1 || number(tok[0].c, &layers) || layers < 1 || layers > 1e6 ||
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
        X->l[i].line = line;
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

/* Times kept to the picosecond (10^-6 us), as the format v1 files this
 * importer once wrote carried them, so results do not move with the path. */
static double us_to_ps(double us) { return nearbyint(us * 1e6) / 1e6; }

struct out {
    struct sb_builder *b;
    uint64_t line; /* the layer's line, for messages */
};

static uint32_t compute(struct out *O, const char *name, double us, const uint32_t *in, int n_in)
{
    struct sb_node_in n = SB_NODE_IN_INIT;
    n.name = name;
    n.op = "comp";
    n.cost_us = us_to_ps(us);
    n.loc = O->line;
    uint32_t id = sb_builder_node(O->b, &n);
    for (int i = 0; i < n_in && id != SB_NONE; i++)
        if (sb_builder_input(O->b, in[i]))
            id = SB_NONE;
    return id;
}

/* start + done; returns the done */
static uint32_t collective(struct out *O, const char *name, const char *coll, uint64_t bytes,
                           uint32_t group, uint32_t in)
{
    struct sb_node_in n = SB_NODE_IN_INIT;
    n.name = name;
    n.kind = SB_KIND_START;
    SB_ASSERT(sb_coll_parse(coll, &n.coll) == 0);
    n.comm_bytes = bytes;
    n.group_size = group;
    n.loc = O->line;
    uint32_t s = sb_builder_node(O->b, &n);
    if (s == SB_NONE || sb_builder_input(O->b, in))
        return SB_NONE;
    char *done = sb_strf("%s.done", name);
    struct sb_node_in d = SB_NODE_IN_INIT;
    d.name = done;
    d.kind = SB_KIND_DONE;
    d.coll = n.coll;
    d.loc = O->line;
    uint32_t id = sb_builder_node(O->b, &d);
    free(done);
    return id == SB_NONE || sb_builder_input(O->b, s) ? SB_NONE : id;
}

/* Layer i's node named "L<i>.<layer>.<what>" (names are prefixed by the
 * layer's index: real files repeat layer names). */
static uint32_t layer_compute(struct out *O, const struct text *X, uint32_t i, const char *what,
                              double cycles, const uint32_t *in, int n_in)
{
    char *name = sb_strf("L%u.%s.%s", i, X->l[i].name, what);
    O->line = X->l[i].line;
    double us = 1e-3 / X->o->clock_ghz; /* per cycle */
    uint32_t id = compute(O, name, cycles * us, in, n_in);
    free(name);
    return id;
}

static uint32_t layer_coll(struct out *O, const struct text *X, uint32_t i, int pass,
                           uint32_t in)
{
    static const char *const pass_name[3] = {"fwd", "ig", "wg"};
    const struct layer *L = &X->l[i];
    char *name = sb_strf("L%u.%s.%s.%s", i, L->name, pass_name[pass], L->coll[pass]);
    O->line = L->line;
    uint32_t id = collective(O, name, our_coll(L->coll[pass]), L->size[pass],
                             group_of(X, L, pass), in);
    free(name);
    return id;
}

static struct sb_graph *build(const struct text *X, struct sb_err *e)
{
    struct out O = {sb_builder_new(X->path, SB_LOC_LINE, e), 0};
    char ranks[16];
    snprintf(ranks, sizeof ranks, "%u", X->o->npus);
    sb_builder_meta(O.b, "source", "astra-sim-text");
    sb_builder_meta(O.b, "parallelism", X->kind);
    sb_builder_meta(O.b, "tensor_sizes", "none");
    sb_builder_meta(O.b, "ranks", ranks);
    uint32_t prev = UINT32_MAX;
    /* forward: layer by layer; a forward collective blocks the next layer */
    for (uint32_t i = 0; i < X->n; i++) {
        prev = layer_compute(&O, X, i, "fwd", X->l[i].t[0], &prev, prev != UINT32_MAX);
        if (strcmp(X->l[i].coll[0], "NONE"))
            prev = layer_coll(&O, X, i, 0, prev);
    }
    /* backward: last layer first; weight gradient and its collective, then the
     * input gradient and its blocking collective.  The updates wait only for
     * their weight-gradient collectives: ASTRA-sim applies them as those
     * finish while the backward pass goes on, so on one compute stream they
     * come after it, in the order their layers finished. */
    uint32_t *upd_in = sb_xmalloc((X->n + 1) * sizeof *upd_in);
    for (uint32_t j = X->n; j-- > 0;) {
        const struct layer *L = &X->l[j];
        uint32_t wg = layer_compute(&O, X, j, "wg", L->t[2], &prev, 1);
        upd_in[j] = wg;
        if (strcmp(L->coll[2], "NONE"))
            upd_in[j] = layer_coll(&O, X, j, 2, wg);
        if (j == 0)
            break; /* the first layer has no input gradient to pass back */
        prev = layer_compute(&O, X, j, "ig", L->t[1], &wg, 1);
        if (strcmp(L->coll[1], "NONE"))
            prev = layer_coll(&O, X, j, 1, prev);
    }
    for (uint32_t j = X->n; j-- > 0;)
        layer_compute(&O, X, j, "update", X->l[j].update, &upd_in[j], 1);
    free(upd_in);
    if (sb_builder_failed(O.b)) {
        sb_builder_free(O.b);
        return NULL;
    }
    return sb_builder_finish(O.b);
}

struct sb_graph *sb_astra_text_load_mem(const char *path, const char *buf, size_t n,
                                        const struct sb_import_opts *o, struct sb_err *e)
{
    struct text X = {.path = path, .o = o};
    struct sb_graph *g = NULL;
    if (memchr(buf, 0, n))
        sb_errf(e, "%s: NUL byte: not a text workload", path);
    else if (!parse(&X, buf, n, e))
        g = build(&X, e);
    for (uint32_t i = 0; X.l && i < X.n; i++)
        free(X.l[i].name);
    free(X.l);
    return g;
}
