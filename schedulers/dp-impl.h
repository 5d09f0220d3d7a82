/* dp: the grouper + placer's planning step, shared with tests/test_dp.c so the
 * test can brute-force every grouping with the same placer and check that the
 * search (memo, beam, reconstruction) finds the best one (docs/dp.md). */
#ifndef SB_DP_IMPL_H
#define SB_DP_IMPL_H

#include <stdint.h>

#include "schedbench/plugin.h"

/* Graph-wide facts computed once per run. */
/* A node booked on a device in the current group (named resources). */
struct dp_iv {
    uint32_t dev, lane;
    double st, en;
    uint32_t need[SB_MAX_RES];
};

struct dp_ctx {
    const struct sb_graph_view *g;
    uint32_t n, nd;
    uint32_t n_tasks;  /* every node but inputs: what groups are made of */
    uint32_t *root;    /* buffer of each node's output (views share their source's) */
    double *rank;      /* upward rank from mean costs, as HEFT's */
    /* scratch of one planning step, indexed by node; valid where stamp == epoch */
    uint32_t epoch;
    uint32_t *stamp;
    int32_t *dev;
    double *fin, *cend;
    double *copy;      /* [n * nd] when a copy of v's output is on device b; < 0 none */
    uint32_t *sorted;  /* a group in placement order */
    uint32_t n_sorted; /* entries of sorted the last plan wrote */
    uint32_t *newin, n_newin; /* inputs the group placed with their first consumer */
    double *stream, *res, *link; /* [nd], [nd], [nd * nd] */
    /* Greedy completion plans each candidate on top of the scratch left by the
     * previous group instead of reloading a cut; with `journal` set, the
     * copies a plan records are listed here so that it can be undone. */
    int journal;
    size_t *jcopy, n_jcopy; /* [n_edges + 1] indices into copy */
    /* Named resources (docs/resources.md, docs/dp.md "Packing"): with `pack`
     * the group's nodes are booked as the simulator books them (earliest
     * time inputs, lane and resources allow, beside earlier bookings).
     * placer 0 = skyline, 1 = the note's time slots (device choice). */
    int pack, placer;
    struct dp_iv *iv;
    uint32_t n_iv;
    uint32_t *slot_first; /* [nd] first booking of the device's open slot (note) */
    double *slot_start, *slot_end;
    double ready; /* inputs-ready time of the last try_on */
};

/* Done nodes that an unfinished node still reads, sorted by node. */
struct dp_cut {
    uint32_t n;
    uint32_t *node;
    int32_t *dev;
    double *fin, *cend;
    double *copy; /* [n * nd] */
};

/* Where a sequence of groups has brought the machine: everything before the
 * last barrier has finished at time t. */
struct dp_state {
    double t;
    uint32_t n_done;   /* tasks done */
    uint64_t *done;    /* bitset over nodes */
    struct dp_cut cut;
    double *link;      /* [nd * nd] when each link finishes its last copy (<= t) */
    /* how it was reached: the group, in placement order, and its devices */
    const struct dp_state *parent;
    uint32_t k;
    uint32_t *group;
    int32_t *gdev;
    uint32_t n_in;     /* inputs the group placed (with their first consumer) */
    uint32_t *in_node;
    int32_t *in_dev;
    uint64_t seq;      /* creation number: deterministic ties */
    uint64_t hash;     /* of the finished set (xor of per-node keys) */
    uint32_t *cursor;  /* per topological order: first position not done */
};

int sb_dp_ctx_init(struct dp_ctx *c, const struct sb_graph_view *g);
void sb_dp_ctx_free(struct dp_ctx *c);
/* The state before any group: nothing done, at time 0. */
struct dp_state *sb_dp_initial(const struct dp_ctx *c, uint32_t n_orders);
/* Places group[0..k) (closed: every task it reads is done or in it) after the
 * barrier of s; returns the group's barrier time (the new makespan), or a
 * negative value when a node has no device that can run it.  With `out` the
 * new state is built (its done set is s's plus the group). */
double sb_dp_plan(struct dp_ctx *c, const struct dp_state *s, const uint32_t *group,
                  uint32_t k, struct dp_state **out, uint32_t n_orders);
void sb_dp_state_free(struct dp_state *s);
/* The makespan of (order, dev) without barriers as the default dp's local
 * search scores it: the simulator's rules under the default --sim
 * (tests/test_dp.c checks it against sb_sim_run); negative when out of memory. */
double sb_dp_simulate(const struct sb_graph_view *g, const uint32_t *order, const int32_t *dev);

#endif
