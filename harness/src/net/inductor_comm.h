/* PyTorch Inductor's analytical collective estimators
 * (torch/_inductor/comm_analysis.py, estimate_nccl_collective_runtime_impl),
 * as `run --comm inductor-classic|inductor-multi` (docs/cost-model.md,
 * "Inductor's collective estimators"). */
#ifndef SB_INDUCTOR_COMM_H
#define SB_INDUCTOR_COMM_H

#include "core/core.h"

enum sb_inductor_model {
    SB_INDUCTOR_CLASSIC = 1, /* ring + LL only (pytorch/pytorch@b5ee4d7a) */
    SB_INDUCTOR_MULTI = 2,   /* best of {tree, ring} x {LL, LL128, Simple} */
};

/* NCCL_COLL of comm_analysis.py: the collectives the estimators know. */
enum sb_nccl_coll {
    SB_NCCL_ALL_REDUCE,
    SB_NCCL_ALL_GATHER,
    SB_NCCL_REDUCE_SCATTER,
    SB_NCCL_ALL_TO_ALL,
    SB_NCCL_P2P,
    SB_NCCL_UNSUPPORTED,
};
enum sb_nccl_algo { SB_NCCL_TREE = 0, SB_NCCL_RING = 1 };
enum sb_nccl_proto { SB_NCCL_LL = 0, SB_NCCL_LL128 = 1, SB_NCCL_SIMPLE = 2 };

/* What one estimate chose, for `schedbench collective` and the tests. */
struct sb_nccl_choice {
    int algo, proto; /* enum sb_nccl_algo / sb_nccl_proto; the classic is RING, LL */
};

/* The estimate in milliseconds, as PyTorch returns it, of a collective of
 * `bytes` (the tensor_storage_size_bytes argument) over `group` ranks; 0 for
 * a group of one or a collective the model does not price (PyTorch's 0).
 * `ch` may be NULL. */
double sb_inductor_coll_ms(enum sb_inductor_model m, const struct sb_nccl_params *p,
                           enum sb_nccl_coll coll, uint64_t bytes, uint32_t group,
                           struct sb_nccl_choice *ch);

/* Our collective type as Inductor's, or SB_NCCL_UNSUPPORTED. */
enum sb_nccl_coll sb_inductor_coll_of(enum sb_inductor_model m, enum sb_coll t);

/* Prices every start of g whose comm_us is not given with model m, over c's
 * nccl parameters; kinds the model does not know (host transfers, copies,
 * and in the classic point-to-point) keep the analytical price sb_cost_apply
 * gave them. */
void sb_inductor_apply(enum sb_inductor_model m, const struct sb_cost_params *c,
                       struct sb_graph *g);

/* A bucket's collective (sb_sim_config.bucket_us) under the estimator: one
 * of the members' summed estimator bytes.  ctx: a struct sb_inductor_ctx. */
struct sb_inductor_ctx {
    enum sb_inductor_model model;
    const struct sb_cost_params *cost;
};
double sb_inductor_bucket_us(const void *ctx, const struct sb_graph_view *g, uint32_t ranks,
                             const uint32_t *members, uint32_t n);

/* ";gpu=hopper;intra_node_bw=300;..." appended to the cost_params column. */
void sb_inductor_describe(enum sb_inductor_model m, const struct sb_nccl_params *p, char *buf,
                          size_t n);

#endif
