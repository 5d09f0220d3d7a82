/* Llama generators (workloads/README.md):
 *   llama-bwd  the backward pass of one rank under FSDP / ZeRO-3 (the headline);
 *   llama-fwd  the forward pass of the same program;
 *   llama-tp   Megatron tensor parallelism, forward and backward.
 *
 * llama-bwd and llama-fwd emit the program as AOTAutograd traces it before
 * fusion: one node per ATen operator (core ATen decompositions of the norm,
 * SiLU and loss derivatives), views as aliasing nops, cheap pointwise
 * producers recomputed in the backward instead of saved (the min-cut
 * partitioner's choice), and per-parameter all_gather / reduce_scatter as
 * SimpleFSDP / FSDP2 issue them.  The model is torchtitan's Llama 3 module:
 * RMSNorm in fp32, complex RoPE, repeat_kv for grouped-query attention, SDPA
 * flash attention, SwiGLU MLP, untied output projection, fp32 cross entropy. */
#include "gen-impl.h"

#include <string.h>

/* ---- options ------------------------------------------------------------- */

enum {
    O_MODEL, O_LAYERS, O_HIDDEN, O_FFN, O_HEADS, O_KV_HEADS, O_VOCAB, O_SEQ,
    O_BATCH, O_DTYPE_BYTES, O_RANKS, O_PARAM_BYTES, O_BUCKET, N_FSDP_OPTS,
    /* llama-bwd only (issue 13: the backward as torchtitan builds it) */
    O_LOSS = N_FSDP_OPTS, O_AC, O_OPMATH, N_BWD_OPTS
};
#define N_TP_OPTS (O_RANKS + 1) /* llama-tp has neither master weights nor buckets */

static const char *const models[] = {"llama3-8b", "llama3-70b", NULL};
static const char *const buckets[] = {"none", "layer", NULL};
static const char *const losses[] = {"internal", "external", NULL};
static const char *const acs[] = {"none", "op", "full", NULL};
static const char *const opmaths[] = {"bf16", "fp32", NULL};
enum { AC_NONE, AC_OP, AC_FULL };

/* The options the three kinds share, in O_ order: the model's shape. */
#define SHAPE_OPTS                                                             \
    {"model", SB_OPT_CHOICE, 0, 0, 0, models,                                  \
     "preset of the six shape options below (Llama 3 8B or 70B)"},             \
    {"layers", SB_OPT_INT, 32, 1, 10000, NULL, "transformer layers"},          \
    {"hidden", SB_OPT_INT, 4096, 64, 65536, NULL, "model width"},              \
    {"ffn", SB_OPT_INT, 14336, 64, 1 << 20, NULL, "SwiGLU MLP inner width"},   \
    {"heads", SB_OPT_INT, 32, 1, 1024, NULL, "query heads"},                   \
    {"kv-heads", SB_OPT_INT, 8, 1, 1024, NULL,                                 \
     "key/value heads (grouped-query attention)"},                             \
    {"vocab", SB_OPT_INT, 128256, 64, 1 << 22, NULL,                           \
     "vocabulary (untied input embedding and output projection)"},             \
    {"seq", SB_OPT_INT, 8192, 16, 1 << 20, NULL, "tokens per sequence"},       \
    {"batch", SB_OPT_INT, 1, 1, 4096, NULL, "sequences per rank"},             \
    {"dtype-bytes", SB_OPT_INT, 2, 1, 8, NULL,                                 \
     "bytes per element of activations, gathered weights and gradients "       \
     "(2: bf16)"}

#define FSDP_OPTS                                                              \
    SHAPE_OPTS,                                                                \
    {"ranks", SB_OPT_INT, 64, 1, 1 << 20, NULL,                                \
     "ranks every parameter is sharded over (FSDP / ZeRO-3 group)"},           \
    {"param-bytes", SB_OPT_INT, 4, 1, 8, NULL,                                 \
     "bytes per element of the sharded master weights and of the gradient "   \
     "reduction (4: fp32 master weights, reduce in fp32, as torchtitan's "     \
     "default mixed precision; equal to --dtype-bytes: no casts)"},            \
    {"bucket", SB_OPT_CHOICE, 0, 0, 0, buckets,                                \
     "none: one all_gather and one reduce_scatter per parameter; layer: one "  \
     "of each per layer"}

static const struct sb_gen_opt fsdp_opts[N_FSDP_OPTS] = {FSDP_OPTS};

/* Sources: torchtitan's Llama 3 training defaults (activation_checkpoint
 * mode "selective" with option "op"; mixed precision bf16 parameters, fp32
 * reduce) and the FX backward the memory-regression investigation dumped
 * (pytorch/pytorch, llama1d_bwd.py).  Defaults keep the earlier graph. */
static const struct sb_gen_opt bwd_opts[N_BWD_OPTS] = {
    FSDP_OPTS,
    {"loss", SB_OPT_CHOICE, 0, 0, 0, losses,
     "internal: the fp32 cross-entropy backward is in the graph; external: the "
     "graph starts from the bf16 gradient of the logits (torchtitan compiles "
     "the loss separately, as in llama1d_bwd.py)"},
    {"ac", SB_OPT_CHOICE, 0, 0, 0, acs,
     "activation checkpointing. none: the min-cut partitioner's saved set; op: "
     "torchtitan's op-level selective AC (saves the block input, the wq, wv and "
     "w1 outputs and the attention output with its log-sum-exp; recomputes wk, "
     "wo, w3, the norms, RoPE and SiLU); full: saves only the block input and "
     "recomputes the block's forward"},
    {"opmath", SB_OPT_CHOICE, 0, 0, 0, opmaths,
     "fp32: SiLU and its backward, the RMSNorm weight gradient and the "
     "embedding gradient in fp32 (Inductor upcasts bf16 pointwise math, as in "
     "llama1d_bwd.py); bf16: in the activation dtype"},
};

static const struct sb_gen_opt tp_opts[N_TP_OPTS] = {
    SHAPE_OPTS,
    {"ranks", SB_OPT_INT, 8, 1, 1024, NULL,
     "tensor-parallel degree: heads, MLP width and vocabulary are split over "
     "this many ranks"},
};

struct preset {
    int64_t layers, hidden, ffn, heads, kv_heads, vocab;
};
/* config.json of Meta-Llama-3-8B and Meta-Llama-3-70B */
static const struct preset presets[] = {
    {32, 4096, 14336, 32, 8, 128256},
    {80, 8192, 28672, 64, 8, 128256},
};

static void llama_preset(struct sb_gen_args *a)
{
    const struct preset *p = &presets[a->v[O_MODEL]];
    const int64_t val[6] = {p->layers, p->hidden, p->ffn, p->heads, p->kv_heads, p->vocab};
    for (int i = 0; i < 6; i++)
        if (!a->set[O_LAYERS + i])
            a->v[O_LAYERS + i] = val[i];
}

static int shape_check(const char *kind, const struct sb_gen_args *a, struct sb_err *e)
{
    int64_t H = a->v[O_HIDDEN], nh = a->v[O_HEADS], nkv = a->v[O_KV_HEADS];
    if (H % nh)
        return sb_errf(e, "gen %s: --hidden %lld is not a multiple of --heads %lld",
                       kind, (long long)H, (long long)nh);
    if (nh % nkv)
        return sb_errf(e, "gen %s: --heads %lld is not a multiple of --kv-heads %lld",
                       kind, (long long)nh, (long long)nkv);
    if ((H / nh) % 2)
        return sb_errf(e, "gen %s: head dimension %lld (--hidden / --heads) must "
                       "be even for rotary embeddings", kind, (long long)(H / nh));
    return 0;
}

static int fsdp_check_bwd(const struct sb_gen_args *a, struct sb_err *e)
{
    return shape_check("llama-bwd", a, e);
}

static int fsdp_check_fwd(const struct sb_gen_args *a, struct sb_err *e)
{
    return shape_check("llama-fwd", a, e);
}

static int tp_check(const struct sb_gen_args *a, struct sb_err *e)
{
    if (shape_check("llama-tp", a, e))
        return -1;
    const int which[4] = {O_HEADS, O_KV_HEADS, O_FFN, O_VOCAB};
    const char *names[4] = {"heads", "kv-heads", "ffn", "vocab"};
    for (int i = 0; i < 4; i++)
        if (a->v[which[i]] % a->v[O_RANKS])
            return sb_errf(e, "gen llama-tp: --%s %lld is not a multiple of "
                           "--ranks %lld (the tensor-parallel degree)", names[i],
                           (long long)a->v[which[i]], (long long)a->v[O_RANKS]);
    return 0;
}

/* "llama3-8b" when the shape is the preset's, "llama3-8b-4l" when only the
 * layer count differs, else "llama-h<hidden>-<layers>l". */
static void base_name(const struct sb_gen_args *a, char *buf, size_t n)
{
    const struct preset *p = &presets[a->v[O_MODEL]];
    const int64_t val[6] = {p->layers, p->hidden, p->ffn, p->heads, p->kv_heads, p->vocab};
    int same = 1;
    for (int i = 1; i < 6; i++)
        same &= a->v[O_LAYERS + i] == val[i];
    if (same && a->v[O_LAYERS] == val[0])
        snprintf(buf, n, "%s", models[a->v[O_MODEL]]);
    else if (same)
        snprintf(buf, n, "%s-%lldl", models[a->v[O_MODEL]], (long long)a->v[O_LAYERS]);
    else
        snprintf(buf, n, "llama-h%lld-%lldl", (long long)a->v[O_HIDDEN],
                 (long long)a->v[O_LAYERS]);
}

static void fsdp_name(const struct sb_gen_args *a, const char *pass, char *buf, size_t n)
{
    char base[64];
    base_name(a, base, sizeof base);
    snprintf(buf, n, "%s-%s-r%lld%s", base, pass, (long long)a->v[O_RANKS],
             a->v[O_BUCKET] ? "-bucket" : "");
}

static void bwd_name(const struct sb_gen_args *a, char *buf, size_t n)
{
    static const char *const ac_tag[] = {"", "-sac", "-fullac"};
    char base[96];
    fsdp_name(a, "bwd", base, sizeof base);
    snprintf(buf, n, "%s%s%s%s", base, a->v[O_LOSS] ? "-extloss" : "",
             ac_tag[a->v[O_AC]], a->v[O_OPMATH] ? "-fp32" : "");
}

static void fwd_name(const struct sb_gen_args *a, char *buf, size_t n)
{
    fsdp_name(a, "fwd", buf, n);
}

static void tp_name(const struct sb_gen_args *a, char *buf, size_t n)
{
    char base[64];
    base_name(a, base, sizeof base);
    snprintf(buf, n, "%s-tp%lld", base, (long long)a->v[O_RANKS]);
}

/* ---- model shape --------------------------------------------------------- */

struct shape {
    uint64_t L, H, F, nh, nkv, V, seq, b; /* from the options */
    uint64_t db, pb, ranks;               /* dtype, master/reduce bytes, ranks */
    int bucket;
    uint64_t hd, kvd, T;                  /* head dim, k/v width, tokens */
    int ext_loss, ac, fp32;               /* llama-bwd: --loss, --ac, --opmath */
};

static void shape_init(struct shape *s, const struct sb_gen_args *a, int fsdp)
{
    s->L = (uint64_t)a->v[O_LAYERS];
    s->H = (uint64_t)a->v[O_HIDDEN];
    s->F = (uint64_t)a->v[O_FFN];
    s->nh = (uint64_t)a->v[O_HEADS];
    s->nkv = (uint64_t)a->v[O_KV_HEADS];
    s->V = (uint64_t)a->v[O_VOCAB];
    s->seq = (uint64_t)a->v[O_SEQ];
    s->b = (uint64_t)a->v[O_BATCH];
    s->db = (uint64_t)a->v[O_DTYPE_BYTES];
    s->ranks = (uint64_t)a->v[O_RANKS];
    s->pb = fsdp ? (uint64_t)a->v[O_PARAM_BYTES] : s->db;
    s->bucket = fsdp ? (int)a->v[O_BUCKET] : 0;
    s->hd = s->H / s->nh;
    s->kvd = s->nkv * s->hd;
    s->T = s->seq * s->b;
    s->ext_loss = s->ac = s->fp32 = 0;
}

/* Parameter count of the model: per layer the four attention projections,
 * the three MLP projections and two norms; plus embedding, final norm and
 * output projection (derived by hand for 8B in tests/test_gen.c). */
static uint64_t param_count(const struct shape *s)
{
    uint64_t layer = 2 * s->H * s->H + 2 * s->kvd * s->H + 3 * s->H * s->F + 2 * s->H;
    return s->L * layer + 2 * s->V * s->H + s->H;
}

/* Causal attention FLOPs of one forward: QK^T and PV over the lower triangle. */
static double attn_fwd_flops(const struct shape *s)
{
    return 2.0 * (double)s->b * (double)s->nh * (double)s->seq * (double)s->seq *
           (double)s->hd;
}

static void device_meta(struct sb_gen *g)
{
    sb_gen_meta(g, "device",
                "H100 SXM5 roofline: %.1f TFLOP/s bf16 dense, %.2f TB/s HBM3; "
                "efficiency mm %.2f, attention fwd %.2f bwd %.2f, memory %.2f; "
                "kernel floor %.1f us",
                SB_DEV_PEAK_FLOPS / 1e12, SB_DEV_HBM_BYTES_PER_S / 1e12,
                SB_DEV_MM_EFF, SB_DEV_ATTN_FWD_EFF, SB_DEV_ATTN_BWD_EFF,
                SB_DEV_MEM_EFF, SB_DEV_KERNEL_MIN_US);
}

/* ---- parameters and their collectives ------------------------------------ */

/* Parameters of one layer, in module registration order. */
enum { P_ATTN_NORM, P_WQ, P_WK, P_WV, P_WO, P_FFN_NORM, P_W1, P_W2, P_W3, N_LAYER_PARAMS };
/* The head group (output projection and final norm) and the embedding's. */
enum { P_OUT, P_FINAL_NORM };
enum { P_EMB };

struct param {
    const char *name;
    uint64_t rows, cols; /* [rows, cols], sharded on rows (FSDP2's dim 0) */
    uint32_t full;       /* the gathered weight; SB_NONE until gathered */
};

/* Parameters gathered and reduced together under --bucket layer: one layer,
 * the head, or the embedding.  With --bucket none each is its own collective. */
struct pgroup {
    char pfx[24];                   /* "L31", "head", "emb" */
    struct param p[N_LAYER_PARAMS];
    uint32_t n_params;
    uint32_t grads[N_LAYER_PARAMS]; /* reduce_scatter inputs awaiting the bucket */
    uint32_t n_grads;
};

struct llama {
    struct shape s;
    struct sb_gen *g;
    uint32_t freqs; /* rotary table [seq, hd/2] complex64, shared by every layer */
};

static void group_add(struct pgroup *G, const char *name, uint64_t rows, uint64_t cols)
{
    struct param *p = &G->p[G->n_params++];
    p->name = name;
    p->rows = rows;
    p->cols = cols;
    p->full = SB_NONE;
}

static void group_layer(struct pgroup *G, const struct shape *s, uint64_t l)
{
    memset(G, 0, sizeof *G);
    snprintf(G->pfx, sizeof G->pfx, "L%llu", (unsigned long long)l);
    group_add(G, "attn_norm", s->H, 1);
    group_add(G, "wq", s->H, s->H);
    group_add(G, "wk", s->kvd, s->H);
    group_add(G, "wv", s->kvd, s->H);
    group_add(G, "wo", s->H, s->H);
    group_add(G, "ffn_norm", s->H, 1);
    group_add(G, "w1", s->F, s->H);
    group_add(G, "w2", s->H, s->F);
    group_add(G, "w3", s->F, s->H);
}

static void group_head(struct pgroup *G, const struct shape *s)
{
    memset(G, 0, sizeof *G);
    strcpy(G->pfx, "head");
    group_add(G, "output", s->V, s->H);
    group_add(G, "final_norm", s->H, 1);
}

static void group_emb(struct pgroup *G, const struct shape *s)
{
    memset(G, 0, sizeof *G);
    strcpy(G->pfx, "emb");
    group_add(G, "embedding", s->V, s->H);
}

/* Elements of one rank's shard: FSDP2 pads dim 0 to a multiple of the ranks. */
static uint64_t shard_numel(const struct shape *s, const struct param *p)
{
    return sb_div_up(p->rows, s->ranks) * p->cols;
}

/* The shard and, with mixed precision, its cast to the compute dtype: what
 * the all_gather sends. */
static uint32_t shard_source(struct llama *m, struct pgroup *G, struct param *p)
{
    struct sb_gen *g = m->g;
    uint64_t n = shard_numel(&m->s, p);
    uint32_t sh = sb_gen_input(g, n * m->s.pb, SB_FLAG_WEIGHT, "%s.%s.shard",
                               G->pfx, p->name);
    if (m->s.pb == m->s.db)
        return sh;
    return sb_gen_elem(g, "convert", n * m->s.db, IN1(sh), "%s.%s.cast", G->pfx,
                       p->name);
}

/* --bucket layer: one all_gather of every parameter of the group (a variadic
 * all_gather, or FSDP2's flat buffer), then a view of each. */
static void gather_bucket(struct llama *m, struct pgroup *G)
{
    struct sb_gen *g = m->g;
    uint32_t src[N_LAYER_PARAMS];
    uint64_t bytes = 0;
    for (uint32_t i = 0; i < G->n_params; i++) {
        src[i] = shard_source(m, G, &G->p[i]);
        bytes += shard_numel(&m->s, &G->p[i]) * m->s.ranks * m->s.db;
    }
    uint32_t d = sb_gen_coll(g, SB_COLL_ALL_GATHER, G->n_params, src, bytes, bytes,
                             (uint32_t)m->s.ranks, 0, "%s.ag", G->pfx);
    for (uint32_t i = 0; i < G->n_params; i++) {
        struct param *p = &G->p[i];
        p->full = sb_gen_view(g, "getitem", d,
                              shard_numel(&m->s, p) * m->s.ranks * m->s.db,
                              "%s.%s", G->pfx, p->name);
    }
}

/* The gathered weight of parameter i, all-gathered at its first use. */
static uint32_t param_get(struct llama *m, struct pgroup *G, uint32_t i)
{
    struct param *p = &G->p[i];
    if (p->full != SB_NONE)
        return p->full;
    if (m->s.bucket) {
        gather_bucket(m, G);
        return p->full;
    }
    uint32_t src = shard_source(m, G, p);
    uint64_t bytes = shard_numel(&m->s, p) * m->s.ranks * m->s.db;
    p->full = sb_gen_coll(m->g, SB_COLL_ALL_GATHER, IN1(src), bytes, bytes,
                          (uint32_t)m->s.ranks, 0, "%s.%s.ag", G->pfx, p->name);
    return p->full;
}

/* The full gradient of parameter i is ready: cast it to the reduce dtype and
 * reduce-scatter it right away (or queue it for the group's bucket).  The
 * shard it leaves is the program's output. */
static void grad_put_typed(struct llama *m, struct pgroup *G, uint32_t i, uint32_t grad,
                           uint64_t grad_bytes)
{
    struct sb_gen *g = m->g;
    struct param *p = &G->p[i];
    uint64_t padded = shard_numel(&m->s, p) * m->s.ranks;
    uint32_t src = grad;
    if (m->s.pb != grad_bytes)
        src = sb_gen_elem(g, "convert", padded * m->s.pb, IN1(grad), "%s.%s.gcast",
                          G->pfx, p->name);
    if (m->s.bucket) {
        G->grads[G->n_grads++] = src;
        return;
    }
    sb_gen_coll(g, SB_COLL_REDUCE_SCATTER, IN1(src),
                shard_numel(&m->s, p) * m->s.pb, padded * m->s.pb,
                (uint32_t)m->s.ranks, SB_FLAG_OUTPUT, "%s.%s.rs", G->pfx, p->name);
}

/* A gradient in the activation dtype. */
static void grad_put(struct llama *m, struct pgroup *G, uint32_t i, uint32_t grad)
{
    grad_put_typed(m, G, i, grad, m->s.db);
}

/* --bucket layer: the group's one reduce_scatter, once all its gradients exist. */
static void group_flush(struct llama *m, struct pgroup *G)
{
    if (!G->n_grads)
        return;
    uint64_t out = 0, comm = 0;
    for (uint32_t i = 0; i < G->n_params; i++) {
        out += shard_numel(&m->s, &G->p[i]) * m->s.pb;
        comm += shard_numel(&m->s, &G->p[i]) * m->s.ranks * m->s.pb;
    }
    SB_ASSERT(G->n_grads == G->n_params);
    sb_gen_coll(m->g, SB_COLL_REDUCE_SCATTER, G->n_grads, G->grads, out, comm,
                (uint32_t)m->s.ranks, SB_FLAG_OUTPUT, "%s.rs", G->pfx);
    G->n_grads = 0;
}

/* ---- operators ----------------------------------------------------------- */

/* C[M, N] = A[M, K] B[K, N] in the compute dtype. */
static uint32_t mm(struct llama *m, uint64_t M, uint64_t N, uint64_t K, uint32_t a,
                   uint32_t b, const char *name)
{
    double flops = 2.0 * (double)M * (double)N * (double)K;
    double bytes = (double)((M * K + K * N + M * N) * m->s.db);
    return sb_gen_compute(m->g, "mm", sb_dev_time_us(flops, SB_DEV_MM_EFF, bytes),
                          M * N * m->s.db, IN2(a, b), "%s", name);
}

/* Backward of the linear y = x W^T with x [T, in] and W [out, in] as
 * AOTAutograd traces it: the forward's permute of the gathered weight is
 * recomputed and permuted back for the input gradient; the weight gradient is
 * (x^T dy)^T.  dy3 is [b, s, out] and x3 [b, s, in]; returns dx3 [b, s, in]. */
static uint32_t linear_bwd(struct llama *m, struct pgroup *G, uint32_t i,
                           uint32_t dy3, uint32_t x3, uint64_t in, uint64_t out)
{
    struct sb_gen *g = m->g;
    const char *P = G->pfx, *W = G->p[i].name;
    char nm[96];
    uint32_t w = param_get(m, G, i);
    uint32_t dy2 = sb_gen_view(g, "view", dy3, 0, "%s.%s.dy2d", P, W);
    uint32_t wt = sb_gen_view(g, "permute", w, 0, "%s.%s.t", P, W);
    uint32_t wtt = sb_gen_view(g, "permute", wt, 0, "%s.%s.tt", P, W);
    snprintf(nm, sizeof nm, "%s.%s.dgrad", P, W);
    uint32_t dx2 = mm(m, m->s.T, in, out, dy2, wtt, nm);
    uint32_t x2 = sb_gen_view(g, "view", x3, 0, "%s.%s.x2d", P, W);
    uint32_t x2t = sb_gen_view(g, "permute", x2, 0, "%s.%s.xt", P, W);
    snprintf(nm, sizeof nm, "%s.%s.wgrad", P, W);
    uint32_t dwt = mm(m, in, out, m->s.T, x2t, dy2, nm);
    uint32_t dw = sb_gen_view(g, "permute", dwt, 0, "%s.%s.dw", P, W);
    grad_put(m, G, i, dw);
    return sb_gen_view(g, "view", dx2, 0, "%s.%s.dx", P, W);
}

/* Forward of y = x W^T: view, permute of the gathered weight, mm, view. */
static uint32_t linear_fwd(struct llama *m, struct pgroup *G, uint32_t i, uint32_t x3,
                           uint64_t in, uint64_t out)
{
    struct sb_gen *g = m->g;
    const char *P = G->pfx, *W = G->p[i].name;
    char nm[96];
    uint32_t w = param_get(m, G, i);
    uint32_t x2 = sb_gen_view(g, "view", x3, 0, "%s.%s.x2d", P, W);
    uint32_t wt = sb_gen_view(g, "permute", w, 0, "%s.%s.t", P, W);
    snprintf(nm, sizeof nm, "%s.%s.mm", P, W);
    uint32_t y2 = mm(m, m->s.T, out, in, x2, wt, nm);
    return sb_gen_view(g, "view", y2, 0, "%s.%s.y", P, W);
}

/* One RMSNorm: y = (x * rsqrt(mean(x^2) + eps)) * w computed in fp32 and cast
 * back, as torchtitan's RMSNorm does.  The backward saves x and 1/rms and
 * recomputes the rest. */
struct norm {
    uint32_t pi;       /* the weight's index in its group */
    const char *tag;   /* "attn_norm" */
    uint32_t x, rstd;  /* saved: input [b, s, H], 1/rms [b, s, 1] fp32 */
    uint32_t x32, n;   /* recomputed: x in fp32, normalised x in the dtype */
    uint32_t y;        /* recomputed output n * w */
};

static void norm_init(struct norm *N, uint32_t pi, const char *tag, uint32_t x,
                      uint32_t rstd)
{
    N->pi = pi;
    N->tag = tag;
    N->x = x;
    N->rstd = rstd;
    N->x32 = N->n = N->y = SB_NONE;
}

static void norm_recompute(struct llama *m, struct pgroup *G, struct norm *N)
{
    struct sb_gen *g = m->g;
    const struct shape *s = &m->s;
    if (N->n != SB_NONE)
        return;
    N->x32 = sb_gen_elem(g, "convert", s->T * s->H * 4, IN1(N->x), "%s.%s.x32",
                         G->pfx, N->tag);
    uint32_t n32 = sb_gen_elem(g, "mul", s->T * s->H * 4, IN2(N->x32, N->rstd),
                               "%s.%s.n32", G->pfx, N->tag);
    N->n = sb_gen_elem(g, "convert", s->T * s->H * s->db, IN1(n32), "%s.%s.n",
                       G->pfx, N->tag);
}

/* The norm's output, recomputed for the weight gradients of the projections
 * that read it. */
static uint32_t norm_y(struct llama *m, struct pgroup *G, struct norm *N)
{
    if (N->y != SB_NONE)
        return N->y;
    norm_recompute(m, G, N);
    uint32_t w = param_get(m, G, N->pi);
    N->y = sb_gen_elem(m->g, "mul", m->s.T * m->s.H * m->s.db, IN2(N->n, w),
                       "%s.%s.y", G->pfx, N->tag);
    return N->y;
}

/* RMSNorm backward in core ATen: the weight gradient sum(dy * n), then the
 * input gradient through the fp32 cast, the mul by 1/rms, rsqrt's and mean's
 * and pow's derivatives, and the cast back. */
static uint32_t norm_bwd(struct llama *m, struct pgroup *G, struct norm *N, uint32_t dy)
{
    struct sb_gen *g = m->g;
    const struct shape *s = &m->s;
    const char *P = G->pfx, *t = N->tag;
    uint64_t TH = s->T * s->H, T4 = s->T * 4;
    norm_recompute(m, G, N);
    uint32_t w = param_get(m, G, N->pi);

    /* --opmath fp32: the weight gradient is reduced in fp32 */
    uint64_t wb = s->fp32 ? 4 : s->db;
    uint32_t t1 = sb_gen_elem(g, "mul", TH * wb, IN2(dy, N->n), "%s.%s.dw_mul", P, t);
    uint32_t dws = sb_gen_elem(g, "sum", s->H * wb, IN1(t1), "%s.%s.dw_sum", P, t);
    uint32_t dw = sb_gen_view(g, "view", dws, 0, "%s.%s.dw", P, t);
    grad_put_typed(m, G, N->pi, dw, wb);

    uint32_t gn = sb_gen_elem(g, "mul", TH * s->db, IN2(dy, w), "%s.%s.gn", P, t);
    uint32_t gn32 = sb_gen_elem(g, "convert", TH * 4, IN1(gn), "%s.%s.gn32", P, t);
    uint32_t gxa = sb_gen_elem(g, "mul", TH * 4, IN2(gn32, N->rstd), "%s.%s.gxa", P, t);
    uint32_t t2 = sb_gen_elem(g, "mul", TH * 4, IN2(gn32, N->x32), "%s.%s.gr_mul", P, t);
    uint32_t gr = sb_gen_elem(g, "sum", T4, IN1(t2), "%s.%s.gr", P, t);
    uint32_t r3 = sb_gen_elem(g, "pow", T4, IN1(N->rstd), "%s.%s.r3", P, t);
    uint32_t t3 = sb_gen_elem(g, "mul", T4, IN1(gr), "%s.%s.ga_half", P, t);
    uint32_t ga = sb_gen_elem(g, "mul", T4, IN2(t3, r3), "%s.%s.ga", P, t);
    uint32_t ge = sb_gen_view(g, "expand", ga, 0, "%s.%s.ge", P, t);
    uint32_t gp = sb_gen_elem(g, "div", TH * 4, IN1(ge), "%s.%s.gp", P, t);
    uint32_t x1 = sb_gen_elem(g, "pow", TH * 4, IN1(N->x32), "%s.%s.x1", P, t);
    uint32_t x2 = sb_gen_elem(g, "mul", TH * 4, IN1(x1), "%s.%s.x2", P, t);
    uint32_t gxb = sb_gen_elem(g, "mul", TH * 4, IN2(gp, x2), "%s.%s.gxb", P, t);
    uint32_t gx = sb_gen_elem(g, "add", TH * 4, IN2(gxa, gxb), "%s.%s.gx", P, t);
    return sb_gen_elem(g, "convert", TH * s->db, IN1(gx), "%s.%s.dx", P, t);
}

/* RMSNorm forward: the eight ops, 1/rms kept for the backward. */
static uint32_t norm_fwd(struct llama *m, struct pgroup *G, uint32_t pi, const char *t,
                         uint32_t x)
{
    struct sb_gen *g = m->g;
    const struct shape *s = &m->s;
    const char *P = G->pfx;
    uint64_t TH = s->T * s->H, T4 = s->T * 4;
    uint32_t x32 = sb_gen_elem(g, "convert", TH * 4, IN1(x), "%s.%s.x32", P, t);
    uint32_t sq = sb_gen_elem(g, "pow", TH * 4, IN1(x32), "%s.%s.sq", P, t);
    uint32_t ms = sb_gen_elem(g, "mean", T4, IN1(sq), "%s.%s.ms", P, t);
    uint32_t ae = sb_gen_elem(g, "add", T4, IN1(ms), "%s.%s.ms_eps", P, t);
    uint32_t r = sb_gen_elem(g, "rsqrt", T4, IN1(ae), "%s.%s.rstd", P, t);
    g->flags[r] |= SB_FLAG_OUTPUT; /* saved for the backward */
    uint32_t n32 = sb_gen_elem(g, "mul", TH * 4, IN2(x32, r), "%s.%s.n32", P, t);
    uint32_t n = sb_gen_elem(g, "convert", TH * s->db, IN1(n32), "%s.%s.n", P, t);
    uint32_t w = param_get(m, G, pi);
    return sb_gen_elem(g, "mul", TH * s->db, IN2(n, w), "%s.%s.y", P, t);
}

/* Backward of torchtitan's apply_rotary_emb for one of q, k (n heads): the
 * derivative of each forward op in reverse, the complex product by the
 * conjugate of the rotation. */
static uint32_t rope_bwd(struct llama *m, const char *P, const char *t, uint32_t d,
                         uint32_t fconj, uint64_t n)
{
    struct sb_gen *g = m->g;
    uint64_t el = m->s.T * n * m->s.hd;
    uint32_t c = sb_gen_elem(g, "convert", el * 4, IN1(d), "%s.rope_%s.f32", P, t);
    uint32_t pr = sb_gen_view(g, "view", c, 0, "%s.rope_%s.pairs", P, t);
    uint32_t cx = sb_gen_view(g, "view_as_complex", pr, 0, "%s.rope_%s.complex", P, t);
    uint32_t mu = sb_gen_elem(g, "mul", el * 4, IN2(cx, fconj), "%s.rope_%s.rot", P, t);
    uint32_t re = sb_gen_view(g, "view_as_real", mu, 0, "%s.rope_%s.real", P, t);
    uint32_t fl = sb_gen_view(g, "view", re, 0, "%s.rope_%s.flat", P, t);
    return sb_gen_elem(g, "convert", el * m->s.db, IN1(fl), "%s.rope_%s.d", P, t);
}

/* apply_rotary_emb forward for one of q, k; the result is saved. */
static uint32_t rope_fwd(struct llama *m, const char *P, const char *t, uint32_t x,
                         uint32_t freqs, uint64_t n)
{
    struct sb_gen *g = m->g;
    uint64_t el = m->s.T * n * m->s.hd;
    uint32_t c = sb_gen_elem(g, "convert", el * 4, IN1(x), "%s.rope_%s.f32", P, t);
    uint32_t pr = sb_gen_view(g, "view", c, 0, "%s.rope_%s.pairs", P, t);
    uint32_t cx = sb_gen_view(g, "view_as_complex", pr, 0, "%s.rope_%s.complex", P, t);
    uint32_t mu = sb_gen_elem(g, "mul", el * 4, IN2(cx, freqs), "%s.rope_%s.rot", P, t);
    uint32_t re = sb_gen_view(g, "view_as_real", mu, 0, "%s.rope_%s.real", P, t);
    uint32_t fl = sb_gen_view(g, "view", re, 0, "%s.rope_%s.flat", P, t);
    uint32_t out = sb_gen_elem(g, "convert", el * m->s.db, IN1(fl), "%s.%s_rot", P, t);
    g->flags[out] |= SB_FLAG_OUTPUT;
    return out;
}

/* repeat_kv: k or v [b, s, nkv, hd] expanded to every query head, a copy. */
static uint32_t repeat_kv(struct llama *m, const char *P, const char *t, uint32_t x)
{
    struct sb_gen *g = m->g;
    uint32_t u = sb_gen_view(g, "unsqueeze", x, 0, "%s.%s_unsq", P, t);
    uint32_t e = sb_gen_view(g, "expand", u, 0, "%s.%s_exp", P, t);
    uint32_t c = sb_gen_elem(g, "clone", m->s.T * m->s.H * m->s.db, IN1(e),
                             "%s.%s_rep_copy", P, t);
    return sb_gen_view(g, "view", c, 0, "%s.%s_rep", P, t);
}

/* Gradient of repeat_kv: the n_rep copies of each k/v head summed. */
static uint32_t repeat_kv_bwd(struct llama *m, const char *P, const char *t, uint32_t d)
{
    struct sb_gen *g = m->g;
    uint32_t tr = sb_gen_view(g, "transpose", d, 0, "%s.d%s_bshd", P, t);
    uint32_t v5 = sb_gen_view(g, "view", tr, 0, "%s.d%s_groups", P, t);
    uint32_t sm = sb_gen_elem(g, "sum", m->s.T * m->s.kvd * m->s.db, IN1(v5),
                              "%s.d%s_sum", P, t);
    return sb_gen_view(g, "squeeze", sm, 0, "%s.d%s_kv", P, t);
}

/* ---- llama-bwd ------------------------------------------------------------ */

/* What a block's backward reads from its forward.  SB_NONE: saved, an input
 * created where the backward first reads it (--ac none, the earlier graph's
 * order); otherwise saved or recomputed by recompute_op / recompute_full at
 * the start of the block's backward, where torch's checkpointing unpacks
 * them.  n1, n2 are the two norms, with their recomputed outputs. */
struct acts {
    uint32_t x, q, k, v, ao, lse, h, a1, a3;
    struct norm n1, n2;
    int has_norms;
};

/* 1/rms of x recomputed: the forward's first five norm ops. */
static uint32_t norm_rstd(struct llama *m, const char *P, const char *t, uint32_t x)
{
    struct sb_gen *g = m->g;
    uint64_t TH4 = m->s.T * m->s.H * 4, T4 = m->s.T * 4;
    uint32_t x32 = sb_gen_elem(g, "convert", TH4, IN1(x), "%s.%s.rc_x32", P, t);
    uint32_t sq = sb_gen_elem(g, "pow", TH4, IN1(x32), "%s.%s.rc_sq", P, t);
    uint32_t ms = sb_gen_elem(g, "mean", T4, IN1(sq), "%s.%s.rc_ms", P, t);
    uint32_t ae = sb_gen_elem(g, "add", T4, IN1(ms), "%s.%s.rc_ms_eps", P, t);
    return sb_gen_elem(g, "rsqrt", T4, IN1(ae), "%s.%s.rc_rstd", P, t);
}

/* Recomputed forward ops get the group prefix "<L>.rc" so that their names
 * differ from the backward's ops of the same weight; the weights themselves
 * are gathered first, under their own names. */
static void rc_begin(struct llama *m, struct pgroup *G, const uint32_t *params,
                     uint32_t n, char *saved_pfx)
{
    for (uint32_t i = 0; i < n; i++)
        param_get(m, G, params[i]);
    strcpy(saved_pfx, G->pfx);
    strncat(G->pfx, ".rc", sizeof G->pfx - strlen(G->pfx) - 1);
}

/* The rotated q or k, recomputed: not saved, unlike the forward's. */
static uint32_t rope_rc(struct llama *m, const char *P, const char *t, uint32_t x,
                        uint32_t freqs, uint64_t n)
{
    uint32_t r = rope_fwd(m, P, t, x, freqs, n);
    m->g->flags[r] &= ~(uint32_t)SB_FLAG_OUTPUT;
    return r;
}

/* The norms recomputed from the block input x and from h. */
static void norms_rc(struct llama *m, struct pgroup *G, struct acts *A, int second)
{
    if (!second) {
        norm_init(&A->n1, P_ATTN_NORM, "attn_norm", A->x,
                  norm_rstd(m, G->pfx, "attn_norm", A->x));
        norm_y(m, G, &A->n1);
        return;
    }
    norm_init(&A->n2, P_FFN_NORM, "ffn_norm", A->h, norm_rstd(m, G->pfx, "ffn_norm", A->h));
    norm_y(m, G, &A->n2);
    A->has_norms = 1;
}

/* --ac op, torchtitan's op-level selective checkpointing: the block input,
 * the wq, wv and w1 matmul outputs and the attention output with its
 * log-sum-exp are saved; wk, wo and w3 (every other matmul), the norms and
 * RoPE are recomputed (SiLU is recomputed by mlp_bwd in every mode). */
static void recompute_op(struct llama *m, struct pgroup *G, struct acts *A)
{
    static const uint32_t used[] = {P_ATTN_NORM, P_WK, P_WO, P_FFN_NORM, P_W3};
    struct sb_gen *g = m->g;
    const struct shape *s = &m->s;
    uint64_t TH = s->T * s->H * s->db, TKV = s->T * s->kvd * s->db;
    const char *P = G->pfx;
    char own[24];
    A->x = sb_gen_input(g, TH, 0, "%s.x", P);
    uint32_t q3 = sb_gen_input(g, TH, 0, "%s.q_mm", P);
    A->v = sb_gen_input(g, TKV, 0, "%s.v", P);
    A->ao = sb_gen_input(g, TH, 0, "%s.attn_out", P);
    A->lse = sb_gen_input(g, s->b * s->nh * s->seq * 4, 0, "%s.lse", P);
    A->a1 = sb_gen_input(g, s->T * s->F * s->db, 0, "%s.a1", P);
    norms_rc(m, G, A, 0);
    rc_begin(m, G, used, sizeof used / sizeof *used, own);
    uint32_t k3 = linear_fwd(m, G, P_WK, A->n1.y, s->H, s->kvd);
    uint32_t fv = sb_gen_view(g, "view", m->freqs, 0, "%s.freqs", P);
    A->q = rope_rc(m, P, "q", sb_gen_view(g, "view", q3, 0, "%s.q4d", P), fv, s->nh);
    A->k = rope_rc(m, P, "k", sb_gen_view(g, "view", k3, 0, "%s.k4d", P), fv, s->nkv);
    uint32_t o3 = sb_gen_view(g, "view", A->ao, 0, "%s.attn_out3d", P);
    uint32_t wo = linear_fwd(m, G, P_WO, o3, s->H, s->H);
    A->h = sb_gen_elem(g, "add", TH, IN2(A->x, wo), "%s.h", P);
    strcpy(G->pfx, own);
    norms_rc(m, G, A, 1);
    strncat(G->pfx, ".rc", sizeof G->pfx - strlen(G->pfx) - 1);
    A->a3 = linear_fwd(m, G, P_W3, A->n2.y, s->H, s->F);
    strcpy(G->pfx, own);
}

/* --ac full: only the block input is saved; the block's forward runs again up
 * to the last tensor the backward reads (torch.utils.checkpoint stops there:
 * w2 and the residual are not recomputed). */
static void recompute_full(struct llama *m, struct pgroup *G, struct acts *A)
{
    static const uint32_t used[] = {P_ATTN_NORM, P_WQ, P_WK, P_WV, P_WO, P_FFN_NORM,
                                    P_W1, P_W3};
    struct sb_gen *g = m->g;
    const struct shape *s = &m->s;
    uint64_t TH = s->T * s->H * s->db;
    uint64_t lse_bytes = s->b * s->nh * s->seq * 4;
    const char *P = G->pfx;
    char own[24];
    A->x = sb_gen_input(g, TH, 0, "%s.x", P);
    norms_rc(m, G, A, 0);
    rc_begin(m, G, used, sizeof used / sizeof *used, own);
    uint32_t q3 = linear_fwd(m, G, P_WQ, A->n1.y, s->H, s->H);
    uint32_t k3 = linear_fwd(m, G, P_WK, A->n1.y, s->H, s->kvd);
    uint32_t v3 = linear_fwd(m, G, P_WV, A->n1.y, s->H, s->kvd);
    uint32_t fv = sb_gen_view(g, "view", m->freqs, 0, "%s.freqs", P);
    A->q = rope_rc(m, P, "q", sb_gen_view(g, "view", q3, 0, "%s.q4d", P), fv, s->nh);
    A->k = rope_rc(m, P, "k", sb_gen_view(g, "view", k3, 0, "%s.k4d", P), fv, s->nkv);
    A->v = sb_gen_view(g, "view", v3, 0, "%s.v4d", P);
    uint32_t qt = sb_gen_view(g, "transpose", A->q, 0, "%s.q_t", P);
    uint32_t kt = sb_gen_view(g, "transpose", repeat_kv(m, P, "k", A->k), 0, "%s.k_t", P);
    uint32_t vt = sb_gen_view(g, "transpose", repeat_kv(m, P, "v", A->v), 0, "%s.v_t", P);
    double by = (double)(4 * TH + lse_bytes);
    uint32_t fa = sb_gen_compute(g, "flash_attn",
                                 sb_dev_time_us(attn_fwd_flops(s), SB_DEV_ATTN_FWD_EFF, by),
                                 TH + lse_bytes, IN3(qt, kt, vt), "%s.flash", P);
    uint32_t o = sb_gen_view(g, "getitem", fa, TH, "%s.attn_out_t", P);
    A->lse = sb_gen_view(g, "getitem", fa, lse_bytes, "%s.lse", P);
    A->ao = sb_gen_view(g, "transpose", o, 0, "%s.attn_out", P);
    uint32_t o3 = sb_gen_view(g, "view", A->ao, 0, "%s.attn_out3d", P);
    uint32_t wo = linear_fwd(m, G, P_WO, o3, s->H, s->H);
    A->h = sb_gen_elem(g, "add", TH, IN2(A->x, wo), "%s.h", P);
    strcpy(G->pfx, own);
    norms_rc(m, G, A, 1);
    strncat(G->pfx, ".rc", sizeof G->pfx - strlen(G->pfx) - 1);
    A->a1 = linear_fwd(m, G, P_W1, A->n2.y, s->H, s->F);
    A->a3 = linear_fwd(m, G, P_W3, A->n2.y, s->H, s->F);
    strcpy(G->pfx, own);
}

/* Backward of a block's MLP, out = h + w2(silu(w1 hn) * w3 hn), given
 * dy = d(out); returns d(h).  a1 and a3 are saved, the gate product is
 * recomputed; autograd runs w2, then the w3 branch before the SiLU and w1. */
static uint32_t mlp_bwd(struct llama *m, struct pgroup *G, struct acts *A, uint32_t dy)
{
    struct sb_gen *g = m->g;
    const struct shape *s = &m->s;
    const char *P = G->pfx;
    uint64_t TH = s->T * s->H * s->db, TF = s->T * s->F * s->db;
    /* --opmath fp32: SiLU and its backward on an fp32 copy of a1 */
    uint64_t TS = s->fp32 ? s->T * s->F * 4 : TF;
    struct norm N;

    uint32_t a1 = A->a1 != SB_NONE ? A->a1 : sb_gen_input(g, TF, 0, "%s.a1", P);
    uint32_t a3 = A->a3 != SB_NONE ? A->a3 : sb_gen_input(g, TF, 0, "%s.a3", P);
    uint32_t x1 = s->fp32 ? sb_gen_elem(g, "convert", TS, IN1(a1), "%s.a1_f32", P) : a1;
    uint32_t sg = sb_gen_elem(g, "sigmoid", TS, IN1(x1), "%s.sig", P);
    uint32_t sl = sb_gen_elem(g, "mul", TS, IN2(x1, sg), "%s.silu", P);
    uint32_t gg = sb_gen_elem(g, "mul", TF, IN2(sl, a3), "%s.gate", P);
    uint32_t dg = linear_bwd(m, G, P_W2, dy, gg, s->F, s->H);
    uint32_t ds = sb_gen_elem(g, "mul", TS, IN2(dg, a3), "%s.dsilu", P);
    uint32_t da3 = sb_gen_elem(g, "mul", TF, IN2(dg, sl), "%s.da3", P);
    if (A->has_norms) {
        N = A->n2;
    } else {
        uint32_t h = sb_gen_input(g, TH, 0, "%s.h", P);
        norm_init(&N, P_FFN_NORM, "ffn_norm", h,
                  sb_gen_input(g, s->T * 4, 0, "%s.rstd2", P));
    }
    uint32_t dn3 = linear_bwd(m, G, P_W3, da3, norm_y(m, G, &N), s->H, s->F);
    /* silu_backward decomposed: dy * sig * (1 + x * (1 - sig)), sig = 1/(1+e^-x) */
    uint32_t ne = sb_gen_elem(g, "neg", TS, IN1(x1), "%s.silu_neg", P);
    uint32_t ex = sb_gen_elem(g, "exp", TS, IN1(ne), "%s.silu_exp", P);
    uint32_t d1 = sb_gen_elem(g, "add", TS, IN1(ex), "%s.silu_den", P);
    uint32_t sr = sb_gen_elem(g, "reciprocal", TS, IN1(d1), "%s.silu_sig", P);
    uint32_t gs = sb_gen_elem(g, "mul", TS, IN2(ds, sr), "%s.silu_gs", P);
    uint32_t om = sb_gen_elem(g, "rsub", TS, IN1(sr), "%s.silu_1ms", P);
    uint32_t xo = sb_gen_elem(g, "mul", TS, IN2(x1, om), "%s.silu_xo", P);
    uint32_t ap = sb_gen_elem(g, "add", TS, IN1(xo), "%s.silu_1pxo", P);
    uint32_t da1 = sb_gen_elem(g, "mul", TS, IN2(gs, ap), "%s.da1", P);
    if (s->fp32)
        da1 = sb_gen_elem(g, "convert", TF, IN1(da1), "%s.da1_bf16", P);
    uint32_t dn1 = linear_bwd(m, G, P_W1, da1, norm_y(m, G, &N), s->H, s->F);
    uint32_t dhn = sb_gen_elem(g, "add", TH, IN2(dn3, dn1), "%s.dhn", P);
    uint32_t dxn = norm_bwd(m, G, &N, dhn);
    return sb_gen_elem(g, "add", TH, IN2(dy, dxn), "%s.dh", P);
}

/* Backward of a block's attention, h = x + wo(flash(rope(wq xn), rope(wk xn),
 * wv xn)), given dh = d(h); returns d(x).  Autograd order: wo, flash
 * attention, the k/v repeat and RoPE, then the v, k, q projections. */
static uint32_t attn_bwd(struct llama *m, struct pgroup *G, struct acts *A, uint32_t dh)
{
    struct sb_gen *g = m->g;
    const struct shape *s = &m->s;
    const char *P = G->pfx;
    uint64_t TH = s->T * s->H * s->db, TKV = s->T * s->kvd * s->db;
    uint64_t lse_bytes = s->b * s->nh * s->seq * 4;
    struct norm N;

    /* pass 1: the output projection, then flash attention's backward on the
     * saved q, the re-expanded k and v, the output and its log-sum-exp */
    uint32_t ao = A->ao != SB_NONE ? A->ao : sb_gen_input(g, TH, 0, "%s.attn_out", P);
    uint32_t ao3 = sb_gen_view(g, "view", ao, 0, "%s.attn_out3d", P);
    uint32_t da = linear_bwd(m, G, P_WO, dh, ao3, s->H, s->H);
    uint32_t d4 = sb_gen_view(g, "view", da, 0, "%s.dattn4d", P);
    uint32_t dt = sb_gen_view(g, "transpose", d4, 0, "%s.dattn_t", P);
    uint32_t q = A->q != SB_NONE ? A->q : sb_gen_input(g, TH, 0, "%s.q_rot", P);
    uint32_t qt = sb_gen_view(g, "transpose", q, 0, "%s.q_t", P);
    uint32_t k = A->k != SB_NONE ? A->k : sb_gen_input(g, TKV, 0, "%s.k_rot", P);
    uint32_t kt = sb_gen_view(g, "transpose", repeat_kv(m, P, "k", k), 0, "%s.k_t", P);
    uint32_t v = A->v != SB_NONE ? A->v : sb_gen_input(g, TKV, 0, "%s.v", P);
    uint32_t vt = sb_gen_view(g, "transpose", repeat_kv(m, P, "v", v), 0, "%s.v_t", P);
    uint32_t ot = sb_gen_view(g, "transpose", ao, 0, "%s.attn_out_t", P);
    uint32_t lse = A->lse != SB_NONE ? A->lse : sb_gen_input(g, lse_bytes, 0, "%s.lse", P);
    /* five matmuls in the backward against two in the forward; reads dO, q,
     * k, v, O and writes dq, dk, dv (k and v at full head count) */
    double fl = 2.5 * attn_fwd_flops(s);
    double by = (double)(5 * TH + 3 * TH + lse_bytes);
    uint32_t in6[6] = {dt, qt, kt, vt, ot, lse};
    uint32_t fa = sb_gen_compute(g, "flash_attn_bwd",
                                 sb_dev_time_us(fl, SB_DEV_ATTN_BWD_EFF, by), 3 * TH,
                                 6, in6, "%s.flash_bwd", P);
    uint32_t dqt = sb_gen_view(g, "getitem", fa, TH, "%s.dq_t", P);
    uint32_t dkt = sb_gen_view(g, "getitem", fa, TH, "%s.dk_t", P);
    uint32_t dvt = sb_gen_view(g, "getitem", fa, TH, "%s.dv_t", P);

    /* pass 2: repeat_kv's and RoPE's backward */
    uint32_t dv = repeat_kv_bwd(m, P, "v", dvt);
    uint32_t dk = repeat_kv_bwd(m, P, "k", dkt);
    uint32_t dq = sb_gen_view(g, "transpose", dqt, 0, "%s.dq_bshd", P);
    uint32_t fv = sb_gen_view(g, "view", m->freqs, 0, "%s.freqs", P);
    uint32_t fc = sb_gen_view(g, "conj", fv, 0, "%s.freqs_conj", P);
    uint32_t dkr = rope_bwd(m, P, "k", dk, fc, s->nkv);
    uint32_t dqr = rope_bwd(m, P, "q", dq, fc, s->nh);
    uint32_t dqh = sb_gen_view(g, "view", dqr, 0, "%s.dq3d", P);
    uint32_t dkh = sb_gen_view(g, "view", dkr, 0, "%s.dk3d", P);
    uint32_t dvh = sb_gen_view(g, "view", dv, 0, "%s.dv3d", P);

    /* pass 3: the v, k, q projections on the recomputed norm output, the
     * norm's backward, the residual */
    if (A->has_norms) {
        N = A->n1;
    } else {
        uint32_t x = sb_gen_input(g, TH, 0, "%s.x", P);
        norm_init(&N, P_ATTN_NORM, "attn_norm", x,
                  sb_gen_input(g, s->T * 4, 0, "%s.rstd1", P));
    }
    uint32_t gv = linear_bwd(m, G, P_WV, dvh, norm_y(m, G, &N), s->H, s->kvd);
    uint32_t gk = linear_bwd(m, G, P_WK, dkh, norm_y(m, G, &N), s->H, s->kvd);
    uint32_t gq = linear_bwd(m, G, P_WQ, dqh, norm_y(m, G, &N), s->H, s->H);
    uint32_t gvk = sb_gen_elem(g, "add", TH, IN2(gv, gk), "%s.dxn_vk", P);
    uint32_t dxn = sb_gen_elem(g, "add", TH, IN2(gvk, gq), "%s.dxn", P);
    uint32_t dxn1 = norm_bwd(m, G, &N, dxn);
    return sb_gen_elem(g, "add", TH, IN2(dh, dxn1), "%s.dx", P);
}

/* Backward of one transformer block (layer l), given dy = d(block output);
 * returns d(block input): the MLP, then attention, as autograd runs them. */
static uint32_t layer_bwd(struct llama *m, uint64_t l, uint32_t dy)
{
    struct pgroup G;
    struct acts A = {.x = SB_NONE, .q = SB_NONE, .k = SB_NONE, .v = SB_NONE,
                     .ao = SB_NONE, .lse = SB_NONE, .h = SB_NONE, .a1 = SB_NONE,
                     .a3 = SB_NONE};
    group_layer(&G, &m->s, l);
    if (m->s.ac == AC_OP)
        recompute_op(m, &G, &A);
    else if (m->s.ac == AC_FULL)
        recompute_full(m, &G, &A);
    uint32_t dh = mlp_bwd(m, &G, &A, dy);
    uint32_t dx = attn_bwd(m, &G, &A, dh);
    group_flush(m, &G);
    return dx;
}

/* The cross-entropy backward (--loss internal): d(logits) in the dtype.  The
 * forward saved the bf16 logits with the row max and log-sum-exp; log_softmax
 * is recomputed where its backward needs it. */
static uint32_t loss_bwd(struct llama *m)
{
    struct sb_gen *g = m->g;
    const struct shape *s = &m->s;
    uint64_t TV4 = s->T * s->V * 4, T4 = s->T * 4;

    /* pass 1: nll_loss_backward decomposed: a one-hot of -1/T at the labels */
    uint32_t dl = sb_gen_input(g, 4, 0, "head.dloss");
    uint32_t labels = sb_gen_input(g, s->T * 8, 0, "head.labels");
    uint32_t dm = sb_gen_elem(g, "div", 4, IN1(dl), "head.dloss_mean");
    uint32_t z = sb_gen_elem(g, "full", TV4, 0, NULL, "head.zeros");
    uint32_t lab = sb_gen_view(g, "unsqueeze", labels, 0, "head.labels2d");
    uint32_t oh = sb_gen_elem(g, "scatter", TV4, IN2(z, lab), "head.onehot");
    uint32_t dlp = sb_gen_elem(g, "mul", TV4, IN2(oh, dm), "head.dlogp");
    /* pass 2: log_softmax recomputed, then its backward dlogp - p * sum(dlogp) */
    uint32_t logits = sb_gen_input(g, s->T * s->V * s->db, 0, "head.logits");
    uint32_t amax = sb_gen_input(g, T4, 0, "head.amax");
    uint32_t lse = sb_gen_input(g, T4, 0, "head.logsumexp");
    uint32_t l2 = sb_gen_view(g, "view", logits, 0, "head.logits2d");
    uint32_t l32 = sb_gen_elem(g, "convert", TV4, IN1(l2), "head.logits32");
    uint32_t sh = sb_gen_elem(g, "sub", TV4, IN2(l32, amax), "head.shifted");
    uint32_t lp = sb_gen_elem(g, "sub", TV4, IN2(sh, lse), "head.logp");
    uint32_t p = sb_gen_elem(g, "exp", TV4, IN1(lp), "head.softmax");
    uint32_t sd = sb_gen_elem(g, "sum", T4, IN1(dlp), "head.dlogp_sum");
    uint32_t pd = sb_gen_elem(g, "mul", TV4, IN2(p, sd), "head.softmax_dsum");
    uint32_t d32 = sb_gen_elem(g, "sub", TV4, IN2(dlp, pd), "head.dlogits32");
    uint32_t d16 = sb_gen_elem(g, "convert", s->T * s->V * s->db, IN1(d32),
                               "head.dlogits");
    return sb_gen_view(g, "view", d16, 0, "head.dlogits3d");
}

/* Loss (unless external), output projection and final norm: returns d(last
 * block output). */
static uint32_t head_bwd(struct llama *m, struct pgroup *G)
{
    struct sb_gen *g = m->g;
    const struct shape *s = &m->s;
    uint64_t T4 = s->T * 4;
    struct norm N;
    uint32_t d3;

    if (s->ext_loss) {
        /* --loss external: the loss is compiled on its own; this graph starts
         * from the bf16 gradient of the logits it hands over */
        uint32_t d16 = sb_gen_input(g, s->T * s->V * s->db, 0, "head.dlogits");
        d3 = sb_gen_view(g, "view", d16, 0, "head.dlogits3d");
    } else {
        d3 = loss_bwd(m);
    }
    /* pass 3: output projection and final norm */
    uint32_t x = sb_gen_input(g, s->T * s->H * s->db, 0, "head.x");
    norm_init(&N, P_FINAL_NORM, "final_norm", x, sb_gen_input(g, T4, 0, "head.rstd"));
    uint32_t dy = linear_bwd(m, G, P_OUT, d3, norm_y(m, G, &N), s->H, s->V);
    uint32_t dx = norm_bwd(m, G, &N, dy);
    group_flush(m, G);
    return dx;
}

/* embedding_dense_backward decomposed: zeros, then index_put with accumulate. */
static void emb_bwd(struct llama *m, struct pgroup *G, uint32_t dx)
{
    struct sb_gen *g = m->g;
    const struct shape *s = &m->s;
    uint64_t eb = s->fp32 ? 4 : s->db; /* --opmath fp32: accumulate in fp32 */
    uint64_t VH = s->V * s->H * eb;
    /* the backward never reads the embedding, so it is not gathered; its
     * shard stays resident all the same */
    struct param *p = &G->p[P_EMB];
    sb_gen_input(g, shard_numel(s, p) * s->pb, SB_FLAG_WEIGHT, "%s.%s.shard", G->pfx,
                 p->name);
    uint32_t tok = sb_gen_input(g, s->T * 8, 0, "emb.tokens");
    uint32_t z = sb_gen_elem(g, "full", VH, 0, NULL, "emb.zeros");
    /* reads the T gradient rows and writes them into the zeroed table */
    double by = (double)(VH + 2 * s->T * s->H * s->db + s->T * 8);
    uint32_t dw = sb_gen_compute(g, "index_put", sb_dev_time_us(0, 1, by), VH,
                                 IN3(z, tok, dx), "emb.dw");
    grad_put_typed(m, G, P_EMB, dw, eb);
    group_flush(m, G);
}

static void fsdp_meta(struct sb_gen *g, const struct shape *s, const char *what)
{
    sb_gen_meta(g, "ranks", "%llu", (unsigned long long)s->ranks);
    sb_gen_meta(g, "description",
                "Llama %s of one rank under FSDP (ZeRO-3): %llu layers hidden %llu "
                "ffn %llu heads %llu/%llu vocab %llu, %llu x %llu tokens, "
                "%llu-byte activations, %llu-byte sharded weights, %llu ranks, "
                "%s collectives",
                what, (unsigned long long)s->L, (unsigned long long)s->H,
                (unsigned long long)s->F, (unsigned long long)s->nh,
                (unsigned long long)s->nkv, (unsigned long long)s->V,
                (unsigned long long)s->b, (unsigned long long)s->seq,
                (unsigned long long)s->db, (unsigned long long)s->pb,
                (unsigned long long)s->ranks,
                s->bucket ? "per-layer" : "per-parameter");
    sb_gen_meta(g, "params", "%llu", (unsigned long long)param_count(s));
    device_meta(g);
}

static void build_bwd(const struct sb_gen_args *a, struct sb_gen *g)
{
    struct llama m;
    struct pgroup head, emb;
    shape_init(&m.s, a, 1);
    m.s.ext_loss = (int)a->v[O_LOSS];
    m.s.ac = (int)a->v[O_AC];
    m.s.fp32 = (int)a->v[O_OPMATH];
    m.g = g;
    fsdp_meta(g, &m.s, "backward");
    m.freqs = sb_gen_input(g, m.s.seq * (m.s.hd / 2) * 8, 0, "freqs_cis");
    group_head(&head, &m.s);
    group_emb(&emb, &m.s);
    uint32_t dx = head_bwd(&m, &head);
    for (uint64_t l = m.s.L; l-- > 0;)
        dx = layer_bwd(&m, l, dx);
    emb_bwd(&m, &emb, dx);
}

/* ---- llama-fwd ------------------------------------------------------------ */

/* Forward of one block; every tensor the backward saves is marked output. */
static uint32_t layer_fwd(struct llama *m, uint64_t l, uint32_t x)
{
    struct sb_gen *g = m->g;
    const struct shape *s = &m->s;
    struct pgroup G;
    group_layer(&G, s, l);
    const char *P = G.pfx;
    uint64_t TH = s->T * s->H * s->db;

    g->flags[x] |= SB_FLAG_OUTPUT;
    uint32_t xn = norm_fwd(m, &G, P_ATTN_NORM, "attn_norm", x);
    uint32_t q3 = linear_fwd(m, &G, P_WQ, xn, s->H, s->H);
    uint32_t k3 = linear_fwd(m, &G, P_WK, xn, s->H, s->kvd);
    uint32_t v3 = linear_fwd(m, &G, P_WV, xn, s->H, s->kvd);
    uint32_t q4 = sb_gen_view(g, "view", q3, 0, "%s.q4d", P);
    uint32_t k4 = sb_gen_view(g, "view", k3, 0, "%s.k4d", P);
    uint32_t v4 = sb_gen_view(g, "view", v3, 0, "%s.v4d", P);
    g->flags[v4] |= SB_FLAG_OUTPUT;
    uint32_t fv = sb_gen_view(g, "view", m->freqs, 0, "%s.freqs", P);
    uint32_t qr = rope_fwd(m, P, "q", q4, fv, s->nh);
    uint32_t kr = rope_fwd(m, P, "k", k4, fv, s->nkv);
    uint32_t kx = repeat_kv(m, P, "k", kr);
    uint32_t vx = repeat_kv(m, P, "v", v4);
    uint32_t qt = sb_gen_view(g, "transpose", qr, 0, "%s.q_t", P);
    uint32_t kt = sb_gen_view(g, "transpose", kx, 0, "%s.k_t", P);
    uint32_t vt = sb_gen_view(g, "transpose", vx, 0, "%s.v_t", P);
    uint64_t lse_bytes = s->b * s->nh * s->seq * 4;
    double by = (double)(4 * TH + lse_bytes);
    uint32_t fa = sb_gen_compute(g, "flash_attn",
                                 sb_dev_time_us(attn_fwd_flops(s), SB_DEV_ATTN_FWD_EFF, by),
                                 TH + lse_bytes, IN3(qt, kt, vt), "%s.flash", P);
    uint32_t o = sb_gen_view(g, "getitem", fa, TH, "%s.attn_out_t", P);
    uint32_t lse = sb_gen_view(g, "getitem", fa, lse_bytes, "%s.lse", P);
    g->flags[o] |= SB_FLAG_OUTPUT;
    g->flags[lse] |= SB_FLAG_OUTPUT;
    uint32_t ob = sb_gen_view(g, "transpose", o, 0, "%s.attn_out", P);
    uint32_t o3 = sb_gen_view(g, "view", ob, 0, "%s.attn_out3d", P);
    uint32_t ao = linear_fwd(m, &G, P_WO, o3, s->H, s->H);
    uint32_t h = sb_gen_elem(g, "add", TH, IN2(x, ao), "%s.h", P);
    g->flags[h] |= SB_FLAG_OUTPUT;
    uint32_t hn = norm_fwd(m, &G, P_FFN_NORM, "ffn_norm", h);
    uint32_t a1 = linear_fwd(m, &G, P_W1, hn, s->H, s->F);
    uint32_t a3 = linear_fwd(m, &G, P_W3, hn, s->H, s->F);
    g->flags[a1] |= SB_FLAG_OUTPUT;
    g->flags[a3] |= SB_FLAG_OUTPUT;
    uint64_t TF = s->T * s->F * s->db;
    uint32_t sg = sb_gen_elem(g, "sigmoid", TF, IN1(a1), "%s.sig", P);
    uint32_t sl = sb_gen_elem(g, "mul", TF, IN2(a1, sg), "%s.silu", P);
    uint32_t gg = sb_gen_elem(g, "mul", TF, IN2(sl, a3), "%s.gate", P);
    uint32_t f = linear_fwd(m, &G, P_W2, gg, s->F, s->H);
    return sb_gen_elem(g, "add", TH, IN2(h, f), "%s.out", P);
}

static void build_fwd(const struct sb_gen_args *a, struct sb_gen *g)
{
    struct llama m;
    struct pgroup head, emb;
    shape_init(&m.s, a, 1);
    m.g = g;
    const struct shape *s = &m.s;
    fsdp_meta(g, s, "forward");
    uint64_t TV4 = s->T * s->V * 4, T4 = s->T * 4, TH = s->T * s->H * s->db;
    m.freqs = sb_gen_input(g, s->seq * (s->hd / 2) * 8, 0, "freqs_cis");
    group_head(&head, s);
    group_emb(&emb, s);

    /* pass 1: embedding lookup, a gather of T rows */
    uint32_t tok = sb_gen_input(g, s->T * 8, 0, "emb.tokens");
    uint32_t w = param_get(&m, &emb, P_EMB);
    uint32_t x = sb_gen_compute(g, "embedding",
                                sb_dev_time_us(0, 1, (double)(2 * TH + s->T * 8)),
                                TH, IN2(w, tok), "emb.out");
    /* pass 2: the blocks */
    for (uint64_t l = 0; l < s->L; l++)
        x = layer_fwd(&m, l, x);
    /* pass 3: final norm, output projection, fp32 cross entropy */
    g->flags[x] |= SB_FLAG_OUTPUT;
    uint32_t y = norm_fwd(&m, &head, P_FINAL_NORM, "final_norm", x);
    uint32_t logits = linear_fwd(&m, &head, P_OUT, y, s->H, s->V);
    g->flags[logits] |= SB_FLAG_OUTPUT;
    uint32_t l2 = sb_gen_view(g, "view", logits, 0, "head.logits2d");
    uint32_t l32 = sb_gen_elem(g, "convert", TV4, IN1(l2), "head.logits32");
    uint32_t amax = sb_gen_elem(g, "amax", T4, IN1(l32), "head.amax");
    uint32_t sh = sb_gen_elem(g, "sub", TV4, IN2(l32, amax), "head.shifted");
    uint32_t ex = sb_gen_elem(g, "exp", TV4, IN1(sh), "head.exp");
    uint32_t se = sb_gen_elem(g, "sum", T4, IN1(ex), "head.sumexp");
    uint32_t lse = sb_gen_elem(g, "log", T4, IN1(se), "head.logsumexp");
    uint32_t lp = sb_gen_elem(g, "sub", TV4, IN2(sh, lse), "head.logp");
    g->flags[amax] |= SB_FLAG_OUTPUT;
    g->flags[lse] |= SB_FLAG_OUTPUT;
    uint32_t labels = sb_gen_input(g, s->T * 8, 0, "head.labels");
    uint32_t lab = sb_gen_view(g, "unsqueeze", labels, 0, "head.labels2d");
    uint32_t gt = sb_gen_elem(g, "gather", T4, IN2(lp, lab), "head.target_logp");
    uint32_t ng = sb_gen_elem(g, "neg", T4, IN1(gt), "head.nll");
    uint32_t sm = sb_gen_elem(g, "sum", 4, IN1(ng), "head.nll_sum");
    uint32_t loss = sb_gen_elem(g, "div", 4, IN1(sm), "head.loss");
    g->flags[loss] |= SB_FLAG_OUTPUT;
}

/* ---- llama-tp ------------------------------------------------------------- */

/* Megatron tensor parallelism at kernel granularity (fused norm, RoPE and
 * SwiGLU kernels, flash attention): column-parallel QKV and gate/up
 * projections, row-parallel output and down projections, an all_reduce of the
 * partial sums after attention and after the MLP in the forward, and of the
 * input gradients before each norm in the backward.  Weights are whole on
 * each rank (weight); their gradients are the program's outputs. */
struct tp {
    struct shape s;
    struct sb_gen *g;
    uint64_t nh, nkv, F, V, qkv; /* this rank's heads, k/v heads, MLP, vocab, QKV width */
    uint32_t freqs;
};

/* What the backward of one block needs from its forward. */
struct tp_saved {
    uint32_t x, n1, qr, kr, v, o, lse, h, n2, a13, gate;
    uint32_t w_an, w_qkv, w_o, w_fn, w_13, w_2;
};

static uint32_t tp_mm(struct tp *t, uint64_t M, uint64_t N, uint64_t K, uint32_t a,
                      uint32_t b, uint32_t flags, const char *fmt, const char *P)
{
    double flops = 2.0 * (double)M * (double)N * (double)K;
    double bytes = (double)((M * K + K * N + M * N) * t->s.db);
    uint32_t id = sb_gen_compute(t->g, "mm", sb_dev_time_us(flops, SB_DEV_MM_EFF, bytes),
                                 M * N * t->s.db, IN2(a, b), fmt, P);
    t->g->flags[id] |= flags;
    return id;
}

/* The all_reduce of a [T, H] partial sum. */
static uint32_t tp_allreduce(struct tp *t, uint32_t x, const char *fmt, const char *P)
{
    uint64_t TH = t->s.T * t->s.H * t->s.db;
    uint32_t st = sb_gen_start(t->g, SB_COLL_ALL_REDUCE, IN1(x), TH, TH,
                               (uint32_t)t->s.ranks, fmt, P);
    return sb_gen_done(t->g, st, 0);
}

static uint32_t tp_layer_fwd(struct tp *t, uint64_t l, uint32_t x, struct tp_saved *S)
{
    struct sb_gen *g = t->g;
    const struct shape *s = &t->s;
    char P[24];
    snprintf(P, sizeof P, "L%llu", (unsigned long long)l);
    uint64_t T = s->T, db = s->db, TH = T * s->H * db;
    S->x = x;
    S->w_an = sb_gen_input(g, s->H * db, SB_FLAG_WEIGHT, "%s.attn_norm.w", P);
    S->w_qkv = sb_gen_input(g, t->qkv * s->H * db, SB_FLAG_WEIGHT, "%s.wqkv.w", P);
    S->w_o = sb_gen_input(g, s->H * t->nh * s->hd * db, SB_FLAG_WEIGHT, "%s.wo.w", P);
    S->w_fn = sb_gen_input(g, s->H * db, SB_FLAG_WEIGHT, "%s.ffn_norm.w", P);
    S->w_13 = sb_gen_input(g, 2 * t->F * s->H * db, SB_FLAG_WEIGHT, "%s.w13.w", P);
    S->w_2 = sb_gen_input(g, s->H * t->F * db, SB_FLAG_WEIGHT, "%s.w2.w", P);

    S->n1 = sb_gen_elem(g, "rmsnorm", TH, IN2(x, S->w_an), "%s.attn_norm", P);
    uint32_t qkv = tp_mm(t, T, t->qkv, s->H, S->n1, S->w_qkv, 0, "%s.qkv", P);
    uint64_t qb = T * t->nh * s->hd * db, kb = T * t->nkv * s->hd * db;
    uint32_t q = sb_gen_view(g, "split", qkv, qb, "%s.q", P);
    uint32_t k = sb_gen_view(g, "split", qkv, kb, "%s.k", P);
    S->v = sb_gen_view(g, "split", qkv, kb, "%s.v", P);
    S->qr = sb_gen_elem(g, "rope", qb, IN2(q, t->freqs), "%s.q_rot", P);
    S->kr = sb_gen_elem(g, "rope", kb, IN2(k, t->freqs), "%s.k_rot", P);
    uint64_t lse_bytes = s->b * t->nh * s->seq * 4;
    struct shape local = *s;
    local.nh = t->nh;
    double by = (double)(2 * qb + 2 * kb + lse_bytes);
    uint32_t fa = sb_gen_compute(g, "flash_attn",
                                 sb_dev_time_us(attn_fwd_flops(&local),
                                                SB_DEV_ATTN_FWD_EFF, by),
                                 qb + lse_bytes, IN3(S->qr, S->kr, S->v), "%s.flash", P);
    S->o = sb_gen_view(g, "getitem", fa, qb, "%s.attn_out", P);
    S->lse = sb_gen_view(g, "getitem", fa, lse_bytes, "%s.lse", P);
    uint32_t ao = tp_mm(t, T, s->H, t->nh * s->hd, S->o, S->w_o, 0, "%s.wo", P);
    uint32_t ar = tp_allreduce(t, ao, "%s.attn_ar", P);
    S->h = sb_gen_elem(g, "add", TH, IN2(x, ar), "%s.h", P);
    S->n2 = sb_gen_elem(g, "rmsnorm", TH, IN2(S->h, S->w_fn), "%s.ffn_norm", P);
    S->a13 = tp_mm(t, T, 2 * t->F, s->H, S->n2, S->w_13, 0, "%s.w13", P);
    S->gate = sb_gen_elem(g, "silu_mul", T * t->F * db, IN1(S->a13), "%s.gate", P);
    uint32_t f = tp_mm(t, T, s->H, t->F, S->gate, S->w_2, 0, "%s.w2", P);
    uint32_t fr = tp_allreduce(t, f, "%s.mlp_ar", P);
    return sb_gen_elem(g, "add", TH, IN2(S->h, fr), "%s.out", P);
}

/* rmsnorm_bwd as two kernels: the input gradient, and the weight gradient (an
 * output of the program). */
static uint32_t tp_norm_bwd(struct tp *t, const char *P, const char *tag, uint32_t dy,
                            uint32_t x, uint32_t w)
{
    struct sb_gen *g = t->g;
    uint64_t TH = t->s.T * t->s.H * t->s.db;
    uint32_t dw = sb_gen_elem(g, "rmsnorm_bwd_dw", t->s.H * t->s.db, IN2(dy, x),
                              "%s.%s.dw", P, tag);
    g->flags[dw] |= SB_FLAG_OUTPUT;
    return sb_gen_elem(g, "rmsnorm_bwd", TH, IN3(dy, x, w), "%s.%s.dx", P, tag);
}

static uint32_t tp_layer_bwd(struct tp *t, uint64_t l, uint32_t dy, const struct tp_saved *S)
{
    struct sb_gen *g = t->g;
    const struct shape *s = &t->s;
    char P[24];
    snprintf(P, sizeof P, "L%llu", (unsigned long long)l);
    uint64_t T = s->T, db = s->db, TH = T * s->H * db;
    uint64_t qb = T * t->nh * s->hd * db, kb = T * t->nkv * s->hd * db;

    /* pass 1: MLP */
    uint32_t dgate = tp_mm(t, T, t->F, s->H, dy, S->w_2, 0, "%s.w2.dgrad", P);
    tp_mm(t, s->H, t->F, T, S->gate, dy, SB_FLAG_OUTPUT, "%s.w2.wgrad", P);
    uint32_t da13 = sb_gen_elem(g, "silu_mul_bwd", T * 2 * t->F * db,
                                IN2(dgate, S->a13), "%s.dw13_in", P);
    uint32_t dn2 = tp_mm(t, T, s->H, 2 * t->F, da13, S->w_13, 0, "%s.w13.dgrad", P);
    tp_mm(t, 2 * t->F, s->H, T, da13, S->n2, SB_FLAG_OUTPUT, "%s.w13.wgrad", P);
    uint32_t dn2r = tp_allreduce(t, dn2, "%s.mlp_bwd_ar", P);
    uint32_t dxn2 = tp_norm_bwd(t, P, "ffn_norm", dn2r, S->h, S->w_fn);
    uint32_t dh = sb_gen_elem(g, "add", TH, IN2(dy, dxn2), "%s.dh", P);

    /* pass 2: attention */
    uint32_t dout = tp_mm(t, T, t->nh * s->hd, s->H, dh, S->w_o, 0, "%s.wo.dgrad", P);
    tp_mm(t, s->H, t->nh * s->hd, T, dh, S->o, SB_FLAG_OUTPUT, "%s.wo.wgrad", P);
    struct shape local = *s;
    local.nh = t->nh;
    uint64_t lse_bytes = s->b * t->nh * s->seq * 4;
    double by = (double)(3 * qb + 2 * kb + qb + 2 * kb + lse_bytes);
    uint32_t in6[6] = {dout, S->qr, S->kr, S->v, S->o, S->lse};
    uint32_t fb = sb_gen_compute(g, "flash_attn_bwd",
                                 sb_dev_time_us(2.5 * attn_fwd_flops(&local),
                                                SB_DEV_ATTN_BWD_EFF, by),
                                 qb + 2 * kb, 6, in6, "%s.flash_bwd", P);
    uint32_t dq = sb_gen_view(g, "getitem", fb, qb, "%s.dq_rot", P);
    uint32_t dk = sb_gen_view(g, "getitem", fb, kb, "%s.dk_rot", P);
    uint32_t dv = sb_gen_view(g, "getitem", fb, kb, "%s.dv", P);
    uint32_t dqr = sb_gen_elem(g, "rope_bwd", qb, IN2(dq, t->freqs), "%s.dq", P);
    uint32_t dkr = sb_gen_elem(g, "rope_bwd", kb, IN2(dk, t->freqs), "%s.dk", P);
    uint32_t dqkv = sb_gen_elem(g, "cat", T * t->qkv * db, IN3(dqr, dkr, dv), "%s.dqkv", P);
    uint32_t dn1 = tp_mm(t, T, s->H, t->qkv, dqkv, S->w_qkv, 0, "%s.wqkv.dgrad", P);
    tp_mm(t, t->qkv, s->H, T, dqkv, S->n1, SB_FLAG_OUTPUT, "%s.wqkv.wgrad", P);
    uint32_t dn1r = tp_allreduce(t, dn1, "%s.attn_bwd_ar", P);
    uint32_t dxn1 = tp_norm_bwd(t, P, "attn_norm", dn1r, S->x, S->w_an);
    return sb_gen_elem(g, "add", TH, IN2(dh, dxn1), "%s.dx", P);
}

static void build_tp(const struct sb_gen_args *a, struct sb_gen *g)
{
    struct tp t;
    shape_init(&t.s, a, 0);
    t.g = g;
    const struct shape *s = &t.s;
    t.nh = s->nh / s->ranks;
    t.nkv = s->nkv / s->ranks;
    t.F = s->F / s->ranks;
    t.V = s->V / s->ranks;
    t.qkv = (t.nh + 2 * t.nkv) * s->hd;
    uint64_t T = s->T, db = s->db, TH = T * s->H * db, T4 = T * 4;
    sb_gen_meta(g, "ranks", "%llu", (unsigned long long)s->ranks);
    sb_gen_meta(g, "description",
                "Llama forward and backward of one rank under Megatron tensor "
                "parallelism of degree %llu: %llu layers hidden %llu ffn %llu heads "
                "%llu/%llu vocab %llu, %llu x %llu tokens",
                (unsigned long long)s->ranks, (unsigned long long)s->L,
                (unsigned long long)s->H, (unsigned long long)s->F,
                (unsigned long long)s->nh, (unsigned long long)s->nkv,
                (unsigned long long)s->V, (unsigned long long)s->b,
                (unsigned long long)s->seq);
    device_meta(g);
    t.freqs = sb_gen_input(g, s->seq * (s->hd / 2) * 8, 0, "freqs_cis");
    struct tp_saved *S = sb_xcalloc(s->L, sizeof *S);

    /* pass 1: vocab-parallel embedding (rows outside this rank's slice are
     * zero), summed over the ranks */
    uint32_t tok = sb_gen_input(g, T * 8, 0, "emb.tokens");
    uint32_t we = sb_gen_input(g, t.V * s->H * db, SB_FLAG_WEIGHT, "emb.w");
    uint32_t e = sb_gen_compute(g, "embedding", sb_dev_time_us(0, 1, (double)(2 * TH)),
                                TH, IN2(we, tok), "emb.out");
    uint32_t x = tp_allreduce(&t, e, "%s.ar", "emb");
    /* pass 2: the blocks forward */
    for (uint64_t l = 0; l < s->L; l++)
        x = tp_layer_fwd(&t, l, x, &S[l]);
    /* pass 3: final norm, column-parallel output projection, vocab-parallel
     * cross entropy (all_reduce of the row max, then of the sum of
     * exponentials and the target logit) */
    uint32_t wf = sb_gen_input(g, s->H * db, SB_FLAG_WEIGHT, "head.final_norm.w");
    uint32_t wo = sb_gen_input(g, t.V * s->H * db, SB_FLAG_WEIGHT, "head.output.w");
    uint32_t nf = sb_gen_elem(g, "rmsnorm", TH, IN2(x, wf), "head.final_norm");
    uint32_t logits = tp_mm(&t, T, t.V, s->H, nf, wo, 0, "%s.logits", "head");
    uint32_t lmax = sb_gen_elem(g, "amax", T4, IN1(logits), "head.max");
    uint32_t st1 = sb_gen_start(g, SB_COLL_ALL_REDUCE, IN1(lmax), T4, T4,
                                (uint32_t)s->ranks, "head.max_ar");
    uint32_t gmax = sb_gen_done(g, st1, 0);
    uint32_t labels = sb_gen_input(g, T * 8, 0, "head.labels");
    uint32_t stats = sb_gen_elem(g, "ce_stats", 2 * T4, IN3(logits, gmax, labels),
                                 "head.sumexp_target");
    uint32_t st2 = sb_gen_start(g, SB_COLL_ALL_REDUCE, IN1(stats), 2 * T4, 2 * T4,
                                (uint32_t)s->ranks, "head.stats_ar");
    uint32_t gst = sb_gen_done(g, st2, 0);
    uint32_t loss = sb_gen_elem(g, "ce_loss", 4, IN1(gst), "head.loss");
    g->flags[loss] |= SB_FLAG_OUTPUT;
    /* pass 4: backward of the head */
    uint32_t dl = sb_gen_elem(g, "ce_bwd", T * t.V * db, IN4(logits, gmax, gst, labels),
                              "head.dlogits");
    uint32_t dnf = tp_mm(&t, T, s->H, t.V, dl, wo, 0, "%s.output.dgrad", "head");
    tp_mm(&t, t.V, s->H, T, dl, nf, SB_FLAG_OUTPUT, "%s.output.wgrad", "head");
    uint32_t dnfr = tp_allreduce(&t, dnf, "%s.output_bwd_ar", "head");
    uint32_t dx = tp_norm_bwd(&t, "head", "final_norm", dnfr, x, wf);
    /* pass 5: the blocks backward, then the embedding's gradient rows */
    for (uint64_t l = s->L; l-- > 0;)
        dx = tp_layer_bwd(&t, l, dx, &S[l]);
    uint32_t dw = sb_gen_compute(g, "embedding_bwd",
                                 sb_dev_time_us(0, 1, (double)(t.V * s->H * db + TH)),
                                 t.V * s->H * db, IN2(dx, tok), "emb.dw");
    g->flags[dw] |= SB_FLAG_OUTPUT;
    free(S);
}

/* ---- kinds ---------------------------------------------------------------- */

const struct sb_gen_kind sb_gen_llama_bwd = {
    "llama-bwd",
    "Llama FSDP backward: per-parameter all_gather, reduce_scatter",
    "The backward pass of one rank of a Llama model trained with fully "
    "sharded data parallelism (FSDP / ZeRO-3), the headline workload: "
    "layers last to first in autograd order, one node per ATen operator as "
    "AOTAutograd traces it before fusion (views are aliasing nops), an "
    "all_gather of each parameter right before its first use and a "
    "reduce_scatter of each weight gradient right after it is produced, saved "
    "activations as inputs.  Costs from an H100 roofline.",
    bwd_opts, N_BWD_OPTS, llama_preset, fsdp_check_bwd, bwd_name, build_bwd,
};

const struct sb_gen_kind sb_gen_llama_fwd = {
    "llama-fwd",
    "Llama FSDP forward: per-parameter all_gather",
    "The forward pass of one rank of the same FSDP program as llama-bwd: an "
    "all_gather of each parameter (embedding included) right before its first "
    "use; the tensors the backward saves are marked output, so they are never "
    "freed.",
    fsdp_opts, N_FSDP_OPTS, llama_preset, fsdp_check_fwd, fwd_name, build_fwd,
};

const struct sb_gen_kind sb_gen_llama_tp = {
    "llama-tp",
    "Llama Megatron tensor parallel, fwd+bwd: all_reduce",
    "The forward and backward passes of one rank of a Llama model under "
    "Megatron tensor parallelism, at kernel granularity: column-parallel QKV "
    "and gate/up projections, row-parallel output and down projections, an "
    "all_reduce after attention and after the MLP of each layer, and of the "
    "input gradients before each norm in the backward; vocabulary-parallel "
    "embedding and cross entropy.",
    tp_opts, N_TP_OPTS, llama_preset, tp_check, tp_name, build_tp,
};
