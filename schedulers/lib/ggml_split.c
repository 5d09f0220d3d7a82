/* The policy toolkit's ggml splitter (schedbench/policy.h, sb_ggml_*):
 * ggml's backend scheduler (ggml_backend_sched_split_graph, ggml-org/ggml
 * src/ggml-backend.cpp at d99724f) re-implemented over a description of the
 * graph and the backends' answers, so that the same code runs ggml's own cases
 * (schedbench conform, harness/src/cmd/conform_ggml.c) and our graphs (the
 * ggml policy, schedulers/ggml.c); docs/ggml.md.
 *
 *   pass 1  pre-allocated tensors go to the highest-priority backend that reads
 *           their buffer and runs the op; graph inputs to the last backend;
 *           ops reading weights follow the weights, unless a higher-priority
 *           backend asks to offload the op (op_offload); ROPE and
 *           FLASH_ATTN_EXT are exempt from the weight rule;
 *   pass 2  four sweeps spread assignments to unassigned neighbours: non-CPU
 *           backends down then up, then every backend down then up; a sweep's
 *           backend changes only at assigned nodes;
 *   pass 3  assigned nodes move up to a higher-priority backend with the same
 *           buffer type that reads all their sources; unassigned ones go to
 *           the backend that can read most of their sources (ties: priority);
 *   pass 4  views follow their view_src, sources their consumer;
 *   pass 5  the node list is cut into splits at backend changes, at weights
 *           the split's backend cannot read, and when a full split's inputs
 *           need another copy; each split records its foreign inputs. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "schedbench/policy.h"

struct st {
    const struct sb_ggml_arrays *p;
    int32_t *a;      /* backend of each tensor */
    uint8_t *copied; /* [n * n_backends] a copy of tensor t on backend b exists */
};

/* b is -1 for a node no backend can run (ggml asserts there; we answer no) */
static int reads(const struct sb_ggml_arrays *p, int32_t b, int32_t buft)
{
    return b >= 0 && (uint32_t)b < p->n_backends && buft >= 0 &&
           (uint32_t)buft < p->n_bufts && p->reads[(size_t)b * p->n_bufts + (uint32_t)buft];
}

static int supports(const struct sb_ggml_arrays *p, uint32_t t, uint32_t b)
{
    return p->supports[(size_t)t * p->n_backends + b];
}

/* ggml_backend_sched_backend_from_buffer: the tensor's own buffer */
static int32_t from_buffer(const struct sb_ggml_arrays *p, uint32_t t, uint32_t op)
{
    int32_t buft = p->buft[t];
    if (buft < 0)
        return SB_GGML_NONE;
    for (uint32_t b = 0; b < p->n_backends; b++)
        if (reads(p, (int32_t)b, buft) && supports(p, op, b))
            return (int32_t)b;
    return SB_GGML_NONE;
}

/* ggml_backend_sched_backend_id_from_cur (pass 1) */
static int32_t from_cur(const struct sb_ggml_arrays *p, uint32_t t)
{
    int32_t b = from_buffer(p, t, t), vs = p->view_src[t];
    if (b != SB_GGML_NONE)
        return b;
    if (vs != SB_GGML_NONE && (b = from_buffer(p, (uint32_t)vs, t)) != SB_GGML_NONE)
        return b;
    if (p->flags[t] & SB_GGML_F_INPUT)
        return (int32_t)p->n_backends - 1; /* the last backend, assumed the CPU */
    if (p->flags[t] & SB_GGML_F_EXEMPT)
        return SB_GGML_NONE;
    for (uint32_t j = p->src_off[t]; j < p->src_off[t + 1]; j++) {
        int32_t s = p->src[j];
        if (s == SB_GGML_NONE || p->buft[s] < 0 || p->usage[s] != SB_GGML_USAGE_WEIGHTS)
            continue;
        int32_t sb = from_buffer(p, (uint32_t)s, t);
        if (p->op_offload && sb == (int32_t)p->n_backends - 1)
            for (int32_t c = 0; c < sb; c++)
                if (supports(p, t, (uint32_t)c) &&
                    p->offload[(size_t)t * p->n_backends + (uint32_t)c])
                    return c;
        return sb;
    }
    return SB_GGML_NONE;
}

/* ggml_backend_sched_buffer_supported */
static int buffer_supported(const struct st *S, uint32_t t, int32_t b)
{
    const struct sb_ggml_arrays *p = S->p;
    int32_t vs = p->view_src[t];
    int32_t buft = vs != SB_GGML_NONE ? p->buft[vs] : p->buft[t];
    if (buft < 0) {
        int32_t id = S->a[t];
        if (id == SB_GGML_NONE && vs != SB_GGML_NONE)
            id = S->a[vs];
        buft = id >= 0 && (uint32_t)id < p->n_backends ? p->backend_buft[id] : SB_GGML_NONE;
    }
    return reads(p, b, buft);
}

static void sweep(struct st *S, int down, int skip_cpu)
{
    const struct sb_ggml_arrays *p = S->p;
    int32_t cur = SB_GGML_NONE;
    for (uint32_t k = 0; k < p->n_nodes; k++) {
        uint32_t t = p->n_leafs + (down ? k : p->n_nodes - 1 - k);
        if (p->flags[t] & SB_GGML_F_VIEW)
            continue;
        if (S->a[t] != SB_GGML_NONE)
            cur = skip_cpu && S->a[t] == (int32_t)p->n_backends - 1 ? SB_GGML_NONE : S->a[t];
        else if (cur != SB_GGML_NONE && supports(p, t, (uint32_t)cur))
            S->a[t] = cur;
    }
}

static void pass3(struct st *S)
{
    const struct sb_ggml_arrays *p = S->p;
    for (uint32_t t = p->n_leafs; t < p->n_leafs + p->n_nodes; t++) {
        if (p->flags[t] & SB_GGML_F_VIEW)
            continue;
        uint32_t j0 = p->src_off[t], j1 = p->src_off[t + 1];
        if (S->a[t] == SB_GGML_NONE) { /* the backend reading most of its sources */
            int best = -1;
            for (uint32_t b = 0; b < p->n_backends; b++) {
                if (!supports(p, t, b))
                    continue;
                int n = 0;
                for (uint32_t j = j0; j < j1; j++) {
                    int32_t s = p->src[j];
                    if (s == SB_GGML_NONE)
                        continue;
                    int32_t vs = p->view_src[s];
                    if ((S->a[s] != SB_GGML_NONE || (vs != SB_GGML_NONE && S->a[vs] != SB_GGML_NONE)) &&
                        buffer_supported(S, (uint32_t)s, (int32_t)b))
                        n++;
                }
                if (n > best) /* strict: a tie keeps the higher priority */
                    best = n, S->a[t] = (int32_t)b;
            }
        } else { /* upgrade to a higher priority sharing the buffer type */
            for (int32_t b = 0; b < S->a[t]; b++) {
                if (p->backend_buft[b] != p->backend_buft[S->a[t]] || !supports(p, t, (uint32_t)b))
                    continue;
                int ok = 1;
                for (uint32_t j = j0; j < j1 && ok; j++)
                    ok = p->src[j] == SB_GGML_NONE || buffer_supported(S, (uint32_t)p->src[j], b);
                if (ok) {
                    S->a[t] = b;
                    break;
                }
            }
        }
    }
}

static void pass4(struct st *S)
{
    const struct sb_ggml_arrays *p = S->p;
    for (uint32_t t = p->n_leafs; t < p->n_leafs + p->n_nodes; t++) {
        if (p->view_src[t] != SB_GGML_NONE && S->a[t] == SB_GGML_NONE)
            S->a[t] = S->a[p->view_src[t]];
        for (uint32_t j = p->src_off[t]; j < p->src_off[t + 1]; j++) {
            int32_t s = p->src[j];
            if (s == SB_GGML_NONE || S->a[s] != SB_GGML_NONE)
                continue;
            int32_t vs = p->view_src[s];
            S->a[s] = vs != SB_GGML_NONE ? S->a[vs] : S->a[t];
        }
    }
}

static struct sb_ggml_split *new_split(struct sb_ggml_result *r, int32_t backend, uint32_t start)
{
    struct sb_ggml_split *n = realloc(r->splits, (r->n_splits + 1) * sizeof *n);
    if (!n)
        return NULL;
    r->splits = n;
    n += r->n_splits++;
    memset(n, 0, sizeof *n);
    n->backend = backend;
    n->start = start;
    return n;
}

static int add_input(struct sb_ggml_result *r, struct sb_ggml_split *sp, uint32_t t, uint32_t cap0)
{
    if (sp->n_inputs >= sp->cap) {
        uint32_t cap = sp->cap ? sp->cap * 2 : (cap0 ? cap0 : 1); /* never 0: room to grow */
        if (sp->cap && r->n_grow < 64) /* ggml_backend_sched_split_inputs_grow's warning */
            r->grow_from[r->n_grow] = sp->cap, r->grow_to[r->n_grow++] = cap;
        uint32_t *in = realloc(sp->inputs, cap * sizeof *in);
        if (!in)
            return -1;
        sp->inputs = in;
        sp->cap = cap;
    }
    sp->inputs[sp->n_inputs++] = t;
    return 0;
}

/* A new split before node t? Only while the node stays on the split's
 * backend and the split already has an input. */
static int need_cut(const struct st *S, const struct sb_ggml_split *sp, uint32_t t)
{
    const struct sb_ggml_arrays *p = S->p;
    int32_t cur = sp->backend;
    if (S->a[t] != cur || sp->n_inputs == 0 || cur < 0)
        return 0;
    for (uint32_t j = p->src_off[t]; j < p->src_off[t + 1]; j++) {
        int32_t s = p->src[j];
        if (s == SB_GGML_NONE)
            continue;
        /* a weight elsewhere that cur cannot read: ignores existing copies */
        if (p->buft[s] >= 0 && p->usage[s] == SB_GGML_USAGE_WEIGHTS && S->a[s] != cur &&
            !buffer_supported(S, (uint32_t)s, cur))
            return 1;
        /* a full split would need another copy (cuts only when exactly full) */
        if (sp->n_inputs >= sp->cap && S->a[s] != cur &&
            !S->copied[(size_t)s * p->n_backends + (uint32_t)cur] &&
            !buffer_supported(S, (uint32_t)s, cur))
            return 1;
    }
    return 0;
}

static int pass5(struct st *S, struct sb_ggml_result *r)
{
    const struct sb_ggml_arrays *p = S->p;
    uint32_t i = 0;
    while (i < p->n_nodes && (p->flags[p->n_leafs + i] & SB_GGML_F_VIEW))
        i++;
    struct sb_ggml_split *sp =
        new_split(r, i < p->n_nodes ? S->a[p->n_leafs + i] : SB_GGML_NONE, 0);
    if (!sp)
        return -1;
    for (; i < p->n_nodes; i++) {
        uint32_t t = p->n_leafs + i;
        if (p->flags[t] & SB_GGML_F_VIEW)
            continue;
        if (S->a[t] != sp->backend || need_cut(S, sp, t)) {
            sp->end = i;
            if (!(sp = new_split(r, S->a[t], i)))
                return -1;
        }
        int32_t cur = sp->backend;
        /* a node no backend runs (ggml asserts): no copies for it */
        for (uint32_t j = p->src_off[t]; cur >= 0 && j < p->src_off[t + 1]; j++) {
            int32_t s = p->src[j];
            if (s == SB_GGML_NONE || S->a[s] == cur || buffer_supported(S, (uint32_t)s, cur))
                continue;
            uint8_t *c = &S->copied[(size_t)s * p->n_backends + (uint32_t)cur];
            if (!*c) { /* one copy per (tensor, backend) over the whole graph */
                *c = 1;
                if (add_input(r, sp, (uint32_t)s, p->cap0))
                    return -1;
            }
        }
    }
    sp->end = p->n_nodes;
    return 0;
}

int sb_ggml_split_arrays(const struct sb_ggml_arrays *p, struct sb_ggml_result *r)
{
    uint32_t n = p->n_leafs + p->n_nodes;
    struct st S = {.p = p};
    memset(r, 0, sizeof *r);
    r->backend = malloc(((size_t)n + 1) * sizeof *r->backend);
    S.copied = calloc((size_t)n * p->n_backends + 1, 1);
    if (!r->backend || !S.copied) {
        free(S.copied);
        return -1;
    }
    S.a = r->backend;
    for (uint32_t t = 0; t < n; t++) { /* pins are never overwritten */
        S.a[t] = p->pin[t];
        if (S.a[t] == SB_GGML_NONE)
            S.a[t] = from_cur(p, t);
    }
    sweep(&S, 1, 1);
    sweep(&S, 0, 1);
    sweep(&S, 1, 0);
    sweep(&S, 0, 0);
    pass3(&S);
    pass4(&S);
    int rc = pass5(&S, r);
    free(S.copied);
    return rc;
}

/* sb_ggml_tensor records to arrays */
int sb_ggml_split_graph(const struct sb_ggml_problem *q, struct sb_ggml_result *r)
{
    uint32_t n = q->n_leafs + q->n_nodes, nb = q->n_backends, n_src = 0;
    for (uint32_t t = 0; t < n; t++)
        n_src += q->t[t].n_src;
    uint8_t *flags = malloc((size_t)n + 1), *usage = malloc((size_t)n + 1);
    int32_t *view_src = malloc(((size_t)n + 1) * sizeof *view_src);
    int32_t *buft = malloc(((size_t)n + 1) * sizeof *buft);
    int32_t *pin = malloc(((size_t)n + 1) * sizeof *pin);
    uint8_t *sup = malloc((size_t)n * nb + 1), *off = malloc((size_t)n * nb + 1);
    uint32_t *src_off = malloc(((size_t)n + 1) * sizeof *src_off);
    int32_t *src = malloc(((size_t)n_src + 1) * sizeof *src);
    int rc = -1;
    if (flags && usage && view_src && buft && pin && sup && off && src_off && src) {
        src_off[0] = 0;
        for (uint32_t t = 0; t < n; t++) {
            const struct sb_ggml_tensor *x = &q->t[t];
            flags[t] = (uint8_t)((x->view ? SB_GGML_F_VIEW : 0) | (x->exempt ? SB_GGML_F_EXEMPT : 0) |
                                 (x->input ? SB_GGML_F_INPUT : 0));
            usage[t] = x->usage, view_src[t] = x->view_src, buft[t] = x->buft, pin[t] = x->pin;
            if (nb) {
                memcpy(sup + (size_t)t * nb, x->supports, nb);
                memcpy(off + (size_t)t * nb, x->offload, nb);
            }
            if (x->n_src)
                memcpy(src + src_off[t], x->src, x->n_src * sizeof *src);
            src_off[t + 1] = src_off[t] + x->n_src;
        }
        struct sb_ggml_arrays a = {nb, q->n_bufts, q->backend_buft, q->reads, q->op_offload,
                                q->cap0, q->n_leafs, q->n_nodes, flags, view_src, buft, usage,
                                pin, sup, off, src_off, src};
        rc = sb_ggml_split_arrays(&a, r);
    }
    free(flags), free(usage), free(view_src), free(buft), free(pin);
    free(sup), free(off), free(src_off), free(src);
    return rc;
}

void sb_ggml_result_free(struct sb_ggml_result *r)
{
    for (uint32_t k = 0; k < r->n_splits; k++)
        free(r->splits[k].inputs);
    free(r->splits);
    free(r->backend);
    memset(r, 0, sizeof *r);
}
