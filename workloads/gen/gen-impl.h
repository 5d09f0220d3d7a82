/* Internals shared by the generators: the device model, the graph builder the
 * generators emit nodes into, and the option tables each kind declares.
 * Nothing here is visible to the harness; the CLI sees only gen.h. */
#ifndef SB_GEN_IMPL_H
#define SB_GEN_IMPL_H

#include <stdint.h>

#include "schedbench/graph.h"
#include "core/util.h"

/* ---- device model (workloads/README.md, "Device model") ------------------
 * One H100 SXM5 (80 GB HBM3).  A compute node's cost_us is a roofline: the
 * larger of its FLOP time at an achieved fraction of the dense tensor-core peak
 * and its HBM time at an achieved fraction of the peak bandwidth, floored at
 * the shortest kernel a GPU timeline shows. */
#define SB_DEV_PEAK_FLOPS 989.4e12 /* FLOP/s, dense BF16 tensor core, H100 SXM5
                                      datasheet (1979 is the 2:4-sparse figure) */
#define SB_DEV_HBM_BYTES_PER_S 3.35e12 /* bytes/s, HBM3 peak, same datasheet */
#define SB_DEV_MM_EFF 0.70   /* large BF16 GEMMs (cuBLAS) sustain ~650-750 TFLOP/s */
#define SB_DEV_ATTN_FWD_EFF 0.40 /* FlashAttention-2 forward, head dim 128, long
                                    sequences: ~40% of peak on H100 (FA3 paper's
                                    FA2 baseline, Shah et al. 2024) */
#define SB_DEV_ATTN_BWD_EFF 0.30 /* FlashAttention-2 backward: ~30% of peak (same) */
#define SB_DEV_CONV_EFF 0.50 /* cuDNN BF16 convolutions of ResNet-50 shapes:
                                about half of peak (estimate, not measured) */
#define SB_DEV_MEM_EFF 0.80  /* streaming elementwise kernels reach ~80% of peak
                                HBM bandwidth (~2.7 TB/s) */
#define SB_DEV_KERNEL_MIN_US 2.0 /* shortest kernel on a GPU timeline: launch
                                    and tail of a tiny kernel, ~2 us */

/* Roofline time in microseconds of a kernel doing `flops` at `flop_eff` of the
 * peak and moving `bytes` through HBM. */
double sb_dev_time_us(double flops, double flop_eff, double bytes);

/* ---- graph builder ------------------------------------------------------- */

/* Nodes in emission order, which is the file order and so the original
 * schedule.  Struct-of-arrays; inputs as CSR. */
struct sb_gen {
    uint32_t n_nodes, cap;
    uint8_t *kind;          /* enum sb_kind */
    uint8_t *coll;          /* enum sb_coll, on starts */
    uint32_t *flags;        /* enum sb_flag bits */
    uint32_t *group;        /* ranks, on starts */
    const char **op;        /* static strings; "" for none */
    double *cost_us;        /* compute nodes */
    uint64_t *out_bytes;    /* buffer the node allocates */
    uint64_t *val_bytes;    /* logical size of the node's value, views included:
                               what a consumer reads, for roofline costs */
    uint64_t *comm_bytes;   /* on starts */
    int32_t *device;        /* pre-assigned device, -1 (written empty) for none */
    uint32_t *in_off;       /* [n_nodes + 1], CSR by consumer */
    uint32_t *in;           /* [n_in] producers, each an earlier node */
    uint32_t n_in, cap_in;
    size_t *name_off;       /* offset of each name in names */
    char *names;            /* arena of NUL-terminated names */
    size_t n_names, cap_names;
    uint32_t n_meta;
    char **meta;            /* "key=value" lines, in order */
    /* appended: streams and one resource column (docs/machines.md,
     * "Resources"), written only when a generator sets them */
    uint32_t *stream;       /* the node's stream on its device, 0 by default */
    uint32_t *res;          /* res.<res_name>: its use, SB_RES_ALL (written
                               empty: the whole device) by default */
    const char *res_name;   /* NULL: no res column */
};

void sb_gen_init(struct sb_gen *g);
void sb_gen_free(struct sb_gen *g);
void sb_gen_meta(struct sb_gen *g, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* A graph input (parameter shard, saved activation): exists from position 0. */
uint32_t sb_gen_input(struct sb_gen *g, uint64_t bytes, uint32_t flags,
                      const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* A compute node with an explicit cost. */
uint32_t sb_gen_compute(struct sb_gen *g, const char *op, double cost_us,
                        uint64_t out_bytes, uint32_t n_in, const uint32_t *in,
                        const char *fmt, ...) __attribute__((format(printf, 7, 8)));
/* A memory-bound compute node (elementwise, reduction, copy, cast): it reads
 * every input's value once and writes out_bytes. */
uint32_t sb_gen_elem(struct sb_gen *g, const char *op, uint64_t out_bytes,
                     uint32_t n_in, const uint32_t *in, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));
/* A view (reshape, permute, getitem, ...): a nop aliasing src's buffer.
 * val_bytes is the size of the viewed value, 0 for src's own. */
uint32_t sb_gen_view(struct sb_gen *g, const char *op, uint32_t src,
                     uint64_t val_bytes, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* A collective issued right away and waited for right away, the original
 * schedule of a traced program: a start `name` and a done `name.done`.  The
 * output buffer (out_bytes) is allocated at the start; done_flags go on the
 * done (e.g. SB_FLAG_OUTPUT for a gradient shard the program keeps).  Returns
 * the done. */
uint32_t sb_gen_coll(struct sb_gen *g, enum sb_coll c, uint32_t n_in,
                     const uint32_t *in, uint64_t out_bytes, uint64_t comm_bytes,
                     uint32_t group, uint32_t done_flags, const char *fmt, ...)
    __attribute__((format(printf, 9, 10)));
/* Like sb_gen_coll but returns the start; the done is emitted separately by
 * sb_gen_done, so that work can sit between them in the original order. */
uint32_t sb_gen_start(struct sb_gen *g, enum sb_coll c, uint32_t n_in,
                      const uint32_t *in, uint64_t out_bytes, uint64_t comm_bytes,
                      uint32_t group, const char *fmt, ...)
    __attribute__((format(printf, 8, 9)));
uint32_t sb_gen_done(struct sb_gen *g, uint32_t start, uint32_t flags);

/* Writes format v1 through `f`: metadata, header, one row per node. */
void sb_gen_write(const struct sb_gen *g, FILE *f);

/* ---- kinds and their options --------------------------------------------- */

enum sb_opt_type {
    SB_OPT_INT = 0,    /* decimal integer in [min, max] */
    SB_OPT_CHOICE = 1, /* one of choices; the value is its index */
};

struct sb_gen_opt {
    const char *name;            /* spelled --name on the command line */
    enum sb_opt_type type;
    int64_t def;                 /* default (choice index for SB_OPT_CHOICE) */
    int64_t min, max;            /* SB_OPT_INT range */
    const char *const *choices;  /* SB_OPT_CHOICE, NULL-terminated */
    const char *help;
};

#define SB_GEN_MAX_OPTS 32
#define SB_GEN_NAME_MAX 128

/* Parsed options of one kind, indexed like the kind's option table. */
struct sb_gen_args {
    int64_t v[SB_GEN_MAX_OPTS];
    uint8_t set[SB_GEN_MAX_OPTS]; /* given on the command line */
    char name[SB_GEN_NAME_MAX];   /* --name, empty for the kind's default */
};

struct sb_gen_kind {
    const char *name;
    const char *summary;         /* one line for gen --help */
    const char *about;           /* a paragraph for gen KIND --help */
    const struct sb_gen_opt *opts;
    uint32_t n_opts;
    /* Fills options the user did not set from a preset (e.g. --model); may be
     * NULL.  Options the user set always win. */
    void (*preset)(struct sb_gen_args *a);
    /* Cross-option checks; -1 with a message the user can act on. */
    int (*check)(const struct sb_gen_args *a, struct sb_err *e);
    /* Default workload name from the options. */
    void (*default_name)(const struct sb_gen_args *a, char *buf, size_t n);
    /* Emits the graph (and its kind-specific metadata). */
    void (*build)(const struct sb_gen_args *a, struct sb_gen *g);
};

extern const struct sb_gen_kind sb_gen_llama_bwd;
extern const struct sb_gen_kind sb_gen_llama_fwd;
extern const struct sb_gen_kind sb_gen_llama_tp;
extern const struct sb_gen_kind sb_gen_moe;
extern const struct sb_gen_kind sb_gen_pipeline;
extern const struct sb_gen_kind sb_gen_ddp;
extern const struct sb_gen_kind sb_gen_dag;
extern const struct sb_gen_kind sb_gen_llama_step;
extern const struct sb_gen_kind sb_gen_towers;
extern const struct sb_gen_kind sb_gen_ggml_llama;
extern const struct sb_gen_kind sb_gen_conc;

/* sb_gen_main without printing: on failure returns 2 with the message in e. */
int sb_gen_run(int argc, char **argv, struct sb_err *e);

/* Input lists for the emitters: sb_gen_elem(g, "mul", n, IN2(a, b), ...). */
#define IN1(a) 1u, (const uint32_t[]){(a)}
#define IN2(a, b) 2u, (const uint32_t[]){(a), (b)}
#define IN3(a, b, c) 3u, (const uint32_t[]){(a), (b), (c)}
#define IN4(a, b, c, d) 4u, (const uint32_t[]){(a), (b), (c), (d)}

/* Ceiling division for shard sizes. */
static inline uint64_t sb_div_up(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

#endif
