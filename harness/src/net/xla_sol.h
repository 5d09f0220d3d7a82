/* XLA GPU's speed-of-light collective model (`--comm xla-sol`,
 * docs/cost-model.md): SolGPUCostModel's ring and all-to-all formulas and
 * SolLatencyEstimator's dispatch (which collectives it prices, as which
 * communication pattern), read at ROCm/xla 183fa00cb5d8 in
 * xla/service/gpu/model/sol_gpu_cost_model.cc and sol_latency_estimator.cc. */
#ifndef SB_XLA_SOL_H
#define SB_XLA_SOL_H

#include "core/core.h"

#include <stdint.h>

/* SolGPUCostModel::Config; the names are XLA's option names
 * (xla_gpu_analytical_latency_estimator_options), `--cost sol_<name>=`. */
struct sb_sol_config {
    double nccl_op_launch_us;  /* paid once per collective */
    double nic_speed_gbps;     /* GB/s (10^9 bytes/s) per NIC, one NIC per GPU */
    double chunk_prep_us;      /* per chunk of chunk_size_bytes */
    double rtt_us;             /* per piece sent */
    uint32_t gpus_per_node;
    uint64_t chunk_size_bytes;
    uint32_t partition_size;   /* devices per fast domain; 0: gpus_per_node */
    /* intra-node Triton all-reduce kernels (IntraNodeAllReduceLatency): GB/s
     * per NVLink lane (XLA takes it from the device; 0: unknown) and the
     * signal barrier's round trip.  A graph names no kernel strategy, so
     * only the conformance cases reach them. */
    double nvlink_bw_per_lane_gbps;
    double nvlink_barrier_us;
    uint32_t given;            /* bit k: key k was given (sb_sol_describe) */
};

/* XLA's per-device table (device_to_cfg): "h100" (NVIDIA H100 80GB HBM3),
 * "b200" (NVIDIA B200) or "unknown" (any other name, the default); 0, or -1
 * for another name. */
int sb_sol_preset(struct sb_sol_config *c, const char *name);

/* What the dispatch needs of the device (se::DeviceDescription). */
struct sb_sol_device {
    double memory_bytes_per_s;  /* memory_bandwidth() */
    double flop_per_ns;         /* CalculateEffectiveFlopsPerNs on the whole device */
};

enum sb_sol_op {
    SB_SOL_ALL_GATHER, SB_SOL_ALL_REDUCE, SB_SOL_REDUCE_SCATTER, SB_SOL_ALL_TO_ALL,
    SB_SOL_COLLECTIVE_PERMUTE,
    SB_SOL_OTHER,         /* another collective (collective-broadcast, ragged-all-to-all) */
    SB_SOL_NOT_COLLECTIVE /* send, recv: no replica groups, not priced */
};
/* GPUCommunicationType (collective_ops_utils.cc) */
enum sb_sol_comm { SB_SOL_SINGLE_PARTITION, SB_SOL_WORLD, SB_SOL_NON_WORLD };

/* One collective as SolLatencyEstimator::ComputeCollectiveTime sees it. */
struct sb_sol_coll {
    enum sb_sol_op op;
    int async_wrapped;          /* inside async-start: only RS and A2A are priced */
    enum sb_sol_comm comm;      /* for a permute: single, or cross-partition */
    uint32_t group_size, n_groups;
    uint64_t bytes_transferred; /* GpuHloCostAnalysis::BytesTransferred */
    double bytes_accessed;      /* HBM bytes, read and written */
    double reduce_flops;        /* all-reduce, reduce-scatter: the reduction */
    int triton_kernel;          /* kernel_strategy TRITON_ONE_SHOT / _TWO_SHOT */
    uint32_t active_links;      /* the device's active NVLink lanes */
};

/* Outcome of sb_sol_collective_us. */
enum sb_sol_verdict {
    SB_SOL_PRICED = 0,     /* *us is the SoL time */
    SB_SOL_INTERPOLATOR,   /* XLA uses CollectiveInterpolator (measured NCCL tables) */
    SB_SOL_UNSUPPORTED,    /* XLA falls back to the wrapped estimator */
    SB_SOL_ERROR           /* XLA returns an error status; why says which */
};
enum sb_sol_verdict sb_sol_collective_us(const struct sb_sol_config *c,
                                         const struct sb_sol_device *d,
                                         const struct sb_sol_coll *x, double *us, char *why,
                                         size_t n_why);

/* The pattern of replica groups (CommunicationType): groups[i] has `size`
 * device ids; -1 with why when the groups are not homogeneous. */
int sb_sol_classify(uint32_t partition_size, const uint32_t *ids, uint32_t n_groups,
                    uint32_t size, enum sb_sol_comm *out, char *why, size_t n_why);
uint32_t sb_sol_partition(const struct sb_sol_config *c);

/* IsSupportedForModule without the optimisation-effort path: the flag, a
 * Hopper/Blackwell/MI350 device and only supported collectives (XLA opcode
 * names, e.g. "all-gather-start"); host offloading disables it too. */
int sb_sol_enabled(int flag, int device_supported, int host_offloaded,
                   const char *const *opcodes, uint32_t n_opcodes);

/* `--cost` keys: each "sol_*" key of spec goes to c (checked, once each),
 * the rest is returned (malloc'd) for sb_cost_parse; NULL on error. */
char *sb_sol_take_cost_keys(struct sb_sol_config *c, const char *spec, struct sb_err *e);
/* ';'-separated effective values, for the results' cost_params column. */
void sb_sol_describe(const struct sb_sol_config *c, char *buf, size_t n);

/* Prices every collective start of g that XLA's SoL model prices, from its
 * type, comm_bytes and group size (docs/cost-model.md says how a graph's
 * groups are laid out); the others keep the dur_us sb_cost_apply gave
 * them.  hbm_gbps and fp32_tflops are the device's. */
void sb_sol_apply(const struct sb_sol_config *c, double hbm_gbps, double fp32_tflops,
                  const struct sb_cost_params *cost, struct sb_graph *g);

#endif
