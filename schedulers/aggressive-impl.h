/* aggressive: private state of the XLA latency-hiding-scheduler policy
 * (schedulers/aggressive.c, docs/aggressive.md).
 *
 * The scheduler works on its own copy of the graph, numbered in the order of the
 * sequence it starts from (XLA's "original position"), with edges deduplicated
 * the way XLA's HloScheduleGraph has them (one edge per operand->user pair) and
 * turned to the scheduling direction: bottom-up, a node waits for its users
 * ("deps") and releases its operands ("rels"); top-down the other way round. */
#ifndef SB_AGGRESSIVE_IMPL_H
#define SB_AGGRESSIVE_IMPL_H

#include <stdint.h>

#include "schedbench/plugin.h"

/* ---- configuration (XLA SchedulerConfig; see the parameter table) ---------- */

enum lhs_estimator { LHS_EST_WORKLOAD = 0, LHS_EST_APPROXIMATE = 1 };
enum lhs_resources { LHS_RES_SHARED = 0, LHS_RES_PER_TYPE = 1 };
enum lhs_memory { LHS_MEM_HARNESS = 0, LHS_MEM_XLA = 1 };
enum lhs_selection { LHS_SEL_FAST = 0, LHS_SEL_SCAN = 1 };
enum lhs_computations { LHS_COMP_SEPARATE = 0, LHS_COMP_FLAT = 1 };

/* Resources of XLA's AsyncTracker (ResourceType), one per collective family. */
enum lhs_res {
    LHS_R_ALL_GATHER, LHS_R_ALL_REDUCE, LHS_R_REDUCE_SCATTER, LHS_R_ALL_TO_ALL,
    LHS_R_COLLECTIVE_PERMUTE, LHS_R_SEND_RECV, LHS_R_SEND_HOST, LHS_R_RECV_HOST,
    LHS_R_COPY, LHS_R_SHARED, /* GPU: every collective on one stream */
    LHS_R_COUNT
};

struct lhs_config {
    enum lhs_estimator estimator;
    enum lhs_resources resources;
    int64_t limit[LHS_R_COUNT];   /* overlap limits by resource */
    int aggressive;               /* aggressive_scheduling_policies */
    int depth_over_stall;         /* prioritize_async_depth_over_stall */
    int release_start;            /* enable_release_start_policy */
    int send_recvs;               /* schedule_send_recvs */
    int same_send_recv;           /* force_send_recv_to_use_same_resource */
    uint64_t memory_limit;        /* bytes; UINT64_MAX = none */
    int limit_from_device;        /* memory_limit unset: XLA GPU's, per graph */
    int depth_memory;             /* depth_based_memory_pressure_reduction */
    int64_t rerun;
    int top_down;                 /* top_down_scheduling */
    int by_structure;             /* enable_schedule_by_structure */
    enum lhs_memory memory;
    enum lhs_selection selection;
    int always;                   /* schedule even without supported async ops */
    int flexible;                 /* flexible_scheduling_annotation_scheduling */
    int flexible_aggressive;      /* aggressive_flexible_annotation_scheduling */
    int track_sync;               /* track_sync_op_resource_usage */
    enum lhs_computations computations; /* the view's scopes: one at a time */
    int memory_guard;             /* keep the no-limit schedule if its peak is lower */
};

/* ---- the scheduling graph ---------------------------------------------------- */

/* Node bits. */
enum {
    LHS_NOP = 1u << 0,        /* XLA IsNopInstruction: nop and input kinds */
    LHS_SUP_START = 1u << 1,  /* supported async start (IsSupportedAsyncStart) */
    LHS_SUP_DONE = 1u << 2,   /* supported async done */
    LHS_UNLOCK = 1u << 3,     /* bottom-up: has an operand that is a supported
                                 done; top-down: a user that is a supported start */
    LHS_TRACKED = 1u << 4,    /* owns a buffer the memory tracker counts */
    LHS_PINNED = 1u << 5,     /* harness model: buffer never freed */
    LHS_DEPTH = 1u << 6,      /* async depth above 0 */
    LHS_SEND_HOST_DONE = 1u << 7, /* done of a send_host (ShouldDelaySendHostDone) */
};

/* Where a node is (lhs_node.where): the state in the low bits, and while in
 * the ready set under fast selection, whether it waits in its class's heap of
 * not-yet-due nodes. */
enum {
    LHS_W_WAITING = 0, LHS_W_READY = 1, LHS_W_NOP = 2, LHS_W_DONE = 3,
    LHS_W_STATE = 3,  /* mask of the four above */
    LHS_W_FUTURE = 4, /* fast selection: in the future heap, not a group */
};

/* What one scheduling step reads and writes for a node, in one cache line:
 * the node being scheduled, each node it releases (degree, ready time, its
 * deps' range) and each node entering or leaving the ready set's index.  On a
 * million-node graph these are cache misses to main memory; spread over a
 * dozen arrays they cost a dozen misses per node, packed they cost one.
 * Graph fields are set by pass 1; state fields by state_init and pass 2. */
struct lhs_node {
    double ready;          /* state: ready time; while waiting, the latest
                              time a scheduled dep allows (-inf: none yet) */
    double cost;           /* graph: NodeCost */
    double async_key;      /* graph: async depth (bottom-up) or height (top-down) */
    uint32_t dep_off, dep_end; /* graph: range in dep/dep_lat */
    uint32_t rel_off, rel_end; /* graph: range in rel */
    int32_t deg;           /* state: unscheduled deps */
    int32_t rnis;          /* state: GetReadyNodesIfScheduled */
    uint32_t ready_pos;    /* state: index in ready_set */
    /* state; a waiting node and a ready one never need the same of these,
     * so each pair shares its place (degree_one reads the xors) */
    union {
        uint32_t slot;         /* ready, fast: index in its heap (group's or future) */
        uint32_t dep_xor_done; /* waiting: xor of the deps scheduled so far */
    };
    union {
        uint32_t group;        /* ready, fast: group of a due node */
        uint32_t dep_xor;      /* waiting: xor of all its deps (state_init) */
    };
    int8_t occ, relr;      /* graph: resource occupied / released, -1 none */
    uint8_t bits;          /* graph: LHS_* */
    uint8_t where;         /* state: LHS_W_* */
};
_Static_assert(sizeof(struct lhs_node) == 64, "one node record, one cache line");

struct lhs_graph {
    uint32_t n;
    uint32_t *id;          /* [n] view id of each internal node */
    struct lhs_node *node; /* [n], 64-byte aligned, in node_mem */
    void *node_mem;        /* what node_alloc got from calloc, for free */
    uint32_t *dep;            /* [edges] CSR by node: nodes that must be scheduled first */
    double *dep_lat;          /* [edges] latency on that edge */
    uint32_t *rel;            /* [edges] CSR by node: nodes it releases, XLA's edge order */
    double *rel_lat;          /* [edges] latency on that edge (= its dep_lat) */
    double *async_depth;   /* [n] XLA GetAsyncDepth, used by kStartAtZeroDepth */
    uint32_t *graph_depth; /* [n], only with track_memory and depth_memory */
    uint32_t *partner;     /* [n] start <-> done, UINT32_MAX none */
    /* memory: the buffers scheduling a node makes live and those it frees, as
     * CSR lists of buffer owners (internal ids); built only with track_memory */
    int track_memory;      /* a memory_limit is set: the tracker can decide */
    uint32_t *alloc_off, *alloc;
    uint32_t *freed_off, *freed;
    uint64_t *bytes;       /* [n] size of the buffer each owner holds */
    /* XLA's hints (HloScheduleGraph), from the view's sched_hint: */
    uint8_t *force;        /* [n] LHS_FORCE_* bits */
    int32_t *delay_prio;   /* [n] ForceDelayPriority (scheduler_delay_priority) */
    int any_force;         /* some node has a bit: the scan decides */
    int any_send_host;     /* bottom-up, a send_host done exists */
    int forward;           /* no cost is negative or NaN: time never goes back */
    uint32_t *op;          /* [n] the view's opcode index */
    /* scheduling annotations (the view's sched_group), dense: group ids in
     * increasing order become 0..n_groups-1 */
    int32_t *group;        /* [n] dense group, -1 none */
    /* XLA's recursive resources of a node calling computations (the view's
     * holds): [n * LHS_R_COUNT], or NULL when no node has any */
    int32_t *need;
    uint32_t n_groups;
};

enum {
    LHS_FORCE_EARLY = 1u << 0, /* force_early custom-call; force_delay_async done */
    LHS_FORCE_DELAY = 1u << 1, /* force_delay custom-call / async op;
                                  force_delay_async start */
    LHS_KEEP_ORDER = 1u << 2,  /* keep_original_sequence_order_in_group */
    LHS_ASYNC_DONE_OP = 1u << 3, /* opcode async-done (HloOpcode::kAsyncDone) */
    LHS_WHILE_RES = 1u << 4,   /* occupies and releases a resource at once (net:
                                  none): a while whose body holds collectives
                                  (XLA gives it the body's resource list), or a
                                  synchronous collective under
                                  track_sync_op_resource_usage */
};

/* ---- scheduling state ---------------------------------------------------------- */

struct lhs_fast;

struct lhs_heap {               /* XLA's next_ready_stack: a std heap of nodes by */
    uint32_t n, cap;            /* ready time, earliest first; kept with the */
    uint32_t *v;                /* standard library's push/pop algorithms */
};

struct lhs_state {
    const struct lhs_graph *G;
    const struct lhs_config *cfg;
    uint64_t memory_limit;      /* shrinks by 0.9 on each rerun */
    double now;                 /* XLA current_time */
    struct lhs_node *node;      /* = G->node: deg, rnis, ready, where, ... */
    int64_t avail[LHS_R_COUNT]; /* max_concurrent_resource */
    int64_t queued[LHS_R_COUNT];/* resource_users_in_queue */
    uint32_t *ready_set, n_ready; /* XLA's vector, same push/swap-pop order */
    uint32_t *nops, n_nops;     /* XLA's nop_set (LIFO) */
    struct lhs_heap next_ready;
    uint32_t *seq, n_seq;       /* scheduled nodes in scheduling order */
    /* memory (XLA MemoryPressureTracker) */
    uint8_t *live;              /* [n] owner buffers live */
    int64_t mem;                /* live bytes */
    int64_t mem_peak;
    /* per-step candidate cache of memory pressure changes */
    uint32_t *mem_stamp;        /* [n] step the cache entry belongs to */
    int64_t *mem_inc, *mem_peak_inc;
    uint32_t step;
    int oom;                    /* an allocation failed mid-pass */
    /* fast selection (aggressive.c, "pass 2d") */
    struct lhs_fast *fast;
    /* annotation groups (XLA SchedulingState: ready_annotations, ...) */
    int32_t *grp;               /* [n] current group: ClearAnnotation sets -1 */
    uint32_t *grp_all, *grp_seen; /* [n_groups] frontier nodes, those scheduled */
    uint32_t *grp_size;         /* [n_groups] members (AnnotationTracker) */
    uint32_t *ready_groups, n_ready_groups;
    int32_t ongoing;            /* group being scheduled, -1 none */
    uint32_t *ann_ready, n_ann_ready; /* XLA annotation_ready */
    uint8_t *holding;           /* [n] nodes_holding_annotations */
    uint32_t n_holding;
    uint8_t *after_target;      /* [n] ForceDelayAfterTarget */
};

/* ---- fast selection -------------------------------------------------------------- */

/* Ready nodes are split into classes that XLA's first rules cannot tell apart
 * (same resource, occupy/release, async depth zero or not, supported or not),
 * so those rules are decided once per class and step.  Inside a class, a node
 * waits in a heap by ready time until it is due; due nodes sit in groups of
 * equal async key (kAsyncDepth), each group a heap in the order of XLA's later
 * rules (kUnlockDone, kCreatesMoreReadyNodes, kOriginalOrder). */
#define LHS_N_CLASSES (1 + 2 * LHS_R_COUNT * 2 * 2)

struct lhs_pq {
    uint32_t n, cap;
    uint64_t *v;        /* entries: id in the low 32 bits (aggressive.c, pq_id) */
};

struct lhs_group {
    uint16_t cls;
    double key;          /* async key of the members (0 without aggressive rules) */
    struct lhs_pq nodes; /* due members, best first */
    uint32_t slot;       /* index in the class's group heap while non-empty */
    uint32_t next;       /* hash chain, UINT32_MAX ends it */
    double cost_ref;     /* NodeCost of the first member since it was empty */
    uint32_t n_diff;     /* members whose cost differs from cost_ref */
};

struct lhs_fast {
    struct lhs_pq groups[LHS_N_CLASSES]; /* non-empty groups, largest key first */
    struct lhs_pq future[LHS_N_CLASSES]; /* not yet due: by ready time, then key */
    struct lhs_group *grp;
    uint32_t n_grp, cap_grp;
    uint32_t *bucket, n_bucket; /* hash of (class, key) -> first group + 1 */
    uint64_t busy[(LHS_N_CLASSES + 63) / 64]; /* classes with ready nodes */
    uint64_t *tie;      /* [n] candidates of one step: (ready-set index << 32) | node */
    uint32_t n_tie;
    int any_send_host;  /* a send_host done exists: use the scan */
};

#endif
