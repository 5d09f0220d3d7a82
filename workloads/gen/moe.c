/* moe: a mixture-of-experts layer stack (Mixtral-style: attention, then a
 * top-k routed SwiGLU MLP) under expert parallelism, forward then backward, on
 * one rank (workloads/README.md).
 *
 * Kernel granularity: fused norm, RoPE, SwiGLU and token-permutation kernels,
 * flash attention, grouped GEMMs for the local experts.  Every layer sends its
 * routed tokens to the experts' ranks with an all_to_all (dispatch) and gets
 * the results back with another (combine); the backward does both again in
 * reverse.  Experts are split over the ranks (expert parallel); attention,
 * router and norms are replicated, so their gradients are all_reduced, one
 * bucket per layer, as data parallelism over the same ranks does.  Routing is
 * taken as perfectly balanced: every rank receives T * top-k token rows. */
#include "gen-impl.h"

enum {
    O_LAYERS, O_HIDDEN, O_FFN, O_EXPERTS, O_TOP_K, O_HEADS, O_KV_HEADS, O_SEQ,
    O_BATCH, O_DTYPE_BYTES, O_RANKS, N_OPTS
};

/* Defaults: Mixtral 8x7B (config.json of Mixtral-8x7B-v0.1), 8-way expert
 * parallelism, 4096-token sequences. */
static const struct sb_gen_opt opts[N_OPTS] = {
    {"layers", SB_OPT_INT, 32, 1, 10000, NULL, "MoE transformer layers"},
    {"hidden", SB_OPT_INT, 4096, 64, 65536, NULL, "model width"},
    {"ffn", SB_OPT_INT, 14336, 64, 1 << 20, NULL, "inner width of each expert's SwiGLU MLP"},
    {"experts", SB_OPT_INT, 8, 1, 4096, NULL, "experts per layer"},
    {"top-k", SB_OPT_INT, 2, 1, 64, NULL, "experts each token is routed to"},
    {"heads", SB_OPT_INT, 32, 1, 1024, NULL, "query heads"},
    {"kv-heads", SB_OPT_INT, 8, 1, 1024, NULL, "key/value heads"},
    {"seq", SB_OPT_INT, 4096, 16, 1 << 20, NULL, "tokens per sequence"},
    {"batch", SB_OPT_INT, 1, 1, 4096, NULL, "sequences per rank"},
    {"dtype-bytes", SB_OPT_INT, 2, 1, 8, NULL, "bytes per element (2: bf16)"},
    {"ranks", SB_OPT_INT, 8, 1, 4096, NULL,
     "expert-parallel ranks (all_to_all group); also the data-parallel group "
     "of the replicated weights"},
};

static int check(const struct sb_gen_args *a, struct sb_err *e)
{
    int64_t H = a->v[O_HIDDEN], nh = a->v[O_HEADS], nkv = a->v[O_KV_HEADS];
    if (H % nh || nh % nkv)
        return sb_errf(e, "gen moe: --hidden %lld must be a multiple of --heads "
                       "%lld, itself a multiple of --kv-heads %lld", (long long)H,
                       (long long)nh, (long long)nkv);
    if (a->v[O_EXPERTS] % a->v[O_RANKS])
        return sb_errf(e, "gen moe: --experts %lld is not a multiple of --ranks %lld",
                       (long long)a->v[O_EXPERTS], (long long)a->v[O_RANKS]);
    if (a->v[O_TOP_K] > a->v[O_EXPERTS])
        return sb_errf(e, "gen moe: --top-k %lld exceeds --experts %lld",
                       (long long)a->v[O_TOP_K], (long long)a->v[O_EXPERTS]);
    return 0;
}

static void default_name(const struct sb_gen_args *a, char *buf, size_t n)
{
    snprintf(buf, n, "moe-%lldl-e%lld-k%lld-r%lld", (long long)a->v[O_LAYERS],
             (long long)a->v[O_EXPERTS], (long long)a->v[O_TOP_K],
             (long long)a->v[O_RANKS]);
}

struct moe {
    struct sb_gen *g;
    uint64_t L, H, F, E, k, nh, nkv, seq, b, db, ranks;
    uint64_t hd, qkv, T, R, E_local; /* R: routed token rows each rank handles */
    uint32_t freqs;
};

/* What the backward of one layer reads from its forward. */
struct saved {
    uint32_t x, n1, qr, kr, v, o, lse, h, n2, route, disp, e13, eg, comb;
    uint32_t w_an, w_qkv, w_o, w_fn, w_r, w_13, w_2;
};

static uint32_t mm(struct moe *m, const char *op, uint64_t M, uint64_t N, uint64_t K,
                   uint32_t a, uint32_t b, const char *fmt, const char *P)
{
    double flops = 2.0 * (double)M * (double)N * (double)K;
    double bytes = (double)((M * K + K * N + M * N) * m->db);
    return sb_gen_compute(m->g, op, sb_dev_time_us(flops, SB_DEV_MM_EFF, bytes),
                          M * N * m->db, IN2(a, b), fmt, P);
}

static double attn_flops(const struct moe *m)
{
    return 2.0 * (double)m->b * (double)m->nh * (double)m->seq * (double)m->seq *
           (double)m->hd;
}

/* An all_to_all of the R routed rows: issued and waited for at once. */
static uint32_t a2a(struct moe *m, uint32_t x, const char *fmt, const char *P)
{
    uint64_t bytes = m->R * m->H * m->db;
    uint32_t s = sb_gen_start(m->g, SB_COLL_ALL_TO_ALL, IN1(x), bytes, bytes,
                              (uint32_t)m->ranks, fmt, P);
    return sb_gen_done(m->g, s, 0);
}

static uint32_t layer_fwd(struct moe *m, uint64_t l, uint32_t x, struct saved *S)
{
    struct sb_gen *g = m->g;
    char P[24];
    snprintf(P, sizeof P, "L%llu", (unsigned long long)l);
    uint64_t T = m->T, db = m->db, TH = T * m->H * db;
    uint64_t qb = T * m->nh * m->hd * db, kb = T * m->nkv * m->hd * db;
    uint64_t lse_bytes = m->b * m->nh * m->seq * 4;
    S->x = x;
    S->w_an = sb_gen_input(g, m->H * db, SB_FLAG_WEIGHT, "%s.attn_norm.w", P);
    S->w_qkv = sb_gen_input(g, m->qkv * m->H * db, SB_FLAG_WEIGHT, "%s.wqkv.w", P);
    S->w_o = sb_gen_input(g, m->H * m->H * db, SB_FLAG_WEIGHT, "%s.wo.w", P);
    S->w_fn = sb_gen_input(g, m->H * db, SB_FLAG_WEIGHT, "%s.ffn_norm.w", P);
    S->w_r = sb_gen_input(g, m->E * m->H * db, SB_FLAG_WEIGHT, "%s.router.w", P);
    S->w_13 = sb_gen_input(g, m->E_local * 2 * m->F * m->H * db, SB_FLAG_WEIGHT,
                           "%s.experts.w13.w", P);
    S->w_2 = sb_gen_input(g, m->E_local * m->H * m->F * db, SB_FLAG_WEIGHT,
                          "%s.experts.w2.w", P);

    /* pass 1: attention */
    S->n1 = sb_gen_elem(g, "rmsnorm", TH, IN2(x, S->w_an), "%s.attn_norm", P);
    uint32_t qkv = mm(m, "mm", T, m->qkv, m->H, S->n1, S->w_qkv, "%s.qkv", P);
    uint32_t q = sb_gen_view(g, "split", qkv, qb, "%s.q", P);
    uint32_t k = sb_gen_view(g, "split", qkv, kb, "%s.k", P);
    S->v = sb_gen_view(g, "split", qkv, kb, "%s.v", P);
    S->qr = sb_gen_elem(g, "rope", qb, IN2(q, m->freqs), "%s.q_rot", P);
    S->kr = sb_gen_elem(g, "rope", kb, IN2(k, m->freqs), "%s.k_rot", P);
    uint32_t fa = sb_gen_compute(g, "flash_attn",
                                 sb_dev_time_us(attn_flops(m), SB_DEV_ATTN_FWD_EFF,
                                                (double)(2 * qb + 2 * kb + lse_bytes)),
                                 qb + lse_bytes, IN3(S->qr, S->kr, S->v), "%s.flash", P);
    S->o = sb_gen_view(g, "getitem", fa, qb, "%s.attn_out", P);
    S->lse = sb_gen_view(g, "getitem", fa, lse_bytes, "%s.lse", P);
    uint32_t ao = mm(m, "mm", T, m->H, m->H, S->o, S->w_o, "%s.wo", P);
    S->h = sb_gen_elem(g, "add", TH, IN2(x, ao), "%s.h", P);

    /* pass 2: route, dispatch, experts, combine */
    S->n2 = sb_gen_elem(g, "rmsnorm", TH, IN2(S->h, S->w_fn), "%s.ffn_norm", P);
    uint32_t rl = mm(m, "mm", T, m->E, m->H, S->n2, S->w_r, "%s.router", P);
    /* top-k weights (fp32) and expert indices (int32) per token */
    S->route = sb_gen_elem(g, "topk_softmax", T * m->k * 8, IN1(rl), "%s.route", P);
    uint32_t perm = sb_gen_elem(g, "moe_permute", m->R * m->H * db, IN2(S->n2, S->route),
                                "%s.permute", P);
    S->disp = a2a(m, perm, "%s.dispatch", P);
    S->e13 = mm(m, "grouped_mm", m->R, 2 * m->F, m->H, S->disp, S->w_13, "%s.experts.w13", P);
    S->eg = sb_gen_elem(g, "silu_mul", m->R * m->F * db, IN1(S->e13), "%s.experts.gate", P);
    uint32_t e2 = mm(m, "grouped_mm", m->R, m->H, m->F, S->eg, S->w_2, "%s.experts.w2", P);
    S->comb = a2a(m, e2, "%s.combine", P);
    uint32_t y = sb_gen_elem(g, "moe_unpermute", TH, IN2(S->comb, S->route),
                             "%s.unpermute", P);
    return sb_gen_elem(g, "add", TH, IN2(S->h, y), "%s.out", P);
}

static uint32_t layer_bwd(struct moe *m, uint64_t l, uint32_t dy, const struct saved *S)
{
    struct sb_gen *g = m->g;
    char P[24];
    snprintf(P, sizeof P, "L%llu", (unsigned long long)l);
    uint64_t T = m->T, db = m->db, TH = T * m->H * db;
    uint64_t qb = T * m->nh * m->hd * db, kb = T * m->nkv * m->hd * db;
    uint64_t lse_bytes = m->b * m->nh * m->seq * 4;
    uint32_t dense[5];

    /* pass 1: combine, experts and dispatch in reverse */
    uint32_t dc = sb_gen_elem(g, "moe_unpermute_bwd", m->R * m->H * db, IN2(dy, S->route),
                              "%s.dcombine", P);
    uint32_t dwt = sb_gen_elem(g, "moe_unpermute_bwd_weights", T * m->k * 4,
                               IN2(dy, S->comb), "%s.droute_weights", P);
    uint32_t de2 = a2a(m, dc, "%s.combine_bwd", P);
    uint32_t deg = mm(m, "grouped_mm", m->R, m->F, m->H, de2, S->w_2, "%s.experts.w2.dgrad", P);
    uint32_t dw2 = mm(m, "grouped_mm", m->E_local * m->H, m->F, m->R / m->E_local, de2,
                      S->eg, "%s.experts.w2.wgrad", P);
    g->flags[dw2] |= SB_FLAG_OUTPUT;
    uint32_t de13 = sb_gen_elem(g, "silu_mul_bwd", m->R * 2 * m->F * db, IN2(deg, S->e13),
                                "%s.experts.dgate", P);
    uint32_t dd = mm(m, "grouped_mm", m->R, m->H, 2 * m->F, de13, S->w_13,
                     "%s.experts.w13.dgrad", P);
    uint32_t dw13 = mm(m, "grouped_mm", m->E_local * 2 * m->F, m->H, m->R / m->E_local,
                       de13, S->disp, "%s.experts.w13.wgrad", P);
    g->flags[dw13] |= SB_FLAG_OUTPUT;
    uint32_t dp = a2a(m, dd, "%s.dispatch_bwd", P);
    uint32_t dn2a = sb_gen_elem(g, "moe_permute_bwd", TH, IN2(dp, S->route), "%s.dn2_experts", P);
    uint32_t drl = sb_gen_elem(g, "topk_softmax_bwd", T * m->E * db, IN2(dwt, S->route),
                               "%s.drouter_logits", P);
    uint32_t dn2b = mm(m, "mm", T, m->H, m->E, drl, S->w_r, "%s.router.dgrad", P);
    dense[0] = mm(m, "mm", m->E, m->H, T, drl, S->n2, "%s.router.wgrad", P);
    uint32_t dn2 = sb_gen_elem(g, "add", TH, IN2(dn2a, dn2b), "%s.dn2", P);
    dense[1] = sb_gen_elem(g, "rmsnorm_bwd_dw", m->H * db, IN2(dn2, S->h), "%s.ffn_norm.dw", P);
    uint32_t dxn2 = sb_gen_elem(g, "rmsnorm_bwd", TH, IN3(dn2, S->h, S->w_fn), "%s.ffn_norm.dx", P);
    uint32_t dh = sb_gen_elem(g, "add", TH, IN2(dy, dxn2), "%s.dh", P);

    /* pass 2: attention */
    uint32_t dout = mm(m, "mm", T, m->H, m->H, dh, S->w_o, "%s.wo.dgrad", P);
    dense[2] = mm(m, "mm", m->H, m->H, T, dh, S->o, "%s.wo.wgrad", P);
    double by = (double)(3 * qb + 2 * kb + qb + 2 * kb + lse_bytes);
    uint32_t in6[6] = {dout, S->qr, S->kr, S->v, S->o, S->lse};
    uint32_t fb = sb_gen_compute(g, "flash_attn_bwd",
                                 sb_dev_time_us(2.5 * attn_flops(m), SB_DEV_ATTN_BWD_EFF, by),
                                 qb + 2 * kb, 6, in6, "%s.flash_bwd", P);
    uint32_t dq = sb_gen_view(g, "getitem", fb, qb, "%s.dq_rot", P);
    uint32_t dk = sb_gen_view(g, "getitem", fb, kb, "%s.dk_rot", P);
    uint32_t dv = sb_gen_view(g, "getitem", fb, kb, "%s.dv", P);
    uint32_t dqr = sb_gen_elem(g, "rope_bwd", qb, IN2(dq, m->freqs), "%s.dq", P);
    uint32_t dkr = sb_gen_elem(g, "rope_bwd", kb, IN2(dk, m->freqs), "%s.dk", P);
    uint32_t dqkv = sb_gen_elem(g, "cat", T * m->qkv * db, IN3(dqr, dkr, dv), "%s.dqkv", P);
    uint32_t dn1 = mm(m, "mm", T, m->H, m->qkv, dqkv, S->w_qkv, "%s.wqkv.dgrad", P);
    dense[3] = mm(m, "mm", m->qkv, m->H, T, dqkv, S->n1, "%s.wqkv.wgrad", P);
    dense[4] = sb_gen_elem(g, "rmsnorm_bwd_dw", m->H * db, IN2(dn1, S->x), "%s.attn_norm.dw", P);
    uint32_t dxn1 = sb_gen_elem(g, "rmsnorm_bwd", TH, IN3(dn1, S->x, S->w_an),
                                "%s.attn_norm.dx", P);
    uint32_t dx = sb_gen_elem(g, "add", TH, IN2(dh, dxn1), "%s.dx", P);

    /* pass 3: the replicated weights' gradients, all_reduced in one bucket */
    uint64_t bytes = (m->E * m->H + 2 * m->H + m->H * m->H + m->qkv * m->H) * db;
    sb_gen_coll(g, SB_COLL_ALL_REDUCE, 5, dense, bytes, bytes, (uint32_t)m->ranks,
                SB_FLAG_OUTPUT, "%s.dense_grad_ar", P);
    return dx;
}

static void build(const struct sb_gen_args *a, struct sb_gen *g)
{
    struct moe m;
    m.g = g;
    m.L = (uint64_t)a->v[O_LAYERS];
    m.H = (uint64_t)a->v[O_HIDDEN];
    m.F = (uint64_t)a->v[O_FFN];
    m.E = (uint64_t)a->v[O_EXPERTS];
    m.k = (uint64_t)a->v[O_TOP_K];
    m.nh = (uint64_t)a->v[O_HEADS];
    m.nkv = (uint64_t)a->v[O_KV_HEADS];
    m.seq = (uint64_t)a->v[O_SEQ];
    m.b = (uint64_t)a->v[O_BATCH];
    m.db = (uint64_t)a->v[O_DTYPE_BYTES];
    m.ranks = (uint64_t)a->v[O_RANKS];
    m.hd = m.H / m.nh;
    m.qkv = (m.nh + 2 * m.nkv) * m.hd;
    m.T = m.seq * m.b;
    m.R = m.T * m.k;
    m.E_local = m.E / m.ranks;
    sb_gen_meta(g, "ranks", "%llu", (unsigned long long)m.ranks);
    sb_gen_meta(g, "description",
                "MoE forward and backward of one rank under %llu-way expert "
                "parallelism: %llu layers hidden %llu, %llu experts of ffn %llu, "
                "top-%llu routing (balanced), %llu x %llu tokens",
                (unsigned long long)m.ranks, (unsigned long long)m.L,
                (unsigned long long)m.H, (unsigned long long)m.E,
                (unsigned long long)m.F, (unsigned long long)m.k,
                (unsigned long long)m.b, (unsigned long long)m.seq);
    uint64_t TH = m.T * m.H * m.db;
    m.freqs = sb_gen_input(g, m.seq * (m.hd / 2) * 8, 0, "freqs_cis");
    struct saved *S = sb_xcalloc(m.L, sizeof *S);
    /* the embedding and the loss are not part of this stack: the first
     * layer's input and the last layer's output gradient are graph inputs */
    uint32_t x = sb_gen_input(g, TH, 0, "x0");
    for (uint64_t l = 0; l < m.L; l++)
        x = layer_fwd(&m, l, x, &S[l]);
    g->flags[x] |= SB_FLAG_OUTPUT;
    uint32_t dy = sb_gen_input(g, TH, 0, "dy_top");
    for (uint64_t l = m.L; l-- > 0;)
        dy = layer_bwd(&m, l, dy, &S[l]);
    g->flags[dy] |= SB_FLAG_OUTPUT;
    free(S);
}

const struct sb_gen_kind sb_gen_moe = {
    "moe",
    "MoE stack, expert parallel fwd+bwd: all_to_all, all_reduce",
    "A mixture-of-experts transformer stack (Mixtral 8x7B's shape by "
    "default) on one rank of an expert-parallel group, forward then "
    "backward, at kernel granularity: each layer dispatches its routed "
    "tokens with an all_to_all and combines the experts' outputs with "
    "another (and both again in the backward); the replicated attention, "
    "router and norm weights' gradients are all_reduced, one bucket a layer.",
    opts, N_OPTS, NULL, check, default_name, build,
};
