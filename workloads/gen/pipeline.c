/* pipeline: one stage of a pipeline-parallel Llama running the 1F1B schedule
 * of PipeDream-Flush / Megatron-LM (workloads/README.md).
 *
 * Stage `--stage` of `--stages` holds `--layers` transformer blocks (the
 * first stage also the embedding, the last the final norm, output projection
 * and loss).  Each micro-batch's forward receives the previous stage's
 * activation (recv), runs the blocks and sends its output on (send); its
 * backward receives the gradient, runs the blocks in reverse and sends the
 * input gradient back.  A block is one fused node each way, priced from its
 * matmul and attention FLOPs; it keeps the tensors its backward needs (the
 * same set llama-bwd saves) from its forward to its backward, which is what
 * bounds 1F1B's memory to the micro-batches in flight. */
#include "gen-impl.h"

enum {
    O_STAGES, O_STAGE, O_MICROBATCHES, O_LAYERS, O_HIDDEN, O_FFN, O_HEADS,
    O_KV_HEADS, O_VOCAB, O_SEQ, O_MICRO_BATCH, O_DTYPE_BYTES, N_OPTS
};

/* Defaults: Llama 3 8B's 32 blocks over 4 stages, 8 micro-batches of one
 * 4096-token sequence, the second stage (which both receives and sends). */
static const struct sb_gen_opt opts[N_OPTS] = {
    {"stages", SB_OPT_INT, 4, 1, 1024, NULL, "pipeline stages"},
    {"stage", SB_OPT_INT, 1, 0, 1023, NULL, "this rank's stage, 0-based"},
    {"microbatches", SB_OPT_INT, 8, 1, 100000, NULL, "micro-batches per step"},
    {"layers", SB_OPT_INT, 8, 1, 10000, NULL, "transformer blocks on this stage"},
    {"hidden", SB_OPT_INT, 4096, 64, 65536, NULL, "model width"},
    {"ffn", SB_OPT_INT, 14336, 64, 1 << 20, NULL, "SwiGLU MLP inner width"},
    {"heads", SB_OPT_INT, 32, 1, 1024, NULL, "query heads"},
    {"kv-heads", SB_OPT_INT, 8, 1, 1024, NULL, "key/value heads"},
    {"vocab", SB_OPT_INT, 128256, 64, 1 << 22, NULL, "vocabulary (first and last stage)"},
    {"seq", SB_OPT_INT, 4096, 16, 1 << 20, NULL, "tokens per sequence"},
    {"micro-batch", SB_OPT_INT, 1, 1, 4096, NULL, "sequences per micro-batch"},
    {"dtype-bytes", SB_OPT_INT, 2, 1, 8, NULL, "bytes per element (2: bf16)"},
};

#define MAX_NODES 20000000 /* the harness holds 10 million nodes; twice that */

static int check(const struct sb_gen_args *a, struct sb_err *e)
{
    if (a->v[O_STAGE] >= a->v[O_STAGES])
        return sb_errf(e, "gen pipeline: --stage %lld must be below --stages %lld",
                       (long long)a->v[O_STAGE], (long long)a->v[O_STAGES]);
    int64_t H = a->v[O_HIDDEN], nh = a->v[O_HEADS], nkv = a->v[O_KV_HEADS];
    if (H % nh || nh % nkv)
        return sb_errf(e, "gen pipeline: --hidden %lld must be a multiple of "
                       "--heads %lld, itself a multiple of --kv-heads %lld",
                       (long long)H, (long long)nh, (long long)nkv);
    /* two nodes per block and micro-batch, plus the transfers */
    int64_t nodes = a->v[O_MICROBATCHES] * (2 * a->v[O_LAYERS] + 8);
    if (nodes > MAX_NODES)
        return sb_errf(e, "gen pipeline: --microbatches %lld x --layers %lld "
                       "would make about %lld nodes, more than %d",
                       (long long)a->v[O_MICROBATCHES], (long long)a->v[O_LAYERS],
                       (long long)nodes, MAX_NODES);
    return 0;
}

static void default_name(const struct sb_gen_args *a, char *buf, size_t n)
{
    snprintf(buf, n, "pipeline-s%lldof%lld-m%lld-%lldl", (long long)a->v[O_STAGE],
             (long long)a->v[O_STAGES], (long long)a->v[O_MICROBATCHES],
             (long long)a->v[O_LAYERS]);
}

struct pipe {
    struct sb_gen *g;
    uint64_t S, s, M, L, H, F, nh, nkv, V, seq, b, db;
    uint64_t hd, kvd, T, TH;
    uint64_t stash_bytes;   /* what one block keeps from forward to backward */
    double fwd_us, bwd_us;  /* one block */
    uint32_t *w, *gacc;     /* [L] weights, fp32 gradient accumulators */
    uint32_t w_emb, g_emb, w_head, g_head;
    uint32_t *act;          /* [M * L] each micro-batch's block stashes */
    uint32_t *head_stash;   /* [M] last stage: logits kept for the backward */
    uint32_t *tok;          /* [M] first stage: token ids */
    uint32_t *inp;          /* [M] the stage's input activation (recv or embedding) */
};

static void block_costs(struct pipe *p)
{
    /* parameters of one block: attention q, k, v, o, SwiGLU w1, w2, w3, two norms */
    double params = (double)(2 * p->H * p->H + 2 * p->kvd * p->H + 3 * p->H * p->F);
    double mm_flops = 2.0 * (double)p->T * params;
    double attn = 2.0 * (double)p->b * (double)p->nh * (double)p->seq *
                  (double)p->seq * (double)p->hd;
    double act = (double)p->stash_bytes;
    /* forward: the matmuls, causal flash attention; backward: twice the
     * matmul FLOPs (input and weight gradients), 2.5x the attention's */
    p->fwd_us = sb_dev_time_us(mm_flops, SB_DEV_MM_EFF, act) +
                sb_dev_time_us(attn, SB_DEV_ATTN_FWD_EFF, 0);
    p->bwd_us = sb_dev_time_us(2 * mm_flops, SB_DEV_MM_EFF, 2 * act) +
                sb_dev_time_us(2.5 * attn, SB_DEV_ATTN_BWD_EFF, 0);
}

/* recv of one [T, H] activation or gradient from the neighbouring stage. */
static uint32_t recv(struct pipe *p, const char *what, uint64_t mb)
{
    uint32_t s = sb_gen_start(p->g, SB_COLL_RECV, 0, NULL, p->TH * p->db,
                              p->TH * p->db, 2, "mb%llu.recv_%s",
                              (unsigned long long)mb, what);
    return sb_gen_done(p->g, s, 0);
}

static void send(struct pipe *p, const char *what, uint64_t mb, uint32_t x)
{
    uint32_t s = sb_gen_start(p->g, SB_COLL_SEND, IN1(x), 0, p->TH * p->db, 2,
                              "mb%llu.send_%s", (unsigned long long)mb, what);
    sb_gen_done(p->g, s, 0);
}

static void forward(struct pipe *p, uint64_t mb)
{
    struct sb_gen *g = p->g;
    unsigned long long m = (unsigned long long)mb;
    uint32_t x;
    if (p->s == 0) {
        p->tok[mb] = sb_gen_input(g, p->T * 8, 0, "mb%llu.tokens", m);
        x = sb_gen_compute(g, "embedding",
                           sb_dev_time_us(0, 1, (double)(2 * p->TH * p->db)),
                           p->TH * p->db, IN2(p->w_emb, p->tok[mb]), "mb%llu.embed", m);
    } else
        x = recv(p, "act", mb);
    p->inp[mb] = x;
    for (uint64_t l = 0; l < p->L; l++) {
        x = sb_gen_compute(g, "block_fwd", p->fwd_us, p->stash_bytes,
                           IN2(x, p->w[l]), "mb%llu.L%llu.fwd", m,
                           (unsigned long long)l);
        p->act[mb * p->L + l] = x;
    }
    if (p->s + 1 < p->S) {
        send(p, "act", mb, x);
        return;
    }
    /* last stage: final norm, output projection and loss; logits kept */
    double flops = 2.0 * (double)p->T * (double)p->H * (double)p->V;
    uint64_t logits = p->T * p->V * p->db;
    p->head_stash[mb] = sb_gen_compute(g, "head_fwd",
                                       sb_dev_time_us(flops, SB_DEV_MM_EFF,
                                                      (double)(3 * logits)),
                                       logits, IN2(x, p->w_head), "mb%llu.head_fwd", m);
}

static void backward(struct pipe *p, uint64_t mb)
{
    struct sb_gen *g = p->g;
    unsigned long long m = (unsigned long long)mb;
    uint32_t d;
    if (p->s + 1 < p->S)
        d = recv(p, "grad", mb);
    else {
        double flops = 4.0 * (double)p->T * (double)p->H * (double)p->V;
        uint64_t logits = p->T * p->V * p->db;
        uint32_t last = p->act[mb * p->L + p->L - 1];
        uint32_t in4[4] = {p->head_stash[mb], last, p->w_head, p->g_head};
        d = sb_gen_compute(g, "head_bwd",
                           sb_dev_time_us(flops, SB_DEV_MM_EFF, (double)(3 * logits)),
                           p->TH * p->db, 4, in4, "mb%llu.head_bwd", m);
    }
    for (uint64_t l = p->L; l-- > 0;) {
        /* the block reads its stash and its input: the stash below it, or
         * the stage's input */
        uint32_t x = l > 0 ? p->act[mb * p->L + l - 1] : p->inp[mb];
        uint32_t in5[5] = {d, p->act[mb * p->L + l], x, p->w[l], p->gacc[l]};
        d = sb_gen_compute(g, "block_bwd", p->bwd_us, p->TH * p->db, 5, in5,
                           "mb%llu.L%llu.bwd", m, (unsigned long long)l);
    }
    if (p->s > 0) {
        send(p, "grad", mb, d);
        return;
    }
    /* first stage: scatter-add the gradient rows into the embedding's */
    sb_gen_compute(g, "embedding_bwd", sb_dev_time_us(0, 1, (double)(3 * p->TH * p->db)),
                   0, IN3(d, p->tok[mb], p->g_emb), "mb%llu.embed_bwd", m);
}

static void build(const struct sb_gen_args *a, struct sb_gen *g)
{
    struct pipe p;
    p.g = g;
    p.S = (uint64_t)a->v[O_STAGES];
    p.s = (uint64_t)a->v[O_STAGE];
    p.M = (uint64_t)a->v[O_MICROBATCHES];
    p.L = (uint64_t)a->v[O_LAYERS];
    p.H = (uint64_t)a->v[O_HIDDEN];
    p.F = (uint64_t)a->v[O_FFN];
    p.nh = (uint64_t)a->v[O_HEADS];
    p.nkv = (uint64_t)a->v[O_KV_HEADS];
    p.V = (uint64_t)a->v[O_VOCAB];
    p.seq = (uint64_t)a->v[O_SEQ];
    p.b = (uint64_t)a->v[O_MICRO_BATCH];
    p.db = (uint64_t)a->v[O_DTYPE_BYTES];
    p.hd = p.H / p.nh;
    p.kvd = p.nkv * p.hd;
    p.T = p.seq * p.b;
    p.TH = p.T * p.H;
    /* llama-bwd's saved set, with the block's output standing for the next
     * block's input: q, attention output, h, output (T x H each), k, v
     * (T x kv width), the two gate inputs (T x ffn), 1/rms twice and the
     * attention log-sum-exp in fp32 */
    p.stash_bytes = (4 * p.TH + 2 * p.T * p.kvd + 2 * p.T * p.F) * p.db +
                    2 * p.T * 4 + p.b * p.nh * p.seq * 4;
    block_costs(&p);

    sb_gen_meta(g, "ranks", "2");
    sb_gen_meta(g, "description",
                "1F1B pipeline stage %llu of %llu, %llu micro-batches of %llu x %llu "
                "tokens, %llu Llama blocks hidden %llu ffn %llu",
                (unsigned long long)p.s, (unsigned long long)p.S,
                (unsigned long long)p.M, (unsigned long long)p.b,
                (unsigned long long)p.seq, (unsigned long long)p.L,
                (unsigned long long)p.H, (unsigned long long)p.F);

    /* weights in the compute dtype, gradients accumulated in fp32 over the
     * micro-batches (Megatron's main_grad) */
    uint64_t blk = 2 * p.H * p.H + 2 * p.kvd * p.H + 3 * p.H * p.F + 2 * p.H;
    p.w = sb_xcalloc(p.L, sizeof *p.w);
    p.gacc = sb_xcalloc(p.L, sizeof *p.gacc);
    for (uint64_t l = 0; l < p.L; l++) {
        p.w[l] = sb_gen_input(g, blk * p.db, SB_FLAG_WEIGHT, "L%llu.w", (unsigned long long)l);
        p.gacc[l] = sb_gen_input(g, blk * 4, SB_FLAG_WEIGHT, "L%llu.main_grad",
                                 (unsigned long long)l);
    }
    p.w_emb = p.g_emb = p.w_head = p.g_head = SB_NONE;
    if (p.s == 0) {
        p.w_emb = sb_gen_input(g, p.V * p.H * p.db, SB_FLAG_WEIGHT, "embedding.w");
        p.g_emb = sb_gen_input(g, p.V * p.H * 4, SB_FLAG_WEIGHT, "embedding.main_grad");
    }
    if (p.s + 1 == p.S) {
        p.w_head = sb_gen_input(g, (p.V + 1) * p.H * p.db, SB_FLAG_WEIGHT, "head.w");
        p.g_head = sb_gen_input(g, (p.V + 1) * p.H * 4, SB_FLAG_WEIGHT, "head.main_grad");
    }
    p.act = sb_xcalloc(p.M * p.L, sizeof *p.act);
    p.head_stash = sb_xcalloc(p.M, sizeof *p.head_stash);
    p.tok = sb_xcalloc(p.M, sizeof *p.tok);
    p.inp = sb_xcalloc(p.M, sizeof *p.inp);

    /* 1F1B: warm-up forwards (one fewer per later stage), then alternate one
     * forward and one backward, then drain the remaining backwards */
    uint64_t warm = p.S - p.s - 1 < p.M ? p.S - p.s - 1 : p.M;
    for (uint64_t i = 0; i < warm; i++)
        forward(&p, i);
    for (uint64_t i = 0; i + warm < p.M; i++) {
        forward(&p, warm + i);
        backward(&p, i);
    }
    for (uint64_t i = p.M - warm; i < p.M; i++)
        backward(&p, i);

    free(p.w);
    free(p.gacc);
    free(p.act);
    free(p.head_stash);
    free(p.tok);
    free(p.inp);
}

const struct sb_gen_kind sb_gen_pipeline = {
    "pipeline",
    "one 1F1B pipeline stage: send and recv",
    "One stage of a pipeline-parallel Llama running the 1F1B schedule over "
    "micro-batches: warm-up forwards, then one forward and one backward in "
    "turn, then the remaining backwards; activations received from the "
    "previous stage and sent to the next, gradients the other way.  A block "
    "is one fused node each way and keeps its saved tensors from its forward "
    "to its backward.",
    opts, N_OPTS, NULL, check, default_name, build,
};
