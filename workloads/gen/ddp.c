/* ddp: the backward pass of a ResNet (torchvision's ResNet-50 v1.5 by default)
 * under PyTorch DistributedDataParallel with mixed precision
 * (workloads/README.md).
 *
 * Saved activations are inputs.  Each convolution's backward is an input
 * gradient and a weight gradient convolution (the first convolution has no
 * input gradient: the image needs none), each batch norm's one kernel
 * returning (dx, dgamma, dbeta), each ReLU's a threshold_backward.  Weight
 * gradients come out in bf16 and are cast to the fp32 parameters' dtype
 * (autocast's cast backward).  As DDP does, every gradient is copied into its
 * bucket as soon as it exists; buckets hold the parameters in reverse
 * registration order, the first one 1 MiB and the others 25 MiB, and each is
 * all_reduced in place once it is full, in bucket order. */
#include "gen-impl.h"

#include <string.h>

enum {
    O_DEPTH, O_BATCH, O_IMAGE, O_CLASSES, O_RANKS, O_DTYPE_BYTES, O_BUCKET_MB,
    O_FIRST_BUCKET_MB, N_OPTS
};

static const char *const depths[] = {"50", "101", "152", NULL};
static const int blocks_per_stage[3][4] = {{3, 4, 6, 3}, {3, 4, 23, 3}, {3, 8, 36, 3}};

static const struct sb_gen_opt opts[N_OPTS] = {
    {"depth", SB_OPT_CHOICE, 0, 0, 0, depths, "ResNet depth (bottleneck blocks)"},
    {"batch", SB_OPT_INT, 32, 1, 4096, NULL, "images per rank"},
    {"image", SB_OPT_INT, 224, 32, 4096, NULL, "image side in pixels, a multiple of 32"},
    {"classes", SB_OPT_INT, 1000, 2, 1 << 20, NULL, "classifier outputs"},
    {"ranks", SB_OPT_INT, 8, 1, 1 << 20, NULL, "data-parallel ranks (all_reduce group)"},
    {"dtype-bytes", SB_OPT_INT, 2, 1, 8, NULL,
     "bytes per element of activations and autocast weight copies (2: bf16)"},
    {"bucket-mb", SB_OPT_INT, 25, 1, 1 << 20, NULL, "DDP bucket_cap_mb"},
    {"first-bucket-mb", SB_OPT_INT, 1, 1, 1 << 20, NULL,
     "size of DDP's first bucket, MiB"},
};

static int check(const struct sb_gen_args *a, struct sb_err *e)
{
    if (a->v[O_IMAGE] % 32)
        return sb_errf(e, "gen ddp: --image %lld is not a multiple of 32 (five "
                       "stride-2 stages)", (long long)a->v[O_IMAGE]);
    return 0;
}

static void default_name(const struct sb_gen_args *a, char *buf, size_t n)
{
    snprintf(buf, n, "ddp-resnet%s-b%lld-r%lld", depths[a->v[O_DEPTH]],
             (long long)a->v[O_BATCH], (long long)a->v[O_RANKS]);
}

/* ---- the network --------------------------------------------------------- */

struct conv {
    uint64_t cin, cout, k, hin, hout; /* square maps: side in, side out */
    uint32_t p;                       /* its weight's parameter index */
    char name[48];                    /* module name, "layer1.0.conv2" */
};
struct bn {
    uint64_t c, side;
    uint32_t p; /* gamma; beta is p + 1 */
    char name[48];
};
struct block {
    char name[24];      /* "layer3.5" */
    struct conv c1, c2, c3, cd;
    struct bn b1, b2, b3, bd;
    int down;           /* has the projection shortcut */
};

struct param {
    uint64_t numel;
    uint32_t bucket;
    char name[64];
};

struct net {
    struct conv stem;
    struct bn stem_bn;
    struct block *blk;
    uint32_t n_blk;
    uint32_t fc_w, fc_b;
    struct param *p;
    uint32_t n_p, cap_p;
};

static uint32_t param_new(struct net *n, uint64_t numel, const char *a, const char *b)
{
    if (n->n_p == n->cap_p) {
        n->cap_p = n->cap_p ? 2 * n->cap_p : 256;
        n->p = sb_xrealloc(n->p, n->cap_p * sizeof *n->p);
    }
    struct param *p = &n->p[n->n_p];
    p->numel = numel;
    p->bucket = 0;
    snprintf(p->name, sizeof p->name, "%s%s", a, b);
    return n->n_p++;
}

static void conv_init(struct net *n, struct conv *c, const char *name, uint64_t cin,
                      uint64_t cout, uint64_t k, uint64_t hin, uint64_t stride)
{
    c->cin = cin;
    c->cout = cout;
    c->k = k;
    c->hin = hin;
    c->hout = hin / stride;
    c->p = param_new(n, cout * cin * k * k, name, ".weight");
    snprintf(c->name, sizeof c->name, "%s", name);
}

static void bn_init(struct net *n, struct bn *b, const char *name, uint64_t c, uint64_t side)
{
    b->c = c;
    b->side = side;
    b->p = param_new(n, c, name, ".weight");
    param_new(n, c, name, ".bias");
    snprintf(b->name, sizeof b->name, "%s", name);
}

/* torchvision's ResNet in module registration order (which fixes DDP's
 * buckets): stem, the four stages of bottlenecks (stride on the 3x3), fc. */
static void net_build(struct net *n, int depth, uint64_t image, uint64_t classes)
{
    memset(n, 0, sizeof *n);
    const int *per = blocks_per_stage[depth];
    n->n_blk = (uint32_t)(per[0] + per[1] + per[2] + per[3]);
    n->blk = sb_xcalloc(n->n_blk, sizeof *n->blk);
    conv_init(n, &n->stem, "conv1", 3, 64, 7, image, 2);
    bn_init(n, &n->stem_bn, "bn1", 64, image / 2);
    uint64_t cin = 64, side = image / 4; /* after the stride-2 max pool */
    uint32_t b = 0;
    for (int s = 0; s < 4; s++) {
        uint64_t w = 64u << s;
        for (int i = 0; i < per[s]; i++, b++) {
            struct block *B = &n->blk[b];
            char pfx[48];
            uint64_t stride = (s > 0 && i == 0) ? 2 : 1;
            snprintf(B->name, sizeof B->name, "layer%d.%d", s + 1, i);
            snprintf(pfx, sizeof pfx, "%s.conv1", B->name);
            conv_init(n, &B->c1, pfx, cin, w, 1, side, 1);
            snprintf(pfx, sizeof pfx, "%s.bn1", B->name);
            bn_init(n, &B->b1, pfx, w, side);
            snprintf(pfx, sizeof pfx, "%s.conv2", B->name);
            conv_init(n, &B->c2, pfx, w, w, 3, side, stride);
            snprintf(pfx, sizeof pfx, "%s.bn2", B->name);
            bn_init(n, &B->b2, pfx, w, side / stride);
            snprintf(pfx, sizeof pfx, "%s.conv3", B->name);
            conv_init(n, &B->c3, pfx, w, 4 * w, 1, side / stride, 1);
            snprintf(pfx, sizeof pfx, "%s.bn3", B->name);
            bn_init(n, &B->b3, pfx, 4 * w, side / stride);
            B->down = i == 0;
            if (B->down) {
                snprintf(pfx, sizeof pfx, "%s.downsample.0", B->name);
                conv_init(n, &B->cd, pfx, cin, 4 * w, 1, side, stride);
                snprintf(pfx, sizeof pfx, "%s.downsample.1", B->name);
                bn_init(n, &B->bd, pfx, 4 * w, side / stride);
            }
            cin = 4 * w;
            side /= stride;
        }
    }
    n->fc_w = param_new(n, classes * cin, "fc", ".weight");
    n->fc_b = param_new(n, classes, "fc", ".bias");
}

static void net_free(struct net *n)
{
    free(n->blk);
    free(n->p);
}

/* ---- DDP buckets --------------------------------------------------------- */

struct ddp {
    struct sb_gen *g;
    struct net net;
    uint64_t N, db, ranks;
    uint32_t n_buckets, next; /* buckets, and the next one to all_reduce */
    uint32_t *buf;            /* [n_buckets] the persistent bucket buffers */
    uint64_t *bytes;          /* [n_buckets] */
    uint32_t *pending;        /* [n_buckets] gradients not yet copied in */
    uint32_t **copies;        /* [n_buckets][] copies into each bucket */
    uint32_t *n_copies;
};

/* DDP's _compute_bucket_assignment_by_size: parameters in reverse order,
 * a bucket closes once it reaches its cap (first_mb for the first). */
static void buckets_assign(struct ddp *d, uint64_t first_mb, uint64_t cap_mb)
{
    struct net *n = &d->net;
    uint64_t cap = first_mb << 20, size = 0;
    uint32_t b = 0;
    for (uint32_t i = n->n_p; i-- > 0;) {
        n->p[i].bucket = b;
        size += n->p[i].numel * 4;
        if (size >= cap && i > 0) {
            b++;
            size = 0;
            cap = cap_mb << 20;
        }
    }
    d->n_buckets = b + 1;
    d->buf = sb_xcalloc(d->n_buckets, sizeof *d->buf);
    d->bytes = sb_xcalloc(d->n_buckets, sizeof *d->bytes);
    d->pending = sb_xcalloc(d->n_buckets, sizeof *d->pending);
    d->copies = sb_xcalloc(d->n_buckets, sizeof *d->copies);
    d->n_copies = sb_xcalloc(d->n_buckets, sizeof *d->n_copies);
    for (uint32_t i = 0; i < n->n_p; i++) {
        d->bytes[n->p[i].bucket] += n->p[i].numel * 4;
        d->pending[n->p[i].bucket]++;
    }
    for (uint32_t k = 0; k < d->n_buckets; k++) {
        d->buf[k] = sb_gen_input(d->g, d->bytes[k], SB_FLAG_WEIGHT, "bucket%u", k);
        d->copies[k] = sb_xcalloc(d->pending[k], sizeof **d->copies);
    }
}

static void buckets_free(struct ddp *d)
{
    for (uint32_t k = 0; k < d->n_buckets; k++)
        free(d->copies[k]);
    free(d->copies);
    free(d->n_copies);
    free(d->buf);
    free(d->bytes);
    free(d->pending);
}

/* Copies an fp32 gradient into its bucket; all_reduces every bucket that is
 * now full and next in order (DDP launches buckets in index order). */
static void grad_ready(struct ddp *d, uint32_t pi, uint32_t grad)
{
    struct sb_gen *g = d->g;
    struct param *p = &d->net.p[pi];
    uint32_t k = p->bucket;
    double by = 2.0 * (double)(p->numel * 4);
    uint32_t c = sb_gen_compute(g, "copy", sb_dev_time_us(0, 1, by), 0,
                                IN2(grad, d->buf[k]), "%s.to_bucket", p->name);
    d->copies[k][d->n_copies[k]++] = c;
    d->pending[k]--;
    while (d->next < d->n_buckets && !d->pending[d->next]) {
        uint32_t b = d->next++;
        uint32_t n_in = d->n_copies[b] + 1;
        uint32_t *in = sb_xmalloc(n_in * sizeof *in);
        in[0] = d->buf[b];
        memcpy(in + 1, d->copies[b], d->n_copies[b] * sizeof *in);
        /* in place: the bucket buffer already exists */
        sb_gen_coll(g, SB_COLL_ALL_REDUCE, n_in, in, 0, d->bytes[b],
                    (uint32_t)d->ranks, 0, "bucket%u.ar", b);
        free(in);
    }
}

/* ---- backward ------------------------------------------------------------ */

static uint64_t act(const struct ddp *d, uint64_t c, uint64_t side)
{
    return d->N * c * side * side * d->db;
}

/* Input- and weight-gradient convolutions; returns dx, or SB_NONE when the
 * input needs no gradient (the image). */
static uint32_t conv_bwd(struct ddp *d, const struct conv *c, uint32_t dy, uint32_t x,
                         int need_dx)
{
    struct sb_gen *g = d->g;
    const char *nm = c->name;
    double flops = 2.0 * (double)d->N * (double)(c->hout * c->hout) * (double)c->cout *
                   (double)c->cin * (double)(c->k * c->k);
    uint64_t wbytes = c->cout * c->cin * c->k * c->k * d->db;
    double io = (double)(act(d, c->cin, c->hin) + act(d, c->cout, c->hout) + wbytes);
    uint32_t dx = SB_NONE;
    if (need_dx) {
        uint32_t w = sb_gen_input(g, wbytes, 0, "%s.weight_bf16", nm);
        dx = sb_gen_compute(g, "convolution", sb_dev_time_us(flops, SB_DEV_CONV_EFF, io),
                            act(d, c->cin, c->hin), IN2(dy, w), "%s.dgrad", nm);
    }
    uint32_t dw = sb_gen_compute(g, "convolution", sb_dev_time_us(flops, SB_DEV_CONV_EFF, io),
                                 wbytes, IN2(dy, x), "%s.wgrad", nm);
    uint32_t dw32 = sb_gen_elem(g, "convert", wbytes / d->db * 4, IN1(dw),
                                "%s.weight_grad", nm);
    grad_ready(d, c->p, dw32);
    return dx;
}

/* native_batch_norm_backward: one kernel, (dx, dgamma, dbeta). */
static uint32_t bn_bwd(struct ddp *d, const struct bn *b, uint32_t dy)
{
    struct sb_gen *g = d->g;
    const char *nm = b->name;
    uint64_t x = act(d, b->c, b->side);
    uint32_t xin = sb_gen_input(g, x, 0, "%s.x", nm);
    uint32_t st = sb_gen_input(g, 2 * b->c * 4, 0, "%s.saved_stats", nm);
    uint32_t t = sb_gen_elem(g, "batch_norm_bwd", x + 2 * b->c * 4, IN3(dy, xin, st),
                             "%s.bwd", nm);
    uint32_t dx = sb_gen_view(g, "getitem", t, x, "%s.dx", nm);
    uint32_t dgm = sb_gen_view(g, "getitem", t, b->c * 4, "%s.dgamma", nm);
    uint32_t dbt = sb_gen_view(g, "getitem", t, b->c * 4, "%s.dbeta", nm);
    grad_ready(d, b->p + 1, dbt);
    grad_ready(d, b->p, dgm);
    return dx;
}

static uint32_t relu_bwd(struct ddp *d, uint32_t dy, uint32_t out, const char *fmt,
                         const char *blk)
{
    return sb_gen_elem(d->g, "threshold_backward", d->g->val_bytes[out], IN2(dy, out),
                       fmt, blk);
}

/* One bottleneck backward: shortcut first, then conv3, conv2, conv1.
 * `out` is the block's saved output (its final ReLU's); returns d(input) and
 * the saved input in *x_out, which is the output of the block before. */
static uint32_t block_bwd(struct ddp *d, const struct block *B, uint32_t dout, uint32_t out,
                          uint32_t *x_out)
{
    struct sb_gen *g = d->g;
    const char *P = B->name;
    uint32_t x = sb_gen_input(g, act(d, B->c1.cin, B->c1.hin), 0, "%s.x", P);
    uint32_t gr = relu_bwd(d, dout, out, "%s.relu3_bwd", P);
    uint32_t short_dx = gr;
    if (B->down) {
        uint32_t dd = bn_bwd(d, &B->bd, gr);
        short_dx = conv_bwd(d, &B->cd, dd, x, 1);
    }
    uint32_t d3 = bn_bwd(d, &B->b3, gr);
    uint32_t r2 = sb_gen_input(g, act(d, B->c2.cout, B->c2.hout), 0, "%s.relu2_out", P);
    uint32_t dr2 = conv_bwd(d, &B->c3, d3, r2, 1);
    uint32_t d2 = bn_bwd(d, &B->b2, relu_bwd(d, dr2, r2, "%s.relu2_bwd", P));
    uint32_t r1 = sb_gen_input(g, act(d, B->c1.cout, B->c1.hout), 0, "%s.relu1_out", P);
    uint32_t dr1 = conv_bwd(d, &B->c2, d2, r1, 1);
    uint32_t d1 = bn_bwd(d, &B->b1, relu_bwd(d, dr1, r1, "%s.relu1_bwd", P));
    uint32_t dx = conv_bwd(d, &B->c1, d1, x, 1);
    *x_out = x;
    return sb_gen_elem(g, "add", act(d, B->c1.cin, B->c1.hin), IN2(dx, short_dx),
                       "%s.dx", P);
}

static void build(const struct sb_gen_args *a, struct sb_gen *g)
{
    struct ddp d;
    memset(&d, 0, sizeof d);
    d.g = g;
    d.N = (uint64_t)a->v[O_BATCH];
    d.db = (uint64_t)a->v[O_DTYPE_BYTES];
    d.ranks = (uint64_t)a->v[O_RANKS];
    uint64_t image = (uint64_t)a->v[O_IMAGE], classes = (uint64_t)a->v[O_CLASSES];
    net_build(&d.net, (int)a->v[O_DEPTH], image, classes);
    struct net *n = &d.net;
    uint64_t n_params = 0;
    for (uint32_t i = 0; i < n->n_p; i++)
        n_params += n->p[i].numel;

    sb_gen_meta(g, "ranks", "%llu", (unsigned long long)d.ranks);
    sb_gen_meta(g, "description",
                "ResNet-%s backward of one rank under DistributedDataParallel: "
                "%llu images of %llu x %llu, %llu classes, %llu-byte activations, "
                "fp32 gradients in %lld MiB buckets (first %lld MiB), %llu ranks",
                depths[a->v[O_DEPTH]], (unsigned long long)d.N,
                (unsigned long long)image, (unsigned long long)image,
                (unsigned long long)classes, (unsigned long long)d.db,
                (long long)a->v[O_BUCKET_MB], (long long)a->v[O_FIRST_BUCKET_MB],
                (unsigned long long)d.ranks);
    sb_gen_meta(g, "params", "%llu", (unsigned long long)n_params);
    buckets_assign(&d, (uint64_t)a->v[O_FIRST_BUCKET_MB], (uint64_t)a->v[O_BUCKET_MB]);

    /* pass 1: loss and classifier: log_softmax + nll backward, fc, pooling */
    uint64_t feat = n->blk[n->n_blk - 1].c3.cout, side = n->blk[n->n_blk - 1].c3.hout;
    uint32_t logp = sb_gen_input(g, d.N * classes * 4, 0, "loss.log_softmax");
    uint32_t labels = sb_gen_input(g, d.N * 8, 0, "loss.labels");
    uint32_t dl = sb_gen_elem(g, "log_softmax_nll_bwd", d.N * classes * d.db,
                              IN2(logp, labels), "loss.dlogits");
    uint32_t pooled = sb_gen_input(g, d.N * feat * d.db, 0, "fc.x");
    uint32_t fcw = sb_gen_input(g, classes * feat * d.db, 0, "fc.weight.bf16");
    double fl = 2.0 * (double)d.N * (double)classes * (double)feat;
    double by = (double)((d.N * classes + classes * feat + d.N * feat) * d.db);
    uint32_t dp = sb_gen_compute(g, "mm", sb_dev_time_us(fl, SB_DEV_MM_EFF, by),
                                 d.N * feat * d.db, IN2(dl, fcw), "fc.dgrad");
    uint32_t dw = sb_gen_compute(g, "mm", sb_dev_time_us(fl, SB_DEV_MM_EFF, by),
                                 classes * feat * d.db, IN2(dl, pooled), "fc.wgrad");
    uint32_t db = sb_gen_elem(g, "sum", classes * 4, IN1(dl), "fc.bias.grad");
    grad_ready(&d, n->fc_b, db);
    grad_ready(&d, n->fc_w, sb_gen_elem(g, "convert", classes * feat * 4, IN1(dw),
                                        "fc.weight.grad"));
    uint32_t dx = sb_gen_elem(g, "avg_pool2d_bwd", act(&d, feat, side), IN1(dp),
                              "avgpool.dx");

    /* pass 2: the bottlenecks, last to first */
    uint32_t out = sb_gen_input(g, act(&d, feat, side), 0, "%s.out",
                                n->blk[n->n_blk - 1].name);
    for (uint32_t b = n->n_blk; b-- > 0;) {
        uint32_t x;
        dx = block_bwd(&d, &n->blk[b], dx, out, &x);
        out = x;
    }

    /* pass 3: stem: max pool, ReLU, batch norm, the first convolution's
     * weight gradient */
    uint32_t idx = sb_gen_input(g, d.N * 64 * (image / 4) * (image / 4) * 8, 0,
                                "maxpool.indices");
    uint32_t r = sb_gen_input(g, act(&d, 64, image / 2), 0, "stem.relu_out");
    uint32_t dm = sb_gen_elem(g, "max_pool2d_bwd", act(&d, 64, image / 2),
                              IN3(dx, r, idx), "maxpool.dx");
    uint32_t dr = relu_bwd(&d, dm, r, "%s.relu_bwd", "stem");
    uint32_t dbn = bn_bwd(&d, &n->stem_bn, dr);
    uint32_t img = sb_gen_input(g, act(&d, 3, image), 0, "stem.image");
    conv_bwd(&d, &n->stem, dbn, img, 0);
    SB_ASSERT(d.next == d.n_buckets); /* every bucket reduced */
    buckets_free(&d);
    net_free(n);
}

const struct sb_gen_kind sb_gen_ddp = {
    "ddp",
    "ResNet backward under DDP: bucketed all_reduce",
    "The backward pass of one rank of a ResNet (torchvision ResNet-50 v1.5 by "
    "default) under PyTorch DistributedDataParallel with bf16 autocast: "
    "input- and weight-gradient convolutions, batch norm and ReLU backward, "
    "fp32 gradients copied into DDP's buckets (first 1 MiB, then 25 MiB, in "
    "reverse parameter order), each bucket all_reduced in place once full.",
    opts, N_OPTS, NULL, check, default_name, build,
};
