/* ASTRA-sim's collective model, congestion-unaware analytical backend
 * (docs/astra.md): chunking, per-dimension phases, the per-message network
 * cost, endpoint delay and local reduction cost.  `schedbench collective`. */
#ifndef SB_ASTRA_H
#define SB_ASTRA_H

#include "core/core.h"

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
    /* `run --cost ranks=N`: the group of a collective that names none and
     * whose graph has no "# ranks=" line (0: one rank) */
    uint32_t default_ranks;
};

void sb_astra_defaults(struct sb_astra_config *c);

/* One collective cut into `chunks` streams, each running phases 0..n_ph-1 in
 * order: phase i on dimension dim[i] for t_ns[i] (ASTRA-sim's chunking and
 * per-dimension phases, astra.c). */
struct sb_astra_plan {
    uint64_t chunks;
    uint32_t n_ph;
    uint32_t dim[2 * SB_ASTRA_MAX_DIMS];
    double t_ns[2 * SB_ASTRA_MAX_DIMS];
};
/* Sys::determine_chunk_size: each chunk's bytes and how many (all full). */
int sb_astra_chunking(const struct sb_astra_config *c, enum sb_astra_op op, uint64_t bytes,
                      uint64_t *chunk, uint64_t *chunks, struct sb_err *e);
/* -1 with a message when the case is not modelled. */
int sb_astra_plan(const struct sb_astra_config *c, enum sb_astra_op op, uint64_t bytes,
                  struct sb_astra_plan *p, struct sb_err *e);
/* The same over a communicator group: `ranks` lists its physical NPUs in
 * ring order, on a network of one dimension. */
int sb_astra_plan_group(const struct sb_astra_config *c, enum sb_astra_op op, uint64_t bytes,
                        const uint32_t *ranks, uint32_t n_ranks, struct sb_astra_plan *p,
                        struct sb_err *e);
/* What no sharing of the queues can beat: a chunk's phases one after the
 * other, and each dimension's work over its `active` slots.  Sharing can end
 * a collective sooner than alone (the queues serve in arrival order, which
 * is not always the best order for a pipeline), so this, not the time alone,
 * is what a lower bound may use. */
double sb_astra_plan_floor_ns(const struct sb_astra_plan *p, uint32_t active);
/* End time in ns of one collective of `bytes` (per-rank input for
 * ALL_GATHER) issued alone at 0; -1 with a message when not modelled. */
double sb_astra_collective(const struct sb_astra_config *c, enum sb_astra_op op, uint64_t bytes,
                           struct sb_err *e);

/* The same rank-by-rank model on the congestion-unaware network, for one
 * dimension described by c alone: `chunks` chunks of `chunk` bytes.  astra.c
 * uses it where no closed form exists (doubleBinaryTree); test_astra checks
 * it against the closed forms. */
double sb_astra_ranks_unaware(const struct sb_astra_config *c, enum sb_astra_op op,
                              uint64_t chunk, uint64_t chunks, struct sb_err *e);
/* Each rank's end (end[npus[0]]) of one collective over the whole network of
 * one dimension, on the aware or the unaware network. */
int sb_astra_rank_ends(const struct sb_astra_config *c, int aware, enum sb_astra_op op,
                       uint64_t bytes, double *end, struct sb_err *e);
/* ASTRA-sim's congestion-aware backend (astra_ranks.c): the end time in ns of
 * one collective on a network of one dimension, simulated rank by rank and
 * message by message with FIFO links.  ranks: n_groups communicator groups
 * one after the other (group_len[i] physical NPUs each, in ring order), all
 * running at once; NULL: one group of every NPU.  -1 with a message when not
 * modelled. */
double sb_astra_aware(const struct sb_astra_config *c, enum sb_astra_op op, uint64_t bytes,
                      const uint32_t *ranks, const uint32_t *group_len, uint32_t n_groups,
                      struct sb_err *e);

/* One NPU's system layer (astra_queue.c): collectives issued at
 * nondecreasing times share the dimension queues.  A handle is the issue
 * index. */
struct sb_astra_sys;
struct sb_astra_sys *sb_astra_sys_new(const struct sb_astra_config *c);
void sb_astra_sys_free(struct sb_astra_sys *s);
uint32_t sb_astra_sys_issue(struct sb_astra_sys *s, const struct sb_astra_plan *p, double t_ns);
double sb_astra_sys_next(const struct sb_astra_sys *s); /* next event; INFINITY when idle */
void sb_astra_sys_step(struct sb_astra_sys *s);         /* handle the next event */
double sb_astra_sys_end(const struct sb_astra_sys *s, uint32_t h); /* < 0 while running */
double sb_astra_sys_wait(struct sb_astra_sys *s, uint32_t h);      /* steps until h ends */
int sb_astra_parse_op(const char *s, enum sb_astra_op *out);
int sb_astra_parse_algo(const char *s, uint8_t *out);
int sb_astra_parse_topo(const char *s, uint8_t *out);

/* ASTRA-sim's system JSON and analytical network YAML (astra_config.c);
 * errors as file:line(:col). */
int sb_astra_load_system(const char *path, struct sb_astra_config *c, struct sb_err *e);
int sb_astra_load_network(const char *path, struct sb_astra_config *c, struct sb_err *e);
/* --comm astra: each collective's duration alone from the model (all-reduce,
 * all-gather, reduce-scatter, all-to-all without a comm_us in the file);
 * aware: from the congestion-aware backend (--comm astra-aware). */
int sb_astra_apply(const struct sb_astra_config *c, int aware, struct sb_graph *g,
                   struct sb_err *e);
#define SB_ASTRA_MEMO 1024 /* distinct collectives the aware pricing remembers per graph */
/* The plan of start v under c; 0 when ASTRA-sim does not price v (its
 * duration stays g->dur_us).  Call after sb_astra_apply succeeded. */
int sb_astra_node_plan(const struct sb_astra_config *c, const struct sb_graph *g, uint32_t v,
                       struct sb_astra_plan *p);

/* The queues above as the simulator's sb_comm_queue (astra_comm.c): set
 * sb_sim_config.queue to q for `--comm astra`.  q refers to c. */
void sb_astra_comm_queue(const struct sb_astra_config *c, struct sb_comm_queue *q);

#endif
