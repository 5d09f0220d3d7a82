/* ggml: ggml's backend scheduler (ggml_backend_sched_split_graph) applied to
 * our graphs on a --machine (docs/ggml.md).  The assignment and split passes
 * are the policy toolkit's (sb_ggml_split_arrays, schedulers/lib/ggml_split.c),
 * which schedbench conform also runs on ggml's own cases; this file describes
 * our graph to them (one backend per device) and turns the splits into an
 * order. */
#include <stdlib.h>
#include <string.h>

#include "schedbench/plugin.h"
#include "schedbench/policy.h"

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
    struct sb_ggml_arrays p;
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
        uint8_t fl = (uint8_t)((view ? SB_GGML_F_VIEW : 0) |
                               (B->exempt_op[g->op[v]] ? SB_GGML_F_EXEMPT : 0));
        int32_t buft = SB_GGML_NONE, pin = SB_GGML_NONE;
        uint8_t usage = SB_GGML_USAGE_NONE;
        if (is_input && (g->flags[v] & SB_FLAG_WEIGHT)) {
            buft = g->device[v] >= 0 ? g->device[v] : (int32_t)nd - 1;
            usage = SB_GGML_USAGE_WEIGHTS;
        } else if (is_input && g->device[v] >= 0) {
            buft = g->device[v], usage = SB_GGML_USAGE_ANY;
        } else if (is_input) {
            fl |= SB_GGML_F_INPUT;
        } else if (g->device[v] >= 0) {
            pin = g->device[v];
        }
        B->flags[t] = fl, B->usage[t] = usage, B->buft[t] = buft, B->pin[t] = pin;
        B->view_src[t] = view ? (int32_t)B->tensor_of[root_of(g, v)] : SB_GGML_NONE;
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
    B->p = (struct sb_ggml_arrays){nd, nd, B->bb, B->reads, cf->op_offload, cf->cap0, L, n - L,
                                B->flags, B->view_src, B->buft, B->usage, B->pin, B->sup,
                                B->off, B->src_off, B->src};
    return 0;
}

static int ggml_run(void *state, const struct sb_graph_view *g, struct sb_schedule *out)
{
    const struct conf *cf = state;
    struct built B = {0};
    struct sb_ggml_result r;
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
    .flags = SB_PLUGIN_PLACER, /* a job of ranks comes whole: docs/ggml.md */
};

const struct sb_plugin *sb_plugin_ggml(void) { return &ggml; }

SB_PLUGIN_EXPORT(sb_plugin_ggml)
