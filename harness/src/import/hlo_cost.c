/* FLOPs, transcendentals and bytes accessed per HLO instruction, with the
 * semantics of XLA's HloCostAnalysis (xla/service/hlo_cost_analysis.cc at
 * 183fa00, read, not copied; workloads/importers/hlo.md, "Cost"):
 *
 * - bytes accessed default to the output's leaves plus every operand;
 *   parameter, constant, get-tuple-element, bitcast access nothing; a tuple
 *   writes its pointer table; slice and dynamic-slice read what they write;
 *   dynamic-update-slice reads and writes the update only; gather and scatter
 *   touch the gathered / updated elements.
 * - FLOPs: one per output element of an elementwise op (transcendental ops
 *   count as transcendentals instead), 2 per multiply-add of a dot or
 *   convolution, reduce and reduce-window apply their reducer's cost once per
 *   reduced element, sort n*ceil(log2 n), all-reduce one per element.
 * - fusion: the sum of its fused computation's FLOPs, bytes at its boundary
 *   (each parameter read once, or the slice of it its user takes; each output
 *   written once, the update of a dynamic-update-slice root).
 * - custom-calls XLA cannot see into get published formulas (cuBLAS gemms,
 *   TransformerEngine and cuDNN fused attention); any other target costs 0
 *   and is listed once with its count. */
#define _POSIX_C_SOURCE 200809L
#include "hlo_impl.h"

#include <ctype.h>
#include <math.h>
#include <string.h>

#define FMA_FLOPS 2.0   /* XLA kFmaFlops */
#define TUPLE_PTR_BYTES 8.0 /* a tuple's top-level buffer: one pointer per element */
/* Flash attention's backward pass runs five matrix products per tile where
 * the forward runs two (dQ, dK, dV, dP and the recomputed S): 2.5x the
 * forward FLOPs (Dao et al., FlashAttention-2, section 4 / appendix). */
#define ATTN_BWD_FACTOR 2.5
/* Window position pairs a convolution's FLOP count walks one by one before
 * it estimates (GetConvolutionFlops walks them all). */
#define CONV_MAX_PAIRS 5e7

struct sub_cost {
    int state; /* 0 unknown, 1 computing, 2 known */
    struct hlo_cost c;
};

struct unknown {
    char *target;
    uint32_t count;
};

struct hlo_costs {
    const struct sb_hlo_module *m;
    const struct comp *c;
    uint32_t cap;
    uint32_t *tab;          /* instruction index + 1 by name */
    struct hlo_costs *top;  /* owner of the shared state below */
    struct hlo_costs **sub; /* [m->n] tables of called computations (top only) */
    struct sub_cost *memo;  /* [m->n] (top only) */
    uint32_t n_unknown;
    struct unknown *unknown;
    uint8_t *counted;       /* [c->n] unknown custom-calls already counted */
};


static struct hlo_costs *costs_for(const struct sb_hlo_module *m, const struct comp *c,
                                   struct hlo_costs *top)
{
    struct hlo_costs *hc = sb_xcalloc(1, sizeof *hc);
    hc->m = m;
    hc->c = c;
    hc->top = top ? top : hc;
    hc->cap = 16;
    while (hc->cap < 2 * c->n)
        hc->cap *= 2;
    hc->tab = sb_xcalloc(hc->cap, sizeof *hc->tab);
    for (uint32_t i = 0; i < c->n; i++) {
        uint32_t h = hlo_hash_name(c->in[i].name) & (hc->cap - 1);
        while (hc->tab[h] && strcmp(c->in[hc->tab[h] - 1].name, c->in[i].name))
            h = (h + 1) & (hc->cap - 1);
        if (!hc->tab[h])
            hc->tab[h] = i + 1;
    }
    if (!top) {
        hc->sub = sb_xcalloc(m->n ? m->n : 1, sizeof *hc->sub);
        hc->memo = sb_xcalloc(m->n ? m->n : 1, sizeof *hc->memo);
        hc->counted = sb_xcalloc(c->n ? c->n : 1, 1);
    }
    return hc;
}

struct hlo_costs *hlo_costs_new(const struct sb_hlo_module *m, const struct comp *c)
{
    return costs_for(m, c, NULL);
}

void hlo_costs_free(struct hlo_costs *hc)
{
    if (!hc)
        return;
    if (hc->top == hc) {
        for (uint32_t k = 0; k < hc->m->n; k++)
            hlo_costs_free(hc->sub[k]);
        free(hc->sub);
        free(hc->memo);
        for (uint32_t k = 0; k < hc->n_unknown; k++)
            free(hc->unknown[k].target);
        free(hc->unknown);
        free(hc->counted);
    }
    free(hc->tab);
    free(hc);
}

uint32_t hlo_costs_n_unknown(const struct hlo_costs *hc) { return hc->n_unknown; }

const char *hlo_costs_unknown(const struct hlo_costs *hc, uint32_t k, uint32_t *count)
{
    *count = hc->unknown[k].count;
    return hc->unknown[k].target;
}

static const struct instr *operand(const struct hlo_costs *hc, const struct instr *in,
                                   uint32_t j)
{
    if (j >= in->n_ops)
        return NULL;
    const char *name = in->ops[j];
    for (uint32_t h = hlo_hash_name(name) & (hc->cap - 1); hc->tab[h]; h = (h + 1) & (hc->cap - 1))
        if (!strcmp(hc->c->in[hc->tab[h] - 1].name, name))
            return &hc->c->in[hc->tab[h] - 1];
    return NULL;
}

static double op_bytes(const struct hlo_costs *hc, const struct instr *in, uint32_t j)
{
    const struct instr *p = operand(hc, in, j);
    return p ? (double)p->sh.bytes : 0;
}

static double op_elems(const struct hlo_costs *hc, const struct instr *in, uint32_t j)
{
    const struct instr *p = operand(hc, in, j);
    return p ? (double)p->sh.leaf_elems : 0;
}

static int in_list(const char *op, const char *const *list)
{
    for (; *list; list++)
        if (!strcmp(op, *list))
            return 1;
    return 0;
}

static const char *const transcendental_ops[] = {
    "acos", "acosh", "asin", "asinh", "atan2", "atanh", "cbrt", "cosine", "cosh", "erf",
    "exponential", "exponential-minus-one", "log", "log-plus-one", "logistic", "power",
    "rsqrt", "sine", "sinh", "sqrt", "tan", "tanh", NULL};
static const char *const elementwise_ops[] = {
    "abs", "add", "and", "ceil", "clamp", "compare", "complex", "convert",
    "count-leading-zeros", "divide", "floor", "imag", "is-finite", "maximum", "minimum",
    "multiply", "negate", "not", "or", "popcnt", "real", "reduce-precision", "remainder",
    "round-nearest-afz", "round-nearest-even", "select", "shift-left",
    "shift-right-arithmetic", "shift-right-logical", "sign", "stochastic-convert",
    "subtract", "xor", NULL};
static const char *const data_ops[] = {
    "bitcast", "bitcast-convert", "broadcast", "concatenate", "copy", "dynamic-slice",
    "dynamic-update-slice", "gather", "iota", "pad", "reshape", "reverse", "scatter",
    "slice", "transpose", "dynamic-reshape", NULL};
static const char *const coll_ops[] = {
    "all-gather", "all-gather-start", "all-reduce", "all-reduce-start", "reduce-scatter",
    "all-to-all", "ragged-all-to-all", "collective-permute", "collective-permute-start",
    "collective-broadcast", "async-start", "send", "recv", NULL};
/* bytes 0, FLOPs 0: XLA's handlers that touch no memory */
static const char *const free_ops[] = {
    "parameter", "constant", "get-tuple-element", "bitcast", "after-all",
    "add-dependency", "domain", "opt-barrier", "all-gather-done", "all-reduce-done",
    "collective-permute-done", "async-done", "send-done", "recv-done", "copy-done",
    "copy-start", "partition-id", "replica-id", NULL};

const char *hlo_class_name(enum hlo_class k)
{
    static const char *const names[HLO_CLASS_COUNT] = {
        "other", "dot", "convolution", "custom-call", "elementwise", "reduce",
        "data-movement", "collective", "fusion"};
    return k < HLO_CLASS_COUNT ? names[k] : "?";
}

enum hlo_class hlo_class_of_op(const char *op)
{
    if (!strcmp(op, "dot"))
        return HLO_CLASS_DOT;
    if (strstr(op, "fusion"))
        return HLO_CLASS_FUSION;
    if (!strcmp(op, "convolution"))
        return HLO_CLASS_CONV;
    if (!strncmp(op, "custom-call", 11))
        return HLO_CLASS_CUSTOM;
    if (in_list(op, transcendental_ops) || in_list(op, elementwise_ops))
        return HLO_CLASS_ELEMENTWISE;
    if (!strcmp(op, "reduce") || !strcmp(op, "reduce-window"))
        return HLO_CLASS_REDUCE;
    if (in_list(op, data_ops))
        return HLO_CLASS_DATA;
    if (in_list(op, coll_ops) || strstr(op, "-start") || strstr(op, "-done"))
        return HLO_CLASS_COLL;
    return HLO_CLASS_OTHER;
}

/* The unit a matrix product of this element type runs on. */
static uint8_t mm_dtype(const struct instr *a, const struct instr *in)
{
    switch (a ? a->sh.dtype : HLO_DT_OTHER) {
    case HLO_DT_BF16:
        return SB_DTYPE_BF16;
    case HLO_DT_F16:
        return SB_DTYPE_FP16;
    case HLO_DT_F8:
        return SB_DTYPE_FP8;
    case HLO_DT_S8:
    case HLO_DT_U8:
        return SB_DTYPE_INT8;
    case HLO_DT_F64:
    case HLO_DT_C128:
        return SB_DTYPE_FP64;
    default:
        /* f32 products run as TF32 on tensor cores unless the precision
         * config asks for HIGHEST (XLA GPU's default precision) */
        return in->precision && strstr(in->precision, "highest") ? SB_DTYPE_FP32
                                                                 : SB_DTYPE_TF32;
    }
}

/* "{1,2}" -> the listed dimensions' product in shape s. */
static double dims_product(const char *list, const struct shape *s)
{
    double p = 1;
    for (const char *q = list; q && *q;) {
        if (*q >= '0' && *q <= '9') {
            char *end;
            unsigned long d = strtoul(q, &end, 10);
            if (d < s->rank)
                p *= (double)s->dims[d];
            q = end;
        } else {
            q++;
        }
    }
    return p;
}

/* An integer field of a backend config, "key = 12" (MLIR) or "key":"12" /
 * "key":12 (JSON); dflt when absent. */
static double config_num(const char *cfg, const char *key, double dflt)
{
    size_t n = strlen(key);
    for (const char *p = cfg; p && (p = strstr(p, key)); p += n) {
        const char *q = p + n;
        if (p > cfg && (isalnum((unsigned char)p[-1]) || p[-1] == '_'))
            continue;
        while (*q == '"' || *q == ' ' || *q == ':' || *q == '=')
            q++;
        char *end;
        double v = strtod(q, &end);
        if (end > q)
            return v;
    }
    return dflt;
}

static struct hlo_cost comp_cost(struct hlo_costs *hc, const char *name);

struct win_dim {
    long size, stride, pad_lo, pad_hi, lhs_dil, rhs_dil;
};
static uint32_t parse_window(const char *w, struct win_dim *d, uint32_t max);

static void cost_conv(const struct hlo_costs *hc, const struct instr *in, struct hlo_cost *o);

/* cuBLAS / TransformerEngine / cuDNN custom-calls; 0 when target unknown. */
static int custom_call(struct hlo_costs *hc, const struct instr *in, struct hlo_cost *o)
{
    const char *t = in->target ? in->target : "";
    const struct instr *a = operand(hc, in, 0), *b = operand(hc, in, 1);
    if (!strncmp(t, "__cublas$gemm", 13) || !strncmp(t, "__cublas$lt$matmul", 18)) {
        /* backend_config's gemm_backend_config.dot_dimension_numbers: output
         * leaf 0 elements times the contracted size, 2 FLOPs each */
        const char *k = in->backend ? strstr(in->backend, "lhs_contracting_dimensions") : NULL;
        double red = 1;
        if (k && a) {
            const char *open = strchr(k, '[');
            const char *close = open ? strchr(open, ']') : NULL;
            if (open && close) {
                char *list = strndup(open, (size_t)(close - open + 1));
                red = dims_product(list, &a->sh);
                free(list);
            }
        }
        double out_el = in->sh.tuple ? (double)in->sh.dims[0] : (double)in->sh.elems;
        if (in->sh.tuple) { /* leaf 0 */
            out_el = 1;
            for (uint32_t d = 0; d < in->sh.rank; d++)
                out_el *= (double)in->sh.dims[d];
        }
        o->flops = FMA_FLOPS * out_el * red;
        o->dtype = mm_dtype(a, in);
        return 1;
    }
    int te_fwd = !strcmp(t, "te_fused_attn_forward_ffi") || !strcmp(t, "te_fused_attn_forward");
    int te_bwd = !strcmp(t, "te_fused_attn_backward_ffi") || !strcmp(t, "te_fused_attn_backward");
    int cudnn = !strncmp(t, "__cudnn$fmha", 12);
    if ((te_fwd || te_bwd) && in->backend) {
        /* TransformerEngine's config: batch, heads, sequence lengths, head
         * dims; mask_type 2-5 are causal variants (NVTE_Mask_Type) */
        double b = config_num(in->backend, "input_batch", 1);
        double h = config_num(in->backend, "attn_heads", 1);
        double sq = config_num(in->backend, "q_max_seqlen", 0);
        double skv = config_num(in->backend, "kv_max_seqlen", 0);
        double dqk = config_num(in->backend, "qk_head_dim", 0);
        double dv = config_num(in->backend, "v_head_dim", dqk);
        double mask = config_num(in->backend, "mask_type", 0);
        /* S = Q K^T and O = P V: 2 b h sq skv (dqk + dv) */
        double f = FMA_FLOPS * b * h * sq * skv * (dqk + dv);
        if (mask >= 2 && mask <= 5)
            f /= 2; /* causal: half the scores */
        o->flops = te_bwd ? f * ATTN_BWD_FACTOR : f;
        o->transcendentals = b * h * sq * skv / ((mask >= 2 && mask <= 5) ? 2 : 1);
        o->dtype = mm_dtype(a, in);
        return 1;
    }
    if (cudnn && a && b && a->sh.rank == 4 && b->sh.rank == 4) {
        /* Q [b, s_q, h, d] and K [b, s_kv, h_kv, d] (BSHD, cuDNN's default) */
        double f = FMA_FLOPS * (double)a->sh.dims[0] * (double)a->sh.dims[2] *
                   (double)a->sh.dims[1] * (double)b->sh.dims[1] * 2.0 * (double)a->sh.dims[3];
        int causal = in->backend && (strstr(in->backend, "CAUSAL") || strstr(in->backend, "causal"));
        if (causal)
            f /= 2;
        o->flops = strstr(t, "Backward") || strstr(t, "backward") ? f * ATTN_BWD_FACTOR : f;
        o->dtype = mm_dtype(a, in);
        return 1;
    }
    if (!strcmp(t, "TopK") && a) {
        /* a partial sort: n log2(k) comparisons per row (the output's last
         * dimension is k) */
        double k = in->sh.rank ? (double)in->sh.dims[in->sh.rank - 1] : 1;
        o->flops = (double)a->sh.elems * ceil(log2(k > 1 ? k : 2));
        return 1;
    }
    return 0;
}

static void note_unknown(struct hlo_costs *hc, const char *target)
{
    struct hlo_costs *top = hc->top;
    for (uint32_t k = 0; k < top->n_unknown; k++)
        if (!strcmp(top->unknown[k].target, target)) {
            top->unknown[k].count++;
            return;
        }
    top->unknown = sb_xrealloc(top->unknown, (top->n_unknown + 1) * sizeof *top->unknown);
    top->unknown[top->n_unknown].target = sb_xstrdup(target);
    top->unknown[top->n_unknown++].count = 1;
}

/* What a fused parameter's users read of it (FusionParameterReadBytes): a
 * slice's output, a dynamic-update-slice's update only when it is not the
 * aliased operand, else the whole parameter once. */
static double param_read_bytes(const struct hlo_costs *fc, uint32_t p)
{
    const struct comp *c = fc->c;
    const struct instr *par = &c->in[p];
    double size = 0;
    int trivial = 0;
    for (uint32_t u = p + 1; u < c->n; u++) {
        const struct instr *us = &c->in[u];
        for (uint32_t j = 0; j < us->n_ops; j++) {
            if (strcmp(us->ops[j], par->name) != 0)
                continue;
            if (!strcmp(us->opcode, "slice")) {
                size += (double)us->sh.bytes;
            } else if (!strcmp(us->opcode, "dynamic-slice")) {
                if (j == 0)
                    size += (double)us->sh.bytes;
                else if (!trivial && (trivial = 1))
                    size += (double)par->sh.bytes;
            } else if (!strcmp(us->opcode, "dynamic-update-slice")) {
                if (j != 0 && !trivial && (trivial = 1))
                    size += (double)par->sh.bytes;
            } else if (!strcmp(us->opcode, "broadcast") || !strcmp(us->opcode, "reshape")) {
                size += (double)par->sh.bytes;
            } else if (!trivial) {
                trivial = 1;
                size += (double)par->sh.bytes;
            }
        }
    }
    return size;
}

static void cost_fusion(struct hlo_costs *hc, const struct instr *in, struct hlo_cost *o)
{
    int k = in->n_calls ? hlo_find_comp(hc->m, in->calls[0]) : -1;
    if (k < 0)
        return;
    struct hlo_cost sub = comp_cost(hc, in->calls[0]);
    struct hlo_costs *fc = hc->top->sub[k];
    o->flops = sub.flops;
    o->transcendentals = sub.transcendentals;
    o->dtype = sub.dtype;
    o->op_class = sub.op_class;
    double bytes = 0;
    const struct comp *c = &hc->m->c[k];
    const struct instr *root = NULL;
    for (uint32_t i = 0; i < c->n; i++) {
        if (c->in[i].root || (!root && i + 1 == c->n))
            root = &c->in[i];
        if (!strcmp(c->in[i].opcode, "parameter"))
            bytes += param_read_bytes(fc, i);
    }
    /* outputs: each leaf once; a dynamic-update-slice root writes its update */
    if (root && !strcmp(root->opcode, "tuple")) {
        for (uint32_t j = 0; j < root->n_ops; j++) {
            const struct instr *r = operand(fc, root, j);
            if (r && !strcmp(r->opcode, "dynamic-update-slice"))
                bytes += op_bytes(fc, r, 1);
            else if (r)
                bytes += (double)r->sh.bytes;
        }
    } else if (root && !strcmp(root->opcode, "dynamic-update-slice")) {
        bytes += op_bytes(fc, root, 1);
    } else {
        bytes += (double)in->sh.bytes;
    }
    o->bytes = bytes;
}

static void cost_instr(struct hlo_costs *hc, const struct instr *in, struct hlo_cost *o)
{
    const char *op = in->opcode;
    memset(o, 0, sizeof *o);
    o->dtype = SB_DTYPE_FP32;
    double out = (double)in->sh.bytes, def = out;
    for (uint32_t j = 0; j < in->n_ops; j++)
        def += op_bytes(hc, in, j);
    o->bytes = def;
    if (in_list(op, free_ops)) {
        o->bytes = 0;
        o->op_class = HLO_CLASS_OTHER;
    } else if (!strcmp(op, "tuple")) {
        o->bytes = TUPLE_PTR_BYTES * in->sh.n_top;
    } else if (in_list(op, transcendental_ops)) {
        o->transcendentals = (double)in->sh.leaf_elems;
        o->op_class = HLO_CLASS_ELEMENTWISE;
    } else if (in_list(op, elementwise_ops)) {
        o->flops = (double)in->sh.leaf_elems;
        o->op_class = HLO_CLASS_ELEMENTWISE;
    } else if (!strcmp(op, "dot")) {
        const struct instr *a = operand(hc, in, 0);
        o->flops = FMA_FLOPS * (double)in->sh.elems * (a ? dims_product(in->dnums, &a->sh) : 0);
        o->dtype = mm_dtype(a, in);
        o->op_class = HLO_CLASS_DOT;
    } else if (!strcmp(op, "convolution")) {
        cost_conv(hc, in, o);
        o->op_class = HLO_CLASS_CONV;
    } else if (!strcmp(op, "reduce") || !strcmp(op, "reduce-window") || !strcmp(op, "map") ||
               !strcmp(op, "scatter") || !strcmp(op, "select-and-scatter")) {
        struct hlo_cost f = in->apply ? comp_cost(hc, in->apply) : (struct hlo_cost){0};
        double n = 0;
        double out_el = in->sh.tuple ? 1 : (double)in->sh.elems;
        if (in->sh.tuple)
            for (uint32_t d = 0; d < in->sh.rank; d++)
                out_el *= (double)in->sh.dims[d];
        if (op[0] == 'm') {
            n = out_el;
        } else if (!strcmp(op, "reduce")) {
            const struct instr *a = operand(hc, in, 0);
            n = (a ? (double)a->sh.elems : 0) - out_el;
        } else if (!strcmp(op, "reduce-window")) {
            struct win_dim wd[HLO_MAX_RANK];
            uint32_t nd = parse_window(in->window, wd, HLO_MAX_RANK);
            double w = 1;
            int n_red = 0, n_pad = 0, rdim = -1;
            for (uint32_t d = 0; d < nd; d++) {
                w *= (double)wd[d].size;
                n_red += wd[d].size != 1;
                n_pad += wd[d].pad_lo || wd[d].pad_hi;
                if (rdim < 0 && wd[d].size != 1 && wd[d].pad_lo && wd[d].pad_lo == wd[d].pad_hi &&
                    wd[d].size == 2 * wd[d].pad_lo + 1)
                    rdim = (int)d;
            }
            n = (w - 1) * out_el;
            /* a window spanning the whole padded dimension (a reduction
             * broadcast back): one pass plus a scan (HandleReduceWindow) */
            if (n_red == 1 && n_pad == 1 && !in->sh.tuple && rdim >= 0 &&
                (uint32_t)rdim < in->sh.rank &&
                (double)wd[rdim].pad_lo == (double)in->sh.dims[rdim] - 1) {
                double dim = (double)in->sh.dims[rdim];
                n = out_el / dim + (dim - 1);
            }
        } else if (!strcmp(op, "scatter")) {
            /* (operands..., indices, updates...): every update read, written
             * and its destination read, plus the indices */
            uint32_t k = in->n_ops ? (in->n_ops - 1) / 2 : 0;
            double upd = 0;
            for (uint32_t j = k + 1; j < in->n_ops; j++)
                upd += op_bytes(hc, in, j);
            o->bytes = 3 * upd + op_bytes(hc, in, k);
            n = op_elems(hc, in, k + 1);
            if (k > 1) { /* op_elems sums a tuple's leaves: one update's count */
                const struct instr *u = operand(hc, in, k + 1);
                n = u ? (double)u->sh.elems : 0;
            }
        }
        o->flops = f.flops * n;
        o->transcendentals = f.transcendentals * n;
        o->op_class = op[0] == 's' ? HLO_CLASS_DATA : HLO_CLASS_REDUCE;
    } else if (!strcmp(op, "slice")) {
        o->bytes = 2 * out;
        o->op_class = HLO_CLASS_DATA;
    } else if (!strcmp(op, "dynamic-slice")) {
        o->bytes = 2 * out + op_bytes(hc, in, 1);
        o->op_class = HLO_CLASS_DATA;
    } else if (!strcmp(op, "dynamic-update-slice")) {
        o->bytes = 2 * op_bytes(hc, in, 1) + op_bytes(hc, in, 2);
        o->op_class = HLO_CLASS_DATA;
    } else if (!strcmp(op, "gather")) {
        o->bytes = 2 * out + op_bytes(hc, in, 1);
        o->op_class = HLO_CLASS_DATA;
    } else if (!strcmp(op, "sort")) {
        double n = op_elems(hc, in, 0);
        o->flops = n > 1 ? n * ceil(log2(n)) : 0;
        o->op_class = HLO_CLASS_OTHER;
    } else if (!strcmp(op, "all-reduce") || !strcmp(op, "all-reduce-start")) {
        o->flops = (double)in->sh.leaf_elems;
        o->op_class = HLO_CLASS_COLL;
    } else if (in_list(op, coll_ops)) {
        o->op_class = HLO_CLASS_COLL;
    } else if (in_list(op, data_ops)) {
        o->op_class = HLO_CLASS_DATA;
    } else if (!strcmp(op, "rng") || !strcmp(op, "rng-bit-generator")) {
        o->transcendentals = (double)in->sh.leaf_elems;
    } else if (!strcmp(op, "fusion")) {
        cost_fusion(hc, in, o);
    } else if (!strcmp(op, "call") || !strcmp(op, "while")) {
        /* only inside computations the expansion does not reach: one pass of
         * the body (and condition), as HloCostAnalysis does */
        struct hlo_cost s = {0};
        if (in->apply)
            s = comp_cost(hc, in->apply);
        for (uint32_t j = 0; j < in->n_calls; j++) {
            struct hlo_cost b = comp_cost(hc, in->calls[j]);
            s.flops += b.flops;
            s.transcendentals += b.transcendentals;
            s.bytes += b.bytes;
        }
        *o = s;
    } else if (!strcmp(op, "conditional")) {
        /* the most expensive branch, key by key (HandleConditional) */
        struct hlo_cost s = {0};
        for (uint32_t j = 0; j < in->n_calls; j++) {
            struct hlo_cost b = comp_cost(hc, in->calls[j]);
            s.flops = fmax(s.flops, b.flops);
            s.transcendentals = fmax(s.transcendentals, b.transcendentals);
            s.bytes = fmax(s.bytes, b.bytes);
            if (b.op_class == HLO_CLASS_DOT)
                s.dtype = b.dtype, s.op_class = b.op_class;
        }
        if (!s.dtype)
            s.dtype = SB_DTYPE_FP32;
        *o = s;
    } else if (!strcmp(op, "custom-call")) {
        o->op_class = HLO_CLASS_CUSTOM;
        if (!custom_call(hc, in, o)) {
            o->bytes = 0;
            uint32_t i = (uint32_t)(in - hc->c->in);
            if (hc->top == hc && i < hc->c->n && !hc->counted[i]) {
                hc->counted[i] = 1;
                note_unknown(hc, in->target ? in->target : "");
            }
        }
    }
    /* anything else (iota, pad, concatenate, copy, ...) keeps the default:
     * no FLOPs, output plus operands */
}

/* The cost of a called computation: the sum of its instructions
 * (ProcessSubcomputation), memoised; a computation reached again while it
 * is being summed (recursion, which the expansion refuses) counts 0. */
static struct hlo_cost comp_cost(struct hlo_costs *hc, const char *name)
{
    struct hlo_costs *top = hc->top;
    int k = hlo_find_comp(hc->m, name);
    struct hlo_cost s = {0};
    if (k < 0 || top->memo[k].state == 1)
        return s;
    if (top->memo[k].state == 2)
        return top->memo[k].c;
    top->memo[k].state = 1;
    if (!top->sub[k])
        top->sub[k] = costs_for(hc->m, &hc->m->c[k], top);
    struct hlo_costs *sc = top->sub[k];
    s.dtype = SB_DTYPE_FP32;
    for (uint32_t i = 0; i < sc->c->n; i++) {
        struct hlo_cost x;
        cost_instr(sc, &sc->c->in[i], &x);
        s.flops += x.flops;
        s.transcendentals += x.transcendentals;
        s.bytes += x.bytes;
        if (x.op_class == HLO_CLASS_DOT || x.op_class == HLO_CLASS_CONV ||
            (x.op_class == HLO_CLASS_CUSTOM && x.flops > 0)) {
            s.op_class = x.op_class;
            s.dtype = x.dtype;
        } else if (!s.op_class && x.op_class != HLO_CLASS_OTHER) {
            s.op_class = x.op_class;
        }
    }
    top->memo[k].state = 2;
    top->memo[k].c = s;
    return s;
}

void hlo_cost_of(struct hlo_costs *hc, uint32_t i, struct hlo_cost *out)
{
    cost_instr(hc, &hc->c->in[i], out);
}

/* ---- convolution (GetConvolutionFlops) ------------------------------------ */

/* window={size=3x3 stride=2x2 pad=1_1x1_1 lhs_dilate=.. rhs_dilate=..} */
static uint32_t parse_window(const char *w, struct win_dim *d, uint32_t max)
{
    uint32_t n = 0;
    for (uint32_t k = 0; k < max; k++)
        d[k] = (struct win_dim){1, 1, 0, 0, 1, 1};
    if (!w)
        return 0;
    static const char *const keys[] = {"size=", "stride=", "pad=", "lhs_dilate=",
                                       "rhs_dilate="};
    for (int key = 0; key < 5; key++) {
        const char *p = strstr(w, keys[key]);
        if (!p)
            continue;
        p += strlen(keys[key]);
        uint32_t k = 0;
        while (k < max && *p >= '0' && *p <= '9') {
            char *end;
            long a = strtol(p, &end, 10), b = 0;
            if (key == 2 && *end == '_')
                b = strtol(end + 1, &end, 10);
            /* sizes, strides and dilations >= 1, paddings within 2^31 */
            a = a > (1L << 31) ? (1L << 31) : a < -(1L << 31) ? -(1L << 31) : a;
            b = b > (1L << 31) ? (1L << 31) : b < -(1L << 31) ? -(1L << 31) : b;
            if (key != 2 && a < 1)
                a = 1;
            switch (key) {
            case 0: d[k].size = a; break;
            case 1: d[k].stride = a; break;
            case 2: d[k].pad_lo = a; d[k].pad_hi = b; break;
            case 3: d[k].lhs_dil = a; break;
            default: d[k].rhs_dil = a; break;
            }
            k++;
            p = *end == 'x' ? end + 1 : end;
            if (end == p && *end != 'x')
                break;
        }
        if (k > n)
            n = k;
    }
    return n;
}

/* dim_labels=b01f_01io->b01f: the positions of batch, feature and the
 * spatial dimensions in each of the three shapes. */
struct conv_dims {
    int in_b, in_f, in_sp[HLO_MAX_RANK];
    int k_sp[HLO_MAX_RANK];
    int out_f, out_sp[HLO_MAX_RANK];
    int n_sp;
};

static int parse_labels(const char *l, struct conv_dims *cd)
{
    memset(cd, 0, sizeof *cd);
    if (!l)
        return -1;
    const char *k = strchr(l, '_'), *o = strstr(l, "->");
    if (!k || !o)
        return -1;
    int n_sp = 0;
    for (int pos = 0; l + pos < k; pos++) {
        char ch = l[pos];
        if (ch == 'b')
            cd->in_b = pos;
        else if (ch == 'f')
            cd->in_f = pos;
        else if (ch >= '0' && ch <= '9' && ch - '0' < HLO_MAX_RANK) {
            cd->in_sp[ch - '0'] = pos;
            if (ch - '0' + 1 > n_sp)
                n_sp = ch - '0' + 1;
        }
    }
    for (int pos = 0; k + 1 + pos < o; pos++) {
        char ch = k[1 + pos];
        if (ch >= '0' && ch <= '9' && ch - '0' < HLO_MAX_RANK)
            cd->k_sp[ch - '0'] = pos;
    }
    for (int pos = 0; o[2 + pos] && (isalnum((unsigned char)o[2 + pos])); pos++) {
        char ch = o[2 + pos];
        if (ch == 'f')
            cd->out_f = pos;
        else if (ch >= '0' && ch <= '9' && ch - '0' < HLO_MAX_RANK)
            cd->out_sp[ch - '0'] = pos;
    }
    cd->n_sp = n_sp;
    return 0;
}

static void cost_conv(const struct hlo_costs *hc, const struct instr *in, struct hlo_cost *o)
{
    const struct instr *a = operand(hc, in, 0), *b = operand(hc, in, 1);
    struct conv_dims cd;
    o->dtype = mm_dtype(a, in);
    if (!a || !b || parse_labels(in->dim_labels, &cd))
        return;
    /* labels must name dimensions the shapes have (a malformed text may not) */
    int bad = cd.in_b >= a->sh.rank || cd.in_f >= a->sh.rank || cd.out_f >= in->sh.rank;
    for (int s = 0; s < cd.n_sp; s++)
        bad |= cd.in_sp[s] >= a->sh.rank || cd.k_sp[s] >= b->sh.rank ||
               cd.out_sp[s] >= in->sh.rank;
    if (bad || in->sh.tuple)
        return;
    struct win_dim wd[HLO_MAX_RANK];
    parse_window(in->window, wd, HLO_MAX_RANK);
    double valid = 1;
    for (int s = 0; s < cd.n_sp; s++) {
        long in_l = (long)a->sh.dims[cd.in_sp[s]], k_l = (long)b->sh.dims[cd.k_sp[s]];
        long out_l = (long)in->sh.dims[cd.out_sp[s]];
        const struct win_dim *w = &wd[s];
        long count = 0;
        /* GetConvolutionFlops' two closed forms: a window as wide as the
         * base-dilated input with one output per input position, and a
         * one-element input padded to the kernel's width */
        if (in_l == out_l && k_l == out_l && in_l == w->lhs_dil && w->rhs_dil == 1 &&
            (in_l - 1 > 1 ? in_l - 1 : 1) == w->stride && !w->pad_lo && !w->pad_hi) {
            valid *= (double)in_l;
            continue;
        }
        if (in_l == 1 && k_l == out_l && w->rhs_dil == 1 && w->lhs_dil == 1 &&
            w->stride == 1 && w->pad_hi == out_l - 1 && w->pad_lo == out_l - 1) {
            valid *= (double)out_l;
            continue;
        }
        int general = !(w->stride == 1 && w->lhs_dil == 1);
        if ((double)k_l * (double)(general ? out_l : 1) > CONV_MAX_PAIRS) {
            valid *= (double)k_l * (double)out_l / (double)(w->lhs_dil > 0 ? w->lhs_dil : 1);
            continue;
        }
        for (long ki = 0; ki < k_l && !general; ki++) {
            /* unit stride, no base dilation: the overlap in closed form */
            long base = w->pad_lo - ki * w->rhs_dil;
            long hi = in_l + base < out_l ? in_l + base : out_l;
            long lo = base > 0 ? base : 0;
            count += hi - lo > 0 ? hi - lo : 0;
        }
        /* otherwise every (kernel, output) position pair that lands on a
         * real input element; past CONV_MAX_PAIRS pairs (a text that asks for
         * 10^11 of them), an estimate: every pair, thinned by the base
         * dilation */
        for (long ki = 0; ki < k_l && general; ki++)
            for (long oi = 0; oi < out_l; oi++) {
                long u = oi * w->stride - w->pad_lo + ki * w->rhs_dil;
                long li = w->lhs_dil > 1 ? u / w->lhs_dil : u;
                if (u != li * w->lhs_dil || li < 0 || li >= in_l)
                    continue;
                count++;
            }
        valid *= (double)count;
    }
    double in_f = (double)a->sh.dims[cd.in_f], out_f = (double)in->sh.dims[cd.out_f];
    double batch = (double)a->sh.dims[cd.in_b];
    uint32_t fgc = in->fgc ? in->fgc : 1, bgc = in->bgc ? in->bgc : 1;
    o->flops = FMA_FLOPS * floor(in_f / fgc) * out_f * floor(batch / bgc) * valid;
}
