/* Workloads where a device runs several kernels at once (issue 28;
 * docs/resources.md): small kernels that each fill only part of a GPU's SMs,
 * CPU operators that each take a few cores.
 *
 *   --pattern moe      MoE layers whose experts are small GEMMs on one GPU
 *                      (machine h100-sms: 132 SMs), experts spread over
 *                      --streams streams
 *   --pattern infer    --requests decode steps of a small model at once on
 *                      one GPU, one stream per request
 *   --pattern cpu-gpu  a recommendation step on a GPU and a 16-core CPU
 *                      (machine cpu16-gpu): the embedding lookups and updates
 *                      run on the CPU, 4 cores each, one stream per table
 *
 * The SM model: a kernel holds the SMs its grid fills, ceil(rows / 128) *
 * ceil(cols / 128) output tiles of 128 x 128 (one thread block per SM,
 * capped at 132), and runs at that fraction of the device's roofline (FLOPs
 * and HBM bandwidth alike), so it takes no less time on the whole device:
 * its time is sb_dev_time_us of its work scaled by 132 / sms. */
#include "gen-impl.h"

#include <stdlib.h>
#include <string.h>

#define H100_SMS 132 /* H100 SXM5: 132 SMs (NVIDIA H100 datasheet) */
#define TILE 128     /* output tile of one thread block of a cuBLAS GEMM */
#define CPU_CORES 16 /* the CPU of workloads/machines/cpu16-gpu.yaml */
#define POOL 32      /* rows pooled per sample by an embedding bag: DLRM's
                        pooling factors are tens of rows (Naumov et al. 2019) */

enum { C_PATTERN, C_LAYERS, C_EXPERTS, C_STREAMS, C_TOKENS, C_REQUESTS, C_N_OPTS };
enum { P_MOE, P_INFER, P_CPU_GPU };
static const char *const patterns[] = {"moe", "infer", "cpu-gpu", NULL};

static const struct sb_gen_opt conc_opts[C_N_OPTS] = {
    {"pattern", SB_OPT_CHOICE, P_MOE, 0, 0, patterns,
     "moe: small expert GEMMs on one GPU; infer: several requests' decode steps on one "
     "GPU; cpu-gpu: embedding ops on a 16-core CPU beside a GPU"},
    {"layers", SB_OPT_INT, 4, 1, 10000, NULL, "layers (moe, infer) or tower depth (cpu-gpu)"},
    {"experts", SB_OPT_INT, 16, 1, 4096, NULL, "experts per MoE layer, or embedding tables"},
    {"streams", SB_OPT_INT, 4, 1, 1024, NULL, "streams the experts or tables spread over"},
    {"tokens", SB_OPT_INT, 1024, 1, 1 << 24, NULL, "tokens per batch (moe; top-2 routing)"},
    {"requests", SB_OPT_INT, 4, 1, 1024, NULL, "requests decoded at once (infer)"},
};

static void conc_name(const struct sb_gen_args *a, char *buf, size_t n)
{
    long long L = a->v[C_LAYERS], E = a->v[C_EXPERTS], S = a->v[C_STREAMS];
    if (a->v[C_PATTERN] == P_MOE)
        snprintf(buf, n, "conc-moe-l%lld-e%lld-s%lld-t%lld", L, E, S,
                 (long long)a->v[C_TOKENS]);
    else if (a->v[C_PATTERN] == P_INFER)
        snprintf(buf, n, "conc-infer-r%lld-l%lld", (long long)a->v[C_REQUESTS], L);
    else
        snprintf(buf, n, "conc-cpu-gpu-e%lld-s%lld-d%lld", E, S, L);
}

/* SMs a GEMM's rows x cols output fills, at most the device's. */
static uint32_t gemm_sms(uint64_t rows, uint64_t cols)
{
    uint64_t tiles = ((rows + TILE - 1) / TILE) * ((cols + TILE - 1) / TILE);
    return (uint32_t)(tiles < H100_SMS ? tiles : H100_SMS);
}

/* A kernel on `sms` of the SMs: the roofline at that fraction. */
static double part_us(double flops, double eff, double bytes, uint32_t sms)
{
    double scale = (double)H100_SMS / sms;
    return sb_dev_time_us(flops * scale, eff, bytes * scale);
}

/* Layers of a Mixtral-like MoE block at DeepSeek-MoE-16B's small expert
 * shapes (hidden 2048, expert FFN 1408), top-2 routing: attention and the
 * router fill the GPU; each expert's up (gate and up, 2 x 1408 wide) and down
 * GEMMs see tokens * 2 / experts rows and fill only a few SMs. */
static void build_moe(const struct sb_gen_args *a, struct sb_gen *g)
{
    uint64_t L = (uint64_t)a->v[C_LAYERS], E = (uint64_t)a->v[C_EXPERTS];
    uint64_t S = (uint64_t)a->v[C_STREAMS], T = (uint64_t)a->v[C_TOKENS];
    uint64_t H = 2048, F = 1408, Te = (T * 2 + E - 1) / E, act = T * H * 2;
    sb_gen_meta(g, "machine", "../machines/h100-sms.yaml");
    sb_gen_meta(g, "description",
                "%llu MoE layers, %llu experts (hidden %llu, expert FFN %llu, top-2, %llu "
                "tokens: %llu rows per expert) as small GEMMs on %llu streams of one H100 "
                "(res.sms: the SMs each kernel's tiles fill)", (unsigned long long)L,
                (unsigned long long)E, (unsigned long long)H, (unsigned long long)F,
                (unsigned long long)T, (unsigned long long)Te, (unsigned long long)S);
    g->res_name = "sms";
    uint32_t x = sb_gen_input(g, act, 0, "x");
    uint32_t *outs = sb_xmalloc((E + 1) * sizeof *outs);
    double attn_us = sb_dev_time_us(2.0 * T * H * 4 * H + 4.0 * T * T * H, SB_DEV_MM_EFF,
                                    (double)(2 * act + 4 * H * H * 2));
    uint32_t up_sms = gemm_sms(Te, 2 * F), down_sms = gemm_sms(Te, H);
    double up_us = part_us(2.0 * Te * H * 2 * F, SB_DEV_MM_EFF,
                           (double)(Te * H * 2 + H * 2 * F * 2 + Te * 2 * F * 2), up_sms);
    double down_us = part_us(2.0 * Te * F * H, SB_DEV_MM_EFF,
                             (double)(Te * F * 2 + F * H * 2 + Te * H * 2), down_sms);
    for (uint64_t l = 0; l < L; l++) {
        uint32_t wa = sb_gen_input(g, 4 * H * H * 2, SB_FLAG_WEIGHT, "l%llu.attn.w",
                                   (unsigned long long)l);
        uint32_t attn = sb_gen_compute(g, "attention", attn_us, act, IN2(x, wa), "l%llu.attn",
                                       (unsigned long long)l);
        uint32_t route = sb_gen_elem(g, "router", T * E * 4, 1, &attn, "l%llu.router",
                                     (unsigned long long)l);
        for (uint64_t e = 0; e < E; e++) {
            uint32_t w1 = sb_gen_input(g, H * 2 * F * 2, SB_FLAG_WEIGHT, "l%llu.e%llu.w_up",
                                       (unsigned long long)l, (unsigned long long)e);
            uint32_t w2 = sb_gen_input(g, F * H * 2, SB_FLAG_WEIGHT, "l%llu.e%llu.w_down",
                                       (unsigned long long)l, (unsigned long long)e);
            uint32_t up = sb_gen_compute(g, "mm", up_us, Te * F * 2, IN3(attn, route, w1),
                                         "l%llu.e%llu.up", (unsigned long long)l,
                                         (unsigned long long)e);
            uint32_t down = sb_gen_compute(g, "mm", down_us, Te * H * 2, IN2(up, w2),
                                           "l%llu.e%llu.down", (unsigned long long)l,
                                           (unsigned long long)e);
            g->stream[up] = g->stream[down] = (uint32_t)(e % S);
            g->res[up] = up_sms;
            g->res[down] = down_sms;
            outs[e] = down;
        }
        outs[E] = attn;
        x = sb_gen_elem(g, "combine", act, (uint32_t)(E + 1), outs, "l%llu.combine",
                        (unsigned long long)l);
    }
    g->flags[x] |= SB_FLAG_OUTPUT;
    free(outs);
}

/* Decode steps of a 1B-parameter Llama-like model (hidden 2048, FFN 8192, 8
 * KV heads of 128, 4096 tokens of context) for several requests at once,
 * each request alone on its stream (no batching across them: separate models
 * or adapters).  One token per step: every kernel is a GEMV that reads its
 * weights, memory-bound, and fills few SMs (a split-K GEMV: one block per
 * 128 output columns, a quarter of them for attention's KV read). */
static void build_infer(const struct sb_gen_args *a, struct sb_gen *g)
{
    uint64_t R = (uint64_t)a->v[C_REQUESTS], L = (uint64_t)a->v[C_LAYERS];
    uint64_t H = 2048, F = 8192, ctx = 4096, kv = 8 * 128;
    sb_gen_meta(g, "machine", "../machines/h100-sms.yaml");
    sb_gen_meta(g, "description",
                "decode steps of %llu requests at once, one stream each, %llu layers of a "
                "1B Llama-like model (hidden %llu, FFN %llu, context %llu) on one H100 "
                "(res.sms: the SMs each GEMV's blocks fill)", (unsigned long long)R,
                (unsigned long long)L, (unsigned long long)H, (unsigned long long)F,
                (unsigned long long)ctx);
    g->res_name = "sms";
    uint32_t qkv_sms = gemm_sms(TILE, H + 2 * kv), attn_sms = gemm_sms(TILE, ctx / 4);
    uint32_t o_sms = gemm_sms(TILE, H), mlp_sms = gemm_sms(TILE, 2 * F);
    double qkv_us = part_us(2.0 * H * (H + 2 * kv), 1, (double)(H * (H + 2 * kv) * 2), qkv_sms);
    double attn_us = part_us(4.0 * ctx * H, 1, (double)(2 * ctx * kv * 2), attn_sms);
    double o_us = part_us(2.0 * H * H, 1, (double)(H * H * 2), o_sms);
    double mlp_us = part_us(6.0 * H * F, 1, (double)(3 * H * F * 2), mlp_sms);
    uint32_t *w = sb_xmalloc(L * 3 * sizeof *w);
    for (uint64_t l = 0; l < L; l++) {
        w[l * 3] = sb_gen_input(g, H * (H + 2 * kv) * 2 + H * H * 2, SB_FLAG_WEIGHT,
                                "l%llu.attn.w", (unsigned long long)l);
        w[l * 3 + 1] = sb_gen_input(g, 3 * H * F * 2, SB_FLAG_WEIGHT, "l%llu.mlp.w",
                                    (unsigned long long)l);
    }
    /* the original order issues the requests round-robin, a layer at a time,
     * as one host thread per request would */
    uint32_t *x = sb_xmalloc(R * sizeof *x);
    for (uint64_t r = 0; r < R; r++)
        x[r] = sb_gen_input(g, H * 2, 0, "r%llu.x", (unsigned long long)r);
    for (uint64_t l = 0; l < L; l++)
        for (uint64_t r = 0; r < R; r++) {
            uint32_t cache = sb_gen_input(g, 2 * ctx * kv * 2, 0, "r%llu.l%llu.kv",
                                          (unsigned long long)r, (unsigned long long)l);
            uint32_t qkv = sb_gen_compute(g, "mm", qkv_us, (H + 2 * kv) * 2,
                                          IN2(x[r], w[l * 3]), "r%llu.l%llu.qkv",
                                          (unsigned long long)r, (unsigned long long)l);
            uint32_t at = sb_gen_compute(g, "attention", attn_us, H * 2, IN2(qkv, cache),
                                         "r%llu.l%llu.attn", (unsigned long long)r,
                                         (unsigned long long)l);
            uint32_t o = sb_gen_compute(g, "mm", o_us, H * 2, IN3(at, x[r], w[l * 3]),
                                        "r%llu.l%llu.o", (unsigned long long)r,
                                        (unsigned long long)l);
            uint32_t m = sb_gen_compute(g, "mm", mlp_us, H * 2, IN2(o, w[l * 3 + 1]),
                                        "r%llu.l%llu.mlp", (unsigned long long)r,
                                        (unsigned long long)l);
            g->res[qkv] = qkv_sms, g->res[at] = attn_sms, g->res[o] = o_sms;
            g->res[m] = mlp_sms;
            g->stream[qkv] = g->stream[at] = g->stream[o] = g->stream[m] = (uint32_t)r;
            x[r] = m;
            if (l + 1 == L)
                g->flags[m] |= SB_FLAG_OUTPUT;
        }
    free(x);
    free(w);
}

/* A recommendation step (the towers workload's shapes, one tower) on a GPU
 * and a 16-core CPU: each table's lookup and update runs on the CPU with 4
 * cores (its cost_us: the GPU's time, which the CPU's per-op speed scales;
 * docs/machines.md), tables spread over --streams streams, so four lookups
 * share the CPU at once; the dense MLP runs on the GPU. */
static void build_cpu_gpu(const struct sb_gen_args *a, struct sb_gen *g)
{
    uint64_t E = (uint64_t)a->v[C_EXPERTS], S = (uint64_t)a->v[C_STREAMS];
    uint64_t D = (uint64_t)a->v[C_LAYERS], B = 8192, W = 1024, dim = 128, rows = 1000000;
    uint64_t act = B * W * 2, emb_out = B * dim * 4;
    double mm_us = sb_dev_time_us(2.0 * (double)B * (double)W * (double)W, SB_DEV_MM_EFF,
                                  (double)(2 * act + W * W * 2));
    /* a pooled lookup (an embedding bag) gathers POOL rows per sample at
     * random and sums them: memory-bound on the rows read */
    double look_us = sb_dev_time_us(0, 1, (double)(B * POOL * dim * 4 + emb_out));
    sb_gen_meta(g, "machine", "../machines/cpu16-gpu.yaml");
    sb_gen_meta(g, "description",
                "recommendation step: %llu embedding bags (%d rows pooled per sample) on a "
                "16-core CPU (lookups and updates pre-assigned there, 4 cores each, %llu "
                "streams), a %llu-layer MLP %llu wide on the GPU, batch %llu",
                (unsigned long long)E, POOL,
                (unsigned long long)S, (unsigned long long)D, (unsigned long long)W,
                (unsigned long long)B);
    g->res_name = "cores";
    uint32_t *tab = sb_xmalloc(E * sizeof *tab), *in = sb_xmalloc((E + 1) * sizeof *in);
    uint32_t *lw = sb_xmalloc(D * sizeof *lw), *la = sb_xmalloc((D + 1) * sizeof *la);
    uint32_t ids = sb_gen_input(g, B * E * 8, 0, "ids");
    uint32_t dense = sb_gen_input(g, B * 13 * 4, 0, "dense");
    g->device[ids] = 1;
    for (uint64_t t = 0; t < E; t++) {
        tab[t] = sb_gen_input(g, rows * dim * 4, SB_FLAG_WEIGHT, "emb%llu.w",
                              (unsigned long long)t);
        uint32_t look = sb_gen_compute(g, "embedding_lookup", look_us, emb_out, IN2(ids, tab[t]),
                                       "emb%llu.lookup", (unsigned long long)t);
        g->device[tab[t]] = g->device[look] = 1;
        g->stream[look] = (uint32_t)(t % S);
        g->res[look] = CPU_CORES / 4;
        in[t + 1] = look;
    }
    uint32_t bw = sb_gen_input(g, 13 * W * 2, SB_FLAG_WEIGHT, "bottom.w");
    in[0] = sb_gen_compute(g, "mm", mm_us / 8, act, IN2(dense, bw), "bottom");
    la[0] = sb_gen_elem(g, "interaction", act, (uint32_t)(E + 1), in, "interaction");
    for (uint64_t d = 0; d < D; d++) {
        lw[d] = sb_gen_input(g, W * W * 2, SB_FLAG_WEIGHT, "top.l%llu.w", (unsigned long long)d);
        la[d + 1] = sb_gen_compute(g, "mm", mm_us, act, IN2(la[d], lw[d]), "top.l%llu",
                                   (unsigned long long)d);
    }
    uint32_t dy = sb_gen_elem(g, "loss", B * 4, 1, &la[D], "loss");
    for (uint64_t d = D; d-- > 0;)
        dy = sb_gen_compute(g, "mm", 2 * mm_us, act + W * W * 2, IN3(la[d], lw[d], dy),
                            "top.l%llu.bwd", (unsigned long long)d);
    uint32_t dinter = sb_gen_elem(g, "interaction", act, 1, &dy, "interaction.bwd");
    for (uint64_t t = 0; t < E; t++) {
        uint32_t u = sb_gen_compute(g, "embedding_update", look_us, 0, IN3(ids, tab[t], dinter),
                                    "emb%llu.update", (unsigned long long)t);
        g->flags[u] |= SB_FLAG_OUTPUT;
        g->device[u] = 1;
        g->stream[u] = (uint32_t)(t % S);
        g->res[u] = CPU_CORES / 4;
    }
    free(tab), free(in), free(lw), free(la);
}

static void conc_build(const struct sb_gen_args *a, struct sb_gen *g)
{
    if (a->v[C_PATTERN] == P_MOE)
        build_moe(a, g);
    else if (a->v[C_PATTERN] == P_INFER)
        build_infer(a, g);
    else
        build_cpu_gpu(a, g);
}

const struct sb_gen_kind sb_gen_conc = {
    "concurrent",
    "kernels that share a device's SMs or cores (resources), on several streams",
    "Workloads where a device runs several kernels at once (docs/resources.md): "
    "--pattern moe puts MoE experts as small GEMMs on one H100 (each holds the SMs "
    "its output tiles fill, res.sms, and runs at that share of the roofline), "
    "--pattern infer decodes several requests at once, one stream each, and "
    "--pattern cpu-gpu runs embedding lookups and updates on a 16-core CPU, 4 "
    "cores each (res.cores), beside a GPU.",
    conc_opts, C_N_OPTS, NULL, NULL, conc_name, conc_build,
};
