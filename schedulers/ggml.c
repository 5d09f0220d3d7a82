/* ggml: ggml's backend scheduler (ggml_backend_sched_split_graph, ggml-org/ggml
 * src/ggml-backend.cpp at d99724f) re-implemented over a description of the
 * graph and the backends' answers (ggml-impl.h), and a policy that applies it
 * to our graphs on a --machine (docs/ggml.md).
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
#include "ggml-impl.h"

#include <stdlib.h>
#include <string.h>

#include "schedbench/plugin.h"

struct st {
    const struct ggml_arrays *p;
    int32_t *a;      /* backend of each tensor */
    uint8_t *copied; /* [n * n_backends] a copy of tensor t on backend b exists */
};

/* b is -1 for a node no backend can run (ggml asserts there; we answer no) */
static int reads(const struct ggml_arrays *p, int32_t b, int32_t buft)
{
    return b >= 0 && (uint32_t)b < p->n_backends && buft >= 0 &&
           (uint32_t)buft < p->n_bufts && p->reads[(size_t)b * p->n_bufts + (uint32_t)buft];
}

static int supports(const struct ggml_arrays *p, uint32_t t, uint32_t b)
{
    return p->supports[(size_t)t * p->n_backends + b];
}

/* ggml_backend_sched_backend_from_buffer: the tensor's own buffer */
static int32_t from_buffer(const struct ggml_arrays *p, uint32_t t, uint32_t op)
{
    int32_t buft = p->buft[t];
    if (buft < 0)
        return GGML_NONE;
    for (uint32_t b = 0; b < p->n_backends; b++)
        if (reads(p, (int32_t)b, buft) && supports(p, op, b))
            return (int32_t)b;
    return GGML_NONE;
}

/* ggml_backend_sched_backend_id_from_cur (pass 1) */
static int32_t from_cur(const struct ggml_arrays *p, uint32_t t)
{
    int32_t b = from_buffer(p, t, t), vs = p->view_src[t];
    if (b != GGML_NONE)
        return b;
    if (vs != GGML_NONE && (b = from_buffer(p, (uint32_t)vs, t)) != GGML_NONE)
        return b;
    if (p->flags[t] & GGML_F_INPUT)
        return (int32_t)p->n_backends - 1; /* the last backend, assumed the CPU */
    if (p->flags[t] & GGML_F_EXEMPT)
        return GGML_NONE;
    for (uint32_t j = p->src_off[t]; j < p->src_off[t + 1]; j++) {
        int32_t s = p->src[j];
        if (s == GGML_NONE || p->buft[s] < 0 || p->usage[s] != GGML_USAGE_WEIGHTS)
            continue;
        int32_t sb = from_buffer(p, (uint32_t)s, t);
        if (p->op_offload && sb == (int32_t)p->n_backends - 1)
            for (int32_t c = 0; c < sb; c++)
                if (supports(p, t, (uint32_t)c) &&
                    p->offload[(size_t)t * p->n_backends + (uint32_t)c])
                    return c;
        return sb;
    }
    return GGML_NONE;
}

/* ggml_backend_sched_buffer_supported */
static int buffer_supported(const struct st *S, uint32_t t, int32_t b)
{
    const struct ggml_arrays *p = S->p;
    int32_t vs = p->view_src[t];
    int32_t buft = vs != GGML_NONE ? p->buft[vs] : p->buft[t];
    if (buft < 0) {
        int32_t id = S->a[t];
        if (id == GGML_NONE && vs != GGML_NONE)
            id = S->a[vs];
        buft = id >= 0 && (uint32_t)id < p->n_backends ? p->backend_buft[id] : GGML_NONE;
    }
    return reads(p, b, buft);
}

static void sweep(struct st *S, int down, int skip_cpu)
{
    const struct ggml_arrays *p = S->p;
    int32_t cur = GGML_NONE;
    for (uint32_t k = 0; k < p->n_nodes; k++) {
        uint32_t t = p->n_leafs + (down ? k : p->n_nodes - 1 - k);
        if (p->flags[t] & GGML_F_VIEW)
            continue;
        if (S->a[t] != GGML_NONE)
            cur = skip_cpu && S->a[t] == (int32_t)p->n_backends - 1 ? GGML_NONE : S->a[t];
        else if (cur != GGML_NONE && supports(p, t, (uint32_t)cur))
            S->a[t] = cur;
    }
}

static void pass3(struct st *S)
{
    const struct ggml_arrays *p = S->p;
    for (uint32_t t = p->n_leafs; t < p->n_leafs + p->n_nodes; t++) {
        if (p->flags[t] & GGML_F_VIEW)
            continue;
        uint32_t j0 = p->src_off[t], j1 = p->src_off[t + 1];
        if (S->a[t] == GGML_NONE) { /* the backend reading most of its sources */
            int best = -1;
            for (uint32_t b = 0; b < p->n_backends; b++) {
                if (!supports(p, t, b))
                    continue;
                int n = 0;
                for (uint32_t j = j0; j < j1; j++) {
                    int32_t s = p->src[j];
                    if (s == GGML_NONE)
                        continue;
                    int32_t vs = p->view_src[s];
                    if ((S->a[s] != GGML_NONE || (vs != GGML_NONE && S->a[vs] != GGML_NONE)) &&
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
                    ok = p->src[j] == GGML_NONE || buffer_supported(S, (uint32_t)p->src[j], b);
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
    const struct ggml_arrays *p = S->p;
    for (uint32_t t = p->n_leafs; t < p->n_leafs + p->n_nodes; t++) {
        if (p->view_src[t] != GGML_NONE && S->a[t] == GGML_NONE)
            S->a[t] = S->a[p->view_src[t]];
        for (uint32_t j = p->src_off[t]; j < p->src_off[t + 1]; j++) {
            int32_t s = p->src[j];
            if (s == GGML_NONE || S->a[s] != GGML_NONE)
                continue;
            int32_t vs = p->view_src[s];
            S->a[s] = vs != GGML_NONE ? S->a[vs] : S->a[t];
        }
    }
}

static struct ggml_split *new_split(struct ggml_result *r, int32_t backend, uint32_t start)
{
    struct ggml_split *n = realloc(r->splits, (r->n_splits + 1) * sizeof *n);
    if (!n)
        return NULL;
    r->splits = n;
    n += r->n_splits++;
    memset(n, 0, sizeof *n);
    n->backend = backend;
    n->start = start;
    return n;
}

static int add_input(struct ggml_result *r, struct ggml_split *sp, uint32_t t, uint32_t cap0)
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
static int need_cut(const struct st *S, const struct ggml_split *sp, uint32_t t)
{
    const struct ggml_arrays *p = S->p;
    int32_t cur = sp->backend;
    if (S->a[t] != cur || sp->n_inputs == 0 || cur < 0)
        return 0;
    for (uint32_t j = p->src_off[t]; j < p->src_off[t + 1]; j++) {
        int32_t s = p->src[j];
        if (s == GGML_NONE)
            continue;
        /* a weight elsewhere that cur cannot read: ignores existing copies */
        if (p->buft[s] >= 0 && p->usage[s] == GGML_USAGE_WEIGHTS && S->a[s] != cur &&
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

static int pass5(struct st *S, struct ggml_result *r)
{
    const struct ggml_arrays *p = S->p;
    uint32_t i = 0;
    while (i < p->n_nodes && (p->flags[p->n_leafs + i] & GGML_F_VIEW))
        i++;
    struct ggml_split *sp =
        new_split(r, i < p->n_nodes ? S->a[p->n_leafs + i] : GGML_NONE, 0);
    if (!sp)
        return -1;
    for (; i < p->n_nodes; i++) {
        uint32_t t = p->n_leafs + i;
        if (p->flags[t] & GGML_F_VIEW)
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
            if (s == GGML_NONE || S->a[s] == cur || buffer_supported(S, (uint32_t)s, cur))
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

int sb_ggml_split_arrays(const struct ggml_arrays *p, struct ggml_result *r)
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
        if (S.a[t] == GGML_NONE)
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

/* ggml_t records to arrays */
int sb_ggml_split_graph(const struct ggml_problem *q, struct ggml_result *r)
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
            const struct ggml_t *x = &q->t[t];
            flags[t] = (uint8_t)((x->view ? GGML_F_VIEW : 0) | (x->exempt ? GGML_F_EXEMPT : 0) |
                                 (x->input ? GGML_F_INPUT : 0));
            usage[t] = x->usage, view_src[t] = x->view_src, buft[t] = x->buft, pin[t] = x->pin;
            if (nb) {
                memcpy(sup + (size_t)t * nb, x->supports, nb);
                memcpy(off + (size_t)t * nb, x->offload, nb);
            }
            if (x->n_src)
                memcpy(src + src_off[t], x->src, x->n_src * sizeof *src);
            src_off[t + 1] = src_off[t] + x->n_src;
        }
        struct ggml_arrays a = {nb, q->n_bufts, q->backend_buft, q->reads, q->op_offload,
                                q->cap0, q->n_leafs, q->n_nodes, flags, view_src, buft, usage,
                                pin, sup, off, src_off, src};
        rc = sb_ggml_split_arrays(&a, r);
    }
    free(flags), free(usage), free(view_src), free(buft), free(pin);
    free(sup), free(off), free(src_off), free(src);
    return rc;
}

void sb_ggml_result_free(struct ggml_result *r)
{
    for (uint32_t k = 0; k < r->n_splits; k++)
        free(r->splits[k].inputs);
    free(r->splits);
    free(r->backend);
    memset(r, 0, sizeof *r);
}

/* ---- the policy: our graph on a machine ----------------------------------- */

enum { P_OP_OFFLOAD, P_SPLIT_INPUTS, P_BARRIER, P_COUNT };

static const struct sb_param ggml_params[] = {
    {"op_offload", SB_PARAM_BOOL, 1, 0, 1, NULL,
     "a higher-priority device may take an op whose weights are on the last device "
     "(llama.cpp's default, ggml_backend_sched_new's op_offload)"},
    {"split_inputs", SB_PARAM_INT, 30, 1, 1 << 20, NULL,
     "initial capacity of a split's inputs (GGML_SCHED_MAX_SPLIT_INPUTS)"},
    {"barrier", SB_PARAM_BOOL, 0, 0, 1, NULL,
     "a global barrier between consecutive splits (the old model); 0: each node waits "
     "for its own inputs and their copies, as ggml's events"},
};

struct conf {
    int op_offload;
    uint32_t cap0;
    int barrier;
};

static int ci_equal(const char *a, const char *b)
{
    for (; *a && *b; a++, b++)
        if ((*a | 32) != (*b | 32))
            return 0;
    return !*a && !*b;
}

struct built {
    struct ggml_arrays p;
    uint32_t *tensor_of;   /* [n] our node -> tensor index */
    uint32_t *node_of;     /* [L + N] tensor index -> our node */
    uint8_t *flags, *usage, *sup, *off, *reads, *exempt_op;
    int32_t *view_src, *buft, *pin, *src, *bb;
    uint32_t *src_off;
};

static void built_free(struct built *B)
{
    free(B->tensor_of), free(B->node_of), free(B->flags), free(B->usage), free(B->sup);
    free(B->off), free(B->reads), free(B->exempt_op), free(B->view_src), free(B->buft);
    free(B->pin), free(B->src), free(B->bb), free(B->src_off);
}

static uint32_t root_of(const struct sb_graph_view *g, uint32_t v)
{
    while (((g->flags[v] & SB_FLAG_ALIAS) || g->kind[v] == SB_KIND_DONE) &&
           g->pred_off[v] < g->pred_off[v + 1])
        v = g->pred[g->pred_off[v]];
    return v;
}

/* Leafs are our inputs, nodes everything else, both in id order; devices are
 * backends in priority order with one buffer type each; weights live on their
 * pre-assigned device (the last, the CPU, when none); pre-assigned compute is
 * pinned.  Written straight into the arrays the passes read. */
static int build(const struct sb_graph_view *g, const struct conf *cf, struct built *B)
{
    uint32_t n = g->n_nodes, nd = g->machine->n_devices, L = 0, e_leafs = 0;
    size_t n1 = (size_t)n + 1;
    for (uint32_t v = 0; v < n; v++)
        if (g->kind[v] == SB_KIND_INPUT)
            L++, e_leafs += g->pred_off[v + 1] - g->pred_off[v];
    B->tensor_of = malloc(n1 * sizeof *B->tensor_of);
    B->node_of = malloc(n1 * sizeof *B->node_of);
    B->flags = malloc(n1), B->usage = malloc(n1);
    B->sup = malloc((size_t)n * nd + 1), B->off = calloc((size_t)n * nd + 1, 1);
    B->reads = malloc((size_t)nd * nd);
    B->exempt_op = malloc((size_t)g->n_ops + 1);
    B->view_src = malloc(n1 * sizeof *B->view_src);
    B->buft = malloc(n1 * sizeof *B->buft);
    B->pin = malloc(n1 * sizeof *B->pin);
    B->src = malloc(((size_t)g->n_edges + 1) * sizeof *B->src);
    B->bb = malloc((size_t)nd * sizeof *B->bb);
    B->src_off = malloc((n1 + 1) * sizeof *B->src_off);
    if (!B->tensor_of || !B->node_of || !B->flags || !B->usage || !B->sup || !B->off ||
        !B->reads || !B->exempt_op || !B->view_src || !B->buft || !B->pin || !B->src ||
        !B->bb || !B->src_off)
        return -1;
    uint32_t li = 0, ni = L;
    for (uint32_t v = 0; v < n; v++) {
        uint32_t t = g->kind[v] == SB_KIND_INPUT ? li++ : ni++;
        B->tensor_of[v] = t, B->node_of[t] = v;
    }
    for (uint32_t b = 0; b < nd; b++) {
        B->bb[b] = (int32_t)b;
        for (uint32_t f = 0; f < nd; f++)
            B->reads[(size_t)b * nd + f] = g->machine->can_read[(size_t)b * nd + f];
    }
    for (uint32_t o = 0; o < g->n_ops; o++)
        B->exempt_op[o] = ci_equal(g->op_names[o], "rope") ||
                          ci_equal(g->op_names[o], "flash_attn_ext");
    /* sources by tensor: the leafs' first, then the nodes', each in id order */
    uint32_t e_leaf = 0, e_node = e_leafs;
    for (uint32_t v = 0; v < n; v++) {
        uint32_t t = B->tensor_of[v];
        int is_input = g->kind[v] == SB_KIND_INPUT;
        int view = !is_input && ((g->flags[v] & SB_FLAG_ALIAS) || g->kind[v] == SB_KIND_DONE);
        uint8_t fl = (uint8_t)((view ? GGML_F_VIEW : 0) |
                               (B->exempt_op[g->op[v]] ? GGML_F_EXEMPT : 0));
        int32_t buft = GGML_NONE, pin = GGML_NONE;
        uint8_t usage = GGML_USAGE_NONE;
        if (is_input && (g->flags[v] & SB_FLAG_WEIGHT)) {
            buft = g->device[v] >= 0 ? g->device[v] : (int32_t)nd - 1;
            usage = GGML_USAGE_WEIGHTS;
        } else if (is_input && g->device[v] >= 0) {
            buft = g->device[v], usage = GGML_USAGE_ANY;
        } else if (is_input) {
            fl |= GGML_F_INPUT;
        } else if (g->device[v] >= 0) {
            pin = g->device[v];
        }
        B->flags[t] = fl, B->usage[t] = usage, B->buft[t] = buft, B->pin[t] = pin;
        B->view_src[t] = view ? (int32_t)B->tensor_of[root_of(g, v)] : GGML_NONE;
        for (uint32_t b = 0; b < nd; b++) {
            B->sup[(size_t)t * nd + b] =
                g->kind[v] != SB_KIND_COMPUTE || g->dev_dur_us[(size_t)v * nd + b] < 1e300;
            if (g->dev_offload)
                B->off[(size_t)t * nd + b] = g->dev_offload[(size_t)v * nd + b];
        }
        uint32_t *e = is_input ? &e_leaf : &e_node;
        B->src_off[t] = *e;
        for (uint32_t k = g->pred_off[v]; k < g->pred_off[v + 1]; k++)
            B->src[(*e)++] = (int32_t)B->tensor_of[g->pred[k]];
    }
    B->src_off[n] = g->n_edges;
    B->p = (struct ggml_arrays){nd, nd, B->bb, B->reads, cf->op_offload, cf->cap0, L, n - L,
                                B->flags, B->view_src, B->buft, B->usage, B->pin, B->sup,
                                B->off, B->src_off, B->src};
    return 0;
}

static int ggml_run(void *state, const struct sb_graph_view *g, struct sb_schedule *out)
{
    const struct conf *cf = state;
    struct built B = {0};
    struct ggml_result r;
    for (uint32_t v = 0; v < g->n_nodes; v++)
        if (g->device[v] >= (int32_t)g->machine->n_devices)
            return sb_plugin_fail(out->err, out->n_err, "ggml: node %u is pre-assigned to "
                                  "device %d; the machine has %u", v, g->device[v],
                                  g->machine->n_devices);
    if (build(g, cf, &B) || sb_ggml_split_arrays(&B.p, &r)) {
        built_free(&B);
        return sb_plugin_fail(out->err, out->n_err, "ggml: out of memory");
    }
    for (uint32_t v = 0; v < g->n_nodes; v++) {
        int32_t b = r.backend[B.tensor_of[v]];
        out->order[v] = v; /* ggml keeps the graph's node order */
        out->device[v] = b >= 0 ? b : (g->device[v] >= 0 ? g->device[v] : 0);
    }
    /* ggml_backend_sched_compute_splits makes each split wait for its own
     * input copies (an event on the split's backend, or a synchronize of it),
     * not for every backend: the simulator's dependencies do that, a node
     * waiting for its inputs' copies and a copy for its producer.  barrier=1
     * keeps the old model, a global barrier after each split. */
    for (uint32_t k = 0; cf->barrier && k + 1 < r.n_splits; k++)
        if (r.splits[k].end > 0)
            out->barrier[B.node_of[B.p.n_leafs + r.splits[k].end - 1]] = 1;
    sb_ggml_result_free(&r);
    built_free(&B);
    return 0;
}

static int ggml_init(const double *p, void **state, char *err, size_t n_err)
{
    struct conf *c = malloc(sizeof *c);
    if (!c)
        return sb_plugin_fail(err, n_err, "ggml: out of memory");
    c->op_offload = (int)p[P_OP_OFFLOAD];
    c->cap0 = (uint32_t)p[P_SPLIT_INPUTS];
    c->barrier = (int)p[P_BARRIER];
    *state = c;
    return 0;
}

static void ggml_free(void *state) { free(state); }

static const struct sb_plugin ggml = {
    .abi = SB_PLUGIN_ABI,
    .size = sizeof(struct sb_plugin),
    .name = "ggml",
    .summary = "ggml's backend scheduler: weights pull ops to their device, assignments "
               "spread, splits with copies (ggml_backend_sched_split_graph)",
    .params = ggml_params,
    .n_params = P_COUNT,
    .init = ggml_init,
    .run = ggml_run,
    .free = ggml_free,
};

const struct sb_plugin *sb_plugin_ggml(void) { return &ggml; }

SB_PLUGIN_EXPORT(sb_plugin_ggml)
