/* ASTRA-sim's collective model, congestion-unaware analytical backend
 * (docs/astra.md): chunking, per-dimension phases, the per-message network
 * cost, endpoint delay and local reduction cost.  `schedbench collective`. */
#ifndef SB_ASTRA_H
#define SB_ASTRA_H

#include "core.h"

#define SB_ASTRA_MAX_DIMS 8

enum sb_astra_topo { SB_TOPO_RING, SB_TOPO_FULLY_CONNECTED, SB_TOPO_SWITCH };
enum sb_astra_algo { SB_ALGO_RING, SB_ALGO_DIRECT, SB_ALGO_HALVING_DOUBLING, SB_ALGO_DBT };
enum sb_astra_op { SB_OP_ALL_REDUCE, SB_OP_ALL_GATHER, SB_OP_REDUCE_SCATTER, SB_OP_ALL_TO_ALL };

struct sb_astra_config {
    /* network (ASTRA-sim's analytical network YAML) */
    uint32_t n_dims;
    uint8_t topo[SB_ASTRA_MAX_DIMS];
    uint32_t npus[SB_ASTRA_MAX_DIMS];
    double bw_gbps[SB_ASTRA_MAX_DIMS]; /* network "GB" is GiB: bytes/ns = bw * 2^30 / 1e9 */
    double latency_ns[SB_ASTRA_MAX_DIMS];
    /* system (ASTRA-sim's system JSON) */
    int lifo;
    double endpoint_delay;
    uint32_t active_chunks;
    uint32_t splits;
    uint8_t algo[4][SB_ASTRA_MAX_DIMS]; /* per op, per dimension */
    int local_bw_aware;                 /* collective-optimization */
    double local_mem_bw;                /* GB/s, decimal: bytes/ns */
};

void sb_astra_defaults(struct sb_astra_config *c);
/* End time in ns of one collective of `bytes` (per-rank input for
 * ALL_GATHER); -1 with a message when the case is not modelled. */
double sb_astra_collective(const struct sb_astra_config *c, enum sb_astra_op op, uint64_t bytes,
                           struct sb_err *e);
int sb_astra_parse_op(const char *s, enum sb_astra_op *out);
int sb_astra_parse_algo(const char *s, uint8_t *out);
int sb_astra_parse_topo(const char *s, uint8_t *out);

/* ASTRA-sim's system JSON and analytical network YAML (astra_config.c);
 * errors as file:line(:col). */
int sb_astra_load_system(const char *path, struct sb_astra_config *c, struct sb_err *e);
int sb_astra_load_network(const char *path, struct sb_astra_config *c, struct sb_err *e);
/* --comm astra: each collective's duration from the model (all-reduce,
 * all-gather, reduce-scatter, all-to-all without a comm_us in the file). */
int sb_astra_apply(const struct sb_astra_config *c, struct sb_graph *g, struct sb_err *e);

int sb_cmd_collective(int argc, char **argv);

#endif
