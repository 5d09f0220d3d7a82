/* schedbench: the policy toolkit (libschedbench_policy).
 *
 * The pieces two or more policies share, as one library that the built-in
 * policies and outside plugins both link, each configuring it rather than
 * copying it (XLA's latency_hiding_scheduler.h is the model): docs/plugins.md,
 * "Building on the toolkit".  Sources in schedulers/lib/, one file per piece:
 *
 *   sb_heft_*     HEFT's indexed lanes and planner        (heft_plan.c)
 *   sb_mem_*      per-device memory of a placed order,     (mem_peaks.c,
 *                 greedy minimum-memory orders             mem_greedy.c)
 *   sb_ggml_*     ggml's backend assignment and splits     (ggml_split.c)
 *   sb_ovl_*      Inductor's overlap list scheduler, its   (overlap_core.c)
 *                 memory tracker and compute-node rules
 *   sb_ind_*      Inductor's comms.py passes and memory.py  (inductor_comms.c,
 *                 sorts                                     inductor_memory.c)
 *   sb_dp_*       dp's group placer (a closed group of     (group_place.c)
 *                 tasks after a barrier) and its exact
 *                 schedule simulator
 *   sb_bucket_*   Inductor's bucketers: greedy by size,    (bucket.c)
 *                 and the overlap-preserving one
 *
 * Everything here reads the graph through struct sb_graph_view (graph.h) and
 * writes through struct sb_schedule (plugin.h); nothing reaches the host.
 * Functions returning int return 0, or -1 (with out->err set where an `out`
 * is passed; otherwise -1 means out of memory).  Times are microseconds,
 * sizes bytes, indices node ids of the view. */
#ifndef SCHEDBENCH_POLICY_H
#define SCHEDBENCH_POLICY_H

#include <stddef.h>
#include <stdint.h>

#include "schedbench/graph.h"
#include "schedbench/plugin.h"

/* ---- HEFT's lanes: the busy intervals of one device ------------------------
 *
 * HEFT's insertion policy asks, for each node and device, the earliest start
 * t >= ready such that [t, t + w) is idle.  A lane keeps its slots in blocks of
 * at most SB_HEFT_LANE_BLOCK with a max-tree over the blocks' widest gaps, so a
 * query costs O(SB_HEFT_LANE_BLOCK + log n) and answers exactly what a scan of
 * the sorted slots would (heft_plan.c). */

/* Slots per block: a query scans at most about two blocks, and a new block
 * costs a tree rebuild over n / SB_HEFT_LANE_BLOCK blocks; 256 keeps both small
 * at 10^6 slots (measured with bench/bench_scale.cc). */
#define SB_HEFT_LANE_BLOCK 256

struct sb_heft_slot {
    double begin, end; /* us */
    uint32_t id;       /* the node (the planner), free for the caller otherwise */
};

/* A block of a lane's slots, in order; a caller may walk b[0..n_blocks) and
 * each block's s[0..n) to read the lane. */
struct sb_heft_lane_block {
    uint32_t n;
    double max_gap; /* us: widest begin[i] - end[i-1] over the block's slots
                       (the lane's first slot has no gap: -INFINITY) */
    struct sb_heft_slot s[SB_HEFT_LANE_BLOCK];
};


/* Busy intervals of one device, sorted by begin, not overlapping (so ends are
 * sorted too).  Zero-initialise (`struct sb_heft_lane L = {0}`), release with
 * sb_heft_lane_free. */
struct sb_heft_lane {
    struct sb_heft_lane_block **b; /* [n_blocks] */
    uint32_t n_blocks, cap_blocks;
    double *tree;      /* [2 * n_leaves] max of the blocks' widest gaps; leaf j = block j */
    uint32_t n_leaves; /* power of two >= n_blocks */
    double last_end;   /* us: end of the last slot (0 when empty) */
};

/* Where a slot goes: block and index in it. */
struct sb_heft_lane_pos {
    uint32_t blk, i;
};

/* The earliest t >= ready_us with [t, t + w_us) idle on L; *at is where a slot
 * starting there goes (for sb_heft_lane_insert). */
double sb_heft_lane_earliest_gap(const struct sb_heft_lane *L, double ready_us, double w_us,
                                 struct sb_heft_lane_pos *at);
/* Books [begin_us, end_us) for node id at `at` (from sb_heft_lane_earliest_gap
 * with the same begin).  Returns -1 when out of memory. */
int sb_heft_lane_insert(struct sb_heft_lane *L, struct sb_heft_lane_pos at, double begin_us,
                        double end_us, uint32_t id);
void sb_heft_lane_free(struct sb_heft_lane *L);

/* ---- HEFT's planner (docs/heft.md) ---------------------------------------- */

/* heft's plan: upward rank from mean costs, then each node onto the device
 * with the earliest finish (insertion-based).  With capacity on, each device
 * is kept within its mem_cap_bytes (sb_heft_plan_memory); one device or no
 * capped device plans without memory.  Writes out->order and out->device; the
 * makespan the plan predicts (latest planned finish of a non-input node, us)
 * into *predicted_us unless NULL. */
int sb_heft_plan(const struct sb_graph_view *g, struct sb_schedule *out, double *predicted_us,
                 int capacity);
/* One plan in which device a holds at most cap_bytes[a] bytes at a time
 * ([n_devices], INFINITY for no limit), or no limit when cap_bytes is NULL. */
int sb_heft_plan_caps(const struct sb_graph_view *g, struct sb_schedule *out,
                      double *predicted_us, const double *cap_bytes);
/* HEFT's own plan, kept when sb_mem_dev_peaks finds it within every device's
 * memory; otherwise up to six plans against budgets cut by each device's
 * excess.  *fits says whether the result fits; with own_only only HEFT's own
 * plan is made (fitting or not). */
int sb_heft_plan_memory(const struct sb_graph_view *g, struct sb_schedule *out,
                        double *predicted_us, int own_only, int *fits);

/* A sort key for qsort, which has no context argument in C11: sort (k, id,
 * tie) triples instead of ids. */
struct sb_heft_key {
    double k;
    uint32_t id, tie;
};
/* qsort comparator: k ascending, then tie ascending. */
int sb_heft_key_cmp_asc(const void *x, const void *y);

/* ---- per-device memory of a placement ---------------------------------------
 *
 * The peak of each device for a placed order (docs/machines.md, "Memory is
 * accounted per device"), by the simulator's rules: a buffer lives on its
 * producer's device from the producer (position 0 for an input) through its
 * last use there, a copy leaving for device b counting as a use at its
 * trigger's position; a copy lives on b from its first use there through its
 * last; a device reading another's memory in place charges that one; a weight
 * or output flag pins the buffer on its node's account.
 *   order [n_nodes]   the schedule
 *   dev   [n_nodes]   each node's device
 *   root  [n_nodes]   the node whose buffer each node's output lives in
 *                     (itself, or what an alias or a done views)
 *   peak  [n_devices] out: bytes
 * Returns -1 when out of memory. */
int sb_mem_dev_peaks(const struct sb_graph_view *g, const uint32_t *order, const int32_t *dev,
                     const uint32_t *root, uint64_t *peak);

/* The smallest memory, in bytes, among the devices g's nodes run on (each
 * node's pre-assigned device, else 0, as the host fills out->device; inputs
 * not counted, as the simulator's devices_used does not), or
 * SB_MEM_UNLIMITED: the capacity a single-device policy keeps within
 * (membound's default cap, aggressive's XLA memory limit). */
uint64_t sb_mem_device_bytes(const struct sb_graph_view *g);

/* Greedy minimum-memory orders (XLA's ListMemoryScheduler and a reverse
 * counterpart; docs/minmem.md), into order [n_nodes]; inputs lead:
 *   reverse_pass 0: forward; among ready nodes the one freeing the most bytes
 *                   net of what it allocates (ties: file order);
 *   reverse_pass 1: built from the end; among nodes whose consumers are all
 *                   placed, the one leaving the least live there (ties: the
 *                   later in file order goes later).
 * O((n + E) log n).  Returns -1 when out of memory.  minmem keeps the lowest
 * peak of these and the file order. */
int sb_mem_greedy_order(const struct sb_graph_view *g, int reverse_pass, uint32_t *order);

/* ---- ggml's backend scheduler (docs/ggml.md) -------------------------------
 *
 * The assignment and split passes of ggml_backend_sched_split_graph
 * (ggml-org/ggml src/ggml-backend.cpp at d99724f) over a description of the
 * graph and the backends' answers: the ggml policy describes our graphs with
 * it, schedbench conform ggml's own cases.  Backends are indexed by priority
 * (0 highest; the last is the CPU). */

#define SB_GGML_NONE (-1) /* no tensor, buffer type or backend */

enum sb_ggml_usage { SB_GGML_USAGE_NONE, SB_GGML_USAGE_WEIGHTS, SB_GGML_USAGE_ANY, SB_GGML_USAGE_COMPUTE };

/* One tensor: leafs first (graph->leafs), then nodes (graph->nodes). */
struct sb_ggml_tensor {
    int view;          /* the op is VIEW, RESHAPE, PERMUTE or TRANSPOSE */
    int exempt;        /* ROPE or FLASH_ATTN_EXT: never follows its weights */
    int input;         /* GGML_TENSOR_FLAG_INPUT */
    int32_t view_src;  /* tensor index, or SB_GGML_NONE */
    int32_t buft;      /* its own buffer's type, or SB_GGML_NONE */
    uint8_t usage;     /* enum sb_ggml_usage of its own buffer */
    int32_t pin;       /* ggml_backend_sched_set_tensor_backend, or SB_GGML_NONE */
    const uint8_t *supports; /* [n_backends] supports_op */
    const uint8_t *offload;  /* [n_backends] offload_op */
    uint32_t n_src;
    const int32_t *src; /* tensor indices, SB_GGML_NONE for holes */
};

struct sb_ggml_problem {
    uint32_t n_backends, n_bufts;
    const int32_t *backend_buft; /* [n_backends] the scheduler's buffer type per backend */
    const uint8_t *reads;        /* [n_backends * n_bufts] supports_buft */
    int op_offload;
    uint32_t cap0;               /* GGML_SCHED_MAX_SPLIT_INPUTS */
    uint32_t n_leafs, n_nodes;
    const struct sb_ggml_tensor *t;      /* [n_leafs + n_nodes] */
};

struct sb_ggml_split {
    int32_t backend;
    uint32_t start, end;
    uint32_t n_inputs, cap;
    uint32_t *inputs; /* tensor indices, in insertion order */
};

struct sb_ggml_result {
    int32_t *backend; /* [n_leafs + n_nodes] */
    uint32_t n_splits;
    struct sb_ggml_split *splits;
    uint32_t n_grow;  /* capacity increases (ggml's warn lines) */
    uint32_t grow_from[64], grow_to[64];
};

/* The same problem as arrays, the layout the passes read (at a million
 * tensors they stream through them several times: one 64-byte sb_ggml_tensor
 * each is most of their time).  sb_ggml_split_graph converts a sb_ggml_problem to it;
 * schedulers/ggml.c builds it directly.  [n = n_leafs + n_nodes] unless noted. */
enum { SB_GGML_F_VIEW = 1, SB_GGML_F_EXEMPT = 2, SB_GGML_F_INPUT = 4 };

struct sb_ggml_arrays {
    uint32_t n_backends, n_bufts;
    const int32_t *backend_buft; /* [n_backends] */
    const uint8_t *reads;        /* [n_backends * n_bufts] */
    int op_offload;
    uint32_t cap0;
    uint32_t n_leafs, n_nodes;
    const uint8_t *flags;     /* GGML_F_* bits: ggml_t's view, exempt, input */
    const int32_t *view_src;  /* tensor index, or SB_GGML_NONE */
    const int32_t *buft;      /* its own buffer's type, or SB_GGML_NONE */
    const uint8_t *usage;     /* enum sb_ggml_usage */
    const int32_t *pin;       /* or SB_GGML_NONE */
    const uint8_t *supports;  /* [n * n_backends], tensor-major */
    const uint8_t *offload;   /* [n * n_backends], tensor-major */
    const uint32_t *src_off;  /* [n + 1], CSR of the sources by tensor */
    const int32_t *src;       /* [src_off[n]] tensor indices, SB_GGML_NONE for holes */
};

/* Returns 0, or -1 when out of memory. */
int sb_ggml_split_graph(const struct sb_ggml_problem *p, struct sb_ggml_result *r);
int sb_ggml_split_arrays(const struct sb_ggml_arrays *p, struct sb_ggml_result *r);
void sb_ggml_result_free(struct sb_ggml_result *r);

/* ---- Inductor's overlap scheduler (docs/overlap.md) ------------------------ */

#define SB_OVL_OFF UINT32_MAX   /* domination index of a node feeding no compute */
#define SB_OVL_GIB 1073741824.0 /* bytes: Inductor's gb_to_bytes multiplies by 1024^3 */

/* Single-device memory tracker, the harness's memory model (docs/cost-model.md)
 * as nodes are appended to a schedule.  A buffer is freed after the last of
 * its "uses" (its own position, every position of a node viewing it or
 * reading a view of it, and a collective's done for the start's inputs);
 * inputs are live from the start; weight and output buffers are never freed. */
struct sb_ovl_mem {
    uint32_t n;
    uint32_t *root;      /* [n] node whose buffer v's output lives in */
    uint32_t *uses_left; /* [n] on roots: uses not yet scheduled */
    uint8_t *pinned;     /* [n] on roots: weight/output, never freed */
    uint32_t *uses;      /* [n_edges * 2 + 1] scratch: the buffers one node uses */
    int64_t cur_bytes;   /* live after the last scheduled node's frees */
    int64_t peak_bytes;  /* largest live total while a scheduled node ran */
};

/* Returns -1 when out of memory (m is then empty). */
int sb_ovl_mem_init(struct sb_ovl_mem *m, const struct sb_graph_view *g);
void sb_ovl_mem_free(struct sb_ovl_mem *m);
/* The buffers (roots) node v uses, with multiplicity, into m->uses; returns
 * how many. */
uint32_t sb_ovl_mem_uses(struct sb_ovl_mem *m, const struct sb_graph_view *g, uint32_t v);
/* Bytes v allocates at its own position (inputs were allocated up front). */
int64_t sb_ovl_mem_alloc(const struct sb_graph_view *g, const struct sb_ovl_mem *m, uint32_t v);
/* Appends v: allocates, updates the peak, frees the buffers v used last. */
void sb_ovl_mem_schedule(struct sb_ovl_mem *m, const struct sb_graph_view *g, uint32_t v);

enum sb_ovl_compute_rule {
    SB_OVL_COMPUTE_FLOPS = 0, /* Inductor's is_compute_node, by op name */
    SB_OVL_COMPUTE_ALL = 1,   /* every compute node */
};

/* is_compute [n_nodes] out: v is a "compute node" in Inductor's sense under
 * `rule` (enum sb_ovl_compute_rule); with SB_OVL_COMPUTE_FLOPS and no op of
 * the graph in the flop registry, every compute node counts. */
void sb_ovl_compute_nodes(const struct sb_graph_view *g, int rule, uint8_t *is_compute);
/* dom [n_nodes] out: index (in file order) of the first compute node v feeds,
 * itself for a compute node, SB_OVL_OFF when it feeds none (Inductor's
 * _calculate_domination_index); rs [n_nodes] out: v is or feeds a
 * reduce_scatter start.  Returns the number of compute nodes. */
uint32_t sb_ovl_domination(const struct sb_graph_view *g, const uint8_t *is_compute,
                           uint32_t *dom, uint8_t *rs);
/* Unlinks v from a doubly linked list over node ids (SB_NONE ends it);
 * tail may be NULL. */
void sb_ovl_list_unlink(uint32_t *next, uint32_t *prev, uint32_t *head, uint32_t *tail,
                        uint32_t v);

enum sb_ovl_fallback {
    SB_OVL_FALLBACK_NONE = 0,    /* Inductor as is (`overlap`) */
    SB_OVL_FALLBACK_PROFILE = 1, /* over the original profile + headroom: original order */
    SB_OVL_FALLBACK_PEAK = 2,    /* over original peak + max(headroom, ratio * peak): same */
};

/* How a policy configures the scheduler (overlap.c, memfallback.c). */
struct sb_ovl_params {
    int prefetch;                   /* start collectives early at compute nodes */
    double max_in_flight_bytes;     /* footprint in flight before the oldest wait is forced */
    uint32_t max_compute_pre_fetch; /* compute nodes ahead an on-path collective may start */
    uint32_t max_coll_distance;     /* unscheduled collectives examined per overlap node */
    double overlap_mult;            /* compute time -> overlap budget (us per us) */
    int fallback;                   /* enum sb_ovl_fallback */
    double headroom_bytes;          /* memory allowed above the reference */
    double peak_ratio;              /* SB_OVL_FALLBACK_PEAK: fraction of the original peak */
    int fresh_scores;               /* re-score on-path nodes when popped */
    int compute_rule;               /* enum sb_ovl_compute_rule */
    int single_queue;               /* one ready queue: off-path nodes sort last */
    /* Appended (zero keeps the earlier behaviour): prefetch candidates of
     * equal priority and domination go by -min(group budget, exposed), the
     * collective the budget hides more of first (@0196bc40). */
    int hide_key;
};

/* Runs the model on g; writes out->order; *n_fallback (unless NULL) counts
 * the nodes placed by the fallback.  Returns 0, or -1 with out->err set. */
int sb_ovl_run(const struct sb_graph_view *g, const struct sb_ovl_params *P,
               struct sb_schedule *out, uint32_t *n_fallback);

/* ---- Inductor's bucketers (docs/plugins.md, "Buckets") ----------------------
 *
 * Both fill out_bucket [n_nodes] (sb_schedule.bucket: ids 1..k on the starts
 * of each bucket of two or more, 0 elsewhere) and reorder `order` [n_nodes]
 * (a topological order, in and out) so every bucket can go out as one: its
 * starts together, before its dones.  They return k, or -1 when out of
 * memory.  A process group is a start's group size on its device (the
 * params' `device`, else the pre-assigned one); the bucket key its
 * collective type. */

struct sb_bucket_params {
    uint32_t kinds;             /* bit (1u << enum sb_coll) per type bucketed */
    /* sb_bucket_greedy: bucket_cap_mb_by_bucket_idx(0) * 2^20 */
    double cap_bytes;
    /* sb_bucket_overlap (OverlapPreservingBucketer's arguments): */
    double max_bucket_bytes;    /* max_bucket_memory_gb * 2^30, of footprints */
    uint32_t max_coll_distance; /* later collectives tried per bucket */
    uint32_t max_failures;      /* consecutive refusals that end a bucket */
    /* Each start's hiding nodes, CSR over node ids ([n_nodes + 1] offsets,
     * then the nodes), and whether it is exposed ([n_nodes], or NULL: when it
     * has none); NULL offsets: derived from the order, the compute nodes
     * after a start until their dur_us covers its own or its done comes
     * (exposed when they do not cover it). */
    const uint32_t *hiding_off, *hiding;
    const uint8_t *exposed;
    /* Appended, test-only (zero keeps the rules; tests/inductor_ablation.sh
     * switches each off): sb_bucket_overlap without the hiding-interval
     * checks (_preserves_hiding_intervals), or with one key for every
     * bucketed collective type of a group (a merge the validator refuses). */
    int no_interval_check;
    int no_type_key;
    /* Appended: the schedule's device of each node ([n_nodes], out->device),
     * which keys the process groups; NULL: the view's pre-assigned device
     * (an unpinned start then keys apart from the device it runs on). */
    const int32_t *device;
};

/* kinds = all_gather | reduce_scatter | all_reduce, cap 2000 MB (PyTorch's
 * bucket_cap_mb_by_bucket_idx_default), max_bucket 1 GiB, distance 1000,
 * 20 failures (OverlapPreservingBucketer's defaults). */
void sb_bucket_defaults(struct sb_bucket_params *p);
/* greedy_bucket_collective_by_mb: runs of consecutive waits (of one type)
 * with one key, each split greedily so a bucket's full tensors stay within
 * cap_bytes, a collective that depends on the bucket skipped. */
int sb_bucket_greedy(const struct sb_graph_view *g, uint32_t *order,
                     const struct sb_bucket_params *p, uint32_t *out_bucket);
/* OverlapPreservingBucketer.bucket_collectives: per group and key, in
 * schedule order, a collective joins a bucket when neither depends on the
 * other, some placement of the merged start and wait keeps every hiding
 * node inside and no other collective's hiding interval inside an
 * execution interval, and the group's timeline stays acyclic. */
int sb_bucket_overlap(const struct sb_graph_view *g, uint32_t *order,
                      const struct sb_bucket_params *p, uint32_t *out_bucket);
enum sb_bucketer { SB_BUCKET_GREEDY, SB_BUCKET_OVERLAP };
/* A policy's last step: bucketer `which` on its schedule `out` (its order,
 * keyed by its devices, into out->bucket), p as given but for `device`.
 * 0, also when the host has no bucket array (older than the field: the
 * schedule stays unbucketed); -1 with out->err set when out of memory. */
int sb_bucket_schedule(const struct sb_graph_view *g, enum sb_bucketer which,
                       const struct sb_bucket_params *p, struct sb_schedule *out);

/* ---- Inductor's scheduler-IR passes and memory sorts (docs/inductor.md) ---
 *
 * torch/_inductor/comms.py and memory.py on a schedbench graph
 * (inductor_comms.c, inductor_memory.c): a collective is a start, its wait the
 * done, every edge a dependency; graph inputs lead every order, in id order. */

/* out [n_nodes]: the inputs of g in id order, then the other nodes of in
 * [n_nodes] in their order; returns the number of inputs. */
uint32_t sb_ind_inputs_first(const struct sb_graph_view *g, const uint32_t *in, uint32_t *out);
/* comms.py _schedule_for_comm on the order in [n_nodes] (what the previous
 * pass left) into out: a list scheduler whose ready node of lowest score goes
 * next, score = (lowest index of a collective the node is or precedes when
 * raise_comms, 1 for a wait when sink_waits, index in `in`); with
 * reorder_for_overlap a collective is followed by the best ready nodes that
 * are neither collectives nor waits until their time covers its.  sink_waits
 * = (0,1,0), raise_comms = (1,0,0), reorder_compute_for_overlap = (1,1,1).
 * Returns -1 when out of memory. */
int sb_ind_schedule_for_comm(const struct sb_graph_view *g, const uint32_t *in, uint32_t *out,
                             int raise_comms, int sink_waits, int reorder_for_overlap);

/* The knobs of the iterative passes (torch/_inductor/config_comms.py). */
struct sb_ind_iter_params {
    int sink;                      /* 0: reorder_communication_preserving_peak_memory
                                      (collectives climb); 1: sink_waits_iterative */
    double peak_memory_budget;     /* the order's peak may grow by this fraction */
    int unsafe_collectives_reorder; /* a collective may pass another collective */
    int group_with_collectives;    /* reorder: a collective it depends on moves with it */
    int swap_with_collectives;     /* sink: a wait may pass a collective start */
    uint32_t limit;                /* collectives (waits) to move, 0 = all */
    int no_gemm_stop;              /* test-only: a gemm-like node groups like any other */
};
/* Runs one iterative pass on order [n_nodes] in place (inputs are moved to
 * the front first); *n_moves (unless NULL) counts the swaps.  Runtime
 * estimations are off, as by default, so only dependencies, gemm-like
 * producers (flop-registry compute nodes) and the memory budget stop a move.
 * Returns -1 when out of memory. */
int sb_ind_reorder_iterative(const struct sb_graph_view *g, uint32_t *order,
                             const struct sb_ind_iter_params *P, uint32_t *n_moves);

enum sb_ind_sort {
    SB_IND_LPMF = 0, /* topological_sort_lpmf */
    SB_IND_BFS = 1,  /* topological_sort_bfs */
    SB_IND_DFS = 2,  /* topological_sort_dfs */
};
/* One of memory.py's topological sorts of g (enum sb_ind_sort) into order
 * [n_nodes], inputs first.  Returns -1 when out of memory or on a cycle. */
int sb_ind_peak_memory_sort(const struct sb_graph_view *g, int method, uint32_t *order);

/* ---- dp's group placer (docs/dp.md) ----------------------------------------
 *
 * A schedule cut into groups separated by barriers: after a group every device
 * synchronises.  The placer puts one closed group (every task it reads is done
 * or in it) after the barrier of a state: its tasks in upward-rank order (with
 * packing, the longest ready one next), each on the device where it finishes
 * first, copies queued FIFO per link and made once per (producer, device), as
 * harness/src/core/sim.c does.  dp's search (beam/DP over groups, greedy
 * completion) is one client; tests/test_dp.c brute-forces every grouping
 * through sb_dp_plan.  "Tasks" are every node but inputs; an input is placed
 * with its first consumer. */

/* A node booked on a device in the current group (named resources). */
struct sb_dp_iv {
    uint32_t dev, lane;
    double st, en;              /* us */
    uint32_t need[SB_MAX_RES];  /* units of each resource held */
};

/* Graph-wide facts computed once per run (sb_dp_ctx_init), and the scratch of
 * one planning step.  Owns every array; the view g is borrowed and must
 * outlive the context. */
struct sb_dp_ctx {
    const struct sb_graph_view *g;
    uint32_t n, nd;    /* n_nodes, n_devices */
    uint32_t n_tasks;  /* every node but inputs: what groups are made of */
    uint32_t *root;    /* [n] buffer of each node's output (views share their source's) */
    double *rank;      /* [n] upward rank from mean costs (us), as HEFT's */
    /* scratch of one planning step, indexed by node; valid where stamp == epoch */
    uint32_t epoch;
    uint32_t *stamp;   /* [n] */
    int32_t *dev;      /* [n] device of a known node */
    double *fin, *cend; /* [n] us: finish; a start's collective end */
    double *copy;      /* [n * nd] us: when a copy of v's output is on device b; < 0 none */
    uint32_t *sorted;  /* [n] a group in placement order */
    uint32_t n_sorted; /* entries of sorted the last plan wrote */
    uint32_t *newin, n_newin; /* [n] inputs the group placed with their first consumer */
    double *stream, *res, *link; /* us: when free: [nd] stream, [nd] collective,
                                    [nd * nd] link */
    /* Greedy completion plans each candidate on top of the scratch left by the
     * previous group instead of reloading a cut; with `journal` set, the
     * copies a plan records are listed here so that sb_dp_undo_plan can undo
     * it. */
    int journal;
    size_t *jcopy, n_jcopy; /* [n_edges + 1] indices into copy */
    /* Named resources (docs/resources.md, docs/dp.md "Packing"): with `pack`
     * the group's nodes are booked as the simulator books them (earliest
     * time inputs, lane and resources allow, beside earlier bookings).
     * placer 0 = skyline, 1 = the note's time slots (device choice).
     * sb_dp_ctx_init sets pack when the graph uses resources; the caller may
     * set placer. */
    int pack, placer;
    struct sb_dp_iv *iv;  /* bookings of the current group */
    uint32_t n_iv;
    uint32_t *slot_first; /* [nd] first booking of the device's open slot (note) */
    double *slot_start, *slot_end; /* [nd] us */
    double ready;         /* us: inputs-ready time of the last device try */
};

/* Done nodes that an unfinished node still reads, sorted by node. */
struct sb_dp_cut {
    uint32_t n;
    uint32_t *node;      /* [n] */
    int32_t *dev;        /* [n] */
    double *fin, *cend;  /* [n] us */
    double *copy;        /* [n * nd] us, as sb_dp_ctx's */
};

/* Where a sequence of groups has brought the machine: everything before the
 * last barrier has finished at time t.  A state owns its arrays and points to
 * its parent (not owned: the caller keeps the chain alive and frees each
 * state with sb_dp_state_free). */
struct sb_dp_state {
    double t;          /* us: the barrier (makespan so far) */
    uint32_t n_done;   /* tasks done */
    uint64_t *done;    /* [(n + 63) / 64 + 1] bitset over nodes */
    struct sb_dp_cut cut;
    double *link;      /* [nd * nd] us: when each link finishes its last copy (<= t) */
    /* how it was reached: the group, in placement order, and its devices */
    const struct sb_dp_state *parent;
    uint32_t k;
    uint32_t *group;   /* [k] */
    int32_t *gdev;     /* [k] */
    uint32_t n_in;     /* inputs the group placed (with their first consumer) */
    uint32_t *in_node; /* [n_in] */
    int32_t *in_dev;   /* [n_in] */
    uint64_t seq;      /* the caller's: creation number, for deterministic ties */
    uint64_t hash;     /* the caller's: of the finished set */
    uint32_t *cursor;  /* [n_orders] the caller's: per order, first position not done */
};

/* 1 when v's output lives in another node's buffer (an alias, or a done of
 * its start). */
int sb_dp_is_view(const struct sb_graph_view *g, uint32_t v);
/* root [n_nodes] out: the node owning the buffer v views (a view's first
 * input's root), v itself for every other node. */
void sb_dp_view_roots(const struct sb_graph_view *g, uint32_t *root);

/* Returns 0, or -1 when out of memory (c is then freed). */
int sb_dp_ctx_init(struct sb_dp_ctx *c, const struct sb_graph_view *g);
void sb_dp_ctx_free(struct sb_dp_ctx *c);
/* The state before any group: nothing done, at time 0, with n_orders cursors
 * (zero); NULL when out of memory. */
struct sb_dp_state *sb_dp_initial(const struct sb_dp_ctx *c, uint32_t n_orders);
/* Places group[0..k) (closed: every task it reads is done or in it) after the
 * barrier of s; returns the group's barrier time in us (the new makespan), or
 * a negative value when a node has no device that can run it (or out of
 * memory).  With `out` the new state is built (its done set is s's plus the
 * group, its cursors s's; parent = s). */
double sb_dp_plan(struct sb_dp_ctx *c, const struct sb_dp_state *s, const uint32_t *group,
                  uint32_t k, struct sb_dp_state **out, uint32_t n_orders);
/* The two halves of sb_dp_plan without building a state, for a caller that
 * chains groups on the scratch (dp's greedy completion): sb_dp_load sets the
 * scratch to s (its cut, links, streams at s->t); sb_dp_place places the
 * group after a barrier at t0_us on the scratch as it is (the caller sets
 * c->stream, c->res, c->link) and returns as sb_dp_plan.  c->sorted and
 * c->newin then hold the group in placement order and the inputs it placed. */
void sb_dp_load(struct sb_dp_ctx *c, const struct sb_dp_state *s);
double sb_dp_place(struct sb_dp_ctx *c, double t0_us, const uint32_t *group, uint32_t k);
/* The state the last sb_dp_plan or sb_dp_place of k tasks from s reached,
 * with barrier t_us, built from the scratch (for a caller that plans without
 * `out` and keeps only some results); NULL when out of memory. */
struct sb_dp_state *sb_dp_plan_state(struct sb_dp_ctx *c, const struct sb_dp_state *s, uint32_t k,
                                     double t_us, uint32_t n_orders);
/* With c->journal set: forgets what the last sb_dp_place wrote to the
 * scratch (its nodes and the copies it recorded). */
void sb_dp_undo_plan(struct sb_dp_ctx *c);
/* Frees a state's working data (cut, done set, links, cursors), keeping what
 * reconstruction reads (t, parent, group, gdev, in_node, in_dev). */
void sb_dp_state_shrink(struct sb_dp_state *s);
void sb_dp_state_free(struct sb_dp_state *s);

/* A (rank, node) sort key; sb_dp_rank_cmp sorts by rank descending, then
 * node ascending: the placer's order, topological since rank never grows
 * along an edge. */
struct sb_dp_rank {
    double r;
    uint32_t v;
};
int sb_dp_rank_cmp(const void *x, const void *y);

/* ---- dp's schedule simulator -----------------------------------------------
 *
 * The makespan of (order, dev) without barriers by the simulator's rules
 * under the default --sim (one stream per device as g->stream says, one
 * collective at a time per device, copies once per (producer, device) FIFO
 * per link, data edges only, no named resources), node by node, so that a
 * caller can also ask what appending one node would give.  dp's local search
 * scores every move with it; tests/test_dp.c checks it against sb_sim_run. */
struct sb_dp_sim {
    const struct sb_graph_view *g;
    uint32_t n, nd, ns;           /* n_nodes, n_devices, streams (>= 1) */
    const uint32_t *root;         /* [n] borrowed: sb_dp_view_roots */
    double *start, *fin, *cend;   /* [n] us: this simulation's times */
    uint32_t *why;                /* [n] node whose finish bound v's start; UINT32_MAX none */
    double *copy;                 /* [n * nd] us: copy of v on device b, its arrival */
    uint32_t *cstamp, epoch;      /* [n * nd] copy valid where cstamp == epoch */
    double *link, *stream, *coll; /* us: [nd * nd], [nd * ns], [nd] when free */
    uint32_t *stream_last, *coll_last; /* [nd * ns], [nd] node that last held them */
    uint32_t *link_last;          /* [nd * nd] consumer whose copy the link carries last */
    uint32_t last;                /* the node that ends last */
    double mk;                    /* us: its finish, the makespan so far */
};

/* Returns 0, or -1 when out of memory (L is then empty). */
int sb_dp_sim_init(struct sb_dp_sim *L, const struct sb_graph_view *g, const uint32_t *root);
void sb_dp_sim_free(struct sb_dp_sim *L);
/* Forgets the last simulation: nothing placed, every resource free at 0. */
void sb_dp_sim_reset(struct sb_dp_sim *L);
/* Node v (not an input) on device d after every node simulated so far;
 * returns its finish in us (a start's: its collective's end without commit).
 * With commit the state takes v (an unplaced input, dev[p] < 0, goes to d);
 * without, nothing changes and *xfer_us (unless NULL) is the link time of the
 * copies v would queue.  dev [n_nodes]. */
double sb_dp_sim_step(struct sb_dp_sim *L, int32_t *dev, uint32_t v, uint32_t d, int commit,
                      double *xfer_us);
/* Resets, then simulates order [n_nodes] on dev [n_nodes]; returns the
 * makespan in us and leaves every node's times and binding node in L. */
double sb_dp_sim_eval(struct sb_dp_sim *L, const uint32_t *order, const int32_t *dev);
/* sb_dp_sim_eval on a fresh simulator; negative when out of memory. */
double sb_dp_simulate(const struct sb_graph_view *g, const uint32_t *order, const int32_t *dev);

#endif
