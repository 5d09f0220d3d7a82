/* Structural tests of the workload generators (workloads/gen): node and
 * collective counts, where the collectives sit in the original order, the
 * sharded parameter bytes, loading, determinism, refused options, and that
 * every generated corpus file is exactly what its '# generator=' line makes.
 * Expected figures are derived by hand in the comments. */
#define _POSIX_C_SOURCE 200809L
#include "check.h"
#include "core/core.h"
#include "import/import.h"
#include "gen-impl.h"

#include <dirent.h>
#include <stdlib.h>
#include <unistd.h>

/* ---- helpers ------------------------------------------------------------- */

static char tmp_path[512];

/* A temporary file under the build directory, unique to this process. */
static const char *tmp_file(const char *tag)
{
    snprintf(tmp_path, sizeof tmp_path, "%s/test_gen_%ld_%s.csv", SB_TEST_TMP,
             (long)getpid(), tag);
    return tmp_path;
}

/* Runs `schedbench gen <args> -o out`; args is split at spaces. */
static int gen(const char *args, const char *out, struct sb_err *e)
{
    char buf[2048], *argv[128], *save = NULL;
    int argc = 0;
    snprintf(buf, sizeof buf, "%s", args);
    argv[argc++] = "gen";
    for (char *t = strtok_r(buf, " ", &save); t && argc < 125;
         t = strtok_r(NULL, " ", &save))
        argv[argc++] = t;
    if (out) {
        argv[argc++] = "-o";
        argv[argc++] = (char *)out;
    }
    argv[argc] = NULL;
    e->msg[0] = 0;
    return sb_gen_run(argc, argv, e);
}

/* Generates and loads a graph; NULL (and a failed check) on any error. */
static struct sb_graph *gen_load(const char *args)
{
    struct sb_err e;
    char path[512];
    snprintf(path, sizeof path, "%s", tmp_file("load"));
    int rc = gen(args, path, &e);
    CHECK(rc == 0);
    if (rc) {
        fprintf(stderr, "gen %s: %s\n", args, e.msg);
        return NULL;
    }
    struct sb_graph *g = sb_graph_load(path, &e);
    CHECK(g != NULL);
    if (!g)
        fprintf(stderr, "load %s: %s\n", args, e.msg);
    unlink(path);
    return g;
}

static uint32_t count_coll(const struct sb_graph_view *v, enum sb_coll c)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < v->n_nodes; i++)
        n += v->kind[i] == SB_KIND_START && v->coll[i] == c;
    return n;
}

static const char *op_of(const struct sb_graph_view *v, uint32_t i)
{
    return v->op_names[v->op[i]];
}

static uint64_t weight_bytes(const struct sb_graph_view *v)
{
    uint64_t n = 0;
    for (uint32_t i = 0; i < v->n_nodes; i++)
        if (v->kind[i] == SB_KIND_INPUT && (v->flags[i] & SB_FLAG_WEIGHT))
            n += v->out_bytes[i];
    return n;
}

static char *read_all(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = NULL;
    size_t cap = 0, len = 0, got;
    do {
        if (len + 65536 > cap) {
            cap = cap ? 2 * cap : 1 << 20;
            buf = sb_xrealloc(buf, cap);
        }
        got = fread(buf + len, 1, cap - len, f);
        len += got;
    } while (got);
    fclose(f);
    *n = len;
    return buf;
}

static int same_bytes(const char *a, const char *b)
{
    size_t na = 0, nb = 0; /* read_all leaves them unset when it fails */
    char *x = read_all(a, &na), *y = read_all(b, &nb);
    int same = x && y && na == nb && !memcmp(x, y, na);
    free(x);
    free(y);
    return same;
}

/* Parameter count of Llama 3 8B, by hand (config.json: vocab 128256, hidden
 * 4096, 32 layers, ffn 14336, 32 heads of 128, 8 kv heads, untied output):
 *   per layer  wq 4096*4096               =  16,777,216
 *              wk, wv 1024*4096 each      =   8,388,608  (kv width 8*128)
 *              wo 4096*4096               =  16,777,216
 *              w1, w3 14336*4096, w2 4096*14336 = 176,160,768
 *              two RMSNorm weights 2*4096 =       8,192
 *              sum                        = 218,112,000
 *   32 layers                             = 6,979,584,000
 *   embedding and output 2*128256*4096    = 1,050,673,152
 *   final norm                            =         4,096
 *   total                                 = 8,030,261,248 */
#define LLAMA3_8B_PARAMS 8030261248ull

/* ---- llama-bwd ----------------------------------------------------------- */

/* Nodes of one layer's backward with the defaults (fp32 master shards, so
 * a cast before each all_gather and after each weight gradient):
 *   a linear's backward: shard, cast, all_gather start+done (4), dy view,
 *     two weight permutes, dgrad mm, x view, x permute, wgrad mm, dw permute
 *     (8), grad cast, reduce_scatter start+done (3), dx view (1)    = 16
 *   a norm's recomputed output: x32, n32, n (3), the weight's gather (4), y
 *     (1), with its two saved inputs x and 1/rms (2)                = 10
 *   a norm's backward: dw mul, sum, view, cast, reduce_scatter (6), then 15
 *     ops for the input gradient                                    = 21
 *   MLP: a1, a3, sigmoid, silu, gate (5), w2 (16), dsilu, da3 (2), norm
 *     output (10), w3 (16), silu_backward's 9 ops, w1 (16), dhn add (1),
 *     norm backward (21), residual add (1)                          = 97
 *   attention: saved output and its view (2), wo (16), grad view and
 *     transpose (2), q and its transpose (2), k and v with repeat_kv's
 *     unsqueeze, expand, copy, view, transpose (6+6), output transpose (1),
 *     lse (1), flash_attn_bwd and 3 getitems (4), repeat_kv backward of v and
 *     k (4+4), dq transpose (1), freqs view and conj (2), RoPE backward of k
 *     and q (7+7), three views (3), norm output (10), wv, wk, wq (48), two
 *     adds (2), norm backward (21), residual add (1)               = 150
 * so 247 a layer.  Outside the layers: the freqs table (1); the head's loss
 * backward (7 + 13), final norm output (10), output projection (16), final
 * norm backward (21); the embedding's shard (resident, never read: its
 * backward needs only the token ids), tokens, zeros, index_put, cast and
 * reduce_scatter (7): 75.  32 layers: 32 * 247 + 75 = 7,979. */
static void test_llama_bwd_default(void)
{
    struct sb_graph *g = gen_load("llama-bwd");
    if (!g)
        return;
    const struct sb_graph_view *v = &g->v;
    CHECK_EQ_U(v->n_nodes, 7979);
    CHECK(v->n_nodes >= 7500 && v->n_nodes <= 8500);
    /* one all_gather per parameter but the embedding (its backward does not
     * read it): 9 * 32 + 2 = 290; one reduce_scatter per gradient: 291 */
    CHECK_EQ_U(count_coll(v, SB_COLL_ALL_GATHER), 290);
    CHECK_EQ_U(count_coll(v, SB_COLL_REDUCE_SCATTER), 291);
    CHECK_EQ_U(sb_graph_n_collectives(g), 581);
    CHECK(sb_graph_meta(g, "params") && !strcmp(sb_graph_meta(g, "params"), "8030261248"));
    CHECK(sb_graph_meta(g, "ranks") && !strcmp(sb_graph_meta(g, "ranks"), "64"));
    /* shards of fp32 master weights: count * 4 / 64 = 501,891,328 (every
     * dim 0 divides by 64, so no padding) */
    CHECK_EQ_U(weight_bytes(v), LLAMA3_8B_PARAMS * 4 / 64);

    uint32_t bad_ag = 0, bad_rs = 0, bad_weight = 0, unread = 0;
    for (uint32_t s = 0; s < v->n_nodes; s++) {
        if (v->kind[s] == SB_KIND_INPUT && (v->flags[s] & SB_FLAG_WEIGHT)) {
            /* a shard feeds exactly its cast, which feeds its all_gather;
             * only the embedding's is resident but unread */
            uint32_t n_succ = v->succ_off[s + 1] - v->succ_off[s];
            unread += n_succ == 0;
            if (n_succ != 1) {
                bad_weight += n_succ != 0;
                continue;
            }
            uint32_t c = v->succ[v->succ_off[s]];
            bad_weight += strcmp(op_of(v, c), "convert") ||
                          v->succ_off[c + 1] - v->succ_off[c] != 1 ||
                          v->kind[v->succ[v->succ_off[c]]] != SB_KIND_START;
        }
        if (v->kind[s] != SB_KIND_START)
            continue;
        uint32_t d = v->partner[s];
        if (v->coll[s] == SB_COLL_ALL_GATHER) {
            /* issued and waited for at once, the done before every consumer,
             * and the weight used within a few nodes (its first use) */
            uint32_t first = v->n_nodes;
            for (uint32_t e = v->succ_off[d]; e < v->succ_off[d + 1]; e++)
                if (v->succ[e] < first)
                    first = v->succ[e];
            bad_ag += d != s + 1 || v->succ_off[s + 1] - v->succ_off[s] != 1 ||
                      first == v->n_nodes || first <= d || first > d + 8;
        } else if (v->coll[s] == SB_COLL_REDUCE_SCATTER) {
            /* walk back through the cast and the views to the producer of the
             * gradient: a matmul, a norm's sum or the embedding's index_put,
             * at most three nodes before the start */
            uint32_t p = v->pred[v->pred_off[s]];
            while (v->kind[p] == SB_KIND_NOP || !strcmp(op_of(v, p), "convert"))
                p = v->pred[v->pred_off[p]];
            const char *op = op_of(v, p);
            int producer = !strcmp(op, "mm") || !strcmp(op, "sum") ||
                           !strcmp(op, "index_put");
            bad_rs += !producer || p >= s || s - p > 3 || d != s + 1 ||
                      !(v->flags[d] & SB_FLAG_OUTPUT);
        }
    }
    CHECK_EQ_U(bad_ag, 0);
    CHECK_EQ_U(bad_rs, 0);
    CHECK_EQ_U(bad_weight, 0);
    CHECK_EQ_U(unread, 1);

    /* the file order is a valid schedule */
    struct sb_schedule sched;
    struct sb_err e;
    sb_schedule_init(&sched, g, 1);
    for (uint32_t i = 0; i < v->n_nodes; i++)
        sched.order[i] = i;
    CHECK(sb_schedule_validate(v, &sched, &e) == 0);
    sb_schedule_free(&sched);

    /* original-order peak: the 32 layers' saved activations alone are
     * 32 * 737 MiB = 24.7 GB (x, q, attention output, h: 4 * 64 MiB; k, v:
     * 2 * 16 MiB; a1, a3: 2 * 224 MiB; lse 1 MiB), the bf16 logits 2.1 GB,
     * and the fp32 loss temporaries 4.2 GB each: tens of GB */
    uint32_t *order = sb_xmalloc(v->n_nodes * sizeof *order);
    uint64_t *mem = sb_xmalloc(v->n_nodes * sizeof *mem);
    uint32_t peak_pos;
    for (uint32_t i = 0; i < v->n_nodes; i++)
        order[i] = i;
    uint64_t peak = sb_mem_profile(v, order, v->n_nodes, mem, &peak_pos);
    CHECK(peak >= 24700000000ull && peak < 100000000000ull);
    free(order);
    free(mem);
    sb_graph_free(g);
}

static void test_llama_bwd_variants(void)
{
    struct sb_graph *g;
    /* pure bf16 (ZeRO-3 layout): shards are count * dtype bytes / ranks =
     * 8,030,261,248 * 2 / 64 = 250,945,664, the all_gather reads the shard
     * itself, and 18 casts a layer and 5 outside go: 32 * 229 + 70 */
    if ((g = gen_load("llama-bwd --param-bytes 2"))) {
        CHECK_EQ_U(weight_bytes(&g->v), LLAMA3_8B_PARAMS * 2 / 64);
        CHECK_EQ_U(g->v.n_nodes, 32 * 229 + 70);
        uint32_t bad = 0;
        for (uint32_t i = 0; i < g->v.n_nodes; i++)
            if ((g->v.flags[i] & SB_FLAG_WEIGHT) && g->v.succ_off[i + 1] > g->v.succ_off[i])
                bad += g->v.succ_off[i + 1] - g->v.succ_off[i] != 1 ||
                       g->v.kind[g->v.succ[g->v.succ_off[i]]] != SB_KIND_START;
        CHECK_EQ_U(bad, 0);
        sb_graph_free(g);
    }
    /* one all_gather per layer and one for the head: 33; one reduce_scatter
     * per layer, head and embedding: 34 */
    if ((g = gen_load("llama-bwd --bucket layer"))) {
        CHECK_EQ_U(count_coll(&g->v, SB_COLL_ALL_GATHER), 33);
        CHECK_EQ_U(count_coll(&g->v, SB_COLL_REDUCE_SCATTER), 34);
        CHECK_EQ_U(weight_bytes(&g->v), LLAMA3_8B_PARAMS * 4 / 64);
        sb_graph_free(g);
    }
    /* Llama 3 70B by hand: per layer 2*8192^2 + 2*1024*8192 + 3*8192*28672 +
     * 2*8192 = 855,654,400; * 80 = 68,452,352,000; + 2*128256*8192 + 8192 =
     * 70,553,706,496.  Shards: * 4 / 64 = 4,409,606,656.  Collectives: 9*80+2
     * all_gathers, one more reduce_scatter. */
    if ((g = gen_load("llama-bwd --model llama3-70b"))) {
        CHECK(!strcmp(sb_graph_meta(g, "params"), "70553706496"));
        CHECK_EQ_U(weight_bytes(&g->v), 70553706496ull * 4 / 64);
        CHECK_EQ_U(count_coll(&g->v, SB_COLL_ALL_GATHER), 722);
        CHECK_EQ_U(count_coll(&g->v, SB_COLL_REDUCE_SCATTER), 723);
        sb_graph_free(g);
    }
    /* size is linear in the layers: 247 nodes and 18 collectives each */
    struct sb_graph *a = gen_load("llama-bwd --layers 4");
    struct sb_graph *b = gen_load("llama-bwd --layers 9");
    if (a && b) {
        CHECK_EQ_U(a->v.n_nodes, 4 * 247 + 75);
        CHECK_EQ_U(b->v.n_nodes - a->v.n_nodes, 5 * 247);
        CHECK_EQ_U(sb_graph_n_collectives(b) - sb_graph_n_collectives(a), 5 * 18);
    }
    sb_graph_free(a);
    sb_graph_free(b);
}

/* ---- the other kinds ----------------------------------------------------- */

static uint32_t find_node(const struct sb_graph_view *v, const char *name)
{
    for (uint32_t i = 0; i < v->n_nodes; i++)
        if (!strcmp(v->names + v->name_off[i], name))
            return i;
    return SB_NONE;
}

static int is_input(const struct sb_graph_view *v, const char *name)
{
    uint32_t i = find_node(v, name);
    return i != SB_NONE && v->kind[i] == SB_KIND_INPUT;
}

static uint64_t bytes_of(const struct sb_graph_view *v, const char *name)
{
    uint32_t i = find_node(v, name);
    return i == SB_NONE ? 0 : v->out_bytes[i];
}

/* Issue 13: the backward as torchtitan builds it, on one layer of 8B (T = 8192
 * tokens, H 4096, F 14336, kv width 1024, V 128256, bf16). */
static void test_llama_bwd_torchtitan(void)
{
    const uint64_t T = 8192, H = 4096, F = 14336, V = 128256;
    struct sb_graph *g = gen_load("llama-bwd --layers 1 --loss external");
    if (!g) {
        CHECK(0);
        return;
    }
    /* external loss: the graph starts from d(logits) in bf16, T x V x 2 bytes,
     * and holds no fp32 cross-entropy node */
    CHECK(is_input(&g->v, "head.dlogits"));
    CHECK_EQ_U(bytes_of(&g->v, "head.dlogits"), T * V * 2);
    CHECK(find_node(&g->v, "head.dlogits32") == SB_NONE);
    CHECK(find_node(&g->v, "head.onehot") == SB_NONE);
    sb_graph_free(g);

    g = gen_load("llama-bwd --layers 1 --ac op");
    if (!g) {
        CHECK(0);
        return;
    }
    /* op SAC saves x, the wq, wv, w1 outputs, the attention output and lse */
    CHECK(is_input(&g->v, "L0.x") && is_input(&g->v, "L0.q_mm"));
    CHECK(is_input(&g->v, "L0.v") && is_input(&g->v, "L0.a1"));
    CHECK(is_input(&g->v, "L0.attn_out") && is_input(&g->v, "L0.lse"));
    /* and recomputes wk, wo and w3, the norms (no saved 1/rms) and RoPE */
    CHECK(find_node(&g->v, "L0.a3") == SB_NONE);
    CHECK(find_node(&g->v, "L0.k_rot") == SB_NONE);
    CHECK(find_node(&g->v, "L0.rstd1") == SB_NONE);
    CHECK(find_node(&g->v, "L0.rc.wk.mm") != SB_NONE);
    CHECK(find_node(&g->v, "L0.rc.wo.mm") != SB_NONE);
    CHECK(find_node(&g->v, "L0.rc.w3.mm") != SB_NONE);
    CHECK(find_node(&g->v, "L0.rc.wq.mm") == SB_NONE);
    CHECK(find_node(&g->v, "L0.rc.rope_k.rot") != SB_NONE);
    sb_graph_free(g);

    g = gen_load("llama-bwd --layers 1 --ac full");
    if (!g) {
        CHECK(0);
        return;
    }
    /* full AC saves only the block input; the flash forward and every
     * projection but w2 run again */
    CHECK(is_input(&g->v, "L0.x"));
    CHECK(find_node(&g->v, "L0.q_mm") == SB_NONE && find_node(&g->v, "L0.a1") == SB_NONE);
    CHECK(find_node(&g->v, "L0.rc.flash") != SB_NONE);
    CHECK(find_node(&g->v, "L0.rc.wq.mm") != SB_NONE);
    CHECK(find_node(&g->v, "L0.rc.w1.mm") != SB_NONE);
    CHECK(find_node(&g->v, "L0.rc.w2.mm") == SB_NONE);
    sb_graph_free(g);

    g = gen_load("llama-bwd --layers 1 --opmath fp32");
    if (!g) {
        CHECK(0);
        return;
    }
    /* fp32 opmath: SiLU on an fp32 copy of a1 (T x F x 4), the embedding
     * gradient in fp32 (V x H x 4) reduced without a cast */
    CHECK_EQ_U(bytes_of(&g->v, "L0.a1_f32"), T * F * 4);
    CHECK_EQ_U(bytes_of(&g->v, "L0.sig"), T * F * 4);
    CHECK_EQ_U(bytes_of(&g->v, "emb.dw"), V * H * 4);
    CHECK(find_node(&g->v, "emb.embedding.gcast") == SB_NONE);
    CHECK_EQ_U(bytes_of(&g->v, "L0.attn_norm.dw_sum"), H * 4);
    sb_graph_free(g);
}

static void test_other_kinds(void)
{
    struct sb_graph *g;
    /* forward: every parameter gathered, the embedding too: 9 * 4 + 3 */
    if ((g = gen_load("llama-fwd --layers 4"))) {
        CHECK_EQ_U(count_coll(&g->v, SB_COLL_ALL_GATHER), 39);
        CHECK_EQ_U(sb_graph_n_collectives(g), 39);
        sb_graph_free(g);
    }
    /* tensor parallel: the embedding's all_reduce, two per layer forward,
     * the loss's max and statistics, the output projection's input gradient,
     * two per layer backward: 4 * 2 + 4 = 12 */
    if ((g = gen_load("llama-tp --layers 2"))) {
        CHECK_EQ_U(count_coll(&g->v, SB_COLL_ALL_REDUCE), 12);
        CHECK_EQ_U(sb_graph_n_collectives(g), 12);
        sb_graph_free(g);
    }
    /* MoE: dispatch and combine each way, 4 all_to_all a layer; one
     * all_reduce of the replicated weights' gradients a layer */
    if ((g = gen_load("moe --layers 3"))) {
        CHECK_EQ_U(count_coll(&g->v, SB_COLL_ALL_TO_ALL), 12);
        CHECK_EQ_U(count_coll(&g->v, SB_COLL_ALL_REDUCE), 3);
        sb_graph_free(g);
    }
    /* 1F1B on stage 1 of 4 with 8 micro-batches of 2 blocks: every
     * micro-batch receives and sends once each way (16 + 16); nodes: 2 * 2
     * weights and accumulators, and per micro-batch a recv (start, done), 2
     * blocks and a send forward, the same backward: 4 + 8 * 12 = 100.
     * Warm-up is 4 - 1 - 1 = 2 forwards, so micro-batch 0's backward comes
     * right after micro-batch 2's forward. */
    if ((g = gen_load("pipeline --layers 2"))) {
        CHECK_EQ_U(count_coll(&g->v, SB_COLL_SEND), 16);
        CHECK_EQ_U(count_coll(&g->v, SB_COLL_RECV), 16);
        CHECK_EQ_U(g->v.n_nodes, 4 + 8 * 12);
        uint32_t f2 = find_node(&g->v, "mb2.L1.fwd"), b0 = find_node(&g->v, "mb0.L1.bwd");
        uint32_t f3 = find_node(&g->v, "mb3.L0.fwd");
        CHECK(f2 != SB_NONE && b0 != SB_NONE && f3 != SB_NONE && f2 < b0 && b0 < f3);
        sb_graph_free(g);
    }
    /* the first stage has no upstream: it only sends activations and
     * receives gradients */
    if ((g = gen_load("pipeline --stage 0 --layers 2"))) {
        CHECK_EQ_U(count_coll(&g->v, SB_COLL_SEND), 8);
        CHECK_EQ_U(count_coll(&g->v, SB_COLL_RECV), 8);
        sb_graph_free(g);
    }
    /* ResNet-50: torchvision's 25,557,032 parameters; 53 convolutions with 52
     * input-gradient and 53 weight-gradient convolutions; every bucket
     * all_reduced once, and they add up to all fp32 gradients */
    if ((g = gen_load("ddp"))) {
        const struct sb_graph_view *v = &g->v;
        CHECK(!strcmp(sb_graph_meta(g, "params"), "25557032"));
        uint32_t conv = 0;
        uint64_t reduced = 0;
        for (uint32_t i = 0; i < v->n_nodes; i++) {
            conv += !strcmp(op_of(v, i), "convolution");
            if (v->kind[i] == SB_KIND_START)
                reduced += v->comm_bytes[i];
        }
        CHECK_EQ_U(conv, 105);
        CHECK_EQ_U(reduced, 25557032ull * 4);
        CHECK(count_coll(v, SB_COLL_ALL_REDUCE) >= 4);
        sb_graph_free(g);
    }
}

/* ---- determinism, refusals, corpus --------------------------------------- */

/* Placement kinds (workloads/gen/place.c): node counts by hand, the machine
 * line, and pre-assigned devices. */
static void test_placement_kinds(void)
{
    struct sb_graph *g;
    /* one graph input + 50 compute nodes; layer 0 reads only x */
    if ((g = gen_load("dag --nodes 50 --layers 5"))) {
        CHECK_EQ_U(g->v.n_nodes, 51);
        CHECK(!strcmp(sb_graph_meta(g, "machine"), "../machines/gpu4-nvlink.yaml"));
        for (uint32_t v = 1; v <= 10; v++)
            CHECK(g->v.pred_off[v + 1] - g->v.pred_off[v] == 1 && g->v.pred[g->v.pred_off[v]] == 0);
        for (uint32_t v = 11; v < 51; v++) {
            uint32_t k = g->v.pred_off[v + 1] - g->v.pred_off[v];
            CHECK(k >= 1 && k <= 3);
        }
        sb_graph_free(g);
    }
    /* weights: embedding, head, 2 per layer (10); per micro-batch tokens,
     * embedding, 2 forward and 2 backward kernels per layer, loss (19, twice);
     * one optimizer pass per layer (4): 52.  Even split over 4 GPUs: layer l
     * on device l, the head on the last layer's device. */
    if ((g = gen_load("llama-step --layers 4 --microbatches 2 --split even"))) {
        CHECK_EQ_U(g->v.n_nodes, 52);
        for (uint32_t v = 0; v < g->v.n_nodes; v++) {
            const char *nm = g->names + g->name_off[v];
            if (!strcmp(nm, "head.w") || !strcmp(nm, "mb1.l3.attn_bwd"))
                CHECK_EQ_U((uint32_t)g->device[v], 3);
            if (!strcmp(nm, "mb0.l2.attn") || !strcmp(nm, "l2.adamw"))
                CHECK_EQ_U((uint32_t)g->device[v], 2);
            CHECK(g->device[v] >= 0);
        }
        sb_graph_free(g);
    }
    if ((g = gen_load("llama-step --layers 4 --microbatches 2"))) {
        for (uint32_t v = 0; v < g->v.n_nodes; v++)
            CHECK(g->device[v] == -1);
        sb_graph_free(g);
    }
    /* dense, ids, 4 x (table, lookup), bottom weight and kernel, interaction,
     * 2 towers x 3 x (weight, kernel), loss, 2 x 3 backward kernels, the
     * interaction's and bottom's backward, 4 updates: 38.  On cpu-gpu the
     * embedding ops, their tables and the ids are on the CPU (device 1). */
    if ((g = gen_load("towers --towers 2 --depth 3 --tables 4 --machine cpu-gpu"))) {
        CHECK_EQ_U(g->v.n_nodes, 38);
        uint32_t on_cpu = 0;
        for (uint32_t v = 0; v < g->v.n_nodes; v++)
            on_cpu += g->device[v] == 1;
        CHECK_EQ_U(on_cpu, 1 + 4 * 3);
        CHECK(!strcmp(sb_graph_meta(g, "machine"), "../machines/cpu-gpu.yaml"));
        sb_graph_free(g);
    }
}

static void test_determinism(void)
{
    struct sb_err e;
    char a[512], b[512], c[512];
    snprintf(a, sizeof a, "%s", tmp_file("det_a"));
    snprintf(b, sizeof b, "%s", tmp_file("det_b"));
    snprintf(c, sizeof c, "%s", tmp_file("det_c"));
    CHECK(gen("llama-bwd", a, &e) == 0);
    CHECK(gen("llama-bwd", b, &e) == 0);
    CHECK(same_bytes(a, b));
    /* the same options in another order and spelling give the same file */
    CHECK(gen("llama-bwd --ranks=64 --layers 32 --model llama3-8b", c, &e) == 0);
    CHECK(same_bytes(a, c));
    CHECK(gen("moe --layers 2", a, &e) == 0);
    CHECK(gen("moe --layers 2", b, &e) == 0);
    CHECK(same_bytes(a, b));
    unlink(a);
    unlink(b);
    unlink(c);
}

/* `gen <args> -o FILE` must fail with status 2 and `msg`, and leave no file. */
static void refused(const char *args, const char *msg)
{
    struct sb_err e;
    char path[512], tmp[600];
    snprintf(path, sizeof path, "%s", tmp_file("refused"));
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    unlink(path);
    int rc = gen(args, path, &e);
    CHECK_EQ_U(rc, 2);
    CHECK_CONTAINS(e.msg, msg);
    CHECK(access(path, F_OK) != 0); /* nothing written, not even in part */
    CHECK(access(tmp, F_OK) != 0);
}

static void test_refusals(void)
{
    struct sb_err e;
    CHECK_EQ_U(gen("", NULL, &e), 2);
    CHECK_CONTAINS(e.msg, "missing KIND");
    refused("llama-bwdd", "unknown kind 'llama-bwdd'");
    refused("llama-bwd --layer 4", "unknown option --layer");
    refused("llama-bwd --layers", "--layers needs a value");
    refused("llama-bwd --layers four", "'four' is not a non-negative integer");
    refused("llama-bwd --layers=-1", "'-1' is not a non-negative integer");
    refused("llama-bwd --layers 0", "--layers 0 is out of range 1..10000");
    refused("llama-bwd --hidden 4100", "--hidden 4100 is not a multiple of --heads 32");
    refused("llama-bwd --hidden 4000", "head dimension 125 (--hidden / --heads) must be even");
    refused("llama-bwd --kv-heads 5", "--heads 32 is not a multiple of --kv-heads 5");
    refused("llama-bwd --bucket some", "--bucket 'some' is not one of: none, layer");
    refused("llama-bwd --layers 2 --layers 3", "--layers given twice");
    refused("llama-bwd --name a,b", "--name 'a,b' must be");
    refused("llama-bwd stray", "unexpected argument 'stray'");
    refused("llama-tp --ranks 3", "--heads 32 is not a multiple of --ranks 3");
    refused("moe --experts 6", "--experts 6 is not a multiple of --ranks 8");
    refused("pipeline --stage 4", "--stage 4 must be below --stages 4");
    refused("pipeline --microbatches 100000 --layers 10000", "more than 20000000");
    refused("ddp --image 100", "--image 100 is not a multiple of 32");
    CHECK_EQ_U(gen("llama-bwd -o", NULL, &e), 2);
    CHECK_CONTAINS(e.msg, "-o needs a file name");
    CHECK_EQ_U(gen("llama-bwd", NULL, &e), 2);
    CHECK_CONTAINS(e.msg, "no output file");
    CHECK_EQ_U(gen("llama-bwd --layers 1", "/nonexistent-dir/x.csv", &e), 2);
    CHECK_CONTAINS(e.msg, "cannot create");
    /* help is not an error */
    CHECK_EQ_U(gen("--help", NULL, &e), 0);
    CHECK_EQ_U(gen("pipeline --help", NULL, &e), 0);
}

/* Every corpus graph loads; every generated one is byte for byte what its
 * '# generator=' line produces now. */
static void test_corpus(void)
{
    DIR *dir = opendir(SB_CORPUS_DIR);
    CHECK(dir != NULL);
    if (!dir)
        return;
    uint32_t n_files = 0, n_generated = 0;
    struct dirent *de;
    while ((de = readdir(dir))) {
        size_t len = strlen(de->d_name);
        if (len < 5 || strcmp(de->d_name + len - 4, ".csv"))
            continue;
        char path[1024], out[512], line[2048];
        struct sb_err e;
        snprintf(path, sizeof path, "%s/%s", SB_CORPUS_DIR, de->d_name);
        struct sb_graph *g = sb_graph_load(path, &e);
        CHECK(g != NULL);
        if (!g) {
            fprintf(stderr, "%s\n", e.msg);
            continue;
        }
        n_files++;
        const char *cmd = sb_graph_meta(g, "generator");
        const char *prefix = "schedbench gen ";
        if (cmd && !strncmp(cmd, prefix, strlen(prefix))) {
            n_generated++;
            snprintf(line, sizeof line, "%s", cmd + strlen(prefix));
            snprintf(out, sizeof out, "%s", tmp_file("corpus"));
            CHECK(gen(line, out, &e) == 0);
            int same = same_bytes(path, out);
            CHECK(same);
            if (!same)
                fprintf(stderr, "%s differs from: %s\n", path, cmd);
            unlink(out);
        }
        sb_graph_free(g);
    }
    closedir(dir);
    CHECK(n_files >= 8);
    CHECK(n_generated >= 6);
}

int main(void)
{
    test_llama_bwd_default();
    test_llama_bwd_variants();
    test_llama_bwd_torchtitan();
    test_other_kinds();
    test_placement_kinds();
    test_determinism();
    test_refusals();
    test_corpus();
    return check_report();
}
