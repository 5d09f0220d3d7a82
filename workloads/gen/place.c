/* Placement workloads (issue 9, workloads/README.md "Placement"): graphs whose
 * interesting decision is which device runs each node.  Every kind names the
 * machine it is meant for with a `# machine=` metadata line (a path relative
 * to the workload file), which `schedbench run` uses when no --machine is
 * given.
 *
 *   dag         random layered DAG (seeded, deterministic)
 *   llama-step  a Llama training step with micro-batches: forward, backward,
 *               optimizer; --split even pre-assigns an even split of layers
 *   towers      DLRM-like: embedding lookups, bottom MLP, parallel towers,
 *               top MLP, forward and backward; on cpu-gpu the embedding ops
 *               are CPU-only and pre-assigned to the CPU */
#include "gen-impl.h"

#include <string.h>

/* Machines under workloads/machines/ a placement workload can name. */
static const char *const machines[] = {"none", "gpu2-pcie", "gpu4-nvlink", "gpu8-nvswitch",
                                       "cpu-gpu", NULL};
static const uint32_t machine_devices[] = {1, 2, 4, 8, 2};
enum { M_NONE, M_GPU2, M_GPU4, M_GPU8, M_CPU_GPU };

static void meta_machine(struct sb_gen *g, int64_t m)
{
    if (m != M_NONE)
        sb_gen_meta(g, "machine", "../machines/%s.yaml", machines[m]);
}

/* splitmix64: a fixed, portable generator so a seed gives the same file
 * everywhere. */
static uint64_t next_u64(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint64_t uniform(uint64_t *s, uint64_t lo, uint64_t hi)
{
    return lo + next_u64(s) % (hi - lo + 1);
}

/* ---- dag ------------------------------------------------------------------ */

enum { D_NODES, D_LAYERS, D_FAN_IN, D_SEED, D_MACHINE, D_N_OPTS };

static const struct sb_gen_opt dag_opts[D_N_OPTS] = {
    {"nodes", SB_OPT_INT, 200, 2, 1000000, NULL, "compute nodes"},
    {"layers", SB_OPT_INT, 10, 1, 100000, NULL,
     "layers; each node reads only from the layer before (and the graph input)"},
    {"fan-in", SB_OPT_INT, 3, 1, 64, NULL, "most inputs a node reads from the layer before"},
    {"seed", SB_OPT_INT, 1, 0, INT64_MAX, NULL, "random seed"},
    {"machine", SB_OPT_CHOICE, M_GPU4, 0, 0, machines, "machine named in '# machine='"},
};

static int dag_check(const struct sb_gen_args *a, struct sb_err *e)
{
    if (a->v[D_LAYERS] > a->v[D_NODES])
        return sb_errf(e, "gen dag: --layers %lld exceeds --nodes %lld",
                       (long long)a->v[D_LAYERS], (long long)a->v[D_NODES]);
    return 0;
}

static void dag_name(const struct sb_gen_args *a, char *buf, size_t n)
{
    snprintf(buf, n, "dag-n%lld-l%lld-s%lld-%s", (long long)a->v[D_NODES],
             (long long)a->v[D_LAYERS], (long long)a->v[D_SEED], machines[a->v[D_MACHINE]]);
}

/* Kernels of 10..500 us and outputs of 1..64 MiB: at 100 GB/s a copy costs
 * 10..670 us, the same order as the work, so placement has to weigh both. */
static void dag_build(const struct sb_gen_args *a, struct sb_gen *g)
{
    static const char *const ops[] = {"mm", "conv", "elementwise"};
    uint64_t seed = (uint64_t)a->v[D_SEED], n = (uint64_t)a->v[D_NODES];
    uint64_t L = (uint64_t)a->v[D_LAYERS], fan = (uint64_t)a->v[D_FAN_IN];
    meta_machine(g, a->v[D_MACHINE]);
    sb_gen_meta(g, "description",
                "random layered DAG: %llu compute nodes in %llu layers, fan-in up to "
                "%llu, seed %llu", (unsigned long long)n, (unsigned long long)L,
                (unsigned long long)fan, (unsigned long long)seed);
    uint32_t x = sb_gen_input(g, 1 << 20, 0, "x");
    uint32_t prev_lo = x, prev_hi = x + 1; /* ids of the previous layer */
    uint32_t in[64];
    for (uint64_t l = 0; l < L; l++) {
        uint64_t width = n / L + (l < n % L);
        uint32_t lo = g->n_nodes;
        for (uint64_t i = 0; i < width; i++) {
            uint32_t k = (uint32_t)uniform(&seed, 1, fan), m = 0;
            for (uint32_t j = 0; j < k; j++) {
                uint32_t p = prev_lo + (uint32_t)uniform(&seed, 0, prev_hi - prev_lo - 1);
                int dup = 0;
                for (uint32_t q = 0; q < m; q++)
                    dup |= in[q] == p;
                if (!dup)
                    in[m++] = p;
            }
            /* sort so the file lists inputs in increasing id */
            for (uint32_t p = 1; p < m; p++)
                for (uint32_t q = p; q > 0 && in[q - 1] > in[q]; q--) {
                    uint32_t t = in[q];
                    in[q] = in[q - 1];
                    in[q - 1] = t;
                }
            const char *op = ops[uniform(&seed, 0, 2)];
            double cost = (double)uniform(&seed, 10, 500);
            uint64_t bytes = uniform(&seed, 1, 64) << 20;
            uint32_t v = sb_gen_compute(g, op, cost, bytes, m, in, "n%llu.%llu",
                                        (unsigned long long)l, (unsigned long long)i);
            if (l + 1 == L)
                g->flags[v] |= SB_FLAG_OUTPUT;
        }
        prev_lo = lo;
        prev_hi = g->n_nodes;
    }
}

const struct sb_gen_kind sb_gen_dag = {
    "dag",
    "random layered DAG for placement",
    "A random layered DAG (seeded splitmix64, so a seed always gives the same "
    "file): --nodes compute nodes spread evenly over --layers layers, each "
    "reading 1..--fan-in nodes of the layer before; kernels of 10-500 us, "
    "outputs of 1-64 MiB, the last layer kept as outputs.",
    dag_opts, D_N_OPTS, NULL, dag_check, dag_name, dag_build,
};

/* ---- llama-step ------------------------------------------------------------- */

enum {
    S_LAYERS, S_HIDDEN, S_FFN, S_SEQ, S_MICROBATCHES, S_VOCAB, S_SPLIT, S_MACHINE,
    S_N_OPTS
};
static const char *const splits[] = {"none", "even", NULL};

/* Defaults: Llama 3 8B widths (config.json), 4 micro-batches of one 4096-token
 * sequence, on 4 GPUs. */
static const struct sb_gen_opt step_opts[S_N_OPTS] = {
    {"layers", SB_OPT_INT, 32, 1, 10000, NULL, "transformer layers"},
    {"hidden", SB_OPT_INT, 4096, 64, 65536, NULL, "model width"},
    {"ffn", SB_OPT_INT, 14336, 64, 1 << 20, NULL, "SwiGLU inner width"},
    {"seq", SB_OPT_INT, 4096, 16, 1 << 20, NULL, "tokens per micro-batch"},
    {"microbatches", SB_OPT_INT, 4, 1, 1024, NULL, "micro-batches per step"},
    {"vocab", SB_OPT_INT, 128256, 16, 1 << 22, NULL, "vocabulary"},
    {"split", SB_OPT_CHOICE, 0, 0, 0, splits,
     "none: no device assigned; even: layer l on device l * D / layers (the usual "
     "pipeline split), embedding on the first, head and loss on the last"},
    {"machine", SB_OPT_CHOICE, M_GPU4, 0, 0, machines, "machine named in '# machine='"},
};

static void step_name(const struct sb_gen_args *a, char *buf, size_t n)
{
    snprintf(buf, n, "llama-step-%lldl-m%lld-%s%s", (long long)a->v[S_LAYERS],
             (long long)a->v[S_MICROBATCHES], machines[a->v[S_MACHINE]],
             a->v[S_SPLIT] ? "-even" : "");
}

struct step {
    struct sb_gen *g;
    uint64_t L, H, F, T, M, V, D;
    int even;
    double attn_f, mlp_f, head_f; /* forward kernel times, us */
    uint64_t act, w_attn, w_mlp;  /* bytes (bf16) */
};

static void on(struct step *s, uint32_t v, uint64_t layer)
{
    if (s->even)
        s->g->device[v] = (int32_t)(layer * s->D / s->L);
}

static void step_costs(struct step *s)
{
    double T = (double)s->T, H = (double)s->H, F = (double)s->F;
    /* projections 4 T H^2 (q, k, v, o without GQA savings) and causal scores
     * 2 T^2 H, each 2 FLOP per multiply-add */
    s->attn_f = sb_dev_time_us(2 * (4 * T * H * H + 2 * T * T * H), SB_DEV_ATTN_FWD_EFF,
                               (double)(4 * s->H * s->H * 2 + 4 * s->act));
    s->mlp_f = sb_dev_time_us(2 * 3 * T * H * F, SB_DEV_MM_EFF,
                              (double)(3 * s->H * s->F * 2 + 2 * s->act));
    s->head_f = sb_dev_time_us(2 * T * H * (double)s->V, SB_DEV_MM_EFF,
                               (double)(s->H * s->V * 2 + s->act));
    s->w_attn = 4 * s->H * s->H * 2;
    s->w_mlp = 3 * s->H * s->F * 2;
}

static void step_build(const struct sb_gen_args *a, struct sb_gen *g)
{
    struct step s = {.g = g};
    s.L = (uint64_t)a->v[S_LAYERS];
    s.H = (uint64_t)a->v[S_HIDDEN];
    s.F = (uint64_t)a->v[S_FFN];
    s.T = (uint64_t)a->v[S_SEQ];
    s.M = (uint64_t)a->v[S_MICROBATCHES];
    s.V = (uint64_t)a->v[S_VOCAB];
    s.D = machine_devices[a->v[S_MACHINE]];
    s.even = a->v[S_SPLIT] == 1;
    s.act = s.T * s.H * 2;
    step_costs(&s);
    meta_machine(g, a->v[S_MACHINE]);
    sb_gen_meta(g, "description",
                "Llama training step: %llu layers of width %llu (ffn %llu), %llu "
                "micro-batches of %llu tokens, forward, backward, then one optimizer "
                "update per layer; %s", (unsigned long long)s.L, (unsigned long long)s.H,
                (unsigned long long)s.F, (unsigned long long)s.M, (unsigned long long)s.T,
                s.even ? "layers pre-assigned evenly over the machine's devices"
                       : "no device assigned");
    uint32_t *wa = sb_xmalloc(s.L * sizeof *wa), *wm = sb_xmalloc(s.L * sizeof *wm);
    /* [M][L + 1] layer inputs saved for the backward; [M][L] attention outputs */
    uint32_t *x = sb_xmalloc(s.M * (s.L + 1) * sizeof *x), *h = sb_xmalloc(s.M * s.L * sizeof *h);
    uint32_t *ga = sb_xmalloc(s.M * s.L * sizeof *ga), *gm = sb_xmalloc(s.M * s.L * sizeof *gm);
    uint32_t emb = sb_gen_input(g, s.V * s.H * 2, SB_FLAG_WEIGHT, "embed.w");
    on(&s, emb, 0);
    uint32_t head = sb_gen_input(g, s.V * s.H * 2, SB_FLAG_WEIGHT, "head.w");
    on(&s, head, s.L - 1);
    for (uint64_t l = 0; l < s.L; l++) {
        on(&s, wa[l] = sb_gen_input(g, s.w_attn, SB_FLAG_WEIGHT, "l%llu.attn.w", (unsigned long long)l), l);
        on(&s, wm[l] = sb_gen_input(g, s.w_mlp, SB_FLAG_WEIGHT, "l%llu.mlp.w", (unsigned long long)l), l);
    }
    uint32_t *loss = sb_xmalloc(s.M * sizeof *loss);
    for (uint64_t m = 0; m < s.M; m++) {
        uint32_t tok = sb_gen_input(g, s.T * 4, 0, "mb%llu.tokens", (unsigned long long)m);
        on(&s, tok, 0);
        uint32_t *xm = &x[m * (s.L + 1)];
        xm[0] = sb_gen_elem(g, "embedding", s.act, IN2(tok, emb), "mb%llu.embed", (unsigned long long)m);
        on(&s, xm[0], 0);
        for (uint64_t l = 0; l < s.L; l++) {
            h[m * s.L + l] = sb_gen_compute(g, "attention", s.attn_f, s.act, IN2(xm[l], wa[l]),
                                            "mb%llu.l%llu.attn", (unsigned long long)m, (unsigned long long)l);
            on(&s, h[m * s.L + l], l);
            xm[l + 1] = sb_gen_compute(g, "mlp", s.mlp_f, s.act, IN2(h[m * s.L + l], wm[l]),
                                       "mb%llu.l%llu.mlp", (unsigned long long)m, (unsigned long long)l);
            on(&s, xm[l + 1], l);
        }
        loss[m] = sb_gen_compute(g, "loss", 3 * s.head_f, s.act, IN3(xm[s.L], head, tok),
                                 "mb%llu.head_loss", (unsigned long long)m);
        on(&s, loss[m], s.L - 1);
        uint32_t dy = loss[m];
        for (uint64_t l = s.L; l-- > 0;) {
            gm[m * s.L + l] = sb_gen_compute(g, "mlp_bwd", 2 * s.mlp_f, s.act + s.w_mlp,
                                             IN3(h[m * s.L + l], wm[l], dy), "mb%llu.l%llu.mlp_bwd",
                                             (unsigned long long)m, (unsigned long long)l);
            on(&s, gm[m * s.L + l], l);
            ga[m * s.L + l] = sb_gen_compute(g, "attention_bwd", 2 * s.attn_f, s.act + s.w_attn,
                                             IN3(xm[l], wa[l], gm[m * s.L + l]),
                                             "mb%llu.l%llu.attn_bwd", (unsigned long long)m,
                                             (unsigned long long)l);
            on(&s, ga[m * s.L + l], l);
            dy = ga[m * s.L + l];
        }
    }
    /* one AdamW update per layer once every micro-batch's gradient is in:
     * reads weights and the gradients, a memory-bound pass */
    uint32_t *in = sb_xmalloc((2 * s.M + 2) * sizeof *in);
    for (uint64_t l = 0; l < s.L; l++) {
        uint32_t k = 0;
        in[k++] = wa[l];
        in[k++] = wm[l];
        for (uint64_t m = 0; m < s.M; m++) {
            in[k++] = ga[m * s.L + l];
            in[k++] = gm[m * s.L + l];
        }
        for (uint32_t p = 1; p < k; p++) /* increasing ids */
            for (uint32_t q = p; q > 0 && in[q - 1] > in[q]; q--) {
                uint32_t t = in[q];
                in[q] = in[q - 1];
                in[q - 1] = t;
            }
        uint32_t v = sb_gen_elem(g, "optimizer", s.w_attn + s.w_mlp, k, in, "l%llu.adamw",
                                 (unsigned long long)l);
        g->flags[v] |= SB_FLAG_OUTPUT;
        on(&s, v, l);
    }
    free(in);
    free(loss);
    free(wa), free(wm), free(x), free(h), free(ga), free(gm);
}

const struct sb_gen_kind sb_gen_llama_step = {
    "llama-step",
    "Llama training step with micro-batches, for placement",
    "A whole Llama training step as one program: per micro-batch the embedding, "
    "every layer's attention and MLP forward, head and loss, then the backward "
    "in reverse (each backward kernel also produces its weight gradient), and "
    "one AdamW update per layer after all micro-batches.  Placement decides the "
    "pipeline stages; --split even pre-assigns the usual even split of layers "
    "over the machine's devices to compare with.",
    step_opts, S_N_OPTS, NULL, NULL, step_name, step_build,
};

/* ---- towers ----------------------------------------------------------------- */

enum { T_TOWERS, T_DEPTH, T_TABLES, T_BATCH, T_WIDTH, T_MACHINE, T_N_OPTS };

/* Defaults: DLRM-style recommendation model (Naumov et al. 2019 shapes, scaled):
 * 8 embedding tables, 8 towers of 4 layers 1024 wide, batch 8192. */
static const struct sb_gen_opt tower_opts[T_N_OPTS] = {
    {"towers", SB_OPT_INT, 8, 1, 4096, NULL, "parallel towers (MLPs) after the interaction"},
    {"depth", SB_OPT_INT, 4, 1, 1000, NULL, "layers per tower"},
    {"tables", SB_OPT_INT, 8, 1, 4096, NULL, "embedding tables"},
    {"batch", SB_OPT_INT, 8192, 1, 1 << 24, NULL, "samples per step"},
    {"width", SB_OPT_INT, 1024, 8, 65536, NULL, "tower width"},
    {"machine", SB_OPT_CHOICE, M_GPU8, 0, 0, machines,
     "machine named in '# machine='; cpu-gpu pre-assigns the embedding ops to the CPU"},
};

static void tower_name(const struct sb_gen_args *a, char *buf, size_t n)
{
    snprintf(buf, n, "towers-t%lld-d%lld-e%lld-%s", (long long)a->v[T_TOWERS],
             (long long)a->v[T_DEPTH], (long long)a->v[T_TABLES], machines[a->v[T_MACHINE]]);
}

static void tower_build(const struct sb_gen_args *a, struct sb_gen *g)
{
    uint64_t K = (uint64_t)a->v[T_TOWERS], D = (uint64_t)a->v[T_DEPTH];
    uint64_t E = (uint64_t)a->v[T_TABLES], B = (uint64_t)a->v[T_BATCH];
    uint64_t W = (uint64_t)a->v[T_WIDTH], dim = 128, rows = 10000000;
    int cpu = a->v[T_MACHINE] == M_CPU_GPU; /* device 1 of cpu-gpu.yaml is the CPU */
    uint64_t act = B * W * 2, emb_out = B * dim * 4;
    double mm_us = sb_dev_time_us(2.0 * (double)B * (double)W * (double)W, SB_DEV_MM_EFF,
                                  (double)(2 * act + W * W * 2));
    /* a lookup gathers B rows of dim fp32 at random: memory-bound */
    double look_us = sb_dev_time_us(0, 1, (double)(B * dim * 4 * 2));
    meta_machine(g, a->v[T_MACHINE]);
    sb_gen_meta(g, "description",
                "DLRM-like step: %llu embedding tables (%llu x %llu fp32), bottom MLP, "
                "interaction, %llu towers of %llu layers %llu wide, batch %llu, forward "
                "and backward%s", (unsigned long long)E, (unsigned long long)rows,
                (unsigned long long)dim, (unsigned long long)K, (unsigned long long)D,
                (unsigned long long)W, (unsigned long long)B,
                cpu ? "; embedding ops pre-assigned to the CPU" : "");
    uint32_t *tab = sb_xmalloc(E * sizeof *tab), *look = sb_xmalloc(E * sizeof *look);
    uint32_t *in = sb_xmalloc((E + K + 2) * sizeof *in);
    uint32_t dense = sb_gen_input(g, B * 13 * 4, 0, "dense");
    uint32_t ids = sb_gen_input(g, B * E * 8, 0, "ids");
    for (uint64_t t = 0; t < E; t++) {
        tab[t] = sb_gen_input(g, rows * dim * 4, SB_FLAG_WEIGHT, "emb%llu.w", (unsigned long long)t);
        look[t] = sb_gen_compute(g, "embedding_lookup", look_us, emb_out, IN2(ids, tab[t]),
                                 "emb%llu.lookup", (unsigned long long)t);
        if (cpu)
            g->device[tab[t]] = g->device[look[t]] = 1;
    }
    if (cpu)
        g->device[ids] = 1;
    uint32_t bw = sb_gen_input(g, 13 * W * 2, SB_FLAG_WEIGHT, "bottom.w");
    uint32_t bottom = sb_gen_compute(g, "mm", mm_us / 8, act, IN2(dense, bw), "bottom");
    uint32_t k = 0;
    in[k++] = bottom;
    for (uint64_t t = 0; t < E; t++)
        in[k++] = look[t];
    uint32_t inter = sb_gen_elem(g, "interaction", act, k, in, "interaction");
    uint32_t *top = sb_xmalloc(K * sizeof *top), *tw = sb_xmalloc(K * D * sizeof *tw);
    uint32_t *tact = sb_xmalloc(K * (D + 1) * sizeof *tact);
    for (uint64_t i = 0; i < K; i++) {
        tact[i * (D + 1)] = inter;
        for (uint64_t d = 0; d < D; d++) {
            tw[i * D + d] = sb_gen_input(g, W * W * 2, SB_FLAG_WEIGHT, "t%llu.l%llu.w",
                                         (unsigned long long)i, (unsigned long long)d);
            tact[i * (D + 1) + d + 1] = sb_gen_compute(
                g, "mm", mm_us, act, IN2(tact[i * (D + 1) + d], tw[i * D + d]), "t%llu.l%llu",
                (unsigned long long)i, (unsigned long long)d);
        }
        top[i] = tact[i * (D + 1) + D];
    }
    uint32_t loss = sb_gen_elem(g, "loss", B * 4, (uint32_t)K, top, "loss");
    /* backward: each tower in reverse; each layer's gradient kernel does the
     * input and the weight gradient (2 GEMMs) and keeps the weight gradient */
    k = 0;
    for (uint64_t i = 0; i < K; i++) {
        uint32_t dy = loss;
        for (uint64_t d = D; d-- > 0;) {
            dy = sb_gen_compute(g, "mm", 2 * mm_us, act + W * W * 2,
                                IN3(tact[i * (D + 1) + d], tw[i * D + d], dy), "t%llu.l%llu.bwd",
                                (unsigned long long)i, (unsigned long long)d);
        }
        in[k++] = dy;
    }
    uint32_t dinter = sb_gen_elem(g, "interaction", act, k, in, "interaction.bwd");
    uint32_t dbottom = sb_gen_compute(g, "mm", mm_us / 4, 13 * W * 2, IN3(dense, bw, dinter),
                                      "bottom.bwd");
    g->flags[dbottom] |= SB_FLAG_OUTPUT;
    for (uint64_t t = 0; t < E; t++) {
        uint32_t u = sb_gen_compute(g, "embedding_update", look_us, 0, IN3(ids, tab[t], dinter),
                                    "emb%llu.update", (unsigned long long)t);
        g->flags[u] |= SB_FLAG_OUTPUT;
        if (cpu)
            g->device[u] = 1;
    }
    free(tab), free(look), free(in), free(top), free(tw), free(tact);
}

const struct sb_gen_kind sb_gen_towers = {
    "towers",
    "DLRM-like embeddings and parallel towers, for placement",
    "A recommendation model step: embedding lookups into large tables, a bottom "
    "MLP on dense features, a feature interaction, --towers independent MLP "
    "towers (task heads, or experts), a loss, and the backward, ending with "
    "sparse embedding updates.  On --machine cpu-gpu the embedding ops are "
    "CPU-only (the tables live in host memory) and pre-assigned to the CPU.",
    tower_opts, T_N_OPTS, NULL, NULL, tower_name, tower_build,
};
