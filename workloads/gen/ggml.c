/* ggml-llama: a llama.cpp-style inference graph for the ggml policy
 * (docs/ggml.md) on a CPU+GPU machine (workloads/machines/ggml-cpu-gpu.yaml,
 * device 0 the GPU, device 1 the CPU, last as ggml assumes).
 *
 * As llama.cpp builds it: token embedding on the CPU (get_rows), then per
 * layer rms_norm*w, q/k/v mul_mats, rope, flash attention, output mul_mat,
 * residual add, rms_norm*w and the SwiGLU FFN (or, with --experts, a router,
 * soft_max, argsort and top_k, which the GPU does not run, and mul_mat_id over
 * the experts), then the output norm and head.  Weights are inputs on the
 * device llama.cpp's --n-gpu-layers puts them: the last --gpu-layers layers
 * and, when every layer is offloaded, the output on the GPU; the rest and
 * token_embd on the CPU.  --wide N instead builds N GPU mul_mats whose
 * results are summed on the CPU, which fills a split's 30 inputs. */
#include "gen-impl.h"

#include <string.h>

enum { G_LAYERS, G_GPU_LAYERS, G_TOKENS, G_HIDDEN, G_FFN, G_EXPERTS, G_TOPK, G_WIDE, G_N_OPTS };

static const struct sb_gen_opt ggml_opts[G_N_OPTS] = {
    {"layers", SB_OPT_INT, 8, 1, 1000, NULL, "transformer layers"},
    {"gpu-layers", SB_OPT_INT, 8, 0, 1000, NULL,
     "layers whose weights are on the GPU, counted from the last (llama.cpp -ngl)"},
    {"tokens", SB_OPT_INT, 512, 1, 1 << 20, NULL, "tokens in the batch"},
    {"hidden", SB_OPT_INT, 4096, 64, 65536, NULL, "model width"},
    {"ffn", SB_OPT_INT, 14336, 64, 1 << 20, NULL, "FFN inner width (per expert)"},
    {"experts", SB_OPT_INT, 0, 0, 1024, NULL, "MoE experts per layer (0: dense FFN)"},
    {"top-k", SB_OPT_INT, 2, 1, 64, NULL, "experts per token"},
    {"wide", SB_OPT_INT, 0, 0, 100000, NULL,
     "instead of a Llama: this many GPU mul_mats summed on the CPU"},
};

static void ggml_name(const struct sb_gen_args *a, char *buf, size_t n)
{
    if (a->v[G_WIDE])
        snprintf(buf, n, "ggml-wide-%lld", (long long)a->v[G_WIDE]);
    else
        snprintf(buf, n, "ggml-llama-%lldl-ngl%lld%s", (long long)a->v[G_LAYERS],
                 (long long)a->v[G_GPU_LAYERS], a->v[G_EXPERTS] ? "-moe" : "");
}

static int ggml_check(const struct sb_gen_args *a, struct sb_err *e)
{
    if (a->v[G_GPU_LAYERS] > a->v[G_LAYERS])
        return sb_errf(e, "gen ggml-llama: --gpu-layers %lld is more than --layers %lld",
                       (long long)a->v[G_GPU_LAYERS], (long long)a->v[G_LAYERS]);
    if (a->v[G_EXPERTS] && a->v[G_TOPK] > a->v[G_EXPERTS])
        return sb_errf(e, "gen ggml-llama: --top-k is more than --experts");
    return 0;
}

#define GPU 0
#define CPU 1

static uint32_t weight(struct sb_gen *g, uint64_t bytes, int dev, const char *name, uint64_t l)
{
    uint32_t w = sb_gen_input(g, bytes, SB_FLAG_WEIGHT, "blk.%llu.%s", (unsigned long long)l, name);
    g->device[w] = dev;
    return w;
}

static uint32_t mm(struct sb_gen *g, uint32_t w, uint32_t x, double T, double K, double M,
                   const char *name, uint64_t l)
{
    double us = sb_dev_time_us(2 * T * K * M, SB_DEV_MM_EFF, 2 * (K * M + T * K + T * M));
    return sb_gen_compute(g, "mul_mat", us, (uint64_t)(T * M * 4), IN2(w, x), "%s-%llu", name,
                          (unsigned long long)l);
}

static void wide(const struct sb_gen_args *a, struct sb_gen *g)
{
    uint64_t N = (uint64_t)a->v[G_WIDE], H = (uint64_t)a->v[G_HIDDEN], T = (uint64_t)a->v[G_TOKENS];
    uint32_t x = sb_gen_input(g, T * H * 4, 0, "inp");
    g->device[x] = GPU;
    /* the products first, then the CPU sum reading one of them per node, as a
     * graph built expert by expert and reduced afterwards is ordered */
    uint32_t *y = sb_xmalloc(N * sizeof *y), sum;
    for (uint64_t i = 0; i < N; i++)
        y[i] = mm(g, weight(g, H * H * 2, GPU, "w", i), x, (double)T, (double)H, (double)H,
                  "expert", i);
    sum = y[0];
    for (uint64_t i = 1; i < N; i++) {
        sum = sb_gen_elem(g, "add", T * H * 4, IN2(sum, y[i]), "sum-%llu", (unsigned long long)i);
        g->device[sum] = CPU; /* the reduction is pinned to the CPU */
    }
    g->flags[sum] |= SB_FLAG_OUTPUT;
    free(y);
}

static void ggml_build(const struct sb_gen_args *a, struct sb_gen *g)
{
    sb_gen_meta(g, "machine", "../machines/ggml-cpu-gpu.yaml");
    if (a->v[G_WIDE]) {
        sb_gen_meta(g, "description", "%lld GPU mul_mats summed on the CPU: a split with more "
                    "than 30 inputs", (long long)a->v[G_WIDE]);
        wide(a, g);
        return;
    }
    uint64_t Lyr = (uint64_t)a->v[G_LAYERS], ngl = (uint64_t)a->v[G_GPU_LAYERS];
    double T = (double)a->v[G_TOKENS], H = (double)a->v[G_HIDDEN], F = (double)a->v[G_FFN];
    uint64_t E = (uint64_t)a->v[G_EXPERTS], V = 32000, act = (uint64_t)(T * H * 4);
    sb_gen_meta(g, "description", "llama.cpp-style forward, %llu layers, %llu on the GPU%s, "
                "%lld tokens", (unsigned long long)Lyr, (unsigned long long)ngl,
                E ? ", MoE" : "", (long long)a->v[G_TOKENS]);
    uint32_t tok = sb_gen_input(g, (uint64_t)T * 4, 0, "inp_tokens");
    uint32_t emb = sb_gen_input(g, V * (uint64_t)H * 2, SB_FLAG_WEIGHT, "token_embd");
    g->device[emb] = CPU;
    uint32_t x = sb_gen_elem(g, "get_rows", act, IN2(emb, tok), "inp_embd");
    for (uint64_t l = 0; l < Lyr; l++) {
        int dev = l >= Lyr - ngl ? GPU : CPU;
        uint32_t an = weight(g, (uint64_t)H * 4, dev, "attn_norm", l);
        uint32_t n = sb_gen_elem(g, "rms_norm", act, 1, &x, "norm-%llu", (unsigned long long)l);
        n = sb_gen_elem(g, "mul", act, IN2(n, an), "attn_norm-%llu", (unsigned long long)l);
        uint32_t q = mm(g, weight(g, (uint64_t)(H * H * 2), dev, "attn_q", l), n, T, H, H, "Qcur", l);
        uint32_t k = mm(g, weight(g, (uint64_t)(H * H / 4 * 2), dev, "attn_k", l), n, T, H, H / 4, "Kcur", l);
        uint32_t v = mm(g, weight(g, (uint64_t)(H * H / 4 * 2), dev, "attn_v", l), n, T, H, H / 4, "Vcur", l);
        q = sb_gen_elem(g, "rope", act, 1, &q, "Qrope-%llu", (unsigned long long)l);
        k = sb_gen_elem(g, "rope", act / 4, 1, &k, "Krope-%llu", (unsigned long long)l);
        double fa = sb_dev_time_us(4 * T * T * H, 0.5, 3.0 * (double)act);
        uint32_t at = sb_gen_compute(g, "flash_attn_ext", fa, act, IN3(q, k, v), "attn-%llu",
                                     (unsigned long long)l);
        uint32_t o = mm(g, weight(g, (uint64_t)(H * H * 2), dev, "attn_output", l), at, T, H, H, "attn_out", l);
        x = sb_gen_elem(g, "add", act, IN2(x, o), "ffn_inp-%llu", (unsigned long long)l);
        uint32_t fn = weight(g, (uint64_t)H * 4, dev, "ffn_norm", l);
        n = sb_gen_elem(g, "rms_norm", act, 1, &x, "ffn_rms-%llu", (unsigned long long)l);
        n = sb_gen_elem(g, "mul", act, IN2(n, fn), "ffn_normed-%llu", (unsigned long long)l);
        uint32_t y;
        if (!E) {
            uint32_t gt = mm(g, weight(g, (uint64_t)(H * F * 2), dev, "ffn_gate", l), n, T, H, F, "gate", l);
            uint32_t up = mm(g, weight(g, (uint64_t)(H * F * 2), dev, "ffn_up", l), n, T, H, F, "up", l);
            gt = sb_gen_elem(g, "silu", (uint64_t)(T * F * 4), 1, &gt, "silu-%llu", (unsigned long long)l);
            gt = sb_gen_elem(g, "mul", (uint64_t)(T * F * 4), IN2(gt, up), "par-%llu", (unsigned long long)l);
            y = mm(g, weight(g, (uint64_t)(H * F * 2), dev, "ffn_down", l), gt, T, F, H, "ffn_out", l);
        } else {
            double K = (double)a->v[G_TOPK];
            uint32_t r = mm(g, weight(g, (uint64_t)(H * (double)E * 2), dev, "ffn_gate_inp", l), n, T, H, (double)E, "logits", l);
            r = sb_gen_elem(g, "soft_max", (uint64_t)(T * (double)E * 4), 1, &r, "probs-%llu", (unsigned long long)l);
            uint32_t s = sb_gen_elem(g, "argsort", (uint64_t)(T * (double)E * 4), 1, &r, "argsort-%llu", (unsigned long long)l);
            s = sb_gen_elem(g, "top_k", (uint64_t)(T * K * 4), 1, &s, "topk-%llu", (unsigned long long)l);
            uint32_t ew = weight(g, (uint64_t)(3 * H * F * 2 * (double)E), dev, "ffn_exps", l);
            double us = sb_dev_time_us(2 * 3 * T * K * H * F, SB_DEV_MM_EFF, 3 * H * F * 2 * K);
            y = sb_gen_compute(g, "mul_mat_id", us, act, IN3(ew, n, s), "moe_out-%llu", (unsigned long long)l);
            y = sb_gen_elem(g, "mul", act, IN2(y, r), "moe_weighted-%llu", (unsigned long long)l);
        }
        x = sb_gen_elem(g, "add", act, IN2(x, y), "l_out-%llu", (unsigned long long)l);
    }
    int head = ngl == Lyr ? GPU : CPU;
    uint32_t on = sb_gen_input(g, (uint64_t)H * 4, SB_FLAG_WEIGHT, "output_norm");
    uint32_t ow = sb_gen_input(g, V * (uint64_t)H * 2, SB_FLAG_WEIGHT, "output");
    g->device[on] = g->device[ow] = head;
    uint32_t n = sb_gen_elem(g, "rms_norm", act, 1, &x, "result_rms");
    n = sb_gen_elem(g, "mul", act, IN2(n, on), "result_norm");
    uint32_t out = mm(g, ow, n, T, H, (double)V, "result_output", 0);
    g->flags[out] |= SB_FLAG_OUTPUT;
}

const struct sb_gen_kind sb_gen_ggml_llama = {
    "ggml-llama",
    "llama.cpp-style inference on CPU+GPU, for the ggml policy",
    "The forward graph llama.cpp builds for a batch of tokens, with weights on "
    "the GPU or the CPU as --gpu-layers (llama.cpp's -ngl) places them, on "
    "workloads/machines/ggml-cpu-gpu.yaml; --experts makes the FFN an MoE whose "
    "argsort and top_k run only on the CPU; --wide N builds N GPU mul_mats summed "
    "on the CPU instead, to fill a split's inputs.",
    ggml_opts, G_N_OPTS, NULL, ggml_check, ggml_name, ggml_build,
};
